"""``ccsim.results.arima``: CSS fitting against statsmodels, order selection, the one-step forecaster,
``ccsim arima fit``, and the RTT sample log that feeds it."""

from __future__ import annotations

from pathlib import Path

import ccsim
import numpy as np
import pandas as pd
import pytest
from ccsim.cli import main
from ccsim.results import arima
from conftest import SCENARIOS, run_cli

# The paper's ARIMA(2,1,1) (after eq. 24).
PHI = (-0.36251, 0.17573)
THETA = (-0.95108,)


def synthetic(n: int, seed: int, phi=PHI, theta=THETA, scale: float = 1.0, level: float = 0.0) -> np.ndarray:
    """X(t) = level + scale * cumsum(Y), Y ARMA(2,1) with unit innovations, after a burn-in."""
    rng = np.random.default_rng(seed)
    burn = 500
    e = rng.normal(size=n + burn)
    y = np.zeros(n + burn)
    for t in range(2, n + burn):
        y[t] = phi[0] * y[t - 1] + phi[1] * y[t - 2] + e[t] + theta[0] * e[t - 1]
    return level + scale * np.cumsum(y[burn:])


def test_fitted_coefficients_agree_with_statsmodels() -> None:
    sm = pytest.importorskip("statsmodels.tsa.arima.model", reason="statsmodels is a test dependency (make setup)")
    n = 10_000
    x = synthetic(n, seed=0)
    ours = arima.fit(x, 2, 1)
    theirs = sm.ARIMA(x, order=(2, 1, 1)).fit()
    reference = np.asarray(theirs.params[:3])
    estimate = np.array(ours.phi + ours.theta)
    # Tolerance. statsmodels maximises the exact Gaussian likelihood; we minimise the
    # conditional sum of squares (the paper's LSE). The two are asymptotically equivalent and
    # differ by O(1/n): the conditioning (pre-sample innovations set to 0) perturbs the first
    # innovations, a transient that lasts ~1/(1 - |theta|) = 20 steps here because theta is
    # close to -1. Measured on these coefficients the difference is c/n with c ~ 40-55
    # (0.012 at n = 4000, 0.0055 at 10 000, 0.0028 at 20 000), so at n = 10 000 we allow
    # 0.012 = twice that. It is below one sampling standard error of phi (~0.011, statsmodels'
    # bse) and two orders of magnitude below what a wrong model gives (a flipped MA sign moves
    # theta by 1.9; fitting levels instead of differences or misaligned lags by > 0.1).
    assert np.all(np.abs(estimate - reference) < 0.012), (estimate, reference)
    # The estimates are also near the truth, within about three standard errors.
    assert np.all(np.abs(estimate - np.array(PHI + THETA)) < 3 * np.asarray(theirs.bse[:3]) + 0.012)
    # The innovation variances agree to O(1/n) as well.
    assert ours.sigma2 == pytest.approx(float(theirs.params[3]), rel=0.01)
    assert ours.converged


def test_ar_only_fits_are_ordinary_least_squares() -> None:
    # With q = 0 the conditional sum of squares is linear in phi: the fit must be the OLS
    # regression of Y(t) on Y(t-1), Y(t-2) over the same rows (t >= start).
    x = synthetic(2000, seed=3, phi=(0.5, -0.3), theta=(0.0,))
    y = np.diff(x)
    f = arima.fit(x, 2, 0)
    design = np.column_stack([y[1:-1], y[:-2]])
    ols, *_ = np.linalg.lstsq(design, y[2:], rcond=None)
    assert np.allclose(f.phi, ols, atol=1e-9)
    residuals = y[2:] - design @ ols
    assert f.sigma2 == pytest.approx(residuals @ residuals / len(residuals), rel=1e-9)
    assert f.aic == pytest.approx(np.log(f.sigma2) + 2 * 2 / f.n)
    assert f.fpe == pytest.approx(f.sigma2 * (1 + 2 / f.n) / (1 - 2 / f.n))


def test_the_blocked_recursion_equals_the_plain_one() -> None:
    rng = np.random.default_rng(7)
    u = rng.normal(size=(1000, 2))
    for theta in [(0.5,), (-0.95,), (0.3, -0.4)]:
        z = arima._inverse_ma(u, theta, 2)
        plain = np.zeros_like(u)
        for t in range(2, len(u)):
            plain[t] = u[t] - sum(th * plain[t - j] for j, th in enumerate(theta, 1))
        assert np.max(np.abs(z - plain)) < 1e-12


