//! Packet captures of link directions in the classic libpcap file format (`trace.pcap`).
//!
//! One capture per traced link direction, kept in memory as the bytes of a file: the global
//! header, then one record per packet as it leaves that direction's transmitter, stamped with
//! the time its first bit goes on the wire (packets the wire then loses included: they left
//! the transmitter). The format is the one of the libpcap file format draft
//! (draft-ietf-opsawg-pcap): magic 0xa1b23c4d (nanosecond timestamps), version 2.4, written
//! little-endian, link type 101 (LINKTYPE_RAW: each record starts with the IPv4 header).
//!
//! Only the headers are stored: a record's captured length is its IPv4 and transport headers,
//! its original length the packet's size on the wire, as a capture with a short snap length
//! (`SNAPLEN`) gives. The headers are rebuilt from ccsim's packet fields:
//! - IPv4 (RFC 791): total length = the packet's size (65 535 at most), DSCP 0 and the
//!   packet's ECN codepoint (RFC 3168 §5), DF set and identification 0 (RFC 6864 §4.1), TTL
//!   64, a correct header checksum. Node i has address 10.0.0.0 + i + 1 (node 0 is 10.0.0.1).
//! - Ports: a flow's sender uses 10000 + (flow mod 55 536), its receiver 5001 + flow / 55 536,
//!   so that every flow has its own 5-tuple.
//! - TCP (RFC 9293): without `handshake` ccsim starts its connections established, without
//!   SYN or FIN, and every segment carries ACK. With it, the SYN carries SYN, the SYN-ACK SYN
//!   and ACK, the FINs FIN and ACK (ccsim's shared `FLAG_SYN_FIN`, told apart by
//!   `tcp::Control`), every other segment ACK; the SYN and each FIN take a sequence number,
//!   as in TCP. Sequence numbers are ccsim's 64-bit byte offsets plus an initial sequence
//!   number, modulo 2^32: the sender's ISN is `flow * 2654435761 mod 2^32`, the receiver's
//!   that plus 2^31. Without a handshake the data start at the ISN, and the receiver, which
//!   sends no data, stays at its ISN and is acknowledged at exactly that. With one (the flow's
//!   SYN seen leaving on any link direction, traced or not) the SYNs sit at the ISNs and the
//!   data start one further; the receiver's FIN sits at its ISN + 1, and the sender
//!   acknowledges ISN + 1 after the SYN-ACK and ISN + 2 after the receiver's FIN. ECE and CWR
//!   as the packet carries them (RFC 3168 §6.1; Accurate ECN's AE flag is not written).
//!   A SYN or SYN-ACK (if the header bytes ccsim counts leave the 20 bytes) has the options
//!   it offers (`tcp::SynOptions`) in Linux's order: MSS (kind 2), SACK-permitted (kind 4, if
//!   offered; else two NOPs), timestamps (kind 8; TSecr 0 on the SYN), NOP, window scale
//!   (kind 3). Other segments' options, as far as the header
//!   bytes ccsim counts for the packet (`size - payload`) leave room, in this order:
//!   timestamps (NOP, NOP, kind 8, RFC 7323 §3) with TSval and TSecr in microseconds of
//!   simulated time modulo 2^32 (data segments echo 0: ccsim's sender echoes nothing), then
//!   the ACK's SACK blocks (NOP, NOP, kind 5, RFC 2018 §3), then NOPs up to the header size
//!   ccsim counts (at most 60 bytes). With the default `header` of 52 bytes and SACK's
//!   4 + 8n bytes, the TCP header written is exactly what ccsim counts, and the payload
//!   length a dissector derives is ccsim's. Window: data segments advertise 65 535 (the
//!   sender's receive window is not modelled); SYN and SYN-ACK their window unscaled (RFC
//!   7323 §2.2), 65 535 at most; ACKs the receiver's window in bytes shifted
//!   right by `WINDOW_SHIFT` (RFC 7323 §2.3, window scale 7, rounded down, 65 535 at most);
//!   without a handshake a reader must be told the scale (Wireshark: `-o
//!   tcp.default_window_scaling:7`). ccsim's own flags (ENCN's NC and its echo, E-DCTCP's
//!   loss request) are not written. An E-DCTCP loss notice (a header a router returns to the
//!   sender) is written as an ACK from the receiver whose acknowledgement number is the
//!   dropped segment's sequence number.
//! - UDP (RFC 768): length = the packet's size minus 20.
//! - DCCP (RFC 4340 §5.1, IP protocol 33): the generic header with 48-bit sequence numbers,
//!   type DCCP-Data (a sequence number per datagram: the sender's ISN plus the datagram
//!   number) or DCCP-Ack (its own sequence number, the receiver's ISN plus ccsim's ACK
//!   counter, and the acknowledgement subheader: the sender's ISN plus the highest datagram
//!   received), then Padding options up to the header size ccsim counts (at most 60 bytes).
//!   CCVal and ccsim's carriage of the CCIDs' options in the packet are not written.
//!
//! Checksums (TCP, UDP, DCCP with full coverage) are those of the packet with a payload of
//! zero bytes, which add nothing to the sum: correct for that packet, and a reader cannot
//! check them anyway without the payload. Headers that do not fit in the packet's size (a
//! `header` parameter below the real headers' size) are written cut at that size.

