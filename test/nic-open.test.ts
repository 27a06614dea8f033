// Issue 2: Nic.open by name. The machine's state (an absent or non-bnxt PCI function) is a
// Result error; a malformed name is a misuse and throws.
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { Nic, InvalidArgument } from '../lib/index.ts';
import { emuChip } from '../drivers/emu/model/config.ts';

/** The chip software NICs opened without one are (RIG_BNXT_CHIP's, else the default). */
const CHIP = emuChip(undefined);

t.test('an absent PCI function is a clear error, not an exception', async (t) => {
  const r = Nic.open('0000:99:1f.7');
  t.notOk(r.ok);
  if (!r.ok) t.match(r.error, /0000:99:1f\.7.*not found/);
});

function nonBnxtFunction(): string | undefined {
  try {
    return readdirSync('/sys/bus/pci/devices').find(
      (d) => readFileSync(`/sys/bus/pci/devices/${d}/vendor`, 'utf8').trim() !== '0x14e4',
    );
  } catch {
    return undefined; // no sysfs PCI tree here
  }
}
const other = nonBnxtFunction();

t.test('a PCI function that is not a bnxt NIC is a clear error',
  { skip: other ? false : 'this machine shows no PCI function to try' }, async (t) => {
  const r = Nic.open(other!);
  t.notOk(r.ok);
  if (!r.ok) t.match(r.error, /not a Broadcom bnxt NIC function/);
});

t.test('malformed names throw InvalidArgument', async (t) => {
  for (const name of ['', 'eth0', 'emu:', 'emu:1', 'emu:0:5', 'emu:70000:1', '3b:00.0', '0000:3b:00.8', 'EMU']) {
    t.throws(() => Nic.open(name), InvalidArgument, JSON.stringify(name));
  }
  t.throws(() => Nic.open('emu', { mtu: 100 }), InvalidArgument, 'an MTU out of range');
  t.throws(() => Nic.open('emu', { ipv4: '10.1.1' }), InvalidArgument, 'a malformed IPv4 address');
  t.throws(() => Nic.open('emu', { mac: '02:00:00' }), InvalidArgument, 'a malformed MAC');
});

t.test('the software NIC opens by name and reports real-looking values', async (t) => {
  const r = Nic.open('emu', { stepped: true, ipv4: '10.77.0.9', mac: '02:00:00:00:00:09' });
  if (!r.ok) return t.fail(r.error);
  const i = r.value.info;
  t.equal(i.chip, CHIP.name);
  t.equal(i.mac, '02:00:00:00:00:09');
  t.equal(i.ipv4, '10.77.0.9');
  t.equal(i.gid, '0000:0000:0000:0000:0000:ffff:0a4d:0009', 'the RoCEv2 GID is IPv4-mapped');
  t.equal(i.linkUp, true);
  t.equal(i.quarantinedBytes, 0);
  r.value.close();
  t.ok(r.value.closed);
  t.throws(() => r.value.info, InvalidArgument, 'a closed NIC is a misuse');
});
