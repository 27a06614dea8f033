#!/usr/bin/env bash
# Builds the QEMU guest that test/vfio-guest.test.ts boots: Debian's kernel (the package
# linux-image-amd64 depends on) and, in one uncompressed initramfs, busybox-static, the
# VFIO modules, this host's own Node binary with its shared libraries, koffi, and
# scripts/vfio-guest/edu-check.ts bundled with esbuild. Debian's packages come with
# 'apt-get download' (Debian's mirror is the only network use); nothing else is fetched.
#
# Output (cached; only what changed is redone): $OUT/vmlinuz, $OUT/initramfs.cpio, where
# OUT is build/vfio-guest (or $VFIO_GUEST_OUT). Prints "kernel PATH" and "initramfs PATH".
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
OUT="${VFIO_GUEST_OUT:-$ROOT/build/vfio-guest}"
DEBS="$OUT/debs"
# The Node the guest runs: this host's own binary (VFIO_GUEST_NODE, or the node on PATH).
NODE_BIN="${VFIO_GUEST_NODE:-$(node -p process.execPath)}"
# vfio-pci pulls in vfio-pci-core, vfio, vfio_virqfd and irqbypass; type1 is the IOMMU backend.
ROOT_MODULES=(vfio_iommu_type1 vfio-pci)

say() { echo "vfio-guest build: $*" >&2; }
die() {
  echo "vfio-guest build: error: $*" >&2
  exit 1
}

for tool in apt-get apt-cache dpkg-deb tar modinfo cpio sha256sum ldd; do
  command -v "$tool" >/dev/null || die "$tool not found: run scripts/vfio-guest/install-host-deps.sh"
done
"$NODE_BIN" -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' ||
  die "$NODE_BIN is not Node 20 or newer"
[ -x "$ROOT/node_modules/.bin/esbuild" ] || die "esbuild is not installed: run npm install"
[ -d "$ROOT/node_modules/koffi" ] || die "koffi is not installed: run npm install"

# --- Debian packages -------------------------------------------------------------------
kernel_package() {
  apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n 1
}
KERNEL_PKG="$(kernel_package)"
if [ -z "$KERNEL_PKG" ]; then
  say "apt has no linux-image-amd64 yet: running apt-get update"
  apt-get update -q >&2 || die "apt-get update failed"
  KERNEL_PKG="$(kernel_package)"
fi
[ -n "$KERNEL_PKG" ] || die "apt cannot resolve linux-image-amd64 to a kernel package"

mkdir -p "$DEBS"
# The newest downloaded .deb of package $1, downloading it first when there is none.
deb_of() {
  local found
  found="$(ls -1 "$DEBS/$1"_*.deb 2>/dev/null | sort -V | tail -n 1)"
  if [ -z "$found" ]; then
    say "downloading $1"
    (cd "$DEBS" && apt-get download -q -o APT::Sandbox::User=root "$1" >&2) || die "apt-get download $1 failed"
    found="$(ls -1 "$DEBS/$1"_*.deb 2>/dev/null | sort -V | tail -n 1)"
  fi
  [ -n "$found" ] || die "no .deb of $1 in $DEBS"
  echo "$found"
}
KERNEL_DEB="$(deb_of "$KERNEL_PKG")"
BUSYBOX_DEB="$(deb_of busybox-static)"

KERNEL_DIR="$OUT/kernel/$(basename "$KERNEL_DEB" .deb)"
# Unpacks the kernel package: only the kernel and the module folders VFIO lives in (a few
# seconds), or with "all" every module (when a dependency lives elsewhere).
unpack_kernel() {
  rm -rf "$KERNEL_DIR"
  mkdir -p "$KERNEL_DIR"
  if [ "$1" = all ]; then
    say "unpacking all of $(basename "$KERNEL_DEB")"
    dpkg-deb -x "$KERNEL_DEB" "$KERNEL_DIR"
  else
    say "unpacking the kernel and VFIO modules of $(basename "$KERNEL_DEB")"
    # tar exits non-zero when a pattern matches nothing (drivers/iommu has no modules on
    # some kernels); what matters is checked below.
    dpkg-deb --fsys-tarfile "$KERNEL_DEB" | tar -x -C "$KERNEL_DIR" --wildcards './boot/vmlinuz-*' \
      './lib/modules/*/kernel/drivers/vfio/*' './lib/modules/*/kernel/drivers/iommu/*' \
      './lib/modules/*/kernel/virt/*' 2>/dev/null || true
  fi
  echo "$1" >"$KERNEL_DIR/.extracted"
}
[ -e "$KERNEL_DIR/.extracted" ] || unpack_kernel vfio
VMLINUZ="$(ls -1 "$KERNEL_DIR"/boot/vmlinuz-* 2>/dev/null | head -n 1)"
MODULES_DIR="$(ls -d "$KERNEL_DIR"/lib/modules/* 2>/dev/null | head -n 1)"
[ -f "$VMLINUZ" ] && [ -d "$MODULES_DIR/kernel/drivers/vfio" ] || die "$KERNEL_DEB has no vmlinuz or VFIO modules"

