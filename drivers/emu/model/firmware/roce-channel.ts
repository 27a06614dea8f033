/**
 * The firmware's end of the CMDQ (roce_hsi.h struct cmdq_init, cmdq_base; Linux bnxt_re qplib_rcfw.c
 * bnxt_qplib_start_rcfw, __send_message): the cmdq_init mailbox
 * the driver wrote into BAR0, the producer register, and the commands between the
 * firmware's consumer and that producer.
 *
 *   BAR0 0x600 cmdq_pbl │ 0x608 size<<2 | lvl, creq_ring_id<<16 │ 0x60C prod (low 16 bits, bit 31 = first)
 *   CMDQ  [ hdr │ ... cmd_size units ][ next command ] ...   16-byte units, wrapping unit by unit
 *
 * The mailbox is read on the first trigger and again whenever the producer write carries
 * bit 31 (the first command after the channel was (re)enabled), which also resets the
 * consumer. The firmware consumes bit 31 when it acts on it, as a self-clearing register
 * bit would, so a second trigger without a new producer write does not reset it again.
 */
import type { Iommu } from '../iommu.ts';
import { walkPageList, type PagedMemory } from '../objects.ts';
import {
  CMDQE_BYTES, CMDQ_FIRST_COMMAND_FLAG, CMDQ_MAILBOX_OFFSET, CMDQ_PROD_IDX_MASK, CMDQ_PROD_OFFSET,
} from '../../../../firmware-hwrm/roce/index.ts';
import {
  cmdqBaseCmdSize, cmdqBaseCookie, cmdqBaseOpcode, cmdqInitCmdqLvl, cmdqInitCmdqPblHi, cmdqInitCmdqPblLo,
  cmdqInitCmdqSize, cmdqInitCreqRingId,
} from '../../../../firmware-hwrm/roce/cmdq.g.ts';
import { TWO_POW_32 } from '../../../../firmware-hwrm/words.ts';
import { ringSlot } from '../../../../firmware-hwrm/ring.ts';

const PAGE_BYTES = 4096;
/** cmd_size is a u8: no command is longer than 255 units. */
export const MAX_COMMAND_BYTES = 255 * CMDQE_BYTES;
/** bnxt_hsi.h CMD_DISCR_TLV_ENCAP: the first u16 of a TLV-encapsulated command. */
const CMD_DISCR_TLV_ENCAP = 0x8000;

export const enum Take {
  /** Nothing between the consumer and the producer. */
  Empty = 0,
  /** A whole command is in the scratch buffer (`length` bytes). */
  Command = 1,
  /** A header whose cmd_size is 0 or runs past the producer: answer it as malformed. */
  Malformed = 2,
}

export class CmdqChannel {
  /** The mailbox has been read and names a usable CMDQ. */
  open = false;
  creqRingId = 0;
  depth = 0;
  /** Units consumed since the last reset (free-running; the slot is consumed % depth). */
  consumed = 0;
  /** Mailboxes that named no usable CMDQ; producer values further ahead than the ring holds. */
  badMailboxes = 0;
  badProducers = 0;
  private memory: PagedMemory | undefined;
  private prod16 = 0;
  /** The command last taken (Take.Command / Take.Malformed): header fields and its bytes. */
  readonly scratch = new Uint8Array(MAX_COMMAND_BYTES);
  private readonly scratchWords = new Uint32Array(this.scratch.buffer);
  length = 0;
  opcode = 0;
  cookie = 0;
  /** The command last taken came TLV-encapsulated (scratch holds the command inside). */
  encapsulated = false;

  constructor(private readonly iommu: Iommu) {}

  /** Acts on a trigger: latches the producer, (re)reads the mailbox when it must. */
  latch(bar0Written: Uint32Array): void {
    const prodWord = bar0Written[CMDQ_PROD_OFFSET >>> 2]! >>> 0;
    if (!this.open || (prodWord & CMDQ_FIRST_COMMAND_FLAG) !== 0) {
      bar0Written[CMDQ_PROD_OFFSET >>> 2] = (prodWord & ~CMDQ_FIRST_COMMAND_FLAG) >>> 0;
      this.readMailbox(bar0Written);
      this.consumed = 0;
    }
    this.prod16 = prodWord & CMDQ_PROD_IDX_MASK;
  }

