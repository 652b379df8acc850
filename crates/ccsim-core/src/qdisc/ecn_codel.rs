//! ECN-enhanced CoDel, from the paper of that name on conservative ECN marking for CoDel
//! (§3, Fig. 1(b); reproduced by `ccsim reproduce ecn-codel`, docs/reproductions.md).
//!
//! CoDel (RFC 8289, [`super::codel`]) waits a whole interval of sojourn times above target
//! before its first drop. This variant signals earlier without losing packets: while CoDel
//! is **not** in its dropping state, a departing packet whose sojourn time exceeds
//! `C * target` is CE-marked with probability `P` (paper defaults C = 1.5, P = 0.3, "found
//! that C = 1.5 and P = 0.3 can significantly reduce the number of re-transmissions"). Once
//! in the dropping state the queue is plain CoDel (the paper: "at high and permanent
//! congestion situations applies the original drop-based strategy of CoDel"), and a full
//! queue still tail-drops.
//!
//! Reading of the paper where it is silent:
//! - The check is made at dequeue, on the packet CoDel delivers, after CoDel's own decision
//!   for that dequeue: sojourn time is only known at dequeue, where CoDel measures it, and
//!   "not dropping" refers to CoDel's state once it has decided (a dequeue that enters the
//!   dropping state delivers a packet that is not subject to early marking).
//! - Only ECT packets can be marked (RFC 3168); Not-ECT packets are left alone (never
//!   dropped instead), so they see plain CoDel. The random draw is made only for ECT packets
//!   above the threshold, so with P = 0 the queue is CoDel packet for packet.
//! - "Exceeds" is strict: `sojourn > C * target`. With C < 1 (not the paper's setting) this
//!   also marks packets whose sojourn is below target.
//! - The early marks do not touch CoDel's state (`count`, `drop_next`...).
//! - `ecn` (CoDel's own marking in the dropping state) stays a parameter, default off as in
//!   CoDel, matching the paper's "original drop-based strategy".

use super::codel::{Codel, CodelParams, ECN_SPEC, INTERVAL_SPEC, LIMIT_SPEC, MTU_SPEC, TARGET_SPEC};
use super::{QdiscCtx, QueueDisc, QueueModel};
use crate::packet::Packet;
use crate::params::{ParamKind, ParamSpec, ParamValue, Params, Size};
use crate::registry::Randomness;
use crate::sim::time::Time;

static PARAMS: &[ParamSpec] = &[
    TARGET_SPEC,
    INTERVAL_SPEC,
    MTU_SPEC,
    ECN_SPEC,
    LIMIT_SPEC,
    ParamSpec::new(
        "c",
        ParamKind::Float,
        Some(ParamValue::Float(1.5)),
        "mark threshold as a multiple of target (paper §3: C = 1.5)",
    )
    .range(0.0, 1000.0),
    ParamSpec::new(
        "p",
        ParamKind::Prob,
        Some(ParamValue::Float(0.3)),
        "probability of marking an ECT packet above C*target before the dropping state (paper §3: P = 0.3)",
    ),
];

/// Registration.
pub const MODEL: QueueModel = QueueModel {
    name: "ecn_codel",
    doc: "ECN-enhanced CoDel: CoDel that marks ECT packets above C*target with probability P before it drops",
    params: PARAMS,
    random: Randomness::Always { what: "random ECN marks" },
    build: |p: &Params| {
        Box::new(EcnCodel::new(CodelParams::from_params(p), p.size("limit"), p.float("c"), p.float("p")))
    },
};

/// CoDel plus probabilistic early marking.
pub struct EcnCodel {
    /// The CoDel queue it extends.
    pub codel: Codel,
    /// Sojourn time above which packets may be marked: `C * target` (ns).
    mark_above: Time,
    /// Marking probability P.
    p: f64,
}

impl EcnCodel {
    /// An ECN-enhanced CoDel queue with threshold factor `c` and marking probability `p`.
    pub fn new(params: CodelParams, limit: Size, c: f64, p: f64) -> Self {
        let mark_above = (c.max(0.0) * params.target as f64).round().min(Time::MAX as f64) as Time;
        EcnCodel { codel: Codel::new(params, limit), mark_above, p: p.clamp(0.0, 1.0) }
    }
}

