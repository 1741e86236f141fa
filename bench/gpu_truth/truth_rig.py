#!/usr/bin/python3
"""Truth rig: measure the memory peak of real training steps for a grid of settings.

Builds each model from its configuration with random weights (nothing is downloaded), runs a
few optimizer steps and writes one CSV row per measurement in the truth format that
bench/planner_accuracy reads (the columns of bench/data/planner_truth_dev.csv).

On CUDA every setting gives two rows: torch.cuda.max_memory_allocated() ("-a") and
torch.cuda.max_memory_reserved() ("-r"). Without CUDA it runs on the CPU and records the
process's RSS high-water mark (VmHWM, reset before each setting's steps) above the RSS before
the model was built: a CPU figure, named as such in measure_kind, that tests the rig itself
(bench/gpu_truth/README.md).

All the settings of one model run in one worker process (importing the stack once), with the
allocator's peaks reset between settings; at the end of each model the first setting is run
again, and the repeat must give the first's peak within a tolerance (the check is written
beside the CSV, OUT.checks.jsonl). Each row is written, flushed and fsync'ed as it is
measured, so a run cut short keeps every row it measured; --max-seconds ends a run cleanly
before a setting it has no time left for.

Two stacks: "plain" (default), a plain-PyTorch Llama-style model with PEFT's LoRA tensors, which
CI runs on the CPU; "hf-peft", the Transformers Trainer with a PEFT LoRA model built from the
configuration (needs transformers and peft). QLoRA and 8-bit AdamW need bitsandbytes and
CUDA; without them those settings are skipped and the skip is printed.
"""

import argparse
import contextlib
import csv
import gc
import importlib.util
import itertools
import json
import os
import select
import statistics
import subprocess
import sys
import tempfile
import time

COLUMNS = [
    "id", "source", "quote", "model", "params_b", "hidden", "layers", "heads", "kv_heads",
    "intermediate", "vocab", "method", "lora_rank", "lora_targets", "weight_dtype",
    "compute_dtype", "optimizer", "micro_batch", "seq_len", "grad_ckpt", "gpus", "measured_gb",
    "measure_kind", "notes",
]

# Architectures from the models' published config.json (hidden_size, num_hidden_layers,
# num_attention_heads, num_key_value_heads, intermediate_size, vocab_size,
# tie_word_embeddings; `config`: the Transformers configuration class, for --stack hf-peft).
# "tiny" is the rig's own test size.
MODELS = {
    "tiny": dict(hidden=64, layers=2, heads=4, kv_heads=2, intermediate=128, vocab=512, tied=False,
                 config="LlamaConfig"),
    "qwen2.5-0.5b": dict(hidden=896, layers=24, heads=14, kv_heads=2, intermediate=4864,
                         vocab=151936, tied=True, config="Qwen2Config"),
    "llama-3.2-1b": dict(hidden=2048, layers=16, heads=32, kv_heads=8, intermediate=8192,
                         vocab=128256, tied=True, config="LlamaConfig"),
    "llama-3.1-8b": dict(hidden=4096, layers=32, heads=32, kv_heads=8, intermediate=14336,
                         vocab=128256, tied=False, config="LlamaConfig"),
}

