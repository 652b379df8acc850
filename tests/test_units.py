"""Quantities with units: parsing to canonical integers, rejections, formatting back."""

from __future__ import annotations

import pytest
from ccsim.scenario.units import (
    UnitError,
    format_bytes,
    format_rate,
    format_size,
    format_time,
    parse_bytes,
    parse_prob,
    parse_rate,
    parse_size,
    parse_time,
)
from hypothesis import given
from hypothesis import strategies as st


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("5ms", 5_000_000),
        ("1.5s", 1_500_000_000),
        ("100us", 100_000),
        ("250ns", 250),
        ("2min", 120_000_000_000),
        ("0.25 ms", 250_000),
        ("1e-3s", 1_000_000),
        ("0", 0),
        (0, 0),
        (0.0, 0),
    ],
)
def test_time_is_parsed_to_nanoseconds(text: object, ns: int) -> None:
    assert parse_time(text) == ns


@pytest.mark.parametrize(
    ("text", "bps"),
    [
        ("10Mbps", 10_000_000),
        ("1Gbps", 1_000_000_000),
        ("256kbps", 256_000),
        ("64kb/s", 64_000),
        ("100bps", 100),
        ("1.5Mbps", 1_500_000),
    ],
)
def test_rate_is_parsed_to_bits_per_second_with_decimal_prefixes(text: str, bps: int) -> None:
    assert parse_rate(text) == bps


@pytest.mark.parametrize(
    ("text", "count"),
    [("1500B", 1500), ("1KB", 1000), ("64KiB", 65536), ("1MiB", 1 << 20), ("4MB", 4_000_000), (1460, 1460)],
)
def test_bytes_take_si_and_iec_prefixes(text: object, count: int) -> None:
    assert parse_bytes(text) == count


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("100p", {"packets": 100}),
        ("100pkts", {"packets": 100}),
        ("100packets", {"packets": 100}),
        ("150000B", {"bytes": 150000}),
        ("64KiB", {"bytes": 65536}),
        ({"packets": 7}, {"packets": 7}),
    ],
)
def test_buffer_sizes_are_packets_or_bytes(text: object, size: dict[str, int]) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize(
    ("parse", "value", "needle"),
    [
        (parse_time, "-5ms", "must not be negative"),
        (parse_time, 5, "no unit"),
        (parse_time, "5", "no unit"),
        (parse_time, 0.005, "no unit"),
        (parse_time, "5 parsecs", "unknown unit 'parsecs'"),
        (parse_time, "fast", "is not a time"),
        (parse_time, "0.5ns", "whole number of nanoseconds"),
        (parse_time, True, "is not a time"),
        (parse_time, "1e30s", "too large"),
        (parse_rate, "10", "no unit"),
        (parse_rate, "-1Mbps", "must not be negative"),
        (parse_rate, "10MBps", "bits"),
        (parse_rate, "ten Mbps", "is not a rate"),
        (parse_bytes, "-1B", "must not be negative"),
        (parse_bytes, -1, "must not be negative"),
        (parse_bytes, "1.5B", "whole number of bytes"),
        (parse_bytes, "1Kb", "unknown unit 'Kb'"),
        (parse_size, 100, "no unit"),
        (parse_size, "100", "no unit"),
        (parse_size, "100 frames", "unknown unit"),
        (parse_size, {"packets": -1}, "must not be negative"),
        (parse_size, {"pkts": 1}, "not a buffer size"),
        (parse_prob, 1.5, "between 0 and 1"),
        (parse_prob, "150%", "between 0 and 1"),
        (parse_prob, "often", "not a probability"),
    ],
)
def test_bad_quantities_are_rejected_with_what_is_allowed(parse, value: object, needle: str) -> None:
    with pytest.raises(UnitError) as info:
        parse(value)
    assert needle in str(info.value)


def test_rejection_lists_the_allowed_units() -> None:
    with pytest.raises(UnitError, match=r"ns, us, ms, s or min"):
        parse_time("5 fortnights")
    with pytest.raises(UnitError, match=r"bps, kbps, Mbps or Gbps"):
        parse_rate("5 furlongs")


def test_percentages_are_probabilities() -> None:
    assert parse_prob("1%") == pytest.approx(0.01)
    assert parse_prob(1e-5) == 1e-5


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (5_000_000, "5ms"),
        (1_500_000_000, "1.5s"),
        (200_000_000, "200ms"),
        (250, "250ns"),
        (0, "0s"),
        (1_234_567, "1234.567us"),
    ],
)
def test_times_format_in_the_largest_readable_unit(value: int, text: str) -> None:
    assert format_time(value) == text


def test_other_quantities_format_back_to_human_units() -> None:
    assert format_rate(10_000_000) == "10Mbps"
    assert format_rate(256_000) == "256kbps"
    assert format_rate(1_500_000) == "1.5Mbps"
    assert format_bytes(65536) == "64KiB"
    assert format_bytes(1460) == "1460B"
    assert format_bytes(4_000_000) == "4MB"
    assert format_bytes(1000) == "1000B"
    assert format_size({"packets": 1000}) == "1000p"
    assert format_size({"bytes": 1 << 20}) == "1MiB"


@given(st.integers(min_value=0, max_value=2**62))
def test_time_round_trips_exactly(ns: int) -> None:
    assert parse_time(format_time(ns)) == ns


@given(st.integers(min_value=0, max_value=2**62))
def test_rate_round_trips_exactly(bps: int) -> None:
    assert parse_rate(format_rate(bps)) == bps


@given(st.integers(min_value=0, max_value=2**62))
def test_bytes_round_trip_exactly(count: int) -> None:
    assert parse_bytes(format_bytes(count)) == count
    assert parse_size(format_size({"bytes": count})) == {"bytes": count}
