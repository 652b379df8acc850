"""Paper 000 (Sup, de Moraes, Bauchspiess, "Acknowledge-Based Non-Congestion Estimation (ANCE)",
IJCNIS 2020): the daisy chain of sec. 3 (Figures 2-5) and the dumbbell with three TCP-Reno flows
and a networked control loop of sec. 4 (Figures 10-30, 32-35), from
``scenarios/papers/ance/daisy_chain.toml`` and ``scenarios/papers/ance/dumbbell.toml``.

Each technique changes only the router queues, the TCP senders' congestion control, their ECN
capability and initial ssthresh (:data:`TECHNIQUES`). The paper prints no numbers except Table 4
(statistical model checking, reproduced with :mod:`ccsim.experiments.smc` by :func:`table_4`, with
Figure 31); its findings are statements about its figures, checked in ``findings.csv``.

Throughput is the paper's ``T = NP / Time`` (NP: packets transmitted and acknowledged, here
segments delivered in order) as it grows over the run; the ITAE of Figures 30 and 33 is the
per-sample sum of t_k |e_k|, the scale of the paper's 8727 rad.s threshold (with h = 14 ms the
integral of t |e(t)| dt is about 70 times smaller; docs/reproductions.md), with the integral
beside it in the tables.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ...results import metrics
from . import Artifacts, Paper, Run, load_scenario

MSS = 948
"""Payload bytes per segment (1000-byte packets with the 52-byte header)."""
Q_MIN_BYTES = 3000
"""Q_min of ANCE and ENCN (sec. 3.1: 3 kbytes)."""
ITAE_THRESHOLD = 8727.0
"""Table 4's threshold (rad.s), on the scale of the per-sample ITAE sum."""
STEADY_FROM_S = 2.0
"""The daisy chain's start-up (slow start and its overshoot) is over by then."""
SEEDS_FULL = 20
SEEDS_QUICK = 3

_LIMIT = "17p"
# Sec. 3.1: min_th = Q_l/4, max_th = 3 Q_l/4 with Q_l = 17 kbytes, P_max = 0.1, w_q = 0.002;
# Floyd & Jacobson's RED of ref. [1] (no gentle mode); the ECN bit is available.
_RED = {
    "kind": "red",
    "limit": _LIMIT,
    "min_th": "4250B",
    "max_th": "12750B",
    "max_p": 0.1,
    "wq": 0.002,
    "gentle": False,
    "ecn": True,
    "mean_pkt_size": "1000B",
}


@dataclass(frozen=True)
class Technique:
    """What one curve of the paper changes: router queue, TCP congestion control, initial
    ssthresh (packets), and whether the TCP senders (and the NCS datagrams) are ECN-capable."""

    cc: Any
    queue: dict[str, Any]
    ssthresh: str
    ecn: bool


TECHNIQUES: dict[str, Technique] = {
    "DT": Technique("reno", {"kind": "droptail", "limit": _LIMIT}, "30p", False),
    "RED": Technique("reno", _RED, "30p", True),
    # CoDel "does not require any parameter setting": RFC 8289's 5 ms / 100 ms.
    "CoDel": Technique("reno", {"kind": "codel", "limit": _LIMIT, "ecn": True, "mtu": "1000B"}, "30p", True),
    # PIE with RFC 8033's parameters (auto-tuned alpha/beta); the queueing delay from packet
    # timestamps (Linux's and ns-3's default): the departure-rate estimator measures only
    # while 16 KiB are queued, which a 17-packet buffer of 1-kbyte packets almost never holds.
    "PIE": Technique(
        "reno", {"kind": "pie", "limit": _LIMIT, "ecn": True, "use_timestamps": True, "mtu": "1000B"}, "30p", True
    ),
    "ENCN": Technique("encn", {"kind": "encn", "limit": _LIMIT, "q_min": f"{Q_MIN_BYTES}B"}, "16p", False),
    "ANCE": Technique(
        {"kind": "ance", "q_min": f"{Q_MIN_BYTES}B"}, {"kind": "droptail", "limit": _LIMIT}, "16p", False
    ),
    # The routers of the ECN-based protocols of sec. 4.4 mark from RED's lower threshold
    # (Q_l/4 = 4250 B): TCP-Jersey's congestion warning on RED's average, E-DCTCP's (DCTCP's)
    # threshold K on the instantaneous queue.
    "TCP-Jersey": Technique(
        "jersey",
        {"kind": "jersey_cw", "limit": _LIMIT, "min_th": "4250B", "wq": 0.002, "mean_pkt_size": "1000B"},
        "30p",
        True,
    ),
    "E-DCTCP": Technique("edctcp", {"kind": "threshold", "limit": _LIMIT, "k": "4250B"}, "30p", True),
}
DAISY_TECHNIQUES = ["RED", "CoDel", "PIE", "ENCN", "ANCE"]
AQM_TECHNIQUES = ["DT", "RED", "CoDel", "PIE", "ENCN", "ANCE"]
TCP_TECHNIQUES = ["TCP-Jersey", "E-DCTCP", "ANCE"]
DUMBBELL_TECHNIQUES = AQM_TECHNIQUES + ["TCP-Jersey", "E-DCTCP"]
FLOWS = ["A", "B", "C"]

