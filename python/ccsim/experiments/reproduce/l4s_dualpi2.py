"""L4S coexistence through a DualQ Coupled AQM: one TCP Prague flow (Scalable, ECT(1)) and one
CUBIC flow (Classic) share a DualPI2 bottleneck, swept over the link rate and the base RTT, from
``scenarios/papers/l4s-dualpi2/dumbbell.toml``. The published behaviour: De Schepper,
Bondarenko, Tsang, Briscoe, "PI2: A Linearized AQM for both Classic and Scalable TCP", ACM
CoNEXT 2016 (the coupling p_L = k p', p_C = p'^2 that gives both kinds of flow about the same
rate) and RFC 9332 (De Schepper, Briscoe, White, "Dual-Queue Coupled Active Queue Management
(AQM) for Low Latency, Low Loss, and Scalable Throughput (L4S)", 2023): sub-millisecond average
queuing delay for L4S traffic, the Classic queue held at the PI2 target of 15 ms (Appendix A),
roughly equal rates with k = 2 (Section 2.1).

DualPI2 is ccsim's model of RFC 9332 with Linux sch_dualpi2's defaults; TCP Prague follows
draft-briscoe-iccrg-prague-congestion-control-04 and the L4S team's Linux tcp_prague.c.

Queueing delays are per flow (each flow has one queue to itself): the mean is the flow's mean
one-way delay less its base one-way delay (propagation plus one packet's serialization on each
of the three links); the median and 99th percentile come from the engine's delay histogram,
whose bins are at most 6.25 % of the total one-way delay wide (``docs/results.md``), which the
table gives as ``percentile_resolution_ms``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from . import Artifacts, Paper, Run, load_scenario

PAPER_DIR = "l4s-dualpi2"
PACKET_B = 1500
ACCESS_BPS = 1e9

RATES_FULL = [10, 20, 40, 100, 200]
RATES_QUICK = [10, 40, 100]
RTTS_FULL = [10, 20, 50]
RTTS_QUICK = [20]
TIMING_FULL = ("70s", "10s")
TIMING_QUICK = ("25s", "5s")
# A sensitivity run (not in the sources): at 10 Mbit/s one packet takes 1.2 ms on the wire,
# more than the 1 ms step threshold; these runs give the step two packets' worth of time.
LOW_RATE_STEP_MS = 2.4

PUBLISHED = {
    "l4s_mean_queue_ms": "< 1 (RFC 9332 §1: sub-millisecond average queuing delay)",
    "classic_queue_ms": "about 15 (RFC 9332 App. A: PI2 target 15 ms)",
    "rate_ratio": "about 1 (RFC 9332 §2.1, De Schepper et al. 2016: k = 2 balances the rates)",
}


def scenario(rate_mbps: float, rtt_ms: float, quick: bool, step_ms: float | None = None) -> dict[str, Any]:
    """The scenario file at ``rate_mbps`` with a base RTT of ``rtt_ms``: a quarter of it on the
    bottleneck, an eighth on each access link (each way)."""
    data = load_scenario(PAPER_DIR, "dumbbell.toml")
    topo = data["topology"]
    topo["bottleneck"]["rate"] = f"{rate_mbps:g}Mbps"
    topo["bottleneck"]["delay"] = f"{rtt_ms / 4:g}ms"
    topo["access"]["delay"] = f"{rtt_ms / 8:g}ms"
    if step_ms is not None:
        topo["bottleneck"]["queue"]["step_thresh"] = f"{step_ms:g}ms"
    data["simulation"]["duration"], data["simulation"]["warmup"] = TIMING_QUICK if quick else TIMING_FULL
    return data


def _key(rate: float, rtt: float, step_ms: float | None = None) -> str:
    return f"r{rate:g}-rtt{rtt:g}" + ("" if step_ms is None else f"-step{step_ms:g}")


def _grid(quick: bool) -> list[tuple[float, float]]:
    return [(r, t) for r in (RATES_QUICK if quick else RATES_FULL) for t in (RTTS_QUICK if quick else RTTS_FULL)]


def _sensitivity(quick: bool) -> list[tuple[float, float]]:
    return [(RATES_QUICK[0], t) for t in (RTTS_QUICK if quick else RTTS_FULL)]


def runs(quick: bool) -> list[Run]:
    out = [Run(_key(r, t), scenario(r, t, quick)) for r, t in _grid(quick)]
    out += [Run(_key(r, t, LOW_RATE_STEP_MS), scenario(r, t, quick, LOW_RATE_STEP_MS)) for r, t in _sensitivity(quick)]
    return out


def base_one_way_s(rate_mbps: float, rtt_ms: float) -> float:
    """Propagation plus one packet's serialization on the two access links and the bottleneck."""
    return rtt_ms / 2e3 + PACKET_B * 8 * (2 / ACCESS_BPS + 1 / (rate_mbps * 1e6))


