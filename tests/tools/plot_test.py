#!/usr/bin/python3
"""Tests for tools/plot: it runs on small synthetic report.json files; the images it writes are
checked as images (PNG signature, decoded by Pillow and by matplotlib; SVG parsed as XML).

Run by ctest (tests/tools/CMakeLists.txt) as: plot_test.py PATH/TO/tools/plot SCRATCH_FOLDER
"""

import json
import os
import shutil
import subprocess
import sys
import unittest
import xml.etree.ElementTree as ET

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SVG_NS = "{http://www.w3.org/2000/svg}"

PLOT = None
WORK = None


def case(strategy, size, mean, allocator="system", bytes_per_op=1000.0, status="ok", method="GET",
         payload="weather", error=None, reference=False):
    return {
        "strategy": strategy, "method": method, "payload": payload, "size": size, "allocator": allocator,
        "baseline": strategy == "string_copy", "status": status, "reason": "" if status == "ok" else "refused",
        "reference": reference,
        "ops_per_iteration": 16, "warmup_iterations": 3,
        "samples_ns": [mean * 0.99, mean, mean * 1.01, mean * 1.5], "outliers": [3],
        "stats": {"n": 3, "outliers": 1, "mean": mean, "error": mean * 0.03 if error is None else error,
                  "stddev": mean * 0.01,
                  "median": mean, "p95": mean * 1.01, "min": mean * 0.99, "max": mean * 1.01,
                  "ratio": None, "ratio_sd": None},
        "memory": {"bytes_per_op": bytes_per_op, "allocs_per_op": 2.0, "alloc_ratio": None,
                   "peak_rss": 1 << 22, "minor_faults_per_op": 0.1},
        "phases": {"ops_sampled": 10, "connect": None, "send": mean * 0.05, "wait": mean * 0.3,
                   "head": mean * 0.05, "body": mean * 0.2, "deserialize": mean * 0.35, "other": None},
        "counters": {}, "checksum": 12345, "notes": "",
    }


def report(cases, version=3):
    return {
        "schema_version": version,
        "environment": {"timestamp": "2024-05-01T12:00:00Z", "cpu": "Synthetic CPU", "kernel": "6.1.0",
                        "compiler": "g++ 12.2.0", "build_type": "Release", "allocator": "glibc 2.36"},
        "config": {"suite": "get"},
        "cases": cases,
    }


PLAIN = report([
    case("string_copy", 10, 21000.0, bytes_per_op=5200.0),
    case("presized", 10, 15000.0, bytes_per_op=1800.0),
    case("views", 10, 12000.0, bytes_per_op=0.0),            # allocation-free: no bar on a log axis
    case("string_copy", 1000, 910000.0, bytes_per_op=510000.0),
    case("presized", 1000, 640000.0, bytes_per_op=None),     # not measured
    case("views", 1000, 520000.0, bytes_per_op=0.0),
    case("arena", 1000, 0.0, status="failed"),               # failed cases are left out
    case("string_copy", 10, 30000.0, method="POST", payload="repos"),
])

SCALING = report([
    case(strategy, size, per_record * size + 8000.0, error=error if size == 10 else None)
    for strategy, per_record, error in (("string_copy", 90.0, None), ("views", 50.0, 20000.0))
    for size in (10, 100, 1000, 10000)
] + [case("floor_parse", size, 40.0 * size + 500.0, reference=True) for size in (10, 100, 1000, 10000)])

ALLOCATORS = report([
    case(strategy, size, mean * factor, allocator=allocator)
    for allocator, factor in (("system", 1.0), ("mimalloc", 0.9), ("jemalloc", 0.95), ("tcmalloc", 0.93))
    for strategy, size, mean in (("string_copy", 10, 21000.0), ("presized", 10, 15000.0),
                                 ("string_copy", 1000, 910000.0), ("presized", 1000, 640000.0))
])


