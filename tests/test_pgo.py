"""bench/pgo.py (the profile-guided release build of `make develop` and `make bench`): what it
trains on, and that it can be turned off. That the optimized build gives the same results is
what the rest of this suite checks, since it runs on that build."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import ccsim

ROOT = Path(__file__).resolve().parent.parent


def load_pgo():
    spec = importlib.util.spec_from_file_location("bench_pgo", ROOT / "bench" / "pgo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_training_covers_the_shipped_scenarios_but_not_the_benchmark():
    pgo = load_pgo()
    compiled = []
    for path in pgo.training_scenarios():
        try:
            compiled.append(ccsim.compile(ccsim.load(path)))
        except ccsim.ScenarioError:
            assert path.name == "queues.toml", f"{path} does not compile"
    # Every paper's scenarios and the examples: TCP variants, AQMs, DCCP, control loops.
    assert len(compiled) >= 12
    ccs = {f["cc"]["kind"] for c in compiled for f in c["flows"] if f.get("cc")}
    assert {"newreno", "cubic", "ance", "vegas"} <= ccs, ccs
    assert not any("bench" in p.parts for p in pgo.training_scenarios())


def test_the_profile_is_keyed_to_the_compiler():
    pgo = load_pgo()
    a = pgo.inputs_digest("rustc 1.0")
    assert a == pgo.inputs_digest("rustc 1.0")
    assert a != pgo.inputs_digest("rustc 2.0")


def test_ccsim_pgo_0_gives_a_plain_build():
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "pgo.py")],
        env=dict(os.environ, CCSIM_PGO="0"),
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout == ""
    assert "plain release build" in out.stderr
