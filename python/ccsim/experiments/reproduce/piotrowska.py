"""Paper 002 (Piotrowska, "On Cross-Layer Interactions for Congestion Control in the Internet",
Appl. Sci. 2021): Tables 2-13 and the queue Figures 2-9.

Two dumbbells (``scenarios/papers/piotrowska/data_center.toml``, 1 Gbit/s, RTTs of 40-400 us,
and ``access_link.toml``, 100 Mbit/s, the RTTs of Table 1), a 900-packet bottleneck that is
DropTail, PIE or CoDel (``queues.toml``), 9, 90 or 900 long-lived flows from N1-N3 to N4-N6
with one congestion control (NewReno with SACK, CUBIC, Compound: "common TCP") or N1 NewReno,
N2 Compound and N3 CUBIC ("mixed TCPs"); 100 s, statistics from 30 s.

CUBIC's Reno-friendly region (``tcp_friendliness``) is on in the tables, as RFC 9438 and Linux
have it; the runs keyed ``cubicnf`` and ``mixednf`` repeat every CUBIC cell and every mixed run
with it off (the add-on ns-3 CUBIC the paper used may have lacked it) and the
``cubic_friendliness`` table says which setting is nearer the published numbers.

The connection handshake (TCP ``handshake``) is the scenario files' setting in the tables; the
runs keyed ``-hs`` (handshake on) or ``-nohs`` (off), whichever the files do not set, repeat every
common-TCP cell and every mixed run with the other setting, and the ``handshake`` tables say which
is nearer the paper, whose DropTail lock-outs it puts down to "connections not even established".
``runs(quick, handshake=True)`` gives the whole matrix with handshakes.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ...results.metrics import jain
from . import Artifacts, Paper, Run, load_scenario

TOPOLOGIES = {"dc": "data_center", "al": "access_link"}
TOPOLOGY_TITLES = {"dc": "Data Center", "al": "Access Link"}
QUEUES = ("droptail", "pie", "codel")
QUEUE_LABELS = {"droptail": "DT", "pie": "PIE", "codel": "CoDel"}
# Congestion controls of the common-TCP runs; "cubicnf" is CUBIC without the Reno-friendly region.
CCS: dict[str, Any] = {
    "newreno": "newreno",
    "cubic": {"kind": "cubic", "tcp_friendliness": True},
    "compound": "compound",
    "cubicnf": {"kind": "cubic", "tcp_friendliness": False},
}
CC_LABELS = {"newreno": "NReno", "cubic": "Cubic", "compound": "C-TCP", "cubicnf": "Cubic (no friendliness)"}
COMMON = ("newreno", "cubic", "compound")
# Mixed TCPs: the congestion control of each source node (paper, Section 5).
MIXED = {"N1": "newreno", "N2": "compound", "N3": "cubic"}
LOADS = ("UC", "MC", "HC")
LOAD_TITLES = {"UC": "uncongested", "MC": "mild congestion", "HC": "heavy congestion"}
# Flows per source-sink pair: 9 / 90 / 900 flows over the nine pairs (paper).
FLOWS_PER_PAIR = {"UC": 1, "MC": 10, "HC": 100}

# The transport settings of the handshake's two sides. With a handshake the SYN is timed by ns-3's
# ConnTimeout, 3 s, doubling, and given up after its ConnCount of 6 retransmissions (ns-3.30's
# TcpSocket defaults): the initial RTO then times the SYN only, since the SYN-ACK gives the first
# RTT sample. Without one, the initial RTO is ns-3's initial RTT estimate, 1 s.
HANDSHAKE_SETTINGS: dict[bool, dict[str, Any]] = {
    True: {"handshake": True, "initial_rto": "3s", "syn_retries": 6},
    False: {"handshake": False, "initial_rto": "1s"},
}
HANDSHAKE_SUFFIX = {True: "-hs", False: "-nohs"}

# Timing of the full runs (paper) and of --quick (seconds of simulated time): the quick Data
# Center runs are short because 1 Gbit/s costs about 0.1-0.2 s of CPU per simulated second.
FULL = {"dc": ("100s", "30s", "0s..3s"), "al": ("100s", "30s", "0s..3s")}
QUICK = {"dc": ("3s", "1s", "0s..500ms"), "al": ("16s", "6s", "0s..2s")}


def _load(name: str) -> dict[str, Any]:
    return load_scenario("piotrowska", name)


def handshake_default() -> bool:
    """Whether the scenario files open connections with a handshake: the setting of Tables 2-13."""
    return bool(_load("access_link.toml")["flows"][0]["transport"].get("handshake", False))


def scenario(
    topo: str, queue: str, ccs: Mapping[str, Any], load: str, quick: bool, handshake: bool | None = None
) -> dict[str, Any]:
    """The scenario of one run: ``ccs`` maps each source node (flow group N1..N3) to its
    congestion control; ``handshake`` overrides the scenario files' setting (``HANDSHAKE_SETTINGS``)."""
    data = _load(f"{TOPOLOGIES[topo]}.toml")
    data["topology"]["bottleneck"]["queue"] = copy.deepcopy(_load("queues.toml")[TOPOLOGIES[topo]][queue])
    duration, warmup, start = (QUICK if quick else FULL)[topo]
    data["simulation"]["duration"] = duration
    data["simulation"]["warmup"] = warmup
    for flow in data["flows"]:
        flow["count"] = FLOWS_PER_PAIR[load]
        flow["cc"] = copy.deepcopy(ccs[flow["group"]])
        flow["start"] = start
        if handshake is not None:
            flow["transport"] = {**flow["transport"], **HANDSHAKE_SETTINGS[handshake]}
    return data


