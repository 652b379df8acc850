"""Model state in the sampled traces (``[trace] flow_vars``, ``queue_vars``): the values
against facts found independently of them (RFC 6298 recomputed from the RTT log, the drop
log, the path's base RTT), the long form of the traces against the wide table, the
validation errors, and the listing of what each model offers."""

from __future__ import annotations

from typing import Any

import ccsim
import numpy as np
import pandas as pd
import pytest
from ccsim.cli.listing import models_markdown
from ccsim.errors import ScenarioError
from conftest import run_cli

SENDER = ["srtt", "rttvar", "cwnd", "ssthresh", "inflight", "outstanding", "cc_state", "rto", "pacing_rate"]


def dumbbell(queue: dict[str, Any], rtts: list[str]) -> dict[str, Any]:
    return ccsim.dumbbell(
        {"rate": "10Mbps", "delay": "5ms", "queue": queue}, access={"rate": "100Mbps"}, pairs={"rtts": rtts}
    )


def codel_run(trace: dict[str, Any]) -> ccsim.Result:
    """CUBIC (20 ms) and NewReno (60 ms) through a CoDel bottleneck, 6 s, warm-up 1 s."""
    scenario = ccsim.Scenario(
        simulation={"duration": "6s", "warmup": "1s"},
        topology=dumbbell({"kind": "codel"}, ["20ms", "60ms"]),
        flows=[{"pair": 0, "cc": "cubic"}, {"pair": 1, "cc": "newreno"}],
        trace={"interval": "50ms", **trace},
    )
    return ccsim.run(scenario)


@pytest.fixture(scope="module")
def traced() -> ccsim.Result:
    return codel_run(
        {
            "flow_vars": SENDER + ["w_max", "k"],
            "queue_vars": ["len", "sojourn", "drops", "marks", "count", "drop_next"],
            "cwnd": False,
            "rtt": True,
            "events": True,
        }
    )


def rfc6298(rtts_s: pd.Series) -> tuple[float, float]:
    """SRTT and RTTVAR (s) after these samples, in integer nanoseconds as RFC 6298 §2 and
    the engine's estimator compute them; NaN before any."""
    srtt: int | None = None
    rttvar = 0
    for value in rtts_s:
        r = round(value * 1e9)
        if srtt is None:
            srtt, rttvar = r, r // 2
        else:
            rttvar = (3 * rttvar + abs(srtt - r)) // 4
            srtt = (7 * srtt + r) // 8
    return (np.nan, np.nan) if srtt is None else (srtt / 1e9, rttvar / 1e9)


