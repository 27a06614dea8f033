// The driver's hand-inlined copies on the hot path (test/tidy.test.ts PERF_FORKS) against their
// one definition, result for result:
//   QpPosts.postSend (the SEND post written out) against QpPosts.writeSqWqe (the readable post
//     postRead uses, with writeSge, writeMsnEntry / writePsnEntry and advancePsn): the same SQ
//     memory, byte for byte, the same doorbells, the same next PSN and entry length, at every
//     ring position class (first lap, the wrap, later laps, past 2^32), message length (0, the
//     MTU's edges, 2^31), path MTU, PSN (its wrap), SGE address (the 32-bit carry), on each SQ
//     table: the P7 MSN table, the P5 PSN search, the P5 MSN table of the current-msn firmware;
//   QpCompletions.sqFull / rqFull (the full rings in a few bytes) against QpCompletions.room;
//   CompletionQueue's slot and phase (spelled with the ring's mask and shift) against
//   firmware-hwrm/ring.ts RingCursor, the ring arithmetic's definition.
// The NIC is stepped and its doorbells are recorded, not delivered: the model never runs the
// WQEs written here.
import t from 'tap';
import { Qp, type NicOptions } from '../lib/index.ts';
import { driverQpOf } from '../lib/qp.ts';
import type { Mmio } from '../drivers/device.ts';
import type { BnxtQp } from '../lib/bnxt/queue-pair.ts';
import { Side } from '../lib/bnxt/qp-completions.ts';
import { CompletionQueue, CQ_RING } from '../lib/bnxt/completion-queue.ts';
import type { RingMemory } from '../lib/bnxt/ring-memory.ts';
import * as R from '../firmware-hwrm/roce/index.ts';
import * as C from '../firmware-hwrm/roce/cqe.g.ts';
import { must, openPair } from './helpers/qp-data.ts';
import { seeded } from '../scripts/stress/seeded.ts';

const SEND_WORD0 = R.sqWqeWord0(R.WqeType.SEND, R.WqeFlags.SIGNAL_COMP, R.sqWqeSizeForSges(1));

type Doorbell = [offset: number, lo: number, hi: number];

/** Records every doorbell of the NIC's doorbell BAR instead of ringing it; `stop` puts the BAR back. */
function recordDoorbells(mmio: Mmio): { rings: Doorbell[]; stop(): void } {
  const rings: Doorbell[] = [];
  const own = Object.getOwnPropertyDescriptor(mmio, 'doorbell64');
  mmio.doorbell64 = (offset: number, lo: number, hi: number): void => { rings.push([offset, lo, hi]); };
  return {
    rings,
    stop: () => {
      if (own) Object.defineProperty(mmio, 'doorbell64', own);
      else delete (mmio as { doorbell64?: unknown }).doorbell64;
    },
  };
}

/**
 * The same doorbells, in order: offset, low word, and type in the high word (its xid is each
 * queue pair's or CQ's own); a post rings its SQ's, after its CQ's where the CQ must be told.
 */
function sameDoorbells(a: Doorbell[], b: Doorbell[]): boolean {
  return a.length === b.length && a.length >= 1 &&
    a.every((d, i) => d[0] === b[i]![0] && d[1] === b[i]![1] && d[2] >>> 28 === b[i]![2] >>> 28);
}

/** The same ring position, PSN and path MTU on both queue pairs. */
function place(qps: BnxtQp[], prod: number, psn: number, mtuShift: number): void {
  for (const q of qps) {
    q['sqProd'] = prod;
    q['sqTaken'] = prod;
    q['rqProd'] = prod;
    q['rqTaken'] = prod;
    q['nextPsn'] = psn;
    q['mtuShift'] = mtuShift;
  }
}

const CONFIGS: [string, NicOptions][] = [
  ['P7, MSN table', { stepped: true, chip: 'BCM57608', firmware: 'current' }],
  ['P5, PSN search', { stepped: true, chip: 'BCM57508', firmware: 'current' }],
  ['P5, MSN table', { stepped: true, chip: 'BCM57508', firmware: 'current-msn' }],
];

