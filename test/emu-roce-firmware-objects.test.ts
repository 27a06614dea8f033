/**
 * The RoCE firmware's CQs, memory keys and GID table (roce_hsi.h cmdq_create_cq,
 * cmdq_allocate_mrw, cmdq_register_mr, cmdq_add_gid), the asynchronous entries it writes for
 * the engine (QP error notifications on the CREQ: creq_qp_error_notification; CQ notifications
 * on NQs: nq_cn) and the destroy order. Expected bytes follow roce_hsi.h's offsets.
 */
import t from 'tap';
import * as R from '../firmware-hwrm/roce/index.ts';
import {
  openRoce, makeCq, makeQp, addGid, toInitValues, toRtrValues, modify, creqXid, RingReader, type DmaBuf, type EmuRig,
} from './helpers/emu-roce-setup.ts';

const O = R.RoceOpcode;
const u32le = (v: number) => [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff];
const response = (status: number, cookie: number, xid: number, opcode: number, tail = [0, 0, 0, 0, 0, 0]) =>
  [0x38, status, cookie & 0xff, cookie >>> 8, ...u32le(xid), 1, opcode, ...tail];
const resources = (rig: EmuRig) => rig.model.controls.roce.resources();

/** A level-1 page list over `pages` (VALID on every PTE, as for MRs). */
function pageList(rig: EmuRig, pages: DmaBuf[]): DmaBuf {
  const pbl = rig.alloc(4096);
  pages.forEach((p, i) => pbl.view.setBigUint64(i * 8, BigInt(p.iova) | 1n, true));
  return pbl;
}

t.test('CREATE_CQ answers the CQ id; the CQ holds its ring, handle and NQ', async (t) => {
  const { q, rig, setup } = openRoce();
  const ring = rig.alloc(16 * 32);
  const cookie = q.send(R.CmdqCreateCq, {
    opcode: O.CREATE_CQ, cq_handle: 0x0102030405060708n, lvl: 0, pg_size: 0, cnq_id: setup.nqRingId, dpi: 0,
    cq_size: 16, pbl: ring.iova,
  });
  t.same([...q.take()!], response(0, cookie, 1, O.CREATE_CQ));
  const cq = rig.model.roce.cq(1)!;
  t.same([cq.id, cq.handleLo, cq.handleHi, cq.nqId], [1, 0x05060708, 0x01020304, setup.nqRingId]);
  t.same([cq.ring.entries, cq.ring.entryBytes, cq.ring.entryIova(15)], [16, 32, ring.iova + 15 * 32]);
  t.equal(cq.destroyed, false);
});

t.test('CREATE_CQ with a level-1 ring of two scattered pages', async (t) => {
  const { q, rig, setup } = openRoce();
  const pages = [rig.alloc(4096), rig.alloc(4096)];
  const pbl = pageList(rig, pages);
  const e = q.call(R.CmdqCreateCq, {
    opcode: O.CREATE_CQ, lvl: 1, pg_size: 0, cnq_id: setup.nqRingId, cq_size: 256, pbl: pbl.iova,
  });
  t.equal(e[1], 0);
  const cq = rig.model.roce.cq(creqXid(e))!;
  t.equal(cq.ring.entryIova(127), pages[0]!.iova + 127 * 32);
  t.equal(cq.ring.entryIova(128), pages[1]!.iova);
});

t.test('CREATE_CQ refusals: size, NQ, memory, full table', async (t) => {
  const { q, rig, setup } = openRoce({ cqEntries: 2 });
  const ring = rig.alloc(4096);
  const base = { opcode: O.CREATE_CQ, cnq_id: setup.nqRingId, cq_size: 16, pbl: ring.iova };
  const cases: [string, Record<string, number>][] = [
    ['cq_size 0', { cq_size: 0 }],
    ['cq_size over max_cqe + 1', { cq_size: 0x100001 }],
    ['cnq_id of the CREQ', { cnq_id: setup.creqRingId }],
    ['cnq_id of no ring', { cnq_id: 999 }],
    ['unmapped ring', { pbl: 0x1_0000 }],
    ['ring larger than its memory', { cq_size: 129 }],
    ['level 3', { lvl: 3 }],
    ['page-size code 6', { pg_size: 6 }],
    ['dpi past BAR2', { dpi: 4080 }],
  ];
  for (const [what, change] of cases) {
    const cookie = q.send(R.CmdqCreateCq, { ...base, ...change });
    t.same([...q.take()!], response(5, cookie, 0, O.CREATE_CQ), what);
  }
  t.equal(resources(rig).cqs, 0);
  makeCq(q);
  makeCq(q);
  t.equal(q.call(R.CmdqCreateCq, base)[1], R.RoceStatus.RESOURCES, 'a third CQ with two CQ contexts');
});

