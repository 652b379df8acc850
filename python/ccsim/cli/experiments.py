"""The commands made of many runs: ``ccsim reproduce``, ``sweep``, ``compare`` and ``smc``;
interrupted, they keep what finished and a rerun resumes."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from ..errors import ScenarioError
from .common import (
    EXIT_BAD_INPUT,
    EXIT_ENGINE_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    _fail,
    _load_within_memory,
    _stdout_console,
    _writable_dir,
)


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from ..experiments import reproduce

    known = reproduce.papers()
    if args.list:
        for pid in known:
            print(f"{pid:12s} {reproduce.paper(pid).title}")
        return EXIT_OK
    if args.paper is None:
        _fail(f"reproduce: name a paper or 'all'; papers: {', '.join(known)}")
        return EXIT_BAD_INPUT
    if args.paper != "all" and args.paper not in known:
        _fail(f"reproduce: unknown paper {args.paper!r}; papers: {', '.join(known)}, all")
        return EXIT_BAD_INPUT
    if args.jobs is not None and args.jobs < 1:
        _fail("reproduce: --jobs must be at least 1")
        return EXIT_BAD_INPUT
    papers = known if args.paper == "all" else [args.paper]
    for pid in papers:
        _writable_dir(Path(args.out) / pid)  # each paper's directory, before any run
    for pid in papers:
        report = reproduce.reproduce(
            pid, Path(args.out) / pid, quick=args.quick, jobs=args.jobs, progress=not args.quiet
        )
        if not args.quiet:
            print(f"{pid}: {report}")
    return EXIT_OK


def _executor_error(args: argparse.Namespace, exc: BaseException) -> ScenarioError:
    """A scheduler that cannot be reached is a bad argument, not a bug."""
    return ScenarioError(
        "",
        "--scheduler",
        f"cannot use the Dask scheduler at {args.scheduler}: "
        f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}",
    )


def _cmd_sweep(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..experiments import sweep

    spec = sweep.load_sweep(args.file, args.overrides)
    out = Path(args.out) if args.out else Path("results") / Path(args.file).stem
    console = _stdout_console()
    if args.plan:
        the_plan = sweep.plan(spec, out)
        cost = sweep.estimate_cost(the_plan.runs)
        for line in sweep.describe_plan(the_plan, args.jobs, args.scheduler, cost):
            console.print(Text(line))
        return EXIT_OK
    progress = not args.quiet
    _writable_dir(out)
    result = _resumable(
        args,
        out,
        lambda: sweep.run_sweep(
            spec, out, jobs=args.jobs, scheduler=args.scheduler, retry_failed=args.retry_failed, progress=progress
        ),
    )
    if isinstance(result, int):
        return result
    if not args.quiet:
        console.print(
            Text(
                f"{result.total} runs: {result.ran} run now, {result.skipped} done before, "
                f"{result.failed} failed; table {out / sweep.RESULTS_FILE}"
            )
        )
    _report_damaged(result, out)
    if result.lost:
        _fail(
            f"a worker process died: {result.lost} runs were left unfinished (the finished ones are kept in "
            f"{out}); rerun the same command to run them"
        )
        return EXIT_ENGINE_FAILURE
    table = result.table
    failed = table[table["status"] != "ok"] if len(table) else table
    if len(failed):
        # Failed runs of earlier sessions count too: the sweep as a whole is not clean.
        _fail(
            f"{len(failed)} run{'s' if len(failed) != 1 else ''} failed (status and error in "
            f"{out / sweep.RESULTS_FILE}; --retry-failed runs them again); first: {failed.iloc[0]['error']}"
        )
        return EXIT_ENGINE_FAILURE
    return EXIT_OK


def _resumable(args: argparse.Namespace, out: Path, start: Any) -> Any:
    """Run a command made of sweep runs: its result, or the exit code when it was interrupted
    (the finished runs are kept and a rerun resumes) or the executor could not be reached."""
    from ..experiments import sweep

    try:
        return start()
    except sweep.SweepInterrupted as stop:
        done = stop.result.skipped + stop.result.ran
        _fail(
            f"interrupted: {done} of {stop.result.total} runs finished and kept in {out}; "
            "rerun the same command to resume"
        )
        return EXIT_INTERRUPTED
    except OSError as exc:
        if args.scheduler:
            raise _executor_error(args, exc) from None
        raise


def _report_damaged(result: Any, out: Path) -> None:
    """Say (on stderr, even with --quiet) that runs kept from an earlier session were damaged
    and were run again: files in the output directory were cut short, changed or removed."""
    damaged = getattr(result, "damaged", 0)
    if damaged:
        _fail(
            f"warning: {damaged} run{'s' if damaged != 1 else ''} kept in {out} {'were' if damaged != 1 else 'was'} "
            "damaged (a file missing, cut short or changed) and ran again"
        )


def _names(text: str | None) -> list[str] | None:
    return None if text is None else [n.strip() for n in text.split(",") if n.strip()]


def _compare_console() -> Console:
    """The console of compare's ranking: the terminal's width, else COLUMNS when it is set (the
    table fits the width it is given), else the width of the other commands' tables."""
    columns = os.environ.get("COLUMNS", "")
    console = _stdout_console()
    if not console.is_terminal and columns.isdigit() and int(columns) > 0:
        return Console(width=int(columns))
    return console


