/**
 * The soak (issue 5): messages of mixed sizes between two software NICs cabled to each other
 * and stepped on one virtual clock, under the fault injector (drop, duplicate, reorder and
 * corrupt frames, every choice from the models' seeded PRNGs). Sends cross between the NICs;
 * reads run between queue pairs of one NIC (the spec serves reads only there).
 *
 * Every message is checked: a send's payload carries its sequence number and bytes taken from
 * a seeded pattern at a seeded offset, so the receive that takes it shows a lost, duplicated,
 * reordered or corrupted message; a read's destination must equal the pattern it was read
 * from. Completions must come in the order of their entries with the bytes of their entry,
 * and every ring's room must equal 4095 minus the entries whose completion was not taken.
 * The run is reproducible by seed: its digest (a hash of every completion, the engines'
 * counters and the virtual time) is the same for the same seed and options.
 *
 * Used by test/soak.test.ts (a short run, twice, in npm test) and scripts/soak.ts (the full run).
 */
import { Nic, Qp, Region } from '../../lib/index.ts';
import { nicInternals } from '../../lib/nic.ts';
import type { EmuDevice } from '../../drivers/emu/host/device.ts';
import type { FaultSpec } from '../../drivers/emu/model/cable/faults.ts';
import { seeded } from './seeded.ts';
import { connectedPair, must } from './pairs.ts';

export interface SoakOptions {
  readonly seed: number;
  /** Messages (sends and reads) to complete. */
  readonly messages: number;
  /** Faults on every frame each NIC sends. Default: 1 % drop, 1 % duplicate, 1 % reorder, 0.1 % corrupt. */
  readonly faults?: FaultSpec;
  /** Queue pairs between the two NICs (each sends both ways). Default 4. */
  readonly crossPairs?: number;
  /** Queue pairs within each NIC that read from each other. Default 2 per NIC. */
  readonly localPairs?: number;
  /** Entries each stream keeps outstanding. Default 48. */
  readonly window?: number;
  /** Share of messages that are reads, in [0, 1]. Default 0.3. */
  readonly readShare?: number;
  /**
   * Test of the checks themselves: the first receive from this number on (counted over every
   * send stream) that took bytes gets its last byte flipped before it is checked. Default: none.
   */
  readonly tamperWithReceive?: number;
  /** Called about every `progressEvery` messages with a line of progress. */
  readonly progress?: (line: string) => void;
  readonly progressEvery?: number;
}

export interface SoakResult {
  readonly seed: number;
  readonly messages: number;
  readonly sends: number;
  readonly reads: number;
  readonly bytes: number;
  readonly virtualNs: number;
  readonly wallMs: number;
  /** Hash of every completion, the counters and the virtual time (hex). */
  readonly digest: string;
  /** Everything that broke a rule (empty when the run is good). */
  readonly problems: readonly string[];
  readonly counters: { readonly a: Record<string, number>; readonly b: Record<string, number> };
}

export const DEFAULT_FAULTS: FaultSpec = { drop: 0.01, duplicate: 0.01, reorder: 0.01, corrupt: 0.001 };

/** Largest message (bytes); sizes are drawn below it, mostly small. */
const MAX_SIZE = 32 * 1024;
const PATTERN_BYTES = 1 << 20;
const ROOM = 4095;
const HEADER = 4;
/** Problems kept in full; the rest are counted. */
const MAX_PROBLEMS = 20;

/** mulberry32 from the tests' seeded helper: every choice comes from the printed seed. */
const prng = seeded;

/** 70 % up to 128 bytes (0 included), 25 % up to 4096, 5 % up to MAX_SIZE. */
function drawSize(r: () => number): number {
  const k = r() % 100;
  if (k < 70) return r() % 129;
  if (k < 95) return 129 + (r() % (4096 - 128));
  return 4097 + (r() % (MAX_SIZE - 4096));
}

/** One direction of traffic on one queue pair: sends to its peer, or reads from its peer's region. */
class Stream {
  readonly sizes: Int32Array;
  readonly offsets: Int32Array;
  posted = 0;
  /** Completions taken on the posting side (sends or reads). */
  done = 0;
  /** Receives taken on the peer (sends only). */
  received = 0;
  readonly random: () => number;

  constructor(
    readonly id: number,
    readonly kind: 'send' | 'read',
    readonly from: Qp,
    readonly to: Qp,
    /** Where sends are built / reads land (slots of MAX_SIZE). */
    readonly out: Region,
    /** Where sends arrive (slots of MAX_SIZE), or the region reads are served from (the pattern). */
    readonly into: Region,
    readonly window: number,
    seed: number,
  ) {
    this.sizes = new Int32Array(window);
    this.offsets = new Int32Array(window);
    this.random = prng((seed ^ Math.imul(id + 1, 0x9e3779b1)) >>> 0);
  }
}

