"""``ccsim compare``'s ranking in a terminal and in its files: readable at 80 columns (no cell cut,
the objective's metrics kept, the rest named), complete at 200, headers that say what each
column is and its unit, flow groups in numeric order, and exported columns named with units."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pandas as pd
import pytest
from ccsim.experiments import compare
from ccsim.experiments.compare.report import exported_tables, print_table, write_report
from conftest import SCENARIOS, _cli_env, analyse_cells
from rich.console import Console

EXAMPLE = SCENARIOS / "examples" / "rtt-fairness.toml"

# Per queue discipline, per seed: what each made-up run measured.
CELLS = {
    "fq_codel": {"utilization": [0.99, 0.98, 0.995], "jain": [0.99, 0.97, 0.98], "p99_delay": [0.021, 0.022, 0.020]},
    "pie": {"utilization": [0.97, 0.99, 0.98], "jain": [0.80, 0.78, 0.83], "p99_delay": [0.027, 0.031, 0.025]},
    "codel": {"utilization": [0.95, 0.96, 0.94], "jain": [0.85, 0.86, 0.84], "p99_delay": [0.012, 0.013, 0.011]},
}
OTHERS = {"goodput": 48e6, "mean_delay": 0.006, "drop_ratio": 0.0117, "retransmissions": 986.0}


def made_up(tmp_path: Path, objective: str = "latency") -> compare.Comparison:
    """``analyse`` of a CUBIC x (fq_codel, pie, codel) matrix over 3 seeds, without simulating."""
    seeds = [1, 2, 3]
    others = {metric: [value * (1 + 0.01 * seed) for seed in seeds] for metric, value in OTHERS.items()}
    cells = {queue: {**others, **measured} for queue, measured in CELLS.items()}
    return analyse_cells(cells, seeds, objective, tmp_path, cc="cubic")


def printed(cmp: compare.Comparison, width: int) -> list[str]:
    out = io.StringIO()
    print_table(cmp, Console(file=out, width=width, color_system=None))
    return out.getvalue().splitlines()


def header_of(lines: list[str]) -> str:
    """The table's header: its lines down to the one that starts with "rank"."""
    end = next(i for i, line in enumerate(lines) if line.startswith("rank "))
    return "\n".join(lines[1 : end + 1])


def table_rows(lines: list[str]) -> list[str]:
    return [line for line in lines if re.match(r"^\s*\d+\s+\d+\s+cubic\+", line)]


@pytest.mark.parametrize("objective", ["latency", "fairness", "throughput"])
def test_at_80_columns_nothing_is_cut_and_the_objectives_metrics_are_kept(tmp_path: Path, objective: str) -> None:
    cmp = made_up(tmp_path, objective)
    lines = printed(cmp, 80)
    text = "\n".join(lines)
    assert all(len(line) <= 80 for line in lines), text
    assert "…" not in text and "..." not in text
    rows = table_rows(lines)
    assert [row.split()[2] for row in rows] == [f"cubic+{q}" for q in cmp.table["queue"]]
    header = header_of(lines)
    if objective == "latency":
        assert "p99" in header and "delay ms" in header and "one-way" in header
        # The means as the files have them, in the header's unit.
        p99 = cmp.table.set_index("queue")["p99_delay_mean"] * 1e3
        for row in rows:
            assert f"{p99[row.split()[2].removeprefix('cubic+')]:.2f}" in row
    if objective == "fairness":
        assert "Jain's" in header and "(0-1)" in header
    # What does not fit is named, with where to find it.
    assert "Not shown here:" in text and "comparison.csv" in text


def test_at_200_columns_the_table_is_complete_with_intervals(tmp_path: Path) -> None:
    cmp = made_up(tmp_path)
    lines = printed(cmp, 200)
    text = "\n".join(lines)
    assert all(len(line) <= 200 for line in lines) and "…" not in text
    assert "Not shown here" not in text
    header = header_of(lines)
    for words in ("link", "utilized", "%", "Jain's", "index", "(0-1)", "mean", "p99", "queueing", "delay ms"):
        assert words in header, words
    for words in ("one-way", "packets", "dropped", "retrans-", "segments"):
        assert words in header, words
    assert "goodput" not in header  # only when the objective names it
    for row in table_rows(lines):
        # score and the six metrics (no flow groups here), each mean ± half-width or mean [low, high]
        assert row.count("±") + row.count("[") == 7, row
    assert "one way (not an RTT)" in text and "share of the packets arriving at that queue" in text


