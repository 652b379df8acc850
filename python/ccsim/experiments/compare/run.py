"""The matrix of ``ccsim compare``: which scenario keys vary (the congestion control of the TCP
flows, the discipline of the bottleneck queue), the sweep that runs every combination over common
seeds, and the ``ccsim`` commands that rerun the comparison or one of its cells."""

from __future__ import annotations

import copy
import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import ScenarioError
from ...scenario.overrides import apply_overrides
from ...scenario.schema import from_dict, read_toml
from .objective import Objective

# The papers' queue disciplines (ANCE: DT, RED, CoDel, PIE; Piotrowska: DT, PIE, CoDel), then
# the flow-queueing ones deployed today and the L4S DualQ (RFC 9332).
DEFAULT_QUEUES = ("droptail", "red", "codel", "pie", "fq_codel", "fq_pie", "cake", "dualpi2")
# Reno differs from NewReno only without SACK (it needs sack = false).
RENO_NEEDS_NO_SACK = "reno"

RUNS_TRACE_POINTS = 400  # trace samples per run when the scenario asks for none


@dataclass
class CompareSpec:
    """The comparison: scenario, what is varied, seeds."""

    file: str
    scenario: Path
    overrides: list[str]
    ccs: list[str]
    queues: list[Any]  # names, or tables with kind
    seeds: int
    bottleneck: str
    queue_key: str
    cc_keys: list[str]
    fixed: dict[str, Any]
    groups: list[str]
    has_control: bool
    has_transfers: bool
    """Flows with a size (workloads, transfers): completion times are metrics."""
    notes: list[str]
    master_seed: int = 0
    partners: dict[str, list[str]] = field(default_factory=dict)
    """Congestion controls that need particular queue disciplines (the registry's
    partner_queues, e.g. Prague an L4S queue): they run with those only."""

    def queue_label(self, queue: Any) -> str:
        return queue if isinstance(queue, str) else str(queue.get("kind"))

    def combinations(self) -> list[tuple[str, Any]]:
        return [
            (cc, q)
            for cc in self.ccs
            for q in self.queues
            if cc not in self.partners or self.queue_label(q) in self.partners[cc]
        ]


# A number in a label, with the time unit that may follow it (rtt500us, rtt10ms, rtt1.5s).
_NUMBER = re.compile(r"(\d+(?:\.\d+)?)(?:(ns|us|µs|μs|ms|s|min)(?![A-Za-z]))?")
_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0}


def group_order(label: str) -> tuple[Any, ...]:
    """Sort key of flow group labels by their numbers, not as text: ``rtt10ms`` before
    ``rtt100ms``, ``rtt500us`` before ``rtt1ms``, ``g9`` before ``g10``."""
    key: list[tuple[int, Any]] = []
    at = 0
    for match in _NUMBER.finditer(label):
        if match.start() > at:
            key.append((0, label[at : match.start()].lower()))
        unit = match.group(2)
        key.append((1, float(match.group(1)) * (_SECONDS[unit] if unit else 1.0)))
        at = match.end()
    if at < len(label):
        key.append((0, label[at:].lower()))
    return (*key, (2, label))


def _queue_table(base: Any, kind: str, registry: Any) -> dict[str, Any]:
    """Discipline ``kind`` at its defaults, with the base queue's limit when it has one."""
    table: dict[str, Any] = {"kind": kind}
    model = registry.model("queue", kind, "--queue")
    limit = base.get("limit") if isinstance(base, dict) else None
    if limit is not None and model.param("limit") is not None:
        table["limit"] = limit
    return table


