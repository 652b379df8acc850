"""Ware, Mukerjee, Seshan, Sherry, "Modeling BBR's Interactions with Loss-Based Congestion
Control", ACM IMC 2019: one BBR flow against CUBIC on the paper's 40 ms x 10 Mbit/s network,
BBR's share of the goodput against the buffer size (1/2 to 64 BDP; the paper's Figures 2(b)
and 8(a)) next to the share the paper's model predicts (its equations 9 to 11), against one
and several CUBIC flows (the model's claim that the share does not depend on their number),
from ``scenarios/papers/ware-bbr/dumbbell.toml``.

BBR alone, on the same network with a deep (16 BDP) buffer: one flow keeps only a small queue
and enters ProbeRTT every 10 s, holding 4 packets for at least 200 ms
(draft-cardwell-iccrg-bbr-congestion-control-00 and Linux tcp_bbr.c); two flows become
window-limited at their 2 BDP in-flight cap and keep a standing queue of about one BDP (Hock,
Bless, Zitterbart, "Experimental Evaluation of BBR Congestion Control", IEEE ICNP 2017).

BBR is ccsim's BBR v1 (draft-cardwell-iccrg-bbr-congestion-control-00, Linux tcp_bbr.c), the
version the paper measured; CUBIC has the ``linux`` profile.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from . import Artifacts, Paper, Run, load_scenario

PAPER_DIR = "ware-bbr"
QUEUE = "A->B"
RATE_BPS = 10e6
BASE_RTT_S = 0.040
PACKET_B = 1500
BDP_B = RATE_BPS * BASE_RTT_S / 8
"""50 000 B: the bandwidth-delay product of the paper's 40 ms x 10 Mbit/s network."""

BUFFERS_FULL = [0.5, 1, 2, 4, 8, 16, 32, 64]
BUFFERS_QUICK = [0.5, 2, 16]
CUBICS_FULL = [1, 2, 4]
CUBICS_QUICK = [1, 4]
# Buffers of the runs with several CUBIC flows (every buffer of the sweep in the full form).
MULTI_BUFFERS_QUICK = [2]

# (duration, warm-up): deep buffers converge slowly (the paper's Figure 2(a): minutes), so the
# full runs last 20 minutes and measure the last 10; the quick ones measure 3 of 5 minutes.
TIMING_FULL = ("1200s", "600s")
TIMING_QUICK = ("300s", "120s")

ALONE_BUFFER_BDP = 16
ALONE_DURATION = "62s"
ALONE_WARMUP = "10s"
ALONE_INTERVAL_S = 0.01
PROBE_RTT_CWND_PKTS = 4
PROBE_RTT_INTERVAL_S = 10.0
PROBE_RTT_TIME_S = 0.2


def model_share(buffer_bdp: float, n_bbr: int = 1) -> float:
    """BBR's share of the link by the paper's model (Ware et al. 2019, equations 9-11): the
    loss-based flows' share p = 1/2 - 1/(2X) - 4N/q (0 when negative), q the buffer in packets,
    X = q / BDP, N the number of BBR flows; BBR gets (1 - p) of the link while it is not in
    ProbeRTT, which takes (q/c + 200 ms + l) every 10 s (c the link in packets/s, l the base
    RTT). The number of loss-based flows does not enter."""
    c = RATE_BPS / (8 * PACKET_B)
    q = buffer_bdp * c * BASE_RTT_S
    p = max(0.0, 0.5 - 1 / (2 * buffer_bdp) - 4 * n_bbr / q)
    probe_fraction = (q / c + PROBE_RTT_TIME_S + BASE_RTT_S) / PROBE_RTT_INTERVAL_S
    return (1 - p) * (1 - probe_fraction)


def _buffer(bdp: float) -> str:
    return f"{round(bdp * BDP_B)}B"


def scenario(buffer_bdp: float, cubics: int, quick: bool) -> dict[str, Any]:
    """One BBR flow and ``cubics`` CUBIC flows (all from pair 1) over a buffer of ``buffer_bdp``."""
    data = load_scenario(PAPER_DIR, "dumbbell.toml")
    data["topology"]["bottleneck"]["queue"]["limit"] = _buffer(buffer_bdp)
    data["simulation"]["duration"], data["simulation"]["warmup"] = TIMING_QUICK if quick else TIMING_FULL
    bbr, cubic = data["flows"]
    data["flows"] = [bbr] + [{**copy.deepcopy(cubic), "name": f"cubic{i}"} for i in range(cubics)]
    return data


