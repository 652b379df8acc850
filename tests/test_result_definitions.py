"""What the result columns mean, checked against identities that hold whatever the model:
goodput never exceeds what the bottleneck carried, Little's law holds for the bottleneck
once dropped packets' waits are counted, and NewReno without SACK recovers without a
cascade of timeouts."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import ccsim

DATA_CENTER = Path(
    str(resources.files("ccsim.experiments.reproduce") / "scenarios" / "piotrowska" / "data_center.toml")
)
WINDOW_S = 5.0
SHORT = ["simulation.duration=8s", "simulation.warmup=3s"]


def test_goodput_summed_over_flows_never_exceeds_the_payload_the_bottleneck_carried() -> None:
    # 90 flows on the 1 Gbit/s Data Center dumbbell: plenty of data arrives out of order
    # before the window and is released in order inside it.
    r = ccsim.run(DATA_CENTER, overrides=["flows.count=10", *SHORT])
    q = r.queues.set_index("name").loc["A->B"]
    # Payload share of what the link sent in the window (1448 B of every 1500 B packet).
    carried_bps = q["tx_bytes"] * 8 / WINDOW_S * 1448 / 1500
    total = r.flows["goodput_bps"].sum()
    # Bytes that crossed the bottleneck just before the window and arrive inside it are
    # the only excess: one bottleneck-to-receiver delay's worth (well below 1e-4 here).
    assert total <= carried_bps * (1 + 1e-4)
    assert total >= carried_bps * 0.99
    # Data counted when it is delivered in order overstates the same window by 5 %.
    in_order_bps = r.flows["bytes_delivered"].sum() * 8 / WINDOW_S
    assert in_order_bps > carried_bps * 1.02


def test_littles_law_holds_at_a_head_dropping_queue_once_dropped_packets_waits_count() -> None:
    r = ccsim.run(
        DATA_CENTER,
        overrides=[
            "flows.count=10",
            *SHORT,
            "topology.bottleneck.queue.kind=codel",
            "topology.bottleneck.queue.target=2ms",
        ],
    )
    q = r.queues.set_index("name").loc["A->B"]
    assert q["kind"] == "codel" and q["drops"] > 1000 and q["mean_drop_sojourn_s"] > 0
    # L = (sum of the waits of every packet that entered) / window.
    waits = q["departures"] * q["mean_sojourn_s"] + q["drops"] * q["mean_drop_sojourn_s"]
    assert abs(waits / WINDOW_S / q["mean_len_pkts"] - 1) < 5e-4
    # Departing packets alone miss the waits of those CoDel dropped from the head.
    departing = q["departures"] * q["mean_sojourn_s"] / WINDOW_S
    assert abs(departing / q["mean_len_pkts"] - 1) > 2e-3


NEWRENO_NO_SACK = """
description = "one NewReno flow without SACK on a 10 Mbit/s path that holds about 135 packets"
[simulation]
duration = "30s"
seed = 1
[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "10ms", queue = { kind = "droptail", limit = "100p" } }
access = { rate = "100Mbps", delay = "5ms" }
pairs = [ { delay = "5ms" } ]
[[flows]]
pair = 0
transport = { kind = "tcp", sack = false }
cc = "newreno"
app = { kind = "bulk" }
"""


def test_newreno_without_sack_recovers_from_slow_start_without_a_cascade_of_timeouts(tmp_path: Path) -> None:
    path = tmp_path / "newreno.toml"
    path.write_text(NEWRENO_NO_SACK)
    flow = ccsim.run(path).flows.iloc[0]
    sacked = ccsim.run(path, overrides=["flows[0].transport.sack=true"]).flows.iloc[0]
    # Slow start overshoots by about a window (some 130 drops); NewReno's impatient timer
    # (RFC 6582 §3.2 step 5) then times out once, and slow start to the halved window may
    # overshoot once more. A timeout that set ssthresh from a FlightSize grown during the
    # one-hole-per-round-trip recovery sent slow start far past the path again and again.
    assert flow["timeouts"] <= 2
    assert flow["queue_drops"] < 2 * sacked["queue_drops"]
    # Without SACK a timeout resends data the receiver holds (go-back-N), so retransmissions
    # exceed drops, but by a bounded factor.
    assert flow["retransmissions"] < 2.5 * flow["queue_drops"]
    assert flow["goodput_bps"] > 0.9 * sacked["goodput_bps"]
