#!/usr/bin/env bash
# Builds the soft-RoCE (rdma_rxe) guest for the interop harness from Debian packages only:
# a Debian 12 kernel (vmlinuz) and a gzip cpio initramfs whose /init is guest-init.sh.
#
#   scripts/interop/build-guest.sh [--force] [CACHE_DIR]     (default CACHE_DIR: build/interop in the repository)
#
# Outputs CACHE_DIR/vmlinuz, CACHE_DIR/rxe-initrd.cpio.gz and CACHE_DIR/guest.txt (what went in).
# The build is skipped when both images are newer than this script, guest-init.sh and every
# downloaded .deb. Needs on the host: apt-get (with lists: run `apt-get update` once), dpkg,
# kmod (depmod, modprobe), cpio, gzip, readelf (binutils). See README.md and install-host-deps.sh.
# Facts behind every step: docs/interop.md ("The guest").
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
force=0
if [ "${1:-}" = "--force" ]; then force=1; shift; fi
cache=${1:-$here/../../build/interop}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
debs="$cache/debs"
stage="$cache/stage"
root="$cache/root"
kernel_out="$cache/vmlinuz"
initrd_out="$cache/rxe-initrd.cpio.gz"
started=$(date +%s)

say() { echo "[build-guest +$(( $(date +%s) - started ))s] $*"; }
die() { echo "build-guest: error: $*" >&2; exit 1; }

# The user-space packages; the kernel package is resolved from linux-image-amd64 below.
# libc6 and libgcc-s1 are included so every library in the image comes from these debs,
# not from the host. libgcc_s.so.1 is dlopen()ed by glibc (pthread_exit), ldd never lists it.
GUEST_PACKAGES=(
  busybox-static libc6 libgcc-s1
  libibverbs1 ibverbs-providers ibverbs-utils perftest librdmacm1 rdmacm-utils libibumad3
  libnl-3-200 libnl-route-3-200 libpci3 libudev1 zlib1g
  iproute2 libmnl0 libbsd0 libmd0 libcap2 libelf1 libbpf1 libselinux1 libpcre2-8-0
)
# Loaded in the order modprobe --show-depends gives, each after its dependencies.
# crc32_generic / crc32c_generic: rxe asks the crypto API for "crc32" (the ICRC) by name,
# which no symbol dependency pulls in.
GUEST_MODULES=(virtio_pci virtio_net qemu_fw_cfg crc32_generic crc32c_generic rdma_rxe ib_uverbs rdma_ucm)
# Tools copied with their shared-library closure.
GUEST_TOOLS=(
  usr/bin/ibv_devices usr/bin/ibv_devinfo usr/bin/ibv_rc_pingpong usr/bin/ibv_ud_pingpong
  usr/bin/ib_send_lat usr/bin/ib_send_bw usr/bin/ib_write_lat usr/bin/ib_read_lat usr/bin/ib_atomic_lat
  usr/bin/ib_write_bw
  usr/bin/rping bin/ip usr/bin/rdma
)

for tool in apt-get apt-cache dpkg depmod modprobe cpio gzip readelf; do
  command -v "$tool" >/dev/null || die "$tool not found (run scripts/interop/install-host-deps.sh)"
done

# ---- up to date? ------------------------------------------------------------------------------
newest_input() {
  # Prints the newest mtime (seconds) among the build's inputs; debs only if already downloaded.
  local files=("$here/build-guest.sh" "$here/guest-init.sh")
  if [ -d "$debs" ]; then while IFS= read -r f; do files+=("$f"); done < <(find "$debs" -name '*.deb'); fi
  stat -c %Y "${files[@]}" | sort -n | tail -1
}
if [ "$force" = 0 ] && [ -s "$kernel_out" ] && [ -s "$initrd_out" ] && [ -f "$cache/guest.txt" ]; then
  oldest_output=$(stat -c %Y "$kernel_out" "$initrd_out" | sort -n | head -1)
  if [ "$oldest_output" -gt "$(newest_input)" ]; then
    say "up to date: $kernel_out, $initrd_out"
    exit 0
  fi
fi

# ---- download ---------------------------------------------------------------------------------
resolve_kernel() {
  apt-cache depends linux-image-amd64 2>/dev/null |
    sed -nE 's/^ *Depends: (linux-image-[0-9][^ ]*-amd64)$/\1/p' | head -1
}
kernel_pkg=$(resolve_kernel)
if [ -z "$kernel_pkg" ] && [ "$(id -u)" = 0 ]; then
  say "apt has no package lists: apt-get update"
  apt-get update -qq -o DPkg::Lock::Timeout=300 || true
  kernel_pkg=$(resolve_kernel)
