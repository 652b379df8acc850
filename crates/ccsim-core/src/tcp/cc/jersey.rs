//! TCP-Jersey: Xu, Tian, Ansari, "TCP-Jersey for Wireless IP Communications", IEEE JSAC
//! 22(4), May 2004, pp. 747-756; compared against by the ANCE paper (Sup, de Moraes,
//! Bauchspiess, "Acknowledge-Based Non-Congestion Estimation", IJCNIS 2020, §4, Fig. 32-35,
//! ref. \[6\]). The router
//! side, the congestion warning (CW), is the `jersey_cw` queue (`qdisc/jersey_cw.rs`): CE on
//! every ECT packet while RED's average queue exceeds `min_th`; the receiver echoes it as ECE
//! (RFC 3168, until CWR).
//!
//! **Only the abstract of the paper was available**; the rules below are our reading of it
//! (the estimator written in the style of TCP Westwood), cross-checked with the NITK ns-3
//! implementation of TCP-Jersey (Jain, Jain, Tahiliani 2017, `tcp-jersey.cc`), which computes
//! the same estimator and sets `ssthresh = cwnd = ownd` on congestion:
//! - **ABE**, the available-bandwidth estimator, a time-sliding-window (TSW, Clark & Fang 1998)
//!   rate average over one RTT, on every ACK of new data (arrival `t_n`, `L_n` bytes newly
//!   acknowledged): `R_n = (RTT R_{n-1} + L_n) / ((t_n - t_{n-1}) + RTT)`. With ACKs of `L`
//!   bytes every `T` it converges to `L / T`, geometrically by `RTT / (RTT + T)` per ACK.
//! - **Optimal window** `ownd = R RTT_min` (bytes): the rate the path delivered times the
//!   propagation delay, so that a window of `ownd` keeps the link busy with an empty queue.
//! - **Rate control** on a CW (an ACK with ECE), at most once per window (the sender's RFC 3168
//!   rule): `cwnd = ssthresh = min(cwnd, ownd)`, no retransmission.
//! - **Loss** (fast retransmit): with a CW on an ACK within the last RTT, congestion:
//!   `ssthresh = cwnd = min(cwnd, ownd)`; without, the loss is taken as random (wireless):
//!   retransmit without reducing (`ssthresh = cwnd`).
//! - **Timeout**: `ssthresh = ownd`, cwnd = 1 segment (the sender); growth is Reno's.
//!
//! Choices where the sources are silent or differ:
//! - `RTT` in the ABE is the sender's SRTT (the NITK code uses the latest sample); the ABE
//!   starts at 0 and only ACKs of new data update it (duplicate ACKs carry no new bytes; the
//!   cumulative ACK after a recovery brings the bytes in at once, which the 1-RTT window
//!   averages out). NITK updates once per RTT instead of per ACK.
//! - `ownd` uses the minimum RTT (Westwood's `BE x RTT_min`; `R RTT` with the smoothed RTT
//!   would be another reading, NITK uses the latest sample); `ownd_srtt = true` uses SRTT
//!   instead, which leaves the standing queue in place.
//! - `min(cwnd, ownd)`: a congestion signal never raises the window.
//! - Before the first estimate (no RTT sample, or R = 0) the reductions are Reno's halving.
//! - At least 2 segments, as RFC 5681's ssthresh.
//! - ECN is implied (`cc = "jersey"` turns it on): the CW is carried by CE/ECE.

use super::{reno_increase, Ack, CcModel, CcState, Congestion, CongestionControl, TransportNeeds, VarSpec, VarUnit};
use crate::params::{ParamKind, ParamSpec, ParamValue};
use crate::registry::Randomness;
use crate::sim::time::{secs, Time};

/// Declared parameters.
pub static PARAMS: &[ParamSpec] = &[ParamSpec::new(
    "ownd_srtt",
    ParamKind::Bool,
    Some(ParamValue::Bool(false)),
    "optimal window ownd = ABE x SRTT instead of ABE x RTT_min (Westwood-style, default)",
)];

/// Registration.
pub const MODEL: CcModel = CcModel {
    name: "jersey",
    doc: "TCP-Jersey (Xu, Tian, Ansari 2004): ACK-rate estimate ABE, cwnd = ABE x RTT_min on congestion warnings (jersey_cw CE marks); losses without a warning do not reduce; needs ECN (implied)",
    params: PARAMS,
    random: Randomness::Never,
    partner_queues: &["jersey_cw"],
    build: |p, _| Box::new(Jersey::new(p.bool("ownd_srtt"))),
};

/// TCP-Jersey.
#[derive(Clone, Debug)]
pub struct Jersey {
    ownd_srtt: bool,
    /// ABE's estimate `R` (bytes per second).
    rate: f64,
    /// Arrival of the previous ACK of new data (`t_{n-1}`).
    t_last: Option<Time>,
    /// Arrival of the latest ACK carrying a congestion warning (ECE).
    last_cw: Option<Time>,
    /// Reno byte counting for congestion avoidance.
    bytes_acked: u64,
}

