#!/bin/sh
# /init of the VFIO bnxt guest (dash; busybox applets behind the real tools on PATH): a q35 guest
# with a virtual IOMMU whose PCI function 00:04.0 is the software NIC served over vfio-user. It
# brings up the control NIC (QEMU user networking: the TCP exchanges of pingpong and perf), then
# runs the job the run put in the initrd (/job.sh: rig-bnxt's own driver through this kernel's
# vfio-pci, steps.sh's functions), then the second one (/peer-job.sh: against the second guest),
# dumps the kernel log and powers off. Nothing binds the NIC here: the job does, with
# scripts/bind-vfio.sh, as on a host. Marker lines the host reads:
#   BNXT-GUEST device <address> vendor=<id> device=<id> group=<n|none> driver=<name|none>
#   BNXT-GUEST control <ifname>
#   BNXT-GUEST dmesg-begin / dmesg-end   the kernel log between them, raw (dmesg -r: <level> first)
#   BNXT-GUEST done
# and the job markers of steps.sh (BNXT-JOB-*, BNXT-STEP-*, BNXT-OUT; PEER-* for the second job).
export PATH=/usr/bin:/usr/sbin:/usr/local/busybox
/usr/local/busybox/busybox --install -s /usr/local/busybox
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
exec </dev/null
CTL_MAC=52:54:00:00:00:01
off() { echo "BNXT-GUEST done"; sync; poweroff -f; sleep 5; echo o > /proc/sysrq-trigger; }
echo "BNXT-GUEST boot uptime=$(cut -d' ' -f1 /proc/uptime)"

# The control NIC.
modprobe virtio_net || echo "BNXT-GUEST fail modprobe virtio_net"
i=0
while [ $i -lt 50 ]; do
  for dev in /sys/class/net/*; do
    [ "$(cat "$dev/address" 2>/dev/null)" = "$CTL_MAC" ] && ctl=$(basename "$dev")
  done
  [ -n "${ctl:-}" ] && break
  i=$((i + 1)); sleep 0.1
done
ip link set lo up
if [ -n "${ctl:-}" ]; then
  ip link set "$ctl" up
  ip addr add 10.0.2.15/24 dev "$ctl"
  echo "BNXT-GUEST control $ctl"
else
  echo "BNXT-GUEST fail control no NIC with $CTL_MAC"
fi

# The served NIC: the Broadcom function.
DEV=
for d in /sys/bus/pci/devices/*; do
  [ "$(cat "$d/vendor")" = 0x14e4 ] && DEV=$(basename "$d")
done
if [ -n "$DEV" ]; then
  d=/sys/bus/pci/devices/$DEV
  group=none; [ -e "$d/iommu_group" ] && group=$(basename "$(readlink "$d/iommu_group")")
  driver=none; [ -e "$d/driver" ] && driver=$(basename "$(readlink "$d/driver")")
  echo "BNXT-GUEST device $DEV vendor=$(cat "$d/vendor") device=$(cat "$d/device") group=$group driver=$driver"
else
  echo "BNXT-GUEST fail device no function of vendor 0x14e4"
fi

. /steps.sh
M=BNXT-
run_job /job.sh
M=PEER-
run_job /peer-job.sh
echo "BNXT-GUEST dmesg-begin"
dmesg -r
echo "BNXT-GUEST dmesg-end"
off
