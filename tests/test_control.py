"""Networked control loops (``[[control]]``, the ANCE paper's sec. 4): the engine's loop against
an independent discretization (scipy), the scores against the traces, the scenario schema and
the files a run writes."""

from __future__ import annotations

import math

import ccsim
import numpy as np
import pandas as pd
import pytest
import scipy.signal as sg
from ccsim.scenario.schema import load
from conftest import SCENARIOS

EXAMPLE = SCENARIOS / "examples" / "ncs_dumbbell.toml"
H_NS = 14_000_000
H = H_NS / 1e9


def ideal_scenario(duration: str = "10s", warmup: str = "0s", **control: object) -> dict:
    """One host, no traffic, an ideal (network-free) loop with the given [[control]] keys."""
    return {
        "simulation": {"duration": duration, "warmup": warmup},
        "topology": {"kind": "explicit", "nodes": [{"name": "h", "kind": "host"}], "links": []},
        "control": [control],
    }


def square(k: np.ndarray, h_ns: int, low: float = 1.0, high: float = 2.0, period_ns: int = 2 * 10**9) -> np.ndarray:
    """The reference at t_k = k h: high on the first half of each period (integer time, as the engine)."""
    return np.where((k * h_ns) % period_ns < period_ns // 2, high, low)


def scipy_loop(num, den, kp, ki, kd, backward, r, h):
    """The sampled-data loop from scipy alone: ZOH plant (cont2discrete), discrete PID with a
    forward-Euler integral, simulated with dlsim. Returns (y_k, u_k)."""
    a, b, c, d = sg.tf2ss(num, den)
    assert np.allclose(d, 0), "strictly proper plants only"
    ad, bd, cd, _, _ = sg.cont2discrete((a, b, c, d), h, method="zoh")
    n = ad.shape[0]
    if backward:
        # Backward Euler (I_k = I_{k-1} + h e_k) is forward Euler with Kp + Ki h.
        kp = kp + ki * h
    # State z = [x, I, e_prev]; e = r - C x; u = kp e + ki I + kd (e - e_prev) / h.
    ku_z = np.hstack([-(kp + kd / h) * cd, [[ki, -kd / h]]])
    ku_r = kp + kd / h
    acl = np.zeros((n + 2, n + 2))
    acl[:n, :] = np.hstack([ad, np.zeros((n, 2))]) + bd @ ku_z
    acl[n, :] = np.hstack([-h * cd[0], [1.0, 0.0]])
    acl[n + 1, :] = np.hstack([-cd[0], [0.0, 0.0]])
    bcl = np.vstack([bd * ku_r, [[h]], [[1.0]]])
    ccl = np.vstack([np.hstack([cd, [[0.0, 0.0]]]), ku_z])
    dcl = np.array([[0.0], [ku_r]])
    x0 = np.zeros(n + 2)
    x0[n + 1] = r[0]  # no derivative kick at the first sample: e_{-1} = e_0 = r_0 (plant at rest)
    _, out, _ = sg.dlsim((acl, bcl, ccl, dcl, h), r, x0=x0)
    return out[:, 0], out[:, 1]


CASES = {
    "motor_pi_forward": ([36.3], [1, 36.17, 0], {"kind": "pid"}, (11.86, 47.45, 0.0, False)),
    "motor_pi_backward": ([36.3], [1, 36.17, 0], {"kind": "pid", "backward": True}, (11.86, 47.45, 0.0, True)),
    "third_order_pid": (
        [2.0, 3.0],
        [1.0, 4.0, 5.0, 2.0],
        {"kind": "pid", "kp": 2.0, "ki": 1.5, "kd": 0.05},
        (2.0, 1.5, 0.05, False),
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_ideal_loop_matches_an_independent_zoh_discretization(case: str) -> None:
    num, den, controller, (kp, ki, kd, backward) = CASES[case]
    result = ccsim.run(ideal_scenario(plant={"num": num, "den": den}, controller=controller))
    tr = result.control_traces
    k = np.arange(len(tr))
    assert len(tr) == 10_000 // 14 + 1
    np.testing.assert_allclose(tr["time_s"], k * H, rtol=0, atol=1e-12)
    r = square(k, H_NS)
    np.testing.assert_array_equal(tr["reference"], r)
    y, u = scipy_loop(num, den, kp, ki, kd, backward, r, H)
    # The loop's output is a sizable signal (it tracks 1..2, u swings by tens): 1e-9 absolute.
    assert np.abs(tr["output"] - y).max() < 1e-9, np.abs(tr["output"] - y).max()
    assert np.abs(tr["control"] - u).max() < 1e-9, np.abs(tr["control"] - u).max()
    assert np.abs(y).max() > 0.5 and np.abs(u).max() > 1.0  # a loop that really moves
    np.testing.assert_allclose(tr["error"], r - tr["output"], atol=1e-12)


def test_per_sample_scores_are_the_sums_over_the_trace_and_the_integral_is_h_times_smaller() -> None:
    result = ccsim.run(ideal_scenario(duration="30s"))
    row = result.control.iloc[0]
    tr = result.control_traces
    assert row["itae_sum"] == pytest.approx(float((tr["time_s"] * tr["error"].abs()).sum()), rel=1e-12)
    assert row["iae_sum"] == pytest.approx(float(tr["error"].abs().sum()), rel=1e-12)
    assert row["ise_sum"] == pytest.approx(float((tr["error"] ** 2).sum()), rel=1e-12)
    assert row["samples_scored"] == len(tr) == 30_000 // 14 + 1
    # The README's remark on the 8727 threshold: the integral is about h times the sum (1/71).
    assert 0.8 < row["itae_sum"] * H / row["itae"] < 1.25
    # An ideal loop loses nothing and acts at the sampling instant.
    assert (row["samples_lost"], row["controls_lost"], row["actuation_delay_max_s"]) == (0, 0, 0.0)
    assert row["sensor_flow"] is None or math.isnan(row["sensor_flow"])


def test_scores_exclude_the_warm_up() -> None:
    full = ccsim.run(ideal_scenario(duration="6s"))
    late = ccsim.run(ideal_scenario(duration="6s", warmup="3s"))
    tr = full.control_traces
    after = tr[tr["time_s"] >= 3.0]
    row = late.control.iloc[0]
    assert row["itae_sum"] == pytest.approx(float((after["time_s"] * after["error"].abs()).sum()), rel=1e-12)
    assert row["samples_scored"] == len(after)
    assert 0 < row["itae"] < full.control.iloc[0]["itae"]
    # Same loop either way: the warm-up only decides what is scored.
    np.testing.assert_array_equal(late.control_traces["output"], tr["output"])


def test_the_example_shares_the_bottleneck_with_tcp_and_pays_for_it() -> None:
    scenario = load(EXAMPLE, ["simulation.duration=6s", "topology.bottleneck.rate=5Mbps"])
    config = scenario.to_config()
    names = [f["name"] for f in config["flows"]]
    assert names == ["A", "B", "C", "motor.sensor", "motor.actuator"]
    nodes = [n["name"] for n in config["nodes"]]
    sensor, actuator = config["flows"][3], config["flows"][4]
    assert (nodes[sensor["src"]], nodes[sensor["dst"]]) == ("s3", "r3")
    assert (nodes[actuator["src"]], nodes[actuator["dst"]]) == ("r3", "s3")
    assert sensor["app"] == {"kind": "ncs", "params": {"size": 20}}
    assert config["jain_flows"] == [0, 1, 2]  # Jain's index is about the TCP flows
    assert config["control"][0]["sensor_flow"] == 3 and config["control"][0]["actuator_flow"] == 4

    shared = ccsim.run(scenario)
    alone = ccsim.run(
        EXAMPLE,
        overrides=[
            "simulation.duration=6s",
            "topology.bottleneck.rate=5Mbps",
            "flows[0].stop=1ms",
            "flows[1].stop=1ms",
            "flows[2].stop=1ms",
        ],
    )
    ideal = ccsim.run(ideal_scenario(duration="6s"))
    itae = {name: r.control.iloc[0]["itae"] for name, r in (("shared", shared), ("alone", alone), ("ideal", ideal))}
    delay = {name: r.control.iloc[0]["actuation_delay_mean_s"] for name, r in (("shared", shared), ("alone", alone))}
    print(itae, delay)
    # Queueing behind the TCP flows delays the samples, and the loop pays for every millisecond.
    assert delay["shared"] > delay["alone"] + 0.005
    assert itae["shared"] > itae["alone"] > itae["ideal"]
    # The messages are the flows' messages: every sample sent is accounted for.
    flows = shared.flows.set_index("name")
    row = shared.control.iloc[0]
    assert flows.loc["motor.sensor", "messages_generated"] == row["samples"]
    assert flows.loc["motor.sensor", "messages_lost_network"] == row["samples_lost"]
    assert flows.loc["motor.actuator", "messages_generated"] == row["controls"]


def test_results_write_control_tables_and_a_plot(tmp_path) -> None:
    result = ccsim.run(EXAMPLE, overrides=["simulation.duration=3s"])
    assert list(result.control["name"]) == ["motor"]
    assert set(result.control_traces.columns) == {"loop", "time_s", "reference", "output", "control", "error"}
    written = {p.name for p in result.write(tmp_path)}
    assert {"control.parquet", "control_traces.parquet", "control.png"} <= written
    back = pd.read_parquet(tmp_path / "control.parquet")
    assert back.loc[0, "itae_sum"] == result.control.loc[0, "itae_sum"]
    assert "control_traces" not in result.summary and result.summary["control"][0]["name"] == "motor"


def test_runs_without_loops_have_an_empty_control_table() -> None:
    result = ccsim.run(SCENARIOS / "flagship.toml", overrides=["simulation.duration=2s", "simulation.warmup=0s"])
    assert result.control.empty and "itae" in result.control.columns
    assert result.control_traces is None


BASE = """
[simulation]
duration = "5s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "5ms" }
access = { rate = "100Mbps" }
pairs = [ { delay = "1ms" }, { delay = "1ms" } ]
"""


@pytest.mark.parametrize(
    ("table", "field", "needle"),
    [
        ('plant_host = "s0"', "control[0].controller_host", "both"),
        ('plant_host = "s0"\ncontroller_host = "x9"', "control[0].controller_host", "no node named 'x9'"),
        ('plant_host = "A"\ncontroller_host = "r0"', "control[0].plant_host", "router"),
        ('plant_host = "s0"\ncontroller_host = "s0"', "control[0].controller_host", "same host"),
        ("plant = { num = [1, 2, 3], den = [1, 2] }", "control[0].plant.num", "improper"),
        ("plant = { den = [5] }", "control[0].plant.den", "degree"),
        ('controller = { kind = "pid", kq = 1 }', "control[0].controller.kq", "allowed: kp, ki, kd, backward"),
        ('reference = "sine"', "control[0].reference", "registered: constant, square, step"),
        ('reference = { kind = "square", period = "fast" }', "control[0].reference.period", ""),
        ('sampling_period = "0s"', "control[0].sampling_period", "longer than 0s"),
        ('start = "9s"', "control[0].start", "after the end"),
        ("substeps = 0", "control[0].substeps", ""),
        ("gain = 3", "control[0].gain", "allowed"),
    ],
)
def test_bad_control_tables_name_the_field(write_toml, table: str, field: str, needle: str) -> None:
    with pytest.raises(ccsim.ScenarioError) as info:
        load(write_toml(BASE + "[[control]]\n" + table + "\n"))
    assert info.value.field == field, info.value
    assert needle in info.value.message


def test_control_defaults_are_the_papers_loop(write_toml) -> None:
    config = load(write_toml(BASE + '[[control]]\nplant_host = "s1"\ncontroller_host = "r1"\n')).to_config()
    (loop,) = config["control"]
    assert loop["plant_num"] == [36.3] and loop["plant_den"] == [1.0, 36.17, 0.0]
    assert loop["period_ns"] == H_NS and loop["controller"]["kind"] == "pid" and loop["reference"]["kind"] == "square"
    assert [f["app"]["params"]["size"] for f in config["flows"]] == [48, 48]
    assert all(f["transport"]["kind"] == "udp" for f in config["flows"])
    assert [f["name"] for f in config["flows"]] == ["control0.sensor", "control0.actuator"]


def test_ccsim_list_shows_controllers_and_references() -> None:
    from conftest import run_cli

    out = run_cli("list")
    assert out.returncode == 0, out.stderr
    assert "Controllers (controller)" in out.stdout and "Reference signals (reference)" in out.stdout
    assert "ncs" in out.stdout


def test_a_dumped_control_table_loads_back_to_the_same_configuration() -> None:
    scenario = load(EXAMPLE)
    dumped = scenario.model_dump(exclude_none=True)
    assert dumped["control"][0]["sampling_period"] == "14ms"
    assert dumped["control"][0]["reference"]["period"] == "2s"
    assert ccsim.from_dict(dumped).to_config() == scenario.to_config()


def test_overrides_reach_control_tables(write_toml) -> None:
    path = write_toml(BASE + '[[control]]\nplant_host = "s1"\ncontroller_host = "r1"\ncontroller = "pid"\n')
    config = load(path, ["control[0].sampling_period=10ms", "control[0].controller.kp=3"]).to_config()
    assert config["control"][0]["period_ns"] == 10_000_000
    assert config["control"][0]["controller"] == {"kind": "pid", "params": {"kp": 3.0}}
