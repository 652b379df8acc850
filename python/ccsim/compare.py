"""``ccsim compare``: every congestion control x queue discipline on the user's own scenario,
over seeds, ranked for an objective, with the ties that the seeds cannot separate said as such.

The matrix is a sweep (``sweep.py``): one point per (congestion control, queue discipline),
``seeds`` replicates with *common* seeds (every combination sees the same start times and
random draws: a paired design), run on local processes or a Dask cluster, resumable (finished
runs are kept under ``OUT/runs/`` and skipped when the command is run again).

What is varied (docs/compare.md):

- the congestion control of every TCP ``[[flows]]`` table (UDP/DCCP flows and control loops
  keep theirs);
- the discipline of the scenario's bottleneck queue (``topology.bottleneck_queue``, or the
  topology's default: ``A->B`` of a dumbbell), keeping its buffer ``limit`` and nothing else:
  each discipline runs at its own defaults. The other direction of that link keeps its queue.

Per run: bottleneck utilization, goodput, Jain's index (overall and within each flow group),
mean and 99th-percentile queueing delay at the bottleneck (the engine's sojourn histogram),
drop ratio, retransmissions and, with control loops, ITAE. Per combination: mean, standard
deviation and a Student-t 95 % confidence interval over the seeds, clipped to the metric's range
(Jain's index and ratios within [0, 1], rates and delays >= 0).

Objective: a weighted sum of metrics, each scaled (see ``Objective``), scored per run; ranked by
the mean score. Tiers are contiguous blocks of ranks: the best remaining combination and the
combinations ranked right below it that a t-test cannot separate from it (paired over the
common seeds, Welch's when the cells' seeds differ; Holm-corrected at alpha = 0.05). Where the
test separates nothing, the report gives the interval of the score difference, i.e. what these
seeds could have detected. The statistics are scipy's (``scipy.stats``).
"""

from __future__ import annotations

import base64
import copy
import html
import io
import json
import math
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from .errors import ScenarioError
from .metrics import jain
from .overrides import apply_overrides
from .scenario import from_dict, read_toml

__all__ = [
    "CompareSpec",
    "Objective",
    "Comparison",
    "DEFAULT_QUEUES",
    "PRESETS",
    "METRICS",
    "prepare",
    "parse_objective",
    "check_objective",
    "run_compare",
    "analyse",
    "write_report",
    "Difference",
    "difference",
    "mean_ci",
    "clip_interval",
    "welch_test",
    "holm",
]

# The papers' queue disciplines (ANCE: DT, RED, CoDel, PIE; Piotrowska: DT, PIE, CoDel).
DEFAULT_QUEUES = ("droptail", "red", "codel", "pie")
# Reno differs from NewReno only without SACK (it needs sack = false).
RENO_NEEDS_NO_SACK = "reno"

ALPHA = 0.05
RUNS_TRACE_POINTS = 400  # trace samples per run when the scenario asks for none


# --- metrics ----------------------------------------------------------------------------------


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


UNIT_INTERVAL = (0.0, 1.0)

METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric("utilization", "utilization", True, "%", False, UNIT_INTERVAL),
        Metric("goodput", "goodput", True, "Mbps", True),
        Metric("jain", "Jain", True, "", False, UNIT_INTERVAL),
        Metric("jain_groups", "Jain within groups (mean)", True, "", False, UNIT_INTERVAL),
        Metric("mean_delay", "mean queueing delay", False, "ms", True),
        Metric("p99_delay", "p99 queueing delay", False, "ms", True),
        Metric("drop_ratio", "drop ratio", False, "%", False, UNIT_INTERVAL),
        Metric("retransmissions", "retransmissions", False, "", True),
        Metric("itae", "ITAE", False, "", True),
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
        return Metric(name, f"Jain in {name[5:]}", True, "", False, UNIT_INTERVAL)
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
    from . import units

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