fi
[ -n "$kernel_pkg" ] || die "cannot resolve linux-image-amd64 (run apt-get update first)"
kver=${kernel_pkg#linux-image-}
mkdir -p "$debs"
missing=()
for pkg in "$kernel_pkg" "${GUEST_PACKAGES[@]}"; do
  compgen -G "$debs/${pkg}_*.deb" >/dev/null || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "downloading ${#missing[@]} packages: ${missing[*]}"
  # apt's _apt user needs to write here; otherwise apt falls back to root with a notice.
  (cd "$debs" && apt-get download -q "${missing[@]}" 2>&1 |
    grep -vE '^(Get:|Fetched|W: Download is performed unsandboxed)' || true)
  for pkg in "${missing[@]}"; do
    compgen -G "$debs/${pkg}_*.deb" >/dev/null || die "apt-get download $pkg failed"
  done
else
  say "all $(( ${#GUEST_PACKAGES[@]} + 1 )) packages already downloaded"
fi

# ---- stage ------------------------------------------------------------------------------------
say "extracting into $stage (kernel $kver)"
rm -rf "$stage" "$root"
mkdir -p "$stage" "$root"
for pkg in "$kernel_pkg" "${GUEST_PACKAGES[@]}"; do
  deb=$(compgen -G "$debs/${pkg}_*.deb" | sort | tail -1)
  dpkg -x "$deb" "$stage"
done
[ -f "$stage/boot/vmlinuz-$kver" ] || die "no vmlinuz-$kver in $kernel_pkg"

# ---- modules ----------------------------------------------------------------------------------
say "resolving modules: ${GUEST_MODULES[*]}"
depmod -b "$stage" "$kver"
mkdir -p "$root/modules"
: > "$root/modules/order"
for module in "${GUEST_MODULES[@]}"; do
  modprobe -d "$stage" -S "$kver" --show-depends "$module" > "$cache/deps.txt" || die "modprobe cannot resolve $module"
  while read -r kind path _; do
    [ "$kind" = insmod ] || continue            # "builtin NAME" lines need nothing
    name=$(basename "$path")
    grep -qxF "$name" "$root/modules/order" && continue
    case "$name" in
      *.ko) cp "$path" "$root/modules/$name" ;;
      *.ko.xz) xz -dc "$path" > "$root/modules/${name%.xz}"; name=${name%.xz} ;;
      *) die "unexpected module file $path" ;;
    esac
    echo "$name" >> "$root/modules/order"
  done < "$cache/deps.txt"
done
rm -f "$cache/deps.txt"
say "modules: $(tr '\n' ' ' < "$root/modules/order")"

# ---- tools and their library closure ----------------------------------------------------------
libdirs=(lib/x86_64-linux-gnu usr/lib/x86_64-linux-gnu lib64 usr/lib/x86_64-linux-gnu/libibverbs)
find_lib() {
  local dir
  for dir in "${libdirs[@]}"; do
    if [ -e "$stage/$dir/$1" ]; then echo "$dir/$1"; return 0; fi
  done
  return 1
}
declare -A copied=()
copy_file() {
  # copy_file RELPATH: copies stage/RELPATH (following symlinks) to root/RELPATH once, then
  # its DT_NEEDED libraries, recursively.
  local rel=$1
  [ -n "${copied[$rel]:-}" ] && return 0
  copied[$rel]=1
  mkdir -p "$root/$(dirname "$rel")"
  cp -L "$stage/$rel" "$root/$rel"
  local needed lib
  for needed in $(readelf -d "$stage/$rel" 2>/dev/null | sed -nE 's/.*\(NEEDED\).*\[(.*)\]/\1/p'); do
    lib=$(find_lib "$needed") || die "$rel needs $needed, which no guest package provides"
    copy_file "$lib"
  done
}
for tool in "${GUEST_TOOLS[@]}"; do
  [ -e "$stage/$tool" ] || die "no $tool in the guest packages"
  copy_file "$tool"
done
# The dynamic loader at the path the binaries name (PT_INTERP).
copy_file lib64/ld-linux-x86-64.so.2
copy_file "$(find_lib libgcc_s.so.1)"
# libibverbs reads /etc/libibverbs.d/*.driver and dlopens the provider named there; only rxe
# is needed.
mkdir -p "$root/etc/libibverbs.d"
cp "$stage/etc/libibverbs.d/rxe.driver" "$root/etc/libibverbs.d/"
provider=$(cd "$stage" && ls usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav*.so | head -1)
[ -n "$provider" ] || die "no rxe provider in ibverbs-providers"
copy_file "$provider"
# Tools live in /usr/local/bin so that they come before busybox's applets of the same name (ip).
mkdir -p "$root/usr/local/bin"
for tool in "${GUEST_TOOLS[@]}"; do mv "$root/$tool" "$root/usr/local/bin/"; done

# ---- busybox and /init ------------------------------------------------------------------------
mkdir -p "$root/bin" "$root/sbin" "$root/proc" "$root/sys" "$root/dev" "$root/tmp" "$root/run" "$root/etc"
cp "$stage/bin/busybox" "$root/bin/busybox"
ln -sf busybox "$root/bin/sh"
cp "$here/guest-init.sh" "$root/init"
chmod 755 "$root/init"
echo "root:x:0:0:root:/:/bin/sh" > "$root/etc/passwd"

say "writing $initrd_out"
(cd "$root" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet --owner=0:0) |
  gzip -6 > "$initrd_out.tmp"
mv "$initrd_out.tmp" "$initrd_out"
cp "$stage/boot/vmlinuz-$kver" "$kernel_out"
{
  echo "kernel $kernel_pkg"
  for pkg in "$kernel_pkg" "${GUEST_PACKAGES[@]}"; do
    basename "$(compgen -G "$debs/${pkg}_*.deb" | sort | tail -1)"
  done
} > "$cache/guest.txt"
rm -rf "$stage"
say "done: $kernel_out ($(du -h "$kernel_out" | cut -f1)), $initrd_out ($(du -h "$initrd_out" | cut -f1))"
