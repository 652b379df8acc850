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


# Flow sizes by which completion times are summarised: short, medium and long flows, the
# buckets of pFabric (Alizadeh et al., SIGCOMM 2013, sec. 5) and of most AQM and datacenter
# transport work since; "short" is the first.
FCT_BUCKETS: tuple[tuple[str, float, float], ...] = (
    ("(0, 100kB]", 0, 100_000),
    ("(100kB, 10MB]", 100_000, 10_000_000),
    ("(10MB, inf)", 10_000_000, float("inf")),
)


def fct_table(flows: Any) -> Any:
    """Flow completion times by size bucket (``FCT_BUCKETS``) and over all sized flows: the
    flows of the bucket (``flows``), those complete at the end of the run (``completed``),
    and over the completed ones the mean, median and 99th percentile of ``fct_s`` and of
    ``slowdown``. Flows still running at the end are counted, not timed: a run too short for
    its long flows says so in ``completed``. Empty without transfers (no ``size_bytes``)."""
    import pandas as pd

    columns = ["size", "flows", "completed", "mean_fct_s", "p50_fct_s", "p99_fct_s", "mean_slowdown", "p99_slowdown"]
    if "size_bytes" not in flows.columns:
        return pd.DataFrame(columns=columns)
    sized = flows[flows["size_bytes"].notna()]
    if sized.empty:
        return pd.DataFrame(columns=columns)
    rows = []
    for label, low, high in (*FCT_BUCKETS, ("all", 0, float("inf"))):
        part = sized[(sized["size_bytes"] > low) & (sized["size_bytes"] <= high)]
        done = part[part["fct_s"].notna()]
        fct = done["fct_s"].to_numpy(dtype=float)
        slow = done["slowdown"].to_numpy(dtype=float)

        def stat(x: np.ndarray, f: Any) -> float:
            return float(f(x)) if len(x) else float("nan")

        rows.append(
            {
                "size": label,
                "flows": len(part),
                "completed": len(done),
                "mean_fct_s": stat(fct, np.mean),
                "p50_fct_s": stat(fct, lambda x: np.quantile(x, 0.5)),
                "p99_fct_s": stat(fct, lambda x: np.quantile(x, 0.99)),
                "mean_slowdown": stat(slow, np.mean),
                "p99_slowdown": stat(slow, lambda x: np.quantile(x, 0.99)),
            }
        )
    return pd.DataFrame(rows, columns=columns)
