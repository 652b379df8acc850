"""The command line: the parser of every command and its options, and the argument types that
refuse a bad value with one line."""

from __future__ import annotations

import argparse
from typing import Any, NoReturn

from ..errors import show
from ..scenario.registry import FAMILIES


class _UsageError(Exception):
    """A bad command line (argparse's own errors are raised as this, not printed)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _UsageError(message)


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="ccsim",
        description="Deterministic packet-level simulator for TCP congestion control and AQM.",
        epilog="Run 'ccsim COMMAND --help' for the options of a command.",
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")

    run = commands.add_parser(
        "run",
        help="run a scenario file and print a summary",
        description="Run a scenario file; print a summary table and optionally write results.",
    )
    run.add_argument("file", metavar="FILE.toml", help="scenario file")
    run.add_argument("--seed", type=_seed, help="master seed (replaces simulation.seed)")
    run.add_argument("--out", metavar="DIR", help="write flows/queues/traces.parquet, summary.json and plots here")
    _add_set_option(run)
    _add_load_option(run)
    _add_verbosity_options(run, "print nothing but errors (no table, no progress)")
    _add_memory_option(run)

    validate = commands.add_parser(
        "validate",
        help="check a scenario file without running it",
        description="Check a scenario file (and the engine's view of it) without running.",
    )
    validate.add_argument("file", metavar="FILE.toml", help="scenario file")
    _add_set_option(validate)
    _add_load_option(validate)
    _add_memory_option(validate)

    listing = commands.add_parser(
        "list",
        help="list queue disciplines, congestion controls, transports and applications with their parameters",
        description="Every registered model with its parameters, units and defaults; or the models of one "
        "kind (ccsim list queue), or one model (ccsim list cc cubic).",
    )
    listing.add_argument(
        "kind",
        nargs="?",
        metavar="KIND",
        help=f"only this kind of model: {', '.join(FAMILIES)} or profile (plurals work too)",
    )
    listing.add_argument("name", nargs="?", metavar="NAME", help="only this model of KIND, e.g. cubic")
    listing.add_argument("--json", action="store_true", help="print the registry as JSON")
    _add_load_option(listing)
    listing.add_argument(
        "--markdown", action="store_true", help="print the models as Markdown (docs/models.md is this output)"
    )

    schema = commands.add_parser(
        "schema",
        help="print the JSON Schema of scenario files (editor completion), or their reference",
        description="Print the JSON Schema (draft 2020-12) of a scenario file as it is written: every key "
        "with its description, units and default, the registered model names. An editor with Taplo "
        "(VS Code: Even Better TOML) completes and checks scenarios with it; see docs/scenario.md.",
    )
    schema.add_argument("--output", "-o", metavar="FILE", help="write it to FILE instead of printing it")
    schema.add_argument(
        "--markdown", action="store_true", help="the reference as Markdown instead (docs/scenario.md is this output)"
    )

    repro = commands.add_parser(
        "reproduce",
        help="run a paper's experiments; its tables and figures beside the published ones",
        description="Reproduce the experiments of a paper (or 'all') into DIR/PAPER: tables (CSV, Markdown) "
        "with the published values beside ours, figures (PNG) and report.md. Finished runs are "
        "kept, so an interrupted reproduction resumes.",
    )
    repro.add_argument("paper", nargs="?", metavar="PAPER", help="paper id, or 'all' (see --list)")
    repro.add_argument("--list", action="store_true", help="list the paper ids and exit")
    repro.add_argument("--quick", action="store_true", help="shortened runs (minutes for all papers)")
    repro.add_argument(
        "--out", metavar="DIR", default="reproductions", help="output directory (default: reproductions)"
    )
    repro.add_argument("--jobs", type=_jobs, metavar="N", help="parallel runs (default: all cores)")
    _add_verbosity_options(repro, "no progress, no report paths")

    arima = commands.add_parser(
        "arima",
        help="ARIMA models of RTT traces (the CA-ARTT paper's sec. 3)",
        description="ARIMA(p,1,q) models of RTT traces, as in the CA-ARTT paper.",
    )
    actions = arima.add_subparsers(dest="arima_command", metavar="ACTION", title="actions")
    arima_fit = actions.add_parser(
        "fit",
        help="fit ARIMA(p,1,q), p, q in 0..2, and pick the order by AIC and FPE",
        description="Fit ARIMA(p,1,q) for p, q in 0..2 to a series of RTTs by conditional least squares, print "
        "sigma^2, AIC and FPE of every order (the paper's Table 1) and the chosen order's coefficients. "
        "An order whose fit did not converge is not chosen; a trace whose RTT differences are mostly "
        "zero (piecewise constant) is reported as such, with no order chosen (exit code 0).",
    )
    arima_fit.add_argument(
        "file",
        metavar="TRACE.csv",
        help="CSV with a column of RTTs in seconds: rtt_s, or the only numeric column "
        "(a run's rtt_samples.parquet, from [trace] rtt = true, is read too)",
    )
    arima_fit.add_argument("--column", help="the column holding the RTTs")
    arima_fit.add_argument("--flow", type=int, help="keep the rows of this flow (traces with a flow column)")
    _add_sweep_commands(commands)
    _add_compare_command(commands)
    _add_new_command(commands)

    completion = commands.add_parser(
        "completion",
        help="print the shell completion script (bash or zsh)",
        description="Print the completion script of ccsim for a shell, generated from this version's "
        "commands and options. Bash: add 'source <(ccsim completion bash)' to ~/.bashrc, or write it to "
        "~/.local/share/bash-completion/completions/ccsim. Zsh: write it as _ccsim to a folder of $fpath.",
    )
    completion.add_argument("shell", choices=["bash", "zsh"], metavar="SHELL", help="bash or zsh")
    return parser


def _add_new_command(commands: Any) -> None:
    new = commands.add_parser(
        "new",
        help="start a new congestion control or queue discipline: its Rust file and its registration",
        description="Write crates/ccsim-core/src/tcp/cc/NAME.rs (cc) or crates/ccsim-core/src/qdisc/NAME.rs "
        "(queue) from a template: a header to fill in with the model's source, its MODEL with one example "
        "parameter, a working example (AIMD; a FIFO with a limit) and tests of it on the family's test kit; "
        "and register it in the family's mod.rs. Nothing is written if anything is wrong. See docs/extending.md.",
    )
    new.add_argument(
        "kind", choices=["cc", "queue"], metavar="KIND", help="cc (congestion control) or queue (queue discipline)"
    )
    new.add_argument(
        "name",
        metavar="NAME",
        help="the model's name in scenarios, its module and its file: a lowercase Rust identifier (e.g. my_cc)",
    )
    new.add_argument(
        "--root",
        metavar="DIR",
        help="the ccsim source tree (default: the nearest folder at or above the current directory that "
        "holds crates/ccsim-core/Cargo.toml)",
    )


def _add_executor_options(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--jobs", type=_jobs, metavar="N", help="local processes (default: all cores)")
    where.add_argument(
        "--scheduler",
        type=_scheduler,
        metavar="ADDRESS",
        help="run on an existing Dask distributed cluster, e.g. tcp://10.0.0.5:8786 "
        "(dask scheduler + dask worker; ccsim installed on the workers)",
    )


def _add_sweep_commands(commands: Any) -> None:
    sweep = commands.add_parser(
        "sweep",
        help="run a parameter sweep (grid x seeds) on local cores or a Dask cluster",
        description="Run every point x seed of a sweep file into one results table (results.parquet) and "
        "per-run directories. Finished runs are kept: rerunning the command resumes.",
    )
    sweep.add_argument("file", metavar="SWEEP.toml", help="sweep file (see docs/sweeps.md)")
    sweep.add_argument("--out", metavar="DIR", help="output directory (default: results/<sweep file name>)")
    _add_executor_options(sweep)
    sweep.add_argument(
        "--plan",
        action="store_true",
        help="print the number of runs and an estimate of their cost (timed on short pieces), run nothing",
    )
    sweep.add_argument("--retry-failed", action="store_true", help="run again the runs recorded as failed")
    sweep.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a key of the base scenario for every run (joins the sweep's [set])",
    )
    _add_verbosity_options(sweep, "no progress, no summary")
    _add_load_option(sweep)

    smc = commands.add_parser(
        "smc",
        help="statistical model checking: probability of a query over random runs (UPPAAL SMC style)",
        description="Estimate Pr[<=T](<> φ) or Pr[<=T]([] φ) (Chernoff-Hoeffding run count, Clopper-Pearson "
        "interval), or test Pr[<=T](...) >= p with Wald's SPRT. Series: queue.bottleneck.length, "
        "flow.0.cwnd, ncs.itae, ...; scalars: flows.0.goodput_bps, jain_index, ... "
        "(--vocabulary lists them for the scenario; docs/smc.md).",
    )
    smc.add_argument("file", metavar="FILE.toml", help="scenario file (with at least one random element)")
    smc.add_argument("--query", "-q", help="e.g. 'Pr[<=30](<> ncs.itae > 8727)'")
    smc.add_argument("--epsilon", type=_probability, default=0.05, help="estimation: half-width (default 0.05)")
    smc.add_argument(
        "--alpha",
        type=_probability,
        default=0.05,
        help="estimation: 1 - confidence; test: probability of rejecting a true bound (default 0.05)",
    )
    smc.add_argument(
        "--runs", type=_positive, help="estimation: this many runs instead of the Chernoff-Hoeffding count"
    )
    smc.add_argument(
        "--test",
        action="store_true",
        help="hypothesis test (the query must end in >= p or <= p; such a query is always tested)",
    )
    smc.add_argument(
        "--delta", type=_probability, default=0.01, help="test: indifference region ± delta (default 0.01)"
    )
    smc.add_argument(
        "--beta", type=_probability, default=0.05, help="test: probability of accepting a false bound (default 0.05)"
    )
    smc.add_argument(
        "--max-runs", type=_positive, default=10_000, help="test: give up (undecided) after this many runs"
    )
    smc.add_argument("--seed", type=_seed, help="master seed (replaces simulation.seed); run i's seed derives from it")
    smc.add_argument(
        "--trace-interval", metavar="TIME", help="sampling interval of the queue/cwnd series (default 10ms)"
    )
    _add_set_option(smc)
    _add_load_option(smc)
    _add_memory_option(smc)
    _add_executor_options(smc)
    smc.add_argument("--out", metavar="DIR", help="write smc.json, outcomes.parquet, first_passage.csv and .png here")
    smc.add_argument("--vocabulary", action="store_true", help="list the names a query can use on this scenario")
    _add_verbosity_options(smc, "no progress")


def _add_compare_command(commands: Any) -> None:
    compare = commands.add_parser(
        "compare",
        help="rank every congestion control x queue discipline on a scenario (report.html)",
        description="Run every congestion control (of the TCP flows) x queue discipline (of the bottleneck "
        "queue) over seeds, rank them for an objective with statistical ties, and write "
        "report.html, comparison.csv/.parquet and the runs into --out. Finished runs are kept: "
        "rerunning resumes. See docs/compare.md.",
    )
    compare.add_argument("file", metavar="SCENARIO.toml", help="scenario file")
    compare.add_argument(
        "--cc", help="comma-separated congestion controls (default: every registered one that needs no special router)"
    )
    compare.add_argument(
        "--queue",
        help="comma-separated queue disciplines (default: droptail,red,codel,pie,fq_codel,fq_pie,cake,dualpi2)",
    )
    compare.add_argument("--seeds", type=_positive, default=3, help="seeds per combination (default 3)")
    compare.add_argument(
        "--objective",
        default="latency",
        help="latency, fairness, throughput, control, or terms and constraints: "
        "'min:p99_delay*2,max:utilization,jain >= 0.9,p99_delay <= 20ms' (default latency)",
    )
    compare.add_argument("--out", metavar="DIR", help="output directory (default: results/compare/<scenario name>)")
    compare.add_argument("--master-seed", type=_seed, default=0, help="what the run seeds derive from (default 0)")
    _add_set_option(compare)
    _add_load_option(compare)
    _add_executor_options(compare)
    _add_verbosity_options(compare, "no progress")


def _add_verbosity_options(parser: argparse.ArgumentParser, quiet: str) -> None:
    """``--verbose`` and ``--quiet`` of a command that does long work: how much it says on
    stderr besides errors (the ``ccsim`` loggers' level: DEBUG, INFO by default, WARNING)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        help="also say what is done, run by run (diagnostics of the ccsim loggers at DEBUG level)",
    )
    group.add_argument("--quiet", action="store_true", help=quiet)


