//! ANCE, Acknowledge-based Non-Congestion Estimation: Sup, de Moraes, Bauchspiess,
//! "Acknowledge-Based Non-Congestion Estimation: An Indirect Queue Management Approach for
//! Concurrent TCP and UDP-like Flows", International Journal of Communication Networks and
//! Information Security (IJCNIS), 2020, sec. 2: Algorithm 1, Table 1, eq. 1-2. The sender
//! keeps the bottleneck queue near `Q_min` from its own estimate `Q_E = B_E (RTT_now -
//! RTT_min)` (eq. 1), without help from the routers.
//!
//! Algorithm 1, on each ACK of new data outside fast recovery (W = cwnd in segments):
//! - `RTT_min` is the smallest RTT sample, and is set to the current sample `RTT_now` while
//!   `W = 1` (the path may have changed).
//! - Slow start (`cwnd < ssthresh`): while `Q_E < Q_min`, Reno's slow start (RFC 5681,
//!   RFC 3465 L = 2); once `Q_E >= Q_min`, `W = min(rwnd, ssthresh)`, congestion avoidance,
//!   `BF = W`.
//! - Congestion avoidance: if `Q_E < Q_min`, `W += 1` once W ACKs have been received (once
//!   per RTT) and then `BF = BF / 2`; otherwise `W -= 1` once BF ACKs have been received and
//!   then `BF = BF + BF / 2` (Table 1's BF, "Balance Fairness": a large window halves its
//!   BF more often and so decreases more often).
//! - Losses are TCP-Reno's (the paper's senders are TCP-Reno): ssthresh = max(FlightSize / 2,
//!   2 SMSS) and the sender's fast recovery / RTO. Without SACK the sender uses plain Reno
//!   recovery ([`FastRecovery::Reno`]); with SACK, RFC 6675 (see `reno.rs`).
//!
//! `B_E` (eq. 2) is the bottleneck rate seen through the ACK clock: "the minimal time between
//! arrival of two consecutive ACKs" `ta_min` and "the last received ACK length" `Ack_l`.
//! Reading and corrections (deliberate, documented):
//! - Eq. 2 prints `B_E = Ack_l · ta_min`, which is not a rate; the rate is `Ack_l / ta_min`.
//! - `Ack_l` is the data the ACK acknowledges, not the 40-52 byte ACK packet: the ACKs are
//!   spaced by the data packets they acknowledge at the bottleneck, and with the ACK packet's
//!   own size `B_E` would be 25 times too small for the paper's 1-kbyte packets (its queue
//!   could then never reach `Q_min`).
//! - The minimum is taken per acknowledged byte: `B_E = max(acked_i / gap_i)` over pairs of
//!   consecutive ACKs of new data, the later one outside loss recovery. With one ACK per
//!   equal-sized segment (the paper's model) this is exactly `Ack_l / ta_min`; with delayed
//!   ACKs, which mix ACKs of one and two segments, pairing the last ACK's length with another
//!   pair's gap would double the estimate. ACKs in recovery are skipped because a cumulative
//!   ACK that fills a hole covers many segments at once.
//! - `RTT_now` is the latest RTT sample, taken from the newest segment the ACK covers
//!   ([`Ack::rtt_last`], Linux's `ca_rtt`), or from the timestamp echo when there is none
//!   (retransmitted data). The timestamp echo alone times the oldest segment of a delayed
//!   ACK, and so adds the time the receiver waited for the next segment: on a link the flow
//!   does not fill, that wait (milliseconds between ACK-clocked bursts) reads as a queue of
//!   several kbytes, above `Q_min`, and a lone ANCE flow on a 10 Mbit/s dumbbell then held
//!   half the link. `Q_E` is in bytes of payload.
//! - Before `B_E` and `RTT_min` are known, `Q_E` is taken as 0 (no evidence of a queue).
//!
//! Choices where Algorithm 1 is silent:
//! - "W ACKs" and "BF ACKs" are counted in acknowledged segments (acknowledged bytes / SMSS,
//!   as RFC 3465 counts bytes) so that "W ACKs" stays one RTT with delayed ACKs; with one ACK
//!   per segment this is the paper's ACK count. Both counts restart whenever W changes
//!   (including a loss, ECN or timeout reduction), so each step waits W (or BF) ACKs after
//!   the previous one.
//! - `BF` is kept at least 1 (it counts ACKs; also, repeated halving would otherwise reach 0,
//!   where `BF + BF/2` stays 0 forever) and at most 1e9 (arithmetic stays finite).
//! - Slow start also ends the RFC 5681 way, at `cwnd >= ssthresh`; `BF = W` then too. A
//!   congestion-avoidance stage reached through fast recovery keeps its BF.
//! - At the slow-start exit `ssthresh` is lowered to the new W when `rwnd < ssthresh`, and
//!   with every decrease below it, so that the sender and ANCE agree that congestion
//!   avoidance goes on (RFC 5681: slow start iff cwnd < ssthresh; Algorithm 1 keeps a phase
//!   of its own and leaves ssthresh alone; it is recomputed at the next loss anyway).
//! - If ssthresh was never set (the transport's unlimited `init_ssthresh`, no loss yet), the
//!   jump has no target; W = min(rwnd, cwnd / 2) then, Reno's answer to the first sign of
//!   congestion in slow start: the estimate lags one RTT, in which slow start doubles the
//!   window past the one that brought the queue to `Q_min`. The paper always configures
//!   ssthresh (16 or 30 packets). Keeping cwnd instead (measured on a 10 Mbit/s dumbbell)
//!   leaves the queue above `Q_min` for good: W starts a third too large with BF = W, and as
//!   every decrease multiplies BF by 1.5, the excess shrinks only logarithmically in time.
//! - W does not grow beyond rwnd (it could not be used; BF then stays as it is).
//! - The paper's section 2 text says the opposite of Algorithm 1 for slow start (leave it
//!   when `Q_E < Q_min`); Algorithm 1 and Table 1 are followed, as is the paper's description
//!   of ENCN, which ANCE imitates (`encn.rs`).
//!
//! Behaviour (measured in `tests/cc_ance.rs`): Table 1 drives BF to its floor, since a cycle
//! of n increases and n decreases multiplies it by 0.75^n; the decreases that follow a
//! crossing of `Q_min` then come every few ACKs, and in the RTT before the emptier queue
//! shows W overshoots downwards by several segments. The queue therefore saws between empty
//! and somewhat above `Q_min` rather than sitting on it. `Q_min` must leave room for that
//! overshoot: on the paper's daisy chain (3 kbytes, 16 ms of queue at 1.5 Mbit/s) the link
//! stays 95-98 % busy; on a 10 Mbit/s dumbbell three flows with 3 kbytes (2.4 ms) leave it a
//! quarter idle, with 20 kbytes (the same 16 ms) full.
//!
//! The window machinery is [`Core`], shared with ENCN (`encn.rs`), which feeds it the
//! router's non-congestion echo instead of `Q_E < Q_min`.