impl QueueDisc for EcnCodel {
    fn enqueue(&mut self, pkt: Packet, ctx: &mut QdiscCtx) {
        self.codel.enqueue(pkt, ctx);
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<Packet> {
        let mut pkt = self.codel.dequeue(ctx)?;
        let sojourn = ctx.now.saturating_sub(pkt.enqueued_at);
        if !self.codel.vars.dropping && pkt.ecn.is_ect() && sojourn > self.mark_above && ctx.rng.chance(self.p) {
            ctx.mark(&mut pkt);
        }
        Some(pkt)
    }

    fn len_packets(&self) -> usize {
        self.codel.len_packets()
    }

    fn len_bytes(&self) -> u64 {
        self.codel.len_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::qdisc::testkit::{ecn_pkt, pkt, within_binomial, Harness};
    use crate::qdisc::QueueEventKind;
    use crate::sim::time::{MS, US};

    /// 1500 B packets every `a` us (odd sequence numbers ECT(0) on flow 1, even ones
    /// Not-ECT on flow 0 when `mixed`, else all ECT), dequeues every `d` us, until `end`.
    fn ramp<D: QueueDisc>(h: &mut Harness<D>, a: Time, d: Time, end: Time, mixed: bool) {
        let mut seq = 0u64;
        h.drive(
            10 * US,
            end,
            |t| {
                (t % (a * US) == 0).then(|| {
                    seq += 1;
                    let ect = !mixed || seq % 2 == 1;
                    ecn_pkt(ect as u32, seq, 1500, if ect { Ecn::Ect0 } else { Ecn::NotEct })
                })
            },
            |t| t % (d * US) == 0,
        );
    }

    fn ecn_codel(c: f64, p: f64, params: CodelParams) -> Harness<EcnCodel> {
        Harness::new(EcnCodel::new(params, Size::Packets(100_000), c, p))
    }

    #[test]
    fn with_p_zero_it_is_codel_packet_for_packet() {
        // A ramp that takes CoDel through its dropping state and out again (arrivals slow
        // down after 600 ms), ECT and Not-ECT mixed, with and without CoDel's own ECN.
        for ecn in [false, true] {
            let params = CodelParams { ecn, ..CodelParams::default() };
            let mut a = Harness::new(Codel::new(params, Size::Packets(100_000)));
            let mut b = ecn_codel(1.5, 0.0, params);
            ramp(&mut a, 90, 100, 600 * MS, true);
            ramp(&mut b, 90, 100, 600 * MS, true);
            for t in (600 * MS..1500 * MS).step_by(200 * US as usize) {
                let p = pkt(1, t, 1500);
                a.enqueue(t, p);
                b.enqueue(t, p);
                a.dequeue(t + 50 * US);
                b.dequeue(t + 50 * US);
                a.dequeue(t + 100 * US);
                b.dequeue(t + 100 * US);
            }
            assert!(a.early_drop_times().len() > 5 || a.dequeue_events(QueueEventKind::Mark).len() > 5);
            assert_eq!(a.steps, b.steps, "ecn = {ecn}");
            assert_eq!(a.counts(), b.counts());
        }
        // Contrast: with P = 0.3 the same sequence comes out differently.
        let mut a = Harness::new(Codel::new(CodelParams::default(), Size::Packets(100_000)));
        let mut b = ecn_codel(1.5, 0.3, CodelParams::default());
        ramp(&mut a, 90, 100, 600 * MS, true);
        ramp(&mut b, 90, 100, 600 * MS, true);
        assert_ne!(a.steps, b.steps);
    }

    #[test]
    fn with_p_one_every_ect_packet_above_c_target_is_marked_before_dropping() {
        // Ramp: the m-th dequeue has sojourn 10m us, above 7.5 ms from m = 751 (7.51 ms) on;
        // CoDel enters the dropping state at 150 ms (see codel.rs), so dequeues 751..1499
        // deliver packets that must all be marked and no earlier one may be.
        let mut h = ecn_codel(1.5, 1.0, CodelParams::default());
        ramp(&mut h, 90, 100, 149_900 * US, false);
        assert!(!h.disc.codel.vars.dropping);
        assert_eq!(h.drops, 0);
        let mut marked = 0;
        for s in &h.steps {
            let p = s.out.unwrap();
            let sojourn = s.now - p.enqueued_at;
            assert_eq!(p.ecn == Ecn::Ce, sojourn > 7_500 * US, "at {} sojourn {sojourn}", s.now);
            marked += (p.ecn == Ecn::Ce) as usize;
        }
        assert_eq!(marked, 1499 - 751 + 1);
        assert_eq!(h.dequeue_events(QueueEventKind::Mark).len(), marked);
    }

    #[test]
    fn in_the_dropping_state_it_behaves_as_codel() {
        // From the moment CoDel enters the dropping state, P = 1 marks nothing more.
        let mut h = ecn_codel(1.5, 1.0, CodelParams::default());
        ramp(&mut h, 90, 100, 400 * MS, false);
        assert!(h.disc.codel.vars.dropping);
        let first_drop = h.early_drop_times()[0];
        assert_eq!(first_drop, 150 * MS);
        for s in h.steps.iter().filter(|s| s.now >= first_drop) {
            assert!(s.events.iter().all(|e| e.kind == QueueEventKind::EarlyDrop));
            assert_ne!(s.out.unwrap().ecn, Ecn::Ce);
        }
    }

    #[test]
    fn not_ect_packets_are_never_marked() {
        let mut h = ecn_codel(1.5, 1.0, CodelParams::default());
        ramp(&mut h, 90, 100, 149 * MS, true);
        for s in &h.steps {
            let p = s.out.unwrap();
            if p.flow == 0 {
                assert_eq!(p.ecn, Ecn::NotEct);
            }
        }
        assert!(h.dequeue_events(QueueEventKind::Mark).iter().all(|e| e.flow == 1));
        assert!(!h.dequeue_events(QueueEventKind::Mark).is_empty());
    }

    #[test]
    fn mark_frequency_at_p_0_3_is_binomial() {
        // A standing queue of 100 packets at one departure per 100 us: sojourn 10 ms > 7.5 ms
        // for every packet; interval so long that CoDel never drops. Half the packets are
        // Not-ECT. Marks of the n ECT departures ~ Binomial(n, 0.3); accept mean +- 5 sd.
        let params = CodelParams { interval: 1000 * 1000 * MS, ..CodelParams::default() };
        let mut h = ecn_codel(1.5, 0.3, params);
        let ect = |k: u64| ecn_pkt((k % 2) as u32, k, 1500, if k % 2 == 1 { Ecn::Ect0 } else { Ecn::NotEct });
        // Packet k arrives at k * 100 us; from 10 ms on, each arrival is followed by a
        // departure, which serves the packet that came 10 ms earlier.
        for k in 0..20_100u64 {
            let t = k * 100 * US;
            h.enqueue(t, ect(k));
            if k >= 100 {
                let out = h.dequeue(t).unwrap();
                assert_eq!(t - out.enqueued_at, 10 * MS);
            }
        }
        assert_eq!(h.drops, 0);
        let ect_above: Vec<&Packet> = h
            .steps
            .iter()
            .filter_map(|s| s.out.as_ref().filter(|p| p.ecn.is_ect() && s.now - p.enqueued_at > 7_500 * US))
            .collect();
        let n = ect_above.len() as u64;
        assert!(n > 9_000, "{n}");
        let marks = ect_above.iter().filter(|p| p.ecn == Ecn::Ce).count() as u64;
        assert!(within_binomial(marks, n, 0.3), "marks {marks} of {n}, expected {}", 0.3 * n as f64);
        assert_eq!(h.dequeue_events(QueueEventKind::Mark).len() as u64, marks);
    }

    #[test]
    fn registered_with_paper_defaults() {
        let m = crate::qdisc::QUEUES.iter().find(|m| m.name == "ecn_codel").unwrap();
        let p = Params::resolve("q", m.params, &Default::default()).unwrap();
        assert_eq!((p.float("c"), p.float("p")), (1.5, 0.3));
        assert_eq!(CodelParams::from_params(&p), CodelParams::default());
    }
}
