// bnxt_en's notification chain on the software NIC (Linux bnxt.c bnxt_poll_p5,
// __bnxt_poll_cqs_done, bnxt_hwrm_handler; entry layouts of bnxt_hsi.h hwrm_cmpl and bnxt.h
// nqe_cn; doorbells of bnxt.h DBR_*), and bnxt_re's CREQ/NQ vectors. Bytes are read at the
// headers' offsets by hand, doorbells built from the header's bit positions.
import t from 'tap';
import { NicBus } from '../drivers/emu/model/bus.ts';
import { FunctionResources } from '../drivers/emu/model/firmware/function-resources.ts';
import { l2Of } from '../drivers/emu/model/firmware/hwrm-l2.ts';
import { L2Engine } from '../drivers/emu/model/l2/l2-engine.ts';
import { RoceInterrupts } from '../drivers/emu/host/vfio-user/roce-interrupts.ts';
import { macFromNumber } from '../drivers/emu/model/config.ts';
import { hostServices } from '../drivers/emu/host/services.ts';

const CQ_BASE = 0x10_0000;
const NQ_BASE = 0x20_0000;
const CQ_ID = 7;
const NQ_ID = 3;
const VECTOR = 5;
const HANDLE = 0x1234_5678_9abc;

// bnxt.h: DBR_PATH_L2 bit 56, DBR_TYPE_* bits 63:60, xid bits 51:32, index bits 23:0.
const db = (type: number, xid: number, index: number, path = 1): [number, number] => [
  index, ((type << 28) | (path << 24) | xid) >>> 0,
];
const DBR = { CQ: 0x4, CQ_ARMALL: 0x6, NQ: 0xa, NQ_ARM: 0xb, SQ: 0x0 };

// bnxt_hsi.h RING_ALLOC_REQ_INT_MODE_MSIX 2, _POLL 3.
const MSIX = 2;
const POLL = 3;

function setup(length: number, intMode = MSIX) {
  const bus = new NicBus(
    { mac: macFromNumber(1), ipv4: Uint8Array.from([10, 0, 0, 1]), mtu: 1500, cable: { kind: 'loop' },
      pcapPath: undefined, seed: 1, mode: 'stepped' },
    new Int32Array(16384), 65536, hostServices('stepped', undefined),
  );
  const cq = new Uint8Array(length * 16);
  const nq = new Uint8Array(length * 16);
  bus.iommu.map(CQ_BASE, cq.buffer as ArrayBuffer, cq.length);
  bus.iommu.map(NQ_BASE, nq.buffer as ArrayBuffer, nq.length);
  const fn = new FunctionResources();
  fn.rings.set(NQ_ID,
    { id: NQ_ID, pageTblAddr: NQ_BASE, pageTblDepth: 0, pageSizeLog2: 12, length, logicalId: VECTOR, intMode });
  l2Of(fn).rings.set(CQ_ID, {
    id: CQ_ID, type: 0, pageTblAddr: CQ_BASE, pageTblDepth: 0, pageSizeLog2: 12, length, logicalId: 0,
    peerRingId: NQ_ID, rxBufSize: 0, cqHandle: HANDLE,
  });
  const raised: number[] = [];
  const l2 = new L2Engine(bus, fn, (v) => { raised.push(v); return true; });
  return { bus, fn, cq, nq, l2, raised };
}

const entry = (ring: Uint8Array, i: number) => new DataView(ring.buffer, i * 16, 16);

t.test('HWRM_DONE into an armed completion ring: one CQ notification, one interrupt, arms spent', async (t) => {
  const { cq, nq, l2, raised } = setup(4);
  t.ok(l2.doorbell(...db(DBR.CQ_ARMALL, CQ_ID, 0)));
  t.ok(l2.doorbell(...db(DBR.NQ_ARM, NQ_ID, 0)));
  l2.hwrmDone(CQ_ID, 0x2a);
  const c = entry(cq, 0);
  t.equal(c.getUint16(0, true) & 0x3f, 0x20, 'hwrm_cmpl type HWRM_DONE');
  t.equal(c.getUint16(2, true), 0x2a, 'sequence_id');
  t.equal(c.getUint32(8, true) & 1, 1, 'V = 1 on the first pass');
  const n = entry(nq, 0);
  t.equal(n.getUint16(0, true) & 0x3f, 0x30, 'nqe_cn type CQ_NOTIFICATION');
  t.equal(n.getUint32(4, true) + n.getUint32(12, true) * 2 ** 32, HANDLE, 'cq_handle low and high');
  t.equal(n.getUint32(8, true) & 1, 1);
  t.same(raised, [VECTOR], 'the NQ logical_id is the vector');
  l2.hwrmDone(CQ_ID, 0x2b);
  t.equal(entry(cq, 1).getUint16(2, true), 0x2b, 'the next completion lands');
  t.equal(entry(nq, 1).getUint32(8, true), 0, 'no notification: the CQ is not armed any more');
  t.same(raised, [VECTOR], 'no second interrupt');
});

