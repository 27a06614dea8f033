/**
 * Firmware personalities: which firmware the software NIC plays. Real Thor cards run many
 * firmware versions, and the public drivers branch on what QUERY_FUNC reports, so a driver that
 * only ever met one answer would not have been tried on the others:
 *
 *   current    unified MR registration (REGISTER_MR with ALLOC_MR, dev_cap_flags
 *              MR_REGISTER_ALLOC) and hardware requester retransmission (HW_REQUESTER_RETX_ENABLED)
 *              with the PSN-search table in host memory (dev_cap_ext_flags_2
 *              REQ_RETRANSMISSION_SUPPORT HOST_PSN_TABLE): what the real Linux 6.12 bnxt_re was
 *              run against in the bnxt guest test
 *   current-msn  the same, with the host MSN table instead (REQ_RETRANSMISSION_SUPPORT
 *              HOST_MSN_TABLE, the way Thor2 firmware keeps it). Offered on the P5 model too, so
 *              the MSN path runs on a P5 chip's static WQEs, not only on P7's variable ones;
 *              whether a P5 firmware ever reports it is unverified (docs/hardware.md)
 *   current-iqm  the same as current, with internal queue memory (dev_cap_flags
 *              INTERNAL_QUEUE_MEMORY, Broadcom's bnxt_re BNXT_RE_IQM): MODIFY_QP takes the read
 *              depths as they are (ORD, IRD), not as ORRQ / IRRQ slots. Offered so the driver's
 *              IQM branch runs; the bit's value and which firmware reports it are unverified
 *              (docs/hardware.md)
 *   p5-legacy  an older P5 firmware: neither flag. REGISTER_MR takes only a key from
 *              ALLOCATE_MRW, and INITIALIZE_FW may not claim hardware retransmission.
 *
 * The flags are what Linux bnxt_re reads (qplib_res.h `_is_alloc_mr_unified`,
 * `_is_hw_retx_supported`, `_is_host_msn_table`); the unified flow is new in 2024 ("RDMA/bnxt_re: Avoid an extra hwrm
 * per MR creation": firmware without the flag has only the classic flow). A software NIC
 * opened without a choice plays RIG_BNXT_EMU_FIRMWARE's personality, else `current`: the
 * test helpers and .ci/run set the variable to run the suite on each.
 *
 * On a chip whose firmware keeps the MSN table (Thor2: the profile's sqPsnTable), a personality
 * with hardware retransmission names HOST_MSN_TABLE instead of HOST_PSN_TABLE
 * (personalityOnChip): `current` and `current-msn` are then the same firmware.
 */
import { invalid } from '../../../../firmware-hwrm/errors.ts';
import type { ChipProfile } from '../../../../firmware-hwrm/chips.ts';
import type { FirmwareName } from '../config.ts';
import {
  DevCapFlags, REQ_RETRANSMISSION_SUPPORT_MASK, REQ_RETRANSMISSION_SUPPORT_SHIFT, ReqRetransmissionSupport,
} from '../../../../firmware-hwrm/roce/commands-fw.ts';

export interface FirmwarePersonality {
  readonly name: FirmwareName;
  /** The RoCE firmware version (QUERY_VERSION fw_maj.fw_minor.fw_bld.fw_rsvd). */
  readonly roceVersion: { readonly maj: number; readonly minor: number; readonly bld: number; readonly rsvd: number };
  /** QUERY_FUNC dev_cap_flags. */
  readonly devCapFlags: number;
  /** QUERY_FUNC dev_cap_ext_flags_2 (its REQ_RETRANSMISSION_SUPPORT field names the SQ's table). */
  readonly devCapExtFlags2: number;
}

