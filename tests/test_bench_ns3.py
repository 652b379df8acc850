"""bench/ns3/run.py (`make bench-ns3`): the figures it derives from both simulators' output, its
pass/fail against the speed targets, that the ns-3 twin keeps the benchmark's settings, and how
it builds and caches the optimized ns-3 it measures against (with a stand-in ns-3 tree).
ns-3 itself is not needed here (the comparison is not part of CI)."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def load(script: str):
    """A script of bench/ns3 as a module (it is not a package)."""
    spec = importlib.util.spec_from_file_location(f"bench_ns3_{script}", ROOT / "bench" / "ns3" / f"{script}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # run.py's dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def run():
    return load("run")


def raw_output(queue_samples, times, drop_ratio=0.01, goodputs=(40e6, 60e6)):
    """A result in ccsim-bench's JSON shape (which dumbbell.cc prints too)."""
    return {
        "wall_s": 2.0,
        "events": 1000,
        "bottleneck_packets": 50_000,
        "results": {
            "warmup_s": 10.0,
            "jain_index": 0.96,
            "flows": [{"goodput_bps": g, "timeouts": 1, "fast_recoveries": 2, "retransmissions": 3} for g in goodputs],
            "queues": [{"name": "B->A", "drop_ratio": 0.5}, {"name": "A->B", "drop_ratio": drop_ratio}],
            "traces": {"time_s": times, "queue.A->B.len_pkts": queue_samples},
        },
    }


def test_metrics_use_only_samples_from_the_warmup_and_the_bottleneck_queue(run):
    # Samples before 10 s (100 and 200 packets) must be ignored: mean of 10, 20, 30, 40 = 25,
    # population sd = sqrt(((15^2 + 5^2) * 2) / 4) = sqrt(125).
    m = run.metrics(
        raw_output([100, 200, 10, 20, 30, 40], [0, 5, 10, 15, 20, 25]), proc_wall=3.0, cpu_s=2.5, rss_mib=12.0
    )
    assert m["queue_mean_pkts"] == pytest.approx(25.0)
    assert m["queue_sd_pkts"] == pytest.approx(125**0.5)
    assert m["goodput_mbps"] == pytest.approx(100.0)
    assert m["drop_ratio"] == 0.01  # A->B's, not B->A's
    assert m["bottleneck_pkts_per_s"] == pytest.approx(25_000.0)
    assert (m["timeouts"], m["fast_recoveries"], m["retransmissions"]) == (2, 4, 6)
    assert m["other_drops"] == 0  # ccsim-bench does not report it: nothing drops elsewhere


def figures(goodput, queue, drop, wall):
    return {
        "wall_s": wall,
        "process_wall_s": wall,
        "cpu_s": wall,
        "peak_rss_mib": 10.0,
        "events": 1.0,
        "bottleneck_pkts_per_s": 1.0,
        "goodput_mbps": goodput,
        "jain": 0.9,
        "queue_mean_pkts": queue,
        "queue_sd_pkts": 1.0,
        "drop_ratio": drop,
        "timeouts": 0.0,
        "fast_recoveries": 0.0,
        "retransmissions": 0.0,
        "other_drops": 0.0,
    }


@pytest.mark.parametrize(
    "ccsim, passes",
    [
        (figures(95.5, 720, 0.0119, 0.5), {"speed": True, "goodput": True, "queue_mean": True, "drop_ratio": True}),
        # 5.5 % less goodput, 21 % more queue, 25 % fewer drops, only 99x faster.
        (
            figures(94.5, 726, 0.0075, 101 / 99),
            {"speed": False, "goodput": False, "queue_mean": False, "drop_ratio": False},
        ),
    ],
)
def test_report_judges_each_metric_against_its_band_relative_to_ns3(run, ccsim, passes, capsys):
    ns3 = figures(100.0, 600, 0.01, 101.0)
    out = run.report(90, 3, ccsim, ns3)
    assert {k: v["pass"] for k, v in out["checks"].items()} == passes
    assert out["checks"]["goodput"]["value"] == pytest.approx(ccsim["goodput_mbps"] / 100.0 - 1)
    text = capsys.readouterr().out
    assert text.count("PASS") == sum(passes.values()) and text.count("FAIL") == 4 - sum(passes.values())


