#!/usr/bin/python3
# The guard group with the real torchrun (docs/guard-group.md "Tested"): two "nodes" on
# 127.0.0.1, each `headroom guard --group` wrapping its own torchrun agent (Debian's
# python3-torch 1.13 under /usr/bin/python3, gloo), running tests/torchrun/train.py, a real
# DDP loop. One case per run: memory | restarts | freeze | crash | normal | forged. restarts is
# memory with torchrun's --max_restarts 3 on both agents: the group's end must hold though
# each agent would restart the workers the guard ended.
#
#   torchrun_group_test.py HEADROOM CASE [--json OUT]
#
# Every process the test makes is its descendant (the test is a child subreaper) and is
# SIGKILLed in teardown; every wait is bounded. Exit 0 pass, 1 fail, 77 skip (no torch).
import ctypes
import hashlib
import hmac
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PY = "/usr/bin/python3"
SECRET = "torchrun-group-test-secret-0123456789"
GIB = 1 << 30
HEARTBEAT, TIMEOUT = "200ms", "1s"  # the freeze case's bound is the timeout + 1 s
# The grace is the agents' time to fail over: after its workers end, each torchrun agent meets
# the other in its exit barrier and prints its failure summary, and only then exits; on a
# loaded 2-core machine under ASan that took over 2 s (the agent then got SIGTERM first and
# printed no root cause). The guard's own default is 3 s (docs/guard-group.md).
GRACE = "5s"


def fail(msg):
    print("FAIL: " + msg, flush=True)
    raise SystemExit(1)


def mem_available():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def children_of(pid):
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(entry))
    return out


def descendants(pid):
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        for c in children_of(p):
            found.append(c)
            todo.append(c)
    return found


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


class Node:
    def __init__(self, headroom, work, rank, group_port, master_port, level, env, args=(),
                 agent_args=()):
        self.rank = rank
        self.events = os.path.join(work, f"events-{rank}.jsonl")
        self.log = os.path.join(work, f"node-{rank}.log")
        cmd = [headroom, "guard", "--group", f"127.0.0.1:{group_port}", "--node-rank", str(rank),
               "--nodes", "2", "--heartbeat", HEARTBEAT, "--heartbeat-timeout", TIMEOUT,
               "--group-wait", "60s", "--grace", GRACE, "--min-available", f"{level}B",
               "--warn-available", f"{level + (64 << 20)}B", "--events", self.events, "--no-journal", *args,
               "--", PY, "-m", "torch.distributed.run", "--nnodes", "2", "--node_rank", str(rank),
               "--nproc_per_node", "1", "--master_addr", "127.0.0.1", "--master_port",
               str(master_port), "--monitor_interval", "0.2", *agent_args,
               # torch 1.13 on Python 3.11+: Std.from_str("0") is None (IntFlag no longer
               # iterates its 0 member), so the defaults of --redirects/--tee break the agent.
               "--redirects", "1", "--tee", "1", os.path.join(HERE, "train.py")]
        self.out = open(self.log, "w")
        self.proc = subprocess.Popen(cmd, stdout=self.out, stderr=subprocess.STDOUT, env=env,
                                     start_new_session=True)

    def wait(self, seconds):
        try:
            return self.proc.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            return None

    def read_events(self):
        try:
            with open(self.events) as f:
                return [json.loads(line) for line in f if line.strip()]
        except OSError:
            return []

    def text(self):
        self.out.flush()
        with open(self.log, errors="replace") as f:
            return f.read()


def rank_pids(piddir, deadline, nodes):
    pids = {}
    while time.monotonic() < deadline:
        for n in nodes:
            if n.proc.poll() is not None:
                fail(f"node {n.rank}'s guard exited {n.proc.returncode} before its rank "
                     f"started:\n{n.text()[-2000:]}")
        for r in (0, 1):
            path = os.path.join(piddir, f"rank{r}.pid")
            if r not in pids and os.path.exists(path):
                with open(path) as f:
                    pids[r] = int(f.read())
        if len(pids) == 2:
            return pids
        time.sleep(0.02)
    fail(f"the two ranks did not start within the deadline (got {sorted(pids)})")


