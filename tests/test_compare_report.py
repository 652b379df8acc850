"""What ``ccsim compare``'s report and ``ccsim run``'s plots show a reader: the RTT-fairness and
queueing-delay figures, flow groups in numeric order, traces labelled by seed number (not the
20-digit seed) with every flow drawn and the y axis on the measured window, Pareto labels inside
the axes and apart, headers with their units and meanings, a page no wider than an 800-pixel
window, and the run plots' fair share and buffer limit."""

from __future__ import annotations

import base64
import io
import re
import subprocess
from pathlib import Path

import ccsim
import numpy as np
import pandas as pd
import pytest
from ccsim.experiments import compare
from ccsim.experiments.compare.report import (
    delay_figure,
    pareto_figure,
    rtt_fairness_figure,
    run_flows,
    trace_figure,
    write_report,
)
from ccsim.results.plots import goodput_figure, queue_limits
from conftest import SCENARIOS
from matplotlib.text import Text
from test_compare import browser  # noqa: F401 (the fixture)
from test_compare_table import made_up

EXAMPLE = SCENARIOS / "examples" / "rtt-fairness.toml"
SHORT = ["simulation.duration=4s", "simulation.warmup=1s"]
GROUPS = [f"rtt{10 * k}ms" for k in range(1, 11)]


@pytest.fixture(scope="module")
def rtt(tmp_path_factory: pytest.TempPathFactory) -> tuple[compare.Comparison, Path]:
    """The RTT-fairness example, shortened: CUBIC over FQ-CoDel and PIE, 3 seeds, and its report."""
    out = tmp_path_factory.mktemp("rtt")
    spec = compare.prepare(EXAMPLE, ccs=["cubic"], queues=["fq_codel", "pie"], seeds=3, overrides=SHORT)
    result = compare.run_compare(spec, out, jobs=2)
    cmp = compare.analyse(spec, compare.parse_objective("latency, fairness"), out, result.table)
    write_report(cmp, out)
    return cmp, out


