"""bench/htsim/run.py (`make bench-htsim`): the figures it derives from both simulators' runs,
the scenarios it gives ccsim, and that the htsim twin keeps the benchmark's settings. htsim
itself is not needed here (the comparison is not part of CI, and htsim is not on a registry)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TWIN = (ROOT / "bench" / "htsim" / "dumbbell.cpp").read_text()


@pytest.fixture(scope="module")
def run():
    spec = importlib.util.spec_from_file_location("bench_htsim_run", ROOT / "bench" / "htsim" / "run.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_htsim_run"] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def one_run(rate, goodput=90.0, events=6.0):
    return {
        "bottleneck_pkts_per_s": rate,
        "wall_s": 1e6 / rate,
        "events_per_s": events * rate,
        "peak_rss_mib": 4.0,
        "events": events * 1e6,
        "bottleneck_packets": 1e6,
        "events_per_packet": events,
        "goodput_mbps": goodput,
        "jain": 0.9,
        "queue_mean_pkts": 700.0,
        "queue_sd_pkts": 100.0,
        "drop_ratio": 0.01,
    }


def test_summary_pairs_the_runs_by_round(run):
    # Rounds: 3/1, 2/1, 4/2 -> ratios 3, 2, 2: median 2, lowest 2, highest 3; best rates 4/2.
    ccsim = [one_run(3e6), one_run(2e6), one_run(4e6)]
    htsim = [one_run(1e6, events=12.0), one_run(1e6, events=12.0), one_run(2e6, events=12.0)]
    s = run.summarize(ccsim, htsim)
    assert (s["ratio_median"], s["ratio_min"], s["ratio_max"], s["ratio_best"]) == (2.0, 2.0, 3.0, 2.0)
    assert (s["ccsim"]["rate_median"], s["ccsim"]["rate_min"], s["ccsim"]["rate_max"]) == (3e6, 2e6, 4e6)
    assert s["htsim"]["rate_median"] == 1e6 and s["htsim"]["events_per_packet"] == 12.0
    assert s["rounds"] == 3
    text = run.report(10, s)
    assert "median of the rounds' ratios 2.00 (lowest 2.00, highest 3.00); best rates 2.00" in text
    assert "3.000M" in text and "1.000M" in text


def test_htsim_goodput_is_counted_at_ccsims_payload(run, monkeypatch):
    """htsim's 1500-byte packets carry 1500 bytes of goodput, ccsim's 1448: 100 Mbit/s of
    htsim goodput is 100 * 1448 / 1500 = 96.533 Mbit/s of ccsim's."""
    raw = {
        "wall_s": 0.5,
        "events": 3_000_000,
        "bottleneck_packets": 250_000,
        "peak_rss_bytes": 2**22,
        "results": {
            "warmup_s": 10.0,
            "jain_index": 0.5,
            "flows": [{"goodput_bps": 60e6}, {"goodput_bps": 40e6}],
            "queues": [{"name": "A->B", "drop_ratio": 0.02}],
            "traces": {"time_s": [0.0, 10.0, 20.0], "queue.A->B.len_pkts": [5.0, 10.0, 30.0]},
        },
    }
    monkeypatch.setattr(run.ns3_run, "run_process", lambda argv: (raw, 0.6, 0.55, 4.0))
    htsim = run.measured(["twin"], run.HTSIM_MSS)
    assert htsim["goodput_mbps"] == pytest.approx(100 * 1448 / 1500)
    assert htsim["bottleneck_pkts_per_s"] == pytest.approx(500_000)
    assert htsim["events_per_s"] == pytest.approx(6_000_000) and htsim["events_per_packet"] == pytest.approx(12.0)
    assert htsim["queue_mean_pkts"] == pytest.approx(20.0)  # samples from the warm-up on
    assert run.measured(["ccsim"], run.CCSIM_MSS)["goodput_mbps"] == pytest.approx(100.0)


def test_a_directory_without_htsims_sources_is_refused_by_name(run, tmp_path):
    (tmp_path / "tcp.cpp").write_text("")
    with pytest.raises(SystemExit, match=r"not htsim's sim/ directory: no eventlist\.cpp, tcppacket\.cpp"):
        run.htsim_source(tmp_path)


