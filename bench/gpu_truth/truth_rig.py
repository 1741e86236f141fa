#!/usr/bin/python3
"""Truth rig: measure the memory peak of real training steps for a grid of settings.

Builds each model from its configuration with random weights (nothing is downloaded), runs a
few optimizer steps and writes one CSV row per measurement in the truth format that
bench/planner_accuracy reads (the columns of ../shared/data/planner_truth_dev.csv).

On CUDA every setting gives two rows: torch.cuda.max_memory_allocated() ("-a") and
torch.cuda.max_memory_reserved() ("-r"). Without CUDA it runs on the CPU and records the
process's RSS high-water mark (ru_maxrss) above the RSS before the model was built: a CPU
figure, named as such in measure_kind, that tests the rig itself (bench/gpu_truth/README.md).

Each setting runs in its own child process, so one setting's cache and high-water mark never
leak into the next. Uses transformers + peft where installed, else a plain-PyTorch
Llama-style model with the same tensors. QLoRA and 8-bit AdamW need bitsandbytes and CUDA;
without them those settings are skipped and the skip is printed.
"""

import argparse
import csv
import importlib.util
import itertools
import json
import os
import resource
import subprocess
import sys
import time

COLUMNS = [
    "id", "source", "quote", "model", "params_b", "hidden", "layers", "heads", "kv_heads",
    "intermediate", "vocab", "method", "lora_rank", "lora_targets", "weight_dtype",
    "compute_dtype", "optimizer", "micro_batch", "seq_len", "grad_ckpt", "gpus", "measured_gb",
    "measure_kind", "notes",
]

# Architectures from the models' published config.json (hidden_size, num_hidden_layers,
# num_attention_heads, num_key_value_heads, intermediate_size, vocab_size,
# tie_word_embeddings). "tiny" is the rig's own test size.
MODELS = {
    "tiny": dict(hidden=64, layers=2, heads=4, kv_heads=2, intermediate=128, vocab=512, tied=False),
    "qwen2.5-0.5b": dict(hidden=896, layers=24, heads=14, kv_heads=2, intermediate=4864,
                         vocab=151936, tied=True),
    "llama-3.2-1b": dict(hidden=2048, layers=16, heads=32, kv_heads=8, intermediate=8192,
                         vocab=128256, tied=True),
    "llama-3.1-8b": dict(hidden=4096, layers=32, heads=32, kv_heads=8, intermediate=14336,
                         vocab=128256, tied=False),
}

# Grids: each is a list of dicts of lists; the product of each dict's lists is run.
GRIDS = {
    "tiny": [dict(model=["tiny"], method=["lora", "full"], rank=[8], batch=[1], seq=[32],
                  ckpt=["off"], loss=["fp32"], optimizer=["adamw"]),
             dict(model=["tiny"], method=["lora"], rank=[4], batch=[2], seq=[32], ckpt=["on"],
                  loss=["chunked"], optimizer=["adamw"])],
    "h200": [
        dict(model=["llama-3.2-1b", "qwen2.5-0.5b"], method=["full"], rank=[0], batch=[1, 4],
             seq=[2048], ckpt=["off", "on"], loss=["fp32", "chunked"], optimizer=["adamw"]),
        dict(model=["llama-3.2-1b"], method=["full"], rank=[0], batch=[4], seq=[1024, 2048],
             ckpt=["on"], loss=["fp32"], optimizer=["adamw-fused"]),
        dict(model=["llama-3.2-1b", "llama-3.1-8b"], method=["lora", "qlora"], rank=[16],
             batch=[1, 4], seq=[2048], ckpt=["off", "on"], loss=["fp32"], optimizer=["adamw"]),
        dict(model=["llama-3.1-8b"], method=["lora"], rank=[64], batch=[2], seq=[1024, 4096],
             ckpt=["on"], loss=["fp32"], optimizer=["adamw"]),
        dict(model=["llama-3.1-8b"], method=["qlora"], rank=[16], batch=[2], seq=[2048],
             ckpt=["on"], loss=["fp32", "chunked"], optimizer=["adamw", "adamw-8bit"]),
    ],
}

LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def has(module):
    return importlib.util.find_spec(module) is not None


def settings(grid):
    for block in GRIDS[grid]:
        keys = list(block)
        for values in itertools.product(*(block[k] for k in keys)):
            s = dict(zip(keys, values))
            if s["method"] == "full":
                s["rank"] = 0
            yield s


