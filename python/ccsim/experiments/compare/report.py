"""The output of ``ccsim compare``: the ranking as a terminal table, and ``write_report``'s files:
``report.html`` (rendered from ``report.html.j2`` with autoescape; figures inline as base64 PNG),
the tables as CSV and Parquet, and ``compare.json``."""

from __future__ import annotations

import base64
import io
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from scipy.stats import t as stats_t

from .analysis import Comparison, pd_isna, verdict_lines
from .objective import format_value, metric_of
from .run import compare_command, rerun_command


@dataclass(frozen=True)
class _Shown:
    """How the terminal table shows a metric: a header saying what it is and its unit, on
    narrow lines, and the factor from the metric's value (SI, ratios in 0..1) to that unit."""

    header: str
    factor: float
    digits: int | None  # decimals; None: 4 significant digits


_SHOWN: dict[str, _Shown] = {
    "utilization": _Shown("link\nutilized\n%", 100.0, 1),
    "goodput": _Shown("goodput\nall flows\nMbit/s", 1e-6, 2),
    "jain": _Shown("Jain's\nindex\n(0-1)", 1.0, 3),
    "jain_groups": _Shown("Jain's\nindex in\ngroups\n(0-1)", 1.0, 3),
    "mean_delay": _Shown("mean\nqueueing\ndelay ms\none-way", 1e3, 2),
    "p99_delay": _Shown("p99\nqueueing\ndelay ms\none-way", 1e3, 2),
    "drop_ratio": _Shown("packets\ndropped\n%", 100.0, 2),
    "retransmissions": _Shown("retrans-\nmitted\nsegments", 1.0, 0),
    "itae": _Shown("ITAE\n(control\nloops)", 1.0, None),
    "p99_fct_short": _Shown("p99 FCT\nflows to\n100 kB ms", 1e3, 1),
    "mean_slowdown": _Shown("mean\nslowdown\n(>= 1)", 1.0, 2),
}
# Which metrics a narrow terminal keeps, after those of the objective.
_KEPT_FIRST = (
    "jain",
    "p99_delay",
    "p99_fct_short",
    "utilization",
    "mean_delay",
    "mean_slowdown",
    "jain_groups",
    "drop_ratio",
    "retransmissions",
    "itae",
)
# The terminal table needs at least this many metric columns; narrower, one block per combination.
_MIN_TABLE_METRICS = 2


def print_table(cmp: Comparison, console: Any) -> None:
    """The ranking in the console's width: every metric with its 95 % interval when that fits
    (about 150 columns, all metrics of any objective within 200); else means only; else, keeping
    the objective's metrics first, as many columns as fit, the others named below it; narrower
    than a table of two metrics, one block of lines per combination."""
    from rich.text import Text

    shown = _terminal_metrics(cmp)
    console.print(Text(f"{Path(cmp.spec.file).name}: ranked by {cmp.objective.describe()}", style="bold"))
    full = _ranking_table(cmp, shown, with_ci=True)
    full_width = _width(console, full)
    layouts = [(shown, True, full)] + [(shown[:n], False, None) for n in range(len(shown), _MIN_TABLE_METRICS - 1, -1)]
    for metrics, with_ci, table in layouts:
        kept = [m for m in shown if m in metrics]  # the table's order, not the priority's
        table = table or _ranking_table(cmp, kept, with_ci)
        if _width(console, table) <= console.width:
            console.print(table)
            for line in _notes(cmp, kept, shown, with_ci, full_width):
                console.print(Text(line))
            return
    _print_blocks(cmp, shown, console)


def _terminal_metrics(cmp: Comparison) -> list[str]:
    """The metrics the terminal shows, in the order they are kept when columns must go: the
    objective's (by weight), its constraints', then ``_KEPT_FIRST``. Goodput only when the
    objective names it; Jain's index per group is left to the report and the CSV."""
    named = sorted(cmp.objective.weights, key=lambda m: -cmp.objective.weights[m])
    named += [c.metric for c in cmp.objective.constraints]
    order = [m for m in dict.fromkeys([*named, *_KEPT_FIRST]) if m in _SHOWN and m in cmp.metrics]
    return order


def _width(console: Any, table: Any) -> int:
    """The columns ``table`` takes without wrapping a cell (the console's own width aside)."""
    return int(console.measure(table, options=console.options.update(max_width=100_000)).maximum)


def _ranking_table(cmp: Comparison, chosen: list[str], with_ci: bool) -> Any:
    """The ranking with the ``chosen`` metrics (in ``_SHOWN``'s order), with intervals or not."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    metrics = [m for m in _SHOWN if m in chosen]
    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold")
    t.add_column("rank", justify="right")
    t.add_column("tier", justify="right")
    t.add_column("cc+queue", justify="left")
    t.add_column("score", justify="right")
    for m in metrics:
        t.add_column(_SHOWN[m].header, justify="right")
    for _, row in cmp.table.iterrows():
        tier = str(int(row["tier"])) if row["tier"] is not None and not pd_isna(row["tier"]) else "-"
        score = _pm(row, "score", raw=True) if with_ci else _number_of(row.get("score_mean"), None, 3)
        cells = [str(row["rank"]), tier, f"{row['cc']}+{row['queue']}", score]
        cells += [_shown_cell(row, m, with_ci) for m in metrics]
        t.add_row(*[Text(c) for c in cells], style=None if row["feasible"] else "dim")
    return t


def _number_of(value: Any, shown: _Shown | None, digits: int | None) -> str:
    if value is None or pd_isna(value):
        return "-"
    value = float(value) * (shown.factor if shown else 1.0)
    return f"{value:.4g}" if digits is None else f"{value:.{digits}f}"


def _shown_parts(row: Any, metric: str) -> tuple[str, str]:
    """A metric's mean in the unit of its header, and its interval: ``± half``, or ``[low,
    high]`` where the metric's range clips it; empty without one."""
    shown = _SHOWN[metric]
    mean = row.get(f"{metric}_mean")
    text = _number_of(mean, shown, shown.digits)
    half = row.get(f"{metric}_ci95")
    if text == "-" or half is None or pd_isna(half):
        return text, ""
    lo, hi = row.get(f"{metric}_ci95_lo"), row.get(f"{metric}_ci95_hi")
    if lo is not None and hi is not None and not pd_isna(lo) and (lo > mean - half or hi < mean + half):
        return text, f"[{_number_of(lo, shown, shown.digits)}, {_number_of(hi, shown, shown.digits)}]"
    return text, f"± {_number_of(half, shown, shown.digits)}"


def _shown_cell(row: Any, metric: str, with_ci: bool) -> str:
    """A metric's cell in the unit of its header: the mean, with its interval when asked."""
    text, interval = _shown_parts(row, metric)
    return f"{text} {interval}" if with_ci and interval else text


