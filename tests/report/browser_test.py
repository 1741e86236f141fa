#!/usr/bin/env python3
"""Load the report page in a real headless browser (Debian's `chromium`) and check it.

    python3 tests/report/browser_test.py [ARTIFACT_DIR] [--page REPORT.html ...]
                                             # default /tmp/report-artifacts

Installs nothing: it needs `chromium` on PATH (Debian: apt-get install chromium) and
python3's standard library. For each page (the 24 h GB10 sample; the same opened zoomed
with the crosshair placed, then driven by synthetic pointer events; the small no-GPU sample;
a one-row edge case; the raw template) it:

- checks the file: the exact CSP meta tag, no fetching attribute (src, href, ...) other than
  data: or #fragment, no url() or network API in the page code, the 24 h page under 3 MB;
- runs `chromium --headless --dump-dom` with console logging on stderr and a net log, then
  asserts <body data-rendered="1">, no data-errors, the expected data-charts count, every
  chart's SVG with non-empty line paths (and "no data" for the others), the summary, notes
  and event lists; fails on any console message from the page and on any request the page
  made (net log URL_REQUEST_START_JOB whose initiator is the page rather than the browser);
- saves screenshots: wide (1280x2000), phone (390x1600) and wide in dark mode.

A canary page (the template without its CSP, with a script error, a console.error and an
image from http://127.0.0.1:9) must trip the error, console and network checks, so a
browser that stopped reporting them cannot pass this test unnoticed.
`--page FILE` (repeatable) adds a page written by `headroom report` itself: the same static,
contract, console, network and rendering checks (every chart it draws has a line), and a
wide screenshot.
Exit status 0 only when every check passes; the failures are listed otherwise; 2 when
chromium is missing.
"""

import html.parser
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import report_contract as rc  # noqa: E402
import sample_data  # noqa: E402

TEMPLATE = sample_data.TEMPLATE
MAX_PAGE_BYTES = 3 * 1000 * 1000  # "a few MB at most": 3 MB for the 24 h run
CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"
CHROMIUM_TIMEOUT_S = 60
# Quiet the browser's own background traffic (updates, time, sign-in); whatever is left is
# told apart from the page's requests by its initiator in the net log.
BASE_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-extensions", "--disable-default-apps", "--mute-audio", "--hide-scrollbars",
    "--disable-features=Translate,MediaRouter,OptimizationHints,NetworkTimeServiceQuerying",
    "--run-all-compositor-stages-before-draw", "--virtual-time-budget=3000",
]
ALLOWED_ATTR_VALUE = re.compile(r"^(#|data:|$)")
FETCH_ATTRS = re.compile(r"""\s(src|href|xlink:href|srcset|action|formaction|poster|background|ping|manifest|codebase|cite|longdesc|data)\s*=\s*("([^"]*)"|'([^']*)'|([^\s>]+))""", re.I)
NETWORK_CODE = re.compile(r"\b(fetch\s*\(|XMLHttpRequest|WebSocket|EventSource|sendBeacon|importScripts|import\s*\(|@import|<iframe|<object|<embed|<link\s+rel=\"?stylesheet)", re.I)


DRAG_SCRIPT = """<script>
(function () {
  var b = document.body, range = function () { return document.getElementById('range').textContent; };
  var wrap = document.querySelector('#chart-power .plotwrap'), r = wrap.getBoundingClientRect();
  b.dataset.zoomRange = range();
  var lines = document.querySelectorAll('#chart-memory path.line'), most = 0;
  lines.forEach(function (p) { most = Math.max(most, (p.getAttribute('d').match(/[ML]/g) || []).length); });
  b.dataset.zoomPoints = String(most);
  b.dataset.zoomLines = String(Array.prototype.filter.call(document.querySelectorAll('svg.plot'),
    function (svg) { return svg.querySelector('path.line'); }).length);
  b.dataset.zoomReadout = document.querySelector('#chart-memory .readout').textContent + ' | ' +
    document.querySelector('#chart-clock .readout').textContent;
  document.getElementById('zoom-reset').click();
  function fire(el, type, x) {
    el.dispatchEvent(new PointerEvent(type, { bubbles: true, clientX: r.left + x, clientY: r.top + 40,
      button: 0, buttons: 1, pointerId: 7, pointerType: 'mouse', isPrimary: true }));
  }
  b.dataset.before = range();
  fire(wrap, 'pointerdown', r.width * 0.30); fire(wrap, 'pointermove', r.width * 0.4);
  fire(wrap, 'pointermove', r.width * 0.55); fire(wrap, 'pointerup', r.width * 0.55);
  b.dataset.afterDrag = range();
  b.dataset.zoomedCharts = String(document.querySelectorAll('svg.plot').length);
  fire(document.querySelector('#chart-memory .plotwrap'), 'pointermove', r.width * 0.5);
  b.dataset.readout = document.querySelector('#chart-memory .readout').textContent;
  wrap.dispatchEvent(new MouseEvent('dblclick', { bubbles: true }));
  b.dataset.afterReset = range();
  document.querySelector('#events tbody tr').click();
  b.dataset.afterEvent = range();
  b.dataset.dragDone = '1';
})();
</script>"""


