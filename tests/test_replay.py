"""An engine panic (a bug) surfaces as ``SimulationError`` carrying the seed and the scenario,
``ccsim run`` reports it in one line with a replay file and exit code 1, and the replay file
reproduces the run. The panic is forced with the test-only ``_panic_at_ns`` knob, since the
bindings are built in release mode where the invariant checks are compiled out."""

from __future__ import annotations

import json
from pathlib import Path

import ccsim
import pytest
from ccsim.cli import main
from ccsim.cli.common import EXIT_ENGINE_FAILURE
from ccsim.engine import runner

_core = pytest.importorskip("ccsim._core")

SCENARIO = """
[simulation]
duration = "2s"
seed = 3

[topology]
kind = "explicit"
nodes = [ { name = "h1", kind = "host" }, { name = "r", kind = "router" }, { name = "h2", kind = "host" } ]
links = [
  { a = "h1", b = "r", rate = "100Mbps", delay = "1ms" },
  { a = "r", b = "h2", rate = "10Mbps", delay = "5ms" },
]
bottleneck_queue = "r->h2"

[[flows]]
src = "h1"
dst = "h2"
cc = "newreno"
"""

PANIC_AT_NS = 500_000_000


@pytest.fixture
def failing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every run through ``ccsim.run`` panics in the engine at 0.5 s."""
    monkeypatch.setattr(runner, "_TEST_PANIC_AT_NS", PANIC_AT_NS)


def test_a_panic_carries_the_seed_the_scenario_and_the_exact_configuration(write_toml, failing) -> None:
    path = write_toml(SCENARIO)
    with pytest.raises(_core.SimulationError) as info:
        ccsim.run(path, seed=42, overrides=["simulation.duration=1s"])
    exc = info.value
    assert exc.seed == 42
    assert exc.scenario == str(path)
    assert exc.overrides == ["simulation.duration=1s"]
    assert exc.config["seed"] == 42 and exc.config["duration_ns"] == 1_000_000_000
    assert "_panic_at_ns" in exc.panic and "seed 42" in str(exc)
    # The engine stops at exactly the requested time, whatever slices Python runs it in, and
    # says where in its code it panicked.
    assert f"t={PANIC_AT_NS} ns" in exc.panic
    assert "(at crates/ccsim-core/src/engine/mod.rs:" in exc.panic
    hint = runner.replay_hint(exc)
    assert f"ccsim run {path} --seed 42 --set simulation.duration=1s" in hint


def test_a_panic_without_a_file_still_names_the_seed(failing) -> None:
    # A scenario given as a dict has no file to name.
    import tomllib

    with pytest.raises(_core.SimulationError) as info:
        ccsim.run(tomllib.loads(SCENARIO))
    assert info.value.seed == 3 and info.value.scenario is None
    assert runner.replay_hint(info.value) == "replay with seed 3"


def test_the_replay_file_reproduces_the_run(write_toml, tmp_path: Path, failing, monkeypatch) -> None:
    path = write_toml(SCENARIO)
    with pytest.raises(_core.SimulationError) as info:
        ccsim.run(path, seed=9)
    replay_file = runner.write_replay(info.value, tmp_path / "replay.json")
    record = json.loads(replay_file.read_text())
    assert (record["seed"], record["scenario"], record["config"]) == (9, str(path), info.value.config)
    # Replaying fails again, with the same seed.
    with pytest.raises(_core.SimulationError) as again:
        ccsim.replay(replay_file)
    assert again.value.seed == 9 and again.value.panic == info.value.panic
    # Without the knob, the replayed configuration is the scenario at that seed: the same run.
    monkeypatch.setattr(runner, "_TEST_PANIC_AT_NS", None)
    del record["config"]["_panic_at_ns"]
    replay_file.write_text(json.dumps(record))
    replayed = ccsim.replay(replay_file)
    direct = ccsim.run(path, seed=9)
    assert replayed.raw == direct.raw and replayed.traces.equals(direct.traces)
    assert replayed.seed == 9 and replayed.events > 0


def test_ccsim_run_reports_a_panic_in_one_line_with_a_replay_file(write_toml, tmp_path: Path, failing, capsys) -> None:
    path = write_toml(SCENARIO)
    out = tmp_path / "out"
    code = main(["run", str(path), "--seed", "7", "--quiet", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == EXIT_ENGINE_FAILURE
    # One line for the failure, one for the replay: no Python traceback, no Rust backtrace.
    assert "Traceback" not in err and "panicked at" not in err and "backtrace" not in err
    lines = err.splitlines()
    assert len(lines) == 2 and all(line.startswith("ccsim: ") for line in lines), err
    assert str(path) in lines[0] and "seed 7" in lines[0] and "the engine failed" in lines[0]
    replay_file = out / "replay.json"
    assert f"wrote {replay_file}" in lines[1] and f"ccsim run {path} --seed 7" in lines[1]
    assert json.loads(replay_file.read_text())["config"]["seed"] == 7


def test_ccsim_run_without_out_writes_the_replay_file_to_the_temporary_directory(write_toml, failing, capsys) -> None:
    path = write_toml(SCENARIO)
    assert main(["run", str(path), "--quiet"]) == EXIT_ENGINE_FAILURE
    err = capsys.readouterr().err
    written = Path(err.split("wrote ")[1].split(";")[0])
    try:
        record = json.loads(written.read_text())
        assert record["seed"] == 3 and record["scenario"] == str(path)
    finally:
        written.unlink()


def test_a_healthy_run_is_unaffected_by_the_knobs_absence(write_toml) -> None:
    assert runner._TEST_PANIC_AT_NS is None
    result = ccsim.run(write_toml(SCENARIO))
    assert result.events > 0


def test_the_bindings_take_the_seed_from_the_engine_and_the_knob_only_at_the_top(write_toml) -> None:
    # The knob is looked for by a text search before any parse: a flow named after it must
    # not be taken for it, and the seed comes from the engine (its default 1 when missing).
    config = ccsim.compile(
        ccsim.load(write_toml(SCENARIO.replace('cc = "newreno"', 'cc = "newreno"\nname = "_panic_at_ns"')))
    )
    assert config["flows"][0]["name"] == "_panic_at_ns"
    sim = _core.Simulation(json.dumps(config))
    assert sim.seed == 3
    sim.run_until(sim.duration_ns)
    assert sim.finished
    del config["seed"]
    assert _core.Simulation(json.dumps(config)).seed == 1
    with pytest.raises(_core.SimulationError, match="seed 9"):
        run = _core.Simulation(json.dumps({**config, "seed": 9, "_panic_at_ns": 1000}))
        run.run_until(run.duration_ns)
