/**
 * Forty numbered frames each way between two cables (A's of growing lengths from one reused
 * buffer, zeroed as soon as send returns: a cable is done with a frame then), each checked byte
 * for byte and in order, and the counters agreeing. `deliver` is how the cables' frames reach their
 * receivers (the event loop, or an owner's delivery calls); `beforeDelivery` may assert what holds
 * once everything is sent and before the first delivery.
 */
import type { Test } from 'tap';
import type { Cable, CableStats } from '../../drivers/emu/model/cable/cable.ts';
import { numberedFrame } from './wait.ts';

type CountingCable = Cable & { readonly stats: CableStats };

export async function exchangeNumberedFrames(
  t: Test, a: CountingCable, b: CountingCable,
  deliver: (done: () => boolean, what: string) => Promise<void>,
  beforeDelivery?: (arrived: number) => void,
): Promise<void> {
  const atA: number[][] = [];
  const atB: number[][] = [];
  a.setReceiver((frame, length) => atA.push([...frame.subarray(0, length)]));
  b.setReceiver((frame, length) => atB.push([...frame.subarray(0, length)]));
  const buf = new Uint8Array(2000);
  for (let seq = 0; seq < 40; seq++) {
    const f = numberedFrame(seq, 60 + seq * 37);
    buf.set(f);
    a.send(buf, f.length);
    buf.fill(0);
    b.send(numberedFrame(1000 + seq, 60), 60);
  }
  beforeDelivery?.(atA.length + atB.length);
  await deliver(() => atA.length === 40 && atB.length === 40, '40 frames each way');
  for (let seq = 0; seq < 40; seq++) {
    t.same(atB[seq], [...numberedFrame(seq, 60 + seq * 37)], `A -> B frame ${seq}`);
    t.same(atA[seq], [...numberedFrame(1000 + seq, 60)], `B -> A frame ${seq}`);
  }
  t.equal(a.stats.framesSent, 40);
  t.equal(b.stats.framesReceived, 40);
  t.equal(b.stats.bytesReceived, a.stats.bytesSent);
}
