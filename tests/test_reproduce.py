"""`ccsim reproduce`: the framework (resume, CLI errors) and each paper's --quick form."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from ccsim.experiments import reproduce


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ccsim", "reproduce", *args], capture_output=True, text=True, timeout=600
    )


def test_list_and_bad_arguments() -> None:
    proc = run_cli("--list")
    assert proc.returncode == 0 and "dedu-ncs" in proc.stdout
    proc = run_cli("nosuchpaper")
    assert proc.returncode == 2
    assert "unknown paper 'nosuchpaper'" in proc.stderr and "dedu-ncs" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert run_cli().returncode == 2


def test_dedu_quick_writes_table_i_and_figures_and_resumes(tmp_path: Path) -> None:
    proc = run_cli("dedu-ncs", "--quick", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "dedu-ncs"
    for name in ("report.md", "table_1.csv", "table_1.md", "figures_2_5.png"):
        assert (out / name).exists(), name
    table = pd.read_csv(out / "table_1.csv")
    assert len(table) == 12
    ours = [c for c in table.columns if c not in ("protocol", "sensor") and not c.startswith("paper_")]
    assert not table[ours].isna().any().any()
    # The counts add up, as in the paper's Table I (plus what is still in flight at the end).
    assert (table.generated >= table.lost_on_sensor + table.lost_on_network + table.received).all()
    # Findings the paper states that a 60 s run already shows: UDP mutes one sensor and loses
    # on the network; TCP loses nothing on the network, only on the sensor.
    udp, tcp = table[table.protocol == "UDP"], table[table.protocol == "TCP"]
    assert udp.received.min() < 0.1 * udp.received.max()
    assert udp.lost_on_network.sum() > 0 and (udp.lost_on_sensor == 0).all()
    assert (tcp.lost_on_network == 0).all() and (tcp.lost_on_sensor > 0).all()
    # Its provenance: the command, the engine build, each run's seed and configuration.
    record = json.loads((out / "provenance.json").read_text())
    assert record["paper"] == "dedu-ncs" and record["quick"] is True and len(record["runs"]) == 4
    assert record["engine_sha256"] and "reproduce dedu-ncs --quick" in record["rerun"]
    saved = json.loads(next((out / "runs-quick").glob("*.json")).read_text())
    digests = {r["config_sha256"] for r in record["runs"].values()}
    assert hashlib.sha256(json.dumps(saved["config"], sort_keys=True).encode()).hexdigest() in digests
    # Finished runs are reused: a second call simulates nothing.
    report = reproduce.reproduce("dedu-ncs", out, quick=True, progress=False)
    assert "4 runs, 0 simulated now" in report.read_text()
    # ... but not a run whose saved identity (scenario, seed, engine build) differs: as after a
    # rebuilt engine or an edited scenario, it is simulated again, the others are reused.
    saved_files = sorted((out / "runs-quick").glob("*.json"))
    stale = json.loads(saved_files[0].read_text())
    stale["identity"] = "an older engine"
    saved_files[0].write_text(json.dumps(stale))
    saved_files[1].write_text("{truncated")
    report = reproduce.reproduce("dedu-ncs", out, quick=True, progress=False)
    assert "4 runs, 2 simulated now" in report.read_text()
    assert json.loads(saved_files[0].read_text())["identity"] != "an older engine"


def test_unknown_paper_is_a_key_error() -> None:
    with pytest.raises(KeyError, match="dedu-ncs"):
        reproduce.paper("nope")
