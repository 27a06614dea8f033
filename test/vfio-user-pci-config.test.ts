// The BCM57508 PF config space: identity and capabilities as lspci and the kernel read them,
// write masks (PCI 3.0 section 6.2), BAR sizing, the VPD handshake and image (section 6.4).
import t from 'tap';
import { PciConfigSpace, buildVpd, CAP } from '../drivers/emu/host/vfio-user/pci-config.ts';
import { pfConfigSpec } from '../drivers/emu/host/vfio-user/nic-device.ts';
import { chipByName } from '../firmware-hwrm/chips.ts';

const u16 = (c: PciConfigSpace, at: number) => c.bytes[at]! | (c.bytes[at + 1]! << 8);
const u32 = (c: PciConfigSpace, at: number) => (u16(c, at) | (u16(c, at + 2) << 16)) >>> 0;
const MAC = Uint8Array.from([0x02, 0x62, 0x6e, 0x11, 0x22, 0x33]);
const le = (v: number, n: number) => Uint8Array.from({ length: n }, (_, i) => (v >>> (8 * i)) & 0xff);

t.test('identity: 14e4:1750 rev 1, Ethernet class, capability list', async (t) => {
  const c = new PciConfigSpace(pfConfigSpec(chipByName('BCM57508')!, MAC));
  t.equal(u32(c, 0), 0x175014e4);
  t.equal(u32(c, 8), 0x02000001);
  t.equal(u16(c, 0x2c), 0x14e4);
  t.equal(u16(c, 6) & 0x10, 0x10, 'status: capability list');
  t.equal(c.bytes[0x3d], 0, 'no INTx pin');
  // Walk the list as the kernel does: PM -> VPD -> MSI-X -> PCIe -> end.
  const ids: number[] = [];
  for (let at = c.bytes[0x34]!; at !== 0; at = c.bytes[at + 1]!) ids.push(c.bytes[at]!);
  t.same(ids, [0x01, 0x03, 0x11, 0x10]);
  t.equal(u16(c, CAP.MSIX + 2) & 0x7ff, 63, 'MSI-X table size field is N-1');
  t.equal(u32(c, CAP.MSIX + 4), 0x4, 'table in BAR4 at 0');
  t.equal(u32(c, CAP.MSIX + 8), 0x2004, 'PBA in BAR4 at 0x2000');
  t.equal(u16(c, CAP.PCIE + 2) & 0xf0, 0, 'PCIe device/port type: endpoint');
  t.equal(u32(c, 0x100), 0x00010003, 'extended capability: DSN v1, the last');
  t.same([...c.bytes.subarray(0x104, 0x10c)].reverse(), [0x02, 0x62, 0x6e, 0xff, 0xfe, 0x11, 0x22, 0x33],
    'DSN: EUI-64 of the MAC');
});

t.test('writes change only writable bits', async (t) => {
  const c = new PciConfigSpace(pfConfigSpec(chipByName('BCM57508')!, MAC));
  c.write(0x04, le(0xffff, 2));
  t.equal(u16(c, 4), 0x0547, 'command keeps IO, MEM, MASTER, PARITY, SERR, INTX_DISABLE');
  c.write(0x00, le(0, 4));
  t.equal(u32(c, 0), 0x175014e4, 'ids are read-only');
  c.write(CAP.MSIX + 2, le(0xffff, 2));
  t.equal(u16(c, CAP.MSIX + 2), 0xc000 | 63, 'MSI-X enable and function mask only');
  t.ok(c.msixEnabled);
  c.write(CAP.PCIE + 8, le(0xffff, 2));
  t.equal(u16(c, CAP.PCIE + 8) & 0x8000, 0, 'initiate-FLR never latches');
});

t.test('BAR sizing: all-ones reads back the size mask with the 64-bit prefetchable flags', async (t) => {
  const c = new PciConfigSpace(pfConfigSpec(chipByName('BCM57508')!, MAC));
  c.write(0x10, le(0xffffffff, 4));
  t.equal(u32(c, 0x10), (~(64 * 1024 - 1) | 0xc) >>> 0);
  c.write(0x18, le(0xffffffff, 4));
  t.equal(u32(c, 0x18), (~(16 * 1024 * 1024 - 1) | 0xc) >>> 0);
  c.write(0x20, le(0xfebf0000, 4));
  t.equal(u32(c, 0x20), 0xfebf000c);
  c.write(0x24, le(0x12, 4));
  t.equal(u32(c, 0x24), 0x12, 'upper dword is plain storage');
});

t.test('VPD: the address/flag handshake returns the image 4 bytes at a time', async (t) => {
  const vpd = buildVpd('NIC', { PN: 'P1', SN: 'S2' });
  // 0x82 len=3 "NIC" | 0x90 len | "PN" 2 "P1" "SN" 2 "S2" "RV" 1 csum | 0x78
  t.same([...vpd.subarray(0, 7)], [0x82, 3, 0, 0x4e, 0x49, 0x43, 0x90]);
  t.equal(vpd[7]! | (vpd[8]! << 8), 14);
  const rv = vpd.length - 5;
  t.same([...vpd.subarray(rv, rv + 3)], [0x52, 0x56, 1]);
  t.equal(vpd.subarray(0, vpd.length - 1).reduce((a, b) => a + b, 0) & 0xff, 0, 'bytes through RV sum to zero');
  t.equal(vpd[vpd.length - 1], 0x78);
  const c = new PciConfigSpace({ ...pfConfigSpec(chipByName('BCM57508')!, MAC), vpd });
  const read: number[] = [];
  for (let a = 0; a < 8; a += 4) {
    c.write(CAP.VPD + 2, le(a, 2));
    t.equal(u16(c, CAP.VPD + 2) & 0x8000, 0x8000, `flag set: data of ${a} ready`);
    read.push(...c.bytes.subarray(CAP.VPD + 4, CAP.VPD + 8));
  }
  t.same(read, [...vpd.subarray(0, 8)]);
  c.write(CAP.VPD + 2, le(0x8000, 2));
  t.equal(u16(c, CAP.VPD + 2) & 0x8000, 0, 'a VPD write is refused: flag cleared, nothing stored');
});
