"""``ccsim.run``: compile a scenario, let the engine simulate it, wrap what it measured.

The engine does all the work; this module only slices simulated time so that Ctrl-C and a
progress bar stay responsive, and turns the results JSON (results.rs) into DataFrames, a
JSON-able summary and files.
"""

from __future__ import annotations

import functools
import json
import shlex
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from .bulk import without_gc
from .errors import NO_FILE, ScenarioError
from .paths import inside, write_atomically
from .registry import control_columns
from .scenario import U64_MAX, Scenario, engine_error, from_dict, load

__all__ = ["run", "run_config", "replay", "write_replay", "replay_hint", "Result", "as_scenario", "TABLE_I_COLUMNS"]

# Paper 001's Table I (Dedu et al.), per sensor flow: column -> FlowResult field. The delays
# are per message, from the sensor's write to the controller's receipt (buffering in the
# sensor included); the network_ ones are per data packet, from the transport's send (the
# paper's delays match these: their maximum is the full router queue's).
TABLE_I_COLUMNS = {
    "generated": "messages_generated",
    "lost_on_sensor": "messages_lost_at_sender",
    "lost_on_network": "messages_lost_network",
    "received": "messages_received",
    "in_flight": "messages_pending",
    "retransmitted": "retransmissions",
    "delay_max_s": "message_delay_max_s",
    "delay_mean_s": "message_delay_mean_s",
    "network_delay_max_s": "delay_max_s",
    "network_delay_mean_s": "delay_mean_s",
}

# The time series and per-event logs of the engine's results, which ``Result`` holds as
# DataFrames only.
LOGS = ("traces", "queue_events", "messages", "rtt_samples", "control_traces")

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


def summary_text(summary: Mapping[str, Any]) -> str:
    """The text of ``summary.json``: keys sorted at every level, so the same run gives the same
    bytes whatever the engine's field order, and each record of a list (a flow, a queue) on a
    line of its own. One line per record is what `grep` and a diff want from 9 000 flows, and
    each line is written by the json module's C encoder; with ``indent``, the module encodes in
    Python (the 9 000-flow dumbbell's summary: 0.46 s with ``indent``, 0.21 s this way)."""
    items = sorted(summary.items())
    lines = ["{"]
    for k, (key, value) in enumerate(items):
        comma = "," if k + 1 < len(items) else ""
        head = f"  {json.dumps(key)}: "
        if isinstance(value, list) and value:
            rows = [json.dumps(v, sort_keys=True) for v in value]
            lines.append(head + "[")
            lines.extend(f"    {row}," for row in rows[:-1])
            lines.append(f"    {rows[-1]}")
            lines.append("  ]" + comma)
        else:
            lines.append(head + json.dumps(value, sort_keys=True) + comma)
    lines.append("}")
    return "\n".join(lines) + "\n"


