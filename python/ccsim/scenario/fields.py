"""Building blocks of the scenario models: a strict base model, quantity fields with units,
and algorithm choices checked against the engine's registry.

Validated models hold canonical values (ns, bit/s, bytes); dumping a model writes them back
with units, so a dump can be loaded again and compiles to the same configuration.
"""

from __future__ import annotations

from typing import Annotated, Any, Self

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    PlainSerializer,
    ValidationError,
    model_serializer,
    model_validator,
)

from ..errors import NO_FILE, FieldError, scenario_error_from_validation, show
from . import units
from .registry import FAMILY_TITLES, get_registry
from .written import Written

__all__ = [
    "StrictModel",
    "Time",
    "Rate",
    "Bytes",
    "Size",
    "Prob",
    "StartWindow",
    "AlgoSpec",
    "QueueAlgo",
    "CcAlgo",
    "TransportAlgo",
    "AppAlgo",
    "ControllerAlgo",
    "ReferenceAlgo",
]


class StrictModel(BaseModel):
    """Base of every scenario table: unknown keys are errors that list the allowed ones."""

    # No custom __init__ here: pydantic would route nested validation through it. Builders that
    # want ScenarioError instead of ValidationError use `build` below.
    # strict: `seed = true`, `count = "3"` or `count = 2.0` are mistakes, not 1, 3 and 2.
    model_config = ConfigDict(extra="forbid", strict=True)

    @classmethod
    def build(cls, data: Any, file: str = NO_FILE) -> Self:
        """Validate ``data``; problems raise ScenarioError (``FILE: FIELD: MESSAGE``)."""
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise scenario_error_from_validation(exc, file) from None

    @model_validator(mode="before")
    @classmethod
    def _reject_unknown_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            allowed = list(cls.model_fields)
            for key in data:
                if key not in cls.model_fields:
                    raise FieldError(str(key), f"unknown field; allowed: {', '.join(allowed)}")
        return data


# The parsers raise UnitError, a ValueError: pydantic reports its message, which says what is
# allowed (errors.py turns it into the one-line form). Written is how a file writes each of
# them: the JSON Schema of scenario files (written.py).
Time = Annotated[
    int, BeforeValidator(units.parse_time), PlainSerializer(units.format_time, return_type=str), Written.unit("time")
]
"""A duration; canonical value: integer nanoseconds."""
Rate = Annotated[
    int, BeforeValidator(units.parse_rate), PlainSerializer(units.format_rate, return_type=str), Written.unit("rate")
]
"""A bit rate; canonical value: integer bit/s."""
Bytes = Annotated[
    int, BeforeValidator(units.parse_bytes), PlainSerializer(units.format_bytes, return_type=str), Written.unit("bytes")
]
"""A byte count."""
Size = Annotated[
    dict[str, int],
    BeforeValidator(units.parse_size),
    PlainSerializer(units.format_size, return_type=str),
    Written.unit("size"),
]
"""A buffer size: ``{"packets": n}`` or ``{"bytes": n}``."""
Prob = Annotated[float, BeforeValidator(units.parse_prob), Written.unit("prob")]
"""A probability in [0, 1]."""


def _parse_window(value: Any) -> tuple[int, int | None]:
    """``"0s..1s"`` -> (0, 1e9): drawn uniformly by the engine; ``"2s"`` -> (2e9, None)."""
    if isinstance(value, tuple) and len(value) == 2:
        return value  # already parsed (a validated model's own value)
    if isinstance(value, str) and ".." in value:
        low_text, _, high_text = value.partition("..")
        low, high = units.parse_time(low_text.strip()), units.parse_time(high_text.strip())
        if high <= low:
            raise units.UnitError(f"{show(value)}: the window's end must be after its start")
        return low, high
    return units.parse_time(value), None


def _format_window(window: tuple[int, int | None]) -> str:
    low, high = window
    return units.format_time(low) if high is None else f"{units.format_time(low)}..{units.format_time(high)}"


StartWindow = Annotated[
    tuple[int, int | None],
    BeforeValidator(_parse_window),
    PlainSerializer(_format_window, return_type=str),
    Written.unit("window"),
]
"""A start time, or a window ``"a..b"`` the engine draws it from uniformly (per-flow stream)."""


