"""`ccsim reproduce l4s-dualpi2 --quick`: TCP Prague and CUBIC through DualPI2 (RFC 9332;
De Schepper et al., CoNEXT 2016): L4S queueing about a millisecond or less, the Classic queue
near the 15 ms target, rates of the same order."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from ccsim.experiments.reproduce import l4s_dualpi2


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("l4s")
    proc = subprocess.run(
        [sys.executable, "-m", "ccsim", "reproduce", "l4s-dualpi2", "--quick", "--out", str(root)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    return root / "l4s-dualpi2"


def test_tables_and_figures_are_written_and_linked(out: Path) -> None:
    report = (out / "report.md").read_text()
    for name in ("coexistence", "step_sensitivity"):
        assert (out / f"{name}.csv").exists() and f"({name}.csv)" in report, name
    for name in ("coexistence.png", "queues.png"):
        assert (out / name).stat().st_size > 0 and f"]({name})" in report, name


def test_base_delay_by_hand() -> None:
    # 20 ms RTT: 10 ms of propagation one way, 1500 B on two 1 Gbit/s links and 40 Mbit/s.
    assert l4s_dualpi2.base_one_way_s(40, 20) == pytest.approx(0.010 + 2 * 12e-6 + 300e-6)


def test_l4s_queue_is_short_classic_near_target_rates_of_the_same_order(out: Path) -> None:
    table = pd.read_csv(out / "coexistence.csv")
    assert len(table) == len(l4s_dualpi2.RATES_QUICK) * len(l4s_dualpi2.RTTS_QUICK)
    assert (table.utilization > 0.9).all()
    # Prague loses nothing: every congestion signal is a mark.
    assert (table.l4s_drops == 0).all() and (table.l4s_marks > 100).all()
    for row in table.itertuples():
        # L4S: sub-millisecond on average, p99 within 3 ms (the percentile within its resolution).
        assert row.l4s_mean_queue_ms < 1.0, row
        assert row.l4s_p99_queue_ms < 3.0, row
        # Classic: near the PI2 target of 15 ms.
        assert 10.0 < row.classic_mean_queue_ms < 20.0, row
    # Rate balance within a factor of 3 where a packet is shorter than the 1 ms step (40 Mbit/s
    # and above); at 10 Mbit/s Prague gets less than CUBIC (see the step sensitivity).
    fast = table[table.rate_mbps >= 40]
    assert ((fast.rate_ratio > 1 / 3) & (fast.rate_ratio < 3)).all(), fast.rate_ratio
    slow = pd.read_csv(out / "step_sensitivity.csv").iloc[0]
    assert slow.rate_ratio_step_1ms < 1.0
    assert 1 / 3 < slow["rate_ratio_step_2.4ms"] < 3
