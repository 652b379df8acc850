"""Paper 004 ("ECN-enhanced CoDel": conservative ECN marking for CoDel): CoDel against
ECN-enhanced CoDel (C = 1.5, P = 0.3) with 2, 5 and 10 TCP flows on a 50 Mbit/s bottleneck and
10 flows on 500 Mbit/s and 1 Gbit/s: retransmissions, drops, per-flow throughput, queue length
in bytes and sojourn time (Figures 3-13), from ``scenarios/papers/ecn-codel/``.

The paper ran the Linux kernel's TCP in ns-3 DCE; every flow here uses the ``linux`` TCP
profile (CUBIC with HyStart, IW10, 200 ms minimum RTO, 40 ms delayed-ACK timer, ECN on; see
docs/profiles.md). Each experiment runs over several seeds (the seed draws the start times
within their windows and ECN-enhanced CoDel's marking); figures show seed 1, tables the mean
and range over the seeds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ...results.metrics import jain
from . import Artifacts, Paper, Run, load_scenario

QUEUE = "A->B"

# Queue key -> (label, queue table replacing the scenario file's kind). The scenario files
# hold CoDel with ns-3's defaults; the enhancement keeps them and adds C and P (paper §3).
QUEUES: dict[str, tuple[str, dict[str, Any]]] = {
    "codel": ("CoDel", {"kind": "codel"}),
    "ecn_codel": ("ECN-enhanced CoDel", {"kind": "ecn_codel", "c": 1.5, "p": 0.3}),
}

SEEDS_FULL = [1, 2, 3, 4, 5]
SEEDS_QUICK = [1]
FIGURE_SEED = 1
BIN_S = 1.0
"""Width of the bins of the throughput and retransmission figures (s)."""


@dataclass(frozen=True)
class Experiment:
    key: str
    label: str
    file: str
    rate: str | None = None
    """Bottleneck rate replacing the file's 50 Mbit/s."""
    access: str | None = None
    """Access-link rate replacing the file's 1 Gbit/s."""
    window: tuple[float, float] | None = None
    """Range (s) over which fairness and stability are measured; None: from the last flow's
    start to the end."""
    paper_drops: tuple[int, int] | None = None
    """Published drops: (CoDel, ECN-enhanced CoDel); None where the text prints no number."""
    quick_duration: str | None = None


EXPERIMENTS = [
    Experiment("flows2", "2 flows, 50 Mbit/s", "flows2.toml", paper_drops=(32, 10)),
    Experiment("flows5", "5 flows, 50 Mbit/s", "flows5.toml", window=(40.0, 55.0), paper_drops=(99, 22)),
    Experiment("flows10", "10 flows, 50 Mbit/s", "flows10.toml", window=(10.0, 40.0), paper_drops=(441, 1)),
    Experiment(
        "flows10_500M",
        "10 flows, 500 Mbit/s",
        "flows10.toml",
        "500Mbps",
        "10Gbps",
        (10.0, 40.0),
        (183, 1),
        quick_duration="20s",
    ),
    Experiment(
        "flows10_1G",
        "10 flows, 1 Gbit/s (HS)",
        "flows10.toml",
        "1Gbps",
        "10Gbps",
        (10.0, 40.0),
        None,
        quick_duration="20s",
    ),
]
BY_KEY = {e.key: e for e in EXPERIMENTS}


# Sensitivity to the base RTT, which the paper does not give (not a figure of the paper): the
# 50 Mbit/s scenarios with other bottleneck delays than the files' 10 ms (base RTT 24 ms).
SENSITIVITY = ["flows2", "flows5", "flows10"]
SENS_DELAYS_FULL = ["2ms", "25ms", "40ms"]
SENS_DELAYS_QUICK = ["40ms"]
FILE_DELAY_MS = 10.0
ACCESS_DELAY_MS = 1.0


def _scenario(exp: Experiment, queue: str, quick: bool, delay: str | None = None) -> dict[str, Any]:
    data = load_scenario("ecn-codel", exp.file)
    topo = data["topology"]
    if delay is not None:
        topo["bottleneck"]["delay"] = delay
    topo["bottleneck"]["queue"].update(QUEUES[queue][1])
    if exp.rate is not None:
        topo["bottleneck"]["rate"] = exp.rate
    if exp.access is not None:
        topo["access"]["rate"] = exp.access
    if quick and exp.quick_duration is not None:
        data["simulation"]["duration"] = exp.quick_duration
    return data


