"""The same scenario and seed give byte-identical result files: twice in one process,
in two ``ccsim run`` processes, through the sweep's local process pool and through a Dask
cluster of two worker processes. The scenario has random elements (start windows, random
loss, RED's random drops), every kind of log, and a control loop, so that every result file
kind is compared. Wall time and host are the only things that differ, and they are kept in
``timing.json`` of a sweep run (excluded here; docs/robustness.md)."""

from __future__ import annotations

import time
from pathlib import Path

import ccsim
import pytest
from ccsim.experiments import sweep
from conftest import run_cli

SEED = 7
SCENARIO = """
[simulation]
duration = "1.5s"
warmup = "0.3s"

[topology]
kind = "dumbbell"
bottleneck = { rate = "8Mbps", delay = "4ms", loss = 0.002, queue = { kind = "red", limit = "40p", min_th = "5p", max_th = "20p" } }
access = { rate = "100Mbps" }
pairs = [ { delay = "1ms" }, { delay = "9ms" }, { delay = "20ms" } ]

[[flows]]
pair = 0
cc = "cubic"
start = "0s..0.2s"

[[flows]]
pair = 1
cc = "newreno"
start = "0s..0.2s"
count = 2

[[flows]]
pair = 2
transport = "udp"
app = { kind = "poisson", rate = "1Mbps", packet_size = "500B" }

[[control]]
name = "loop"
plant_host = "s0"
controller_host = "r0"

[trace]
interval = "5ms"
flow_counters = true
events = true
messages = true
rtt = true
"""
# Files that differ by design between executors: where and how long it ran, and how (the
# command line, in provenance.json).
TIMING = {"timing.json", "provenance.json"}


def files(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def assert_same_files(a: dict[str, bytes], b: dict[str, bytes], skip: set[str] = frozenset()) -> None:
    keys_a = {k for k in a if Path(k).name not in skip}
    keys_b = {k for k in b if Path(k).name not in skip}
    assert keys_a == keys_b
    different = [k for k in sorted(keys_a) if a[k] != b[k]]
    assert not different, different


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    path = tmp_path / "scenario.toml"
    path.write_text(SCENARIO, encoding="utf-8")
    return path


def test_one_process_twice_two_processes_and_the_sweep_give_the_same_bytes(scenario: Path, tmp_path: Path) -> None:
    # (a) twice in this process.
    for name in ("a1", "a2"):
        ccsim.run(scenario, seed=SEED).write(tmp_path / name, plots=False)
    a1, a2 = files(tmp_path / "a1"), files(tmp_path / "a2")
    assert {
        "flows.parquet",
        "queues.parquet",
        "traces.parquet",
        "queue_events.parquet",
        "messages.parquet",
        "rtt_samples.parquet",
        "control.parquet",
        "control_traces.parquet",
        "summary.json",
    } <= set(a1)
    assert_same_files(a1, a2)
    # (b) two `ccsim run` processes, plots included.
    for name in ("b1", "b2"):
        proc = run_cli("run", str(scenario), "--seed", str(SEED), "--out", str(tmp_path / name), "--quiet")
        assert proc.returncode == 0, proc.stderr
    b1, b2 = files(tmp_path / "b1"), files(tmp_path / "b2")
    assert {"queue_length.png", "cwnd.png", "goodput.png", "control.png"} <= set(b1)
    # provenance.json holds the command line (here two --out paths): the one file left out.
    assert_same_files(b1, b2, skip={"provenance.json"})
    # ... and the same tables as in-process.
    provenance = ("provenance.json", "scenario.toml")
    assert_same_files(a1, {k: v for k, v in b1.items() if not k.endswith(".png") and k not in provenance})
    # (c) the sweep's local pool writes the same tables into its run directory.
    sweep_file = tmp_path / "sweep.toml"
    sweep_file.write_text(f'scenario = "{scenario.name}"\nseeds = [{SEED}]\n', encoding="utf-8")
    result = sweep.run_sweep(sweep.load_sweep(sweep_file), tmp_path / "c", jobs=2)
    assert result.ran == 1 and result.failed == 0
    run_dir = tmp_path / "c" / result.table["run_dir"][0]
    c = files(run_dir)
    assert_same_files(a1, {k: v for k, v in c.items() if k not in ("run.json", "config.json", "timing.json")})


def test_local_pool_and_dask_cluster_write_the_same_bytes(scenario: Path, tmp_path: Path) -> None:
    distributed = pytest.importorskip("dask.distributed")
    sweep_file = tmp_path / "sweep.toml"
    sweep_file.write_text(
        f'scenario = "{scenario.name}"\nseeds = [{SEED}, {SEED + 1}]\n[grid]\n"flows[0].cc" = ["cubic", "vegas"]\n',
        encoding="utf-8",
    )
    spec = sweep.load_sweep(sweep_file)
    local = sweep.run_sweep(spec, tmp_path / "local", jobs=2)
    started = time.monotonic()
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=":0"
    ) as cluster:  # any free port: 8787 may be taken
        remote = sweep.run_sweep(spec, tmp_path / "dask", scheduler=cluster.scheduler_address)
    assert time.monotonic() - started < 120
    assert local.ran == remote.ran == 4 and local.failed == remote.failed == 0
    # Every file, the results table and each run's record included; only timing.json differs.
    assert_same_files(files(tmp_path / "local"), files(tmp_path / "dask"), skip=TIMING)
    timings = sorted((tmp_path / "dask" / "runs").glob("*/timing.json"))
    assert len(timings) == 4
