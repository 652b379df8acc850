"""``Result``: what a run measured, as DataFrames, a JSON-able summary and files.

Turns the results JSON of the engine (results.rs) into one DataFrame per table and log, and
writes them (Parquet), ``summary.json`` and the plots into a run's directory.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..paths import inside, write_atomically
from ..scenario.registry import control_columns
from .tables import TABLES, with_records

__all__ = ["Result", "TABLE_I_COLUMNS"]

# Paper 001's Table I (Dedu et al.), per sensor flow: column -> FlowResult field. The delays
# are per message, from the sensor's write to the controller's receipt (buffering in the
# sensor included); the network_ ones are per data packet, from the transport's send (the
# paper's delays match these: their maximum is the full router queue's).
TABLE_I_COLUMNS = {
    "generated": "messages_generated",
    "lost_on_sensor": "messages_lost_at_sender",
    "lost_on_network": "messages_lost_network",
    "received": "messages_received",
    "in_flight": "messages_pending",
    "retransmitted": "retransmissions",
    "delay_max_s": "message_delay_max_s",
    "delay_mean_s": "message_delay_mean_s",
    "network_delay_max_s": "delay_max_s",
    "network_delay_mean_s": "delay_mean_s",
}

# The time series and per-event logs of the engine's results, which ``Result`` holds as
# DataFrames only.
LOGS = ("traces", "queue_events", "messages", "rtt_samples", "control_traces")
# The packet captures of the engine's results (``trace.pcap``): bytes, kept apart from the
# JSON-able summary.
CAPTURES = "pcap"


def summary_text(summary: Mapping[str, Any]) -> str:
    """The text of ``summary.json``: keys sorted at every level, so the same run gives the same
    bytes whatever the engine's field order, and each record of a list (a flow, a queue) on a
    line of its own. One line per record is what `grep` and a diff want from 9 000 flows, and
    each line is written by the json module's C encoder; with ``indent``, the module encodes in
    Python (the 9 000-flow dumbbell's summary: 0.46 s with ``indent``, 0.21 s this way)."""
    items = sorted(summary.items())
    lines = ["{"]
    for k, (key, value) in enumerate(items):
        comma = "," if k + 1 < len(items) else ""
        head = f"  {json.dumps(key)}: "
        if isinstance(value, list) and value:
            rows = [json.dumps(v, sort_keys=True) for v in value]
            lines.append(head + "[")
            lines.extend(f"    {row}," for row in rows[:-1])
            lines.append(f"    {rows[-1]}")
            lines.append("  ]" + comma)
        else:
            lines.append(head + json.dumps(value, sort_keys=True) + comma)
    lines.append("}")
    return "\n".join(lines) + "\n"


class Result:
    """What a run measured (``Results`` of results.rs), as DataFrames and a summary. Reads the
    engine's results in either form: columns (``Simulation.results``) or records (its JSON)."""

    def __init__(self, raw: Mapping[str, Any], config: Mapping[str, Any], wall_time_s: float) -> None:
        tables = {key: raw.get(key) or [] for key in TABLES}
        self.raw = {key: value for key, value in raw.items() if key not in LOGS and key != CAPTURES}
        """The engine's results except the logs (``LOGS``), with the flows, queues and control
        loops as records (dicts of Python values, ``None`` where missing): the scalars and
        tables of the engine's JSON. The logs are kept once, as the DataFrames below
        (``engine_results`` gives them back); as Python lists they took twice the memory of
        everything else in an analysis holding many runs (`ccsim reproduce ecn-codel`: 1 185
        MiB with them, 385 MiB without)."""
        self.raw.update(with_records(tables))
        self.config = dict(config)
        """The core configuration that was run."""
        self.wall_time_s = wall_time_s
        self.flows = _floats_where_missing(
            _with_connection_columns(pd.DataFrame(tables["flows"])), OPTIONAL_NUMBERS["flows"]
        )
        """One row per flow, columns as ``FlowResult``; a value the flow does not have (no RTT
        sample, no cwnd for UDP) is NaN (``OPTIONAL_NUMBERS``). ``connect_s`` (first SYN to
        SYN-ACK, TCP with ``handshake``), ``fct_s`` (a ``transfer``'s completion time),
        ``size_bytes`` and ``slowdown`` (a transfer's size, and its FCT over the FCT it would
        have alone on the idle path), ``syn_retransmissions`` and ``connect_failed`` are in every
        table: NaN, NaN, NaN, NaN, 0 and False where the engine left them out
        (``CONNECTION_COLUMNS``). ``fct`` sums up the completion times by flow size."""
        self.queues = pd.DataFrame(tables["queues"])
        """One row per output queue (link direction), columns as ``QueueResult``."""
        traces = raw.get("traces") or {}
        columns = ["time_s"] + sorted(c for c in traces if c != "time_s")
        self.traces = pd.DataFrame({c: traces.get(c, []) for c in columns})
        """``time_s`` plus one column per series, e.g. ``queue.A->B.len_pkts``, ``flow.0.cwnd_bytes``;
        with ``[trace] flow_counters = true`` also ``flow.0.delivered_bytes`` and
        ``flow.0.retransmissions`` (cumulative over the measured window); with ``flow_vars`` and
        ``queue_vars`` the models' variables, the name plus its unit's suffix (``flow.0.srtt_s``,
        ``queue.A->B.drop_prob``). ``traces_long()`` gives the same in long form."""
        log = raw.get("queue_events")
        self.queue_events = pd.DataFrame(log) if log else None
        """Every drop and mark (``time_s``, ``queue``, ``flow``, ``event``) when ``trace.events`` is on."""
        messages = raw.get("messages")
        self.messages = (
            _floats_where_missing(pd.DataFrame(messages), OPTIONAL_NUMBERS["messages"]) if messages else None
        )
        """Every application message (``flow``, ``index``, ``created_s``, ``delivered_s``,
        ``delay_s``, ``lost``) when ``trace.messages`` is on; NaN delays for messages not delivered."""
        log = raw.get("rtt_samples")
        self.rtt_samples = pd.DataFrame(log) if log else None
        """Every RTT sample of every TCP sender over the whole run (``time_s``, ``flow``, ``rtt_s``)
        when ``trace.rtt`` is on."""
        self.control = _floats_where_missing(
            pd.DataFrame(tables["control"], columns=control_columns()), OPTIONAL_NUMBERS["control"]
        )
        """One row per ``[[control]]`` loop: ``itae`` (∫ t|e| dt), ``itae_sum`` (Σ t_k |e_k|, the
        scale of the ANCE paper's 8727 threshold), ``iae``, ``ise``, the per-sample ``iae_sum``
        and ``ise_sum``, sample and control counts (lost, stale, applied) and the actuation
        delay (sampling instant to actuation); NaN flows for a loop without a network."""
        log = raw.get("control_traces")
        self.control_traces = pd.DataFrame(log) if log else None
        """Every loop at every sampling instant (``loop``, ``time_s``, ``reference``, ``output``,
        ``control``, ``error``) when the scenario has ``[[control]]`` loops; ``control`` is the
        value the actuator holds just after the instant."""
        self.pcap: dict[str, bytes] = {str(k): bytes(v) for k, v in (raw.get(CAPTURES) or {}).items()}
        """One classic pcap file (its bytes) per link direction that ``[trace] pcap`` names, by
        name (``"A->B"``): the IPv4 and transport headers of every packet as it left that
        direction's transmitter (docs/results.md, "Packet captures"); empty without captures."""

    def traces_long(self) -> pd.DataFrame:
        """The sampled series (``traces``) in long form, the shape seaborn and plotnine plot by
        ``hue``, ``col`` or ``facet``: one row per sample of each series, with ``time_s``,
        ``entity`` (``flow.0``, ``queue.A->B``), ``variable`` (``cwnd``, ``len``, ``srtt``,
        ``drop_prob``), ``value`` and ``unit`` (``bytes``, ``packets``, ``s``, ``bit/s``,
        ``probability``, ``count``...), series after series in the column order of ``traces``.
        ``entity + "." + variable`` plus the unit's suffix is the column of ``traces``; a queue's
        length is there twice, ``len`` in ``packets`` and in ``bytes``. Empty, with these
        columns, without traces."""
        columns = [c for c in self.traces.columns if c != "time_s"]
        meanings, suffixes = _trace_meanings()
        parts = [split_trace_column(c, meanings, suffixes) for c in columns]
        n = len(self.traces)
        time = self.traces["time_s"].to_numpy(dtype=float) if "time_s" in self.traces else np.zeros(0)
        values = [self.traces[c].to_numpy(dtype=float) for c in columns]

        def labels(k: int) -> np.ndarray:
            return np.repeat(np.array([p[k] for p in parts], dtype=object), n)

        return pd.DataFrame(
            {
                "time_s": np.tile(time, len(columns)),
                "entity": labels(0),
                "variable": labels(1),
                "value": np.concatenate(values) if values else np.zeros(0),
                "unit": labels(2),
            }
        )

    def table_i(self, flows: list[int | str] | None = None) -> pd.DataFrame:
        """Paper 001's Table I: per flow, messages generated, lost on the sensor (refused by a
        full send buffer), lost on the network, received, still in flight at the end, packets
        retransmitted (TCP), and the highest and mean delays (see ``TABLE_I_COLUMNS``).
        ``generated = lost_on_sensor + lost_on_network + received + in_flight``.

        ``flows`` picks rows by id or name; by default, every flow of a ``periodic``
        application (the sensors). Rows are indexed by flow name.
        """
        frame = self.flows
        if flows is None:
            rows = frame[frame["app"] == "periodic"]
        else:
            wanted = []
            for key in flows:
                match = frame[(frame["id"] == key) if isinstance(key, int) else (frame["name"] == key)]
                if match.empty:
                    raise KeyError(f"no flow {key!r}; flows: {', '.join(frame['name'])}")
                wanted.append(match.index[0])
            rows = frame.loc[wanted]
        table = rows[["name", "transport", "cc", *TABLE_I_COLUMNS.values()]].rename(
            columns={v: k for k, v in TABLE_I_COLUMNS.items()}
        )
        return table.set_index("name")

    def message_delays(self, flow: int | str | None = None) -> pd.DataFrame:
        """Per-message delay records (paper 001's Figures 2-5): ``flow``, ``name``, ``time_s``
        (when the message was written), ``delay_s`` (NaN if not delivered) and ``lost``, for
        every message delivered or lost (messages refused by a full send buffer never entered
        the transport and are counted only in ``lost_on_sensor``). Needs ``[trace] messages
        = true``. ``flow`` keeps one flow, by id or name.
        """
        if self.messages is None:
            raise ValueError("no message log: run the scenario with [trace] messages = true")
        names = dict(zip(self.flows["id"], self.flows["name"]))
        log = self.messages
        out = pd.DataFrame(
            {
                "flow": log["flow"],
                "name": log["flow"].map(names),
                "time_s": log["created_s"],
                "delay_s": pd.to_numeric(log["delay_s"], errors="coerce"),
                "lost": log["lost"].astype(bool),
            }
        )
        if flow is not None:
            out = out[(out["flow"] == flow) if isinstance(flow, int) else (out["name"] == flow)]
        return out.sort_values(["flow", "time_s"], kind="stable").reset_index(drop=True)

    @property
    def fct(self) -> pd.DataFrame:
        """Flow completion times by flow size (``metrics.fct_table``): per bucket the flows, those
        completed, the mean, median and p99 FCT and slowdown; empty without transfers."""
        from .metrics import fct_table

        return fct_table(self.flows)

    @property
    def summary(self) -> dict[str, Any]:
        """Everything but the time series, JSON-able; identical for identical seeds."""
        return dict(self.raw)

    def engine_results(self) -> dict[str, Any]:
        """The engine's results with their logs: ``raw`` plus each log of ``LOGS`` that the run
        has, rebuilt from its DataFrame as lists by column (``Result`` reads either form). JSON-able:
        the packet captures (``pcap``, bytes) are left out, as the engine's JSON leaves them."""
        out = dict(self.raw)
        for key in LOGS:  # each log is the DataFrame attribute of the same name
            frame = getattr(self, key)
            if frame is not None:
                out[key] = frame.to_dict("list")
                for column in OPTIONAL_NUMBERS.get(key, ()):  # NaN back to the engine's None
                    if column in out[key]:
                        out[key][column] = [None if v != v else v for v in out[key][column]]
        return out

    @property
    def jain_index(self) -> float | None:
        """Jain's index of goodput; None when undefined (no flow delivered anything)."""
        value = self.raw.get("jain_index")
        return None if value is None else float(value)

    @property
    def utilization(self) -> float | None:
        value = self.raw.get("utilization")
        return None if value is None else float(value)

    @property
    def events(self) -> int:
        return int(self.raw["events"])

    @property
    def seed(self) -> int:
        return int(self.raw["seed"])

    def write(self, out_dir: str | Path, plots: bool = True) -> list[Path]:
        """Write tables (Parquet), ``summary.json``, the packet captures (``A-B.pcap`` for
        ``A->B``, see ``pcap_file_names``) and (unless ``plots`` is false) PNG plots into
        ``out_dir``."""
        from .plots import (  # matplotlib: only here
            CWND_SUFFIX,
            QUEUE_LENGTH_SUFFIX,
            plot_control,
            plot_goodput,
            plot_series,
            queue_limits,
        )

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        written = []
        tables = [("flows", self.flows), ("queues", self.queues), ("traces", self.traces)]
        if self.queue_events is not None:
            tables.append(("queue_events", self.queue_events))
        if self.messages is not None:
            tables.append(("messages", self.messages))
        if self.rtt_samples is not None:
            tables.append(("rtt_samples", self.rtt_samples))
        if not self.control.empty:
            tables.append(("control", self.control))
        if self.control_traces is not None:
            tables.append(("control_traces", self.control_traces))
        fct = self.fct
        if not fct.empty:
            tables.append(("fct", fct))
        # Fixed names only, each checked to stay inside `out` and written atomically (paths.py).
        for name, frame in tables:
            path = inside(out, f"{name}.parquet", "--out")
            write_atomically(path, functools.partial(_write_parquet, frame))
            written.append(path)
        summary_path = inside(out, "summary.json", "--out")
        text = summary_text(self.summary)
        write_atomically(summary_path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
        written.append(summary_path)
        # Captures: names made from the link directions' (pcap_file_names), checked as above.
        # An earlier run's capture of one of these directions is stale unless written again.
        earlier = {path.name for path in out.glob("*.pcap")}
        capture_files = pcap_file_names(_link_directions(self.config) | set(self.pcap)) if self.pcap or earlier else {}
        for name, data in sorted(self.pcap.items()):
            path = inside(out, capture_files[name], "--out")
            write_atomically(path, functools.partial(_write_bytes, data))
            written.append(path)
        stale = set(capture_files.values()) & earlier
        if not plots:
            _remove_stale(out, written, stale)
            return written
        warmup_s = float(self.raw.get("warmup_s", 0.0))
        flow_labels = {
            str(f["id"]): f["name"] + (f" ({f['group']})" if f.get("group") else "") for f in self.raw["flows"]
        }

        def queue_plot(path: Path) -> bool:
            return plot_series(
                self.traces,
                "queue.",
                QUEUE_LENGTH_SUFFIX,
                "queue length (packets)",
                "Queue length",
                path,
                warmup_s=warmup_s,
                limits=queue_limits(self.config),
                unit="packets",
            )

        def cwnd_plot(path: Path) -> bool:
            return plot_series(
                self.traces,
                "flow.",
                CWND_SUFFIX,
                "cwnd (kB)",
                "Congestion window",
                path,
                scale=1e-3,
                labels=flow_labels,
                warmup_s=warmup_s,
                unit="kB",
            )

        def goodput_plot(path: Path) -> bool:
            return plot_goodput(self.flows, path)

        def control_plot(path: Path) -> bool:
            return self.control_traces is not None and plot_control(
                self.control_traces, list(self.control["name"]), path
            )

        figures = [
            ("queue_length.png", queue_plot),
            ("cwnd.png", cwnd_plot),
            ("goodput.png", goodput_plot),
            ("control.png", control_plot),
        ]
        for filename, draw in figures:
            path = inside(out, filename, "--out")
            if write_atomically(path, draw):
                written.append(path)
        _remove_stale(out, written, stale)
        return written

    def overview(self) -> list[tuple[str, str]]:
        """The run summed up in units, as (what, value) pairs: what ``repr`` and the HTML table
        of a notebook show."""
        raw = self.raw
        warmup = float(raw.get("warmup_s") or 0.0)
        rows = [
            ("flows", f"{len(self.flows)}"),
            ("simulated", f"{float(raw['duration_s']):g} s" + (f", measured after {warmup:g} s" if warmup else "")),
            ("seed", f"{self.seed}"),
        ]
        if len(self.flows):
            rows.append(("total goodput", rate_text(float(self.flows["goodput_bps"].sum()))))
        rows.append(("Jain's index", "n/a" if self.jain_index is None else f"{self.jain_index:.2f}"))
        queue = self._bottleneck_queue()
        if queue is not None:
            util = "" if self.utilization is None else f", {self.utilization * 100:.1f} % utilized"
            rows.append(("bottleneck", f"{queue['name']} ({queue['kind']}){util}"))
            mean, p99 = seconds_text(float(queue["mean_sojourn_s"])), seconds_text(float(queue["p99_sojourn_s"]))
            rows.append(("queueing delay", f"{mean} mean, {p99} p99"))
            marks = int(queue["marks"])
            rows.append(
                (
                    "losses",
                    f"{float(queue['drop_ratio']) * 100:.2f} % dropped ({int(queue['drops']):,} packets)"
                    + (f", {marks:,} marked" if marks else ""),
                )
            )
        if len(self.control):
            rows.append(("ITAE", ", ".join(f"{n} {v:.4g}" for n, v in zip(self.control["name"], self.control["itae"]))))
        rows.append(("events", f"{self.events:,} in {self.wall_time_s:.2f} s of wall time"))
        return rows

    def _bottleneck_queue(self) -> pd.Series | None:
        """The bottleneck's row of ``queues``, if the run has one."""
        name = self.raw.get("bottleneck")
        if not name or not len(self.queues):
            return None
        rows = self.queues[self.queues["name"] == name]
        return rows.iloc[0] if len(rows) else None

    def __repr__(self) -> str:
        n = len(self.flows)
        parts = [f"{n} flow{'' if n == 1 else 's'}", f"{float(self.raw['duration_s']):g} s simulated"]
        if n:
            parts.append(f"{rate_text(float(self.flows['goodput_bps'].sum()))} total goodput")
        parts.append("Jain n/a" if self.jain_index is None else f"Jain {self.jain_index:.2f}")
        queue = self._bottleneck_queue()
        if queue is not None:
            parts.append(
                f"bottleneck {queue['name']} {queue['kind']}"
                + ("" if self.utilization is None else f" {self.utilization * 100:.1f} % utilized")
            )
            parts.append(f"{seconds_text(float(queue['mean_sojourn_s']))} mean queueing delay")
            parts.append(f"{float(queue['drop_ratio']) * 100:.2f} % dropped")
        if len(self.control):
            k = len(self.control)
            parts.append(f"{k} control loop{'' if k == 1 else 's'}, ITAE {float(self.control['itae'].sum()):.4g}")
        parts += [f"seed {self.seed}", f"{self.events:,} events in {self.wall_time_s:.2f} s"]
        return f"Result({', '.join(parts)})"

    def _repr_html_(self) -> str:
        """A small summary table, for Jupyter."""
        import html

        cells = "".join(
            f"<tr><th style='text-align:left'>{html.escape(what)}</th><td style='text-align:left'>"
            f"{html.escape(value)}</td></tr>"
            for what, value in self.overview()
        )
        caption = "ccsim.Result: .flows, .queues, .traces, .control, .summary"
        return f"<table><caption style='text-align:left'>{html.escape(caption)}</caption>{cells}</table>"


# Every file a run can leave in its directory (Result.write, and write_replay at the name
# `ccsim run` gives it). A run written into a directory that holds an earlier run's files
# removes those it did not write itself, so the directory describes one run: a second run
# without control loops must not leave the first one's control.parquet and control.png behind.
RUN_FILES = (
    "flows.parquet",
    "queues.parquet",
    "traces.parquet",
    "queue_events.parquet",
    "messages.parquet",
    "rtt_samples.parquet",
    "control.parquet",
    "control_traces.parquet",
    "summary.json",
    "queue_length.png",
    "cwnd.png",
    "goodput.png",
    "control.png",
    "replay.json",
    "provenance.json",
    "scenario.toml",
)


# Each unit's column suffix when the engine's registry cannot be read (vars.rs ``VarUnit``).
_UNIT_SUFFIXES = {"bytes": "_bytes", "packets": "_pkts", "segments": "_segs", "s": "_s", "bit/s": "_bps"}


def _trace_meanings() -> tuple[dict[str, tuple[str, str]], dict[str, str]]:
    """The engine's meanings of trace columns and its unit suffixes (``registry``), or none
    and the suffixes above without the engine."""
    try:
        from ..scenario.registry import trace_column_meanings, unit_suffixes

        return trace_column_meanings(), unit_suffixes()
    except ImportError:
        return {}, _UNIT_SUFFIXES


def split_trace_column(
    column: str, meanings: Mapping[str, tuple[str, str]], suffixes: Mapping[str, str]
) -> tuple[str, str, str]:
    """(entity, variable, unit) of a column of ``Result.traces``: ``flow.0.srtt_s`` is
    (``flow.0``, ``srtt``, ``s``), ``queue.A->B.len_pkts`` (``queue.A->B``, ``len``,
    ``packets``). The last part is looked up in ``meanings`` (last part -> variable, unit),
    else read by its unit suffix (unit -> suffix), else a variable without a unit."""
    if column.startswith("flow."):
        kind, index, leaf = (column.split(".", 2) + ["", ""])[:3]
        entity = f"{kind}.{index}"
    else:
        entity, _, leaf = column.rpartition(".")
    if leaf in meanings:
        variable, unit = meanings[leaf]
        return entity, variable, unit
    for unit, suffix in sorted(suffixes.items(), key=lambda item: -len(item[1])):
        if suffix and leaf.endswith(suffix) and len(leaf) > len(suffix):
            return entity, leaf[: -len(suffix)], unit
    return entity, leaf, ""


def pcap_file_names(directions: Iterable[str]) -> dict[str, str]:
    """The file name of each link direction's capture: ``A->B`` gives ``A-B.pcap`` (``>``
    dropped); a character other than a letter, digit, ``.``, ``_`` or ``-`` becomes ``_``, a
    leading ``.`` too, and the name is cut to 200 characters, so that a node name never makes
    a path. Names that come out alike get ``-2``, ``-3``... in the order of their directions."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    for direction in sorted(directions):
        stem = re.sub(r"[^A-Za-z0-9._-]", "_", direction.replace(">", ""))[:200]
        stem = "_" + stem[1:] if stem.startswith(".") else stem
        name, k = f"{stem}.pcap", 1
        while name in taken:
            k += 1
            name = f"{stem}-{k}.pcap"
        taken.add(name)
        names[direction] = name
    return names


def _link_directions(config: Mapping[str, Any]) -> set[str]:
    """The names of the link directions of a core configuration (``FROM->TO``)."""
    nodes = [node["name"] for node in config.get("nodes") or []]
    out = set()
    for link in config.get("links") or []:
        a, b = nodes[link["a"]], nodes[link["b"]]
        out |= {f"{a}->{b}", f"{b}->{a}"}
    return out


def _write_bytes(data: bytes, path: Path) -> None:
    path.write_bytes(data)


def _remove_stale(out: Path, written: list[Path], captures: Iterable[str] = ()) -> None:
    """Remove the files of ``RUN_FILES`` and the captures named ``captures`` (those of this
    run's link directions, see ``pcap_file_names``) that this run did not write."""
    keep = {path.name for path in written}
    for name in (*RUN_FILES, *sorted(captures)):
        if name not in keep:
            path = out / name
            if path.is_symlink() or path.is_file():  # a link is removed, never followed
                path.unlink(missing_ok=True)


def _write_parquet(frame: pd.DataFrame, path: Path) -> None:
    frame.to_parquet(path, index=False)


# The engine's optional numbers (an Option in results.rs): a flow without RTT samples has no
# mean RTT, a UDP flow no cwnd, a loop without a network no sensor flow, a lost message no
# delay. In the DataFrames they are float columns with NaN where missing, whatever a run holds,
# so that every run's table has the same dtypes (tables of several runs concatenate and
# compare) and pandas' numeric methods work on them. ``Result.raw`` keeps None, as JSON has it.
OPTIONAL_NUMBERS = {
    "flows": (
        "rtt_min_s",
        "rtt_mean_s",
        "rtt_max_s",
        "delay_mean_s",
        "delay_max_s",
        "delay_p50_s",
        "delay_p99_s",
        "message_delay_mean_s",
        "message_delay_max_s",
        "final_cwnd_bytes",
        "connect_s",
        "fct_s",
        "size_bytes",
        "slowdown",
    ),
    "control": ("sensor_flow", "actuator_flow", "actuation_delay_mean_s", "actuation_delay_max_s"),
    "messages": ("delivered_s", "delay_s"),
}


def _floats_where_missing(frame: pd.DataFrame, columns: Iterable[str]) -> pd.DataFrame:
    """``frame`` with ``columns`` as float64 (None becomes NaN), and so any other column of
    numbers with missing values (an optional field added to the engine later); string and
    boolean columns are left as they are."""
    for column in frame.columns:
        if column in columns:
            frame[column] = frame[column].astype("float64")
        elif frame[column].dtype == object:
            values = frame[column].dropna()
            numbers = [isinstance(v, (int, float)) and not isinstance(v, bool) for v in values]
            if len(values) < len(frame) and numbers and all(numbers):
                frame[column] = frame[column].astype("float64")
    return frame


def rate_text(bps: float) -> str:
    """A bit rate for a person: ``9.65 Mbit/s``, ``120 kbit/s``."""
    for unit, factor in (("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3)):
        if abs(bps) >= factor:
            return f"{bps / factor:.3g} {unit}"
    return f"{bps:.3g} bit/s"


def seconds_text(seconds: float) -> str:
    """A duration for a person: ``12.1 ms``, ``850 us``, ``1.5 s``; ``n/a`` for NaN."""
    if seconds != seconds:
        return "n/a"
    for unit, factor in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if abs(seconds) >= factor:
            return f"{seconds / factor:.3g} {unit}"
    return "0 s" if seconds == 0 else f"{seconds * 1e9:.3g} ns"


# Flow columns the engine leaves out of a row that has nothing to say in them (no handshake,
# not a transfer: results.rs), so that runs without either give the results they gave before
# the columns existed; every table has them, with these values where they were left out.
CONNECTION_COLUMNS: dict[str, Any] = {
    "connect_s": float("nan"),
    "fct_s": float("nan"),
    "size_bytes": float("nan"),
    "slowdown": float("nan"),
    "syn_retransmissions": 0,
    "connect_failed": False,
}


def _with_connection_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (the flows) with every ``CONNECTION_COLUMNS`` column, after ``start_s``, with
    its value where the engine left it out and its dtype (float64, int64, bool)."""
    names = list(frame.columns)
    at = names.index("start_s") + 1 if "start_s" in names else len(names)
    for column, missing in CONNECTION_COLUMNS.items():
        if column not in frame.columns:
            frame.insert(at, column, missing)
        at = list(frame.columns).index(column) + 1
        filled = frame[column].astype(object).where(frame[column].notna(), missing)
        frame[column] = filled.astype("float64" if isinstance(missing, float) else type(missing))
    return frame
