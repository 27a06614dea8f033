/**
 * Strict and counting software NICs: a broken invariant inside the model (here provoked with
 * engine.breakInvariant, as a bug in the model would throw) stops a strict model and fails
 * the driver's next wait, call or close, in both modes, without a hang; a counting model
 * counts it and keeps answering.
 */
import t from 'tap';
import { openEmu, type EmuDevice } from '../drivers/emu/host/device.ts';
import { macFromNumber, strictByDefault, STRICT_ENV } from '../drivers/emu/model/config.ts';
import { ModelInternalError } from '../drivers/emu/model/bus.ts';
import { bringUp } from '../lib/bnxt/bringup.ts';
import { Nic, nicInternals } from '../lib/nic.ts';

let id = 0x700;

function open(mode: 'stepped' | 'thread', strict: boolean): EmuDevice {
  const n = id++;
  const d = openEmu({
    mac: macFromNumber(n), ipv4: Uint8Array.from([10, 77, 7, n & 0xff]), mtu: 1500, cable: { kind: 'loop' },
    pcapPath: undefined, seed: 1, mode, strict,
  });
  if (!d.ok) throw new Error(d.error);
  return d.value;
}

const BROKEN = /software NIC internal error in engine: .*broken on purpose \(engine\.breakInvariant\): the test's/s;

t.test('tap runs every test with strict software NICs (package.json tap.test-env); the default elsewhere ' +
  'counts', async (t) => {
  t.equal(process.env[STRICT_ENV], '1');
  t.equal(strictByDefault(process.env), true);
  t.equal(strictByDefault({}), false, 'no variable: counting (the CLI, long runs)');
  t.equal(strictByDefault({ [STRICT_ENV]: '0' }), false);
});

for (const mode of ['stepped', 'thread'] as const) {
  t.test(`${mode}: a strict model's broken invariant fails the driver's next wait, then every call and ` +
    'close', async (t) => {
    const d = open(mode, true);
    const fn = bringUp(d, { firmwareTimeoutMs: 1000 });
    t.ok(fn.ok, 'a healthy model brings up');
    d.emu.engine.breakInvariant("the test's");
    // The next wait runs the model (stepped) or hears from the worker (thread): it throws.
    // Bounded by iterations, not time: the worker's failure report cuts the sleep short.
    t.throws(() => { for (let i = 0; i < 3000; i++) d.clock.sleep(10_000); }, BROKEN,
      'the wait throws the model\'s error');
    t.throws(() => d.clock.sleep(10), ModelInternalError, 'and so does every wait after (the model is stopped)');
    if (mode === 'thread') t.throws(() => d.emu.engine.counters(), ModelInternalError, 'a control call too');
    t.throws(() => d.close(), BROKEN, 'close throws it as well, so a test that caught the first still fails');
    t.doesNotThrow(() => d.close(), 'a second close does nothing');
  });

  t.test(`${mode}: a counting model counts a broken invariant and keeps answering`, async (t) => {
    const d = open(mode, false);
    t.teardown(() => d.close());
    d.emu.engine.breakInvariant("the test's");
    // A worker takes a control before its run's engine pass: the second look sees the run after the first.
    for (let i = 0; i < 1000 && d.emu.engine.internalErrors() === 0; i++) d.clock.sleep(1000);
    t.equal(d.emu.engine.counters().internalErrors, 1, 'counted once');
    t.match(d.emu.engine.lastInternalError() ?? '', /broken on purpose \(engine\.breakInvariant\): the test's/);
    const fn = bringUp(d, { firmwareTimeoutMs: 1000 });
    t.ok(fn.ok, 'the model still answers the firmware requests of a bring-up');
  });
}

t.test('a NIC opened by name in a test is strict (the environment says so)', async (t) => {
  const nic = Nic.open('emu', { stepped: true });
  if (!nic.ok) throw new Error(nic.error);
  const device = nicInternals(nic.value).device as EmuDevice;
  device.emu.engine.breakInvariant("the test's");
  t.throws(() => device.clock.sleep(10), BROKEN);
  t.throws(() => nic.value.close(), ModelInternalError, 'closing the NIC meets it too');
});
