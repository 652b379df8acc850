"""``[[workloads]]``: open-loop traffic, flows that arrive while the run goes on (the engine's
``workload.rs``), and the flow-size distributions the datacenter literature uses.

A workload is a Poisson process of flows between hosts (dumbbell ``pairs``, or ``src`` and
``dst`` host lists), each a transfer of a size drawn from ``size``: a built-in distribution
(``"websearch"``, ``"datamining"``), a CDF file, a fixed size (``"100kB"``) or a table of the
``transfer`` application's parameters (``{ size = "50kB", distribution = "pareto", shape =
1.2 }``). The rate is given as ``arrivals = { rate = "50/s" }`` or as a ``load``, a fraction of
the bottleneck's rate that the flows' bytes take on average.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, model_validator

from ..errors import FieldError, show
from . import units
from .fields import CcAlgo, StrictModel, Time, TransportAlgo, algo
from .profiles import apply_profile
from .registry import get_registry
from .written import Written

__all__ = ["Arrivals", "Workload", "FlowSize", "BUILTIN_CDFS", "read_cdf", "cdf_mean"]

# Flow sizes (bytes) and cumulative probabilities of the two workloads of the datacenter
# literature, sampled with linear interpolation between points.
BUILTIN_CDFS: dict[str, tuple[tuple[float, float], ...]] = {
    # Web search: the background flows of a production search cluster, Alizadeh et al., "Data
    # Center TCP (DCTCP)", SIGCOMM 2010, Fig. 4; the points as tabulated for HPCC's traffic
    # generator (Li et al., "HPCC", SIGCOMM 2019). Mean 1.71 MB; 60 % of flows under 200 kB.
    "websearch": (
        (0.0, 0.0),
        (10_000.0, 0.15),
        (20_000.0, 0.20),
        (30_000.0, 0.30),
        (50_000.0, 0.40),
        (80_000.0, 0.53),
        (200_000.0, 0.60),
        (1_000_000.0, 0.70),
        (2_000_000.0, 0.80),
        (5_000_000.0, 0.90),
        (10_000_000.0, 0.97),
        (30_000_000.0, 1.0),
    ),
    # Data mining: Greenberg et al., "VL2", SIGCOMM 2009, Fig. 2, in 1460-byte packets as
    # tabulated for the pFabric and PIAS simulations (Alizadeh et al. SIGCOMM 2013; Bai et al.
    # NSDI 2015). Half the flows are one packet; 1 % are above 97 MB; mean 7.47 MB.
    "datamining": tuple(
        (packets * 1460.0, p)
        for packets, p in (
            (1, 0.5),
            (2, 0.6),
            (3, 0.7),
            (7, 0.8),
            (267, 0.9),
            (2107, 0.95),
            (66667, 0.99),
            (666667, 1.0),
        )
    ),
}

# Largest CDF file read: a CDF is a few hundred lines at most.
MAX_CDF_BYTES = 1 << 20


def cdf_mean(points: tuple[tuple[float, float], ...]) -> float:
    """The mean of a CDF sampled with linear interpolation; a first point of probability p > 0
    is that size with probability p (``workload.rs`` ``Sizes::mean``)."""
    mean = points[0][0] * points[0][1]
    for (x0, p0), (x1, p1) in zip(points, points[1:]):
        mean += (p1 - p0) * (x0 + x1) / 2
    return mean


def check_cdf(points: list[tuple[float, float]]) -> tuple[tuple[float, float], ...]:
    """Points (bytes, cumulative probability), both non-decreasing, the last probability 1; a
    CDF in percent (its last point 100) is scaled to probabilities."""
    if not points:
        raise FieldError("", "a CDF needs at least one point (bytes, cumulative probability)")
    if points[-1][1] == 100:
        points = [(x, p / 100) for x, p in points]
    for k, (x, p) in enumerate(points):
        if not (math.isfinite(x) and x >= 0):
            raise FieldError(f"[{k}]", f"a size must be a number of bytes >= 0, got {show(x)}")
        if not 0 <= p <= 1:
            raise FieldError(f"[{k}]", f"a cumulative probability must be in [0, 1] (or percent), got {show(p)}")
        if k and (x < points[k - 1][0] or p < points[k - 1][1]):
            raise FieldError(f"[{k}]", "sizes and probabilities must not decrease")
    if points[-1][1] != 1:
        raise FieldError("", f"the last point's cumulative probability must be 1 (or 100 %), got {points[-1][1]}")
    return tuple(points)


def read_cdf(path: Path) -> tuple[tuple[float, float], ...]:
    """A CDF file: one point per line, ``bytes cumulative_probability`` (probability in [0, 1]
    or in percent), blank lines and ``#`` comments allowed. FieldError when it cannot be read."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_CDF_BYTES + 1)
    except OSError as exc:
        raise FieldError("", f"cannot read CDF file {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_CDF_BYTES:
        raise FieldError("", f"CDF file {path} is larger than {MAX_CDF_BYTES // 1024} KiB")
    points = []
    for n, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        text = line.split("#", 1)[0].split()
        if not text:
            continue
        try:
            x, p = (float(v) for v in text[:2]) if len(text) >= 2 else (math.nan, math.nan)
        except ValueError:
            x = p = math.nan
        if len(text) < 2 or math.isnan(x) or math.isnan(p):
            raise FieldError("", f"{path} line {n}: expected 'bytes cumulative_probability', got {show(line)}")
        points.append((x, p))
    try:
        return check_cdf(points)
    except FieldError as exc:
        raise FieldError("", f"{path}: {exc.field and f'point {exc.field}: '}{exc.message}") from None


@dataclass(frozen=True)
class FlowSize:
    """A workload's flow sizes: an empirical CDF, or the ``transfer`` application's
    parameters (canonical units)."""

    label: str
    cdf: tuple[tuple[float, float], ...] | None = None
    params: tuple[tuple[str, Any], ...] = ()

    @property
    def mean(self) -> float:
        """Mean size in bytes."""
        if self.cdf is not None:
            return cdf_mean(self.cdf)
        return float(dict(self.params)["size"])


def _read_size(value: Any) -> FlowSize:
    if isinstance(value, FlowSize):
        return value
    if isinstance(value, str) and value in BUILTIN_CDFS:
        return FlowSize(label=value, cdf=BUILTIN_CDFS[value])
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        try:
            size = units.parse_bytes(value)
        except units.UnitError:
            if isinstance(value, str) and any(c in value for c in "/.") and not value[:1].isdigit():
                return _cdf_file(value)
            raise FieldError(
                "",
                f"expected a size ('100kB'), a built-in distribution ({', '.join(BUILTIN_CDFS)}), a CDF file "
                f"or a table with size = ..., got {show(value)}",
            ) from None
        if size <= 0:
            raise FieldError("", "a flow size must be at least 1B")
        return FlowSize(label=units.format_bytes(size), params=(("size", size),))
    if isinstance(value, dict):
        if "cdf" in value:
            if len(value) > 1:
                raise FieldError("", "a size table with cdf = ... takes nothing else")
            return _cdf_file(value["cdf"])
        if "size" not in value:
            raise FieldError("size", "required: the size, or the mean of the distribution")
        params = get_registry().validate_params("app", "transfer", dict(value))
        label = f"{params.get('distribution', 'fixed')} {units.format_bytes(params['size'])}"
        return FlowSize(label=label, params=tuple(sorted(params.items())))
    raise FieldError("", f"expected a size, a distribution name, a CDF file or a table, got {show(value)}")


def _cdf_file(name: Any) -> FlowSize:
    from ..engine.user_models import base_dir

    if not isinstance(name, str) or not name:
        raise FieldError("", f"expected the name of a CDF file, got {show(name)}")
    path = Path(name)
    if not path.is_absolute():
        path = (base_dir() or Path.cwd()) / path
    return FlowSize(label=name, cdf=read_cdf(path))


def _size_written() -> dict[str, Any]:
    return {
        "anyOf": [
            {"enum": list(BUILTIN_CDFS)},
            {"type": "string", "description": "a size such as '100kB', or a CDF file (bytes, probability per line)"},
            {"type": "object", "description": "the transfer application's size, distribution, shape, size_min"},
        ]
    }


SizeChoice = Annotated[FlowSize, BeforeValidator(_read_size), Written(_size_written)]
"""A workload's flow sizes."""


def _read_rate(value: Any) -> float:
    """Arrivals per second: ``"50/s"``, ``"3/ms"`` or a number (per second)."""
    if isinstance(value, bool):
        raise FieldError("", f"expected arrivals per second such as '50/s', got {show(value)}")
    if isinstance(value, (int, float)):
        rate = float(value)
    elif isinstance(value, str) and "/" in value:
        count, _, per = value.partition("/")
        try:
            n = float(count)
            period = units.parse_time(f"1{per.strip()}")
        except (ValueError, units.UnitError):
            raise FieldError("", f"expected arrivals per time such as '50/s' or '2/ms', got {show(value)}") from None
        rate = n * 1e9 / period
    else:
        raise FieldError("", f"expected arrivals per time such as '50/s', got {show(value)}")
    if not (math.isfinite(rate) and rate > 0):
        raise FieldError("", f"the arrival rate must be positive, got {show(value)}")
    return rate


ArrivalRate = Annotated[
    float,
    BeforeValidator(_read_rate),
    Written(lambda: {"anyOf": [{"type": "number", "exclusiveMinimum": 0}, {"type": "string", "pattern": r"/"}]}),
]


class Arrivals(StrictModel):
    """How flows arrive: a Poisson process of a rate, or of the rate that makes their bytes
    a given fraction of the bottleneck's rate."""

    process: Literal["poisson"] = Field(default="poisson", description="Arrival process: poisson.")
    rate: ArrivalRate | None = Field(default=None, description="Mean arrivals per time: '50/s', '2/ms'.")
    load: float | None = Field(
        default=None,
        gt=0,
        le=10,
        description="Instead of rate: mean offered bytes over the bottleneck's rate (0.5 is half its rate); "
        "payload bytes, headers not counted, as the datacenter literature counts load.",
    )

    @model_validator(mode="after")
    def _one_rate(self) -> Arrivals:
        if (self.rate is None) == (self.load is None):
            raise FieldError("rate", "give rate (e.g. '50/s') or load (e.g. 0.5), one of them")
        return self


class Workload(StrictModel):
    """One ``[[workloads]]`` table: flows that arrive while the run goes on, each a transfer
    of a drawn size between two hosts, created and retired by the engine (memory follows the
    flows alive at once). Each is a row of the flows table (name ``NAME.k``, group ``NAME``)
    with ``size_bytes``, ``fct_s`` and ``slowdown``."""

    name: str | None = Field(default=None, description="Prefix of the flows' names (NAME.0, ...) and their group.")
    group: str | None = Field(default=None, description="Group label of the flows. Absent: the name.")
    pairs: int | Literal["all"] | list[int] | None = Field(
        default=None,
        description='Dumbbell pairs the flows run on, drawn uniformly per flow: a list of indices or "all". '
        "Give pairs, or src and dst.",
    )
    src: str | list[str] | None = Field(default=None, description="Host(s) a flow is sent from (drawn uniformly).")
    dst: str | list[str] | None = Field(
        default=None, description="Host(s) a flow is sent to (drawn uniformly among those other than its src)."
    )
    arrivals: Arrivals = Field(description="The arrival process and its rate.")
    size: SizeChoice = Field(
        description="Flow sizes: 'websearch', 'datamining', a CDF file, a size ('100kB') or a table "
        "(size = '50kB', distribution = 'pareto', shape = 1.2)."
    )
    start: Time = Field(default=0, description="First possible arrival.")
    stop: Time | None = Field(default=None, description="No arrival after this. Absent: the end of the run.")
    transport: TransportAlgo = Field(
        default_factory=lambda: algo("transport", "tcp"), description="Transport of the flows and its parameters."
    )
    cc: CcAlgo | None = Field(default=None, description="Congestion control of TCP flows. Absent: newreno.")

    @model_validator(mode="after")
    def _addressed(self) -> Workload:
        if self.pairs is not None and (self.src is not None or self.dst is not None):
            raise FieldError("pairs", "give either pairs or src and dst, not both")
        if self.pairs is None and (self.src is None or self.dst is None):
            raise FieldError("src" if self.src is None else "dst", "required: give pairs (dumbbell), or src and dst")
        if isinstance(self.pairs, list) and not self.pairs:
            raise FieldError("pairs", 'must not be empty; give pair indices, or "all"')
        if self.stop is not None and self.stop <= self.start:
            raise FieldError("stop", "must be after start")
        return self

    def label(self, i: int) -> str:
        return self.name if self.name is not None else f"workload{i}"


def host_pairs(workload: Workload, pair_count: int, hosts: list[str], where: str) -> list[tuple[str, str]]:
    """The (src, dst) host names a workload draws its flows from."""
    if workload.pairs is not None:
        if pair_count == 0:
            raise FieldError(f"{where}.pairs", "pairs address a dumbbell's pairs; give src and dst host names")
        chosen = (
            list(range(pair_count))
            if workload.pairs == "all"
            else [workload.pairs]
            if isinstance(workload.pairs, int)
            else list(workload.pairs)
        )
        for p in chosen:
            if isinstance(p, bool) or not 0 <= p < pair_count:
                raise FieldError(
                    f"{where}.pairs", f"no pair {show(p)}; the dumbbell has {pair_count} (0..{pair_count - 1})"
                )
        return [(f"s{p}", f"r{p}") for p in chosen]
    ends = []
    for key in ("src", "dst"):
        names = getattr(workload, key)
        names = [names] if isinstance(names, str) else list(names)
        if not names:
            raise FieldError(f"{where}.{key}", "must name at least one host")
        for name in names:
            if name not in hosts:
                raise FieldError(f"{where}.{key}", f"no host named {show(name)}; hosts: {', '.join(hosts)}")
        ends.append(names)
    pairs = [(s, d) for s in ends[0] for d in ends[1] if s != d]
    if not pairs:
        raise FieldError(f"{where}.dst", "every dst is its src; a flow needs two different hosts")
    return pairs


def arrival_rate(workload: Workload, bottleneck_bps: int | None, where: str) -> float:
    """Arrivals per second: given, or from the load over the bottleneck's rate."""
    if workload.arrivals.rate is not None:
        return workload.arrivals.rate
    assert workload.arrivals.load is not None
    if bottleneck_bps is None:
        raise FieldError(f"{where}.arrivals.load", "a load needs a bottleneck (topology.bottleneck_queue); give rate")
    return workload.arrivals.load * bottleneck_bps / (8 * workload.size.mean)


def compile_workload(
    workload: Workload, i: int, index: dict[str, int], pairs: list[tuple[str, str]], rate: float
) -> dict[str, Any]:
    """The engine's ``WorkloadSpec`` (config.rs)."""
    size = workload.size
    transport, cc = apply_profile(workload.transport, workload.cc)
    return {
        "name": workload.label(i),
        "group": workload.group,
        "pairs": [[index[s], index[d]] for s, d in pairs],
        "rate_per_s": rate,
        "start_ns": workload.start,
        "stop_ns": workload.stop,
        "size": dict(size.params) if size.cdf is None else {},
        **({"size_cdf": [list(p) for p in size.cdf]} if size.cdf is not None else {}),
        "transport": transport,
        "cc": cc,
    }
