// openVfio against fake sysfs trees (and, past sysfs, a fake kernel behind the Libc
// interface): each way a machine can be unready gives its own clear error, the full VFIO
// sequence runs in the documented order, and everything is released in reverse.
import t from 'tap';
import { openVfio } from '../drivers/vfio/open.ts';
import { InvalidArgument } from '../lib/errors.ts';
import { makeFakeSysfs, type FakePciFunction } from './helpers/fake-sysfs.ts';
import { FakeVfioKernel } from './helpers/fake-vfio-kernel.ts';

const BDF = '0000:3b:00.0';

function tree(t: Tap, functions: FakePciFunction[]) {
  const fake = makeFakeSysfs(functions);
  t.teardown(() => fake.remove());
  return fake;
}
type Tap = { teardown(fn: () => void): void };

function errorOf(r: { ok: boolean; error?: string }): string {
  return r.ok ? '(opened)' : (r.error ?? '');
}

t.test('malformed addresses are misuse: InvalidArgument', async (t) => {
  for (const bad of [
    '', '3b:00.0', '0000:3b:00', '0000:3b:00.8', '0000:3b:20.0', '0000:3g:00.0', ' 0000:3b:00.0', '00000:3b:00.0',
  ]) {
    t.throws(() => openVfio(bad, { sysfsRoot: '/nonexistent' }), InvalidArgument, JSON.stringify(bad));
  }
  t.throws(() => openVfio(undefined as unknown as string), InvalidArgument);
});

t.test('an absent device is an error naming the address', async (t) => {
  const { root } = tree(t, []);
  t.match(errorOf(openVfio(BDF, { sysfsRoot: root })), /PCI function 0000:3b:00\.0 not found .*lspci -D/);
});

t.test('a device that is not a bnxt PF is refused', async (t) => {
  const { root } = tree(t, [
    { address: BDF, vendor: '0x8086', device: '0x1572' },
    { address: '0000:3b:00.1', vendor: '0x14e4', device: '0x1234' },
    { address: '0000:3b:00.2', vendor: '0x14e4', device: '0x1806' },
  ]);
  t.match(errorOf(openVfio(BDF, { sysfsRoot: root })),
    /0000:3b:00\.0 is not a Broadcom bnxt NIC function \(vendor 0x8086, device 0x1572\)/);
  t.match(errorOf(openVfio('0000:3b:00.1', { sysfsRoot: root })),
    /not a Broadcom bnxt NIC function \(vendor 0x14e4, device 0x1234\)/);
  t.match(errorOf(openVfio('0000:3b:00.2', { sysfsRoot: root })), /is a bnxt virtual function .*use the PF/);
});

t.test('a bnxt function still bound to bnxt_en says how to rebind it', async (t) => {
  const { root } = tree(t, [{ address: BDF, driver: 'bnxt_en' }, { address: '0000:3b:00.1', driver: null }]);
  t.equal(errorOf(openVfio(BDF, { sysfsRoot: root })),
    '0000:3b:00.0 is bound to bnxt_en: run scripts/bind-vfio.sh 0000:3b:00.0');
  t.equal(errorOf(openVfio('0000:3b:00.1', { sysfsRoot: root })),
    '0000:3b:00.1 is not bound to any driver: run scripts/bind-vfio.sh 0000:3b:00.1');
});

t.test('upper-case addresses are accepted and reported in sysfs spelling', async (t) => {
  const { root } = tree(t, [{ address: '0000:af:00.1', driver: 'bnxt_en' }]);
  t.equal(errorOf(openVfio('0000:AF:00.1', { sysfsRoot: root })),
    '0000:af:00.1 is bound to bnxt_en: run scripts/bind-vfio.sh 0000:af:00.1');
});

t.test('no IOMMU group tells the user to enable the IOMMU', async (t) => {
  const { root } = tree(t, [{ address: BDF, iommuGroup: null }]);
  const e = errorOf(openVfio(BDF, { sysfsRoot: root }));
  t.match(e, /0000:3b:00\.0 has no IOMMU group/);
  t.match(e, /intel_iommu=on/);
  t.match(e, /amd_iommu/);
});