def _add_load_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--load",
        action="append",
        metavar="FILE.py",
        default=[],
        help="import a Python file of congestion controls or queue disciplines first (repeatable; "
        "docs/python-models.md), so that their names can be used",
    )


def _positive(text: str) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {show(text)}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {show(text)}")
    return value


def _jobs(text: str) -> int:
    # Bounded: each local worker is a Python process with the engine, and the pool starts them
    # as work arrives, so a mistyped --jobs would start thousands (or, above the C int range,
    # fail inside the pool).
    from ..engine.executor import MAX_JOBS

    value = _positive(text)
    if value > MAX_JOBS:
        raise argparse.ArgumentTypeError(f"at most {MAX_JOBS} local processes, got {show(text)}")
    return value


def _scheduler(text: str) -> str:
    from ..engine.executor import check_scheduler_address

    try:
        check_scheduler_address(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{show(text)}: {exc}") from None
    except ImportError:
        raise argparse.ArgumentTypeError("Dask is not installed (pip install 'dask[distributed]')") from None
    return text


def _probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {text!r}")
    return value


def _add_set_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a key of the file, e.g. --set simulation.duration=30s "
        "--set topology.bottleneck.queue.limit=50p (repeatable)",
    )


def _add_memory_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-memory",
        type=_memory,
        metavar="SIZE",
        help="refuse a run whose estimated memory exceeds SIZE, e.g. 2GiB (default: 80 %% of the "
        "memory available; see docs/robustness.md)",
    )


def _memory(text: str) -> int:
    from ..scenario.limits import parse_memory

    try:
        return parse_memory(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _seed(text: str) -> int:
    problem = argparse.ArgumentTypeError(f"expected a non-negative integer below 2^64, got {text!r}")
    try:
        value = int(text, 10)
    except ValueError:
        raise problem from None
    if not 0 <= value < 2**64:
        raise problem
    return value
