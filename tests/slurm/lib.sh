# shellcheck shell=bash
# A private, real Slurm cluster (Debian's munge, slurmctld, slurmd 22.05) inside $SLURM_T, for
# tests that run real jobs through Prolog/Epilog and HealthCheckProgram. Sourced; bash with
# set -euo pipefail. Nothing outside $SLURM_T is read or written except free TCP ports on
# 127.0.0.1: the system's /etc/slurm and /etc/munge stay untouched.
#
# slurm_start reads (set before the call):
#   SLURM_T                     required: an empty folder made by the caller (mktemp -d)
#   SLURM_NODES                 1 (default) or more: slurmd daemons on this host, gwnode1..N
#   SLURM_GPUS, SLURM_GPU_TYPE  fake GPUs per node (char devices 195,N), default 2 and h100
#   SLURM_GRES_CONF             a gres.conf to use instead of the generated one
#   SLURM_PROLOG, SLURM_EPILOG  Prolog= / Epilog= programs
#   SLURM_HEALTHCHECK           HealthCheckProgram=, every SLURM_HEALTHCHECK_INTERVAL (5) s
#   SLURM_EXTRA_CONF            lines appended to slurm.conf
#   SLURM_CRED_EXPIRE           credential lifetime, default 10 s (see AuthInfo below)
#   SLURM_START_TIMEOUT         seconds to wait for the nodes to be idle, default 60
# and sets SLURM_NODE (the first node's name), SLURM_NODE_NAMES (all of them) and exports
# SLURM_CONF so that sinfo, sbatch, srun, scontrol and squeue talk to this cluster. On failure it
# prints the logs' tails and returns 1, leaving what it started for slurm_stop.
#
# What 22.05 does here, pinned by smoke_test.sh and nodes_test.sh:
# - Prolog and Epilog run in slurmd's folder ($SLURM_T) without PATH; they get SLURM_JOB_ID,
#   SLURM_JOB_USER/UID/GID, SLURMD_NODENAME, SLURM_NODELIST, SLURM_CONF and, with GPUs,
#   SLURM_JOB_GPUS, CUDA_VISIBLE_DEVICES, GPU_DEVICE_ORDINAL (no PrologFlags=Alloc needed).
# - A failing prolog drains the node ("Prolog error"); a batch job is requeued held, an srun
#   job ends (CANCELLED or FAILED) and srun fails.
# - HealthCheckProgram gets only SLURMD_NODENAME (no SLURM_CONF, no PATH); its exit status
#   drains nothing, an scontrol drain or resume it runs does.

# The start every Slurm test shares (call before anything else): skips (exit 77) without root or
# without one of the programs named; makes SLURM_T; on exit (and on ctest's TERM) stops the
# cluster, runs the test's own slurm_test_cleanup if it defines one, and removes SLURM_T.
slurm_test_begin() {  # PROGRAM...
  if ((EUID != 0)); then
    echo "SKIP: needs root (slurmd runs jobs as any user, munged and mknod need root)"
    exit 77
  fi
  local b
  for b in munged slurmctld slurmd scontrol "$@"; do
    if ! command -v "$b" >/dev/null; then
      echo "SKIP: $b missing (apt-get install munge slurmctld slurmd slurm-client)"
      exit 77
    fi
  done
  SLURM_T=$(mktemp -d)
  trap _slurm_test_end EXIT
  # ctest's timeout sends TERM: exit so that the EXIT trap stops the daemons.
  trap 'exit 143' TERM INT
}
_slurm_test_end() {
  slurm_stop
  if declare -F slurm_test_cleanup >/dev/null; then slurm_test_cleanup; fi
  rm -rf "$SLURM_T"
}