/** A digest: FNV-1a over 32-bit words, as a number. */
class Digest {
  h = 0x811c9dc5;
  add(v: number): void {
    let x = v >>> 0;
    for (let i = 0; i < 4; i++) {
      this.h = Math.imul(this.h ^ (x & 0xff), 0x01000193) >>> 0;
      x >>>= 8;
    }
  }
  hex(): string {
    return this.h.toString(16).padStart(8, '0');
  }
}

let runs = 0;


function device(nic: Nic): EmuDevice {
  return nicInternals(nic).device as EmuDevice;
}


/** The pattern every payload is taken from, seeded. */
function seededPattern(seed: number): Uint8Array {
  const pattern = new Uint8Array(PATTERN_BYTES + MAX_SIZE);
  const pr = prng(seed ^ 0xa5a5a5a5);
  for (let i = 0; i < pattern.length; i += 4) {
    const v = pr();
    pattern[i] = v; pattern[i + 1] = v >>> 8; pattern[i + 2] = v >>> 16; pattern[i + 3] = v >>> 24;
  }
  return pattern;
}

export function runSoak(options: SoakOptions): SoakResult {
  const seed = options.seed >>> 0;
  const pair = `soak-${process.pid}-${runs++}`;
  const open = (s: number) => {
    const n = Nic.open('emu', { stepped: true, seed: s, pair, firmwareTimeoutMs: 1000 });
    if (!n.ok) throw new Error(`Nic.open: ${n.error}`);
    return n.value;
  };
  const nicA = open(seed);
  const nicB = open((seed + 0x51ed) >>> 0);
  const started = performance.now();
  try {
    return new Soak(options, seed, nicA, nicB, started).run();
  } finally {
    nicA.close();
    nicB.close();
  }
}

/** One soak run: its streams, what each ring has due, the checks, the digest and the totals. */
class Soak {
  private readonly problems: string[] = [];
  private problemCount = 0;
  private readonly pattern: Uint8Array;
  private readonly streams: Stream[] = [];
  private readonly sendStreams: Stream[];
  private readonly readStreams: Stream[];
  private readonly readShare: number;
  /** Which stream each message goes to, drawn from one seeded sequence. */
  private readonly choose: () => number;
  /** Outstanding entries per queue pair and ring (room checks), by queue pair. */
  private readonly sendDue = new Map<Qp, number>();
  private readonly recvDue = new Map<Qp, number>();
  private readonly digest = new Digest();
  private completed = 0;
  private sends = 0;
  private reads = 0;
  private bytes = 0;
  private receivedAll = 0;
  private readonly tamper: number;
  private tampered = false;

  constructor(private readonly options: SoakOptions, private readonly seed: number, private readonly nicA: Nic,
    private readonly nicB: Nic, private readonly started: number) {
    const window = options.window ?? 48;
    this.readShare = options.readShare ?? 0.3;
    this.tamper = options.tamperWithReceive ?? -1;
    this.pattern = seededPattern(seed);
    this.makeStreams(window, options.crossPairs ?? 4, options.localPairs ?? 2);
    this.sendStreams = this.streams.filter((s) => s.kind === 'send');
    this.readStreams = this.streams.filter((s) => s.kind === 'read');
    for (const nic of [nicA, nicB]) device(nic).emu.engine.setFaults('tx', options.faults ?? DEFAULT_FAULTS);
    this.choose = prng(seed ^ 0x3c3c3c3c);
    for (const s of this.streams) {
      this.sendDue.set(s.from, 0);
      this.recvDue.set(s.from, 0);
      this.sendDue.set(s.to, 0);
      this.recvDue.set(s.to, 0);
    }
  }

  private problem(text: string): void {
    this.problemCount++;
    if (this.problems.length < MAX_PROBLEMS) this.problems.push(text);
  }

  /** Send streams both ways on queue pairs between the NICs; read streams between queue pairs of one NIC. */
  private makeStreams(window: number, crossPairs: number, localPairs: number): void {
    const { nicA, nicB, streams, seed } = this;
    const slots = (nic: Nic) => must(Region.alloc(nic, window * MAX_SIZE), 'Region.alloc');
    for (let i = 0; i < crossPairs; i++) {
      const [a, b] = connectedPair(nicA, nicB);
      streams.push(new Stream(streams.length, 'send', a, b, slots(nicA), slots(nicB), window, seed));
      streams.push(new Stream(streams.length, 'send', b, a, slots(nicB), slots(nicA), window, seed));
    }
    for (const nic of [nicA, nicB]) {
      const src = must(Region.alloc(nic, this.pattern.length), 'Region.alloc');
      src.bytes.set(this.pattern);
      for (let i = 0; i < localPairs; i++) {
        const [a, b] = connectedPair(nic, nic);
        streams.push(new Stream(streams.length, 'read', a, b, slots(nic), src, window, seed));
        streams.push(new Stream(streams.length, 'read', b, a, slots(nic), src, window, seed));
      }
    }
  }

