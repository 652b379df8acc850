"""The reference of the scenario file: the JSON Schema of ``ccsim schema`` accepts every scenario
of the repository and refuses what the parser refuses, docs/scenario.md is what the code
generates, and ``ccsim list KIND NAME`` shows one family or model in 80 columns.

The validation tests need the ``jsonschema`` package (the ``dev`` extra); without it they skip.
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Any

import ccsim
import pytest
from ccsim.errors import ScenarioError
from ccsim.scenario import fields, reference
from ccsim.scenario.registry import get_registry
from ccsim.scenario.written import ALGO_DEFS, PROCESSING_DEF, UNIT_FORMS
from conftest import ROOT, SCENARIOS, run_cli
from pydantic import TypeAdapter, ValidationError

SCHEMA = reference.json_schema()
DEFS = SCHEMA["$defs"]
FLAGSHIP = (SCENARIOS / "flagship.toml").read_text(encoding="utf-8")


def _validator(schema: dict[str, Any] | None = None) -> Any:
    jsonschema = pytest.importorskip("jsonschema")
    return jsonschema.Draft202012Validator(SCHEMA if schema is None else schema)


def _def_validator(name: str) -> Any:
    """A validator of one definition, with the others for its references."""
    return _validator({"$ref": f"#/$defs/{name}", "$defs": DEFS})


def _toml_files() -> list[Path]:
    # scenarios/papers is a link to the package's scenarios: followed.
    return sorted(
        Path(here, name)
        for here, _, names in os.walk(SCENARIOS, followlinks=True)
        for name in names
        if name.endswith(".toml")
    )


def _is_sweep(data: dict[str, Any]) -> bool:
    """A sweep file: it names its base scenario (docs/sweeps.md) and has no simulation."""
    return "scenario" in data and "simulation" not in data


# A file of queue tables the Piotrowska reproduction puts into its scenarios, by scenario and queue.
QUEUE_TABLES = SCENARIOS / "papers" / "piotrowska" / "queues.toml"


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    validator = _validator()
    validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert SCHEMA["additionalProperties"] is False


@pytest.mark.parametrize("path", _toml_files(), ids=lambda p: str(p.relative_to(SCENARIOS)))
def test_every_scenario_file_of_the_repository_validates(path: Path) -> None:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    if _is_sweep(data):
        assert not _validator().is_valid(data)  # a sweep is not a scenario
        return
    if path == QUEUE_TABLES:
        queue = _def_validator("QueueAlgo")
        for scenario, tables in data.items():
            for name, table in tables.items():
                assert not list(queue.iter_errors(table)), (scenario, name)
        return
    errors = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in _validator().iter_errors(data)]
    assert not errors, errors


def test_the_scenario_files_found_include_the_examples_and_the_papers() -> None:
    found = {str(p.relative_to(SCENARIOS)) for p in _toml_files()}
    assert {"flagship.toml", "examples/ncs_dumbbell.toml", "papers/dedu-ncs/star.toml"} <= found
    scenarios = [p for p in _toml_files() if not _is_sweep(tomllib.loads(p.read_text())) and p != QUEUE_TABLES]
    assert len(scenarios) >= 15


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("seed = 1\n", "seed = 1\nseeds = 3\n"),  # unknown key in a table
        ('description = "', 'title = "x"\ndescription = "'),  # unknown key at the top level
        ('duration = "60s"', 'duration = "60 parsecs"'),  # unknown unit
        ('duration = "60s"', "duration = 60"),  # a time without its unit
        ('duration = "60s"', 'duration = "60"'),
        ('rate = "10Mbps"', 'rate = "10MBps"'),  # bytes per second
        ('limit = "81p"', "limit = 81"),  # a buffer without its unit
        ('kind = "droptail"', 'kind = "fifo9"'),  # unknown queue discipline
        ('kind = "droptail", limit = "81p"', 'kind = "codel", limit = "81p", targte = "5ms"'),  # unknown parameter
        ('kind = "droptail", limit = "81p"', 'kind = "codel", target = "5"'),  # parameter without unit
        ('cc = "newreno"', 'cc = "tahoe9"'),  # unknown congestion control
        ('cc = "newreno"', 'cc = { kind = "cubic", beta = 2.0 }'),  # a number out of its range
        ('app = { kind = "bulk" }', "app = { size = 3 }"),  # a table without kind
        ('kind = "dumbbell"', 'kind = "ring"'),  # unknown topology
        ('start = "0s..1s"', 'start = "0s-1s"'),
        ("cwnd = true", 'cwnd = "yes"'),
        ("pair = 0", "pair = -1"),
        ('[simulation]\nduration = "60s"', '[simulation]\nwarmup = "1s"\n[simulationx]\nduration = "60s"'),
    ],
)
def test_wrong_files_fail_validation_as_they_fail_parsing(old: str, new: str) -> None:
    assert old in FLAGSHIP
    data = tomllib.loads(FLAGSHIP.replace(old, new, 1))
    assert not _validator().is_valid(data)
    with pytest.raises(ScenarioError):
        ccsim.from_dict(data)


# Values of each written form: the schema accepts a value exactly when the parser does. Left out
# are what a pattern cannot see and `ccsim validate` reports: fractions of a nanosecond or of a
# byte, values too large for the engine, percentages above 100, windows that end before they
# start, "-0ms".
SAMPLES: dict[str, list[Any]] = {
    "time": [
        "5ms",
        "5 ms",
        " 1.5s ",
        ".5s",
        "5.s",
        "1e3ms",
        "+2min",
        "20us",
        "3µs",
        "0",
        "0.0",
        0,
        0.0,
        5,
        "5",
        "-5ms",
        "5msx",
        "5 m s",
        "",
        "ms",
        "5 sec",
        True,
        "5ms..6ms",
        [1],
    ],
    "rate": ["10Mbps", "10 Mb/s", "1.5Gbps", "80kbps", "80Kbps", "0", 0, "10MBps", "10 B/s", "10", 10, "10mbps", False],
    "bytes": ["1500B", "1.5kB", "64KiB", "1 MB", 1500, 0, "1500", "1500b", "1500 bytes", -1, True, 1.5],
    "size": ["100p", "100 pkts", "100packets", "1pkt", "150000B", "64KiB", "100", 100, "100 q", "1.5 packet", True],
    "prob": [0, 1, 0.5, 1e-4, "1%", " 2.5 % ", "0%", "100%", 1.5, -0.1, "0.5", "1 %%", "%", True],
    "window": ["0s", "2s", "0s..1s", "0..1s", "1s .. 2s", 0, "1s..", "..2s", "1s-2s", "0s..1s..2s", 5, True],
}
TYPES: dict[str, Any] = {
    "time": fields.Time,
    "rate": fields.Rate,
    "bytes": fields.Bytes,
    "size": fields.Size,
    "prob": fields.Prob,
    "window": fields.StartWindow,
}


@pytest.mark.parametrize("kind", list(UNIT_FORMS))
def test_each_written_form_accepts_what_its_parser_accepts(kind: str) -> None:
    validator = _validator(UNIT_FORMS[kind].json_schema())
    adapter: TypeAdapter[Any] = TypeAdapter(TYPES[kind])
    for value in SAMPLES[kind]:
        try:
            adapter.validate_python(value)
            parsed = True
        except ValidationError:
            parsed = False
        assert validator.is_valid(value) == parsed, (kind, value, parsed)


@pytest.mark.parametrize("kind", list(UNIT_FORMS))
def test_the_units_table_shows_values_that_parse(kind: str) -> None:
    adapter: TypeAdapter[Any] = TypeAdapter(TYPES[kind])
    for text in reference.UNIT_EXAMPLES[kind]:
        adapter.validate_python(tomllib.loads(f"x = {text}")["x"])


def test_every_key_is_described_and_every_table_refuses_unknown_keys() -> None:
    objects = [("", SCHEMA)] + [(name, d) for name, d in DEFS.items() if d.get("type") == "object"]
    for name, table in objects:
        assert table["additionalProperties"] is False, name
        for key, prop in table["properties"].items():
            assert prop.get("description"), f"{name}.{key}"
    defaults = DEFS["Control"]["properties"]
    assert defaults["sampling_period"]["default"] == "14ms"  # written with its unit, as a file would
    assert 'Default: "14ms"' in defaults["sampling_period"]["description"]
    assert "ns, us, ms, s or min" in defaults["sampling_period"]["description"]


def test_algorithm_tables_offer_the_registered_models_and_their_parameters() -> None:
    registry = get_registry()
    for name, family in ALGO_DEFS.items():
        names = registry.names(family)
        bare, table = DEFS[name]["anyOf"]
        assert bare["enum"] == names and table["properties"]["kind"]["enum"] == names, family
        for model in registry.models(family):
            kind = DEFS[f"{family}.{model.name}"]
            assert set(kind["properties"]) - {"kind", "profile"} == {p.name for p in model.params}, model.name
    processing = registry.model("node", "processing")
    assert set(DEFS[PROCESSING_DEF]["properties"]) == {p.name for p in processing.params}


def _example_value(text: str) -> Any:
    """The TOML of an example as data: a table's keys, an inline table, a list element."""
    if text.lstrip().startswith("{"):
        return tomllib.loads(f"x = [{text}]")["x"][0]
    data = tomllib.loads(text)
    if len(data) == 1:
        ((_, value),) = data.items()
        return value[0] if isinstance(value, list) and value and isinstance(value[0], dict) else value
    return data


