"""Memory limits: what a run will hold in memory, estimated from its configuration before it
starts, and a refusal (exit code 2) when that exceeds the machine's budget.

A run without logs needs memory that does not grow with simulated time: the engine's state
(nodes, links, flows), the packets in queues and on the wire (bounded by the queue limits and
the flows' windows) and the fixed cost of the Python process. What grows with simulated time
is what the scenario asks to record:

- sampled series (``[trace] interval``): one value per series per sample, for the whole run;
- the drop/mark log (``trace.events``), the message log (``trace.messages``) and the RTT log
  (``trace.rtt``): one row per event, so they grow with the traffic;
- the control loops' traces (``[[control]]``): one row per loop per sampling instant.

Each row is held several times at the end of a run (the engine's vectors, its JSON, Python's
parsed objects, the DataFrame and Parquet buffers); the per-row costs below are measured peak
RSS differences of ``ccsim run --out`` (docs/robustness.md gives the runs), rounded up.

Row counts of the logs are bounded from the configuration: a flow delivers at most the
packets its path's slowest link can carry (at the highest rate a link's ``schedule`` gives
it, and with links that go down, at the network's highest rate), and flows whose slowest link
is the same link share it; each delivered data packet gives at most one RTT sample and, on the way, at most one
drop or mark (open-loop applications — cbr, poisson — add their offered packets, which a
congested queue may drop). Messages are counted per application: one for bulk and transfer,
one per period for periodic and control loops, rate / packet size for cbr and poisson.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..errors import ScenarioError, show
from . import units

__all__ = ["MemoryItem", "MemoryEstimate", "estimate", "machine_budget", "check", "parse_memory"]

# Bytes of peak memory per recorded row (or per sampled value), through the whole pipeline:
# engine vectors + results JSON + parsed Python objects + DataFrame + Parquet writer.
BYTES_PER_SAMPLE = 120
BYTES_PER_EVENT_ROW = 500
BYTES_PER_MESSAGE_ROW = 400
BYTES_PER_RTT_ROW = 400
BYTES_PER_CONTROL_ROW = 500
# The process: Python with pandas, pyarrow and matplotlib imported, and the engine's code.
BASE_BYTES = 200 * 2**20
# Engine state per flow (two endpoints, their statistics and ledgers, timers) and per link
# direction (queue, statistics), per packet held in a queue or on the wire, per next-hop entry.
BYTES_PER_FLOW = 16 * 2**10
BYTES_PER_LINK_DIRECTION = 2 * 2**10
BYTES_PER_PACKET = 160
BYTES_PER_ROUTE = 4
# Header bytes added to a payload when a flow's packet size must be guessed.
MIN_PACKET_BYTES = 40
# Share of the machine's available memory one run may take.
BUDGET_SHARE = 0.8


@dataclass(frozen=True)
class MemoryItem:
    """One part of a run's memory: what it is, the scenario field that controls it, how many
    rows (values) and bytes, and how to make it smaller."""

    what: str
    field: str
    rows: int
    bytes: int
    shrink: str


@dataclass
class MemoryEstimate:
    """The estimated peak memory of a run, by part."""

    items: list[MemoryItem] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(item.bytes for item in self.items)

    def largest(self) -> MemoryItem:
        return max(self.items, key=lambda item: item.bytes)

    def describe(self) -> str:
        parts = sorted(self.items, key=lambda item: -item.bytes)
        return ", ".join(f"{item.what} {_mib(item.bytes)}" for item in parts if item.bytes >= 2**20)


def _mib(n: float) -> str:
    if n >= 2**30:
        return f"{n / 2**30:.1f} GiB"
    return f"{n / 2**20:.0f} MiB"


# --- the network: paths and the packets they can carry ----------------------------------------------


def _paths(config: dict[str, Any]) -> list[list[tuple[int, str]]]:
    """Per flow: the link directions of its path as the engine routes it (net/route.rs), as
    (link index, "ab" or "ba"); empty when its hosts are not connected or the configuration
    names a node that does not exist (the engine reports that when it builds the run)."""
    from .. import _core  # imported on use: the limits module loads without the engine

    try:
        paths = _core.flow_paths(json.dumps(config))
    except _core.ConfigError:
        return [[] for _ in config["flows"]]
    return [[(hop // 2, "ab" if hop % 2 == 0 else "ba") for hop in path] for path in paths]


def _widened(config: dict[str, Any]) -> dict[str, Any]:
    """``config`` with each link direction at the highest rate and the longest delay its
    ``schedule`` gives it, and, when a link goes down somewhere (traffic may then take another
    path), every direction at the highest rate of the network: bounds that hold whatever the
    changes do. ``config`` itself when no link has a schedule."""
    links = config["links"]
    if not any(link.get("schedule") for link in links):
        return config
    rerouted = any("up" in change for link in links for change in link.get("schedule", []))
    widened = []
    for link in links:
        link = {**link, "ab": dict(link["ab"]), "ba": dict(link["ba"])}
        for change in link.get("schedule", []):
            for way in [change["direction"]] if "direction" in change else ["ab", "ba"]:
                direction = link[way]
                direction["rate_bps"] = max(direction["rate_bps"], change.get("rate_bps", 0))
                direction["delay_ns"] = max(direction.get("delay_ns", 0), change.get("delay_ns", 0))
        widened.append(link)
    if rerouted:
        fastest = max(link[way]["rate_bps"] for link in widened for way in ("ab", "ba"))
        for link in widened:
            for way in ("ab", "ba"):
                link[way]["rate_bps"] = fastest
    return {**config, "links": widened}


def _param(spec: dict[str, Any] | None, name: str, default: Any) -> Any:
    if not spec:
        return default
    value = spec.get("params", {}).get(name)
    return default if value is None else value


def _packet_bytes(flow: dict[str, Any]) -> int:
    """A flow's data packet size on the wire (its transport's segment size plus headers, or
    the application's packet size), at least MIN_PACKET_BYTES."""
    transport, app = flow["transport"], flow["app"]
    kind = transport["kind"]
    if kind == "tcp":
        size = _param(transport, "mss", 1448) + _param(transport, "header", 52)
    elif kind == "dccp":
        size = _param(transport, "mps", 1464) + _param(transport, "header", 36)
    else:
        size = 1472 + _param(transport, "header", 28)
    if app["kind"] in ("cbr", "poisson"):
        size = min(size, _param(app, "packet_size", 1000) + 28)
    elif app["kind"] in ("periodic", "reply", "ncs"):
        size = min(size, _param(app, "size", 48) + 28)
    return max(MIN_PACKET_BYTES, int(size))


