"""Building many objects at once, with Python's cyclic garbage collector paused.

Validating, compiling or reading back the results of a scenario with thousands of flows
builds hundreds of thousands of objects (fields, links, flows, rows) and no garbage cycles
worth collecting. With the collector on, each of its full passes walks every object built so
far, and there are more passes the more there is to walk: on the benchmark dumbbell with
9 000 flows the collector took about half of the validation and two thirds of the
compilation. Objects still get freed by reference counting
while it is paused, and any cycles are collected once it runs again.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def without_gc(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn`` with the cyclic collector paused while it runs (restored as it was, also when
    ``fn`` raises; calls nest)."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        if not gc.isenabled():
            return fn(*args, **kwargs)
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            gc.enable()

    return wrapper