t.test('CQ notifications: one NQE per arm, with the cq_handle; DESTROY_CQ counts them', async (t) => {
  const { q, rig, setup } = openRoce();
  const { id } = makeCq(q, 16, 0x1122_3344_5566_7788n);
  const cq = rig.model.roce.cq(id)!;
  const nq = new RingReader(setup.nq, setup.nqDepth);
  rig.model.roce.postCqNotification(cq);
  t.equal(nq.next(), undefined, 'not armed: nothing');
  cq.armed = true;
  rig.model.roce.postCqNotification(cq);
  t.same([...nq.next()!], [0x30, 0, 0, 0, 0x88, 0x77, 0x66, 0x55, 1, 0, 0, 0, 0x44, 0x33, 0x22, 0x11],
    'nq_cn: type 0x30, handle low @4, v @8, handle high @12');
  t.equal(cq.armed, false, 'a notification disarms the CQ');
  rig.model.roce.postCqNotification(cq);
  t.equal(nq.next(), undefined);
  cq.armed = true;
  rig.model.roce.postCqNotification(cq);
  t.ok(nq.next());
  const cookie = q.send(R.CmdqDestroyCq, { opcode: O.DESTROY_CQ, cq_cid: id });
  t.same([...q.take()!], response(0, cookie, id, O.DESTROY_CQ, [0, 0, 2, 0, 0, 0]), 'total_cnq_events 2 @12');
  t.equal(cq.destroyed, true);
  cq.armed = true;
  rig.model.roce.postCqNotification(cq);
  t.equal(nq.next(), undefined, 'nothing for a destroyed CQ');
});

t.test('an NQ is never overrun: notifications wait for its NQ doorbell, then flip v', async (t) => {
  const { q, rig, setup } = openRoce();
  const cq = rig.model.roce.cq(makeCq(q).id)!;
  const nq = new RingReader(setup.nq, setup.nqDepth);
  for (let i = 0; i < setup.nqDepth + 6; i++) {
    cq.armed = true;
    rig.model.roce.postCqNotification(cq);
  }
  let n = 0;
  while (nq.next()) n++;
  t.equal(n, setup.nqDepth, 'a full ring');
  rig.model.roce.nqDoorbell(setup.nqRingId, nq.index, nq.epoch);
  while (nq.next()) n++;
  t.equal(n, setup.nqDepth + 6, 'the held six after the doorbell');
  t.equal(setup.nq.bytes[8], 0, 'pass 1 writes v = 0');
});

t.test('DESTROY_CQ: no such CQ, or one a live QP uses, is refused', async (t) => {
  const { q, rig } = openRoce();
  const scq = makeCq(q);
  const rcq = makeCq(q);
  const qpn = makeQp(q, scq.id, rcq.id);
  let cookie = q.send(R.CmdqDestroyCq, { opcode: O.DESTROY_CQ, cq_cid: 42 });
  t.same([...q.take()!], response(5, cookie, 0, O.DESTROY_CQ), 'no CQ 42: INVALID_PARAMETER');
  for (const cq of [scq, rcq]) {
    cookie = q.send(R.CmdqDestroyCq, { opcode: O.DESTROY_CQ, cq_cid: cq.id });
    t.same([...q.take()!], response(1, cookie, 0, O.DESTROY_CQ), `CQ ${cq.id} in use: FAIL`);
  }
  t.equal(q.call(R.CmdqDestroyQp, { opcode: O.DESTROY_QP, qp_cid: qpn })[1], 0);
  for (const cq of [scq, rcq])
    t.equal(q.call(R.CmdqDestroyCq, { opcode: O.DESTROY_CQ, cq_cid: cq.id })[1], 0, 'after the QP');
  t.same(resources(rig), { initialized: true, qps: 0, cqs: 0, mrs: 0, gids: 0 });
});

