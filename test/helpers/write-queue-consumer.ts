// A write-queue consumer in a worker thread (test/write-queue.test.ts): takes workerData.total
// entries, checks each against what the test's producer writes, and reports the counts.
import { parentPort, threadId, workerData } from 'node:worker_threads';
import { WriteQueueConsumer } from '../../drivers/emu/model/write-queue.ts';

const { sab, total } = workerData as { sab: SharedArrayBuffer; total: number };
const c = new WriteQueueConsumer(sab, threadId);
parentPort!.postMessage('made');
let n = 0;
let bad = 0;
while (n < total) {
  if (!c.take()) continue;
  if (c.offset !== (n & 0xffffff) || c.lo !== ((n * 7) >>> 0) || c.hi !== ((0xfffffff0 + (n & 15)) >>> 0)) bad++;
  n++;
}
parentPort!.postMessage({ n, bad });
