"""TCP pacing (`transport = { kind = "tcp", pacing = true }`) end to end. The control law
(Linux's default rate, the spacing of segments) is tested in the sender (tcp/sender/mod.rs)."""

from __future__ import annotations

import ccsim


def _dumbbell(pacing: bool, flows: int) -> dict:
    """`flows` NewReno flows through a 10 Mbit/s, 100-packet DropTail bottleneck from hosts on
    1 Gbit/s access links (base RTT 40 ms), measured after their first round trips."""
    return {
        "simulation": {"duration": "10s", "warmup": "0.2s", "seed": 1},
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {"rate": "10Mbps", "delay": "10ms", "queue": {"kind": "droptail", "limit": "100p"}},
            "access": {"rate": "1Gbps"},
            "pairs": [{"delay": "5ms"}] * flows,
        },
        "flows": [
            {"pair": i, "transport": {"kind": "tcp", "pacing": pacing}, "cc": "newreno", "app": {"kind": "bulk"}}
            for i in range(flows)
        ],
    }


def test_a_paced_sender_sends_no_bursts_and_keeps_its_throughput() -> None:
    """Unpaced, each ACK releases segments back to back at the access link's rate, so they
    queue behind each other at the sender's own link; paced, they leave at most at 2 x
    cwnd/srtt, far below 1 Gbit/s, and that queue stays empty (up to a segment that meets a
    retransmission). The bottleneck, where the ACK clock already spaces a single path's
    packets, sees nearly the same thing: Aggarwal, Savage and Anderson ("Understanding the
    Performance of TCP Pacing", IEEE INFOCOM 2000) report pacing's gain for long flows to be
    small or negative; here the goodput is the same to 0.1 %."""
    for flows in (1, 4):
        unpaced, paced = (ccsim.run(ccsim.from_dict(_dumbbell(p, flows))) for p in (False, True))
        host = {name: r.queues.set_index("name").loc["s0->A"] for name, r in (("unpaced", unpaced), ("paced", paced))}
        assert host["unpaced"].max_len_pkts >= 3, flows
        assert host["paced"].max_len_pkts <= 1, flows
        assert host["paced"].mean_len_pkts < host["unpaced"].mean_len_pkts / 100, flows
        goodput = [r.flows.goodput_bps.sum() for r in (unpaced, paced)]
        assert abs(goodput[1] - goodput[0]) <= 1e-3 * goodput[0], (flows, goodput)