def _key(topo: str, mix: str, load: str, queue: str) -> str:
    return f"{topo}-{mix}-{load.lower()}-{queue}"


def runs(quick: bool, handshake: bool | None = None) -> list[Run]:
    """The reproduction's runs: the matrix with the scenario files' handshake setting, or
    ``handshake``'s, plus the comparison with the other setting (none if ``handshake`` is given)."""
    out = []
    other = not handshake_default()
    for topo in TOPOLOGIES:
        for load in LOADS:
            for queue in QUEUES:
                for cc, spec in CCS.items():
                    if cc == "cubicnf" and quick and topo == "dc":
                        continue  # the quick form compares the CUBIC variants on the Access Link only
                    ccs = dict.fromkeys(MIXED, spec)
                    out.append(Run(_key(topo, cc, load, queue), scenario(topo, queue, ccs, load, quick, handshake)))
                    if cc in COMMON and handshake is None and not (quick and topo == "dc"):
                        key = _key(topo, cc + HANDSHAKE_SUFFIX[other], load, queue)
                        out.append(Run(key, scenario(topo, queue, ccs, load, quick, other)))
                for mix, cubic in (("mixed", "cubic"), ("mixednf", "cubicnf")):
                    if mix == "mixednf" and quick and topo == "dc":
                        continue
                    ccs = {node: CCS[cubic if cc == "cubic" else cc] for node, cc in MIXED.items()}
                    out.append(Run(_key(topo, mix, load, queue), scenario(topo, queue, ccs, load, quick, handshake)))
                    if mix == "mixed" and handshake is None and not (quick and topo == "dc"):
                        key = _key(topo, mix + HANDSHAKE_SUFFIX[other], load, queue)
                        out.append(Run(key, scenario(topo, queue, ccs, load, quick, other)))
    return out


# --- published values ---------------------------------------------------------------------------


def _triples(text: str) -> dict[tuple[str, str, str], tuple[float, float, float]]:
    """Quartile tables (2, 6): 'LOAD CC q1/q2/q3 (DT) q1/q2/q3 (PIE) q1/q2/q3 (CoDel)' per line."""
    out = {}
    for line in text.strip().splitlines():
        load, cc, *cells = line.split()
        for queue, cell in zip(QUEUES, cells):
            q1, q2, q3 = (float(v) for v in cell.split("/"))
            out[(load, cc, queue)] = (q1, q2, q3)
    return out


def _singles(text: str) -> dict[tuple[str, str, str], float]:
    out = {}
    for line in text.strip().splitlines():
        load, cc, *cells = line.split()
        for queue, cell in zip(QUEUES, cells):
            out[(load, cc, queue)] = float(cell)
    return out


def _queue_cells(text: str) -> dict[tuple[str, str, str], tuple[float, float]]:
    """Queue tables (4, 8): 'LOAD CC mean sd mean sd mean sd'."""
    out = {}
    for line in text.strip().splitlines():
        load, cc, *cells = line.split()
        for k, queue in enumerate(QUEUES):
            out[(load, cc, queue)] = (float(cells[2 * k]), float(cells[2 * k + 1]))
    return out