use super::{Ack, CcModel, CcState, Congestion, CongestionControl, FastRecovery, VarSpec, VarUnit};
use crate::params::{ParamKind, ParamSpec, ParamValue, Params};
use crate::registry::Randomness;
use crate::sim::time::Time;

/// Table 1: upon a W increase, `BF = BF / 2`.
pub const BF_ON_INCREASE: f64 = 0.5;
/// Table 1: upon a W decrease, `BF = BF + BF / 2`.
pub const BF_ON_DECREASE: f64 = 1.5;
/// BF counts ACKs: below one it would mean the same as one (see the module doc).
pub const BF_MIN: f64 = 1.0;
/// Keeps BF finite under long runs of decreases.
pub const BF_MAX: f64 = 1e9;
/// An ssthresh at or above this was never set (`TcpConfig` encodes "unlimited" as
/// `u64::MAX / 4`).
const SSTHRESH_UNSET: u64 = u64::MAX / 8;

/// Declared parameters.
pub static PARAMS: &[ParamSpec] = &[ParamSpec::new(
    "q_min",
    ParamKind::Bytes,
    Some(ParamValue::Int(3000)),
    "queue threshold Q_min: the estimated queue Q_E below it means non-congestion (paper sec. 3.1: 3 kbytes); initial ssthresh and rwnd are the transport's init_ssthresh and rwnd",
)
.range(1.0, 1e12)];

