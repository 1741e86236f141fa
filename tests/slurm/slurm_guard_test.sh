#!/bin/bash
# A real Slurm on loopback: munged, slurmctld and slurmd from a generated slurm.conf in a
# temporary directory (ports chosen at run time), then
#   srun --kill-on-bad-exit=1 -n2 task.sh
# with each task `headroom guard -- JOB`. Task 0's guard kills its balloon (600 MiB, its
# level 300 MiB under the MemAvailable of the start); task 1's level is 2 GiB under, never
# reached. Asserts that srun ends task 1 because task 0 exited 99 (the guard's status,
# docs/cli.md), that srun and scontrol say so, and that no daemon or task is left. Before
# that, `headroom doctor` in a job step reads the step's variables and this slurm.conf (G11).
# Usage: slurm_guard_test.sh HEADROOM BALLOON. Exit 0 pass, 1 fail, 77 skip (no Slurm, not
# root). docs/slurm.md.
set -u
headroom=$1 balloon=$2
# "group": the two tasks' guards form a guard group (--group 127.0.0.1:PORT --node-rank
# $SLURM_PROCID --nodes 2, docs/guard-group.md "Slurm"): task 1's guard ends its job for the
# group (exit 96) as soon as task 0's guard kills for memory, and says why.
mode=${3:-single}
for tool in munged slurmctld slurmd srun scontrol; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed (slurm-wlm, munge)"; exit 77; }
done
[ "$(id -u)" = 0 ] || { echo "SKIP: slurmd needs root here"; exit 77; }

