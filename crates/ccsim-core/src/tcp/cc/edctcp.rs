//! E-DCTCP: Huang & Hu, "Enhanced DCTCP to explicitly inform of packet loss", IEEE ICC 2015,
//! pp. 5511-5516, DOI 10.1109/ICC.2015.7249200; used as a baseline by the ANCE paper (Sup, de
//! Moraes, Bauchspiess, "Acknowledge-Based Non-Congestion Estimation", IJCNIS 2020, §4,
//! ref. \[8\], which only names it an "ECN-based protocol" with the routers' cooperation).
//!
//! **Only the abstract was available.** It establishes: DCTCP (`dctcp.rs`) plus two phases.
//! *Loss detection*: "if any switch detects a packet (e.g. A) to be dropped, it stamps a
//! dedicated ECN flag on A, and immediately routes A back to its sender". *Backoff
//! retransmission*: "if a sender receives any backtracked packet A, it retransmits A based on
//! a simplified binary exponential backoff algorithm". The aim is to avoid the timeouts that
//! undetected losses cause DCTCP under incast.
//!
//! The parametrised reading implemented:
//! - Switch (the engine, `engine.rs`): data of an E-DCTCP flow carries `FLAG_LN`; when any
//!   router queue drops such a segment (overflow or AQM), the router sends its **header only**
//!   (the payload is useless to the sender, and a full-size packet would load the reverse
//!   path) back to the source as a `FLAG_LOST` packet naming the segment and its send time.
//!   Every router is E-DCTCP-capable; drops at a host's own interface and losses on links are
//!   not returned (no switch saw them). A returned header that is lost itself is just lost.
//! - Sender (`tcp/sender/notice.rs`): the notice marks the segment lost at once and, once per window
//!   as a fast retransmit would (RFC 6582 §4), reduces the window as DCTCP does on loss (Reno
//!   halving, [`Dctcp`]); a returned retransmission sent after the last reduction reduces
//!   again (RFC 5681 §4.3). A notice about an older copy, or for data since acknowledged, is
//!   ignored. The notice also restarts the retransmission timer, as an ACK would (RFC 6298
//!   §5.3): the path is alive and the loss is being repaired, so the RTO must not fire during
//!   the backoff.
//! - Backoff: the k-th return of the same segment holds its retransmission for
//!   `U{0, ..., 2^min(k, max_exp) - 1}` slots (Ethernet's truncated binary exponential
//!   backoff, IEEE 802.3 §4.2.3.2.5, counted per segment as the abstract's "packet A"). After
//!   the hold the segment is retransmitted like any segment known lost (RFC 6675 `NextSeg`),
//!   i.e. when the window has room. Retransmitting it regardless of the window (as a fast
//!   retransmission) was tried: under incast it turns into a storm of returned
//!   retransmissions (5x the notices, slower completion), so the window stays in charge and
//!   the backoff only spreads the senders apart.
//! - `slot`: one round-trip time by default (the flow's minimum RTT, else SRTT, else 0), so
//!   the first return is retransmitted at once or one RTT later. `max_exp = 3` (at most 7
//!   slots): with 40 incast senders (`tests/cc_edctcp.rs`) caps of 2-4 complete at line rate
//!   without a timeout, while a cap of 6 holds segments for more than a 200 ms RTO (the
//!   minimum RTT there includes the incast queue). Both are guesses; the abstract's
//!   "simplified" is not explained.
//! - Everything else is DCTCP, including the RFC 8257 receiver and implied ECN.

use super::dctcp::Dctcp;
use super::{Ack, CcModel, CcState, Congestion, CongestionControl, TransportNeeds, VarSpec};
use crate::params::{ParamKind, ParamSpec, ParamValue, Params};
use crate::registry::Randomness;
use crate::sim::rng::Rng;
use crate::sim::time::Time;

