"""Issue 7's last random elements: per-packet processing jitter at nodes (net/processing.rs)
and random transfer sizes (app/transfer.rs). Oracles: the uniform and exponential tail
probabilities of one packet's delay, estimated by ``ccsim smc`` inside their Clopper-Pearson
intervals; scipy's Pareto distribution for the sizes; the scenario errors with their fields."""

from __future__ import annotations

import copy
import math

import ccsim
import numpy as np
import pytest
from ccsim.errors import ScenarioError
from ccsim.experiments import smc
from ccsim.scenario.schema import read_toml
from conftest import run_cli
from scipy import stats

DELAY_US, JITTER_US = 20.0, 50.0

# One 100 B datagram h1 -> R -> h2; the router R has the processing stage.
ONE_PACKET = """
[simulation]
duration = "1s"

[topology]
kind = "explicit"
nodes = [ {{ name = "h1", kind = "host" }},
          {{ name = "R", kind = "router"{processing} }},
          {{ name = "h2", kind = "host" }} ]
links = [ {{ a = "h1", b = "R", rate = "10Mbps", delay = "1ms" }},
          {{ a = "R", b = "h2", rate = "10Mbps", delay = "1ms" }} ]

[[flows]]
src = "h1"
dst = "h2"
transport = "udp"
app = {{ kind = "transfer", size = "100B" }}
"""


def one_packet(processing: str = "") -> str:
    return ONE_PACKET.format(processing=f", processing = {processing}" if processing else "")


def base_delay_s(write_toml) -> float:
    """The datagram's one-way delay without processing (serialization + propagation, twice)."""
    r = ccsim.run(write_toml(one_packet(), "base.toml"))
    return float(r.flows.delay_max_s[0])


# --- processing jitter ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("distribution", "x_us", "truth"),
    [
        # U[0, 50 us]: Pr[X > 30 us] = 1 - 30/50.
        ("uniform", 30.0, 1 - 30.0 / JITTER_US),
        # Exponential of mean 50 us: Pr[X > 40 us] = e^(-40/50).
        ("exponential", 40.0, math.exp(-40.0 / JITTER_US)),
    ],
)
def test_smc_estimates_the_jitter_tail_probability_inside_its_interval(write_toml, distribution, x_us, truth) -> None:
    base = base_delay_s(write_toml)
    path = write_toml(
        one_packet(f'{{ delay = "{DELAY_US:g}us", jitter = "{JITTER_US:g}us", distribution = "{distribution}" }}')
    )
    threshold = base + (DELAY_US + x_us) * 1e-6
    r = smc.check(path, f"Pr[<=1](<> flows.0.delay_max_s > {threshold!r})", runs=400, seed=7, jobs=2)
    assert r.random_elements == [f"random processing jitter at R ({distribution}, {JITTER_US:g} us)"]
    lo, hi = r.interval
    assert lo <= truth <= hi, (r.estimate, r.interval, truth)
    # And the delay never leaves [base + delay, base + delay + jitter] for the uniform: the
    # probability of exceeding the upper end is estimated as 0.
    if distribution == "uniform":
        top = base + (DELAY_US + JITTER_US) * 1e-6 + 1e-9
        r = smc.check(path, f"Pr[<=1](<> flows.0.delay_max_s > {top!r})", runs=50, seed=7, jobs=1)
        assert r.estimate == 0.0


def test_cli_accepts_a_scenario_whose_only_random_element_is_processing_jitter(write_toml) -> None:
    path = write_toml(one_packet('{ jitter = "50us" }'))
    proc = run_cli(
        "smc",
        str(path),
        "--query",
        "Pr[<=1](<> flows.0.delay_max_s > 0.0021)",
        "--runs",
        "20",
        "--jobs",
        "1",
        "--quiet",
    )
    assert proc.returncode == 0, proc.stderr
    # A fixed processing delay is not random: refused as deterministic.
    path = write_toml(one_packet('{ delay = "50us" }'), "fixed.toml")
    proc = run_cli("smc", str(path), "--query", "Pr[<=1](<> flows.0.delay_max_s > 0.0021)", "--jobs", "1")
    assert proc.returncode == 2 and "no random element" in proc.stderr


def test_topology_helpers_give_processing_to_their_routers_and_hosts() -> None:
    scenario = ccsim.from_dict(
        {
            "simulation": {"duration": "1s"},
            "topology": {
                "kind": "star",
                "sensors": 2,
                "bottleneck": {"rate": "1Mbps"},
                "access": {"rate": "10Mbps"},
                "router_processing": {"jitter": "10us", "distribution": "exponential"},
                "host_processing": {"delay": "2us"},
            },
        }
    )
    nodes = {n["name"]: n.get("processing") for n in scenario.to_config()["nodes"]}
    assert nodes == {
        "sensor0": {"delay": 2000},
        "sensor1": {"delay": 2000},
        "controller": {"delay": 2000},
        "router": {"jitter": 10000, "distribution": "exponential"},
    }
    assert smc.random_elements(scenario) == ["random processing jitter at router (exponential, 10 us)"]


