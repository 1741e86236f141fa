"""The link probe that `headroom doctor --peer`, `--peer-listen` and `--peer-group` run
(docs/doctor.md "The link between nodes"). Run as a script by the job's Python; standard
library and torch only.

Input: one JSON object on stdin (never argv, so the secret is not in the process list):
    {"role": "listen"|"connect", "host": ADDR, "port": PORT, "rank": R, "world": N,
     "secret": "...", "size_bytes": S, "repeats": K, "timeout_s": T}
Output: one JSON object on stdout, "ok" true with the measurement, or false with "stage" and
"error"; "facts" (one object per rank, rank 0 first) whenever the nodes met.

How the nodes meet: rank 0 listens on HOST:PORT (the gate); every other rank connects,
answers rank 0's nonce with an HMAC-SHA256 under the shared secret over its own nonce, rank
and facts, and rank 0 answers each with its own HMAC over the run's store port, token,
backend and every rank's facts. Lines are JSON, at most MAX_LINE bytes each; a longer line,
a bad MAC or a rank already taken closes that connection and rank 0 waits on for the others.
Then torch.distributed meets through a TCPStore on PORT + 1, with every key under a random
token's prefix, and the collective runs (NCCL when every rank has CUDA and NCCL, gloo
otherwise). Every wait is bounded by timeout_s, counted once torch is imported.

Bus bandwidth follows nccl-tests' convention for all-reduce (docs/sources.md "Link"):
algbw = bytes / seconds, busbw = algbw * 2 (n - 1) / n, in GB/s with GB = 1e9 bytes.
"""
import os
import sys

# Run as a file, Python puts this directory first on sys.path: the companion's own modules
# (trainer, lightning) must not shadow the packages torch imports.
if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(os.path.abspath(__file__)):
    del sys.path[0]

import hashlib  # noqa: E402
import hmac  # noqa: E402
import json  # noqa: E402
import secrets  # noqa: E402
import shutil  # noqa: E402
import socket  # noqa: E402
import time  # noqa: E402
from datetime import timedelta  # noqa: E402

PROTOCOL = "headroom-link/1"
MAX_LINE = 64 * 1024
# The variables that change which collectives run or how memory is held, besides every NCCL_*
# and TORCH_NCCL_* one.
ENV_NAMES = (
    "PYTORCH_CUDA_ALLOC_CONF",
    "PYTORCH_ALLOC_CONF",
    "PYTORCH_NO_CUDA_MEMORY_CACHING",
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_MAX_CONNECTIONS",
    "CUDA_LAUNCH_BLOCKING",
    "CUDA_MODULE_LOADING",
    "TORCH_DISTRIBUTED_DEBUG",
    "GLOO_SOCKET_IFNAME",
)
ENV_PREFIXES = ("NCCL_", "TORCH_NCCL_")


class ProbeError(Exception):
    def __init__(self, stage, message):
        super().__init__(message)
        self.stage = stage


def relevant_env():
    return {
        k: v
        for k, v in sorted(os.environ.items())
        if k in ENV_NAMES or k.startswith(ENV_PREFIXES)
    }


def local_facts(torch, dist):
    facts = {"host": socket.gethostname(), "torch": torch.__version__,
             "torch_cuda": torch.version.cuda or "", "nccl": "",
             "nvcc": "yes" if shutil.which("nvcc") else "no", "env": relevant_env()}
    if dist.is_nccl_available():
        try:
            v = torch.cuda.nccl.version()
            facts["nccl"] = ".".join(str(x) for x in v) if isinstance(v, tuple) else str(v)
        except Exception:  # a CPU build may list NCCL yet fail to load it
            facts["nccl"] = ""
    facts["can_nccl"] = bool(dist.is_nccl_available() and torch.cuda.is_available())
    return facts


def mac(secret, *parts):
    text = "|".join(parts).encode()
    return hmac.new(secret.encode(), text, hashlib.sha256).hexdigest()


