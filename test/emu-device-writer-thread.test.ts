// Device.writesInCallerThread (drivers/device.ts): a software NIC whose model runs in the caller's
// thread (stepped, inline) says so, and the driver then reads CQE toggles and CREQ valid bits with
// plain loads; one in a worker thread does not, and the driver keeps its acquire loads. Either way a
// send and its receive complete with their bytes.
import t from 'tap';
import { Nic, Qp, Region } from '../lib/index.ts';
import { nicInternals } from '../lib/nic.ts';
import type { Result } from '../lib/index.ts';

function must<T>(r: Result<T>): T {
  if (!r.ok) throw new Error(r.error);
  return r.value;
}

const modes = [
  ['stepped', { stepped: true }, true], ['inline', {}, true], ['thread', { thread: true }, false],
] as const;
for (const [mode, options, local] of modes) {
  t.test(`${mode}: writesInCallerThread is ${local}, and a message gets through`, (t) => {
    const nic = must(Nic.open('emu', options));
    t.teardown(() => nic.close());
    t.equal(nicInternals(nic).device.writesInCallerThread, local);
    const a = must(Qp.make(nic));
    const b = must(Qp.make(nic));
    must(a.connect(b.endpoint));
    must(b.connect(a.endpoint));
    const ra = must(Region.alloc(nic, 4096));
    const rb = must(Region.alloc(nic, 4096));
    ra.bytes.set([1, 2, 3, 4, 5], 0);
    b.receive(rb, 0, 64);
    a.send(ra, 0, 5);
    t.same(b.wait('receive', 5e6), { ok: true, value: 5 });
    t.same(a.wait('send', 5e6), { ok: true, value: 5 });
    t.same([...rb.bytes.subarray(0, 5)], [1, 2, 3, 4, 5]);
    t.end();
  });
}
