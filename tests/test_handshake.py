"""TCP connections that open and close (`transport = { kind = "tcp", handshake = true }`): the
flows table's `connect_s`, `fct_s`, `syn_retransmissions` and `connect_failed` against times
worked out by hand, and runs without a handshake unchanged."""

from __future__ import annotations

import math
from typing import Any

import ccsim
import numpy as np
import pandas as pd
import pytest

# The path: host -- A == B -- host, every link 100 Mbit/s, 5 ms on each access link and 10 ms
# on the bottleneck: 20 ms one way, three hops of serialization.
RATE = 100e6
ONE_WAY = 0.020
HOPS = 3
MSS = 1448


def ser(size: int, rate: float = RATE) -> float:
    """Serialization time of a `size`-byte packet (s)."""
    return size * 8 / rate


# On the wire: a SYN or SYN-ACK (52 bytes of headers with timestamps, 8 more of SYN options), a
# pure ACK, a full segment.
SYN, PURE_ACK, SEGMENT = 60, 52, MSS + 52


def run(transport: dict[str, Any], app: dict[str, Any], **kw: Any) -> ccsim.Result:
    """One flow on pair 0 (more flows in `extra`); `pairs`, `queue`, `loss`, `duration` tune the path."""
    flows = [
        {
            "pair": 0,
            "transport": {"kind": "tcp", **transport},
            "cc": "newreno",
            "app": app,
            "start": kw.get("start", "0s"),
        }
    ]
    flows += kw.get("extra", [])
    bottleneck: dict[str, Any] = {"rate": "100Mbps", "delay": "10ms", "loss": kw.get("loss", 0.0)}
    if "queue" in kw:
        bottleneck["queue"] = kw["queue"]
    scenario = ccsim.Scenario(
        simulation={"duration": kw.get("duration", "5s")},
        topology={
            "kind": "dumbbell",
            "bottleneck": bottleneck,
            "access": {"rate": "100Mbps", "delay": "5ms"},
            "pairs": kw.get("pairs", [{}]),
        },
        flows=flows,
    )
    return ccsim.run(scenario)


def transfer(segments: int) -> dict[str, Any]:
    return {"kind": "transfer", "size": f"{segments * MSS}B"}


def handshake_rtt() -> float:
    """SYN there and SYN-ACK back: both 60 bytes, three hops each way."""
    return 2 * (HOPS * ser(SYN) + ONE_WAY)


def test_connect_time_is_one_round_trip_of_the_syn_and_the_syn_ack() -> None:
    flow = run({"handshake": True}, transfer(5)).flows.iloc[0]
    assert flow.connect_s == pytest.approx(handshake_rtt(), abs=1e-9)
    assert (flow.syn_retransmissions, flow.connect_failed) == (0, False)
    # The SYN-ACK gave the first RTT sample, the smallest: a 60-byte round trip.
    assert flow.rtt_min_s == pytest.approx(handshake_rtt(), abs=1e-9)


def by_hand_fct(handshake: bool) -> float:
    """30 segments from slow start with an initial window of 10 and delayed ACKs every second
    segment: round 1 sends 10 segments; each of its 5 ACKs (for 2 segments) raises cwnd by 2
    (RFC 5681 §3.1 with RFC 3465's L = 2) and so releases 4 segments, faster than the first
    link sends them, which is then busy until the 20 segments of round 2 (11..30) are out.
    With a handshake everything starts after the SYN-ACK, and the handshake's pure ACK goes
    first on the first link."""
    start = handshake_rtt() + ser(PURE_ACK) if handshake else 0.0

    def arrival(t0: float, k: int) -> float:
        # Segment k (1-based) of a back-to-back train sent from t0 reaches the receiver after k
        # segment times on the first link, the other hops' and the propagation.
        return t0 + (k + HOPS - 1) * ser(SEGMENT) + ONE_WAY

    first_ack_at_sender = arrival(start, 2) + HOPS * ser(PURE_ACK) + ONE_WAY
    return arrival(first_ack_at_sender, 20)


