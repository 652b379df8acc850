"""The scenario file: pydantic models of its TOML tables, cross-reference checks, loading with
command-line overrides, and compilation to the engine's configuration (config.rs).

Key paths (``simulation.duration``, ``topology.bottleneck.queue.kind``, ``flows[0].cc``...) are
the public interface of sweeps, docs and ``--set``; keep them stable.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, PrivateAttr, model_validator

from ..bulk import without_gc
from ..errors import NO_FILE, SHOWN_CHARS, FieldError, ScenarioError, one_line, show
from . import units
from .fields import (
    AppAlgo,
    Bytes,
    CcAlgo,
    ControllerAlgo,
    ReferenceAlgo,
    StartWindow,
    StrictModel,
    Time,
    TransportAlgo,
    algo,
)
from .overrides import apply_overrides
from .profiles import apply_profile
from .registry import engine_facts, get_registry, trace_variables
from .topology import Dumbbell, Network, Topology
from .workloads import Workload, arrival_rate, compile_workload, host_pairs
from .written import Written

__all__ = [
    "Simulation",
    "Flow",
    "Plant",
    "Control",
    "Metrics",
    "Trace",
    "Scenario",
    "load",
    "from_dict",
    "read_toml",
    "compile_scenario",
    "scenario_key",
    "engine_check",
]

U64_MAX = 2**64 - 1
# Flows (after ``count``) a scenario may have: the engine numbers them with u32, and a count
# beyond this is a typo or hostile input that would take the front's memory before any check.
MAX_FLOWS = 100_000
# Largest scenario or sweep file read (the largest real one is a few kB).
MAX_FILE_BYTES = 16 * 2**20


class Simulation(StrictModel):
    """``[simulation]``: how long, from when statistics count, which seed."""

    duration: Time = Field(description="Simulated time the run lasts.")
    warmup: Time = Field(
        default=0, description="Statistics count from this time on; the time before it fills the network."
    )
    seed: Annotated[int, Field(ge=0, le=U64_MAX)] = Field(
        default=1, description="Master seed: every random stream derives from it (`ccsim run --seed` replaces it)."
    )

    # warmup < duration is the engine's check (engine_check).
    @model_validator(mode="after")
    def _window_is_not_empty(self) -> Simulation:
        if self.duration <= 0:
            raise FieldError("duration", "must be longer than 0s")
        return self


def _pair_index(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise FieldError(where, f'expected a pair index (0, 1, ...), "all" or a list of indices, got {show(value)}')
    if value < 0:
        raise FieldError(where, f"expected a pair index of 0 or more, got {show(value)}")
    return value


def _read_pair(value: Any) -> Any:
    """A flow's ``pair``: an index, ``"all"``, or a list of distinct indices."""
    if isinstance(value, str) and value == "all":
        return value
    if not isinstance(value, list):
        return _pair_index(value, "")
    if not value:
        raise FieldError("", 'must not be empty; give pair indices, or "all"')
    if len(value) > MAX_FLOWS:
        raise FieldError("", f"at most {MAX_FLOWS} pairs are supported, got {len(value)}")
    seen: set[int] = set()
    for k, item in enumerate(value):
        if _pair_index(item, f"[{k}]") in seen:
            raise FieldError(f"[{k}]", f"pair {item} is listed twice; count says how many flows each pair carries")
        seen.add(item)
    return list(value)


def _pair_written() -> dict[str, Any]:
    index = {"type": "integer", "minimum": 0}
    return {"anyOf": [index, {"const": "all"}, {"type": "array", "items": index, "minItems": 1, "uniqueItems": True}]}


PairChoice = Annotated[int | Literal["all"] | list[int], BeforeValidator(_read_pair), Written(_pair_written)]
"""The dumbbell pairs of a ``[[flows]]`` table: one index, ``"all"``, or a list of indices."""


class Flow(StrictModel):
    """One ``[[flows]]`` table: ``count`` identical flows from a host to a host, or on each of
    several dumbbell pairs (``pair = "all"`` or a list of pairs)."""

    pair: PairChoice | None = Field(
        default=None,
        description='Dumbbell pair i: the flow goes from host s{i} to host r{i}. "all", or a list of pair '
        "indices: count flows on each of these pairs, grouped by the pair's RTT unless group is given. "
        "Give pair, or src and dst.",
    )
    src: str | None = Field(default=None, description="Name of the host the flow is sent from.")
    dst: str | None = Field(default=None, description="Name of the host the flow is sent to.")
    count: Annotated[int, Field(ge=1, le=MAX_FLOWS)] = Field(
        default=1,
        description='How many identical flows this table makes, on each of its pairs with pair = "all" or a '
        "list (numbered one after the other, pair by pair).",
    )
    transport: TransportAlgo = Field(
        default_factory=lambda: algo("transport", "tcp"), description="Transport protocol and its parameters."
    )
    cc: CcAlgo | None = Field(
        default=None,
        description="Congestion control of a TCP flow. Absent: the behaviour profile's, else newreno.",
    )
    app: AppAlgo = Field(
        default_factory=lambda: algo("app", "bulk"), description="Application: what the flow sends, and when."
    )
    start: StartWindow = Field(
        default=(0, None), description="When the flow starts; a start in a window is drawn per flow, from the seed."
    )
    stop: Time | None = Field(default=None, description="When the flow stops sending. Absent: at the end of the run.")
    group: str | None = Field(
        default=None,
        description="Label of flows reported together (result tables, Jain's index per group). Absent: none, "
        'except for flows over several pairs (pair = "all" or a list): "rtt" and the base RTT of the '
        'flow\'s pair in ms, e.g. "rtt10ms" (see topology.pairs).',
    )
    name: str | None = Field(
        default=None,
        description="Name of the flow in results and in parameters that name a flow; replicas are NAME.0, NAME.1, ...",
    )

    @model_validator(mode="after")
    def _addressed_once(self) -> Flow:
        if self.pair is not None and (self.src is not None or self.dst is not None):
            raise FieldError("pair", "give either pair or src and dst, not both")
        if self.pair is None:
            for end in ("src", "dst"):
                if getattr(self, end) is None:
                    raise FieldError(end, "required: give pair = i (dumbbell), or src and dst host names")
        if self.stop is not None and self.stop <= self.start[0]:
            raise FieldError("stop", "must be after start")
        return self


