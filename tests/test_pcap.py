"""Packet captures (``[trace] pcap``): one classic pcap file per link direction named, read
back here by a reader of the format written from its specification (no tshark needed) and,
when it is installed, by Wireshark's tshark, and checked against ccsim's own counters of the
same link direction: packets, bytes, CE marks, retransmissions.

The scenario is built so that every retransmission can be told from the capture alone: ECN
TCP sends first transmissions ECT(0) and retransmissions Not-ECT (RFC 3168 §6.1.5), the
bottleneck's CoDel marks ECT packets instead of dropping them (so its only drops are of
Not-ECT packets, i.e. of retransmissions), losses are on the bottleneck's wire (after the
transmitter, so the lost packets are in the capture) and the applications stop at 4 s so that
every retransmission has left by the end at 7 s."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ccsim
import pytest
from ccsim.errors import ScenarioError
from ccsim.results.result import pcap_file_names
from conftest import run_cli

DURATION_S = 7.0
ECN_SCENARIO: dict[str, Any] = {
    "simulation": {"duration": "7s", "warmup": "0s", "seed": 3},
    "topology": {
        "kind": "dumbbell",
        "bottleneck": {
            "rate": "10Mbps",
            "delay": "5ms",
            "loss": 0.005,
            "queue": {"kind": "codel", "ecn": True, "limit": "1000p"},
        },
        "access": {"rate": "100Mbps"},
        "pairs": [{"delay": "2ms"}, {"delay": "10ms"}],
    },
    "flows": [{"pair": "all", "transport": {"kind": "tcp", "ecn": True}, "cc": "newreno", "app": "bulk", "stop": "4s"}],
    "trace": {"pcap": ["A->B", "B->A"], "events": True},
}
# UDP and both DCCP CCIDs across the same kind of dumbbell.
DATAGRAM_SCENARIO: dict[str, Any] = {
    "simulation": {"duration": "3s"},
    "topology": {
        "kind": "dumbbell",
        "bottleneck": {"rate": "5Mbps", "delay": "5ms"},
        "access": {"rate": "100Mbps"},
        "pairs": [{"delay": "2ms"}, {"delay": "10ms"}, {"delay": "3ms"}],
    },
    "flows": [
        {"pair": 0, "transport": {"kind": "dccp", "ccid": 2, "ecn": True}, "app": "bulk"},
        {"pair": 1, "transport": {"kind": "dccp", "ccid": 3}, "app": "bulk"},
        {"pair": 2, "transport": "udp", "app": {"kind": "cbr", "rate": "500kbps"}},
    ],
    "trace": {"pcap": ["A->B", "B->A"]},
}

MAGIC_NS = 0xA1B23C4D
LINKTYPE_RAW = 101
TCP, UDP, DCCP = 6, 17, 33
NOT_ECT, CE = 0, 3


@dataclass
class Packet:
    """One record: its time, lengths and the fields the checks read."""

    time_ns: int
    caplen: int
    length: int
    ecn: int
    proto: int
    payload: int  # transport payload bytes by the headers' lengths (0 for a pure ACK)
    tcp_flags: int


def _sum16(data: bytes, acc: int = 0) -> int:
    """The one's complement sum of ``data``'s 16-bit words (RFC 1071)."""
    if len(data) % 2:
        data += b"\0"
    acc += sum(struct.unpack(f">{len(data) // 2}H", data))
    while acc > 0xFFFF:
        acc = (acc & 0xFFFF) + (acc >> 16)
    return acc


def read_pcap(data: bytes) -> list[Packet]:
    """Every record of a capture, checking the file against the libpcap format
    (draft-ietf-opsawg-pcap) and each header against its RFC: IPv4 header checksum, total
    length = the packet's length, the transport checksum (over a payload of zeros, which adds
    nothing), captured length = the headers."""
    magic, major, minor, _zone, _sigfigs, snaplen, linktype = struct.unpack_from("<IHHiIII", data, 0)
    assert (magic, major, minor, linktype) == (MAGIC_NS, 2, 4, LINKTYPE_RAW)
    packets, at, last = [], 24, 0
    while at < len(data):
        sec, nsec, caplen, length = struct.unpack_from("<IIII", data, at)
        assert nsec < 1_000_000_000 and caplen <= min(snaplen, length)
        h = data[at + 16 : at + 16 + caplen]
        assert len(h) == caplen, "a record runs past the end of the file"
        at += 16 + caplen
        time_ns = sec * 1_000_000_000 + nsec
        assert time_ns >= last, "records in time order"
        last = time_ns
        assert h[0] == 0x45 and _sum16(h[:20]) == 0xFFFF, "IPv4 header and checksum"
        total = struct.unpack_from(">H", h, 2)[0]
        assert total == length, "IP total length is the packet's size"
        proto = h[9]
        pseudo = h[12:20] + bytes([0, proto]) + struct.pack(">H", total - 20)
        assert _sum16(h[20:], _sum16(pseudo)) == 0xFFFF, "transport checksum"
        if proto == TCP:
            header = (h[32] >> 4) * 4
            flags = h[33]
        elif proto == DCCP:
            header, flags = h[24] * 4, 0
        else:
            assert proto == UDP and struct.unpack_from(">H", h, 24)[0] == total - 20
            header, flags = 8, 0
        assert caplen == 20 + header, "only the headers are stored"
        packets.append(Packet(time_ns, caplen, length, h[1] & 3, proto, total - 20 - header, flags))
    return packets


@pytest.fixture(scope="module")
def ecn_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    result = ccsim.run(ECN_SCENARIO)
    out = tmp_path_factory.mktemp("pcap")
    result.write(out, plots=False)
    return result, out


@pytest.fixture(scope="module")
def datagram_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    result = ccsim.run(DATAGRAM_SCENARIO)
    out = tmp_path_factory.mktemp("pcap-datagrams")
    result.write(out, plots=False)
    return result, out


def _queue(result: Any, name: str) -> Any:
    return result.queues.set_index("name").loc[name]


def _retransmissions_that_left_a_b(result: Any) -> int:
    """ccsim's retransmissions minus those the bottleneck's CoDel dropped, after checking the
    scenario does what the module docstring says: with warm-up 0 the counters cover the whole
    run, no other queue dropped, and the bottleneck dropped only early (never for lack of room),
    which under ECN CoDel means only Not-ECT packets, i.e. retransmissions."""
    queues = result.queues.set_index("name")
    assert queues["drops"].drop("A->B").sum() == 0
    events = result.queue_events
    drops = events[(events["queue"] == "A->B") & (events["event"] != "mark")]
    assert set(drops["event"]) <= {"drop_early"}
    assert len(drops) == queues.loc["A->B", "drops"]
    return int(result.flows["retransmissions"].sum()) - int(queues.loc["A->B", "drops"])


def test_captures_count_what_the_link_directions_counted(ecn_run: tuple[Any, Path]) -> None:
    result, out = ecn_run
    assert sorted(result.pcap) == ["A->B", "B->A"]
    assert sorted(p.name for p in out.glob("*.pcap")) == ["A-B.pcap", "B-A.pcap"]
    for name in ("A->B", "B->A"):
        packets = read_pcap((out / pcap_file_names([name])[name]).read_bytes())
        assert (out / pcap_file_names([name])[name]).read_bytes() == result.pcap[name]
        q = _queue(result, name)
        assert len(packets) == q["departures"] and sum(p.length for p in packets) == q["tx_bytes"], name
        assert sum(p.ecn == CE for p in packets) == q["marks"], name
        assert all(p.proto == TCP and p.tcp_flags & 0x10 for p in packets), "TCP, ACK on every segment"
        assert packets[-1].time_ns <= DURATION_S * 1e9
    forward = read_pcap(result.pcap["A->B"])
    # The scenario marks, loses and retransmits: what the checks below are about.
    assert _queue(result, "A->B")["marks"] > 0 and _queue(result, "A->B")["link_losses"] > 0
    assert all(p.payload == 1448 for p in forward), "every data segment, and only data, crosses A->B"
    # Every retransmission that left the bottleneck is its Not-ECT data segments.
    retransmitted = sum(p.ecn == NOT_ECT for p in forward)
    assert retransmitted == _retransmissions_that_left_a_b(result) > 0
    backward = read_pcap(result.pcap["B->A"])
    assert all(p.payload == 0 and p.ecn == NOT_ECT for p in backward), "pure ACKs, never ECN-capable"
    assert any(p.tcp_flags & 0x40 for p in backward), "the receivers echo the marks (ECE)"


def test_datagram_captures_are_udp_and_dccp(datagram_run: tuple[Any, Path]) -> None:
    result, _ = datagram_run
    forward = read_pcap(result.pcap["A->B"])
    backward = read_pcap(result.pcap["B->A"])
    for name, packets in (("A->B", forward), ("B->A", backward)):
        q = _queue(result, name)
        assert len(packets) == q["departures"] and sum(p.length for p in packets) == q["tx_bytes"]
    assert {p.proto for p in forward} == {UDP, DCCP} and {p.proto for p in backward} == {DCCP}
    assert all(p.payload == 0 for p in backward), "DCCP-Acks carry no data"


def test_file_names_are_made_safe_and_distinct() -> None:
    names = pcap_file_names(["A->B", "B->A", "../x->y", ".hidden->r", "a b->c", "a_b->c", "Zürich->B"])
    assert names["A->B"] == "A-B.pcap" and names["B->A"] == "B-A.pcap"
    assert names["../x->y"] == "_._x-y.pcap" and names[".hidden->r"] == "_hidden-r.pcap"
    assert {names["a b->c"], names["a_b->c"]} == {"a_b-c.pcap", "a_b-c-2.pcap"}
    assert names["Zürich->B"] == "Z_rich-B.pcap"
    assert all("/" not in n and not n.startswith(".") for n in names.values())


def _error(trace: dict[str, Any]) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        ccsim.from_dict({**ECN_SCENARIO, "trace": trace})
    return info.value


def test_the_key_names_existing_link_directions() -> None:
    err = _error({"pcap": ["A->B", "A->Z"]})
    assert err.field == "trace.pcap[1]" and "no link direction 'A->Z'" in str(err) and "A->B, B->A" in str(err)
    err = _error({"pcap": ["A-B"]})
    assert err.field == "trace.pcap[0]" and "FROM->TO" in str(err)
    err = _error({"pcap": ["A->B", "A->B"]})
    assert err.field == "trace.pcap[1]" and "listed twice" in str(err)
    # Captures need no sampling interval.
    assert ccsim.from_dict({**ECN_SCENARIO, "trace": {"pcap": ["B->A"]}}).to_config()["trace"]["pcap"] == ["B->A"]
    assert "pcap" not in ccsim.from_dict({**ECN_SCENARIO, "trace": {"interval": "1s"}}).to_config()["trace"]


def test_ccsim_run_out_writes_the_captures_and_a_later_run_removes_them(tmp_path: Path) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(
        '[simulation]\nduration = "1s"\n[topology]\nkind = "dumbbell"\n'
        'bottleneck = { rate = "10Mbps", delay = "5ms" }\naccess = { rate = "100Mbps" }\n'
        'pairs = [ { delay = "2ms" } ]\n[[flows]]\npair = 0\n[trace]\npcap = ["A->B", "s0->A"]\n',
        encoding="utf-8",
    )
    out = tmp_path / "out"
    proc = run_cli("run", str(scenario), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "A-B.pcap" in proc.stdout and "s0-A.pcap" in proc.stdout
    assert read_pcap((out / "A-B.pcap").read_bytes()) and read_pcap((out / "s0-A.pcap").read_bytes())
    proc = run_cli("run", str(scenario))
    assert proc.returncode == 0 and "written only with --out" in proc.stdout, proc.stderr
    # The directory describes one run: a run without captures leaves none of the earlier ones.
    proc = run_cli("run", str(scenario), "--out", str(out), "--quiet", "--set", "trace.pcap=[]")
    assert proc.returncode == 0, proc.stderr
    assert not list(out.glob("*.pcap"))


# --- tshark -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tshark() -> str:
    """tshark's path; skips without it unless CCSIM_REQUIRE_TSHARK=1 (CI), which fails."""
    path = shutil.which("tshark")
    if path is None:
        if os.environ.get("CCSIM_REQUIRE_TSHARK") == "1":
            pytest.fail("CCSIM_REQUIRE_TSHARK=1 but tshark is not installed (apt-get install tshark)")
        pytest.skip("tshark is not installed (apt-get install tshark); CI sets CCSIM_REQUIRE_TSHARK=1")
    return path


