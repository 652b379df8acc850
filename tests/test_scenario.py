"""Scenario files: validation with named fields, compilation to the core configuration,
command-line overrides and the Python builders."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import ccsim
import pytest
from ccsim.scenario.registry import ModelInfo, ParamError, ParamInfo, Registry
from ccsim.scenario.schema import load
from conftest import SCENARIOS

FLAGSHIP = SCENARIOS / "flagship.toml"

DUMBBELL = """
[simulation]
duration = "20s"
warmup = "5s"
seed = 7

[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "5ms", queue = { kind = "droptail", limit = "100p" } }
access = { rate = "100Mbps" }
pairs = [
  { delay = "2ms" },
  { delay = "10ms", src_delay = "1ms", dst_delay = "3ms" },
  { delay = "25ms", rate = "50Mbps", reverse = { rate = "1Mbps" } },
]

[[flows]]
pair = 0
transport = { kind = "tcp", mss = "1460B", sack = true }
cc = "newreno"
app = { kind = "bulk" }
start = "0s..1s"
stop = "15s"

[[flows]]
pair = 2
count = 2
transport = "tcp"
name = "bg"
group = "long"

[trace]
interval = "10ms"
queues = ["A->B"]
"""


def compiled(text: str, write_toml, overrides: list[str] | None = None) -> dict:
    return load(write_toml(text), overrides).to_config()


def link_between(config: dict, a: str, b: str) -> dict:
    names = [node["name"] for node in config["nodes"]]
    for link in config["links"]:
        if (names[link["a"]], names[link["b"]]) == (a, b):
            return link
    raise AssertionError(f"no link {a}--{b}")


def error_of(write_toml, text: str, overrides: list[str] | None = None) -> ccsim.ScenarioError:
    with pytest.raises(ccsim.ScenarioError) as info:
        load(write_toml(text), overrides)
    return info.value


# --- compilation ------------------------------------------------------------------------------


def test_dumbbell_compiles_to_named_nodes_and_links(write_toml) -> None:
    config = compiled(DUMBBELL, write_toml)
    assert [(n["name"], n["kind"]) for n in config["nodes"]] == [
        ("s0", "host"),
        ("s1", "host"),
        ("s2", "host"),
        ("A", "router"),
        ("B", "router"),
        ("r0", "host"),
        ("r1", "host"),
        ("r2", "host"),
    ]
    assert (config["duration_ns"], config["warmup_ns"], config["seed"]) == (20 * 10**9, 5 * 10**9, 7)
    # The bottleneck comes first, both directions as written.
    bottleneck = config["links"][0]
    assert config["nodes"][bottleneck["a"]]["name"] == "A" and config["nodes"][bottleneck["b"]]["name"] == "B"
    for direction in ("ab", "ba"):
        assert bottleneck[direction] == {
            "rate_bps": 10_000_000,
            "delay_ns": 5_000_000,
            "loss": 0.0,
            "queue": {"kind": "droptail", "params": {"limit": {"packets": 100}}},
        }
    assert config["bottleneck"] == "A->B"
    assert len(config["links"]) == 1 + 3 + 3


def test_access_links_layer_defaults_pair_values_and_side_delays(write_toml) -> None:
    config = compiled(DUMBBELL, write_toml)
    # Pair 0: access rate, its own delay, the default queue (engine's DropTail defaults).
    s0 = link_between(config, "s0", "A")
    assert s0["ab"] == {
        "rate_bps": 100_000_000,
        "delay_ns": 2_000_000,
        "loss": 0.0,
        "queue": {"kind": "droptail", "params": {}},
    }
    assert s0["ba"] == s0["ab"]
    # Pair 1: src_delay / dst_delay override the pair's delay on each side.
    assert link_between(config, "s1", "A")["ab"]["delay_ns"] == 1_000_000
    assert link_between(config, "B", "r1")["ba"]["delay_ns"] == 3_000_000
    # Pair 2: its own rate; `reverse` changes only the b->a direction (towards the sender / ACK path).
    s2 = link_between(config, "s2", "A")
    assert (s2["ab"]["rate_bps"], s2["ba"]["rate_bps"]) == (50_000_000, 1_000_000)
    r2 = link_between(config, "B", "r2")
    assert (r2["ab"]["rate_bps"], r2["ba"]["rate_bps"]) == (50_000_000, 1_000_000)
    assert r2["ab"]["delay_ns"] == r2["ba"]["delay_ns"] == 25_000_000


def test_flows_compile_with_endpoints_windows_and_replicas(write_toml) -> None:
    config = compiled(DUMBBELL, write_toml)
    names = [node["name"] for node in config["nodes"]]
    first, *replicas = config["flows"]
    assert (names[first["src"]], names[first["dst"]]) == ("s0", "r0")
    assert first["transport"] == {"kind": "tcp", "params": {"mss": 1460, "sack": True}}
    assert first["cc"] == {"kind": "newreno", "params": {}}
    assert (first["start_ns"], first["start_max_ns"], first["stop_ns"]) == (0, 10**9, 15 * 10**9)
    assert [(f["name"], f["group"], names[f["src"]], names[f["dst"]]) for f in replicas] == [
        ("bg.0", "long", "s2", "r2"),
        ("bg.1", "long", "s2", "r2"),
    ]
    # Defaults: TCP with the engine's congestion control, a bulk application, start at 0.
    assert replicas[0]["transport"] == {"kind": "tcp", "params": {}}
    assert replicas[0]["cc"] is None
    assert replicas[0]["app"] == {"kind": "bulk", "params": {}}
    assert (replicas[0]["start_ns"], replicas[0]["start_max_ns"]) == (0, None)
    assert config["trace"] == {
        "interval_ns": 10_000_000,
        "queues": ["A->B"],
        "cwnd": True,
        "flow_counters": False,
        "events": False,
        "messages": False,
        "rtt": False,
    }


def test_sources_and_sinks_give_each_side_its_own_delay(write_toml) -> None:
    # Piotrowska's access-link dumbbell: RTT(i, j) = 2 (a_i + b_j) + 4 ms with a 2 ms core.
    config = compiled(
        """
        [simulation]
        duration = "10s"
        [topology]
        kind = "dumbbell"
        bottleneck = { rate = "100Mbps", delay = "2ms", queue = { kind = "droptail", limit = "900p" } }
        access = { rate = "1Gbps" }
        sources = [ { delay = "0ms" }, { delay = "12ms" }, { delay = "25ms" } ]
        sinks = [ { delay = "2ms" }, { delay = "37ms" }, { delay = "75ms" } ]
        [[flows]]
        src = "s2"
        dst = "r2"
        """,
        write_toml,
    )
    names = [node["name"] for node in config["nodes"]]
    delays = {(names[link["a"]], names[link["b"]]): link["ab"]["delay_ns"] for link in config["links"]}
    rtt_ms = 2 * (delays[("s2", "A")] + delays[("A", "B")] + delays[("B", "r2")]) / 1e6
    assert rtt_ms == 204.0
    assert delays[("s0", "A")] == 0 and delays[("B", "r1")] == 37_000_000


def test_daisy_chain_compiles_routers_in_a_line_with_hosts(write_toml) -> None:
    config = load(SCENARIOS / "examples" / "daisy_chain.toml").to_config()
    assert [n["name"] for n in config["nodes"]] == ["R0", "R1", "sender", "receiver"]
    hop = link_between(config, "R0", "R1")
    assert hop["ab"]["rate_bps"] == 1_500_000 and hop["ab"]["queue"]["params"] == {"limit": {"packets": 17}}
    assert link_between(config, "sender", "R0")["ab"]["delay_ns"] == 2_000_000
    assert link_between(config, "receiver", "R1")["ba"] == {
        "rate_bps": 10_000_000,
        "delay_ns": 33_000_000,
        "loss": 0.0,
        "queue": {"kind": "droptail", "params": {}},
    }
    assert config["bottleneck"] == "R0->R1"


def test_daisy_chain_bottleneck_defaults_to_the_slowest_hop(write_toml) -> None:
    config = compiled(
        """
        [simulation]
        duration = "1s"
        [topology]
        kind = "daisy_chain"
        hops = [ { rate = "10Mbps" }, { rate = "2Mbps" }, { rate = "2Mbps" } ]
        access = { rate = "1Gbps" }
        hosts = [ { router = 0 }, { router = 3 } ]
        [[flows]]
        src = "h0"
        dst = "h1"
        """,
        write_toml,
    )
    assert config["bottleneck"] == "R1->R2"
    assert [n["name"] for n in config["nodes"]][-2:] == ["h0", "h1"]


def test_asymmetric_example_has_a_slow_lossless_reverse_path() -> None:
    config = load(SCENARIOS / "examples" / "asymmetric.toml").to_config()
    bottleneck = config["links"][0]
    assert (bottleneck["ab"]["rate_bps"], bottleneck["ba"]["rate_bps"]) == (16_000_000, 80_000)
    assert (bottleneck["ab"]["loss"], bottleneck["ba"]["loss"]) == (1e-4, 0.0)
    assert bottleneck["ba"]["delay_ns"] == 40_000_000  # not overridden: as the forward direction


def test_explicit_topology_maps_names_to_indices(write_toml) -> None:
    config = compiled(
        """
        [simulation]
        duration = "1s"
        [topology]
        kind = "explicit"
        nodes = [ { name = "ctl", kind = "host" }, { name = "r", kind = "router" }, { name = "sensor", kind = "host" } ]
        links = [ { a = "sensor", b = "r", rate = "1Mbps" }, { a = "r", b = "ctl", rate = "256kbps", delay = "1ms" } ]
        bottleneck_queue = "r->ctl"
        [[flows]]
        src = "sensor"
        dst = "ctl"
        transport = "udp"
        app = { kind = "periodic", size = "1024B", period = "50ms" }
        """,
        write_toml,
    )
    assert [(link["a"], link["b"]) for link in config["links"]] == [(2, 1), (1, 0)]
    assert config["bottleneck"] == "r->ctl"
    assert config["flows"][0]["app"] == {"kind": "periodic", "params": {"size": 1024, "period": 50_000_000}}


def test_flagship_is_a_one_bdp_dumbbell_with_four_rtts() -> None:
    scenario = load(FLAGSHIP)
    config = scenario.to_config()
    assert len(config["flows"]) == 4 and all(f["cc"]["kind"] == "newreno" for f in config["flows"])
    assert config["duration_ns"] == 60 * 10**9 and config["warmup_ns"] == 10 * 10**9
    assert config["trace"]["interval_ns"] == 10_000_000
    rtts = []
    for pair in range(4):
        src = link_between(config, f"s{pair}", "A")["ab"]["delay_ns"]
        dst = link_between(config, "B", f"r{pair}")["ab"]["delay_ns"]
        rtts.append(2 * (src + 5_000_000 + dst) / 1e9)
    assert rtts == pytest.approx([0.018, 0.050, 0.110, 0.210])
    bdp_packets = 10e6 * (sum(rtts) / 4) / 8 / 1500
    limit = config["links"][0]["ab"]["queue"]["params"]["limit"]["packets"]
    assert abs(limit - bdp_packets) <= 1


def test_a_dumped_scenario_loads_back_to_the_same_configuration(write_toml) -> None:
    scenario = load(write_toml(DUMBBELL))
    dumped = scenario.model_dump(exclude_none=True)
    assert dumped["topology"]["bottleneck"]["rate"] == "10Mbps"
    assert dumped["flows"][0]["start"] == "0s..1s"
    assert ccsim.from_dict(dumped).to_config() == scenario.to_config()


# --- overrides --------------------------------------------------------------------------------


def test_overrides_change_values_and_are_validated_like_the_file(write_toml) -> None:
    config = compiled(
        DUMBBELL,
        write_toml,
        [
            "simulation.duration=30s",
            "simulation.seed=11",
            "topology.bottleneck.queue.limit=50p",
            "flows[1].count=3",
            "flows.stop=12s",
            "metrics.jain_flows=[1, 3]",
            "trace.cwnd=false",
        ],
    )
    assert config["jain_flows"] == [1, 3]
    assert config["trace"]["cwnd"] is False
    assert (config["duration_ns"], config["seed"]) == (30 * 10**9, 11)
    assert config["links"][0]["ab"]["queue"]["params"]["limit"] == {"packets": 50}
    assert len(config["flows"]) == 4
    assert {f["stop_ns"] for f in config["flows"]} == {12 * 10**9}


def test_overrides_create_tables_and_expand_bare_algorithm_names(write_toml) -> None:
    text = DUMBBELL.replace('[trace]\ninterval = "10ms"\nqueues = ["A->B"]\n', "")
    config = compiled(
        text, write_toml, ["trace.interval=1ms", "flows[0].cc.kind=newreno", "flows[1].transport.mss=1000B"]
    )
    assert config["trace"]["interval_ns"] == 1_000_000
    assert config["flows"][1]["transport"] == {"kind": "tcp", "params": {"mss": 1000}}
    # A model table created by --set still needs its kind.
    err = error_of(write_toml, text, ["flows[0].app.kind=bulk", "flows[1].cc.ecn=true"])
    assert err.field == "flows[1].cc.kind"
    assert err.message.startswith("required field missing; registered: ") and "newreno" in err.message


@pytest.mark.parametrize(
    ("override", "field", "needle"),
    [
        ("simulation.duration=30", "simulation.duration", "has no unit"),
        ("topology.bottleneck.rate=-10Mbps", "topology.bottleneck.rate", "must not be negative"),
        ("topology.bottleneck.queue.kind=nosuchqueue", "topology.bottleneck.queue.kind", "registered: "),
        ("topology.bottlneck.rate=1Mbps", "topology.bottlneck", "unknown field; allowed: kind, bottleneck"),
        ("flows[5].cc=newreno", "flows[5].cc", "no element 5; flows has 2"),
        ("simulation.duration.x=1", "simulation.duration.x", "is a value"),
        ("simulation..seed=1", "simulation..seed", "bad --set key"),
        ("novalue", "--set", "expected KEY=VALUE"),
    ],
)
def test_a_bad_override_names_its_key(write_toml, override: str, field: str, needle: str) -> None:
    err = error_of(write_toml, DUMBBELL, [override])
    assert err.field == field
    assert needle in err.message
    assert str(err).startswith(f"{err.file}: {field}: ")


def test_errors_caused_by_an_override_point_at_it(write_toml) -> None:
    err = error_of(write_toml, DUMBBELL, ["simulation.warmup=1min"])
    assert err.field == "simulation.warmup"
    assert "(from --set simulation.warmup=1min)" in err.message


# --- malformed scenarios ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "field", "needle"),
    [
        (
            "seed = 7",
            'seed = 7\ncolour = "blue"',
            "simulation.colour",
            "unknown field; allowed: duration, warmup, seed",
        ),
        ('rate = "10Mbps", delay', 'rate = "-10Mbps", delay', "topology.bottleneck.rate", "must not be negative"),
        ('cc = "newreno"', 'cc = "tahoe"', "flows[0].cc", "unknown congestion control 'tahoe'; registered: "),
        ('kind = "droptail"', 'kind = "bluest"', "topology.bottleneck.queue.kind", "registered: "),
        ('mss = "1460B"', 'mss = "1460B", nagle = true', "flows[0].transport.nagle", "unknown parameter of tcp"),
        ('mss = "1460B"', 'mss = "1460"', "flows[0].transport.mss", "no unit"),
        ("pair = 2", "pair = 3", "flows[1].pair", "no pair 3; the dumbbell has 3 (0..2)"),
        ('warmup = "5s"', 'warmup = "20s"', "simulation.warmup", "shorter than the duration (20s), got 20s"),
        ('start = "0s..1s"', 'start = "1s..0s"', "flows[0].start", "end must be after its start"),
        ("count = 2", 'count = 2\nstart = "20s"', "flows[1].start", "after the end of the simulation"),
        ('stop = "15s"', 'stop = "0s"', "flows[0].stop", "must be after start"),
        ('queues = ["A->B"]', 'queues = ["A->C"]', "trace.queues[0]", "no queue 'A->C'"),
        ("count = 2", "count = 0", "flows[1].count", "greater than or equal to 1"),
        (
            'kind = "dumbbell"',
            'kind = "ring"',
            "topology.kind",
            "allowed: 'dumbbell', 'daisy_chain', 'explicit', 'star'",
        ),
        ("pair = 0", 'pair = 0\nsrc = "s0"', "flows[0].pair", "either pair or src and dst"),
        ('interval = "10ms"', "interval = 10", "trace.interval", "no unit"),
        ("seed = 7", "seed = -1", "simulation.seed", "greater than or equal to 0"),
        (
            "[trace]",
            "[metrics]\njain_flows = [0, 3]\n\n[trace]",
            "metrics.jain_flows[1]",
            "no flow 3; flows are numbered 0..2",
        ),
    ],
)
def test_malformed_scenarios_name_the_field_and_what_is_allowed(
    write_toml, old: str, new: str, field: str, needle: str
) -> None:
    assert old in DUMBBELL
    err = error_of(write_toml, DUMBBELL.replace(old, new, 1))
    assert (err.field, needle in err.message) == (field, True), str(err)


def test_a_link_to_a_missing_node_is_named(write_toml) -> None:
    err = error_of(
        write_toml,
        """
        [simulation]
        duration = "1s"
        [topology]
        kind = "explicit"
        nodes = [ { name = "h1", kind = "host" }, { name = "r", kind = "router" } ]
        links = [ { a = "h1", b = "r", rate = "1Mbps" }, { a = "r", b = "h9", rate = "1Mbps" } ]
    """,
    )
    assert err.field == "topology.links[1].b"
    assert err.message == "no node named 'h9'; nodes: h1, r"


def test_flows_must_run_between_existing_hosts(write_toml) -> None:
    base = """
        [simulation]
        duration = "1s"
        [topology]
        kind = "daisy_chain"
        hops = [ { rate = "1Mbps" } ]
        access = { rate = "10Mbps" }
        hosts = [ { name = "a", router = 0 }, { name = "b", router = 1 } ]
        [[flows]]
    """
    err = error_of(write_toml, base + 'src = "a"\ndst = "R1"')
    assert (err.field, err.message) == ("flows[0].dst", "'R1' is a router; flows run between hosts: a, b")
    err = error_of(write_toml, base + 'src = "zz"\ndst = "b"')
    assert (err.field, err.message) == ("flows[0].src", "no node named 'zz'; hosts: a, b")
    err = error_of(write_toml, base + "pair = 0")
    assert err.field == "flows[0].pair" and "daisy_chain needs src and dst" in err.message
    err = error_of(write_toml, base.replace("router = 1", "router = 5") + 'src = "a"\ndst = "b"')
    assert err.field == "topology.hosts[1].router" and "R0, R1" in err.message


def test_a_link_without_a_rate_says_where_to_give_one(write_toml) -> None:
    err = error_of(write_toml, DUMBBELL.replace('access = { rate = "100Mbps" }', ""))
    assert err.field == "topology.pairs[0].rate"
    assert "set pairs[0].rate or access.rate" in err.message


def test_unreadable_and_malformed_files_are_scenario_errors(tmp_path: Path, write_toml) -> None:
    missing = tmp_path / "nope.toml"
    with pytest.raises(ccsim.ScenarioError, match=r"nope.toml: no such file"):
        load(missing)
    err = error_of(write_toml, "[simulation\nduration = 1")
    assert "not valid TOML" in err.message and "line 1" in err.message


def test_scenario_errors_survive_pickling_for_worker_processes(write_toml) -> None:
    err = error_of(write_toml, DUMBBELL.replace('cc = "newreno"', 'cc = "no-such-cc"'))
    copy = pickle.loads(pickle.dumps(err))
    assert (copy.file, copy.field, copy.message, str(copy)) == (err.file, err.field, err.message, str(err))


def test_a_scenario_needs_simulation_and_topology(write_toml) -> None:
    err = error_of(write_toml, "")
    assert (err.field, err.message) == ("simulation", "required field missing (and 1 more problem)")


# --- Python builders --------------------------------------------------------------------------


def test_python_builders_make_the_same_scenario_as_the_file(write_toml) -> None:
    topology = ccsim.dumbbell(
        bottleneck={"rate": "10Mbps", "delay": "5ms", "queue": {"kind": "droptail", "limit": "81p"}},
        access={"rate": "100Mbps"},
        pairs=["2ms", "10ms", "25ms", "50ms"],
    )
    scenario = ccsim.Scenario(
        description="10 Mbit/s dumbbell, DropTail of one BDP, 4 NewReno flows with RTTs 18-210 ms",
        simulation={"duration": "60s", "warmup": "10s", "seed": 1},
        topology=topology,
        flows=[
            {
                "pair": i,
                "transport": "tcp",
                "cc": "newreno",
                "app": {"kind": "bulk"},
                "start": "0s..1s",
                "group": f"rtt{rtt}ms",
            }
            for i, rtt in enumerate((18, 50, 110, 210))
        ],
        trace={"interval": "10ms", "queues": ["A->B"]},
    )
    assert ccsim.compile(scenario) == load(FLAGSHIP).to_config()
    assert json.loads(json.dumps(ccsim.compile(scenario))) == ccsim.compile(scenario)


def test_python_builders_raise_scenario_errors_naming_the_field() -> None:
    with pytest.raises(ccsim.ScenarioError) as info:
        ccsim.dumbbell(bottleneck={"rate": "fast"}, pairs=["1ms"])
    assert info.value.field == "bottleneck.rate"
    with pytest.raises(ccsim.ScenarioError) as info:
        ccsim.daisy_chain(hops=[{"rate": "1Mbps"}], hosts=[{"router": 0, "rate": "1Mbps", "colour": 1}])
    assert info.value.field == "hosts[0].colour"


# --- parameter validation against a registry ------------------------------------------------

SYNTHETIC = Registry(
    [
        ModelInfo(
            "queue",
            "toy",
            "a toy",
            (
                ParamInfo("target", "time", 5_000_000, 1_000_000, 1_000_000_000, "target delay"),
                ParamInfo("p", "prob", 0.5, None, None, "probability"),
                ParamInfo("w", "float", 0.5, 0.0, 1.0, "weight"),
                ParamInfo("n", "int", None, 1, None, "count"),
                ParamInfo("on", "bool", True, None, None, "switch"),
                ParamInfo("limit", "size", {"packets": 100}, 1, None, "buffer"),
            ),
        ),
    ]
)


def test_validate_params_converts_each_kind_to_canonical_units() -> None:
    params = SYNTHETIC.validate_params(
        "queue", "toy", {"target": "2ms", "p": "30%", "w": 1, "n": 3, "on": False, "limit": "64KiB"}, "q"
    )
    assert params == {"target": 2_000_000, "p": 0.3, "w": 1.0, "n": 3, "on": False, "limit": {"bytes": 65536}}


@pytest.mark.parametrize(
    ("given", "field", "needle"),
    [
        ({"n": 1, "target": "0.5ms"}, "q.target", "must be >= 1ms"),
        ({"n": 1, "target": "2s"}, "q.target", "must be <= 1s"),
        ({"n": 1, "w": 1.5}, "q.w", "must be <= 1"),
        ({"n": 0}, "q.n", "must be >= 1"),
        ({"n": 1.5}, "q.n", "not an integer"),
        ({"n": 1, "on": "yes"}, "q.on", "write true or false"),
        ({"n": 1, "limit": "0p"}, "q.limit", "must be >= 1"),
        ({"n": 1, "colour": 1}, "q.colour", "allowed: target, p, w, n, on, limit"),
        ({}, "q.n", "required parameter of toy missing"),
    ],
)
def test_validate_params_rejects_bad_values_naming_the_parameter(given: dict, field: str, needle: str) -> None:
    with pytest.raises(ParamError) as info:
        SYNTHETIC.validate_params("queue", "toy", given, "q")
    assert info.value.field == field
    assert needle in info.value.message


def test_unknown_model_names_list_the_registered_ones() -> None:
    with pytest.raises(ParamError, match=r"unknown queue discipline 'codel'; registered: toy"):
        SYNTHETIC.validate_params("queue", "codel", {}, "q")


# --- the engine's checks, named by scenario key ------------------------------------------------

# Four flows compile from two tables: flows[0] expands to compiled flows 0..2, flows[1] is 3.
REPLICATED = """
    [simulation]
    duration = "1s"
    [topology]
    kind = "explicit"
    nodes = [ { name = "h1", kind = "host" }, { name = "r", kind = "router" }, { name = "h2", kind = "host" } ]
    links = [ { a = "h1", b = "r", rate = "10Mbps" }, { a = "r", b = "h2", rate = "1Mbps" } ]
    bottleneck_queue = "r->h2"
    [[flows]]
    src = "h1"
    dst = "h2"
    count = 3
    [[flows]]
    src = "h2"
    dst = "h1"
    [trace]
    interval = "10ms"
    queues = ["r->h2"]