def _key(exp: Experiment, queue: str, seed: int, delay: str | None = None) -> str:
    return f"{exp.key}{'' if delay is None else '-d' + delay}-{queue}-s{seed}"


def runs(quick: bool) -> list[Run]:
    seeds = SEEDS_QUICK if quick else SEEDS_FULL
    main = [
        Run(key=_key(e, q, s), scenario=_scenario(e, q, quick), seed=s)
        for e in EXPERIMENTS
        for q in QUEUES
        for s in seeds
    ]
    sens = [
        Run(key=_key(BY_KEY[k], q, s, d), scenario=_scenario(BY_KEY[k], q, quick, d), seed=s)
        for k in SENSITIVITY
        for d in (SENS_DELAYS_QUICK if quick else SENS_DELAYS_FULL)
        for q in QUEUES
        for s in seeds
    ]
    return main + sens


# ----- measures of one run -----------------------------------------------------------------


def _flow_ids(r: Any) -> list[int]:
    return [int(f) for f in r.flows["id"]]


def _cumulative_at(r: Any, column: str, times: np.ndarray) -> np.ndarray:
    """A cumulative trace column read at ``times`` (linear between samples)."""
    t = r.traces["time_s"].to_numpy()
    return np.interp(times, t, r.traces[column].to_numpy())


def _edges(r: Any, bin_s: float) -> np.ndarray:
    end = float(r.raw["duration_s"])
    return np.arange(0.0, end + 1e-9, bin_s)


def throughput_mbps(r: Any, bin_s: float = BIN_S) -> pd.DataFrame:
    """Per flow, delivered throughput (Mbit/s) in bins of ``bin_s``; index: bin centre (s)."""
    edges = _edges(r, bin_s)
    out = {}
    for f in _flow_ids(r):
        cum = _cumulative_at(r, f"flow.{f}.delivered_bytes", edges)
        out[f] = np.diff(cum) * 8 / bin_s / 1e6
    return pd.DataFrame(out, index=(edges[:-1] + edges[1:]) / 2)


def retransmissions_per_bin(r: Any, bin_s: float = BIN_S) -> pd.Series:
    """Retransmitted segments of all flows per bin of ``bin_s``; index: bin centre (s)."""
    edges = _edges(r, bin_s)
    total = sum(_cumulative_at(r, f"flow.{f}.retransmissions", edges) for f in _flow_ids(r))
    return pd.Series(np.diff(total), index=(edges[:-1] + edges[1:]) / 2)


def _window(r: Any, exp: Experiment) -> tuple[float, float]:
    end = float(r.raw["duration_s"])
    if exp.window is None:
        return float(r.flows["start_s"].max()), end
    return exp.window[0], min(exp.window[1], end)


def _active_flows(r: Any, lo: float, hi: float) -> list[int]:
    """Flows sending over the whole of [lo, hi]."""
    ids = []
    for f, start in zip(_flow_ids(r), r.flows["start_s"]):
        stop = r.config["flows"][f]["stop_ns"]
        if start <= lo and (stop is None or stop / 1e9 >= hi):
            ids.append(f)
    return ids


def measures(r: Any, exp: Experiment) -> dict[str, float]:
    """Everything the tables report about one run."""
    q = r.queues.set_index("name").loc[QUEUE]
    events = r.queue_events
    kinds = events[events["queue"] == QUEUE]["event"].value_counts() if events is not None else pd.Series(dtype=int)
    lo, hi = _window(r, exp)
    active = _active_flows(r, lo, hi)
    tput = throughput_mbps(r)
    in_window = tput[(tput.index > lo) & (tput.index < hi)][active]
    per_flow = np.array(
        [
            (
                _cumulative_at(r, f"flow.{f}.delivered_bytes", np.array([hi]))[0]
                - _cumulative_at(r, f"flow.{f}.delivered_bytes", np.array([lo]))[0]
            )
            for f in active
        ]
    )
    # Throughput stability: each flow's coefficient of variation over the 1 s bins, averaged.
    cov = float((in_window.std() / in_window.mean()).mean()) if len(in_window) > 1 else float("nan")
    # Ramp-up of the flows that join a busy link: each one's throughput over its first 5 s.
    first = float(r.flows["start_s"].min())
    joining = []
    for f, start in zip(_flow_ids(r), r.flows["start_s"]):
        if start > first and start + 5.0 <= float(r.raw["duration_s"]):
            got = _cumulative_at(r, f"flow.{f}.delivered_bytes", np.array([start, start + 5.0]))
            joining.append((got[1] - got[0]) * 8 / 5.0 / 1e6)
    return {
        "drops": float(q["drops"]),
        "early_drops": float(kinds.get("drop_early", 0)),
        "overflow_drops": float(kinds.get("drop_overflow", 0)),
        "marks": float(q["marks"]),
        "retransmissions": float(r.flows["retransmissions"].sum()),
        "timeouts": float(r.flows["timeouts"].sum()),
        "ecn_reductions": float(r.flows["ecn_reductions"].sum()),
        "mean_queue_bytes": float(q["mean_len_bytes"]),
        "max_queue_pkts": float(q["max_len_pkts"]),
        "mean_sojourn_ms": float(q["mean_sojourn_s"]) * 1e3,
        "utilization": float(q["utilization"]),
        "jain_window": jain(per_flow),
        "throughput_cov_window": cov,
        "joining_mbps_5s": float(np.mean(joining)) if joining else float("nan"),
    }


