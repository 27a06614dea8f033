import t from 'tap';
import { createProgress, PROGRESS_MIN_EXPECTED_MS } from '../scripts/cli/progress.ts';

function fakeStream(isTTY: boolean, columns = 80) {
  const writes: string[] = [];
  return { writes, stream: { isTTY, columns, write: (s: string) => { writes.push(s); return true; } } };
}

t.test('nothing is drawn when stderr is not a terminal', async (t) => {
  const { writes, stream } = fakeStream(false);
  const p = createProgress('send_bw', 1000, 60_000, stream);
  for (let i = 0; i <= 1000; i++) p.update(i);
  p.finish();
  t.same(writes, []);
});

t.test('nothing is drawn for a run expected to be short', async (t) => {
  const { writes, stream } = fakeStream(true);
  t.equal(PROGRESS_MIN_EXPECTED_MS, 2000);
  const p = createProgress('send_lat', 1000, 1500, stream);
  for (let i = 0; i <= 1000; i++) p.update(i);
  p.finish();
  t.same(writes, []);
});

t.test('on a terminal, a long run draws one bar per whole percent and erases it at the end', async (t) => {
  const { writes, stream } = fakeStream(true, 60);
  const p = createProgress('sizes', 200, 10_000, stream);
  for (let i = 0; i <= 200; i++) p.update(i);
  t.equal(writes.length, 101, '0% .. 100%, each once');
  t.ok(writes.every((w) => w.startsWith('\rsizes [') && !w.includes('\n')), 'redrawn in place on one line');
  t.match(writes[0], /\[ +\]   0%$/);
  t.match(writes[100], /\[#+\] 100%$/);
  p.finish();
  t.equal(writes[101], '\r\x1b[K');
});

t.test('a progress bar never writes a newline into the output', async (t) => {
  const { writes, stream } = fakeStream(true, 20);
  const p = createProgress('a-rather-long-label', 3, 5000, stream);
  p.update(1); p.update(3); p.update(7);
  p.finish();
  t.ok(writes.length > 0);
  t.notOk(writes.join('').includes('\n'));
});
