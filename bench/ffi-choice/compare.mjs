// koffi beside ffi-rs, the two FFI libraries rig-bnxt could bind libc with (docs/dependencies.md).
// Not part of `npm run bench`: ffi-rs is not a dependency of rig-bnxt and must never be installed
// into this repository. Run it from a scratch folder outside the repository that has both:
//
//   mkdir /tmp/ffi-choice && cd /tmp/ffi-choice && npm init -y >/dev/null
//   npm install ffi-rs@1.3.7 koffi@3.3.4
//   node <repo>/bench/ffi-choice/compare.mjs            (resolves both from the current folder)
//
// What it measures, each on the same machine in the same process:
// 1. the cost of one call into libc: int abs(int) (no system call), and memset on a 64-byte
//    Uint8Array (a pointer argument that must reach JS memory in place);
// 2. a view of mapped memory: mmap a memfd (MAP_SHARED, as the VFIO backend maps DMA memory and
//    BARs), wrap it as an ArrayBuffer/Buffer, and prove the view is the memory itself (bytes
//    written through the view are what pread of the memfd returns, and the reverse), then the
//    cost of making one view and of reading 1 MiB through it.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';

const need = createRequire(join(process.cwd(), 'package.json'));
const koffi = need('koffi');
const ffi = need('ffi-rs');
const { DataType } = ffi;

const ROUNDS = 7;
function nsPerCall(fn, calls) {
  const times = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) fn(i);
    times.push(Number(process.hrtime.bigint() - t0) / calls);
  }
  times.sort((a, b) => a - b);
  return times[ROUNDS >> 1];
}
const fmt = (ns) => (ns >= 1000 ? `${(ns / 1000).toFixed(2)} us` : `${ns.toFixed(1)} ns`);
const rows = [];
const row = (what, k, f, note = '') => rows.push({ what, koffi: k, ffiRs: f, note });

// ---- bindings ----------------------------------------------------------------------------
const libc = koffi.load('libc.so.6');
const k = {
  abs: libc.func('int abs(int)'),
  memset: libc.func('void *memset(void *s, int c, size_t n)'),
  memfd_create: libc.func('int memfd_create(const char *name, unsigned int flags)'),
  ftruncate: libc.func('int ftruncate(int fd, int64_t length)'),
  mmap: libc.func('void *mmap(void *addr, size_t length, int prot, int flags, int fd, int64_t offset)'),
  munmap: libc.func('int munmap(void *addr, size_t length)'),
  pread: libc.func('int64_t pread(int fd, void *buf, size_t count, int64_t offset)'),
  pwrite: libc.func('int64_t pwrite(int fd, const void *buf, size_t count, int64_t offset)'),
};
ffi.open({ library: 'libc', path: 'libc.so.6' });
const f = ffi.define({
  abs: { library: 'libc', retType: DataType.I32, paramsType: [DataType.I32] },
  memset: { library: 'libc', retType: DataType.External, paramsType: [DataType.U8Array, DataType.I32, DataType.I64] },
  mmap: {
    library: 'libc', retType: DataType.External,
    paramsType: [DataType.External, DataType.I64, DataType.I32, DataType.I32, DataType.I32, DataType.I64],
  },
});
const fMmapName = 'mmap';
// mmap declared to return the address as a number (what VFIO_IOMMU_MAP_DMA's vaddr needs).
const fMmapAddress = (args) => ffi.load({
  library: 'libc', funcName: 'mmap', retType: DataType.BigInt,
  paramsType: [DataType.External, DataType.I64, DataType.I32, DataType.I32, DataType.I32, DataType.I64],
  paramsValue: args,
});

// ---- 1. call overhead --------------------------------------------------------------------
const CALLS = 300_000;
const kAbs = nsPerCall((i) => k.abs(-i), CALLS);
const fAbs = nsPerCall((i) => f.abs([-i]), CALLS);
row('call `int abs(int)`', fmt(kAbs), fmt(fAbs), `${(fAbs / kAbs).toFixed(1)}x`);

const small = new Uint8Array(64);
k.memset(small, 0x5a, 64);
const kInPlace = small.every((b) => b === 0x5a);
small.fill(0);
f.memset([small, 0x5a, 64]);
const fInPlace = small.every((b) => b === 0x5a);
const kMemset = nsPerCall(() => k.memset(small, 1, 64), CALLS);
const fMemset = nsPerCall(() => f.memset([small, 1, 64]), CALLS);
row('call `memset(Uint8Array(64), c, 64)`', fmt(kMemset), fmt(fMemset), `${(fMemset / kMemset).toFixed(1)}x`);
row('memset wrote into the JS array itself', String(kInPlace), String(fInPlace));

