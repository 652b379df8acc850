"""Python helpers that build topologies the way the TOML tables do; problems raise
ScenarioError naming the field, as for files.

    topo = ccsim.dumbbell(bottleneck={"rate": "10Mbps", "delay": "5ms", "queue": {"kind": "droptail", "limit": "80p"}},
                          access={"rate": "100Mbps"}, pairs=["2ms", "10ms", "25ms", "50ms"])
    scenario = ccsim.Scenario(simulation={"duration": "60s", "warmup": "10s"}, topology=topo,
                              flows=[{"pair": i} for i in range(4)])

    # Pairs by round-trip time, one flow on each: grouped "rtt10ms" .. "rtt100ms".
    topo = ccsim.dumbbell({"rate": "50Mbps", "delay": "2ms"}, access={"rate": "1Gbps"},
                          pairs={"rtts": {"from": "10ms", "to": "100ms", "count": 10}})
    scenario = ccsim.Scenario(simulation={"duration": "30s"}, topology=topo, flows=[{"pair": "all", "cc": "cubic"}])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .topology import DaisyChain, Dumbbell, Explicit, Star

__all__ = ["dumbbell", "daisy_chain", "explicit", "star"]


def _present(**fields: Any) -> dict[str, Any]:
    return {key: value for key, value in fields.items() if value is not None}


def dumbbell(
    bottleneck: Any,
    *,
    pairs: Sequence[Any] | Mapping[str, Any] | None = None,
    sources: Sequence[Any] | None = None,
    sinks: Sequence[Any] | None = None,
    access: Any = None,
    bottleneck_queue: str | None = None,
) -> Dumbbell:
    """A dumbbell; a pair (or source, sink) given as a string is its access delay. ``pairs``
    may also be one table with ``rtts`` (a list of round-trip times, or ``{"from", "to",
    "count"}``), one pair per RTT, as in a file."""

    def specs(items: Sequence[Any] | None) -> list[Any] | None:
        return None if items is None else [{"delay": x} if isinstance(x, str) else x for x in items]

    return Dumbbell.build(
        _present(
            kind="dumbbell",
            bottleneck=bottleneck,
            access=access,
            pairs=dict(pairs) if isinstance(pairs, Mapping) else specs(pairs),
            sources=specs(sources),
            sinks=specs(sinks),
            bottleneck_queue=bottleneck_queue,
        )
    )


def daisy_chain(
    hops: Sequence[Any], hosts: Sequence[Any], *, access: Any = None, bottleneck_queue: str | None = None
) -> DaisyChain:
    """Routers R0..Rn linked by ``hops``; ``hosts`` attached with ``router = i``."""
    return DaisyChain.build(
        _present(
            kind="daisy_chain", hops=list(hops), hosts=list(hosts), access=access, bottleneck_queue=bottleneck_queue
        )
    )


def explicit(nodes: Sequence[Any], links: Sequence[Any], *, bottleneck_queue: str | None = None) -> Explicit:
    """Nodes ``{name, kind}`` and links ``{a, b, rate, delay, ...}`` written out."""
    return Explicit.build(
        _present(kind="explicit", nodes=list(nodes), links=list(links), bottleneck_queue=bottleneck_queue)
    )


def star(
    sensors: int | Sequence[Any], bottleneck: Any, *, access: Any = None, bottleneck_queue: str | None = None
) -> Star:
    """Sensors ``sensor0..`` -> ``router`` -> ``controller`` (paper 001): ``sensors`` is a count
    or one link spec per sensor; a sensor given as a string is its access delay."""
    given = sensors if isinstance(sensors, int) else [{"delay": x} if isinstance(x, str) else x for x in sensors]
    return Star.build(
        _present(kind="star", sensors=given, bottleneck=bottleneck, access=access, bottleneck_queue=bottleneck_queue)
    )
