"""``Result`` and ``Scenario`` as a notebook shows them: a one-line repr in units (not raw
nanoseconds and bits per second) and a small HTML table; and the result tables with NaN, not
None in object columns, where a value is missing."""

from __future__ import annotations

import json
import math
import re

import ccsim
import pandas as pd
import pytest
from conftest import SCENARIOS


def small_scenario(**simulation: str) -> ccsim.Scenario:
    topology = ccsim.dumbbell(
        {"rate": "20Mbps", "delay": "5ms", "queue": {"kind": "fq_codel"}},
        access={"rate": "1Gbps"},
        pairs={"rtts": ["20ms", "80ms"]},
    )
    return ccsim.Scenario(
        description="Two CUBIC flows and a UDP flow",
        simulation={"duration": "3s", **simulation},
        topology=topology,
        flows=[
            {"pair": "all", "cc": "cubic"},
            {"pair": 0, "transport": "udp", "app": {"kind": "periodic", "period": "10ms", "size": "200B"}},
        ],
        trace={"messages": True},
    )


def test_the_scenario_repr_reads_in_units() -> None:
    scenario = small_scenario(warmup="1s")
    assert repr(scenario) == (
        "Scenario('Two CUBIC flows and a UDP flow', dumbbell of 6 nodes and 5 links, "
        "bottleneck A->B 20Mbps 5ms fq_codel, 3 flows (2 tcp cubic, 1 udp), 3s measured after 1s, seed 1)"
    )
    html = scenario._repr_html_()
    assert html.startswith("<table>") and "ccsim.Scenario" in html
    assert "<th style='text-align:left'>bottleneck</th><td style='text-align:left'>A-&gt;B 20Mbps" in html
    long = ccsim.load(SCENARIOS / "examples" / "rtt-fairness.toml")
    assert re.fullmatch(
        r"Scenario\('.{57}\.\.\.', dumbbell of 22 nodes .*, 20 flows \(20 tcp cubic\), .*\)", repr(long)
    )


@pytest.fixture(scope="module")
def result() -> ccsim.Result:
    return ccsim.run(small_scenario(warmup="1s"))


def test_the_result_repr_reads_in_units(result: ccsim.Result) -> None:
    text = repr(result)
    assert re.fullmatch(
        r"Result\(3 flows, 3 s simulated, [\d.]+ Mbit/s total goodput, Jain 0\.\d\d, bottleneck A->B fq_codel "
        r"[\d.]+ % utilized, [\d.]+ (ms|us) mean queueing delay, [\d.]+ % dropped, seed 1, [\d,]+ events in [\d.]+ s\)",
        text,
    ), text
    assert not re.search(r"\d{7,}", text.replace(",", "")[:-30])  # no raw ns or bit/s
    goodput = float(re.search(r"([\d.]+) Mbit/s", text).group(1))
    assert goodput == pytest.approx(result.flows["goodput_bps"].sum() / 1e6, rel=5e-3)
    html = result._repr_html_()
    assert html.startswith("<table>") and "ccsim.Result" in html
    for row in ("flows", "simulated", "total goodput", "Jain&#x27;s index", "bottleneck", "queueing delay", "losses"):
        assert f"<th style='text-align:left'>{row}</th>" in html, row
    assert "3 s, measured after 1 s" in html


def test_missing_values_are_nan_in_float_columns(result: ccsim.Result) -> None:
    flows = result.flows
    for frame in (flows, result.queues, result.control):
        # An object column holds strings only (pandas before 3 keeps strings as objects).
        mixed = [c for c in frame.columns if frame[c].dtype == object and not frame[c].map(type).eq(str).all()]
        assert not mixed, frame.dtypes
    udp = flows[flows["transport"] == "udp"].iloc[0]
    tcp = flows[flows["transport"] == "tcp"].iloc[0]
    for column in ("rtt_mean_s", "final_cwnd_bytes"):
        assert flows[column].dtype == "float64"
        assert math.isnan(udp[column]) and tcp[column] > 0
    assert math.isnan(tcp["message_delay_mean_s"]) and udp["message_delay_mean_s"] > 0
    assert flows["name"].dtype != object and flows["cc"].map(type).eq(str).all()  # strings stay strings
    assert result.messages is not None and result.messages["delay_s"].dtype == "float64"
    # Result.raw keeps the engine's None (JSON's null).
    raw_udp = next(f for f in result.raw["flows"] if f["transport"] == "udp")
    assert raw_udp["rtt_mean_s"] is None
    # Aggregates skip the missing values.
    assert flows["rtt_mean_s"].mean() == pytest.approx(flows["rtt_mean_s"].dropna().mean())


def test_a_loop_without_a_network_has_nan_flows() -> None:
    path = SCENARIOS / "examples" / "ncs_dumbbell.toml"
    scenario = ccsim.load(path, ["simulation.duration=2s", "simulation.warmup=0s"])
    data = scenario.model_dump(mode="json", exclude_none=True)
    for loop in data["control"]:
        loop.pop("plant_host"), loop.pop("controller_host")
    alone = ccsim.run(ccsim.from_dict(data))
    sensor = alone.control["sensor_flow"]
    assert sensor.dtype == "float64" and sensor.isna().all() and len(sensor) == 1
    assert "1 control loop, ITAE " in repr(alone)


def test_lost_messages_have_nan_delays_and_the_engine_results_keep_none() -> None:
    topology = ccsim.dumbbell(
        {"rate": "2Mbps", "delay": "5ms", "queue": {"kind": "droptail", "limit": "10p"}},
        access={"rate": "1Gbps"},
        pairs={"rtts": ["20ms"]},
    )
    scenario = ccsim.Scenario(
        simulation={"duration": "2s"},
        topology=topology,
        flows=[{"pair": 0, "transport": "udp", "app": {"kind": "periodic", "period": "1ms", "size": "500B"}}],
        trace={"messages": True},
    )
    result = ccsim.run(scenario)  # 4 Mbit/s of datagrams into 2 Mbit/s: about half are lost
    messages = result.messages
    assert messages is not None and messages["delay_s"].dtype == "float64"
    lost = messages["delay_s"].isna()
    assert 0 < lost.sum() < len(messages) and messages.loc[lost, "delivered_s"].isna().all()
    # engine_results gives the engine's form back, None where it wrote nothing: valid JSON.
    engine = result.engine_results()
    assert sum(v is None for v in engine["messages"]["delay_s"]) == lost.sum()
    json.dumps(engine, allow_nan=False)
    again = ccsim.Result(engine, result.config, 0.0)
    pd.testing.assert_frame_equal(again.messages, messages)
