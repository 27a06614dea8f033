// Issue 4: room accounting through full rings and many wraparounds of every ring (SQ, RQ and
// both CQs), and completions taken in the order of the entries on both sides.
import t, { type Test } from 'tap';
import { InvalidArgument, Region } from '../lib/index.ts';
import {
  engineCounters, fillPattern, firstDifference, must, openPair, settle, type QpPair,
} from './helpers/qp-data.ts';
import { seeded, testSeed } from '../scripts/stress/seeded.ts';

const ROOM = 4095;

t.test('an entry\'s slot is free once poll or wait took its completion, not when the NIC completed it', async (t) => {
  const p = openPair();
  t.teardown(() => p.nic.close());
  const base = engineCounters(p.nic)['cqesWritten']!;
  const rooms: number[] = [];
  for (let i = 0; i < ROOM; i++) {
    p.b.receive(p.rb, 0, 16);
    p.a.send(p.ra, 0, 16);
    if (p.b.room('receive') !== ROOM - 1 - i || p.a.room('send') !== ROOM - 1 - i) rooms.push(i);
  }
  t.same(rooms, [], 'each post takes one: room 4094, 4093, ... 0');
  t.equal(p.a.room('send'), 0, 'send ring full');
  t.equal(p.b.room('receive'), 0, 'receive ring full');
  const done = settle(p.nic, () => engineCounters(p.nic)['cqesWritten']! - base === 2 * ROOM);
  t.ok(done, 'the NIC completed all 4095 sends and 4095 receives');
  t.equal(p.a.room('send'), 0, 'completed but not taken: the send ring is still full');
  t.equal(p.b.room('receive'), 0, 'and so is the receive ring');
  t.throws(() => p.a.send(p.ra, 0, 1), InvalidArgument, 'a send still throws');
  t.throws(() => p.b.receive(p.rb, 0, 1), InvalidArgument, 'a receive still throws');
  t.same(p.a.poll('send'), { ok: true, value: 16 });
  t.equal(p.a.room('send'), 1, 'poll took one send completion: one slot');
  t.same(p.b.wait('receive', 0), { ok: true, value: 16 });
  t.equal(p.b.room('receive'), 1, 'wait took one receive completion: one slot');
  for (let i = 2; i <= ROOM; i++) {
    if (p.a.poll('send')?.ok !== true || p.b.poll('receive')?.ok !== true) { t.fail(`completion ${i}`); break; }
  }
  t.equal(p.a.room('send'), ROOM, 'all taken: all free');
  t.equal(p.b.room('receive'), ROOM);
});

t.test('one entry at a time through three wraps of every ring: the NIC runs between posts and never finds a CQ ' +
  'full', async (t) => {
  // The driver tells the NIC its CQ consumer lazily; here the NIC writes every CQE as soon as
  // its entry is posted, so a consumer told too late shows as a CQ overflow (a failed entry).
  const p = openPair();
  t.teardown(() => p.nic.close());
  const bad: string[] = [];
  for (let i = 0; i < 3 * 4096 + 3 && bad.length === 0; i++) {
    const n = i % 97;
    p.b.receive(p.rb, 0, 128);
    p.a.send(p.ra, 0, n);
    const s = p.a.wait('send', 5e6);
    const r = p.b.wait('receive', 5e6);
    if (s?.ok !== true || s.value !== n || r?.ok !== true || r.value !== n)
      bad.push(`entry ${i}: send ${JSON.stringify(s)}, receive ${JSON.stringify(r)}`);
    if (p.a.room('send') !== ROOM || p.b.room('receive') !== ROOM)
      bad.push(`entry ${i}: rooms ${p.a.room('send')} / ${p.b.room('receive')}`);
  }
  t.same(bad, [], '12291 sends and receives, each completed before the next was posted');
  t.equal(engineCounters(p.nic)['cqOverflows'], 0, 'no CQ overflow');
});

/** ra holds the read source pattern (64 KiB), then the read destination slots. */
const SOURCE = 1 << 16;
/** A slot per ring index (a ring holds up to 4095 entries not yet taken): receives land in rb's, reads in ra's. */
const SLOT = 4096;
const READ_SLOT = 2560;

type SendEntry = { read: boolean; n: number; from: number; slot: number };