def test_report_shows_other_builds_as_secondary_columns_and_judges_only_the_optimized(run, capsys):
    ccsim, optimized = figures(95.5, 720, 0.0119, 0.5), figures(100.0, 600, 0.01, 45.0)
    pypi = figures(100.0, 600, 0.01, 110.0)
    out = run.report(90, 3, ccsim, optimized, {"pypi": pypi})
    assert out["speedup_cpu"] == pytest.approx(90.0) and not out["checks"]["speed"]["pass"]
    assert out["other_builds"]["pypi"]["speedup_cpu"] == pytest.approx(220.0)
    assert out["other_builds"]["pypi"]["optimized_speedup_cpu"] == pytest.approx(110.0 / 45.0)
    text = capsys.readouterr().out
    assert "ns-3 optimized" in text and "ns-3 pypi" in text and "2.44x the optimized build's CPU time" in text


def test_relative_difference_of_zero_drops_is_zero_only_when_both_are_zero(run):
    assert run.rel(0.0, 0.0) == 0.0
    assert run.rel(0.001, 0.0) == float("inf")
    assert run.rel(0.9, 1.0) == pytest.approx(-0.1)


def test_ccsim_overrides_reach_every_flow_and_leave_the_benchmark_settings(run):
    config = run.ccsim_config(4, 1, {"lost_retransmit": False})
    assert len(config["flows"]) == 4
    for flow in config["flows"]:
        params = flow["transport"]["params"]
        assert params["lost_retransmit"] is False
        assert (params["mss"], params["delack_count"], params["min_rto"], params["sack"]) == (1448, 2, 10**9, True)


def test_the_ns3_twin_sets_what_the_ccsim_scenario_sets(run):
    """The C++ twin's constants against the scenario bench.py gives ccsim, so that changing one
    side alone fails here."""
    # dumbbell.cc and the TCP settings it shares with datacenter.cc (common.h).
    source = "".join((ROOT / "bench" / "ns3" / name).read_text() for name in ("dumbbell.cc", "common.h"))
    config = run.ccsim_config(10, 1, {})
    tcp = config["flows"][0]["transport"]["params"]

    def default(name):
        m = re.search(rf'"ns3::TcpSocket(?:Base)?::{name}",\s*(\w+)\(([^)]*)\)', source)
        assert m, name
        return m.group(2)

    assert int(default("SegmentSize")) == tcp["mss"]
    assert default("DelAckCount") == "delAckCount"
    assert int(re.search(r"uint32_t delAckCount = (\d+);", source).group(1)) == tcp["delack_count"]
    assert default("MinRto") == f"Seconds({tcp['min_rto'] // 10**9}"  # the regex stops at the first ")"
    assert default("Sack") == str(tcp["sack"]).lower()
    assert eval(default("SndBufSize").replace("u", "")) == tcp["rwnd"]["bytes"]  # 4u << 20
    # The twin's congestion control is TcpNewReno unless --cc says otherwise.
    assert 'std::string cc = "TcpNewReno";' in source and 'twin::ConfigureTcp("ns3::" + cc, 10, delAckCount);' in source
    assert config["flows"][0]["cc"]["kind"] == "newreno"
    bottleneck, access = config["links"][0], config["links"][1]
    assert bottleneck["ab"]["queue"] == {"kind": "droptail", "params": {"limit": {"packets": 900}}}
    assert 'SetMaxSize(QueueSize("900p"))' in source
    assert access["ab"]["queue"]["params"]["limit"] == {"packets": 1000} and source.count('StringValue("1000p")') == 2
    assert (bottleneck["ab"]["rate_bps"], bottleneck["ab"]["delay_ns"], access["ab"]["rate_bps"]) == (
        100_000_000,
        2_000_000,
        10**9,
    )
    assert 'StringValue("100Mbps")' in source and "MilliSeconds(2)" in source and 'StringValue("1Gbps")' in source
    assert "1.0 + 48.0 * i / (nFlows - 1)" in source and access["ab"]["delay_ns"] == 1_000_000
    assert config["duration_ns"] == 30 * 10**9 and config["warmup_ns"] == 10 * 10**9
    assert re.search(r"double duration = 30\.0;", source) and re.search(r"double warmup = 10\.0;", source)


