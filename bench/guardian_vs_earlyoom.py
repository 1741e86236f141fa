#!/usr/bin/env python3
"""guardian_vs_earlyoom: `headroom guardian` against earlyoom on the same scenarios.

Method (docs/guardian.md, "Benchmark against earlyoom"):

  * Isolation. Each guard (earlyoom, or `headroom guardian` WITHOUT --only, the whole-machine
    choice its unit makes) runs with the scenario's processes inside a fresh PID and mount
    namespace (`unshare --pid --fork --mount-proc --kill-child`): its /proc lists only the
    scenario's processes, so it cannot choose anything else on the machine. This script,
    started again with --inner, is the namespace's PID 1 (which both guards never end); it
    starts the balloons and the guard, releases the fill and reaps everything by PID. When
    it ends, the kernel kills whatever is left in the namespace. One guard at a time.
    MemAvailable is still the machine's: the levels are relative to the MemAvailable read
    just before each run, and every run's balloons hold at most 5 GiB in all.
  * Levels equal: earlyoom -M LEVEL_KiB (1.7 turns it into a percentage of MemTotal, the same
    absolute level, docs/sources.md section 9) with -s 100 (no swap condition) and -r 0;
    the guardian --min-available LEVEL_KiB, --warn-available LEVEL+512MiB, --grace 3s (its
    default). Both at the same nice (default -5, the guardian unit's Nice=).
  * GPU memory: a memfd balloon (tests/tools/balloon --mode memfd: filled with fallocate,
    never mapped, so in no RSS and no oom_score, as CUDA memory on GB10) that the fake NVML
    (tests/fakes/fake_nvml.cc, "process PID MIB" with the PID as seen in the namespace)
    reports as a compute process. earlyoom cannot see it; the guardian reads it from NVML.
  * Scenario "victims": a 1.5 GiB RSS bystander holds; then, with the level at
    MemAvailable - 1 GiB, the memfd holder fills toward 3 GiB at 1 GB/s. A run is a wrong
    victim when the first process the guard signalled is not the holder (from earlyoom's
    "sending SIGTERM to process N" lines; the guardian's first `kill` event).
  * Scenario "overshoot": the level at MemAvailable - 3 GiB, an RSS balloon (--mode thp, the
    case both guards see) grows toward 5 GiB at 1 and 8 GB/s (`--overshoot-memfd` adds the
    memfd holder filling toward 3.5 GiB with the level 2 GiB down, reported to NVML). The
    figure is how far below the level MemAvailable went, in MiB (negative: it stayed above),
    from a 1 ms MemAvailable sampler outside the namespace (bench/mem_sampler.c) and, at the
    signal, the last sample minus what the balloon touched since (bench/guard_reaction.py).
  * Scenario "idle": each guard alone in its namespace for --idle-seconds with the level at
    2 GiB: CPU time (utime+stime from /proc/PID/stat, and schedstat's ns), VmRSS and VmHWM,
    and smaps_rollup's Pss, private (Private_Clean + Private_Dirty) and anonymous KiB.
  * Runs interleaved (earlyoom, guardian, earlyoom, guardian ...), N per cell. Before each
    run: a wait while another guard (someone's `headroom guard` or `guardian`) runs on the
    machine, a 5 GiB pre-touch (free page reporting on a VM, docs/guard-benchmark.md
    "Method") and a cgroup-v1 memory backstop of 5.5 GiB around the balloons when one can be
    made.

Needs: Linux, root (unshare --pid, the backstop), cc, util-linux unshare, the headroom and
balloon binaries and the fake NVML (cmake --build BUILD --target headroom headroom-guardian balloon
fake_nvml),
and an earlyoom binary that is NOT a running service: on Debian
  apt-get download earlyoom && dpkg-deb -x earlyoom_*.deb /tmp/earlyoom-root
  --earlyoom /tmp/earlyoom-root/usr/bin/earlyoom
Standard library only. Not part of `make test`: CI has no earlyoom.
"""

import argparse
import csv
import datetime
import json
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guard_reaction as gr  # noqa: E402  (the shared instruments: sampler, balloon log, backstop)

SCHEMA = "guardian_vs_earlyoom/2"  # 2: pss_kib, private_kib and anon_kib of the idle rows
KiB, MiB, GiB = gr.KiB, gr.MiB, gr.GiB
GUARDS = ["earlyoom", "guardian"]
RATES = {"1GB/s": "1GB", "8GB/s": "8GB"}
BYSTANDER_BYTES = 3 * GiB // 2
HOLDER_BYTES = 3 * GiB            # victims: the memfd holder's cap (NVML reports this much)
VICTIM_MARGIN = 1 * GiB           # victims: the level sits this far below MemAvailable
OVERSHOOT_MARGIN = 3 * GiB        # overshoot, RSS balloon (as bench/guard_reaction.py)
OVERSHOOT_CAP = 5 * GiB
MEMFD_MARGIN = 2 * GiB            # overshoot, memfd holder
MEMFD_CAP = 7 * GiB // 2
BACKSTOP_BYTES = 11 * GiB // 2    # every run holds at most 5 GiB
MIN_AVAILABLE_TO_RUN = 9 * GiB    # refuse a run below this
WARN_ABOVE = 512 * MiB            # the guardian's warning level above its kill level
IDLE_LEVEL = 2 * GiB
RUN_TIMEOUT_S = 30                # each balloon's own --timeout
CAP_HOLD_S = 3.0                  # at its cap this long without a signal: the run ends
TARGET_BELOW_MIB = 64.0
SIGNAL_NAMES = {signal.SIGTERM: "SIGTERM", signal.SIGKILL: "SIGKILL"}

