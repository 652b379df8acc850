"""Runs that would never end: degenerate timers are refused before the run, and a run whose
events are dense in simulated time still answers Ctrl-C at once."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import PEAK_RSS_MIB, _cli_env, run_cli

# One flow on a 10 Mbit/s dumbbell; DURATION and FLOW (the flow's own lines) are filled in.
ONE_FLOW = """
[simulation]
duration = "DURATION"
[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "5ms" }
access = { rate = "100Mbps" }
pairs = [ { delay = "1ms" } ]
[[flows]]
pair = 0
cc = "newreno"
FLOW
"""


def one_flow(duration: str, flow: str) -> str:
    return ONE_FLOW.replace("DURATION", duration).replace("FLOW", flow)


@pytest.mark.parametrize(
    ("timers", "key"),
    [
        ('min_rto = "0ns", initial_rto = "0ns"', "flows[0].transport.min_rto"),
        ('initial_rto = "0ns"', "flows[0].transport.initial_rto"),
        ('max_rto = "0ns"', "flows[0].transport.max_rto"),
    ],
)
def test_a_retransmission_timer_of_zero_is_refused_before_the_run(write_toml, timers: str, key: str) -> None:
    proc = run_cli("run", str(write_toml(one_flow("10s", f'transport = {{ kind = "tcp", {timers} }}'))))
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert key in proc.stderr and ">= 1us" in proc.stderr


# Links of 9e18 bit/s and no delay: a packet takes no time anywhere, so a second of simulated
# time holds billions of events.
DENSE = """
[simulation]
duration = "1000s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "9000000000000000000bps", delay = "0s" }
access = { rate = "9000000000000000000bps", delay = "0s" }
pairs = [ { delay = "0s" } ]
[[flows]]
pair = 0
cc = "newreno"
"""


def test_ctrl_c_is_honoured_within_a_second_however_dense_the_events(write_toml) -> None:
    path = write_toml(DENSE)
    # The default action for SIGINT, as a shell gives it (see conftest.interrupt_cli).
    proc = subprocess.Popen(
        [sys.executable, "-m", "ccsim", "run", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_cli_env(),
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    time.sleep(3)
    assert proc.poll() is None, "the run ended by itself"
    sent = time.perf_counter()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    waited = time.perf_counter() - sent
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    assert waited < 1.0


# 100 Mbit/s of messages into a 10 Mbit/s TCP path.
OVERDRIVEN = 'app = { kind = "cbr", rate = "100Mbps" }'


def _peak_rss_mib(path) -> float:
    code = f"import sys, ccsim; ccsim.run(sys.argv[1]); print({PEAK_RSS_MIB})"
    proc = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, env=_cli_env(), timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    return float(proc.stdout)


def test_an_application_that_offers_more_than_its_path_carries_holds_a_bounded_backlog(write_toml) -> None:
    # 100 Mbit/s of messages into a 10 Mbit/s TCP path: the send buffer (4 MiB by default)
    # fills and then refuses nine messages in ten, counted as lost at the sender.
    import ccsim

    flow = ccsim.run(write_toml(one_flow("20s", OVERDRIVEN), "a.toml")).flows.iloc[0]
    assert flow["messages_lost_at_sender"] > 0.85 * flow["messages_generated"]
    assert flow["goodput_bps"] > 9e6
    # Memory does not grow with simulated time: 600 s peaks where 10 s does.
    short = _peak_rss_mib(write_toml(one_flow("10s", OVERDRIVEN), "short.toml"))
    long = _peak_rss_mib(write_toml(one_flow("600s", OVERDRIVEN), "long.toml"))
    assert long < short + 16, (short, long)


def _chain(tmp_path: Path, routers: int) -> Path:
    """Two hosts at the ends of a line of `routers` routers, one TCP flow between them."""
    hops = ", ".join(['{ rate = "10Mbps", delay = "1us" }'] * routers)
    path = tmp_path / f"chain{routers}.toml"
    path.write_text(f"""
[simulation]
duration = "1s"
[topology]
kind = "daisy_chain"
hops = [ {hops} ]
access = {{ rate = "100Mbps" }}
hosts = [ {{ name = "a", router = 0 }}, {{ name = "b", router = {routers} }} ]
[[flows]]
src = "a"
dst = "b"
cc = "newreno"
""")
    return path


def test_a_long_chain_of_routers_needs_routes_for_the_flows_ends_only(tmp_path: Path) -> None:
    # 6 000 routers in a line: next-hop tables for every pair of nodes would take
    # 6 000 x 6 002 x 4 B = 137 MiB more than tables for the two hosts that receive.
    import ccsim
    from ccsim.scenario import limits

    path = _chain(tmp_path, 6000)
    peak = _peak_rss_mib(path)
    baseline = _peak_rss_mib(_chain(tmp_path, 10))
    assert peak < baseline + 100, (baseline, peak)
    estimate = limits.estimate(ccsim.load(str(path)).to_config()).total / 2**20
    assert peak / 2 < estimate < 2 * peak, (estimate, peak)
