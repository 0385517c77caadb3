"""Reading a bench report.json for tools/plot: the schema versions it reads, each successful case of a suite's
report as a plain dict of what the plots draw (ok_cases), and each case of a before/after report ("kind": "ab")
likewise (ab_cases). A report it cannot read ends the program with exit status 2 (fail), as tools/plot
documents."""

import json
import math
import sys

# bench/src/core/include/ringlab/bench/core/results.hpp: kOldestReadableSchemaVersion..kReportSchemaVersion. Versions 2
# to 6 added fields (reference, latency, diagnostics; the link; connection and server_mode; client) and none this
# tool needs changed. tests/tools/fresh_report_test.py runs this tool on a report bench has just written,
# so a version bump that this list misses fails there.
SCHEMA_VERSIONS = (1, 2, 3, 4, 5, 6)
# A before/after run's report (bench --before BENCH --after BENCH) says so with "kind": "ab" and has versions of
# its own: bench/src/core/include/ringlab/bench/core/ab.hpp, kAbKind and kAbSchemaVersion. A suite's report has
# no "kind".
AB_KIND = "ab"
AB_SCHEMA_VERSIONS = (1,)

# The request phases in the order they happen (results.hpp, struct Phases), each with its colour.
PHASES = [("connect", "#999999"), ("send", "#E69F00"), ("wait", "#56B4E9"), ("head", "#009E73"),
          ("body", "#F0E442"), ("deserialize", "#0072B2"), ("other", "#CC79A7")]
SYSTEM_ALLOCATOR = "system"  # allocators.hpp: allocator_name(Allocator::system)


def fail(status, message):
    print(f"tools/plot: {message}", file=sys.stderr)
    sys.exit(status)


def load_report(path):
    try:
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
    except OSError as e:
        fail(2, f"{path}: {e.strerror}")
    except json.JSONDecodeError as e:
        fail(2, f"{path}: not JSON: {e}")
    if not isinstance(report, dict):
        fail(2, f"{path}: not a report (top level is not an object)")
    version = report.get("schema_version")
    if is_ab(report):
        if version not in AB_SCHEMA_VERSIONS:
            fail(2, f"{path}: before/after report schema_version {version!r}, this tool reads "
                    f"{', '.join(map(str, AB_SCHEMA_VERSIONS))}")
    elif version not in SCHEMA_VERSIONS:
        fail(2, f"{path}: schema_version {version!r}, this tool reads {', '.join(map(str, SCHEMA_VERSIONS))}")
    if not isinstance(report.get("cases"), list):
        fail(2, f"{path}: no 'cases' list")
    return report


def is_ab(report):
    """True for a before/after run's report, False for a suite's."""
    return report.get("kind") == AB_KIND


def number(value):
    """A finite float, or None for null, missing or non-numeric values."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def ok_cases(report):
    cases = []
    for c in report["cases"]:
        if not isinstance(c, dict) or c.get("status", "ok") != "ok":
            continue
        stats = c.get("stats") or {}
        memory = c.get("memory") or {}
        phases = c.get("phases") or {}
        io = c.get("io") or {}
        samples = [number(s) for s in (c.get("samples_ns") or [])]
        outliers = {i for i in (c.get("outliers") or []) if isinstance(i, int)}
        cases.append({
            "strategy": str(c.get("strategy", "?")),
            "method": str(c.get("method", "GET")),
            "payload": str(c.get("payload", "")),
            "size": c.get("size", 0),
            "allocator": str(c.get("allocator") or "-"),
            "baseline": bool(c.get("baseline", False)),
            "reference": bool(c.get("reference", False)),
            "mean": number(stats.get("mean")),
            "median": number(stats.get("median")),
            "error": number(stats.get("error")),
            "kept": [s for i, s in enumerate(samples) if s is not None and i not in outliers],
            "outliers": [s for i, s in enumerate(samples) if s is not None and i in outliers],
            "phases": {name: number(phases.get(name)) for name, _ in PHASES},
            "bytes": number(memory.get("bytes_per_op")),
            # The body's copies (null: the row does not count them, a library peer).
            "body_bytes": number(io.get("body_bytes_per_op")),
            "copied": (None if number(io.get("kernel_copied_bytes_per_op")) is None
                       else number(io.get("kernel_copied_bytes_per_op")) + (number(io.get("ringlab_copied_bytes_per_op")) or 0.0)),
        })
    return cases


def ab_cases(report):
    """Every case of a before/after report, in the report's order, the ones not compared included (their reason
    says why). `ratios`: (round, after / before) of each round with a time on both sides."""
    cases = []
    for c in report["cases"]:
        if not isinstance(c, dict):
            continue
        time = c.get("time") or {}
        before, after = c.get("before_ns") or [], c.get("after_ns") or []
        pairs = [(i, number(a), number(b)) for i, (b, a) in enumerate(zip(before, after))]
        cases.append({
            "name": str(c.get("name", "?")),
            "size": int(number(c.get("size")) or 0),
            "verdict": str(c.get("verdict") or "not compared"),
            "over_gate": bool(c.get("over_gate", False)),
            "reason": str(c.get("reason") or ""),
            "ratios": [(i, a / b) for i, a, b in pairs if a is not None and b is not None and a > 0 and b > 0],
            "ratio": number(time.get("ratio")),
            "low": number(time.get("low")),
            "high": number(time.get("high")),
        })
    return cases


def short_commit(report, side):
    """The first 7 characters of the commit the `side` ("before" or "after") build was made from."""
    build = (report.get(side) or {}).get("report") or {}
    commit = str((build.get("environment") or {}).get("git_commit") or "")
    return commit[:7] or "unknown"


def ordered(values):
    """Distinct values in first-seen order (the report's order is the table's order)."""
    seen = []
    for v in values:
        if v not in seen:
            seen.append(v)
    return seen
