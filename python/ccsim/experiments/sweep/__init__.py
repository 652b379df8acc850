"""Parameter sweeps: a base scenario, the keys to vary, seeds per point; run on local cores or a
Dask cluster, resumable, one tidy results table.

A sweep file (TOML)::

    scenario = "../flagship.toml"      # the base scenario, relative to this file
    seeds = 3                          # replicates per point; or a list of seeds used at every point
    seed_mode = "independent"          # "independent" (default) or "common"
    master_seed = 0                    # what every derived seed depends on

    [set]                              # fixed overrides for every run, keys as for --set
    "simulation.duration" = "20s"

    [grid]                             # cartesian product of the lists
    "topology.bottleneck.queue.kind" = ["droptail", "codel", "pie"]
    "flows.cc" = ["newreno", "cubic"]

    [[points]]                         # explicit points; with a grid, each is combined with it
    "topology.bottleneck.rate" = "10Mbps"

Seeds are derived from the sweep file alone, never from the order or place runs execute in:
``independent`` seeds hash (master_seed, the point's values, replicate); ``common`` seeds hash
(master_seed, replicate), so every point sees the same random numbers (paired comparisons); a
list of seeds is used as given at every point. The same sweep file gives the same runs, and a
Dask cluster gives the same bytes as the local pool.

Output directory::

    OUT/results.parquet     one row per run: point, replicate, seed, each varied key, status,
                            error, and the run's summary metrics (see summary_metrics)
    OUT/runs/KEY/           one directory per finished run: run.json, summary.json, config.json,
                            flows/queues/traces/control*.parquet, and timing.json (wall time and
                            host: the only file that differs between executors and reruns)

A run's KEY is a hash of the core configuration it simulates (seed included): a directory is
written under a temporary name and renamed when complete, so it exists whole or not at all,
and its run.json lists the size and SHA-256 of every other file (timing.json apart). Rerunning
the sweep skips every KEY whose directory checks out, and runs the damaged ones again (counted
in ``SweepResult.damaged``); changing the base scenario or a value changes the KEYs of the runs
it affects. A run that fails is recorded (status "failed" and the error); ``retry_failed`` runs
it again. A mistake of the sweep file itself (a key the scenario does not have, a bad value in
[set]) is a ``SweepFileError`` before anything runs.
"""

from __future__ import annotations

from .expansion import RunSpec, SweepFileError, derive_seed, expand
from .planning import Plan, describe_plan, estimate_cost, plan
from .rundir import summary_metrics
from .running import SweepInterrupted, SweepResult, run_sweep
from .spec import SweepSpec, load_sweep
from .table import RESULTS_FILE, flows_table

__all__ = [
    "SweepSpec",
    "RunSpec",
    "Plan",
    "SweepResult",
    "load_sweep",
    "expand",
    "plan",
    "run_sweep",
    "summary_metrics",
    "derive_seed",
    "estimate_cost",
    "flows_table",
    "describe_plan",
    "SweepFileError",
    "SweepInterrupted",
    "RESULTS_FILE",
]