t.test('a missing /dev/vfio/vfio tells the user to load vfio-pci (real libc, fake /dev)', async (t) => {
  const { root, devRoot } = tree(t, [{ address: BDF }]);
  t.equal(errorOf(openVfio(BDF, { sysfsRoot: root, devRoot })),
    `${devRoot}/vfio/vfio does not exist: load VFIO with 'modprobe vfio-pci'`);
});

function kernelFor(t: Tap) {
  const fake = tree(t, [{ address: BDF }]);
  const kernel = new FakeVfioKernel(fake.devRoot, '17', BDF);
  return { kernel, options: { sysfsRoot: fake.root, devRoot: fake.devRoot, libc: kernel } };
}

t.test('opens through the documented sequence, maps the BARs and enables Memory Space + Bus Master', async (t) => {
  const { kernel, options } = kernelFor(t);
  const opened = openVfio(BDF, options);
  if (!opened.ok) return void t.fail(opened.error);
  const device = opened.value;
  t.same(device.identity, { address: BDF, vendorId: 0x14e4, deviceId: 0x1750 });
  t.equal(device.chip.family, 'P5');
  t.same(kernel.log, [
    'open container', 'open group', 'set container', 'set iommu type1v2', 'open device', 'map BAR0', 'map BAR2',
    'command 0x0406',
  ]);
  t.equal(kernel.commandRegister, 0x0406, 'Memory Space (0x2) and Bus Master (0x4) set, INTx disable (0x400) kept');

  // The BARs are the device's memory, sized by GET_REGION_INFO.
  const bar0 = device.bar(0);
  const bar2 = device.bar(2);
  t.equal(bar0.size, 0x10000);
  t.equal(bar2.size, 0x20000);
  bar0.write32(0x100, 0x1234);
  t.same([...kernel.bars.get('BAR0')!.subarray(0x100, 0x104)], [0x34, 0x12, 0, 0]);
  bar2.doorbell64(0x10000, 0x1, 0xa0000002);
  t.same([...kernel.bars.get('BAR2')!.subarray(0x10000, 0x10008)], [1, 0, 0, 0, 2, 0, 0, 0xa0]);
  t.throws(() => device.bar(1 as 0), InvalidArgument);

  // DMA memory is mapped into the container at an IOVA inside the reported windows, above 4 GiB.
  const buffer = device.dma.alloc(5000);
  if (!buffer.ok) return void t.fail(buffer.error);
  t.equal(buffer.value.iova, 2 ** 32);
  t.equal(kernel.dma.get(2 ** 32)?.size, 8192);
  t.equal(device.clock.nowNs() > 0, true);

  device.close();
  t.same(kernel.log.slice(8),
    ['map dma 0x100000000 +8192', 'command 0x0402', 'release BAR2', 'release BAR0', 'unmap dma 0x100000000 +8192',
    'release dma memory', 'close device', 'unset container', 'close group', 'close container'],
    'close undoes open in reverse');
  t.same(kernel.openFds(), [], 'no fd left open');
  t.equal(kernel.dma.size, 0, 'no DMA mapping left');
  t.throws(() => device.bar(0), InvalidArgument, 'a closed device hands out no BAR');
  device.close();
  t.equal(kernel.log.length, 18, 'a second close does nothing');
});

