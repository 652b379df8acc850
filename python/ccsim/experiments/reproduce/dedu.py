"""Paper 001 (Dedu, Bise, Bourgeois, "An analysis of congestion controls in centralized control
systems"): Table I and the per-packet delay Figures 2-5 for UDP, TCP, DCCP/TCP-like (CCID 2)
and DCCP/TFRC (CCID 3), from ``scenarios/papers/dedu-ncs/star.toml``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from . import Artifacts, Paper, Run, load_scenario

# Transport of every flow (sensors and the controller's answers) per protocol of Table I.
PROTOCOLS: dict[str, Any] = {
    "UDP": "udp",
    "TCP": "tcp",
    "DCCP/TCP-like": {"kind": "dccp", "ccid": 2},
    "DCCP/TFRC": {"kind": "dccp", "ccid": 3},
}

# Table I as printed: per protocol and sensor, generated, lost on sensor, lost on network
# (TCP: retransmissions in brackets), received; highest and average delay over all sensors (s).
PUBLISHED = {
    "UDP": ([(7199, 0, 7163, 36), (7197, 0, 3432, 3765), (7195, 0, 0, 7195)], None, 1.61, 1.35),
    "TCP": ([(7199, 4425, 0, 2774), (7197, 4380, 0, 2817), (7195, 1577, 0, 5618)], (26, 26, 11), 1.68, 1.38),
    "DCCP/TCP-like": ([(7199, 2276, 115, 4808), (7197, 2510, 108, 4579), (7195, 2235, 124, 4836)], None, 1.53, 1.09),
    "DCCP/TFRC": ([(7199, 3496, 60, 3643), (7197, 3184, 54, 3959), (7195, 3193, 60, 3942)], None, 1.63, 1.41),
}


def _scenario(transport: Any, quick: bool) -> dict[str, Any]:
    data = load_scenario("dedu-ncs", "star.toml")
    for flow in data["flows"]:
        flow["transport"] = transport
    if quick:
        data["simulation"]["duration"] = "60s"
    return data


def runs(quick: bool) -> list[Run]:
    return [Run(key=name.replace("/", "-").lower(), scenario=_scenario(t, quick)) for name, t in PROTOCOLS.items()]


def analyze(results: Mapping[str, Any], out: Artifacts, quick: bool) -> None:
    import matplotlib.pyplot as plt

    out.section("Table I: packets per sensor and delays")
    out.note(
        "Paper: UDP mutes a sensor by synchronisation and loses most on the network; the "
        "congestion-controlled protocols lose almost everything on the sensor instead; the "
        "highest delays are comparable (the full router queue); DCCP/TCP-like has the best "
        "average delay (1.09 s). Published values are in the `paper_*` columns"
        + (" (this quick run covers 60 s of the paper's 360 s, so counts are about 1/6)." if quick else ".")
    )
    rows = []
    for name in PROTOCOLS:
        r = results[name.replace("/", "-").lower()]
        table = r.table_i()
        published, retr, high, avg = PUBLISHED[name]
        for k, (sensor, row) in enumerate(table.iterrows()):
            g, ls, ln, rc = published[k]
            rows.append(
                {
                    "protocol": name,
                    "sensor": sensor,
                    "generated": row["generated"],
                    "paper_generated": g,
                    "lost_on_sensor": row["lost_on_sensor"],
                    "paper_lost_on_sensor": ls,
                    "lost_on_network": row["lost_on_network"],
                    "paper_lost_on_network": ln,
                    "received": row["received"],
                    "paper_received": rc,
                    "retransmitted": row["retransmitted"],
                    "paper_retransmitted": retr[k] if retr else 0,
                    "highest_delay_s": row["network_delay_max_s"],
                    "paper_highest_delay_s": high,
                    "average_delay_s": row["network_delay_mean_s"],
                    "paper_average_delay_s": avg,
                }
            )
    out.table(
        "table_1",
        pd.DataFrame(rows),
        "Delays are network delays from the moment the transport sends (the paper's "
        "highest delays are those of a full router queue); the paper prints one highest "
        "and one average delay per protocol over all sensors.",
    )

    out.section("Figures 2-5: delay of each packet over time")
    fig, axes = plt.subplots(len(PROTOCOLS), 1, figsize=(9, 2.4 * len(PROTOCOLS)), sharex=True)
    for ax, name in zip(axes, PROTOCOLS):
        d = results[name.replace("/", "-").lower()].message_delays()
        for sensor, part in d[d["name"].str.startswith("sensor")].groupby("name"):
            ok = part[~part["lost"]]
            ax.plot(ok["time_s"], ok["delay_s"], ".", ms=1.5, label=sensor)
        ax.set_ylabel("delay (s)")
        ax.set_title(name, fontsize=9, loc="left")
        ax.legend(fontsize=7, loc="upper right", markerscale=6)
    axes[-1].set_xlabel("time the sample was written (s)")
    out.figure(
        "figures_2_5",
        fig,
        "Message delay (from the sensor's write, so including the wait "
        "in the sensor's buffer) of every delivered sample, per protocol.",
    )


PAPER = Paper(
    id="dedu-ncs",
    title="Dedu, Bise, Bourgeois: congestion controls in centralized control systems",
    runs=runs,
    analyze=analyze,
)