/// Declared parameters.
pub static PARAMS: &[ParamSpec] = &[
    ParamSpec::new("g", ParamKind::Float, Some(ParamValue::Float(1.0 / 16.0)), "EWMA gain of alpha (Alizadeh et al. 2010, Linux dctcp_shift_g = 4, ns-3: 1/16)")
        .range(1e-6, 1.0),
    ParamSpec::new("alpha_init", ParamKind::Prob, Some(ParamValue::Float(1.0)), "initial alpha (Linux dctcp_alpha_on_init, ns-3: 1)"),
    ParamSpec::new(
        "slot",
        ParamKind::Time,
        Some(ParamValue::Int(0)),
        "backoff slot for returned segments; 0 = the flow's minimum RTT (a guess: Huang & Hu, IEEE ICC 2015, give no slot in their abstract)",
    ),
    ParamSpec::new(
        "max_exp",
        ParamKind::Int,
        Some(ParamValue::Int(3)),
        "backoff exponent cap: the k-th return of a segment waits U{0..2^min(k, max_exp) - 1} slots (truncated BEB; cap a guess, not in Huang & Hu's abstract)",
    )
    .range(1.0, 16.0),
];

/// Registration.
pub const MODEL: CcModel = CcModel {
    name: "edctcp",
    doc: "E-DCTCP (Huang & Hu 2015): DCTCP whose dropped segments routers return to the sender, retransmitted after a binary exponential backoff; needs ECN (implied); receiver sends RFC 8257 §3.2 ACKs",
    params: PARAMS,
    random: Randomness::Always { what: "random backoff" },
    partner_queues: &["threshold"],
    build: |p, _| Box::new(EDctcp::from_params(p)),
};

/// E-DCTCP.
#[derive(Clone, Debug)]
pub struct EDctcp {
    dctcp: Dctcp,
    /// Backoff slot; 0 = minimum RTT.
    slot: Time,
    /// Backoff exponent cap.
    max_exp: u32,
}

impl EDctcp {
    /// DCTCP with gain `g` and initial `alpha`, and the backoff's `slot` and `max_exp`.
    pub fn new(g: f64, alpha_init: f64, slot: Time, max_exp: u32) -> Self {
        EDctcp { dctcp: Dctcp::new(g, alpha_init), slot, max_exp }
    }

    /// From validated parameters.
    pub fn from_params(p: &Params) -> Self {
        Self::new(p.float("g"), p.float("alpha_init"), p.uint("slot"), p.uint("max_exp") as u32)
    }

    /// DCTCP's marked-fraction estimate.
    pub fn alpha(&self) -> f64 {
        self.dctcp.alpha()
    }

    /// The backoff slot in force.
    fn slot(&self, st: &CcState) -> Time {
        if self.slot > 0 {
            self.slot
        } else {
            st.min_rtt.or(st.srtt).unwrap_or(0)
        }
    }
}

