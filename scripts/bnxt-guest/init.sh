#!/bin/sh
# /init of the bnxt guest (dash; busybox applets behind the real tools on PATH). Loads bnxt_en
# (and bnxt_re when the kernel command line says BNXT_RE=1) against the software NIC served over
# vfio-user (behind a PCIe root port: 01:00.0), brings the netdev up and reports on the serial console. Marker lines the
# host reads:
#   BNXT-GUEST step <name>            a step starts
#   BNXT-GUEST netdev <ifname> <mac>  bnxt_en registered a netdev
#   BNXT-GUEST ok <name> / BNXT-GUEST fail <name> <why>
#   BNXT-GUEST done
# and, for a job the host hands over with -fw_cfg (steps.sh), the BNXT-JOB/STEP markers.
# The kernel log dump is raw (dmesg -r: each line starts with <level>), so the host can tell
# errors and warnings from the rest.
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
IP=/usr/bin/ip
CTL_MAC=52:54:00:00:00:01
FW_CFG_JOB=/sys/firmware/qemu_fw_cfg/by_name/opt/rig/job/raw
step() { echo "BNXT-GUEST step $1"; }
off() { echo "BNXT-GUEST done"; sync; poweroff -f; sleep 5; echo o > /proc/sysrq-trigger; }
dump() {
  echo "BNXT-GUEST dmesg-begin"
  dmesg -r | grep -iE 'bnxt|14e4|0000:01:00|infiniband|roce|rdma|ib_' | tail -300
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
# The control NIC (QEMU user networking), when there is one: the host's TCP exchanges. No default
# route: the guest reaches 10.0.2.2 (the host's 127.0.0.1) and nothing beyond.
for dev in /sys/class/net/*; do
  [ "$(cat "$dev/address" 2>/dev/null)" = "$CTL_MAC" ] || continue
  ip link set "$(basename "$dev")" up
  ip addr add 10.0.2.15/24 dev "$(basename "$dev")"
  echo "BNXT-GUEST control $(basename "$dev")"
done
if [ -n "$PEER_IP" ]; then
  step ping
  if ping -c 3 -W 2 "$PEER_IP"; then echo "BNXT-GUEST ok ping"; else echo "BNXT-GUEST fail ping"; fi
fi
if [ "$(arg BNXT_RE)" = 1 ]; then
  step ibv_devinfo
  ibv_devinfo -v || echo "BNXT-GUEST fail ibv_devinfo"
fi
# RC_LOOPBACK=1: ibv_rc_pingpong server and client in this guest on bnxt_re0, through the
# model's port on a looped cable (the exchange of QP numbers goes over lo).
# The index of the RoCE v2 GID of GUEST_IP (::ffff:a.b.c.d) on bnxt_re0 (bnxt_re adds a v1 and a
# v2 GID per address), once bnxt_re has added it.
gid=
if [ "$(arg BNXT_RE)" = 1 ] && [ -n "$GUEST_IP" ]; then
  want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' $(echo "$GUEST_IP" | tr . ' '))
  i=0
  while [ -z "$gid" ] && [ $i -lt 50 ]; do
    for n in 0 1 2 3 4 5 6 7; do
      [ "$(cat /sys/class/infiniband/bnxt_re0/ports/1/gids/$n 2>/dev/null)" = "$want" ] || continue
      [ "$(cat /sys/class/infiniband/bnxt_re0/ports/1/gid_attrs/types/$n 2>/dev/null)" = "RoCE v2" ] && gid=$n
    done
    [ -n "$gid" ] || { i=$((i + 1)); sleep 0.1; }
  done
  [ -n "$gid" ] || echo "BNXT-GUEST fail gid no RoCE v2 GID for $GUEST_IP"
fi
if [ "$(arg RC_LOOPBACK)" = 1 ] && [ -n "$GUEST_IP" ]; then
  step rc-loopback
  if [ -z "$gid" ]; then echo "BNXT-GUEST fail rc-loopback no RoCE v2 GID for $GUEST_IP"; else
    echo "BNXT-GUEST gid $gid"
    ibv_rc_pingpong -d bnxt_re0 -g "$gid" -n 5 -s 64 > /tmp/pp-server.log 2>&1 &
    sleep 1
    if ibv_rc_pingpong -d bnxt_re0 -g "$gid" -n 5 -s 64 127.0.0.1; then
      echo "BNXT-GUEST ok rc-loopback"
    else
      echo "BNXT-GUEST fail rc-loopback client"
    fi
    sleep 1
    cat /tmp/pp-server.log
    step send-lat-loopback
    ib_send_lat -d bnxt_re0 -x "$gid" -n 20 -s 64 > /tmp/lat-server.log 2>&1 &
    sleep 1
    if ib_send_lat -d bnxt_re0 -x "$gid" -n 20 -s 64 127.0.0.1; then
      echo "BNXT-GUEST ok send-lat-loopback"
    else
      echo "BNXT-GUEST fail send-lat-loopback client"
    fi
    sleep 1
    cat /tmp/lat-server.log
  fi
fi
# A job from the host (steps.sh): RoCE with rig-bnxt on the far end of the cable.
if [ -r "$FW_CFG_JOB" ]; then
  IFNAME=$ifname
  GID_INDEX=$gid
  . /steps.sh
  step job
  run_job "$FW_CFG_JOB"
fi
dump
off
