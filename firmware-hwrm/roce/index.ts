/**
 * The RoCE (bnxt_re) host/device interface of Thor (P5) and Thor2 (P7): RCFW commands and
 * their CREQ answers and events, WQEs in static and variable-size mode, the SQ's PSN-search
 * entries and MSN table, CQEs, NQEs, doorbells and page tables, and the InfiniBand transport
 * rules both sides apply (ib-transport.ts). Pure codecs shared by the driver and the software
 * NIC; what differs between the chips is a profile fact (../chips.ts). Field names follow
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
