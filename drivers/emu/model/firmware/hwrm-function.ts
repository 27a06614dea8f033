/**
 * The function's own HWRM commands: the firmware's version and limits (VER_GET), reset,
 * capabilities and configuration (FUNC_QCAPS, FUNC_QCFG), driver registration (FUNC_DRV_*),
 * and what Linux's bnxt_en asks at probe beside them (FW_SET_TIME, NVM_GET_DEV_INFO).
 */
import * as H from '../../../../firmware-hwrm/hwrm/index.ts';
import type { HwrmResponse } from '../../../../firmware-hwrm/hwrm/commands.ts';
import type { HwrmContext, HwrmHandlers } from './hwrm-handler.ts';
import { reservedQcfgFields } from './hwrm-reservation.ts';

/** The BAR0 request window: a longer request comes by short command (VER_GET max_req_win_len). */
export const WINDOW_BYTES = 128;
/** The longest request a short command may carry (VER_GET max_ext_req_len). */
export const MAX_EXT_REQ_LEN = 336;

function verGet({ bus }: HwrmContext): Partial<HwrmResponse<'VER_GET'>> {
  const name = (s: string) => Uint8Array.from({ length: 16 }, (_, i) => s.charCodeAt(i) || 0);
  // The chip's identity and the interface version it reports come from its profile.
  const chip = bus.chip;
  const intf = chip.model.hwrmInterface;
  return {
    hwrm_intf_maj_8b: intf.maj, hwrm_intf_min_8b: intf.min, hwrm_intf_upd_8b: intf.upd, hwrm_intf_rsvd_8b: intf.rsvd,
    hwrm_fw_maj_8b: 230, hwrm_fw_min_8b: 2, hwrm_fw_bld_8b: 52, hwrm_fw_rsvd_8b: 0,
    mgmt_fw_maj_8b: 230, mgmt_fw_min_8b: 2, mgmt_fw_bld_8b: 52,
    netctrl_fw_maj_8b: 230, netctrl_fw_min_8b: 2, netctrl_fw_bld_8b: 52,
    roce_fw_maj_8b: 230, roce_fw_min_8b: 2, roce_fw_bld_8b: 52,
    dev_caps_cfg: H.VER_GET_RESP_DEV_CAPS_CFG.SHORT_CMD_SUPPORTED,
    hwrm_fw_name: name('rig-bnxt-emu'), mgmt_fw_name: name('ChiMP'), netctrl_fw_name: name('netctrl'),
    active_pkg_name: name('230.2.52.0'), roce_fw_name: name('roce'),
    chip_num: chip.chipNum, chip_rev: chip.model.chipRev, chip_metal: chip.model.chipMetal, chip_platform_type: 0,
    max_req_win_len: WINDOW_BYTES, max_resp_len: H.HWRM_MAX_RESP_LEN, def_req_timeout: 500, flags: 0, always_1: 1,
    hwrm_intf_major: intf.maj, hwrm_intf_minor: intf.min, hwrm_intf_build: intf.upd, hwrm_intf_patch: intf.rsvd,
    hwrm_fw_major: 230, hwrm_fw_minor: 2, hwrm_fw_build: 52, hwrm_fw_patch: 0,
    roce_fw_major: 230, roce_fw_minor: 2, roce_fw_build: 52, roce_fw_patch: 0,
    max_ext_req_len: MAX_EXT_REQ_LEN, max_req_timeout: 40,
  };
}

function funcQcaps({ bus }: HwrmContext): Partial<HwrmResponse<'FUNC_QCAPS'>> {
  const F = H.FUNC_QCAPS_RESP_FLAGS;
  return {
    fid: 0, port_id: 0, flags: F.ROCE_V1_SUPPORTED | F.ROCE_V2_SUPPORTED | F.EXT_STATS_SUPPORTED,
    mac_address: bus.config.mac, max_rsscos_ctx: 64, max_cmpl_rings: 128, max_tx_rings: 128, max_rx_rings: 128,
    max_l2_ctxs: 128, max_vnics: 64, max_stat_ctx: 128, max_hw_ring_grps: 0, flags_ext: contextMemoryFlags(bus.chip),
  };
}

/**
 * FUNC_QCAPS flags_ext for the chip's context memory commands: a V2 chip (Thor2) offers and
 * requires the V2 ones (hsi.h FUNC_QCAPS_RESP_FLAGS_EXT_BS_V2_SUPPORTED / _REQUIRED; bnxt.c
 * __bnxt_hwrm_func_qcaps), a V1 chip neither.
 */
