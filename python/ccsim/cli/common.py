"""What the commands share: exit codes, the one-line error on stderr, the ``ccsim`` loggers'
output, consoles and cells for tables, and the checks made before a command runs anything
(output directory, memory)."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from rich.console import Console
from rich.text import Text

from ..errors import ScenarioError, one_line

EXIT_OK = 0
EXIT_ENGINE_FAILURE = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


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
    estimated memory exceeds ``--max-memory`` or the machine's budget (scenario/limits.py)."""
    from ..scenario.limits import check
    from ..scenario.schema import load

    scenario = load(args.file, args.overrides)
    check(scenario.to_config(), args.file, args.max_memory)
    return scenario


# The longest error line: a message quotes values, and one quoting a huge value must not
# become a huge line (ScenarioError cuts its parts; this holds for every message).
MAX_ERROR_CHARS = 4000


def _fail(message: str) -> None:
    sys.stderr.write(f"ccsim: {one_line(message, MAX_ERROR_CHARS)}\n")


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Log records on whatever ``sys.stderr`` is when they are written: a progress bar on a
    terminal puts its own stream there, which prints lines above the bar."""

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


class _Formatter(logging.Formatter):
    """``ccsim: MESSAGE`` as the errors are; warnings and debug records say what they are."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.levelno >= logging.ERROR:
            text = f"ccsim: error: {message}"
        elif record.levelno >= logging.WARNING:
            text = f"ccsim: warning: {message}"
        elif record.levelno <= logging.DEBUG:
            text = f"ccsim: debug: {record.name}: {message}"
        else:
            text = f"ccsim: {message}"
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


@contextmanager
def _configure_logging(args: argparse.Namespace) -> Iterator[None]:
    """Show the ``ccsim`` loggers' records on stderr while a command runs: progress and notes
    (INFO) by default, also diagnostics (DEBUG) with ``--verbose``, only warnings and errors
    with ``--quiet``. Only the command does this, and it puts the loggers back as they were when
    it ends (``main`` may be called from a program); the library leaves logging to the program
    that uses it."""
    level = logging.DEBUG if getattr(args, "verbose", False) else logging.INFO
    if getattr(args, "quiet", False):
        level = logging.WARNING
    logger = logging.getLogger("ccsim")
    handler = _StderrHandler()
    handler.setFormatter(_Formatter())
    handler.setLevel(level)
    before = logger.level
    logger.addHandler(handler)
    logger.setLevel(min(level, before) if before else level)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(before)
