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
}
# Which metrics a narrow terminal keeps, after those of the objective.
_KEPT_FIRST = ("jain", "p99_delay", "utilization", "mean_delay", "jain_groups", "drop_ratio", "retransmissions", "itae")
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


def _shown_cell(row: Any, metric: str, with_ci: bool) -> str:
    """A metric's cell in the unit of its header: the mean, with its interval: ``± half``, or
    ``[low, high]`` where the metric's range clips it."""
    shown = _SHOWN[metric]
    mean = row.get(f"{metric}_mean")
    text = _number_of(mean, shown, shown.digits)
    half = row.get(f"{metric}_ci95")
    if not with_ci or text == "-" or half is None or pd_isna(half):
        return text
    lo, hi = row.get(f"{metric}_ci95_lo"), row.get(f"{metric}_ci95_hi")
    if lo is not None and hi is not None and not pd_isna(lo) and (lo > mean - half or hi < mean + half):
        return f"{text} [{_number_of(lo, shown, shown.digits)}, {_number_of(hi, shown, shown.digits)}]"
    return f"{text} ± {_number_of(half, shown, shown.digits)}"


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


def _png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


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


def _pareto_figure(cmp: Comparison) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = cmp.table
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
    panels = [("p99_delay", 1e3, "p99 queueing delay (ms)", False), ("jain", 1.0, "Jain's index", True)]
    for ax, (metric, scale, label, more_better) in zip(axes, panels):
        xs = [float(v) * 100 for v in t["utilization_mean"]]
        ys = [float(v) * scale for v in t[f"{metric}_mean"]]
        ok = [i for i in range(len(xs)) if not (math.isnan(xs[i]) or math.isnan(ys[i]))]
        front = set(ok[k] for k in pareto_front([(xs[i], ys[i]) for i in ok], True, more_better))

        def err(name: str, i: int, value: float, factor: float) -> list[list[float]]:
            # The interval as computed, within the metric's range (none with one seed).
            lo, hi = t.loc[i, f"{name}_ci95_lo"], t.loc[i, f"{name}_ci95_hi"]
            if pd_isna(lo) or pd_isna(hi):
                return [[0.0], [0.0]]
            return [[max(0.0, value - lo * factor)], [max(0.0, hi * factor - value)]]

        for i in ok:
            on = i in front
            xerr = err("utilization", i, xs[i], 100.0)
            yerr = err(metric, i, ys[i], scale)
            ax.errorbar(
                xs[i],
                ys[i],
                xerr=xerr,
                yerr=yerr,
                fmt="o",
                ms=7 if on else 5,
                color="tab:red" if on else "tab:gray",
                alpha=0.9,
                capsize=2,
            )
            ax.annotate(
                f"{t.loc[i, 'cc']}+{t.loc[i, 'queue']}",
                (xs[i], ys[i]),
                fontsize=7,
                xytext=(3, 3),
                textcoords="offset points",
            )
        line = sorted(front, key=lambda i: xs[i])
        if len(line) > 1:
            ax.plot([xs[i] for i in line], [ys[i] for i in line], "-", color="tab:red", lw=1, alpha=0.6)
        ax.set_xlabel("bottleneck utilization (%)")
        ax.set_ylabel(label)
        ax.set_title(f"{label} vs utilization (red: Pareto front)")
        ax.grid(alpha=0.3)
    return _png(fig)


def _trace_figure(cmp: Comparison, out: Path, top: int = 3) -> str | None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    rows = cmp.feasible.head(top) if not cmp.feasible.empty else cmp.table.head(top)
    picked = []
    for _, row in rows.iterrows():
        sel = cmp.runs[(cmp.runs["cc"] == row["cc"]) & (cmp.runs["queue"] == row["queue"])]
        if sel.empty:
            continue
        first = sel.sort_values("replicate").iloc[0]
        path = out / first["run_dir"] / "traces.parquet"
        if path.exists():
            picked.append((f"{row['cc']}+{row['queue']}", int(first["seed"]), pd.read_parquet(path)))
    if not picked:
        return None
    fig, axes = plt.subplots(1 + len(picked), 1, figsize=(11, 2.6 * (1 + len(picked))), sharex=True)
    qcol = f"queue.{cmp.spec.bottleneck}.len_pkts"
    for label, seed, tr in picked:
        if qcol in tr.columns:
            axes[0].plot(tr["time_s"], tr[qcol], lw=0.8, label=f"{label} (seed {seed})")
    axes[0].set_ylabel("bottleneck queue (packets)")
    axes[0].legend(fontsize=7, loc="upper right")
    axes[0].set_title(f"queue {cmp.spec.bottleneck} and congestion windows of the top combinations")
    for ax, (label, seed, tr) in zip(axes[1:], picked):
        cw = [c for c in tr.columns if c.startswith("flow.") and c.endswith(".cwnd_bytes")]
        cw = sorted(cw, key=lambda c: int(c.split(".")[1]))[:8]
        for c in cw:
            ax.plot(tr["time_s"], tr[c] / 1e3, lw=0.7, label=f"flow {c.split('.')[1]}")
        ax.set_ylabel("cwnd (kB)")
        ax.set_title(f"{label}, seed {seed} (first {len(cw)} flows)", fontsize=9)
        if cw:
            ax.legend(fontsize=6, ncol=4, loc="upper right")
    axes[-1].set_xlabel("time (s)")
    return _png(fig)


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


def _html(cmp: Comparison, out: Path, info: dict[str, Any]) -> str:
    """The report page: the values are formatted here, the markup is the template's."""
    rows = []
    for _, row in cmp.table.iterrows():
        tier = "-" if pd_isna(row["tier"]) else str(int(row["tier"]))
        p = row["same_as_best_p"]
        rows.append(
            {
                "cls": "infeasible" if not row["feasible"] else ("tier1" if tier == "1" else ""),
                "rank": str(row["rank"]),
                "tier": tier,
                "cc": row["cc"],
                "queue": row["queue"],
                "score": _pm(row, "score", raw=True),
                "p": "-" if p is None or pd_isna(p) else f"{p:.3g}",
                "metrics": [_pm(row, m) for m in cmp.metrics],
                "constraints": "ok" if row["feasible"] else row["violated"],
            }
        )
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
    return _TEMPLATES.get_template("report.html.j2").render(
        name=Path(cmp.spec.file).name,
        objective=cmp.objective.text,
        description=cmp.objective.describe(),
        seeds=cmp.spec.seeds,
        bottleneck=cmp.spec.bottleneck,
        queue_key=cmp.spec.queue_key,
        verdict=info["verdict"],
        notes=cmp.spec.notes,
        failed=cmp.failed,
        metric_titles=[metric_of(m).title for m in cmp.metrics],
        rows=rows,
        pareto=_pareto_figure(cmp),
        traces=_trace_figure(cmp, out),
        command=info["command"],
        cells=cells,
    )