MOTOR_NUM = [36.3]
MOTOR_DEN = [1.0, 36.17, 0.0]


class Plant(StrictModel):
    """A plant's transfer function, coefficients in descending powers of s. Default: the DC
    motor of the ANCE paper, G(s) = 36.3 / (s^2 + 36.17 s)."""

    num: list[float] = Field(
        default_factory=lambda: list(MOTOR_NUM), description="Numerator coefficients of G(s), highest power first."
    )
    den: list[float] = Field(
        default_factory=lambda: list(MOTOR_DEN),
        description="Denominator coefficients of G(s), highest power first (degree >= 1 and >= the numerator's).",
    )

    @model_validator(mode="after")
    def _proper_and_finite(self) -> Plant:
        for key in ("num", "den"):
            for k, value in enumerate(getattr(self, key)):
                if not math.isfinite(value):
                    raise FieldError(f"{key}[{k}]", f"must be a finite number, got {show(value)}")
        den = list(self.den)
        while den and den[0] == 0:
            den.pop(0)
        num = list(self.num)
        while num and num[0] == 0:
            num.pop(0)
        if len(den) < 2:
            raise FieldError("den", "the denominator must have degree >= 1 (e.g. [1, 36.17, 0])")
        if len(den) - 1 > (max_order := engine_facts()["max_plant_order"]):
            raise FieldError("den", f"plant order {len(den) - 1} exceeds the supported {max_order}")
        if len(num) > len(den):
            raise FieldError("num", f"improper: numerator degree {len(num) - 1} > denominator degree {len(den) - 1}")
        return self


class Control(StrictModel):
    """One ``[[control]]`` table: a networked control loop. The sensor on ``plant_host``
    samples the plant every ``sampling_period`` and sends each sample to ``controller_host``;
    the controller answers each sample it uses with a control for the actuator. Both message
    streams are flows of their own (``transport``, ``message_size`` bytes of payload), named
    ``NAME.sensor`` and ``NAME.actuator``, appended after the ``[[flows]]``. Without the two
    hosts the loop is ideal (no network): the classical sampled-data loop."""

    name: str | None = Field(
        default=None,
        description="Label of the loop and prefix of its flows (NAME.sensor, NAME.actuator). Absent: control0, ...",
    )
    plant_host: str | None = Field(
        default=None, description="Host of the plant's sensor and actuator. Without both hosts the loop has no network."
    )
    controller_host: str | None = Field(default=None, description="Host of the controller.")
    plant: Plant = Field(default_factory=Plant, description="The plant's transfer function G(s).")
    controller: ControllerAlgo = Field(
        default_factory=lambda: algo("controller", "pid"), description="Controller and its gains."
    )
    reference: ReferenceAlgo = Field(
        default_factory=lambda: algo("reference", "square"), description="Reference signal the output is to follow."
    )
    sampling_period: Time = Field(default=14_000_000, description="Time between two samples of the sensor.")
    message_size: Bytes = Field(default=48, description="Payload of each sensor and actuator message.")
    transport: TransportAlgo = Field(
        default_factory=lambda: algo("transport", "udp"), description="Transport of the sensor and actuator messages."
    )
    start: Time = Field(default=0, description="When the loop starts sampling.")
    stop: Time | None = Field(default=None, description="When the loop stops. Absent: at the end of the run.")
    substeps: Annotated[int, Field(ge=1, le=1_000_000)] = Field(
        default=16, description="Integration steps per sampling period for the integral scores (ITAE, IAE, ISE)."
    )

    @model_validator(mode="after")
    def _consistent(self) -> Control:
        if (self.plant_host is None) != (self.controller_host is None):
            missing = "controller_host" if self.controller_host is None else "plant_host"
            raise FieldError(missing, "give both plant_host and controller_host, or neither (an ideal loop)")
        if self.sampling_period <= 0:
            raise FieldError("sampling_period", "must be longer than 0s")
        if self.message_size <= 0:
            raise FieldError("message_size", "must be at least 1B")
        if self.stop is not None and self.stop <= self.start:
            raise FieldError("stop", "must be after start")
        return self

    @property
    def networked(self) -> bool:
        return self.plant_host is not None


class Metrics(StrictModel):
    """``[metrics]``: which flows Jain's index covers (all when absent)."""

    jain_flows: list[Annotated[int, Field(ge=0)]] | None = Field(
        default=None,
        description="Flows (numbered after count) that Jain's index covers. Absent: every flow of [[flows]].",
    )