def wait_gone(pids, seconds, gone_at=None):
    """The monotonic time the last of `pids` exited, or None; each one's in gone_at. Waits on
    pidfds (readable once the process has exited, zombie or not), so a time is when the
    test woke for it, not the end of a /proc scan."""
    gone_at = {} if gone_at is None else gone_at
    fds, poller = {}, select.poll()
    for p in pids:
        try:
            fd = os.pidfd_open(p)
        except OSError:  # already reaped
            gone_at[p] = time.monotonic()
            continue
        fds[fd] = p
        poller.register(fd, select.POLLIN)
    end = time.monotonic() + seconds
    try:
        while len(gone_at) < len(pids) and time.monotonic() < end:
            for fd, _ in poller.poll(max(1, int((end - time.monotonic()) * 1000))):
                gone_at.setdefault(fds[fd], time.monotonic())
                poller.unregister(fd)
    finally:
        for fd in fds:
            os.close(fd)
    return max(gone_at.values()) if len(gone_at) == len(pids) else None


def frame(kind, rank, seq, cause=0, origin=0, job="group-127.0.0.1:1", secret=SECRET.encode(),
          run=1):
    """A wire version 3 frame (src/group/group_message.h), built independently of the C++.
    `run`: a run nonce other than the coordinator's (a join would carry 0 and a challenge)."""
    jb = job.encode()
    body = b"HRG" + struct.pack(">BBHQQQQQQiBHB", 3, kind, rank, run, 0, seq,
                                int(time.time() * 1000), 0, 0, 0, cause, origin, len(jb)) + jb
    head = struct.pack(">H", 2 + len(body) + 32 - 2)
    mac = hmac.new(secret, head + body, hashlib.sha256).digest()
    return head + body + mac


