// Issue 10: Qp.connect on the software NIC for Ethernet MTUs from 576 to 9216, and the driver,
// the port and the firmware agree on the path MTU each one carries. Every MTU is checked
// against the driver's and the firmware's rule; the NIC is opened and connected at every MTU
// beside a step (one below, at, one above), at both ends and every 32nd MTU (a NIC per MTU
// costs ~7 ms; RIG_BNXT_MTU_WALK=all connects at every one of the 8641, about a minute).
import t from 'tap';
import { Qp, pathMtuFor } from '../lib/index.ts';
import { maxPathMtuCode } from '../drivers/emu/model/firmware/roce-cmd-modify-qp.ts';
import { openNic, controls, qpAttributes, unwrap } from './helpers/qp-control.ts';

const LOWEST = 576;
const HIGHEST = 9216;

/**
 * Where the path MTU steps up, worked out by hand from the rule docs/hardware.md derives (the
 * Linux RoCE stack's iboe_get_mtu: the IB MTU that fits Ethernet MTU - 96): an Ethernet MTU
 * from `from` on carries `path` (256 + 96 = 352 lies below the smallest MTU a NIC opens with).
 */
const STEPS: readonly (readonly [from: number, path: number])[] = [
  [576, 256], [608, 512], [1120, 1024], [2144, 2048], [4192, 4096],
];

function expectedPathMtu(ethernetMtu: number): number {
  let path = 0;
  for (const [from, p] of STEPS) if (ethernetMtu >= from) path = p;
  return path;
}

t.test('for every Ethernet MTU from 576 to 9216 the driver and the firmware take the same path MTU', (t) => {
  const wrong: string[] = [];
  for (let mtu = LOWEST; mtu <= HIGHEST; mtu++) {
    const expected = expectedPathMtu(mtu);
    const driver = pathMtuFor(mtu);
    const firmware = 256 << maxPathMtuCode(mtu);
    if (driver !== expected || firmware !== expected)
      wrong.push(`MTU ${mtu}: expected ${expected}, driver ${driver}, firmware ${firmware}`);
  }
  t.same(wrong.slice(0, 20), []);
  t.end();
});

/** The MTUs the NIC is opened with: beside every step, both ends, every 32nd (or all of them). */
function walked(): number[] {
  const all = process.env['RIG_BNXT_MTU_WALK'] === 'all';
  const set = new Set<number>([LOWEST, HIGHEST]);
  for (const [from] of STEPS) for (const m of [from - 1, from, from + 1]) if (m >= LOWEST) set.add(m);
  for (let m = LOWEST; m <= HIGHEST; m += all ? 1 : 32) set.add(m);
  return [...set].sort((a, b) => a - b);
}

t.test('Qp.connect succeeds across 576..9216, and driver, port and firmware agree on the path MTU', (t) => {
  const disagreements: string[] = [];
  let connected = 0;
  const mtus = walked();
  for (const mtu of mtus) {
    const nic = openNic({ mtu });
    try {
      const a = unwrap(Qp.make(nic));
      const b = unwrap(Qp.make(nic));
      const r = a.connect(b.endpoint);
      if (!r.ok) {
        disagreements.push(`MTU ${mtu}: connect failed: ${r.error}`);
        continue;
      }
      connected++;
      const expected = expectedPathMtu(mtu);
      const driver = pathMtuFor(mtu);
      const firmware = qpAttributes(nic, a.number)?.pathMtuBytes;
      const engine = controls(nic).engine.qp(a.number)?.mtu;
      if (driver !== expected || firmware !== expected || engine !== expected) {
        disagreements.push(`MTU ` +
          `${mtu}: expected ${expected}, driver ${driver}, firmware ${firmware}, engine ${engine}`);
      }
    } finally {
      nic.close();
    }
  }
  t.same(disagreements.slice(0, 20), [], 'no MTU fails or disagrees');
  t.equal(connected, mtus.length, `all ${mtus.length} MTUs connected`);
  t.end();
});