class Trace(StrictModel):
    """``[trace]``: time series sampled every ``interval``, logs, and packet captures."""

    interval: Time | None = Field(
        default=None, description="Time between two samples of the series. Absent: no sampled series."
    )
    queues: list[str] = Field(
        default_factory=list, description="Queues whose length is sampled, by name: 'A->B' is A's queue towards B."
    )
    cwnd: bool = Field(default=True, description="Sample the congestion window of every TCP flow.")
    flow_counters: bool = Field(
        default=False,
        description="Sample each flow's delivered bytes and retransmissions, cumulative over the measured window "
        "(flow.N.delivered_bytes, flow.N.retransmissions): throughput over time.",
    )
    events: bool = Field(
        default=False, description="Log every drop and mark with its time, queue and flow (Result.queue_events)."
    )
    messages: bool = Field(
        default=False, description="Log every application message: created, delivered or lost (Result.messages)."
    )
    rtt: bool = Field(
        default=False,
        description="Log every RTT sample of every TCP sender with its time and flow (Result.rtt_samples; "
        "the input of `ccsim arima fit`).",
    )
    pcap: list[str] = Field(
        default_factory=list,
        description="Link directions whose packets are captured, by name: 'A->B' is A's transmitter towards B. "
        "Each gives a pcap file of IPv4/TCP/UDP/DCCP headers (Result.pcap; `--out DIR` writes A-B.pcap); "
        "see docs/results.md.",
    )
    flow_vars: list[str] = Field(
        default_factory=list,
        description="Model variables sampled every interval on every flow whose model has them, as "
        "flow.N.NAME plus the unit's suffix (srtt: flow.0.srtt_s): every TCP sender's (cwnd, ssthresh, srtt, "
        "rto, pacing_rate, inflight, cc_state...) and its congestion control's (cubic w_max, bbr min_rtt, "
        "dctcp alpha...). A name no flow's model has is an error; `ccsim list` shows who offers which.",
        json_schema_extra=lambda schema: _names_schema(schema, "flow"),
    )
    queue_vars: list[str] = Field(
        default_factory=list,
        description="Model variables sampled every interval on every traced queue whose discipline has them, "
        "as queue.A->B.NAME plus the unit's suffix: every queue's (drops, marks; len and sojourn are sampled "
        "anyway) and the discipline's (codel count, pie drop_prob, red avg...). A name no traced queue has is "
        "an error; `ccsim list` shows who offers which.",
        json_schema_extra=lambda schema: _names_schema(schema, "queue"),
    )

    @model_validator(mode="after")
    def _interval_and_captures(self) -> Trace:
        if self.interval is not None and self.interval <= 0:
            raise FieldError("interval", "must be longer than 0s")
        seen: set[str] = set()
        for k, name in enumerate(self.pcap):
            # The form only: whether the direction exists is the engine's check (it knows the links).
            if "->" not in name or name.startswith("->") or name.endswith("->"):
                raise FieldError(f"pcap[{k}]", f"expected a link direction FROM->TO such as 'A->B', got {show(name)}")
            if name in seen:
                raise FieldError(f"pcap[{k}]", f"{show(name)} is listed twice")
            seen.add(name)
        _check_var_names(self.flow_vars, "flow", self.interval)
        _check_var_names(self.queue_vars, "queue", self.interval)
        return self


def _names_schema(schema: dict[str, Any], kind: Literal["flow", "queue"]) -> None:
    """The JSON Schema of ``flow_vars`` / ``queue_vars``: the registered names, for completion
    (any string without the engine, whose registry has them)."""
    schema["uniqueItems"] = True
    try:
        schema["items"] = {"type": "string", "enum": list(trace_variables(kind))}
    except ImportError:
        pass


def _check_var_names(names: list[str], kind: Literal["flow", "queue"], interval: int | None) -> None:
    """Each name in ``flow_vars`` / ``queue_vars`` is a variable some registered model offers,
    once; whether the scenario's flows or queues have it is the engine's check."""
    key = f"{kind}_vars"
    if not names:
        return
    if interval is None:
        raise FieldError(key, "needs interval: the variables are sampled every interval")
    for k, name in enumerate(names):
        if name in names[:k]:
            raise FieldError(f"{key}[{k}]", f"{show(name)} is listed twice")
    try:
        known = trace_variables(kind)
    except ImportError:  # the engine is not built: its registry, and its check, wait for it
        return
    other: Literal["flow", "queue"] = "queue" if kind == "flow" else "flow"
    for k, name in enumerate(names):
        if name not in known:
            misplaced = name in trace_variables(other)
            hint = f" ({show(name)} is a {other} variable: put it in {other}_vars)" if misplaced else ""
            raise FieldError(
                f"{key}[{k}]",
                f"unknown variable {show(name)}{hint}; {kind} variables: {', '.join(known)} "
                "(`ccsim list` shows which model offers which)",
            )


@dataclass(frozen=True)
class _Made:
    """One flow that a ``[[flows]]`` table makes."""

    table: int
    src: str
    dst: str
    replica: int  # its place among the table's flows
    name: str | None
    group: str | None