def event(node, kind):
    return [e for e in node.read_events() if e["type"] == kind]


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    headroom, case = os.path.abspath(sys.argv[1]), sys.argv[2]
    out_json = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--json" else None
    if subprocess.run([PY, "-c", "import torch.distributed.run"], capture_output=True).returncode:
        print("SKIP: /usr/bin/python3 has no torch.distributed.run")
        return 77
    ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: orphans come to us
    work = tempfile.mkdtemp(prefix=f"hr-torchrun-{case}-")
    piddir = os.path.join(work, "pids")
    os.mkdir(piddir)
    group_port, master_port = free_port(), free_port()
    env = dict(os.environ, HEADROOM_GROUP_SECRET=SECRET, HR_PIDDIR=piddir, LC_ALL="C",
               OMP_NUM_THREADS="1", GLOO_SOCKET_IFNAME="lo")
    for name in ("MASTER_ADDR", "MASTER_PORT", "NNODES", "NODE_RANK", "SLURM_JOB_ID"):
        env.pop(name, None)
    low = 256 << 20  # a level the other node never reaches: the two share one MemAvailable
    level1 = low
    agent_args = ("--max_restarts", "3") if case == "restarts" else ()
    if case in ("memory", "restarts"):
        available = mem_available()
        if available < 6 * GIB:
            print(f"SKIP: MemAvailable {available / GIB:.1f} GiB < 6 GiB")
            return 77
        level1 = available - GIB  # node 1's balloon (at most 3 GiB) crosses it after ~1 GiB
        env.update(HR_GROW_RANK="1", HR_GROW_AFTER="30", HR_GROW_MIB="3072")
    elif case == "crash":
        env.update(HR_CRASH_RANK="1", HR_CRASH_AT="30")
    elif case == "normal":
        env.update(HR_STEPS="60")
    elif case == "forged":
        env.update(HR_STEPS="250")
    nodes = []
    figures = {"case": case}
    try:
        nodes.append(Node(headroom, work, 0, group_port, master_port, low, env,
                          agent_args=agent_args))
        nodes.append(Node(headroom, work, 1, group_port, master_port, level1, env,
                          agent_args=agent_args))
        pids = rank_pids(piddir, time.monotonic() + 60, nodes)
        n0, n1 = nodes
        if case == "memory":
            # Watch the ranks from now: node 1's guard exits only once its tree is gone.
            gone_at, watch = {}, {}
            watcher = threading.Thread(
                target=lambda: watch.update(t=wait_gone(list(pids.values()), 75, gone_at)))
            watcher.start()
            rc1 = n1.wait(60)
            trigger = event(n1, "trigger")
            if not trigger:
                fail(f"node 1's guard did not trigger (rc {rc1}):\n{n1.text()[-3000:]}")
            watcher.join(20)
            gone = watch.get("t")
            rc0 = n0.wait(30)
            if gone is None:
                fail("a rank outlived the group end by 15 s")
            t_kill = trigger[0]["monotonic_s"]
            figures["kill_to_last_rank_gone_s"] = gone - t_kill
            figures["kill_to_rank_gone_s"] = {r: gone_at[p] - t_kill for r, p in pids.items()}
            if figures["kill_to_last_rank_gone_s"] > 1.0:  # the target
                fail(f"the last rank was gone {figures['kill_to_last_rank_gone_s']:.2f} s after "
                     "the first kill; target 1 s")
            if rc1 != 99 or rc0 != 96:
                fail(f"exit statuses {rc0}, {rc1}; want 96 (peer memory) and 99 (own memory)\n"
                     f"{n0.text()[-3000:]}")
            end = event(n0, "group-end")
            if end:
                figures["kill_to_peer_verdict_s"] = end[0]["monotonic_s"] - t_kill
            if not end or end[0]["cause"] != "peer-memory" or end[0]["origin_rank"] != 1:
                fail(f"node 0's events lack the peer-memory group end: {end}")
            # The reading node 1's guard acted on: below the level, or a projected crossing
            # (the fill is fast) just above it.
            if (end[0]["level_bytes"] != level1 or end[0]["available_bytes"] >= level1 + GIB // 2
                    or end[0]["available_bytes"] != trigger[0]["available_bytes"]):
                fail(f"node 0 was not told node 1's reading: {end[0]}")
            if not event(n1, "group-report"):
                fail("node 1's events lack its report to the group")
            # torchrun's failure summary on node 0 names the root cause (the error file).
            # Both agents print their failure summary (ChildFailedError) with the error file
            # the guards wrote as the root cause's traceback.
            for n in (n0, n1):
                if "traceback : headroom guard: node 1: out of unified memory" not in n.text():
                    fail(f"node {n.rank}'s torchrun summary does not name node 1:\n"
                         f"{n.text()[-4000:]}")
            if end[0]["error_files"] < 1:
                fail(f"no torchelastic error file was written: {end[0]}")
        elif case == "restarts":
            # Each agent sees its workers fail when the guards end them, and would start them
            # again (3 restarts allowed). The guards end the agents when the grace runs out
            # and kill the trees at twice the grace: whatever was restarted goes too.
            rc1 = n1.wait(60)
            rc0 = n0.wait(60)
            trigger = event(n1, "trigger")
            if not trigger:
                fail(f"node 1's guard did not trigger (rc {rc1}):\n{n1.text()[-3000:]}")
            if rc1 != 99 or rc0 != 96:
                fail(f"exit statuses {rc0}, {rc1}; want 96 (peer memory) and 99 (own memory)\n"
                     f"{n0.text()[-3000:]}\n{n1.text()[-3000:]}")
            end = event(n0, "group-end")
            if not end or end[0]["cause"] != "peer-memory" or end[0]["origin_rank"] != 1:
                fail(f"node 0's events lack the peer-memory group end: {end}")
            starts = {}
            for r in (0, 1):
                with open(os.path.join(piddir, f"starts-rank{r}.log")) as f:
                    starts[r] = [int(line) for line in f if line.strip()]
            figures["starts"] = {r: len(v) for r, v in starts.items()}
            # Every rank any agent started, first or restarted, is gone once the guards are.
            every = [p for v in starts.values() for p in v]
            if wait_gone(every, 5) is None:
                fail(f"a rank outlived its guard: {[p for p in every if alive(p)]}")
            # Bounded: the tree is killed at twice the grace after the end at the latest.
            t_kill = trigger[0]["monotonic_s"]
            left = [e for e in event(n0, "exit") + event(n1, "exit")]
            figures["kill_to_guards_exit_s"] = [e["monotonic_s"] - t_kill for e in left]
            bound = 2 * float(GRACE.rstrip("s")) + 2.0
            if not left or max(figures["kill_to_guards_exit_s"]) > bound:
                fail(f"the guards' exits came {figures['kill_to_guards_exit_s']} s after the kill; "
                     f"bound {bound} s")
        elif case == "freeze":
            time.sleep(1.0)  # a few steps in
            frozen = [n1.proc.pid] + descendants(n1.proc.pid)
            for p in frozen:
                os.kill(p, signal.SIGSTOP)
            t_freeze = time.monotonic()
            gone = wait_gone([pids[0]], 15)
            rc0 = n0.wait(30)
            if gone is None:
                fail("rank 0 outlived node 1's freeze by 15 s")
            figures["freeze_to_rank0_gone_s"] = gone - t_freeze
            end = event(n0, "group-end")
            if rc0 != 98 or not end or end[0]["cause"] != "peer-lost" or end[0]["origin_rank"] != 1:
                fail(f"node 0: rc {rc0}, group end {end}; want 98 and peer-lost from node 1\n"
                     f"{n0.text()[-3000:]}")
            bound = 1.0 + 1.0  # --heartbeat-timeout + 1 s
            if figures["freeze_to_rank0_gone_s"] > bound:
                fail(f"rank 0 gone {figures['freeze_to_rank0_gone_s']:.2f} s after the freeze; "
                     f"bound {bound} s")
        elif case == "crash":
            rc1, rc0 = n1.wait(60), n0.wait(60)
            # Rank 1's crash fails rank 0 too (gloo: connection closed), and both agents meet
            # in torchrun's exit barrier: whichever agent exits first with 1 is the failure the
            # group hears of, and the other node's guard ends its job for it (97).
            if rc0 not in (1, 97) or rc1 not in (1, 97) or 1 not in (rc0, rc1):
                fail(f"exit statuses {rc0}, {rc1}: want 1 for the first failure, 1 or 97 for the "
                     f"other\n{n0.text()[-3000:]}\n{n1.text()[-3000:]}")
            if wait_gone(list(pids.values()), 5) is None:
                fail("a rank is left after the crash")
            if not (event(n0, "group-report") or event(n1, "group-report")):
                fail("neither node's events have a failure report")
            figures["exits"] = [rc0, rc1]
        elif case in ("normal", "forged"):
            if case == "forged":
                # A stranger who knows the layout but not the secret, a replay-less garbage
                # stream, and an abort from "rank 0" (of another run, with no join first) sent
                # to the coordinator: all refused.
                job = f"group-127.0.0.1:{group_port}"
                forged = frame(5, 0, 1, cause=3, origin=1, job=job,
                               secret=b"not-the-secret-at-all-0000")
                as_rank0 = frame(5, 0, 2, cause=3, origin=1, job=job)  # the secret, rank 0's voice
                for payload in (forged, b"\x00\x05junk", as_rank0):
                    with socket.create_connection(("127.0.0.1", group_port), timeout=5) as s:
                        s.sendall(payload)
                        time.sleep(0.05)
            rc1, rc0 = n1.wait(90), n0.wait(90)
            if (rc0, rc1) != (0, 0):
                fail(f"exit statuses {rc0}, {rc1}; want 0 and 0\n{n0.text()[-2000:]}\n"
                     f"{n1.text()[-2000:]}")
            if event(n0, "group-end") or event(n1, "group-end"):
                fail("the group ended a job that finished")
            left = event(n0, "group-leave")
            if case == "forged" and (not left or left[0]["refused"] < 3):
                fail(f"the coordinator did not refuse the three forged connections: {left}")
            # Each guard heard its peer's heartbeats (every 200 ms) with no gap near the 1 s
            # timeout, and says so in its last event.
            for n in (n0, n1):
                leave = event(n, "group-leave")
                silence = leave[0].get("longest_silence_ms") if leave else None
                if not isinstance(silence, int) or not 0 < silence < 1000:
                    fail(f"node {n.rank}'s group-leave has no longest silence in (0, 1000) ms: "
                         f"{leave}")
                figures[f"longest_silence_ms_{n.rank}"] = silence
        else:
            print(f"unknown case {case}")
            return 2
    finally:
        for n in nodes:
            for p in [n.proc.pid] + descendants(n.proc.pid):
                try:
                    os.kill(p, signal.SIGCONT)
                    os.kill(p, signal.SIGKILL)
                except OSError:
                    pass
            n.wait(10)
        for p in descendants(os.getpid()):
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        while True:  # reap whatever re-parented to us
            try:
                if os.waitpid(-1, os.WNOHANG) == (0, 0):
                    break
            except ChildProcessError:
                break
    print("PASS " + json.dumps(figures))
    if out_json:
        with open(out_json, "w") as f:
            json.dump(figures, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