def _notes(cmp: Comparison, kept: list[str], shown: list[str], with_ci: bool, full_width: int) -> list[str]:
    """What the table's values are, what it leaves out, and where to find that."""
    seeds = f"{cmp.spec.seeds} seed{'s' if cmp.spec.seeds != 1 else ''}"
    if cmp.spec.seeds < 2:
        values = "One seed: its values, without intervals."
    elif with_ci:
        values = f"Mean ± 95 % interval over {seeds} ([low, high]: clipped to the metric's range)."
    else:
        values = (
            f"Mean over {seeds}; the 95 % intervals are in comparison.csv, report.html, and this table "
            f"at {full_width} columns (COLUMNS={full_width})."
        )
    lines = [
        f"{values} Tier: combinations that the seeds cannot separate share one. Score: the objective, higher is better."
    ]
    queue = cmp.spec.bottleneck
    meanings = {
        "utilization": f"Link utilized: the share of the bottleneck {queue}'s rate that was used.",
        "jain": "Jain's index of the flows' goodputs: 1 when all are equal.",
        "mean_delay": f"Queueing delay: the time a packet waits in the bottleneck queue {queue}, one way (not an RTT).",
        "drop_ratio": "Packets dropped: the share of the packets arriving at that queue that it drops.",
    }
    explained = {*kept, "mean_delay"} if "p99_delay" in kept else set(kept)
    lines += [text for metric, text in meanings.items() if metric in explained]
    left = [metric_of(m).title for m in shown if m not in kept]
    groups = cmp.spec.groups
    if groups:
        names = ", ".join(groups) if len(groups) <= 4 else f"{groups[0]} .. {groups[-1]}"
        left.append(f"Jain's index in each of the {len(groups)} flow groups ({names})")
    if left:
        lines.append(f"Not shown here: {'; '.join(left)}: see comparison.csv and report.html.")
    return lines


def _print_blocks(cmp: Comparison, shown: list[str], console: Any) -> None:
    """One block per combination, a line per metric: for terminals too narrow for a table."""
    from rich.text import Text

    for _, row in cmp.table.iterrows():
        tier = str(int(row["tier"])) if row["tier"] is not None and not pd_isna(row["tier"]) else "-"
        style = "" if row["feasible"] else "dim"
        head = f"{row['rank']}. {row['cc']}+{row['queue']} (tier {tier}): score {_pm(row, 'score', raw=True)}"
        console.print(Text(head, style=style))
        for m in [m for m in _SHOWN if m in shown]:
            console.print(Text(f"   {metric_of(m).title}: {_pm(row, m)}", style=style))
    console.print(Text(f"Mean ± 95 % interval over {cmp.spec.seeds} seeds; queueing delays are one way (not RTTs)."))


def _pm(row: Any, metric: str, raw: bool = False) -> str:
    mean, half = row.get(f"{metric}_mean"), row.get(f"{metric}_ci95")
    if mean is None or pd_isna(mean):
        return "-"
    if raw:
        text = f"{mean:.3f}"
        return text if pd_isna(half) else f"{text} ± {half:.3f}"
    text = format_value(metric, mean)
    if pd_isna(half):
        return text

    def number(value: float) -> str:
        return format_value(metric, value).split(" ")[0]

    lo, hi = row.get(f"{metric}_ci95_lo"), row.get(f"{metric}_ci95_hi")
    if lo is not None and hi is not None and not pd_isna(lo) and (lo > mean - half or hi < mean + half):
        # Clipped to the metric's range: no longer mean ± half.
        return f"{text} [{number(lo)}, {number(hi)}]"
    return f"{text} ± {number(half)}"


# Figures are drawn at this resolution and font size: at 9.5 in wide, 950 pixels, which a page
# 800 pixels wide shrinks by a fifth at most, and whose text stays readable.
_DPI = 100
_FONT = {"font.size": 9, "axes.titlesize": 10, "legend.fontsize": 8}
# Combinations drawn in the figures of goodput and delay: the first ones by rank.
DRAWN = 6
_COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")


def _png(fig: Any, tight: bool = True) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=_DPI, bbox_inches="tight" if tight else None)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def pareto_front(points: list[tuple[float, float]], maximize_x: bool, maximize_y: bool) -> list[int]:
    """Indices of the points no other point dominates (at least as good in both, better in one)."""
    front = []
    for i, (x, y) in enumerate(points):
        dominated = False
        for j, (u, v) in enumerate(points):
            if i == j:
                continue
            bx = u >= x if maximize_x else u <= x
            by = v >= y if maximize_y else v <= y
            sx = u > x if maximize_x else u < x
            sy = v > y if maximize_y else v < y
            if bx and by and (sx or sy):
                dominated = True
                break
        if not dominated:
            front.append(i)
    return front


def _seeds_text(cmp: Comparison) -> str:
    n = cmp.spec.seeds
    return f"{n} seed{'s' if n != 1 else ''}"


def _interval_note(cmp: Comparison) -> str:
    """What an error bar or band is."""
    if cmp.spec.seeds < 2:
        return "one seed: no interval"
    return f"bars: 95 % interval of the mean over {_seeds_text(cmp)} (Student t)"


def _span(
    values: list[float], lows: list[float], highs: list[float], pad: float, floor: float | None, cap: float | None
) -> tuple[float, float]:
    """Axis limits around the points and their intervals, with a margin; never below ``floor``
    and at most a small margin above ``cap`` (a utilization of 100 %, Jain's index of 1). When
    the intervals reach more than twice as far as the points spread (two seeds: t = 12.7), the
    axis follows the points and the bars run off it, so that the points do not crowd a corner."""
    lo, hi = min(values), max(values)
    if hi > lo and max(highs) - min(lows) > 2.0 * (hi - lo):
        margin = 0.12 * (hi - lo)
    else:
        lo, hi = min(lows), max(highs)
        margin = 0.08 * (hi - lo)
    margin = max(margin, pad)
    a, b = lo - margin, hi + margin
    if floor is not None:
        a = max(a, floor - 0.3 * margin)
    if cap is not None and hi <= cap:
        b = min(b, cap + 0.3 * margin)
    return a, b


# A delay axis turns logarithmic when its values span more than this factor.
LOG_SPAN = 20.0
# Fewest seeds for a band of 95 % intervals around a line: over two, t(0.975, 1) = 12.7
# standard errors each way buries every line under the bands.
BAND_SEEDS = 3