class Scenario(StrictModel):
    """A scenario file: the network, the traffic on it, how long it runs and what is recorded.

    In Python, ``ccsim.load(path)``, ``from_dict(d)`` and ``Scenario.build(d)`` raise
    ScenarioError on bad input; ``Scenario(...)`` raises pydantic's ValidationError."""

    description: str | None = Field(default=None, description="What the scenario is, for its readers.")
    simulation: Simulation = Field(description="How long the run lasts, from when statistics count, which seed.")
    topology: Topology = Field(description="Nodes and links: a dumbbell, a daisy chain, a star or explicit.")
    flows: list[Flow] = Field(default_factory=list, description="The traffic: one table per group of identical flows.")
    metrics: Metrics = Field(default_factory=Metrics, description="Which flows Jain's fairness index covers.")
    trace: Trace | None = Field(default=None, description="Time series to record. Absent: none.")
    control: list[Control] = Field(default_factory=list, description="Networked control loops, one table each.")
    workloads: list[Workload] = Field(
        default_factory=list,
        description="Open-loop traffic: flows that arrive while the run goes on (Poisson), one table each.",
    )

    _network: Network = PrivateAttr()
    _workload_pairs: list[list[tuple[str, str]]] = PrivateAttr(default_factory=list)
    _workload_rates: list[float] = PrivateAttr(default_factory=list)
    _made: list[_Made] = PrivateAttr(default_factory=list)

    @classmethod
    def build(cls, data: Any, file: str = NO_FILE) -> Scenario:
        """Validate ``data``, then run the engine's checks on its compiled configuration
        (``engine_check``); problems raise ScenarioError (``FILE: FIELD: MESSAGE``)."""
        scenario = super().build(data, file)
        engine_check(scenario, file)
        return scenario

    @model_validator(mode="after")
    def _references_resolve(self) -> Scenario:
        try:
            self._network = self.topology.expand()
        except FieldError as exc:
            raise FieldError(f"topology.{exc.field}" if exc.field else "topology", exc.message) from None
        try:
            self._network.check_schedules(self.simulation.duration)
        except FieldError as exc:
            raise FieldError(f"topology.{exc.field}", exc.message) from None
        _check_flows(self, self._network)
        _check_control(self, self._network)
        self._made = _make_flows(self, self._network)
        _check_flow_references(self)
        self._workload_pairs, self._workload_rates = _resolve_workloads(self, self._network)
        return self

    @property
    def network(self) -> Network:
        """The expanded nodes and links."""
        return self._network

    def expanded_flows(self) -> list[tuple[Flow, str, str, int]]:
        """(flow table, src name, dst name, place among the table's flows) per flow, after
        ``count`` and the table's pairs."""
        return [(self.flows[made.table], made.src, made.dst, made.replica) for made in self._made]

    def flow_names(self) -> list[str | None]:
        """Each compiled flow's name (``name``, or ``name.k`` when the table makes several), by index."""
        return [made.name for made in self._made]

    def flow_groups(self) -> list[str | None]:
        """Each compiled ``[[flows]]`` flow's group (given, or by RTT over several pairs), by index."""
        return [made.group for made in self._made]

    def table_sizes(self) -> list[int]:
        """How many flows each ``[[flows]]`` table makes."""
        sizes = [0] * len(self.flows)
        for made in self._made:
            sizes[made.table] += 1
        return sizes

    def bottleneck_queue(self) -> str | None:
        return self.topology.bottleneck_queue or self._network.default_bottleneck

    def to_config(self) -> dict[str, Any]:
        """The core configuration (config.rs ``Config``) as a JSON-able dict."""
        return compile_scenario(self)

    def overview(self) -> list[tuple[str, str]]:
        """The scenario summed up in units, as (what, value) pairs: what the HTML table of a
        notebook shows."""
        facts = self._facts()
        rows = [("description", self.description)] if self.description else []
        rows.append(("topology", facts["topology"]))
        if "bottleneck" in facts:
            rows.append(("bottleneck", facts["bottleneck"]))
        rows.append(("flows", facts["flows"]))
        if self.control:
            rows.append(("control loops", facts["control"]))
        rows += [("duration", facts["duration"]), ("seed", f"{self.simulation.seed}")]
        return rows

    def _facts(self) -> dict[str, str]:
        """The pieces of ``overview`` and ``repr``, in scenario units (``50Mbps``, ``2ms``)."""
        net = self._network
        facts = {"topology": f"{self.topology.kind} of {len(net.nodes)} nodes and {len(net.links)} links"}
        bottleneck = self.bottleneck_queue()
        for link in net.links:
            for a, b, way in ((link.a, link.b, link.ab), (link.b, link.a, link.ba)):
                if f"{a}->{b}" == bottleneck:
                    rate, delay = units.format_rate(way.rate_bps), units.format_time(way.delay_ns)
                    facts["bottleneck"] = f"{bottleneck} {rate} {delay} {way.queue.kind}"
        kinds: dict[str, int] = {}
        for flow, size in zip(self.flows, self.table_sizes()):
            label = flow.transport.kind + (f" {flow.cc.kind}" if flow.cc is not None else "")
            kinds[label] = kinds.get(label, 0) + size
        total = sum(kinds.values())
        facts["flows"] = f"{total} flow{'' if total == 1 else 's'}" + (
            f" ({', '.join(f'{n} {k}' for k, n in kinds.items())})" if total else ""
        )
        loops = [loop.name or f"control[{i}]" for i, loop in enumerate(self.control)]
        facts["control"] = f"{len(loops)} control loop{'' if len(loops) == 1 else 's'} ({', '.join(loops)})"
        sim = self.simulation
        facts["duration"] = units.format_time(sim.duration) + (
            f" measured after {units.format_time(sim.warmup)}" if sim.warmup else ""
        )
        return facts

    def __repr__(self) -> str:
        facts = self._facts()
        parts = []
        if self.description:
            text = self.description
            parts.append(repr(text if len(text) <= 60 else text[:57] + "..."))
        parts.append(facts["topology"])
        if "bottleneck" in facts:
            parts.append(f"bottleneck {facts['bottleneck']}")
        parts.append(facts["flows"])
        if self.control:
            parts.append(facts["control"])
        parts += [facts["duration"], f"seed {self.simulation.seed}"]
        return f"Scenario({', '.join(parts)})"

    def _repr_html_(self) -> str:
        """A small summary table, for Jupyter."""
        import html

        cells = "".join(
            f"<tr><th style='text-align:left'>{html.escape(what)}</th><td style='text-align:left'>"
            f"{html.escape(value)}</td></tr>"
            for what, value in self.overview()
        )
        return f"<table><caption style='text-align:left'>ccsim.Scenario</caption>{cells}</table>"


