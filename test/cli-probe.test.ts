// Issue 14 item 6: `rig-bnxt probe` with no device lists the bnxt functions in sysfs with their
// driver binding (a fake sysfs here), -v adds the capabilities, --json prints the same as data.
import t from 'tap';
import { makeFakeSysfs } from './helpers/fake-sysfs.ts';
import { listBnxtFunctions, runProbe } from '../scripts/cli/run-probe.ts';
import { emuChip } from '../drivers/emu/model/config.ts';

/** The chip software NICs opened without one are (RIG_BNXT_CHIP's, else the default). */
const CHIP = emuChip(undefined);

t.test('no device: every bnxt function with its driver, and whether rig-bnxt can open it', async (t) => {
  const fake = makeFakeSysfs([
    { address: '0000:3b:00.0', device: '0x1750', driver: 'vfio-pci', iommuGroup: '17' },
    { address: '0000:3b:00.1', device: '0x1750', driver: 'bnxt_en', iommuGroup: '18' },
    { address: '0000:3b:00.2', device: '0x1806', driver: null, iommuGroup: '19' },
    { address: '0000:00:1f.0', vendor: '0x8086', device: '0x1234', driver: null },
  ]);
  t.teardown(() => fake.remove());
  const list = listBnxtFunctions(fake.root);
  t.same(list.map((f) => [f.address, f.kind, f.driver, f.usable]), [
    ['0000:3b:00.0', 'PF', 'vfio-pci', true],
    ['0000:3b:00.1', 'PF', 'bnxt_en', false],
    ['0000:3b:00.2', 'VF', null, false],
  ], 'bnxt functions only (not the Intel one), with their binding');
  t.match(list[0]!.part, /BCM57508/);
  const lines: string[] = [];
  t.equal(
    runProbe({ command: 'probe', device: undefined, verbose: false, json: false }, (l) => lines.push(l), fake.root), 0,
  );
  const text = lines.join('\n');
  t.match(text, /0000:3b:00\.0\s+0x1750\s+BCM57508.*vfio-pci\s+17/);
  t.match(text, /0000:3b:00\.1.*bnxt_en.*bind it: scripts\/bind-vfio\.sh 0000:3b:00\.1/);
  t.match(text, /0000:3b:00\.2.*virtual function.*rig-bnxt drives PFs/);
  const json: string[] = [];
  runProbe({ command: 'probe', device: undefined, verbose: false, json: true }, (l) => json.push(l), fake.root);
  t.same(JSON.parse(json.join('\n')).functions.map((f: { address: string }) => f.address), [
    '0000:3b:00.0', '0000:3b:00.1', '0000:3b:00.2',
  ]);
  const none: string[] = [];
  const empty = makeFakeSysfs([]);
  t.teardown(() => empty.remove());
  runProbe({ command: 'probe', device: undefined, verbose: false, json: false }, (l) => none.push(l), empty.root);
  t.match(none.join('\n'), /no bnxt functions found/);
});

t.test('a device: -v adds capabilities; --json the same as data', async (t) => {
  const plain: string[] = [];
  t.equal(runProbe({ command: 'probe', device: 'emu', verbose: false, json: false }, (l) => plain.push(l)), 0);
  const verbose: string[] = [];
  runProbe({ command: 'probe', device: 'emu', verbose: true, json: false }, (l) => verbose.push(l));
  t.ok(verbose.length > plain.length, '-v prints more');
  t.match(verbose.join('\n'), /ring entries:\s+4095/);
  const json: string[] = [];
  runProbe({ command: 'probe', device: 'emu', verbose: true, json: true }, (l) => json.push(l));
  t.match(JSON.parse(json.join('\n')), { chip: CHIP.name, maxQps: Number, ringEntries: 4095 });
});