# Table 2 (Data Center) and Table 6 (Access Link): quartiles of the flows' throughput (Mbit/s).
PAPER_QUARTILES = {
    "dc": _triples("""
UC newreno 56.72/83.54/145.79 100.83/102.17/105.78 98.32/99.55/108.67
UC cubic 49.91/84.06/138.36 96.60/100.70/109.61 98.67/99.84/108.67
UC compound 85.47/107.47/118.63 86.29/89.57/130.91 81.03/90.47/136.61
MC newreno 2.40/5.65/14.15 9.98/10.45/10.85 10.02/10.44/10.82
MC cubic 0.00/0.04/23.41 9.93/10.26/10.89 10.07/10.46/10.84
MC compound 7.52/10.09/11.14 10.05/10.41/10.91 10.00/10.43/10.79
HC newreno 0.00/0.00/0.00 0.95/1.05/1.14 0.98/1.06/1.14
HC cubic 0.00/0.00/0.00 0.94/1.04/1.16 0.94/1.05/1.17
HC compound 0.00/0.00/0.02 0.96/1.05/1.14 0.98/1.06/1.14
"""),
    "al": _triples("""
UC newreno 2.74/5.50/14.26 5.41/6.51/12.83 4.79/6.80/13.98
UC cubic 4.78/9.25/16.48 7.34/8.62/11.68 6.85/9.63/12.70
UC compound 8.28/10.63/11.64 5.67/10.93/14.88 6.31/11.57/13.42
MC newreno 0.53/0.78/1.06 0.48/0.70/1.20 0.52/0.74/1.17
MC cubic 0.00/0.01/1.93 0.68/0.82/1.14 0.72/0.90/1.16
MC compound 0.56/0.96/1.32 0.47/0.67/1.19 0.51/0.71/1.15
HC newreno 0.05/0.07/0.12 0.08/0.10/0.13 0.08/0.10/0.12
HC cubic 0.05/0.09/0.13 0.08/0.09/0.13 0.08/0.10/0.12
HC compound 0.06/0.08/0.12 0.08/0.10/0.13 0.08/0.10/0.12
"""),
}
# Table 3 and Table 7: Jain's index over all flows.
PAPER_JAIN = {
    "dc": _singles("""
UC newreno 0.75 1.00 0.99
UC cubic 0.70 1.00 1.00
UC compound 0.97 0.96 0.94
MC newreno 0.48 1.00 1.00
MC cubic 0.25 0.99 1.00
MC compound 0.88 1.00 1.00
HC newreno 0.16 0.98 0.99
HC cubic 0.12 0.97 0.98
HC compound 0.19 0.98 0.99
"""),
    "al": _singles("""
UC newreno 0.41 0.59 0.61
UC cubic 0.69 0.86 0.84
UC compound 0.94 0.82 0.89
MC newreno 0.54 0.61 0.65
MC cubic 0.24 0.76 0.80
MC compound 0.78 0.59 0.62
HC newreno 0.60 0.87 0.90
HC cubic 0.65 0.87 0.91
HC compound 0.68 0.89 0.91
"""),
}
# Table 4 and Table 8: mean (standard deviation) of the bottleneck queue, packets.
PAPER_QUEUE = {
    "dc": _queue_cells("""
UC newreno 814 69 169 41 173 10
UC cubic 859 47 168 26 172 4
UC compound 845 39 167 23 162 14
MC newreno 873 33 166 30 222 28
MC cubic 900 1 167 22 216 28
MC compound 877 17 167 24 204 18
HC newreno 899 1 168 59 724 207
HC cubic 899 1 168 47 716 224
HC compound 899 8 169 52 732 214
"""),
    "al": _queue_cells("""
UC newreno 727 142 34 27 29 23
UC cubic 772 85 48 26 50 18
UC compound 167 126 23 20 25 20
MC newreno 832 50 54 26 94 36
MC cubic 899 1 52 22 91 30
MC compound 830 46 42 17 68 18
HC newreno 891 10 44 21 588 272
HC cubic 894 7 43 20 656 280
HC compound 893 8 45 21 592 281
"""),
}
# Table 5 and Table 9: drop ratio at the bottleneck, percent.
PAPER_DROPS = {
    "dc": _singles("""
UC newreno 0.02 0.08 0.06
UC cubic 0.03 0.06 0.06
UC compound 0.00 0.02 0.02
MC newreno 0.40 1.64 1.45
MC cubic 0.13 1.76 1.54
MC compound 0.34 1.56 1.43
HC newreno 0.67 6.53 5.78
HC cubic 0.48 6.98 6.46
HC compound 0.47 6.86 6.04
"""),
    "al": _singles("""
UC newreno 0.06 0.03 0.02
UC cubic 0.26 0.12 0.07
UC compound 0.01 0.01 0.01
MC newreno 0.75 0.85 0.71
MC cubic 0.89 1.31 1.15
MC compound 0.32 0.48 0.40
HC newreno 11.03 15.82 11.44
HC cubic 13.68 15.54 12.38
HC compound 10.92 15.89 11.68
"""),
}


def _mixed_cells(text: str) -> dict[tuple[str, str, str], tuple[float, float, float, float]]:
    """Tables 10, 12: 'LOAD CC avg sd bd ji' x 3 queues."""
    out = {}
    for line in text.strip().splitlines():
        load, cc, *cells = line.split()
        for k, queue in enumerate(QUEUES):
            avg, sd, bd, ji = (float(v) for v in cells[4 * k : 4 * k + 4])
            out[(load, cc, queue)] = (avg, sd, bd, ji)
    return out


# Table 10 (Data Center) and Table 12 (Access Link), mixed TCPs: per congestion control the mean
# (standard deviation) of its flows' throughput (Mbit/s), its share of the total (BD, %) and
# Jain's index among its flows; "all" over every flow. The paper prints BD "<1" (rendered ">1")
# for the starved NewReno and C-TCP flows of the heavily congested DropTail Data Center and
# "~99" for CUBIC there: read as 1 and 99. Its "7,52" is 7.52.
PAPER_MIXED = {
    "dc": _mixed_cells("""
UC newreno 188 37 61 0.97 128 6 42 1.00 117 9 38 1.00
UC cubic 86 5 28 1.00 109 8 35 1.00 112 5 36 1.00
UC compound 34 15 11 0.89 71 1 23 1.00 78 6 25 1.00
UC all 103 71 100 0.70 103 26 100 0.95 103 19 100 0.97
MC newreno 21.44 7.52 69 0.89 9.85 0.48 31 1.00 9.84 0.50 31 1.00
MC cubic 4.55 1.02 15 0.95 10.97 0.51 35 1.00 10.98 0.39 35 1.00
MC compound 5.30 1.95 17 0.88 10.47 0.36 33 1.00 10.46 0.37 33 1.00
MC all 10.43 9 100 0.57 10.43 0.6 100 1.00 10.43 0.6 100 1.00
HC newreno 0 0 1 0.15 0.91 0.09 29 0.99 0.95 0.08 30 0.99
HC cubic 3.17 2.24 99 0.67 1.21 0.11 38 0.99 1.16 0.10 37 0.99
HC compound 0 0 1 0.01 1.06 0.09 33 0.99 1.06 0.07 33 1.00
HC all 1.06 2 100 0.22 1.06 0.15 100 0.98 1.06 0.12 100 0.99
"""),
    "al": _mixed_cells("""
UC newreno 16.24 16.28 52 0.60 11.84 11.48 38 0.61 10.93 10.27 35 0.63
UC cubic 14.07 5.99 45 0.89 13.81 3.60 44 0.96 15.51 2.66 50 0.98
UC compound 0.90 0.33 3 0.92 5.58 2.96 18 0.84 4.77 3.63 15 0.72
UC all 10.40 11.26 100 0.49 10.41 7.23 100 0.70 10.40 7.30 100 0.70
MC newreno 1.17 0.95 37 0.61 1.47 1.17 46 0.62 1.42 1.04 45 0.66
MC cubic 1.67 0.52 53 0.91 1.01 0.21 32 0.96 1.07 0.21 34 0.96
MC compound 0.33 0.10 10 0.92 0.70 0.41 22 0.75 0.68 0.36 21 0.79
MC all 1.06 0.83 100 0.62 1.06 0.79 100 0.65 1.06 0.71 100 0.69
HC newreno 0.17 0.10 54 0.76 0.12 0.05 38 0.86 0.12 0.05 37 0.86
HC cubic 0.09 0.03 30 0.89 0.09 0.02 28 0.94 0.10 0.02 33 0.95
HC compound 0.05 0.01 16 0.97 0.11 0.04 33 0.90 0.09 0.02 30 0.94
HC all 0.11 0.08 100 0.65 0.11 0.04 100 0.88 0.11 0.04 100 0.90
"""),
}
# Table 11 (Data Center) and Table 13 (Access Link), mixed TCPs: queue mean, sd, drop ratio (%).
PAPER_MIXED_QUEUE = {
    "dc": {
        ("UC", "droptail"): (825, 57, 0.07),
        ("UC", "pie"): (168, 34, 0.08),
        ("UC", "codel"): (168, 11, 0.08),
        ("MC", "droptail"): (881, 20, 0.56),
        ("MC", "pie"): (167, 27, 1.67),
        ("MC", "codel"): (209, 22, 1.49),
        ("HC", "droptail"): (899, 1, 0.80),
        ("HC", "pie"): (169, 52, 6.86),
        ("HC", "codel"): (723, 217, 6.12),
    },
    "al": {
        ("UC", "droptail"): (741, 114, 0.11),
        ("UC", "pie"): (38, 29, 0.03),
        ("UC", "codel"): (35, 24, 0.03),
        ("MC", "droptail"): (856, 33, 0.87),
        ("MC", "pie"): (58, 24, 0.91),
        ("MC", "codel"): (89, 32, 0.82),
        ("HC", "droptail"): (893, 8, 12.11),
        ("HC", "pie"): (44, 21, 15.84),
        ("HC", "codel"): (632, 281, 11.98),
    },
}

