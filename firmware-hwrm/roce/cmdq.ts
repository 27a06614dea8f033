/**
 * The RCFW command channel from the host side: the cmdq_init mailbox in BAR0, the producer
 * and trigger registers, the 16-byte header every command starts with, and the 8-byte header
 * firmware repeats at the start of a side buffer (roce_hsi.h; the kernel's qplib_rcfw.c,
 * __send_message and bnxt_qplib_enable_rcfw_channel).
 *
 *   BAR0 + 0x600  cmdq_pbl (lo, hi)        written once, after the CREQ exists
 *   BAR0 + 0x608  cmdq_size_cmdq_lvl | creq_ring_id << 16
 *   BAR0 + 0x60C  prod_idx                 = the producer register from then on
 *   BAR0 + 0x700  trigger                  write 1 after every producer write
 */
import { layout, u8, u16, u32, u64 } from '../layout.ts';

/** BAR0 offset of the cmdq_init mailbox (kernel maps 0x104 bytes from here). */
export const CMDQ_MAILBOX_OFFSET = 0x600;
export const CMDQ_MAILBOX_WINDOW_BYTES = 0x104;
/** BAR0 offset of the producer register: the mailbox's prod_idx word. */
export const CMDQ_PROD_OFFSET = 0x60c;
/** BAR0 offset of the trigger register. */
export const CMDQ_TRIGGER_OFFSET = 0x700;
export const CMDQ_TRIGGER_VALUE = 1;
/** Bit 31 of the very first producer write after enabling the channel: firmware resets its queue pointers. */
export const CMDQ_FIRST_COMMAND_FLAG = 0x8000_0000;
/** The producer register carries the free-running entry count modulo 2^16. */
export const CMDQ_PROD_IDX_MASK = 0xffff;
/** One CMDQ entry ("cmdqe"); commands take ceil(bytes/16) consecutive entries. */
export const CMDQE_BYTES = 16;
/** Kernel CMDQ depth (BNXT_QPLIB_CMDQE_MAX_CNT): one contiguous 128 KiB ring, PBL level 0. */
export const CMDQ_DEPTH = 8192;
/** Cookie = sequence number & 0x1FFF (RCFW_MAX_COOKIE_VALUE); firmware echoes all 16 bits. */
export const CMDQ_COOKIE_MASK = 0x1fff;
/** Kernel marks busy-wait commands with bit 15 of the cookie; firmware just echoes it. */
export const CMDQ_COOKIE_BLOCKING = 0x8000;

/** Number of 16-byte units for `bytes` (cmd_size, resp_size). */
export function cmdqUnits(bytes: number): number {
  if (!Number.isInteger(bytes) || bytes < 0) throw new RangeError(`cmdqUnits: ${bytes} is not a byte count`);
  return Math.ceil(bytes / CMDQE_BYTES);
}

/** The 32-bit value for the producer register; `first` adds bit 31 for the first command. */
export function cmdqProdWord(prod: number, first: boolean): number {
  const word = prod & CMDQ_PROD_IDX_MASK;
  return first ? (word | CMDQ_FIRST_COMMAND_FLAG) >>> 0 : word;
}

// roce_hsi.h: struct cmdq_init
export const CmdqInit = layout('cmdq_init', 16, {
  cmdq_pbl: u64(0),
  /** PBL level of the CMDQ: 0 = cmdq_pbl is the ring itself. */
  cmdq_lvl: u16(8, 0, 2),
  /** CMDQ depth in 16-byte entries. */
  cmdq_size: u16(8, 2, 14),
  creq_ring_id: u16(10),
  prod_idx: u32(12),
});

/** The cmdq_base fields every command layout starts with (bytes 0–15). */
export const CMDQ_BASE_FIELDS = {
  opcode: u8(0),
  /** Command length in 16-byte units. */
  cmd_size: u8(1),
  flags: u16(2),
  cookie: u16(4),
  /** Side-buffer length in 16-byte units, 0 if none. */
  resp_size: u8(6),
  /** Side-buffer DMA address, 0 if none. */
  resp_addr: u64(8),
};

// roce_hsi.h: struct cmdq_base
export const CmdqBase = layout('cmdq_base', 16, {
  ...CMDQ_BASE_FIELDS,
  /** Re-used by MODIFY_QP as qp_type. */
  reserved8: u8(7),
});

/** The header firmware writes at the start of every side buffer (creq_*_resp_sb). */
export const CREQ_RESP_SB_FIELDS = {
  opcode: u8(0),
  status: u8(1),
  cookie: u16(2),
  flags: u16(4),
  resp_size: u8(6),
};

// roce_hsi.h: first 8 bytes of every creq_*_resp_sb
export const CreqRespSbHeader = layout('creq_resp_sb_header', 8, CREQ_RESP_SB_FIELDS);
