//! TCP Veno: Fu & Liew, "TCP Veno: TCP Enhancement for Transmission over Wireless Access
//! Networks", IEEE JSAC 21(2), 2003; reference implementations Linux `net/ipv4/tcp_veno.c` and
//! ns-3 `tcp-veno.cc`.
//!
//! Veno is Reno whose window rules depend on Vegas's backlog estimate
//! `N = Actual * (RTT - BaseRTT) = cwnd * (RTT - BaseRTT) / RTT` packets:
//! - slow start: Reno's;
//! - congestion avoidance: `N < beta` (the path is not congested) -> Reno, one segment per
//!   RTT; `N >= beta` -> one segment every other RTT (`inc` toggles each time a window of
//!   bytes has been acknowledged);
//! - loss (fast retransmit): `N < beta` -> the loss is taken as random (wireless),
//!   `ssthresh = cwnd * 4/5`; otherwise congestive, `ssthresh = cwnd / 2`; both at least two
//!   segments (Linux). Recovery then proceeds as Reno in the sender. A timeout uses the same
//!   rule (Linux: one `ssthresh` function), then the sender's slow start from one segment.
//! - `beta = 3` packets (paper, Linux, ns-3).
//!
//! Which RTT: `BaseRTT` is the minimum RTT over the connection (Linux, ns-3; the CA-ARTT
//! paper says Veno resets it on every loss, which neither implementation does). `RTT` is, by
//! default, the minimum RTT sample of the last completed round trip (rounds by SND.UNA passing
//! the SND.NXT recorded at the round's start, at least three samples as in Linux's Vegas
//! machinery), so that delayed ACKs do not inflate it; N is recomputed once per round and the
//! value of the last round classifies a loss. Linux and ns-3 reset their `minRTT` on every
//! ACK, which makes their RTT the latest sample (noisy); N written with SRTT instead
//! lags the queue by several round trips (RFC 6298 gain 1/8). `use_srtt = true` uses
//! the sender's SRTT instead, evaluated on each ACK and at the loss.
//!
//! Deliberate choices:
//! - Before any round with enough samples, N is unknown: growth is Reno's and a loss is taken
//!   as congestive (no evidence of a random loss; Linux starts with N = 0, i.e. random).
//! - An ECN-Echo is congestion by definition: always `cwnd / 2`.
//! - The reductions are of cwnd, as in Linux and the paper (ns-3 uses BytesInFlight).
//! - While the sender recovers after a timeout, Reno's growth applies (Linux turns Veno off
//!   outside the Open state); the round restarts with fresh samples when recovery ends.

use super::{reno_increase, Ack, CcModel, CcState, Congestion, CongestionControl};
use crate::params::{ParamKind, ParamSpec, ParamValue, Params};
use crate::registry::Randomness;
use crate::sim::time::{secs, Time};

/// Declared parameters.
pub static PARAMS: &[ParamSpec] = &[
    ParamSpec::new(
        "beta",
        ParamKind::Float,
        Some(ParamValue::Float(3.0)),
        "backlog in packets at or above which the path counts as congested (paper, Linux, ns-3: 3)",
    )
    .range(0.0, 1e6),
    ParamSpec::new(
        "random_loss_factor",
        ParamKind::Float,
        Some(ParamValue::Float(0.8)),
        "ssthresh = factor * cwnd after a loss taken as random (paper, Linux: 4/5)",
    )
    .range(0.0, 1.0),
    ParamSpec::new(
        "use_srtt",
        ParamKind::Bool,
        Some(ParamValue::Bool(false)),
        "N from the smoothed RTT; false: from the minimum RTT of the last round trip",
    ),
];

/// Registration.
pub const MODEL: CcModel = CcModel {
    name: "veno",
    doc:
        "TCP Veno: Reno that tells random from congestive loss by the Vegas backlog N (Fu & Liew 2003; Linux tcp_veno)",
    params: PARAMS,
    random: Randomness::Never,
    partner_queues: &[],
    build: |p, _| Box::new(Veno::from_params(p)),
};

