#!/usr/bin/env bash
# A real single-node Slurm cluster (munged + slurmctld + slurmd) on localhost, for the tests
# of the Slurm job-array feature. Not a mock: the tests submit with the real sbatch/squeue/
# scancel against real daemons. Needs root (it installs Debian packages and runs
# SlurmUser=root) and no systemd: every daemon runs in the foreground (-D/-F), started in
# the background by this script, which records its PID and later stops it by that PID.
#
#   ci/slurm-local.sh up [DIR]        install if needed, start, wait until the node is idle;
#                                     prints `export SLURM_CONF=DIR/slurm.conf` on stdout
#                                     (everything else goes to stderr), so a caller can run
#                                     eval "$(ci/slurm-local.sh up)"
#   ci/slurm-local.sh down [DIR]      cancel jobs, SIGTERM the daemons, SIGKILL leftovers
#   ci/slurm-local.sh status [DIR]    sinfo + squeue, or "not up"
#   ci/slurm-local.sh selftest [DIR]  up, a 6-task array, an scancel check, down; timings
#
# DIR defaults to ${SPAR_SLURM_DIR:-/tmp/spar-slurm}; everything (munge key and socket,
# slurm.conf, state, spool, logs, PID files) lives in it. Ports: SPAR_SLURM_CTLD_PORT
# (default 6817) and SPAR_SLURM_SLURMD_PORT (default 6818), for two clusters side by side.
set -euo pipefail

export PATH="$PATH:/usr/sbin:/sbin"
export LC_ALL=C

PROG=ci/slurm-local.sh
DAEMONS=(munged slurmctld slurmd)

log() { echo "$PROG: $*" >&2; }
die() { log "$*"; exit 1; }

