// BAR access over a real shared mapping (an anonymous mmap standing in for a BAR): register
// reads and writes land where the offsets say, and the 64-bit doorbell, stored as one
// double, delivers every doorbell-like bit pattern intact at every V8 tier.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { BarMmio } from '../drivers/vfio/mmio.ts';
import { LINUX, systemLibc } from '../drivers/native/libc.ts';
import { InvalidArgument } from '../lib/errors.ts';
import { DOORBELL_PATTERNS, DOORBELL_PATTERN_SEED, doorbellFailures } from './helpers/doorbell-patterns.ts';

const BAR_BYTES = 128 * 1024;
const libc = systemLibc();

/** A fresh BarMmio over shared memory, plus independent byte and word views of the same memory. */
function fakeBar() {
  const address = libc.mmap(
    BAR_BYTES, LINUX.PROT_READ | LINUX.PROT_WRITE, LINUX.MAP_SHARED | LINUX.MAP_ANONYMOUS, -1, 0,
  );
  if (address < 0n) throw new Error(`mmap failed: ${address}`);
  t.teardown(() => void libc.munmap(address, BAR_BYTES));
  return {
    mmio: new BarMmio(libc.view(address, BAR_BYTES)),
    bytes: new Uint8Array(libc.view(address, BAR_BYTES)),
    words: new Uint32Array(libc.view(address, BAR_BYTES)),
  };
}

t.test('read32 and write32 are little-endian 32-bit accesses at byte offsets', async (t) => {
  const { mmio, bytes } = fakeBar();
  t.equal(mmio.size, BAR_BYTES);
  mmio.write32(0x100, 0x12345678); // HWRM trigger register offset (bnxt.h GRCPF_REG_CHIMP_COMM_TRIGGER)
  t.same([...bytes.subarray(0x100, 0x104)], [0x78, 0x56, 0x34, 0x12]);
  bytes.set([0xef, 0xbe, 0xad, 0xde], 0x520);
  t.equal(mmio.read32(0x520), 0xdeadbeef, 'read as an unsigned number');
  mmio.write32(BAR_BYTES - 4, -1);
  t.equal(mmio.read32(BAR_BYTES - 4), 0xffffffff, 'the last word; a signed value is stored as its 32 bits');
});

t.test('doorbell64 stores lo at the offset and hi 4 bytes above, little-endian', async (t) => {
  const { mmio, bytes } = fakeBar();
  // A P5 NQ_ARM doorbell: type 0xB, valid, xid 0x123, index 0x000456 (hsi.h struct dbc_dbc, DBC_DBC_TYPE_NQ_ARM).
  mmio.doorbell64(0x10000, 0x00000456, 0xb4000123);
  t.same([...bytes.subarray(0x10000, 0x10008)], [0x56, 0x04, 0x00, 0x00, 0x23, 0x01, 0x00, 0xb4]);
  t.same([...bytes.subarray(0xfff8, 0x10000)], [0, 0, 0, 0, 0, 0, 0, 0], 'nothing written below');
  t.same([...bytes.subarray(0x10008, 0x10010)], [0, 0, 0, 0, 0, 0, 0, 0], 'nothing written above');
});

t.test('every doorbell-like pattern survives, before and after 1e5 calls warm the function up', async (t) => {
  const { mmio, words } = fakeBar();
  t.same(doorbellFailures(mmio, words, 0x10000), [],
    `cold: ${DOORBELL_PATTERNS.length} patterns (random ones from seed 0x${DOORBELL_PATTERN_SEED.toString(16)})`);
  for (let i = 0; i < 1e5; i++) mmio.doorbell64(0x10000 + 8 * (i & 7), i * 0x9e3779b1, (i << 21) ^ i);
  t.same(doorbellFailures(mmio, words, 0x10000), [], 'after 1e5 calls');
});

