"""The statistics of statistical model checking and of ``ccsim compare``, on scipy.

SMC estimates a probability from Bernoulli runs: the Chernoff-Hoeffding run count (Okamoto
1958), the exact Clopper-Pearson interval (Clopper & Pearson, Biometrika 26, 1934; the beta
quantiles are scipy's ``betaincinv``) and Wald's sequential probability ratio test (Wald,
*Sequential Analysis*, 1947). ``ccsim compare`` summarises a metric over seeds: the Student-t
interval of the mean, clipped to the metric's range, and the paired or Welch t-test of two cells
(``scipy.stats``), with Holm's step-down correction.

What is written here rather than taken from scipy: the handling of samples without spread
(scipy's t statistic is then 0/0 or infinite), Holm's procedure (scipy has none; statsmodels
has it, and the tests compare with it) and the SPRT's bookkeeping.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special, stats

ALPHA = 0.05  # the significance level of compare's tests
LEVEL = 1.0 - ALPHA  # of every confidence interval of compare
# Relative spread below which a sample counts as constant (a scenario without a random element
# gives the same run on every seed; differences of equal floats are exactly 0).
NO_SPREAD = 1e-12


# --- Bernoulli runs (SMC) ---------------------------------------------------------------------


def chernoff_runs(epsilon: float, alpha: float) -> int:
    """Runs for P(|p̂ - p| >= epsilon) <= alpha: ceil(ln(2/alpha) / (2 epsilon^2)) (Chernoff-Hoeffding)."""
    if not 0.0 < epsilon < 1.0:
        raise ValueError(f"epsilon must be in (0, 1), got {epsilon}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    return math.ceil(math.log(2.0 / alpha) / (2.0 * epsilon * epsilon))


def beta_quantile(q: Any, a: Any, b: Any) -> np.ndarray:
    """The q-quantile of Beta(a, b), elementwise (scipy's inverse regularized incomplete beta)."""
    q, a, b = np.broadcast_arrays(np.asarray(q, float), np.asarray(a, float), np.asarray(b, float))
    return np.asarray(special.betaincinv(a, b, q), dtype=float)


def clopper_pearson(successes: Any, runs: Any, alpha: float = 0.05) -> tuple[Any, Any]:
    """The exact two-sided interval at confidence 1 - alpha for ``successes`` in ``runs`` (Clopper-Pearson):
    lower = B(alpha/2; x, n-x+1) (0 if x = 0), upper = B(1-alpha/2; x+1, n-x) (1 if x = n).
    Scalars give floats; arrays give arrays."""
    x = np.asarray(successes, float)
    n = np.asarray(runs, float)
    x, n = np.broadcast_arrays(x, n)
    lower = np.zeros(x.shape)
    upper = np.ones(x.shape)
    some = x > 0
    if some.any():
        lower[some] = beta_quantile(alpha / 2.0, x[some], n[some] - x[some] + 1.0)
    short = x < n
    if short.any():
        upper[short] = beta_quantile(1.0 - alpha / 2.0, x[short] + 1.0, n[short] - x[short])
    if lower.ndim == 0:
        return float(lower), float(upper)
    return lower, upper


@dataclass
class Sprt:
    """Wald's sequential probability ratio test of H0: p >= p0 + delta against
    H1: p <= p0 - delta. Feed outcomes with ``add``; ``decision`` becomes "H0" (the
    probability is at least p0) or "H1" (below p0)."""

    p0: float
    delta: float = 0.01
    alpha: float = 0.05
    beta: float = 0.05
    runs: int = 0
    successes: int = 0
    decision: str | None = None

    def __post_init__(self) -> None:
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not 0.0 < value < 0.5:
                raise ValueError(f"{name} must be in (0, 0.5), got {value}")
        if not self.delta > 0.0:
            raise ValueError(f"delta must be positive, got {self.delta}")
        self.p_a = self.p0 + self.delta
        self.p_b = self.p0 - self.delta
        if not (0.0 < self.p_b and self.p_a < 1.0):
            raise ValueError(
                f"the indifference region [{self.p_b:g}, {self.p_a:g}] (p0 ± delta) must lie inside (0, 1); "
                f"choose a smaller delta or a probability bound further from 0 and 1"
            )
        self.step_success = math.log(self.p_b / self.p_a)
        self.step_failure = math.log((1.0 - self.p_b) / (1.0 - self.p_a))
        self.accept_h1 = math.log((1.0 - self.beta) / self.alpha)
        self.accept_h0 = math.log(self.beta / (1.0 - self.alpha))

    @property
    def log_ratio(self) -> float:
        """ln Λ_m = d ln(p_b/p_a) + (m - d) ln((1 - p_b)/(1 - p_a))."""
        return self.successes * self.step_success + (self.runs - self.successes) * self.step_failure

    def add(self, success: bool) -> str | None:
        """Count one outcome; the decision once there is one (later outcomes are ignored)."""
        if self.decision is not None:
            return self.decision
        self.runs += 1
        self.successes += bool(success)
        ratio = self.log_ratio
        if ratio >= self.accept_h1:
            self.decision = "H1"
        elif ratio <= self.accept_h0:
            self.decision = "H0"
        return self.decision


# --- a metric over seeds (compare) ------------------------------------------------------------


def mean_ci(values: list[float], level: float = LEVEL) -> tuple[float, float, float]:
    """Mean, sample standard deviation and the half-width t(0.5 + level/2, n-1) s/sqrt(n) of the
    Student-t interval of the mean (NaN with fewer than two values)."""
    n = len(values)
    if n == 0:
        return math.nan, math.nan, math.nan
    x = np.asarray(values, dtype=float)
    mean = float(x.mean())
    if n < 2:
        return mean, math.nan, math.nan
    sd = float(x.std(ddof=1))
    return mean, sd, float(stats.t.ppf(0.5 + level / 2.0, n - 1)) * sd / math.sqrt(n)


def clip_interval(mean: float, half: float, bounds: tuple[float, float]) -> tuple[float, float]:
    """The interval mean ± half within ``bounds`` (NaN when there is no interval)."""
    if math.isnan(mean) or math.isnan(half):
        return math.nan, math.nan
    lo, hi = bounds
    return max(mean - half, lo), min(mean + half, hi)


@dataclass(frozen=True)
class Difference:
    """The difference a - b of the mean scores of two cells: its estimate, its 95 % interval and
    the two-sided p-value of "no difference", by ``test`` over ``n`` seeds (pairs when paired).

    The interval's half-width is what the seeds can resolve: a difference smaller than it would
    not be significant (uncorrected), whatever its sign."""

    test: str  # "paired t" or "Welch t"
    n: int
    diff: float
    lo: float
    hi: float
    p: float

    @property
    def resolution(self) -> float:
        return (self.hi - self.lo) / 2.0


def _no_spread(samples: list[np.ndarray], diff: float, test: str, n: int) -> Difference | None:
    """The test of samples without spread, which scipy cannot compute: equal means tie (p = 1),
    different ones differ (p = 0); None when there is spread (scipy's case)."""
    scale = max([float(np.abs(x).max()) for x in samples] + [1e-300])
    if any(float(np.ptp(x)) > NO_SPREAD * scale for x in samples):
        return None
    p = 1.0 if abs(diff) <= NO_SPREAD * scale else 0.0
    return Difference(test, n, diff, diff, diff, p)


def _quiet(test: Any, *args: Any, **kwargs: Any) -> Any:
    """A scipy test without its warning about a nearly constant sample: the variance of a
    constant sample (DropTail pinned at its limit) is 0, which is the right answer."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Precision loss occurred", category=RuntimeWarning)
        return test(*args, **kwargs)


def difference(a: dict[int, float], b: dict[int, float]) -> Difference | None:
    """The difference a - b of two cells' scores (seed -> score): a paired t-test
    (``scipy.stats.ttest_rel``) when both cells ran the same seeds, two or more, since the
    seeds are common and pairing removes what the seed does to both; Welch's
    (``scipy.stats.ttest_ind(equal_var=False)``) when their seeds differ (a failed run). None
    when either cell has fewer than two runs."""
    if len(a) < 2 or len(b) < 2:
        return None
    if set(a) == set(b):
        seeds = sorted(a)
        x = np.array([a[s] for s in seeds], dtype=float)
        y = np.array([b[s] for s in seeds], dtype=float)
        d = x - y
        fixed = _no_spread([d], float(d.mean()), "paired t", len(d))
        if fixed is not None:
            return fixed
        res = _quiet(stats.ttest_rel, x, y)
        test = "paired t"
    else:
        x = np.array(list(a.values()), dtype=float)
        y = np.array(list(b.values()), dtype=float)
        fixed = _no_spread([x, y], float(x.mean() - y.mean()), "Welch t", min(len(x), len(y)))
        if fixed is not None:
            return fixed
        res = _quiet(stats.ttest_ind, x, y, equal_var=False)
        test = "Welch t"
    ci = res.confidence_interval(LEVEL)
    return Difference(
        test, min(len(x), len(y)), float(x.mean() - y.mean()), float(ci.low), float(ci.high), float(res.pvalue)
    )


def welch_test(a: list[float], b: list[float]) -> float:
    """Two-sided p-value of Welch's t-test for equal means (scipy), NaN with fewer than two
    values on a side. Equal samples without spread give 1; different means without spread give 0."""
    d = difference(dict(enumerate(a)), {len(a) + i: v for i, v in enumerate(b)})
    return math.nan if d is None else d.p


def holm(pvalues: list[float], alpha: float = ALPHA) -> list[bool]:
    """Holm's step-down procedure: which hypotheses are rejected at family-wise level alpha."""
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    rejected = [False] * len(pvalues)
    m = len(pvalues)
    for k, i in enumerate(order):
        if pvalues[i] <= alpha / (m - k):
            rejected[i] = True
        else:
            break
    return rejected