TABLE_NUMBERS = {"dc": (2, 3, 4, 5, 10, 11), "al": (6, 7, 8, 9, 12, 13)}
FIGURE_NUMBERS = {"dc": {"UC": 2, "MC": 3, "HC": 4, "mixed": 8}, "al": {"UC": 5, "MC": 6, "HC": 7, "mixed": 9}}


# --- measurements --------------------------------------------------------------------------------


def flow_mbps(result: Any) -> pd.Series:
    """Each flow's goodput over the measured window, Mbit/s."""
    return result.flows["goodput_bps"] / 1e6


def bottleneck(result: Any) -> pd.Series:
    return result.queues.set_index("name").loc["A->B"]


def router_drop_ratio(result: Any) -> float:
    """Drops at router A over every packet A forwards or drops (data towards B and the ACKs it
    passes back to N1-N3): the paper's "drop ratio at router A" if it counted ACKs too."""
    queues = result.queues
    at_a = queues[queues["from"] == "A"]
    return float(at_a["drops"].sum() / at_a["arrivals"].sum()) if at_a["arrivals"].sum() > 0 else float("nan")


def analyze(results: Mapping[str, Any], out: Artifacts, quick: bool) -> None:
    if quick:
        out.section("Quick form")
        (dc_d, dc_w, _), (al_d, al_w, _) = QUICK["dc"], QUICK["al"]
        out.note(
            f"This is the quick form: the Data Center runs last {dc_d} (statistics from {dc_w}) "
            f"and the Access Link runs {al_d} (from {al_w}) instead of 100 s (from 30 s), with "
            "the paper's 9/90/900 flows; CUBIC without the Reno-friendly region is run on the "
            "Access Link only. The Data Center runs end before the queues settle (the initial "
            "slow-start overshoot stalls flows until their 1 s RTO, and PIE takes seconds to "
            "raise its drop probability), so their numbers are not the paper's steady state; "
            "docs/reproductions.md reports the full runs."
        )
    for topo in TOPOLOGIES:
        _common_tables(results, out, topo)
        _mixed_tables(results, out, topo)
    _friendliness_table(results, out, quick)
    _handshake_tables(results, out, quick)
    _figures(results, out)