impl Jersey {
    /// `ownd` from SRTT (`true`) or the minimum RTT (`false`).
    pub fn new(ownd_srtt: bool) -> Self {
        Jersey { ownd_srtt, rate: 0.0, t_last: None, last_cw: None, bytes_acked: 0 }
    }

    /// ABE's available-bandwidth estimate, bytes per second.
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// The optimal window `ownd` in bytes, once there is an estimate.
    pub fn ownd(&self, st: &CcState) -> Option<u64> {
        let rtt = if self.ownd_srtt { st.srtt } else { st.min_rtt }?;
        let ownd = (self.rate * secs(rtt)) as u64;
        (ownd > 0).then_some(ownd)
    }

    /// A congestion warning arrived within the last RTT.
    fn warned(&self, st: &CcState) -> bool {
        let rtt = st.srtt.or(st.min_rtt).unwrap_or(0);
        self.last_cw.is_some_and(|t| st.now.saturating_sub(t) <= rtt)
    }

    /// The window after a congestion signal: `min(cwnd, ownd)`, Reno's half without an
    /// estimate; at least two segments.
    fn rate_control(&self, st: &CcState) -> u64 {
        let min = 2 * st.mss as u64;
        match self.ownd(st) {
            Some(ownd) => st.cwnd.min(ownd).max(min),
            None => (st.flight_size / 2).max(min),
        }
    }
}

/// TCP Jersey's traceable variables.
pub static VARS: &[VarSpec] = &[VarSpec::new(
    "rate",
    VarUnit::BitsPerSecond,
    "available-bandwidth estimate R of ABE; 0 before the first estimate",
)];

