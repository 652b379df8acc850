"""``ccsim compare``: the statistics against closed forms and statsmodels, intervals within each
metric's range, tiers that follow the ranks, what the verdict says with few seeds, the objective
grammar, the Piotrowska access link at heavy load (PIE above DropTail for latency, with the
delays that say why), an impossible constraint, resuming after an interruption, and the report
in a real headless browser with the network off."""

from __future__ import annotations

import html
import json
import math
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from ccsim.errors import ScenarioError
from ccsim.experiments import compare
from ccsim.experiments.compare.analysis import verdict_lines
from ccsim.experiments.compare.report import _pm, pareto_front
from ccsim.results.metrics import jain
from conftest import DEFAULTS, SCENARIOS, analyse_cells, interrupt_cli, run_cli

ACCESS_LINK = SCENARIOS / "papers" / "piotrowska" / "access_link.toml"
# Heavy congestion (900 flows: 100 per source-sink pair), shortened: 8 s with 3 s of warm-up.
HEAVY = [
    "--set",
    "flows.count=100",
    "--set",
    "simulation.duration=8s",
    "--set",
    "simulation.warmup=3s",
    "--set",
    "flows.start=0s..1s",
]


# --- statistics against independent references ---------------------------------------------------

# Student's t in closed form for 1 and 2 degrees of freedom (Cauchy; F(t) = 1/2 + t / (2 sqrt(2 + t^2))):
# two-sided tail probabilities and the 0.975 quantiles, independent of any library.
T975 = {1: math.tan(0.475 * math.pi), 2: 0.95 * math.sqrt(2.0 / (1.0 - 0.95**2))}


def two_sided_p(t: float, df: int) -> float:
    t = abs(t)
    return 1.0 - 2.0 / math.pi * math.atan(t) if df == 1 else 1.0 - t / math.sqrt(2.0 + t * t)


def sample_sd(values: list[float]) -> float:
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))


# Where each metric comes from in the sweep's table (ccsim.experiments.compare.analysis.run_metrics).
def test_mean_ci_is_the_student_t_interval() -> None:
    values = [3.0, 5.5, 4.25]
    mean, sd, half = compare.mean_ci(values)
    assert mean == pytest.approx(12.75 / 3) and sd == pytest.approx(sample_sd(values))
    assert half == pytest.approx(T975[2] * sample_sd(values) / math.sqrt(3), rel=1e-12)
    assert math.isnan(compare.mean_ci([1.0])[2])


def test_welch_test_matches_scipy_and_handles_samples_without_spread() -> None:
    stats = pytest.importorskip("scipy.stats")
    a, b = [1.0, 2.0, 3.5, 2.2], [2.9, 4.1, 3.3, 5.0, 4.4]
    assert compare.welch_test(a, b) == pytest.approx(stats.ttest_ind(a, b, equal_var=False).pvalue, rel=1e-8)
    # Welch's t over one sample of two and one of three: df = 1 exactly when the second has no
    # spread, so the p-value is the Cauchy tail of (mean a - mean b) / sqrt(var a / 2).
    t = (4.0 - 1.0) / math.sqrt(sample_sd([3.0, 5.0]) ** 2 / 2)
    assert compare.welch_test([3.0, 5.0], [1.0, 1.0, 1.0]) == pytest.approx(two_sided_p(t, 1), rel=1e-9)
    assert compare.welch_test([2.0, 2.0], [2.0, 2.0]) == 1.0  # deterministic and equal
    assert compare.welch_test([2.0, 2.0], [3.0, 3.0]) == 0.0  # deterministic and different
    assert math.isnan(compare.welch_test([1.0], [2.0, 3.0]))


def test_holm_rejects_what_statsmodels_rejects() -> None:
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    for pvalues in ([0.01, 0.04, 0.03, 0.2], [0.001, 0.012, 0.013, 0.5, 0.02], [0.3, 0.6], [0.0125, 0.0126, 0.05]):
        expected = list(multitest.multipletests(pvalues, alpha=0.05, method="holm")[0])
        assert compare.holm(pvalues) == expected


