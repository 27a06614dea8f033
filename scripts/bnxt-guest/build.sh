#!/usr/bin/env bash
# Builds what the bnxt guest needs, from Debian packages only, into a cache outside the work
# tree (default /var/cache/rig-bnxt/bnxt-guest, or $RIG_BNXT_GUEST_CACHE, or the argument):
#
#   chroot/            a trixie minbase chroot with qemu-system-x86 from trixie-backports
#                      (QEMU >= 10.1 has the vfio-user client, -device vfio-user-pci)
#   images/KEY/        one guest image, KEY naming what it was built from (this script,
#                      init.sh and every package's version), so work trees with different
#                      scripts sharing the cache never boot each other's guest:
#     vmlinuz          trixie's 6.12 kernel (bnxt_en and bnxt_re are modules of it)
#     initrd.cpio.gz   the guest: bnxt_en, bnxt_re and their dependencies, virtio-net and
#                      fw_cfg (the control NIC and the job), rdma-core with the bnxt_re
#                      provider, ibverbs-utils, perftest, iproute2, ping, lspci, dash,
#                      busybox; /init is init.sh beside this script, /steps.sh its job steps
#     guest.txt        every package that went in, with its version
#
#   scripts/bnxt-guest/build.sh [--force] [CACHE_DIR]
#
# The last line of its output is "image: DIR" (the image folder to boot).
#
# Needs root (debootstrap, chroot), apt-get with Debian's mirror, dpkg, kmod, cpio, gzip,
# readelf, xz (install-host-deps.sh installs them). A build with everything cached takes
# under a second; a cold one about a minute plus downloads. Why each step: docs/vfio-user.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
force=0
if [ "${1:-}" = "--force" ]; then force=1; shift; fi
cache=${1:-${RIG_BNXT_GUEST_CACHE:-/var/cache/rig-bnxt/bnxt-guest}}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
started=$(date +%s)
say() { echo "[bnxt-guest +$(( $(date +%s) - started ))s] $*"; }
die() { echo "bnxt-guest build: error: $*" >&2; exit 1; }
for tool in apt-get dpkg depmod modprobe cpio gzip readelf xz; do
  command -v "$tool" >/dev/null || die "$tool not found (run scripts/bnxt-guest/install-host-deps.sh)"
done
[ "$(id -u)" = 0 ] || die "needs root (debootstrap and chroot)"

