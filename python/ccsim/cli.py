"""The ``ccsim`` command: run, validate and list.

Every mistake in the input (file, field, argument) ends in one line on stderr that names the
file, the field and what is allowed, and exit code 2 — never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any, NoReturn

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .errors import ScenarioError
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

    run = commands.add_parser("run", help="run a scenario file and print a summary",
                              description="Run a scenario file; print a summary table and optionally write results.")
    run.add_argument("file", metavar="FILE.toml", help="scenario file")
    run.add_argument("--seed", type=_seed, help="master seed (replaces simulation.seed)")
    run.add_argument("--out", metavar="DIR", help="write flows/queues/traces.parquet, summary.json and plots here")
    _add_set_option(run)
    run.add_argument("--quiet", action="store_true", help="print nothing but errors (no table, no progress bar)")

    validate = commands.add_parser("validate", help="check a scenario file without running it",
                                   description="Check a scenario file (and the engine's view of it) without running.")
    validate.add_argument("file", metavar="FILE.toml", help="scenario file")
    _add_set_option(validate)

    listing = commands.add_parser("list", help="list queue disciplines, congestion controls, transports and "
                                  "applications with their parameters",
                                  description="Every registered model with its parameters, units and defaults.")
    listing.add_argument("--json", action="store_true", help="print the registry as JSON")
    return parser


def _add_set_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override a key of the file, e.g. --set simulation.duration=30s "
                             "--set topology.bottleneck.queue.limit=50p (repeatable)")


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
    console.print(Text(
        f"{file}: seed {raw['seed']}, {raw['duration_s']:g} s simulated (measured after {raw['warmup_s']:g} s), "
        f"{raw['events']:,} events in {result.wall_time_s:.2f} s"
    ))
    console.print(_flows_table(raw["flows"]))
    console.print(_queues_table(raw, result.config))
    line = f"Jain index {raw['jain_index']:.4f}"
    if raw.get("utilization") is not None:
        line += f"; bottleneck {raw['bottleneck']} utilization {raw['utilization'] * 100:.1f} %"
    console.print(Text(line))


def _flows_table(flows: list[dict[str, Any]]) -> Table:
    named = any(flow["name"] != str(flow["id"]) for flow in flows)
    grouped = any(flow["group"] for flow in flows)
    headers = ["id"] + (["name"] if named else []) + (["group"] if grouped else []) + [
        "path", "cc", "goodput Mb/s", "retx", "RTOs", "RTT ms", "delay ms"]
    table = Table(title="Flows", title_justify="left")
    for header in headers:
        table.add_column(header, justify="left" if header in ("name", "group", "path", "cc") else "right")
    for flow in flows:
        row: list[object] = [flow["id"]]
        row += [flow["name"]] if named else []
        row += [flow["group"] or ""] if grouped else []
        row += [
            f"{flow['src']}->{flow['dst']}", flow["cc"] or flow["transport"], f"{flow['goodput_bps'] / 1e6:.3f}",
            flow["retransmissions"], flow["timeouts"], _ms(flow["rtt_mean_s"]), _ms(flow["delay_mean_s"]),
        ]
        table.add_row(*map(_cell, row))
    return table


def _queues_table(raw: dict[str, Any], config: dict[str, Any]) -> Table:
    # Congestion shows in queues fed by routers; of those, list the ones that ever held more
    # than the packet in service (hosts' own queues and idle ones would bury them).
    routers = {node["name"] for node in config["nodes"] if node["kind"] == "router"}
    shown = [q for q in raw["queues"] if q["from"] in routers and (
        q["name"] == raw.get("bottleneck") or q["max_len_pkts"] > 1 or q["drops"] or q["marks"])]
    hidden = sum(1 for q in raw["queues"] if q["from"] in routers) - len(shown)
    caption = f"{hidden} other router queues never held more than one packet" if hidden else None
    table = Table(title="Router queues", title_justify="left", caption=caption, caption_justify="left")
    for header in ("queue", "kind", "mean p", "sd p", "max p", "sojourn ms", "drops", "marks", "drop %", "util %"):
        table.add_column(header, justify="left" if header in ("queue", "kind") else "right")
    for queue in shown:
        table.add_row(*map(_cell, (
            queue["name"], queue["kind"], f"{queue['mean_len_pkts']:.1f}", f"{queue['sd_len_pkts']:.1f}",
            queue["max_len_pkts"], _ms(queue["mean_sojourn_s"]), queue["drops"], queue["marks"],
            f"{queue['drop_ratio'] * 100:.2f}", f"{queue['utilization'] * 100:.1f}",
        )))
    return table


def _cmd_run(args: argparse.Namespace) -> int:
    from .api import run

    quiet: bool = args.quiet
    console = _stdout_console()
    progress = not quiet and Console(stderr=True).is_terminal
    result = run(args.file, seed=args.seed, progress=progress, overrides=args.overrides)
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


def _cmd_validate(args: argparse.Namespace) -> int:
    from .scenario import load

    scenario = load(args.file, args.overrides)
    config = scenario.to_config()
    _engine().Simulation(json.dumps(config))  # the engine's own checks (routes, parameters)
    print(f"{args.file}: ok ({len(config['nodes'])} nodes, {len(config['links'])} links, "
          f"{len(config['flows'])} flows)")
    return EXIT_OK


def _cmd_list(args: argparse.Namespace) -> int:
    if args.json:
        print(_engine().registry_json())
        return EXIT_OK
    registry = get_registry()
    console = _stdout_console()
    for family in registry.families():
        console.print(Text(f"{FAMILY_TITLES.get(family, family).capitalize()}s ({family})", style="bold underline"))
        for model in registry.models(family):
            if not model.params:
                console.print(Text(f"  {model.name}: {model.doc} (no parameters)"))
                continue
            table = Table(title=Text(f"{model.name}: {model.doc}"), title_justify="left", expand=False)
            for header in ("parameter", "unit", "default", "range", "description"):
                table.add_column(header, overflow="fold")
            for param in model.params:
                table.add_row(*map(_cell, (
                    param.name, KIND_UNITS.get(param.kind, param.kind), format_param(param.kind, param.default),
                    param.range_text(), param.doc,
                )))
            console.print(table)
        console.print()
    return EXIT_OK


_COMMANDS = {"run": _cmd_run, "validate": _cmd_validate, "list": _cmd_list}


def _fail(message: str) -> None:
    sys.stderr.write(f"ccsim: {message}\n")


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
        _fail("a command is required: run, validate or list (see 'ccsim --help')")
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
        return _engine_failure(exc, file)


def _engine_failure(exc: Exception, file: str) -> int:
    """The engine's exceptions as one line: a rejected configuration is bad input (2); an
    engine failure is a bug (1) whose message carries the seed to reproduce it."""
    core = _engine()
    if isinstance(exc, core.ConfigError):
        field = getattr(exc, "field", "")
        message = getattr(exc, "message", str(exc))
        _fail(f"{file}: engine rejected {field}: {message}" if field else f"{file}: engine rejected it: {message}")
        return EXIT_BAD_INPUT
    if isinstance(exc, core.SimulationError):
        _fail(f"{file}: the engine failed (a bug; please report it with this line): {exc}")
        return EXIT_ENGINE_FAILURE
    raise exc


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
