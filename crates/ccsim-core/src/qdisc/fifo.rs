//! The packet store of every discipline that keeps a single FIFO (DropTail, RED and the
//! disciplines built on its machinery, CoDel, ECN-CoDel, PIE) and of each FQ-CoDel flow
//! queue: the packets in arrival order, their byte count and the hard `limit`.
//!
//! The limit is checked against the queue the arrival finds, the arrival excluded from the
//! count and included in the bytes: in packets an arrival fits while fewer than `limit`
//! packets are held, in bytes while the bytes held plus its own size stay within `limit`
//! (ns-3 `FifoQueueDisc`, Linux `pfifo`/`bfifo`). A discipline that enforces its limit
//! otherwise (FQ-CoDel drops from its fattest flow after the arrival) holds unbounded stores
//! and keeps its own check.
//!
//! Storage is a `VecDeque`, indexable so that CHOKe can draw and remove a packet anywhere
//! (O(n) for a removal from the middle).

use std::collections::VecDeque;

use super::{DropReason, QdiscCtx};
use crate::packet::Packet;
use crate::params::Size;

/// A FIFO of packets with its byte count and a hard limit in packets or bytes.
#[derive(Debug)]
pub struct Fifo {
    limit: Size,
    pkts: VecDeque<Packet>,
    bytes: u64,
}

impl Fifo {
    /// An empty FIFO holding at most `limit`. It starts without storage: most queues of a
    /// large topology (access links) never fill, and the deque grows to the working size
    /// once, not per packet.
    pub fn new(limit: Size) -> Self {
        Fifo { limit, pkts: VecDeque::new(), bytes: 0 }
    }

    /// An empty FIFO whose owner enforces the limit (every arrival fits).
    pub fn unbounded() -> Self {
        Self::new(Size::Packets(u64::MAX))
    }

    /// The limit.
    pub fn limit(&self) -> Size {
        self.limit
    }

    /// Would `pkt` fit under the limit?
    #[inline]
    pub fn fits(&self, pkt: &Packet) -> bool {
        match self.limit {
            Size::Packets(n) => (self.pkts.len() as u64) < n,
            Size::Bytes(n) => self.bytes + pkt.size as u64 <= n,
        }
    }

    /// `pkt` if it fits under the limit; otherwise it is dropped as an overflow.
    #[inline]
    pub fn admissible(&self, pkt: Packet, ctx: &mut QdiscCtx) -> Option<Packet> {
        if self.fits(&pkt) {
            return Some(pkt);
        }
        ctx.drop(pkt, DropReason::Overflow);
        None
    }

    /// Tail drop: append `pkt` if it fits, otherwise drop it as an overflow. Always inlined:
    /// it is DropTail's whole enqueue, on the packet path of most queues.
    #[inline(always)]
    pub fn push_or_drop(&mut self, pkt: Packet, ctx: &mut QdiscCtx) {
        if self.fits(&pkt) {
            self.push(pkt);
        } else {
            ctx.drop(pkt, DropReason::Overflow);
        }
    }

    /// Append at the tail (the caller has checked `fits`, or the store is unbounded).
    #[inline]
    pub fn push(&mut self, pkt: Packet) {
        self.bytes += pkt.size as u64;
        self.pkts.push_back(pkt);
    }

    /// Take the head.
    #[inline]
    pub fn pop(&mut self) -> Option<Packet> {
        let pkt = self.pkts.pop_front()?;
        debug_assert!(self.bytes >= pkt.size as u64);
        self.bytes -= pkt.size as u64;
        Some(pkt)
    }

    /// Take the packet at position `i` from the head (O(n)).
    pub fn remove(&mut self, i: usize) -> Option<Packet> {
        let pkt = self.pkts.remove(i)?;
        self.bytes -= pkt.size as u64;
        Some(pkt)
    }

    /// The packet at position `i` from the head.
    pub fn get(&self, i: usize) -> Option<&Packet> {
        self.pkts.get(i)
    }

    /// The packets, head first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Packet> + ExactSizeIterator {
        self.pkts.iter()
    }

    /// Packets held.
    #[inline]
    pub fn len(&self) -> usize {
        self.pkts.len()
    }

    /// True when empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pkts.is_empty()
    }

    /// Bytes held.
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testkit::{pkt, Harness};
    use crate::qdisc::{QueueDisc, QueueEventKind};

    /// The store alone as a discipline, so that the kit can drive it.
    struct Plain(Fifo);

    impl QueueDisc for Plain {
        fn enqueue(&mut self, pkt: Packet, ctx: &mut QdiscCtx) {
            self.0.push_or_drop(pkt, ctx);
        }
        fn dequeue(&mut self, _ctx: &mut QdiscCtx) -> Option<Packet> {
            self.0.pop()
        }
        fn len_packets(&self) -> usize {
            self.0.len()
        }
        fn len_bytes(&self) -> u64 {
            self.0.bytes()
        }
    }

    #[test]
    fn a_packet_limit_admits_while_fewer_packets_are_held() {
        let mut h = Harness::new(Plain(Fifo::new(Size::Packets(3))));
        for seq in 0..5 {
            h.enqueue(0, pkt(0, seq, 100 + seq as u32));
        }
        assert_eq!(
            h.enqueue_events().iter().map(|e| (e.seq, e.kind)).collect::<Vec<_>>(),
            [(3, QueueEventKind::Overflow), (4, QueueEventKind::Overflow)]
        );
        assert_eq!((h.disc.0.len(), h.disc.0.bytes()), (3, 100 + 101 + 102));
        let out: Vec<u64> = std::iter::from_fn(|| h.dequeue(1)).map(|p| p.seq).collect();
        assert_eq!(out, [0, 1, 2]);
        assert_eq!(h.disc.0.bytes(), 0);
    }

    #[test]
    fn a_byte_limit_counts_the_arrival_and_admits_an_exact_fit() {
        let mut f = Fifo::new(Size::Bytes(2500));
        f.push(pkt(0, 0, 1000));
        f.push(pkt(0, 1, 1000));
        assert!(!f.fits(&pkt(0, 2, 501)));
        assert!(f.fits(&pkt(0, 2, 500)));
        // Removal from the middle keeps the byte count.
        f.push(pkt(0, 2, 500));
        assert_eq!(f.remove(1).map(|p| p.seq), Some(1));
        assert_eq!((f.len(), f.bytes()), (2, 1500));
        assert_eq!(f.iter().map(|p| p.seq).collect::<Vec<_>>(), [0, 2]);
        assert!(Fifo::unbounded().fits(&pkt(0, 0, u32::MAX)));
    }
}
