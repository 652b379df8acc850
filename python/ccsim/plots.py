"""PNG plots of a run: queue length and cwnd over time, goodput per flow.

Uses matplotlib's object API with the Agg canvas directly, so it never touches a display or
the global pyplot state (runs are often made on headless machines and in parallel).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

__all__ = ["plot_series", "plot_goodput", "series_columns"]

# Trace column names are set by the engine: `queue.<from>-><to>.len_pkts`, `flow.<id>.cwnd_bytes`.
QUEUE_LENGTH_SUFFIX = ".len_pkts"
CWND_SUFFIX = ".cwnd_bytes"


def series_columns(traces: pd.DataFrame, prefix: str, suffix: str) -> list[str]:
    """Trace columns such as ``queue.A->B.len_pkts`` for (``queue.``, ``.len_pkts``)."""
    return [c for c in traces.columns if c.startswith(prefix) and c.endswith(suffix)]


def _label(column: str, prefix: str, suffix: str) -> str:
    return column[len(prefix) : len(column) - len(suffix)]


def _save(fig: Figure, path: Path) -> None:
    FigureCanvasAgg(fig)
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
        ax.plot(traces["time_s"], traces[column] * scale, label=(labels or {}).get(key, key), linewidth=0.8)
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


def plot_goodput(flows: pd.DataFrame, path: Path) -> bool:
    """Goodput of each flow (Mbit/s) as bars; False if there are no flows."""
    if flows.empty:
        return False
    fig = Figure(figsize=(max(4.0, 0.4 * len(flows) + 2), 4), layout="constrained")
    ax = fig.subplots()
    labels = [str(name) for name in flows["name"]] if "name" in flows else [str(i) for i in flows["id"]]
    ax.bar(range(len(flows)), flows["goodput_bps"] / 1e6)
    ax.set_xticks(range(len(flows)), labels, rotation=90 if len(flows) > 12 else 0)
    ax.set_xlabel("flow")
    ax.set_ylabel("goodput (Mbit/s)")
    ax.set_title("Goodput per flow (measured window)")
    ax.grid(axis="y", alpha=0.3)
    _save(fig, path)
    return True
