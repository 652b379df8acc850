"""The memory estimator (ccsim.scenario.limits): row counts against hand computation and against what a
real run records, refusal of absurd trace volumes with a message saying why and how to shrink,
--max-memory, and the budget read from /proc/meminfo."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import ccsim
import pytest
from ccsim.errors import ScenarioError
from ccsim.scenario import limits
from conftest import PEAK_RSS_MIB, ROOT, SCENARIOS, run_cli

FLAGSHIP = SCENARIOS / "flagship.toml"


def items(est: limits.MemoryEstimate) -> dict[str, limits.MemoryItem]:
    return {item.field: item for item in est.items}


def test_sampled_series_rows_are_series_times_samples() -> None:
    # Hand count: 10 s every 10 ms is 1001 samples (t = 0 included); time + 3 columns for the
    # traced queue A->B + one cwnd column for each of the 4 TCP flows = 8 series.
    config = ccsim.load(FLAGSHIP, ["simulation.duration=10s", "simulation.warmup=1s"]).to_config()
    est = limits.estimate(config)
    assert items(est)["trace.interval"].rows == 8 * 1001
    assert items(est)["trace.interval"].bytes == 8 * 1001 * limits.BYTES_PER_SAMPLE


def test_estimated_rows_match_or_bound_what_a_run_records() -> None:
    overrides = [
        "simulation.duration=4s",
        "simulation.warmup=1s",
        "trace.events=true",
        "trace.messages=true",
        "trace.rtt=true",
        "trace.queues=[]",
        "topology.bottleneck.queue.limit=20p",
    ]
    config = ccsim.load(FLAGSHIP, overrides).to_config()
    est = items(limits.estimate(config))
    result = ccsim.run(FLAGSHIP, overrides=overrides)
    # Series: exactly what the engine samples (every router queue when trace.queues is empty).
    assert est["trace.interval"].rows == result.traces.shape[0] * result.traces.shape[1]
    # Logs: upper bounds that are not absurdly loose for a congested run.
    drops = len(result.queue_events)
    rtts = len(result.rtt_samples)
    assert 0 < drops <= est["trace.events"].rows
    assert 0 < rtts <= est["trace.rtt"].rows <= 10 * rtts
    # The bottleneck (10 Mbit/s, 1500 B packets, 4 s) bounds the RTT samples: 3333 packets.
    assert est["trace.rtt"].rows == int(10e6 * 4 / (8 * 1500))
    # Bulk flows write one unbounded message each.
    assert est["trace.messages"].rows == 4


def test_an_absurd_trace_volume_is_refused_with_why_and_how_to_shrink() -> None:
    proc = run_cli("run", str(FLAGSHIP), "--set", "trace.interval=1us", "--set", "simulation.duration=1000s")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    line = proc.stderr.strip()
    assert len(line.splitlines()) == 1
    assert f"{FLAGSHIP}: trace.interval: this run could need up to about " in line
    assert "sampled series (8 series x 1,000,000,001 samples)" in line
    assert "longer trace.interval" in line and "shorter simulation.duration" in line and "--max-memory" in line


def test_event_logs_name_their_own_switch() -> None:
    config = ccsim.load(FLAGSHIP, ["simulation.duration=100000s", "trace.events=true"]).to_config()
    with pytest.raises(ScenarioError) as info:
        limits.check(config, "f.toml", max_memory=4 * 2**30)
    assert info.value.field == "trace.events" and "trace.events = false" in info.value.message


def test_a_modest_scenario_passes_and_max_memory_decides() -> None:
    proc = run_cli("validate", str(FLAGSHIP))
    assert proc.returncode == 0 and "memory up to about" in proc.stdout, proc.stderr
    proc = run_cli("validate", str(FLAGSHIP), "--max-memory", "1MiB")
    assert proc.returncode == 2 and "more than the budget of 1 MiB (--max-memory)" in proc.stderr
    proc = run_cli(
        "run",
        str(FLAGSHIP),
        "--quiet",
        "--set",
        "simulation.duration=2s",
        "--set",
        "simulation.warmup=1s",
        "--max-memory",
        "4GiB",
    )
    assert proc.returncode == 0, proc.stderr
    proc = run_cli("smc", str(FLAGSHIP), "--query", "Pr[<=1](<> ncs.itae > 1)", "--runs", "2", "--max-memory", "1MiB")
    assert proc.returncode == 2 and "more than the budget of 1 MiB (--max-memory)" in proc.stderr, proc.stderr
    proc = run_cli("run", str(FLAGSHIP), "--max-memory", "lots")
    assert proc.returncode == 2 and "--max-memory" in proc.stderr and "Traceback" not in proc.stderr


def test_memory_without_logs_does_not_grow_with_simulated_time() -> None:
    short = ccsim.load(FLAGSHIP, ["simulation.duration=20s"]).to_config()
    long = ccsim.load(FLAGSHIP, ["simulation.duration=100000s"]).to_config()
    for config in (short, long):
        config["trace"]["interval_ns"] = None
    assert limits.estimate(short).total == limits.estimate(long).total


def test_the_budget_is_a_share_of_available_memory(tmp_path: Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       16000000 kB\nMemFree:  100 kB\nMemAvailable:    8000000 kB\n")
    assert limits.machine_budget(str(meminfo)) == int(8_000_000 * 1024 * limits.BUDGET_SHARE)
    meminfo.write_text("MemTotal:       16000000 kB\n")  # old kernels: no MemAvailable
    assert limits.machine_budget(str(meminfo)) == int(16_000_000 * 1024 * limits.BUDGET_SHARE)
    meminfo.write_text("garbage")
    assert limits.machine_budget(str(meminfo)) is None
    assert limits.machine_budget(str(tmp_path / "missing")) is None


def test_a_sweep_records_a_run_over_the_budget_as_failed(tmp_path: Path) -> None:
    from ccsim.experiments import sweep

    (tmp_path / "sweep.toml").write_text(
        f'scenario = "{FLAGSHIP}"\nseeds = 1\n[set]\n"simulation.duration" = "2s"\n"simulation.warmup" = "1s"\n'
        '[grid]\n"trace.interval" = ["10ms", "1ns"]\n',
        encoding="utf-8",
    )
    result = sweep.run_sweep(sweep.load_sweep(tmp_path / "sweep.toml"), tmp_path / "out", jobs=1)
    table = result.table.set_index("trace.interval")
    assert table.loc["10ms", "status"] == "ok"
    assert table.loc["1ns", "status"] == "failed"
    assert "trace.interval: this run could need up to about" in table.loc["1ns", "error"]


def _shortest_by_definition(config: dict) -> list:
    """Per flow: the hop count of a shortest path from its source through routers only (a
    breadth-first search from the source), or None when there is none."""
    from collections import deque

    routers = {i for i, node in enumerate(config["nodes"]) if node["kind"] == "router"}
    adjacent: dict = {}
    for link in config["links"]:
        adjacent.setdefault(link["a"], []).append(link["b"])
        adjacent.setdefault(link["b"], []).append(link["a"])
    out = []
    for flow in config["flows"]:
        src, dst = flow["src"], flow["dst"]
        hops, queue = {src: 0}, deque([src])
        while queue:
            node = queue.popleft()
            if node != src and node not in routers:
                continue  # hosts do not forward
            for nxt in adjacent.get(node, []):
                if nxt not in hops:
                    hops[nxt] = hops[node] + 1
                    queue.append(nxt)
        out.append(hops.get(dst))
    return out


def test_paths_are_the_engines_shortest_walks_on_random_networks() -> None:
    """`limits._paths` asks the engine (`_core.flow_paths`): each path must be a joined-up walk
    from source to destination through routers, of the least hop count, and empty exactly
    when there is none (and for a flow from a host to itself)."""
    import random

    from ccsim.scenario.limits import _paths

    rng = random.Random(5)
    dir_spec = {"rate_bps": 10**6, "delay_ns": 1, "queue": {"kind": "droptail"}}
    checked = 0
    for _ in range(300):
        n = rng.randint(2, 12)
        nodes = [{"name": f"n{i}", "kind": rng.choice(["host", "router"])} for i in range(n)]
        links = []
        for _ in range(rng.randint(1, 3 * n)):
            a, b = rng.randrange(n), rng.randrange(n)
            if a != b:
                links.append({"a": a, "b": b, "ab": dir_spec, "ba": dir_spec})
        flows = [
            {"src": rng.randrange(n), "dst": rng.randrange(n), "transport": {"kind": "udp"}, "app": {"kind": "cbr"}}
            for _ in range(rng.randint(1, 2 * n))
        ]
        config = {"duration_ns": 10**9, "nodes": nodes, "links": links, "flows": flows}
        for flow, path, shortest in zip(flows, _paths(config), _shortest_by_definition(config)):
            if shortest is None or shortest == 0:
                assert path == [], (flow, config)
                continue
            checked += 1
            assert len(path) == shortest, (flow, path, config)
            node = flow["src"]
            for k, way in path:
                near, far = (links[k]["a"], links[k]["b"]) if way == "ab" else (links[k]["b"], links[k]["a"])
                assert near == node, (flow, path, config)
                node = far
            assert node == flow["dst"]
    assert checked > 300


def test_paths_of_a_configuration_the_engine_refuses_are_empty() -> None:
    """A node index that does not exist: the estimate goes on without paths, and the engine
    names the field when it builds the run."""
    from ccsim import _core
    from ccsim.scenario.limits import _paths

    dir_spec = {"rate_bps": 10**6, "delay_ns": 1, "queue": {"kind": "droptail"}}
    config = {
        "duration_ns": 10**9,
        "nodes": [{"name": "a", "kind": "host"}, {"name": "b", "kind": "host"}],
        "links": [{"a": 0, "b": 1, "ab": dir_spec, "ba": dir_spec}],
        "flows": [
            {"src": 0, "dst": 1, "transport": {"kind": "udp"}, "app": {"kind": "cbr"}},
            {"src": 0, "dst": 7, "transport": {"kind": "udp"}, "app": {"kind": "cbr"}},
        ],
    }
    assert _paths(config) == [[], []]
    with pytest.raises(_core.ConfigError) as err:
        _core.flow_paths(json.dumps(config))
    assert err.value.field == "flows[1].dst"
    config["flows"].pop()
    assert _paths(config) == [[(0, "ab")]]


@pytest.mark.parametrize("flows", [9, 900, 9000])
def test_the_estimate_is_within_twice_the_peak_of_the_scaling_dumbbells(flows: int) -> None:
    # bench/scaling.py's dumbbell at 100 Mbit/s for 10 s: packets wait where paths narrow, so
    # the estimate follows the bottleneck, not every queue's limit (which put 9 000 flows at
    # 4.3 GiB against a 430 MiB peak).
    code = f"""
import sys
sys.path.insert(0, {str(ROOT / "bench")!r})
import scaling, ccsim
from ccsim.scenario import limits
s = scaling.scenario({flows}, "100Mbps", 10.0)
estimate = limits.estimate(s.to_config()).total
ccsim.run(s)
print(estimate / 2**20, {PEAK_RSS_MIB})
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    estimate, peak = map(float, proc.stdout.split())
    assert peak / 2 < estimate < 2 * peak, (estimate, peak)
