/**
 * Reads the guest's serial console line by line into what the harness waits on and reports:
 * readiness, each step's output and exit status, rxe counter snapshots, and failures. The
 * marker protocol is guest-init.sh's (see its header). Lines are fed as they arrive; kernel
 * messages and anything else unmarked are kept only in `otherLines`.
 */

export interface StepRecord {
  readonly id: string;
  /** RXE-STEP-WAIT seen: the guest side listens, the host side may start. */
  waiting: boolean;
  /** Exit status from RXE-STEP-END, or null while the step runs. */
  status: number | null;
  /** RXE-OUT lines of this step (and of `id.client` for loopback steps, under that id). */
  readonly output: string[];
}

export interface PingpongReport {
  readonly iters: number;
  readonly seconds: number;
  readonly usecPerIter: number;
  /** This side's QP number and the peer's, from the "local address" / "remote address" lines. */
  readonly localQpn: number;
  readonly remoteQpn: number;
  readonly localPsn: number;
  readonly remotePsn: number;
}

export class SerialTranscript {
  ready = false;
  gidIndex = -1;
  /** Guest uptime when rxe0 became ready (seconds), from RXE-READY. */
  readyUptimeS = 0;
  jobStarted = false;
  /** RXE-JOB-DONE status, or null. */
  jobStatus: number | null = null;
  readonly failures: string[] = [];
  readonly steps = new Map<string, StepRecord>();
  /** Step ids in the order they began. */
  readonly stepOrder: string[] = [];
  readonly counters = new Map<string, Map<string, number>>();
  readonly otherLines: string[] = [];
  /** The kernel powered off ("reboot: Power down"). */
  poweredOff = false;

  /** `prefix`: the markers' (the rxe guest's RXE-; the bnxt guest's job steps say BNXT-). */
  constructor(private readonly prefix = 'RXE-') {}

  /** Feeds one line (without its newline). */
  push(rawLine: string): void {
    const line = rawLine.replace(/\r/g, '');
    const at = line.indexOf(this.prefix);
    if (at < 0) {
      if (/reboot: Power down/.test(line)) this.poweredOff = true;
      if (line.length > 0) this.otherLines.push(line);
      return;
    }
    // A kernel message may have been printed on the same console line before the marker.
    const marker = line.slice(at);
    const space = marker.indexOf(' ');
    // Markers are matched by their RXE- names whatever the prefix.
    const word = `RXE-${(space < 0 ? marker : marker.slice(0, space)).slice(this.prefix.length)}`;
    const rest = space < 0 ? '' : marker.slice(space + 1);
    switch (word) {
      case 'RXE-READY': {
        this.ready = true;
        this.gidIndex = numberField(rest, 'gid_index') ?? -1;
        this.readyUptimeS = Number(/uptime=([0-9.]+)/.exec(rest)?.[1] ?? 0);
        break;
      }
      case 'RXE-FAIL':
        this.failures.push(rest);
        break;
      case 'RXE-JOB-START':
        this.jobStarted = true;
        break;
      case 'RXE-JOB-DONE':
        this.jobStatus = numberField(rest, 'status') ?? -1;
        break;
      case 'RXE-STEP-BEGIN':
        this.step(rest.trim());
        break;
      case 'RXE-STEP-WAIT':
        this.step(rest.trim()).waiting = true;
        break;
      case 'RXE-STEP-END': {
        const [id = ''] = rest.split(' ');
        this.step(id).status = numberField(rest, 'status') ?? -1;
        break;
      }
      case 'RXE-OUT': {
        const idEnd = rest.indexOf(' ');
        const id = idEnd < 0 ? rest : rest.slice(0, idEnd);
        this.step(id).output.push(idEnd < 0 ? '' : rest.slice(idEnd + 1));
        break;
      }
      case 'RXE-COUNTERS-BEGIN':
        this.counters.set(rest.trim(), new Map());
        break;
      case 'RXE-COUNTER': {
        const [label = '', name = '', value = ''] = rest.trim().split(/\s+/);
        let snapshot = this.counters.get(label);
        if (snapshot === undefined) this.counters.set(label, (snapshot = new Map()));
        if (name !== '' && /^[0-9]+$/.test(value)) snapshot.set(name, Number(value));
        break;
      }
      case 'RXE-COUNTERS-END':
        break;
      default:
        this.otherLines.push(line);
    }
  }

  private step(id: string): StepRecord {
    let record = this.steps.get(id);
    if (record === undefined) {
      record = { id, waiting: false, status: null, output: [] };
      this.steps.set(id, record);
      this.stepOrder.push(id);
    }
    return record;
  }
}

function numberField(text: string, name: string): number | null {
  const match = new RegExp(`(?:^|\\s)${name}=(-?[0-9]+)`).exec(text);
  return match === null ? null : Number(match[1]);
}

/**
 * ibv_rc_pingpong's closing report and addresses, from its output lines:
 *   "  local address:  LID 0x0000, QPN 0x000011, PSN 0xaaac2f, GID ::ffff:10.77.0.1"
 *   "  remote address: LID 0x0000, QPN 0x000012, PSN 0xab0b66, GID ::ffff:10.77.0.1"
 *   "100 iters in 0.84 seconds = 8372.19 usec/iter"
 * Returns null when the run did not get as far as its report.
 */