use std::collections::BTreeMap;

use crate::packet::{Kind, Packet, FLAG_CWR, FLAG_ECE, FLAG_LOST};
use crate::sim::time::Time;
use crate::tcp::{Control, SynOptions};

/// The libpcap magic number of files with nanosecond timestamps.
pub const MAGIC_NS: u32 = 0xa1b2_3c4d;
/// LINKTYPE_RAW: the packet begins with its IP header.
pub const LINKTYPE_RAW: u32 = 101;
/// The snap length written in the global header: the IPv4 header and at most 60 bytes of
/// transport header, the most a record holds.
pub const SNAPLEN: u32 = IPV4_HEADER + MAX_TRANSPORT_HEADER;
/// Bytes of the global header.
pub const FILE_HEADER: usize = 24;
/// Bytes of a record header.
pub const RECORD_HEADER: usize = 16;
/// The right shift applied to ACKs' receive windows (the TCP window scale the SYNs offer).
pub const WINDOW_SHIFT: u32 = crate::tcp::WINDOW_SHIFT as u32;

const IPV4_HEADER: u32 = 20;
const MAX_TRANSPORT_HEADER: u32 = 60;
const TCP_HEADER: u32 = 20;
const UDP_HEADER: u32 = 8;
const DCCP_DATA_HEADER: u32 = 16;
const DCCP_ACK_HEADER: u32 = 24;
const PROTO_TCP: u8 = 6;
const PROTO_UDP: u8 = 17;
const PROTO_DCCP: u8 = 33;
/// Ports: senders from this one up, receivers from `RECEIVER_PORT` up (see the module docs).
const SENDER_PORT: u32 = 10_000;
const RECEIVER_PORT: u32 = 5_001;
const SENDER_PORTS: u32 = 65_536 - SENDER_PORT;
/// Knuth's multiplicative hash constant: spreads the flows' initial sequence numbers.
const ISN_FACTOR: u32 = 2_654_435_761;

/// The captures of a run: which link directions are traced, and their files so far.
#[derive(Debug, Default)]
pub struct Pcap {
    /// Per link direction: its capture's index in `captures`, or `NOT_TRACED`.
    by_link: Vec<u32>,
    /// Per traced link direction: its name (`from->to`) and its file's bytes.
    captures: Vec<(String, Vec<u8>)>,
    /// Per flow: its sender's and its receiver's host (node indices).
    flows: Vec<(u32, u32)>,
    /// Per flow, how its sequence numbers run (`Phase`), from its packets seen leaving any
    /// link direction.
    phases: Vec<Phase>,
}

/// Where a flow's connection is, for its sequence numbers: a SYN and a FIN each take one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
enum Phase {
    /// No SYN seen: the flow started established (no handshake).
    #[default]
    Established,
    /// The SYN was seen: the sender's data start at its ISN + 1, the receiver's at its ISN + 1.
    Opened,
    /// The receiver's FIN was seen: the sender acknowledges the receiver's ISN + 2.
    Closed,
}

const NOT_TRACED: u32 = u32::MAX;

impl Pcap {
    /// Captures of the link directions `traced` (indices into `names`, the names of all link
    /// directions), for flows whose ends are `flows` (sender host, receiver host). A link
    /// direction listed twice has one capture.
    pub fn new(names: &[String], traced: &[u32], flows: Vec<(u32, u32)>) -> Pcap {
        let mut by_link = vec![NOT_TRACED; names.len()];
        let mut captures = Vec::new();
        for &l in traced {
            if by_link[l as usize] == NOT_TRACED {
                by_link[l as usize] = captures.len() as u32;
                captures.push((names[l as usize].clone(), file_header()));
            }
        }
        let phases = vec![Phase::default(); flows.len()];
        Pcap { by_link, captures, flows, phases }
    }

    /// Flow `f` (a new one, or a new flow in a retired flow's index) runs from host `ends.0`
    /// to host `ends.1`, its connection not yet opened.
    pub fn open_flow(&mut self, f: u32, ends: (u32, u32)) {
        let f = f as usize;
        if f >= self.flows.len() {
            self.flows.resize(f + 1, (0, 0));
            self.phases.resize(f + 1, Phase::default());
        }
        self.flows[f] = ends;
        self.phases[f] = Phase::default();
    }

