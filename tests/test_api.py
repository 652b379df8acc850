"""``ccsim.run`` and ``Result``: the Python API over the engine."""

from __future__ import annotations

import json
from pathlib import Path

import ccsim
import pandas as pd
import pytest
from ccsim import _core
from ccsim.engine import runner
from ccsim.results.result import LOGS, Result
from ccsim.scenario.schema import load
from conftest import SCENARIOS

FLAGSHIP = SCENARIOS / "flagship.toml"
SHORT = ["simulation.duration=6s", "simulation.warmup=1s"]

# Columns of results.rs (FlowResult, QueueResult): the DataFrames carry all of them.
FLOW_COLUMNS = {
    "id",
    "name",
    "group",
    "src",
    "dst",
    "transport",
    "cc",
    "app",
    "start_s",
    "bytes_delivered",
    "bytes_received",
    "goodput_bps",
    "packets_sent",
    "packets_received",
    "retransmissions",
    "timeouts",
    "fast_recoveries",
    "ecn_reductions",
    "queue_drops",
    "link_losses",
    "rtt_samples",
    "rtt_min_s",
    "rtt_mean_s",
    "rtt_max_s",
    "delay_mean_s",
    "delay_max_s",
    "messages_generated",
    "messages_lost_at_sender",
    "final_cwnd_bytes",
}
QUEUE_COLUMNS = {
    "name",
    "kind",
    "from",
    "to",
    "rate_bps",
    "arrivals",
    "departures",
    "drops",
    "marks",
    "drop_ratio",
    "mean_len_pkts",
    "sd_len_pkts",
    "mean_len_bytes",
    "sd_len_bytes",
    "max_len_pkts",
    "mean_sojourn_s",
    "mean_drop_sojourn_s",
    "max_sojourn_s",
    "p50_sojourn_s",
    "p99_sojourn_s",
    "tx_bytes",
    "utilization",
    "link_losses",
}


@pytest.fixture(scope="module")
def result() -> ccsim.Result:
    return ccsim.run(FLAGSHIP, seed=3, overrides=SHORT)


def test_result_tables_have_a_row_per_flow_and_queue(result: ccsim.Result) -> None:
    assert isinstance(result.flows, pd.DataFrame) and isinstance(result.queues, pd.DataFrame)
    assert len(result.flows) == 4
    assert FLOW_COLUMNS <= set(result.flows.columns)
    assert len(result.queues) == 2 * 9  # two directions of each of the dumbbell's 9 links
    assert QUEUE_COLUMNS <= set(result.queues.columns)
    assert list(result.flows["cc"]) == ["newreno"] * 4


def test_traces_are_sampled_at_the_scenario_interval(result: ccsim.Result) -> None:
    traces = result.traces
    assert traces.columns[0] == "time_s"
    assert {"queue.A->B.len_pkts", "flow.0.cwnd_bytes", "flow.3.cwnd_bytes"} <= set(traces.columns)
    steps = traces["time_s"].diff().dropna()
    assert steps.round(9).unique().tolist() == [0.01]
    assert traces["queue.A->B.len_pkts"].max() <= 81  # the DropTail limit


def test_summary_holds_the_documented_keys_and_is_json(result: ccsim.Result) -> None:
    summary = json.loads(json.dumps(result.summary))
    assert {"flows", "queues", "jain_index", "utilization", "events", "seed"} <= set(summary)
    assert "traces" not in summary
    assert {"id", "cc", "goodput_bps", "retransmissions", "rtt_mean_s"} <= set(summary["flows"][0])
    assert {"name", "kind", "mean_len_pkts", "sd_len_pkts", "mean_sojourn_s", "drops", "marks", "drop_ratio"} <= set(
        summary["queues"][0]
    )
    assert summary["seed"] == result.seed == 3
    assert summary["events"] == result.events > 0


def test_the_flagship_bottleneck_is_saturated(result: ccsim.Result) -> None:
    assert result.raw["bottleneck"] == "A->B"
    assert result.utilization is not None and result.utilization > 0.9
    assert 0.25 <= result.jain_index <= 1.0
    bottleneck = result.queues.set_index("name").loc["A->B"]
    assert bottleneck["kind"] == "droptail" and bottleneck["arrivals"] > 0


def test_a_scenario_object_a_dict_and_a_file_give_the_same_run() -> None:
    scenario = load(FLAGSHIP, SHORT)
    from_file = ccsim.run(FLAGSHIP, seed=9, overrides=SHORT)
    from_model = ccsim.run(scenario, seed=9)
    from_dict = ccsim.run(scenario.model_dump(exclude_none=True), seed=9)
    assert from_file.summary == from_model.summary == from_dict.summary