# --- statistics ---------------------------------------------------------------------------------
#
# Every distribution and test is scipy's. What is written here is only the handling of samples
# without spread (scipy's t statistic is then 0/0 or infinite) and Holm's step-down procedure,
# which scipy does not have (statsmodels has it; the tests compare with it).

LEVEL = 1.0 - ALPHA  # of every confidence interval
# Relative spread below which a sample counts as constant (a scenario without a random element
# gives the same run on every seed; differences of equal floats are exactly 0).
NO_SPREAD = 1e-12


def mean_ci(values: list[float], level: float = LEVEL) -> tuple[float, float, float]:
    """Mean, sample standard deviation and the half-width t(0.5 + level/2, n-1) s/sqrt(n) of the
    Student-t interval of the mean (NaN with fewer than two values)."""
    n = len(values)
    if n == 0:
        return math.nan, math.nan, math.nan
    x = np.asarray(values, dtype=float)
    mean = float(x.mean())
    if n < 2:
        return mean, math.nan, math.nan
    sd = float(x.std(ddof=1))
    return mean, sd, float(stats.t.ppf(0.5 + level / 2.0, n - 1)) * sd / math.sqrt(n)


def clip_interval(mean: float, half: float, bounds: tuple[float, float]) -> tuple[float, float]:
    """The interval mean ± half within ``bounds`` (NaN when there is no interval)."""
    if math.isnan(mean) or math.isnan(half):
        return math.nan, math.nan
    lo, hi = bounds
    return max(mean - half, lo), min(mean + half, hi)


@dataclass(frozen=True)
class Difference:
    """The difference a - b of the mean scores of two cells: its estimate, its 95 % interval and
    the two-sided p-value of "no difference", by ``test`` over ``n`` seeds (pairs when paired).

    The interval's half-width is what the seeds can resolve: a difference smaller than it would
    not be significant (uncorrected), whatever its sign."""

    test: str  # "paired t" or "Welch t"
    n: int
    diff: float
    lo: float
    hi: float
    p: float

    @property
    def resolution(self) -> float:
        return (self.hi - self.lo) / 2.0


def _no_spread(samples: list[np.ndarray], diff: float, test: str, n: int) -> Difference | None:
    """The test of samples without spread, which scipy cannot compute: equal means tie (p = 1),
    different ones differ (p = 0); None when there is spread (scipy's case)."""
    scale = max([float(np.abs(x).max()) for x in samples] + [1e-300])
    if any(float(np.ptp(x)) > NO_SPREAD * scale for x in samples):
        return None
    p = 1.0 if abs(diff) <= NO_SPREAD * scale else 0.0
    return Difference(test, n, diff, diff, diff, p)


def _quiet(test: Any, *args: Any, **kwargs: Any) -> Any:
    """A scipy test without its warning about a nearly constant sample: the variance of a
    constant sample (DropTail pinned at its limit) is 0, which is the right answer."""
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Precision loss occurred", category=RuntimeWarning)
        return test(*args, **kwargs)


def difference(a: dict[int, float], b: dict[int, float]) -> Difference | None:
    """The difference a - b of two cells' scores (seed -> score): a paired t-test
    (``scipy.stats.ttest_rel``) when both cells ran the same seeds, two or more, since the
    seeds are common and pairing removes what the seed does to both; Welch's
    (``scipy.stats.ttest_ind(equal_var=False)``) when their seeds differ (a failed run). None
    when either cell has fewer than two runs."""
    if len(a) < 2 or len(b) < 2:
        return None
    if set(a) == set(b):
        seeds = sorted(a)
        x = np.array([a[s] for s in seeds], dtype=float)
        y = np.array([b[s] for s in seeds], dtype=float)
        d = x - y
        fixed = _no_spread([d], float(d.mean()), "paired t", len(d))
        if fixed is not None:
            return fixed
        res = _quiet(stats.ttest_rel, x, y)
        test = "paired t"
    else:
        x = np.array(list(a.values()), dtype=float)
        y = np.array(list(b.values()), dtype=float)
        fixed = _no_spread([x, y], float(x.mean() - y.mean()), "Welch t", min(len(x), len(y)))
        if fixed is not None:
            return fixed
        res = _quiet(stats.ttest_ind, x, y, equal_var=False)
        test = "Welch t"
    ci = res.confidence_interval(LEVEL)
    return Difference(
        test, min(len(x), len(y)), float(x.mean() - y.mean()), float(ci.low), float(ci.high), float(res.pvalue)
    )