def canonical(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def send_line(conn, obj):
    conn.sendall((json.dumps(obj) + "\n").encode())


def read_line(conn, deadline):
    """One line, at most MAX_LINE bytes, before `deadline` (a monotonic time)."""
    data = b""
    while b"\n" not in data:
        left = deadline - time.monotonic()
        if left <= 0:
            raise ProbeError("gate", "timed out waiting for the other node's answer")
        conn.settimeout(left)
        try:
            chunk = conn.recv(4096)
        except socket.timeout:
            raise ProbeError("gate", "timed out waiting for the other node's answer")
        if not chunk:
            raise ProbeError("gate", "the other node closed the connection")
        data += chunk
        if len(data) > MAX_LINE:
            raise ProbeError("gate", "a line over %d bytes" % MAX_LINE)
    line = data.split(b"\n", 1)[0]
    try:
        obj = json.loads(line)
    except ValueError:
        raise ProbeError("gate", "not a JSON line")
    if not isinstance(obj, dict):
        raise ProbeError("gate", "not a JSON object")
    return obj


def admit(conn, req, deadline, taken):
    """Rank 0's side of one join: the peer's rank, nonce and facts, or ProbeError."""
    nonce = secrets.token_hex(16)
    send_line(conn, {"hello": PROTOCOL, "nonce": nonce})
    join = read_line(conn, min(deadline, time.monotonic() + 10))
    rank, their, facts = join.get("rank"), join.get("nonce"), join.get("facts")
    if not isinstance(rank, int) or not isinstance(their, str) or not isinstance(facts, dict):
        raise ProbeError("gate", "a malformed join")
    want = mac(req["secret"], "join", nonce, their, str(rank), canonical(facts))
    if not hmac.compare_digest(want, str(join.get("mac", ""))):
        raise ProbeError("gate", "wrong secret (the join's HMAC does not match)")
    if rank < 1 or rank >= req["world"] or rank in taken:
        raise ProbeError("gate", "rank %d is out of range or already taken" % rank)
    return rank, their, facts


def gate_listen(req, facts, deadline):
    srv = socket.socket(socket.AF_INET6 if ":" in req["host"] else socket.AF_INET)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        srv.bind((req["host"], req["port"]))
    except OSError as e:
        raise ProbeError("gate", "cannot listen on %s:%d: %s" % (req["host"], req["port"], e.strerror))
    srv.listen(8)
    joined = {}  # rank -> (conn, their nonce, facts)
    try:
        while len(joined) < req["world"] - 1:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ProbeError(
                    "gate", "no peer joined %s:%d within %g s (%d of %d nodes here)"
                    % (req["host"], req["port"], req["timeout_s"], len(joined) + 1, req["world"]))
            srv.settimeout(left)
            try:
                conn, addr = srv.accept()
            except socket.timeout:
                continue
            try:
                rank, their, peer_facts = admit(conn, req, deadline, joined)
            except (ProbeError, OSError) as e:
                sys.stderr.write("headroom link: refused %s: %s\n" % (addr[0], e))
                conn.close()
                continue
            joined[rank] = (conn, their, peer_facts)
    finally:
        srv.close()
    every = [facts] + [joined[r][2] for r in sorted(joined)]
    backend = "nccl" if all(f.get("can_nccl") for f in every) else "gloo"
    welcome = {"store_port": req["port"] + 1, "token": secrets.token_hex(16),
               "backend": backend, "facts": every}
    for rank in sorted(joined):
        conn, their, _ = joined[rank]
        send_line(conn, dict(welcome, mac=mac(req["secret"], "welcome", their, canonical(welcome))))
        conn.close()
    return welcome


def gate_connect(req, facts, deadline):
    conn = None
    last = "nothing listening"
    while conn is None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise ProbeError("gate", "no peer at %s:%d within %g s (%s)"
                             % (req["host"], req["port"], req["timeout_s"], last))
        try:
            conn = socket.create_connection((req["host"], req["port"]), timeout=min(left, 5))
        except OSError as e:
            last = e.strerror or str(e)
            time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))
    with conn:
        hello = read_line(conn, deadline)
        if hello.get("hello") != PROTOCOL or not isinstance(hello.get("nonce"), str):
            raise ProbeError("gate", "%s:%d is not a headroom link probe" % (req["host"], req["port"]))
        mine = secrets.token_hex(16)
        send_line(conn, {"rank": req["rank"], "nonce": mine, "facts": facts,
                         "mac": mac(req["secret"], "join", hello["nonce"], mine,
                                    str(req["rank"]), canonical(facts))})
        try:
            welcome = read_line(conn, deadline)
        except ProbeError as e:
            raise ProbeError("gate", "%s (wrong secret, or rank %d taken?)" % (e, req["rank"]))
    got = str(welcome.pop("mac", ""))
    if not hmac.compare_digest(mac(req["secret"], "welcome", mine, canonical(welcome)), got):
        raise ProbeError("gate", "the listening node's answer has a wrong HMAC (wrong secret)")
    return welcome