def test_the_seed_argument_replaces_the_scenarios_seed() -> None:
    scenario = load(FLAGSHIP, SHORT + ["simulation.seed=4"])
    assert ccsim.run(scenario).seed == 4
    assert ccsim.run(scenario, seed=8).seed == 8
    with pytest.raises(ccsim.ScenarioError, match="seed"):
        ccsim.run(scenario, seed=-1)


def test_bad_input_raises_scenario_errors_with_the_engines_refusals_among_them() -> None:
    with pytest.raises(ccsim.ScenarioError) as info:
        ccsim.run({"simulation": {"duration": "1s"}, "topology": {"kind": "dumbbell"}})
    assert info.value.field == "topology.bottleneck"
    # An unroutable flow passes the file checks; the engine refuses it, named by scenario key.
    disconnected = {
        "simulation": {"duration": "1s"},
        "topology": {
            "kind": "explicit",
            "nodes": [{"name": "a", "kind": "host"}, {"name": "b", "kind": "host"}],
            "links": [],
        },
        "flows": [{"src": "a", "dst": "b"}],
    }
    with pytest.raises(ccsim.ScenarioError) as engine_error:
        ccsim.run(disconnected)
    assert engine_error.value.field == "flows[0]" and "no route from 'a' to 'b'" in engine_error.value.message


def test_write_saves_tables_summary_and_plots(result: ccsim.Result, tmp_path: Path) -> None:
    written = result.write(tmp_path / "run")
    assert sorted(p.name for p in written) == sorted(
        [
            "flows.parquet",
            "queues.parquet",
            "traces.parquet",
            "summary.json",
            "queue_length.png",
            "cwnd.png",
            "goodput.png",
        ]
    )
    assert json.loads((tmp_path / "run" / "summary.json").read_text()) == result.summary
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "run" / "traces.parquet"), result.traces)
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "run" / "flows.parquet"), result.flows)


def test_without_traces_only_the_goodput_plot_is_drawn(tmp_path: Path) -> None:
    text = FLAGSHIP.read_text().split("[trace]")[0]
    path = tmp_path / "notrace.toml"
    path.write_text(text)
    quiet = ccsim.run(path, overrides=SHORT)
    assert list(quiet.traces.columns) == ["time_s"] and quiet.traces.empty
    names = {p.name for p in quiet.write(tmp_path / "out")}
    assert "goodput.png" in names and "cwnd.png" not in names and "queue_length.png" not in names


# --- driving the engine in slices -----------------------------------------------------------


class FakeSimulation:
    """Stands in for _core.Simulation: each event takes `ns_per_event` of simulated time;
    records the budget of every slice it is asked to run and the time each slice ends at."""

    def __init__(self, duration_ns: int, interrupt_at: int | None = None, ns_per_event: int = 1) -> None:
        self.duration_ns = duration_ns
        self.now_ns = 0
        self.targets: list[int] = []
        self.budgets: list[int] = []
        self.interrupt_at = interrupt_at
        self.ns_per_event = ns_per_event

    @property
    def finished(self) -> bool:
        return self.now_ns >= self.duration_ns

    def advance(self, t_ns: int, max_events: int) -> bool:
        if self.interrupt_at is not None and len(self.targets) == self.interrupt_at:
            raise KeyboardInterrupt
        self.budgets.append(max_events)
        end = min(t_ns, self.duration_ns)
        self.now_ns = min(end, self.now_ns + max_events * self.ns_per_event)
        self.targets.append(self.now_ns)
        return self.now_ns >= end


class FakeBar:
    instances: list[FakeBar] = []

    def __init__(self, duration_ns: int) -> None:
        self.updates: list[int] = []
        self.closed = False
        FakeBar.instances.append(self)

    def update(self, now_ns: int) -> None:
        self.updates.append(now_ns)

    def close(self) -> None:
        self.closed = True


def test_the_engine_is_driven_in_increasing_slices_to_the_end() -> None:
    sim = FakeSimulation(duration_ns=10**9 + 7)
    runner._drive(sim, show_progress=False)
    assert sim.targets[-1] == sim.duration_ns
    assert all(a < b for a, b in zip(sim.targets, sim.targets[1:], strict=False))
    assert len(sim.targets) > 1  # sliced, so Ctrl-C is seen between slices
    # Slices are counted in events, never more than four times the one before.
    assert sim.budgets[0] == runner.FIRST_SLICE_EVENTS
    assert all(b <= 4 * a for a, b in zip(sim.budgets, sim.budgets[1:], strict=False))