now_ms() { local t=${EPOCHREALTIME/./}; echo $((10#$t / 1000)); }
# Seconds with two decimals since a now_ms value.
since() { local d=$(($(now_ms) - $1)); printf '%d.%02d' $((d / 1000)) $((d % 1000 / 10)); }

# ---------------------------------------------------------------------------------------------
# Installation

have_packages() {
    local b
    for b in munged munge slurmctld slurmd sbatch squeue scancel sinfo scontrol; do
        command -v "$b" >/dev/null 2>&1 || return 1
    done
}

install_packages() {
    have_packages && return 0
    log "installing slurmctld slurmd slurm-client munge (apt)"
    local pkgs=(slurmctld slurmd slurm-client munge) created_policy=false
    # policy-rc.d exiting 101 tells invoke-rc.d not to start services: the packages' postinst
    # must not start a system munged/slurmctld/slurmd (they would hold the default ports and
    # /etc config); this script starts its own. Docker-style images already have one.
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
        chmod 755 /usr/sbin/policy-rc.d
        created_policy=true
    fi
    local rc=0
    (
        export DEBIAN_FRONTEND=noninteractive
        # Update the package lists only when they do not know a package, or when the install
        # fails on stale lists (a version gone from the mirror).
        if ! apt-cache show "${pkgs[@]}" >/dev/null 2>&1; then apt-get update -qq; fi
        apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null \
            || { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null; }
    ) || rc=$?
    if [ "$created_policy" = true ]; then rm -f /usr/sbin/policy-rc.d; fi
    [ "$rc" -eq 0 ] || die "apt-get install failed (exit $rc)"
    have_packages || die "Slurm/munge binaries still missing after apt-get install"
}

# ---------------------------------------------------------------------------------------------
# Paths and configuration

set_paths() {
    DIR=${1:-${SPAR_SLURM_DIR:-/tmp/spar-slurm}}
    case $DIR in /*) ;; *) DIR="$PWD/$DIR" ;; esac
    CONF=$DIR/slurm.conf
    MUNGE_DIR=$DIR/munge
    SOCKET=$MUNGE_DIR/munge.socket
    PIDS=$DIR/pids # the PIDs this script recorded ($! of each daemon)
    LOGS=$DIR/log
    NODE=$(hostname -s)
    CTLD_PORT=${SPAR_SLURM_CTLD_PORT:-6817}
    SLURMD_PORT=${SPAR_SLURM_SLURMD_PORT:-6818}
    export SLURM_CONF=$CONF
}

write_conf() {
    cat >"$CONF" <<EOF
# Written by $PROG: a single-node Slurm cluster on localhost for tests. Every path is under
# $DIR.
ClusterName=spar-local
# The node is this machine under its short host name (slurmctld checks that it runs on the
# SlurmctldHost); the address is pinned to 127.0.0.1 so no DNS or network is involved.
SlurmctldHost=$NODE(127.0.0.1)
# Defaults (6817/6818) unless overridden, so two clusters can run side by side.
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
# Runs as root: no slurm user, no privilege changes; jobs run as the submitting user.
SlurmUser=root
SlurmdUser=root
# munged is ours, not the system one (/run/munge does not exist without systemd): daemons
# and client tools (sbatch, squeue, ... with SLURM_CONF pointing here) use its socket.
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCKET
# No systemd and no cgroup delegation: track job processes through /proc (linuxproc), no
# CPU binding or cgroup confinement of tasks (task/none).
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
# No slurmdbd: no accounting (so sacct does not work). Finished jobs are visible with
# scontrol show job (for MinJobAge, 300 s) and in the job completion file below.
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$LOGS/jobcomp.txt
# Allocate single CPUs (not whole nodes or cores): each array task takes one CPU.
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
# Let the node declare more CPUs than it has (CPUs=64 below), so 64 one-CPU array tasks run
# at once on a small machine instead of the node being drained for a low CPU count.
SlurmdParameters=config_overrides
# Start pending jobs and array tasks at once instead of batching scheduling passes.
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
# A node that was down (an earlier unclean stop) returns to service when slurmd registers.
ReturnToService=2
# Seconds between SIGTERM and SIGKILL when a job is cancelled or times out (default 30):
# keeps scancel and down quick.
KillWait=5
MpiDefault=none
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.pid
SlurmctldLogFile=$LOGS/slurmctld.log
SlurmdLogFile=$LOGS/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info

NodeName=$NODE NodeAddr=127.0.0.1 NodeHostname=$NODE CPUs=64 State=UNKNOWN
PartitionName=debug Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
}

# ---------------------------------------------------------------------------------------------
# Processes

# The recorded PID of daemon $1 if that process is alive and is that daemon (not a reused PID).
live_pid() {
    local f=$PIDS/$1.pid pid comm state
    [ -r "$f" ] || return 1
    pid=$(cat "$f")
    [[ $pid =~ ^[0-9]+$ ]] || return 1
    comm=$(cat "/proc/$pid/comm" 2>/dev/null) || return 1
    [ "$comm" = "$1" ] || return 1
    # Not a zombie (dead, not yet reaped: the daemons' parent is init once this script exits).
    state=$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null) || return 1
    [ "${state%% *}" != Z ] || return 1
    echo "$pid"
}

# Whether the process started as daemon $1 still exists. Unlike live_pid this does not ask
# for the daemon's name: just after `start_daemon` the recorded PID may still be the shell
# or setsid about to exec the daemon (a window that grows on a loaded machine), so the
# start-up loops wait on this rather than give up at once.
started() {
    local f=$PIDS/$1.pid
    [ -r "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null
}

all_started() {
    local d
    for d in "${DAEMONS[@]}"; do started "$d" || return 1; done
}

all_up() {
    local d
    for d in "${DAEMONS[@]}"; do live_pid "$d" >/dev/null || return 1; done
}

any_up() {
    local d
    for d in "${DAEMONS[@]}"; do live_pid "$d" >/dev/null && return 0; done
    return 1
}

# Starts daemon $1 (the command line follows) in the background in its own session, with
# stdio on a file (so a caller's $(...) does not wait for it), and records its PID.
# SPAR_SLURM_LOCAL marks it and its children (slurmstepd) as this cluster's.
start_daemon() {
    local name=$1; shift
    # 9>&-: not holding the lock on $DIR/.lock that this script holds.
    SPAR_SLURM_LOCAL=$DIR setsid "$@" </dev/null >>"$LOGS/$name.out" 2>&1 9>&- &
    echo $! >"$PIDS/$name.pid"
}

node_state() { sinfo -h -N -n "$NODE" -o %T 2>/dev/null | head -n 1; }

print_logs() {
    local f
    for f in "$MUNGE_DIR/munged.log" "$LOGS"/*.log "$LOGS"/*.out; do
        [ -s "$f" ] || continue
        echo "---- tail of $f" >&2
        tail -n 25 "$f" >&2
    done
}

# slurmstepd processes of this cluster: they outlive slurmd, and `down` must not leave them
# behind. Slurm blanks a stepd's environment (its process title), so they are recognised by
# the descriptor they hold on this cluster's slurmd log.
stepd_pids() {
    local p fd
    for p in /proc/[0-9]*; do
        [ "$(cat "$p/comm" 2>/dev/null)" = slurmstepd ] || continue
        for fd in "$p"/fd/*; do
            if [ "$(readlink "$fd" 2>/dev/null)" = "$LOGS/slurmd.log" ]; then
                echo "${p#/proc/}"
                break
            fi
        done
    done
}

# ---------------------------------------------------------------------------------------------
# Commands

cmd_up() {
    [ "$(id -u)" -eq 0 ] || die "must run as root (it installs packages and runs SlurmUser=root)"
    install_packages
    mkdir -p "$DIR"
    exec 9>"$DIR/.lock"
    flock -w 60 9 || die "another $PROG holds $DIR/.lock"
    if all_up && [ "$(node_state)" = idle ]; then
        log "already up in $DIR"
        echo "export SLURM_CONF=$CONF"
        return 0
    fi
    # Half up (a daemon died) or stale: start over from a clean state.
    if any_up; then log "partly up in $DIR: restarting"; stop_all; fi
    local t0
    t0=$(now_ms)

    rm -rf "$DIR/state" "$DIR/spool" "$DIR/run" "$PIDS" "$LOGS"
    mkdir -p "$DIR/state" "$DIR/spool" "$DIR/run" "$PIDS" "$LOGS" "$MUNGE_DIR"
    # munged refuses a socket directory others can write to and a key others can read.
    chmod 755 "$DIR" "$MUNGE_DIR"
    if [ ! -s "$MUNGE_DIR/munge.key" ]; then
        (umask 077 && head -c 1024 /dev/urandom >"$MUNGE_DIR/munge.key")
    fi
    chmod 400 "$MUNGE_DIR/munge.key"
    write_conf

    # --force: run despite the lax permissions of parent directories such as /tmp.
    start_daemon munged munged -F --force \
        --socket="$SOCKET" --key-file="$MUNGE_DIR/munge.key" \
        --pid-file="$MUNGE_DIR/munged.pid" --seed-file="$MUNGE_DIR/munged.seed" \
        --log-file="$MUNGE_DIR/munged.log"
    local i
    for ((i = 0; i < 100; i++)); do
        [ -S "$SOCKET" ] && munge -n -S "$SOCKET" 2>/dev/null | unmunge -S "$SOCKET" >/dev/null 2>&1 && break
        started munged || break
        sleep 0.1
    done
    if ! munge -n -S "$SOCKET" 2>/dev/null | unmunge -S "$SOCKET" >/dev/null 2>&1; then
        log "munged did not come up"; print_logs; stop_all; exit 1
    fi

    start_daemon slurmctld slurmctld -D -f "$CONF"
    start_daemon slurmd slurmd -D -N "$NODE" -f "$CONF"

    local state=""
    for ((i = 0; i < 300; i++)); do
        state=$(node_state || true)
        [ "$state" = idle ] && break
        all_started || break
        sleep 0.1
    done
    if [ "$state" != idle ]; then
        log "the node did not become idle within 30 s (state: '${state:-no answer}'); daemons:"
        local d
        for d in "${DAEMONS[@]}"; do
            if live_pid "$d" >/dev/null; then log "  $d running"; else log "  $d NOT running"; fi
        done
        print_logs
        stop_all
        exit 1
    fi
    log "up in $DIR after $(since "$t0") s (node $NODE idle, ports $CTLD_PORT/$SLURMD_PORT)"
    echo "export SLURM_CONF=$CONF"
}

# Stops this cluster: cancels its jobs while the controller can still do it, then SIGTERM to
# each recorded daemon, SIGKILL after 10 s, and SIGKILL to any slurmstepd left over.
stop_all() {
    local d pid i
    if live_pid slurmctld >/dev/null && live_pid slurmd >/dev/null \
        && [ -n "$(squeue -h -o %i 2>/dev/null || true)" ]; then
        # Every job of every user in the one partition, batch shells included (--full).
        scancel --full --quiet --partition=debug 2>/dev/null || true
        for ((i = 0; i < 100; i++)); do
            [ -z "$(squeue -h -o %i 2>/dev/null || true)" ] && break
            sleep 0.1
        done
    fi
    local pids=()
    for d in slurmd slurmctld munged; do
        if pid=$(live_pid "$d"); then
            kill -TERM "$pid" 2>/dev/null || true
            pids+=("$pid")
        fi
    done
    for ((i = 0; i < 100; i++)); do
        local alive=false
        for pid in "${pids[@]}"; do
            if kill -0 "$pid" 2>/dev/null; then alive=true; fi
        done
        [ "$alive" = false ] && break
        sleep 0.1
    done
    for d in slurmd slurmctld munged; do
        if pid=$(live_pid "$d"); then
            log "$d (PID $pid) still running 10 s after SIGTERM: SIGKILL"
            kill -KILL "$pid" 2>/dev/null || true
        fi
    done
    # Left-over job steps (only when scancel above failed): SIGKILL each slurmstepd and the
    # job processes in its session (slurmd starts each stepd in a new session; its tasks
    # stay in it).
    for pid in $(stepd_pids); do
        local sid members
        sid=$(ps -o sid= -p "$pid" | tr -d ' ') || continue
        members=$(ps -e -o pid=,sid= | awk -v s="$sid" '$2 == s { print $1 }' | tr '\n' ' ')
        log "slurmstepd (PID $pid) left over: SIGKILL to it and its session ($members)"
        # shellcheck disable=SC2086 # a list of PIDs
        kill -KILL $members 2>/dev/null || true
    done
    rm -f "$PIDS"/*.pid "$DIR"/run/*.pid "$MUNGE_DIR/munged.pid"
}

cmd_down() {
    if [ ! -d "$DIR" ]; then log "nothing up in $DIR"; return 0; fi
    exec 9>"$DIR/.lock"
    flock -w 60 9 || die "another $PROG holds $DIR/.lock"
    if any_up || [ -n "$(stepd_pids)" ]; then
        local t0
        t0=$(now_ms)
        stop_all
        log "down in $DIR after $(since "$t0") s"
    else
        rm -f "$PIDS"/*.pid "$DIR"/run/*.pid "$MUNGE_DIR/munged.pid"
        log "nothing up in $DIR"
    fi
}

cmd_status() {
    if ! all_up; then
        echo "not up ($DIR)"
        local d
        for d in "${DAEMONS[@]}"; do
            if live_pid "$d" >/dev/null; then echo "  $d running"; fi
        done
        return 0
    fi
    echo "up: SLURM_CONF=$CONF"
    sinfo && squeue
}

# Waits (up to $2 seconds) until squeue lists no task of job $1. Returns 1 on timeout.
wait_job_gone() {
    local job=$1 limit_ms=$(($2 * 1000)) t0
    t0=$(now_ms)
    while [ $(($(now_ms) - t0)) -lt "$limit_ms" ]; do
        if ! squeue -h -o '%F' | grep -qxF "$job"; then return 0; fi
        sleep 0.1
    done
    return 1
}

cmd_selftest() {
    local t_all t0 started=false
    t_all=$(now_ms)
    if all_up; then
        log "selftest: a cluster is already up in $DIR: using it, and leaving it up"
    else
        started=true
    fi
    t0=$(now_ms)
    cmd_up >/dev/null
    local t_up
    t_up=$(since "$t0")
    exec 9>&- # the lock cmd_up took (a second up below takes it again)
    if [ "$started" = true ]; then
        # Idempotence: a second up finds it up and prints the same line.
        [ "$(cmd_up 2>/dev/null)" = "export SLURM_CONF=$CONF" ] || die "selftest: second up failed"
    fi

    local out=$DIR/selftest
    rm -rf "$out"
    mkdir -p "$out"

    # 1. A 6-task array, one output file per task.
    t0=$(now_ms)
    local job
    # shellcheck disable=SC2016 # expanded in the job, not here
    job=$(sbatch --parsable --array=0-5 --job-name=spar-selftest --chdir="$out" \
        --output="$out/slurm-%A_%a.out" \
        --wrap 'echo "task $SLURM_ARRAY_TASK_ID on $(hostname -s)" >"task.$SLURM_ARRAY_TASK_ID"')
    job=${job%%;*}
    if ! wait_job_gone "$job" 60; then
        squeue >&2; print_logs; die "selftest: array $job not done within 60 s"
    fi
    local t_array i
    t_array=$(since "$t0")
    for i in 0 1 2 3 4 5; do
        grep -qx "task $i on .*" "$out/task.$i" 2>/dev/null \
            || { ls -l "$out" >&2; die "selftest: task $i of array $job wrote no (or a wrong) task.$i"; }
    done
    local completed
    completed=$(scontrol -o show job "$job" | grep -c 'JobState=COMPLETED .*ExitCode=0:0' || true)
    [ "$completed" -eq 6 ] || { scontrol show job "$job" >&2; die "selftest: $completed of 6 tasks COMPLETED with exit 0"; }

    # 2. scancel: a sleeping array, cancelled once running, must leave squeue within 5 s.
    t0=$(now_ms)
    job=$(sbatch --parsable --array=0-3 --job-name=spar-selftest-cancel --chdir="$out" \
        --output=/dev/null --wrap 'sleep 300')
    job=${job%%;*}
    local running=0
    for ((i = 0; i < 300; i++)); do
        running=$(squeue -h -t RUNNING -o %F | grep -cxF "$job" || true)
        [ "$running" -eq 4 ] && break
        sleep 0.1
    done
    [ "$running" -eq 4 ] || { squeue >&2; die "selftest: sleeping array $job not running within 30 s"; }
    local t_running t_cancel
    t_running=$(since "$t0")
    t0=$(now_ms)
    scancel "$job"
    wait_job_gone "$job" 5 || { squeue >&2; die "selftest: array $job still in squeue 5 s after scancel"; }
    t_cancel=$(since "$t0")
    if pgrep -f '^sleep 300$' >/dev/null; then
        log "selftest: note: a 'sleep 300' process is still running after scancel"
    fi

    local t_down=""
    if [ "$started" = true ]; then
        t0=$(now_ms)
        cmd_down
        t_down="$(since "$t0") s"
        local d
        for d in "${DAEMONS[@]}"; do
            ! live_pid "$d" >/dev/null || die "selftest: $d still running after down"
        done
        [ -z "$(stepd_pids)" ] || die "selftest: slurmstepd left after down"
        cmd_down 2>/dev/null || die "selftest: a second down failed"
    fi
    echo "selftest passed ($DIR)"
    echo "  up:                           $t_up s"
    echo "  6-task array, submit to done: $t_array s"
    echo "  4 sleeping tasks running:     $t_running s"
    echo "  scancel until out of squeue:  $t_cancel s"
    echo "  down:                         ${t_down:-(left up)}"
    echo "  total:                        $(since "$t_all") s"
}

usage() { echo "usage: $PROG up|down|status|selftest [DIR]" >&2; exit 2; }

if [ $# -lt 1 ] || [ $# -gt 2 ]; then usage; fi
cmd=$1
set_paths "${2:-}"
case $cmd in
    up) cmd_up ;;
    down) cmd_down ;;
    status) cmd_status ;;
    selftest) cmd_selftest ;;
    *) usage ;;
esac
