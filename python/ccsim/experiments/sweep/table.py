"""The results table of a sweep (``OUT/results.parquet``, one row per run) and the per-flow
table of every finished run."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import ScenarioError
from .expansion import _canonical
from .rundir import RUNS_DIR, _read_record

if TYPE_CHECKING:
    from .planning import Plan

RESULTS_FILE = "results.parquet"


def _params_frame_value(value: Any) -> Any:
    return value if isinstance(value, (int, float, str, bool)) or value is None else _canonical(value)


def build_table(plan_: Plan, out: Path) -> Any:
    """The results table of the runs of ``plan_`` finished in ``out``, in sweep order."""
    import pandas as pd

    runs_dir = out / RUNS_DIR
    rows = []
    for run in plan_.runs:
        record = _read_record(runs_dir, run.key)
        if record is None:
            continue
        row: dict[str, Any] = {"point": run.point, "replicate": run.replicate, "seed": run.seed}
        for key in plan_.spec.varied:
            row[key] = _params_frame_value(run.params.get(key))
        row["status"] = record.get("status")
        row["error"] = record.get("error")
        row.update(record.get("metrics") or {})
        row["run_dir"] = f"{RUNS_DIR}/{run.key}"
        rows.append(row)
    table = pd.DataFrame(rows)
    if not table.empty:
        table["seed"] = table["seed"].astype("uint64")
        for column in table.columns:
            values = table[column].dropna()
            if table[column].dtype == object and len({type(v) for v in values}) > 1:
                table[column] = table[column].map(lambda v: None if v is None else str(v))
    return table


def _write_table(table: Any, out: Path) -> None:
    tmp = out / f".{RESULTS_FILE}.tmp-{os.getpid()}"
    table.to_parquet(tmp, index=False)
    os.replace(tmp, out / RESULTS_FILE)


# --- reading results back ------------------------------------------------------------------------


def flows_table(out: str | Path) -> Any:
    """Every finished run's per-flow table (``flows.parquet``) with the run's point,
    replicate, seed and varied keys in front: one row per flow per run."""
    import pandas as pd

    out = Path(out)
    table = pd.read_parquet(out / RESULTS_FILE)
    frames = []
    ok = table[table["status"] == "ok"]
    front = [
        c
        for c in ok.columns
        if c not in ("status", "error", "wall_time_s", "run_dir")
        and not c.startswith(("bottleneck.", "control.", "group."))
    ]
    front = [
        c
        for c in front
        if c in ("point", "replicate", "seed")
        or c in json.loads((out / "sweep.json").read_text(encoding="utf-8"))["varied"]
    ]
    for _, row in ok.iterrows():
        path = out / row["run_dir"] / "flows.parquet"
        try:
            flows = pd.read_parquet(path)
        except Exception as exc:  # missing, truncated, not Parquet (damaged after the sweep)
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ScenarioError(
                str(path),
                "",
                f"damaged or unreadable ({first}); rerun the sweep: it checks "
                "every run and runs the damaged ones again",
            ) from None
        for i, column in enumerate(front):
            flows.insert(i, column, row[column])
        frames.append(flows)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
