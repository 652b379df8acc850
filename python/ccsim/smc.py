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

    import ccsim.smc
    r = ccsim.smc.check("scenarios/examples/ncs_dumbbell.toml", "Pr[<=30](<> ncs.itae > 8727)",
                        overrides=['flows.start="0s..1s"'])
    r.estimate, r.interval, r.first_passage
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import registry
from .errors import ScenarioError, show

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

DEFAULT_TRACE_INTERVAL_NS = 10_000_000
DEFAULT_MAX_RUNS = 10_000


# --- the query language -----------------------------------------------------------------------


class QueryError(ValueError):
    """A malformed query: the message, and the 1-based column it points at."""

    def __init__(self, query: str, column: int, message: str) -> None:
        super().__init__(query, column, message)
        self.query = query
        self.column = column
        self.message = message

    def __str__(self) -> str:
        return f"column {self.column}: {self.message}\n  {self.query}\n  {' ' * (self.column - 1)}^"

    def one_line(self) -> str:
        return f"column {self.column}: {self.message}"


_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0}
_MAX_BOUND_NS = 2**63 - 1
_NUMBER = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_UNIT = re.compile(r"(ns|us|ms|min|s)(?![A-Za-z0-9_])")
_SEGMENT = r"[A-Za-z_][A-Za-z0-9_]*(?:->[A-Za-z0-9_]+)?"
_NAME = re.compile(rf"{_SEGMENT}(?:\.(?:{_SEGMENT}|\d+))*")
_SYMBOLS = ["<>", "[]", "<=", ">=", "==", "!=", "&&", "||", "<", ">", "!", "(", ")", "[", "]", "+", "-", "*", "/", ","]
_KEYWORDS = {"and": "&&", "or": "||", "not": "!"}


@dataclass(frozen=True)
class Token:
    kind: str  # "num", "name", "op", "end"
    text: str
    column: int  # 1-based
    value: float = 0.0
    unit: bool = False


def _tokens(query: str) -> list[Token]:
    out: list[Token] = []
    i = 0
    while i < len(query):
        ch = query[i]
        if ch.isspace():
            i += 1
            continue
        col = i + 1
        number = _NUMBER.match(query, i)
        if number and (ch.isdigit() or ch == "."):
            end = number.end()
            value = float(number.group())
            unit = _UNIT.match(query, end)
            has_unit = False
            if unit:
                value *= _UNITS[unit.group(1)]
                end = unit.end()
                has_unit = True
            elif end < len(query) and (query[end].isalpha() or query[end] == "_"):
                raise QueryError(
                    query,
                    end + 1,
                    f"unknown unit {re.match(r'[A-Za-z_]+', query[end:]).group()!r} "  # type: ignore[union-attr]
                    f"(time units: {', '.join(_UNITS)})",
                )
            if not math.isfinite(value):  # 1e400 reads as infinity: no bound or threshold means that
                raise QueryError(query, col, f"{show(query[i:end])} is too large a number")
            out.append(Token("num", query[i:end], col, value, has_unit))
            i = end
            continue
        if ch == "`":
            close = query.find("`", i + 1)
            if close < 0:
                raise QueryError(query, col, "unclosed backquote")
            if close == i + 1:
                raise QueryError(query, col, "empty name in backquotes")
            out.append(Token("name", query[i + 1 : close], col))
            i = close + 1
            continue
        name = _NAME.match(query, i)
        if name:
            text = name.group()
            if text in _KEYWORDS:
                out.append(Token("op", _KEYWORDS[text], col))
            else:
                out.append(Token("name", text, col))
            i = name.end()
            continue
        for symbol in _SYMBOLS:
            if query.startswith(symbol, i):
                out.append(Token("op", symbol, col))
                i += len(symbol)
                break
        else:
            raise QueryError(query, col, f"unexpected character {show(ch)}")
    out.append(Token("end", "", len(query) + 1))
    return out


# Expression nodes: tuples, so they pickle cheaply and compare by value.
#   ("num", value) | ("ref", name, column) | ("neg", x) | ("abs", x) | ("arith", op, x, y)
#   | ("cmp", op, x, y) | ("not", x) | ("and", x, y) | ("or", x, y)
Node = tuple


@dataclass(frozen=True)
class Query:
    """A parsed query."""

    text: str
    bound_s: float
    path: str  # "<>" or "[]"
    expr: Node
    comparison: tuple[str, float] | None = None
    """``(">=", p0)`` etc. for a hypothesis test; None for an estimate."""

    @property
    def refs(self) -> list[tuple[str, int]]:
        """Every series or scalar name in the formula with its column."""
        found: list[tuple[str, int]] = []

        def walk(node: Node) -> None:
            if node[0] == "ref":
                found.append((node[1], node[2]))
            elif node[0] != "num":
                for child in node[1:]:
                    if isinstance(child, tuple):
                        walk(child)

        walk(self.expr)
        return found


