"""The example notebook, examples/rtt_fairness.ipynb, runs end to end in a Jupyter kernel, as a
reader would run it, and answers its question: every cell without an error, the scenario and a
result shown as HTML tables, the plot drawn, and the last cell's answer printed.

Needs nbclient and ipykernel (the ``dev`` extra; ``make setup`` installs them).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "examples" / "rtt_fairness.ipynb"


def _outputs(cell: dict, output_type: str) -> list[dict]:
    return [output for output in cell.get("outputs", []) if output["output_type"] == output_type]


def test_the_rtt_fairness_notebook_runs_and_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    # The kernel inherits the environment; the notebook draws its plot inline, whatever backend
    # the test run chose for itself.
    monkeypatch.delenv("MPLBACKEND", raising=False)
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code"), (
        "commit the notebook without outputs"
    )
    started = time.perf_counter()
    client = nbclient.NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}
    )
    client.execute()  # raises CellExecutionError at the first cell that fails
    elapsed = time.perf_counter() - started
    assert elapsed < 60, f"the notebook should run in under a minute, took {elapsed:.0f} s"

    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    for cell in code:
        assert not _outputs(cell, "error"), cell.source
        stderr = [o["text"] for o in _outputs(cell, "stream") if o["name"] == "stderr"]
        assert not stderr, (cell.source, stderr)  # no warning either
    shown = [o["data"] for cell in code for o in _outputs(cell, "execute_result") + _outputs(cell, "display_data")]
    html = [data["text/html"] for data in shown if "text/html" in data]
    assert any("ccsim.Scenario" in h for h in html) and any("ccsim.Result" in h for h in html)
    assert any("image/png" in data for data in shown), "the goodput plot"

    answer = "".join(o["text"] for o in _outputs(code[-1], "stream") if o["name"] == "stdout")
    assert answer.startswith("Answer: yes."), answer
    assert "it beats PIE on both latency and fairness" in answer, answer
