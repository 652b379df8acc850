"""``ccsim completion SHELL``: the shell completion script of the ``ccsim`` command.

The script is generated from the command's own argparse parser by shtab, so that it knows
every command, option and choice the installed version has: nothing to keep in step by hand.
Scenario files complete to ``*.toml``, ``--load`` to ``*.py``, ``--out`` and ``--root`` to
directories.
"""

from __future__ import annotations

import argparse
from typing import Any

from .common import EXIT_OK

SHELLS = ("bash", "zsh")

# shtab's completers: the shell code that lists candidates, per shell.
_TOML = {"bash": "_shtab_ccsim_compgen_toml_files", "zsh": "_files -g '*.toml'"}
_PYTHON = {"bash": "_shtab_ccsim_compgen_py_files", "zsh": "_files -g '*.py'"}
_PREAMBLE = {
    "bash": """
# Directories (to descend into) and files with the suffix.
_shtab_ccsim_compgen_toml_files() {
  compgen -d -- "$1"
  compgen -f -X '!*?.toml' -- "$1"
}
_shtab_ccsim_compgen_py_files() {
  compgen -d -- "$1"
  compgen -f -X '!*?.py' -- "$1"
}
"""
}


def completion_script(shell: str) -> str:
    """The completion script of ``ccsim`` for ``shell`` (one of ``SHELLS``)."""
    import shtab

    from .parser import _build_parser

    parser = _build_parser()
    _mark_paths(parser)
    # shtab takes a preamble per shell as a dict, though its signature says str.
    preamble: Any = _PREAMBLE
    script: str = shtab.complete(parser, shell=shell, preamble=preamble)
    return script if script.endswith("\n") else script + "\n"


def _mark_paths(parser: argparse.ArgumentParser) -> None:
    """Tell shtab which arguments are paths, by their metavars and names, in every command."""
    import shtab

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):  # aliases share a parser
                _mark_paths(sub)
            continue
        metavar = str(action.metavar or "")
        complete: Any = None
        if metavar.endswith(".toml"):
            complete = _TOML
        elif metavar.endswith(".py"):
            complete = _PYTHON
        elif metavar == "DIR":
            complete = shtab.DIRECTORY
        elif metavar in ("FILE", "TRACE.csv"):
            complete = shtab.FILE
        if complete is not None:
            action.complete = complete  # type: ignore[attr-defined]  # read by shtab


def _cmd_completion(args: argparse.Namespace) -> int:
    print(completion_script(args.shell), end="")
    return EXIT_OK
