#!/usr/bin/env bash
# Boots the guest that build.sh made, under QEMU with software emulation (TCG): a q35
# machine with an emulated Intel IOMMU (VT-d, interrupt remapping, caching mode) and QEMU's
# edu device behind it. The guest kernel translates the edu's DMA (intel_iommu=on, not
# iommu=pt), its /init binds the edu to vfio-pci and runs edu-check with Node, then powers
# off. The serial console goes to stdout.
#
# Environment: VFIO_GUEST_OUT (default build/vfio-guest), QEMU (default
# qemu-system-x86_64), VFIO_GUEST_TIMEOUT (seconds, default 300), VFIO_GUEST_SMP (default 2).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
OUT="${VFIO_GUEST_OUT:-$ROOT/build/vfio-guest}"
QEMU="${QEMU:-qemu-system-x86_64}"
LIMIT="${VFIO_GUEST_TIMEOUT:-300}"

command -v "$QEMU" >/dev/null || {
  echo "boot: $QEMU not found: run scripts/vfio-guest/install-host-deps.sh" >&2
  exit 127
}
for file in vmlinuz initramfs.cpio; do
  [ -f "$OUT/$file" ] || {
    echo "boot: $OUT/$file is missing: run scripts/vfio-guest/build.sh first" >&2
    exit 1
  }
done

# loglevel=3 keeps the kernel's own messages (DMAR faults among them) off the console, so
# they cannot split a marker line; the guest program reads them from dmesg instead.
# panic=-1 with -no-reboot turns a guest panic into a QEMU exit instead of a hang.
# no_timer_check: under TCG on a loaded host the kernel's IO-APIC timer check can miss its
# window and panic ("timer doesn't work through Interrupt-remapped IO-APIC"); the check
# proves nothing about VFIO, so it is skipped (the kernel parameter of arch/x86/kernel/apic/io_apic.c).
exec timeout -k 5 "$LIMIT" "$QEMU" \
  -accel tcg \
  -machine q35,kernel-irqchip=split \
  -cpu max \
  -smp "${VFIO_GUEST_SMP:-2}" \
  -m 512 \
  -nodefaults \
  -display none \
  -no-reboot \
  -device intel-iommu,intremap=on,caching-mode=on \
  -device edu \
  -serial stdio \
  -monitor none \
  -kernel "$OUT/vmlinuz" \
  -initrd "$OUT/initramfs.cpio" \
  -append "console=ttyS0 intel_iommu=on loglevel=3 panic=-1 rdinit=/init no_timer_check"
