"""``ccsim arima fit``: ARIMA(p,1,q) models of an RTT trace, the order chosen by AIC and FPE."""

from __future__ import annotations

import argparse
from typing import Any

from rich.table import Table
from rich.text import Text

from ..errors import ScenarioError
from .common import EXIT_OK, _cell, _stdout_console


def _read_rtt_series(path: str, column: str | None, flow: int | None) -> tuple[Any, str]:
    """The RTT column of a CSV (or Parquet) trace as floats, and a description of it."""
    import pandas as pd

    def bad(message: str, field: str = "") -> ScenarioError:
        return ScenarioError(path, field, message)

    try:
        frame = pd.read_parquet(path) if path.endswith(".parquet") else pd.read_csv(path)
    except FileNotFoundError:
        raise bad("no such file") from None
    except pd.errors.EmptyDataError:
        raise bad("the file is empty") from None
    except UnicodeDecodeError:
        raise bad("not a text CSV file") from None
    except Exception as exc:  # parser and I/O errors of pandas and pyarrow: one line
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise bad(f"cannot read it as {'Parquet' if path.endswith('.parquet') else 'CSV'}: {first}") from None
    columns = [str(c) for c in frame.columns]
    if flow is not None:
        if "flow" not in frame.columns:
            raise bad(f"there is no flow column (columns: {', '.join(columns)})", "--flow")
        flows = sorted(pd.unique(frame["flow"]).tolist())
        frame = frame[frame["flow"] == flow]
        if frame.empty:
            raise bad(f"no rows for flow {flow}; flows in the trace: {', '.join(map(str, flows))}", "--flow")
    elif "flow" in frame.columns and frame["flow"].nunique() > 1:
        flows = sorted(pd.unique(frame["flow"]).tolist())
        raise bad(f"the trace holds several flows ({', '.join(map(str, flows))}); choose one with --flow")
    if column is not None:
        if column not in frame.columns:
            raise bad(f"no column {column!r}; columns: {', '.join(columns)}", "--column")
        chosen = column
    elif "rtt_s" in frame.columns:
        chosen = "rtt_s"
    else:
        numeric = [str(c) for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c])]
        if len(numeric) != 1:
            found = f"numeric columns: {', '.join(numeric)}" if numeric else "no numeric column"
            raise bad(f"no column rtt_s and {found}; name the RTT column with --column")
        chosen = numeric[0]
    values = pd.to_numeric(frame[chosen], errors="coerce")
    if values.isna().any():
        row = int(values.isna().to_numpy().argmax())
        raise bad(f"column {chosen!r} has a missing or non-numeric value (data row {row + 1})")
    described = f"{len(values)} RTTs from column {chosen}" + (f" (flow {flow})" if flow is not None else "")
    return values.to_numpy(dtype=float), described


def _cmd_arima(args: argparse.Namespace) -> int:
    if args.arima_command is None:
        raise ScenarioError("", "", "an action is required: fit (see 'ccsim arima --help')")
    from ..results import arima

    series, described = _read_rtt_series(args.file, args.column, args.flow)
    try:
        selection = arima.select_order(series)
    except ValueError as exc:
        raise ScenarioError(args.file, "", str(exc)) from None
    best = selection.best
    console = _stdout_console()
    console.print(
        Text(f"{args.file}: {described}; ARIMA(p,1,q) by conditional least squares, {best.n} innovations each")
    )
    # A degenerate trace gets no chosen order, only the smallest AIC marked as such.
    marker = "<- smallest AIC" if selection.degenerate else "<- chosen"
    table = Table(title="Orders (paper eq. 14-15, Table 1)", title_justify="left")
    for header in ("model", "phi", "theta", "sigma^2", "AIC", "FPE", "converged", ""):
        table.add_column(header, justify="left" if header in ("model", "phi", "theta", "converged", "") else "right")
    for f in selection.fits:
        table.add_row(
            *map(
                _cell,
                (
                    f.name,
                    " ".join(f"{v:+.5f}" for v in f.phi) or "-",
                    " ".join(f"{v:+.5f}" for v in f.theta) or "-",
                    f"{f.sigma2:.6g}",
                    f"{f.aic:.6f}",
                    f"{f.fpe:.6g}",
                    "yes" if f.converged else f"no ({f.iterations} evals)",
                    marker if f is best else "",
                ),
            )
        )
    console.print(table)
    if selection.unconverged:
        # Left out of the choice; say so when one of them would otherwise have won.
        console.print(
            Text("not converged, left out of the choice: " + ", ".join(f.name for f in selection.unconverged))
        )
        lower = [f.name for f in selection.unconverged if f.aic < best.aic]
        if lower:
            console.print(Text(f"  with a smaller AIC than {best.name}: {', '.join(lower)}"))
    if selection.degenerate:
        console.print(Text(f"no order chosen: {selection.degenerate}"))
        return EXIT_OK
    agreement = "FPE agrees" if selection.best_by_fpe is best else f"FPE alone would pick {selection.best_by_fpe.name}"
    console.print(Text(f"chosen: {best.name} (smallest AIC; {agreement})"))
    coefficients = [f"phi{i} = {v:.5f}" for i, v in enumerate(best.phi, 1)]
    coefficients += [f"theta{i} = {v:.5f}" for i, v in enumerate(best.theta, 1)]
    console.print(Text("  " + ", ".join(coefficients + [f"sigma^2 = {best.sigma2:.6g}"])))
    if best.q <= 1:
        # ca-artt forecasts with ARIMA(2,1,1); its sub-models are the same with zeros.
        phi = list(best.phi) + [0.0] * (2 - best.p)
        theta = list(best.theta) + [0.0] * (1 - best.q)
        console.print(
            Text(
                f'  as ca-artt parameters: cc = {{ kind = "ca-artt", phi1 = {phi[0]:.5f}, '
                f"phi2 = {phi[1]:.5f}, theta1 = {theta[0]:.5f} }}"
            )
        )
    return EXIT_OK