    /// `pkt` leaves link direction `link`'s transmitter at `now`: append its record if that
    /// direction is traced. Out of line and cold: the engine calls it only when the run has
    /// captures at all.
    #[cold]
    #[inline(never)]
    pub fn record(&mut self, link: usize, now: Time, pkt: &Packet) {
        // Every packet of every flow is seen here, traced or not: a flow's SYN leaves its
        // sender's link before anything else of it, its receiver's FIN before the last ACK.
        let f = pkt.flow as usize;
        let control = if matches!(pkt.kind, Kind::TcpData | Kind::TcpAck) { Control::of(pkt) } else { None };
        if control == Some(Control::Syn) {
            self.phases[f] = self.phases[f].max(Phase::Opened);
        }
        let c = self.by_link[link];
        if c != NOT_TRACED {
            append_record(&mut self.captures[c as usize].1, now, pkt, self.flows[f], self.phases[f]);
        }
        if control == Some(Control::Fin) && pkt.kind.to_sender() {
            self.phases[f] = Phase::Closed;
        }
    }

    /// Every capture so far as the bytes of a pcap file, by link direction name.
    pub fn files(&self) -> BTreeMap<String, Vec<u8>> {
        self.captures.iter().cloned().collect()
    }
}

/// The global header of a capture file.
fn file_header() -> Vec<u8> {
    let mut b = Vec::with_capacity(FILE_HEADER);
    b.extend_from_slice(&MAGIC_NS.to_le_bytes());
    b.extend_from_slice(&2u16.to_le_bytes()); // version 2.4
    b.extend_from_slice(&4u16.to_le_bytes());
    b.extend_from_slice(&0i32.to_le_bytes()); // timestamps are UTC (simulated time from 0)
    b.extend_from_slice(&0u32.to_le_bytes()); // accuracy of timestamps: 0, as everyone writes
    b.extend_from_slice(&SNAPLEN.to_le_bytes());
    b.extend_from_slice(&LINKTYPE_RAW.to_le_bytes());
    b
}

/// The IPv4 address of node `n`: 10.0.0.0 + n + 1.
pub fn address(node: u32) -> [u8; 4] {
    let a = node.wrapping_add(1) & 0x00ff_ffff;
    (0x0a00_0000 | a).to_be_bytes()
}

/// Flow `flow`'s ports: (sender's, receiver's).
pub fn ports(flow: u32) -> (u16, u16) {
    ((SENDER_PORT + flow % SENDER_PORTS) as u16, (RECEIVER_PORT + flow / SENDER_PORTS) as u16)
}

/// Flow `flow`'s initial sequence numbers: (sender's, receiver's).
pub fn isns(flow: u32) -> (u32, u32) {
    let s = flow.wrapping_mul(ISN_FACTOR);
    (s, s.wrapping_add(1 << 31))
}

/// Append one record: its header, then the packet's IPv4 and transport headers; `phase` says
/// how the flow's TCP sequence numbers run.
fn append_record(buf: &mut Vec<u8>, now: Time, pkt: &Packet, (sender, receiver): (u32, u32), phase: Phase) {
    let mut h = [0u8; (IPV4_HEADER + MAX_TRANSPORT_HEADER) as usize];
    let to_sender = pkt.kind.to_sender();
    let (src, dst) = if to_sender { (receiver, sender) } else { (sender, receiver) };
    let (sport, dport) = ports(pkt.flow);
    let (sport, dport) = if to_sender { (dport, sport) } else { (sport, dport) };
    // The header bytes ccsim counts for this packet, beyond the IPv4 header.
    let counted = pkt.size.saturating_sub(pkt.payload).saturating_sub(IPV4_HEADER);
    let (proto, transport_len) = {
        let t = &mut h[IPV4_HEADER as usize..];
        t[0..2].copy_from_slice(&sport.to_be_bytes());
        t[2..4].copy_from_slice(&dport.to_be_bytes());
        match pkt.kind {
            Kind::TcpData | Kind::TcpAck => (PROTO_TCP, tcp_header(t, pkt, counted, phase)),
            Kind::Udp => {
                let len = pkt.size.saturating_sub(IPV4_HEADER).min(0xffff) as u16;
                t[4..6].copy_from_slice(&len.to_be_bytes());
                (PROTO_UDP, UDP_HEADER)
            }
            Kind::DccpData | Kind::DccpAck => (PROTO_DCCP, dccp_header(t, pkt, counted)),
        }
    };
    let total = pkt.size.min(0xffff) as u16;
    let ip = &mut h[..IPV4_HEADER as usize];
    ip[0] = 0x45; // version 4, 5 words
    ip[1] = pkt.ecn as u8; // DSCP 0, ECN
    ip[2..4].copy_from_slice(&total.to_be_bytes());
    ip[6] = 0x40; // DF, fragment offset 0 (identification 0: an atomic datagram)
    ip[8] = 64; // TTL
    ip[9] = proto;
    ip[12..16].copy_from_slice(&address(src));
    ip[16..20].copy_from_slice(&address(dst));
    let sum = !fold(sum_words(ip, 0));
    ip[10..12].copy_from_slice(&sum.to_be_bytes());

    // The transport checksum over the pseudo-header (RFC 9293 §3.1, RFC 768, RFC 4340 §9.1),
    // the header and a payload of zeros, which adds nothing.
    let seg_len = u32::from(total).saturating_sub(IPV4_HEADER);
    let t = &mut h[IPV4_HEADER as usize..(IPV4_HEADER + transport_len) as usize];
    let pseudo = sum_words(&address(src), 0) + sum_words(&address(dst), 0) + u32::from(proto) + seg_len;
    let sum = !fold(sum_words(t, pseudo));
    // Where the checksum is: TCP's at byte 16, UDP's and DCCP's at byte 6.
    let at = if proto == PROTO_TCP { 16 } else { 6 };
    // A UDP checksum that comes out 0 is sent as all ones (RFC 768).
    let sum = if proto == PROTO_UDP && sum == 0 { 0xffff } else { sum };
    t[at..at + 2].copy_from_slice(&sum.to_be_bytes());

    let caplen = (IPV4_HEADER + transport_len).min(pkt.size);
    buf.reserve(RECORD_HEADER + caplen as usize);
    buf.extend_from_slice(&((now / 1_000_000_000) as u32).to_le_bytes());
    buf.extend_from_slice(&((now % 1_000_000_000) as u32).to_le_bytes());
    buf.extend_from_slice(&caplen.to_le_bytes());
    buf.extend_from_slice(&pkt.size.to_le_bytes());
    buf.extend_from_slice(&h[..caplen as usize]);
}

