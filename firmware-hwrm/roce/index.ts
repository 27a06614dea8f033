/**
 * The RoCE (bnxt_re) host/device interface of P5 (BCM57508), static WQE mode: RCFW commands
 * and their CREQ answers and events, WQEs, PSN-search entries, CQEs, NQEs, doorbells and page
 * tables. Pure codecs shared by the driver and the software NIC; field names follow
 * roce_hsi.h (Linux drivers/infiniband/hw/bnxt_re) and bnxt_hsi.h.
 *
 * The word accessors generated from the tables (*.g.ts) are imported from their own modules,
 * by name: re-exported here they would make this namespace too large for V8 to keep its
 * property loads fast (thousands of exports turn a namespace object into a dictionary).
 */
export * from './opcodes.ts';
export * from './cmdq.ts';
export * from './creq.ts';
export * from './commands-qp.ts';
export * from './commands-cq.ts';
export * from './commands-mr.ts';
export * from './commands-gid.ts';
export * from './commands-fw.ts';
export * from './wqe.ts';
export * from './cqe.ts';
export * from './nqe.ts';
export * from './doorbell.ts';
export * from './pbl.ts';
export * from './ib-transport.ts';
export type { Namer } from './names.ts';