def test_cells_with_common_seeds_are_compared_by_a_paired_t_test(tmp_path: Path) -> None:
    # The score is the utilization. The seed moves both cells the same way (0.90/0.95/0.99 and
    # 0.80/0.90/0.91), the gap between them far less: pairing by seed sees that, Welch's test
    # (p about 0.3 here) would not.
    a, b = [0.90, 0.95, 0.99], [0.80, 0.90, 0.91]
    cmp = analyse_cells(
        {"pie": {"utilization": a}, "droptail": {"utilization": b}}, [7, 8, 9], "max:utilization", tmp_path
    )
    table = cmp.table.set_index("queue")
    d = [x - y for x, y in zip(a, b)]
    mean_d, se_d = sum(d) / 3, sample_sd(d) / math.sqrt(3)
    row = table.loc["droptail"]
    assert row["same_as_best_p"] == pytest.approx(two_sided_p(mean_d / se_d, 2), rel=1e-9)
    assert row["same_as_best_p"] < 0.05 < compare.welch_test(a, b)
    assert row["vs_best_test"] == "paired t"
    assert row["vs_best_diff"] == pytest.approx(mean_d)
    assert (row["vs_best_ci95_lo"], row["vs_best_ci95_hi"]) == pytest.approx(
        (mean_d - T975[2] * se_d, mean_d + T975[2] * se_d), rel=1e-9
    )
    assert list(table["tier"]) == [1, 2]
    # Each cell's interval of the mean, clipped to utilization's range [0, 1]: pie's upper end
    # (0.947 + 0.112) is past 1.
    half = T975[2] * sample_sd(a) / math.sqrt(3)
    pie = table.loc["pie"]
    assert pie["utilization_ci95_lo"] == pytest.approx(sum(a) / 3 - half) and pie["utilization_ci95_hi"] == 1.0


def shown_interval(row: pd.Series, metric: str) -> tuple[float, float]:
    """The interval as the table and the report print it: 'MEAN ± HALF' or 'MEAN [LOW, HIGH]'."""
    text = _pm(row, metric)
    match = re.fullmatch(r"(\S+)(?: \S+)? (?:± (\S+)|\[(\S+), (\S+)\])", text)
    assert match, text
    mean, half, lo, hi = match.groups()
    if half is not None:
        return float(mean) - float(half), float(mean) + float(half)
    return float(lo), float(hi)


def test_intervals_stay_within_each_metrics_range(tmp_path: Path) -> None:
    # Two seeds: t(0.975, 1) = 12.7, so mean ± t s / sqrt(2) reaches far outside [0, 1] for
    # Jain's index and below 0 for delays and drops.
    cells = {
        "codel": {"jain": [0.30, 0.95], "p99_delay": [0.004, 0.090], "drop_ratio": [0.001, 0.03]},
        "pie": {"jain": [0.05, 0.60], "p99_delay": [0.010, 0.012], "drop_ratio": [0.02, 0.021]},
    }
    cmp = analyse_cells(cells, [1, 2], "latency", tmp_path)
    for _, row in cmp.table.iterrows():
        values = cells[row["queue"]]
        for metric, (low, high) in (("jain", (0.0, 1.0)), ("p99_delay", (0.0, math.inf)), ("drop_ratio", (0.0, 1.0))):
            x = values[metric]
            half = T975[1] * sample_sd(x) / math.sqrt(2)
            lo, hi = shown_interval(row, metric)
            scale = {"jain": 1.0, "p99_delay": 1e3, "drop_ratio": 100.0}[metric]  # printed in ms and %
            assert low * scale <= lo <= hi <= high * scale, (row["queue"], metric, lo, hi)
            expected = (max(sum(x) / 2 - half, low), min(sum(x) / 2 + half, high))
            assert (row[f"{metric}_ci95_lo"], row[f"{metric}_ci95_hi"]) == pytest.approx(expected, rel=1e-9)
    jain_codel = cmp.table.set_index("queue").loc["codel"]
    assert (jain_codel["jain_ci95_lo"], jain_codel["jain_ci95_hi"]) == (0.0, 1.0)


