/**
 * VFIO info structures (region info, IOMMU info) may be followed by a chain of
 * capabilities, each starting with `struct vfio_info_cap_header` whose `next` is an offset
 * from the start of the info buffer (0 ends the chain).
 */
import { vfio_info_cap_header } from './abi.ts';

/** A capability chain longer than this is corrupt. */
const MAX_CAPABILITIES = 64;

/** Offset of the capability `id` in a VFIO info buffer's chain, or undefined. */
export function findCapability(info: Uint8Array, first: number, headerBytes: number, id: number): number | undefined {
  let offset = first;
  for (let n = 0; n < MAX_CAPABILITIES && offset >= headerBytes &&
    offset + vfio_info_cap_header.size <= info.length; n++) {
    const cap = vfio_info_cap_header.decode(info, offset);
    if (cap.id === id) return offset;
    if (cap.next === 0) return undefined;
    offset = cap.next;
  }
  return undefined;
}

