#!/usr/bin/python3
"""The DDP bucket term of `plan --sharding ddp` (docs/plan-formulas.md, "Sharding over N
devices": B = G) against a real DistributedDataParallel: two ranks over gloo on loopback, in
real child processes, with Debian's python3-torch. The reducer's buckets (its logging data:
bucket_sizes in bytes) must sum to the trainable parameters' gradient bytes, frozen
parameters (a LoRA base) taking no slot, with bucket_cap_mb 25 (MiB) and
gradient_as_bucket_view off by default.
Exit status: 0 pass, 1 fail, 77 skip (no torch.distributed with gloo)."""

import faulthandler
import os
import socket
import sys
import tempfile
import time

try:
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
except ImportError:
    print("skip: no torch under", sys.executable)
    sys.exit(77)

if not dist.is_available() or not dist.is_gloo_available():
    print("skip: torch.distributed without gloo")
    sys.exit(77)


def model(frozen_base):
    torch.manual_seed(0)
    # Distinct layers (no shared parameters), 4 x (1024x2048 + 2048x1024) fp32 = 64 MiB of
    # weights: more than two 25 MiB buckets.
    layers = []
    for _ in range(4):
        layers += [torch.nn.Linear(1024, 2048), torch.nn.Linear(2048, 1024)]
    m = torch.nn.Sequential(*layers)
    if frozen_base:
        for i, layer in enumerate(m):
            if i % 2 == 0:
                layer.weight.requires_grad_(False)
                layer.bias.requires_grad_(False)
    return m


def rank_main(rank, port, out_dir):
    # Where a rank is still running after 60 s, its stacks go to the test's output: the
    # parent's 90 s deadline then says which call it was in.
    faulthandler.dump_traceback_later(60, exit=False)
    # One intra-op thread a rank: two ranks on CI's two cores, beside the other tests.
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    try:
        for frozen in (False, True):
            m = model(frozen)
            ddp = torch.nn.parallel.DistributedDataParallel(m)
            seen = {}  # bucket index -> (bytes, storage address) from the comm hook

            def hook(state, bucket):
                buf = bucket.buffer()
                seen[bucket.index()] = (buf.numel() * buf.element_size(),
                                        buf.storage().data_ptr())
                fut = dist.all_reduce(buf, async_op=True).get_future()
                return fut.then(lambda f: f.value()[0])

            ddp.register_comm_hook(None, hook)
            # Three real steps: the reducer rebuilds its buckets in the order the first
            # backward produced the gradients, at the start of the second.
            for _ in range(3):
                ddp(torch.randn(2, 1024)).sum().backward()
            data = ddp._get_ddp_logging_data()
            sizes = [int(s) for s in str(data["bucket_sizes"]).split(",") if s.strip()]
            grad_bytes = sum(p.numel() * p.element_size() for p in m.parameters() if p.requires_grad)
            # The buckets are storage of their own, not the gradients' (no bucket view).
            grad_storages = {p.grad.storage().data_ptr() for p in m.parameters() if p.grad is not None}
            hooked = sum(b for b, _ in seen.values())
            shared = sum(1 for _, ptr in seen.values() if ptr in grad_storages)
            with open(os.path.join(out_dir, f"{rank}-{int(frozen)}.txt"), "w") as f:
                f.write(f"{sum(sizes)} {grad_bytes} {len(sizes)} {max(sizes)} "
                        f"{data['bucket_cap_bytes']} {data['gradient_as_bucket_view']} "
                        f"{hooked} {shared}\n")
        # Both ranks past their last collective before either tears down: a rank that
        # destroys its group (rank 0 holds the TCP store) while the other is still in its own
        # teardown can leave that one waiting (pytorch/pytorch#75097, whose maintainers advise
        # this barrier). The CI run of stop 26 wrote all four results, then timed out here.
        dist.barrier()
    finally:
        dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    failures = []
    with tempfile.TemporaryDirectory() as out_dir:
        ctx = mp.spawn(rank_main, args=(free_port(), out_dir), nprocs=2, join=False)
        deadline = time.monotonic() + 90
        try:
            while not ctx.join(timeout=1):
                if time.monotonic() > deadline:
                    for p in ctx.processes:
                        p.kill()
                    failures.append("the two ranks did not finish in 90 s")
                    break
        except Exception as e:  # a rank raised: its traceback is in the exception
            failures.append(f"a rank failed: {e}")
        for rank in (0, 1):
            for frozen in (0, 1):
                path = os.path.join(out_dir, f"{rank}-{frozen}.txt")
                if not os.path.exists(path):
                    failures.append(f"rank {rank} wrote nothing for frozen={frozen}")
                    continue
                with open(path) as f:
                    total, grad_bytes, count, largest, cap, view, hooked, shared = map(
                        int, f.read().split())
                what = f"rank {rank}, frozen base {bool(frozen)}"
                if total != grad_bytes:
                    failures.append(f"{what}: buckets hold {total} B, the gradients {grad_bytes} B")
                if hooked != grad_bytes:
                    failures.append(f"{what}: the reduced buckets hold {hooked} B, the gradients "
                                    f"{grad_bytes} B")
                if shared:
                    failures.append(f"{what}: {shared} bucket(s) share the gradients' storage")
                if cap != 25 * 1024 * 1024:
                    failures.append(f"{what}: bucket_cap_bytes {cap}, not 25 MiB")
                if view != 0:
                    failures.append(f"{what}: gradient_as_bucket_view is on by default")
                # How many buckets there are (bucket_cap_mb) does not change their sum, which
                # is all the plan uses; the count is printed, not checked.
                print(f"{what}: {count} bucket(s), largest {largest} B, {total} B in all; gradients "
                      f"{grad_bytes} B")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