def _over_pairs(flow: Flow) -> bool:
    """Whether the table runs over several pairs (``pair = "all"`` or a list)."""
    return flow.pair == "all" or isinstance(flow.pair, list)


def _table_pairs(flow: Flow, pairs: int) -> list[int] | None:
    """The dumbbell pairs a table's flows run on (None: from src to dst)."""
    if flow.pair is None:
        return None
    if flow.pair == "all":
        return list(range(pairs))
    return list(flow.pair) if isinstance(flow.pair, list) else [int(flow.pair)]


def _pair_count(scenario: Scenario) -> int:
    topo = scenario.topology
    return len(topo.pair_specs()) if isinstance(topo, Dumbbell) and topo.pairs is not None else 0


def _rtt_group(rtt_ns: int) -> str:
    """The group label of flows by their pair's base RTT: ``rtt10ms``, ``rtt12.5ms`` (to the us)."""
    ms = f"{rtt_ns / 1e6:.3f}".rstrip("0").rstrip(".")
    return f"rtt{ms}ms"


def _make_flows(scenario: Scenario, net: Network) -> list[_Made]:
    """Every flow of the ``[[flows]]`` tables, in order: a table's ``count`` flows, pair by pair."""
    made: list[_Made] = []
    pairs = _pair_count(scenario)
    for i, flow in enumerate(scenario.flows):
        on = _table_pairs(flow, pairs)
        if on is None:
            assert flow.src is not None and flow.dst is not None  # checked by Flow's validator
            ends = [(flow.src, flow.dst, flow.group)] * flow.count
        else:
            by_rtt = flow.group is None and _over_pairs(flow)
            ends = [
                (f"s{p}", f"r{p}", _rtt_group(net.pair_rtts[p]) if by_rtt else flow.group)
                for p in on
                for _ in range(flow.count)
            ]
        several = len(ends) > 1
        for k, (src, dst, group) in enumerate(ends):
            # The flows of a named table are told apart as name.0, name.1, ...
            name = f"{flow.name}.{k}" if flow.name is not None and several else flow.name
            made.append(_Made(table=i, src=src, dst=dst, replica=k, name=name, group=group))
    return made


def _check_flows(scenario: Scenario, net: Network) -> None:
    """What the compiler needs (names of nodes that exist, dumbbell pairs) and what the engine
    cannot see (transfer shapes, the number of flows). The engine checks that flows run
    between two different hosts and that Jain's flows exist (engine_check)."""
    duration = scenario.simulation.duration
    hosts = net.hosts()
    for i, flow in enumerate(scenario.flows):
        where = f"flows[{i}]"
        if flow.pair is not None:
            topo = scenario.topology
            if not isinstance(topo, Dumbbell):
                raise FieldError(f"{where}.pair", f"pair = i addresses dumbbell pairs; a {topo.kind} needs src and dst")
            if topo.pairs is None:
                raise FieldError(
                    f"{where}.pair", "this dumbbell has sources and sinks, not pairs; give src and dst host names"
                )
            pairs = len(topo.pair_specs())
            chosen = _table_pairs(flow, pairs) or []
            for k, pair in enumerate(chosen):
                if pair >= pairs:
                    key = f"{where}.pair[{k}]" if isinstance(flow.pair, list) else f"{where}.pair"
                    raise FieldError(key, f"no pair {show(pair)}; the dumbbell has {pairs} (0..{pairs - 1})")
        else:
            for end in ("src", "dst"):
                name = getattr(flow, end)
                if name not in net.nodes:
                    raise FieldError(f"{where}.{end}", f"no node named {show(name)}; hosts: {', '.join(hosts)}")
        if flow.start[0] >= duration:
            raise FieldError(
                f"{where}.start", f"starts at or after the end of the simulation ({units.format_time(duration)})"
            )
        _check_size_distribution(flow, where)
    pairs = _pair_count(scenario)
    total = sum(flow.count * len(_table_pairs(flow, pairs) or [None]) for flow in scenario.flows)
    if total > MAX_FLOWS:
        raise FieldError("flows", f"{total} flows in all (after count and pairs); at most {MAX_FLOWS} are supported")


def _check_size_distribution(flow: Flow, where: str) -> None:
    """What the transfer's parameter table cannot say alone (app/transfer.rs ``check``): a
    Pareto needs shape > 1 for its mean to exist; a uniform of mean ``size`` needs
    ``size_min <= size``."""
    if flow.app.kind != "transfer":
        return
    params = flow.app.params
    dist = params.get("distribution", "fixed")
    if dist == "pareto":
        spec = get_registry().model("app", "transfer").param("shape")
        shape = params.get("shape", spec.default if spec is not None else None)
        if shape is not None and shape <= 1:
            raise FieldError(
                f"{where}.app.shape", f"a Pareto distribution has a finite mean only for shape > 1, got {shape:g}"
            )
    if dist == "uniform" and params.get("size_min", 0) > params["size"]:
        raise FieldError(
            f"{where}.app.size_min",
            f"must be at most size ({units.format_bytes(params['size'])}) for a uniform of mean size",
        )