  private pick(): Stream {
    const { readStreams, sendStreams, choose } = this;
    const list = readStreams.length > 0 && (sendStreams.length === 0 || choose() / 4294967296 < this.readShare)
      ? readStreams : sendStreams;
    return list[choose() % list.length]!;
  }

  private checkRoom(q: Qp, where: string): void {
    const sd = ROOM - this.sendDue.get(q)!;
    const rd = ROOM - this.recvDue.get(q)!;
    if (q.room('send') !== sd || q.room('receive') !== rd) {
      this.problem(`${where}: room ${q.room('send')}/${q.room('receive')}, expected ${sd}/${rd}`);
    }
  }

  /** Posts the stream's next message if its window allows: a send (and its receive) or a read. */
  private post(s: Stream): boolean {
    if (s.posted - s.done >= s.window || (s.kind === 'send' && s.posted - s.received >= s.window)) return false;
    const { pattern } = this;
    const slot = s.posted % s.window;
    const n = drawSize(s.random);
    const off = s.random() % PATTERN_BYTES;
    s.sizes[slot] = n;
    s.offsets[slot] = off;
    const at = slot * MAX_SIZE;
    if (s.kind === 'send') {
      // [sequence number][pattern bytes from off], cut to n bytes.
      const o = s.out.bytes;
      const seq = s.posted;
      const header = n < HEADER ? n : HEADER;
      for (let i = 0; i < header; i++) o[at + i] = seq >>> (8 * i);
      if (n > HEADER) o.set(pattern.subarray(off, off + n - HEADER), at + HEADER);
      s.to.receive(s.into, at, MAX_SIZE);
      this.recvDue.set(s.to, this.recvDue.get(s.to)! + 1);
      s.from.send(s.out, at, n);
    } else {
      // Spoil the destination's ends so a read that moved nothing shows.
      if (n > 0) {
        s.out.bytes[at] = ~pattern[off]!;
        s.out.bytes[at + n - 1] = ~pattern[off + n - 1]!;
      }
      s.from.read(s.into, off, s.out, at, n);
    }
    this.sendDue.set(s.from, this.sendDue.get(s.from)! + 1);
    s.posted++;
    return true;
  }

  /** The posting side: sends and reads complete in order with their entry's bytes (a read's checked). */
  private takePosted(s: Stream): number {
    let took = 0;
    while (s.done < s.posted) {
      const got = s.from.pollBytes('send');
      if (got === -1) break;
      const slot = s.done % s.window;
      const n = s.sizes[slot]!;
      if (got !== n) {
        this.problem(
          `stream ${s.id} (${s.kind}) entry ${s.done}: completion ` +
            `${got < 0 ? `Error ${s.from.lastError}` : `Ok ${got}`}, expected Ok ${n}`,
        );
      }
      if (s.kind === 'read' && got === n && n > 0) {
        const at = slot * MAX_SIZE;
        const off = s.offsets[slot]!;
        if (Buffer.compare(s.out.bytes.subarray(at, at + n), this.pattern.subarray(off, off + n)) !== 0) {
          this.problem(`stream ${s.id} read ${s.done} of ${n} bytes: wrong bytes`);
        }
      }
      this.digest.add(s.id);
      this.digest.add(got);
      this.sendDue.set(s.from, this.sendDue.get(s.from)! - 1);
      s.done++;
      took++;
      this.completed++;
      this.bytes += n;
      if (s.kind === 'send') this.sends++;
      else this.reads++;
    }
    return took;
  }

  /** A send stream's receives: each its message, in order (its sequence number), its bytes intact. */
  private takeReceived(s: Stream): number {
    let took = 0;
    while (s.received < s.posted) {
      const got = s.to.pollBytes('receive');
      if (got === -1) break;
      const slot = s.received % s.window;
      const n = s.sizes[slot]!;
      const at = slot * MAX_SIZE;
      const i = s.into.bytes;
      if (this.tamper >= 0 && this.receivedAll++ >= this.tamper && got > 0 && !this.tampered) {
        i[at + got - 1] ^= 0x01;
        this.tampered = true;
      }
      if (got !== n) {
        this.problem(
          `stream ${s.id} receive ${s.received}: ${got < 0 ? `Error ${s.to.lastError}` : `Ok ${got}`}, expected ` +
            `Ok ${n}`,
        );
      } else {
        this.checkReceived(s, i, at, n, s.offsets[slot]!);
      }
      this.digest.add(s.id | 0x8000);
      this.digest.add(got);
      this.recvDue.set(s.to, this.recvDue.get(s.to)! - 1);
      s.received++;
      took++;
    }
    return took;
  }