def _delivered_packets(
    config: dict[str, Any], paths: list[list[tuple[int, str]]], window_s: float
) -> tuple[float, float, list[float]]:
    """(data packets all flows can deliver, of which TCP flows', per-flow bound): each flow is
    bounded by its path's slowest link direction; flows sharing that direction share it."""
    shared: dict[tuple[int, str], float] = {}
    per_flow: list[float] = []
    tcp_links: set[tuple[int, str]] = set()
    for flow, hops in zip(config["flows"], paths):
        if not hops:
            per_flow.append(0.0)
            continue
        slowest = min(hops, key=lambda h: config["links"][h[0]][h[1]]["rate_bps"])
        rate = config["links"][slowest[0]][slowest[1]]["rate_bps"]
        packets = rate * window_s / (8 * _packet_bytes(flow))
        per_flow.append(packets)
        shared[slowest] = max(shared.get(slowest, 0.0), packets)
        if flow["transport"]["kind"] == "tcp":
            tcp_links.add(slowest)
    total = sum(shared.values())
    tcp = sum(v for k, v in shared.items() if k in tcp_links)
    return total, tcp, per_flow


def _window_packets(flow: dict[str, Any]) -> int:
    """Packets a flow can have in the network at once: a TCP flow's receive window (default
    4 MiB), others 1000 (their send buffers and queues bound them)."""
    transport = flow["transport"]
    if transport["kind"] != "tcp":
        return 1000
    rwnd = _param(transport, "rwnd", {"bytes": 4 * 2**20})
    mss = max(1, int(_param(transport, "mss", 1448)))
    return int(rwnd.get("packets", 0)) + int(rwnd.get("bytes", 0)) // mss + 10


