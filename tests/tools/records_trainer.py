#!/usr/bin/python3
"""A sweep trial's trainer that reports its own peak through the companion (python/headroom):
tests/cli/sweep_records_cli_test.cc.

usage: records_trainer.py BATCH READY_FILE HOLD_SECONDS

Allocates BATCH x 256 MiB as torch tensors filled with ones (pages touched), records a few
steps (headroom.step: the host peak RSS goes in each record), writes READY_FILE, holds for
HOLD_SECONDS while still recording steps, and exits 0.
"""
import sys
import time

import torch

import headroom

batch, ready, hold_s = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
hoard = [torch.ones(256 * 2**18) for _ in range(batch)]  # float32: 2^18 elements per MiB
for step in range(3):
    headroom.step(step, tokens=batch * 1024, loss=1.0)
with open(ready, "w") as f:
    f.write("ready\n")
end = time.monotonic() + hold_s
step = 3
while time.monotonic() < end:
    headroom.step(step, tokens=batch * 1024, loss=1.0)
    step += 1
    time.sleep(0.1)
print("done", batch, sum(t.numel() for t in hoard) * 4)