def figure_png(html: str, name: str) -> bytes:
    match = re.search(rf'<img id="{name}"[^>]*src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    assert match, name
    return base64.b64decode(match.group(1))


def test_the_report_has_the_rtt_fairness_and_delay_figures(rtt: tuple[compare.Comparison, Path]) -> None:
    _, out = rtt
    html = (out / "report.html").read_text()
    for name in ("rtt-fairness", "delay-cdf", "pareto", "traces"):
        assert figure_png(html, name)[:8] == b"\x89PNG\r\n\x1a\n", name
    assert "fair share" in html and "95 % interval" in html
    # The delay figure says what it is drawn from: the engine keeps no per-packet distribution.
    assert "median, 99th percentile and maximum" in html


def test_flow_groups_are_in_numeric_order(rtt: tuple[compare.Comparison, Path]) -> None:
    cmp, out = rtt
    html = (out / "report.html").read_text()
    assert re.findall(r'<tr data-group="([^"]+)">', html) == GROUPS
    # The per-group values left the ranking table, whose columns are the overall metrics.
    ranking = html[html.index('<table id="ranking">') : html.index("</table>", html.index('<table id="ranking">'))]
    assert "rtt10ms" not in ranking
    # The same order in the trace figure's legend of groups.
    fig = trace_figure(cmp, out)
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    texts = [[t.get_text() for t in legend.get_texts()] for legend in legends]
    assert GROUPS in texts


def test_headers_say_what_the_columns_are_and_their_units(rtt: tuple[compare.Comparison, Path]) -> None:
    _, out = rtt
    html = (out / "report.html").read_text()
    ranking = html[html.index('<table id="ranking">') : html.index("</thead>", html.index('<table id="ranking">'))]
    assert 'p99 queueing delay, one way<span class="unit">(ms)</span>' in ranking
    assert 'bottleneck link utilized<span class="unit">(%)</span>' in ranking
    assert "Jain&#39;s index, all flows" in ranking or "Jain's index, all flows" in ranking
    # Each column's meaning, under the table.
    assert "one way, a part of the RTT, not an RTT" in html
    for unit in ("(ms)", "(%)", "(0-1)", "(Mbit/s)"):
        assert f'<span class="unit">{unit}</span>' in html, unit


def legend_texts(fig) -> list[str]:  # type: ignore[no-untyped-def]
    texts = []
    for legend in [ax.get_legend() for ax in fig.axes] + list(fig.legends):
        if legend is not None:
            texts += [t.get_text() for t in legend.get_texts()]
    return texts


def test_traces_name_seeds_by_number_draw_every_flow_and_show_the_measured_window(
    rtt: tuple[compare.Comparison, Path],
) -> None:
    cmp, out = rtt
    fig = trace_figure(cmp, out)
    texts = legend_texts(fig) + [ax.get_title() for ax in fig.axes]
    assert not [t for t in texts if re.search(r"\d{7,}", t)], texts
    assert any("seed 1 of 3" in t for t in texts)
    queue_ax, cwnd_axes = fig.axes[0], fig.axes[1:]
    assert len(cwnd_axes) == 2  # both combinations
    for ax in cwnd_axes:
        # 20 flows in 10 groups: a line per group (plus the warm-up's end), none left out.
        assert len([line for line in ax.get_lines() if len(line.get_xdata()) > 2]) == len(GROUPS)
    # The y axis shows the measured window: above every 99th percentile after the warm-up, and
    # where the start-up transient goes beyond it, the transient's peak is written on the plot.
    first = cmp.runs[cmp.runs["replicate"] == 0].set_index("queue")["run_dir"]
    traces = {q: pd.read_parquet(out / first[q] / "traces.parquet") for q in ("fq_codel", "pie")}
    column = "queue.A->B.len_pkts"
    steady = max(float(np.percentile(t.loc[t["time_s"] >= 1.0, column], 99)) for t in traces.values())
    peak = max(float(t[column].max()) for t in traces.values())
    top = queue_ax.get_ylim()[1]
    assert top >= steady
    if top < peak:
        assert any("start-up peak" in t.get_text() and "off scale" in t.get_text() for t in queue_ax.texts)
    assert any("warm-up" in t for t in legend_texts(fig))


def test_the_rtt_figure_draws_the_fair_share_of_the_measured_goodput(rtt: tuple[compare.Comparison, Path]) -> None:
    cmp, out = rtt
    fig = rtt_fairness_figure(cmp, out)
    ax = fig.axes[0]
    lines = [line.get_ydata()[0] for line in ax.get_lines() if line.get_gid() == "fair-share"]
    # Each combination's fair share: the mean over seeds of its total goodput over 20 flows; one
    # line where they agree within 2 %, one each otherwise (a link left partly idle).
    flows = run_flows(cmp, out)
    shares = list(flows.groupby(["cc", "queue", "seed_no"])["goodput_bps"].mean().groupby(level=[0, 1]).mean() / 1e6)
    if max(shares) <= 1.02 * min(shares):
        assert lines == [pytest.approx(sum(shares) / len(shares))]
    else:
        assert sorted(lines) == pytest.approx(sorted(shares))
    assert "RTT" in ax.get_xlabel() and "(ms)" in ax.get_xlabel()
    # x is the base RTT the groups name: 10 .. 100 ms.
    xs = sorted({round(float(x)) for x in flows["x"]})
    assert xs == [10 * k for k in range(1, 11)]


def test_the_delay_figure_draws_the_recorded_quantiles_of_each_combination(
    rtt: tuple[compare.Comparison, Path],
) -> None:
    cmp, out = rtt
    fig = delay_figure(cmp, out)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["0.5 (median)", "0.9", "0.99 (p99)", "1 (max)"]
    assert "one way" in ax.get_xlabel() and "(ms" in ax.get_xlabel()
    for container, queue in zip(ax.containers, cmp.table["queue"]):
        runs = cmp.runs[cmp.runs["queue"] == queue]
        bottleneck = [
            pd.read_parquet(out / d / "queues.parquet").set_index("name").loc["A->B"] for d in runs["run_dir"]
        ]
        line = container.lines[0]
        expected = [
            np.mean([q[c] for q in bottleneck]) * 1e3 for c in ("p50_sojourn_s", "p99_sojourn_s", "max_sojourn_s")
        ]
        assert list(line.get_xdata()) == pytest.approx(expected)
        assert list(line.get_ydata()) == [0.5, 0.99, 1.0]


def test_pareto_labels_stay_inside_the_axes_and_apart(tmp_path: Path) -> None:
    # Twelve combinations crowded near full utilization and close in delay and fairness.
    cmp = made_up(tmp_path)
    rows = []
    for k in range(12):
        row = cmp.table.iloc[k % len(cmp.table)].copy()
        row["cc"], row["rank"] = f"cc{k}", k + 1
        row["utilization_mean"] = 0.995 + 0.0004 * (k % 5)
        row["p99_delay_mean"] = 0.020 + 0.0004 * k
        row["jain_mean"] = 0.95 + 0.002 * (k % 4)
        rows.append(row)
    cmp.table = pd.DataFrame(rows).reset_index(drop=True)
    fig = pareto_figure(cmp)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        frame = ax.get_window_extent(renderer)
        boxes = [Text.get_window_extent(a, renderer) for a in ax.texts]  # the text, not its leader line
        assert len(boxes) >= 6  # most points keep a label; the legend says when some are left out
        for box in boxes:
            assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
        for i, a in enumerate(boxes):
            assert not any(a.overlaps(b) for b in boxes[i + 1 :])
    titles = [legend.get_title().get_text() for legend in fig.legends]
    assert any("95 % interval of the mean over 3 seeds" in t for t in titles)


def test_the_report_fits_an_800_pixel_window(
    rtt: tuple[compare.Comparison, Path],
    browser: str,  # noqa: F811 (the fixture)
    tmp_path: Path,
) -> None:
    _, out = rtt
    for width in (1400, 800):
        proc = subprocess.run(
            [
                browser,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                f"--user-data-dir={tmp_path / str(width)}",
                f"--window-size={width},2000",
                "--virtual-time-budget=5000",
                "--dump-dom",
                (out / "report.html").as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert 'data-page-wider="no"' in proc.stdout, width  # wide tables scroll in their own box
        assert 'data-images-shown="4/4"' in proc.stdout


# --- ccsim run's plots -----------------------------------------------------------------------------


def png_text(path_or_bytes: Path | bytes) -> dict[str, str]:
    from PIL import Image

    data = path_or_bytes.read_bytes() if isinstance(path_or_bytes, Path) else path_or_bytes
    with Image.open(io.BytesIO(data)) as image:
        return dict(image.text)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> tuple[ccsim.Result, Path]:
    out = tmp_path_factory.mktemp("run")
    scenario = ccsim.load(
        EXAMPLE,
        overrides=[*SHORT, "topology.bottleneck.queue.kind=pie", "trace.interval=50ms", 'trace.queues=["A->B"]'],
    )
    result = ccsim.run(scenario, seed=1)
    result.write(out)
    return result, out


def test_the_run_goodput_plot_is_against_rtt_with_the_fair_share(run_dir: tuple[ccsim.Result, Path]) -> None:
    result, out = run_dir
    share = result.flows["goodput_bps"].sum() / len(result.flows)
    text = png_text(out / "goodput.png")
    assert text["ccsim:x"] == "base_rtt"
    assert float(text["ccsim:fair_share_bps"]) == pytest.approx(share, rel=1e-5)
    fig, _ = goodput_figure(result.flows)
    ax = fig.axes[0]
    fair = [line for line in ax.get_lines() if line.get_gid() == "fair-share"]
    assert len(fair) == 1 and fair[0].get_ydata()[0] == pytest.approx(share / 1e6)
    assert ax.get_xlabel().startswith("base RTT")
    dots = ax.collections[0].get_offsets()
    assert sorted({round(float(x)) for x in dots[:, 0]}) == [10 * k for k in range(1, 11)]


def test_the_run_queue_plot_names_the_buffer_limit_and_the_warm_up(run_dir: tuple[ccsim.Result, Path]) -> None:
    result, out = run_dir
    assert queue_limits(result.config)["A->B"] == (1000.0, "1000 packets")
    text = png_text(out / "queue_length.png")
    assert text["ccsim:buffer_limits"] == "A->B: 1000 packets" and text["ccsim:warmup_s"] == "1"


def test_queue_limits_take_the_scenarios_value_or_the_disciplines_default() -> None:
    scenario = ccsim.load(SCENARIOS / "flagship.toml", overrides=["topology.bottleneck.queue.limit=40p"])
    assert queue_limits(scenario.to_config())["A->B"] == (40.0, "40 packets")
    scenario = ccsim.load(EXAMPLE, overrides=['topology.bottleneck.queue={kind = "fq_codel"}'])
    assert queue_limits(scenario.to_config())["A->B"] == (10240.0, "10240 packets")  # FQ-CoDel's default


def test_the_run_summary_headers_say_what_they_measure() -> None:
    from ccsim.cli.run import _flows_table, _queues_table

    flows = _flows_table(
        [
            {
                "id": 0,
                "name": "0",
                "group": None,
                "src": "s",
                "dst": "r",
                "cc": "cubic",
                "transport": "tcp",
                "goodput_bps": 1e6,
                "retransmissions": 0,
                "timeouts": 0,
                "rtt_mean_s": 0.02,
                "delay_mean_s": 0.01,
            }
        ]
    )
    headers = [str(c.header) for c in flows.columns]
    assert "mean one-way delay ms" in headers and "mean RTT ms" in headers and "goodput Mbit/s" in headers
    queue = {
        "name": "A->B",
        "kind": "pie",
        "mean_len_pkts": 3.0,
        "sd_len_pkts": 1.0,
        "max_len_pkts": 9,
        "mean_sojourn_s": 0.002,
        "drops": 0,
        "marks": 0,
        "drop_ratio": 0.0,
        "utilization": 0.5,
    }
    queues = _queues_table({"queues": [queue], "bottleneck": "A->B"})
    headers = [str(c.header) for c in queues.columns]
    assert {"mean pkts", "sd pkts", "max pkts", "mean sojourn ms", "link util %"} <= set(headers)
    assert "sojourn: the time a packet waits in the queue (one way)" in str(queues.caption)