def alone_scenario(flows: int) -> dict[str, Any]:
    """``flows`` BBR flows (the second starting 1 s after the first) over a 16 BDP buffer, with
    BBR's state traced every 10 ms."""
    data = load_scenario(PAPER_DIR, "dumbbell.toml")
    data["topology"]["bottleneck"]["queue"]["limit"] = _buffer(ALONE_BUFFER_BDP)
    data["simulation"]["duration"] = ALONE_DURATION
    data["simulation"]["warmup"] = ALONE_WARMUP
    bbr = data["flows"][0]
    data["flows"] = [{**copy.deepcopy(bbr), "name": f"bbr{i}", "pair": i, "start": f"{i}s"} for i in range(flows)]
    data["trace"] = {
        "interval": f"{ALONE_INTERVAL_S * 1e3:g}ms",
        "queues": [QUEUE],
        "flow_vars": ["inflight", "mode", "min_rtt"],
    }
    return data


def _key(buffer_bdp: float, cubics: int) -> str:
    return f"x{buffer_bdp:g}-cubic{cubics}"


def _grid(quick: bool) -> list[tuple[float, int]]:
    buffers = BUFFERS_QUICK if quick else BUFFERS_FULL
    grid = [(x, 1) for x in buffers]
    for n in CUBICS_QUICK if quick else CUBICS_FULL:
        if n > 1:
            grid += [(x, n) for x in (MULTI_BUFFERS_QUICK if quick else buffers)]
    return grid


def runs(quick: bool) -> list[Run]:
    out = [Run(_key(x, n), scenario(x, n, quick)) for x, n in _grid(quick)]
    out += [Run(f"alone-bbr{n}", alone_scenario(n)) for n in (1, 2)]
    return out


# ----- measures ------------------------------------------------------------------------------


def share_row(r: Any, buffer_bdp: float, cubics: int) -> dict[str, Any]:
    """BBR's share of the goodput of one run, with the queue's state."""
    f = r.flows.set_index("name")
    total = float(f.goodput_bps.sum())
    bbr = float(f.goodput_bps["bbr"])
    q = r.queues.set_index("name").loc[QUEUE]
    return {
        "buffer_bdp": buffer_bdp,
        "buffer_pkts": buffer_bdp * BDP_B / PACKET_B,
        "cubic_flows": cubics,
        "bbr_share": bbr / total,
        "model_share": model_share(buffer_bdp),
        "bbr_mbps": bbr / 1e6,
        "cubic_mbps": (total - bbr) / 1e6,
        "utilization": total / RATE_BPS,
        "mean_queue_bdp": float(q["mean_len_bytes"]) / BDP_B,
        "mean_sojourn_ms": float(q["mean_sojourn_s"]) * 1e3,
        "drops": int(q["drops"]),
        "bbr_retransmissions": int(f.retransmissions["bbr"]),
        "cubic_retransmissions": int(f.retransmissions.drop("bbr").sum()),
        "cubic_timeouts": int(f.timeouts.drop("bbr").sum()),
    }


def probe_rtt_visits(r: Any, flow: int) -> pd.DataFrame:
    """Every ProbeRTT visit of BBR flow ``flow`` in the trace: its start (s), how long the mode
    lasted (s), how long the window stayed at 4 packets or below, and the gap to the previous
    visit's start."""
    t = r.traces
    time = t["time_s"].to_numpy()
    mode = t[f"flow.{flow}.mode"].to_numpy()
    low = t[f"flow.{flow}.cwnd_bytes"].to_numpy() <= PROBE_RTT_CWND_PKTS * PACKET_B
    inside = mode == 3
    edges = np.flatnonzero(np.diff(inside.astype(int)))
    starts = [i + 1 for i in edges if inside[i + 1]]
    rows = []
    for s in starts:
        e = s
        while e < len(inside) and inside[e]:
            e += 1
        if e >= len(inside):
            break  # still in ProbeRTT when the run ends
        rows.append(
            {
                "start_s": float(time[s]),
                "probe_rtt_s": float(time[e] - time[s]),
                "cwnd_4_pkts_s": float(low[s:e].sum() * ALONE_INTERVAL_S),
            }
        )
    frame = pd.DataFrame(rows, columns=["start_s", "probe_rtt_s", "cwnd_4_pkts_s"])
    frame["interval_s"] = frame["start_s"].diff()
    return frame


