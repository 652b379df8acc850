"""ARIMA(p,1,q) models of RTT series, as in the CA-ARTT paper (papers/003, sec. 3).

The paper models the RTT X(t) by its first difference Y(t) = X(t) - X(t-1) (eq. 9) following
an ARMA(p,q) process with no constant (eq. 11, 17),

    Y(t) = phi_1 Y(t-1) + ... + phi_p Y(t-p) + e(t) + theta_1 e(t-1) + ... + theta_q e(t-q),

fits p, q in 0..2 by least squares, and keeps the order with the smallest AIC and FPE
(eq. 14-15, Table 1). This module does the same with numpy only:

- :func:`fit` estimates phi and theta by **conditional sum of squares** (CSS): the innovations
  e(t) are computed recursively from the differences, with the pre-sample innovations set to
  their mean 0 and the recursion started after the first ``start`` differences; their sum of
  squares is minimised by Levenberg-Marquardt (damped Gauss-Newton) steps, whose Jacobian is
  the innovations' derivative series (the same recursion applied to the lagged differences and
  lagged innovations). Starting values come from Hannan-Rissanen's two-stage regression (a long
  autoregression estimates the innovations, then Y(t) is regressed on lagged Y and lagged
  innovation estimates). Steps that would leave the stationary AR / invertible MA region (the
  roots of eq. 7 and 8 outside the unit circle, sec. 3.1) are rejected, so the estimate always
  lies inside it. With q = 0 the problem is linear and the first step lands on the ordinary
  least-squares solution.
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
  with like) and picks the smallest AIC, ties going to the smaller FPE, then the fewer
  parameters. It includes ARIMA(0,1,0), the random walk, which Table 1 leaves out.
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

__all__ = [
    "ArimaFit",
    "OrderSelection",
    "Forecaster",
    "fit",
    "select_order",
    "forecast_series",
    "innovations",
    "MIN_OBSERVATIONS",
]

# Fewer observations than this cannot support an ARIMA(2,1,2) fit with a criterion worth
# comparing (4 parameters, 2 start-up differences, and enough innovations left over).
MIN_OBSERVATIONS = 20
# Block length of the recursive filter (see _inverse_ma).
_BLOCK = 256
_MAX_ITERATIONS = 200


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
    iterations: int

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

    @property
    def best_by_fpe(self) -> ArimaFit:
        """The order FPE alone would pick (AIC and FPE agree asymptotically)."""
        return min(self.fits, key=lambda f: (f.fpe, f.p + f.q))


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


def _inverse_ma(u: np.ndarray, theta: Sequence[float], start: int) -> np.ndarray:
    """z(t) = u(t) - theta_1 z(t-1) - ... - theta_q z(t-q) for t >= start, z(t) = 0 before.

    ``u`` is a vector or a matrix of columns filtered together. The recursion runs in blocks:
    within a block z = T u + (response to the two values carried in), T being the lower
    triangular Toeplitz matrix of the filter's impulse response, so the Python loop is over
    blocks instead of observations. q <= 2.
    """
    z = np.zeros_like(u, dtype=float)
    if start >= len(u):
        return z
    if not any(theta):
        z[start:] = u[start:]
        return z
    if len(theta) > 2:
        raise ValueError("MA orders above 2 are not supported")
    a1 = float(theta[0])
    a2 = float(theta[1]) if len(theta) > 1 else 0.0
    block = min(_BLOCK, len(u) - start)
    h = np.zeros(block)
    h[0] = 1.0
    for t in range(1, block):
        h[t] = -a1 * h[t - 1] - (a2 * h[t - 2] if t >= 2 else 0.0)
    # The carried-in values z(-1), z(-2) act as an input -a1 z(-1) - a2 z(-2) at step 0 and
    # -a2 z(-1) at step 1.
    h_prev = np.concatenate(([0.0], h[:-1]))
    g1 = -a1 * h - a2 * h_prev  # response to z(-1) = 1
    g2 = -a2 * h  # response to z(-2) = 1
    lag = np.subtract.outer(np.arange(block), np.arange(block))
    toeplitz = np.where(lag >= 0, h[np.clip(lag, 0, None)], 0.0)
    matrix = u.ndim == 2
    zero = np.zeros(u.shape[1]) if matrix else 0.0
    prev1, prev2 = zero, zero
    for b0 in range(start, len(u), block):
        seg = u[b0:b0 + block]
        m = len(seg)
        if matrix:
            out = toeplitz[:m, :m] @ seg + np.outer(g1[:m], prev1) + np.outer(g2[:m], prev2)
        else:
            out = toeplitz[:m, :m] @ seg + g1[:m] * prev1 + g2[:m] * prev2
        z[b0:b0 + m] = out
        prev1, prev2 = (out[-1], out[-2]) if m >= 2 else (out[-1], prev1)
    return z


def _lag(v: np.ndarray, k: int) -> np.ndarray:
    out = np.zeros_like(v)
    out[k:] = v[:-k]
    return out


def innovations(y: np.ndarray, phi: Sequence[float], theta: Sequence[float], start: int) -> np.ndarray:
    """CSS innovations of the differenced series ``y``: zero before ``start``."""
    w = y.astype(float).copy()
    for i, f in enumerate(phi, 1):
        w -= f * _lag(y, i)
    return _inverse_ma(w, theta, start)


def _admissible(phi: Sequence[float], theta: Sequence[float]) -> bool:
    """AR part stationary and MA part invertible: roots of eq. 7 and 8 outside the unit circle."""
    for poly in ([1.0] + [-float(f) for f in phi], [1.0] + [float(t) for t in theta]):
        if len(poly) > 1 and any(c != 0.0 for c in poly[1:]):
            roots = np.roots(poly[::-1])
            if not np.all(np.isfinite(roots)) or np.any(np.abs(roots) <= 1.0 + 1e-9):
                return False
    return True


def _jacobian(y: np.ndarray, e: np.ndarray, p: int, theta: Sequence[float], start: int) -> np.ndarray:
    """d e(t) / d (phi, theta): the innovation recursion applied to -Y(t-i) and -e(t-k)."""
    columns = [-_lag(y, i) for i in range(1, p + 1)] + [-_lag(e, k) for k in range(1, len(theta) + 1)]
    return _inverse_ma(np.column_stack(columns), theta, start)


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


def fit(x: Iterable[float], p: int, q: int, *, start: int | None = None) -> ArimaFit:
    """Fit ARIMA(p,1,q) to the series ``x`` by conditional least squares.

    ``start`` is the number of differences the innovation recursion is conditioned on (default
    p); :func:`select_order` uses the largest p for every order so that they share their
    innovations. Raises ValueError for a series that is too short, constant or not finite.
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

    def sse_of(beta: np.ndarray) -> tuple[float, np.ndarray]:
        e = innovations(y, beta[:p], beta[p:], start)
        return float(e[start:] @ e[start:]), e

    beta = _hannan_rissanen(y, p, q, start)
    sse, e = sse_of(beta)
    converged = k == 0
    iterations = 0
    damping = 1e-3
    while not converged and iterations < _MAX_ITERATIONS:
        iterations += 1
        jac = _jacobian(y, e, p, beta[p:], start)[start:]
        grad = jac.T @ e[start:]
        normal = jac.T @ jac
        scale = np.diag(normal).copy()
        scale[scale <= 0] = 1.0
        improved = False
        while damping < 1e12:
            try:
                step = np.linalg.solve(normal + damping * np.diag(scale), -grad)
            except np.linalg.LinAlgError:
                damping *= 10.0
                continue
            candidate = beta + step
            if _admissible(candidate[:p], candidate[p:]):
                new_sse, new_e = sse_of(candidate)
                if new_sse <= sse:
                    improved = True
                    break
            damping *= 10.0
        if not improved:
            converged = True  # no admissible step lowers the sum of squares: a minimum
            break
        small_step = float(np.max(np.abs(step))) < 1e-10
        small_gain = sse - new_sse <= 1e-12 * max(sse, np.finfo(float).tiny)
        beta, sse, e = candidate, new_sse, new_e
        damping = max(damping / 10.0, 1e-12)
        converged = small_step or small_gain

    sigma2 = sse / n
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
        converged=converged,
        iterations=iterations,
    )


def select_order(x: Iterable[float], max_p: int = 2, max_q: int = 2) -> OrderSelection:
    """Fit ARIMA(p,1,q) for p in 0..max_p, q in 0..max_q on the same innovations and pick the
    smallest AIC (then FPE, then fewer parameters), as the paper's Table 1 does."""
    series = _as_series(x)
    fits = tuple(fit(series, p, q, start=max_p) for p in range(max_p + 1) for q in range(max_q + 1))
    best = min(fits, key=lambda f: (f.aic, f.fpe, f.p + f.q))
    return OrderSelection(fits=fits, best=best)
