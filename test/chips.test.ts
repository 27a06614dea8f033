// The chip profiles (firmware-hwrm/chips.ts) against the public drivers' facts, value by value:
// expected numbers come from the sources named beside each assertion, not from the table.
import t from 'tap';
import { CHIP_PROFILES, chipByName, chipByNumber, chipNames } from '../firmware-hwrm/chips.ts';
import { chipProfile, chipSupported } from '../lib/bnxt/chip.ts';
import { bnxtPhysicalFunction } from '../drivers/vfio/pci-ids.ts';

t.test('chip numbers and PCI ids as bnxt.h CHIP_NUM_* and bnxt.c bnxt_pci_tbl give them', async (t) => {
  const want: [string, number, number, 'P5' | 'P7'][] = [
    ['BCM57508', 0x1750, 0x1750, 'P5'], ['BCM57504', 0x1751, 0x1751, 'P5'], ['BCM57502', 0x1752, 0x1752, 'P5'],
    ['BCM57608', 0x1760, 0x1760, 'P7'], ['BCM58818', 0xd818, 0xd818, 'P7'],
  ];
  for (const [name, chipNum, deviceId, family] of want) {
    const p = chipByName(name);
    t.ok(p, name);
    t.equal(p!.chipNum, chipNum, `${name} chip_num`);
    t.equal(p!.pciVendorId, 0x14e4, `${name} vendor`);
    t.equal(p!.pciDeviceId, deviceId, `${name} device id`);
    t.equal(p!.family, family, `${name} family`);
    t.equal(chipByNumber(chipNum), p, `${name} found by chip_num`);
    // The VFIO side's PCI table agrees on the part and family of each profile's PF id.
    t.match(bnxtPhysicalFunction(0x14e4, deviceId), { part: name, family }, `${name} in pci-ids.ts`);
  }
  t.equal(new Set(CHIP_PROFILES.map((p) => p.chipNum)).size, CHIP_PROFILES.length, 'one row per chip_num');
  t.same(chipNames(), want.map((w) => w[0]));
  t.equal(chipByNumber(0x16d7), undefined, 'a P4 BCM57414 has no profile');
  t.equal(chipByName('BCM57414'), undefined);
});

t.test('doorbell offsets: fixed 0x10000 on a P5 PF, after the L2 region on P7', async (t) => {
  const p5 = chipByName('BCM57508')!;
  const p7 = chipByName('BCM57608')!;
  // bnxt.h DB_PF_OFFSET_P5: whatever FUNC_QCFG says, a P5 PF rings NQ/CREQ and DPI 0 at 0x10000.
  for (const kb of [0, 64, 66, 128]) {
    t.equal(p5.nqDoorbellOffset(kb), 0x10000, `P5 NQ, legacy ${kb} KiB`);
    t.equal(p5.dpiDoorbellOffset(kb), 0x10000, `P5 DPI, legacy ${kb} KiB`);
  }
  // bnxt.c bnxt_hwrm_func_qcfg: db_offset = legacy_l2_db_size_kb * 1024 on P7 (not aligned);
  // bnxt_re main.c bnxt_re_hwrm_qcfg: the DPI offset is PAGE_ALIGN of the same bytes.
  t.equal(p7.nqDoorbellOffset(66), 66 * 1024);
  t.equal(p7.dpiDoorbellOffset(66), 0x11000);
  t.equal(p7.nqDoorbellOffset(64), 0x10000);
  t.equal(p7.dpiDoorbellOffset(64), 0x10000);
  t.equal(p7.dpiDoorbellOffset(65), 0x11000);
});

t.test('per-family formats: context memory, WQE mode, SQ table, statistics, first VER_GET wait', async (t) => {
  for (const p of CHIP_PROFILES) {
    const p5 = p.family === 'P5';
    t.equal(p.backingStore, p5 ? 'v1' : 'v2', `${p.name} backing store`);
    t.equal(p.wqeMode, p5 ? 'static' : 'variable', `${p.name} WQE mode (bnxt_re_set_drv_mode)`);
    t.equal(p.sqPsnTable, p5 ? 'psn_search_ext' : 'msn', `${p.name} SQ table`);
    t.equal(p.psnSearchEntryBytes, 16, `${p.name} sq_psn_search_ext is 16 bytes`);
    t.equal(p.msnEntryBytes, 8, `${p.name} sq_msn_search is 8 bytes`);
    // BNXT_RING_STATS_SIZE_P5 = (8 rx + 8 tx + 5 TPA) x 8; _P7 = (8 + 8 + 6) x 8.
    t.equal(p.ringStatsBytes, p5 ? 168 : 176, `${p.name} ring statistics`);
    t.equal(p.grcStatusOffset, 0x520, `${p.name} BNXT_GRC_REG_STATUS_P5`);
    t.equal(p.firstVerGetTimeoutMs, p5 ? 500 : 1500, `${p.name} first VER_GET timeout`);
  }
});

t.test('the driver knows both families and drives both', async (t) => {
  t.equal(chipProfile(0x1750)?.name, 'BCM57508');
  t.equal(chipProfile(0x1760)?.name, 'BCM57608');
  t.equal(chipProfile(0x16c8), undefined, 'P3');
  t.equal(chipSupported(chipProfile(0x1752)!), true);
  t.equal(chipSupported(chipProfile(0xd818)!), true);
  t.equal(chipSupported(chipProfile(0x1760)!), true);
});

t.test('profiles are frozen data: nothing can edit a chip for everyone', async (t) => {
  const p = chipByName('BCM57508')! as { chipNum: number };
  t.throws(() => { 'use strict'; p.chipNum = 1; });
  t.equal(chipByName('BCM57508')!.chipNum, 0x1750);
});