/// Registration.
pub const MODEL: CcModel = CcModel {
    name: "ance",
    doc: "ANCE (Sup et al. 2020, Algorithm 1, Table 1, eq. 1-2): window steered by the queue estimate Q_E = B_E (RTT - RTT_min) against Q_min, Reno losses",
    params: PARAMS,
    random: Randomness::Never,
    partner_queues: &[],
    build: |p, _| Box::new(Ance::from_params(p)),
};

/// Algorithm 1's window control and Table 1's BF, parametrised by the "not congested" test
/// (`Q_E < Q_min` for ANCE, the router's non-congestion echo for ENCN).
#[derive(Clone, Debug)]
pub struct Core {
    /// Balance Fairness: ACKs (segments acknowledged) per one-segment decrease.
    bf: f64,
    /// The previous ACK found the sender in slow start.
    in_slow_start: bool,
    /// Segments acknowledged while not congested since W last changed.
    acked_free: f64,
    /// Segments acknowledged while congested since W last changed.
    acked_congested: f64,
}

impl Default for Core {
    fn default() -> Self {
        Core { bf: BF_MIN, in_slow_start: true, acked_free: 0.0, acked_congested: 0.0 }
    }
}

impl Core {
    /// Current BF.
    pub fn bf(&self) -> f64 {
        self.bf
    }

    fn enter_avoidance(&mut self, st: &CcState) {
        self.in_slow_start = false;
        self.bf = (st.cwnd as f64 / st.mss as f64).clamp(BF_MIN, BF_MAX);
        self.acked_free = 0.0;
        self.acked_congested = 0.0;
    }

    /// An ACK of `acked` new bytes outside fast recovery; `not_congested` is the path's
    /// verdict for this ACK.
    pub fn on_ack(&mut self, st: &mut CcState, acked: u64, not_congested: bool) {
        let mss = st.mss as u64;
        if st.in_slow_start() {
            self.in_slow_start = true;
            if not_congested {
                // Reno slow start, without overshooting ssthresh.
                st.cwnd += acked.min(2 * mss).min(st.ssthresh - st.cwnd);
            } else {
                let target = if st.ssthresh >= SSTHRESH_UNSET { st.cwnd / 2 } else { st.ssthresh };
                st.cwnd = st.rwnd.min(target).max(mss);
                st.ssthresh = st.ssthresh.min(st.cwnd);
                self.enter_avoidance(st);
            }
            return;
        }
        if self.in_slow_start {
            self.enter_avoidance(st);
        }
        let segs = acked as f64 / mss as f64;
        let w = st.cwnd as f64 / mss as f64;
        if not_congested {
            self.acked_free += segs;
            if self.acked_free >= w && st.cwnd + mss <= st.rwnd.max(mss) {
                st.cwnd += mss;
                self.bf = (self.bf * BF_ON_INCREASE).max(BF_MIN);
                self.w_changed();
            }
        } else {
            self.acked_congested += segs;
            if self.acked_congested >= self.bf {
                st.cwnd = st.cwnd.saturating_sub(mss).max(mss);
                // Still congestion avoidance for the sender (cwnd >= ssthresh).
                st.ssthresh = st.ssthresh.min(st.cwnd);
                self.bf = (self.bf * BF_ON_DECREASE).min(BF_MAX);
                self.w_changed();
            }
        }
        debug_assert!(st.cwnd >= mss);
    }

    fn w_changed(&mut self) {
        self.acked_free = 0.0;
        self.acked_congested = 0.0;
    }

    /// A congestion event (loss, ECN-Echo or timeout) is about to change W: the ACK counts
    /// restart. Returns Reno's ssthresh, `max(FlightSize / 2, 2 SMSS)`.
    pub fn ssthresh(&mut self, st: &CcState) -> u64 {
        self.w_changed();
        (st.flight_size / 2).max(2 * st.mss as u64)
    }
}

/// The ANCE sender.
#[derive(Clone, Debug)]
pub struct Ance {
    /// `Q_min` (bytes).
    q_min: f64,
    core: Core,
    /// `RTT_min`.
    rtt_min: Option<Time>,
    /// `RTT_now`: the latest sample.
    rtt_now: Option<Time>,
    /// `ta_min` per acknowledged byte (ns per byte); infinite until measured.
    ta_min_per_byte: f64,
    /// Arrival of the previous ACK of new data.
    prev_ack: Option<Time>,
}