t.test('classic MR flow: ALLOCATE_MRW, REGISTER_MR (level 1, va inside its first page), DEREGISTER_MR, ' +
  'DEALLOCATE_KEY', async (t) => {
  const { q, rig } = openRoce();
  let cookie = q.send(R.CmdqAllocateMrw, { opcode: O.ALLOCATE_MRW, mrw_flags: R.MrwType.MR, pd_id: 3 });
  const a = q.take()!;
  const key = creqXid(a);
  t.same([...a], response(0, cookie, key, O.ALLOCATE_MRW));
  t.not(key, 0);
  t.equal(rig.model.roce.mr(key), undefined, 'a key without pages is no region yet');
  t.equal(resources(rig).mrs, 1);

  const pages = [rig.alloc(4096), rig.alloc(4096), rig.alloc(4096)];
  const pbl = pageList(rig, pages);
  const va = 0x10_0000_0100;
  const size = 2 * 4096 + 0x200;
  const access = R.MrAccess.LOCAL_WRITE | R.MrAccess.REMOTE_WRITE;
  const reg = {
    opcode: O.REGISTER_MR, lvl: 1, log2_pg_size: 12, access, log2_pbl_pg_size: 12, key, pbl: pbl.iova, va,
    mr_size: BigInt(size),
  };
  cookie = q.send(R.CmdqRegisterMr, reg);
  t.same([...q.take()!], response(0, cookie, key, O.REGISTER_MR));
  const mr = rig.model.roce.mr(key)!;
  t.same([mr.key, mr.pd, mr.va, mr.length, mr.access], [key, 3, va, size, access]);
  t.equal(mr.memory.iova(0), pages[0]!.iova + 0x100, 'va sits 0x100 into the first page');
  t.equal(mr.memory.contiguous(0), 4096 - 0x100);
  t.equal(mr.memory.iova(4096 - 0x100), pages[1]!.iova);
  t.equal(mr.memory.iova(size - 1), pages[2]!.iova + 0x2ff);
  t.equal(q.call(R.CmdqRegisterMr, reg)[1], 5, 'a registered key cannot be registered again');
  t.equal(mr.bound, true, 'the key names the region');

  cookie = q.send(R.CmdqDeregisterMr, { opcode: O.DEREGISTER_MR, lkey: key });
  t.same([...q.take()!], response(0, cookie, key, O.DEREGISTER_MR));
  t.equal(rig.model.roce.mr(key), undefined);
  t.equal(mr.bound, false, 'a region held by the engine is unbound with its key');
  t.equal(resources(rig).mrs, 1, 'the key stays for re-registration');
  t.equal(q.call(R.CmdqRegisterMr, reg)[1], 0, 're-registered');
  const again1 = rig.model.roce.mr(key)!;
  t.not(again1, mr, 'a re-registration is a new region');
  t.same([again1.bound, mr.bound], [true, false], 'the old region stays unbound');
  cookie = q.send(R.CmdqDeallocateKey, { opcode: O.DEALLOCATE_KEY, mrw_flags: R.MrwType.MR, key });
  t.same([...q.take()!], response(0, cookie, key, O.DEALLOCATE_KEY), 'DEALLOCATE_KEY frees a registered key');
  t.equal(rig.model.roce.mr(key), undefined);
  t.equal(again1.bound, false, 'DEALLOCATE_KEY unbinds the region too');
  t.equal(resources(rig).mrs, 0);
  t.equal(q.call(R.CmdqDeallocateKey, { opcode: O.DEALLOCATE_KEY, key })[1], 5, 'twice: no such key');
  t.equal(q.call(R.CmdqDeregisterMr, { opcode: O.DEREGISTER_MR, lkey: key })[1], 5);
  const again = creqXid(q.call(R.CmdqAllocateMrw, { opcode: O.ALLOCATE_MRW, mrw_flags: R.MrwType.MR, pd_id: 3 }));
  t.not(again, key, 'a freed key is not handed out again as it was');
});

