#!/usr/bin/python3
"""A real (tiny) PyTorch training loop that leaks host memory every step, for the guard's
checkpoint-before-the-kill tests (tests/cli/guard_checkpoint_cli_test.cc). It uses the
companion's two calls (headroom.on_save, headroom.step); its checkpoint is torch.save of
{"step", "model", "optimizer"}.

usage: leaky_trainer.py CKPT LEAK_MIB_PER_STEP STEP_SECONDS MAX_LEAK_MIB TIMEOUT_SECONDS

The leak is torch tensors filled with ones (pages really touched), kept in a list, capped at
MAX_LEAK_MIB; the loop ends by itself after TIMEOUT_SECONDS.
"""
import sys
import time

import torch

import headroom

ckpt, leak_mib, step_s, max_mib, timeout_s = (sys.argv[1], int(sys.argv[2]), float(sys.argv[3]),
                                             int(sys.argv[4]), float(sys.argv[5]))
torch.manual_seed(0)
model = torch.nn.Linear(64, 64)
opt = torch.optim.SGD(model.parameters(), lr=0.01)


def save(step):
    torch.save({"step": step, "model": model.state_dict(), "optimizer": opt.state_dict()}, ckpt)
    return ckpt


headroom.on_save(save)
hoard = []
leaked = 0
start = time.monotonic()
step = 0
while time.monotonic() - start < timeout_s:
    x = torch.randn(16, 64)
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    if leaked + leak_mib <= max_mib:
        hoard.append(torch.ones(leak_mib * 2**18))  # float32: 2^18 elements per MiB
        leaked += leak_mib
    headroom.step(step, tokens=16 * 64, loss=loss.item(), lr=0.01)
    step += 1
    time.sleep(step_s)
print("done", step, leaked)
