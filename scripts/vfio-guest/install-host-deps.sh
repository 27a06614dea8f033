#!/usr/bin/env bash
# Installs, from Debian's packages, what the host needs to build and boot the VFIO test
# guest (scripts/vfio-guest/README.md lists why each is needed). Run as root (or with sudo).
set -euo pipefail

PACKAGES=(qemu-system-x86 cpio kmod xz-utils zstd)

SUDO=()
if [ "$(id -u)" != 0 ]; then SUDO=(sudo); fi
"${SUDO[@]}" apt-get update -q
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${PACKAGES[@]}"
qemu-system-x86_64 --version | head -n 1