t.test('unified MR flow: REGISTER_MR with ALLOC_MR allocates the key; DEREGISTER_MR unbinds, DEALLOCATE_KEY frees ' +
  'it', async (t) => {
  const { q, rig } = openRoce({ firmware: 'current' });
  const page = rig.alloc(4096);
  const cookie = q.send(R.CmdqRegisterMr, {
    opcode: O.REGISTER_MR, flags: R.RegisterMrFlags.ALLOC_MR, lvl: 0, log2_pg_size: 12, access: R.MrAccess.LOCAL_WRITE,
    key: 7, pbl: page.iova, va: page.iova, mr_size: 4096n,
  });
  const e = q.take()!;
  const key = creqXid(e);
  t.same([...e], response(0, cookie, key, O.REGISTER_MR));
  const mr = rig.model.roce.mr(key)!;
  t.same([mr.pd, mr.va, mr.length, mr.memory.iova(100)], [7, page.iova, 4096, page.iova + 100]);
  t.equal(q.call(R.CmdqDeregisterMr, { opcode: O.DEREGISTER_MR, lkey: key })[1], 0);
  t.equal(rig.model.roce.mr(key), undefined, 'no region under the key');
  t.equal(mr.bound, false, 'the region is unbound');
  t.equal(q.call(R.CmdqDeallocateKey, { opcode: O.DEALLOCATE_KEY, mrw_flags: R.MrwType.MR, key })[1], 0,
    'the key is still there to free');
  t.equal(resources(rig).mrs, 0);
});

t.test('a function reset unbinds every region with its key (EmuMr.bound)', async (t) => {
  const { q, rig } = openRoce({ firmware: 'current' });
  const page = rig.alloc(4096);
  const key = creqXid(q.call(R.CmdqRegisterMr, {
    opcode: O.REGISTER_MR, flags: R.RegisterMrFlags.ALLOC_MR, lvl: 0, log2_pg_size: 12, access: R.MrAccess.LOCAL_WRITE,
    key: 7, pbl: page.iova, va: page.iova, mr_size: 4096n,
  }));
  const mr = rig.model.roce.mr(key)!;
  t.equal(mr.bound, true);
  rig.model.roce.reset();
  t.equal(rig.model.roce.mr(key), undefined, 'no key after the reset');
  t.equal(mr.bound, false, 'and the region it named is unbound');
});

t.test('the DMA MR (PMR, level 0, pbl 0, va 0, size all ones) uses bus addresses as they are', async (t) => {
  const { q, rig } = openRoce();
  const key = creqXid(q.call(R.CmdqAllocateMrw, { opcode: O.ALLOCATE_MRW, mrw_flags: R.MrwType.PMR, pd_id: 0 }));
  const e = q.call(R.CmdqRegisterMr, {
    opcode: O.REGISTER_MR, lvl: 0, log2_pg_size: 12, key, pbl: 0, va: 0, mr_size: R.MR_SIZE_ALL,
  });
  t.equal(e[1], 0);
  t.equal(rig.model.roce.mr(key)!.memory.iova(0x1_2345_6789), 0x1_2345_6789);
  t.equal(
    q.call(R.CmdqRegisterMr,
      { opcode: O.REGISTER_MR, flags: 1, lvl: 0, log2_pg_size: 12, key: 0, pbl: 0x4000, va: 0,
      mr_size: R.MR_SIZE_ALL })[1],
    5, 'all-ones size with a page list',
  );
});