def _plain_log(axis: Any) -> None:
    """A logarithmic axis labelled 1, 2, 5, 10, 20, ... (ms), not in powers of ten."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis.set_major_locator(LogLocator(base=10.0, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def _hide_ticks_beyond(ax: Any, axis: str, cap: float) -> None:
    """No tick labels past ``cap`` (101 % utilization, a Jain's index of 1.02 mean nothing)."""
    from matplotlib.ticker import FixedLocator, MaxNLocator

    lim = ax.get_xlim() if axis == "x" else ax.get_ylim()
    ticks = [t for t in MaxNLocator(nbins=6).tick_values(*lim) if lim[0] <= t <= cap + 1e-9]
    (ax.xaxis if axis == "x" else ax.yaxis).set_major_locator(FixedLocator(ticks))


def place_labels(
    ax: Any, points: list[tuple[float, float]], texts: list[str], obstacles: list[Any], fontsize: float = 8
) -> list[Any]:
    """Put each text near its point (data coordinates) where it overlaps no other label, no
    obstacle (display-space boxes: markers, error bars) and stays inside the axes: the first
    free spot of eight directions at growing distances, with a leader line when it is not next
    to its point. The axes' limits and position must be final. Returns the annotations, None for
    a text with no free spot (left out)."""
    from matplotlib.transforms import Bbox

    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer).padded(-2)
    scale = fig.dpi / 72.0  # display pixels per point
    taken: list[Any] = []
    leaders: list[tuple[float, float]] = []  # points along the leader lines drawn so far
    placed: list[Any] = []
    directions = [(1, 1), (1, -1), (-1, 1), (-1, -1), (1, 0), (-1, 0), (0, 1), (0, -1)]

    def along(x0: float, y0: float, box: Any) -> list[tuple[float, float]]:
        """Points of the leader line from (x0, y0) to the box's nearest corner region."""
        x1 = min(max(x0, box.x0), box.x1)
        y1 = min(max(y0, box.y0), box.y1)
        return [(x0 + (x1 - x0) * k / 12.0, y0 + (y1 - y0) * k / 12.0) for k in range(2, 12)]

    for (x, y), text in zip(points, texts):
        # The text's size once; each spot's box follows from it.
        probe = ax.annotate(text, (x, y), fontsize=fontsize)
        size = probe.get_window_extent(renderer)
        probe.remove()
        w, h = size.width, size.height
        px, py = ax.transData.transform((x, y))
        found = None
        for distance in (4, 10, 18, 30, 44, 60):
            for dx, dy in directions:
                cx, cy = px + dx * distance * scale, py + dy * distance * scale
                x0 = cx if dx > 0 else cx - w if dx < 0 else cx - w / 2
                y0 = cy if dy > 0 else cy - h if dy < 0 else cy - h / 2
                box = Bbox.from_bounds(x0, y0, w, h)
                if (
                    frame.x0 <= box.x0
                    and box.x1 <= frame.x1
                    and frame.y0 <= box.y0
                    and box.y1 <= frame.y1
                    and not any(box.overlaps(other) for other in taken)
                    and not any(box.overlaps(other) for other in obstacles)
                    and not any(box.contains(u, v) for u, v in leaders)
                    and (
                        distance <= 10
                        or not any(other.contains(u, v) for other in taken for u, v in along(px, py, box))
                    )
                ):
                    found = (dx, dy, distance, box)
                    break
            if found:
                break
        if found is None:
            placed.append(None)
            continue
        dx, dy, distance, box = found
        leader = {"arrowstyle": "-", "color": "grey", "lw": 0.6} if distance > 10 else None
        placed.append(
            ax.annotate(
                text,
                (x, y),
                xytext=(dx * distance, dy * distance),
                textcoords="offset points",
                ha="left" if dx > 0 else "right" if dx < 0 else "center",
                va="bottom" if dy > 0 else "top" if dy < 0 else "center",
                fontsize=fontsize,
                arrowprops=leader,
            )
        )
        taken.append(box.padded(2))
        if leader:
            leaders.extend(along(px, py, box))
    return placed


def _within(frame: Any, u: float, v: float) -> tuple[float, float]:
    """A display point moved into ``frame`` (a NaN to its lower left corner)."""
    u = frame.x0 if math.isnan(u) else min(max(u, frame.x0), frame.x1)
    v = frame.y0 if math.isnan(v) else min(max(v, frame.y0), frame.y1)
    return u, v


def pareto_figure(cmp: Comparison) -> Any:
    """Two panels, p99 queueing delay and Jain's index against utilization, one point per
    combination with its 95 % intervals, the Pareto front in red; labels placed apart from the
    points, the bars and each other, inside the axes (by rank number when the names do not fit)."""
    plt = _pyplot()
    from matplotlib.lines import Line2D
    from matplotlib.transforms import Bbox

    t = cmp.table
    with plt.rc_context(_FONT):
        fig, axes = plt.subplots(1, 2, figsize=(9.5, 4.4))
        fig.subplots_adjust(left=0.08, right=0.98, top=0.92, bottom=0.25, wspace=0.28)
        panels = [
            ("p99_delay", 1e3, "p99 queueing delay, one way (ms)", False, 0.0, None),
            ("jain", 1.0, "Jain's index of the flows' goodput (0-1)", True, 0.0, 1.0),
        ]
        omitted = 0
        numbered = False
        for ax, (metric, scale, label, more_better, floor, cap) in zip(axes, panels):
            xs = [float(v) * 100 for v in t["utilization_mean"]]
            ys = [float(v) * scale for v in t[f"{metric}_mean"]]
            ok = [i for i in range(len(xs)) if not (math.isnan(xs[i]) or math.isnan(ys[i]))]
            front = set(ok[k] for k in pareto_front([(xs[i], ys[i]) for i in ok], True, more_better))

            def err(name: str, i: int, value: float, factor: float) -> tuple[float, float]:
                # The interval as computed, within the metric's range (none with one seed).
                lo, hi = t.loc[i, f"{name}_ci95_lo"], t.loc[i, f"{name}_ci95_hi"]
                if pd_isna(lo) or pd_isna(hi):
                    return 0.0, 0.0
                return max(0.0, value - lo * factor), max(0.0, hi * factor - value)

            bars = {i: (err("utilization", i, xs[i], 100.0), err(metric, i, ys[i], scale)) for i in ok}
            for i in ok:
                (xl, xh), (yl, yh) = bars[i]
                on = i in front
                ax.errorbar(
                    xs[i],
                    ys[i],
                    xerr=[[xl], [xh]],
                    yerr=[[yl], [yh]],
                    fmt="o",
                    ms=7 if on else 5,
                    color="tab:red" if on else "tab:gray",
                    alpha=0.9,
                    capsize=2,
                    zorder=3 if on else 2,
                )
            line = sorted(front, key=lambda i: xs[i])
            if len(line) > 1:
                ax.plot([xs[i] for i in line], [ys[i] for i in line], "-", color="tab:red", lw=1, alpha=0.6)
            if ok:
                x_low = [xs[i] - bars[i][0][0] for i in ok]
                x_high = [xs[i] + bars[i][0][1] for i in ok]
                ax.set_xlim(*_span([xs[i] for i in ok], x_low, x_high, 0.5, None, 100.0))
                _hide_ticks_beyond(ax, "x", 100.0)
                values = [ys[i] for i in ok]
                if metric == "p99_delay" and min(values) > 0 and max(values) > LOG_SPAN * min(values):
                    ax.set_yscale("log")
                    ax.set_ylim(min(values) / 1.5, max(values) * 1.5)
                    _plain_log(ax.yaxis)
                    label += ", log scale"
                else:
                    y_low = [ys[i] - bars[i][1][0] for i in ok]
                    y_high = [ys[i] + bars[i][1][1] for i in ok]
                    ax.set_ylim(*_span(values, y_low, y_high, 0.02 if metric == "jain" else 1.0, floor, cap))
                    if cap is not None:
                        _hide_ticks_beyond(ax, "y", cap)
            better = "lower" if not more_better else "higher"
            ax.set_xlabel("bottleneck utilization (%), higher is better")
            ax.set_ylabel(f"{label},\n{better} is better")
            ax.set_title(f"{'p99 queueing delay' if metric == 'p99_delay' else 'Jain index'} vs utilization")
            ax.grid(alpha=0.3)
            # The labels, once the axes are final: around the points, off the bars (their ends
            # held within the frame: a bar to 0 on a log axis ends at minus infinity).
            frame = ax.get_window_extent(fig.canvas.get_renderer())
            obstacles = []
            for i in ok:
                px, py = ax.transData.transform((xs[i], ys[i]))
                obstacles.append(Bbox.from_extents(px - 5, py - 5, px + 5, py + 5))
                (xl, xh), (yl, yh) = bars[i]
                ends = ax.transData.transform([(xs[i] - xl, ys[i] - yl), (xs[i] + xh, ys[i] + yh)])
                (ax0, ay0), (ax1, ay1) = (_within(frame, u, v) for u, v in ends)
                obstacles.append(Bbox.from_extents(px - 2, ay0, px + 2, ay1))
                obstacles.append(Bbox.from_extents(ax0, py - 2, ax1, py + 2))
            order = sorted(ok, key=lambda i: (i not in front, i))
            names = [f"{t.loc[i, 'cc']}+{t.loc[i, 'queue']}" for i in order]
            placed = place_labels(ax, [(xs[i], ys[i]) for i in order], names, obstacles)
            if any(a is None for a in placed):
                for a in placed:
                    if a is not None:
                        a.remove()
                placed = place_labels(
                    ax, [(xs[i], ys[i]) for i in order], [str(t.loc[i, "rank"]) for i in order], obstacles
                )
                numbered = True
            omitted += sum(a is None for a in placed)
        handles = [
            Line2D([], [], marker="o", ms=7, color="tab:red", lw=1, alpha=0.9),
            Line2D([], [], marker="o", ms=5, color="tab:gray", lw=0, alpha=0.9),
        ]
        labels = ["on the Pareto front (no other is better in both)", "dominated"]
        notes = [_interval_note(cmp)]
        if numbered:
            notes.append("numbers: rank in the table")
        if omitted:
            notes.append(f"{omitted} label{'s' if omitted != 1 else ''} left out where points crowd")
        fig.legend(
            handles,
            labels,
            loc="lower center",
            bbox_to_anchor=(0.5, 0.0),
            ncol=2,
            frameon=False,
            title="; ".join(notes),
        )
    return fig