# tshark's own notice when run as root (as in CI containers), about the user, not the file.
ROOT_NOTICE = 'Running as user "root" and group "root". This could be dangerous.'


def run_tshark(tshark: str, *args: str) -> str:
    """tshark's standard output; it must succeed and say nothing else on standard error."""
    proc = subprocess.run([tshark, *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    complaints = [line for line in proc.stderr.splitlines() if line.strip() and line.strip() != ROOT_NOTICE]
    assert not complaints, proc.stderr
    return proc.stdout


def tshark_fields(tshark: str, path: Path, *fields: str, options: tuple[str, ...] = ()) -> list[list[str]]:
    args = ["-r", str(path), *options, "-T", "fields", "-E", "separator=,"]
    for field in fields:
        args += ["-e", field]
    return [line.split(",") for line in run_tshark(tshark, *args).splitlines()]


def io_stat(tshark: str, path: Path) -> tuple[int, int]:
    """Frames and bytes of the whole file, from ``-z io,stat,0``."""
    text = run_tshark(tshark, "-r", str(path), "-q", "-z", "io,stat,0")
    row = next(line for line in text.splitlines() if "<>" in line)
    frames, size = (int(cell) for cell in row.strip().strip("|").split("|")[1:3])
    return frames, size


def test_tshark_reads_what_ccsim_counted(ecn_run: tuple[Any, Path], tshark: str) -> None:
    result, out = ecn_run
    for name, file in (("A->B", out / "A-B.pcap"), ("B->A", out / "B-A.pcap")):
        q = _queue(result, name)
        assert io_stat(tshark, file) == (q["departures"], q["tx_bytes"]), name
        expert = run_tshark(tshark, "-r", str(file), "-q", "-z", "expert")
        assert "Malformed" not in expert and "Errors (" not in expert, expert
        rows = tshark_fields(
            tshark,
            file,
            "frame.len",
            "ip.dsfield.ecn",
            "ip.checksum.status",
            "ip.proto",
            options=("-o", "ip.check_checksum:TRUE"),
        )
        assert sum(int(r[0]) for r in rows) == q["tx_bytes"]
        assert sum(r[1] == str(CE) for r in rows) == q["marks"], name
        assert {(r[2], r[3]) for r in rows} == {("1", str(TCP))}, "IPv4 checksums good (1), TCP"


def test_tshark_finds_the_retransmissions_ccsim_made(ecn_run: tuple[Any, Path], tshark: str) -> None:
    result, out = ecn_run
    flags = (
        "tcp.analysis.retransmission",
        "tcp.analysis.fast_retransmission",
        "tcp.analysis.spurious_retransmission",
        "tcp.analysis.out_of_order",
    )
    rows = tshark_fields(tshark, out / "A-B.pcap", "ip.dsfield.ecn", "tcp.len", *flags)
    flagged = [i for i, r in enumerate(rows) if any(r[2:])]
    not_ect = [i for i, r in enumerate(rows) if r[0] == str(NOT_ECT) and int(r[1]) > 0]
    # Exactly the Not-ECT data segments, i.e. every retransmission that left A->B, and so
    # ccsim's count less the retransmissions CoDel dropped before they could leave. tshark
    # calls some of them out-of-order rather than retransmissions: a segment below the highest
    # sequence number seen comes within 3 ms of the highest (Wireshark's threshold when no
    # handshake gave it an RTT; a 1500-byte packet takes 1.2 ms at 10 Mbit/s). Fast and
    # spurious retransmissions it recognises from the ACKs, which this one-direction file lacks.
    assert flagged == not_ect
    assert len(flagged) == _retransmissions_that_left_a_b(result)
    by_flag = [sum(bool(r[2 + k]) for r in rows) for k in range(len(flags))]
    assert by_flag[0] > 0 and by_flag[1] == by_flag[2] == 0 and by_flag[0] + by_flag[3] == len(flagged)
    # The ACKs: no data, so nothing retransmitted; the window reads back with the documented
    # scale (the receivers' default window, 4 MiB); SACK blocks and ECE decoded.
    rows = tshark_fields(
        tshark,
        out / "B-A.pcap",
        "tcp.len",
        "tcp.window_size",
        "tcp.flags.ece",
        "tcp.options.sack_le",
        *flags,
        options=("-o", "tcp.default_window_scaling:7"),
    )
    assert all(r[0] == "0" and r[1] == str(4 << 20) and not any(r[4:]) for r in rows)
    assert any(r[2] == "1" for r in rows) and any(r[3] for r in rows)


def test_tshark_reads_udp_and_dccp(datagram_run: tuple[Any, Path], tshark: str) -> None:
    result, out = datagram_run
    for name, file in (("A->B", out / "A-B.pcap"), ("B->A", out / "B-A.pcap")):
        q = _queue(result, name)
        assert io_stat(tshark, file) == (q["departures"], q["tx_bytes"]), name
    rows = tshark_fields(tshark, out / "A-B.pcap", "ip.proto", "dccp.type", "udp.length")
    assert {(r[0], r[1]) for r in rows} == {(str(UDP), ""), (str(DCCP), "2")}, "UDP and DCCP-Data"
    # A DCCP-Ack is all header, so tshark verifies its checksum: good (1).
    rows = tshark_fields(tshark, out / "B-A.pcap", "dccp.type", "dccp.checksum.status")
    assert {tuple(r) for r in rows} == {("3", "1")}


@pytest.mark.parametrize("name", ["../../escape", "/tmp/absolute", "..", "a->b", "C:\\evil", ".hidden"])
def test_node_names_never_lead_a_capture_out_of_the_directory(tmp_path: Path, name: str) -> None:
    h1, h2 = f"{name}-h1", f"{name}-h2"
    scenario = {
        "simulation": {"duration": "300ms"},
        "topology": {
            "kind": "explicit",
            "nodes": [{"name": h1, "kind": "host"}, {"name": name, "kind": "router"}, {"name": h2, "kind": "host"}],
            "links": [{"a": h1, "b": name, "rate": "10Mbps", "delay": "1ms"}, {"a": name, "b": h2, "rate": "5Mbps"}],
        },
        "flows": [{"src": h1, "dst": h2}],
        "trace": {"pcap": [f"{h1}->{name}", f"{name}->{h1}"]},
    }
    result = ccsim.run(scenario)
    out = tmp_path / "out"
    written = result.write(out, plots=False)
    captures = [p for p in written if p.suffix == ".pcap"]
    assert len(captures) == 2 and all(p.parent == out for p in captures)
    assert {p.name for p in tmp_path.rglob("*")} == {"out", *(p.name for p in out.iterdir())}
    assert all(read_pcap(p.read_bytes()) for p in captures), "data one way, ACKs the other"
