# The bnxt guest's job steps (sourced by /init): the functions a job script written by
# scripts/interop/job-script.ts calls, run on bnxt_re0 against a peer on the far end of the
# NIC's cable (rig-bnxt on the host). Same protocol as the rxe guest's (scripts/interop/
# guest-init.sh), with the marker prefix BNXT-:
#   BNXT-JOB-START / BNXT-JOB-DONE status=N
#   BNXT-STEP-BEGIN id / BNXT-STEP-WAIT id (the guest server listens: the host may connect)
#   BNXT-OUT id <line> / BNXT-STEP-END id status=N
# Needs from /init: IFNAME (bnxt's netdev), GID_INDEX (its RoCE v2 GID), IP (iproute2's ip).
RDMA_DEV=bnxt_re0
PP_PORT=18515
PP_FLAGS=
# Where the guest's clients reach the host's servers: QEMU user networking's host address,
# which slirp maps to the host's 127.0.0.1 (the job sets the port).
PP_SERVER_PORT=$PP_PORT

# add_peer IP MAC: a static neighbour entry; the host's software NIC answers no ARP.
add_peer() {
  $IP neigh replace "$1" lladdr "$2" dev "$IFNAME" nud permanent || echo "BNXT-GUEST fail add_peer $1 $2"
}

# wait_listen PORT PID: until a TCP socket listens on PORT, at most 20 s.
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

step_out() {
  while IFS= read -r line; do echo "BNXT-OUT $1 $line"; done < "$2"
}

# pp_server ID SIZE ITERS TIMEOUT_S: ibv_rc_pingpong as the server; the host's rig-bnxt
# pingpong is the client (QEMU's hostfwd to PP_PORT).
pp_server() {
  echo "BNXT-STEP-BEGIN $1"
  timeout -s KILL "$4" ibv_rc_pingpong -d $RDMA_DEV -g "$GID_INDEX" -s "$2" -n "$3" -m 1024 $PP_FLAGS \
    -p $PP_PORT > "/tmp/$1.out" 2>&1 &
  pid=$!
  if wait_listen $PP_PORT $pid; then echo "BNXT-STEP-WAIT $1"; else echo "BNXT-OUT $1 (server did not listen)"; fi
  wait $pid
  st=$?
  step_out "$1" "/tmp/$1.out"
  echo "BNXT-STEP-END $1 status=$st"
}

# pp_client ID SIZE ITERS TIMEOUT_S SERVER: ibv_rc_pingpong as the client of the host's server.
pp_client() {
  echo "BNXT-STEP-BEGIN $1"
  echo "BNXT-STEP-WAIT $1"
  timeout -s KILL "$4" ibv_rc_pingpong -d $RDMA_DEV -g "$GID_INDEX" -s "$2" -n "$3" -m 1024 $PP_FLAGS \
    -p $PP_SERVER_PORT "$5" > "/tmp/$1.out" 2>&1
  st=$?
  step_out "$1" "/tmp/$1.out"
  echo "BNXT-STEP-END $1 status=$st"
}

# pt_payload: perftest's --payload_file_path option for the bytes the job names in PT_PAYLOAD
# (comma-separated DWORDs, scripts/bnxt-guest/run.ts), so its messages are known byte for byte.
pt_payload() {
  [ -n "$PT_PAYLOAD" ] || return 0
  printf '%s' "$PT_PAYLOAD" > /tmp/pt-payload.txt && echo "--payload_file_path=/tmp/pt-payload.txt"
}

# pt_server ID TOOL SIZE ITERS QPS TIMEOUT_S: perftest's TOOL (ib_send_lat) as the server, with QPS
# queue pairs (-q, given only for more than one: perftest 6.06 refuses -q in latency tests); the
# host's rig-bnxt perf is the client.
pt_server() {
  echo "BNXT-STEP-BEGIN $1"
  qflag=""; [ "$5" != 1 ] && qflag="-q $5"
  timeout -s KILL "$6" "$2" -d $RDMA_DEV -x "$GID_INDEX" -F -s "$3" -n "$4" $qflag $(pt_payload) -p $PP_PORT \
    > "/tmp/$1.out" 2>&1 &
  pid=$!
  if wait_listen $PP_PORT $pid; then echo "BNXT-STEP-WAIT $1"; else echo "BNXT-OUT $1 (server did not listen)"; fi
  wait $pid
  st=$?
  step_out "$1" "/tmp/$1.out"
  echo "BNXT-STEP-END $1 status=$st"
}

# pt_client ID TOOL SIZE ITERS QPS TIMEOUT_S SERVER: perftest's TOOL as the client of the host's server.
pt_client() {
  echo "BNXT-STEP-BEGIN $1"
  echo "BNXT-STEP-WAIT $1"
  qflag=""; [ "$5" != 1 ] && qflag="-q $5"
  timeout -s KILL "$6" "$2" -d $RDMA_DEV -x "$GID_INDEX" -F -s "$3" -n "$4" $qflag $(pt_payload) \
    -p $PP_SERVER_PORT "$7" > "/tmp/$1.out" 2>&1
  st=$?
  step_out "$1" "/tmp/$1.out"
  echo "BNXT-STEP-END $1 status=$st"
}

# run_cmd ID CMD...: any command, its output tagged with the step.
run_cmd() {
  id=$1; shift
  echo "BNXT-STEP-BEGIN $id"
  "$@" > "/tmp/$id.out" 2>&1
  st=$?
  step_out "$id" "/tmp/$id.out"
  echo "BNXT-STEP-END $id status=$st"
}

# kernel_log ID: what bnxt_en, bnxt_re and the RDMA core logged so far.
kernel_log() {
  dmesg | grep -iE 'bnxt|infiniband|rdma' > "/tmp/$1.dmesg"
  echo "BNXT-STEP-BEGIN $1"
  step_out "$1" "/tmp/$1.dmesg"
  echo "BNXT-STEP-END $1 status=0"
}

# counters ID: bnxt_re's counters need QUERY_ROCE_STATS, which the software NIC does not answer.
counters() {
  echo "BNXT-STEP-BEGIN $1"
  echo "BNXT-OUT $1 (no counters: QUERY_ROCE_STATS is not modelled)"
  echo "BNXT-STEP-END $1 status=1"
}

# run_job FILE: the job the host handed over (QEMU -fw_cfg), if any.
run_job() {
  [ -r "$1" ] || return 0
  cp "$1" /tmp/job.sh
  echo "BNXT-JOB-START"
  . /tmp/job.sh
  echo "BNXT-JOB-DONE status=$?"
}