def _queue_rate(net: Network, name: str | None) -> int | None:
    """The bit rate of the link direction ``name`` (``a->b``)."""
    for link in net.links:
        for way, (a, b) in ((link.ab, (link.a, link.b)), (link.ba, (link.b, link.a))):
            if name == f"{a}->{b}":
                return way.rate_bps
    return None


def _resolve_workloads(scenario: Scenario, net: Network) -> tuple[list[list[tuple[str, str]]], list[float]]:
    """Each workload's (src, dst) host pairs and its arrivals per second."""
    pairs, rates = [], []
    bottleneck = _queue_rate(net, scenario.bottleneck_queue())
    names = {name for name in scenario.flow_names() if name is not None}
    for i, workload in enumerate(scenario.workloads):
        where = f"workloads[{i}]"
        if workload.name is not None and workload.name in names:
            raise FieldError(f"{where}.name", f"{show(workload.name)} is already the name of a flow or workload")
        names.add(workload.label(i))
        pairs.append(host_pairs(workload, _pair_count(scenario), net.hosts(), where))
        rates.append(arrival_rate(workload, bottleneck, where))
        if workload.start >= scenario.simulation.duration:
            raise FieldError(
                f"{where}.start",
                f"starts at or after the end of the simulation ({units.format_time(scenario.simulation.duration)})",
            )
    return pairs, rates


def _check_control(scenario: Scenario, net: Network) -> None:
    duration = scenario.simulation.duration
    hosts = net.hosts()
    names = {flow.name for flow in scenario.flows if flow.name is not None}
    for i, loop in enumerate(scenario.control):
        where = f"control[{i}]"
        if loop.name is not None:
            if loop.name in names:
                raise FieldError(f"{where}.name", f"{show(loop.name)} is already the name of a flow or control loop")
            names.add(loop.name)
        if loop.networked:
            for key in ("plant_host", "controller_host"):
                name = getattr(loop, key)
                if name not in net.nodes:
                    raise FieldError(f"{where}.{key}", f"no node named {show(name)}; hosts: {', '.join(hosts)}")
                if net.nodes[name] != "host":
                    raise FieldError(
                        f"{where}.{key}", f"{show(name)} is a router; the loop runs between hosts: {', '.join(hosts)}"
                    )
            if loop.plant_host == loop.controller_host:
                raise FieldError(f"{where}.controller_host", f"same host as plant_host ({show(loop.plant_host)})")
        if loop.start >= duration:
            raise FieldError(
                f"{where}.start", f"starts at or after the end of the simulation ({units.format_time(duration)})"
            )


def control_name(loop: Control, i: int) -> str:
    """The label of loop ``i`` (and the prefix of its flows' names)."""
    return loop.name if loop.name is not None else f"control{i}"


def _flow_refs(app_kind: str) -> tuple[str, ...]:
    return get_registry().model("app", app_kind).flow_refs


def _check_flow_references(scenario: Scenario) -> None:
    """Application parameters that point at a flow (the registry's ``flow_refs``) name an
    existing one."""
    names = scenario.flow_names()
    known = ", ".join(repr(n) for n in names if n is not None) or "none (give flows a name)"
    first = 0  # index of the table's first compiled flow
    for i, (flow, size) in enumerate(zip(scenario.flows, scenario.table_sizes())):
        own = range(first, first + size)
        first += size
        for key in sorted(set(_flow_refs(flow.app.kind)) & flow.app.params.keys()):
            target = flow.app.params[key]
            where = f"flows[{i}].app.{key}"
            if isinstance(target, str) and target in names and names.index(target) in own:
                raise FieldError(where, f"{show(target)} is this flow itself; name another flow")
            if isinstance(target, str):
                matches = names.count(target)
                if matches == 0:
                    replicas = [n for n in names if n is not None and n.startswith(target + ".")]
                    hint = (
                        f"it has {len(replicas)} replicas, name one: {', '.join(replicas)}"
                        if replicas
                        else f"flows: {known}"
                    )
                    raise FieldError(where, f"no flow named {show(target)}; {hint}")
                if matches > 1:
                    raise FieldError(
                        where, f"{matches} flows are named {show(target)}; names must be unique to be referenced"
                    )
            elif not 0 <= target < len(names):
                raise FieldError(where, f"no flow {target}; flows are numbered 0..{len(names) - 1}")


def _resolve_app(flow: Flow, names: list[str | None]) -> dict[str, Any]:
    """The application's core configuration with flow names replaced by flow indices."""
    app = flow.app.to_config()
    for key, value in app["params"].items():
        if key in _flow_refs(flow.app.kind) and isinstance(value, str):
            app["params"][key] = names.index(value)
    return app


