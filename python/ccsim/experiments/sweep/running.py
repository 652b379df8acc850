"""Running a sweep: every unfinished run on local processes or a Dask cluster, each written as it
finishes; Ctrl-C or SIGTERM keeps what finished."""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import socket
import sys
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

logger = logging.getLogger(__name__)


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
    _write_provenance(spec, out)
    damaged = len(the_plan.damaged)

    todo: list[RunSpec] = []
    seen: set[str] = set()
    for run in the_plan.runs:
        if run.key in the_plan.done or run.key in seen:
            continue
        seen.add(run.key)
        todo.append(run)
    skipped = len(the_plan.runs) - len(todo)
    logger.debug(
        "%s: %d runs, %d done before, %d damaged, %d to run", out, len(the_plan.runs), skipped, damaged, len(todo)
    )
    ran = failed = lost = 0
    interrupted = False
    bar = _SweepProgress(len(the_plan.runs), skipped) if progress else None

    def record(run: RunSpec, outcome: dict[str, Any] | None, error: str | None) -> None:
        nonlocal ran, failed
        rec = _write_run(runs_dir, run, outcome, error)
        if outcome is not None and error is None:
            logger.debug(
                "run %s (seed %s) done in %.2f s on %s", run.key, run.seed, outcome["wall_time_s"], outcome.get("host")
            )
        else:
            logger.debug("run %s (seed %s) failed: %s", run.key, run.seed, error)
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
    """Runs done of the total, with failures, elapsed time and ETA (progress.py: a bar on a
    terminal, plain lines elsewhere); the ETA counts only the runs of this session, as the
    runs done before took no time."""

    def __init__(self, total: int, skipped: int) -> None:
        self._failed = 0
        self._skipped = skipped
        self._total = total
        self._done = 0
        self._progress: Any = None

    def _note(self) -> str:
        parts = []
        if self._skipped:
            parts.append(f"{self._skipped} done before")
        if self._failed:
            parts.append(f"{self._failed} failed")
        return ", ".join(parts)

    def start(self, where: str) -> None:
        from ...progress import Progress, logger

        logger.info("running %d of %d runs on %s", self._total - self._skipped, self._total, where)
        self._progress = Progress("runs", self._total - self._skipped, transient=False)
        self._progress.update(0, self._note())

    def advance(self, failed: bool) -> None:
        self._failed += failed
        self._done += 1
        if self._progress is not None:
            self._progress.update(self._done, self._note())

    def close(self) -> None:
        if self._progress is not None:
            self._progress.close()


def _write_provenance(spec: SweepSpec, out: Path) -> None:
    """``provenance.json``: how the sweep was run (engine/provenance.py) and the files it was
    made from, by SHA-256; each run's exact configuration is its ``config.json``."""
    from ...engine.provenance import PROVENANCE_FILE, environment, file_sha256

    files = [str(spec.scenario)] + ([spec.file] if Path(spec.file).is_file() else [])
    record = {**environment(["ccsim", *sys.argv[1:]]), "files": {f: file_sha256(f) for f in files}}
    tmp = out / f".{PROVENANCE_FILE}.tmp-{os.getpid()}"
    tmp.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, out / PROVENANCE_FILE)
