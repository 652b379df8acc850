"""BBR v3 end to end (`cc = "bbr3"`, paced by default): the behaviour its authors and later
studies report, beside BBR v1 on the same paths. The control law is tested by hand against
draft-ietf-ccwg-bbr-06 and Linux's tcp_bbr.c (v3) in crates/ccsim-core/src/tcp/cc/bbr3/."""

from __future__ import annotations

from typing import Any

import ccsim
import numpy as np

MSS = 1448
BDP_PACKETS = 33  # 10 Mbit/s x 40 ms = 50 kB


def _dumbbell(
    ccs: list[Any],
    buffer: str,
    duration: str = "30s",
    rate: str = "10Mbps",
    trace: dict[str, Any] | None = None,
    queue: dict[str, Any] | None = None,
    transport: Any = "tcp",
    bottleneck_delay: str = "10ms",
    pair_delay: str = "5ms",
) -> Any:
    """A bottleneck of `rate` with a DropTail buffer of `buffer` (or `queue`), 1 Gbit/s access
    links, base RTT 40 ms by default; one bulk flow per entry of `ccs`, measured after 5 s."""
    scenario: dict[str, Any] = {
        "simulation": {"duration": duration, "warmup": "5s", "seed": 1},
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {
                "rate": rate,
                "delay": bottleneck_delay,
                "queue": queue or {"kind": "droptail", "limit": buffer},
            },
            "access": {"rate": "1Gbps"},
            "pairs": [{"delay": pair_delay}] * len(ccs),
        },
        "flows": [{"pair": i, "transport": transport, "cc": cc, "app": {"kind": "bulk"}} for i, cc in enumerate(ccs)],
    }
    if trace:
        scenario["trace"] = trace
    return ccsim.run(ccsim.from_dict(scenario))


def test_bbr3_keeps_losses_near_its_target_in_a_shallow_buffer_where_bbr_v1_loses_a_tenth() -> None:
    """Cardwell et al., "BBR v2: A Model-based Congestion Control" (IETF 104 and 105 ICCRG) and
    "BBRv3" (IETF 117 CCWG): BBR v1 ignores loss and in shallow buffers loses a large share of
    its packets; v2 and v3 bound the loss rate per round trip (2 %) and back off. Five flows of
    one algorithm on 50 Mbit/s, base RTT 40 ms (a BDP of 167 packets), a 40-packet buffer, 30 s.
    Measured: v1 retransmits 10.1 % of its packets, v3 0.55 %, CUBIC 0.15 %; v3 keeps the link
    97 % busy and its flows fair (Jain 0.95)."""
    retransmitted = {}
    for cc in ("bbr", "bbr3"):
        result = _dumbbell([cc] * 5, "40p", rate="50Mbps")
        flows = result.flows
        retransmitted[cc] = flows.retransmissions.sum() / flows.packets_sent.sum()
        if cc == "bbr3":
            assert result.queues.set_index("name").loc["A->B"].utilization > 0.95
            goodput = flows.goodput_bps.to_numpy()
            assert goodput.sum() ** 2 / len(goodput) / (goodput**2).sum() > 0.9
    assert retransmitted["bbr3"] < 0.02
    assert retransmitted["bbr"] > 0.05
    assert retransmitted["bbr"] > 10 * retransmitted["bbr3"]


def test_bbr3_yields_to_added_cubic_flows_in_a_deep_buffer_where_bbr_v1_keeps_a_fixed_share() -> None:
    """Ware et al., "Modeling BBR's Interactions with Loss-Based Congestion Control" (IMC 2019):
    in a deep buffer BBR v1's share against CUBIC is set by its window cap and hardly depends on
    how many CUBIC flows compete. BBR v3 reacts to loss (inflight_hi, inflight_lo) and yields
    more as CUBIC flows are added, as a fair flow would. One BBR flow against 1, 2 and 4 CUBIC
    flows; 10 Mbit/s, base RTT 40 ms, a 165-packet buffer (5 BDP), 60 s. Measured: v1 takes 40,
    34 and 35 %, v3 45, 36 and 23 %, against fair shares of 50, 33 and 20 %. (In a 10-BDP
    buffer both take about 20 % from one CUBIC flow; Sarpkaya et al., IFIP Networking 2025,
    find that the v1 models no longer describe v3.)"""
    share: dict[str, list[float]] = {"bbr": [], "bbr3": []}
    counts = (1, 2, 4)
    for cc in share:
        for n in counts:
            goodput = _dumbbell([cc] + ["cubic"] * n, "165p", duration="60s").flows.goodput_bps.to_numpy()
            assert goodput.sum() > 0.95 * 10e6 * MSS / 1500
            share[cc].append(goodput[0] / goodput.sum())
    fair = [1 / (n + 1) for n in counts]
    # v1: about the same share with four CUBIC flows as with one, far above its fair share.
    assert share["bbr"][2] > 0.8 * share["bbr"][0]
    assert share["bbr"][2] > 1.5 * fair[2]
    # v3: its share falls with the number of CUBIC flows and stays within 30 % of fair.
    assert share["bbr3"][2] < 0.6 * share["bbr3"][0]
    for got, want in zip(share["bbr3"], fair, strict=True):
        assert 0.7 * want < got < 1.3 * want, (share, fair)


