"""How values are written in a scenario file, as JSON Schema (draft 2020-12): the input form of
the scenario models, for ``ccsim schema``, editors and docs/scenario.md.

The models hold canonical values (integer nanoseconds, bit/s, bytes) that their validators
read from strings such as ``"5ms"``; the schema pydantic derives from the Python types would
say "integer". :class:`Written`, put into a type's ``Annotated`` metadata, replaces that with
what a file may say. Every pattern is built from the unit tables of ``units.py`` and every
model name and parameter comes from the engine's registry, so the schema follows both.

The schema checks the form of each value; what needs the whole scenario (a flow's host exists,
warm-up before the end, a fraction of a nanosecond, a range given in units) is left to
``ccsim validate``.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Final

from . import units
from .registry import FAMILY_TITLES, ParamInfo, format_param, get_registry

__all__ = [
    "Written",
    "REF_KEY",
    "INNER_READER",
    "UNIT_FORMS",
    "UnitForm",
    "ALGO_DEFS",
    "PROCESSING_DEF",
    "MODELS_DOC",
    "models_anchor",
    "external_defs",
    "param_schema",
]

JsonSchema = dict[str, Any]

# A placeholder for a reference to a definition that pydantic does not know of (an algorithm
# family, node processing): pydantic resolves every "$ref" it meets while generating, so the
# reference is written under this key and turned into a "$ref" afterwards (reference.py).
REF_KEY: Final = "x-ccsim-ref"

# A decimal number as units.py reads it, without a sign (quantities are never negative), and
# the number zero, the only quantity that needs no unit.
_NUMBER = r"\+?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_ZERO = r"\+?(?:0+(?:\.0*)?|\.0+)(?:[eE][+-]?\d+)?"
_WHOLE = r"\+?\d+(?:\.0*)?(?:[eE]\+?\d+)?"


def _one_of(names: Iterable[str]) -> str:
    # Longest first, so that a unit is never read as a shorter one it starts with.
    return "(?:" + "|".join(re.escape(n) for n in sorted(names, key=lambda n: (-len(n), n))) + ")"


def _quantity(unit_names: Iterable[str]) -> str:
    """A number, optional blanks and one of the units. No blank pattern is followed by an
    optional part and another blank pattern: the match stays linear in the text's length."""
    return rf"{_NUMBER}\s*{_one_of(unit_names)}"


def _whole(body: str) -> str:
    return rf"^\s*{body}\s*$"


_TIME = rf"(?:{_quantity(units.TIME_UNITS)}|{_ZERO})"


@dataclass(frozen=True)
class UnitForm:
    """One kind of quantity as a file writes it: its short name (the schema's ``title``), the
    sentence that says how it is written, and its JSON Schema."""

    title: str
    help: str
    schema: JsonSchema

    def json_schema(self) -> JsonSchema:
        """A fresh copy: the generated schema may be changed where it is used."""
        return {"title": self.title, "description": self.help, **copy.deepcopy(self.schema)}


_ZERO_NUMBER: Final[JsonSchema] = {"const": 0}

