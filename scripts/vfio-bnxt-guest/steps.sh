# The VFIO bnxt guest's job steps (sourced by /init): the functions a job script written by
# scripts/interop/job-script.ts calls (the bnxt guest's names: pp_server, pt_client, ...), run with
# rig-bnxt's own driver on the served NIC through this kernel's vfio-pci ($DEV), against a peer
# on the far end of the NIC's cable: rig-bnxt on the host, or the second guest's bnxt_re. Same
# marker protocol as the bnxt guest's steps.sh, with the prefix in $M (BNXT- for /job.sh, PEER-
# for /peer-job.sh):
#   ${M}JOB-START / ${M}JOB-DONE status=N
#   ${M}STEP-BEGIN id / ${M}STEP-WAIT id (this side's server listens: the peer may connect)
#   ${M}OUT id <line> / ${M}STEP-END id status=N
# The job sets NIC_IP (the NIC's IPv4 address: its GID) and calls add_peer first.
M=${M:-BNXT-}
PP_PORT=18515
PP_SERVER_PORT=$PP_PORT
PP_FLAGS=
PEER_MAC=
RIG=/usr/bin/rig-bnxt
# The least time a step of rig-bnxt in this guest gets, whatever the job says (job-script.ts's
# limits suit the kernel's drivers): each starts Node and brings the NIC up under TCG, which took
# over 30 s at a load of 16 on 2 cores.
STEP_LIMIT_S=300
at_least() { if [ "$1" -gt "$STEP_LIMIT_S" ]; then echo "$1"; else echo "$STEP_LIMIT_S"; fi; }

# add_peer IP MAC: the peer's MAC, for rig-bnxt's --mac (perftest's and ibv_rc_pingpong's
# exchanges carry the peer's GID, not its MAC, and the software NIC answers no ARP).
add_peer() { PEER_MAC=$2; }

# wait_listen PORT PID: until a TCP socket listens on PORT (or PID is gone), at most 3000 looks.
wait_listen() {
  hex=$(printf '%04X' "$1")
  n=0
  while [ $n -lt 3000 ]; do
    cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | grep -qE ":$hex [0-9A-F]+:0000 0A" && return 0
    kill -0 "$2" 2>/dev/null || return 1
    n=$((n + 1)); sleep 0.1
  done
  return 1
}

step_out() {
  while IFS= read -r line; do echo "${M}OUT $1 $line"; done < "$2"
}

# serve_step ID TIMEOUT_S CMD...: CMD in the background as a server on PP_PORT, WAIT once it listens.
serve_step() {
  id=$1; limit=$(at_least "$2"); shift 2
  echo "${M}STEP-BEGIN $id"
  timeout -s KILL "$limit" "$@" > "/tmp/$id.out" 2>&1 &
  pid=$!
  if wait_listen $PP_PORT $pid; then echo "${M}STEP-WAIT $id"; else echo "${M}OUT $id (server did not listen)"; fi
  wait $pid
  st=$?
  step_out "$id" "/tmp/$id.out"
  echo "${M}STEP-END $id status=$st"
}

# client_step ID TIMEOUT_S CMD...: CMD as a client (its server is the peer's and listens already).
client_step() {
  id=$1; limit=$(at_least "$2"); shift 2
  echo "${M}STEP-BEGIN $id"
  echo "${M}STEP-WAIT $id"
  timeout -s KILL "$limit" "$@" > "/tmp/$id.out" 2>&1
  st=$?
  step_out "$id" "/tmp/$id.out"
  echo "${M}STEP-END $id status=$st"
}

nic_flags() { echo "-d $DEV --ipv4 $NIC_IP --mac $PEER_MAC"; }

# pp_server ID SIZE ITERS TIMEOUT_S / pp_client ID SIZE ITERS TIMEOUT_S SERVER: rig-bnxt pingpong.
pp_server() { serve_step "$1" "$4" $RIG pingpong $(nic_flags) -s "$2" -n "$3" -p $PP_PORT; }
pp_client() { client_step "$1" "$4" $RIG pingpong $(nic_flags) -s "$2" -n "$3" -p $PP_SERVER_PORT "$5"; }