def test_tiers_are_contiguous_blocks_of_ranks(tmp_path: Path) -> None:
    # The best (red) is separated from the four tight cells below it, but not from the last one,
    # whose scores swing over the seeds: the last one must not share the best's tier above the
    # four that rank above it.
    cells = {
        "red": [0.90, 0.91, 0.92],
        "codel": [0.80, 0.812, 0.818],
        "pie": [0.79, 0.802, 0.808],
        "fq_codel": [0.78, 0.792, 0.798],
        "droptail": [0.77, 0.782, 0.788],
        "sfq": [0.20, 0.99, 0.90],
    }
    cmp = analyse_cells({q: {"utilization": v} for q, v in cells.items()}, [1, 2, 3], "max:utilization", tmp_path)
    table = cmp.table
    assert list(table["queue"]) == list(cells)  # ranked by the mean utilization
    tiers = list(table["tier"])
    assert tiers == sorted(tiers) and tiers[0] == 1
    sfq = table.set_index("queue").loc["sfq"]
    assert not sfq["vs_best_separated"] and sfq["same_as_best_p"] > 0.3  # the test alone cannot tell
    assert sfq["tier"] > table.set_index("queue").loc["codel", "tier"] > 1


def test_fewer_than_three_seeds_are_warned_about(tmp_path: Path) -> None:
    cells = {"pie": {"utilization": [0.95, 0.97, 0.96]}, "droptail": {"utilization": [0.90, 0.99, 0.94]}}
    two = analyse_cells(
        {q: {"utilization": v["utilization"][:2]} for q, v in cells.items()},
        [1, 2],
        "max:utilization",
        tmp_path / "two",
    )
    warning = [line for line in verdict_lines(two) if line.startswith("Warning: only 2 seeds")]
    assert len(warning) == 1 and f"t = {T975[1]:.2f}" in warning[0] and f"{T975[2]:.2f} with 3 seeds" in warning[0]
    three = analyse_cells(cells, [1, 2, 3], "max:utilization", tmp_path / "three")
    assert not any(line.startswith("Warning") for line in verdict_lines(three))


def test_very_different_cells_over_two_seeds_are_not_called_indistinguishable(tmp_path: Path) -> None:
    # p99 delays of 6.8 ms and 240 ms on average, but DropTail's swings 60-420 ms over the two
    # seeds: one degree of freedom cannot separate them, and the verdict must say what the two
    # seeds could tell instead of calling them alike.
    cells = {
        "pie": {"p99_delay": [0.0066, 0.0070], "mean_delay": [0.003, 0.004]},
        "droptail": {"p99_delay": [0.060, 0.420], "mean_delay": [0.030, 0.200]},
    }
    cmp = analyse_cells(cells, [1, 2], "latency", tmp_path)
    lines = verdict_lines(cmp)
    text = "\n".join(lines)
    assert "indistinguishable" not in text and "not told apart" not in text
    # The score by hand: -p99 / mean p99 - mean delay / mean of mean delays + 0.5 utilization.
    p99 = cells["pie"]["p99_delay"] + cells["droptail"]["p99_delay"]
    md = cells["pie"]["mean_delay"] + cells["droptail"]["mean_delay"]
    s99, smd = sum(p99) / 4, sum(md) / 4

    def score(q: str, i: int) -> float:
        return -cells[q]["p99_delay"][i] / s99 - cells[q]["mean_delay"][i] / smd + 0.5 * DEFAULTS["utilization"]

    d = [score("pie", i) - score("droptail", i) for i in range(2)]
    mean_d, half = sum(d) / 2, T975[1] * sample_sd(d) / math.sqrt(2)
    line = next(line for line in lines if "newreno+droptail" in line and line.startswith("newreno+pie"))
    assert line.startswith("newreno+pie ahead of newreno+droptail (tier 1), which 2 seeds cannot separate")
    assert f"score difference {mean_d:.3f}, 95 % interval {mean_d - half:.3f} to {mean_d + half:.3f} (paired t)" in line
    assert f"detect only differences beyond ±{half:.3f}" in line
    assert "p99_delay 6.80 ms vs 240.00 ms" in line
    assert any(line.startswith("Warning: only 2 seeds") for line in lines)


def test_jain_index_and_pareto_front_by_hand() -> None:
    assert jain([1.0, 1.0, 1.0]) == 1.0
    assert jain([1.0, 0.0]) == pytest.approx(0.5)  # (1)^2 / (2 * 1)
    assert math.isnan(jain([0.0, 0.0])) and math.isnan(jain([]))
    # (utilization, delay): more utilization and less delay are better. (0.9, 50) is dominated
    # by (0.95, 40); (0.99, 100) and (0.8, 10) are trade-offs.
    points = [(0.95, 40.0), (0.9, 50.0), (0.99, 100.0), (0.8, 10.0)]
    assert pareto_front(points, maximize_x=True, maximize_y=False) == [0, 2, 3]


