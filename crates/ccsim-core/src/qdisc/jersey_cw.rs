//! TCP-Jersey's congestion warning (CW), router side.
//!
//! Source: Xu, Tian, Ansari, "TCP-Jersey for Wireless IP Communications", IEEE JSAC 22(4),
//! 2004, pp. 747-756. **Only the abstract was available**: routers "mark all
//! packets when there is a sign of incipient congestion". The reading implemented here:
//! - "incipient congestion" is RED's average queue (same EWMA and idle decay, shared
//!   [`QueueAverage`] from `red.rs`) above a threshold `min_th` (RED's lower threshold; RED's
//!   defaults, `w_q = 0.002`, `min_th = 5p`);
//! - while it is above, **every** ECT arrival is CE-marked (deterministic, no probability);
//!   non-ECT packets are admitted unmarked (the CW needs an ECN-capable sender);
//! - no early drops: only tail drops at the hard `limit`;
//! - the average is updated and tested on arrival, like RED (the abstract says "forwarded"
//!   packets; marking at enqueue differs from marking at dequeue only by one queueing delay).

use super::fifo::Fifo;
use super::red::{QueueAverage, Unit, P_LIMIT, P_MEAN_PKT_SIZE, P_MEAN_PKT_TIME, P_WQ};
use super::{QdiscCtx, QueueDisc, QueueModel};
use crate::packet::Packet;
use crate::params::{ParamKind, ParamSpec, ParamValue, Params, Size};
use crate::registry::Randomness;

static PARAMS: &[ParamSpec] = &[
    P_LIMIT,
    ParamSpec::new(
        "min_th",
        ParamKind::Size,
        Some(ParamValue::Size(Size::Packets(5))),
        "CW threshold on the average queue, packets or bytes (RED's min_th default, 5p)",
    ),
    P_WQ,
    P_MEAN_PKT_SIZE,
    P_MEAN_PKT_TIME,
];

/// Registration.
pub const MODEL: QueueModel = QueueModel {
    name: "jersey_cw",
    doc: "TCP-Jersey congestion warning (Xu, Tian, Ansari 2004): CE on every ECT packet while RED's average exceeds min_th",
    params: PARAMS,
    random: Randomness::Never,
    build: |p: &Params| Box::new(JerseyCw::new(QueueAverage::from_params(p), p.size("min_th"), p.size("limit"))),
};

/// A DropTail queue marking every ECT packet while its average length is above `min_th`.
pub struct JerseyCw {
    /// RED's average queue length.
    pub avg: QueueAverage,
    unit: Unit,
    min_th: f64,
    fifo: Fifo,
}

impl JerseyCw {
    /// Mark above `min_th` (whose unit is the queue's unit); hold at most `limit`.
    pub fn new(avg: QueueAverage, min_th: Size, limit: Size) -> Self {
        let unit = Unit::of(min_th);
        JerseyCw { avg, unit, min_th: unit.convert(min_th, 1), fifo: Fifo::new(limit) }
    }
}

impl QueueDisc for JerseyCw {
    fn enqueue(&mut self, pkt: Packet, ctx: &mut QdiscCtx) {
        let avg = self.avg.on_arrival(ctx.now, self.unit.measure(&self.fifo));
        let Some(mut pkt) = self.fifo.admissible(pkt, ctx) else { return };
        if avg > self.min_th {
            ctx.mark(&mut pkt);
        }
        self.fifo.push(pkt);
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<Packet> {
        self.avg.dequeue(&mut self.fifo, ctx.now)
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
    use crate::qdisc::testkit::{ecn_pkt, params, pkt, Harness};
    use crate::qdisc::QueueEventKind;

    /// Idle decay with s = 1 us.
    fn jersey(wq: f64, min_th: u64, limit: u64) -> Harness<JerseyCw> {
        let p = params(
            PARAMS,
            &[
                ("wq", ParamValue::Float(wq)),
                ("min_th", ParamValue::Size(Size::Packets(min_th))),
                ("limit", ParamValue::Size(Size::Packets(limit))),
                ("mean_pkt_time", ParamValue::Int(1000)),
            ],
        );
        Harness::new(JerseyCw::new(QueueAverage::from_params(&p), p.size("min_th"), p.size("limit")))
    }

    fn ect(seq: u64) -> Packet {
        ecn_pkt(0, seq, 1000, Ecn::Ect0)
    }

    #[test]
    fn marks_every_ect_packet_while_the_average_is_above_the_threshold() {
        // w = 0.5, min_th = 3. Arrival i finds i packets; the first finds an empty queue
        // (no change). avg: 0.5, 1.25, 2.125, 3.0625, 4.03125, ... so arrivals 4.. are marked.
        let mut h = jersey(0.5, 3, 100);
        for i in 0..10 {
            h.enqueue(i, ect(i));
        }
        // Continue a_k = (a_{k-1} + k)/2 from a_4 = 3.0625 through the arrivals finding 5..9.
        let mut a = 3.0625;
        for k in 5..10 {
            a = 0.5 * a + 0.5 * k as f64;
        }
        assert_eq!(h.disc.avg.avg, a);
        // A non-ECT packet now is admitted unmarked.
        assert_eq!(h.enqueue(10, pkt(0, 10, 1000)), (0, 0));
        let out: Vec<Packet> = std::iter::from_fn(|| h.dequeue(20)).collect();
        let marked: Vec<u64> = out.iter().filter(|p| p.ecn == Ecn::Ce).map(|p| p.seq).collect();
        assert_eq!(marked, (4..10).collect::<Vec<u64>>());
        assert_eq!(h.drops, 0);
    }

    #[test]
    fn marks_none_below_the_threshold_and_all_above() {
        let mut h = jersey(0.5, 3, 100);
        // Held at 2 packets the average stays at or below 2: no marks.
        let (dropped, marks) = h.hold(2, 1000, 1000, Ecn::Ect0);
        assert_eq!((dropped.iter().filter(|&&d| d).count(), marks), (0, 0));
        // Held at 6 (reached through 2..5, so avg > 3 before the held arrivals): all marked.
        let (dropped, marks) = h.hold(6, 1000, 1000, Ecn::Ect0);
        assert_eq!((dropped.iter().filter(|&&d| d).count(), marks), (0, 1000));
        // Idle for 10 packet times: avg decays by 0.5^10 from below 6, to below 3.
        let t = h.last + 1;
        while h.dequeue(t).is_some() {}
        let before = h.disc.avg.avg;
        assert_eq!(h.enqueue(t + 10_000, ect(0)), (0, 0));
        assert!((h.disc.avg.avg - before * 0.5f64.powi(10)).abs() < 1e-12);
    }

    #[test]
    fn drops_only_at_the_limit() {
        let mut h = jersey(1.0, 1, 20);
        for i in 0..30 {
            h.enqueue(i, ect(i));
        }
        assert_eq!((h.drops, h.marks), (10, 18));
        assert!(h.events().filter(|e| e.kind.is_drop()).all(|e| e.kind == QueueEventKind::Overflow));
    }
}
