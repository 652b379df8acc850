"""Type stubs of the Rust engine's bindings (crates/ccsim-py)."""

from typing import Any

__version__: str

class ConfigError(ValueError):
    """A core configuration that cannot be simulated."""

    field: str
    message: str

class SimulationError(RuntimeError):
    """The engine failed (a bug): the message names the seed to replay it.

    ``ccsim.run`` adds ``scenario`` (the file, or None), ``config`` (the core configuration
    that failed) and ``overrides``; ``ccsim.engine.runner.write_replay`` saves them for ``ccsim.replay``.
    """

    seed: int
    panic: str
    scenario: str | None
    overrides: list[str]
    config: dict[str, Any]

class Simulation:
    """A simulation built from a core configuration (config.rs ``Config``, as JSON)."""

    def __init__(self, config_json: str) -> None: ...
    @property
    def now_ns(self) -> int: ...
    @property
    def duration_ns(self) -> int: ...
    @property
    def seed(self) -> int: ...
    @property
    def finished(self) -> bool: ...
    @property
    def events(self) -> int: ...
    def run_until(self, t_ns: int) -> None:
        """Advance simulated time to ``t_ns`` (capped at the duration), GIL released."""
    def advance(self, t_ns: int, max_events: int) -> bool:
        """Run at most ``max_events`` events towards ``t_ns``, GIL released; True once reached."""
    def results(self) -> dict[str, Any]:
        """Everything measured so far (results.rs ``Results``): scalars, and each table (flows,
        queues, control loops, logs) as a dict of columns, NumPy arrays where numeric, lists
        with ``None`` where some values are missing (``ccsim.results.tables.records`` turns a
        table into records)."""
    def results_json(self) -> str:
        """The same as the engine's JSON (tables as records), as ``ccsim-bench`` writes it."""

def registry_json() -> str:
    """Every registered model with its parameters, as JSON."""

def facts_json() -> str:
    """Engine facts besides the models: a control loop's result row and the highest plant order."""

def validate(config_json: str) -> None:
    """Every check of ``Simulation(config_json)``, keeping nothing: raises ``ConfigError``
    naming the engine's field (``ccsim.scenario.scenario_key`` maps it to the scenario's key)."""

def flow_paths(config_json: str) -> list[list[int]]:
    """Every flow's path from its source to its destination as the engine routes it: link
    indices (``2 i`` is ``links[i]`` from a to b, ``2 i + 1`` back), empty when the two hosts
    are not connected. Raises ``ConfigError`` for a node index that does not exist."""
