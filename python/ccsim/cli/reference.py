"""The command-line reference, docs/cli.md, generated from the ``ccsim`` command's own argparse
parser: every command, its usage, arguments, options, choices and defaults, in the order of
``ccsim --help``. Regenerate it with::

    python -m ccsim.cli.reference > docs/cli.md

(tests/test_docs.py fails when the file is not what this gives).
"""

from __future__ import annotations

import argparse
import functools
import sys

__all__ = ["markdown"]

# Usage lines are wrapped at this width whatever the terminal's (argparse reads COLUMNS).
WIDTH = 100

_HEADER = """# Command line

<!-- Generated from the argparse parser by `python -m ccsim.cli.reference > docs/cli.md`; do not edit. -->

Every command of `ccsim`, with its arguments and options, as `ccsim COMMAND --help` prints them.
`python -m ccsim` is the same command. Errors in the input end in one line on stderr that names
the file, the field and what is allowed, with exit code 2; an engine failure exits with 1 and an
interrupt with 130. The commands that do long work (`run`, `sweep`, `smc`, `compare`,
`reproduce`) show their progress on stderr: a bar on a terminal, else a plain line every 20 s
(`CCSIM_PROGRESS_INTERVAL` sets the seconds); `--quiet` hides it, `--verbose` adds what is done
run by run. `ccsim completion bash` prints the shell completion script.
"""


def _escape(text: str) -> str:
    """Text for Markdown, read as written: no emphasis, link or HTML made of its characters."""
    for char in "\\`*_[]|":
        text = text.replace(char, "\\" + char)
    return text.replace("<", "&lt;").replace(">", "&gt;")


def _fixed_width(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = functools.partial(argparse.HelpFormatter, width=WIDTH)  # type: ignore[assignment]


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """(name, one-line help, parser) of each command of ``parser``, in the order of its help."""
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                out.append((name, helps.get(name, ""), sub))
    return out


def _argument(action: argparse.Action) -> str:
    """How an argument is written, as code: ``FILE.toml``, ``--seed SEED``, ``--verbose``, ``-v``."""
    metavar = action.metavar if isinstance(action.metavar, str) else None
    if not action.option_strings:
        return f"`{metavar or action.dest}`"
    value = f" {metavar or action.dest.upper()}" if action.nargs != 0 else ""
    return ", ".join(f"`{option}{value}`" for option in action.option_strings)


def _description(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    formatter = parser._get_formatter()
    text = formatter._expand_help(action) if action.help else ""
    extras = []
    if action.choices is not None and not isinstance(action, argparse._SubParsersAction):
        extras.append("one of " + ", ".join(str(choice) for choice in action.choices))
    if action.option_strings and action.nargs != 0 and action.default not in (None, [], argparse.SUPPRESS):
        if "default" not in text:
            extras.append(f"default {action.default}")
    if isinstance(action, argparse._AppendAction) and "repeatable" not in text:
        extras.append("repeatable")
    return _escape("; ".join([text] + extras) if text else "; ".join(extras))


def _command(name: str, parser: argparse.ArgumentParser, level: int) -> list[str]:
    _fixed_width(parser)
    lines = [f"{'#' * level} `{name}`", ""]
    if parser.description:
        lines += [_escape(parser.description), ""]
    lines += ["```text", parser.format_usage().strip(), "```", ""]
    rows = [
        action
        for action in parser._actions
        if not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction))
        and action.help != argparse.SUPPRESS
    ]
    if rows:
        lines += ["| argument | meaning |", "|---|---|"]
        lines += [f"| {_argument(action)} | {_description(parser, action)} |" for action in rows]
        lines.append("")
    if parser.epilog:
        lines += [_escape(parser.epilog), ""]
    for sub_name, _, sub in _subcommands(parser):
        lines += _command(f"{name} {sub_name}", sub, level + 1)
    return lines


def markdown() -> str:
    """docs/cli.md: the reference of every command."""
    from .parser import _build_parser

    parser = _build_parser()
    _fixed_width(parser)
    lines = [_HEADER, "| command | what it does |", "|---|---|"]
    commands = _subcommands(parser)
    lines += [f"| [`{name}`](#ccsim-{name}) | {_escape(help_text)} |" for name, help_text, _ in commands]
    lines += ["", "`ccsim --version` prints the version; `ccsim COMMAND --help` the options of a command."]
    lines += ["", "```text", parser.format_usage().strip(), "```", ""]
    for name, _, sub in commands:
        lines += _command(f"ccsim {name}", sub, 2)
    return "\n".join(lines).rstrip("\n") + "\n"


if __name__ == "__main__":
    sys.stdout.write(markdown())
