// Issue 14 item 1: koffi (native code) is loaded only when a PCI device is opened, so the software
// NIC works where koffi's native part is missing, and a PCI open there is an error value naming
// koffi, not a crash. The child runs with koffi made unloadable (test/helpers/block-koffi.mjs).
import t from 'tap';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

t.test('software NIC without koffi; PCI open asks for it and says it is missing', async (t) => {
  const { stdout } = await promisify(execFile)(process.execPath, [
    '--import', './test/helpers/block-koffi.mjs', '--import', './scripts/register-ts.mjs',
    'test/helpers/no-koffi-child.ts',
  ], { cwd: ROOT, timeout: 120_000 });
  const out = JSON.parse(stdout.trim().split('\n').pop()!);
  t.same(out.send, { ok: true, value: 2 }, 'the send completes');
  t.same(out.receive, { ok: true, value: 2 }, 'the receive completes');
  t.same(out.bytes, [104, 105], 'bytes intact');
  t.equal(out.attemptsAfterEmu, 0, 'nothing asked for koffi while only the software NIC was used');
  t.equal(out.vfioThrew, undefined, 'opening the PCI function did not throw');
  t.match(out.vfio, /koffi/, 'it is an error that names koffi');
  t.ok(out.attemptsAfterVfio >= 1, 'koffi was asked for when the PCI function was opened');
});
