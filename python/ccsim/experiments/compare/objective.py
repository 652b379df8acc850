"""What ``ccsim compare`` measures and ranks by: the metrics of a run (with their direction, unit
and range), the presets, and the objective: weighted metrics and hard constraints, read from the
``--objective`` text."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from ...errors import ScenarioError


@dataclass(frozen=True)
class Metric:
    name: str
    title: str
    higher_is_better: bool
    unit: str  # how it is printed: "", "ms", "Mbps", "%"
    scaled: bool  # divided by its mean over all runs in a score (False: already 0..1)
    # The values the metric can take; confidence intervals are clipped to them (a t interval
    # over few seeds reaches past them: Jain's index 0.51 ± 2.86 over 2 seeds).
    bounds: tuple[float, float] = (0.0, math.inf)
    # Its column in the exported tables, named with its unit as the run results are
    # (goodput_bps, p99_delay_s; ratios in 0..1 and counts have none).
    column: str = ""


UNIT_INTERVAL = (0.0, 1.0)

METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric("utilization", "bottleneck utilization", True, "%", False, UNIT_INTERVAL, "utilization"),
        Metric("goodput", "goodput", True, "Mbps", True, column="goodput_bps"),
        Metric("jain", "Jain's index", True, "", False, UNIT_INTERVAL, "jain_index"),
        Metric("jain_groups", "Jain's index within groups (mean)", True, "", False, UNIT_INTERVAL, "jain_index_groups"),
        Metric("mean_delay", "mean queueing delay (one way)", False, "ms", True, column="mean_delay_s"),
        Metric("p99_delay", "p99 queueing delay (one way)", False, "ms", True, column="p99_delay_s"),
        Metric("drop_ratio", "drop probability", False, "%", False, UNIT_INTERVAL, "drop_ratio"),
        Metric("retransmissions", "retransmitted segments", False, "", True, column="retransmissions"),
        Metric("itae", "ITAE", False, "", True, column="itae"),
        Metric("p99_fct_short", "p99 FCT of flows up to 100 kB", False, "ms", True, column="p99_fct_short_s"),
        Metric("mean_slowdown", "mean slowdown of sized flows", False, "", True, (1.0, math.inf), "mean_slowdown"),
    )
}

PRESETS: dict[str, dict[str, float]] = {
    # Weights; the sign comes from the metric's direction.
    "latency": {"p99_delay": 1.0, "mean_delay": 1.0, "utilization": 0.5},
    "throughput": {"utilization": 1.0, "goodput": 1.0},
    "fairness": {"jain": 1.0, "jain_groups": 1.0, "utilization": 0.25},
    "control": {"itae": 1.0, "p99_delay": 0.25},
}
PRESET_TEXT = {
    "latency": "min p99_delay + min mean_delay + 0.5 max utilization",
    "throughput": "max utilization + max goodput",
    "fairness": "max jain + max jain_groups (when the flows have groups) + 0.25 max utilization",
    "control": "min itae + 0.25 min p99_delay (needs a [[control]] loop)",
}


def metric_of(name: str) -> Metric:
    """The metric ``name`` (``jain.G`` is Jain's index within flow group G)."""
    if name in METRICS:
        return METRICS[name]
    if name.startswith("jain."):
        return Metric(name, f"Jain's index in {name[5:]}", True, "", False, UNIT_INTERVAL, f"jain_index.{name[5:]}")
    raise KeyError(name)


def format_value(metric: str, value: float | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    unit = metric_of(metric).unit if metric in METRICS or metric.startswith("jain.") else ""
    if unit == "ms":
        return f"{value * 1e3:.2f} ms"
    if unit == "%":
        return f"{value * 100:.2f} %"
    if unit == "Mbps":
        return f"{value / 1e6:.2f} Mbit/s"
    if metric == "retransmissions":
        return f"{value:.0f}"
    if abs(value) >= 1e4:
        return f"{value:.4g}"
    return f"{value:.3f}"


# --- the objective --------------------------------------------------------------------------


@dataclass(frozen=True)
class Constraint:
    metric: str
    op: str  # ">=", "<=", ">", "<"
    value: float
    text: str

    def holds(self, x: float | None) -> bool:
        if x is None or math.isnan(x):
            return False
        return {">=": x >= self.value, "<=": x <= self.value, ">": x > self.value, "<": x < self.value}[self.op]


@dataclass
class Objective:
    """What to rank by: ``weights`` (metric -> weight >= 0; the direction is the metric's) and
    hard ``constraints`` on the combination's mean over seeds.

    A run's score is sum_m sign_m w_m x_m / s_m, where sign is +1 for metrics where more is
    better and -1 otherwise, and s_m is 1 for metrics already on 0..1 (utilization, Jain, drop
    ratio) and the mean of x_m over every run of the comparison otherwise, so that weights
    compare relative changes. Only the differences between scores mean anything.
    """

    text: str
    weights: dict[str, float] = field(default_factory=dict)
    constraints: list[Constraint] = field(default_factory=list)

    def describe(self) -> str:
        terms = [f"{w:g} x {'max' if metric_of(m).higher_is_better else 'min'} {m}" for m, w in self.weights.items()]
        text = " + ".join(terms) or "none"
        if self.constraints:
            text += "; subject to " + ", ".join(c.text for c in self.constraints)
        return text


_CONSTRAINT = re.compile(r"^\s*([A-Za-z_][\w.\-]*)\s*(>=|<=|>|<)\s*(.+?)\s*$")
_TERM = re.compile(r"^\s*(max|min)\s*:\s*([A-Za-z_][\w.\-]*)\s*(?:\*\s*([0-9.eE+\-]+))?\s*$")


def _constraint_value(metric: str, text: str, where: str) -> float:
    from ...scenario import units

    m = metric_of(metric)
    try:
        if m.unit == "ms":
            return units.parse_time(text) / 1e9
        if m.unit == "%":
            return float(text[:-1]) / 100 if text.endswith("%") else float(text)
        if m.unit == "Mbps":
            return float(units.parse_rate(text))
        return float(text)
    except (ValueError, units.UnitError) as exc:
        raise ScenarioError("", where, f"bad value {text!r} for {metric}: {exc}") from None


def parse_objective(text: str, where: str = "--objective") -> Objective:
    """``latency``, ``fairness``, ``throughput``, ``control``, or a comma-separated list of
    presets, terms ``max:METRIC[*WEIGHT]`` / ``min:METRIC[*WEIGHT]`` and constraints
    ``METRIC OP VALUE`` (``jain >= 0.9``, ``p99_delay <= 20ms``, ``drop_ratio < 1%``).
    Constraints alone rank by ``throughput``."""
    objective = Objective(text=text)
    allowed = ", ".join(list(METRICS) + ["jain.GROUP"])
    items = [item for item in text.split(",") if item.strip()]
    if not items:
        raise ScenarioError("", where, f"empty objective; give a preset ({', '.join(PRESETS)}) or terms")
    for item in items:
        item = item.strip()
        if item in PRESETS:
            for metric, weight in PRESETS[item].items():
                objective.weights[metric] = objective.weights.get(metric, 0.0) + weight
            continue
        term = _TERM.match(item)
        if term:
            direction, metric, weight_text = term.group(1), term.group(2), term.group(3)
            try:
                m = metric_of(metric)
            except KeyError:
                raise ScenarioError("", where, f"unknown metric {metric!r} in {item!r}; metrics: {allowed}") from None
            if (direction == "max") != m.higher_is_better:
                better = "more" if m.higher_is_better else "less"
                raise ScenarioError(
                    "",
                    where,
                    f"{item!r}: {better} {metric} is better; write {'max' if m.higher_is_better else 'min'}:{metric}",
                )
            try:
                w = 1.0 if weight_text is None else float(weight_text)
            except ValueError:
                raise ScenarioError("", where, f"bad weight in {item!r}") from None
            if not (w > 0 and math.isfinite(w)):
                raise ScenarioError("", where, f"a weight must be above 0, got {item!r}")
            objective.weights[metric] = objective.weights.get(metric, 0.0) + w
            continue
        cons = _CONSTRAINT.match(item)
        if cons:
            metric, op, value = cons.groups()
            try:
                metric_of(metric)
            except KeyError:
                raise ScenarioError("", where, f"unknown metric {metric!r} in {item!r}; metrics: {allowed}") from None
            objective.constraints.append(Constraint(metric, op, _constraint_value(metric, value, where), item))
            continue
        raise ScenarioError(
            "",
            where,
            f"cannot read {item!r}: expected a preset ({', '.join(PRESETS)}), "
            "max:METRIC[*W], min:METRIC[*W] or a constraint such as 'jain >= 0.9'",
        )
    if not objective.weights:
        objective.weights = dict(PRESETS["throughput"])
    return objective
