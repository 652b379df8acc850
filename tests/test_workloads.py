"""Open-loop workloads (``[[workloads]]``): flows that arrive while the run goes on, their sizes
against the distributions they are drawn from, their completion times in the flows table and
by size, and the errors of a bad table. The queueing-theory check (mean FCT against M/G/1-PS)
and the bounded memory are the engine's tests (crates/ccsim-core/tests/workload.rs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import ccsim
import numpy as np
import pandas as pd
import pytest
from ccsim.errors import ScenarioError
from ccsim.results.metrics import fct_table
from ccsim.scenario.workloads import BUILTIN_CDFS, cdf_mean
from conftest import run_cli
from scipy import stats


def scenario(workload: dict[str, Any], duration: str = "20s", **topology: Any) -> dict[str, Any]:
    """Two dumbbell pairs on a 100 Mbit/s bottleneck (2 ms), 1 Gbit/s access links, and
    ``workload``."""
    return {
        "simulation": {"duration": duration},
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {"rate": "100Mbps", "delay": "2ms", "queue": {"kind": "droptail", "limit": "1000p"}},
            "access": {"rate": "1Gbps"},
            "pairs": [{"delay": "0.5ms"}, {"delay": "0.5ms"}],
            **topology,
        },
        "workloads": [workload],
    }


def run(data: dict[str, Any], file: str = "<test>") -> ccsim.Result:
    return ccsim.run(ccsim.from_dict(data, file))


def piecewise_cdf(points: tuple[tuple[float, float], ...]) -> Any:
    """The CDF ``workload.rs`` samples: linear between points, an atom at the first point."""
    xs = np.array([x for x, _ in points])
    ps = np.array([p for _, p in points])
    return lambda x: np.interp(x, xs, ps, left=0.0, right=1.0)


@pytest.mark.parametrize("name", ["websearch", "datamining"])
def test_sizes_follow_the_published_distribution(name: str) -> None:
    # Arrivals fast and flows short-lived enough for a few thousand draws in a short run:
    # UDP transfers of the drawn size (one datagram each, the size as the engine drew it).
    data = scenario(
        {"pairs": "all", "arrivals": {"rate": "400/s"}, "size": name, "transport": "udp", "name": "w"},
        duration="10s",
    )
    flows = run(data).flows
    sizes = flows["size_bytes"].to_numpy()
    assert len(sizes) > 3500
    # Kolmogorov-Smirnov against the CDF as published (scipy as the oracle of the sampler);
    # sizes are whole bytes, so the test allows the rounding.
    cdf = piecewise_cdf(BUILTIN_CDFS[name])
    if name == "datamining":  # an atom of 1/2 at one packet: KS is for continuous laws
        assert abs(np.mean(sizes == 1460) - 0.5) < 0.03
        sizes = sizes[sizes > 1460]
        conditional = lambda x: (cdf(x) - 0.5) / 0.5  # noqa: E731
        assert stats.kstest(sizes, conditional).pvalue > 0.001
    else:
        assert stats.kstest(sizes, cdf).pvalue > 0.001
    # Every flow is a transfer with its own row: its name, its group, its size.
    assert list(flows["name"]) == [f"w.{k}" for k in range(len(flows))]
    assert set(flows["group"]) == {"w"} and set(flows["app"]) == {"transfer"}
    # A UDP transfer is one datagram, stored and forwarded whole: no flow beats its ideal time.
    assert (flows["slowdown"].dropna() >= 1 - 1e-9).all()


def test_means_of_the_builtin_distributions() -> None:
    # The web-search mean by hand from its points (Alizadeh et al. 2010, Fig. 4): the mean of
    # each linear piece weighted by its probability.
    pieces = [(0.15, 5e3), (0.05, 15e3), (0.1, 25e3), (0.1, 40e3), (0.13, 65e3), (0.07, 140e3)]
    pieces += [(0.1, 600e3), (0.1, 1.5e6), (0.1, 3.5e6), (0.07, 7.5e6), (0.03, 20e6)]
    assert cdf_mean(BUILTIN_CDFS["websearch"]) == pytest.approx(sum(p * m for p, m in pieces))
    # Data mining: 5117 packets of 1460 bytes on average, the mean the pFabric and PIAS
    # simulations give for it.
    assert cdf_mean(BUILTIN_CDFS["datamining"]) / 1460 == pytest.approx(5117, rel=1e-3)


def test_load_sets_the_arrival_rate_and_the_bottleneck_carries_it() -> None:
    # Fixed 100 kB transfers at 40 % of 100 Mbit/s: 50 flows per second, and the bottleneck
    # carries 40 Mbit/s of their payload (plus headers).
    data = scenario({"pairs": [0, 1], "arrivals": {"load": 0.4}, "size": "100kB"}, duration="30s")
    sc = ccsim.from_dict(data)
    assert sc.to_config()["workloads"][0]["rate_per_s"] == pytest.approx(50.0)
    result = run(data)
    flows = result.flows
    assert abs(len(flows) - 1500) < 4 * 1500**0.5
    done = flows[flows["fct_s"].notna()]
    assert len(done) >= len(flows) - 10
    assert (done["size_bytes"] == 100_000).all() and (done["slowdown"] >= 1 - 1e-9).all()
    payload_bps = done["bytes_received"].sum() * 8 / 30
    assert payload_bps == pytest.approx(0.4 * 100e6 * len(done) / 1500, rel=0.05)
    util = result.queues.set_index("name").loc["A->B", "utilization"]
    assert util == pytest.approx(0.4 * 1500 / 1448, abs=0.04)


def test_fct_table_by_size_and_its_files(tmp_path: Path) -> None:
    data = scenario({"pairs": "all", "arrivals": {"load": 0.5}, "size": "websearch", "cc": "cubic"}, duration="20s")
    result = run(data)
    fct = result.fct.set_index("size")
    assert list(fct.index) == ["(0, 100kB]", "(100kB, 10MB]", "(10MB, inf)", "all"]
    flows = result.flows
    short = flows[flows["size_bytes"] <= 100_000]
    assert fct.loc["(0, 100kB]", "flows"] == len(short)
    assert fct.loc["(0, 100kB]", "p99_fct_s"] == pytest.approx(np.quantile(short["fct_s"].dropna(), 0.99))
    assert fct.loc["all", "flows"] == len(flows) == fct["flows"].iloc[:3].sum()
    # Short flows finish in milliseconds, long ones take longer.
    assert fct.loc["(0, 100kB]", "mean_fct_s"] < fct.loc["(100kB, 10MB]", "mean_fct_s"]
    written = {p.name for p in result.write(tmp_path, plots=False)}
    assert "fct.parquet" in written
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "fct.parquet"), result.fct)
    # Same seed, same table.
    pd.testing.assert_frame_equal(run(data).flows, flows)


def test_fct_table_without_transfers_is_empty() -> None:
    flows = pd.DataFrame({"size_bytes": [np.nan], "fct_s": [np.nan], "slowdown": [np.nan]})
    assert fct_table(flows).empty


def test_a_cdf_file_next_to_the_scenario(write_toml: Any, tmp_path: Path) -> None:
    # In percent, as the HPCC generator's files are; read relative to the scenario file.
    (tmp_path / "sizes.txt").write_text("# bytes percent\n1000 0\n3000 50\n\n5000 100\n", encoding="utf-8")
    text = """
