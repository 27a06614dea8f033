// The acquisition ledger (drivers/ledger.ts): giving back is the exact reverse of taking; a
// silent channel gets no more commands and every buffer is held; a refused undo holds them too.
import t from 'tap';
import { Ledger, type Channel } from '../drivers/ledger.ts';
import type { DmaBuffer } from '../drivers/device.ts';
import { ok, err } from '../lib/result.ts';

function buffer(iova: number): DmaBuffer {
  const bytes = new Uint8Array(4096);
  return {
    iova, length: 4096, bytes, u32: new Uint32Array(bytes.buffer), view: new DataView(bytes.buffer), pageBytes: 4096,
  };
}

function holder() {
  const log: string[] = [];
  return {
    log,
    free: (b: DmaBuffer) => { log.push(`free ${b.iova}`); },
    quarantine: (...bs: DmaBuffer[]) => { for (const b of bs) log.push(`hold ${b.iova}`); },
  };
}

class FakeChannel implements Channel {
  stalled: string | undefined;
  constructor(readonly log: string[]) {}
  /** A command that succeeds, is refused, or goes unanswered (the channel then stalls). */
  command(name: string, outcome: 'ok' | 'refused' | 'silent' = 'ok') {
    return () => {
      this.log.push(name);
      if (outcome === 'ok') return ok();
      if (outcome === 'silent') this.stalled = 'the firmware stopped answering (test)';
      return err(`${name} ${outcome}`);
    };
  }
}

t.test('unwinds newest first: undo commands and releases, then the memory is freed', async (t) => {
  const m = holder();
  const ch = new FakeChannel(m.log);
  const ledger = new Ledger(m, [ch]);
  ledger.release('close', () => { m.log.push('close'); return undefined; });
  ledger.take(buffer(1));
  ledger.undo(ch, 'DESTROY 1', ch.command('DESTROY 1'));
  ledger.take(buffer(2));
  ledger.undo(ch, 'DESTROY 2', ch.command('DESTROY 2'));
  t.same(ledger.buffers().map((b) => b.iova), [1, 2]);
  t.same(ledger.unwind(), [], 'nothing failed');
  t.same(m.log, ['DESTROY 2', 'DESTROY 1', 'close', 'free 2', 'free 1'],
    'memory goes back only after every command was confirmed');
  t.equal(ledger.size, 0);
  t.same(ledger.unwind(), [], 'a second unwind has nothing to do');
});

t.test('a silent channel gets no more commands and every buffer is held', async (t) => {
  const m = holder();
  const ch = new FakeChannel(m.log);
  const other = new FakeChannel(m.log);
  const ledger = new Ledger(m, [ch]);
  ledger.take(buffer(1));
  ledger.undo(other, 'RING_FREE', other.command('RING_FREE'));
  ledger.undo(ch, 'DESTROY 1', ch.command('DESTROY 1'));
  ledger.take(buffer(2));
  ledger.undo(ch, 'DESTROY 2', ch.command('DESTROY 2', 'silent'));
  ledger.release('close', () => { m.log.push('close'); return undefined; });
  const failures = ledger.unwind();
  t.same(failures, ['DESTROY 2 silent']);
  t.same(m.log, ['close', 'DESTROY 2', 'RING_FREE', 'hold 2', 'hold 1'],
    'DESTROY 1 is never sent on the silent channel; the other channel\'s command and the release still run');
  t.equal(ledger.silent, 'the firmware stopped answering (test)');
});

t.test('a channel already silent: no command at all, memory held', async (t) => {
  const m = holder();
  const ch = new FakeChannel(m.log);
  const ledger = new Ledger(m, [ch]);
  ledger.take(buffer(1));
  ledger.undo(ch, 'DESTROY', ch.command('DESTROY'));
  ch.stalled = 'silent before';
  t.same(ledger.unwind(), []);
  t.same(m.log, ['hold 1']);
});

t.test('a refused undo: the rest still goes back, but every buffer is held (the object left may name ' +
  'it)', async (t) => {
  const m = holder();
  const ch = new FakeChannel(m.log);
  const ledger = new Ledger(m, [ch]);
  ledger.take(buffer(1));
  ledger.undo(ch, 'DESTROY 1', ch.command('DESTROY 1'));
  ledger.take(buffer(2));
  ledger.undo(ch, 'DESTROY 2', ch.command('DESTROY 2', 'refused'));
  t.same(ledger.unwind(), ['DESTROY 2 refused']);
  t.same(m.log, ['DESTROY 2', 'DESTROY 1', 'hold 2', 'hold 1']);
});

t.test('stopAtRefusal leaves the refused object and what came before it for a later unwind', async (t) => {
  const m = holder();
  const ch = new FakeChannel(m.log);
  const ledger = new Ledger(m, [ch]);
  let refuse = true;
  ledger.take(buffer(1));
  ledger.undo(ch, 'DEREGISTER', () => { m.log.push('DEREGISTER'); return refuse ? err('refused') : ok(); });
  t.same(ledger.unwind({ stopAtRefusal: true }), ['refused']);
  t.same(m.log, ['DEREGISTER'], 'nothing freed or held');
  t.equal(ledger.size, 2, 'the entries stay');
  refuse = false;
  t.same(ledger.unwind({ stopAtRefusal: true }), []);
  t.same(m.log, ['DEREGISTER', 'DEREGISTER', 'free 1'], 'a later unwind finishes it');
});

t.test('abandon holds every buffer and sends nothing', async (t) => {
  const m = holder();
  const ch = new FakeChannel(m.log);
  const ledger = new Ledger(m, [ch]);
  ledger.take(buffer(1));
  ledger.undo(ch, 'DESTROY', ch.command('DESTROY', 'refused'));
  ledger.take(buffer(2));
  t.same(ledger.unwind({ stopAtRefusal: true }), ['DESTROY refused']);
  ledger.abandon();
  t.same(m.log, ['DESTROY', 'hold 1', 'hold 2']);
  t.equal(ledger.size, 0);
});

t.test('an exception holds everything taken and reaches the caller', async (t) => {
  const m = holder();
  const ch = new FakeChannel(m.log);
  const ledger = new Ledger(m, [ch]);
  t.throws(() => ledger.guard(() => {
    ledger.take(buffer(1));
    throw new Error('injected');
  }), /injected/);
  t.same(m.log, ['hold 1'], 'guard: held');
  ledger.take(buffer(2));
  ledger.undo(ch, 'DESTROY', () => { throw new Error('inside the undo'); });
  ledger.take(buffer(3));
  t.throws(() => ledger.unwind(), /inside the undo/);
  t.same(m.log, ['hold 1', 'hold 3', 'hold 2'], 'unwind: what it had collected and what was left, held');
  t.equal(ledger.size, 0);
});

t.test('hold: memory under an untrusted name is held now and not freed by the unwind', async (t) => {
  const m = holder();
  const ledger = new Ledger(m);
  const a = ledger.take(buffer(1));
  ledger.take(buffer(2));
  ledger.hold(a);
  t.same(ledger.unwind(), []);
  t.same(m.log, ['hold 1', 'free 2']);
});

t.test('host releases report their failures with what they were, and all run', async (t) => {
  const ledger = new Ledger();
  const ran: string[] = [];
  ledger.release('close fd 3', () => { ran.push('3'); return 'EBADF'; });
  ledger.release('unmap BAR0', () => { ran.push('bar'); return undefined; });
  t.same(ledger.unwind(), ['close fd 3: EBADF']);
  t.same(ran, ['bar', '3']);
  t.throws(() => ledger.take(buffer(1)), /memory holder/, 'a ledger without a memory holder takes no memory');
});
