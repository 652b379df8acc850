"""A run's directory under ``OUT/runs/KEY``: what a run leaves there (written whole, through a
temporary directory) and the checks a rerun makes before it trusts one."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

from ...errors import show
from .expansion import RunSpec

RUNS_DIR = "runs"
RUN_FILE = "run.json"
TIMING_FILE = "timing.json"

# --- what a run leaves ---------------------------------------------------------------------------


def summary_metrics(raw: dict[str, Any]) -> dict[str, Any]:
    """The flat summary of one run (a row of the results table).

    - ``events``, ``duration_s``, ``jain_index``, ``utilization`` (bottleneck), ``flows``;
    - over the ``[[flows]]`` (control-loop message flows excluded): ``goodput_bps_total``,
      ``goodput_bps_mean``, ``goodput_bps_min``, ``goodput_bps_max``, ``retransmissions``,
      ``timeouts``, ``rtt_mean_s`` (mean of the flows' mean RTTs), ``delay_mean_s``;
    - per flow group (when flows have a ``group``): ``group.G.goodput_bps`` (sum);
    - the bottleneck queue: ``bottleneck.mean_len_pkts``, ``.sd_len_pkts``, ``.max_len_pkts``,
      ``.mean_sojourn_s``, ``.p99_sojourn_s``, ``.drops``, ``.marks``, ``.drop_ratio``, ``.utilization``;
    - per control loop: ``control.NAME.itae``, ``.itae_sum``, ``.iae``, ``.ise``,
      ``.samples_lost``, ``.controls_lost``, ``.actuation_delay_mean_s``.

    Per-flow and per-queue detail stays in each run's directory (``flows_table`` joins it).
    """
    row: dict[str, Any] = {
        "events": raw.get("events"),
        "duration_s": raw.get("duration_s"),
        "jain_index": raw.get("jain_index"),
        "utilization": raw.get("utilization"),
    }
    flows = [f for f in raw.get("flows", []) if f.get("app") != "ncs"]
    row["flows"] = len(flows)
    goodputs = [float(f["goodput_bps"]) for f in flows]
    row["goodput_bps_total"] = sum(goodputs) if goodputs else None
    row["goodput_bps_mean"] = sum(goodputs) / len(goodputs) if goodputs else None
    row["goodput_bps_min"] = min(goodputs) if goodputs else None
    row["goodput_bps_max"] = max(goodputs) if goodputs else None
    row["retransmissions"] = sum(int(f.get("retransmissions") or 0) for f in flows)
    row["timeouts"] = sum(int(f.get("timeouts") or 0) for f in flows)
    rtts = [f["rtt_mean_s"] for f in flows if f.get("rtt_mean_s") is not None]
    row["rtt_mean_s"] = sum(rtts) / len(rtts) if rtts else None
    delays = [f["delay_mean_s"] for f in flows if f.get("delay_mean_s") is not None]
    row["delay_mean_s"] = sum(delays) / len(delays) if delays else None
    groups: dict[str, float] = {}
    for f in flows:
        if f.get("group"):
            groups[f["group"]] = groups.get(f["group"], 0.0) + float(f["goodput_bps"])
    for name, total in groups.items():
        row[f"group.{name}.goodput_bps"] = total
    bottleneck = raw.get("bottleneck")
    queue = next((q for q in raw.get("queues", []) if q["name"] == bottleneck), None)
    if queue is not None:
        for name in (
            "mean_len_pkts",
            "sd_len_pkts",
            "max_len_pkts",
            "mean_sojourn_s",
            "p99_sojourn_s",
            "drops",
            "marks",
            "drop_ratio",
            "utilization",
        ):
            row[f"bottleneck.{name}"] = queue.get(name)
    for loop in raw.get("control") or []:
        for name in ("itae", "itae_sum", "iae", "ise", "samples_lost", "controls_lost", "actuation_delay_mean_s"):
            row[f"control.{loop['name']}.{name}"] = loop.get(name)
    return row


def _write_run(runs_dir: Path, run: RunSpec, outcome: dict[str, Any] | None, error: str | None) -> dict[str, Any]:
    """Write run ``run`` atomically (a temporary directory renamed into place); its record."""
    from ...results.result import Result

    final = runs_dir / run.key
    tmp = runs_dir / f".tmp-{run.key}-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    record: dict[str, Any] = {
        "key": run.key,
        "point": run.point,
        "replicate": run.replicate,
        "seed": run.seed,
        "params": run.params,
        "status": "failed" if error else "ok",
        "error": error,
    }
    if outcome is not None and error is None:
        assert run.config is not None
        result = Result(outcome["raw"], run.config, outcome["wall_time_s"])
        result.write(tmp, plots=False)
        record.update(metrics=summary_metrics(result.raw))
        # Where and how long it ran differs between executors and runs: kept apart (TIMING_FILE),
        # so every other file of a run is the same bytes wherever it runs.
        (tmp / TIMING_FILE).write_text(
            json.dumps({"wall_time_s": outcome["wall_time_s"], "host": outcome.get("host")}, indent=1) + "\n",
            encoding="utf-8",
        )
    if run.config is not None:
        (tmp / "config.json").write_text(json.dumps(run.config, indent=1) + "\n", encoding="utf-8")
    record["files"] = _manifest(tmp)
    (tmp / RUN_FILE).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    if final.exists() and _problem(final, run.key) is None:
        shutil.rmtree(tmp)  # written meanwhile (a second sweep on the same directory): keep that one
    else:
        if final.exists():  # a damaged copy: replaced by this one
            _discard(final)
        os.rename(tmp, final)
    return record


# --- what a finished run must hold -------------------------------------------------------------
#
# A run directory is renamed into place whole, but a crash, a full disk or a hand can still
# leave it damaged: a truncated table, a broken run.json, a deleted file. Its run.json lists
# every other file with its size and SHA-256 (``files``; timing.json, which differs between
# executors, apart), and a rerun trusts a directory only when all of them check out; one that
# does not is run again and counted as damaged.

# Files every successful run has; checked (read back) in directories written before manifests.
_OK_RUN_FILES = ("flows.parquet", "queues.parquet", "traces.parquet", "summary.json", "config.json")


def _digest(path: Path) -> str:
    sha = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            sha.update(block)
    return sha.hexdigest()


def _manifest(run_dir: Path) -> dict[str, dict[str, Any]]:
    """Size and SHA-256 of each file of a run directory but run.json and timing.json."""
    return {
        p.name: {"bytes": p.stat().st_size, "sha256": _digest(p)}
        for p in sorted(run_dir.iterdir())
        if p.name not in (RUN_FILE, TIMING_FILE) and p.is_file()
    }


def _load_record(run_dir: Path) -> dict[str, Any] | None:
    """The parsed run.json of ``run_dir`` (a dict), or None."""
    try:
        record = json.loads((run_dir / RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


def _problem(run_dir: Path, key: str) -> str | None:
    """What is wrong with the finished run in ``run_dir``, or None when it is whole."""
    record = _load_record(run_dir)
    if record is None:
        return f"{RUN_FILE} missing or unreadable"
    if record.get("key") != key or record.get("status") not in ("ok", "failed"):
        return f"{RUN_FILE} is not this run's record"
    files = record.get("files")
    if files is None:  # written before manifests: every table must at least read back
        return _legacy_problem(run_dir) if record["status"] == "ok" else None
    if not isinstance(files, dict):
        return f"{RUN_FILE} has no valid list of files"
    for name, expected in files.items():
        path = run_dir / name
        if not isinstance(expected, dict) or name in (RUN_FILE, "") or "/" in name or name.startswith("."):
            return f"{RUN_FILE} lists a bad file entry {show(name)}"
        try:
            if path.is_symlink() or path.stat().st_size != expected.get("bytes"):
                return f"{name} is missing or has the wrong size"
            if _digest(path) != expected.get("sha256"):
                return f"{name} does not match its checksum"
        except OSError:
            return f"{name} is missing or unreadable"
    if record["status"] == "ok" and not set(_OK_RUN_FILES) <= set(files):
        return f"{RUN_FILE} lists too few files for a finished run"
    return None


def _legacy_problem(run_dir: Path) -> str | None:
    import pyarrow.parquet as pq

    for name in _OK_RUN_FILES:
        path = run_dir / name
        try:
            if name.endswith(".parquet"):
                pq.read_metadata(path)
            else:
                json.loads(path.read_text(encoding="utf-8"))
        except Exception:  # missing, truncated, not Parquet, not JSON
            return f"{name} is missing or unreadable"
    return None


def _discard(run_dir: Path) -> None:
    """Remove a damaged run directory: first renamed away (a name a rerun skips), so that a
    removal cut short leaves nothing that passes for a run."""
    aside = run_dir.parent / f".tmp-damaged-{run_dir.name}-{os.getpid()}"
    try:
        os.rename(run_dir, aside)
    except OSError:
        aside = run_dir
    shutil.rmtree(aside, ignore_errors=True)


def _read_record(runs_dir: Path, key: str) -> dict[str, Any] | None:
    """The record of run ``key`` if its directory holds one (checked in ``plan``)."""
    record = _load_record(runs_dir / key)
    return record if record is not None and record.get("key") == key else None
