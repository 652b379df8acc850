"""Profile-guided optimization (PGO) of the engine's release builds.

Prints the `RUSTFLAGS` that `make develop` and `make bench` build the engine with: the
compiler is told which branches and calls the engine takes most, and lays out and inlines the
code for them (rustc's `-Cprofile-generate` / `-Cprofile-use`, LLVM's instrumentation PGO). The
results do not change (the same instructions in a different order and inlining); the loop
runs about 13 % fewer instructions on the benchmark (docs/performance.md, round 6).

How: an instrumented `ccsim-bench` is built in `target/pgo/gen` and run on the scenarios that
ship with ccsim (`scenarios/papers`, `scenarios/examples`, the flagship), each shortened to
10 simulated seconds; the benchmark dumbbell is not among them, so that `make bench` measures a
build trained on other work. The profiles are merged with the toolchain's `llvm-profdata` into
`target/pgo/ccsim.profdata`, which is rebuilt only when the engine's sources, the scenarios,
this script or the compiler change.

Prints nothing (a plain release build) when `CCSIM_PGO=0`, or when the toolchain's
`llvm-tools` component is missing and `rustup` cannot add it; a note on stderr says why. All
progress goes to stderr: stdout is the flags alone.

    python bench/pgo.py          # prints e.g. -Cprofile-use=/.../target/pgo/ccsim.profdata
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "target" / "pgo"
PROFILE = OUT / "ccsim.profdata"
STAMP = OUT / "stamp"
#: Each training run is cut to this much simulated time (seconds).
TRAIN_SECONDS = 10


def note(msg: str) -> None:
    print(f"pgo: {msg}", file=sys.stderr, flush=True)


def training_scenarios() -> list[Path]:
    return sorted((ROOT / "scenarios" / "papers").glob("*/*.toml")) + sorted(
        (ROOT / "scenarios" / "examples").glob("*.toml")
    ) + [ROOT / "scenarios" / "flagship.toml"]


def inputs_digest(rustc_version: str) -> str:
    """What the profile depends on: the compiler, the engine's sources, the scenarios it is
    trained on and this script."""
    h = hashlib.sha256(rustc_version.encode())
    files = sorted((ROOT / "crates" / "ccsim-core").rglob("*.rs")) + [
        ROOT / "Cargo.lock",
        ROOT / "Cargo.toml",
        ROOT / "crates" / "ccsim-core" / "Cargo.toml",
        Path(__file__).resolve(),
        *training_scenarios(),
    ]
    for f in files:
        if f.is_file():
            h.update(str(f.relative_to(ROOT)).encode())
            h.update(f.read_bytes())
    return h.hexdigest()


def llvm_profdata(rustc_version: str) -> Path | None:
    """The toolchain's own llvm-profdata (its LLVM must match rustc's), installed with
    rustup's `llvm-tools` component if it is missing."""
    host = next(line.split()[1] for line in rustc_version.splitlines() if line.startswith("host:"))
    sysroot = subprocess.run(["rustc", "--print", "sysroot"], capture_output=True, text=True, check=True).stdout.strip()
    tool = Path(sysroot) / "lib" / "rustlib" / host / "bin" / "llvm-profdata"
    if not tool.is_file() and shutil.which("rustup"):
        note("installing the toolchain's llvm-tools component (rustup component add llvm-tools)")
        subprocess.run(["rustup", "component", "add", "llvm-tools"], capture_output=True, timeout=600)
    return tool if tool.is_file() else None


def train(profdata: Path) -> None:
    gen = OUT / "gen"
    raw = OUT / "raw"
    shutil.rmtree(raw, ignore_errors=True)
    raw.mkdir(parents=True)
    note("building the instrumented engine (target/pgo/gen)")
    env = dict(os.environ, RUSTFLAGS=f"-Cprofile-generate={raw}")
    subprocess.run(
        ["cargo", "build", "--release", "--quiet", "-p", "ccsim-core", "--bin", "ccsim-bench", "--target-dir", str(gen)],
        cwd=ROOT,
        env=env,
        check=True,
    )
    binary = gen / "release" / "ccsim-bench"
    run_env = dict(os.environ, LLVM_PROFILE_FILE=str(raw / "%m_%p.profraw"))
    registry = subprocess.run([str(binary), "--registry"], env=run_env, capture_output=True, text=True, check=True).stdout

    # The Python front compiles the scenarios against this binary's registry, so the engine
    # extension need not exist yet.
    sys.path.insert(0, str(ROOT / "python"))
    import ccsim
    from ccsim.registry import Registry, set_registry

    set_registry(Registry.from_json(registry))
    configs = OUT / "train"
    shutil.rmtree(configs, ignore_errors=True)
    configs.mkdir()
    cap = TRAIN_SECONDS * 1_000_000_000
    for path in training_scenarios():
        try:
            config = ccsim.compile(ccsim.load(path))
        except ccsim.ScenarioError:
            continue  # not a scenario (e.g. piotrowska/queues.toml, a table of queue settings)
        if config["duration_ns"] > cap:
            config["warmup_ns"] = config["warmup_ns"] * cap // config["duration_ns"]
            config["duration_ns"] = cap
        name = path.relative_to(ROOT / "scenarios").with_suffix(".json").as_posix().replace("/", "_")
        (configs / name).write_text(json.dumps(config))
    runs = sorted(configs.glob("*.json"))
    note(f"training on {len(runs)} shipped scenarios, {TRAIN_SECONDS} s each")
    for config in runs:
        subprocess.run([str(binary), str(config)], env=run_env, stdout=subprocess.DEVNULL, check=True)
    subprocess.run([str(profdata), "merge", "-o", str(PROFILE), str(raw)], check=True)


def main() -> int:
    if os.environ.get("CCSIM_PGO", "1") == "0":
        note("CCSIM_PGO=0: plain release build")
        return 0
    rustc_version = subprocess.run(["rustc", "-vV"], capture_output=True, text=True, check=True).stdout
    digest = inputs_digest(rustc_version)
    if not (PROFILE.is_file() and STAMP.is_file() and STAMP.read_text() == digest):
        profdata = llvm_profdata(rustc_version)
        if profdata is None:
            note("no llvm-profdata in the toolchain (rustup component add llvm-tools failed): plain release build")
            return 0
        OUT.mkdir(parents=True, exist_ok=True)
        STAMP.unlink(missing_ok=True)
        try:
            train(profdata)
        except (subprocess.CalledProcessError, OSError) as e:
            note(f"training failed ({e}): plain release build")
            return 0
        STAMP.write_text(digest)
    print(f"-Cprofile-use={PROFILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