class Checks:
    def __init__(self):
        self.failures = []
        self.passed = 0

    def ok(self, cond, what):
        if cond:
            self.passed += 1
        else:
            self.failures.append(what)
            print("  FAIL " + what)
        return cond


def strip_scripts(text):
    return re.sub(r"(<script\b[^>]*>).*?(</script>)", r"\1\2", text, flags=re.S | re.I)


def static_checks(ck, name, text):
    """The file as written: CSP, no fetching attributes, no network code in the page."""
    ck.ok(('<meta http-equiv="Content-Security-Policy" content="%s">' % CSP) in text,
          "%s: the CSP meta tag is missing or differs" % name)
    markup = strip_scripts(text)
    for m in FETCH_ATTRS.finditer(markup):
        value = next(v for v in m.group(3, 4, 5) if v is not None)
        ck.ok(ALLOWED_ATTR_VALUE.match(value), "%s: attribute %s=%r could fetch" % (name, m.group(1), value))
    for m in re.finditer(r"url\(\s*['\"]?([^)'\"]*)", text):
        ck.ok(m.group(1).startswith(("#", "data:")), "%s: url(%s) could fetch" % (name, m.group(1)))
    code = "".join(re.findall(r"<script\b[^>]*>(.*?)</script>", text, flags=re.S))
    code = re.sub(r"window\.HEADROOM_DATA =\n.*?\n;\n", "", code, flags=re.S)  # the data is not code
    for m in NETWORK_CODE.finditer(code):
        ck.ok(False, "%s: page code uses %r" % (name, m.group(1)))


