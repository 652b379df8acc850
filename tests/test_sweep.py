"""Sweeps: grid expansion and seeds, the results table against plain runs, failures recorded
without stopping the others, resuming after a kill, and a real Dask cluster giving the local
pool's bytes."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import ccsim
import pandas as pd
import pytest
from ccsim.errors import ScenarioError
from ccsim.experiments import sweep
from ccsim.experiments.sweep.rundir import _write_run
from ccsim.experiments.sweep.running import run_config
from conftest import ROOT, interrupt_cli, run_cli

# A two-host network through a router; h3 hangs off a second router with no link to the first,
# so a flow to it passes Python's checks and is rejected by the engine (no route).
BASE = """
[simulation]
duration = "2s"
warmup = "0.5s"

[topology]
kind = "explicit"
nodes = [ { name = "h1", kind = "host" }, { name = "r", kind = "router" }, { name = "h2", kind = "host" },
          { name = "r2", kind = "router" }, { name = "h3", kind = "host" } ]
links = [
  { a = "h1", b = "r", rate = "100Mbps", delay = "1ms" },
  { a = "r", b = "h2", rate = "10Mbps", delay = "5ms", queue = { kind = "droptail", limit = "30p" } },
  { a = "r2", b = "h3", rate = "10Mbps", delay = "5ms" },
]
bottleneck_queue = "r->h2"

[[flows]]
src = "h1"
dst = "h2"
cc = "newreno"
start = "0s..0.2s"
count = 2
"""

SWEEP = """
scenario = "base.toml"
seeds = 2

[set]
"simulation.duration" = "1.5s"

[grid]
"topology.links[1].queue.kind" = ["droptail", "codel"]
"flows.cc" = ["newreno", "cubic", "vegas"]
"""


@pytest.fixture
def sweep_dir(tmp_path: Path) -> Path:
    (tmp_path / "base.toml").write_text(BASE, encoding="utf-8")
    return tmp_path


def write_sweep(directory: Path, text: str, name: str = "sweep.toml") -> Path:
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


# --- expansion -------------------------------------------------------------------------------------


def test_a_grid_expands_to_its_cartesian_product_times_the_seeds(sweep_dir: Path) -> None:
    spec = sweep.load_sweep(write_sweep(sweep_dir, SWEEP))
    runs = sweep.expand(spec)
    assert len(runs) == 2 * 3 * 2
    cells = [(r.params["topology.links[1].queue.kind"], r.params["flows.cc"]) for r in runs if r.replicate == 0]
    assert cells == [(q, c) for q in ("droptail", "codel") for c in ("newreno", "cubic", "vegas")]
    assert [r.point for r in runs] == [p for p in range(6) for _ in range(2)]
    # Every run's configuration carries its point's values, the fixed [set] and its seed.
    for run in runs:
        config = run.config
        assert config is not None and config["seed"] == run.seed
        assert config["duration_ns"] == 1_500_000_000
        assert config["links"][1]["ab"]["queue"]["kind"] == run.params["topology.links[1].queue.kind"]
        assert {f["cc"]["kind"] for f in config["flows"]} == {run.params["flows.cc"]}
    assert len({r.seed for r in runs}) == len(runs)
    assert len({r.key for r in runs}) == len(runs)


def test_seeds_depend_on_the_sweep_file_only(sweep_dir: Path) -> None:
    runs = sweep.expand(sweep.load_sweep(write_sweep(sweep_dir, SWEEP)))
    again = sweep.expand(sweep.load_sweep(write_sweep(sweep_dir, SWEEP, "copy.toml")))
    assert [(r.seed, r.key) for r in runs] == [(r.seed, r.key) for r in again]
    # Independent seeds hash the point's values: adding a value keeps the existing runs.
    grown = sweep.expand(sweep.load_sweep(write_sweep(sweep_dir, SWEEP.replace('"vegas"]', '"vegas", "veno"]'))))
    assert {r.key for r in runs} <= {r.key for r in grown}
    assert len(grown) == 16
    # Common seeds: the same seeds at every point, one per replicate.
    common = sweep.expand(sweep.load_sweep(write_sweep(sweep_dir, 'seed_mode = "common"\n' + SWEEP)))
    by_replicate = {r.replicate: set() for r in common}
    for r in common:
        by_replicate[r.replicate].add(r.seed)
    assert all(len(seeds) == 1 for seeds in by_replicate.values()) and len(by_replicate) == 2
    assert sweep.derive_seed(0, "replicate", 1) in by_replicate[1]
    # A list of seeds is used as given.
    listed = sweep.expand(sweep.load_sweep(write_sweep(sweep_dir, SWEEP.replace("seeds = 2", "seeds = [7, 9, 11]"))))
    assert [r.seed for r in listed[:3]] == [7, 9, 11] and len(listed) == 18


def test_explicit_points_combine_with_the_grid(sweep_dir: Path) -> None:
    text = (
        SWEEP.replace('"flows.cc" = ["newreno", "cubic", "vegas"]\n', "")
        + """
