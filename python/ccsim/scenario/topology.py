"""Topologies of a scenario: link specs, the dumbbell / daisy-chain / explicit helpers, and
their expansion into the explicit node and link lists of config.rs.

Only names and parameters are worked out here; routing, queues and everything that moves a
packet are the engine's.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, PlainSerializer, PrivateAttr, ValidationError, model_validator

from ..errors import FieldError, join_path, scenario_error_from_validation, show
from . import units
from .fields import AlgoSpec, Prob, QueueAlgo, Rate, StrictModel, Time, algo
from .registry import get_registry
from .written import INNER_READER, PROCESSING_DEF, UNIT_FORMS, Written

__all__ = [
    "Direction",
    "LinkChange",
    "LinkSpec",
    "Pair",
    "ChainHost",
    "NodeDecl",
    "ExplicitLink",
    "Dumbbell",
    "DaisyChain",
    "Explicit",
    "Star",
    "Topology",
    "Network",
    "Processing",
    "TOPOLOGY_KINDS",
]

TOPOLOGY_KINDS = ("dumbbell", "daisy_chain", "explicit", "star")
# A star's sensor count is expanded into one link spec each; bound it before expanding.
MAX_SENSORS = 100_000
# Pairs a range of round-trip times makes (``rtts = { from, to, count }``), bounded likewise.
MAX_RTT_PAIRS = 100_000

# Output queue used where a scenario names none: the engine's DropTail at its default limit.
DEFAULT_QUEUE_KIND = "droptail"


class Direction(StrictModel):
    """What one direction of a link overrides; every field is optional."""

    rate: Rate | None = Field(default=None, description="Bit rate.")
    delay: Time | None = Field(default=None, description="Propagation delay.")
    loss: Prob | None = Field(default=None, description="Probability that a packet is lost, each packet independently.")
    queue: QueueAlgo | None = Field(default=None, description="Discipline of the output queue at the sending end.")


class LinkChange(StrictModel):
    """A change of a link at time ``at``: any of ``rate``, ``delay``, ``loss`` and ``up``, in
    both directions unless ``direction`` names one (the engine's ``LinkChange``; its semantics
    are in crates/ccsim-core/src/engine/dynamic.rs and docs/model-notes.md)."""

    at: Time = Field(description="When the change happens, from the start of the run (at most the duration).")
    rate: Rate | None = Field(default=None, description="New bit rate, from the next packet sent on.")
    delay: Time | None = Field(
        default=None, description="New propagation delay of the packets sent from now on (never overtaking)."
    )
    loss: Prob | None = Field(default=None, description="New probability that a packet is lost.")
    up: bool | None = Field(
        default=None,
        description="false: the link goes down (packets on the wire are lost, the queue holds); true: back up.",
    )
    direction: Literal["ab", "ba"] | None = Field(
        default=None, description="Only this direction changes (a->b or b->a). Absent: both."
    )

    @model_validator(mode="after")
    def _changes_something(self) -> LinkChange:
        if self.rate is None and self.delay is None and self.loss is None and self.up is None:
            raise FieldError("", "changes nothing; give rate, delay, loss or up")
        if self.rate == 0:
            raise FieldError("rate", "the new rate must be above 0")
        return self

    def to_config(self) -> dict[str, Any]:
        """The engine's ``LinkChange`` (config.rs): only the keys given."""
        fields = (
            ("rate_bps", self.rate),
            ("delay_ns", self.delay),
            ("loss", self.loss),
            ("up", self.up),
            ("direction", self.direction),
        )
        return {"at_ns": self.at, **{key: value for key, value in fields if value is not None}}


class LinkSpec(Direction):
    """A full-duplex link. ``rate``/``delay``/``loss``/``queue`` apply to both directions;
    ``reverse`` overrides the b->a direction (asymmetric links); ``schedule`` changes the
    link during the run."""

    reverse: Direction | None = Field(
        default=None, description="What differs in the b->a direction (asymmetric links)."
    )
    schedule: list[LinkChange] | None = Field(
        default=None,
        description="Changes of the link during the run, in time order, e.g. "
        '[{ at = "10s", rate = "2Mbps" }, { at = "20s", up = false }, { at = "25s", up = true }].',
    )

    @model_validator(mode="after")
    def _schedule_in_order(self) -> LinkSpec:
        for j, (before, change) in enumerate(zip(self.schedule or [], (self.schedule or [])[1:]), start=1):
            if change.at < before.at:
                raise FieldError(
                    f"schedule[{j}].at",
                    f"{units.format_time(change.at)} is before the previous change "
                    f"({units.format_time(before.at)}); list the changes in time order",
                )
        return self


