// Firmware personalities (issue 11) and INITIALIZE_FW's flags (item 8). The software NIC plays
// `current` (QUERY_FUNC dev_cap_flags MR_REGISTER_ALLOC 0x20 | HW_REQUESTER_RETX_ENABLED 0x200)
// or `p5-legacy` (neither); RIG_BNXT_EMU_FIRMWARE picks the default. The driver sets
// INITIALIZE_FW's HW_REQUESTER_RETX_SUPPORTED (cmdq_base flags, bytes 2-3, 0x2) where QUERY_FUNC
// reports hardware retransmission, as Linux bnxt_re's bnxt_qplib_init_rcfw does; the firmware
// refuses the flag where it offered none.
import t from 'tap';
import { InvalidArgument, Nic } from '../lib/index.ts';
import { nicInternals } from '../lib/nic.ts';
import { FIRMWARE_ENV, firmwarePersonality } from '../drivers/emu/model/firmware/personality.ts';
import * as R from '../firmware-hwrm/roce/index.ts';
import { captureCmdq } from './helpers/cmdq-capture.ts';
import { openRoce } from './helpers/emu-roce-setup.ts';

const INITIALIZE_FW = 0x80;

function openWith(firmware: string): { nic: Nic; initFlags: number } {
  const capture = captureCmdq();
  const nic = Nic.open('emu', { stepped: true, firmware });
  capture.restore();
  if (!nic.ok) throw new Error(nic.error);
  const init = capture.of(INITIALIZE_FW);
  if (init.length !== 1) throw new Error(`${init.length} INITIALIZE_FW commands`);
  return { nic: nic.value, initFlags: init[0]![2]! | (init[0]![3]! << 8) };
}

t.test('current: unified MR and HW retransmission offered; INITIALIZE_FW claims HW retransmission', async (t) => {
  const { nic, initFlags } = openWith('current');
  t.teardown(() => nic.close());
  const caps = nicInternals(nic).roce.caps.dev_cap_flags;
  t.equal(caps & 0x20, 0x20, 'QUERY_FUNC: MR_REGISTER_ALLOC');
  t.equal(caps & 0x200, 0x200, 'QUERY_FUNC: HW_REQUESTER_RETX_ENABLED');
  t.equal(initFlags, 0x2, 'INITIALIZE_FW flags: HW_REQUESTER_RETX_SUPPORTED');
});

t.test('p5-legacy: neither offered; INITIALIZE_FW claims nothing', async (t) => {
  const { nic, initFlags } = openWith('p5-legacy');
  t.teardown(() => nic.close());
  const caps = nicInternals(nic).roce.caps.dev_cap_flags;
  t.equal(caps & 0x620, 0, 'QUERY_FUNC: no MR_REGISTER_ALLOC, no HW retransmission');
  t.equal(initFlags, 0, 'INITIALIZE_FW flags 0');
});

t.test('a firmware that offered no hardware retransmission refuses INITIALIZE_FW claiming it', async (t) => {
  const { q, setup } = openRoce({ firmware: 'p5-legacy', init: false });
  const e = q.call(R.CmdqInitializeFw, {
    opcode: R.RoceOpcode.INITIALIZE_FW, flags: R.InitializeFwFlags.HW_REQUESTER_RETX_SUPPORTED,
    stat_ctx_id: setup.statCtxId,
  });
  t.equal(e[1], R.RoceStatus.INVALID_PARAMETER, 'refused: INVALID_PARAMETER');
  const plain = q.call(R.CmdqInitializeFw, { opcode: R.RoceOpcode.INITIALIZE_FW, stat_ctx_id: setup.statCtxId });
  t.equal(plain[1], 0, 'without it: taken');
});

t.test('a firmware that offers it takes INITIALIZE_FW without the flag (drivers older than the flag)', async (t) => {
  const { q, setup } = openRoce({ firmware: 'current', init: false });
  t.equal(q.call(R.CmdqInitializeFw, { opcode: R.RoceOpcode.INITIALIZE_FW, stat_ctx_id: setup.statCtxId })[1], 0);
});

t.test('personalities by name: unknown ones are InvalidArgument; RIG_BNXT_EMU_FIRMWARE sets the default', async (t) => {
  t.throws(() => Nic.open('emu', { stepped: true, firmware: 'thor-9000' }), InvalidArgument);
  t.throws(() => Nic.open('emu', { stepped: true, firmware: 7 as unknown as string }), InvalidArgument);
  t.equal(firmwarePersonality(undefined, {}).name, 'current', 'no choice: current');
  t.equal(firmwarePersonality(undefined, { [FIRMWARE_ENV]: 'p5-legacy' }).name, 'p5-legacy', 'the environment\'s');
  t.equal(firmwarePersonality('current', { [FIRMWARE_ENV]: 'p5-legacy' }).name, 'current', 'a given name wins');
  const bad = { [FIRMWARE_ENV]: 'nope' };
  t.throws(() => firmwarePersonality(undefined, bad), InvalidArgument, 'a bad environment value');
});
