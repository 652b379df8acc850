"""Shared test setup: the package from this checkout, and helpers to run the CLI."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"

# `make develop` installs ccsim into the venv; running pytest from a bare checkout still
# finds the Python sources.
if str(ROOT / "python") not in sys.path:
    sys.path.insert(0, str(ROOT / "python"))


@pytest.fixture(autouse=True)
def _python_models_stay_in_their_test() -> Any:
    """Python models a test registers (tests/test_python_models.py) are forgotten after it, so
    that the registry other tests read is the engine's."""
    from ccsim.engine import user_models

    before = {(m.declared.family, m.declared.name) for m in user_models.registered()}
    yield
    for model in user_models.registered():
        key = (model.declared.family, model.declared.name)
        if key not in before:
            user_models.unregister(*key)


def _cli_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "python"), env.get("PYTHONPATH")]))
    env["MPLBACKEND"] = "Agg"
    env["COLUMNS"] = "200"  # rich wraps tables to the terminal width; keep rows on one line
    return env


# Python code for the peak resident memory of the process running it, in MiB: its own address
# space's high-water mark (VmHWM). getrusage's ru_maxrss would not do for a subprocess: Linux
# carries the parent's size over fork and exec, so a child of a large test process would
# report the parent's peak.
PEAK_RSS_MIB = "int(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM'))) / 1024"


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m ccsim ARGS`` in a subprocess, as a user would run it."""
    return subprocess.run(
        [sys.executable, "-m", "ccsim", *args], capture_output=True, text=True, env=_cli_env(), cwd=cwd, timeout=600
    )


def interrupt_cli(*args: str, runs: Path, after: int, sig: int = signal.SIGINT) -> tuple[int, str]:
    """Start ``python -m ccsim ARGS``, send it ``sig`` once ``runs`` holds ``after`` finished run
    directories (or after 60 s), and return its exit code and standard error."""
    # Start the CLI with Ctrl-C's default action, as a shell would: a child inherits an ignored
    # SIGINT, and in full-suite runs this process was found ignoring it by the time of the
    # interrupt tests (a library's doing; no test module does it on import).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "ccsim", *args],
            env=_cli_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    finally:
        signal.signal(signal.SIGINT, previous)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len([p for p in runs.glob("*") if not p.name.startswith(".")]) < after:
        time.sleep(0.02)
    proc.send_signal(sig)
    _, stderr = proc.communicate(timeout=60)
    return proc.returncode, stderr


@pytest.fixture
def write_toml(tmp_path: Path):
    """Write a scenario file and return its path."""

    def write(text: str, name: str = "scenario.toml") -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return write


# --- compare: a made-up matrix, analysed without simulating -----------------------------------

# The sweep table's columns of each metric (compare.analysis.run_metrics reads them), and what
# a made-up run measured where a test gives nothing.
SWEEP_COLUMNS = {
    "utilization": "bottleneck.utilization",
    "goodput": "goodput_bps_total",
    "jain": "jain_index",
    "mean_delay": "bottleneck.mean_sojourn_s",
    "p99_delay": "bottleneck.p99_sojourn_s",
    "drop_ratio": "bottleneck.drop_ratio",
    "retransmissions": "retransmissions",
}
DEFAULTS = {
    "utilization": 0.9,
    "goodput": 9e6,
    "jain": 0.9,
    "mean_delay": 0.01,
    "p99_delay": 0.02,
    "drop_ratio": 0.01,
    "retransmissions": 10.0,
}


def analyse_cells(
    cells: dict[str, dict[str, list[float]]], seeds: list[int], objective: str, tmp_path: Path, cc: str = "newreno"
) -> Any:
    """``compare.analyse`` of a made-up matrix: one ``cc`` cell per queue name in ``cells``, each
    given its metric values per seed (the others at ``DEFAULTS``), without simulating anything."""
    import pandas as pd
    from ccsim.experiments import compare

    queues = list(cells)
    spec = compare.CompareSpec(
        file="made_up.toml",
        scenario=tmp_path / "made_up.toml",
        overrides=[],
        ccs=[cc],
        queues=queues,
        seeds=len(seeds),
        bottleneck="A->B",
        queue_key="topology.bottleneck.queue",
        cc_keys=["flows.cc"],
        fixed={},
        groups=[],
        has_control=False,
        has_transfers=False,
        notes=[],
    )
    rows = []
    for point, queue in enumerate(queues):
        for replicate, seed in enumerate(seeds):
            row = {
                "status": "ok",
                "point": point,
                "replicate": replicate,
                "seed": seed,
                "run_dir": f"runs/{queue}-{seed}",
            }
            for metric, column in SWEEP_COLUMNS.items():
                values = cells[queue].get(metric)
                row[column] = DEFAULTS[metric] if values is None else values[replicate]
            rows.append(row)
    return compare.analyse(spec, compare.parse_objective(objective), tmp_path, pd.DataFrame(rows))
