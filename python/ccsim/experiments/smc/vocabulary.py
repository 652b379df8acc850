"""What a query can name on a scenario, and what makes its runs differ.

``random_elements`` lists the scenario's sources of randomness (without one every run is the
same and a probability is 0 or 1). ``scenario_shape`` runs the scenario to time 0 to learn its
queues, flows, loops and result fields; ``resolve_name`` maps a name of the query to where its
values come from (a ``Source``), or raises QueryError at the name's column; ``vocabulary``
lists every name a query may use."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ...errors import show
from ...results.tables import with_records
from ...scenario import registry
from .query import QueryError


def random_models(family: str) -> list[str]:
    """The models of `family` that can draw random numbers."""
    return [m.name for m in registry.get_registry().models(family) if m.random.get("when", "never") != "never"]


def random_elements(scenario: Any) -> list[str]:
    """The scenario's declared sources of randomness, described (empty: every seed gives the
    same run)."""
    reg = registry.get_registry()
    found: list[str] = []
    for i, flow in enumerate(scenario.flows):
        if flow.start[1] is not None:
            found.append(f"flows[{i}].start window ({flow.start[0] / 1e9:g}..{flow.start[1] / 1e9:g} s)")
        for family, spec in (("cc", flow.cc), ("app", flow.app)):
            if spec is not None and (what := reg.model(family, spec.kind).randomness(spec.params)):
                found.append(f"flows[{i}].{family} {spec.kind} ({what})")
    processing_model = reg.model("node", "processing")
    for node, processing in scenario.network.processing.items():
        if processing_model.randomness(processing):
            found.append(
                f"{processing_model.random['what']} at {node} ({processing.get('distribution', 'uniform')}, "
                f"{processing['jitter'] / 1e3:g} us)"
            )
    for link in scenario.network.links:
        for name, d in ((f"{link.a}->{link.b}", link.ab), (f"{link.b}->{link.a}", link.ba)):
            if d.loss > 0:
                found.append(f"packet error rate {d.loss:g} on {name}")
            if what := reg.model("queue", d.queue.kind).randomness(d.queue.params):
                found.append(f"queue discipline {d.queue.kind} on {name} ({what})")
    return found


@dataclass(frozen=True)
class Source:
    """Where a name's values come from: a trace column, a control-loop series, or a scalar."""

    kind: str  # "trace", "control", "scalar"
    key: Any  # trace column; (loop, series); (table, index-or-name, field) for scalars


_QUEUE_SERIES = {
    "length": "len_pkts",
    "len_pkts": "len_pkts",
    "bytes": "len_bytes",
    "len_bytes": "len_bytes",
    "sojourn": "sojourn_s",
    "sojourn_s": "sojourn_s",
}
_LOOP_SERIES = ("itae", "iae", "ise", "error", "abs_error", "output", "reference", "control")
_TOP_SCALARS = ("jain_index", "utilization", "events", "duration_s")


@dataclass
class Shape:
    """What a scenario offers: from its results at time 0 (field names, queues, flows, loops)."""

    queues: list[str]
    bottleneck: str | None
    flows: list[dict[str, Any]]
    flow_fields: list[str]
    queue_fields: list[str]
    loops: list[str]
    control_fields: list[str]
    cwnd_flows: list[int]


def scenario_shape(config: dict[str, Any]) -> Shape:
    from ... import _core

    probe = dict(config)
    probe["trace"] = dict(config["trace"], interval_ns=1_000_000_000, cwnd=True, queues=[])
    raw = with_records(_core.Simulation(json.dumps(probe)).results())
    flows = raw["flows"]
    cwnd = sorted(int(c.split(".")[1]) for c in raw["traces"] if c.startswith("flow.") and c.endswith(".cwnd_bytes"))
    return Shape(
        queues=[q["name"] for q in raw["queues"]],
        bottleneck=config.get("bottleneck"),
        flows=flows,
        flow_fields=list(flows[0]) if flows else [],
        queue_fields=list(raw["queues"][0]) if raw["queues"] else [],
        loops=[c["name"] for c in raw.get("control") or []]
        or [loop.get("name") or f"control{i}" for i, loop in enumerate(config.get("control", []))],
        control_fields=registry.control_columns(),
        cwnd_flows=cwnd,
    )


def _listing(items: list[str], limit: int = 12) -> str:
    return ", ".join(items) if len(items) <= limit else ", ".join(items[:limit]) + ", ..."


