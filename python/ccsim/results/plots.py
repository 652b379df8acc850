"""PNG plots of a run: queue length and cwnd over time, goodput per flow against what tells the
flows apart (their path's RTT, their group), with the fair share.

Uses matplotlib's object API with the Agg canvas directly, so it never touches a display or
the global pyplot state (runs are often made on headless machines and in parallel).
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import StepPatch

from ..errors import one_line

__all__ = [
    "plot_series",
    "plot_goodput",
    "goodput_figure",
    "plot_control",
    "series_columns",
    "queue_limits",
    "rtt_of_group",
    "steady_top",
    "mark_warmup",
    "mark_off_scale",
    "flow_axis",
]

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


def _save(fig: Figure, path: Path, metadata: Mapping[str, str] | None = None) -> None:
    FigureCanvasAgg(fig)
    with warnings.catch_warnings():
        # A name in a script the font lacks (CJK in DejaVu Sans) is drawn as boxes; the warning
        # matplotlib prints for each would go to the user's terminal.
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .*missing from", category=UserWarning)
        fig.savefig(path, dpi=120, metadata=dict(metadata or {}))


# The y axis of a time series is scaled to what follows the warm-up (the measured window) when
# the start-up transient reaches beyond this factor of it: slow start's burst would otherwise
# flatten the steady state into a line along the axis.
TRANSIENT_FACTOR = 1.5
# Headroom above the 99.5th percentile of the measured window.
HEADROOM = 1.15


def steady_top(time_s: Any, values: list[Any], warmup_s: float) -> tuple[float | None, float]:
    """The top of a y axis that shows the measured window, and the highest value of the whole
    run. The top is ``HEADROOM`` x the largest 99.5th percentile after ``warmup_s`` over the
    series, or None (keep the axis as it is) when there is no warm-up, nothing after it, or the
    whole run stays within ``TRANSIENT_FACTOR`` x that top anyway."""
    t = np.asarray(time_s, dtype=float)
    peak = max((float(np.nanmax(v)) for v in map(np.asarray, values) if v.size and np.isfinite(v).any()), default=0.0)
    after = t >= warmup_s
    if warmup_s <= 0 or not after.any():
        return None, peak
    levels = [np.asarray(v, dtype=float)[after] for v in values]
    levels = [v[np.isfinite(v)] for v in levels]
    steady = max((float(np.percentile(v, 99.5)) for v in levels if v.size), default=0.0)
    if steady <= 0:
        return None, peak
    top = HEADROOM * steady
    return (top if peak > TRANSIENT_FACTOR * top else None), peak


def mark_warmup(ax: Any, warmup_s: float) -> None:
    """Shade the warm-up and label its end: nothing before it is measured."""
    ax.axvspan(0.0, warmup_s, color="0.92", zorder=0, label=f"warm-up (0-{warmup_s:g} s): not measured")
    ax.axvline(warmup_s, color="grey", linestyle="--", linewidth=0.8)
    ax.annotate(
        "measured from here",
        (warmup_s, 0.0),
        xycoords=("data", "axes fraction"),
        xytext=(3, 3),
        textcoords="offset points",
        ha="left",
        va="bottom",
        fontsize="small",
        color="dimgrey",
    )


def mark_off_scale(ax: Any, time_s: Any, values: list[Any], top: float, unit: str) -> None:
    """Say where the start-up transient leaves the axis and how high it went."""
    t = np.asarray(time_s, dtype=float)
    best, at = -math.inf, 0.0
    for v in values:
        v = np.asarray(v, dtype=float)
        if v.size and np.isfinite(v).any():
            i = int(np.nanargmax(v))
            if v[i] > best:
                best, at = float(v[i]), float(t[i])
    ax.annotate(
        f"start-up peak {best:.4g} {unit} (off scale)",
        (at, top),
        xytext=(12, -10),
        textcoords="offset points",
        fontsize="small",
        ha="left",
        va="top",
        arrowprops={"arrowstyle": "->", "color": "dimgrey", "lw": 0.8},
        color="dimgrey",
        bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none", "alpha": 0.85},
    )


def queue_limits(config: Mapping[str, Any]) -> dict[str, tuple[float, str]]:
    """Each queue's buffer limit in packets, by name (``A->B``), and as the scenario gives it:
    the queue's ``limit`` or its discipline's default. A limit in bytes is converted at 1500 B a
    packet (the traces count packets) and says so; a discipline without a limit is left out."""
    from ..scenario.registry import get_registry

    registry = get_registry()
    nodes = [node.get("name", str(i)) for i, node in enumerate(config.get("nodes") or [])]
    limits: dict[str, tuple[float, str]] = {}
    for link in config.get("links") or []:
        for direction, (a, b) in (("ab", (link.get("a"), link.get("b"))), ("ba", (link.get("b"), link.get("a")))):
            spec = link.get(direction) or {}
            queue = spec.get("queue") or {"kind": "droptail"}
            model = registry.find("queue", str(queue.get("kind")))
            param = model.param("limit") if model is not None else None
            value = (queue.get("params") or {}).get("limit", param.default if param is not None else None)
            if not isinstance(value, Mapping) or not isinstance(a, int) or not isinstance(b, int):
                continue
            if a >= len(nodes) or b >= len(nodes):
                continue
            name = f"{nodes[a]}->{nodes[b]}"
            if "packets" in value:
                limits[name] = (float(value["packets"]), f"{int(value['packets'])} packets")
            elif "bytes" in value:
                size = int(value["bytes"])
                limits[name] = (size / 1500.0, f"{size} B (about {size / 1500.0:.0f} packets of 1500 B)")
    return limits


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
    limits: Mapping[str, tuple[float, str]] | None = None,
    unit: str = "",
) -> bool:
    """One line per matching trace column against ``time_s``; False (nothing written) if none.

    ``labels`` renames series (by the part between prefix and suffix). The warm-up, before which
    nothing is measured, is shaded and its end labelled; when the start-up transient would
    flatten the measured window (``steady_top``), the y axis shows that window and says how high
    the transient went (in ``unit``). ``limits`` (series key -> value in the plotted unit,
    text), e.g. ``queue_limits``: a labelled horizontal line at each series' buffer limit, or,
    when it lies far above the plot, a legend entry saying so. The PNG's text fields give the
    warm-up (``ccsim:warmup_s``) and the limits (``ccsim:buffer_limits``).
    """
    columns = series_columns(traces, prefix, suffix)
    if not columns or "time_s" not in traces:
        return False
    fig = Figure(figsize=(8, 4.4), layout="constrained")
    ax = fig.subplots()
    values = [traces[column].to_numpy(dtype=float) * scale for column in columns]
    for column, v in zip(columns, values):
        key = _label(column, prefix, suffix)
        ax.plot(traces["time_s"], v, label=_plain((labels or {}).get(key, key)), linewidth=0.8)
    shown = len(columns) <= 12
    extra = []  # legend entries drawn whatever the number of series
    if warmup_s > 0:
        mark_warmup(ax, warmup_s)
    top, _ = steady_top(traces["time_s"], values, warmup_s)
    if top is not None:
        low = min((float(np.nanmin(v)) for v in values if v.size and np.isfinite(v).any()), default=0.0)
        ax.set_ylim(min(0.0, low) - 0.02 * top, top)
        mark_off_scale(ax, traces["time_s"], values, top, unit)
    ceiling = ax.get_ylim()[1]
    drawn_limits = []  # the PNG's text field ccsim:buffer_limits
    same: dict[tuple[float, str], list[str]] = {}  # queues with one limit share its line
    for column in columns:
        key = _label(column, prefix, suffix)
        if limits and key in limits:
            drawn_limits.append(f"{key}: {limits[key][1]}")
            same.setdefault(limits[key], []).append(key)
    for (value, text), keys in same.items():
        whose = f" ({', '.join(_plain(k) for k in keys)})" if len(columns) > 1 else ""
        if value <= TRANSIENT_FACTOR * ceiling:
            line = ax.axhline(
                value, color="black", linestyle=":", linewidth=1.0, label=f"buffer limit{whose}: {text}", gid="limit"
            )
            extra.append(line)
            ax.set_ylim(ax.get_ylim()[0], max(ax.get_ylim()[1], 1.05 * value))
        else:
            extra.append(ax.plot([], [], " ", label=f"buffer limit{whose}: {text} (above the plot)")[0])
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    handles, names = ax.get_legend_handles_labels()
    if not shown:
        keep = [i for i, h in enumerate(handles) if h in extra or names[i].startswith("warm-up")]
        handles, names = [handles[i] for i in keep], [names[i] for i in keep]
    if handles:
        fig.legend(handles, names, loc="outside lower center", ncol=min(4, len(handles)), fontsize="small")
    ax.grid(alpha=0.3)
    metadata = {"ccsim:warmup_s": f"{warmup_s:g}"}
    if drawn_limits:
        metadata["ccsim:buffer_limits"] = "; ".join(drawn_limits)
    _save(fig, path, metadata)
    return True


# Flows named under their bars at most; with more, the bars are numbered by the axis alone
# (thousands of tick labels would take a minute to lay out and a figure metres wide).
LABELLED_FLOWS = 40
# Width of the goodput figure: 0.4 in a flow while the flows are labelled, at most this.
MAX_WIDTH_IN = 18.0
# Dots of a goodput plot are named after their flows up to this many flows.
NAMED_DOTS = 12
# Flows on paths whose smallest RTT samples differ by this factor are told apart by RTT.
RTT_SPREAD = 1.2

# Group labels that carry the base RTT of the flows' path (`pairs = { rtts = ... }`: rtt10ms).
_RTT_GROUP = re.compile(r"rtt(\d+(?:\.\d+)?)(ns|us|µs|μs|ms|s)")
_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0}


def rtt_of_group(label: Any) -> float | None:
    """The base RTT (s) that a group label such as ``rtt10ms`` names, else None."""
    match = _RTT_GROUP.fullmatch(str(label)) if isinstance(label, str) else None
    return float(match.group(1)) * _SECONDS[match.group(2)] if match else None


def _groups(flows: pd.DataFrame) -> list[str] | None:
    """The flows' groups, when every flow has one."""
    if "group" not in flows:
        return None
    groups = list(flows["group"])
    return [str(g) for g in groups] if all(isinstance(g, str) and g for g in groups) else None