def _bottleneck_location(data: dict[str, Any], topo_kind: str, name: str, file: str) -> tuple[str, bool]:
    """The scenario key of the link spec holding the bottleneck queue, and whether the queue is
    its forward (a->b) direction."""
    frm, _, to = name.partition("->")
    topo = data.get("topology", {})
    if topo_kind == "dumbbell" and {frm, to} == {"A", "B"}:
        return "topology.bottleneck", frm == "A"
    if topo_kind == "star" and {frm, to} == {"router", "controller"}:
        return "topology.bottleneck", frm == "router"
    if topo_kind == "explicit":
        for i, link in enumerate(topo.get("links", [])):
            if {link.get("a"), link.get("b")} == {frm, to}:
                return f"topology.links[{i}]", link.get("a") == frm
    if topo_kind == "daisy_chain":
        for i in range(len(topo.get("hops", []))):
            if {f"R{i}", f"R{i + 1}"} == {frm, to}:
                return f"topology.hops[{i}]", frm == f"R{i}"
    raise ScenarioError(
        file,
        "topology.bottleneck_queue",
        f"compare varies the bottleneck queue, but {name!r} is an access link's; name a "
        "router-to-router queue (the dumbbell's A->B, a chain hop, an explicit link)",
    )


def _check_model(registry: Any, family: str, name: str, file: str, option: str) -> None:
    try:
        registry.model(family, name, option)
    except ValueError as exc:
        raise ScenarioError(file, option, getattr(exc, "message", str(exc))) from None


def _get(data: Any, path: list[str | int]) -> Any:
    for part in path:
        if isinstance(part, int):
            if not isinstance(data, list) or part >= len(data):
                return None
            data = data[part]
        else:
            if not isinstance(data, dict):
                return None
            data = data.get(part)
    return data


def _path(key: str) -> list[str | int]:
    from ...scenario.overrides import parse_key

    return parse_key(key)