# ---- a private apt configuration: the host's sources are not touched ---------------------------
mirror=${DEBIAN_MIRROR:-$(sed -nE 's/^URIs: *(http[^ ]*debian)\/?$/\1/p' /etc/apt/sources.list.d/*.sources \
  2>/dev/null | head -1)}
[ -n "$mirror" ] || mirror=$(sed -nE 's/^deb +(\[[^]]*\] +)?(http[^ ]*) +bookworm .*/\2/p' /etc/apt/sources.list \
  2>/dev/null | head -1)
[ -n "$mirror" ] || die "no Debian mirror found in /etc/apt (set DEBIAN_MIRROR)"
apt_dir="$cache/apt"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
key=/usr/share/keyrings/debian-archive-keyring.gpg
cat > "$apt_dir/sources.list" <<SOURCES
deb [signed-by=$key] $mirror bookworm-backports main
deb [signed-by=$key] $mirror trixie main
SOURCES
cat > "$apt_dir/apt.conf" <<CONF
Dir::Etc::SourceList "$apt_dir/sources.list";
Dir::Etc::SourceParts "/dev/null";
Dir::State::Lists "$apt_dir/lists";
Dir::Cache "$apt_dir/cache";
Acquire::Languages "none";
APT::Default-Release "trixie";
CONF
export APT_CONFIG="$apt_dir/apt.conf"
fresh_lists() { [ -n "$(find "$apt_dir/lists" -maxdepth 1 -name '*Packages*' -mmin -1440 2>/dev/null | head -1)" ]; }
if ! fresh_lists; then say "apt-get update (private lists: bookworm-backports, trixie)"; apt-get update -qq; fi

debs="$cache/debs"
mkdir -p "$debs"
fetch() { # fetch PKG[=VERSION]...: downloads into $debs the packages not there yet
  local missing=() p
  for p in "$@"; do compgen -G "$debs/${p%%=*}_*.deb" >/dev/null || missing+=("$p"); done
  [ ${#missing[@]} = 0 ] && return 0
  say "downloading ${missing[*]}"
  (cd "$debs" && apt-get download -q "${missing[@]}" 2>&1 |
    grep -vE '^(Get:|Fetched|W: Download is performed unsandboxed)' || true)
  for p in "${missing[@]}"; do compgen -G "$debs/${p%%=*}_*.deb" >/dev/null || die "apt-get download $p failed"; done
}
deb_of() { compgen -G "$debs/${1}_*.deb" | sort -V | tail -1; }

# ---- the trixie chroot with QEMU from trixie-backports ----------------------------------------
chroot_dir="$cache/chroot"
if [ "$force" = 1 ] || [ ! -x "$chroot_dir/usr/bin/qemu-system-x86_64" ]; then
  rm -rf "$chroot_dir" "$cache/debootstrap"
  # bookworm's own debootstrap is older than trixie's release; bookworm-backports' knows it.
  ds_version=$(apt-cache madison debootstrap | awk '/bookworm-backports/ {print $3; exit}')
  [ -n "$ds_version" ] || die "no debootstrap in bookworm-backports"
  fetch "debootstrap=$ds_version"
  dpkg -x "$(deb_of debootstrap)" "$cache/debootstrap"
  say "debootstrap trixie (minbase) into $chroot_dir"
  DEBOOTSTRAP_DIR="$cache/debootstrap/usr/share/debootstrap" "$cache/debootstrap/usr/sbin/debootstrap" \
    --variant=minbase --keyring="$key" trixie "$chroot_dir.tmp" "$mirror" > "$cache/debootstrap.log" 2>&1 \
    || { tail -20 "$cache/debootstrap.log" >&2; die "debootstrap failed (log: $cache/debootstrap.log)"; }
  echo "deb $mirror trixie-backports main" > "$chroot_dir.tmp/etc/apt/sources.list.d/backports.list"
  say "installing qemu-system-x86 from trixie-backports in the chroot"
  # A private mount namespace: /proc, /dev and /sys vanish with the command, nothing to undo.
  unshare --mount --propagation private sh -ec '
    C=$1
    mount -t proc proc "$C/proc"; mount --bind /dev "$C/dev"; mount --bind /sys "$C/sys"
    chroot "$C" apt-get update -qq
    chroot "$C" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      -t trixie-backports qemu-system-x86 >/dev/null
    chroot "$C" apt-get clean' sh "$chroot_dir.tmp" > "$cache/chroot-qemu.log" 2>&1 \
    || { tail -20 "$cache/chroot-qemu.log" >&2; die "QEMU install in the chroot failed (log: $cache/chroot-qemu.log)"; }
  mkdir -p "$chroot_dir.tmp/share"
  mv "$chroot_dir.tmp" "$chroot_dir"
fi
qemu_version=$(chroot "$chroot_dir" qemu-system-x86_64 --version | head -1)
chroot "$chroot_dir" qemu-system-x86_64 -device help 2>/dev/null | grep -q '"vfio-user-pci"' ||
  die "$qemu_version has no vfio-user-pci"
say "$qemu_version (chroot $chroot_dir)"

# ---- the guest's packages (trixie) --------------------------------------------------------------
kernel_pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
  sed -nE 's/^ *Depends: (linux-image-6\.12[^ ]*-amd64)$/\1/p' | head -1)
[ -n "$kernel_pkg" ] || die "trixie's linux-image-amd64 does not name a 6.12 kernel"
kver=${kernel_pkg#linux-image-}
GUEST_PACKAGES=(
  libc6 libgcc-s1 dash busybox-static
  libibverbs1 ibverbs-providers ibverbs-utils perftest librdmacm1t64 libibumad3 libnl-3-200 libnl-route-3-200
  iproute2 libmnl0 libbsd0 libmd0 libcap2 libelf1t64 libbpf1 libselinux1 libpcre2-8-0 libxtables12 libtirpc3t64
  libgssapi-krb5-2
  libkrb5-3 libk5crypto3 libcom-err2 libkrb5support0 libkeyutils1 libdb5.3t64 zlib1g libzstd1
  iputils-ping libcap2 libidn2-0 libunistring5 pciutils libpci3 libudev1 libkmod2 liblzma5 libssl3t64 kmod pci.ids
)
fetch "$kernel_pkg" "${GUEST_PACKAGES[@]}"

# The image's key: the content of this script, init.sh and steps.sh, and every package's version.
image_key=$({
  cat "$here/build.sh" "$here/init.sh" "$here/steps.sh" "$here/elf-closure.sh"
  for p in "$kernel_pkg" "${GUEST_PACKAGES[@]}"; do basename "$(deb_of "$p")"; done
} | sha256sum | cut -c1-16)
images="$cache/images"
image="$images/$image_key"
mkdir -p "$images"
# Images not used for a week go (a run links the files it boots, so removing one is safe).
find "$images" -mindepth 1 -maxdepth 1 -type d -mtime +7 ! -name "$image_key" -exec rm -rf {} + 2>/dev/null || true
if [ "$force" = 0 ] && [ -s "$image/initrd.cpio.gz" ] && [ -s "$image/vmlinuz" ] && [ -s "$image/guest.txt" ]; then
  touch "$image"
  say "guest up to date"
  echo "image: $image"
  exit 0
fi
# A private staging folder: two builds at once (two work trees) do not share one.
work=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
stage="$work/stage"; root="$work/root"; out="$work/image"
mkdir -p "$stage" "$root" "$out"
initrd_out="$out/initrd.cpio.gz"
kernel_out="$out/vmlinuz"
say "extracting $kernel_pkg and ${#GUEST_PACKAGES[@]} packages"
for p in "$kernel_pkg" "${GUEST_PACKAGES[@]}"; do dpkg -x "$(deb_of "$p")" "$stage"; done
# trixie is merged-/usr: the packages ship usr/lib, usr/bin; the loader is at /lib64 by name.
for d in lib lib64 bin sbin; do [ -e "$stage/$d" ] || ln -s "usr/$d" "$stage/$d"; done
mkdir -p "$stage/usr/lib64"
[ -e "$stage/usr/lib64/ld-linux-x86-64.so.2" ] ||
  ln -s ../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$stage/usr/lib64/ld-linux-x86-64.so.2"
[ -f "$stage/boot/vmlinuz-$kver" ] || die "no vmlinuz-$kver in $kernel_pkg"

# ---- modules: bnxt_en and bnxt_re with what they depend on, in load order -----------------------
depmod -b "$stage" "$kver"
mkdir -p "$root/modules"; : > "$root/modules/order"
# virtio_net: the control NIC (QEMU user networking) for the host's TCP exchanges; qemu_fw_cfg:
# the job the host hands the guest (-fw_cfg). Loaded after bnxt_en, so bnxt's netdev is eth0.
for module in bnxt_en bnxt_re virtio_pci virtio_net qemu_fw_cfg; do
  modprobe -d "$stage" -S "$kver" --show-depends "$module" > "$work/deps.txt" || die "modprobe cannot resolve $module"
  while read -r kind path _; do
    [ "$kind" = insmod ] || continue
    name=$(basename "$path")
    case "$name" in
      *.ko.xz) ko=${name%.xz}; xz -dc "$path" > "$root/modules/$ko" ;;
      *.ko) ko=$name; cp "$path" "$root/modules/$ko" ;;
      *) die "unexpected module $path" ;;
    esac
    grep -qxF "$ko" "$root/modules/order" || echo "$ko" >> "$root/modules/order"
  done < "$work/deps.txt"
done
say "modules: $(tr '\n' ' ' < "$root/modules/order")"

# ---- tools with their shared-library closure -----------------------------------------------------
GUEST_TOOLS=(usr/bin/dash usr/bin/ibv_devices usr/bin/ibv_devinfo usr/bin/ibv_rc_pingpong usr/bin/ib_send_lat
  usr/bin/ib_send_bw
  usr/bin/ip usr/bin/rdma usr/bin/ping usr/bin/lspci usr/bin/setpci)
libdirs=(usr/lib/x86_64-linux-gnu usr/lib/x86_64-linux-gnu/libibverbs)
. "$here/elf-closure.sh"
for t in "${GUEST_TOOLS[@]}"; do [ -e "$stage/$t" ] || die "no $t in the guest packages"; copy_file "$t"; done
copy_file usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
copy_file "$(find_lib libgcc_s.so.1)"
# libibverbs reads /etc/libibverbs.d/*.driver and dlopens the provider it names: bnxt_re only.
mkdir -p "$root/etc/libibverbs.d"
cp "$stage/etc/libibverbs.d/bnxt_re.driver" "$root/etc/libibverbs.d/"
provider=$(cd "$stage" && ls usr/lib/x86_64-linux-gnu/libibverbs/libbnxt_re-rdmav*.so | head -1)
[ -n "$provider" ] || die "no bnxt_re provider in ibverbs-providers"
copy_file "$provider"
mkdir -p "$root/usr/share/misc"; cp -L "$stage/usr/share/misc/pci.ids" "$root/usr/share/misc/" 2>/dev/null || true
for d in lib lib64 bin sbin; do ln -s "usr/$d" "$root/$d" 2>/dev/null || true; done
mkdir -p "$root/usr/lib64" "$root/usr/sbin" "$root/proc" "$root/sys" "$root/dev" "$root/tmp" "$root/run" "$root/etc"
ln -sf ../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$root/usr/lib64/ld-linux-x86-64.so.2"
# busybox for the small tools (its applets are linked into /usr/local/busybox, not /usr/bin, so
# the real tools above keep their names); dash is /bin/sh.
mkdir -p "$root/usr/local/busybox"
cp "$stage/usr/bin/busybox" "$root/usr/local/busybox/busybox"
ln -sf dash "$root/usr/bin/sh"
cp "$here/init.sh" "$root/init"; chmod 755 "$root/init"
cp "$here/steps.sh" "$root/steps.sh"
echo "root:x:0:0:root:/:/bin/sh" > "$root/etc/passwd"
printf '127.0.0.1 localhost\n' > "$root/etc/hosts"

say "writing $initrd_out"
(cd "$root" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet --owner=0:0) | gzip -1 > "$initrd_out"
cp "$stage/boot/vmlinuz-$kver" "$kernel_out"
{
  echo "qemu $qemu_version"
  for p in "$kernel_pkg" "${GUEST_PACKAGES[@]}"; do basename "$(deb_of "$p")" .deb; done
} > "$out/guest.txt"
size=$(du -h "$initrd_out" | cut -f1)
# Into place in one rename; a build that lost the race to an identical one drops its own.
[ "$force" = 0 ] || rm -rf "$image"
if ! mv -T "$out" "$image" 2>/dev/null; then say "another build wrote $image first"; fi
say "done: $image (initrd $size)"
echo "image: $image"
