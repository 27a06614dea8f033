// Issue 14 item 2: perftest's out-of-band exchange, byte for byte. Expected bytes are written by
// hand from perftest's formats (src/perftest_communication.[ch]: exchange_versions, check_sys_data,
// check_mtu, KEY_PRINT_FMT_GID) and from a capture of real perftest against itself
// (the 108-byte keys below are one of its blocks); never produced by our own encoder.
import t from 'tap';
import * as net from 'node:net';
import { createSocket } from 'node:dgram';
import { parseCommandLine } from '../scripts/cli/options.ts';
import type { PerfCommand } from '../scripts/cli/commands.ts';
import { runPerf } from '../scripts/cli/run-perf.ts';
import { freeTcpPort, freeUdpPortPair } from '../scripts/interop/free-ports.ts';
import {
  formatKeys, parseKeys, formatVersion, parseVersion, formatMtu, parseMtu, formatInt, perftestServer, perftestClient,
  KEY_BYTES, type PerftestKeys,
} from '../scripts/cli/perftest-exchange.ts';

const ascii = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));
const gid = (...tail: number[]) => Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ...tail]);

// ib_send_lat's client keys from the capture: lid 0, out_reads 1, qpn 0x11, psn 0x331f4a, rkey 0,
// vaddr 0x55cf5de9f000, GID ::ffff:10.77.0.2, srqn 0.
const captured = ascii(
  '0000:0001:000011:331f4a:00000000:000055cf5de9f000:00:00:00:00:00:00:00:00:00:00:ff:ff:0a:4d:00:02:00000000:\0',
);
const capturedKeys: PerftestKeys = {
  lid: 0, outReads: 1, qpn: 0x11, psn: 0x331f4a, rkey: 0, vaddr: 0x55cf5de9f000n, gid: gid(10, 77, 0, 2), srqn: 0,
};

t.test('keys: the 108-byte block of KEY_PRINT_FMT_GID', async (t) => {
  t.equal(captured.length, KEY_BYTES);
  t.same([...formatKeys(capturedKeys)], [...captured], 'formatted as perftest writes them');
  const parsed = parseKeys(captured);
  t.ok(parsed.ok);
  if (parsed.ok) {
    t.equal(parsed.value.qpn, 0x11);
    t.equal(parsed.value.psn, 0x331f4a);
    t.equal(parsed.value.outReads, 1);
    t.equal(parsed.value.vaddr, 0x55cf5de9f000n);
    t.same([...parsed.value.gid], [...gid(10, 77, 0, 2)]);
  }
  t.match(parseKeys(new Uint8Array(KEY_BYTES)), { ok: false, error: /malformed perftest keys/ }, 'zeros are refused');
  t.match(parseKeys(ascii('rig-bnxt-perf/1 '.padEnd(KEY_BYTES, ' '))), { ok: false, error: /malformed/ });
  t.match(parseKeys(new Uint8Array(59)), { ok: false, error: /108 bytes/ });
});

t.test('version, sys data and MTU blocks', async (t) => {
  t.same([...formatVersion('6.06')], [...ascii('6.06'), ...new Array(12).fill(0)], '16 bytes, NUL-padded');
  t.same(parseVersion(formatVersion('6.06')), { text: '6.06', value: 6.06 });
  t.equal(parseVersion(ascii('rig-bnxt-perf/1 ')).value, 0, 'atof of text that is no number is 0');
  t.same([...formatInt(4096)], [0, 0, 0x10, 0], 'cycle_buffer 4096, big-endian');
  t.same([...formatInt(64)], [0, 0, 0, 0x40], 'cache_line_size 64');
  t.same([...formatMtu(3)], [0x33, 0], '"3" and its NUL: IBV_MTU_1024');
  t.equal(parseMtu(ascii('3\0')), 1024);
  t.equal(parseMtu(ascii('5\0')), 4096);
  t.equal(parseMtu(ascii('9\0')), undefined, 'not an ibv_mtu');
});

const mine = (qpn: number): PerftestKeys => ({ ...capturedKeys, qpn, psn: 0x123456 });

