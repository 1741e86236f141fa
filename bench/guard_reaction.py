#!/usr/bin/env python3
"""guard_reaction: how fast `headroom guard` and earlyoom react to a growing allocation.

Method (docs/guard-benchmark.md, "Method"):

  * Every run reads A0 = MemAvailable and sets the level T = A0 - 3 GiB. A balloon
    (tests/tools/balloon, --mode thp) grows at a set rate toward a cap of 5 GiB; the guard
    under test must signal it when MemAvailable falls to T.
  * Ground truth is a 1 ms MemAvailable sampler (bench/mem_sampler.c, compiled here with cc).
    t_cross is the first sample meeting the guard's own predicate (ours: MemAvailable < T;
    earlyoom 1.7 with -M: 100*MA/MemTotal <= 100*T/MemTotal); between samples, MemAvailable
    is the earlier sample minus what the balloon touched since (from its chunk log).
  * The balloon's SIGTERM handler stores the arrival time (t_term) and its byte count in a
    shared progress file, next to a per-4-MiB-chunk (t, bytes) log.
      detect_ms  = t_signal - t_cross
      past_mib   = balloon bytes at t_signal - balloon bytes at t_cross
      lowest     = lowest MemAvailable reached minus T
      empty_ms   = time the balloon was reaped (ours: the guard's exit event; earlyoom: the
                   harness's waitpid) minus t_cross; sig_to_exit_ms = its pidfd POLLIN time
                   minus t_signal, the same instrument for both guards
    measured GB/s is the balloon's rate over the 256 MiB before the crossing (or the signal).
    When our guard fires before the crossing ("projected"), MemAvailable never reaches T:
    past_mib is then minus the headroom left at the signal (MemAvailable - T, from the
    sampler) and detect_ms that headroom divided by the local fill rate (both negative).
    When the guard sends SIGKILL at once (its "severe" path: MemAvailable / fall rate under
    --grace), the balloon cannot time the signal; t_signal is then the balloon's last chunk
    (signal_source=balloon-last-chunk: the kill lands within one chunk time after it). The
    guard's trigger event, written after its signal pass, is kept as a cross-check.
  * Safety: T is relative to A0; the balloon is capped at 5 GiB and --timeout 30s; the harness
    kills it 3 s after it reaches the cap; it runs inside a cgroup-v1 memory limit of
    5.5 GiB when one can be made (the backstop); no two guards ever run together; every
    process is killed and reaped at the end of each run, the balloon's pidfile pids included.
  * Rates 0.25, 1, 4, 8 GB/s and unthrottled, N runs per cell, guards interleaved (A, B, A,
    B ...), after a warm-up that touches and frees 6 GiB; runs of 1 GB/s and up are preceded
    by a 5 GiB pre-touch (free page reporting on a VM returns idle memory to the host, and
    faulting it back runs at ~1 GB/s). First, 60 s idle per guard: its CPU time.
  * --ignore-term: the balloon ignores SIGTERM and keeps filling (a PyTorch process blocked in
    a CUDA call behaves so); the figure is how far below T MemAvailable ends ("lowest").

Needs: Linux, root or a writable v1 memory cgroup for the backstop (optional), cc, the
headroom and balloon binaries (cmake --build BUILD --target headroom balloon) and, for the
comparison, earlyoom on PATH (Debian: apt-get install earlyoom; do not let its service run).
Standard library only.
"""

import argparse
import csv
import datetime
import json
import math
import os
import select
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time

SCHEMA = "guard_reaction/1"
KiB, MiB, GiB = 1024, 1024 ** 2, 1024 ** 3
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARGIN_BYTES = 3 * GiB          # D: the level sits this far below A0
CAP_BYTES = MARGIN_BYTES + 2 * GiB      # balloon cap: never more than 5 GiB
MEMCG_LIMIT = MARGIN_BYTES + 5 * GiB // 2  # backstop: D + 2.5 GiB
MIN_AVAILABLE_TO_RUN = CAP_BYTES + 4 * GiB  # refuse a run when A0 is below this
BALLOON_TIMEOUT_S = 30
CAP_HOLD_KILL_S = 3.0           # no signal this long after the cap: the harness kills
CHUNK = 4 * MiB
OVERSHOOT_FLOOR_MIB = 1.0  # overshoot ratios divide by max(ours, this): ours is often <= 0

RATES = [("0.25GB/s", "250MB"), ("1GB/s", "1GB"), ("4GB/s", "4GB"), ("8GB/s", "8GB"),
         ("unthrottled", "0")]
QUICK_RATES = ["1GB/s", "8GB/s"]
GUARDS = ["headroom", "earlyoom"]

_live = []  # Popen objects to kill on any exit


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def now_ns():
    return time.monotonic_ns()


def meminfo():
    out = {}
    with open("/proc/meminfo") as f:
        for line in f:
            k, v = line.split(":", 1)
            out[k] = int(v.split()[0])
    return out  # KiB


def loadavg1():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def read_cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return []


def read_comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def foreign_guards(ours=()):
    """PIDs of earlyoom or `headroom guard` processes that this harness did not start."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in ours or int(name) == os.getpid():
            continue
        pid = int(name)
        if read_comm(pid) == "earlyoom":
            found.append((pid, "earlyoom"))
            continue
        argv = read_cmdline(pid)
        if len(argv) >= 2 and os.path.basename(argv[0]) == "headroom" and argv[1] == "guard":
            found.append((pid, "headroom guard"))
    return found


def proc_stat(pid):
    """(utime+stime in clock ticks, nice) from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as f:
        data = f.read()
    rest = data[data.rindex(")") + 2:].split()
    # rest[0] is field 3 (state); utime=14, stime=15, nice=19
    return int(rest[11]) + int(rest[12]), int(rest[16])


