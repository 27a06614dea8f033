// Issue 14 item 1: koffi (native code) is needed only when a PCI device is opened, so the software
// NIC works where koffi's native part is missing, and a PCI open there is an error value naming
// koffi, not a crash. The software NIC may ask for koffi for its optional accelerations (the ICRC's
// libdeflate CRC, discarding reused DMA pages, the UDP cable's libc sockets: docs/dependencies.md);
// without it each falls back to JS silently and moves the same bytes. The child runs with koffi
// made unloadable (test/helpers/block-koffi.mjs).
import t from 'tap';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

t.test('software NIC without koffi; PCI open asks for it and says it is missing', async (t) => {
  const { stdout, stderr } = await promisify(execFile)(process.execPath, [
    '--import', './test/helpers/block-koffi.mjs', '--import', './scripts/register-ts.mjs',
    'test/helpers/no-koffi-child.ts',
  ], { cwd: ROOT, timeout: 120_000 });
  const out = JSON.parse(stdout.trim().split('\n').pop()!);
  t.same(out.send, { ok: true, value: 4096 }, 'the send completes');
  t.same(out.receive, { ok: true, value: 4096 }, 'the receive completes');
  t.equal(out.bytesIntact, true, 'all 4096 bytes intact');
  t.equal(stderr, '', 'the software NIC fell back without a word: nothing on stderr');
  t.equal(out.vfioThrew, undefined, 'opening the PCI function did not throw');
  t.match(out.vfio, /koffi/, 'it is an error that names koffi');
  t.ok(out.attemptsAfterVfio > out.attemptsAfterEmu, 'koffi was asked for when the PCI function was opened');
});
