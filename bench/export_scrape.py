#!/usr/bin/env python3
"""Scrape latency and CPU per scrape of `headroom export` (issue 7's measurement).

Starts the exporter on a free loopback port (fake NVML GB10 scenario by default, so the GPU
families are in the body; the real /proc otherwise), then:
  1. idle: no scrapes for IDLE seconds -> the sampler's own CPU per second;
  2. load: N scrapes back to back from one client -> latency per scrape (connect to last byte),
     and the exporter's CPU (utime + stime from /proc/PID/stat) minus the sampler's share for
     the same wall time, divided by N.

Usage: bench/export_scrape.py [--binary build/headroom] [--scrapes 2000] [--idle 5]
       [--interval 1s] [--nvml-lib build/tests/fakes/libnvidia-ml-fake.so | --no-gpu]
Prints one line of figures and a JSON line.
"""
import argparse
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks  # utime, stime


def scrape(port):
    start = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    elapsed = time.perf_counter() - start
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(re.search(rb"Content-Length: (\d+)", head).group(1))
    assert head.startswith(b"HTTP/1.1 200 ") and len(body) == length, "invalid response"
    return elapsed, len(body)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default="build/headroom")
    ap.add_argument("--scrapes", type=int, default=2000)
    ap.add_argument("--idle", type=float, default=5.0)
    ap.add_argument("--interval", default="1s")
    ap.add_argument("--nvml-lib", default="build/tests/fakes/libnvidia-ml-fake.so")
    ap.add_argument("--no-gpu", action="store_true")
    a = ap.parse_args()
    env = dict(os.environ)
    args = [a.binary, "export", "--listen", "127.0.0.1:0", "--interval", a.interval, "--no-journal"]
    with tempfile.NamedTemporaryFile("w", suffix=".nvml", delete=False) as script:
        script.write("scenario gb10\ndegrade_after 100000000\n")
    if not a.no_gpu:
        args += ["--nvml-lib", a.nvml_lib]
        env["HEADROOM_FAKE_NVML_SCRIPT"] = script.name
    p = subprocess.Popen(args, stderr=subprocess.PIPE, env=env, text=True)
    try:
        line = p.stderr.readline()
        port = int(re.search(r":(\d+)/metrics", line).group(1))
        scrape(port)  # warm up
        c0, t0 = cpu_seconds(p.pid), time.perf_counter()
        time.sleep(a.idle)
        c1, t1 = cpu_seconds(p.pid), time.perf_counter()
        sampler_per_s = (c1 - c0) / (t1 - t0)
        lat, size = [], 0
        c2, t2 = cpu_seconds(p.pid), time.perf_counter()
        for _ in range(a.scrapes):
            e, size = scrape(port)
            lat.append(e)
        c3, t3 = cpu_seconds(p.pid), time.perf_counter()
        per_scrape = max(0.0, (c3 - c2) - sampler_per_s * (t3 - t2)) / a.scrapes
        lat.sort()
        q = lambda f: lat[min(len(lat) - 1, int(f * len(lat)))] * 1e3
        out = {"scrapes": a.scrapes, "body_bytes": size, "latency_ms_p50": round(q(0.5), 3),
               "latency_ms_p95": round(q(0.95), 3), "latency_ms_p99": round(q(0.99), 3),
               "latency_ms_max": round(lat[-1] * 1e3, 3), "cpu_ms_per_scrape": round(per_scrape * 1e3, 4),
               "sampler_cpu_ms_per_s": round(sampler_per_s * 1e3, 3), "interval": a.interval,
               "gpu": not a.no_gpu, "clock_tick_s": 1 / os.sysconf("SC_CLK_TCK")}
        print(f"{a.scrapes} scrapes of {size} bytes: latency p50 {out['latency_ms_p50']} ms, p95 "
              f"{out['latency_ms_p95']} ms, p99 {out['latency_ms_p99']} ms, max {out['latency_ms_max']} ms; "
              f"CPU {out['cpu_ms_per_scrape']} ms per scrape; sampler {out['sampler_cpu_ms_per_s']} ms CPU per s")
        print(json.dumps(out))
    finally:
        p.send_signal(signal.SIGTERM)
        rc = p.wait(timeout=10)
        os.unlink(script.name)
        if rc != 0:
            print(f"exporter exited {rc}", file=sys.stderr)
            sys.exit(1)


if __name__ == "__main__":
    main()
