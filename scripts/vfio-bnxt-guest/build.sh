#!/usr/bin/env bash
# Builds the guest in which rig-bnxt's own driver runs through the guest kernel's VFIO against the
# software NIC served over vfio-user (test/serial/vfio-bnxt-guest.test.ts; docs/vfio-user.md), from
# Debian packages only, beside the bnxt guest in its cache (default /var/cache/rig-bnxt/bnxt-guest,
# or $RIG_BNXT_GUEST_CACHE, or the argument):
#
#   (from scripts/bnxt-guest/build.sh, run first: the trixie chroot with QEMU's vfio-user
#   client, the private apt configuration, the downloaded packages, and the bnxt guest image
#   the second guest of the test boots)
#   vfio-images/KEY/   one image, KEY naming what it was built from (this script, init.sh,
#                      steps.sh and every package's version):
#     vmlinuz          trixie's 6.12 kernel (the bnxt guest's)
#     initrd.cpio.gz   the guest: vfio-pci, vfio_iommu_type1 and what they need, virtio-net for the
#                      control NIC, in /lib/modules with modules.dep (so modprobe works, as on a
#                      host); Node.js from Debian's nodejs package; bash, kmod, dash, busybox;
#                      /init is init.sh beside this script, /steps.sh its job steps
#     guest.txt        every package that went in, with its version
#
# What a run adds (run.ts): the project as a second cpio archive appended to the initrd (the
# kernel unpacks both): the bundle (dist/), koffi, scripts/bind-vfio.sh, and the job.
#
#   scripts/vfio-bnxt-guest/build.sh [--force] [CACHE_DIR]
#
# Its last two lines are "bnxt-image: DIR" (the bnxt guest) and "image: DIR" (this one). Needs
# what scripts/bnxt-guest/build.sh needs (root, apt-get, dpkg, kmod, cpio, gzip, readelf, xz).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
force=()
if [ "${1:-}" = "--force" ]; then force=(--force); shift; fi
cache=${1:-${RIG_BNXT_GUEST_CACHE:-/var/cache/rig-bnxt/bnxt-guest}}
started=$(date +%s)
say() { echo "[vfio-bnxt-guest +$(( $(date +%s) - started ))s] $*"; }
die() { echo "vfio-bnxt-guest build: error: $*" >&2; exit 1; }

# ---- the bnxt guest first: the chroot, the apt configuration, its image ----------------------------
bnxt_out=$("$here/../bnxt-guest/build.sh" "${force[@]}" "$cache") ||
  { echo "$bnxt_out" >&2; die "scripts/bnxt-guest/build.sh failed"; }
bnxt_image=$(sed -n 's/^image: //p' <<<"$bnxt_out" | tail -1)
[ -d "$bnxt_image" ] || die "scripts/bnxt-guest/build.sh named no image"
cache=$(cd "$cache" && pwd)
export APT_CONFIG="$cache/apt/apt.conf"
[ -r "$APT_CONFIG" ] || die "no $APT_CONFIG (scripts/bnxt-guest/build.sh writes it)"
debs="$cache/debs"

