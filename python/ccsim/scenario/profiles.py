"""TCP behaviour profiles (``transport = {kind = "tcp", profile = "linux"}``), applied when a
scenario is compiled.

The profiles are declared in the engine (``tcp/profile.rs``) and read from its registry, so
``ccsim list``, the docs and this step show the same values. The rule lives here only:
parameters given in the transport table win over the profile's; a flow without ``cc``
gets the profile's congestion control; the profile's congestion-control parameters fill the
ones a flow does not give whenever it runs that congestion control. ``"rfc"``, the default,
sets nothing.
"""

from __future__ import annotations

from typing import Any

from .fields import AlgoSpec
from .registry import get_registry

__all__ = ["DEFAULT_PROFILE", "apply_profile"]

DEFAULT_PROFILE = "rfc"


def apply_profile(transport: AlgoSpec, cc: AlgoSpec | None) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The compiled ``transport`` and ``cc`` (config.rs ``AlgoSpec``) of one flow."""
    transport_cfg = transport.to_config()
    cc_cfg = cc.to_config() if cc is not None else None
    if transport.kind != "tcp":
        return transport_cfg, cc_cfg
    profile = get_registry().profile(transport.profile or DEFAULT_PROFILE)
    for s in profile.settings:
        if s.target == "transport":
            transport_cfg["params"].setdefault(s.param, s.value)
    default_cc = next((s.value for s in profile.settings if s.target == "cc" and s.param == "kind"), None)
    if default_cc is not None:
        if cc_cfg is None:
            cc_cfg = {"kind": default_cc, "params": {}}
        if cc_cfg["kind"] == default_cc:
            for s in profile.settings:
                if s.target == "cc" and s.param != "kind":
                    cc_cfg["params"].setdefault(s.param, s.value)
    return transport_cfg, cc_cfg
