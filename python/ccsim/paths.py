"""Output paths: nothing a scenario says can make ccsim write outside the chosen directory.

Result files have fixed names (``flows.parquet``, ``summary.json``...) or names ccsim makes
itself (a sweep run's directory is a hash of its configuration); no name, group, node name,
sweep value or ``--set`` value becomes part of a path. These helpers hold that line where a
name is joined to an output directory:

- ``safe_component`` accepts one plain file name and refuses anything that is not: empty,
  ``.``/``..``, a separator (``/``, ``\\``), a NUL or control character, a drive (``C:``),
  or longer than 255 bytes;
- ``inside`` joins such a name to a directory and checks that the result, symlinks resolved,
  is still inside the directory (a symlink planted at the name may not lead out);
- ``write_atomically`` writes through a temporary file in the same directory and renames it
  over the target, so a symlink at the target is replaced, never followed, and a reader never
  sees half a file.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path

from .errors import ScenarioError

__all__ = ["safe_component", "inside", "write_atomically"]

_BAD = re.compile(r"[/\\\x00-\x1f\x7f]|^[A-Za-z]:")
MAX_COMPONENT_BYTES = 255


def safe_component(name: str, field: str = "", file: str = "") -> str:
    """``name`` if it is one plain file or directory name; else a ScenarioError naming ``field``."""
    if (
        not isinstance(name, str)
        or name in ("", ".", "..")
        or _BAD.search(name)
        or len(name.encode("utf-8", "surrogatepass")) > MAX_COMPONENT_BYTES
    ):
        raise ScenarioError(
            file,
            field,
            f"{name!r} cannot be a file name: use one name without '/', '\\', "
            "control characters or '..', at most 255 bytes",
        )
    return name


def inside(directory: str | Path, name: str, field: str = "", file: str = "") -> Path:
    """``directory / name`` after checking ``name`` (safe_component) and that the path, with
    symlinks resolved, stays inside ``directory``."""
    base = Path(directory)
    path = base / safe_component(name, field, file)
    real_base = os.path.realpath(base)
    real = os.path.realpath(path)
    if os.path.commonpath([real_base, real]) != real_base:
        raise ScenarioError(file, field, f"{path} leads outside {base} (a symlink to {real}); remove it")
    return path


def write_atomically(path: Path, write: Callable[[Path], object]) -> object:
    """Call ``write(tmp)`` for a temporary file beside ``path``, then rename it to ``path``.
    Renaming replaces whatever is at ``path`` (a symlink included) without following it.
    A writer that returns False wrote nothing: the temporary file is removed, ``path`` kept."""
    # The suffix stays: writers such as matplotlib pick the format from it.
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.stem}.tmp-", suffix=path.suffix, dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        result = write(tmp)
        if result is False:  # the writer had nothing to write (a plot without data)
            tmp.unlink(missing_ok=True)
            return result
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return result
