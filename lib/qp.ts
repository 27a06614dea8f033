/**
 * Reliable-connected queue pairs: the spec's Rig_bnxt.Qp. Misuse throws InvalidArgument
 * before anything changes; firmware refusals and failed completions are Results.
 */
import { ok, err, type Result } from './result.ts';
import { invalid } from './errors.ts';
import { Nic, nicInternals, type NicInternals } from './nic.ts';
import { isRegion, type Region } from './region.ts';
import { checkEndpoint, type Endpoint } from './endpoint.ts';
import { BnxtQp, Side, POLL_NONE, POLL_ERROR } from './bnxt/queue-pair.ts';
import { waitForCompletion, waitForCompletionAsync } from './bnxt/completion-wait.ts';
import { isIbMtu, pathMtuFor, MAX_MESSAGE_BYTES } from '../firmware-hwrm/roce/ib-transport.ts';

/** The largest path MTU an Ethernet MTU carries (1500 gives 1024): the rule the NIC's firmware applies too. */
export { pathMtuFor };

export type QpSide = 'send' | 'receive';

export interface ConnectOptions {
  /** Path MTU in bytes (256, 512, 1024, 2048 or 4096); default: 4096, or what the NIC's MTU allows. */
  readonly pathMtu?: number;
}

let nextHandle = 1;

/** MAX_MESSAGE_BYTES as a literal: an imported binding is a cell the hot path would load and check each call. */
const MAX_BYTES = 2147483648;
if (MAX_BYTES !== MAX_MESSAGE_BYTES) throw new Error('qp: MAX_BYTES is not MAX_MESSAGE_BYTES');

/** The driver's queue pair under each public one. */
const driverQps = new WeakMap<Qp, BnxtQp>();

/** @internal The driver's queue pair under `qp` (its CQs and rings), for tests and benchmarks. */
export function driverQpOf(qp: Qp): BnxtQp {
  return driverQps.get(qp) ?? invalid('not a queue pair');
}

function sideOf(side: QpSide): Side {
  if (side === 'send') return Side.Send;
  if (side === 'receive') return Side.Receive;
  return invalid(`side must be "send" or "receive", not ${String(side)}`);
}

export class Qp {
  private readonly driverQp: BnxtQp;
  private readonly owner: NicInternals;

  private constructor(readonly nic: Nic, owner: NicInternals, driverQp: BnxtQp) {
    this.nic = nic;
    this.owner = owner;
    this.driverQp = driverQp;
    driverQps.set(this, driverQp);
  }

  /** An unconnected queue pair of `nic`, whose sends start at a random PSN. */
  static make(nic: Nic): Result<Qp> {
    if (!(nic instanceof Nic)) invalid('Qp.make: not a NIC');
    const owner = nicInternals(nic);
    const made = BnxtQp.make(owner.func, owner.roce, nextHandle++);
    if (!made.ok) return made;
    const qp = new Qp(nic, owner, made.value);
    owner.children.add(qp);
    owner.qps.add(made.value.qpn);
    return ok(qp);
  }

  /** What a peer needs to connect to this queue pair. */
  get endpoint(): Endpoint {
    return {
      qp: this.driverQp.qpn, psn: this.driverQp.psn, gid: this.owner.roce.gid.slice(),
      mac: this.owner.func.info.mac.slice(),
    };
  }

  /** The QP number. */
  get number(): number {
    return this.driverQp.qpn;
  }

  get connected(): boolean {
    return this.driverQp.connected;
  }

  /** The failure's message once the queue pair failed, else undefined. */
  get failure(): string | undefined {
    return this.driverQp.failure;
  }

  /**
   * Connects to the peer `e` and makes the queue pair ready to send. Throws InvalidArgument
   * if it is connected (or destroyed), or e's gid is not 16 bytes or its mac not 6.
   */
  connect(e: Endpoint, options: ConnectOptions = {}): Result<void> {
    if (this.driverQp.destroyed) invalid('Qp.connect: the queue pair is destroyed');
    if (this.driverQp.connected) invalid('Qp.connect: the queue pair is connected');
    checkEndpoint('Qp.connect', e);
    const nicMtu = pathMtuFor(this.owner.func.info.mtu);
    const pathMtu = options.pathMtu ?? nicMtu;
    if (!isIbMtu(pathMtu)) invalid(`Qp.connect: path MTU ${pathMtu} is not 256, 512, 1024, 2048 or 4096`);
    // Reads are served only for a peer on this NIC (the spec: then qp serves its peer's reads).
    const sameNic = sameBytes(e.gid, this.owner.roce.gid) && sameBytes(e.mac, this.owner.func.info.mac) &&
      this.owner.qps.has(e.qp);
    const r = this.driverQp.connect({
      destQp: e.qp, destPsn: e.psn, destGid: e.gid.slice(), destMac: e.mac.slice(), pathMtu: Math.min(pathMtu, nicMtu),
      remoteRead: sameNic,
    });
    if (!r.ok) return err(`Qp.connect: ${r.error}`);
    return ok();
  }

