#!/usr/bin/env bash
# Hands a bnxt PCI function to vfio-pci so rig-bnxt can drive it from userspace, or gives
# it back to bnxt_en; optionally reserves 2 MiB hugepages for DMA memory.
# Steps follow the kernel's driver_override binding (Documentation/ABI/testing/sysfs-bus-pci), as
# DPDK's usertools/dpdk-devbind.py does.
#
# SYSFS_ROOT (default /sys) lets tests run this against a fake sysfs tree.
set -euo pipefail

SYSFS_ROOT="${SYSFS_ROOT:-/sys}"
PROG="bind-vfio"

usage() {
  cat <<EOF
Usage: scripts/bind-vfio.sh [options] DDDD:BB:DD.F
       scripts/bind-vfio.sh --hugepages N

Binds the PCI function DDDD:BB:DD.F (see 'lspci -D -d 14e4:') to vfio-pci. Unbinding it
from bnxt_en removes that function's netdev and RDMA device (bnxt_re) from the kernel.

Options:
  --unbind         give the function back to bnxt_en instead
  --hugepages N    reserve N 2 MiB hugepages (N=0 releases them)
  --dry-run        print each action instead of doing it
  -h, --help       show this help
EOF
}

say() { echo "$PROG: $*"; }
warn() { echo "$PROG: warning: $*" >&2; }
die() {
  echo "$PROG: error: $*" >&2
  exit 1
}

DRY_RUN=0
UNBIND=0
HUGEPAGES=""
ADDRESS=""
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) DRY_RUN=1 ;;
    --unbind) UNBIND=1 ;;
    --hugepages)
      [ $# -ge 2 ] || die "--hugepages needs a number"
      HUGEPAGES="$2"
      shift
      ;;
    --hugepages=*) HUGEPAGES="${1#--hugepages=}" ;;
    -h | --help)
      usage
      exit 0
      ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *)
      [ -z "$ADDRESS" ] || die "only one PCI address at a time (got '$ADDRESS' and '$1')"
      ADDRESS="$1"
      ;;
  esac
  shift
done

if [ -n "$HUGEPAGES" ] && ! [[ "$HUGEPAGES" =~ ^[0-9]+$ ]]; then
  die "--hugepages takes a whole number of 2 MiB pages, not '$HUGEPAGES'"
fi
if [ -z "$ADDRESS" ] && [ -z "$HUGEPAGES" ]; then
  usage >&2
  exit 2
fi
if [ -n "$ADDRESS" ]; then
  [[ "$ADDRESS" =~ ^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[01][0-9a-fA-F]\.[0-7]$ ]] ||
    die "'$ADDRESS' is not a PCI address of the form DDDD:BB:DD.F (e.g. 0000:3b:00.0; see lspci -D)"
  ADDRESS="$(echo "$ADDRESS" | tr 'A-F' 'a-f')"
fi
if [ "$DRY_RUN" = 0 ] && [ "$SYSFS_ROOT" = /sys ] && [ "$(id -u)" != 0 ]; then
  die "writing to sysfs needs root: run with sudo (or try --dry-run)"
fi

# Writes $1 into the sysfs file $2 (or says it would).
write_sysfs() {
  if [ "$DRY_RUN" = 1 ]; then
    echo "would write '$1' to $2"
  else
    printf '%s\n' "$1" >"$2" 2>/dev/null || die "cannot write '$1' to $2"
  fi
}

# Runs a command (or says it would).
run() {
  if [ "$DRY_RUN" = 1 ]; then
    echo "would run: $*"
  else
    "$@" || die "'$*' failed"
  fi
}

# Name of the driver bound to PCI function $1, or nothing.
driver_of() {
  local link="$SYSFS_ROOT/bus/pci/devices/$1/driver"
  if [ -L "$link" ]; then basename "$(readlink "$link")"; fi
}

# Loads driver module $1 unless sysfs already has it as $2.
ensure_driver() {
  [ -d "$SYSFS_ROOT/bus/pci/drivers/$2" ] || run modprobe "$1"
}

# After a real bind: the function must now be on driver $1.
check_bound() {
  [ "$DRY_RUN" = 1 ] && return 0
  local now
  now="$(driver_of "$ADDRESS")"
  [ "$now" = "$1" ] && return 0
  if [ -n "$now" ]; then now="still bound to $now"; else now="bound to no driver"; fi
  die "$ADDRESS is $now after binding it to $1: see 'dmesg | tail'"
}

no_iommu_group() {
  die "$ADDRESS has no IOMMU group: enable the IOMMU (kernel command line intel_iommu=on on Intel," \
    "amd_iommu=on on AMD; VT-d/AMD-Vi in the firmware setup) and reboot"
}

