"""Property-based tests of the scenario front: bad and hostile input.

Hypothesis generates scenario files from the schema: valid ones (every topology kind, queue
disciplines, congestion controls, transports and applications drawn from the engine's registry
with parameter values inside their declared ranges, a few milliseconds of simulated time) and
invalid ones (a valid file with one field broken: wrong type, unknown key, negative or zero
quantity, bad unit, unknown kind, out-of-range parameter, huge number, NaN/inf, nested junk;
garbage TOML; non-UTF-8 bytes). The oracle is the CLI's contract (ccsim.cli): a valid file
validates and runs with exit code 0; an invalid one exits with code 2 and one line on stderr
that names the file and the broken field, never a traceback. The bulk runs in-process
(``ccsim.cli.main``, fast); a sample runs ``python -m ccsim`` as a subprocess, which would
catch an abort or a panic that takes the process down.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import re
import tempfile
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from ccsim.cli import main
from ccsim.scenario.registry import get_registry
from conftest import run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# --- a small TOML writer (the test builds files the way a user would write them) ---------------

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(key: str) -> str:
    return key if _BARE_KEY.match(key) else toml_string(key)


def toml_string(text: str) -> str:
    """A TOML basic string: quotes, backslashes and control characters escaped."""
    escaped = "".join(
        f"\\u{ord(c):04x}" if ord(c) < 0x20 or ord(c) == 0x7F else "\\" + c if c in '"\\' else c for c in text
    )
    return f'"{escaped}"'


class RawToml(str):
    """TOML text written as is (an integer literal Python will not convert to text, say)."""


def toml_value(value: Any) -> str:
    if isinstance(value, RawToml):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(type(value))


def to_toml(data: dict[str, Any]) -> str:
    """Top-level scalars first, then one ``[table]`` per table; arrays of tables inline."""
    lines = [f"{_key(k)} = {toml_value(v)}" for k, v in data.items() if not isinstance(v, dict)]
    for key, value in data.items():
        if isinstance(value, dict):
            lines.append(f"\n[{_key(key)}]")
            lines.extend(f"{_key(k)} = {toml_value(v)}" for k, v in value.items())
    return "\n".join(lines) + "\n"


# --- valid scenarios from the schema -------------------------------------------------------------

REGISTRY = get_registry()
# Sane ranges for generated values in canonical units, so that every run lasts milliseconds:
# the registry's own [min, max] is intersected with these.
SANE = {
    "time": (1_000, 50_000_000),
    "rate": (100_000, 20_000_000),
    "bytes": (200, 65_536),
    "size": (2, 500),
    "float": (-100.0, 100.0),
    "int": (1, 64),
}
# Parameters whose value must stay near its default for a run to stay short or valid.
SKIP_PARAMS = {("app", "reply", "to"), ("transport", "tcp", "init_ssthresh")}


def _bounds(param: Any) -> tuple[float, float]:
    low, high = SANE[param.kind]
    if param.min is not None:
        low = max(low, param.min)
    if param.max is not None:
        high = min(high, param.max)
    return low, max(low, high)


def param_value(param: Any) -> st.SearchStrategy[Any]:
    """A value of ``param`` as a scenario writes it, inside its declared range."""
    kind = param.kind
    if kind == "bool":
        return st.booleans()
    if kind == "prob":
        low = max(0.0, param.min or 0.0)
        high = min(1.0, 1.0 if param.max is None else param.max)
        return st.floats(low, high, allow_nan=False)
    if kind == "choice":
        return st.sampled_from(param.choices)
    if kind == "float":
        low, high = _bounds(param)
        return st.floats(low, high, allow_nan=False, allow_infinity=False)
    low, high = (int(math.ceil(b)) for b in _bounds(param))
    if kind == "int":
        return st.integers(low, max(low, high))
    number = st.integers(low, max(low, high))
    if kind == "time":
        return number.map(lambda n: f"{n}ns")
    if kind == "rate":
        return number.map(lambda n: f"{n}bps")
    if kind == "bytes":
        return number.map(lambda n: f"{n}B")
    if kind == "size":
        return number.map(lambda n: f"{n}p")
    raise AssertionError(kind)


@st.composite
def algo(draw: Any, family: str, names: list[str] | None = None, extra: dict[str, Any] | None = None) -> Any:
    """A model of ``family`` by name or as a table with some of its parameters."""
    name = draw(st.sampled_from(names or REGISTRY.names(family)))
    model = REGISTRY.model(family, name)
    params = [p for p in model.params if (family, name, p.name) not in SKIP_PARAMS]
    required = [p for p in params if p.default is None]
    optional = [p for p in params if p.default is not None]
    chosen = (
        required + draw(st.lists(st.sampled_from(optional), unique_by=lambda p: p.name, max_size=3))
        if optional
        else required
    )
    if not chosen and not extra and draw(st.booleans()):
        return name
    table = {"kind": name, **(extra or {})}
    for p in chosen:
        table[p.name] = draw(param_value(p))
    return table


def ms(low: int, high: int) -> st.SearchStrategy[str]:
    return st.integers(low, high).map(lambda n: f"{n}ms")


RATES = st.integers(1, 100).map(lambda n: f"{n}Mbps")
QUEUES = algo("queue")


@st.composite
def link(draw: Any, rate: bool = True) -> dict[str, Any]:
    spec: dict[str, Any] = {"rate": draw(RATES)} if rate else {}
    spec["delay"] = draw(ms(0, 10))
    if draw(st.booleans()):
        spec["queue"] = draw(QUEUES)
    if draw(st.integers(0, 4)) == 0:
        spec["loss"] = draw(st.floats(0.0, 0.05))
    return spec


@st.composite
def topology(draw: Any) -> tuple[dict[str, Any], list[str], list[tuple[str, str]]]:
    """(topology table, its hosts, host pairs that may carry a flow (by src/dst or pair))."""
    kind = draw(st.sampled_from(["dumbbell", "daisy_chain", "star", "explicit"]))
    if kind == "dumbbell":
        n = draw(st.integers(1, 3))
        table = {
            "kind": kind,
            "bottleneck": draw(link()),
            "access": {"rate": draw(RATES)},
            "pairs": [{"delay": draw(ms(0, 10))} for _ in range(n)],
        }
        hosts = [f"s{i}" for i in range(n)] + [f"r{i}" for i in range(n)]
        return table, hosts, [(f"s{i}", f"r{i}") for i in range(n)]
    if kind == "daisy_chain":
        hops = draw(st.lists(link(), min_size=1, max_size=3))
        n = draw(st.integers(2, 4))
        table = {
            "kind": kind,
            "hops": hops,
            "access": {"rate": draw(RATES)},
            "hosts": [{"router": draw(st.integers(0, len(hops)))} for _ in range(n)],
        }
        hosts = [f"h{i}" for i in range(n)]
    elif kind == "star":
        n = draw(st.integers(1, 3))
        table = {"kind": kind, "sensors": n, "bottleneck": draw(link()), "access": {"rate": draw(RATES)}}
        hosts = [f"sensor{i}" for i in range(n)] + ["controller"]
    else:
        n = draw(st.integers(2, 4))
        table = {
            "kind": kind,
            "nodes": [{"name": f"h{i}", "kind": "host"} for i in range(n)] + [{"name": "r", "kind": "router"}],
            "links": [{"a": f"h{i}", "b": "r", **draw(link())} for i in range(n)],
        }
        hosts = [f"h{i}" for i in range(n)]
    return table, hosts, [(a, b) for a in hosts for b in hosts if a != b]


# Applications a flow can run on its own (reply needs another flow; ncs belongs to [[control]]).
APPS = [name for name in REGISTRY.names("app") if name not in ("reply", "ncs")]


@st.composite
def flow(draw: Any, ends: list[tuple[str, str]], dumbbell: bool, duration_ms: int) -> dict[str, Any]:
    i = draw(st.integers(0, len(ends) - 1))
    out: dict[str, Any] = {"pair": i} if dumbbell else {"src": ends[i][0], "dst": ends[i][1]}
    transport = draw(algo("transport"))
    out["transport"] = transport
    kind = transport if isinstance(transport, str) else transport["kind"]
    if kind == "tcp":
        if draw(st.booleans()) and isinstance(transport, dict):
            transport["profile"] = draw(st.sampled_from(REGISTRY.names("profile")))
        if draw(st.booleans()):
            out["cc"] = draw(algo("cc"))
            cc = out["cc"] if isinstance(out["cc"], str) else out["cc"]["kind"]
            if cc in ("dctcp", "edctcp") and isinstance(transport, dict):
                transport["ecn"] = True  # they need ECN; most runs should run
    out["app"] = draw(algo("app", APPS))
    app = out["app"]
    if isinstance(app, dict) and app["kind"] == "transfer":
        # Each parameter is valid alone; keep the cross-parameter rules of the size distribution
        # (Pareto needs shape > 1 for a mean; size_min <= size), which the schema checks apart.
        if app.get("distribution") == "pareto" and isinstance(app.get("shape"), (int, float)) and app["shape"] <= 1:
            app["shape"] = 1 + draw(st.floats(0.01, 3.0))
        app.pop("size_min", None)
    start = draw(st.integers(0, duration_ms - 1))
    out["start"] = f"{start}ms" if draw(st.booleans()) else f"{start}ms..{draw(st.integers(start + 1, duration_ms))}ms"
    out["count"] = draw(st.integers(1, 3))
    if draw(st.booleans()):
        out["name"] = draw(st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=12))
    if draw(st.booleans()):
        out["group"] = draw(st.sampled_from(["a", "b", "grp one"]))
    return out


@st.composite
def valid_scenario(draw: Any) -> dict[str, Any]:
    duration = draw(st.integers(5, 40))
    topo, hosts, ends = draw(topology())
    data: dict[str, Any] = {
        "simulation": {
            "duration": f"{duration}ms",
            "warmup": f"{draw(st.integers(0, duration - 1))}ms",
            "seed": draw(st.integers(0, 2**64 - 1)),
        },
        "topology": topo,
    }
    if draw(st.booleans()):
        data["description"] = draw(st.text(max_size=30))
    flows = draw(st.lists(flow(ends, topo["kind"] == "dumbbell", duration), min_size=0, max_size=3))
    # Names must be unique across flows and loops (each may be replicated with .k suffixes).
    names: set[str] = set()
    for f in flows:
        if "name" in f and f["name"] in names:
            del f["name"]
        names.add(f.get("name", ""))
    data["flows"] = flows
    if draw(st.integers(0, 3)) == 0:
        loop: dict[str, Any] = {"sampling_period": draw(ms(1, 20))}
        if draw(st.booleans()):
            a, b = ends[0]
            loop.update(plant_host=a, controller_host=b)
        data["control"] = [loop]
    if draw(st.booleans()):
        data["trace"] = {
            "interval": draw(ms(1, 10)),
            **{k: draw(st.booleans()) for k in ("cwnd", "flow_counters", "events", "messages", "rtt")},
        }
    return data


# --- running the CLI in-process --------------------------------------------------------------------


def cli(*args: str) -> tuple[int, str, str]:
    """``ccsim ARGS`` in this process: (exit code, stdout, stderr). An exception escaping
    ``main`` is a failure of the contract (it would print a traceback)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