@pytest.mark.parametrize(
    ("processing", "field", "needle"),
    [
        ({"jitter": "-5us"}, "topology.nodes[1].processing.jitter", "negative"),
        (
            {"jitter": "5us", "distribution": "normal"},
            "topology.nodes[1].processing.distribution",
            "one of: uniform, exponential",
        ),
        ({"lag": "5us"}, "topology.nodes[1].processing.lag", "allowed: delay, jitter, distribution"),
    ],
)
def test_bad_processing_names_its_field_and_exits_2(write_toml, processing, field, needle) -> None:
    data = read_toml(write_toml(one_packet()))
    data["topology"]["nodes"][1]["processing"] = processing
    with pytest.raises(ScenarioError) as info:
        ccsim.from_dict(data)
    assert info.value.field == field and needle in info.value.message
    text = ", ".join(f'{k} = "{v}"' for k, v in processing.items())
    path = write_toml(one_packet(f"{{ {text} }}"), "bad.toml")
    proc = run_cli("validate", str(path))
    assert proc.returncode == 2 and field in proc.stderr and "Traceback" not in proc.stderr


# --- random transfer sizes -----------------------------------------------------------------------------

MEAN, SHAPE, FLOWS = 20_000, 2.5, 100


def transfers(distribution: str = "pareto", shape: float = SHAPE) -> dict:
    return {
        "simulation": {"duration": "20s"},
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {"rate": "100Mbps", "delay": "1ms"},
            "access": {"rate": "1Gbps"},
            "pairs": [{"delay": "1ms"}],
        },
        "flows": [
            {
                "pair": 0,
                "count": FLOWS,
                "transport": "tcp",
                "app": {"kind": "transfer", "size": f"{MEAN}B", "distribution": distribution, "shape": shape},
            }
        ],
    }


def sizes(seed: int) -> np.ndarray:
    """Each completed transfer's size: the bytes its receiver got (one message each)."""
    flows = ccsim.run(ccsim.from_dict(transfers()), seed=seed).flows
    assert (flows.messages_received == 1).all(), "every transfer completes"
    return flows.bytes_delivered.to_numpy(float)


def test_pareto_sizes_have_their_mean_and_distribution_across_seeds() -> None:
    x = np.concatenate([sizes(seed) for seed in (1, 2, 3)])
    # Mean: shape 2.5 has sd = mean / sqrt(a (a - 2)) = 0.894 mean; 300 sizes, 5 standard errors.
    se = MEAN / math.sqrt(SHAPE * (SHAPE - 2)) / math.sqrt(len(x))
    assert abs(x.mean() - MEAN) < 5 * se, x.mean()
    # The whole distribution: scipy's Pareto of the same shape and scale x_m = mean (a-1)/a.
    x_m = MEAN * (SHAPE - 1) / SHAPE
    assert x.min() >= x_m - 0.5
    assert stats.kstest(x, stats.pareto(b=SHAPE, scale=x_m).cdf).pvalue > 0.001


def test_same_seed_same_sizes_and_the_sizes_are_a_random_element() -> None:
    assert np.array_equal(sizes(4), sizes(4))
    assert not np.array_equal(sizes(4), sizes(5))
    scenario = ccsim.from_dict(transfers("exponential"))
    assert smc.random_elements(scenario)[0] == "flows[0].app transfer (random sizes, distribution exponential)"
    assert smc.random_elements(ccsim.from_dict(transfers("fixed"))) == []


@pytest.mark.parametrize(
    ("app", "field", "needle"),
    [
        ({"distribution": "pareto", "shape": 1.0}, "flows[0].app.shape", "shape > 1"),
        ({"distribution": "pareto", "shape": 0.8}, "flows[0].app.shape", "shape > 1"),
        ({"distribution": "lognormal"}, "flows[0].app.distribution", "one of: fixed, uniform, exponential, pareto"),
        ({"distribution": "uniform", "size_min": "30kB"}, "flows[0].app.size_min", "at most size"),
    ],
)
def test_bad_size_distributions_name_their_field_and_exit_2(write_toml, app, field, needle) -> None:
    data = transfers()
    data["flows"][0]["app"] = {"kind": "transfer", "size": "20kB", **app}
    with pytest.raises(ScenarioError) as info:
        ccsim.from_dict(copy.deepcopy(data))
    assert info.value.field == field and needle in info.value.message
    keys = ", ".join(f"{k} = {v!r}".replace("'", '"') for k, v in app.items())
    text = f"""
[simulation]
duration = "1s"
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "10Mbps" }}
access = {{ rate = "100Mbps" }}
pairs = [ {{ delay = "1ms" }} ]
[[flows]]
pair = 0
app = {{ kind = "transfer", size = "20kB", {keys} }}
"""
    proc = run_cli("run", str(write_toml(text)))
    assert proc.returncode == 2 and field in proc.stderr and "Traceback" not in proc.stderr


def test_the_engine_names_the_field_of_a_pareto_without_mean_too() -> None:
    # A core configuration written by hand (no Python validation) is refused by the engine.
    import json

    from ccsim import _core

    config = ccsim.from_dict(transfers()).to_config()
    config["flows"][3]["app"]["params"]["shape"] = 1.0
    with pytest.raises(_core.ConfigError) as info:
        _core.Simulation(json.dumps(config))
    assert info.value.field == "flows[3].app.shape"