class _Parser:
    def __init__(self, query: str) -> None:
        self.query = query
        self.tokens = _tokens(query)
        self.i = 0

    def peek(self) -> Token:
        return self.tokens[self.i]

    def take(self) -> Token:
        token = self.tokens[self.i]
        self.i += 1
        return token

    def error(self, token: Token, message: str) -> QueryError:
        return QueryError(self.query, token.column, message)

    def found(self, token: Token) -> str:
        return "the end of the query" if token.kind == "end" else repr(token.text)

    def expect(self, text: str, what: str) -> Token:
        token = self.take()
        if token.kind != "op" or token.text != text:
            raise self.error(token, f"expected {what}, found {self.found(token)}")
        return token

    def query_(self) -> Query:
        head = self.take()
        if head.kind != "name" or head.text != "Pr":
            raise self.error(head, "a query starts with Pr, e.g. Pr[<=30](<> ncs.itae > 8727)")
        self.expect("[", "'[' after Pr")
        self.expect("<=", "'<=' and the time bound, e.g. Pr[<=30]")
        bound = self.take()
        if bound.kind != "num":
            raise self.error(
                bound, f"expected the time bound (seconds, or with a unit: 500ms), found {self.found(bound)}"
            )
        if bound.value <= 0:
            raise self.error(bound, "the time bound must be positive")
        if bound.value * 1e9 > _MAX_BOUND_NS:  # the engine's clock is a 64-bit count of nanoseconds
            raise self.error(bound, f"the time bound must be at most {_MAX_BOUND_NS / 1e9:.3g} s")
        self.expect("]", "']' after the time bound")
        self.expect("(", "'(' and a path formula, <> or []")
        path = self.take()
        if path.kind != "op" or path.text not in ("<>", "[]"):
            raise self.error(path, f"expected <> (eventually) or [] (always), found {self.found(path)}")
        expr = self.expr()
        self._boolean(expr, path)
        self.expect(")", "')' closing the path formula")
        comparison = None
        token = self.peek()
        if token.kind == "op" and token.text in ("<=", ">=", "<", ">"):
            self.take()
            p = self.take()
            if p.kind != "num" or p.unit:
                raise self.error(p, f"expected a probability after {token.text}, found {self.found(p)}")
            if not 0.0 <= p.value <= 1.0:
                raise self.error(p, f"a probability is in [0, 1], got {p.text}")
            comparison = (token.text, p.value)
        end = self.take()
        if end.kind != "end":
            raise self.error(end, f"unexpected {self.found(end)} after the query")
        return Query(self.query, bound.value, path.text, expr[0], comparison)

    # Each method returns (node, type, first token) with type "bool" or "num".

    def _boolean(self, item: tuple[Node, str, Token], context: Token) -> None:
        node, kind, first = item
        if kind != "bool":
            raise self.error(first, "expected a condition (a comparison such as x > 3), found a number")

    def _number(self, item: tuple[Node, str, Token]) -> None:
        node, kind, first = item
        if kind != "num":
            raise self.error(first, "expected a number or a series, found a condition")

    def expr(self) -> tuple[Node, str, Token]:
        left = self.conj()
        while self.peek().kind == "op" and self.peek().text == "||":
            op = self.take()
            right = self.conj()
            self._boolean(left, op)
            self._boolean(right, op)
            left = (("or", left[0], right[0]), "bool", left[2])
        return left

    def conj(self) -> tuple[Node, str, Token]:
        left = self.negation()
        while self.peek().kind == "op" and self.peek().text == "&&":
            op = self.take()
            right = self.negation()
            self._boolean(left, op)
            self._boolean(right, op)
            left = (("and", left[0], right[0]), "bool", left[2])
        return left

    def negation(self) -> tuple[Node, str, Token]:
        token = self.peek()
        if token.kind == "op" and token.text == "!":
            self.take()
            inner = self.negation()
            self._boolean(inner, token)
            return ("not", inner[0]), "bool", token
        return self.comparison()

    def comparison(self) -> tuple[Node, str, Token]:
        left = self.sum()
        token = self.peek()
        if token.kind == "op" and token.text in ("<", "<=", ">", ">=", "==", "!="):
            self.take()
            right = self.sum()
            self._number(left)
            self._number(right)
            after = self.peek()
            if after.kind == "op" and after.text in ("<", "<=", ">", ">=", "==", "!="):
                raise self.error(after, "comparisons do not chain; write a < x && x < b")
            return ("cmp", token.text, left[0], right[0]), "bool", left[2]
        return left

    def sum(self) -> tuple[Node, str, Token]:
        left = self.product()
        while self.peek().kind == "op" and self.peek().text in ("+", "-"):
            op = self.take()
            right = self.product()
            self._number(left)
            self._number(right)
            left = (("arith", op.text, left[0], right[0]), "num", left[2])
        return left

    def product(self) -> tuple[Node, str, Token]:
        left = self.unary()
        while self.peek().kind == "op" and self.peek().text in ("*", "/"):
            op = self.take()
            right = self.unary()
            self._number(left)
            self._number(right)
            left = (("arith", op.text, left[0], right[0]), "num", left[2])
        return left

    def unary(self) -> tuple[Node, str, Token]:
        token = self.peek()
        if token.kind == "op" and token.text == "-":
            self.take()
            inner = self.unary()
            self._number(inner)
            return ("neg", inner[0]), "num", token
        return self.atom()

    def atom(self) -> tuple[Node, str, Token]:
        token = self.take()
        if token.kind == "num":
            return ("num", token.value), "num", token
        if token.kind == "name":
            if token.text == "abs" and self.peek().kind == "op" and self.peek().text == "(":
                self.take()
                inner = self.sum()
                self._number(inner)
                self.expect(")", "')' closing abs(")
                return ("abs", inner[0]), "num", token
            if token.text == "Pr":
                raise self.error(token, "Pr[...] is a query, not a value; comparing probabilities is not supported")
            return ("ref", token.text, token.column), "num", token
        if token.kind == "op" and token.text == "(":
            inner = self.expr()
            self.expect(")", "')'")
            return inner[0], inner[1], token
        raise self.error(token, f"expected a number, a series name or '(', found {self.found(token)}")


def parse_query(text: str) -> Query:
    """Parse a query; QueryError (with the column) if it is malformed."""
    if not text.strip():
        raise QueryError(text, 1, "empty query; e.g. Pr[<=30](<> ncs.itae > 8727)")
    return _Parser(text).query_()