@contextlib.contextmanager
def scenario_file(content: str | bytes) -> Any:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scenario.toml"
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
        yield path


# CCSIM_FUZZ_SCALE=20 explores twenty times as many examples (a deeper local search).
SCALE = max(1, int(os.environ.get("CCSIM_FUZZ_SCALE", "1")))
FUZZ = settings(
    max_examples=60 * SCALE,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# The engine's refusal, named by the scenario key it concerns.
ENGINE_REJECTED = re.compile(r"^ccsim: .*: [a-z_][a-z0-9_]*(\[\d+\])?(\.[a-z_][a-z0-9_]*(\[\d+\])?)*: .+$")


@FUZZ
@given(valid_scenario())
def test_generated_valid_scenarios_validate_and_run(data: dict[str, Any]) -> None:
    with scenario_file(to_toml(data)) as path:
        code, out, err = cli("validate", str(path))
        if code == 2:
            # Every parameter is valid alone; a model may still refuse a combination (DCTCP
            # without ECN...): one line naming the field, and run agrees with validate.
            assert ENGINE_REJECTED.match(err.strip()) and len(err.strip().splitlines()) == 1, err
            assert cli("run", str(path), "--quiet") == (2, "", err)
            return
        assert (code, err) == (0, ""), (err, to_toml(data))
        assert "ok (" in out
        code, out, err = cli("run", str(path), "--quiet")
        assert (code, out, err) == (0, "", ""), (err, to_toml(data))


# --- invalid scenarios: one field broken ---------------------------------------------------------

# Values wrong for every quantity (time, rate, size, bytes): a wrong unit, a sign, no unit,
# a non-number, another type, huge, NaN and infinities, nested junk.
BAD_QUANTITIES = [
    "10Mbs",
    "5 parsecs",
    "-5ms",
    "-10Mbps",
    "-100p",
    "abc",
    "",
    "1e400s",
    "nan",
    "inf",
    "10 10ms",
    True,
    [1, 2],
    {"a": {"b": {"c": [1, {"d": 2}]}}},
    -1,
    10**30,
    -(10**30),
    float("nan"),
    float("inf"),
    float("-inf"),
    "1e30Gbps",
    "0.5ns",
    "0.5B",
    "½ms",
]
BAD_PROBS = [1.5, -0.1, "150%", "x%", float("nan"), float("inf"), True, "0.1", [0.1]]
BAD_INTS = [-1, "three", 1.5, True, 10**30, float("nan"), [], {}]
JUNK = [{"x": [[[[{"y": None if False else 1}]]]]}, [[[]]], 3.5, "junk", [{"kind": {"kind": "droptail"}}]]


def _set(data: dict[str, Any], path: list[Any], value: Any) -> None:
    node = data
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value


def _text_path(path: list[Any]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


@st.composite
def invalid_scenario(draw: Any) -> tuple[str | bytes, str]:
    """(file content, the field path the error must name; '' for file-level problems)."""
    data = draw(valid_scenario())
    topo = data["topology"]
    candidates: list[tuple[list[Any], list[Any]]] = [
        (["simulation", "duration"], BAD_QUANTITIES + [0, "0s"]),
        (["simulation", "seed"], [-1, 2**64, "one", 1.5, True]),
        (["topology", "kind"], ["ring", "", 3, {"kind": "dumbbell"}]),
    ]
    if "bottleneck" in topo:
        candidates += [
            (["topology", "bottleneck", "rate"], BAD_QUANTITIES + [0, "0Mbps"]),
            (["topology", "bottleneck", "delay"], BAD_QUANTITIES),
            (["topology", "bottleneck", "loss"], BAD_PROBS),
            (
                ["topology", "bottleneck", "queue"],
                [
                    "fifo9",
                    7,
                    {"kind": "nope"},
                    {"limit": "10p"},
                    {"kind": "droptail", "limit": "10Mbs"},
                    {"kind": "droptail", "limt": "10p"},
                    {"kind": "codel", "interval": "0ns"},
                    {"kind": "fq_codel", "flows": 0},
                    {"kind": "red", "wq": 2.0},
                ]
                + JUNK,
            ),
        ]
    if data["flows"]:
        candidates += [
            (
                ["flows", 0, "cc"],
                ["bbr9", 1, {"kind": "cubic", "beta": 5.0}, {"kind": "cubic", "c": float("nan")}] + JUNK,
            ),
            (["flows", 0, "count"], [0] + BAD_INTS),
            (
                ["flows", 0, "transport"],
                [
                    "quic",
                    {"kind": "tcp", "mss": "0B"},
                    {"kind": "tcp", "mss": "1e9B"},
                    {"kind": "tcp", "profile": "windows95"},
                    {"kind": "udp", "profile": "linux"},
                ]
                + JUNK,
            ),
            (
                ["flows", 0, "app"],
                [
                    "torrent",
                    {"kind": "cbr"},
                    {"kind": "cbr", "rate": "0bps"},
                    {"kind": "periodic", "size": "1B", "period": "-1ms"},
                ]
                + JUNK,
            ),
            (["flows", 0, "start"], BAD_QUANTITIES + ["2s..1s", "..", "1ms..", "10min"]),
        ]
    if "trace" in data:
        candidates.append((["trace", "interval"], BAD_QUANTITIES + [0, "0ms"]))
        candidates.append((["trace", "events"], ["yes", 1, 0.5]))
    if "control" in data:
        candidates.append(
            (
                ["control", 0, "plant"],
                [
                    {"num": [1.0], "den": [float("nan"), 1.0]},
                    {"num": [1], "den": [1]},
                    {"num": [1, 2, 3], "den": [1, 2]},
                    "motor",
                ],
            )
        )
        candidates.append((["control", 0, "sampling_period"], BAD_QUANTITIES + [0]))
    kind = draw(st.sampled_from(["value", "unknown_key", "toml", "bytes"]))
    if kind == "value":
        path, values = draw(st.sampled_from(candidates))
        _set(data, path, draw(st.sampled_from(values)))
        return to_toml(data), _text_path(path)
    if kind == "unknown_key":
        path = draw(st.sampled_from([[], ["simulation"], ["topology"]] + ([["flows", 0]] if data["flows"] else [])))
        node = data
        for part in path:
            node = node[part]
        key = draw(st.sampled_from(["frobnicate", "Duration", "__class__", "../x", "ключ", "a.b"]))
        node[key] = draw(st.sampled_from([1, "x", {"y": 1}]))
        return to_toml(data), _text_path([*path, key])
    text = to_toml(data)
    if kind == "toml":
        # Junk at a line boundary (inside a string it could be valid text): every one of these
        # lines is invalid TOML there.
        lines = text.splitlines(keepends=True)
        cut = draw(st.integers(0, len(lines)))
        junk = draw(
            st.sampled_from(
                [
                    "[\n",
                    "= =\n",
                    "]]]\n",
                    '"unterminated\n',
                    "[simulation]\n[simulation]\n",
                    "x = 1\nx = 2\n",
                    "a = " + "[" * 3000 + "\n",
                    'key = "\\q"\n',
                ]
            )
        )
        mutated = "".join(lines[:cut]) + junk + "".join(lines[cut:])
        with pytest.raises((tomllib.TOMLDecodeError, RecursionError)):
            tomllib.loads(mutated)  # the generator's own promise: this is not TOML
        return mutated, ""
    raw = text.encode("utf-8")
    cut = draw(st.integers(0, len(raw)))
    return raw[:cut] + draw(st.sampled_from([b"\xff", b"\xc3\x28", b"\x80\x80", b"\xfe\xff"])) + raw[cut:], ""


def _check_bad_input(code: int, out: str, err: str, path: Path, field: str) -> None:
    assert code == 2, (code, err)
    assert "Traceback" not in out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"ccsim: {path}"), err
    if field:
        # The field path the error names is the broken field or inside it (a table's key).
        named = lines[0][len(f"ccsim: {path}") :]
        assert f": {field}" in named or f" {field}" in named, (field, err)


@settings(
    max_examples=250 * SCALE,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(invalid_scenario())
def test_generated_invalid_scenarios_exit_2_naming_file_and_field(case: tuple[str | bytes, str]) -> None:
    content, field = case
    with scenario_file(content) as path:
        for command in ("validate", "run"):
            code, out, err = cli(command, str(path), "--quiet") if command == "run" else cli(command, str(path))
            _check_bad_input(code, out, err, path, field)


@settings(
    max_examples=8,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.one_of(valid_scenario().map(lambda d: (to_toml(d), None)), invalid_scenario()))
def test_a_sample_in_a_subprocess_never_aborts_or_prints_a_traceback(case: tuple[str | bytes, str | None]) -> None:
    content, field = case
    with scenario_file(content) as path:
        proc = run_cli("run", str(path), "--quiet")
        assert "Traceback" not in proc.stdout + proc.stderr
        assert proc.returncode >= 0, f"killed by signal {-proc.returncode}: {proc.stderr}"
        if field is None:
            assert proc.returncode == 0, proc.stderr
        else:
            _check_bad_input(proc.returncode, proc.stdout, proc.stderr, path, field)


# --- specific hostile inputs that random generation reaches rarely ---------------------------------


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d["flows"][0].update(count=10**9), "flows[0].count"),
        (lambda d: d["topology"].update(pairs=[{}] * 1) or d["flows"][0].update(pair=10**18), "flows[0].pair"),
        (lambda d: d["flows"][0].update(cc={"kind": "vegas", "alpha": float("inf")}), "flows[0].cc.alpha"),
        (lambda d: d["flows"].append({"src": "s0", "dst": "r0", "app": {"kind": "reply", "to": 10**30}}), "flows[1]"),
        (lambda d: d.update(control=[{"controller": {"kind": "pid", "kp": float("nan")}}]), "control[0].controller.kp"),
        (
            lambda d: d.update(control=[{"reference": {"kind": "constant", "value": float("inf")}}]),
            "control[0].reference.value",
        ),
        (lambda d: d.update(control=[{"substeps": 10**12}]), "control[0].substeps"),
    ],
)
def test_specific_hostile_values_exit_2(mutate: Callable[[dict[str, Any]], Any], field: str) -> None:
    data = {
        "simulation": {"duration": "20ms"},
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {"rate": "10Mbps", "delay": "1ms"},
            "access": {"rate": "100Mbps"},
            "pairs": [{}],
        },
        "flows": [{"pair": 0, "cc": "newreno"}],
    }
    mutate(data)
    with scenario_file(to_toml(data)) as path:
        code, out, err = cli("validate", str(path))
        _check_bad_input(code, out, err, path, field)


