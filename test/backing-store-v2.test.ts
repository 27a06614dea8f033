// Issue 12 item 1: context memory V2 (P7). The driver's QCAPS_V2 walk and CFG_V2 sequence as
// bnxt_en sends them (bnxt.c bnxt_hwrm_func_backing_store_qcaps_v2, bnxt_alloc_ctx_mem,
// bnxt_setup_ctxm_pg_tbls, bnxt_backing_store_cfg_v2), checked byte by byte against fixtures
// written from hsi.h's offsets, and the software NIC's refusals of a wrong configuration.
import t from 'tap';
import { Ledger } from '../drivers/ledger.ts';
import {
  HWRM_COMMANDS, HWRM_ERR_CODE, FUNC_DRV_RGTR_REQ_ENABLES, RING_ALLOC_REQ_RING_TYPE,
} from '../firmware-hwrm/hwrm/index.ts';
import { configureBackingStoreV2 } from '../lib/bnxt/backing-store-v2.ts';
import { DmaPool } from '../lib/bnxt/dma-pool.ts';
import { HwrmChannel } from '../lib/bnxt/hwrm-channel.ts';
import { HWRM_COMMANDS as C } from '../firmware-hwrm/hwrm/commands.ts';
import { emuDevice } from './helpers/emu-device.ts';
import { recordHwrmRequests, type RecordedRequest } from './helpers/hwrm-request-recorder.ts';
import type { DmaBuffer } from '../drivers/device.ts';

const QCAPS_V2 = 0x1a8;
const CFG_V2 = 0x1a3;
const ALL_DONE = 0x2;

/** A pool that remembers its buffers, so a test can read host memory at an IOVA the driver handed out. */
class HostMemory extends DmaPool {
  readonly buffers: DmaBuffer[] = [];
  override alloc(length: number) {
    const r = super.alloc(length);
    if (r.ok) this.buffers.push(r.value);
    return r;
  }
  private at(iova: number): [DmaBuffer, number] {
    const b = this.buffers.find((x) => iova >= x.iova && iova < x.iova + x.length);
    if (!b) throw new Error(`no buffer at 0x${iova.toString(16)}`);
    return [b, iova - b.iova];
  }
  read64(iova: number): number {
    const [b, off] = this.at(iova);
    return b.view.getUint32(off, true) + b.view.getUint32(off + 4, true) * 2 ** 32;
  }
  byteAt(iova: number): number {
    const [b, off] = this.at(iova);
    return b.bytes[off]!;
  }
  setByte(iova: number, v: number): void {
    const [b, off] = this.at(iova);
    b.bytes[off] = v;
  }
}

function setUp() {
  const emu = emuDevice('stepped', 1, 'BCM57608'); // a Thor2: the chip whose firmware has the V2 commands
  const { device, requests } = recordHwrmRequests(emu);
  const pool = new HostMemory(emu.dma);
  const opened = HwrmChannel.open(device, pool);
  if (!opened.ok) throw new Error(opened.error);
  const hwrm = opened.value;
  const ledger = new Ledger(pool, [hwrm]);
  const rgtr = hwrm.send(C.FUNC_DRV_RGTR, { enables: FUNC_DRV_RGTR_REQ_ENABLES.OS_TYPE, os_type: 0x12 });
  if (!rgtr.ok) throw new Error(rgtr.error);
  requests.length = 0;
  return { emu, hwrm, pool, ledger, requests };
}

