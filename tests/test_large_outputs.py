"""What `ccsim run` prints, plots and writes for thousands of flows: the extremes of the goodput
distribution instead of a row per flow, a goodput figure of bounded size, and a summary.json
with a line per flow."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pandas as pd
from ccsim.cli.run import EXTREME_FLOWS, LISTED_FLOWS, _flows_table
from ccsim.results.plots import MAX_WIDTH_IN, plot_goodput
from ccsim.results.result import summary_text


def _flow(i: int, goodput: float) -> dict:
    return {
        "id": i,
        "name": str(i),
        "group": None,
        "src": "s",
        "dst": "r",
        "cc": "newreno",
        "transport": "tcp",
        "goodput_bps": goodput,
        "retransmissions": 0,
        "timeouts": 0,
        "rtt_mean_s": None,
        "delay_mean_s": None,
    }


def test_a_few_flows_get_a_row_each_in_id_order() -> None:
    flows = [_flow(i, 1e6 * ((7 * i) % 11)) for i in range(LISTED_FLOWS)]
    table = _flows_table(flows)
    assert table.row_count == LISTED_FLOWS and table.caption is None
    assert [str(c) for c in table.columns[0].cells] == [str(i) for i in range(LISTED_FLOWS)]


def test_many_flows_show_the_lowest_and_highest_goodputs() -> None:
    n = 5 * LISTED_FLOWS
    flows = [_flow(i, 1e3 * ((37 * i) % n)) for i in range(n)]  # a permutation of 0..n-1 kbit/s
    table = _flows_table(flows)
    assert table.row_count == 2 * EXTREME_FLOWS
    ranked = sorted(range(n), key=lambda i: (37 * i) % n)
    expected = ranked[:EXTREME_FLOWS] + ranked[-EXTREME_FLOWS:]
    assert [str(c) for c in table.columns[0].cells] == [str(i) for i in expected]
    assert f"of {n} flows" in str(table.caption) and "flows.parquet" in str(table.caption)


def _png_size(path: Path) -> tuple[int, int]:
    with open(path, "rb") as f:
        header = f.read(24)
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", header[16:24])


def test_the_goodput_figure_stays_within_bounds_for_thousands_of_flows(tmp_path: Path) -> None:
    n = 5000
    flows = pd.DataFrame(
        {"id": range(n), "name": [str(i) for i in range(n)], "goodput_bps": [1e5 * (i % 9) for i in range(n)]}
    )
    assert plot_goodput(flows, tmp_path / "g.png")
    width, height = _png_size(tmp_path / "g.png")
    assert width <= MAX_WIDTH_IN * 120 and height == 4 * 120


def test_summary_json_has_a_line_per_record_and_sorted_keys() -> None:
    flows = [{**_flow(i, 1e3 * i), "rtt_mean_s": float("nan") if i == 2 else 0.1} for i in range(300)]
    summary = {
        "seed": 1,
        "flows": flows,
        "queues": [{"name": "A->B", "drops": 3}],
        "control": [],
        "bottleneck": {"name": "A->B", "rate_bps": 10**8},
        "jain_index": None,
    }
    text = summary_text(summary)
    # The same values (NaN compared as text), and the same text for the same values in another order.
    assert json.dumps(json.loads(text), sort_keys=True) == json.dumps(summary, sort_keys=True)
    assert summary_text(dict(reversed(list(summary.items())))) == text
    lines = text.splitlines()
    # Braces, the four keys of one line, and the two lists: a line to open, one per record, one to close.
    assert len(lines) == 2 + 4 + (1 + 300 + 1) + (1 + 1 + 1)
    flow_lines = [line for line in lines if line.lstrip().startswith('{"')]
    assert len(flow_lines) == 301
    for i, line in enumerate(flow_lines[:300]):
        record = json.loads(line.rstrip(","))
        assert list(record) == sorted(record) and record["id"] == i
    assert [line.split(":")[0].strip() for line in lines if line.startswith('  "')] == [
        '"bottleneck"',
        '"control"',
        '"flows"',
        '"jain_index"',
        '"queues"',
        '"seed"',
    ]