def _rtt_values(value: Any) -> Any:
    """``rtts`` as written: a list of times (checked by ``Time``), or ``{ from = TIME, to =
    TIME, count = N }``, N times evenly spaced from ``from`` to ``to``, both included, each
    rounded to the nanosecond."""
    if isinstance(value, list):
        if not value:
            raise FieldError("", 'must not be empty; give at least one RTT, e.g. ["10ms"]')
        if len(value) > MAX_RTT_PAIRS:
            raise FieldError("", f"at most {MAX_RTT_PAIRS} RTTs are supported, got {len(value)}")
        return value
    if not isinstance(value, dict):
        raise FieldError(
            "", f'expected a list of times or a table {{ from = "10ms", to = "100ms", count = 10 }}, got {show(value)}'
        )
    for key in value:
        if key not in _RTT_RANGE_KEYS:
            raise FieldError(str(key), f"unknown field; allowed: {', '.join(_RTT_RANGE_KEYS)}")
    for key in _RTT_RANGE_KEYS:
        if key not in value:
            raise FieldError(key, "required field missing")
    ends = []
    for key in ("from", "to"):
        try:
            ends.append(units.parse_time(value[key]))
        except units.UnitError as exc:
            raise FieldError(key, str(exc)) from None
    low, high = ends
    count = value["count"]
    if isinstance(count, bool) or not isinstance(count, int):
        raise FieldError("count", f"expected an integer, got {show(count)}")
    if not 2 <= count <= MAX_RTT_PAIRS:
        raise FieldError(
            "count", f'expected 2..{MAX_RTT_PAIRS} RTTs in the range, got {show(count)}; one RTT is rtts = ["10ms"]'
        )
    if high <= low:
        raise FieldError("to", f"must be above from ({units.format_time(low)})")
    steps = count - 1
    return [units.format_time(low + (k * (high - low) + steps // 2) // steps) for k in range(count)]


_RTT_RANGE_KEYS = ("from", "to", "count")


def _rtts_written() -> dict[str, Any]:
    time = UNIT_FORMS["time"].json_schema()
    return {
        "anyOf": [
            {"type": "array", "items": time, "minItems": 1, "maxItems": MAX_RTT_PAIRS},
            {
                "type": "object",
                "properties": {
                    "from": {**time, "description": "The smallest RTT. " + time["description"] + "."},
                    "to": {**time, "description": "The largest RTT. " + time["description"] + "."},
                    "count": {
                        "type": "integer",
                        "minimum": 2,
                        "maximum": MAX_RTT_PAIRS,
                        "description": "How many RTTs, evenly spaced from `from` to `to` (both included).",
                    },
                },
                "required": list(_RTT_RANGE_KEYS),
                "additionalProperties": False,
            },
        ]
    }


RttList = Annotated[list[Time], BeforeValidator(_rtt_values), Written(_rtts_written)]
"""Round-trip times: a list, or an evenly spaced range ``{ from, to, count }``."""

RTT_MEANING = (
    "The sum of the propagation delays of the pair's whole path, both ways: s{i}->A, A->B, B->r{i} "
    "and r{i}->B, B->A, A->s{i} (no serialization, queueing or processing time). Each of the pair's "
    "two access links gets the delay (RTT - bottleneck delay A->B - bottleneck delay B->A) / 4 in both "
    "directions (access.delay does not apply to them); an RTT below the bottleneck's two delays is an error."
)


class Pair(LinkSpec):
    """A dumbbell sender/receiver pair: the spec applies to both of its access links
    (s_i--A and B--r_i); ``src_delay`` / ``dst_delay`` set the two sides' delays apart, ``rtt``
    sets them from the path's round-trip time.

    ``pairs`` is a list of these, one per pair, or one table with ``rtts``: one pair per RTT,
    each with ``rtt`` from the list and the table's other keys, e.g. ``pairs = { rtts = { from
    = "10ms", to = "100ms", count = 10 } }``."""

    src_delay: Time | None = Field(default=None, description="Delay of the sender's link s_i--A (instead of delay).")
    dst_delay: Time | None = Field(default=None, description="Delay of the receiver's link B--r_i (instead of delay).")
    rtt: Time | None = Field(
        default=None,
        description=f"Base round-trip time of the pair's path, instead of delay, src_delay and dst_delay. {RTT_MEANING}",
    )
    rtts: RttList | None = Field(
        default=None,
        description="Only in the one-table form pairs = { rtts = ..., ... }: one pair per RTT, each with rtt "
        "set to it (see rtt for what an RTT is) and the table's other keys. A list of times, or "
        '{ from = "10ms", to = "100ms", count = 10 }: count RTTs evenly spaced from `from` to `to`, both included.',
    )

    @model_validator(mode="after")
    def _rtt_or_delays(self) -> Pair:
        if self.rtt is not None and self.rtts is not None:
            raise FieldError("rtt", "give rtts (one pair per RTT) or rtt (one pair's), not both")
        key = "rtt" if self.rtt is not None else "rtts" if self.rtts is not None else None
        if key is None:
            return self
        given = [name for name in ("delay", "src_delay", "dst_delay") if getattr(self, name) is not None]
        if self.reverse is not None and self.reverse.delay is not None:
            given.append("reverse.delay")
        if given:
            raise FieldError(
                key, f"{key} sets the access links' delays; leave out {', '.join(given)} (or give them without {key})"
            )
        if self.rtt is not None and self.rtt <= 0:
            raise FieldError("rtt", "must be longer than 0s")
        for k, value in enumerate(self.rtts or []):
            if value <= 0:
                raise FieldError(f"rtts[{k}]", "must be longer than 0s")
        return self


class ChainHost(LinkSpec):
    """A host of a daisy chain, attached to router ``R{router}`` by this link (host->router
    is the forward direction, ``reverse`` is router->host)."""

    name: str | None = Field(default=None, description="Name of the host. Absent: h{i}, i its place in hosts.")
    router: Annotated[int, Field(ge=0)] = Field(description="The host is attached to router R{router}.")


def _parse_processing(value: Any) -> dict[str, Any]:
    """``{ delay = "20us", jitter = "50us", distribution = "uniform" }``, checked against the
    engine's ``node processing`` table (net/processing.rs); canonical values, given keys only."""
    if not isinstance(value, dict):
        raise FieldError(
            "",
            f'expected a table such as {{ delay = "20us", jitter = "50us", distribution = "uniform" }}, got {show(value)}',
        )
    return get_registry().validate_params("node", "processing", value)


Processing = Annotated[
    dict[str, Any],
    BeforeValidator(_parse_processing),
    PlainSerializer(lambda p: get_registry().to_human("node", "processing", p), return_type=dict),
    Written.ref(PROCESSING_DEF),
]
"""A node's per-packet processing: fixed ``delay`` plus a random ``jitter`` (uniform on
[0, jitter] or exponential of mean jitter), FIFO (``ccsim list``, family ``node``)."""


class NodeDecl(StrictModel):
    """A node of an explicit topology, optionally with per-packet ``processing``."""

    name: Annotated[str, Field(min_length=1)] = Field(description="Name of the node, used by links and flows.")
    kind: Literal["host", "router"] = Field(description="A host sends and receives; a router forwards.")
    processing: Processing | None = Field(default=None, description="Per-packet processing time at the node.")


class ExplicitLink(LinkSpec):
    """A link of an explicit topology between nodes named ``a`` and ``b``."""

    a: str = Field(description="Name of the node at one end (a->b is the forward direction).")
    b: str = Field(description="Name of the node at the other end.")


# --- the expanded network -------------------------------------------------------------


@dataclass(frozen=True)
class DirConfig:
    """One resolved link direction (``DirSpec`` of config.rs)."""

    rate_bps: int
    delay_ns: int
    loss: float
    queue: AlgoSpec

    def to_config(self) -> dict[str, Any]:
        return {
            "rate_bps": self.rate_bps,
            "delay_ns": self.delay_ns,
            "loss": self.loss,
            "queue": self.queue.to_config(),
        }


@dataclass(frozen=True)
class LinkConfig:
    """One resolved link between node names ``a`` and ``b``; ``schedule`` its changes and
    ``schedule_key`` the scenario key they were given at (for errors)."""

    a: str
    b: str
    ab: DirConfig
    ba: DirConfig
    schedule: tuple[LinkChange, ...] = ()
    schedule_key: str = ""

    def to_config(self, index: dict[str, int]) -> dict[str, Any]:
        """The engine's ``LinkSpec``; ``schedule`` only when there are changes, so that a
        configuration without them stays as it was."""
        link: dict[str, Any] = {
            "a": index[self.a],
            "b": index[self.b],
            "ab": self.ab.to_config(),
            "ba": self.ba.to_config(),
        }
        if self.schedule:
            link["schedule"] = [change.to_config() for change in self.schedule]
        return link


@dataclass
class Network:
    """Nodes (name -> host/router, in order) and links, ready for config.rs."""

    nodes: dict[str, str] = field(default_factory=dict)
    links: list[LinkConfig] = field(default_factory=list)
    default_bottleneck: str | None = None
    processing: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per node name: its processing parameters (canonical), for nodes that have one."""
    pair_rtts: list[int] = field(default_factory=list)
    """A dumbbell's pairs: each pair's base round-trip time in ns, the sum of the propagation
    delays of its path both ways (s_i->A->B->r_i and back)."""

    def set_processing(self, routers: dict[str, Any] | None, hosts: dict[str, Any] | None) -> None:
        """A topology helper's ``router_processing`` / ``host_processing``: every router / host."""
        for name, kind in self.nodes.items():
            chosen = routers if kind == "router" else hosts
            if chosen is not None:
                self.processing[name] = dict(chosen)

    def add_node(self, name: str, kind: str, where: str) -> None:
        if name in self.nodes:
            raise FieldError(where, f"duplicate node name {show(name)}")
        self.nodes[name] = kind

    def hosts(self) -> list[str]:
        return [name for name, kind in self.nodes.items() if kind == "host"]

    def queue_names(self) -> list[str]:
        """Every output queue, ``a->b`` and ``b->a`` of each link, in link order."""
        return [name for link in self.links for name in (f"{link.a}->{link.b}", f"{link.b}->{link.a}")]

    def to_config(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        index = {name: i for i, name in enumerate(self.nodes)}
        nodes = [
            {
                "name": name,
                "kind": kind,
                **({"processing": dict(self.processing[name])} if name in self.processing else {}),
            }
            for name, kind in self.nodes.items()
        ]
        links = [link.to_config(index) for link in self.links]
        return nodes, links

    def check_schedules(self, duration: int) -> None:
        """Every link change happens within the run (at most ``duration``)."""
        for link in self.links:
            for j, change in enumerate(link.schedule):
                if change.at > duration:
                    raise FieldError(
                        f"{link.schedule_key}[{j}].at",
                        f"{units.format_time(change.at)} is after the end of the simulation "
                        f"({units.format_time(duration)})",
                    )


_DIRECTION_FIELDS = ("rate", "delay", "loss", "queue")


def _given(spec: Direction | None) -> dict[str, Any]:
    if spec is None:
        return {}
    return {name: getattr(spec, name) for name in _DIRECTION_FIELDS if getattr(spec, name) is not None}


def resolve_link(
    a: str,
    b: str,
    layers: list[LinkSpec | None],
    where: str,
    rate_hint: str,
    extra: dict[str, Any] | None = None,
    general: str = "access",
) -> LinkConfig:
    """Resolve a link from layered specs, most general first (e.g. access defaults, then the
    pair). A later layer's explicit value wins in each direction; ``reverse`` of a layer wins
    over that layer's own value for b->a. ``extra`` (e.g. ``src_delay``) applies last, both ways.
    The schedule is the last layer's that has one (``where``'s, or ``general``'s: the key of
    the layers before the last).
    """
    forward: dict[str, Any] = {}
    backward: dict[str, Any] = {}
    for layer in layers:
        both = _given(layer)
        forward.update(both)
        backward.update(both)
        if layer is not None:
            backward.update(_given(layer.reverse))
    if extra:
        forward.update(extra)
        backward.update(extra)
    if "rate" not in forward:
        raise FieldError(join(where, "rate"), f"no rate for the link {a}--{b}; {rate_hint}")

    def direction(values: dict[str, Any]) -> DirConfig:
        return DirConfig(
            rate_bps=values["rate"],
            delay_ns=values.get("delay", 0),
            loss=values.get("loss", 0.0),
            queue=values.get("queue") or algo("queue", DEFAULT_QUEUE_KIND),
        )

    for name, values in (("rate", forward), ("reverse.rate", backward)):
        if values["rate"] == 0:
            raise FieldError(join(where, name), f"the link {a}--{b} needs a rate above 0")
    schedule: tuple[LinkChange, ...] = ()
    schedule_key = ""
    for k, layer in enumerate(layers):
        if layer is not None and layer.schedule is not None:
            schedule = tuple(layer.schedule)
            schedule_key = join(where if k == len(layers) - 1 else general, "schedule")
    return LinkConfig(
        a=a, b=b, ab=direction(forward), ba=direction(backward), schedule=schedule, schedule_key=schedule_key
    )


def join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


# --- topology kinds -------------------------------------------------------------------------


def _validated_pair(value: Any, where: str) -> Pair:
    """``value`` as a Pair; its problems are FieldErrors at ``where`` + the key inside it."""
    if isinstance(value, Pair):
        return value
    try:
        return Pair.model_validate(value)
    except ValidationError as exc:
        problem = scenario_error_from_validation(exc, "")
        raise FieldError(join_path(where, problem.field), problem.message) from None


def _read_pairs(value: Any) -> Any:
    """A dumbbell's ``pairs``: a list of pair tables, or one table with ``rtts``. Read here
    rather than by pydantic's union, so that an error names the key as written."""
    if isinstance(value, dict):
        if value.get("rtts") is None:
            raise FieldError(
                "rtts", "a single table of pairs needs rtts (one pair per RTT); else give a list, one table per pair"
            )
        return _validated_pair(value, "")
    if isinstance(value, list):
        pairs = []
        for i, item in enumerate(value):
            if isinstance(item, dict) and item.get("rtts") is not None:
                raise FieldError(
                    f"[{i}].rtts", "rtts makes many pairs: write pairs = { rtts = [...] }; one pair of a list takes rtt"
                )
            pairs.append(_validated_pair(item, f"[{i}]"))
        return pairs
    raise FieldError("", f"expected a list of pair tables or a table with rtts, got {show(value)}")


class _AsTyped(Written):
    """The written form is the annotated type's own: the before-validator reads that same form,
    only with errors that name the key as written."""

    def __init__(self) -> None:
        super().__init__(dict, or_inner=True)

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: Any) -> dict[str, Any]:
        if handler.mode != "validation":
            return dict(handler(core_schema))
        token = INNER_READER.set(True)
        try:
            return dict(handler(core_schema))
        finally:
            INNER_READER.reset(token)


Pairs = Annotated[list[Pair] | Pair, BeforeValidator(_read_pairs), _AsTyped()]
"""A dumbbell's pairs: one table per pair, or one table with ``rtts`` for a pair per RTT."""


def _delays(spec: LinkSpec) -> tuple[int, int]:
    """The propagation delays (forward, backward) that ``spec`` alone gives a link."""
    forward = spec.delay or 0
    backward = spec.reverse.delay if spec.reverse is not None and spec.reverse.delay is not None else forward
    return forward, backward


class Dumbbell(StrictModel):
    """N senders -- A == B -- N receivers, with the bottleneck A--B.

    Nodes: senders ``s0..``, routers ``A``, ``B``, receivers ``r0..``. Either ``pairs`` (s_i and
    r_i share one spec; flows say ``pair = i``, a list of pairs or ``"all"``) or ``sources`` and
    ``sinks`` (each host its own access link; flows say ``src = "s1", dst = "r2"``). Links: A--B
    first, then s_i--A, then B--r_i.
    """

    kind: Literal["dumbbell"] = Field(description="The kind of topology.")
    bottleneck: LinkSpec = Field(description="The link A--B; A->B is its forward direction.")
    access: LinkSpec | None = Field(
        default=None, description="What every access link has unless its own spec says otherwise."
    )
    pairs: Pairs | None = Field(
        default=None,
        description="Sender/receiver pairs: pair i is hosts s{i} and r{i}, one spec for both access links. "
        "A list, one table per pair, or one table with rtts, a pair per round-trip time, its other keys "
        'applying to every pair: pairs = { rtts = ["10ms", "50ms"] } or pairs = { rtts = { from = "10ms", '
        'to = "100ms", count = 10 } }. An RTT is the base round-trip propagation delay of the pair\'s whole '
        "path, both ways (Dumbbell pairs, rtt).",
    )
    sources: list[LinkSpec] | None = Field(
        default=None, description="Senders s0.., each with its own access link (with sinks, instead of pairs)."
    )
    sinks: list[LinkSpec] | None = Field(default=None, description="Receivers r0.., each with its own access link.")
    bottleneck_queue: str | None = Field(
        default=None, description="The queue reported as the bottleneck. Absent: 'A->B'."
    )
    router_processing: Processing | None = Field(
        default=None, description="Per-packet processing at every router (processing of an explicit node)."
    )
    host_processing: Processing | None = Field(
        default=None, description="Per-packet processing at every host: what it sends and what it receives."
    )

    # Each pair's spec (the rtts form expanded, one pair per RTT) and its key in the file.
    _pair_specs: list[tuple[Pair, str]] = PrivateAttr(default_factory=list)

    @model_validator(mode="after")
    def _one_way_to_give_hosts(self) -> Dumbbell:
        if self.pairs is not None and (self.sources is not None or self.sinks is not None):
            raise FieldError("pairs", "give either pairs, or sources and sinks, not both")
        if self.pairs is None and (self.sources is None or self.sinks is None):
            missing = "sinks" if self.sources is not None else "sources" if self.sinks is not None else "pairs"
            raise FieldError(missing, "required: give pairs, or sources and sinks")
        for name in ("pairs", "sources", "sinks"):
            if getattr(self, name) == []:
                raise FieldError(name, "must not be empty")
        self._pair_specs = self._expand_pairs()
        return self

    def _expand_pairs(self) -> list[tuple[Pair, str]]:
        """One (spec, key of its RTT or of the pair) per pair; RTTs checked against the bottleneck."""
        if self.pairs is None:
            return []
        if isinstance(self.pairs, Pair):
            table, rtts = self.pairs, self.pairs.rtts or []
            specs = [
                (table.model_copy(update={"rtts": None, "rtt": rtt}), f"pairs.rtts[{k}]") for k, rtt in enumerate(rtts)
            ]
        else:
            specs = [(spec, f"pairs[{i}].rtt") for i, spec in enumerate(self.pairs)]
        forward, backward = _delays(self.bottleneck)
        for spec, key in specs:
            if spec.rtt is not None and spec.rtt < forward + backward:
                raise FieldError(
                    key,
                    f"{units.format_time(spec.rtt)} is below {units.format_time(forward + backward)}, the round "
                    f"trip of the bottleneck alone (A->B {units.format_time(forward)} + B->A "
                    f"{units.format_time(backward)}); an RTT covers the whole path both ways",
                )
        return specs

    def pair_specs(self) -> list[Pair]:
        """Every pair's spec, one per pair (``rtts`` expanded into pairs with ``rtt``)."""
        return [spec for spec, _ in self._pair_specs]

    def expand(self) -> Network:
        net = Network(default_bottleneck="A->B")
        pairs = self.pair_specs() if self.pairs is not None else None
        senders: list[LinkSpec] = list(pairs) if pairs is not None else list(self.sources or [])
        receivers: list[LinkSpec] = list(pairs) if pairs is not None else list(self.sinks or [])
        for i in range(len(senders)):
            net.add_node(f"s{i}", "host", "")
        net.add_node("A", "router", "")
        net.add_node("B", "router", "")
        for i in range(len(receivers)):
            net.add_node(f"r{i}", "host", "")
        bottleneck = resolve_link("A", "B", [self.bottleneck], "bottleneck", "set bottleneck.rate")
        net.links.append(bottleneck)
        if pairs is not None:
            # The rtts form's pairs share its table: a missing rate is that table's key.
            keys = ["pairs" if isinstance(self.pairs, Pair) else f"pairs[{i}]" for i in range(len(pairs))]
            src_keys, dst_keys = keys, keys
            delays = [self._access_delays(spec, bottleneck) for spec in pairs]
        else:
            src_keys = [f"sources[{i}]" for i in range(len(senders))]
            dst_keys = [f"sinks[{i}]" for i in range(len(receivers))]
            delays = [(None, None, 0)] * max(len(senders), len(receivers))
        for i, spec in enumerate(senders):
            hint = f"set {src_keys[i]}.rate or access.rate"
            src_delay, _, odd_ns = delays[i]
            extra = {"delay": src_delay} if src_delay is not None else None
            link = resolve_link(f"s{i}", "A", [self.access, spec], src_keys[i], hint, extra)
            if odd_ns:
                # The ns of an RTT that cannot be halved go to the sender's forward direction.
                link = replace(link, ab=replace(link.ab, delay_ns=link.ab.delay_ns + odd_ns))
            net.links.append(link)
        for i, spec in enumerate(receivers):
            hint = f"set {dst_keys[i]}.rate or access.rate"
            dst_delay = delays[i][1]
            extra = {"delay": dst_delay} if dst_delay is not None else None
            net.links.append(resolve_link("B", f"r{i}", [self.access, spec], dst_keys[i], hint, extra))
        if pairs is not None:
            n = len(pairs)
            net.pair_rtts = [
                sum(
                    link.ab.delay_ns + link.ba.delay_ns for link in (bottleneck, net.links[1 + i], net.links[1 + n + i])
                )
                for i in range(n)
            ]
        net.set_processing(self.router_processing, self.host_processing)
        return net

    @staticmethod
    def _access_delays(spec: Pair, bottleneck: LinkConfig) -> tuple[int | None, int | None, int]:
        """The delays a pair sets on its sender's and receiver's links, both ways (None: none),
        and the ns added to the sender's forward direction: ``src_delay`` / ``dst_delay``, or
        what its ``rtt`` leaves after the bottleneck split evenly over the four directions, the
        ns that do not divide by four going to one side (so the RTT is exact)."""
        if spec.rtt is not None:
            left = spec.rtt - bottleneck.ab.delay_ns - bottleneck.ba.delay_ns
            src, dst = left // 4, left // 2 - left // 4
            return src, dst, left % 2
        return spec.src_delay, spec.dst_delay, 0


class DaisyChain(StrictModel):
    """Routers ``R0..Rn`` in a line (hop i links R_i--R_{i+1}), hosts attached at routers.

    Without ``bottleneck_queue`` the bottleneck is the forward direction of the slowest hop
    (the first of equals).
    """

    kind: Literal["daisy_chain"] = Field(description="The kind of topology.")
    hops: Annotated[list[LinkSpec], Field(min_length=1)] = Field(
        description="The links between routers: hop i links R{i} and R{i+1}."
    )
    hosts: Annotated[list[ChainHost], Field(min_length=1)] = Field(
        description="The hosts, each attached to a router by its own link."
    )
    access: LinkSpec | None = Field(
        default=None, description="What every host's link has unless its own spec says otherwise."
    )
    bottleneck_queue: str | None = Field(
        default=None, description="The queue reported as the bottleneck. Absent: the forward queue of the slowest hop."
    )
    router_processing: Processing | None = Field(
        default=None, description="Per-packet processing at every router (processing of an explicit node)."
    )
    host_processing: Processing | None = Field(
        default=None, description="Per-packet processing at every host: what it sends and what it receives."
    )

    def expand(self) -> Network:
        net = Network()
        routers = [f"R{i}" for i in range(len(self.hops) + 1)]
        for name in routers:
            net.add_node(name, "router", "")
        for i, host in enumerate(self.hosts):
            net.add_node(host.name or f"h{i}", "host", f"hosts[{i}].name")
        for i, hop in enumerate(self.hops):
            net.links.append(resolve_link(routers[i], routers[i + 1], [hop], f"hops[{i}]", f"set hops[{i}].rate"))
        for i, host in enumerate(self.hosts):
            if host.router >= len(routers):
                raise FieldError(
                    f"hosts[{i}].router",
                    f"no router R{host.router}; the chain has {', '.join(routers)} (router = 0..{len(routers) - 1})",
                )
            name = host.name or f"h{i}"
            hint = f"set hosts[{i}].rate or access.rate"
            net.links.append(resolve_link(name, routers[host.router], [self.access, host], f"hosts[{i}]", hint))
        slowest = min(net.links[: len(self.hops)], key=lambda link: link.ab.rate_bps)
        net.default_bottleneck = f"{slowest.a}->{slowest.b}"
        net.set_processing(self.router_processing, self.host_processing)
        return net


class Explicit(StrictModel):
    """Nodes and links written out by name."""

    kind: Literal["explicit"] = Field(description="The kind of topology.")
    nodes: Annotated[list[NodeDecl], Field(min_length=1)] = Field(description="Every host and router.")
    links: list[ExplicitLink] = Field(description="Every link, at most one between two nodes.")
    bottleneck_queue: str | None = Field(
        default=None, description="The queue reported as the bottleneck, e.g. 'r->h2'. Absent: none."
    )

    def expand(self) -> Network:
        net = Network()
        for i, node in enumerate(self.nodes):
            net.add_node(node.name, node.kind, f"nodes[{i}].name")
            if node.processing is not None:
                net.processing[node.name] = dict(node.processing)
        known = ", ".join(net.nodes)
        seen: set[frozenset[str]] = set()
        for i, link in enumerate(self.links):
            for end in ("a", "b"):
                name = getattr(link, end)
                if name not in net.nodes:
                    raise FieldError(f"links[{i}].{end}", f"no node named {show(name)}; nodes: {known}")
            if link.a == link.b:
                raise FieldError(f"links[{i}].b", f"a link needs two different nodes, got {show(link.a)} twice")
            ends = frozenset((link.a, link.b))
            if ends in seen:
                raise FieldError(f"links[{i}]", f"a second link between {link.a} and {link.b}; at most one is allowed")
            seen.add(ends)
            net.links.append(resolve_link(link.a, link.b, [link], f"links[{i}]", f"set links[{i}].rate"))
        return net


def _sensor_specs(value: Any) -> Any:
    """``sensors = 3`` is three sensors with the access spec only: ``[{}, {}, {}]``."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 1:
            raise FieldError("", f"expected at least one sensor (a count, or one link spec per sensor), got {value}")
        if value > MAX_SENSORS:
            raise FieldError("", f"at most {MAX_SENSORS} sensors are supported, got {value}")
        return [{} for _ in range(value)]
    return value


class Star(StrictModel):
    """Sensors -> router -> controller, the centralised control system of paper 001 (Dedu et al.).

    Nodes: hosts ``sensor0..``, the router ``router`` and the host ``controller``. ``sensors``
    is how many, or one link spec per sensor (each over ``access``). ``access`` applies to every
    sensor--router link (sensor->router is its forward direction, ``reverse`` router->sensor);
    ``bottleneck`` is the router--controller link (router->controller forward, with the
    router's queue). Links: router--controller first, then sensor_i--router. The bottleneck
    queue is ``router->controller`` unless ``bottleneck_queue`` says otherwise.
    """

    kind: Literal["star"] = Field(description="The kind of topology.")
    sensors: Annotated[
        list[LinkSpec],
        BeforeValidator(_sensor_specs),
        Field(min_length=1),
        Written(lambda: {"type": "integer", "minimum": 1, "maximum": MAX_SENSORS}, or_inner=True),
    ] = Field(description="How many sensors, or one link spec per sensor (each over access).")
    bottleneck: LinkSpec = Field(description="The link router--controller; router->controller is forward.")
    access: LinkSpec | None = Field(
        default=None, description="What every sensor's link has unless its own spec says otherwise."
    )
    bottleneck_queue: str | None = Field(
        default=None, description="The queue reported as the bottleneck. Absent: 'router->controller'."
    )
    router_processing: Processing | None = Field(
        default=None, description="Per-packet processing at every router (processing of an explicit node)."
    )
    host_processing: Processing | None = Field(
        default=None, description="Per-packet processing at every host: what it sends and what it receives."
    )

    def expand(self) -> Network:
        net = Network(default_bottleneck="router->controller")
        for i in range(len(self.sensors)):
            net.add_node(f"sensor{i}", "host", "")
        net.add_node("router", "router", "")
        net.add_node("controller", "host", "")
        net.links.append(resolve_link("router", "controller", [self.bottleneck], "bottleneck", "set bottleneck.rate"))
        for i, spec in enumerate(self.sensors):
            hint = f"set sensors[{i}].rate or access.rate"
            net.links.append(resolve_link(f"sensor{i}", "router", [self.access, spec], f"sensors[{i}]", hint))
        net.set_processing(self.router_processing, self.host_processing)
        return net


Topology = Annotated[Dumbbell | DaisyChain | Explicit | Star, Field(discriminator="kind")]
