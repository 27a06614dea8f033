// MSI-X through eventfds: a vector with an eventfd is raised by adding 1 to it; none is raised
// while MSI-X is off or bus mastering is disabled (an MSI is a memory write: PCI needs BME).
import t from 'tap';
import { MsixVectors } from '../drivers/emu/host/vfio-user/interrupts.ts';
import { makeEventfd, readEventfd, closeFd } from '../drivers/emu/host/vfio-user/socket-libc.ts';

const setIrqs = (flags: number, start: number, count: number) => ({
  argsz: 20, flags, index: 2, start, count, bools: undefined,
});

t.test('eventfd per vector, raised by the device, replaced and closed by SET_IRQS', async (t) => {
  let may = true;
  const closed: number[] = [];
  const v = new MsixVectors(4, () => may, (fd) => { closed.push(fd); closeFd(fd); });
  const [a, b] = [makeEventfd(), makeEventfd()];
  t.equal(v.set(setIrqs(0x24, 1, 2), [a, b]), undefined);
  t.ok(v.signal(1));
  t.ok(v.signal(1));
  t.equal(readEventfd(a), 2, 'two raises add up in the counter');
  t.notOk(v.signal(0), 'vector 0 has no eventfd');
  may = false;
  t.notOk(v.signal(2), 'MSI-X off or bus master off: no message');
  t.equal(v.suppressed, 1);
  t.equal(readEventfd(b), 0);
  may = true;
  const c = makeEventfd();
  v.set(setIrqs(0x24, 2, 1), [c]);
  t.same(closed, [b], 'the replaced eventfd is closed');
  t.match(v.set(setIrqs(0x24, 3, 2), []), /device has 4/);
  v.set(setIrqs(0x21, 0, 0), []);
  t.same(closed.sort(), [a, b, c].sort(), 'MSI-X disabled: every eventfd closed');
  t.notOk(v.has(1));
});

t.test('a masked vector holds its message, pending, and sends it once at unmask (ACTION_MASK/UNMASK)', async (t) => {
  const pba: string[] = [];
  const v = new MsixVectors(4, () => true, (fd) => { closeFd(fd); }, (n, p) => { pba.push(`${n}:${p}`); });
  t.teardown(() => v.clear());
  const [a, b] = [makeEventfd(), makeEventfd()];
  t.equal(v.set(setIrqs(0x24, 0, 2), [a, b]), undefined);
  // DATA_NONE | ACTION_MASK (0x01 | 0x08) on vectors 0 and 1.
  t.equal(v.set(setIrqs(0x09, 0, 2), []), undefined);
  t.ok(v.isMasked(0) && v.isMasked(1));
  t.notOk(v.signal(0), 'masked: not sent');
  t.notOk(v.signal(0), 'a second message while masked');
  t.equal(readEventfd(a), 0, 'nothing reached the eventfd');
  t.ok(v.isPending(0), 'its pending bit is set');
  t.notOk(v.isPending(1), 'vector 1 sent nothing');
  t.same(pba, ['0:true'], 'the PBA bit went up once');
  // DATA_NONE | ACTION_UNMASK (0x01 | 0x10) on vector 0 only.
  t.equal(v.set(setIrqs(0x11, 0, 1), []), undefined);
  t.equal(readEventfd(a), 1, 'one message at unmask, however many were held');
  t.notOk(v.isPending(0));
  t.same(pba, ['0:true', '0:false']);
  t.ok(v.signal(0), 'unmasked: sent at once');
  t.equal(readEventfd(a), 1);
  t.ok(v.isMasked(1), 'vector 1 is still masked');
  t.equal(v.set(setIrqs(0x11, 1, 1), []), undefined);
  t.equal(readEventfd(b), 0, 'an unmask with nothing held sends nothing');
});

t.test('DATA_BOOL picks the vectors; a masked vector is unmasked and forgotten when MSI-X is disabled', async (t) => {
  const v = new MsixVectors(4, () => true);
  t.teardown(() => v.clear());
  const fds = [makeEventfd(), makeEventfd(), makeEventfd()];
  v.set(setIrqs(0x24, 0, 3), fds);
  // DATA_BOOL | ACTION_MASK (0x02 | 0x08): vectors 0 and 2, not 1.
  t.equal(v.set({ ...setIrqs(0x0a, 0, 3), bools: Uint8Array.from([1, 0, 1]) }, []), undefined);
  t.same([v.isMasked(0), v.isMasked(1), v.isMasked(2)], [true, false, true]);
  // DATA_BOOL | ACTION_TRIGGER (0x02 | 0x20): software triggers of vectors 1 and 2.
  t.equal(v.set({ ...setIrqs(0x22, 0, 3), bools: Uint8Array.from([0, 1, 1]) }, []), undefined);
  t.same(fds.map((fd) => readEventfd(fd)), [0, 1, 0], 'vector 1 fired, vector 2 is held');
  t.ok(v.isPending(2));
  t.match(v.set(setIrqs(0x0c, 0, 1), [makeEventfd()]), /eventfds only for ACTION_TRIGGER/, 'EVENTFD | MASK refused');
  v.set(setIrqs(0x21, 0, 0), []); // MSI-X disabled
  t.notOk(v.isPending(2), 'nothing held after MSI-X is disabled');
  t.notOk(v.isMasked(0));
});