/// Write the TCP header from byte 4 on (the ports are written) into `t`; its length.
fn tcp_header(t: &mut [u8], pkt: &Packet, counted: u32, phase: Phase) -> u32 {
    let control = Control::of(pkt);
    let syn = control == Some(Control::Syn);
    // With a handshake each end's SYN takes the sequence number at its ISN.
    let (isn_s, isn_r) = isns(pkt.flow);
    let opened = (phase >= Phase::Opened) as u32;
    let (isn_s, isn_r) = (isn_s.wrapping_add(opened), isn_r.wrapping_add(opened));
    let unscaled = pkt.window.min(0xffff);
    let (seq, ack, window) = if pkt.kind == Kind::TcpData {
        if syn {
            // A SYN acknowledges nothing: its ACK flag is clear, its acknowledgement number 0.
            (isn_s.wrapping_sub(1), 0, unscaled)
        } else {
            (isn_s.wrapping_add(pkt.seq as u32), isn_r.wrapping_add((phase == Phase::Closed) as u32), 0xffff)
        }
    } else {
        let acked = if pkt.flags & FLAG_LOST != 0 { pkt.seq } else { pkt.ack };
        let seq = if syn { isn_r.wrapping_sub(1) } else { isn_r };
        (seq, isn_s.wrapping_add(acked as u32), if syn { unscaled } else { (pkt.window >> WINDOW_SHIFT).min(0xffff) })
    };
    t[4..8].copy_from_slice(&seq.to_be_bytes());
    t[8..12].copy_from_slice(&ack.to_be_bytes());
    // ACK on every segment but the SYN; SYN (0x02) or FIN (0x01) on the handshake's.
    let mut flags = match (control, pkt.kind) {
        (Some(Control::Syn), Kind::TcpData) => 0x02,
        (Some(Control::Syn), _) => 0x12,
        (Some(Control::Fin), _) => 0x11,
        (None, _) => 0x10,
    };
    if pkt.flags & FLAG_ECE != 0 {
        flags |= 0x40;
    }
    if pkt.flags & FLAG_CWR != 0 {
        flags |= 0x80;
    }
    t[13] = flags;
    t[14..16].copy_from_slice(&(window as u16).to_be_bytes());
    // Options, as far as the header bytes ccsim counts leave room.
    let room = counted.clamp(TCP_HEADER, MAX_TRANSPORT_HEADER) & !3;
    let mut at = TCP_HEADER as usize;
    if syn && room as usize >= at + SYN_OPTIONS {
        at += syn_options(&mut t[at..at + SYN_OPTIONS], pkt);
    } else if room as usize >= at + 12 {
        t[at..at + 4].copy_from_slice(&[1, 1, 8, 10]);
        t[at + 4..at + 8].copy_from_slice(&micros(pkt.ts).to_be_bytes());
        t[at + 8..at + 12].copy_from_slice(&micros(pkt.ts_echo).to_be_bytes());
        at += 12;
    }
    let blocks = (pkt.sack_len as usize).min((room as usize).saturating_sub(at + 4) / 8);
    if blocks > 0 {
        t[at..at + 4].copy_from_slice(&[1, 1, 5, (2 + 8 * blocks) as u8]);
        at += 4;
        let base = isn_s.wrapping_add(pkt.ack as u32);
        for b in &pkt.sack[..blocks] {
            t[at..at + 4].copy_from_slice(&base.wrapping_add(b.start).to_be_bytes());
            t[at + 4..at + 8].copy_from_slice(&base.wrapping_add(b.end).to_be_bytes());
            at += 8;
        }
    }
    t[at..room as usize].fill(1); // NOP
    let len = room.max(at as u32);
    t[12] = ((len / 4) as u8) << 4;
    len
}

