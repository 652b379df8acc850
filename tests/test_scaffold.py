"""``ccsim new cc NAME`` and ``ccsim new queue NAME``, run as a user runs them, on a copy of the
workspace's sources: the file written and the registration in ``mod.rs``, the generated tests
compiled and run by ``cargo test`` (each must be seen passing), rustfmt's agreement with the
generated code, and every bad input: one line, exit code 2, the tree untouched.

The compile test builds into ``target/scaffold`` of this checkout, kept between runs, from a
copy made afresh at ``target/scaffold/tree`` on every run. The copy's place stays the same
because rustc's incremental cache holds only for the same working directory: from there a rerun
recompiles the engine crate incrementally (the generated files are new each time) and reuses
its dependencies, about half the time of a build from a new temporary folder.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from ccsim.cli.new import FAMILIES, MAX_NAME, render
from conftest import ROOT, run_cli

# What a ccsim source tree needs for `cargo test -p ccsim-core` (build output left out).
SOURCES = ("Cargo.toml", "Cargo.lock", "rustfmt.toml", "crates")
CARGO_TARGET = ROOT / "target" / "scaffold"
SCAFFOLD_TREE = CARGO_TARGET / "tree"
CC_DIR = Path("crates/ccsim-core/src/tcp/cc")
QDISC_DIR = Path("crates/ccsim-core/src/qdisc")
NEW = {"cc": ("mycc", CC_DIR), "queue": ("myq", QDISC_DIR)}


def copy_tree(dest: Path) -> Path:
    """The workspace's sources under ``dest``, with their modification times."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in SOURCES:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("target"))
        elif src.exists():
            shutil.copy2(src, dest / name)
    return dest


def snapshot(tree: Path) -> dict[str, bytes]:
    return {p.relative_to(tree).as_posix(): p.read_bytes() for p in sorted(tree.rglob("*")) if p.is_file()}


def declared_modules(mod_rs: str) -> list[str]:
    return re.findall(r"^(?:pub(?:\(crate\))? )?mod (\w+);$", mod_rs, re.MULTILINE)


def table_entries(mod_rs: str, table: str) -> list[str]:
    body = re.search(rf"pub static {table}: &\[\w+\] = &\[\n(.*?)\n\];", mod_rs, re.DOTALL)
    assert body is not None, table
    return [line.strip() for line in body.group(1).splitlines()]


def generated_tests(source: str) -> list[str]:
    return re.findall(r"#\[test\]\s*fn (\w+)\(", source)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_tree(tmp_path_factory.mktemp("pristine"))


@dataclass
class Scaffolded:
    """A fresh copy of the workspace after ``ccsim new cc mycc`` and ``ccsim new queue myq``."""

    tree: Path
    procs: dict[str, subprocess.CompletedProcess[str]]  # by family
    mod_rs_before: dict[str, str]  # the family's mod.rs as copied, by family


@pytest.fixture(scope="module")
def scaffolded() -> Scaffolded:
    shutil.rmtree(SCAFFOLD_TREE, ignore_errors=True)
    tree = copy_tree(SCAFFOLD_TREE)
    before = {kind: (tree / folder / "mod.rs").read_text(encoding="utf-8") for kind, (_, folder) in NEW.items()}
    procs = {kind: run_cli("new", kind, name, "--root", str(tree)) for kind, (name, _) in NEW.items()}
    return Scaffolded(tree, procs, before)


@pytest.mark.parametrize("kind", list(NEW))
def test_new_writes_the_model_file_and_registers_it(kind: str, scaffolded: Scaffolded) -> None:
    tree = scaffolded.tree
    name, folder = NEW[kind]
    family = FAMILIES[kind]
    proc = scaffolded.procs[kind]
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    # What was written, then the next steps.
    assert f"wrote {folder.as_posix()}/{name}.rs" in proc.stdout
    assert f"pub mod {name}; and {name}::MODEL in {family.table}" in proc.stdout
    for step in (
        f"cargo test -p ccsim-core --lib {name}",
        "fill in the header",
        "make develop",
        "ccsim list --markdown > docs/models.md",
        "ccsim schema --markdown --output docs/scenario.md",
    ):
        assert step in proc.stdout, step

    source = (tree / folder / f"{name}.rs").read_text(encoding="utf-8")
    header = [line for line in source.splitlines() if line.startswith("//!")]
    for place in ("Specification:", "Equations implemented:", "Draft revision:", "Reference implementation"):
        assert any(place in line for line in header), place
    assert any("Deviations" in line for line in header)
    assert f'pub const MODEL: {family.model_type} = {family.model_type} {{\n    name: "{name}",' in source
    assert source.count("ParamSpec::new(") == 1
    kit = "crate::tcp::cc::testkit" if kind == "cc" else "crate::qdisc::testkit"
    assert f"use {kit}::" in source
    assert len(generated_tests(source)) >= 4

    # Exactly two lines added to mod.rs: the module, in name order, and the table's last entry.
    before = scaffolded.mod_rs_before[kind].splitlines()
    after = (tree / folder / "mod.rs").read_text(encoding="utf-8")
    assert sorted(after.splitlines()) == sorted([*before, f"pub mod {name};", f"    {name}::MODEL,"])
    modules = declared_modules(after)
    assert name in modules and modules == sorted(modules)
    assert table_entries(after, family.table)[-1] == f"{name}::MODEL,"


