"""`make bench-htsim`: the benchmark dumbbell (docs/performance.md) in ccsim and in htsim.

Issue 9 sets its engine-rate target from htsim (Broadcom/csg-htsim), the stripped-down C++
simulator researchers turn to for speed. This runs htsim on the same dumbbell, beside
ccsim-bench, on this machine: `bench/htsim/dumbbell.cpp` is the twin (its header lists what
htsim's TCP cannot express: no SACK, an ACK per packet, 1500-byte payloads).

htsim is not on a package registry. `--src DIR` names its `sim/` directory (from a checkout of
Broadcom/csg-htsim); without it, the repository is cloned into `bench/htsim/.src` (needs
network access to github.com) and the commit it got is printed with the results. The part of
htsim a TCP dumbbell needs (`HTSIM_OBJECTS`) is compiled with htsim's own flags into
`bench/htsim/.build/`, and the twin with g++ -O2; each is rebuilt when its own sources or flags
change (a change to the twin alone leaves htsim's objects as they are).

The two programs run alternately, one process at a time, each first in every other round
(this machine's speed drifts by tens of percent within minutes, so rates are compared round
by round). Printed per flow count: both simulators' bottleneck packets per wall second
(median, lowest, highest), events per second and per bottleneck packet, the median of the
per-round ratios (ccsim over htsim) and the ratio of the best rates, peak memory, and the
metrics of each (one seed: both are deterministic, so every round gives the same metrics).

`--topology link` runs both without the access links: every flow from A to B over the
bottleneck link alone (100 Mbit/s, 2 ms, DropTail 900 packets, the same TCP), the shape of
htsim's own dumbbell examples, where a packet crosses one link each way instead of three.

    .venv/bin/python bench/htsim/run.py [--src DIR] [--topology dumbbell|link]
        [--flows 10,90,900] [--runs 5] [--runs-900 3] [--seed 1] [--json OUT] [--build-only]

Runs with the project's .venv (it needs `ccsim` for the scenario) and the release binary
target/release/ccsim-bench (`make bench-htsim` builds both).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
BUILD = HERE / ".build"
CLONE = HERE / ".src"
TWIN = HERE / "dumbbell.cpp"
TWIN_JSON = HERE.parent / "twin_json.h"  # numbers and peak memory, as the ns-3 twins write them
REPOSITORY = "https://github.com/Broadcom/csg-htsim.git"
CCSIM_BENCH = ROOT / "target" / "release" / "ccsim-bench"

# htsim's objects that its TCP, queues, pipes and loggers need, and the flags of its
# sim/Makefile. Section flags let the link drop the logger code for protocols left out
# (loggers.o refers to all of them).
HTSIM_OBJECTS = [
    "eventlist",
    "tcppacket",
    "pipe",
    "queue",
    "tcp",
    "mtcp",
    "loggers",
    "logfile",
    "clock",
    "config",
    "network",
    "randomqueue",
    "route",
    "trigger",
]
HTSIM_CFLAGS = [
    "-Wall",
    "-std=c++11",
    "-g",
    "-Wsign-compare",
    "-Wuninitialized",
    "-O2",
    "-ffunction-sections",
    "-fdata-sections",
]
TWIN_CFLAGS = ["-std=c++17", "-O2", "-Wall"]

# htsim counts every byte of a 1500-byte packet as payload, ccsim 1448 (timestamps).
CCSIM_MSS, HTSIM_MSS = 1448, 1500


def log(msg: str) -> None:
    print(f"bench-htsim: {msg}", file=sys.stderr, flush=True)


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


# One process at a time and the benchmark's metrics, as `make bench-ns3` measures them.
ns3_run = _load("bench_ns3_run", ROOT / "bench" / "ns3" / "run.py")


def htsim_source(src: Path | None) -> tuple[Path, str]:
    """htsim's `sim/` directory and a name for the version in it (the commit of a git checkout)."""
    if src is None:
        if not (CLONE / ".git").exists():
            log(f"cloning {REPOSITORY} into {CLONE}")
            subprocess.run(["git", "clone", "-q", "--depth", "1", REPOSITORY, str(CLONE)], check=True)
        src = CLONE / "sim"
    src = src.resolve()
    missing = [f"{o}.cpp" for o in HTSIM_OBJECTS if not (src / f"{o}.cpp").exists()]
    if missing:
        raise SystemExit(f"bench-htsim: {src} is not htsim's sim/ directory: no {', '.join(missing)}")
    head = subprocess.run(["git", "-C", str(src), "rev-parse", "HEAD"], capture_output=True, text=True)
    version = f"Broadcom/csg-htsim@{head.stdout.strip()}" if head.returncode == 0 else f"sources in {src}"
    return src, version


