"""``ccsim.run``: compile a scenario, let the engine simulate it, wrap what it measured.

The engine does all the work; this module only slices simulated time so that Ctrl-C and a
progress bar stay responsive, hands the results JSON (results.rs) to ``Result``, and saves and
replays the configuration of a failed run.
"""

from __future__ import annotations

import json
import logging
import shlex
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..bulk import without_gc
from ..errors import NO_FILE, ScenarioError
from ..results.result import Result
from ..scenario.schema import U64_MAX, Scenario, engine_error, from_dict, load

__all__ = ["run", "run_config", "replay", "write_replay", "replay_hint", "as_scenario"]

logger = logging.getLogger(__name__)

# Wall time a slice of events should take: short enough for Ctrl-C and the bar to
# respond, long enough that crossing into Rust costs nothing measurable.
SLICE_WALL_S = 0.1
# Events in the first slice (a few milliseconds at the engine's rate).
FIRST_SLICE_EVENTS = 20_000
# The progress bar appears only for runs that last longer than this.
PROGRESS_AFTER_S = 1.0

# Test-only: when set, every run made by ``run`` asks the engine to panic once it reaches
# this simulated time (ns), through the hidden ``_panic_at_ns`` configuration key the
# bindings honour, so that tests can check how an engine failure is reported. Never set it
# otherwise.
_TEST_PANIC_AT_NS: int | None = None


def as_scenario(scenario: Scenario | str | Path | Mapping[str, Any], overrides: list[str] | None = None) -> Scenario:
    """A validated Scenario from a model, a path to a TOML file, or nested dicts."""
    if isinstance(scenario, Scenario):
        if overrides:
            raise TypeError("overrides apply to scenario files; change the Scenario object instead")
        return scenario
    if isinstance(scenario, (str, Path)):
        return load(scenario, overrides)
    if isinstance(scenario, Mapping):
        if overrides:
            raise TypeError("overrides apply to scenario files; change the dict instead")
        return from_dict(dict(scenario))
    raise TypeError(f"expected a Scenario, a path or a dict, got {type(scenario).__name__}")


def _drive(sim: Any, show_progress: bool) -> None:
    """Advance the engine to its end in slices of events, each aimed at SLICE_WALL_S of wall
    time, so that Ctrl-C (which lands between slices) is honoured quickly however many
    events a second of simulated time holds."""
    duration = int(sim.duration_ns)
    budget = FIRST_SLICE_EVENTS
    started = time.perf_counter()
    bar = None
    try:
        while True:
            slice_start = time.perf_counter()
            reached = sim.advance(duration, budget)  # releases the GIL
            spent = time.perf_counter() - slice_start
            # Aim each slice at SLICE_WALL_S of wall time, growing at most 4x at a time.
            budget = max(
                FIRST_SLICE_EVENTS, min(budget * 4, int(budget * SLICE_WALL_S / spent) if spent > 0 else budget * 4)
            )
            if show_progress and bar is None and time.perf_counter() - started > PROGRESS_AFTER_S:
                bar = _ProgressBar(duration)
            if bar is not None:
                bar.update(int(sim.now_ns))
            if reached:
                break
    finally:
        if bar is not None:
            bar.close()


class _ProgressBar:
    """A run's progress in seconds of simulated time (progress.py: a bar on a terminal, a plain
    line every few tens of seconds elsewhere)."""

    def __init__(self, duration_ns: int) -> None:
        from ..progress import Progress

        total_s = duration_ns / 1e9
        # Made once the run has lasted PROGRESS_AFTER_S (to within a slice): the elapsed time
        # counts from the run's start.
        self._progress = Progress(
            "simulating",
            total_s,
            count=lambda done: f"{done:.1f}/{total_s:.1f} s simulated",
            started=time.perf_counter() - PROGRESS_AFTER_S,
        )

    def update(self, now_ns: int) -> None:
        self._progress.update(now_ns / 1e9)

    def close(self) -> None:
        self._progress.close()


