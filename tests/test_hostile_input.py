"""Hostile input outside the scenario schema's usual mistakes: numbers beyond any range,
strings built to make a parser backtrack, output paths that cannot be written, executor
arguments out of range, values that carry line breaks, and misuse of the Python API. Each
must end in one line on stderr naming the file and the field, exit code 2, quickly; never a
traceback, a hang or a line the size of the value."""

from __future__ import annotations

import contextlib
import io
import os
import time
import warnings
from pathlib import Path
from typing import Any

import ccsim
import pytest
from ccsim.cli import main
from ccsim.errors import ScenarioError
from ccsim.scenario import units
from ccsim.scenario.registry import get_registry
from conftest import run_cli
from test_fuzz_scenarios import to_toml

BASE: dict[str, Any] = {
    "simulation": {"duration": "20ms"},
    "topology": {
        "kind": "dumbbell",
        "bottleneck": {"rate": "10Mbps", "delay": "1ms"},
        "access": {"rate": "100Mbps"},
        "pairs": [{}],
    },
    "flows": [{"pair": 0, "cc": "newreno"}],
}

# An error line quotes at most a short piece of any value (errors.py cuts them).
MAX_LINE = 4100


def cli(*args: str) -> tuple[int, str, str]:
    """``ccsim ARGS`` in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def assert_bad_input(code: int, err: str, *needles: str) -> None:
    assert code == 2, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert len(lines[0]) < MAX_LINE, len(lines[0])
    for needle in needles:
        assert needle.lower() in lines[0].lower(), lines[0]


def scenario(tmp_path: Path, data: dict[str, Any] | None = None, text: str | None = None) -> Path:
    path = tmp_path / "s.toml"
    path.write_text(text if text is not None else to_toml(data or BASE), encoding="utf-8")
    return path


def with_model(family: str, table: dict[str, Any]) -> dict[str, Any]:
    """BASE with ``table`` as the model of ``family``."""
    import copy

    data = copy.deepcopy(BASE)
    if family == "queue":
        data["topology"]["bottleneck"]["queue"] = table
    elif family in ("cc", "transport", "app"):
        data["flows"][0][family] = table
    else:  # controller, reference: a control loop's
        data["control"] = [{family: table}]
    return data


# --- numbers beyond any range ----------------------------------------------------------------------

# Where with_model puts each family's table, as errors name it.
FIELD_OF = {
    "queue": "topology.bottleneck.queue",
    "cc": "flows[0].cc",
    "transport": "flows[0].transport",
    "app": "flows[0].app",
    "controller": "control[0].controller",
    "reference": "control[0].reference",
}

NUMERIC_PARAMS = [
    (family, model.name, param.name)
    for family in ("queue", "cc", "transport", "app", "controller", "reference")
    for model in get_registry().models(family)
    for param in model.params
    if param.kind in ("int", "float", "time", "rate", "bytes", "size", "prob")
]


@pytest.mark.parametrize("value", [10**400, -(10**400)], ids=["1e400", "-1e400"])
def test_an_integer_beyond_the_float_range_in_any_model_parameter_exits_2(tmp_path: Path, value: int) -> None:
    # float() of such an integer raises OverflowError; each declared parameter is tried.
    for family, name, param in NUMERIC_PARAMS:
        path = scenario(tmp_path, with_model(family, {"kind": name, param: value}))
        code, _, err = cli("validate", str(path))
        assert_bad_input(code, err, str(path), f"{FIELD_OF[family]}.{param}: ")


def test_an_integer_literal_of_more_than_4300_digits_exits_2(tmp_path: Path) -> None:
    # tomllib converts integer literals with int(), which refuses more than 4300 digits with a
    # plain ValueError (not a TOMLDecodeError).
    path = scenario(tmp_path, text='[simulation]\nduration = "20ms"\nseed = ' + "9" * 5000 + "\n")
    code, _, err = cli("validate", str(path))
    assert_bad_input(code, err, str(path), "4300 digits")
    sweep_file = tmp_path / "sweep.toml"
    sweep_file.write_text('scenario = "s.toml"\nseeds = ' + "9" * 5000 + "\n", encoding="utf-8")
    code, _, err = cli("sweep", str(sweep_file), "--plan")
    assert_bad_input(code, err, str(sweep_file), "4300 digits")


def test_a_set_value_of_more_than_4300_digits_is_text_and_exits_2(tmp_path: Path) -> None:
    path = scenario(tmp_path)
    code, _, err = cli("validate", str(path), "--set", "flows.count=" + "9" * 5000)
    assert_bad_input(code, err, str(path), "flows[0].count", "expected an integer", "characters cut")


def test_huge_integers_from_python_are_scenario_errors() -> None:
    data = with_model("transport", {"kind": "tcp", "init_cwnd": 10**5000})
    with pytest.raises(ScenarioError, match=r"init_cwnd: an integer of about 5001 digits is too large"):
        ccsim.run(data)
    data = with_model("transport", {"kind": "tcp"})
    data["flows"][0]["count"] = 10**5000  # repr() of it raises ValueError: the message must not
    with pytest.raises(ScenarioError, match=r"flows\[0\]\.count"):
        ccsim.run(data)


# --- parsers stay linear ---------------------------------------------------------------------------

BLANKS = 40_000  # a quadratic parser takes seconds here (60 000 blanks took 27 s)


@pytest.mark.parametrize(
    "parse", [units.parse_time, units.parse_rate, units.parse_bytes, units.parse_size, units.parse_prob]
)
@pytest.mark.parametrize(
    "text",
    [
        "1s" + " " * BLANKS + "x",
        "1" + " " * BLANKS + "5",
        " " * BLANKS + "1 " + "s" * BLANKS,
        "1" * BLANKS + "." + " " * BLANKS + "%",
        "1" + "\t\n " * BLANKS + "x%",
    ],
)
def test_quantity_parsing_is_linear_in_the_length(parse: Any, text: str) -> None:
    started = time.perf_counter()
    with pytest.raises(units.UnitError) as info:
        parse(text)
    assert time.perf_counter() - started < 1.0
    assert len(str(info.value)) < 300


def test_the_parsers_still_read_what_they_read(tmp_path: Path) -> None:
    assert units.parse_time(" 1.5 ms ") == 1_500_000
    assert units.parse_time("1e3us") == 1_000_000
    assert units.parse_time(".5s") == 500_000_000
    assert units.parse_time("5\nms") == 5_000_000
    assert units.parse_rate("10 Mbps\t") == 10_000_000
    assert units.parse_size("100 p") == {"packets": 100}
    assert units.parse_prob(" 1.5 %") == 0.015
    for bad in ("1e5.x", "1.5.3s", "ms", "1 5ms", "+-1s"):
        with pytest.raises(units.UnitError):
            units.parse_time(bad)
    with pytest.raises(units.UnitError, match="bits"):
        units.parse_rate("10MBps  ")


def test_a_scenario_with_a_quantity_padded_by_blanks_fails_fast(tmp_path: Path) -> None:
    path = scenario(tmp_path, text='[simulation]\nduration = "1s' + " " * 60_000 + 'x"\n')
    started = time.perf_counter()
    code, _, err = cli("validate", str(path))
    assert time.perf_counter() - started < 3.0
    assert_bad_input(code, err, str(path), "simulation.duration")


def test_a_bad_value_is_quoted_in_part(tmp_path: Path) -> None:
    path = scenario(tmp_path, text='[simulation]\nduration = "' + "x" * 2_000_000 + '"\n')
    code, _, err = cli("validate", str(path))
    assert_bad_input(code, err, str(path), "simulation.duration", "...")
    assert len(err) < 400


# --- line breaks in values and keys ----------------------------------------------------------------


@pytest.mark.parametrize(
    "override",
    ["flows.cc=cubic\nx", "simulation.dur\nation=5ms", "topology.kind=[\n]", 'simulation.duration="""a\nb"""'],
)
def test_a_set_value_with_a_line_break_gives_one_line(tmp_path: Path, override: str) -> None:
    path = scenario(tmp_path)
    code, _, err = cli("validate", str(path), "--set", override)
    assert_bad_input(code, err, str(path))
    assert "\\n" in err


def test_a_scenario_file_name_with_a_line_break_gives_one_line(tmp_path: Path) -> None:
    path = tmp_path / "two\nlines.toml"
    path.write_text("[simulation]\nduration = 5\n", encoding="utf-8")
    code, _, err = cli("validate", str(path))
    assert code == 2 and len(err.strip().splitlines()) == 1, err


# --- output directories ----------------------------------------------------------------------------


@pytest.fixture
def unwritable(tmp_path: Path) -> Path:
    """A directory this process cannot create anything in."""
    if os.geteuid() != 0:
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o555)
        yield locked
        locked.chmod(0o755)
        return
    # root writes anywhere a mode allows; sysfs refuses new entries even to root.
    probe = Path("/sys/ccsim-write-probe")
    try:
        probe.mkdir()
    except PermissionError:
        yield Path("/sys")
        return
    except OSError:
        pass
    else:  # pragma: no cover - a writable /sys
        probe.rmdir()
    pytest.skip("no directory refuses writes to this user")


@pytest.fixture
def sweep_file(tmp_path: Path) -> Path:
    scenario(tmp_path)
    path = tmp_path / "sweep.toml"
    path.write_text('scenario = "s.toml"\n[grid]\n"flows.cc" = ["newreno", "cubic"]\n', encoding="utf-8")
    return path


def commands_with_out(tmp_path: Path, sweep_file: Path, out: str) -> list[list[str]]:
    s = str(tmp_path / "s.toml")
    return [
        ["run", s, "--out", out, "--quiet"],
        ["sweep", str(sweep_file), "--out", out, "--jobs", "1", "--quiet"],
        [
            "compare",
            s,
            "--cc",
            "newreno",
            "--queue",
            "droptail",
            "--seeds",
            "1",
            "--out",
            out,
            "--jobs",
            "1",
            "--quiet",
        ],
        ["smc", s, "-q", "Pr[<=0.01](<> flow.0.cwnd > 1)", "--runs", "2", "--jobs", "1", "--out", out, "--quiet"],
        ["reproduce", "dedu-ncs", "--quick", "--jobs", "1", "--out", out],
    ]


def test_out_naming_an_existing_file_exits_2_before_any_run(tmp_path: Path, sweep_file: Path) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("keep me", encoding="utf-8")
    for args in commands_with_out(tmp_path, sweep_file, str(a_file)):
        code, _, err = cli(*args)
        assert_bad_input(code, err, "--out", "not a directory")
    # A file on the way (OUT/x with OUT a file) is refused the same way.
    code, _, err = cli("sweep", str(sweep_file), "--out", str(a_file / "x"), "--quiet")
    assert_bad_input(code, err, "--out", "cannot write results")
    assert a_file.read_text(encoding="utf-8") == "keep me"


def test_out_in_a_place_that_refuses_writes_exits_2(tmp_path: Path, sweep_file: Path, unwritable: Path) -> None:
    for target in (unwritable, unwritable / "sub"):
        for args in commands_with_out(tmp_path, sweep_file, str(target)):
            code, _, err = cli(*args)
            assert_bad_input(code, err, "--out", "cannot write results")


@pytest.mark.parametrize("command", ["sweep", "compare", "smc", "reproduce"])
def test_jobs_beyond_any_machine_exits_2(tmp_path: Path, sweep_file: Path, command: str) -> None:
    args = next(a for a in commands_with_out(tmp_path, sweep_file, str(tmp_path / "out")) if a[0] == command)
    args = [a for i, a in enumerate(args) if a != "--jobs" and (i == 0 or args[i - 1] != "--jobs")]
    for jobs in ("99999999999999999999", "100000"):
        code, _, err = cli(*args, "--jobs", jobs)
        assert_bad_input(code, err, "--jobs", "at most")
    assert not (tmp_path / "out").exists()


def test_a_scheduler_that_is_no_address_exits_2_at_once(sweep_file: Path, tmp_path: Path) -> None:
    # A subprocess: the half-made Dask client's finaliser used to print a second traceback, 20 s
    # after the first, when the interpreter collected it.
    for address in ("not a url", "tcp://127.0.0.1", "foo://x:1", "tcp://h:0", "tls://127.0.0.1:1", "inproc://x"):
        started = time.monotonic()
        proc = run_cli("sweep", str(sweep_file), "--out", str(tmp_path / "out"), "--scheduler", address)
        assert time.monotonic() - started < 15
        assert_bad_input(proc.returncode, proc.stderr, "--scheduler", "tcp://10.0.0.5:8786")


@pytest.mark.parametrize(
    "query",
    ["Pr[<=1e400](<> flow.0.cwnd > 1)", "Pr[<=1e300](<> flow.0.cwnd > 1)", "Pr[<=0.01](<> flow.0.cwnd > 1e999)"],
)
def test_an_smc_query_with_numbers_beyond_range_exits_2(tmp_path: Path, query: str) -> None:
    path = scenario(tmp_path)
    code, _, err = cli("smc", str(path), "-q", query, "--runs", "2", "--jobs", "1")
    assert_bad_input(code, err, "--query", f"column {query.index('1e') + 1}")


# --- what a second run leaves in the same directory ------------------------------------------------


def test_a_second_run_into_the_same_out_leaves_only_its_own_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with_loop = dict(BASE, control=[{"sampling_period": "5ms"}], trace={"interval": "5ms"})
    assert cli("run", str(scenario(tmp_path, with_loop)), "--out", str(out), "--quiet")[0] == 0
    first = {p.name for p in out.iterdir()}
    assert {"control.parquet", "control_traces.parquet", "control.png"} <= first
    (out / "notes.txt").write_text("mine", encoding="utf-8")  # not ccsim's: left alone
    assert cli("run", str(scenario(tmp_path, BASE)), "--out", str(out), "--quiet")[0] == 0
    second = {p.name for p in out.iterdir()}
    assert not second & {"control.parquet", "control_traces.parquet", "control.png", "cwnd.png", "queue_length.png"}, (
        second
    )
    assert {"flows.parquet", "summary.json", "goodput.png", "notes.txt"} <= second


def test_names_with_control_characters_plot_without_warnings(tmp_path: Path) -> None:
    data = dict(BASE, trace={"interval": "5ms"})
    data["flows"] = [{"pair": 0, "name": "nul\x00bell\x07", "group": "line\nbreak"}, {"pair": 0, "name": "中文"}]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code, _, err = cli("run", str(scenario(tmp_path, data)), "--out", str(tmp_path / "out"), "--quiet")
    assert (code, err) == (0, "")
    assert not [str(w.message) for w in caught if "Glyph" in str(w.message)]


# --- the Python API --------------------------------------------------------------------------------


@pytest.mark.parametrize("overrides", [[1], "simulation.duration=1s", [b"simulation.duration=1s"], [None]])
def test_run_with_overrides_that_are_not_strings_is_a_scenario_error(tmp_path: Path, overrides: Any) -> None:
    with pytest.raises(ScenarioError, match="overrides: expected"):
        ccsim.run(scenario(tmp_path), overrides=overrides)


def test_replay_of_a_file_that_is_no_replay_is_a_scenario_error(tmp_path: Path) -> None:
    listing = tmp_path / "list.json"
    listing.write_text("[1, 2]", encoding="utf-8")
    for path, needle in (
        (Path("/etc/passwd"), "not a replay file"),
        (tmp_path / "missing.json", "no such file"),
        (tmp_path, "cannot read"),
        (listing, "not a replay file"),
    ):
        with pytest.raises(ScenarioError, match=needle):
            ccsim.replay(path)


# --- sweep files -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ('[set]\n"simulation.frobnicate" = 3\n', "set.simulation.frobnicate"),
        ('[set]\n"simulation..x" = 3\n', "set.simulation..x"),
        ('[set]\n"flows[5].cc" = "cubic"\n', "set.flows[5].cc"),
        ('[set]\n"simulation.duration" = "5 parsecs"\n', "set.simulation.duration"),
        # Refused by the engine's checks, which run on every point before anything runs.
        ('[set]\n"simulation.warmup" = "1h"\n', "set.simulation.warmup"),
        ('[set]\n"metrics.jain_flows" = [0, 99]\n', "set.metrics.jain_flows"),
        ('[grid]\n"flows.ccc" = ["newreno", "cubic"]\n', "grid.flows.ccc"),
        ('[[points]]\n"flows.cc.bogus" = 1\n', "points[0].flows.cc.bogus"),
    ],
)
def test_a_bad_key_or_set_value_of_a_sweep_exits_2_naming_the_sweep_file(tmp_path: Path, text: str, field: str) -> None:
    scenario(tmp_path)
    path = tmp_path / "sweep.toml"
    path.write_text('scenario = "s.toml"\n' + text, encoding="utf-8")
    for extra in ([], ["--plan"]):
        code, _, err = cli("sweep", str(path), "--out", str(tmp_path / "out"), "--jobs", "1", "--quiet", *extra)
        assert_bad_input(code, err, f"ccsim: {path}: {field}: ")
    assert not (tmp_path / "out" / "runs").exists() or not any((tmp_path / "out" / "runs").iterdir())


def test_a_bad_set_of_a_sweep_on_the_command_line_names_it(tmp_path: Path, sweep_file: Path) -> None:
    code, _, err = cli(
        "sweep", str(sweep_file), "--out", str(tmp_path / "out"), "--quiet", "--set", "simulation.frobnicate=1"
    )
    assert_bad_input(code, err, f"{sweep_file}: --set simulation.frobnicate: unknown field")


def test_a_bad_grid_value_still_fails_only_its_point(tmp_path: Path) -> None:
    scenario(tmp_path)
    path = tmp_path / "sweep.toml"
    path.write_text('scenario = "s.toml"\n[grid]\n"simulation.duration" = ["20ms", "5 parsecs"]\n', encoding="utf-8")
    code, _, err = cli("sweep", str(path), "--out", str(tmp_path / "out"), "--jobs", "1", "--quiet")
    assert code == 1 and "1 run failed" in err, err
