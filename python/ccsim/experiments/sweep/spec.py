"""The sweep file: its keys, checked, as a ``SweepSpec`` (the base scenario, the fixed and varied
keys, the seeds)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import ScenarioError, show
from ...scenario.schema import U64_MAX, read_toml

SEED_MODES = ("independent", "common")
_SWEEP_KEYS = ("scenario", "seeds", "seed_mode", "master_seed", "set", "grid", "points", "description")


@dataclass
class SweepSpec:
    """A parsed sweep file."""

    file: str
    scenario: Path
    base: dict[str, Any]
    fixed: dict[str, Any] = field(default_factory=dict)
    grid: dict[str, list[Any]] = field(default_factory=dict)
    points: list[dict[str, Any]] = field(default_factory=list)
    seeds: int | list[int] = 1
    seed_mode: str = "independent"
    master_seed: int = 0
    description: str | None = None
    origins: dict[str, str] = field(default_factory=dict)
    """Where each key of ``fixed`` was given, as errors name it (``--set``); by default ``set.KEY``."""

    def origin(self, key: str) -> str:
        """How errors name ``key`` of the sweep: ``set.KEY``, ``--set``, ``grid.KEY`` or ``points[i].KEY``."""
        if key in self.grid:
            return f"grid.{key}"
        for i, point in enumerate(self.points):
            if key in point:
                return f"points[{i}].{key}"
        return self.origins.get(key, f"set.{key}")

    @property
    def varied(self) -> list[str]:
        """The keys that change from point to point, in file order (points first)."""
        keys: list[str] = []
        for point in self.points:
            keys.extend(k for k in point if k not in keys)
        keys.extend(k for k in self.grid if k not in keys)
        return keys

    @property
    def replicates(self) -> int:
        return len(self.seeds) if isinstance(self.seeds, list) else self.seeds


def _is_seed(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= U64_MAX


def load_sweep(path: str | Path, overrides: list[str] | None = None) -> SweepSpec:
    """Read and check a sweep file; ``overrides`` (``KEY=VALUE``) join its ``[set]`` table."""
    file = str(path)
    data = read_toml(path)

    def bad(key: str, message: str) -> ScenarioError:
        return ScenarioError(file, key, message)

    for key in data:
        if key not in _SWEEP_KEYS:
            raise bad(key, f"unknown field; allowed: {', '.join(_SWEEP_KEYS)}")
    if not isinstance(data.get("scenario"), str):
        raise bad("scenario", "required: the path of the base scenario file, relative to the sweep file")
    scenario = (Path(path).parent / data["scenario"]).resolve()
    base = read_toml(scenario)

    seeds = data.get("seeds", 1)
    if isinstance(seeds, list):
        if not seeds or not all(_is_seed(s) for s in seeds):
            raise bad("seeds", f"expected a non-empty list of integers in 0..{U64_MAX}, got {show(seeds)}")
        if len(set(seeds)) != len(seeds):
            raise bad("seeds", "the seeds must differ from one another")
    elif not (isinstance(seeds, int) and not isinstance(seeds, bool) and seeds >= 1):
        raise bad("seeds", f"expected a number of replicates (>= 1) or a list of seeds, got {show(seeds)}")
    seed_mode = data.get("seed_mode", "independent")
    if seed_mode not in SEED_MODES:
        raise bad("seed_mode", f"expected one of {', '.join(SEED_MODES)}, got {show(seed_mode)}")
    if isinstance(seeds, list) and "seed_mode" in data:
        raise bad("seed_mode", "a list of seeds is used as given at every point; remove seed_mode")
    master = data.get("master_seed", 0)
    if not _is_seed(master):
        raise bad("master_seed", f"expected an integer in 0..{U64_MAX}, got {show(master)}")

    fixed = data.get("set", {})
    if not isinstance(fixed, dict):
        raise bad("set", "expected a table of KEY = value (keys as for --set, quoted)")
    fixed = dict(fixed)
    origins: dict[str, str] = {}
    for text in overrides or []:
        from ...scenario.overrides import parse_value

        key, sep, raw = text.partition("=")
        if not sep or not key.strip():
            raise bad("--set", f"expected KEY=VALUE (e.g. simulation.duration=30s), got {show(text)}")
        fixed[key.strip()] = parse_value(raw.strip())
        origins[key.strip()] = f"--set {key.strip()}"

    grid = data.get("grid", {})
    if not isinstance(grid, dict):
        raise bad("grid", 'expected a table of "KEY" = [values]')
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise bad(f"grid.{key}", f'expected a non-empty list of values, e.g. "{key}" = [a, b], got {show(values)}')
    points = data.get("points", [])
    if not isinstance(points, list) or not all(isinstance(p, dict) for p in points):
        raise bad("points", 'expected an array of tables: [[points]] with "KEY" = value lines')
    for i, point in enumerate(points):
        if not point:
            raise bad(f"points[{i}]", "an empty point; give at least one KEY = value")
        for key in point:
            if key in grid:
                raise bad(f"points[{i}].{key}", "also a key of [grid]; vary a key in one place")
    description = data.get("description")
    return SweepSpec(
        file=file,
        scenario=scenario,
        base=base,
        fixed=fixed,
        grid=dict(grid),
        points=list(points),
        seeds=seeds,
        seed_mode=seed_mode,
        master_seed=master,
        description=description,
        origins=origins,
    )