impl Ance {
    /// With `Q_min` in bytes.
    pub fn new(q_min: u64) -> Self {
        Ance {
            q_min: q_min as f64,
            core: Core::default(),
            rtt_min: None,
            rtt_now: None,
            ta_min_per_byte: f64::INFINITY,
            prev_ack: None,
        }
    }

    fn from_params(p: &Params) -> Self {
        Ance::new(p.uint("q_min"))
    }

    /// `B_E` (eq. 2), bytes per second, once two ACKs of new data have been seen.
    pub fn bandwidth_estimate(&self) -> Option<f64> {
        self.ta_min_per_byte.is_finite().then(|| 1e9 / self.ta_min_per_byte)
    }

    /// `Q_E` (eq. 1), bytes, once `B_E` and `RTT_min` are known.
    pub fn queue_estimate(&self) -> Option<f64> {
        let b = self.bandwidth_estimate()?;
        let (now, min) = (self.rtt_now?, self.rtt_min?);
        Some(b * now.saturating_sub(min) as f64 * 1e-9)
    }

    /// `RTT_min`.
    pub fn rtt_min(&self) -> Option<Time> {
        self.rtt_min
    }

    /// Table 1's BF.
    pub fn bf(&self) -> f64 {
        self.core.bf()
    }
}

/// The Balance Fairness variable, ANCE's and ENCN's.
pub(crate) const BF: VarSpec =
    VarSpec::new("bf", VarUnit::Number, "Balance Fairness: ACKs per one-segment decrease (Table 1 BF)");

/// ANCE's traceable variables.
pub static VARS: &[VarSpec] = &[
    BF,
    VarSpec::new(
        "bw_estimate",
        VarUnit::BitsPerSecond,
        "bandwidth estimate B_E (eq. 2); NaN before two ACKs of new data",
    ),
    VarSpec::new("queue_estimate", VarUnit::Bytes, "queue estimate Q_E (eq. 1); NaN before B_E and RTT_min"),
];

