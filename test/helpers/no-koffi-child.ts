/**
 * Child of test/vfio-koffi-lazy.test.ts, run with test/helpers/block-koffi.mjs preloaded: the
 * software NIC moves a message without koffi; then opening a PCI function (a fake sysfs whose
 * function is bound to vfio-pci) asks for koffi and reports its absence as an error value.
 * Prints one JSON line.
 */
import { Nic, Qp, Region } from '../../lib/index.ts';
import { openVfio } from '../../drivers/vfio/index.ts';
import { makeFakeSysfs } from './fake-sysfs.ts';

const attempts = () => (globalThis as { koffiAttempts?: number }).koffiAttempts ?? -1;
const out: Record<string, unknown> = {};
const nic = Nic.open('emu');
if (!nic.ok) throw new Error(nic.error);
const a = Qp.make(nic.value), b = Qp.make(nic.value), r = Region.alloc(nic.value, 8192);
if (!a.ok || !b.ok || !r.ok) throw new Error('setup');
a.value.connect(b.value.endpoint);
b.value.connect(a.value.endpoint);
r.value.bytes.set([104, 105], 0);
b.value.receive(r.value, 4096, 16);
a.value.send(r.value, 0, 2);
out.send = a.value.wait('send', 10e6);
out.receive = b.value.wait('receive', 10e6);
out.bytes = [...r.value.bytes.subarray(4096, 4098)];
nic.value.close();
out.attemptsAfterEmu = attempts();

const fake = makeFakeSysfs([{ address: '0000:3b:00.0' }]);
try {
  const opened = openVfio('0000:3b:00.0', { sysfsRoot: fake.root, devRoot: fake.devRoot });
  out.vfio = opened.ok ? 'opened' : opened.error;
} catch (e) {
  out.vfioThrew = (e as Error).message;
} finally {
  fake.remove();
}
out.attemptsAfterVfio = attempts();
console.log(JSON.stringify(out));
