"""The ``ccsim`` command, run as a user runs it (a subprocess): exit codes, one-line errors
that name file and field, outputs of a run, the model listing."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from conftest import SCENARIOS, run_cli

FLAGSHIP = str(SCENARIOS / "flagship.toml")
# The flagship scenario, shortened so that each end-to-end run takes a fraction of a second.
SHORT = ["--set", "simulation.duration=6s", "--set", "simulation.warmup=1s"]

GOOD = """
[simulation]
duration = "3s"
warmup = "1s"

[topology]
kind = "explicit"
nodes = [ { name = "h1", kind = "host" }, { name = "r", kind = "router" }, { name = "h2", kind = "host" } ]
links = [
  { a = "h1", b = "r", rate = "100Mbps", delay = "1ms" },
  { a = "r", b = "h2", rate = "10Mbps", delay = "5ms" },
]
bottleneck_queue = "r->h2"

[[flows]]
src = "h1"
dst = "h2"
cc = "newreno"
"""


def assert_one_line_error(proc, *needles: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_help_lists_the_commands() -> None:
    proc = run_cli("--help")
    assert proc.returncode == 0
    for command in ("run", "validate", "list"):
        assert f"    {command} " in proc.stdout


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["frobnicate"], ["invalid choice: 'frobnicate'", "'run'"]),
        ([], ["a command is required"]),
        (["run"], ["FILE.toml"]),
        (["run", FLAGSHIP, "--seed", "-3"], ["--seed", "non-negative integer"]),
        (["run", FLAGSHIP, "--colour"], ["unrecognized arguments: --colour"]),
        (["run", "no/such/file.toml"], ["no/such/file.toml: no such file"]),
    ],
)
def test_bad_arguments_exit_2_with_one_line(args: list[str], needles: list[str]) -> None:
    assert_one_line_error(run_cli(*args), *needles)


@pytest.mark.parametrize(
    ("old", "new", "field", "allowed"),
    [
        # unknown field
        (
            'bottleneck_queue = "r->h2"',
            'bottleneck_queue = "r->h2"\nspeed = 3',
            "topology.speed",
            "allowed: kind, nodes, links, bottleneck_queue",
        ),
        # negative rate
        ('rate = "10Mbps"', 'rate = "-10Mbps"', "topology.links[1].rate", "must not be negative"),
        # unknown algorithm name
        ('cc = "newreno"', 'cc = "tahoe9"', "flows[0].cc", "unknown congestion control 'tahoe9'; registered: "),
        # link to a missing node
        ('a = "r", b = "h2"', 'a = "r", b = "h3"', "topology.links[1].b", "nodes: h1, r, h2"),
        # a quantity without its unit
        ('duration = "3s"', "duration = 3", "simulation.duration", "ns, us, ms, s or min"),
    ],
)
@pytest.mark.parametrize("command", ["run", "validate"])
def test_malformed_scenarios_exit_2_naming_file_and_field(
    write_toml, command: str, old: str, new: str, field: str, allowed: str
) -> None:
    assert old in GOOD
    path = write_toml(GOOD.replace(old, new, 1))
    assert_one_line_error(run_cli(command, str(path)), f"{path}: {field}: ", allowed)


def test_a_bad_override_exits_2_naming_the_key() -> None:
    proc = run_cli("validate", FLAGSHIP, "--set", "topology.bottleneck.queue.kind=fifo9")
    assert_one_line_error(proc, "topology.bottleneck.queue.kind", "unknown queue discipline 'fifo9'", "registered:")
    proc = run_cli("run", FLAGSHIP, "--set", "topology.bottleneck.rate")
    assert_one_line_error(proc, "--set", "expected KEY=VALUE")


def test_invalid_toml_exits_2(write_toml) -> None:
    path = write_toml("[simulation\n")
    assert_one_line_error(run_cli("validate", str(path)), str(path), "not valid TOML")


def test_configurations_the_engine_rejects_exit_2(write_toml) -> None:
    # Valid as a file, but there is no path from h1 to h3: only the engine's routing knows.
    text = GOOD.replace(
        '{ name = "h2", kind = "host" } ]', '{ name = "h2", kind = "host" }, { name = "h3", kind = "host" } ]'
    )
    path = write_toml(text.replace('dst = "h2"', 'dst = "h3"'))
    for command in ("run", "validate"):
        assert_one_line_error(run_cli(command, str(path)), str(path), "flows[0]: no route from 'h1' to 'h3'")


def test_validate_accepts_a_good_file(write_toml) -> None:
    proc = run_cli("validate", str(write_toml(GOOD)))
    assert proc.returncode == 0, proc.stderr
    assert "ok (3 nodes, 2 links, 1 flows)" in proc.stdout


def test_list_shows_every_model_with_human_defaults() -> None:
    proc = run_cli("list")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    droptail = next(i for i, line in enumerate(lines) if line.lstrip().startswith("droptail: "))
    limit = next(line for line in lines[droptail:] if "│ limit " in line)
    assert "1000p" in limit and "packets (p) or bytes (B)" in limit
    for name in ("droptail", "newreno", "tcp", "udp", "bulk", "transfer", "periodic", "cbr"):
        assert any(line.lstrip().startswith(f"{name}: ") for line in lines), name
    min_rto = next(line for line in lines if "│ min_rto " in line)
    assert "time (ns, us, ms, s, min)" in min_rto


def test_list_json_is_the_engines_registry() -> None:
    proc = run_cli("list", "--json")
    assert proc.returncode == 0
    entries = json.loads(proc.stdout)
    droptail = next(e for e in entries if e["name"] == "droptail")
    assert droptail["family"] == "queue" and droptail["params"][0]["default"] == {"packets": 1000}


def test_run_prints_a_summary_and_writes_every_output(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = run_cli("run", FLAGSHIP, *SHORT, "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "Jain index" in proc.stdout and "A->B" in proc.stdout and "newreno" in proc.stdout
    for name in (
        "flows.parquet",
        "queues.parquet",
        "traces.parquet",
        "summary.json",
        "queue_length.png",
        "cwnd.png",
        "goodput.png",
    ):
        assert (out / name).stat().st_size > 0, name
    flows = pd.read_parquet(out / "flows.parquet")
    assert list(flows["id"]) == [0, 1, 2, 3]
    traces = pd.read_parquet(out / "traces.parquet")
    assert {"time_s", "queue.A->B.len_pkts", "flow.0.cwnd_bytes"} <= set(traces.columns)
    assert (out / "queue_length.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


HOST_QUEUE_OVERFLOWS = """
[simulation]
duration = "3s"

