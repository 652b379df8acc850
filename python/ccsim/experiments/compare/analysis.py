"""The analysis of a finished matrix: each run's metrics and score, each combination's mean and
interval over the seeds, the ranking with its tiers (what the seeds can and cannot separate), and
the verdict in words."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scipy import stats

from ...errors import ScenarioError
from ...results.metrics import FCT_BUCKETS, fct_table, jain
from ..smc.statistics import ALPHA, Difference, clip_interval, difference, holm, mean_ci
from .objective import METRICS, Objective, format_value, metric_of
from .run import CompareSpec, group_order, rerun_command


def run_metrics(spec: CompareSpec, row: dict[str, Any], out: Path) -> dict[str, Any]:
    """The comparison's metrics of one finished run (a row of the sweep's table)."""

    def num(key: str) -> float | None:
        value = row.get(key)
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return None
        return float(value)

    m: dict[str, Any] = {
        "utilization": num("bottleneck.utilization"),
        "goodput": num("goodput_bps_total"),
        "jain": num("jain_index"),
        "mean_delay": num("bottleneck.mean_sojourn_s"),
        "p99_delay": num("bottleneck.p99_sojourn_s"),
        "drop_ratio": num("bottleneck.drop_ratio"),
        "retransmissions": num("retransmissions"),
    }
    if spec.groups or spec.has_transfers:
        import pandas as pd

        flows = pd.read_parquet(out / row["run_dir"] / "flows.parquet")
        flows = flows[flows["app"] != "ncs"]
    if spec.has_transfers and not (fct := fct_table(flows).set_index("size")).empty:
        short, every = fct.loc[FCT_BUCKETS[0][0]], fct.loc["all"]
        m["p99_fct_short"] = None if math.isnan(short["p99_fct_s"]) else float(short["p99_fct_s"])
        m["mean_slowdown"] = None if math.isnan(every["mean_slowdown"]) else float(every["mean_slowdown"])
    if spec.groups:
        values = []
        for g in spec.groups:
            index = jain(flows.loc[flows["group"] == g, "goodput_bps"])
            m[f"jain.{g}"] = None if math.isnan(index) else index
            if not math.isnan(index):
                values.append(index)
        m["jain_groups"] = sum(values) / len(values) if values else None
    if spec.has_control:
        itaes = [
            float(v)
            for k, v in row.items()
            if k.startswith("control.")
            and k.endswith(".itae")
            and v is not None
            and not (isinstance(v, float) and math.isnan(v))
        ]
        m["itae"] = sum(itaes) if itaes else None
    return m


@dataclass
class Comparison:
    """The analysed matrix: per-run metrics and scores, per-combination summaries, ranking."""

    spec: CompareSpec
    objective: Objective
    runs: Any  # DataFrame: cc, queue, replicate, seed, run_dir, metrics, score
    table: Any  # DataFrame: one row per combination, ranked
    metrics: list[str]
    scales: dict[str, float]
    failed: int
    missing: int

    @property
    def feasible(self) -> Any:
        return self.table[self.table["feasible"]]

    def best(self) -> Any:
        feasible = self.feasible
        return None if feasible.empty else feasible.iloc[0]

    def why(self, row: Any, versus: Any) -> str:
        """Why ``row`` ranks where it does against ``versus``: the metrics that move the score
        most, with their values."""
        parts = []
        contributions = []
        for metric, weight in self.objective.weights.items():
            a, b = row.get(f"{metric}_mean"), versus.get(f"{metric}_mean")
            if a is None or b is None or math.isnan(a) or math.isnan(b):
                continue
            sign = 1.0 if metric_of(metric).higher_is_better else -1.0
            contributions.append((abs(sign * weight * (a - b) / self.scales.get(metric, 1.0)), metric, a, b))
        contributions.sort(reverse=True)
        for _, metric, a, b in contributions[:3]:
            parts.append(f"{metric} {format_value(metric, a)} vs {format_value(metric, b)}")
        return "; ".join(parts)


def analyse(spec: CompareSpec, objective: Objective, out: str | Path, table: Any) -> Comparison:
    """Metrics, scores, summaries and the tiered ranking from the sweep's table."""
    import pandas as pd

    out = Path(out)
    combos = spec.combinations()
    rows = []
    failed = 0
    for _, r in table.iterrows():
        rec = r.to_dict()
        if rec.get("status") != "ok":
            failed += 1
            continue
        cc, queue = combos[int(rec["point"])]
        row = {
            "cc": cc,
            "queue": spec.queue_label(queue),
            "replicate": int(rec["replicate"]),
            "seed": int(rec["seed"]),
            "run_dir": rec["run_dir"],
        }
        row.update(run_metrics(spec, rec, out))
        rows.append(row)
    runs = pd.DataFrame(rows)
    metrics = [m for m in METRICS if m in runs.columns]
    metrics += sorted((c for c in runs.columns if c.startswith("jain.")), key=lambda c: group_order(c[5:]))
    for name in objective.weights:
        if name not in runs.columns or runs[name].isna().all():
            if name == "itae":
                raise ScenarioError(spec.file, "--objective", "ITAE needs a [[control]] loop in the scenario")
            if name == "jain_groups":
                continue  # no groups: the term has nothing to say
            raise ScenarioError(spec.file, "--objective", f"no run measured {name}")
    for c in objective.constraints:
        if c.metric not in runs.columns:
            raise ScenarioError(spec.file, "--objective", f"no run measured {c.metric} (constraint {c.text!r})")
    weights = {m: w for m, w in objective.weights.items() if m in runs.columns and not runs[m].isna().all()}
    scales: dict[str, float] = {}
    for m in metrics:
        if metric_of(m).scaled:
            mean = float(runs[m].abs().mean()) if m in runs.columns else 0.0
            scales[m] = mean if mean > 0 and math.isfinite(mean) else 1.0
        else:
            scales[m] = 1.0
    score = pd.Series(0.0, index=runs.index)
    for m, w in weights.items():
        sign = 1.0 if metric_of(m).higher_is_better else -1.0
        score = score + sign * w * runs[m].astype(float) / scales[m]
    runs["score"] = score

    summary = []
    for cc, queue in combos:
        label = spec.queue_label(queue)
        sel = runs[(runs["cc"] == cc) & (runs["queue"] == label)] if len(runs) else runs
        row = {"cc": cc, "queue": label, "seeds": len(sel)}
        for m in metrics + ["score"]:
            values = [float(v) for v in sel[m] if v is not None and not pd.isna(v)] if len(sel) else []
            mean, sd, half = mean_ci(values)
            bounds = (-math.inf, math.inf) if m == "score" else metric_of(m).bounds
            row[f"{m}_mean"], row[f"{m}_sd"], row[f"{m}_ci95"] = mean, sd, half
            row[f"{m}_ci95_lo"], row[f"{m}_ci95_hi"] = clip_interval(mean, half, bounds)
        violated = [c.text for c in objective.constraints if not c.holds(row.get(f"{c.metric}_mean"))]
        row["feasible"] = bool(len(sel)) and not violated and not math.isnan(row["score_mean"])
        row["violated"] = ", ".join(violated) if len(sel) else "no finished run"
        row["command"] = rerun_command(spec, cc, queue, None)
        summary.append(row)
    frame = pd.DataFrame(summary)
    frame["_order"] = frame["score_mean"].where(frame["feasible"], -math.inf).fillna(-math.inf)
    frame = frame.sort_values("_order", ascending=False, kind="stable").drop(columns="_order").reset_index(drop=True)
    frame.insert(0, "rank", range(1, len(frame) + 1))
    tiers, versus = _tiers(frame, runs)
    frame["tier"] = tiers
    # Each feasible combination against the best: the test's p-value (uncorrected), whether
    # the tiers' first round (Holm) separated them, and the interval of the score difference.
    frame["same_as_best_p"] = [None if v is None else v[0].p for v in versus]
    frame["vs_best_separated"] = [None if v is None else v[1] for v in versus]
    frame["vs_best_test"] = [None if v is None else v[0].test for v in versus]
    frame["vs_best_diff"] = [None if v is None else v[0].diff for v in versus]
    frame["vs_best_ci95_lo"] = [None if v is None else v[0].lo for v in versus]
    frame["vs_best_ci95_hi"] = [None if v is None else v[0].hi for v in versus]
    total = len(combos) * spec.seeds
    return Comparison(
        spec=spec,
        objective=objective,
        runs=runs,
        table=frame,
        metrics=metrics,
        scales=scales,
        failed=failed,
        missing=total - len(runs) - failed,
    )