/// The bytes of a SYN's or SYN-ACK's options.
const SYN_OPTIONS: usize = 20;

/// Write the options the SYN or SYN-ACK `pkt` offers into `t` (`SYN_OPTIONS` bytes), in the
/// order Linux writes them; their length.
fn syn_options(t: &mut [u8], pkt: &Packet) -> usize {
    let o = SynOptions::read(pkt);
    let mss = o.mss.min(0xffff) as u16;
    t[0..4].copy_from_slice(&[2, 4, (mss >> 8) as u8, mss as u8]);
    t[4..6].copy_from_slice(if o.sack { &[4, 2] } else { &[1, 1] });
    t[6..8].copy_from_slice(&[8, 10]);
    let (tsval, tsecr) = if o.timestamps { (micros(pkt.ts), micros(pkt.ts_echo)) } else { (0, 0) };
    t[8..12].copy_from_slice(&tsval.to_be_bytes());
    t[12..16].copy_from_slice(&tsecr.to_be_bytes());
    t[16..20].copy_from_slice(&[1, 3, 3, o.wscale]);
    SYN_OPTIONS
}

/// Write the DCCP header from byte 4 on into `t`; its length.
fn dccp_header(t: &mut [u8], pkt: &Packet, counted: u32) -> u32 {
    let (isn_s, isn_r) = isns(pkt.flow);
    let (base, kind, seq) = if pkt.kind == Kind::DccpData {
        (DCCP_DATA_HEADER, 2u8, u64::from(isn_s).wrapping_add(pkt.seq))
    } else {
        (DCCP_ACK_HEADER, 3u8, u64::from(isn_r).wrapping_add(pkt.seq))
    };
    let len = (counted & !3).clamp(base, MAX_TRANSPORT_HEADER);
    t[4] = (len / 4) as u8; // data offset
    t[8] = (kind << 1) | 1; // type, X = 1: 48-bit sequence numbers
    t[10..16].copy_from_slice(&seq.to_be_bytes()[2..]);
    if pkt.kind == Kind::DccpAck {
        let ack = u64::from(isn_s).wrapping_add(pkt.ack);
        t[18..24].copy_from_slice(&ack.to_be_bytes()[2..]);
    }
    // The rest: Padding options (type 0), which the zeroed buffer already holds.
    len
}

/// Simulated time in microseconds, modulo 2^32 (the timestamp option's clock).
fn micros(t: Time) -> u32 {
    (t / 1_000) as u32
}

/// `acc` plus the big-endian 16-bit words of `bytes` (an odd last byte padded with zero).
fn sum_words(bytes: &[u8], acc: u32) -> u32 {
    let mut sum = acc;
    let mut words = bytes.chunks_exact(2);
    for w in &mut words {
        sum += u32::from(u16::from_be_bytes([w[0], w[1]]));
    }
    if let [last] = words.remainder() {
        sum += u32::from(*last) << 8;
    }
    sum
}