def _run_dirs(cmp: Comparison, out: Path, combos: list[tuple[str, str]]) -> list[tuple[str, str, int, int, Path]]:
    """(cc, queue, seed number from 1, seed, run directory) of every run of ``combos``."""
    runs = cmp.runs
    rows = []
    for cc, queue in combos:
        sel = runs[(runs["cc"] == cc) & (runs["queue"] == queue)].sort_values("replicate")
        for _, r in sel.iterrows():
            rows.append((cc, queue, int(r["replicate"]) + 1, int(r["seed"]), out / r["run_dir"]))
    return rows


def _drawn(cmp: Comparison, top: int = DRAWN) -> list[tuple[str, str]]:
    """The combinations the figures draw: the first ``top`` by rank (feasible ones first)."""
    return [(r["cc"], r["queue"]) for _, r in cmp.table.head(top).iterrows()]


# The columns of flows.parquet that the report reads.
_FLOW_COLUMNS = ("id", "name", "group", "src", "dst", "app", "goodput_bps", "rtt_min_s")


def run_flows(cmp: Comparison, out: Path) -> Any:
    """The ``[[flows]]`` flows of every run (control loops' messages left out), one row per flow
    and run: cc, queue, seed_no (from 1), group, goodput_bps, and x, xkind, xlabel and ticks,
    what tells the flows apart (``plots.flow_axis``); None without any."""
    import pandas as pd

    from ...results.plots import flow_axis

    frames = []
    combos = [(r["cc"], r["queue"]) for _, r in cmp.table.iterrows()]
    for cc, queue, number, _, run_dir in _run_dirs(cmp, out, combos):
        path = run_dir / "flows.parquet"
        if not path.exists():
            continue
        flows = pd.read_parquet(path)
        flows = flows[[c for c in _FLOW_COLUMNS if c in flows.columns]]
        if "app" in flows:
            flows = flows[flows["app"] != "ncs"].reset_index(drop=True)
        if flows.empty:
            continue
        kind, x, xlabel, ticks = flow_axis(flows)
        group = flows["group"] if "group" in flows else pd.Series([None] * len(flows))
        frames.append(
            pd.DataFrame(
                {
                    "cc": cc,
                    "queue": queue,
                    "seed_no": number,
                    "group": group.to_numpy(dtype=object),
                    "goodput_bps": flows["goodput_bps"].to_numpy(dtype=float),
                    "x": x,
                    "xkind": kind,
                    "xlabel": xlabel,
                    "ticks": [tuple(ticks)] * len(flows),
                }
            )
        )
    return pd.concat(frames, ignore_index=True) if frames else None


