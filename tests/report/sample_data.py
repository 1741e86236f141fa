#!/usr/bin/env python3
"""Sample data for the report page (docs/report-data.md), and the pages filled with it.

    python3 tests/report/sample_data.py [OUTDIR]     # default /tmp/report-samples

writes, for each sample, NAME.json (the data object) and NAME.html (share/report/report.html
with the data substituted exactly as `headroom report` does it):

- gb10-24h: a GB10-like training run sampled every second for 24 h (86,400 rows) and
  downsampled to 2,000 min/max buckets. A power-cap throttle (5h00-5h40), another GPU
  process (9h00-9h20), a clock collapse (14h00-14h45), evaluation spikes every 2 h, a 3 s
  memory spike at 7h13, and a leak from 21h30 that the guard warns about and kills.
- nogpu-small: 20 min of a machine without a GPU, every 2 s, memory only, no log, no
  events, with a 90 s hole in the samples (drawn as a break in the lines).
- edge-tiny: one row of a discrete GPU, optional fields null, an unknown event kind.

The figures follow docs: GB10 100 W sustained / 240 W rated / 2400 MHz normal / 500-850 MHz
degraded (docs/gpu.md), the guard's default kill level max(4 GiB, 8 % of MemTotal) and warn
level twice that (docs/guard.md), explain's 1.5x slowdown rule (docs/explain.md).
"""

import json
import math
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report_contract as rc  # noqa: E402

GIB = 1 << 30
H = 3600.0
REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TEMPLATE = os.path.join(REPO, "share", "report", "report.html")
BUCKETS = 2000


def fmt_gib(b):
    return "%.2f GiB" % (b / GIB)