def row(r: Any, rate: float, rtt: float) -> dict[str, Any]:
    """Goodputs, their ratio and each flow's queueing delay in one run."""
    f = r.flows.set_index("name")
    base = base_one_way_s(rate, rtt)
    out: dict[str, Any] = {"rate_mbps": rate, "base_rtt_ms": rtt}
    for name, label in (("prague", "l4s"), ("cubic", "classic")):
        out[f"{label}_mbps"] = float(f.goodput_bps[name]) / 1e6
    out["rate_ratio"] = out["l4s_mbps"] / out["classic_mbps"]
    out["utilization"] = (out["l4s_mbps"] + out["classic_mbps"]) / rate
    for name, label in (("prague", "l4s"), ("cubic", "classic")):
        out[f"{label}_mean_queue_ms"] = (float(f.delay_mean_s[name]) - base) * 1e3
        out[f"{label}_p50_queue_ms"] = max(0.0, float(f.delay_p50_s[name]) - base) * 1e3
        out[f"{label}_p99_queue_ms"] = max(0.0, float(f.delay_p99_s[name]) - base) * 1e3
    out["percentile_resolution_ms"] = 0.0625 * float(f.delay_p99_s["prague"]) * 1e3
    out["l4s_marks"] = int(f.ecn_marks["prague"])
    out["l4s_drops"] = int(f.queue_drops["prague"])
    out["classic_drops"] = int(f.queue_drops["cubic"])
    return out


def table(results: Mapping[str, Any], quick: bool) -> pd.DataFrame:
    return pd.DataFrame([row(results[_key(r, t)], r, t) for r, t in _grid(quick)])