def _cmd_compare(args: argparse.Namespace) -> int:
    from ..experiments import compare, sweep
    from ..experiments.compare.analysis import verdict_lines
    from ..experiments.compare.report import print_table

    objective = compare.parse_objective(args.objective)
    spec = compare.prepare(
        args.file,
        ccs=_names(args.cc),
        queues=_names(args.queue),
        seeds=args.seeds,
        overrides=args.overrides,
        master_seed=args.master_seed,
    )
    compare.check_objective(spec, objective)
    out = _writable_dir(Path(args.out) if args.out else Path("results") / "compare" / Path(args.file).stem)
    console = _compare_console()
    for note in spec.notes:
        console.print(Text(f"note: {note}"))
    result = _resumable(
        args,
        out,
        lambda: compare.run_compare(spec, out, jobs=args.jobs, scheduler=args.scheduler, progress=not args.quiet),
    )
    if isinstance(result, int):
        return result
    console.print(
        Text(f"{result.total} runs: {result.ran} run now, {result.skipped} done before, {result.failed} failed")
    )
    _report_damaged(result, out)
    table = result.table
    if not len(table) or not (table["status"] == "ok").any():
        first = table.iloc[0]["error"] if len(table) else "none finished"
        _fail(f"no run of the comparison succeeded (status and error in {out / sweep.RESULTS_FILE}); first: {first}")
        return EXIT_ENGINE_FAILURE
    cmp = compare.analyse(spec, objective, out, table)
    print_table(cmp, console)
    for line in verdict_lines(cmp):
        console.print(Text(line))
    compare.write_report(cmp, out)
    console.print(Text(f"report: {out / 'report.html'}; data: comparison.csv, comparison.parquet, runs_metrics.csv"))
    if result.lost:
        _fail(f"a worker process died: {result.lost} runs were left unfinished; rerun the same command to run them")
        return EXIT_ENGINE_FAILURE
    if cmp.failed:
        _fail(f"{cmp.failed} runs failed (status and error in {out / sweep.RESULTS_FILE})")
        return EXIT_ENGINE_FAILURE
    return EXIT_OK


def _cmd_smc(args: argparse.Namespace) -> int:
    from ..experiments import smc

    if args.vocabulary:
        for name in smc.vocabulary(args.file, args.overrides):
            print(name)
        return EXIT_OK
    if not args.query:
        raise ScenarioError("", "--query", "a query is required, e.g. --query 'Pr[<=30](<> ncs.itae > 8727)'")
    try:
        query = smc.parse_query(args.query)
    except smc.QueryError as exc:
        raise ScenarioError("", "--query", _query_problem(exc)) from None
    if args.test and query.comparison is None:
        raise ScenarioError("", "--test", f"a test needs a probability bound in the query, e.g. '{args.query} >= 0.1'")
    _load_within_memory(args)  # each run must fit (checked once: every run has the same size)
    if args.out:
        _writable_dir(args.out)  # before the runs, not after them
    try:
        result = smc.check(
            args.file,
            query,
            epsilon=args.epsilon,
            alpha=args.alpha,
            runs=args.runs,
            delta=args.delta,
            beta=args.beta,
            max_runs=args.max_runs,
            seed=args.seed,
            overrides=args.overrides,
            trace_interval=args.trace_interval,
            jobs=args.jobs,
            scheduler=args.scheduler,
            progress=not args.quiet,
        )
    except smc.QueryError as exc:
        raise ScenarioError("", "--query", _query_problem(exc)) from None
    except ValueError as exc:
        if isinstance(exc, ScenarioError):
            raise
        raise ScenarioError("", "", str(exc)) from None
    except OSError as exc:
        if args.scheduler:
            raise _executor_error(args, exc) from None
        raise
    console = _stdout_console()
    for line in result.summary_lines():
        console.print(Text(line))
    if args.out:
        try:
            written = result.write(args.out)
        except OSError as exc:
            raise ScenarioError("", "--out", f"cannot write results to {args.out}: {exc.strerror or exc}") from None
        console.print(Text(f"wrote {', '.join(p.name for p in written)} to {args.out}"))
    return EXIT_OK


def _query_problem(exc: Any) -> str:
    """A query error on one line: the column, the message, and the text from that column."""
    rest = exc.query[exc.column - 1 :]
    at = f" (at {rest[:30]!r})" if rest.strip() else " (at the end)"
    return f"column {exc.column}{at}: {exc.message}"