# ----- tables and figures ----------------------------------------------------------------


def _seeds(results: Mapping[str, Any], exp: Experiment, queue: str, delay: str | None = None) -> list[int]:
    prefix = _key(exp, queue, 0, delay)[:-1]
    return sorted(int(k[len(prefix) :]) for k in results if k.startswith(prefix))


def _delays(results: Mapping[str, Any]) -> list[str]:
    """The bottleneck delays of the sensitivity runs present, sorted."""
    found = {k.split("-d", 1)[1].split("-", 1)[0] for k in results if "-d" in k}
    return sorted(found, key=lambda d: float(d.removesuffix("ms")))


def _sensitivity(results: Mapping[str, Any]) -> pd.DataFrame:
    rows = []
    for key in SENSITIVITY:
        exp = BY_KEY[key]
        delays: list[str | None] = [*_delays(results), None]
        for delay in sorted(delays, key=lambda d: FILE_DELAY_MS if d is None else float(d.removesuffix("ms"))):
            ms = FILE_DELAY_MS if delay is None else float(delay.removesuffix("ms"))
            row: dict[str, Any] = {
                "experiment": exp.label,
                "bottleneck_delay_ms": ms,
                "base_rtt_ms": 2 * (ms + 2 * ACCESS_DELAY_MS),
            }
            for qi, queue in enumerate(QUEUES):
                seeds = _seeds(results, exp, queue, delay)
                m = pd.DataFrame([measures(results[_key(exp, queue, s, delay)], exp) for s in seeds])
                row[f"{queue}_drops"] = float(m["drops"].mean())
                row[f"paper_{queue}_drops"] = exp.paper_drops[qi] if exp.paper_drops else float("nan")
                row[f"{queue}_mean_sojourn_ms"] = float(m["mean_sojourn_ms"].mean())
            row["seeds"] = len(seeds)
            rows.append(row)
    return pd.DataFrame(rows)


def _fig_sensitivity(table: pd.DataFrame) -> Any:
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(SENSITIVITY), figsize=(11, 3.4), sharey=True)
    for ax, key in zip(axes, SENSITIVITY):
        part = table[table.experiment == BY_KEY[key].label]
        for queue in QUEUES:
            ax.plot(part.base_rtt_ms, part[f"{queue}_drops"], "o-", color=COLORS[queue], label=_label(queue))
            ax.axhline(part[f"paper_{queue}_drops"].iloc[0], color=COLORS[queue], ls="--", lw=0.8)
        ax.set_title(BY_KEY[key].label, fontsize=9, loc="left")
        ax.set_xlabel("base RTT (ms)")
        ax.set_yscale("symlog", linthresh=10)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("drops (dashed: paper)")
    axes[0].legend(fontsize=7)
    return fig


def _summary(results: Mapping[str, Any]) -> pd.DataFrame:
    rows = []
    for exp in EXPERIMENTS:
        for qi, (queue, (label, _)) in enumerate(QUEUES.items()):
            seeds = _seeds(results, exp, queue)
            per_seed = pd.DataFrame([measures(results[_key(exp, queue, s)], exp) for s in seeds])
            row: dict[str, Any] = {"experiment": exp.label, "queue": label, "seeds": len(seeds)}
            for col in per_seed.columns:
                row[col] = float(per_seed[col].mean())
                if col == "drops":
                    row["drops_min"] = float(per_seed[col].min())
                    row["drops_max"] = float(per_seed[col].max())
                    row["paper_drops"] = exp.paper_drops[qi] if exp.paper_drops else float("nan")
            rows.append(row)
    return pd.DataFrame(rows)


