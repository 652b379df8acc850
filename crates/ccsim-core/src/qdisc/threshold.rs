//! Threshold marking, the DCTCP switch (also E-DCTCP's switch).
//!
//! Source: RFC 8257 §3.1 ("the switch marks a packet if the queue occupancy exceeds K upon
//! its arrival"; no averaging) and Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010
//! (guideline `K > C·RTT/7`; 20 packets at 1 Gb/s and 65 at 10 Gb/s in the paper's
//! experiments). Equivalent to RED with `min_th = max_th = K`, `w_q = 1` and no hard drop,
//! which is how ns-3 configures DCTCP switches.
//!
//! Rules: an arrival that does not fit under `limit` is tail-dropped. Otherwise, if the
//! queue it finds (the arrival excluded, in the unit of `k`) is greater than `K`, it is
//! CE-marked when ECT. Non-ECT packets are never dropped early: they are admitted unmarked.

use super::fifo::Fifo;
use super::red::{Unit, P_LIMIT};
use super::{QdiscCtx, QueueDisc, QueueModel};
use crate::packet::Packet;
use crate::params::{ParamKind, ParamSpec, ParamValue, Params, Size};
use crate::registry::Randomness;

static PARAMS: &[ParamSpec] = &[
    P_LIMIT,
    ParamSpec::new(
        "k",
        ParamKind::Size,
        Some(ParamValue::Size(Size::Packets(65))),
        "marking threshold K on the instantaneous queue, packets or bytes (Alizadeh et al. 2010: 65p at 10 Gb/s, 20p at 1 Gb/s)",
    ),
];

/// Registration.
pub const MODEL: QueueModel = QueueModel {
    name: "threshold",
    doc: "DCTCP switch: DropTail plus CE-marking of ECT arrivals that find more than K queued (RFC 8257 §3.1)",
    params: PARAMS,
    random: Randomness::Never,
    build: |p: &Params| Box::new(Threshold::new(p.size("k"), p.size("limit"))),
};

/// A DropTail queue that marks above an instantaneous threshold.
pub struct Threshold {
    unit: Unit,
    k: f64,
    fifo: Fifo,
}

impl Threshold {
    /// Mark above `k` (its unit is the unit the queue is measured in); hold at most `limit`.
    pub fn new(k: Size, limit: Size) -> Self {
        let unit = Unit::of(k);
        Threshold { unit, k: unit.convert(k, 1), fifo: Fifo::new(limit) }
    }
}

impl QueueDisc for Threshold {
    fn enqueue(&mut self, pkt: Packet, ctx: &mut QdiscCtx) {
        let Some(mut pkt) = self.fifo.admissible(pkt, ctx) else { return };
        if self.unit.measure(&self.fifo) > self.k {
            // Not-ECT: `mark` changes nothing and the packet is admitted anyway.
            ctx.mark(&mut pkt);
        }
        self.fifo.push(pkt);
    }

    fn dequeue(&mut self, _ctx: &mut QdiscCtx) -> Option<Packet> {
        self.fifo.pop()
    }

    fn len_packets(&self) -> usize {
        self.fifo.len()
    }

    fn len_bytes(&self) -> u64 {
        self.fifo.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::qdisc::testkit::{ecn_pkt, pkt, Harness};
    use crate::qdisc::QueueEventKind;

    fn ect(seq: u64, size: u32) -> Packet {
        ecn_pkt(0, seq, size, Ecn::Ect0)
    }

    #[test]
    fn marks_exactly_the_ect_arrivals_that_find_more_than_k_packets() {
        let mut h = Harness::new(Threshold::new(Size::Packets(5), Size::Packets(100)));
        // Arrival i finds i packets: marked iff i > 5.
        for i in 0..10 {
            h.enqueue(i, ect(i, 1000));
        }
        // Drain to 3 and send 4 more: they find 3, 4, 5, 6 packets.
        let mut out: Vec<Packet> = (0..7).map(|_| h.dequeue(20).unwrap()).collect();
        for i in 10..14 {
            h.enqueue(30, ect(i, 1000));
        }
        out.extend(std::iter::from_fn(|| h.dequeue(40)));
        let marked: Vec<u64> = out.iter().filter(|p| p.ecn == Ecn::Ce).map(|p| p.seq).collect();
        assert_eq!(marked, vec![6, 7, 8, 9, 13]);
        assert_eq!((h.marks, h.drops), (5, 0));
    }

    #[test]
    fn byte_threshold_compares_bytes() {
        // K = 3000 B with 1000 B packets: arrival i finds 1000·i bytes, marked iff i ≥ 4.
        let mut h = Harness::new(Threshold::new(Size::Bytes(3000), Size::Packets(100)));
        for i in 0..8 {
            h.enqueue(i, ect(i, 1000));
        }
        let out: Vec<Packet> = std::iter::from_fn(|| h.dequeue(20)).collect();
        let marked: Vec<u64> = out.iter().filter(|p| p.ecn == Ecn::Ce).map(|p| p.seq).collect();
        assert_eq!(marked, vec![4, 5, 6, 7]);
    }

    #[test]
    fn never_drops_below_the_limit_and_not_ect_is_admitted_unmarked() {
        let mut h = Harness::new(Threshold::new(Size::Packets(2), Size::Packets(50)));
        for i in 0..60 {
            h.enqueue(i, pkt(0, i, 1000));
        }
        // Exactly the 10 arrivals beyond the limit are dropped, as overflow.
        assert_eq!((h.drops, h.marks), (10, 0));
        assert!(h.events().all(|e| e.kind == QueueEventKind::Overflow));
        assert!(std::iter::from_fn(|| h.dequeue(100)).all(|p| p.ecn == Ecn::NotEct));
    }
}