def _scores(runs: Any, cc: str, queue: str) -> dict[int, float]:
    """The cell's scores by seed."""
    sel = runs[(runs["cc"] == cc) & (runs["queue"] == queue)]
    return {int(seed): float(v) for seed, v in zip(sel["seed"], sel["score"]) if not math.isnan(v)}


def _tiers(frame: Any, runs: Any) -> tuple[list[int | None], list[tuple[Difference, bool] | None]]:
    """Tiers of the feasible combinations (infeasible ones get none), and for each feasible one
    but the best, its ``difference`` from the best and whether the first round separated them.

    A tier is a contiguous block of ranks, so that a combination never sits in a better tier
    than one ranked above it: each round compares the best remaining combination (the head)
    with every remaining one (Holm over the round, alpha 0.05); the head's tier takes the
    combinations ranked right below it down to, not including, the first one the test
    separates from the head (or cannot test: fewer than two runs), which opens the next round.
    A combination further down that the test does not separate from the head still goes to a
    later tier: it ranks below one that is separated."""
    order = [i for i in range(len(frame)) if frame.loc[i, "feasible"]]
    tiers: list[int | None] = [None] * len(frame)
    versus: list[tuple[Difference, bool] | None] = [None] * len(frame)
    scores = {i: _scores(runs, frame.loc[i, "cc"], frame.loc[i, "queue"]) for i in order}
    tier = 0
    first = True
    while order:
        tier += 1
        head, rest = order[0], order[1:]
        tiers[head] = tier
        diffs = [difference(scores[head], scores[i]) for i in rest]
        tested = {k: d for k, d in enumerate(diffs) if d is not None}
        rejected = dict(zip(tested, holm([d.p for d in tested.values()])))
        if first:
            for k, d in tested.items():
                versus[rest[k]] = (d, rejected[k])
            first = False
        joined = 0
        while joined < len(rest) and diffs[joined] is not None and not rejected[joined]:
            tiers[rest[joined]] = tier
            joined += 1
        order = rest[joined:]
    return tiers, versus


