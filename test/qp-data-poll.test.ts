// Issue 4: poll, wait and room as Rig_bnxt.Qp says them, one test per sentence.
import t from 'tap';
import { InvalidArgument, Qp } from '../lib/index.ts';
import { firmwareRequests, must, openPair } from './helpers/qp-data.ts';

t.test('room: each ring holds 4095 entries', async (t) => {
  const p = openPair();
  t.teardown(() => p.nic.close());
  const fresh = must(Qp.make(p.nic), 'unconnected QP');
  for (const q of [p.a, p.b, fresh]) {
    t.equal(q.room('send'), 4095, 'a new send ring takes 4095');
    t.equal(q.room('receive'), 4095, 'a new receive ring takes 4095');
  }
  t.throws(() => p.a.room('both' as 'send'), InvalidArgument, 'a side that is neither throws');
});

t.test('poll: None when no entry is due', async (t) => {
  const p = openPair();
  t.teardown(() => p.nic.close());
  const fresh = must(Qp.make(p.nic), 'unconnected QP');
  for (const q of [p.a, p.b, fresh]) {
    t.equal(q.poll('send'), undefined, 'nothing due on the send ring');
    t.equal(q.poll('receive'), undefined, 'nothing due on the receive ring');
  }
  // After every completion is taken, nothing is due again.
  p.b.receive(p.rb, 0, 8);
  p.a.send(p.ra, 0, 8);
  t.ok(p.a.wait('send', 5e6)?.ok);
  t.ok(p.b.wait('receive', 5e6)?.ok);
  t.equal(p.a.poll('send'), undefined, 'send ring drained');
  t.equal(p.b.poll('receive'), undefined, 'receive ring drained');
  t.equal(p.a.room('send'), 4095);
  t.equal(p.b.room('receive'), 4095);
});

t.test('poll: None when the oldest due entry has no completion yet, and it stays due', async (t) => {
  const p = openPair();
  t.teardown(() => p.nic.close());
  p.b.receive(p.rb, 0, 100);
  for (let i = 0; i < 100; i++) t.equal(p.b.poll('receive'), undefined, `look ${i}: no message yet`);
  t.equal(p.b.room('receive'), 4094, 'the receive is still due');
  p.ra.bytes.fill(0xa5, 0, 40);
  p.a.send(p.ra, 0, 40);
  t.same(p.b.wait('receive', 5e6), { ok: true, value: 40 }, 'the message the receive was waiting for');
  t.same(p.a.wait('send', 5e6), { ok: true, value: 40 });
});

t.test('poll: Ok n with a send\'s bytes, a read\'s bytes, and the length of the message a receive took', async (t) => {
  const p = openPair();
  t.teardown(() => p.nic.close());
  // Receives larger than the messages: n is the message's length, not the receive's.
  const sizes = [0, 1, 37, 4095, 4096, 4097, 10_000];
  for (const n of sizes) p.b.receive(p.rb, 0, 20_000);
  for (const n of sizes) p.a.send(p.ra, 0, n);
  for (const n of sizes) t.same(p.a.wait('send', 5e6), { ok: true, value: n }, `send of ${n}: Ok ${n}`);
  for (const n of sizes)
    t.same(p.b.wait('receive', 5e6), { ok: true, value: n }, `receive of up to 20000 that took ${n}: Ok ${n}`);
  for (const n of sizes) p.a.read(p.rb, 0, p.ra, 0, n);
  for (const n of sizes) t.same(p.a.wait('send', 5e6), { ok: true, value: n }, `read of ${n}: Ok ${n}`);
  t.equal(p.b.poll('receive'), undefined, 'reads take no receive of the peer');
});

t.test('poll: Error msg for the entry that failed and for the queue pair that has; a send longer than the receive ' +
  'fails both queue pairs', async (t) => {
  const p = openPair();
  t.teardown(() => p.nic.close());
  p.b.receive(p.rb, 0, 10);
  p.b.receive(p.rb, 0, 1000);
  p.a.send(p.ra, 0, 11); // one byte longer than the receive: fails a and b
  p.a.send(p.ra, 0, 5);
  const failedSend = p.a.wait('send', 5e6);
  t.equal(failedSend?.ok, false, 'the send that did not fit fails');
  if (failedSend && !failedSend.ok) t.match(failedSend.error, /\S/, `with a message: ${failedSend.error}`);
  const failedReceive = p.b.wait('receive', 5e6);
  t.equal(failedReceive?.ok, false, 'the receive it overran fails');
  const nextSend = p.a.wait('send', 5e6);
  t.equal(nextSend?.ok, false, 'the next send completes with the failure\'s Error');
  const nextReceive = p.b.wait('receive', 5e6);
  t.equal(nextReceive?.ok, false, 'so does the next receive');
  t.ok(p.a.failure !== undefined && p.b.failure !== undefined, 'both queue pairs are failed');
  // A failed queue pair stays failed: later entries complete with an Error too.
  p.a.send(p.ra, 0, 1);
  p.b.receive(p.rb, 0, 1);
  t.equal(p.a.poll('send')?.ok, false, 'a send posted after the failure: Error');
  t.equal(p.b.poll('receive')?.ok, false, 'a receive posted after the failure: Error');
  t.equal(p.a.poll('send'), undefined, 'and then nothing is due');
  t.equal(p.a.room('send'), 4095, 'every slot is free again');
  t.equal(p.b.room('receive'), 4095);
});