def alone_row(r: Any, flows: int) -> dict[str, Any]:
    """Queue, in-flight data and ProbeRTT visits of the BBR-alone run with ``flows`` flows."""
    q = r.queues.set_index("name").loc[QUEUE]
    t = r.traces[r.traces["time_s"] >= float(r.raw["warmup_s"])]
    inflight = sum(t[f"flow.{i}.inflight_bytes"] for i in range(flows))
    visits = pd.concat([probe_rtt_visits(r, i) for i in range(flows)], ignore_index=True)
    return {
        "bbr_flows": flows,
        "buffer_bdp": ALONE_BUFFER_BDP,
        "mean_queue_bdp": float(q["mean_len_bytes"]) / BDP_B,
        "mean_sojourn_ms": float(q["mean_sojourn_s"]) * 1e3,
        "mean_inflight_bdp": float(inflight.mean()) / BDP_B,
        "utilization": float(r.flows.goodput_bps.sum()) / RATE_BPS,
        "drops": int(q["drops"]),
        "probe_rtt_visits": len(visits),
        "probe_rtt_interval_s": float(visits["interval_s"].mean()),
        "cwnd_4_pkts_min_s": float(visits["cwnd_4_pkts_s"].min()) if len(visits) else float("nan"),
        "probe_rtt_mean_s": float(visits["probe_rtt_s"].mean()) if len(visits) else float("nan"),
    }


# ----- tables and figures ----------------------------------------------------------------------


def _fig_share(table: pd.DataFrame) -> Any:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    xs = np.geomspace(min(table.buffer_bdp), max(table.buffer_bdp), 200)
    ax.plot(xs, [model_share(x) for x in xs], "k--", lw=1, label="model of Ware et al. (eqs. 9-11)")
    markers = {1: "o", 2: "s", 4: "^"}
    for n, part in table.groupby("cubic_flows"):
        label = f"ccsim, 1 BBR vs {n} CUBIC"
        ax.plot(part.buffer_bdp, part.bbr_share, markers.get(int(n), "x") + "-", label=label)
    ax.axhline(0.5, color="grey", lw=0.6)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("bottleneck buffer (BDP of 40 ms x 10 Mbit/s)")
    ax.set_ylabel("BBR's share of the goodput")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def _fig_alone(results: Mapping[str, Any]) -> Any:
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 1, figsize=(9, 5.5), sharex=True)
    for ax, flows in zip(axes, (1, 2)):
        r = results[f"alone-bbr{flows}"]
        t = r.traces
        for i in range(flows):
            ax.plot(t.time_s, t[f"flow.{i}.cwnd_bytes"] / PACKET_B, lw=0.7, label=f"cwnd, flow {i}")
        ax.plot(t.time_s, t[f"queue.{QUEUE}.len_bytes"] / PACKET_B, lw=0.7, color="k", label="queue")
        ax.axhline(BDP_B / PACKET_B, color="grey", ls="--", lw=0.8, label="1 BDP")
        ax.set_ylabel("packets")
        ax.set_yscale("symlog", linthresh=10)
        ax.set_title(f"{flows} BBR flow{'s' if flows > 1 else ''} alone, 16 BDP buffer", fontsize=9, loc="left")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper right")
    axes[-1].set_xlabel("time (s)")
    return fig


