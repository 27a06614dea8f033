/**
 * A fresh process that opens and closes software NICs (the default kind: inline for `emu`, in a
 * worker thread with RIG_BNXT_EMU_THREAD=1) and prints
 * its RSS in MiB once warm (40 NICs) and once after `count` more, as one JSON line: test/emu-memory-bound.
 */
import { Nic } from '../../lib/index.ts';

const count = Number(process.argv[2] ?? 20);
const openClose = (): void => {
  const nic = Nic.open('emu');
  if (!nic.ok) throw new Error(nic.error);
  nic.value.close();
};
// Warm: code compiled, and the allocator at its plateau. Inline NICs (the model in this thread)
// settle at about 45-50 MiB above a fresh process within the first 30 or so, then stay (30 more
// NICs: +46 MiB, 90 more: +50 MiB, measured), so warm-up covers that before `before` is read.
for (let i = 0; i < 40; i++) openClose();
const before = process.memoryUsage().rss / 1048576;
for (let i = 0; i < count; i++) openClose();
const after = process.memoryUsage().rss / 1048576;
console.log(JSON.stringify({ before, after }));