/**
 * Many wraparounds of every ring: entries posted in seeded batches (often up to a full ring),
 * completions taken in seeded batches (often down to an empty ring), with the room checked
 * against a model after every post and every take, and every completion checked to be the
 * next entry's: a send's length, a read's length and bytes, a receive's message length and bytes.
 * Path MTU 1024 so messages of up to 2500 bytes take 1 to 3 packets.
 */
class Wraparounds {
  private readonly rnd: () => number;
  private readonly rc: Region;
  /** Expected completions of the send ring, in entry order. */
  readonly sends: SendEntry[] = [];
  /** The messages sent, in order: what each receive takes. */
  private readonly messages: { n: number; from: number }[] = [];
  /** Entries of the send ring taken. */
  private sendHead = 0;
  recvPosted = 0;
  private recvTaken = 0;
  private messagesPosted = 0;
  sendFull = 0;
  recvFull = 0;
  sendEmpty = 0;
  recvEmpty = 0;
  readonly bad: string[] = [];

  constructor(private readonly p: QpPair, seed: number) {
    this.rnd = seeded(seed);
    this.rc = must(Region.alloc(p.nic, 1 << 16), 'read source region');
    fillPattern(this.rc.bytes, 0, this.rc.length, seed ^ 0x5555);
    fillPattern(p.ra.bytes, 0, SOURCE, seed);
  }

  private check(what: string): void {
    const { a, b } = this.p;
    const sr = ROOM - (this.sends.length - this.sendHead);
    const rr = ROOM - (this.recvPosted - this.recvTaken);
    if (a.room('send') !== sr) this.bad.push(`${what}: send room ${a.room('send')}, want ${sr}`);
    if (b.room('receive') !== rr) this.bad.push(`${what}: receive room ${b.room('receive')}, want ${rr}`);
  }

  private length(): number {
    return this.rnd() % 16 === 0 ? this.rnd() % 2501 : this.rnd() % 200;
  }

  /** Every fourth round fills both rings; the others post a seeded share (all of it a third of the time). */
  private batch(room: number, round: number): number {
    return room === 0 ? 0 : round % 4 === 1 || this.rnd() % 3 === 0 ? room : 1 + (this.rnd() % room);
  }

  /** Posts a send, or a read when asked or when no receive waits for another message. */
  private postSendRing(read: boolean): void {
    const { a, ra } = this.p;
    const n = this.length();
    const from = this.rnd() % (SOURCE - n + 1);
    const slot = this.sends.length % 4096;
    if (read || this.messagesPosted === this.recvPosted) {
      a.read(this.rc, from, ra, SOURCE + slot * READ_SLOT, n);
      this.sends.push({ read: true, n, from, slot });
    } else {
      a.send(ra, from, n);
      this.sends.push({ read: false, n, from, slot });
      this.messages.push({ n, from });
      this.messagesPosted++;
    }
  }

  /** Takes the next send-ring completion: it must be the oldest entry's. */
  private takeSend(): boolean {
    const { a, ra } = this.p;
    const e = this.sends[this.sendHead]!;
    const r = a.wait('send', 10e6);
    if (!r?.ok || r.value !== e.n) {
      this.bad.push(`send entry ${this.sendHead} (${e.read ? 'read' : 'send'} of ${e.n}): ${JSON.stringify(r)}`);
      return false;
    }
    if (e.read) {
      const d = firstDifference(ra.bytes, SOURCE + e.slot * READ_SLOT, this.rc.bytes, e.from, e.n);
      if (d >= 0) this.bad.push(`read entry ${this.sendHead}: byte ${d} differs`);
    }
    this.sendHead++;
    this.check(`send entry ${this.sendHead - 1} taken`);
    return true;
  }

  /** Takes the next receive completion: the oldest receive's, holding the next message. */
  private takeReceive(): boolean {
    const { b, ra, rb } = this.p;
    const m = this.messages[this.recvTaken]!;
    const r = b.wait('receive', 10e6);
    if (!r?.ok || r.value !== m.n) {
      this.bad.push(`receive entry ${this.recvTaken} (message of ${m.n}): ${JSON.stringify(r)}`);
      return false;
    }
    const d = firstDifference(rb.bytes, (this.recvTaken % 4096) * SLOT, ra.bytes, m.from, m.n);
    if (d >= 0) this.bad.push(`receive entry ${this.recvTaken}: byte ${d} differs`);
    this.recvTaken++;
    this.check(`receive entry ${this.recvTaken - 1} taken`);
    return true;
  }