  private checkRegion(what: string, r: Region, at: number, n: number): void {
    if (this.regionHolds(r, at, n) !== true) this.refuseRegion(what, r, at, n);
  }

  /**
   * Whether r is a live Region of this NIC whose bytes at..at + n lie in it (n <= 2^31): every
   * post's one test of its region (send and receive write it out: their comment says why). The
   * messages are built apart (refuseRegion), so that the posts stay small enough for V8 to
   * inline with the ring work they call. (deregistered is a boolean: `!== true` is one compare
   * where `!` tests for every falsy value.)
   */
  private regionHolds(r: Region, at: number, n: number): boolean {
    return (r === this.lastRegion || this.ownRegion(r)) && r.deregistered !== true && Number.isInteger(n) && n >= 0 &&
      n <= MAX_BYTES && Number.isInteger(at) && at >= 0 && at + n <= r.length;
  }

  /**
   * The region this queue pair last found to be a Region of its NIC. Both facts last as long as
   * the object (Region.alloc made it, and a Region is frozen), so the next post from the same
   * region asks neither again: isRegion is a WeakSet lookup, 15-25 ns of a 100 ns post here.
   */
  private lastRegion: unknown = undefined;

  /** isRegion(r) and of this NIC; remembered as lastRegion. */
  private ownRegion(r: Region): boolean {
    if (!isRegion(r) || r.nic !== this.nic) return false;
    this.lastRegion = r;
    return true;
  }

  /** Throws the InvalidArgument of the first check regionHolds found failing. */
  private refuseRegion(what: string, r: Region, at: number, n: number): never {
    if (!isRegion(r)) invalid(`${what}: not a region`);
    if (r.nic !== this.nic) invalid(`${what}: the region belongs to another NIC`);
    if (r.deregistered) invalid(`${what}: the region is deregistered`);
    if (!Number.isInteger(n) || n < 0) invalid(`${what}: length ${n} is not a natural number`);
    if (n > MAX_MESSAGE_BYTES) invalid(`${what}: length ${n} is over 2^31`);
    invalid(`${what}: bytes ${at}..${at + n} do not lie in the region (${r.length} bytes)`);
  }

  /**
   * Posts the send of the n bytes at offset at of r to the peer. The region's test is
   * regionHolds's, written out here (and in receive), a copy kept for V8 (test/tidy.test.ts
   * PERF_FORKS): V8 counts the bytecode of every function it inlines against one budget per
   * optimized function (920 bytes), and a program's loop of posts and polls inlines this whole
   * post; with regionHolds called here the budget ran out earlier in that loop, and a send cost
   * ~1 ns more and a receive ~2 ns (bench/qp-post-poll.ts, 7 interleaved runs each). A function's
   * own bytecode does not count against its budget.
   */
  send(r: Region, at: number, n: number): void {
    const q = this.driverQp;
    if (q.connected !== true) invalid('Qp.send: the queue pair is not connected');
    if ((r !== this.lastRegion && !this.ownRegion(r)) || r.deregistered === true || !Number.isInteger(n) || n < 0 ||
      n > MAX_BYTES || !Number.isInteger(at) || at < 0 || at + n > r.length) this.refuseRegion('Qp.send', r, at, n);
    if (q.sqFull() === true) invalid('Qp.send: the send ring is full (room 0)');
    q.postSend(r, at, n);
  }

  /** Posts the read of the n bytes at offset i of s into offset at of r, served by the peer. */
  read(s: Region, i: number, r: Region, at: number, n: number): void {
    if (this.driverQp.connected !== true) invalid('Qp.read: the queue pair is not connected');
    this.checkRegion('Qp.read (destination)', r, at, n);
    this.checkRegion('Qp.read (source)', s, i, n);
    if (!this.owner.qps.has(this.driverQp.peerQpn) || !this.driverQp.remoteRead) {
      invalid('Qp.read: the peer is not a queue pair of this NIC');
    }
    if (this.driverQp.room(Side.Send) === 0) invalid('Qp.read: the send ring is full (room 0)');
    this.driverQp.postRead(r.key, r.vaLo, r.vaHi, at, n, s.key, s.vaLo, s.vaHi, i);
  }

  /** Posts the receive of up to n bytes at offset at of r. */
  receive(r: Region, at: number, n: number): void {
    const q = this.driverQp;
    if (q.connected !== true) invalid('Qp.receive: the queue pair is not connected');
    // regionHolds's test, written out as in send (a copy: test/tidy.test.ts PERF_FORKS).
    if ((r !== this.lastRegion && !this.ownRegion(r)) || r.deregistered === true || !Number.isInteger(n) || n < 0 ||
      n > MAX_BYTES || !Number.isInteger(at) || at < 0 || at + n > r.length) this.refuseRegion('Qp.receive', r, at, n);
    if (q.rqFull() === true) invalid('Qp.receive: the receive ring is full (room 0)');
    q.postReceive(r, at, n);
  }