def rtt_fairness_figure(cmp: Comparison, out: Path, flows: Any = None) -> Any:
    """Goodput per flow against what tells the flows apart (the base RTT of their path, their
    group, their smallest RTT sample) for the first ``DRAWN`` combinations: a dot per flow and
    seed, the mean over seeds of each RTT's or group's mean flow with its 95 % band, and the fair
    share (the total goodput split equally, gid ``fair-share``). ``flows``: ``run_flows``'s
    table, read here when not given. None without flows."""
    plt = _pyplot()
    import numpy as np
    from matplotlib.lines import Line2D

    from ..smc.statistics import mean_ci

    combos = _drawn(cmp)
    flows = run_flows(cmp, out) if flows is None else flows
    if flows is None:
        return None
    drawn = set(combos)
    flows = flows[[key in drawn for key in zip(flows["cc"], flows["queue"])]].copy()
    if flows.empty:
        return None
    kinds = set(flows["xkind"])
    kind = kinds.pop() if len(kinds) == 1 else "flow"
    if kind == "flow":
        flows["x"] = flows.groupby(["cc", "queue", "seed_no"]).cumcount().astype(float)
    ticks = list(flows["ticks"].iloc[0]) if kind == "group" else []
    xlabel = str(flows["xlabel"].iloc[0]) if kind != "flow" else "flow (row in flows.parquet)"
    span = float(flows["x"].max() - flows["x"].min()) or 1.0
    with plt.rc_context(_FONT):
        fig, ax = plt.subplots(figsize=(9.5, 4.8), layout="constrained")
        shares: list[float] = []
        drawn_labels: list[str] = []
        drawn_colors: list[str] = []
        band_alpha = 0.15 if len(combos) <= 3 else 0.08
        for k, (cc, queue) in enumerate(combos):
            sel = flows[(flows["cc"] == cc) & (flows["queue"] == queue)]
            if sel.empty:
                continue
            color = _COLORS[k % len(_COLORS)]  # as in the delay figure
            mbps = sel["goodput_bps"].to_numpy(dtype=float) / 1e6
            shift = (k - (len(combos) - 1) / 2.0) * 0.008 * span
            ax.scatter(sel["x"] + shift, mbps, s=9, color=color, alpha=0.35, linewidths=0, zorder=2)
            per_run = sel.groupby(["seed_no", "x"])["goodput_bps"].mean().unstack("x") / 1e6
            shares.append(float(sel.groupby("seed_no")["goodput_bps"].mean().mean()) / 1e6)
            row = cmp.table[(cmp.table["cc"] == cc) & (cmp.table["queue"] == queue)].iloc[0]
            jain_text = "" if pd_isna(row["jain_mean"]) else f" (Jain {row['jain_mean']:.3f})"
            label = f"{row['rank']}. {cc}+{queue}{jain_text}"
            drawn_labels.append(f"{row['rank']}. {cc}+{queue}")
            drawn_colors.append(color)
            if kind == "min_rtt" or per_run.shape[1] == len(sel):
                ax.scatter([], [], s=16, color=color, label=label)
                continue
            xs = np.asarray(per_run.columns, dtype=float)
            stats = [mean_ci([float(v) for v in per_run[c].dropna()]) for c in per_run.columns]
            means = np.array([s[0] for s in stats])
            halves = np.array([s[2] for s in stats])
            ax.plot(xs + shift, means, "-o", ms=3.5, lw=1.4, color=color, label=label, zorder=3)
            if cmp.spec.seeds >= BAND_SEEDS and np.isfinite(halves).any():
                ax.fill_between(
                    xs + shift,
                    np.maximum(means - np.nan_to_num(halves), 0.0),
                    means + np.nan_to_num(halves),
                    color=color,
                    alpha=band_alpha,
                    linewidth=0,
                    zorder=1,
                )
        n = int(flows.groupby(["cc", "queue", "seed_no"]).size().iloc[0])
        # One dashed line per fair share that differs by more than 2 % from the others (a
        # combination that left the link partly idle has a smaller one).
        clusters: list[list[int]] = []
        for k in sorted(range(len(shares)), key=lambda k: shares[k]):
            if clusters and shares[k] <= 1.02 * shares[clusters[-1][0]]:
                clusters[-1].append(k)
            else:
                clusters.append([k])
        for members in clusters:
            share = sum(shares[k] for k in members) / len(members)
            if len(clusters) == 1:
                whose, color = "", "black"
            elif len(members) == 1:
                whose, color = f" of {drawn_labels[members[0]]}", drawn_colors[members[0]]
            else:
                whose, color = f" of {len(members)} combinations", "black"
            ax.axhline(
                share,
                color=color,
                linestyle="--",
                lw=1.0,
                gid="fair-share",
                label=f"fair share{whose}: total goodput / {n} flows = {share:.3g} Mbit/s",
            )
        top = float(flows["goodput_bps"].max()) / 1e6
        ax.set_ylim(0.0, 1.08 * max(top, max(shares, default=0.0)))
        if ticks:
            ax.set_xticks(range(len(ticks)), ticks, rotation=45 if len(ticks) > 8 else 0)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("goodput per flow (Mbit/s)")
        what = {"base_rtt": "against the base RTT", "min_rtt": "against RTT", "group": "by flow group"}.get(kind, "")
        ax.set_title(f"RTT fairness: goodput per flow {what}".rstrip() + " (measured window)")
        ax.grid(alpha=0.3)
        handles, labels = ax.get_legend_handles_labels()
        handles.append(Line2D([], [], marker="o", ms=4, color="grey", alpha=0.4, lw=0))
        labels.append("dot: a flow in one seed")
        at = {"base_rtt": "RTT", "group": "group"}.get(kind, "x")
        band = f"line: mean over {_seeds_text(cmp)} of the mean flow at each {at}; band: its 95 % interval"
        if cmp.spec.seeds < 2:
            band = f"line: the mean flow at each {at}"
        elif cmp.spec.seeds < BAND_SEEDS:
            t = float(stats_t.ppf(0.975, cmp.spec.seeds - 1))
            band = (
                f"line: mean over {_seeds_text(cmp)} of the mean flow at each {at}; no band: over "
                f"{_seeds_text(cmp)} a 95 % interval spans ± {t:.1f} standard errors"
            )
        fig.legend(handles, labels, loc="outside lower center", ncol=2, title=band, frameon=False)
    return fig


# The y axis of the delay distribution: evenly spaced for 0.5, 0.9, 0.99 and 1, so that the
# tail is as readable as the median (the cumulative probability p is drawn at -log10(1.001 - p)).
_TAIL = 1.001


# The top of that axis: a little above 1, so that the maxima stand clear of the frame.
_TAIL_TOP = 1.0005


def _tail_forward(p: Any) -> Any:
    import numpy as np

    return -np.log10(_TAIL - np.clip(p, 0.0, _TAIL_TOP)) + math.log10(_TAIL)


def _tail_inverse(v: Any) -> Any:
    import numpy as np

    return np.clip(_TAIL - 10.0 ** (-(np.asarray(v, dtype=float) - math.log10(_TAIL))), 0.0, _TAIL_TOP)


