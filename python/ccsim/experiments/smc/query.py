"""The query language of ``ccsim smc``: ``Pr[<=T](<> φ)``, ``Pr[<=T]([] φ)``, optionally followed
by a probability bound (``>= p``) for a hypothesis test. The grammar and its meaning are in the
package's documentation (``ccsim.experiments.smc``) and docs/smc.md; this module only reads the
text into a ``Query`` whose formula is a tree of tuples, with the column of every error."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ...errors import show


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