def _fig(frame: pd.DataFrame) -> Any:
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for rtt, part in frame.groupby("base_rtt_ms"):
        axes[0].plot(part.rate_mbps, part.rate_ratio, "o-", label=f"base RTT {rtt:g} ms")
        (line,) = axes[1].plot(part.rate_mbps, part.l4s_mean_queue_ms, "o-", label=f"L4S mean, {rtt:g} ms")
        axes[1].plot(part.rate_mbps, part.l4s_p99_queue_ms, "o:", color=line.get_color(), label=f"L4S p99, {rtt:g} ms")
        axes[1].plot(
            part.rate_mbps, part.classic_mean_queue_ms, "s--", color=line.get_color(), label=f"Classic mean, {rtt:g} ms"
        )
    axes[0].axhline(1.0, color="k", lw=0.8, ls="--", label="rate balance (k = 2)")
    axes[0].set_ylabel("Prague goodput / CUBIC goodput")
    axes[0].set_yscale("log", base=2)
    axes[1].axhline(15.0, color="grey", lw=0.8, ls="--", label="PI2 target 15 ms")
    axes[1].axhline(1.0, color="grey", lw=0.8, ls="-.", label="1 ms")
    axes[1].set_ylabel("queueing delay (ms)")
    axes[1].set_yscale("log")
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xlabel("bottleneck rate (Mbit/s)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    return fig


def _fig_queues(r: Any) -> Any:
    import matplotlib.pyplot as plt

    t = r.traces
    fig, ax = plt.subplots(figsize=(9, 3.5))
    ax.plot(t.time_s, t["queue.A->B.c_len_pkts"], lw=0.6, label="Classic queue (packets)")
    ax.plot(t.time_s, t["queue.A->B.l_len_pkts"], lw=0.6, label="L4S queue (packets)")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("packets")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def analyze(results: Mapping[str, Any], out: Artifacts, quick: bool) -> None:
    frame = table(results, quick)
    for column, text in PUBLISHED.items():
        frame[f"published_{column}"] = text
    out.section("Prague and CUBIC through DualPI2: rates and queueing delays")
    fast = frame[frame.rate_mbps >= 40]
    out.note(
        "Published: L4S traffic sees sub-millisecond average queuing delay (RFC 9332 §1), the Classic "
        "queue is held near the PI2 target of 15 ms (RFC 9332 App. A), and the coupling k = 2 gives "
        "Scalable and Classic flows roughly the same rate (RFC 9332 §2.1; De Schepper et al., CoNEXT "
        "2016). ccsim at 40 Mbit/s and above: L4S mean queueing "
        f"{fast.l4s_mean_queue_ms.min():.2f}-{fast.l4s_mean_queue_ms.max():.2f} ms, p99 at most "
        f"{fast.l4s_p99_queue_ms.max():.2f} ms; Classic mean {fast.classic_mean_queue_ms.min():.1f}-"
        f"{fast.classic_mean_queue_ms.max():.1f} ms; Prague/CUBIC goodput {fast.rate_ratio.min():.2f}-"
        f"{fast.rate_ratio.max():.2f}. At 10 Mbit/s: L4S mean "
        + ", ".join(f"{v:.2f}" for v in frame[frame.rate_mbps == 10].l4s_mean_queue_ms)
        + " ms, ratio "
        + ", ".join(f"{v:.2f}" for v in frame[frame.rate_mbps == 10].rate_ratio)
        + f". Measured from {(TIMING_QUICK if quick else TIMING_FULL)[1]} to the end of "
        f"{(TIMING_QUICK if quick else TIMING_FULL)[0]} runs."
    )
    out.table("coexistence", frame, "Per link rate and base RTT: goodputs, their ratio, queueing delays (ms).")
    out.figure("coexistence", _fig(frame), "Rate ratio and queueing delays against the link rate.")

    out.section("Sensitivity (not in the sources): the step threshold at 10 Mbit/s")
    rows = []
    for r, t in _sensitivity(quick):
        plain = row(results[_key(r, t)], r, t)
        wide = row(results[_key(r, t, LOW_RATE_STEP_MS)], r, t)
        rows.append(
            {
                "rate_mbps": r,
                "base_rtt_ms": t,
                "rate_ratio_step_1ms": plain["rate_ratio"],
                f"rate_ratio_step_{LOW_RATE_STEP_MS:g}ms": wide["rate_ratio"],
                "l4s_mean_queue_ms_step_1ms": plain["l4s_mean_queue_ms"],
                f"l4s_mean_queue_ms_step_{LOW_RATE_STEP_MS:g}ms": wide["l4s_mean_queue_ms"],
            }
        )
    out.note(
        "At 10 Mbit/s a 1500 B packet takes 1.2 ms on the wire, longer than the 1 ms step threshold, "
        "so an L4S packet that waits behind one other packet is marked. These runs give the step "
        f"{LOW_RATE_STEP_MS:g} ms (two packets) to show how much of Prague's low share there comes from it."
    )
    out.table("step_sensitivity", pd.DataFrame(rows), "Prague/CUBIC goodput and L4S queueing at 10 Mbit/s.")

    key = _key(40, 20) if (40, 20) in _grid(quick) else _key(*_grid(quick)[0])
    out.section("Queue lengths over time")
    out.note(f"Run {key}: the L4S queue stays at a packet or two while the Classic queue holds its target.")
    out.figure("queues", _fig_queues(results[key]), "DualPI2's two queues (packets), sampled every 10 ms.")


PAPER = Paper(
    id="l4s-dualpi2",
    title="L4S: TCP Prague and CUBIC through a DualQ Coupled AQM (De Schepper et al. 2016; RFC 9332)",
    runs=runs,
    analyze=analyze,
)