def delay_figure(cmp: Comparison, out: Path) -> Any:
    """The distribution of the queueing delay (sojourn time) at the bottleneck of the first
    ``DRAWN`` combinations, from what each run records of it: its median, 99th percentile and
    maximum (the engine keeps a histogram per queue and reports these, not the distribution). A
    point per quantile and seed, the mean over seeds joined by a line with its 95 % interval; the
    y axis is the cumulative probability, stretched towards 1. None without queue results."""
    plt = _pyplot()
    import pandas as pd

    from ..smc.statistics import mean_ci

    quantiles = (("p50_sojourn_s", 0.5), ("p99_sojourn_s", 0.99), ("max_sojourn_s", 1.0))
    combos = _drawn(cmp)
    rows = []
    for cc, queue, number, _, run_dir in _run_dirs(cmp, out, combos):
        path = run_dir / "queues.parquet"
        if not path.exists():
            continue
        queues = pd.read_parquet(path)
        mine = queues[queues["name"] == cmp.spec.bottleneck]
        if not mine.empty:
            rows.append({"cc": cc, "queue": queue, "seed_no": number, **mine.iloc[0].to_dict()})
    if not rows:
        return None
    frame = pd.DataFrame(rows)
    with plt.rc_context(_FONT):
        fig, ax = plt.subplots(figsize=(9.5, 4.6), layout="constrained")
        ax.set_yscale("function", functions=(_tail_forward, _tail_inverse))
        for k, (cc, queue) in enumerate(combos):
            sel = frame[(frame["cc"] == cc) & (frame["queue"] == queue)]
            if sel.empty:
                continue
            color = _COLORS[k % len(_COLORS)]
            ps = [p for _, p in quantiles]
            for _, r in sel.iterrows():
                ax.plot([r[c] * 1e3 for c, _ in quantiles], ps, "o", ms=3, color=color, alpha=0.35)
            stats = [mean_ci([float(v) * 1e3 for v in sel[c]]) for c, _ in quantiles]
            means = [s[0] for s in stats]
            halves = [0.0 if math.isnan(s[2]) else s[2] for s in stats]
            lows = [min(h, m) for h, m in zip(halves, means)]  # a delay is not negative
            row = cmp.table[(cmp.table["cc"] == cc) & (cmp.table["queue"] == queue)].iloc[0]
            mean_delay = row["mean_delay_mean"]
            said = "" if pd_isna(mean_delay) else f" (mean delay {mean_delay * 1e3:.1f} ms)"
            ax.errorbar(
                means,
                ps,
                xerr=[lows, halves],
                fmt="-o",
                ms=5,
                lw=1.4,
                capsize=3,
                color=color,
                label=f"{row['rank']}. {cc}+{queue}{said}",
            )
        ticks = [0.5, 0.9, 0.99, 1.0]
        ax.set_ylim(0.4, _TAIL_TOP)
        ax.set_yticks(ticks, ["0.5 (median)", "0.9", "0.99 (p99)", "1 (max)"])
        # The axis follows the points; an interval reaching further runs off it.
        drawn_points = [float(v) * 1e3 for c, _ in quantiles for v in frame[c] if float(v) > 0]
        scale_note = ""
        if drawn_points and max(drawn_points) > LOG_SPAN * min(drawn_points):
            ax.set_xscale("log")
            ax.set_xlim(min(drawn_points) / 1.5, max(drawn_points) * 1.5)
            _plain_log(ax.xaxis)
            scale_note = ", log scale"
        elif drawn_points:
            ax.set_xlim(0.0, 1.08 * max(drawn_points))
        ax.set_xlabel(f"queueing delay in the bottleneck queue {cmp.spec.bottleneck}, one way (ms{scale_note})")
        ax.set_ylabel("share of packets delayed at most this long")
        ax.set_title(f"Queueing delay (sojourn time) at {cmp.spec.bottleneck}: its distribution, measured window")
        ax.grid(alpha=0.3)
        note = (
            "points: the median, 99th percentile and maximum each run records (the engine reports these, "
            "not every packet's delay);\nlines join their means over seeds, "
            + (_interval_note(cmp) if cmp.spec.seeds >= 2 else "one seed")
            + "; dots: each seed"
        )
        fig.legend(loc="outside lower center", ncol=2, title=note, frameon=False)
    return fig


def trace_figure(cmp: Comparison, out: Path, top: int = 3) -> Any:
    """The bottleneck queue and the congestion windows of the first ``top`` combinations over
    their first seed. Labelled by combination and seed number (not the 20-digit seed); the y
    axes show the measured window (the start-up transient's peak is noted when it is off scale)
    and the warm-up is shaded. Every flow is drawn: one line each up to 8 flows; with more, per
    flow group the mean of its flows with a band from the smallest to the largest window (or, the
    flows without groups, each flow in grey and their median). None without traces."""
    plt = _pyplot()
    import numpy as np
    import pandas as pd

    from ...results.plots import mark_off_scale, mark_warmup, steady_top
    from .run import group_order

    rows = cmp.feasible.head(top) if not cmp.feasible.empty else cmp.table.head(top)
    picked = []
    for _, row in rows.iterrows():
        sel = cmp.runs[(cmp.runs["cc"] == row["cc"]) & (cmp.runs["queue"] == row["queue"])]
        if sel.empty:
            continue
        first = sel.sort_values("replicate").iloc[0]
        run_dir = out / first["run_dir"]
        if not (run_dir / "traces.parquet").exists():
            continue
        flows = pd.read_parquet(run_dir / "flows.parquet") if (run_dir / "flows.parquet").exists() else None
        warmup = 0.0
        if (run_dir / "summary.json").exists():
            warmup = float(json.loads((run_dir / "summary.json").read_text()).get("warmup_s") or 0.0)
        name = f"{row['cc']}+{row['queue']}"
        seed = f"seed {int(first['replicate']) + 1} of {cmp.spec.seeds}"
        picked.append((name, seed, pd.read_parquet(run_dir / "traces.parquet"), flows, warmup))
    if not picked:
        return None
    qcol = f"queue.{cmp.spec.bottleneck}.len_pkts"
    with plt.rc_context(_FONT):
        fig, axes = plt.subplots(
            1 + len(picked), 1, figsize=(9.5, 2.5 * (1 + len(picked)) + 0.6), sharex=True, layout="constrained"
        )
        warmup = max(p[4] for p in picked)
        series = []
        for k, (name, seed, tr, _, _) in enumerate(picked):
            if qcol in tr.columns:
                axes[0].plot(tr["time_s"], tr[qcol], lw=0.8, color=_COLORS[k], label=f"{name} ({seed})")
                series.append((tr["time_s"], tr[qcol].to_numpy(dtype=float)))
        if warmup > 0:
            for ax in axes:
                mark_warmup(ax, warmup)
        if series:
            time = series[0][0]
            if all(len(s[0]) == len(time) for s in series):
                limit, _ = steady_top(time, [s[1] for s in series], warmup)
                if limit is not None:
                    axes[0].set_ylim(-0.02 * limit, limit)
                    mark_off_scale(axes[0], time, [s[1] for s in series], limit, "packets")
        axes[0].set_ylabel("queue length\n(packets)")
        axes[0].set_title(f"Bottleneck queue {cmp.spec.bottleneck}, first seed of each combination")
        axes[0].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, alignment="left")
        group_handles: dict[str, Any] = {}
        group_note = ""
        for ax, (name, seed, tr, flows, _) in zip(axes[1:], picked):
            cw = [c for c in tr.columns if c.startswith("flow.") and c.endswith(".cwnd_bytes")]
            cw = sorted(cw, key=lambda c: int(c.split(".")[1]))
            groups: dict[int, str] = {}
            names: dict[int, str] = {}
            if flows is not None and "group" in flows:
                groups = {int(i): g for i, g in zip(flows["id"], flows["group"]) if isinstance(g, str) and g}
                names = {int(i): str(n) for i, n in zip(flows["id"], flows["name"])}
            ids = [int(c.split(".")[1]) for c in cw]
            kb = {i: tr[c].to_numpy(dtype=float) / 1e3 for i, c in zip(ids, cw)}
            shown = []
            if len(cw) <= 8:
                for i in ids:
                    ax.plot(tr["time_s"], kb[i], lw=0.8, label=f"flow {names.get(i, i)}")
                    shown.append(kb[i])
                ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
                what = f"{len(cw)} flows"
            elif ids and all(i in groups for i in ids) and len(set(groups[i] for i in ids)) > 1:
                order = sorted(set(groups[i] for i in ids), key=group_order)
                cmap = plt.get_cmap("viridis")
                for g_index, g in enumerate(order):
                    members = np.vstack([kb[i] for i in ids if groups[i] == g])
                    color = cmap(0.9 * g_index / max(1, len(order) - 1))
                    mean = members.mean(axis=0)
                    (line,) = ax.plot(tr["time_s"], mean, lw=0.9, color=color)
                    if len(members) > 1:
                        ax.fill_between(
                            tr["time_s"], members.min(axis=0), members.max(axis=0), color=color, alpha=0.18, lw=0
                        )
                    group_handles.setdefault(g, line)
                    shown.append(members.max(axis=0))
                size = len(ids) // len(order)
                group_note = f"line: the mean of each group's flows{'; band: their range' if size > 1 else ''}"
                what = f"{len(ids)} flows, by group"
            else:
                every = np.vstack([kb[i] for i in ids]) if ids else np.zeros((0, len(tr)))
                for row_values in every:
                    ax.plot(tr["time_s"], row_values, lw=0.5, color="grey", alpha=0.3)
                if len(every):
                    ax.plot(tr["time_s"], np.median(every, axis=0), lw=1.2, color="black", label="median over flows")
                    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
                    shown.extend(every)
                what = f"all {len(ids)} flows in grey"
            if shown:
                limit, _ = steady_top(tr["time_s"], shown, warmup)
                if limit is not None:
                    ax.set_ylim(-0.02 * limit, limit)
                    mark_off_scale(ax, tr["time_s"], shown, limit, "kB")
            ax.set_ylabel("cwnd (kB)")
            ax.set_title(f"Congestion windows, {name} ({seed}): {what}")
        axes[-1].set_xlabel("time (s)")
        if group_handles:
            order = sorted(group_handles, key=group_order)
            axes[1].legend(
                [group_handles[g] for g in order],
                order,
                loc="upper left",
                bbox_to_anchor=(1.01, 1.0),
                title="flow group\n" + group_note.replace("; ", "\n"),
                frameon=False,
                alignment="left",
                ncol=2 if len(order) > 12 else 1,
            )
    return fig


