import t from 'tap';
import { LoopCable } from '../drivers/emu/model/cable/loop-cable.ts';
import { numberedFrame, waitUntil } from './helpers/wait.ts';

t.test('delivers every frame back to the same receiver, in order, with its bytes', async (t) => {
  const cable = new LoopCable({ slots: 128, slotBytes: 1600 });
  t.teardown(() => cable.close());
  const got: number[][] = [];
  cable.setReceiver((frame, length) => got.push([...frame.subarray(0, length)]));
  const buf = new Uint8Array(1600);
  for (let seq = 0; seq < 100; seq++) {
    const frame = numberedFrame(seq, 60 + seq * 13);
    buf.set(frame);
    cable.send(buf, frame.length);
    buf.fill(0xff); // the sender reuses its buffer at once
  }
  t.equal(got.length, 0, 'nothing is delivered inside send');
  await waitUntil(() => got.length === 100, '100 frames');
  for (let seq = 0; seq < 100; seq++) t.same(got[seq], [...numberedFrame(seq, 60 + seq * 13)], `frame ${seq}`);
  t.equal(cable.stats.framesSent, 100);
  t.equal(cable.stats.framesReceived, 100);
});

t.test('a receiver that sends is never re-entered, and each pass is bounded', async (t) => {
  const cable = new LoopCable({ slots: 8, slotBytes: 64, delivery: 'manual' });
  let depth = 0;
  let maxDepth = 0;
  let calls = 0;
  const reply = new Uint8Array(64);
  cable.setReceiver((frame, length) => {
    depth++;
    maxDepth = Math.max(maxDepth, depth);
    calls++;
    t.equal(cable.deliverPending(), 0, 'a pass started inside the receiver delivers nothing');
    reply.set(frame.subarray(0, length));
    reply[2] = (reply[2]! + 1) & 0xff;
    cable.send(reply, length); // ping-pong with itself
    depth--;
  });
  cable.send(numberedFrame(1, 20), 20);
  t.equal(calls, 0);
  for (let pass = 1; pass <= 5; pass++) {
    t.equal(cable.deliverPending(), 1, `pass ${pass} delivers the one frame queued when it began`);
    t.equal(cable.pending, 1, 'the reply waits for the next pass');
  }
  t.equal(maxDepth, 1);
  cable.close();
});

t.test('auto delivery keeps going for frames sent by the receiver', async (t) => {
  const cable = new LoopCable({ slots: 4, slotBytes: 64 });
  t.teardown(() => cable.close());
  let hops = 0;
  cable.setReceiver((frame, length) => {
    if (++hops < 50) cable.send(frame, length);
  });
  cable.send(new Uint8Array(10), 10);
  await waitUntil(() => hops === 50, '50 hops');
  t.equal(cable.stats.framesReceived, 50);
});

t.test('a full ring, a frame too long for a slot and a closed cable drop and count', async (t) => {
  const cable = new LoopCable({ slots: 4, slotBytes: 64, delivery: 'manual' });
  const seen: number[] = [];
  cable.setReceiver((frame) => seen.push(frame[1]!));
  for (let seq = 0; seq < 6; seq++) cable.send(numberedFrame(seq, 32), 32);
  t.equal(cable.pending, 4);
  t.equal(cable.stats.sendDropped, 2);
  cable.send(new Uint8Array(65), 65);
  t.equal(cable.stats.sendDropped, 3);
  t.equal(cable.deliverPending(), 4);
  t.same(seen, [0, 1, 2, 3], 'the oldest frames were kept');
  cable.send(numberedFrame(9, 32), 32);
  cable.close();
  t.equal(cable.pending, 0, 'closing discards what was queued');
  cable.send(numberedFrame(10, 32), 32);
  t.equal(cable.stats.sendDropped, 4);
  t.equal(cable.deliverPending(), 0);
});

t.test('frames with no receiver set are counted as dropped', async (t) => {
  const cable = new LoopCable({ slots: 4, slotBytes: 64, delivery: 'manual' });
  cable.send(new Uint8Array(8), 8);
  cable.deliverPending();
  t.equal(cable.stats.receiveDropped, 1);
});

t.test('ring sizes must be powers of two; send lengths must fit the buffer', async (t) => {
  t.throws(() => new LoopCable({ slots: 6 }), RangeError);
  t.throws(() => new LoopCable({ slots: 0 }), RangeError);
  const cable = new LoopCable({ slots: 2, slotBytes: 64, delivery: 'manual' });
  t.throws(() => cable.send(new Uint8Array(4), 5), RangeError);
});

