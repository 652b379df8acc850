//! DropTail: a FIFO with a hard limit in packets or bytes; an arrival that does not fit is
//! dropped (no RFC; as ns-3 `FifoQueueDisc` and Linux `pfifo`/`bfifo`).

use crate::registry::Randomness;

use super::fifo::Fifo;
use super::{QdiscCtx, QueueDisc, QueueModel};
use crate::packet::Packet;
use crate::params::{ParamKind, ParamSpec, ParamValue, Params, Size};

static PARAMS: &[ParamSpec] = &[ParamSpec::new(
    "limit",
    ParamKind::Size,
    Some(ParamValue::Size(Size::Packets(1000))),
    "buffer size in packets (\"100p\") or bytes (\"150000B\"); ns-3 and Linux default 1000p",
)];

/// Registration.
pub const MODEL: QueueModel = QueueModel {
    name: "droptail",
    doc: "FIFO with tail drop at a packet or byte limit (ns-3 FifoQueueDisc, Linux pfifo/bfifo)",
    params: PARAMS,
    random: Randomness::Never,
    build: |p: &Params| Box::new(DropTail::new(p.size("limit"))),
};

/// A FIFO that drops arrivals beyond its limit.
pub struct DropTail {
    fifo: Fifo,
}

impl DropTail {
    /// A DropTail queue with the given limit.
    pub fn new(limit: Size) -> Self {
        DropTail { fifo: Fifo::new(limit) }
    }

    /// A DropTail queue holding at most `n` packets.
    pub fn packets(n: u64) -> Self {
        Self::new(Size::Packets(n))
    }

    /// A bound (bytes) below which every packet fits in this queue when it is empty; 0 if
    /// none does (a zero limit). Conservative at the top of `u32`: the bound only decides
    /// which packets may take the pass-through, which counts as the normal path would.
    pub fn empty_admits_below(&self) -> u32 {
        match self.fifo.limit() {
            Size::Packets(0) => 0,
            Size::Packets(_) => u32::MAX,
            Size::Bytes(n) => n.saturating_add(1).min(u32::MAX as u64) as u32,
        }
    }
}

impl QueueDisc for DropTail {
    // Always inlined into `Queue::enqueue`: the benchmark's bottleneck, and whether LLVM
    // inlines it otherwise changes with unrelated code elsewhere in the crate (a call here
    // costs about 1 % of the loop's instructions).
    #[inline(always)]
    fn enqueue(&mut self, pkt: Packet, ctx: &mut QdiscCtx) {
        self.fifo.push_or_drop(pkt, ctx);
    }

    #[inline]
    fn dequeue(&mut self, _ctx: &mut QdiscCtx) -> Option<Packet> {
        self.fifo.pop()
    }

    fn len_packets(&self) -> usize {
        self.fifo.len()
    }

    fn len_bytes(&self) -> u64 {
        self.fifo.bytes()
    }

    fn take_droptail(&mut self) -> Option<DropTail> {
        let empty = DropTail::new(self.fifo.limit());
        Some(std::mem::replace(self, empty))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testkit::{pkt, queue};

    #[test]
    fn overflow_drops_exactly_the_arrivals_beyond_the_packet_limit() {
        let mut q = queue("droptail", Box::new(DropTail::packets(5)));
        let mut events = Vec::new();
        for seq in 0..8 {
            q.enqueue(seq, pkt(0, seq, 1000), &mut events);
        }
        assert_eq!(events.len(), 3);
        assert!(events.iter().all(|e| e.kind == crate::qdisc::QueueEventKind::Overflow));
        assert_eq!(q.len_packets(), 5);
        // FIFO order out.
        let out: Vec<u64> = std::iter::from_fn(|| q.dequeue(10, &mut events)).map(|p| p.seq).collect();
        assert_eq!(out, vec![0, 1, 2, 3, 4]);
        assert_eq!((q.stats.arrivals, q.stats.drops, q.stats.departures), (8, 3, 5));
    }

    #[test]
    fn byte_limit_admits_what_fits() {
        let mut q = queue("droptail", Box::new(DropTail::new(Size::Bytes(2500))));
        let mut events = Vec::new();
        q.enqueue(0, pkt(0, 0, 1000), &mut events);
        q.enqueue(0, pkt(0, 1, 1000), &mut events);
        q.enqueue(0, pkt(0, 2, 1000), &mut events); // 3000 > 2500: dropped
        q.enqueue(0, pkt(0, 3, 500), &mut events); // 2500 fits exactly
        assert_eq!(events.len(), 1);
        assert_eq!(q.len_bytes(), 2500);
        assert_eq!(q.len_packets(), 3);
    }
}