const failures: [string, (k: FakeVfioKernel) => void, RegExp, string[]][] = [
  ['a wrong VFIO API version', (k) => (k.faults.apiVersion = 1), /speaks VFIO API version 1/, [
    'open container', 'close container',
  ]],
  ['no type1v2 IOMMU', (k) => (k.faults.noType1v2 = true), /no type1v2 IOMMU: enable the IOMMU/, [
    'open container', 'close container',
  ]],
  ['a group already open elsewhere', (k) => (k.faults.groupBusy = true),
    /vfio\/17 is already open: another process owns IOMMU group 17/, ['open container', 'close container']],
  ['a group that is not viable', (k) => (k.faults.notViable = true), /IOMMU group 17 is not viable/, [
    'open container', 'open group', 'close group', 'close container',
  ]],
  ['/dev/vfio/vfio that this user may not open', (k) => (k.faults.containerDenied = true),
    /permission denied opening .*\/vfio\/vfio: run as root/, []],
  ['a group node that this user may not open', (k) => (k.faults.groupDenied = true),
    new RegExp("permission denied opening .*/vfio/17: run as root, or 'sudo chown \\$USER .*/vfio/17' and raise " +
      'the locked-memory limit \\(ulimit -l\\)'),
    ['open container', 'close container']],
  ['an IOMMU without interrupt remapping (type1 refuses the group: EPERM)',
    (k) => (k.faults.noInterruptRemapping = true),
    /VFIO_SET_IOMMU \(type1v2\) failed: EPERM: the IOMMU gives no interrupt remapping .*intremap=on.*unsafe_interrupts/,
    ['open container', 'open group', 'set container', 'unset container', 'close group', 'close container']],
  [
    'a device fd refused',
    (k) => (k.faults.deviceFdRefused = true),
    /VFIO_GROUP_GET_DEVICE_FD for 0000:3b:00\.0 failed: EPERM/,
    ['open container', 'open group', 'set container', 'set iommu type1v2', 'unset container', 'close group',
      'close container'],
  ],
  [
    'BAR2 that cannot be mmapped',
    (k) => (k.faults.bar2NotMappable = true),
    /BAR2 cannot be mmapped/,
    ['open container', 'open group', 'set container', 'set iommu type1v2', 'open device', 'map BAR0', 'release BAR0',
      'close device', 'unset container', 'close group', 'close container'],
  ],
];
for (const [what, inject, message, log] of failures) {
  t.test(`${what}: a clear error, and everything acquired is released in reverse`, async (t) => {
    const { kernel, options } = kernelFor(t);
    inject(kernel);
    t.match(errorOf(openVfio(BDF, options)), message);
    t.same(kernel.log, log);
    t.same(kernel.openFds(), []);
  });
}

t.test('a group node that does not exist (the function is not on vfio-pci) says to bind it', async (t) => {
  const fake = tree(t, [{ address: BDF }]);
  const kernel = new FakeVfioKernel(fake.devRoot, '18', BDF); // the kernel has group 18, sysfs says 17
  t.match(errorOf(openVfio(BDF, { sysfsRoot: fake.root, devRoot: fake.devRoot, libc: kernel })),
    /vfio\/17 does not exist: bind 0000:3b:00\.0 to vfio-pci with scripts\/bind-vfio\.sh 0000:3b:00\.0/);
  t.same(kernel.openFds(), []);
});

t.test('a group with another device in it opens when that device has no driver or is on vfio-pci', async (t) => {
  for (const driver of [null, 'vfio-pci']) {
    const fake = tree(t, [{ address: BDF }, { address: '0000:3b:00.1', driver }]);
    const kernel = new FakeVfioKernel(fake.devRoot, '17', BDF);
    const opened = openVfio(BDF, { sysfsRoot: fake.root, devRoot: fake.devRoot, libc: kernel });
    t.ok(opened.ok, `the other member ${driver === null ? 'unbound' : 'on vfio-pci'}: ${errorOf(opened)}`);
    if (opened.ok) opened.value.close();
  }
});

t.test('the members blocking a non-viable group are named', async (t) => {
  const fake = tree(t, [{ address: BDF }, { address: '0000:3b:00.1', driver: 'bnxt_en' }]);
  const kernel = new FakeVfioKernel(fake.devRoot, '17', BDF);
  kernel.faults.notViable = true;
  t.match(errorOf(openVfio(BDF, { sysfsRoot: fake.root, devRoot: fake.devRoot, libc: kernel })),
    /0000:3b:00\.1 is bound to bnxt_en.*scripts\/bind-vfio\.sh 0000:3b:00\.1/);
});

t.test('a refused DMA mapping is an error value from alloc, and the device stays usable', async (t) => {
  const { kernel, options } = kernelFor(t);
  const opened = openVfio(BDF, options);
  if (!opened.ok) return void t.fail(opened.error);
  kernel.faults.mapDmaRefused = true;
  const r = opened.value.dma.alloc(4096);
  t.match(errorOf(r), /IOMMU refused .*RLIMIT_MEMLOCK/);
  kernel.faults.mapDmaRefused = false;
  t.equal(opened.value.dma.alloc(4096).ok, true);
  opened.value.close();
  t.same(kernel.openFds(), []);
});
