"""The ``ccsim`` command: run, validate, list, ``arima fit`` for RTT traces, ``sweep``, ``smc`` and
``compare``.

Every mistake in the input (file, field, argument) ends in one line on stderr that names the
file, the field and what is allowed, and exit code 2 — never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .errors import ScenarioError, one_line, show
from .registry import FAMILY_TITLES, KIND_UNITS, format_param, get_registry

__all__ = ["main"]

EXIT_OK = 0
EXIT_ENGINE_FAILURE = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


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
    run.add_argument("--quiet", action="store_true", help="print nothing but errors (no table, no progress bar)")
    _add_memory_option(run)

    validate = commands.add_parser(
        "validate",
        help="check a scenario file without running it",
        description="Check a scenario file (and the engine's view of it) without running.",
    )
    validate.add_argument("file", metavar="FILE.toml", help="scenario file")
    _add_set_option(validate)
    _add_memory_option(validate)

    listing = commands.add_parser(
        "list",
        help="list queue disciplines, congestion controls, transports and applications with their parameters",
        description="Every registered model with its parameters, units and defaults.",
    )
    listing.add_argument("--json", action="store_true", help="print the registry as JSON")
    listing.add_argument(
        "--markdown", action="store_true", help="print the models as Markdown (docs/models.md is this output)"
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
    return parser


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
    sweep.add_argument("--quiet", action="store_true", help="no progress bar, no summary")

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
    _add_memory_option(smc)
    _add_executor_options(smc)
    smc.add_argument("--out", metavar="DIR", help="write smc.json, outcomes.parquet, first_passage.csv and .png here")
    smc.add_argument("--vocabulary", action="store_true", help="list the names a query can use on this scenario")
    smc.add_argument("--quiet", action="store_true", help="no progress bar")


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
    compare.add_argument("--queue", help="comma-separated queue disciplines (default: droptail,red,codel,pie)")
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
    _add_executor_options(compare)
    compare.add_argument("--quiet", action="store_true", help="no progress bar")


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
    from .executor import MAX_JOBS

    value = _positive(text)
    if value > MAX_JOBS:
        raise argparse.ArgumentTypeError(f"at most {MAX_JOBS} local processes, got {show(text)}")
    return value


def _scheduler(text: str) -> str:
    from .executor import check_scheduler_address

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
    from .limits import parse_memory

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


def _engine() -> ModuleType:
    # Imported on use: `ccsim --help` and argument errors work without the engine.
    return importlib.import_module("ccsim._core")


def _stdout_console() -> Console:
    """A console for tables: the terminal's width, or wide enough not to truncate cells when
    the output goes to a file or a pipe (rich would assume 80 columns)."""
    console = Console()
    return console if console.is_terminal else Console(width=160)


def _cell(value: object) -> Text:
    # Text, not markup: names like flows[0] must print as written.
    return Text(str(value))


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.1f}"


def _print_summary(console: Console, file: str, result: Any) -> None:
    raw = result.raw
    console.print(
        Text(
            f"{file}: seed {raw['seed']}, {raw['duration_s']:g} s simulated (measured after {raw['warmup_s']:g} s), "
            f"{raw['events']:,} events in {result.wall_time_s:.2f} s"
        )
    )
    console.print(_flows_table(raw["flows"]))
    console.print(_queues_table(raw))
    if raw.get("control"):
        console.print(_control_table(raw["control"]))
    line = "Jain index " + ("n/a" if raw.get("jain_index") is None else f"{raw['jain_index']:.4f}")
    if raw.get("utilization") is not None:
        line += f"; bottleneck {raw['bottleneck']} utilization {raw['utilization'] * 100:.1f} %"
    console.print(Text(line))


# Flows listed one per row at most; with more (a table of thousands of rows says little and
# takes seconds to lay out), the ends of the goodput distribution, and where the rest is.
LISTED_FLOWS = 60
EXTREME_FLOWS = 10


def _flows_table(flows: list[dict[str, Any]]) -> Table:
    named = any(flow["name"] != str(flow["id"]) for flow in flows)
    grouped = any(flow["group"] for flow in flows)
    headers = (
        ["id"]
        + (["name"] if named else [])
        + (["group"] if grouped else [])
        + ["path", "cc", "goodput Mb/s", "retx", "RTOs", "RTT ms", "delay ms"]
    )
    caption = None
    if len(flows) > LISTED_FLOWS:
        by_goodput = sorted(flows, key=lambda flow: (flow["goodput_bps"], flow["id"]))
        caption = (
            f"the {EXTREME_FLOWS} lowest and {EXTREME_FLOWS} highest goodputs of {len(flows)} flows; "
            "--out DIR writes every flow (flows.parquet)"
        )
        flows = by_goodput[:EXTREME_FLOWS] + by_goodput[-EXTREME_FLOWS:]
    table = Table(title="Flows", title_justify="left", caption=caption, caption_justify="left")
    for header in headers:
        table.add_column(header, justify="left" if header in ("name", "group", "path", "cc") else "right")
    for flow in flows:
        row: list[object] = [flow["id"]]
        row += [flow["name"]] if named else []
        row += [flow["group"] or ""] if grouped else []
        row += [
            f"{flow['src']}->{flow['dst']}",
            flow["cc"] or flow["transport"],
            f"{flow['goodput_bps'] / 1e6:.3f}",
            flow["retransmissions"],
            flow["timeouts"],
            _ms(flow["rtt_mean_s"]),
            _ms(flow["delay_mean_s"]),
        ]
        table.add_row(*map(_cell, row))
    return table


def _control_table(loops: list[dict[str, Any]]) -> Table:
    table = Table(
        title="Control loops",
        title_justify="left",
        caption="ITAE = ∫ t|e| dt; ITAE sum = Σ t_k |e_k| over the samples",
        caption_justify="left",
    )
    for header in ("loop", "h ms", "ITAE", "ITAE sum", "IAE", "ISE", "samples", "lost s/c", "applied", "delay ms"):
        table.add_column(header, justify="left" if header == "loop" else "right")
    for loop in loops:
        table.add_row(
            *map(
                _cell,
                (
                    loop["name"],
                    f"{loop['h_s'] * 1e3:g}",
                    f"{loop['itae']:.4g}",
                    f"{loop['itae_sum']:.5g}",
                    f"{loop['iae']:.4g}",
                    f"{loop['ise']:.4g}",
                    loop["samples"],
                    f"{loop['samples_lost']}/{loop['controls_lost']}",
                    loop["controls_applied"],
                    _ms(loop["actuation_delay_mean_s"]),
                ),
            )
        )
    return table


# Queues listed one per row at most; beyond, the ones that lost or marked most.
LISTED_QUEUES = 20


def _queues_table(raw: dict[str, Any]) -> Table:
    # Congestion shows wherever a queue dropped, marked or held more than the packet in
    # service, on a router or a host (a sender's own access queue overflows too); idle
    # queues would bury those.
    queues = raw["queues"]
    busy = [
        q for q in queues if q["name"] == raw.get("bottleneck") or q["max_len_pkts"] > 1 or q["drops"] or q["marks"]
    ]
    shown, caption = busy, None
    if len(busy) > LISTED_QUEUES:
        busiest = sorted(
            range(len(busy)),
            key=lambda i: (
                busy[i]["name"] != raw.get("bottleneck"),
                -(busy[i]["drops"] + busy[i]["marks"]),
                -busy[i]["max_len_pkts"],
                i,
            ),
        )
        shown = [busy[i] for i in sorted(busiest[:LISTED_QUEUES])]
        caption = (
            f"the {LISTED_QUEUES} of {len(busy)} busy queues that dropped or marked most; "
            "--out DIR writes every queue (queues.parquet)"
        )
    elif len(queues) > len(busy):
        caption = f"{len(queues) - len(busy)} other queues never held more than one packet, dropped or marked nothing"
    table = Table(title="Queues", title_justify="left", caption=caption, caption_justify="left")
    for header in ("queue", "kind", "mean p", "sd p", "max p", "sojourn ms", "drops", "marks", "drop %", "util %"):
        table.add_column(header, justify="left" if header in ("queue", "kind") else "right")
    for queue in shown:
        table.add_row(
            *map(
                _cell,
                (
                    queue["name"],
                    queue["kind"],
                    f"{queue['mean_len_pkts']:.1f}",
                    f"{queue['sd_len_pkts']:.1f}",
                    queue["max_len_pkts"],
                    _ms(queue["mean_sojourn_s"]),
                    queue["drops"],
                    queue["marks"],
                    f"{queue['drop_ratio'] * 100:.2f}",
                    f"{queue['utilization'] * 100:.1f}",
                ),
            )
        )
    return table


def _cmd_run(args: argparse.Namespace) -> int:
    from .api import run

    quiet: bool = args.quiet
    console = _stdout_console()
    progress = not quiet and Console(stderr=True).is_terminal
    scenario = _load_within_memory(args)
    if args.out:
        _writable_dir(args.out)  # before the run, not after it
    try:
        result = run(scenario, seed=args.seed, progress=progress)
    except Exception as exc:
        # The scenario was loaded here, so the replay line names the file and its overrides.
        if getattr(exc, "config", None) is not None and getattr(exc, "scenario", None) is None:
            setattr(exc, "scenario", str(args.file))  # noqa: B010 (an attribute of the engine's error)
            setattr(exc, "overrides", list(args.overrides or []))  # noqa: B010
        raise
    if not quiet:
        _print_summary(console, args.file, result)
    if args.out:
        try:
            written = result.write(args.out)
        except OSError as exc:
            raise ScenarioError("", "--out", f"cannot write results to {args.out}: {exc.strerror or exc}") from None
        if not quiet:
            console.print(Text(f"wrote {len(written)} files to {args.out}: {', '.join(p.name for p in written)}"))
    return EXIT_OK


def _writable_dir(path: str | Path, field: str = "--out") -> Path:
    """``path`` as a directory this process can write into, created if missing; else a
    ScenarioError naming ``field`` (a file there, a read-only place). Checked before any run,
    so that a mistyped --out costs nothing and ends in one line, never an OSError."""
    import os
    import tempfile

    out = Path(path)
    if out.exists() and not out.is_dir():
        raise ScenarioError("", field, f"{one_line(str(out))} exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".ccsim-write-test-", dir=out)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ScenarioError("", field, f"cannot write results to {one_line(str(out))}: {exc.strerror or exc}") from None
    return out


def _load_within_memory(args: argparse.Namespace) -> Any:
    """The scenario of ``args.file`` with its overrides, refused (ScenarioError) when its
    estimated memory exceeds ``--max-memory`` or the machine's budget (limits.py)."""
    from .limits import check
    from .scenario import load

    scenario = load(args.file, args.overrides)
    check(scenario.to_config(), args.file, args.max_memory)
    return scenario


