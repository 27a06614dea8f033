import t from 'tap';
import {
  RESULT_LINE, LATENCY_HEADER, BANDWIDTH_HEADER, LATENCY_DURATION_HEADER, latencyRow, bandwidthRow, latencyDurationRow,
  tableHeaderLines, testInfoLines, addressLines, latencyJson, bandwidthJson, perfJsonDocument, pingpongAddressLine,
  pingpongSummaryLines, gidToIpv6Text, testTitle,
} from '../scripts/cli/tables.ts';
import { cFixed, hexAlternate } from '../scripts/cli/printf.ts';

// Fixtures are written from perftest's printf formats (src/perftest_parameters.h) segment by
// segment: sp(n) is n spaces, '\t' a tab. Each comment shows the format piece being rendered.
const sp = (n: number) => ' '.repeat(n);

t.test('the dashed separator is RESULT_LINE: 87 dashes', async (t) => {
  t.equal(RESULT_LINE, '---------------------------------------------------------------------------------------');
  t.equal(RESULT_LINE.length, 87);
});

t.test('latency header is RESULT_FMT_LAT, trailing space included', async (t) => {
  t.equal(
    LATENCY_HEADER,
    ' #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% ' +
      'percentile[usec]   99.9% percentile[usec] ',
  );
  t.same(tableHeaderLines('send_lat', false), [RESULT_LINE, LATENCY_HEADER]);
  t.same(tableHeaderLines('read_lat', true), [RESULT_LINE, LATENCY_DURATION_HEADER]);
  t.same(tableHeaderLines('read_bw', false), [RESULT_LINE, BANDWIDTH_HEADER]);
});

t.test('latency row follows REPORT_FMT_LAT', async (t) => {
  const row = latencyRow(2, 1000, {
    tMinUs: 1.01, tMaxUs: 3.52, tTypicalUs: 1.04, tAvgUs: 1.05, tStdevUs: 0.04, t99Us: 1.26, t999Us: 3.52,
  });
  const want = [
    ' ', '2', sp(6), ' ', '1000', //            " %-7lu %lu"
    sp(10), '1.01', sp(3), //                   "          %-7.2f"
    sp(8), '3.52', sp(3), //                    "        %-7.2f"
    sp(6), '1.04', sp(3), //                    "      %-7.2f"
    sp(2), '\t', sp(7), '1.05', sp(3), //       "  \t       %-7.2f"
    sp(5), '\t', '0.04', sp(3), //              "     \t%-7.2f"
    '\t\t', '1.26', sp(3), //                   "\t\t%-7.2f"
    ' ', '\t\t', '3.52', sp(3), //              " \t\t%-7.2f"
  ].join('');
  t.equal(row, want);
});

t.test('latency row: numbers wider than 7 push the columns, as printf does', async (t) => {
  const row = latencyRow(8388608, 5, {
    tMinUs: 1234.567, tMaxUs: 123456.789, tTypicalUs: 0.005, tAvgUs: 10, tStdevUs: 0, t99Us: 99.999, t999Us: 100,
  });
  const want = [
    ' ', '8388608', ' ', '5',
    sp(10), '1234.57',
    sp(8), '123456.79',
    sp(6), '0.01', sp(3), // 0.005 is just above the tie in binary: rounds up
    sp(2), '\t', sp(7), '10.00', sp(2),
    sp(5), '\t', '0.00', sp(3),
    '\t\t', '100.00', sp(1),
    ' ', '\t\t', '100.00', sp(1),
  ].join('');
  t.equal(row, want);
});

t.test('bandwidth header and row follow RESULT_FMT / REPORT_FMT', async (t) => {
  t.equal(BANDWIDTH_HEADER, ' #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]');
  const row = bandwidthRow(65536, 1000, { bwPeakMiBps: 11046.23, bwAverageMiBps: 11040.12, msgRateMpps: 0.176642 });
  const want = [
    ' ', '65536', sp(2), //                     " %-7lu"
    sp(4), '1000', sp(6), //                    "    %-10lu"
    sp(7), '11046.23', //                       "       %-7.2lf"
    sp(12), '11040.12', //                      "            %-7.2lf"
    '\t\t', sp(5), '0.176642', //               "\t\t     %-7.6lf"
  ].join('');
  t.equal(row, want);
  const noPeak = bandwidthRow(2, 5000, { bwPeakMiBps: 0, bwAverageMiBps: 9.5, msgRateMpps: 4.980736 });
  t.equal(noPeak,
    [' 2', sp(6), sp(4), '5000', sp(6), sp(7), '0.00', sp(3), sp(12), '9.50', sp(3), '\t\t', sp(5),
    '4.980736'].join(''));
});

