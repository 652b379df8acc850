"""``ccsim new cc NAME`` and ``ccsim new queue NAME``: start a new model as docs/extending.md
describes, one file plus its registration. The file comes from a template (``templates/``): a
header with a place for the model's source, its ``MODEL`` with one example parameter, a
working example law (AIMD; a FIFO with a limit) and tests of that law on the family's test
kit. The registration is ``pub mod NAME;`` in the family's module list (kept sorted, as rustfmt
keeps it) and ``NAME::MODEL,`` at the end of its table.

Everything is checked before anything is written: the name, the tree, that neither the name
nor the file exists yet, that the family's ``mod.rs`` has the places to write to. A mistake is
one line naming what is wrong and what is allowed (exit code 2), and leaves the tree as it was.
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import ScenarioError, one_line, show
from .common import EXIT_OK

# Where a ccsim source tree is recognised (the engine crate's manifest).
MARKER = Path("crates") / "ccsim-core" / "Cargo.toml"

# A module, file and scenario name: snake case, which rustc's style lints accept (no double or
# trailing underscore), and short enough that the generated lines stay as rustfmt writes them.
NAME_RE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")
MAX_NAME = 32
NAME_RULE = (
    f"a lowercase Rust identifier in snake case: a letter a-z first, then a-z, 0-9 and single "
    f"underscores, at most {MAX_NAME} characters (e.g. my_cc)"
)

# Strict and reserved keywords of every edition (raw identifiers are not offered).
RUST_KEYWORDS = frozenset(
    "as break const continue crate else enum extern false fn for if impl in let loop match mod move mut pub "
    "ref return self static struct super trait true type unsafe use where while async await dyn abstract "
    "become box do final macro override priv typeof unsized virtual yield try gen".split()
)

# Names of the standard prelude a generated type must not shadow.
PRELUDE = frozenset(
    "Option Some None Result Ok Err Vec String Box ToString ToOwned Clone Copy Default Debug Drop Eq PartialEq "
    "Ord PartialOrd Send Sync Sized Unpin Iterator IntoIterator DoubleEndedIterator ExactSizeIterator Extend "
    "FromIterator Fn FnMut FnOnce From Into TryFrom TryInto AsRef AsMut Self".split()
)


@dataclass(frozen=True)
class Family:
    """Where a family's models live and what its template uses."""

    title: str
    folder: Path  # relative to the tree's root
    table: str  # the static in mod.rs that lists every MODEL
    model_type: str  # the type of MODEL
    template: str  # file name under templates/
    example: str  # what the template's example law is, for the summary
    imports: frozenset[str]  # type names the template imports: the new type must differ


FAMILIES: dict[str, Family] = {
    "cc": Family(
        title="congestion control",
        folder=Path("crates") / "ccsim-core" / "src" / "tcp" / "cc",
        table="CCS",
        model_type="CcModel",
        template="cc.rs.j2",
        example="AIMD with parameter increase",
        imports=frozenset(
            "Ack CcModel CcState Congestion CongestionControl ParamKind ParamSpec ParamValue Params Randomness "
            "Rng Stream Setup TestSender BTreeMap".split()
        ),
    ),
    "queue": Family(
        title="queue discipline",
        folder=Path("crates") / "ccsim-core" / "src" / "qdisc",
        table="QUEUES",
        model_type="QueueModel",
        template="queue.rs.j2",
        example="FIFO with parameter limit",
        imports=frozenset(
            "Fifo DropReason QdiscCtx QueueDisc QueueModel Packet ParamKind ParamSpec ParamValue Params Size "
            "Randomness Fate Harness".split()
        ),
    ),
}

# A module declaration of mod.rs (one line, at the start of it), with its name.
MOD_DECL = re.compile(r"(?:pub(?:\([a-z]+\))? )?mod ([A-Za-z_][A-Za-z0-9_]*);\s*")
# Any module of mod.rs, declared or inline (`mod tests {`): a new module must not clash.
ANY_MOD = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+([A-Za-z_][A-Za-z0-9_]*)\b", re.MULTILINE)


