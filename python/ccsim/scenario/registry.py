"""The engine's catalogue of models (queue disciplines, congestion controls, transports,
applications) and their parameter tables, as declared in the Rust code; also the TCP behaviour
profiles (family ``profile``, ``tcp/profile.rs``) with the values they set and their sources.

Nothing here is written by hand: the tables come from ``_core.registry_json()``, so scenario
validation and ``ccsim list`` follow the engine whenever a model or parameter is added.
Parameters written with units (``"5ms"``) are converted to the canonical encoding of
``params.rs`` here, so that errors can name the scenario's own field before the engine runs.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from ..errors import FieldError, join_path, show
from . import units

__all__ = [
    "FAMILIES",
    "FAMILY_TITLES",
    "ParamError",
    "ParamInfo",
    "ProfileSetting",
    "ModelInfo",
    "VarInfo",
    "every_queue_vars",
    "trace_variables",
    "trace_column_meanings",
    "unit_suffixes",
    "Registry",
    "get_registry",
    "set_registry",
    "add_model",
    "remove_model",
    "validate_params",
    "parse_param",
    "format_param",
    "KIND_UNITS",
]

Family = Literal["queue", "cc", "transport", "app", "node", "controller", "reference"]
FAMILIES: Final[tuple[Family, ...]] = ("queue", "cc", "transport", "app", "node", "controller", "reference")
FAMILY_TITLES: Final[dict[str, str]] = {
    "queue": "queue discipline",
    "cc": "congestion control",
    "transport": "transport",
    "app": "application",
    "node": "node model",
    "controller": "controller",
    "reference": "reference signal",
    "profile": "behaviour profile",
}

# How each parameter kind is written; shown by `ccsim list`.
KIND_UNITS: Final[dict[str, str]] = {
    "time": "time (ns, us, ms, s, min)",
    "rate": "rate (bps, kbps, Mbps, Gbps)",
    "bytes": "bytes (B, KB, KiB, MB, MiB)",
    "size": "packets (p) or bytes (B)",
    "float": "number",
    "prob": "probability (0..1 or %)",
    "int": "integer",
    "bool": "true / false",
    "choice": "one of the names listed",
}


class ParamError(FieldError):
    """A bad model name or parameter. ``field`` is the dotted path of the offending key."""


def _parse_float(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise units.UnitError(f"{show(value)} is not a number")
    try:
        number = float(value)
    except OverflowError:  # an integer beyond the float range
        raise units.UnitError(f"{show(value)} is too large") from None
    if not math.isfinite(number):
        # TOML has nan and inf; no model parameter means anything with them.
        raise units.UnitError(f"{show(value)} is not a finite number")
    return number


def _parse_int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise units.UnitError(f"{show(value)} is not an integer")
    if not -units.MAX_CANONICAL - 1 <= value <= units.MAX_CANONICAL:  # the engine's parameters are i64
        raise units.UnitError(f"{show(value)} is too large; an integer parameter is at most 2^63 - 1 in size")
    return value


def _parse_bool(value: object) -> bool:
    if not isinstance(value, bool):
        raise units.UnitError(f"{show(value)} is not a boolean; write true or false")
    return value


_PARSERS: Final[dict[str, Callable[[object], Any]]] = {
    "time": units.parse_time,
    "rate": units.parse_rate,
    "bytes": units.parse_bytes,
    "size": units.parse_size,
    "float": _parse_float,
    "prob": units.parse_prob,
    "int": _parse_int,
    "bool": _parse_bool,
}


def parse_param(kind: str, value: object) -> Any:
    """A value as written in a scenario, to the canonical encoding of its kind."""
    parser = _PARSERS.get(kind)
    if parser is None:
        raise units.UnitError(f"parameter kind {show(kind)} is not supported by this version of ccsim")
    return parser(value)


def format_param(kind: str, value: Any) -> str:
    """A canonical value back to the way a scenario writes it (for `ccsim list`, dumps)."""
    if value is None:
        return "required"
    if kind == "time":
        return units.format_time(int(value))
    if kind == "rate":
        return units.format_rate(int(value))
    if kind == "bytes":
        return units.format_bytes(int(value))
    if kind == "size":
        return units.format_size(value)
    if kind == "bool":
        return "true" if value else "false"
    if kind == "choice":
        return str(value)
    return repr(value)


def _to_human(kind: str, value: Any) -> Any:
    """The form that `parse_param` accepts back: strings for quantities, values otherwise."""
    return format_param(kind, value) if kind in ("time", "rate", "bytes", "size") else value


def _magnitude(kind: str, value: Any) -> int | float:
    """The number that min/max bounds apply to (params.rs: a size's count). Integers stay
    integers: Python compares an int with a float bound exactly, where float() of an integer
    above ~1.8e308 raises OverflowError."""
    if kind == "size":
        return next(iter(value.values()))
    return value


@dataclass(frozen=True)
class ParamInfo:
    """One declared parameter (``ParamSpec`` in params.rs)."""

    name: str
    kind: str
    default: Any  # canonical encoding; None when required
    min: float | None
    max: float | None
    doc: str
    choices: tuple[str, ...] = ()
    """The allowed names of a ``choice`` parameter."""

    def bound_text(self, bound: float) -> str:
        """A bound in the parameter's own units."""
        if self.kind in ("time", "rate", "bytes") and float(bound).is_integer():
            return format_param(self.kind, int(bound))
        if self.kind in ("int", "size") and float(bound).is_integer():
            return str(int(bound))
        return f"{bound:g}"

    def range_text(self) -> str:
        """``"1ms..1s"``, ``">= 1"``, the names of a choice, or empty when unbounded."""
        if self.kind == "choice":
            return " | ".join(self.choices)
        lo = self.bound_text(self.min) if self.min is not None else None
        hi = self.bound_text(self.max) if self.max is not None else None
        if lo is not None and hi is not None:
            return f"{lo}..{hi}"
        if lo is not None:
            return f">= {lo}"
        if hi is not None:
            return f"<= {hi}"
        return ""


@dataclass(frozen=True)
class ProfileSetting:
    """One value a behaviour profile sets: a ``transport`` parameter, or for ``cc`` the default
    congestion control (``param == "kind"``, ``kind == "name"``) or one of its parameters."""

    target: str
    param: str
    kind: str
    value: Any  # canonical encoding
    source: str

    def value_text(self) -> str:
        """The value the way a scenario writes it."""
        return str(self.value) if self.kind == "name" else format_param(self.kind, self.value)


@dataclass(frozen=True)
class VarInfo:
    """One variable a model offers to the sampled traces (``VarSpec`` in vars.rs): its name in
    ``trace.flow_vars`` / ``trace.queue_vars``, its unit, the last part of its trace column
    (the name and the unit's suffix: ``srtt_s``) and what it is."""

    name: str
    unit: str
    column: str
    doc: str

    @classmethod
    def from_json(cls, entry: Mapping[str, Any]) -> VarInfo:
        return cls(name=entry["name"], unit=entry["unit"], column=entry["column"], doc=entry.get("doc", ""))


@dataclass(frozen=True)
class ModelInfo:
    """One registered model: its family, name, doc line and parameter table (for a behaviour
    profile: no parameters, and the ``settings`` it applies)."""

    family: str
    name: str
    doc: str
    params: tuple[ParamInfo, ...]
    settings: tuple[ProfileSetting, ...] = ()
    random: Mapping[str, str] = field(default_factory=lambda: {"when": "never"}, hash=False)
    """Whether it draws random numbers (registry.rs ``Randomness``): ``when`` is ``never``,
    ``always``, or ``unless_default`` (random when parameter ``param`` is not at its default);
    ``what`` says what is random."""
    partner_queues: tuple[str, ...] = ()
    """A congestion control's: the queue disciplines it needs at its bottleneck (any of them)."""
    flow_refs: tuple[str, ...] = ()
    """An application's integer parameters that name another flow."""
    vars: tuple[VarInfo, ...] = ()
    """The variables the traces can sample: a queue discipline's or congestion control's own, a
    transport's sender's (``[trace] flow_vars``, ``queue_vars``)."""
    source: str | None = None
    """A model written in Python: where its class comes from (``engine/user_models.py``);
    None for the engine's own."""

    def param(self, name: str) -> ParamInfo | None:
        return next((p for p in self.params if p.name == name), None)

    def randomness(self, params: Mapping[str, Any]) -> str | None:
        """What is random in this model with ``params`` (as given; absent ones at their
        defaults), or None when it draws nothing."""
        when = self.random.get("when", "never")
        if when == "always":
            return self.random["what"]
        if when == "unless_default":
            spec = self.param(self.random["param"])
            default = spec.default if spec is not None else None
            value = params.get(self.random["param"], default)
            if value != default:
                return f"{self.random['what']}, {self.random['param']} {value}"
        return None


class Registry:
    """All registered models, by family and name."""

    def __init__(self, models: list[ModelInfo]) -> None:
        self._models: dict[str, dict[str, ModelInfo]] = {family: {} for family in FAMILIES}
        for model in models:
            self._models.setdefault(model.family, {})[model.name] = model

    @classmethod
    def from_json(cls, text: str) -> Registry:
        entries = json.loads(text)
        return cls(
            [
                ModelInfo(
                    family=entry["family"],
                    name=entry["name"],
                    doc=entry.get("doc", ""),
                    params=tuple(
                        ParamInfo(
                            name=p["name"],
                            kind=p["kind"],
                            default=p.get("default"),
                            min=p.get("min"),
                            max=p.get("max"),
                            doc=p.get("doc", ""),
                            choices=tuple(p.get("choices", ())),
                        )
                        for p in entry.get("params", [])
                    ),
                    settings=tuple(
                        ProfileSetting(
                            target=s["target"], param=s["param"], kind=s["kind"], value=s["value"], source=s["source"]
                        )
                        for s in entry.get("settings", [])
                    ),
                    random=entry.get("random", {"when": "never"}),
                    partner_queues=tuple(entry.get("partner_queues", ())),
                    flow_refs=tuple(entry.get("flow_refs", ())),
                    vars=tuple(VarInfo.from_json(v) for v in entry.get("vars", ())),
                )
                for entry in entries
            ]
        )

    def families(self) -> list[str]:
        return [f for f in self._models if self._models[f]]

    def names(self, family: str) -> list[str]:
        return sorted(self._models.get(family, {}))

    def models(self, family: str) -> list[ModelInfo]:
        return [self._models[family][name] for name in self.names(family)]

    def find(self, family: str, name: str) -> ModelInfo | None:
        """The model called ``name``, or None."""
        return self._models.get(family, {}).get(name)

    def add(self, model: ModelInfo) -> None:
        """Add (or replace) one model."""
        self._models.setdefault(model.family, {})[model.name] = model

    def remove(self, family: str, name: str) -> None:
        """Forget one model (nothing if it is not there)."""
        self._models.get(family, {}).pop(name, None)

    def model(self, family: str, name: object, path: str = "") -> ModelInfo:
        """The model called ``name``, or a ParamError listing the registered ones."""
        title = FAMILY_TITLES.get(family, family)
        registered = ", ".join(self.names(family)) or "none"
        if not isinstance(name, str):
            raise ParamError(path, f"expected the name of a {title} (registered: {registered}), got {show(name)}")
        model = self._models.get(family, {}).get(name)
        if model is None:
            raise ParamError(path, f"unknown {title} {show(name)}; registered: {registered}")
        return model

    def profile(self, name: object, path: str = "") -> ModelInfo:
        """The behaviour profile called ``name``, or a ParamError listing the registered ones."""
        return self.model("profile", name, path)

    def validate_params(self, family: str, name: str, given: Mapping[str, object], path: str = "") -> dict[str, Any]:
        """Check ``given`` parameters of model ``name`` and convert them to canonical units.

        Only the parameters given are returned; the engine fills the declared defaults.
        Errors name ``path.param``.
        """
        model = self.model(family, name, path)
        allowed = ", ".join(p.name for p in model.params) or "none"
        canonical: dict[str, Any] = {}
        for key, value in given.items():
            field = join_path(path, key)
            spec = model.param(key)
            if spec is None:
                raise ParamError(field, f"unknown parameter of {name}; allowed: {allowed}")
            if spec.kind == "choice":
                if not isinstance(value, str) or value not in spec.choices:
                    raise ParamError(field, f"unknown {show(value)}; one of: {', '.join(spec.choices)}")
                canonical[key] = value
                continue
            try:
                converted = parse_param(spec.kind, value)
            except units.UnitError as exc:
                raise ParamError(field, str(exc)) from None
            if spec.kind != "bool":
                magnitude = _magnitude(spec.kind, converted)
                if spec.min is not None and magnitude < spec.min:
                    raise ParamError(field, f"must be >= {spec.bound_text(spec.min)}, got {show(value)}")
                if spec.max is not None and magnitude > spec.max:
                    raise ParamError(field, f"must be <= {spec.bound_text(spec.max)}, got {show(value)}")
            canonical[key] = converted
        for spec in model.params:
            if spec.default is None and spec.name not in canonical:
                raise ParamError(join_path(path, spec.name), f"required parameter of {name} missing ({spec.doc})")
        return canonical

    def to_human(self, family: str, name: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """Canonical parameters back to scenario notation (inverse of validate_params)."""
        model = self.model(family, name)
        out: dict[str, Any] = {}
        for key, value in params.items():
            spec = model.param(key)
            out[key] = _to_human(spec.kind, value) if spec is not None else value
        return out


_registry: Registry | None = None
# Models written in Python (engine/user_models.py), kept across registry reloads.
_added: dict[tuple[str, str], ModelInfo] = {}


def add_model(model: ModelInfo) -> None:
    """Register a model the engine does not declare itself (a Python model)."""
    _added[(model.family, model.name)] = model
    if _registry is not None:
        _registry.add(model)


def remove_model(family: str, name: str) -> None:
    """Forget a model added with ``add_model``."""
    if _added.pop((family, name), None) is not None and _registry is not None:
        _registry.remove(family, name)


@functools.cache
def engine_facts() -> dict[str, Any]:
    """Facts of the engine besides the models (registry.rs ``facts_json``): ``control_row``, a
    control loop's result row (its keys are ``Result.control``'s columns, in order), and
    ``max_plant_order``."""
    from .. import _core

    facts: dict[str, Any] = json.loads(_core.facts_json())
    return facts


def control_columns() -> list[str]:
    """The columns of ``Result.control`` (the engine's ControlResult)."""
    return list(engine_facts()["control_row"])


def every_queue_vars() -> tuple[VarInfo, ...]:
    """The variables every queue offers to the traces, whatever its discipline (vars.rs
    ``QUEUE_VARS``)."""
    return tuple(VarInfo.from_json(v) for v in engine_facts()["queue_vars"])


def trace_variables(kind: Literal["flow", "queue"], registry: Registry | None = None) -> dict[str, list[str]]:
    """The variables ``[trace] flow_vars`` (``kind == "flow"``: the transports' senders' and the
    congestion controls') or ``queue_vars`` (every queue's, then the disciplines') may name,
    each with the models that offer it (``"every queue"`` for the wrapper's), in declaration
    order."""
    registry = registry or get_registry()
    offered: dict[str, list[str]] = {}
    if kind == "queue":
        for var in every_queue_vars():
            offered.setdefault(var.name, []).append("every queue")
    for family in ("transport", "cc") if kind == "flow" else ("queue",):
        for model in registry.models(family):
            for var in model.vars:
                offered.setdefault(var.name, []).append(model.name)
    return offered


def trace_column_meanings(registry: Registry | None = None) -> dict[str, tuple[str, str]]:
    """What the last part of a trace column (after ``flow.N.`` or ``queue.A->B.``) stands for:
    the variable and its unit, for every column a run can write: those sampled without being
    named (``len_pkts``, ``cwnd_bytes``, ``retransmissions``...) and every declared variable's."""
    facts = engine_facts()
    registry = registry or get_registry()
    meanings: dict[str, tuple[str, str]] = {}
    declared = [VarInfo.from_json(v) for entity in ("queue", "flow") for v in facts["trace_columns"][entity]]
    declared += every_queue_vars()
    declared += [var for family in ("transport", "cc", "queue") for m in registry.models(family) for var in m.vars]
    for var in declared:
        meanings.setdefault(var.column, (var.name, var.unit))
    return meanings


def unit_suffixes() -> dict[str, str]:
    """Each variable unit's column suffix (``"s"`` -> ``"_s"``; ``""`` for units without one)."""
    units: dict[str, str] = engine_facts()["var_units"]
    return units


def get_registry() -> Registry:
    """The engine's registry, read once from ``_core``."""
    global _registry
    if _registry is None:
        from .. import _core  # imported lazily: units and parsing work without the engine

        _registry = Registry.from_json(_core.registry_json())
        for model in _added.values():
            _registry.add(model)
    return _registry


def set_registry(registry: Registry | None) -> None:
    """Use another registry (tools and tests that describe models without the engine);
    ``None`` goes back to the engine's."""
    global _registry
    _registry = registry


def validate_params(family: str, name: str, given: Mapping[str, object], path: str) -> dict[str, Any]:
    """Check and convert the parameters of one model against the engine's registry."""
    return get_registry().validate_params(family, name, given, path)
