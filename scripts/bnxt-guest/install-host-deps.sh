#!/usr/bin/env bash
# Installs, from Debian's packages, what scripts/bnxt-guest/build.sh needs on the host, then
# builds the guest and the QEMU chroot into their cache (idempotent: a cached build is a no-op).
# Run as root (CI runs as root).
#   kmod (depmod, modprobe -d --show-depends), cpio, binutils (readelf), xz-utils, util-linux (unshare)
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
need=()
{ command -v depmod >/dev/null && command -v modprobe >/dev/null; } || need+=(kmod)
command -v cpio >/dev/null || need+=(cpio)
command -v readelf >/dev/null || need+=(binutils)
command -v xz >/dev/null || need+=(xz-utils)
command -v unshare >/dev/null || need+=(util-linux)
if [ ${#need[@]} -gt 0 ]; then
  echo "bnxt-guest install-host-deps: installing ${need[*]}"
  apt-get update -qq -o DPkg::Lock::Timeout=300
  apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=300 "${need[@]}" >/dev/null
fi
exec "$(dirname "$0")/build.sh"