def _label(queue: str) -> str:
    return QUEUES[queue][0]


COLORS = {"codel": "tab:red", "ecn_codel": "tab:blue"}


def _fig_throughput(results: Mapping[str, Any], exp: Experiment) -> Any:
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 1, figsize=(9, 6), sharex=True, sharey=True)
    for ax, queue in zip(axes, QUEUES):
        r = results[_key(exp, queue, FIGURE_SEED)]
        tput = throughput_mbps(r)
        for f in tput.columns:
            ax.plot(tput.index, tput[f], lw=1, label=f"flow {f}")
        ax.set_title(f"{_label(queue)} ({exp.label})", fontsize=9, loc="left")
        ax.set_ylabel("throughput (Mbit/s)")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7, ncol=5, loc="upper right")
    axes[-1].set_xlabel("time (s)")
    return fig


def _fig_overlay(results: Mapping[str, Any], exp: Experiment, what: str) -> Any:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 3.6))
    for queue in QUEUES:
        r = results[_key(exp, queue, FIGURE_SEED)]
        if what == "retransmissions":
            series = retransmissions_per_bin(r)
            ax.step(
                series.index,
                series.to_numpy(),
                where="mid",
                color=COLORS[queue],
                label=f"{_label(queue)} (total {int(series.sum())})",
            )
            ax.set_ylabel(f"retransmitted segments per {BIN_S:g} s")
        elif what == "queue":
            t = r.traces
            ax.plot(t["time_s"], t[f"queue.{QUEUE}.len_bytes"], lw=0.6, color=COLORS[queue], label=_label(queue))
            ax.set_ylabel("queue length (bytes)")
        else:
            t = r.traces
            ax.plot(t["time_s"], t[f"queue.{QUEUE}.sojourn_s"] * 1e3, lw=0.6, color=COLORS[queue], label=_label(queue))
            ax.set_ylabel("sojourn time (ms)")
    ax.set_xlabel("time (s)")
    ax.set_title(exp.label, fontsize=9, loc="left")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def _fig_drops(table: pd.DataFrame) -> Any:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4))
    x = np.arange(len(EXPERIMENTS))
    w = 0.2
    for k, queue in enumerate(QUEUES):
        ours = table[f"{queue}_drops"].to_numpy()
        paper_vals = table[f"paper_{queue}_drops"].to_numpy()
        ax.bar(x + (2 * k - 1.5) * w, ours, w, color=COLORS[queue], label=f"{_label(queue)} (ccsim)")
        ax.bar(
            x + (2 * k - 0.5) * w,
            np.nan_to_num(paper_vals),
            w,
            color=COLORS[queue],
            alpha=0.35,
            hatch="//",
            label=f"{_label(queue)} (paper)",
        )
    ax.set_xticks(x, [e.label for e in EXPERIMENTS], fontsize=8)
    ax.set_yscale("symlog", linthresh=10)
    top = np.nanmax(table[[f"{q}_drops" for q in QUEUES] + [f"paper_{q}_drops" for q in QUEUES]].to_numpy())
    ax.set_ylim(0, top * 3)
    for k, exp in enumerate(EXPERIMENTS):
        if exp.paper_drops is None:
            ax.text(k, 1, "paper: no number\nin the text", ha="center", fontsize=7)
    ax.set_ylabel("packets dropped at the bottleneck")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, axis="y")
    return fig


