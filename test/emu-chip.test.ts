/**
 * The software NIC built from a chip profile (firmware-hwrm/chips.ts): opened as a chip, it
 * presents that chip's PCI ids, answers VER_GET with its chip_num and FUNC_QCFG with its doorbell
 * region; Nic.open, the environment and the CLI choose the chip; an unknown name is a misuse.
 * Expected values are the public ones (bnxt.h CHIP_NUM_*, bnxt.c bnxt_pci_tbl) at hsi.h's
 * offsets, by hand, not read back from the profile table.
 */
import t from 'tap';
import * as H from '../firmware-hwrm/hwrm/index.ts';
import { EmuRig } from './helpers/emu-roce-setup.ts';
import { openEmu } from '../drivers/emu/host/device.ts';
import { emuChip, CHIP_ENV, macFromNumber, type EmuConfig } from '../drivers/emu/model/config.ts';
import { NicVfioDevice } from '../drivers/emu/host/vfio-user/nic-device.ts';
import { Nic } from '../lib/index.ts';
import { parseCommandLine } from '../scripts/cli/options.ts';

const u16 = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8);
const u32 = (b: Uint8Array, at: number) => (u16(b, at) | (u16(b, at + 2) << 16)) >>> 0;

// name, chip_num (bnxt.h), PCI device id (bnxt.c bnxt_pci_tbl)
const CHIPS: [string, number, number][] = [['BCM57508', 0x1750, 0x1750], ['BCM57608', 0x1760, 0x1760]];

function config(chip: string | undefined, mode: EmuConfig['mode'] = 'stepped'): EmuConfig {
  return {
    mac: macFromNumber(0x4242), ipv4: Uint8Array.from([10, 77, 2, 2]), mtu: 1500, cable: { kind: 'loop' },
    pcapPath: undefined, seed: 1, mode, chip,
  };
}

t.test('VER_GET names the chip the model was built as (hsi.h hwrm_ver_get_output)', async (t) => {
  for (const [name, chipNum] of CHIPS) {
    const rig = new EmuRig({ chip: name });
    t.teardown(() => rig.model.close());
    const r = rig.hwrm(H.HWRM_COMMANDS.VER_GET, { hwrm_intf_maj: 1, hwrm_intf_min: 10, hwrm_intf_upd: 3 });
    t.equal(u16(r, 112), chipNum, `${name}: chip_num at 112`);
    t.equal(r[114], 1, `${name}: chip_rev at 114`);
    t.equal(r[8], 1, `${name}: hwrm_intf_maj_8b at 8 (HWRM 1.x)`);
    const q = rig.hwrm(H.HWRM_COMMANDS.FUNC_QCFG, { fid: H.HWRM_FID_SELF });
    // legacy_l2_db_size_kb at 84: P5 the 64 KiB L2 region below DPI 0 (0x10000, bnxt.h
    // DB_PF_OFFSET_P5); the P7 model 66 KiB, so its NQ doorbells (0x10800) are not on DPI 0's page.
    t.equal(u16(q, 84), name === 'BCM57608' ? 66 : 64, `${name}: legacy_l2_db_size_kb`);
  }
});

t.test('the device presents the chip\'s PCI ids; firmware status healthy at BAR0 0x520', async (t) => {
  for (const [name, , deviceId] of CHIPS) {
    const d = openEmu(config(name));
    if (!d.ok) throw new Error(d.error);
    t.teardown(() => d.value.close());
    t.same([d.value.identity.vendorId, d.value.identity.deviceId], [0x14e4, deviceId], `${name}: identity`);
    t.equal(d.value.config.chip, name, `${name}: the config names the chip`);
    // bnxt.h BNXT_GRC_REG_STATUS_P5 (0x520) reads BNXT_FW_STATUS_HEALTHY (0x8000).
    t.equal(d.value.bar(0).read32(0x520), 0x8000, `${name}: firmware healthy`);
  }
});