/** A fake perftest peer with a given version: answers the blocks in the client's order. */
function fakePerftestServer(version: string): Promise<{ port: number; got: Promise<Buffer> }> {
  return new Promise((resolve) => {
    let collected = Buffer.alloc(0);
    let done: (b: Buffer) => void;
    const got = new Promise<Buffer>((r) => (done = r));
    const server = net.createServer((s) => {
      const answers = [formatVersion(version), formatInt(4096), formatInt(64), formatMtu(5), captured];
      const sizes = [16, 4, 4, 2, KEY_BYTES];
      let step = 0;
      s.on('data', (d) => {
        collected = Buffer.concat([collected, d]);
        let need = sizes.slice(0, step + 1).reduce((a, b) => a + b, 0);
        while (step < sizes.length && collected.length >= need) {
          s.write(answers[step]!);
          step++;
          if (version < '5.70') { s.destroy(); break; }
          need += sizes[step] ?? 0;
        }
        if (step === sizes.length) { done(collected); s.end(); server.close(); }
      });
      s.on('close', () => { done(collected); server.close(); });
    });
    server.listen(0, '127.0.0.1', () => resolve({ port: (server.address() as net.AddressInfo).port, got }));
  });
}

t.test('as client against perftest: the blocks in perftest\'s order and sizes', async (t) => {
  const peer = await fakePerftestServer('6.29');
  const session = await perftestClient('127.0.0.1', peer.port, { keys: [mine(0x22)], pathMtu: 1024 });
  t.ok(session.ok, session.ok ? '' : session.error);
  const sent = await peer.got;
  t.same([...sent.subarray(0, 16)], [...formatVersion('6.06')], 'our version first: 6.06');
  t.same([...sent.subarray(16, 24)], [0, 0, 0x10, 0, 0, 0, 0, 0x40], 'cycle buffer and cache line size');
  t.same([...sent.subarray(24, 26)], [0x33, 0], 'our MTU: 1024');
  t.equal(sent.length, 26 + KEY_BYTES, 'then one 108-byte key block');
  t.match(String.fromCharCode(...sent.subarray(26, 26 + 24)), /^0000:0001:000022:123456:/);
  if (session.ok) {
    t.equal(session.value.peer.pathMtu, 1024, 'the smaller MTU of the two');
    t.equal(session.value.peer.keys[0]!.qpn, 0x11);
    t.equal(session.value.peer.version.value, 6.29);
    session.value.close();
  }
});

t.test('a peer older than 5.70 is refused, as perftest refuses it', async (t) => {
  const peer = await fakePerftestServer('5.60');
  const session = await perftestClient('127.0.0.1', peer.port, { keys: [mine(0x22)], pathMtu: 1024 });
  t.match(session, { ok: false, error: /5\.60.*needs 5\.70 or later/ });
});

t.test('server and client: keys, barriers and the close', async (t) => {
  let port = 0;
  const listening = new Promise<void>((resolve) => {
    void perftestServer(0, { keys: [mine(0x33)], pathMtu: 4096, listenHost: '127.0.0.1', onListening: (p) => {
      port = p;
      resolve();
    } }).then((s) => (server = s));
  });
  let server: Awaited<ReturnType<typeof perftestServer>> | undefined;
  await listening;
  const client = await perftestClient('127.0.0.1', port, { keys: [mine(0x44)], pathMtu: 1024 });
  while (server === undefined) await new Promise((r) => setTimeout(r, 5));
  t.ok(client.ok && server.ok);
  if (!client.ok || !server.ok) return;
  t.equal(server.value.peer.keys[0]!.qpn, 0x44);
  t.equal(client.value.peer.keys[0]!.qpn, 0x33);
  t.equal(server.value.peer.pathMtu, 1024, 'both take the smaller MTU');
  t.equal(client.value.peer.pathMtu, 1024);
  for (let i = 0; i < 3; i++) {
    const [a, b] = await Promise.all([server.value.handshake(), client.value.handshake()]);
    t.ok(a.ok && b.ok, `barrier ${i + 1}`);
  }
  const [x, y] = await Promise.all([server.value.finish(), client.value.finish()]);
  t.same([x, y], [{ ok: true, value: undefined }, { ok: true, value: undefined }], 'closing handshake and done');
});

/**
 * ib_send_bw -q 2 as the server, scripted from send_bw.c: the exchange up to the pre-run
 * barrier, one block at a time (read the client's, answer with ours). It records what the
 * client wrote and answers nothing after that barrier (it has no NIC).
 */
