"""`ccsim reproduce ance --quick`: every table and figure of the ANCE paper (Sup et al. 2020) is
written, complete, and shows the findings that 30 s runs can show."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import ccsim
import numpy as np
import pandas as pd
import pytest
from ccsim.experiments.reproduce import ance

FIGURES = [
    "figure_2",
    "figure_3",
    "figure_4",
    "figure_5",
    "figures_10_15",
    "figure_16",
    "figure_17",
    "figures_18_23",
    "figures_24_29",
    "figure_30",
    "figure_31",
    "figure_32",
    "figure_33",
    "figures_34_35",
]
TABLES = ["table_daisy_chain", "table_dumbbell", "table_4", "findings"]
LINK_PKTS_S = 1.5e6 / 8 / 1000  # the 1.5 Mbit/s bottleneck in 1000-byte packets per second


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("repro")
    proc = subprocess.run(
        [sys.executable, "-m", "ccsim", "reproduce", "ance", "--quick", "--out", str(base)],
        capture_output=True,
        text=True,
        timeout=600,
    )
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
    # T = NP/Time counts segments delivered in order; goodput counts bytes when they first
    # arrive. Measured from the start, the two differ only by what is still held out of order
    # at the end: goodput is at least T and at most a few segments per second above it.
    for t, kbps in ((daisy.throughput_pkts_s, daisy.goodput_kbps), (dumb.total_pkts_s, dumb.total_kbps)):
        arrived = kbps * 1e3 / 8 / ance.MSS
        assert (t <= arrived + 1e-9).all() and (arrived - t < 0.01 * t).all()
    np.testing.assert_allclose(
        dumb.total_pkts_s, dumb.throughput_A_pkts_s + dumb.throughput_B_pkts_s + dumb.throughput_C_pkts_s
    )
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


def test_table_4_has_an_interval_per_technique_around_its_estimate(out: Path) -> None:
    t4 = pd.read_csv(out / "table_4.csv")
    assert list(t4.technique) == ["DT", "RED", "CoDel", "PIE", "ENCN", "ANCE"]
    assert (t4.runs == ance.SMC_RUNS_QUICK).all()
    assert (t4.estimate == t4.crossed / t4.runs).all()
    assert (t4.clopper_pearson_low <= t4.estimate).all() and (t4.estimate <= t4.clopper_pearson_high).all()
    assert (t4.chernoff_low <= t4.estimate).all() and (t4.estimate <= t4.chernoff_high).all()
    # The interval is computed for the quick run count, not the paper's 738 runs.
    epsilon = np.sqrt(np.log(2 / ance.SMC_ALPHA) / (2 * ance.SMC_RUNS_QUICK))
    np.testing.assert_allclose(t4.epsilon, epsilon)
    # Clopper-Pearson at 95 %, against scipy's beta quantiles.
    from scipy.stats import beta

    k, n = t4.crossed.to_numpy(), t4.runs.to_numpy()
    lo = np.where(k == 0, 0.0, beta.ppf(0.025, k, n - k + 1))
    hi = np.where(k == n, 1.0, beta.ppf(0.975, k + 1, n - k))
    np.testing.assert_allclose(t4.clopper_pearson_low, lo, atol=1e-8)
    np.testing.assert_allclose(t4.clopper_pearson_high, hi, atol=1e-8)
    # The published intervals in adjacent columns (ENCN and ANCE share the paper's last row).
    assert [tuple(x) for x in t4[["paper_low", "paper_high"]].to_numpy()] == list(ance.PUBLISHED_TABLE_4.values())
    assert (
        not t4[
            ["runs", "crossed", "estimate", "clopper_pearson_low", "clopper_pearson_high", "paper_low", "paper_high"]
        ]
        .isna()
        .any()
        .any()
    )
    report = (out / "report.md").read_text()
    assert "quick form: 30 runs per technique" in report


def test_table_4_outcomes_are_the_runs_themselves(out: Path) -> None:
    # Independent oracle: a plain run with the seed the checker used crosses 8727 iff the
    # checker says so, at the first sampling instant where sum t_k |e_k| exceeds it.
    runs = pd.read_csv(out / "table_4_outcomes.csv")
    t4 = pd.read_csv(out / "table_4.csv").set_index("technique")
    counts = runs.groupby("technique").satisfied.sum()
    assert (counts.reindex(t4.index) == t4.crossed).all()
    for name in ("DT", "ENCN", "ANCE"):
        row = runs[runs.technique == name].iloc[0]
        result = ccsim.run(ccsim.from_dict(ance.dumbbell_scenario(name)), seed=int(row.seed))
        t, itae = ance.itae_curve(result)
        assert bool(row.satisfied) == bool(result.control.itae_sum.iloc[0] > ance.ITAE_THRESHOLD)
        if row.satisfied:
            assert row.time_s == pytest.approx(t[np.argmax(itae > ance.ITAE_THRESHOLD)], abs=1e-9)
        else:
            assert np.isnan(row.time_s)
    # Figure 31's curves end at the estimates: the crossings of each technique by 30 s.
    for name, group in runs.groupby("technique"):
        assert (group.time_s.dropna() <= 30).all()
        assert group.time_s.notna().sum() == t4.loc[name, "crossed"]


def test_jain_helper_matches_the_definition() -> None:
    # (Σx)² / (n Σx²) (Jain, Chiu, Hawe 1984): 1 for equal shares, k/n when k of n share equally.
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
