/**
 * One-line descriptions of frames for traces and test failures (allocates: never on the hot
 * path unless tracing is switched on).
 */
import { formatIpv4 } from './addresses.ts';
import { aethSyndromeName } from './aeth.ts';
import { OPCODE_FLAGS, OpFlag, opcodeName } from './opcodes.ts';
import type { RoceFrame } from './roce-frame.ts';

const hex = (v: number, digits: number) => `0x${(v >>> 0).toString(16).padStart(digits, '0')}`;

/** e.g. `10.77.0.2:49152 > 10.77.0.1 RC_ACKNOWLEDGE qp=0x000011 psn=0x000005 ACK(credits=31) msn=3` */
export function describeFrame(f: RoceFrame): string {
  const flags = OPCODE_FLAGS[f.opcode & 0xff]!;
  let s =
    `${formatIpv4(f.srcIp)}:${f.udpSrcPort} > ${formatIpv4(f.dstIp)} ${opcodeName(f.opcode)} qp=${hex(f.destQp, 6)} ` +
      `psn=${hex(f.psn, 6)}`;
  if (f.ackReq) s += ' A';
  if (f.se) s += ' SE';
  if (flags & OpFlag.RETH)
    s += ` va=${hex(f.rethVaHi, 8)}${hex(f.rethVaLo, 8).slice(2)} rkey=${hex(f.rethRkey, 8)} len=${f.rethDmaLength}`;
  if (flags & OpFlag.ATOMIC_ETH)
    s += ` va=${hex(f.atomicVaHi, 8)}${hex(f.atomicVaLo, 8).slice(2)} rkey=${hex(f.atomicRkey, 8)}`;
  if (flags & OpFlag.AETH) s += ` ${aethSyndromeName(f.aethSyndrome)} msn=${f.aethMsn}`;
  if (flags & OpFlag.IMMDT) s += ` imm=${hex(f.immDt, 8)}`;
  if (flags & OpFlag.IETH) s += ` inv_rkey=${hex(f.iethRkey, 8)}`;
  if (flags & OpFlag.PAYLOAD) s += ` payload=${f.payloadLength}`;
  return s;
}
