/**
 * GID-table commands: ADD_GID and DELETE_GID with their CREQ responses. Facts §3.5.
 *
 * ADD_GID is the one place with big-endian words. The header declares `__be32 gid[4]` and
 * `__be16 src_mac[3]`, and the kernel fills them from the wire-order bytes like this:
 *
 *   gid[i]     = cpu_to_be32(((u32 *)gid)[3 - i])  ⇒ command byte 16+k = GID byte 15−k
 *   src_mac[i] = cpu_to_be16(((u16 *)mac)[i])      ⇒ command bytes 32..37 = m1 m0 m3 m2 m5 m4
 *
 * `gidWords`/`macWords` produce exactly those command bytes from wire-order bytes;
 * `gidFromWords`/`macFromWords` undo them. There is no GID-type field: RoCEv2-IPv4 is chosen
 * per QP (MODIFY_QP network_type); its GID is ::ffff:a.b.c.d.
 */
import { layout, bytes, u16, u32 } from '../layout.ts';
import { CMDQ_BASE_FIELDS } from './cmdq.ts';
import { CREQ_RESP_FIELDS } from './creq.ts';

export const GID_BYTES = 16;
export const MAC_BYTES = 6;

/** Command bytes (offsets 16–31 of ADD_GID) for a GID given in wire order. */
export function gidWords(gid: Uint8Array): Uint8Array {
  if (gid.length !== GID_BYTES) throw new RangeError(`gidWords: a GID has 16 bytes, got ${gid.length}`);
  const out = new Uint8Array(GID_BYTES);
  for (let k = 0; k < GID_BYTES; k++) out[k] = gid[GID_BYTES - 1 - k]!;
  return out;
}

/** Wire-order GID from the command's 16 GID bytes. */
export function gidFromWords(words: Uint8Array): Uint8Array {
  if (words.length !== GID_BYTES) throw new RangeError(`gidFromWords: expected 16 bytes, got ${words.length}`);
  return gidWords(words);
}

/** Command bytes (offsets 32–37 of ADD_GID) for a MAC given in wire order. */
export function macWords(mac: Uint8Array): Uint8Array {
  if (mac.length !== MAC_BYTES) throw new RangeError(`macWords: a MAC has 6 bytes, got ${mac.length}`);
  const out = new Uint8Array(MAC_BYTES);
  for (let k = 0; k < MAC_BYTES; k += 2) {
    out[k] = mac[k + 1]!;
    out[k + 1] = mac[k]!;
  }
  return out;
}

/** Wire-order MAC from the command's 6 src_mac bytes. */
export function macFromWords(words: Uint8Array): Uint8Array {
  if (words.length !== MAC_BYTES) throw new RangeError(`macFromWords: expected 6 bytes, got ${words.length}`);
  return macWords(words);
}

/** ADD_GID vlan.tpid values (bits 12–14). */
export const GidVlanTpid = {
  TPID_88A8: 0x0,
  TPID_8100: 0x1,
  TPID_9100: 0x2,
  TPID_9200: 0x3,
  TPID_9300: 0x4,
  TPID_CFG1: 0x5,
  TPID_CFG2: 0x6,
  TPID_CFG3: 0x7,
} as const;

// roce_hsi.h: struct cmdq_add_gid (48 bytes)
export const CmdqAddGid = layout('cmdq_add_gid', 48, {
  ...CMDQ_BASE_FIELDS,
  /** gidWords(gid): four big-endian words of the byte-reversed GID. */
  gid: bytes(16, 16),
  /** macWords(mac): three big-endian halfwords. */
  src_mac: bytes(32, 6),
  vlan_id: u16(38, 0, 12),
  /** GidVlanTpid. */
  tpid: u16(38, 12, 3),
  vlan_en: u16(38, 15, 1),
  ipid: u16(40),
  stats_ctx_id: u16(42, 0, 15),
  stats_ctx_valid: u16(42, 15, 1),
});

// roce_hsi.h: struct creq_add_gid_resp
export const CreqAddGidResp = layout('creq_add_gid_resp', 16, {
  ...CREQ_RESP_FIELDS,
  /** Hardware GID index (what MODIFY_QP.sgid_index carries). */
  xid: u32(4),
});

// roce_hsi.h: struct cmdq_delete_gid (24 bytes)
export const CmdqDeleteGid = layout('cmdq_delete_gid', 24, {
  ...CMDQ_BASE_FIELDS,
  /** Hardware GID index. */
  gid_index: u16(16),
});

// roce_hsi.h: struct creq_delete_gid_resp
export const CreqDeleteGidResp = layout('creq_delete_gid_resp', 16, {
  ...CREQ_RESP_FIELDS,
  xid: u32(4),
});
