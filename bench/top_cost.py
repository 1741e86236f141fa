#!/usr/bin/env python3
"""CPU and memory cost of `headroom top` itself, drawing in a real terminal (docs/top.md).

For each case (the live machine with no GPU; the ps-box fixture with the fake NVML's
discrete GPU; the gb10-idle fixture with the fake GB10) and each refresh interval, runs
`headroom top` in a private tmux server (120x40, TERM=xterm-256color), lets it settle for
WARMUP seconds, then reads its utime + stime from /proc/PID/stat over SECONDS seconds of wall
time (/proc/PID/schedstat's nanoseconds where the kernel has it): CPU % of one core = CPU
seconds / wall seconds x 100. RSS is VmRSS at the end. The tmux
server's own CPU (the terminal emulator's work) is reported apart: it is not top's, but it
is what a real terminal would spend drawing top's output.

Usage: bench/top_cost.py [--binary build/headroom] [--seconds 30] [--warmup 3]
       [--intervals 1s,100ms] [--cases live,ps-box,gb10]
Prints one line per measurement and a JSON line with all of them.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(HERE)


def cpu_seconds(pid):
    # /proc/PID/schedstat's first field is the time on CPU in ns (CONFIG_SCHED_INFO): the
    # same quantity as utime + stime without their 10 ms ticks, which at 1 s refresh would
    # round a few milliseconds a minute to zero or one tick. stat is the fallback.
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        pass
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def tmux(socket, *args):
    env = dict(os.environ, LANG="C.UTF-8", LC_ALL="C.UTF-8")
    env.pop("TMUX", None)
    return subprocess.run(["tmux", "-u", "-L", socket, "-f", "/dev/null", *args], env=env, check=True,
                          capture_output=True, text=True).stdout.strip()


def measure(binary, case, interval, seconds, warmup, build):
    fake = os.path.join(build, "tests/fakes/libnvidia-ml-fake.so")
    with tempfile.TemporaryDirectory() as tmp:
        env = f"export TERM=xterm-256color LANG=C.UTF-8 HEADROOM_JOURNAL={tmp}/journal.db; "
        args = ["--interval", interval]
        if case == "live":
            args += ["--nvml-lib", "/nonexistent/libnvidia-ml.so.1"]
        else:
            scenario = {"ps-box": "discrete", "gb10": "gb10"}[case]
            root = {"ps-box": "ps-box", "gb10": "gb10-idle"}[case]
            with open(f"{tmp}/nvml.txt", "w") as f:
                f.write(f"scenario {scenario}\n")
            env += f"export HEADROOM_FAKE_NVML_SCRIPT={tmp}/nvml.txt; "
            args += ["--root", os.path.join(SOURCE, "tests/fixtures", root), "--nvml-lib", fake]
        # A socket per measurement: a server still shutting down refuses a new session.
        socket = f"headroom-top-cost-{os.getpid()}-{case}-{interval}"
        command = env + "exec " + " ".join([binary, "top", *args])
        tmux(socket, "new-session", "-d", "-x", "120", "-y", "40", "-s", "t", command)
        try:
            pid = int(tmux(socket, "display-message", "-p", "-t", "t", "#{pane_pid}"))
            server = int(tmux(socket, "display-message", "-p", "-t", "t", "#{pid}"))
            time.sleep(warmup)
            c0, s0, w0 = cpu_seconds(pid), cpu_seconds(server), time.monotonic()
            time.sleep(seconds)
            c1, s1, w1 = cpu_seconds(pid), cpu_seconds(server), time.monotonic()
            screen = tmux(socket, "capture-pane", "-p", "-t", "t")
            if "processes holding the pool" not in screen:
                sys.exit(f"top_cost: {case} {interval}: top is not drawing:\n{screen}")
            rss = rss_kib(pid)
        finally:
            subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
    wall = w1 - w0
    return {"case": case, "interval": interval, "wall_s": round(wall, 2), "cpu_s": round(c1 - c0, 4),
            "cpu_pct": round((c1 - c0) / wall * 100, 3), "rss_kib": rss,
            "tmux_cpu_pct": round((s1 - s0) / wall * 100, 3)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default="build/headroom")
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--warmup", type=float, default=3)
    ap.add_argument("--intervals", default="1s,100ms")
    ap.add_argument("--cases", default="live,ps-box,gb10")
    a = ap.parse_args()
    binary = os.path.abspath(a.binary)
    build = os.path.dirname(binary)
    results = []
    for case in a.cases.split(","):
        for interval in a.intervals.split(","):
            r = measure(binary, case, interval, a.seconds, a.warmup, build)
            results.append(r)
            print(f"{case:7} {interval:>6}: top {r['cpu_pct']:.3f} % of one core ({r['cpu_s']:.4f} s CPU "
                  f"in {r['wall_s']:.1f} s), RSS {r['rss_kib'] / 1024:.1f} MiB; tmux {r['tmux_cpu_pct']:.3f} %",
                  flush=True)
    print(json.dumps({"top_cost": results, "cores": os.cpu_count(), "uname": " ".join(os.uname())}))


if __name__ == "__main__":
    main()
