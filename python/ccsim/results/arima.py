"""ARIMA(p,1,q) models of RTT series, as in the CA-ARTT paper (Jeyasekar, Kasmir Raja,
Annie Uthra, "ARIMA model-based RTT estimation for congestion avoidance mechanism in asymmetric
networks", JATIT 66(1), 2014, sec. 3).

The paper models the RTT X(t) by its first difference Y(t) = X(t) - X(t-1) (eq. 9) following
an ARMA(p,q) process with no constant (eq. 11, 17),

    Y(t) = phi_1 Y(t-1) + ... + phi_p Y(t-p) + e(t) + theta_1 e(t-1) + ... + theta_q e(t-q),

fits p, q in 0..2 by least squares, and keeps the order with the smallest AIC and FPE
(eq. 14-15, Table 1). This module does the same with numpy and scipy:

- :func:`fit` estimates phi and theta by **conditional sum of squares** (CSS): the innovations
  e(t) are computed recursively from the differences, with the pre-sample innovations set to
  their mean 0 and the recursion started after the first ``start`` differences; their sum of
  squares is minimised by scipy's trust-region least squares (``least_squares``, method
  ``trf``) with the analytic Jacobian, the innovations' derivative series (the same recursion
  applied to the lagged differences and lagged innovations). The parameters it moves are the
  reflection (partial autocorrelation) coefficients of the AR and MA polynomials, bounded to
  (-1, 1): that box is exactly the stationary AR / invertible MA region (the roots of eq. 7
  and 8 outside the unit circle, sec. 3.1), so every estimate lies inside it or on its edge.
  Starting values come from Hannan-Rissanen's two-stage regression (a long autoregression
  estimates the innovations, then Y(t) is regressed on lagged Y and lagged innovation
  estimates) and from the fitted solution of every order the model nests (zero-padded), and
  the smallest sum of squares wins, so a larger order never fits worse than one it contains.
  A run that exhausts its evaluation budget is reported as not converged. With q = 0 the
  problem is linear and the fit is the ordinary least-squares solution.
- CSS is the paper's LSE. statsmodels' default is exact Gaussian maximum likelihood (Kalman
  filter); both are consistent and asymptotically efficient, and they differ by O(1/n) on a
  series of n observations (the start-up of the recursion), far less than either's sampling
  error (the test suite checks this against statsmodels).
- ``sigma2`` is the mean squared innovation. ``AIC = log(sigma2) + 2 (p+q) / n`` (eq. 14) and
  ``FPE = sigma2 (1 + (p+q)/n) / (1 - (p+q)/n)`` (Akaike's final prediction error; eq. 15 as
  printed has ``p+d`` in the denominator, read as a misprint for the parameter count p+q, which
  is what FPE is defined with and what the numerator uses). n is the number of innovations.
- :func:`select_order` fits every order up to (max_p, max_q) on the **same** innovations (the
  recursion starts after max_p differences for all of them, so sigma2, AIC and FPE compare like
  with like) and picks the smallest AIC among the orders that converged, ties going to the
  smaller FPE, then the fewer parameters. It includes ARIMA(0,1,0), the random walk, which
  Table 1 leaves out. It also says when the series is degenerate (:func:`degeneracy`: most
  first differences zero, as on an RTT held constant by a standing queue), where no order is
  a trustworthy choice.
- :class:`Forecaster` is the one-step forecast of eq. 24 in Box-Jenkins form: the future
  innovation is replaced by its mean 0, so for ARIMA(2,1,1)
  ``X^(t+1) = (1+phi1) X(t) + (phi2-phi1) X(t-1) - phi2 X(t-2) + theta1 e(t)`` with
  ``e(t) = X(t) - X^(t)``; it is the forecaster of the ``ca-artt`` congestion control
  (crates/ccsim-core/src/tcp/cc/ca_artt.rs), initialised the same way.

The sign convention of theta is the paper's MA polynomial 1 + theta_1 B + theta_2 B^2 (eq. 6,
8), which is also statsmodels'.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import least_squares
from scipy.signal import lfilter

# AR or MA coefficients: a list or an array.
Coefficients = Sequence[float] | np.ndarray

__all__ = [
    "ArimaFit",
    "OrderSelection",
    "Forecaster",
    "fit",
    "select_order",
    "forecast_series",
    "innovations",
    "degeneracy",
    "MIN_OBSERVATIONS",
]

# Fewer observations than this cannot support an ARIMA(2,1,2) fit with a criterion worth
# comparing (4 parameters, 2 start-up differences, and enough innovations left over).
MIN_OBSERVATIONS = 20
# Budget of sum-of-squares evaluations per optimiser run; a run that exhausts it has not
# converged.
_MAX_ITERATIONS = 1000
# Reflection coefficients are kept within this of +-1: the edge of the stationary / invertible
# region, where a root of eq. 7 or 8 reaches the unit circle.
_EDGE = 1.0 - 1e-8
# A difference smaller than this fraction of the series' magnitude counts as zero (0.1 ns on a
# 100 ms RTT: rounding, not movement), and a series with more than _FLAT_SHARE of its
# differences zero is degenerate.
_FLAT_TOLERANCE = 1e-9
_FLAT_SHARE = 0.5


@dataclass(frozen=True)
class ArimaFit:
    """An ARIMA(p,1,q) model fitted to a series by conditional least squares."""

    p: int
    q: int
    phi: tuple[float, ...]
    """AR coefficients of the differenced series, phi_1..phi_p."""
    theta: tuple[float, ...]
    """MA coefficients, polynomial 1 + theta_1 B + ... (paper eq. 6)."""
    sigma2: float
    """Mean squared innovation."""
    n: int
    """Number of innovations (differences after the start-up)."""
    aic: float
    """log(sigma2) + 2 (p+q) / n (paper eq. 14)."""
    fpe: float
    """sigma2 (1 + (p+q)/n) / (1 - (p+q)/n) (paper eq. 15)."""
    converged: bool
    """Whether the optimiser met its tolerances (always for p = q = 0, and for AR fits solved
    exactly); false when it ran out of evaluations, so the estimate is not a minimum."""
    iterations: int
    """Sum-of-squares evaluations of the run that produced the estimate (0 when solved exactly)."""

    @property
    def d(self) -> int:
        return 1

    @property
    def order(self) -> tuple[int, int, int]:
        return (self.p, 1, self.q)

    @property
    def name(self) -> str:
        return f"ARIMA({self.p},1,{self.q})"

    def forecaster(self) -> Forecaster:
        """A one-step forecaster with these coefficients."""
        return Forecaster(self.phi, self.theta)


@dataclass(frozen=True)
class OrderSelection:
    """Every order fitted on the same innovations, and the chosen one."""

    fits: tuple[ArimaFit, ...]
    best: ArimaFit
    """The smallest AIC among the orders that converged."""
    degenerate: str | None = None
    """Why the series is too degenerate for the choice to be trusted (see :func:`degeneracy`),
    or None."""

    @property
    def best_by_fpe(self) -> ArimaFit:
        """The converged order FPE alone would pick (AIC and FPE agree asymptotically)."""
        return min((f for f in self.fits if f.converged), key=lambda f: (f.fpe, f.p + f.q))

    @property
    def unconverged(self) -> tuple[ArimaFit, ...]:
        """The orders whose fit did not converge, left out of the choice."""
        return tuple(f for f in self.fits if not f.converged)


class Forecaster:
    """One-step-ahead forecasts of an ARIMA(p,1,q) series, fed one observation at a time.

    The first observation fills the history (all past differences and innovations 0), so the
    first forecast is that observation, as in the paper's listing (sec. 4) and ca-artt.
    """

    def __init__(self, phi: Sequence[float] = (), theta: Sequence[float] = ()) -> None:
        self.phi = tuple(float(v) for v in phi)
        self.theta = tuple(float(v) for v in theta)
        self._last: float | None = None
        self._y = [0.0] * len(self.phi)  # Y(t), Y(t-1), ...
        self._e = [0.0] * len(self.theta)  # e(t), e(t-1), ...
        self.forecast: float | None = None
        """The forecast of the next observation, once one has been seen."""

    def update(self, x: float) -> float:
        """Take the observation X(t); return the forecast of X(t+1)."""
        x = float(x)
        if self._last is not None and self.forecast is not None:
            innovation = x - self.forecast
            if self._y:
                self._y = [x - self._last] + self._y[:-1]
            if self._e:
                self._e = [innovation] + self._e[:-1]
        self._last = x
        step = sum(f * y for f, y in zip(self.phi, self._y)) + sum(t * e for t, e in zip(self.theta, self._e))
        self.forecast = x + step
        return self.forecast


def forecast_series(x: Iterable[float], phi: Sequence[float] = (), theta: Sequence[float] = ()) -> np.ndarray:
    """One-step forecasts along ``x``: element t is the forecast of x[t+1] made after x[t]."""
    forecaster = Forecaster(phi, theta)
    return np.array([forecaster.update(v) for v in x], dtype=float)


# ----- the recursion -----


def _inverse_ma(u: np.ndarray, theta: Coefficients, start: int) -> np.ndarray:
    """z(t) = u(t) - theta_1 z(t-1) - ... - theta_q z(t-q) for t >= start, z(t) = 0 before.

    ``u`` is a vector or a matrix of columns filtered together (scipy's ``lfilter``: the same
    recursion, run in C). q <= 2.
    """
    z = np.zeros_like(u, dtype=float)
    if start >= len(u):
        return z
    if not any(theta):
        z[start:] = u[start:]
        return z
    if len(theta) > 2:
        raise ValueError("MA orders above 2 are not supported")
    z[start:] = lfilter([1.0], [1.0] + [float(t) for t in theta], u[start:], axis=0)
    return z


def _lag(v: np.ndarray, k: int) -> np.ndarray:
    out = np.zeros_like(v)
    out[k:] = v[:-k]
    return out


def innovations(y: np.ndarray, phi: Coefficients, theta: Coefficients, start: int) -> np.ndarray:
    """CSS innovations of the differenced series ``y``: zero before ``start``."""
    w = y.astype(float).copy()
    for i, f in enumerate(phi, 1):
        w -= f * _lag(y, i)
    return _inverse_ma(w, theta, start)


def _admissible(phi: Coefficients, theta: Coefficients) -> bool:
    """AR part stationary and MA part invertible: roots of eq. 7 and 8 outside the unit circle."""
    for poly in ([1.0] + [-float(f) for f in phi], [1.0] + [float(t) for t in theta]):
        if len(poly) > 1 and any(c != 0.0 for c in poly[1:]):
            roots = np.roots(poly[::-1])
            if not np.all(np.isfinite(roots)) or np.any(np.abs(roots) <= 1.0 + 1e-9):
                return False
    return True


def _jacobian(y: np.ndarray, e: np.ndarray, p: int, theta: Coefficients, start: int) -> np.ndarray:
    """d e(t) / d (phi, theta): the innovation recursion applied to -Y(t-i) and -e(t-k)."""
    columns = [-_lag(y, i) for i in range(1, p + 1)] + [-_lag(e, k) for k in range(1, len(theta) + 1)]
    return _inverse_ma(np.column_stack(columns), theta, start)


def _reflection_map(r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Coefficients a of the polynomial 1 - a_1 B - ... with reflection coefficients r, and da/dr.

    By the Durbin-Levinson recursion a polynomial of degree <= 2 has every root outside the
    unit circle exactly when each reflection (partial autocorrelation) coefficient lies in
    (-1, 1): a_2 = r_2, a_1 = r_1 (1 - r_2). The stationary / invertible region is thus the box
    (-1, 1)^k in r.
    """
    if len(r) == 0:
        return np.zeros(0), np.zeros((0, 0))
    if len(r) == 1:
        return np.array([float(r[0])]), np.eye(1)
    r1, r2 = float(r[0]), float(r[1])
    return np.array([r1 * (1.0 - r2), r2]), np.array([[1.0 - r2, -r1], [0.0, 1.0]])


