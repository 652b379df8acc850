"""Scenario files never execute code and never write outside the chosen output directory.
Checked with hostile names in every name-like field, hostile sweep values and ``--set`` values,
symlinks planted in the output directory, and the source audit that backs the claim."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import ccsim
import pytest
from ccsim import paths
from ccsim.errors import ScenarioError
from ccsim.experiments import sweep
from conftest import ROOT, run_cli

HOSTILE = [
    "../../escape",
    "/tmp/absolute",
    "..",
    "a/../../b",
    "C:\\\\evil",
    "$\\\\frac{$",
    "x\\u0000y",
    "__import__('os').system('touch PWNED')",
    "{{7*7}}",
    "%s%n",
    "'; rm -rf /; '",
]

RUN_FILES = {
    "provenance.json",
    "scenario.toml",
    "flows.parquet",
    "queues.parquet",
    "traces.parquet",
    "summary.json",
    "queue_length.png",
    "cwnd.png",
    "goodput.png",
    "control.png",
    "control_traces.parquet",
    "control.parquet",
}


def hostile_scenario(name: str) -> str:
    """An explicit network whose node, flow, group and control-loop names are all ``name``
    (with suffixes where names must differ)."""
    q = '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"' if "\\u" not in name else f'"{name}"'
    n1, n2 = q[:-1] + '-h1"', q[:-1] + '-h2"'
    return f"""
