"""Checking a query by simulation: ``check`` runs the scenario with seeds derived from its master
seed, on local processes or a Dask cluster, ``run_batch`` simulates and ``judge`` evaluates the
path formula on each run (worker side), and the outcomes become an ``SmcResult``: an estimate
with its intervals, or a sequential test's decision, and the first-passage curve."""

from __future__ import annotations

import json
import logging
import math
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import ScenarioError
from ...results.tables import with_records
from .query import Node, Query, parse_query
from .statistics import Sprt, chernoff_runs, clopper_pearson
from .vocabulary import Source, random_elements, random_models, resolve_name, scenario_shape

logger = logging.getLogger(__name__)

DEFAULT_TRACE_INTERVAL_NS = 10_000_000
DEFAULT_MAX_RUNS = 10_000


# --- evaluation (worker side) ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Plan:
    """What a worker needs to run and judge runs: the configuration and the resolved query."""

    config_json: str
    path: str
    bound_s: float
    expr: Node
    sources: dict[str, Source]
    warmup_s: float


def _series(raw: dict[str, Any], source: Source, bound: float, warmup: float) -> tuple[np.ndarray, np.ndarray] | float:
    """(times, values) of a series up to ``bound``, or a scalar's value."""
    if source.kind == "trace":
        traces = raw.get("traces") or {}
        t = np.asarray(traces.get("time_s", []), float)
        v = np.asarray(traces.get(source.key, []), float)
    elif source.kind == "control":
        index, series = source.key
        log = raw.get("control_traces") or {}
        loops = np.asarray(log.get("loop", []), int)
        mask = loops == index
        t = np.asarray(log.get("time_s", []), float)[mask]
        error = np.asarray(log.get("error", []), float)[mask]
        scored = t >= warmup  # as ncs/score.rs: samples from the warm-up on
        if series == "itae":
            v = np.cumsum(np.where(scored, t * np.abs(error), 0.0))
        elif series == "iae":
            v = np.cumsum(np.where(scored, np.abs(error), 0.0))
        elif series == "ise":
            v = np.cumsum(np.where(scored, error * error, 0.0))
        elif series == "abs_error":
            v = np.abs(error)
        else:
            v = np.asarray(log.get(series, []), float)[mask]
    else:
        table, index, fld = source.key
        if table == "top":
            value = raw.get(fld)
        elif table == "flows":
            value = raw["flows"][index].get(fld)
        elif table == "queues":
            value = next(q for q in raw["queues"] if q["name"] == index).get(fld)
        else:
            value = raw["control"][index].get(fld)
        if isinstance(value, bool):
            return float(value)
        return float(value) if isinstance(value, (int, float)) else math.nan
    keep = t <= bound + 1e-12
    return t[keep], v[keep]


def _evaluate(node: Node, values: dict[str, Any]) -> Any:
    kind = node[0]
    if kind == "num":
        return node[1]
    if kind == "ref":
        return values[node[1]]
    if kind == "neg":
        return -_evaluate(node[1], values)
    if kind == "abs":
        return np.abs(_evaluate(node[1], values))
    if kind == "arith":
        x, y = _evaluate(node[2], values), _evaluate(node[3], values)
        with np.errstate(divide="ignore", invalid="ignore"):
            return {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide}[node[1]](x, y)
    if kind == "cmp":
        x, y = _evaluate(node[2], values), _evaluate(node[3], values)
        with np.errstate(invalid="ignore"):
            return {
                "<": np.less,
                "<=": np.less_equal,
                ">": np.greater,
                ">=": np.greater_equal,
                "==": np.equal,
                "!=": np.not_equal,
            }[node[1]](x, y)
    if kind == "not":
        return np.logical_not(_evaluate(node[1], values))
    if kind == "and":
        return np.logical_and(_evaluate(node[1], values), _evaluate(node[2], values))
    if kind == "or":
        return np.logical_or(_evaluate(node[1], values), _evaluate(node[2], values))
    raise AssertionError(f"unknown node {kind}")  # pragma: no cover


