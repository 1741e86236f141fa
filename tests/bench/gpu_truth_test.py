#!/usr/bin/python3
"""Runs bench/gpu_truth/truth_rig.py at its tiny size on the CPU and checks that its CSV
carries every column bench/planner_accuracy.cc reads, with values that reader can parse; that
it writes each row as it measures it (a run killed midway keeps its rows), runs one model's
settings in one worker and checks the peak's reset with a repeated setting, ends cleanly at
--max-seconds, and says in one line that --stack hf-peft needs transformers and peft."""

import csv
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RIG = os.path.join(ROOT, "bench", "gpu_truth", "truth_rig.py")
TINY_SETTINGS = 4  # the tiny grid's


def read_csv(path):
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        return set(reader.fieldnames or []), list(reader)


def check_full_run(tmp, read_cols):
    out = os.path.join(tmp, "truth.csv")
    p = subprocess.run([sys.executable, RIG, "--out", out, "--device", "cpu", "--steps", "2",
                        "--timeout", "60"], capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, p.stderr
    header, rows = read_csv(out)
    missing = read_cols - header
    assert not missing, f"columns planner_accuracy reads are missing: {sorted(missing)}"
    assert len(rows) == TINY_SETTINGS, rows
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
        assert "--stack plain" in r["source"], r
    methods = {r["method"] for r in rows}
    assert methods == {"full", "lora"}, methods
    assert any(r["grad_ckpt"] == "on" and "chunked ce" in r["notes"] for r in rows), rows
    # One worker for the model's settings: every progress line names the same process.
    pids = set(re.findall(r"GT-\d+ tiny \w+ -> [\d.]+ GB \(worker pid (\d+),", p.stderr))
    assert len(pids) == 1, p.stderr
    assert len(re.findall(r"worker pid", p.stderr)) == TINY_SETTINGS, p.stderr
    # The reset between settings, checked: the first setting again, after the largest peak,
    # gives the first's peak (without the reset it gives the largest, about 50 times as much).
    with open(out + ".checks.jsonl") as f:
        checks = [json.loads(line) for line in f]
    assert [(c["id"], c["check"], c["ok"]) for c in checks] == [("GT-001", "repeat", True)], checks
    rss = checks[0]["figures"]["rss"]
    assert abs(rss["first_bytes"] - float(rows[0]["measured_gb"]) * 1e9) <= 500, (rss, rows[0])
    assert abs(rss["repeat_bytes"] - rss["first_bytes"]) <= rss["allowed_bytes"], rss
    biggest = max(float(r["measured_gb"]) * 1e9 for r in rows)
    assert biggest - rss["first_bytes"] > rss["allowed_bytes"], (biggest, rss)  # a real test
    assert re.search(r"\d+ settings measured in [\d.]+ s: [\d.]+ s per setting", p.stderr), \
        p.stderr


def check_a_killed_run_keeps_its_rows(tmp):
    # The rig killed (SIGKILL: nothing of it runs after) while it still has settings to go:
    # the rows it measured before are on disk, whole, under the header.
    out = os.path.join(tmp, "cut.csv")
    p = subprocess.Popen([sys.executable, RIG, "--out", out, "--device", "cpu", "--steps", "2"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        rows = []
        end = time.monotonic() + 150
        while time.monotonic() < end and p.poll() is None:
            if os.path.exists(out):
                _, rows = read_csv(out)
                if rows:
                    break
            time.sleep(0.05)
        assert rows, "no row written while the rig ran"
        assert p.poll() is None, "the rig had ended: nothing shows the rows came as measured"
        assert len(rows) < TINY_SETTINGS, rows  # seen before the last setting was measured
        os.killpg(p.pid, signal.SIGKILL)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        p.stderr.close()
    header, kept = read_csv(out)
    assert "measured_gb" in header, header
    assert 1 <= len(kept) < TINY_SETTINGS, kept
    for r in kept:
        assert r["id"].startswith("GT-") and float(r["measured_gb"]) > 0, r
        assert r["notes"].startswith("rig row"), r  # whole rows: the last column is there


def check_max_seconds(tmp, rig):
    # The decision, on given figures: the longest setting so far, plus the longest worker
    # start when a new worker is needed; nothing measured yet: the first setting starts.
    assert rig.time_for(100.0, 110.0, [], [], True) == (True, 0.0)
    assert rig.time_for(100.0, 110.0, [2.0, 9.0, 3.0], [], False) == (True, 9.0)
    assert rig.time_for(100.0, 110.0, [2.0, 11.0], [], False) == (False, 11.0)
    assert rig.time_for(100.0, 110.0, [2.0, 3.0], [8.0], True) == (False, 11.0)
    assert rig.time_for(100.0, 110.0, [2.0, 3.0], [8.0], False) == (True, 3.0)
    # A real run with far too little time for the grid: 100 steps a setting take the tiny grid
    # about 20 s on an idle core here (2 steps took 2.5 s in all, too close to the budget to
    # be cut every time). It ends by itself, exit 0, says why in one line, and keeps the rows
    # it had.
    out = os.path.join(tmp, "limited.csv")
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, RIG, "--out", out, "--device", "cpu", "--steps", "100",
                        "--max-seconds", "3"], capture_output=True, text=True, timeout=120)
    took = time.monotonic() - t0
    assert p.returncode == 0, p.stderr
    said = [x for x in p.stderr.splitlines()
            if re.match(r"truth_rig: (stopped before GT-\d+|cut at --max-seconds 3 )", x)]
    assert len(said) == 1, p.stderr
    assert took < 3 + 30, took  # the limit, plus a worker's kill and the interpreter's exit
    header, rows = read_csv(out)
    assert "measured_gb" in header, header
    # The rows kept are exactly the settings before the point the line names: how far a
    # 3 s budget gets depends on the machine (an idle one measures the whole tiny grid and
    # stops before the repeat check, which writes no row), what is kept does not.
    before = re.match(r"truth_rig: stopped before GT-(\d+)( \(repeat\))?", said[0])
    during = re.match(r"truth_rig: cut at --max-seconds 3 during GT-(\d+)", said[0])
    if before and before.group(2):
        want = TINY_SETTINGS
    elif before or during:
        want = int((before or during).group(1)) - 1
    else:  # cut while its worker started: nothing measured
        want = 0
    assert len(rows) == want, (said[0], rows)
    assert [r["id"] for r in rows] == [f"GT-{i:03d}" for i in range(1, want + 1)], rows
    m = re.search(r"leaves ([\d.]+) s, a setting takes up to ([\d.]+) s", said[0])
    if m:
        # Both figures are shown to 0.1 s, so a cut that was right can show them equal.
        assert float(m.group(1)) <= float(m.group(2)), said
    for bad in (["--max-seconds", "0"], ["--steps", "0"]):
        p = subprocess.run([sys.executable, RIG, "--out", os.devnull] + bad,
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 2 and bad[0] in p.stderr, (bad, p.returncode, p.stderr)


def check_hf_peft_without_its_libraries(tmp):
    if importlib.util.find_spec("transformers") and importlib.util.find_spec("peft"):
        print("gpu_truth_test: transformers and peft importable: the refusal is not tested")
        return
    out = os.path.join(tmp, "hf.csv")
    p = subprocess.run([sys.executable, RIG, "--out", out, "--stack", "hf-peft", "--device",
                        "cpu"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, (p.returncode, p.stderr)
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("truth_rig: --stack hf-peft needs transformers and peft: "
                               "not importable: "), lines
    assert not os.path.exists(out)


def main():
    with open(os.path.join(ROOT, "bench", "planner_accuracy.cc")) as f:
        read_cols = set(re.findall(r'get\("(\w+)"\)', f.read()))
    assert {"id", "measured_gb", "seq_len", "params_b"} <= read_cols, read_cols
    spec = importlib.util.spec_from_file_location("truth_rig", RIG)
    rig = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rig)
    with tempfile.TemporaryDirectory() as tmp:
        check_full_run(tmp, read_cols)
        check_a_killed_run_keeps_its_rows(tmp)
        check_max_seconds(tmp, rig)
        check_hf_peft_without_its_libraries(tmp)
    print("gpu_truth_test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