[simulation]
duration = "10s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "100Mbps", delay = "1ms" }
access = { rate = "1Gbps" }
pairs = [ {}, {} ]
[[workloads]]
src = ["s0", "s1"]
dst = ["r0", "r1"]
arrivals = { rate = "2/ms" }
size = "sizes.txt"
transport = "udp"
"""
    path = write_toml(text)
    result = ccsim.run(ccsim.load(path))
    sizes = result.flows["size_bytes"]
    assert sizes.between(1000, 5000).all() and abs(sizes.mean() - 3000) < 50
    assert set(zip(result.flows["src"], result.flows["dst"])) == {(s, d) for s in ("s0", "s1") for d in ("r0", "r1")}
    (tmp_path / "sizes.txt").write_text("1000 0.5\n900 1\n", encoding="utf-8")
    with pytest.raises(ScenarioError) as err:
        ccsim.load(path)
    assert err.value.field == "workloads[0].size" and "must not decrease" in err.value.message


@pytest.mark.parametrize(
    ("workload", "field", "words"),
    [
        ({"pairs": "all", "size": "1kB"}, "workloads[0].arrivals", "required"),
        ({"pairs": "all", "arrivals": {}, "size": "1kB"}, "workloads[0].arrivals.rate", "one of them"),
        ({"pairs": "all", "arrivals": {"rate": "5/fortnight"}, "size": "1kB"}, "workloads[0].arrivals.rate", "50/s"),
        ({"pairs": "all", "arrivals": {"rate": 0}, "size": "1kB"}, "workloads[0].arrivals.rate", "positive"),
        ({"pairs": [0, 7], "arrivals": {"rate": 5}, "size": "1kB"}, "workloads[0].pairs", "no pair 7"),
        ({"src": "s0", "arrivals": {"rate": 5}, "size": "1kB"}, "workloads[0].dst", "required"),
        ({"src": "s0", "dst": "nowhere", "arrivals": {"rate": 5}, "size": "1kB"}, "workloads[0].dst", "no host"),
        ({"src": "s0", "dst": "s0", "arrivals": {"rate": 5}, "size": "1kB"}, "workloads[0].dst", "two different"),
        ({"src": "s0", "dst": "A", "arrivals": {"rate": 5}, "size": "1kB"}, "workloads[0].dst", "no host"),
        ({"pairs": "all", "arrivals": {"rate": 5}, "size": "huge"}, "workloads[0].size", "websearch"),
        ({"pairs": "all", "arrivals": {"rate": 5}, "size": "no/such.cdf"}, "workloads[0].size", "cannot read"),
        (
            {"pairs": "all", "arrivals": {"rate": 5}, "size": {"size": "1kB", "distribution": "pareto", "shape": 0.5}},
            "workloads[0].size.shape",
            "shape > 1",
        ),
        ({"pairs": "all", "arrivals": {"rate": 5}, "size": "1kB", "start": "30s"}, "workloads[0].start", "end"),
        ({"pairs": "all", "arrivals": {"rate": 5}, "size": "1kB", "cc": "nope"}, "workloads[0].cc", "registered"),
        ({"pairs": "all", "arrivals": {"rate": 5}, "size": "1kB", "colour": 1}, "workloads[0].colour", "unknown"),
    ],
)
def test_bad_workloads_name_the_key(workload: dict[str, Any], field: str, words: str) -> None:
    with pytest.raises(ScenarioError) as err:
        ccsim.from_dict(scenario(workload))
    assert err.value.field == field, err.value
    assert words in err.value.message, err.value


def test_the_cli_runs_a_workload_and_refuses_a_bad_one(write_toml: Any) -> None:
    good = write_toml(
        """