def _common_tables(results: Mapping[str, Any], out: Artifacts, topo: str) -> None:
    t_q, t_j, t_len, t_drop, _, _ = TABLE_NUMBERS[topo]
    name = TOPOLOGY_TITLES[topo]
    quart, jains, queues, drops = [], [], [], []
    for load in LOADS:
        for cc in COMMON:
            for queue in QUEUES:
                r = results[_key(topo, cc, load, queue)]
                mbps = flow_mbps(r)
                q = bottleneck(r)
                p1, p2, p3 = PAPER_QUARTILES[topo][(load, cc, queue)]
                cell = {"load": load, "tcp": CC_LABELS[cc], "queue": QUEUE_LABELS[queue]}
                quart.append(
                    {
                        **cell,
                        "q1_mbps": mbps.quantile(0.25),
                        "paper_q1_mbps": p1,
                        "median_mbps": mbps.quantile(0.5),
                        "paper_median_mbps": p2,
                        "q3_mbps": mbps.quantile(0.75),
                        "paper_q3_mbps": p3,
                        "mean_mbps": mbps.mean(),
                        "total_mbps": mbps.sum(),
                        "idle_flows": int((mbps < 0.01).sum()),
                    }
                )
                jains.append({**cell, "jain": jain(mbps), "paper_jain": PAPER_JAIN[topo][(load, cc, queue)]})
                pm, ps = PAPER_QUEUE[topo][(load, cc, queue)]
                queues.append(
                    {
                        **cell,
                        "mean_pkts": q["mean_len_pkts"],
                        "paper_mean_pkts": pm,
                        "sd_pkts": q["sd_len_pkts"],
                        "paper_sd_pkts": ps,
                    }
                )
                drops.append(
                    {
                        **cell,
                        "drop_ratio_pct": 100 * q["drop_ratio"],
                        "paper_drop_ratio_pct": PAPER_DROPS[topo][(load, cc, queue)],
                        "router_drop_ratio_pct": 100 * router_drop_ratio(r),
                        "drops": int(q["drops"]),
                        "timeouts": int(r.flows["timeouts"].sum()),
                    }
                )
    out.section(f"Table {t_q}: quartiles of the flows' throughput, {name}, common TCPs")
    out.note(_FINDINGS[f"{topo}-quartiles"])
    out.table(
        f"table_{t_q}",
        pd.DataFrame(quart),
        "Per-flow goodput (application bytes delivered in order over the measured window), Mbit/s; "
        "`idle_flows`: flows under 10 kbit/s.",
    )
    out.section(f"Table {t_j}: Jain's index, {name}, common TCPs")
    out.note(_FINDINGS[f"{topo}-jain"])
    out.table(f"table_{t_j}", pd.DataFrame(jains), "Jain's index of the flows' goodput over all flows.")
    out.section(f"Table {t_len}: bottleneck queue mean (sd), {name}, common TCPs")
    out.note(_FINDINGS[f"{topo}-queue"])
    out.table(
        f"table_{t_len}",
        pd.DataFrame(queues),
        "Time-weighted mean and standard deviation of the A->B queue (packets, the one in "
        "transmission excluded) over the measured window.",
    )
    out.section(f"Table {t_drop}: drop ratio at the bottleneck, {name}, common TCPs")
    out.note(_FINDINGS[f"{topo}-drops"])
    out.table(
        f"table_{t_drop}",
        pd.DataFrame(drops),
        "Packets dropped by the A->B queue over packets offered to it (measured window), percent; "
        "`router_drop_ratio_pct`: the same drops over every packet router A handles (data and "
        "ACKs); `timeouts`: retransmission timeouts of all flows.",
    )


def _mixed_tables(results: Mapping[str, Any], out: Artifacts, topo: str) -> None:
    _, _, _, _, t_mix, t_mixq = TABLE_NUMBERS[topo]
    name = TOPOLOGY_TITLES[topo]
    rows, qrows = [], []
    for load in LOADS:
        for queue in QUEUES:
            r = results[_key(topo, "mixed", load, queue)]
            mbps = flow_mbps(r)
            groups = r.flows["group"]
            total = mbps.sum()
            for cc in (*MIXED.values(), "all"):
                sel = mbps if cc == "all" else mbps[groups == _node_of(cc)]
                pa, ps, pb, pj = PAPER_MIXED[topo][(load, cc, queue)]
                rows.append(
                    {
                        "load": load,
                        "tcp": "All" if cc == "all" else CC_LABELS[cc],
                        "queue": QUEUE_LABELS[queue],
                        "avg_mbps": sel.mean(),
                        "paper_avg_mbps": pa,
                        "sd_mbps": sel.std(ddof=0),
                        "paper_sd_mbps": ps,
                        "bd_pct": 100 * sel.sum() / total if total > 0 else float("nan"),
                        "paper_bd_pct": pb,
                        "jain": jain(sel),
                        "paper_jain": pj,
                    }
                )
            q = bottleneck(r)
            pm, psd, pdr = PAPER_MIXED_QUEUE[topo][(load, queue)]
            qrows.append(
                {
                    "load": load,
                    "queue": QUEUE_LABELS[queue],
                    "mean_pkts": q["mean_len_pkts"],
                    "paper_mean_pkts": pm,
                    "sd_pkts": q["sd_len_pkts"],
                    "paper_sd_pkts": psd,
                    "drop_ratio_pct": 100 * q["drop_ratio"],
                    "paper_drop_ratio_pct": pdr,
                    "router_drop_ratio_pct": 100 * router_drop_ratio(r),
                }
            )
    out.section(f"Table {t_mix}: throughput, bandwidth share and fairness, {name}, mixed TCPs")
    out.note(_FINDINGS[f"{topo}-mixed"])
    out.table(
        f"table_{t_mix}",
        pd.DataFrame(rows),
        "N1 runs NewReno, N2 Compound, N3 CUBIC. Per congestion control: mean and standard "
        "deviation (population) of its flows' goodput, its share of the total (BD) and Jain's "
        "index among its flows; `All`: every flow. The paper prints BD '<1' and '~99' in the "
        "heavily congested DropTail Data Center (read as 1 and 99).",
    )
    out.section(f"Table {t_mixq}: queue mean (sd) and drop ratio, {name}, mixed TCPs")
    out.note(_FINDINGS[f"{topo}-mixedq"])
    out.table(
        f"table_{t_mixq}",
        pd.DataFrame(qrows),
        "A->B queue over the measured window; drop ratio in percent (`router_drop_ratio_pct`: over "
        "data and ACKs at router A).",
    )


def _node_of(cc: str) -> str:
    return next(node for node, c in MIXED.items() if c == cc)


