"""``--set key.path=value``: change any key of a scenario before it is validated.

Overrides edit the parsed TOML, so an overridden scenario is checked exactly like a file.
Values are TOML when they parse as TOML (``30``, ``true``, ``0.5``, ``[1, 2]``,
``{kind = "codel"}``), and strings otherwise (``30s``, ``10Mbps``, ``codel``).
"""

from __future__ import annotations

import re
import tomllib
from typing import Any

from ..errors import ScenarioError, show

__all__ = ["apply_overrides", "parse_key", "parse_value", "set_value"]

# Keys whose value may be a bare model name or a table with `kind` (fields.py).
ALGORITHM_KEYS = frozenset({"queue", "cc", "transport", "app", "controller", "reference"})

_SEGMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)((?:\[\d+\])*)$")
_INDEX = re.compile(r"\[(\d+)\]")


def parse_key(key: str) -> list[str | int]:
    """``flows[0].cc`` or ``flows.0.cc`` -> ``["flows", 0, "cc"]``; ValueError if malformed."""
    parts: list[str | int] = []
    for segment in key.split("."):
        if segment.isdigit():
            parts.append(int(segment))
            continue
        match = _SEGMENT.match(segment)
        if match is None:
            raise ValueError(f"{show(segment)} is not a key; keys look like topology.bottleneck.rate or flows[0].cc")
        parts.append(match.group(1))
        parts.extend(int(i) for i in _INDEX.findall(match.group(2)))
    return parts


def parse_value(text: str) -> Any:
    """A TOML value if ``text`` is one, else the text itself."""
    try:
        parsed = tomllib.loads(f"value = {text}")
    except (ValueError, RecursionError):
        # Not TOML (TOMLDecodeError is a ValueError), or an integer literal of more than 4300
        # digits, which tomllib's int() refuses with a plain ValueError: the text as given.
        return text
    # A value with a newline could carry more keys ("1\n[x]"): that is text, not TOML.
    return parsed["value"] if len(parsed) == 1 else text


def _path_text(parts: list[str | int]) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def _set(node: Any, parts: list[str | int], value: Any, done: list[str | int], file: str, key: str) -> None:
    """Set ``parts`` below ``node``; ``done`` is the path walked so far (for messages)."""
    head, rest = parts[0], parts[1:]
    where = _path_text(done + [head])
    if isinstance(node, list):
        if isinstance(head, int):
            if head >= len(node):
                message = f"no element {head}; {_path_text(done)} has {len(node)} (0..{len(node) - 1})"
                raise ScenarioError(file, key, message)
            if not rest:
                node[head] = value
                return
            node[head] = _descend(node[head], file, key, where)
            _set(node[head], rest, value, done + [head], file, key)
            return
        # A key on a list of tables applies to every element (e.g. flows.cc=cubic).
        for i in range(len(node)):
            node[i] = _descend(node[i], file, key, _path_text(done + [i]))
            _set(node[i], parts, value, done + [i], file, key)
        return
    if isinstance(head, int):
        raise ScenarioError(file, key, f"{_path_text(done)} is not a list")
    if not rest:
        node[head] = value
        return
    node[head] = _descend(node.get(head, {}), file, key, where)
    _set(node[head], rest, value, done + [head], file, key)


def _descend(child: Any, file: str, key: str, where: str) -> Any:
    """The table (or list) to walk into; an algorithm written as a bare name becomes a table."""
    if isinstance(child, (dict, list)):
        return child
    if isinstance(child, str) and where.rsplit(".", 1)[-1] in ALGORITHM_KEYS:
        # `queue = "droptail"` + `--set ...queue.limit=50p` -> {kind = "droptail", limit = "50p"}
        return {"kind": child}
    raise ScenarioError(file, key, f"{where} is a value ({show(child)}), not a table")


def apply_overrides(data: dict[str, Any], overrides: list[str], file: str) -> list[tuple[str, str]]:
    """Apply ``KEY=VALUE`` overrides to the parsed scenario in place.

    Returns (normalized key, override text) for each, so errors can point at the command line.
    """
    applied: list[tuple[str, str]] = []
    # From Python, overrides can be anything; only a list of strings means something.
    if isinstance(overrides, (str, bytes)) or not isinstance(overrides, (list, tuple)):
        raise ScenarioError(file, "overrides", f"expected a list of 'KEY=VALUE' strings, got {show(overrides)}")
    for text in overrides:
        if not isinstance(text, str):
            raise ScenarioError(file, "overrides", f"expected 'KEY=VALUE' strings, got {show(text)}")
        key, sep, raw = text.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ScenarioError(file, "--set", f"expected KEY=VALUE (e.g. simulation.duration=30s), got {show(text)}")
        applied.append((set_value(data, key, parse_value(raw.strip()), file, "--set key"), text))
    return applied


def set_value(data: dict[str, Any], key: str, value: Any, file: str, what: str = "key") -> str:
    """Set ``key`` (as in ``--set``) to an already parsed ``value`` in place, with the rules of
    ``--set`` (a key on a list of tables applies to every element); the normalized key.
    Sweeps use it for the values of their grids and points; ``what`` names the key in errors."""
    try:
        parts = parse_key(key)
    except ValueError as exc:
        raise ScenarioError(file, key, f"bad {what}: {exc}") from None
    if isinstance(parts[0], int):
        raise ScenarioError(file, key, f"bad {what}: a key starts with a table name, e.g. simulation")
    _set(data, parts, value, [], file, key)
    return _path_text(parts)
