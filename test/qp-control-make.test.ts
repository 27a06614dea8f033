// Issue 3, Qp.make: one test per spec sentence (Rig_bnxt.Qp, "make"), on a stepped software NIC.
import t from 'tap';
import { Nic, Qp, InvalidArgument, Region, type NicOptions } from '../lib/index.ts';
import {
  openNic, controls, qpAttributes, holdings, requests, watchCommands, watchAllocations, overlaps, unwrap, OP, STATE,
  STATUS, emu,
} from './helpers/qp-control.ts';

const MAKE_COMMANDS = ['CREATE_CQ', 'CREATE_CQ', 'CREATE_QP', 'MODIFY_QP INIT'];
/** What a make refused at each of its commands destroys: what it created, last first. */
const UNDO_AFTER_REFUSAL = [
  [], ['DESTROY_CQ'], ['DESTROY_CQ', 'DESTROY_CQ'], ['DESTROY_QP', 'DESTROY_CQ', 'DESTROY_CQ'],
];

t.test('make nic is an unconnected queue pair of nic', async (t) => {
  const nic = openNic();
  const before = requests(nic);
  const watch = watchCommands(nic);
  const qp = unwrap(Qp.make(nic));
  watch.restore();
  t.same(watch.log.map((c) => c.name), MAKE_COMMANDS, 'two CQs, the QP, then RESET -> INIT');
  t.equal(requests(nic).hwrm, before.hwrm, 'no HWRM request');
  t.equal(qp.connected, false, 'not connected');
  t.equal(qp.nic, nic);
  const a = qpAttributes(nic, qp.number);
  t.ok(a, 'the firmware holds the QP under its number');
  t.equal(a?.state, STATE.INIT, 'in INIT: ready to be connected, not to send');
  t.same(controls(nic).roce.resources(), { initialized: true, qps: 1, cqs: 2, mrs: 0, gids: 1 });
  const r = unwrap(Region.alloc(nic, 64));
  t.throws(() => qp.send(r, 0, 8), InvalidArgument, 'an unconnected queue pair takes no send');
  t.throws(() => qp.receive(r, 0, 8), InvalidArgument, 'nor a receive');
  unwrap(qp.destroy());
  unwrap(r.deregister());
  nic.close();
});

t.test('its sends start at a random packet sequence number', async (t) => {
  const nic = openNic();
  const psns = new Set<number>();
  const qps: Qp[] = [];
  for (let i = 0; i < 64; i++) {
    const qp = unwrap(Qp.make(nic));
    qps.push(qp);
    const psn = qp.endpoint.psn;
    t.ok(Number.isInteger(psn) && psn >= 0 && psn < 2 ** 24, `PSN ${psn} is 24 bits`);
    psns.add(psn);
  }
  // 64 draws from 2^24 collide with probability ~1e-4; a fixed or counted PSN gives few values.
  t.ok(psns.size >= 62, `64 queue pairs, ${psns.size} distinct PSNs`);
  const sorted = [...psns].sort((a, b) => a - b);
  t.ok(sorted[sorted.length - 1]! - sorted[0]! > 2 ** 20, 'spread over the 24-bit space, not a counter');
  // A stepped NIC of another seed draws other PSNs (the same seed replays them: below).
  const other = openNic({ seed: 2 });
  const first = unwrap(Qp.make(other));
  t.not(first.endpoint.psn, qps[0]!.endpoint.psn, 'not the same first PSN on a NIC of another seed');
  // The NIC sends from it: after connecting, the requester's first PSN is the endpoint's.
  const qp = qps[0]!;
  unwrap(qp.connect(qp.endpoint));
  t.equal(qpAttributes(nic, qp.number)?.sqPsn, qp.endpoint.psn,
    'MODIFY_QP gave the firmware sq_psn = the endpoint\'s psn');
  t.equal((controls(nic).engine.qp(qp.number))?.['txPsn'], qp.endpoint.psn, 'the engine sends from it');
  for (const q of qps) unwrap(q.destroy());
  unwrap(first.destroy());
  other.close();
  nic.close();
});