def welch_test(a: list[float], b: list[float]) -> float:
    """Two-sided p-value of Welch's t-test for equal means (scipy), NaN with fewer than two
    values on a side. Equal samples without spread give 1; different means without spread give 0."""
    d = difference(dict(enumerate(a)), {len(a) + i: v for i, v in enumerate(b)})
    return math.nan if d is None else d.p


def holm(pvalues: list[float], alpha: float = ALPHA) -> list[bool]:
    """Holm's step-down procedure: which hypotheses are rejected at family-wise level alpha."""
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    rejected = [False] * len(pvalues)
    m = len(pvalues)
    for k, i in enumerate(order):
        if pvalues[i] <= alpha / (m - k):
            rejected[i] = True
        else:
            break
    return rejected


# --- the matrix ---------------------------------------------------------------------------------


@dataclass
class CompareSpec:
    """The comparison: scenario, what is varied, seeds."""

    file: str
    scenario: Path
    overrides: list[str]
    ccs: list[str]
    queues: list[Any]  # names, or tables with kind
    seeds: int
    bottleneck: str
    queue_key: str
    cc_keys: list[str]
    fixed: dict[str, Any]
    groups: list[str]
    has_control: bool
    notes: list[str]
    master_seed: int = 0

    def queue_label(self, queue: Any) -> str:
        return queue if isinstance(queue, str) else str(queue.get("kind"))

    def combinations(self) -> list[tuple[str, Any]]:
        return [(cc, q) for cc in self.ccs for q in self.queues]


def _queue_table(base: Any, kind: str, registry: Any) -> dict[str, Any]:
    """Discipline ``kind`` at its defaults, with the base queue's limit when it has one."""
    table: dict[str, Any] = {"kind": kind}
    model = registry.model("queue", kind, "--queue")
    limit = base.get("limit") if isinstance(base, dict) else None
    if limit is not None and model.param("limit") is not None:
        table["limit"] = limit
    return table


def _bottleneck_location(data: dict[str, Any], topo_kind: str, name: str, file: str) -> tuple[str, bool]:
    """The scenario key of the link spec holding the bottleneck queue, and whether the queue is
    its forward (a->b) direction."""
    frm, _, to = name.partition("->")
    topo = data.get("topology", {})
    if topo_kind == "dumbbell" and {frm, to} == {"A", "B"}:
        return "topology.bottleneck", frm == "A"
    if topo_kind == "star" and {frm, to} == {"router", "controller"}:
        return "topology.bottleneck", frm == "router"
    if topo_kind == "explicit":
        for i, link in enumerate(topo.get("links", [])):
            if {link.get("a"), link.get("b")} == {frm, to}:
                return f"topology.links[{i}]", link.get("a") == frm
    if topo_kind == "daisy_chain":
        for i in range(len(topo.get("hops", []))):
            if {f"R{i}", f"R{i + 1}"} == {frm, to}:
                return f"topology.hops[{i}]", frm == f"R{i}"
    raise ScenarioError(
        file,
        "topology.bottleneck_queue",
        f"compare varies the bottleneck queue, but {name!r} is an access link's; name a "
        "router-to-router queue (the dumbbell's A->B, a chain hop, an explicit link)",
    )