  /** One round: receives, then sends (each ring perhaps to full); then a drain or a seeded share taken. */
  round(round: number): void {
    const { a, b, ra, rb } = this.p;
    // Receives first (a send is posted only when a receive waits for it, so no send waits on RNR).
    for (let k = this.batch(b.room('receive'), round); k > 0; k--) {
      b.receive(rb, (this.recvPosted % 4096) * SLOT, SLOT);
      this.recvPosted++;
    }
    if (b.room('receive') === 0) {
      this.recvFull++;
      try { b.receive(rb, 0, 1); this.bad.push('receive at room 0 did not throw'); } catch { /* as the spec says */ }
    }
    this.check(`round ${round} after receives`);
    for (let k = this.batch(a.room('send'), round); k > 0; k--) this.postSendRing(this.rnd() % 5 === 0);
    if (a.room('send') === 0) {
      this.sendFull++;
      try { a.send(ra, 0, 1); this.bad.push('send at room 0 did not throw'); } catch { /* as the spec says */ }
    }
    this.check(`round ${round} after sends`);
    if (round % 4 === 3) {
      this.drain();
      return;
    }
    // Otherwise take a seeded share of what is due, in entry order.
    const takeSends = this.rnd() % (this.sends.length - this.sendHead + 1);
    for (let k = 0; k < takeSends && this.takeSend(); k++);
    const takeReceives = this.rnd() % (Math.min(this.messagesPosted, this.recvPosted) - this.recvTaken + 1);
    for (let k = 0; k < takeReceives && this.takeReceive(); k++);
  }

  /** Every fourth round drains: a message for every receive, then every completion of both rings. */
  private drain(): void {
    const { bad } = this;
    while (bad.length === 0 && (this.recvTaken < this.recvPosted || this.sendHead < this.sends.length)) {
      while (this.messagesPosted < this.recvPosted && this.p.a.room('send') > 0) this.postSendRing(false);
      while (this.sendHead < this.sends.length && this.takeSend());
      while (this.recvTaken < this.messagesPosted && this.takeReceive());
    }
    if (bad.length === 0) { this.sendEmpty++; this.recvEmpty++; }
  }
}

function wraparounds(t: Test, p: QpPair, entries: number, seed: number): void {
  const w = new Wraparounds(p, seed);
  for (let round = 0; (w.sends.length < entries || w.recvPosted < entries) && w.bad.length < 10; round++) {
    w.round(round);
  }
  t.same(w.bad.slice(0, 10), [], 'every completion in entry order with its bytes; room as counted');
  t.ok(w.sends.length >= entries,
    `${w.sends.length} send-ring entries: ${Math.floor(w.sends.length / 4096)} wraparounds of the SQ and the send CQ`);
  t.ok(w.recvPosted >= entries,
    `${w.recvPosted} receive-ring entries: ${Math.floor(w.recvPosted / 4096)} wraparounds of the RQ and the ` +
    'receive CQ');
  t.ok(w.sendFull > 0 && w.recvFull > 0, `full rings met: send ${w.sendFull} times, receive ${w.recvFull} times`);
  t.ok(w.sendEmpty > 0 && w.recvEmpty > 0, `empty rings met: send ${w.sendEmpty} times, receive ${w.recvEmpty} times`);
  t.equal(p.a.failure, undefined, 'no failure');
}

t.test('room accounting and completion order through many wraparounds, stepped model', async (t) => {
  const seed = testSeed();
  t.comment(`seed ${seed}`);
  const p = openPair({ stepped: true }, 16 << 20, 1024);
  t.teardown(() => p.nic.close());
  wraparounds(t, p, 6 * 4096, seed);
});

t.test('room accounting and completion order through many wraparounds, model in a worker thread', async (t) => {
  const seed = testSeed();
  t.comment(`seed ${seed}`);
  const p = openPair({ stepped: false }, 16 << 20, 1024);
  t.teardown(() => p.nic.close());
  wraparounds(t, p, 6 * 4096, seed);
});