@pytest.mark.parametrize("key", list(reference.EXAMPLES))
def test_the_examples_are_the_repositorys_own_and_valid(key: str) -> None:
    source, text = reference.EXAMPLES[key]
    if source is not None:
        assert text in (ROOT / source).read_text(encoding="utf-8"), f"{source} no longer has this text"
    if key == "Scenario":
        assert _validator().is_valid(tomllib.loads(text) | tomllib.loads(FLAGSHIP))
        return
    value = _example_value(text)
    families = {family: name for name, family in ALGO_DEFS.items()} | {"node": PROCESSING_DEF}
    definition = families.get(key, key)
    if key in ("Dumbbell", "DaisyChain", "Explicit", "Star"):
        # The [topology] table, in a scenario of its own (the schema's and the parser's view).
        scenario = {"simulation": {"duration": "1s"}, "topology": value}
        assert _validator().is_valid(scenario)
        if key == "Explicit":
            ccsim.from_dict(scenario)
        return
    assert definition in DEFS, key
    errors = [e.message for e in _def_validator(definition).iter_errors(value)]
    assert not errors, errors


def test_docs_scenario_md_is_what_the_code_generates() -> None:
    text = (ROOT / "docs" / "scenario.md").read_text(encoding="utf-8")
    assert text == reference.markdown(), "docs/scenario.md is stale: ccsim schema --markdown --output docs/scenario.md"
    for heading in reference.TITLES.values():
        assert f"### {heading}\n" in text