bind_to_vfio() {
  local dev="$SYSFS_ROOT/bus/pci/devices/$ADDRESS"
  [ -d "$dev" ] || die "no PCI function $ADDRESS ($dev does not exist): check the address with 'lspci -D -d 14e4:'"
  local vendor
  vendor="$(cat "$dev/vendor")"
  [ "$vendor" = 0x14e4 ] || die "$ADDRESS is not a Broadcom device (vendor $vendor); rig-bnxt drives bnxt NICs only"
  # Without a group, an IOMMU may still be there: one that places a device in a group only when a
  # driver binds it (virtio-iommu, whose devices the kernel configures at probe: Linux
  # drivers/acpi/viot.c viot_iommu_configure, from pci_dma_configure). Without any IOMMU, no group.
  if [ ! -e "$dev/iommu_group" ]; then
    [ -n "$(ls -A "$SYSFS_ROOT/class/iommu" 2>/dev/null)" ] || no_iommu_group
    say "$ADDRESS has no IOMMU group yet: the IOMMU ($(ls "$SYSFS_ROOT/class/iommu" | tr '\n' ' ' |
      sed 's/ $//')) gives it one when vfio-pci binds it"
  fi
  local group current
  current="$(driver_of "$ADDRESS")"

  ensure_driver vfio-pci vfio-pci
  if [ "$current" = vfio-pci ]; then
    say "$ADDRESS is already bound to vfio-pci"
  else
    if [ -n "$current" ]; then
      say "unbinding $ADDRESS from $current"
      write_sysfs "$ADDRESS" "$dev/driver/unbind"
    fi
    write_sysfs vfio-pci "$dev/driver_override"
    write_sysfs "$ADDRESS" "$SYSFS_ROOT/bus/pci/drivers/vfio-pci/bind"
    check_bound vfio-pci
  fi
  if [ ! -e "$dev/iommu_group" ]; then
    [ "$DRY_RUN" = 1 ] && { say "$ADDRESS: its IOMMU group is known once it is bound"; return 0; }
    no_iommu_group
  fi
  group="$(basename "$(readlink "$dev/iommu_group")")"

  # The group is only usable when every member is on vfio-pci or has no driver.
  local member member_driver
  for member in "$SYSFS_ROOT/kernel/iommu_groups/$group/devices/"*; do
    [ -e "$member" ] || continue
    member="$(basename "$member")"
    [ "$member" = "$ADDRESS" ] && continue
    member_driver="$(driver_of "$member")"
    if [ -n "$member_driver" ] && [ "$member_driver" != vfio-pci ]; then
      warn "$member shares IOMMU group $group and is bound to $member_driver:" \
        "bind it too (scripts/bind-vfio.sh $member)"
    fi
  done
  say "$ADDRESS: IOMMU group $group, device node /dev/vfio/$group"
  say "to run without root: sudo chown \$USER /dev/vfio/$group, and raise the locked-memory limit (ulimit -l)"
}

unbind_from_vfio() {
  local dev="$SYSFS_ROOT/bus/pci/devices/$ADDRESS"
  [ -d "$dev" ] || die "no PCI function $ADDRESS ($dev does not exist)"
  local current
  current="$(driver_of "$ADDRESS")"
  if [ "$current" = bnxt_en ]; then
    say "$ADDRESS is already bound to bnxt_en"
    return 0
  fi
  if [ -n "$current" ]; then
    say "unbinding $ADDRESS from $current"
    write_sysfs "$ADDRESS" "$dev/driver/unbind"
  fi
  # An empty driver_override lets the kernel match drivers by id again.
  write_sysfs "" "$dev/driver_override"
  ensure_driver bnxt_en bnxt_en
  write_sysfs "$ADDRESS" "$SYSFS_ROOT/bus/pci/drivers/bnxt_en/bind"
  check_bound bnxt_en
  say "$ADDRESS is back on bnxt_en"
}

reserve_hugepages() {
  local file="$SYSFS_ROOT/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"
  [ -e "$file" ] || die "this kernel has no 2 MiB hugepages ($file does not exist)"
  write_sysfs "$HUGEPAGES" "$file"
  if [ "$DRY_RUN" = 0 ]; then
    local got
    got="$(cat "$file")"
    if [ "$got" -lt "$HUGEPAGES" ]; then
      warn "only $got of $HUGEPAGES hugepages could be reserved" \
        "(memory is fragmented: reserve at boot with hugepages=$HUGEPAGES)"
    else
      say "$got hugepages of 2 MiB reserved"
    fi
  fi
}

if [ -n "$ADDRESS" ]; then
  if [ "$UNBIND" = 1 ]; then unbind_from_vfio; else bind_to_vfio; fi
fi
if [ -n "$HUGEPAGES" ]; then reserve_hugepages; fi
