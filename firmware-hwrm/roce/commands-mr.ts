/**
 * Memory-registration commands: ALLOCATE_MRW, DEALLOCATE_KEY, REGISTER_MR, DEREGISTER_MR and
 * their CREQ responses. Facts §3.7, §7.3. Two flows: ALLOCATE_MRW then REGISTER_MR(key), or a
 * single REGISTER_MR with ALLOC_MR and key = pd_id when QUERY_FUNC has MR_REGISTER_ALLOC.
 */
import { layout, u8, u16, u32, u64, u64n } from '../layout.ts';
import { CMDQ_BASE_FIELDS } from './cmdq.ts';
import { CREQ_RESP_FIELDS } from './creq.ts';

// roce_hsi.h: CMDQ_ALLOCATE_MRW_MRW_FLAGS_* (the 4-bit type in mrw_flags)
export const MrwType = {
  MR: 0x0,
  /** Physical / fast-register MR. */
  PMR: 0x1,
  MW_TYPE1: 0x2,
  MW_TYPE2A: 0x3,
  MW_TYPE2B: 0x4,
} as const;

// roce_hsi.h: CMDQ_ALLOCATE_MRW_ACCESS_*
export const AllocateMrwAccess = {
  CONSUMER_OWNED_KEY: 0x20,
} as const;

/** MR access bits (REGISTER_MR). Note REMOTE_READ/WRITE are swapped relative to QpAccess. */
export const MrAccess = {
  LOCAL_WRITE: 0x1,
  REMOTE_READ: 0x2,
  REMOTE_WRITE: 0x4,
  REMOTE_ATOMIC: 0x8,
  MW_BIND: 0x10,
  ZERO_BASED: 0x20,
} as const;

// roce_hsi.h: CMDQ_REGISTER_MR_FLAGS_*
export const RegisterMrFlags = {
  /** Allocate the key in the same command; key field then carries the PD id. */
  ALLOC_MR: 0x1,
  STEERING_TAG_VALID: 0x2,
  ENABLE_RO: 0x4,
} as const;

/** mr_size of the kernel's "DMA MR" (all addresses untranslated). */
export const MR_SIZE_ALL = 0xffff_ffff_ffff_ffffn;

// roce_hsi.h: struct cmdq_allocate_mrw (32 bytes)
export const CmdqAllocateMrw = layout('cmdq_allocate_mrw', 32, {
  ...CMDQ_BASE_FIELDS,
  mrw_handle: u64n(16),
  /** MrwType. */
  mrw_flags: u8(24, 0, 4),
  steering_tag_valid: u8(24, 4, 1),
  access: u8(25),
  steering_tag: u16(26),
  pd_id: u32(28),
});

// roce_hsi.h: struct creq_allocate_mrw_resp
export const CreqAllocateMrwResp = layout('creq_allocate_mrw_resp', 16, {
  ...CREQ_RESP_FIELDS,
  /** The new key (lkey = rkey for MR/PMR). */
  xid: u32(4),
});

// roce_hsi.h: struct cmdq_deallocate_key (24 bytes)
export const CmdqDeallocateKey = layout('cmdq_deallocate_key', 24, {
  ...CMDQ_BASE_FIELDS,
  /** MrwType of the key. */
  mrw_flags: u8(16, 0, 4),
  key: u32(20),
});

// roce_hsi.h: struct creq_deallocate_key_resp
export const CreqDeallocateKeyResp = layout('creq_deallocate_key_resp', 16, {
  ...CREQ_RESP_FIELDS,
  xid: u32(4),
  bound_window_info: u32(12),
});

// roce_hsi.h: struct cmdq_register_mr (56 bytes)
export const CmdqRegisterMr = layout('cmdq_register_mr', 56, {
  ...CMDQ_BASE_FIELDS,
  /** PBL level (0/1/2). */
  lvl: u8(16, 0, 2),
  /** log2 of the data page size: 12 = 4K … 30 = 1G. */
  log2_pg_size: u8(16, 2, 5),
  /** MrAccess. */
  access: u8(17),
  /** log2 of the PBL page size (kernel: 12). */
  log2_pbl_pg_size: u16(18, 0, 5),
  /** Key from ALLOCATE_MRW, or the PD id with RegisterMrFlags.ALLOC_MR. */
  key: u32(20),
  /** Level 0: the single data page; level 1/2: first PBL/PDE page; 0 for a DMA MR. */
  pbl: u64(24),
  va: u64(32),
  /** Bytes; MR_SIZE_ALL for a DMA MR. */
  mr_size: u64n(40),
  steering_tag: u16(48),
});

// roce_hsi.h: struct creq_register_mr_resp
export const CreqRegisterMrResp = layout('creq_register_mr_resp', 16, {
  ...CREQ_RESP_FIELDS,
  /** The key (new one with ALLOC_MR). */
  xid: u32(4),
});

// roce_hsi.h: struct cmdq_deregister_mr (24 bytes)
export const CmdqDeregisterMr = layout('cmdq_deregister_mr', 24, {
  ...CMDQ_BASE_FIELDS,
  lkey: u32(16),
});

// roce_hsi.h: struct creq_deregister_mr_resp
export const CreqDeregisterMrResp = layout('creq_deregister_mr_resp', 16, {
  ...CREQ_RESP_FIELDS,
  xid: u32(4),
  bound_windows: u32(12),
});