def resolve_name(name: str, column: int, query: str, shape: Shape) -> Source:
    def bad(message: str) -> QueryError:
        return QueryError(query, column, message)

    def queue(q: str) -> str:
        if q == "bottleneck":
            if shape.bottleneck is None:
                raise bad(
                    "the scenario names no bottleneck queue; give topology.bottleneck_queue or name the "
                    f"queue: {_listing(shape.queues)}"
                )
            return shape.bottleneck
        if q not in shape.queues:
            raise bad(f"no queue {show(q)}; queues: bottleneck, {_listing(shape.queues)}")
        return q

    def flow(f: str) -> int:
        if f.isdigit() and int(f) < len(shape.flows):
            return int(f)
        for row in shape.flows:
            if row["name"] == f:
                return int(row["id"])
        names = [str(r["name"]) for r in shape.flows]
        raise bad(f"no flow {show(f)}; flows (index or name): {_listing(names) or 'none'}")

    def loop(l: str) -> int:
        if l.isdigit() and int(l) < len(shape.loops):
            return int(l)
        if l in shape.loops:
            return shape.loops.index(l)
        raise bad(
            f"no control loop {show(l)}; loops: {_listing(shape.loops) or 'none (the scenario has no [[control]])'}"
        )

    # Queue names contain "->" and may contain dots only in backquoted names; split around them.
    head, _, rest = name.partition(".")
    if head == "queue" and rest:
        q, _, series = rest.rpartition(".")
        if not q:
            raise bad("a queue series is queue.Q.length, .bytes or .sojourn (Q = bottleneck or FROM->TO)")
        if series not in _QUEUE_SERIES:
            raise bad(f"unknown queue series {show(series)}; queue.Q.length, .bytes, .sojourn")
        return Source("trace", f"queue.{queue(q)}.{_QUEUE_SERIES[series]}")
    if head == "flow" and rest:
        f, _, series = rest.rpartition(".")
        if series not in ("cwnd", "cwnd_bytes") or not f:
            raise bad("the flow series is flow.F.cwnd (F = index or name); per-flow results are flows.F.FIELD")
        index = flow(f)
        if index not in shape.cwnd_flows:
            raise bad(f"flow {f} has no congestion window (not TCP)")
        return Source("trace", f"flow.{index}.cwnd_bytes")
    if head == "ncs":
        parts = rest.split(".") if rest else []
        if len(parts) == 1:
            if not shape.loops:
                raise bad("the scenario has no control loop ([[control]])")
            index, series = 0, parts[0]
        elif len(parts) == 2:
            index, series = loop(parts[0]), parts[1]
        else:
            raise bad(f"a control-loop series is ncs.X or ncs.LOOP.X, X in {', '.join(_LOOP_SERIES)}")
        if series not in _LOOP_SERIES:
            raise bad(f"unknown control-loop series {show(series)}; one of {', '.join(_LOOP_SERIES)}")
        return Source("control", (index, series))
    if head == "flows" and rest:
        f, _, fld = rest.rpartition(".")
        found = flow(f) if f else None
        if found is None or fld not in shape.flow_fields:
            raise bad(f"a flow result is flows.F.FIELD, FIELD in {_listing(shape.flow_fields, 40)}")
        return Source("scalar", ("flows", found, fld))
    if head == "queues" and rest:
        q, _, fld = rest.rpartition(".")
        if not q or fld not in shape.queue_fields:
            raise bad(f"a queue result is queues.Q.FIELD, FIELD in {_listing(shape.queue_fields, 40)}")
        return Source("scalar", ("queues", queue(q), fld))
    if head == "control" and rest:
        l, _, fld = rest.rpartition(".")
        if not l or fld not in shape.control_fields:
            raise bad(f"a control-loop result is control.LOOP.FIELD, FIELD in {_listing(shape.control_fields, 40)}")
        return Source("scalar", ("control", loop(l), fld))
    if name in _TOP_SCALARS:
        return Source("scalar", ("top", None, name))
    raise bad(
        f"unknown name {show(name)}; series: queue.Q.length|bytes|sojourn, flow.F.cwnd, ncs.X; "
        f"results: flows.F.FIELD, queues.Q.FIELD, control.LOOP.FIELD, {', '.join(_TOP_SCALARS)}"
    )


def vocabulary(scenario: Any, overrides: list[str] | None = None) -> list[str]:
    """The names a query may use on ``scenario`` (series first, then scalars)."""
    from ...engine.runner import as_scenario

    model = as_scenario(scenario, overrides)
    shape = scenario_shape(model.to_config())
    names: list[str] = []
    queues = (["bottleneck"] if shape.bottleneck else []) + shape.queues
    names += [f"queue.{q}.{s}" for q in queues for s in ("length", "bytes", "sojourn")]
    names += [f"flow.{f}.cwnd" for f in shape.cwnd_flows]
    if shape.loops:
        names += [f"ncs.{s}" for s in _LOOP_SERIES]
        names += [f"ncs.{loop}.{s}" for loop in shape.loops for s in _LOOP_SERIES]
    names += [f"flows.F.{fld}" for fld in shape.flow_fields]
    names += [f"queues.Q.{fld}" for fld in shape.queue_fields]
    if shape.loops:
        names += [f"control.LOOP.{fld}" for fld in shape.control_fields]
    names += list(_TOP_SCALARS)
    return names