t.test('the PSNs come from the device: a stepped NIC replays them from its seed, a threaded NIC (as hardware) draws ' +
  'them crypto-random', async (t) => {
  const firstPsns = (options: NicOptions): number[] => {
    const nic = unwrap(Nic.open('emu', options));
    try {
      const qps = Array.from({ length: 8 }, () => unwrap(Qp.make(nic)));
      const psns = qps.map((q) => q.endpoint.psn);
      for (const q of qps) unwrap(q.destroy());
      return psns;
    } finally {
      nic.close();
    }
  };
  const seeded = firstPsns({ stepped: true, seed: 77 });
  t.same(firstPsns({ stepped: true, seed: 77 }), seeded,
    'two stepped runs with seed 77 give the same 8 PSNs (a seed replays PSN-dependent paths, wraps included)');
  t.notSame(firstPsns({ stepped: true, seed: 78 }), seeded, 'seed 78 gives others');
  t.equal(new Set(seeded).size, 8, 'and within a run they differ');
  const threaded = firstPsns({});
  t.notSame(firstPsns({}), threaded,
    'two threaded NICs draw different PSNs (crypto-random; equal with probability 2^-192)');
  t.notSame(threaded, seeded, 'and not the seeded ones');
});

t.test('Error msg if the machine has no memory for its rings', async (t) => {
  const nic = openNic();
  // How many allocations a make takes.
  const count = watchAllocations(nic);
  unwrap(unwrap(Qp.make(nic)).destroy());
  count.restore();
  const allocations = count.calls();
  t.ok(allocations >= 5, `a make allocates ${allocations} buffers (rings and their page tables)`);
  const start = holdings(nic);
  for (let n = 1; n <= allocations; n++) {
    const watch = watchAllocations(nic, n);
    const made = Qp.make(nic);
    watch.restore();
    t.notOk(made.ok, `allocation ${n} fails: make is an Error`);
    if (!made.ok) t.match(made.error, /memory/, 'saying it had no memory');
    t.same(holdings(nic), start, `allocation ${n}: every buffer, table and firmware object given back`);
  }
  unwrap(unwrap(Qp.make(nic)).destroy());
  t.same(holdings(nic), start, 'and make works again');
  nic.close();
});

t.test('Error msg if the firmware refuses it; a refused make gives back what it took', async (t) => {
  const nic = openNic();
  const start = holdings(nic);
  for (let n = 1; n <= MAKE_COMMANDS.length; n++) {
    controls(nic).roce.refuseNth(n, STATUS.RESOURCES);
    const watch = watchCommands(nic);
    const made = Qp.make(nic);
    watch.restore();
    t.notOk(made.ok, `${MAKE_COMMANDS[n - 1]} refused: make is an Error`);
    if (!made.ok) {
      t.match(made.error, MAKE_COMMANDS[n - 1]!.split(' ')[0]!, 'naming the command');
      t.match(made.error, 'RESOURCES', 'and the firmware\'s status');
    }
    // What was created is destroyed, the QP before its CQs, in reverse order.
    const undo = watch.log.slice(n).map((c) => c.name);
    const expected = UNDO_AFTER_REFUSAL[n - 1]!;
    t.same(undo, expected, `after ${MAKE_COMMANDS[n - 1]}: ${expected.join(', ') || 'nothing to undo'}`);
    t.same(holdings(nic), start, `${MAKE_COMMANDS[n - 1]} refused: DMA memory, mappings and model tables as before`);
  }
  // A refusal of the undo itself: the CQ the firmware keeps still names its ring, so that memory must stay.
  controls(nic).roce.refuseNth(3, STATUS.RESOURCES); // CREATE_QP
  controls(nic).roce.refuseNth(4, STATUS.FAIL); // the first DESTROY_CQ of the undo
  const made = Qp.make(nic);
  t.notOk(made.ok);
  t.equal(controls(nic).roce.resources().cqs, 1, 'the firmware kept one CQ');
  t.ok(nic.info.quarantinedBytes >= 4096 * 32, 'its ring (4096 CQEs of 32 B) is held, not freed');
  const dma = emu(nic).dma;
  nic.close();
  t.equal(dma.allocatedBytes, 0, 'close gives everything back');
});

