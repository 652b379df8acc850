"""Metrics computed from result tables (the engine computes its own, e.g. `Result.jain_index`)."""

from __future__ import annotations

from typing import Any

import numpy as np


def jain(values: Any) -> float:
    """Jain's fairness index (sum x)^2 / (n sum x^2) (Jain, Chiu and Hawe 1984): 1 for equal
    shares, 1/n when one of n takes everything; NaN when nothing was delivered (or no value)."""
    x = np.asarray(values, dtype=float)
    denom = len(x) * float(np.sum(x * x))
    return float(np.sum(x)) ** 2 / denom if denom > 0 else float("nan")