def _cmd_validate(args: argparse.Namespace) -> int:
    from .limits import estimate

    _engine()  # loading ran the engine's own checks (routes, parameters): it must be built
    scenario = _load_within_memory(args)
    config = scenario.to_config()
    memory = estimate(config).total
    print(
        f"{args.file}: ok ({len(config['nodes'])} nodes, {len(config['links'])} links, "
        f"{len(config['flows'])} flows); memory up to about {memory / 2**20:.0f} MiB"
    )
    return EXIT_OK


def _cmd_list(args: argparse.Namespace) -> int:
    if args.json:
        print(_engine().registry_json())
        return EXIT_OK
    if args.markdown:
        print(models_markdown(), end="")
        return EXIT_OK
    registry = get_registry()
    console = _stdout_console()
    for family in registry.families():
        console.print(Text(f"{FAMILY_TITLES.get(family, family).capitalize()}s ({family})", style="bold underline"))
        if family == "profile":
            _print_profiles(console, registry.models(family))
            continue
        for model in registry.models(family):
            title = f"{model.name}: {model.doc}{_model_facts(model)}"
            if not model.params:
                console.print(Text(f"  {title} (no parameters)"))
                continue
            table = Table(title=Text(title), title_justify="left", expand=False)
            for header in ("parameter", "unit", "default", "range", "description"):
                table.add_column(header, overflow="fold")
            for param in model.params:
                table.add_row(
                    *map(
                        _cell,
                        (
                            param.name,
                            KIND_UNITS.get(param.kind, param.kind),
                            format_param(param.kind, param.default),
                            param.range_text(),
                            param.doc,
                        ),
                    )
                )
            console.print(table)
        console.print()
    return EXIT_OK