# ---- child: one setting --------------------------------------------------------------------


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def build_plain(torch, arch, dtype):
    """A Llama-style decoder with the tensors of LlamaForCausalLM (RMSNorm, GQA, SwiGLU)."""
    import torch.utils.checkpoint

    nn = torch.nn
    F = torch.nn.functional
    head_dim = arch["hidden"] // arch["heads"]

    class RMSNorm(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(n))

        def forward(self, x):
            v = x.float().pow(2).mean(-1, keepdim=True)
            return (x.float() * torch.rsqrt(v + 1e-5)).to(x.dtype) * self.weight

    def rope(x):
        t = x.shape[-2]
        inv = 1.0 / (10000 ** (torch.arange(0, head_dim, 2, device=x.device).float() / head_dim))
        freqs = torch.outer(torch.arange(t, device=x.device).float(), inv)
        cos, sin = freqs.cos().to(x.dtype), freqs.sin().to(x.dtype)
        x1, x2 = x[..., ::2], x[..., 1::2]
        return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)

    def attend(q, k, v):
        if hasattr(F, "scaled_dot_product_attention"):
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
        t = q.shape[-2]
        scores = (q @ k.transpose(-1, -2)) / head_dim ** 0.5
        mask = torch.ones(t, t, dtype=torch.bool, device=q.device).triu(1)
        return scores.masked_fill(mask, float("-inf")).softmax(-1) @ v

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            h, kv = arch["hidden"], arch["kv_heads"] * head_dim
            self.input_layernorm = RMSNorm(h)
            self.post_attention_layernorm = RMSNorm(h)
            self.q_proj = nn.Linear(h, h, bias=False)
            self.k_proj = nn.Linear(h, kv, bias=False)
            self.v_proj = nn.Linear(h, kv, bias=False)
            self.o_proj = nn.Linear(h, h, bias=False)
            self.gate_proj = nn.Linear(h, arch["intermediate"], bias=False)
            self.up_proj = nn.Linear(h, arch["intermediate"], bias=False)
            self.down_proj = nn.Linear(arch["intermediate"], h, bias=False)

        def forward(self, x):
            b, t, _ = x.shape
            y = self.input_layernorm(x)
            q = self.q_proj(y).view(b, t, arch["heads"], head_dim).transpose(1, 2)
            k = self.k_proj(y).view(b, t, arch["kv_heads"], head_dim).transpose(1, 2)
            v = self.v_proj(y).view(b, t, arch["kv_heads"], head_dim).transpose(1, 2)
            rep = arch["heads"] // arch["kv_heads"]
            k, v = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
            a = attend(rope(q), rope(k), v).transpose(1, 2).reshape(b, t, -1)
            x = x + self.o_proj(a)
            y = self.post_attention_layernorm(x)
            return x + self.down_proj(F.silu(self.gate_proj(y)) * self.up_proj(y))

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed_tokens = nn.Embedding(arch["vocab"], arch["hidden"])
            self.layers = nn.ModuleList(Layer() for _ in range(arch["layers"]))
            self.norm = RMSNorm(arch["hidden"])
            self.lm_head = nn.Linear(arch["hidden"], arch["vocab"], bias=False)
            if arch["tied"]:
                self.lm_head.weight = self.embed_tokens.weight
            self.ckpt = False

        def hidden_states(self, ids):
            x = self.embed_tokens(ids)
            for layer in self.layers:
                if self.ckpt:
                    x = torch.utils.checkpoint.checkpoint(layer, x, use_reentrant=False)
                else:
                    x = layer(x)
            return self.norm(x)

    return Model().to(dtype)


class LoraLinear:
    """Wraps nn.Linear with PEFT's LoRA tensors: A (r x in), B (out x r), scale alpha/r."""

    @staticmethod
    def wrap(torch, base, rank):
        nn = torch.nn

        class Lora(nn.Module):
            def __init__(self):
                super().__init__()
                self.base_layer = base
                w = base.weight
                self.lora_A = nn.Linear(base.in_features, rank, bias=False).to(w.device, torch.float32)
                self.lora_B = nn.Linear(rank, base.out_features, bias=False).to(w.device, torch.float32)
                nn.init.zeros_(self.lora_B.weight)
                self.compute = w.dtype if w.dtype.is_floating_point else torch.bfloat16

            def forward(self, x):
                delta = self.lora_B(self.lora_A(x.to(torch.float32))) * 2.0
                return self.base_layer(x) + delta.to(x.dtype)

        return Lora()


