#!/usr/bin/python3
# The guard group's reaction on loopback (docs/guard-group.md "Measured"), with the real
# torchrun: tests/torchrun/torchrun_group_test.py's memory case (node 1's guard kills its
# job for memory: time from that kill to the last rank gone on either node) and freeze case
# (node 1's guard and job SIGSTOPped: time to rank 0 gone, --heartbeat 200ms
# --heartbeat-timeout 1s), RUNS times each; then an idle group of two guards around `sleep`
# at the default heartbeat (500 ms): each guard's CPU over IDLE_S seconds and its RSS; then
# the same group under load for LOAD_S seconds, four busy processes per core running beside it
# (nice 0, as a training job's data workers would): whether the group held (both guards exit
# 0) and each guard's longest_silence_ms from its group-leave event, against the 3 s timeout.
#
#   bench/group_reaction.py HEADROOM [RUNS=10] [IDLE_S=30] [LOAD_S=60]
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TEST = os.path.join(HERE, "..", "tests", "torchrun", "torchrun_group_test.py")


def p95(values):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(0.95 * (len(values) - 1))))]


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    headroom = os.path.abspath(sys.argv[1])
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    idle_s = float(sys.argv[3]) if len(sys.argv) > 3 else 30
    load_s = float(sys.argv[4]) if len(sys.argv) > 4 else 60
    out = {}
    for case, key in (("memory", "kill_to_last_rank_gone_s"), ("freeze", "freeze_to_rank0_gone_s")):
        values = []
        for _ in range(runs):
            with tempfile.NamedTemporaryFile(suffix=".json") as f:
                r = subprocess.run(["/usr/bin/python3", TEST, headroom, case, "--json", f.name],
                                   capture_output=True, text=True, timeout=180)
                if r.returncode != 0:
                    print(f"{case}: run failed:\n{r.stdout[-2000:]}", file=sys.stderr)
                    continue
                values.append(json.load(open(f.name))[key])
        if values:
            out[case] = {"runs": len(values), "median_s": statistics.median(values),
                         "p95_s": p95(values), "min_s": min(values), "max_s": max(values)}
        print(case, json.dumps(out.get(case)), flush=True)
    env = dict(os.environ, HEADROOM_GROUP_SECRET="group-bench-secret-0123456789abcdef")
    port = 29000 + os.getpid() % 1000
    guards = [subprocess.Popen([headroom, "guard", "--group", f"127.0.0.1:{port}", "--node-rank",
                                str(r), "--nodes", "2", "--no-journal", "--min-available", "64M",
                                "--", "sleep", str(idle_s + 10)], env=env,
                               stderr=subprocess.DEVNULL) for r in (0, 1)]
    time.sleep(2)
    tick = os.sysconf("SC_CLK_TCK")
    before = [cpu_ticks(g.pid) for g in guards]
    time.sleep(idle_s)
    after = [cpu_ticks(g.pid) for g in guards]
    for name, g, b, a in zip(("coordinator", "member"), guards, before, after):
        out[name] = {"cpu_percent": 100.0 * (a - b) / tick / idle_s, "rss_kib": rss_kib(g.pid)}
        print(name, json.dumps(out[name]), flush=True)
    for g in guards:
        g.kill()
        g.wait()
    if load_s > 0:
        out["loaded"] = loaded_group(headroom, env, port + 1, load_s)
        print("loaded", json.dumps(out["loaded"]), flush=True)
    print(json.dumps(out))


def loaded_group(headroom, env, port, seconds):
    """Two guards at the default heartbeat around `sleep`, with 4 busy processes a core."""
    hogs = [subprocess.Popen(["/usr/bin/python3", "-c", "while True: pass"])
            for _ in range(4 * (os.cpu_count() or 1))]
    try:
        with tempfile.TemporaryDirectory() as work:
            events = [os.path.join(work, f"events-{r}.jsonl") for r in (0, 1)]
            guards = [subprocess.Popen([headroom, "guard", "--group", f"127.0.0.1:{port}",
                                        "--node-rank", str(r), "--nodes", "2", "--no-journal",
                                        "--min-available", "64M", "--events", events[r], "--",
                                        "sleep", str(seconds)], env=env,
                                       stderr=subprocess.DEVNULL) for r in (0, 1)]
            statuses = [g.wait(timeout=seconds + 60) for g in guards]
            silences = []
            for path in events:
                with open(path) as f:
                    leave = [json.loads(line) for line in f if '"group-leave"' in line]
                silences.append(leave[0].get("longest_silence_ms") if leave else None)
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    return {"seconds": seconds, "busy_processes": len(hogs), "exit_statuses": statuses,
            "longest_silence_ms": {"coordinator": silences[0], "member": silences[1]}}


if __name__ == "__main__":
    main()
