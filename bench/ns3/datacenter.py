"""Piotrowska's Data Center with DropTail in ns-3 and in ccsim: who gets locked out.

docs/reproductions.md ("Lock-outs and exact ties") traces the Data Center's DropTail lock-outs
(one source group takes the whole bottleneck, the others' flows get next to nothing) to the
order of simultaneous events. This runs the same scenario in ns-3 3.44 (`datacenter.cc`, two
buffer arrangements, see there) and in ccsim (scenarios/papers/piotrowska/data_center.toml,
exact ties) for each seed, with NewReno or CUBIC (`--cc`), and prints each group's goodput,
the quartiles of the flows' goodput, the idle flows and whether the run locked out. Not part
of CI or `make test`: a 100 s ns-3 run takes 6-20 minutes here (9, 90 or 900 flows; CUBIC
with 900 the longest), so it runs two at a time.

    .venv/bin/python bench/ns3/datacenter.py [--count 1] [--seeds 1,2,3] [--stacks tc,one]
        [--cc newreno|cubic] [--duration 100] [--warmup 30] [--raw DIR]

Runs with the project's .venv (for `ccsim`); it compiles datacenter.cc against the PyPI
package `ns3` 3.44 (run.py's `pypi_build`, installed into bench/ns3/.venv if missing), the
version whose behaviour docs/reproductions.md reports, not against `make bench-ns3`'s
optimized 3.37 build (which is about speed).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SCENARIO = ROOT / "scenarios" / "papers" / "piotrowska" / "data_center.toml"
# A run locks out when one source group takes this share of the goodput or more (as in
# docs/reproductions.md), and a flow is idle below this fraction of the fair share.
LOCKOUT_SHARE = 0.95
IDLE_FRACTION = 0.01


def summarize(groups: list[str], goodputs: list[float]) -> dict:
    """Per-group goodput (Mbit/s), the quartiles of the flows' goodput (Mbit/s, linearly
    interpolated as the reproduction's tables compute them, to set beside the paper's Table
    2), idle flows, Jain's index and whether one group took it all."""
    total = sum(goodputs)
    by_group: dict[str, float] = {}
    for g, x in zip(groups, goodputs):
        by_group[g] = by_group.get(g, 0.0) + x
    fair = total / len(goodputs) if goodputs else 0.0
    squares = sum(x * x for x in goodputs)
    return {
        "groups_mbps": {g: round(x / 1e6, 1) for g, x in sorted(by_group.items())},
        "quartiles_mbps": [q / 1e6 for q in statistics.quantiles(goodputs, n=4, method="inclusive")]
        if len(goodputs) > 1
        else None,
        "idle": sum(x < IDLE_FRACTION * fair for x in goodputs),
        "flows": len(goodputs),
        "jain": total * total / (len(goodputs) * squares) if squares else float("nan"),
        "locked_out": bool(total) and max(by_group.values()) >= LOCKOUT_SHARE * total,
    }


def run_ns3(binary: Path, stack: str, socket_type: str, count: int, seed: int, duration: float, warmup: float) -> dict:
    out = subprocess.run(
        [
            str(binary),
            f"--count={count}",
            f"--seed={seed}",
            f"--stack={stack}",
            f"--cc={socket_type}",
            f"--duration={duration}",
            f"--warmup={warmup}",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    raw = json.loads(out.stdout)
    flows = raw["flows"]
    return {"raw": raw, **summarize([f["group"] for f in flows], [f["goodput_bps"] for f in flows])}


def run_ccsim(cc: str, count: int, seed: int, duration: float, warmup: float) -> dict:
    import ccsim

    overrides = [
        f"flows.count={count}",
        f"flows.cc={cc}",
        f"simulation.duration={duration}s",
        f"simulation.warmup={warmup}s",
    ]
    result = ccsim.run(SCENARIO, seed=seed, overrides=overrides)
    flows = result.flows
    return {"raw": None, **summarize(list(flows["group"]), list(flows["goodput_bps"]))}


def main(argv: list[str] | None = None) -> int:
    # run.py beside this script (its directory is on sys.path); TWIN_CC maps the scenario's
    # `cc` to ns-3's socket type, as for the benchmark's twin.
    from run import TWIN_CC, compile_twin, pypi_build

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--count", type=int, default=1, help="flows per source-sink pair (1, 10, 100)")
    p.add_argument("--seeds", default="1,2,3")
    p.add_argument("--stacks", default="tc,one", help="ns-3 buffer arrangements (datacenter.cc)")
    p.add_argument("--cc", choices=sorted(TWIN_CC), default="newreno", help="congestion control of every flow")
    p.add_argument("--duration", type=float, default=100.0)
    p.add_argument("--warmup", type=float, default=30.0)
    p.add_argument("--raw", type=Path, help="keep each ns-3 run's output here")
    args = p.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    stacks = [s for s in args.stacks.split(",") if s]

    # ns-3 3.44 (the PyPI package), the version docs/reproductions.md quotes: behaviour, not speed.
    binary = compile_twin(HERE / "datacenter.cc", pypi_build())

    jobs = [(stack, seed) for seed in seeds for stack in stacks]
    with ThreadPoolExecutor(max_workers=2) as pool:
        ns3 = dict(
            zip(
                jobs,
                pool.map(
                    lambda j: run_ns3(binary, j[0], TWIN_CC[args.cc], args.count, j[1], args.duration, args.warmup),
                    jobs,
                ),
            )
        )
    rows = [(f"ns-3, {stack}", seed, ns3[(stack, seed)]) for stack, seed in jobs]
    rows += [("ccsim", seed, run_ccsim(args.cc, args.count, seed, args.duration, args.warmup)) for seed in seeds]
    if args.raw:
        args.raw.mkdir(parents=True, exist_ok=True)
        for (stack, seed), r in ns3.items():
            (args.raw / f"ns3-{stack}-{args.cc}-{args.count}-{seed}.json").write_text(json.dumps(r["raw"]))

    print(
        f"Data Center, DropTail, {args.cc}, {9 * args.count} flows, {args.duration:g} s (statistics from {args.warmup:g} s)"
    )
    print(
        f"{'simulator':<12} {'seed':>4}  {'N1':>7} {'N2':>7} {'N3':>7} (Mbit/s)  {'flow quartiles':>20}  "
        f"{'idle':>9}  {'Jain':>5}  lock-out"
    )
    for name, seed, r in sorted(rows, key=lambda row: (row[0], row[1])):
        g = r["groups_mbps"]
        quartiles = "/".join(f"{q:.2f}" for q in r["quartiles_mbps"] or [])
        print(
            f"{name:<12} {seed:>4}  {g.get('N1', 0):>7.1f} {g.get('N2', 0):>7.1f} {g.get('N3', 0):>7.1f}           "
            f"{quartiles:>20}  {r['idle']:>4} of {r['flows']:<3} {r['jain']:>5.2f}  {'yes' if r['locked_out'] else 'no'}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