impl CongestionControl for Jersey {
    fn name(&self) -> &'static str {
        "jersey"
    }

    fn vars(&self) -> &'static [VarSpec] {
        VARS
    }

    fn var(&self, name: &str) -> Option<f64> {
        (name == "rate").then_some(8.0 * self.rate)
    }

    fn on_ack(&mut self, st: &mut CcState, ack: &Ack) {
        reno_increase(st, ack.acked, &mut self.bytes_acked);
    }

    fn on_ack_received(&mut self, st: &CcState, ack: &Ack) {
        if ack.ece {
            self.last_cw = Some(st.now);
        }
        if ack.acked == 0 {
            return;
        }
        // ABE (TSW over one RTT): R = (RTT R + L) / (dt + RTT).
        if let (Some(t_last), Some(rtt)) = (self.t_last, st.srtt) {
            let (rtt, dt) = (secs(rtt), secs(st.now.saturating_sub(t_last)));
            if rtt + dt > 0.0 {
                self.rate = (rtt * self.rate + ack.acked as f64) / (dt + rtt);
            }
        }
        self.t_last = Some(st.now);
    }

    fn ssthresh(&mut self, st: &CcState, event: Congestion) -> u64 {
        let min = 2 * st.mss as u64;
        match event {
            Congestion::Ecn => self.rate_control(st),
            Congestion::Loss if self.warned(st) => self.rate_control(st),
            // A loss without a warning is taken as random: no reduction.
            Congestion::Loss => st.cwnd.max(min),
            Congestion::Timeout => match self.ownd(st) {
                Some(ownd) => ownd.max(min),
                None => (st.flight_size / 2).max(min),
            },
        }
    }

    fn needs(&self) -> TransportNeeds {
        TransportNeeds { ecn: true, ..TransportNeeds::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::time::MS;

    use crate::tcp::cc::testkit::{window, Setup};

    const MSS: u64 = 1448;

    /// `n` ACKs of `bytes` each, `gap` apart.
    fn stream(cc: &mut Jersey, st: &mut CcState, n: u64, bytes: u64, gap: Time) {
        for _ in 0..n {
            st.now += gap;
            cc.on_ack_received(st, &Ack { acked: bytes, ..Ack::default() });
            st.snd_una += bytes;
        }
    }

    #[test]
    fn abe_step_is_the_time_sliding_window_average() {
        // RTT 40 ms, R = 1e6 B/s; an ACK of 1448 B 1.2 ms after the previous one:
        // R = (0.04 * 1e6 + 1448) / (0.0012 + 0.04) = 41448 / 0.0412 B/s.
        let mut cc = Jersey::new(false);
        let mut st = window(MSS, 50, None).with_flight(50).with_rtt(40 * MS, 40 * MS);
        cc.on_ack_received(&st, &Ack { acked: MSS, ..Ack::default() });
        assert_eq!(cc.rate(), 0.0, "the first ACK only starts the clock");
        cc.rate = 1e6;
        st.now = 1_200_000;
        cc.on_ack_received(&st, &Ack { acked: MSS, ..Ack::default() });
        assert!((cc.rate() - 41_448.0 / 0.0412).abs() < 1e-6, "{}", cc.rate());
        // Duplicate ACKs leave it alone.
        let r = cc.rate();
        st.now += MS;
        cc.on_ack_received(&st, &Ack { acked: 0, ..Ack::default() });
        assert_eq!(cc.rate(), r);
    }

    #[test]
    fn abe_converges_to_the_bottleneck_rate() {
        // ACKs spaced at the packet time of a 10 Mbit/s bottleneck (1500 B on the wire, 1.2 ms)
        // deliver 1448 payload bytes each: R -> 1448 / 1.2 ms = 1.2067 MB/s; delayed ACKs (two
        // segments every 2.4 ms) give the same rate.
        for (per_ack, gap) in [(1u64, 1_200_000), (2, 2_400_000)] {
            let mut cc = Jersey::new(false);
            let mut st = window(MSS, 50, None).with_flight(50).with_rtt(40 * MS, 40 * MS);
            let expect = MSS as f64 / 1.2e-3;
            // From R = 0 the error shrinks by RTT / (RTT + gap) per ACK: after 15 RTTs of ACKs
            // it is below e^-15 of the start.
            let n = 15 * 40_000_000 / gap;
            stream(&mut cc, &mut st, n, per_ack * MSS, gap);
            assert!((cc.rate() / expect - 1.0).abs() < 1e-4, "{per_ack}: {} vs {expect}", cc.rate());
            // ownd = R x RTT_min = 1.2067 MB/s x 40 ms = 48 267 B, the path's BDP in payload.
            let ownd = cc.ownd(&st).unwrap() as f64;
            assert!((ownd / (expect * 0.04) - 1.0).abs() < 1e-3);
            // The rate halves when the ACK spacing doubles: the estimate follows within a few RTTs.
            stream(&mut cc, &mut st, 10 * 40_000_000 / (2 * gap), per_ack * MSS, 2 * gap);
            assert!((cc.rate() / (expect / 2.0) - 1.0).abs() < 1e-3, "{}", cc.rate());
        }
    }

    /// A Jersey whose ABE has converged to 1448 B per 1.2 ms (ownd 48 266 B at 40 ms).
    fn converged() -> (Jersey, CcState) {
        let mut cc = Jersey::new(false);
        let mut st = window(MSS, 100, None).with_flight(100).with_rtt(40 * MS, 40 * MS);
        stream(&mut cc, &mut st, 1000, MSS, 1_200_000);
        (cc, st)
    }

    #[test]
    fn a_congestion_warning_sets_the_window_to_ownd() {
        let (mut cc, mut st) = converged();
        let ownd = cc.ownd(&st).unwrap();
        assert!((48_000..48_500).contains(&ownd), "{ownd}");
        assert_eq!(cc.ssthresh(&st, Congestion::Ecn), ownd);
        // Never raised: a window already below ownd stays.
        st.cwnd = 20 * MSS;
        assert_eq!(cc.ssthresh(&st, Congestion::Ecn), 20 * MSS);
        // SRTT-based ownd with SRTT 60 ms is 1.5 times larger.
        let mut srtt = Jersey { ownd_srtt: true, ..cc.clone() };
        st.cwnd = 100 * MSS;
        st.srtt = Some(60 * MS);
        let o = srtt.ssthresh(&st, Congestion::Ecn) as f64;
        assert!((o / (ownd as f64 * 1.5) - 1.0).abs() < 1e-3, "{o}");
    }

    #[test]
    fn a_loss_is_congestion_only_after_a_warning_within_the_last_rtt() {
        let (mut cc, mut st) = converged();
        let ownd = cc.ownd(&st).unwrap();
        // No warning ever: a random loss, the window is kept.
        assert_eq!(cc.ssthresh(&st, Congestion::Loss), 100 * MSS);
        // A (duplicate) ACK with ECE, then the loss 30 ms later (< SRTT 40 ms): congestion.
        cc.on_ack_received(&st, &Ack { acked: 0, ece: true, ..Ack::default() });
        st.now += 30 * MS;
        assert_eq!(cc.ssthresh(&st, Congestion::Loss), ownd);
        // 50 ms after the warning: random again.
        st.now += 20 * MS;
        assert_eq!(cc.ssthresh(&st, Congestion::Loss), 100 * MSS);
        // A timeout always falls back to ownd.
        assert_eq!(cc.ssthresh(&st, Congestion::Timeout), ownd);
    }

    #[test]
    fn without_an_estimate_reductions_are_renos() {
        let mut cc = Jersey::new(false);
        let mut st = window(MSS, 40, None).with_flight(40).with_rtt(40 * MS, 40 * MS);
        st.flight_size = 30 * MSS;
        assert_eq!(cc.ssthresh(&st, Congestion::Ecn), 15 * MSS);
        assert_eq!(cc.ssthresh(&st, Congestion::Timeout), 15 * MSS);
        st.min_rtt = None;
        cc.rate = 1e6;
        assert_eq!(cc.ssthresh(&st, Congestion::Ecn), 15 * MSS);
        assert!(cc.needs().ecn && !cc.needs().loss_notice);
    }
}
