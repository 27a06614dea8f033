/**
 * Child of test/vfio-koffi-lazy.test.ts, run with test/helpers/block-koffi.mjs preloaded: the
 * software NIC moves a message without koffi (4 KiB, so its frames are long enough for the ICRC's
 * native CRC and its rings big enough for page discarding: both fall back to JS); then opening a
 * PCI function (a fake sysfs whose function is bound to vfio-pci) asks for koffi and reports its
 * absence as an error value. Prints one JSON line.
 */
import { Nic, Qp, Region } from '../../lib/index.ts';
import { openVfio } from '../../drivers/vfio/index.ts';
import { makeFakeSysfs } from './fake-sysfs.ts';

const attempts = () => (globalThis as { koffiAttempts?: number }).koffiAttempts ?? -1;
const out: Record<string, unknown> = {};
const nic = Nic.open('emu');
if (!nic.ok) throw new Error(nic.error);
const MESSAGE = 4096;
const a = Qp.make(nic.value), b = Qp.make(nic.value), r = Region.alloc(nic.value, 2 * MESSAGE);
if (!a.ok || !b.ok || !r.ok) throw new Error('setup');
a.value.connect(b.value.endpoint);
b.value.connect(a.value.endpoint);
for (let i = 0; i < MESSAGE; i++) r.value.bytes[i] = (i * 7 + 3) & 0xff;
b.value.receive(r.value, MESSAGE, MESSAGE);
a.value.send(r.value, 0, MESSAGE);
out.send = a.value.wait('send', 10e6);
out.receive = b.value.wait('receive', 10e6);
out.bytesIntact = Buffer.compare(r.value.bytes.subarray(0, MESSAGE), r.value.bytes.subarray(MESSAGE)) === 0;
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