@pytest.mark.parametrize("handshake", [False, True])
def test_flow_completion_time_of_a_transfer_on_an_empty_path(handshake: bool) -> None:
    flow = run({"handshake": handshake}, transfer(30)).flows.iloc[0]
    assert flow.bytes_delivered == 30 * MSS
    assert flow.fct_s == pytest.approx(by_hand_fct(handshake), abs=1e-9)
    if handshake:
        # One round trip more than without, plus the pure ACK's 4 us on the first link.
        assert flow.fct_s - by_hand_fct(False) == pytest.approx(handshake_rtt() + ser(PURE_ACK), abs=1e-9)
    # 30 data packets each way's worth: the SYN, ACKs and FIN are not data.
    assert (flow.packets_sent, flow.packets_received) == (30, 30)


def test_a_syn_dropped_by_a_full_queue_is_sent_again_after_one_second() -> None:
    # Two 1500-byte UDP datagrams from pair 1 (1 Gbit/s access) reach router A at 12 and 24 us
    # (plus 5 ms): the first is on the bottleneck for 120 us, the second fills the 1-packet
    # queue. The SYN, leaving at 30 us, reaches A at 34.8 us (plus 5 ms): dropped. Its
    # retransmission 1 s later (RFC 6298 §2.1) finds the path empty.
    udp = {"pair": 1, "transport": "udp", "app": {"kind": "transfer", "size": "1472B"}, "start": "0s", "count": 2}
    result = run(
        {"handshake": True},
        transfer(5),
        start="30us",
        queue={"kind": "droptail", "limit": "1p"},
        pairs=[{}, {"rate": "1Gbps"}],
        extra=[udp],
    )
    flow = result.flows.iloc[0]
    assert flow.syn_retransmissions == 1
    assert flow.connect_s == pytest.approx(1.0 + handshake_rtt(), abs=1e-9)
    assert flow.bytes_delivered == 5 * MSS
    assert result.queues.set_index("name").loc["A->B", "drops"] == 1


def test_a_syn_that_never_gets_through_is_given_up_after_six_retransmissions() -> None:
    # Every packet on the bottleneck is lost: SYNs at 0, 1, 3, 7, 15, 31, 63 s, given up at
    # 127 s (Linux tcp_syn_retries = 6) when the RTO may reach 64 s.
    flow = run({"handshake": True, "max_rto": "120s"}, transfer(5), loss=1.0, duration="130s").flows.iloc[0]
    assert (flow.syn_retransmissions, flow.connect_failed) == (6, True)
    assert math.isnan(flow.connect_s) and math.isnan(flow.fct_s)
    assert flow.packets_sent == 0
    # Before 127 s the attempt is still going.
    flow = run({"handshake": True, "max_rto": "120s"}, transfer(5), loss=1.0, duration="126s").flows.iloc[0]
    assert (flow.syn_retransmissions, flow.connect_failed) == (6, False)


def test_a_bulk_flow_connects_and_never_completes() -> None:
    flow = run({"handshake": True}, {"kind": "bulk"}, duration="2s").flows.iloc[0]
    assert flow.connect_s == pytest.approx(handshake_rtt(), abs=1e-9)
    assert math.isnan(flow.fct_s)


def test_without_a_handshake_the_columns_are_empty_and_the_results_unchanged() -> None:
    # `handshake = false` is the default: the same run to the bit; the new columns are NaN, 0
    # and false (the engine leaves them out of its rows: results.rs), fct_s is a transfer's.
    default = run({}, transfer(30))
    explicit = run({"handshake": False}, transfer(30))
    pd.testing.assert_frame_equal(default.flows, explicit.flows)
    pd.testing.assert_frame_equal(default.queues, explicit.queues)
    flows = run({}, {"kind": "bulk"}, duration="1s").flows
    assert flows.connect_s.dtype == np.float64 and flows.connect_s.isna().all() and flows.fct_s.isna().all()
    assert (flows.syn_retransmissions == 0).all() and not flows.connect_failed.any()
    assert flows.syn_retransmissions.dtype == np.int64 and flows.connect_failed.dtype == bool
    # The engine's own rows leave the columns out when they have nothing to say.
    raw = run({}, {"kind": "bulk"}, duration="1s").raw["flows"][0]
    assert not {"connect_s", "fct_s", "syn_retransmissions", "connect_failed"} & set(raw)
