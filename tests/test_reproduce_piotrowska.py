"""`ccsim reproduce piotrowska --quick`: every table and figure of paper 002 (Piotrowska), and the
findings its short runs are long enough to show (the Access Link ones; the 3 s Data Center runs
end before the queues settle, see docs/reproductions.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import ccsim
import numpy as np
import pandas as pd
import pytest
from ccsim.experiments.reproduce import piotrowska

ROOT = Path(__file__).resolve().parent.parent

TABLES = [f"table_{n}" for n in range(2, 14)] + ["cubic_friendliness", "handshake", "handshake_mixed"]
FIGURES = [f"figure_{n}" for n in range(2, 10)]
# Paper's Table 1: RTT (ms) of every source-sink pair, N1..N3 -> N4..N6.
TABLE_1_MS = {
    ("N1", "N4"): 8,
    ("N2", "N4"): 32,
    ("N3", "N4"): 58,
    ("N1", "N5"): 78,
    ("N2", "N5"): 102,
    ("N3", "N5"): 128,
    ("N1", "N6"): 154,
    ("N2", "N6"): 178,
    ("N3", "N6"): 204,
}


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("piotrowska")
    proc = subprocess.run(
        [sys.executable, "-m", "ccsim", "reproduce", "piotrowska", "--quick", "--out", str(root)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr
    return root / "piotrowska"


def table(out: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(out / f"{name}.csv")


def test_every_table_and_figure_is_written_with_complete_columns(out: Path) -> None:
    report = (out / "report.md").read_text()
    for name in TABLES:
        assert (out / f"{name}.csv").exists() and (out / f"{name}.md").exists(), name
        frame = table(out, name)
        assert len(frame) > 0, name
        # Our columns have a value wherever the paper prints one (every row of every table).
        assert not frame.isna().any().any(), (name, frame.columns[frame.isna().any()].tolist())
        assert f"{name}.csv" in report
    for name in FIGURES:
        assert (out / f"{name}.png").stat().st_size > 10_000, name
        assert f"{name}.png" in report
    # Common-TCP tables: 3 loads x 3 TCPs x 3 queues; mixed: 3 loads x 3 queues x (3 TCPs + all).
    for n in (2, 3, 4, 5, 6, 7, 8, 9):
        assert len(table(out, f"table_{n}")) == 27
    for n in (10, 12):
        assert len(table(out, f"table_{n}")) == 36
    for n in (11, 13):
        assert len(table(out, f"table_{n}")) == 9


def test_published_values_sit_beside_ours(out: Path) -> None:
    t4 = table(out, "table_4")
    row = t4[(t4.load == "HC") & (t4.tcp == "NReno") & (t4.queue == "CoDel")].iloc[0]
    assert (row.paper_mean_pkts, row.paper_sd_pkts) == (724, 207)
    t12 = table(out, "table_12")
    all_rows = t12[t12.tcp == "All"]
    assert (all_rows.paper_bd_pct == 100).all() and np.allclose(all_rows.bd_pct, 100)
    # Shares of the three congestion controls add up to the whole, in ours and in the paper's.
    for _, cell in t12[t12.tcp != "All"].groupby(["load", "queue"]):
        assert cell.bd_pct.sum() == pytest.approx(100)
        assert 97 <= cell.paper_bd_pct.sum() <= 103  # rounded to whole percents


def test_access_link_pie_keeps_a_short_queue_at_every_load_and_droptail_a_full_one(out: Path) -> None:
    # Paper, Tables 8 and 13: PIE 23-58 packets in every cell (5 ms at 100 Mbit/s is 42 packets);
    # DropTail 830-899 packets under mild and heavy congestion.
    common, mixed = table(out, "table_8"), table(out, "table_13")
    for frame in (common, mixed):
        pie = frame[frame.queue == "PIE"]
        assert (pie.mean_pkts < 100).all(), pie
        dt = frame[(frame.queue == "DT") & (frame.load != "UC")]
        assert (dt.mean_pkts > 700).all(), dt


def test_codel_loses_control_of_the_access_link_queue_under_heavy_congestion(out: Path) -> None:
    # Paper, Table 8: heavily congested, CoDel's queue averages 588-656 packets against PIE's 43-45.
    t8 = table(out, "table_8").set_index(["load", "tcp", "queue"])
    for tcp in ("NReno", "Cubic", "C-TCP"):
        assert t8.loc[("HC", tcp, "CoDel"), "mean_pkts"] > 5 * t8.loc[("HC", tcp, "PIE"), "mean_pkts"]
        # ... while it keeps the queue short without heavy congestion (paper: 25-94 packets).
        assert t8.loc[("UC", tcp, "CoDel"), "mean_pkts"] < 200


def test_access_link_drop_ratio_grows_with_the_load(out: Path) -> None:
    # Paper, Table 9: under 0.3 % uncongested, 0.3-1.3 % mildly and 11-16 % heavily congested.
    t9 = table(out, "table_9").set_index(["load", "tcp", "queue"])
    for tcp in ("NReno", "Cubic", "C-TCP"):
        for queue in ("DT", "PIE", "CoDel"):
            uc, mc, hc = (t9.loc[(load, tcp, queue), "drop_ratio_pct"] for load in ("UC", "MC", "HC"))
            assert uc < mc < hc
            assert hc > 5


def test_data_center_droptail_queue_is_the_longest_uncongested(out: Path) -> None:
    # Paper, Table 4: DropTail 814-859 packets against PIE's and CoDel's 162-173 (even the 3 s
    # quick runs show the order, not the AQMs' levels).
    t4 = table(out, "table_4").set_index(["load", "tcp", "queue"])
    for tcp in ("NReno", "Cubic", "C-TCP"):
        dt = t4.loc[("UC", tcp, "DT"), "mean_pkts"]
        assert dt > 600
        assert dt > t4.loc[("UC", tcp, "PIE"), "mean_pkts"] and dt > t4.loc[("UC", tcp, "CoDel"), "mean_pkts"]


def test_access_link_rtts_are_those_of_table_1() -> None:
    # Table 1 is the oracle. Each pair's flow runs alone for 1.5 s; its smallest RTT sample is
    # the propagation RTT plus serialization at 100 Mbit/s over three hops of a 1500 B segment
    # and of a 52 B ACK (0.372 ms), plus at most one more segment time (0.12 ms) when the
    # sampled segment left right behind another one.
    base = piotrowska.scenario("al", "droptail", dict.fromkeys(piotrowska.MIXED, "newreno"), "UC", quick=True)
    serialization_ms = 3 * (1500 + 52) * 8 / 100e6 * 1e3
    for flow in base["flows"]:
        data = dict(base, flows=[dict(flow, start="0s")], simulation={"duration": "1500ms", "warmup": "0s"})
        result = ccsim.run(ccsim.from_dict(data), seed=1)
        src, dst = flow["name"].split("-")
        rtt_ms = result.flows["rtt_min_s"].iloc[0] * 1e3
        assert (
            TABLE_1_MS[(src, dst)] + serialization_ms - 1e-6
            <= rtt_ms
            <= TABLE_1_MS[(src, dst)] + serialization_ms + 0.121
        )


def test_jain_index_matches_hand_computation() -> None:
    assert piotrowska.jain([1, 1, 1, 1]) == pytest.approx(1.0)
    assert piotrowska.jain([1, 0, 0, 0]) == pytest.approx(0.25)
    # (1 + 2 + 3)^2 / (3 (1 + 4 + 9)) = 36 / 42
    assert piotrowska.jain([1, 2, 3]) == pytest.approx(36 / 42)
    assert np.isnan(piotrowska.jain([0, 0]))


def test_runs_cover_the_papers_grid_with_the_papers_sizes() -> None:
    full = {r.key: r for r in piotrowska.runs(quick=False)}
    # 2 topologies x 3 loads x 3 queues x (3 common TCPs + CUBIC without friendliness + mixed with
    # CUBIC with and without it, then the 3 common TCPs and the mixed run with the other
    # handshake setting)
    assert len(full) == 2 * 3 * 3 * (6 + 4)
    # The quick form runs a subset of the grid (its runs are cached apart by the framework).
    quick = {r.key for r in piotrowska.runs(quick=True)}
    assert quick and quick < set(full)
    assert full["al-mixednf-mc-droptail"].scenario["flows"][-1]["cc"] == {"kind": "cubic", "tcp_friendliness": False}
    run = full["dc-mixed-hc-codel"].scenario
    assert run["simulation"]["duration"] == "100s" and run["simulation"]["warmup"] == "30s"
    assert sum(f["count"] for f in run["flows"]) == 900
    assert run["topology"]["bottleneck"]["queue"] == {
        "kind": "codel",
        "limit": "900p",
        "target": "2ms",
        "interval": "100ms",
        "mtu": "1500B",
    }
    ccs = {f["group"]: f["cc"] for f in run["flows"]}
    assert ccs["N1"] == "newreno" and ccs["N2"] == "compound" and ccs["N3"]["kind"] == "cubic"
    assert full["al-cubicnf-uc-pie"].scenario["flows"][0]["cc"] == {"kind": "cubic", "tcp_friendliness": False}
    # The handshake: the tables' runs have the scenario files' setting, the comparison the other,
    # with ns-3's 3 s SYN timer when on.
    default = piotrowska.handshake_default()
    other = full[f"dc-mixed{piotrowska.HANDSHAKE_SUFFIX[not default]}-hc-codel"].scenario["flows"]
    assert all(f["transport"]["handshake"] is (not default) for f in other)
    assert all(f["transport"].get("handshake", False) is default for f in run["flows"])
    on = other if not default else run["flows"]
    assert {f["transport"]["initial_rto"] for f in on} == {"3s"}
    both = {
        name: piotrowska.load_scenario("piotrowska", f"{name}.toml")["flows"] for name in piotrowska.TOPOLOGIES.values()
    }
    assert {f["transport"].get("handshake", False) for flows in both.values() for f in flows} == {default}
    assert full["al-cubic-uc-pie"].scenario["topology"]["bottleneck"]["queue"]["target"] == "5ms"


LOCKOUT_SWEEPS = {  # file: (runs, {(flows per pair, congestion control key of the published run)})
    "lockouts_data_center.toml": (72, {(c, cc) for c in (10, 100) for cc in piotrowska.COMMON}),
    "lockouts_data_center_mixed.toml": (12, {(100, "mixed")}),
    "lockouts_access_link.toml": (36, {(100, cc) for cc in piotrowska.COMMON}),
}


def _without_processing(config: dict, idle_only: bool) -> dict:
    """The configuration with its nodes' processing removed (only the idle ones: a stage whose
    delay and jitter are both zero does not exist in the engine, net/processing.rs, so it cannot
    change a result)."""

    def keep(key: str, value: dict) -> bool:
        return key != "processing" or (idle_only and any(value.values()))

    return {**config, "nodes": [{k: v for k, v in n.items() if keep(k, v)} for n in config["nodes"]]}


@pytest.mark.parametrize("name", sorted(LOCKOUT_SWEEPS))
def test_the_lockout_sweeps_exact_tie_points_are_the_published_runs(name: str) -> None:
    """docs/reproductions.md, "Lock-outs and exact ties" compares jittered runs with the
    reproduction's own: each sweep's exact-tie points at seed 1 must be the published cells, and
    its other points must differ from them only by the processing jitter."""
    from ccsim.experiments import sweep

    spec = sweep.load_sweep(ROOT / "scenarios" / "papers" / "piotrowska" / name)
    runs = sweep.expand(spec)
    n_runs, cells = LOCKOUT_SWEEPS[name]
    assert len(runs) == n_runs and all(r.config is not None for r in runs)
    assert {r.seed for r in runs} == {1, 2, 3, 4}
    published = {run.key: run for run in piotrowska.runs(quick=False)}
    topo = "al" if "access_link" in name else "dc"
    load = {v: k for k, v in piotrowska.FLOWS_PER_PAIR.items()}
    matched = set()
    for r in runs:
        count = r.params.get("flows.count", spec.fixed.get("flows.count"))
        cc = r.params.get("flows.cc", "mixed")
        cc = "cubic" if isinstance(cc, dict) and cc["kind"] == "cubic" else cc
        ref = published[piotrowska._key(topo, cc, load[count], "droptail")]
        expected = dict(ccsim.from_dict(dict(ref.scenario)).to_config(), seed=r.seed)
        jitter = {**r.params.get("topology.router_processing", {}), **r.params.get("topology.host_processing", {})}
        if jitter == {"jitter": "0s"}:
            assert _without_processing(r.config, idle_only=True) == expected
            matched.add((count, cc))
        else:
            assert _without_processing(r.config, idle_only=True) != expected
            assert _without_processing(r.config, idle_only=False) == expected
    assert matched == cells
