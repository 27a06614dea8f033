// Issue 3: 10,000 make/connect/destroy cycles return DMA memory and every model table to where
// they started (stepped software NIC, so the run is deterministic and single-threaded).
import t from 'tap';
import { Qp } from '../lib/index.ts';
import { openNic, controls, holdings, requests, unwrap } from './helpers/qp-control.ts';

const CYCLES = 10_000;
const CHECK_EVERY = 2_500;

t.test(`${CYCLES} make/connect/destroy cycles give back everything they took`, async (t) => {
  const nic = openNic();
  // A queue pair that lives through the run: the cycles connect to it and to themselves.
  const anchor = unwrap(Qp.make(nic));
  const start = holdings(nic);
  const asked = requests(nic);
  t.same(start.roce, { initialized: true, qps: 1, cqs: 2, mrs: 0, gids: 1 });
  const numbers = new Set<number>();
  for (let i = 1; i <= CYCLES; i++) {
    const qp = unwrap(Qp.make(nic));
    numbers.add(qp.number);
    unwrap(qp.connect(i % 2 === 0 ? qp.endpoint : anchor.endpoint));
    unwrap(qp.destroy());
    if (i % CHECK_EVERY === 0)
      t.same(holdings(nic), start, `after ${i} cycles: DMA memory, mappings and every table as at the start`);
  }
  const sent = requests(nic);
  t.equal(sent.rcfw - asked.rcfw, CYCLES * 9, '9 RoCE commands a cycle: 4 to make, 2 to connect, 3 to destroy');
  t.equal(sent.seen - asked.seen, CYCLES * 9, 'and the model took each');
  t.equal(sent.hwrm, asked.hwrm, 'no HWRM request');
  t.ok(numbers.size > 1, `the firmware handed out ${numbers.size} QP numbers`);
  t.equal(controls(nic).roce.stats().internalErrors, 0, 'the firmware model met no internal error');
  t.equal(controls(nic).engine.internalErrors(), 0, 'nor the engine');
  t.equal(controls(nic).engine.dmaWritesAfterDestroy(), 0);
  unwrap(anchor.destroy());
  nic.close();
});