t.test('a frame handed over in a cable buffer arrives with its bytes, and another buffer comes back', async (t) => {
  const cable = new LoopCable({ slots: 8, slotBytes: 64, delivery: 'manual' });
  t.teardown(() => cable.close());
  const got: number[][] = [];
  cable.setReceiver((frame, length) => got.push([...frame.subarray(0, length)]));
  let buf = cable.spareBuffer();
  if (buf === null) throw new Error('a new cable has a spare buffer');
  t.equal(cable.spareBuffer(), null, 'the spare is handed out once');
  t.equal(buf.length, 64);
  const inUse = new Set<Uint8Array>();
  // 12 frames through 8 slots: buffers move between slots and back to the sender.
  for (let seq = 0; seq < 12; seq++) {
    const frame = numberedFrame(seq, 20 + seq);
    buf.set(frame);
    const before = buf;
    buf = cable.sendBuffer(buf, frame.length);
    t.not(buf, before, `frame ${seq}: the sender gets another buffer to build the next frame in`);
    t.notOk(inUse.has(buf), `frame ${seq}: not a buffer holding a frame still waiting`);
    inUse.add(before);
    buf.fill(0xee); // the sender writes its next frame at once
    if (seq % 3 === 2) {
      cable.deliverPending();
      inUse.clear();
    }
  }
  cable.deliverPending();
  t.equal(got.length, 12);
  for (let seq = 0; seq < 12; seq++) t.same(got[seq], [...numberedFrame(seq, 20 + seq)], `frame ${seq} intact`);
  t.equal(cable.stats.framesSent, 12);
  t.equal(cable.stats.bytesSent, got.reduce((n, f) => n + f.length, 0));
});

t.test('sendBuffer copies a buffer that is not the cable\'s, and drops on a full ring as send does', async (t) => {
  const cable = new LoopCable({ slots: 2, slotBytes: 64, delivery: 'manual' });
  t.teardown(() => cable.close());
  const got: number[][] = [];
  cable.setReceiver((frame, length) => got.push([...frame.subarray(0, length)]));
  const own = new Uint8Array(64);
  own.set(numberedFrame(1, 30));
  t.equal(cable.sendBuffer(own, 30), own, 'a foreign buffer is copied and stays the sender\'s');
  own.fill(0);
  let buf = cable.spareBuffer()!;
  buf.set(numberedFrame(2, 30));
  buf = cable.sendBuffer(buf, 30);
  buf.set(numberedFrame(3, 30));
  const kept = buf;
  t.equal(cable.sendBuffer(buf, 30), kept, 'a full ring keeps nothing: the sender keeps its buffer');
  t.equal(cable.stats.sendDropped, 1);
  cable.deliverPending();
  t.same(got, [[...numberedFrame(1, 30)], [...numberedFrame(2, 30)]]);
});

t.test('a burst sent after a delivery is built in the buffers delivered last, newest first; every frame ' +
  'arrives intact through random bursts, deliveries and frames sent from inside the receiver', async (t) => {
  const cable = new LoopCable({ slots: 16, slotBytes: 64, delivery: 'manual' });
  t.teardown(() => cable.close());
  let buf = cable.spareBuffer()!;
  let seq = 0;
  const sent: number[] = [];
  const got: number[] = [];
  let bad = 0;
  let deliveredIn: Uint8Array[] = [];
  let replies = 0;
  const send = (): void => {
    const frame = numberedFrame(seq, 20 + (seq % 30));
    buf.set(frame);
    sent.push(seq++);
    buf = cable.sendBuffer(buf, frame.length);
    buf.fill(0xee); // the sender writes its next frame at once: a buffer still waiting would be spoilt
  };
  cable.setReceiver((frame, length) => {
    const n = (frame[0]! << 8) | frame[1]!;
    if (!frame.subarray(0, length).every((b, i) => b === numberedFrame(n, length)[i])) bad++;
    got.push(n);
    deliveredIn.push(frame);
    if (n % 7 === 3 && cable.pending < 15) { replies++; send(); } // as the engine sends an ACK from onFrame
  });
  let warm = 0;
  let checked = 0;
  let quiet = false;
  for (let round = 0; round < 200; round++) {
    const burst = 1 + ((round * 5) % 9);
    const last = deliveredIn;
    deliveredIn = [];
    const repliesBefore = replies;
    for (let k = 0; k < burst && cable.pending < 15; k++) {
      send();
      // After a delivery with no frame sent from inside it, the k-th buffer handed back is the one the
      // k-th newest delivered frame was in.
      const want = last[last.length - 1 - k];
      if (want !== undefined && quiet) { checked++; if (buf === want) warm++; }
    }
    cable.deliverPending();
    quiet = replies === repliesBefore;
  }
  cable.deliverPending();
  t.equal(bad, 0, 'no frame spoilt');
  t.same(got, sent, `${sent.length} frames (${replies} sent from inside the receiver), in order`);
  t.ok(checked > 50 && warm === checked,
    `${warm} of ${checked} buffers handed back in bursts were the delivered ones, newest first`);
});