impl CongestionControl for EDctcp {
    fn name(&self) -> &'static str {
        "edctcp"
    }

    fn on_ack(&mut self, st: &mut CcState, ack: &Ack) {
        self.dctcp.on_ack(st, ack);
    }

    fn on_ack_received(&mut self, st: &CcState, ack: &Ack) {
        self.dctcp.on_ack_received(st, ack);
    }

    fn ssthresh(&mut self, st: &CcState, event: Congestion) -> u64 {
        self.dctcp.ssthresh(st, event)
    }

    fn needs(&self) -> TransportNeeds {
        TransportNeeds { loss_notice: true, ..self.dctcp.needs() }
    }

    fn vars(&self) -> &'static [VarSpec] {
        self.dctcp.vars()
    }

    fn var(&self, name: &str) -> Option<f64> {
        self.dctcp.var(name)
    }

    fn on_loss_notice(&mut self, st: &CcState, bounces: u32, rng: &mut Rng) -> Time {
        let exp = bounces.clamp(1, self.max_exp.clamp(1, 16));
        let slots = rng.range_u64(0, 1u64 << exp);
        slots.saturating_mul(self.slot(st))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::{transfer, Application};
    use crate::endpoint::{Cx, Endpoint};
    use crate::messages::MessageLedger;
    use crate::packet::{Kind, Packet, FLAG_LN, FLAG_LOST};
    use crate::sim::rng::Stream;
    use crate::sim::time::{MS, SEC};
    use crate::stats::FlowStats;
    use crate::tcp::cc::testkit::{window, Setup, MSS};
    use crate::tcp::sender::TcpSender;
    use crate::tcp::{EcnFeedback, TcpConfig};

    #[test]
    fn backoff_draws_whole_slots_from_a_window_doubling_per_return_up_to_the_cap() {
        // slot = min RTT = 10 ms. The k-th return draws from {0, ..., 2^k - 1} slots, k <= 3.
        let mut cc = EDctcp::new(1.0 / 16.0, 1.0, 0, 3);
        let st = window(MSS, 10, None).with_rtt(12 * MS, 10 * MS);
        let mut rng = Rng::stream(7, Stream::Flow(0));
        for (k, range) in [(1u32, 2u64), (2, 4), (3, 8), (4, 8), (9, 8)] {
            let mut seen = vec![0u32; range as usize];
            for _ in 0..2000 {
                let d = cc.on_loss_notice(&st, k, &mut rng);
                assert_eq!(d % (10 * MS), 0, "whole slots");
                let slots = d / (10 * MS);
                assert!(slots < range, "return {k}: {slots} slots");
                seen[slots as usize] += 1;
            }
            // Uniform: every value drawn, each within 25 % of 2000 / range.
            let mean = 2000.0 / range as f64;
            assert!(seen.iter().all(|&n| (n as f64 - mean).abs() < 0.25 * mean), "return {k}: {seen:?}");
        }
        // An explicit slot overrides the RTT.
        let mut cc = EDctcp::new(1.0 / 16.0, 1.0, 3 * MS, 1);
        let draws: Vec<Time> = (0..50).map(|_| cc.on_loss_notice(&st, 5, &mut rng)).collect();
        assert!(draws.iter().all(|&d| d == 0 || d == 3 * MS) && draws.contains(&0) && draws.contains(&(3 * MS)));
    }

    #[test]
    fn is_dctcp_with_loss_notices() {
        let cc = EDctcp::new(1.0 / 16.0, 1.0, 0, 6);
        let n = cc.needs();
        assert!(n.ecn && n.loss_notice);
        assert_eq!(n.ecn_feedback, EcnFeedback::Dctcp);
        // Same window arithmetic as DCTCP.
        let mut st = window(MSS, 10, None).with_rtt(12 * MS, 10 * MS);
        st.flight_size = 30_000;
        let (mut e, mut d) = (EDctcp::new(0.5, 0.4, 0, 6), Dctcp::new(0.5, 0.4));
        for ev in [Congestion::Ecn, Congestion::Loss, Congestion::Timeout] {
            assert_eq!(e.ssthresh(&st, ev), d.ssthresh(&st, ev));
        }
    }

    /// A sender of 1000-byte segments with a 10-segment transfer, IW 10, driven by hand.
    struct Host {
        s: TcpSender,
        stats: FlowStats,
        now: Time,
    }

    impl Host {
        fn new(cc: Box<dyn CongestionControl>, seed: u64) -> Self {
            let mut cfg = TcpConfig::default_config();
            cfg.mss = 1000;
            cfg.header = 40;
            cfg.init_cwnd = 10_000;
            cfg.rwnd = 1 << 30;
            let needs = cc.needs();
            cfg.ecn = needs.ecn;
            cfg.loss_notice = needs.loss_notice;
            let mut given = std::collections::BTreeMap::new();
            given.insert("size".to_string(), ParamValue::Int(10_000));
            let p = Params::resolve("app", transfer::MODEL.params, &given).unwrap();
            let app: Box<dyn Application> =
                (transfer::MODEL.build)(&p, 0, None, crate::sim::rng::Rng::stream(0, crate::sim::rng::Stream::App(0)));
            let s = TcpSender::new(0, 1, cfg, cc, app).with_rng(Rng::stream(seed, Stream::Flow(0)));
            Host { s, stats: FlowStats::default(), now: 0 }
        }

        fn call(&mut self, pkt: Option<Packet>) -> Vec<Packet> {
            let mut out = Vec::new();
            let mut cx =
                Cx { now: self.now, out: &mut out, stats: &mut self.stats, messages: &mut MessageLedger::default() };
            match pkt {
                Some(p) => self.s.on_packet(&p, &mut cx),
                None => self.s.on_wakeup(&mut cx),
            }
            out
        }

        fn segs(out: Vec<Packet>) -> Vec<u64> {
            out.iter().map(|p| p.seq / 1000).collect()
        }

        /// A router's notice that the copy of segment `seg` sent at `sent` was dropped.
        fn notice(&mut self, seg: u64, sent: Time) -> Vec<u64> {
            let p = Packet {
                kind: Kind::TcpAck,
                seq: seg * 1000,
                ts: sent,
                size: 40,
                flags: FLAG_LOST,
                ..Packet::default()
            };
            Self::segs(self.call(Some(p)))
        }

        fn ack(&mut self, seg: u64, ts_echo: Time) -> Vec<u64> {
            let p = Packet {
                kind: Kind::TcpAck,
                ack: seg * 1000,
                ts_echo,
                window: u32::MAX,
                size: 40,
                ..Packet::default()
            };
            Self::segs(self.call(Some(p)))
        }

        /// Wake the sender at its next deadline if that is before `until`.
        fn wake_before(&mut self, until: Time) -> Option<(Time, Vec<u64>)> {
            let t = self.s.next_wakeup().filter(|&t| t < until)?;
            self.now = t;
            Some((t, Self::segs(self.call(None))))
        }
    }

    /// Tail loss: segments 0..9 leave at 0; the last one is dropped and returned at 1 ms; the
    /// ACKs for 0..8 arrive at 10 ms. Returns the times and segments the sender sent after
    /// the first window, before `until`.
    fn tail_loss(cc: Box<dyn CongestionControl>, seed: u64, until: Time) -> (Host, Vec<(Time, u64)>) {
        let mut h = Host::new(cc, seed);
        let first = h.call(None);
        assert_eq!(Host::segs(first.clone()), (0..10).collect::<Vec<_>>());
        let asks = h.s.state().mss == 1000 && first.iter().all(|p| p.flags & FLAG_LN != 0);
        let mut sent = vec![];
        h.now = MS;
        sent.extend(h.notice(9, 0).into_iter().map(|s| (MS, s)));
        if asks {
            // Recovery at once: ssthresh = cwnd = FlightSize / 2 = 5 segments, nothing sent
            // (pipe 9 segments).
            assert_eq!((h.stats.fast_recoveries, h.s.state().cwnd, h.s.state().ssthresh), (1, 5000, 5000));
        }
        h.now = 10 * MS;
        for k in 1..=9 {
            let out = h.ack(k, 0);
            sent.extend(out.into_iter().map(|s| (10 * MS, s)));
        }
        while let Some((t, out)) = h.wake_before(until) {
            sent.extend(out.into_iter().map(|s| (t, s)));
        }
        (h, sent)
    }

    #[test]
    fn a_returned_tail_segment_is_resent_within_the_round_trip_where_dctcp_waits_for_the_rto() {
        // slot 10 ms: the first return waits 0 or 1 slot, drawn from the flow's stream; the
        // oracle replays the draw. The retransmission needs both the backoff over and room in
        // the window: pipe falls by one per ACK, to 4 segments (below cwnd 5) at the 5th ACK.
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..12 {
            let hold = Rng::stream(seed, Stream::Flow(0)).range_u64(0, 2) * 10 * MS;
            let (h, sent) = tail_loss(Box::new(EDctcp::new(1.0 / 16.0, 1.0, 10 * MS, 3)), seed, 500 * MS);
            let expect_at = (MS + hold).max(10 * MS);
            assert_eq!(sent, vec![(expect_at, 9)], "seed {seed}, hold {hold}");
            assert_eq!((h.stats.loss_notices, h.stats.retransmissions, h.stats.timeouts), (1, 1, 0));
            seen.insert(expect_at);
        }
        assert_eq!(seen.len(), 2, "both draws occurred: {seen:?}");
        // DCTCP gets no notice (its data does not ask) and no duplicate ACK: the RTO (1 s after
        // the last ACK) resends segment 9.
        let (h, sent) = tail_loss(Box::new(Dctcp::new(1.0 / 16.0, 1.0)), 0, 2 * SEC);
        assert_eq!(sent, vec![(1010 * MS, 9)]);
        assert_eq!((h.stats.loss_notices, h.stats.timeouts, h.stats.fast_recoveries), (0, 1, 0));
    }

    #[test]
    fn a_returned_retransmission_backs_off_longer_and_reduces_again() {
        // As above with no first hold (seeds whose first draw is 0): 9 is resent at 10 ms. Its
        // copy comes back at 11 ms: second return, U{0..3} slots, and a second reduction
        // (RFC 5681 §4.3) from pipe 0: ssthresh = 2 segments.
        let mut holds = std::collections::BTreeSet::new();
        for seed in 0..60 {
            let mut oracle = Rng::stream(seed, Stream::Flow(0));
            if oracle.range_u64(0, 2) != 0 {
                continue;
            }
            let hold = oracle.range_u64(0, 4) * 10 * MS;
            let mut h = Host::new(Box::new(EDctcp::new(1.0 / 16.0, 1.0, 10 * MS, 3)), seed);
            h.call(None);
            h.now = MS;
            h.notice(9, 0);
            h.now = 10 * MS;
            let resent: Vec<u64> = (1..=9).flat_map(|k| h.ack(k, 0)).collect();
            assert_eq!(resent, vec![9]);
            h.now = 11 * MS;
            let now = h.notice(9, 10 * MS);
            assert_eq!((h.stats.fast_recoveries, h.s.state().ssthresh), (2, 2000), "seed {seed}");
            let at = if now == vec![9] {
                11 * MS
            } else {
                h.wake_before(SEC)
                    .map(|(t, out)| {
                        assert_eq!(out, vec![9]);
                        t
                    })
                    .unwrap()
            };
            assert_eq!(at, 11 * MS + hold, "seed {seed}");
            holds.insert(hold);
        }
        assert_eq!(holds.len(), 4, "all of 0..3 slots drawn: {holds:?}");
    }

    #[test]
    fn a_notice_about_an_older_copy_or_acknowledged_data_changes_nothing() {
        // A 1 ns slot: any hold is over by the next event.
        let mut h = Host::new(Box::new(EDctcp::new(1.0 / 16.0, 1.0, 1, 3)), 1);
        h.call(None);
        h.now = 5 * MS;
        h.ack(4, 0);
        // Segment 2 is acknowledged: a late notice for it is stale.
        assert!(h.notice(2, 0).is_empty());
        assert_eq!((h.stats.fast_recoveries, h.stats.retransmissions), (0, 0));
        // Segment 9 (sent at 0) is returned at 6 ms: FlightSize 6 segments, ssthresh = cwnd = 3,
        // pipe 5. ACKs for 5, 6, 7 bring pipe to 2: 9 goes out at the third.
        h.now = 6 * MS;
        assert!(h.notice(9, 0).is_empty());
        assert_eq!((h.stats.fast_recoveries, h.s.state().cwnd), (1, 3000));
        while h.wake_before(10 * MS).is_some() {}
        h.now = 10 * MS;
        let sent: Vec<Vec<u64>> = (5..=7).map(|k| h.ack(k, 0)).collect();
        assert_eq!(sent, vec![vec![], vec![], vec![9]]);
        // A notice for the copy sent at 0 once the retransmission is out: ignored.
        let before = (h.stats.fast_recoveries, h.stats.retransmissions, h.s.state().cwnd, h.s.state().ssthresh);
        h.now = 11 * MS;
        assert!(h.notice(9, 0).is_empty());
        assert_eq!((h.stats.fast_recoveries, h.stats.retransmissions, h.s.state().cwnd, h.s.state().ssthresh), before);
        assert_eq!(h.stats.loss_notices, 3, "every notice is counted");
    }
}
