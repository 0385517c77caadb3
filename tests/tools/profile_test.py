#!/usr/bin/python3
"""Tests for tools/profile: the profile holds the enabled region of the profiled process only, and its
summary per case span (profile.json) goes to the run's folder.

tools/profile runs a stand-in for bench (profile_workload) that burns CPU in named functions before
perf is enabled, while it is, after it is disabled, and in a forked child all along. The flat report
tools/profile prints must show the enabled function and none of the others. Exit status 77 (ctest:
skipped) when perf is missing or not allowed to profile here.

And bench itself, where the build has it: two interleaved cases each get a profile of their own in
the run's profile.json, and `bench report RUN` puts them on the page under the command tools/profile.

Run by ctest (tests/tools/CMakeLists.txt) as:
  profile_test.py PATH/TO/tools/profile PATH/TO/profile_workload SCRATCH_FOLDER [PATH/TO/bench PATH/TO/server]
"""

import json
import os
import re
import shutil
import subprocess
import sys
import unittest

PROFILE = WORKLOAD = WORK = None
BENCH_AND_SERVER = None  # (bench, server) where this build has them: bench itself under tools/profile
SKIP = 77


def perf_usable():
    if shutil.which("perf") is None:
        return "perf is not installed"
    probe = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-o", os.devnull, "--", "true"],
                           capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        return f"perf record does not run here: {probe.stderr.strip()}"
    return None