# The per-combination statistics of a metric: suffix in the analysis, suffix in the files.
_STATISTICS = (
    ("_mean", ""),
    ("_sd", "_sd"),
    ("_ci95", "_ci95_half"),
    ("_ci95_lo", "_ci95_lo"),
    ("_ci95_hi", "_ci95_hi"),
)


def exported_tables(cmp: Comparison) -> tuple[Any, Any]:
    """The ranking (one row per combination) and the runs (one row per run) as the files
    have them: each metric's column named with its unit (``p99_delay_s``, ``goodput_bps``; ratios
    in 0..1 and counts as they are), the mean over seeds under that name, its standard
    deviation ``_sd``, the half-width of its 95 % interval ``_ci95_half`` and the interval
    ``_ci95_lo`` / ``_ci95_hi``; ranking columns first."""
    columns = {m: metric_of(m).column or m for m in cmp.metrics} | {"score": "score"}
    renamed = {f"{m}{old}": f"{name}{new}" for m, name in columns.items() for old, new in _STATISTICS}
    # The test against the best is of the scores: its difference says so.
    renamed |= {
        "vs_best_diff": "vs_best_score_diff",
        "vs_best_ci95_lo": "vs_best_score_diff_ci95_lo",
        "vs_best_ci95_hi": "vs_best_score_diff_ci95_hi",
    }
    table = cmp.table.rename(columns=renamed)
    first = ["rank", "tier", "cc", "queue", "seeds", "feasible", "violated"]
    stats = [renamed[f"{m}{old}"] for m in ["score", *cmp.metrics] for old, _ in _STATISTICS]
    rest = [c for c in table.columns if c not in first and c not in stats and c != "command"]
    table = table[[c for c in [*first, *stats, *rest, "command"] if c in table.columns]]
    runs = cmp.runs.rename(columns=columns)
    return table, runs


def write_report(cmp: Comparison, out: str | Path) -> list[Path]:
    """``report.html`` (self-contained: inline CSS, figures as base64 PNG, one inline script
    that only counts the decoded figures), ``comparison.parquet``/``.csv`` (one row per
    combination, ranked), ``runs_metrics.parquet``/``.csv`` (one row per run, with its score)
    and ``compare.json``."""
    out = Path(out)
    written = []
    table, runs = exported_tables(cmp)
    table.to_parquet(out / "comparison.parquet", index=False)
    table.to_csv(out / "comparison.csv", index=False)
    runs.to_parquet(out / "runs_metrics.parquet", index=False)
    runs.to_csv(out / "runs_metrics.csv", index=False)
    written += [out / n for n in ("comparison.parquet", "comparison.csv", "runs_metrics.parquet", "runs_metrics.csv")]
    best = cmp.best()
    info = {
        "scenario": cmp.spec.file,
        "objective": cmp.objective.text,
        "objective_terms": cmp.objective.weights,
        "constraints": [c.text for c in cmp.objective.constraints],
        "seeds": cmp.spec.seeds,
        "bottleneck": cmp.spec.bottleneck,
        "queue_key": cmp.spec.queue_key,
        "ccs": cmp.spec.ccs,
        "queues": cmp.spec.queues,
        "scales": cmp.scales,
        "notes": cmp.spec.notes,
        "best": None if best is None else {"cc": best["cc"], "queue": best["queue"]},
        "feasible": [f"{r.cc}+{r.queue}" for r in cmp.feasible.itertuples()],
        "verdict": verdict_lines(cmp),
        "failed_runs": cmp.failed,
        "command": compare_command(cmp.spec, cmp.objective, out),
    }
    (out / "compare.json").write_text(json.dumps(info, indent=1, default=str) + "\n", encoding="utf-8")
    written.append(out / "compare.json")
    (out / "report.html").write_text(_html(cmp, out, info), encoding="utf-8")
    written.append(out / "report.html")
    return written


# The template sits next to this module (maturin packages every file of the package directory).
_TEMPLATES = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).parent),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)


# The ranking's columns in the report: title, unit (headers name both) and what the values are.
_HTML_COLUMNS: dict[str, tuple[str, str, str]] = {
    "utilization": ("bottleneck link utilized", "%", "the share of the bottleneck's rate used in the measured window"),
    "goodput": (
        "goodput, all flows",
        "Mbit/s",
        "the sum of the flows' goodput: application bytes delivered per second",
    ),
    "jain": (
        "Jain's index, all flows",
        "0-1",
        "Jain's fairness index of the flows' goodputs: 1 when all are equal, 1/n when one flow takes everything",
    ),
    "jain_groups": (
        "Jain's index within groups, mean",
        "0-1",
        "Jain's index among the flows of each group (flows of one RTT, one source), averaged over the groups",
    ),
    "mean_delay": (
        "mean queueing delay, one way",
        "ms",
        "the mean time a packet waits in the bottleneck queue {queue} before it is sent: one way, a part of the RTT, not an RTT",
    ),
    "p99_delay": (
        "p99 queueing delay, one way",
        "ms",
        "the 99th percentile of that wait (1 packet in 100 waits longer)",
    ),
    "drop_ratio": ("packets dropped", "%", "the share of the packets arriving at the bottleneck queue that it drops"),
    "retransmissions": ("retransmitted segments", "count", "the segments the flows sent again (all flows)"),
    "itae": (
        "ITAE, control loops",
        "",
        "the sum over the control loops of the integral of t |e(t)| dt (lower: better control)",
    ),
}


