// The VFIO backend's ioctl numbers, flag values and structure layouts against the kernel's
// own headers: test/helpers/vfio-abi.c is compiled with gcc against <linux/vfio.h> and the
// values it prints are compared with every constant drivers/vfio exports.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PCI_CONFIG, VFIO_CONST, VFIO_FLEXIBLE_ARRAYS, VFIO_IOCTL, VFIO_LAYOUTS } from '../drivers/vfio/abi.ts';
import { LINUX } from '../drivers/native/libc.ts';

const source = fileURLToPath(new URL('./helpers/vfio-abi.c', import.meta.url));
const WIDTH = { u8: 1, u16: 2, u32: 4, u64: 8, u64n: 8 } as const;

/** Compiles and runs the C printer: its "name value [value]" lines, or why it could not. */
function headerFacts(dir: string): { facts: Map<string, string> } | { skip: string } | { failure: string } {
  if (spawnSync('gcc', ['--version']).error)
    return { skip: 'gcc is not installed (CI installs it: apt-get install gcc linux-libc-dev)' };
  const exe = join(dir, 'vfio-abi');
  const cc = spawnSync('gcc', ['-Wall', '-Werror', '-o', exe, source], { encoding: 'utf8' });
  if (cc.status !== 0 && /linux\/vfio\.h.*No such file/.test(cc.stderr))
    return { skip: '<linux/vfio.h> is not installed (CI installs it: apt-get install linux-libc-dev)' };
  if (cc.status !== 0) return { failure: `gcc could not compile ${source}:\n${cc.stderr}` };
  const run = spawnSync(exe, { encoding: 'utf8' });
  if (run.status !== 0) return { failure: `${exe} exited with ${run.status}: ${run.stderr}` };
  const facts = new Map<string, string>();
  for (const line of run.stdout.trim().split('\n')) {
    const [name, ...values] = line.split(' ');
    facts.set(name!, values.join(' '));
  }
  return { facts };
}

t.test('every constant, size and offset the VFIO backend uses matches <linux/vfio.h>', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'vfio-abi-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const printed = headerFacts(dir);
  if ('skip' in printed) return void t.pass('header comparison', { skip: printed.skip });
  if ('failure' in printed) return void t.fail(printed.failure);
  const { facts } = printed;
  const expected = new Map<string, string>();
  for (const table of [VFIO_IOCTL, VFIO_CONST, PCI_CONFIG, LINUX]) {
    for (const [name, value] of Object.entries(table)) expected.set(name, String(value));
  }
  for (const l of VFIO_LAYOUTS) {
    expected.set(l.name, String(l.size));
    for (const [field, spec] of Object.entries(l.fields)) {
      expected.set(`${l.name}.${field}`, `${spec.offset} ${WIDTH[spec.kind as keyof typeof WIDTH]}`);
    }
  }
  for (const [name, offset] of Object.entries(VFIO_FLEXIBLE_ARRAYS)) expected.set(name, String(offset));

  for (const [name, value] of expected) {
    t.equal(facts.get(name), value,
      `${name} = ${value}${facts.has(name) ? '' : ' (missing from test/helpers/vfio-abi.c: add it there)'}`);
  }
  // The other direction: the C side checks nothing the TypeScript side has dropped.
  t.same([...facts.keys()].filter((name) => !expected.has(name)), [],
    'no header value is printed that drivers/vfio no longer uses');
});

t.test('the ioctl numbers are _IO(";", 100 + n) as the facts document says', async (t) => {
  // include/uapi/linux/vfio.h (VFIO_BASE + n with _IO): no size or direction bits, so each number is 0x3B00 + 100 + n.
  const byDoc: Record<keyof typeof VFIO_IOCTL, number> = {
    VFIO_GET_API_VERSION: 0x3b64,
    VFIO_CHECK_EXTENSION: 0x3b65,
    VFIO_SET_IOMMU: 0x3b66,
    VFIO_GROUP_GET_STATUS: 0x3b67,
    VFIO_GROUP_SET_CONTAINER: 0x3b68,
    VFIO_GROUP_UNSET_CONTAINER: 0x3b69,
    VFIO_GROUP_GET_DEVICE_FD: 0x3b6a,
    VFIO_DEVICE_GET_REGION_INFO: 0x3b6c,
    VFIO_IOMMU_GET_INFO: 0x3b70,
    VFIO_IOMMU_MAP_DMA: 0x3b71,
    VFIO_IOMMU_UNMAP_DMA: 0x3b72,
  };
  t.same({ ...VFIO_IOCTL }, byDoc);
});
