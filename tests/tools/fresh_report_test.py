#!/usr/bin/env python3
"""Every reader of report.json, run on a report that bench has just written (not on a stored fixture):
tools/plot, bench compare and bench report (of the report, and of the run's folder with a profile summary
next to it). And what the console shows for that run: no line wider
than the console width, the summarized warnings, the generated findings, one line for the rows that do
not apply to the payload (three_fields on weather) instead of a row per size, and the way to the full
table.

usage: fresh_report_test.py BENCH SERVER TOOLS_DIR WORK_DIR
"""
import json
import os
import re
import shutil
import subprocess
import sys

CONSOLE_WIDTH = 160  # reporters.hpp: kConsoleWidth


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def run(argv, timeout=600, **kwargs):
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kwargs)


def main():
    bench, server, tools, work = sys.argv[1:5]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    results = os.path.join(work, "results")
    # Enough paired rounds (8) for the Ratio's interval; three_fields does not apply to weather. Run
    # from the work folder with the default, relative results root, as tools/bench runs from the
    # project's root: the paths printed are then as short as a user sees them (a path is never wrapped).
    made = run([bench, "get", "--filter", "string_copy,views,three_fields,floor_transfer,floor_parse", "--sizes", "10,100",
                "--server", server, "--iteration-time", "5", "--warmup", "1", "--iterations", "8",
                "--max-iterations", "8", "--format", "md,csv,json"], cwd=work)
    console = made.stdout
    print(console)
    if made.returncode != 0:
        fail("bench exited %d: %s" % (made.returncode, made.stderr[-3000:]))
    wide = [line for line in console.splitlines() if len(line) > CONSOLE_WIDTH]
    if wide:
        fail("%d console lines wider than %d columns, the first: %r" % (len(wide), CONSOLE_WIDTH, wide[0]))
    for expected in ("What this run says", "| Method", "Ratio 95% CI", "Reports (", "tools/bench report ",
                     "not shown, not applicable: three_fields on weather"):
        if expected not in console:
            fail("the console lacks %r" % expected)
    if re.search(r"^\| three_fields ", console, re.M):
        fail("three_fields has a row on weather, where it does not apply")
    if not re.search(r"^- 10 records: fastest \S+", console, re.M) or not re.search(r"^- 100 records: fastest", console, re.M):
        fail("no finding per size")
    if "floors' sum" not in console:
        fail("the findings do not place the fastest against the floors")
    reports = []
    for root, _, files in os.walk(results):
        reports += [os.path.join(root, f) for f in files if f == "report.json"]
    if len(reports) != 1:
        fail("expected one report.json under %s, found %s" % (results, reports))
    report = reports[0]

    plots = os.path.join(work, "plots")
    plotted = run(["/usr/bin/python3", os.path.join(tools, "plot"), report, "--out", plots])
    if plotted.returncode != 0:
        fail("tools/plot exited %d on a fresh report: %s" % (plotted.returncode, plotted.stderr[-2000:]))
    for name in ("box.png", "scaling.png", "bytes.png"):
        if not os.path.getsize(os.path.join(plots, name)) > 0:
            fail("tools/plot wrote no %s" % name)

    compared = run([bench, "compare", report, report])
    if compared.returncode != 0:
        fail("bench compare exited %d on a fresh report against itself: %s" % (compared.returncode, compared.stderr))

    pages = os.path.join(work, "pages")
    paged = run([bench, "report", report, "--out", pages])
    if paged.returncode != 0:
        fail("bench report exited %d: %s" % (paged.returncode, paged.stderr))
    written = os.listdir(pages)
    if len(written) != 1 or not re.fullmatch(r"\d{4}-\d\d-\d\d-get-[0-9a-f]{7}\.md|\d{4}-\d\d-\d\d-get-unknown\.md", written[0]):
        fail("bench report wrote %s" % written)
    with open(os.path.join(pages, written[0]), encoding="utf-8") as f:
        page = f.read()
    for pattern in (r"^\| Command \| `tools/bench get ", r"^\| Commit \| `([0-9a-f]{40}|unknown)`", r"^\| Page made by \| `tools/bench report ",
                    r"^## What this run says", r"^\| string_copy +\| +10 \|"):
        if not re.search(pattern, page, re.M):
            fail("the results page lacks %r:\n%s" % (pattern, page[:3000]))
    # The page names the command as typed (this one has paths in its arguments), but nothing else of
    # the machine's folders: not where the report lay, nor where the allocator's library was found.
    for line in page.splitlines():
        if line.startswith(("| Page made by", "| Allocator", "| Machine", "| Compiler")) and work in line:
            fail("the results page names a machine path: %r" % line)
    if "Where the CPU goes" in page:
        fail("a run without a profile got a profile section")

    # The run's folder given instead of its report.json, with a profile summary of tools/profile's
    # format next to the report: the page is the same but for the section that says where the CPU goes.
    profiled = os.path.join(work, "profiled-run")
    shutil.copytree(os.path.dirname(report), profiled)
    with open(os.path.join(profiled, "profile.json"), "w", encoding="utf-8") as f:
        json.dump({"format": "ringlab profile summary 1", "event": "cpu-clock", "samples_outside_spans": 0,
                   "cases": [{"case": "views weather 10", "spans": 1, "samples": 400, "kernel": 0.25, "user": 0.75,
                              "dsos": [{"dso": "bench", "share": 0.75}, {"dso": "kernel", "share": 0.25}],
                              "symbols": [{"symbol": "ringlab_fixture_symbol", "dso": "bench", "share": 0.5}]}]}, f)
    profiled_pages = os.path.join(work, "profiled-pages")
    paged = run([bench, "report", profiled + "/", "--out", profiled_pages])
    if paged.returncode != 0:
        fail("bench report RUN exited %d: %s" % (paged.returncode, paged.stderr))
    with open(os.path.join(profiled_pages, written[0]), encoding="utf-8") as f:
        with_profile = f.read()
    for pattern in (r"^\| Page made by \| `tools/bench report profiled-run` \|", r"^## Where the CPU goes$",
                    r"^### views weather 10$", r"^400 samples of cpu-clock; kernel 25\.0 %, user 75\.0 %\.$",
                    r"^\| `ringlab_fixture_symbol` \| `bench` \| 50\.0 % \|$"):
        if not re.search(pattern, with_profile, re.M):
            fail("the page of the folder with a profile lacks %r:\n%s" % (pattern, with_profile[-3000:]))
    start = with_profile.index("\n## Where the CPU goes\n")
    without_section = with_profile[:start] + with_profile[with_profile.index("\nThe columns: ", start):]
    if without_section.split("| Page made by")[1].split("\n", 1)[1] != page.split("| Page made by")[1].split("\n", 1)[1]:
        fail("the page of the folder with a profile differs from the report's page elsewhere than in its section")
    with open(os.path.join(profiled, "profile.json"), "w", encoding="utf-8") as f:
        f.write('{"format": "ringlab profile summary 1", "event": "cpu-clock"}')
    refused = run([bench, "report", profiled, "--out", profiled_pages])
    if refused.returncode == 0 or "profile.json: samples_outside_spans: missing" not in refused.stderr:
        fail("bench report took a broken profile.json (exit %d): %s" % (refused.returncode, refused.stderr))
    print("fresh report: bench's console, tools/plot, bench compare and bench report all read it")


if __name__ == "__main__":
    main()
