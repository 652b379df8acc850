//! Packets: small plain values copied along the path; never one heap allocation per packet.

use crate::sim::time::Time;

/// The two-bit ECN field of the IP header (RFC 3168 §5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u8)]
pub enum Ecn {
    /// Not ECN-capable transport (00).
    #[default]
    NotEct = 0,
    /// ECN-capable transport, codepoint ECT(0) (10).
    Ect0 = 2,
    /// ECN-capable transport, codepoint ECT(1) (01).
    Ect1 = 1,
    /// Congestion experienced (11).
    Ce = 3,
}

impl Ecn {
    /// True for ECT(0), ECT(1) and CE: a router may mark instead of dropping.
    pub fn is_ect(self) -> bool {
        self != Ecn::NotEct
    }
}

/// What a packet carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// A TCP segment with payload.
    #[default]
    TcpData = 0,
    /// A pure TCP acknowledgement.
    TcpAck = 1,
    /// A UDP datagram.
    Udp = 2,
    /// A DCCP-Data packet (RFC 4340 §5.1); fields as mapped in `dccp/mod.rs`.
    DccpData = 3,
    /// A DCCP-Ack packet carrying the receiver's feedback (RFC 4340 §5.4).
    DccpAck = 4,
}

impl Kind {
    /// Feedback travelling back to a flow's sender (TCP and DCCP acknowledgements); everything
    /// else goes to the receiver.
    pub fn to_sender(self) -> bool {
        matches!(self, Kind::TcpAck | Kind::DccpAck)
    }

    /// A datagram that is never retransmitted: losing it loses the message it carries.
    pub fn is_datagram(self) -> bool {
        matches!(self, Kind::Udp | Kind::DccpData)
    }
}

/// TCP flag: ECN-Echo (RFC 3168 §6.1).
pub const FLAG_ECE: u8 = 1 << 0;
/// TCP flag: Congestion Window Reduced (RFC 3168 §6.1).
pub const FLAG_CWR: u8 = 1 << 1;
/// ENCN non-congestion flag on data packets (ccsim's carriage of ENCN, see `qdisc/encn.rs`):
/// "no ENCN router on the path so far is congested". An ENCN-capable sender sets it on every
/// data packet; each ENCN queue clears it when its queue is at or above its `q_min`; other
/// queues leave it alone, so it arrives set only if every ENCN router on the path was below
/// its threshold.
pub const FLAG_NC: u8 = 1 << 2;
/// ENCN echo on ACKs: set iff the data segment that triggered the ACK (the latest one
/// received) carried [`FLAG_NC`] (`tcp/receiver.rs`).
pub const FLAG_NC_ECHO: u8 = 1 << 3;
/// E-DCTCP (ccsim's carriage, see `tcp/cc/edctcp.rs`) on data packets: "if you must drop me,
/// send my header back to my sender". Every router honours it.
pub const FLAG_LN: u8 = 1 << 4;
/// E-DCTCP loss notification: a header-only packet (kind `TcpAck`) a router returned to the
/// sender instead of forwarding the data segment `seq`, sent at `ts`, that it dropped.
pub const FLAG_LOST: u8 = 1 << 5;

/// Maximum SACK blocks carried by an ACK (RFC 2018 §3: three with timestamps).
pub const MAX_SACK_BLOCKS: usize = 3;

/// A SACK block `[start, end)` as byte offsets above the cumulative ACK, which keeps the
/// packet small; windows above 4 GiB cannot be described, and are not simulated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlock {
    /// First byte of the block, relative to `ack`.
    pub start: u32,
    /// One past the last byte of the block, relative to `ack`.
    pub end: u32,
}

/// One packet on the wire (sizes are IP packet sizes; link-layer framing is not modelled).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Packet {
    /// Flow this packet belongs to (index in the configuration).
    pub flow: u32,
    /// Destination node.
    pub dst: u32,
    /// Size on the wire: headers plus payload (bytes).
    pub size: u32,
    /// Transport payload (bytes).
    pub payload: u32,
    /// First payload byte (TCP) or datagram number (UDP).
    pub seq: u64,
    /// Cumulative acknowledgement: next byte expected (TCP ACKs).
    pub ack: u64,
    /// Sender's timestamp (RFC 7323 TSval): its send time; also used for one-way delay.
    pub ts: Time,
    /// Echoed timestamp (RFC 7323 TSecr) on ACKs.
    pub ts_echo: Time,
    /// When the packet entered its current queue (for sojourn time).
    pub enqueued_at: Time,
    /// Advertised receive window (bytes) on ACKs.
    pub window: u32,
    /// What the packet carries.
    pub kind: Kind,
    /// IP ECN field.
    pub ecn: Ecn,
    /// TCP flags (`FLAG_*`).
    pub flags: u8,
    /// Number of valid entries in `sack`.
    pub sack_len: u8,
    /// SACK blocks, most recently changed first (RFC 2018 §4).
    pub sack: [SackBlock; MAX_SACK_BLOCKS],
}

/// The packets on the wires, in one pool of slots addressed by `u32`: a wire keeps only
/// (arrival time, slot), and a slot freed by an arrival is the next one a transmission fills
/// (last freed, first reused), so the packet is written to a slot still in cache. A wire's
/// ring of 96-byte packets would be written one slot further each time, and with thousands
/// of access links that slot has long left the cache (issue 9, round 5).
#[derive(Clone, Debug, Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<u32>,
}

impl PacketPool {
    /// Store `pkt`; returns its slot.
    #[inline]
    pub fn put(&mut self, pkt: Packet) -> u32 {
        match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = pkt;
                slot
            }
            None => {
                self.slots.push(pkt);
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// Remove the packet in `slot` (which `put` returned and nobody took since).
    #[inline]
    pub fn take(&mut self, slot: u32) -> Packet {
        self.free.push(slot);
        self.slots[slot as usize]
    }

    /// Where the packet in `slot` is stored (for prefetching; any slot number is accepted).
    #[inline]
    pub fn slot_ptr(&self, slot: u32) -> *const Packet {
        self.slots.as_ptr().wrapping_add(slot as usize)
    }

    /// The packet in `slot`.
    pub fn get(&self, slot: u32) -> &Packet {
        &self.slots[slot as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pool_returns_what_was_put_and_reuses_the_last_freed_slot_first() {
        let mut pool = PacketPool::default();
        let pkt = |seq| Packet { seq, ..Packet::default() };
        let (a, b, c) = (pool.put(pkt(1)), pool.put(pkt(2)), pool.put(pkt(3)));
        assert_eq!((a, b, c), (0, 1, 2));
        assert_eq!(pool.take(b).seq, 2);
        assert_eq!(pool.take(a).seq, 1);
        assert_eq!(pool.put(pkt(4)), a, "the last freed slot first");
        assert_eq!(pool.put(pkt(5)), b);
        assert_eq!(pool.put(pkt(6)), 3, "then a new one");
        assert_eq!([a, b, c, 3].map(|s| pool.get(s).seq), [4, 5, 3, 6]);
    }

    #[test]
    fn packets_stay_small() {
        // Packets are copied through queues and wires; keep them within 96 bytes.
        assert!(std::mem::size_of::<Packet>() <= 96, "{}", std::mem::size_of::<Packet>());
    }
}
