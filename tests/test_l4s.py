"""L4S through DualPI2 (and FQ-CoDel's `ce_threshold`) end to end: a scalable flow sending ECT(1)
(TCP Prague with Accurate ECN, or DCTCP with `transport = { kind = "tcp", ect1 = true }`, the L4S
team's earlier stand-in) beside a classic CUBIC flow. DualPI2's control law is tested in
crates/ccsim-core/src/qdisc/dualpi2.rs, FQ-CoDel's threshold in qdisc/fq_codel.rs, Prague's in
tcp/cc/prague.rs and Accurate ECN's receiver in tcp/receiver.rs."""

from __future__ import annotations

from typing import Any

import ccsim
import pytest

BASE_ONE_WAY_S = 0.010  # 2.5 + 5 + 2.5 ms of propagation


def _run(queue: str | dict[str, Any], l4s: Any = None) -> Any:
    """A 40 Mbit/s bottleneck, 20 ms base RTT, one flow of each kind, measured over 20 s."""
    queue = queue if isinstance(queue, dict) else {"kind": queue}
    l4s = l4s or {"transport": {"kind": "tcp", "ect1": True}, "cc": "dctcp"}
    scenario = {
        "simulation": {"duration": "30s", "warmup": "10s", "seed": 1},
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {"rate": "40Mbps", "delay": "5ms", "queue": queue},
            "access": {"rate": "1Gbps"},
            "pairs": [{"delay": "2.5ms"}] * 2,
        },
        "flows": [
            {"pair": 0, **l4s, "app": "bulk", "name": "l4s"},
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


def test_prague_through_dualpi2_keeps_its_queue_under_a_millisecond_beside_cubic() -> None:
    """TCP Prague (ECT(1), Accurate ECN, paced; all implied by cc = "prague") in DualPI2's L
    queue: RFC 9330 §4 and the L4S team's measurements (De Schepper et al., CoNEXT 2016;
    draft-briscoe-iccrg-prague-congestion-control-04 §1) report sub-millisecond mean queueing
    and about a millisecond at the 99th percentile, with the classic flow near the PI2 target.
    Measured here: p50 0.56 ms, p99 0.92 ms of queueing for Prague and 15.2 ms (p50) for
    CUBIC, at 25.2 and 13.4 Mbit/s; Prague loses no packet, CUBIC 29."""
    dual = _run("dualpi2", {"transport": "tcp", "cc": "prague"})
    prague, cubic = dual.loc["l4s"], dual.loc["classic"]
    assert prague.delay_p99_s - BASE_ONE_WAY_S < 0.0015, prague.delay_p99_s
    assert 0.010 < cubic.delay_p50_s - BASE_ONE_WAY_S < 0.025
    assert prague.ecn_marks > 500 and prague.queue_drops == 0 and prague.retransmissions == 0
    assert 1 / 3 < prague.goodput_bps / cubic.goodput_bps < 3
    assert dual.goodput_bps.sum() > 0.9 * 40e6
    # The same flow in a single PIE queue (which drops rather than marks ECT(1) packets)
    # waits as long as CUBIC.
    pie = _run("pie", {"transport": "tcp", "cc": "prague"})
    assert pie.loc["l4s"].delay_p50_s - BASE_ONE_WAY_S > 0.010


def test_fq_codel_ce_threshold_holds_prague_near_a_millisecond_and_leaves_cubic_to_codel() -> None:
    """Linux fq_codel's L4S setting (`ce_threshold 1ms ce_threshold_selector 0x1/0x3`, here
    `ce_threshold = "1ms"`, `ce_threshold_ect1 = true`): Prague's ECT(1) packets are marked as
    soon as they have waited more than 1 ms, while CUBIC (Not-ECT) gets plain CoDel and its
    5 ms target, each flow in its own queue. Measured here: Prague's queueing delay p50
    0.73 ms, p99 2.5 ms, 6143 marks, no loss; CUBIC's p50 3.8 ms, p99 8.6 ms, 29 drops; 19.0
    and 19.5 Mbit/s. Through plain FQ-CoDel (CoDel's own marks only) Prague waits 9.2 ms (p50)."""
    prague = {"transport": "tcp", "cc": "prague"}
    l4s = _run({"kind": "fq_codel", "ce_threshold": "1ms", "ce_threshold_ect1": True}, prague)
    queueing = {name: l4s.loc[name].delay_p99_s - BASE_ONE_WAY_S for name in ("l4s", "classic")}
    assert queueing["l4s"] < 0.004, queueing
    assert l4s.loc["l4s"].delay_p50_s - BASE_ONE_WAY_S < 0.0015
    assert 0.002 < l4s.loc["classic"].delay_p50_s - BASE_ONE_WAY_S < 0.008
    assert 0.005 < queueing["classic"] < 0.015, queueing
    assert l4s.loc["l4s"].ecn_marks > 1000 and l4s.loc["l4s"].queue_drops == 0
    assert l4s.loc["classic"].ecn_marks == 0 and l4s.loc["classic"].queue_drops > 0
    assert 0.8 < l4s.loc["l4s"].goodput_bps / l4s.loc["classic"].goodput_bps < 1.25
    assert l4s.goodput_bps.sum() > 0.9 * 40e6
    # Without the threshold CoDel marks Prague only once it has sat above 5 ms for 100 ms.
    plain = _run("fq_codel", prague)
    assert plain.loc["l4s"].delay_p50_s - BASE_ONE_WAY_S > 0.005


def test_accurate_ecn_feeds_back_every_ce_mark_to_the_sender() -> None:
    """RFC 9768: a sender reading the ACE counters of its ACKs learns of every CE-marked packet
    the receiver got. A Python congestion control asking for Accurate ECN sums the counts it
    is given; the total equals the marks the bottleneck put on the flow's packets."""
    seen = []

    @ccsim.congestion_control("accecn_probe")
    class Probe:
        needs_ecn = True
        needs_ect1 = True
        ecn_feedback = "accurate"

        def on_ack_received(self, s: Any, ack: Any) -> None:
            seen.append(ack.ce_packets)

        def on_ack(self, s: Any, ack: Any) -> None:
            s.cwnd += s.mss * ack.acked_bytes // s.cwnd

    scenario = {
        "simulation": {"duration": "10s", "seed": 3},
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {"rate": "20Mbps", "delay": "5ms", "queue": {"kind": "dualpi2"}},
            "access": {"rate": "1Gbps"},
            "pairs": [{"delay": "2.5ms"}],
        },
        "flows": [{"pair": 0, "transport": "tcp", "cc": "accecn_probe", "app": "bulk"}],
    }
    flows = ccsim.run(ccsim.from_dict(scenario)).flows
    assert flows.ecn_marks.iloc[0] > 100
    # Marks on the last packets may still be on their way back when the run ends.
    assert flows.ecn_marks.iloc[0] - 3 <= sum(seen) <= flows.ecn_marks.iloc[0]
    assert max(seen) <= 3  # increment-triggered ACKs: the 3-bit counter never wraps