def measure(torch, dist, req, welcome, deadline):
    left = deadline - time.monotonic()
    if left <= 0:
        raise ProbeError("rendezvous", "timed out before the collective")
    rank, world = req["rank"], req["world"]
    try:
        store = dist.TCPStore(req["host"], welcome["store_port"], world, rank == 0,
                              timeout=timedelta(seconds=left), wait_for_workers=False)
        prefixed = dist.PrefixStore("headroom-link/" + welcome["token"], store)
        dist.init_process_group(welcome["backend"], store=prefixed, rank=rank,
                                world_size=world, timeout=timedelta(seconds=max(left, 1)))
    except Exception as e:  # torch raises RuntimeError or its own DistError subclasses
        raise ProbeError("rendezvous", str(e).splitlines()[0] if str(e) else type(e).__name__)
    try:
        device = torch.device("cuda", 0) if welcome["backend"] == "nccl" else torch.device("cpu")
        if device.type == "cuda":
            # One GPU a node (a Spark): NCCL's barrier would otherwise pick cuda:RANK.
            torch.cuda.set_device(device)
        sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
        t = torch.ones(max(req["size_bytes"] // 4, 1), dtype=torch.float32, device=device)
        dist.all_reduce(t)  # warm-up: connections and buffers
        seconds = []
        for _ in range(req["repeats"]):
            if time.monotonic() > deadline:
                raise ProbeError("collective", "timed out after %d all-reduces" % len(seconds))
            t.fill_(1.0)
            sync()
            dist.barrier()
            start = time.perf_counter()
            dist.all_reduce(t)
            sync()
            seconds.append(time.perf_counter() - start)
            if t[0].item() != world or t[-1].item() != world:
                raise ProbeError("collective", "the all-reduce gave %g, not %d" % (t[0].item(), world))
        slowest = torch.tensor(seconds, dtype=torch.float64, device=device)
        dist.all_reduce(slowest, op=dist.ReduceOp.MAX)  # the same figures on every node
        return [float(x) for x in slowest.cpu().tolist()], t.numel() * 4
    except ProbeError:
        raise
    except Exception as e:
        raise ProbeError("collective", str(e).splitlines()[0] if str(e) else type(e).__name__)
    finally:
        dist.destroy_process_group()


def run(req):
    try:
        import torch
        import torch.distributed as dist
    except Exception as e:
        raise ProbeError("import", "cannot import torch.distributed: %s" % e)
    # From here: importing torch from a cold cache can take longer than the wait itself.
    deadline = time.monotonic() + float(req["timeout_s"])
    if not dist.is_available():
        raise ProbeError("import", "this torch has no torch.distributed")
    facts = local_facts(torch, dist)
    facts["rank"] = req["rank"]
    out = {"ok": False, "rank": req["rank"], "world": req["world"]}
    try:
        welcome = (gate_listen if req["role"] == "listen" else gate_connect)(req, facts, deadline)
    except ProbeError as e:
        out.update(stage=e.stage, error=str(e), facts=[facts])
        return out
    out.update(facts=welcome["facts"], backend=welcome["backend"])
    try:
        seconds, size = measure(torch, dist, req, welcome, deadline)
    except ProbeError as e:
        out.update(stage=e.stage, error=str(e))
        return out
    out.update(ok=True, size_bytes=size, seconds=seconds)
    return out


def main():
    try:
        req = json.loads(sys.stdin.readline(MAX_LINE))
        for key in ("role", "host", "port", "rank", "world", "secret", "size_bytes", "repeats",
                    "timeout_s"):
            if key not in req:
                raise ValueError("no %s" % key)
    except ValueError as e:
        print(json.dumps({"ok": False, "stage": "request", "error": str(e)}))
        return 2
    try:
        out = run(req)
    except ProbeError as e:
        out = {"ok": False, "stage": e.stage, "error": str(e)}
    print(json.dumps(out), flush=True)
    return 0 if out["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
