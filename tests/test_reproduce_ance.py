"""`ccsim reproduce ance --quick`: every table and figure of the ANCE paper (Sup et al. 2020) is
written, complete, and shows the findings that 30 s runs can show."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ccsim
from ccsim.reproduce import ance

FIGURES = ["figure_2", "figure_3", "figure_4", "figure_5", "figures_10_15", "figure_16", "figure_17",
           "figures_18_23", "figures_24_29", "figure_30", "figure_32", "figure_33", "figures_34_35"]
TABLES = ["table_daisy_chain", "table_dumbbell", "findings"]
LINK_PKTS_S = 1.5e6 / 8 / 1000  # the 1.5 Mbit/s bottleneck in 1000-byte packets per second


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("repro")
    proc = subprocess.run([sys.executable, "-m", "ccsim", "reproduce", "ance", "--quick", "--out", str(base)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return base / "ance"


def test_every_table_and_figure_is_written(out: Path) -> None:
    for name in FIGURES:
        assert (out / f"{name}.png").stat().st_size > 10_000, name
    for name in TABLES:
        assert (out / f"{name}.csv").exists() and (out / f"{name}.md").exists(), name
    report = (out / "report.md").read_text()
    for name in FIGURES + TABLES:
        assert f"({name}." in report, name


def test_tables_are_complete(out: Path) -> None:
    daisy = pd.read_csv(out / "table_daisy_chain.csv")
    assert list(daisy.technique) == ance.DAISY_TECHNIQUES
    assert not daisy.isna().any().any()
    dumb = pd.read_csv(out / "table_dumbbell.csv")
    assert list(dumb.technique) == ance.DUMBBELL_TECHNIQUES
    assert not dumb.isna().any().any()
    assert (dumb.seeds == ance.SEEDS_QUICK).all()
    findings = pd.read_csv(out / "findings.csv")
    assert len(findings) == len(ance.FINDINGS)
    assert set(findings.holds) <= {"yes", "no"} and not findings.ccsim.isna().any()


def test_throughput_is_np_over_time_and_within_the_link(out: Path) -> None:
    daisy = pd.read_csv(out / "table_daisy_chain.csv")
    dumb = pd.read_csv(out / "table_dumbbell.csv")
    # T = NP/Time in segments is the goodput divided by the segment's payload bits.
    np.testing.assert_allclose(daisy.throughput_pkts_s, daisy.goodput_kbps * 1e3 / 8 / ance.MSS, rtol=1e-9)
    np.testing.assert_allclose(dumb.total_pkts_s, dumb.total_kbps * 1e3 / 8 / ance.MSS, rtol=1e-9)
    np.testing.assert_allclose(dumb.total_pkts_s,
                               dumb.throughput_A_pkts_s + dumb.throughput_B_pkts_s + dumb.throughput_C_pkts_s)
    assert (daisy.throughput_pkts_s < LINK_PKTS_S).all() and (dumb.total_pkts_s < LINK_PKTS_S).all()
    # Seed 1 lies within the seeds' range.
    assert (dumb.total_pkts_s_min <= dumb.total_pkts_s).all() and (dumb.total_pkts_s <= dumb.total_pkts_s_max).all()


def test_daisy_chain_findings(out: Path) -> None:
    d = pd.read_csv(out / "table_daisy_chain.csv").set_index("technique")
    # Fig. 5: ANCE and ENCN above RED, CoDel and PIE; ENCN and ANCE very similar.
    for better in ("ANCE", "ENCN"):
        for worse in ("RED", "CoDel", "PIE"):
            assert d.loc[better, "throughput_pkts_s"] > d.loc[worse, "throughput_pkts_s"], (better, worse)
    assert abs(d.loc["ANCE", "throughput_pkts_s"] / d.loc["ENCN", "throughput_pkts_s"] - 1) < 0.02
    # Fig. 2: bufferempty with RED, CoDel and PIE, not with ANCE (link idle share).
    assert (d.loc[["RED", "CoDel", "PIE"], "link_idle_share"] > d.loc["ANCE", "link_idle_share"]).all()
    # Fig. 4: ANCE's queue oscillates around Q_min = 3 packets of 1 kbyte, never to 2 Q_min, lossless.
    assert 3 <= d.loc["ANCE", "steady_queue_max_pkts"] <= 6
    assert d.loc["ANCE", "drops"] == 0 and d.loc["ANCE", "timeouts"] == 0


def test_dumbbell_findings_that_hold_on_every_seed(out: Path) -> None:
    b = pd.read_csv(out / "table_dumbbell.csv").set_index("technique")
    # Bufferbloat: Drop Tail holds the longest queue and gives the loop the worst ITAE (Table 4
    # ranks DT first); ANCE's ITAE is below DT's and RED's on every seed (Fig. 30).
    assert b["queue_mean_pkts_mean"].idxmax() == "DT"
    assert b["itae_sum_mean"].idxmax() == "DT"
    assert b.loc["ANCE", "itae_sum_max"] < min(b.loc["DT", "itae_sum_min"], b.loc["RED", "itae_sum_min"])
    # ENCN keeps the ITAE sum below 8727 on every seed, DT never does.
    assert b.loc["ENCN", "itae_sum_max"] < ance.ITAE_THRESHOLD < b.loc["DT", "itae_sum_min"]
    # Sec. 4.4: E-DCTCP has more throughput and a longer queue than ANCE, and a worse ITAE.
    assert b.loc["E-DCTCP", "total_pkts_s_mean"] > b.loc["ANCE", "total_pkts_s_mean"]
    assert b.loc["E-DCTCP", "queue_mean_pkts_mean"] > b.loc["ANCE", "queue_mean_pkts_mean"]
    assert b.loc["E-DCTCP", "itae_sum_mean"] > b.loc["ANCE", "itae_sum_mean"]


def test_table_4_is_left_to_ccsim_smc(out: Path) -> None:
    report = (out / "report.md").read_text()
    assert "Table 4 and Figure 31" in report and "`ccsim smc`" in report
    assert not list(out.glob("table_4*")) and not list(out.glob("figure_31*"))
    inputs = ance.smc_inputs()
    assert list(inputs) == list(ance.PUBLISHED_TABLE_4)
    kinds = {name: ccsim.from_dict(s).topology.bottleneck.queue.kind for name, s in inputs.items()}
    assert kinds == {"DT": "droptail", "RED": "red", "CoDel": "codel", "PIE": "pie", "ENCN": "encn",
                     "ANCE": "droptail"}


def test_jain_helper_matches_the_definition() -> None:
    # ALGORITHMS.md E1 test vectors.
    assert ance.jain(np.array([1, 1, 1, 1])) == pytest.approx(1.0)
    assert ance.jain(np.array([1, 0, 0, 0])) == pytest.approx(0.25)
    assert ance.jain(np.array([2, 1])) == pytest.approx(0.9)
    assert ance.jain(np.array([[0.0, 0.0], [3.0, 1.0]])) == pytest.approx([1.0, 0.8])


def test_delivered_trace_grows_to_the_flows_total() -> None:
    scenario = ance.daisy_scenario("ANCE")
    scenario["simulation"]["duration"] = "3s"
    r = ccsim.run(ccsim.from_dict(scenario))
    d = r.traces["flow.0.delivered_bytes"].to_numpy()
    assert (np.diff(d) >= 0).all() and d[0] == 0
    assert d[-1] == r.flows.bytes_delivered[0] > 0
    # Delivered in whole segments of payload.
    assert (d % ance.MSS == 0).all()