def quantize_4bit(torch, model):
    import bitsandbytes as bnb

    for name, mod in list(model.named_modules()):
        for child_name, child in list(mod.named_children()):
            if isinstance(child, torch.nn.Linear) and child_name in LORA_TARGETS:
                q = bnb.nn.Linear4bit(child.in_features, child.out_features, bias=False,
                                      compute_dtype=torch.bfloat16, quant_type="nf4")
                q.weight = bnb.nn.Params4bit(child.weight.data.cpu(), requires_grad=False,
                                             quant_type="nf4")
                setattr(mod, child_name, q)
    return model.cuda()


def apply_plain_lora(torch, model, rank):
    for p in model.parameters():
        p.requires_grad_(False)
    for layer in model.layers:
        for name in LORA_TARGETS:
            setattr(layer, name, LoraLinear.wrap(torch, getattr(layer, name), rank))


def loss_of(torch, hidden, lm_head_weight, labels, kind):
    F = torch.nn.functional
    if kind == "chunked":  # torchtune CEWithChunkedOutputLoss: 8 chunks, each upcast to fp32
        total = 0.0
        for h, y in zip(hidden.chunk(8, dim=1), labels.chunk(8, dim=1)):
            logits = F.linear(h, lm_head_weight).float()
            total = total + F.cross_entropy(logits.flatten(0, 1), y.flatten(), reduction="sum")
        return total / labels.numel()
    logits = F.linear(hidden, lm_head_weight).float()  # Transformers' fp32 upcast
    return F.cross_entropy(logits.flatten(0, 1), labels.flatten())


def run_one(s, device):
    import torch

    arch = MODELS[s["model"]]
    cuda = device == "cuda"
    dtype = torch.bfloat16
    torch.manual_seed(0)
    base_rss = rss_bytes()
    model = build_plain(torch, arch, dtype)
    params = sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())
    if s["method"] == "qlora":
        model = quantize_4bit(torch, model)
    elif cuda:
        model = model.cuda()
    model.ckpt = s["ckpt"] == "on"
    if s["method"] != "full":
        apply_plain_lora(torch, model, s["rank"])
    trainable = [p for p in model.parameters() if p.requires_grad]
    if s["optimizer"] == "adamw-8bit":
        import bitsandbytes as bnb

        opt = bnb.optim.AdamW8bit(trainable, lr=1e-4)
    elif s["optimizer"] == "adamw-fused":
        opt = torch.optim.AdamW(trainable, lr=1e-4, fused=True)
    else:
        opt = torch.optim.AdamW(trainable, lr=1e-4)
    dev = "cuda" if cuda else "cpu"
    gen = torch.Generator(device="cpu").manual_seed(1)
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    start = time.monotonic()
    for _ in range(s["steps"]):
        ids = torch.randint(0, arch["vocab"], (s["batch"], s["seq"] + 1), generator=gen).to(dev)
        h = model.hidden_states(ids[:, :-1])
        loss = loss_of(torch, h, model.lm_head.weight, ids[:, 1:], s["loss"])
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    out = dict(params=params, seconds=time.monotonic() - start, loss=float(loss))
    if cuda:
        torch.cuda.synchronize()
        out["allocated"] = torch.cuda.max_memory_allocated()
        out["reserved"] = torch.cuda.max_memory_reserved()
    else:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        out["rss"] = max(0, peak - base_rss)
    return out


# ---- parent: the grid ----------------------------------------------------------------------


def versions(torch_version, device_name):
    parts = [f"torch {torch_version}"]
    for mod in ("transformers", "peft", "bitsandbytes"):
        if has(mod):
            parts.append(f"{mod} {__import__(mod).__version__}")
    return f"{device_name}; " + "; ".join(parts)


