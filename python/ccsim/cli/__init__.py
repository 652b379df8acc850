"""The ``ccsim`` command: run, validate, list, schema, ``arima fit`` for RTT traces, ``sweep``, ``smc``,
``compare``, ``new`` (a new model's file) and ``completion`` (the shell completion script).

Every mistake in the input (file, field, argument) ends in one line on stderr that names the
file, the field and what is allowed, and exit code 2 — never a traceback. The parser is in
``parser``, the commands in ``run`` (run, validate), ``listing`` (list), ``schema`` (schema),
``arima``, ``experiments`` (reproduce, sweep, compare, smc), ``new`` (new) and ``completion``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ..errors import ScenarioError
from .arima import _cmd_arima
from .common import (
    EXIT_BAD_INPUT,
    EXIT_ENGINE_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    _configure_logging,
    _engine,
    _fail,
)
from .completion import _cmd_completion
from .experiments import _cmd_compare, _cmd_reproduce, _cmd_smc, _cmd_sweep
from .listing import _cmd_list
from .new import _cmd_new
from .parser import _build_parser, _UsageError
from .run import _cmd_run, _cmd_validate
from .schema import _cmd_schema

__all__ = ["main"]

_COMMANDS = {
    "run": _cmd_run,
    "validate": _cmd_validate,
    "list": _cmd_list,
    "schema": _cmd_schema,
    "arima": _cmd_arima,
    "sweep": _cmd_sweep,
    "smc": _cmd_smc,
    "reproduce": _cmd_reproduce,
    "compare": _cmd_compare,
    "new": _cmd_new,
    "completion": _cmd_completion,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ccsim`` console script; returns the exit code."""
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
    except _UsageError as exc:
        _fail(f"{exc} (see 'ccsim --help')")
        return EXIT_BAD_INPUT
    if args.version:
        from .. import __version__

        print(f"ccsim {__version__}")
        return EXIT_OK
    if args.command is None:
        _fail(
            "a command is required: run, validate, list, schema, reproduce, sweep, smc, compare, arima, new "
            "or completion (see 'ccsim --help')"
        )
        return EXIT_BAD_INPUT
    with _configure_logging(args):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    """Run the command ``args`` names; its exit code, every input error as one line."""
    file = getattr(args, "file", "")
    try:
        _load_models(getattr(args, "load", []))
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


def _load_models(files: list[str]) -> None:
    """Import the Python model files named by ``--load``."""
    from ..engine.user_models import load_file
    from ..errors import FieldError

    for file in files:
        try:
            load_file(file)
        except FieldError as exc:
            raise ScenarioError(file, "--load", exc.message) from None


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
    if isinstance(exc, core.SimulationError) and getattr(exc, "model", None) is not None:
        # A Python model raised: the user's own traceback, no bug report.
        import traceback

        cause = exc.__cause__
        if cause is not None:
            sys.stderr.write("".join(traceback.format_exception(cause)))
        _fail(f"{file}: {exc}")
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

    from ..engine.runner import replay_hint, write_replay

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