[topology]
kind = "explicit"
nodes = [ { name = "h1", kind = "host" }, { name = "r", kind = "router" }, { name = "h2", kind = "host" } ]
links = [
  { a = "h1", b = "r", rate = "100Mbps", delay = "1ms" },
  { a = "r", b = "h2", rate = "10Mbps", delay = "5ms", loss = 0.05, reverse = { rate = "1Mbps", queue = { kind = "droptail", limit = "20p" } } },
]

[[flows]]
src = "h1"
dst = "h2"
transport = "udp"
app = { kind = "cbr", rate = "5Mbps" }

[[flows]]
src = "h2"
dst = "h1"
transport = "udp"
app = { kind = "cbr", rate = "2Mbps" }
"""


def test_the_summary_shows_a_host_queue_that_drops(write_toml) -> None:
    proc = run_cli("run", str(write_toml(HOST_QUEUE_OVERFLOWS)))
    assert proc.returncode == 0, proc.stderr
    rows = {line.split("│")[1].strip(): line for line in proc.stdout.splitlines() if line.count("│") > 8}
    # h2's own access queue gets 2 Mbit/s for a 1 Mbit/s link: it drops about half.
    assert "h2->r" in rows, proc.stdout
    drop_percent = float(rows["h2->r"].split("│")[9])
    assert 40 < drop_percent < 60
    # The router's queues held at most the packet in service and are summed up below.
    assert "r->h2" not in rows and "r->h1" not in rows
    assert "other queues never held more than one packet" in proc.stdout


def test_quiet_prints_nothing() -> None:
    proc = run_cli("run", FLAGSHIP, *SHORT, "--quiet")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_same_seed_gives_identical_summary_and_different_seeds_differ(tmp_path: Path) -> None:
    summaries = {}
    for label, seed in (("a", "5"), ("b", "5"), ("c", "6")):
        proc = run_cli("run", FLAGSHIP, *SHORT, "--seed", seed, "--out", str(tmp_path / label), "--quiet")
        assert proc.returncode == 0, proc.stderr
        summaries[label] = (tmp_path / label / "summary.json").read_text()
    assert summaries["a"] == summaries["b"]
    assert json.loads(summaries["a"])["seed"] == 5
    # Start times are drawn from 0s..1s, so another seed changes when flows start and what they get.
    starts = {label: [f["start_s"] for f in json.loads(text)["flows"]] for label, text in summaries.items()}
    assert starts["a"] != starts["c"]
    assert json.loads(summaries["a"])["flows"] != json.loads(summaries["c"])["flows"]


def test_an_unwritable_out_dir_exits_2(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    proc = run_cli("run", FLAGSHIP, *SHORT, "--quiet", "--out", str(blocker / "sub"))
    assert_one_line_error(proc, "--out", "cannot write results")


def test_an_output_folder_records_what_it_takes_to_rerun_it(tmp_path: Path) -> None:
    """``ccsim run --out`` writes provenance.json (version, engine fingerprint, command line,
    overrides, seed, the resolved scenario) and the scenario file as given; the rerun command
    it records, run from that folder, gives the same summary byte for byte."""
    from ccsim.engine.provenance import engine_fingerprint

    out = tmp_path / "out"
    sets = ["--set", "simulation.duration=3s", "--set", "simulation.warmup=1s"]
    proc = run_cli("run", FLAGSHIP, "--seed", "7", "--out", str(out), "--quiet", *sets)
    assert proc.returncode == 0, proc.stderr
    record = json.loads((out / "provenance.json").read_text(encoding="utf-8"))
    assert record["seed"] == 7 and record["overrides"] == ["simulation.duration=3s", "simulation.warmup=1s"]
    assert record["engine_sha256"] == engine_fingerprint()
    assert record["argv"][:3] == ["ccsim", "run", FLAGSHIP] and "--seed" in record["argv"]
    assert record["scenario"]["simulation"]["duration"] == "3s"  # resolved: after --set
    assert (out / "scenario.toml").read_text(encoding="utf-8") == Path(FLAGSHIP).read_text(encoding="utf-8")
    again = tmp_path / "again"
    rerun = record["rerun"].split()
    assert rerun[:3] == ["ccsim", "run", "scenario.toml"]
    proc = run_cli(*rerun[1:], "--out", str(again), "--quiet", cwd=out)
    assert proc.returncode == 0, proc.stderr
    assert (again / "summary.json").read_bytes() == (out / "summary.json").read_bytes()