def _scenario_description(cmp: Comparison) -> str:
    """The scenario's own one-line description, if it has one."""
    from ...scenario.schema import read_toml

    try:
        text = read_toml(cmp.spec.file).get("description")
    except Exception:
        return ""
    return text if isinstance(text, str) else ""


def _group_rows(cmp: Comparison, flows: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """The table per flow group: its columns (the combinations by rank), its rows (the groups
    in numeric order: mean goodput of a flow of the group and Jain's index within it, with
    their intervals over seeds) and the row of all flows (the fair share and Jain's index).
    ``flows``: ``run_flows``'s table, or None."""
    from ..smc.statistics import clip_interval, mean_ci
    from .run import group_order

    groups = sorted(cmp.spec.groups, key=group_order)
    combos = [(r["cc"], r["queue"], str(r["rank"])) for _, r in cmp.table.iterrows()]
    columns = [{"name": f"{cc}+{queue}", "rank": rank} for cc, queue, rank in combos]
    # Mean goodput of a flow per run, of the group's flows and of all flows.
    by_group: dict[tuple[str, str, Any], list[float]] = {}
    if flows is not None and groups:
        runs = flows.groupby(["cc", "queue", "group", "seed_no"])["goodput_bps"].mean()
        for (cc, queue, g, _), value in runs.items():
            by_group.setdefault((cc, queue, g), []).append(float(value) / 1e6)
        every = flows.groupby(["cc", "queue", "seed_no"])["goodput_bps"].mean()
        for (cc, queue, _), value in every.items():
            by_group.setdefault((cc, queue, None), []).append(float(value) / 1e6)

    def goodput(values: list[float] | None) -> dict[str, str]:
        if not values:
            return {"mean": "-", "ci": ""}
        mean, _, half = mean_ci(values)
        if math.isnan(half):
            return {"mean": f"{mean:.2f}", "ci": ""}
        lo, hi = clip_interval(mean, half, (0.0, math.inf))
        return {"mean": f"{mean:.2f}", "ci": f"[{lo:.2f}, {hi:.2f}]" if lo > mean - half else f"± {half:.2f}"}

    def index(row: Any, metric: str) -> dict[str, str]:
        mean = row.get(f"{metric}_mean")
        text = _number_of(mean, None, 3)
        half, lo, hi = row.get(f"{metric}_ci95"), row.get(f"{metric}_ci95_lo"), row.get(f"{metric}_ci95_hi")
        if text == "-" or half is None or pd_isna(half):
            return {"mean": text, "ci": ""}
        if not pd_isna(lo) and (lo > mean - half or hi < mean + half):
            return {"mean": text, "ci": f"[{lo:.3f}, {hi:.3f}]"}
        return {"mean": text, "ci": f"± {half:.3f}"}

    rows = []
    for g in groups:
        cells = []
        for (cc, queue, _), (_, row) in zip(combos, cmp.table.iterrows()):
            cells.append(goodput(by_group.get((cc, queue, g))))
            cells.append(index(row, f"jain.{g}"))
        rows.append({"group": g, "cells": cells})
    total = []
    for (cc, queue, _), (_, row) in zip(combos, cmp.table.iterrows()):
        total.append(goodput(by_group.get((cc, queue, None))))
        total.append(index(row, "jain"))
    return columns, rows, {"group": "all flows", "cells": total}


def _html(cmp: Comparison, out: Path, info: dict[str, Any]) -> str:
    """The report page: the values are formatted here, the markup is the template's."""
    metrics = [m for m in cmp.metrics if m in _HTML_COLUMNS]
    rows = []
    for _, row in cmp.table.iterrows():
        tier = "-" if pd_isna(row["tier"]) else str(int(row["tier"]))
        p = row["same_as_best_p"]
        score, score_ci = _pm(row, "score", raw=True).partition(" ± ")[::2]
        rows.append(
            {
                "cls": "infeasible" if not row["feasible"] else ("tier1" if tier == "1" else ""),
                "rank": str(row["rank"]),
                "tier": tier,
                "cc": row["cc"],
                "queue": row["queue"],
                "score": score,
                "score_ci": f"± {score_ci}" if score_ci else "",
                "p": "-" if p is None or pd_isna(p) else f"{p:.3g}",
                "metrics": [dict(zip(("mean", "ci"), _shown_parts(row, m))) for m in metrics],
                "constraints": "ok" if row["feasible"] else row["violated"],
            }
        )
    queue = cmp.spec.bottleneck
    headers = [{"title": _HTML_COLUMNS[m][0], "unit": _HTML_COLUMNS[m][1]} for m in metrics]
    meanings = [
        {"title": f"{_HTML_COLUMNS[m][0]} ({_HTML_COLUMNS[m][1]})", "text": _HTML_COLUMNS[m][2].format(queue=queue)}
        for m in metrics
    ]
    flows = run_flows(cmp, out)
    group_columns, group_rows, group_total = _group_rows(cmp, flows)
    combos = {(cc, cmp.spec.queue_label(q)): q for cc, q in cmp.spec.combinations()}
    cells = [
        {
            "cc": row["cc"],
            "queue": row["queue"],
            "seed": row["seed"],
            "command": rerun_command(cmp.spec, row["cc"], combos[(row["cc"], row["queue"])], int(row["seed"])),
        }
        for _, row in cmp.runs.sort_values(["cc", "queue", "replicate"]).iterrows()
    ]

    def png(fig: Any) -> str | None:
        return None if fig is None else _png(fig)

    drawn = min(DRAWN, len(cmp.table))
    return _TEMPLATES.get_template("report.html.j2").render(
        name=Path(cmp.spec.file).name,
        scenario_description=_scenario_description(cmp),
        objective=cmp.objective.text,
        description=cmp.objective.describe(),
        seeds=cmp.spec.seeds,
        bottleneck=queue,
        queue_key=cmp.spec.queue_key,
        verdict=info["verdict"],
        notes=cmp.spec.notes,
        failed=cmp.failed,
        headers=headers,
        meanings=meanings,
        rows=rows,
        group_columns=group_columns,
        group_rows=group_rows,
        group_total=group_total,
        drawn=drawn,
        combinations=len(cmp.table),
        rtt_fairness=png(rtt_fairness_figure(cmp, out, flows)),
        delay_cdf=png(delay_figure(cmp, out)),
        pareto=_png(pareto_figure(cmp), tight=False),
        traces=png(trace_figure(cmp, out)),
        command=info["command"],
        cells=cells,
    )