_slurm_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# The daemons' logs; their stderr (*.out) mostly repeats them, but alone has a fatal error in
# slurm.conf.
_slurm_logs() {
  local f
  for f in "$SLURM_T"/log/*.log "$SLURM_T"/log/*.out; do
    [[ -s $f ]] || continue
    if [[ $f == *.out && -e ${f%.out}.log ]] && ! grep -q 'fatal:' "$f"; then continue; fi
    echo "--- $f"
    tail -n 25 "$f"
  done
}

# Whether PID runs (a dead child of ours stays a zombie until waited for).
_slurm_alive() {
  [[ $(ps -o stat= -p "$1" 2>/dev/null) == [^Z]* ]]
}

slurm_start() {
  : "${SLURM_T:?SLURM_T must name an empty scratch folder}"
  local nodes=${SLURM_NODES:-1} gpus=${SLURM_GPUS:-2} type=${SLURM_GPU_TYPE:-h100}
  local host i n
  host=$(hostname -s)
  mkdir -p "$SLURM_T"/{log,run,state,spool,munge}
  # munged wants its socket's folder open to all (clients of any user); the key is 0400 anyway.
  chmod 0755 "$SLURM_T"/munge

  # munged is strict: key 0400, its own socket, pid, log and seed files; --force because root.
  dd if=/dev/urandom of="$SLURM_T/munge/munge.key" bs=1024 count=1 status=none
  chmod 0400 "$SLURM_T/munge/munge.key"
  # -F keeps munged our child, so a killed test (ctest's timeout) takes it along.
  munged -F --force --socket="$SLURM_T/munge/munge.socket" --key-file="$SLURM_T/munge/munge.key" \
    --pid-file="$SLURM_T/run/munged.pid" --log-file="$SLURM_T/log/munged.log" \
    --seed-file="$SLURM_T/munge/munged.seed" >>"$SLURM_T/log/munged.log" 2>&1 &
  echo $! >"$SLURM_T/run/munged.bgpid"
  local end=$((SECONDS + 10))
  until [[ -S $SLURM_T/munge/munge.socket ]]; do
    if ((SECONDS >= end)) || ! _slurm_alive "$(cat "$SLURM_T/run/munged.bgpid")"; then
      echo "slurm_start: munged did not come up"
      _slurm_logs
      return 1
    fi
    sleep 0.1
  done

  # Fake GPUs as character devices (major 195, nvidia's): slurmd logs "not a valid character or
  # block device" for a regular file. Each node gets its own folder; no two share a "GPU".
  SLURM_NODE_NAMES=()
  for ((n = 1; n <= nodes; n++)); do
    SLURM_NODE_NAMES+=("gwnode$n")
    mkdir -p "$SLURM_T/dev/gwnode$n" "$SLURM_T/spool/gwnode$n"
    for ((i = 0; i < gpus; i++)); do
      mknod "$SLURM_T/dev/gwnode$n/nvidia$i" c 195 "$i"
    done
  done
  SLURM_NODE=${SLURM_NODE_NAMES[0]}
  # The single-node case also gets the flat $SLURM_T/dev/nvidiaN names a caller's gres.conf may use.
  if ((nodes == 1)); then
    for ((i = 0; i < gpus; i++)); do
      mknod "$SLURM_T/dev/nvidia$i" c 195 "$i"
    done
  fi

  if [[ -n ${SLURM_GRES_CONF:-} ]]; then
    cp "$SLURM_GRES_CONF" "$SLURM_T/gres.conf"
  else
    : >"$SLURM_T/gres.conf"
    for n in "${SLURM_NODE_NAMES[@]}"; do
      if ((gpus > 0)); then
        echo "NodeName=$n Name=gpu Type=$type File=$SLURM_T/dev/$n/nvidia[0-$((gpus - 1))]" >>"$SLURM_T/gres.conf"
      fi
    done
  fi
  : >"$SLURM_T/plugstack.conf"

  # The hardware as slurmd -C sees it (CPUs, sockets, cores, RealMemory ...), so the node is not
  # drained for "Low RealMemory" and slurmd does not log a reconfigured socket/core layout.
  local hw
  hw=$(slurmd -C | sed -n '1s/^NodeName=[^ ]* //p')
  SLURM_CTLD_PORT=$(_slurm_free_port)

  cat >"$SLURM_T/slurm.conf" <<CONF
ClusterName=gwtest
# slurmctld insists on running on the host it is named after; clients reach it on 127.0.0.1.
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$SLURM_CTLD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# Both munge plugins take the socket from AuthInfo in 22.05. cred_expire (default 120 s) is also
# how long a requeued job (after a failed prolog) must wait before it may start again.
AuthInfo=socket=$SLURM_T/munge/munge.socket,cred_expire=${SLURM_CRED_EXPIRE:-10}
StateSaveLocation=$SLURM_T/state
SlurmdSpoolDir=$SLURM_T/spool/%n
SlurmctldPidFile=$SLURM_T/run/slurmctld.pid
SlurmdPidFile=$SLURM_T/run/slurmd-%n.pid
SlurmctldLogFile=$SLURM_T/log/slurmctld.log
SlurmdLogFile=$SLURM_T/log/slurmd-%n.log
MailProg=/bin/true
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$SLURM_T/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
ReturnToService=2
# Short timers: a test waits on them.
SlurmctldTimeout=10
SlurmdTimeout=10
MessageTimeout=5
TCPTimeout=2
KillWait=1
MinJobAge=300
InactiveLimit=0
Waittime=0
# The main scheduling loop runs every 60 s by default; a job released or requeued waits for it.
SchedulerParameters=sched_interval=1
CONF
  if [[ -n ${SLURM_PROLOG:-} ]]; then echo "Prolog=$SLURM_PROLOG" >>"$SLURM_T/slurm.conf"; fi
  if [[ -n ${SLURM_EPILOG:-} ]]; then echo "Epilog=$SLURM_EPILOG" >>"$SLURM_T/slurm.conf"; fi
  if [[ -n ${SLURM_HEALTHCHECK:-} ]]; then
    {
      echo "HealthCheckProgram=$SLURM_HEALTHCHECK"
      echo "HealthCheckInterval=${SLURM_HEALTHCHECK_INTERVAL:-5}"
      echo "HealthCheckNodeState=ANY"
    } >>"$SLURM_T/slurm.conf"
  fi
  local names
  names=$(IFS=,; echo "${SLURM_NODE_NAMES[*]}")
  for n in "${SLURM_NODE_NAMES[@]}"; do
    local gres=""
    if ((gpus > 0)); then gres="Gres=gpu:$type:$gpus"; fi
    # Several slurmd on one host work in this build: each has its own port, spool and devices;
    # slurmd -N says which node it is.
    echo "NodeName=$n NodeHostname=$host NodeAddr=127.0.0.1 Port=$(_slurm_free_port) $hw $gres State=UNKNOWN" >>"$SLURM_T/slurm.conf"
  done
  echo "PartitionName=gw Nodes=$names Default=YES MaxTime=INFINITE State=UP" >>"$SLURM_T/slurm.conf"
  if [[ -n ${SLURM_EXTRA_CONF:-} ]]; then echo "$SLURM_EXTRA_CONF" >>"$SLURM_T/slurm.conf"; fi
  export SLURM_CONF=$SLURM_T/slurm.conf

  # -D: foreground children again; -i ignores state left by nobody (a fresh StateSaveLocation).
  # In $SLURM_T, so that Prolog, Epilog and HealthCheckProgram never run in the caller's folder.
  (cd "$SLURM_T" && exec slurmctld -D -i -f "$SLURM_CONF") >>"$SLURM_T/log/slurmctld.out" 2>&1 &
  echo $! >"$SLURM_T/run/slurmctld.bgpid"
  for n in "${SLURM_NODE_NAMES[@]}"; do
    (cd "$SLURM_T" && exec slurmd -D -N "$n" -f "$SLURM_CONF") >>"$SLURM_T/log/slurmd-$n.out" 2>&1 &
    echo $! >"$SLURM_T/run/slurmd-$n.bgpid"
  done

  end=$((SECONDS + ${SLURM_START_TIMEOUT:-60}))
  local idle f
  while :; do
    idle=$(sinfo -h -N -t idle -o '%N' 2>/dev/null | sort -u | wc -l) || idle=0
    ((idle == nodes)) && return 0
    for f in "$SLURM_T"/run/slurm*.bgpid; do
      if ! _slurm_alive "$(cat "$f")"; then
        echo "slurm_start: $(basename "$f" .bgpid) exited"
        _slurm_logs
        return 1
      fi
    done
    if ((SECONDS >= end)); then
      echo "slurm_start: $idle of $nodes nodes idle after ${SLURM_START_TIMEOUT:-60} s"
      sinfo -N -o '%N %T %E' 2>&1 || true
      _slurm_logs
      return 1
    fi
    sleep 0.2
  done
}

# TERM, then KILL after 10 s; reaps it when it is our child.
_slurm_kill() {
  local p=$1 i
  kill -TERM "$p" 2>/dev/null || return 0
  for ((i = 0; i < 100; i++)); do
    _slurm_alive "$p" || break
    sleep 0.1
  done
  kill -KILL "$p" 2>/dev/null || true
  wait "$p" 2>/dev/null || true
}

# Processes of this cluster that outlive slurmd: slurmstepd (its log and spool are under $SLURM_T)
# and job tasks (SLURM_CONF names our slurm.conf and SLURM_JOB_ID is set). Nothing else matches.
_slurm_strays() {
  local d p env fd
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    [[ $p == "$$" || $p == "$BASHPID" ]] && continue
    if [[ $(cat "$d/comm" 2>/dev/null) == slurmstepd ]]; then
      for fd in "$d"/fd/*; do
        if [[ $(readlink "$fd" 2>/dev/null) == "$SLURM_T"/* ]]; then
          echo "$p"
          break
        fi
      done
      continue
    fi
    env=$(tr '\0' '\n' 2>/dev/null <"$d/environ") || continue
    if grep -qxF "SLURM_CONF=$SLURM_T/slurm.conf" <<<"$env" && grep -q '^SLURM_JOB_ID=' <<<"$env"; then
      echo "$p"
    fi
  done
}

# Stops this cluster and everything it started; safe twice and from an EXIT trap. Jobs are
# cancelled first so that slurmstepd ends them itself; $SLURM_T stays (the caller removes it).
slurm_stop() {
  [[ -n ${SLURM_T:-} && -d $SLURM_T/run ]] || return 0
  local f p jobs end
  if [[ -e $SLURM_T/run/slurmctld.bgpid ]]; then
    jobs=$(SLURM_CONF=$SLURM_T/slurm.conf timeout 5 squeue -h -o %i 2>/dev/null) || jobs=""
    if [[ -n $jobs ]]; then
      # shellcheck disable=SC2086
      SLURM_CONF=$SLURM_T/slurm.conf timeout 5 scancel $jobs 2>/dev/null || true
      end=$((SECONDS + 15))
      while ((SECONDS < end)) && [[ -n $(SLURM_CONF=$SLURM_T/slurm.conf timeout 5 squeue -h -o %i 2>/dev/null) ]]; do
        sleep 0.2
      done
    fi
  fi
  for f in "$SLURM_T"/run/slurmd-*.bgpid "$SLURM_T/run/slurmctld.bgpid" "$SLURM_T/run/munged.bgpid"; do
    [[ -e $f ]] || continue
    _slurm_kill "$(cat "$f")"
    rm -f "$f"
  done
  for p in $(_slurm_strays); do kill -KILL "$p" 2>/dev/null || true; done
  return 0
}

# Waits until job JOBID has finished, its epilog included (not PENDING, RUNNING, COMPLETING...),
# for at most SECONDS; a job slurmctld no longer knows has finished too. 1 on timeout.
slurm_wait_job() {  # JOBID SECONDS
  local end=$((SECONDS + $2)) out state
  while :; do
    if out=$(scontrol -o show job "$1" 2>&1); then
      state=$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' <<<"$out")
    elif [[ $out == *"Invalid job id"* ]]; then
      return 0
    else
      state="unknown ($out)"
    fi
    case $state in
      COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | PREEMPTED | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE)
        return 0 ;;
    esac
    if ((SECONDS >= end)); then
      echo "slurm_wait_job: job $1 still $state after $2 s"
      return 1
    fi
    sleep 0.2
  done
}

# Prints NODE's (default $SLURM_NODE) state and reason as sinfo has them: "idle|none",
# "drained|Prolog error".
slurm_node_state() {  # [NODE]
  # sed, not head: with pipefail, sinfo must not die of SIGPIPE (a node in several partitions).
  sinfo -h -N -n "${1:-$SLURM_NODE}" -o '%T|%E' | sed -n 1p
}

# Waits until slurm_node_state prints STATE ("idle|none"), for at most SECONDS; 1 on timeout.
# Needed after a resume: slurmctld marks the node not responding ("idle*") until it answers a ping.
slurm_wait_node() {  # STATE SECONDS [NODE]
  local node=${3:-$SLURM_NODE} end=$((SECONDS + $2))
  until [[ $(slurm_node_state "$node" 2>/dev/null) == "$1" ]]; do
    if ((SECONDS >= end)); then
      echo "slurm_wait_node: $node is $(slurm_node_state "$node" 2>&1), not $1 after $2 s"
      return 1
    fi
    sleep 0.2
  done
}