t.test('-D latency header and row follow RESULT_FMT_LAT_DUR / REPORT_FMT_LAT_DUR', async (t) => {
  t.equal(LATENCY_DURATION_HEADER, ' #bytes        #iterations       t_avg[usec]    tps average');
  const row = latencyDurationRow(2, 4712342, { tAvgUs: 1.06, tpsAverage: 942468.4 });
  t.equal(row, [' 2', sp(6), sp(7), '4712342', sp(12), '1.06', sp(3), sp(8), '942468.40'].join(''));
});

t.test('test information block for a send latency client', async (t) => {
  const lines = testInfoLines({
    test: 'send_lat', device: 'emu', machine: 'client', txDepth: 1, rxDepth: 512, mtuBytes: 1024, linkType: 'Ethernet',
    gidIndex: 0, maxInlineBytes: 236,
  });
  t.same(lines, [
    RESULT_LINE,
    '                    Send Latency Test',
    ' Dual-port       : OFF\t\tDevice         : emu',
    ' Number of qps   : 1\t\tTransport type : IB',
    ' Connection type : RC\t\tUsing SRQ      : OFF',
    ' TX depth        : 1',
    ' Mtu             : 1024[B]',
    ' Link type       : Ethernet',
    ' GID index       : 0',
    ' Max inline data : 236[B]',
    ' rdma_cm QPs\t : OFF',
    ' Data ex. method : Ethernet',
    RESULT_LINE,
  ]);
});

t.test('test information block for a read bandwidth server', async (t) => {
  const lines = testInfoLines({
    test: 'read_bw', device: '0000:3b:00.0', machine: 'server', txDepth: 128, rxDepth: 1, cqModeration: 100,
    mtuBytes: 4096, linkType: 'Ethernet', outstandingReads: 16,
  });
  t.same(lines, [
    RESULT_LINE,
    '                    RDMA_Read BW Test',
    ' Dual-port       : OFF\t\tDevice         : 0000:3b:00.0',
    ' Number of qps   : 1\t\tTransport type : IB',
    ' Connection type : RC\t\tUsing SRQ      : OFF',
    ' CQ Moderation   : 100',
    ' Mtu             : 4096[B]',
    ' Link type       : Ethernet',
    ' Outstand reads  : 16',
    ' rdma_cm QPs\t : OFF',
    ' Data ex. method : Ethernet',
    RESULT_LINE,
  ]);
  t.equal(testTitle('send_bw'), 'Send BW Test');
  t.equal(testTitle('read_lat'), 'RDMA_Read Latency Test');
});

t.test('address lines: %#x prints a zero LID without 0x, GID bytes in decimal', async (t) => {
  const gid = Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 192, 168, 1, 2]);
  t.same(addressLines('local', { lid: 0, qpn: 0x107, psn: 0x9d1c4c, gid }), [
    ' local address: LID 0000 QPN 0x0107 PSN 0x9d1c4c',
    ' GID: 00:00:00:00:00:00:00:00:00:00:255:255:192:168:01:02',
  ]);
  t.same(addressLines('remote', { lid: 1, qpn: 0x12345, psn: 0 }),
    [' remote address: LID 0x01 QPN 0x12345 PSN 000000']);
  // %#016llx: the width of 16 counts the 0x, leaving 14 digits.
  t.same(addressLines('remote', { lid: 0, qpn: 0x10, psn: 0x5, outReads: 16, rkey: 0x1234, vaddr: 0x7f0000001000 }), [
    ' remote address: LID 0000 QPN 0x0010 PSN 0x0005 OUT 0x10 RKey 0x001234 VAddr 0x007f0000001000',
  ]);
});