def verdict_lines(cmp: Comparison) -> list[str]:
    """The answer in words: the best combination, its tier, why it beats the others."""
    lines = []
    table = cmp.table
    best = cmp.best()
    if best is None:
        texts = ", ".join(c.text for c in cmp.objective.constraints)
        lines.append(f"No combination satisfies the constraints ({texts}).")
        closest = [f"{r.cc}+{r.queue}: {r.violated}" for r in table.head(3).itertuples()]
        if closest:
            lines.append("Violations: " + "; ".join(closest))
        return lines
    tier1 = table[table["tier"] == 1]
    names = ", ".join(f"{r.cc}+{r.queue}" for r in tier1.itertuples())
    lines.append(f"Best for '{cmp.objective.text}': {best['cc']}+{best['queue']} (score {best['score_mean']:.3f}).")
    if cmp.spec.seeds >= 2 and len(cmp.runs) and (cmp.table["score_sd"].fillna(0.0) == 0.0).all():
        lines.append(
            "Every combination gave the same result on every seed: the scenario has no random element "
            "(start windows, loss, randomized AQMs), so the seeds add nothing and the tiers are the order."
        )
    seeds = cmp.spec.seeds
    if seeds < 2:
        lines.append(
            "Warning: one seed: no test can tell combinations apart or together, so the tiers are just "
            "the order; run --seeds 3 or more."
        )
    elif seeds < 3:
        t1, t3, t5 = (float(stats.t.ppf(1.0 - ALPHA / 2.0, n - 1)) for n in (seeds, 3, 5))
        lines.append(
            f"Warning: only {seeds} seeds. A t-test over {seeds} seeds has {seeds - 1} degree of freedom "
            f"(t = {t1:.2f}, against {t3:.2f} with 3 seeds and {t5:.2f} with 5): it separates only "
            f"differences about {t1:.0f} times their standard error, so a shared tier means too few "
            "seeds, not equal combinations. Run --seeds 3 or more."
        )
    if len(tier1) > 1:
        lines.append(
            f"Tier 1, not separated from it by the test over {seeds} seeds: {names}. Not separated does "
            "not mean equal: each line below says what these seeds could detect."
        )
    me = f"{best['cc']}+{best['queue']}"
    compared = int(table["vs_best_test"].notna().sum())
    for _, row in table.iterrows():
        if row["rank"] == 1:
            continue
        reason = cmp.why(best, row)
        other = f"{row['cc']}+{row['queue']}"
        if not row["feasible"]:
            lines.append(f"{me} above {other} (infeasible ({row['violated']})): {reason}")
            continue
        tier = int(row["tier"])
        if pd_isna(row["vs_best_test"]):
            lines.append(f"{me} ahead of {other} (tier {tier}; untested: fewer than two runs): {reason}")
        elif bool(row["vs_best_separated"]):
            lines.append(f"{me} above {other} (tier {tier}): {reason}")
        else:
            n = int(min(best["seeds"], row["seeds"]))
            lo, hi = row["vs_best_ci95_lo"], row["vs_best_ci95_hi"]
            interval = (
                f"score difference {row['vs_best_diff']:.3f}, 95 % interval {lo:.3f} to {hi:.3f} "
                f"({row['vs_best_test']})"
            )
            if lo <= 0.0 <= hi:
                lines.append(
                    f"{me} ahead of {other} (tier {tier}), which {n} seeds cannot separate: {interval}, "
                    f"so these seeds detect only differences beyond ±{(hi - lo) / 2.0:.3f}: {reason}"
                )
            else:
                # Significant on its own, not once corrected for the comparisons with the best.
                lines.append(
                    f"{me} ahead of {other} (tier {tier}), which {n} seeds do not separate once corrected "
                    f"for the {compared} comparisons with {me} (Holm; p = {row['same_as_best_p']:.3g} "
                    f"alone): {interval}: {reason}"
                )
    return lines


def pd_isna(value: Any) -> bool:
    try:
        return bool(math.isnan(value))
    except TypeError:
        return value is None
