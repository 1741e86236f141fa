#!/usr/bin/env python3
"""The message catalogs against the sources (po/README.md).

For each language in po/LINGUAS, with its files merged as the build merges them:
  - every message the sources mark (scripts/update-pot, run afresh) has a translation that
    is neither empty nor fuzzy: "complete" is checked, not claimed;
  - each translation keeps its fmt placeholders: the same {...} fields, as a multiset
    (order may change: "{0}"-style indexes allow it; "{}" fields must stay in order, since
    fmt fills them left to right);
  - no translation holds a placeholder-like brace the English lacks.
A broken placeholder would not crash (TrFormat falls back to English) but would silently
show English; this test keeps that from shipping.
Usage: catalog_test.py [SOURCE_DIR]
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))


def unquote(s):
    # PO strings are C-quoted; only the escapes msgcat writes matter here.
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            n = s[i + 1]
            out.append({"n": "\n", "t": "\t", '"': '"', "\\": "\\"}.get(n, n))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def parse_po(text):
    """Entries as dicts: msgctxt, msgid, msgid_plural, msgstr (list), flags, obsolete."""
    entries, cur, field = [], None, None

    def flush():
        if cur is not None and "msgid" in cur:
            entries.append(cur)

    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            flush()
            cur, field = None, None
            continue
        if cur is None:
            cur = {"flags": set(), "msgstr": {}, "obsolete": False}
        if line.startswith("#~"):
            cur["obsolete"] = True
            line = line[2:].strip()
            if not line:
                continue
        if line.startswith("#,"):
            cur["flags"].update(f.strip() for f in line[2:].split(","))
            continue
        if line.startswith("#"):
            continue
        m = re.match(r'^(msgctxt|msgid_plural|msgid|msgstr(?:\[(\d+)\])?)\s+"(.*)"$', line)
        if m:
            key, idx, val = m.group(1), m.group(2), unquote(m.group(3))
            if key.startswith("msgstr"):
                field = ("msgstr", int(idx) if idx is not None else 0)
                cur["msgstr"][field[1]] = val
            else:
                field = (key, None)
                cur[key] = val
            continue
        m = re.match(r'^"(.*)"$', line)
        if m and field is not None:
            val = unquote(m.group(1))
            if field[0] == "msgstr":
                cur["msgstr"][field[1]] += val
            else:
                cur[field[0]] += val
            continue
        raise ValueError(f"unparsed PO line: {raw!r}")
    flush()
    return entries


FIELD = re.compile(r"\{\{|\}\}|\{[^{}]*\}")


def placeholders(s):
    return [f for f in FIELD.findall(s) if f not in ("{{", "}}")]


def check_language(lang, pot_entries, failures):
    parts = sorted(
        os.path.join(ROOT, "po", f)
        for f in os.listdir(os.path.join(ROOT, "po"))
        if f == f"{lang}.po" or (f.startswith(f"{lang}.") and f.endswith(".po"))
    )
    merged = subprocess.run(["msgcat", "--use-first", "--force-po", "--no-wrap", *parts], check=True,
                            capture_output=True, text=True).stdout
    catalog = {}
    for e in parse_po(merged):
        if e["obsolete"] or e["msgid"] == "":
            continue
        catalog[(e.get("msgctxt"), e["msgid"])] = e
    missing, fuzzy = [], []
    for e in pot_entries:
        if e["msgid"] == "":
            continue
        key = (e.get("msgctxt"), e["msgid"])
        t = catalog.get(key)
        if t is None or not all(t["msgstr"].values()) or not t["msgstr"]:
            missing.append(e["msgid"])
            continue
        if "fuzzy" in t["flags"]:
            fuzzy.append(e["msgid"])
            continue
        english = [e["msgid"]] + ([e["msgid_plural"]] if "msgid_plural" in e else [])
        want = sorted(placeholders(english[-1]))
        for idx, text in t["msgstr"].items():
            got = sorted(placeholders(text))
            if got != want:
                failures.append(f"{lang}: placeholders differ: {e['msgid']!r} -> {text!r}")
            elif any(p == "{}" for p in want) and placeholders(text) != placeholders(english[-1]):
                failures.append(f"{lang}: '{{}}' fields reordered (use {{0}}, {{1}}): {e['msgid']!r}")
    for m in missing[:20]:
        failures.append(f"{lang}: untranslated: {m!r}")
    if len(missing) > 20:
        failures.append(f"{lang}: ... and {len(missing) - 20} more untranslated")
    for m in fuzzy[:20]:
        failures.append(f"{lang}: fuzzy: {m!r}")
    print(f"{lang}: {max(0, len(pot_entries) - 1)} messages, {len(missing)} untranslated, {len(fuzzy)} fuzzy")


def main():
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        pot = os.path.join(tmp, "headroom.pot")
        subprocess.run([os.path.join(ROOT, "scripts", "update-pot"), pot], check=True)
        pot_entries = parse_po(open(pot, encoding="utf-8").read()) if os.path.exists(pot) else []
    with open(os.path.join(ROOT, "po", "LINGUAS")) as f:
        langs = [l.strip() for l in f if l.strip() and not l.startswith("#")]
    if not langs:
        failures.append("po/LINGUAS lists no language")
    for lang in langs:
        check_language(lang, pot_entries, failures)
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
