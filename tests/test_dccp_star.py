"""Paper 001's centralised control system: the star topology, flow-name references for the
controller's replies, DCCP as a transport, and the Table I accounting through the Python API."""

from __future__ import annotations

import json

import ccsim
import numpy as np
import pytest
from ccsim.scenario.schema import load
from conftest import SCENARIOS, run_cli

DEDU = SCENARIOS / "papers" / "dedu-ncs" / "star.toml"

STAR = """
[simulation]
duration = "10s"

[topology]
kind = "star"
sensors = [ {}, { delay = "5ms" }, { rate = "2Mbps", reverse = { rate = "500kbps" } } ]
access = { rate = "1Mbps", delay = "1ms" }
bottleneck = { rate = "256kbps", delay = "2ms", queue = { kind = "droptail", limit = "50p" } }

[[flows]]
name = "s0"
src = "sensor0"
dst = "controller"
transport = "udp"
app = { kind = "periodic", size = "1024B", period = "50ms" }

[[flows]]
name = "s1"
src = "sensor1"
dst = "controller"
transport = { kind = "dccp", ccid = 3 }
app = { kind = "periodic", size = "1024B", period = "50ms", buffer = "8KiB" }

[[flows]]
name = "r1"
src = "controller"
dst = "sensor1"
transport = "udp"
app = { kind = "reply", to = "s1" }
"""


def nodes_and_links(config: dict) -> tuple[list[tuple[str, str]], list[tuple]]:
    names = [n["name"] for n in config["nodes"]]
    nodes = [(n["name"], n["kind"]) for n in config["nodes"]]
    links = [
        (names[l["a"]], names[l["b"]], l["ab"]["rate_bps"], l["ab"]["delay_ns"], l["ba"]["rate_bps"], l["ab"]["queue"])
        for l in config["links"]
    ]
    return nodes, links


def test_star_compiles_sensors_router_and_controller(write_toml) -> None:
    config = load(write_toml(STAR)).to_config()
    nodes, links = nodes_and_links(config)
    assert nodes == [
        ("sensor0", "host"),
        ("sensor1", "host"),
        ("sensor2", "host"),
        ("router", "router"),
        ("controller", "host"),
    ]
    droptail50 = {"kind": "droptail", "params": {"limit": {"packets": 50}}}
    droptail = {"kind": "droptail", "params": {}}
    # router--controller first (router->controller forward), then each sensor--router, the
    # access spec under each sensor's own.
    assert links == [
        ("router", "controller", 256_000, 2_000_000, 256_000, droptail50),
        ("sensor0", "router", 1_000_000, 1_000_000, 1_000_000, droptail),
        ("sensor1", "router", 1_000_000, 5_000_000, 1_000_000, droptail),
        ("sensor2", "router", 2_000_000, 1_000_000, 500_000, droptail),
    ]
    assert config["bottleneck"] == "router->controller"
    # Flows address hosts by name; the reply's `to` names flow s1, index 1.
    assert [(f["src"], f["dst"]) for f in config["flows"]] == [(0, 4), (1, 4), (4, 1)]
    assert config["flows"][2]["app"] == {"kind": "reply", "params": {"to": 1}}
    assert config["flows"][1]["transport"] == {"kind": "dccp", "params": {"ccid": 3}}


def test_star_builder_and_count_form_match_the_table() -> None:
    topo = ccsim.star(
        3, {"rate": "256kbps", "queue": {"kind": "droptail", "limit": "50p"}}, access={"rate": "1Mbps", "delay": "1ms"}
    )
    net = topo.expand()
    assert list(net.nodes) == ["sensor0", "sensor1", "sensor2", "router", "controller"]
    assert [(l.a, l.b, l.ab.rate_bps, l.ab.delay_ns) for l in net.links] == [
        ("router", "controller", 256_000, 0),
        ("sensor0", "router", 1_000_000, 1_000_000),
        ("sensor1", "router", 1_000_000, 1_000_000),
        ("sensor2", "router", 1_000_000, 1_000_000),
    ]
    # A sensor given as a string is its delay.
    net = ccsim.star(["3ms", "7ms"], {"rate": "1Mbps"}, access={"rate": "10Mbps"}).expand()
    assert [l.ab.delay_ns for l in net.links[1:]] == [3_000_000, 7_000_000]