def same(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return all((np.isnan(x) and np.isnan(y)) or x == y for x, y in zip(a, b, strict=True))


def test_srtt_and_rttvar_are_rfc_6298_over_the_logged_rtt_samples(traced: ccsim.Result) -> None:
    samples = traced.rtt_samples
    assert samples is not None
    for flow, base_rtt in ((0, 0.020), (1, 0.060)):
        log = samples[samples["flow"] == flow]
        srtt = traced.traces[f"flow.{flow}.srtt_s"]
        rttvar = traced.traces[f"flow.{flow}.rttvar_s"]
        assert np.isnan(srtt.iloc[0]), "no RTT sample at time 0"
        assert (srtt.dropna() >= base_rtt).all(), "at least the path's base RTT"
        for t, value in zip(traced.traces["time_s"], zip(srtt, rttvar, strict=True), strict=True):
            # A sample logged at the very instant of the trace may come before or after it.
            before, upto = rfc6298(log[log["time_s"] < t]["rtt_s"]), rfc6298(log[log["time_s"] <= t]["rtt_s"])
            assert same(value, before) or same(value, upto), (flow, t, value, before, upto)


def test_sender_variables_agree_with_each_other_and_with_the_window_trace(traced: ccsim.Result) -> None:
    tr = traced.traces
    plain = codel_run({"cwnd": True})
    for flow in (0, 1):
        # The window named as a variable is trace.cwnd's column, value for value.
        pd.testing.assert_series_equal(tr[f"flow.{flow}.cwnd_bytes"], plain.traces[f"flow.{flow}.cwnd_bytes"])
        assert (tr[f"flow.{flow}.inflight_bytes"] <= tr[f"flow.{flow}.outstanding_bytes"]).all()
        assert set(tr[f"flow.{flow}.cc_state"]) <= {0.0, 1.0, 2.0}
        ssthresh = tr[f"flow.{flow}.ssthresh_bytes"]
        assert np.isnan(ssthresh.iloc[0]) and ssthresh.iloc[-1] > 0, "unlimited until the first reduction"
        assert (tr[f"flow.{flow}.rto_s"] >= 1.0).all(), "RFC 6298's 1 s floor"
    # The RFC's CUBIC state: after the first loss W_max and K are set.
    assert tr["flow.0.w_max_segs"].iloc[-1] > 0 and tr["flow.0.k_s"].iloc[-1] >= 0
    assert "flow.1.w_max_segs" not in tr, "NewReno has no W_max: only the flows whose model has it"
    # The variables change no other result.
    other = [c for c in plain.traces.columns if c in tr.columns]
    pd.testing.assert_frame_equal(tr[other], plain.traces[other])
    pd.testing.assert_frame_equal(traced.flows, plain.flows)


def test_queue_variables_count_the_logged_drops_and_the_length_is_the_existing_trace(traced: ccsim.Result) -> None:
    tr = traced.traces
    assert sorted(c for c in tr.columns if c.startswith("queue.A->B.")) == [
        f"queue.A->B.{leaf}"
        for leaf in ("count", "drop_next_s", "drops", "len_bytes", "len_pkts", "marks", "sojourn_s")
    ], "len and sojourn are the columns every traced queue has"
    events = traced.queue_events
    assert events is not None
    warmup = float(traced.raw["warmup_s"])
    for name in ("A->B", "B->A", "A->s0"):
        log = events[(events["queue"] == name) & (events["time_s"] >= warmup)]
        drops = log[log["event"] != "mark"]["time_s"]
        for t, value in zip(tr["time_s"], tr[f"queue.{name}.drops"], strict=True):
            assert value in ((drops < t).sum(), (drops <= t).sum()), (name, t, value)
        row = traced.queues.set_index("name").loc[name]
        assert tr[f"queue.{name}.drops"].iloc[-1] <= row["drops"]
        assert (tr[f"queue.{name}.marks"] == 0).all() and row["marks"] == 0
    assert tr["queue.A->B.drops"].iloc[-1] > 5, "the bottleneck must drop for the test to mean anything"
    # CoDel's count is at least one from its first drop on, and drop_next then lies ahead of
    # the first drop.
    first = float(events[events["queue"] == "A->B"]["time_s"].min())
    after = tr["time_s"] > first
    assert (tr.loc[after, "queue.A->B.count"] >= 1).all()
    assert (tr.loc[after, "queue.A->B.drop_next_s"] > first).all()


def test_bbr_min_rtt_is_the_base_rtt_plus_serialization() -> None:
    scenario = ccsim.Scenario(
        simulation={"duration": "4s"},
        topology=dumbbell({"kind": "droptail", "limit": "100p"}, ["20ms"]),
        flows=[{"pair": 0, "cc": "bbr"}],
        trace={"interval": "100ms", "flow_vars": ["min_rtt", "bw", "mode"]},
    )
    tr = ccsim.run(scenario).traces
    # A 1500-byte packet over two 100 Mbit/s access links and the 10 Mbit/s bottleneck, its
    # 52-byte ACK back the same way.
    serialization = 1500 * 8 * (2 / 100e6 + 1 / 10e6) + 52 * 8 * (2 / 100e6 + 1 / 10e6)
    min_rtt = tr["flow.0.min_rtt_s"]
    assert np.isnan(min_rtt.iloc[0])
    floor = 0.020 + serialization
    assert ((min_rtt.dropna() >= floor - 1e-9) & (min_rtt.dropna() <= floor + 1500 * 8 / 10e6)).all(), list(min_rtt)
    # ProbeBW within a second, at a bandwidth estimate under the 10 Mbit/s of the link.
    late = tr["time_s"] >= 1.0
    assert (tr.loc[late, "flow.0.mode"] == 2).all()
    assert tr.loc[late, "flow.0.bw_bps"].between(8e6, 10e6).all()


def test_prague_alpha_stays_in_0_1_and_decays_once_the_marks_stop() -> None:
    # Flow 0 is application-limited at 3 Mbit/s; flow 1 fills the link until 3 s, and the L
    # queue marks both until then.
    scenario = ccsim.Scenario(
        simulation={"duration": "6s"},
        topology=dumbbell({"kind": "dualpi2"}, ["20ms", "20ms"]),
        flows=[
            {"pair": 0, "cc": "prague", "app": {"kind": "cbr", "rate": "3Mbps"}},
            {"pair": 1, "cc": "prague", "stop": "3s"},
        ],
        trace={"interval": "100ms", "flow_vars": ["alpha"], "queue_vars": ["marks"]},
    )
    tr = ccsim.run(scenario).traces
    alpha = tr["flow.0.alpha"]
    assert ((alpha > 0) & (alpha <= 1)).all()
    marks = tr["queue.A->B.marks"]
    end_of_marks = float(tr.loc[marks == marks.iloc[-1], "time_s"].iloc[0])
    assert 2.5 < end_of_marks <= 3.3, end_of_marks
    quiet = alpha[tr["time_s"] >= end_of_marks + 0.1]
    assert (quiet.diff().dropna() < 0).all(), "alpha falls round after round without marks"
    assert quiet.iloc[-1] < 0.01 < alpha[tr["time_s"] == end_of_marks].iloc[0]


def test_the_long_form_is_the_wide_table_with_entity_variable_and_unit(traced: ccsim.Result) -> None:
    long = traced.traces_long()
    assert list(long.columns) == ["time_s", "entity", "variable", "value", "unit"]
    wide = traced.traces
    assert len(long) == len(wide) * (len(wide.columns) - 1)
    units = {"bytes": "_bytes", "packets": "_pkts", "segments": "_segs", "s": "_s", "bit/s": "_bps"}
    back = long.assign(column=long["entity"] + "." + long["variable"] + long["unit"].map(units).fillna(""))
    rebuilt = back.pivot(index="time_s", columns="column", values="value")
    rebuilt = rebuilt.reset_index()[list(wide.columns)].rename_axis(columns=None)
    pd.testing.assert_frame_equal(rebuilt, wide, check_dtype=False)
    meaning = long.drop_duplicates(["entity", "variable", "unit"]).set_index(["entity", "variable", "unit"]).index
    for entry in [
        ("flow.0", "srtt", "s"),
        ("flow.0", "cwnd", "bytes"),
        ("flow.0", "pacing_rate", "bit/s"),
        ("flow.0", "cc_state", "state"),
        ("flow.0", "w_max", "segments"),
        ("queue.A->B", "len", "packets"),
        ("queue.A->B", "len", "bytes"),
        ("queue.A->B", "sojourn", "s"),
        ("queue.A->B", "drops", "count"),
        ("queue.A->B", "drop_next", "s"),
    ]:
        assert entry in meaning, entry
    rows = long[(long["entity"] == "flow.1") & (long["variable"] == "srtt")]
    np.testing.assert_array_equal(rows["time_s"], wide["time_s"])
    np.testing.assert_array_equal(rows["value"], wide["flow.1.srtt_s"])
    # Without traces: no rows, the same columns.
    untraced = ccsim.Scenario(
        simulation={"duration": "1s"}, topology=dumbbell({"kind": "droptail"}, ["20ms"]), flows=[{"pair": 0}]
    )
    empty = ccsim.run(untraced).traces_long()
    assert empty.empty and list(empty.columns) == ["time_s", "entity", "variable", "value", "unit"]


def test_a_column_is_split_by_what_the_registry_declares_or_by_its_suffix() -> None:
    from ccsim.results.result import split_trace_column

    suffixes = {"s": "_s", "bytes": "_bytes"}
    assert split_trace_column("flow.12.srtt_s", {}, suffixes) == ("flow.12", "srtt", "s")
    assert split_trace_column("queue.r.1->B.avg_bytes", {}, suffixes) == ("queue.r.1->B", "avg", "bytes")
    assert split_trace_column("queue.A->B.drop_prob", {"drop_prob": ("drop_prob", "probability")}, suffixes) == (
        "queue.A->B",
        "drop_prob",
        "probability",
    )
    assert split_trace_column("flow.0.retransmissions", {}, suffixes) == ("flow.0", "retransmissions", "")


BASE: dict[str, Any] = {
    "simulation": {"duration": "2s"},
    "topology": {
        "kind": "dumbbell",
        "bottleneck": {"rate": "10Mbps", "delay": "5ms"},
        "access": {"rate": "100Mbps"},
        "pairs": [{"delay": "2ms"}],
    },
    "flows": [{"pair": 0, "cc": "cubic"}, {"pair": 0, "transport": "udp", "app": {"kind": "cbr", "rate": "1Mbps"}}],
}


@pytest.mark.parametrize(
    ("trace", "field", "needles"),
    [
        (
            {"flow_vars": ["srtt", "alpha"]},
            "trace.flow_vars[1]",
            ["'alpha' is not a variable of cubic; cubic offers: w_max, k, w_est", "every TCP sender: cwnd, ssthresh"],
        ),
        ({"flow_vars": ["sojourn_time"]}, "trace.flow_vars[0]", ["unknown variable 'sojourn_time'", "srtt"]),
        ({"flow_vars": ["drop_prob"]}, "trace.flow_vars[0]", ["is a queue variable: put it in queue_vars"]),
        ({"flow_vars": ["srtt", "srtt"]}, "trace.flow_vars[1]", ["'srtt' is listed twice"]),
        (
            {"queue_vars": ["drops", "drop_prob"]},
            "trace.queue_vars[1]",
            ["'drop_prob' is not a variable of droptail", "every queue: len, sojourn, drops, marks"],
        ),
        ({"queue_vars": ["srtt"]}, "trace.queue_vars[0]", ["is a flow variable: put it in flow_vars"]),
    ],
)
def test_a_variable_that_no_traced_model_has_is_refused_with_what_the_models_offer(
    trace: dict[str, Any], field: str, needles: list[str]
) -> None:
    with pytest.raises(ScenarioError) as info:
        ccsim.Scenario.build({**BASE, "trace": {"interval": "10ms", **trace}})
    assert info.value.field == field
    for needle in needles:
        assert needle in info.value.message, info.value.message


def test_variables_need_an_interval_and_change_no_configuration_that_does_not_name_them() -> None:
    with pytest.raises(ScenarioError, match="needs interval"):
        ccsim.Scenario.build({**BASE, "trace": {"flow_vars": ["srtt"]}})
    plain = ccsim.compile(ccsim.Scenario.build({**BASE, "trace": {"interval": "10ms"}}))
    assert "flow_vars" not in plain["trace"] and "queue_vars" not in plain["trace"]
    named = ccsim.compile(ccsim.Scenario.build({**BASE, "trace": {"interval": "10ms", "flow_vars": ["srtt"]}}))
    assert named["trace"]["flow_vars"] == ["srtt"]


def test_the_listing_and_the_models_reference_show_each_models_variables() -> None:
    proc = run_cli("list", "queue", "codel")
    assert proc.returncode == 0, proc.stderr
    assert "drop_next" in proc.stdout and "drop_next_s; s" in proc.stdout
    proc = run_cli("list", "transport", "tcp")
    assert "pacing_rate_bps; bit/s" in proc.stdout
    text = models_markdown()
    assert "| drop_next | drop_next_s | s | time of the next drop" in text
    assert "| alpha | alpha | fraction |" in text
    assert "Every queue offers these variables" in text