log = gr.log


def pct(values, q):
    return gr.pct(values, q)


def spread(values, fmt="{:.1f}"):
    """'median (min-max)' of a list, or '-'."""
    if not values:
        return "-"
    return (fmt.format(statistics.median(values)) + " (" + fmt.format(min(values)) + " to "
            + fmt.format(max(values)) + ")")


# ----------------------------------------------------------------------------------------
# Inside the namespace (--inner SPEC): this process is PID 1.


def read_status_kib(pid, key):
    return gr.proc_status_kib(pid, key)


def smaps_rollup_kib(pid):
    """Pss, private (Private_Clean + Private_Dirty: the pages no other process maps) and
    anonymous KiB from /proc/PID/smaps_rollup; {} when it cannot be read."""
    fields = {}
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 2 and parts[0].endswith(":") and parts[1].isdigit():
                    fields[parts[0][:-1]] = int(parts[1])
    except OSError:
        return {}
    return {"pss_kib": fields.get("Pss"), "anon_kib": fields.get("Anonymous"),
            "private_kib": fields.get("Private_Clean", 0) + fields.get("Private_Dirty", 0)}


def ns_listing():
    """Every process this namespace's /proc shows: [(pid, comm)]."""
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            out.append((int(name), gr.read_comm(int(name))))
    return sorted(out)


class Gated:
    """A child forked now that execs `argv` once released (its pid is known before it runs)."""

    def __init__(self, argv, env, out_path):
        r, w = os.pipe()
        fd = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        pid = os.fork()
        if pid == 0:
            try:
                os.close(w)
                null = os.open("/dev/null", os.O_RDONLY)
                os.dup2(null, 0)
                os.dup2(fd, 1)
                os.dup2(fd, 2)
                if os.read(r, 1) != b"g":
                    os._exit(1)
                os.execve(argv[0], argv, env)
            finally:
                os._exit(127)
        os.close(r)
        os.close(fd)
        self.pid, self.gate = pid, w
        self.status = self.t_exit = None
        self.survived = False  # still running when the run ended it

    def release(self):
        os.write(self.gate, b"g")
        os.close(self.gate)
        self.gate = None

    def poll(self):
        if self.status is None:
            got, st = os.waitpid(self.pid, os.WNOHANG)
            if got == self.pid:
                self.status, self.t_exit = st, gr.now_ns()
        return self.status

    def end(self):
        if self.gate is not None:
            os.close(self.gate)
            self.gate = None
        if self.poll() is None:
            self.survived = True
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            _, st = os.waitpid(self.pid, 0)
            self.status, self.t_exit = st, self.t_exit or gr.now_ns()

    def describe(self):
        """'ended by SIGTERM' (the balloon exits 143 from its handler), 'ended by SIGKILL',
        'survived' (the run ended it), or 'exit N' (it ended by itself)."""
        st = self.status
        if st is None or self.survived:
            return "survived" if self.survived else None
        if os.WIFSIGNALED(st):
            return "ended by " + SIGNAL_NAMES.get(os.WTERMSIG(st), f"signal {os.WTERMSIG(st)}")
        if os.WEXITSTATUS(st) == 128 + signal.SIGTERM:
            return "ended by SIGTERM"
        return f"exit {os.WEXITSTATUS(st)}"


class FakePopen:
    """The poll() that gr.wait_pidfile asks of a Popen."""

    def __init__(self, gated):
        self.gated = gated

    def poll(self):
        return self.gated.poll()


def wait_guard_ready(kind, g, out_path, deadline_s=10.0):
    """earlyoom: its limits line and mlockall; the guardian: its `watching:` line."""
    deadline = time.monotonic() + deadline_s
    want = b"SIGKILL when" if kind == "earlyoom" else b"watching:"
    while time.monotonic() < deadline:
        if g.poll() is not None:
            raise RuntimeError(f"{kind} exited at start: {open(out_path, errors='replace').read()}")
        with open(out_path, "rb") as f:
            if want in f.read():
                break
        time.sleep(0.005)
    else:
        raise RuntimeError(f"{kind}: not ready within {deadline_s:.0f} s")
    if kind == "earlyoom":
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline and (read_status_kib(g.pid, "VmLck") or 0) == 0:
            time.sleep(0.005)


def substitute(argv, values):
    return [a.format(**values) if "{" in a else a for a in argv]


def proc_cpu(pid):
    ticks, nice = gr.proc_stat(pid)
    return ticks, nice, gr.proc_runtime_ns(pid)