def test_order_selection_picks_arima_211_for_long_arima_211_series() -> None:
    # Table 1's procedure on five series of 10 000 observations from the paper's model.
    # Underfitting orders lose by tens of AIC units times 1/n and are never chosen; AIC is not
    # consistent, so the one-parameter overfit (2,1,2) wins when its extra MA term happens to
    # lower the sum of squares by more than the penalty, asymptotically P(chi2_1 > 2) = 0.16
    # per series. The true order must win the majority.
    picks = []
    for seed in range(5):
        selection = arima.select_order(synthetic(10_000, seed))
        picks.append(selection.best.order)
        fits = {f.order: f for f in selection.fits}
        assert len(fits) == 9
        for under in [(0, 1, 0), (0, 1, 1), (0, 1, 2), (1, 1, 0), (1, 1, 1), (1, 1, 2), (2, 1, 0)]:
            assert (fits[under].aic - fits[(2, 1, 1)].aic) * selection.best.n > 10, (seed, under)
        # Every order shares the innovations it is judged on.
        assert len({f.n for f in selection.fits}) == 1
    assert set(picks) <= {(2, 1, 1), (2, 1, 2)}, picks
    assert picks.count((2, 1, 1)) >= 3, picks


def test_forecaster_matches_eq_24_on_a_hand_computed_series() -> None:
    # The same hand computation as the ca-artt unit test (ca_artt.rs): 100, 120, 110, 130 ms.
    f = arima.Forecaster(PHI, THETA)
    for x, want in zip([0.100, 0.120, 0.110, 0.130], [0.1, 0.0937282, 0.1016639, 0.0940426]):
        assert f.update(x) == pytest.approx(want, abs=5e-7)


def test_forecast_errors_are_the_innovations_the_fit_minimises() -> None:
    x = synthetic(500, seed=11, scale=1e-3, level=0.1)
    forecasts = arima.forecast_series(x, PHI, THETA)
    errors = x[1:] - forecasts[:-1]
    expected = arima.innovations(np.diff(x), PHI, THETA, start=0)
    assert np.allclose(errors, expected, atol=1e-15)


