// Issue 11 item 6: backing-store details, and the ORRQ and IRRQ each start at a page of their own, as Linux bnxt_re
// qplib_fp.c bnxt_qplib_create_qp allocates them (req_size rounded to PAGE_SIZE; orrq_addr and
// irrq_addr the first page's address). Bytes of cmdq_create_qp (roce_hsi.h): 0 opcode 0x01,
// 80 irrq_addr, 88 orrq_addr. The software NIC refuses either off a page
// (test/emu-roce-firmware-qp.test.ts, "IRRQ off a page boundary").
import t from 'tap';
import { Nic } from '../lib/index.ts';
import { HwrmChannel } from '../lib/bnxt/hwrm-channel.ts';
import { configureBackingStore } from '../lib/bnxt/backing-store.ts';
import { DmaPool } from '../lib/bnxt/dma-pool.ts';
import { Ledger } from '../drivers/ledger.ts';
import { openEmu, type EmuDevice } from '../drivers/emu/host/device.ts';
import { macFromNumber } from '../drivers/emu/model/config.ts';
import { recordHwrmRequests } from './helpers/hwrm-request-recorder.ts';
import { answerBackingStoreQcaps } from '../drivers/emu/model/firmware/hwrm-backing-store.ts';
import { HWRM_COMMANDS } from '../firmware-hwrm/hwrm/index.ts';
import { captureCmdq } from './helpers/cmdq-capture.ts';
import { bringUp, EmuRig } from './helpers/emu-roce-setup.ts';
import { openPair } from './helpers/qp-data.ts';

const CREATE_QP = 0x01;

function u64(b: Uint8Array, at: number): number {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  return v.getUint32(at, true) + v.getUint32(at + 4, true) * 2 ** 32;
}

t.test('CREATE_QP names an ORRQ and an IRRQ each at a 4 KiB page, apart', async (t) => {
  const capture = captureCmdq();
  t.teardown(() => capture.restore());
  const p = openPair();
  t.teardown(() => p.nic.close());
  const creates = capture.of(CREATE_QP);
  t.equal(creates.length, 2, 'two queue pairs');
  for (const c of creates) {
    const irrq = u64(c, 80);
    const orrq = u64(c, 88);
    t.equal(orrq % 4096, 0, `ORRQ 0x${orrq.toString(16)} at a page`);
    t.equal(irrq % 4096, 0, `IRRQ 0x${irrq.toString(16)} at a page`);
    t.ok(Math.abs(irrq - orrq) >= 4096, 'in pages of their own');
  }
});

// MRAV with AH entries, split (bnxt.c bnxt_alloc_ctx_mem: num_ah = min(num_mr, 128 K);
// bnxt_hwrm_func_backing_store_cfg: (num_mr / units) << 16 | num_ah / units with
// MRAV_RESERVATION_SPLIT), and one fast-path TQM ring per CoS queue where QCAPS counts none
// (bnxt_hwrm_func_backing_store_qcaps: bp->max_q from QUEUE_QPORTCFG).
t.test('BACKING_STORE_CFG: MRs and as many AHs, split; one TQM ring per CoS queue of QUEUE_QPORTCFG', async (t) => {
  const sent: { reqType: number; body: Record<string, unknown> }[] = [];
  const send = HwrmChannel.prototype.send;
  HwrmChannel.prototype.send = function (this: HwrmChannel, ...args: Parameters<typeof send>) {
    sent.push({ reqType: args[0].req_type, body: args[1] as Record<string, unknown> });
    return send.apply(this, args);
  } as typeof send;
  const nic = Nic.open('emu', { stepped: true, chip: 'BCM57508' }); // the V1 CFG: a P5
  HwrmChannel.prototype.send = send;
  if (!nic.ok) return void t.fail(nic.error);
  t.teardown(() => nic.value.close());
  const caps = answerBackingStoreQcaps() as Record<string, number>;
  const cfg = sent.find((c) => c.reqType === HWRM_COMMANDS.FUNC_BACKING_STORE_CFG.req_type)!.body;
  const mrs = Math.min(caps['mrav_max_entries']! / 2, 4096);
  const units = caps['mrav_num_entries_units']!;
  t.equal((cfg['flags'] as number) & 0x2, 0x2, 'flags: MRAV_RESERVATION_SPLIT');
  const split = (((mrs / units) << 16) | (mrs / units)) >>> 0;
  t.equal(cfg['mrav_num_entries'], split, `${mrs} MRs and ${mrs} AHs, in units`);
  t.ok(sent.some((c) => c.reqType === HWRM_COMMANDS.QUEUE_QPORTCFG.req_type),
    'QCAPS counts no TQM ring: QUEUE_QPORTCFG asked');
  const enables = cfg['enables'] as number;
  const rings = [0, 1, 2].map((i) => (enables & (0x40 << i)) !== 0);
  t.same(rings, [true, true, false], 'TQM rings 0 and 1: the port\'s 2 queues');
});

t.test('the software NIC refuses an MRAV count without the split, and fewer TQM rings than CoS queues', async (t) => {
  t.throws(() => bringUp(new EmuRig(), { mravUnsplit: true }), /HWRM 0x193: error 2\b/, 'no split: INVALID_PARAMS');
  const enables = /HWRM 0x193: error 6\b/;
  t.throws(() => bringUp(new EmuRig(), { tqmRings: 1 }), enables, 'one TQM ring for 2 queues: INVALID_ENABLES');
  t.doesNotThrow(() => bringUp(new EmuRig()), 'split, a ring per queue: taken');
});

