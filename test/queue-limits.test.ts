// Issue 12: CQ and QP depth limits, on both chips. The driver reads QUERY_FUNC's limits as Linux
// bnxt_re does (qplib_sp.c bnxt_qplib_get_dev_attr: max_cq_wqes = max_cqe, capped at 0xFFFFF
// except on P7; max_qp_wqes = max_qp_wr - 129; max_qp_sges = min(max_sge_var_wqe, 13) in
// variable WQE mode, else 6) and refuses at Qp.make, before any command, a device whose limits
// are below its fixed rings (4095 completions per CQ, 4095 entries per ring, 1 or 6 SGEs; as
// ib_verbs.c bnxt_re_create_cq and bnxt_re_test_qp_limits refuse). The model reports and
// enforces what a test sets (emu.roce.setCeilings): CREATE_CQ beyond max_cqe + 1 entries and
// CREATE_QP beyond max_qp_wr WQEs or the mode's SGE limit are refused.
import t from 'tap';
import { bringUp, tearDown, type BnxtFunction } from '../lib/bnxt/bringup.ts';
import { bringUpRoce, tearDownRoce, type RoceDevice } from '../lib/bnxt/roce-device.ts';
import { BnxtQp } from '../lib/bnxt/queue-pair.ts';
import * as Q from '../lib/bnxt/roce-commands.ts';
import * as R from '../firmware-hwrm/roce/index.ts';
import type { RoceCeilings } from '../drivers/emu/model/firmware/roce-limits.ts';
import type { EmuDevice } from '../drivers/emu/host/device.ts';
import { emuDevice } from './helpers/emu-device.ts';
import { openRoce, makeCq, qpMemory, createQpValues } from './helpers/emu-roce-setup.ts';

const CHIPS = ['BCM57508', 'BCM57608'] as const;

interface Opened {
  readonly device: EmuDevice;
  readonly func: BnxtFunction;
  readonly roce: RoceDevice;
  close(): void;
}

/** The driver's bring-up on a software NIC of `chip` whose firmware reports `ceilings`. */
function open(chip: string, ceilings: Partial<RoceCeilings>): Opened {
  const device = emuDevice('stepped', 1, chip);
  device.emu.roce.setCeilings(ceilings);
  const func = bringUp(device);
  if (!func.ok) throw new Error(func.error);
  const roce = bringUpRoce(func.value, Uint8Array.from([10, 77, 3, 1]));
  if (!roce.ok) throw new Error(roce.error);
  return {
    device, func: func.value, roce: roce.value,
    close: () => {
      tearDownRoce(roce.value);
      tearDown(func.value);
      device.close();
    },
  };
}