[[points]]
"topology.links[1].rate" = "5Mbps"
[[points]]
"topology.links[1].rate" = "20Mbps"
"simulation.warmup" = "0s"
"""
    )
    spec = sweep.load_sweep(write_sweep(sweep_dir, text))
    assert spec.varied == ["topology.links[1].rate", "simulation.warmup", "topology.links[1].queue.kind"]
    runs = [r for r in sweep.expand(spec) if r.replicate == 0]
    assert [r.params for r in runs] == [
        {"topology.links[1].rate": "5Mbps", "topology.links[1].queue.kind": "droptail"},
        {"topology.links[1].rate": "5Mbps", "topology.links[1].queue.kind": "codel"},
        {"topology.links[1].rate": "20Mbps", "simulation.warmup": "0s", "topology.links[1].queue.kind": "droptail"},
        {"topology.links[1].rate": "20Mbps", "simulation.warmup": "0s", "topology.links[1].queue.kind": "codel"},
    ]
    assert runs[3].config["links"][1]["ab"]["rate_bps"] == 20_000_000 and runs[3].config["warmup_ns"] == 0


@pytest.mark.parametrize(
    ("text", "field", "needle"),
    [
        ("seeds = 2", "scenario", "required"),
        ('scenario = "base.toml"\nseed = 3', "seed", "unknown field"),
        ('scenario = "base.toml"\nseeds = 0', "seeds", "replicates"),
        ('scenario = "base.toml"\nseeds = [1, 1]', "seeds", "differ"),
        ('scenario = "base.toml"\nseed_mode = "paired"', "seed_mode", "independent, common"),
        ('scenario = "base.toml"\n[grid]\n"flows.cc" = "cubic"', "grid.flows.cc", "non-empty list"),
        (
            'scenario = "base.toml"\n[grid]\n"flows.cc" = ["cubic"]\n[[points]]\n"flows.cc" = "vegas"',
            "points[0].flows.cc",
            "vary a key in one place",
        ),
    ],
)
def test_bad_sweep_files_name_the_field(sweep_dir: Path, text: str, field: str, needle: str) -> None:
    with pytest.raises(ScenarioError) as info:
        sweep.load_sweep(write_sweep(sweep_dir, text))
    assert info.value.field == field and needle in info.value.message


# --- running ----------------------------------------------------------------------------------------


SMALL = """
scenario = "base.toml"
seeds = 2

[grid]
"flows.cc" = ["newreno", "cubic"]
"""


def test_the_table_has_a_row_per_run_equal_to_plain_runs(sweep_dir: Path) -> None:
    spec = sweep.load_sweep(write_sweep(sweep_dir, SMALL))
    out = sweep_dir / "out"
    result = sweep.run_sweep(spec, out, jobs=2)
    assert (result.total, result.ran, result.skipped, result.failed) == (4, 4, 0, 0)
    table = pd.read_parquet(out / "results.parquet")
    assert list(table[["point", "replicate"]].itertuples(index=False, name=None)) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert (table["status"] == "ok").all()
    for _, row in table.iterrows():
        # The oracle: the same scenario run directly with the same key and seed.
        plain = ccsim.run(sweep_dir / "base.toml", seed=int(row["seed"]), overrides=[f"flows.cc={row['flows.cc']}"])
        metrics = sweep.summary_metrics(plain.raw)
        for name, value in metrics.items():
            assert row[name] == value or (value is None and pd.isna(row[name])), name
        assert row["goodput_bps_total"] == pytest.approx(plain.flows["goodput_bps"].sum())
        assert row["bottleneck.drop_ratio"] == plain.queues.set_index("name").loc["r->h2", "drop_ratio"]
        run_dir = out / row["run_dir"]
        assert json.loads((run_dir / "summary.json").read_text()) == json.loads(json.dumps(plain.summary))
        assert pd.read_parquet(run_dir / "flows.parquet").equals(plain.flows)
    flows = sweep.flows_table(out)
    assert len(flows) == 4 * 2 and list(flows.columns[:4]) == ["point", "replicate", "seed", "flows.cc"]


FAILING = """
scenario = "base.toml"
seeds = 1