def test_generated_code_is_as_rustfmt_writes_it(scaffolded: Scaffolded) -> None:
    rustfmt = shutil.which("rustfmt")
    if rustfmt is None:
        pytest.skip("rustfmt is not on PATH (rustup component add rustfmt)")
    tree = scaffolded.tree
    changed = [folder / f"{name}.rs" for name, folder in NEW.values()] + [CC_DIR / "mod.rs", QDISC_DIR / "mod.rs"]
    # rustfmt follows mod.rs into every module it declares; only the files written here count.
    proc = subprocess.run(
        [rustfmt, "--check", "--edition", "2021", *map(str, changed)],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=300,
    )
    diffs = re.findall(r"^Diff in (.+?) at line", proc.stdout, re.MULTILINE)
    assert not [d for d in diffs if any(d.endswith(str(c)) for c in changed)], proc.stdout[-3000:]
    assert "error" not in proc.stderr, proc.stderr[-3000:]


@pytest.mark.parametrize("kind", list(NEW))
@pytest.mark.parametrize("name", ["a", "x" * MAX_NAME, "abc_d9_e2" + "f" * (MAX_NAME - 9)])
def test_names_of_every_allowed_length_render_as_rustfmt_writes_them(kind: str, name: str, tmp_path: Path) -> None:
    rustfmt = shutil.which("rustfmt")
    if rustfmt is None:
        pytest.skip("rustfmt is not on PATH (rustup component add rustfmt)")
    assert len(name) <= MAX_NAME
    shutil.copy2(ROOT / "rustfmt.toml", tmp_path / "rustfmt.toml")
    path = tmp_path / f"{name}.rs"
    path.write_text(render(FAMILIES[kind], name), encoding="utf-8")
    proc = subprocess.run(
        [rustfmt, "--check", "--edition", "2021", str(path)], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def test_generated_tests_compile_run_and_pass(scaffolded: Scaffolded) -> None:
    cargo = shutil.which("cargo")
    if cargo is None:
        pytest.skip("cargo is not on PATH: the generated Rust files cannot be compiled here")
    tree, procs = scaffolded.tree, scaffolded.procs
    assert all(p.returncode == 0 for p in procs.values()), [p.stderr for p in procs.values()]
    # Cargo takes one test filter; the test binary takes several (after --).
    proc = subprocess.run(
        [cargo, "test", "-p", "ccsim-core", "--lib", "--", *(name for name, _ in NEW.values())],
        cwd=tree,
        env={**os.environ, "CARGO_TARGET_DIR": str(CARGO_TARGET)},
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]

    passed = set(re.findall(r"^test (\S+) \.\.\. ok$", proc.stdout, re.MULTILINE))
    expected = set()
    for name, folder in NEW.values():
        module = "::".join(folder.parts[3:] + (name, "tests"))  # after crates/ccsim-core/src
        source = (tree / folder / f"{name}.rs").read_text(encoding="utf-8")
        expected |= {f"{module}::{test}" for test in generated_tests(source)}
    assert len(expected) >= 8
    assert passed == expected, proc.stdout[-3000:]
    assert re.search(rf"^test result: ok\. {len(expected)} passed; 0 failed", proc.stdout, re.MULTILINE)
    # No compiler warning about the generated files (clippy -D warnings would refuse them).
    warned = [line for line in proc.stderr.splitlines() if "-->" in line and re.search(r"/(mycc|myq)\.rs:", line)]
    assert not warned, proc.stderr[-3000:]


def test_without_root_the_tree_is_found_above_the_current_directory(pristine: Path, tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(pristine, tree)
    proc = run_cli("new", "queue", "found", cwd=tree / QDISC_DIR)
    assert proc.returncode == 0, proc.stderr
    assert (tree / QDISC_DIR / "found.rs").is_file()
    assert "found::MODEL," in (tree / QDISC_DIR / "mod.rs").read_text(encoding="utf-8")


def assert_refused(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert proc.stdout == ""
    for needle in needles:
        assert needle in lines[0], lines[0]


RULE = "lowercase Rust identifier"


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["cc", "MyCC"], ["NAME: 'MyCC' is not allowed", RULE]),
        (["cc", "1cc"], ["NAME: '1cc' is not allowed", RULE]),
        (["queue", "my-q"], ["NAME: 'my-q' is not allowed", RULE]),
        (["cc", "my__cc"], ["'my__cc' is not allowed", "single underscores"]),
        (["cc", "my_cc_"], ["'my_cc_' is not allowed", RULE]),
        (["queue", "q" * (MAX_NAME + 1)], ["is not allowed", f"at most {MAX_NAME} characters"]),
        (["cc", ""], ["NAME: '' is not allowed", RULE]),
        (["cc", "fn"], ["NAME: 'fn' is a Rust keyword"]),
        (["queue", "vec"], ["NAME: 'vec' would name the model's type Vec", "choose another name"]),
        (["cc", "ack"], ["type Ack", "choose another name"]),
        (["queue", "fifo"], ["queue discipline 'fifo' already exists in crates/ccsim-core/src/qdisc", "droptail"]),
        (["cc", "cubic"], ["congestion control 'cubic' already exists", "choose a name not taken", "newreno"]),
        (["queue", "codel"], ["queue discipline 'codel' already exists"]),
        (["cc", "tests"], ["congestion control 'tests' already exists"]),  # mod.rs's own `mod tests`
        (["cc", "testkit"], ["'testkit' already exists"]),
        (["app", "x"], ["invalid choice: 'app'", "'cc'", "'queue'"]),
        (["cc"], ["NAME"]),
    ],
)
def test_bad_names_are_refused_and_nothing_is_written(
    args: list[str], needles: list[str], pristine: Path, tmp_path: Path
) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(pristine, tree)
    before = snapshot(tree)
    assert_refused(run_cli("new", *args, "--root", str(tree)), *needles)
    assert snapshot(tree) == before