def test_the_link_shape_is_the_benchmark_bottleneck_alone(run):
    link = run.link_config(3, 1)
    dumbbell = run.ns3_run.ccsim_config(3, 1, {})
    assert [n["name"] for n in link["nodes"]] == ["A", "B"] and len(link["links"]) == 1
    assert link["links"][0]["ab"] == dumbbell["links"][0]["ab"]  # 100 Mbit/s, 2 ms, DropTail 900
    assert link["links"][0]["ba"]["queue"] == dumbbell["links"][1]["ab"]["queue"]  # 1000 packets, never full
    assert len(link["flows"]) == 3
    for flow, bench_flow in zip(link["flows"], dumbbell["flows"]):
        assert flow["transport"] == bench_flow["transport"] and flow["cc"] == bench_flow["cc"]
    assert (link["duration_ns"], link["warmup_ns"]) == (dumbbell["duration_ns"], dumbbell["warmup_ns"])


def test_the_htsim_twin_sets_what_the_ccsim_scenario_sets(run):
    """The C++ twin's constants against the scenario bench.py gives ccsim, so that changing one
    side alone fails here."""
    config = run.ns3_run.ccsim_config(10, 1, {})
    tcp = config["flows"][0]["transport"]["params"]
    bottleneck, access = config["links"][0], config["links"][1]
    assert int(re.search(r"kBottleneckBps = (\d+)ULL", TWIN).group(1)) == bottleneck["ab"]["rate_bps"]
    assert int(re.search(r"kAccessBps = (\d+)ULL", TWIN).group(1)) == access["ab"]["rate_bps"]
    assert "Pipe ab_pipe(timeFromMs(2), eventlist);" in TWIN and bottleneck["ab"]["delay_ns"] == 2_000_000
    # htsim's queue holds the packet in service too: 900 waiting + 1.
    assert bottleneck["ab"]["queue"]["params"]["limit"] == {"packets": 900} and "mem_b(901) * kPacketBytes" in TWIN
    assert access["ab"]["queue"]["params"]["limit"] == {"packets": 1000}
    assert "access_limit = mem_b(1000) * kPacketBytes" in TWIN
    assert "1.0 + 48.0 * i / (n - 1)" in TWIN and access["ab"]["delay_ns"] == 1_000_000
    assert int(re.search(r"uint32_t min_rto_ms = (\d+);", TWIN).group(1)) * 10**6 == tcp["min_rto"]
    assert eval(re.search(r"_maxcwnd = ([^;]+);", TWIN).group(1).replace("u", "")) == tcp["rwnd"]["bytes"]
    assert int(re.search(r"kPacketBytes = (\d+);", TWIN).group(1)) == run.HTSIM_MSS == tcp["mss"] + 52
    assert re.search(r"double duration = 30\.0;", TWIN) and config["duration_ns"] == 30 * 10**9
    assert re.search(r"double warmup = 10\.0;", TWIN) and config["warmup_ns"] == 10 * 10**9
    assert "std::uniform_real_distribution<double> start_dist(0.0, 3.0);" in TWIN


def test_the_runner_passes_only_topologies_the_twin_accepts(run):
    (check,) = re.findall(r'if \(t != "(\w+)" && t != "(\w+)"\)', TWIN)
    assert set(check) == {"dumbbell", "link"}
    source = (ROOT / "bench" / "htsim" / "run.py").read_text()
    (choices,) = re.findall(r'"--topology",\s*choices=\[([^\]]*)\]', source)
    assert set(re.findall(r'"(\w+)"', choices)) == set(check)


def test_without_a_source_directory_the_repository_is_cloned_and_its_commit_named(run, tmp_path, monkeypatch):
    """The clone path of `make bench-htsim`, against a local stand-in for the repository (CI
    has no network): the sim/ directory of the clone is used, and the version is its commit."""
    upstream = tmp_path / "upstream"
    (upstream / "sim").mkdir(parents=True)
    for name in run.HTSIM_OBJECTS:
        (upstream / "sim" / f"{name}.cpp").write_text("")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(upstream)]
    subprocess.run(["git", "init", "-q", str(upstream)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "sources"], check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    monkeypatch.setattr(run, "REPOSITORY", upstream.as_uri())
    monkeypatch.setattr(run, "CLONE", tmp_path / "clone")
    src, version = run.htsim_source(None)
    assert src == (tmp_path / "clone" / "sim").resolve()
    assert version == f"Broadcom/csg-htsim@{commit}"
    # A second call reuses the clone.
    assert run.htsim_source(None) == (src, version)