def rows_for(index, s, result, env):
    arch = MODELS[s["model"]]
    method = s["method"]
    base = {
        "source": f"bench/gpu_truth/truth_rig.py ({env['date']}; {env['versions']})",
        "quote": json.dumps({k: s[k] for k in sorted(s)}, sort_keys=True),
        "model": s["model"], "params_b": f"{result['params'] / 1e9:.9f}",
        "hidden": arch["hidden"], "layers": arch["layers"], "heads": arch["heads"],
        "kv_heads": arch["kv_heads"], "intermediate": arch["intermediate"],
        "vocab": arch["vocab"], "method": method,
        "lora_rank": s["rank"] if method != "full" else "",
        "lora_targets": "q,k,v,output_proj + mlp" if method != "full" else "",
        "weight_dtype": "nf4 (bnb.nf4)" if method == "qlora" else "bf16",
        "compute_dtype": "bf16",
        "optimizer": {"adamw": "torch.optim.AdamW (foreach default)",
                      "adamw-fused": "torch.optim.AdamW (fused=True)",
                      "adamw-8bit": "bitsandbytes AdamW8bit (8-bit states)"}[s["optimizer"]]
        + ("; LoRA params fp32" if method != "full" else ""),
        "micro_batch": s["batch"], "seq_len": s["seq"], "grad_ckpt": s["ckpt"], "gpus": 1,
        "notes": ("rig row; plain-PyTorch Llama-style model, random weights; "
                  + ("tied embeddings; " if arch["tied"] else "")
                  + ("chunked ce (8 chunks, fp32 upcast)" if s["loss"] == "chunked"
                     else "standard loss (fp32 upcast logits)")
                  + f"; lora dropout 0; {s['steps']} steps; {result['seconds']:.1f} s"),
    }
    rid = f"GT-{index:03d}"
    if "rss" in result:
        kind = ("CPU process RSS high-water (ru_maxrss) above RSS before model build; "
                "decimal GB; a CPU figure, not a GPU one")
        return [dict(base, id=rid, measured_gb=f"{result['rss'] / 1e9:.6f}", measure_kind=kind)]
    return [
        dict(base, id=rid + "-a", measured_gb=f"{result['allocated'] / 1e9:.6f}",
             measure_kind="torch.cuda.max_memory_allocated()/1e9; decimal GB"),
        dict(base, id=rid + "-r", measured_gb=f"{result['reserved'] / 1e9:.6f}",
             measure_kind="torch.cuda.max_memory_reserved()/1e9; decimal GB"),
    ]


def skip_reason(s, device):
    needs_bnb = s["method"] == "qlora" or s["optimizer"] == "adamw-8bit"
    if needs_bnb and (device != "cuda" or not has("bitsandbytes")):
        return "needs bitsandbytes on CUDA"
    if s["optimizer"] == "adamw-fused" and device != "cuda":
        return "fused AdamW needs CUDA"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="CSV to write (planner_accuracy's columns)")
    ap.add_argument("--grid", choices=sorted(GRIDS), default="tiny")
    ap.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=300, help="seconds per setting")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.steps < 1:
        ap.error("--steps must be 1 or more")

    if args.child:
        s = json.loads(args.child)
        print(json.dumps(run_one(s, s["device"])))
        return 0

    import torch

    device = args.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        print("truth_rig: --device cuda: no CUDA device", file=sys.stderr)
        return 2
    name = torch.cuda.get_device_name(0) if device == "cuda" else "CPU (no CUDA)"
    env = dict(date=time.strftime("%Y-%m-%d", time.gmtime()),
               versions=versions(torch.__version__, name))
    rows, failed = [], 0
    for i, s in enumerate(settings(args.grid), 1):
        s = dict(s, steps=args.steps, device=device)
        reason = skip_reason(s, device)
        if reason:
            print(f"truth_rig: GT-{i:03d} skipped: {reason}", file=sys.stderr)
            continue
        try:
            p = subprocess.run([sys.executable, __file__, "--out", args.out, "--child",
                                json.dumps(s)], capture_output=True, text=True,
                               timeout=args.timeout)
        except subprocess.TimeoutExpired:
            print(f"truth_rig: GT-{i:03d} timed out after {args.timeout:g} s", file=sys.stderr)
            failed += 1
            continue
        if p.returncode != 0:
            last = (p.stderr.strip().splitlines() or ["no output"])[-1]
            print(f"truth_rig: GT-{i:03d} failed: {last}", file=sys.stderr)
            failed += 1
            continue
        result = json.loads(p.stdout.strip().splitlines()[-1])
        rows += rows_for(i, s, result, env)
        print(f"truth_rig: GT-{i:03d} {s['model']} {s['method']} -> "
              f"{rows[-1]['measured_gb']} GB", file=sys.stderr)
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)
    return 1 if failed or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