def test_headers_name_the_units_of_the_values(tmp_path: Path) -> None:
    cmp = made_up(tmp_path)
    row = next(r for r in table_rows(printed(cmp, 200)) if "cubic+codel" in r)
    codel = cmp.table.set_index("queue").loc["codel"]
    assert f"{codel['utilization_mean'] * 100:.1f}" in row  # %, not a fraction
    assert f"{codel['p99_delay_mean'] * 1e3:.2f} ± {codel['p99_delay_ci95'] * 1e3:.2f}" in row  # ms, not s
    assert f"{codel['drop_ratio_mean'] * 100:.2f}" in row


def test_a_very_narrow_terminal_gets_one_block_per_combination(tmp_path: Path) -> None:
    cmp = made_up(tmp_path)
    lines = printed(cmp, 40)
    text = "\n".join(lines)
    assert all(len(line) <= 40 for line in lines) and "…" not in text
    assert re.search(r"^1\. cubic\+\w+ \(tier \d\): score", text, re.M)
    flat = re.sub(r"\s+", " ", text)  # lines wrapped at 40 columns, read as one
    assert re.search(r"p99 queueing delay \(one way\): [\d.]+ ms ± [\d.]+", flat), flat


def test_exported_columns_carry_their_units(tmp_path: Path) -> None:
    cmp = made_up(tmp_path)
    write_report(cmp, tmp_path)
    table = pd.read_csv(tmp_path / "comparison.csv")
    runs = pd.read_csv(tmp_path / "runs_metrics.csv")
    for name in ("p99_delay_s", "mean_delay_s", "goodput_bps", "jain_index", "utilization", "drop_ratio"):
        assert name in table.columns and name in runs.columns, name
        for suffix in ("_sd", "_ci95_half", "_ci95_lo", "_ci95_hi"):
            assert f"{name}{suffix}" in table.columns
    assert not [c for c in table.columns if c.endswith("_mean") or c in ("p99_delay", "mean_delay", "goodput")]
    assert {"vs_best_score_diff", "vs_best_score_diff_ci95_lo", "score", "tier", "rank"} <= set(table.columns)
    assert list(table.columns[:4]) == ["rank", "tier", "cc", "queue"] and table.columns[-1] == "command"
    parquet = pd.read_parquet(tmp_path / "comparison.parquet")
    assert list(parquet.columns) == list(table.columns)
    by_queue = table.set_index("queue")
    assert by_queue.loc["pie", "p99_delay_s"] == pytest.approx(sum(CELLS["pie"]["p99_delay"]) / 3)
    assert list(runs.loc[runs["queue"] == "pie", "p99_delay_s"]) == CELLS["pie"]["p99_delay"]
    in_memory, _ = exported_tables(cmp)
    assert list(in_memory.columns) == list(table.columns)


def test_compare_on_the_rtt_example_groups_by_rtt_in_numeric_order(tmp_path: Path) -> None:
    """The example end to end (shortened): two queue disciplines, Jain's index per RTT group in
    the files in numeric order, a readable table at 80 columns and a complete one at 200."""
    import subprocess
    import sys

    out = tmp_path / "cmp"
    args = [sys.executable, "-m", "ccsim", "compare", str(EXAMPLE), "--cc", "cubic", "--queue", "fq_codel,pie"]
    args += ["--seeds", "2", "--objective", "latency, fairness", "--out", str(out), "--jobs", "2", "--quiet"]
    args += ["--set", "simulation.duration=6s", "--set", "simulation.warmup=2s"]
    outputs = {}
    for width in (80, 200):
        proc = subprocess.run(
            args, capture_output=True, text=True, env=_cli_env() | {"COLUMNS": str(width)}, timeout=600
        )
        assert proc.returncode == 0, proc.stderr
        outputs[width] = proc.stdout
        lines = proc.stdout.splitlines()
        assert all(len(line) <= width for line in lines), proc.stdout
        assert "…" not in proc.stdout
    assert "4 runs: 0 run now, 4 done before" in outputs[200]  # the second command reuses the runs
    rows = table_rows(outputs[200].splitlines())
    assert len(rows) == 2
    for row in rows:  # score and seven metrics, each with its interval
        assert row.count("±") + row.count("[") == 8, row
    assert "rtt10ms .. rtt100ms" in outputs[80]
    table = pd.read_csv(out / "comparison.csv")
    groups = [c for c in table.columns if re.fullmatch(r"jain_index\.rtt\d+ms", c)]
    assert groups == [f"jain_index.rtt{10 * k}ms" for k in range(1, 11)]
    runs = pd.read_csv(out / "runs_metrics.csv")
    assert {"p99_delay_s", "jain_index", "jain_index_groups"} <= set(runs.columns)
    assert set(table["queue"]) == {"fq_codel", "pie"}