// The CFG's two forms (bnxt.c bnxt_hwrm_func_backing_store_cfg: the whole 336-byte
// hwrm_func_backing_store_cfg_input unless it exceeds VER_GET's max_ext_req_len, else the first
// 256 bytes, BNXT_BACKING_STORE_CFG_LEGACY_LEN), and the 9th fast-path TQM ring: where QCAPS
// counts 8 rings and the full form fits, tqm_fp_rings_count_ext more, at most 9, the 9th in
// tqm_ring8_* with enable TQM_RING8 (FreeBSD bnxt_hwrm.c bnxt_hwrm_func_backing_store_qcaps / _cfg).
// Bytes read at hsi.h offsets: 0 req_type (0x193), 20 enables, 188 tqm_ring0_num_entries,
// 256 tqm_ring8_pg_size_tqm_ring_lvl, 260 tqm_ring8_num_entries, 264 tqm_ring8_page_dir.
const CFG = 0x193;
const EN_TQM_RING0_7 = 0x3fc0;
const EN_TQM_RING8 = 0x10000;
const u32 = (b: Uint8Array, at: number) => new DataView(b.buffer, b.byteOffset).getUint32(at, true);

/** A P5 software NIC (context memory V1 is P5's; P7 takes V2: test/backing-store-v2.test.ts). */
function p5Device(): EmuDevice {
  const d = openEmu({
    mac: macFromNumber(0x7701), ipv4: Uint8Array.from([10, 77, 0x77, 1]), mtu: 9000, cable: { kind: 'loop' },
    pcapPath: undefined, seed: 1, mode: 'stepped', chip: 'BCM57508',
  });
  if (!d.ok) throw new Error(d.error);
  return d.value;
}

function cfgSetUp(maxExtReqLen: number, rings?: [number, number]) {
  const emu = p5Device();
  if (rings) emu.emu.hwrm.offerTqmRings(rings[0], rings[1]);
  const { device, requests } = recordHwrmRequests(emu);
  const pool = new DmaPool(device.dma); // the recorder reads short commands from these buffers
  const opened = HwrmChannel.open(device, pool);
  if (!opened.ok) throw new Error(opened.error);
  const hwrm = opened.value;
  // What VER_GET gave bring-up: the model's window and the longest request it takes.
  hwrm.caps = { ...hwrm.caps, maxReqWinLen: 128, maxExtReqLen };
  const ledger = new Ledger(pool, [hwrm]);
  const close = () => { ledger.unwind(); hwrm.close(); emu.close(); };
  return { hwrm, pool, ledger, requests, close };
}

t.test('BACKING_STORE_CFG in its 336-byte form where max_ext_req_len allows, the 256-byte one where not', async (t) => {
  for (const [maxExt, length] of [[336, 336], [300, 256]] as const) {
    const s = cfgSetUp(maxExt);
    t.teardown(s.close);
    const r = configureBackingStore(s.hwrm, s.pool, s.ledger);
    t.ok(r.ok, r.ok ? `max_ext_req_len ${maxExt}: configured` : r.error);
    const cfg = s.requests.filter((q) => q.reqType === CFG);
    t.same(cfg.map((q) => q.bytes.length), [length], `max_ext_req_len ${maxExt}: ${length} bytes sent`);
    if (length === 336) {
      t.same([...cfg[0]!.bytes.subarray(256)], new Array(80).fill(0), 'no ring 8: the two CoS queues need 2 rings');
      t.equal(u32(cfg[0]!.bytes, 20) & EN_TQM_RING8, 0, 'TQM_RING8 not enabled');
    }
  }
});

t.test('QCAPS counting 8 TQM rings and 1 more: the 9th in tqm_ring8, enabled, backed like the others', async (t) => {
  const s = cfgSetUp(336, [8, 1]);
  t.teardown(s.close);
  const r = configureBackingStore(s.hwrm, s.pool, s.ledger);
  t.ok(r.ok, r.ok ? 'the firmware took it' : r.error);
  const b = s.requests.find((q) => q.reqType === CFG)!.bytes;
  t.equal(b.length, 336);
  t.equal(u32(b, 20) & (EN_TQM_RING0_7 | EN_TQM_RING8), EN_TQM_RING0_7 | EN_TQM_RING8, 'rings 0-7 and TQM_RING8');
  t.equal(b[256], 0x01, 'tqm_ring8: 4 KiB pages (0 << 4), level 1');
  t.equal(u32(b, 260), u32(b, 188), 'tqm_ring8_num_entries: as many as tqm_ring0 holds');
  const dir = u32(b, 264) + u32(b, 268) * 2 ** 32;
  t.ok(dir !== 0 && dir % 4096 === 0, `tqm_ring8_page_dir 0x${dir.toString(16)}: a page table`);
});

t.test('the old driver\'s legacy CFG of 8 TQM rings is refused where the firmware counts a 9th', async (t) => {
  // The old driver always sent 256 bytes: as if the firmware took no longer request.
  const s = cfgSetUp(256, [8, 1]);
  t.teardown(s.close);
  const r = configureBackingStore(s.hwrm, s.pool, s.ledger);
  t.notOk(r.ok, 'refused');
  if (!r.ok) t.match(r.error, /INVALID_ENABLES/);
  t.same(s.requests.filter((q) => q.reqType === CFG).map((q) => q.bytes.length), [256]);
});
