"""The documentation site: docs/cli.md is what the command's parser generates, the tutorial's
scenario is valid, and ``mkdocs build --strict`` builds the site (every page in the nav, every
link and anchor found, the Python API rendered by mkdocstrings) without a warning.

The build needs mkdocs, mkdocstrings[python] and pymdown-extensions (the ``dev`` extra; ``make
setup`` installs them); without them it skips.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import ccsim
import pytest
from ccsim.cli import reference
from conftest import ROOT

DOCS = ROOT / "docs"


def test_docs_cli_md_is_what_the_parser_generates() -> None:
    text = (DOCS / "cli.md").read_text(encoding="utf-8")
    assert text == reference.markdown(), "docs/cli.md is stale: python -m ccsim.cli.reference > docs/cli.md"
    for command in ("run", "validate", "sweep", "smc", "compare", "reproduce", "completion", "arima fit"):
        assert f"`ccsim {command}`\n" in text, command


def test_the_tutorial_scenario_is_valid(tmp_path: Path) -> None:
    tutorial = (DOCS / "tutorial.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"^```toml\n(.*?)^```", tutorial, re.MULTILINE | re.DOTALL)
    path = tmp_path / "first.toml"
    path.write_text(block, encoding="utf-8")
    scenario = ccsim.load(path)
    assert len(scenario.expanded_flows()) == 2 and scenario.bottleneck_queue() == "A->B"


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    for module in ("mkdocs", "mkdocstrings_handlers.python", "pymdownx"):
        pytest.importorskip(module)
    site = tmp_path / "site"
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    pages = {p.relative_to(DOCS).with_suffix("").as_posix() for p in DOCS.glob("*.md")} - {"index"}
    for page in pages:
        assert (site / page / "index.html").exists(), page
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    for name in ("ccsim.engine.runner.run", "ccsim.results.result.Result", "ccsim.scenario.schema.Scenario"):
        assert f'id="{name}"' in api, name