# --- Staging tree ----------------------------------------------------------------------
STAGE="$OUT/stage"
rm -rf "$STAGE"
mkdir -p "$STAGE"/{bin,usr/bin,app/node_modules/@koromix,lib/modules,proc,sys,dev,tmp}

BUSYBOX_DIR="$OUT/busybox"
rm -rf "$BUSYBOX_DIR"
dpkg-deb -x "$BUSYBOX_DEB" "$BUSYBOX_DIR"
cp "$BUSYBOX_DIR/bin/busybox" "$STAGE/bin/busybox"
install -m 0755 "$HERE/init" "$STAGE/init"

# Modules, dependencies first, from each module's own "depends" list. Module names treat
# '-' and '_' alike; Debian may ship them compressed (.ko.xz, .ko.zst).
declare -A MODULE_FILE=()
declare -A LOADED=()
LOAD_ORDER=()
MISSING=""
index_modules() {
  MODULE_FILE=()
  local file name
  while IFS= read -r file; do
    name="${file##*/}"
    name="${name%%.ko*}"
    MODULE_FILE["${name//-/_}"]="$file"
  done < <(find "$MODULES_DIR/kernel" -name '*.ko*')
}
# Puts module $1 after its dependencies in LOAD_ORDER; sets MISSING when one is not unpacked.
add_module() {
  local key="${1//-/_}" file dep
  [ -z "${LOADED[$key]:-}" ] || return 0
  LOADED[$key]=1
  file="${MODULE_FILE[$key]:-}"
  if [ -z "$file" ]; then
    MISSING="$1"
    return 0
  fi
  for dep in $(modinfo -F depends "$file" | tr ',' ' '); do add_module "$dep"; done
  LOAD_ORDER+=("$key")
}
resolve_modules() {
  LOADED=()
  LOAD_ORDER=()
  MISSING=""
  index_modules
  for module in "${ROOT_MODULES[@]}"; do add_module "$module"; done
}
resolve_modules
if [ -n "$MISSING" ] && [ "$(cat "$KERNEL_DIR/.extracted")" != all ]; then
  unpack_kernel all
  resolve_modules
fi
[ -z "$MISSING" ] || die "module $MISSING is not in $(basename "$KERNEL_DEB")"
for key in "${LOAD_ORDER[@]}"; do
  file="${MODULE_FILE[$key]}"
  case "$file" in
    *.ko.xz) xz -dc "$file" >"$STAGE/lib/modules/$key.ko" ;;
    *.ko.zst) zstd -qdc "$file" >"$STAGE/lib/modules/$key.ko" ;;
    *.ko.gz) gzip -dc "$file" >"$STAGE/lib/modules/$key.ko" ;;
    *) cp "$file" "$STAGE/lib/modules/$key.ko" ;;
  esac
done
printf '%s\n' "${LOAD_ORDER[@]}" >"$STAGE/lib/modules/load-order"

# Node and koffi's native module, with every shared library they load (same paths).
KOFFI_NATIVE="$ROOT/node_modules/@koromix/koffi-linux-x64/linux_x64/koffi.node"
[ -f "$KOFFI_NATIVE" ] || die "koffi's linux x64 build is missing ($KOFFI_NATIVE): run npm install"
cp -L "$NODE_BIN" "$STAGE/usr/bin/node"
for lib in $( (ldd "$NODE_BIN" && ldd "$KOFFI_NATIVE") | grep -o '/[^ ]*' | sort -u); do
  mkdir -p "$STAGE$(dirname "$lib")"
  cp -L "$lib" "$STAGE$lib"
done
cp -rL "$ROOT/node_modules/koffi" "$STAGE/app/node_modules/koffi"
cp -rL "$ROOT/node_modules/@koromix/koffi-linux-x64" "$STAGE/app/node_modules/@koromix/koffi-linux-x64"

# The guest program: one ES module; koffi stays external (it loads its native part).
"$ROOT/node_modules/.bin/esbuild" "$HERE/edu-check.ts" --bundle --platform=node --format=esm --target=node20 \
  --external:koffi --log-level=warning --outfile="$STAGE/app/edu-check.mjs"

# --- Image ------------------------------------------------------------------------------
# The stamp covers every file of the tree (content and mode) and the kernel: an unchanged
# tree keeps the image built before.
STAMP="$( (cd "$STAGE" && find . -type f -print0 | sort -z | xargs -0 sha256sum &&
  find . -printf '%m %p\n' | sort; echo "$VMLINUZ") | sha256sum | cut -d' ' -f1)"
if [ -f "$OUT/initramfs.cpio" ] && [ -f "$OUT/vmlinuz" ] && [ "$(cat "$OUT/stamp" 2>/dev/null)" = "$STAMP" ]; then
  say "image unchanged"
else
  say "writing initramfs ($(du -sh "$STAGE" | cut -f1))"
  # Uncompressed: under TCG the kernel copies it much faster than it would decompress it.
  (cd "$STAGE" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >"$OUT/initramfs.cpio.tmp"
  mv "$OUT/initramfs.cpio.tmp" "$OUT/initramfs.cpio"
  cp "$VMLINUZ" "$OUT/vmlinuz"
  echo "$STAMP" >"$OUT/stamp"
fi
echo "kernel $OUT/vmlinuz"
echo "initramfs $OUT/initramfs.cpio"
