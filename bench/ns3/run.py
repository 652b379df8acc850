"""`make bench-ns3`: the benchmark dumbbell (docs/performance.md) in ccsim and in ns-3.

Sets up `bench/ns3/.venv` with the PyPI package `ns3` (ns-3's C++ libraries and headers;
installed with --no-deps, since its Python bindings' dependency cppyy is not needed and builds
from source), compiles `bench/ns3/dumbbell.cc` against it with g++ -O2 (cached in
`bench/ns3/.build/`; rebuilt when the source, the flags or the package change), then runs,
one process at a time, ccsim's `ccsim-bench` and the ns-3 twin for each flow count and seed.
For each process it measures the whole process's wall time and reads what the process
reports: event-loop wall time, events, bottleneck packets and peak RSS (VmHWM).

Prints one table per flow count: speed (median over seeds) and metrics (mean over seeds) of
both simulators, the speed ratio and the metric differences, each with pass/fail against
issue 9's targets: ccsim at least 100x faster, goodput within 5 %, bottleneck queue mean and
drop ratio within 20 % of ns-3's.

    .venv/bin/python bench/ns3/run.py [--flows 10,90,900] [--seeds 3] [--seeds-900 1]
        [--json OUT] [--raw DIR] [--ccsim-param lost_retransmit=false ...] [--cc cubic]

Runs with the project's .venv (it needs `ccsim` for the scenario compiler) and the release
binary target/release/ccsim-bench (`make bench-ns3` builds both).
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
VENV = HERE / ".venv"
BUILD = HERE / ".build"
SOURCE = HERE / "dumbbell.cc"
COMMON = HERE / "common.h"
# Numbers in JSON and peak memory, shared with bench/htsim/dumbbell.cpp.
TWIN_JSON = HERE.parent / "twin_json.h"
CCSIM_BENCH = ROOT / "target" / "release" / "ccsim-bench"
NS3_PACKAGE = "ns3==3.44.post0"
NS3_LIBS = ["applications", "internet", "point-to-point", "traffic-control", "bridge", "network", "core"]

# Issue 9's targets.
MIN_SPEEDUP = 100.0
GOODPUT_TOL = 0.05
QUEUE_TOL = 0.20
DROP_TOL = 0.20


def log(msg: str) -> None:
    print(f"bench-ns3: {msg}", file=sys.stderr, flush=True)


def ns3_prefix() -> Path:
    """The installed package's directory (holding include/ and lib64/), installing it first."""
    found = glob.glob(str(VENV / "lib" / "python3*" / "site-packages" / "ns3" / "include" / "ns3" / "core-module.h"))
    if not found:
        if not (VENV / "bin" / "python").exists():
            log(f"creating {VENV}")
            subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        log(f"pip install --no-deps {NS3_PACKAGE} (about 70 MB)")
        subprocess.run([str(VENV / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", NS3_PACKAGE], check=True)
        found = glob.glob(str(VENV / "lib" / "python3*" / "site-packages" / "ns3" / "include" / "ns3" / "core-module.h"))
        if not found:
            raise SystemExit("bench-ns3: the ns3 package has no include/ns3/core-module.h")
    return Path(found[0]).parent.parent.parent


def compile_twin(source: Path = SOURCE) -> Path:
    """Compile `source` (a program of this directory, which includes `common.h` and through it
    `bench/twin_json.h`) against the package into `.build/`, unless the binary there was built
    from the same source and headers with the same command."""
    source = source.resolve()  # the key holds the command: one path per program
    binary = BUILD / source.stem
    prefix = ns3_prefix()
    inc, lib = prefix / "include", prefix / "lib64"
    version = next(iter(sorted(lib.glob("libns3.*-core.so"))), None)
    if version is None:
        raise SystemExit(f"bench-ns3: no libns3.*-core.so in {lib}")
    tag = version.name[len("lib") : -len("-core.so")]  # e.g. ns3.44
    # The package was built with these (lib64/cmake/ns3/ns3Targets.cmake); headers must agree.
    defines = ["-DNS3_BUILD_PROFILE_RELEASE", "-DNS3_LOG_ENABLE", "-DNS3_ASSERT_ENABLE"]
    cmd = (
        ["g++", "-O2", "-std=c++20", *defines, f"-I{inc}", f"-I{TWIN_JSON.parent}", str(source), "-o", str(binary)]
        + [f"-L{lib}", f"-Wl,-rpath,{lib}"]
        + [f"-l{tag}-{m}" for m in NS3_LIBS]
    )
    headers = COMMON.read_bytes() + TWIN_JSON.read_bytes()
    key = hashlib.sha256(source.read_bytes() + headers + json.dumps(cmd).encode()).hexdigest()
    stamp = BUILD / f"{source.stem}.key"
    if binary.exists() and stamp.exists() and stamp.read_text() == key:
        return binary
    BUILD.mkdir(exist_ok=True)
    log(f"compiling {source.name} (about a minute)")
    subprocess.run(cmd, check=True)
    stamp.write_text(key)
    return binary


def run_process(argv: list[str]) -> tuple[dict, float, float, float]:
    """Run one process alone; its stdout JSON, its wall time (s), its CPU time (user + system,
    s, from wait4's rusage) and its peak RSS (MiB).

    The RSS is the process's own VmHWM, which it reports (both programs read
    /proc/self/status at the end): `ru_maxrss` from wait4 would also count the forked copy
    of this Python process before exec (about 50 MiB with ccsim and numpy loaded)."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(argv, stdout=out)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise SystemExit(f"{argv[0]} exited with {proc.returncode}")
        out.seek(0)
        raw = json.loads(out.read())
    return raw, wall, usage.ru_utime + usage.ru_stime, raw["peak_rss_bytes"] / 2**20


def keep_raw(directory: Path | None, simulator: str, n: int, seed: int, raw: dict) -> None:
    """`--raw`: keep a process's own output, per-flow results included, as
    `DIRECTORY/{simulator}-{n}-{seed}.json` (the summaries keep only totals)."""
    if directory is None:
        return
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{simulator}-{n}-{seed}.json").write_text(json.dumps(raw))


def metrics(raw: dict, proc_wall: float, cpu_s: float, rss_mib: float) -> dict:
    """The figures the benchmark reports (docs/performance.md), computed the same way for both simulators (as
    bench/bench.py does for ccsim): queue samples from the warm-up on."""
    res = raw["results"]
    q = next(q for q in res["queues"] if q["name"] == "A->B")
    times, lens = res["traces"]["time_s"], res["traces"]["queue.A->B.len_pkts"]
    sampled = [x for t, x in zip(times, lens) if t >= res["warmup_s"]]
    mean = sum(sampled) / len(sampled)
    flows = res["flows"]
    return {
        "wall_s": raw["wall_s"],
        "process_wall_s": proc_wall,
        "cpu_s": cpu_s,
        "peak_rss_mib": rss_mib,
        "events": raw["events"],
        "bottleneck_packets": raw["bottleneck_packets"],
        "bottleneck_pkts_per_s": raw["bottleneck_packets"] / raw["wall_s"],
        "goodput_mbps": sum(f["goodput_bps"] for f in flows) / 1e6,
        "jain": res["jain_index"],
        "queue_mean_pkts": mean,
        "queue_sd_pkts": (sum((x - mean) ** 2 for x in sampled) / len(sampled)) ** 0.5,
        "drop_ratio": q["drop_ratio"],
        "timeouts": sum(f.get("timeouts", 0) for f in flows),
        "fast_recoveries": sum(f.get("fast_recoveries", 0) for f in flows),
        "retransmissions": sum(f.get("retransmissions", 0) for f in flows),
        "other_drops": raw.get("other_drops", 0),
    }


# `--cc`: ccsim's congestion control and the twin's (`dumbbell.cc --cc`) that models it.
TWIN_CC = {"newreno": "TcpNewReno", "cubic": "TcpCubic"}


def ccsim_config(n: int, seed: int, params: dict, cc: str = "newreno") -> dict:
    sys.path.insert(0, str(ROOT / "bench"))
    import bench  # bench/bench.py: the scenario `make bench` runs
    import ccsim

    config = ccsim.compile(bench.scenario(n, seed=seed))
    for flow in config["flows"]:
        flow["transport"]["params"].update(params)
        if cc != "newreno":
            flow["cc"] = {"kind": cc, "params": {}}
    return config


SPEED = ["wall_s", "process_wall_s", "cpu_s", "peak_rss_mib", "events", "bottleneck_pkts_per_s"]
METRICS = ["goodput_mbps", "jain", "queue_mean_pkts", "queue_sd_pkts", "drop_ratio", "timeouts", "fast_recoveries", "retransmissions", "other_drops"]


def summarize(runs: list[dict]) -> dict:
    out = {k: statistics.median(r[k] for r in runs) for k in SPEED}
    out.update({k: statistics.fmean(r[k] for r in runs) for k in METRICS})
    return out


def rel(a: float, b: float) -> float:
    """Relative difference of ccsim's `a` from ns-3's `b`."""
    if b == 0:
        return 0.0 if a == 0 else float("inf")
    return (a - b) / b


def report(n: int, seeds: int, c: dict, s: dict) -> dict:
    speedup = s["wall_s"] / c["wall_s"]
    speedup_proc = s["process_wall_s"] / c["process_wall_s"]
    speedup_cpu = s["cpu_s"] / c["cpu_s"]
    checks = {
        # Judged on CPU time: on a shared, loaded machine a process's wall time depends on
        # what else runs; its CPU time much less.
        "speed": (speedup_cpu, speedup_cpu >= MIN_SPEEDUP, f">= {MIN_SPEEDUP:.0f}x, CPU time"),
        "goodput": (rel(c["goodput_mbps"], s["goodput_mbps"]), abs(rel(c["goodput_mbps"], s["goodput_mbps"])) <= GOODPUT_TOL, "within 5 %"),
        "queue_mean": (rel(c["queue_mean_pkts"], s["queue_mean_pkts"]), abs(rel(c["queue_mean_pkts"], s["queue_mean_pkts"])) <= QUEUE_TOL, "within 20 %"),
        "drop_ratio": (rel(c["drop_ratio"], s["drop_ratio"]), abs(rel(c["drop_ratio"], s["drop_ratio"])) <= DROP_TOL, "within 20 %"),
    }
    rows = [
        ("loop wall (s), median", "wall_s", "{:.3f}"),
        ("process wall (s), median", "process_wall_s", "{:.3f}"),
        ("process CPU (s), median", "cpu_s", "{:.3f}"),
        ("peak RSS (MiB), median", "peak_rss_mib", "{:.0f}"),
        ("events, median", "events", "{:,.0f}"),
        ("bottleneck pkts / wall s", "bottleneck_pkts_per_s", "{:,.0f}"),
        ("goodput (Mbit/s)", "goodput_mbps", "{:.2f}"),
        ("Jain", "jain", "{:.3f}"),
        ("queue mean (pkts)", "queue_mean_pkts", "{:.1f}"),
        ("queue sd (pkts)", "queue_sd_pkts", "{:.1f}"),
        ("drop ratio", "drop_ratio", "{:.5f}"),
        ("timeouts (all flows)", "timeouts", "{:.1f}"),
        ("fast recoveries (all flows)", "fast_recoveries", "{:.1f}"),
        ("retransmissions (all flows)", "retransmissions", "{:.0f}"),
        ("drops elsewhere", "other_drops", "{:.0f}"),
    ]
    print(f"\nN = {n}  ({seeds} seed{'s' if seeds > 1 else ''}; speed: median, metrics: mean over seeds)")
    print(f"  {'':30s} {'ccsim':>14s} {'ns-3':>14s}")
    for label, key, fmt in rows:
        print(f"  {label:30s} {fmt.format(c[key]):>14s} {fmt.format(s[key]):>14s}")
    print(f"  speed ratio                    loop wall {speedup:,.0f}x, process wall {speedup_proc:,.0f}x, process CPU {speedup_cpu:,.0f}x")
    for name, (value, ok, target) in checks.items():
        shown = f"{value:,.0f}x" if name == "speed" else f"{value:+.1%}"
        print(f"  {name:30s} {shown:>14s}  {'PASS' if ok else 'FAIL'} ({target})")
    return {"flows": n, "seeds": seeds, "ccsim": c, "ns3": s, "speedup": speedup, "speedup_process": speedup_proc, "speedup_cpu": speedup_cpu,
            "checks": {k: {"value": v, "pass": ok, "target": t} for k, (v, ok, t) in checks.items()}}


def parse_param(text: str) -> tuple[str, object]:
    key, _, value = text.partition("=")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--flows", default="10,90,900")
    parser.add_argument("--seeds", type=int, default=3, help="seeds per flow count (default 3)")
    parser.add_argument("--seeds-900", type=int, default=1, help="seeds for N >= 900 (default 1)")
    parser.add_argument("--json", type=Path, help="also write every run and the summaries here")
    parser.add_argument("--raw", type=Path, metavar="DIR",
                        help="also keep each process's output, per-flow results included, as DIR/{ccsim,ns3}-N-SEED.json")
    parser.add_argument("--ccsim-param", action="append", default=[], metavar="KEY=VALUE",
                        help="override a TCP transport parameter of ccsim's flows (canonical units), e.g. lost_retransmit=false")
    parser.add_argument("--ns3-arg", action="append", default=[], metavar="ARG",
                        help="pass an option to the ns-3 twin, e.g. --ns3-arg=--delack=1 (with --ccsim-param "
                             "delack_count=1) or --ns3-arg=--cc=TcpLinuxReno")
    parser.add_argument("--cc", choices=sorted(TWIN_CC), default="newreno",
                        help="congestion control of both simulators' flows (the benchmark's: newreno; cubic runs "
                             "ccsim's CUBIC against ns-3's TcpCubic, both without HyStart)")
    parser.add_argument("--build-only", action="store_true", help="set up and compile the ns-3 twin, run nothing")
    args = parser.parse_args()

    binary = compile_twin()
    if args.build_only:
        print(binary)
        return 0
    if not CCSIM_BENCH.exists():
        log(f"{CCSIM_BENCH} missing; run `make bench-ns3`")
        return 2
    params = dict(parse_param(p) for p in args.ccsim_param)
    ns3_args = ([f"--cc={TWIN_CC[args.cc]}"] if args.cc != "newreno" else []) + args.ns3_arg
    load = os.getloadavg()
    print(f"load average before the runs: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores")
    if params or ns3_args:
        print(f"congestion control {args.cc}; ccsim transport overrides: {params}; ns-3 options: {ns3_args}")

    def measured(simulator: str, n: int, seed: int, argv: list[str]) -> dict:
        out = run_process(argv)
        keep_raw(args.raw, simulator, n, seed, out[0])
        return metrics(*out)

    summary, raw_runs = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for n in [int(x) for x in args.flows.split(",")]:
            seeds = args.seeds_900 if n >= 900 else args.seeds
            c_runs, s_runs = [], []
            for seed in range(1, seeds + 1):
                path = Path(tmp) / f"dumbbell-{n}-{seed}.json"
                path.write_text(json.dumps(ccsim_config(n, seed, params, args.cc)))
                c_runs.append(measured("ccsim", n, seed, [str(CCSIM_BENCH), str(path)]))
                log(f"N={n} seed {seed}: ccsim loop {c_runs[-1]['wall_s']:.2f} s, CPU {c_runs[-1]['cpu_s']:.2f} s")
                s_runs.append(measured("ns3", n, seed, [str(binary), f"--flows={n}", f"--seed={seed}", *ns3_args]))
                log(f"N={n} seed {seed}: ns-3 loop {s_runs[-1]['wall_s']:.1f} s, CPU {s_runs[-1]['cpu_s']:.1f} s")
                raw_runs.append({"flows": n, "seed": seed, "ccsim": c_runs[-1], "ns3": s_runs[-1]})
            summary.append(report(n, seeds, summarize(c_runs), summarize(s_runs)))
    load = os.getloadavg()
    print(f"\nload average after the runs: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if args.json:
        args.json.write_text(json.dumps({"cc": args.cc, "params": params, "ns3_args": ns3_args, "summary": summary,
                                         "runs": raw_runs}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
