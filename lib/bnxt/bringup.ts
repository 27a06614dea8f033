/**
 * Bring-up and teardown of a P5 physical function over HWRM, in the order Linux's bnxt_en
 * (bnxt.c: bnxt_fw_init_one_p1 and _p2, bnxt_hwrm_func_drv_rgtr, bnxt_alloc_ctx_mem) and
 * DPDK's drivers/net/bnxt (bnxt_ethdev.c: bnxt_init_fw) take. Each step names the command it
 * sends and records what it took in a ledger (drivers/ledger.ts): a refused step gives back
 * everything taken before it, in reverse, and teardown unwinds the same ledger; memory a
 * silent firmware may still name stays quarantined until close.
 */
import type { TraceSink } from '../../firmware-hwrm/trace.ts';
import type { Device, Mmio } from '../../drivers/device.ts';
import { Ledger } from '../../drivers/ledger.ts';
import {
  FUNC_DRV_RGTR_REQ_ENABLES, FUNC_DRV_RGTR_REQ_OS_TYPE, FUNC_DRV_RGTR_RESP_FLAGS, FUNC_DRV_IF_CHANGE_REQ_FLAGS,
  FUNC_QCAPS_RESP_FLAGS, FUNC_QCAPS_RESP_FLAGS_EXT, HWRM_FID_SELF, HWRM_VERSION_MAJOR, HWRM_VERSION_MINOR,
  HWRM_VERSION_UPDATE, VER_GET_RESP_FLAGS,
  shortCommandRequired, linkSpeedMbps, PORT_PHY_QCFG_RESP_LINK,
} from '../../firmware-hwrm/hwrm/index.ts';
import { ok, err, type Result } from '../result.ts';
import { chipByPciId, chipProfile, type ChipProfile } from './chip.ts';
import { DmaPool } from './dma-pool.ts';
import { doorbellBar } from './traced-doorbells.ts';
import { HwrmChannel } from './hwrm-channel.ts';
import { HWRM_COMMANDS as C } from '../../firmware-hwrm/hwrm/commands.ts';
import { configureBackingStore, type BackingStore } from './backing-store.ts';
import { configureBackingStoreV2 } from './backing-store-v2.ts';
import { LIMITS } from './limits.ts';
import { HWRM_ERR_CODE, hwrmErrorName } from '../../firmware-hwrm/hwrm/errors.ts';

export interface FunctionInfo {
  readonly chip: ChipProfile;
  readonly chipNum: number;
  readonly chipRev: number;
  readonly firmwareVersion: string;
  readonly hwrmVersion: string;
  readonly mac: Uint8Array;
  readonly portId: number;
  readonly mtu: number;
  readonly linkUp: boolean;
  readonly linkSpeedMbps: number;
  /** BAR2 offset of DPI 0, the page of the QP and CQ doorbells (ChipProfile.dpiDoorbellOffset). */
  readonly doorbellBase: number;
  /**
   * BAR2 offset of the NQ and CREQ doorbells: the same on P5, right after the L2 doorbell region
   * on P7, not page aligned (ChipProfile.nqDoorbellOffset).
   */
  readonly nqDoorbellBase: number;
}

/** A function brought up over HWRM: what the RoCE layer builds on. */
export interface BnxtFunction {
  readonly device: Device;
  readonly pool: DmaPool;
  readonly hwrm: HwrmChannel;
  /** BAR2 as every doorbell of the function is rung: traced when bring-up was given a trace (traced-doorbells.ts). */
  readonly doorbells: Mmio;
  readonly info: FunctionInfo;
  readonly backingStore: BackingStore;
  /**
   * The firmware runs the new resource manager (it answers FUNC_RESOURCE_QCAPS): rings,
   * statistics contexts and MSI-X vectors are reserved with FUNC_CFG before they are taken.
   */
  readonly reservesResources: boolean;
  /** What bring-up took, in order: tearDown unwinds it. */
  readonly ledger: Ledger;
}

export interface BringUpOptions {
  /** Caps every firmware wait (tests of a silent firmware use a short one). */
  readonly firmwareTimeoutMs?: number;
  /**
   * The pool to allocate from (default: a new one). A caller that passes its own can release
   * what a failed bring-up quarantined once it has closed the device.
   */
  readonly pool?: DmaPool;
  /** Where the HWRM and RoCE channels trace every command and answer (firmware-hwrm/trace.ts). */
  readonly trace?: TraceSink;
}

/**
 * Brings the function up. On failure the device is left as found (minus memory quarantined in
 * the pool: release it after closing the device) and still open.
 */