def _friendliness_table(results: Mapping[str, Any], out: Artifacts, quick: bool) -> None:
    """CUBIC with and without the Reno-friendly region against the paper's CUBIC rows: the
    common-TCP cells (Tables 2-9) and CUBIC's share of the mixed runs (Tables 10, 12)."""
    rows = []
    for topo in TOPOLOGIES:
        for load in LOADS:
            for queue in QUEUES:
                variants = {"on": ("cubic", "mixed"), "off": ("cubicnf", "mixednf")}
                keys = {s: [_key(topo, v, load, queue) for v in vs] for s, vs in variants.items()}
                if not all(k in results for ks in keys.values() for k in ks):
                    continue
                row: dict[str, Any] = {"scenario": TOPOLOGY_TITLES[topo], "load": load, "queue": QUEUE_LABELS[queue]}
                for suffix, (common, mixed) in keys.items():
                    r = results[common]
                    mbps = flow_mbps(r)
                    row[f"median_mbps_{suffix}"] = mbps.median()
                    row[f"jain_{suffix}"] = jain(mbps)
                    row[f"queue_pkts_{suffix}"] = bottleneck(r)["mean_len_pkts"]
                    row[f"drop_pct_{suffix}"] = 100 * bottleneck(r)["drop_ratio"]
                    m = results[mixed]
                    share = flow_mbps(m)
                    row[f"mixed_cubic_bd_pct_{suffix}"] = (
                        100 * share[m.flows["group"] == _node_of("cubic")].sum() / share.sum()
                    )
                row["paper_median_mbps"] = PAPER_QUARTILES[topo][(load, "cubic", queue)][1]
                row["paper_jain"] = PAPER_JAIN[topo][(load, "cubic", queue)]
                row["paper_queue_pkts"] = PAPER_QUEUE[topo][(load, "cubic", queue)][0]
                row["paper_drop_pct"] = PAPER_DROPS[topo][(load, "cubic", queue)]
                row["paper_mixed_cubic_bd_pct"] = PAPER_MIXED[topo][(load, "cubic", queue)][2]
                row["fair_share_mbps"] = flow_mbps(results[keys["on"][0]]).mean()
                rows.append(row)
    frame = pd.DataFrame(rows)
    out.section("CUBIC's Reno-friendly region: which setting matches the paper")
    errors = friendliness_errors(frame)
    verdicts = [
        f"{metric}: {e['on']:.3f} on, {e['off']:.3f} off ({'on' if e['on'] <= e['off'] else 'off'} is nearer)"
        for metric, e in errors.items()
    ]
    out.note(
        "The paper's CUBIC was an add-on for ns-3.30 [32], which may lack RFC 9438's Reno-friendly "
        "region. Every CUBIC cell and every mixed run is run with `tcp_friendliness` on (Tables 2-13 "
        "above) and off. Mean errors against the paper over "
        f"{len(frame)} cells" + (" (Access Link only in the quick form)" if quick else "") + " — median "
        "throughput: |ours - paper| / fair share; Jain: absolute difference; queue: absolute "
        "difference / 900 packets; drop ratio: |log10(ours / paper)|; CUBIC's share of the mixed "
        "runs: absolute difference in percentage points / 100 — " + "; ".join(verdicts) + "."
    )
    out.table(
        "cubic_friendliness",
        frame,
        "CUBIC with the Reno-friendly region on and off, against the paper's CUBIC rows (Tables 2-9) "
        "and CUBIC's share (BD) of the mixed runs (Tables 10 and 12).",
    )


def friendliness_errors(frame: pd.DataFrame) -> dict[str, dict[str, float]]:
    """Mean error of each metric against the paper, with the Reno-friendly region on and off."""
    out: dict[str, dict[str, float]] = {}
    for metric in ("median_mbps", "jain", "queue_pkts", "drop_pct", "mixed_cubic_bd_pct"):
        paper = frame[f"paper_{metric}"]
        out[metric] = {}
        for s in ("on", "off"):
            ours = frame[f"{metric}_{s}"]
            if metric == "median_mbps":
                err = (ours - paper).abs() / frame["fair_share_mbps"]
            elif metric == "drop_pct":
                # the ratios span three orders of magnitude; 0.001 % is the floor of both
                err = (np.log10(ours.clip(lower=1e-3)) - np.log10(paper.clip(lower=1e-3))).abs()
            else:
                err = (ours - paper).abs() / {"jain": 1.0, "queue_pkts": 900.0, "mixed_cubic_bd_pct": 100.0}[metric]
            out[metric][s] = float(err.mean())
    return out


def _handshake_key(topo: str, mix: str, load: str, queue: str, on: bool) -> str:
    """The run of this cell with the handshake on or off: the table's own, or the comparison's."""
    return _key(topo, mix if on == handshake_default() else mix + HANDSHAKE_SUFFIX[on], load, queue)