def judge(raw: dict[str, Any], plan: _Plan) -> tuple[bool, float | None]:
    """Whether the path formula holds on a run's results, and the first instant φ holds
    (``<>``) or fails (``[]``), None if there is none."""
    series: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    values: dict[str, Any] = {}
    for name, source in plan.sources.items():
        got = _series(raw, source, plan.bound_s, plan.warmup_s)
        if isinstance(got, tuple):
            series[name] = got
        else:
            values[name] = got
    if series:
        grid = np.unique(np.concatenate([t for t, _ in series.values()]))
    else:
        grid = np.asarray([plan.bound_s])
    for name, (t, v) in series.items():
        at = np.searchsorted(t, grid, side="right") - 1  # the sample in force (step function)
        values[name] = np.where(at >= 0, v[np.clip(at, 0, None)] if len(v) else math.nan, math.nan)
    truth = np.broadcast_to(np.asarray(_evaluate(plan.expr, values), bool), grid.shape)
    if plan.path == "<>":
        hits = np.flatnonzero(truth)
        return (True, float(grid[hits[0]])) if len(hits) else (False, None)
    misses = np.flatnonzero(~truth)
    return (False, float(grid[misses[0]])) if len(misses) else (True, None)


def run_batch(arg: tuple[_Plan, list[int]]) -> list[tuple[bool, float | None]]:
    """Worker side: simulate the plan's configuration with each seed and judge the query."""
    from ... import _core

    plan, seeds = arg
    config = json.loads(plan.config_json)
    out = []
    for seed in seeds:
        config["seed"] = seed
        try:
            sim = _core.Simulation(json.dumps(config))
            sim.run_until(sim.duration_ns)
            raw = sim.results()
        except Exception as exc:  # the engine's classes do not pickle: send the text
            raise RuntimeError(f"seed {seed}: {type(exc).__name__}: {exc}") from None
        out.append(judge(with_records(raw), plan))
    return out


# --- checking ----------------------------------------------------------------------------------