t.test('memory-key refusals and the MRAV bound', async (t) => {
  const { q, rig } = openRoce({ mravEntries: 2, firmware: 'current' });
  const page = rig.alloc(4096);
  const unified = {
    opcode: O.REGISTER_MR, flags: R.RegisterMrFlags.ALLOC_MR, lvl: 0, log2_pg_size: 12, key: 1, pbl: page.iova, va: 0,
    mr_size: 4096n,
  };
  const badPbl = rig.alloc(4096);
  badPbl.view.setBigUint64(0, 0x7777_0000n | 1n, true);
  const cases: [string, Record<string, unknown>, number][] = [
    ['REGISTER_MR of no key', { ...unified, flags: 0, key: 0x1234 }, 5],
    ['log2 page size 11', { ...unified, log2_pg_size: 11 }, 5],
    ['log2 page size 31', { ...unified, log2_pg_size: 31 }, 5],
    ['level 3', { ...unified, lvl: 3 }, 5],
    ['a PTE naming unmapped memory', { ...unified, lvl: 1, pbl: badPbl.iova }, 5],
    ['more than a level-0 page maps', { ...unified, mr_size: 8192n }, 5],
    ['over 2^39 bytes', { ...unified, lvl: 1, pbl: badPbl.iova, mr_size: (1n << 39n) + 1n }, 5],
  ];
  for (const [what, values, status] of cases) t.equal(q.call(R.CmdqRegisterMr, values as never)[1], status, what);
  t.equal(q.call(R.CmdqAllocateMrw, { opcode: O.ALLOCATE_MRW, mrw_flags: R.MrwType.MW_TYPE2A })[1], 4,
    'memory windows: NOT_IMPLEMENTED');
  t.equal(q.call(R.CmdqAllocateMrw, { opcode: O.ALLOCATE_MRW, mrw_flags: 7 })[1], 5, 'type 7: INVALID_PARAMETER');
  t.equal(resources(rig).mrs, 0, 'nothing allocated by a refusal');
  t.equal(q.call(R.CmdqAllocateMrw, { opcode: O.ALLOCATE_MRW, mrw_flags: R.MrwType.MR })[1], 0);
  t.equal(q.call(R.CmdqRegisterMr, unified)[1], 0);
  t.equal(q.call(R.CmdqAllocateMrw, { opcode: O.ALLOCATE_MRW, mrw_flags: R.MrwType.MR })[1], R.RoceStatus.RESOURCES,
    'a third key');
  t.equal(q.call(R.CmdqRegisterMr, unified)[1], R.RoceStatus.RESOURCES, 'a third key, unified');
});

t.test('ADD_GID answers the table index and keeps the GID and MAC in wire order; DELETE_GID frees it', async (t) => {
  const { q, rig } = openRoce();
  const gid = Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 1, 7]);
  const mac = Uint8Array.from([0x02, 0x11, 0x22, 0x33, 0x44, 0x55]);
  // ADD_GID carries the GID byte-reversed (byte 15 first) and the MAC as swapped halfwords
  // (Linux bnxt_re qplib_sp.c bnxt_qplib_add_sgid).
  const cmd = new Uint8Array(48);
  cmd.set([O.ADD_GID, 3, 0, 0, 0x21, 0x00]);
  cmd.set([7, 1, 168, 192, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 16);
  cmd.set([0x11, 0x02, 0x33, 0x22, 0x55, 0x44], 32);
  q.place(cmd);
  q.ring();
  t.same([...q.take()!], response(0, 0x21, 0, O.ADD_GID), 'index 0');
  const entry = rig.model.roce.gid(0)!;
  t.same([...entry.gid], [...gid]);
  t.same([...entry.mac], [...mac]);
  t.equal(addGid(q, Uint8Array.from([0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1])), 1);
  let cookie = q.send(R.CmdqDeleteGid, { opcode: O.DELETE_GID, gid_index: 0 });
  t.same([...q.take()!], response(0, cookie, 0, O.DELETE_GID));
  t.equal(rig.model.roce.gid(0), undefined);
  cookie = q.send(R.CmdqDeleteGid, { opcode: O.DELETE_GID, gid_index: 0 });
  t.same([...q.take()!], response(5, cookie, 0, O.DELETE_GID), 'no GID at 0 any more');
  t.equal(addGid(q), 0, 'the lowest free index is reused');
  t.equal(q.call(R.CmdqAddGid, { opcode: O.ADD_GID, gid: new Uint8Array(16) })[1], 5, 'an all-zero GID');
});

t.test('the GID table holds max_gid (256) entries', async (t) => {
  const { q, rig } = openRoce();
  for (let i = 0; i < 256; i++) {
    const gid = new Uint8Array(16);
    gid[0] = 0xfe;
    gid[14] = i >> 8;
    gid[15] = i & 0xff;
    if (addGid(q, gid) !== i) t.fail(`GID ${i} at another index`);
  }
  t.equal(q.call(R.CmdqAddGid, { opcode: O.ADD_GID, gid: R.gidWords(Uint8Array.from({ length: 16 }, () => 1)) })[1],
    R.RoceStatus.RESOURCES);
  t.equal(resources(rig).gids, 256);
});