# common.h's twin::ConfigureTcp turns ns-3's HyStart off (ccsim's cubic runs none by default).
HYSTART_OFF = 'Config::SetDefault("ns3::TcpCubic::HyStart", BooleanValue(false));'


def accepted(program: str, option: str) -> set[str]:
    """The values `bench/ns3/<program>.cc` accepts for `--<option>` (its twin::OneOf check)."""
    source = (ROOT / "bench" / "ns3" / f"{program}.cc").read_text()
    (listed,) = re.findall(rf'twin::OneOf\("{program}", "{option}", \w+, \{{([^}}]*)\}}\)', source)
    return set(re.findall(r'"(\w+)"', listed))


def test_cubic_runs_ccsims_cubic_against_ns3s_tcpcubic_both_without_hystart(run):
    """`--cc cubic`: every ccsim flow runs CUBIC with its defaults (HyStart++ off), the twin is
    told TcpCubic, and the twin turns ns-3's HyStart off."""
    from ccsim.scenario.registry import get_registry

    config = run.ccsim_config(10, 1, {}, "cubic")
    assert {f["cc"]["kind"] for f in config["flows"]} == {"cubic"}
    assert get_registry().model("cc", "cubic").param("hystart").default is False
    assert HYSTART_OFF in (ROOT / "bench" / "ns3" / "common.h").read_text()
    # Every model run.py names for the twin is one the twin's --cc accepts.
    assert run.TWIN_CC["cubic"] == "TcpCubic"
    assert set(run.TWIN_CC.values()) <= accepted("dumbbell", "cc") == {"TcpNewReno", "TcpLinuxReno", "TcpCubic"}


def test_raw_keeps_each_process_output_by_simulator_flows_and_seed(run, tmp_path):
    out = raw_output([1.0], [10.0], goodputs=(1e6, 2e6, 3e6))
    run.keep_raw(tmp_path / "raw", "ns3", 900, 2, out)
    run.keep_raw(None, "ccsim", 900, 2, out)  # without --raw nothing is written
    kept = json.loads((tmp_path / "raw" / "ns3-900-2.json").read_text())
    assert [f["goodput_bps"] for f in kept["results"]["flows"]] == [1e6, 2e6, 3e6]
    assert [p.name for p in (tmp_path / "raw").iterdir()] == ["ns3-900-2.json"]


@pytest.fixture(scope="module")
def datacenter():
    return load("datacenter")


def test_datacenter_summary_finds_a_lockout_and_the_idle_flows(datacenter):
    # N2 takes 960 of 965 Mbit/s (99.5 %): a lock-out. The fair share is 965 / 6 = 160.8
    # Mbit/s, so a flow under 1.608 Mbit/s is idle: the three at 0, 0.5 and 1 (not 3.5).
    groups = ["N1", "N1", "N2", "N2", "N3", "N3"]
    mbps = [0.0, 0.5, 480.0, 480.0, 1.0, 3.5]
    s = datacenter.summarize(groups, [x * 1e6 for x in mbps])
    assert s["groups_mbps"] == {"N1": 0.5, "N2": 960.0, "N3": 4.5}
    assert s["locked_out"] and s["flows"] == 6
    assert s["idle"] == 3
    assert s["jain"] == pytest.approx(965**2 / (6 * (480**2 * 2 + 0.5**2 + 1 + 3.5**2)))
    # Sorted 0, 0.5, 1, 3.5, 480, 480: the quartiles sit at positions 1.25, 2.5 and 3.75.
    assert s["quartiles_mbps"] == pytest.approx([0.5 + 0.25 * 0.5, 1 + 0.5 * 2.5, 3.5 + 0.75 * 476.5])


def test_datacenter_summary_of_a_fair_run(datacenter):
    # The largest group has 400 of 965 Mbit/s (41 %): no lock-out, nobody idle.
    s = datacenter.summarize(["N1", "N2", "N3"], [280e6, 285e6, 400e6])
    assert not s["locked_out"] and s["idle"] == 0
    assert s["jain"] == pytest.approx(965**2 / (3 * (280**2 + 285**2 + 400**2)))
    assert s["quartiles_mbps"] == pytest.approx([282.5, 285.0, 342.5])