def analyze(results: Mapping[str, Any], out: Artifacts, quick: bool) -> None:
    rows = [share_row(results[_key(x, n)], x, n) for x, n in _grid(quick)]
    table = pd.DataFrame(rows)
    duration, warmup = TIMING_QUICK if quick else TIMING_FULL
    one = table[table.cubic_flows == 1]

    out.section("Figures 2(b) and 8(a): BBR's share against the buffer size (1 BBR vs 1 CUBIC)")
    out.note(
        "Paper: in shallow buffers BBR takes most of the link; its share falls as the buffer grows, "
        "towards the model's 1/2 less the time spent in ProbeRTT; the model (equations 9-11, "
        "`model_share`, computed here for the paper's 40 ms x 10 Mbit/s network) predicts the "
        "measured share with a median error of 5 % against CUBIC. The paper's measured points are "
        "not printed as numbers; the `model_share` column is the published model. ccsim: "
        + ", ".join(f"{r.buffer_bdp:g} BDP {r.bbr_share:.2f} (model {r.model_share:.2f})" for r in one.itertuples())
        + f". Measured from {warmup} to {duration} of each run."
        + (" Quick form: three buffers, 5-minute runs." if quick else "")
    )
    out.table(
        "figure_8a_share",
        one.reset_index(drop=True),
        "BBR's share of the goodput (`bbr_share`) beside the paper's model (`model_share`), one CUBIC flow.",
    )
    out.figure("figure_8a_share", _fig_share(table), "BBR's share against the buffer; dashed: the paper's model.")

    out.section("BBR against several CUBIC flows: the share does not depend on their number")
    multi = table.pivot_table(index="buffer_bdp", columns="cubic_flows", values="bbr_share")
    multi.columns = [f"bbr_share_vs_{n}_cubic" for n in multi.columns]
    multi = multi.reset_index()
    multi["model_share"] = [model_share(x) for x in multi.buffer_bdp]
    multi = multi.dropna()
    out.note(
        "Paper (Section 4 and the model): BBR's throughput against loss-based flows does not depend "
        "on how many there are, so one BBR flow takes the same share from 1, 2 or 4 CUBIC flows. "
        "ccsim: "
        + "; ".join(
            f"{r['buffer_bdp']:g} BDP: "
            + ", ".join(f"{c.split('_')[-2]} CUBIC {r[c]:.2f}" for c in multi.columns if c.startswith("bbr_share"))
            for r in multi.to_dict("records")
        )
        + "."
    )
    out.table("share_vs_cubic_flows", multi, "BBR's share against 1..N CUBIC flows, per buffer.")

    out.section("BBR alone: standing queue and ProbeRTT (spec and Hock et al.)")
    alone = pd.DataFrame([alone_row(results[f"alone-bbr{n}"], n) for n in (1, 2)])
    alone["spec_probe_rtt_interval_s"] = PROBE_RTT_INTERVAL_S
    alone["spec_cwnd_4_pkts_min_s"] = PROBE_RTT_TIME_S
    alone["published_queue_bdp"] = ["small (Drain and the 0.75 gain empty it)", "about 1 (Hock et al.)"]
    alone["published_inflight_bdp"] = ["about 1", "about 2 (Hock et al.)"]
    one_row, two_row = alone.iloc[0], alone.iloc[1]
    out.note(
        "Spec (draft-cardwell-iccrg-bbr-congestion-control-00, Linux tcp_bbr.c): a flow whose min RTT "
        "has not been refreshed for 10 s enters ProbeRTT and holds its window at 4 packets for at least "
        "200 ms and one round. Hock et al. (ICNP 2017): a single BBR flow keeps the queue nearly empty, "
        "while several flows overestimate the bandwidth, become limited by their 2 BDP window and "
        "keep about one BDP queued. ccsim, 16 BDP buffer: one flow: mean queue "
        f"{one_row.mean_queue_bdp:.2f} BDP, in flight {one_row.mean_inflight_bdp:.2f} BDP, ProbeRTT every "
        f"{one_row.probe_rtt_interval_s:.2f} s, window at 4 packets for at least {one_row.cwnd_4_pkts_min_s * 1e3:.0f} ms; "
        f"two flows: mean queue {two_row.mean_queue_bdp:.2f} BDP, in flight {two_row.mean_inflight_bdp:.2f} BDP "
        f"(sojourn {two_row.mean_sojourn_ms:.0f} ms)."
    )
    out.table("bbr_alone", alone, "BBR without competition; `spec_*` and `published_*`: the expected values.")
    out.figure("bbr_alone", _fig_alone(results), "Window (packets) and queue of BBR alone; ProbeRTT dips to 4 packets.")


PAPER = Paper(
    id="ware-bbr",
    title="Ware, Mukerjee, Seshan, Sherry: Modeling BBR's Interactions with Loss-Based Congestion Control",
    runs=runs,
    analyze=analyze,
)
