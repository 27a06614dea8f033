import t from 'tap';
import {
  PortPhyQcfgInput, PortPhyQcfgOutput, PORT_PHY_QCFG_RESP_LINK, PORT_PHY_QCFG_RESP_LINK_SPEED, linkSpeedMbps,
  PORT_PHY_QCFG_RESP_SIGNAL_MODE, PORT_PHY_QCFG_RESP_SIGNAL_MODE_MASK, PORT_PHY_QCFG_RESP_ACTIVE_FEC,
  PORT_PHY_QCFG_RESP_ACTIVE_FEC_SHIFT,
} from '../firmware-hwrm/hwrm/index.ts';
import { seq, zeros, seqBytes, REQ_HDR, REQ_HDR_BYTES, RESP_HDR } from './helpers/hwrm-fixtures.ts';

// Fixtures follow hsi.h hwrm_port_phy_qcfg in the offset-per-byte pattern of helpers/hwrm-fixtures.ts
// (PORT_PHY_QCFG's response has no unused bytes).

t.test('hwrm_port_phy_qcfg_input (24): port_id @16', async (t) => {
  const values = { ...REQ_HDR, port_id: 0x1110 };
  const want = [...REQ_HDR_BYTES, 0x10, 0x11, ...zeros(6)];
  t.same([...PortPhyQcfgInput.encode(values)], want);
  t.strictSame(PortPhyQcfgInput.decode(Uint8Array.from(want)), values);
});

t.test('hwrm_port_phy_qcfg_output (104): every field at its documented offset', async (t) => {
  const values = {
    ...RESP_HDR,
    link: 0x08, active_fec_signal_mode: 0x09, link_speed: 0x0b0a, duplex_cfg: 0x0c, pause: 0x0d,
    support_speeds: 0x0f0e, force_link_speed: 0x1110, auto_mode: 0x12, auto_pause: 0x13,
    auto_link_speed: 0x1514, auto_link_speed_mask: 0x1716, wirespeed: 0x18, lpbk: 0x19, force_pause: 0x1a,
    module_status: 0x1b, preemphasis: 0x1f1e1d1c, phy_maj: 0x20, phy_min: 0x21, phy_bld: 0x22, phy_type: 0x23,
    media_type: 0x24, xcvr_pkg_type: 0x25, eee_config_phy_addr: 0x26, parallel_detect: 0x27,
    link_partner_adv_speeds: 0x2928, link_partner_adv_auto_mode: 0x2a, link_partner_adv_pause: 0x2b,
    adv_eee_link_speed_mask: 0x2d2c, link_partner_adv_eee_link_speed_mask: 0x2f2e,
    xcvr_identifier_type_tx_lpi_timer: 0x33323130, fec_cfg: 0x3534, duplex_state: 0x36, option_flags: 0x37,
    phy_vendor_name: seqBytes(0x38, 16), phy_vendor_partnumber: seqBytes(0x48, 16),
    support_pam4_speeds: 0x5958, force_pam4_link_speed: 0x5b5a, auto_pam4_link_speed_mask: 0x5d5c,
    link_partner_pam4_adv_speeds: 0x5e, link_down_reason: 0x5f, support_speeds2: 0x6160,
    force_link_speeds2: 0x6362, auto_link_speeds2: 0x6564, active_lanes: 0x66, valid: 0x67,
  };
  const want = seq(0, 0x67);
  t.equal(PortPhyQcfgOutput.size, 104);
  t.same([...PortPhyQcfgOutput.encode(values)], want);
  t.strictSame(PortPhyQcfgOutput.decode(Uint8Array.from(want)), values);
});

t.test('decodes a 200G link-up answer written out by hand', async (t) => {
  const b = new Uint8Array(104);
  b.set([0x00, 0x00, 0x27, 0x00, 0x09, 0x00, 0x68, 0x00], 0);
  b[8] = 0x02; // link LINK
  b[9] = 0x31; // RS544_1XN FEC active, PAM4 signalling
  b.set([0xd0, 0x07], 10); // link_speed 0x7d0
  b[54] = 0x01; // duplex_state full
  b[102] = 4; // active_lanes
  b[103] = 1;
  const r = PortPhyQcfgOutput.decode(b);
  t.equal(r.link, PORT_PHY_QCFG_RESP_LINK.LINK);
  t.equal(r.link_speed, PORT_PHY_QCFG_RESP_LINK_SPEED['200GB']);
  t.equal(linkSpeedMbps(r.link_speed), 200_000);
  t.equal(r.active_fec_signal_mode & PORT_PHY_QCFG_RESP_SIGNAL_MODE_MASK, PORT_PHY_QCFG_RESP_SIGNAL_MODE.PAM4);
  t.equal(r.active_fec_signal_mode >> PORT_PHY_QCFG_RESP_ACTIVE_FEC_SHIFT,
    PORT_PHY_QCFG_RESP_ACTIVE_FEC.FEC_RS544_1XN_ACTIVE);
  t.equal(r.duplex_state, 1);
  t.equal(r.active_lanes, 4);
});

t.test('link values and link_speed units of 3.8', async (t) => {
  t.same(PORT_PHY_QCFG_RESP_LINK, { NO_LINK: 0, SIGNAL: 1, LINK: 2 });
  t.equal(linkSpeedMbps(0x1), 100);
  t.equal(linkSpeedMbps(0xa), 1000);
  t.equal(linkSpeedMbps(0x19), 2500);
  t.equal(linkSpeedMbps(0xfa), 25_000);
  t.equal(linkSpeedMbps(0x3e8), 100_000);
  t.equal(linkSpeedMbps(0x1f40), 800_000);
  t.equal(linkSpeedMbps(0xffff), 10);
  t.equal(linkSpeedMbps(0), 0);
  for (const [name, code] of Object.entries(PORT_PHY_QCFG_RESP_LINK_SPEED)) {
    if (name === '10MB') continue;
    const mbps = name.endsWith('GB') ? Number(name.slice(0, -2).replace('_', '.')) * 1000 : Number(name.slice(0, -2));
    t.equal(linkSpeedMbps(code), mbps, name);
  }
});