def test_a_file_or_a_registered_name_already_there_is_refused(pristine: Path, tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(pristine, tree)
    # A file nobody registered yet.
    (tree / QDISC_DIR / "draft.rs").write_text("// work in progress\n", encoding="utf-8")
    # A model whose scenario name differs from its module's.
    (tree / CC_DIR / "other.rs").write_text(
        'pub const MODEL: CcModel = CcModel {\n    name: "alias",\n', encoding="utf-8"
    )
    before = snapshot(tree)
    assert_refused(
        run_cli("new", "queue", "draft", "--root", str(tree)),
        "NAME: crates/ccsim-core/src/qdisc/draft.rs already exists",
        "not registered",
    )
    assert_refused(run_cli("new", "cc", "alias", "--root", str(tree)), "congestion control 'alias' already exists")
    assert snapshot(tree) == before


def test_a_root_that_is_not_a_ccsim_tree_is_refused(pristine: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert_refused(
        run_cli("new", "cc", "x", "--root", str(empty)), "--root", "is not a ccsim source tree", "Cargo.toml"
    )
    assert_refused(run_cli("new", "cc", "x", "--root", str(tmp_path / "missing")), "--root", "does not exist")
    # Without --root, from a folder outside any tree.
    assert_refused(run_cli("new", "cc", "x", cwd=empty), "--root", "no ccsim source tree at or above", "--root DIR")
    assert list(empty.iterdir()) == []

    # A tree whose mod.rs lacks the table: refused before anything is written.
    tree = tmp_path / "tree"
    shutil.copytree(pristine, tree)
    mod_rs = tree / CC_DIR / "mod.rs"
    mod_rs.write_text(mod_rs.read_text(encoding="utf-8").replace("pub static CCS:", "pub static OTHER:"))
    before = snapshot(tree)
    assert_refused(
        run_cli("new", "cc", "x", "--root", str(tree)),
        "crates/ccsim-core/src/tcp/cc/mod.rs",
        "the table 'pub static CCS",
    )
    assert snapshot(tree) == before


def test_the_templates_are_shipped_in_the_wheel() -> None:
    """maturin puts every file under python/ccsim that git does not ignore into the wheel
    (pyproject.toml: python-source = "python"), so the templates must not be ignored."""
    templates = sorted((ROOT / "python" / "ccsim" / "cli" / "templates").iterdir())
    assert {p.name for p in templates} == {FAMILIES[k].template for k in FAMILIES}
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: cannot ask git which files it ignores")
    proc = subprocess.run([git, "check-ignore", *map(str, templates)], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 1, proc.stdout  # 1: none of them is ignored
