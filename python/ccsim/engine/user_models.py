"""Congestion controls and queue disciplines written in Python, run inside the engine.

A class decorated with :func:`congestion_control` or :func:`queue_discipline` becomes a model
like the built-in ones: the registry lists it with its parameters (``ccsim list``), scenarios
name it (``cc = "my_aimd"``, or ``cc = { python = "my_cc.py:MyAimd", a = 2 }`` to load it from
a file), and runs, sweeps, SMC and ``compare`` use it. The engine calls its methods through the
same traits as a Rust model (``crates/ccsim-py/src/models.rs``); docs/python-models.md
describes the interface.

A model is found again in another process (a sweep's workers, a Dask cluster) by its
*source*, which the compiled configuration carries: ``/abs/path/file.py:Class`` for a class
loaded from a file, ``package.module:Class`` for an importable module, or ``pickle:...`` (the
class pickled by value with cloudpickle) for a class defined in ``__main__`` or a notebook.
"""

from __future__ import annotations

import base64
import contextlib
import contextvars
import hashlib
import importlib
import importlib.util
import json
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeVar

from ..errors import FieldError, show
from ..scenario import registry as reg
from ..scenario import units

__all__ = [
    "congestion_control",
    "queue_discipline",
    "param",
    "load",
    "load_file",
    "instantiate",
    "relative_to",
    "registered",
    "unregister",
]

FAMILIES: Final[dict[str, str]] = {"cc": "congestion control", "queue": "queue discipline"}
PICKLED: Final = "pickle:"
T = TypeVar("T", bound=type)

# The folder that relative file sources are read from while a scenario file is validated.
_BASE_DIR: contextvars.ContextVar[Path | None] = contextvars.ContextVar("ccsim_model_base_dir", default=None)


@dataclass(frozen=True)
class Param:
    """A declared parameter of a Python model: its default as a scenario writes it (``"5ms"``,
    ``0.5``, ``"1000p"``), its kind (inferred from the default when not given) and a doc line."""

    default: Any
    kind: str | None = None
    doc: str = ""
    min: float | None = None
    max: float | None = None


def param(
    default: Any, kind: str | None = None, doc: str = "", min: float | None = None, max: float | None = None
) -> Param:
    """A parameter with its kind (``time``, ``rate``, ``bytes``, ``size``, ``float``, ``prob``,
    ``int``, ``bool``), documentation and bounds; a bare default in ``params`` is enough when
    its kind is clear from it."""
    return Param(default, kind, doc, min, max)


@dataclass(frozen=True)
class _Declared:
    """What the decorator records on the class (pickled with it)."""

    family: str
    name: str
    doc: str
    params: tuple[reg.ParamInfo, ...]
    random: str | None


@dataclass(frozen=True)
class UserModel:
    """A registered Python model."""

    declared: _Declared
    cls: type
    source: str


_MODELS: dict[tuple[str, str], UserModel] = {}
_BY_SOURCE: dict[str, type] = {}


def registered() -> list[UserModel]:
    """Every Python model this process knows."""
    return list(_MODELS.values())


def unregister(family: str, name: str) -> None:
    """Forget the Python model ``name`` of ``family`` (a scenario can no longer name it until
    its source is loaded again)."""
    model = _MODELS.pop((family, name), None)
    if model is not None:
        for source in [s for s, cls in _BY_SOURCE.items() if cls is model.cls]:
            del _BY_SOURCE[source]
        reg.remove_model(family, name)