def _check_model(registry: Any, family: str, name: str, file: str, option: str) -> None:
    try:
        registry.model(family, name, option)
    except ValueError as exc:
        raise ScenarioError(file, option, getattr(exc, "message", str(exc))) from None


def _get(data: Any, path: list[str | int]) -> Any:
    for part in path:
        if isinstance(part, int):
            if not isinstance(data, list) or part >= len(data):
                return None
            data = data[part]
        else:
            if not isinstance(data, dict):
                return None
            data = data.get(part)
    return data


def _path(key: str) -> list[str | int]:
    from .overrides import parse_key

    return parse_key(key)


def prepare(
    file: str | Path,
    ccs: list[str] | None = None,
    queues: list[str] | None = None,
    seeds: int = 3,
    overrides: list[str] | None = None,
    master_seed: int = 0,
) -> CompareSpec:
    """Check the scenario and the lists; decide what is varied (see the module doc)."""
    from .registry import get_registry

    file = str(file)
    registry = get_registry()
    data = read_toml(file)
    apply_overrides(data, list(overrides or []), file)
    scenario = from_dict(copy.deepcopy(data), file)
    config = scenario.to_config()
    notes: list[str] = []
    if not isinstance(seeds, int) or seeds < 1:
        raise ScenarioError(file, "--seeds", f"expected at least 1, got {seeds!r}")

    flows = data.get("flows") or []
    tcp_flows = []
    for i, flow in enumerate(flows):
        transport = flow.get("transport", "tcp")
        kind = transport.get("kind") if isinstance(transport, dict) else transport
        if kind == "tcp":
            tcp_flows.append(i)
    if not tcp_flows:
        raise ScenarioError(file, "flows", "compare varies the congestion control of TCP flows; the scenario has none")
    sack = any(
        f["transport"]["kind"] == "tcp" and f["transport"].get("params", {}).get("sack", True)
        for f in config["flows"]
        if f.get("transport")
    )
    queue_names = list(queues) if queues is not None else list(DEFAULT_QUEUES)
    if not queue_names:
        raise ScenarioError(file, "--queue", "give at least one queue discipline")
    for name in queue_names:
        _check_model(registry, "queue", name, file, "--queue")
    if ccs is None:
        # Congestion controls that need a queue discipline of their own (the registry's
        # partner_queues) are left out unless one of those is compared.
        ccs, left = [], []
        for model in registry.models("cc"):
            if model.partner_queues and not set(model.partner_queues) & set(queue_names):
                left.append(f"{model.name} (needs queue {' or '.join(repr(q) for q in model.partner_queues)})")
            elif not (model.name == RENO_NEEDS_NO_SACK and sack):
                ccs.append(model.name)
        if left:
            notes.append(f"congestion controls left out by default: {', '.join(left)}")
        if sack:
            notes.append("reno left out: the flows use SACK, with which reno recovers as newreno does")
    else:
        if not ccs:
            raise ScenarioError(file, "--cc", "give at least one congestion control")
        for name in ccs:
            _check_model(registry, "cc", name, file, "--cc")
    if len(set(ccs)) != len(ccs) or len(set(queue_names)) != len(queue_names):
        raise ScenarioError(file, "--cc" if len(set(ccs)) != len(ccs) else "--queue", "a name is listed twice")

    bottleneck = config.get("bottleneck")
    if not bottleneck:
        raise ScenarioError(file, "topology.bottleneck_queue", "the scenario names no bottleneck queue")
    prefix, forward = _bottleneck_location(data, scenario.topology.kind, bottleneck, file)
    link = _get(data, _path(prefix)) or {}
    base_queue = link.get("queue") if forward else (_get(link, ["reverse", "queue"]) or link.get("queue"))
    fixed: dict[str, Any] = {}
    if forward:
        queue_key = f"{prefix}.queue"
        if _get(link, ["reverse", "queue"]) is None:
            # The link's queue applies to both directions; keep the other one as it was.
            fixed[f"{prefix}.reverse.queue"] = copy.deepcopy(link.get("queue") or "droptail")
    else:
        queue_key = f"{prefix}.reverse.queue"
    base_table = base_queue if isinstance(base_queue, dict) else {}
    queue_tables = [_queue_table(base_table, name, registry) for name in queue_names]

    # The report draws the bottleneck queue and the windows of the top combinations.
    if scenario.trace is None:
        interval_ms = max(10, int(scenario.simulation.duration / 1e6 / RUNS_TRACE_POINTS))
        fixed["trace"] = {"interval": f"{interval_ms}ms", "queues": [bottleneck], "cwnd": True}
    else:
        if not scenario.trace.cwnd:
            fixed["trace.cwnd"] = True
        if scenario.trace.queues and bottleneck not in scenario.trace.queues:
            fixed["trace.queues"] = [*scenario.trace.queues, bottleneck]
    if len(tcp_flows) == len(flows):
        cc_keys = ["flows.cc"]
    else:
        cc_keys = [f"flows[{i}].cc" for i in tcp_flows]
    # Jain within a group says something only when the group has two flows or more.
    sizes: dict[str, int] = {}
    for f in flows:
        if f.get("group"):
            sizes[f["group"]] = sizes.get(f["group"], 0) + int(f.get("count", 1))
    groups = sorted(g for g, n in sizes.items() if n >= 2)
    return CompareSpec(
        file=file,
        scenario=Path(file).resolve(),
        overrides=list(overrides or []),
        ccs=list(ccs),
        queues=queue_tables,
        seeds=seeds,
        bottleneck=bottleneck,
        queue_key=queue_key,
        cc_keys=cc_keys,
        fixed=fixed,
        groups=groups,
        has_control=bool(config.get("control")),
        notes=notes,
        master_seed=master_seed,
    )


