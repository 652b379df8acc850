"""What an output directory records so that it can be rerun and traced to its build: for a
run, the scenario as given and as resolved, the command line, the seed, ccsim's version and a
fingerprint of the compiled engine (``provenance.json``, ``scenario.toml``); for a sweep (and
compare and SMC, which run one) the same environment and the files it was made from, beside
each run's exact configuration (``runs/*/config.json``)."""

from __future__ import annotations

import functools
import hashlib
import json
import platform
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

PROVENANCE_FILE = "provenance.json"
SCENARIO_COPY = "scenario.toml"


@functools.lru_cache(maxsize=1)
def engine_fingerprint() -> str:
    """SHA-256 of the compiled engine (the ``_core`` extension module): any rebuild that
    changes the engine changes it."""
    from .. import _core

    digest = hashlib.sha256()
    with open(_core.__file__, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def environment(argv: list[str]) -> dict[str, Any]:
    """What any output records of how it was made: ccsim's version, the engine's fingerprint,
    Python and the platform, and the command line ``argv``."""
    from .. import __version__

    return {
        "ccsim_version": __version__,
        "engine_sha256": engine_fingerprint(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "command": shlex.join(argv),
        "argv": list(argv),
    }


def file_sha256(path: str | Path) -> str | None:
    """SHA-256 of a file's bytes, None if it cannot be read."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def provenance(
    scenario: Any, config: Mapping[str, Any], scenario_file: str, overrides: list[str], argv: list[str]
) -> dict[str, Any]:
    """The record of one run: ``scenario`` (a Scenario) after ``overrides``, ``config`` the core
    configuration that ran (its seed is the run's), ``argv`` the command line."""
    return {
        **environment(argv),
        "scenario_file": scenario_file,
        "overrides": list(overrides),
        "seed": config["seed"],
        "config_sha256": hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest(),
        "scenario": scenario.model_dump(mode="json"),
        "rerun": shlex.join(
            ["ccsim", "run", SCENARIO_COPY, "--seed", str(config["seed"])]
            + [item for o in overrides for item in ("--set", o)]
        ),
    }


def write_provenance(out: str | Path, record: Mapping[str, Any], scenario_text: str) -> list[Path]:
    """Write ``provenance.json`` and the scenario file as given (``scenario.toml``) into
    ``out``, each atomically and never through a symlink planted there."""
    from ..paths import inside, write_atomically

    written = []
    for name, text in (
        (PROVENANCE_FILE, json.dumps(record, indent=1, sort_keys=True) + "\n"),
        (SCENARIO_COPY, scenario_text),
    ):
        path = inside(out, name, "--out")
        write_atomically(path, functools.partial(_write_text, text=text))
        written.append(path)
    return written


def _write_text(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