def _infer_kind(name: str, value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        for kind in ("time", "rate", "size"):
            try:
                reg.parse_param(kind, value)
            except units.UnitError:
                continue
            return kind
    raise TypeError(
        f"parameter {name!r}: cannot tell its kind from the default {value!r}; "
        "declare it with ccsim.param(default, kind=...)"
    )


def _param_info(name: str, spec: Any) -> reg.ParamInfo:
    p = spec if isinstance(spec, Param) else Param(spec)
    kind = p.kind or _infer_kind(name, p.default)
    if kind not in reg.KIND_UNITS or kind == "choice":
        raise TypeError(
            f"parameter {name!r}: kind {kind!r} is not one of {', '.join(k for k in reg.KIND_UNITS if k != 'choice')}"
        )
    try:
        default = reg.parse_param(kind, p.default)
    except units.UnitError as exc:
        raise TypeError(f"parameter {name!r}: default {p.default!r}: {exc}") from None
    return reg.ParamInfo(name=name, kind=kind, default=default, min=p.min, max=p.max, doc=p.doc or f"({kind})")


def _decorator(
    family: str, name: str, params: Mapping[str, Any] | None, doc: str | None, random: str | None
) -> Callable[[T], T]:
    if not isinstance(name, str) or not name.isidentifier() or name != name.lower():
        raise ValueError(f"a model name is a lower-case identifier such as 'my_aimd', got {name!r}")

    def register(cls: T) -> T:
        if not isinstance(cls, type):
            raise TypeError(f"@{_DECORATORS[family]} decorates a class, got {cls!r}")
        infos = tuple(_param_info(key, value) for key, value in (params or {}).items())
        text = (
            doc
            if doc is not None
            else " ".join((cls.__doc__ or f"Python {FAMILIES[family]} {cls.__qualname__}").split())
        )
        cls.__ccsim_model__ = _Declared(family, name, text, infos, random)  # type: ignore[attr-defined]
        _register(cls, _source_of(cls))
        return cls

    return register


_DECORATORS: Final[dict[str, str]] = {"cc": "ccsim.congestion_control", "queue": "ccsim.queue_discipline"}


def congestion_control(
    name: str, params: Mapping[str, Any] | None = None, doc: str | None = None, random: str | None = None
) -> Callable[[T], T]:
    """Register a class as the congestion control ``name``. Its methods (all optional; see
    docs/python-models.md): ``on_ack(s, ack)``, ``on_ack_received(s, ack)``,
    ``on_congestion(s, event)``, ``on_rtt_sample(s, rtt)``, ``on_sent(s, nbytes)``,
    ``on_recovery_exit(s)``, ``on_timeout(s)``. ``params`` maps each parameter to its default
    (or a :func:`param`); instances get them as attributes. ``random`` says what the model
    draws with ``s.random()``, if it does (SMC needs to know)."""
    return _decorator("cc", name, params, doc, random)


def queue_discipline(
    name: str, params: Mapping[str, Any] | None = None, doc: str | None = None, random: str | None = None
) -> Callable[[T], T]:
    """Register a class as the queue discipline ``name``: ``enqueue(q, pkt)`` (keep the packet,
    or ``q.drop(pkt)``), ``dequeue(q)`` (a packet it holds, or None) and, optionally,
    ``on_wakeup(q)`` after ``q.wake_at_ns(t)``. See docs/python-models.md."""
    return _decorator("queue", name, params, doc, random)


def _source_of(cls: type) -> str:
    module = sys.modules.get(cls.__module__)
    loaded_from = getattr(module, "__ccsim_file__", None)
    if loaded_from is not None:
        return f"{loaded_from}:{cls.__qualname__}"
    if cls.__module__ != "__main__" and "<locals>" not in cls.__qualname__:
        return f"{cls.__module__}:{cls.__qualname__}"
    import cloudpickle  # a dependency of dask

    return PICKLED + base64.b64encode(cloudpickle.dumps(cls)).decode("ascii")


def _register(cls: type, source: str) -> UserModel:
    declared: _Declared = cls.__ccsim_model__  # type: ignore[attr-defined]
    engine = reg.get_registry()
    existing = engine.find(declared.family, declared.name)
    if existing is not None and existing.source is None:
        raise ValueError(f"{declared.name!r} is a built-in {FAMILIES[declared.family]}; choose another name")
    model = UserModel(declared, cls, source)
    _MODELS[(declared.family, declared.name)] = model
    _BY_SOURCE[source] = cls
    reg.add_model(
        reg.ModelInfo(
            family=declared.family,
            name=declared.name,
            doc=declared.doc,
            params=declared.params,
            random={"when": "always", "what": declared.random} if declared.random else {"when": "never"},
            source=source,
        )
    )
    return model


def base_dir() -> Path | None:
    """The folder relative file names of the scenario being read start from (``relative_to``)."""
    return _BASE_DIR.get()


@contextlib.contextmanager
def relative_to(file: str | None) -> Iterator[None]:
    """Read relative file sources from the folder of scenario ``file`` meanwhile."""
    base = Path(file).resolve().parent if file and not file.startswith("<") else None
    token = _BASE_DIR.set(base)
    try:
        yield
    finally:
        _BASE_DIR.reset(token)


def _load_file(path: Path) -> Any:
    key = "ccsim_user_" + hashlib.sha256(str(path).encode()).hexdigest()[:16]
    if key in sys.modules:
        return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, path)
    if spec is None or spec.loader is None:
        raise FieldError("", f"cannot load {path} as Python")
    module = importlib.util.module_from_spec(spec)
    module.__ccsim_file__ = str(path)  # type: ignore[attr-defined]
    sys.modules[key] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[key]
        raise FieldError("", f"{path} raised {type(exc).__name__}: {exc}") from exc
    return module