def test_the_datacenter_program_sets_what_the_piotrowska_scenario_sets():
    """datacenter.cc's TCP and link delays against scenarios/papers/piotrowska/data_center.toml,
    so that changing one side alone fails here."""
    import tomllib

    source = (ROOT / "bench" / "ns3" / "datacenter.cc").read_text()
    scenario = tomllib.loads((ROOT / "scenarios" / "papers" / "piotrowska" / "data_center.toml").read_text())
    tcp = {tuple(sorted(f["transport"].items())) for f in scenario["flows"]}
    assert len(tcp) == 1 and {f["cc"] for f in scenario["flows"]} == {"newreno"}
    tcp = dict(next(iter(tcp)))
    assert (tcp["mss"], tcp["sack"], tcp["min_rto"], tcp["rwnd"]) == ("1448B", True, "1s", "4MiB")
    assert 'std::string cc = "TcpNewReno";' in source
    assert f'twin::ConfigureTcp("ns3::" + cc, {tcp["init_cwnd"]}, {tcp["delack_count"]});' in source
    assert tcp["delack_timeout"] == "200ms"  # common.h's timer
    us = lambda d: int(d.removesuffix("us"))  # noqa: E731
    sources = ", ".join(str(us(s["delay"])) for s in scenario["topology"]["sources"])
    sinks = ", ".join(str(us(s["delay"])) for s in scenario["topology"]["sinks"])
    assert f"srcDelayUs[3] = {{{sources}}};" in source and f"sinkDelayUs[3] = {{{sinks}}};" in source
    bottleneck = scenario["topology"]["bottleneck"]
    assert bottleneck["queue"] == {"kind": "droptail", "limit": "900p"} and 'QueueSize("900p")' in source


def test_the_datacenter_cubic_is_the_reproductions_cubic(run):
    """`datacenter.py --cc cubic` runs the scenario's cubic with its defaults in ccsim, and
    ns-3's TcpCubic (run.py's TWIN_CC) in datacenter.cc: the two must be the CUBIC that the
    `ccsim reproduce piotrowska` tables use (Reno-friendly region on; HyStart off, which
    common.h sets for ns-3)."""
    from ccsim.experiments.reproduce import piotrowska
    from ccsim.scenario.registry import get_registry

    # datacenter.py offers every congestion control of TWIN_CC: datacenter.cc must take them.
    assert set(run.TWIN_CC.values()) == accepted("datacenter", "cc")
    assert piotrowska.CCS["cubic"] == {"kind": "cubic", "tcp_friendliness": True}
    cubic = get_registry().model("cc", "cubic")
    defaults = {
        name: cubic.param(name).default for name in ("hystart", "tcp_friendliness", "fast_convergence", "beta", "c")
    }
    # ns-3's TcpCubic defaults, but for HyStart, which common.h turns off.
    assert defaults == {"hystart": False, "tcp_friendliness": True, "fast_convergence": True, "beta": 0.7, "c": 0.4}
    assert HYSTART_OFF in (ROOT / "bench" / "ns3" / "common.h").read_text()