def check_objective(spec: CompareSpec, objective: Objective) -> None:
    """Refuse, before anything runs, an objective that the scenario cannot measure."""
    names = list(objective.weights) + [c.metric for c in objective.constraints]
    if "itae" in names and not spec.has_control:
        raise ScenarioError(spec.file, "--objective", "ITAE needs a [[control]] loop in the scenario")
    for name in names:
        if name.startswith("jain.") and name[5:] not in spec.groups:
            groups = ", ".join(spec.groups) or "none"
            raise ScenarioError(
                spec.file, "--objective", f"no flow group {name[5:]!r} of two flows or more (groups: {groups})"
            )


def sweep_spec(spec: CompareSpec) -> Any:
    """The sweep that runs the matrix: one point per combination, in ``combinations()`` order."""
    from .overrides import parse_value
    from .sweep import SweepSpec

    base = read_toml(spec.file)
    fixed: dict[str, Any] = {}
    for text in spec.overrides:
        key, _, raw = text.partition("=")
        fixed[key.strip()] = parse_value(raw.strip())
    fixed.update(spec.fixed)
    points = []
    for cc, queue in spec.combinations():
        point: dict[str, Any] = {key: cc for key in spec.cc_keys}
        point[spec.queue_key] = copy.deepcopy(queue)
        points.append(point)
    return SweepSpec(
        file=spec.file,
        scenario=spec.scenario,
        base=base,
        fixed=fixed,
        points=points,
        seeds=spec.seeds,
        seed_mode="common",
        master_seed=spec.master_seed,
        description=f"compare {Path(spec.file).name}",
    )


def run_compare(
    spec: CompareSpec, out: str | Path, jobs: int | None = None, scheduler: str | None = None, progress: bool = False
) -> Any:
    """Run (or resume) the matrix into ``out``; the sweep's result (``SweepInterrupted`` on
    Ctrl-C/SIGTERM, with everything finished kept)."""
    from .sweep import run_sweep

    return run_sweep(sweep_spec(spec), out, jobs=jobs, scheduler=scheduler, progress=progress)