def _held_packets(config: dict[str, Any], paths: list[list[tuple[int, str]]]) -> int:
    """Packets the network can hold at once, at most every queue full and at most every flow's
    window: queues fill where a path narrows, so per link direction that is some flow's
    slowest, its limit plus its bandwidth-delay product (at the longest round trip of its
    flows), twice over for slow start's overshoot, plus twice every flow's initial window (its
    first bursts wait in the faster queues before the bottleneck)."""
    links = config["links"]
    queued = 0
    for link in links:
        for way in ("ab", "ba"):
            queued += _limit_packets(link[way])
    windows = 0
    narrow: dict[tuple[int, str], float] = {}  # slowest direction -> longest round trip (s)
    for flow, hops in zip(config["flows"], paths):
        windows += _window_packets(flow)
        if hops:
            slowest = min(hops, key=lambda h: links[h[0]][h[1]]["rate_bps"])
            rtt = 2 * sum(links[i][way].get("delay_ns", 0) for i, way in hops) / 1e9
            narrow[slowest] = max(narrow.get(slowest, 0.0), rtt)
    initial = sum(2 * _initial_window(flow) for flow in config["flows"])
    at_bottlenecks = initial + sum(
        2 * (_limit_packets(links[i][way]) + links[i][way]["rate_bps"] * rtt / (8 * 1500))
        for (i, way), rtt in narrow.items()
    )
    return int(min(queued, windows, at_bottlenecks)) if config["flows"] else 0


def _limit_packets(direction: dict[str, Any]) -> int:
    limit = _param(direction["queue"], "limit", {"packets": 1000})
    return int(limit.get("packets", 0)) + int(limit.get("bytes", 0)) // 1500


def _initial_window(flow: dict[str, Any]) -> int:
    if flow["transport"]["kind"] == "tcp":
        return int(_param(flow["transport"], "init_cwnd", 10))
    return 10


def _offered_packets(flow: dict[str, Any], window_s: float) -> float:
    """Packets an open-loop application offers whatever the network does."""
    app = flow["app"]
    if app["kind"] in ("cbr", "poisson"):
        return _param(app, "rate", 0) * window_s / (8 * max(1, _param(app, "packet_size", 1000)))
    return 0.0


def _messages(config: dict[str, Any], window_s: float, per_flow: list[float]) -> float:
    loops = {c["sensor_flow"]: c for c in config.get("control", []) if c.get("sensor_flow") is not None}
    loops.update({c["actuator_flow"]: c for c in config.get("control", []) if c.get("actuator_flow") is not None})
    total = 0.0
    for i, flow in enumerate(config["flows"]):
        app = flow["app"]
        kind = app["kind"]
        if kind in ("bulk", "transfer"):
            total += 1
        elif kind == "periodic":
            total += window_s * 1e9 / max(1, _param(app, "period", 1)) + 1
        elif kind in ("cbr", "poisson"):
            total += _offered_packets(flow, window_s) + 1
        elif kind == "ncs" and i in loops:
            total += window_s * 1e9 / max(1, loops[i]["period_ns"]) + 1
        else:  # reply (answers another flow's messages), anything new: what the path carries
            total += per_flow[i] + 1
    return total


