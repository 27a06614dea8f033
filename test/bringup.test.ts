// Issue 2: bring-up and teardown over HWRM on the software NIC, refusals, silence and
// malformed answers at every step.
import t from 'tap';
import { bringUp, tearDown } from '../lib/bnxt/bringup.ts';
import { HWRM_COMMANDS, HWRM_ERR_CODE } from '../firmware-hwrm/hwrm/index.ts';
import { emuDevice } from './helpers/emu-device.ts';
import type { MalformedKind } from '../drivers/emu/model/firmware/hwrm-faults.ts';

// Each chip's bring-up, in order: P5 takes context memory V1, P7 V2 (FUNC_QCAPS flags_ext
// BS_V2_SUPPORTED; bnxt.c bnxt_alloc_ctx_mem, bnxt_backing_store_cfg_v2).
const CHIP_STEPS: Record<'BCM57508' | 'BCM57608', [string, number][]> = {
  BCM57508: [
    ['HWRM_VER_GET', HWRM_COMMANDS.VER_GET.req_type],
    ['HWRM_FUNC_RESET', HWRM_COMMANDS.FUNC_RESET.req_type],
    ['HWRM_FUNC_QCAPS', HWRM_COMMANDS.FUNC_QCAPS.req_type],
    ['HWRM_FUNC_DRV_RGTR', HWRM_COMMANDS.FUNC_DRV_RGTR.req_type],
    ['HWRM_FUNC_BACKING_STORE_QCAPS', HWRM_COMMANDS.FUNC_BACKING_STORE_QCAPS.req_type],
    ['HWRM_FUNC_BACKING_STORE_CFG', HWRM_COMMANDS.FUNC_BACKING_STORE_CFG.req_type],
    ['HWRM_FUNC_QCFG', HWRM_COMMANDS.FUNC_QCFG.req_type],
    ['HWRM_PORT_PHY_QCFG', HWRM_COMMANDS.PORT_PHY_QCFG.req_type],
  ],
  BCM57608: [
    ['HWRM_VER_GET', HWRM_COMMANDS.VER_GET.req_type],
    ['HWRM_FUNC_RESET', HWRM_COMMANDS.FUNC_RESET.req_type],
    ['HWRM_FUNC_QCAPS', HWRM_COMMANDS.FUNC_QCAPS.req_type],
    ['HWRM_FUNC_DRV_RGTR', HWRM_COMMANDS.FUNC_DRV_RGTR.req_type],
    ['HWRM_FUNC_BACKING_STORE_QCAPS_V2', HWRM_COMMANDS.FUNC_BACKING_STORE_QCAPS_V2.req_type],
    ['HWRM_FUNC_BACKING_STORE_CFG_V2', HWRM_COMMANDS.FUNC_BACKING_STORE_CFG_V2.req_type],
    ['HWRM_FUNC_QCFG', HWRM_COMMANDS.FUNC_QCFG.req_type],
    ['HWRM_PORT_PHY_QCFG', HWRM_COMMANDS.PORT_PHY_QCFG.req_type],
  ],
};
const CHIPS = ['BCM57508', 'BCM57608'] as const;
/** What each chip's FUNC_QCFG makes of the doorbells: DPI 0 and the NQ/CREQ offset (firmware-hwrm/chips.ts). */
const DOORBELLS = {
  // P5 PF: both at DB_PF_OFFSET_P5 (bnxt.h). P7: legacy_l2_db_size_kb (66 on the model) x 1024
  // for the NQs, page aligned for DPI 0 (bnxt.c bnxt_hwrm_func_qcfg, bnxt_re_set_db_offset).
  BCM57508: { dpi: 0x10000, nq: 0x10000, chipNum: 0x1750, family: 'P5' },
  BCM57608: { dpi: 0x11000, nq: 0x10800, chipNum: 0x1760, family: 'P7' },
} as const;
const STEPS = CHIPS.flatMap((chip) => CHIP_STEPS[chip].map(([name, type]) => [chip, name, type] as const));