"""


@pytest.mark.parametrize(
    ("old", "new", "field", "message"),
    [
        (
            'duration = "1s"',
            'duration = "1s"\nwarmup = "2s"',
            "simulation.warmup",
            "must be shorter than the duration (1s), got 2s",
        ),
        ('src = "h2"', 'src = "r"', "flows[1].src", "'r' is a router; flows run between hosts: h1, h2"),
        ('dst = "h1"', 'dst = "h2"', "flows[1].dst", "same host as src ('h2')"),
        (
            'bottleneck_queue = "r->h2"',
            'bottleneck_queue = "h2->h1"',
            "topology.bottleneck_queue",
            "no queue 'h2->h1'; queues are named FROM->TO: h1->r, r->h1, r->h2, h2->r",
        ),
        (
            'queues = ["r->h2"]',
            'queues = ["r->h2", "r-h2"]',
            "trace.queues[1]",
            "no queue 'r-h2'; queues are named FROM->TO: h1->r, r->h1, r->h2, h2->r",
        ),
        (
            "[trace]",
            "[metrics]\njain_flows = [3, 4]\n[trace]",
            "metrics.jain_flows[1]",
            "no flow 4; flows are numbered 0..3 (4 flows)",
        ),
    ],
)
def test_the_engines_checks_name_the_scenario_key_and_what_is_allowed(
    write_toml, old: str, new: str, field: str, message: str
) -> None:
    assert old in REPLICATED
    err = error_of(write_toml, REPLICATED.replace(old, new, 1))
    assert (err.field, err.message) == (field, message)


def test_the_engines_checks_run_for_the_cli_and_name_the_file(write_toml) -> None:
    from conftest import run_cli

    path = write_toml(REPLICATED.replace('dst = "h1"', 'dst = "h2"', 1))
    for command in ("validate", "run"):
        proc = run_cli(command, str(path))
        assert proc.returncode == 2
        assert proc.stderr.strip() == f"ccsim: {path}: flows[1].dst: same host as src ('h2')"


def test_engine_paths_map_to_the_scenario_keys_they_were_compiled_from(write_toml) -> None:
    from ccsim.scenario.schema import scenario_key

    text = (
        REPLICATED
        + """
    [[control]]
    [[control]]
    plant_host = "h1"
    controller_host = "h2"
    """
    )
    model = load(write_toml(text))
    assert len(model.to_config()["flows"]) == 6
    cases = {
        "duration_ns": "simulation.duration",
        "warmup_ns": "simulation.warmup",
        "flows[2].start_ns": "flows[0].start",
        "flows[2].start_max_ns": "flows[0].start",
        "flows[3].app.size": "flows[1].app.size",
        "flows[3].stop_ns": "flows[1].stop",
        "flows[4].src": "control[1].plant_host",
        "flows[5].src": "control[1].controller_host",
        "flows[5].app.size": "control[1].message_size",
        "flows[5].transport.mss": "control[1].transport.mss",
        "jain_flows[1]": "metrics.jain_flows[1]",
        "bottleneck": "topology.bottleneck_queue",
        "trace.queues[0]": "trace.queues[0]",
        "trace.interval_ns": "trace.interval",
        "control[0].period_ns": "control[0].sampling_period",
        "control[1].controller.kp": "control[1].controller.kp",
        "links[0].ab.queue.kind": "links[0].ab.queue.kind",
    }
    assert {path: scenario_key(model, path) for path in cases} == cases
