//! One direction of a link: an output queue, a transmitter of fixed rate and a wire of fixed
//! propagation delay that may corrupt packets at random (rate, delay, loss and state may
//! change at scheduled times: `engine/dynamic.rs`).
//!
//! The wire is a FIFO of packets (a list through the engine's packet pool, `packet::Wire`): the
//! delay is constant (or, when it changes, a packet arrives no earlier than the one ahead of
//! it) and transmissions are serialized, so arrivals are in order and only the head needs an
//! event. The transmitter
//! needs an event only when a packet waits for it; a packet that finds the link idle starts
//! at once.
//!
//! Ties: both events may therefore be pushed, and take their place among simultaneous
//! events, later than ns-2 and ns-3 schedule them (when the transmission starts): a packet's
//! arrival, if another is ahead of it on the wire, when that one arrives; the transmitter's
//! completion when a packet first waits for it. This order is ccsim's own;
//! `docs/reproductions.md` ("Lock-outs and exact ties") measures the simulators' instead.

use crate::packet::{Packet, Wire};
use crate::qdisc::Queue;
use crate::sim::rng::Rng;
use crate::sim::time::{tx_time, Time};

/// One direction of a link.
///
/// `repr(C)` keeps the declared order and the alignment puts it on a cache-line boundary:
/// what every transmission and arrival touches comes first, then the queue, whose
/// pass-through part comes first too, so that a hop through an idle link touches two cache
/// lines (`layout_keeps_the_hop_in_two_cache_lines`); with thousands of access links these
/// are rarely cached. The name, the rate (read only when the packet size changes) and the
/// whole-run counters come last.
#[repr(C, align(64))]
pub struct LinkDir {
    /// The transmitter is busy until this time.
    pub busy_until: Time,
    /// Propagation delay.
    pub delay: Time,
    /// The latest packet size serialized and its transmission time: most links carry one
    /// size nearly always (full segments one way, ACKs the other), and a 64-bit division per
    /// packet costs tens of cycles.
    pub last_tx: (u32, Time),
    /// Probability that a packet is lost on the wire.
    pub loss: f64,
    /// Packets propagating, in arrival order (their slots in the engine's packet pool).
    pub wire: Wire,
    /// Receiving node.
    pub to: u32,
    /// A `TxDone` event is scheduled.
    pub tx_pending: bool,
    /// Bytes of the packets whose transmission started in the measured window.
    pub tx_bytes: u64,
    /// Time the transmitter was busy from the start of the measured window on (ns), counting
    /// a transmission in progress at the warm-up boundary from the boundary and one in
    /// progress at the end in full (`results` takes off the part after the end): utilization
    /// is exactly busy time over the window, never above 1.
    pub busy_ns: u64,
    /// The output queue.
    pub queue: Queue,
    /// Transmission rate (bit/s).
    pub rate_bps: u64,
    /// Transmitting node.
    pub from: u32,
    /// Random stream for wire errors.
    pub rng: Rng,
    /// Packets lost on the wire in the measured window.
    pub losses: u64,
    /// Whole run: packets lost on the wire.
    pub total_losses: u64,
    /// `from->to`.
    pub name: String,
    /// Whether the link direction is up. Only a scheduled change (`LinkSpec::schedule`,
    /// `engine/dynamic.rs`) takes it down: then its wire is emptied (the packets on it are
    /// lost), `tx_pending` stays set so that nothing is transmitted and the queue holds its
    /// packets, until it comes back up.
    pub up: bool,
    /// While down: a `TxDone` event is still to come (the transmitter was busy or awaited
    /// when the link went down), which then clears `tx_pending` itself.
    pub tx_event_while_down: bool,
    /// In a run with scheduled changes only (else 0): the arrival time of the latest packet
    /// put on the wire. A packet entering the wire arrives no earlier (a delay that shrinks
    /// must not let a packet overtake the one ahead of it on the same wire).
    pub last_arrival: Time,
}

impl LinkDir {
    /// Whether a packet arriving at `now` goes onto the wire at once, its queue only counting
    /// it: the transmitter is idle with nothing scheduled, so the queue is empty (the
    /// precondition of [`Queue::pass_through`]), and the queue passes the packet (DropTail
    /// with room for it), which stamps it. Same events, in the same order, as the way through
    /// the queue.
    #[inline]
    pub fn passes(&mut self, now: Time, pkt: &mut Packet) -> bool {
        !self.tx_pending && now >= self.busy_until && self.queue.pass_through(now, pkt)
    }

    /// Time to serialize `size` bytes at this link's rate.
    #[inline]
    pub fn tx_time(&mut self, size: u32) -> Time {
        if self.last_tx.0 != size {
            self.last_tx = (size, tx_time(size, self.rate_bps));
        }
        self.last_tx.1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, offset_of};

    #[test]
    fn layout_keeps_the_hop_in_two_cache_lines() {
        // A hop through an idle link reads and writes the link's first fields and the
        // queue's pass-through part; with the link on a line boundary that is two lines.
        assert_eq!(align_of::<LinkDir>(), 64);
        let queue = offset_of!(LinkDir, queue);
        assert!(offset_of!(LinkDir, tx_pending) < queue && offset_of!(LinkDir, busy_ns) < queue);
        assert!(
            queue + Queue::PASS_THROUGH_BYTES <= 2 * 64,
            "queue at {queue}, its hot part {} bytes",
            Queue::PASS_THROUGH_BYTES
        );
    }
}