UNIT_FORMS: Final[dict[str, UnitForm]] = {
    "time": UnitForm(
        "time",
        units.TIME_HELP[0].upper() + units.TIME_HELP[1:] + ", or 0",
        {"anyOf": [{"type": "string", "pattern": _whole(_TIME)}, _ZERO_NUMBER]},
    ),
    "rate": UnitForm(
        "rate",
        units.RATE_HELP[0].upper() + units.RATE_HELP[1:] + ", or 0",
        {
            "anyOf": [
                {"type": "string", "pattern": _whole(rf"(?:{_quantity(units.RATE_UNITS)}|{_ZERO})")},
                _ZERO_NUMBER,
            ]
        },
    ),
    "bytes": UnitForm(
        "byte count",
        units.BYTES_HELP[0].upper() + units.BYTES_HELP[1:] + ", or an integer number of bytes",
        {
            "anyOf": [
                {"type": "string", "pattern": _whole(_quantity(units.BYTE_UNITS))},
                {"type": "integer", "minimum": 0, "maximum": units.MAX_CANONICAL},
            ]
        },
    ),
    "size": UnitForm(
        "buffer size",
        units.SIZE_HELP[0].upper() + units.SIZE_HELP[1:],
        {
            "type": "string",
            # A whole number of packets ("1.5p" is a mistake; "1.5e1p" is not written).
            "pattern": _whole(rf"(?:{_WHOLE}\s*{_one_of(units.PACKET_UNITS)}|{_quantity(units.BYTE_UNITS)})"),
        },
    ),
    "prob": UnitForm(
        "probability",
        units.PROB_HELP[0].upper() + units.PROB_HELP[1:],
        {
            "anyOf": [
                {"type": "number", "minimum": 0, "maximum": 1},
                {"type": "string", "pattern": _whole(rf"{_NUMBER}\s*%")},
            ]
        },
    ),
    "window": UnitForm(
        "time or window",
        "A time (e.g. '2s'), or a window 'a..b' (e.g. '0s..1s') the start is drawn from uniformly",
        {"anyOf": [{"type": "string", "pattern": _whole(rf"{_TIME}(?:\s*\.\.\s*{_TIME})?")}, _ZERO_NUMBER]},
    ),
}
"""By the parameter kinds of the registry (``time``, ``rate``, ``bytes``, ``size``, ``prob``) and
``window``, a flow's start."""


# True while Written generates the schema of the type it also accepts (``or_inner``): the first
# before-validator met there is the one that reads the form Written describes.
INNER_READER: ContextVar[bool] = ContextVar("INNER_READER", default=False)


class Written:
    """``Annotated`` metadata: the JSON Schema of how values of the annotated type are written.

    ``schema`` makes it when a schema is generated (the registry is read then, not on import).
    With ``or_inner``, the value may also be written as the annotated type itself: the result
    is ``anyOf`` of both (a star's ``sensors``: a count, or a list of link specs).
    """

    def __init__(self, schema: Callable[[], JsonSchema], *, or_inner: bool = False) -> None:
        self.schema = schema
        self.or_inner = or_inner

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: Any) -> JsonSchema:
        if handler.mode != "validation":
            return dict(handler(core_schema))
        own = self.schema()
        if not self.or_inner:
            return own
        token = INNER_READER.set(True)
        try:
            inner = handler(core_schema)
        finally:
            INNER_READER.reset(token)
        return {"anyOf": [own, inner]}

    @staticmethod
    def unit(kind: str) -> Written:
        """A quantity of ``UNIT_FORMS[kind]``."""
        return Written(UNIT_FORMS[kind].json_schema)

    @staticmethod
    def ref(name: str) -> Written:
        """A value described by the definition ``name`` of :data:`ALGO_DEFS` or ``Processing``."""
        return Written(lambda: {REF_KEY: name})


# --- registered models ------------------------------------------------------------------

# The definition of each family's choice, by the names fields.py gives the annotated types.
ALGO_DEFS: Final[dict[str, str]] = {
    "QueueAlgo": "queue",
    "CcAlgo": "cc",
    "TransportAlgo": "transport",
    "AppAlgo": "app",
    "ControllerAlgo": "controller",
    "ReferenceAlgo": "reference",
}
PROCESSING_DEF: Final = "Processing"

# Where docs/models.md lists a family's models and parameters (its section anchors).
MODELS_DOC: Final = "docs/models.md"


