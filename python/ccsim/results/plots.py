"""PNG plots of a run: queue length and cwnd over time, goodput per flow.

Uses matplotlib's object API with the Agg canvas directly, so it never touches a display or
the global pyplot state (runs are often made on headless machines and in parallel).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import StepPatch

from ..errors import one_line

__all__ = ["plot_series", "plot_goodput", "plot_control", "series_columns"]

# Trace column names are set by the engine: `queue.<from>-><to>.len_pkts`, `flow.<id>.cwnd_bytes`.
QUEUE_LENGTH_SUFFIX = ".len_pkts"
CWND_SUFFIX = ".cwnd_bytes"


def series_columns(traces: pd.DataFrame, prefix: str, suffix: str) -> list[str]:
    """Trace columns such as ``queue.A->B.len_pkts`` for (``queue.``, ``.len_pkts``)."""
    return [c for c in traces.columns if c.startswith(prefix) and c.endswith(suffix)]


def _label(column: str, prefix: str, suffix: str) -> str:
    return column[len(prefix) : len(column) - len(suffix)]


# A name is cut to this many characters in a label: a plot is read, not parsed.
LABEL_CHARS = 60


def _plain(text: str) -> str:
    """A name from the scenario as literal text: matplotlib reads $...$ as math and fails on
    names that are not valid math (a flow called "$x{" must still plot); control characters
    (a NUL, a line break) are shown escaped, as no font has a glyph for them."""
    return one_line(str(text), LABEL_CHARS).replace("$", r"\$")


def _save(fig: Figure, path: Path) -> None:
    FigureCanvasAgg(fig)
    with warnings.catch_warnings():
        # A name in a script the font lacks (CJK in DejaVu Sans) is drawn as boxes; the warning
        # matplotlib prints for each would go to the user's terminal.
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .*missing from", category=UserWarning)
        fig.savefig(path, dpi=120)


def plot_series(
    traces: pd.DataFrame,
    prefix: str,
    suffix: str,
    ylabel: str,
    title: str,
    path: Path,
    scale: float = 1.0,
    labels: dict[str, str] | None = None,
    warmup_s: float = 0.0,
) -> bool:
    """One line per matching trace column against ``time_s``; False (nothing written) if none.

    ``labels`` renames series (by the part between prefix and suffix); a dashed line marks the
    end of the warm-up, before which nothing is measured.
    """
    columns = series_columns(traces, prefix, suffix)
    if not columns or "time_s" not in traces:
        return False
    fig = Figure(figsize=(8, 4), layout="constrained")
    ax = fig.subplots()
    for column in columns:
        key = _label(column, prefix, suffix)
        ax.plot(traces["time_s"], traces[column] * scale, label=_plain((labels or {}).get(key, key)), linewidth=0.8)
    if warmup_s > 0:
        ax.axvline(warmup_s, color="grey", linestyle="--", linewidth=0.8)
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if len(columns) <= 12:
        ax.legend(loc="upper right", fontsize="small")
    ax.grid(alpha=0.3)
    _save(fig, path)
    return True


# Flows named under their bars at most; with more, the bars are numbered by the axis alone
# (thousands of tick labels would take a minute to lay out and a figure metres wide).
LABELLED_FLOWS = 40
# Width of the goodput figure: 0.4 in a flow while the flows are labelled, at most this.
MAX_WIDTH_IN = 18.0


def plot_goodput(flows: pd.DataFrame, path: Path) -> bool:
    """Goodput of each flow (Mbit/s) as bars, named under them up to ``LABELLED_FLOWS``
    flows and numbered by flow index beyond; False if there are no flows."""
    if flows.empty:
        return False
    n = len(flows)
    fig = Figure(figsize=(min(max(4.0, 0.4 * n + 2), MAX_WIDTH_IN), 4), layout="constrained")
    ax = fig.subplots()
    goodput = flows["goodput_bps"].to_numpy() / 1e6
    if n <= LABELLED_FLOWS:
        ax.bar(range(n), goodput)
        labels = [_plain(name) for name in flows["name"]] if "name" in flows else [str(i) for i in flows["id"]]
        ax.set_xticks(range(n), labels, rotation=90 if n > 12 else 0)
        ax.set_xlabel("flow")
    else:
        # One filled outline for all the bars: a bar each is an artist each. Added as an artist
        # with its extent given, since `stairs` (`add_patch`) walks the outline's vertices in
        # Python to find it: 0.2 s at 9 000 flows.
        edges = np.arange(n + 1) - 0.5
        outline = StepPatch(goodput, edges, fill=True)
        outline.sticky_edges.y.append(0.0)  # the bars stand on the axis, as `stairs` draws them
        ax.add_artist(outline)
        ax.update_datalim([(edges[0], 0.0), (edges[-1], float(goodput.max()))])
        ax.autoscale_view()
        ax.set_xlim(-0.5, n - 0.5)
        ax.set_xlabel(f"flow (index, {n} flows)")
    ax.set_ylabel("goodput (Mbit/s)")
    ax.set_title("Goodput per flow (measured window)")
    ax.grid(axis="y", alpha=0.3)
    _save(fig, path)
    return True


def plot_control(traces: pd.DataFrame, names: list[str], path: Path) -> bool:
    """Per control loop: reference and output over time (top), the actuator's control as a
    staircase (bottom). False if there is nothing to draw."""
    if traces.empty:
        return False
    loops = sorted(traces["loop"].unique())
    fig = Figure(figsize=(9, 2.6 * len(loops) + 1.4), layout="constrained")
    axes = fig.subplots(
        2 * len(loops), 1, sharex=True, squeeze=False, gridspec_kw={"height_ratios": [2, 1] * len(loops)}
    )[:, 0]
    for n, loop in enumerate(loops):
        rows = traces[traces["loop"] == loop]
        name = names[loop] if loop < len(names) else str(loop)
        top, bottom = axes[2 * n], axes[2 * n + 1]
        top.step(
            rows["time_s"],
            rows["reference"],
            where="post",
            color="grey",
            linestyle="--",
            linewidth=0.9,
            label="reference r",
        )
        top.plot(rows["time_s"], rows["output"], linewidth=0.9, label="output y")
        top.set_ylabel("r, y")
        top.set_title(f"Control loop {_plain(name)}")
        top.legend(loc="upper right", fontsize="small")
        top.grid(alpha=0.3)
        bottom.step(rows["time_s"], rows["control"], where="post", linewidth=0.8, color="tab:red")
        bottom.set_ylabel("u")
        bottom.grid(alpha=0.3)
    axes[-1].set_xlabel("time (s)")
    _save(fig, path)
    return True
