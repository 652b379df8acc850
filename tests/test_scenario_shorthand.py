"""Dumbbell pairs by round-trip time (``pairs = { rtts = ... }``, a pair's ``rtt``) and flows over
many pairs (``pair = "all"`` or a list): the engine measures the RTT that was asked for on every
path, flows are made pair by pair and grouped by RTT, and every mistake names its key (exit 2
through the CLI)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import ccsim
import pytest
from ccsim.errors import ScenarioError
from ccsim.experiments.compare.run import group_order
from ccsim.scenario.reference import json_schema
from conftest import SCENARIOS, run_cli

EXAMPLE = SCENARIOS / "examples" / "rtt-fairness.toml"
MS = 1_000_000  # ns


def scenario(pairs: Any, flows: list[dict[str, Any]] | None = None, bottleneck: Any = None) -> dict[str, Any]:
    return {
        "simulation": {"duration": "1s"},
        "topology": {
            "kind": "dumbbell",
            "bottleneck": bottleneck or {"rate": "50Mbps", "delay": "2ms"},
            "access": {"rate": "1Gbps"},
            "pairs": pairs,
        },
        "flows": flows if flows is not None else [{"pair": "all"}],
    }


def error_of(data: dict[str, Any]) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        ccsim.from_dict(data)
    return info.value


# --- the RTT of every path --------------------------------------------------------------------


def test_the_engine_measures_the_asked_rtt_on_every_pair() -> None:
    """Ten paths 10..100 ms over an asymmetric bottleneck (2 ms forward, 3 ms back): each flow's
    smallest RTT sample is its pair's RTT plus the serialization of its segment and its ACK on
    the three links, and nothing else. One 1000 B segment every 50 ms, each ACKed at once, so
    that no sample waits in a queue or for a delayed ACK."""
    header, payload = 40, 1000
    data = scenario(
        {"rtts": {"from": "10ms", "to": "100ms", "count": 10}},
        [
            {
                "pair": "all",
                "transport": {"kind": "tcp", "delack_count": 1, "header": f"{header}B"},
                "app": {"kind": "periodic", "size": f"{payload}B", "period": "50ms"},
            }
        ],
        bottleneck={"rate": "50Mbps", "delay": "2ms", "reverse": {"delay": "3ms"}},
    )
    flows = ccsim.run(data).flows
    asked = [10e-3 * (k + 1) for k in range(10)]
    per_bit = 2 / 1e9 + 1 / 50e6  # two access links at 1 Gbit/s and the bottleneck, each way
    serialization = ((payload + header) * 8 + header * 8) * per_bit
    one_packet = 1500 * 8 / 50e6  # a full-size packet at the bottleneck
    assert serialization < one_packet
    for flow, rtt in zip(flows.itertuples(), asked, strict=True):
        assert flow.group == f"rtt{round(rtt * 1e3)}ms"
        assert flow.rtt_samples >= 15
        excess = flow.rtt_min_s - rtt
        assert excess == pytest.approx(serialization, abs=1e-6), (flow.group, excess)


def test_each_access_link_gets_a_quarter_of_what_the_bottleneck_leaves() -> None:
    data = scenario(
        {"rtts": ["10ms", "10.000001ms", "33ms"], "rate": "100Mbps", "loss": 0.001},
        bottleneck={"rate": "50Mbps", "delay": "2ms", "reverse": {"delay": "3ms"}},
    )
    s = ccsim.from_dict(data)
    config = s.to_config()
    links = config["links"]
    # Links: A--B, then s_i--A, then B--r_i; the pair's keys (rate, loss) apply to every pair.
    for i, rtt in enumerate([10 * MS, 10 * MS + 1, 33 * MS]):
        src, dst = links[1 + i], links[4 + i]
        for link in (src, dst):
            assert link["ab"]["rate_bps"] == 100_000_000 and link["ab"]["loss"] == 0.001
        total = sum(link[way]["delay_ns"] for link in (src, dst) for way in ("ab", "ba")) + 5 * MS
        assert total == rtt  # to the nanosecond
        # The same delay on the four access directions, but for the ns that do not divide by 4.
        delays = [link[way]["delay_ns"] for link in (src, dst) for way in ("ab", "ba")]
        assert max(delays) - min(delays) <= 1
    assert links[1]["ab"]["delay_ns"] == links[4]["ab"]["delay_ns"] == 1_250_000  # (10 - 5) / 4 ms
    assert s.network.pair_rtts == [10 * MS, 10 * MS + 1, 33 * MS]


def test_an_rtt_equal_to_the_bottlenecks_round_trip_leaves_the_access_links_no_delay() -> None:
    links = ccsim.from_dict(scenario({"rtts": ["4ms"]})).to_config()["links"]
    assert [links[i]["ab"]["delay_ns"] for i in (1, 2)] == [0, 0]


def test_a_range_is_evenly_spaced_with_both_ends_included() -> None:
    s = ccsim.from_dict(scenario({"rtts": {"from": "10ms", "to": "20ms", "count": 4}}))
    assert s.network.pair_rtts == [10 * MS, 13_333_333, 16_666_667, 20 * MS]
    assert s.flow_groups() == ["rtt10ms", "rtt13.333ms", "rtt16.667ms", "rtt20ms"]


def test_a_list_of_pairs_may_give_each_its_rtt_beside_pairs_given_by_delay() -> None:
    s = ccsim.from_dict(scenario([{"rtt": "30ms"}, {"delay": "5ms"}, {"src_delay": "1ms", "dst_delay": "3ms"}]))
    assert s.network.pair_rtts == [30 * MS, 2 * (5 + 2 + 5) * MS, 2 * (1 + 2 + 3) * MS]
    assert s.flow_groups() == ["rtt30ms", "rtt24ms", "rtt12ms"]


def test_the_rtt_form_survives_a_dump() -> None:
    s = ccsim.from_dict(scenario({"rtts": {"from": "10ms", "to": "40ms", "count": 4}, "rate": "1Gbps"}))
    dumped = s.model_dump(mode="json")
    assert dumped["topology"]["pairs"]["rtts"] == ["10ms", "20ms", "30ms", "40ms"]
    assert ccsim.from_dict(dumped).to_config() == s.to_config()


def test_the_python_builder_takes_the_rtt_form() -> None:
    topo = ccsim.dumbbell(
        {"rate": "50Mbps", "delay": "2ms"}, access={"rate": "1Gbps"}, pairs={"rtts": ["20ms", "60ms"]}
    )
    s = ccsim.Scenario(simulation={"duration": "1s"}, topology=topo, flows=[{"pair": "all", "count": 2}])
    assert s.network.pair_rtts == [20 * MS, 60 * MS]
    assert s.flow_groups() == ["rtt20ms", "rtt20ms", "rtt60ms", "rtt60ms"]
    with pytest.raises(ScenarioError, match=r"pairs\.rtts\[0\]: 3ms is below 4ms"):
        ccsim.dumbbell({"rate": "50Mbps", "delay": "2ms"}, access={"rate": "1Gbps"}, pairs={"rtts": ["3ms"]})


# --- flows over many pairs ------------------------------------------------------------------------


def test_flows_over_all_pairs_are_made_pair_by_pair_and_grouped_by_rtt() -> None:
    data = scenario(
        {"rtts": ["10ms", "50ms", "100ms"]},
        [
            {"pair": "all", "count": 2, "cc": "cubic", "name": "bulk"},
            {"pair": [2, 0], "group": "mine"},
            {"pair": 1},
        ],
    )
    s = ccsim.from_dict(data)
    config = s.to_config()
    nodes = [n["name"] for n in config["nodes"]]
    ends = [(nodes[f["src"]], nodes[f["dst"]]) for f in config["flows"]]
    assert ends == [("s0", "r0")] * 2 + [("s1", "r1")] * 2 + [("s2", "r2")] * 2 + [("s2", "r2"), ("s0", "r0")] + [
        ("s1", "r1")
    ]
    groups = [f["group"] for f in config["flows"]]
    assert groups == ["rtt10ms"] * 2 + ["rtt50ms"] * 2 + ["rtt100ms"] * 2 + ["mine", "mine", None]
    assert [f["name"] for f in config["flows"]][:6] == [f"bulk.{k}" for k in range(6)]
    assert s.table_sizes() == [6, 2, 1]


def test_an_engine_refusal_names_the_table_the_flow_came_from() -> None:
    data = scenario({"rtts": ["10ms", "20ms"]}, [{"pair": "all", "count": 2}, {"pair": 0, "stop": "2s"}])
    data["simulation"]["warmup"] = "1s"  # = duration: the engine refuses the warm-up
    assert error_of(data).field == "simulation.warmup"
    s = ccsim.from_dict(scenario({"rtts": ["10ms", "20ms"]}, [{"pair": "all", "count": 2}, {"pair": 0}]))
    from ccsim.scenario.schema import scenario_key

    assert [scenario_key(s, f"flows[{k}].cc") for k in range(5)] == ["flows[0].cc"] * 4 + ["flows[1].cc"]


def test_the_example_runs_twenty_cubic_flows_grouped_by_rtt() -> None:
    s = ccsim.load(EXAMPLE, ["simulation.duration=3s", "simulation.warmup=1s"])
    result = ccsim.run(s)
    flows = result.flows
    assert len(flows) == 20 and set(flows["cc"]) == {"cubic"}
    groups = list(dict.fromkeys(flows["group"]))
    assert groups == [f"rtt{10 * k}ms" for k in range(1, 11)]
    assert (flows.groupby("group").size() == 2).all()
    assert (flows["rtt_min_s"] >= flows["group"].str[3:-2].astype(float) / 1e3).all()
    assert result.queues.set_index("name").loc["A->B", "kind"] == "fq_codel"


def test_group_labels_sort_by_their_numbers() -> None:
    labels = ["rtt100ms", "rtt10ms", "rtt1.5s", "rtt500us", "rtt20ms", "g10", "g9", "a10senders", "a9senders"]
    assert sorted(labels, key=group_order) == [
        "a9senders",
        "a10senders",
        "g9",
        "g10",
        "rtt500us",
        "rtt10ms",
        "rtt20ms",
        "rtt100ms",
        "rtt1.5s",
    ]


# --- mistakes name their key -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pairs", "flows", "field", "says"),
    [
        ({"rtts": ["10ms", "3ms"]}, None, "topology.pairs.rtts[1]", "3ms is below 4ms, the round trip"),
        ({"rtts": {"from": "1ms", "to": "9ms", "count": 3}}, None, "topology.pairs.rtts[0]", "1ms is below 4ms"),
        ([{"rtt": "10ms"}, {"rtt": "2ms"}], None, "topology.pairs[1].rtt", "2ms is below 4ms"),
        ({"rtts": {"from": "10ms", "to": "90ms", "count": 1}}, None, "topology.pairs.rtts.count", "expected 2.."),
        ({"rtts": {"from": "10ms", "to": "9ms", "count": 2}}, None, "topology.pairs.rtts.to", "must be above from"),
        ({"rtts": {"from": "10ms", "to": "90ms", "step": 2}}, None, "topology.pairs.rtts.step", "unknown field"),
        ({"rtts": {"from": "10ms", "count": 2}}, None, "topology.pairs.rtts.to", "required"),
        ({"rtts": {"from": "10", "to": "90ms", "count": 2}}, None, "topology.pairs.rtts.from", "no unit"),
        ({"rtts": []}, None, "topology.pairs.rtts", "must not be empty"),
        ({"rtts": ["10ms", "fast"]}, None, "topology.pairs.rtts[1]", "not a time"),
        ({"rtts": ["0s"]}, None, "topology.pairs.rtts[0]", "longer than 0s"),
        ({"rtts": ["10ms"], "delay": "1ms"}, None, "topology.pairs.rtts", "leave out delay"),
        ({"rtts": ["10ms"], "reverse": {"delay": "1ms"}}, None, "topology.pairs.rtts", "leave out reverse.delay"),
        ({"rtts": ["10ms"], "rate": "fast"}, None, "topology.pairs.rate", "not a rate"),
        ({"rate": "1Gbps"}, None, "topology.pairs.rtts", "a single table of pairs needs rtts"),
        ([{"rtts": ["10ms"]}], None, "topology.pairs[0].rtts", "write pairs = { rtts = [...] }"),
        ([{"rtt": "10ms", "src_delay": "1ms"}], None, "topology.pairs[0].rtt", "leave out src_delay"),
        ({"rtts": ["10ms", "20ms"]}, [{"pair": [0, 2]}], "flows[0].pair[1]", "no pair 2; the dumbbell has 2"),
        ({"rtts": ["10ms", "20ms"]}, [{"pair": [1, 1]}], "flows[0].pair[1]", "listed twice"),
        ({"rtts": ["10ms"]}, [{"pair": []}], "flows[0].pair", "must not be empty"),
        ({"rtts": ["10ms"]}, [{"pair": "All"}], "flows[0].pair", 'expected a pair index (0, 1, ...), "all"'),
        ({"rtts": ["10ms"]}, [{"pair": [True]}], "flows[0].pair[0]", "expected a pair index"),
        ({"rtts": ["10ms"]}, [{"pair": -1}], "flows[0].pair", "0 or more"),
        ({"rtts": ["10ms"]}, [{"pair": "all", "src": "s0"}], "flows[0].pair", "either pair or src and dst"),
        ({"rtts": ["10ms"] * 3}, [{"pair": "all", "count": 40_000}], "flows", "120000 flows in all"),
    ],
)
def test_mistakes_name_their_key(pairs: Any, flows: Any, field: str, says: str) -> None:
    err = error_of(scenario(pairs, flows))
    assert err.field == field and says in err.message, str(err)


def test_all_pairs_need_a_dumbbell_with_pairs() -> None:
    data = {
        "simulation": {"duration": "1s"},
        "topology": {
            "kind": "star",
            "sensors": 2,
            "bottleneck": {"rate": "1Mbps"},
            "access": {"rate": "1Mbps"},
        },
        "flows": [{"pair": "all"}],
    }
    err = error_of(data)
    assert err.field == "flows[0].pair" and "star needs src and dst" in err.message


def test_the_cli_names_the_key_and_exits_2(tmp_path: Path) -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace('from = "10ms"', 'from = "2ms"'), encoding="utf-8")
    proc = run_cli("validate", str(bad))
    assert proc.returncode == 2
    assert "topology.pairs.rtts[0]: 2ms is below 4ms, the round trip of the bottleneck alone" in proc.stderr
    proc = run_cli("run", str(EXAMPLE), "--set", "topology.pairs.rtts.count=1")
    assert proc.returncode == 2
    assert "topology.pairs.rtts.count" in proc.stderr and "(from --set topology.pairs.rtts.count=1)" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_schema_accepts_the_shorthand_and_refuses_what_the_parser_refuses() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(json_schema())
    assert validator.is_valid(tomllib.loads(EXAMPLE.read_text(encoding="utf-8")))
    good = [
        scenario({"rtts": ["10ms", "20ms"], "rate": "1Gbps"}, [{"pair": [1, 0], "count": 2}]),
        scenario([{"rtt": "10ms"}, {"delay": "1ms"}], [{"pair": 1}]),
    ]
    for data in good:
        assert validator.is_valid(data)
        ccsim.from_dict(data)
    bad = [
        scenario({"rtts": {"from": "10ms", "to": "90ms", "count": 1}}),
        scenario({"rtts": {"from": "10ms", "to": "90ms", "count": 3, "step": 1}}),
        scenario({"rtts": []}),
        scenario({"rtts": ["10ms"]}, [{"pair": []}]),
        scenario({"rtts": ["10ms"]}, [{"pair": "some"}]),
        scenario({"rtts": ["10ms", "20ms"]}, [{"pair": [1, 1]}]),
    ]
    for data in bad:
        assert not validator.is_valid(data)
        with pytest.raises(ScenarioError):
            ccsim.from_dict(data)