t.test('brings a BCM57508 and a BCM57608 up and down, in both the stepped and the threaded model', async (t) => {
  for (const chip of CHIPS) for (const mode of ['stepped', 'thread'] as const) {
    const d = emuDevice(mode, 1, chip);
    const fn = bringUp(d);
    if (!fn.ok) { t.fail(fn.error); d.close(); continue; }
    const info = fn.value.info;
    const want = DOORBELLS[chip];
    t.equal(info.chip.name, chip, `${mode}: chip`);
    t.equal(info.chipNum, want.chipNum);
    t.equal(info.chip.family, want.family);
    t.match(info.hwrmVersion, /^1\.10\.3\.\d+$/);
    t.match(info.firmwareVersion, /^\d+\.\d+\.\d+\.\d+$/);
    t.same([...info.mac], [...d.config.mac], 'MAC from FUNC_QCAPS is the NIC\'s');
    t.equal(info.linkUp, true);
    t.equal(info.linkSpeedMbps, 200000);
    t.equal(info.doorbellBase, want.dpi, `${chip}: DPI 0 (QP and CQ doorbells)`);
    t.equal(info.nqDoorbellBase, want.nq, `${chip}: the NQ and CREQ doorbells`);
    const up = d.emu.hwrm.resources();
    t.equal(up.registered, true);
    t.equal(up.backingStore, true);
    tearDown(fn.value);
    const down = d.emu.hwrm.resources();
    t.equal(down.registered, false, 'FUNC_DRV_UNRGTR sent');
    t.equal(d.dma.allocatedBytes, 0, `${mode}: all DMA memory given back`);
    d.close();
  }
});

t.test('a refusal at each step names the step and the HWRM error, and gives back everything', async (t) => {
  for (const [chip, name, type] of STEPS) {
    const d = emuDevice('stepped', 1, chip);
    d.emu.hwrm.refuseType(type, HWRM_ERR_CODE.RESOURCE_ALLOC_ERROR);
    const fn = bringUp(d);
    t.notOk(fn.ok, `${chip}: ${name} refused`);
    if (!fn.ok) {
      t.match(fn.error, name, 'the error names the step');
      t.match(fn.error, 'RESOURCE_ALLOC_ERROR', 'and the HWRM error');
    }
    const r = d.emu.hwrm.resources();
    t.equal(r.registered, false, `${name}: unregistered again`);
    t.equal(r.rings + r.statCtxs, 0);
    t.equal(d.dma.allocatedBytes, 0, `${name}: no DMA memory kept`);
    t.equal(d.dma.allocatedBuffers, 0);
    d.close();
  }
});

t.test('a firmware that stops answering: open fails after the bound, named memory is quarantined', async (t) => {
  for (const chip of CHIPS) for (let answered = 0; answered < CHIP_STEPS[chip].length; answered++) {
    const d = emuDevice('stepped', 1, chip);
    // Let `answered` requests through, then go silent.
    d.emu.hwrm.silenceAfter(answered);
    const fn = bringUp(d, { firmwareTimeoutMs: 50 });
    t.notOk(fn.ok, `${chip}: silent after ${answered} answers`);
    if (!fn.ok) t.match(fn.error, /did not answer|never set the valid byte/);
    // The response buffer (and anything the silent request named) is never freed until close.
    t.ok(d.dma.allocatedBytes > 0, 'memory the firmware may name stays allocated');
    const held = d.dma.allocatedBytes;
    const more = d.dma.alloc(4096);
    t.ok(more.ok);
    if (more.ok) {
      d.dma.free(more.value);
      t.equal(d.dma.allocatedBytes, held, 'quarantined memory is not reused or freed');
    }
    d.close();
  }
});

t.test('malformed answers give clear errors and never crash', async (t) => {
  const cases: [MalformedKind, RegExp][] = [
    ['seq', /did not answer/],
    ['resp_len', /malformed firmware answer \(resp_len 5000/],
    ['no_valid', /never set the valid byte/],
    ['wrong_type', /malformed firmware answer \(it answers request type/],
  ];
  for (const [kind, want] of cases) {
    for (let step = 1; step <= 3; step++) {
      const d = emuDevice();
      d.emu.hwrm.malformNth(step, kind);
      const fn = bringUp(d, { firmwareTimeoutMs: 50 });
      t.notOk(fn.ok, `${kind} at request ${step}`);
      if (!fn.ok) t.match(fn.error, want);
      d.close();
    }
  }
});
