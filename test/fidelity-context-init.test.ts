// Issue 11 item 2: context memory holds the firmware's ctx_kind_initializer at each entry's init
// offset for every kind ctx_init_mask names, as Linux bnxt_en does before
// FUNC_BACKING_STORE_CFG (bnxt.c bnxt_init_ctx_initializer: offset in 4-byte units, value 0
// when the mask bit is clear; bnxt_init_ctx_mem; commit 3be8136ce14e). The values are the
// software NIC's QCAPS answer; the bytes are read in the memory the driver handed over.
// And the software NIC's rule: context memory left zeroed is refused.
import t from 'tap';
import { Nic } from '../lib/index.ts';
import { nicInternals } from '../lib/nic.ts';
import { answerBackingStoreQcaps } from '../drivers/emu/model/firmware/hwrm-backing-store.ts';
import { FUNC_BACKING_STORE_QCAPS_RESP_CTX_INIT_MASK as INIT } from '../firmware-hwrm/hwrm/index.ts';
import { bringUp, EmuRig } from './helpers/emu-roce-setup.ts';

/** The P5 layout these checks are about (static 128-byte WQEs, context memory V1); test/thor2.test.ts has P7's. */
const P5 = { stepped: true, chip: 'BCM57508' } as const;

const caps = answerBackingStoreQcaps() as Record<string, number>;

t.test('the driver writes ctx_kind_initializer at each entry\'s init offset where ctx_init_mask says so', async (t) => {
  const opened = Nic.open('emu', P5);
  if (!opened.ok) return void t.fail(opened.error);
  const nic = opened.value;
  t.teardown(() => nic.close());
  const value = caps['ctx_kind_initializer']!;
  t.not(value, 0, 'the model asks for a non-zero initializer');
  // The driver's areas in its kinds' order: QP, SRQ, CQ, VNIC, STAT, TQM SP, TQM rings, MRAV, TIM.
  const areas = nicInternals(nic).func.backingStore.areas;
  const sizes = areas.map((a) => a.data.bytes.length);
  const byName: [string, number, number, number][] = [
    ['QP', caps['qp_entry_size']!, caps['qp_init_offset']!, INIT.QP],
    ['SRQ', caps['srq_entry_size']!, caps['srq_init_offset']!, INIT.SRQ],
    ['CQ', caps['cq_entry_size']!, caps['cq_init_offset']!, INIT.CQ],
    ['VNIC', caps['vnic_entry_size']!, caps['vnic_init_offset']!, INIT.VNIC],
    ['STAT', caps['stat_entry_size']!, caps['stat_init_offset']!, INIT.STAT],
  ];
  for (const [i, [name, size, offsetUnits, bit]] of byName.entries()) {
    const bytes = areas[i]!.data.bytes;
    const masked = (caps['ctx_init_mask']! & bit) !== 0;
    let wrong = 0;
    let other = 0;
    for (let at = 0; at < bytes.length; at++) {
      // Entries counted from each 4 KiB page's start, as bnxt_init_ctx_mem writes them per page.
      const atOffset = (at % 4096) % size === offsetUnits * 4;
      if (atOffset && masked && bytes[at] !== value) wrong++;
      if ((!atOffset || !masked) && bytes[at] !== 0) other++;
    }
    const where = masked ? `${value} at byte ${offsetUnits * 4}` : 'nothing (not in the mask)';
    t.equal(wrong, 0, `${name}: every entry holds ${where}`);
    t.equal(other, 0, `${name}: every other byte is zero (${sizes[i]} bytes)`);
  }
  const mrav = areas[areas.length - 2]!.data.bytes;
  const mravOffset = caps['mrav_init_offset']! * 4;
  let mravWrong = 0;
  for (let at = 0; at < mrav.length; at++) {
    if ((at % 4096) % caps['mrav_entry_size']! === mravOffset && mrav[at] !== value) mravWrong++;
  }
  t.equal(mravWrong, 0, 'MRAV: every entry holds the initializer at its offset');
});

t.test('the software NIC refuses context memory left zeroed (the driver before the fix)', async (t) => {
  const rig = new EmuRig();
  const refused = /HWRM 0x193: error 2\b/;
  t.throws(() => bringUp(rig, { uninitialisedContext: true }), refused, 'FUNC_BACKING_STORE_CFG: INVALID_PARAMS');
  const ok = new EmuRig();
  t.doesNotThrow(() => bringUp(ok), 'initialised: taken');
});
