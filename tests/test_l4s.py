"""L4S through DualPI2 end to end: a scalable flow sending ECT(1) (DCTCP here, the L4S team's
stand-in until TCP Prague exists; `transport = { kind = "tcp", ect1 = true }`) beside a
classic CUBIC flow. DualPI2's control law is tested in crates/ccsim-core/src/qdisc/dualpi2.rs."""

from __future__ import annotations

from typing import Any

import ccsim
import pytest

BASE_ONE_WAY_S = 0.010  # 2.5 + 5 + 2.5 ms of propagation


def _run(queue: str) -> Any:
    """A 40 Mbit/s bottleneck, 20 ms base RTT, one flow of each kind, measured over 20 s."""
    scenario = {
        "simulation": {"duration": "30s", "warmup": "10s", "seed": 1},
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {"rate": "40Mbps", "delay": "5ms", "queue": {"kind": queue}},
            "access": {"rate": "1Gbps"},
            "pairs": [{"delay": "2.5ms"}] * 2,
        },
        "flows": [
            {"pair": 0, "transport": {"kind": "tcp", "ect1": True}, "cc": "dctcp", "app": "bulk", "name": "l4s"},
            {"pair": 1, "transport": "tcp", "cc": "cubic", "app": "bulk", "name": "classic"},
        ],
    }
    return ccsim.run(ccsim.from_dict(scenario)).flows.set_index("name")


def test_dualpi2_gives_the_l4s_flow_about_a_millisecond_and_the_classic_one_its_target() -> None:
    """RFC 9332 §1 and De Schepper et al. ("PI2: A Linearized AQM for both Classic and Scalable
    TCP", CoNEXT 2016): the L queue holds about a millisecond (its 1 ms marking step) while the
    classic queue sits near the PI target (15 ms), and the coupling keeps the two flows' rates
    of the same order. Measured here: queueing delay p50 0.65 ms and p99 1.5 ms for the L4S
    flow, p50 16.6 ms for CUBIC; 24.5 and 14.1 Mbit/s. Through a single PIE queue both wait
    about 16 ms."""
    dual, pie = _run("dualpi2"), _run("pie")
    queueing = {name: dual.loc[name].delay_p99_s - BASE_ONE_WAY_S for name in ("l4s", "classic")}
    assert queueing["l4s"] < 0.003, queueing
    assert 0.010 < dual.loc["classic"].delay_p50_s - BASE_ONE_WAY_S < 0.025
    assert dual.loc["l4s"].ecn_marks > 0 and dual.loc["l4s"].queue_drops == 0
    ratio = dual.loc["l4s"].goodput_bps / dual.loc["classic"].goodput_bps
    assert 1 / 3 < ratio < 3, ratio
    assert dual.goodput_bps.sum() > 0.9 * 40e6
    # One queue for both: the scalable flow waits as long as the classic one.
    assert pie.loc["l4s"].delay_p50_s - BASE_ONE_WAY_S > 0.010


def test_ect1_without_ecn_is_refused_naming_the_key() -> None:
    scenario = {
        "simulation": {"duration": "1s"},
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {"rate": "10Mbps", "delay": "5ms"},
            "access": {"rate": "100Mbps"},
            "pairs": [{}],
        },
        "flows": [{"pair": 0, "transport": {"kind": "tcp", "ect1": True}, "cc": "newreno", "app": "bulk"}],
    }
    with pytest.raises(ccsim.ScenarioError) as info:
        ccsim.from_dict(scenario)
    assert "flows[0].transport.ect1" in str(info.value) and "ecn = true" in str(info.value)
