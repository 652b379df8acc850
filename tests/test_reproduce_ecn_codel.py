"""`ccsim reproduce ecn-codel --quick`: paper 004 (ECN-enhanced CoDel), every table and figure,
and the findings the paper states that one quick seed already shows."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from ccsim.experiments.reproduce import ecn_codel
from ccsim.results.result import Result

FIGURES = [
    f"figure_{n}_{what}.png"
    for n, what in [
        (3, "retransmissions"),
        (4, "throughput"),
        (5, "queue_bytes"),
        (6, "sojourn"),
        (7, "throughput"),
        (8, "retransmissions"),
        (9, "queue_bytes"),
        (10, "sojourn"),
        (11, "throughput"),
        (12, "throughput"),
        (13, "drops"),
    ]
] + ["sensitivity_rtt.png"]
TABLES = ["figure_13_drops", "summary", "per_flow_throughput", "sensitivity_rtt"]
PUBLISHED = {
    "2 flows, 50 Mbit/s": (32, 10),
    "5 flows, 50 Mbit/s": (99, 22),
    "10 flows, 50 Mbit/s": (441, 1),
    "10 flows, 500 Mbit/s": (183, 1),
}


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ecn-codel")
    proc = subprocess.run(
        [sys.executable, "-m", "ccsim", "reproduce", "ecn-codel", "--quick", "--out", str(root)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    return root / "ecn-codel"


def test_every_table_and_figure_is_written_and_linked(out: Path) -> None:
    report = (out / "report.md").read_text()
    for name in FIGURES:
        assert (out / name).stat().st_size > 0, name
        assert f"]({name})" in report, name
    for name in TABLES:
        assert (out / f"{name}.csv").exists() and (out / f"{name}.md").exists(), name
        assert f"({name}.csv)" in report


def test_drop_table_is_complete_and_carries_the_published_counts(out: Path) -> None:
    drops = pd.read_csv(out / "figure_13_drops.csv")
    assert list(drops.experiment) == [e.label for e in ecn_codel.EXPERIMENTS]
    ours = [c for c in drops.columns if c != "experiment" and not c.startswith("paper_")]
    assert not drops[ours].isna().any().any()
    published = drops.set_index("experiment")
    for label, (codel, ecn) in PUBLISHED.items():
        assert (published.loc[label, "paper_codel_drops"], published.loc[label, "paper_ecn_codel_drops"]) == (
            codel,
            ecn,
        )
    # The paper prints no number for the 1 Gbit/s (HS) bars of Figure 13, and only there.
    paper_cols = ["paper_codel_drops", "paper_ecn_codel_drops"]
    assert published[paper_cols].isna().sum(axis=1).to_dict() == {
        e.label: (2 if e.paper_drops is None else 0) for e in ecn_codel.EXPERIMENTS
    }


def test_summary_columns_are_complete(out: Path) -> None:
    summary = pd.read_csv(out / "summary.csv")
    assert len(summary) == 2 * len(ecn_codel.EXPERIMENTS)
    ours = [c for c in summary.columns if not c.startswith("paper_")]
    assert not summary[ours].isna().any().any()
    assert summary.paper_drops.notna().sum() == 2 * len(PUBLISHED)
    flows = pd.read_csv(out / "per_flow_throughput.csv")
    assert not flows.isna().any().any()
    assert set(flows.groupby(["experiment", "queue"]).size()) <= {2, 5, 10}


def test_rtt_sensitivity_table_is_complete(out: Path) -> None:
    sens = pd.read_csv(out / "sensitivity_rtt.csv")
    # The scenario files' 10 ms and the quick form's extra delay, for each 50 Mbit/s scenario.
    assert len(sens) == len(ecn_codel.SENSITIVITY) * (1 + len(ecn_codel.SENS_DELAYS_QUICK))
    assert not sens.isna().any().any()
    assert (sens.base_rtt_ms == 2 * (sens.bottleneck_delay_ms + 2)).all()
    # The runs at the files' delay are the main runs: same drop counts as the summary.
    summary = pd.read_csv(out / "summary.csv").set_index(["experiment", "queue"])
    at_file = sens[sens.bottleneck_delay_ms == ecn_codel.FILE_DELAY_MS].set_index("experiment")
    for label, row in at_file.iterrows():
        assert row.codel_drops == summary.loc[(label, "CoDel"), "drops"]
        assert row.ecn_codel_drops == summary.loc[(label, "ECN-enhanced CoDel"), "drops"]


def test_findings_the_quick_run_shows(out: Path) -> None:
    s = pd.read_csv(out / "summary.csv").set_index(["experiment", "queue"])
    codel, ecn = "CoDel", "ECN-enhanced CoDel"
    for exp in ecn_codel.EXPERIMENTS:
        a, b = s.loc[(exp.label, codel)], s.loc[(exp.label, ecn)]
        # Only the enhancement marks, and its flows react to the marks.
        assert a.marks == 0 and a.ecn_reductions == 0
        assert b.marks > 0 and b.ecn_reductions > 0
        # Every drop is a lost segment the sender retransmits (no spurious retransmissions).
        for row in (a, b):
            assert abs(row.retransmissions - row.drops) <= max(5, 0.02 * row.drops)
        # "It does not affect the good properties of CoDel": the link stays as busy.
        assert b.utilization > 0.9 and abs(a.utilization - b.utilization) < 0.05
        # With five or more flows (where the queue grows fast enough to pass C x target within
        # CoDel's interval) the enhancement drops less, with ten several times less, and it
        # shortens the sojourn.
        if exp.key != "flows2":
            assert b.drops < a.drops, exp.label
            assert b.drops * (5 if exp.key.startswith("flows10") else 1) < a.drops, exp.label
            assert b.mean_sojourn_ms < a.mean_sojourn_ms, exp.label
            assert b.max_queue_pkts <= a.max_queue_pkts
    # Fairness "similar" on the 50 Mbit/s link: Jain's indices within 0.05 of each other.
    for label in ("2 flows, 50 Mbit/s", "5 flows, 50 Mbit/s", "10 flows, 50 Mbit/s"):
        assert abs(s.loc[(label, codel)].jain_window - s.loc[(label, ecn)].jain_window) < 0.05


def test_time_series_helpers_integrate_to_the_flow_totals(out: Path) -> None:
    saved = json.loads((out / "runs-quick" / "flows5-ecn_codel-s1.json").read_text())
    r = Result(saved["raw"], saved["config"], saved["wall_time_s"])
    tput = ecn_codel.throughput_mbps(r, bin_s=0.5)
    delivered = tput.sum() * 0.5 * 1e6 / 8
    expected = r.flows.set_index("id").bytes_delivered
    # The last sample is taken at the end of the run: the bins add up to each flow's total.
    assert np.allclose(delivered.to_numpy(), expected.loc[tput.columns].to_numpy(), rtol=1e-6, atol=1)
    assert ecn_codel.retransmissions_per_bin(r).sum() == pytest.approx(r.flows.retransmissions.sum())
    # A flow sends only between its start and its stop.
    stop = r.config["flows"][4]["stop_ns"] / 1e9
    assert (tput.loc[tput.index > stop + 0.5, 4] == 0).all()
    assert (tput.loc[tput.index < r.flows.start_s[4] - 0.5, 4] == 0).all()


def test_jain_index_by_hand() -> None:
    assert ecn_codel.jain(np.array([1.0, 1.0, 1.0])) == pytest.approx(1.0)
    assert ecn_codel.jain(np.array([1.0, 0.0])) == pytest.approx(0.5)
    assert ecn_codel.jain(np.array([3.0, 1.0])) == pytest.approx(16 / 20)
