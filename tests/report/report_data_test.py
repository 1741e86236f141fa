#!/usr/bin/env python3
"""Tests of the data the report page embeds (docs/report-data.md), no browser needed.

    python3 tests/report/report_data_test.py

The samples of sample_data.py against the contract and against their own raw readings
(spikes kept by the min/max buckets, summary figures equal to the series' extremes), the
substitution and escaping `headroom report` must do, and validate() catching broken data.
"""

import copy
import json
import math
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report_contract as rc  # noqa: E402
import sample_data  # noqa: E402

GIB = 1 << 30
MAX_PAGE_BYTES = 3 * 1000 * 1000


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


class Samples(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="report-data-test-")
        cls.pages = sample_data.write_samples(cls.tmp)
        cls.template = read(sample_data.TEMPLATE)
        cls.day = json.loads(read(cls.pages["gb10-24h"][0]))
        cls.small = json.loads(read(cls.pages["nogpu-small"][0]))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_samples_follow_the_contract(self):
        self.assertEqual(rc.validate(self.day), [])
        self.assertEqual(rc.validate(self.small), [])

    def test_day_is_86400_rows_in_2000_buckets(self):
        sm = self.day["sampling"]
        self.assertEqual((sm["rows"], sm["interval_s"], sm["buckets"]), (86400, 1.0, 2000))
        self.assertAlmostEqual(sm["bucket_s"], 43.2, places=1)
        for key, s in self.day["series"].items():
            self.assertLessEqual(len(s["t"]), 2001, key)  # no sample hole: no gap markers
        self.assertEqual(len(self.day["series"]["mem_used_bytes"]["t"]), 2000)

    def test_page_stays_small(self):
        size = os.path.getsize(self.pages["gb10-24h"][1])
        self.assertLess(size, MAX_PAGE_BYTES)

    def test_a_3_second_spike_survives_the_buckets(self):
        # sample_data adds 14 GiB for 3 s at 7h13m over about 84 GiB: the bucket's max keeps
        # it while its mean (3 of 43 samples) does not.
        s = self.day["series"]["mem_used_bytes"]
        t0 = 7 * 3600 + 13 * 60
        i = min(range(len(s["t"])), key=lambda k: abs(s["t"][k] - t0))
        self.assertGreater(s["max"][i], 97 * GIB)
        self.assertLess(s["mean"][i], 88 * GIB)

    def test_summary_matches_the_series_extremes(self):
        su, se = self.day["summary"], self.day["series"]
        self.assertEqual(su["peak_used_bytes"], max(v for v in se["mem_used_bytes"]["max"] if v is not None))
        self.assertEqual(su["min_available_bytes"], min(v for v in se["mem_available_bytes"]["min"] if v is not None))
        self.assertEqual(su["peak_gpu_power_w"], max(v for v in se["gpu_power_w"]["max"] if v is not None))
        self.assertLess(su["min_available_bytes"], self.day["guard"]["kill_level_bytes"])  # the guard had to kill

    def test_day_events_and_slowdowns(self):
        kinds = [e["kind"] for e in self.day["events"]]
        for k in ("throttle", "clock_collapse", "contention", "guard_warn", "guard_kill"):
            self.assertIn(k, kinds)
        self.assertEqual([w["verdict"] for w in self.day["slowdowns"]], ["thermal", "contention", "clock-collapse"])
        kill = next(e for e in self.day["events"] if e["kind"] == "guard_kill")
        steps = self.day["series"]["step_rate_per_s"]["t"]
        self.assertLess(steps[-1], kill["t"] + self.day["sampling"]["bucket_s"])  # no steps after the kill

    def test_small_run_is_memory_only_with_a_hole(self):
        self.assertEqual(set(self.small["series"]), {"mem_used_bytes", "mem_available_bytes", "mem_cached_bytes", "swap_used_bytes"})
        self.assertEqual(self.small["sampling"]["bucket_s"], self.small["sampling"]["interval_s"])
        s = self.small["series"]["mem_used_bytes"]
        holes = [t for t, v in zip(s["t"], s["mean"]) if v is None]
        self.assertEqual(len(holes), 1)
        self.assertTrue(600 <= holes[0] <= 690)
        self.assertEqual(len(s["t"]), self.small["sampling"]["rows"] + 1)  # one entry per row, plus the marker
        self.assertIsNone(self.small["slowdowns"])
        self.assertIsNone(self.small["plan"])
        self.assertIsNone(self.small["guard"])

    def test_embedding_round_trips_and_escapes(self):
        html = read(self.pages["gb10-24h"][1])
        self.assertEqual(rc.extract_data(html), self.day)
        line = next(l for l in html.split("\n") if l.startswith('{"schema_version"'))
        for ch in "<>&\u2028\u2029":
            self.assertNotIn(ch, line)
        self.assertIn("\\u003c/script\\u003e\\u003c!--", line)  # the hostile event text
        # The page holds exactly the template's </script> tags, none from the data.
        self.assertEqual(html.count("</script>"), self.template.count("</script>"))

    def test_template_has_one_placeholder_and_is_the_empty_report(self):
        self.assertEqual(self.template.split("\n").count(rc.PLACEHOLDER), 1)
        self.assertIsNone(rc.extract_data(self.template))