[grid]
"flows[0].dst" = ["h2", "h3"]
"simulation.warmup" = ["0s", "5s"]
"""


def test_failing_runs_are_recorded_and_the_others_finish(sweep_dir: Path) -> None:
    spec = sweep.load_sweep(write_sweep(sweep_dir, FAILING))
    out = sweep_dir / "out"
    result = sweep.run_sweep(spec, out, jobs=2)
    table = result.table.set_index(["flows[0].dst", "simulation.warmup"])
    assert result.failed == 3 and result.ran == 4
    assert table.loc[("h2", "0s"), "status"] == "ok" and table.loc[("h2", "0s"), "goodput_bps_total"] > 0
    # The engine's checks refuse the unroutable flow and the warm-up before anything runs.
    assert table.loc[("h3", "0s"), "status"] == "failed"
    error = table.loc[("h3", "0s"), "error"]
    assert "flows[0]: no route" in error and "sweep point" in error
    for dst in ("h2", "h3"):
        assert "simulation.warmup" in table.loc[(dst, "5s"), "error"]
        assert "sweep point" in table.loc[(dst, "5s"), "error"]
    # Failed runs count as done; --retry-failed runs them again (and they fail again).
    assert sweep.run_sweep(spec, out, jobs=1).ran == 0
    assert sweep.run_sweep(spec, out, jobs=1, retry_failed=True).ran == 3
    proc = run_cli("sweep", str(sweep_dir / "sweep.toml"), "--out", str(out), "--quiet")
    assert proc.returncode == 1 and "3 runs failed" in proc.stderr and "Traceback" not in proc.stderr


def test_resume_after_a_kill_runs_the_rest_once(sweep_dir: Path) -> None:
    spec = sweep.load_sweep(write_sweep(sweep_dir, SWEEP))
    out = sweep_dir / "out"
    finished: list[str] = []

    def kill_after_five(run, record) -> None:
        finished.append(run.key)
        if len(finished) == 5:
            raise KeyboardInterrupt  # as Ctrl-C would, between two completions

    with pytest.raises(sweep.SweepInterrupted) as info:
        sweep.run_sweep(spec, out, jobs=2, on_run=kill_after_five)
    assert info.value.result.ran == 5
    kept = {key: (out / "runs" / key / "run.json").stat().st_mtime_ns for key in finished}
    assert len(pd.read_parquet(out / "results.parquet")) == 5
    second: list[str] = []
    result = sweep.run_sweep(spec, out, jobs=2, on_run=lambda run, record: second.append(run.key))
    assert (result.skipped, result.ran) == (5, 7)
    assert set(second).isdisjoint(finished) and len(set(second)) == 7
    assert {key: (out / "runs" / key / "run.json").stat().st_mtime_ns for key in finished} == kept
    assert len(result.table) == 12 and (result.table["status"] == "ok").all()
    # Nothing is left to do, and an uninterrupted sweep gives the same table.
    assert sweep.run_sweep(spec, out, jobs=1).ran == 0
    fresh = sweep.run_sweep(spec, sweep_dir / "fresh", jobs=2).table
    assert_same_results(result.table, fresh)


def test_sigterm_keeps_every_finished_run(sweep_dir: Path) -> None:
    # Slower runs (1 000 s of two flows, ~0.2 s each) on one process, stopped after 3 of 12: at
    # 20 s a run took ~10 ms and a loaded machine's poll could miss the rest of the sweep.
    text = SWEEP.replace('"1.5s"', '"1000s"')
    path = write_sweep(sweep_dir, text)
    out = sweep_dir / "out"
    runs = out / "runs"
    code, stderr = interrupt_cli(
        "sweep", str(path), "--out", str(out), "--jobs", "1", "--quiet", runs=runs, after=3, sig=signal.SIGTERM
    )
    done = [p for p in runs.iterdir() if not p.name.startswith(".")]
    if code == 0:
        pytest.skip("the sweep finished before the signal")  # a very fast machine
    assert code == 130, stderr
    assert "rerun the same command to resume" in stderr
    assert len(stderr.strip().splitlines()) == 1, stderr  # nothing after it (a pool thread's traceback)
    # Every directory that exists is whole: its record and tables read back.
    for run_dir in done:
        assert json.loads((run_dir / "run.json").read_text())["status"] == "ok"
        assert len(pd.read_parquet(run_dir / "flows.parquet")) == 2
    assert len(pd.read_parquet(out / "results.parquet")) == len(done)
    proc = run_cli("sweep", str(path), "--out", str(out), "--jobs", "2", "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert len(pd.read_parquet(out / "results.parquet")) == 12


def test_plan_counts_runs_and_estimates_cost_without_running(sweep_dir: Path) -> None:
    path = write_sweep(sweep_dir, SWEEP)
    out = sweep_dir / "out"
    proc = run_cli("sweep", str(path), "--plan", "--out", str(out), "--jobs", "2")
    assert proc.returncode == 0, proc.stderr
    assert "6 points x 2 seeds (independent) = 12 runs (0 finished, 12 to run)" in proc.stdout
    assert "cost: about" in proc.stdout and "M events/s" in proc.stdout
    assert not out.exists()
    spec = sweep.load_sweep(path)
    cost = sweep.estimate_cost(sweep.expand(spec), budget_s=1.0, per_point_s=0.25)
    assert cost["timed_points"] == 4 and len(cost["per_run_s"]) == 12 and cost["cpu_s"] > 0


# --- Dask ---------------------------------------------------------------------------------------


def assert_same_results(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True), check_exact=True)


def test_a_dask_cluster_gives_the_local_results_bit_for_bit(sweep_dir: Path) -> None:
    distributed = pytest.importorskip("dask.distributed")
    from ccsim.experiments import smc

    spec = sweep.load_sweep(write_sweep(sweep_dir, SMALL))
    local = sweep.run_sweep(spec, sweep_dir / "local", jobs=2)
    started = time.monotonic()
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=":0"
    ) as cluster:  # any free port: 8787 may be taken
        remote = sweep.run_sweep(spec, sweep_dir / "dask", scheduler=cluster.scheduler_address)
        proc = run_cli(
            "smc",
            str(sweep_dir / "base.toml"),
            "-q",
            "Pr[<=1](<> queue.r->h2.length > 20)",
            "--runs",
            "24",
            "--scheduler",
            cluster.scheduler_address,
            "--out",
            str(sweep_dir / "smc-dask"),
            "--quiet",
        )
        assert proc.returncode == 0, proc.stderr
        hosts = {
            json.loads((sweep_dir / "dask" / d / "timing.json").read_text())["host"] for d in remote.table["run_dir"]
        }
    assert time.monotonic() - started < 120
    assert remote.ran == 4 and remote.failed == 0 and hosts
    assert_same_results(local.table, remote.table)
    for run_dir in local.table["run_dir"]:
        for name in ("summary.json", "flows.parquet", "queues.parquet", "traces.parquet"):
            if (sweep_dir / "local" / run_dir / name).exists():
                assert (sweep_dir / "local" / run_dir / name).read_bytes() == (
                    sweep_dir / "dask" / run_dir / name
                ).read_bytes(), name
    here = smc.check(sweep_dir / "base.toml", "Pr[<=1](<> queue.r->h2.length > 20)", runs=24, jobs=2)
    there = pd.read_parquet(sweep_dir / "smc-dask" / "outcomes.parquet")
    pd.testing.assert_frame_equal(here.outcomes, there, check_exact=True)


def test_the_example_sweep_expands_and_its_points_validate() -> None:
    spec = sweep.load_sweep(ROOT / "scenarios" / "sweeps" / "flagship_aqm_cc.toml")
    runs = sweep.expand(spec)
    assert len(runs) == 27 and all(r.config is not None for r in runs)
    assert len({r.seed for r in runs}) == 3  # common seeds


def _square_or_die(x: int) -> int:
    if x == 3:
        os._exit(17)  # a worker killed mid-run
    return x * x


def test_a_dying_worker_is_reported_and_does_not_raise() -> None:
    from concurrent.futures import BrokenExecutor

    from ccsim.engine.executor import Executor

    with Executor(jobs=2) as ex:
        outcomes = list(ex.imap_unordered(_square_or_die, range(8), in_flight=2))
    values = {i: v for i, v, e in outcomes if e is None}
    broken = [i for i, _, e in outcomes if isinstance(e, BrokenExecutor)]
    assert 3 in broken and all(values[i] == i * i for i in values)
    # Every call is accounted for at most once; the ones never submitted are simply absent.
    indices = [i for i, _, _ in outcomes]
    assert len(indices) == len(set(indices)) and set(indices) <= set(range(8))


# --- damaged runs, interrupted and killed sweeps ----------------------------------------------------


def _damage(run_dir: Path, how: str) -> None:
    if how == "truncated table":
        path = run_dir / "flows.parquet"
        path.write_bytes(path.read_bytes()[:100])
    elif how == "broken summary":
        (run_dir / "summary.json").write_text("{", encoding="utf-8")
    elif how == "deleted table":
        (run_dir / "queues.parquet").unlink()
    elif how == "garbage record":
        (run_dir / "run.json").write_text("garbage", encoding="utf-8")
    elif how == "changed config":
        path = run_dir / "config.json"
        path.write_text(path.read_text(encoding="utf-8").replace("1", "2", 1), encoding="utf-8")


DAMAGES = ["truncated table", "broken summary", "deleted table", "garbage record"]


def test_damaged_runs_are_found_run_again_and_reported(sweep_dir: Path) -> None:
    path = write_sweep(sweep_dir, SMALL)
    out = sweep_dir / "out"
    first = sweep.run_sweep(sweep.load_sweep(path), out, jobs=2)
    original = {
        d: {p.name: p.read_bytes() for p in (out / d).iterdir() if p.name != "timing.json"}
        for d in first.table["run_dir"]
    }
    for run_dir, how in zip(first.table["run_dir"], DAMAGES):
        _damage(out / run_dir, how)
    proc = run_cli("sweep", str(path), "--out", str(out), "--jobs", "2")
    assert proc.returncode == 0, proc.stderr
    assert "4 runs: 4 run now, 0 done before" in proc.stdout
    assert "warning: 4 runs kept in" in proc.stderr and "damaged" in proc.stderr and "Traceback" not in proc.stderr
    # Run again, they are the same bytes as before the damage; the table has every run.
    assert {
        d: {p.name: p.read_bytes() for p in (out / d).iterdir() if p.name != "timing.json"}
        for d in first.table["run_dir"]
    } == original
    assert_same_results(pd.read_parquet(out / "results.parquet"), first.table)
    assert len(sweep.flows_table(out)) == 8
    # Nothing is left to do, and nothing is reported.
    again = run_cli("sweep", str(path), "--out", str(out), "--jobs", "2", "--quiet")
    assert (again.returncode, again.stderr) == (0, "")
    assert sweep.run_sweep(sweep.load_sweep(path), out, jobs=1).ran == 0


def test_a_changed_file_and_a_damaged_copy_of_a_finished_run_are_replaced(sweep_dir: Path) -> None:
    spec = sweep.load_sweep(write_sweep(sweep_dir, SMALL))
    out = sweep_dir / "out"
    first = sweep.run_sweep(spec, out, jobs=1)
    run_dir = out / first.table["run_dir"][0]
    _damage(run_dir, "changed config")
    the_plan = sweep.plan(spec, out)
    assert list(the_plan.damaged.values()) == ["config.json does not match its checksum"]
    result = sweep.run_sweep(spec, out, jobs=1)
    assert (result.ran, result.skipped, result.damaged) == (1, 3, 1)
    # A run written while a damaged copy sits at its name (another session's) replaces it.
    _damage(run_dir, "garbage record")
    run = next(r for r in sweep.expand(spec) if r.key == run_dir.name)
    outcome = run_config(json.dumps(run.config))
    _write_run(out / "runs", run, outcome, None)
    assert sweep.plan(spec, out).damaged == {}


def test_runs_written_before_manifests_are_kept_when_they_read_back(sweep_dir: Path) -> None:
    spec = sweep.load_sweep(write_sweep(sweep_dir, SMALL))
    out = sweep_dir / "out"
    first = sweep.run_sweep(spec, out, jobs=1)
    for run_dir in first.table["run_dir"]:
        record = json.loads((out / run_dir / "run.json").read_text())
        del record["files"]
        (out / run_dir / "run.json").write_text(json.dumps(record), encoding="utf-8")
    _damage(out / first.table["run_dir"][1], "truncated table")
    result = sweep.run_sweep(spec, out, jobs=1)
    assert (result.ran, result.skipped, result.damaged) == (1, 3, 1)


def test_flows_table_names_a_run_damaged_after_the_sweep(sweep_dir: Path) -> None:
    spec = sweep.load_sweep(write_sweep(sweep_dir, SMALL))
    out = sweep_dir / "out"
    first = sweep.run_sweep(spec, out, jobs=1)
    _damage(out / first.table["run_dir"][2], "truncated table")
    with pytest.raises(ScenarioError, match="damaged or unreadable.*rerun the sweep"):
        sweep.flows_table(out)


def test_closing_an_iterator_then_killing_the_pool_prints_nothing() -> None:
    # The pool's manager thread fails the calls it still holds when its workers are killed; a
    # call cancelled from outside made it die with InvalidStateError, printed as a traceback
    # after the sweep's "interrupted" line. A subprocess, to see what reaches stderr.
    import subprocess
    import sys

    from conftest import _cli_env

    code = """
