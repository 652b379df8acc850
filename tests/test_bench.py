"""bench/bench.py (`make bench`): the configurations it runs, written out with
`--write-configs` for the check runs docs/performance.md names, and its refusal of a
warm-up that is not inside the run. The timing itself is `make bench`'s, never a test's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def bench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "bench" / "bench.py"), *args], capture_output=True, text=True)


def test_written_configurations_are_the_benchmark_at_the_given_length(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    import ccsim

    import bench as bench_module

    done = bench("--flows", "10,90", "--duration", "5", "--warmup", "2.5", "--write-configs", str(tmp_path))
    assert done.returncode == 0, done.stderr
    for n in (10, 90):
        written = json.loads((tmp_path / f"dumbbell-{n}.json").read_text())
        assert (written["duration_ns"], written["warmup_ns"], len(written["flows"])) == (5 * 10**9, 2_500_000_000, n)
        assert written == ccsim.compile(bench_module.scenario(n, seed=1, duration_s=5, warmup_s=2.5))
    # Without the options: the benchmark's own 30 s with statistics from 10 s.
    assert bench("--flows", "10", "--write-configs", str(tmp_path)).returncode == 0
    written = json.loads((tmp_path / "dumbbell-10.json").read_text())
    assert written == ccsim.compile(bench_module.scenario(10, seed=1))
    assert (written["duration_ns"], written["warmup_ns"]) == (30 * 10**9, 10 * 10**9)


def test_a_warmup_outside_the_run_is_refused(tmp_path: Path) -> None:
    done = bench("--duration", "5", "--warmup", "5", "--write-configs", str(tmp_path))
    assert done.returncode == 2
    assert "--warmup < --duration" in done.stderr
    assert not list(tmp_path.iterdir())


def test_counting_instructions_without_valgrind_says_what_is_missing(tmp_path: Path) -> None:
    """`--instructions` runs callgrind; where valgrind is not on the PATH it says so and exits 2
    (the count itself is measured by hand, like every speed figure)."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench.py"), "--instructions", "--flows", "10"],
        capture_output=True,
        text=True,
        env={"PATH": str(tmp_path)},
    )
    assert done.returncode == 2
    assert "--instructions needs valgrind" in done.stderr