# Table 4 as printed: probability interval of ITAE > 8727 rad.s within 30 s (95 % confidence).
PUBLISHED_TABLE_4 = {
    "DT": (0.902, 1.0),
    "RED": (0.649, 0.749),
    "CoDel": (0.457, 0.557),
    "PIE": (0.068, 0.168),
    "ENCN": (0.0, 0.097),
    "ANCE": (0.0, 0.097),
}

COLORS = {
    "DT": "tab:gray",
    "RED": "tab:red",
    "CoDel": "tab:orange",
    "PIE": "tab:purple",
    "ENCN": "tab:green",
    "ANCE": "tab:blue",
    "TCP-Jersey": "tab:brown",
    "E-DCTCP": "tab:olive",
}


def _slug(name: str) -> str:
    return name.lower().replace("-", "")


def daisy_scenario(name: str) -> dict[str, Any]:
    """The sec. 3 daisy chain with technique ``name`` (one of :data:`DAISY_TECHNIQUES`)."""
    t = TECHNIQUES[name]
    data = load_scenario("ance", "daisy_chain.toml")
    data["topology"]["hops"][0]["queue"] = copy.deepcopy(t.queue)
    for flow in data["flows"]:
        flow["cc"] = copy.deepcopy(t.cc)
        flow["transport"].update(init_ssthresh=t.ssthresh, ecn=t.ecn)
    data["trace"]["interval"] = "5ms"
    return data


def dumbbell_scenario(name: str) -> dict[str, Any]:
    """The sec. 4 dumbbell with technique ``name`` (one of :data:`DUMBBELL_TECHNIQUES`). Where the
    routers mark instead of dropping, the NCS datagrams are ECN-capable too, so that the marks
    fall on them without effect, as the paper says ("only the TCP flows respond to ECN and ENCN
    notifications, which do not cause any direct effect on the UDP-like NCS flow"), rather than
    every early drop of a non-ECT packet landing on the control loop."""
    t = TECHNIQUES[name]
    data = load_scenario("ance", "dumbbell.toml")
    data["topology"]["bottleneck"]["queue"] = copy.deepcopy(t.queue)
    for flow in data["flows"]:
        flow["cc"] = copy.deepcopy(t.cc)
        flow["transport"].update(init_ssthresh=t.ssthresh, ecn=t.ecn)
    for loop in data["control"]:
        loop["transport"] = {"kind": "udp", "ecn": t.ecn}
    return data


SMC_QUERY = f"Pr[<=30](<> ncs.itae > {ITAE_THRESHOLD:g})"
"""Table 4's property in ``ccsim.experiments.smc``'s language: the loop's running per-sample ITAE
sum exceeds 8727 rad.s within 30 s."""
SMC_EPSILON = 0.05
SMC_ALPHA = 0.05
"""Table 4's 95 % confidence; epsilon = 0.05 makes its 0.1-wide intervals (UPPAAL's defaults)."""
SMC_RUNS_QUICK = 30
"""Runs per technique in the quick form (the full form: the Chernoff-Hoeffding count, 738)."""


def smc_scenarios() -> dict[str, dict[str, Any]]:
    """Per technique of Table 4 (in the paper's order), the dumbbell whose runs
    ``ccsim.experiments.smc`` draws. Its random elements are the ones the scenario declares,
    unchanged: the three TCP flows' start windows (0..100 ms) and, for RED and PIE, the queues'
    own random draws."""
    return {name: dumbbell_scenario(name) for name in PUBLISHED_TABLE_4}


def smc_full_runs() -> int:
    from ccsim.experiments import smc

    return smc.chernoff_runs(SMC_EPSILON, SMC_ALPHA)


def table_4(quick: bool, jobs: int | None = None) -> dict[str, Any]:
    """Table 4: ``SMC_QUERY`` estimated per technique with ``ccsim.experiments.smc.check`` (one
    executor for all six), the Chernoff-Hoeffding number of runs for ``SMC_EPSILON``/``SMC_ALPHA``
    (738), or ``SMC_RUNS_QUICK`` in the quick form. Technique -> ``SmcResult``."""
    import ccsim
    from ccsim.engine.executor import Executor
    from ccsim.experiments import smc

    n = SMC_RUNS_QUICK if quick else None
    with Executor(jobs=jobs) as ex:
        return {
            name: smc.check(ccsim.from_dict(s), SMC_QUERY, epsilon=SMC_EPSILON, alpha=SMC_ALPHA, runs=n, executor=ex)
            for name, s in smc_scenarios().items()
        }


