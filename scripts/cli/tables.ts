/**
 * perftest's and ibv_rc_pingpong's printed reports, byte for byte where they apply: the formats are
 * those of perftest's src/perftest_parameters.h (RESULT_LINE, RESULT_FMT*, REPORT_FMT*),
 * ctx_print_test_info, ctx_print_pingpong_data (src/perftest_communication.[ch]) and rc_pingpong.c.
 * Every function returns lines without their trailing newline; the caller joins them with "\n".
 * The tabs inside perftest's formats are real tab characters and are kept.
 */
import type { BandwidthStats, LatencyDurationStats, LatencyStats } from './stats.ts';
import { cFixed, hexAlternate, hex, padRight } from './printf.ts';

export type PerfTestName = 'send_lat' | 'send_bw' | 'read_lat' | 'read_bw';

/** RESULT_LINE: 87 dashes, printed above and below every table and around the test information. */
export const RESULT_LINE = '-'.repeat(87);

// ---- Latency -------------------------------------------------------------------------------

/** RESULT_FMT_LAT (it ends with a space). */
export const LATENCY_HEADER =
  ' #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% ' +
    'percentile[usec]   99.9% percentile[usec] ';

/**
 * REPORT_FMT_LAT: " %-7lu %lu          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f
 * \t\t%-7.2f".
 */
export function latencyRow(sizeBytes: number, iterations: number, s: LatencyStats): string {
  return (
    ' ' + padRight(String(sizeBytes), 7) + ' ' + String(iterations) +
    '          ' + f2(s.tMinUs) +
    '        ' + f2(s.tMaxUs) +
    '      ' + f2(s.tTypicalUs) +
    '  \t       ' + f2(s.tAvgUs) +
    '     \t' + f2(s.tStdevUs) +
    '\t\t' + f2(s.t99Us) +
    ' \t\t' + f2(s.t999Us)
  );
}

/** RESULT_FMT_LAT_DUR: the -D form of the latency table. */
export const LATENCY_DURATION_HEADER = ' #bytes        #iterations       t_avg[usec]    tps average';

/** REPORT_FMT_LAT_DUR: " %-7lu       %lu            %-7.2f        %-7.2f". */
export function latencyDurationRow(sizeBytes: number, iterations: number, s: LatencyDurationStats): string {
  return ' ' + padRight(String(sizeBytes), 7) + '       ' + String(iterations) + '            ' + f2(s.tAvgUs) +
    '        ' + f2(s.tpsAverage);
}

// ---- Bandwidth -----------------------------------------------------------------------------

/** RESULT_FMT (perftest labels the columns MiB/sec since 2024; they always divided by 2^20). */
export const BANDWIDTH_HEADER = ' #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]';
/** RESULT_FMT_G: the same with --report_gbits. */
export const BANDWIDTH_HEADER_GBITS =
  ' #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]';

/** REPORT_FMT: " %-7lu    %-10lu       %-7.2lf            %-7.2lf\t\t     %-7.6lf". */
export function bandwidthRow(sizeBytes: number, iterations: number, s: BandwidthStats): string {
  return (
    ' ' + padRight(String(sizeBytes), 7) +
    '    ' + padRight(String(iterations), 10) +
    '       ' + f2(s.bwPeakMiBps) +
    '            ' + f2(s.bwAverageMiBps) +
    '\t\t     ' + padRight(cFixed(s.msgRateMpps, 6), 7)
  );
}

/** The lines a table starts with (RESULT_LINE, then the column header) for a test. */
export function tableHeaderLines(test: PerfTestName, durationMode: boolean): string[] {
  const header = test.endsWith('_lat') ? (durationMode ? LATENCY_DURATION_HEADER : LATENCY_HEADER) : BANDWIDTH_HEADER;
  return [RESULT_LINE, header];
}

// ---- Test information block (ctx_print_test_info) ------------------------------------------

export interface TestInfo {
  readonly test: PerfTestName;
  readonly device: string;
  /** perftest prints TX depth on the client and RX depth on the server (for send tests). */
  readonly machine: 'server' | 'client';
  /** Queue pairs (-q); 1 when not given. */
  readonly qps?: number;
  readonly txDepth: number;
  readonly rxDepth: number;
  /** Bandwidth tests only. */
  readonly cqModeration?: number;
  readonly mtuBytes: number;
  readonly linkType: 'Ethernet' | 'IB';
  readonly gidIndex?: number;
  /** Send tests print "Max inline data", read tests "Outstand reads". */
  readonly maxInlineBytes?: number;
  readonly outstandingReads?: number;
  /** rig-bnxt's own line, local runs only: the unmeasured warm-up before the timed run (run-perf.ts warmUp). */
  readonly warmUp?: string;
}

/** " Send Latency Test" etc.: perftest's verb name (testsStr) and test kind. */
export function testTitle(test: PerfTestName): string {
  const verb = test.startsWith('send') ? 'Send' : 'RDMA_Read';
  const kind = test.endsWith('_lat') ? 'Latency' : 'BW';
  return `${verb} ${kind} Test`;
}