t.test('but for memory a firmware that stopped answering may still name', async (t) => {
  for (let n = 1; n <= MAKE_COMMANDS.length; n++) {
    const nic = openNic();
    const start = holdings(nic);
    const allocations = watchAllocations(nic);
    const watch = watchCommands(nic, (k) => { if (k === n) controls(nic).roce.silence(); });
    const made = Qp.make(nic);
    watch.restore();
    allocations.restore();
    t.notOk(made.ok, `silent at ${MAKE_COMMANDS[n - 1]}: make is an Error`);
    if (!made.ok) t.match(made.error, /did not answer/, 'saying the firmware did not answer');
    t.equal(watch.log.length, n, 'no command is sent after the one left unanswered');
    const info = nic.info;
    t.ok(info.quarantinedBytes > 0, `${info.quarantinedBytes} bytes quarantined`);
    // Every ring the firmware was told of stays allocated and mapped...
    const named = allocations.buffers;
    t.ok(info.dmaBytes >= start.dmaBytes + named.reduce((s, b) => s + b.length, 0),
      'the rings of the make stay allocated');
    t.equal(holdings(nic).iommuMappings, start.iommuMappings + named.length, 'and mapped');
    // ...and is never reused: new memory lands elsewhere.
    const dma = emu(nic).dma;
    const fresh = [];
    for (let i = 0; i < 16; i++) fresh.push(unwrap(dma.alloc(i % 2 ? 4096 : 600_000)));
    const reused = fresh.filter((f) => named.some((b) => overlaps(f.iova, f.length, b.iova, b.length)));
    t.equal(reused.length, 0, 'no new buffer overlaps quarantined memory');
    for (const f of fresh) dma.free(f);
    // A make on a channel known to be silent takes nothing and asks nothing.
    const held = holdings(nic);
    const asked = requests(nic);
    const again = Qp.make(nic);
    t.notOk(again.ok, 'a later make is an Error');
    t.same(holdings(nic), held, 'and takes no memory');
    t.same(requests(nic), asked, 'and sends no request');
    nic.close();
    t.equal(dma.allocatedBytes, 0, 'close releases the quarantine');
  }
});

t.test('an exception inside make gives its memory back at close', async (t) => {
  const nic = openNic();
  const start = holdings(nic);
  const watch = watchCommands(nic, (k) => { if (k === 3) throw new Error('injected'); });
  t.throws(() => Qp.make(nic), /injected/, 'the exception reaches the caller');
  watch.restore();
  t.ok(nic.info.dmaBytes > start.dmaBytes, 'the CQ rings the firmware holds stay allocated');
  const dma = emu(nic).dma;
  nic.close();
  t.equal(dma.allocatedBytes, 0, 'until close');
});

t.test('make throws InvalidArgument for what is not an open NIC, before any request', async (t) => {
  const nic = openNic();
  const before = requests(nic);
  t.throws(() => Qp.make({} as never), InvalidArgument);
  t.throws(() => Qp.make(undefined as never), InvalidArgument);
  t.same(requests(nic), before, 'no request sent');
  nic.close();
  t.throws(() => Qp.make(nic), InvalidArgument, 'a closed NIC');
});

t.test('make sends what each command needs: the QP names its two CQs and the PD', async (t) => {
  const nic = openNic();
  const watch = watchCommands(nic);
  const qp = unwrap(Qp.make(nic));
  watch.restore();
  const createQp = watch.log.find((c) => c.opcode === OP.CREATE_QP)!;
  t.equal(createQp.body['type'], 0x2, 'CREATE_QP type RC (roce_hsi.h CMDQ_CREATE_QP_TYPE_RC)');
  // roce_hsi.h CMDQ_CREATE_QP_QP_FLAGS_: FORCE_COMPLETION 0x2 (every WR signalled), and the two
  // bnxt_qplib_create_qp always sets, RESERVED_LKEY_ENABLE 0x4 and FR_PMR_ENABLED 0x8.
  // P7 adds VARIABLE_SIZED_WQE_ENABLED 0x10 and counts sq_size in 16-byte slots, 3 per one-SGE
  // WQE (bnxt_re_set_drv_mode; qplib_fp.c bnxt_qplib_create_qp).
  const variable = nic.info.chipFamily === 'P7';
  t.equal(createQp.body['qp_flags'], 0x2 | 0x4 | 0x8 | (variable ? 0x10 : 0), 'qp_flags as the kernel sets them');
  t.equal(createQp.body['sq_size'], variable ? 3 * 4096 : 4096, 'a send ring of 4096 WQEs (4095 entries)');
  t.equal(createQp.body['rq_size'], 4096, 'a 4096-slot receive ring');
  t.not(createQp.body['scq_cid'], createQp.body['rcq_cid'], 'a CQ for each ring');
  unwrap(qp.destroy());
  nic.close();
});
