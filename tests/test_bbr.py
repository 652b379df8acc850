"""BBR v1 end to end (`cc = "bbr"`, paced by default): the behaviour its papers report. The
control law (filters, gain cycle, ProbeRTT, recovery) is tested against Linux's tcp_bbr.c in
crates/ccsim-core/src/tcp/cc/bbr/; the delivery-rate samples it reads in
crates/ccsim-core/src/tcp/sender/rate.rs."""

from __future__ import annotations

from typing import Any

import ccsim
import numpy as np

MSS = 1448
BDP_PACKETS = 33  # 10 Mbit/s x 40 ms = 50 kB


def _dumbbell(ccs: list[str], buffer: str, duration: str = "30s", trace: dict[str, Any] | None = None) -> Any:
    """A 10 Mbit/s bottleneck with a DropTail buffer, 1 Gbit/s access links, base RTT 40 ms (a
    BDP of 50 kB, 33 packets of 1 500 B); one bulk flow per algorithm, measured after 5 s."""
    scenario: dict[str, Any] = {
        "simulation": {"duration": duration, "warmup": "5s", "seed": 1},
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {"rate": "10Mbps", "delay": "10ms", "queue": {"kind": "droptail", "limit": buffer}},
            "access": {"rate": "1Gbps"},
            "pairs": [{"delay": "5ms"}] * len(ccs),
        },
        "flows": [{"pair": i, "transport": "tcp", "cc": cc, "app": {"kind": "bulk"}} for i, cc in enumerate(ccs)],
    }
    if trace:
        scenario["trace"] = trace
    return ccsim.run(ccsim.from_dict(scenario))


def test_bbr_keeps_the_link_busy_with_a_small_queue_where_cubic_fills_the_buffer() -> None:
    """Cardwell et al., "BBR: Congestion-Based Congestion Control" (ACM Queue 2016): BBR runs
    at the bottleneck rate with about the BDP in flight, so a deep buffer stays nearly empty;
    a loss-based algorithm fills it. Measured here: BBR 3.8 packets on average (no drop),
    CUBIC 563 of the 1 000."""
    bbr, cubic = (_dumbbell([cc], "1000p") for cc in ("bbr", "cubic"))
    for result in (bbr, cubic):
        assert result.queues.set_index("name").loc["A->B"].utilization > 0.97
    queue = {name: r.queues.set_index("name").loc["A->B"] for name, r in (("bbr", bbr), ("cubic", cubic))}
    assert queue["bbr"].mean_len_pkts < BDP_PACKETS / 2 and queue["bbr"].drops == 0
    assert queue["cubic"].mean_len_pkts > 10 * BDP_PACKETS
    assert bbr.flows.rtt_mean_s[0] < 1.5 * 0.040 < cubic.flows.rtt_mean_s[0] / 5


def test_probe_rtt_visits_come_every_ten_seconds_and_last_two_hundred_milliseconds() -> None:
    """Linux BBR v1: when the min RTT estimate is 10 s old, ProbeRTT holds cwnd at 4 packets
    for max(200 ms, one round trip). The path's RTT never falls below the first minimum, so the
    estimate expires every 10 s exactly (only a strictly lower sample renews it)."""
    result = _dumbbell(["bbr"], "1000p", duration="45s", trace={"interval": "1ms", "cwnd": True})
    t = result.traces.time_s.to_numpy()
    low = t[result.traces["flow.0.cwnd_bytes"].to_numpy() <= 4 * MSS]
    starts = np.concatenate(([low[0]], low[1:][np.diff(low) > 1.0]))
    ends = np.concatenate((low[:-1][np.diff(low) > 1.0], [low[-1]]))
    assert len(starts) == 4, starts  # at about 10, 20, 30 and 40 s
    assert np.allclose(np.diff(starts), 10.0, atol=0.3), starts
    assert 9.5 < starts[0] < 10.5
    # 200 ms, plus the round trip that must end inside it and the time to drain to 4 packets.
    assert ((ends - starts > 0.19) & (ends - starts < 0.35)).all(), ends - starts


def test_bbr_takes_most_of_a_shallow_buffer_and_little_of_a_deep_one_from_cubic() -> None:
    """Hock, Bless and Zitterbart, "Experimental Evaluation of BBR Congestion Control" (ICNP
    2017), and Ware et al., "Modeling BBR's Interactions with Loss-Based Congestion Control"
    (IMC 2019): against CUBIC, BBR v1's share is set by the buffer, most of the link in a
    shallow one, a minority in a deep one. Measured here over 60 s: 96 % at a quarter of the
    BDP, 72 % at one BDP, 17 % at ten."""
    share = {}
    for buffer in ("8p", "330p"):
        result = _dumbbell(["bbr", "cubic"], buffer, duration="60s")
        goodput = result.flows.goodput_bps.to_numpy()
        share[buffer] = goodput[0] / goodput.sum()
        assert goodput.sum() > 0.9 * 10e6
    assert share["8p"] > 0.85
    assert share["330p"] < 0.35