/**
 * The block perftest prints before connecting, with the lines that describe this driver. Lines
 * about features we do not have (PCIe relaxed ordering, the ibv_wr* API, CQE poll batch, ROCm/MUSA
 * memory, NUMA) are left out rather than printed with made-up values.
 */
export function testInfoLines(info: TestInfo): string[] {
  const isSend = info.test.startsWith('send');
  const isBandwidth = info.test.endsWith('_bw');
  const lines = [
    RESULT_LINE,
    ' '.repeat(20) + testTitle(info.test),
    ` Dual-port       : OFF\t\tDevice         : ${info.device}`,
    ` Number of qps   : ${info.qps ?? 1}\t\tTransport type : IB`,
    ` Connection type : RC\t\tUsing SRQ      : OFF`,
  ];
  if (info.machine === 'client') lines.push(` TX depth        : ${info.txDepth}`);
  if (isSend && info.machine === 'server') lines.push(` RX depth        : ${info.rxDepth}`);
  if (isBandwidth && info.cqModeration !== undefined) lines.push(` CQ Moderation   : ${info.cqModeration}`);
  lines.push(` Mtu             : ${info.mtuBytes}[B]`);
  lines.push(` Link type       : ${info.linkType}`);
  if (info.gidIndex !== undefined && info.gidIndex >= 0) lines.push(` GID index       : ${info.gidIndex}`);
  if (isSend) lines.push(` Max inline data : ${info.maxInlineBytes ?? 0}[B]`);
  else lines.push(` Outstand reads  : ${info.outstandingReads ?? 0}`);
  lines.push(` rdma_cm QPs\t : OFF`);
  lines.push(` Data ex. method : Ethernet`);
  if (info.warmUp !== undefined) lines.push(` Warm up         : ${info.warmUp}`);
  lines.push(RESULT_LINE);
  return lines;
}

// ---- Address lines (ctx_print_pingpong_data) -----------------------------------------------

export interface AddressInfo {
  readonly lid: number;
  readonly qpn: number;
  readonly psn: number;
  /** 16 raw bytes; printed on its own line when given. */
  readonly gid?: Uint8Array;
  /** RDMA read tests print these three after the PSN when known. */
  readonly outReads?: number;
  readonly rkey?: number;
  readonly vaddr?: number;
}

/**
 * BASIC_ADDR_FMT " %s address: LID %#04x QPN %#06x PSN %#06x", then READ_FMT " OUT %#04x" and
 * RDMA_FMT " RKey %#08x VAddr %#016llx" when given, then PERF_GID_FMT, whose bytes are printed
 * in decimal (%02d) as perftest does: " GID: 00:00:...:255:255:192:168:01:02".
 */
export function addressLines(side: 'local' | 'remote', a: AddressInfo): string[] {
  let line =
    ` ${side} address: LID ${hexAlternate(a.lid, 4)} QPN ${hexAlternate(a.qpn, 6)} PSN ${hexAlternate(a.psn, 6)}`;
  if (a.outReads !== undefined) line += ` OUT ${hexAlternate(a.outReads, 4)}`;
  if (a.rkey !== undefined && a.vaddr !== undefined)
    line += ` RKey ${hexAlternate(a.rkey, 8)} VAddr ${hexAlternate(a.vaddr, 16)}`;
  const lines = [line];
  if (a.gid !== undefined) lines.push(` GID: ${Array.from(a.gid, (b) => String(b).padStart(2, '0')).join(':')}`);
  return lines;
}

// ---- JSON ----------------------------------------------------------------------------------

/** REPORT_FMT_LAT_JSON's keys and precision. */
export function latencyJson(sizeBytes: number, iterations: number, s: LatencyStats): Record<string, number> {
  return {
    MsgSize: sizeBytes,
    n_iterations: iterations,
    t_min: round(s.tMinUs, 2),
    t_max: round(s.tMaxUs, 2),
    t_typical: round(s.tTypicalUs, 2),
    t_avg: round(s.tAvgUs, 2),
    t_stdev: round(s.tStdevUs, 2),
    percentile_99: round(s.t99Us, 2),
    'percentile_99.9': round(s.t999Us, 2),
  };
}

/** REPORT_FMT_LAT_DUR_JSON's keys and precision. */
export function latencyDurationJson(sizeBytes: number, iterations: number, s: LatencyDurationStats): Record<string,
number> {
  return {
    MsgSize: sizeBytes, n_iterations: iterations, t_avg: round(s.tAvgUs, 2), tps_average: round(s.tpsAverage, 2),
  };
}

/** REPORT_FMT_JSON's keys and precision. */
export function bandwidthJson(sizeBytes: number, iterations: number, s: BandwidthStats): Record<string, number> {
  return {
    MsgSize: sizeBytes,
    n_iterations: iterations,
    BW_peak: round(s.bwPeakMiBps, 2),
    BW_average: round(s.bwAverageMiBps, 2),
    MsgRate: round(s.msgRateMpps, 6),
  };
}