t.test('a QP error notification: CREQ type 0x38, event 0xC0, reasons and consumer indexes; the QP is in ' +
  'ERR', async (t) => {
  const { q, rig } = openRoce();
  const cq = makeCq(q).id;
  const qpn = makeQp(q, cq, cq);
  const qp = rig.model.roce.qp(qpn)!;
  rig.model.roce.postQpError(qp, R.ReqErrStateReason.REQ_TIMEOUT_RETRY_LIMIT, R.ResErrStateReason.NO_ERROR, 0x0105,
    0x0206);
  t.same([...q.take()!], [0x38, 0, 0, 0x02, ...u32le(qpn), 1, 0xc0, 0, 0x00, 0x05, 0x01, 0x06, 0x02]);
  t.equal(qp.state, R.QpState.ERR);
  t.same(rig.hookCalls, [], 'the engine reported it: not called back');
});

t.test('roce.injectQpError reports a QP error as the NIC would and tells the engine', async (t) => {
  const { q, rig } = openRoce();
  const cq = makeCq(q).id;
  const sgid = addGid(q);
  const qpn = makeQp(q, cq, cq);
  t.equal(modify(q, toInitValues(qpn))[1], 0);
  t.equal(modify(q, toRtrValues(qpn, sgid))[1], 0);
  rig.hookCalls.length = 0;
  t.equal(rig.model.controls.roce.injectQpError(qpn, 0, R.ResErrStateReason.RES_RX_INVALID_R_KEY), true);
  t.same([...q.take()!], [0x38, 0, 0, 0, ...u32le(qpn), 1, 0xc0, 0, 0x06, 0xff, 0xff, 0xff, 0xff]);
  t.same(rig.hookCalls, [{ hook: 'qpStateChanged', qpn, from: R.QpState.RTR, to: R.QpState.ERR }]);
  t.equal(rig.model.controls.roce.injectQpError(999, 1, 0), false, 'no such QP');
});

t.test('a driver that gives everything back leaves the firmware as it found it (bnxt_re_dev_uninit ' +
  'order)', async (t) => {
  const { q, rig } = openRoce();
  const before = resources(rig);
  const scq = makeCq(q);
  const rcq = makeCq(q);
  const sgid = addGid(q);
  const key = creqXid(q.call(R.CmdqAllocateMrw, { opcode: O.ALLOCATE_MRW, mrw_flags: R.MrwType.MR, pd_id: 1 }));
  const qpn = makeQp(q, scq.id, rcq.id);
  t.equal(modify(q, toInitValues(qpn))[1], 0);
  t.equal(modify(q, toRtrValues(qpn, sgid))[1], 0);
  t.same(resources(rig), { initialized: true, qps: 1, cqs: 2, mrs: 1, gids: 1 });
  t.equal(q.call(R.CmdqDeinitializeFw, { opcode: O.DEINITIALIZE_FW })[1], R.RoceStatus.FAIL, 'not while objects exist');
  // DESTROY_QP, DEALLOCATE_KEY, DESTROY_CQ, DELETE_GID, then DEINITIALIZE_FW.
  for (const [what, e] of [
    ['DESTROY_QP', q.call(R.CmdqDestroyQp, { opcode: O.DESTROY_QP, qp_cid: qpn })],
    ['DEALLOCATE_KEY', q.call(R.CmdqDeallocateKey, { opcode: O.DEALLOCATE_KEY, key })],
    ['DESTROY_CQ', q.call(R.CmdqDestroyCq, { opcode: O.DESTROY_CQ, cq_cid: scq.id })],
    ['DESTROY_CQ', q.call(R.CmdqDestroyCq, { opcode: O.DESTROY_CQ, cq_cid: rcq.id })],
    ['DELETE_GID', q.call(R.CmdqDeleteGid, { opcode: O.DELETE_GID, gid_index: sgid })],
  ] as const) t.equal(e[1], 0, what);
  t.same(resources(rig), before);
  t.equal(q.call(R.CmdqDeinitializeFw, { opcode: O.DEINITIALIZE_FW })[1], 0);
  t.same(resources(rig), { ...before, initialized: false });
});