# --- the objective ---------------------------------------------------------------------------------


def test_objective_presets_terms_and_constraints_parse() -> None:
    latency = compare.parse_objective("latency")
    assert latency.weights == compare.PRESETS["latency"] and not latency.constraints
    custom = compare.parse_objective(
        "min:p99_delay*2, max:utilization, jain >= 0.9, p99_delay <= 20ms, drop_ratio < 1%"
    )
    assert custom.weights == {"p99_delay": 2.0, "utilization": 1.0}
    assert [(c.metric, c.op, c.value) for c in custom.constraints] == [
        ("jain", ">=", 0.9),
        ("p99_delay", "<=", pytest.approx(0.020)),
        ("drop_ratio", "<", pytest.approx(0.01)),
    ]
    only_constraints = compare.parse_objective("jain.N1 >= 0.5")
    assert only_constraints.weights == compare.PRESETS["throughput"]


@pytest.mark.parametrize(
    "text, says",
    [
        ("speed", "cannot read 'speed'"),
        ("max:p99_delay", "less p99_delay is better"),
        ("min:latencyy", "unknown metric 'latencyy'"),
        ("p99_delay <= fast", "bad value 'fast'"),
        ("min:p99_delay*0", "a weight must be above 0"),
    ],
)
def test_bad_objectives_name_the_option(text: str, says: str) -> None:
    with pytest.raises(ScenarioError) as err:
        compare.parse_objective(text)
    assert err.value.field == "--objective" and says in err.value.message


def test_bad_names_on_the_command_line_exit_2_with_the_option(tmp_path: Path) -> None:
    proc = run_cli("compare", str(SCENARIOS / "flagship.toml"), "--queue", "droptail,wred", "--out", str(tmp_path))
    assert proc.returncode == 2 and "--queue" in proc.stderr and "wred" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = run_cli("compare", str(SCENARIOS / "flagship.toml"), "--objective", "min:throughput", "--out", str(tmp_path))
    assert proc.returncode == 2 and "--objective" in proc.stderr and "Traceback" not in proc.stderr


def test_objectives_the_scenario_cannot_measure_are_refused_before_running(tmp_path: Path) -> None:
    out = tmp_path / "never"
    proc = run_cli("compare", str(SCENARIOS / "flagship.toml"), "--objective", "control", "--out", str(out))
    assert proc.returncode == 2 and "ITAE needs a [[control]] loop" in proc.stderr
    proc = run_cli("compare", str(ACCESS_LINK), "--objective", "latency, jain.N9 >= 0.5", "--out", str(out))
    assert proc.returncode == 2 and "no flow group 'N9'" in proc.stderr and "N1, N2, N3" in proc.stderr
    assert not out.exists()


def test_default_matrix_leaves_out_ccs_that_need_special_routers_and_varies_only_the_bottleneck() -> None:
    spec = compare.prepare(ACCESS_LINK, seeds=2)
    assert {"newreno", "cubic", "compound", "vegas"} <= set(spec.ccs)
    # Those that need a queue discipline of their own (the registry's partner_queues) are left
    # out, and come back when one of their queues is compared.
    assert not {"dctcp", "edctcp", "jersey", "encn"} & set(spec.ccs)
    assert {"dctcp", "edctcp"} <= set(compare.prepare(ACCESS_LINK, seeds=2, queues=["droptail", "threshold"]).ccs)
    assert "reno" not in spec.ccs  # the scenario's flows use SACK
    assert [q["kind"] for q in spec.queues] == list(compare.DEFAULT_QUEUES)
    assert all(q["limit"] == "900p" for q in spec.queues)  # the scenario's buffer is kept
    assert spec.bottleneck == "A->B" and spec.queue_key == "topology.bottleneck.queue"
    # The scenario gives the reverse direction its own queue: nothing to pin.
    assert "topology.bottleneck.reverse.queue" not in spec.fixed
    # flagship's bottleneck queue covers both directions: the reverse one is pinned.
    flag = compare.prepare(SCENARIOS / "flagship.toml", ccs=["newreno"], queues=["pie"], seeds=1)
    assert flag.fixed["topology.bottleneck.reverse.queue"] is not None