def test_progress_bar_follows_simulated_time_and_closes_on_interrupt(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "PROGRESS_AFTER_S", 0.0)
    monkeypatch.setattr(runner, "_ProgressBar", FakeBar)
    FakeBar.instances.clear()
    sim = FakeSimulation(duration_ns=10**9)
    runner._drive(sim, show_progress=True)
    (bar,) = FakeBar.instances
    assert bar.updates == sim.targets and bar.closed

    FakeBar.instances.clear()
    interrupted = FakeSimulation(duration_ns=10**9, interrupt_at=3)
    with pytest.raises(KeyboardInterrupt):
        runner._drive(interrupted, show_progress=True)
    assert FakeBar.instances[0].closed and interrupted.targets == FakeBar.instances[0].updates


def test_no_progress_bar_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "PROGRESS_AFTER_S", 0.0)
    monkeypatch.setattr(runner, "_ProgressBar", FakeBar)
    FakeBar.instances.clear()
    runner._drive(FakeSimulation(duration_ns=10**6), show_progress=False)
    assert FakeBar.instances == []


def test_the_real_progress_bar_runs_on_a_real_simulation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "PROGRESS_AFTER_S", 0.0)
    result = ccsim.run(FLAGSHIP, overrides=["simulation.duration=2s", "simulation.warmup=0s"], progress=True)
    assert result.raw["duration_s"] == pytest.approx(2.0)


def test_event_log_lists_every_drop_the_queues_counted(tmp_path: Path) -> None:
    """`[trace] events = true` gives one row per drop or mark, consistent with the counters."""
    scenario = ccsim.load(str(SCENARIOS / "flagship.toml"), ["trace.events=true", "simulation.duration=20s"])
    result = ccsim.run(scenario)
    log = result.queue_events
    assert log is not None and list(log.columns) == ["time_s", "queue", "flow", "event"]
    measured = log[log.time_s >= result.raw["warmup_s"]]
    drops = measured[measured.event.str.startswith("drop")].groupby("queue").size()
    counted = result.queues.set_index("name").drops
    assert drops.sum() > 0
    for queue, n in drops.items():
        assert counted[queue] == n
    per_flow = measured[measured.event.str.startswith("drop")].groupby("flow").size()
    assert (result.flows.set_index("id").queue_drops[per_flow.index] == per_flow).all()
    written = result.write(tmp_path)
    assert tmp_path / "queue_events.parquet" in written


def test_message_log_matches_the_flow_counters() -> None:
    """`[trace] messages = true`: one row per message; a bulk flow's one message stays pending."""
    scenario = ccsim.load(
        str(SCENARIOS / "flagship.toml"), ["trace.messages=true", "simulation.duration=5s", "simulation.warmup=0s"]
    )
    result = ccsim.run(scenario)
    assert result.messages is not None
    # Bulk applications write one unlimited message each: nothing is ever delivered whole.
    assert len(result.messages) == 0
    assert (result.flows.messages_pending == 1).all()
    assert (result.flows.messages_received == 0).all()


def test_result_keeps_the_logs_once_and_gives_them_back_whole() -> None:
    """``ccsim.run`` reads the engine's results as columns (``Simulation.results``); against the
    engine's own JSON (records, parsed by Python), ``Result.raw`` has the same values and every
    table is the same DataFrame, dtypes and missing values included. ``Result.raw`` holds no
    log (they are the DataFrames); ``engine_results`` rebuilds the engine's JSON from them."""
    path = str(SCENARIOS / "examples" / "ncs_dumbbell.toml")
    scenario = ccsim.load(
        path,
        [
            "trace.events=true",
            "trace.messages=true",
            "trace.rtt=true",
            "simulation.duration=4s",
            "simulation.warmup=1s",
        ],
    )
    result = ccsim.run(scenario, seed=5)
    assert not set(LOGS) & set(result.raw)
    sim = _core.Simulation(json.dumps(result.config))
    runner._drive(sim, False)
    engine = json.loads(sim.results_json())
    rebuilt = result.engine_results()
    assert result.raw == {k: v for k, v in engine.items() if k not in LOGS}
    assert {k: v for k, v in rebuilt.items() if k not in LOGS} == result.raw
    for key in LOGS:
        assert engine.get(key), f"the scenario should log {key}"
        expected, got = pd.DataFrame(engine[key]), pd.DataFrame(rebuilt[key])
        pd.testing.assert_frame_equal(got[sorted(got.columns)], expected[sorted(expected.columns)])
    # Read back, the rebuilt results give the same Result; so does the engine's JSON.
    again = Result(rebuilt, result.config, 0.0)
    from_json = Result(engine, result.config, 0.0)
    for name in ("flows", "queues", "traces", "queue_events", "messages", "rtt_samples", "control", "control_traces"):
        pd.testing.assert_frame_equal(getattr(again, name), getattr(result, name))
        pd.testing.assert_frame_equal(getattr(from_json, name), getattr(result, name), check_exact=True)
    assert result.flows.rtt_mean_s.dtype == float and result.flows.id.dtype == "int64"
