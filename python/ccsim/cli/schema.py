"""``ccsim schema``: the JSON Schema of scenario files as they are written (for editors and
checkers), or with ``--markdown`` their reference, docs/scenario.md."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import ScenarioError, one_line
from .common import EXIT_OK


def _cmd_schema(args: argparse.Namespace) -> int:
    from ..scenario import reference  # imports the engine's registry

    text = reference.markdown() if args.markdown else reference.json_text()
    if args.output is None:
        sys.stdout.write(text)
        return EXIT_OK
    path = Path(args.output)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ScenarioError("", "--output", f"cannot write {one_line(str(path))}: {exc.strerror or exc}") from None
    print(f"wrote {path}")
    return EXIT_OK
