"""Quantities written the way researchers write them, to and from the engine's canonical units.

The engine (``config.rs``, ``params.rs``) only knows integers: nanoseconds, bits per second,
bytes, and buffer sizes as ``{"packets": n}`` / ``{"bytes": n}``. Scenario files say
``"5ms"``, ``"10Mbps"``, ``"64KiB"``, ``"100p"``. This module converts exactly (``Decimal``, no
float rounding) and refuses anything it would have to guess: a missing unit, a negative
quantity, a fraction of a nanosecond or of a byte.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation, localcontext
from typing import Final

from ..errors import show

__all__ = [
    "UnitError",
    "SizeValue",
    "parse_time",
    "parse_rate",
    "parse_bytes",
    "parse_size",
    "parse_prob",
    "format_time",
    "format_rate",
    "format_bytes",
    "format_size",
]

# A buffer size in the engine's encoding: exactly one of these keys.
SizeValue = dict[str, int]


class UnitError(ValueError):
    """A quantity that cannot be read; the message says what is allowed."""


# Units, each to its factor in canonical units. Rates are decimal SI (k = 1e3), as in
# networking; byte counts accept both SI (KB = 1000) and IEC (KiB = 1024) prefixes.
TIME_UNITS: Final[dict[str, int]] = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "μs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "min": 60_000_000_000,
}
RATE_UNITS: Final[dict[str, int]] = {
    "bps": 1,
    "b/s": 1,
    "kbps": 1_000,
    "Kbps": 1_000,
    "kb/s": 1_000,
    "Kb/s": 1_000,
    "Mbps": 1_000_000,
    "Mb/s": 1_000_000,
    "Gbps": 1_000_000_000,
    "Gb/s": 1_000_000_000,
}
BYTE_UNITS: Final[dict[str, int]] = {
    "B": 1,
    "KB": 1_000,
    "kB": 1_000,
    "MB": 1_000_000,
    "GB": 1_000_000_000,
    "KiB": 1 << 10,
    "MiB": 1 << 20,
    "GiB": 1 << 30,
}
# Largest value the engine can hold (its parameters are i64).
MAX_CANONICAL: Final = 2**63 - 1

PACKET_UNITS: Final[frozenset[str]] = frozenset({"p", "pkt", "pkts", "packet", "packets"})

TIME_HELP: Final = "a time with a unit: ns, us, ms, s or min (e.g. '5ms', '1.5s')"
RATE_HELP: Final = "a rate with a unit: bps, kbps, Mbps or Gbps, or b/s, kb/s, Mb/s, Gb/s (e.g. '10Mbps')"
BYTES_HELP: Final = "a byte count with a unit: B, KB, MB, GB (x1000) or KiB, MiB, GiB (x1024) (e.g. '1500B')"
SIZE_HELP: Final = "a buffer size in packets ('100p', '100pkts', '100packets') or bytes ('150000B', '64KiB')"
PROB_HELP: Final = "a probability between 0 and 1, or a percentage (e.g. 0.01 or '1%')"

# A quantity is a decimal number, optional blanks and a unit (which starts with none of
# digit, blank, '.', '+', '-'), with blanks around. Only the number is matched by a regular
# expression, at the start of the stripped text: a pattern over the whole text with blanks on
# both sides of an optional unit backtracks quadratically over a run of blanks ("1s", 60 000
# blanks, "x" took 27 s); strip and lstrip are linear.
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_UNIT_START = re.compile(r"[^\d\s.+-]")


def _split(text: str, what: str, help_text: str) -> tuple[Decimal, str]:
    """Split ``"1.5 ms"`` into (Decimal('1.5'), 'ms'); the unit may be empty."""
    stripped = text.strip()
    match = _NUMBER.match(stripped)
    unit = stripped[match.end() :].lstrip() if match is not None else ""
    if match is None or (unit and not _UNIT_START.match(unit)):
        raise UnitError(f"{show(text)} is not {what}; expected {help_text}")
    try:
        number = Decimal(match.group())
    except InvalidOperation:  # pragma: no cover - the regex admits only valid decimals
        raise UnitError(f"{show(text)} is not {what}; expected {help_text}") from None
    return number, unit


def _scale(number: Decimal, factor: int, text: str, what: str, canonical: str) -> int:
    """number x factor as an exact non-negative integer."""
    if number < 0:
        raise UnitError(f"{show(text)}: {what} must not be negative")
    # The engine stores 64-bit integers; refuse before converting a huge exponent to an int.
    if number != 0 and number.adjusted() > 20:
        raise UnitError(f"{show(text)}: {what} is too large")
    with localcontext() as ctx:
        ctx.prec = 60  # exact for every input that passed the size check above
        value = number * factor
    if value != value.to_integral_value():
        raise UnitError(f"{show(text)}: {what} must be a whole number of {canonical}")
    if value > MAX_CANONICAL:
        raise UnitError(f"{show(text)}: {what} is too large")
    return int(value)


def _reject_bool(value: object, what: str, help_text: str) -> None:
    # bool is an int in Python; `rate = true` is a mistake, not 1 bit/s.
    if isinstance(value, bool):
        raise UnitError(f"{show(value)} is not {what}; expected {help_text}")


def _parse_with_units(value: object, units: dict[str, int], what: str, help_text: str, canonical: str) -> int:
    """Shared rules for time and rate: a string with a unit, or the bare number 0."""
    _reject_bool(value, what, help_text)
    if isinstance(value, (int, float)):
        # A bare number is ambiguous (seconds or milliseconds? bit/s or Mbit/s?); only zero
        # means the same in every unit.
        if value == 0:
            return 0
        if value < 0:
            raise UnitError(f"{show(value)}: {what} must not be negative")
        raise UnitError(f"{show(value)} has no unit; expected {help_text}")
    if not isinstance(value, str):
        raise UnitError(f"{show(value)} is not {what}; expected {help_text}")
    number, unit = _split(value, what, help_text)
    if unit == "":
        if number == 0:
            return 0
        raise UnitError(f"{show(value)} has no unit; expected {help_text}")
    factor = units.get(unit)
    if factor is None:
        raise UnitError(f"{show(value)}: unknown unit {show(unit)}; expected {help_text}")
    return _scale(number, factor, value, what, canonical)


def parse_time(value: object) -> int:
    """A duration to integer nanoseconds: ``"5ms"`` -> 5_000_000."""
    return _parse_with_units(value, TIME_UNITS, "a time", TIME_HELP, "nanoseconds")


def parse_rate(value: object) -> int:
    """A bit rate to integer bits per second: ``"10Mbps"`` -> 10_000_000."""
    if isinstance(value, str) and value.rstrip().endswith(("Bps", "B/s")):
        raise UnitError(f"{show(value)}: rates are in bits (e.g. 'Mbps'), not bytes per second")
    return _parse_with_units(value, RATE_UNITS, "a rate", RATE_HELP, "bit/s")


def parse_bytes(value: object) -> int:
    """A byte count to an integer: ``"64KiB"`` -> 65536. A bare integer is a byte count."""
    _reject_bool(value, "a byte count", BYTES_HELP)
    if isinstance(value, int):
        # Unlike times and rates, a bare integer byte count is unambiguous.
        if value < 0:
            raise UnitError(f"{show(value)}: a byte count must not be negative")
        if value > MAX_CANONICAL:
            raise UnitError(f"{show(value)}: a byte count is too large")
        return value
    if not isinstance(value, str):
        raise UnitError(f"{show(value)} is not a byte count; expected {BYTES_HELP}")
    number, unit = _split(value, "a byte count", BYTES_HELP)
    if unit == "":
        raise UnitError(f"{show(value)} has no unit; expected {BYTES_HELP}")
    factor = BYTE_UNITS.get(unit)
    if factor is None:
        raise UnitError(f"{show(value)}: unknown unit {show(unit)}; expected {BYTES_HELP}")
    return _scale(number, factor, value, "a byte count", "bytes")


def parse_size(value: object) -> SizeValue:
    """A buffer size: ``"100p"`` -> ``{"packets": 100}``, ``"64KiB"`` -> ``{"bytes": 65536}``.

    The engine's own encoding (a one-key dict) is accepted too, so that a parsed value can be
    parsed again.
    """
    _reject_bool(value, "a buffer size", SIZE_HELP)
    if isinstance(value, dict):
        if len(value) == 1:
            ((key, count),) = value.items()
            if key in ("packets", "bytes") and isinstance(count, int) and not isinstance(count, bool):
                if count < 0:
                    raise UnitError(f"{show(value)}: a buffer size must not be negative")
                if count > MAX_CANONICAL:
                    raise UnitError(f"{show(value)}: a buffer size is too large")
                return {key: count}
        raise UnitError(f"{show(value)} is not a buffer size; expected {SIZE_HELP}")
    if isinstance(value, int):
        # 100 what? Packets and bytes are both common; make the author say.
        raise UnitError(f"{show(value)} has no unit; expected {SIZE_HELP}")
    if not isinstance(value, str):
        raise UnitError(f"{show(value)} is not a buffer size; expected {SIZE_HELP}")
    number, unit = _split(value, "a buffer size", SIZE_HELP)
    if unit in PACKET_UNITS:
        return {"packets": _scale(number, 1, value, "a buffer size", "packets")}
    if unit in BYTE_UNITS:
        return {"bytes": _scale(number, BYTE_UNITS[unit], value, "a buffer size", "bytes")}
    if unit == "":
        raise UnitError(f"{show(value)} has no unit; expected {SIZE_HELP}")
    raise UnitError(f"{show(value)}: unknown unit {show(unit)}; expected {SIZE_HELP}")


def parse_prob(value: object) -> float:
    """A probability: a number in [0, 1] or a percentage string ``"1%"``."""
    _reject_bool(value, "a probability", PROB_HELP)
    if isinstance(value, (int, float)):
        if isinstance(value, int) and not -1 <= value <= 1:
            raise UnitError(f"{show(value)}: a probability must be between 0 and 1")  # float() may overflow
        prob = float(value)
    elif isinstance(value, str) and value.strip().endswith("%"):
        number, unit = _split(value.strip()[:-1], "a probability", PROB_HELP)
        if unit:
            raise UnitError(f"{show(value)} is not a probability; expected {PROB_HELP}")
        prob = float(number / 100)
    else:
        raise UnitError(f"{show(value)} is not a probability; expected {PROB_HELP}")
    if not 0.0 <= prob <= 1.0:
        raise UnitError(f"{show(value)}: a probability must be between 0 and 1")
    return prob


# --- formatting back to human units (exact: parsing the output gives the input back) ---


def _format(value: int, units: list[tuple[str, int]], zero: str) -> str:
    """The largest unit that shows ``value`` with at most three decimals, exactly."""
    if value == 0:
        return zero
    for name, factor in units:
        # factor // 1000 divides value: at most three decimals in this unit.
        if value >= factor and value % max(factor // 1000, 1) == 0:
            number = Decimal(value) / Decimal(factor)
            text = format(number.normalize(), "f")
            return f"{text}{name}"
    raise AssertionError("the smallest unit has factor 1")  # pragma: no cover


def format_time(ns: int) -> str:
    """Nanoseconds to text: 5_000_000 -> ``"5ms"``, 1_500_000_000 -> ``"1.5s"``."""
    return _format(ns, [("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000), ("ns", 1)], "0s")


def format_rate(bps: int) -> str:
    """Bits per second to text: 10_000_000 -> ``"10Mbps"``."""
    return _format(bps, [("Gbps", 1_000_000_000), ("Mbps", 1_000_000), ("kbps", 1_000), ("bps", 1)], "0bps")


def format_bytes(count: int) -> str:
    """Bytes to text, in whole units: 65536 -> ``"64KiB"``, 1460 -> ``"1460B"``."""
    if count == 0:
        return "0B"
    # Packet-sized counts read best in bytes ("1000B", "1500B"), buffers in binary units.
    for name, factor in (("GiB", 1 << 30), ("GB", 10**9), ("MiB", 1 << 20), ("MB", 10**6), ("KiB", 1 << 10)):
        if count % factor == 0:
            return f"{count // factor}{name}"
    return f"{count}B"


def format_size(size: SizeValue) -> str:
    """A buffer size to text: ``{"packets": 1000}`` -> ``"1000p"``."""
    if "packets" in size:
        return f"{size['packets']}p"
    return format_bytes(size["bytes"])