impl CongestionControl for Ance {
    fn name(&self) -> &'static str {
        "ance"
    }

    fn vars(&self) -> &'static [VarSpec] {
        VARS
    }

    fn var(&self, name: &str) -> Option<f64> {
        Some(match name {
            "bf" => self.bf(),
            "bw_estimate" => self.bandwidth_estimate().map_or(f64::NAN, |b| 8.0 * b),
            "queue_estimate" => self.queue_estimate().unwrap_or(f64::NAN),
            _ => return None,
        })
    }

    fn on_ack_received(&mut self, st: &CcState, ack: &Ack) {
        if ack.acked > 0 {
            if let Some(prev) = self.prev_ack {
                let gap = st.now.saturating_sub(prev);
                if gap > 0 && !st.in_recovery {
                    self.ta_min_per_byte = self.ta_min_per_byte.min(gap as f64 / ack.acked as f64);
                }
            }
            self.prev_ack = Some(st.now);
        }
        if let Some(rtt) = ack.rtt_last.or(ack.rtt) {
            self.rtt_now = Some(rtt);
            // Algorithm 1: a new minimum, or W = 1 (the route may have changed).
            if self.rtt_min.is_none_or(|m| rtt < m) || st.cwnd <= st.mss as u64 {
                self.rtt_min = Some(rtt);
            }
        }
    }

    fn on_ack(&mut self, st: &mut CcState, ack: &Ack) {
        let not_congested = self.queue_estimate().is_none_or(|q| q < self.q_min);
        self.core.on_ack(st, ack.acked, not_congested);
    }

    fn ssthresh(&mut self, st: &CcState, _event: Congestion) -> u64 {
        self.core.ssthresh(st)
    }

    fn fast_recovery(&self) -> FastRecovery {
        FastRecovery::Reno
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::time::MS;
    use crate::tcp::cc::testkit::{window, Setup, TestSender, MSS};

    /// An ANCE sender with `Q_min = 3000 B`, a window of `cwnd`, threshold `ssthresh` and
    /// peer window `rwnd` segments.
    fn sender(cwnd: u64, ssthresh: u64, rwnd: u64) -> TestSender<Ance> {
        TestSender::new(Ance::new(3000), window(MSS, cwnd, ssthresh).with_rwnd(rwnd))
    }

    /// A one-segment ACK `gap` after the previous one (so that B_E = MSS / gap) with the RTT
    /// sample `rtt`.
    fn ack(s: &mut TestSender<Ance>, gap: Time, rtt: Time) {
        s.ack_after(gap, Ack { acked: MSS, rtt: Some(rtt), ..Ack::default() });
    }

    #[test]
    fn queue_estimate_is_bandwidth_times_queueing_delay() {
        // ACKs of 1000 B every 4 ms: B_E = 250 000 B/s. RTT_min 80 ms, RTT_now 92 ms:
        // Q_E = 250 000 * 0.012 = 3000 B (eq. 1).
        let mut s = sender(2, 100, 100);
        ack(&mut s, 4 * MS, 80 * MS);
        assert_eq!(s.cc.bandwidth_estimate(), None, "one ACK gives no inter-arrival time");
        ack(&mut s, 4 * MS, 80 * MS);
        assert!((s.cc.bandwidth_estimate().unwrap() - 250_000.0).abs() < 1e-6);
        ack(&mut s, 4 * MS, 92 * MS);
        assert!((s.cc.queue_estimate().unwrap() - 3000.0).abs() < 1e-6);
        assert_eq!(s.cc.rtt_min(), Some(80 * MS));
    }

    #[test]
    fn bandwidth_uses_the_smallest_gap_per_acknowledged_byte_outside_recovery() {
        let mut cc = Ance::new(3000);
        let mut st = window(MSS, 10, 100).with_rwnd(100);
        let feed = |cc: &mut Ance, st: &mut CcState, at: Time, acked: u64, rec: bool| {
            st.now = at;
            st.in_recovery = rec;
            cc.on_ack_received(st, &Ack { acked, ..Ack::default() });
        };
        feed(&mut cc, &mut st, 0, 2000, false);
        // Two segments in 8 ms: 250 kB/s; one segment 3 ms later: 333 kB/s (the maximum).
        feed(&mut cc, &mut st, 8 * MS, 2000, false);
        feed(&mut cc, &mut st, 11 * MS, 1000, false);
        // Then a slower pair: 2 segments in 10 ms does not lower the estimate.
        feed(&mut cc, &mut st, 21 * MS, 2000, false);
        let b = cc.bandwidth_estimate().unwrap();
        assert!((b - 1e6 / 3.0).abs() < 1e-3, "{b}");
        // A cumulative ACK in recovery covering 30 segments 1 ms later is no sample;
        // a duplicate ACK (nothing acknowledged) is none either.
        feed(&mut cc, &mut st, 22 * MS, 30_000, true);
        feed(&mut cc, &mut st, 22 * MS + 1, 0, false);
        assert!((cc.bandwidth_estimate().unwrap() - b).abs() < 1e-6);
    }

    #[test]
    fn slow_start_continues_while_the_estimate_is_below_q_min_and_then_jumps_to_ssthresh() {
        // ssthresh 16, rwnd 64 (paper sec. 3); 1 ms per segment: B_E = 1 MB/s; Q_min 3000 B
        // is 3 ms of queueing.
        let mut s = sender(2, 16, 64);
        for (k, rtt) in [100, 100, 101, 102, 102].into_iter().enumerate() {
            ack(&mut s, MS, rtt * MS);
            // Reno slow start: +1 segment per one-segment ACK.
            assert_eq!(s.cwnd_segs(), 3 + k as u64);
        }
        // 103 ms: Q_E = 3000 B >= Q_min: W = min(rwnd, ssthresh) = 16, BF = W.
        ack(&mut s, MS, 103 * MS);
        assert_eq!((s.cwnd_segs(), s.cc.bf()), (16, 16.0));
        assert!(!s.st.in_slow_start());
        // With rwnd 12 < ssthresh, W = 12 and ssthresh follows.
        let mut s = sender(2, 16, 12);
        ack(&mut s, MS, 100 * MS);
        ack(&mut s, MS, 110 * MS);
        assert_eq!((s.cwnd_segs(), s.st.ssthresh / MSS, s.cc.bf()), (12, 12, 12.0));
    }

    #[test]
    fn bf_follows_table_1_step_by_step() {
        // Enter congestion avoidance at W = 8 (slow start left at ssthresh 8 by an estimate
        // above Q_min), then script non-congested (RTT 100 ms, Q_E = 0) and congested
        // (RTT 110 ms, Q_E = 10 kB) ACKs of one segment each, 1 ms apart (B_E = 1 MB/s).
        let mut s = sender(4, 8, 64);
        ack(&mut s, MS, 100 * MS);
        ack(&mut s, MS, 110 * MS);
        assert_eq!((s.cwnd_segs(), s.cc.bf()), (8, 8.0));
        // (ACKs, RTT ms, W after, BF after). Non-congested: W += 1 on the W-th ACK since W
        // last changed, then BF /= 2. Congested: W -= 1 on the ceil(BF)-th ACK, then
        // BF += BF / 2.
        let steps: &[(usize, u64, u64, f64)] = &[
            (7, 100, 8, 8.0),   // 7 of the 8 ACKs needed
            (1, 100, 9, 4.0),   // 8th: W 8 -> 9, BF 8 -> 4
            (9, 100, 10, 2.0),  // 9 ACKs: W 10, BF 2
            (1, 110, 10, 2.0),  // congested, 1 of BF = 2
            (1, 110, 9, 3.0),   // 2nd: W 10 -> 9, BF 2 -> 3
            (3, 110, 8, 4.5),   // 3 ACKs: W 8, BF 4.5
            (4, 110, 8, 4.5),   // 4 < 4.5
            (1, 110, 7, 6.75),  // 5th: W 7, BF 6.75
            (3, 110, 7, 6.75),  // congested ACKs since the change: 3
            (6, 100, 7, 6.75),  // non-congested ones: 6 of 7 (the two counts are separate)
            (1, 100, 8, 3.375), // 7th: W 8, BF 3.375
            (4, 110, 7, 5.0625),
        ];
        for (i, &(n, rtt, w, bf)) in steps.iter().enumerate() {
            for _ in 0..n {
                ack(&mut s, MS, rtt * MS);
            }
            assert_eq!((s.cwnd_segs(), s.cc.bf()), (w, bf), "step {i}");
        }
    }

    #[test]
    fn bf_stays_at_least_one_ack_and_w_falls_to_one_segment_where_rtt_min_resets() {
        let mut s = sender(4, 4, 1000);
        ack(&mut s, MS, 100 * MS); // enters avoidance at W = 4, BF = 4
        for _ in 0..200 {
            ack(&mut s, MS, 100 * MS); // increases at 4, 9, 15, ... ACKs: BF 4 -> 2 -> 1 -> 1 ...
        }
        assert_eq!((s.cwnd_segs(), s.cc.bf()), (20, BF_MIN));
        // Persistently congested (RTT 150 ms): decreases after 1, 1.5, 2.25, ... ACKs,
        // 19 of them bring W from 20 to 1 within sum(ceil(1.5^k), k < 19) ACKs.
        let budget: f64 = (0..19).map(|k| 1.5f64.powi(k).ceil()).sum();
        let mut n = 0;
        while s.cwnd_segs() > 1 {
            ack(&mut s, MS, 150 * MS);
            n += 1;
            assert!(n as f64 <= budget, "W = {} after {n} ACKs", s.cwnd_segs());
        }
        assert_eq!(n as f64, budget);
        assert!((s.cc.bf() - 1.5f64.powi(19)).abs() < 1e-9);
        // At W = 1 the next sample becomes RTT_min: Q_E = 0, and W grows again.
        ack(&mut s, MS, 150 * MS);
        assert_eq!(s.cc.rtt_min(), Some(150 * MS));
        assert_eq!(s.cwnd_segs(), 2);
    }

    #[test]
    fn rtt_min_is_reset_to_the_current_sample_when_the_window_is_one_segment() {
        let mut s = sender(3, 3, 64);
        ack(&mut s, MS, 50 * MS);
        assert_eq!(s.cc.rtt_min(), Some(50 * MS));
        ack(&mut s, MS, 80 * MS);
        assert_eq!(s.cc.rtt_min(), Some(50 * MS), "a larger sample is no new minimum");
        // A timeout brings W to one segment: the next sample becomes RTT_min (the route
        // may have changed), and is no longer counted as a queue.
        s.st.cwnd = MSS;
        ack(&mut s, MS, 90 * MS);
        assert_eq!(s.cc.rtt_min(), Some(90 * MS));
        assert_eq!(s.cc.queue_estimate(), Some(0.0));
    }

    #[test]
    fn rtt_now_is_the_newest_segments_sample_when_there_is_one() {
        let mut cc = Ance::new(3000);
        let mut st = window(MSS, 4, 100).with_rwnd(100);
        let feed = |cc: &mut Ance, st: &mut CcState, at: Time, rtt: Time, rtt_last: Option<Time>| {
            st.now = at;
            cc.on_ack_received(st, &Ack { acked: 2 * MSS, rtt: Some(rtt), rtt_last, ..Ack::default() });
        };
        feed(&mut cc, &mut st, 0, 100 * MS, Some(99 * MS));
        // 2 segments per 2 ms: B_E = 1 MB/s. The timestamp sample (oldest segment) says
        // 105 ms, the newest segment 100 ms: Q_E = 1 MB/s * 1 ms.
        feed(&mut cc, &mut st, 2 * MS, 105 * MS, Some(100 * MS));
        assert_eq!(cc.rtt_min(), Some(99 * MS));
        assert!((cc.queue_estimate().unwrap() - 1000.0).abs() < 1e-6);
        // Without it (a retransmission), the timestamp sample.
        feed(&mut cc, &mut st, 4 * MS, 102 * MS, None);
        assert!((cc.queue_estimate().unwrap() - 3000.0).abs() < 1e-6);
    }

    #[test]
    fn an_unknown_estimate_counts_as_non_congestion() {
        // No RTT samples at all: slow start proceeds as Reno's.
        let mut s = sender(2, 10, 64);
        for _ in 0..4 {
            s.ack(Ack { acked: MSS, ..Ack::default() });
        }
        assert_eq!(s.st.cwnd, 6 * MSS);
    }

    #[test]
    fn an_unset_ssthresh_halves_the_window_at_the_slow_start_exit() {
        let mut s = TestSender::new(Ance::new(3000), window(MSS, 5, None).with_rwnd(1 << 40));
        ack(&mut s, MS, 100 * MS); // slow start: 6
        ack(&mut s, MS, 110 * MS); // Q_E = 10 kB: W = 6 / 2
        assert_eq!((s.cwnd_segs(), s.cc.bf(), s.st.ssthresh), (3, 3.0, 3 * MSS));
        assert!(!s.st.in_slow_start());
    }

    #[test]
    fn losses_are_handled_as_reno_and_avoidance_resumes_with_the_same_bf() {
        let mut cc = Ance::new(3000);
        let mut st = window(MSS, 20, 10).with_rwnd(64).with_flight(20);
        assert_eq!(cc.ssthresh(&st, Congestion::Loss), 10 * MSS);
        st.flight_size = 3 * MSS;
        assert_eq!(cc.ssthresh(&st, Congestion::Timeout), 2 * MSS);
        assert_eq!(cc.fast_recovery(), FastRecovery::Reno);
        // Avoidance at W = 4, BF = 4; three non-congested ACKs counted.
        let mut s = sender(4, 4, 64);
        for _ in 0..3 {
            ack(&mut s, MS, 100 * MS);
        }
        assert_eq!((s.cwnd_segs(), s.cc.bf()), (4, 4.0));
        // A loss: the sender asks for ssthresh (FlightSize 4 -> 2) and sets cwnd to it.
        s.st.flight_size = 4 * MSS;
        s.congestion(Congestion::Loss);
        assert_eq!(s.cwnd_segs(), 2);
        // The count restarted: the first ACK is 1 of W = 2, the second increases.
        ack(&mut s, MS, 100 * MS);
        assert_eq!((s.cwnd_segs(), s.cc.bf()), (2, 4.0));
        ack(&mut s, MS, 100 * MS);
        assert_eq!((s.cwnd_segs(), s.cc.bf()), (3, 2.0));
    }
}