def table_4_frame(results: Mapping[str, Any]) -> pd.DataFrame:
    """One row per technique: runs, crossings, the estimate with its Clopper-Pearson interval and
    the Chernoff-Hoeffding interval (estimate ± epsilon, the form of the paper's intervals), the
    published interval beside them, and when the crossings happened."""
    rows = []
    for name, r in results.items():
        lo, hi = r.interval
        clo, chi = r.chernoff_interval
        times = r.outcomes["time_s"].dropna()
        plo, phi = PUBLISHED_TABLE_4[name]
        rows.append(
            {
                "technique": name,
                "runs": r.runs,
                "crossed": r.successes,
                "estimate": r.estimate,
                "clopper_pearson_low": lo,
                "clopper_pearson_high": hi,
                "epsilon": r.epsilon,
                "chernoff_low": clo,
                "chernoff_high": chi,
                "paper_low": plo,
                "paper_high": phi,
                "paper_in_interval": "yes" if lo <= phi and plo <= hi else "no",
                "first_crossing_min_s": float(times.min()) if len(times) else float("nan"),
                "first_crossing_median_s": float(times.median()) if len(times) else float("nan"),
            }
        )
    return pd.DataFrame(rows)


def _seeds(quick: bool) -> list[int]:
    return list(range(1, (SEEDS_QUICK if quick else SEEDS_FULL) + 1))


def runs(quick: bool) -> list[Run]:
    out = [Run(key=f"daisy-{_slug(n)}", scenario=daisy_scenario(n)) for n in DAISY_TECHNIQUES]
    for name in DUMBBELL_TECHNIQUES:
        scenario = dumbbell_scenario(name)
        out += [Run(key=f"dumbbell-{_slug(name)}-s{seed}", scenario=scenario, seed=seed) for seed in _seeds(quick)]
    return out


# --- measures --------------------------------------------------------------------------------


def throughput(result: Any, flow: int) -> tuple[np.ndarray, np.ndarray]:
    """The paper's T = NP / Time (packets per second) at each trace instant after 0."""
    tr = result.traces
    t = tr["time_s"].to_numpy()
    keep = t > 0
    return t[keep], tr[f"flow.{flow}.delivered_bytes"].to_numpy()[keep] / MSS / t[keep]


def jain(values: np.ndarray) -> np.ndarray:
    """Jain's index (``metrics.jain``) along the last axis: one per instant of a series of shares;
    1 (equal shares) where every value is 0, as before the first delivery."""
    index = np.apply_along_axis(metrics.jain, -1, np.asarray(values, dtype=float))
    return np.where(np.isnan(index), 1.0, index)


def itae_curve(result: Any) -> tuple[np.ndarray, np.ndarray]:
    """The loop's per-sample ITAE sum, sum of t_k |e_k| up to each sampling instant."""
    ct = result.control_traces
    return ct["time_s"].to_numpy(), np.cumsum(ct["time_s"].to_numpy() * ct["error"].abs().to_numpy())


def _queue(result: Any, name: str) -> pd.Series:
    return result.queues.set_index("name").loc[name]


def daisy_metrics(result: Any) -> dict[str, float]:
    tr = result.traces
    q = _queue(result, "R0->R1")
    f = result.flows.iloc[0]
    length = tr["queue.R0->R1.len_pkts"].to_numpy()
    steady = length[tr["time_s"].to_numpy() >= STEADY_FROM_S]
    return {
        "throughput_pkts_s": f.bytes_delivered / MSS / result.raw["duration_s"],
        "goodput_kbps": f.goodput_bps / 1e3,
        "utilization": float(result.utilization),
        "link_idle_share": 1.0 - float(result.utilization),
        "queue_empty_share": float((length == 0).mean()),
        "queue_mean_pkts": float(q.mean_len_pkts),
        "queue_mean_bytes": float(q.mean_len_bytes),
        "queue_max_pkts": int(q.max_len_pkts),
        "steady_queue_mean_pkts": float(steady.mean()),
        "steady_queue_max_pkts": float(steady.max()),
        "drops": int(q.drops),
        "marks": int(q.marks),
        "timeouts": int(f.timeouts),
        "fast_recoveries": int(f.fast_recoveries),
    }


def dumbbell_metrics(result: Any) -> dict[str, float]:
    q = _queue(result, "A->B")
    c = result.control.iloc[0]
    tput = [result.flows.iloc[i].bytes_delivered / MSS / result.raw["duration_s"] for i in range(3)]
    length = result.traces["queue.A->B.len_pkts"].to_numpy()
    row: dict[str, float] = {f"throughput_{n}_pkts_s": v for n, v in zip(FLOWS, tput)}
    row.update(
        {
            "total_pkts_s": float(sum(tput)),
            "total_kbps": float(result.flows.iloc[:3].goodput_bps.sum() / 1e3),
            "jain": float(result.jain_index),
            "utilization": float(result.utilization),
            "queue_empty_share": float((length == 0).mean()),
            "queue_mean_pkts": float(q.mean_len_pkts),
            "drops": int(q.drops),
            "marks": int(q.marks),
            "itae_sum": float(c.itae_sum),
            "itae_integral": float(c.itae),
            "samples_lost": int(c.samples_lost),
            "controls_lost": int(c.controls_lost),
            "actuation_delay_mean_ms": float(c.actuation_delay_mean_s * 1e3),
        }
    )
    return row


