"""The built wheel, installed into a fresh virtual environment, reproduces a paper from a
directory that has no checkout around it: the papers' scenario files must travel inside the
package (``ccsim/experiments/reproduce/scenarios/``), not be looked up beside the source tree.

The wheel is built by maturin with the checkout's Cargo target directory, so after
``make develop`` the engine is not compiled again (about a second). The fresh environment
borrows the third-party dependencies of the running one through a ``.pth`` line instead of
downloading them; the wheel itself is installed with ``--no-deps --no-index``. A ``.pth`` line
only adds a directory to ``sys.path``: the ``ccsim.pth`` that ``maturin develop`` leaves in the
running environment (pointing at ``python/``) is not processed, and the fresh environment's own
site-packages, where the wheel goes, comes first.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAPER_SCENARIOS = ROOT / "python" / "ccsim" / "experiments" / "reproduce" / "scenarios"


def _maturin() -> str:
    beside = Path(sys.executable).parent / "maturin"
    found = str(beside) if beside.exists() else shutil.which("maturin")
    if found is None:
        pytest.skip("maturin is not installed (`make setup` installs it into .venv)")
    return found


def test_installed_wheel_reproduces_a_paper_outside_the_checkout(tmp_path: Path) -> None:
    env = dict(os.environ)
    env.setdefault("CARGO_TARGET_DIR", str(ROOT / "target"))
    for var in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"):
        env.pop(var, None)

    dist = tmp_path / "dist"
    build = subprocess.run(
        [_maturin(), "build", "--release", "--interpreter", sys.executable, "--out", str(dist)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert build.returncode == 0, build.stderr[-3000:]
    (wheel,) = dist.glob("ccsim-*.whl")

    # Every paper's scenario file is in the wheel, at the path the reproductions read.
    shipped = {n for n in zipfile.ZipFile(wheel).namelist() if n.startswith("ccsim/experiments/reproduce/scenarios/")}
    expected = {
        "ccsim/experiments/reproduce/scenarios/" + p.relative_to(PAPER_SCENARIOS).as_posix()
        for p in PAPER_SCENARIOS.rglob("*.toml")
    }
    assert len(expected) >= 5 and shipped == expected

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python, ccsim = venv / "bin" / "python", venv / "bin" / "ccsim"
    site = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    borrowed = dict.fromkeys([sysconfig.get_path("purelib"), sysconfig.get_path("platlib")])
    (site / "borrowed-dependencies.pth").write_text("".join(f"{p}\n" for p in borrowed))
    install = subprocess.run(
        [
            python,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-index",
            "--no-deps",
            str(wheel),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert install.returncode == 0, install.stderr

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env["MPLBACKEND"] = "Agg"
    where = subprocess.run(
        [python, "-c", "import ccsim; print(ccsim.__file__)"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(site), where.stdout  # the wheel, not the checkout

    # Every paper builds its runs from the packaged files (a missing file fails here) ...
    build_runs = (
        "import ccsim.experiments.reproduce as r\n"
        "for p in r.papers():\n"
        "    assert r.paper(p).runs(True) and r.paper(p).runs(False), p\n"
    )
    runs = subprocess.run(
        [python, "-c", build_runs], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=300
    )
    assert runs.returncode == 0, runs.stderr

    # ... and one reproduces end to end with the installed command.
    out = tmp_path / "out"
    proc = subprocess.run(
        [ccsim, "reproduce", "dedu-ncs", "--quick", "--out", str(out)],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    report = out / "dedu-ncs" / "report.md"
    assert report.exists() and "4 runs, 4 simulated now" in report.read_text(encoding="utf-8")
    assert (out / "dedu-ncs" / "table_1.csv").exists()