def models_markdown() -> str:
    """Every registered model as Markdown, from the engine's registry: docs/models.md."""
    registry = get_registry()
    lines = [
        "# Models",
        "",
        "Generated by `ccsim list --markdown` from the engine's registry (a test keeps this file",
        "equal to its output). Units are those a scenario writes; `ccsim list` prints the same.",
        "",
    ]
    for family in registry.families():
        if family == "profile":
            continue
        lines += [f"## {FAMILY_TITLES.get(family, family).capitalize()}s (`{family}`)", ""]
        for model in registry.models(family):
            lines += [f"### `{model.name}`", "", f"{model.doc}{_model_facts(model)}", ""]
            if model.params:
                lines += ["| parameter | unit | default | range | description |", "|---|---|---|---|---|"]
                for p in model.params:
                    cells = (
                        p.name,
                        KIND_UNITS.get(p.kind, p.kind),
                        format_param(p.kind, p.default),
                        p.range_text(),
                        p.doc,
                    )
                    lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |")
                lines.append("")
    return "\n".join(lines)


def _model_facts(model: Any) -> str:
    """What the registry says of a model besides its parameters, for ``ccsim list``."""
    facts = []
    when = model.random.get("when", "never")
    if when == "always":
        facts.append(model.random["what"])
    elif when == "unless_default":
        facts.append(f"{model.random['what']} when {model.random['param']} is not at its default")
    if model.partner_queues:
        facts.append("needs queue " + " or ".join(f"'{q}'" for q in model.partner_queues))
    return f" [{'; '.join(facts)}]" if facts else ""