def gb10_day():
    rnd = random.Random(20261129)
    rows = 86400
    interval = 1.0
    total = 130663165952  # GB10 MemTotal, 121.7 GiB
    kill_level = max(4 * GIB, int(total * 0.08))
    warn_level = 2 * kill_level
    throttle = (5 * H, 5 * H + 40 * 60)
    thermal_bit = (5 * H + 10 * 60, 5 * H + 30 * 60)
    contention = (9 * H, 9 * H + 20 * 60)
    collapse = (14 * H + 10, 14 * H + 45 * 60)
    leak_start = 21.5 * H
    evals = [k * 2 * H for k in range(1, 12)]  # 3 min evaluation every 2 h

    t_list, used, avail, cached, gpu_w, sys_w, temp, hot, clock, reasons = ([] for _ in range(10))
    tmp = 41.0
    t_kill = t_warn = None
    after_kill = False
    for i in range(rows):
        t = i * interval + rnd.uniform(0.0, 0.02)
        in_eval = any(e <= t < e + 180 for e in evals)
        loading = 120 <= t < 600
        training = t >= 600 and not after_kill
        # Memory: model load, a sawtooth from the allocator, eval spikes, a 3 s spike, the leak.
        if t < 120 or after_kill:
            u = 6.2 * GIB + rnd.uniform(-0.05, 0.05) * GIB
        elif loading:
            u = (6.2 + 78 * (t - 120) / 480) * GIB
        else:
            u = (84 + 0.8 * ((t % 900) / 900) + rnd.uniform(-0.1, 0.1)) * GIB
            if in_eval:
                u += 9 * GIB
            if 7 * H + 13 * 60 <= t < 7 * H + 13 * 60 + 3:
                u += 14 * GIB
            if contention[0] <= t < contention[1]:
                u += 12 * GIB * min(1.0, (t - contention[0]) / 120)
            if t >= leak_start:
                u += (t - leak_start) * 0.00497 * GIB
        u = int(u)
        a = total - u
        cache_nominal = (2 + 20 * min(1.0, t / (6 * H))) * GIB
        c = int(min(cache_nominal, a * 0.8))
        if training and t_warn is None and a < warn_level:
            t_warn = t
        if training and t_kill is None and a < kill_level:
            t_kill = t
            after_kill = True
        # GPU: power, clock and reasons by phase.
        why = "none"
        if t < 120 or after_kill:
            p, clk, target, why = rnd.gauss(11, 0.6), 208, 41, "gpu_idle"
        elif loading:
            p, clk, target = rnd.gauss(30, 2), 2405, 50
        elif collapse[0] <= t < collapse[1]:
            p, clk, target = rnd.gauss(42, 2.5), rnd.randint(610, 780), 55
        elif throttle[0] <= t < throttle[1]:
            p, clk, target = rnd.gauss(100, 1.2), rnd.randint(1890, 2110), 87
            why = "sw_power_cap|sw_thermal_slowdown" if thermal_bit[0] <= t < thermal_bit[1] else "sw_power_cap"
        elif in_eval:
            p, clk, target = rnd.gauss(70, 4), 2405, 66
        else:
            p = rnd.gauss(98.5, 3.5)
            if rnd.random() < 0.003:
                p = rnd.uniform(125, 150)  # GB10's 100 ms power loop lets single readings swing
            clk = 2405 + rnd.randint(-25, 15)
            target = 71 + 3 * math.sin(2 * math.pi * t / 86400)
            if throttle[0] - 600 <= t < throttle[0]:
                target = 84  # heating up into the throttle
        tmp += (target - tmp) / 600 + rnd.gauss(0, 0.15)
        t_list.append(t)
        used.append(u)
        avail.append(a)
        cached.append(c)
        gpu_w.append(round(max(0.0, p), 2))
        sys_w.append(round(max(0.0, p) + 38 + rnd.gauss(0, 2), 2))
        temp.append(int(round(tmp)))
        hot.append(int(round(tmp + 6 + rnd.gauss(0, 1))))
        clock.append(int(clk))
        reasons.append(why)
    assert t_kill is not None and t_warn is not None

    # Step records every 50 steps from 600 s to the kill; one 180 s pause per evaluation.
    steps_t, steps_rate = [], []
    t, step = 600.0, 0
    pending_evals = list(evals)

    def rate_at(x):
        if collapse[0] <= x < collapse[1]:
            return 0.55
        if throttle[0] <= x < throttle[1]:
            return 1.2
        if contention[0] <= x < contention[1]:
            return 1.15
        return 2.0

    step_records = []
    while True:
        dt = 50 / rate_at(t) * rnd.uniform(0.97, 1.03)
        if pending_evals and t + dt >= pending_evals[0]:
            dt += 180
            pending_evals.pop(0)
        if t + dt >= t_kill:
            break
        t += dt
        step += 50
        steps_t.append(t)
        steps_rate.append(50 / dt)
        step_records.append((t, step))
    baseline = 2.0

    def steps_between(t0, t1):
        inside = [s for (x, s) in step_records if t0 <= x <= t1]
        return inside[0], inside[-1]

    def window(t0, t1, verdict, evidence, advice, also=()):
        first, last = steps_between(t0, t1)
        rates = [r for x, r in zip(steps_t, steps_rate) if t0 <= x <= t1]
        mean_rate = sum(rates) / len(rates)
        return {"t": round(t0, 3), "end_t": round(t1, 3), "first_step": first, "last_step": last,
                "factor": round(baseline / mean_rate, 3), "peak_factor": round(baseline / min(rates), 3),
                "verdict": verdict, "also": list(also), "evidence": evidence, "unavailable": [], "advice": advice}

    slowdowns = [
        window(throttle[0], throttle[1], "thermal",
               ["+5:00:00 clock event reason sw_power_cap set in 2400 of 2400 samples",
                "+5:10:00 sw_thermal_slowdown set in 1200 of 2400 samples; temperature 84 -> 87 C"],
               "expected platform behaviour: GB10 sustains about 100 W against its 240 W rating; "
               "do not retune batch size or precision for it"),
        window(contention[0], contention[1], "contention",
               ["+9:00:02 gpu_process_started: PID 48211 python3 serve.py",
                "+9:01:00 memory_pressure: PSI memory some avg10 12.4 %"],
               "another job shared the GPU or the pool: stop it or run the jobs one at a time"),
        window(collapse[0], collapse[1], "clock-collapse",
               ["+14:00:10 SM clock 690 MHz against a normal 2400 MHz at 42.1 W with no clock event reason"],
               "the degraded state is cleared by a full power-off (unplug for 60 s), not a reboot"),
    ]

    events = [
        {"t": throttle[0] - 90, "end_t": None, "kind": "power_plateau",
         "text": "power flat at 99.6 W near the sustained 100 W while the temperature rose 4 °C (80 → 84 °C)"},
        {"t": throttle[0], "end_t": throttle[1], "kind": "throttle", "reason": "sw_power_cap",
         "text": "clock event reason sw_power_cap set (software power cap)"},
        {"t": thermal_bit[0], "end_t": thermal_bit[1], "kind": "throttle", "reason": "sw_thermal_slowdown",
         "text": "clock event reason sw_thermal_slowdown set (software thermal slowdown)"},
        # Hostile text on purpose: the page must show it verbatim, and it must not end the script.
        {"t": contention[0] + 2, "end_t": contention[1], "kind": "contention",
         "text": "GPU process 48211 started: python3 serve.py --model '<llama>' && echo \"</script><!--\""},
        {"t": contention[0] + 60, "end_t": None, "kind": "memory_pressure",
         "text": "PSI memory some avg10 12.4 % (threshold 10 %)"},
        {"t": collapse[0], "end_t": collapse[1], "kind": "clock_collapse",
         "text": "SM clock 690 MHz against a normal 2400 MHz at 42.1 W with no clock event reason "
                 "(GB10 degraded band; cleared only by a full power-off)"},
        {"t": round(t_warn, 3), "end_t": None, "kind": "guard_warn",
         "text": "MemAvailable %s below the warn level %s" % (fmt_gib(total - used[int(t_warn)]), fmt_gib(warn_level))},
        {"t": round(t_kill, 3), "end_t": None, "kind": "guard_kill",
         "text": "MemAvailable %s below the kill level %s: SIGTERM to 14 processes, SIGKILL after the 3 s grace; "
                 "tree empty after 3.4 s" % (fmt_gib(total - used[int(t_kill)]), fmt_gib(kill_level))},
    ]

    duration = t_list[-1]
    bucket_s = duration / BUCKETS
    gap = 3 * interval

    def ds(values, nd):
        return rc.downsample(t_list, values, duration, bucket_s, gap, nd)

    peak_i = max(range(rows), key=lambda k: used[k])
    min_i = min(range(rows), key=lambda k: avail[k])
    temp_i = max(range(rows), key=lambda k: temp[k])
    throttled = {}
    for r in reasons:
        for name in r.split("|"):
            if name not in ("none", "gpu_idle"):
                throttled[name] = throttled.get(name, 0) + interval
    data = {
        "schema_version": 1,
        "title": "run 12: python train.py --config llama3-8b-lora.yaml",
        "generator": "headroom (tests/report/sample_data.py)",
        "generated": "2026-11-30T10:05:00Z",
        "host": "spark-1",
        "device": "NVIDIA GB10",
        "platform": {"name": "gb10", "sustained_power_w": 100, "rated_power_w": 240,
                     "normal_sm_clock_mhz": 2400, "degraded_sm_clock_mhz": [500, 850]},
        "start": "2026-11-29T10:00:00.000Z",
        "duration_s": round(duration, 3),
        "sampling": {"rows": rows, "interval_s": interval, "buckets": BUCKETS, "bucket_s": round(bucket_s, 3),
                     "method": "minmax"},
        "mem_total_bytes": total,
        "plan": {"estimate_bytes": 92 * GIB,
                 "text": "headroom plan: Llama-3-8B LoRA, bf16, batch 8, sequence 4096"},
        "guard": {"kill_level_bytes": kill_level, "warn_level_bytes": warn_level},
        "step_baseline_per_s": baseline,
        "series": {
            "mem_used_bytes": ds(used, 0),
            "mem_available_bytes": ds(avail, 0),
            "mem_cached_bytes": ds(cached, 0),
            "gpu_power_w": ds(gpu_w, 2),
            "system_power_w": ds(sys_w, 2),
            "gpu_temp_c": ds(temp, 1),
            "max_sensor_temp_c": ds(hot, 1),
            "sm_clock_mhz": ds(clock, 0),
            "step_rate_per_s": rc.downsample(steps_t, steps_rate, duration, bucket_s, math.inf, 3),
        },
        "events": events,
        "slowdowns": slowdowns,
        "summary": {
            "peak_used_bytes": used[peak_i], "peak_used_t": round(t_list[peak_i], 3),
            "min_available_bytes": avail[min_i], "min_available_t": round(t_list[min_i], 3),
            "peak_job_bytes": used[peak_i] - int(6.2 * GIB), "peak_job_source": "pool use above the level before the job",
            "gpu_energy_j": round(sum(gpu_w) * interval, 1),
            "system_energy_j": round(sum(sys_w) * interval, 1),
            "mean_gpu_power_w": round(sum(gpu_w) / rows, 2),
            "peak_gpu_power_w": max(gpu_w),
            "peak_gpu_temp_c": float(temp[temp_i]), "peak_gpu_temp_t": round(t_list[temp_i], 3),
            "throttled_s": throttled,
            "clock_collapse_s": round(collapse[1] - collapse[0], 3),
            "steps": step,
        },
        "sources": {"samples": "/home/me/runs/12/samples.csv", "log": "/home/me/runs/12/train.log",
                    "events": "/home/me/runs/12/events.jsonl"},
        "notes": ["explain: log read as tqdm, %d steps in %d intervals (timed by timestamps), 1 segment"
                  % (step, len(steps_t))],
    }
    return data


