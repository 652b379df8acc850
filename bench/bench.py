"""`make bench`: the benchmark dumbbell (docs/performance.md, "Method"), run by the engine alone.

Each measurement is a fresh process of the release binary `ccsim-bench` (so peak RSS is the
run's own), fed the core configuration that the Python front compiles from the scenario
below. Prints, per flow count, the median over the runs of: wall time, events per wall second,
bottleneck packets per wall second (with the lowest and highest run beside it: the runs use
one seed, so their spread is the machine's) and peak memory, plus the run's metrics.

With `--against OTHER` (another build of `ccsim-bench`, e.g. from an older commit), the two
binaries run alternately, in turn first, and each round's ratio of bottleneck packets per
second is taken: on a shared machine whose speed drifts by tens of percent within minutes, the
median of those ratios compares versions where absolute figures cannot. The ratio of the two
best rates is printed too: a series can be lucky for one build, the best run rarely is.

    python bench/bench.py [--flows 10,90,900] [--runs 5] [--json OUT] [--against OTHER]
        [--duration 30 --warmup 10] [--write-configs DIR]

`--duration` and `--warmup` (seconds) shorten or lengthen the run, and `--write-configs DIR`
writes the core configurations (`dumbbell-N.json`) instead of running them: the check runs of
docs/performance.md ("Method") are these (s10: 10 flows, 5 s, warm-up 2.5 s; s900: 900 flows,
3 s, 1.5 s; full10 and full900: the benchmark's 30 s; long10: 10 flows, 90 s, 10 s), fed to
`target/release/ccsim-bench` directly.

`--instructions` runs each configuration once under callgrind instead and prints the
instructions executed inside the event loop (`Simulation::advance`) per event: a
repeatable figure where wall time is not, which shows a change of code generation (an
inlining lost to an unrelated change, say) that the machine's noise would hide. Pair it with
`--duration 5 --warmup 2.5` for s10 and `--duration 3 --warmup 1.5` for s900. It needs
valgrind.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import ccsim
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
BINARY = ROOT / "target" / "release" / "ccsim-bench"


# The benchmark's TCP: NewReno (the flows' `cc`) with SACK, 1448-byte MSS with timestamps,
# delayed ACKs every second segment, minimum RTO 1 s, 4 MiB windows.
TCP = {"kind": "tcp", "mss": "1448B", "delack_count": 2, "min_rto": "1s", "rwnd": "4MiB", "sack": True}


def scenario(
    n: int,
    seed: int,
    rate: str = "100Mbps",
    access: str = "1Gbps",
    duration_s: float = 30,
    warmup_s: float = 10,
    pacing: bool = False,
    cc: str = "newreno",
) -> ccsim.Scenario:
    """The benchmark dumbbell: 100 Mbit/s 2 ms bottleneck with a 900-packet DropTail at A, 1 Gbit/s
    access links whose one-way delay d_i = 1 + 48 i / (N - 1) ms gives base RTTs of 8..200 ms,
    NewReno+SACK bulk flows (1448 B MSS with timestamps: 1500 B packets), delayed ACKs every
    second segment, minimum RTO 1 s, 4 MiB windows, starts uniform in [0, 3) s, 30 s with
    statistics from 10 s on. Every other queue is DropTail 1000 packets (never drops here).
    `bench/scaling.py` varies the rates and shortens the run through the keyword arguments;
    ``pacing`` paces every flow (Linux's default rate, or the algorithm's), ``cc`` replaces
    NewReno (BBR paces whatever ``pacing`` says)."""
    delays = [f"{round((1 + 48 * i / (n - 1)) * 1e6)}ns" for i in range(n)]
    return ccsim.from_dict(
        {
            "simulation": {"duration": f"{duration_s}s", "warmup": f"{warmup_s}s", "seed": seed},
            "topology": {
                "kind": "dumbbell",
                "bottleneck": {"rate": rate, "delay": "2ms", "queue": {"kind": "droptail", "limit": "900p"}},
                "access": {"rate": access, "queue": {"kind": "droptail", "limit": "1000p"}},
                "pairs": [{"delay": d} for d in delays],
            },
            "flows": [
                {
                    "pair": i,
                    "transport": {**TCP, "pacing": True} if pacing else TCP,
                    "cc": cc,
                    "app": {"kind": "bulk"},
                    "start": "0s..3s",
                }
                for i in range(n)
            ],
            "trace": {"interval": "10ms", "queues": ["A->B"], "cwnd": False},
        }
    )


def measure(config_path: Path, binary: Path = BINARY) -> dict:
    out = subprocess.run([str(binary), str(config_path)], check=True, capture_output=True, text=True)
    raw = json.loads(out.stdout)
    res = raw["results"]
    q = next(q for q in res["queues"] if q["name"] == "A->B")
    times = np.asarray(res["traces"]["time_s"])
    sampled = np.asarray(res["traces"]["queue.A->B.len_pkts"])[times >= res["warmup_s"]]
    return {
        "wall_s": raw["wall_s"],
        "build_s": raw["build_s"],
        "events": raw["events"],
        "bottleneck_packets": raw["bottleneck_packets"],
        "peak_rss_mb": raw["peak_rss_bytes"] / 2**20,
        "events_per_s": raw["events"] / raw["wall_s"],
        "bottleneck_pkts_per_s": raw["bottleneck_packets"] / raw["wall_s"],
        "goodput_mbps": sum(f["goodput_bps"] for f in res["flows"]) / 1e6,
        "jain": res["jain_index"],
        "queue_mean_pkts": float(sampled.mean()),
        "queue_sd_pkts": float(sampled.std()),
        "drop_ratio": q["drop_ratio"],
        "utilization": res["utilization"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--flows", default="10,90,900")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the medians (and the lowest and highest rates) here")
    parser.add_argument("--against", type=Path, help="another ccsim-bench binary to alternate with")
    parser.add_argument("--duration", type=float, default=30.0, help="simulated seconds (the benchmark: 30)")
    parser.add_argument("--warmup", type=float, default=10.0, help="statistics from here, seconds (the benchmark: 10)")
    parser.add_argument(
        "--write-configs",
        type=Path,
        metavar="DIR",
        help="write the core configurations dumbbell-N.json here and run nothing",
    )
    parser.add_argument("--pacing", action="store_true", help="pace every flow (Linux's default pacing rate)")
    parser.add_argument("--cc", default="newreno", help="the flows' congestion control (default: newreno)")
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count the event loop's instructions under callgrind instead of timing runs",
    )
    args = parser.parse_args()
    if not 0 <= args.warmup < args.duration:
        print(f"bench: need 0 <= --warmup < --duration, got {args.warmup} and {args.duration}", file=sys.stderr)
        return 2
    flows = [int(x) for x in args.flows.split(",")]

    def config(n: int) -> str:
        model = scenario(n, seed=1, duration_s=args.duration, warmup_s=args.warmup, pacing=args.pacing, cc=args.cc)
        return json.dumps(ccsim.compile(model))

    if args.write_configs is not None:
        args.write_configs.mkdir(parents=True, exist_ok=True)
        for n in flows:
            (args.write_configs / f"dumbbell-{n}.json").write_text(config(n))
        return 0
    if args.instructions and shutil.which("valgrind") is None:
        print("bench: --instructions needs valgrind (e.g. apt-get install valgrind)", file=sys.stderr)
        return 2
    if not BINARY.exists():
        print(f"bench: {BINARY} missing; run `make bench`", file=sys.stderr)
        return 2
    if args.instructions:
        return instructions(flows, config)
    if args.against is not None:
        if not args.against.is_file():
            print(f"bench: --against {args.against}: no such binary", file=sys.stderr)
            return 2
        return compare(args.against, flows, args.runs, config)
    summary = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in flows:
            path = Path(tmp) / f"dumbbell-{n}.json"
            # The same seed each time: the runs differ only by the machine's noise.
            path.write_text(config(n))
            runs = [measure(path) for _ in range(args.runs)]
            med = {k: statistics.median(run[k] for run in runs) for k in runs[0]}
            # The spread is the machine's, not the simulation's (same seed, same events): on a
            # shared host it is often tens of percent, so it goes beside every median.
            rates = sorted(run["bottleneck_pkts_per_s"] for run in runs)
            summary[n] = {**med, "bottleneck_pkts_per_s_lowest": rates[0], "bottleneck_pkts_per_s_highest": rates[-1]}
            print(
                f"N={n:4d}  wall {med['wall_s']:.3f} s  events {med['events']:,.0f}  "
                f"{med['events_per_s'] / 1e6:.2f} M events/s  "
                f"{med['bottleneck_pkts_per_s'] / 1e6:.3f} M bottleneck pkts/s "
                f"(runs {rates[0] / 1e6:.3f}-{rates[-1] / 1e6:.3f})  "
                f"peak RSS {med['peak_rss_mb']:.0f} MiB"
            )
            print(
                f"        goodput {med['goodput_mbps']:.2f} Mbit/s  Jain {med['jain']:.3f}  "
                f"queue {med['queue_mean_pkts']:.1f} ({med['queue_sd_pkts']:.1f}) pkts  "
                f"drop ratio {med['drop_ratio']:.4f}  (median of {args.runs} runs)"
            )
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2))
    return 0


def instructions(flows: list[int], config: Callable[[int], str]) -> int:
    """Each configuration once under callgrind, counting only inside the event loop: print
    the instructions, the events and their ratio."""
    with tempfile.TemporaryDirectory() as tmp:
        for n in flows:
            path = Path(tmp) / f"dumbbell-{n}.json"
            path.write_text(config(n))
            out = subprocess.run(
                [
                    "valgrind",
                    "--tool=callgrind",
                    f"--callgrind-out-file={tmp}/callgrind.out",
                    "--toggle-collect=ccsim_core::engine::Simulation::advance",
                    str(BINARY),
                    str(path),
                ],
                check=True,
                capture_output=True,
                text=True,
            )
            collected = re.search(r"Collected : (\d+)", out.stderr)
            if collected is None or int(collected.group(1)) == 0:
                # Nothing counted: the loop's symbol was not found (renamed, or stripped).
                print(f"bench: no instructions counted in the event loop:\n{out.stderr}", file=sys.stderr)
                return 2
            count, events = int(collected.group(1)), json.loads(out.stdout)["events"]
            print(
                f"N={n:4d}  {count:,} instructions in the event loop, {events:,} events, {count / events:.1f} per event"
            )
    return 0


def compare(other: Path, flows: list[int], runs: int, config: Callable[[int], str]) -> int:
    """Alternate `BINARY` and `other` on each flow count; print the median rates, the
    median, lowest and highest per-round ratio (this build over the other) and the ratio of
    the best rates. The best of many runs is the one least disturbed by the machine's other
    load, so the two statistics together tell a real difference from a lucky series."""
    with tempfile.TemporaryDirectory() as tmp:
        for n in flows:
            path = Path(tmp) / f"dumbbell-{n}.json"
            path.write_text(config(n))
            ours, theirs = [], []
            for r in range(runs):
                order = [(BINARY, ours), (other, theirs)]
                for binary, rates in order if r % 2 == 0 else order[::-1]:
                    rates.append(measure(path, binary)["bottleneck_pkts_per_s"])
            ratios = sorted(a / b for a, b in zip(ours, theirs))
            print(
                f"N={n:4d}  this build {statistics.median(ours) / 1e6:.3f}  other {statistics.median(theirs) / 1e6:.3f} "
                f"M bottleneck pkts/s (medians of {runs});  ratio median {statistics.median(ratios):.3f} "
                f"(lowest {ratios[0]:.3f}, highest {ratios[-1]:.3f});  best {max(ours) / 1e6:.3f} against "
                f"{max(theirs) / 1e6:.3f}, ratio {max(ours) / max(theirs):.3f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
