/*
 * Prints, one "name value" pair a line (decimal), every VFIO ioctl number, flag, structure
 * size, field offset and field width that drivers/vfio uses, computed by the compiler from
 * the installed kernel headers. test/vfio-abi.test.ts compiles and runs it, then compares
 * the output with drivers/vfio/abi.ts and drivers/vfio/libc.ts.
 */
#include <stddef.h>
#include <stdio.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <linux/memfd.h>
#include <linux/pci_regs.h>
#include <linux/vfio.h>

#define CONST(x) printf("%s %llu\n", #x, (unsigned long long)(x))
#define SIZE(s) printf("%s %zu\n", #s, sizeof(struct s))
#define FIELD(s, f) printf("%s.%s %zu %zu\n", #s, #f, offsetof(struct s, f), sizeof(((struct s *)0)->f))
#define FLEX(s, f) printf("%s.%s %zu\n", #s, #f, offsetof(struct s, f))

int main(void) {
  /* ioctl request numbers */
  CONST(VFIO_GET_API_VERSION);
  CONST(VFIO_CHECK_EXTENSION);
  CONST(VFIO_SET_IOMMU);
  CONST(VFIO_GROUP_GET_STATUS);
  CONST(VFIO_GROUP_SET_CONTAINER);
  CONST(VFIO_GROUP_UNSET_CONTAINER);
  CONST(VFIO_GROUP_GET_DEVICE_FD);
  CONST(VFIO_DEVICE_GET_REGION_INFO);
  CONST(VFIO_IOMMU_GET_INFO);
  CONST(VFIO_IOMMU_MAP_DMA);
  CONST(VFIO_IOMMU_UNMAP_DMA);

  /* VFIO values */
  CONST(VFIO_API_VERSION);
  CONST(VFIO_TYPE1v2_IOMMU);
  CONST(VFIO_GROUP_FLAGS_VIABLE);
  CONST(VFIO_REGION_INFO_FLAG_READ);
  CONST(VFIO_REGION_INFO_FLAG_WRITE);
  CONST(VFIO_REGION_INFO_FLAG_MMAP);
  CONST(VFIO_REGION_INFO_FLAG_CAPS);
  CONST(VFIO_REGION_INFO_CAP_SPARSE_MMAP);
  CONST(VFIO_PCI_BAR0_REGION_INDEX);
  CONST(VFIO_PCI_BAR2_REGION_INDEX);
  CONST(VFIO_PCI_CONFIG_REGION_INDEX);
  CONST(VFIO_IOMMU_INFO_PGSIZES);
  CONST(VFIO_IOMMU_INFO_CAPS);
  CONST(VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE);
  CONST(VFIO_DMA_MAP_FLAG_READ);
  CONST(VFIO_DMA_MAP_FLAG_WRITE);

  /* PCI config space */
  CONST(PCI_COMMAND);
  CONST(PCI_COMMAND_MEMORY);
  CONST(PCI_COMMAND_MASTER);

  /* libc / kernel values */
  CONST(O_RDWR);
  CONST(O_CLOEXEC);
  CONST(PROT_READ);
  CONST(PROT_WRITE);
  CONST(MAP_SHARED);
  CONST(MAP_PRIVATE);
  CONST(MAP_FIXED);
  CONST(MAP_ANONYMOUS);
  CONST(MAP_NORESERVE);
  CONST(MAP_POPULATE);
  CONST(MFD_CLOEXEC);
  CONST(MFD_HUGETLB);
  CONST(MFD_HUGE_2MB);

  /* structures: size, then "offset width" per field */
  SIZE(vfio_group_status);
  FIELD(vfio_group_status, argsz);
  FIELD(vfio_group_status, flags);

  SIZE(vfio_region_info);
  FIELD(vfio_region_info, argsz);
  FIELD(vfio_region_info, flags);
  FIELD(vfio_region_info, index);
  FIELD(vfio_region_info, cap_offset);
  FIELD(vfio_region_info, size);
  FIELD(vfio_region_info, offset);

  SIZE(vfio_info_cap_header);
  FIELD(vfio_info_cap_header, id);
  FIELD(vfio_info_cap_header, version);
  FIELD(vfio_info_cap_header, next);

  SIZE(vfio_iommu_type1_info);
  FIELD(vfio_iommu_type1_info, argsz);
  FIELD(vfio_iommu_type1_info, flags);
  FIELD(vfio_iommu_type1_info, iova_pgsizes);
  FIELD(vfio_iommu_type1_info, cap_offset);

  SIZE(vfio_iommu_type1_info_cap_iova_range);
  FIELD(vfio_iommu_type1_info_cap_iova_range, nr_iovas);
  FLEX(vfio_iommu_type1_info_cap_iova_range, iova_ranges);

  SIZE(vfio_iova_range);
  FIELD(vfio_iova_range, start);
  FIELD(vfio_iova_range, end);

  SIZE(vfio_iommu_type1_dma_map);
  FIELD(vfio_iommu_type1_dma_map, argsz);
  FIELD(vfio_iommu_type1_dma_map, flags);
  FIELD(vfio_iommu_type1_dma_map, vaddr);
  FIELD(vfio_iommu_type1_dma_map, iova);
  FIELD(vfio_iommu_type1_dma_map, size);

  SIZE(vfio_iommu_type1_dma_unmap);
  FIELD(vfio_iommu_type1_dma_unmap, argsz);
  FIELD(vfio_iommu_type1_dma_unmap, flags);
  FIELD(vfio_iommu_type1_dma_unmap, iova);
  FIELD(vfio_iommu_type1_dma_unmap, size);
  return 0;
}