@dataclass
class SmcResult:
    """The answer to a query."""

    query: str
    mode: str  # "estimate" or "test"
    runs: int
    successes: int
    alpha: float
    epsilon: float | None
    outcomes: Any
    """pandas DataFrame: ``run``, ``seed``, ``satisfied``, ``time_s`` (first passage / failure)."""
    path: str
    bound_s: float
    random_elements: list[str]
    wall_time_s: float
    beta: float | None = None
    delta: float | None = None
    p0: float | None = None
    comparison: str | None = None
    decision: str | None = None
    """Test: "H0" (Pr >= p0 for a >= query), "H1", or "undecided" (max_runs reached)."""
    planned_runs: int | None = None
    """The Chernoff-Hoeffding run count (estimation; also given with a test, for comparison)."""
    where: str = ""

    @property
    def estimate(self) -> float:
        return self.successes / self.runs if self.runs else math.nan

    @property
    def interval(self) -> tuple[float, float]:
        """Clopper-Pearson interval at confidence 1 - alpha."""
        return clopper_pearson(self.successes, self.runs, self.alpha)

    @property
    def chernoff_interval(self) -> tuple[float, float] | None:
        """estimate ± epsilon, clipped to [0, 1] (holds with probability 1 - alpha at N runs)."""
        if self.epsilon is None:
            return None
        return max(0.0, self.estimate - self.epsilon), min(1.0, self.estimate + self.epsilon)

    @property
    def holds(self) -> bool | None:
        """Test: whether the query's probability bound holds (None if undecided)."""
        if self.decision is None or self.decision == "undecided":
            return None
        return self.decision == "H0"

    @property
    def first_passage(self) -> Any:
        """Cumulative probability over time that φ has first held (``<>``) or first failed
        (``[]``) by ``time_s``: one row per distinct instant, with the count and the
        Clopper-Pearson interval at 1 - alpha. Starts at 0 s and ends at the bound."""
        import pandas as pd

        times = np.sort(self.outcomes["time_s"].dropna().to_numpy(float))
        grid = np.unique(np.concatenate([[0.0], times, [self.bound_s]]))
        counts = np.searchsorted(times, grid, side="right")
        n = max(self.runs, 1)
        lower, upper = clopper_pearson(counts, np.full(counts.shape, n), self.alpha)
        return pd.DataFrame({"time_s": grid, "runs": counts, "probability": counts / n, "lower": lower, "upper": upper})

    def to_dict(self) -> dict[str, Any]:
        lo, hi = self.interval
        out: dict[str, Any] = {
            "query": self.query,
            "mode": self.mode,
            "runs": self.runs,
            "successes": self.successes,
            "estimate": self.estimate,
            "confidence": 1.0 - self.alpha,
            "clopper_pearson": [lo, hi],
            "alpha": self.alpha,
            "epsilon": self.epsilon,
            "chernoff_interval": self.chernoff_interval,
            "planned_runs": self.planned_runs,
            "random_elements": self.random_elements,
        }
        if self.mode == "test":
            out.update(
                comparison=self.comparison,
                p0=self.p0,
                delta=self.delta,
                beta=self.beta,
                decision=self.decision,
                holds=self.holds,
            )
        return out

    def summary_lines(self) -> list[str]:
        lo, hi = self.interval
        lines = [f"{self.query}"]
        lines.append(
            f"  {self.runs} runs on {self.where} in {self.wall_time_s:.1f} s; random elements: "
            f"{'; '.join(self.random_elements)}"
        )
        lines.append(
            f"  satisfied in {self.successes} of {self.runs}: estimate {self.estimate:.4f}, "
            f"Clopper-Pearson [{lo:.4f}, {hi:.4f}] at {100 * (1 - self.alpha):g} % confidence"
        )
        if self.mode == "estimate" and self.chernoff_interval is not None:
            clo, chi = self.chernoff_interval
            lines.append(
                f"  Chernoff-Hoeffding: [{clo:.4f}, {chi:.4f}] (estimate ± {self.epsilon:g} with "
                f"probability >= {1 - self.alpha:g} after {self.planned_runs} runs)"
            )
        if self.mode == "test":
            assert self.p0 is not None and self.delta is not None
            verdict = {
                "H0": f"holds: Pr {self.comparison} {self.p0:g}",
                "H1": f"does not hold: Pr {_opposite(self.comparison)} {self.p0:g}",
                "undecided": "undecided (the run limit was reached)",
            }[self.decision or "undecided"]
            lines.append(
                f"  SPRT ({'alpha'} = {self.alpha:g}, beta = {self.beta:g}, indifference ± {self.delta:g}): "
                f"{verdict} after {self.runs} runs (a fixed-size estimate would take {self.planned_runs})"
            )
        return lines

    def write(self, out: str | Path) -> list[Path]:
        """``smc.json``, ``timing.json``, ``provenance.json``, ``outcomes.parquet``,
        ``first_passage.csv`` and ``first_passage.png``."""
        directory = Path(out)
        directory.mkdir(parents=True, exist_ok=True)
        written = []
        path = directory / "smc.json"
        path.write_text(json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n", encoding="utf-8")
        written.append(path)
        # Wall time and where it ran depend on the machine, not the model: kept apart, so the
        # result files of the same query and seed are byte-identical (as a sweep's timing.json).
        path = directory / "timing.json"
        path.write_text(
            json.dumps({"wall_time_s": self.wall_time_s, "executor": self.where}, indent=2) + "\n", encoding="utf-8"
        )
        written.append(path)
        # How it was made (version, engine, command line): differs between machines, as timing.
        from ...engine.provenance import PROVENANCE_FILE, environment

        path = directory / PROVENANCE_FILE
        path.write_text(
            json.dumps(environment(["ccsim", *sys.argv[1:]]), indent=1, sort_keys=True) + "\n", encoding="utf-8"
        )
        written.append(path)
        path = directory / "outcomes.parquet"
        self.outcomes.to_parquet(path, index=False)
        written.append(path)
        table = self.first_passage
        path = directory / "first_passage.csv"
        table.to_csv(path, index=False)
        written.append(path)
        path = directory / "first_passage.png"
        self.plot(path)
        written.append(path)
        return written

    def plot(self, path: str | Path) -> None:
        """The cumulative probability of the first passage over time (paper Figure 31)."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        table = self.first_passage
        fig, ax = plt.subplots(figsize=(7, 4))
        ax.fill_between(
            table["time_s"],
            table["lower"],
            table["upper"],
            step="post",
            alpha=0.25,
            label=f"Clopper-Pearson {100 * (1 - self.alpha):g} %",
        )
        ax.step(table["time_s"], table["probability"], where="post", label="cumulative probability")
        ax.set_xlim(0, self.bound_s)
        ax.set_ylim(0, 1)
        ax.set_xlabel("time (s)")
        what = "first passage" if self.path == "<>" else "first violation"
        ax.set_ylabel(f"Pr[{what} <= t]")
        ax.set_title(f"{self.query}\n{self.runs} runs, {self.successes} satisfied", fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(loc="upper left", fontsize=8)
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)


def _opposite(op: str | None) -> str:
    return {">=": "<", ">": "<=", "<=": ">", "<": ">="}.get(op or "", "?")


def _prepare(model: Any, query: Query, seed: int | None, trace_interval_ns: int | None) -> tuple[dict[str, Any], _Plan]:
    """The configuration of the runs (duration = the bound, traces for the named series) and
    the worker's plan; QueryError for names the scenario does not have."""
    config = model.to_config()
    bound_ns = int(round(query.bound_s * 1e9))
    if config["warmup_ns"] >= bound_ns:
        raise ScenarioError(
            "", "simulation.warmup", f"must be shorter than the query's time bound ({query.bound_s:g} s)"
        )
    config["duration_ns"] = bound_ns
    if seed is not None:
        config["seed"] = seed
    shape = scenario_shape(config)
    sources = {name: resolve_name(name, column, query.text, shape) for name, column in query.refs}
    trace = dict(config["trace"])
    needs_trace = [s.key for s in sources.values() if s.kind == "trace"]
    if needs_trace:
        if trace_interval_ns is not None:
            trace["interval_ns"] = trace_interval_ns
        elif not trace.get("interval_ns"):
            trace["interval_ns"] = DEFAULT_TRACE_INTERVAL_NS
        queues = sorted({k.split(".", 1)[1].rsplit(".", 1)[0] for k in needs_trace if k.startswith("queue.")})
        trace["queues"] = (
            [q for q in trace.get("queues", []) if q not in queues] + queues
            if queues
            else (trace.get("queues") or [shape.queues[0]])
        )
        trace["cwnd"] = trace.get("cwnd", True) or any(k.startswith("flow.") for k in needs_trace)
    else:
        trace["interval_ns"] = None  # nothing sampled is needed: no sampling events
    # Only what the query reads: no logs of events, messages or RTT samples.
    trace.update(events=False, messages=False, rtt=False)
    config["trace"] = trace
    plan = _Plan(json.dumps(config), query.path, query.bound_s, query.expr, sources, config["warmup_ns"] / 1e9)
    return config, plan


def check(
    scenario: Any,
    query: str | Query,
    *,
    epsilon: float = 0.05,
    alpha: float = 0.05,
    runs: int | None = None,
    delta: float = 0.01,
    beta: float = 0.05,
    max_runs: int = DEFAULT_MAX_RUNS,
    seed: int | None = None,
    overrides: list[str] | None = None,
    trace_interval: str | int | None = None,
    jobs: int | None = None,
    scheduler: str | None = None,
    executor: Any = None,
    progress: bool = False,
) -> SmcResult:
    """Answer ``query`` on ``scenario`` (a path, a Scenario or a dict) by simulation.

    A query without a probability bound is estimated from ``runs`` runs (default: the
    Chernoff-Hoeffding count for ``epsilon``, ``alpha``); one with a bound (``>= p0``) is
    tested with Wald's SPRT (``delta``, ``alpha``, ``beta``), at most ``max_runs`` runs.
    Runs go to ``executor`` (an ``executor.Executor``, kept open for the caller), or to a new
    one on ``jobs`` local processes or the Dask scheduler at ``scheduler``. ``seed`` replaces
    the scenario's master seed, from which run ``i``'s seed is derived.

    Raises QueryError (malformed query, unknown name), ScenarioError (bad scenario, or one with
    no random element), ValueError (bad statistical parameters).
    """
    from ...engine.executor import Executor
    from ...engine.runner import as_scenario
    from ..sweep import derive_seed

    started = time.perf_counter()
    parsed = query if isinstance(query, Query) else parse_query(query)
    model = as_scenario(scenario, overrides)
    file = str(scenario) if isinstance(scenario, (str, Path)) else ""
    elements = random_elements(model)
    if not elements:
        raise ScenarioError(
            file,
            "",
            "the scenario has no random element, so every run would be identical and the "
            "probability is 0 or 1 (one 'ccsim run' decides it); declare one: a start window "
            '(start = "0s..1s"), a packet error rate (loss = 0.001), Poisson arrivals (app kind '
            'poisson), random transfer sizes (app transfer with distribution = "pareto", ...), '
            'processing jitter at a node (processing = { jitter = "50us" }), or a randomized '
            f"queue discipline ({', '.join(random_models('queue'))})",
        )
    interval_ns = None
    if trace_interval is not None:
        from ...scenario.units import parse_time

        interval_ns = parse_time(trace_interval)
        if interval_ns <= 0:
            raise ScenarioError(file, "trace_interval", "must be longer than 0s")
    config, plan = _prepare(model, parsed, seed, interval_ns)
    master = int(config["seed"])
    planned = chernoff_runs(epsilon, alpha)
    testing = parsed.comparison is not None
    sprt = None
    if testing:
        assert parsed.comparison is not None
        op, p0 = parsed.comparison
        # "Pr <= p0" is "Pr(not φ-run) >= 1 - p0": test the complement with the same SPRT.
        sprt = Sprt(p0 if op in (">=", ">") else 1.0 - p0, delta, alpha, beta)
        limit = max_runs
        if limit < 1:
            raise ValueError(f"max_runs must be at least 1, got {max_runs}")
    else:
        limit = runs if runs is not None else planned
        if limit < 1:
            raise ValueError(f"runs must be at least 1, got {runs}")

    def seeds() -> Iterator[int]:
        for i in range(limit):
            yield derive_seed(master, "smc", i)

    own = executor is None
    ex = executor or Executor(jobs=jobs, scheduler=scheduler)
    chunk = max(1, min(16 if not testing else 4, limit // (8 * ex.workers)))
    logger.debug(
        "%s: %s, at most %d runs (Chernoff-Hoeffding: %d) on %s, %d per batch; random elements: %s",
        parsed.text,
        "SPRT" if testing else "estimate",
        limit,
        planned,
        ex.description,
        chunk,
        ", ".join(str(e) for e in elements),
    )

    def batches() -> Iterator[tuple[_Plan, list[int]]]:
        buffer: list[int] = []
        for s in seeds():
            buffer.append(s)
            if len(buffer) == chunk:
                yield plan, buffer
                buffer = []
        if buffer:
            yield plan, buffer

    rows: list[tuple[int, int, bool, float | None]] = []
    ready: dict[int, list[tuple[bool, float | None]]] = {}
    next_batch = 0
    bar = _SmcProgress(None if testing else limit) if progress else None
    decided = False
    try:
        iterator = ex.imap_unordered(run_batch, batches())
        try:
            for index, value, exc in iterator:
                if exc is not None:
                    raise RuntimeError(f"run batch {index} failed: {type(exc).__name__}: {exc}") from exc
                ready[index] = value
                # Consume in run order, so that the sequential test decides the same way on any
                # executor, whatever order the runs finish in.
                while next_batch in ready and not decided:
                    for outcome in ready.pop(next_batch):
                        i = len(rows)
                        rows.append((i, derive_seed(master, "smc", i), outcome[0], outcome[1]))
                        if sprt is not None:
                            op = parsed.comparison[0] if parsed.comparison else ">="
                            success = outcome[0] if op in (">=", ">") else not outcome[0]
                            if sprt.add(success) is not None:
                                decided = True
                                break
                    next_batch += 1
                if bar is not None:
                    bar.update(len(rows), sum(r[2] for r in rows))
                if decided:
                    break
        finally:
            iterator.close()
    finally:
        if bar is not None:
            bar.close()
        if own:
            ex.close()

    import pandas as pd

    outcomes = pd.DataFrame(rows, columns=["run", "seed", "satisfied", "time_s"]).astype(
        {"run": "int64", "seed": "uint64", "satisfied": bool, "time_s": "float64"}
    )
    result = SmcResult(
        query=parsed.text,
        mode="test" if testing else "estimate",
        runs=len(rows),
        successes=int(outcomes["satisfied"].sum()),
        alpha=alpha,
        # With a run count of the caller's, the Chernoff-Hoeffding half-width is that of the count.
        epsilon=None if testing else epsilon if runs is None else math.sqrt(math.log(2.0 / alpha) / (2.0 * len(rows))),
        outcomes=outcomes,
        path=parsed.path,
        bound_s=parsed.bound_s,
        random_elements=elements,
        wall_time_s=time.perf_counter() - started,
        planned_runs=planned if runs is None else runs,
        where=ex.description,
    )
    if testing:
        assert parsed.comparison is not None and sprt is not None
        result.beta, result.delta = beta, delta
        result.comparison, result.p0 = parsed.comparison
        result.decision = sprt.decision or "undecided"
        result.planned_runs = planned
    return result


class _SmcProgress:
    """Runs done (of the planned count, when it is known: not for a sequential test) and how
    many satisfied the query (progress.py: a bar on a terminal, plain lines elsewhere)."""

    def __init__(self, total: int | None) -> None:
        from ...progress import Progress

        self._progress = Progress("runs", total)

    def update(self, done: int, satisfied: int) -> None:
        self._progress.update(done, f"{satisfied} satisfied")

    def close(self) -> None:
        self._progress.close()