// One child process per V8 tier, so "before" and "after optimisation" are facts V8 reports
// (%GetOptimizationStatus for each checked pattern), not guesses about when tiering happens.
// The optimising tiers compile on the main thread: a background compile that the warm-up starts
// is still running on a loaded machine when %OptimizeFunctionOnNextCall is asked, and then the
// checks ran in unoptimised code (reproduced with --concurrent-recompilation-delay=200).
const SYNCHRONOUS_COMPILES = ['--no-concurrent-recompilation', '--no-concurrent-osr'];
const helper = fileURLToPath(new URL('./helpers/doorbell-bits.ts', import.meta.url));
const register = pathToFileURL(fileURLToPath(new URL('../scripts/register-ts.mjs', import.meta.url))).href;
const tiers: [string, string[]][] = [
  ['interpreter', ['--max-opt=0']],
  ['baseline', ['--max-opt=1', '--always-sparkplug']],
  ['maglev', ['--maglev', ...SYNCHRONOUS_COMPILES]],
  ['turbofan', SYNCHRONOUS_COMPILES],
];
for (const [tier, flags] of tiers) {
  t.test(`every doorbell-like pattern survives in ${tier} code`, async (t) => {
    const child = spawnSync(
      process.execPath, ['--allow-natives-syntax', ...flags, '--import', register, helper, tier],
      { encoding: 'utf8', timeout: 120_000 },
    );
    if (tier === 'maglev' && /Maglev is not enabled/.test(child.stdout + child.stderr)) {
      return void t.pass('maglev tier', { skip: `this V8 (${process.versions.v8}) has no Maglev tier` });
    }
    t.equal(child.status, 0, `child ran: ${child.stderr}`);
    const report =
      JSON.parse(child.stdout.trim().split('\n').pop() ??
      '{}') as { patterns: number; checksAtTier: number; failures: string[] };
    t.equal(report.patterns, DOORBELL_PATTERNS.length);
    t.equal(report.checksAtTier, report.patterns, `V8 reported doorbell64 as ${tier} code for every check`);
    t.same(report.failures, [], 'no pattern changed on the way to memory');
  });
}

t.test('TurboFan compiles doorbell64 to one 8-byte store to the BAR (x86_64 machine code)', async (t) => {
  if (process.arch !== 'x64')
    return void t.pass('machine code check', { skip: `written for x86_64, this is ${process.arch}` });
  // V8 writes the disassembly itself; into a file, so none of it is lost in a pipe at exit.
  const dir = mkdtempSync(join(tmpdir(), 'doorbell-code-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const trace = join(dir, 'code.asm');
  const flags = [
    ...SYNCHRONOUS_COMPILES, '--print-opt-code', '--print-opt-code-filter=doorbell64', '--redirect-code-traces',
    `--redirect-code-traces-to=${trace}`,
  ];
  const child = spawnSync(
    process.execPath, ['--allow-natives-syntax', ...flags, '--import', register, helper, 'turbofan'],
    { encoding: 'utf8', timeout: 120_000 },
  );
  t.equal(child.status, 0, child.stderr);
  const code = existsSync(trace) ? readFileSync(trace, 'utf8') : '';
  const block = /kind = TURBOFAN\nname = doorbell64\n[\s\S]*?\nInstructions[\s\S]*?\n\n/.exec(code)?.[0];
  if (!block)
    return void t.pass('machine code check', { skip: 'this node prints no optimised code (no disassembler)' });
  // Stores to memory other than the stack frame (rbp/rsp-relative spills are not memory the device sees).
  const stores = block.split('\n').filter(
    (line) => /\s(v?movsd|movl|movq|movw|movb)\s+\[(?!rbp|rsp)[^\]]*\],/.test(line),
  );
  const wide = stores.filter((line) => /\sv?movsd\s+\[/.test(line));
  const narrow = stores.filter((line) => /\smovl\s+\[/.test(line));
  t.equal(wide.length, 1, `exactly one 8-byte store of the double (the doorbell):\n${stores.join('\n')}`);
  t.equal(narrow.length, 2, 'the only 32-bit stores are the two halves into the scratch');
  t.equal(stores.length, 3, 'and nothing else is stored outside the stack frame');
});

t.test('misaligned or out-of-range offsets throw InvalidArgument and touch nothing', async (t) => {
  const { mmio, bytes } = fakeBar();
  t.throws(() => mmio.read32(2), InvalidArgument);
  t.throws(() => mmio.read32(BAR_BYTES), InvalidArgument);
  t.throws(() => mmio.write32(-4, 1), InvalidArgument);
  t.throws(() => mmio.write32(4.5, 1), InvalidArgument);
  t.throws(() => mmio.write32(BAR_BYTES, 1), InvalidArgument);
  t.throws(() => mmio.doorbell64(4, 1, 1), InvalidArgument, 'doorbells are 8-byte aligned');
  t.throws(() => mmio.doorbell64(BAR_BYTES - 4, 1, 1), InvalidArgument);
  t.throws(() => mmio.doorbell64(Number.NaN, 1, 1), InvalidArgument);
  t.ok(bytes.every((b) => b === 0), 'no byte of the BAR changed');
});