class DomSummary(html.parser.HTMLParser):
    """What the checks need from a --dump-dom serialisation."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.body = None
        self.charts = {}      # data-chart -> {"lines": [(series, points, pieces)], "bands": n, "events": n}
        self.nodata = set()
        self.ids = set()
        self.attrs_by_id = {}
        self.summary_rows = 0
        self.event_rows = 0
        self.slowdowns = 0
        self.text = []
        self._chart = None
        self._svg_depth = 0
        self._chart_depth = 0
        self._in = []  # open ids we count inside
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body" and self.body is None:
            self.body = a
        if "id" in a:
            self.ids.add(a["id"])
            self.attrs_by_id[a["id"]] = a
        if tag in ("script", "style"):
            self._skip += 1
        cls = (a.get("class") or "").split()
        if tag == "svg":
            self._svg_depth += 1
            if "plot" in cls:
                self._chart = a.get("data-chart")
                self._chart_depth = self._svg_depth
                self.charts[self._chart] = {"lines": [], "bands": 0, "events": 0, "texts": 0, "dots": 0}
        if self._chart:
            c = self.charts[self._chart]
            if tag == "path" and "line" in cls:
                d = a.get("d", "")
                c["lines"].append((a.get("data-series"), len(re.findall(r"[ML]", d)), d.count("M")))
            if tag == "circle" and "dot" in cls:
                c["dots"] += 1
            if tag == "path" and "band" in cls and a.get("d"):
                c["bands"] += 1
            if "ev" in cls or (tag in ("rect", "line") and "fill-opacity:0.1" in (a.get("style") or "")):
                c["events"] += 1
            if tag == "text":
                c["texts"] += 1
        if "data-nodata" in a:
            self.nodata.add(a["data-nodata"])
        if tag == "table" and "kv" in cls:
            self._in.append("kv")
        if tag == "tr" and self._in and self._in[-1] == "kv":
            self.summary_rows += 1
        if tag == "tr" and "clickable" in cls:
            self.event_rows += 1
        if tag == "div" and "slow" in cls:
            self.slowdowns += 1

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._skip = max(0, self._skip - 1)
        if tag == "svg":
            if self._chart and self._svg_depth == self._chart_depth:
                self._chart = None
            self._svg_depth -= 1
        if tag == "table" and self._in:
            self._in.pop()

    def handle_data(self, data):
        if not self._skip:
            self.text.append(data)


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return struct.unpack(">II", head[16:24])


def run_chromium(chromium, args, url, workdir):
    profile = tempfile.mkdtemp(prefix="profile-", dir=workdir)
    cmd = [chromium] + BASE_FLAGS + ["--user-data-dir=" + profile] + args + [url]
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=CHROMIUM_TIMEOUT_S)
        out, err, rc_ = p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace"), p.returncode
    except subprocess.TimeoutExpired as e:
        out, err, rc_ = (e.stdout or b"").decode("utf-8", "replace"), (e.stderr or b"").decode("utf-8", "replace"), -1
    shutil.rmtree(profile, ignore_errors=True)
    return out, err, rc_, time.monotonic() - t0


def console_lines(stderr):
    # Chromium logs each console message of the page as "...:INFO:CONSOLE:LINE] "text", source: URL (LINE)".
    return [l for l in stderr.splitlines() if ":CONSOLE" in l]


def page_requests(netlog_path):
    """URLs the page asked for: URL_REQUEST_START_JOB events whose initiator is not the
    browser itself ("not an origin": update checks, network time, sign-in)."""
    with open(netlog_path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    try:
        d = json.loads(text)
    except ValueError:
        d = json.loads(text.rstrip().rstrip(",") + "]}")  # a log cut at exit: close it
    names = {v: k for k, v in d["constants"]["logEventTypes"].items()}
    page, browser = [], []
    for e in d.get("events", []):
        if names.get(e.get("type")) != "URL_REQUEST_START_JOB":
            continue
        p = e.get("params") or {}
        if "url" not in p:
            continue  # the job's end, or another phase without the request
        (browser if p.get("initiator") == "not an origin" else page).append(p.get("url", "?"))
    return page, browser


def dom_case(ck, chromium, workdir, name, path, fragment=""):
    """Load one page with --dump-dom; return the parsed DOM (or None) after the generic checks."""
    netlog = os.path.join(workdir, name + ".netlog.json")
    url = "file://" + os.path.abspath(path) + fragment
    out, err, code, secs = run_chromium(chromium, ["--enable-logging=stderr", "--v=0", "--log-net-log=" + netlog,
                                                   "--dump-dom"], url, workdir)
    print("  %s: chromium --dump-dom %.1f s, exit %d" % (name, secs, code))
    with open(os.path.join(workdir, name + ".dom.html"), "w", encoding="utf-8") as f:
        f.write(out)
    with open(os.path.join(workdir, name + ".stderr.txt"), "w", encoding="utf-8") as f:
        f.write(err)
    ck.ok(code == 0 and out.strip(), "%s: chromium failed (exit %d): %s" % (name, code, err[-400:]))
    cons = console_lines(err)
    for line in cons:
        print("    console: " + line[:300])
    ck.ok(not cons, "%s: %d console message(s) from the page" % (name, len(cons)))
    if ck.ok(os.path.exists(netlog), "%s: no net log written" % name):
        page, browser = page_requests(netlog)
        for u in page:
            print("    request: " + u[:200])
        ck.ok(not page, "%s: the page made %d network request(s)" % (name, len(page)))
        if browser:
            print("    (%d request(s) by the browser itself ignored)" % len(browser))
    dom = DomSummary()
    dom.feed(out)
    body = dom.body or {}
    ck.ok(body.get("data-rendered") == "1", "%s: data-rendered is %r, not \"1\"" % (name, body.get("data-rendered")))
    ck.ok(not body.get("data-errors"), "%s: data-errors: %r" % (name, body.get("data-errors")))
    if body.get("data-render-ms"):
        print("  %s: rendered in %s ms (in-page), data-charts=%s" % (name, body["data-render-ms"], body.get("data-charts")))
    return dom, out, err, secs


def check_charts(ck, name, dom, want, min_points):
    for cid in want:
        c = dom.charts.get(cid)
        if not ck.ok(c is not None, "%s: chart %s has no SVG" % (name, cid)):
            continue
        lines = [l for l in c["lines"] if l[1] >= 2]
        ck.ok(lines or (min_points <= 1 and c["dots"]), "%s: chart %s has no non-empty line path" % (name, cid))
        ck.ok(c["texts"] >= 4, "%s: chart %s has %d axis labels" % (name, cid, c["texts"]))
        if lines:
            ck.ok(max(l[1] for l in lines) >= min_points,
                  "%s: chart %s draws at most %d points, expected >= %d" % (name, cid, max(l[1] for l in lines), min_points))


def screenshot(ck, chromium, workdir, artifacts, name, path, size, extra=()):
    png = os.path.join(artifacts, name + ".png")
    if os.path.exists(png):
        os.remove(png)
    w, h = size
    url = "file://" + os.path.abspath(path)
    if w < 500:
        # Headless chromium lays a window out at least 500 px wide (the screenshot is only cut
        # to --window-size), so a phone-width page is shot inside an iframe of that width.
        frame = os.path.join(workdir, name + ".frame.html")
        with open(frame, "w", encoding="utf-8") as f:
            f.write('<!DOCTYPE html><html><head><meta charset="utf-8"><style>html,body{margin:0;overflow:hidden}'
                    'iframe{border:0;display:block;width:%dpx;height:%dpx}</style></head><body>'
                    '<iframe src="%s"></iframe></body></html>' % (w, h, url))
        url = "file://" + frame
    out, err, code, secs = run_chromium(chromium, ["--window-size=%d,%d" % (w, h), "--screenshot=" + png] + list(extra),
                                        url, workdir)
    got = png_size(png) if os.path.exists(png) else None
    print("  %s: screenshot %s %s in %.1f s" % (name, png, got, secs))
    ck.ok(got is not None and got[0] == w and os.path.getsize(png) > 20000, "%s: screenshot missing or blank: %r" % (name, got))


def extra_page(ck, chromium, workdir, artifacts, path):
    name = "page-" + os.path.splitext(os.path.basename(path))[0]
    text = rc.read_text(path)
    static_checks(ck, name, text)
    size = os.path.getsize(path)
    print("  %s: %d bytes" % (name, size))
    ck.ok(size <= MAX_PAGE_BYTES, "%s: %d bytes, over the %d limit" % (name, size, MAX_PAGE_BYTES))
    try:
        data = rc.extract_data(text)
    except ValueError as e:
        ck.ok(False, "%s: %s" % (name, e))
        return
    if data is not None:
        errs = rc.validate(data)
        ck.ok(not errs, "%s: embedded data breaks the contract: %s" % (name, "; ".join(errs[:5])))
    dom, _, _, _ = dom_case(ck, chromium, workdir, name, path)
    if data is not None:
        n = int((dom.body or {}).get("data-charts") or 0)
        ck.ok(n >= 1, "%s: no chart drawn" % name)
        check_charts(ck, name, dom, [c for c in dom.charts if c != "events"], 1)
    screenshot(ck, chromium, workdir, artifacts, name + "-wide", path, (1280, 2000))


def main(argv):
    extra = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--page"]
    positional = [a for i, a in enumerate(argv[1:], 1) if a != "--page" and argv[i - 1] != "--page"]
    artifacts = os.path.abspath(positional[0] if positional else "/tmp/report-artifacts")
    t_start = time.monotonic()
    chromium = shutil.which("chromium")
    if not chromium:
        print("browser_test: chromium not found: install it with `apt-get install chromium` (Debian package chromium)",
              file=sys.stderr)
        return 2
    os.makedirs(artifacts, exist_ok=True)
    workdir = os.path.join(artifacts, "work")
    os.makedirs(workdir, exist_ok=True)
    ck = Checks()

    print("pages:")
    pages = sample_data.write_samples(artifacts)
    day_json, day = pages["gb10-24h"]
    small_json, small = pages["nogpu-small"]
    size = os.path.getsize(day)
    print("  gb10-24h.html: %d bytes (%.2f MB); JSON %d bytes" % (size, size / 1e6, os.path.getsize(day_json)))
    ck.ok(size <= MAX_PAGE_BYTES, "gb10-24h.html: %d bytes, over the %d limit" % (size, MAX_PAGE_BYTES))

    print("static checks:")
    for name, path in (("template", TEMPLATE), ("gb10-24h", day), ("nogpu-small", small)):
        text = rc.read_text(path)
        static_checks(ck, name, text)
        data = rc.extract_data(text)
        if data is not None:
            errs = rc.validate(data)
            ck.ok(not errs, "%s: embedded data breaks the contract: %s" % (name, "; ".join(errs[:5])))

    print("browser:")
    dom, out, _, _ = dom_case(ck, chromium, workdir, "gb10-24h", day)
    ck.ok(dom.body and dom.body.get("data-charts") == "5", "gb10-24h: data-charts=%r, expected 5" % (dom.body or {}).get("data-charts"))
    check_charts(ck, "gb10-24h", dom, ["memory", "power", "temperature", "clock", "steps"], 500)
    ck.ok("events" in dom.charts and dom.charts["events"]["events"] >= 8, "gb10-24h: events timeline missing or short")
    ck.ok(dom.summary_rows >= 12, "gb10-24h: summary has %d rows" % dom.summary_rows)
    ck.ok(dom.event_rows == 8, "gb10-24h: %d event rows listed, expected 8" % dom.event_rows)
    ck.ok(dom.slowdowns == 3, "gb10-24h: %d slowdowns listed, expected 3" % dom.slowdowns)
    ck.ok(dom.attrs_by_id.get("notes", {}).get("data-downsampled") == "43.2", "gb10-24h: no downsampling note with 43.2 s buckets")
    text = " ".join(dom.text)
    ck.ok("buckets of 43.2 s" in text and "minimum and maximum" in text, "gb10-24h: the page does not say it is downsampled")
    ck.ok("echo \"</script><!--\"" in text, "gb10-24h: the hostile event text is not shown verbatim")
    for unit in ("(GiB)", "(W)", "(°C)", "(MHz)", "(steps/s)"):
        ck.ok(unit in text, "gb10-24h: no %s label" % unit)
    for label in ("guard kills below", "plan estimate", "sustained cap", "rated", "baseline", "killed the job", "+15."):
        ck.ok(label in text, "gb10-24h: %r missing" % label)

    # Interaction, in one load: the page opened zoomed to the throttle (4h43-5h50, fewer
    # buckets drawn) with the crosshair at 5h20; then, by synthetic pointer events from a
    # script appended to a copy of the page: reset, a drag across the power chart (zooms every
    # chart), a hover (fills the readouts), a double-click (resets), a click on an event row
    # (zooms to it). The script leaves what it saw on <body data-*>.
    drag = os.path.join(workdir, "gb10-24h-drag.html")
    with open(drag, "w", encoding="utf-8") as f:
        f.write(rc.read_text(day).replace("</body>", DRAG_SCRIPT + "</body>"))
    dom, out, _, _ = dom_case(ck, chromium, workdir, "gb10-24h-drag", drag, "#t=17000-21000&hover=19200")
    b = dom.body or {}
    full = "+0:00:00 – +23:59:59"
    ck.ok(b.get("data-drag-done") == "1", "gb10-24h-drag: the drag script did not finish")
    ck.ok("+4:43:20 – +5:50:00" in b.get("data-zoom-range", ""), "gb10-24h-drag: #t= range: %r" % b.get("data-zoom-range"))
    ck.ok(b.get("data-zoom-lines") == "5", "gb10-24h-drag: %r charts with lines when zoomed" % b.get("data-zoom-lines"))
    pts = int(b.get("data-zoom-points") or 0)
    ck.ok(40 <= pts <= 120, "gb10-24h-drag: memory draws %d points for 4000 s of 43.2 s buckets" % pts)
    ck.ok("+5:20:00 (11-29 15:20:00 UTC)" in b.get("data-zoom-readout", "") and "MHz" in b.get("data-zoom-readout", ""),
          "gb10-24h-drag: #hover= readout: %r" % b.get("data-zoom-readout"))
    ck.ok(full in b.get("data-before", ""), "gb10-24h-drag: reset button: %r" % b.get("data-before"))
    ck.ok(b.get("data-after-drag", full) != b.get("data-before") and "+" in b.get("data-after-drag", ""),
          "gb10-24h-drag: the drag did not zoom: %r" % b.get("data-after-drag"))
    ck.ok(b.get("data-zoomed-charts") == "6", "gb10-24h-drag: %r charts redrawn after the drag, expected 6"
          % b.get("data-zoomed-charts"))
    ck.ok("GiB" in b.get("data-readout", ""), "gb10-24h-drag: hover readout %r" % b.get("data-readout"))
    ck.ok(full in b.get("data-after-reset", ""), "gb10-24h-drag: double-click did not reset: %r" % b.get("data-after-reset"))
    ck.ok("+4:" in b.get("data-after-event", "") or "+5:" in b.get("data-after-event", ""),
          "gb10-24h-drag: the event row did not zoom to +4:58:30: %r" % b.get("data-after-event"))
    check_charts(ck, "gb10-24h-drag", dom, ["memory", "power", "temperature", "clock", "steps"], 2)

    dom, out, _, _ = dom_case(ck, chromium, workdir, "nogpu-small", small)
    ck.ok(dom.body and dom.body.get("data-charts") == "1", "nogpu-small: data-charts=%r, expected 1" % (dom.body or {}).get("data-charts"))
    check_charts(ck, "nogpu-small", dom, ["memory"], 300)
    mem = dom.charts.get("memory", {"lines": []})["lines"]
    ck.ok(len(mem) == 4, "nogpu-small: %d memory lines, expected 4 (used, available, cache, swap)" % len(mem))
    ck.ok(any(l[2] >= 2 for l in mem), "nogpu-small: the 90 s hole is not a break in the lines")
    ck.ok(dom.nodata >= {"power", "temperature", "clock", "steps", "events"}, "nogpu-small: no-data charts: %r" % dom.nodata)
    for cid in ("power", "temperature", "clock", "steps"):
        ck.ok(cid not in dom.charts, "nogpu-small: chart %s drawn without data" % cid)
    ck.ok("data-downsampled" not in dom.attrs_by_id.get("notes", {}), "nogpu-small: claims to be downsampled")
    ck.ok("Every sample is drawn" in " ".join(dom.text), "nogpu-small: does not say every sample is drawn")

    tiny = pages["edge-tiny"][1]
    dom, out, _, _ = dom_case(ck, chromium, workdir, "edge-tiny", tiny)
    ck.ok(dom.body and dom.body.get("data-charts") == "2", "edge-tiny: data-charts=%r, expected 2" % (dom.body or {}).get("data-charts"))
    check_charts(ck, "edge-tiny", dom, ["memory", "power"], 1)
    ck.ok({"temperature", "clock", "steps"} <= dom.nodata, "edge-tiny: no-data charts: %r" % dom.nodata)
    ck.ok("none found" in " ".join(dom.text), "edge-tiny: slowdowns not reported as none found")

    dom, out, _, _ = dom_case(ck, chromium, workdir, "template", TEMPLATE)
    ck.ok(dom.body and dom.body.get("data-charts") == "0", "template: data-charts=%r" % (dom.body or {}).get("data-charts"))
    ck.ok("Empty report." in " ".join(dom.text), "template: no empty-report message")

    # The canary: each detector must fire on a page built to trip it.
    canary = os.path.join(workdir, "canary.html")
    text = rc.read_text(small)
    text = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", text)
    text = text.replace("</body>", '<img src="http://127.0.0.1:9/canary.png" alt="">'
                        '<script>console.error("canary");</script><script>canaryUndefined();</script></body>')
    with open(canary, "w", encoding="utf-8") as f:
        f.write(text)
    shadow = Checks()
    dom_case(shadow, chromium, workdir, "canary", canary)
    fired = " | ".join(shadow.failures)
    ck.ok("console message" in fired, "canary: console errors went unnoticed")
    ck.ok("network request" in fired, "canary: the image request went unnoticed")
    ck.ok("data-errors" in fired, "canary: the script error went unnoticed")

    print("screenshots:")
    screenshot(ck, chromium, workdir, artifacts, "gb10-24h-wide", day, (1280, 2000))
    screenshot(ck, chromium, workdir, artifacts, "gb10-24h-phone", day, (390, 1600))
    screenshot(ck, chromium, workdir, artifacts, "gb10-24h-wide-dark", day, (1280, 2000),
               ["--force-dark-mode", "--blink-settings=preferredColorScheme=0"])
    screenshot(ck, chromium, workdir, artifacts, "nogpu-small-wide", small, (1280, 2000))
    screenshot(ck, chromium, workdir, artifacts, "nogpu-small-phone", small, (390, 1600))

    if extra:
        print("pages given:")
        for path in extra:
            extra_page(ck, chromium, workdir, artifacts, path)

    took = time.monotonic() - t_start
    print("\n%d checks passed, %d failed, %.1f s; artifacts in %s" % (ck.passed, len(ck.failures), took, artifacts))
    for f in ck.failures:
        print("FAILED: " + f)
    return 0 if not ck.failures else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
