// The software NIC's bus (drivers/emu/model/write-queue.ts, the host's producer in
// drivers/emu/host/write-queue-producer.ts): every write arrives once, in order, whether
// the two ends share a thread (plain counts) or not (atomic counts), and a full queue waits.
import t from 'tap';
import { Worker, threadId } from 'node:worker_threads';
import { allocWriteQueue, WRITE_QUEUE_ENTRIES, WriteQueueConsumer } from '../drivers/emu/model/write-queue.ts';
import { WriteQueueProducer } from '../drivers/emu/host/write-queue-producer.ts';

interface Entry { kind: number; offset: number; lo: number; hi: number }

function drain(c: WriteQueueConsumer, into: Entry[]): void {
  while (c.take()) into.push({ kind: c.kind, offset: c.offset, lo: c.lo, hi: c.hi });
}

function entry(i: number): Entry {
  // lo and hi over 2^31 too: the consumer gives them back as unsigned 32-bit numbers.
  return { kind: i & 3, offset: (i * 8) & 0xffffff, lo: (i * 0x9e3779b9) >>> 0, hi: (0xffffffff - i) >>> 0 };
}

for (const order of ['consumer first', 'producer first']) {
  t.test(`one thread, ${order}: every write once, in order, across the queue's wrap`, async (t) => {
    const sab = allocWriteQueue();
    let c: WriteQueueConsumer | undefined;
    if (order === 'consumer first') c = new WriteQueueConsumer(sab, threadId);
    const taken: Entry[] = [];
    const p = new WriteQueueProducer(sab, () => drain(c!, taken));
    c ??= new WriteQueueConsumer(sab, threadId);
    const total = 3 * WRITE_QUEUE_ENTRIES + 5;
    t.notOk(c.pending(), 'nothing pending before the first write');
    for (let i = 0; i < total; i++) {
      const e = entry(i);
      p.push(e.kind, e.offset, e.lo, e.hi);
      if (i % 1000 === 999) drain(c, taken);
    }
    t.ok(c.pending(), 'the last writes are pending');
    drain(c, taken);
    t.notOk(c.pending(), 'nothing pending once taken');
    t.equal(taken.length, total, 'as many taken as written');
    let same = 0;
    for (let i = 0; i < total; i++) {
      const e = entry(i);
      const g = taken[i]!;
      if (g.kind === e.kind && g.offset === e.offset && g.lo === e.lo && g.hi === e.hi) same++;
    }
    t.equal(same, total, 'each in the order written, with its values');
  });
}

t.test('a full queue calls whileFull until the consumer takes an entry', async (t) => {
  const sab = allocWriteQueue();
  const c = new WriteQueueConsumer(sab, threadId);
  let calls = 0;
  const p = new WriteQueueProducer(sab, () => {
    calls++;
    if (calls === 3) c.take(); // room for one
  });
  for (let i = 0; i < WRITE_QUEUE_ENTRIES; i++) p.push(0, i, i, 0);
  t.equal(calls, 0, 'a queue of WRITE_QUEUE_ENTRIES holds that many');
  p.push(0, 1, 2, 3);
  t.equal(calls, 3, 'the next push waited until an entry was taken');
});

t.test('two threads: a consumer in a worker takes every write once, in order', async (t) => {
  const sab = allocWriteQueue();
  const total = 2 * WRITE_QUEUE_ENTRIES + 17;
  // The worker counts what it takes and checks each against what the producer writes.
  const worker = new Worker(new URL('./helpers/write-queue-consumer.ts', import.meta.url), {
    workerData: { sab, total },
  });
  t.teardown(() => worker.terminate());
  const messages: unknown[] = [];
  const result = new Promise<{ n: number; bad: number }>((resolve, reject) => {
    worker.on('message', (m) => {
      messages.push(m);
      if (typeof m === 'object') resolve(m as { n: number; bad: number });
    });
    worker.on('error', reject);
  });
  await new Promise<void>((resolve) => {
    const look = (): void => (messages.includes('made') ? resolve() : void setTimeout(look, 5));
    look();
  });
  const p = new WriteQueueProducer(sab, () => undefined);
  for (let i = 0; i < total; i++) p.push(2, i & 0xffffff, (i * 7) >>> 0, (0xfffffff0 + (i & 15)) >>> 0);
  const r = await result;
  t.equal(r.n, total, 'every write taken');
  t.equal(r.bad, 0, 'each in order, with its values');
});
