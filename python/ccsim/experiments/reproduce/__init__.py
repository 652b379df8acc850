"""``ccsim reproduce``: the experiments of the papers, our numbers beside the published ones.

A paper is a module in this package exposing a :class:`Paper`: the runs its experiments need
(scenarios as nested dicts, each with a seed), and an ``analyze`` step that turns the finished
runs into the paper's tables (CSV and Markdown, published values in adjacent columns) and
figures (PNG). The runner executes the runs in parallel on local cores with a progress bar,
keeps each finished run on disk (``runs/KEY.json``, or ``runs-quick/`` for the quick form;
written atomically) so that an interrupted
reproduction resumes where it stopped, and writes ``report.md`` linking everything.

The papers' scenario files are package data, ``scenarios/<paper>/`` beside this file (the
repository's ``scenarios/papers/`` is a link to it), read with :func:`load_scenario` through
``importlib.resources`` so that an installed wheel finds them wherever it is installed.

Adding a paper: a module with ``PAPER = Paper(...)`` and a line in ``_MODULES``.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import logging
import os
import shlex
import sys
import time
import tomllib
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from ...engine.provenance import PROVENANCE_FILE, engine_fingerprint, environment

logger = logging.getLogger(__name__)

__all__ = ["Run", "Paper", "Artifacts", "papers", "paper", "reproduce", "load_scenario"]

# Paper id -> module in this package.
_MODULES: dict[str, str] = {
    "ance": "ance",
    "dedu-ncs": "dedu",
    "piotrowska": "piotrowska",
    "ca-artt": "ca_artt",
    "ecn-codel": "ecn_codel",
    "ware-bbr": "ware_bbr",
    "l4s-dualpi2": "l4s_dualpi2",
}


def load_scenario(paper_dir: str, name: str) -> dict[str, Any]:
    """The scenario file ``scenarios/<paper_dir>/<name>`` of this package, parsed (a fresh dict
    on every call, so callers may change it)."""
    text = (resources.files(__name__) / "scenarios" / paper_dir / name).read_text(encoding="utf-8")
    return tomllib.loads(text)


@dataclass(frozen=True)
class Run:
    """One simulation of an experiment: a scenario (as ``ccsim.from_dict`` takes it) and a seed.
    ``key`` names it uniquely within the paper and is its file name under ``runs/``."""

    key: str
    scenario: Mapping[str, Any]
    seed: int = 1


@dataclass
class Artifacts:
    """What ``analyze`` produced: tables and figures, each with a title, for ``report.md``."""

    out: Path
    sections: list[tuple[str, list[str]]] = field(default_factory=list)
    jobs: int | None = None
    """The ``--jobs`` of the reproduction, for analyses that simulate more (e.g.
    ``ccsim.experiments.smc``)."""

    def section(self, title: str) -> None:
        """Start a section of the report (one per table or figure of the paper)."""
        self.sections.append((title, []))

    def note(self, text: str) -> None:
        """A paragraph under the current section: the paper's finding, ours, and why they differ."""
        self._current().append(text)

    def table(self, name: str, frame: pd.DataFrame, caption: str = "") -> Path:
        """Write ``name.csv`` and ``name.md`` and link them from the current section."""
        csv = self.out / f"{name}.csv"
        md = self.out / f"{name}.md"
        frame.to_csv(csv, index=False)
        md.write_text((f"{caption}\n\n" if caption else "") + _markdown(frame) + "\n", encoding="utf-8")
        self._current().append(f"{caption}\n\n{_markdown(frame)}\n\n([CSV]({csv.name}), [Markdown]({md.name}))")
        return csv

    def figure(self, name: str, fig: Any, caption: str = "") -> Path:
        """Save a matplotlib figure as ``name.png`` and show it in the current section."""
        path = self.out / f"{name}.png"
        fig.savefig(path, dpi=110, bbox_inches="tight")
        import matplotlib.pyplot as plt

        plt.close(fig)
        self._current().append(f"![{caption or name}]({path.name})" + (f"\n\n{caption}" if caption else ""))
        return path

    def _current(self) -> list[str]:
        if not self.sections:
            self.section("Results")
        return self.sections[-1][1]


@dataclass(frozen=True)
class Paper:
    """A reproducible paper."""

    id: str
    title: str
    runs: Callable[[bool], list[Run]]
    """The runs of the full (``quick=False``) or shortened (``quick=True``) reproduction."""
    analyze: Callable[[Mapping[str, Any], Artifacts, bool], None]
    """Tables and figures from the finished runs (``Run.key`` -> ``ccsim.Result``)."""


def register(paper_id: str, module: str) -> None:
    """Declare that ``module`` (in this package) holds paper ``paper_id``."""
    _MODULES[paper_id] = module


def papers() -> list[str]:
    """Every reproducible paper id."""
    return list(_MODULES)


def paper(paper_id: str) -> Paper:
    """The paper with this id; KeyError naming the known ones otherwise."""
    if paper_id not in _MODULES:
        raise KeyError(f"unknown paper {paper_id!r}; known: {', '.join(papers()) or 'none'}")
    module = importlib.import_module(f"{__name__}.{_MODULES[paper_id]}")
    found: Paper = module.PAPER
    return found


def _execute(run: Run) -> tuple[dict[str, Any], dict[str, Any], float]:
    """Worker: simulate one run; returns the engine's raw results, the core config, wall time."""
    import ccsim

    result = ccsim.run(ccsim.from_dict(dict(run.scenario)), seed=run.seed)
    return result.engine_results(), result.config, result.wall_time_s


def _identity(run: Run) -> str:
    """What a saved run must match to be reused: its scenario, its seed and the engine build."""
    text = json.dumps(
        {"scenario": run.scenario, "seed": run.seed, "engine": engine_fingerprint()}, sort_keys=True, default=repr
    )
    return hashlib.sha256(text.encode()).hexdigest()


