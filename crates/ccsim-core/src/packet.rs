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
/// TCP flag AE (Accurate ECN, RFC 9768 §3.2.2, the bit RFC 3540's nonce used): with
/// [`FLAG_CWR`] and [`FLAG_ECE`] it forms an AccECN ACK's 3-bit ACE counter (AE the most
/// significant bit, ECE the least).
pub const FLAG_AE: u8 = 1 << 6;
/// E-DCTCP loss notification: a header-only packet (kind `TcpAck`) a router returned to the
/// sender instead of forwarding the data segment `seq`, sent at `ts`, that it dropped.
pub const FLAG_LOST: u8 = 1 << 5;
/// TCP SYN or FIN (RFC 9293 §3.1), on the header-only segments that open and close a
/// connection (TCP's `handshake` option, `tcp/sender/connection.rs`): the sender's SYN and FIN
/// (kind `TcpData` without payload) and the receiver's SYN-ACK and FIN-ACK (kind `TcpAck`).
/// It is the last free bit of `flags`, so SYN and FIN share it and are told apart by their
/// place in the sequence space, as in TCP: a SYN comes before the first byte (the sender's at
/// `seq` 0, the receiver's acknowledging `ack` 0), a FIN after the last (ccsim closes only
/// connections that carried data, so its `seq` or `ack` is above 0); see `tcp::Control`.
pub const FLAG_SYN_FIN: u8 = 1 << 7;

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

/// The packets on the wires, in one pool of slots addressed by `u32`, each wire a list
/// threaded through the slots ([`Wire`]).
///
/// A slot freed by an arrival is the next one a transmission fills (last freed, first
/// reused), so the packet is written to a slot still in cache. A wire's ring of 96-byte
/// packets would be written one slot further each time, and with thousands of access links
/// that slot has long left the cache; so would a ring of (arrival, slot) entries, one heap
/// buffer per wire, which is why a wire is only its two ends and each slot holds, after its
/// packet, the link to the packet behind it: an arrival reads both from the same lines.
#[derive(Clone, Debug, Default)]
pub struct PacketPool {
    /// Per slot: the packet, and the packet behind it on its wire (read when it arrives).
    slots: Vec<Slot>,
    free: Vec<u32>,
}

/// A pool slot: the packet first (`slot_ptr` points at it), then the packet behind it on its
/// wire, written when that one enters the wire, so that the arrival of this one can schedule
/// the next without reading the next one's slot.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
struct Slot {
    packet: Packet,
    after: OnWire,
}

/// End of a wire's list.
const NIL: u32 = u32::MAX;

/// What a new slot's `after` starts as (never read before it is written).
const NOBODY: OnWire = OnWire { arrival: 0, slot: NIL, hop: 0 };

/// The packets propagating on one link direction, in arrival order: the first and last
/// slots of a list threaded through the [`PacketPool`]. The delay is constant and
/// transmissions are serialized, so packets arrive in the order they entered.
#[derive(Clone, Copy, Debug)]
pub struct Wire {
    head: u32,
    tail: u32,
}

impl Default for Wire {
    fn default() -> Self {
        Wire { head: NIL, tail: NIL }
    }
}

/// A packet on a wire, as its arrival event names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OnWire {
    /// When it reaches the far end.
    pub arrival: Time,
    /// Its slot in the pool.
    pub slot: u32,
    /// Where it goes from the far end: worked out as it enters the wire (routes are fixed
    /// for the run), see `Simulation::next_hop`.
    pub hop: u32,
}