def test_a_deeply_nested_file_exits_2() -> None:
    deep = "[simulation]\nduration = " + "[" * 100_000 + "]" * 100_000 + "\n"
    with scenario_file(deep) as path:
        code, out, err = cli("validate", str(path))
        _check_bad_input(code, out, err, path, "")


def test_a_directory_a_missing_file_a_pipe_or_an_endless_device_exits_2(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.toml")
    for target in (tmp_path, tmp_path / "missing.toml", tmp_path / "pipe.toml", Path("/dev/zero")):
        code, out, err = cli("validate", str(target))
        _check_bad_input(code, out, err, target, "")


# --- hostile values anywhere ---------------------------------------------------------------------

# Values no range admits, and strings built against parsers: beyond the float range, beyond
# int() of 4300 digits (tomllib's limit), beyond i64 and u64, blanks that make a backtracking
# pattern quadratic, megabytes of text, line breaks and NULs.
HOSTILE = [
    10**400,
    -(10**400),
    10**4000,
    RawToml("9" * 4400),
    2**64,
    -(2**63) - 1,
    1e308,
    -1e308,
    float("inf"),
    "1s" + " " * 100_000 + "x",
    " " * 100_000 + "5",
    "1" + "\t" * 100_000 + "ms%",
    "x" * 300_000,
    "5ms\n[x]\ny = 1",
    "\x00",
    "1" * 5000 + "ms",
    "9" * 400 + "e9999Gbps",
    "1e-400s",
    {"kind": "x" * 100_000},
    [[[[10**400]]]],
]
# Numbers only: what a model's numeric parameter is given half the time.
HOSTILE_NUMBERS = [v for v in HOSTILE if isinstance(v, (int, float))]
# The keys under which a scenario holds a model (a name or a table with kind): its family.
_MODEL_KEYS = ("queue", "cc", "transport", "app", "controller", "reference")


def _leaves(node: Any, path: list[Any]) -> list[list[Any]]:
    if isinstance(node, dict):
        return [leaf for k, v in node.items() for leaf in _leaves(v, [*path, k])] or [path]
    if isinstance(node, list):
        return [leaf for i, v in enumerate(node) for leaf in _leaves(v, [*path, i])] or [path]
    return [path]


def _model_tables(data: dict[str, Any]) -> list[tuple[str, list[Any]]]:
    """(family, path) of every place in ``data`` that holds a model (a name or a table)."""
    found = []
    for path in _leaves(data, []):
        for i, part in enumerate(path):
            if part in _MODEL_KEYS and (part, path[: i + 1]) not in found:
                found.append((part, path[: i + 1]))
    return found


@st.composite
def hostile_scenario(draw: Any) -> tuple[str, str]:
    """(file content, a description of the mutation): a valid scenario with one hostile value,
    at any leaf or as any declared parameter of a model it uses."""
    data = draw(valid_scenario())
    value = draw(st.sampled_from(HOSTILE))
    models = _model_tables(data)
    if models and draw(st.booleans()):
        family, path = draw(st.sampled_from(models))
        node = data
        for part in path[:-1]:
            node = node[part]
        table = node[path[-1]]
        if isinstance(table, str):
            table = node[path[-1]] = {"kind": table}
        model = REGISTRY.model(family, table["kind"])
        if not model.params:
            return to_toml(data), f"{family} {model.name} (no parameters)"
        param = draw(st.sampled_from(model.params))
        table[param.name] = draw(st.sampled_from(HOSTILE_NUMBERS)) if draw(st.booleans()) else value
        return to_toml(data), f"{_text_path(path)}.{param.name}"
    path = draw(st.sampled_from(_leaves(data, [])))
    _set(data, path, value)
    return to_toml(data), _text_path(path)


# Longest error line: errors quote a cut piece of a value, never all of it.
MAX_ERROR_LINE = 4100


@settings(
    max_examples=150 * SCALE,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(hostile_scenario())
def test_hostile_values_anywhere_exit_0_or_2_quickly_with_one_short_line(case: tuple[str, str]) -> None:
    import time

    content, where = case
    with scenario_file(content) as path:
        started = time.perf_counter()
        code, out, err = cli("validate", str(path))
        elapsed = time.perf_counter() - started
    assert code in (0, 2), (where, code, err[:500])
    assert elapsed < 5.0, (where, elapsed)  # linear parsers: a quadratic one takes tens of seconds here
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in err, (where, err[:1000])
        assert lines[0].startswith(f"ccsim: {path}"), (where, lines[0][:300])
        assert len(lines[0]) < MAX_ERROR_LINE, (where, len(lines[0]))


@settings(
    max_examples=6 * SCALE,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(hostile_scenario())
def test_hostile_values_in_a_subprocess_end_in_bounded_time_and_memory(case: tuple[str, str]) -> None:
    import subprocess
    import sys

    from conftest import PEAK_RSS_MIB, _cli_env

    content, where = case
    with scenario_file(content) as path, tempfile.TemporaryDirectory() as tmp:
        peak_file = Path(tmp) / "peak"
        # `python -m ccsim run FILE --quiet`, writing its own peak memory when it exits.
        code = (
            f"import atexit, runpy, sys; atexit.register(lambda: open({str(peak_file)!r}, 'w').write(str({PEAK_RSS_MIB}))); "
            f"sys.argv = ['ccsim', 'run', {str(path)!r}, '--quiet']; runpy.run_module('ccsim', run_name='__main__')"
        )
        try:
            proc = subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, env=_cli_env(), timeout=120
            )
        except subprocess.TimeoutExpired:
            pytest.fail(f"ccsim run did not end in 120 s ({where})")
        peak_mib = float(peak_file.read_text())
    assert proc.returncode in (0, 2), (where, proc.returncode, proc.stderr[:1000])
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) <= 1, (where, proc.stderr[:1000])
    assert len(proc.stderr) < MAX_ERROR_LINE, (where, len(proc.stderr))
    # The run's own peak resident memory: well below a gigabyte.
    assert peak_mib < 1024, (where, peak_mib)