  /**
   * How many more entries `side` takes (4095 minus those whose completion was not taken); 0
   * once the queue pair is destroyed (its rings are gone).
   */
  room(side: QpSide): number {
    const s = sideOf(side);
    return this.driverQp.destroyed ? 0 : this.driverQp.room(s);
  }

  /**
   * The completion of the oldest due entry of `side`: Ok(bytes), Error(message), or
   * undefined if it has none yet or nothing is due. Sends the firmware no request.
   */
  poll(side: QpSide): Result<number> | undefined {
    const n = this.pollSide(sideOf(side));
    if (n === POLL_NONE) return undefined;
    if (n === POLL_ERROR) return { ok: false, error: this.driverQp.lastError };
    return { ok: true, value: n };
  }

  /**
   * Allocation-free poll for hot loops: the bytes moved (>= 0), -1 for no completion yet,
   * -2 for a failed entry (its message is `lastError`).
   */
  pollBytes(side: QpSide): number {
    return this.pollSide(side === 'send' ? Side.Send : Side.Receive);
  }

  /**
   * One call of the driver's poll in here, the second behind pollAgain: V8 inlines each call
   * site of BnxtQp.poll with both rings' readers, and with two sites the inlining budget of
   * one optimized function (920 bytes of bytecode) ran out in some processes, where the CQE's
   * reads then ran as calls (perf: a poll of 8 or 11 ns by the process).
   */
  private pollSide(s: Side): number {
    const n = this.driverQp.poll(s);
    return n !== POLL_NONE ? n : this.pollAgain(s);
  }

  /**
   * Nothing yet: let a device that runs in this thread (a software NIC inline or stepped) take
   * its doorbells and timers, so a program that only polls sees its completions come.
   */
  private pollAgain(s: Side): number {
    this.owner.device.clock.relax();
    return this.driverQp.poll(s);
  }

  get lastError(): string {
    return this.driverQp.lastError;
  }

  /**
   * poll once the oldest due entry of `side` has a completion, waiting at most `us`
   * microseconds (undefined at the bound). Throws if us < 0 or no entry is due.
   */
  wait(side: QpSide, us: number): Result<number> | undefined {
    const n = this.waitBytes(side, us);
    if (n === POLL_NONE) return undefined;
    if (n === POLL_ERROR) return { ok: false, error: this.driverQp.lastError };
    return { ok: true, value: n };
  }

  /** Allocation-free wait: as pollBytes, with -1 at the bound. */
  waitBytes(side: QpSide, us: number): number {
    const s = sideOf(side);
    if (typeof us !== 'number' || Number.isNaN(us) || us < 0) invalid(`Qp.wait: us ${us} is negative or not a number`);
    if (this.driverQp.due(s) === 0) invalid(`Qp.wait: no entry of the ${side} ring is due`);
    return waitForCompletion(this.driverQp, s, us, this.owner.device.clock);
  }

  /**
   * wait for Node programs: the same meaning and the same throws (us < 0, nothing due, at call
   * time), but the event loop runs while it waits (timers fire, sockets are read). It spins a
   * little first, as wait does, then alternates a short sleep (that a device may cut short)
   * with a turn of the event loop. Resolves undefined at the bound, the entry still due.
   */
  waitAsync(side: QpSide, us: number): Promise<Result<number> | undefined> {
    const s = sideOf(side);
    if (typeof us !== 'number' || Number.isNaN(us) || us < 0) {
      invalid(`Qp.waitAsync: us ${us} is negative or not a number`);
    }
    if (this.driverQp.due(s) === 0) invalid(`Qp.waitAsync: no entry of the ${side} ring is due`);
    return waitForCompletionAsync(this.driverQp, s, us, this.owner.device.clock)
      .then((n) => (n === POLL_NONE ? undefined : this.completion(n)));
  }

  private completion(n: number): Result<number> {
    return n === POLL_ERROR ? { ok: false, error: this.driverQp.lastError } : { ok: true, value: n };
  }

  /**
   * Destroys the queue pair and frees its rings. Error if the firmware refuses, and for every
   * call after one that did not finish; the queue pair then counts as destroyed.
   */
  destroy(): Result<void> {
    if (this.driverQp.destroyBroken !== undefined) return err(`Qp.destroy: ${this.driverQp.destroyBroken}`);
    if (this.driverQp.destroyed) return err('Qp.destroy: the queue pair is already destroyed');
    this.owner.children.delete(this);
    this.owner.qps.delete(this.driverQp.qpn);
    return this.driverQp.destroy();
  }

  /** @internal Called by Nic.close. */
  closeWithNic(): void {
    if (!this.driverQp.destroyed) this.destroy();
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

