#!/bin/sh
# /init of the bnxt guest (dash; busybox applets behind the real tools on PATH). Loads bnxt_en
# (and bnxt_re when the kernel command line says BNXT_RE=1) against the software NIC served over
# vfio-user (behind a PCIe root port: 01:00.0), brings the netdev up and reports on the serial console. Marker lines the
# host reads:
#   BNXT-GUEST step <name>            a step starts
#   BNXT-GUEST netdev <ifname> <mac>  bnxt_en registered a netdev
#   BNXT-GUEST ok <name> / BNXT-GUEST fail <name> <why>
#   BNXT-GUEST done
export PATH=/usr/bin:/usr/sbin:/usr/local/busybox
/usr/local/busybox/busybox --install -s /usr/local/busybox
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
exec </dev/null
arg() { sed -nE "s/.*(^| )$1=([^ ]*).*/\2/p" /proc/cmdline; }
WAIT=$(arg WAIT); WAIT=${WAIT:-5}
PEER_IP=$(arg PEER_IP)
GUEST_IP=$(arg GUEST_IP)
step() { echo "BNXT-GUEST step $1"; }
off() { echo "BNXT-GUEST done"; sync; poweroff -f; sleep 5; echo o > /proc/sysrq-trigger; }
dump() {
  echo "BNXT-GUEST dmesg-begin"
  dmesg | grep -iE 'bnxt|14e4|0000:01:00|infiniband|roce' | tail -200
  echo "BNXT-GUEST dmesg-end"
}
lspci -nn -d 14e4:
step insmod-bnxt_en
while read -r module; do
  case "$module" in
    bnxt_re.ko|ib_*|rdma_*) [ "$(arg BNXT_RE)" = 1 ] || continue ;;
  esac
  insmod "/modules/$module" || echo "BNXT-GUEST fail insmod $module"
done < /modules/order
i=0; ifname=
while [ $i -lt $((WAIT * 10)) ]; do
  for dev in /sys/class/net/*; do
    [ "$(cat "$dev/device/vendor" 2>/dev/null)" = 0x14e4 ] && ifname=$(basename "$dev")
  done
  [ -n "$ifname" ] && break
  i=$((i + 1)); sleep 0.1
done
if [ -z "$ifname" ]; then echo "BNXT-GUEST fail netdev none after ${WAIT}s"; dump; off; fi
echo "BNXT-GUEST netdev $ifname $(cat /sys/class/net/$ifname/address)"
step link-up
ip link set lo up
ip link set "$ifname" up || echo "BNXT-GUEST fail link-up ip link set up"
sleep 1
ip -d link show "$ifname"
[ -n "$GUEST_IP" ] && ip addr add "$GUEST_IP/24" dev "$ifname"
if [ -n "$PEER_IP" ]; then
  step ping
  if ping -c 3 -W 2 "$PEER_IP"; then echo "BNXT-GUEST ok ping"; else echo "BNXT-GUEST fail ping"; fi
fi
if [ "$(arg BNXT_RE)" = 1 ]; then
  step ibv_devinfo
  ibv_devinfo -v || echo "BNXT-GUEST fail ibv_devinfo"
fi
dump
off
