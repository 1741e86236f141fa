"""The report data contract (docs/report-data.md, schema_version 1) in executable form.

fill_template() does the substitution `headroom report` does; extract_data() reads the JSON
back out of a written page; validate() lists every way a data object breaks the contract;
downsample() is the reference min/max bucketing the C++ writer is expected to match.
Standard library only, so it runs wherever python3 does:

    python3 tests/report/report_contract.py report.html   # check a page headroom wrote
"""

import json
import math
import re
import sys

SCHEMA_VERSION = 1
PLACEHOLDER = "/*HEADROOM_DATA*/null"
MAX_SERIES_ENTRIES = 4096  # buckets plus gap markers; 2,000 buckets is the recommended count

# Series the page draws, with their unit; any other key is ignored by the page.
SERIES_UNITS = {
    "mem_used_bytes": "bytes",
    "mem_available_bytes": "bytes",
    "mem_cached_bytes": "bytes",
    "gpu_mem_used_bytes": "bytes",
    "swap_used_bytes": "bytes",
    "gpu_power_w": "W",
    "system_power_w": "W",
    "gpu_temp_c": "C",
    "max_sensor_temp_c": "C",
    "sm_clock_mhz": "MHz",
    "step_rate_per_s": "steps/s",
}
EVENT_KINDS = {"throttle", "clock_collapse", "power_plateau", "gpu_lost", "contention",
               "memory_pressure", "guard_warn", "guard_kill"}
VERDICTS = {"thermal", "clock-collapse", "contention", "host-side", "unexplained"}
RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")