def prepare(
    file: str | Path,
    ccs: list[str] | None = None,
    queues: list[str] | None = None,
    seeds: int = 3,
    overrides: list[str] | None = None,
    master_seed: int = 0,
) -> CompareSpec:
    """Check the scenario and the lists; decide what is varied (see the package documentation,
    ``ccsim.experiments.compare``)."""
    from ...scenario.registry import get_registry

    file = str(file)
    registry = get_registry()
    data = read_toml(file)
    apply_overrides(data, list(overrides or []), file)
    scenario = from_dict(copy.deepcopy(data), file)
    config = scenario.to_config()
    notes: list[str] = []
    if not isinstance(seeds, int) or seeds < 1:
        raise ScenarioError(file, "--seeds", f"expected at least 1, got {seeds!r}")

    def tcp_tables(key: str) -> list[int]:
        tables = data.get(key) or []
        kinds = [t.get("transport", "tcp") for t in tables]
        return [i for i, k in enumerate(kinds) if (k.get("kind") if isinstance(k, dict) else k) == "tcp"]

    flows = data.get("flows") or []
    tcp_flows, tcp_workloads = tcp_tables("flows"), tcp_tables("workloads")
    if not tcp_flows and not tcp_workloads:
        raise ScenarioError(file, "flows", "compare varies the congestion control of TCP flows; the scenario has none")
    sack = any(
        f["transport"]["kind"] == "tcp" and f["transport"].get("params", {}).get("sack", True)
        for f in config["flows"]
        if f.get("transport")
    )
    queue_names = list(queues) if queues is not None else list(DEFAULT_QUEUES)
    if not queue_names:
        raise ScenarioError(file, "--queue", "give at least one queue discipline")
    for name in queue_names:
        _check_model(registry, "queue", name, file, "--queue")
    partners: dict[str, list[str]] = {}
    if ccs is None:
        # Congestion controls that need a queue discipline of their own (the registry's
        # partner_queues) are left out unless one of those is compared.
        ccs, left = [], []
        for model in registry.models("cc"):
            if model.partner_queues and not set(model.partner_queues) & set(queue_names):
                left.append(f"{model.name} (needs queue {' or '.join(repr(q) for q in model.partner_queues)})")
            elif not (model.name == RENO_NEEDS_NO_SACK and sack):
                ccs.append(model.name)
        if left:
            notes.append(f"congestion controls left out by default: {', '.join(left)}")
        if sack:
            notes.append("reno left out: the flows use SACK, with which reno recovers as newreno does")
    else:
        if not ccs:
            raise ScenarioError(file, "--cc", "give at least one congestion control")
        for name in ccs:
            _check_model(registry, "cc", name, file, "--cc")
    for name in ccs:
        needs = registry.model("cc", name).partner_queues
        if needs:
            partners[name] = [q for q in queue_names if q in needs]
            if not partners[name]:
                wanted = " or ".join(repr(q) for q in needs)
                raise ScenarioError(file, "--cc", f"{name} needs queue {wanted} at the bottleneck; add it to --queue")
    if len(set(ccs)) != len(ccs) or len(set(queue_names)) != len(queue_names):
        raise ScenarioError(file, "--cc" if len(set(ccs)) != len(ccs) else "--queue", "a name is listed twice")

    bottleneck = config.get("bottleneck")
    if not bottleneck:
        raise ScenarioError(file, "topology.bottleneck_queue", "the scenario names no bottleneck queue")
    prefix, forward = _bottleneck_location(data, scenario.topology.kind, bottleneck, file)
    link = _get(data, _path(prefix)) or {}
    base_queue = link.get("queue") if forward else (_get(link, ["reverse", "queue"]) or link.get("queue"))
    fixed: dict[str, Any] = {}
    if forward:
        queue_key = f"{prefix}.queue"
        if _get(link, ["reverse", "queue"]) is None:
            # The link's queue applies to both directions; keep the other one as it was.
            fixed[f"{prefix}.reverse.queue"] = copy.deepcopy(link.get("queue") or "droptail")
    else:
        queue_key = f"{prefix}.reverse.queue"
    base_table = base_queue if isinstance(base_queue, dict) else {}
    queue_tables = [_queue_table(base_table, name, registry) for name in queue_names]

    # The report draws the bottleneck queue and the windows of the top combinations.
    if scenario.trace is None:
        interval_ms = max(10, int(scenario.simulation.duration / 1e6 / RUNS_TRACE_POINTS))
        fixed["trace"] = {"interval": f"{interval_ms}ms", "queues": [bottleneck], "cwnd": True}
    else:
        if not scenario.trace.cwnd:
            fixed["trace.cwnd"] = True
        if scenario.trace.queues and bottleneck not in scenario.trace.queues:
            fixed["trace.queues"] = [*scenario.trace.queues, bottleneck]
    if tcp_flows and len(tcp_flows) == len(flows):
        cc_keys = ["flows.cc"]
    else:
        cc_keys = [f"flows[{i}].cc" for i in tcp_flows]
    cc_keys += [f"workloads[{i}].cc" for i in tcp_workloads]
    # Jain within a group says something only when the group has two flows or more. The
    # groups are the compiled flows' (a table over several pairs is grouped by RTT).
    sizes: dict[str, int] = {}
    for group in scenario.flow_groups():
        if group:
            sizes[group] = sizes.get(group, 0) + 1
    groups = sorted((g for g, n in sizes.items() if n >= 2), key=group_order)
    return CompareSpec(
        file=file,
        scenario=Path(file).resolve(),
        overrides=list(overrides or []),
        ccs=list(ccs),
        queues=queue_tables,
        seeds=seeds,
        bottleneck=bottleneck,
        queue_key=queue_key,
        cc_keys=cc_keys,
        fixed=fixed,
        groups=groups,
        has_control=bool(config.get("control")),
        has_transfers=bool(config.get("workloads")) or any(f["app"]["kind"] == "transfer" for f in config["flows"]),
        notes=notes,
        master_seed=master_seed,
        partners=partners,
    )


