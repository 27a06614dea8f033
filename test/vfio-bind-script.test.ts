// scripts/bind-vfio.sh against fake sysfs trees (SYSFS_ROOT): --dry-run prints the
// driver_override binding steps (Documentation/ABI/testing/sysfs-bus-pci) in order and changes nothing;
// bad input and unready machines get clear errors.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeFakeSysfs, type FakePciFunction } from './helpers/fake-sysfs.ts';

const script = fileURLToPath(new URL('../scripts/bind-vfio.sh', import.meta.url));
const BDF = '0000:3b:00.0';

function sysfs(t: { teardown(fn: () => void): void }, functions: FakePciFunction[]) {
  const fake = makeFakeSysfs(functions);
  t.teardown(() => fake.remove());
  return fake.root;
}

function run(root: string, ...args: string[]) {
  const r = spawnSync('bash', [script, ...args], { encoding: 'utf8', env: { ...process.env, SYSFS_ROOT: root } });
  return { status: r.status, out: r.stdout.trim().split('\n').filter(Boolean), err: r.stderr.trim() };
}

const read = (root: string, ...path: string[]) => readFileSync(join(root, ...path), 'utf8');

t.test('--dry-run binding a bnxt_en function prints unbind, driver_override, bind, and writes nothing', async (t) => {
  const root = sysfs(t, [{ address: BDF, driver: 'bnxt_en' }]);
  const dev = `${root}/bus/pci/devices/${BDF}`;
  const r = run(root, '--dry-run', BDF);
  t.equal(r.status, 0, r.err);
  t.same(
    r.out.filter((l) => l.startsWith('would')),
    [`would write '${BDF}' to ${dev}/driver/unbind`, `would write 'vfio-pci' to ${dev}/driver_override`,
      `would write '${BDF}' to ${root}/bus/pci/drivers/vfio-pci/bind`],
  );
  t.match(r.out.join('\n'), /IOMMU group 17, device node \/dev\/vfio\/17/);
  t.equal(read(root, 'bus/pci/devices', BDF, 'driver_override'), '(null)\n');
  t.equal(read(root, 'bus/pci/drivers/bnxt_en/unbind'), '');
  t.equal(read(root, 'bus/pci/drivers/vfio-pci/bind'), '');
});

t.test('--dry-run loads vfio-pci first when it is not loaded', async (t) => {
  const root = sysfs(t, [{ address: BDF, driver: null }]);
  rmSync(join(root, 'bus/pci/drivers/vfio-pci'), { recursive: true });
  const r = run(root, '--dry-run', BDF);
  t.equal(r.status, 0, r.err);
  t.same(r.out.filter((l) => l.startsWith('would')), [
    'would run: modprobe vfio-pci',
    `would write 'vfio-pci' to ${root}/bus/pci/devices/${BDF}/driver_override`,
    `would write '${BDF}' to ${root}/bus/pci/drivers/vfio-pci/bind`,
  ], 'an unbound function needs no unbind');
});

t.test('--dry-run --hugepages N reserves N 2 MiB pages', async (t) => {
  const root = sysfs(t, [{ address: BDF, driver: 'vfio-pci' }]);
  const r = run(root, '--dry-run', '--hugepages', '512', BDF);
  t.equal(r.status, 0, r.err);
  t.match(r.out.join('\n'), /0000:3b:00\.0 is already bound to vfio-pci/);
  t.same(r.out.filter((l) => l.startsWith('would')), [
    `would write '512' to ${root}/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages`,
  ]);
  t.equal(read(root, 'kernel/mm/hugepages/hugepages-2048kB/nr_hugepages'), '0\n');
  t.same(run(root, '--dry-run', '--hugepages=4').out,
    [`would write '4' to ${root}/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages`], 'hugepages alone, no address');
});

t.test('--dry-run --unbind gives the function back to bnxt_en', async (t) => {
  const root = sysfs(t, [{ address: BDF, driver: 'vfio-pci' }]);
  const dev = `${root}/bus/pci/devices/${BDF}`;
  const r = run(root, '--dry-run', '--unbind', BDF);
  t.equal(r.status, 0, r.err);
  t.same(r.out.filter((l) => l.startsWith('would')), [
    `would write '${BDF}' to ${dev}/driver/unbind`,
    `would write '' to ${dev}/driver_override`,
    `would write '${BDF}' to ${root}/bus/pci/drivers/bnxt_en/bind`,
  ]);
  const back = run(sysfs(t, [{ address: BDF, driver: 'bnxt_en' }]), '--dry-run', '--unbind', BDF);
  t.same(back.out, [`bind-vfio: ${BDF} is already bound to bnxt_en`]);
});

