"""What a sweep would do: its runs and which are finished (``plan``), their cost timed on short
pieces (``estimate_cost``), and the lines ``ccsim sweep --plan`` prints."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .expansion import RunSpec, expand
from .rundir import RUNS_DIR, _problem, _read_record
from .spec import SweepSpec


@dataclass
class Plan:
    """What a sweep would do in ``out``: its runs, and which of them are finished."""

    spec: SweepSpec
    runs: list[RunSpec]
    done: set[str]
    failed: set[str]
    damaged: dict[str, str] = field(default_factory=dict)
    """Runs whose directory exists but does not check out (key -> what is wrong): not done."""

    @property
    def points(self) -> int:
        return len({r.point for r in self.runs})

    @property
    def invalid(self) -> list[RunSpec]:
        return [r for r in self.runs if r.config is None and r.replicate == 0]


def plan(spec: SweepSpec, out: str | Path | None = None) -> Plan:
    """The sweep's runs and, with ``out``, which are already finished there (ok or failed)."""
    runs = expand(spec)
    done: set[str] = set()
    failed: set[str] = set()
    damaged: dict[str, str] = {}
    if out is not None:
        runs_dir = Path(out) / RUNS_DIR
        for run in runs:
            run_dir = runs_dir / run.key
            if run.key in done or run.key in damaged or not run_dir.exists():
                continue
            problem = _problem(run_dir, run.key)
            if problem is not None:
                damaged[run.key] = problem
                continue
            done.add(run.key)
            if _read_record(runs_dir, run.key)["status"] != "ok":  # type: ignore[index]
                failed.add(run.key)
    return Plan(spec=spec, runs=runs, done=done, failed=failed, damaged=damaged)


def estimate_cost(runs: list[RunSpec], budget_s: float = 4.0, per_point_s: float = 1.0) -> dict[str, Any]:
    """Estimate the CPU time of ``runs`` by timing short pieces of them.

    Method: up to ``budget_s / per_point_s`` points, evenly spread over the sweep, are simulated
    from the start for at most ``per_point_s`` of wall time each (or to their end); each gives
    a cost per simulated second per flow, which times the run's duration and flow count gives
    its estimate. Other points take the mean cost of the timed ones. The first seconds of a
    run (slow start, empty queues) are often cheaper than the rest, so this errs low for long
    runs of saturating traffic; it counts events per second as measured.
    """
    from ... import _core

    valid = [r for r in runs if r.config is not None]
    if not valid:
        return {"cpu_s": 0.0, "timed_points": 0, "per_run_s": [], "events_per_s": None}
    first: dict[int, RunSpec] = {}
    for r in valid:
        first.setdefault(r.point, r)
    points = list(first.values())
    n_timed = max(1, min(len(points), int(budget_s / per_point_s)))
    step = len(points) / n_timed
    timed = [points[int(i * step)] for i in range(n_timed)]

    def flows_of(run: RunSpec) -> int:
        assert run.config is not None
        return max(1, len(run.config["flows"]))

    costs: dict[int, float] = {}  # point -> wall seconds per simulated second per flow
    events = 0
    wall_total = 0.0
    for run in timed:
        sim = _core.Simulation(json.dumps(run.config))
        duration = int(sim.duration_ns)
        step_ns = max(duration // 1000, 1)
        started = time.perf_counter()
        while not sim.finished and time.perf_counter() - started < per_point_s:
            sim.run_until(min(int(sim.now_ns) + step_ns, duration))
            step_ns *= 2
        wall = time.perf_counter() - started
        simulated = max(int(sim.now_ns), 1) / 1e9
        events += int(sim.events)
        wall_total += wall
        costs[run.point] = wall / simulated / flows_of(run)
    mean_cost = sum(costs.values()) / len(costs)
    per_run = []
    for run in valid:
        assert run.config is not None
        per_run.append(costs.get(run.point, mean_cost) * run.config["duration_ns"] / 1e9 * flows_of(run))
    return {
        "cpu_s": sum(per_run),
        "timed_points": len(timed),
        "per_run_s": per_run,
        "events_per_s": events / wall_total if wall_total > 0 else None,
    }


def describe_plan(the_plan: Plan, jobs: int | None, scheduler: str | None, cost: dict[str, Any] | None) -> list[str]:
    """The lines ``ccsim sweep --plan`` prints."""
    from ...engine.executor import default_jobs

    spec = the_plan.spec
    lines = [f"{spec.file}: base scenario {spec.scenario}"]
    if spec.description:
        lines.append(f"  {spec.description}")
    varied = ", ".join(f"{k} ({len(spec.grid[k])} values)" if k in spec.grid else k for k in spec.varied) or "nothing"
    seeds = (
        f"seeds {spec.seeds}"
        if isinstance(spec.seeds, list)
        else f"{spec.seeds} seed{'s' if spec.seeds != 1 else ''} ({spec.seed_mode})"
    )
    total = len(the_plan.runs)
    lines.append(f"varied: {varied}")
    damaged = f", {len(the_plan.damaged)} of them damaged, to run again" if the_plan.damaged else ""
    lines.append(
        f"{the_plan.points} point{'s' if the_plan.points != 1 else ''} x {seeds} = {total} runs "
        f"({len(the_plan.done)} finished, {total - len(the_plan.done)} to run{damaged})"
    )
    invalid = the_plan.invalid
    if invalid:
        lines.append(
            f"{len(invalid)} invalid point{'s' if len(invalid) != 1 else ''} (recorded as failed runs): "
            f"{invalid[0].error}"
        )
    if cost is not None:
        todo = [r for r in the_plan.runs if r.key not in the_plan.done and r.config is not None]
        keys = {r.key for r in todo}
        valid = [r for r in the_plan.runs if r.config is not None]
        cpu = sum(c for r, c in zip(valid, cost["per_run_s"]) if r.key in keys)
        workers = "the cluster's workers" if scheduler else f"{jobs or default_jobs()} local processes"
        parallel = jobs or default_jobs()
        line = (
            f"cost: about {_duration(cpu)} of CPU for the {len(todo)} runs to do "
            f"(timed {cost['timed_points']} point{'s' if cost['timed_points'] != 1 else ''}"
        )
        if cost.get("events_per_s"):
            line += f" at {cost['events_per_s'] / 1e6:.2f} M events/s"
        line += ")"
        if not scheduler:
            line += f"; about {_duration(cpu / min(parallel, max(1, len(todo))))} of wall time on {workers}"
        lines.append(line)
    return lines


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"