class Result:
    """What a run measured (``Results`` of results.rs), as DataFrames and a summary."""

    def __init__(self, raw: Mapping[str, Any], config: Mapping[str, Any], wall_time_s: float) -> None:
        self.raw = {key: value for key, value in raw.items() if key not in LOGS}
        """The engine's results as parsed from its JSON, except the logs (``LOGS``), which are
        kept once, as the DataFrames below (``engine_results`` gives them back in JSON's form).
        Parsed, they are lists of Python floats, which took twice the memory of everything else,
        DataFrames included, in an analysis holding many runs (`ccsim reproduce ecn-codel`:
        1 185 MiB with them, 385 MiB without)."""
        self.config = dict(config)
        """The core configuration that was run."""
        self.wall_time_s = wall_time_s
        self.flows = pd.DataFrame(self.raw["flows"])
        """One row per flow, columns as ``FlowResult``."""
        self.queues = pd.DataFrame(self.raw["queues"])
        """One row per output queue (link direction), columns as ``QueueResult``."""
        traces = raw.get("traces") or {}
        columns = ["time_s"] + sorted(c for c in traces if c != "time_s")
        self.traces = pd.DataFrame({c: traces.get(c, []) for c in columns})
        """``time_s`` plus one column per series, e.g. ``queue.A->B.len_pkts``, ``flow.0.cwnd_bytes``;
        with ``[trace] flow_counters = true`` also ``flow.0.delivered_bytes`` and
        ``flow.0.retransmissions`` (cumulative over the measured window)."""
        log = raw.get("queue_events")
        self.queue_events = pd.DataFrame(log) if log else None
        """Every drop and mark (``time_s``, ``queue``, ``flow``, ``event``) when ``trace.events`` is on."""
        messages = raw.get("messages")
        self.messages = pd.DataFrame(messages) if messages else None
        """Every application message (``flow``, ``index``, ``created_s``, ``delivered_s``,
        ``delay_s``, ``lost``) when ``trace.messages`` is on."""
        log = raw.get("rtt_samples")
        self.rtt_samples = pd.DataFrame(log) if log else None
        """Every RTT sample of every TCP sender over the whole run (``time_s``, ``flow``, ``rtt_s``)
        when ``trace.rtt`` is on."""
        self.control = pd.DataFrame(self.raw.get("control") or [], columns=control_columns())
        """One row per ``[[control]]`` loop: ``itae`` (∫ t|e| dt), ``itae_sum`` (Σ t_k |e_k|, the
        scale of the ANCE paper's 8727 threshold), ``iae``, ``ise``, the per-sample ``iae_sum``
        and ``ise_sum``, sample and control counts (lost, stale, applied) and the actuation
        delay (sampling instant to actuation)."""
        log = raw.get("control_traces")
        self.control_traces = pd.DataFrame(log) if log else None
        """Every loop at every sampling instant (``loop``, ``time_s``, ``reference``, ``output``,
        ``control``, ``error``) when the scenario has ``[[control]]`` loops; ``control`` is the
        value the actuator holds just after the instant."""

    def table_i(self, flows: list[int | str] | None = None) -> pd.DataFrame:
        """Paper 001's Table I: per flow, messages generated, lost on the sensor (refused by a
        full send buffer), lost on the network, received, still in flight at the end, packets
        retransmitted (TCP), and the highest and mean delays (see ``TABLE_I_COLUMNS``).
        ``generated = lost_on_sensor + lost_on_network + received + in_flight``.

        ``flows`` picks rows by id or name; by default, every flow of a ``periodic``
        application (the sensors). Rows are indexed by flow name.
        """
        frame = self.flows
        if flows is None:
            rows = frame[frame["app"] == "periodic"]
        else:
            wanted = []
            for key in flows:
                match = frame[(frame["id"] == key) if isinstance(key, int) else (frame["name"] == key)]
                if match.empty:
                    raise KeyError(f"no flow {key!r}; flows: {', '.join(frame['name'])}")
                wanted.append(match.index[0])
            rows = frame.loc[wanted]
        table = rows[["name", "transport", "cc", *TABLE_I_COLUMNS.values()]].rename(
            columns={v: k for k, v in TABLE_I_COLUMNS.items()}
        )
        return table.set_index("name")

    def message_delays(self, flow: int | str | None = None) -> pd.DataFrame:
        """Per-message delay records (paper 001's Figures 2-5): ``flow``, ``name``, ``time_s``
        (when the message was written), ``delay_s`` (NaN if not delivered) and ``lost``, for
        every message delivered or lost (messages refused by a full send buffer never entered
        the transport and are counted only in ``lost_on_sensor``). Needs ``[trace] messages
        = true``. ``flow`` keeps one flow, by id or name.
        """
        if self.messages is None:
            raise ValueError("no message log: run the scenario with [trace] messages = true")
        names = dict(zip(self.flows["id"], self.flows["name"]))
        log = self.messages
        out = pd.DataFrame(
            {
                "flow": log["flow"],
                "name": log["flow"].map(names),
                "time_s": log["created_s"],
                "delay_s": pd.to_numeric(log["delay_s"], errors="coerce"),
                "lost": log["lost"].astype(bool),
            }
        )
        if flow is not None:
            out = out[(out["flow"] == flow) if isinstance(flow, int) else (out["name"] == flow)]
        return out.sort_values(["flow", "time_s"], kind="stable").reset_index(drop=True)

    @property
    def summary(self) -> dict[str, Any]:
        """Everything but the time series, JSON-able; identical for identical seeds."""
        return dict(self.raw)

    def engine_results(self) -> dict[str, Any]:
        """The engine's results with their logs: ``raw`` plus each log of ``LOGS`` that the run
        has, rebuilt from its DataFrame as lists by column (``Result`` reads either form)."""
        out = dict(self.raw)
        for key in LOGS:  # each log is the DataFrame attribute of the same name
            frame = getattr(self, key)
            if frame is not None:
                out[key] = frame.to_dict("list")
        return out

    @property
    def jain_index(self) -> float | None:
        """Jain's index of goodput; None when undefined (no flow delivered anything)."""
        value = self.raw.get("jain_index")
        return None if value is None else float(value)

    @property
    def utilization(self) -> float | None:
        value = self.raw.get("utilization")
        return None if value is None else float(value)

    @property
    def events(self) -> int:
        return int(self.raw["events"])

    @property
    def seed(self) -> int:
        return int(self.raw["seed"])

    def write(self, out_dir: str | Path, plots: bool = True) -> list[Path]:
        """Write tables (Parquet), ``summary.json`` and (unless ``plots`` is false) PNG plots
        into ``out_dir``."""
        from .plots import (  # matplotlib: only here
            CWND_SUFFIX,
            QUEUE_LENGTH_SUFFIX,
            plot_control,
            plot_goodput,
            plot_series,
        )

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        written = []
        tables = [("flows", self.flows), ("queues", self.queues), ("traces", self.traces)]
        if self.queue_events is not None:
            tables.append(("queue_events", self.queue_events))
        if self.messages is not None:
            tables.append(("messages", self.messages))
        if self.rtt_samples is not None:
            tables.append(("rtt_samples", self.rtt_samples))
        if not self.control.empty:
            tables.append(("control", self.control))
        if self.control_traces is not None:
            tables.append(("control_traces", self.control_traces))
        # Fixed names only, each checked to stay inside `out` and written atomically (paths.py).
        for name, frame in tables:
            path = inside(out, f"{name}.parquet", "--out")
            write_atomically(path, functools.partial(_write_parquet, frame))
            written.append(path)
        summary_path = inside(out, "summary.json", "--out")
        text = summary_text(self.summary)
        write_atomically(summary_path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
        written.append(summary_path)
        if not plots:
            _remove_stale(out, written)
            return written
        warmup_s = float(self.raw.get("warmup_s", 0.0))
        flow_labels = {
            str(f["id"]): f["name"] + (f" ({f['group']})" if f.get("group") else "") for f in self.raw["flows"]
        }

        def queue_plot(path: Path) -> bool:
            return plot_series(
                self.traces,
                "queue.",
                QUEUE_LENGTH_SUFFIX,
                "queue length (packets)",
                "Queue length",
                path,
                warmup_s=warmup_s,
            )

        def cwnd_plot(path: Path) -> bool:
            return plot_series(
                self.traces,
                "flow.",
                CWND_SUFFIX,
                "cwnd (kB)",
                "Congestion window",
                path,
                scale=1e-3,
                labels=flow_labels,
                warmup_s=warmup_s,
            )

        def goodput_plot(path: Path) -> bool:
            return plot_goodput(self.flows, path)

        def control_plot(path: Path) -> bool:
            return self.control_traces is not None and plot_control(
                self.control_traces, list(self.control["name"]), path
            )

        figures = [
            ("queue_length.png", queue_plot),
            ("cwnd.png", cwnd_plot),
            ("goodput.png", goodput_plot),
            ("control.png", control_plot),
        ]
        for filename, draw in figures:
            path = inside(out, filename, "--out")
            if write_atomically(path, draw):
                written.append(path)
        _remove_stale(out, written)
        return written

    def __repr__(self) -> str:
        util = "n/a" if self.utilization is None else f"{self.utilization:.3f}"
        return (
            f"<ccsim.Result seed={self.seed} flows={len(self.flows)} queues={len(self.queues)} "
            f"jain={self.jain_index} utilization={util} events={self.events}>"
        )


# Every file a run can leave in its directory (Result.write, and write_replay at the name
# `ccsim run` gives it). A run written into a directory that holds an earlier run's files
# removes those it did not write itself, so the directory describes one run: a second run
# without control loops must not leave the first one's control.parquet and control.png behind.
RUN_FILES = (
    "flows.parquet",
    "queues.parquet",
    "traces.parquet",
    "queue_events.parquet",
    "messages.parquet",
    "rtt_samples.parquet",
    "control.parquet",
    "control_traces.parquet",
    "summary.json",
    "queue_length.png",
    "cwnd.png",
    "goodput.png",
    "control.png",
    "replay.json",
)


def _remove_stale(out: Path, written: list[Path]) -> None:
    keep = {path.name for path in written}
    for name in RUN_FILES:
        if name not in keep:
            path = out / name
            if path.is_symlink() or path.is_file():  # a link is removed, never followed
                path.unlink(missing_ok=True)


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
    """A rich progress bar on stderr, in seconds of simulated time."""

    def __init__(self, duration_ns: int) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

        self._duration_s = duration_ns / 1e9
        self._progress = Progress(
            TextColumn("simulating"),
            BarColumn(),
            TextColumn("{task.description}"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self._task = self._progress.add_task("", total=duration_ns)
        self._progress.start()

    def update(self, now_ns: int) -> None:
        self._progress.update(self._task, completed=now_ns, description=f"{now_ns / 1e9:.1f}/{self._duration_s:.1f} s")

    def close(self) -> None:
        self._progress.stop()


def _write_parquet(frame: pd.DataFrame, path: Path) -> None:
    frame.to_parquet(path, index=False)


def run(
    scenario: Scenario | str | Path | Mapping[str, Any],
    seed: int | None = None,
    progress: bool = False,
    overrides: list[str] | None = None,
) -> Result:
    """Simulate ``scenario`` (a Scenario, a TOML path or a dict) and return what it measured.

    ``seed`` replaces ``simulation.seed``; ``overrides`` are ``key.path=value`` strings applied
    to a scenario file. Raises ScenarioError for bad scenarios (the engine's refusals too, with
    the scenario key), ``_core.SimulationError`` if the engine fails.
    """
    model = as_scenario(scenario, overrides)
    config = model.to_config()
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= U64_MAX:
            raise ScenarioError("", "seed", f"expected an integer in 0..{U64_MAX}, got {seed!r}")
        config["seed"] = seed
    if _TEST_PANIC_AT_NS is not None:
        config["_panic_at_ns"] = int(_TEST_PANIC_AT_NS)
    from . import _core  # the engine; imported here so scenarios can be checked without it

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
    from . import _core

    started = time.perf_counter()
    sim = _core.Simulation(json.dumps(config))
    _drive(sim, progress)
    return _read_results(sim.results_json(), config, started)


@without_gc
def _read_results(results_json: str, config: Mapping[str, Any], started: float) -> Result:
    """The engine's results as a Result (rows for every flow and queue: bulk work)."""
    return Result(json.loads(results_json), config, time.perf_counter() - started)


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