def _handshake_tables(results: Mapping[str, Any], out: Artifacts, quick: bool) -> None:
    """Every common-TCP cell (Tables 2-9) and every mixed run (Tables 10, 12) with the handshake
    on and off, against the paper."""
    rows, mixed_rows = [], []
    for topo in TOPOLOGIES:
        for load in LOADS:
            for queue in QUEUES:
                cell = {"scenario": TOPOLOGY_TITLES[topo], "load": load, "queue": QUEUE_LABELS[queue]}
                for cc in COMMON:
                    keys = {s: _handshake_key(topo, cc, load, queue, on) for s, on in (("on", True), ("off", False))}
                    if not all(k in results for k in keys.values()):
                        continue
                    row: dict[str, Any] = {**cell, "tcp": CC_LABELS[cc]}
                    for suffix, key in keys.items():
                        r = results[key]
                        mbps = flow_mbps(r)
                        row[f"q1_mbps_{suffix}"] = mbps.quantile(0.25)
                        row[f"median_mbps_{suffix}"] = mbps.median()
                        row[f"idle_flows_{suffix}"] = int((mbps < 0.01).sum())
                        row[f"jain_{suffix}"] = jain(mbps)
                        row[f"queue_pkts_{suffix}"] = bottleneck(r)["mean_len_pkts"]
                        row[f"drop_pct_{suffix}"] = 100 * bottleneck(r)["drop_ratio"]
                    flows = results[keys["on"]].flows
                    row["connected_on"] = int(flows["connect_s"].notna().sum())
                    row["connect_mean_s_on"] = flows["connect_s"].mean()
                    row["syn_retransmissions_on"] = int(flows["syn_retransmissions"].sum())
                    p1, p2, _ = PAPER_QUARTILES[topo][(load, cc, queue)]
                    row["paper_q1_mbps"], row["paper_median_mbps"] = p1, p2
                    row["paper_jain"] = PAPER_JAIN[topo][(load, cc, queue)]
                    row["paper_queue_pkts"] = PAPER_QUEUE[topo][(load, cc, queue)][0]
                    row["paper_drop_pct"] = PAPER_DROPS[topo][(load, cc, queue)]
                    row["fair_share_mbps"] = flow_mbps(results[keys["on"]]).mean()
                    rows.append(row)
                keys = {s: _handshake_key(topo, "mixed", load, queue, on) for s, on in (("on", True), ("off", False))}
                if not all(k in results for k in keys.values()):
                    continue
                mrow: dict[str, Any] = dict(cell)
                for suffix, key in keys.items():
                    m = results[key]
                    mbps = flow_mbps(m)
                    for cc in MIXED.values():
                        share = mbps[m.flows["group"] == _node_of(cc)].sum() / mbps.sum()
                        mrow[f"{CC_LABELS[cc]}_bd_pct_{suffix}"] = 100 * share
                    mrow[f"jain_{suffix}"] = jain(mbps)
                for cc in MIXED.values():
                    mrow[f"paper_{CC_LABELS[cc]}_bd_pct"] = PAPER_MIXED[topo][(load, cc, queue)][2]
                mrow["paper_jain"] = PAPER_MIXED[topo][(load, "all", queue)][3]
                mixed_rows.append(mrow)
    frame, mixed = pd.DataFrame(rows), pd.DataFrame(mixed_rows)
    errors = handshake_errors(frame, mixed)
    default = "on" if handshake_default() else "off"
    verdicts = [
        f"{metric}: {e['on']:.3f} on, {e['off']:.3f} off ({'on' if e['on'] <= e['off'] else 'off'} is nearer)"
        for metric, e in errors.items()
    ]
    out.section("The connection handshake: which setting matches the paper")
    out.note(
        "The paper puts its DropTail lock-outs down to connections 'not even established'. Every "
        f"common-TCP cell and every mixed run is run with the TCP handshake on and off (Tables 2-13 "
        f"above: {default}); with it the SYN is timed as ns-3.30 times it (3 s, doubling, given up "
        "after 6 retransmissions). Mean errors against the paper over "
        f"{len(frame)} cells and {len(mixed)} mixed runs"
        + (" (Access Link only in the quick form)" if quick else "")
        + " — first quartile and median throughput: |ours - paper| / fair share; lock-outs: cells where "
        "the paper's first quartile is 0 and ours is not, or the reverse; Jain: absolute difference; queue: "
        "absolute difference / 900 packets; drop ratio: |log10(ours / paper)|; mixed runs' shares: "
        "absolute difference in percentage points / 100, over the three TCPs — " + "; ".join(verdicts) + "."
    )
    out.table(
        "handshake",
        frame,
        "Common TCPs with the handshake on and off, against the paper (Tables 2-9); `idle_flows`: "
        "flows under 10 kbit/s; `connected_on`: flows whose connection opened by the end of the run; "
        "`connect_mean_s_on`: their mean time from first SYN to SYN-ACK; `syn_retransmissions_on`: "
        "SYNs sent again, all flows.",
    )
    out.table(
        "handshake_mixed",
        mixed,
        "Mixed TCPs with the handshake on and off: each TCP's share (BD) of the total and Jain's index "
        "over all flows, against the paper (Tables 10 and 12).",
    )


def handshake_errors(frame: pd.DataFrame, mixed: pd.DataFrame) -> dict[str, dict[str, float]]:
    """Mean error of each metric against the paper, with the handshake on and off."""
    out: dict[str, dict[str, float]] = {}
    for metric in ("q1_mbps", "median_mbps", "lockouts", "jain", "queue_pkts", "drop_pct", "mixed_bd_pct"):
        out[metric] = {}
        for s in ("on", "off"):
            if metric == "lockouts":
                err = (frame[f"q1_mbps_{s}"] < 0.01) != (frame["paper_q1_mbps"] == 0)
            elif metric == "mixed_bd_pct":
                tcps = [CC_LABELS[cc] for cc in MIXED.values()]
                err = sum((mixed[f"{t}_bd_pct_{s}"] - mixed[f"paper_{t}_bd_pct"]).abs() for t in tcps) / 300
            elif metric.endswith("_mbps"):
                err = (frame[f"{metric}_{s}"] - frame[f"paper_{metric}"]).abs() / frame["fair_share_mbps"]
            elif metric == "drop_pct":
                ours, paper = frame[f"drop_pct_{s}"], frame["paper_drop_pct"]
                err = (np.log10(ours.clip(lower=1e-3)) - np.log10(paper.clip(lower=1e-3))).abs()
            else:
                scale = {"jain": 1.0, "queue_pkts": 900.0}[metric]
                err = (frame[f"{metric}_{s}"] - frame[f"paper_{metric}"]).abs() / scale
            out[metric][s] = float(np.mean(err)) if len(err) else float("nan")
    return out