export const FIRMWARE_PERSONALITIES: Readonly<Record<FirmwareName, FirmwarePersonality>> = {
  current: {
    name: 'current',
    roceVersion: { maj: 230, minor: 2, bld: 52, rsvd: 0 },
    devCapFlags: DevCapFlags.MR_REGISTER_ALLOC | DevCapFlags.HW_REQUESTER_RETX_ENABLED,
    devCapExtFlags2: ReqRetransmissionSupport.HOST_PSN_TABLE << REQ_RETRANSMISSION_SUPPORT_SHIFT,
  },
  'current-msn': {
    name: 'current-msn',
    roceVersion: { maj: 230, minor: 2, bld: 52, rsvd: 0 },
    devCapFlags: DevCapFlags.MR_REGISTER_ALLOC | DevCapFlags.HW_REQUESTER_RETX_ENABLED,
    devCapExtFlags2: ReqRetransmissionSupport.HOST_MSN_TABLE << REQ_RETRANSMISSION_SUPPORT_SHIFT,
  },
  'current-iqm': {
    name: 'current-iqm',
    roceVersion: { maj: 230, minor: 2, bld: 52, rsvd: 0 },
    devCapFlags: DevCapFlags.MR_REGISTER_ALLOC | DevCapFlags.HW_REQUESTER_RETX_ENABLED |
      DevCapFlags.INTERNAL_QUEUE_MEMORY,
    devCapExtFlags2: ReqRetransmissionSupport.HOST_PSN_TABLE << REQ_RETRANSMISSION_SUPPORT_SHIFT,
  },
  'p5-legacy': {
    name: 'p5-legacy',
    roceVersion: { maj: 218, minor: 1, bld: 77, rsvd: 0 },
    devCapFlags: 0,
    devCapExtFlags2: 0,
  },
};

/** The environment variable naming the personality of software NICs opened without one. */
export const FIRMWARE_ENV = 'RIG_BNXT_EMU_FIRMWARE';
export const DEFAULT_FIRMWARE: FirmwareName = 'current';

/** True if `name` is a personality's name. */
export function isFirmwareName(name: unknown): name is FirmwareName {
  return typeof name === 'string' && Object.hasOwn(FIRMWARE_PERSONALITIES, name);
}

/**
 * The personality `name` names, else the environment's, else `current`. A name that is none
 * (given, or in the environment) is a misuse: InvalidArgument listing the ones there are.
 */
export function firmwarePersonality(
  name: string | undefined, env: Readonly<Record<string, string | undefined>> = process.env,
): FirmwarePersonality {
  const chosen = name ?? (env[FIRMWARE_ENV] || undefined) ?? DEFAULT_FIRMWARE;
  if (!isFirmwareName(chosen)) {
    const from = name !== undefined ? 'firmware' : FIRMWARE_ENV;
    invalid(`Nic.open: ${from} "${chosen}" is not one of ${Object.keys(FIRMWARE_PERSONALITIES).join(', ')}`);
  }
  return FIRMWARE_PERSONALITIES[chosen];
}

/**
 * `p` as the firmware of `chip` plays it: with hardware retransmission, the SQ table is the one
 * the chip keeps (REQ_RETRANSMISSION_SUPPORT HOST_MSN_TABLE on P7, Linux qplib_res.h
 * _is_host_msn_table; the kernel keeps the MSN table for P7 QPs), else the personality's own.
 */
export function personalityOnChip(p: FirmwarePersonality, chip: ChipProfile): FirmwarePersonality {
  const field = REQ_RETRANSMISSION_SUPPORT_MASK << REQ_RETRANSMISSION_SUPPORT_SHIFT;
  const psnTable = ReqRetransmissionSupport.HOST_PSN_TABLE << REQ_RETRANSMISSION_SUPPORT_SHIFT;
  const hwRetx = (p.devCapFlags & DevCapFlags.HW_REQUESTER_RETX_ENABLED) !== 0;
  if (chip.sqPsnTable !== 'msn' || !hwRetx || (p.devCapExtFlags2 & field) !== psnTable) return p;
  const msn = ReqRetransmissionSupport.HOST_MSN_TABLE << REQ_RETRANSMISSION_SUPPORT_SHIFT;
  return { ...p, devCapExtFlags2: (p.devCapExtFlags2 & ~field) | msn };
}