// ---- 2. views of mapped memory -----------------------------------------------------------
const PROT_RW = 0x3, MAP_SHARED = 0x1, MFD_CLOEXEC = 0x1;
const LEN = 2 * 1024 * 1024;
const fd = k.memfd_create('ffi-choice', MFD_CLOEXEC);
if (fd < 0 || k.ftruncate(fd, LEN) !== 0) throw new Error('memfd');

function proveView(view, what) {
  // Through the view -> the file; through the file -> the view.
  const u8 = new Uint8Array(view.buffer ?? view, view.byteOffset ?? 0, LEN);
  u8[4096] = 0xa7;
  const back = new Uint8Array(1);
  k.pread(fd, back, 1, 4096);
  const out = back[0] === 0xa7;
  k.pwrite(fd, Uint8Array.of(0x3c), 1, 8192);
  const inn = u8[8192] === 0x3c;
  if (!out || !inn) throw new Error(`${what}: the view is not the mapped memory (out ${out}, in ${inn})`);
  return out && inn;
}

const kPtr = k.mmap(null, LEN, PROT_RW, MAP_SHARED, fd, 0);
const kAddress = koffi.address(kPtr);
const kView = koffi.view(kPtr, LEN);
const kZero = proveView(kView, 'koffi.view');

const fPtr = f[fMmapName]([
  ffi.createPointer({ paramsType: [DataType.Void], paramsValue: [undefined] })[0], LEN, PROT_RW, MAP_SHARED, fd, 0,
]);
const fView = ffi.createExternalBuffer(fPtr, LEN);
const fZero = proveView(fView, 'ffi-rs createExternalBuffer');
row('view of a MAP_SHARED memfd mapping is the memory (writes seen both ways)', String(kZero), String(fZero));

// ffi-rs has no pointer-to-address call: declare mmap's return as BigInt, then turn the number
// back into a pointer by storing it (createPointer makes an int64*) and reading it as a pointer.
const fAddress = fMmapAddress([
  ffi.createPointer({ paramsType: [DataType.Void], paramsValue: [undefined] })[0], LEN, PROT_RW, MAP_SHARED, fd, 0,
]);
let roundTrip = 'failed';
try {
  const back = ffi.unwrapPointer(ffi.createPointer({ paramsType: [DataType.BigInt], paramsValue: [fAddress] }))[0];
  roundTrip = proveView(ffi.createExternalBuffer(back, LEN), 'ffi-rs view from a numeric address')
    ? 'works, through a stored int64' : 'failed';
} catch (e) {
  roundTrip = `failed: ${e.message}`;
}
row('address as a number (VFIO_IOMMU_MAP_DMA.vaddr), and a view made from that number',
  `koffi.address(ptr) gives ${typeof kAddress}; koffi.view(ptr, n)`,
  `mmap declared BigInt gives ${typeof fAddress}; view from it: ${roundTrip}`);

const VIEWS = 20_000;
const kMake = nsPerCall(() => koffi.view(kPtr, 4096), VIEWS);
const fMake = nsPerCall(() => ffi.createExternalBuffer(fPtr, 4096), VIEWS);
row('make one 4 KiB view', fmt(kMake), fmt(fMake), `${(fMake / kMake).toFixed(1)}x`);

function sumMiB(view) {
  const words = new Uint32Array(view.buffer ?? view, view.byteOffset ?? 0, (1 << 20) / 4);
  let s = 0;
  for (let i = 0; i < words.length; i++) s = (s + words[i]) | 0;
  return s;
}
const kRead = nsPerCall(() => sumMiB(kView), 50);
const fRead = nsPerCall(() => sumMiB(fView), 50);
row('read 1 MiB through the view (Uint32Array)', fmt(kRead), fmt(fRead), `${(fRead / kRead).toFixed(2)}x`);

k.munmap(kPtr, LEN);

// ---- report ------------------------------------------------------------------------------
const versionOf = (name) =>
  JSON.parse(readFileSync(join(process.cwd(), 'node_modules', name, 'package.json'), 'utf8')).version;
console.log(
  `koffi ${versionOf('koffi')} vs ffi-rs ${versionOf('ffi-rs')}, Node ${process.version}, ${cpus()[0].model}, load ` +
    `${loadavg().map((l) => l.toFixed(2)).join(' ')}; median of ${ROUNDS} rounds`,
);
console.log('| measure | koffi | ffi-rs | ffi-rs / koffi |');
console.log('|---|---|---|---|');
for (const r of rows) console.log(`| ${r.what} | ${r.koffi} | ${r.ffiRs} | ${r.note} |`);