t.test('the vfio-user config space carries the chip\'s ids (PCI header offsets 0, 0x2c)', async (t) => {
  for (const [name, , deviceId] of CHIPS) {
    const dev = new NicVfioDevice(config(name, 'thread'));
    t.teardown(() => dev.close());
    const c = dev.config.bytes;
    t.equal(u32(c, 0), ((deviceId << 16) | 0x14e4) >>> 0, `${name}: vendor and device id`);
    t.equal(u16(c, 0x2c), 0x14e4, `${name}: subsystem vendor`);
    t.equal(c[8], 1, `${name}: revision`);
  }
  // The BCM57508 presents its OCP adapter, 14e4:5208 (pci.ids BCM957508-N2100G).
  const p5 = new NicVfioDevice(config('BCM57508', 'thread'));
  t.teardown(() => p5.close());
  t.equal(u16(p5.config.bytes, 0x2e), 0x5208);
  // The BCM57608 a single-port 400G PCIe NIC, 14e4:9110 (pci.ids, under 14e4:1760).
  const p7 = new NicVfioDevice(config('BCM57608', 'thread'));
  t.teardown(() => p7.close());
  t.equal(u16(p7.config.bytes, 0x2e), 0x9110);
});

t.test('the chip comes from the option, else RIG_BNXT_CHIP, else BCM57608; an unknown one is a misuse', async (t) => {
  t.equal(emuChip(undefined, {}).name, 'BCM57608', 'default: the Thor2');
  t.equal(emuChip(undefined, { [CHIP_ENV]: 'BCM57508' }).name, 'BCM57508', 'from the environment');
  t.equal(emuChip('BCM57608', { [CHIP_ENV]: 'BCM57508' }).name, 'BCM57608', 'the option wins');
  t.throws(() => emuChip('BCM57414', {}), { code: 'ERR_RIG_BNXT_INVALID_ARGUMENT', message: /BCM57508, .*BCM57608/ });
  t.throws(() => emuChip(undefined, { [CHIP_ENV]: 'thor3' }), { message: /RIG_BNXT_CHIP "thor3" is not a known chip/ });
  t.throws(() => Nic.open('emu', { stepped: true, chip: 'BCM99999' }), {
    code: 'ERR_RIG_BNXT_INVALID_ARGUMENT', message: /^Nic\.open: chip "BCM99999" is not a known chip \(one of BCM57508/,
  });
  t.throws(() => Nic.open('emu', { stepped: true, chip: 7 as unknown as string }), /chip must be a name/);
});

t.test('Nic.open as a BCM57508 brings the P5 up as before', async (t) => {
  const nic = Nic.open('emu', { stepped: true, chip: 'BCM57508' });
  if (!nic.ok) throw new Error(nic.error);
  t.teardown(() => nic.value.close());
  t.match(nic.value.info, { chip: 'BCM57508', chipNum: 0x1750, chipFamily: 'P5' });
});

t.test('Nic.open as a BCM57608 brings the Thor2 up', async (t) => {
  const nic = Nic.open('emu', { stepped: true, chip: 'BCM57608' });
  if (!nic.ok) throw new Error(nic.error);
  t.teardown(() => nic.value.close());
  t.match(nic.value.info, { chip: 'BCM57608', chipNum: 0x1760, chipFamily: 'P7' });
});

t.test('--chip on the CLI commands that open a NIC', async (t) => {
  t.match(parseCommandLine(['perf', 'send_lat', '--chip', 'BCM57608']), { ok: true, value: { chip: 'BCM57608' } });
  t.match(parseCommandLine(['pingpong', '--chip', 'BCM57508']), { ok: true, value: { chip: 'BCM57508' } });
  t.match(parseCommandLine(['probe', 'emu', '--chip', 'BCM57608']), { ok: true, value: { chip: 'BCM57608' } });
  for (const cmd of [['perf', 'send_bw'], ['pingpong'], ['probe', 'emu']]) {
    const r = parseCommandLine([...cmd, '--chip', 'BCM1']);
    t.match(r, { ok: false, error: /--chip 'BCM1' is not a known chip \(one of BCM57508, .*BCM57608/ }, cmd[0]);
  }
});