@pytest.mark.parametrize(
    "series, message",
    [
        (np.linspace(0.1, 0.2, 10), "at least 20"),
        (np.full(100, 0.05), "constant"),
        (np.r_[np.linspace(0.1, 0.2, 50), np.nan], "non-finite"),
    ],
)
def test_unusable_series_are_refused(series: np.ndarray, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        arima.select_order(series)


# ----- the command line -----


def test_cli_prints_every_order_and_the_choice(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "trace.csv"
    x = synthetic(5000, seed=2, scale=1e-3, level=0.2)
    pd.DataFrame({"time_s": np.arange(len(x)) * 0.01, "rtt_s": x}).to_csv(path, index=False)
    assert main(["arima", "fit", str(path)]) == 0
    out = capsys.readouterr().out
    for p in range(3):
        for q in range(3):
            assert f"ARIMA({p},1,{q})" in out
    expected = arima.select_order(x).best
    assert f"chosen: {expected.name}" in out
    assert f"phi1 = {expected.phi[0]:.5f}" in out
    assert "5000 RTTs from column rtt_s" in out


@pytest.mark.parametrize(
    "text, message",
    [
        (None, "no such file"),
        ("", "empty"),
        ("a,b\nx,y\nz,w\n", "no numeric column"),
        ("time_s,rtt\n" + "".join(f"{i},{0.1 + 0.001 * (i % 7)}\n" for i in range(50)), "numeric columns: time_s, rtt"),
        ("rtt_s\n0.1\n0.2\n0.15\n", "at least 20"),
        ("rtt_s\n" + "0.1\n" * 30 + "fast\n", "non-numeric value (data row 31)"),
        (
            "time_s,flow,rtt_s\n" + "".join(f"{i},{i % 2},{0.1 + 0.001 * (i % 5)}\n" for i in range(60)),
            "several flows (0, 1)",
        ),
        ("rtt_s\n" + "0.08\n" * 40, "constant"),
    ],
)
def test_cli_refuses_bad_traces_with_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str | None, message: str
) -> None:
    path = tmp_path / "trace.csv"
    if text is not None:
        path.write_text(text, encoding="utf-8")
    assert main(["arima", "fit", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err
    assert err.startswith(f"ccsim: {path}")


def test_cli_options_select_the_column_and_flow(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "trace.csv"
    x = synthetic(300, seed=5, scale=1e-3, level=0.1)
    pd.DataFrame({"flow": [0, 1] * 300, "delay": np.repeat(x, 2)}).to_csv(path, index=False)
    assert main(["arima", "fit", str(path), "--column", "delay", "--flow", "1"]) == 0
    assert "300 RTTs from column delay (flow 1)" in capsys.readouterr().out
    assert main(["arima", "fit", str(path), "--column", "delay", "--flow", "7"]) == 2
    assert "flows in the trace: 0, 1" in capsys.readouterr().err
    assert main(["arima", "fit", str(path), "--column", "rtt", "--flow", "0"]) == 2
    assert "no column 'rtt'" in capsys.readouterr().err
    assert main(["arima"]) == 2
    assert "an action is required: fit" in capsys.readouterr().err


# ----- RTT traces from a run -----


def test_a_run_exports_rtt_samples_that_the_cli_fits(tmp_path: Path) -> None:
    scenario = ccsim.load(
        str(SCENARIOS / "flagship.toml"), ["trace.rtt=true", "simulation.duration=8s", "simulation.warmup=1s"]
    )
    assert scenario.to_config()["trace"]["rtt"] is True
    result = ccsim.run(scenario)
    log = result.rtt_samples
    assert log is not None and list(log.columns) == ["time_s", "flow", "rtt_s"]
    assert log.time_s.is_monotonic_increasing
    # The log covers the whole run; the flow counters only the measured window.
    measured = log[log.time_s >= result.raw["warmup_s"]].groupby("flow").size()
    assert (result.flows.set_index("id").rtt_samples[measured.index] == measured).all()
    assert "rtt_samples" not in result.summary
    written = result.write(tmp_path)
    assert tmp_path / "rtt_samples.parquet" in written
    # Without the option there is no log.
    plain = ccsim.run(ccsim.load(str(SCENARIOS / "flagship.toml"), ["simulation.duration=2s", "simulation.warmup=0s"]))
    assert plain.rtt_samples is None
    # The exported file goes straight into `ccsim arima fit`, one flow at a time.
    done = run_cli("arima", "fit", str(tmp_path / "rtt_samples.parquet"), "--flow", "0")
    assert done.returncode == 0, done.stderr
    assert "chosen: ARIMA(" in done.stdout
    done = run_cli("arima", "fit", str(tmp_path / "rtt_samples.parquet"))
    assert done.returncode == 2 and "choose one with --flow" in done.stderr


# ----- trustworthy order selection -----

# Flow 0's RTTs (s) from `ccsim run scenarios/papers/ca-artt/asymmetric.toml --set trace.rtt=true
# --set simulation.duration=60s`: a few steps while the upstream queue fills, then the backward
# flows hold it at one length and every sample is 1.043 s.
CA_ARTT_RTT = np.r_[
    [0.213748625, 0.214748625, 0.47, 0.471, 0.471, 0.939, 0.94, 0.94, 0.941, 0.941, 0.942], np.full(165, 1.043)
]


def css_sigma2(x: np.ndarray, phi, theta, start: int = 2) -> float:
    """Mean squared CSS innovation, by the plain recursion (independent of the module's filter)."""
    y = np.diff(x)
    e = np.zeros(len(y))
    for t in range(start, len(y)):
        e[t] = (
            y[t] - sum(f * y[t - i] for i, f in enumerate(phi, 1)) - sum(th * e[t - j] for j, th in enumerate(theta, 1))
        )
    return float(np.mean(e[start:] ** 2))


def nesting_violations(selection: arima.OrderSelection) -> list[tuple[str, str, float, float]]:
    fits = selection.fits
    return [
        (small.name, big.name, small.sigma2, big.sigma2)
        for small in fits
        for big in fits
        if small is not big and small.p <= big.p and small.q <= big.q and big.sigma2 > small.sigma2
    ]


@pytest.mark.parametrize(
    "series",
    [
        # The real trace: Hannan-Rissanen's start led ARIMA(2,1,2) to sigma2 0.000979, above the
        # 0.000838 of the ARIMA(2,1,1) it contains.
        pytest.param(CA_ARTT_RTT, id="ca-artt"),
        # An ARIMA(2,1,1) series where the same start left ARIMA(2,1,1) at 1.047, above ARIMA(0,1,1).
        pytest.param(synthetic(200, seed=8, phi=(0.5, 0.2), theta=(-0.9,)), id="synthetic"),
    ],
)
def test_a_larger_order_never_fits_worse_than_one_it_nests(series: np.ndarray) -> None:
    selection = arima.select_order(series)
    assert nesting_violations(selection) == []
    for f in selection.fits:
        # sigma2 is what the returned coefficients give, and they are stationary / invertible
        # (the edge of the region allowed: an MA unit root is where CSS minima of an
        # over-differenced series lie).
        assert css_sigma2(series, f.phi, f.theta) == pytest.approx(f.sigma2, rel=1e-9), f.name
        for poly in ([1.0] + [-v for v in f.phi], [1.0] + list(f.theta)):
            if len(poly) > 1:
                assert np.all(np.abs(np.roots(poly[::-1])) >= 1.0 - 1e-6), (f.name, poly)
        assert f.converged, f.name


def test_small_orders_reach_the_minimum_of_a_grid_search() -> None:
    # Brute force as the oracle: on the CA-ARTT trace the sum of squares of ARIMA(1,1,1) has a
    # saddle near 0 (the random walk's sigma2) and its minimum at theta_1 = -1; no fit may stop
    # above the best point of a 21 x 21 grid over the admissible coefficients.
    import itertools

    grid = np.linspace(-0.999, 0.999, 21)
    fits = {f.order: f for f in arima.select_order(CA_ARTT_RTT).fits}
    for p, q in [(0, 1), (0, 2), (1, 1)]:
        searched = min(
            css_sigma2(CA_ARTT_RTT, g[:p], g[p:])
            for g in itertools.product(grid, repeat=p + q)
            if arima._admissible(g[:p], g[p:])
        )
        assert fits[(p, 1, q)].sigma2 <= searched, ((p, q), fits[(p, 1, q)].sigma2, searched)


def test_fits_are_css_minima_by_statsmodels_estimates() -> None:
    # statsmodels' exact maximum-likelihood estimate is an independent point of the same model;
    # the CSS minimum cannot have a larger sum of squares than any point, that one included.
    sm = pytest.importorskip("statsmodels.tsa.arima.model", reason="statsmodels is a test dependency (make setup)")
    x = synthetic(200, seed=8, phi=(0.5, 0.2), theta=(-0.9,))
    fits = {f.order: f for f in arima.select_order(x).fits}
    for order in [(2, 1, 1), (2, 1, 2)]:
        params = sm.ARIMA(x, order=order).fit().params
        p, q = order[0], order[2]
        theirs = css_sigma2(x, params[:p], params[p : p + q])
        assert fits[order].sigma2 <= theirs, (order, fits[order].sigma2, theirs)


def test_converged_fits_are_stationary_points() -> None:
    # On this series the previous damped Gauss-Newton stopped after 200 iterations on three
    # MA orders and still chose one of them. Every fit reported converged must have a zero
    # gradient of the sum of squares (all estimates here are inside the admissible region),
    # checked by central differences of the plain recursion.
    x = synthetic(200, seed=9, phi=(0.5, 0.2), theta=(-0.9,))
    selection = arima.select_order(x)
    h = 1e-6
    for f in selection.fits:
        assert f.converged, f.name
        beta = np.array(f.phi + f.theta)
        for i in range(len(beta)):
            up, down = beta.copy(), beta.copy()
            up[i] += h
            down[i] -= h
            slope = (css_sigma2(x, up[: f.p], up[f.p :]) - css_sigma2(x, down[: f.p], down[f.p :])) / (2 * h)
            # A step of 1e-3 along a slope of 1e-5 would lower sigma2 by 1e-8 of ~1: nothing.
            assert abs(slope) < 1e-5, (f.name, i, slope)
    assert selection.unconverged == ()


def test_fits_that_did_not_converge_are_reported_and_not_chosen() -> None:
    x = synthetic(2000, seed=1)
    # Three evaluations are too few for any order with MA terms; AR orders are solved exactly.
    selection = arima.select_order(x, max_iterations=3)
    expected = [f.name for f in selection.fits if f.q > 0]
    assert [f.name for f in selection.unconverged] == expected
    assert all(f.iterations == 3 for f in selection.unconverged)
    assert all(f.converged and f.iterations == 0 for f in selection.fits if f.q == 0)
    converged = [f for f in selection.fits if f.converged]
    assert selection.best is min(converged, key=lambda f: f.aic)
    assert selection.best_by_fpe is min(converged, key=lambda f: f.fpe)
    # With the default budget every order converges and ARIMA(2,1,1) beats those AR orders.
    full = arima.select_order(x)
    assert full.unconverged == () and full.best.q > 0


def test_degenerate_traces_are_flagged() -> None:
    rng = np.random.default_rng(4)
    # The CA-ARTT trace: 167 of its 175 differences are zero.
    assert arima.degeneracy(CA_ARTT_RTT) == (
        "167 of 175 differences (95.4 %) are zero: the series is piecewise constant, not an ARIMA "
        "process, so no order is a trustworthy choice"
    )
    assert arima.select_order(CA_ARTT_RTT).degenerate == arima.degeneracy(CA_ARTT_RTT)
    # Variance ~0: rounding-level wiggles on a constant RTT count as no movement.
    assert arima.degeneracy(0.1 + 1e-14 * rng.normal(size=300)).startswith("299 of 299 differences")
    # A random walk that moves on 40 % of its samples (60 % of its differences zero) is
    # degenerate; one that moves on 60 % is not.
    for moving, flagged in [(0.4, True), (0.6, False)]:
        steps = rng.normal(size=1000) * (rng.random(1000) < moving)
        walk = 0.1 + 1e-3 * np.cumsum(steps)
        zero = int(np.sum(np.diff(walk) == 0.0))
        assert (zero > 999 / 2) == flagged
        assert (arima.degeneracy(walk) is not None) == flagged, (moving, zero)
    assert arima.select_order(synthetic(500, seed=2)).degenerate is None


def test_cli_reports_a_degenerate_trace_without_choosing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "trace.csv"
    pd.DataFrame({"rtt_s": CA_ARTT_RTT}).to_csv(path, index=False)
    # A finding about the trace, not an error in the input: exit code 0.
    assert main(["arima", "fit", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"no order chosen: {arima.degeneracy(CA_ARTT_RTT)}" in out
    assert "<- smallest AIC" in out and "<- chosen" not in out
    assert not any(line.startswith("chosen:") for line in out.splitlines())
    assert "ca-artt parameters" not in out


def test_cli_marks_orders_that_did_not_converge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "trace.csv"
    x = synthetic(2000, seed=1, scale=1e-3, level=0.2)
    pd.DataFrame({"rtt_s": x}).to_csv(path, index=False)
    select_order = arima.select_order
    monkeypatch.setattr(arima, "select_order", lambda series: select_order(series, max_iterations=3))
    assert main(["arima", "fit", str(path)]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[1]: line for line in out.splitlines() if line.startswith("│ ARIMA(")}
    for p in range(3):
        for q in range(3):
            assert ("no (3 evals)" in rows[f"ARIMA({p},1,{q})"]) == (q > 0)
    text = " ".join(out.split())  # the console wraps long lines
    assert (
        "not converged, left out of the choice: ARIMA(0,1,1), ARIMA(0,1,2), ARIMA(1,1,1), "
        "ARIMA(1,1,2), ARIMA(2,1,1), ARIMA(2,1,2)"
    ) in text
    selection = select_order(x, max_iterations=3)
    chosen = selection.best
    assert chosen.q == 0 and f"chosen: {chosen.name}" in text
    # Partly optimised MA fits can still beat the AR orders on AIC: the output says so.
    lower = [f.name for f in selection.unconverged if f.aic < chosen.aic]
    assert lower and f"with a smaller AIC than {chosen.name}: {', '.join(lower)}" in text