def test_the_simulators_tie_rule_patch_still_applies():
    # docs/reproductions.md measures the simulators' tie rule with this patch; an engine
    # change that breaks it must refresh it (re-make the change and `git diff` it again).
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout")
    patch = ROOT / "bench" / "experiments" / "simulators-tie-rule.patch"
    done = subprocess.run([git, "apply", "--check", str(patch)], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


# ---- building the optimized ns-3 -------------------------------------------------------------


def test_the_optimized_build_is_ns3s_optimized_profile_with_the_modules_the_twin_links(run):
    assert "--build-profile=optimized" in run.NS3_CONFIGURE
    (modules,) = [a.split("=", 1)[1].split(",") for a in run.NS3_CONFIGURE if a.startswith("--enable-modules=")]
    # bridge comes with internet; every other library the twin links is enabled by name.
    assert set(run.NS3_LIBS) - {"bridge"} <= set(modules)
    assert {"--disable-examples", "--disable-tests"} <= set(run.NS3_CONFIGURE)


def test_the_cache_key_changes_with_the_source_the_flags_and_the_compiler(run):
    base = dict(source="a" * 64, configure=run.NS3_CONFIGURE, build=run.NS3_MODULES, compiler="g++ 12.2.0")
    key = run.cache_key(**base)
    assert run.cache_key(**dict(reversed(list(base.items())))) == key  # order of the inputs does not matter
    assert run.cache_key(**{**base, "source": "b" * 64}) != key
    assert run.cache_key(**{**base, "configure": [*run.NS3_CONFIGURE, "--enable-logs"]}) != key
    assert run.cache_key(**{**base, "compiler": "g++ 13.1.0"}) != key
    assert run.cache_key(**{**base, "build": [*run.NS3_MODULES, "csma"]}) != key


def test_a_cached_directory_is_made_once_per_key_and_again_after_a_failure(run, tmp_path):
    made = []

    def make(directory):
        made.append(directory)
        (directory / "lib.so").write_text(str(len(made)))

    target = tmp_path / "ns3-optimized"
    assert run.cached(target, "k1", make) is True
    assert run.cached(target, "k1", make) is False and len(made) == 1
    (target / "stale").write_text("from the k1 build")
    assert run.cached(target, "k2", make) is True and len(made) == 2
    assert not (target / "stale").exists()  # a new key starts from an empty directory
    assert (tmp_path / "ns3-optimized.key").read_text() == "k2"

    def fail(directory):
        (directory / "half").write_text("")
        raise subprocess.CalledProcessError(2, "ns3 build")

    with pytest.raises(subprocess.CalledProcessError):
        run.cached(target, "k3", fail)
    assert not (tmp_path / "ns3-optimized.key").exists()  # a failed build is not taken as made
    assert run.cached(target, "k3", make) is True and not (target / "half").exists()


FAKE_NS3 = """\
import pathlib, sys
here = pathlib.Path(__file__).resolve().parent
with open(here.parent / "calls.log", "a") as log:
    log.write(" ".join(sys.argv[1:]) + "\\n")
if sys.argv[1] == "build":
    (here / "build" / "lib").mkdir(parents=True)
    (here / "build" / "lib" / "libns3.99-core-optimized.so").write_text("")
    (here / "build" / "include" / "ns3").mkdir(parents=True)
"""


def fake_source(root: Path) -> Path:
    """A stand-in ns-3 release tree, ns-allinone-3.99/ns-3.99, whose `ns3` script logs its calls
    and whose `build` makes the library the real build makes."""
    tree = root / "ns-allinone-3.99" / "ns-3.99"
    tree.mkdir(parents=True)
    (tree / "ns3").write_text(FAKE_NS3)
    (tree / "CMakeLists.txt").write_text("project(ns3)\n")
    (tree.parent / "netanim").mkdir()
    return root


@pytest.mark.parametrize("packed", [False, True], ids=["tree", "tarball"])
def test_the_optimized_build_configures_builds_and_is_reused_until_source_or_compiler_change(
    run, tmp_path, monkeypatch, packed
):
    source = fake_source(tmp_path / "source")
    if packed:
        tarball = tmp_path / "ns3_3.99.orig.tar.gz"
        subprocess.run(["tar", "-czf", str(tarball), "-C", str(source), "ns-allinone-3.99"], check=True)
        source = tarball
    monkeypatch.setattr(run, "NS3_OPTIMIZED", tmp_path / "cache" / "ns3-optimized")
    monkeypatch.setattr(run, "ensure_build_tools", lambda: None)
    monkeypatch.setattr(run, "compiler", lambda: "g++ (stand-in) 12.2.0")
    calls = tmp_path / "cache" / "ns3-optimized" / "src" / "ns-allinone-3.99" / "calls.log"

    build = run.optimized_build(source, jobs=1)
    assert calls.read_text().splitlines() == [
        f"configure {' '.join(run.NS3_CONFIGURE)}",
        f"build {' '.join(run.NS3_MODULES)} --jobs=1",
    ]
    assert (build.name, build.tag, build.suffix, build.version) == ("optimized", "ns3.99", "-optimized", "3.99")
    assert build.lib == tmp_path / "cache" / "ns3-optimized" / "src" / "ns-allinone-3.99" / "ns-3.99" / "build" / "lib"
    assert "optimized build from source" in build.label and "NS3_LOG and NS3_ASSERT off" in build.label
    assert run.optimized_build(source, jobs=1) == build and len(calls.read_text().splitlines()) == 2  # cached

    monkeypatch.setattr(run, "compiler", lambda: "g++ (stand-in) 13.1.0")
    run.optimized_build(source, jobs=2)
    assert (
        calls.read_text().splitlines()[-1] == f"build {' '.join(run.NS3_MODULES)} --jobs=2"
    )  # a fresh tree, configured and built again
    assert len(calls.read_text().splitlines()) == 2


def test_the_twin_is_compiled_with_the_optimized_builds_flags_and_libraries(run, tmp_path):
    build = run.describe_optimized(fake_built_tree(tmp_path), Path("ns3_3.37.orig.tar.bz2"))
    cmd = run.twin_command(run.SOURCE, build, tmp_path / "dumbbell-optimized")
    assert {"-O3", "-march=native", "-std=c++17", "-DNS3_BUILD_PROFILE_OPTIMIZED"} <= set(cmd)
    assert not any(a in cmd for a in ("-DNS3_LOG_ENABLE", "-DNS3_ASSERT_ENABLE"))  # the library has neither
    assert [a for a in cmd if a.startswith("-l")] == [f"-lns3.37-{m}-optimized" for m in run.NS3_LIBS]
    assert f"-Wl,-rpath,{build.lib}" in cmd and f"-I{build.include}" in cmd


def fake_built_tree(root: Path) -> Path:
    tree = root / "ns-3.37"
    (tree / "build" / "lib").mkdir(parents=True)
    (tree / "build" / "lib" / "libns3.37-core-optimized.so").write_text("")
    return tree


def test_fetching_the_source_uses_a_downloaded_tarball_without_apt(run, tmp_path, monkeypatch):
    (tmp_path / "bookworm").mkdir()
    (tmp_path / "bookworm" / "ns3_3.37.orig.tar.bz2").write_text("")
    monkeypatch.setattr(run.shutil, "which", lambda name: pytest.fail(f"looked for {name}"))
    assert run.fetch_ns3_source(tmp_path, "bookworm") == tmp_path / "bookworm" / "ns3_3.37.orig.tar.bz2"


def test_a_deb_src_entry_is_found_in_either_format_and_only_for_the_suite(run, tmp_path):
    apt = tmp_path / "apt"
    (apt / "sources.list.d").mkdir(parents=True)
    (apt / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\nComponents: main\n"
    )
    assert not run.has_debsrc("bookworm", apt=apt)  # binary packages only
    (apt / "sources.list").write_text(
        "# deb-src http://deb.debian.org/debian bookworm main\n"
        "deb-src [arch=amd64] http://deb.debian.org/debian trixie main contrib\n"
    )
    assert not run.has_debsrc("bookworm", apt=apt) and run.has_debsrc("trixie", apt=apt)
    (apt / "sources.list.d" / "off.sources").write_text("Enabled: no\n" + run.debsrc_entry("bookworm"))
    assert not run.has_debsrc("bookworm", apt=apt)
    (apt / "sources.list.d" / run.DEBSRC_FILE).write_text(run.debsrc_entry("bookworm"))
    assert run.has_debsrc("bookworm", apt=apt) and not run.has_debsrc("bookworm", "contrib", apt=apt)


def test_make_bench_ns3_runs_run_py():
    makefile = (ROOT / "Makefile").read_text()
    target = makefile[makefile.index("\nbench-ns3:") :].split("\n\n")[0]
    assert "bench/ns3/run.py $(BENCH_NS3_ARGS)" in target


def test_a_source_trees_key_ignores_what_a_build_leaves_in_it(run, tmp_path):
    tree = fake_source(tmp_path / "source")
    key = run.tree_sha256(tree)
    inner = tree / "ns-allinone-3.99" / "ns-3.99"
    for made in ("build/lib/libns3.99-core-optimized.so", "cmake-cache/CMakeCache.txt"):
        (inner / made).parent.mkdir(parents=True, exist_ok=True)
        (inner / made).write_text("x")
    assert run.tree_sha256(tree) == key
    (inner / "CMakeLists.txt").write_text("project(ns3) # patched\n")
    assert run.tree_sha256(tree) != key