def with_copies(c, kernel, ringlab, body=771775.0):
    """`c` with the body's copies counted (kernel None: not counted, a library peer)."""
    c["io"] = {} if kernel is None else {"body_bytes_per_op": body, "kernel_copied_bytes_per_op": kernel,
                                         "ringlab_copied_bytes_per_op": ringlab, "mapped_bytes_per_op": 0.0}
    return c


COPIES = report([
    with_copies(case("string_copy", 10000, 9.0e6), 771775.0, 2411442.0),
    with_copies(case("presized", 10000, 7.0e6), 771775.0, 65444.0),
    with_copies(case("provided_buffers", 10000, 7.5e6), 771775.0, 771775.0),
    with_copies(case("libcurl", 10000, 8.0e6), None, None),
    with_copies(case("floor_parse", 10000, 5.0e6, reference=True), 0.0, 0.0, body=0.0),
])


def ab_case(name, size, factor, verdict, reason=""):
    """A before/after case whose after build takes `factor` times the before build's time in every round,
    give or take a little from round to round (no rounds when not compared)."""
    rounds = 0 if verdict == "not compared" else 12
    before = [10000.0 * size * (1 + 0.002 * (i % 3)) for i in range(rounds)]
    after = [b * factor * (1 + 0.004 * ((i % 5) - 2)) for i, b in enumerate(before)]
    estimate = ({"pairs": 0, "ratio": None, "low": None, "high": None, "mde": None} if not rounds else
                {"pairs": rounds, "ratio": factor, "low": factor * 0.99, "high": factor * 1.01, "mde": 0.02})
    return {"name": name, "strategy": name.split()[0], "size": size, "before_index": 0, "after_index": 0,
            "before_ns": before, "after_ns": after, "before_cpu_ns": before, "after_cpu_ns": after,
            "after_first": [i % 2 for i in range(rounds)], "time": estimate, "cpu": estimate,
            "verdict": verdict, "over_gate": verdict == "slower", "reason": reason,
            "before_allocations": 2.0, "after_allocations": 2.0, "before_bytes": 100.0, "after_bytes": 100.0,
            "before_syscalls": 3.0, "after_syscalls": 3.0}


def ab_report(cases):
    """A before/after report (bench --before --after) around `cases`, with a gate at 2 %."""
    def build(commit):
        side = report([])
        side["environment"]["git_commit"] = commit
        return side
    return {
        "schema_version": 1, "kind": "ab", "partial": False, "rounds": 12, "side": "client", "slowdown": "views:2",
        "config": {"suite": "headline"},
        "environment": {"timestamp": "2026-12-05T16:23:16Z", "cpu": "Synthetic CPU"},
        "method": {"compared": sum(c["verdict"] != "not compared" for c in cases), "family_level": 0.95,
                   "case_level": 0.99815, "noise_band": 0.01, "power": 0.9, "fail_over": 0.02,
                   "correction": "Bonferroni"},
        "before": {"bench": "before/bench", "report": build("1234567890abcdef")},
        "after": {"bench": "after/bench", "report": build("")},
        "cases": cases,
    }


AB = ab_report([
    ab_case("views weather 10000", 10000, 1.06, "slower"),
    ab_case("string_copy weather 10", 10, 1.002, "within the noise"),
    ab_case("presized weather 10000", 10000, 0.95, "faster"),
    ab_case("arena weather 10", 10, 1.0, "not compared", reason="the after build has no such case"),
])