def _print_profiles(console: Any, profiles: list[Any]) -> None:
    """The behaviour profiles of TCP flows, each value with its source."""
    console.print(Text('  for TCP flows: transport = {kind = "tcp", profile = "NAME"}; given parameters win'))
    for profile in profiles:
        if not profile.settings:
            console.print(Text(f"  {profile.name}: {profile.doc} (sets nothing)"))
            continue
        table = Table(title=Text(f"{profile.name}: {profile.doc}"), title_justify="left", expand=False)
        for header in ("sets", "parameter", "value", "source"):
            table.add_column(header, overflow="fold")
        for setting in profile.settings:
            target = (
                "transport" if setting.target == "transport" else "cc (default)" if setting.param == "kind" else "cc"
            )
            table.add_row(*map(_cell, (target, setting.param, setting.value_text(), setting.source)))
        console.print(table)
    console.print()


def _read_rtt_series(path: str, column: str | None, flow: int | None) -> tuple[Any, str]:
    """The RTT column of a CSV (or Parquet) trace as floats, and a description of it."""
    import pandas as pd

    def bad(message: str, field: str = "") -> ScenarioError:
        return ScenarioError(path, field, message)

    try:
        frame = pd.read_parquet(path) if path.endswith(".parquet") else pd.read_csv(path)
    except FileNotFoundError:
        raise bad("no such file") from None
    except pd.errors.EmptyDataError:
        raise bad("the file is empty") from None
    except UnicodeDecodeError:
        raise bad("not a text CSV file") from None
    except Exception as exc:  # parser and I/O errors of pandas and pyarrow: one line
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise bad(f"cannot read it as {'Parquet' if path.endswith('.parquet') else 'CSV'}: {first}") from None
    columns = [str(c) for c in frame.columns]
    if flow is not None:
        if "flow" not in frame.columns:
            raise bad(f"there is no flow column (columns: {', '.join(columns)})", "--flow")
        flows = sorted(pd.unique(frame["flow"]).tolist())
        frame = frame[frame["flow"] == flow]
        if frame.empty:
            raise bad(f"no rows for flow {flow}; flows in the trace: {', '.join(map(str, flows))}", "--flow")
    elif "flow" in frame.columns and frame["flow"].nunique() > 1:
        flows = sorted(pd.unique(frame["flow"]).tolist())
        raise bad(f"the trace holds several flows ({', '.join(map(str, flows))}); choose one with --flow")
    if column is not None:
        if column not in frame.columns:
            raise bad(f"no column {column!r}; columns: {', '.join(columns)}", "--column")
        chosen = column
    elif "rtt_s" in frame.columns:
        chosen = "rtt_s"
    else:
        numeric = [str(c) for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c])]
        if len(numeric) != 1:
            found = f"numeric columns: {', '.join(numeric)}" if numeric else "no numeric column"
            raise bad(f"no column rtt_s and {found}; name the RTT column with --column")
        chosen = numeric[0]
    values = pd.to_numeric(frame[chosen], errors="coerce")
    if values.isna().any():
        row = int(values.isna().to_numpy().argmax())
        raise bad(f"column {chosen!r} has a missing or non-numeric value (data row {row + 1})")
    described = f"{len(values)} RTTs from column {chosen}" + (f" (flow {flow})" if flow is not None else "")
    return values.to_numpy(dtype=float), described