function fakeSendBwServer(port: number, theirs: readonly PerftestKeys[]): Promise<Buffer> {
  const k = theirs.map((x) => formatKeys(x));
  // version, cycle buffer, cache line, MTU; the first keys of each QP; the barrier after
  // connecting (QP 0); the keys of each QP printed as remote addresses; the pre-run barrier (QP 0).
  const answers = [
    formatVersion('6.06'), formatInt(4096), formatInt(64), formatMtu(3), k[0]!, k[1]!, k[0]!, k[0]!, k[1]!, k[0]!,
  ];
  const sizes = [16, 4, 4, 2, KEY_BYTES, KEY_BYTES, KEY_BYTES, KEY_BYTES, KEY_BYTES, KEY_BYTES];
  return new Promise((resolve) => {
    const server = net.createServer((s) => {
      let collected = Buffer.alloc(0);
      let step = 0;
      let need = sizes[0]!;
      s.on('data', (d) => {
        collected = Buffer.concat([collected, d]);
        while (step < sizes.length && collected.length >= need) {
          s.write(answers[step]!);
          step++;
          need += sizes[step] ?? 0;
        }
        if (step === sizes.length) { server.close(); resolve(collected); }
      });
      s.on('error', () => {});
      s.on('close', () => { server.close(); resolve(collected); });
    });
    server.listen(port, '127.0.0.1');
  });
}

t.test('as a -q 2 client: one key block per QP where send_bw.c exchanges them, each QP connected to its peer ' +
  'QP', async (t) => {
  const port = await freeTcpPort();
  const [a, b] = await freeUdpPortPair();
  // The far end of the UDP cable swallows frames: the fake has no NIC, so the run itself fails.
  const sink = createSocket('udp4');
  await new Promise<void>((r) => sink.bind(b, '127.0.0.1', () => r()));
  t.teardown(() => sink.close());
  const theirs = [0x31, 0x32].map((qpn, i) => ({ ...capturedKeys, qpn, psn: 0x100 * (i + 1), gid: gid(10, 77, 0, 9) }));
  const got = fakeSendBwServer(port, theirs);
  const parsed = parseCommandLine([
    'perf', 'send_bw', '-q', '2', '-n', '5', '-s', '64', '-p', String(port), '-d', `emu:${a}:${b}`, '--mac',
    '02:00:00:00:00:09', '127.0.0.1',
  ]);
  if (!parsed.ok || parsed.value.command !== 'perf') throw new Error('parse');
  const lines: string[] = [];
  const code = await runPerf(parsed.value as PerfCommand, { log: (l) => lines.push(l) });
  t.equal(code, 1, 'the run fails: nobody answers on the wire');
  const sent = await got;
  t.equal(sent.length, 26 + 6 * KEY_BYTES, 'the header blocks and six key blocks, each sent after the previous answer');
  const blocks = Array.from(
    { length: 6 }, (_, i) => parseKeys(Uint8Array.from(sent.subarray(26 + i * KEY_BYTES, 26 + (i + 1) * KEY_BYTES))),
  );
  t.ok(blocks.every((x) => x.ok), 'each is a well-formed key block');
  const keys = blocks.map((x) => (x.ok ? x.value : undefined)!);
  const local = lines.filter((l) => l.startsWith(' local address: ')).map(
    (l) => parseInt(/QPN (0x[0-9a-f]+)/.exec(l)![1]!, 16),
  );
  t.equal(local.length, 2, 'two local addresses printed');
  t.same(keys.map((x) => x.qpn), [local[0], local[1], local[0], local[0], local[1], local[0]],
    'QP 0, QP 1; barrier QP 0; QP 0, QP 1; barrier QP 0');
  t.not(keys[0]!.vaddr, keys[1]!.vaddr, "each QP names its own receive buffer (set_up_connection's vaddr)");
  const remote = lines.filter((l) => l.startsWith(' remote address: ')).map(
    (l) => /QPN (0x[0-9a-f]+) PSN (0x[0-9a-f]+)/.exec(l)!.slice(1).map((x) => parseInt(x, 16)),
  );
  t.same(remote, [[0x31, 0x100], [0x32, 0x200]], "the peer's QPs, in order, as the remote addresses");
});