def compile_twin(src: Path, version: str) -> Path:
    """Build htsim's objects into `.build/libhtsim.a` and the twin into `.build/dumbbell`, each
    unless it was built from the same sources with the same commands."""
    sources = [src / f"{o}.cpp" for o in HTSIM_OBJECTS]
    headers = sorted(src.glob("*.h"))
    twin_cmd = [
        "g++",
        *TWIN_CFLAGS,
        f"-DHTSIM_VERSION={json.dumps(version)}",
        f"-I{src}",
        f"-I{TWIN_JSON.parent}",
        str(TWIN),
        "-o",
        str(BUILD / "dumbbell"),
        f"-L{BUILD}",
        "-lhtsim",
        "-Wl,--gc-sections",
    ]

    def key(paths: list[Path], commands: list) -> str:
        digest = hashlib.sha256()
        for path in paths:
            digest.update(path.name.encode() + path.read_bytes())
        digest.update(json.dumps(commands).encode())
        return digest.hexdigest()

    def fresh(target: Path, stamp: Path, want: str) -> bool:
        return target.exists() and stamp.exists() and stamp.read_text() == want

    BUILD.mkdir(exist_ok=True)
    library, library_key = BUILD / "libhtsim.a", key([*sources, *headers], [HTSIM_CFLAGS])
    if not fresh(library, BUILD / "libhtsim.key", library_key):
        log(f"compiling {len(sources)} files of htsim (about a minute)")
        objects = []
        for source in sources:
            objects.append(BUILD / f"{source.stem}.o")
            subprocess.run(["g++", *HTSIM_CFLAGS, "-c", "-o", str(objects[-1]), str(source)], check=True)
        library.unlink(missing_ok=True)
        subprocess.run(["ar", "-rcs", str(library), *map(str, objects)], check=True)
        (BUILD / "libhtsim.key").write_text(library_key)
    binary, twin_key = BUILD / "dumbbell", key([TWIN, TWIN_JSON], [library_key, twin_cmd])
    if not fresh(binary, BUILD / "dumbbell.key", twin_key):
        log(f"compiling {TWIN.name}")
        subprocess.run(twin_cmd, check=True)
        (BUILD / "dumbbell.key").write_text(twin_key)
    return binary


def link_config(n: int, seed: int) -> dict:
    """`--topology link`: the benchmark without its access links, hosts A and B joined by the
    bottleneck link, n flows from A to B starting uniformly in [0, 3) s."""
    sys.path.insert(0, str(ROOT / "bench"))
    import ccsim

    import bench  # bench/bench.py: the benchmark's TCP

    return ccsim.compile(
        ccsim.from_dict(
            {
                "simulation": {"duration": "30s", "warmup": "10s", "seed": seed},
                "topology": {
                    "kind": "explicit",
                    "nodes": [{"name": "A", "kind": "host"}, {"name": "B", "kind": "host"}],
                    "links": [
                        {
                            "a": "A",
                            "b": "B",
                            "rate": "100Mbps",
                            "delay": "2ms",
                            "queue": {"kind": "droptail", "limit": "900p"},
                            "reverse": {"queue": {"kind": "droptail", "limit": "1000p"}},
                        }
                    ],
                    "bottleneck_queue": "A->B",
                },
                "flows": [
                    {
                        "src": "A",
                        "dst": "B",
                        "transport": bench.TCP,
                        "cc": "newreno",
                        "app": {"kind": "bulk"},
                        "start": "0s..3s",
                    }
                    for _ in range(n)
                ],
                "trace": {"interval": "10ms", "queues": ["A->B"], "cwnd": False},
            }
        )
    )


def measured(argv: list[str], payload: int) -> dict:
    """One process's figures; goodput counted at ccsim's 1448 bytes per packet."""
    m = ns3_run.metrics(*ns3_run.run_process(argv))
    m["goodput_mbps"] *= CCSIM_MSS / payload
    m["events_per_s"] = m["events"] / m["wall_s"]
    m["events_per_packet"] = m["events"] / m["bottleneck_packets"]
    return m


def summarize(ccsim: list[dict], htsim: list[dict]) -> dict:
    """Medians and extremes of each simulator's rate, the per-round ratios (runs pair up by
    round) and the ratio of the best rates; metrics and counts from the first run."""

    def side(runs: list[dict]) -> dict:
        rates = [r["bottleneck_pkts_per_s"] for r in runs]
        out = {k: statistics.median(r[k] for r in runs) for k in ("wall_s", "events_per_s", "peak_rss_mib")}
        out.update(rate_median=statistics.median(rates), rate_min=min(rates), rate_max=max(rates))
        out.update(
            {
                k: runs[0][k]
                for k in (
                    "events",
                    "bottleneck_packets",
                    "events_per_packet",
                    "goodput_mbps",
                    "jain",
                    "queue_mean_pkts",
                    "queue_sd_pkts",
                    "drop_ratio",
                )
            }
        )
        return out

    ratios = sorted(c["bottleneck_pkts_per_s"] / h["bottleneck_pkts_per_s"] for c, h in zip(ccsim, htsim))
    best = max(c["bottleneck_pkts_per_s"] for c in ccsim) / max(h["bottleneck_pkts_per_s"] for h in htsim)
    return {
        "ccsim": side(ccsim),
        "htsim": side(htsim),
        "ratio_median": statistics.median(ratios),
        "ratio_min": ratios[0],
        "ratio_max": ratios[-1],
        "ratio_best": best,
        "rounds": len(ratios),
    }