def test_the_reference_names_every_key_of_every_table() -> None:
    text = reference.markdown()
    for name, table in DEFS.items():
        if name in reference.TITLES:
            for key in table["properties"]:
                assert f"| `{key}` |" in text, f"{name}.{key}"
    for key in SCHEMA["properties"]:
        assert f"| `{key}` |" in text, key


def test_ccsim_schema_prints_writes_and_refuses_an_unwritable_file(tmp_path: Path) -> None:
    proc = run_cli("schema")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == json.loads(json.dumps(SCHEMA))
    out = tmp_path / "ccsim-scenario.schema.json"
    proc = run_cli("schema", "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"wrote {out}\n"
    assert json.loads(out.read_text(encoding="utf-8")) == json.loads(json.dumps(SCHEMA))
    proc = run_cli("schema", "--markdown")
    assert proc.returncode == 0 and proc.stdout == (ROOT / "docs" / "scenario.md").read_text(encoding="utf-8")
    proc = run_cli("schema", "--output", str(tmp_path / "no" / "such" / "dir" / "x.json"))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "--output: cannot write" in proc.stderr and "Traceback" not in proc.stderr


def _assert_fits(stdout: str) -> None:
    lines = stdout.splitlines()
    assert lines and max(len(line) for line in lines) <= 80, max(lines, key=len)


def test_list_of_one_model_shows_it_alone_in_80_columns() -> None:
    proc = run_cli("list", "cc", "cubic")
    assert proc.returncode == 0, proc.stderr
    _assert_fits(proc.stdout)
    assert proc.stdout.startswith("cubic: ")
    for param in get_registry().model("cc", "cubic").params:
        assert f"│ {param.name} " in proc.stdout, param.name
    assert "newreno" not in proc.stdout and "Congestion controls" not in proc.stdout


@pytest.mark.parametrize("kind", ["queue", "queues", "Queues", "queue discipline"])
def test_list_of_a_family_accepts_its_names_and_plurals(kind: str) -> None:
    proc = run_cli("list", kind)
    assert proc.returncode == 0, proc.stderr
    _assert_fits(proc.stdout)
    assert proc.stdout.startswith("Queue disciplines (queue)")
    listed = {line.split(":")[0].strip() for line in proc.stdout.splitlines() if ": " in line and "│" not in line}
    assert listed >= set(get_registry().names("queue"))
    assert "newreno" not in listed and "Transports" not in proc.stdout


def test_the_whole_listing_fits_80_columns() -> None:
    proc = run_cli("list")
    assert proc.returncode == 0, proc.stderr
    _assert_fits(proc.stdout)


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["qdisc"], ["unknown kind 'qdisc'", "queue, cc, transport, app"]),
        (["cc", "tahoe9"], ["unknown congestion control 'tahoe9'", "registered: ", "cubic", "newreno"]),
        (["profile", "bsd"], ["unknown behaviour profile 'bsd'", "linux, rfc"]),
        (["cc", "--markdown"], ["--markdown prints every model"]),
    ],
)
def test_list_of_an_unknown_kind_or_name_exits_2_listing_what_exists(args: list[str], needles: list[str]) -> None:
    proc = run_cli("list", *args)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_list_json_of_a_kind_or_model_is_that_part_of_the_registry() -> None:
    everything = json.loads(run_cli("list", "--json").stdout)
    proc = run_cli("list", "transports", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [e for e in everything if e["family"] == "transport"]
    (tcp,) = json.loads(run_cli("list", "transport", "tcp", "--json").stdout)
    assert tcp["name"] == "tcp" and tcp["family"] == "transport"