for (const [what, options] of CONFIGS) {
  t.test(`${what}: postSend writes what writeSqWqe writes for a SEND, and rings the same doorbell`, async (t) => {
    const p = openPair(options);
    t.teardown(() => p.nic.close());
    const c = must(Qp.make(p.nic), 'Qp.make c');
    const fast = driverQpOf(p.a);
    const slow = driverQpOf(c);
    const fastSq = Buffer.from(fast['sq32'].buffer, fast['sq32'].byteOffset, fast['sq32'].byteLength);
    const slowSq = Buffer.from(slow['sq32'].buffer, slow['sq32'].byteOffset, slow['sq32'].byteLength);
    slowSq.set(fastSq);
    const bar = recordDoorbells(fast['doorbells']);
    t.teardown(() => bar.stop());
    const rnd = seeded(2501);
    const prods = [0, 1, 2, 7, 4094, 4095, 4096, 4097, 8191, 8192, 12287, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32,
      2 ** 40 + 4095];
    const lengths = [0, 1, 255, 256, 257, 1023, 1024, 1025, 4095, 4096, 4097, 65536, 1 << 20, 2 ** 31 - 1, 2 ** 31];
    const sources = [
      { key: 0x1234, vaLo: 0x10000, vaHi: 0 }, { key: 0xffffffff, vaLo: 0xffffff00, vaHi: 7 },
      { key: 1, vaLo: 0xffffffff, vaHi: 0xfffffffe },
    ];
    let cases = 0;
    const mismatches: string[] = [];
    for (const prod of prods) {
      for (const n of lengths) {
        for (let shift = 8; shift <= 12; shift++) {
          const psn = [0, 0xfffffe, 0xffffff, rnd() & 0xffffff][cases % 4]!;
          const r = sources[cases % sources.length]!;
          const at = [0, 1, 0xff, 2 ** 31 - n][cases % 4]!;
          place([fast, slow], prod, psn, shift);
          bar.rings.length = 0;
          fast.postSend(r, at, n);
          const fastRings = bar.rings.splice(0);
          slow['writeSqWqe'](SEND_WORD0, r.key, r.vaLo, r.vaHi, at, n, 0, 0, 0, R.WqeType.SEND);
          const slowRings = bar.rings.splice(0);
          const idx = prod % 4096;
          const same = fastSq.equals(slowSq) && fast['nextPsn'] === slow['nextPsn'] &&
            fast['sqProd'] === slow['sqProd'] && fast['sqLength'][idx] === slow['sqLength'][idx] &&
            sameDoorbells(fastRings, slowRings);
          if (!same && mismatches.length < 5) mismatches.push(`prod ${prod} n ${n} mtu ${1 << shift} psn ${psn}`);
          cases++;
        }
      }
    }
    t.same(mismatches, [], `${cases} posts: the same SQ memory, PSN, producer, entry length and doorbell`);
    // Neither path was a no-op: the last post's header is a SEND, its length kept for the poll.
    const last = (prods.at(-1)! % 4096) * fast['sqWqeWords'];
    t.equal(fast['sq32'][last], SEND_WORD0, 'the SEND header is in the ring');
    t.equal(fast['sqLength'][prods.at(-1)! % 4096], lengths.at(-1), 'its length is kept for the poll');
  });
}

t.test('sqFull and rqFull say what room says: full exactly when no room is left', async (t) => {
  const p = openPair({ stepped: true });
  t.teardown(() => p.nic.close());
  const q = driverQpOf(p.a);
  const wrong: string[] = [];
  for (const taken of [0, 1, 4095, 4096, 2 ** 31, 2 ** 32 - 1]) {
    for (let due = 0; due <= 4095; due++) {
      q['sqTaken'] = q['rqTaken'] = taken;
      q['sqProd'] = q['rqProd'] = taken + due;
      if (q.sqFull() !== (q.room(Side.Send) === 0)) wrong.push(`send: ${due} due from ${taken}`);
      if (q.rqFull() !== (q.room(Side.Receive) === 0)) wrong.push(`receive: ${due} due from ${taken}`);
    }
  }
  q['sqTaken'] = q['rqTaken'] = q['sqProd'] = q['rqProd'] = 0;
  t.same(wrong, []);
});

t.test('CompletionQueue finds each CQE where RingCursor puts it, valid by its phase, on every lap', async (t) => {
  const memory = { buffer: { u32: new Uint32Array(CQ_RING.depth * C.CQ_BASE_WORDS) } } as unknown as RingMemory;
  const told: number[] = [];
  const bar = { doorbell64: (_o: number, lo: number) => { told.push(lo); } } as unknown as Mmio;
  const cq = new CompletionQueue(5, memory, bar, 0x10000, true);
  const u = memory.buffer.u32;
  const wrong: string[] = [];
  for (const start of [0, 4090, 8190, 2 ** 31 - 3, 2 ** 32 - 3, 2 ** 40 - 3]) {
    for (let k = 0; k < 8; k++) {
      const count = start + k;
      cq.cons = count;
      const slot = CQ_RING.slot(count);
      if (cq.at() !== slot * C.CQ_BASE_WORDS) wrong.push(`at ${count}`);
      if (cq.phase() !== CQ_RING.phase(count)) wrong.push(`phase ${count}`);
      // The NIC writes the CQE at the consumer with this lap's phase: ready, and one ahead not yet.
      const trailer = slot * C.CQ_BASE_WORDS + C.CQ_BASE_TOGGLE_WORD;
      u[trailer] = CQ_RING.phase(count) << C.CQ_BASE_TOGGLE_SHIFT;
      const next = CQ_RING.slot(count + 1) * C.CQ_BASE_WORDS + C.CQ_BASE_TOGGLE_WORD;
      u[next] = (CQ_RING.phase(count + 1) ^ 1) << C.CQ_BASE_TOGGLE_SHIFT;
      if (cq.ready() !== true || cq.readyAhead(0) !== true) wrong.push(`ready ${count}`);
      if (cq.readyAhead(1) !== false) wrong.push(`ahead ${count}`);
      if (((cq.trailer() >>> C.CQ_BASE_TOGGLE_SHIFT) & C.CQ_BASE_TOGGLE_MASK) !== CQ_RING.phase(count))
        wrong.push(`trailer ${count}`);
    }
  }
  t.same(wrong, []);
  cq.cons = 4099;
  cq.advance();
  t.same(told, [CQ_RING.doorbellLo(4100)], 'the consumer doorbell names RingCursor\'s position');
});