/** The result row perftest (or rig-bnxt perf) printed: its size, its iterations, and the figures. */
export interface PerftestRow {
  readonly sizeBytes: number;
  readonly iterations: number;
  readonly figures: readonly number[];
}

/**
 * The first result row under perftest's column header (" #bytes #iterations ..."): the latency
 * row (t_min .. 99.9%) or the bandwidth row (BW peak, BW average, MsgRate). null if none.
 */
export function parsePerftestRow(lines: readonly string[]): PerftestRow | null {
  let underHeader = false;
  for (const raw of lines) {
    const line = raw.replace(/\r$/, '');
    if (/#bytes\s+#iterations/.test(line)) { underHeader = true; continue; }
    if (!underHeader) continue;
    // perftest prints "-nan" for a t_stdev its int accumulator overflowed (perftest_parameters.c).
    const m = /^\s*(\d+)\s+(\d+)\s+((?:-?(?:[\d.]+|nan|inf)\s*)+)$/.exec(line);
    if (m !== null)
      return {
        sizeBytes: Number(m[1]), iterations: Number(m[2]),
        figures: m[3]!.trim().split(/\s+/).map((f) => (/nan/.test(f) ? Number.NaN : Number(f))),
      };
  }
  return null;
}

/** One queue pair's address as perftest prints it (" local address: LID 0000 QPN 0x0011 PSN 0x126501"). */
export interface PerftestAddress {
  readonly qpn: number;
  readonly psn: number;
}

/**
 * perftest's address lines, in the order printed: one local line per queue pair, then one
 * remote line per queue pair (send_bw.c prints my_dest[i], then rem_dest[i]); QP i is
 * connected to the peer's QP i.
 */
export function parsePerftestAddresses(
  lines: readonly string[],
): { readonly local: PerftestAddress[]; readonly remote: PerftestAddress[] } {
  const local: PerftestAddress[] = [];
  const remote: PerftestAddress[] = [];
  for (const line of lines) {
    const m = /(local|remote) address: LID (?:0x)?[0-9a-f]+ QPN (0x[0-9a-f]+) PSN (0x[0-9a-f]+)/i.exec(line);
    if (m === null) continue;
    (m[1] === 'local' ? local : remote).push({ qpn: parseInt(m[2]!, 16), psn: parseInt(m[3]!, 16) });
  }
  return { local, remote };
}

export function parsePingpongOutput(lines: readonly string[]): PingpongReport | null {
  let local: [number, number] | null = null;
  let remote: [number, number] | null = null;
  let result: [number, number, number] | null = null;
  for (const line of lines) {
    const address = /(local|remote) address:\s+LID 0x[0-9a-f]+, QPN 0x([0-9a-f]+), PSN 0x([0-9a-f]+)/i.exec(line);
    if (address !== null) {
      const pair: [number, number] = [parseInt(address[2]!, 16), parseInt(address[3]!, 16)];
      if (address[1] === 'local') local = pair; else remote = pair;
      continue;
    }
    const done = /^([0-9]+) iters in ([0-9.]+) seconds = ([0-9.]+) usec\/iter/.exec(line.trim());
    if (done !== null) result = [Number(done[1]), Number(done[2]), Number(done[3])];
  }
  if (local === null || remote === null || result === null) return null;
  return {
    iters: result[0], seconds: result[1], usecPerIter: result[2],
    localQpn: local[0], localPsn: local[1], remoteQpn: remote[0], remotePsn: remote[1],
  };
}

/**
 * rxe's counters that count a retransmission or a refusal on either side (names from
 * drivers/infiniband/sw/rxe/rxe_hw_counters.c). A clean exchange leaves every one at 0:
 *   duplicate_request      responder saw a PSN again (the peer retransmitted)
 *   out_of_seq_request     responder saw a PSN ahead of the expected one (lost packet) and NAKed
 *   rcvd_seq_err           requester received a PSN-sequence-error NAK
 *   completer_retry_err    requester retransmitted (timeout or NAK)
 *   retry_exceeded_err     requester gave up after retry_cnt
 *   rcvd_rnr_err / send_rnr_err / retry_rnr_exceeded_err   receiver-not-ready NAKs
 *   send_err / link_downed
 */
export const RETRANSMISSION_COUNTERS = [
  'duplicate_request', 'out_of_seq_request', 'rcvd_seq_err', 'completer_retry_err', 'retry_exceeded_err',
  'rcvd_rnr_err', 'send_rnr_err', 'retry_rnr_exceeded_err', 'send_err', 'link_downed',
] as const;

/** The nonzero retransmission/error counters of a snapshot (empty when clean). */
export function retransmissionCounts(snapshot: ReadonlyMap<string, number>): Record<string, number> {
  const found: Record<string, number> = {};
  for (const name of RETRANSMISSION_COUNTERS) {
    const value = snapshot.get(name) ?? 0;
    if (value !== 0) found[name] = value;
  }
  return found;
}