/// TCP Veno.
#[derive(Clone, Debug)]
pub struct Veno {
    beta: f64,
    random_loss_factor: f64,
    use_srtt: bool,
    /// Minimum RTT over the connection.
    base_rtt: Option<Time>,
    /// Minimum RTT of the current round (`Time::MAX` when none).
    min_rtt: Time,
    /// RTT samples in the current round.
    cnt_rtt: u32,
    /// SND.NXT when the round began; the round ends when SND.UNA passes it.
    beg_snd_nxt: u64,
    /// Minimum RTT of the last completed round with enough samples.
    round_rtt: Option<Time>,
    /// In the congested state, the next window of ACKs may add a segment.
    inc: bool,
    /// Bytes acknowledged towards the next congestion-avoidance step.
    bytes_acked: u64,
}

impl Veno {
    /// With `beta` packets, the random-loss factor and the RTT choice.
    pub fn new(beta: f64, random_loss_factor: f64, use_srtt: bool) -> Self {
        Veno {
            beta,
            random_loss_factor,
            use_srtt,
            base_rtt: None,
            min_rtt: Time::MAX,
            cnt_rtt: 0,
            beg_snd_nxt: 0,
            round_rtt: None,
            inc: true,
            bytes_acked: 0,
        }
    }

    fn from_params(p: &Params) -> Self {
        Veno::new(p.float("beta"), p.float("random_loss_factor"), p.bool("use_srtt"))
    }

    /// The backlog estimate N (packets), if it can be computed.
    pub fn backlog(&self, st: &CcState) -> Option<f64> {
        let base = self.base_rtt?;
        let rtt = if self.use_srtt { st.srtt? } else { self.round_rtt? }.max(1);
        let (rtt, base) = (secs(rtt), secs(base));
        Some(st.cwnd as f64 / st.mss as f64 * (rtt - base) / rtt)
    }

    fn restart_round(&mut self, st: &CcState) {
        self.beg_snd_nxt = st.snd_nxt;
        self.cnt_rtt = 0;
        self.min_rtt = Time::MAX;
    }
}

