// Issue 11 item 6: backing-store details, and the ORRQ and IRRQ each start at a page of their own, as Linux bnxt_re
// qplib_fp.c bnxt_qplib_create_qp allocates them (req_size rounded to PAGE_SIZE; orrq_addr and
// irrq_addr the first page's address). Bytes of cmdq_create_qp (roce_hsi.h): 0 opcode 0x01,
// 80 irrq_addr, 88 orrq_addr. The software NIC refuses either off a page
// (test/emu-roce-firmware-qp.test.ts, "IRRQ off a page boundary").
import t from 'tap';
import { Nic } from '../lib/index.ts';
import { HwrmChannel } from '../lib/bnxt/hwrm-channel.ts';
import { answerBackingStoreQcaps } from '../drivers/emu/firmware/hwrm-backing-store.ts';
import { HWRM } from '../firmware-hwrm/hwrm/index.ts';
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
    sent.push({ reqType: (args[0] as { reqType: number }).reqType, body: args[1] as Record<string, unknown> });
    return send.apply(this, args);
  } as typeof send;
  const nic = Nic.open('emu', { stepped: true });
  HwrmChannel.prototype.send = send;
  if (!nic.ok) return void t.fail(nic.error);
  t.teardown(() => nic.value.close());
  const caps = answerBackingStoreQcaps() as Record<string, number>;
  const cfg = sent.find((c) => c.reqType === HWRM.FUNC_BACKING_STORE_CFG)!.body;
  const mrs = Math.min(caps['mrav_max_entries']! / 2, 4096);
  const units = caps['mrav_num_entries_units']!;
  t.equal((cfg['flags'] as number) & 0x2, 0x2, 'flags: MRAV_RESERVATION_SPLIT');
  const split = (((mrs / units) << 16) | (mrs / units)) >>> 0;
  t.equal(cfg['mrav_num_entries'], split, `${mrs} MRs and ${mrs} AHs, in units`);
  t.ok(sent.some((c) => c.reqType === HWRM.QUEUE_QPORTCFG), 'QCAPS counts no TQM ring: QUEUE_QPORTCFG asked');
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