[simulation]
duration = "5s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "1ms" }
access = { rate = "100Mbps" }
pairs = [ {} ]
[[workloads]]
pairs = "all"
arrivals = { load = 0.3 }
size = { size = "50kB", distribution = "pareto", shape = 1.2 }
"""
    )
    proc = run_cli("run", str(good))
    assert proc.returncode == 0, proc.stderr
    assert "Flow completion times" in proc.stdout and "(0, 100kB]" in proc.stdout
    bad = write_toml(good.read_text().replace("load = 0.3", "load = -1"), name="bad.toml")
    proc = run_cli("run", str(bad))
    assert proc.returncode == 2 and "workloads[0].arrivals.load" in proc.stderr and "Traceback" not in proc.stderr


def test_compare_ranks_on_short_flow_completion_times(tmp_path: Path) -> None:
    out = tmp_path / "cmp"
    proc = run_cli(
        "compare",
        "scenarios/examples/websearch_fct.toml",
        "--set",
        "simulation.duration=8s",
        "--set",
        "workloads[0].stop=6s",
        "--cc",
        "cubic",
        "--queue",
        "droptail,fq_codel",
        "--seeds",
        "2",
        "--objective",
        "min:p99_fct_short",
        "--out",
        str(out),
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert proc.returncode == 0, proc.stderr
    table = pd.read_csv(out / "comparison.csv")
    assert {"p99_fct_short_s", "p99_fct_short_s_ci95_lo", "mean_slowdown"} <= set(table.columns)
    assert (table["mean_slowdown"] >= 1).all()
    # DropTail (its default limit) holds short flows behind the bulk flows' standing queue;
    # FQ-CoDel serves them apart: it wins.
    assert table.iloc[0]["queue"] == "fq_codel"