def analyze(results: Mapping[str, Any], out: Artifacts, quick: bool) -> None:
    summary = _summary(results)
    by = summary.set_index(["experiment", "queue"])
    note_quick = (
        " This is the quick form: one seed, and the 500 Mbit/s and 1 Gbit/s runs last 20 s instead of 60 s."
        if quick
        else ""
    )

    # Figure 13 and the drop counts of the text.
    out.section("Figure 13 and §4: packet drops per scenario")
    rows = []
    for exp in EXPERIMENTS:
        row: dict[str, Any] = {"experiment": exp.label}
        for qi, queue in enumerate(QUEUES):
            s = by.loc[(exp.label, _label(queue))]
            row[f"{queue}_drops"] = s["drops"]
            row[f"paper_{queue}_drops"] = exp.paper_drops[qi] if exp.paper_drops else float("nan")
            row[f"{queue}_drops_min"] = s["drops_min"]
            row[f"{queue}_drops_max"] = s["drops_max"]
            row[f"{queue}_overflow_drops"] = s["overflow_drops"]
        row["reduction"] = row["codel_drops"] / max(row["ecn_codel_drops"], 1.0)
        row["paper_reduction"] = (exp.paper_drops[0] / max(exp.paper_drops[1], 1)) if exp.paper_drops else float("nan")
        rows.append(row)
    drops = pd.DataFrame(rows)
    out.note(
        "Paper: ECN-enhanced CoDel drops far fewer packets than CoDel: 32 vs 10 (2 flows), 99 vs 22 "
        "(5 flows), 441 vs 1 (10 flows), 183 vs 1 (10 flows at 500 Mbit/s); Figure 13 adds a 1 Gbit/s "
        "(HS) bar whose numbers the text does not print. ccsim (mean over seeds, range in the _min/_max "
        "columns; overflow = tail drops of a full 1500-packet buffer, the rest are CoDel's drops): "
        + "; ".join(f"{r['experiment']}: {r['codel_drops']:.0f} vs {r['ecn_codel_drops']:.0f}" for r in rows)
        + "."
        + note_quick
    )
    out.table(
        "figure_13_drops",
        drops,
        "Drops at the bottleneck, CoDel vs ECN-enhanced CoDel (C = 1.5, P = 0.3); "
        "`reduction` = CoDel drops / ECN-enhanced drops.",
    )
    out.figure(
        "figure_13_drops",
        _fig_drops(drops),
        "Drops per scenario (symlog scale): ccsim (solid) and the paper (hatched; no published number for HS).",
    )

    out.section("All scenarios: retransmissions, marks, queue, sojourn, fairness")
    out.note(
        "Paper: the enhancement keeps CoDel's good properties (similar throughput and fairness), cuts "
        'retransmissions, keeps the buffer lower and reduces the average sojourn time "by multiple '
        "factors\", but ramps up slightly slower. Fairness (`jain_window`) is Jain's index of the flows' "
        "throughput over the range the paper discusses (2 flows: from the second flow's start; 5 flows: "
        "40-55 s; 10 flows: 10-40 s); `throughput_cov_window` is the flows' mean coefficient of variation "
        "of their 1 s throughput there (lower = more stable); `joining_mbps_5s` is the mean throughput of "
        "the flows that join a busy link over their first 5 s (the ramp-up)."
    )
    cols = [
        "experiment",
        "queue",
        "seeds",
        "drops",
        "paper_drops",
        "drops_min",
        "drops_max",
        "early_drops",
        "overflow_drops",
        "retransmissions",
        "timeouts",
        "marks",
        "ecn_reductions",
        "mean_queue_bytes",
        "max_queue_pkts",
        "mean_sojourn_ms",
        "utilization",
        "jain_window",
        "throughput_cov_window",
        "joining_mbps_5s",
    ]
    out.table("summary", summary[cols], "Per scenario and queue, means over the seeds.")

    rows = []
    for exp in EXPERIMENTS:
        for queue in QUEUES:
            for s in _seeds(results, exp, queue):
                r = results[_key(exp, queue, s)]
                for f, start, delivered in zip(_flow_ids(r), r.flows["start_s"], r.flows["bytes_delivered"]):
                    stop = r.config["flows"][f]["stop_ns"]
                    end = min(float(r.raw["duration_s"]), stop / 1e9 if stop is not None else float("inf"))
                    rows.append(
                        {
                            "experiment": exp.label,
                            "queue": _label(queue),
                            "seed": s,
                            "flow": f,
                            "start_s": float(start),
                            "stop_s": end,
                            "throughput_mbps": float(delivered) * 8 / (end - float(start)) / 1e6,
                            "retransmissions": int(r.flows.loc[r.flows["id"] == f, "retransmissions"].iloc[0]),
                        }
                    )
    per_flow = pd.DataFrame(rows)
    out.table(
        "per_flow_throughput",
        per_flow,
        "Every flow of every run: mean throughput over its own active time and its retransmissions.",
    )

    figures = [
        ("flows2", "retransmissions", "figure_3_retransmissions", "Figure 3: retransmissions over time, 2 flows."),
        ("flows2", "throughput", "figure_4_throughput", "Figure 4: per-flow throughput, 2 flows."),
        ("flows2", "queue", "figure_5_queue_bytes", "Figure 5: queue length (bytes), 2 flows."),
        ("flows2", "sojourn", "figure_6_sojourn", "Figure 6: sojourn time, 2 flows (ms; the paper plots ns)."),
        ("flows5", "throughput", "figure_7_throughput", "Figure 7: per-flow throughput, 5 flows."),
        ("flows5", "retransmissions", "figure_8_retransmissions", "Figure 8: retransmissions over time, 5 flows."),
        ("flows5", "queue", "figure_9_queue_bytes", "Figure 9: queue length (bytes), 5 flows."),
        ("flows5", "sojourn", "figure_10_sojourn", "Figure 10: sojourn time, 5 flows (ms; the paper plots ns)."),
        ("flows10", "throughput", "figure_11_throughput", "Figure 11: per-flow throughput, 10 flows, 50 Mbit/s."),
        ("flows10_500M", "throughput", "figure_12_throughput", "Figure 12: per-flow throughput, 10 flows, 500 Mbit/s."),
    ]
    findings = {
        "figure_3_retransmissions": "Paper: CoDel shows periodic retransmission peaks (TCP's saw-tooth); the "
        "enhancement reduces retransmissions.",
        "figure_4_throughput": "Paper: similar throughput; fairness between the two flows slightly better with CoDel.",
        "figure_5_queue_bytes": "Paper: the enhancement keeps the buffer low during most of the run.",
        "figure_6_sojourn": "Paper: the modified CoDel keeps the sojourn time more stable.",
        "figure_7_throughput": "Paper: the enhancement ramps up slightly slower and is slightly fairer in stable "
        "ranges (e.g. 40-55 s); differences negligible.",
        "figure_8_retransmissions": "Paper: fewer retransmissions with the enhancement (22 lost segments vs 99).",
        "figure_9_queue_bytes": "Paper: queue length (no further statement).",
        "figure_10_sojourn": "Paper: sojourn time (no further statement).",
        "figure_11_throughput": "Paper: similar fairness; 1 vs 441 drops.",
        "figure_12_throughput": "Paper: similar; in 10-40 s the enhancement is slightly fairer and more stable; "
        "1 vs 183 drops.",
    }
    for key, what, name, caption in figures:
        exp = BY_KEY[key]
        out.section(caption.split(":")[0] + f": {what}, {exp.label}")
        lines = [findings[name]]
        for queue in QUEUES:
            s = by.loc[(exp.label, _label(queue))]
            lines.append(
                f"{_label(queue)}: {s['retransmissions']:.0f} retransmissions, {s['drops']:.0f} drops, "
                f"mean queue {s['mean_queue_bytes'] / 1e3:.1f} kB, mean sojourn {s['mean_sojourn_ms']:.2f} ms, "
                f"Jain {s['jain_window']:.3f}, throughput CoV {s['throughput_cov_window']:.3f}, "
                f"joining flows {s['joining_mbps_5s']:.1f} Mbit/s over their first 5 s (means over {int(s['seeds'])} seed(s))."
            )
        out.note(" ".join(lines) + f" Figure: seed {FIGURE_SEED}.")
        fig = _fig_throughput(results, exp) if what == "throughput" else _fig_overlay(results, exp, what)
        out.figure(name, fig, caption)

    _analyze_sensitivity(results, out)


def _analyze_sensitivity(results: Mapping[str, Any], out: Artifacts) -> None:
    table = _sensitivity(results)
    out.section("Sensitivity (not in the paper): base RTT")
    out.note(
        "The paper does not give its link delays. These runs repeat the 50 Mbit/s scenarios with other "
        "bottleneck delays than the scenario files' 10 ms (base RTT 24 ms, the value used everywhere "
        "else), to show how much the unknown RTT moves the drop counts. Means over "
        f"{int(table.seeds.max())} seed(s)."
    )
    out.table("sensitivity_rtt", table, "Drops and mean sojourn against the base RTT (50 Mbit/s).")
    out.figure(
        "sensitivity_rtt", _fig_sensitivity(table), "Drops against the base RTT; dashed lines: the published counts."
    )


PAPER = Paper(
    id="ecn-codel",
    title="ECN-enhanced CoDel: conservative ECN marking for CoDel",
    runs=runs,
    analyze=analyze,
)