def flow_axis(flows: pd.DataFrame) -> tuple[str, Any, str, list[str]]:
    """What tells the flows apart, for a goodput plot: ``(kind, x, label, ticks)`` with kind
    ``base_rtt`` (every group names an RTT: x in ms), ``min_rtt`` (no such groups, but flows on
    several paths whose smallest RTT samples differ: x in ms), ``group`` (x the group's place in
    numeric order, ``ticks`` the groups) or ``flow`` (nothing does: x the flow's row)."""
    from ..experiments.compare.run import group_order

    groups = _groups(flows)
    if groups is not None:
        rtts = [rtt_of_group(g) for g in groups]
        if all(r is not None for r in rtts) and len(set(rtts)) > 1:
            return "base_rtt", np.array([float(r or 0.0) * 1e3 for r in rtts]), "base RTT of the flow's path (ms)", []
    if {"rtt_min_s", "src", "dst"} <= set(flows.columns) and len(flows):
        rtt = pd.to_numeric(flows["rtt_min_s"], errors="coerce")
        if rtt.notna().all():
            per_path = rtt.groupby([flows["src"], flows["dst"]]).min()
            if len(per_path) > 1 and float(per_path.min()) > 0 and per_path.max() >= RTT_SPREAD * per_path.min():
                label = "smallest RTT sample of the flow (ms): its path's RTT plus the least queueing"
                return "min_rtt", rtt.to_numpy(dtype=float) * 1e3, label, []
    if groups is not None and len(set(groups)) > 1:
        ticks = sorted(set(groups), key=group_order)
        place = {g: i for i, g in enumerate(ticks)}
        return "group", np.array([place[g] for g in groups], dtype=float), "flow group", ticks
    return "flow", np.arange(len(flows), dtype=float), "flow", []