T=$(mktemp -d /tmp/headroom-slurm.XXXXXX)
export SLURM_CONF=$T/slurm.conf
fail() { echo "FAIL: $*"; for f in "$T"/*.log "$T"/srun.*; do [ -f "$f" ] && { echo "== $f"; tail -20 "$f"; }; done; status=1; }
# The processes of this test: its temporary directory in their command line or environment
# (the daemons' flags, the tasks' SLURM_CONF), never matched by name alone.
ours() {
  for p in /proc/[0-9]*; do
    [ "${p#/proc/}" = $$ ] && continue
    if grep -aqsF "$T" "$p/cmdline" || grep -aqsF "SLURM_CONF=$T/slurm.conf" "$p/environ"; then
      echo "${p#/proc/}"
    fi
  done
}
teardown() {
  for d in slurmd slurmctld munged; do
    [ -f "$T/$d.pid" ] && kill "$(cat "$T/$d.pid")" 2>/dev/null
  done
  for _ in $(seq 50); do
    [ -z "$(ours)" ] && break
    sleep 0.1
  done
  left=$(ours)
  if [ -n "$left" ]; then
    echo "FAIL: processes left: $(for p in $left; do tr '\0' ' ' <"/proc/$p/cmdline"; echo; done)"
    kill -KILL $left 2>/dev/null
    status=1
  fi
  rm -rf "$T"
  exit "$status"
}
status=0
trap teardown EXIT

mkdir -p "$T/state" "$T/spool"
cp /etc/munge/munge.key "$T/munge.key" 2>/dev/null || dd if=/dev/urandom of="$T/munge.key" bs=1024 count=1 2>/dev/null
chmod 600 "$T/munge.key"
munged -f -S "$T/munge.sock" --key-file="$T/munge.key" --log-file="$T/munged.log" \
  --pid-file="$T/munged.pid" --seed-file="$T/munged.seed" || { fail "munged did not start"; exit 1; }

host=$(hostname -s)
port=$(( 20000 + RANDOM % 20000 ))
cat > "$SLURM_CONF" <<CONF
ClusterName=headroom
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$T/munge.sock
CredType=cred/munge
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
ReturnToService=2
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=5 State=UP
CONF
slurmctld -c -i || { fail "slurmctld did not start"; exit 1; }
slurmd || { fail "slurmd did not start"; exit 1; }
for _ in $(seq 100); do
  sinfo -h -o %t 2>/dev/null | grep -q idle && break
  sleep 0.1
done
sinfo -h -o %t | grep -q idle || { fail "the node never became idle"; exit 1; }

# doctor G11 inside a real job step: it records the step's Slurm variables and reads this
# slurm.conf through $SLURM_CONF (no KillOnBadExit in it: null, Slurm's default 0).
timeout 60 srun -n1 -J headroom-doctor "$headroom" doctor --no-bandwidth --json \
  >"$T/doctor.json" 2>"$T/doctor.err"
/usr/bin/python3 - "$T/doctor.json" "$SLURM_CONF" <<'PY' || fail "doctor's report in a job step: $(head -c 300 "$T/doctor.json")"
import json, sys
j = json.load(open(sys.argv[1]))
d = j["distributed"]
assert d["slurm_conf"] == sys.argv[2], d
assert d["kill_on_bad_exit"] is None, d
assert d["env"].get("SLURM_JOB_ID"), d
assert d["env"].get("SLURM_JOB_NUM_NODES") == "1", d
assert j["checks"]["G11"].startswith("info: single node"), j["checks"]["G11"]
PY

# Levels relative to the MemAvailable of now, taken under the balloon lock (common to the
# memory tests) so no other balloon moves it. Another process freeing memory meanwhile can
# keep MemAvailable above task 0's level (its balloon then ends by itself at 20 s, and task
# 1's sleep at 30 s): that attempt's premise failed, not the guard, and it is tried again,
# three times at most, as tests/cli/guard_cli_test.cc does.
exec 9>/tmp/headroom-balloon.lock
mib=$((1024 * 1024))
for attempt in 1 2 3; do
  flock 9
  avail=$(( $(awk '/^MemAvailable:/ {print $2}' /proc/meminfo) * 1024 ))
  kill0=$(( avail - 256 * mib )) kill1=$(( avail - 2048 * mib ))
  group=""
  if [ "$mode" = group ]; then
    gport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    group="--group 127.0.0.1:$gport --node-rank \$SLURM_PROCID --nodes 2 --group-wait 30s"
  fi
  cat > "$T/task.sh" <<TASK
#!/bin/sh
export HEADROOM_GROUP_SECRET=slurm-guard-test-secret-0123456789
if [ "\$SLURM_PROCID" = 0 ]; then
  exec $headroom guard $group --no-journal --no-cgroup --min-available ${kill0}B \
    --warn-available $(( kill0 + 64 * mib ))B -- $balloon --cap 800M --rate 400M --timeout 20s
fi
exec $headroom guard $group --no-journal --no-cgroup --min-available ${kill1}B \
  --warn-available $(( kill1 + 64 * mib ))B -- sleep 30
TASK
  chmod +x "$T/task.sh"
  start=$(date +%s)
  timeout 60 srun --kill-on-bad-exit=1 -n2 -J "headroom-guard-$attempt" "$T/task.sh" \
    >"$T/srun.out" 2>"$T/srun.err"
  rc=$?
  took=$(( $(date +%s) - start ))
  flock -u 9
  grep -q "task 0: Exited with exit code 99" "$T/srun.err" && break
  grep -q "killed the job" "$T/srun.err" && break  # the guard acted: judge this attempt
  echo "note: attempt $attempt: MemAvailable never came down to task 0's level"
done

[ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "srun exit status $rc (expected the tasks' failure)"
grep -q "task 0: Exited with exit code 99" "$T/srun.err" || fail "srun does not say task 0 exited 99"
grep -q "headroom guard: killed the job" "$T/srun.err" || fail "task 0's guard did not kill its job"
if [ "$mode" = group ]; then
  # The group ends task 1 before srun's SIGTERM can: 96, another node ended for memory.
  grep -q "task 1: Exited with exit code 96" "$T/srun.err" ||
    fail "srun does not say task 1 exited 96 (ended by the group)"
  grep -q "headroom guard: node 0: out of unified memory" "$T/srun.err" ||
    fail "task 1's guard does not say node 0 ran out of memory"
else
  # Task 1 ends by srun's SIGTERM: its guard passes it on and exits 143, or, when the guard
  # is still at it after KillWait, srun's SIGKILL ends the step ("Terminated").
  grep -Eq "task 1: (Exited with exit code 143|Terminated)" "$T/srun.err" ||
    fail "srun does not say task 1 was ended"
fi
[ "$took" -lt 25 ] || fail "srun took ${took}s: task 1 ran on (its sleep is 30 s)"
for _ in $(seq 100); do  # COMPLETING until slurmd reports the step's end
  job=$(scontrol show job -o 2>/dev/null | grep "JobName=headroom-guard-$attempt ")
  case "$job" in *JobState=COMPLETING*) sleep 0.1 ;; *) break ;; esac
done
case "$job" in
  # NonZeroExitCode; JobLaunchFailure when srun had to force-terminate task 1 (KillWait).
  *JobState=FAILED*Reason=NonZeroExitCode* | *JobState=FAILED*Reason=JobLaunchFailure*) ;;
  *) fail "scontrol show job: ${job:-no job}" ;;
esac
[ "$status" = 0 ] && echo "slurm_guard_test ($mode): ok (srun $rc after ${took}s; $(grep -o 'task 0: Exited with exit code 99' "$T/srun.err"))"
exit "$status"