def proc_runtime_ns(pid):
    """Sum of sum_exec_runtime (ns) over the process's threads, from schedstat."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total


def children_of(pid):
    """Direct children of pid (from /proc/PID/task/*/children)."""
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return out


def proc_status_kib(pid, key):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def kill_popen(p, grace_s=1.0):
    if p is None:
        return
    if p.poll() is None:
        try:
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        except ProcessLookupError:
            pass
    try:
        p.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
    if p in _live:
        _live.remove(p)


def kill_pid_if(pid, must_contain):
    """SIGKILL pid through a pidfd, only if its argv still names `must_contain`."""
    try:
        fd = os.pidfd_open(pid)
    except OSError:
        return False
    try:
        argv = read_cmdline(pid)
        if not argv or not any(must_contain in a for a in argv[:1]):
            return False
        try:
            signal.pidfd_send_signal(fd, signal.SIGKILL)
        except OSError:
            return False
        select.select([fd], [], [], 2.0)
        return True
    finally:
        os.close(fd)


def cleanup_all():
    for p in list(_live):
        kill_popen(p, 0.5)


def pct(values, q):
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    v = sorted(values)
    k = max(1, math.ceil(q / 100.0 * len(v)))
    return v[k - 1]


# ----------------------------------------------------------------------------------------
# Instruments


class Sampler:
    """bench/mem_sampler.c: 1 ms MemAvailable samples into a shared file."""

    def __init__(self, binary, path, max_s):
        self.binary, self.path, self.max_s = binary, path, max_s
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen([self.binary, self.path, "1000", str(self.max_s)],
                                     stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
        _live.append(self.proc)
        r, _, _ = select.select([self.proc.stdout], [], [], 5.0)
        if not r or self.proc.stdout.readline().strip() != b"ready":
            raise RuntimeError("mem_sampler did not start")

    def stop(self):
        kill_popen(self.proc)
        if self.proc and self.proc.stdout:
            self.proc.stdout.close()

    def read(self):
        with open(self.path, "rb") as f:
            data = f.read()
        magic, version, count, capacity, period_ns, late, realtime = struct.unpack_from("<8s6Q", data, 0)
        if magic != b"MEMSAMP\0" or version != 1:
            raise RuntimeError("bad sampler file")
        t, avail, anon = [], [], []
        for i in range(count):
            a, b, c = struct.unpack_from("<3Q", data, 64 + 24 * i)
            t.append(a)
            avail.append(b * KiB)
            anon.append(c * KiB)
        return {"t": t, "avail": avail, "anon": anon, "late": late, "realtime": realtime}


def build_sampler(workdir):
    src = os.path.join(REPO, "bench", "mem_sampler.c")
    out = os.path.join(workdir, "mem_sampler")
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        sys.exit("guard_reaction: no C compiler (cc) to build bench/mem_sampler.c")
    subprocess.run([cc, "-O2", "-Wall", "-o", out, src], check=True)
    return out


def read_progress(path):
    """The balloon's progress file (tests/tools/balloon_progress.h, version 1)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if len(data) < 4096:
        return None
    h = struct.unpack_from("<8s11Q", data, 0)
    if h[0] != b"BALLOON\0" or h[1] != 1:
        return None
    keys = ["magic", "version", "cap_bytes", "bytes", "t_ns", "t_start_ns", "t_cap_ns",
            "t_term_ns", "bytes_term", "workers", "log_count", "log_capacity"]
    p = dict(zip(keys, h))
    n = min(p["log_count"], p["log_capacity"])
    entries = []
    for i in range(n):
        t, b = struct.unpack_from("<2Q", data, 4096 + 16 * i)
        if t:
            entries.append((t, b))
    entries.sort()
    p["log"] = entries
    return p


def read_progress_header(path):
    """Just the header fields the wait loop needs (cheap: no log parsing)."""
    try:
        with open(path, "rb") as f:
            data = f.read(96)
    except OSError:
        return None
    if len(data) < 96:
        return None
    h = struct.unpack_from("<8s11Q", data, 0)
    if h[0] != b"BALLOON\0" or h[1] != 1:
        return None
    return {"t_cap_ns": h[6], "t_term_ns": h[7]}


def bytes_at(prog, t):
    """Balloon bytes at monotonic time t (ns), interpolated within its chunk log."""
    pts = [(prog["t_start_ns"], 0)] + prog["log"]
    if t <= pts[0][0]:
        return 0.0
    for (t0, b0), (t1, b1) in zip(pts, pts[1:]):
        if t <= t1:
            return b0 + (b1 - b0) * (t - t0) / max(1, t1 - t0)
    return float(pts[-1][1])


def time_at_bytes(prog, b):
    """When the balloon's byte count reached b (ns, interpolated); None if it never did."""
    pts = [(prog["t_start_ns"], 0)] + prog["log"]
    if b <= 0:
        return pts[0][0]
    for (t0, b0), (t1, b1) in zip(pts, pts[1:]):
        if b1 >= b:
            return t0 + (t1 - t0) * (b - b0) / max(1, b1 - b0)
    return None


def find_crossing(samples, prog, level, pred, t_start, t_stop):
    """First time MemAvailable met the guard's predicate, before t_stop (the signal).

    Between samples k and k+1 MemAvailable is taken as sample k minus what the balloon
    touched since t_k (its chunk log has sub-ms timestamps), so a sampler that was late
    cannot hide or delay the crossing. A sample that meets the predicate without the
    balloon explaining it (another process allocated) counts too, interpolated linearly.
    Returns (t_ns, "balloon-log" | "sample") or (None, "").
    """
    ts, av = samples["t"], samples["avail"]
    stop = t_stop if t_stop is not None else float("inf")
    for k in range(len(ts)):
        if ts[k] > stop:
            break
        t_next = ts[k + 1] if k + 1 < len(ts) else float("inf")
        if t_next < t_start:
            continue
        if pred(av[k]):
            if k == 0 or ts[k] < t_start:
                continue
            a_prev, a_now = av[k - 1], av[k]
            frac = (a_prev - level) / (a_prev - a_now) if a_prev > a_now else 1.0
            return ts[k - 1] + (ts[k] - ts[k - 1]) * min(1.0, max(0.0, frac)), "sample"
        if prog is None:
            continue
        t_c = time_at_bytes(prog, bytes_at(prog, max(ts[k], t_start)) + (av[k] - level))
        if t_c is not None and t_c <= min(t_next, stop):
            return max(t_c, ts[k]), "balloon-log"
    return None, ""


def headroom_at(samples, prog, level, t):
    """MemAvailable - level at time t: the last sample at or before t minus what the balloon
    touched since. (Interpolating toward the next sample would be wrong: after the signal
    the balloon exits and MemAvailable jumps back up.)"""
    ts, av = samples["t"], samples["avail"]
    k = None
    for i in range(len(ts)):
        if ts[i] <= t:
            k = i
        else:
            break
    if k is None:
        return None
    return av[k] - level - (bytes_at(prog, t) - bytes_at(prog, ts[k]))


class ExitWatcher(threading.Thread):
    """Records when `pid` exits (pidfd POLLIN); optionally reaps a Popen child right after."""

    def __init__(self, pid, popen=None):
        super().__init__(daemon=True)
        self.pid, self.popen = pid, popen
        self.t_exit = self.t_reaped = None
        self.missed = False
        try:
            self.fd = os.pidfd_open(pid)
        except OSError:
            self.fd = None
            self.missed = True
            self.t_exit = now_ns()

    def run(self):
        if self.fd is None:
            return
        p = select.poll()
        p.register(self.fd, select.POLLIN)
        while True:
            if p.poll(1000):
                self.t_exit = now_ns()
                break
        if self.popen is not None:
            self.popen.wait()
            self.t_reaped = now_ns()
        os.close(self.fd)


class Backstop:
    """A cgroup-v1 memory child with a hard limit, for the balloon only."""

    def __init__(self, tag, limit=MEMCG_LIMIT):
        self.dir = None
        self.note = ""
        mount = own = None
        try:
            with open("/proc/mounts") as f:
                for line in f:
                    dev, mnt, fstype, opts = line.split()[:4]
                    if fstype == "cgroup" and "memory" in opts.split(","):
                        mount = mnt
            with open("/proc/self/cgroup") as f:
                for line in f:
                    _, ctrls, path = line.rstrip("\n").split(":", 2)
                    if "memory" in ctrls.split(","):
                        own = path
        except OSError as e:
            self.note = f"no memcg backstop: {e}"
            return
        if not mount or own is None:
            self.note = "no memcg backstop: no cgroup-v1 memory hierarchy"
            return
        d = os.path.join(mount, own.lstrip("/"), tag)
        try:
            os.mkdir(d)
            with open(os.path.join(d, "memory.limit_in_bytes"), "w") as f:
                f.write(str(limit))
            self.dir = d
        except OSError as e:
            self.note = f"no memcg backstop: {d}: {e}"
            try:
                os.rmdir(d)
            except OSError:
                pass

    def wrap(self, argv):
        if not self.dir:
            return argv
        procs = os.path.join(self.dir, "cgroup.procs")
        return ["/bin/sh", "-c", 'echo $$ > "$0" || exit 97; exec "$@"', procs] + argv

    def failcnt(self):
        if not self.dir:
            return None
        try:
            with open(os.path.join(self.dir, "memory.failcnt")) as f:
                return int(f.read())
        except OSError:
            return None

    def remove(self):
        if not self.dir:
            return
        procs = os.path.join(self.dir, "cgroup.procs")
        for _ in range(50):
            try:
                with open(procs) as f:
                    pids = [int(x) for x in f.read().split()]
            except OSError:
                pids = []
            if not pids:
                break
            for pid in pids:
                kill_pid_if(pid, "")
            time.sleep(0.05)
        for _ in range(50):
            try:
                os.rmdir(self.dir)
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.05)
        self.dir = None


# ----------------------------------------------------------------------------------------
# One run


def earlyoom_start(cfg, level_kib, out_path):
    argv = [cfg.earlyoom, "-M", str(level_kib), "-s", "100", "-r", "0"]
    if cfg.earlyoom_nice != 0:
        argv = ["nice", "-n", str(cfg.earlyoom_nice)] + argv
    errf = open(out_path, "wb")
    p = subprocess.Popen(argv, stdout=errf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    errf.close()
    _live.append(p)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        with open(out_path, "rb") as f:
            if b"SIGKILL when" in f.read():
                break
        if p.poll() is not None:
            raise RuntimeError(f"earlyoom exited at start: {open(out_path).read()}")
        time.sleep(0.005)
    else:
        raise RuntimeError("earlyoom: no startup line within 5 s")
    # The startup line comes before its self-test and mlockall(): wait for the lock, so
    # the balloon starts when the poll loop runs.
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        if (proc_status_kib(p.pid, "VmLck") or 0) > 0:
            break
        time.sleep(0.005)
    return p


def earlyoom_victims(out_path):
    victims = []
    try:
        with open(out_path, errors="replace") as f:
            for line in f:
                if line.startswith("sending SIG") and " to process " in line:
                    sig = line.split()[1]
                    pid = int(line.split(" to process ")[1].split()[0])
                    victims.append((sig, pid))
    except OSError:
        pass
    return victims


def wait_pidfile(path, proc, timeout_s=10):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with open(path) as f:
                pids = [int(x) for x in f.read().split()]
            if pids:
                return pids
        except (OSError, ValueError):
            pass
        if proc.poll() is not None:
            return []
        time.sleep(0.002)
    return []


def run_one(cfg, guard, rate_label, rate_arg, rep, run_index, workdir):
    """One reaction run. Returns a dict of raw results (a CSV row)."""
    tag = f"guard_reaction-{os.getpid()}-{run_index}"
    rdir = os.path.join(workdir, f"run{run_index:04d}")
    os.mkdir(rdir)
    prog_path = os.path.join(rdir, "progress.bin")
    pid_path = os.path.join(rdir, "pids.txt")
    samp_path = os.path.join(rdir, "samples.bin")
    ev_path = os.path.join(rdir, "events.jsonl")
    out_path = os.path.join(rdir, f"{guard}.out")
    row = {"schema": SCHEMA, "run": run_index, "guard": guard, "rate_cell": rate_label,
           "rep": rep, "notes": ""}
    notes = []

    foreign = foreign_guards()
    waited = 0.0
    while foreign and waited < 60:
        time.sleep(0.5)
        waited += 0.5
        foreign = foreign_guards()
    if foreign:
        raise RuntimeError(f"another guard is running: {foreign}; refusing to run two at once")
    if waited:
        notes.append(f"waited {waited:.1f}s for a foreign guard to end")

    if meminfo()["MemAvailable"] * KiB < MIN_AVAILABLE_TO_RUN:
        raise RuntimeError(f"MemAvailable below {MIN_AVAILABLE_TO_RUN / GiB:.0f} GiB: not safe to run")
    backstop = Backstop(tag)
    if backstop.note:
        notes.append(backstop.note)
    row["memcg"] = 1 if backstop.dir else 0
    balloon_argv = backstop.wrap([
        cfg.balloon, "--cap", str(CAP_BYTES), "--rate", rate_arg, "--mode", cfg.mode,
        "--timeout", f"{BALLOON_TIMEOUT_S}s", "--progress", prog_path, "--pidfile", pid_path,
        "--oom-score-adj", "1000"] + (["--ignore-term"] if cfg.ignore_term else []))

    sampler = Sampler(cfg.sampler, samp_path, BALLOON_TIMEOUT_S + 30)
    eo = job = watcher = None
    pids = []
    t_job_end = None
    try:
        if cfg.pretouch > 0 and rate_label not in cfg.no_pretouch:
            row["pretouch_gbps"] = pretouch(cfg, backstop, cfg.pretouch)
        # A0 and the level, read just before the run
        mi = meminfo()
        a0 = mi["MemAvailable"] * KiB
        if a0 < MIN_AVAILABLE_TO_RUN:
            raise RuntimeError(f"MemAvailable {a0 / GiB:.1f} GiB < {MIN_AVAILABLE_TO_RUN / GiB:.0f} GiB: not safe")
        level_kib = (a0 - MARGIN_BYTES) // KiB
        level = level_kib * KiB
        total = mi["MemTotal"] * KiB
        row.update(a0_mib=round(a0 / MiB, 1), level_mib=round(level / MiB, 1),
                   mem_total_mib=round(total / MiB, 1), load1=loadavg1())
        sampler.start()
        if guard == "earlyoom":
            eo = earlyoom_start(cfg, level_kib, out_path)
            job = subprocess.Popen(balloon_argv, stdout=subprocess.DEVNULL,
                                   stdin=subprocess.DEVNULL)
        else:
            gargv = [cfg.headroom, "guard", "--min-available", f"{level_kib}KiB", "--grace",
                     cfg.grace, "--events", ev_path, "--json", "--"] + balloon_argv
            outf = open(out_path, "wb")
            errf = open(out_path + ".stderr", "wb")
            job = subprocess.Popen(gargv, stdout=outf, stderr=errf, stdin=subprocess.DEVNULL)
            outf.close()
            errf.close()
        _live.append(job)
        pids = wait_pidfile(pid_path, job)
        if not pids:
            raise RuntimeError(f"balloon did not start ({guard}); see {rdir}")
        bpid = pids[0]
        watcher = ExitWatcher(bpid, job if guard == "earlyoom" else None)
        watcher.start()

        deadline = time.monotonic() + BALLOON_TIMEOUT_S + 5
        killed_by_harness = False
        while watcher.is_alive() and time.monotonic() < deadline:
            watcher.join(0.05)
            prog = read_progress_header(prog_path)
            if prog and prog["t_cap_ns"] and not prog["t_term_ns"] and \
                    now_ns() - prog["t_cap_ns"] > CAP_HOLD_KILL_S * 1e9:
                killed_by_harness = True
                break
        if watcher.is_alive():
            killed_by_harness = True
            for pid in pids:
                kill_pid_if(pid, os.path.basename(cfg.balloon))
            watcher.join(5)
        if killed_by_harness:
            notes.append("no signal: the harness killed the balloon")
        t_job_end = now_ns()
        # ours: the guard exits once the tree is empty
        if guard == "headroom":
            try:
                job.wait(timeout=10)
            except subprocess.TimeoutExpired:
                notes.append("guard did not exit within 10 s of the balloon")
        # let earlyoom see the exit and the sampler see the recovery
        time.sleep(0.2)
    finally:
        if eo is not None:
            kill_popen(eo)
        if job is not None:
            kill_popen(job)
        for pid in pids or []:
            kill_pid_if(pid, os.path.basename(cfg.balloon))
        sampler.stop()
        failcnt = backstop.failcnt()
        backstop.remove()
    row["memcg_failcnt"] = failcnt
    others = foreign_guards()
    if others:
        notes.append(f"another guard appeared during the run: {others}")

    prog = read_progress(prog_path)
    samples = sampler.read()
    row["sampler_late"] = samples["late"]
    row["sampler_rt"] = samples["realtime"]
    ts = samples["t"]
    row["sampler_max_gap_ms"] = round(max((b - a for a, b in zip(ts, ts[1:])), default=0) / 1e6, 2)

    # The guard's own records
    gjson, gevents = {}, []
    if guard == "headroom":
        try:
            text = open(out_path, errors="replace").read()
            i = text.find("{")
            gjson = json.loads(text[i:]) if i >= 0 else {}
        except (OSError, ValueError):
            notes.append("guard JSON unreadable")
        try:
            with open(ev_path) as f:
                gevents = [json.loads(x) for x in f if x.strip()]
        except (OSError, ValueError):
            pass
        row["guard_exit"] = job.returncode if job else None
        row["guard_reason"] = gjson.get("kill_reason")
        row["guard_signal_path"] = gjson.get("signal_path")
        row["guard_cross_to_signal_ms"] = gjson.get("crossing_to_signal_ms")
        row["guard_cross_to_empty_ms"] = gjson.get("crossing_to_empty_ms")
        tr = gjson.get("trigger_available_bytes")
        row["guard_trigger_minus_level_mib"] = round((tr - level) / MiB, 2) if tr else None
        row["guard_notes"] = "; ".join(gjson.get("notes", []))
    else:
        v = earlyoom_victims(out_path)
        row["earlyoom_victims"] = " ".join(f"{s}:{p}" for s, p in v)
        foreign_victims = [p for s, p in v if p not in pids]
        if foreign_victims:
            notes.append(f"earlyoom signalled non-balloon pids {foreign_victims}")

    # Predicates
    if guard == "headroom":
        def pred(a):
            return a < level
    else:
        total_kib, level_pct = mi["MemTotal"], 100.0 * level_kib / mi["MemTotal"]

        def pred(a):
            return (a / KiB) * 100.0 / total_kib <= level_pct

    t_sig, src = None, ""
    if prog and prog["t_term_ns"]:
        t_sig, src = prog["t_term_ns"], "balloon"
    elif guard == "headroom":
        # SIGKILL at once: the balloon cannot time it. The guard's trigger event is written
        # after its signal pass (a few ms late); the balloon's last chunk before it died is
        # within one chunk time (0.5 ms at 8 GB/s) before the kill, unless it sat at the cap.
        t_ev = None
        for e in gevents:
            if e.get("type") in ("trigger", "term", "kill"):
                t_ev = int(e["monotonic_s"] * 1e9)
                break
        if t_ev is not None:
            row["_t_event"] = t_ev
            t_sig, src = t_ev, "guard-event"
            if prog and prog["log"] and not prog["t_cap_ns"] and prog["log"][-1][0] <= t_ev:
                t_sig, src = prog["log"][-1][0], "balloon-last-chunk"
            row["event_minus_signal_ms"] = round((t_ev - t_sig) / 1e6, 3)
    # How the guard's event time compares with the balloon's own clock (validates guard-event)
    if guard == "headroom" and prog and prog["t_term_ns"]:
        for e in gevents:
            if e.get("type") == "trigger":
                row["event_minus_signal_ms"] = round((e["monotonic_s"] * 1e9 - prog["t_term_ns"]) / 1e6, 3)
    row["signal_source"] = src

    t_start = prog["t_start_ns"] if prog else (ts[0] if ts else 0)
    t_cross, how = find_crossing(samples, prog, level, pred, t_start, t_sig)
    row["crossing_from"] = how
    # Fill rate at the level: over the 256 MiB (64 chunks) before the crossing, or before
    # the signal when that came first. (Not before a late signal: past the pre-touched
    # region the VM's faults can slow down, which says nothing about the approach.)
    rate_local = rate_avg = None
    if prog and prog["log"]:
        end_t = min(x for x in (t_sig, t_cross, prog["log"][-1][0]) if x is not None)
        pts = [(t, b) for t, b in [(prog["t_start_ns"], 0)] + prog["log"] if t <= end_t]
        if len(pts) >= 2:
            win = pts[-65:]
            if win[-1][0] > win[0][0]:
                rate_local = (win[-1][1] - win[0][1]) / ((win[-1][0] - win[0][0]) / 1e9)
            if pts[-1][0] > pts[0][0]:
                rate_avg = pts[-1][1] / ((pts[-1][0] - pts[0][0]) / 1e9)
    row["rate_local_gbps"] = round(rate_local / 1e9, 3) if rate_local else None
    row["rate_avg_gbps"] = round(rate_avg / 1e9, 3) if rate_avg else None
    if t_cross is not None and t_sig is not None and t_sig > t_cross + 1e6 and prog:
        row["rate_after_cross_gbps"] = round(
            (bytes_at(prog, t_sig) - bytes_at(prog, t_cross)) / ((t_sig - t_cross) / 1e9) / 1e9, 3)

    row["crossed"] = 1 if t_cross is not None else 0
    row["signalled"] = 1 if t_sig is not None else 0
    detect = past = past_s = t_ref = None
    head_sig = headroom_at(samples, prog, level, t_sig) if (t_sig is not None and prog) else None
    if head_sig is not None and src == "balloon-last-chunk":
        # The kill landed between the last chunk and the guard's event (or the exit): a
        # sample in that window that is lower (another process allocated) is the better value.
        t_hi = min(x for x in (row.get("_t_event"), watcher.t_exit if watcher else None) if x) \
            if (row.get("_t_event") or (watcher and watcher.t_exit)) else t_sig
        window = [a - level for t, a in zip(ts, samples["avail"]) if t_sig <= t <= t_hi]
        if window:
            head_sig = min(head_sig, min(window))
    if head_sig is not None:
        past_s = -head_sig / MiB
    if t_sig is not None and prog:
        if t_cross is not None:
            t_ref = t_cross
            detect = (t_sig - t_cross) / 1e6
            past = (bytes_at(prog, t_sig) - bytes_at(prog, t_cross)) / MiB
        elif head_sig is not None and rate_local:
            # fired before the crossing: head_sig > 0 bytes were still left above the level
            past = -head_sig / MiB
            detect = -head_sig / rate_local * 1e3
            t_ref = t_sig + head_sig / rate_local * 1e9
            notes.append("fired before the crossing")
    row["detect_ms"] = round(detect, 3) if detect is not None else None
    row["past_mib"] = round(past, 2) if past is not None else None
    row["past_mib_sampler"] = round(past_s, 2) if past_s is not None else None
    row["bytes_at_signal_mib"] = round(bytes_at(prog, t_sig) / MiB, 1) if (prog and t_sig) else None

    # Lowest MemAvailable: the samples, and the estimate at the signal (a sampler gap can
    # miss the bottom of the dip; the balloon stops growing at the signal).
    lo = [a - level for t, a in zip(ts, samples["avail"]) if t >= t_start]
    if head_sig is not None:
        lo.append(head_sig)
    row["lowest_minus_level_mib"] = round(min(lo) / MiB, 2) if lo else None
    if t_ref is not None and watcher is not None and watcher.t_exit:
        row["exit_ms"] = round((watcher.t_exit - t_ref) / 1e6, 3)
    t_empty = None
    if guard == "headroom":
        for e in gevents:
            if e.get("type") == "exit":
                t_empty = int(e["monotonic_s"] * 1e9)
    elif watcher is not None:
        t_empty = watcher.t_reaped
    if t_ref is not None and t_empty:
        row["empty_ms"] = round((t_empty - t_ref) / 1e6, 3)
    if t_sig is not None and t_empty:
        row["sig_to_empty_ms"] = round((t_empty - t_sig) / 1e6, 3)
    if t_sig is not None and watcher is not None and watcher.t_exit and not watcher.missed:
        row["sig_to_exit_ms"] = round((watcher.t_exit - t_sig) / 1e6, 3)
    if watcher is not None and watcher.missed:
        notes.append("balloon exit time missed (pidfd_open failed)")
    row["notes"] = "; ".join(notes)
    if not cfg.keep:
        shutil.rmtree(rdir, ignore_errors=True)
    return row


CSV_FIELDS = ["schema", "run", "guard", "rate_cell", "rep", "a0_mib", "level_mib", "mem_total_mib",
              "load1", "memcg", "memcg_failcnt", "crossed", "signalled", "signal_source",
              "detect_ms", "past_mib", "past_mib_sampler", "lowest_minus_level_mib", "exit_ms",
              "empty_ms", "sig_to_empty_ms", "sig_to_exit_ms", "rate_local_gbps", "rate_avg_gbps", "rate_after_cross_gbps", "bytes_at_signal_mib",
              "guard_exit", "guard_reason", "guard_signal_path", "guard_cross_to_signal_ms",
              "guard_cross_to_empty_ms", "guard_trigger_minus_level_mib", "event_minus_signal_ms",
              "earlyoom_victims", "pretouch_gbps", "crossing_from", "sampler_rt", "sampler_late", "sampler_max_gap_ms", "guard_notes", "notes"]


# ----------------------------------------------------------------------------------------
# Warm-up and idle CPU


def warmup(cfg, passes):
    for i in range(passes):
        a0 = meminfo()["MemAvailable"] * KiB
        if a0 < 6 * GiB + MIN_AVAILABLE_TO_RUN - CAP_BYTES:
            log("warm-up skipped: not enough MemAvailable")
            return
        backstop = Backstop(f"guard_reaction-{os.getpid()}-warmup{i}", 6 * GiB + GiB // 2)
        p = subprocess.Popen(backstop.wrap([cfg.balloon, "--cap", "6G", "--mode", cfg.mode,
                                            "--hold", "0", "--timeout", "30s"]),
                             stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        _live.append(p)
        t0 = time.monotonic()
        try:
            p.wait(timeout=40)
        finally:
            kill_popen(p)
            backstop.remove()
        log(f"warm-up pass {i + 1}/{passes}: 6 GiB touched and freed in {time.monotonic() - t0:.2f} s")


def pretouch(cfg, backstop, gib):
    """Touch and free `gib` GiB right before a run. On a VM with free page reporting
    (virtio-balloon, as here) memory freed for ~2 s goes back to the host and the next
    faults run at 0.5-1.5 GB/s instead of 10-17 GB/s; this keeps the run's pages guest-backed.
    Returns the rate it reached (GB/s)."""
    t0 = time.monotonic()
    p = subprocess.Popen(backstop.wrap([cfg.balloon, "--cap", str(int(gib * GiB)), "--mode", cfg.mode,
                                        "--hold", "0", "--timeout", "20s"]),
                         stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    _live.append(p)
    try:
        p.wait(timeout=30)
    finally:
        kill_popen(p)
    return round(gib * GiB / (time.monotonic() - t0) / 1e9, 2)


def idle_cpu(cfg, guard, seconds, workdir):
    """CPU time of a guard left alone for `seconds` with a level far below MemAvailable."""
    level_kib = 2 * GiB // KiB
    path = os.path.join(workdir, f"idle-{guard}.out")
    for _ in range(120):
        if not foreign_guards():
            break
        time.sleep(0.5)
    p = None
    job_pids = []
    try:
        if guard == "headroom":
            outf = open(path, "wb")
            p = subprocess.Popen([cfg.headroom, "guard", "--min-available", f"{level_kib}KiB",
                                  "--json", "--", "sleep", str(int(seconds) + 30)],
                                 stdout=outf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            outf.close()
            _live.append(p)
        else:
            p = earlyoom_start(cfg, level_kib, path)
        time.sleep(1.0)
        job_pids = children_of(p.pid) if guard == "headroom" else []
        ticks0, nice = proc_stat(p.pid)
        ns0 = proc_runtime_ns(p.pid)
        t0 = time.monotonic()
        time.sleep(seconds)
        ticks1, _ = proc_stat(p.pid)
        ns1 = proc_runtime_ns(p.pid)
        dt = time.monotonic() - t0
        rss = proc_status_kib(p.pid, "VmRSS")
    finally:
        kill_popen(p, 3.0)
        for pid in job_pids:  # the guard's `sleep` job, should the guard have left it
            kill_pid_if(pid, "sleep")
    hz = os.sysconf("SC_CLK_TCK")
    polls = None
    if guard == "headroom":
        try:
            text = open(path, errors="replace").read()
            polls = json.loads(text[text.find("{"):]).get("polls")
        except (OSError, ValueError):
            pass
    return {"guard": guard, "seconds": round(dt, 2), "nice": nice,
            "cpu_ms_per_min_ticks": round((ticks1 - ticks0) * 1000.0 / hz * 60.0 / dt, 2),
            "cpu_ms_per_min": round((ns1 - ns0) / 1e6 * 60.0 / dt, 3),
            "rss_kib": rss, "polls": polls}


# ----------------------------------------------------------------------------------------
# Report


def summarize(rows, rate_labels, guards):
    lines = []
    hdr = ("| guard | rate cell | n | signalled | detect ms median / p95 / max | MiB past level median / p95 / max "
           "| lowest MemAvailable - T, MiB (worst / median) | empty ms after crossing, median "
           "| signal to exit ms, median | measured GB/s median (min-max) |")
    lines.append(hdr)
    lines.append("|" + "---|" * 10)
    cells = {}
    for rl in rate_labels:
        for g in guards:
            rs = [r for r in rows if r["guard"] == g and r["rate_cell"] == rl]
            if not rs:
                continue
            det = [r["detect_ms"] for r in rs if r["detect_ms"] is not None]
            past = [r["past_mib"] for r in rs if r["past_mib"] is not None]
            low = [r["lowest_minus_level_mib"] for r in rs if r["lowest_minus_level_mib"] is not None]
            emp = [r["empty_ms"] for r in rs if r.get("empty_ms") is not None]
            s2e = [r["sig_to_exit_ms"] for r in rs if r.get("sig_to_exit_ms") is not None]
            rate = [r["rate_local_gbps"] for r in rs if r["rate_local_gbps"]]
            cells[(g, rl)] = {"det": det, "past": past, "low": low, "n": len(rs),
                              "sig": sum(r["signalled"] for r in rs)}

            def trio(v, fmt="{:.1f}"):
                if not v:
                    return "-"
                return " / ".join(fmt.format(x) for x in (statistics.median(v), pct(v, 95), max(v)))
            lines.append(
                f"| {g} | {rl} | {len(rs)} | {sum(r['signalled'] for r in rs)} | {trio(det)} | {trio(past)} | "
                + (f"{min(low):.0f} / {statistics.median(low):.0f}" if low else "-") + " | "
                + (f"{statistics.median(emp):.1f}" if emp else "-") + " | "
                + (f"{statistics.median(s2e):.1f}" if s2e else "-") + " | "
                + (f"{statistics.median(rate):.2f} ({min(rate):.2f}-{max(rate):.2f})" if rate else "-")
                + " |")
    return lines, cells


def verdicts(cells, rate_labels, idle):
    out = []

    def mark(ok):
        return "PASS" if ok else "FAIL"
    for rl in rate_labels:
        c = cells.get(("headroom", rl))
        if c and c["det"]:
            p95 = pct(c["det"], 95)
            out.append(f"- p95 detection <= 15 ms at {rl}: headroom {p95:.1f} ms -> {mark(p95 <= 15 and c['sig'] == c['n'])}"
                       + ("" if c["sig"] == c["n"] else f" ({c['n'] - c['sig']} runs without a signal)"))
    for rl in [x for x in rate_labels if x in ("8GB/s", "unthrottled")]:
        c = cells.get(("headroom", rl))
        if c and c["low"]:
            worst = min(c["low"])
            out.append(f"- at most 64 MiB below the level at {rl}: headroom worst {worst:.1f} MiB "
                       f"({'above' if worst >= 0 else 'below'} T) -> {mark(worst >= -64)}"
                       + ("" if rl == "8GB/s" else " (informational)"))
    for rl in rate_labels:
        a, b = cells.get(("headroom", rl)), cells.get(("earlyoom", rl))
        if a and b and a["past"] and b["past"]:
            ours = max(statistics.median(a["past"]), OVERSHOOT_FLOOR_MIB)
            theirs = statistics.median(b["past"])
            ours95 = max(pct(a["past"], 95), OVERSHOOT_FLOOR_MIB)
            theirs95 = pct(b["past"], 95)
            out.append(f"- >= 10x less overshoot than earlyoom at {rl}: median {statistics.median(a['past']):.1f} vs "
                       f"{theirs:.1f} MiB, ratio {theirs / ours:.1f}x (p95 {pct(a['past'], 95):.1f} vs {theirs95:.1f} MiB, "
                       f"ratio {theirs95 / ours95:.1f}x; ours floored at {OVERSHOOT_FLOOR_MIB:.0f} MiB) "
                       f"-> {mark(theirs / ours >= 10)}")
    if "headroom" in idle and "earlyoom" in idle:
        a, b = idle["headroom"]["cpu_ms_per_min"], idle["earlyoom"]["cpu_ms_per_min"]
        out.append(f"- idle CPU no higher than earlyoom's: {a:.2f} vs {b:.2f} ms/min -> {mark(a <= b)}")
    return out


# ----------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(
        prog="guard_reaction.py",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=__doc__.split("\n\n")[0] + "\n\n" + "\n\n".join(__doc__.split("\n\n")[1:]),
        epilog="Examples: bench/guard_reaction.py --quick\n"
               "          bench/guard_reaction.py --out runs.csv --json-out summary.json\n"
               "          bench/guard_reaction.py --build-dir build-bench --rates 8GB/s --runs 5")
    ap.add_argument("--build-dir", default="build",
                    help="CMake build directory holding headroom and tests/tools/balloon "
                         "(relative to the repository root; default build, as `make build`)")
    ap.add_argument("--headroom", help="headroom binary (default BUILD/headroom)")
    ap.add_argument("--balloon", help="balloon binary (default BUILD/tests/tools/balloon)")
    ap.add_argument("--earlyoom", default=shutil.which("earlyoom"),
                    help="earlyoom binary (default: from PATH); without one only our guard runs")
    ap.add_argument("--runs", type=int, default=20, help="runs per guard and rate (default 20)")
    ap.add_argument("--quick", action="store_true",
                    help="3 runs, rates 1 and 8 GB/s, 10 s idle: a try-out")
    ap.add_argument("--rates", help="comma list of rate cells (default: "
                    + ",".join(r for r, _ in RATES) + ")")
    ap.add_argument("--guards", default="headroom,earlyoom", help="comma list (default headroom,earlyoom)")
    ap.add_argument("--idle-seconds", type=float, default=60,
                    help="idle CPU measurement per guard, seconds (0 to skip; default 60)")
    ap.add_argument("--grace", default="3s", help="our guard's --grace (default 3s)")
    ap.add_argument("--ignore-term", action="store_true",
                    help="the balloon ignores SIGTERM and keeps filling through the grace "
                         "(a job blocked in a driver call); lowest MemAvailable is the figure")
    ap.add_argument("--mode", default="thp", choices=["thp", "anon"], help="balloon mode (default thp)")
    ap.add_argument("--warmup-passes", type=int, default=1,
                    help="touch and free 6 GiB this many times first (default 1)")
    ap.add_argument("--pretouch", type=float, default=CAP_BYTES / GiB,
                    help="GiB to touch and free right before each run, so the run's faults hit "
                         "guest-backed memory (0 = off; default 5, the balloon's cap)")
    ap.add_argument("--no-pretouch", default="0.25GB/s",
                    help="rate cells without the pre-touch (comma list; default 0.25GB/s: "
                         "a 13 s run outlives its effect anyway)")
    ap.add_argument("--earlyoom-nice", type=int, default=None,
                    help="nice for earlyoom (default: the nice our guard gives itself, read "
                         "from its idle run or -10, so both run at the same priority)")
    ap.add_argument("--out", help="write raw per-run results to this CSV")
    ap.add_argument("--json-out", help="write the summary (tables, idle, verdicts) as JSON")
    ap.add_argument("--keep", action="store_true", help="keep per-run files (in the work dir)")
    ap.add_argument("--stop-earlyoom-daemon", action="store_true",
                    help="SIGTERM an earlyoom that this harness did not start (e.g. the "
                         "packaged service) instead of refusing to run")
    cfg = ap.parse_args()
    cfg.no_pretouch = [x for x in cfg.no_pretouch.split(",") if x]

    if cfg.quick:
        cfg.runs = 3
        if not cfg.rates:
            cfg.rates = ",".join(QUICK_RATES)
        if cfg.idle_seconds == 60:
            cfg.idle_seconds = 10
    build = cfg.build_dir if os.path.isabs(cfg.build_dir) else os.path.join(REPO, cfg.build_dir)
    cfg.headroom = cfg.headroom or os.path.join(build, "headroom")
    cfg.balloon = cfg.balloon or os.path.join(build, "tests", "tools", "balloon")
    for b in (cfg.headroom, cfg.balloon):
        if not os.access(b, os.X_OK):
            sys.exit(f"guard_reaction: {b} missing; build with:\n  cmake -S . -B {cfg.build_dir} -G Ninja "
                     f"-DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build {cfg.build_dir} --target headroom balloon")
    rate_map = dict(RATES)
    rate_labels = cfg.rates.split(",") if cfg.rates else [r for r, _ in RATES]
    for rl in rate_labels:
        if rl not in rate_map:
            sys.exit(f"guard_reaction: unknown rate cell {rl!r}; known: {', '.join(rate_map)}")
    guards = cfg.guards.split(",")
    notes = []
    if "earlyoom" in guards and not cfg.earlyoom:
        notes.append("earlyoom not found: only our guard was measured")
        guards = [g for g in guards if g != "earlyoom"]
    eo_version = ""
    if "earlyoom" in guards:
        r = subprocess.run([cfg.earlyoom, "-v"], capture_output=True, text=True)
        eo_version = (r.stdout + r.stderr).strip().splitlines()[0]

    # No stray guards, no packaged earlyoom daemon.
    for pid, what in foreign_guards():
        if what != "earlyoom":
            continue  # a `headroom guard` (someone's test): run_one waits for it to end
        if cfg.stop_earlyoom_daemon:
            log(f"stopping earlyoom daemon pid {pid}")
            os.kill(pid, signal.SIGTERM)
            time.sleep(0.5)
        else:
            sys.exit(f"guard_reaction: earlyoom pid {pid} is running (a daemon?); stop it first, "
                     "or pass --stop-earlyoom-daemon")
    swap = meminfo().get("SwapTotal", 0)
    if swap:
        notes.append(f"swap present ({swap // 1024} MiB); earlyoom runs with -s 100")

    def on_signal(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_signal)

    workdir = tempfile.mkdtemp(prefix="guard_reaction.")
    started = datetime.datetime.now(datetime.timezone.utc)
    rows, idle = [], {}
    try:
        cfg.sampler = build_sampler(workdir)
        log(f"guard_reaction: work dir {workdir}; {os.cpu_count()} CPUs; "
            f"MemTotal {meminfo()['MemTotal'] / 1024 / 1024:.1f} GiB; {eo_version or 'no earlyoom'}")
        if cfg.idle_seconds > 0:
            for g in guards:
                if g == "earlyoom" and cfg.earlyoom_nice is None:
                    cfg.earlyoom_nice = idle.get("headroom", {}).get("nice", -10)
                log(f"idle: {g} for {cfg.idle_seconds:.0f} s ...")
                idle[g] = idle_cpu(cfg, g, cfg.idle_seconds, workdir)
                log(f"idle: {idle[g]}")
        if cfg.earlyoom_nice is None:
            cfg.earlyoom_nice = -10
        if cfg.warmup_passes:
            warmup(cfg, cfg.warmup_passes)
        run_index = failures = 0
        t_begin = time.monotonic()
        total_runs = len(rate_labels) * cfg.runs * len(guards)
        for rl in rate_labels:
            for rep in range(cfg.runs):
                for g in guards:
                    run_index += 1
                    try:
                        r = run_one(cfg, g, rl, rate_map[rl], rep, run_index, workdir)
                        failures = 0
                    except RuntimeError as e:
                        if "refusing to run two" in str(e):
                            raise
                        failures += 1
                        log(f"run {run_index} failed: {e}")
                        r = {k: None for k in CSV_FIELDS}
                        r.update(schema=SCHEMA, run=run_index, guard=g, rate_cell=rl, rep=rep,
                                 signalled=0, notes=f"run failed: {e}")
                        if failures >= 5:
                            rows.append(r)
                            raise RuntimeError("5 runs in a row failed; stopping") from e
                    rows.append(r)
                    el = time.monotonic() - t_begin
                    log(f"[{run_index}/{total_runs} {el:.0f}s] {g:8s} {rl:11s} rep {rep}: detect "
                        f"{r['detect_ms']} ms, past {r['past_mib']} MiB, lowest-T {r['lowest_minus_level_mib']} MiB, "
                        f"empty {r.get('empty_ms')} ms, rate {r['rate_local_gbps']} GB/s, src {r['signal_source']}"
                        + (f", {r['guard_signal_path']}/{r['guard_reason']}" if g == "headroom" else "")
                        + (f"  [{r['notes']}]" if r["notes"] else ""))
                    time.sleep(0.3)
    except KeyboardInterrupt:
        log("interrupted: cleaning up")
        notes.append("interrupted")
    except RuntimeError as e:
        log(f"stopped: {e}")
        notes.append(f"stopped early: {e}")
    finally:
        cleanup_all()
        if not cfg.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    finished = datetime.datetime.now(datetime.timezone.utc)

    if cfg.out:
        with open(cfg.out, "w", newline="") as f:
            f.write(f"# schema {SCHEMA}: bench/guard_reaction.py raw runs; started {started.isoformat()}; "
                    f"D={MARGIN_BYTES // MiB} MiB cap={CAP_BYTES // MiB} MiB mode={cfg.mode} grace={cfg.grace}; "
                    f"{eo_version or 'no earlyoom'} with -M LEVEL_KiB -s 100 -r 0, nice {cfg.earlyoom_nice}\n")
            w = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore")
            w.writeheader()
            for r in rows:
                w.writerow(r)

    table, cells = summarize(rows, rate_labels, guards)
    ver = verdicts(cells, rate_labels, idle)
    print(f"guard_reaction ({SCHEMA}) {started:%Y-%m-%d %H:%M} UTC, {(finished - started).total_seconds() / 60:.1f} min; "
          f"runs per cell {cfg.runs}; D = 3 GiB; balloon --mode {cfg.mode}; ours --grace {cfg.grace}; "
          f"{eo_version or 'earlyoom: not run'}" + (f" (nice {cfg.earlyoom_nice})" if eo_version else ""))
    print()
    print("\n".join(table))
    print()
    for g, v in idle.items():
        print(f"idle CPU {g}: {v['cpu_ms_per_min']:.2f} ms per minute (schedstat; clock ticks: "
              f"{v['cpu_ms_per_min_ticks']:.0f} ms/min) over {v['seconds']:.0f} s, RSS {v['rss_kib']} KiB, nice {v['nice']}"
              + (f", {v['polls']} polls" if v.get("polls") is not None else ""))
    print()
    print("targets:")
    print("\n".join(ver) if ver else "- (not enough data)")
    # Secondary facts worth knowing
    ours = [r for r in rows if r["guard"] == "headroom"]
    if ours:
        paths = {}
        for r in ours:
            k = f"{r['rate_cell']}: {r.get('guard_signal_path')} / {r.get('guard_reason')}"
            paths[k] = paths.get(k, 0) + 1
        print()
        print("our guard's signal path / trigger reason (runs):")
        for k, n in paths.items():
            print(f"  {k}: {n}")
        for srcname in ("balloon", "balloon-last-chunk"):
            emt = [r["event_minus_signal_ms"] for r in ours
                   if r.get("event_minus_signal_ms") is not None and r["signal_source"] == srcname]
            if emt:
                print(f"guard 'trigger' event time minus the signal time ({srcname}, {len(emt)} runs): median "
                      f"{statistics.median(emt):.3f} ms, range {min(emt):.3f}..{max(emt):.3f} ms")
        early = sum(1 for r in ours if r["signalled"] and not r["crossed"])
        print(f"our guard fired before MemAvailable reached the level in {early} of {len(ours)} runs")
    probs = []
    for r in rows:
        n = "; ".join(x for x in (r["notes"] or "").split("; ") if x and x != "fired before the crossing")
        if n:
            probs.append(f"  run {r['run']} {r['guard']} {r['rate_cell']}: {n}")
    if probs:
        print()
        print("run notes:")
        print("\n".join(probs))
    if notes:
        print()
        print("notes: " + "; ".join(notes))
    if cfg.json_out:
        with open(cfg.json_out, "w") as f:
            json.dump({"schema": SCHEMA, "started": started.isoformat(), "table": table, "idle": idle,
                       "targets": ver, "notes": notes, "earlyoom": eo_version, "runs": cfg.runs}, f, indent=1)
    return 1 if any(n == "interrupted" or n.startswith("stopped early") for n in notes) else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        cleanup_all()