# --- statistics --------------------------------------------------------------------------------


def chernoff_runs(epsilon: float, alpha: float) -> int:
    """Runs for P(|p̂ - p| >= epsilon) <= alpha: ceil(ln(2/alpha) / (2 epsilon^2)) (Chernoff-Hoeffding)."""
    if not 0.0 < epsilon < 1.0:
        raise ValueError(f"epsilon must be in (0, 1), got {epsilon}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    return math.ceil(math.log(2.0 / alpha) / (2.0 * epsilon * epsilon))


_lgamma = np.vectorize(math.lgamma, otypes=[float])
_TINY = 1e-300


def betainc(x: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The regularized incomplete beta function I_x(a, b), elementwise, by its continued
    fraction (modified Lentz) on the side where it converges fast, with the symmetry
    I_x(a, b) = 1 - I_{1-x}(b, a) on the other."""
    x, a, b = np.broadcast_arrays(np.asarray(x, float), np.asarray(a, float), np.asarray(b, float))
    out = np.where(x <= 0.0, 0.0, 1.0)
    inside = (x > 0.0) & (x < 1.0)
    if not inside.any():
        return out
    xs, as_, bs = x[inside], a[inside], b[inside]
    flip = xs >= (as_ + 1.0) / (as_ + bs + 2.0)
    xx = np.where(flip, 1.0 - xs, xs)
    aa = np.where(flip, bs, as_)
    bb = np.where(flip, as_, bs)
    log_front = aa * np.log(xx) + bb * np.log1p(-xx) - (_lgamma(aa) + _lgamma(bb) - _lgamma(aa + bb))
    # Continued fraction.
    qab, qap, qam = aa + bb, aa + 1.0, aa - 1.0
    c = np.ones_like(xx)
    d = 1.0 - qab * xx / qap
    d = np.where(np.abs(d) < _TINY, _TINY, d)
    d = 1.0 / d
    h = d.copy()
    for m in range(1, 20000):
        m2 = 2.0 * m
        num = m * (bb - m) * xx / ((qam + m2) * (aa + m2))
        d = 1.0 + num * d
        d = np.where(np.abs(d) < _TINY, _TINY, d)
        c = 1.0 + num / c
        c = np.where(np.abs(c) < _TINY, _TINY, c)
        d = 1.0 / d
        h *= d * c
        num = -(aa + m) * (qab + m) * xx / ((aa + m2) * (qap + m2))
        d = 1.0 + num * d
        d = np.where(np.abs(d) < _TINY, _TINY, d)
        c = 1.0 + num / c
        c = np.where(np.abs(c) < _TINY, _TINY, c)
        d = 1.0 / d
        delta = d * c
        h *= delta
        if np.all(np.abs(delta - 1.0) < 1e-15):
            break
    value = np.exp(log_front) * h / aa
    out[inside] = np.where(flip, 1.0 - value, value)
    return out


def beta_quantile(q: Any, a: Any, b: Any) -> np.ndarray:
    """The q-quantile of Beta(a, b), elementwise: bisection on I_x(a, b) = q (to 2^-64)."""
    q, a, b = np.broadcast_arrays(np.asarray(q, float), np.asarray(a, float), np.asarray(b, float))
    lo = np.zeros(q.shape)
    hi = np.ones(q.shape)
    for _ in range(64):
        mid = 0.5 * (lo + hi)
        below = betainc(mid, a, b) < q
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    return 0.5 * (lo + hi)


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


# --- scenario side: random elements, names ---------------------------------------------------------


def _random_models(family: str) -> list[str]:
    """The models of `family` that can draw random numbers."""
    return [m.name for m in registry.get_registry().models(family) if m.random.get("when", "never") != "never"]


def random_elements(scenario: Any) -> list[str]:
    """The scenario's declared sources of randomness, described (empty: every seed gives the
    same run)."""
    reg = registry.get_registry()
    found: list[str] = []
    for i, flow in enumerate(scenario.flows):
        if flow.start[1] is not None:
            found.append(f"flows[{i}].start window ({flow.start[0] / 1e9:g}..{flow.start[1] / 1e9:g} s)")
        for family, spec in (("cc", flow.cc), ("app", flow.app)):
            if spec is not None and (what := reg.model(family, spec.kind).randomness(spec.params)):
                found.append(f"flows[{i}].{family} {spec.kind} ({what})")
    processing_model = reg.model("node", "processing")
    for node, processing in scenario.network.processing.items():
        if processing_model.randomness(processing):
            found.append(
                f"{processing_model.random['what']} at {node} ({processing.get('distribution', 'uniform')}, "
                f"{processing['jitter'] / 1e3:g} us)"
            )
    for link in scenario.network.links:
        for name, d in ((f"{link.a}->{link.b}", link.ab), (f"{link.b}->{link.a}", link.ba)):
            if d.loss > 0:
                found.append(f"packet error rate {d.loss:g} on {name}")
            if what := reg.model("queue", d.queue.kind).randomness(d.queue.params):
                found.append(f"queue discipline {d.queue.kind} on {name} ({what})")
    return found


@dataclass(frozen=True)
class Source:
    """Where a name's values come from: a trace column, a control-loop series, or a scalar."""

    kind: str  # "trace", "control", "scalar"
    key: Any  # trace column; (loop, series); (table, index-or-name, field) for scalars


_QUEUE_SERIES = {
    "length": "len_pkts",
    "len_pkts": "len_pkts",
    "bytes": "len_bytes",
    "len_bytes": "len_bytes",
    "sojourn": "sojourn_s",
    "sojourn_s": "sojourn_s",
}
_LOOP_SERIES = ("itae", "iae", "ise", "error", "abs_error", "output", "reference", "control")
_TOP_SCALARS = ("jain_index", "utilization", "events", "duration_s")


@dataclass
class _Shape:
    """What a scenario offers: from its results at time 0 (field names, queues, flows, loops)."""

    queues: list[str]
    bottleneck: str | None
    flows: list[dict[str, Any]]
    flow_fields: list[str]
    queue_fields: list[str]
    loops: list[str]
    control_fields: list[str]
    cwnd_flows: list[int]


def _shape(config: dict[str, Any]) -> _Shape:
    from . import _core

    probe = dict(config)
    probe["trace"] = dict(config["trace"], interval_ns=1_000_000_000, cwnd=True, queues=[])
    raw = json.loads(_core.Simulation(json.dumps(probe)).results_json())
    flows = raw["flows"]
    cwnd = sorted(int(c.split(".")[1]) for c in raw["traces"] if c.startswith("flow.") and c.endswith(".cwnd_bytes"))
    return _Shape(
        queues=[q["name"] for q in raw["queues"]],
        bottleneck=config.get("bottleneck"),
        flows=flows,
        flow_fields=list(flows[0]) if flows else [],
        queue_fields=list(raw["queues"][0]) if raw["queues"] else [],
        loops=[c["name"] for c in raw.get("control") or []]
        or [loop.get("name") or f"control{i}" for i, loop in enumerate(config.get("control", []))],
        control_fields=registry.control_columns(),
        cwnd_flows=cwnd,
    )


def _listing(items: list[str], limit: int = 12) -> str:
    return ", ".join(items) if len(items) <= limit else ", ".join(items[:limit]) + ", ..."


def _resolve_name(name: str, column: int, query: str, shape: _Shape) -> Source:
    def bad(message: str) -> QueryError:
        return QueryError(query, column, message)

    def queue(q: str) -> str:
        if q == "bottleneck":
            if shape.bottleneck is None:
                raise bad(
                    "the scenario names no bottleneck queue; give topology.bottleneck_queue or name the "
                    f"queue: {_listing(shape.queues)}"
                )
            return shape.bottleneck
        if q not in shape.queues:
            raise bad(f"no queue {show(q)}; queues: bottleneck, {_listing(shape.queues)}")
        return q

    def flow(f: str) -> int:
        if f.isdigit() and int(f) < len(shape.flows):
            return int(f)
        for row in shape.flows:
            if row["name"] == f:
                return int(row["id"])
        names = [str(r["name"]) for r in shape.flows]
        raise bad(f"no flow {show(f)}; flows (index or name): {_listing(names) or 'none'}")

    def loop(l: str) -> int:
        if l.isdigit() and int(l) < len(shape.loops):
            return int(l)
        if l in shape.loops:
            return shape.loops.index(l)
        raise bad(
            f"no control loop {show(l)}; loops: {_listing(shape.loops) or 'none (the scenario has no [[control]])'}"
        )

    # Queue names contain "->" and may contain dots only in backquoted names; split around them.
    head, _, rest = name.partition(".")
    if head == "queue" and rest:
        q, _, series = rest.rpartition(".")
        if not q:
            raise bad("a queue series is queue.Q.length, .bytes or .sojourn (Q = bottleneck or FROM->TO)")
        if series not in _QUEUE_SERIES:
            raise bad(f"unknown queue series {show(series)}; queue.Q.length, .bytes, .sojourn")
        return Source("trace", f"queue.{queue(q)}.{_QUEUE_SERIES[series]}")
    if head == "flow" and rest:
        f, _, series = rest.rpartition(".")
        if series not in ("cwnd", "cwnd_bytes") or not f:
            raise bad("the flow series is flow.F.cwnd (F = index or name); per-flow results are flows.F.FIELD")
        index = flow(f)
        if index not in shape.cwnd_flows:
            raise bad(f"flow {f} has no congestion window (not TCP)")
        return Source("trace", f"flow.{index}.cwnd_bytes")
    if head == "ncs":
        parts = rest.split(".") if rest else []
        if len(parts) == 1:
            if not shape.loops:
                raise bad("the scenario has no control loop ([[control]])")
            index, series = 0, parts[0]
        elif len(parts) == 2:
            index, series = loop(parts[0]), parts[1]
        else:
            raise bad(f"a control-loop series is ncs.X or ncs.LOOP.X, X in {', '.join(_LOOP_SERIES)}")
        if series not in _LOOP_SERIES:
            raise bad(f"unknown control-loop series {show(series)}; one of {', '.join(_LOOP_SERIES)}")
        return Source("control", (index, series))
    if head == "flows" and rest:
        f, _, fld = rest.rpartition(".")
        found = flow(f) if f else None
        if found is None or fld not in shape.flow_fields:
            raise bad(f"a flow result is flows.F.FIELD, FIELD in {_listing(shape.flow_fields, 40)}")
        return Source("scalar", ("flows", found, fld))
    if head == "queues" and rest:
        q, _, fld = rest.rpartition(".")
        if not q or fld not in shape.queue_fields:
            raise bad(f"a queue result is queues.Q.FIELD, FIELD in {_listing(shape.queue_fields, 40)}")
        return Source("scalar", ("queues", queue(q), fld))
    if head == "control" and rest:
        l, _, fld = rest.rpartition(".")
        if not l or fld not in shape.control_fields:
            raise bad(f"a control-loop result is control.LOOP.FIELD, FIELD in {_listing(shape.control_fields, 40)}")
        return Source("scalar", ("control", loop(l), fld))
    if name in _TOP_SCALARS:
        return Source("scalar", ("top", None, name))
    raise bad(
        f"unknown name {show(name)}; series: queue.Q.length|bytes|sojourn, flow.F.cwnd, ncs.X; "
        f"results: flows.F.FIELD, queues.Q.FIELD, control.LOOP.FIELD, {', '.join(_TOP_SCALARS)}"
    )


def vocabulary(scenario: Any, overrides: list[str] | None = None) -> list[str]:
    """The names a query may use on ``scenario`` (series first, then scalars)."""
    from .api import as_scenario

    model = as_scenario(scenario, overrides)
    shape = _shape(model.to_config())
    names: list[str] = []
    queues = (["bottleneck"] if shape.bottleneck else []) + shape.queues
    names += [f"queue.{q}.{s}" for q in queues for s in ("length", "bytes", "sojourn")]
    names += [f"flow.{f}.cwnd" for f in shape.cwnd_flows]
    if shape.loops:
        names += [f"ncs.{s}" for s in _LOOP_SERIES]
        names += [f"ncs.{loop}.{s}" for loop in shape.loops for s in _LOOP_SERIES]
    names += [f"flows.F.{fld}" for fld in shape.flow_fields]
    names += [f"queues.Q.{fld}" for fld in shape.queue_fields]
    if shape.loops:
        names += [f"control.LOOP.{fld}" for fld in shape.control_fields]
    names += list(_TOP_SCALARS)
    return names


# --- evaluation (worker side) ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Plan:
    """What a worker needs to run and judge runs: the configuration and the resolved query."""

    config_json: str
    path: str
    bound_s: float
    expr: Node
    sources: dict[str, Source]
    warmup_s: float


def _series(raw: dict[str, Any], source: Source, bound: float, warmup: float) -> tuple[np.ndarray, np.ndarray] | float:
    """(times, values) of a series up to ``bound``, or a scalar's value."""
    if source.kind == "trace":
        traces = raw.get("traces") or {}
        t = np.asarray(traces.get("time_s", []), float)
        v = np.asarray(traces.get(source.key, []), float)
    elif source.kind == "control":
        index, series = source.key
        log = raw.get("control_traces") or {}
        loops = np.asarray(log.get("loop", []), int)
        mask = loops == index
        t = np.asarray(log.get("time_s", []), float)[mask]
        error = np.asarray(log.get("error", []), float)[mask]
        scored = t >= warmup  # as ncs/score.rs: samples from the warm-up on
        if series == "itae":
            v = np.cumsum(np.where(scored, t * np.abs(error), 0.0))
        elif series == "iae":
            v = np.cumsum(np.where(scored, np.abs(error), 0.0))
        elif series == "ise":
            v = np.cumsum(np.where(scored, error * error, 0.0))
        elif series == "abs_error":
            v = np.abs(error)
        else:
            v = np.asarray(log.get(series, []), float)[mask]
    else:
        table, index, fld = source.key
        if table == "top":
            value = raw.get(fld)
        elif table == "flows":
            value = raw["flows"][index].get(fld)
        elif table == "queues":
            value = next(q for q in raw["queues"] if q["name"] == index).get(fld)
        else:
            value = raw["control"][index].get(fld)
        if isinstance(value, bool):
            return float(value)
        return float(value) if isinstance(value, (int, float)) else math.nan
    keep = t <= bound + 1e-12
    return t[keep], v[keep]


def _evaluate(node: Node, values: dict[str, Any]) -> Any:
    kind = node[0]
    if kind == "num":
        return node[1]
    if kind == "ref":
        return values[node[1]]
    if kind == "neg":
        return -_evaluate(node[1], values)
    if kind == "abs":
        return np.abs(_evaluate(node[1], values))
    if kind == "arith":
        x, y = _evaluate(node[2], values), _evaluate(node[3], values)
        with np.errstate(divide="ignore", invalid="ignore"):
            return {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide}[node[1]](x, y)
    if kind == "cmp":
        x, y = _evaluate(node[2], values), _evaluate(node[3], values)
        with np.errstate(invalid="ignore"):
            return {
                "<": np.less,
                "<=": np.less_equal,
                ">": np.greater,
                ">=": np.greater_equal,
                "==": np.equal,
                "!=": np.not_equal,
            }[node[1]](x, y)
    if kind == "not":
        return np.logical_not(_evaluate(node[1], values))
    if kind == "and":
        return np.logical_and(_evaluate(node[1], values), _evaluate(node[2], values))
    if kind == "or":
        return np.logical_or(_evaluate(node[1], values), _evaluate(node[2], values))
    raise AssertionError(f"unknown node {kind}")  # pragma: no cover


def judge(raw: dict[str, Any], plan: _Plan) -> tuple[bool, float | None]:
    """Whether the path formula holds on a run's results, and the first instant φ holds
    (``<>``) or fails (``[]``), None if there is none."""
    series: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    values: dict[str, Any] = {}
    for name, source in plan.sources.items():
        got = _series(raw, source, plan.bound_s, plan.warmup_s)
        if isinstance(got, tuple):
            series[name] = got
        else:
            values[name] = got
    if series:
        grid = np.unique(np.concatenate([t for t, _ in series.values()]))
    else:
        grid = np.asarray([plan.bound_s])
    for name, (t, v) in series.items():
        at = np.searchsorted(t, grid, side="right") - 1  # the sample in force (step function)
        values[name] = np.where(at >= 0, v[np.clip(at, 0, None)] if len(v) else math.nan, math.nan)
    truth = np.broadcast_to(np.asarray(_evaluate(plan.expr, values), bool), grid.shape)
    if plan.path == "<>":
        hits = np.flatnonzero(truth)
        return (True, float(grid[hits[0]])) if len(hits) else (False, None)
    misses = np.flatnonzero(~truth)
    return (False, float(grid[misses[0]])) if len(misses) else (True, None)


def run_batch(arg: tuple[_Plan, list[int]]) -> list[tuple[bool, float | None]]:
    """Worker side: simulate the plan's configuration with each seed and judge the query."""
    from . import _core

    plan, seeds = arg
    config = json.loads(plan.config_json)
    out = []
    for seed in seeds:
        config["seed"] = seed
        try:
            sim = _core.Simulation(json.dumps(config))
            sim.run_until(sim.duration_ns)
            raw = sim.results_json()
        except Exception as exc:  # the engine's classes do not pickle: send the text
            raise RuntimeError(f"seed {seed}: {type(exc).__name__}: {exc}") from None
        out.append(judge(json.loads(raw), plan))
    return out


# --- checking ----------------------------------------------------------------------------------


@dataclass
class SmcResult:
    """The answer to a query."""

    query: str
    mode: str  # "estimate" or "test"
    runs: int
    successes: int
    alpha: float
    epsilon: float | None
    outcomes: Any
    """pandas DataFrame: ``run``, ``seed``, ``satisfied``, ``time_s`` (first passage / failure)."""
    path: str
    bound_s: float
    random_elements: list[str]
    wall_time_s: float
    beta: float | None = None
    delta: float | None = None
    p0: float | None = None
    comparison: str | None = None
    decision: str | None = None
    """Test: "H0" (Pr >= p0 for a >= query), "H1", or "undecided" (max_runs reached)."""
    planned_runs: int | None = None
    """The Chernoff-Hoeffding run count (estimation; also given with a test, for comparison)."""
    where: str = ""

    @property
    def estimate(self) -> float:
        return self.successes / self.runs if self.runs else math.nan

    @property
    def interval(self) -> tuple[float, float]:
        """Clopper-Pearson interval at confidence 1 - alpha."""
        return clopper_pearson(self.successes, self.runs, self.alpha)

    @property
    def chernoff_interval(self) -> tuple[float, float] | None:
        """estimate ± epsilon, clipped to [0, 1] (holds with probability 1 - alpha at N runs)."""
        if self.epsilon is None:
            return None
        return max(0.0, self.estimate - self.epsilon), min(1.0, self.estimate + self.epsilon)

    @property
    def holds(self) -> bool | None:
        """Test: whether the query's probability bound holds (None if undecided)."""
        if self.decision is None or self.decision == "undecided":
            return None
        return self.decision == "H0"

    @property
    def first_passage(self) -> Any:
        """Cumulative probability over time that φ has first held (``<>``) or first failed
        (``[]``) by ``time_s``: one row per distinct instant, with the count and the
        Clopper-Pearson interval at 1 - alpha. Starts at 0 s and ends at the bound."""
        import pandas as pd

        times = np.sort(self.outcomes["time_s"].dropna().to_numpy(float))
        grid = np.unique(np.concatenate([[0.0], times, [self.bound_s]]))
        counts = np.searchsorted(times, grid, side="right")
        n = max(self.runs, 1)
        lower, upper = clopper_pearson(counts, np.full(counts.shape, n), self.alpha)
        return pd.DataFrame({"time_s": grid, "runs": counts, "probability": counts / n, "lower": lower, "upper": upper})

    def to_dict(self) -> dict[str, Any]:
        lo, hi = self.interval
        out: dict[str, Any] = {
            "query": self.query,
            "mode": self.mode,
            "runs": self.runs,
            "successes": self.successes,
            "estimate": self.estimate,
            "confidence": 1.0 - self.alpha,
            "clopper_pearson": [lo, hi],
            "alpha": self.alpha,
            "epsilon": self.epsilon,
            "chernoff_interval": self.chernoff_interval,
            "planned_runs": self.planned_runs,
            "random_elements": self.random_elements,
        }
        if self.mode == "test":
            out.update(
                comparison=self.comparison,
                p0=self.p0,
                delta=self.delta,
                beta=self.beta,
                decision=self.decision,
                holds=self.holds,
            )
        return out

    def summary_lines(self) -> list[str]:
        lo, hi = self.interval
        lines = [f"{self.query}"]
        lines.append(
            f"  {self.runs} runs on {self.where} in {self.wall_time_s:.1f} s; random elements: "
            f"{'; '.join(self.random_elements)}"
        )
        lines.append(
            f"  satisfied in {self.successes} of {self.runs}: estimate {self.estimate:.4f}, "
            f"Clopper-Pearson [{lo:.4f}, {hi:.4f}] at {100 * (1 - self.alpha):g} % confidence"
        )
        if self.mode == "estimate" and self.chernoff_interval is not None:
            clo, chi = self.chernoff_interval
            lines.append(
                f"  Chernoff-Hoeffding: [{clo:.4f}, {chi:.4f}] (estimate ± {self.epsilon:g} with "
                f"probability >= {1 - self.alpha:g} after {self.planned_runs} runs)"
            )
        if self.mode == "test":
            assert self.p0 is not None and self.delta is not None
            verdict = {
                "H0": f"holds: Pr {self.comparison} {self.p0:g}",
                "H1": f"does not hold: Pr {_opposite(self.comparison)} {self.p0:g}",
                "undecided": "undecided (the run limit was reached)",
            }[self.decision or "undecided"]
            lines.append(
                f"  SPRT ({'alpha'} = {self.alpha:g}, beta = {self.beta:g}, indifference ± {self.delta:g}): "
                f"{verdict} after {self.runs} runs (a fixed-size estimate would take {self.planned_runs})"
            )
        return lines

    def write(self, out: str | Path) -> list[Path]:
        """``smc.json``, ``outcomes.parquet``, ``first_passage.csv`` and ``first_passage.png``."""
        directory = Path(out)
        directory.mkdir(parents=True, exist_ok=True)
        written = []
        path = directory / "smc.json"
        path.write_text(json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n", encoding="utf-8")
        written.append(path)
        # Wall time and where it ran depend on the machine, not the model: kept apart, so the
        # result files of the same query and seed are byte-identical (as a sweep's timing.json).
        path = directory / "timing.json"
        path.write_text(
            json.dumps({"wall_time_s": self.wall_time_s, "executor": self.where}, indent=2) + "\n", encoding="utf-8"
        )
        written.append(path)
        path = directory / "outcomes.parquet"
        self.outcomes.to_parquet(path, index=False)
        written.append(path)
        table = self.first_passage
        path = directory / "first_passage.csv"
        table.to_csv(path, index=False)
        written.append(path)
        path = directory / "first_passage.png"
        self.plot(path)
        written.append(path)
        return written

    def plot(self, path: str | Path) -> None:
        """The cumulative probability of the first passage over time (paper Figure 31)."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        table = self.first_passage
        fig, ax = plt.subplots(figsize=(7, 4))
        ax.fill_between(
            table["time_s"],
            table["lower"],
            table["upper"],
            step="post",
            alpha=0.25,
            label=f"Clopper-Pearson {100 * (1 - self.alpha):g} %",
        )
        ax.step(table["time_s"], table["probability"], where="post", label="cumulative probability")
        ax.set_xlim(0, self.bound_s)
        ax.set_ylim(0, 1)
        ax.set_xlabel("time (s)")
        what = "first passage" if self.path == "<>" else "first violation"
        ax.set_ylabel(f"Pr[{what} <= t]")
        ax.set_title(f"{self.query}\n{self.runs} runs, {self.successes} satisfied", fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(loc="upper left", fontsize=8)
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)


def _opposite(op: str | None) -> str:
    return {">=": "<", ">": "<=", "<=": ">", "<": ">="}.get(op or "", "?")


def _prepare(model: Any, query: Query, seed: int | None, trace_interval_ns: int | None) -> tuple[dict[str, Any], _Plan]:
    """The configuration of the runs (duration = the bound, traces for the named series) and
    the worker's plan; QueryError for names the scenario does not have."""
    config = model.to_config()
    bound_ns = int(round(query.bound_s * 1e9))
    if config["warmup_ns"] >= bound_ns:
        raise ScenarioError(
            "", "simulation.warmup", f"must be shorter than the query's time bound ({query.bound_s:g} s)"
        )
    config["duration_ns"] = bound_ns
    if seed is not None:
        config["seed"] = seed
    shape = _shape(config)
    sources = {name: _resolve_name(name, column, query.text, shape) for name, column in query.refs}
    trace = dict(config["trace"])
    needs_trace = [s.key for s in sources.values() if s.kind == "trace"]
    if needs_trace:
        if trace_interval_ns is not None:
            trace["interval_ns"] = trace_interval_ns
        elif not trace.get("interval_ns"):
            trace["interval_ns"] = DEFAULT_TRACE_INTERVAL_NS
        queues = sorted({k.split(".", 1)[1].rsplit(".", 1)[0] for k in needs_trace if k.startswith("queue.")})
        trace["queues"] = (
            [q for q in trace.get("queues", []) if q not in queues] + queues
            if queues
            else (trace.get("queues") or [shape.queues[0]])
        )
        trace["cwnd"] = trace.get("cwnd", True) or any(k.startswith("flow.") for k in needs_trace)
    else:
        trace["interval_ns"] = None  # nothing sampled is needed: no sampling events
    # Only what the query reads: no logs of events, messages or RTT samples.
    trace.update(events=False, messages=False, rtt=False)
    config["trace"] = trace
    plan = _Plan(json.dumps(config), query.path, query.bound_s, query.expr, sources, config["warmup_ns"] / 1e9)
    return config, plan


def check(
    scenario: Any,
    query: str | Query,
    *,
    epsilon: float = 0.05,
    alpha: float = 0.05,
    runs: int | None = None,
    delta: float = 0.01,
    beta: float = 0.05,
    max_runs: int = DEFAULT_MAX_RUNS,
    seed: int | None = None,
    overrides: list[str] | None = None,
    trace_interval: str | int | None = None,
    jobs: int | None = None,
    scheduler: str | None = None,
    executor: Any = None,
    progress: bool = False,
) -> SmcResult:
    """Answer ``query`` on ``scenario`` (a path, a Scenario or a dict) by simulation.

    A query without a probability bound is estimated from ``runs`` runs (default: the
    Chernoff-Hoeffding count for ``epsilon``, ``alpha``); one with a bound (``>= p0``) is
    tested with Wald's SPRT (``delta``, ``alpha``, ``beta``), at most ``max_runs`` runs.
    Runs go to ``executor`` (an ``executor.Executor``, kept open for the caller), or to a new
    one on ``jobs`` local processes or the Dask scheduler at ``scheduler``. ``seed`` replaces
    the scenario's master seed, from which run ``i``'s seed is derived.

    Raises QueryError (malformed query, unknown name), ScenarioError (bad scenario, or one with
    no random element), ValueError (bad statistical parameters).
    """
    from .api import as_scenario
    from .executor import Executor
    from .sweep import derive_seed

    started = time.perf_counter()
    parsed = query if isinstance(query, Query) else parse_query(query)
    model = as_scenario(scenario, overrides)
    file = str(scenario) if isinstance(scenario, (str, Path)) else ""
    elements = random_elements(model)
    if not elements:
        raise ScenarioError(
            file,
            "",
            "the scenario has no random element, so every run would be identical and the "
            "probability is 0 or 1 (one 'ccsim run' decides it); declare one: a start window "
            '(start = "0s..1s"), a packet error rate (loss = 0.001), Poisson arrivals (app kind '
            'poisson), random transfer sizes (app transfer with distribution = "pareto", ...), '
            'processing jitter at a node (processing = { jitter = "50us" }), or a randomized '
            f"queue discipline ({', '.join(_random_models('queue'))})",
        )
    interval_ns = None
    if trace_interval is not None:
        from .units import parse_time

        interval_ns = parse_time(trace_interval)
        if interval_ns <= 0:
            raise ScenarioError(file, "trace_interval", "must be longer than 0s")
    config, plan = _prepare(model, parsed, seed, interval_ns)
    master = int(config["seed"])
    planned = chernoff_runs(epsilon, alpha)
    testing = parsed.comparison is not None
    sprt = None
    if testing:
        assert parsed.comparison is not None
        op, p0 = parsed.comparison
        # "Pr <= p0" is "Pr(not φ-run) >= 1 - p0": test the complement with the same SPRT.
        sprt = Sprt(p0 if op in (">=", ">") else 1.0 - p0, delta, alpha, beta)
        limit = max_runs
        if limit < 1:
            raise ValueError(f"max_runs must be at least 1, got {max_runs}")
    else:
        limit = runs if runs is not None else planned
        if limit < 1:
            raise ValueError(f"runs must be at least 1, got {runs}")

    def seeds() -> Iterator[int]:
        for i in range(limit):
            yield derive_seed(master, "smc", i)

    own = executor is None
    ex = executor or Executor(jobs=jobs, scheduler=scheduler)
    chunk = max(1, min(16 if not testing else 4, limit // (8 * ex.workers)))

    def batches() -> Iterator[tuple[_Plan, list[int]]]:
        buffer: list[int] = []
        for s in seeds():
            buffer.append(s)
            if len(buffer) == chunk:
                yield plan, buffer
                buffer = []
        if buffer:
            yield plan, buffer

    rows: list[tuple[int, int, bool, float | None]] = []
    ready: dict[int, list[tuple[bool, float | None]]] = {}
    next_batch = 0
    bar = _SmcProgress(None if testing else limit) if progress else None
    decided = False
    try:
        iterator = ex.imap_unordered(run_batch, batches())
        try:
            for index, value, exc in iterator:
                if exc is not None:
                    raise RuntimeError(f"run batch {index} failed: {type(exc).__name__}: {exc}") from exc
                ready[index] = value
                # Consume in run order, so that the sequential test decides the same way on any
                # executor, whatever order the runs finish in.
                while next_batch in ready and not decided:
                    for outcome in ready.pop(next_batch):
                        i = len(rows)
                        rows.append((i, derive_seed(master, "smc", i), outcome[0], outcome[1]))
                        if sprt is not None:
                            op = parsed.comparison[0] if parsed.comparison else ">="
                            success = outcome[0] if op in (">=", ">") else not outcome[0]
                            if sprt.add(success) is not None:
                                decided = True
                                break
                    next_batch += 1
                if bar is not None:
                    bar.update(len(rows), sum(r[2] for r in rows))
                if decided:
                    break
        finally:
            iterator.close()
    finally:
        if bar is not None:
            bar.close()
        if own:
            ex.close()

    import pandas as pd

    outcomes = pd.DataFrame(rows, columns=["run", "seed", "satisfied", "time_s"]).astype(
        {"run": "int64", "seed": "uint64", "satisfied": bool, "time_s": "float64"}
    )
    result = SmcResult(
        query=parsed.text,
        mode="test" if testing else "estimate",
        runs=len(rows),
        successes=int(outcomes["satisfied"].sum()),
        alpha=alpha,
        # With a run count of the caller's, the Chernoff-Hoeffding half-width is that of the count.
        epsilon=None if testing else epsilon if runs is None else math.sqrt(math.log(2.0 / alpha) / (2.0 * len(rows))),
        outcomes=outcomes,
        path=parsed.path,
        bound_s=parsed.bound_s,
        random_elements=elements,
        wall_time_s=time.perf_counter() - started,
        planned_runs=planned if runs is None else runs,
        where=ex.description,
    )
    if testing:
        assert parsed.comparison is not None and sprt is not None
        result.beta, result.delta = beta, delta
        result.comparison, result.p0 = parsed.comparison
        result.decision = sprt.decision or "undecided"
        result.planned_runs = planned
    return result


class _SmcProgress:
    def __init__(self, total: int | None) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        columns: list[Any] = [TextColumn("runs")]
        if total is not None:
            columns += [BarColumn(), MofNCompleteColumn()]
        else:
            columns += [TextColumn("{task.completed}")]
        columns += [TextColumn("{task.description}"), TimeElapsedColumn()]
        if total is not None:
            columns += [TextColumn("eta"), TimeRemainingColumn()]
        self._progress = Progress(*columns, console=Console(stderr=True), transient=True)
        self._task = self._progress.add_task("", total=total)
        self._progress.start()

    def update(self, done: int, satisfied: int) -> None:
        self._progress.update(self._task, completed=done, description=f"({satisfied} satisfied)")

    def close(self) -> None:
        self._progress.stop()