def _figures(results: Mapping[str, Any], out: Artifacts) -> None:
    import matplotlib.pyplot as plt

    column = "queue.A->B.len_pkts"
    colors = {"droptail": "tab:red", "pie": "tab:blue", "codel": "tab:green"}
    for topo in TOPOLOGIES:
        for what, number in FIGURE_NUMBERS[topo].items():
            panels = (
                [(f"({'abc'[i]}) {CC_LABELS[cc]}", cc, what) for i, cc in enumerate(COMMON)]
                if what != "mixed"
                else [(f"({'abc'[i]}) {LOAD_TITLES[load]}", "mixed", load) for i, load in enumerate(LOADS)]
            )
            out.section(
                f"Figure {number}: queue length, {TOPOLOGY_TITLES[topo]}, "
                + ("mixed TCPs" if what == "mixed" else f"common TCPs, {LOAD_TITLES[what]}")
            )
            fig, axes = plt.subplots(1, 3, figsize=(13, 3.2), sharey=True)
            for ax, (title, mix, load) in zip(axes, panels):
                for queue in QUEUES:
                    r = results[_key(topo, mix, load, queue)]
                    tr = r.traces
                    ax.plot(tr["time_s"], tr[column], lw=0.6, color=colors[queue], label=QUEUE_LABELS[queue])
                warm = float(results[_key(topo, mix, load, "droptail")].raw.get("warmup_s", 0.0))
                ax.axvspan(0, warm, color="0.9", zorder=0)
                ax.set_title(title, fontsize=9, loc="left")
                ax.set_xlabel("time (s)")
                ax.set_ylim(0, 950)
            axes[0].set_ylabel("queue length (packets)")
            axes[0].legend(fontsize=7, loc="lower right")
            out.figure(
                f"figure_{number}",
                fig,
                "Queue length at router A (A->B) sampled every 10 ms; the grey band is the warm-up.",
            )


# What the paper states, per table (the measured side is in the tables and docs/reproductions.md).
_FINDINGS = {
    "dc-quartiles": "Paper: every flow averages about 103, 10.5 and 1.05 Mbit/s (UC, MC, HC); with PIE or "
    "CoDel the quartiles are close together, with DropTail they spread widely and under "
    "heavy congestion most DropTail flows get nothing (quartiles 0/0/0: connections not "
    "even established). Here the DropTail cells under heavy congestion are decided by exact "
    "ties at router A: with them broken, every TCP locks out (docs/reproductions.md, "
    "'Lock-outs and exact ties'; scenarios/papers/piotrowska/lockouts_*.toml).",
    "dc-jain": "Paper: PIE and CoDel give Jain's index about 1.00 everywhere; DropTail 0.70-0.97 "
    "uncongested and 0.12-0.19 under heavy congestion; C-TCP is the fairest with DropTail.",
    "dc-queue": "Paper: DropTail keeps the buffer nearly full (814-900 packets); PIE holds about 168 "
    "packets (its 2 ms target) at every load; CoDel holds about 170-220 packets "
    "uncongested and mildly congested but 716-732 packets with a large deviation under "
    "heavy congestion.",
    "dc-drops": "Paper: drops are negligible uncongested, 1.4-1.8 % with the AQMs mildly congested and "
    "5.8-7.0 % heavily congested; DropTail drops least (0.1-0.7 %); PIE drops a little "
    "more than CoDel.",
    "al-quartiles": "Paper: the flows' throughputs differ widely with the RTTs of Table 1 for every "
    "TCP-AQM pair; CUBIC with DropTail is the most skewed under mild congestion "
    "(median 0.01 Mbit/s).",
    "al-jain": "Paper: varied RTTs lower fairness (0.41-0.94 uncongested); PIE and CoDel raise it, "
    "most for CUBIC; C-TCP with DropTail is the fairest uncongested (0.94); under heavy "
    "congestion the AQMs give 0.87-0.91 against 0.60-0.68 with DropTail.",
    "al-queue": "Paper: DropTail fills the buffer (727-899 packets) except C-TCP uncongested (167); PIE "
    "keeps 23-54 packets at every load; CoDel 25-94 packets but 588-656 with a deviation "
    "near 280 under heavy congestion.",
    "al-drops": "Paper: under 0.3 % uncongested, 0.3-1.3 % mildly congested, 11-16 % heavily congested "
    "(PIE the most); C-TCP drops least, CUBIC most.",
    "dc-mixed": "Paper: with DropTail NewReno takes most of the bandwidth uncongested and mildly "
    "congested (61 %, 69 %) and C-TCP least; under heavy congestion CUBIC takes almost all; "
    "PIE and CoDel make the shares nearly equal (Jain 0.95-1.00). Here, under heavy congestion "
    "with DropTail, one group takes everything once exact ties at router A are broken "
    "(docs/reproductions.md, 'Lock-outs and exact ties').",
    "dc-mixedq": "Paper: as with common TCPs: DropTail full, PIE about 168 packets at every load, CoDel "
    "168-209 packets until heavy congestion, then 723 (217).",
    "al-mixed": "Paper: with DropTail C-TCP gets only 3-16 % of the bandwidth; the AQMs improve the "
    "overall fairness (Jain 0.49-0.65 with DropTail, 0.65-0.90 with the AQMs) without "
    "making it good.",
    "al-mixedq": "Paper: DropTail 741-893 packets; PIE 38-58 packets at every load with the most drops "
    "(15.8 % heavily congested); CoDel 35-89 packets until heavy congestion, then 632 (281).",
}


PAPER = Paper(
    id="piotrowska",
    title="Piotrowska: On Cross-Layer Interactions for Congestion Control in the Internet",
    runs=runs,
    analyze=analyze,
)