def estimate(config: dict[str, Any]) -> MemoryEstimate:
    """The estimated peak memory of running the core configuration ``config`` (config.rs),
    results written included."""
    duration_ns = int(config["duration_ns"])
    window_s = duration_ns / 1e9
    links = config["links"]
    nodes = config["nodes"]
    flows = config["flows"]
    trace = config.get("trace") or {}
    est = MemoryEstimate()
    # What does not grow with simulated time.
    paths = _paths(config)  # the engine's routes, once for every part below
    config = _widened(config)
    packets = _held_packets(config, paths)
    # Routing (net/route.rs): a next-hop entry for every node with several links and every
    # host that ends a flow.
    degree = [0] * len(nodes)
    for link in links:
        degree[link["a"]] += 1
        degree[link["b"]] += 1
    ends = len({f["src"] for f in flows} | {f["dst"] for f in flows})
    routes = BYTES_PER_ROUTE * ends * sum(d > 1 for d in degree)
    state = (
        BASE_BYTES
        + BYTES_PER_FLOW * len(flows)
        + BYTES_PER_LINK_DIRECTION * 2 * len(links)
        + BYTES_PER_PACKET * packets
        + routes
    )
    est.items.append(MemoryItem("engine and process", "", 0, state, "fewer flows or smaller queue limits"))
    # Sampled series.
    interval = trace.get("interval_ns")
    if interval:
        samples = duration_ns // int(interval) + 1
        routers = {i for i, node in enumerate(nodes) if node["kind"] == "router"}
        queues = len(trace.get("queues") or []) or sum(
            (link["a"] in routers) + (link["b"] in routers) for link in links
        )
        cwnd = sum(f["transport"]["kind"] in ("tcp", "dccp") for f in flows) if trace.get("cwnd", True) else 0
        counters = 2 * len(flows) if trace.get("flow_counters") else 0
        series = 1 + 3 * queues + cwnd + counters
        est.items.append(
            MemoryItem(
                f"sampled series ({series} series x {samples:,} samples)",
                "trace.interval",
                series * samples,
                series * samples * BYTES_PER_SAMPLE,
                "sample less often (a longer trace.interval), trace fewer queues (trace.queues), "
                "trace.cwnd = false, or a shorter simulation.duration",
            )
        )
    # The logs: bounded by what the flows' paths can deliver.
    if trace.get("events") or trace.get("messages") or trace.get("rtt"):
        delivered, tcp_delivered, per_flow = _delivered_packets(config, paths, window_s)
        if trace.get("events"):
            rows = int(delivered + sum(_offered_packets(f, window_s) for f in flows))
            est.items.append(
                MemoryItem(
                    f"drop/mark log (up to {rows:,} rows)",
                    "trace.events",
                    rows,
                    rows * BYTES_PER_EVENT_ROW,
                    "trace.events = false, or a shorter simulation.duration",
                )
            )
        if trace.get("messages"):
            rows = int(_messages(config, window_s, per_flow))
            est.items.append(
                MemoryItem(
                    f"message log (up to {rows:,} rows)",
                    "trace.messages",
                    rows,
                    rows * BYTES_PER_MESSAGE_ROW,
                    "trace.messages = false, or a shorter simulation.duration",
                )
            )
        if trace.get("rtt"):
            rows = int(tcp_delivered)
            est.items.append(
                MemoryItem(
                    f"RTT log (up to {rows:,} rows)",
                    "trace.rtt",
                    rows,
                    rows * BYTES_PER_RTT_ROW,
                    "trace.rtt = false, or a shorter simulation.duration",
                )
            )
    control = config.get("control") or []
    if control:
        rows = sum(duration_ns // max(1, int(c["period_ns"])) + 1 for c in control)
        est.items.append(
            MemoryItem(
                f"control-loop traces ({rows:,} rows)",
                "control",
                rows,
                rows * BYTES_PER_CONTROL_ROW,
                "a longer control sampling_period or a shorter simulation.duration",
            )
        )
    return est


# --- the budget ----------------------------------------------------------------------------------------


def machine_budget(meminfo: str = "/proc/meminfo") -> int | None:
    """BUDGET_SHARE of the memory available now (``MemAvailable`` of /proc/meminfo, or
    ``MemTotal`` on kernels without it); None where /proc/meminfo cannot be read."""
    try:
        with open(meminfo, encoding="ascii") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
    except (OSError, ValueError):
        return None
    for key in ("MemAvailable", "MemTotal"):
        text = fields.get(key, "").split()
        if len(text) == 2 and text[1] == "kB" and text[0].isdigit():
            return int(int(text[0]) * 1024 * BUDGET_SHARE)
    return None


def parse_memory(text: str) -> int:
    """``--max-memory``: a byte count with a unit (``"2GiB"``, ``"500MB"``); ValueError if bad."""
    value = units.parse_bytes(text)
    if value <= 0:
        raise units.UnitError(f"{show(text)}: the memory budget must be more than 0B")
    return value


def check(config: dict[str, Any], file: str, max_memory: int | None = None) -> MemoryEstimate:
    """The estimate of ``config``; a ScenarioError naming the field that grows largest when it
    exceeds ``max_memory`` (default: the machine's budget; no check when that is unknown)."""
    budget = machine_budget() if max_memory is None else max_memory
    est = estimate(config)
    if budget is None or est.total <= budget:
        return est
    worst = est.largest()
    source = "--max-memory" if max_memory is not None else "80 % of the memory available"
    raise ScenarioError(
        file,
        worst.field,
        f"this run could need up to about {_mib(est.total)} of memory ({est.describe()}), more than the budget of "
        f"{_mib(budget)} ({source}); to shrink it: {worst.shrink}; or raise the budget with --max-memory",
    )
