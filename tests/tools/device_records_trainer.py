#!/usr/bin/python3
"""A sweep trial's trainer on a discrete GPU, faked: tests/cli/sweep_device_cli_test.cc.

usage: device_records_trainer.py BATCH GIB_PER_BATCH [--no-records]

Writes three headroom.step/1 records to $HEADROOM_STEP_RECORDS whose torch allocator peak is
BATCH x GIB_PER_BATCH GiB (what the companion reads from torch.cuda.max_memory_allocated on a
device), and a host peak RSS of 64 MiB; the host memory it really takes is the interpreter's.
With --no-records it writes none (a job without the companion). Exits 0.
"""
import json
import os
import sys
import time

batch, per_gib = int(sys.argv[1]), float(sys.argv[2])
path = os.environ.get("HEADROOM_STEP_RECORDS", "")
if path and "--no-records" not in sys.argv[3:]:
    with open(path, "a", encoding="utf-8") as f:
        for step in range(3):
            f.write(json.dumps({"schema": "headroom.step/1", "pid": os.getpid(), "kind": "step",
                                "step": step, "wall": time.time(), "mono": time.monotonic(),
                                "peak_allocated_bytes": int(batch * per_gib * 2**30),
                                "host_peak_rss_bytes": 64 * 2**20}) + "\n")
time.sleep(0.3)
print("done", batch)