@pytest.mark.parametrize(
    "old, new, field, needle",
    [
        (
            'access = { rate = "1Mbps", delay = "1ms" }',
            'access = { delay = "1ms" }',
            "topology.sensors[0].rate",
            "no rate for the link sensor0--router",
        ),
        ("sensors = [ {}, ", "sensors = 0 #", "topology.sensors", "expected at least one sensor"),
        ('to = "s1"', 'to = "s9"', "flows[2].app.to", "no flow named 's9'; flows: 's0', 's1', 'r1'"),
        ('to = "s1"', 'to = "r1"', "flows[2].app.to", "this flow itself"),
        ('to = "s1"', "to = 7", "flows[2].app.to", "no flow 7; flows are numbered 0..2"),
        ('to = "s1"', 'to = "s1", size = "fast"', "flows[2].app.size", ""),
        ("ccid = 3", "ccid = 5", "flows[1].transport.ccid", "must be <= 3"),
    ],
)
def test_star_and_reference_mistakes_name_the_field(write_toml, old: str, new: str, field: str, needle: str) -> None:
    text = STAR.replace(old, new)
    assert text != STAR
    with pytest.raises(ccsim.ScenarioError) as info:
        load(write_toml(text))
    assert info.value.field == field
    assert needle in info.value.message


def test_a_reference_to_replicated_flows_asks_for_one_of_them(write_toml) -> None:
    text = STAR.replace('name = "s1"', 'name = "s1"\ncount = 2')
    with pytest.raises(ccsim.ScenarioError) as info:
        load(write_toml(text))
    assert info.value.field == "flows[2].app.to"
    assert "s1.0, s1.1" in info.value.message
    # Naming one replica works and compiles to its index (s0 = 0, s1.0 = 1, s1.1 = 2).
    config = load(write_toml(text.replace('to = "s1"', 'to = "s1.1"'))).to_config()
    assert config["flows"][3]["app"]["params"]["to"] == 2


def test_a_dumped_star_scenario_with_references_loads_back_the_same(write_toml) -> None:
    scenario = load(write_toml(STAR))
    dumped = scenario.model_dump(exclude_none=True)
    assert dumped["flows"][2]["app"] == {"kind": "reply", "to": "s1"}
    assert ccsim.from_dict(dumped).to_config() == scenario.to_config()
    # An override can point the reply elsewhere by name.
    overridden = load(write_toml(STAR), ["flows[2].app.to=s0"]).to_config()
    assert overridden["flows"][2]["app"]["params"]["to"] == 0


def test_the_registry_lists_dccp_with_its_options() -> None:
    proc = run_cli("list", "--json")
    assert proc.returncode == 0, proc.stderr
    dccp = next(m for m in json.loads(proc.stdout) if m["family"] == "transport" and m["name"] == "dccp")
    params = {p["name"]: p for p in dccp["params"]}
    assert params["ccid"]["default"] == 2 and (params["ccid"]["min"], params["ccid"]["max"]) == (2, 3)
    assert {"ack_ratio", "t_mbi", "history_discounting", "mps"} <= params.keys()


def dedu(transport: str, seconds: int = 60) -> ccsim.Result:
    overrides = [f"simulation.duration={seconds}s"]
    if transport == "udp" or transport == "tcp":
        overrides.append(f"flows.transport={transport}")
    else:
        overrides.append(f"flows.transport.ccid={transport[-1]}")
    return ccsim.run(DEDU, overrides=overrides)


def assert_table_i_adds_up(table) -> None:
    total = table["lost_on_sensor"] + table["lost_on_network"] + table["received"] + table["in_flight"]
    assert (table["generated"] == total).all(), table


