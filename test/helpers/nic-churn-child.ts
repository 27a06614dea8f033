/**
 * A fresh process that opens and closes software NICs (the default kind: inline for `emu`, in a
 * worker thread with RIG_BNXT_EMU_THREAD=1) and prints
 * its RSS in MiB once warm and once after `count` more, as one JSON line: test/emu-memory-bound.
 */
import { Nic } from '../../lib/index.ts';

const count = Number(process.argv[2] ?? 20);
const openClose = (): void => {
  const nic = Nic.open('emu');
  if (!nic.ok) throw new Error(nic.error);
  nic.value.close();
};
for (let i = 0; i < 10; i++) openClose(); // warm: code compiled, allocator settled
const before = process.memoryUsage().rss / 1048576;
for (let i = 0; i < count; i++) openClose();
const after = process.memoryUsage().rss / 1048576;
console.log(JSON.stringify({ before, after }));