@without_gc
def compile_scenario(scenario: Scenario) -> dict[str, Any]:
    """The core configuration (config.rs) of a validated scenario, as a JSON-able dict."""
    net = scenario.network
    index = {name: i for i, name in enumerate(net.nodes)}
    nodes, links = net.to_config()
    names = scenario.flow_names()
    flows = []
    groups = scenario.flow_groups()
    for k, (flow, src, dst, _) in enumerate(scenario.expanded_flows()):
        transport, cc = apply_profile(flow.transport, flow.cc)
        flows.append(
            {
                "name": names[k],
                "src": index[src],
                "dst": index[dst],
                "transport": transport,
                "cc": cc,
                "app": _resolve_app(flow, names),
                "start_ns": flow.start[0],
                "start_max_ns": flow.start[1],
                "stop_ns": flow.stop,
                "group": groups[k],
            }
        )
    user_flows = len(flows)
    control = []
    for i, loop in enumerate(scenario.control):
        name = control_name(loop, i)
        sensor = actuator = None
        if loop.networked:
            assert loop.plant_host is not None and loop.controller_host is not None
            ends = {
                "sensor": (loop.plant_host, loop.controller_host),
                "actuator": (loop.controller_host, loop.plant_host),
            }
            for role, (src, dst) in ends.items():
                flows.append(
                    {
                        "name": f"{name}.{role}",
                        "src": index[src],
                        "dst": index[dst],
                        "transport": loop.transport.to_config(),
                        "cc": None,
                        "app": {"kind": "ncs", "params": {"size": loop.message_size}},
                        "start_ns": loop.start,
                        "start_max_ns": None,
                        "stop_ns": loop.stop,
                        "group": name,
                    }
                )
            sensor, actuator = len(flows) - 2, len(flows) - 1
        control.append(
            {
                "name": name,
                "plant_num": list(loop.plant.num),
                "plant_den": list(loop.plant.den),
                "controller": loop.controller.to_config(),
                "reference": loop.reference.to_config(),
                "period_ns": loop.sampling_period,
                "sensor_flow": sensor,
                "actuator_flow": actuator,
                "start_ns": loop.start,
                "substeps": loop.substeps,
            }
        )
    workloads = [
        compile_workload(workload, i, index, pairs, rate)
        for i, (workload, pairs, rate) in enumerate(
            zip(scenario.workloads, scenario._workload_pairs, scenario._workload_rates)
        )
    ]
    jain_flows = scenario.metrics.jain_flows
    if jain_flows is None and len(flows) > user_flows:
        # Jain's index is about the [[flows]] traffic, not the control loops' messages.
        jain_flows = list(range(user_flows))
    trace = scenario.trace
    return {
        "duration_ns": scenario.simulation.duration,
        "warmup_ns": scenario.simulation.warmup,
        "seed": scenario.simulation.seed,
        "nodes": nodes,
        "links": links,
        "flows": flows,
        "trace": {
            "interval_ns": trace.interval if trace else None,
            "queues": list(trace.queues) if trace else [],
            "cwnd": trace.cwnd if trace else True,
            "flow_counters": trace.flow_counters if trace else False,
            "events": trace.events if trace else False,
            "messages": trace.messages if trace else False,
            "rtt": trace.rtt if trace else False,
            # Only when there are captures: a configuration without them stays as it was.
            **({"pcap": list(trace.pcap)} if trace and trace.pcap else {}),
            **({"flow_vars": list(trace.flow_vars)} if trace and trace.flow_vars else {}),
            **({"queue_vars": list(trace.queue_vars)} if trace and trace.queue_vars else {}),
        },
        "bottleneck": scenario.bottleneck_queue(),
        "jain_flows": jain_flows,
        "control": control,
        # Only when there are workloads: a configuration without them stays as it was.
        **({"workloads": workloads} if workloads else {}),
    }


# The engine's configuration keys (config.rs) that compile_scenario renames, by where they are.
_TOP_KEYS = {
    "duration_ns": "simulation.duration",
    "warmup_ns": "simulation.warmup",
    "seed": "simulation.seed",
    "bottleneck": "topology.bottleneck_queue",
    "jain_flows": "metrics.jain_flows",
    "trace.interval_ns": "trace.interval",
}
_FLOW_KEYS = {"start_ns": "start", "start_max_ns": "start", "stop_ns": "stop"}
# A control loop's message flow: its keys in the [[control]] table (src and dst by role).
_MESSAGE_FLOW_KEYS = {"start_ns": "start", "stop_ns": "stop", "app": "message_size"}
_MESSAGE_ENDS = {
    "sensor": {"src": "plant_host", "dst": "controller_host"},
    "actuator": {"src": "controller_host", "dst": "plant_host"},
}
_CONTROL_KEYS = {
    "plant_num": "plant.num",
    "plant_den": "plant.den",
    "period_ns": "sampling_period",
    "start_ns": "start",
    "sensor_flow": "plant_host",
    "actuator_flow": "controller_host",
}
_WORKLOAD_KEYS = {
    "rate_per_s": "arrivals",
    "start_ns": "start",
    "stop_ns": "stop",
    "size_cdf": "size",
    "src": "pairs",
    "dst": "pairs",
}
_INDEXED = re.compile(r"^(flows|control|workloads)\[(\d+)\](?:\.([^.\[]+))?(.*)$")


def _renamed(head: str | None, rest: str, renames: dict[str, str]) -> str:
    """``.head rest`` with ``head`` renamed; a renamed key stands for its whole subtree (the
    scenario key has no such parts: ``app.size`` of a message flow is ``message_size``)."""
    if head is None:
        return rest
    if head in renames:
        return "." + renames[head]
    return f".{head}{rest}"


