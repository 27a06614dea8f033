/**
 * The RoCE commands the driver wrote, as bytes: every RcfwChannel in this process copies each
 * command out of its CMDQ ring memory once it was answered (what the NIC read), so tests check
 * the driver's bytes at roce_hsi.h offsets instead of through the codec that wrote them.
 */
import { RcfwChannel } from '../../lib/bnxt/rcfw-channel.ts';

const CMDQE_BYTES = 16;

export interface SentCommand {
  /** cmdq_base byte 0. */
  readonly opcode: number;
  /** The whole command, cmd_size units of 16 bytes, as it lay in the CMDQ. */
  readonly bytes: Uint8Array;
}

export interface CmdqCapture {
  readonly sent: SentCommand[];
  /** The commands with `opcode`, in order. */
  of(opcode: number): Uint8Array[];
  restore(): void;
}

type Channel = { prod: number; cmdq: { bytes: Uint8Array } };

export function captureCmdq(): CmdqCapture {
  const original = RcfwChannel.prototype.send;
  const sent: SentCommand[] = [];
  RcfwChannel.prototype.send = function (this: RcfwChannel, ...args: Parameters<typeof original>) {
    const ch = this as unknown as Channel;
    const start = ch.prod;
    const r = original.apply(this, args);
    const units = ch.prod - start;
    const ring = ch.cmdq.bytes;
    const slots = ring.length / CMDQE_BYTES;
    const bytes = new Uint8Array(units * CMDQE_BYTES);
    for (let u = 0; u < units; u++) {
      const at = ((start + u) % slots) * CMDQE_BYTES;
      bytes.set(ring.subarray(at, at + CMDQE_BYTES), u * CMDQE_BYTES);
    }
    if (units > 0) sent.push({ opcode: bytes[0]!, bytes });
    return r;
  } as typeof original;
  return {
    sent,
    of: (opcode) => sent.filter((c) => c.opcode === opcode).map((c) => c.bytes),
    restore: () => { RcfwChannel.prototype.send = original; },
  };
}