def _cmd_new(args: argparse.Namespace) -> int:
    family = FAMILIES[args.kind]
    root = _root(args.root)
    name = _check_name(args.name)
    plan = _plan(root, family, name)
    _write(root, plan)
    _report(root, family, name, plan)
    return EXIT_OK


@dataclass(frozen=True)
class Plan:
    """What ``ccsim new`` writes: a new file and the new text of the family's mod.rs."""

    file: Path  # relative to the root
    text: str
    mod_rs: Path  # relative to the root
    mod_text: str


def find_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` holding crates/ccsim-core/Cargo.toml."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / MARKER).is_file():
            return folder
    return None


def _root(given: str | None) -> Path:
    if given is None:
        cwd = Path.cwd()
        found = find_root(cwd)
        if found is None:
            raise ScenarioError(
                "",
                "--root",
                f"no ccsim source tree at or above {one_line(str(cwd))} (a folder holding {MARKER.as_posix()}); "
                "run this inside one or give --root DIR",
            )
        return found
    root = Path(given)
    if not (root / MARKER).is_file():
        what = "does not exist" if not root.exists() else "is not a ccsim source tree"
        raise ScenarioError(
            "",
            "--root",
            f"{one_line(given)} {what}: give the folder of a ccsim checkout, the one holding {MARKER.as_posix()}",
        )
    return root


def type_name(name: str) -> str:
    """The Rust type of model ``name``: ``my_cc`` -> ``MyCc``."""
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def _check_name(name: str) -> str:
    if len(name) > MAX_NAME or not NAME_RE.fullmatch(name):
        raise ScenarioError("", "NAME", f"{show(name)} is not allowed; NAME is {NAME_RULE}")
    if name in RUST_KEYWORDS:
        raise ScenarioError("", "NAME", f"{show(name)} is a Rust keyword; NAME is {NAME_RULE}, not a keyword")
    return name


def _check_type(name: str, family: Family) -> None:
    rust_type = type_name(name)
    if rust_type in PRELUDE or rust_type in family.imports:
        raise ScenarioError(
            "",
            "NAME",
            f"{show(name)} would name the model's type {rust_type}, which the generated file already uses "
            f"(from the standard prelude or the {family.title}'s own imports); choose another name",
        )


def _registered(root: Path, family: Family, mod_text: str) -> set[str]:
    """Every name taken in the family: its modules (declared or inline) and the names its
    models register (``name: "..."`` of each ``MODEL``, which may differ from the module's)."""
    taken = set(ANY_MOD.findall(mod_text))
    model = re.compile(rf"MODEL:\s*{family.model_type}\s*=\s*{family.model_type}\s*\{{\s*name:\s*\"([^\"]+)\"")
    for path in sorted((root / family.folder).rglob("*.rs")):
        try:
            taken.update(model.findall(path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            continue  # an unreadable file registers nothing this command could clash with
    return taken


def _plan(root: Path, family: Family, name: str) -> Plan:
    """Check the tree and the name against it; the file and mod.rs to write. Reads only."""
    mod_rs = family.folder / "mod.rs"
    try:
        mod_text = (root / mod_rs).read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise ScenarioError(
            "",
            "--root",
            f"{one_line(str(root))} has no {mod_rs.as_posix()}: not a ccsim source tree this command knows",
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(
            "", str(root / mod_rs), f"cannot read it: {getattr(exc, 'strerror', None) or exc}"
        ) from None

    taken = _registered(root, family, mod_text)
    if name in taken:
        names = ", ".join(sorted(taken))
        raise ScenarioError(
            "",
            "NAME",
            f"{family.title} {show(name)} already exists in {family.folder.as_posix()}; "
            f"choose a name not taken by these: {names}",
        )
    file = family.folder / f"{name}.rs"
    for existing in (file, family.folder / name):
        if (root / existing).exists():
            raise ScenarioError(
                "",
                "NAME",
                f"{existing.as_posix()} already exists (not registered in {mod_rs.as_posix()}); "
                "choose another name, or move it away first",
            )
    _check_type(name, family)
    new_mod = _register(mod_text, family, name, mod_rs)
    return Plan(file=file, text=render(family, name), mod_rs=mod_rs, mod_text=new_mod)


def render(family: Family, name: str) -> str:
    """The Rust file of a new model ``name`` of ``family``."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("ccsim.cli", "templates"),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )
    return env.get_template(family.template).render(name=name, type=type_name(name))


def _register(text: str, family: Family, name: str, mod_rs: Path) -> str:
    """``text`` (mod.rs) with ``pub mod NAME;`` among the module declarations, in name order,
    and ``NAME::MODEL,`` as the last entry of the family's table."""
    lines = text.splitlines(keepends=True)
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"

    def place_missing(what: str) -> ScenarioError:
        return ScenarioError(
            "", mod_rs.as_posix(), f"{what} not found; this command writes into the layout docs/extending.md describes"
        )

    decls = [(i, m.group(1)) for i, line in enumerate(lines) if (m := MOD_DECL.fullmatch(line))]
    if not decls:
        raise place_missing("the module declarations (pub mod NAME;)")
    after = [i for i, declared in decls if declared > name]
    if after:
        at = after[0]
        while at > 0 and lines[at - 1].lstrip().startswith("#["):
            at -= 1  # an attribute belongs to the declaration below it
    else:
        at = decls[-1][0] + 1
    lines.insert(at, f"pub mod {name};{newline}")

    start = re.compile(rf"pub static {family.table}: &\[{family.model_type}\] = &\[\s*")
    opened = next((i for i, line in enumerate(lines) if start.fullmatch(line)), None)
    if opened is None:
        raise place_missing(f"the table 'pub static {family.table}: &[{family.model_type}] = &['")
    closed = next((i for i in range(opened + 1, len(lines)) if lines[i].strip() == "];"), None)
    if closed is None:
        raise place_missing(f"the end of the table {family.table} ('];')")
    lines.insert(closed, f"    {name}::MODEL,{newline}")
    return "".join(lines)


def _write(root: Path, plan: Plan) -> None:
    """Create the new file, then replace mod.rs in one step; if the second write fails the
    new file is removed again, so that the tree is as it was."""
    path, mod_path = root / plan.file, root / plan.mod_rs
    try:
        with path.open("x", encoding="utf-8", newline="") as out:
            out.write(plan.text)
    except OSError as exc:
        raise ScenarioError("", str(path), f"cannot create it: {exc.strerror or exc}") from None
    try:
        _replace(mod_path, plan.mod_text)
    except OSError as exc:
        path.unlink(missing_ok=True)
        raise ScenarioError("", str(mod_path), f"cannot write it: {exc.strerror or exc}") from None


def _replace(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file beside it, keeping its mode."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _report(root: Path, family: Family, name: str, plan: Plan) -> None:
    file, mod_rs = plan.file.as_posix(), plan.mod_rs.as_posix()
    print(f"wrote {file} (a {family.title}: {family.example}, and tests of it)")
    print(f"registered it in {mod_rs}: pub mod {name}; and {name}::MODEL in {family.table}")
    print(f"next, in {root}:")
    print(f"  1. cargo test -p ccsim-core --lib {name}    (the example's tests pass as written)")
    print(
        f"  2. fill in the header of {file}: the specification (RFC section, or paper and equation), "
        "the draft revision, the reference implementation checked, the deviations; then replace the "
        "example law, its parameter, its doc line and its tests with the model's"
    )
    print(f"  3. make develop    (rebuilds the engine, so that ccsim knows {name})")
    print("  4. ccsim list --markdown > docs/models.md")
    print("  5. ccsim schema --markdown --output docs/scenario.md")
    print("see docs/extending.md")