/** write_test_info_to_file's keys, for the lines of testInfoLines. */
export function testInfoJson(info: TestInfo): Record<string, string | number> {
  const isSend = info.test.startsWith('send');
  const out: Record<string, string | number> = {
    test: testTitle(info.test).replace(/ /g, '_'),
    Dual_port: 'OFF',
    Device: info.device,
    Number_of_qps: info.qps ?? 1,
    Transport_type: 'IB',
    Connection_type: 'RC',
    Using_SRQ: 'OFF',
  };
  if (info.machine === 'client') out.TX_depth = info.txDepth;
  if (isSend && info.machine === 'server') out.RX_depth = info.rxDepth;
  if (info.test.endsWith('_bw') && info.cqModeration !== undefined) out.CQ_Moderation = info.cqModeration;
  out.Mtu = info.mtuBytes;
  out.Link_type = info.linkType;
  if (info.gidIndex !== undefined && info.gidIndex >= 0) out.GID_index = info.gidIndex;
  if (isSend) out.Max_inline_data = info.maxInlineBytes ?? 0;
  else out.Outstand_reads = info.outstandingReads ?? 0;
  out.rdma_cm_QPs = 'OFF';
  out.Data_ex_method = 'Ethernet';
  if (info.warmUp !== undefined) out.Warm_up = info.warmUp;
  return out;
}

/** The --json document: perftest's test_info and one results entry per message size. */
export function perfJsonDocument(info: TestInfo, results: readonly Record<string, number>[]): string {
  return JSON.stringify({ test_info: testInfoJson(info), results }, null, 2);
}

// ---- ibv_rc_pingpong -----------------------------------------------------------------------

export interface PingpongAddress {
  readonly lid: number;
  readonly qpn: number;
  readonly psn: number;
  readonly gid: Uint8Array;
}

/** rc_pingpong: "  local address:  LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s" (GID via inet_ntop). */
export function pingpongAddressLine(side: 'local' | 'remote', a: PingpongAddress): string {
  const label = side === 'local' ? '  local address: ' : '  remote address:';
  return `${label} LID 0x${hex(a.lid, 4)}, QPN 0x${hex(a.qpn, 6)}, PSN 0x${hex(a.psn, 6)}, GID ${gidToIpv6Text(a.gid)}`;
}

/**
 * rc_pingpong's closing two lines. It counts the bytes of both directions (size * iters * 2) and
 * keeps the elapsed time in a C float, so usec/iter is a float division: "%lld bytes in %.2f
 * seconds = %.2f Mbit/sec" and "%d iters in %.2f seconds = %.2f usec/iter".
 */
export function pingpongSummaryLines(sizeBytes: number, iterations: number, elapsedUs: number): string[] {
  const usec = Math.fround(elapsedUs);
  const bytes = sizeBytes * iterations * 2;
  return [
    `${bytes} bytes in ${cFixed(usec / 1e6, 2)} seconds = ${cFixed((bytes * 8) / usec, 2)} Mbit/sec`,
    `${iterations} iters in ${cFixed(usec / 1e6, 2)} seconds = ${cFixed(Math.fround(usec / iterations), 2)} usec/iter`,
  ];
}

/**
 * A GID as glibc's inet_ntop(AF_INET6) writes it: lowercase groups without leading zeros, the
 * first longest run of two or more zero groups as "::", and the IPv4-mapped (::ffff:a.b.c.d) and
 * IPv4-compatible (::a.b.c.d) forms in dotted decimal.
 */
export function gidToIpv6Text(gid: Uint8Array): string {
  if (gid.length !== 16) throw new RangeError(`a GID has 16 bytes, got ${gid.length}`);
  const words: number[] = [];
  for (let i = 0; i < 8; i++) words.push((gid[2 * i]! << 8) | gid[2 * i + 1]!);

  let bestBase = -1;
  let bestLength = 0;
  for (let i = 0; i < 8; ) {
    if (words[i] !== 0) { i++; continue; }
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > bestLength) { bestBase = i; bestLength = j - i; }
    i = j;
  }
  if (bestLength < 2) bestBase = -1;

  let text = '';
  for (let i = 0; i < 8; i++) {
    if (bestBase !== -1 && i >= bestBase && i < bestBase + bestLength) {
      if (i === bestBase) text += ':';
      continue;
    }
    if (i !== 0) text += ':';
    if (i === 6 && bestBase === 0 && (bestLength === 6 || (bestLength === 5 && words[5] === 0xffff))) {
      text += `${gid[12]}.${gid[13]}.${gid[14]}.${gid[15]}`;
      return text;
    }
    text += words[i]!.toString(16);
  }
  if (bestBase !== -1 && bestBase + bestLength === 8) text += ':';
  return text;
}

function f2(value: number): string {
  return padRight(cFixed(value, 2), 7);
}

function round(value: number, digits: number): number {
  return Number(cFixed(value, digits));
}