def test_dedu_star_with_udp_loses_on_the_network_only_and_adds_up() -> None:
    result = dedu("udp")
    table = result.table_i()
    assert list(table.index) == ["sensor0", "sensor1", "sensor2"]
    assert (table["transport"] == "udp").all()
    assert_table_i_adds_up(table)
    # 60 s from 0, 100, 200 ms every 50 ms, the last at 60 s itself.
    assert list(table["generated"]) == [1201, 1199, 1197]
    assert (table["lost_on_sensor"] == 0).all() and (table["retransmitted"] == 0).all()
    # Every loss is a drop at the full router queue: the flows' drops are all there.
    flows = result.flows.set_index("name").loc[table.index]
    assert (table["lost_on_network"] <= flows["queue_drops"]).all()
    assert (flows["queue_drops"] <= table["lost_on_network"] + table["in_flight"]).all()
    router = result.queues.set_index("name").loc["router->controller"]
    assert router["drops"] == flows["queue_drops"].sum() > 0
    assert router["max_len_pkts"] == 50
    # DropTail synchronisation mutes a sensor (the paper's Fig. 2 and Table I).
    assert (table["lost_on_network"] / table["generated"]).max() > 0.9
    # The controller answered each received sample.
    replies = result.flows.set_index("name").loc[["reply0", "reply1", "reply2"], "messages_generated"]
    assert list(replies) == list(table["received"])
    # Per-message records: one per message delivered or lost, lost ones without a delay.
    delays = result.message_delays()
    sensors = delays[delays["name"].str.startswith("sensor")]
    counts = sensors.groupby("name")["lost"].agg(["sum", "count"])
    assert list(counts["sum"]) == list(table["lost_on_network"])
    assert list(counts["count"]) == list(table["lost_on_network"] + table["received"])
    assert sensors.loc[sensors["lost"], "delay_s"].isna().all()
    delivered = sensors.loc[~sensors["lost"], "delay_s"]
    assert np.isclose(delivered.max(), table["delay_max_s"].max())
    # A full queue of 50 packets of 1052 B at 256 kbit/s is 1.64 s; nothing waits longer.
    assert 1.6 < delivered.max() < 1.7
    one = result.message_delays("sensor2")
    assert set(one["name"]) == {"sensor2"} and (one["time_s"].diff().dropna() >= 0).all()


@pytest.mark.parametrize("transport", ["tcp", "ccid2", "ccid3"])
def test_dedu_star_counts_add_up_with_congestion_control(transport: str) -> None:
    table = dedu(transport).table_i()
    assert_table_i_adds_up(table)
    # The congestion controls hold samples back: about half are refused by the full buffers.
    assert table["lost_on_sensor"].sum() > table["generated"].sum() / 4
    if transport == "tcp":
        assert (table["lost_on_network"] == 0).all()
        assert (table["cc"] == "newreno").all()
    else:
        assert (table["cc"] == transport).all()
        assert (table["retransmitted"] == 0).all()
    # Network delays stay under the full router queue's; message delays add the sensor's wait.
    assert (table["network_delay_max_s"] < 1.75).all()
    assert (table["delay_mean_s"] >= table["network_delay_mean_s"]).all()


def test_table_i_selects_flows_by_id_or_name() -> None:
    result = dedu("udp", seconds=5)
    assert list(result.table_i([3, "sensor1"]).index) == ["reply0", "sensor1"]
    with pytest.raises(KeyError, match="no flow 'nope'"):
        result.table_i(["nope"])


def test_the_cli_runs_the_dedu_scenario_with_each_transport() -> None:
    for override in ["flows.transport=udp", "flows.transport=tcp", "flows.transport.ccid=3"]:
        proc = run_cli("run", str(DEDU), "--set", "simulation.duration=5s", "--set", override, "--quiet")
        assert proc.returncode == 0, proc.stderr