const u16 = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8);
const u32 = (b: Uint8Array, at: number) => (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;
const cfgs = (requests: RecordedRequest[]) => requests.filter((r) => r.reqType === CFG_V2).map((r) => r.bytes);

t.test('QCAPS_V2: type 0 first, then each next_valid_type, to the 0xffff end marker', async (t) => {
  const s = setUp();
  const r = configureBackingStoreV2(s.hwrm, s.pool, s.ledger);
  t.ok(r.ok, r.ok ? 'configured' : r.error);
  const asked = s.requests.filter((q) => q.reqType === QCAPS_V2).map((q) => q.bytes);
  // The model offers QP..STAT 0-4, TQM 5-6, MRAV 0xe, TIM 0xf, a doorbell shadow 0x16 and five trace types.
  t.same(asked.map((b) => u16(b, 16)), [0, 1, 2, 3, 4, 5, 6, 0xe, 0xf, 0x16, 0x1e, 0x20, 0x22, 0x23, 0x24]);
  for (const b of asked) {
    // hwrm_func_backing_store_qcaps_v2_input: 24 bytes, type @16, rsvd[6] @18; the window after it is zero.
    t.same([...b.subarray(0, 2)], [0xa8, 0x01], 'req_type 0x1a8');
    t.same([...b.subarray(18, 128)], new Array(110).fill(0), 'nothing after type');
  }
  s.emu.close();
});

t.test('CFG_V2: one per type and instance in type order, BS_CFG_ALL_DONE on the last only', async (t) => {
  const s = setUp();
  const r = configureBackingStoreV2(s.hwrm, s.pool, s.ledger);
  t.ok(r.ok, r.ok ? 'configured' : r.error);
  const sent = cfgs(s.requests).map((b) => [u16(b, 16), u16(b, 18), u32(b, 20)]);
  const want = [
    [0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0], [4, 0, 0], [5, 0, 0],
    ...[0, 1, 2, 3, 4, 5, 6, 7].map((i) => [6, i, 0]), // eight fast-path TQM rings, instance_bit_map 0xff
    [0xe, 0, 0], [0xf, 0, 0],
    // bnxt_bs_trace_avail: every offered trace type; the driver-managed doorbell shadow (0x16) is left out.
    [0x1e, 0, 0], [0x20, 0, 0], [0x22, 0, 0], [0x23, 0, 0], [0x24, 0, ALL_DONE],
  ];
  t.same(sent, want);
  t.same(s.emu.emu.hwrm.backingStoreV2(), { allDone: true, configured: want.length, lastRefusal: undefined });
  t.equal(s.emu.emu.hwrm.resources().backingStore, true, 'the function has context memory');
  s.emu.close();
});

/** Follows a level-2 directory to data page `i` (PDE and PTE carry VALID, bit 0). */
function dataPage(mem: HostMemory, dir: number, i: number): number {
  const pde = mem.read64(dir + Math.floor(i / 512) * 8);
  const pte = pde % 2 === 1 ? mem.read64(pde - 1 + (i % 512) * 8) : 0;
  if (pte % 2 !== 1) throw new Error(`no valid PDE/PTE for page ${i} under 0x${dir.toString(16)}`);
  return pte - 1;
}

t.test('QP, TQM, MRAV and trace CFG_V2s carry what bnxt_alloc_ctx_mem computes, at hsi.h offsets', async (t) => {
  const s = setUp();
  const r = configureBackingStoreV2(s.hwrm, s.pool, s.ledger);
  if (!r.ok) { t.fail(r.error); return; }
  const all = cfgs(s.requests);
  // hwrm_func_backing_store_cfg_v2_input: type @16 u16, instance @18 u16, flags @20 u32, page_dir @24 u64,
  // num_entries @32 u32, entry_size @36 u16, page_size_pbl_level @38 u8, subtype_valid_cnt @39 u8,
  // split_entry_0..3 @40/44/48/52 u32, enables @56 u32, next_bs_offset @60 u32; 64 bytes.
  const le32 = (v: number) => [v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, (v >>> 24) & 0xff];
  const fixture = (type: number, instance: number, entries: number, size: number, pgLvl: number, splits: number[]) => [
    0xa3, 0x01, type, 0, instance, 0, 0, 0, 0, 0, // req_type; type, instance, flags
    entries & 0xff, (entries >> 8) & 0xff, (entries >> 16) & 0xff, 0, size & 0xff, size >> 8, pgLvl, splits.length,
    ...[0, 1, 2, 3].flatMap((i) => le32(splits[i] ?? 0)), 0, 0, 0, 0, 0, 0, 0, 0,
  ];
  const pick = (b: Uint8Array) => [b[0]!, b[1]!, ...b.subarray(16, 24), ...b.subarray(32, 64)];
  const find = (type: number, instance = 0) => all.find((b) => u16(b, 16) === type && u16(b, 18) === instance)!;
  // QP: 64 L2 + 2 QP1 (split entries 0 and 1, sent back unchanged) + min(1024, 4096 - 66) RoCE QPs = 1090,
  // 448-byte entries, 4 KiB pages at depth 2 as the kernel uses with RoCE.
  t.same(pick(find(0)), fixture(0, 0, 1090, 448, 0x02, [64, 2, 0]));
  // Fast-path TQM: L2 64 + 2 x (1024 + 2 QP1) = 2116, rounded up to entry_multiple 8.
  t.same(pick(find(6, 3)), fixture(6, 3, 2120, 16, 0x02, []));
  // Slow-path TQM: VNIC split 64 + 2116 + min 64 = 2244, rounded up to 2248.
  t.same(pick(find(5)), fixture(5, 0, 2248, 16, 0x02, []));
  // MRAV: num_mr = min(16384 / 2, 4096 MRs) and as many AH entries (num_ah = min(num_mr, 128 K)),
  // 8192 in all, the AV split (num_ah: the firmware offered none) as the one split entry
  // (bnxt.c bnxt_alloc_ctx_mem, mrav_av_entries).
  t.same(pick(find(0xe)), fixture(0xe, 0, 8192, 128, 0x02, [4096]));
  // A trace buffer: max_num_entries of 1-byte entries, depth 1.
  t.same(pick(find(0x20)), fixture(0x20, 0, 16384, 1, 0x01, []));
  // page_dir (@24) leads to the memory the driver initialised.
  const qp = find(0);
  const dir = u32(qp, 24) + u32(qp, 28) * 2 ** 32;
  const page1 = dataPage(s.pool, dir, 1);
  t.equal(s.pool.byteAt(page1 + 8), 0xff, 'QP init value at offset 2 x 4 of the second page');
  s.emu.close();
});

t.test('context memory holds the init value where bnxt_init_ctx_mem writes it, page by page', async (t) => {
  const s = setUp();
  const r = configureBackingStoreV2(s.hwrm, s.pool, s.ledger);
  if (!r.ok) { t.fail(r.error); return; }
  const qp = r.value.areas[0]!.data.bytes; // type 0 comes first
  // Offset 2 x 4 = 8 in every 448-byte step from each 4 KiB page's start.
  t.equal(qp[8], 0xff);
  t.equal(qp[8 + 448], 0xff);
  t.equal(qp[8 + 9 * 448], 0xff);
  t.equal(qp[4096 + 8], 0xff, 'the second page starts the pattern again');
  t.equal(qp[4096 + 8 + 448], 0xff);
  t.equal(qp[9], 0, 'nothing else is written');
  t.equal(qp[4096], 0);
  const tqm = r.value.areas[5]!.data.bytes; // slow-path TQM: no initialiser
  t.ok(tqm.subarray(0, 4096).every((b) => b === 0));
  s.emu.close();
});

/** Sends a correct configuration with `change` applied to the request of one (type, instance). */
type Body = Record<string, number>;

type Change = (type: number, instance: number, body: Body) => Body | undefined;

function configureWith(s: ReturnType<typeof setUp>, change: Change) {
  const hwrm = new Proxy(s.hwrm, {
    get(target, prop) {
      if (prop !== 'send') return Reflect.get(target, prop);
      return (cmd: typeof C.FUNC_BACKING_STORE_CFG_V2, body: Record<string, number>, opts: unknown) => {
        if (cmd.req_type !== CFG_V2) return target.send(cmd, body, opts as never);
        const b = change(body.type!, body.instance!, { ...body });
        if (!b) return { ok: true, value: {} };
        return target.send(cmd, b, opts as never);
      };
    },
  });
  return configureBackingStoreV2(hwrm, s.pool, s.ledger);
}

t.test('the software NIC refuses a CFG_V2 with a wrong entry size, too few entries or uncovered memory', async (t) => {
  const cases: [string, (type: number, i: number, b: Record<string, number>) => Record<string, number>, RegExp][] = [
    ['entry size', (type, _i, b) => (type === 2 ? { ...b, entry_size: 32 } : b), /entry size 32, QCAPS_V2 gave 64/],
    ['too few entries', (type, _i, b) => (type === 0 ? { ...b, num_entries: 60 } : b), /60 entries, not in 66\.\.4096/],
    ['not a multiple', (type, i, b) => (type === 6 && i === 2 ? { ...b, num_entries: 2117 } : b), /multiple of 8/],
    ['QP1 split', (type, _i, b) => (type === 0 ? { ...b, split_entry_1: 0 } : b), /L2\/QP1 split entries 64\/0/],
    ['instance', (type, i, b) => (type === 6 && i === 7 ? { ...b, instance: 8 } : b), /no instance 8/],
    ['uncovered', (type, _i, b) => (type === 1 ? { ...b, page_dir: b.page_dir! + 0x4000_0000 } : b), /does not cover/],
  ];
  for (const [name, change, why] of cases) {
    const s = setUp();
    const r = configureWith(s, change);
    t.notOk(r.ok, `${name}: refused`);
    if (!r.ok) t.match(r.error, /INVALID_PARAMS/, name);
    t.match(s.emu.emu.hwrm.backingStoreV2().lastRefusal, why, name);
    t.equal(s.emu.emu.hwrm.resources().backingStore, false, `${name}: no context memory`);
    s.ledger.unwind();
    t.equal(s.pool.allocatedBytes, 8192, `${name}: only the channel's two pages remain`);
    s.emu.close();
  }
});

t.test('uninitialised context memory is refused: a QP type with ENABLE_CTX_KIND_INIT left as zeros', async (t) => {
  const z = setUp();
  // Zero the QP memory the driver initialised before its CFG_V2 goes out.
  const cleared = configureWith(z, (type, _i, b) => {
    if (type === 0) {
      z.pool.setByte(dataPage(z.pool, b.page_dir!, 0) + 8 + 448, 0);
    }
    return b;
  });
  t.notOk(cleared.ok);
  const why = z.emu.emu.hwrm.backingStoreV2().lastRefusal;
  t.match(why, /type 0x0: context memory not initialised with 0xff at offset 8$/);
  z.emu.close();
});

t.test('no BS_CFG_ALL_DONE: no context memory, so RING_ALLOC of the CREQ (RoCE\'s first step) fails', async (t) => {
  const s = setUp();
  const r = configureWith(s, (_type, _i, b) => ({ ...b, flags: 0 }));
  t.ok(r.ok, 'every CFG_V2 itself is accepted');
  t.same(s.emu.emu.hwrm.backingStoreV2().allDone, false);
  t.equal(s.emu.emu.hwrm.resources().backingStore, false);
  const ring = s.hwrm.send(C.RING_ALLOC, {
    ring_type: RING_ALLOC_REQ_RING_TYPE.NQ, length: 64, page_tbl_addr: 0, page_tbl_depth: 0, page_size: 12,
  });
  t.notOk(ring.ok, 'RING_ALLOC refused');
  if (!ring.ok) t.match(ring.error, /RESOURCE_ACCESS_DENIED/);
  s.emu.close();
});

t.test('BS_CFG_ALL_DONE before every required type is refused, naming the missing one', async (t) => {
  const missing: [number, number, RegExp][] = [[6, 4, /before type 0x6 instance 4/], [0xf, 0, /before type 0xf/]];
  for (const [skipType, skipInstance, why] of missing) {
    const s = setUp();
    const r = configureWith(s, (type, i, b) => (type === skipType && i === skipInstance ? undefined : b));
    t.notOk(r.ok, `without type 0x${skipType.toString(16)}/${skipInstance}: the ALL_DONE call is refused`);
    t.match(s.emu.emu.hwrm.backingStoreV2().lastRefusal, why);
    t.equal(s.emu.emu.hwrm.resources().backingStore, false);
    s.emu.close();
  }
});

t.test('trace types are optional: Linux 6.12\'s sequence (no trace type, ALL_DONE on TIM) gives context memory',
  async (t) => {
  // 6.12's QCAPS_V2 walk ends at BNXT_CTX_V2_MAX (XID_PARTITION + 1): it never sees a trace type and
  // marks TIM last (bnxt_backing_store_cfg_v2). The bnxt guest's kernel sends exactly this.
  const s = setUp();
  const r = configureWith(s, (type, _i, b) => {
    if (type >= 0x1e) return undefined;
    return type === 0xf ? { ...b, flags: ALL_DONE } : b;
  });
  t.ok(r.ok, r.ok ? 'configured' : r.error);
  t.same(s.emu.emu.hwrm.backingStoreV2(), { allDone: true, configured: 16, lastRefusal: undefined });
  t.equal(s.emu.emu.hwrm.resources().backingStore, true, 'the function has context memory');
  s.emu.close();
});

t.test('a type configured twice, or anything after BS_CFG_ALL_DONE, is refused; FUNC_RESET starts over', async (t) => {
  const s = setUp();
  t.ok(configureBackingStoreV2(s.hwrm, s.pool, s.ledger).ok);
  const again = s.hwrm.send(C.FUNC_BACKING_STORE_CFG_V2, { type: 4, instance: 0, entry_size: 64, num_entries: 128 });
  t.notOk(again.ok);
  if (!again.ok) t.match(again.error, /RESOURCE_ACCESS_DENIED/);
  t.match(s.emu.emu.hwrm.backingStoreV2().lastRefusal, /after BS_CFG_ALL_DONE/);
  t.ok(s.hwrm.send(C.FUNC_RESET, {}).ok);
  t.same(s.emu.emu.hwrm.backingStoreV2(), { allDone: false, configured: 0, lastRefusal: undefined });
  s.ledger.unwind();
  s.emu.close();
  const d = setUp();
  const twice = configureWith(d, (type, _i, b) => (type === 3 ? { ...b, type: 2 } : b));
  t.notOk(twice.ok);
  t.match(d.emu.emu.hwrm.backingStoreV2().lastRefusal, /type 0x2 instance 0 configured twice/);
  d.emu.close();
});

t.test('a malformed QCAPS_V2 walk (next_valid_type going back) fails cleanly and keeps no memory', async (t) => {
  const s = setUp();
  const hwrm = new Proxy(s.hwrm, {
    get(target, prop) {
      if (prop !== 'send') return Reflect.get(target, prop);
      return (cmd: typeof C.FUNC_BACKING_STORE_QCAPS_V2, body: never, opts: never) => {
        const r = target.send(cmd, body, opts);
        const back = cmd.req_type === QCAPS_V2 && r.ok && r.value.type === 4;
        return back ? { ok: true, value: { ...r.value, next_valid_type: 2 } } : r;
      };
    },
  });
  const r = configureBackingStoreV2(hwrm, s.pool, s.ledger);
  t.notOk(r.ok);
  if (!r.ok) t.match(r.error, /next_valid_type leads back to type 0x2/);
  t.equal(s.requests.filter((q) => q.reqType === CFG_V2).length, 0, 'nothing configured');
  t.equal(s.pool.allocatedBytes, 8192, 'no context memory taken');
  s.emu.close();
});

t.test('HWRM numbers: QCAPS_V2 0x1a8, CFG_V2 0x1a3', async (t) => {
  t.equal(HWRM_COMMANDS.FUNC_BACKING_STORE_QCAPS_V2.req_type, QCAPS_V2);
  t.equal(HWRM_COMMANDS.FUNC_BACKING_STORE_CFG_V2.req_type, CFG_V2);
  t.equal(HWRM_ERR_CODE.INVALID_PARAMS, 2);
});
