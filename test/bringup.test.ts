// Issue 2: bring-up and teardown over HWRM on the software NIC, refusals, silence and
// malformed answers at every step.
import t from 'tap';
import { bringUp, tearDown } from '../lib/bnxt/bringup.ts';
import { HWRM, HWRM_ERR_CODE } from '../firmware-hwrm/hwrm/index.ts';
import { emuDevice } from './helpers/emu-device.ts';
import type { MalformedKind } from '../drivers/emu/firmware/hwrm-faults.ts';

const STEPS: [string, number][] = [
  ['HWRM_VER_GET', HWRM.VER_GET],
  ['HWRM_FUNC_RESET', HWRM.FUNC_RESET],
  ['HWRM_FUNC_QCAPS', HWRM.FUNC_QCAPS],
  ['HWRM_FUNC_DRV_RGTR', HWRM.FUNC_DRV_RGTR],
  ['HWRM_FUNC_BACKING_STORE_QCAPS', HWRM.FUNC_BACKING_STORE_QCAPS],
  ['HWRM_FUNC_BACKING_STORE_CFG', HWRM.FUNC_BACKING_STORE_CFG],
  ['HWRM_FUNC_QCFG', HWRM.FUNC_QCFG],
  ['HWRM_PORT_PHY_QCFG', HWRM.PORT_PHY_QCFG],
];


t.test('brings a BCM57508 up and down, in both the stepped and the threaded model', async (t) => {
  for (const mode of ['stepped', 'thread'] as const) {
    const d = emuDevice(mode);
    const fn = bringUp(d);
    if (!fn.ok) { t.fail(fn.error); d.close(); continue; }
    const info = fn.value.info;
    t.equal(info.chip.name, 'BCM57508', `${mode}: chip`);
    t.equal(info.chipNum, 0x1750);
    t.equal(info.chip.family, 'P5');
    t.match(info.hwrmVersion, /^1\.10\.3\.\d+$/);
    t.match(info.firmwareVersion, /^\d+\.\d+\.\d+\.\d+$/);
    t.same([...info.mac], [...d.config.mac], 'MAC from FUNC_QCAPS is the NIC\'s');
    t.equal(info.linkUp, true);
    t.equal(info.linkSpeedMbps, 200000);
    t.equal(info.doorbellBase, 0x10000, 'P5 PF doorbells start at BAR2 + 0x10000');
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
  for (const [name, type] of STEPS) {
    const d = emuDevice();
    d.emu.hwrm.refuseType(type, HWRM_ERR_CODE.RESOURCE_ALLOC_ERROR);
    const fn = bringUp(d);
    t.notOk(fn.ok, `${name} refused`);
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
  for (let answered = 0; answered < STEPS.length; answered++) {
    const d = emuDevice();
    // Let `answered` requests through, then go silent.
    d.emu.hwrm.silenceAfter(answered);
    const fn = bringUp(d, { firmwareTimeoutMs: 50 });
    t.notOk(fn.ok, `silent after ${answered} answers`);
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