# pt_server ID TOOL SIZE ITERS QPS TIMEOUT_S / pt_client ... SERVER: rig-bnxt perf for perftest's
# TOOL (ib_send_lat -> perf send_lat).
pt_server() {
  serve_step "$1" "$6" $RIG perf "${2#ib_}" $(nic_flags) -s "$3" -n "$4" -q "$5" -p $PP_PORT
}
pt_client() {
  client_step "$1" "$6" $RIG perf "${2#ib_}" $(nic_flags) -s "$3" -n "$4" -q "$5" -p $PP_SERVER_PORT "$7"
}

# run_cmd ID CMD...: any command (or function of this file), its output tagged with the step.
run_cmd() {
  id=$1; shift
  echo "${M}STEP-BEGIN $id"
  "$@" > "/tmp/$id.out" 2>&1
  st=$?
  step_out "$id" "/tmp/$id.out"
  echo "${M}STEP-END $id status=$st"
}

# as_nobody CMD...: CMD (plain words) as the user nobody, who is not root (busybox su: root needs
# no password).
as_nobody() { su -s /bin/sh -c "$*" nobody; }

# refused CMD...: CMD must fail (what a user meets before the machine is ready): prints its exit
# status, and fails itself if CMD did not.
refused() {
  "$@"
  st=$?
  echo "(exit status $st)"
  [ $st -ne 0 ]
}

# group_node: the device node of $DEV's IOMMU group.
group_node() { echo "/dev/vfio/$(basename "$(readlink "/sys/bus/pci/devices/$DEV/iommu_group")")"; }

# own_group_node USER: hands the group's node to USER (bind-vfio.sh's advice for running without root).
own_group_node() { chown "$1" "$(group_node)" && ls -l /dev/vfio; }

# device_state: the function's driver, IOMMU group and the group's members, from sysfs.
device_state() {
  d=/sys/bus/pci/devices/$DEV
  echo "driver $(basename "$(readlink "$d/driver")")"
  g=$(basename "$(readlink "$d/iommu_group")")
  echo "group $g members $(ls "/sys/kernel/iommu_groups/$g/devices" | tr '\n' ' ')"
  ls -l /dev/vfio
}

# api_example: the README's API example on $DEV (/opt/app/api-example.mjs, written by the run),
# its driver trace in /tmp/api-trace.jsonl (RIG_BNXT_TRACE).
api_example() { cd /opt/app && RIG_BNXT_TRACE=/tmp/api-trace.jsonl node api-example.mjs; }

# transfer_check: READs and SENDs across pages on $DEV, byte for byte (/opt/app/transfer-check.mjs).
transfer_check() { cd /opt/app && node transfer-check.mjs; }

# print_file FILE: FILE gzip-compressed in base64 lines (a trace back to the host over the console).
print_file() { gzip -c "$1" | base64; }

# gate NAME: waits until the host opens gate NAME (its gate server at 10.0.2.2:$GATE_PORT answers
# "go"), at most 600 s: a step that must not start before the other guest's side is ready.
gate() {
  n=0
  while [ $n -lt 1200 ]; do
    [ "$(echo "$1" | nc 10.0.2.2 "$GATE_PORT" 2>/dev/null)" = go ] && return 0
    n=$((n + 1)); sleep 0.5
  done
  echo "${M}OUT gate $1 never opened"
  return 1
}

# kernel_log ID: what VFIO, the IOMMU and the PCI core logged so far.
kernel_log() {
  dmesg | grep -iE 'vfio|iommu|dmar|0000:00:04' > "/tmp/$1.dmesg"
  echo "${M}STEP-BEGIN $1"
  step_out "$1" "/tmp/$1.dmesg"
  echo "${M}STEP-END $1 status=0"
}

# run_job FILE: a job the run put in the initrd, if any.
run_job() {
  [ -r "$1" ] || return 0
  echo "${M}JOB-START"
  . "$1"
  echo "${M}JOB-DONE status=$?"
}
