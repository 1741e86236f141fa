#!/usr/bin/env python3
"""The live page of `headroom export` in a real headless browser (Debian's `chromium`).

    python3 tests/export/live_browser_test.py HEADROOM FAKE_NVML [ARTIFACT_DIR] [--screenshot PNG]

Everything is real but the GPU: a `headroom guard` runs a job that writes the companion's step
records (headroom.step/1) into a journal of its own; exporter A reads that journal with the
fake NVML (tests/fakes/fake_nvml.cc, GB10, warming 1 C a sample) and takes exporter B (the
GB10 fixture tree) as `--node`. Chromium loads A's page (--dump-dom) twice, and this checks:

- the page rendered data from /live.json (body data-updates), with two columns, A's and B's;
- its figures are the exporters': MemTotal is A's /live.json figure and B's fixture figure,
  the GPU's sustained cap is GB10's 100 W, the temperature shown lies between the
  temperatures /metrics gave just before and just after the load, the guard's kill level is
  the one the guard was given, and the job's steps are counted;
- they change when the fake GPU's do: the second load shows a higher temperature and more
  steps;
- the page is self-contained (a CSP meta tag, no http(s) URL in it) and answers no write:
  POST / is 405.

It saves a screenshot (1280x800) in ARTIFACT_DIR (default /tmp/live-artifacts), or at
--screenshot PNG. Exit status 0 when every check passes, 1 otherwise (chromium missing included).
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "gb10-idle")
FIXTURE_MEM_TOTAL = 130663165952
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--no-default-browser-check", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-extensions",
         "--hide-scrollbars", "--virtual-time-budget=3000"]
STEP_JOB = (
    'i=0; while [ $i -lt 900 ]; do i=$((i+1)); '
    'printf \'{"schema":"headroom.step/1","kind":"step","pid":%d,"wall":%s,"mono":%d,"step":%d}\\n\' '
    '$$ "$(date +%s.%N)" $i $i >> "$HEADROOM_STEP_RECORDS"; sleep 0.2; done')

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)
    return ok


def get(port, path, method="GET"):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method)
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, ""


def start_exporter(headroom, env, args, log):
    p = subprocess.Popen([headroom, "export", "--listen", "127.0.0.1:0", "--interval", "300ms"] +
                         args, env=env, stdout=subprocess.DEVNULL, stderr=log)
    deadline = time.time() + 20
    while time.time() < deadline:
        with open(log.name, errors="replace") as f:
            m = re.search(r"http://127\.0\.0\.1:(\d+)/metrics", f.read())
        if m:
            return p, int(m.group(1))
        if p.poll() is not None:
            break
        time.sleep(0.1)
    raise RuntimeError("exporter did not start: " + open(log.name, errors="replace").read())


def metric(port, name):
    _, text = get(port, "/metrics")
    m = re.search(r"^" + re.escape(name) + r"(?:\{[^}]*\})? (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


def figures(dom):
    """{column index: {data-k: [data-v, ...]}} from the dumped DOM."""
    cols = {}
    parts = re.split(r'<div class="node[^"]*" data-node="', dom)[1:]
    for i, part in enumerate(parts):
        name = part.split('"', 1)[0]
        ks = {}
        for k, v in re.findall(r'data-k="([a-z-]+)" data-v="([^"]*)"', part):
            ks.setdefault(k, []).append(v)
        ks["_name"] = [name]
        cols[i] = ks
    return cols


def load(chromium, port):
    r = subprocess.run([chromium] + FLAGS + ["--dump-dom", f"http://127.0.0.1:{port}/"],
                       capture_output=True, text=True, timeout=90)
    return r.stdout


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    shot = None
    if "--screenshot" in argv:
        shot = argv[argv.index("--screenshot") + 1]
        args.remove(shot)
    if len(args) < 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    headroom, fake = os.path.abspath(args[0]), os.path.abspath(args[1])
    artifacts = args[2] if len(args) > 2 else "/tmp/live-artifacts"
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("live_browser_test: chromium not found: install it with `apt-get install chromium` "
              "(scripts/install-deps does)", file=sys.stderr)
        return 1
    os.makedirs(artifacts, exist_ok=True)
    shot = shot or os.path.join(artifacts, "live-page.png")
    procs = []
    with tempfile.TemporaryDirectory(prefix="headroom-live-") as tmp:
        script = os.path.join(tmp, "fake.txt")
        with open(script, "w") as f:
            f.write("scenario gb10\ntemp_start_c 40\ntemp_step_c 1\ndegrade_after 1000000\n")
        env = dict(os.environ, HEADROOM_FAKE_NVML_SCRIPT=script, LANG="C", LC_ALL="C")
        env.pop("LANGUAGE", None)
        journal = os.path.join(tmp, "journal.db")
        records = os.path.join(tmp, "steps.jsonl")
        logs = [open(os.path.join(tmp, n), "w+") for n in ("b.err", "guard.err", "a.err")]
        try:
            b, port_b = start_exporter(headroom, env, ["--root", FIXTURE, "--no-journal",
                                                       "--nvml-lib", fake], logs[0])
            procs.append(b)
            # Levels far below MemAvailable: this guard never acts.
            guard = subprocess.Popen(
                [headroom, "guard", "--journal", journal, "--step-records", records,
                 "--min-available", "64MiB", "--warn-available", "128MiB", "--no-cgroup", "--",
                 "sh", "-c", STEP_JOB], env=env, stdout=subprocess.DEVNULL, stderr=logs[1])
            procs.append(guard)
            a, port_a = start_exporter(headroom, env, ["--journal", journal, "--nvml-lib", fake,
                                                       "--node", f"http://127.0.0.1:{port_b}"],
                                       logs[2])
            procs.append(a)
            live = {}
            deadline = time.time() + 20
            while time.time() < deadline:
                live = json.loads(get(port_a, "/live.json")[1])
                jobs = live["now"].get("guarded_jobs", [])
                # The guard's levels (now.guards, from the running guards' registry) and its
                # job's steps (now.guarded_jobs) are read on their own: wait for both, or the
                # first page load can come between them.
                if (jobs and (jobs[0].get("steps") or 0) > 0 and live["now"].get("guards")
                        and live["nodes"][0]["ok"]):
                    break
                time.sleep(0.3)
            check(bool(live["now"].get("guarded_jobs")), "the guard's run in /live.json: " +
                  json.dumps(live["now"].get("guards_note")) + open(logs[1].name).read())

            page = get(port_a, "/")[1]
            check('http-equiv="Content-Security-Policy"' in page, "the page has its CSP")
            # The one URL is SVG's namespace name, which is never fetched.
            urls = set(re.findall(r"https?://[^\s\"'<>)]*", page)) - {"http://www.w3.org/2000/svg"}
            check(not urls, f"no http(s) URL in the page (no CDN): {sorted(urls)}")
            check(get(port_a, "/", "POST")[0] == 405, "POST / is 405")

            t0 = metric(port_a, "headroom_gpu_temperature_celsius")
            dom1 = load(chromium, port_a)
            t1 = metric(port_a, "headroom_gpu_temperature_celsius")
            time.sleep(2)
            dom2 = load(chromium, port_a)
            with open(os.path.join(artifacts, "live-page.html"), "w") as f:
                f.write(dom2)
            subprocess.run([chromium] + FLAGS + ["--window-size=1280,800", "--screenshot=" + shot,
                                                 f"http://127.0.0.1:{port_a}/"],
                           capture_output=True, timeout=90)
            check(os.path.exists(shot) and os.path.getsize(shot) > 10000, "screenshot " + shot)

            m = re.search(r'<body[^>]*data-updates="(\d+)"', dom1)
            check(m and int(m.group(1)) >= 1, "the page rendered /live.json")
            c1, c2 = figures(dom1), figures(dom2)
            check(len(c1) == 2, f"two columns (this machine and --node): {len(c1)}")
            if len(c1) == 2 and len(c2) == 2:
                here, node = c1[0], c1[1]
                check(node["_name"] == [f"http://127.0.0.1:{port_b}"], "the node's column: " +
                      str(node["_name"]))
                check(here.get("mem-total") == [str(live["now"]["memory"]["total_bytes"])],
                      f"MemTotal is the exporter's: {here.get('mem-total')}")
                check(node.get("mem-total") == [str(FIXTURE_MEM_TOTAL)],
                      f"the node's MemTotal is its fixture's: {node.get('mem-total')}")
                check(here.get("gpu-sustained") == ["100"], "GB10's sustained cap, 100 W")
                temp = float((here.get("gpu-temp") or ["nan"])[0])
                check(t0 is not None and t1 is not None and t0 <= temp <= t1,
                      f"the temperature shown {temp} is the exporter's, between {t0} and {t1}")
                check(here.get("guard-kill") == [str(64 << 20)], "the guard's kill level: " +
                      str(here.get("guard-kill")))
                steps1 = int((here.get("job-steps") or ["0"])[0] or 0)
                check(steps1 > 0, f"the job's steps are counted: {steps1}")
                temp2 = float((c2[0].get("gpu-temp") or ["nan"])[0])
                steps2 = int((c2[0].get("job-steps") or ["0"])[0] or 0)
                check(temp2 > temp, f"the temperature moves with the fake GPU: {temp} -> {temp2}")
                check(steps2 > steps1, f"the steps move with the job: {steps1} -> {steps2}")
        finally:
            for p in reversed(procs):
                if p.poll() is None:
                    p.send_signal(signal.SIGTERM)
            for p in procs:
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
            for log in logs:
                log.close()
    print("live page: %s" % ("ok" if not failures else "%d failures" % len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