def goodput_figure(flows: pd.DataFrame) -> tuple[Figure, dict[str, str]] | None:
    """Goodput of each flow (Mbit/s) against what tells the flows apart (``flow_axis``): a dot a
    flow and the mean at each RTT or group, or, when nothing does, a bar a flow (named under it up
    to ``LABELLED_FLOWS`` flows, numbered by index beyond). The fair share, the total goodput
    split equally among the ``[[flows]]`` flows (the reference of Jain's index; a control loop's
    messages are drawn but take no part), is a dashed line (gid ``fair-share``). Also the PNG's
    text fields: what x is and the fair share in bit/s. None if there are no flows."""
    from .metrics import jain

    if flows.empty:
        return None
    n = len(flows)
    goodput = flows["goodput_bps"].to_numpy(dtype=float) / 1e6
    # The share of the [[flows]] flows: a control loop's messages (app "ncs") take what they
    # need and are no party to the split.
    sharing = (flows["app"] != "ncs").to_numpy() if "app" in flows else np.ones(n, dtype=bool)
    if not sharing.any():
        sharing = np.ones(n, dtype=bool)
    parties = int(sharing.sum())
    share = float(np.nansum(goodput[sharing])) / parties
    kind, x, xlabel, ticks = flow_axis(flows)
    bars = kind == "flow"
    # At least 6.4 in wide: the title and the legend of the fair share need it.
    width = min(max(6.4, 0.4 * n + 2), MAX_WIDTH_IN) if bars and n <= LABELLED_FLOWS else 8.0
    fig = Figure(figsize=(width if bars else 8.0, 4), layout="constrained")
    ax = fig.subplots()
    if bars and n <= LABELLED_FLOWS:
        ax.bar(range(n), goodput, label="a flow")
        labels = [_plain(name) for name in flows["name"]] if "name" in flows else [str(i) for i in flows["id"]]
        # Upright up to 12 short names, slanted when they are long, vertical beyond 12.
        slanted = n <= 12 and n > 3 and max(map(len, labels)) > 8
        rotation = 90 if n > 12 else 30 if slanted else 0
        ax.set_xticks(range(n), labels, rotation=rotation, ha="right" if slanted else "center")
    elif bars:
        # One filled outline for all the bars: a bar each is an artist each. Added as an artist
        # with its extent given, since `stairs` (`add_patch`) walks the outline's vertices in
        # Python to find it: 0.2 s at 9 000 flows.
        edges = np.arange(n + 1) - 0.5
        outline = StepPatch(goodput, edges, fill=True, label="a flow")
        outline.sticky_edges.y.append(0.0)  # the bars stand on the axis, as `stairs` draws them
        ax.add_artist(outline)
        ax.update_datalim([(edges[0], 0.0), (edges[-1], float(np.nanmax(goodput)))])
        ax.autoscale_view()
        ax.set_xlim(-0.5, n - 0.5)
        xlabel = f"flow (index, {n} flows)"
    else:
        few = n <= NAMED_DOTS and len(set(x.tolist())) == n
        ax.scatter(x, goodput, s=30 if few else 16, alpha=0.7, color="tab:blue", linewidths=0, label="a flow")
        if few:  # a dot each: named after its flow
            names = flows["name"] if "name" in flows else flows.get("id", pd.Series(range(n)))
            for xi, yi, name in zip(x, goodput, names):
                ax.annotate(
                    f"flow {_plain(name)}", (xi, yi), xytext=(5, 3), textcoords="offset points", fontsize="small"
                )
            ax.margins(x=0.1)  # room for the last name inside the axes
        at = pd.Series(goodput).groupby(x).mean()
        if len(at) < n:
            mean = "mean at each RTT" if kind == "base_rtt" else "mean of each group"
            ax.plot(at.index, at.to_numpy(), "-o", color="tab:blue", ms=4, lw=1.2, label=mean)
        if ticks:
            ax.set_xticks(range(len(ticks)), [_plain(t) for t in ticks], rotation=45 if len(ticks) > 8 else 0)
        ax.set_ylim(bottom=0.0)
    ax.axhline(
        share,
        color="black",
        linestyle="--",
        linewidth=1.0,
        gid="fair-share",
        label=f"fair share: total goodput / {parties} flows = {share:.3g} Mbit/s",
    )
    ax.set_xlabel(xlabel)
    ax.set_ylabel("goodput (Mbit/s)")
    index = jain(goodput[sharing])
    against = {"base_rtt": " against RTT", "min_rtt": " against RTT", "group": " by group"}.get(kind, "")
    fairness = "" if math.isnan(index) else f"; Jain's index {index:.3f}"
    ax.set_title(f"Goodput per flow{against} (measured window{fairness})")
    ax.grid(axis="y", alpha=0.3)
    fig.legend(loc="outside lower center", ncol=3 if width >= 8.0 else 2, fontsize="small")
    metadata = {"ccsim:x": kind, "ccsim:fair_share_bps": f"{share * 1e6:.6g}"}
    return fig, metadata


def plot_goodput(flows: pd.DataFrame, path: Path) -> bool:
    """``goodput_figure`` as a PNG, what x is and the fair share in its text fields
    (``ccsim:x``, ``ccsim:fair_share_bps``); False if there are no flows."""
    drawn = goodput_figure(flows)
    if drawn is None:
        return False
    fig, metadata = drawn
    _save(fig, path, metadata)
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
