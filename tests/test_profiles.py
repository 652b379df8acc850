"""TCP behaviour profiles: ``transport = {kind = "tcp", profile = "linux"}`` compiles to the
Linux values listed by the engine, explicit values win, bad names are one-line errors, and
``ccsim list`` shows the table."""

from __future__ import annotations

import json

import ccsim
import pytest
from ccsim.scenario.registry import get_registry
from ccsim.scenario.schema import from_dict, load
from conftest import run_cli

MS = 1_000_000
SEC = 1_000_000_000

SCENARIO = """
[simulation]
duration = "3s"
warmup = "1s"

[topology]
kind = "dumbbell"
bottleneck = {{ rate = "10Mbps", delay = "5ms", queue = {{ kind = "droptail", limit = "100p" }} }}
access = {{ rate = "100Mbps" }}
pairs = [ {{ delay = "2ms" }}, {{ delay = "4ms" }} ]

[[flows]]
pair = 0
transport = {transport}
{cc}

[[flows]]
pair = 1
"""


def compiled(write_toml, transport: str, cc: str = "") -> list[dict]:
    return load(write_toml(SCENARIO.format(transport=transport, cc=cc))).to_config()["flows"]


def linux_settings() -> list:
    return list(get_registry().profile("linux").settings)


def test_linux_compiles_to_the_listed_values(write_toml) -> None:
    flow, plain = compiled(write_toml, '{ kind = "tcp", profile = "linux" }')
    listed = linux_settings()
    transport = {s.param: s.value for s in listed if s.target == "transport"}
    cc_params = {s.param: s.value for s in listed if s.target == "cc" and s.param != "kind"}
    assert flow["transport"] == {"kind": "tcp", "params": transport}
    assert flow["cc"] == {"kind": "cubic", "params": cc_params}
    # The values themselves, from the Linux sources (include/net/tcp.h, tcp_cubic.c).
    assert transport["init_cwnd"] == 10
    assert transport["min_rto"] == 200 * MS
    assert transport["delack_timeout"] == 40 * MS
    assert transport["ecn"] is True
    assert cc_params["beta"] == pytest.approx(717 / 1024)
    assert cc_params["hystart"] is True
    # A flow without a profile is "rfc": nothing added, the engine's NewReno.
    assert plain["transport"] == {"kind": "tcp", "params": {}} and plain["cc"] is None


def test_every_listed_value_has_a_source_and_a_declared_parameter() -> None:
    registry = get_registry()
    tcp = registry.model("transport", "tcp")
    for profile in registry.models("profile"):
        cc = next((s.value for s in profile.settings if s.target == "cc" and s.param == "kind"), None)
        for s in profile.settings:
            assert s.source, (profile.name, s.param)
            if s.target == "transport":
                assert tcp.param(s.param) is not None and tcp.param(s.param).kind == s.kind
            elif s.param != "kind":
                assert registry.model("cc", cc).param(s.param) is not None
    assert not registry.profile("rfc").settings


def test_explicit_values_win_over_the_profile(write_toml) -> None:
    flow, _ = compiled(
        write_toml,
        '{ kind = "tcp", profile = "linux", min_rto = "1s", ecn = false }',
        'cc = { kind = "cubic", beta = 0.5 }',
    )
    assert flow["transport"]["params"]["min_rto"] == SEC
    assert flow["transport"]["params"]["ecn"] is False
    assert flow["transport"]["params"]["delack_timeout"] == 40 * MS  # not given: the profile's
    # The chosen cubic keeps its beta and takes Linux's other CUBIC settings.
    assert flow["cc"]["kind"] == "cubic"
    assert flow["cc"]["params"]["beta"] == 0.5 and flow["cc"]["params"]["hystart"] is True
    # Another congestion control is kept as given, without CUBIC's parameters.
    flow, _ = compiled(write_toml, '{ kind = "tcp", profile = "linux" }', 'cc = "newreno"')
    assert flow["cc"] == {"kind": "newreno", "params": {}}
    assert flow["transport"]["params"]["min_rto"] == 200 * MS


def test_an_override_selects_a_profile(write_toml) -> None:
    path = write_toml(SCENARIO.format(transport='"tcp"', cc=""))
    config = load(path, ["flows[0].transport.profile=linux"]).to_config()
    assert config["flows"][0]["cc"]["kind"] == "cubic"
    assert config["flows"][1]["cc"] is None


@pytest.mark.parametrize(
    ("transport", "message"),
    [
        ('{ kind = "tcp", profile = "bsd" }', "unknown behaviour profile 'bsd'; registered: linux, rfc"),
        ('{ kind = "tcp", profile = 3 }', "expected the name of a behaviour profile"),
        ('{ kind = "udp", profile = "linux" }', "behaviour profiles apply to TCP flows; udp has none"),
    ],
)
def test_a_bad_profile_exits_2_naming_the_field(write_toml, transport: str, message: str) -> None:
    path = write_toml(SCENARIO.format(transport=transport, cc=""))
    proc = run_cli("validate", str(path))
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert f"{path}: flows[0].transport.profile: {message}" in lines[0], lines[0]


def test_list_shows_the_profile_table() -> None:
    proc = run_cli("list")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    start = lines.index("Behaviour profiles (profile)")
    section = lines[start:]
    assert any(line.startswith("linux: ") for line in section)
    assert any(line.lstrip().startswith("rfc: ") for line in section)
    for param, value, source in (
        ("min_rto", "200ms", "TCP_RTO_MIN"),
        ("init_cwnd", "10", "TCP_INIT_CWND"),
        ("delack_timeout", "40ms", "TCP_DELACK_MIN"),
        ("ecn", "true", "tcp_ecn"),
        ("kind", "cubic", "CONFIG_DEFAULT_TCP_CONG"),
        ("hystart", "true", "tcp_cubic.c"),
    ):
        row = next(line for line in section if f"│ {param} " in line)
        assert f"│ {value} " in row and source in row, row
    entries = json.loads(run_cli("list", "--json").stdout)
    linux = next(e for e in entries if e["family"] == "profile" and e["name"] == "linux")
    assert {s["param"] for s in linux["settings"]} >= {"min_rto", "init_cwnd", "delack_timeout", "ecn", "kind"}


def test_a_profile_survives_a_dump_and_runs() -> None:
    data = {
        "simulation": {"duration": "2s", "warmup": "500ms"},
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {"rate": "10Mbps", "delay": "5ms", "queue": {"kind": "droptail", "limit": "100p"}},
            "access": {"rate": "100Mbps"},
            "pairs": [{"delay": "2ms"}],
        },
        "flows": [{"pair": 0, "transport": {"kind": "tcp", "profile": "linux", "mss": "1000B"}}],
    }
    scenario = from_dict(data)
    dumped = scenario.model_dump()
    assert dumped["flows"][0]["transport"] == {"kind": "tcp", "profile": "linux", "mss": "1000B"}
    assert from_dict(dumped).to_config() == scenario.to_config()
    result = ccsim.run(scenario)
    flow = result.flows.iloc[0]
    assert flow["cc"] == "cubic" and flow["goodput_bps"] > 0
