#!/usr/bin/python3
"""The companion's cost per step in a plain loop (docs/companion.md, "Cost"): target under
20 us at one record per step.

Each run is a fresh /usr/bin/python3 that imports the companion (python/headroom) and, with
torch imported (so the allocator probe runs as it does in a training job; CPU torch: no CUDA,
so no allocator calls), times STEPS calls of headroom.step(i, tokens=..., loss=..., lr=...)
around the whole loop, minus the same loop calling a no-op function: wall time
(perf_counter_ns) and the thread's CPU time (thread_time_ns, system calls included; on a
shared, loaded machine the wall time also holds the waits for a CPU).
Cases: records every step (HEADROOM_STEP_RECORDS set, the default signal handler and the
request file as the guard sets them), every 10th step, and no records (the variable unset).
The records go to a file under --dir (default: a temporary folder on /tmp).

Usage: bench/companion_step.py [--runs 15] [--steps 20000] [--dir DIR] [--no-torch]
Prints one line per case (median and spread over the runs, us per step) and a JSON line.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(os.path.dirname(HERE), "python")

CHILD = r"""
import os, sys, time
if %(torch)r:
    import torch
import headroom
steps = %(steps)d
def noop(step, tokens=None, loss=None, lr=None):
    return False
for fn in (noop, headroom.step):   # warm both
    for i in range(200):
        fn(i, tokens=4096, loss=1.25, lr=2e-4)
def timed(fn, clock):
    t0 = clock()
    for i in range(steps):
        fn(i, tokens=4096, loss=1.25, lr=2e-4)
    return clock() - t0
wall = timed(headroom.step, time.perf_counter_ns) - timed(noop, time.perf_counter_ns)
cpu = timed(headroom.step, time.thread_time_ns) - timed(noop, time.thread_time_ns)
print(wall / steps / 1000.0, cpu / steps / 1000.0)
"""


def run_case(env_extra, steps, use_torch):
    env = dict(os.environ)
    for k in ("HEADROOM_STEP_RECORDS", "HEADROOM_STEP_EVERY", "HEADROOM_CHECKPOINT_REQUEST"):
        env.pop(k, None)
    env["PYTHONPATH"] = PACKAGE
    env.update(env_extra)
    out = subprocess.run([sys.executable, "-c", CHILD % {"steps": steps, "torch": use_torch}],
                         env=env, capture_output=True, text=True, check=True)
    wall, cpu = out.stdout.split()
    return float(wall), float(cpu)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--steps", type=int, default=20000)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--no-torch", action="store_true")
    a = ap.parse_args()
    results = {}
    with tempfile.TemporaryDirectory(dir=a.dir) as d:
        cases = {
            "every-step": {"HEADROOM_STEP_RECORDS": os.path.join(d, "s.jsonl"),
                           "HEADROOM_CHECKPOINT_REQUEST": os.path.join(d, "save-request")},
            "every-10th": {"HEADROOM_STEP_RECORDS": os.path.join(d, "s10.jsonl"),
                           "HEADROOM_STEP_EVERY": "10",
                           "HEADROOM_CHECKPOINT_REQUEST": os.path.join(d, "save-request")},
            "no-records": {},
        }
        for name, env in cases.items():
            pairs = [run_case(env, a.steps, not a.no_torch) for _ in range(a.runs)]
            results[name] = {"runs": a.runs, "steps": a.steps}
            for i, what in enumerate(("wall", "cpu")):
                xs = [p[i] for p in pairs]
                med = statistics.median(xs)
                results[name][what] = {"median_us": round(med, 2), "min_us": round(min(xs), 2),
                                       "max_us": round(max(xs), 2)}
                print("%-11s %-4s median %.2f us/step (min %.2f, max %.2f; %d runs of %d steps)"
                      % (name, what, med, min(xs), max(xs), a.runs, a.steps))
    print(json.dumps({"bench": "companion_step", "torch": not a.no_torch, "results": results}))


if __name__ == "__main__":
    main()
