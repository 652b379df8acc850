"""Links that change during a run: a link's ``schedule`` of rate, delay, loss and up/down
changes, with rerouting (crates/ccsim-core/src/engine/dynamic.rs; docs/tutorial.md, "Links
that change"). Expected values are worked out by hand from the rates and delays."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import ccsim
import pytest
from ccsim.scenario.schema import compile_scenario, from_dict
from test_fuzz_scenarios import to_toml
from test_hostile_input import assert_bad_input, cli

MS = 1e-3
# UDP packets of 1222 payload bytes and 28 header bytes: 10 000 bits, 1 ms at 10 Mbit/s.
PAYLOAD = 1222
WIRE_BITS = (PAYLOAD + 28) * 8


def saturated(schedule: list[dict[str, Any]], duration: str = "4s") -> dict[str, Any]:
    """Hosts a and b joined by one 10 Mbit/s link of 20 ms with ``schedule``; a sends b
    15 Mbit/s of 1250-byte packets (more than the link carries), logging every message."""
    return {
        "simulation": {"duration": duration},
        "topology": {
            "kind": "explicit",
            "nodes": [{"name": "a", "kind": "host"}, {"name": "b", "kind": "host"}],
            "links": [
                {
                    "a": "a",
                    "b": "b",
                    "rate": "10Mbps",
                    "delay": "20ms",
                    "queue": {"kind": "droptail", "limit": "100p"},
                    "schedule": schedule,
                }
            ],
        },
        "flows": [
            {
                "src": "a",
                "dst": "b",
                "transport": "udp",
                "app": {"kind": "cbr", "rate": "15Mbps", "packet_size": f"{PAYLOAD}B"},
            }
        ],
        "trace": {"messages": True, "interval": "1s", "flow_counters": True, "cwnd": False},
    }


def two_paths(schedule: list[dict[str, Any]]) -> dict[str, Any]:
    """h1 -- R1 -- R2 -- h2 (1 + 10 + 1 ms) and the long way R1 -- R3 -- R2 (10 + 15 ms), all
    100 Mbit/s; R1--R2 has ``schedule``. h1 sends h2 a 100-byte datagram every 10 ms."""
    link = {"rate": "100Mbps"}
    return {
        "simulation": {"duration": "3s"},
        "topology": {
            "kind": "explicit",
            "nodes": [
                {"name": "h1", "kind": "host"},
                {"name": "R1", "kind": "router"},
                {"name": "R2", "kind": "router"},
                {"name": "h2", "kind": "host"},
                {"name": "R3", "kind": "router"},
            ],
            "links": [
                {"a": "h1", "b": "R1", "delay": "1ms", **link},
                {"a": "R1", "b": "R2", "delay": "10ms", **link, "schedule": schedule},
                {"a": "R2", "b": "h2", "delay": "1ms", **link},
                {"a": "R1", "b": "R3", "delay": "10ms", **link},
                {"a": "R3", "b": "R2", "delay": "15ms", **link},
            ],
        },
        "flows": [
            {
                "src": "h1",
                "dst": "h2",
                "transport": "udp",
                "app": {"kind": "periodic", "size": "100B", "period": "10ms"},
            }
        ],
        "trace": {"messages": True},
    }


def run(data: dict[str, Any], seed: int = 1) -> ccsim.Result:
    return ccsim.run(from_dict(copy.deepcopy(data)), seed=seed)


def delivered(result: ccsim.Result) -> Any:
    messages = result.messages
    assert messages is not None
    return messages[messages.delivered_s.notna()]


def test_a_rate_that_halves_halves_what_is_delivered_per_second() -> None:
    result = run(saturated([{"at": "2s", "rate": "5Mbps"}]))
    traces = result.traces.set_index("time_s")
    per_second = traces["flow.0.delivered_bytes"].diff()
    # A packet of 1222 payload bytes per 10 000 bits of link rate, within one packet, in the
    # seconds [1 s, 2 s] (before) and [3 s, 4 s] (after; what was on the wire at 2 s arrived
    # by 2.021 s).
    for t, rate in ((2.0, 10e6), (4.0, 5e6)):
        assert abs(per_second[t] - rate / WIRE_BITS * PAYLOAD) <= PAYLOAD, (t, per_second[t])
    assert result.queues.set_index("name").loc["a->b", "rate_bps"] == 5_000_000


def test_a_link_that_goes_down_loses_what_is_on_its_wire_and_delivers_nothing_until_it_is_back() -> None:
    t1, t2 = 2.0005, 3.0
    result = run(saturated([{"at": f"{t1}s", "up": False}, {"at": f"{t2}s", "up": True}]))
    # Packets leave every 1 ms; at t1 one is being sent and the 20 sent in the last 20 ms
    # propagate: delay / transmission time + 1 = 21 are lost.
    flow = result.flows.iloc[0]
    assert flow.link_losses == 21
    assert result.queues.set_index("name").loc["a->b", "link_losses"] == 21
    times = delivered(result).delivered_s
    assert not ((times > t1) & (times < t2 + 21 * MS - 1e-9)).any()
    assert times[times > t1].min() == pytest.approx(t2 + 21 * MS, abs=1e-9)
    assert times[times <= t1].max() == pytest.approx(2.0, abs=1e-9)
    # Nothing is counted twice or missed: every packet sent arrived, was dropped, was lost
    # on the wire or is still on its way (at most a queue of 100 and a wire of 21).
    accounted = flow.packets_received + flow.queue_drops + flow.link_losses
    assert 0 <= flow.packets_sent - accounted <= 100 + 21


def test_traffic_goes_round_a_link_that_is_down_and_comes_back_when_it_is_up() -> None:
    t1, t2 = 1.005, 2.005
    result = run(two_paths([{"at": f"{t1}s", "up": False}, {"at": f"{t2}s", "up": True}]))
    # 128 bytes take 10.24 us a hop at 100 Mbit/s: 3 hops the short way, 4 the long way.
    hop = 128 * 8 / 100e6
    short, long = 12 * MS + 3 * hop, 27 * MS + 4 * hop
    rows = delivered(result)
    for created, delay in zip(rows.created_s, rows.delay_s):
        # Sent while R1 (1 ms from h1) routed round the link, or not.
        expected = long if t1 < created + 1 * MS < t2 else short
        assert delay == pytest.approx(expected, abs=1e-9), created
    assert (abs(rows.delay_s - long) < 1e-9).sum() == 99
    # The datagram sent at 1 s was on the link's wire when it went down.
    assert result.flows.iloc[0].link_losses == 1


def test_the_same_scenario_and_seed_give_the_same_results() -> None:
    data = two_paths(
        [{"at": "1s", "up": False}, {"at": "1.5s", "up": True, "delay": "2ms"}, {"at": "2s", "loss": 0.05}]
    )
    data["flows"].append({"src": "h1", "dst": "h2", "transport": "tcp", "cc": "cubic", "app": "bulk"})
    a, b = run(data, seed=7), run(data, seed=7)
    assert a.flows.equals(b.flows)
    assert a.queues.equals(b.queues)
    assert a.messages is not None and a.messages.equals(b.messages)
    assert a.flows.iloc[1].link_losses > 0


def test_a_scenario_without_a_schedule_compiles_as_before() -> None:
    data = saturated([])
    del data["topology"]["links"][0]["schedule"]
    assert all("schedule" not in link for link in compile_scenario(from_dict(data))["links"])
    config = compile_scenario(from_dict(saturated([{"at": "1s", "rate": "2Mbps", "direction": "ab"}])))
    assert config["links"][0]["schedule"] == [{"at_ns": 1_000_000_000, "rate_bps": 2_000_000, "direction": "ab"}]


def test_a_dumbbells_bottleneck_and_access_links_take_schedules() -> None:
    data: dict[str, Any] = {
        "simulation": {"duration": "2s"},
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {"rate": "10Mbps", "delay": "5ms", "schedule": [{"at": "1s", "rate": "5Mbps"}]},
            "access": {"rate": "100Mbps", "schedule": [{"at": "1.5s", "delay": "3ms"}]},
            "pairs": [{}, {"schedule": [{"at": "0.5s", "loss": 0.01}]}],
        },
        "flows": [{"pair": 0, "cc": "cubic"}, {"pair": 1, "cc": "cubic"}],
    }
    links = compile_scenario(from_dict(data))["links"]
    assert [link["schedule"][0]["at_ns"] for link in links] == [1e9, 1.5e9, 5e8, 1.5e9, 5e8]
    assert run(data).flows.bytes_delivered.min() > 0


BAD = [
    ({"at": "1s", "speed": "1Mbps"}, "topology.links[0].schedule[0].speed", "unknown field"),
    ({"at": "-1s", "up": False}, "topology.links[0].schedule[0].at", "negative"),
    ({"at": "1s", "rate": "0Mbps"}, "topology.links[0].schedule[0].rate", "above 0"),
    ({"at": "5s", "up": False}, "topology.links[0].schedule[0].at", "after the end of the simulation (4s)"),
    ({"at": "1s", "loss": 1.5}, "topology.links[0].schedule[0].loss", "between 0 and 1"),
    ({"at": "1s"}, "topology.links[0].schedule[0]", "changes nothing"),
    ({"at": "1s", "up": "no"}, "topology.links[0].schedule[0].up", "true or false"),
    ({"at": "1s", "direction": "both", "up": False}, "topology.links[0].schedule[0].direction", "'ab' or 'ba'"),
    ({"rate": "1Mbps"}, "topology.links[0].schedule[0].at", "required"),
]


@pytest.mark.parametrize(("change", "key", "message"), BAD, ids=[key.rsplit(".", 1)[-1] + "-" + m for _, key, m in BAD])
def test_a_bad_change_is_a_clean_error_naming_its_key(
    tmp_path: Path, change: dict[str, Any], key: str, message: str
) -> None:
    path = tmp_path / "s.toml"
    path.write_text(to_toml(saturated([change])), encoding="utf-8")
    code, _, err = cli("validate", str(path))
    assert_bad_input(code, err, f"{key}: ", message)


def test_changes_out_of_order_and_on_an_access_link_name_their_keys(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(to_toml(saturated([{"at": "2s", "up": False}, {"at": "1s", "up": True}])), encoding="utf-8")
    code, _, err = cli("validate", str(path))
    assert_bad_input(code, err, "topology.links[0].schedule[1].at: 1s is before the previous change (2s)")
    data: dict[str, Any] = {
        "simulation": {"duration": "2s"},
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {"rate": "10Mbps"},
            "access": {"rate": "100Mbps", "schedule": [{"at": "3s", "up": False}]},
            "pairs": [{}],
        },
    }
    path.write_text(to_toml(data), encoding="utf-8")
    code, _, err = cli("validate", str(path))
    assert_bad_input(code, err, "topology.access.schedule[0].at: 3s is after the end")


def test_memory_bounds_take_the_highest_rate_a_schedule_gives() -> None:
    """The drop/mark log is bounded by what the path can deliver: at the highest rate the
    link takes during the run, not its first one."""
    from ccsim.scenario import limits

    def log_rows(schedule: list[dict[str, Any]]) -> int:
        data = saturated(schedule)
        data["trace"]["events"] = True
        items = limits.estimate(compile_scenario(from_dict(data))).items
        return next(item.rows for item in items if item.field == "trace.events")

    same = log_rows([{"at": "1s", "loss": 0.0}])
    faster = log_rows([{"at": "1s", "rate": "100Mbps"}])
    assert faster - same == pytest.approx(90e6 * 4 / WIRE_BITS, rel=0.01)
