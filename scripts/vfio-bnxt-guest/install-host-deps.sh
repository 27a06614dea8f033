#!/usr/bin/env bash
# Installs what scripts/vfio-bnxt-guest/build.sh needs on the host (the same Debian packages as
# the bnxt guest's: scripts/bnxt-guest/install-host-deps.sh, which also builds that guest and the
# QEMU chroot), then builds this guest into the same cache (idempotent: a cached build is a no-op).
# Run as root (CI runs as root).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
"$here/../bnxt-guest/install-host-deps.sh" >/dev/null
exec "$here/build.sh"