def _reflections(a: Coefficients) -> np.ndarray:
    """The inverse of :func:`_reflection_map`, for an admissible polynomial."""
    if len(a) == 2:
        return np.array([a[0] / (1.0 - a[1]), a[1]], dtype=float)
    return np.array([float(v) for v in a], dtype=float)


def _least_squares(design: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Ordinary least squares by the normal equations (small, well-conditioned designs)."""
    gram = design.T @ design
    try:
        return np.linalg.solve(gram, design.T @ target)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(design, target, rcond=None)[0]


def _hannan_rissanen(y: np.ndarray, p: int, q: int, start: int) -> np.ndarray:
    """Starting values: innovations from a long AR fit, then a regression on both lags."""
    n = len(y)
    if q == 0:
        ehat = np.zeros(n)
        first = max(start, p)
    else:
        # The long autoregression only has to whiten the series roughly: log(n)^2 lags as
        # usual, at most 40 (starting values, not estimates), solved by normal equations.
        long_order = int(min(max(math.log(n) ** 2, 2 * (p + q)), 40, n // 4))
        rows = np.arange(long_order, n)
        lags = np.column_stack([y[rows - i] for i in range(1, long_order + 1)])
        coef = _least_squares(lags, y[rows])
        ehat = np.zeros(n)
        ehat[rows] = y[rows] - lags @ coef
        first = max(start, long_order + q, p)
    rows = np.arange(first, n)
    if p + q == 0 or len(rows) <= p + q:
        return np.zeros(p + q)
    design = np.column_stack([y[rows - i] for i in range(1, p + 1)] + [ehat[rows - k] for k in range(1, q + 1)])
    beta = _least_squares(design, y[rows])
    # Pull an inadmissible start towards zero (which is admissible).
    for _ in range(30):
        if _admissible(beta[:p], beta[p:]):
            return beta
        beta = 0.7 * beta
    return np.zeros(p + q)


def _as_series(x: Iterable[float]) -> np.ndarray:
    arr = np.asarray(list(x) if not isinstance(x, np.ndarray) else x, dtype=float).ravel()
    if len(arr) < MIN_OBSERVATIONS:
        raise ValueError(f"{len(arr)} observations; at least {MIN_OBSERVATIONS} are needed")
    if not np.all(np.isfinite(arr)):
        raise ValueError("the series has missing or non-finite values")
    if np.all(np.diff(arr) == 0.0):
        raise ValueError("the series is constant: there is nothing to model")
    return arr


def degeneracy(x: Iterable[float]) -> str | None:
    """Why the series is too degenerate for an order choice to mean anything, or None.

    A series whose first differences are mostly zero (a piecewise-constant RTT: a standing
    queue held at one length, a stalled flow, a coarse clock) is not an ARMA process with
    Gaussian innovations: its least-squares fits are driven by the few steps, and the order
    with the smallest AIC is an artefact of where they fall. Differences below
    ``_FLAT_TOLERANCE`` of the series' magnitude count as zero, so a series that varies only
    by rounding (variance ~0) is caught as well.
    """
    series = _as_series(x)
    y = np.diff(series)
    flat = int(np.count_nonzero(np.abs(y) <= _FLAT_TOLERANCE * float(np.max(np.abs(series)))))
    if flat <= _FLAT_SHARE * len(y):
        return None
    return (
        f"{flat} of {len(y)} differences ({100.0 * flat / len(y):.1f} %) are zero: the series is "
        "piecewise constant, not an ARIMA process, so no order is a trustworthy choice"
    )


def _coefficients(r: np.ndarray, p: int) -> tuple[np.ndarray, np.ndarray]:
    """(phi, theta) from the reflection coefficients of both polynomials, and d(phi, theta)/dr.

    The MA polynomial 1 + theta_1 B + theta_2 B^2 is 1 - a_1 B - a_2 B^2 with a = -theta.
    """
    ar, d_ar = _reflection_map(r[:p])
    ma, d_ma = _reflection_map(r[p:])
    k = len(r)
    derivative = np.zeros((k, k))
    derivative[:p, :p] = d_ar
    derivative[p:, p:] = -d_ma
    return np.concatenate((ar, -ma)), derivative


def _to_reflections(beta: np.ndarray, p: int) -> np.ndarray:
    return np.concatenate((_reflections(beta[:p]), _reflections(-beta[p:])))


@dataclass
class _Run:
    beta: np.ndarray
    sse: float
    converged: bool
    iterations: int


def _optimise(y: np.ndarray, p: int, q: int, start: int, beta0: np.ndarray, max_iterations: int) -> _Run:
    """Minimise the conditional sum of squares from ``beta0`` with scipy's trust-region
    reflective least squares, in reflection coefficients bounded to [-_EDGE, _EDGE]: the
    bounds are exactly the stationary / invertible region, so no step leaves it and a minimum
    on its edge (theta_1 -> -1, common on over-differenced series) is an active bound the
    solver recognises, not a run that never ends. ``y`` is scaled to unit mean square and the
    residuals divided by sqrt(n), so the cost is sigma2 / 2 in units of the differences' mean square
    and the tolerances mean the same on every series."""
    n = len(y) - start
    root_n = math.sqrt(n)
    cache: dict[bytes, np.ndarray] = {}

    def innovations_at(r: np.ndarray) -> np.ndarray:
        key = r.tobytes()
        if key not in cache:
            cache.clear()
            beta, _ = _coefficients(r, p)
            cache[key] = innovations(y, beta[:p], beta[p:], start)
        return cache[key]

    def residuals(r: np.ndarray) -> np.ndarray:
        return innovations_at(r)[start:] / root_n

    def jacobian(r: np.ndarray) -> np.ndarray:
        beta, derivative = _coefficients(r, p)
        return _jacobian(y, innovations_at(r), p, beta[p:], start)[start:] @ derivative / root_n

    r0 = np.clip(_to_reflections(beta0, p), -_EDGE, _EDGE)
    result = least_squares(
        residuals,
        r0,
        jac=jacobian,
        bounds=(-_EDGE, _EDGE),
        method="trf",
        ftol=1e-12,
        xtol=1e-12,
        gtol=1e-10,
        max_nfev=max_iterations,
    )
    beta, _ = _coefficients(result.x, p)
    e = innovations(y, beta[:p], beta[p:], start)[start:]
    # status 0: the evaluation budget ran out; > 0: a tolerance was met.
    return _Run(beta, float(e @ e), bool(result.status > 0), int(result.nfev))


def fit(
    x: Iterable[float],
    p: int,
    q: int,
    *,
    start: int | None = None,
    nested: Iterable[ArimaFit] = (),
    max_iterations: int = _MAX_ITERATIONS,
) -> ArimaFit:
    """Fit ARIMA(p,1,q) to the series ``x`` by conditional least squares.

    ``start`` is the number of differences the innovation recursion is conditioned on (default
    p); :func:`select_order` uses the largest p for every order so that they share their
    innovations. The optimiser starts from Hannan-Rissanen's estimate and from the solution of
    every fit in ``nested`` (orders p' <= p, q' <= q on the same series and ``start``, padded with
    zero coefficients, which gives the same innovations), and the smallest sum of squares wins:
    a larger order never fits worse than an order it nests. ``converged`` is false when the
    winning run used up ``max_iterations`` function evaluations before meeting a tolerance.
    Raises ValueError for a series that is too short, constant or not finite.
    """
    if not (0 <= p <= 2 and 0 <= q <= 2):
        raise ValueError("p and q must be in 0..2")
    y = np.diff(_as_series(x))
    start = p if start is None else start
    if start < p:
        raise ValueError("start must be at least p")
    n = len(y) - start
    k = p + q
    if n <= 2 * k + 2:
        raise ValueError(f"{n} innovations are too few for {k} parameters")
    # Coefficients are scale free; the sums of squares are computed on y / rms(y) and scaled back.
    scale = float(np.sqrt(np.mean(y * y)))
    y = y / scale

    def sse_of(beta: np.ndarray) -> float:
        e = innovations(y, beta[:p], beta[p:], start)[start:]
        return float(e @ e)

    starts: list[np.ndarray] = []
    for other in nested:
        if other.p > p or other.q > q or (other.p, other.q) == (p, q) or other.n != n:
            raise ValueError(f"{other.name} fitted on {other.n} innovations is not nested in ARIMA({p},1,{q}) on {n}")
        padded = np.array(list(other.phi) + [0.0] * (p - other.p) + list(other.theta) + [0.0] * (q - other.q))
        if not any(np.array_equal(padded, s) for s in starts):
            starts.append(padded)

    runs: list[_Run] = []
    if k == 0:
        runs.append(_Run(np.zeros(0), sse_of(np.zeros(0)), True, 0))
    else:
        first = _hannan_rissanen(y, p, q, start)
        if q == 0:
            # Linear: the ordinary least-squares solution is the minimum if it is stationary.
            rows = np.arange(start, len(y))
            ols = _least_squares(np.column_stack([y[rows - i] for i in range(1, p + 1)]), y[rows])
            if _admissible(ols, ()):
                runs.append(_Run(ols, sse_of(ols), True, 0))
                # The sum of squares is convex in phi, so a padded nested solution can only
                # undercut the least-squares one by rounding: it is the same minimum.
                runs += [_Run(s, sse_of(s), True, 0) for s in starts]
        if not runs:
            candidates = [first]
            if q > 0:
                # Hannan-Rissanen's AR part with theta_1 = -0.9: an MA root near 1, the
                # signature of a series stationary in level and differenced once, which the
                # long autoregression captures poorly on piecewise-constant RTTs (there,
                # ARIMA(1,1,1) from Hannan-Rissanen alone stops at the random walk's sigma2,
                # 1.5 times its minimum with theta_1 at -1).
                candidates.append(np.r_[first[:p], -0.9, np.zeros(q - 1)])
            candidates += starts
            unique: list[np.ndarray] = []
            for beta0 in candidates:
                if not any(np.array_equal(beta0, u) for u in unique):
                    unique.append(beta0)
            for beta0 in unique:
                run = _optimise(y, p, q, start, beta0, max_iterations)
                # The solver never goes uphill, but it starts from the start clipped to the
                # bounds: keep the start itself if that clip cost more than the run regained.
                sse0 = sse_of(beta0)
                if sse0 < run.sse:
                    run = _Run(beta0, sse0, run.converged, run.iterations)
                runs.append(run)
    # The smallest sum of squares; on a tie, the earliest (Hannan-Rissanen's start first).
    best = min(runs, key=lambda run: run.sse)
    beta = best.beta
    sigma2 = best.sse * scale * scale / n
    if sigma2 <= 0.0:
        raise ValueError("the model reproduces the series exactly: there is no noise to model")
    return ArimaFit(
        p=p,
        q=q,
        phi=tuple(float(v) for v in beta[:p]),
        theta=tuple(float(v) for v in beta[p:]),
        sigma2=sigma2,
        n=n,
        aic=math.log(sigma2) + 2.0 * k / n,
        fpe=sigma2 * (1.0 + k / n) / (1.0 - k / n),
        converged=best.converged,
        iterations=best.iterations,
    )


def select_order(
    x: Iterable[float], max_p: int = 2, max_q: int = 2, *, max_iterations: int = _MAX_ITERATIONS
) -> OrderSelection:
    """Fit ARIMA(p,1,q) for p in 0..max_p, q in 0..max_q on the same innovations and pick the
    smallest AIC (then FPE, then fewer parameters) among the orders whose fit converged, as the
    paper's Table 1 does.

    Orders are fitted with p, then q, increasing, each started from every order it nests as
    well (see :func:`fit`), so sigma2 never increases along a nesting. ARIMA(0,1,0) has nothing
    to optimise, so some order always converged. ``degenerate`` says why the choice is not to
    be trusted on a series that is mostly flat (see :func:`degeneracy`).
    """
    series = _as_series(x)
    fitted: dict[tuple[int, int], ArimaFit] = {}
    for p in range(max_p + 1):
        for q in range(max_q + 1):
            nested = [f for (a, b), f in fitted.items() if a <= p and b <= q]
            fitted[(p, q)] = fit(series, p, q, start=max_p, nested=nested, max_iterations=max_iterations)
    fits = tuple(fitted.values())
    best = min((f for f in fits if f.converged), key=lambda f: (f.aic, f.fpe, f.p + f.q))
    return OrderSelection(fits=fits, best=best, degenerate=degeneracy(series))