  forget(): void {
    this.open = false;
    this.memory = undefined;
    this.consumed = 0;
    this.prod16 = 0;
  }

  /** Units between the consumer and the producer. */
  private pendingUnits(): number {
    return (this.prod16 - (this.consumed & CMDQ_PROD_IDX_MASK)) & CMDQ_PROD_IDX_MASK;
  }

  /** Takes the next command into `scratch`. */
  take(): Take {
    if (!this.open || !this.memory) return Take.Empty;
    const pending = this.pendingUnits();
    if (pending === 0) return Take.Empty;
    if (pending > this.depth) {
      // The producer claims more than the ring holds: nothing in it can be trusted.
      this.badProducers++;
      this.consumed += pending;
      return Take.Empty;
    }
    this.readUnit(0);
    // A TLV-encapsulated command (Linux bnxt_re qplib_tlv.h: cmd_discr CMD_DISCR_TLV_ENCAP at 0,
    // its size in 16-byte units as total_size at 8, the command itself from byte 16). bnxt_re
    // sends MODIFY_ROCE_CC this way on P5 and P7 (qplib_sp.c bnxt_qplib_modify_cc).
    const tlv = (this.scratch[0]! | (this.scratch[1]! << 8)) === CMD_DISCR_TLV_ENCAP;
    const units = tlv ? this.scratch[8]! : cmdqBaseCmdSize(this.scratchWords, 0);
    this.encapsulated = false;
    if (tlv && units >= 2 && units <= pending) {
      for (let u = 1; u < units; u++) this.readUnit(u);
      this.consumed += units;
      this.scratch.copyWithin(0, CMDQE_BYTES, units * CMDQE_BYTES);
      this.length = (units - 1) * CMDQE_BYTES;
      this.opcode = cmdqBaseOpcode(this.scratchWords, 0);
      this.cookie = cmdqBaseCookie(this.scratchWords, 0);
      this.encapsulated = true;
      return Take.Command;
    }
    this.opcode = cmdqBaseOpcode(this.scratchWords, 0);
    this.cookie = cmdqBaseCookie(this.scratchWords, 0);
    if (units === 0 || units > pending) {
      // No way to find where the next command starts: skip what the producer published.
      this.consumed += units === 0 ? 1 : pending;
      this.length = CMDQE_BYTES;
      return Take.Malformed;
    }
    for (let u = 1; u < units; u++) this.readUnit(u);
    this.consumed += units;
    this.length = units * CMDQE_BYTES;
    return Take.Command;
  }

  private readUnit(u: number): void {
    const slot = ringSlot(this.consumed + u, this.depth);
    const iova = this.memory!.iova(slot * CMDQE_BYTES);
    // An unmapped unit reads as zeros (and counts as an IOMMU fault).
    if (!this.iommu.readInto(iova, CMDQE_BYTES, this.scratch, u * CMDQE_BYTES)) {
      this.scratch.fill(0, u * CMDQE_BYTES, (u + 1) * CMDQE_BYTES);
    }
  }

  private readMailbox(bar0Written: Uint32Array): void {
    const base = CMDQ_MAILBOX_OFFSET >>> 2;
    const pbl = cmdqInitCmdqPblLo(bar0Written, base) + cmdqInitCmdqPblHi(bar0Written, base) * TWO_POW_32;
    const level = cmdqInitCmdqLvl(bar0Written, base);
    const depth = cmdqInitCmdqSize(bar0Written, base);
    this.creqRingId = cmdqInitCreqRingId(bar0Written, base);
    this.open = false;
    this.memory = undefined;
    if (depth === 0 || level > 2) {
      this.badMailboxes++;
      return;
    }
    const memory = walkPageList(this.iommu, pbl, level, PAGE_BYTES, depth * CMDQE_BYTES);
    if (!memory) {
      this.badMailboxes++;
      return;
    }
    this.memory = memory;
    this.depth = depth;
    this.open = true;
  }
}