def inner_main(spec_path):
    with open(spec_path) as f:
        spec = json.load(f)
    rdir = spec["rdir"]
    res = {"pid": os.getpid(), "procs": {}, "notes": []}
    if os.getpid() != 1:
        raise SystemExit("guardian_vs_earlyoom --inner: not PID 1 of a new PID namespace")
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": rdir, "XDG_CONFIG_HOME": rdir,
           "LANG": "C", "LC_ALL": "C"}
    procs, guard = {}, None
    try:
        # 0. PID 2 is kthreadd on a host, and earlyoom 1.7 never ends it (the guardian reads
        # the kernel-thread flag instead): a `sleep` takes that pid here, so that no scenario
        # process has it and both guards choose among the same processes.
        placeholder = Gated(["/bin/sleep", str(RUN_TIMEOUT_S * 4)], env, os.devnull)
        procs["pid2-sleep"] = placeholder
        res["procs"]["pid2-sleep"] = {"pid": placeholder.pid}
        placeholder.release()
        if placeholder.pid != 2:
            raise RuntimeError(f"the placeholder got pid {placeholder.pid}, not 2")
        # 1. The balloons, each forked and held at its gate until it is in the backstop.
        for p in spec["procs"]:
            g = Gated(p["argv"], env, os.path.join(rdir, p["role"] + ".out"))
            procs[p["role"]] = g
            res["procs"][p["role"]] = {"pid": g.pid}
            if spec.get("backstop_procs"):
                with open(spec["backstop_procs"], "w") as f:
                    f.write(str(g.pid))
            if not p.get("late"):
                g.release()
                gr.wait_pidfile(os.path.join(rdir, p["role"] + ".pids"), FakePopen(g))
            if p.get("wait_rss_kib"):
                deadline = time.monotonic() + 20
                while (read_status_kib(g.pid, "VmRSS") or 0) < p["wait_rss_kib"]:
                    if time.monotonic() > deadline or g.poll() is not None:
                        raise RuntimeError(f"{p['role']} did not reach its RSS")
                    time.sleep(0.01)
        # 2. The level, from MemAvailable now (after the bystander holds its memory).
        a0 = gr.meminfo()["MemAvailable"] * KiB
        if a0 < spec["min_available_to_run"]:
            raise RuntimeError(f"MemAvailable {a0 / GiB:.1f} GiB: not safe to run")
        level = (a0 - spec["margin_bytes"]) // KiB * KiB if spec["margin_bytes"] else spec["level_bytes"]
        # The warning level stays under MemTotal (the guardian refuses one at or above it).
        warn = min(level + WARN_ABOVE, gr.meminfo()["MemTotal"] * KiB - 64 * MiB)
        values = {"LEVEL_KIB": level // KiB, "WARN_KIB": warn // KiB}
        res.update(a0=a0, level=level)
        nvml = ["scenario gb10"] + [f"process {procs[p['role']].pid} {p['nvml_mib']}"
                                    for p in spec["procs"] if p.get("nvml_mib")]
        with open(os.path.join(rdir, "nvml"), "w") as f:
            f.write("\n".join(nvml) + "\n")
        res["namespace_before_guard"] = ns_listing()
        # 3. The guard.
        gspec = spec["guard"]
        genv = dict(env, HEADROOM_FAKE_NVML_SCRIPT=os.path.join(rdir, "nvml"))
        gout = os.path.join(rdir, "guard.out")
        guard = Gated(substitute(gspec["argv"], values), genv, gout)
        guard.release()
        wait_guard_ready(gspec["kind"], guard, gout)
        res["guard_pid"] = guard.pid
        res["namespace_with_guard"] = ns_listing()
        if spec.get("idle_s"):
            res["idle"] = idle_measure(guard.pid, spec["idle_s"])
        # 4. The fill.
        res["t_release"] = gr.now_ns()
        for p in spec["procs"]:
            if p.get("late"):
                procs[p["role"]].release()
        watch = [procs[r] for r in spec.get("watch", [])]
        deadline = time.monotonic() + RUN_TIMEOUT_S + 5
        while watch and time.monotonic() < deadline:
            for g in procs.values():
                g.poll()
            if all(g.status is not None for g in watch):
                break
            capped = [gr.read_progress_header(os.path.join(rdir, r + ".progress")) for r in spec["watch"]]
            if all(h and h["t_cap_ns"] and gr.now_ns() - h["t_cap_ns"] > CAP_HOLD_S * 1e9
                   for h in capped):
                res["notes"].append("every watched balloon held its cap: the run ended it")
                break
            time.sleep(0.002)
        else:
            if watch:
                res["notes"].append("run timed out")
        time.sleep(spec.get("after_s", 0.3))
        for g in procs.values():
            g.poll()
        res["t_end"] = gr.now_ns()
    except RuntimeError as e:
        res["error"] = str(e)
    finally:
        if guard is not None and guard.poll() is None:
            os.kill(guard.pid, signal.SIGTERM)
            for _ in range(300):
                if guard.poll() is not None:
                    break
                time.sleep(0.01)
            guard.end()
        for g in procs.values():
            g.end()
        if guard is not None:
            res["guard_status"] = guard.describe()
        for role, g in procs.items():
            res["procs"][role].update(status=g.describe(), t_exit=g.t_exit)
        with open(os.path.join(rdir, "result.json"), "w") as f:
            json.dump(res, f)
    return 0


def idle_measure(pid, seconds):
    time.sleep(1.0)
    t0, (ticks0, nice, ns0) = time.monotonic(), proc_cpu(pid)
    time.sleep(seconds)
    ticks1, _, ns1 = proc_cpu(pid)
    dt = time.monotonic() - t0
    hz = os.sysconf("SC_CLK_TCK")
    return {"seconds": round(dt, 2), "nice": nice,
            "cpu_ms_per_min_ticks": round((ticks1 - ticks0) * 1000.0 / hz * 60.0 / dt, 2),
            "cpu_ms_per_min": round((ns1 - ns0) / 1e6 * 60.0 / dt, 3),
            "vmrss_kib": read_status_kib(pid, "VmRSS"), "vmhwm_kib": read_status_kib(pid, "VmHWM"),
            **smaps_rollup_kib(pid)}


# ----------------------------------------------------------------------------------------
# Outside: one run


def guard_argv(cfg, kind, rdir, dry_run=False):
    nice = ["/usr/bin/nice", "-n", str(cfg.nice)] if cfg.nice else []
    if kind == "earlyoom":
        return nice + [cfg.earlyoom, "-M", "{LEVEL_KIB}", "-s", "100", "-r", "0"] + \
            (["--dryrun", "-d"] if dry_run else [])
    return nice + [cfg.headroom, "guardian", "--min-available", "{LEVEL_KIB}KiB",
                   "--warn-available", "{WARN_KIB}KiB", "--grace", cfg.grace,
                   "--events", os.path.join(rdir, "events.jsonl"),
                   "--journal", os.path.join(rdir, "journal.db"), "--no-journal",
                   "--nvml-lib", cfg.fake_nvml] + (["--dry-run"] if dry_run else [])


def balloon(cfg, rdir, role, cap, mode, rate="0", extra=()):
    return [cfg.balloon, "--cap", str(cap), "--mode", mode, "--rate", rate,
            "--timeout", f"{RUN_TIMEOUT_S}s", "--progress", os.path.join(rdir, role + ".progress"),
            "--pidfile", os.path.join(rdir, role + ".pids")] + list(extra)


def other_guards():
    """earlyoom, `headroom guard` or `headroom guardian` processes on the machine now."""
    found = list(gr.foreign_guards())
    for name in os.listdir("/proc"):
        if name.isdigit():
            argv = gr.read_cmdline(int(name))
            if len(argv) >= 2 and os.path.basename(argv[0]) == "headroom" and argv[1] == "guardian":
                found.append((int(name), "headroom guardian"))
            elif argv and os.path.basename(argv[0]) == "headroom-guardian":  # its lean worker
                found.append((int(name), "headroom guardian"))
    return found


def run_inner(cfg, spec, rdir, notes):
    """Starts this script as PID 1 of a new PID + mount namespace; waits (bounded)."""
    spec_path = os.path.join(rdir, "spec.json")
    with open(spec_path, "w") as f:
        json.dump(spec, f)
    argv = ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child",
            sys.executable, os.path.abspath(__file__), "--inner", spec_path]
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=open(os.path.join(rdir, "inner.err"), "wb"))
    gr._live.append(p)
    limit = spec.get("idle_s", 0) + RUN_TIMEOUT_S + 30
    try:
        p.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        notes.append(f"namespace still running after {limit} s: killed")
    gr.kill_popen(p, 2.0)  # --kill-child: the namespace's PID 1, and so all of it, dies too
    try:
        with open(os.path.join(rdir, "result.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        err = open(os.path.join(rdir, "inner.err"), errors="replace").read()[-2000:]
        raise RuntimeError(f"no result from the namespace: {err}")


def first_signals(kind, rdir):
    """[(signal, pid as seen in the namespace)] in the order the guard sent them."""
    if kind == "earlyoom":
        return gr.earlyoom_victims(os.path.join(rdir, "guard.out"))
    out = []
    try:
        with open(os.path.join(rdir, "events.jsonl")) as f:
            for line in f:
                try:
                    e = json.loads(line)
                except ValueError:
                    continue
                if e.get("type") == "kill":
                    out.append((e.get("signal", "?"), e["victim"]["pid"]))
                elif e.get("type") == "escalate":
                    out.append(("SIGKILL", e.get("pid")))
    except OSError:
        pass
    return out


def lowest_below(samples, prog, level, t0, t1):
    """How far below the level MemAvailable went in [t0, t1] (MiB; negative: stayed above),
    from the samples and, at the balloon's signal or last chunk, the last sample minus what it
    touched since (a sampler gap cannot hide the bottom of the dip)."""
    lo = [a - level for t, a in zip(samples["t"], samples["avail"]) if t0 <= t <= t1]
    if prog and prog["log"]:
        t_sig = prog["t_term_ns"] or prog["log"][-1][0]
        h = gr.headroom_at(samples, prog, level, t_sig)
        if h is not None:
            lo.append(h)
    return round(-min(lo) / MiB, 2) if lo else None


def fill_rate_gbps(prog):
    """The balloon's rate over its last 256 MiB before the signal (or its last chunk)."""
    if not prog or not prog["log"]:
        return None
    end = prog["t_term_ns"] or prog["log"][-1][0]
    pts = [(t, b) for t, b in [(prog["t_start_ns"], 0)] + prog["log"] if t <= end][-65:]
    if len(pts) < 2 or pts[-1][0] <= pts[0][0]:
        return None
    return round((pts[-1][1] - pts[0][1]) / ((pts[-1][0] - pts[0][0]) / 1e9) / 1e9, 3)


def run_one(cfg, scenario, kind, cell, rep, index, workdir):
    rdir = os.path.join(workdir, f"run{index:04d}-{scenario}-{kind}")
    os.mkdir(rdir)
    row = {"schema": SCHEMA, "run": index, "scenario": scenario, "guard": kind, "cell": cell,
           "rep": rep}
    notes = []
    waited = 0.0
    while other_guards() and waited < 120:
        time.sleep(0.5)
        waited += 0.5
    if other_guards():
        raise RuntimeError(f"another guard runs on the machine: {other_guards()}")
    if waited:
        notes.append(f"waited {waited:.0f} s for another guard to end")
    if gr.meminfo()["MemAvailable"] * KiB < MIN_AVAILABLE_TO_RUN:
        raise RuntimeError("MemAvailable too low: not safe to run")
    spec = {"rdir": rdir, "min_available_to_run": MIN_AVAILABLE_TO_RUN - OVERSHOOT_CAP,
            "guard": {"kind": kind, "argv": guard_argv(cfg, kind, rdir)}, "procs": []}
    if scenario == "victims":
        spec["procs"] = [
            {"role": "bystander", "argv": balloon(cfg, rdir, "bystander", BYSTANDER_BYTES, "anon"),
             "wait_rss_kib": BYSTANDER_BYTES // KiB - 8 * 1024},
            {"role": "holder", "argv": balloon(cfg, rdir, "holder", HOLDER_BYTES, "memfd", "1GB"),
             "late": True, "nvml_mib": HOLDER_BYTES // MiB}]
        spec.update(margin_bytes=VICTIM_MARGIN, watch=["holder"], fill="holder")
    elif scenario == "overshoot":
        rate = RATES[cell.split()[0]]
        if cell.endswith("memfd"):
            spec["procs"] = [{"role": "holder", "late": True, "nvml_mib": MEMFD_CAP // MiB,
                              "argv": balloon(cfg, rdir, "holder", MEMFD_CAP, "memfd", rate)}]
            spec.update(margin_bytes=MEMFD_MARGIN, watch=["holder"], fill="holder")
        else:
            spec["procs"] = [{"role": "balloon", "late": True,
                              "argv": balloon(cfg, rdir, "balloon", OVERSHOOT_CAP, "thp", rate)}]
            spec.update(margin_bytes=OVERSHOOT_MARGIN, watch=["balloon"], fill="balloon")
    elif scenario == "idle":
        spec.update(margin_bytes=0, level_bytes=IDLE_LEVEL, idle_s=cfg.idle_seconds, watch=[])
    elif scenario == "isolation":
        # Dry runs with a level already crossed: each guard lists what it would choose from.
        spec["guard"]["argv"] = guard_argv(cfg, kind, rdir, dry_run=True)
        spec["procs"] = [
            {"role": "bystander", "argv": balloon(cfg, rdir, "bystander", 64 * MiB, "anon"),
             "wait_rss_kib": 60 * 1024},
            {"role": "holder", "argv": balloon(cfg, rdir, "holder", 64 * MiB, "memfd"),
             "nvml_mib": 64}]
        mi = gr.meminfo()
        spec.update(margin_bytes=0, min_available_to_run=0, idle_s=1.5, watch=[],
                    level_bytes=min(mi["MemAvailable"] + 262144, mi["MemTotal"] - 131072) * KiB)
    backstop = gr.Backstop(f"guardian_vs_earlyoom-{os.getpid()}-{index}", BACKSTOP_BYTES) \
        if scenario in ("victims", "overshoot") else None
    if backstop is not None:
        spec["backstop_procs"] = os.path.join(backstop.dir, "cgroup.procs") if backstop.dir else None
        if backstop.note:
            notes.append(backstop.note)
    sampler = None
    try:
        if backstop is not None and cfg.pretouch:
            row["pretouch_gbps"] = gr.pretouch(cfg, backstop, OVERSHOOT_CAP / GiB)
        if scenario in ("victims", "overshoot"):
            sampler = gr.Sampler(cfg.sampler, os.path.join(rdir, "samples.bin"), RUN_TIMEOUT_S + 30)
            sampler.start()
        row["host_processes"] = sum(1 for n in os.listdir("/proc") if n.isdigit())
        res = run_inner(cfg, spec, rdir, notes)
    finally:
        if sampler is not None:
            sampler.stop()
        if backstop is not None:
            row["memcg_failcnt"] = backstop.failcnt()
            backstop.remove()
    if res.get("error"):
        raise RuntimeError(res["error"])
    notes += res.get("notes", [])
    row.update(a0_mib=round(res["a0"] / MiB, 1), level_mib=round(res["level"] / MiB, 1),
               load1=gr.loadavg1(), guard_status=res.get("guard_status"))
    ns_pids = {pid for pid, _ in res.get("namespace_with_guard", [])}
    row["namespace"] = " ".join(f"{pid}:{comm}" for pid, comm in res.get("namespace_with_guard", []))
    sigs = first_signals(kind, rdir)
    role_of = {v["pid"]: r for r, v in res["procs"].items()}
    role_of[1] = "pid-1-runner"
    row["signals"] = " ".join(f"{s}:{role_of.get(p, p)}" for s, p in sigs)
    outside = [p for _, p in sigs if p not in ns_pids]
    if outside:
        notes.append(f"signalled pids not in the namespace: {outside}")
    for r, v in res["procs"].items():
        row[f"{r}_end"] = v.get("status")
    if scenario == "idle":
        row.update(res["idle"])
    elif scenario == "isolation":
        row["isolation"] = isolation_view(kind, rdir, ns_pids)
    else:
        row["first_signalled"] = role_of.get(sigs[0][1], str(sigs[0][1])) if sigs else "none"
        row["first_signal"] = sigs[0][0] if sigs else ""
        row["wrong_victim"] = int(row["first_signalled"] != spec["fill"])
        prog = gr.read_progress(os.path.join(rdir, spec["fill"] + ".progress"))
        samples = sampler.read()
        t1 = res["t_end"]
        row["below_level_mib"] = lowest_below(samples, prog, res["level"], res["t_release"], t1)
        row["rate_gbps"] = fill_rate_gbps(prog)
        row["fill_mib_at_signal"] = round(gr.bytes_at(prog, prog["t_term_ns"]) / MiB, 1) \
            if prog and prog["t_term_ns"] else None
        row["sampler_max_gap_ms"] = round(max((b - a for a, b in zip(samples["t"], samples["t"][1:])),
                                              default=0) / 1e6, 2)
    row["notes"] = "; ".join(notes)
    if not cfg.keep:
        shutil.rmtree(rdir, ignore_errors=True)
    return row


def isolation_view(kind, rdir, ns_pids):
    """What the guard says it chose from, with every pid checked against the namespace."""
    text = open(os.path.join(rdir, "guard.out"), errors="replace").read()
    seen = set()
    if kind == "earlyoom":
        for line in text.splitlines():  # -d: "pid N: badness ..." per process it looked at
            if line.startswith("pid ") and ": badness" in line:
                seen.add(int(line.split()[1].rstrip(":")))
    else:
        for line in open(os.path.join(rdir, "events.jsonl")):
            e = json.loads(line)
            if e.get("type") == "choice":
                msg = e.get("choice") or e.get("message", "")
                for part in msg.split("pid ")[1:]:
                    num = part.split()[0].rstrip(",);:")
                    if num.isdigit():
                        seen.add(int(num))
                break
    return {"pids_named": sorted(seen), "all_in_namespace": seen <= ns_pids, "namespace": sorted(ns_pids)}


CSV_FIELDS = ["schema", "run", "scenario", "guard", "cell", "rep", "a0_mib", "level_mib", "load1",
              "host_processes", "pretouch_gbps", "memcg_failcnt", "signals", "first_signalled",
              "first_signal", "wrong_victim", "below_level_mib", "rate_gbps", "fill_mib_at_signal",
              "bystander_end", "holder_end", "balloon_end", "guard_status", "seconds", "nice",
              "cpu_ms_per_min", "cpu_ms_per_min_ticks", "vmrss_kib", "vmhwm_kib", "pss_kib",
              "private_kib", "anon_kib",
              "sampler_max_gap_ms", "namespace", "notes"]


# ----------------------------------------------------------------------------------------
# Report


def summarize(rows):
    """Markdown tables and the target verdicts."""
    lines, targets = [], []
    ok = [r for r in rows if not (r.get("notes") or "").startswith("run failed")]
    vic = [r for r in ok if r["scenario"] == "victims"]
    if vic:
        lines += ["| guard | runs | first signalled: holder / bystander / other | wrong victims "
                  "| holder ended | bystander ended | MiB below the level, median (min to max) |",
                  "|---|---|---|---|---|---|---|"]
        for g in GUARDS:
            rs = [r for r in vic if r["guard"] == g]
            if not rs:
                continue
            first = [r["first_signalled"] for r in rs]
            lines.append(
                f"| {g} | {len(rs)} | {first.count('holder')} / {first.count('bystander')} / "
                f"{len(rs) - first.count('holder') - first.count('bystander')} | "
                f"{sum(r['wrong_victim'] for r in rs)} | "
                f"{sum(1 for r in rs if str(r.get('holder_end', '')).startswith('ended'))} | "
                f"{sum(1 for r in rs if str(r.get('bystander_end', '')).startswith('ended'))} | "
                f"{spread([r['below_level_mib'] for r in rs if r['below_level_mib'] is not None])} |")
        ours = [r for r in vic if r["guard"] == "guardian"]
        if ours:
            w = sum(r["wrong_victim"] for r in ours)
            targets.append(f"- wrong victims, guardian: {w} of {len(ours)} (target 0) -> "
                           + ("PASS" if w == 0 else "FAIL"))
        lines.append("")
    ovs = [r for r in ok if r["scenario"] == "overshoot"]
    cells = []
    for r in ovs:
        if r["cell"] not in cells:
            cells.append(r["cell"])
    if ovs:
        lines += ["| guard | cell | runs | first signal | MiB below the level, median (min to max) "
                  "| p10 / p90 | fill GB/s, median (min to max) |", "|---|---|---|---|---|---|---|"]
        for c in cells:
            med = {}
            for g in GUARDS:
                rs = [r for r in ovs if r["guard"] == g and r["cell"] == c]
                below = [r["below_level_mib"] for r in rs if r["below_level_mib"] is not None]
                if not rs:
                    continue
                kinds = sorted({r["first_signal"] or "none" for r in rs})
                lines.append(f"| {g} | {c} | {len(rs)} | {', '.join(kinds)} | {spread(below)} | "
                             + (f"{pct(below, 10):.1f} / {pct(below, 90):.1f}" if below else "-") + " | "
                             + spread([r["rate_gbps"] for r in rs if r["rate_gbps"]], "{:.2f}") + " |")
                if below:
                    med[g] = statistics.median(below)
            if "guardian" in med:
                ours = max(med["guardian"], 0.0)
                t = f"- overshoot {c}: guardian median {med['guardian']:.1f} MiB below the level " \
                    f"(target <= {TARGET_BELOW_MIB:.0f}) -> {'PASS' if ours <= TARGET_BELOW_MIB else 'FAIL'}"
                if "earlyoom" in med:
                    theirs = max(med["earlyoom"], 0.0)
                    t += f"; earlyoom {med['earlyoom']:.1f} MiB, a tenth is {theirs / 10:.1f} -> " \
                         + ("PASS" if ours <= theirs / 10 else "FAIL")
                targets.append(t)
        lines.append("")
    idl = [r for r in ok if r["scenario"] == "idle"]
    if idl:
        lines += ["| guard | rounds | seconds each | CPU ms per minute, schedstat: median (min to max) "
                  "| utime+stime ms per minute | VmRSS KiB | VmHWM KiB | Pss KiB | private KiB "
                  "| anonymous KiB | nice |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        med = {}
        for g in GUARDS:
            rs = [r for r in idl if r["guard"] == g]
            if not rs:
                continue
            cpu = [r["cpu_ms_per_min"] for r in rs]
            med[g] = (statistics.median(cpu), statistics.median([r["vmrss_kib"] for r in rs]),
                      statistics.median([r["vmhwm_kib"] for r in rs]))
            lines.append(f"| {g} | {len(rs)} | {statistics.median([r['seconds'] for r in rs]):.0f} | "
                         f"{spread(cpu, '{:.2f}')} | "
                         f"{spread([r['cpu_ms_per_min_ticks'] for r in rs], '{:.0f}')} | "
                         f"{spread([r['vmrss_kib'] for r in rs], '{:.0f}')} | "
                         f"{spread([r['vmhwm_kib'] for r in rs], '{:.0f}')} | "
                         + " | ".join(spread([r.get(k) or 0 for r in rs], '{:.0f}')
                                      for k in ("pss_kib", "private_kib", "anon_kib"))
                         + f" | {rs[0]['nice']} |")
        if len(med) == 2:
            a, b = med["guardian"], med["earlyoom"]
            targets.append(f"- idle CPU: guardian {a[0]:.2f} vs earlyoom {b[0]:.2f} ms per minute -> "
                           + ("PASS" if a[0] <= b[0] else "FAIL"))
            targets.append(f"- idle RSS: guardian {a[1]:.0f} vs earlyoom {b[1]:.0f} KiB (VmHWM {a[2]:.0f} vs "
                           f"{b[2]:.0f}) -> " + ("PASS" if a[1] <= b[1] else "FAIL"))
        lines.append("")
    iso = [r for r in rows if r["scenario"] == "isolation"]
    for r in iso:
        v = r.get("isolation") or {}
        lines.append(f"isolation, {r['guard']}: namespace {v.get('namespace')}, pids it named "
                     f"{v.get('pids_named')}: all in the namespace: {v.get('all_in_namespace')} "
                     f"(machine: {r.get('host_processes')} processes)")
    return lines, targets


# ----------------------------------------------------------------------------------------


def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog="guardian_vs_earlyoom.py", formatter_class=argparse.RawDescriptionHelpFormatter,
        description=__doc__,
        epilog="Example: bench/guardian_vs_earlyoom.py --build-dir build-test \\\n"
               "    --earlyoom /tmp/earlyoom-root/usr/bin/earlyoom --runs 5 --json out.json --csv out.csv")
    ap.add_argument("--inner", help=argparse.SUPPRESS)
    ap.add_argument("--build-dir", default="build",
                    help="CMake build directory with headroom, tests/tools/balloon and the fake NVML")
    ap.add_argument("--headroom", help="headroom binary (default BUILD/headroom)")
    ap.add_argument("--balloon", help="balloon binary (default BUILD/tests/tools/balloon)")
    ap.add_argument("--fake-nvml", help="fake NVML (default BUILD/tests/fakes/libnvidia-ml-fake.so)")
    ap.add_argument("--earlyoom", default=shutil.which("earlyoom"), help="earlyoom binary (required)")
    ap.add_argument("--runs", type=int, default=5, help="runs per guard and cell (default 5)")
    ap.add_argument("--victim-runs", type=int, help="runs per guard of 'victims' (default --runs)")
    ap.add_argument("--scenarios", default="isolation,victims,overshoot,idle",
                    help="comma list (default isolation,victims,overshoot,idle)")
    ap.add_argument("--rates", default="1GB/s,8GB/s", help="overshoot rates (default 1GB/s,8GB/s)")
    ap.add_argument("--overshoot-memfd", action="store_true",
                    help="also the memfd holder in the overshoot scenario (earlyoom cannot see it)")
    ap.add_argument("--idle-seconds", type=float, default=60, help="idle time per guard (default 60)")
    ap.add_argument("--idle-rounds", type=int, default=1, help="idle rounds per guard (default 1)")
    ap.add_argument("--grace", default="3s", help="the guardian's --grace (default 3s, its default)")
    ap.add_argument("--nice", type=int, default=-5, help="nice of both guards (default -5, the unit's)")
    ap.add_argument("--no-pretouch", dest="pretouch", action="store_false",
                    help="skip the 5 GiB touch-and-free before each run")
    ap.add_argument("--json", help="write the rows, tables and verdicts as JSON to this file")
    ap.add_argument("--csv", help="write the rows as CSV to this file")
    ap.add_argument("--keep", action="store_true", help="keep the per-run files")
    cfg = ap.parse_args(argv)
    cfg.mode = "thp"  # gr.pretouch reads it
    build = cfg.build_dir if os.path.isabs(cfg.build_dir) else os.path.join(gr.REPO, cfg.build_dir)
    cfg.headroom = cfg.headroom or os.path.join(build, "headroom")
    cfg.balloon = cfg.balloon or os.path.join(build, "tests", "tools", "balloon")
    cfg.fake_nvml = cfg.fake_nvml or os.path.join(build, "tests", "fakes", "libnvidia-ml-fake.so")
    return cfg


def plan(cfg):
    """[(scenario, cell, rep, guard)] in run order: the guards interleaved in every cell."""
    order = []
    scen = cfg.scenarios.split(",")
    if "isolation" in scen:
        order += [("isolation", "dry run", 0, g) for g in GUARDS]
    if "victims" in scen:
        for rep in range(cfg.victim_runs or cfg.runs):
            order += [("victims", "1GB/s memfd", rep, g) for g in GUARDS]
    if "overshoot" in scen:
        cells = [f"{r} rss" for r in cfg.rates.split(",")]
        if cfg.overshoot_memfd:
            cells += [f"{r} memfd" for r in cfg.rates.split(",")]
        for c in cells:
            for rep in range(cfg.runs):
                order += [("overshoot", c, rep, g) for g in GUARDS]
    if "idle" in scen:
        for rep in range(cfg.idle_rounds):
            order += [("idle", f"{cfg.idle_seconds:.0f} s", rep, g) for g in GUARDS]
    return order


def main(argv):
    cfg = parse_args(argv)
    if cfg.inner:
        return inner_main(cfg.inner)
    for b in (cfg.headroom, cfg.balloon, cfg.fake_nvml, cfg.earlyoom):
        if not b or not os.access(b, os.R_OK):
            sys.exit(f"guardian_vs_earlyoom: {b or 'earlyoom'} missing (see --help)")
    if os.geteuid() != 0 or not shutil.which("unshare"):
        sys.exit("guardian_vs_earlyoom: needs root and unshare (a PID namespace per run)")
    for r in cfg.rates.split(","):
        if r not in RATES:
            sys.exit(f"guardian_vs_earlyoom: unknown rate {r}; known: {', '.join(RATES)}")
    eo = subprocess.run([cfg.earlyoom, "-v"], capture_output=True, text=True)
    eo_version = (eo.stdout + eo.stderr).strip().splitlines()[0]

    def on_signal(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_signal)
    command = "bench/guardian_vs_earlyoom.py " + " ".join(shlex.quote(a) for a in argv)
    workdir = tempfile.mkdtemp(prefix="guardian_vs_earlyoom.")
    started = datetime.datetime.now(datetime.timezone.utc)
    rows, notes = [], []
    try:
        cfg.sampler = gr.build_sampler(workdir)
        order = plan(cfg)
        log(f"guardian_vs_earlyoom: {len(order)} runs; work dir {workdir}; {os.cpu_count()} CPUs; "
            f"MemTotal {gr.meminfo()['MemTotal'] * KiB / GiB:.1f} GiB; {eo_version}")
        for i, (scen, cell, rep, g) in enumerate(order, 1):
            try:
                r = run_one(cfg, scen, g, cell, rep, i, workdir)
            except RuntimeError as e:
                if "another guard" in str(e):
                    raise
                r = {"schema": SCHEMA, "run": i, "scenario": scen, "guard": g, "cell": cell,
                     "rep": rep, "notes": f"run failed: {e}"}
            rows.append(r)
            if len(r.get("signals", "").split()) > 4:  # a dry run signals again every 100 ms
                r["signals"] = " ".join(r["signals"].split()[:4]) + " ..."
            log(f"[{i}/{len(order)}] {scen} {cell} {g}: " + ", ".join(
                f"{k}={r.get(k)}" for k in ("signals", "below_level_mib", "rate_gbps", "cpu_ms_per_min",
                                              "vmrss_kib", "isolation", "notes") if r.get(k) not in (None, "")))
            time.sleep(0.3)
    except KeyboardInterrupt:
        notes.append("interrupted")
    except RuntimeError as e:
        notes.append(f"stopped early: {e}")
    finally:
        gr.cleanup_all()
        if not cfg.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    finished = datetime.datetime.now(datetime.timezone.utc)
    table, targets = summarize(rows)
    head = (f"guardian_vs_earlyoom ({SCHEMA}) {started:%Y-%m-%d %H:%M}-{finished:%H:%M} UTC; {eo_version}; "
            f"both at nice {cfg.nice}; guardian --grace {cfg.grace}; load average at the end "
            f"{gr.loadavg1():.2f}")
    print(head)
    print(f"command: {command}")
    print()
    print("\n".join(table))
    print()
    print("targets:")
    print("\n".join(targets) if targets else "- (not enough data)")
    failed = [r for r in rows if (r.get("notes") or "")]
    if failed:
        print()
        print("run notes:")
        for r in failed:
            print(f"  run {r['run']} {r['scenario']} {r['cell']} {r['guard']}: {r['notes']}")
    if notes:
        print("notes: " + "; ".join(notes))
    if cfg.csv:
        with open(cfg.csv, "w", newline="") as f:
            f.write(f"# schema {SCHEMA}; {head}; command: {command}\n")
            w = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore")
            w.writeheader()
            for r in rows:
                w.writerow(r)
    if cfg.json:
        with open(cfg.json, "w") as f:
            json.dump({"schema": SCHEMA, "started": started.isoformat(), "finished": finished.isoformat(),
                       "command": command, "earlyoom": eo_version, "nice": cfg.nice, "table": table,
                       "targets": targets, "notes": notes, "rows": rows}, f, indent=1)
    return 1 if notes else 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    finally:
        gr.cleanup_all()
