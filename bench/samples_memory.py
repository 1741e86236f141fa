#!/usr/bin/env python3
"""Peak RSS of `headroom report --samples` and `headroom explain --samples` on a large
samples file whose rows are spaced wider than its header's interval.

Also `report --log L`, which keeps the rows of the log's slowdown windows for their verdicts,
and each command's wall time (median).

Writes a samples CSV of about --mb MB (rows 10 s apart under a header saying interval_ms=100,
the case that grew the report page with the rows) and a JSON-lines log whose steps span the
same time, one step each 100 s; with --slow-share F a stretch of that share of the run in its
middle takes 250 s a step (a slowdown window explain judges, whose rows and look-back explain
keeps). Then runs each command --runs times per binary and reads the child's peak RSS
(ru_maxrss from wait4). Prints, per binary and command, the median and the spread (max - min)
of the runs, and the page size `report` wrote. docs/report-data.md and docs/explain.md quote
the figures.

Usage: bench/samples_memory.py --binary build/headroom [--binary /old/headroom] [--mb 100]
       [--runs 3] [--slow-share 0.1]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROW = ("{t},61,99.50,2405,,none,96,{e},130663165952,{a},4000000000,110000000000,0,1.25,0.50,"
       "12.5,,,41.5\n")
COLUMNS = ("timestamp,temperature.gpu,power.draw,clocks.sm,clocks.mem,clocks_event_reasons,"
           "utilization.gpu,energy,mem.total,mem.available,mem.cached,mem.free,swap.used,"
           "psi.memory.some.avg10,psi.memory.full.avg10,cpu.util,memory.total,memory.used,"
           "hwmon.spbm.sys_total.power\n")
START = 1764410400  # 2025-11-29T10:00:00Z
SPACING_S = 10


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%S.000+00:00", time.gmtime(t))


def write_inputs(folder, mb, slow_share=0.0):
    samples = os.path.join(folder, "samples.csv")
    rows = 0
    with open(samples, "w") as f:
        f.write(f'# headroom samples schema_version=1 host=bench device="NVIDIA GB10" '
                f"platform=gb10 interval_ms=100 started={iso(START)}\n")
        f.write("# units: timestamp=ISO8601, temperature.gpu=C, power.draw=W, "
                "hwmon.spbm.sys_total.power=W\n")
        f.write(COLUMNS)
        while f.tell() < mb * 1000 * 1000:
            t = START + rows * SPACING_S
            f.write(ROW.format(t=iso(t), e=5000 + rows, a=120000000000 - rows % 1000 * 1000000))
            rows += 1
    log = os.path.join(folder, "train.jsonl")
    span = rows * SPACING_S
    slow_from = START + span * (1 - slow_share) / 2
    slow_to = slow_from + span * slow_share
    with open(log, "w") as f:
        t, step = START, 0
        while t < START + span:  # one step each 100 s, 250 s in the slow stretch
            f.write(f'{{"step": {step}, "time": {t}}}\n')
            t += 250 if slow_from <= t < slow_to else 100
            step += 1
    return samples, log, rows


def peak_rss_mib(argv, walls):
    with open(os.devnull, "wb") as null, tempfile.TemporaryFile() as err:
        began = time.monotonic()
        p = subprocess.Popen(argv, stdout=null, stderr=err)
        _, status, usage = os.wait4(p.pid, 0)  # the child's own rusage: its peak RSS
        walls.append(time.monotonic() - began)
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            err.seek(0)
            sys.exit(f"samples_memory: {' '.join(argv)}: exit {p.returncode}: "
                     f"{err.read().decode()[:300]}")
    return usage.ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", action="append", required=True)
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--slow-share", type=float, default=0.0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="samples-memory-") as folder:
        samples, log, rows = write_inputs(folder, args.mb, args.slow_share)
        size_mb = os.path.getsize(samples) / 1e6
        print(f"samples file: {size_mb:.1f} MB, {rows} rows {SPACING_S} s apart, interval_ms=100; "
              f"slow stretch {args.slow_share:.0%} of the run")
        page = os.path.join(folder, "page.html")
        for binary in args.binary:
            binary = os.path.abspath(binary)
            cases = {
                "report": [binary, "report", "--samples", samples, "-o", page],
                "report --log": [binary, "report", "--samples", samples, "--log", log, "-o", page],
                "explain": [binary, "explain", "--log", log, "--samples", samples],
            }
            for name, argv in cases.items():
                walls = []
                rss = [peak_rss_mib(argv, walls) for _ in range(args.runs)]
                extra = f", wall median {statistics.median(walls):.2f} s"
                if name.startswith("report"):
                    extra += f", page {os.path.getsize(page) / 1e6:.1f} MB"
                print(f"{binary} {name}: peak RSS median {statistics.median(rss):.0f} MiB "
                      f"({statistics.median(rss) / size_mb:.2f}x the file), spread "
                      f"{max(rss) - min(rss):.0f} MiB over {args.runs} runs{extra}")


if __name__ == "__main__":
    main()