t.test('a group member left on another driver is named', async (t) => {
  const root = sysfs(t, [{ address: BDF, driver: 'bnxt_en' }, { address: '0000:3b:00.1', driver: 'bnxt_en' }]);
  const r = run(root, '--dry-run', BDF);
  t.equal(r.status, 0);
  t.match(r.err, new RegExp('0000:3b:00\\.1 shares IOMMU group 17 and is bound to bnxt_en: ' +
    'bind it too \\(scripts/bind-vfio\\.sh 0000:3b:00\\.1\\)'));
});

t.test('no IOMMU group yet under an IOMMU that groups a device when a driver binds it (virtio-iommu): the ' +
  'bind goes ahead', async (t) => {
  const root = sysfs(t, [{ address: BDF, driver: null, iommuGroup: null }]);
  mkdirSync(join(root, 'class', 'iommu', 'virtio0'), { recursive: true });
  const r = run(root, '--dry-run', BDF);
  t.equal(r.status, 0, r.err);
  t.match(r.out.join('\n'), /0000:3b:00\.0 has no IOMMU group yet: the IOMMU \(virtio0\) gives it one when vfio-pci/);
  t.same(r.out.filter((l) => l.startsWith('would')), [
    `would write 'vfio-pci' to ${root}/bus/pci/devices/${BDF}/driver_override`,
    `would write '${BDF}' to ${root}/bus/pci/drivers/vfio-pci/bind`,
  ]);
  t.match(r.out.join('\n'), /its IOMMU group is known once it is bound/);
});

t.test('unready machines and bad input get clear errors and a failing exit status', async (t) => {
  const root = sysfs(t, [
    { address: BDF, driver: 'bnxt_en', iommuGroup: null },
    { address: '0000:5e:00.0', vendor: '0x8086', driver: 'ixgbe' },
  ]);
  const cases: [string[], RegExp][] = [
    [['--dry-run', '0000:99:00.0'], /no PCI function 0000:99:00\.0 .*does not exist/],
    [['--dry-run', BDF], /0000:3b:00\.0 has no IOMMU group: enable the IOMMU .*intel_iommu=on.*amd_iommu=on/],
    [['--dry-run', '0000:5e:00.0'], /0000:5e:00\.0 is not a Broadcom device \(vendor 0x8086\)/],
    [['--dry-run', '3b:00.0'], /'3b:00\.0' is not a PCI address of the form DDDD:BB:DD\.F/],
    [['--dry-run', '0000:3b:00.9'], /is not a PCI address/],
    [['--dry-run', '--hugepages', 'many', BDF], /--hugepages takes a whole number/],
    [['--dry-run', '--frobnicate', BDF], /unknown option '--frobnicate'/],
    [['--dry-run', BDF, '0000:3b:00.1'], /only one PCI address at a time/],
  ];
  for (const [args, message] of cases) {
    const r = run(root, ...args);
    t.not(r.status, 0, `${args.join(' ')} fails`);
    t.match(r.err, message, args.join(' '));
    t.same(r.out.filter((l) => l.startsWith('would')), [], `${args.join(' ')}: no action printed`);
  }
  t.equal(run(root).status, 2, 'no arguments: usage');
});

t.test('without --dry-run the writes land, and a bind that did not take effect is reported', async (t) => {
  // The fake tree never rebinds anything, so the script must notice the driver did not change.
  const root = sysfs(t, [{ address: BDF, driver: 'bnxt_en' }]);
  const r = run(root, '--hugepages', '8', BDF);
  t.equal(read(root, 'bus/pci/drivers/bnxt_en/unbind'), `${BDF}\n`);
  t.equal(read(root, 'bus/pci/devices', BDF, 'driver_override'), 'vfio-pci\n');
  t.equal(read(root, 'bus/pci/drivers/vfio-pci/bind'), `${BDF}\n`);
  t.equal(r.status, 1);
  t.match(r.err, /0000:3b:00\.0 is still bound to bnxt_en after binding it to vfio-pci: see 'dmesg \| tail'/);

  const huge = run(root, '--hugepages', '8');
  t.equal(huge.status, 0, huge.err);
  t.equal(read(root, 'kernel/mm/hugepages/hugepages-2048kB/nr_hugepages'), '8\n');
  t.same(huge.out, ['bind-vfio: 8 hugepages of 2 MiB reserved']);
});