# --- analysis -----------------------------------------------------------------------------------


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
    if spec.groups:
        import pandas as pd

        flows = pd.read_parquet(out / row["run_dir"] / "flows.parquet")
        flows = flows[flows["app"] != "ncs"]
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
    metrics += sorted(c for c in runs.columns if c.startswith("jain.") and c not in metrics)
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


# --- commands ---------------------------------------------------------------------------------


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(type(value).__name__)


def _set_text(key: str, value: Any) -> str:
    text = value if isinstance(value, str) and re.fullmatch(r"[A-Za-z0-9_.\-]+", value) else _toml_value(value)
    return f"--set {shlex.quote(f'{key}={text}')}"


def rerun_command(spec: CompareSpec, cc: str, queue: Any, seed: int | None, out: str | None = None) -> str:
    """``ccsim run`` of one cell (one seed when given), identical to the comparison's run."""
    parts = ["ccsim run", shlex.quote(spec.file)]
    parts += [f"--set {shlex.quote(o)}" for o in spec.overrides]
    parts += [_set_text(k, v) for k, v in spec.fixed.items()]
    parts += [_set_text(k, cc) for k in spec.cc_keys]
    parts.append(_set_text(spec.queue_key, queue))
    if seed is not None:
        parts.append(f"--seed {seed}")
    if out:
        parts.append(f"--out {shlex.quote(out)}")
    return " ".join(parts)


def compare_command(spec: CompareSpec, objective: Objective, out: Path) -> str:
    parts = [
        "ccsim compare",
        shlex.quote(spec.file),
        "--cc",
        ",".join(spec.ccs),
        "--queue",
        ",".join(spec.queue_label(q) for q in spec.queues),
        "--seeds",
        str(spec.seeds),
        "--objective",
        shlex.quote(objective.text),
        "--out",
        shlex.quote(str(out)),
    ]
    if spec.master_seed:
        parts.append(f"--master-seed {spec.master_seed}")
    parts += [f"--set {shlex.quote(o)}" for o in spec.overrides]
    return " ".join(parts)


# --- output -------------------------------------------------------------------------------------


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


def pd_isna(value: Any) -> bool:
    try:
        return bool(math.isnan(value))
    except TypeError:
        return value is None


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


_CSS = """
body { font-family: sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 3px 6px; text-align: right; }
th { background: #eee; } td.l { text-align: left; }
tr.infeasible td { color: #999; } tr.tier1 td { background: #eef8ee; }
code, pre { font-size: 0.8em; background: #f6f6f6; } pre { padding: 4px; white-space: pre-wrap; }
img { max-width: 100%; }
"""


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