# Each package at its trixie version: the host's own packages (a Node.js from another source) must
# not pick the version apt-get download asks for. One apt-cache call for them all.
declare -A trixie=()
pin_versions() {
  local name version
  while IFS='|' read -r name version source; do
    name=${name// /}; version=${version// /}
    [[ "$source" == *" trixie/"* ]] && [ -z "${trixie[$name]:-}" ] && trixie[$name]=$version
  done < <(apt-cache madison "$@" 2>/dev/null)
  for name in "$@"; do [ -n "${trixie[$name]:-}" ] || die "trixie has no package $name"; done
}
deb_of() { compgen -G "$debs/${1}_*.deb" | sort -V | tail -1; }
fetch() { # fetch PKG...: downloads into $debs the trixie version of each package not there yet
  local missing=() p v
  pin_versions "$@"
  for p in "$@"; do
    v=${trixie[$p]}
    compgen -G "$debs/${p}_${v/:/%3a}_*.deb" >/dev/null || missing+=("$p=$v")
  done
  [ ${#missing[@]} = 0 ] && return 0
  say "downloading ${missing[*]}"
  (cd "$debs" && apt-get download -q "${missing[@]}" 2>&1 |
    grep -vE '^(Get:|Fetched|W: Download is performed unsandboxed)' || true)
  for p in "${missing[@]}"; do compgen -G "$debs/${p%%=*}_*.deb" >/dev/null || die "apt-get download $p failed"; done
}

kernel_deb=$(sed -n 's/^\(linux-image-[^ ]*-amd64\)_.*/\1/p' "$bnxt_image/guest.txt" | head -1)
[ -n "$kernel_deb" ] || die "the bnxt guest's guest.txt names no kernel"
kver=${kernel_deb#linux-image-}
GUEST_PACKAGES=(
  libc6 libgcc-s1 dash busybox-static bash libtinfo6 kmod libkmod2 liblzma5 libzstd1 libssl3t64 zlib1g
  nodejs libnode115 libuv1t64 libicu76 libcares2 libnghttp2-14 libbrotli1 libstdc++6
  node-acorn node-cjs-module-lexer node-undici node-minimatch
)
fetch "${GUEST_PACKAGES[@]}"
kernel_file=$(deb_of "$kernel_deb")
[ -n "$kernel_file" ] || die "no $kernel_deb in $debs"

image_key=$({
  cat "$here/build.sh" "$here/init.sh" "$here/steps.sh" "$here/../bnxt-guest/elf-closure.sh"
  basename "$kernel_file"
  for p in "${GUEST_PACKAGES[@]}"; do basename "$(deb_of "$p")"; done
} | sha256sum | cut -c1-16)
images="$cache/vfio-images"
image="$images/$image_key"
mkdir -p "$images"
find "$images" -mindepth 1 -maxdepth 1 -type d -mtime +7 ! -name "$image_key" -exec rm -rf {} + 2>/dev/null || true
if [ ${#force[@]} = 0 ] && [ -s "$image/initrd.cpio.gz" ] && [ -s "$image/vmlinuz" ] && [ -s "$image/guest.txt" ]; then
  touch "$image"
  say "guest up to date"
  echo "bnxt-image: $bnxt_image"
  echo "image: $image"
  exit 0
fi
work=$(mktemp -d "$cache/vfio-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
stage="$work/stage"; root="$work/root"; out="$work/image"
mkdir -p "$stage" "$root" "$out"
say "extracting $kernel_deb and ${#GUEST_PACKAGES[@]} packages"
dpkg -x "$kernel_file" "$stage"
for p in "${GUEST_PACKAGES[@]}"; do dpkg -x "$(deb_of "$p")" "$stage"; done
for d in lib lib64 bin sbin; do [ -e "$stage/$d" ] || ln -s "usr/$d" "$stage/$d"; done

# ---- modules, decompressed into /lib/modules/KVER with their modules.dep ------------------------
depmod -b "$stage" "$kver"
modules="$root/usr/lib/modules/$kver"
mkdir -p "$modules"
# vfio-pci and the type1 IOMMU backend (loaded by bind-vfio.sh's modprobe and by vfio itself);
# virtio_net for the control NIC (the TCP exchanges of pingpong and perf).
for module in vfio-pci vfio_iommu_type1 virtio_pci virtio_net; do
  modprobe -d "$stage" -S "$kver" --show-depends "$module" > "$work/deps.txt" || die "modprobe cannot resolve $module"
  while read -r kind path _; do
    [ "$kind" = insmod ] || continue
    rel=${path#"$stage/usr/lib/modules/$kver/"}
    rel=${rel#"$stage/lib/modules/$kver/"}
    mkdir -p "$modules/$(dirname "$rel")"
    case "$rel" in
      *.ko.xz) xz -dc "$path" > "$modules/${rel%.xz}" ;;
      *.ko) cp "$path" "$modules/$rel" ;;
      *) die "unexpected module $path" ;;
    esac
  done < "$work/deps.txt"
done
cp "$stage/usr/lib/modules/$kver/modules.builtin" "$stage/usr/lib/modules/$kver/modules.builtin.modinfo" \
  "$stage/usr/lib/modules/$kver/modules.order" "$modules/" 2>/dev/null || true
for d in lib lib64 bin sbin; do ln -s "usr/$d" "$root/$d" 2>/dev/null || true; done
depmod -b "$root" "$kver"
say "modules: $(cd "$modules" && find kernel -name '*.ko' -printf '%f ' | sort)"

# ---- programs with their shared-library closure ---------------------------------------------------
GUEST_TOOLS=(usr/bin/dash usr/bin/bash usr/bin/kmod usr/bin/node)
libdirs=(usr/lib/x86_64-linux-gnu)
. "$here/../bnxt-guest/elf-closure.sh"
for t in "${GUEST_TOOLS[@]}"; do [ -e "$stage/$t" ] || die "no $t in the guest packages"; copy_file "$t"; done
copy_file usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
copy_file "$(find_lib libgcc_s.so.1)"
# koffi's native module (added by the run) needs the C++ runtime and libm.
copy_file "$(find_lib libstdc++.so.6)"
copy_file "$(find_lib libm.so.6)"
# Debian's Node takes some of its built-in modules from these packages (its shared_builtin paths).
mkdir -p "$root/usr/share/nodejs"
for d in acorn acorn-walk cjs-module-lexer undici minimatch; do
  [ -e "$stage/usr/share/nodejs/$d" ] && cp -rL "$stage/usr/share/nodejs/$d" "$root/usr/share/nodejs/"
done
ln -s kmod "$root/usr/bin/modprobe"
mkdir -p "$root/usr/sbin"
for t in modprobe insmod rmmod lsmod modinfo depmod; do ln -s ../bin/kmod "$root/usr/sbin/$t"; done
mkdir -p "$root/usr/lib64" "$root/proc" "$root/sys" "$root/dev" "$root/tmp" "$root/run" "$root/etc" "$root/opt"
ln -sf ../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$root/usr/lib64/ld-linux-x86-64.so.2"
mkdir -p "$root/usr/local/busybox"
cp "$stage/usr/bin/busybox" "$root/usr/local/busybox/busybox"
ln -sf dash "$root/usr/bin/sh"
cp "$here/init.sh" "$root/init"; chmod 755 "$root/init"
# rig-bnxt as an installed package puts it on PATH; here the bundle the run adds.
printf '#!/bin/sh\nexec node /opt/rig-bnxt/dist/rig-bnxt.mjs "$@"\n' > "$root/usr/bin/rig-bnxt"
chmod 755 "$root/usr/bin/rig-bnxt"
cp "$here/steps.sh" "$root/steps.sh"
printf 'root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n' > "$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$root/etc/group"
printf '127.0.0.1 localhost\n' > "$root/etc/hosts"
# The guest runs what the run adds: a check that the node here starts at all, on this host.
env -i PATH=/usr/bin "$(command -v chroot)" "$root" /usr/bin/node \
  -e 'process.exit(process.versions.node.startsWith("20.") ? 0 : 1)' ||
  die "the guest's Node (Debian's nodejs) does not start in its own root"

say "writing the initrd"
(cd "$root" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet --owner=0:0) |
  gzip -1 > "$out/initrd.cpio.gz"
cp "$stage/boot/vmlinuz-$kver" "$out/vmlinuz"
{
  basename "$kernel_file" .deb
  for p in "${GUEST_PACKAGES[@]}"; do basename "$(deb_of "$p")" .deb; done
} > "$out/guest.txt"
[ ${#force[@]} = 0 ] || rm -rf "$image"
if ! mv -T "$out" "$image" 2>/dev/null; then say "another build wrote $image first"; fi
say "done: $image (initrd $(du -h "$image/initrd.cpio.gz" | cut -f1))"
echo "bnxt-image: $bnxt_image"
echo "image: $image"