def check_objective(spec: CompareSpec, objective: Objective) -> None:
    """Refuse, before anything runs, an objective that the scenario cannot measure."""
    names = list(objective.weights) + [c.metric for c in objective.constraints]
    if "itae" in names and not spec.has_control:
        raise ScenarioError(spec.file, "--objective", "ITAE needs a [[control]] loop in the scenario")
    for name in ("p99_fct_short", "mean_slowdown"):
        if name in names and not spec.has_transfers:
            raise ScenarioError(
                spec.file, "--objective", f"{name} needs flows of a known size ([[workloads]] or transfer flows)"
            )
    for name in names:
        if name.startswith("jain.") and name[5:] not in spec.groups:
            groups = ", ".join(spec.groups) or "none"
            raise ScenarioError(
                spec.file, "--objective", f"no flow group {name[5:]!r} of two flows or more (groups: {groups})"
            )


def sweep_spec(spec: CompareSpec) -> Any:
    """The sweep that runs the matrix: one point per combination, in ``combinations()`` order."""
    from ...scenario.overrides import parse_value
    from ..sweep import SweepSpec

    base = read_toml(spec.file)
    fixed: dict[str, Any] = {}
    for text in spec.overrides:
        key, _, raw = text.partition("=")
        fixed[key.strip()] = parse_value(raw.strip())
    fixed.update(spec.fixed)
    points = []
    for cc, queue in spec.combinations():
        point: dict[str, Any] = {key: cc for key in spec.cc_keys}
        point[spec.queue_key] = copy.deepcopy(queue)
        points.append(point)
    return SweepSpec(
        file=spec.file,
        scenario=spec.scenario,
        base=base,
        fixed=fixed,
        points=points,
        seeds=spec.seeds,
        seed_mode="common",
        master_seed=spec.master_seed,
        description=f"compare {Path(spec.file).name}",
    )


def run_compare(
    spec: CompareSpec, out: str | Path, jobs: int | None = None, scheduler: str | None = None, progress: bool = False
) -> Any:
    """Run (or resume) the matrix into ``out``; the sweep's result (``SweepInterrupted`` on
    Ctrl-C/SIGTERM, with everything finished kept)."""
    from ..sweep import run_sweep

    return run_sweep(sweep_spec(spec), out, jobs=jobs, scheduler=scheduler, progress=progress)


# --- commands ---------------------------------------------------------------------------------


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(type(value).__name__)


def _set_text(key: str, value: Any) -> str:
    text = value if isinstance(value, str) and re.fullmatch(r"[A-Za-z0-9_.\-]+", value) else _toml_value(value)
    return f"--set {shlex.quote(f'{key}={text}')}"


def rerun_command(spec: CompareSpec, cc: str, queue: Any, seed: int | None, out: str | None = None) -> str:
    """``ccsim run`` of one cell (one seed when given), identical to the comparison's run."""
    parts = ["ccsim run", shlex.quote(spec.file)]
    parts += [f"--set {shlex.quote(o)}" for o in spec.overrides]
    parts += [_set_text(k, v) for k, v in spec.fixed.items()]
    parts += [_set_text(k, cc) for k in spec.cc_keys]
    parts.append(_set_text(spec.queue_key, queue))
    if seed is not None:
        parts.append(f"--seed {seed}")
    if out:
        parts.append(f"--out {shlex.quote(out)}")
    return " ".join(parts)


def compare_command(spec: CompareSpec, objective: Objective, out: Path) -> str:
    parts = [
        "ccsim compare",
        shlex.quote(spec.file),
        "--cc",
        ",".join(spec.ccs),
        "--queue",
        ",".join(spec.queue_label(q) for q in spec.queues),
        "--seeds",
        str(spec.seeds),
        "--objective",
        shlex.quote(objective.text),
        "--out",
        shlex.quote(str(out)),
    ]
    if spec.master_seed:
        parts.append(f"--master-seed {spec.master_seed}")
    parts += [f"--set {shlex.quote(o)}" for o in spec.overrides]
    return " ".join(parts)