t.test('arming a ring that holds unread entries notifies at once; the valid bit flips each pass', async (t) => {
  const { cq, nq, l2, raised } = setup(2);
  l2.hwrmDone(CQ_ID, 1);
  l2.hwrmDone(CQ_ID, 2);
  l2.hwrmDone(CQ_ID, 3); // second pass, slot 0
  t.equal(entry(cq, 0).getUint16(2, true), 3);
  t.equal(entry(cq, 0).getUint32(8, true) & 1, 0, 'V = 0 on the second pass');
  l2.doorbell(...db(DBR.CQ_ARMALL, CQ_ID, 0)); // consumer 0 but the producer is at 1 (mod 2): unread
  t.equal(entry(nq, 0).getUint16(0, true) & 0x3f, 0x30, 'notified on arm');
  t.same(raised, [], 'the NQ is not armed');
  l2.doorbell(...db(DBR.NQ_ARM, NQ_ID, 0));
  t.same(raised, [VECTOR], 'NQ arm with an unread entry fires');
});

t.test('doorbells: unknown rings are counted, RoCE-path doorbells are not taken', async (t) => {
  const { l2 } = setup(4);
  t.ok(l2.doorbell(...db(DBR.CQ_ARMALL, 99, 0)));
  t.ok(l2.doorbell(...db(DBR.CQ, CQ_ID, 4)), 'an index outside the ring');
  t.equal(l2.counters.rejected, 2);
  t.notOk(l2.doorbell(...db(DBR.SQ, 1, 0, 0)), 'path ROCE goes to the RoCE engine');
});

t.test("bnxt_re's CREQ: its vector fires once the entry at the armed consumer is valid", async (t) => {
  const { bus, fn, nq } = setup(4);
  const raised: number[] = [];
  const irq = new RoceInterrupts(bus.iommu, fn, (v) => { raised.push(v); return true; });
  irq.doorbell(...db(DBR.NQ_ARM, NQ_ID, 0, 0)); // roce_hsi DBC_DBC_PATH_ROCE = 0
  irq.check();
  t.same(raised, [], 'nothing written yet');
  nq[8] = 1; // creq_base.v at byte 8
  irq.check();
  irq.check();
  t.same(raised, [VECTOR], 'fires once: the arm is spent');
  irq.doorbell(...db(DBR.NQ_ARM, NQ_ID, 1, 0));
  irq.check();
  t.same(raised, [VECTOR], 'entry 1 not written yet');
  nq[16 + 8] = 1;
  irq.check();
  t.same(raised, [VECTOR, VECTOR]);
  irq.doorbell(...db(DBR.NQ_ARM, NQ_ID, 1, 1)); // an L2-path doorbell is not bnxt_re's
  nq[32 + 8] = 1;
  irq.check();
  t.same(raised, [VECTOR, VECTOR], 'not armed by an L2-path doorbell');
});

t.test('TX: a packet of BDs leaves the port whole and completes with its opaque; NO_CMPL packets complete ' +
  'nothing', async (t) => {
  const { bus, fn, cq, l2: _unused } = setup(8);
  void _unused;
  const TX_BASE = 0x30_0000;
  const DATA = 0x40_0000;
  const TX_ID = 9;
  const tx = new Uint8Array(8 * 16);
  const data = new Uint8Array(4096);
  bus.iommu.map(TX_BASE, tx.buffer as ArrayBuffer, tx.length);
  bus.iommu.map(DATA, data.buffer as ArrayBuffer, data.length);
  l2Of(fn).rings.set(TX_ID, {
    id: TX_ID, type: 1, pageTblAddr: TX_BASE, pageTblDepth: 0, pageSizeLog2: 12, length: 8, logicalId: 0,
    peerRingId: CQ_ID, rxBufSize: 0, cqHandle: 0,
  });
  const sent: number[][] = [];
  const l2 = new L2Engine(bus, fn, () => true, (f, n) => { sent.push([...f.subarray(0, n)]); });
  for (let i = 0; i < 60; i++) data[i] = i;
  for (let i = 0; i < 20; i++) data[1000 + i] = 0xa0 + i;
  // bnxt.h tx_bd: len << 16 | BD_CNT << 8 | flags | type; opaque; haddr. A LONG first BD of 60
  // bytes, its tx_bd_ext, a 20-byte fragment: BD_CNT 3.
  const bd = (slot: number, word: number, opaque: number, addr: number) => {
    const v = new DataView(tx.buffer, slot * 16, 16);
    v.setUint32(0, word >>> 0, true);
    v.setUint32(4, opaque, true);
    v.setBigUint64(8, BigInt(addr), true);
  };
  bd(0, (60 << 16) | (3 << 8) | 0x10, 0xabc00003, DATA);
  bd(2, (20 << 16) | 0x40, 0, DATA + 1000); // PACKET_END
  bd(3, (14 << 16) | (1 << 8) | 0x80 | 0x40, 0xdef, DATA); // a short packet with NO_CMPL
  t.ok(l2.doorbell(...db(DBR.SQ, TX_ID, 4)), 'producer 4');
  t.equal(sent.length, 2);
  t.same(sent[0], [...data.subarray(0, 60), ...data.subarray(1000, 1020)],
    'first BD then fragment, the ext BD skipped');
  t.equal(sent[1]!.length, 14);
  const c = new DataView(cq.buffer, 0, 16);
  t.equal(c.getUint32(0, true) & 0x3f, 0x00, 'tx_cmp type TX_L2');
  t.equal(c.getUint32(4, true), 0xabc00003, 'the first BD\'s opaque');
  t.equal(c.getUint32(8, true) & 1, 1, 'valid');
  t.equal(new DataView(cq.buffer, 16, 16).getUint32(8, true), 0, 'no completion for the NO_CMPL packet');
  t.ok(l2.doorbell(...db(DBR.SQ, TX_ID, 4)), 'the same producer again');
  t.equal(sent.length, 2, 'sends nothing twice');
});