def _cmd_arima(args: argparse.Namespace) -> int:
    if args.arima_command is None:
        raise ScenarioError("", "", "an action is required: fit (see 'ccsim arima --help')")
    from . import arima

    series, described = _read_rtt_series(args.file, args.column, args.flow)
    try:
        selection = arima.select_order(series)
    except ValueError as exc:
        raise ScenarioError(args.file, "", str(exc)) from None
    best = selection.best
    console = _stdout_console()
    console.print(
        Text(f"{args.file}: {described}; ARIMA(p,1,q) by conditional least squares, {best.n} innovations each")
    )
    # A degenerate trace gets no chosen order, only the smallest AIC marked as such.
    marker = "<- smallest AIC" if selection.degenerate else "<- chosen"
    table = Table(title="Orders (paper eq. 14-15, Table 1)", title_justify="left")
    for header in ("model", "phi", "theta", "sigma^2", "AIC", "FPE", "converged", ""):
        table.add_column(header, justify="left" if header in ("model", "phi", "theta", "converged", "") else "right")
    for f in selection.fits:
        table.add_row(
            *map(
                _cell,
                (
                    f.name,
                    " ".join(f"{v:+.5f}" for v in f.phi) or "-",
                    " ".join(f"{v:+.5f}" for v in f.theta) or "-",
                    f"{f.sigma2:.6g}",
                    f"{f.aic:.6f}",
                    f"{f.fpe:.6g}",
                    "yes" if f.converged else f"no ({f.iterations} evals)",
                    marker if f is best else "",
                ),
            )
        )
    console.print(table)
    if selection.unconverged:
        # Left out of the choice; say so when one of them would otherwise have won.
        console.print(
            Text("not converged, left out of the choice: " + ", ".join(f.name for f in selection.unconverged))
        )
        lower = [f.name for f in selection.unconverged if f.aic < best.aic]
        if lower:
            console.print(Text(f"  with a smaller AIC than {best.name}: {', '.join(lower)}"))
    if selection.degenerate:
        console.print(Text(f"no order chosen: {selection.degenerate}"))
        return EXIT_OK
    agreement = "FPE agrees" if selection.best_by_fpe is best else f"FPE alone would pick {selection.best_by_fpe.name}"
    console.print(Text(f"chosen: {best.name} (smallest AIC; {agreement})"))
    coefficients = [f"phi{i} = {v:.5f}" for i, v in enumerate(best.phi, 1)]
    coefficients += [f"theta{i} = {v:.5f}" for i, v in enumerate(best.theta, 1)]
    console.print(Text("  " + ", ".join(coefficients + [f"sigma^2 = {best.sigma2:.6g}"])))
    if best.q <= 1:
        # ca-artt forecasts with ARIMA(2,1,1); its sub-models are the same with zeros.
        phi = list(best.phi) + [0.0] * (2 - best.p)
        theta = list(best.theta) + [0.0] * (1 - best.q)
        console.print(
            Text(
                f'  as ca-artt parameters: cc = {{ kind = "ca-artt", phi1 = {phi[0]:.5f}, '
                f"phi2 = {phi[1]:.5f}, theta1 = {theta[0]:.5f} }}"
            )
        )
    return EXIT_OK


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from . import reproduce

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
            pid, Path(args.out) / pid, quick=args.quick, jobs=args.jobs, progress=sys.stderr.isatty()
        )
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

    from . import sweep

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
    from . import sweep

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


