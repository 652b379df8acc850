"""The output of ``ccsim compare``: the ranking as a terminal table, and ``write_report``'s files:
``report.html`` (rendered from ``report.html.j2`` with autoescape; figures inline as base64 PNG),
the tables as CSV and Parquet, and ``compare.json``."""

from __future__ import annotations

import base64
import io
import json
import math
from pathlib import Path
from typing import Any

import jinja2

from .analysis import Comparison, pd_isna, verdict_lines
from .objective import format_value, metric_of
from .run import compare_command, rerun_command


def print_table(cmp: Comparison, console: Any) -> None:
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    short = {
        "utilization": "util",
        "jain": "Jain",
        "jain_groups": "Jain in groups",
        "mean_delay": "delay",
        "p99_delay": "p99 delay",
        "drop_ratio": "drops",
        "retransmissions": "retx",
        "itae": "ITAE",
    }
    shown = [m for m in short if m in cmp.metrics]
    t = Table(
        title=escape(
            f"{Path(cmp.spec.file).name}: {cmp.objective.describe()} ({cmp.spec.seeds} seeds, "
            "mean ± 95 % CI; [low, high] where the metric's range clips it)"
        )
    )
    for col in ["rank", "tier", "cc", "queue", "score"] + [short[m] for m in shown]:
        t.add_column(col, justify="right" if col not in ("cc", "queue") else "left")
    for _, row in cmp.table.iterrows():
        tier = str(int(row["tier"])) if row["tier"] is not None and not pd_isna(row["tier"]) else "-"
        cells = [str(row["rank"]), tier, row["cc"], row["queue"], _pm(row, "score", raw=True)]
        cells += [_pm(row, m) for m in shown]
        t.add_row(*[Text(c) for c in cells], style=None if row["feasible"] else "dim")
    console.print(t)


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


def write_report(cmp: Comparison, out: str | Path) -> list[Path]:
    """``report.html`` (self-contained: inline CSS, figures as base64 PNG, one inline script
    that only counts the decoded figures), ``comparison.parquet``/``.csv`` (one row per
    combination, ranked), ``runs_metrics.parquet``/``.csv`` (one row per run, with its score)
    and ``compare.json``."""
    out = Path(out)
    written = []
    cmp.table.to_parquet(out / "comparison.parquet", index=False)
    cmp.table.to_csv(out / "comparison.csv", index=False)
    cmp.runs.to_parquet(out / "runs_metrics.parquet", index=False)
    cmp.runs.to_csv(out / "runs_metrics.csv", index=False)
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