function contextMemoryFlags(chip: HwrmContext['bus']['chip']): number {
  const X = H.FUNC_QCAPS_RESP_FLAGS_EXT;
  return chip.backingStore === 'v2' ? X.BS_V2_SUPPORTED | X.BS_V2_REQUIRED : 0;
}

function funcQcfg({ bus, fn }: HwrmContext): Partial<HwrmResponse<'FUNC_QCFG'>> {
  const chip = bus.chip.model;
  return {
    fid: 0, port_id: 0, mac_address: bus.config.mac, admin_mtu: bus.config.mtu, mru: bus.config.mtu,
    alloc_msix: 64, l2_doorbell_bar_size_kb: chip.l2DoorbellBarSizeKb, always_1: 1,
    legacy_l2_db_size_kb: chip.legacyL2DbSizeKb, db_page_size: 0, host_mtu: bus.config.mtu,
    ...reservedQcfgFields(fn),
  };
}

export const FUNCTION_HANDLERS = {
  VER_GET: (ctx) => ({ values: verGet(ctx) }),
  FUNC_RESET: (ctx) => {
    ctx.resetFunction();
    return { values: {} };
  },
  FUNC_QCAPS: (ctx, req) => req.fid !== H.HWRM_FID_SELF ? { error: H.HWRM_ERR_CODE.INVALID_PARAMS }
    : { values: funcQcaps(ctx) },
  FUNC_QCFG: (ctx, req) => req.fid !== H.HWRM_FID_SELF ? { error: H.HWRM_ERR_CODE.INVALID_PARAMS }
    : { values: funcQcfg(ctx) },
  FUNC_DRV_RGTR: ({ fn }) => {
    fn.registered = true;
    // Current Thor firmware takes FUNC_DRV_IF_CHANGE (bnxt.c bnxt_hwrm_func_drv_rgtr sets
    // BNXT_FW_CAP_IF_CHANGE from this flag, and bnxt_open then sends it).
    return { values: { flags: H.FUNC_DRV_RGTR_RESP_FLAGS.IF_CHANGE_SUPPORTED } };
  },
  FUNC_DRV_UNRGTR: ({ fn }) => {
    if (!fn.registered) return { error: H.HWRM_ERR_CODE.INVALID_PARAMS };
    fn.registered = false;
    return { values: {} };
  },
  FUNC_DRV_IF_CHANGE: ({ fn }, req) => {
    // Kept, not enforced: bnxt_re allocates its rings at probe, before any bnxt_open.
    // No resource change or hot reset to report (RESC_CHANGE, HOT_FW_RESET_DONE stay 0).
    fn.interfaceUp = (req.flags & H.FUNC_DRV_IF_CHANGE_REQ_FLAGS.UP) !== 0;
    return { values: { flags: 0 } };
  },
  FW_SET_TIME: (_ctx, req) => {
    // Taken when it is a date (the firmware keeps time for its logs; the model keeps none).
    const ok = req.month >= 1 && req.month <= 12 && req.day >= 1 && req.day <= 31 && req.hour < 24 &&
      req.minute < 60 && req.second < 61 && req.millisecond < 1000;
    return ok ? { values: {} } : { error: H.HWRM_ERR_CODE.INVALID_PARAMS };
  },
  NVM_GET_DEV_INFO: () => {
    const name = new Uint8Array(16);
    name.set(new TextEncoder().encode('230.2.52.0'));
    return { values: {
      manufacturer_id: 0, device_id: 0, sector_size: 4096, nvram_size: 16 << 20, reserved_size: 0, available_size: 0,
      nvm_cfg_ver_maj: 1, nvm_cfg_ver_min: 0, nvm_cfg_ver_upd: 0, flags: 0, pkg_name: name,
      hwrm_fw_major: 230, hwrm_fw_minor: 2, hwrm_fw_build: 52, hwrm_fw_patch: 0, mgmt_fw_major: 230, mgmt_fw_minor: 2,
      mgmt_fw_build: 52, mgmt_fw_patch: 0, roce_fw_major: 230, roce_fw_minor: 2, roce_fw_build: 52, roce_fw_patch: 0,
      netctrl_fw_major: 230, netctrl_fw_minor: 2, netctrl_fw_build: 52, netctrl_fw_patch: 0,
    } };
  },
} satisfies HwrmHandlers;
