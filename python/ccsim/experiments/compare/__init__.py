"""``ccsim compare``: every congestion control x queue discipline on the user's own scenario,
over seeds, ranked for an objective, with the ties that the seeds cannot separate said as such.

The matrix is a sweep (``ccsim.experiments.sweep``): one point per (congestion control, queue
discipline), ``seeds`` replicates with *common* seeds (every combination sees the same start
times and random draws: a paired design), run on local processes or a Dask cluster, resumable
(finished runs are kept under ``OUT/runs/`` and skipped when the command is run again).

What is varied (docs/compare.md):

- the congestion control of every TCP ``[[flows]]`` table (UDP/DCCP flows and control loops
  keep theirs);
- the discipline of the scenario's bottleneck queue (``topology.bottleneck_queue``, or the
  topology's default: ``A->B`` of a dumbbell), keeping its buffer ``limit`` and nothing else:
  each discipline runs at its own defaults. The other direction of that link keeps its queue.

Per run: bottleneck utilization, goodput, Jain's index (overall and within each flow group),
mean and 99th-percentile queueing delay at the bottleneck (the engine's sojourn histogram),
drop ratio, retransmissions and, with control loops, ITAE. Per combination: mean, standard
deviation and a Student-t 95 % confidence interval over the seeds, clipped to the metric's range
(Jain's index and ratios within [0, 1], rates and delays >= 0).

Objective: a weighted sum of metrics, each scaled (see ``Objective``), scored per run; ranked by
the mean score. Tiers are contiguous blocks of ranks: the best remaining combination and the
combinations ranked right below it that a t-test cannot separate from it (paired over the
common seeds, Welch's when the cells' seeds differ; Holm-corrected at alpha = 0.05). Where the
test separates nothing, the report gives the interval of the score difference, i.e. what these

Modules: ``objective`` (the metrics, presets and ``--objective``), ``run`` (what is varied, the
sweep, the rerun commands), ``analysis`` (scores, intervals, tiers, the verdict), ``report``
(the terminal table, ``report.html`` from ``report.html.j2``, the data files). The statistics
are shared with SMC (``ccsim.experiments.smc.statistics``).
"""

from __future__ import annotations

from ..smc.statistics import Difference, clip_interval, difference, holm, mean_ci, welch_test
from .analysis import Comparison, analyse
from .objective import METRICS, PRESETS, Objective, parse_objective
from .report import write_report
from .run import DEFAULT_QUEUES, CompareSpec, check_objective, prepare, run_compare

__all__ = [
    "CompareSpec",
    "Objective",
    "Comparison",
    "DEFAULT_QUEUES",
    "PRESETS",
    "METRICS",
    "prepare",
    "parse_objective",
    "check_objective",
    "run_compare",
    "analyse",
    "write_report",
    "Difference",
    "difference",
    "mean_ci",
    "clip_interval",
    "welch_test",
    "holm",
]