class PlotTest(unittest.TestCase):
    def setUp(self):
        self.dir = os.path.join(WORK, self.id().rsplit(".", 1)[-1])
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)

    def write_report(self, content, name="report.json"):
        path = os.path.join(self.dir, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(content if isinstance(content, str) else json.dumps(content))
        return path

    def plot(self, *args):
        return subprocess.run([PLOT, *args], capture_output=True, text=True, timeout=120)

    def assert_png(self, path):
        with open(path, "rb") as f:
            self.assertEqual(f.read(8), PNG_SIGNATURE, f"{path}: PNG signature")
        from PIL import Image
        with Image.open(path) as image:
            image.verify()  # checks the chunks and their CRCs
        with Image.open(path) as image:
            self.assertEqual(image.format, "PNG")
            width, height = image.size
            self.assertGreater(width, 200)
            self.assertGreater(height, 200)
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.image
        pixels = matplotlib.image.imread(path)
        self.assertEqual(pixels.shape[:2], (height, width))
        self.assertGreater(pixels.std(), 0.0, f"{path}: a blank image")

    def svg_texts(self, path):
        root = ET.parse(path).getroot()  # raises on anything that is not well-formed XML
        self.assertEqual(root.tag, SVG_NS + "svg")
        return ["".join(t.itertext()) for t in root.iter(SVG_NS + "text")]

    def assert_svgs_repeat(self, path, names):
        """Plots `path` as SVG twice, into two folders: each of `names` the same bytes in both. Returns the
        first folder."""
        first, second = os.path.join(self.dir, "a"), os.path.join(self.dir, "b")
        for out in (first, second):
            result = self.plot(path, "--out", out, "--format", "svg")
            self.assertEqual(result.returncode, 0, result.stderr)
        for name in names:
            with open(os.path.join(first, name), "rb") as a, open(os.path.join(second, name), "rb") as b:
                self.assertEqual(a.read(), b.read(), name)
        return first

    def test_plain_run_writes_box_phases_scaling_and_bytes_as_valid_png_and_svg_next_to_the_report(self):
        path = self.write_report(PLAIN)
        result = self.plot(path)
        self.assertEqual(result.returncode, 0, result.stderr)
        expected = [os.path.join(self.dir, f"{name}.{fmt}") for name in ("box", "phases", "scaling", "bytes")
                    for fmt in ("png", "svg")]
        self.assertEqual(sorted(result.stdout.split()), sorted(expected))
        for file in expected:
            if file.endswith(".png"):
                self.assert_png(file)
        for name in ("box", "scaling"):
            texts = self.svg_texts(os.path.join(self.dir, f"{name}.svg"))
            for label in ("GET weather", "POST repos"):
                self.assertTrue(any(t.startswith(label) for t in texts), f"{name}: {label}")
            self.assertFalse(any("arena" in t for t in texts), f"{name}: a failed case must not be plotted")

    def test_box_plot_has_a_box_per_case_marks_the_baseline_and_draws_outliers_apart(self):
        path = self.write_report(PLAIN)
        self.assertEqual(self.plot(path, "--format", "svg").returncode, 0)
        texts = self.svg_texts(os.path.join(self.dir, "box.svg"))
        for title in ("GET weather, 10 records", "GET weather, 1,000 records", "POST repos, 10 records"):
            self.assertIn(title, texts)
        self.assertEqual(texts.count("string_copy (baseline)"), 3)  # one per panel
        self.assertEqual(texts.count("presized"), 2)
        self.assertIn("outlier left out of the statistics", texts)
        self.assertIn("time per op [μs]", texts)  # 12 to 21 μs: linear, no "log scale"

    def test_phases_are_stacked_in_the_order_they_happen_with_a_legend_entry_each(self):
        path = self.write_report(PLAIN)
        self.assertEqual(self.plot(path, "--format", "svg").returncode, 0)
        texts = self.svg_texts(os.path.join(self.dir, "phases.svg"))
        legend = [t for t in texts if t in ("connect", "send", "wait", "head", "body", "deserialize", "other")]
        self.assertEqual(legend, ["connect", "send", "wait", "head", "body", "deserialize", "other"])
        self.assertIn("median time per op of each phase, stacked [μs]", texts)
        root = ET.parse(os.path.join(self.dir, "phases.svg")).getroot()
        # GET weather at two sizes with three strategies each, POST repos with one: the phases each of
        # them has (send, wait, head, body, deserialize; no connect, no other) as one bar segment.
        patches = [g for g in root.iter(SVG_NS + "g") if (g.get("id") or "").startswith("patch")]
        self.assertGreaterEqual(len(patches), 7 * 5)

    def test_scaling_is_log_log_when_sizes_span_decades_and_floors_are_drawn_as_references(self):
        path = self.write_report(SCALING)
        self.assertEqual(self.plot(path, "--format", "svg").returncode, 0)
        texts = self.svg_texts(os.path.join(self.dir, "scaling.svg"))
        self.assertIn("records per response (log scale)", texts)
        self.assertIn("mean time per op [ns] (log scale)", texts)  # the floor at 10 records: 900 ns
        self.assertIn("floor_parse (ref)", texts)
        for tick in ("10", "100", "1,000", "10,000"):
            self.assertIn(tick, texts)
        self.assertFalse([t for t in texts if "e+" in t or "10^" in t], "one style of tick labels")
        # views' error at 10 records reaches below 0: cut at the axis and said so in the title.
        self.assertTrue(any("lower end is below the axis" in t for t in texts), texts)

    def test_allocator_jobs_get_a_heat_map_of_sys_ratio(self):
        path = self.write_report(ALLOCATORS)
        result = self.plot(path)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assert_png(os.path.join(self.dir, "allocators.png"))
        texts = self.svg_texts(os.path.join(self.dir, "allocators.svg"))
        for label in ("system", "mimalloc", "jemalloc", "tcmalloc", "GET weather, 10 records",
                      "GET weather, 1,000 records", "Sys Ratio (log scale)"):
            self.assertIn(label, texts)
        # tcmalloc's cases are 0.93 of system's (not a tick of the colour bar): 2 strategies at 2 sizes.
        self.assertEqual(texts.count("0.93"), 4)

    def test_a_plain_run_has_no_heat_map(self):
        path = self.write_report(PLAIN)
        result = self.plot(path, "--format", "png")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "allocators.png")))

    def test_zero_and_unmeasured_bytes_are_written_on_the_axis_not_dropped(self):
        path = self.write_report(PLAIN)
        result = self.plot(path, "--format", "svg")
        self.assertEqual(result.returncode, 0, result.stderr)
        texts = self.svg_texts(os.path.join(self.dir, "bytes.svg"))
        self.assertEqual(texts.count("0"), 2)  # views at both sizes (the axis is logarithmic)
        self.assertEqual(texts.count("n/a"), 1)  # presized at 1000

    def test_copies_plot_puts_each_counting_row_at_its_copied_bytes_and_names_the_rows_that_do_not_count(self):
        path = self.write_report(PLAIN)
        self.assertEqual(self.plot(path, "--format", "svg").returncode, 0)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "copies.svg")))  # nothing counted: no plot
        path = self.write_report(COPIES)
        result = self.plot(path)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assert_png(os.path.join(self.dir, "copies.png"))
        texts = self.svg_texts(os.path.join(self.dir, "copies.svg"))
        for name in ("string_copy", "presized", "provided_buffers", "floor_parse"):
            self.assertIn(name, texts)
        self.assertNotIn("libcurl", texts)  # not a point...
        self.assertTrue(any("not counted" in t and "libcurl" in t for t in texts))  # ...but named under the panel
        self.assertIn("one copy of the body", texts)
        self.assertTrue(any(t.startswith("body bytes copied per op [KB]") for t in texts))

    def test_out_option_writes_elsewhere_and_format_option_limits_the_files(self):
        path = self.write_report(PLAIN)
        out = os.path.join(self.dir, "plots", "nested")
        result = self.plot(path, "--out", out, "--format", "png")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(sorted(os.listdir(out)), ["box.png", "bytes.png", "phases.png", "scaling.png"])
        self.assertFalse(os.path.exists(os.path.join(self.dir, "box.png")))

    def test_the_same_report_gives_the_same_svg_bytes(self):
        self.assert_svgs_repeat(self.write_report(PLAIN), ("box.svg", "phases.svg", "scaling.svg", "bytes.svg"))

    def test_a_before_after_report_gets_the_per_round_ratios_and_no_other_plot(self):
        path = self.write_report(AB)
        result = self.plot(path)
        self.assertEqual(result.returncode, 0, result.stderr)
        expected = [os.path.join(self.dir, f"ab.{fmt}") for fmt in ("png", "svg")]
        self.assertEqual(sorted(result.stdout.split()), expected)
        self.assertEqual(sorted(os.listdir(self.dir)), ["ab.png", "ab.svg", "report.json"])
        self.assert_png(expected[0])
        texts = self.svg_texts(expected[1])
        self.assertIn("after / before (time per op)", texts)  # 0.95 to 1.06: linear, no "log scale"
        for name, verdict in (("views weather 10000", "slower"), ("string_copy weather 10", "within the noise"),
                              ("presized weather 10000", "faster")):
            self.assertIn(name, texts)
            self.assertTrue(any(t.startswith(verdict) for t in texts), verdict)
        self.assertIn("slower (+6.0 %), over the gate", texts)
        # By size, then in the report's order, top to bottom (the SVG has the tick labels bottom to top).
        names = [t for t in texts if t.endswith(" weather 10") or t.endswith(" weather 10000")]
        self.assertEqual(names, ["presized weather 10000", "views weather 10000", "string_copy weather 10"])
        self.assertIn("gate +2 %", texts)
        self.assertIn("noise band ±1 %", texts)
        self.assertIn("not compared: arena weather 10 (the after build has no such case)", texts)
        self.assertFalse(any(t.startswith("not compared") and "views" in t for t in texts))
        self.assertIn("after / before per round: headline, unknown against 1234567", texts)
        self.assertTrue(any(t.startswith("12 rounds; Bonferroni over 3 cases: 99.81 % per case; noise band ±1 %")
                            for t in texts), texts)

    def test_a_before_after_report_with_no_compared_case_is_nothing_to_plot(self):
        path = self.write_report(ab_report([ab_case("arena weather 10", 10, 1.0, "not compared", reason="failed")]))
        result = self.plot(path)
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn("no compared case", result.stderr)
        self.assertEqual(result.stdout, "")
        self.assertEqual(os.listdir(self.dir), ["report.json"])

    def test_the_same_before_after_report_gives_the_same_svg_bytes(self):
        first = self.assert_svgs_repeat(self.write_report(AB), ("ab.svg",))
        self.assertEqual(os.listdir(first), ["ab.svg"])

    def test_bad_input_is_refused_with_a_message_and_an_exit_status(self):
        rows = [
            # (what, report text or None for a missing file, extra args, status, words in stderr)
            ("missing file", None, [], 2, "No such file or directory"),
            ("not JSON", "{\"schema_version\": 1, ", [], 2, "not JSON"),
            ("not an object", "[1, 2]", [], 2, "not a report"),
            ("unknown schema", json.dumps(report([case("views", 10, 1.0)], version=99)), [], 2, "schema_version 99"),
            ("unknown schema of an ab report", json.dumps({**AB, "schema_version": 2}), [], 2,
             "before/after report schema_version 2"),
            ("no cases list", json.dumps({"schema_version": 1}), [], 2, "no 'cases' list"),
            ("nothing succeeded", json.dumps(report([case("views", 10, 1.0, status="failed")])), [], 1,
             "no successful case"),
            ("unknown format", json.dumps(PLAIN), ["--format", "gif"], 2, "choose from png, svg"),
        ]
        for what, text, args, status, words in rows:
            with self.subTest(what):
                path = os.path.join(self.dir, "absent.json") if text is None else self.write_report(text, f"{what}.json")
                result = self.plot(path, *args)
                self.assertEqual(result.returncode, status, result.stderr)
                self.assertIn(words, result.stderr)
                self.assertEqual(result.stdout, "")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        print("usage: plot_test.py PATH/TO/tools/plot SCRATCH_FOLDER [unittest options]", file=sys.stderr)
        sys.exit(2)
    PLOT = os.path.abspath(sys.argv[1])
    WORK = os.path.abspath(sys.argv[2])
    os.makedirs(WORK, exist_ok=True)
    unittest.main(argv=[sys.argv[0], *sys.argv[3:]], verbosity=2)