def scenario_key(scenario: Scenario, field: str) -> str:
    """The scenario key of the engine's configuration path ``field`` (a ConfigError's), as
    compile_scenario lays the configuration out: ``warmup_ns`` is ``simulation.warmup``, the
    k-th compiled flow is the ``[[flows]]`` table it was expanded from (tables expand by
    ``count``) or the ``[[control]]`` loop whose messages it carries, ``jain_flows[j]`` is
    ``metrics.jain_flows[j]``; keys the compiler copies as they are pass through."""
    match = _INDEXED.match(field)
    if match is None:
        for engine, key in _TOP_KEYS.items():
            if field == engine or field.startswith((engine + ".", engine + "[")):
                return key + field[len(engine) :]
        return field
    table, k, head, rest = match.group(1), int(match.group(2)), match.group(3), match.group(4)
    if table == "control":
        return f"control[{k}]" + _renamed(head, rest, _CONTROL_KEYS)
    if table == "workloads":
        # A pair's own errors (its hosts, their route) are the table's addressing keys.
        written = scenario.workloads[k] if k < len(scenario.workloads) else None
        addressing = "pairs" if written is None or written.pairs is not None else "src"
        if head == "pairs":
            return f"workloads[{k}].{addressing}"
        return f"workloads[{k}]" + _renamed(head, rest, {**_WORKLOAD_KEYS, "src": addressing, "dst": addressing})
    for i, size in enumerate(scenario.table_sizes()):
        if k < size:
            return f"flows[{i}]" + _renamed(head, rest, _FLOW_KEYS)
        k -= size
    # After the [[flows]]: the networked loops' messages, sensor then actuator, loop by loop.
    networked = [c for c, loop in enumerate(scenario.control) if loop.networked]
    if k // 2 < len(networked):
        role = "sensor" if k % 2 == 0 else "actuator"
        return f"control[{networked[k // 2]}]" + _renamed(head, rest, {**_MESSAGE_FLOW_KEYS, **_MESSAGE_ENDS[role]})
    return field


def engine_error(scenario: Scenario, exc: Exception, file: str = NO_FILE) -> ScenarioError:
    """The engine's ConfigError about the compiled ``scenario`` as a ScenarioError naming the
    scenario key."""
    field = getattr(exc, "field", "")
    message = getattr(exc, "message", str(exc))
    return ScenarioError(file, scenario_key(scenario, field) if field else "", message)


def engine_check(scenario: Scenario, file: str = NO_FILE, config: dict[str, Any] | None = None) -> None:
    """The engine's checks of the compiled scenario (``config``, compiled here when not
    given): warm-up within the duration, flows between two different hosts with a route,
    queue names, Jain's flows, the models' parameters together. A refusal is a ScenarioError
    naming the scenario key. Skipped when the engine is not built, so that scenarios can be
    read without it."""
    try:
        from .. import _core
    except ImportError:
        return
    try:
        _core.validate(json.dumps(compile_scenario(scenario) if config is None else config))
    except _core.ConfigError as exc:
        raise engine_error(scenario, exc, file) from None


@without_gc
def from_dict(data: dict[str, Any], file: str = NO_FILE) -> Scenario:
    """Validate a scenario given as nested dicts (the parsed TOML); errors are ScenarioErrors.
    Python models named by a relative file (``python = "my_cc.py:MyCc"``) are read from the
    scenario file's folder."""
    from ..engine.user_models import relative_to

    with relative_to(file):
        return Scenario.build(data, file)


def read_toml(path: str | Path) -> dict[str, Any]:
    """The TOML tables of a scenario file; unreadable or malformed files are ScenarioErrors."""
    file = str(path)
    try:
        if stat.S_ISFIFO(os.stat(path).st_mode):  # opening it would wait for a writer forever
            raise ScenarioError(file, "", "a named pipe, not a scenario file")
        with open(path, "rb") as f:
            # Bounded: a device such as /dev/zero, or a huge file, must not take the memory.
            data = f.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise ScenarioError(file, "", f"larger than {MAX_FILE_BYTES // 2**20} MiB; not a scenario file")
        text = data.decode("utf-8")
    except FileNotFoundError:
        raise ScenarioError(file, "", "no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(file, "", f"cannot read: {exc}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(file, "", f"not valid TOML: {exc}") from None
    except ValueError:
        # tomllib converts integer literals with int(), which refuses more than 4300 digits
        # (sys.int_max_str_digits) with a plain ValueError.
        raise ScenarioError(file, "", "not valid TOML here: an integer with more than 4300 digits") from None
    except RecursionError:
        # tomllib parses nested arrays and inline tables recursively.
        raise ScenarioError(file, "", "not valid TOML: nested too deeply") from None


def load(path: str | Path, overrides: list[str] | None = None) -> Scenario:
    """Read, override (``key.path=value``) and validate a scenario file."""
    file = str(path)
    data = read_toml(path)
    applied = apply_overrides(data, overrides or [], file)
    try:
        return from_dict(data, file)
    except ScenarioError as exc:
        # Point at the command line when the bad value came from it.
        for key, text in applied:
            if _concerns(exc.field, key):
                raise ScenarioError(
                    file, exc.field, f"{exc.message} (from --set {one_line(text, SHOWN_CHARS)})"
                ) from None
        raise


def _concerns(field: str, key: str) -> bool:
    """Whether an error at ``field`` is about the overridden ``key`` (one contains the other).
    A key without indices (``flows.cc``) was applied to every element, so indices are ignored."""
    if "[" not in key:
        field = re.sub(r"\[\d+\]", "", field)
    return field == key or field.startswith((key + ".", key + "[")) or key.startswith((field + ".", field + "["))