class ProfileTest(unittest.TestCase):
    def setUp(self):
        self.out = os.path.join(WORK, self.id().rsplit(".", 1)[-1])
        shutil.rmtree(self.out, ignore_errors=True)

    def profile(self, *args):
        env = dict(os.environ, RINGLAB_PROFILE_BENCH=WORKLOAD, RINGLAB_PROFILE_OUT=self.out)
        return subprocess.run([PROFILE, *args], capture_output=True, text=True, timeout=300, env=env)

    def test_only_the_enabled_region_of_the_profiled_process_is_in_the_report(self):
        result = self.profile("get", "--filter", "presized*")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("profile_workload: done", result.stdout)
        top = result.stdout.split("Top of the profile", 1)[1]
        self.assertIn("ringlab_workload_measured", top)
        for absent in ("ringlab_workload_before_enable", "ringlab_workload_after_disable",
                       "ringlab_workload_server_child"):
            self.assertNotIn(absent, top)
        data = os.path.join(self.out, "perf.data")
        self.assertIn(f"perf.data: {data}", result.stdout)
        self.assertTrue(os.path.getsize(data) > 0)
        # The FIFOs and the copy of the workload's output are removed once perf is done with them;
        # "run" is the workload's results folder.
        self.assertEqual(sorted(os.listdir(self.out)), ["perf.data", "run"])

    def test_the_summary_of_each_case_span_goes_next_to_the_run_s_report(self):
        result = self.profile("get", "--filter", "presized*")
        self.assertEqual(result.returncode, 0, result.stderr)
        path = os.path.join(self.out, "run", "profile.json")
        self.assertIn(f"profile.json: {path}", result.stdout)
        with open(path, encoding="utf-8") as f:
            summary = json.load(f)
        self.assertEqual(summary["format"], "ringlab profile summary 1")
        self.assertIn(summary["event"], ("cpu-clock", "cycles"))
        [case] = summary["cases"]
        self.assertEqual(case["case"], "ringlab_workload_measured")
        self.assertEqual(case["spans"], 1)
        # 400 ms on a CPU at perf's default rate: far more than a handful of samples.
        self.assertGreater(case["samples"], 50)
        self.assertAlmostEqual(case["kernel"] + case["user"], 1.0, places=3)
        self.assertAlmostEqual(sum(d["share"] for d in case["dsos"]), 1.0, places=2)
        top = case["symbols"][0]
        self.assertEqual((top["symbol"], top["dso"]), ("ringlab_workload_measured", os.path.basename(WORKLOAD)))
        self.assertGreater(top["share"], 0.5)
        self.assertLessEqual(len(case["symbols"]), 15)
        for absent in ("ringlab_workload_before_enable", "ringlab_workload_after_disable",
                       "ringlab_workload_server_child"):
            self.assertNotIn(absent, [s["symbol"] for s in case["symbols"]])
        # No folder of the machine: DSOs are file names.
        self.assertFalse(any("/" in d["dso"] for d in case["dsos"]))
        # Every sample in one area, in tools/profile's order; the workload burns its CPU in user space.
        self.assertEqual([a["area"] for a in case["areas"]], ["network", "io_uring", "epoll", "syscall", "kernel", "user"])
        self.assertAlmostEqual(sum(a["share"] for a in case["areas"]), 1.0, places=2)
        self.assertAlmostEqual(case["areas"][-1]["share"], case["user"], places=3)

    def test_bench_under_tools_profile_gives_each_case_its_profile_and_a_page_with_it(self):
        if BENCH_AND_SERVER is None:
            self.skipTest("no bench and server built here")
        bench, server = BENCH_AND_SERVER
        work = os.path.join(self.out, "work")
        os.makedirs(work)
        # Two cases in interleaved rounds: perf stays on across both, so only the timed segments bench
        # writes can tell their samples apart.
        env = dict(os.environ, RINGLAB_PROFILE_BENCH=bench, RINGLAB_PROFILE_OUT=os.path.join(self.out, "perf"))
        result = subprocess.run([PROFILE, "get", "--filter", "views,epoll", "--sizes", "10", "--server", server,
                                 "--iteration-time", "20", "--warmup", "1", "--iterations", "4", "--max-iterations", "4"],
                                capture_output=True, text=True, timeout=300, env=env, cwd=work)
        self.assertEqual(result.returncode, 0, result.stderr[-3000:])
        found = re.search(r"^profile\.json: (results/[^/\s]+)/profile\.json$", result.stdout, re.M)
        self.assertIsNotNone(found, result.stdout[-3000:])
        run = os.path.join(work, found.group(1))
        self.assertEqual(sorted(f for f in os.listdir(run) if not f.startswith("report.")),
                         ["perf-spans.tsv", "profile.json"])
        with open(os.path.join(run, "perf-spans.tsv"), encoding="utf-8") as f:
            spans = [line.rstrip("\n").split("\t") for line in f if not line.startswith("#")]
        # Interleaved: the cases' segments alternate and never overlap.
        self.assertEqual({s[0] for s in spans}, {"views weather 10", "epoll weather 10"})
        self.assertTrue(all(int(s[1]) < int(s[2]) for s in spans))
        self.assertTrue(all(int(a[2]) <= int(b[1]) for a, b in zip(spans, spans[1:])))
        self.assertGreater(len({s[0] for s in spans[:3]}), 1)
        with open(os.path.join(run, "profile.json"), encoding="utf-8") as f:
            summary = json.load(f)
        self.assertEqual([c["case"] for c in summary["cases"]], ["views weather 10", "epoll weather 10"])
        for case in summary["cases"]:
            with self.subTest(case=case["case"]):
                self.assertEqual(case["spans"], sum(1 for s in spans if s[0] == case["case"]))
                self.assertGreater(case["samples"], 20)
                self.assertAlmostEqual(case["kernel"] + case["user"], 1.0, places=3)
                self.assertTrue(case["symbols"])
                self.assertIn("bench", [d["dso"] for d in case["dsos"]])
                self.assertFalse(any("/" in d["dso"] for d in case["dsos"]))
                # A request over loopback: its call chains reach the network stack, and each sample
                # is in one area.
                areas = {a["area"]: a["share"] for a in case["areas"]}
                self.assertAlmostEqual(sum(areas.values()), 1.0, places=2)
                self.assertGreater(areas["network"], 0)
                self.assertAlmostEqual(areas["user"], case["user"], places=3)
        # epoll's own machinery is never in views' chains, nor io_uring's in epoll's.
        views, epoll = ({a["area"]: a["share"] for a in c["areas"]} for c in summary["cases"])
        self.assertEqual(views["epoll"], 0)
        self.assertEqual(epoll["io_uring"], 0)
        # The interfaces' items: of their own areas only, each area's adding up to at most its share.
        for case in summary["cases"]:
            with self.subTest(case=case["case"]):
                areas = {a["area"]: a["share"] for a in case["areas"]}
                self.assertTrue(all(i["area"] in ("io_uring", "epoll", "syscall") for i in case["items"]))
                for area in ("io_uring", "epoll", "syscall"):
                    total = sum(i["share"] for i in case["items"] if i["area"] == area)
                    self.assertLessEqual(total, areas[area] + 0.001)
        views_items, epoll_items = ({i["area"] for i in c["items"]} for c in summary["cases"])
        self.assertNotIn("epoll", views_items)
        self.assertNotIn("io_uring", epoll_items)
        if views["io_uring"] > 0:
            io_uring_frame = re.compile(r"^(__)?(io|x64_sys_io_uring|do_sys_io_uring)_")
            self.assertTrue(all(io_uring_frame.match(i["item"]) for i in summary["cases"][0]["items"]
                                if i["area"] == "io_uring"))
        pages = os.path.join(self.out, "pages")
        paged = subprocess.run([bench, "report", run, "--out", pages], capture_output=True, text=True, timeout=60)
        self.assertEqual(paged.returncode, 0, paged.stderr)
        [name] = os.listdir(pages)
        with open(os.path.join(pages, name), encoding="utf-8") as f:
            page = f.read()
        self.assertRegex(page, r"(?m)^\| Command \| `tools/profile get --filter views,epoll --sizes 10 --server ")
        self.assertNotIn(".fifo", page)
        self.assertNotIn("--perf-control", page)
        for heading in ("## Where the CPU goes", "### By area", "### The interfaces' machinery, item by item",
                        "### views weather 10\n", "### epoll weather 10\n"):
            self.assertIn(heading, page)
        self.assertRegex(page, r"(?m)^\| Area \| views weather 10 \| epoll weather 10 \|$")
        self.assertRegex(page, r"(?m)^- views weather 10 against epoll weather 10: CPU/req [0-9.]+ μs against [0-9.]+ μs")

    def test_a_profile_without_filter_or_with_its_own_perf_control_is_refused(self):
        rows = [
            (["get"], "--filter CASE is required"),
            (["get", "--filter", "x", "--perf-control", "a,b"], "--perf-control is set by tools/profile"),
            ([], "usage: tools/profile"),
        ]
        for args, words in rows:
            with self.subTest(args=args):
                result = self.profile(*args)
                self.assertEqual(result.returncode, 2)
                self.assertIn(words, result.stderr)
                self.assertFalse(os.path.exists(self.out), "nothing is started for a refused command")


if __name__ == "__main__":
    if len(sys.argv) < 4:
        print("usage: profile_test.py PATH/TO/tools/profile PATH/TO/profile_workload SCRATCH_FOLDER", file=sys.stderr)
        sys.exit(2)
    PROFILE, WORKLOAD, WORK = (os.path.abspath(a) for a in sys.argv[1:4])
    rest = sys.argv[4:]
    if len(rest) >= 2 and not rest[0].startswith("-"):
        BENCH_AND_SERVER = (os.path.abspath(rest[0]), os.path.abspath(rest[1]))
        rest = rest[2:]
    reason = perf_usable()
    if reason:
        print(f"skipped: {reason}")
        sys.exit(SKIP)
    os.makedirs(WORK, exist_ok=True)
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)