def nogpu_small():
    rnd = random.Random(7)
    interval = 2.0
    total = 33612865536  # a 31.3 GiB x86 box
    t_list, used, avail, cached, swap = [], [], [], [], []
    for i in range(645):
        t = i * interval + rnd.uniform(0.0, 0.01)
        if 600 <= t < 690:
            continue  # suspended: no samples for 90 s
        u = int((3.1 + 18.5 * min(1.0, t / 900) + rnd.uniform(-0.2, 0.2)) * GIB)
        t_list.append(t)
        used.append(u)
        avail.append(total - u)
        cached.append(int(min(total - u - 1 * GIB, (1.5 + 6 * t / 1290) * GIB)))
        swap.append(int(max(0.0, (t - 900) / 390) * 1.2 * GIB))
    duration = t_list[-1]
    rows = len(t_list)

    def ds(values):
        return rc.downsample(t_list, values, duration, interval, 3 * interval, 0)

    peak_i = max(range(rows), key=lambda k: used[k])
    min_i = min(range(rows), key=lambda k: avail[k])
    return {
        "schema_version": 1,
        "title": "samples.csv",
        "generator": "headroom (tests/report/sample_data.py)",
        "generated": "2026-11-30T10:05:00Z",
        "host": "dev-vm",
        "device": None,
        "platform": {"name": "none", "sustained_power_w": None, "rated_power_w": None,
                     "normal_sm_clock_mhz": None, "degraded_sm_clock_mhz": None},
        "start": "2026-11-29T22:50:00.000+00:00",
        "duration_s": round(duration, 3),
        "sampling": {"rows": rows, "interval_s": interval, "buckets": rows, "bucket_s": interval, "method": "minmax"},
        "mem_total_bytes": total,
        "plan": None,
        "guard": None,
        "step_baseline_per_s": None,
        "series": {
            "mem_used_bytes": ds(used),
            "mem_available_bytes": ds(avail),
            "mem_cached_bytes": ds(cached),
            "swap_used_bytes": ds(swap),
        },
        "events": [],
        "slowdowns": None,
        "summary": {"peak_used_bytes": used[peak_i], "peak_used_t": round(t_list[peak_i], 3),
                    "min_available_bytes": avail[min_i], "min_available_t": round(t_list[min_i], 3)},
        "sources": {"samples": "samples.csv", "log": None, "events": None},
        "notes": ["samples: no GPU (NVML not found: libnvidia-ml.so.1: cannot open shared object file)"],
    }