  private checkReceived(s: Stream, i: Uint8Array, at: number, n: number, off: number): void {
    const header = n < HEADER ? n : HEADER;
    let seq = 0;
    for (let k = 0; k < header; k++) seq |= i[at + k]! << (8 * k);
    const want = header === HEADER ? s.received >>> 0 : s.received & ((1 << (8 * header)) - 1);
    if (seq >>> 0 !== want >>> 0) {
      this.problem(`stream ${s.id} receive ${s.received}: took message ${seq >>> 0} ` +
        '(lost, duplicated or out of order)');
    }
    if (n > HEADER &&
      Buffer.compare(i.subarray(at + HEADER, at + n), this.pattern.subarray(off, off + n - HEADER)) !== 0) {
      this.problem(`stream ${s.id} receive ${s.received} of ${n} bytes: corrupted`);
    }
  }

  run(): SoakResult {
    const { options, streams, started } = this;
    const clock = device(this.nicA).clock;
    const target = options.messages;
    let posted = 0;
    let nextProgress = options.progressEvery ?? Infinity;
    let idle = 0;
    while (this.completed < target && this.problemCount === 0) {
      // Post as the windows allow, to streams drawn from the seeded sequence.
      let tries = 0;
      while (posted < target && tries < streams.length * 2) {
        if (this.post(this.pick())) {
          posted++;
          tries = 0;
        } else tries++;
      }
      clock.relax();
      let took = 0;
      for (const s of streams) took += this.takePosted(s) + (s.kind === 'send' ? this.takeReceived(s) : 0);
      for (const s of streams) {
        this.checkRoom(s.from, `stream ${s.id} sender`);
        this.checkRoom(s.to, `stream ${s.id} peer`);
      }
      if (took === 0) {
        // Nothing moved now: let virtual time run to the next timer (a retransmission).
        clock.sleep(1000);
        if (++idle > 200_000) {
          this.problem(`no progress for 200000 looks at ${this.completed} of ${target} messages`);
        }
      } else idle = 0;
      if (this.completed >= nextProgress) {
        nextProgress += options.progressEvery!;
        options.progress?.(
          `${this.completed} messages, ${(this.bytes / 1e6).toFixed(0)} MB, ` +
            `${(clock.nowNs() / 1e9).toFixed(2)} s of NIC time, ${((performance.now() - started) / 1000).toFixed(1)} s`,
        );
      }
    }
    return this.finish(clock);
  }

  /** No queue pair failed, no internal error or DMA fault; the digest takes the counters and the NIC time. */
  private finish(clock: EmuDevice['clock']): SoakResult {
    const { digest, problems } = this;
    for (const s of this.streams) {
      if (s.from.failure !== undefined) this.problem(`stream ${s.id}: its queue pair failed: ${s.from.failure}`);
      if (s.to.failure !== undefined) this.problem(`stream ${s.id}: its peer failed: ${s.to.failure}`);
    }
    const ca = device(this.nicA).emu.engine.counters();
    const cb = device(this.nicB).emu.engine.counters();
    for (const [name, c] of [['A', ca], ['B', cb]] as const) {
      if (c['internalErrors'] !== 0) this.problem(`NIC ${name}: ${c['internalErrors']} internal errors in the model`);
      if (c['dmaFaults'] !== 0) this.problem(`NIC ${name}: ${c['dmaFaults']} DMA faults`);
      if (c['qpErrors'] !== 0) this.problem(`NIC ${name}: ${c['qpErrors']} queue pairs failed`);
    }
    for (const c of [ca, cb]) {
      for (const [, value] of Object.entries(c).sort(([x], [y]) => (x < y ? -1 : 1))) digest.add(value);
    }
    digest.add(clock.nowNs() % 4294967296);
    if (this.problemCount > problems.length) problems.push(`... and ${this.problemCount - problems.length} more`);
    return {
      seed: this.seed, messages: this.completed, sends: this.sends, reads: this.reads, bytes: this.bytes,
      virtualNs: clock.nowNs(), wallMs: performance.now() - this.started, digest: digest.hex(), problems,
      counters: { a: ca, b: cb },
    };
  }
}

/** The fault counters of a run, summed over both NICs. */
export function faultTotals(r: SoakResult): Record<string, number> {
  const keys = [
    'faultTxDropped', 'faultDuplicated', 'faultReordered', 'faultCorrupted', 'dropBAD_ICRC', 'retransmitEvents',
    'ackTimeouts', 'duplicateRequests', 'framesSent', 'faultHoldOverflow',
  ];
  const out: Record<string, number> = {};
  for (const k of keys) out[k] = (r.counters.a[k] ?? 0) + (r.counters.b[k] ?? 0);
  return out;
}