def load_file(file: str | Path) -> list[UserModel]:
    """Import a Python file (relative to the working directory) and return the models it
    registered; FieldError when it cannot be read or raises."""
    path = Path(file).resolve()
    if not path.is_file():
        raise FieldError("", f"no such file {path}")
    _load_file(path)
    prefix = f"{path}:"
    return [m for m in _MODELS.values() if m.source.startswith(prefix)]


def _class_of(source: str) -> type:
    """The class a source names (loading its file or module once)."""
    if source in _BY_SOURCE:
        return _BY_SOURCE[source]
    if source.startswith(PICKLED):
        import cloudpickle

        cls = cloudpickle.loads(base64.b64decode(source[len(PICKLED) :]))
    else:
        where, _, attr = source.rpartition(":")
        if not where or not attr:
            raise FieldError("", f"{show(source)} is not FILE.py:Class or module:Class")
        if where.endswith(".py") or "/" in where:
            path = Path(where)
            if not path.is_absolute():
                path = (_BASE_DIR.get() or Path.cwd()) / path
            path = path.resolve()
            if not path.is_file():
                raise FieldError("", f"no such file {path}")
            module = _load_file(path)
            source = f"{path}:{attr}"
        else:
            try:
                module = importlib.import_module(where)
            except ImportError as exc:
                raise FieldError("", f"cannot import {where}: {exc}") from None
        cls = module
        for part in attr.split("."):
            cls = getattr(cls, part, None)
            if cls is None:
                raise FieldError("", f"{where} has no {attr}")
    if not isinstance(cls, type) or not hasattr(cls, "__ccsim_model__"):
        raise FieldError(
            "", f"{show(source)} is not a class decorated with @ccsim.congestion_control or @ccsim.queue_discipline"
        )
    declared: _Declared = cls.__ccsim_model__
    if (declared.family, declared.name) not in _MODELS or _MODELS[(declared.family, declared.name)].cls is not cls:
        _register(cls, source)
    _BY_SOURCE[source] = cls
    return cls


def load(family: str, source: object) -> reg.ModelInfo:
    """The model of ``family`` that ``source`` names (``file.py:Class``, ``module:Class``),
    loaded and registered; FieldError when it cannot be."""
    if family not in FAMILIES:
        raise FieldError(
            "python",
            f"Python models are congestion controls and queue disciplines, not {reg.FAMILY_TITLES.get(family, family)}s",
        )
    if not isinstance(source, str) or not source:
        raise FieldError("python", f"expected FILE.py:Class or module:Class, got {show(source)}")
    if source.startswith(PICKLED):
        # Only this process makes them (for its workers): unpickling text from a file would run
        # whatever it holds.
        raise FieldError(
            "python", "a pickled class cannot be named in a file; define the class in a .py file and name that"
        )
    try:
        declared: _Declared = _class_of(source).__ccsim_model__  # type: ignore[attr-defined]
    except FieldError as exc:
        raise FieldError("python", exc.message) from exc.__cause__
    if declared.family != family:
        raise FieldError("python", f"{show(source)} is a {FAMILIES[declared.family]}, not a {FAMILIES[family]}")
    return reg.get_registry().model(family, declared.name)


def _to_python(kind: str, value: Any) -> Any:
    """A canonical parameter value as the model sees it: times in seconds, the rest as is."""
    return value / 1e9 if kind == "time" else value


def pickled_sources(config: Any) -> list[str]:
    """The keys of a core configuration (as nested dicts) whose model is a pickled class."""
    found: list[str] = []

    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict):
            external = node.get("external")
            if isinstance(external, str) and external.startswith(PICKLED):
                found.append(path)
            for key, value in node.items():
                walk(value, f"{path}.{key}" if path else str(key))
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{path}[{i}]")

    walk(config, "")
    return found


def instantiate(family: str, name: str, source: str, params_json: str) -> Any:
    """Called by the engine for every flow or queue using the model: an instance with its
    parameters (canonical, absent ones at their defaults) set as attributes before
    ``__init__`` runs."""
    cls: Any = _class_of(source)
    declared: _Declared = cls.__ccsim_model__
    if (declared.family, declared.name) != (family, name):
        raise ValueError(f"{source} is the {FAMILIES[declared.family]} {declared.name!r}, not {name!r}")
    given = json.loads(params_json)
    obj = cls.__new__(cls)
    for info in declared.params:
        setattr(obj, info.name, _to_python(info.kind, given.get(info.name, info.default)))
    obj.__init__()
    return obj
