"""A sweep's runs: every point of its grid and points, every replicate with its derived seed,
and the configuration each one simulates."""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import re
from dataclasses import dataclass
from typing import Any

from ...errors import ScenarioError
from ...scenario.limits import check as check_memory
from ...scenario.overrides import set_value
from ...scenario.schema import from_dict
from .spec import SweepSpec


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str)


def derive_seed(master: int, *parts: Any) -> int:
    """A 64-bit seed from ``master`` and ``parts`` (SHA-256 of their canonical JSON)."""
    digest = hashlib.sha256(_canonical([master, *parts]).encode()).digest()
    return int.from_bytes(digest[:8], "little")


@dataclass
class RunSpec:
    """One run of a sweep: a point, a replicate, its seed and the configuration it simulates
    (``None`` with ``error`` when the point's scenario is invalid)."""

    point: int
    replicate: int
    params: dict[str, Any]
    seed: int
    key: str
    config: dict[str, Any] | None
    error: str | None = None


def _grid_points(spec: SweepSpec) -> list[dict[str, Any]]:
    keys = list(spec.grid)
    grid = [dict(zip(keys, values)) for values in itertools.product(*(spec.grid[k] for k in keys))] if keys else [{}]
    explicit = spec.points or [{}]
    return [{**point, **cell} for point in explicit for cell in grid]


class SweepFileError(ScenarioError):
    """A mistake of the sweep file (or of its --set) that would fail every run it touches: a
    malformed or unknown key, a bad value in [set]. Raised before anything runs."""


def _apply(spec: SweepSpec, data: dict[str, Any], params: dict[str, Any]) -> None:
    """Set the fixed keys, then the point's, into ``data``; a key that cannot be set (malformed,
    an index past the end, a value where a table is needed) is the sweep file's mistake."""
    for key, value in [*spec.fixed.items(), *params.items()]:
        try:
            set_value(data, key, value, str(spec.scenario))
        except ScenarioError as exc:
            raise SweepFileError(spec.file, spec.origin(key), f"{exc.message} (in {exc.file})") from None


# Messages of a field that does not exist (errors.py, scenario/registry.py): a key, not a value, is wrong.
_UNKNOWN_KEY = ("unknown field", "unknown parameter")


def _blame_the_sweep_file(spec: SweepSpec, params: dict[str, Any], exc: ScenarioError) -> SweepFileError | None:
    """The sweep-file error behind ``exc`` (the validation error of one point's scenario), or
    None when it is the point's own: a value of [set] that the point does not replace fails
    every point, and so does a key of [grid] or [[points]] that the scenario does not have."""
    from ...scenario.overrides import _path_text, parse_key
    from ...scenario.schema import _concerns

    for key in [*spec.fixed, *params]:
        normalized = _path_text(parse_key(key))
        fixed = key in spec.fixed and key not in params
        unknown = exc.message.startswith(_UNKNOWN_KEY) and re.sub(r"\[\d+\]", "", exc.field) == re.sub(
            r"\[\d+\]", "", normalized
        )
        if (fixed and _concerns(exc.field, normalized)) or unknown:
            where = "" if exc.field == normalized else f" at {exc.field}"
            return SweepFileError(spec.file, spec.origin(key), f"{exc.message} (in {exc.file}{where})")
    return None


def expand(spec: SweepSpec) -> list[RunSpec]:
    """Every run of the sweep, point by point and replicate by replicate. Each point's scenario
    is validated and compiled here (in the parent, quickly); an invalid point gives runs with
    ``error`` set, which the sweep records as failed."""
    runs: list[RunSpec] = []
    for p, params in enumerate(_grid_points(spec)):
        data = copy.deepcopy(spec.base)
        config: dict[str, Any] | None = None
        error: str | None = None
        where = ", ".join(f"{k}={_canonical(v)}" for k, v in params.items()) or "the base scenario"
        try:
            _apply(spec, data, params)
            try:
                model = from_dict(data, str(spec.scenario))
            except ScenarioError as exc:
                raise _blame_the_sweep_file(spec, params, exc) or exc from None
            compiled = model.to_config()
            check_memory(compiled, str(spec.scenario))  # a run that would exhaust the memory is refused
            config = compiled
        except SweepFileError:
            raise
        except ScenarioError as exc:
            error = f"{exc} (sweep point {p}: {where})"
        for r in range(spec.replicates):
            if isinstance(spec.seeds, list):
                seed = spec.seeds[r]
            elif spec.seed_mode == "common":
                seed = derive_seed(spec.master_seed, "replicate", r)
            else:
                seed = derive_seed(spec.master_seed, "point", sorted(params.items()), "replicate", r)
            if config is not None:
                run_config = dict(config, seed=seed)
                key = hashlib.sha256(_canonical({"config": run_config}).encode()).hexdigest()[:16]
            else:
                run_config = None
                key = hashlib.sha256(_canonical({"invalid": data, "seed": seed}).encode()).hexdigest()[:16]
            runs.append(
                RunSpec(point=p, replicate=r, params=dict(params), seed=seed, key=key, config=run_config, error=error)
            )
    return runs
