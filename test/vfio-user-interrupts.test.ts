// MSI-X through eventfds: a vector with an eventfd is raised by adding 1 to it; none is raised
// while MSI-X is off or bus mastering is disabled (an MSI is a memory write: PCI needs BME).
import t from 'tap';
import { MsixVectors } from '../drivers/emu/vfio-user/interrupts.ts';
import { makeEventfd, readEventfd, closeFd } from '../drivers/emu/vfio-user/socket-libc.ts';

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
