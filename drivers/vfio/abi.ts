/**
 * The Linux VFIO ABI this backend uses: ioctl request numbers, flag values and structure
 * layouts, all from include/uapi/linux/vfio.h (x86_64), plus the PCI command register from
 * include/uapi/linux/pci_regs.h. Kept as data so test/vfio-abi.test.ts can compare every
 * entry with what gcc computes from the installed headers. Names keep the header's spelling.
 */
import { layout, u16, u32, u64, u64n } from '../../firmware-hwrm/layout.ts';

/** Every VFIO ioctl is _IO(VFIO_TYPE ';' = 0x3B, VFIO_BASE 100 + n): no size or direction bits. */
export const VFIO_IOCTL = {
  VFIO_GET_API_VERSION: 0x3b64,
  VFIO_CHECK_EXTENSION: 0x3b65,
  VFIO_SET_IOMMU: 0x3b66,
  VFIO_GROUP_GET_STATUS: 0x3b67,
  VFIO_GROUP_SET_CONTAINER: 0x3b68,
  VFIO_GROUP_UNSET_CONTAINER: 0x3b69,
  VFIO_GROUP_GET_DEVICE_FD: 0x3b6a,
  VFIO_DEVICE_GET_REGION_INFO: 0x3b6c,
  VFIO_IOMMU_GET_INFO: 0x3b70,
  VFIO_IOMMU_MAP_DMA: 0x3b71,
  VFIO_IOMMU_UNMAP_DMA: 0x3b72,
} as const;

export const VFIO_CONST = {
  VFIO_API_VERSION: 0,
  VFIO_TYPE1v2_IOMMU: 3,
  VFIO_GROUP_FLAGS_VIABLE: 0x1,
  VFIO_REGION_INFO_FLAG_READ: 0x1,
  VFIO_REGION_INFO_FLAG_WRITE: 0x2,
  VFIO_REGION_INFO_FLAG_MMAP: 0x4,
  VFIO_REGION_INFO_FLAG_CAPS: 0x8,
  VFIO_REGION_INFO_CAP_SPARSE_MMAP: 1,
  VFIO_PCI_BAR0_REGION_INDEX: 0,
  VFIO_PCI_BAR2_REGION_INDEX: 2,
  VFIO_PCI_CONFIG_REGION_INDEX: 7,
  VFIO_IOMMU_INFO_PGSIZES: 0x1,
  VFIO_IOMMU_INFO_CAPS: 0x2,
  VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE: 1,
  VFIO_DMA_MAP_FLAG_READ: 0x1,
  VFIO_DMA_MAP_FLAG_WRITE: 0x2,
} as const;

/** PCI configuration space: the command register and the two bits we set. */
export const PCI_CONFIG = {
  PCI_COMMAND: 0x04,
  PCI_COMMAND_MEMORY: 0x2,
  PCI_COMMAND_MASTER: 0x4,
} as const;

// vfio.h: struct vfio_group_status
export const vfio_group_status = layout('vfio_group_status', 8, {
  argsz: u32(0),
  flags: u32(4),
});

// vfio.h: struct vfio_region_info
export const vfio_region_info = layout('vfio_region_info', 32, {
  argsz: u32(0),
  flags: u32(4),
  index: u32(8),
  cap_offset: u32(12),
  size: u64(16),
  offset: u64(24),
});

// vfio.h: struct vfio_info_cap_header (`next` is an offset from the start of the info buffer)
export const vfio_info_cap_header = layout('vfio_info_cap_header', 8, {
  id: u16(0),
  version: u16(2),
  next: u32(4),
});

// vfio.h: struct vfio_iommu_type1_info (4 bytes of padding after cap_offset)
export const vfio_iommu_type1_info = layout('vfio_iommu_type1_info', 24, {
  argsz: u32(0),
  flags: u32(4),
  iova_pgsizes: u64n(8),
  cap_offset: u32(16),
});

// vfio.h: struct vfio_iommu_type1_info_cap_iova_range (header first; iova_ranges[] follows at 16)
export const vfio_iommu_type1_info_cap_iova_range = layout('vfio_iommu_type1_info_cap_iova_range', 16, {
  nr_iovas: u32(8),
});

// vfio.h: struct vfio_iova_range (`end` inclusive)
export const vfio_iova_range = layout('vfio_iova_range', 16, {
  start: u64n(0),
  end: u64n(8),
});

// vfio.h: struct vfio_iommu_type1_dma_map
export const vfio_iommu_type1_dma_map = layout('vfio_iommu_type1_dma_map', 32, {
  argsz: u32(0),
  flags: u32(4),
  vaddr: u64(8),
  iova: u64(16),
  size: u64(24),
});

// vfio.h: struct vfio_iommu_type1_dma_unmap (flexible `data` unused)
export const vfio_iommu_type1_dma_unmap = layout('vfio_iommu_type1_dma_unmap', 24, {
  argsz: u32(0),
  flags: u32(4),
  iova: u64(8),
  size: u64(16),
});

export const VFIO_LAYOUTS = [
  vfio_group_status,
  vfio_region_info,
  vfio_info_cap_header,
  vfio_iommu_type1_info,
  vfio_iommu_type1_info_cap_iova_range,
  vfio_iova_range,
  vfio_iommu_type1_dma_map,
  vfio_iommu_type1_dma_unmap,
] as const;

/** Offsets of flexible array members, `struct.member` -> bytes. */
export const VFIO_FLEXIBLE_ARRAYS = {
  'vfio_iommu_type1_info_cap_iova_range.iova_ranges': 16,
} as const;
