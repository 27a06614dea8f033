// The chip profiles (firmware-hwrm/chips.ts) against the public drivers' facts, value by value:
// expected numbers come from the sources named beside each assertion, not from the table.
import t from 'tap';
import { BNXT_FAMILIES, CHIP_PROFILES, chipByName, chipByNumber, chipNames } from '../firmware-hwrm/chips.ts';
import { chipProfile } from '../lib/bnxt/chip.ts';
import { BNXT_PF_IDS, bnxtPhysicalFunction, isBnxtVirtualFunction } from '../drivers/vfio/pci-ids.ts';

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
    // The VFIO side's view of the families table names each profile's PF id by its part and family.
    t.match(bnxtPhysicalFunction(0x14e4, deviceId), { part: name, family, driven: true }, `${name} in pci-ids.ts`);
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

t.test('the families table: P5 and P7 driven, with profiles; P4 and P3 recognised by PCI id, not driven',
  async (t) => {
    t.same(BNXT_FAMILIES.map((f) => [f.family, f.driven]), [['P5', true], ['P7', true], ['P4', false], ['P3', false]]);
    for (const f of BNXT_FAMILIES) {
      const profiles = CHIP_PROFILES.filter((p) => p.family === f.family);
      t.equal(profiles.length > 0, f.driven, `${f.family}: profile rows exactly where it is driven`);
      for (const p of profiles) {
        t.ok(f.physicalFunctions.some((pf) => pf.deviceId === p.pciDeviceId && pf.part === p.name),
          `${p.name}'s PCI id is its part's in the ${f.family} row`);
      }
    }
    // Ids from bnxt.c bnxt_pci_tbl: a P4 BCM57414 (0x16d7), a P3 BCM57301 (0x16c8), an NPAR
    // partition of the 5750x (0x1800), a Thor2 BCM57604 without a profile (0x1761), a P5 VF (0x1806).
    t.match(bnxtPhysicalFunction(0x14e4, 0x16d7), { part: 'BCM57414', family: 'P4', driven: false });
    t.match(bnxtPhysicalFunction(0x14e4, 0x16c8), { part: 'BCM57301', family: 'P3', driven: false });
    t.match(bnxtPhysicalFunction(0x14e4, 0x1800), { part: 'BCM5750x NPAR', family: 'P5', driven: true });
    t.match(bnxtPhysicalFunction(0x14e4, 0x1761), { part: 'BCM57604', family: 'P7', driven: true });
    t.equal(bnxtPhysicalFunction(0x8086, 0x16d7), undefined, 'another vendor\'s id is no bnxt function');
    t.equal(bnxtPhysicalFunction(0x14e4, 0x1806), undefined, 'a VF is no PF');
    t.equal(isBnxtVirtualFunction(0x14e4, 0x1806), true);
    t.equal(new Set(BNXT_PF_IDS.map((id) => id.deviceId)).size, BNXT_PF_IDS.length, 'one row per PF id');
    t.equal(BNXT_PF_IDS.length, 44, 'every PF of bnxt_pci_tbl the table had: 11 P5, 5 P7, 21 P4, 7 P3');
  });

t.test('the driver knows every chip with a profile, and no other', async (t) => {
  t.equal(chipProfile(0x1750)?.name, 'BCM57508');
  t.equal(chipProfile(0x1760)?.name, 'BCM57608');
  t.equal(chipProfile(0xd818)?.name, 'BCM58818');
  t.equal(chipProfile(0x16c8), undefined, 'P3');
  t.equal(chipProfile(0x16d7), undefined, 'P4');
});

t.test('the CQ depth cap: 0xFFFFF before P7 (BNXT_QPLIB_MAX_CQ_WQES), none on P7', async (t) => {
  for (const p of CHIP_PROFILES) t.equal(p.maxCqWqes, p.family === 'P5' ? 0xfffff : undefined, p.name);
});

t.test('profiles are frozen data: nothing can edit a chip for everyone', async (t) => {
  const p = chipByName('BCM57508')! as { chipNum: number };
  t.throws(() => { 'use strict'; p.chipNum = 1; });
  t.equal(chipByName('BCM57508')!.chipNum, 0x1750);
});