t.test('RX: a frame for the filtered MAC lands in the next posted buffer, completed by rx_cmp + ' +
  'rx_cmp_ext', async (t) => {
  const { bus, fn, cq, l2 } = setup(8);
  const RX_BASE = 0x50_0000;
  const BUF = 0x60_0000;
  const RX_ID = 11;
  const rx = new Uint8Array(8 * 16);
  const buf = new Uint8Array(4096);
  bus.iommu.map(RX_BASE, rx.buffer as ArrayBuffer, rx.length);
  bus.iommu.map(BUF, buf.buffer as ArrayBuffer, buf.length);
  const st = l2Of(fn);
  st.rings.set(RX_ID, {
    id: RX_ID, type: 2, pageTblAddr: RX_BASE, pageTblDepth: 0, pageSizeLog2: 12, length: 8, logicalId: 0, peerRingId: 0,
    rxBufSize: 2048, cqHandle: 0,
  });
  st.vnics.set(0, {
    defaultRxRing: RX_ID, defaultCmplRing: CQ_ID, mru: 1500, rxMask: 0x8, rssCtx: undefined, flags: 0,
  });
  const mac = Uint8Array.from([2, 0x62, 0x6e, 0, 0x50, 1]);
  st.filters.set(1, { mac, vnic: 0, rx: true });
  // bnxt.h rx_bd: len (buffer size) << 16 | type; opaque; haddr.
  const v = new DataView(rx.buffer, 0, 16);
  v.setUint32(0, (2048 << 16) >>> 0, true);
  v.setUint32(4, 0x77, true);
  v.setBigUint64(8, BigInt(BUF), true);
  const frame = new Uint8Array(60);
  frame.set(mac, 0);
  frame[12] = 0x08; frame[13] = 0x06;
  for (let i = 14; i < 60; i++) frame[i] = i;
  l2.receive(frame, 60);
  t.equal(l2.rxDrops.noBuffer, 1, 'nothing posted yet: dropped');
  t.ok(l2.doorbell(...db(0x2, RX_ID, 1)), 'SRQ-type doorbell: producer 1');
  l2.receive(frame, 60);
  t.same([...buf.subarray(0, 60)], [...frame], 'the frame, byte for byte, at the buffer');
  const c0 = new DataView(cq.buffer, 0, 16);
  const c1 = new DataView(cq.buffer, 16, 16);
  t.equal(c0.getUint32(0, true) & 0x3f, 17, 'rx_cmp type RX_L2_CMP');
  t.equal(c0.getUint32(0, true) >>> 16, 60, 'length');
  t.equal(c0.getUint32(4, true), 0x77, 'the BD\'s opaque');
  t.equal(c0.getUint32(8, true) & 1, 1, 'V1');
  t.equal(c1.getUint32(8, true) & 1, 1, 'rx_cmp_ext V2');
  t.equal(c1.getUint32(8, true) >>> 1, 0, 'no errors');
  frame[0] = 0x04;
  l2.receive(frame, 60);
  t.equal(l2.rxDrops.noVnic, 1, 'another unicast MAC: no VNIC takes it');
  frame.fill(0xff, 0, 6);
  l2.receive(frame, 60);
  t.equal(l2.rxDrops.noBuffer, 2, 'broadcast is taken by the BCAST mask, but no buffer is left');
});