def report(n: int, s: dict) -> str:
    c, h = s["ccsim"], s["htsim"]
    lines = [
        f"\nN = {n}: {s['rounds']} alternated rounds",
        f"{'':34}{'ccsim':>14}{'htsim':>14}",
        f"{'bottleneck pkts / wall s, median':34}{c['rate_median'] / 1e6:>13.3f}M{h['rate_median'] / 1e6:>13.3f}M",
        f"{'  lowest .. highest':34}{c['rate_min'] / 1e6:>7.2f}..{c['rate_max'] / 1e6:<5.2f}"
        f"{h['rate_min'] / 1e6:>7.2f}..{h['rate_max'] / 1e6:<5.2f}",
        f"{'events / wall s, median':34}{c['events_per_s'] / 1e6:>13.2f}M{h['events_per_s'] / 1e6:>13.2f}M",
        f"{'events per bottleneck packet':34}{c['events_per_packet']:>14.2f}{h['events_per_packet']:>14.2f}",
        f"{'peak RSS (MiB)':34}{c['peak_rss_mib']:>14.1f}{h['peak_rss_mib']:>14.1f}",
        f"{'goodput (Mbit/s, 1448 B/packet)':34}{c['goodput_mbps']:>14.2f}{h['goodput_mbps']:>14.2f}",
        f"{'Jain index':34}{c['jain']:>14.3f}{h['jain']:>14.3f}",
        f"{'queue mean / sd (packets)':34}{c['queue_mean_pkts']:>8.1f} / {c['queue_sd_pkts']:<3.0f}"
        f"{h['queue_mean_pkts']:>8.1f} / {h['queue_sd_pkts']:<3.0f}",
        f"{'drop ratio':34}{c['drop_ratio']:>14.5f}{h['drop_ratio']:>14.5f}",
        f"ccsim / htsim in bottleneck packets per second: median of the rounds' ratios {s['ratio_median']:.2f} "
        f"(lowest {s['ratio_min']:.2f}, highest {s['ratio_max']:.2f}); best rates {s['ratio_best']:.2f}",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--src", type=Path, help="htsim's sim/ directory (default: clone the repository)")
    parser.add_argument(
        "--topology",
        choices=["dumbbell", "link"],
        default="dumbbell",
        help="the benchmark dumbbell, or its bottleneck link alone (see above)",
    )
    parser.add_argument("--flows", default="10,90,900")
    parser.add_argument("--runs", type=int, default=5, help="alternated rounds per flow count (default 5)")
    parser.add_argument("--runs-900", type=int, default=3, help="rounds for N >= 900 (default 3)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write every run and the summaries here")
    parser.add_argument("--build-only", action="store_true", help="compile htsim and the twin, run nothing")
    args = parser.parse_args()

    src, version = htsim_source(args.src)
    binary = compile_twin(src, version)
    if args.build_only:
        print(binary)
        return 0
    if not CCSIM_BENCH.exists():
        log(f"{CCSIM_BENCH} missing; run `make bench-htsim`")
        return 2
    load = os.getloadavg()
    print(f"htsim: {version}; topology: {args.topology}")
    print(f"load average before the runs: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores")

    summary, runs = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for n in [int(x) for x in args.flows.split(",")]:
            config = Path(tmp) / f"dumbbell-{n}.json"
            dumbbell = args.topology == "dumbbell"
            scenario = ns3_run.ccsim_config(n, args.seed, {}) if dumbbell else link_config(n, args.seed)
            config.write_text(json.dumps(scenario))
            programs = [
                ("ccsim", [str(CCSIM_BENCH), str(config)], CCSIM_MSS),
                (
                    "htsim",
                    [str(binary), f"--flows={n}", f"--seed={args.seed}", f"--topology={args.topology}"],
                    HTSIM_MSS,
                ),
            ]
            got = {"ccsim": [], "htsim": []}
            for r in range(args.runs_900 if n >= 900 else args.runs):
                for name, argv, payload in programs if r % 2 == 0 else programs[::-1]:
                    got[name].append(measured(argv, payload))
                log(
                    f"N={n} round {r + 1}: ccsim {got['ccsim'][-1]['bottleneck_pkts_per_s'] / 1e6:.2f} M, "
                    f"htsim {got['htsim'][-1]['bottleneck_pkts_per_s'] / 1e6:.2f} M bottleneck pkts/s"
                )
            summary.append({"flows": n, **summarize(got["ccsim"], got["htsim"])})
            runs.append({"flows": n, **got})
            print(report(n, summary[-1]), flush=True)
    load = os.getloadavg()
    print(f"\nload average after the runs: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if args.json:
        record = {"htsim": version, "topology": args.topology, "seed": args.seed, "summary": summary, "runs": runs}
        args.json.write_text(json.dumps(record, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