t.test('JSON uses perftest keys and its printed precision', async (t) => {
  const lat = latencyJson(2, 1000, {
    tMinUs: 1.014, tMaxUs: 3.5, tTypicalUs: 1.04, tAvgUs: 1.0456, tStdevUs: 0.04, t99Us: 1.26, t999Us: 3.52,
  });
  t.same(lat, {
    MsgSize: 2, n_iterations: 1000, t_min: 1.01, t_max: 3.5, t_typical: 1.04, t_avg: 1.05, t_stdev: 0.04,
    percentile_99: 1.26, 'percentile_99.9': 3.52,
  });
  const bw = bandwidthJson(65536, 1000, { bwPeakMiBps: 11046.234, bwAverageMiBps: 11040.1, msgRateMpps: 0.17664213 });
  t.same(bw, { MsgSize: 65536, n_iterations: 1000, BW_peak: 11046.23, BW_average: 11040.1, MsgRate: 0.176642 });
  const doc = JSON.parse(perfJsonDocument(
    { test: 'send_bw', device: 'emu', machine: 'client', txDepth: 128, rxDepth: 512, cqModeration: 100, mtuBytes: 1024,
      linkType: 'Ethernet', maxInlineBytes: 0 },
    [bw],
  ));
  t.equal(doc.test_info.test, 'Send_BW_Test');
  t.equal(doc.test_info.TX_depth, 128);
  t.equal(doc.test_info.CQ_Moderation, 100);
  t.same(doc.results, [bw]);
});

t.test('ibv_rc_pingpong address and summary lines', async (t) => {
  const gid = Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 192, 168, 1, 2]);
  t.equal(pingpongAddressLine('local', { lid: 0, qpn: 0x107, psn: 0x9d1c4c, gid }),
    '  local address:  LID 0x0000, QPN 0x000107, PSN 0x9d1c4c, GID ::ffff:192.168.1.2');
  t.equal(pingpongAddressLine('remote', { lid: 0x12, qpn: 0xabcdef, psn: 1, gid: new Uint8Array(16) }),
    '  remote address: LID 0x0012, QPN 0xabcdef, PSN 0x000001, GID ::');
  t.same(pingpongSummaryLines(4096, 1000, 20000), [
    '8192000 bytes in 0.02 seconds = 3276.80 Mbit/sec',
    '1000 iters in 0.02 seconds = 20.00 usec/iter',
  ]);
});

t.test('GIDs print as glibc inet_ntop prints IPv6 addresses', async (t) => {
  const g = (...bytes: number[]) => Uint8Array.from(bytes);
  t.equal(gidToIpv6Text(g(0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55)),
    'fe80::211:22ff:fe33:4455');
  t.equal(gidToIpv6Text(g(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 192, 168, 1, 2)), '::192.168.1.2');
  t.equal(gidToIpv6Text(g(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)), '::1');
  t.equal(gidToIpv6Text(g(0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1)), 'fe80::1:0:1',
    'the first longest zero run is compressed');
  t.equal(gidToIpv6Text(g(0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0)), '2001:db8:0:1:0:1::',
    'single zero groups stay');
  t.equal(gidToIpv6Text(g(0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), '1:0:1::');
  t.throws(() => gidToIpv6Text(new Uint8Array(6)), RangeError);
});

t.test('printf pieces: %.Nf rounds exact ties to even like glibc, %#x drops 0x for zero', async (t) => {
  t.equal(cFixed(0.125, 2), '0.12');
  t.equal(cFixed(0.375, 2), '0.38');
  t.equal(cFixed(-0.125, 2), '-0.12');
  t.equal(cFixed(2.5, 0), '2');
  t.equal(cFixed(3.5, 0), '4');
  t.equal(cFixed(1.005, 2), '1.00', '1.005 is below the tie in binary');
  t.equal(cFixed(0.176642135, 6), '0.176642');
  t.equal(cFixed(NaN, 2), 'nan');
  t.equal(cFixed(Infinity, 2), 'inf');
  t.equal(hexAlternate(0, 4), '0000');
  t.equal(hexAlternate(1, 4), '0x01');
  t.equal(hexAlternate(0x123456, 6), '0x123456');
});