def models_anchor(family: str) -> str:
    """The anchor of the family's section in docs/models.md (``## Queue disciplines (`queue`)``)."""
    heading = f"{FAMILY_TITLES.get(family, family)}s ({family})"
    return re.sub(r"[^a-z0-9 _-]", "", heading.lower()).replace(" ", "-")


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def param_schema(param: ParamInfo, *, flow_ref: bool = False) -> JsonSchema:
    """A registered parameter as a file writes it, with its unit, default and range in the
    description. Bounds of numbers are ``minimum``/``maximum``; bounds of quantities with
    units cannot be checked by a pattern and are only described."""
    form = UNIT_FORMS.get(param.kind)
    if form is not None:
        schema: JsonSchema = copy.deepcopy(form.schema)
        unit = form.help
    elif param.kind in ("int", "float"):
        schema = {"type": "integer" if param.kind == "int" else "number"}
        if param.min is not None:
            schema["minimum"] = _number(param.min)
        if param.max is not None:
            schema["maximum"] = _number(param.max)
        unit = "An integer" if param.kind == "int" else "A number"
    elif param.kind == "bool":
        schema, unit = {"type": "boolean"}, "true or false"
    elif param.kind == "choice":
        schema, unit = {"enum": list(param.choices)}, "One of " + ", ".join(param.choices)
    else:
        raise ValueError(f"no input form for parameter kind {param.kind!r} ({param.name})")
    if flow_ref:
        schema = {"anyOf": [schema, {"type": "string", "minLength": 1}]}
        unit += ", or the name of a flow"
    parts = [param.doc[:1].upper() + param.doc[1:] if param.doc else param.name, unit]
    if param.kind != "choice" and (range_text := param.range_text()):
        parts.append(f"Range {range_text}")
    parts.append("Required" if param.default is None else f"Default: {format_param(param.kind, param.default)}")
    schema["description"] = ". ".join(p.rstrip(".") for p in parts) + "."
    if param.default is not None:
        default = param.default
        schema["default"] = (
            format_param(param.kind, default) if param.kind in ("time", "rate", "bytes", "size") else default
        )
    return schema


def _kind_def_name(family: str, kind: str) -> str:
    return f"{family}.{kind}"


def _algo_defs(family: str) -> dict[str, JsonSchema]:
    """The family's choice: a bare registered name, or a table whose ``kind`` selects the
    parameters it may hold (``if``/``then``, one definition per model)."""
    from .profiles import DEFAULT_PROFILE  # profiles.py reads the models of fields.py, which use this module

    registry = get_registry()
    title = FAMILY_TITLES[family]
    names = registry.names(family)
    defs: dict[str, JsonSchema] = {}
    for model in registry.models(family):
        properties: dict[str, JsonSchema] = {"kind": {"const": model.name, "description": model.doc}}
        if family == "transport" and model.name == "tcp":
            properties["profile"] = {
                "enum": registry.names("profile"),
                "description": "Behaviour profile whose values fill the parameters not given here "
                f"(`ccsim list profile`, docs/profiles.md). Default: {DEFAULT_PROFILE}.",
                "default": DEFAULT_PROFILE,
            }
        for param in model.params:
            properties[param.name] = param_schema(param, flow_ref=param.name in model.flow_refs and param.kind == "int")
        defs[_kind_def_name(family, model.name)] = {
            "type": "object",
            "description": f"{model.name}: {model.doc}",
            "properties": properties,
            "required": ["kind", *(p.name for p in model.params if p.default is None)],
            "additionalProperties": False,
        }
    defs[_family_def_name(family)] = {
        "title": title,
        "description": f"A {title}: a registered name (every parameter at its default), or a table "
        f'{{ kind = "NAME", PARAMETER = VALUE, ... }}. Models and parameters: `ccsim list {family}`, '
        f"{MODELS_DOC}#{models_anchor(family)}.",
        "anyOf": [
            {"type": "string", "enum": names},
            {
                "type": "object",
                "properties": {"kind": {"enum": names, "description": f"The {title}."}},
                "required": ["kind"],
                "allOf": [
                    {
                        "if": {"properties": {"kind": {"const": name}}, "required": ["kind"]},
                        "then": {"$ref": f"#/$defs/{_kind_def_name(family, name)}"},
                    }
                    for name in names
                ],
            },
        ],
    }
    return defs


def _family_def_name(family: str) -> str:
    return next(name for name, fam in ALGO_DEFS.items() if fam == family)


def _processing_defs() -> dict[str, JsonSchema]:
    model = get_registry().model("node", "processing")
    return {
        PROCESSING_DEF: {
            "type": "object",
            "title": "node processing",
            "description": f"{model.doc[:1].upper() + model.doc[1:]}. Parameters: `ccsim list node`.",
            "properties": {p.name: param_schema(p) for p in model.params},
            "additionalProperties": False,
        }
    }


def external_defs(name: str) -> dict[str, JsonSchema]:
    """The definitions that the reference ``name`` (a :data:`REF_KEY` value) needs."""
    if name in ALGO_DEFS:
        return _algo_defs(ALGO_DEFS[name])
    if name == PROCESSING_DEF:
        return _processing_defs()
    raise KeyError(f"no definition {name!r} of a written value")
