// firmware-hwrm/ring.ts: slot, lap, epoch and valid phase of a free-running count, and the
// position a doorbell's (index, epoch) names. Expected values are worked by hand from the
// definitions (bnxt_hsi.h dbc_dbc: index bits 0-23, epoch 24, toggle 25-26; roce_hsi.h
// cq_base toggle / creq_base v: 1 on the first pass, flipping at each wrap).
import t from 'tap';
import {
  RingCursor, countAt, entriesAhead, ringEpoch, ringLap, ringPhase, ringSlot, ringSlotsForward, MAX_RING_DEPTH,
} from '../firmware-hwrm/ring.ts';

t.test('a ring of 4: slots, epochs and phases over three laps', async (t) => {
  const r = new RingCursor(4);
  const counts = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
  t.same(counts.map((c) => r.slot(c)), [0, 1, 2, 3, 0, 1, 2, 3, 0, 1]);
  t.same(counts.map((c) => r.lap(c)), [0, 0, 0, 0, 1, 1, 1, 1, 2, 2]);
  t.same(counts.map((c) => r.epoch(c)), [0, 0, 0, 0, 1, 1, 1, 1, 0, 0]);
  t.same(counts.map((c) => r.phase(c)), [1, 1, 1, 1, 0, 0, 0, 0, 1, 1]);
  // The any-depth functions give the same for every count, and also for depths that are not powers of two.
  t.same(counts.map((c) => ringSlot(c, 4)), counts.map((c) => r.slot(c)));
  t.same(counts.map((c) => ringEpoch(c, 4)), counts.map((c) => r.epoch(c)));
  t.same(counts.map((c) => ringPhase(c, 4)), counts.map((c) => r.phase(c)));
  t.same(counts.map((c) => ringLap(c, 4)), counts.map((c) => r.lap(c)));
  t.same(counts.map((c) => ringSlot(c, 3)), [0, 1, 2, 0, 1, 2, 0, 1, 2, 0]);
  t.same(counts.map((c) => ringPhase(c, 3)), [1, 1, 1, 0, 0, 0, 1, 1, 1, 0]);
});

t.test('the doorbell word: index, epoch at bit 24, toggle at bits 25-26', async (t) => {
  const r = new RingCursor(4096);
  t.equal(r.doorbellLo(5), 5);
  t.equal(r.doorbellLo(4096 + 5), 0x0100_0005, 'second lap: epoch set');
  t.equal(r.doorbellLo(8192 + 4095), 4095, 'third lap: epoch clear again');
  t.equal(r.doorbellLo(4096, 3), 0x0700_0000, 'toggle 3 beside epoch 1');
  t.equal(r.slotsBetween(4090, 3), 9, 'forward across the end');
  t.equal(r.slotsBetween(7, 7), 0);
});

t.test('a count past 2^32 keeps its slot and epoch (a power of two divides 2^32)', async (t) => {
  const r = new RingCursor(4096);
  const c = 2 ** 32 + 4096 * 3 + 17; // lap 2^20 + 3: odd
  t.equal(r.slot(c), 17);
  t.equal(r.epoch(c), 1);
  t.equal(r.phase(c), 0);
});

t.test('depths must be powers of two the 24-bit doorbell index can name', async (t) => {
  for (const bad of [0, 1, 3, 4095, 2 ** 25, 2.5, NaN]) t.throws(() => new RingCursor(bad), RangeError, `${bad}`);
  t.equal(new RingCursor(MAX_RING_DEPTH).mask, 0xffffff);
  t.equal(new RingCursor(256).shift, 8);
});

t.test('the count a doorbell names: forward from the current one, less than two laps', async (t) => {
  // depth 4; count 6 is slot 2 of lap 1 (epoch 1).
  t.equal(countAt(6, 4, 2, 1), 6, 'the current position: no move');
  t.equal(countAt(6, 4, 3, 1), 7);
  t.equal(countAt(6, 4, 1, 0), 9, 'slot 1 of the next lap (epoch 0)');
  t.equal(countAt(6, 4, 1, 1), 13, 'slot 1 with epoch 1 lies behind, so it names the lap after next');
  t.equal(countAt(0, 5, 4, 1), 9, 'any depth: slot 4 of lap 1');
  // Entries between a consumer position (index + epoch x depth) and a producer count.
  t.equal(entriesAhead(9, 2 + 4, 4), 3, 'consumer at slot 2 epoch 1, producer at 9: entries 6, 7, 8');
  t.equal(entriesAhead(8, 0, 4), 0, 'caught up two laps on: empty');
  t.equal(entriesAhead(4, 0, 4), 4, 'one lap ahead: full');
});

t.test('a producer index moves a count forward by less than one lap (a ring of any depth: 5)', async (t) => {
  t.equal(ringSlotsForward(0, 3, 5), 3, 'from the start to slot 3: entries 0, 1, 2');
  t.equal(ringSlotsForward(7, 4, 5), 2, 'count 7 is slot 2; slot 4 is two on');
  t.equal(ringSlotsForward(8, 1, 5), 3, 'past the end: slot 3 wraps to slot 1 over 4 and 0');
  t.equal(ringSlotsForward(10, 0, 5), 0, 'the same slot: nothing new');
});

t.test('ringSlot is count mod depth for counts past 2^31 and 2^32 too, and from a Float64Array', async (t) => {
  const wrong: string[] = [];
  const held = new Float64Array(1);
  for (const depth of [1, 3, 5, 8, 4096, 24576, MAX_RING_DEPTH]) {
    for (const base of [0, 2 ** 31 - 2 * depth, 2 ** 32 - 2 * depth, 2 ** 40, 2 ** 53 - 4 * depth]) {
      for (let k = 0; k < 4 * depth && k < 64; k++) {
        held[0] = base + k;
        const count = held[0]!;
        // The definition, worked as exact integer arithmetic.
        const want = Number(BigInt(count) % BigInt(depth));
        if (ringSlot(count, depth) !== want) wrong.push(`${count} mod ${depth}`);
      }
    }
  }
  t.same(wrong, []);
});

t.test('countAt is the position (index, epoch) seen forward from the count, modulo two laps', async (t) => {
  const wrong: string[] = [];
  for (const depth of [1, 2, 3, 4, 7, 64]) {
    for (let count = 0; count < 6 * depth + 3; count++) {
      for (let index = 0; index < depth; index++) {
        for (const epoch of [0, 1]) {
          // The definition: the least count c >= count with c mod 2 x depth = index + epoch x depth.
          let want = count;
          while (want % (2 * depth) !== index + epoch * depth) want++;
          if (countAt(count, depth, index, epoch) !== want) wrong.push(`${count} ${depth} ${index} ${epoch}`);
        }
      }
    }
  }
  t.same(wrong, []);
});