t.test('wait: Invalid_argument if us < 0 or no entry of side is due', async (t) => {
  const p = openPair();
  t.teardown(() => p.nic.close());
  const fresh = must(Qp.make(p.nic), 'unconnected QP');
  for (const q of [p.a, fresh]) {
    t.throws(() => q.wait('send', 10), InvalidArgument, 'no send due');
    t.throws(() => q.wait('receive', 0), InvalidArgument, 'no receive due');
  }
  p.b.receive(p.rb, 0, 8);
  t.throws(() => p.b.wait('receive', -1), InvalidArgument, 'us = -1');
  t.throws(() => p.b.wait('receive', -0.001), InvalidArgument, 'us = -0.001');
  t.throws(() => p.b.wait('receive', NaN), InvalidArgument, 'us = NaN');
  t.throws(() => p.b.wait('receive', '5' as unknown as number), InvalidArgument, 'us not a number');
  t.throws(() => p.b.wait('send', 10), InvalidArgument, 'a receive due does not make the send ring due');
  t.equal(p.b.room('receive'), 4094, 'the refused waits took nothing');
  p.a.send(p.ra, 0, 8);
  t.same(p.b.wait('receive', 5e6), { ok: true, value: 8 });
  t.throws(() => p.b.wait('receive', 10), InvalidArgument, 'taken: no longer due');
});

t.test('wait: the completion once it comes; None at the bound, the entry still due', async (t) => {
  for (const stepped of [true, false]) {
    const p = openPair({ stepped });
    t.teardown(() => p.nic.close());
    const mode = stepped ? 'stepped' : 'thread';
    p.b.receive(p.rb, 0, 64);
    t.equal(p.b.wait('receive', 0), undefined, `${mode}: us = 0 with nothing arrived: None`);
    t.equal(p.b.wait('receive', 20_000), undefined, `${mode}: 20 ms with nothing sent: None`);
    t.equal(p.b.room('receive'), 4094, `${mode}: the receive is still due`);
    p.a.send(p.ra, 0, 33);
    t.same(p.a.wait('send', 5e6), { ok: true, value: 33 }, `${mode}: the send's completion`);
    t.same(p.b.wait('receive', 0), { ok: true, value: 33 },
      `${mode}: the same receive takes the message, even with us = 0`);
    t.equal(p.b.room('receive'), 4095);
  }
});

t.test('wait: a long wait sleeps between looks (CPU time well below the wall time)', async (t) => {
  // A thread-mode NIC: the model runs in a worker and sleeps when idle, so the process's CPU
  // time during the wait is the waiting loop's own. Behaviour check, not a speed figure.
  const p = openPair({ stepped: false });
  t.teardown(() => p.nic.close());
  p.b.receive(p.rb, 0, 64);
  const cpu0 = process.cpuUsage();
  const wall0 = performance.now();
  const r = p.b.wait('receive', 1_000_000);
  const wallMs = performance.now() - wall0;
  const cpu = process.cpuUsage(cpu0);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  t.equal(r, undefined, 'None at the bound');
  t.ok(wallMs >= 1000, `it waited the whole second (${wallMs.toFixed(0)} ms)`);
  t.ok(cpuMs < wallMs * 0.5, `CPU ${cpuMs.toFixed(0)} ms over ${wallMs.toFixed(0)} ms of wall time (< 50 %)`);
});

t.test('poll and wait send the firmware no request, a failure\'s included', async (t) => {
  for (const stepped of [true, false]) {
    const p = openPair({ stepped });
    t.teardown(() => p.nic.close());
    const mode = stepped ? 'stepped' : 'thread';
    let polled = 0;
    const looks = (f: () => void) => {
      const before = firmwareRequests(p.nic);
      f();
      t.same(firmwareRequests(p.nic), before, `${mode}: looks ${++polled} sent no request`);
    };
    looks(() => { p.a.poll('send'); p.a.poll('receive'); p.b.poll('send'); p.b.poll('receive'); });
    p.b.receive(p.rb, 0, 100);
    looks(() => { p.b.poll('receive'); p.b.wait('receive', 5000); });
    p.a.send(p.ra, 0, 100);
    looks(() => { p.a.wait('send', 5e6); p.b.wait('receive', 5e6); });
    p.a.read(p.rb, 0, p.ra, 0, 5000);
    looks(() => { p.a.wait('send', 5e6); });
    // A failure: the send is longer than the receive. Taking the failed completions, and the
    // failure's Error for entries posted after it, asks the firmware nothing.
    p.b.receive(p.rb, 0, 10);
    p.a.send(p.ra, 0, 11);
    looks(() => {
      t.equal(p.a.wait('send', 5e6)?.ok, false, `${mode}: the send failed`);
      t.equal(p.b.wait('receive', 5e6)?.ok, false, `${mode}: the receive failed`);
    });
    p.a.send(p.ra, 0, 1);
    p.b.receive(p.rb, 0, 1);
    looks(() => {
      t.equal(p.a.poll('send')?.ok, false);
      t.equal(p.b.wait('receive', 100)?.ok, false);
      p.a.poll('send');
      p.b.poll('receive');
    });
  }
});
