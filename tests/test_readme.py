"""The README's examples work as printed.

Every command of its ``sh`` blocks runs in order, as a shell would run it, from a copy of the
repository root (links to the checkout's top-level entries, so that what the commands write,
``out/``, ``results/``, ``my.toml``, lands in a temporary directory), and must exit with 0; the
``python`` block runs there too. A few commands are not run, each for the reason in
:data:`SKIPPED`; those that are ``ccsim`` commands are still parsed by the CLI's own argument
parser, so a renamed option or subcommand fails here. The ``toml`` blocks are a whole scenario
and fragments of one: the first validates alone, each later one appended to it.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ccsim.cli.parser import _build_parser

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)

# What the commands write, kept out of the copy of the root so that it starts empty.
OUTPUTS = {"out", "results", "reproductions", "my.toml"}

# (pattern a skipped command matches, why it is not run). Every pattern must match a command.
SKIPPED: list[tuple[str, str]] = [
    (r"^make ", "builds the project and runs the whole suite, this test included"),
    (
        r"^\.venv/bin/ccsim reproduce all --quick\b",
        "takes minutes; tests/test_reproduce*.py run every paper's quick form",
    ),
    (r"--scheduler tcp://HOST:", "needs a Dask cluster; HOST stands for its scheduler's address"),
]


def blocks(language: str) -> list[str]:
    return [m.group(2) for m in FENCE.finditer(README.read_text(encoding="utf-8")) if m.group(1) == language]


def commands(block: str) -> list[str]:
    """The block's commands: backslash-continued lines joined, comment-only lines dropped."""
    out: list[str] = []
    pending = ""
    for line in block.splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1]
            continue
        out.append(pending + line)
        pending = ""
    assert not pending, f"a README command ends in a backslash: {pending!r}"
    return out


def skip_reason(command: str) -> str | None:
    return next((why for pattern, why in SKIPPED if re.search(pattern, command)), None)


@pytest.fixture
def root_copy(tmp_path: Path) -> Path:
    if not (ROOT / ".venv" / "bin" / "ccsim").exists():
        pytest.skip("the README's commands use .venv/bin/ccsim; `make develop` sets it up")
    copy = tmp_path / "root"
    copy.mkdir()
    for entry in ROOT.iterdir():
        if entry.name not in OUTPUTS:
            (copy / entry.name).symlink_to(entry)
    return copy


def test_readme_commands_run_as_printed(root_copy: Path) -> None:
    env = dict(os.environ, MPLBACKEND="Agg", COLUMNS="200")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "python"), env.get("PYTHONPATH")]))
    lines = [c for block in blocks("sh") for c in commands(block)]
    ran, matched = [], set()
    for command in lines:
        why = skip_reason(command)
        if why is not None:
            matched.update(p for p, _ in SKIPPED if re.search(p, command))
            argv = shlex.split(command, comments=True)
            if argv[0] == ".venv/bin/ccsim":
                _build_parser().parse_args(argv[1:])  # exits (SystemExit) on an unknown option
            continue
        started = time.perf_counter()
        proc = subprocess.run(
            ["bash", "-c", command], cwd=root_copy, env=env, capture_output=True, text=True, timeout=600
        )
        assert proc.returncode == 0, f"{command}\nexit {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
        ran.append((command, time.perf_counter() - started))
    assert matched == {p for p, _ in SKIPPED}, "a SKIPPED pattern matches no README command any more"
    assert len(ran) >= 12, ran
    # What the commands say they make is there.
    assert (root_copy / "out" / "rtt_samples.parquet").exists()
    assert (root_copy / "out" / "dedu-ncs" / "report.md").exists()
    assert (root_copy / "out" / "cmp" / "report.html").exists()
    assert (root_copy / "results" / "smc" / "smc.json").exists()

    (python_block,) = blocks("python")
    proc = subprocess.run(
        [sys.executable, "-c", python_block], cwd=root_copy, env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr


def test_readme_scenario_and_fragments_validate(tmp_path: Path) -> None:
    whole, *fragments = blocks("toml")
    assert "[simulation]" in whole and fragments
    for k, text in enumerate([whole] + [whole + "\n" + f for f in fragments]):
        path = tmp_path / f"readme_{k}.toml"
        path.write_text(text, encoding="utf-8")
        proc = subprocess.run(
            [sys.executable, "-m", "ccsim", "validate", str(path)],
            capture_output=True,
            text=True,
            env=dict(os.environ, PYTHONPATH=str(ROOT / "python")),
            timeout=120,
        )
        assert proc.returncode == 0, f"README toml block {k}:\n{text}\n{proc.stderr}"
