"""Parameter sweeps: a base scenario, the keys to vary, seeds per point; run on local cores or a
Dask cluster, resumable, one tidy results table.

A sweep file (TOML)::

    scenario = "../flagship.toml"      # the base scenario, relative to this file
    seeds = 3                          # replicates per point; or a list of seeds used at every point
    seed_mode = "independent"          # "independent" (default) or "common"
    master_seed = 0                    # what every derived seed depends on

    [set]                              # fixed overrides for every run, keys as for --set
    "simulation.duration" = "20s"

    [grid]                             # cartesian product of the lists
    "topology.bottleneck.queue.kind" = ["droptail", "codel", "pie"]
    "flows.cc" = ["newreno", "cubic"]

    [[points]]                         # explicit points; with a grid, each is combined with it
    "topology.bottleneck.rate" = "10Mbps"

Seeds are derived from the sweep file alone, never from the order or place runs execute in:
``independent`` seeds hash (master_seed, the point's values, replicate); ``common`` seeds hash
(master_seed, replicate), so every point sees the same random numbers (paired comparisons); a
list of seeds is used as given at every point. The same sweep file gives the same runs, and a
Dask cluster gives the same bytes as the local pool.

Output directory::

    OUT/results.parquet     one row per run: point, replicate, seed, each varied key, status,
                            error, and the run's summary metrics (see summary_metrics)
    OUT/runs/KEY/           one directory per finished run: run.json, summary.json, config.json,
                            flows/queues/traces/control*.parquet, and timing.json (wall time and
                            host: the only file that differs between executors and reruns)

A run's KEY is a hash of the core configuration it simulates (seed included): a directory is
written under a temporary name and renamed when complete, so it exists whole or not at all,
and its run.json lists the size and SHA-256 of every other file (timing.json apart). Rerunning
the sweep skips every KEY whose directory checks out, and runs the damaged ones again (counted
in ``SweepResult.damaged``); changing the base scenario or a value changes the KEYs of the runs
it affects. A run that fails is recorded (status "failed" and the error); ``retry_failed`` runs
it again. A mistake of the sweep file itself (a key the scenario does not have, a bad value in
[set]) is a ``SweepFileError`` before anything runs.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import os
import re
import shutil
import signal
import socket
import time
from collections.abc import Callable, Iterator
from concurrent.futures import BrokenExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import ScenarioError, show
from .limits import check as check_memory
from .overrides import set_value
from .scenario import U64_MAX, from_dict, read_toml

__all__ = [
    "SweepSpec",
    "RunSpec",
    "Plan",
    "SweepResult",
    "load_sweep",
    "expand",
    "plan",
    "run_sweep",
    "summary_metrics",
    "derive_seed",
    "estimate_cost",
    "flows_table",
]

SEED_MODES = ("independent", "common")
RESULTS_FILE = "results.parquet"
RUNS_DIR = "runs"
RUN_FILE = "run.json"
TIMING_FILE = "timing.json"
_SWEEP_KEYS = ("scenario", "seeds", "seed_mode", "master_seed", "set", "grid", "points", "description")


# --- the sweep file ---------------------------------------------------------------------------


@dataclass
class SweepSpec:
    """A parsed sweep file."""

    file: str
    scenario: Path
    base: dict[str, Any]
    fixed: dict[str, Any] = field(default_factory=dict)
    grid: dict[str, list[Any]] = field(default_factory=dict)
    points: list[dict[str, Any]] = field(default_factory=list)
    seeds: int | list[int] = 1
    seed_mode: str = "independent"
    master_seed: int = 0
    description: str | None = None
    origins: dict[str, str] = field(default_factory=dict)
    """Where each key of ``fixed`` was given, as errors name it (``--set``); by default ``set.KEY``."""

    def origin(self, key: str) -> str:
        """How errors name ``key`` of the sweep: ``set.KEY``, ``--set``, ``grid.KEY`` or ``points[i].KEY``."""
        if key in self.grid:
            return f"grid.{key}"
        for i, point in enumerate(self.points):
            if key in point:
                return f"points[{i}].{key}"
        return self.origins.get(key, f"set.{key}")

    @property
    def varied(self) -> list[str]:
        """The keys that change from point to point, in file order (points first)."""
        keys: list[str] = []
        for point in self.points:
            keys.extend(k for k in point if k not in keys)
        keys.extend(k for k in self.grid if k not in keys)
        return keys

    @property
    def replicates(self) -> int:
        return len(self.seeds) if isinstance(self.seeds, list) else self.seeds


def _is_seed(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= U64_MAX


def load_sweep(path: str | Path, overrides: list[str] | None = None) -> SweepSpec:
    """Read and check a sweep file; ``overrides`` (``KEY=VALUE``) join its ``[set]`` table."""
    file = str(path)
    data = read_toml(path)

    def bad(key: str, message: str) -> ScenarioError:
        return ScenarioError(file, key, message)

    for key in data:
        if key not in _SWEEP_KEYS:
            raise bad(key, f"unknown field; allowed: {', '.join(_SWEEP_KEYS)}")
    if not isinstance(data.get("scenario"), str):
        raise bad("scenario", "required: the path of the base scenario file, relative to the sweep file")
    scenario = (Path(path).parent / data["scenario"]).resolve()
    base = read_toml(scenario)

    seeds = data.get("seeds", 1)
    if isinstance(seeds, list):
        if not seeds or not all(_is_seed(s) for s in seeds):
            raise bad("seeds", f"expected a non-empty list of integers in 0..{U64_MAX}, got {show(seeds)}")
        if len(set(seeds)) != len(seeds):
            raise bad("seeds", "the seeds must differ from one another")
    elif not (isinstance(seeds, int) and not isinstance(seeds, bool) and seeds >= 1):
        raise bad("seeds", f"expected a number of replicates (>= 1) or a list of seeds, got {show(seeds)}")
    seed_mode = data.get("seed_mode", "independent")
    if seed_mode not in SEED_MODES:
        raise bad("seed_mode", f"expected one of {', '.join(SEED_MODES)}, got {show(seed_mode)}")
    if isinstance(seeds, list) and "seed_mode" in data:
        raise bad("seed_mode", "a list of seeds is used as given at every point; remove seed_mode")
    master = data.get("master_seed", 0)
    if not _is_seed(master):
        raise bad("master_seed", f"expected an integer in 0..{U64_MAX}, got {show(master)}")

    fixed = data.get("set", {})
    if not isinstance(fixed, dict):
        raise bad("set", "expected a table of KEY = value (keys as for --set, quoted)")
    fixed = dict(fixed)
    origins: dict[str, str] = {}
    for text in overrides or []:
        from .overrides import parse_value

        key, sep, raw = text.partition("=")
        if not sep or not key.strip():
            raise bad("--set", f"expected KEY=VALUE (e.g. simulation.duration=30s), got {show(text)}")
        fixed[key.strip()] = parse_value(raw.strip())
        origins[key.strip()] = f"--set {key.strip()}"

    grid = data.get("grid", {})
    if not isinstance(grid, dict):
        raise bad("grid", 'expected a table of "KEY" = [values]')
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise bad(f"grid.{key}", f'expected a non-empty list of values, e.g. "{key}" = [a, b], got {show(values)}')
    points = data.get("points", [])
    if not isinstance(points, list) or not all(isinstance(p, dict) for p in points):
        raise bad("points", 'expected an array of tables: [[points]] with "KEY" = value lines')
    for i, point in enumerate(points):
        if not point:
            raise bad(f"points[{i}]", "an empty point; give at least one KEY = value")
        for key in point:
            if key in grid:
                raise bad(f"points[{i}].{key}", "also a key of [grid]; vary a key in one place")
    description = data.get("description")
    return SweepSpec(
        file=file,
        scenario=scenario,
        base=base,
        fixed=fixed,
        grid=dict(grid),
        points=list(points),
        seeds=seeds,
        seed_mode=seed_mode,
        master_seed=master,
        description=description,
        origins=origins,
    )


# --- expansion --------------------------------------------------------------------------------


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str)


def derive_seed(master: int, *parts: Any) -> int:
    """A 64-bit seed from ``master`` and ``parts`` (SHA-256 of their canonical JSON)."""
    digest = hashlib.sha256(_canonical([master, *parts]).encode()).digest()
    return int.from_bytes(digest[:8], "little")


@dataclass
class RunSpec:
    """One run of a sweep: a point, a replicate, its seed and the configuration it simulates
    (``None`` with ``error`` when the point's scenario is invalid)."""

    point: int
    replicate: int
    params: dict[str, Any]
    seed: int
    key: str
    config: dict[str, Any] | None
    error: str | None = None


def _grid_points(spec: SweepSpec) -> list[dict[str, Any]]:
    keys = list(spec.grid)
    grid = [dict(zip(keys, values)) for values in itertools.product(*(spec.grid[k] for k in keys))] if keys else [{}]
    explicit = spec.points or [{}]
    return [{**point, **cell} for point in explicit for cell in grid]


class SweepFileError(ScenarioError):
    """A mistake of the sweep file (or of its --set) that would fail every run it touches: a
    malformed or unknown key, a bad value in [set]. Raised before anything runs."""


def _apply(spec: SweepSpec, data: dict[str, Any], params: dict[str, Any]) -> None:
    """Set the fixed keys, then the point's, into ``data``; a key that cannot be set (malformed,
    an index past the end, a value where a table is needed) is the sweep file's mistake."""
    for key, value in [*spec.fixed.items(), *params.items()]:
        try:
            set_value(data, key, value, str(spec.scenario))
        except ScenarioError as exc:
            raise SweepFileError(spec.file, spec.origin(key), f"{exc.message} (in {exc.file})") from None


# Messages of a field that does not exist (errors.py, registry.py): a key, not a value, is wrong.
_UNKNOWN_KEY = ("unknown field", "unknown parameter")


def _blame_the_sweep_file(spec: SweepSpec, params: dict[str, Any], exc: ScenarioError) -> SweepFileError | None:
    """The sweep-file error behind ``exc`` (the validation error of one point's scenario), or
    None when it is the point's own: a value of [set] that the point does not replace fails
    every point, and so does a key of [grid] or [[points]] that the scenario does not have."""
    from .overrides import _path_text, parse_key
    from .scenario import _concerns

    for key in [*spec.fixed, *params]:
        normalized = _path_text(parse_key(key))
        fixed = key in spec.fixed and key not in params
        unknown = exc.message.startswith(_UNKNOWN_KEY) and re.sub(r"\[\d+\]", "", exc.field) == re.sub(
            r"\[\d+\]", "", normalized
        )
        if (fixed and _concerns(exc.field, normalized)) or unknown:
            where = "" if exc.field == normalized else f" at {exc.field}"
            return SweepFileError(spec.file, spec.origin(key), f"{exc.message} (in {exc.file}{where})")
    return None


def expand(spec: SweepSpec) -> list[RunSpec]:
    """Every run of the sweep, point by point and replicate by replicate. Each point's scenario
    is validated and compiled here (in the parent, quickly); an invalid point gives runs with
    ``error`` set, which the sweep records as failed."""
    runs: list[RunSpec] = []
    for p, params in enumerate(_grid_points(spec)):
        data = copy.deepcopy(spec.base)
        config: dict[str, Any] | None = None
        error: str | None = None
        where = ", ".join(f"{k}={_canonical(v)}" for k, v in params.items()) or "the base scenario"
        try:
            _apply(spec, data, params)
            try:
                model = from_dict(data, str(spec.scenario))
            except ScenarioError as exc:
                raise _blame_the_sweep_file(spec, params, exc) or exc from None
            compiled = model.to_config()
            check_memory(compiled, str(spec.scenario))  # a run that would exhaust the memory is refused
            config = compiled
        except SweepFileError:
            raise
        except ScenarioError as exc:
            error = f"{exc} (sweep point {p}: {where})"
        for r in range(spec.replicates):
            if isinstance(spec.seeds, list):
                seed = spec.seeds[r]
            elif spec.seed_mode == "common":
                seed = derive_seed(spec.master_seed, "replicate", r)
            else:
                seed = derive_seed(spec.master_seed, "point", sorted(params.items()), "replicate", r)
            if config is not None:
                run_config = dict(config, seed=seed)
                key = hashlib.sha256(_canonical({"config": run_config}).encode()).hexdigest()[:16]
            else:
                run_config = None
                key = hashlib.sha256(_canonical({"invalid": data, "seed": seed}).encode()).hexdigest()[:16]
            runs.append(
                RunSpec(point=p, replicate=r, params=dict(params), seed=seed, key=key, config=run_config, error=error)
            )
    return runs


# --- what a run leaves ---------------------------------------------------------------------------


def summary_metrics(raw: dict[str, Any]) -> dict[str, Any]:
    """The flat summary of one run (a row of the results table).

    - ``events``, ``duration_s``, ``jain_index``, ``utilization`` (bottleneck), ``flows``;
    - over the ``[[flows]]`` (control-loop message flows excluded): ``goodput_bps_total``,
      ``goodput_bps_mean``, ``goodput_bps_min``, ``goodput_bps_max``, ``retransmissions``,
      ``timeouts``, ``rtt_mean_s`` (mean of the flows' mean RTTs), ``delay_mean_s``;
    - per flow group (when flows have a ``group``): ``group.G.goodput_bps`` (sum);
    - the bottleneck queue: ``bottleneck.mean_len_pkts``, ``.sd_len_pkts``, ``.max_len_pkts``,
      ``.mean_sojourn_s``, ``.p99_sojourn_s``, ``.drops``, ``.marks``, ``.drop_ratio``, ``.utilization``;
    - per control loop: ``control.NAME.itae``, ``.itae_sum``, ``.iae``, ``.ise``,
      ``.samples_lost``, ``.controls_lost``, ``.actuation_delay_mean_s``.

    Per-flow and per-queue detail stays in each run's directory (``flows_table`` joins it).
    """
    row: dict[str, Any] = {
        "events": raw.get("events"),
        "duration_s": raw.get("duration_s"),
        "jain_index": raw.get("jain_index"),
        "utilization": raw.get("utilization"),
    }
    flows = [f for f in raw.get("flows", []) if f.get("app") != "ncs"]
    row["flows"] = len(flows)
    goodputs = [float(f["goodput_bps"]) for f in flows]
    row["goodput_bps_total"] = sum(goodputs) if goodputs else None
    row["goodput_bps_mean"] = sum(goodputs) / len(goodputs) if goodputs else None
    row["goodput_bps_min"] = min(goodputs) if goodputs else None
    row["goodput_bps_max"] = max(goodputs) if goodputs else None
    row["retransmissions"] = sum(int(f.get("retransmissions") or 0) for f in flows)
    row["timeouts"] = sum(int(f.get("timeouts") or 0) for f in flows)
    rtts = [f["rtt_mean_s"] for f in flows if f.get("rtt_mean_s") is not None]
    row["rtt_mean_s"] = sum(rtts) / len(rtts) if rtts else None
    delays = [f["delay_mean_s"] for f in flows if f.get("delay_mean_s") is not None]
    row["delay_mean_s"] = sum(delays) / len(delays) if delays else None
    groups: dict[str, float] = {}
    for f in flows:
        if f.get("group"):
            groups[f["group"]] = groups.get(f["group"], 0.0) + float(f["goodput_bps"])
    for name, total in groups.items():
        row[f"group.{name}.goodput_bps"] = total
    bottleneck = raw.get("bottleneck")
    queue = next((q for q in raw.get("queues", []) if q["name"] == bottleneck), None)
    if queue is not None:
        for name in (
            "mean_len_pkts",
            "sd_len_pkts",
            "max_len_pkts",
            "mean_sojourn_s",
            "p99_sojourn_s",
            "drops",
            "marks",
            "drop_ratio",
            "utilization",
        ):
            row[f"bottleneck.{name}"] = queue.get(name)
    for loop in raw.get("control") or []:
        for name in ("itae", "itae_sum", "iae", "ise", "samples_lost", "controls_lost", "actuation_delay_mean_s"):
            row[f"control.{loop['name']}.{name}"] = loop.get(name)
    return row


def run_config(config_json: str) -> dict[str, Any]:
    """Worker side: simulate one core configuration; the engine's results JSON and timing, or
    the error as text (the engine's exception classes do not pickle back to the parent)."""
    from . import _core

    started = time.perf_counter()
    try:
        sim = _core.Simulation(config_json)
        sim.run_until(sim.duration_ns)
        raw = sim.results_json()
    except Exception as exc:
        return {"error": _error_text(exc), "host": socket.gethostname()}
    return {"raw": raw, "wall_time_s": time.perf_counter() - started, "host": socket.gethostname()}


def _error_text(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    field = getattr(exc, "field", "")  # the engine's ConfigError names the field apart
    if field and field not in text:
        text = f"{field}: {text}"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _write_run(runs_dir: Path, run: RunSpec, outcome: dict[str, Any] | None, error: str | None) -> dict[str, Any]:
    """Write run ``run`` atomically (a temporary directory renamed into place); its record."""
    from .api import Result

    final = runs_dir / run.key
    tmp = runs_dir / f".tmp-{run.key}-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    record: dict[str, Any] = {
        "key": run.key,
        "point": run.point,
        "replicate": run.replicate,
        "seed": run.seed,
        "params": run.params,
        "status": "failed" if error else "ok",
        "error": error,
    }
    if outcome is not None and error is None:
        raw = json.loads(outcome["raw"])
        assert run.config is not None
        Result(raw, run.config, outcome["wall_time_s"]).write(tmp, plots=False)
        record.update(metrics=summary_metrics(raw))
        # Where and how long it ran differs between executors and runs: kept apart (TIMING_FILE),
        # so every other file of a run is the same bytes wherever it runs.
        (tmp / TIMING_FILE).write_text(
            json.dumps({"wall_time_s": outcome["wall_time_s"], "host": outcome.get("host")}, indent=1) + "\n",
            encoding="utf-8",
        )
    if run.config is not None:
        (tmp / "config.json").write_text(json.dumps(run.config, indent=1) + "\n", encoding="utf-8")
    record["files"] = _manifest(tmp)
    (tmp / RUN_FILE).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    if final.exists() and _problem(final, run.key) is None:
        shutil.rmtree(tmp)  # written meanwhile (a second sweep on the same directory): keep that one
    else:
        if final.exists():  # a damaged copy: replaced by this one
            _discard(final)
        os.rename(tmp, final)
    return record


# --- what a finished run must hold -------------------------------------------------------------
#
# A run directory is renamed into place whole, but a crash, a full disk or a hand can still
# leave it damaged: a truncated table, a broken run.json, a deleted file. Its run.json lists
# every other file with its size and SHA-256 (``files``; timing.json, which differs between
# executors, apart), and a rerun trusts a directory only when all of them check out; one that
# does not is run again and counted as damaged.

# Files every successful run has; checked (read back) in directories written before manifests.
_OK_RUN_FILES = ("flows.parquet", "queues.parquet", "traces.parquet", "summary.json", "config.json")


def _digest(path: Path) -> str:
    sha = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            sha.update(block)
    return sha.hexdigest()


def _manifest(run_dir: Path) -> dict[str, dict[str, Any]]:
    """Size and SHA-256 of each file of a run directory but run.json and timing.json."""
    return {
        p.name: {"bytes": p.stat().st_size, "sha256": _digest(p)}
        for p in sorted(run_dir.iterdir())
        if p.name not in (RUN_FILE, TIMING_FILE) and p.is_file()
    }


def _load_record(run_dir: Path) -> dict[str, Any] | None:
    """The parsed run.json of ``run_dir`` (a dict), or None."""
    try:
        record = json.loads((run_dir / RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


def _problem(run_dir: Path, key: str) -> str | None:
    """What is wrong with the finished run in ``run_dir``, or None when it is whole."""
    record = _load_record(run_dir)
    if record is None:
        return f"{RUN_FILE} missing or unreadable"
    if record.get("key") != key or record.get("status") not in ("ok", "failed"):
        return f"{RUN_FILE} is not this run's record"
    files = record.get("files")
    if files is None:  # written before manifests: every table must at least read back
        return _legacy_problem(run_dir) if record["status"] == "ok" else None
    if not isinstance(files, dict):
        return f"{RUN_FILE} has no valid list of files"
    for name, expected in files.items():
        path = run_dir / name
        if not isinstance(expected, dict) or name in (RUN_FILE, "") or "/" in name or name.startswith("."):
            return f"{RUN_FILE} lists a bad file entry {show(name)}"
        try:
            if path.is_symlink() or path.stat().st_size != expected.get("bytes"):
                return f"{name} is missing or has the wrong size"
            if _digest(path) != expected.get("sha256"):
                return f"{name} does not match its checksum"
        except OSError:
            return f"{name} is missing or unreadable"
    if record["status"] == "ok" and not set(_OK_RUN_FILES) <= set(files):
        return f"{RUN_FILE} lists too few files for a finished run"
    return None


def _legacy_problem(run_dir: Path) -> str | None:
    import pyarrow.parquet as pq

    for name in _OK_RUN_FILES:
        path = run_dir / name
        try:
            if name.endswith(".parquet"):
                pq.read_metadata(path)
            else:
                json.loads(path.read_text(encoding="utf-8"))
        except Exception:  # missing, truncated, not Parquet, not JSON
            return f"{name} is missing or unreadable"
    return None


def _discard(run_dir: Path) -> None:
    """Remove a damaged run directory: first renamed away (a name a rerun skips), so that a
    removal cut short leaves nothing that passes for a run."""
    aside = run_dir.parent / f".tmp-damaged-{run_dir.name}-{os.getpid()}"
    try:
        os.rename(run_dir, aside)
    except OSError:
        aside = run_dir
    shutil.rmtree(aside, ignore_errors=True)


def _read_record(runs_dir: Path, key: str) -> dict[str, Any] | None:
    """The record of run ``key`` if its directory holds one (checked in ``plan``)."""
    record = _load_record(runs_dir / key)
    return record if record is not None and record.get("key") == key else None


# --- the plan ---------------------------------------------------------------------------------


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
    from . import _core

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


# --- running -------------------------------------------------------------------------------------


@dataclass
class SweepResult:
    """What ``run_sweep`` did: the table (one row per run) and the counts."""

    table: Any
    """pandas DataFrame, as written to ``OUT/results.parquet``."""
    total: int
    skipped: int
    ran: int
    failed: int
    interrupted: bool = False
    out: Path | None = None
    lost: int = 0
    """Runs left unfinished because a local worker process died (they run on the next call)."""
    damaged: int = 0
    """Runs found damaged in ``out`` (a file missing, cut short or changed) and run again."""


class _Terminated(KeyboardInterrupt):
    """SIGTERM, handled like Ctrl-C: keep what finished, stop the rest."""


@contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    def handler(signum: int, frame: Any) -> None:
        raise _Terminated()

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _params_frame_value(value: Any) -> Any:
    return value if isinstance(value, (int, float, str, bool)) or value is None else _canonical(value)


def build_table(plan_: Plan, out: Path) -> Any:
    """The results table of the runs of ``plan_`` finished in ``out``, in sweep order."""
    import pandas as pd

    runs_dir = out / RUNS_DIR
    rows = []
    for run in plan_.runs:
        record = _read_record(runs_dir, run.key)
        if record is None:
            continue
        row: dict[str, Any] = {"point": run.point, "replicate": run.replicate, "seed": run.seed}
        for key in plan_.spec.varied:
            row[key] = _params_frame_value(run.params.get(key))
        row["status"] = record.get("status")
        row["error"] = record.get("error")
        row.update(record.get("metrics") or {})
        row["run_dir"] = f"{RUNS_DIR}/{run.key}"
        rows.append(row)
    table = pd.DataFrame(rows)
    if not table.empty:
        table["seed"] = table["seed"].astype("uint64")
        for column in table.columns:
            values = table[column].dropna()
            if table[column].dtype == object and len({type(v) for v in values}) > 1:
                table[column] = table[column].map(lambda v: None if v is None else str(v))
    return table


def _write_table(table: Any, out: Path) -> None:
    tmp = out / f".{RESULTS_FILE}.tmp-{os.getpid()}"
    table.to_parquet(tmp, index=False)
    os.replace(tmp, out / RESULTS_FILE)


def run_sweep(
    spec: SweepSpec,
    out: str | Path,
    jobs: int | None = None,
    scheduler: str | None = None,
    retry_failed: bool = False,
    progress: bool = False,
    on_run: Callable[[RunSpec, dict[str, Any]], None] | None = None,
) -> SweepResult:
    """Run every unfinished run of ``spec`` into ``out`` on ``jobs`` local processes (all cores
    by default) or the Dask cluster at ``scheduler``; write ``out/results.parquet``.

    Ctrl-C or SIGTERM stops the sweep: finished runs are kept (and tabled), the rest run on the
    next call. ``on_run(run, record)`` is called in the parent after each run is written.
    """
    from .executor import Executor

    out = Path(out)
    runs_dir = out / RUNS_DIR
    runs_dir.mkdir(parents=True, exist_ok=True)
    for stale in runs_dir.glob(".tmp-*"):  # left by a sweep killed mid-write
        shutil.rmtree(stale, ignore_errors=True)
    the_plan = plan(spec, out)
    for key in the_plan.damaged:  # run again, below, like any unfinished run
        _discard(runs_dir / key)
    if retry_failed:
        for key in the_plan.failed:
            _discard(runs_dir / key)
        the_plan.done -= the_plan.failed
        the_plan.failed = set()
    text = (
        json.dumps(
            {
                "sweep": spec.file,
                "scenario": str(spec.scenario),
                "varied": spec.varied,
                "seeds": spec.seeds,
                "seed_mode": spec.seed_mode,
                "master_seed": spec.master_seed,
                "runs": [
                    {"key": r.key, "point": r.point, "replicate": r.replicate, "seed": r.seed, "params": r.params}
                    for r in the_plan.runs
                ],
            },
            indent=1,
            default=str,
        )
        + "\n"
    )
    tmp = out / f".sweep.json.tmp-{os.getpid()}"
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, out / "sweep.json")
    damaged = len(the_plan.damaged)

    todo: list[RunSpec] = []
    seen: set[str] = set()
    for run in the_plan.runs:
        if run.key in the_plan.done or run.key in seen:
            continue
        seen.add(run.key)
        todo.append(run)
    skipped = len(the_plan.runs) - len(todo)
    ran = failed = lost = 0
    interrupted = False
    bar = _SweepProgress(len(the_plan.runs), skipped) if progress else None

    def record(run: RunSpec, outcome: dict[str, Any] | None, error: str | None) -> None:
        nonlocal ran, failed
        rec = _write_run(runs_dir, run, outcome, error)
        ran += 1
        failed += rec["status"] != "ok"
        if bar is not None:
            bar.advance(rec["status"] != "ok")
        if on_run is not None:
            on_run(run, rec)

    try:
        with _sigterm_interrupts():
            for run in [r for r in todo if r.config is None]:
                record(run, None, run.error)
            runnable = [r for r in todo if r.config is not None]
            if runnable:
                with Executor(jobs=jobs, scheduler=scheduler) as executor:
                    if bar is not None:
                        bar.start(executor.description)
                    configs = (json.dumps(r.config) for r in runnable)
                    for index, value, exc in executor.imap_unordered(run_config, configs):
                        if isinstance(exc, BrokenExecutor):
                            lost += 1  # not the run's fault: left unfinished, run by the next call
                        elif exc is not None:
                            record(runnable[index], None, _error_text(exc))
                        elif "error" in value:
                            record(runnable[index], None, value["error"])
                        else:
                            record(runnable[index], value, None)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if bar is not None:
            bar.close()
        table = build_table(the_plan, out)
        _write_table(table, out)
    if interrupted:
        raise SweepInterrupted(SweepResult(table, len(the_plan.runs), skipped, ran, failed, True, out, lost, damaged))
    return SweepResult(table, len(the_plan.runs), skipped, ran, failed, False, out, lost, damaged)


class SweepInterrupted(KeyboardInterrupt):
    """The sweep was interrupted; ``result`` says what finished (all of it is on disk)."""

    def __init__(self, result: SweepResult) -> None:
        super().__init__()
        self.result = result


class _SweepProgress:
    """A rich progress bar on stderr: runs done of the total, failures, elapsed and ETA."""

    def __init__(self, total: int, skipped: int) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            TextColumn("runs"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.description}"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
        )
        self._failed = 0
        self._skipped = skipped
        # The ETA counts only runs done in this session: skipped ones took no time.
        self._task = self._progress.add_task(self._describe(), total=total - skipped)
        self._total = total
        self._started = False

    def _describe(self) -> str:
        parts = []
        if self._skipped:
            parts.append(f"{self._skipped} done before")
        if self._failed:
            parts.append(f"{self._failed} failed")
        return f"({', '.join(parts)})" if parts else ""

    def start(self, where: str) -> None:
        self._progress.console.print(f"running {self._total - self._skipped} of {self._total} runs on {where}")
        self._progress.start()
        self._started = True

    def advance(self, failed: bool) -> None:
        self._failed += failed
        self._progress.update(self._task, advance=1, description=self._describe())

    def close(self) -> None:
        if self._started:
            self._progress.stop()


# --- reading results back ------------------------------------------------------------------------


def flows_table(out: str | Path) -> Any:
    """Every finished run's per-flow table (``flows.parquet``) with the run's point,
    replicate, seed and varied keys in front: one row per flow per run."""
    import pandas as pd

    out = Path(out)
    table = pd.read_parquet(out / RESULTS_FILE)
    frames = []
    ok = table[table["status"] == "ok"]
    front = [
        c
        for c in ok.columns
        if c not in ("status", "error", "wall_time_s", "run_dir")
        and not c.startswith(("bottleneck.", "control.", "group."))
    ]
    front = [
        c
        for c in front
        if c in ("point", "replicate", "seed")
        or c in json.loads((out / "sweep.json").read_text(encoding="utf-8"))["varied"]
    ]
    for _, row in ok.iterrows():
        path = out / row["run_dir"] / "flows.parquet"
        try:
            flows = pd.read_parquet(path)
        except Exception as exc:  # missing, truncated, not Parquet (damaged after the sweep)
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ScenarioError(
                str(path),
                "",
                f"damaged or unreadable ({first}); rerun the sweep: it checks "
                "every run and runs the damaged ones again",
            ) from None
        for i, column in enumerate(front):
            flows.insert(i, column, row[column])
        frames.append(flows)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def describe_plan(the_plan: Plan, jobs: int | None, scheduler: str | None, cost: dict[str, Any] | None) -> list[str]:
    """The lines ``ccsim sweep --plan`` prints."""
    from .executor import default_jobs

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