def edge_tiny():
    """The smallest run there is: one row of a discrete GPU, no MemTotal, a plan without a
    guard, a log with no slowdowns, an event kind the page does not know, a zero-length band."""
    one = lambda v: {"t": [0.0], "min": [v], "max": [v], "mean": [v]}  # noqa: E731
    return {
        "schema_version": 1, "title": None, "generator": None, "generated": None, "host": None,
        "device": "NVIDIA RTX 6000 Ada Generation",
        "platform": {"name": "discrete", "sustained_power_w": 300, "rated_power_w": None,
                     "normal_sm_clock_mhz": None, "degraded_sm_clock_mhz": None},
        "start": "2026-11-29T10:00:00+00:00", "duration_s": 0,
        "sampling": {"rows": 1, "interval_s": 30.0, "buckets": 1, "bucket_s": 30.0, "method": "minmax"},
        "mem_total_bytes": None, "plan": {"estimate_bytes": 8 * GIB, "text": None}, "guard": None,
        "step_baseline_per_s": None,
        "series": {"mem_available_bytes": one(60 * GIB), "gpu_mem_used_bytes": one(3 * GIB), "gpu_power_w": one(71.5)},
        "events": [{"t": 0, "end_t": None, "kind": "guard_start", "text": "guard started"},
                   {"t": 0, "end_t": 0, "kind": "throttle", "reason": "hw_slowdown", "text": "hw_slowdown set"}],
        "slowdowns": [],
        "summary": {"throttled_s": {}},
        "sources": {"samples": "samples.csv", "log": "train.log", "events": None},
        "notes": [],
    }


SAMPLES = {"gb10-24h": gb10_day, "nogpu-small": nogpu_small, "edge-tiny": edge_tiny}


def write_samples(outdir, template_path=TEMPLATE):
    """Write NAME.json and NAME.html for every sample; return {name: (json_path, html_path)}."""
    os.makedirs(outdir, exist_ok=True)
    template = rc.read_text(template_path)
    out = {}
    for name, make in SAMPLES.items():
        data = make()
        errs = rc.validate(data)
        if errs:
            raise ValueError("%s: sample breaks the contract: %s" % (name, "; ".join(errs[:5])))
        jpath = os.path.join(outdir, name + ".json")
        hpath = os.path.join(outdir, name + ".html")
        with open(jpath, "w", encoding="utf-8") as f:
            json.dump(data, f, ensure_ascii=False, separators=(",", ":"))
        with open(hpath, "w", encoding="utf-8") as f:
            f.write(rc.fill_template(template, data))
        out[name] = (jpath, hpath)
    return out


if __name__ == "__main__":
    outdir = sys.argv[1] if len(sys.argv) > 1 else "/tmp/report-samples"
    for name, (j, h) in write_samples(outdir).items():
        print("%s: %s (%d bytes), %s (%d bytes)" % (name, j, os.path.getsize(j), h, os.path.getsize(h)))
