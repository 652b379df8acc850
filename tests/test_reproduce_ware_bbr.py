"""`ccsim reproduce ware-bbr --quick`: Ware et al. (IMC 2019), BBR's share against CUBIC over the
buffer size, and BBR alone (ProbeRTT every 10 s, the standing queue of several flows)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from ccsim.experiments.reproduce import ware_bbr


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ware-bbr")
    proc = subprocess.run(
        [sys.executable, "-m", "ccsim", "reproduce", "ware-bbr", "--quick", "--out", str(root)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    return root / "ware-bbr"


def test_tables_and_figures_are_written_and_linked(out: Path) -> None:
    report = (out / "report.md").read_text()
    for name in ("figure_8a_share", "share_vs_cubic_flows", "bbr_alone"):
        assert (out / f"{name}.csv").exists() and f"({name}.csv)" in report, name
    for name in ("figure_8a_share.png", "bbr_alone.png"):
        assert (out / name).stat().st_size > 0 and f"]({name})" in report, name


def test_model_values_by_hand() -> None:
    # 40 ms x 10 Mbit/s: c = 833.3 packets/s, BDP 33.3 packets. At X = 8: q = 266.7 packets,
    # p = 1/2 - 1/16 - 4/266.7 = 0.4225; ProbeRTT (0.32 + 0.2 + 0.04) s of every 10 s.
    assert ware_bbr.model_share(8) == pytest.approx((1 - 0.4225) * (1 - 0.056), rel=1e-3)
    # Shallow buffers: p would be negative, BBR gets everything outside ProbeRTT.
    assert ware_bbr.model_share(1) == pytest.approx(1 - 0.28 / 10, rel=1e-6)


def test_bbr_dominates_shallow_buffers_and_loses_share_as_the_buffer_grows(out: Path) -> None:
    share = pd.read_csv(out / "figure_8a_share.csv").set_index("buffer_bdp")
    assert list(share.index) == ware_bbr.BUFFERS_QUICK
    # The link stays busy in every run.
    assert (share.utilization > 0.9).all()
    # Shallow buffer: BBR takes most of the link (Ware et al.; Hock et al.).
    assert share.bbr_share[0.5] > 0.7
    # Its share falls as the buffer grows, as the model says, and stays below it.
    assert share.bbr_share[0.5] > share.bbr_share[2] > share.bbr_share[16]
    assert share.bbr_share[16] < 0.5
    assert (share.bbr_share <= share.model_share + 0.02).all()


def test_share_does_not_depend_on_the_number_of_cubic_flows(out: Path) -> None:
    multi = pd.read_csv(out / "share_vs_cubic_flows.csv").iloc[0]
    assert abs(multi.bbr_share_vs_1_cubic - multi.bbr_share_vs_4_cubic) < 0.1


def test_bbr_alone_probe_rtt_and_standing_queue(out: Path) -> None:
    alone = pd.read_csv(out / "bbr_alone.csv").set_index("bbr_flows")
    one, two = alone.loc[1], alone.loc[2]
    # ProbeRTT about every 10 s (the min RTT filter's window plus the time to notice it
    # expired), with the window at 4 packets for at least 200 ms.
    for row in (one, two):
        assert 10.0 <= row.probe_rtt_interval_s < 11.0
        assert row.cwnd_4_pkts_min_s >= 0.2
        assert row.probe_rtt_visits >= 4
        assert row.drops == 0
    # One flow keeps the queue small with about one BDP in flight...
    assert one.mean_queue_bdp < 0.3 and 0.9 < one.mean_inflight_bdp < 1.3
    # ... two flows are held by their 2 BDP window: about one BDP queued.
    assert 0.7 < two.mean_queue_bdp < 1.5 and 1.7 < two.mean_inflight_bdp < 2.5