def _html(cmp: Comparison, out: Path, info: dict[str, Any]) -> str:
    e = html.escape
    shown = list(cmp.metrics)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>ccsim compare: {e(Path(cmp.spec.file).name)}</title>",
        f"<style>{_CSS}</style></head><body>",
    ]
    parts.append(f"<h1>ccsim compare: {e(Path(cmp.spec.file).name)}</h1>")
    parts.append(
        f"<p>Objective <b>{e(cmp.objective.text)}</b>: {e(cmp.objective.describe())}. "
        f"{cmp.spec.seeds} seeds per combination (common seeds); bottleneck queue "
        f"<code>{e(cmp.spec.bottleneck)}</code> (<code>{e(cmp.spec.queue_key)}</code>). Mean ± half-width of "
        "the Student-t 95 % interval over seeds; [low, high] where the metric's range (0 to 1 for Jain's "
        "index and ratios, 0 up for rates and delays) clips it. Tiers: contiguous blocks of ranks; a "
        "combination shares the tier of the best remaining one while a t-test of their scores (paired "
        "over the common seeds, Holm-corrected, alpha 0.05) does not separate it, nor any ranked "
        "between them. p vs best: that test, uncorrected.</p>"
    )
    parts.append('<h2>Verdict</h2><ul id="verdict">')
    parts += [f"<li>{e(line)}</li>" for line in info["verdict"]]
    parts.append("</ul>")
    if cmp.spec.notes or cmp.failed:
        parts.append(
            "<p>"
            + "<br>".join(e(n) for n in cmp.spec.notes)
            + (f"<br>{cmp.failed} runs failed (see results.parquet)" if cmp.failed else "")
            + "</p>"
        )
    parts.append(
        '<h2>Ranking</h2><table id="ranking"><thead><tr><th>rank</th><th>tier</th><th>cc</th>'
        "<th>queue</th><th>score</th><th>p vs best</th>"
    )
    parts += [f"<th>{e(metric_of(m).title)}</th>" for m in shown]
    parts.append("<th>constraints</th></tr></thead><tbody>")
    for _, row in cmp.table.iterrows():
        tier = "-" if pd_isna(row["tier"]) else str(int(row["tier"]))
        cls = "infeasible" if not row["feasible"] else ("tier1" if tier == "1" else "")
        p = row["same_as_best_p"]
        cells = [
            str(row["rank"]),
            tier,
            f"<td class=l>{e(row['cc'])}</td>",
            f"<td class=l>{e(row['queue'])}</td>",
            e(_pm(row, "score", raw=True)),
            "-" if p is None or pd_isna(p) else f"{p:.3g}",
        ]
        cells += [e(_pm(row, m)) for m in shown]
        cells.append(f"<td class=l>{'ok' if row['feasible'] else e(row['violated'])}</td>")
        parts.append(
            f'<tr class="{cls}">' + "".join(c if c.startswith("<td") else f"<td>{c}</td>" for c in cells) + "</tr>"
        )
    parts.append("</tbody></table>")
    parts.append("<h2>Pareto</h2>")
    parts.append(
        f'<img id="pareto" alt="Pareto plot: delay and fairness vs utilization" '
        f'src="data:image/png;base64,{_pareto_figure(cmp)}">'
    )
    traces = _trace_figure(cmp, out)
    parts.append("<h2>Traces of the top combinations</h2>")
    if traces:
        parts.append(f'<img id="traces" alt="queue and cwnd traces" src="data:image/png;base64,{traces}">')
    else:
        parts.append("<p>No traces.</p>")
    parts.append("<h2>Rerunning</h2><p>The whole comparison (finished runs are reused):</p>")
    parts.append(f"<pre>{e(info['command'])}</pre>")
    parts.append(
        '<p>Each cell, one run per seed (identical to the comparison\'s run):</p><table id="commands">'
        "<thead><tr><th>cc</th><th>queue</th><th>seed</th><th>command</th></tr></thead><tbody>"
    )
    combos = {(cc, cmp.spec.queue_label(q)): q for cc, q in cmp.spec.combinations()}
    for _, row in cmp.runs.sort_values(["cc", "queue", "replicate"]).iterrows():
        cmd = rerun_command(cmp.spec, row["cc"], combos[(row["cc"], row["queue"])], int(row["seed"]))
        parts.append(
            f"<tr><td class=l>{e(row['cc'])}</td><td class=l>{e(row['queue'])}</td><td>{row['seed']}</td>"
            f"<td class=l><code>{e(cmd)}</code></td></tr>"
        )
    parts.append("</tbody></table>")
    parts.append(
        "<p>Data: comparison.csv / .parquet (one row per combination), runs_metrics.csv / .parquet "
        "(one row per run), results.parquet and runs/ (the sweep).</p>"
    )
    # Says on the page itself how many figures the browser decoded (read by the browser test).
    parts.append(
        "<script>window.addEventListener('load', function () { var n = 0; "
        "for (const img of document.images) { if (img.complete && img.naturalWidth > 0) n++; } "
        "document.body.setAttribute('data-images-shown', n + '/' + document.images.length); });</script>"
    )
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
