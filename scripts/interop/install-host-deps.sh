#!/usr/bin/env bash
# Installs, from Debian's packages, what the rxe interop harness needs on the host, and refreshes
# apt's lists (build-guest.sh downloads the guest's debs with apt-get download). Idempotent; run
# as root (CI runs as root). The exact list is in README.md.
#
#   qemu-system-x86   qemu-system-x86_64 (TCG; no KVM needed)
#   kmod              depmod / modprobe -d ... --show-depends (resolving the guest's modules)
#   cpio              the initramfs
#   binutils          readelf (the guest tools' shared-library closure)
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
need=()
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
{ command -v depmod >/dev/null && command -v modprobe >/dev/null; } || need+=(kmod)
command -v cpio >/dev/null || need+=(cpio)
command -v readelf >/dev/null || need+=(binutils)
# Lists are needed by apt-get download even when nothing is installed here.
apt-get update -qq -o DPkg::Lock::Timeout=300
if [ ${#need[@]} -gt 0 ]; then
  echo "install-host-deps: installing ${need[*]}"
  apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=300 "${need[@]}" >/dev/null
fi
qemu-system-x86_64 --version | head -1
