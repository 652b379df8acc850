"""Running a sweep: every unfinished run on local processes or a Dask cluster, each written as it
finishes; Ctrl-C or SIGTERM keeps what finished."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import time
from collections.abc import Callable, Iterator
from concurrent.futures import BrokenExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .expansion import RunSpec
from .planning import plan
from .rundir import RUNS_DIR, _discard, _write_run
from .spec import SweepSpec
from .table import _write_table, build_table


def run_config(config_json: str) -> dict[str, Any]:
    """Worker side: simulate one core configuration; the engine's results (as columns) and
    timing, or the error as text (the engine's exception classes do not pickle back to the
    parent)."""
    from ... import _core

    started = time.perf_counter()
    try:
        sim = _core.Simulation(config_json)
        sim.run_until(sim.duration_ns)
        raw = sim.results()
    except Exception as exc:
        return {"error": _error_text(exc), "host": socket.gethostname()}
    return {"raw": raw, "wall_time_s": time.perf_counter() - started, "host": socket.gethostname()}


def _error_text(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    field = getattr(exc, "field", "")  # the engine's ConfigError names the field apart
    if field and field not in text:
        text = f"{field}: {text}"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


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
    from ...engine.executor import Executor

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
