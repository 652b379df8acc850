"""Progress and diagnostics of long work: a plain line now and then when stderr is no terminal
(done of total, elapsed, ETA), records of the ``ccsim`` loggers that the command shows on
stderr (``--quiet`` hides them, ``--verbose`` adds run-by-run detail), and a library that
configures no logging output of its own."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
import time
from pathlib import Path

import ccsim
import pytest
from ccsim import progress
from ccsim.engine import runner
from conftest import ROOT, SCENARIOS, _cli_env, run_cli

FLAGSHIP = str(SCENARIOS / "flagship.toml")
SHORT = ["simulation.duration=2s", "simulation.warmup=0s"]


def progress_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "ccsim.progress"]


def test_plain_lines_say_done_of_total_elapsed_and_eta(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="ccsim")
    bar = progress.Progress("runs", 4, bar=False, interval_s=0)  # a line per update
    bar.update(1)
    bar.update(2, "1 failed")
    bar.update(4, "1 failed")
    bar.close()
    bar.close()  # once only
    lines = progress_lines(caplog)
    assert len(lines) == 4, lines
    assert re.fullmatch(r"runs: 1/4, \d+ s elapsed, eta \d+ s", lines[0]), lines[0]
    assert lines[1].startswith("runs: 2/4 (1 failed), ") and ", eta " in lines[1]
    assert "eta" not in lines[2]  # done: nothing left to estimate
    assert re.fullmatch(r"runs: 4/4 \(1 failed\) in \d+ s", lines[3]), lines[3]


def test_plain_lines_keep_coming_while_nothing_finishes(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="ccsim")
    bar = progress.Progress("runs", None, bar=False, interval_s=0.05)
    bar.update(3, "2 satisfied")
    time.sleep(0.4)
    bar.close()
    lines = progress_lines(caplog)
    assert len(lines) >= 3, lines
    assert all(line.startswith("runs: 3 (2 satisfied)") for line in lines), lines
    assert lines[-1].startswith("runs: 3 (2 satisfied) in "), lines[-1]
    count = len(lines)
    time.sleep(0.15)
    assert len(progress_lines(caplog)) == count  # the thread ended with close()


def test_short_work_writes_no_line(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="ccsim")
    with progress.Progress("runs", 2, bar=False) as bar:
        bar.update(2)
    assert progress_lines(caplog) == []


def test_the_interval_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(progress.INTERVAL_VARIABLE, "2.5")
    assert progress.plain_interval_s() == 2.5
    for bad in ("soon", "-1", "nan"):
        monkeypatch.setenv(progress.INTERVAL_VARIABLE, bad)
        assert progress.plain_interval_s() == progress.PLAIN_INTERVAL_S
    assert [progress.duration_text(s) for s in (4.4, 200, 3 * 3600 + 300)] == ["4 s", "3 min 20 s", "3 h 05 min"]


def test_a_run_reports_simulated_time_as_plain_lines(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="ccsim")
    monkeypatch.setattr(runner, "PROGRESS_AFTER_S", 0.0)
    monkeypatch.setattr(progress, "interactive", lambda: False)
    monkeypatch.setenv(progress.INTERVAL_VARIABLE, "0")
    ccsim.run(FLAGSHIP, overrides=SHORT, progress=True)
    lines = progress_lines(caplog)
    assert lines and all(re.match(r"simulating: \d+\.\d/2\.0 s simulated, \d+ s elapsed", line) for line in lines[:-1])
    assert re.fullmatch(r"simulating: 2\.0/2\.0 s simulated in \d+ s", lines[-1]), lines
    debug = [r.getMessage() for r in caplog.records if r.name == "ccsim.engine.runner"]
    assert any("events in" in message for message in debug), debug


SWEEP = """
scenario = "{scenario}"
seeds = 2

[set]
"simulation.duration" = "2s"
"simulation.warmup" = "0s"
"""


def test_the_command_shows_progress_on_stderr_unless_quiet(tmp_path: Path) -> None:
    sweep_file = tmp_path / "sweep.toml"
    sweep_file.write_text(SWEEP.format(scenario=FLAGSHIP), encoding="utf-8")
    env = dict(_cli_env(), CCSIM_PROGRESS_INTERVAL="0")

    def sweep(out: str, *options: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "ccsim", "sweep", str(sweep_file), "--out", str(tmp_path / out), "--jobs", "1"]
        return subprocess.run([*argv, *options], capture_output=True, text=True, env=env, timeout=300)

    shown = sweep("shown")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stderr.splitlines()
    assert "ccsim: running 2 of 2 runs on 1 local process" in lines, lines
    assert any(re.match(r"ccsim: runs: 1/2, \d+ s elapsed, eta \d+ s$", line) for line in lines), lines
    assert any(re.match(r"ccsim: runs: 2/2 in \d+ s$", line) for line in lines), lines
    assert not any("debug" in line for line in lines), lines

    verbose = sweep("verbose", "--verbose")
    assert verbose.returncode == 0, verbose.stderr
    assert (
        len(re.findall(r"ccsim: debug: ccsim\.experiments\.sweep\.running: run \S+ \(seed \d+\) done", verbose.stderr))
        == 2
    )

    quiet = sweep("quiet", "--quiet")
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")

    both = run_cli("run", FLAGSHIP, "--quiet", "--verbose")
    assert both.returncode == 2 and "not allowed with argument" in both.stderr


def test_the_library_configures_no_logging_output() -> None:
    code = (
        "import logging, ccsim\n"
        f"ccsim.run({FLAGSHIP!r}, overrides={SHORT!r}, progress=True)\n"
        "assert not logging.getLogger().handlers, logging.getLogger().handlers\n"
        "handlers = logging.getLogger('ccsim').handlers\n"
        "assert [type(h).__name__ for h in handlers] == ['NullHandler'], handlers\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_cli_env(), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    package = ROOT / "python" / "ccsim"
    assert not [p for p in package.rglob("*.py") if "basicConfig" in p.read_text(encoding="utf-8")]