/// The one's complement sum of a 32-bit sum of 16-bit words (RFC 1071).
fn fold(mut sum: u32) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{AlgoSpec, Config, DirSpec, FlowSpec, LinkSpec, NodeSpec, TraceSpec};
    use crate::packet::{Ecn, SackBlock};
    use crate::params::ParamValue;
    use crate::sim::time::{MS, SEC};
    use crate::Simulation;

    /// One record of a file: (seconds, nanoseconds, caplen, len, the captured bytes).
    type Record = (u32, u32, u32, u32, Vec<u8>);

    fn u32_le(b: &[u8], at: usize) -> u32 {
        u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
    }

    fn u32_be(b: &[u8], at: usize) -> u32 {
        u32::from_be_bytes(b[at..at + 4].try_into().unwrap())
    }

    fn u16_be(b: &[u8], at: usize) -> u16 {
        u16::from_be_bytes([b[at], b[at + 1]])
    }

    fn records(file: &[u8]) -> Vec<Record> {
        assert_eq!(u32_le(file, 0), MAGIC_NS);
        assert_eq!((u32_le(file, 16), u32_le(file, 20)), (SNAPLEN, LINKTYPE_RAW));
        let mut out = Vec::new();
        let mut at = FILE_HEADER;
        while at < file.len() {
            let (s, ns, cap, len) =
                (u32_le(file, at), u32_le(file, at + 4), u32_le(file, at + 8), u32_le(file, at + 12));
            assert!(cap <= len && cap <= SNAPLEN && ns < 1_000_000_000);
            out.push((s, ns, cap, len, file[at + RECORD_HEADER..at + RECORD_HEADER + cap as usize].to_vec()));
            at += RECORD_HEADER + cap as usize;
        }
        assert_eq!(at, file.len(), "records end with the file");
        out
    }

    /// The one record of a capture of `pkt` sent at `now` by flow 3 from node 4 to node 9.
    fn one(now: Time, pkt: Packet) -> Record {
        let mut buf = file_header();
        append_record(&mut buf, now, &pkt, (4, 9), Phase::Established);
        records(&buf).remove(0)
    }

    /// The headers are consistent: IPv4 checksum, and the transport checksum over the
    /// pseudo-header with a payload of zeros (both sums verify to all ones).
    fn check_sums(h: &[u8]) {
        assert_eq!(fold(sum_words(&h[..20], 0)), 0xffff, "IPv4 header checksum");
        let total = u32::from(u16_be(h, 2));
        let pseudo = sum_words(&h[12..20], 0) + u32::from(h[9]) + total - 20;
        assert_eq!(fold(sum_words(&h[20..], pseudo)), 0xffff, "transport checksum");
    }

    fn tcp(kind: Kind) -> Packet {
        Packet { flow: 3, kind, ts: 1_234_567_890, ..Packet::default() }
    }

    #[test]
    fn a_data_segment_has_its_ecn_sequence_number_and_timestamps() {
        let pkt = Packet {
            seq: (5 << 32) + 1448,
            size: 1500,
            payload: 1448,
            ecn: Ecn::Ce,
            flags: FLAG_CWR,
            ..tcp(Kind::TcpData)
        };
        let (s, ns, cap, len, h) = one(2 * SEC + 17, pkt);
        assert_eq!((s, ns, cap, len), (2, 17, 52, 1500));
        check_sums(&h);
        assert_eq!((h[0], h[1] & 3, u16_be(&h, 2), h[9]), (0x45, 3, 1500, PROTO_TCP));
        assert_eq!((&h[12..16], &h[16..20]), (&[10, 0, 0, 5][..], &[10, 0, 0, 10][..]));
        let t = &h[20..];
        assert_eq!((u16_be(t, 0), u16_be(t, 2)), (10_003, 5_001));
        let (isn_s, isn_r) = isns(3);
        assert_eq!((u32_be(t, 4), u32_be(t, 8)), (isn_s.wrapping_add(1448), isn_r));
        assert_eq!((t[12] >> 4, t[13]), (8, 0x90), "32-byte header; ACK and CWR");
        assert_eq!(&t[20..24], &[1, 1, 8, 10]);
        assert_eq!((u32_be(t, 24), u32_be(t, 28)), (1_234_567, 0), "TSval in microseconds");
    }

    #[test]
    fn an_ack_carries_ece_its_sack_blocks_and_a_scaled_window() {
        let mut pkt = Packet {
            ack: 10_000,
            ts_echo: 999_000,
            window: 4 << 20,
            flags: FLAG_ECE,
            size: 52 + 28,
            sack_len: 3,
            ..tcp(Kind::TcpAck)
        };
        for (i, b) in pkt.sack.iter_mut().enumerate() {
            *b = SackBlock { start: 1000 * (2 * i as u32 + 1), end: 1000 * (2 * i as u32 + 2) };
        }
        let (_, _, cap, len, h) = one(0, pkt);
        assert_eq!((cap, len), (80, 80));
        check_sums(&h);
        assert_eq!((&h[12..16], &h[16..20]), (&[10, 0, 0, 10][..], &[10, 0, 0, 5][..]), "receiver to sender");
        let t = &h[20..];
        let (isn_s, isn_r) = isns(3);
        assert_eq!((u16_be(t, 0), u16_be(t, 2)), (5_001, 10_003));
        assert_eq!((u32_be(t, 4), u32_be(t, 8)), (isn_r, isn_s.wrapping_add(10_000)));
        assert_eq!((t[12] >> 4, t[13], u16_be(t, 14)), (15, 0x50, 32_768), "60 bytes; ACK and ECE; 4 MiB >> 7");
        assert_eq!(u32_be(t, 28), 999, "TSecr");
        assert_eq!(&t[32..36], &[1, 1, 5, 26]);
        let blocks: Vec<u32> = (0..6).map(|k| u32_be(t, 36 + 4 * k).wrapping_sub(isn_s)).collect();
        assert_eq!(blocks, [11_000, 12_000, 13_000, 14_000, 15_000, 16_000]);
        // The same ACK counted without room for its blocks keeps its timestamps only.
        let (_, _, cap, _, h) = one(0, Packet { size: 52, ..pkt });
        assert_eq!((cap, h[32] >> 4), (52, 8));
    }

    #[test]
    fn udp_and_dccp_headers_are_whole_and_headers_that_do_not_fit_are_cut() {
        let udp = Packet { kind: Kind::Udp, size: 48, payload: 20, ecn: Ecn::Ect0, ..tcp(Kind::Udp) };
        let (_, _, cap, len, h) = one(0, udp);
        assert_eq!((cap, len, h[9], h[1] & 3, u16_be(&h, 24)), (28, 48, PROTO_UDP, 2, 28));
        check_sums(&h);
        let data = Packet { kind: Kind::DccpData, size: 1500, payload: 1464, seq: 7, ..Packet::default() };
        let (_, _, cap, _, h) = one(0, Packet { flow: 3, ..data });
        assert_eq!((cap, h[9], h[24], h[28] >> 1 & 15, h[28] & 1), (36, PROTO_DCCP, 4, 2, 1));
        assert_eq!(u64::from(u32_be(&h, 32)) + (u64::from(u16_be(&h, 30)) << 32), u64::from(isns(3).0) + 7);
        check_sums(&h);
        let ack = Packet { flow: 3, kind: Kind::DccpAck, size: 52, seq: 2, ack: 7, ..Packet::default() };
        let (_, _, cap, _, h) = one(0, ack);
        assert_eq!((cap, h[24], h[28] >> 1 & 15), (52, 8, 3), "24-byte DCCP-Ack and 8 bytes of padding");
        assert_eq!(u32_be(&h, 40), isns(3).0 + 7);
        check_sums(&h);
        // A TCP header counted as 30 bytes in all: the record stops at the packet's size.
        let (_, _, cap, len, _) = one(0, Packet { size: 30, ..tcp(Kind::TcpAck) });
        assert_eq!((cap, len), (30, 30));
    }

    /// s0 -- A -- B -- r0, and s0 -- A -- B -- r1 with a lossy bottleneck: TCP with ECN,
    /// UDP, DCCP.
    fn network(pcap: Vec<String>) -> Config {
        let queue = AlgoSpec::named("codel").with("ecn", ParamValue::Bool(true));
        let dir =
            |rate, queue: &AlgoSpec| DirSpec { rate_bps: rate, delay_ns: 2 * MS, loss: 0.0, queue: queue.clone() };
        let fast = AlgoSpec::named("droptail");
        let mut bottleneck = dir(5_000_000, &queue);
        bottleneck.loss = 0.01;
        let access =
            |a, b| LinkSpec { a, b, ab: dir(100_000_000, &fast), ba: dir(100_000_000, &fast), schedule: Vec::new() };
        let flow = |dst, transport: AlgoSpec, app: AlgoSpec| FlowSpec {
            name: None,
            src: 2,
            dst,
            transport,
            cc: None,
            app,
            start_ns: 0,
            start_max_ns: None,
            stop_ns: None,
            group: None,
        };
        Config {
            duration_ns: 3 * SEC,
            warmup_ns: 0,
            seed: 1,
            nodes: vec![
                NodeSpec::router("A"),
                NodeSpec::router("B"),
                NodeSpec::host("s0"),
                NodeSpec::host("r0"),
                NodeSpec::host("r1"),
            ],
            links: vec![
                LinkSpec { a: 0, b: 1, ab: bottleneck, ba: dir(5_000_000, &queue), schedule: Vec::new() },
                access(2, 0),
                access(1, 3),
                access(1, 4),
            ],
            flows: vec![
                flow(3, AlgoSpec::named("tcp").with("ecn", ParamValue::Bool(true)), AlgoSpec::named("bulk")),
                flow(4, AlgoSpec::named("udp"), AlgoSpec::named("cbr").with("rate", ParamValue::Int(500_000))),
                flow(4, AlgoSpec::named("dccp"), AlgoSpec::named("bulk")),
            ],
            trace: TraceSpec { pcap, ..TraceSpec::default() },
            bottleneck: None,
            jain_flows: None,
            control: Vec::new(),
            workloads: Vec::new(),
        }
    }

    #[test]
    fn a_capture_holds_every_packet_its_link_direction_sent_and_nothing_else() {
        let mut sim = Simulation::new(&network(vec!["A->B".into(), "B->A".into(), "A->B".into()])).unwrap();
        sim.run();
        let files = sim.pcap();
        assert_eq!(files.keys().collect::<Vec<_>>(), ["A->B", "B->A"]);
        let results = sim.results();
        for (name, file) in &files {
            let q = results.queues.iter().find(|q| &q.name == name).unwrap();
            let recs = records(file);
            assert_eq!(recs.len() as u64, q.departures, "{name}");
            assert_eq!(recs.iter().map(|r| u64::from(r.3)).sum::<u64>(), q.tx_bytes, "{name}");
            let ce = recs.iter().filter(|r| r.4[1] & 3 == 3).count() as u64;
            assert_eq!(ce, q.marks, "{name}: CE-marked packets are the queue's marks");
            assert!(recs.windows(2).all(|w| (w[0].0, w[0].1) <= (w[1].0, w[1].1)), "{name}: in time order");
            recs.iter().for_each(|r| check_sums(&r.4));
        }
        let forward = records(&files["A->B"]);
        for proto in [PROTO_TCP, PROTO_UDP, PROTO_DCCP] {
            assert!(forward.iter().any(|r| r.4[9] == proto), "protocol {proto} crosses A->B");
        }
        assert!(results.queues[0].marks > 0 && results.queues[0].link_losses > 0, "the test needs marks and losses");
        // Without captures, there are none.
        let mut plain = Simulation::new(&network(Vec::new())).unwrap();
        plain.run();
        assert!(plain.pcap().is_empty());
    }

    #[test]
    fn a_handshake_and_a_close_are_written_with_syn_fin_and_the_syn_options() {
        // s0 -- A -- B -- r0 (no losses): a 5 000-byte transfer over TCP with a handshake and
        // ECN, captured on the sender's link both ways.
        let mut cfg = network(vec!["s0->A".into(), "A->s0".into()]);
        cfg.links[0].ab.loss = 0.0;
        let tcp = AlgoSpec::named("tcp").with("ecn", ParamValue::Bool(true)).with("handshake", ParamValue::Bool(true));
        cfg.flows = vec![FlowSpec {
            transport: tcp,
            app: AlgoSpec::named("transfer").with("size", ParamValue::Int(5000)),
            ..cfg.flows[0].clone()
        }];
        let mut sim = Simulation::new(&cfg).unwrap();
        sim.run();
        sim.check_conservation().unwrap();
        let files = sim.pcap();
        let (isn_s, isn_r) = isns(0);
        // TCP header fields of each record: (flags, seq - ISN, ack - ISN, header bytes, payload).
        let fields = |name: &str, isn_seq: u32, isn_ack: u32| -> Vec<(u8, u32, u32, u8, u16)> {
            records(&files[name])
                .iter()
                .map(|r| {
                    let (h, t) = (&r.4, &r.4[20..]);
                    check_sums(h);
                    let ack = if t[13] & 0x10 != 0 { u32_be(t, 8).wrapping_sub(isn_ack) } else { u32_be(t, 8) };
                    let len = u16_be(h, 2) - 20 - 4 * (t[12] >> 4) as u16;
                    (t[13], u32_be(t, 4).wrapping_sub(isn_seq), ack, 4 * (t[12] >> 4), len)
                })
                .collect()
        };
        let out = fields("s0->A", isn_s, isn_r);
        // SYN with ECE and CWR (RFC 3168 §6.1.1), no ACK, at the ISN, 40-byte header; the
        // handshake's ACK; the data from ISN + 1 (1448 B segments); the FIN after the last
        // byte; the ACK of the receiver's FIN at ISN + 2.
        assert_eq!(out[0], (0x02 | 0x40 | 0x80, 0, 0, 40, 0));
        assert_eq!(out[1], (0x10, 1, 1, 32, 0));
        let data: Vec<(u32, u16)> = out[2..6].iter().map(|r| (r.1, r.4)).collect();
        assert_eq!(data, vec![(1, 1448), (1449, 1448), (2897, 1448), (4345, 656)]);
        assert_eq!(&out[6..], &[(0x11, 5001, 1, 32, 0), (0x10, 5002, 2, 32, 0)]);
        let back = fields("A->s0", isn_r, isn_s);
        // SYN-ACK with ECE alone, at the receiver's ISN, acknowledging the SYN; its ACKs from
        // ISN + 1; its FIN at ISN + 1 acknowledging the sender's FIN (5000 + 2).
        assert_eq!(back[0], (0x12 | 0x40, 0, 1, 40, 0));
        assert!(back[1..back.len() - 1].iter().all(|r| r.0 == 0x10 && r.1 == 1));
        assert_eq!(back.last(), Some(&(0x11, 1, 5002, 32, 0)));
        // The SYN's options, in Linux's order: MSS 1448, SACK-permitted, timestamps (TSecr 0),
        // NOP, window scale 7; its window unscaled.
        let syn = &records(&files["s0->A"])[0].4[20..];
        assert_eq!(&syn[20..26], &[2, 4, 0x05, 0xa8, 4, 2]);
        assert_eq!((&syn[26..28], u32_be(syn, 32)), (&[8u8, 10][..], 0));
        assert_eq!((&syn[36..40], u16_be(syn, 14)), (&[1u8, 3, 3, 7][..], 65_535));
        let results = sim.results();
        let flow = &results.flows[0];
        assert!(flow.connect_s.is_some() && flow.fct_s.is_some() && flow.syn_retransmissions == 0);
        assert_eq!((flow.packets_sent, flow.packets_received), (4, 4), "data packets only");
    }

    #[test]
    fn an_unknown_link_direction_is_refused_with_the_names_there_are() {
        let err = Simulation::new(&network(vec!["A->B".into(), "A-B".into()])).err().unwrap();
        assert_eq!(err.field, "trace.pcap[1]");
        assert!(err.message.contains("no link direction 'A-B'") && err.message.contains("A->B, B->A, s0->A"), "{err}");
    }
}
