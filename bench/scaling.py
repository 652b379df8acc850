"""`make bench-scaling`: how the engine's speed scales with the number of flows and the link rate.

The benchmark dumbbell (docs/performance.md, bench/bench.py), varied along two axes:
flows N = 9, 90, 900, 9000 at the 100 Mbit/s bottleneck, and bottleneck rates 10 Mbit/s ..
10 Gbit/s at 90 flows (access links at 10x the bottleneck rate, at least 1 Gbit/s). Runs are
shorter than the benchmark's 30 s (default 10 s, statistics from 3 s) so the whole table takes
minutes. Each point is one fresh process of the release binary `ccsim-bench` (median of
`--runs`); printed as a Markdown table for docs/performance.md, with the time to build the
simulation from its configuration (which must grow no faster than the network) beside the
run's wall time. Not run by CI.

    python bench/scaling.py [--duration 10] [--runs 1] [--flows 9,90,900,9000]
                            [--rates 10Mbps,100Mbps,1Gbps,10Gbps] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

import ccsim

import bench  # bench/bench.py: the benchmark dumbbell

RATE_BPS = {"10Mbps": 10e6, "100Mbps": 100e6, "1Gbps": 1e9, "10Gbps": 10e9}


def scenario(n: int, rate: str, duration_s: float, seed: int = 1) -> ccsim.Scenario:
    """bench/bench.py's dumbbell with `n` flows, bottleneck rate `rate` (access links at 10x,
    at least 1 Gbit/s) and statistics from 30 % of the run on."""
    access = "1Gbps" if RATE_BPS[rate] <= 1e8 else f"{int(RATE_BPS[rate] * 10 / 1e9)}Gbps"
    return bench.scenario(n, seed, rate=rate, access=access, duration_s=duration_s, warmup_s=duration_s * 0.3)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=10.0, help="simulated seconds per run")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--flows", default="9,90,900,9000")
    parser.add_argument("--rates", default="10Mbps,100Mbps,1Gbps,10Gbps")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args()
    if not bench.BINARY.exists():
        print(f"scaling: {bench.BINARY} missing; run `make bench-scaling`", file=sys.stderr)
        return 2
    points = [(int(n), "100Mbps") for n in args.flows.split(",") if n]
    points += [(90, r) for r in args.rates.split(",") if r and (90, r) not in points]
    rows = []
    print(
        "| flows | bottleneck | simulated (s) | build (s) | wall (s) | events | M events/s | M bottleneck pkts/s | peak RSS (MiB) | utilization |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for n, rate in points:
            path = Path(tmp) / f"scaling-{n}-{rate}.json"
            path.write_text(json.dumps(ccsim.compile(scenario(n, rate, args.duration))))
            runs = [bench.measure(path) for _ in range(args.runs)]
            med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            rows.append({"flows": n, "rate": rate, "duration_s": args.duration, **med})
            print(
                f"| {n} | {rate} | {args.duration:g} | {med['build_s']:.3f} | {med['wall_s']:.2f} | {med['events']:,.0f} | "
                f"{med['events_per_s'] / 1e6:.2f} | {med['bottleneck_pkts_per_s'] / 1e6:.3f} | "
                f"{med['peak_rss_mb']:.0f} | {med['utilization']:.3f} |",
                flush=True,
            )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