impl PacketPool {
    /// Store `pkt` in a slot (the one freed last, if any) and return the slot.
    #[inline]
    pub fn put(&mut self, pkt: Packet) -> u32 {
        match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize].packet = pkt;
                slot
            }
            None => {
                self.slots.push(Slot { packet: pkt, after: NOBODY });
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// Put the packet in `slot` on `wire`, behind the packets already there; it arrives at
    /// `arrival` and goes on to `hop`. True if it is the wire's only packet: its arrival
    /// needs an event, while the others are scheduled by the arrival ahead of them
    /// ([`PacketPool::arrive`]).
    #[inline]
    pub fn send(&mut self, wire: &mut Wire, slot: u32, arrival: Time, hop: u32) -> bool {
        // The last packet of a wire has nobody behind it: its `after` is written only when
        // another packet follows it, and read only if one did.
        if wire.tail == NIL {
            wire.head = slot;
            wire.tail = slot;
            true
        } else {
            self.slots[wire.tail as usize].after = OnWire { arrival, slot, hop };
            wire.tail = slot;
            false
        }
    }

    /// The packet in `slot`, the head of `wire`, arrives: take it off the wire (it keeps its
    /// slot) and return the packet now at the head, whose arrival the caller schedules.
    #[inline]
    pub fn arrive(&mut self, wire: &mut Wire, slot: u32) -> Option<OnWire> {
        debug_assert_eq!(wire.head, slot, "an arrival takes the head of its wire");
        if wire.tail == slot {
            wire.head = NIL;
            wire.tail = NIL;
            None
        } else {
            let next = self.slots[slot as usize].after;
            wire.head = next.slot;
            Some(next)
        }
    }

    /// Take every packet off `wire` (its link went down) into `out`, in arrival order, and
    /// free their slots, except the head's: its arrival event is still pending, and the slot
    /// must not be reused before that event comes, when the caller frees it with
    /// [`PacketPool::release`]. Returns the head's slot, `None` if the wire was empty.
    pub fn clear(&mut self, wire: &mut Wire, out: &mut Vec<Packet>) -> Option<u32> {
        let head = (wire.head != NIL).then_some(wire.head);
        let mut slot = wire.head;
        while slot != NIL {
            out.push(self.slots[slot as usize].packet);
            let next = if slot == wire.tail { NIL } else { self.slots[slot as usize].after.slot };
            if Some(slot) != head {
                self.free.push(slot);
            }
            slot = next;
        }
        *wire = Wire::default();
        head
    }

    /// Free `slot`, whose packet [`PacketPool::clear`] took off a wire.
    pub fn release(&mut self, slot: u32) {
        self.free.push(slot);
    }

    /// Remove the packet in `slot` (on no wire) from the pool.
    #[inline]
    pub fn take(&mut self, slot: u32) -> Packet {
        self.free.push(slot);
        self.slots[slot as usize].packet
    }

    /// The packet in `slot`.
    #[inline]
    pub fn get(&self, slot: u32) -> &Packet {
        &self.slots[slot as usize].packet
    }

    /// The packet in `slot`, to change.
    #[inline]
    pub fn get_mut(&mut self, slot: u32) -> &mut Packet {
        &mut self.slots[slot as usize].packet
    }

    /// Where the packet in `slot` is stored (for prefetching; any slot number is accepted).
    #[inline]
    pub fn slot_ptr(&self, slot: u32) -> *const Packet {
        self.slots.as_ptr().wrapping_add(slot as usize).cast()
    }

    /// The packets on `wire`, in arrival order.
    pub fn on(&self, wire: &Wire) -> impl Iterator<Item = &Packet> + '_ {
        let (mut slot, tail) = (wire.head, wire.tail);
        std::iter::from_fn(move || {
            (slot != NIL).then(|| {
                let s = slot;
                slot = if s == tail { NIL } else { self.slots[s as usize].after.slot };
                &self.slots[s as usize].packet
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wire_gives_back_its_packets_in_order_and_reuses_the_last_freed_slot_first() {
        let mut pool = PacketPool::default();
        let (mut w, mut v) = (Wire::default(), Wire::default());
        let pkt = |seq| Packet { seq, ..Packet::default() };
        let send = |pool: &mut PacketPool, wire: &mut Wire, seq, arrival, hop| {
            let slot = pool.put(pkt(seq));
            (slot, pool.send(wire, slot, arrival, hop))
        };
        // Only a wire's first packet needs an arrival event.
        assert_eq!(send(&mut pool, &mut w, 1, 10, 7), (0, true));
        assert_eq!(send(&mut pool, &mut v, 2, 15, 8), (1, true));
        assert_eq!(send(&mut pool, &mut w, 3, 20, 9), (2, false));
        assert_eq!(send(&mut pool, &mut w, 4, 30, 5), (3, false));
        assert_eq!(pool.on(&w).map(|p| p.seq).collect::<Vec<_>>(), [1, 3, 4]);
        assert_eq!(pool.arrive(&mut w, 0), Some(OnWire { arrival: 20, slot: 2, hop: 9 }));
        assert_eq!(pool.take(0).seq, 1);
        // The freed slot is the next one filled, and the new packet goes behind the others.
        assert_eq!(send(&mut pool, &mut w, 5, 40, 6), (0, false));
        assert_eq!(pool.on(&w).map(|p| p.seq).collect::<Vec<_>>(), [3, 4, 5]);
        // A packet that arrives keeps its slot until taken, and may go straight onto the
        // next wire (a hop through an idle link).
        assert_eq!(pool.arrive(&mut w, 2), Some(OnWire { arrival: 30, slot: 3, hop: 5 }));
        assert_eq!(pool.get(2).seq, 3);
        assert!(!pool.send(&mut v, 2, 50, 1));
        assert_eq!(pool.on(&v).map(|p| p.seq).collect::<Vec<_>>(), [2, 3]);
        assert_eq!(pool.arrive(&mut w, 3), Some(OnWire { arrival: 40, slot: 0, hop: 6 }));
        assert_eq!(pool.take(3).seq, 4);
        assert_eq!(pool.arrive(&mut w, 0), None);
        assert_eq!(pool.take(0).seq, 5);
        assert!(pool.on(&w).next().is_none());
        // An emptied wire starts again with its next packet; the other wire was untouched.
        assert_eq!(send(&mut pool, &mut w, 6, 60, 4), (0, true));
        assert_eq!(pool.on(&v).map(|p| p.seq).collect::<Vec<_>>(), [2, 3]);
        assert_eq!(pool.arrive(&mut v, 1), Some(OnWire { arrival: 50, slot: 2, hop: 1 }));
        assert_eq!(pool.take(1).seq, 2);
    }

    #[test]
    fn a_cleared_wire_gives_its_packets_and_holds_the_heads_slot_until_released() {
        let mut pool = PacketPool::default();
        let mut w = Wire::default();
        for seq in 0..3 {
            let slot = pool.put(Packet { seq, ..Packet::default() });
            pool.send(&mut w, slot, 10 * seq, 0);
        }
        let mut out = Vec::new();
        assert_eq!(pool.clear(&mut w, &mut out), Some(0));
        assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), [0, 1, 2]);
        assert!(pool.on(&w).next().is_none());
        // Slots 1 and 2 are free again; slot 0 (the head, whose event is pending) is not.
        let taken: Vec<u32> = (0..2).map(|_| pool.put(Packet::default())).collect();
        assert!(taken.contains(&1) && taken.contains(&2));
        assert_eq!(pool.put(Packet::default()), 3);
        pool.release(0);
        assert_eq!(pool.put(Packet::default()), 0);
        out.clear();
        assert_eq!(pool.clear(&mut Wire::default(), &mut out), None);
        assert!(out.is_empty());
    }

    #[test]
    fn packets_stay_small() {
        // Packets are copied through queues and wires; keep them within 96 bytes.
        assert!(std::mem::size_of::<Packet>() <= 96, "{}", std::mem::size_of::<Packet>());
    }
}
