# A tiny real DDP training loop over gloo, for tests/torchrun/torchrun_group_test.py: each rank
# writes its pid to $HR_PIDDIR/rank<R>.pid and appends it to $HR_PIDDIR/starts-rank<R>.log (one
# line a start: torchrun's restarts add lines), then steps until $HR_STEPS. Rank $HR_GROW_RANK
# grows a balloon (64 MiB of touched tensors per step, at most $HR_GROW_MIB) from step
# $HR_GROW_AFTER; rank $HR_CRASH_RANK exits 3 at step $HR_CRASH_AT.
import os
import time

import torch
import torch.distributed as dist


def env_int(name, default):
    return int(os.environ.get(name, default))


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    piddir = os.environ["HR_PIDDIR"]
    with open(os.path.join(piddir, f"rank{rank}.pid.tmp"), "w") as f:
        f.write(str(os.getpid()))
    os.rename(os.path.join(piddir, f"rank{rank}.pid.tmp"), os.path.join(piddir, f"rank{rank}.pid"))
    with open(os.path.join(piddir, f"starts-rank{rank}.log"), "a") as f:
        f.write(f"{os.getpid()}\n")
    torch.manual_seed(rank)
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    steps = env_int("HR_STEPS", 1_000_000)
    grow_rank, grow_after = env_int("HR_GROW_RANK", -1), env_int("HR_GROW_AFTER", 20)
    grow_cap = env_int("HR_GROW_MIB", 3072) << 20
    crash_rank, crash_at = env_int("HR_CRASH_RANK", -1), env_int("HR_CRASH_AT", 20)
    balloon, held = [], 0
    for step in range(steps):
        x = torch.randn(8, 16)
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if rank == grow_rank and step >= grow_after and held < grow_cap:
            balloon.append(torch.ones(16 << 20))  # 64 MiB, every page written
            held += 64 << 20
        if rank == crash_rank and step == crash_at:
            os._exit(3)
        time.sleep(0.01)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