import time
from ccsim.engine.executor import Executor
ex = Executor(jobs=2)
for reuse in (True, False):  # reused after an early close, the pool returns only the new calls
    calls = ex.imap_unordered(time.sleep, [0.2] * 40)
    for _ in range(3):
        next(calls)
    calls.close()
    if reuse:
        print(sorted(v for _, v, e in ex.imap_unordered(abs, [-1, -2, -3])))
ex.close(kill=True)
print("closed")
"""
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_cli_env(), timeout=60)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "[1, 2, 3]\nclosed\n", "")


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _running(pid: int) -> bool:
    try:
        return (Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]) != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process table from /proc")
def test_workers_exit_when_the_sweep_is_killed(sweep_dir: Path) -> None:
    import subprocess
    import sys

    from conftest import _cli_env

    path = write_sweep(sweep_dir, SWEEP.replace('"1.5s"', '"1000s"'))
    out = sweep_dir / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "ccsim", "sweep", str(path), "--out", str(out), "--jobs", "2", "--quiet"],
        env=_cli_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not [p for p in (out / "runs").glob("*") if not p.name.startswith(".")]:
        time.sleep(0.02)
    helpers = _children(proc.pid)  # the pool's workers and multiprocessing's resource tracker
    proc.kill()
    proc.wait()
    try:
        assert len(helpers) >= 2
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(_running(p) for p in helpers):
            time.sleep(0.05)
        assert not [p for p in helpers if _running(p)]
    finally:
        for pid in helpers:
            if _running(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_sweep_records_how_it_was_made(sweep_dir: Path) -> None:
    """provenance.json beside the runs: ccsim's version, the engine's fingerprint, the command
    line and the files the sweep was made from, each by its SHA-256."""
    import hashlib

    from ccsim.engine.provenance import engine_fingerprint

    file = write_sweep(sweep_dir, SMALL)
    sweep.run_sweep(sweep.load_sweep(file), sweep_dir / "out", jobs=1)
    record = json.loads((sweep_dir / "out" / "provenance.json").read_text())
    assert record["ccsim_version"] == ccsim.__version__
    assert record["engine_sha256"] == engine_fingerprint()
    assert record["files"] == {
        str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in (sweep_dir / "base.toml", file)
    }