def read_text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def embed_json(data):
    """The JSON text as the page embeds it: compact, finite numbers only, and '<' '>' '&'
    (plus U+2028/U+2029) as \\u escapes so no `</script>` or `<!--` can end the script."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for ch, rep in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                    ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(ch, rep)
    return text


def fill_template(template, data):
    """Replace the one line that is exactly PLACEHOLDER with the embedded JSON."""
    lines = template.split("\n")
    hits = [i for i, line in enumerate(lines) if line.rstrip("\r") == PLACEHOLDER]
    if len(hits) != 1:
        raise ValueError("template: expected one placeholder line %r, found %d" % (PLACEHOLDER, len(hits)))
    lines[hits[0]] = embed_json(data)
    return "\n".join(lines)


def extract_data(html):
    """The data object embedded in a page (None for the raw template)."""
    m = re.search(r"window\.HEADROOM_DATA =\n(.*)\n;\n</script>", html, re.S)
    if not m:
        raise ValueError("page: no `window.HEADROOM_DATA =` block")
    text = m.group(1)
    if text == PLACEHOLDER:
        return None
    if re.search(r"[<>&\u2028\u2029]", text):
        raise ValueError("page: embedded JSON holds a raw '<', '>', '&', U+2028 or U+2029")
    return json.loads(text)


def _is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def validate(d):
    """Every contract violation in data object d, as a list of strings (empty: valid)."""
    errs = []

    def need(cond, msg):
        if not cond:
            errs.append(msg)
        return cond

    if not need(isinstance(d, dict), "top level: not an object"):
        return errs
    need(d.get("schema_version") == SCHEMA_VERSION, "schema_version: must be 1")
    need(isinstance(d.get("start"), str) and RFC3339.match(d["start"]), "start: RFC 3339 time required")
    dur = d.get("duration_s")
    need(_is_num(dur) and dur >= 0, "duration_s: number >= 0 required")
    dur = dur if _is_num(dur) else 0
    for key in ("title", "host", "device", "generator", "generated"):
        need(d.get(key) is None or isinstance(d[key], str), "%s: string or null" % key)

    sm = d.get("sampling")
    if need(isinstance(sm, dict), "sampling: object required"):
        need(_is_int(sm.get("rows")) and sm["rows"] >= 0, "sampling.rows: integer >= 0")
        need(_is_num(sm.get("interval_s")) and sm["interval_s"] > 0, "sampling.interval_s: number > 0")
        need(_is_int(sm.get("buckets")) and sm["buckets"] >= 0, "sampling.buckets: integer >= 0")
        need(_is_num(sm.get("bucket_s")) and sm["bucket_s"] > 0, "sampling.bucket_s: number > 0")
        need(sm.get("method") == "minmax", "sampling.method: \"minmax\"")
        if _is_num(sm.get("bucket_s")) and _is_num(sm.get("interval_s")):
            need(sm["bucket_s"] >= sm["interval_s"] * 0.999, "sampling.bucket_s: below interval_s")
    bucket_s = sm.get("bucket_s", 0) if isinstance(sm, dict) and _is_num(sm.get("bucket_s")) else 0

    need(d.get("mem_total_bytes") is None or _is_int(d["mem_total_bytes"]), "mem_total_bytes: integer or null")
    pf = d.get("platform")
    if need(isinstance(pf, dict), "platform: object required"):
        need(pf.get("name") in ("gb10", "discrete", "integrated", "none"), "platform.name: gb10|discrete|integrated|none")
        for k in ("sustained_power_w", "rated_power_w", "normal_sm_clock_mhz"):
            need(pf.get(k) is None or _is_num(pf[k]), "platform.%s: number or null" % k)
        band = pf.get("degraded_sm_clock_mhz")
        need(band is None or (isinstance(band, list) and len(band) == 2 and all(_is_num(x) for x in band)
                              and band[0] <= band[1]), "platform.degraded_sm_clock_mhz: [lo, hi] or null")
    pl = d.get("plan")
    if pl is not None and need(isinstance(pl, dict), "plan: object or null"):
        need(_is_int(pl.get("estimate_bytes")) and pl["estimate_bytes"] > 0, "plan.estimate_bytes: integer > 0")
    gd = d.get("guard")
    if gd is not None and need(isinstance(gd, dict), "guard: object or null"):
        need(_is_int(gd.get("kill_level_bytes")), "guard.kill_level_bytes: integer")
        need(gd.get("warn_level_bytes") is None or _is_int(gd["warn_level_bytes"]), "guard.warn_level_bytes: integer or null")
    need(d.get("step_baseline_per_s") is None or (_is_num(d["step_baseline_per_s"]) and d["step_baseline_per_s"] > 0),
         "step_baseline_per_s: number > 0 or null")

    series = d.get("series")
    if need(isinstance(series, dict), "series: object required"):
        for key, s in series.items():
            where = "series.%s" % key
            if key not in SERIES_UNITS:
                errs.append("%s: not a series of schema 1 (the page ignores it)" % where)
                continue
            if not need(isinstance(s, dict), where + ": object required"):
                continue
            arrays = [s.get(k) for k in ("t", "min", "max", "mean")]
            if not need(all(isinstance(a, list) for a in arrays), where + ": t, min, max, mean arrays required"):
                continue
            t, mn, mx, me = arrays
            n = len(t)
            need(len(mn) == n and len(mx) == n and len(me) == n, where + ": arrays of unequal length")
            need(n <= MAX_SERIES_ENTRIES, where + ": %d entries, at most %d" % (n, MAX_SERIES_ENTRIES))
            prev = -math.inf
            for i in range(min(n, len(mn), len(mx), len(me))):
                if not need(_is_num(t[i]), "%s.t[%d]: number required" % (where, i)):
                    break
                if not need(t[i] >= prev, "%s.t[%d]: goes back in time" % (where, i)):
                    break
                prev = t[i]
                if not need(-1e-6 <= t[i] <= dur + bucket_s + 1e-6, "%s.t[%d]: outside 0..duration_s" % (where, i)):
                    break
                vals = (mn[i], mx[i], me[i])
                if all(v is None for v in vals):
                    continue  # a gap marker
                if not need(all(_is_num(v) for v in vals), "%s[%d]: min, max, mean all numbers or all null" % (where, i)):
                    break
                if not need(mn[i] <= me[i] + 1e-9 and me[i] <= mx[i] + 1e-9, "%s[%d]: not min <= mean <= max" % (where, i)):
                    break
                if SERIES_UNITS[key] == "bytes" and not need(
                        all(_is_int(v) for v in vals), "%s[%d]: bytes must be integers" % (where, i)):
                    break

    evs = d.get("events")
    if need(isinstance(evs, list), "events: array required"):
        for i, e in enumerate(evs):
            where = "events[%d]" % i
            if not need(isinstance(e, dict), where + ": object required"):
                continue
            need(_is_num(e.get("t")), where + ".t: number required")
            need(e.get("end_t") is None or (_is_num(e["end_t"]) and _is_num(e.get("t")) and e["end_t"] >= e["t"]),
                 where + ".end_t: null or a number >= t")
            need(isinstance(e.get("kind"), str) and e["kind"], where + ".kind: string required")
            need(isinstance(e.get("text"), str), where + ".text: string required")
            need(e.get("reason") is None or isinstance(e["reason"], str), where + ".reason: string or null")
    sl = d.get("slowdowns")
    if sl is not None and need(isinstance(sl, list), "slowdowns: array or null"):
        for i, w in enumerate(sl):
            where = "slowdowns[%d]" % i
            if not need(isinstance(w, dict), where + ": object required"):
                continue
            need(_is_num(w.get("t")) and _is_num(w.get("end_t")) and w["end_t"] >= w["t"], where + ": t <= end_t numbers")
            need(w.get("verdict") in VERDICTS, where + ".verdict: one of " + ", ".join(sorted(VERDICTS)))
            for k in ("also", "evidence", "unavailable"):
                need(w.get(k) is None or (isinstance(w[k], list) and all(isinstance(x, str) for x in w[k])),
                     "%s.%s: array of strings" % (where, k))

    su = d.get("summary")
    if need(isinstance(su, dict), "summary: object required"):
        for k in ("peak_used_bytes", "min_available_bytes", "peak_job_bytes"):
            need(su.get(k) is None or _is_int(su[k]), "summary.%s: integer or null" % k)
        for k in ("peak_used_t", "min_available_t", "gpu_energy_j", "system_energy_j", "mean_gpu_power_w",
                  "peak_gpu_power_w", "peak_gpu_temp_c", "peak_gpu_temp_t", "clock_collapse_s", "steps"):
            need(su.get(k) is None or _is_num(su[k]), "summary.%s: number or null" % k)
        th = su.get("throttled_s")
        need(th is None or (isinstance(th, dict) and all(_is_num(v) for v in th.values())),
             "summary.throttled_s: {reason: seconds} or null")
    need(d.get("notes") is None or (isinstance(d["notes"], list) and all(isinstance(x, str) for x in d["notes"])),
         "notes: array of strings")
    src = d.get("sources")
    need(src is None or isinstance(src, dict), "sources: object or null")
    return errs


def downsample(times, values, duration_s, bucket_s, gap_s, ndigits=None):
    """Reference bucketing: readings (t, v) with v None for missing go into buckets
    floor(t / bucket_s); each non-empty bucket gives t = mean time of its readings and the
    min, max and mean of its values. One all-null entry is written where consecutive readings
    are more than gap_s and more than a bucket apart (a break in the line), never for every
    empty bucket: a series holds at most two entries per bucket."""
    out = {"t": [], "min": [], "max": [], "mean": []}
    last_bucket = None
    acc = None
    prev_t = None

    def flush():
        if acc and acc[0]:
            cnt, st, lo, hi, sv = acc
            mean = sv / cnt
            if ndigits == 0:
                lo, hi, mean = int(lo), int(hi), int(round(mean))
            elif ndigits is not None:
                lo, hi, mean = round(lo, ndigits), round(hi, ndigits), round(mean, ndigits)
            out["t"].append(round(st / cnt, 3))
            out["min"].append(lo)
            out["max"].append(hi)
            out["mean"].append(mean)

    for t, v in zip(times, values):
        if v is None:
            continue
        b = min(int(t // bucket_s), max(0, int(math.ceil(duration_s / bucket_s)) - 1))
        if prev_t is not None and t - prev_t > max(gap_s, bucket_s):
            flush()
            acc = None
            out["t"].append(round((prev_t + t) / 2, 3))
            for k in ("min", "max", "mean"):
                out[k].append(None)
            last_bucket = None
        prev_t = t
        if b != last_bucket:
            flush()
            acc = [0, 0.0, v, v, 0.0]
            last_bucket = b
        acc[0] += 1
        acc[1] += t
        acc[2] = min(acc[2], v)
        acc[3] = max(acc[3], v)
        acc[4] += v
    flush()
    return out


def main(argv):
    if len(argv) != 2:
        print("usage: report_contract.py REPORT.html|DATA.json", file=sys.stderr)
        return 2
    text = read_text(argv[1])
    data = json.loads(text) if argv[1].endswith(".json") else extract_data(text)
    if data is None:
        print("%s: the raw template (no data)" % argv[1])
        return 0
    errs = validate(data)
    for e in errs:
        print("%s: %s" % (argv[1], e))
    print("%s: %s" % (argv[1], "valid (schema_version 1)" if not errs else "%d problems" % len(errs)))
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