for (const chip of CHIPS) {
  const variable = chip === 'BCM57608';
  // The SGE field bnxt_re reads in the chip's WQE mode.
  const sgeField = variable ? 'maxSgeVarWqe' : 'maxSge';

  t.test(`${chip}: the limits are read as bnxt_re reads them`, async (t) => {
    const o = open(chip, { maxCqe: 0x200000, maxQpWqes: 5000, maxSgeVarWqe: variable ? 20 : 0 });
    t.teardown(() => o.close());
    t.equal(o.roce.caps.max_cqe, 0x200000, 'QUERY_FUNC reports the firmware\'s max_cqe');
    t.equal(o.roce.limits.cqWqes, variable ? 0x200000 : 0xfffff, variable ? 'no cap on P7' : 'capped at 0xFFFFF');
    t.equal(o.roce.limits.qpWqes, 5000 - 129, 'max_qp_wr less 128 reserved and one');
    t.equal(o.roce.limits.qpSges, variable ? 13 : 6, variable ? 'max_sge_var_wqe capped at 13' : '6 in static mode');
    const qp = BnxtQp.make(o.func, o.roce, 1);
    t.ok(qp.ok, 'a queue pair fits');
    if (qp.ok) qp.value.destroy();
  });

  const cases: [string, Partial<RoceCeilings>, RegExp][] = [
    ['max_cqe 4094 (a CQ takes 4095 completions)', { maxCqe: 4094 }, /CQs of 4095 entries \(it takes 4094\)/],
    ['max_qp_wr 4223 (4094 WQEs after the 129 reserved)', { maxQpWqes: 4223 },
      /rings of 4095 entries \(it takes 4094\)/],
  ];
  // The RQ's 6 SGEs against max_sge_var_wqe (static mode reads no SGE limit: bnxt_re takes 6).
  if (variable) cases.push(['max_sge_var_wqe 5', { maxSgeVarWqe: 5 }, /6 SGEs per WQE \(it takes 5\)/]);
  for (const [what, ceilings, message] of cases) {
    t.test(`${chip}: ${what}: Qp.make is refused before any command, nothing kept`, async (t) => {
      const o = open(chip, ceilings);
      t.teardown(() => o.close());
      const before = { commands: o.device.emu.roce.seen(), bytes: o.func.pool.allocatedBytes };
      const qp = BnxtQp.make(o.func, o.roce, 1);
      t.equal(qp.ok, false);
      if (!qp.ok) {
        t.match(qp.error, message);
        t.match(qp.error, /the device's limits are below this driver's fixed queues/);
      }
      t.equal(o.device.emu.roce.seen(), before.commands, 'no command sent');
      t.equal(o.func.pool.allocatedBytes, before.bytes, 'no memory kept');
      t.same(o.device.emu.roce.resources().cqs, 0);
    });
  }

  t.test(`${chip}: the limits exactly as the rings need them are enough`, async (t) => {
    const o = open(chip, { maxCqe: 4095, maxQpWqes: 4224, ...(variable ? { maxSgeVarWqe: 6 } : {}) });
    t.teardown(() => o.close());
    const qp = BnxtQp.make(o.func, o.roce, 1);
    t.ok(qp.ok, qp.ok ? 'made' : qp.error);
    if (qp.ok) qp.value.destroy();
  });

  t.test(`${chip}: the firmware refuses what is beyond the limits it reports`, async (t) => {
    const o = open(chip, {});
    t.teardown(() => o.close());
    const rcfw = o.roce.rcfw;
    o.device.emu.roce.setCeilings({ maxCqe: 100, maxQpWqes: 64, maxSge: 2, maxSgeVarWqe: 2 });
    const refused = (r: { ok: boolean }, why: RegExp, what: string) => {
      t.equal(r.ok, false, what);
      t.match(o.device.emu.roce.lastRefusal(), why, what);
    };
    refused(rcfw.send(Q.CREATE_CQ, { cq_size: 102, cnq_id: o.roce.cqNqId, pbl: 0 }),
      /cq_size 102 is not in 1\.\.max_cqe \+ 1 \(max_cqe 100\)/, 'a CQ of 102 entries');
    const F = R.CreateQpFlags;
    const qp = (change: Record<string, number>) => rcfw.send(Q.CREATE_QP, {
      type: R.QpType.RC, qp_flags: variable ? F.VARIABLE_SIZED_WQE_ENABLED : 0, sq_size: variable ? 256 : 64,
      rq_size: 64, sq_sge: 1, rq_sge: 1, ...change,
    });
    refused(qp({ rq_size: 65 }), /rq_size 65 is over max_qp_wr 64/, 'an RQ of 65');
    const sgeLimit = new RegExp(`over ${variable ? 'max_sge_var_wqe' : 'max_sge'} 2`);
    refused(qp({ sq_sge: 3 }), sgeLimit, 'sq_sge 3');
    refused(qp({ rq_sge: 3 }), sgeLimit, 'rq_sge 3');
    if (variable) refused(qp({ sq_size: 0x10000 }), /not a multiple of 256 up to 65535/, 'an SQ of 65536 slots');
    else refused(qp({ sq_size: 65 }), /sq_size 65 is over max_qp_wr 64/, 'an SQ of 65');
    t.same(o.device.emu.roce.resources().qps, 0, 'nothing made');
  });
}

t.test('model: CREATE_CQ takes max_cqe + 1 entries (what bnxt_re asks for max_cqe CQEs) and no more', async (t) => {
  const { q, rig, setup } = openRoce();
  rig.model.controls.roce.setCeilings({ maxCqe: 15 });
  t.equal(makeCq(q, 16).id > 0, true, '16 entries with max_cqe 15');
  const ring = rig.alloc(17 * 32);
  const e = q.call(R.CmdqCreateCq, {
    opcode: R.RoceOpcode.CREATE_CQ, cnq_id: setup.nqRingId, cq_size: 17, pbl: ring.iova,
  });
  t.equal(e[1], R.RoceStatus.INVALID_PARAMETER, '17 refused');
});

t.test('model: a static QP at max_qp_wr WQEs and max_sge SGEs is made, one more is refused', async (t) => {
  const { q, rig } = openRoce();
  rig.model.controls.roce.setCeilings({ maxQpWqes: 32, maxSge: 4 });
  const cq = makeCq(q);
  const at = (sq: number, rq: number, sge: number) => {
    const values = createQpValues(cq.id, cq.id, qpMemory(rig, sq, rq), sq, rq);
    return q.call(R.CmdqCreateQp, { ...values, sq_sge: sge, rq_sge: sge });
  };
  t.equal(at(32, 32, 4)[1], 0, '32 WQEs, 4 SGEs');
  t.equal(at(33, 32, 4)[1], R.RoceStatus.INVALID_PARAMETER, 'SQ of 33');
  t.equal(at(32, 33, 4)[1], R.RoceStatus.INVALID_PARAMETER, 'RQ of 33');
  t.equal(at(32, 32, 5)[1], R.RoceStatus.INVALID_PARAMETER, '5 SGEs');
});