def test_bbr3_keeps_a_deep_buffer_nearly_empty_and_probes_rtt_every_five_seconds() -> None:
    """draft-ietf-ccwg-bbr-06 and Linux BBR v3: one flow runs near the bottleneck rate with a
    small queue (no loss to react to), and every 5 s without a lower RTT (ProbeRTTInterval,
    timed from the end of the previous ProbeRTT) holds cwnd at half the BDP for 200 ms and a
    round trip. Measured: 1.8 packets queued on average, 25 at most, none dropped, of a
    1000-packet buffer; ProbeRTT every 5.23-5.24 s, 232-241 ms long."""
    result = _dumbbell(["bbr3"], "1000p", duration="45s", trace={"interval": "1ms", "cwnd": True})
    queue = result.queues.set_index("name").loc["A->B"]
    assert queue.mean_len_pkts < 5 and queue.max_len_pkts < BDP_PACKETS and queue.drops == 0
    assert queue.utilization > 0.92
    t = result.traces.time_s.to_numpy()
    cwnd = result.traces["flow.0.cwnd_bytes"].to_numpy()
    # Half the BDP is 17 packets; outside ProbeRTT the window is about twice the BDP.
    low = t[(cwnd <= 20 * MSS) & (t > 1.0)]
    starts = np.concatenate(([low[0]], low[1:][np.diff(low) > 1.0]))
    ends = np.concatenate((low[:-1][np.diff(low) > 1.0], [low[-1]]))
    assert len(starts) == 8, starts  # at about 5, 10, ..., 42 s
    assert np.allclose(np.diff(starts), 5.24, atol=0.1), starts
    assert 4.9 < starts[0] < 5.5
    # 200 ms, plus the round trip that must end inside it and the time to drain to half.
    assert ((ends - starts > 0.19) & (ends - starts < 0.3)).all(), ends - starts
    assert np.median(cwnd[t > 1.0]) > 1.8 * BDP_PACKETS * MSS


def test_bbr3_with_ecn_keeps_an_l4s_queue_shorter() -> None:
    """Linux BBR v3's ECN response (on paths with shallow-threshold marking and a min RTT up to
    5 ms; `ecn = true` here): ecn_alpha, the EWMA of the CE-marked fraction, cuts inflight_lo
    each marked round and a CE share above 50 % ends a probe. Two flows sending ECT(1) through
    DualPI2's L queue (1 ms marking step), 40 Mbit/s, base RTT 4.3 ms, 20 s. Measured: with
    the response the mean RTT is 8.3 ms (queue 11 packets), without it 11.8 ms (23 packets);
    one-way delay p99 6.2 ms against 14.4 ms, the link 98 % busy."""
    rtt, busy, p99 = {}, {}, {}
    for ecn in (False, True):
        result = _dumbbell(
            [{"kind": "bbr3", "ecn": ecn}] * 2,
            "1000p",
            duration="20s",
            rate="40Mbps",
            queue={"kind": "dualpi2"},
            transport={"kind": "tcp", "ecn": True, "ect1": True},
            bottleneck_delay="1ms",
            pair_delay="0.5ms",
        )
        rtt[ecn] = result.flows.rtt_mean_s.mean()
        p99[ecn] = result.flows.delay_p99_s.max()
        busy[ecn] = result.queues.set_index("name").loc["A->B"].utilization
        assert result.flows.ecn_marks.sum() > 0
    assert rtt[True] < 0.8 * rtt[False]
    assert p99[True] < 0.6 * p99[False]
    assert busy[True] > 0.95


def test_bbr3_state_in_traces_visits_probe_rtt_every_five_seconds_and_cycles_probe_bw() -> None:
    """draft-ietf-ccwg-bbr-06 sec. 4.3.4 (ProbeRTT when the min RTT estimate has not been
    refreshed for ProbeRTTInterval, 5 s, at half the BDP for at least 200 ms) and 4.3.3 (ProbeBW
    cycles DOWN, CRUISE, REFILL, UP), read from the traced state (`flow_vars`): one flow alone,
    base RTT 40 ms, a deep buffer. Its bandwidth estimate is the link's payload rate."""
    result = _dumbbell(
        ["bbr3"],
        "500p",
        duration="17s",
        trace={"interval": "10ms", "flow_vars": ["mode", "max_bw", "min_rtt", "inflight_hi"]},
    )
    tr = result.traces
    mode, t = tr["flow.0.mode"].to_numpy(), tr["time_s"].to_numpy()
    # ProbeRTT (6): entered every 5 s or so (the interval counts from the last min RTT sample
    # that set the estimate), each visit at least 200 ms long.
    starts = t[1:][(mode[1:] == 6) & (mode[:-1] != 6)]
    assert len(starts) >= 2 and np.all(np.diff(starts) > 4.5) and np.all(np.diff(starts) < 6.5), starts
    for s in starts:
        visit = t[(t >= s) & (mode == 6)]
        length = visit[np.argmax(np.diff(np.append(visit, np.inf)) > 0.011)] - s
        assert length >= 0.2 - 0.011, (s, length)
    # Every ProbeBW phase shows up between the visits.
    assert {2, 3, 4, 5} <= set(mode[t > 2].astype(int))
    # The bandwidth estimate: 10 Mbit/s of 1500-byte packets carry 1448 bytes of payload each.
    late = t > 2
    assert np.allclose(tr.loc[late, "flow.0.max_bw_bps"], 10e6 * MSS / 1500, rtol=0.03)
    # The min RTT: 40 ms of propagation and the serialization of a segment and its ACK.
    assert tr["flow.0.min_rtt_s"].dropna().between(0.040, 0.0425).all()
