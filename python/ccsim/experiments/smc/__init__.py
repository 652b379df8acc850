"""Statistical model checking over packet-level runs, modelled on UPPAAL SMC (its documentation,
"Semantics of the Statistical Queries" and "Confidence Intervals"), as the ANCE paper uses it
(Sup, de Moraes, Bauchspiess, IJCNIS 2020, Table 4 and Figure 31).

Queries (the time bound in seconds, or with a unit: ``500ms``)::

    Pr[<=30](<> ncs.itae > 8727)                 probability that within 30 s the series exceeds 8727
    Pr[<=30]([] queue.bottleneck.length < 17)    probability that it stays below 17 for 30 s
    Pr[<=30](<> ncs.itae > 8727) >= 0.1          hypothesis test (Wald SPRT)

The path formula is ``<> φ`` (eventually) or ``[] φ`` (always); ``φ`` combines comparisons
(``< <= > >= == !=``) of arithmetic (``+ - * /``, ``abs(x)``, numbers, series) with ``&&``/``and``,
``||``/``or``, ``!``/``not`` and parentheses. Numbers may carry a time unit (``5ms`` = 0.005).

Semantics on a run (each run lasts exactly the bound: ``simulation.duration`` is set to it):
every series named in ``φ`` is a step function of time that holds its sample until the next
one; ``φ`` is evaluated at every sampling instant of any of them up to the bound (the union of
their grids), ``<> φ`` holds if it is true at one of those instants, ``[] φ`` if at all. A
scalar result is a constant (its value at the end of the run). Before its first sample a series
is undefined and every comparison with it is false. A queue excursion shorter than the trace
interval may therefore be missed: the resolution is ``[trace] interval`` (10 ms unless the
scenario or ``trace_interval`` says otherwise).

The vocabulary (``vocabulary()`` lists it for a scenario):

- ``queue.Q.length`` (packets), ``queue.Q.bytes``, ``queue.Q.sojourn`` (s, of the last packet
  dequeued), with ``Q`` = ``bottleneck`` or ``FROM->TO``; also the raw trace names
  ``queue.A->B.len_pkts``, ``.len_bytes``, ``.sojourn_s``. Queues are sampled as needed.
- ``flow.F.cwnd`` (bytes; ``F`` = flow index or name; TCP flows), also ``flow.0.cwnd_bytes``.
- ``ncs.X`` for the first control loop, ``ncs.LOOP.X`` for a loop by name or index, with ``X``:
  ``itae`` (the running per-sample sum Σ t_k |e_k| over the measured window, the scale of the
  paper's 8727 rad.s), ``iae`` (Σ |e_k|), ``ise`` (Σ e_k²), ``error``, ``abs_error``,
  ``output``, ``reference``, ``control``: one value per sampling instant.
- Scalars: ``flows.F.FIELD`` (a column of ``Result.flows``: ``goodput_bps``,
  ``packets_received``, ``start_s``...), ``queues.Q.FIELD`` (``Result.queues``),
  ``control.LOOP.FIELD`` (``Result.control``), ``jain_index``, ``utilization``, ``events``.

Names with other characters go in backquotes: ```queue.my-router->B.length```.

Randomness: runs differ only through the scenario's random elements (``random_elements``):
start-time windows (``start = "0s..1s"``), packet error rates (``loss``), and the models the
engine's registry declares random (``ccsim list`` marks them: RED's early drops, E-DCTCP's
backoff, Poisson arrivals, ...). Run ``i`` uses a seed derived from the master
seed and ``i``, so a check is reproducible. Without any random element every run is the same
and ``check`` refuses: the probability is 0 or 1 and one ``ccsim run`` decides it.

Estimation: ``N = ceil(ln(2/alpha) / (2 epsilon^2))`` runs (the Chernoff-Hoeffding bound,
Okamoto 1958; 738 for the defaults epsilon = alpha = 0.05, as in UPPAAL), the estimate with its
Clopper-Pearson interval at confidence 1 - alpha (Clopper & Pearson, Biometrika 26, 1934) and
the Chernoff-Hoeffding interval estimate ± epsilon (the form of the paper's Table 4). Testing:
Wald's SPRT (Wald, *Sequential Analysis*, 1947) with indifference region delta and errors alpha
and beta, sequential until it decides, or "undecided" at ``max_runs``. Both report the
cumulative probability over time of the first passage (``<>``: the first instant φ holds;
``[]``: the first instant it fails), the paper's Figure 31.

Python::

    from ccsim.experiments import smc
    r = smc.check("scenarios/examples/ncs_dumbbell.toml", "Pr[<=30](<> ncs.itae > 8727)",
                  overrides=['flows.start="0s..1s"'])
    r.estimate, r.interval, r.first_passage

Modules: ``query`` (the language), ``statistics`` (Chernoff-Hoeffding, Clopper-Pearson, SPRT;
also the t intervals and tests of ``ccsim compare``), ``vocabulary`` (the names a query can use,
the random elements), ``check`` (running and judging the runs).
"""

from __future__ import annotations

from .check import SmcResult, check
from .query import Query, QueryError, parse_query
from .statistics import Sprt, beta_quantile, chernoff_runs, clopper_pearson
from .vocabulary import random_elements, vocabulary

__all__ = [
    "QueryError",
    "Query",
    "parse_query",
    "chernoff_runs",
    "clopper_pearson",
    "beta_quantile",
    "Sprt",
    "random_elements",
    "vocabulary",
    "check",
    "SmcResult",
]
