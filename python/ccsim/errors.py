"""Errors of the Python front, all of the form ``FILE: FIELD: MESSAGE``.

A researcher fixing a scenario needs three things from an error: which file, which key
(as the dotted path they would pass to ``--set``) and what would have been accepted. Pydantic's
own errors carry a location tuple and English that talks about Python types; this module turns
them into that one line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

__all__ = ["ScenarioError", "FieldError", "format_path", "scenario_error_from_validation", "show", "one_line"]

# A scenario built in Python (or passed as a dict) has no file; errors say so.
NO_FILE = "<scenario>"

# How much of a bad value an error quotes, and how long one part of an error line may be: a
# value is quoted to be recognised, not reproduced (a 2 MB string must not become a 2 MB line).
SHOWN_CHARS = 60
MAX_PART_CHARS = 1000
# Integers this long are described by their size: their repr is long, and above 4300 digits
# Python refuses to make one (int_max_str_digits).
_SHOWN_INT_BITS = 100


def show(value: Any, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)`` for an error message, cut to about ``limit`` characters; never raises
    (a huge integer is described by its number of digits, a broken ``__repr__`` by its type)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > _SHOWN_INT_BITS:
        digits = int(value.bit_length() * 0.30103) + 1
        return f"{'a negative' if value < 0 else 'an'} integer of about {digits} digits"
    try:
        text = repr(value)
    except Exception:  # e.g. a container holding a huge integer
        return f"a {type(value).__name__}"
    return text if len(text) <= limit else text[: max(limit - 3, 1)] + "..."


def one_line(text: str, limit: int = MAX_PART_CHARS) -> str:
    """``text`` as one line of at most about ``limit`` characters: line breaks and other
    control characters escaped as in a Python string, the middle of a long text cut."""
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
        text = "".join(repr(c)[1:-1] if ord(c) < 0x20 or ord(c) == 0x7F else c for c in text)
    if len(text) <= limit:
        return text
    keep = max(limit - 25, limit // 2, 3)
    head, tail = keep - keep // 3, keep // 3  # the start says most (a key, the file's name)
    return f"{text[:head]}...({len(text) - head - tail} characters cut)...{text[len(text) - tail :]}"


class ScenarioError(ValueError):
    """A scenario that cannot be run: which file, which field, what is wrong and what is allowed."""

    def __init__(self, file: str, field: str, message: str) -> None:
        # args are the constructor's arguments, so the error pickles (sweeps run in processes).
        super().__init__(file, field, message)
        self.file = file
        self.field = field
        self.message = message

    def __str__(self) -> str:
        # One line, of bounded length, whatever the file name, key or value quoted.
        parts = [one_line(str(p)) for p in (self.file, self.field, self.message) if p]
        return ": ".join(parts)


class FieldError(ValueError):
    """Raised inside validation; ``field`` is relative to where it is raised (may be empty).

    Pydantic attaches the location of the model being validated; the relative field lets a
    check on a parent (e.g. the whole scenario) point at a key deep inside it.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(field, message)
        self.field = field
        self.message = message

    def __str__(self) -> str:
        return f"{self.field}: {self.message}" if self.field else self.message


def join_path(path: str, key: str) -> str:
    """``flows[0]`` + ``cc`` -> ``flows[0].cc``; ``flows`` + ``[1]`` -> ``flows[1]``."""
    if not path:
        return key
    if not key:
        return path
    return f"{path}{key}" if key.startswith("[") else f"{path}.{key}"


def format_path(loc: Sequence[int | str]) -> str:
    """A pydantic location to the dotted form used on the command line: ``flows[0].cc``."""
    path = ""
    for part in loc:
        path = join_path(path, f"[{part}]" if isinstance(part, int) else str(part))
    return path


# Tags pydantic puts into locations of discriminated unions; they are not keys of the file.
_UNION_TAGS = {"topology": {"dumbbell", "daisy_chain", "explicit", "star"}}


def _strip_union_tags(loc: Sequence[int | str]) -> list[int | str]:
    out: list[int | str] = []
    for part in loc:
        if out and isinstance(out[-1], str) and part in _UNION_TAGS.get(out[-1], ()):
            continue
        out.append(part)
    return out


def _describe(value: Any) -> str:
    return show(value)


def _message(error: Any) -> tuple[str, str]:
    """(extra relative field, message) for one pydantic error."""
    kind = error["type"]
    ctx = error.get("ctx") or {}
    given = error.get("input")
    if kind == "value_error" and isinstance(ctx.get("error"), FieldError):
        raised: FieldError = ctx["error"]
        return raised.field, raised.message
    if kind == "value_error":
        return "", str(ctx.get("error", error["msg"]))
    if kind == "missing":
        return "", "required field missing"
    if kind == "extra_forbidden":
        return "", "unknown field"
    if kind == "union_tag_invalid":
        return "kind", f"unknown kind {show(ctx.get('tag'))}; allowed: {ctx.get('expected_tags')}"
    if kind == "union_tag_not_found":
        return "kind", "required field missing"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return "", f"expected a table, got {_describe(given)}"
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return "", f"expected an integer, got {_describe(given)}"
    if kind in ("bool_type", "bool_parsing"):
        return "", f"expected true or false, got {_describe(given)}"
    if kind == "string_type":
        return "", f"expected a string, got {_describe(given)}"
    if kind in ("list_type", "tuple_type"):
        return "", f"expected a list, got {_describe(given)}"
    message = str(error["msg"])
    message = message[:1].lower() + message[1:]
    return "", f"{message}, got {_describe(given)}"


def scenario_error_from_validation(exc: ValidationError, file: str, prefix: str = "") -> ScenarioError:
    """The first problem of a pydantic ValidationError as a ScenarioError.

    ``prefix`` is the path of the model that was validated (empty for a whole scenario).
    """
    errors = exc.errors()
    first = errors[0]
    extra, message = _message(first)
    field = join_path(join_path(prefix, format_path(_strip_union_tags(first["loc"]))), extra)
    if len(errors) > 1:
        message += f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})"
    return ScenarioError(file, field, message)