class AlgoSpec(BaseModel):
    """A registered model chosen by name, with its given parameters in canonical units.

    A TCP transport may name a behaviour ``profile`` (``profiles.py``); the profile's values
    are applied when the scenario is compiled, under the parameters given here."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    family: str
    kind: str
    params: dict[str, Any] = {}
    profile: str | None = None
    source: str | None = None
    """A model written in Python: where its class comes from (``engine/user_models.py``)."""

    def to_config(self) -> dict[str, Any]:
        """The ``AlgoSpec`` of config.rs."""
        spec = {"kind": self.kind, "params": dict(self.params)}
        return spec if self.source is None else {**spec, "external": self.source}

    @model_serializer
    def _as_written(self) -> str | dict[str, Any]:
        # Dump the way a scenario writes it: a bare name, or a table with units.
        if not self.params and self.profile is None and self.source is None:
            return self.kind
        head = {"kind": self.kind} if self.source is None else {"python": self.source}
        profile = {} if self.profile is None else {"profile": self.profile}
        return {**head, **profile, **get_registry().to_human(self.family, self.kind, self.params)}


class _AlgoParser:
    """Reads ``"newreno"`` or ``{kind = "newreno", ...}`` for one family, via the registry."""

    def __init__(self, family: str) -> None:
        self.family = family

    def __call__(self, value: Any) -> AlgoSpec:
        if isinstance(value, AlgoSpec):
            if value.family != self.family:
                raise FieldError("", f"expected a {FAMILY_TITLES[self.family]}, got a {FAMILY_TITLES[value.family]}")
            return value
        registry = get_registry()
        if isinstance(value, str):
            source = registry.model(self.family, value).source
            return AlgoSpec(family=self.family, kind=value, source=source)
        if isinstance(value, dict):
            given = dict(value)
            if "python" in given:
                from ..engine import user_models

                if "kind" in given:
                    raise FieldError(
                        "kind", "give either kind (a registered model) or python (a class to load), not both"
                    )
                model = user_models.load(self.family, given.pop("python"))
                kind = model.name
            elif "kind" not in given:
                names = ", ".join(registry.names(self.family))
                raise FieldError("kind", f"required field missing; registered: {names}")
            else:
                kind = given.pop("kind")
                model = registry.model(self.family, kind, "kind")
            has_profile = self.family == "transport" and "profile" in given
            profile = self._profile(kind, given.pop("profile")) if has_profile else None
            # A flow named instead of numbered: check the rest now, resolve the name later.
            named = {
                key: value
                for key, value in given.items()
                if key in model.flow_refs
                and isinstance(value, str)
                and (spec := model.param(key)) is not None
                and spec.kind == "int"
            }
            params = registry.validate_params(self.family, kind, {**given, **dict.fromkeys(named, 0)})
            params.update(named)
            return AlgoSpec(family=self.family, kind=kind, params=params, profile=profile, source=model.source)
        names = ", ".join(registry.names(self.family))
        raise FieldError("", f"expected a name or a table with kind = ..., got {show(value)}; registered: {names}")

    @staticmethod
    def _profile(kind: str, name: object) -> str:
        """A behaviour profile named in a TCP transport table (``profile = "linux"``)."""
        if kind != "tcp":
            raise FieldError("profile", f"behaviour profiles apply to TCP flows; {kind} has none")
        get_registry().profile(name, "profile")
        assert isinstance(name, str)  # checked by the registry
        return name


QueueAlgo = Annotated[AlgoSpec, BeforeValidator(_AlgoParser("queue")), Written.ref("QueueAlgo")]
CcAlgo = Annotated[AlgoSpec, BeforeValidator(_AlgoParser("cc")), Written.ref("CcAlgo")]
TransportAlgo = Annotated[AlgoSpec, BeforeValidator(_AlgoParser("transport")), Written.ref("TransportAlgo")]
AppAlgo = Annotated[AlgoSpec, BeforeValidator(_AlgoParser("app")), Written.ref("AppAlgo")]
ControllerAlgo = Annotated[AlgoSpec, BeforeValidator(_AlgoParser("controller")), Written.ref("ControllerAlgo")]
ReferenceAlgo = Annotated[AlgoSpec, BeforeValidator(_AlgoParser("reference")), Written.ref("ReferenceAlgo")]


def algo(family: str, kind: str) -> AlgoSpec:
    """A model at its defaults, e.g. ``algo("queue", "droptail")`` (no registry look-up)."""
    return AlgoSpec(family=family, kind=kind)