description = {q}
[simulation]
duration = "300ms"
[topology]
kind = "explicit"
nodes = [ {{ name = {n1}, kind = "host" }}, {{ name = {q}, kind = "router" }}, {{ name = {n2}, kind = "host" }} ]
links = [ {{ a = {n1}, b = {q}, rate = "10Mbps", delay = "1ms" }}, {{ a = {q}, b = {n2}, rate = "5Mbps", delay = "1ms" }} ]
[[flows]]
src = {n1}
dst = {n2}
name = {q}
group = {q}
[[control]]
name = {q[:-1] + '-loop"'}
plant_host = {n1}
controller_host = {n2}
[trace]
interval = "10ms"
"""


def snapshot(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_names_write_only_the_fixed_files_inside_out(tmp_path: Path, name: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    scenario = work / "s.toml"
    scenario.write_text(hostile_scenario(name), encoding="utf-8")
    before = snapshot(tmp_path)
    proc = run_cli("run", str(scenario), "--out", str(work / "out"), "--quiet", cwd=work)
    # Names are data: every one of them is a valid name, and the run writes its usual files.
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    created = snapshot(tmp_path) - before
    assert all(p.startswith("work/out") for p in created), created
    written = {p.name for p in (work / "out").iterdir()}
    assert written <= RUN_FILES and {"flows.parquet", "summary.json", "goodput.png", "control.png"} <= written
    assert not (work / "PWNED").exists() and not Path("PWNED").exists()


def test_a_symlink_planted_in_out_cannot_redirect_a_write(tmp_path: Path) -> None:
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me", encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").symlink_to(outside)
    scenario = tmp_path / "s.toml"
    scenario.write_text(hostile_scenario("plain"), encoding="utf-8")
    proc = run_cli("run", str(scenario), "--out", str(out), "--quiet")
    assert proc.returncode == 2 and "--out" in proc.stderr and "leads outside" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert outside.read_text(encoding="utf-8") == "keep me"
    # A symlink that stays inside the directory is replaced by the real file, not followed.
    (out / "summary.json").unlink()
    (out / "other.json").write_text("old", encoding="utf-8")
    (out / "summary.json").symlink_to(out / "other.json")
    proc = run_cli("run", str(scenario), "--out", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert not (out / "summary.json").is_symlink() and (out / "other.json").read_text() == "old"


def test_hostile_sweep_values_and_set_values_stay_inside_out(tmp_path: Path) -> None:
    (tmp_path / "base.toml").write_text(hostile_scenario("base"), encoding="utf-8")
    sweep_file = tmp_path / "sweep.toml"
    sweep_file.write_text(
        'scenario = "base.toml"\nseeds = 1\n[grid]\n"flows[0].name" = ["../../up", "/abs/path", ".."]\n',
        encoding="utf-8",
    )
    spec = sweep.load_sweep(sweep_file, ["flows[0].group=../../../grp"])
    before = snapshot(tmp_path)
    result = sweep.run_sweep(spec, tmp_path / "out", jobs=1)
    assert result.ran == 3 and result.failed == 0
    created = snapshot(tmp_path) - before
    assert created and all(p.startswith("out") for p in created), created
    # Run directories are named by hashes of their configuration, never by a value.
    assert all(re.fullmatch(r"[0-9a-f]{16}", d.name) for d in (tmp_path / "out" / "runs").iterdir())


@pytest.mark.parametrize(
    "name", ["", ".", "..", "a/b", "../x", "/abs", "a\\b", "C:x", "a\x00b", "tab\tname", "x" * 256]
)
def test_safe_component_refuses_everything_but_a_plain_name(name: str) -> None:
    with pytest.raises(ScenarioError) as info:
        paths.safe_component(name, "runs.name", "f.toml")
    assert info.value.field == "runs.name" and info.value.file == "f.toml"


@pytest.mark.parametrize("name", ["flows.parquet", "a b", "ключ", ".hidden", "x" * 255, "a..b"])
def test_safe_component_accepts_plain_names(name: str) -> None:
    assert paths.safe_component(name) == name


def test_inside_refuses_a_symlink_leading_out(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "link").symlink_to(tmp_path)
    with pytest.raises(ScenarioError, match="leads outside"):
        paths.inside(tmp_path / "d", "link")
    assert paths.inside(tmp_path / "d", "file") == tmp_path / "d" / "file"


def test_a_failed_atomic_write_leaves_neither_target_nor_temporary(tmp_path: Path) -> None:
    target = tmp_path / "x.parquet"

    def boom(tmp: Path) -> None:
        tmp.write_text("half")
        raise OSError("disk full")

    with pytest.raises(OSError):
        paths.write_atomically(target, boom)
    assert list(tmp_path.iterdir()) == []


# --- the audit: scenario files are data -------------------------------------------------------------

# Ways Python code can turn text into code or objects; none may appear in the package.
FORBIDDEN = [
    r"\beval\(",
    r"\bexec\(",
    r"\bpickle\.loads?\(",
    r"\bmarshal\.",
    r"\byaml\.",
    r"__import__\(",
    r"(?<![\w.])(?<!def )compile\(",
    r"\bshelve\.",
    r"\bsubprocess\.",
    r"os\.system\(",
    r"\bruamel\b",
]


def test_the_package_has_no_way_to_execute_text_from_a_file() -> None:
    sources = sorted((ROOT / "python" / "ccsim").rglob("*.py"))
    assert sources
    found = []
    for path in sources:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            found += [
                f"{path.relative_to(ROOT)}:{n}: {line.strip()}" for pattern in FORBIDDEN if re.search(pattern, code)
            ]
    assert not found, found
    # The dynamic imports take their module name from a fixed table, never from a file; but for
    # Python models (engine/user_models.py), whose code a scenario names on purpose with its
    # `python` key (docs/python-models.md: such a scenario is code), tested below.
    dynamic = [str(p.relative_to(ROOT)) for p in sources if "import_module(" in p.read_text(encoding="utf-8")]
    assert sorted(dynamic) == [
        "python/ccsim/cli/common.py",
        "python/ccsim/engine/user_models.py",
        "python/ccsim/experiments/reproduce/__init__.py",
    ]
    text = (ROOT / "python" / "ccsim" / "experiments" / "reproduce" / "__init__.py").read_text(encoding="utf-8")
    assert re.search(r'import_module\(f"\{__name__\}\.\{_MODULES\[paper_id\]\}"\)', text)


def test_code_in_string_fields_is_only_text(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    payload = f"__import__('os').system('touch {marker}')"
    scenario = tmp_path / "s.toml"
    scenario.write_text(
        hostile_scenario("h").replace('description = "h"', f'description = "{payload}"'), encoding="utf-8"
    )
    for args in (
        ["validate", str(scenario)],
        ["run", str(scenario), "--quiet", "--set", f"flows[0].name={payload}"],
        ["validate", str(scenario), "--set", f"simulation.duration=__import__('os').system('touch {marker}')"],
    ):
        proc = run_cli(*args)
        assert proc.returncode in (0, 2) and "Traceback" not in proc.stderr, proc.stderr
    assert not marker.exists()
    assert os.listdir(tmp_path) == ["s.toml"]


def test_only_the_python_key_loads_code_and_never_a_pickle_from_a_file(tmp_path: Path) -> None:
    """A scenario runs Python only where its `python` key names a model file or module; a
    pickled class (what ccsim ships to its own workers) is refused from a scenario file or a
    replay file, so that no text in a file is ever unpickled."""
    import base64
    import pickle

    marker = tmp_path / "PWNED"

    class Boom:
        def __reduce__(self) -> tuple[Any, ...]:
            return (os.system, (f"touch {marker}",))

    payload = "pickle:" + base64.b64encode(pickle.dumps(Boom())).decode()
    scenario = tmp_path / "s.toml"
    scenario.write_text(hostile_scenario("h"), encoding="utf-8")
    proc = run_cli("validate", str(scenario), "--set", f'flows[0].cc={{python = "{payload}"}}')
    assert proc.returncode == 2 and "a pickled class cannot be named in a file" in proc.stderr, proc.stderr
    replay = tmp_path / "replay.json"
    config = {"flows": [{"cc": {"kind": "x", "params": {}, "external": payload}}]}
    replay.write_text(json.dumps({"ccsim_replay": 1, "config": config}), encoding="utf-8")
    with pytest.raises(ScenarioError, match="cannot be replayed from a file"):
        ccsim.replay(replay)
    assert not marker.exists()
