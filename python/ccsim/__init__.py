"""ccsim: a fast, deterministic packet-level network simulator.

The engine is Rust (``ccsim._core``); this package reads scenarios, checks them against the
engine's registry of models, runs them and presents the results::

    import ccsim
    result = ccsim.run("scenarios/flagship.toml", seed=2)
    result.flows[["id", "cc", "goodput_bps"]]
    result.write("out/")

Subpackages, in the order data flows through them: ``scenario`` (schema, units, topologies,
the engine's registry; compiles a scenario), ``engine`` (runs it: ``run``, ``replay``, the
executor of many runs), ``results`` (``Result``, plots, metrics, ARIMA), ``experiments``
(sweeps, SMC, ``compare``, paper reproductions) and ``cli`` (the ``ccsim`` command).
"""

from __future__ import annotations

import logging as _logging
from importlib import metadata as _metadata
from typing import TYPE_CHECKING, Any

from .engine.user_models import congestion_control, param, queue_discipline
from .errors import ScenarioError
from .scenario.builders import daisy_chain, dumbbell, explicit, star
from .scenario.schema import Control, Flow, Metrics, Plant, Scenario, Simulation, Trace, from_dict, load
from .scenario.topology import DaisyChain, Dumbbell, Explicit, LinkSpec, Star

if TYPE_CHECKING:
    from .engine.runner import replay, run
    from .results.result import Result

# Diagnostics and progress lines are records of the ``ccsim`` loggers (``ccsim.progress``,
# ``ccsim.engine.runner``, ...). A library configures no output of its own: the ``ccsim`` command
# shows them on stderr, a program shows them once it configures logging.
_logging.getLogger(__name__).addHandler(_logging.NullHandler())

try:
    __version__ = _metadata.version("ccsim")
except _metadata.PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = [
    "run",
    "replay",
    "Result",
    "load",
    "from_dict",
    "compile",
    "Scenario",
    "Simulation",
    "Flow",
    "Metrics",
    "Trace",
    "Control",
    "Plant",
    "LinkSpec",
    "Dumbbell",
    "DaisyChain",
    "Explicit",
    "Star",
    "dumbbell",
    "daisy_chain",
    "explicit",
    "star",
    "ScenarioError",
    "congestion_control",
    "queue_discipline",
    "param",
]


def compile(scenario: Scenario) -> dict[str, Any]:  # the public name of the step
    """The core configuration (config.rs) a scenario compiles to, as a JSON-able dict."""
    return scenario.to_config()


def __getattr__(name: str) -> Any:
    # `run`, `replay` and `Result` pull in pandas; importing them on first use keeps `ccsim validate`
    # and `ccsim list` quick.
    if name in ("run", "replay"):
        from .engine import runner

        return getattr(runner, name)
    if name == "Result":
        from .results.result import Result

        return Result
    raise AttributeError(f"module 'ccsim' has no attribute {name!r}")