def _load_saved(path: Path) -> dict[str, Any] | None:
    """A saved run, or None when there is none or it is unreadable (then it is simply rerun)."""
    try:
        saved: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return saved if isinstance(saved, dict) else None


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def reproduce(
    paper_id: str,
    out: str | Path,
    quick: bool = False,
    jobs: int | None = None,
    progress: bool = True,
) -> Path:
    """Run paper ``paper_id``'s experiments into ``out`` and write its report; returns the path
    of ``report.md``. Finished runs found in ``out/runs`` are reused (same key)."""
    from ccsim.results.result import Result

    p = paper(paper_id)
    out = Path(out)
    # Quick and full runs of the same experiment share keys; keep their caches apart.
    runs_dir = out / ("runs-quick" if quick else "runs")
    runs_dir.mkdir(parents=True, exist_ok=True)
    runs = p.runs(quick)
    keys = [r.key for r in runs]
    if len(set(keys)) != len(keys):
        raise ValueError(f"paper {paper_id}: duplicate run keys")
    done: dict[str, Any] = {}
    todo = []
    identity = {r.key: _identity(r) for r in runs}
    for r in runs:
        path = runs_dir / f"{r.key}.json"
        saved = _load_saved(path)
        # Reused only when the same scenario and seed ran on the same engine build: a changed
        # scenario file or a rebuilt engine reruns it rather than reporting stale numbers.
        if saved is not None and saved.get("identity") == identity[r.key]:
            done[r.key] = Result(saved["raw"], saved["config"], saved["wall_time_s"])
        else:
            todo.append(r)
    started = time.perf_counter()
    logger.debug("%s: %d runs, %d saved in %s reused, %d to run", paper_id, len(runs), len(done), runs_dir, len(todo))
    if todo:
        _run_all(todo, runs_dir, done, jobs, progress, f"{paper_id}{' (quick)' if quick else ''}", identity)
    wall = time.perf_counter() - started
    artifacts = Artifacts(out, jobs=jobs)
    p.analyze(done, artifacts, quick)
    report = out / "report.md"
    lines = [
        f"# {p.title}",
        "",
        f"Reproduction `{p.id}` of the paper above"
        f"{' (quick form: shortened runs; see docs/reproductions.md for the full runs)' if quick else ''}.",
        f"{len(runs)} runs, {len(todo)} simulated now in {wall:.1f} s of wall time.",
        "",
    ]
    for title, items in artifacts.sections:
        lines += [f"## {title}", ""] + [item + "\n" for item in items]
    _write_atomic(report, "\n".join(lines))
    _write_atomic(
        out / PROVENANCE_FILE, json.dumps(_provenance(p, runs, done, quick, out), indent=1, sort_keys=True) + "\n"
    )
    return report


def _provenance(p: Paper, runs: list[Run], done: Mapping[str, Any], quick: bool, out: Path) -> dict[str, Any]:
    """``provenance.json`` of a reproduction (engine/provenance.py): the environment and command
    line, and each run's seed and exact configuration by SHA-256 (the configuration itself,
    the scenario as resolved, is in the run saved under ``runs/``)."""
    return {
        **environment(["ccsim", *sys.argv[1:]]),
        "paper": p.id,
        "quick": quick,
        "runs": {
            r.key: {
                "seed": r.seed,
                "config_sha256": hashlib.sha256(json.dumps(done[r.key].config, sort_keys=True).encode()).hexdigest(),
            }
            for r in runs
            if r.key in done
        },
        "rerun": shlex.join(["ccsim", "reproduce", p.id, *(["--quick"] if quick else []), "--out", str(out)]),
    }


def _run_all(
    todo: Iterable[Run],
    runs_dir: Path,
    done: dict[str, Any],
    jobs: int | None,
    progress: bool,
    label: str,
    identity: Mapping[str, str],
) -> None:
    """Simulate ``todo`` on a process pool, saving each finished run as it completes."""
    from ccsim.progress import Progress
    from ccsim.progress import logger as progress_logger
    from ccsim.results.result import Result

    todo = list(todo)
    workers = max(1, min(jobs or os.cpu_count() or 1, len(todo)))
    bar = None
    finished_runs = 0
    try:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            pending: dict[Future[Any], Run] = {pool.submit(_execute, r): r for r in todo}
            # The progress thread starts once the pool has forked its workers (a fork copies
            # only the thread that forks).
            if progress:
                progress_logger.info("%s: running %d runs on %d processes", label, len(todo), workers)
                bar = Progress(label, len(todo))
            try:
                while pending:
                    finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                    for fut in finished:
                        r = pending.pop(fut)
                        raw, config, wall = fut.result()
                        _write_atomic(
                            runs_dir / f"{r.key}.json",
                            json.dumps(
                                {"identity": identity[r.key], "raw": raw, "config": config, "wall_time_s": wall}
                            ),
                        )
                        done[r.key] = Result(raw, config, wall)
                        finished_runs += 1
                        logger.debug("%s: run %s done in %.2f s", label, r.key, wall)
                        if bar is not None:
                            bar.update(finished_runs)
            except BaseException:
                for fut in pending:
                    fut.cancel()
                raise
    finally:
        if bar is not None:
            bar.close()


def _markdown(frame: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table (no optional dependency on tabulate)."""

    def cell(v: Any) -> str:
        if v is None or (isinstance(v, float) and v != v):
            return ""
        if isinstance(v, float):
            return f"{v:.4g}"
        return str(v)

    header = "| " + " | ".join(str(c) for c in frame.columns) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    rows = ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([header, rule, *rows])