# --- findings --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    figures: str
    statement: str
    check: Callable[[pd.DataFrame, pd.DataFrame], tuple[bool, str]]
    """(daisy metrics by technique, dumbbell seed-mean metrics by technique) -> (holds, measured)."""


def _fmt(frame: pd.DataFrame, col: str, names: list[str], digits: int = 3) -> str:
    return ", ".join(f"{n} {frame.loc[n, col]:.{digits}g}" for n in names)


def _lowest(frame: pd.DataFrame, col: str, best: str, others: list[str]) -> bool:
    return all(frame.loc[best, col] < frame.loc[o, col] for o in others)


def _highest(frame: pd.DataFrame, col: str, best: str, others: list[str]) -> bool:
    return all(frame.loc[best, col] > frame.loc[o, col] for o in others)


FINDINGS: list[Finding] = [
    Finding(
        "2, 5",
        "Daisy chain: TCP-Reno over RED, CoDel and PIE leaves the bottleneck idle for periods "
        "(bufferempty) more than ENCN and ANCE do",
        lambda d, b: (
            all(
                d.loc[x, "link_idle_share"] > max(d.loc["ANCE", "link_idle_share"], d.loc["ENCN", "link_idle_share"])
                for x in ("RED", "CoDel", "PIE")
            ),
            "link idle share " + _fmt(d, "link_idle_share", DAISY_TECHNIQUES),
        ),
    ),
    Finding(
        "3, 4",
        "Daisy chain: with ANCE the router stays busy and the queue oscillates around Q_min = 3 kbytes "
        "(after the start-up it reaches Q_min but never 2 Q_min; the link idles less than 5 % of the time)",
        lambda d, b: (
            Q_MIN_BYTES <= d.loc["ANCE", "steady_queue_max_pkts"] * 1000 <= 2 * Q_MIN_BYTES
            and d.loc["ANCE", "link_idle_share"] < 0.05,
            f"ANCE after {STEADY_FROM_S:g} s: queue mean {d.loc['ANCE', 'steady_queue_mean_pkts']:.2f}, "
            f"max {d.loc['ANCE', 'steady_queue_max_pkts']:.0f} packets (1 kbyte each); "
            f"link idle {d.loc['ANCE', 'link_idle_share']:.3f}",
        ),
    ),
    Finding(
        "5",
        "Daisy chain: ANCE and ENCN have a better throughput than RED, CoDel and PIE",
        lambda d, b: (
            all(
                d.loc[x, "throughput_pkts_s"] > d.loc[o, "throughput_pkts_s"]
                for x in ("ANCE", "ENCN")
                for o in ("RED", "CoDel", "PIE")
            ),
            "T (packets/s) " + _fmt(d, "throughput_pkts_s", DAISY_TECHNIQUES, 4),
        ),
    ),
    Finding(
        "5",
        "Daisy chain: the throughput curves of ENCN and ANCE are very similar (within 2 %)",
        lambda d, b: (
            abs(d.loc["ANCE", "throughput_pkts_s"] / d.loc["ENCN", "throughput_pkts_s"] - 1) < 0.02,
            "T (packets/s) " + _fmt(d, "throughput_pkts_s", ["ENCN", "ANCE"], 4),
        ),
    ),
    Finding(
        "10-16",
        "Dumbbell: ANCE's total throughput is close to ENCN's and CoDel's (within 5 %) and above RED's and PIE's",
        lambda d, b: (
            all(abs(b.loc["ANCE", "total_pkts_s"] / b.loc[x, "total_pkts_s"] - 1) < 0.05 for x in ("ENCN", "CoDel"))
            and _highest(b, "total_pkts_s", "ANCE", ["RED", "PIE"]),
            "total T (packets/s) " + _fmt(b, "total_pkts_s", AQM_TECHNIQUES, 4),
        ),
    ),
    Finding(
        "17",
        "Dumbbell: ANCE has a better Jain index than DT, RED, CoDel and PIE",
        lambda d, b: (
            _highest(b, "jain", "ANCE", ["DT", "RED", "CoDel", "PIE"]),
            "Jain " + _fmt(b, "jain", AQM_TECHNIQUES, 4),
        ),
    ),
    Finding(
        "24-29",
        "Dumbbell: ANCE avoids bufferbloat: a shorter mean bottleneck queue than DT, RED, CoDel and PIE",
        lambda d, b: (
            _lowest(b, "queue_mean_pkts", "ANCE", ["DT", "RED", "CoDel", "PIE"]),
            "mean queue (packets) " + _fmt(b, "queue_mean_pkts", AQM_TECHNIQUES),
        ),
    ),
    Finding(
        "30",
        "Dumbbell: ANCE gives the NCS loop a lower ITAE than DT, RED, CoDel and PIE",
        lambda d, b: (
            _lowest(b, "itae_sum", "ANCE", ["DT", "RED", "CoDel", "PIE"]),
            "ITAE sum " + _fmt(b, "itae_sum", AQM_TECHNIQUES, 4),
        ),
    ),
    Finding(
        "30",
        "Dumbbell: ANCE's ITAE is very close to ENCN's (within 10 %)",
        lambda d, b: (
            abs(b.loc["ANCE", "itae_sum"] / b.loc["ENCN", "itae_sum"] - 1) < 0.10,
            "ITAE sum " + _fmt(b, "itae_sum", ["ENCN", "ANCE"], 4),
        ),
    ),
    Finding(
        "32",
        "E-DCTCP outperforms ANCE in total TCP throughput",
        lambda d, b: (
            b.loc["E-DCTCP", "total_pkts_s"] > b.loc["ANCE", "total_pkts_s"],
            "total T (packets/s) " + _fmt(b, "total_pkts_s", TCP_TECHNIQUES, 4),
        ),
    ),
    Finding(
        "33",
        "ANCE gives a better ITAE than E-DCTCP",
        lambda d, b: (
            b.loc["ANCE", "itae_sum"] < b.loc["E-DCTCP", "itae_sum"],
            "ITAE sum " + _fmt(b, "itae_sum", TCP_TECHNIQUES, 4),
        ),
    ),
    Finding(
        "29, 34",
        "E-DCTCP shows more bufferbloat than ANCE (longer mean queue)",
        lambda d, b: (
            b.loc["E-DCTCP", "queue_mean_pkts"] > b.loc["ANCE", "queue_mean_pkts"],
            "mean queue (packets) " + _fmt(b, "queue_mean_pkts", TCP_TECHNIQUES),
        ),
    ),
    Finding(
        "32",
        "TCP-Jersey has the poorest total TCP throughput of TCP-Jersey, E-DCTCP and ANCE",
        lambda d, b: (
            _lowest(b, "total_pkts_s", "TCP-Jersey", ["E-DCTCP", "ANCE"]),
            "total T (packets/s) " + _fmt(b, "total_pkts_s", TCP_TECHNIQUES, 4),
        ),
    ),
    Finding(
        "33",
        "TCP-Jersey gives the best (lowest) ITAE of TCP-Jersey, E-DCTCP and ANCE",
        lambda d, b: (
            _lowest(b, "itae_sum", "TCP-Jersey", ["E-DCTCP", "ANCE"]),
            "ITAE sum " + _fmt(b, "itae_sum", TCP_TECHNIQUES, 4),
        ),
    ),
    Finding(
        "29, 34, 35",
        "TCP-Jersey leaves the bottleneck idle (bufferempty) more than E-DCTCP and ANCE",
        lambda d, b: (
            _lowest(b, "utilization", "TCP-Jersey", ["E-DCTCP", "ANCE"]),
            "utilization " + _fmt(b, "utilization", TCP_TECHNIQUES, 4),
        ),
    ),
]