# --- the Piotrowska access link at heavy load -------------------------------------------------------


@pytest.fixture(scope="module")
def heavy(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    out = tmp_path_factory.mktemp("compare") / "al"
    proc = run_cli(
        "compare",
        str(ACCESS_LINK),
        "--cc",
        "newreno",
        "--queue",
        "droptail,pie",
        "--seeds",
        "2",
        "--objective",
        "latency",
        "--out",
        str(out),
        "--jobs",
        "2",
        "--quiet",
        *HEAVY,
    )
    return out, proc


def test_pie_ranks_above_droptail_for_latency_at_heavy_load(
    heavy: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    out, proc = heavy
    assert proc.returncode == 0, proc.stderr
    table = pd.read_csv(out / "comparison.csv")
    rank = dict(zip(table["queue"], table["rank"]))
    assert rank["pie"] < rank["droptail"]
    # The p99 queueing delay the ranking used is each run's own queue statistic (queues.parquet).
    runs = pd.read_parquet(out / "runs_metrics.parquet")
    for _, run in runs.iterrows():
        queues = pd.read_parquet(out / run["run_dir"] / "queues.parquet").set_index("name")
        assert run["p99_delay_s"] == queues.loc["A->B", "p99_sojourn_s"]
        assert queues.loc["A->B", "p50_sojourn_s"] <= run["p99_delay_s"] <= queues.loc["A->B", "max_sojourn_s"]
    p99 = runs.groupby("queue")["p99_delay_s"].mean()
    # 900 flows keep DropTail's 900-packet buffer full: 900 x 1500 B at 100 Mbit/s = 108 ms (the
    # histogram's bins are 6.25 % wide); PIE (target 15 ms at its defaults) keeps it far lower.
    assert p99["droptail"] == pytest.approx(900 * 1500 * 8 / 100e6, rel=0.07)
    assert p99["pie"] < 0.5 * p99["droptail"]
    # The report says why, with the queue delays.
    pie_ms, dt_ms = f"{p99['pie'] * 1e3:.2f} ms", f"{p99['droptail'] * 1e3:.2f} ms"
    why = next(line for line in proc.stdout.splitlines() if "above newreno+droptail" in line)
    assert why.startswith("newreno+pie above") and f"p99_delay {pie_ms} vs {dt_ms}" in why
    report = (out / "report.html").read_text()
    assert html_escaped(why) in report
    info = json.loads((out / "compare.json").read_text())
    assert info["best"] == {"cc": "newreno", "queue": "pie"}


def html_escaped(text: str) -> str:
    return html.escape(text)


def test_an_impossible_constraint_is_reported_as_unsatisfiable(
    heavy: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    out, first = heavy
    assert first.returncode == 0, first.stderr
    proc = run_cli(
        "compare",
        str(ACCESS_LINK),
        "--cc",
        "newreno",
        "--queue",
        "droptail,pie",
        "--seeds",
        "2",
        "--objective",
        "latency, utilization >= 150%",
        "--out",
        str(out),
        "--jobs",
        "2",
        "--quiet",
        *HEAVY,
    )
    assert proc.returncode == 0, proc.stderr
    assert "4 runs: 0 run now, 4 done before" in proc.stdout  # the same runs, analysed again
    assert "No combination satisfies the constraints (utilization >= 150%)" in proc.stdout
    info = json.loads((out / "compare.json").read_text())
    assert info["feasible"] == [] and info["best"] is None
    assert "No combination satisfies" in (out / "report.html").read_text()
    table = pd.read_csv(out / "comparison.csv")
    assert not table["feasible"].any() and (table["violated"] == "utilization >= 150%").all()


def test_control_objective_scores_each_run_by_its_itae_and_queueing_delay(tmp_path: Path) -> None:
    out = tmp_path / "ncs"
    proc = run_cli(
        "compare",
        str(SCENARIOS / "examples" / "ncs_dumbbell.toml"),
        "--cc",
        "newreno",
        "--queue",
        "droptail,codel",
        "--seeds",
        "2",
        "--objective",
        "control",
        "--out",
        str(out),
        "--set",
        "simulation.duration=10s",
        "--jobs",
        "2",
        "--quiet",
    )
    assert proc.returncode == 0, proc.stderr
    runs = pd.read_csv(out / "runs_metrics.csv")
    # The score by hand: -(itae / mean itae) - 0.25 (p99 / mean p99), from each run's own tables.
    itae = [pd.read_parquet(out / d / "control.parquet")["itae"].sum() for d in runs["run_dir"]]
    p99 = [
        pd.read_parquet(out / d / "queues.parquet").set_index("name").loc["A->B", "p99_sojourn_s"]
        for d in runs["run_dir"]
    ]
    mi, mp = sum(itae) / len(itae), sum(p99) / len(p99)
    expected = [-(i / mi) - 0.25 * (p / mp) for i, p in zip(itae, p99)]
    assert list(runs["itae"]) == pytest.approx(itae)
    assert list(runs["score"]) == pytest.approx(expected)
    table = pd.read_csv(out / "comparison.csv")
    by_hand = runs.assign(s=expected).groupby("queue")["s"].mean().sort_values(ascending=False)
    assert list(table["queue"]) == list(by_hand.index)
    # Its start times are fixed: both seeds give the same runs, and the verdict says so.
    assert "the scenario has no random element" in proc.stdout


def test_a_dask_cluster_ranks_exactly_as_local_processes(tmp_path: Path) -> None:
    # The same comparison on two local processes and on a Dask cluster with two worker
    # processes: the same runs (common seeds), so the same tables to the last byte.
    distributed = pytest.importorskip("dask.distributed")
    args = [
        "compare",
        str(SCENARIOS / "examples" / "asymmetric.toml"),
        "--cc",
        "newreno,cubic",
        "--queue",
        "droptail",
        "--seeds",
        "2",
        "--set",
        "simulation.duration=20s",
        "--set",
        "simulation.warmup=5s",
        "--quiet",
    ]
    local = run_cli(*args, "--jobs", "2", "--out", str(tmp_path / "local"))
    assert local.returncode == 0, local.stderr
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=":0"
    ) as cluster:
        remote = run_cli(*args, "--scheduler", cluster.scheduler_address, "--out", str(tmp_path / "dask"))
    assert remote.returncode == 0, remote.stderr
    for name in ("comparison.csv", "runs_metrics.csv"):
        assert (tmp_path / "local" / name).read_bytes() == (tmp_path / "dask" / name).read_bytes(), name
    assert len(pd.read_csv(tmp_path / "dask" / "runs_metrics.csv")) == 4


# --- resuming -------------------------------------------------------------------------------------


def test_interrupting_and_rerunning_reuses_finished_runs(tmp_path: Path) -> None:
    out = tmp_path / "flag"
    # Runs of 600 s (about 0.15 s each), so that the signal lands while runs remain even on a
    # loaded machine (14 s runs took 20 ms each).
    args = [
        "compare",
        str(SCENARIOS / "flagship.toml"),
        "--cc",
        "newreno,cubic",
        "--queue",
        "droptail,codel",
        "--seeds",
        "2",
        "--out",
        str(out),
        "--set",
        "simulation.duration=600s",
        "--set",
        "simulation.warmup=2s",
    ]
    runs = out / "runs"
    code, stderr = interrupt_cli(*args, "--jobs", "1", "--quiet", runs=runs, after=2)
    if code == 0:
        pytest.skip("the comparison finished before the signal")  # a very fast machine
    assert code == 130, stderr
    assert "rerun the same command to resume" in stderr
    finished = {p.name: (p / "run.json").stat().st_mtime_ns for p in runs.iterdir() if not p.name.startswith(".")}
    assert 2 <= len(finished) < 8
    again = run_cli(*args, "--jobs", "2", "--quiet")
    assert again.returncode == 0, again.stderr
    assert f"8 runs: {8 - len(finished)} run now, {len(finished)} done before, 0 failed" in again.stdout
    # The finished runs were not run again: their records are the same files.
    assert {k: (runs / k / "run.json").stat().st_mtime_ns for k in finished} == finished
    assert len(pd.read_csv(out / "runs_metrics.csv")) == 8


def test_the_reports_rerun_command_reproduces_its_cell_exactly(tmp_path: Path) -> None:
    out = tmp_path / "cmp"
    proc = run_cli(
        "compare",
        str(SCENARIOS / "flagship.toml"),
        "--cc",
        "cubic",
        "--queue",
        "codel",
        "--seeds",
        "1",
        "--out",
        str(out),
        "--set",
        "simulation.duration=6s",
        "--set",
        "simulation.warmup=2s",
        "--jobs",
        "1",
        "--quiet",
    )
    assert proc.returncode == 0, proc.stderr
    report = (out / "report.html").read_text()
    rows = re.findall(
        r"<tr><td class=l>(\w+)</td><td class=l>(\w+)</td><td>(\d+)</td><td class=l><code>(.*?)</code>", report
    )
    assert len(rows) == 1
    cc, queue, seed, command = rows[0]
    argv = shlex.split(html.unescape(command))
    assert argv[:2] == ["ccsim", "run"] and ("cubic", "codel") == (cc, queue)
    rerun = run_cli(*argv[1:], "--out", str(tmp_path / "rerun"), "--quiet")
    assert rerun.returncode == 0, rerun.stderr
    run = pd.read_csv(out / "runs_metrics.csv").iloc[0]
    assert str(run["seed"]) == seed
    for table in ("flows", "queues"):
        pd.testing.assert_frame_equal(
            pd.read_parquet(tmp_path / "rerun" / f"{table}.parquet"),
            pd.read_parquet(out / run["run_dir"] / f"{table}.parquet"),
            check_exact=True,
        )


# --- the report in a real browser -------------------------------------------------------------------


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def load_offline(browser: str, page: Path, tmp: Path) -> tuple[str, list[str]]:
    """The DOM after scripts ran and the console errors and failed loads, with networking off
    (every host resolves nowhere, every proxy connection is refused)."""
    proc = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            f"--user-data-dir={tmp}",
            "--proxy-server=127.0.0.1:9",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=5000",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    errors = [
        line
        for line in proc.stderr.splitlines()
        if re.search(r"CONSOLE|Uncaught|net::ERR_|Failed to load", line) and "dbus" not in line
    ]
    return proc.stdout, errors


@pytest.fixture
def browser() -> str:
    """Chromium's path; skips without it unless CCSIM_REQUIRE_BROWSER=1 (CI), which fails."""
    path = _chromium()
    if path is None:
        if os.environ.get("CCSIM_REQUIRE_BROWSER") == "1":
            pytest.fail("CCSIM_REQUIRE_BROWSER=1 but no chromium found (apt-get install chromium)")
        pytest.skip("chromium is not installed (apt-get install chromium); CI sets CCSIM_REQUIRE_BROWSER=1")
    return path


def test_report_loads_offline_in_headless_chromium(
    browser: str, heavy: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    out, proc = heavy
    assert proc.returncode == 0, proc.stderr
    # The detector itself: a page with a script error and a remote image is caught.
    bad = tmp_path / "bad.html"
    bad.write_text(
        '<!DOCTYPE html><html><body><img src="https://cdn.example.org/x.png">'
        '<script>console.error("boom"); missing_function();</script></body></html>'
    )
    _, errors = load_offline(browser, bad, tmp_path / "profile-bad")
    assert any("missing_function" in e or "boom" in e for e in errors), errors
    # The report: the table and the four figures, inline, with no console error.
    dom, errors = load_offline(browser, out / "report.html", tmp_path / "profile")
    assert errors == []
    assert '<table id="ranking">' in dom and dom.count("<tr") >= 3
    assert "newreno" in dom and "pie" in dom and "droptail" in dom
    for figure in ("rtt-fairness", "delay-cdf", "pareto", "traces"):
        match = re.search(rf'<img id="{figure}"[^>]*src="data:image/png;base64,([A-Za-z0-9+/=]+)"', dom)
        assert match, figure
        import base64

        assert base64.b64decode(match.group(1))[:8] == b"\x89PNG\r\n\x1a\n"
    assert 'data-images-shown="4/4"' in dom  # every figure decoded and laid out
    assert not re.search(r'(src|href)="(https?:)?//', dom)  # nothing to fetch from a network
