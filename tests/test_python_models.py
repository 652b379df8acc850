"""Congestion controls and queue disciplines written in Python (engine/user_models.py,
crates/ccsim-py/src/models.rs).

The proof that the Python interface is the engine's own: the Python twins of NewReno and
CoDel in examples/python_models/ give results bit-identical to the Rust models, on the
flagship scenario and on a Piotrowska Access Link cell; and a Python model runs in sweeps (local
processes and Dask), SMC and compare, and fails with the user's traceback.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import ccsim
import pandas as pd
import pytest
from ccsim.errors import ScenarioError
from ccsim.scenario.registry import get_registry

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "python_models"
FLAGSHIP = REPO / "scenarios" / "flagship.toml"
PIOTROWSKA = REPO / "scenarios" / "papers" / "piotrowska" / "access_link.toml"


def py(source: str) -> str:
    """A ``--set`` value naming a class of examples/python_models by absolute path."""
    return f'{{python = "{EXAMPLES / source}"'


def same_results(a: ccsim.Result, b: ccsim.Result, name_columns: dict[str, str]) -> None:
    """Every table equal, bit for bit, but the columns that name the model."""
    for table in ("flows", "queues", "traces"):
        left, right = getattr(a, table), getattr(b, table)
        drop = [c for c in (name_columns.get(table),) if c is not None and c in left]
        pd.testing.assert_frame_equal(left.drop(columns=drop), right.drop(columns=drop), check_exact=True)


# --- the twins ---------------------------------------------------------------------------------


@pytest.mark.parametrize("ecn", [False, True])
def test_python_newreno_and_codel_match_the_rust_models_on_the_flagship(ecn: bool) -> None:
    ecn_transport = [f"flows.transport={{kind = 'tcp', ecn = {str(ecn).lower()}}}"]
    rust = ccsim.run(
        FLAGSHIP,
        overrides=[
            *ecn_transport,
            f'topology.bottleneck.queue={{kind = "codel", limit = "81p", ecn = {str(ecn).lower()}}}',
        ],
    )
    python = ccsim.run(
        FLAGSHIP,
        overrides=[
            *ecn_transport,
            "flows.cc=" + py("newreno.py:PyNewReno") + "}",
            "topology.bottleneck.queue=" + py("codel.py:PyCodel") + f', limit = "81p", ecn = {str(ecn).lower()}}}',
        ],
    )
    assert set(python.flows["cc"]) == {"py_newreno"}
    assert python.queues["kind"].iloc[0] == "py_codel"
    # The runs must exercise the AQM: drops (or marks with ECN) at the bottleneck.
    bottleneck = rust.queues.iloc[0]
    assert (bottleneck["marks"] if ecn else bottleneck["drops"]) > 100
    same_results(rust, python, {"flows": "cc", "queues": "kind"})


def test_python_models_match_the_rust_models_on_a_piotrowska_cell() -> None:
    # Access Link, 90 NewReno flows, CoDel with the paper's 5 ms target (queues.toml), 20 s.
    common = ["simulation.duration=20s", "simulation.warmup=5s", "flows.count=10"]
    codel = 'kind = "codel", limit = "900p", target = "5ms"'
    rust = ccsim.run(PIOTROWSKA, overrides=[*common, f"topology.bottleneck.queue={{{codel}}}"])
    python = ccsim.run(
        PIOTROWSKA,
        overrides=[
            *common,
            "flows.cc=" + py("newreno.py:PyNewReno") + "}",
            "topology.bottleneck.queue=" + py("codel.py:PyCodel") + ', limit = "900p", target = "5ms"}',
        ],
    )
    assert len(python.flows) == 90
    assert rust.queues.iloc[0]["drops"] > 100
    same_results(rust, python, {"flows": "cc", "queues": "kind"})


def test_a_python_model_that_differs_gives_different_results() -> None:
    # The twins' identity is not an artefact of the Python model being ignored.
    newreno = ccsim.run(FLAGSHIP, overrides=["simulation.duration=20s", "simulation.warmup=5s"])
    aimd = ccsim.run(
        FLAGSHIP,
        overrides=["simulation.duration=20s", "simulation.warmup=5s", "flows.cc=" + py("aimd.py:MyAimd") + ", a = 2}"],
    )
    assert set(aimd.flows["cc"]) == {"my_aimd"}
    assert not newreno.flows["goodput_bps"].equals(aimd.flows["goodput_bps"])


# --- the interface -----------------------------------------------------------------------------


def write(tmp_path: Path, name: str, code: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(code))
    return path


def scenario_beside(tmp_path: Path) -> Path:
    target = tmp_path / "flagship.toml"
    target.write_text(FLAGSHIP.read_text())
    return target


def test_the_state_a_python_model_sees_is_the_senders(tmp_path: Path) -> None:
    write(
        tmp_path,
        "probe.py",
        """
        import ccsim

        SEEN = []

        @ccsim.congestion_control("probe_cc")
        class Probe:
            def on_ack(self, s, ack):
                SEEN.append((s.now, s.cwnd, s.ssthresh, s.mss, s.srtt, s.min_rtt, s.in_flight, ack.acked_bytes, ack.rtt))
                s.cwnd += min(ack.acked_bytes, 2 * s.mss) if s.in_slow_start else s.mss * ack.acked_bytes // s.cwnd

            def on_congestion(self, s, event):
                SEEN.append(("congestion", event, s.flight_size))
                s.ssthresh = max(s.flight_size // 2, 2 * s.mss)
        """,
    )
    scenario = scenario_beside(tmp_path)
    result = ccsim.run(
        scenario, overrides=['flows.cc={python = "probe.py:Probe"}', "simulation.duration=5s", "simulation.warmup=1s"]
    )
    module = sys.modules[
        next(k for k, m in sys.modules.items() if getattr(m, "__ccsim_file__", "") == str(tmp_path / "probe.py"))
    ]
    acks = [s for s in module.SEEN if s[0] != "congestion"]
    assert len(acks) > 1000
    now, cwnd, ssthresh, mss, srtt, min_rtt, in_flight, acked, rtt = acks[-1]
    assert 4.0 < now <= 5.0 and mss == 1448 and cwnd >= mss
    assert srtt is not None and min_rtt is not None and 0.018 <= min_rtt <= srtt < 1.0
    times = [a[0] for a in acks]
    assert times == sorted(times)
    # Slow start doubles the window of the first ACKs by the bytes they acknowledge.
    first = acks[0]
    assert first[1] == 10 * 1448  # init_cwnd 10 segments (the TCP default)
    congestion = [s for s in module.SEEN if s[0] == "congestion"]
    assert congestion and {e for _, e, _ in congestion} <= {"loss", "ecn", "timeout"}
    assert result.flows["retransmits" if "retransmits" in result.flows else "retransmissions"].sum() > 0


def test_an_exception_in_a_callback_names_the_model_the_callback_and_the_time(tmp_path: Path) -> None:
    write(
        tmp_path,
        "broken.py",
        """
        import ccsim

        @ccsim.congestion_control("broken_cc", params={"after": 50})
        class Broken:
            def __init__(self):
                self.acks = 0

            def on_ack(self, s, ack):
                self.acks += 1
                if self.acks == self.after:
                    {}["missing"]
        """,
    )
    scenario = scenario_beside(tmp_path)
    from ccsim import _core

    with pytest.raises(_core.SimulationError) as caught:
        ccsim.run(scenario, overrides=['flows.cc={python = "broken.py:Broken"}'])
    exc = caught.value
    assert exc.model == "broken_cc" and exc.callback == "on_ack"  # type: ignore[attr-defined]
    assert 0 < exc.time_s < 2  # type: ignore[attr-defined]
    assert "congestion control 'broken_cc' failed in on_ack at t = " in str(exc)
    assert isinstance(exc.__cause__, KeyError)
    frames = [f.filename for f in __import__("traceback").extract_tb(exc.__cause__.__traceback__)]
    assert frames[-1] == str(tmp_path / "broken.py")

    # The command line shows the user's traceback and exits with 2, not an engine bug report.
    proc = subprocess.run(
        [sys.executable, "-m", "ccsim", "run", str(scenario), "--set", 'flows.cc={python = "broken.py:Broken"}'],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 2, proc.stderr
    assert 'broken.py", line 12, in on_ack' in proc.stderr
    assert "KeyError: 'missing'" in proc.stderr and "a bug" not in proc.stderr


BAD_MODELS = """
import ccsim

@ccsim.congestion_control("tiny_cc")
class Tiny:
    def on_ack(self, s, ack):
        s.cwnd = s.mss - 1

@ccsim.congestion_control("sneaky_cc")
class Sneaky:
    def on_rtt_sample(self, s, rtt):
        s.cwnd = 2 * s.cwnd

@ccsim.queue_discipline("stale_q")
class Stale:
    def __init__(self):
        self.kept = []
    def enqueue(self, q, pkt):
        self.kept.append(pkt)
    def dequeue(self, q):
        return self.kept[0] if self.kept else None

@ccsim.queue_discipline("wrong_q")
class Wrong:
    def enqueue(self, q, pkt):
        pass
    def dequeue(self, q):
        return 42

@ccsim.congestion_control("init_fails")
class InitFails:
    def __init__(self):
        raise RuntimeError("no")
"""


@pytest.mark.parametrize(
    ("key", "source", "callback", "message"),
    [
        ("flows.cc", "Tiny", "on_ack", "cwnd must be at least one segment (1448 bytes), got 1447"),
        ("flows.cc", "Sneaky", "on_rtt_sample", "on_rtt_sample may not change cwnd or ssthresh"),
        ("topology.bottleneck.queue", "Stale", "dequeue", "the queue does not hold this packet"),
        ("topology.bottleneck.queue", "Wrong", "dequeue", "dequeue must return a Packet it holds or None, got 42"),
    ],
)
def test_a_malformed_decision_is_a_clear_error(
    tmp_path: Path, key: str, source: str, callback: str, message: str
) -> None:
    write(tmp_path, "bad.py", BAD_MODELS)
    from ccsim import _core

    with pytest.raises(_core.SimulationError) as caught:
        ccsim.run(scenario_beside(tmp_path), overrides=[f'{key}={{python = "bad.py:{source}"}}'])
    assert caught.value.callback == callback  # type: ignore[attr-defined]
    assert message in str(caught.value)


def test_a_model_that_cannot_be_made_or_found_is_a_scenario_error(tmp_path: Path) -> None:
    write(tmp_path, "bad.py", BAD_MODELS)
    scenario = scenario_beside(tmp_path)
    cases = {
        '{python = "bad.py:InitFails"}': ("flows[0].cc", "RuntimeError: no"),
        '{python = "bad.py:Nothing"}': ("flows[0].cc.python", "has no Nothing"),
        '{python = "missing.py:X"}': ("flows[0].cc.python", "no such file"),
        '{python = "bad.py:Stale"}': ("flows[0].cc.python", "is a queue discipline, not a congestion control"),
        '{python = "bad.py:Tiny", kind = "newreno"}': ("flows[0].cc.kind", "not both"),
        '{python = "bad.py:Tiny", x = 1}': ("flows[0].cc.x", "unknown parameter of tiny_cc"),
    }
    for value, (field, message) in cases.items():
        with pytest.raises(ScenarioError) as caught:
            ccsim.load(scenario, [f"flows.cc={value}"])
        assert caught.value.field == field, value
        assert message in caught.value.message, value


def test_parameters_are_declared_converted_and_listed(tmp_path: Path) -> None:
    write(
        tmp_path,
        "params.py",
        """
        import ccsim

        SEEN = {}

        @ccsim.congestion_control(
            "params_cc",
            params={"gain": 0.5, "steps": 3, "hold": "20ms", "rate": "10Mbps", "on": True,
                    "p": ccsim.param(0.1, kind="prob", doc="a probability", max=0.5)},
        )
        class Params:
            '''A model with one parameter of each kind.'''
            def __init__(self):
                SEEN.update(vars(self))
        """,
    )
    scenario = scenario_beside(tmp_path)
    loaded = ccsim.load(
        scenario, ['flows.cc={python = "params.py:Params", hold = "1s", p = "20%"}', "simulation.duration=11s"]
    )
    ccsim.run(loaded)
    module = next(m for m in sys.modules.values() if getattr(m, "__ccsim_file__", "") == str(tmp_path / "params.py"))
    assert module.SEEN == {"gain": 0.5, "steps": 3, "hold": 1.0, "rate": 10_000_000, "on": True, "p": 0.2}
    model = get_registry().model("cc", "params_cc")
    assert [(p.name, p.kind) for p in model.params] == [
        ("gain", "float"),
        ("steps", "int"),
        ("hold", "time"),
        ("rate", "rate"),
        ("on", "bool"),
        ("p", "prob"),
    ]
    assert model.doc == "A model with one parameter of each kind."
    with pytest.raises(ScenarioError, match="must be <= 0.5"):
        ccsim.load(scenario, ['flows.cc={python = "params.py:Params", p = 0.9}'])
    # A model registered in this process is named like a built-in one.
    assert ccsim.load(scenario, ["flows.cc=params_cc"]).flows[0].cc.source is not None


def test_a_built_in_name_cannot_be_taken() -> None:
    with pytest.raises(ValueError, match="built-in congestion control"):

        @ccsim.congestion_control("cubic")
        class NotCubic:
            pass


def test_random_draws_follow_the_seed_and_smc_sees_them(tmp_path: Path) -> None:
    write(
        tmp_path,
        "noisy.py",
        """
        import ccsim

        @ccsim.congestion_control("noisy_cc", random="random window cuts")
        class Noisy:
            def on_ack(self, s, ack):
                s.cwnd += s.mss * ack.acked_bytes // s.cwnd
                if s.random() < 0.001:
                    s.cwnd = max(s.cwnd // 2, s.mss)
        """,
    )
    scenario = scenario_beside(tmp_path)
    sets = ['flows.cc={python = "noisy.py:Noisy"}', "simulation.duration=20s", "simulation.warmup=5s"]
    a, b, c = (ccsim.run(scenario, seed=s, overrides=sets) for s in (7, 7, 8))
    pd.testing.assert_frame_equal(a.flows, b.flows, check_exact=True)
    assert not a.flows["goodput_bps"].equals(c.flows["goodput_bps"])
    assert get_registry().model("cc", "noisy_cc").randomness({}) == "random window cuts"


def test_a_class_defined_in_a_function_runs_in_worker_processes(tmp_path: Path) -> None:
    # Defined here, not importable by name: it reaches the sweep's spawned workers pickled.
    @ccsim.congestion_control("local_aimd", params={"a": 1.0})
    class LocalAimd:
        def on_ack(self, s, ack):
            s.cwnd += self.a * s.mss * ack.acked_bytes / s.cwnd

        def on_congestion(self, s, event):
            s.ssthresh = max(s.cwnd // 2, 2 * s.mss)

    model = get_registry().model("cc", "local_aimd")
    assert model.source is not None and model.source.startswith("pickle:")
    from ccsim.experiments import sweep

    (tmp_path / "base.toml").write_text(FLAGSHIP.read_text())
    (tmp_path / "sweep.toml").write_text(
        textwrap.dedent(
            """
            scenario = "base.toml"
            seeds = 1
            [set]
            "simulation.duration" = "10s"
            "simulation.warmup" = "2s"
            "flows.cc" = "local_aimd"
            [grid]
            "flows.cc.a" = [1.0, 3.0]
            """
        )
    )
    spec = sweep.load_sweep(tmp_path / "sweep.toml")
    done = sweep.run_sweep(spec, tmp_path / "out", jobs=2)
    assert done.ran == 2 and done.failed == 0, done.table["error"].tolist()
    assert done.table["goodput_bps_total"].iloc[0] != done.table["goodput_bps_total"].iloc[1]
    # A Dask cluster's workers (other processes, no shared module) give the same bytes.
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=":0"
    ) as cluster:
        remote = sweep.run_sweep(spec, tmp_path / "dask", scheduler=cluster.scheduler_address)
    assert remote.ran == 2 and remote.failed == 0, remote.table["error"].tolist()
    pd.testing.assert_frame_equal(
        done.table.reset_index(drop=True), remote.table.reset_index(drop=True), check_exact=True
    )
    here = ccsim.run(
        tmp_path / "base.toml",
        seed=int(done.table["seed"].iloc[0]),
        overrides=["flows.cc=local_aimd", "simulation.duration=10s", "simulation.warmup=2s", "flows.cc.a=1.0"],
    )
    assert done.table["goodput_bps_total"].iloc[0] == here.flows["goodput_bps"].sum()


def test_a_model_name_is_a_lower_case_identifier() -> None:
    for name in ("Bad Name", "MyCc", "1cc", ""):
        with pytest.raises(ValueError, match="lower-case identifier"):
            ccsim.congestion_control(name)


def test_the_command_line_loads_model_files_for_list_and_compare(tmp_path: Path) -> None:
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "ccsim", *args], capture_output=True, text=True, cwd=REPO)

    aimd = str(EXAMPLES / "aimd.py")
    listed = cli("list", "cc", "my_aimd", "--load", aimd)
    assert listed.returncode == 0, listed.stderr
    assert "AIMD(a, b)" in listed.stdout and "default 0.5" in listed.stdout
    missing = cli("list", "cc", "--load", "nope.py")
    assert missing.returncode == 2 and "--load: no such file" in missing.stderr
    out = tmp_path / "compare"
    compared = cli(
        "compare", str(FLAGSHIP), "--cc", "newreno,my_aimd", "--queue", "codel", "--seeds", "3", "--jobs", "2",
        "--load", aimd, "--set", "simulation.duration=5s", "--set", "simulation.warmup=1s",
        "--out", str(out), "--quiet",
    )  # fmt: skip
    assert compared.returncode == 0, compared.stderr
    table = pd.read_csv(out / "comparison.csv")
    assert set(table["cc"]) == {"newreno", "my_aimd"}


def test_smc_sees_a_random_python_model_and_runs_it_in_workers(tmp_path: Path) -> None:
    write(
        tmp_path,
        "coin.py",
        """
        import ccsim

        @ccsim.queue_discipline("coin_q", params={"p": 0.02}, random="random early drops")
        class Coin:
            '''Drops each arrival with probability p, else FIFO.'''
            def __init__(self):
                self.fifo = []

            def enqueue(self, q, pkt):
                if q.random() < self.p or len(self.fifo) >= 100:
                    q.drop(pkt)
                else:
                    self.fifo.append(pkt)

            def dequeue(self, q):
                return self.fifo.pop(0) if self.fifo else None
        """,
    )
    from ccsim.experiments import smc

    scenario = scenario_beside(tmp_path)
    sets = ['topology.bottleneck.queue={python = "coin.py:Coin"}', "simulation.duration=3s", "simulation.warmup=1s"]
    query = "Pr[<=3](<> queue.A->B.length > 20)"
    first = smc.check(scenario, query, runs=8, jobs=2, overrides=sets)
    again = smc.check(scenario, query, runs=8, jobs=2, overrides=sets)
    assert len(first.outcomes) == 8
    # The seeds' random drops make the runs differ (the first passage times), and the same
    # seeds give the same outcomes.
    assert first.outcomes["time_s"].dropna().nunique() > 1, first.outcomes
    pd.testing.assert_frame_equal(first.outcomes, again.outcomes, check_exact=True)