def findings_table(daisy: pd.DataFrame, dumbbell_mean: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for k, f in enumerate(FINDINGS, start=1):
        holds, measured = f.check(daisy, dumbbell_mean)
        rows.append(
            {
                "finding": k,
                "figures": f.figures,
                "paper": f.statement,
                "ccsim": measured,
                "holds": "yes" if holds else "no",
            }
        )
    return pd.DataFrame(rows)


# --- analysis --------------------------------------------------------------------------------


def analyze(results: Mapping[str, Any], out: Artifacts, quick: bool) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    seeds = _seeds(quick)
    daisy = {n: results[f"daisy-{_slug(n)}"] for n in DAISY_TECHNIQUES}
    dumb = {n: results[f"dumbbell-{_slug(n)}-s1"] for n in DUMBBELL_TECHNIQUES}
    sweep = {
        n: pd.DataFrame([dumbbell_metrics(results[f"dumbbell-{_slug(n)}-s{s}"]) for s in seeds])
        for n in DUMBBELL_TECHNIQUES
    }
    daisy_table = pd.DataFrame([{"technique": n, **daisy_metrics(r)} for n, r in daisy.items()])
    means = pd.DataFrame({n: s.mean() for n, s in sweep.items()}).T
    qnote = (
        f" Quick form: the full 30 s runs, but {len(seeds)} seeds instead of {SEEDS_FULL} for the dumbbell."
        if quick
        else ""
    )

    # Sec. 3: daisy chain.
    out.section("Sec. 3 daisy chain: throughput and queue per technique (Figures 2-5)")
    out.note(
        "One TCP-Reno flow over the 1.5 Mbit/s, 17-packet daisy chain for 30 s (seed 1). `throughput_pkts_s` "
        "is the paper's T = NP/Time at the end of the run; `link_idle_share` (1 - utilization of the "
        "bottleneck) measures the bufferempty phenomenon; `queue_empty_share` is the share of 5 ms samples "
        "with nothing waiting (a packet may be in transmission)." + qnote
    )
    out.table("table_daisy_chain", daisy_table, "Daisy chain (sec. 3), one run per technique.")

    fig, axes = plt.subplots(4, 1, figsize=(9, 8), sharex=True, sharey=True)
    for ax, name in zip(axes, ["RED", "CoDel", "PIE", "ENCN"]):
        tr = daisy[name].traces
        ax.plot(tr["time_s"], tr["queue.R0->R1.len_pkts"], lw=0.6, color=COLORS[name])
        ax.axhline(Q_MIN_BYTES / 1000, color="k", ls=":", lw=0.8)
        ax.set_title(name, fontsize=9, loc="left")
        ax.set_ylabel("packets")
    axes[-1].set_xlabel("time (s)")
    out.section("Figure 2: bottleneck queue for RED, CoDel, PIE and ENCN")
    out.figure("figure_2", fig, "Bottleneck queue (R0->R1, packets waiting) over time; dotted: Q_min = 3 kbytes.")

    tr = daisy["ANCE"].traces
    fig, ax = plt.subplots(figsize=(9, 3))
    ax.plot(tr["time_s"], tr["flow.0.cwnd_bytes"] / MSS, lw=0.7, color=COLORS["ANCE"])
    ax.set_xlabel("time (s)")
    ax.set_ylabel("cwnd (packets)")
    out.section("Figure 3: sender congestion window for ANCE")
    out.figure("figure_3", fig, "ANCE sender's congestion window (segments) on the daisy chain.")

    fig, ax = plt.subplots(figsize=(9, 3))
    ax.plot(tr["time_s"], tr["queue.R0->R1.len_pkts"], lw=0.6, color=COLORS["ANCE"])
    ax.axhline(Q_MIN_BYTES / 1000, color="k", ls=":", lw=0.8)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("queue (packets)")
    out.section("Figure 4: bottleneck queue for ANCE")
    out.figure("figure_4", fig, "Bottleneck queue with ANCE senders (DropTail routers); dotted: Q_min.")

    fig, ax = plt.subplots(figsize=(9, 3.5))
    for name in DAISY_TECHNIQUES:
        t, v = throughput(daisy[name], 0)
        ax.plot(t, v, lw=1.0, color=COLORS[name], label=name, ls="--" if name == "ENCN" else "-")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("T = NP/Time (packets/s)")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)
    out.section("Figure 5: throughput for RED, CoDel, PIE, ENCN and ANCE")
    out.figure("figure_5", fig, "T = NP/Time (segments delivered per second since the start) on the daisy chain.")

    # Sec. 4: dumbbell.
    rows = []
    for name in DUMBBELL_TECHNIQUES:
        row = {"technique": name, **dumbbell_metrics(dumb[name])}
        s = sweep[name]
        for col in ("total_pkts_s", "jain", "utilization", "queue_mean_pkts", "itae_sum", "itae_integral"):
            row[f"{col}_mean"] = float(s[col].mean())
            row[f"{col}_min"] = float(s[col].min())
            row[f"{col}_max"] = float(s[col].max())
        row["seeds"] = len(seeds)
        row["seeds_itae_sum_over_8727"] = int((s["itae_sum"] > ITAE_THRESHOLD).sum())
        rows.append(row)
    out.section("Sec. 4 dumbbell: TCP throughput, fairness, queue and ITAE per technique (Figures 10-30, 32-35)")
    out.note(
        "Three TCP-Reno bulk flows A, B, C and the DC-motor loop (h = 14 ms) for 30 s. The plain columns "
        "are seed 1 (the run the figures show); `*_mean/min/max` are over "
        f"{len(seeds)} seeds (flow start times drawn from 0..100 ms, the AQMs' random draws). `itae_sum` is "
        "the per-sample sum of t_k |e_k| (the scale of the paper's 8727 threshold), `itae_integral` the "
        "integral of t |e(t)| dt; the loop without a network scores 4756 (sum). "
        "`seeds_itae_sum_over_8727` counts seeds whose run exceeded 8727: a seed sweep, not Table 4's "
        "statistical model checking." + qnote
    )
    out.table("table_dumbbell", pd.DataFrame(rows), "Dumbbell (sec. 4), per technique.")

    fig, axes = plt.subplots(3, 2, figsize=(11, 8), sharex=True, sharey=True)
    for ax, name in zip(axes.flat, AQM_TECHNIQUES):
        for i, flow in enumerate(FLOWS):
            t, v = throughput(dumb[name], i)
            ax.plot(t, v, lw=0.9, label=flow)
        ax.set_title(name, fontsize=9, loc="left")
        ax.set_ylim(0, 200)
        ax.legend(fontsize=7, loc="upper right")
    for ax in axes[:, 0]:
        ax.set_ylabel("T (packets/s)")
    for ax in axes[-1]:
        ax.set_xlabel("time (s)")
    out.section("Figures 10-15: throughput of flows A, B and C for DT, RED, CoDel, PIE, ENCN and ANCE")
    out.figure("figures_10_15", fig, "Per-flow T = NP/Time on the dumbbell (seed 1).")

    def total_plot(names: list[str], fname: str, title: str) -> None:
        fig, ax = plt.subplots(figsize=(9, 3.5))
        for name in names:
            parts = [throughput(dumb[name], i) for i in range(3)]
            ax.plot(
                parts[0][0],
                sum(p[1] for p in parts),
                lw=1.0,
                color=COLORS[name],
                label=name,
                ls="--" if name == "ENCN" else "-",
            )  # ENCN and ANCE can coincide
        ax.set_xlabel("time (s)")
        ax.set_ylabel("total T (packets/s)")
        ax.set_ylim(0, 200)
        ax.legend(fontsize=8, ncol=3)
        out.section(title)
        out.figure(fname, fig, "Aggregate T = NP/Time of flows A, B and C (seed 1); the link carries 187.5 packets/s.")

    total_plot(AQM_TECHNIQUES, "figure_16", "Figure 16: total (aggregate) TCP throughput")

    fig, axes = plt.subplots(1, 2, figsize=(11, 3.5), gridspec_kw={"width_ratios": [2, 1]})
    for name in AQM_TECHNIQUES:
        parts = [throughput(dumb[name], i) for i in range(3)]
        axes[0].plot(
            parts[0][0], jain(np.stack([p[1] for p in parts], axis=-1)), lw=1.0, color=COLORS[name], label=name
        )
    axes[0].set_xlabel("time (s)")
    axes[0].set_ylabel("Jain index of T")
    axes[0].set_ylim(0.3, 1.02)
    axes[0].legend(fontsize=7, ncol=3)
    m = [sweep[n]["jain"] for n in AQM_TECHNIQUES]
    axes[1].bar(
        AQM_TECHNIQUES,
        [x.mean() for x in m],
        color=[COLORS[n] for n in AQM_TECHNIQUES],
        yerr=[[x.mean() - x.min() for x in m], [x.max() - x.mean() for x in m]],
        capsize=3,
    )
    axes[1].set_ylim(0.5, 1.0)
    axes[1].set_title(f"end of run, mean and range over {len(seeds)} seeds", fontsize=8)
    axes[1].tick_params(axis="x", labelsize=7, rotation=30)
    out.section("Figure 17: Jain's fairness index of the TCP throughput")
    out.figure("figure_17", fig, "Jain's index of the three flows' T over time (seed 1) and at 30 s over the seeds.")

    fig, axes = plt.subplots(6, 1, figsize=(10, 12), sharex=True, sharey=True)
    for ax, name in zip(axes, AQM_TECHNIQUES):
        ct = dumb[name].control_traces
        ax.plot(ct["time_s"], ct["reference"], color="k", lw=0.7, ls="--", label="R")
        ax.plot(ct["time_s"], ct["output"], color=COLORS[name], lw=0.8, label="position")
        ax.set_title(name, fontsize=9, loc="left")
        ax.set_ylabel("rad")
        ax.set_ylim(-0.5, 3.5)
    axes[0].legend(fontsize=7, loc="upper right")
    axes[-1].set_xlabel("time (s)")
    out.section("Figures 18-23: motor position for DT, RED, CoDel, PIE, ENCN and ANCE")
    out.figure(
        "figures_18_23", fig, "Motor position (output at each sampling instant) and the square-wave reference R."
    )

    def queue_panels(names: list[str], fname: str, title: str) -> None:
        fig, axes = plt.subplots(
            len(names), 1, figsize=(9, 1.9 * len(names) + 0.6), sharex=True, sharey=True, squeeze=False
        )
        for ax, name in zip(axes[:, 0], names):
            tr = dumb[name].traces
            ax.plot(tr["time_s"], tr["queue.A->B.len_pkts"], lw=0.5, color=COLORS[name])
            ax.axhline(Q_MIN_BYTES / 1000, color="k", ls=":", lw=0.8)
            ax.set_title(name, fontsize=9, loc="left")
            ax.set_ylabel("packets")
            ax.set_ylim(0, 18)
        axes[-1, 0].set_xlabel("time (s)")
        out.section(title)
        out.figure(fname, fig, "Bottleneck queue A->B (packets waiting, seed 1); dotted: Q_min = 3 kbytes.")

    queue_panels(AQM_TECHNIQUES, "figures_24_29", "Figures 24-29: queue length for DT, RED, CoDel, PIE, ENCN and ANCE")

    def itae_plot(names: list[str], fname: str, title: str) -> None:
        fig, ax = plt.subplots(figsize=(9, 3.5))
        for name in names:
            t, v = itae_curve(dumb[name])
            ax.plot(t, v, lw=1.0, color=COLORS[name], label=f"{name} ({v[-1]:.0f})")
        ax.axhline(ITAE_THRESHOLD, color="k", ls=":", lw=0.8)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("ITAE, sum of t_k |e_k| (rad.s)")
        ax.legend(fontsize=8, ncol=3)
        out.section(title)
        out.figure(fname, fig, "Per-sample ITAE sum of the NCS loop up to each instant (seed 1); dotted: 8727 rad.s.")

    itae_plot(AQM_TECHNIQUES, "figure_30", "Figure 30: ITAE of the UDP-like NCS flow per technique")

    smc = table_4(quick, out.jobs)
    first = next(iter(smc.values()))
    elements = "; ".join(e for e in first.random_elements)
    t4 = table_4_frame(smc)
    out.section("Table 4: probability that the ITAE exceeds 8727 rad.s within 30 s (statistical model checking)")
    out.note(
        f"`ccsim.experiments.smc` on the sec. 4 dumbbell per technique, query `{SMC_QUERY}`: "
        + (
            f"**quick form: {SMC_RUNS_QUICK} runs per technique**, so the Chernoff-Hoeffding half-width is "
            f"epsilon = {first.epsilon:.3f}, not the paper's 0.05 (the full form runs "
            f"{smc_full_runs()} per technique)"
            if quick
            else f"{first.runs} runs per technique, the Chernoff-Hoeffding count for epsilon = {SMC_EPSILON:g}, "
            f"alpha = {SMC_ALPHA:g} (as UPPAAL SMC)"
        )
        + f". Intervals at {100 * (1 - SMC_ALPHA):g} % confidence: Clopper-Pearson (exact) and "
        "estimate ± epsilon (Chernoff-Hoeffding, the form of the paper's 0.1-wide intervals); `paper_*` "
        "is the published interval (the paper prints one row for ENCN and ANCE together). "
        f"Runs differ only through the scenario's random elements ({elements}; RED and PIE add their "
        "queues' random draws): the same model as Figures 10-30, nothing added for the check. "
        "`paper_in_interval` says whether our Clopper-Pearson interval meets the published one."
    )
    out.table("table_4", t4, "Pr[<=30](<> ITAE > 8727) per technique, ours beside the published interval.")

    fig, ax = plt.subplots(figsize=(9, 4))
    for name, r in smc.items():
        fp = r.first_passage
        ls = "--" if name == "ENCN" else "-"
        ax.step(
            fp["time_s"],
            fp["probability"],
            where="post",
            color=COLORS[name],
            ls=ls,
            lw=1.3,
            label=f"{name} ({r.successes}/{r.runs})",
        )
        ax.fill_between(fp["time_s"], fp["lower"], fp["upper"], step="post", color=COLORS[name], alpha=0.08)
    ax.set_xlim(0, 30)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("cumulative probability")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, ncol=2, loc="center left")
    out.section("Figure 31: cumulative probability distribution of the ITAE exceeding 8727 rad.s")
    out.figure(
        "figure_31",
        fig,
        "Probability that the ITAE sum has exceeded 8727 rad.s by time t, per technique "
        f"({first.runs} runs each; shaded: Clopper-Pearson {100 * (1 - SMC_ALPHA):g} % band). The paper "
        "draws RED, CoDel and PIE only, ENCN and ANCE having no crossing; every technique is drawn here, "
        "a flat line at 0 being one that never crossed.",
    )
    with open(out.out / "table_4_outcomes.csv", "w", encoding="utf-8") as f:
        pd.concat([r.outcomes.assign(technique=name) for name, r in smc.items()]).to_csv(f, index=False)

    # Sec. 4.4: TCP-Jersey and E-DCTCP vs ANCE.
    total_plot(TCP_TECHNIQUES, "figure_32", "Figure 32: total throughput for TCP-Jersey, E-DCTCP and ANCE")
    itae_plot(TCP_TECHNIQUES, "figure_33", "Figure 33: ITAE for TCP-Jersey, E-DCTCP and ANCE")
    queue_panels(["E-DCTCP", "TCP-Jersey"], "figures_34_35", "Figures 34-35: queue length for E-DCTCP and TCP-Jersey")

    out.section("Findings of the paper, checked")
    out.note(
        "Each statement the paper makes about its figures, evaluated on the daisy-chain runs and on the "
        f"dumbbell means over {len(seeds)} seeds. See docs/reproductions.md for the discussion of every "
        "difference."
    )
    out.table("findings", findings_table(daisy_table.set_index("technique"), means), "The paper's findings and ours.")


PAPER = Paper(
    id="ance",
    title="Sup, de Moraes, Bauchspiess: Acknowledge-Based Non-Congestion Estimation (ANCE)",
    runs=runs,
    analyze=analyze,
)