impl CongestionControl for Veno {
    fn name(&self) -> &'static str {
        "veno"
    }

    fn on_rtt_sample(&mut self, _st: &CcState, rtt: Time) {
        let rtt = rtt.max(1);
        self.base_rtt = Some(self.base_rtt.map_or(rtt, |b| b.min(rtt)));
        self.min_rtt = self.min_rtt.min(rtt);
        self.cnt_rtt = self.cnt_rtt.saturating_add(1);
    }

    fn on_ack(&mut self, st: &mut CcState, ack: &Ack) {
        if st.snd_una > self.beg_snd_nxt {
            if self.cnt_rtt > 2 {
                self.round_rtt = Some(self.min_rtt);
            }
            self.restart_round(st);
        }
        if st.in_recovery || st.in_slow_start() {
            reno_increase(st, ack.acked, &mut self.bytes_acked);
            return;
        }
        self.bytes_acked += ack.acked;
        if self.bytes_acked < st.cwnd {
            return;
        }
        self.bytes_acked -= st.cwnd;
        let congested = self.backlog(st).is_some_and(|n| n >= self.beta);
        if !congested {
            st.cwnd += st.mss as u64;
        } else if self.inc {
            st.cwnd += st.mss as u64;
            self.inc = false;
        } else {
            self.inc = true;
        }
    }

    fn ssthresh(&mut self, st: &CcState, event: Congestion) -> u64 {
        let random = event != Congestion::Ecn && self.backlog(st).is_some_and(|n| n < self.beta);
        let cwnd = st.cwnd as f64;
        let ssthresh = if random { (cwnd * self.random_loss_factor) as u64 } else { st.cwnd / 2 };
        ssthresh.max(2 * st.mss as u64)
    }

    fn on_recovery_exit(&mut self, st: &mut CcState) {
        self.restart_round(st);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::time::MS;
    use crate::tcp::cc::testkit::{window, Setup, TestSender, MSS};

    /// Veno (paper constants) with a window of 40 segments in flight, in avoidance.
    fn veno(srtt_mode: bool) -> TestSender<Veno> {
        TestSender::new(Veno::new(3.0, 0.8, srtt_mode), window(MSS, 40, 20).with_flight(40))
    }

    /// A Veno flow in avoidance at cwnd 40 segments whose rounds see `rtt_ms` on a base of
    /// 100 ms; N = 40 (rtt - 100) / rtt.
    fn measured(rtt_ms: u64) -> TestSender<Veno> {
        let mut s = veno(false);
        s.cc.on_rtt_sample(&s.st, 100 * MS);
        for _ in 0..2 {
            s.round(|_| rtt_ms * MS);
        }
        s.st.cwnd = 40 * MSS;
        s
    }

    #[test]
    fn a_loss_without_backlog_is_random_and_cuts_a_fifth() {
        // 105 ms: N = 40 * 5/105 = 1.9 < 3 -> ssthresh = 0.8 * 40 = 32 segments.
        let TestSender { mut cc, st, .. } = measured(105);
        let n = cc.backlog(&st).unwrap();
        assert!((n - 40.0 * 5.0 / 105.0).abs() < 1e-9, "{n}");
        assert_eq!(cc.ssthresh(&st, Congestion::Loss), 32 * MSS);
        assert_eq!(cc.ssthresh(&st, Congestion::Timeout), 32 * MSS);
    }

    #[test]
    fn a_loss_with_backlog_is_congestive_and_halves() {
        // 110 ms: N = 40 * 10/110 = 3.6 >= 3 -> ssthresh = 20 segments.
        let TestSender { mut cc, st, .. } = measured(110);
        assert!(cc.backlog(&st).unwrap() >= 3.0);
        assert_eq!(cc.ssthresh(&st, Congestion::Loss), 20 * MSS);
        // ECN is congestive whatever N says.
        let TestSender { mut cc, st, .. } = measured(105);
        assert_eq!(cc.ssthresh(&st, Congestion::Ecn), 20 * MSS);
    }

    #[test]
    fn a_loss_before_any_measurement_is_congestive() {
        let TestSender { mut cc, st, .. } = veno(false);
        assert_eq!(cc.backlog(&st), None);
        assert_eq!(cc.ssthresh(&st, Congestion::Loss), 20 * MSS);
        // Small windows keep two segments.
        assert_eq!(cc.ssthresh(&window(MSS, 3, 2), Congestion::Loss), 2 * MSS);
    }

    #[test]
    fn avoidance_adds_a_segment_per_rtt_without_backlog_and_every_other_rtt_with_it() {
        for (rtt_ms, per_two_rounds) in [(102, 2), (120, 1)] {
            let mut s = measured(rtt_ms);
            let mut ends = Vec::new();
            for _ in 0..4 {
                s.round(|_| rtt_ms * MS);
                ends.push(s.cwnd_segs());
            }
            // The window's growth over four round trips: one per round without backlog
            // (N = 0.8), one every other round with it (N = 6.7).
            let grown = ends[3] - 40;
            assert_eq!(grown, 2 * per_two_rounds, "rtt {rtt_ms}: {ends:?}");
        }
    }

    #[test]
    fn srtt_mode_uses_the_smoothed_rtt() {
        let TestSender { mut cc, mut st, .. } = veno(true);
        cc.on_rtt_sample(&st, 100 * MS);
        st.srtt = Some(200 * MS); // N = 40 * 100/200 = 20
        assert_eq!(cc.backlog(&st), Some(20.0));
        assert_eq!(cc.ssthresh(&st, Congestion::Loss), 20 * MSS);
        st.srtt = Some(101 * MS);
        assert_eq!(cc.ssthresh(&st, Congestion::Loss), 32 * MSS);
    }
}
