#!/usr/bin/python3
"""Runs bench/gpu_truth/truth_rig.py at its tiny size on the CPU and checks that its CSV
carries every column bench/planner_accuracy.cc reads, with values that reader can parse."""

import csv
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    with open(os.path.join(ROOT, "bench", "planner_accuracy.cc")) as f:
        read_cols = set(re.findall(r'get\("(\w+)"\)', f.read()))
    assert {"id", "measured_gb", "seq_len", "params_b"} <= read_cols, read_cols
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "truth.csv")
        p = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gpu_truth", "truth_rig.py"),
                            "--out", out, "--device", "cpu", "--steps", "2", "--timeout", "60"],
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        with open(out, newline="") as f:
            reader = csv.DictReader(f)
            header = set(reader.fieldnames)
            rows = list(reader)
    missing = read_cols - header
    assert not missing, f"columns planner_accuracy reads are missing: {sorted(missing)}"
    assert len(rows) == 3, rows
    ids = [r["id"] for r in rows]
    assert len(set(ids)) == len(ids), ids
    for r in rows:
        assert float(r["measured_gb"]) > 0, r
        assert 0 < float(r["params_b"]) < 0.001, r  # the tiny model: about 140 k parameters
        for col in ("hidden", "layers", "heads", "kv_heads", "intermediate", "vocab",
                    "micro_batch", "seq_len", "gpus"):
            int(r[col])
        assert r["method"] in ("full", "lora", "qlora"), r
        assert r["grad_ckpt"] in ("on", "off"), r
        assert "CPU" in r["measure_kind"], r  # says which peak it is
    methods = {r["method"] for r in rows}
    assert methods == {"full", "lora"}, methods
    assert any(r["grad_ckpt"] == "on" and "chunked ce" in r["notes"] for r in rows), rows
    # A bad flag is a one-line error, exit status 2 (argparse's).
    p = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gpu_truth", "truth_rig.py"),
                        "--out", "/dev/null", "--steps", "0"], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 2 and "--steps" in p.stderr, (p.returncode, p.stderr)
    print("gpu_truth_test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