class Contract(unittest.TestCase):
    def setUp(self):
        self.good = sample_data.nogpu_small()

    def broken(self, change):
        d = copy.deepcopy(self.good)
        change(d)
        return rc.validate(d)

    def test_fill_needs_exactly_one_placeholder(self):
        with self.assertRaises(ValueError):
            rc.fill_template("<script>\n</script>", self.good)
        with self.assertRaises(ValueError):
            rc.fill_template(rc.PLACEHOLDER + "\n" + rc.PLACEHOLDER, self.good)
        # An indented or commented copy of the marker is not the placeholder line.
        self.assertIn('"schema_version":1', rc.fill_template("  x /*HEADROOM_DATA*/null\n" + rc.PLACEHOLDER, self.good))

    def test_non_finite_numbers_are_refused(self):
        d = copy.deepcopy(self.good)
        d["summary"]["peak_used_bytes"] = math.nan
        with self.assertRaises(ValueError):
            rc.embed_json(d)

    def test_validate_catches_broken_data(self):
        cases = {
            "schema_version": lambda d: d.update(schema_version=2),
            "start": lambda d: d.update(start="yesterday"),
            "unequal": lambda d: d["series"]["mem_used_bytes"]["min"].pop(),
            "not integers": lambda d: d["series"]["mem_used_bytes"]["mean"].__setitem__(0, 1.5),
            "back in time": lambda d: d["series"]["mem_used_bytes"]["t"].__setitem__(1, -1),
            "min <= mean": lambda d: d["series"]["mem_used_bytes"]["min"].__setitem__(0, 10 ** 15),
            "half null": lambda d: d["series"]["mem_used_bytes"]["max"].__setitem__(0, None),
            "unknown series": lambda d: d["series"].update(gpu_fan_pct=d["series"]["mem_used_bytes"]),
            "verdict": lambda d: d.update(slowdowns=[{"t": 1, "end_t": 2, "verdict": "cosmic rays"}]),
            "event end": lambda d: d.update(events=[{"t": 5, "end_t": 1, "kind": "throttle", "text": ""}]),
            "platform": lambda d: d["platform"].update(name="tpu"),
            "kill level": lambda d: d.update(guard={"kill_level_bytes": 1.5}),
            "too many": lambda d: d["series"].update(mem_cached_bytes={k: [0] * 5000 for k in ("t", "min", "max", "mean")}),
        }
        for name, change in cases.items():
            self.assertNotEqual(self.broken(change), [], name)

    def test_downsample_keeps_extremes_and_marks_gaps(self):
        t = [0, 1, 2, 3, 10, 11]
        v = [5, 9, 1, None, 4, 6]
        out = rc.downsample(t, v, 11, 2.0, 3.0, 0)
        # buckets [0,2): 5, 9; [2,4): 1 (the None is skipped); gap 2 -> 10; [10,12): 4, 6
        self.assertEqual(out["t"], [0.5, 2.0, 6.0, 10.5])
        self.assertEqual(out["min"], [5, 1, None, 4])
        self.assertEqual(out["max"], [9, 1, None, 6])
        self.assertEqual(out["mean"], [7, 1, None, 5])

    def test_gaps_inside_one_bucket_are_not_marked(self):
        # Regression: rows 10 s apart with a 3 s gap and 100 s buckets gave a break per row.
        t = [10.0 * i for i in range(1000)]
        out = rc.downsample(t, [1] * len(t), t[-1], 100.0, 3.0, 0)
        self.assertEqual(len(out["t"]), 100)
        self.assertNotIn(None, out["mean"])
        # A gap across buckets is still marked.
        out = rc.downsample([0, 1, 250, 251], [1, 1, 1, 1], 251, 100.0, 3.0, 0)
        self.assertEqual(out["mean"], [1, None, 1])


if __name__ == "__main__":
    unittest.main()
