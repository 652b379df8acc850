"""`make bench-ns3`: the benchmark dumbbell (docs/performance.md) in ccsim and in ns-3.

ccsim is measured against the fastest build of ns-3: ns-3 built from source with its
`optimized` profile (`./ns3 configure --build-profile=optimized`: CMake release, -O3,
-march=native, NS3_LOG and NS3_ASSERT off), only the modules the twin needs. The source is
Debian's `ns3` source package (`apt-get source ns3`, the orig tarball, upstream's release
tarball as it is; a `deb-src` entry for the system's suite is added to
/etc/apt/sources.list.d/ when none exists), or `--ns3-source` (a tarball or an unpacked tree,
for machines without apt). The build is cached in `bench/ns3/.build/ns3-optimized/` and made
again only when its key (the source's SHA-256, the configure options, the modules, the
compiler) changes; it took 5.6 minutes on one core of the benchmark machine (`--ns3-jobs`,
default all cores; run under `nice`).

`dumbbell.cc` is compiled against it with the build's flags (cached too; rebuilt when the
source, the headers, the flags or the build change), then, one process at a time, ccsim's
`ccsim-bench` and the ns-3 twin run alternately for each flow count and seed. `--also-pypi`
adds a second ns-3 column: the same twin against the PyPI package `ns3` (3.44, installed into
`bench/ns3/.venv` with --no-deps; a release build for generic x86-64 with NS3_LOG and
NS3_ASSERT compiled in: 1.5-2.3x the optimized 3.37 build's CPU time on the benchmark). For each process it measures the whole process's
wall and CPU time and reads what the process reports: event-loop wall time, events,
bottleneck packets and peak RSS (VmHWM).

Prints which build each column is, then one table per flow count: speed (median over seeds)
and metrics (mean over seeds) of ccsim and each ns-3 build, the speed ratio and the metric
differences, each with pass/fail against the speed targets (relative to the optimized build):
ccsim at least 100x faster, goodput within 5 %, bottleneck queue mean and drop ratio within
20 % of ns-3's.

    .venv/bin/python bench/ns3/run.py [--flows 10,90,900] [--seeds 3] [--seeds-900 1]
        [--json OUT] [--raw DIR] [--ccsim-param lost_retransmit=false ...] [--cc cubic]
        [--also-pypi] [--ns3-source TARBALL|DIR] [--ns3-suite SUITE] [--ns3-jobs N] [--ccsim-bench PATH] [--build-only]

Runs with the project's .venv (it needs `ccsim` for the scenario compiler) and the release
binary target/release/ccsim-bench (`make bench-ns3` builds both).
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
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

# The optimized build: where its source comes from and how it is configured. A change to any of
# these options (or to the source or the compiler) makes it again. It builds the modules'
# libraries only (`./ns3 build MODULE...`).
NS3_SOURCE_PACKAGE = "ns3"  # Debian's source package (bookworm: 3.37)
NS3_SOURCES = BUILD / "ns3-source"  # `apt-get source --download-only` puts the files here
NS3_OPTIMIZED = BUILD / "ns3-optimized"
NS3_MODULES = ["core", "network", "internet", "point-to-point", "traffic-control", "applications"]
NS3_CONFIGURE = [
    "--build-profile=optimized",  # CMake release (-O3), -march=native -mtune=native, no NS3_LOG, no NS3_ASSERT
    "--enable-modules=" + ",".join(NS3_MODULES),  # and what they depend on (bridge, stats)
    "--disable-examples",
    "--disable-tests",
    "--disable-python-bindings",
    "--disable-werror",
]
APT_SOURCES = Path("/etc/apt")
DEBSRC_FILE = "ccsim-src.sources"

# Issue 9's targets.
MIN_SPEEDUP = 100.0
GOODPUT_TOL = 0.05
QUEUE_TOL = 0.20
DROP_TOL = 0.20


def log(msg: str) -> None:
    print(f"bench-ns3: {msg}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Ns3Build:
    """A build of ns-3 the twin can be compiled against."""

    name: str  # "optimized" or "pypi": the twin binary's suffix, the JSON's key
    label: str  # what the table says the column is
    include: Path  # holds ns3/core-module.h
    lib: Path  # holds lib{tag}-core{suffix}.so
    tag: str  # e.g. ns3.37
    suffix: str  # the build profile's library suffix: "-optimized", or "" (release)
    cxxflags: tuple[str, ...]  # for the twin: optimization, standard, the build's NS3_* defines

    @property
    def version(self) -> str:
        return self.tag.removeprefix("ns")


# ---- the cache: a directory made by a command, remade when its key changes ----------------


def cache_key(**inputs: object) -> str:
    """SHA-256 of what a cached build depends on (JSON of `inputs`, keys sorted)."""
    return hashlib.sha256(json.dumps(inputs, sort_keys=True, default=str).encode()).hexdigest()


def cached(directory: Path, key: str, make: Callable[[Path], None]) -> bool:
    """Make `directory` with `make(directory)` unless it was made with the same `key` (kept
    beside it in `<directory>.key`, written only once `make` succeeded). A stale or half-made
    directory is removed first. True when it (re)made it."""
    stamp = directory.with_name(directory.name + ".key")
    if directory.is_dir() and stamp.exists() and stamp.read_text() == key:
        return False
    if directory.exists():
        shutil.rmtree(directory)
    stamp.unlink(missing_ok=True)
    directory.mkdir(parents=True)
    make(directory)
    stamp.write_text(key)
    return True


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def made_by_build(relative: Path, made: tuple[str, ...]) -> bool:
    return any(part in made for part in relative.parts[:-1])


def tree_sha256(tree: Path) -> str:
    """A source tree's key: its files' paths and contents (for `--ns3-source DIR`), without
    what a build in it leaves (build/, cmake-cache/)."""
    h = hashlib.sha256()
    made = ("build", "cmake-cache")
    for path in sorted(p for p in tree.rglob("*") if p.is_file() and not made_by_build(p.relative_to(tree), made)):
        h.update(str(path.relative_to(tree)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


# ---- the source: Debian's source package, fetched with apt-get -----------------------------


def os_codename(os_release: Path = Path("/etc/os-release")) -> str:
    for line in os_release.read_text().splitlines():
        if line.startswith("VERSION_CODENAME="):
            return line.partition("=")[2].strip().strip('"')
    raise SystemExit("bench-ns3: no VERSION_CODENAME in /etc/os-release; pass --ns3-source")


def has_debsrc(suite: str, component: str = "main", apt: Path = APT_SOURCES) -> bool:
    """Whether apt has a `deb-src` entry for `suite` and `component`, in one-line form
    (sources.list, *.list) or deb822 form (*.sources)."""
    files = [apt / "sources.list", *sorted((apt / "sources.list.d").glob("*.list"))]
    for path in files:
        if not path.is_file():
            continue
        for line in path.read_text().splitlines():
            words = line.split("#", 1)[0].split()
            if words[:1] == ["deb-src"]:
                words = [w for w in words[1:] if not w.startswith("[")]  # drop [options]
                if len(words) >= 3 and words[1] == suite and component in words[2:]:
                    return True
    for path in sorted((apt / "sources.list.d").glob("*.sources")):
        for stanza in path.read_text().split("\n\n"):
            fields: dict[str, list[str]] = {}
            for line in stanza.splitlines():
                if ":" in line and not line.startswith((" ", "#")):
                    name, _, value = line.partition(":")
                    fields[name.strip().lower()] = value.split()
            if fields.get("enabled", ["yes"]) == ["no"]:
                continue
            if (
                "deb-src" in fields.get("types", [])
                and suite in fields.get("suites", [])
                and component in fields.get("components", [])
            ):
                return True
    return False


def debsrc_entry(suite: str, component: str = "main") -> str:
    """The deb822 entry this script adds when apt has no `deb-src` for `suite` (Debian's mirror)."""
    return (
        "Types: deb-src\nURIs: http://deb.debian.org/debian\n"
        f"Suites: {suite}\nComponents: {component}\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
    )


def fetch_ns3_source(dest: Path = NS3_SOURCES, suite: str | None = None) -> Path:
    """Debian's ns3 orig tarball (upstream's ns-allinone release) of `suite` (default: this
    system's), downloading it with `apt-get source --download-only ns3/SUITE` into
    `dest/SUITE` unless it is there. Adds a `deb-src` entry for the suite first if apt has
    none (then `apt-get update`)."""
    suite = suite or os_codename()
    dest = dest / suite
    found = sorted(dest.glob(f"{NS3_SOURCE_PACKAGE}_*.orig.tar.*"))
    if found:
        return found[-1]
    if shutil.which("apt-get") is None:
        raise SystemExit("bench-ns3: no apt-get here; pass --ns3-source with an ns-3 source tarball or tree")
    if not has_debsrc(suite):
        entry = APT_SOURCES / "sources.list.d" / DEBSRC_FILE.replace(".sources", f"-{suite}.sources")
        log(f"apt has no deb-src entry for {suite} main: writing {entry} (Debian's mirror) and running apt-get update")
        entry.write_text(debsrc_entry(suite))
        subprocess.run(["apt-get", "update", "-q"], check=True)
    else:
        log(f"apt has a deb-src entry for {suite} main")
    dest.mkdir(parents=True, exist_ok=True)
    log(f"apt-get source --download-only {NS3_SOURCE_PACKAGE}/{suite} into {dest} (about 40 MB)")
    cmd = ["apt-get", "source", "--download-only", "-q", f"{NS3_SOURCE_PACKAGE}/{suite}"]
    if subprocess.run(cmd, cwd=dest).returncode != 0:
        log("apt-get source failed; apt-get update and once more")
        subprocess.run(["apt-get", "update", "-q"], check=True)
        subprocess.run(cmd, cwd=dest, check=True)
    found = sorted(dest.glob(f"{NS3_SOURCE_PACKAGE}_*.orig.tar.*"))
    if not found:
        raise SystemExit(f"bench-ns3: apt-get source left no {NS3_SOURCE_PACKAGE}_*.orig.tar.* in {dest}")
    return found[-1]


def ns3_tree(root: Path) -> Path:
    """The ns-3 tree under `root` (an unpacked ns-allinone-3.x or ns-3.x): the shallowest
    directory holding the `ns3` script and a CMakeLists.txt."""
    candidates = [p.parent for p in root.rglob("ns3") if p.is_file() and (p.parent / "CMakeLists.txt").exists()]
    if not candidates:
        raise SystemExit(f"bench-ns3: no ns-3 tree (ns3 script and CMakeLists.txt) under {root}")
    return min(candidates, key=lambda p: len(p.parts))


def compiler() -> str:
    """The C++ compiler's identity, part of the optimized build's key."""
    cxx = os.environ.get("CXX", "c++")
    out = subprocess.run([cxx, "--version"], capture_output=True, text=True, check=True).stdout
    return out.splitlines()[0]


def ensure_build_tools() -> None:
    """cmake and a C++ compiler; apt-get installs cmake when missing (ns-3 needs it)."""
    if shutil.which("cmake") is None:
        if shutil.which("apt-get") is None or os.geteuid() != 0:
            raise SystemExit("bench-ns3: building ns-3 needs cmake (>= 3.10); install it")
        log("cmake missing: apt-get install cmake")
        subprocess.run(["apt-get", "install", "-y", "-q", "cmake"], check=True)
    if shutil.which("g++") is None:
        raise SystemExit("bench-ns3: building ns-3 and the twin needs g++")


def optimized_build(source: Path | None = None, jobs: int | None = None, suite: str | None = None) -> Ns3Build:
    """ns-3 built from source with the optimized profile (cached in .build/ns3-optimized/):
    from `source`, or else from Debian's source package of `suite` (default: this system's)."""
    ensure_build_tools()
    source = (source or fetch_ns3_source(suite=suite)).resolve()
    source_key = tree_sha256(source) if source.is_dir() else file_sha256(source)
    key = cache_key(source=source_key, configure=NS3_CONFIGURE, build=NS3_MODULES, compiler=compiler())
    jobs = jobs or os.cpu_count() or 1

    def make(directory: Path) -> None:
        t0 = time.perf_counter()
        if source.is_dir():
            shutil.copytree(source, directory / "src", symlinks=True)
        else:
            log(f"unpacking {source.name}")
            (directory / "src").mkdir()
            subprocess.run(["tar", "-xf", str(source), "-C", str(directory / "src")], check=True)
        tree = ns3_tree(directory / "src")
        nice = ["nice", "-n", "10"]
        log(f"configuring {tree.name}: ./ns3 configure {' '.join(NS3_CONFIGURE)}")
        subprocess.run([*nice, sys.executable, "ns3", "configure", *NS3_CONFIGURE], cwd=tree, check=True)
        log(f"building {tree.name} with {jobs} job{'s' if jobs > 1 else ''} under nice (about 6 minutes on one core)")
        # Only the modules' libraries: ns-3.37's `test` library, which `core` brings in even with
        # --disable-tests, includes csma's headers and does not build without csma.
        subprocess.run([*nice, sys.executable, "ns3", "build", *NS3_MODULES, f"--jobs={jobs}"], cwd=tree, check=True)
        log(f"built ns-3 in {(time.perf_counter() - t0) / 60:.1f} min")

    if cached(NS3_OPTIMIZED, key, make):
        log(f"ns-3 optimized build cached in {NS3_OPTIMIZED}")
    return describe_optimized(ns3_tree(NS3_OPTIMIZED / "src"), source)


def cxx_standard(tree: Path) -> str:
    """The C++ standard the build compiled its core library with (3.37: C++17), for the twin:
    the headers want it. From CMake's flags for that library; C++17 if they cannot be read."""
    flags = tree / "cmake-cache" / "src" / "core" / "CMakeFiles" / "libcore-obj.dir" / "flags.make"
    found = re.search(r"-std=(?:gnu|c)\+\+(\w+)", flags.read_text()) if flags.exists() else None
    return f"-std=c++{found.group(1) if found else '17'}"


def describe_optimized(tree: Path, source: Path) -> Ns3Build:
    lib = tree / "build" / "lib"
    core = sorted(lib.glob("libns3.*-core-optimized.so"))
    if not core:
        raise SystemExit(f"bench-ns3: no libns3.*-core-optimized.so in {lib}; remove {NS3_OPTIMIZED} and run again")
    tag = core[0].name[len("lib") : -len("-core-optimized.so")]
    return Ns3Build(
        name="optimized",
        label=f"ns-3 {tag.removeprefix('ns')}, optimized build from source ({source.name}; --build-profile=optimized: "
        "-O3 -march=native, NS3_LOG and NS3_ASSERT off)",
        include=tree / "build" / "include",
        lib=lib,
        tag=tag,
        suffix="-optimized",
        # The defines are those the build compiled with (no NS3_LOG_ENABLE, NS3_ASSERT_ENABLE).
        cxxflags=("-O3", "-march=native", "-mtune=native", cxx_standard(tree), "-DNS3_BUILD_PROFILE_OPTIMIZED"),
    )


# ---- the secondary build: the PyPI package ---------------------------------------------------


def ns3_prefix() -> Path:
    """The installed package's directory (holding include/ and lib64/), installing it first."""
    found = glob.glob(str(VENV / "lib" / "python3*" / "site-packages" / "ns3" / "include" / "ns3" / "core-module.h"))
    if not found:
        if not (VENV / "bin" / "python").exists():
            log(f"creating {VENV}")
            subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        log(f"pip install --no-deps {NS3_PACKAGE} (about 70 MB)")
        subprocess.run(
            [str(VENV / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", NS3_PACKAGE], check=True
        )
        found = glob.glob(
            str(VENV / "lib" / "python3*" / "site-packages" / "ns3" / "include" / "ns3" / "core-module.h")
        )
        if not found:
            raise SystemExit("bench-ns3: the ns3 package has no include/ns3/core-module.h")
    return Path(found[0]).parent.parent.parent


def pypi_build() -> Ns3Build:
    """The PyPI package `ns3` (3.44): a release build with logging and asserts compiled in."""
    prefix = ns3_prefix()
    lib = prefix / "lib64"
    core = next(iter(sorted(lib.glob("libns3.*-core.so"))), None)
    if core is None:
        raise SystemExit(f"bench-ns3: no libns3.*-core.so in {lib}")
    tag = core.name[len("lib") : -len("-core.so")]  # e.g. ns3.44
    return Ns3Build(
        name="pypi",
        label=f"ns-3 {tag.removeprefix('ns')}, PyPI package {NS3_PACKAGE} (release build, NS3_LOG and NS3_ASSERT compiled in)",
        include=prefix / "include",
        lib=lib,
        tag=tag,
        suffix="",
        # The package was built with these (lib64/cmake/ns3/ns3Targets.cmake); headers must agree.
        cxxflags=("-O2", "-std=c++20", "-DNS3_BUILD_PROFILE_RELEASE", "-DNS3_LOG_ENABLE", "-DNS3_ASSERT_ENABLE"),
    )


def twin_command(source: Path, build: Ns3Build, binary: Path) -> list[str]:
    return (
        ["g++", *build.cxxflags, f"-I{build.include}", f"-I{TWIN_JSON.parent}", str(source), "-o", str(binary)]
        + [f"-L{build.lib}", f"-Wl,-rpath,{build.lib}"]
        + [f"-l{build.tag}-{m}{build.suffix}" for m in NS3_LIBS]
    )


def compile_twin(source: Path, build: Ns3Build) -> Path:
    """Compile `source` (a program of this directory, which includes `common.h` and through it
    `bench/twin_json.h`) against `build` into `.build/<stem>-<build>`, unless the binary there
    was built from the same source and headers with the same command against the same build
    (its core library's size and time)."""
    source = source.resolve()  # the key holds the command: one path per program
    binary = BUILD / f"{source.stem}-{build.name}"
    cmd = twin_command(source, build, binary)
    core = build.lib / f"lib{build.tag}-core{build.suffix}.so"
    stat = core.stat()
    headers = COMMON.read_bytes() + TWIN_JSON.read_bytes()
    key = hashlib.sha256(
        source.read_bytes() + headers + json.dumps([cmd, stat.st_size, stat.st_mtime_ns]).encode()
    ).hexdigest()
    stamp = BUILD / f"{binary.name}.key"
    if binary.exists() and stamp.exists() and stamp.read_text() == key:
        return binary
    BUILD.mkdir(exist_ok=True)
    log(f"compiling {source.name} against {build.label} (about a minute)")
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
    import ccsim

    import bench  # bench/bench.py: the scenario `make bench` runs

    config = ccsim.compile(bench.scenario(n, seed=seed))
    for flow in config["flows"]:
        flow["transport"]["params"].update(params)
        if cc != "newreno":
            flow["cc"] = {"kind": cc, "params": {}}
    return config


SPEED = ["wall_s", "process_wall_s", "cpu_s", "peak_rss_mib", "events", "bottleneck_pkts_per_s"]
METRICS = [
    "goodput_mbps",
    "jain",
    "queue_mean_pkts",
    "queue_sd_pkts",
    "drop_ratio",
    "timeouts",
    "fast_recoveries",
    "retransmissions",
    "other_drops",
]


def summarize(runs: list[dict]) -> dict:
    out = {k: statistics.median(r[k] for r in runs) for k in SPEED}
    out.update({k: statistics.fmean(r[k] for r in runs) for k in METRICS})
    return out


def rel(a: float, b: float) -> float:
    """Relative difference of ccsim's `a` from ns-3's `b`."""
    if b == 0:
        return 0.0 if a == 0 else float("inf")
    return (a - b) / b


def report(n: int, seeds: int, c: dict, s: dict, others: dict[str, dict] | None = None) -> dict:
    """Print one flow count's table: ccsim, ns-3's optimized build (`s`, against which the
    targets are judged) and any other builds (`others`, by name), and return the summary."""
    others = others or {}
    speedup = s["wall_s"] / c["wall_s"]
    speedup_proc = s["process_wall_s"] / c["process_wall_s"]
    speedup_cpu = s["cpu_s"] / c["cpu_s"]
    checks = {
        # Judged on CPU time: on a shared, loaded machine a process's wall time depends on
        # what else runs; its CPU time much less.
        "speed": (speedup_cpu, speedup_cpu >= MIN_SPEEDUP, f">= {MIN_SPEEDUP:.0f}x, CPU time"),
        "goodput": (
            rel(c["goodput_mbps"], s["goodput_mbps"]),
            abs(rel(c["goodput_mbps"], s["goodput_mbps"])) <= GOODPUT_TOL,
            "within 5 %",
        ),
        "queue_mean": (
            rel(c["queue_mean_pkts"], s["queue_mean_pkts"]),
            abs(rel(c["queue_mean_pkts"], s["queue_mean_pkts"])) <= QUEUE_TOL,
            "within 20 %",
        ),
        "drop_ratio": (
            rel(c["drop_ratio"], s["drop_ratio"]),
            abs(rel(c["drop_ratio"], s["drop_ratio"])) <= DROP_TOL,
            "within 20 %",
        ),
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
    columns = [("ccsim", c), ("ns-3 optimized", s), *((f"ns-3 {name}", o) for name, o in others.items())]
    print(f"\nN = {n}  ({seeds} seed{'s' if seeds > 1 else ''}; speed: median, metrics: mean over seeds)")
    print(f"  {'':30s}" + "".join(f" {name:>16s}" for name, _ in columns))
    for label, key, fmt in rows:
        print(f"  {label:30s}" + "".join(f" {fmt.format(col[key]):>16s}" for _, col in columns))
    print(
        f"  speed ratio to optimized ns-3  loop wall {speedup:,.0f}x, process wall {speedup_proc:,.0f}x, "
        f"process CPU {speedup_cpu:,.0f}x, bottleneck pkts/s {c['bottleneck_pkts_per_s'] / s['bottleneck_pkts_per_s']:,.0f}x"
    )
    secondary = {}
    for name, o in others.items():
        secondary[name] = {"speedup_cpu": o["cpu_s"] / c["cpu_s"], "optimized_speedup_cpu": o["cpu_s"] / s["cpu_s"]}
        print(
            f"  speed ratio to ns-3 {name:10s} process CPU {secondary[name]['speedup_cpu']:,.0f}x "
            f"(the {name} build takes {secondary[name]['optimized_speedup_cpu']:.2f}x the optimized build's CPU time)"
        )
    for name, (value, ok, target) in checks.items():
        shown = f"{value:,.0f}x" if name == "speed" else f"{value:+.1%}"
        print(f"  {name:30s} {shown:>16s}  {'PASS' if ok else 'FAIL'} ({target}, against optimized ns-3)")
    return {
        "flows": n,
        "seeds": seeds,
        "ccsim": c,
        "ns3": s,
        "speedup": speedup,
        "speedup_process": speedup_proc,
        "speedup_cpu": speedup_cpu,
        "speedup_pkts_per_s": c["bottleneck_pkts_per_s"] / s["bottleneck_pkts_per_s"],
        "checks": {k: {"value": v, "pass": ok, "target": t} for k, (v, ok, t) in checks.items()},
        "other_builds": {name: {"ns3": o, **secondary[name]} for name, o in others.items()},
    }


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
    parser.add_argument(
        "--raw",
        type=Path,
        metavar="DIR",
        help="also keep each process's output, per-flow results included, as DIR/{ccsim,ns3,ns3-pypi}-N-SEED.json",
    )
    parser.add_argument(
        "--ccsim-param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a TCP transport parameter of ccsim's flows (canonical units), e.g. lost_retransmit=false",
    )
    parser.add_argument(
        "--ns3-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="pass an option to the ns-3 twin, e.g. --ns3-arg=--delack=1 (with --ccsim-param "
        "delack_count=1) or --ns3-arg=--cc=TcpLinuxReno",
    )
    parser.add_argument(
        "--cc",
        choices=sorted(TWIN_CC),
        default="newreno",
        help="congestion control of both simulators' flows (the benchmark's: newreno; cubic runs "
        "ccsim's CUBIC against ns-3's TcpCubic, both without HyStart)",
    )
    parser.add_argument(
        "--also-pypi",
        action="store_true",
        help=f"also run the twin against the PyPI package {NS3_PACKAGE} (a slower build: logging and "
        "asserts compiled in), as a secondary column",
    )
    parser.add_argument(
        "--ns3-source",
        type=Path,
        metavar="TARBALL|DIR",
        help="build the optimized ns-3 from this source (an ns-3 release tarball or tree) instead of "
        "Debian's source package",
    )
    parser.add_argument(
        "--ns3-suite",
        metavar="SUITE",
        help="take Debian's ns3 source package of this suite (default: the system's, bookworm: 3.37)",
    )
    parser.add_argument("--ns3-jobs", type=int, help="parallel jobs of the ns-3 build (default: all cores)")
    parser.add_argument(
        "--ccsim-bench",
        type=Path,
        default=CCSIM_BENCH,
        metavar="PATH",
        help="the ccsim-bench binary to measure (default: target/release/ccsim-bench)",
    )
    parser.add_argument("--build-only", action="store_true", help="build ns-3 and compile the twin, run nothing")
    args = parser.parse_args()

    builds = [optimized_build(args.ns3_source, args.ns3_jobs, args.ns3_suite)] + (
        [pypi_build()] if args.also_pypi else []
    )
    binaries = [compile_twin(SOURCE, b) for b in builds]
    print("columns:")
    print(f"  ccsim: {args.ccsim_bench} (cargo release profile)")
    for b, binary in zip(builds, binaries):
        print(f"  ns-3 {b.name}: {b.label}; twin {binary.relative_to(ROOT)} (g++ {' '.join(b.cxxflags)})")
    if args.build_only:
        return 0
    if not args.ccsim_bench.exists():
        log(f"{args.ccsim_bench} missing; run `make bench-ns3`")
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
            c_runs: list[dict] = []
            s_runs: dict[str, list[dict]] = {b.name: [] for b in builds}
            for seed in range(1, seeds + 1):
                path = Path(tmp) / f"dumbbell-{n}-{seed}.json"
                path.write_text(json.dumps(ccsim_config(n, seed, params, args.cc)))
                # Alternated: ccsim, then each ns-3 build, seed after seed.
                c_runs.append(measured("ccsim", n, seed, [str(args.ccsim_bench), str(path)]))
                log(f"N={n} seed {seed}: ccsim loop {c_runs[-1]['wall_s']:.2f} s, CPU {c_runs[-1]['cpu_s']:.2f} s")
                run = {"flows": n, "seed": seed, "ccsim": c_runs[-1]}
                for b, binary in zip(builds, binaries):
                    simulator = "ns3" if b.name == "optimized" else f"ns3-{b.name}"
                    s_runs[b.name].append(
                        measured(simulator, n, seed, [str(binary), f"--flows={n}", f"--seed={seed}", *ns3_args])
                    )
                    log(
                        f"N={n} seed {seed}: ns-3 {b.name} loop {s_runs[b.name][-1]['wall_s']:.1f} s, CPU {s_runs[b.name][-1]['cpu_s']:.1f} s"
                    )
                    run[simulator] = s_runs[b.name][-1]
                raw_runs.append(run)
            others = {b.name: summarize(s_runs[b.name]) for b in builds[1:]}
            summary.append(report(n, seeds, summarize(c_runs), summarize(s_runs["optimized"]), others))
    load = os.getloadavg()
    print(f"\nload average after the runs: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "cc": args.cc,
                    "params": params,
                    "ns3_args": ns3_args,
                    "builds": {b.name: b.label for b in builds},
                    "summary": summary,
                    "runs": raw_runs,
                },
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