export function bringUp(device: Device, options: BringUpOptions = {}): Result<BnxtFunction> {
  const pool = options.pool ?? new DmaPool(device.dma);
  const opened = HwrmChannel.open(device, pool, options.firmwareTimeoutMs);
  if (!opened.ok) return opened;
  const hwrm = opened.value;
  hwrm.trace = options.trace;
  const ledger = new Ledger(pool, [hwrm]);
  ledger.release('close the HWRM channel', () => { hwrm.close(); return undefined; });
  const fail = (step: string, why: string): Result<BnxtFunction> => {
    // Give back in reverse; a silent firmware gets no more requests and its memory stays held.
    ledger.unwind();
    return err(`bring-up failed at ${step}: ${why}`);
  };

  // HWRM_VER_GET: interface version, chip, window sizes, timeouts, short-command mode.
  // Retried while the firmware says it is not ready (DEV_NOT_RDY), at most ~5 s as the HSI allows.
  // The first one waits as long as the chip's PCI id asks before VER_GET can name the chip
  // (DPDK bnxt_hwrm.c bnxt_hwrm_ver_get: 1.5 s on P7; ChipProfile.firstVerGetTimeoutMs).
  const firstWaitMs = chipByPciId(device.identity.deviceId)?.firstVerGetTimeoutMs ?? LIMITS.hwrmDefaultTimeoutMs;
  let ver = hwrm.send(C.VER_GET, {
    hwrm_intf_maj: HWRM_VERSION_MAJOR, hwrm_intf_min: HWRM_VERSION_MINOR, hwrm_intf_upd: HWRM_VERSION_UPDATE,
  }, { timeoutMs: firstWaitMs });
  for (let tries = 0; ver.ok && (ver.value.flags & VER_GET_RESP_FLAGS.DEV_NOT_RDY) !== 0 && tries < 50; tries++) {
    device.clock.sleep(100_000);
    ver = hwrm.send(C.VER_GET, {
      hwrm_intf_maj: HWRM_VERSION_MAJOR, hwrm_intf_min: HWRM_VERSION_MINOR, hwrm_intf_upd: HWRM_VERSION_UPDATE,
    });
  }
  if (!ver.ok) return fail(C.VER_GET.name, ver.error);
  const v = ver.value;
  if (v.flags & VER_GET_RESP_FLAGS.DEV_NOT_RDY) return fail(C.VER_GET.name, 'the firmware stayed not ready');
  if (v.hwrm_intf_maj_8b !== HWRM_VERSION_MAJOR)
    return fail(C.VER_GET.name, `HWRM interface ${v.hwrm_intf_maj_8b}.x is not supported (1.x is)`);
  const chip = chipProfile(v.chip_num);
  if (!chip) return fail(C.VER_GET.name, `chip 0x${v.chip_num.toString(16)} is not a Thor (P5) or Thor2 (P7) chip`);
  hwrm.caps = {
    maxReqWinLen: Math.max(v.max_req_win_len, 128),
    maxExtReqLen: Math.max(v.max_ext_req_len, 128),
    shortCmd: shortCommandRequired(v.dev_caps_cfg),
    defaultTimeoutMs: v.def_req_timeout || LIMITS.hwrmDefaultTimeoutMs,
    maxTimeoutMs: (v.max_req_timeout || LIMITS.hwrmMaxTimeoutMs / 1000) * 1000,
  };

  // HWRM_FUNC_RESET: drop whatever a previous owner left (4x the command timeout).
  const reset = hwrm.send(C.FUNC_RESET, {}, { timeoutMs: hwrm.caps.defaultTimeoutMs * LIMITS.hwrmResetTimeoutFactor });
  if (!reset.ok) return fail(C.FUNC_RESET.name, reset.error);

  // HWRM_FUNC_QCAPS: RoCE v2 support, MAC, port.
  const caps = hwrm.send(C.FUNC_QCAPS, { fid: HWRM_FID_SELF });
  if (!caps.ok) return fail(C.FUNC_QCAPS.name, caps.error);
  if ((caps.value.flags & FUNC_QCAPS_RESP_FLAGS.ROCE_V2_SUPPORTED) === 0)
    return fail(C.FUNC_QCAPS.name, 'this function does not support RoCE v2');

  // HWRM_FUNC_DRV_RGTR: register (OS type and version; no async event forwarding: we poll).
  const rgtr = hwrm.send(C.FUNC_DRV_RGTR, {
    enables: FUNC_DRV_RGTR_REQ_ENABLES.OS_TYPE | FUNC_DRV_RGTR_REQ_ENABLES.VER,
    os_type: FUNC_DRV_RGTR_REQ_OS_TYPE.LINUX,
    ver_maj_8b: 0, ver_min_8b: 1, ver_upd_8b: 0,
  });
  if (!rgtr.ok) return fail(C.FUNC_DRV_RGTR.name, rgtr.error);
  ledger.undo(hwrm, C.FUNC_DRV_UNRGTR.name, () => hwrm.send(C.FUNC_DRV_UNRGTR, {}));

  // HWRM_QUEUE_QPORTCFG is not a step of its own: CoS queue ids serve the L2 TX path. The V1
  // backing store below sends it only when QCAPS names no TQM ring count (tqm_fp_rings_count 0:
  // backing-store.ts, the port's CoS queues, as bnxt_en's bp->max_q).

  // Context memory, RoCE kinds included: the V2 commands (QCAPS_V2 / CFG_V2 per type) where
  // FUNC_QCAPS flags_ext says BS_V2_SUPPORTED, as bnxt_en decides it (bnxt.c
  // __bnxt_hwrm_func_qcaps sets BNXT_FW_CAP_BACKING_STORE_V2; bnxt_alloc_ctx_mem then takes
  // bnxt_backing_store_cfg_v2), else V1 (QCAPS + one CFG).
  const v2 = (caps.value.flags_ext & FUNC_QCAPS_RESP_FLAGS_EXT.BS_V2_SUPPORTED) !== 0;
  const bs = v2 ? configureBackingStoreV2(hwrm, pool, ledger) : configureBackingStore(hwrm, pool, ledger);
  if (!bs.ok) return fail(v2 ? C.FUNC_BACKING_STORE_CFG_V2.name : C.FUNC_BACKING_STORE_CFG.name, bs.error);

  // HWRM_FUNC_RESOURCE_QCAPS: answered by firmware with the new resource manager, which hands
  // out only what FUNC_CFG reserved (Linux bnxt.c bnxt_hwrm_func_resc_qcaps sets
  // BNXT_FW_CAP_NEW_RM on success; older firmware answers CMD_NOT_SUPPORTED and needs none).
  const resc = hwrm.send(C.FUNC_RESOURCE_QCAPS, { fid: HWRM_FID_SELF });
  const oldFirmware = !resc.ok && resc.error.includes(hwrmErrorName(HWRM_ERR_CODE.CMD_NOT_SUPPORTED));
  if (!resc.ok && !oldFirmware) return fail(C.FUNC_RESOURCE_QCAPS.name, resc.error);

  // HWRM_FUNC_QCFG: MTU and the doorbell area (P5 uses the fixed PF doorbell offset).
  const qcfg = hwrm.send(C.FUNC_QCFG, { fid: HWRM_FID_SELF });
  if (!qcfg.ok) return fail(C.FUNC_QCFG.name, qcfg.error);

  // HWRM_PORT_PHY_QCFG: link state and speed.
  const phy = hwrm.send(C.PORT_PHY_QCFG, { port_id: caps.value.port_id });
  if (!phy.ok) return fail(C.PORT_PHY_QCFG.name, phy.error);

  // HWRM_FUNC_DRV_IF_CHANGE up: the interface opens (bnxt.c bnxt_open -> bnxt_hwrm_if_change,
  // sent before __bnxt_open_nic allocates rings, and only when FUNC_DRV_RGTR answered
  // IF_CHANGE_SUPPORTED). Down at close, before unregistering (bnxt_close). The answer's
  // RESC_CHANGE and HOT_FW_RESET_DONE tell bnxt_en to reserve again or re-initialise after a
  // firmware reset; this function was just reset and reserves after this (roce-device.ts).
  if ((rgtr.value.flags & FUNC_DRV_RGTR_RESP_FLAGS.IF_CHANGE_SUPPORTED) !== 0) {
    const up = hwrm.send(C.FUNC_DRV_IF_CHANGE, { flags: FUNC_DRV_IF_CHANGE_REQ_FLAGS.UP });
    if (!up.ok) return fail(`${C.FUNC_DRV_IF_CHANGE.name} (up)`, up.error);
    ledger.undo(hwrm, `${C.FUNC_DRV_IF_CHANGE.name} (down)`, () => hwrm.send(C.FUNC_DRV_IF_CHANGE, { flags: 0 }));
  }

  const fwVersion = `${v.hwrm_fw_major || v.hwrm_fw_maj_8b}.${v.hwrm_fw_minor || v.hwrm_fw_min_8b}.` +
    `${v.hwrm_fw_build || v.hwrm_fw_bld_8b}.${v.hwrm_fw_patch || v.hwrm_fw_rsvd_8b}`;
  return ok({
    device, pool, hwrm, doorbells: doorbellBar(device.bar(2), options.trace), backingStore: bs.value, ledger,
    reservesResources: resc.ok,
    info: {
      chip, chipNum: v.chip_num, chipRev: v.chip_rev,
      firmwareVersion: fwVersion,
      hwrmVersion: `${v.hwrm_intf_maj_8b}.${v.hwrm_intf_min_8b}.${v.hwrm_intf_upd_8b}.${v.hwrm_intf_rsvd_8b}`,
      mac: caps.value.mac_address,
      portId: caps.value.port_id,
      mtu: qcfg.value.admin_mtu || qcfg.value.mru || 1500,
      linkUp: phy.value.link === PORT_PHY_QCFG_RESP_LINK.LINK,
      linkSpeedMbps: linkSpeedMbps(phy.value.link_speed),
      doorbellBase: chip.dpiDoorbellOffset(qcfg.value.legacy_l2_db_size_kb),
      nqDoorbellBase: chip.nqDoorbellOffset(qcfg.value.legacy_l2_db_size_kb),
    },
  });
}

/**
 * Teardown in reverse of bring-up: FUNC_DRV_UNRGTR (unless the firmware stopped answering),
 * then context memory (quarantined if it did) and the channel.
 */
export function tearDown(func: BnxtFunction): void {
  func.ledger.unwind();
}
