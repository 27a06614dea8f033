#!/bin/sh
# /init of the soft-RoCE guest (busybox sh). Brings up rxe0 on the data NIC, then sources the
# job that the host handed in with -fw_cfg name=opt/rxe/job and powers off. Everything the host
# waits for is a marker line on the serial console (ttyS0):
#
#   RXE-READY gid_index=N            rxe0 is ACTIVE on the data NIC
#   RXE-JOB-START / RXE-JOB-DONE status=N
#   RXE-STEP-BEGIN id                a job step starts
#   RXE-STEP-WAIT id                 the guest side is listening: the host side may start now
#   RXE-OUT id <line>                the step's program output, line by line
#   RXE-STEP-END id status=N
#   RXE-COUNTERS-BEGIN id / RXE-COUNTER id name value / RXE-COUNTERS-END id   (inside a step)
#   RXE-FAIL <reason>                bring-up failed; the guest powers off
#
# Facts: docs/interop.md ("The guest").
export PATH=/usr/local/bin:/bin:/sbin
/bin/busybox --install -s /bin
# Debian's busybox-static runs its own applets before anything on PATH (standalone shell), so
# iproute2's ip (needed for `ip neigh ... nud permanent`) is called by its full path.
IP=/usr/local/bin/ip

DATA_MAC=52:54:00:77:00:01
CTL_MAC=52:54:00:00:00:01
DATA_IP=10.77.0.1
DATA_MTU=1500
PP_PORT=18515
PP_FLAGS=
FW_CFG_JOB=/sys/firmware/qemu_fw_cfg/by_name/opt/rxe/job/raw

off() { sync; poweroff -f; sleep 5; echo o > /proc/sysrq-trigger; }
fail() { echo "RXE-FAIL $*"; off; }

mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /dev/pts /tmp && mount -t tmpfs tmp /tmp
exec </dev/null

while read -r module; do
  insmod "/modules/$module" || fail "insmod $module"
done < /modules/order