# Grids: each is a list of dicts of lists; the product of each dict's lists is run.
GRIDS = {
    "tiny": [dict(model=["tiny"], method=["lora", "full"], rank=[8], batch=[1], seq=[32],
                  ckpt=["off"], loss=["fp32"], optimizer=["adamw"]),
             dict(model=["tiny"], method=["lora"], rank=[4], batch=[2], seq=[32], ckpt=["on"],
                  loss=["chunked"], optimizer=["adamw"]),
             # A peak well above the others', so that the repeat of the first setting after it
             # shows whether the high-water mark was reset in between.
             dict(model=["tiny"], method=["full"], rank=[0], batch=[4], seq=[512], ckpt=["off"],
                  loss=["fp32"], optimizer=["adamw"])],
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



# ---- the models ----------------------------------------------------------------------------


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


# ---- worker: one model's settings, one after another ---------------------------------------


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def hwm_bytes():
    """VmHWM: this process's RSS high-water mark since the last reset."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise OSError("no VmHWM in /proc/self/status")


def reset_hwm():
    """Resets VmHWM to the current RSS (proc(5), /proc/pid/clear_refs: "5", Linux 4.0)."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def release_memory(torch, cuda):
    """What the previous setting left: its tensors, the allocator's cache, malloc's free pages."""
    gc.collect()
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        return
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


@contextlib.contextmanager
def building(torch, device, dtype):
    """Parameters made in `dtype` and, where torch allows it (2.0+), on `device` at once.

    An 8B model made in fp32 on the CPU and then cast and copied took tens of seconds of each
    setting; made in place it takes a fraction of one.
    """
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    place = torch.device(device)
    try:
        if hasattr(place, "__enter__"):
            with place:
                yield
        else:
            yield
    finally:
        torch.set_default_dtype(previous)


class Meter:
    """The peak of one setting's steps: the allocator's on CUDA, the RSS high-water mark on CPU.

    begin() after the model is built, so the peak counts the weights that stay (they are
    allocated) but not a transient of building them; end() reads the peaks.
    """

    def __init__(self, torch, cuda):
        self.torch, self.cuda = torch, cuda
        release_memory(torch, cuda)
        self.base_rss = None if cuda else rss_bytes()

    def begin(self):
        if self.cuda:
            self.torch.cuda.synchronize()
            self.torch.cuda.reset_peak_memory_stats()
        else:
            reset_hwm()

    def end(self):
        if self.cuda:
            self.torch.cuda.synchronize()
            return dict(allocated=self.torch.cuda.max_memory_allocated(),
                        reserved=self.torch.cuda.max_memory_reserved())
        return dict(rss=max(0, hwm_bytes() - self.base_rss))


def run_plain(torch, s, device):
    arch = MODELS[s["model"]]
    cuda = device == "cuda"
    meter = Meter(torch, cuda)
    torch.manual_seed(0)
    with building(torch, device, torch.bfloat16):
        model = build_plain(torch, arch, torch.bfloat16)
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
    gen = torch.Generator(device="cpu").manual_seed(1)
    meter.begin()
    start = time.monotonic()
    for _ in range(s["steps"]):
        ids = torch.randint(0, arch["vocab"], (s["batch"], s["seq"] + 1), generator=gen).to(device)
        h = model.hidden_states(ids[:, :-1])
        loss = loss_of(torch, h, model.lm_head.weight, ids[:, 1:], s["loss"])
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    out = dict(params=params, steps_s=time.monotonic() - start, loss=float(loss))
    out.update(meter.end())
    return out


# The Trainer's optimizer names (transformers training_args.py, OptimizerNames) for the grid's.
HF_OPTIM = {"adamw": "adamw_torch", "adamw-fused": "adamw_torch_fused",
            "adamw-8bit": "adamw_bnb_8bit"}


def run_hf_peft(torch, s, device):
    """The stack most users run: a Transformers Trainer, PEFT LoRA, bf16, three steps.

    The model is made from its configuration (AutoModelForCausalLM.from_config with dtype=,
    random weights), wrapped by peft.get_peft_model for LoRA (adapter weights kept in fp32, its
    autocast_adapter_dtype default), and trained by Trainer.train() with max_steps; gradient
    checkpointing is TrainingArguments' (non-reentrant, which needs no input gradients for a
    frozen embedding). Logging, saving, reporting and progress bars are off.
    """
    import peft
    import transformers

    arch = MODELS[s["model"]]
    cuda = device == "cuda"
    meter = Meter(torch, cuda)
    torch.manual_seed(0)
    config = getattr(transformers, arch["config"])(
        vocab_size=arch["vocab"], hidden_size=arch["hidden"], intermediate_size=arch["intermediate"],
        num_hidden_layers=arch["layers"], num_attention_heads=arch["heads"],
        num_key_value_heads=arch["kv_heads"], tie_word_embeddings=arch["tied"], use_cache=False)
    with building(torch, device, torch.bfloat16):
        model = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    model = model.to(device)
    params = sum(p.numel() for p in model.parameters())
    if s["method"] == "lora":
        model = peft.get_peft_model(model, peft.LoraConfig(
            r=s["rank"], lora_alpha=2 * s["rank"], lora_dropout=0.0, target_modules=LORA_TARGETS,
            bias="none", task_type="CAUSAL_LM"))

    class Tokens(torch.utils.data.Dataset):
        def __init__(self):
            gen = torch.Generator(device="cpu").manual_seed(1)
            self.ids = torch.randint(0, arch["vocab"], (s["batch"] * s["steps"], s["seq"]),
                                     generator=gen)

        def __len__(self):
            return len(self.ids)

        def __getitem__(self, i):
            return {"input_ids": self.ids[i], "labels": self.ids[i]}

    def collate(rows):
        return {k: torch.stack([r[k] for r in rows]) for k in ("input_ids", "labels")}

    with tempfile.TemporaryDirectory(prefix="truth-rig-") as out_dir:
        ckpt = s["ckpt"] == "on"
        args = transformers.TrainingArguments(
            output_dir=out_dir, per_device_train_batch_size=s["batch"], max_steps=s["steps"],
            learning_rate=1e-4, bf16=True, optim=HF_OPTIM[s["optimizer"]],
            gradient_checkpointing=ckpt,
            gradient_checkpointing_kwargs={"use_reentrant": False} if ckpt else None,
            logging_strategy="no", save_strategy="no", report_to="none", disable_tqdm=True,
            dataloader_num_workers=0, remove_unused_columns=False, seed=0,
            **({} if cuda else {"use_cpu": True}))
        trainer = transformers.Trainer(model=model, args=args, train_dataset=Tokens(),
                                       data_collator=collate)
        meter.begin()
        start = time.monotonic()
        result = trainer.train()
        out = dict(params=params, steps_s=time.monotonic() - start,
                   loss=float(result.training_loss))
        out.update(meter.end())
    return out


STACKS = {"plain": run_plain, "hf-peft": run_hf_peft}


def stack_versions(stack):
    """The libraries of `stack` that do not import, as one line, or None when all do."""
    needs = {"plain": [], "hf-peft": ["transformers", "peft"]}[stack]
    missing = [m for m in needs if not has(m)]
    if missing:
        return "not importable: %s" % ", ".join(missing)
    return None


def worker_main(config):
    """Runs settings read from stdin, one JSON line each; answers on the original stdout.

    Everything else the libraries print goes to stderr (the parent keeps its last line for a
    failure). The parent's death ends the worker (PR_SET_PDEATHSIG), so a cut run frees the GPU.
    """
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
    except (OSError, AttributeError):
        pass
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    t0 = time.monotonic()
    import torch

    device = config["device"]
    if device == "cuda":
        torch.cuda.init()
    if config["stack"] == "hf-peft":
        import peft  # noqa: F401 (imported once, here, not in the first setting's time)
        import transformers  # noqa: F401
    run = STACKS[config["stack"]]

    def answer(obj):
        answers.write(json.dumps(obj) + "\n")
        answers.flush()

    # One unmeasured run of the first setting: the process's one-time costs (code loaded on
    # first use, thread pools, cuBLAS handles and workspaces) are paid before any measurement,
    # so the first measured setting is measured like the ones after it.
    warmup = config.get("warmup")
    if warmup is not None:
        try:
            run(torch, dict(warmup, steps=1), device)
        except Exception:
            pass  # the setting itself will say what fails
    answer(dict(ready=True, pid=os.getpid(), startup_s=time.monotonic() - t0))
    for line in sys.stdin:
        s = json.loads(line)
        t1 = time.monotonic()
        try:
            result = run(torch, s, device)
        except Exception as e:  # one setting's failure (an OOM, say) is not the model's
            answer(dict(index=s["index"], ok=False, error="%s: %s" % (type(e).__name__, e)))
        else:
            result["setting_s"] = time.monotonic() - t1
            answer(dict(index=s["index"], ok=True, result=result))
    return 0


# ---- parent: the grid ----------------------------------------------------------------------


def versions(torch_version, device_name, stack):
    from importlib import metadata

    parts = [f"torch {torch_version}"]
    for mod in ("transformers", "peft", "accelerate", "bitsandbytes"):
        try:
            parts.append(f"{mod} {metadata.version(mod)}")
        except metadata.PackageNotFoundError:
            pass
    return f"--stack {stack}; {device_name}; " + "; ".join(parts)


def rows_for(index, s, result, env):
    arch = MODELS[s["model"]]
    method = s["method"]
    if env["stack"] == "hf-peft":
        built = ("Transformers Trainer" + (" + PEFT LoRA" if method != "full" else "")
                 + f", {arch['config'].replace('Config', 'ForCausalLM')} from its config, "
                 "random weights, bf16 Trainer")
        loss = "standard loss (the model's, fp32 upcast logits)"
    else:
        built = "plain-PyTorch Llama-style model, random weights"
        loss = ("chunked ce (8 chunks, fp32 upcast)" if s["loss"] == "chunked"
                else "standard loss (fp32 upcast logits)")
    base = {
        "source": f"bench/gpu_truth/truth_rig.py ({env['date']}; {env['versions']})",
        "quote": json.dumps({k: s[k] for k in sorted(s) if k != "index"}, sort_keys=True),
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
        "notes": (f"rig row; {built}; "
                  + ("tied embeddings; " if arch["tied"] else "")
                  + loss
                  + f"; lora dropout 0; {s['steps']} steps; {result['steps_s']:.1f} s"),
    }
    rid = f"GT-{index:03d}"
    if "rss" in result:
        kind = ("CPU process RSS high-water (VmHWM, reset after the model build) above RSS "
                "before model build; decimal GB; a CPU figure, not a GPU one")
        return [dict(base, id=rid, measured_gb=f"{result['rss'] / 1e9:.6f}", measure_kind=kind)]
    return [
        dict(base, id=rid + "-a", measured_gb=f"{result['allocated'] / 1e9:.6f}",
             measure_kind="torch.cuda.max_memory_allocated()/1e9; decimal GB"),
        dict(base, id=rid + "-r", measured_gb=f"{result['reserved'] / 1e9:.6f}",
             measure_kind="torch.cuda.max_memory_reserved()/1e9; decimal GB"),
    ]


def skip_reason(s, device, stack):
    needs_bnb = s["method"] == "qlora" or s["optimizer"] == "adamw-8bit"
    if stack == "hf-peft" and s["method"] == "qlora":
        return "QLoRA on --stack hf-peft: 4-bit weights load only through from_pretrained"
    if stack == "hf-peft" and s["loss"] == "chunked":
        return "chunked loss: --stack plain only (the Trainer computes the model's own loss)"
    if needs_bnb and (device != "cuda" or not has("bitsandbytes")):
        return "needs bitsandbytes on CUDA"
    if s["optimizer"] == "adamw-fused" and device != "cuda":
        return "fused AdamW needs CUDA"
    return None


# How far a repeated setting's peak may be from the first's (relative, and a floor in bytes):
# the allocator's figures of one workload on one device are expected to repeat to the byte,
# the cache's to its segments; the RSS of a CPU run moves with malloc's arenas.
TOLERANCE = {"allocated": (0.01, 2 << 20), "reserved": (0.05, 64 << 20), "rss": (0.10, 16 << 20)}


def repeat_check(index, first, again):
    figures = {}
    ok = True
    for key, (rel, floor) in TOLERANCE.items():
        if key not in first or key not in again:
            continue
        allowed = max(rel * first[key], floor)
        within = abs(again[key] - first[key]) <= allowed
        ok = ok and within
        figures[key] = dict(first_bytes=first[key], repeat_bytes=again[key],
                            allowed_bytes=int(allowed), ok=within)
    return dict(id=f"GT-{index:03d}", check="repeat", ok=ok, figures=figures)


class DurableLines:
    """A file written line by line, each flushed and fsync'ed, so a cut run keeps them."""

    def __init__(self, path, header=None):
        self.f = open(path, "w", newline="")
        self.csv = csv.DictWriter(self.f, fieldnames=header) if header else None
        if self.csv:
            self.csv.writeheader()
            self.sync()

    def sync(self):
        self.f.flush()
        try:
            os.fsync(self.f.fileno())
        except OSError:
            pass  # not a file that can be synced (/dev/null): nothing to keep

    def rows(self, rows):
        self.csv.writerows(rows)
        self.sync()

    def line(self, obj):
        self.f.write(json.dumps(obj, sort_keys=True) + "\n")
        self.sync()

    def close(self):
        self.f.close()


class Worker:
    """One worker process and its answers; read() waits until a deadline (monotonic)."""

    def __init__(self, config):
        self.err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--worker", json.dumps(config)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err)
        self.buf = b""

    def send(self, obj):
        self.proc.stdin.write((json.dumps(obj) + "\n").encode())
        self.proc.stdin.flush()

    def read(self, deadline):
        """The next answer; None at the deadline; EOFError when the worker died."""
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise EOFError(self.last_error())
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def last_error(self):
        self.err.seek(0)
        lines = self.err.read().decode(errors="replace").strip().splitlines()
        return lines[-1] if lines else f"no output (exit status {self.proc.poll()})"

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            self.kill()
        self.err.close()

    def kill(self):
        self.proc.kill()
        self.proc.wait()


def by_model(grid):
    """The grid's settings (numbered in grid order) grouped by model, in order of appearance."""
    groups = {}
    for i, s in enumerate(settings(grid), 1):
        groups.setdefault(s["model"], []).append((i, s))
    return list(groups.items())


def time_for(now, deadline, setting_s, startup_s, new_worker):
    """(whether the next setting fits before the deadline, the seconds it is expected to take).

    The estimate is the longest setting so far, plus the longest worker start when the setting
    needs a new worker; with nothing measured yet it is 0, so the run's first setting always
    starts (and is cut at the deadline if it overruns).
    """
    need = max(setting_s, default=0.0) + (max(startup_s, default=0.0) if new_worker else 0.0)
    return now + need <= deadline, need


def say(text):
    print(f"truth_rig: {text}", file=sys.stderr, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="CSV to write (planner_accuracy's columns); required")
    ap.add_argument("--grid", choices=sorted(GRIDS), default="tiny")
    ap.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    ap.add_argument("--stack", choices=sorted(STACKS), default="plain",
                    help="plain: plain-PyTorch model (CI); hf-peft: Transformers Trainer + PEFT")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=300, help="seconds per setting")
    ap.add_argument("--max-seconds", type=float, default=None,
                    help="end cleanly (exit 0, the rows so far) before a setting that would not "
                         "finish within this many seconds of the start")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker_main(json.loads(args.worker))
    if not args.out:
        ap.error("--out is required")
    if args.steps < 1:
        ap.error("--steps must be 1 or more")
    if args.max_seconds is not None and args.max_seconds <= 0:
        ap.error("--max-seconds must be more than 0")
    missing = stack_versions(args.stack)
    if missing:
        say(f"--stack {args.stack} needs transformers and peft: {missing}")
        return 2

    started = time.monotonic()
    deadline = started + args.max_seconds if args.max_seconds else float("inf")
    import torch

    device = args.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        say("--device cuda: no CUDA device")
        return 2
    name = torch.cuda.get_device_name(0) if device == "cuda" else "CPU (no CUDA)"
    env = dict(date=time.strftime("%Y-%m-%d", time.gmtime()), stack=args.stack,
               versions=versions(torch.__version__, name, args.stack))
    out = DurableLines(args.out, COLUMNS)
    checks = DurableLines(args.out + ".checks.jsonl")
    measured, setting_s, startup_s = 0, [], []
    failed = 0
    stopped = None
    for model, items in by_model(args.grid):
        plan = []
        for i, s in items:
            s = dict(s, index=i, steps=args.steps)
            reason = skip_reason(s, device, args.stack)
            if reason:
                say(f"GT-{i:03d} skipped: {reason}")
            else:
                plan.append((i, s, False))
        worker, first = None, None
        while plan and stopped is None:
            i, s, repeat = plan.pop(0)
            fits, need = time_for(time.monotonic(), deadline, setting_s, startup_s, worker is None)
            if not fits:
                left = deadline - time.monotonic()
                stopped = (f"stopped before GT-{i:03d}{' (repeat)' if repeat else ''}: "
                           + (f"--max-seconds {args.max_seconds:g} leaves {left:.1f} s, a "
                              f"setting takes up to {need:.1f} s" if left > 0 else
                              f"the --max-seconds {args.max_seconds:g} have run out"))
                break
            if worker is None:
                t0 = time.monotonic()
                worker = Worker(dict(device=device, stack=args.stack, warmup=s))
                try:
                    hello = worker.read(min(t0 + args.timeout, deadline))
                except EOFError as e:
                    say(f"{model}: the worker did not start: {e}")
                    failed += len(plan) + 1
                    worker.close()
                    worker = None
                    break
                if hello is None:
                    worker.kill()
                    worker = None
                    if time.monotonic() >= deadline:
                        stopped = f"cut at --max-seconds {args.max_seconds:g} starting a worker"
                    else:
                        say(f"{model}: the worker did not start in {args.timeout:g} s")
                        failed += len(plan) + 1
                    break
                startup_s.append(time.monotonic() - t0)
            t0 = time.monotonic()
            worker.send(s)
            try:
                answer = worker.read(min(t0 + args.timeout, deadline))
            except EOFError as e:
                say(f"GT-{i:03d} failed: the worker died: {e}")
                failed += 1
                worker.close()
                worker = None
                continue
            if answer is None:
                worker.kill()
                worker = None
                if time.monotonic() >= deadline:
                    stopped = f"cut at --max-seconds {args.max_seconds:g} during GT-{i:03d}"
                else:
                    say(f"GT-{i:03d} timed out after {args.timeout:g} s")
                    failed += 1
                continue
            seconds = time.monotonic() - t0
            setting_s.append(seconds)
            if not answer["ok"]:
                say(f"GT-{i:03d} failed: {answer['error']}")
                failed += 1
                continue
            result = answer["result"]
            if repeat:
                check = repeat_check(i, first, result)
                check.update(model=model, pid=hello["pid"])
                checks.line(check)
                say(f"GT-{i:03d} repeated in the same worker: "
                    + ", ".join(f"{k} {v['first_bytes']} then {v['repeat_bytes']} bytes"
                                for k, v in check["figures"].items())
                    + (" (within tolerance)" if check["ok"] else " (NOT within tolerance)"))
                failed += not check["ok"]
                continue
            rows = rows_for(i, s, result, env)
            out.rows(rows)
            measured += 1
            say(f"GT-{i:03d} {model} {s['method']} -> {rows[-1]['measured_gb']} GB "
                f"(worker pid {hello['pid']}, {seconds:.1f} s)")
            if first is None:
                first = result
                plan.append((i, s, True))  # the reset's check, after the model's other settings
        if worker is not None:
            worker.close()
        if stopped:
            break
    out.close()
    checks.close()
    total = time.monotonic() - started
    if setting_s:
        say(f"{measured} settings measured in {total:.1f} s: "
            f"{statistics.median(setting_s):.2f} s per setting (median; "
            f"{min(setting_s):.2f}-{max(setting_s):.2f}), "
            f"worker start {statistics.median(startup_s):.2f} s (median of {len(startup_s)})")
    if stopped:
        say(stopped)
        return 1 if failed else 0
    return 1 if failed or not measured else 0


if __name__ == "__main__":
    sys.exit(main())
