"""What every plot of tools/plot shares: units, axis scales and tick labels, the strategies' colours,
markers and line styles, panel titles and grids, the caption of the run, and saving a figure."""

import math
import os

import matplotlib.pyplot as plt
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter, ScalarFormatter

from plotlib.report import ordered

# Okabe & Ito, "Color Universal Design" (2008): black first for the baseline, then the seven colours.
OKABE_ITO = ["#000000", "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "h", "<", ">", "p"]
LINESTYLES = ["-", "--", "-.", ":"]
DECADES_FOR_LOG = 1.0


def time_unit(values_ns):
    """The largest unit in which the smallest value is still at least 1 (BenchmarkDotNet's habit)."""
    positive = [v for v in values_ns if v > 0]
    smallest = min(positive) if positive else 1.0
    for name, scale in (("s", 1e9), ("ms", 1e6), ("μs", 1e3)):
        if smallest >= scale:
            return name, scale
    return "ns", 1.0


def size_unit(values_bytes):
    positive = [v for v in values_bytes if v > 0]
    smallest = min(positive) if positive else 0
    for name, scale in (("GB", 1024.0 ** 3), ("MB", 1024.0 ** 2), ("KB", 1024.0)):
        if smallest >= scale:
            return name, scale
    return "B", 1.0


def spans_decades(values):
    positive = [v for v in values if v is not None and v > 0]
    return len(positive) >= 2 and math.log10(max(positive) / min(positive)) >= DECADES_FOR_LOG


def plain(value, _position=None):
    """Tick labels in one style: 0.5, 20, 1,000, 100,000 (never 1e4 or 1e+05)."""
    if value == 0:
        return "0"
    if abs(value) >= 1:
        return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"
    return f"{value:.3g}"


def linear_formatter():
    formatter = ScalarFormatter(useOffset=False)
    formatter.set_scientific(False)
    return formatter


def set_scale(axis_name, ax, values, label, logarithmic=None):
    """Log scale when `values` span a decade (or when told), with the label saying so; plain tick labels."""
    axis = ax.xaxis if axis_name == "x" else ax.yaxis
    if logarithmic is None:
        logarithmic = spans_decades(values)
    if logarithmic:
        (ax.set_xscale if axis_name == "x" else ax.set_yscale)("log")
        positive = [v for v in values if v is not None and v > 0]
        few_decades = math.log10(max(positive) / min(positive)) < 2 if positive else True
        # Within a couple of decades the powers of 10 alone leave an axis with one or two labels.
        axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0) if few_decades else (1.0,)))
        axis.set_minor_formatter(NullFormatter())
        axis.set_major_formatter(FuncFormatter(plain))
        label += " (log scale)"
    else:
        axis.set_major_formatter(linear_formatter())
    (ax.set_xlabel if axis_name == "x" else ax.set_ylabel)(label)
    return logarithmic


def style(index):
    """Colour, marker and line style of the index-th strategy: distinct without colour too."""
    return (OKABE_ITO[index % len(OKABE_ITO)], MARKERS[index % len(MARKERS)],
            LINESTYLES[(index // len(OKABE_ITO)) % len(LINESTYLES)])


def describe(report):
    env = report.get("environment") or {}
    parts = [env.get("timestamp"), env.get("cpu"), env.get("kernel") and f"Linux {env['kernel']}",
             env.get("compiler"), env.get("build_type")]
    text = ", ".join(str(p) for p in parts if p)
    link = env.get("link")  # schema 3: the emulated link of a --link run; absent or null over loopback
    if link:
        text += f"\nlink {link.get('description', '?')}; measured RTT {link.get('measured_rtt_us', 0):.0f} us"
    return text


def several_allocators(cases):
    return len(ordered(c["allocator"] for c in cases)) > 1


def panel_title(method, payload, size=None, allocator=None):
    title = f"{method} {payload}".strip()
    if size is not None:
        title += f", {size:,} records" if isinstance(size, int) else f", {size} records"
    if allocator is not None:
        title += f", {allocator}"
    return title


def grid(count, most_columns=3):
    columns = min(count, most_columns)
    return math.ceil(count / columns), columns


def save(fig, name, out_dir, formats):
    written = []
    for fmt in formats:
        path = os.path.join(out_dir, f"{name}.{fmt}")
        # No creation date in the file: the same report gives the same bytes.
        fig.savefig(path, format=fmt, dpi=120, metadata={"Date": None} if fmt == "svg" else {})
        written.append(path)
    plt.close(fig)
    return written