# Network interfaces by MAC (PCI order decides eth0/eth1; do not rely on it).
if_by_mac() {
  for dev in /sys/class/net/*; do
    [ "$(cat "$dev/address")" = "$1" ] && { basename "$dev"; return 0; }
  done
  return 1
}
i=0
until DATA_IF=$(if_by_mac $DATA_MAC) && CTL_IF=$(if_by_mac $CTL_MAC); do
  i=$((i + 1)); [ $i -le 50 ] || fail "no NIC with MAC $DATA_MAC / $CTL_MAC"
  sleep 0.1
done

$IP link set lo up
# Control NIC: slirp (restrict=on); the host reaches the guest only through hostfwd.
$IP link set "$CTL_IF" up
$IP addr add 10.0.2.15/24 dev "$CTL_IF"
$IP route add default via 10.0.2.2 dev "$CTL_IF"
# Data NIC: the RoCE segment. IPv6 off keeps it quiet (no ND/MLD frames to the peer).
sysctl -qw "net.ipv6.conf.$DATA_IF.disable_ipv6=1"
$IP link set "$DATA_IF" mtu $DATA_MTU
$IP link set "$DATA_IF" up
$IP addr add $DATA_IP/24 dev "$DATA_IF"
rdma link add rxe0 type rxe netdev "$DATA_IF" || fail "rdma link add rxe0"

# The RoCE v2 GID of DATA_IP (::ffff:10.77.0.1); index 1 with IPv6 off, but look it up.
gid_want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' $(echo $DATA_IP | tr . ' '))
GID_INDEX=
i=0
while [ -z "$GID_INDEX" ] && [ $i -le 50 ]; do
  for n in 0 1 2 3 4 5 6 7; do
    [ "$(cat /sys/class/infiniband/rxe0/ports/1/gids/$n 2>/dev/null)" = "$gid_want" ] && { GID_INDEX=$n; break; }
  done
  [ -n "$GID_INDEX" ] || { i=$((i + 1)); sleep 0.1; }
done
[ -n "$GID_INDEX" ] || fail "no GID $gid_want on rxe0"
state=$(cat /sys/class/infiniband/rxe0/ports/1/state)
case "$state" in *ACTIVE*) ;; *) fail "rxe0 port state $state" ;; esac
echo "RXE-READY gid_index=$GID_INDEX data_if=$DATA_IF uptime=$(cut -d' ' -f1 /proc/uptime)"

# ---- helpers for job scripts ----------------------------------------------------------------

# add_peer IP MAC: a static neighbour entry; a NIC's RoCE engine does not answer ARP.
add_peer() {
  $IP neigh replace "$1" lladdr "$2" dev "$DATA_IF" nud permanent || fail "ip neigh replace $1 lladdr $2"
}

# wait_listen PORT PID: until a TCP socket listens on PORT (IPv4 or IPv6), at most 20 s.
wait_listen() {
  hex=$(printf '%04X' "$1")
  n=0
  while [ $n -lt 200 ]; do
    cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | grep -qE ":$hex [0-9A-F]+:0000 0A" && return 0
    kill -0 "$2" 2>/dev/null || return 1
    n=$((n + 1)); sleep 0.1
  done
  return 1
}

# step_out ID FILE: the program's output, each line tagged with the step.
step_out() {
  while IFS= read -r line; do echo "RXE-OUT $1 $line"; done < "$2"
}

# pp_server ID SIZE ITERS TIMEOUT_S: ibv_rc_pingpong as the server; the host is the client
# (through hostfwd to PP_PORT). RXE-STEP-WAIT is printed once the server listens.
pp_server() {
  echo "RXE-STEP-BEGIN $1"
  timeout -s KILL "$4" ibv_rc_pingpong -d rxe0 -g "$GID_INDEX" -s "$2" -n "$3" -m 1024 $PP_FLAGS -p $PP_PORT \
    > "/tmp/$1.out" 2>&1 &
  pid=$!
  if wait_listen $PP_PORT $pid; then echo "RXE-STEP-WAIT $1"; else echo "RXE-OUT $1 (server did not listen)"; fi
  wait $pid
  st=$?
  step_out "$1" "/tmp/$1.out"
  echo "RXE-STEP-END $1 status=$st"
}

# pp_client ID SIZE ITERS TIMEOUT_S SERVER: ibv_rc_pingpong as the client of SERVER (the host's
# server, reached through guestfwd at 10.0.2.100).
pp_client() {
  echo "RXE-STEP-BEGIN $1"
  echo "RXE-STEP-WAIT $1"
  timeout -s KILL "$4" ibv_rc_pingpong -d rxe0 -g "$GID_INDEX" -s "$2" -n "$3" -m 1024 $PP_FLAGS -p $PP_PORT "$5" \
    > "/tmp/$1.out" 2>&1
  st=$?
  step_out "$1" "/tmp/$1.out"
  echo "RXE-STEP-END $1 status=$st"
}

# pt_server ID TOOL SIZE ITERS QPS TIMEOUT_S: perftest's TOOL (ib_send_lat, ib_send_bw) as the
# server, with QPS queue pairs (-q); the host's rig-bnxt perf is the client (through hostfwd to PP_PORT).
# perftest 6.06 refuses -q in latency tests even for 1 QP, so -q is given only for more than one.
pt_server() {
  echo "RXE-STEP-BEGIN $1"
  qflag=""; [ "$5" != 1 ] && qflag="-q $5"
  timeout -s KILL "$6" "$2" -d rxe0 -x "$GID_INDEX" -F -s "$3" -n "$4" $qflag -p $PP_PORT > "/tmp/$1.out" 2>&1 &
  pid=$!
  if wait_listen $PP_PORT $pid; then echo "RXE-STEP-WAIT $1"; else echo "RXE-OUT $1 (server did not listen)"; fi
  wait $pid
  st=$?
  step_out "$1" "/tmp/$1.out"
  echo "RXE-STEP-END $1 status=$st"
}

# pt_client ID TOOL SIZE ITERS QPS TIMEOUT_S SERVER: perftest's TOOL as the client of SERVER (the
# host's rig-bnxt perf server, reached through guestfwd), with QPS queue pairs.
pt_client() {
  echo "RXE-STEP-BEGIN $1"
  echo "RXE-STEP-WAIT $1"
  qflag=""; [ "$5" != 1 ] && qflag="-q $5"
  timeout -s KILL "$6" "$2" -d rxe0 -x "$GID_INDEX" -F -s "$3" -n "$4" $qflag -p $PP_PORT "$7" > "/tmp/$1.out" 2>&1
  st=$?
  step_out "$1" "/tmp/$1.out"
  echo "RXE-STEP-END $1 status=$st"
}

# pp_loopback ID SIZE ITERS TIMEOUT_S: server and client both inside the guest on rxe0 (rxe
# loops the packets back without the wire); checks the guest itself and the harness.
pp_loopback() {
  echo "RXE-STEP-BEGIN $1"
  port=$((PP_PORT + 1))
  timeout -s KILL "$4" ibv_rc_pingpong -d rxe0 -g "$GID_INDEX" -s "$2" -n "$3" -m 1024 $PP_FLAGS -p $port \
    > "/tmp/$1.server" 2>&1 &
  spid=$!
  st=1
  if wait_listen $port $spid; then
    timeout -s KILL "$4" ibv_rc_pingpong -d rxe0 -g "$GID_INDEX" -s "$2" -n "$3" -m 1024 $PP_FLAGS -p $port $DATA_IP \
      > "/tmp/$1.client" 2>&1
    st=$?
  fi
  wait $spid
  sst=$?
  [ $st = 0 ] && st=$sst
  step_out "$1" "/tmp/$1.server"
  step_out "$1.client" "/tmp/$1.client"
  echo "RXE-STEP-END $1 status=$st"
}

# run_cmd ID CMD...: any command, its output tagged with the step.
run_cmd() {
  id=$1; shift
  echo "RXE-STEP-BEGIN $id"
  "$@" > "/tmp/$id.out" 2>&1
  st=$?
  step_out "$id" "/tmp/$id.out"
  echo "RXE-STEP-END $id status=$st"
}

# counters ID: every rxe hardware counter (sent/received packets, retries, NAKs, ...).
counters() {
  echo "RXE-STEP-BEGIN $1"
  echo "RXE-COUNTERS-BEGIN $1"
  for f in /sys/class/infiniband/rxe0/ports/1/hw_counters/*; do
    echo "RXE-COUNTER $1 $(basename "$f") $(cat "$f")"
  done
  echo "RXE-COUNTERS-END $1"
  echo "RXE-STEP-END $1 status=0"
}

# kernel_log ID: the kernel's rxe / ICRC messages (a bad ICRC is only a warning in dmesg).
kernel_log() {
  dmesg | grep -iE 'rxe|icrc|infiniband|rdma' > "/tmp/$1.dmesg"
  echo "RXE-STEP-BEGIN $1"
  step_out "$1" "/tmp/$1.dmesg"
  echo "RXE-STEP-END $1 status=0"
}

# ---- the job ----------------------------------------------------------------------------------
[ -r $FW_CFG_JOB ] || fail "no job at $FW_CFG_JOB"
cp $FW_CFG_JOB /tmp/job.sh
echo "RXE-JOB-START"
. /tmp/job.sh
echo "RXE-JOB-DONE status=$?"
off