def run(
    scenario: Scenario | str | Path | Mapping[str, Any],
    seed: int | None = None,
    progress: bool = False,
    overrides: list[str] | None = None,
) -> Result:
    """Simulate ``scenario`` (a Scenario, a TOML path or a dict) and return what it measured.

    ``seed`` replaces ``simulation.seed``; ``overrides`` are ``key.path=value`` strings applied
    to a scenario file. ``progress`` shows how far a run that lasts over a second has got: a bar
    on a terminal or in Jupyter, else a line every few tens of seconds (INFO records of the
    ``ccsim.progress`` logger). Raises ScenarioError for bad scenarios (the engine's refusals
    too, with the scenario key), ``_core.SimulationError`` if the engine fails.
    """
    model = as_scenario(scenario, overrides)
    config = model.to_config()
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= U64_MAX:
            raise ScenarioError("", "seed", f"expected an integer in 0..{U64_MAX}, got {seed!r}")
        config["seed"] = seed
    if _TEST_PANIC_AT_NS is not None:
        config["_panic_at_ns"] = int(_TEST_PANIC_AT_NS)
    from .. import _core  # the engine; imported here so scenarios can be checked without it

    try:
        return run_config(config, progress)
    except _core.ConfigError as exc:
        # Only a Scenario built without Scenario.build (or a seed the engine refuses) gets here.
        raise engine_error(model, exc, str(scenario) if isinstance(scenario, (str, Path)) else NO_FILE) from None
    except _core.SimulationError as exc:
        # What it takes to replay the failure: the scenario, the seed, the exact configuration.
        exc.scenario = str(scenario) if isinstance(scenario, (str, Path)) else None
        exc.overrides = list(overrides or [])
        exc.config = config
        if not hasattr(exc, "seed"):
            exc.seed = config.get("seed", 1)
        raise


def run_config(config: Mapping[str, Any], progress: bool = False) -> Result:
    """Simulate a core configuration (config.rs ``Config``, as a dict) as it is."""
    from .. import _core

    started = time.perf_counter()
    sim = _core.Simulation(json.dumps(config))
    logger.debug(
        "simulating %s s: %d nodes, %d links, %d flows, seed %s",
        f"{int(sim.duration_ns) / 1e9:g}",
        len(config.get("nodes") or []),
        len(config.get("links") or []),
        len(config.get("flows") or []),
        config.get("seed"),
    )
    _drive(sim, progress)
    result = _read_results(sim, config, started)
    logger.debug("%s events in %.2f s of wall time", f"{result.events:,}", result.wall_time_s)
    return result


@without_gc
def _read_results(sim: Any, config: Mapping[str, Any], started: float) -> Result:
    """The engine's results (as columns) as a Result (records for every flow and queue: bulk
    work)."""
    return Result(sim.results(), config, time.perf_counter() - started)


def write_replay(exc: BaseException, path: str | Path) -> Path:
    """Save what a failed ``run`` needs to be replayed (scenario, overrides, seed, the exact
    core configuration and the error) as JSON at ``path``; returns the path."""
    path = Path(path)
    record = {
        "ccsim_replay": 1,
        "scenario": getattr(exc, "scenario", None),
        "overrides": getattr(exc, "overrides", []),
        "seed": getattr(exc, "seed", None),
        "error": str(exc),
        "config": getattr(exc, "config", None),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return path


def replay(path: str | Path, progress: bool = False) -> Result:
    """Run the configuration saved by ``write_replay`` (or a bare core configuration) again."""
    file = str(path)
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ScenarioError(file, "", "no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(file, "", f"cannot read: {exc}") from None
    except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
        raise ScenarioError(file, "", "not a replay file (not JSON): expected what write_replay writes") from None
    config = data["config"] if isinstance(data, dict) and "ccsim_replay" in data else data
    if not isinstance(config, dict):
        raise ScenarioError(file, "config", "not a replay file: expected a core configuration (a JSON object)")
    from .user_models import pickled_sources

    if pickled := pickled_sources(config):
        # Unpickling a file's text would run whatever it holds.
        raise ScenarioError(
            file,
            pickled[0],
            "a Python model defined in __main__ or a notebook cannot be replayed from a file; "
            "define its class in a .py file and run the scenario again",
        )
    return run_config(config, progress)


def replay_hint(exc: BaseException, replay_file: str | Path | None = None) -> str:
    """How to replay a failed run: the ``ccsim run`` command line, the replay file, and the
    debug build that checks every invariant."""
    seed = getattr(exc, "seed", None)
    scenario = getattr(exc, "scenario", None)
    parts = []
    if scenario:
        sets = "".join(f" --set {shlex.quote(o)}" for o in getattr(exc, "overrides", []))
        parts.append(f"ccsim run {shlex.quote(str(scenario))} --seed {seed}{sets}")
    if replay_file is not None:
        parts.append(f"ccsim.replay('{replay_file}')")
        parts.append(f"cargo run -p ccsim-core --bin ccsim-replay -- {replay_file} (debug build: invariants checked)")
    return "replay: " + "; or ".join(parts) if parts else f"replay with seed {seed}"