def _cmd_compare(args: argparse.Namespace) -> int:
    from . import compare, sweep
    from .compare.analysis import verdict_lines
    from .compare.report import print_table

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
    console = _stdout_console()
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
    from . import smc

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


_COMMANDS = {
    "run": _cmd_run,
    "validate": _cmd_validate,
    "list": _cmd_list,
    "arima": _cmd_arima,
    "sweep": _cmd_sweep,
    "smc": _cmd_smc,
    "reproduce": _cmd_reproduce,
    "compare": _cmd_compare,
}


# The longest error line: a message quotes values, and one quoting a huge value must not
# become a huge line (ScenarioError cuts its parts; this holds for every message).
MAX_ERROR_CHARS = 4000


def _fail(message: str) -> None:
    sys.stderr.write(f"ccsim: {one_line(message, MAX_ERROR_CHARS)}\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ccsim`` console script; returns the exit code."""
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
    except _UsageError as exc:
        _fail(f"{exc} (see 'ccsim --help')")
        return EXIT_BAD_INPUT
    if args.version:
        from . import __version__

        print(f"ccsim {__version__}")
        return EXIT_OK
    if args.command is None:
        _fail(
            "a command is required: run, validate, list, reproduce, sweep, smc, compare or arima (see 'ccsim --help')"
        )
        return EXIT_BAD_INPUT
    file = getattr(args, "file", "")
    try:
        return _COMMANDS[args.command](args)
    except ScenarioError as exc:
        _fail(str(exc) if exc.file else f"{file}: {exc}" if file else str(exc))
        return EXIT_BAD_INPUT
    except ImportError as exc:
        _fail(f"the engine is not built ({exc}); run 'make develop'")
        return EXIT_ENGINE_FAILURE
    except KeyboardInterrupt:
        _fail("interrupted")
        return EXIT_INTERRUPTED
    except Exception as exc:  # the engine's exceptions: mapped below, anything else re-raised
        return _engine_failure(exc, file, getattr(args, "out", None))


def _engine_failure(exc: Exception, file: str, out: str | None = None) -> int:
    """The engine's exceptions as one line: a rejected configuration is bad input (2); an
    engine failure is a bug (1) whose message carries the seed to reproduce it, and, after a
    ``run``, a replay file (``<out>/replay.json``, else in the temporary directory) and how to
    replay it."""
    core = _engine()
    if isinstance(exc, core.ConfigError):
        field = getattr(exc, "field", "")
        message = getattr(exc, "message", str(exc))
        _fail(f"{file}: engine rejected {field}: {message}" if field else f"{file}: engine rejected it: {message}")
        return EXIT_BAD_INPUT
    if isinstance(exc, core.SimulationError):
        _fail(f"{file}: the engine failed (a bug; please report it with this line): {exc}")
        if getattr(exc, "config", None) is not None:
            _fail(_save_replay(exc, out))
        return EXIT_ENGINE_FAILURE
    raise exc


def _save_replay(exc: Exception, out: str | None) -> str:
    """Write the replay file of a failed run; the line telling how to replay it."""
    import os
    import tempfile

    from .api import replay_hint, write_replay

    try:
        if out:
            path = write_replay(exc, Path(out) / "replay.json")
        else:
            fd, name = tempfile.mkstemp(prefix=f"ccsim-replay-seed{getattr(exc, 'seed', '')}-", suffix=".json")
            os.close(fd)
            path = write_replay(exc, name)
    except OSError as err:
        return f"could not write the replay file ({err.strerror or err}); {replay_hint(exc)}"
    return f"wrote {path}; {replay_hint(exc, path)}"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
