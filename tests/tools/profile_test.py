#!/usr/bin/python3
"""Tests for tools/profile: the profile holds the enabled region of the profiled process only.

tools/profile runs a stand-in for bench (profile_workload) that burns CPU in named functions before
perf is enabled, while it is, after it is disabled, and in a forked child all along. The flat report
tools/profile prints must show the enabled function and none of the others. Exit status 77 (ctest:
skipped) when perf is missing or not allowed to profile here.

Run by ctest (tests/tools/CMakeLists.txt) as: profile_test.py PATH/TO/tools/profile PATH/TO/profile_workload SCRATCH_FOLDER
"""

import os
import shutil
import subprocess
import sys
import unittest

PROFILE = WORKLOAD = WORK = None
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
        # The FIFOs are removed once perf is done with them.
        self.assertEqual(sorted(os.listdir(self.out)), ["perf.data"])

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
    reason = perf_usable()
    if reason:
        print(f"skipped: {reason}")
        sys.exit(SKIP)
    os.makedirs(WORK, exist_ok=True)
    unittest.main(argv=[sys.argv[0], *sys.argv[4:]], verbosity=2)
