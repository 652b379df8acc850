"""``ccsim run`` and ``ccsim validate``: one scenario, its summary tables (flows, queues, control
loops) and the files ``--out`` writes."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..errors import ScenarioError
from .common import EXIT_OK, _cell, _engine, _load_within_memory, _stdout_console, _writable_dir


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None or seconds != seconds else f"{seconds * 1e3:.1f}"


def _print_summary(console: Console, file: str, result: Any) -> None:
    raw = result.raw
    console.print(
        Text(
            f"{file}: seed {raw['seed']}, {raw['duration_s']:g} s simulated (measured after {raw['warmup_s']:g} s), "
            f"{raw['events']:,} events in {result.wall_time_s:.2f} s"
        )
    )
    console.print(_flows_table(raw["flows"]))
    console.print(_queues_table(raw))
    if raw.get("control"):
        console.print(_control_table(raw["control"]))
    fct = result.fct
    if not fct.empty:
        console.print(_fct_table(fct))
    line = "Jain index " + ("n/a" if raw.get("jain_index") is None else f"{raw['jain_index']:.4f}")
    if raw.get("utilization") is not None:
        line += f"; bottleneck {raw['bottleneck']} utilization {raw['utilization'] * 100:.1f} %"
    console.print(Text(line))


# Flows listed one per row at most; with more (a table of thousands of rows says little and
# takes seconds to lay out), the ends of the goodput distribution, and where the rest is.
LISTED_FLOWS = 60
EXTREME_FLOWS = 10


def _flows_table(flows: list[dict[str, Any]]) -> Table:
    named = any(flow["name"] != str(flow["id"]) for flow in flows)
    grouped = any(flow["group"] for flow in flows)
    headers = (
        ["id"]
        + (["name"] if named else [])
        + (["group"] if grouped else [])
        + ["path", "cc", "goodput Mbit/s", "retx", "RTOs", "mean RTT ms", "mean one-way delay ms"]
    )
    caption = None
    if len(flows) > LISTED_FLOWS:
        by_goodput = sorted(flows, key=lambda flow: (flow["goodput_bps"], flow["id"]))
        caption = (
            f"the {EXTREME_FLOWS} lowest and {EXTREME_FLOWS} highest goodputs of {len(flows)} flows; "
            "--out DIR writes every flow (flows.parquet)"
        )
        flows = by_goodput[:EXTREME_FLOWS] + by_goodput[-EXTREME_FLOWS:]
    table = Table(title="Flows", title_justify="left", caption=caption, caption_justify="left")
    for header in headers:
        table.add_column(header, justify="left" if header in ("name", "group", "path", "cc") else "right")
    for flow in flows:
        row: list[object] = [flow["id"]]
        row += [flow["name"]] if named else []
        row += [flow["group"] or ""] if grouped else []
        row += [
            f"{flow['src']}->{flow['dst']}",
            flow["cc"] or flow["transport"],
            f"{flow['goodput_bps'] / 1e6:.3f}",
            flow["retransmissions"],
            flow["timeouts"],
            _ms(flow["rtt_mean_s"]),
            _ms(flow["delay_mean_s"]),
        ]
        table.add_row(*map(_cell, row))
    return table


def _fct_table(fct: Any) -> Table:
    """Flow completion times by flow size (``Result.fct``)."""
    table = Table(
        title="Flow completion times",
        title_justify="left",
        caption="slowdown = FCT / FCT alone on the idle path; times over the flows completed",
        caption_justify="left",
    )
    for header in ("size", "flows", "done", "mean ms", "p50 ms", "p99 ms", "mean slowdown", "p99 slowdown"):
        table.add_column(header, justify="left" if header == "size" else "right")
    for row in fct.itertuples(index=False):
        table.add_row(
            *map(
                _cell,
                (
                    row.size,
                    row.flows,
                    row.completed,
                    _ms(row.mean_fct_s),
                    _ms(row.p50_fct_s),
                    _ms(row.p99_fct_s),
                    "-" if row.mean_slowdown != row.mean_slowdown else f"{row.mean_slowdown:.2f}",
                    "-" if row.p99_slowdown != row.p99_slowdown else f"{row.p99_slowdown:.2f}",
                ),
            )
        )
    return table


def _control_table(loops: list[dict[str, Any]]) -> Table:
    table = Table(
        title="Control loops",
        title_justify="left",
        caption="ITAE = ∫ t|e| dt; ITAE sum = Σ t_k |e_k| over the samples",
        caption_justify="left",
    )
    for header in ("loop", "h ms", "ITAE", "ITAE sum", "IAE", "ISE", "samples", "lost s/c", "applied", "delay ms"):
        table.add_column(header, justify="left" if header == "loop" else "right")
    for loop in loops:
        table.add_row(
            *map(
                _cell,
                (
                    loop["name"],
                    f"{loop['h_s'] * 1e3:g}",
                    f"{loop['itae']:.4g}",
                    f"{loop['itae_sum']:.5g}",
                    f"{loop['iae']:.4g}",
                    f"{loop['ise']:.4g}",
                    loop["samples"],
                    f"{loop['samples_lost']}/{loop['controls_lost']}",
                    loop["controls_applied"],
                    _ms(loop["actuation_delay_mean_s"]),
                ),
            )
        )
    return table


# Queues listed one per row at most; beyond, the ones that lost or marked most.
LISTED_QUEUES = 20


def _queues_table(raw: dict[str, Any]) -> Table:
    # Congestion shows wherever a queue dropped, marked or held more than the packet in
    # service, on a router or a host (a sender's own access queue overflows too); idle
    # queues would bury those.
    queues = raw["queues"]
    busy = [
        q for q in queues if q["name"] == raw.get("bottleneck") or q["max_len_pkts"] > 1 or q["drops"] or q["marks"]
    ]
    shown, caption = busy, None
    if len(busy) > LISTED_QUEUES:
        busiest = sorted(
            range(len(busy)),
            key=lambda i: (
                busy[i]["name"] != raw.get("bottleneck"),
                -(busy[i]["drops"] + busy[i]["marks"]),
                -busy[i]["max_len_pkts"],
                i,
            ),
        )
        shown = [busy[i] for i in sorted(busiest[:LISTED_QUEUES])]
        caption = (
            f"the {LISTED_QUEUES} of {len(busy)} busy queues that dropped or marked most; "
            "--out DIR writes every queue (queues.parquet)"
        )
    elif len(queues) > len(busy):
        caption = f"{len(queues) - len(busy)} other queues never held more than one packet, dropped or marked nothing"
    # What the columns are: the queue's length in packets over time, and the time a packet waits
    # in it (one way, a part of the RTT).
    meaning = "pkts: packets queued, over time; sojourn: the time a packet waits in the queue (one way)"
    caption = meaning if caption is None else f"{caption}\n{meaning}"
    table = Table(title="Queues", title_justify="left", caption=caption, caption_justify="left")
    headers = (
        "queue",
        "kind",
        "mean pkts",
        "sd pkts",
        "max pkts",
        "mean sojourn ms",
        "drops",
        "marks",
        "drop %",
        "link util %",
    )
    for header in headers:
        table.add_column(header, justify="left" if header in ("queue", "kind") else "right")
    for queue in shown:
        table.add_row(
            *map(
                _cell,
                (
                    queue["name"],
                    queue["kind"],
                    f"{queue['mean_len_pkts']:.1f}",
                    f"{queue['sd_len_pkts']:.1f}",
                    queue["max_len_pkts"],
                    _ms(queue["mean_sojourn_s"]),
                    queue["drops"],
                    queue["marks"],
                    f"{queue['drop_ratio'] * 100:.2f}",
                    f"{queue['utilization'] * 100:.1f}",
                ),
            )
        )
    return table


def _cmd_run(args: argparse.Namespace) -> int:
    from ..engine.runner import run

    quiet: bool = args.quiet
    console = _stdout_console()
    progress = not quiet  # a bar on a terminal, a plain line now and then elsewhere (progress.py)
    scenario = _load_within_memory(args)
    if args.out:
        _writable_dir(args.out)  # before the run, not after it
    try:
        result = run(scenario, seed=args.seed, progress=progress)
    except Exception as exc:
        # The scenario was loaded here, so the replay line names the file and its overrides.
        if getattr(exc, "config", None) is not None and getattr(exc, "scenario", None) is None:
            setattr(exc, "scenario", str(args.file))  # noqa: B010 (an attribute of the engine's error)
            setattr(exc, "overrides", list(args.overrides or []))  # noqa: B010
        raise
    if not quiet:
        _print_summary(console, args.file, result)
        if result.pcap and not args.out:
            console.print(Text(f"trace.pcap: {len(result.pcap)} packet captures, written only with --out DIR"))
    if args.out:
        try:
            written = result.write(args.out)
            written += _write_provenance(args, scenario, result.config)
        except OSError as exc:
            raise ScenarioError("", "--out", f"cannot write results to {args.out}: {exc.strerror or exc}") from None
        if not quiet:
            console.print(Text(f"wrote {len(written)} files to {args.out}: {', '.join(p.name for p in written)}"))
    return EXIT_OK


def _write_provenance(args: argparse.Namespace, scenario: Any, config: dict[str, Any]) -> list[Path]:
    """``provenance.json`` and ``scenario.toml`` beside the results (engine/provenance.py)."""
    from ..engine.provenance import provenance, write_provenance

    overrides = list(args.overrides or [])
    record = provenance(scenario, config, str(args.file), overrides, ["ccsim", *sys.argv[1:]])
    return write_provenance(args.out, record, Path(args.file).read_text(encoding="utf-8"))


def _cmd_validate(args: argparse.Namespace) -> int:
    from ..scenario.limits import estimate

    _engine()  # loading ran the engine's own checks (routes, parameters): it must be built
    scenario = _load_within_memory(args)
    config = scenario.to_config()
    memory = estimate(config).total
    print(
        f"{args.file}: ok ({len(config['nodes'])} nodes, {len(config['links'])} links, "
        f"{len(config['flows'])} flows); memory up to about {memory / 2**20:.0f} MiB"
    )
    return EXIT_OK
