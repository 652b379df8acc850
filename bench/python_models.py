"""`make bench`: what a model written in Python costs against its Rust twin.

The flagship dumbbell (4 NewReno flows, 10 Mbit/s) with CoDel at the bottleneck runs in four
variants: all Rust; NewReno in Python (examples/python_models/newreno.py); CoDel in Python
(codel.py); both. The twins give bit-identical results (tests/test_python_models.py), so the
variants do the same work and differ only in where the control law runs. The variants run in
turn, their order rotated each round, in this process (`ccsim.run`, the engine with the GIL
released but for the callbacks). Prints per variant the median wall time, and the extra time
per callback against the all-Rust run: per ACK that reaches `on_ack` for the congestion
control, per bottleneck packet (one `enqueue` and one `dequeue`) for the queue discipline.

    python bench/python_models.py [--runs 7] [--duration 60]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import ccsim

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "python_models"
FLAGSHIP = ROOT / "scenarios" / "flagship.toml"

CODEL = 'kind = "codel", limit = "81p"'
VARIANTS = {
    "rust": [f"topology.bottleneck.queue={{{CODEL}}}"],
    "python cc": [
        f"topology.bottleneck.queue={{{CODEL}}}",
        f'flows.cc={{python = "{EXAMPLES / "newreno.py"}:PyNewReno"}}',
    ],
    "python queue": [f'topology.bottleneck.queue={{python = "{EXAMPLES / "codel.py"}:PyCodel", limit = "81p"}}'],
    "python both": [
        f'topology.bottleneck.queue={{python = "{EXAMPLES / "codel.py"}:PyCodel", limit = "81p"}}',
        f'flows.cc={{python = "{EXAMPLES / "newreno.py"}:PyNewReno"}}',
    ],
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--duration", type=int, default=60, help="simulated seconds")
    args = parser.parse_args()
    scenarios = {
        name: ccsim.load(FLAGSHIP, [*sets, f"simulation.duration={args.duration}s", "simulation.warmup=1s"])
        for name, sets in VARIANTS.items()
    }
    ccsim.run(scenarios["python both"])  # warm: load the modules, fill caches
    times: dict[str, list[float]] = {name: [] for name in VARIANTS}
    results = {}
    names = list(VARIANTS)
    for r in range(args.runs):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            started = time.perf_counter()
            results[name] = ccsim.run(scenarios[name])
            times[name].append(time.perf_counter() - started)
    rust = results["rust"]
    # What the callbacks are called for, counted over the whole run (warm-up included).
    bottleneck = rust.queues.iloc[0]
    packets = int(bottleneck["arrivals"])
    acks = sum(int(q["departures"]) for _, q in rust.queues.iterrows() if q["name"] == "B->A")
    base = statistics.median(times["rust"])
    print(f"flagship, CoDel bottleneck, {args.duration} s simulated, median of {args.runs} runs alternated:")
    print(f"  {packets} bottleneck packets, {acks} ACKs on the return path")
    for name in names:
        med = statistics.median(times[name])
        line = f"  {name:13s} {med * 1e3:8.1f} ms  x{med / base:5.1f}"
        extra = med - base
        if name == "python cc":
            line += f"   +{extra / acks * 1e9:6.0f} ns per ACK"
        elif name == "python queue":
            line += f"   +{extra / packets * 1e9:6.0f} ns per bottleneck packet (enqueue + dequeue)"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
