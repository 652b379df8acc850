"""The engine's tables (flows, queues, control loops) as columns or records, without pandas."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

# The engine's tables of one row per flow, per queue and per control loop.
TABLES = ("flows", "queues", "control")


def records(table: Mapping[str, Any] | list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A table of the engine's results as records: given as columns (``Simulation.results``,
    NumPy arrays or lists), or already as records (the engine's JSON), as they are."""
    if not isinstance(table, Mapping):
        return list(table)
    columns = [value.tolist() if isinstance(value, np.ndarray) else list(value) for value in table.values()]
    return [dict(zip(table.keys(), row)) for row in zip(*columns)]


def with_records(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The engine's results with the flows, queues and control loops as records (``records``)."""
    return {**raw, **{key: records(raw.get(key) or []) for key in TABLES}}
