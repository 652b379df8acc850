//! DCTCP: RFC 8257 (Bensley et al. 2017) §3.2-3.3 and §4; Alizadeh et al., "Data Center TCP
//! (DCTCP)", SIGCOMM 2010; reference implementations Linux `net/ipv4/tcp_dctcp.c` and ns-3
//! `tcp-dctcp.cc`. The switch side is the `threshold`
//! queue (`qdisc/threshold.rs`).
//!
//! Sender (RFC 8257 §3.3), state named as in the RFC:
//! - every ACK adds its newly acknowledged bytes to `bytes_acked`, and to `bytes_marked` if it
//!   carries ECE;
//! - once SND.UNA passes `window_end` (one window of data, about one RTT), the marked fraction
//!   `M = bytes_marked / bytes_acked` updates `alpha = (1 - g) alpha + g M`, the counters
//!   restart and `window_end = SND.NXT`;
//! - on ECE, at most once per window (the sender's RFC 3168 rule), `cwnd = cwnd (1 - alpha/2)`,
//!   returned as ssthresh (the sender then sets cwnd = ssthresh), at least 2 segments (Linux);
//! - loss and timeout: as Reno (RFC 8257 §3.5 "in the same way as conventional TCP"), i.e.
//!   RFC 5681 eq. (4) from FlightSize; growth: Reno slow start and congestion avoidance.
//!
//! Receiver: RFC 8257 §3.2 ACK generation ([`EcnFeedback::Dctcp`], `tcp/receiver.rs`): ECE
//! states exactly whether the segments an ACK covers were CE-marked, with an immediate ACK
//! when the CE state changes.
//!
//! Choices:
//! - ECN: `cc = "dctcp"` turns ECN on for the flow (as Linux, whose DCTCP carries
//!   `TCP_CONG_NEEDS_ECN` and negotiates ECN whatever the sysctl says); a flow that sets
//!   `ecn = false` explicitly is rejected. Without ECN there is no fallback to Reno (Linux's
//!   `dctcp-reno`): no negotiation is simulated.
//! - Initial `alpha = 1` (Linux `dctcp_alpha_on_init` = 1024/1024, ns-3 `DctcpAlphaOnInit`):
//!   the first reductions halve, as Reno's would, until the estimate has converged. RFC 8257
//!   leaves the initial value to implementations.
//! - The first window ends at the first ACK (`window_end` starts at 0, as Linux's `next_seq`
//!   starts at the initial SND.NXT).
//! - `g = 1/16`: RFC 8257 §3.3 only bounds it (0 < g < 1); the SIGCOMM paper's experiments,
//!   Linux (`dctcp_shift_g = 4`) and ns-3 (`DctcpShiftG` 0.0625) use 1/16.

use super::{
    reno_increase, Ack, CcModel, CcState, Congestion, CongestionControl, EcnFeedback, TransportNeeds, VarSpec, VarUnit,
};
use crate::params::{ParamKind, ParamSpec, ParamValue, Params};
use crate::registry::Randomness;

/// Declared parameters.
pub static PARAMS: &[ParamSpec] = &[
    ParamSpec::new(
        "g",
        ParamKind::Float,
        Some(ParamValue::Float(1.0 / 16.0)),
        "EWMA gain of alpha (Alizadeh et al. 2010, Linux dctcp_shift_g = 4, ns-3: 1/16)",
    )
    .range(1e-6, 1.0),
    ParamSpec::new(
        "alpha_init",
        ParamKind::Prob,
        Some(ParamValue::Float(1.0)),
        "initial alpha (Linux dctcp_alpha_on_init, ns-3: 1)",
    ),
];

/// Registration.
pub const MODEL: CcModel = CcModel {
    name: "dctcp",
    doc: "DCTCP (RFC 8257): cwnd (1 - alpha/2) once per window from the EWMA of marked bytes; needs ECN (implied); receiver sends RFC 8257 §3.2 ACKs",
    params: PARAMS,
    random: Randomness::Never,
    partner_queues: &["threshold"],
    build: |p, _| Box::new(Dctcp::from_params(p)),
};

/// DCTCP.
#[derive(Clone, Debug)]
pub struct Dctcp {
    /// EWMA gain.
    g: f64,
    /// Estimated fraction of marked bytes (`DCTCP.Alpha`).
    alpha: f64,
    /// SND.NXT at the start of the observation window (`Window_End`).
    window_end: u64,
    /// Bytes acknowledged in the observation window (`Bytes_Acked`).
    bytes_acked: u64,
    /// Of which acknowledged by ACKs with ECE (`Bytes_Marked`).
    bytes_marked: u64,
    /// Reno byte counting for congestion avoidance.
    ca_bytes_acked: u64,
}

/// DCTCP's traceable variables (also E-DCTCP's).
pub static VARS: &[VarSpec] = &[VarSpec::new(
    "alpha",
    VarUnit::Fraction,
    "estimated fraction of bytes CE-marked, updated once per window of data (RFC 8257 §3.3 DCTCP.Alpha)",
)];

impl Dctcp {
    /// With gain `g` and initial `alpha`.
    pub fn new(g: f64, alpha_init: f64) -> Self {
        Dctcp { g, alpha: alpha_init, window_end: 0, bytes_acked: 0, bytes_marked: 0, ca_bytes_acked: 0 }
    }

    /// From validated parameters.
    pub fn from_params(p: &Params) -> Self {
        Self::new(p.float("g"), p.float("alpha_init"))
    }

    /// The current estimate of the marked fraction.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str {
        "dctcp"
    }

    fn on_ack(&mut self, st: &mut CcState, ack: &Ack) {
        reno_increase(st, ack.acked, &mut self.ca_bytes_acked);
    }

    fn on_ack_received(&mut self, st: &CcState, ack: &Ack) {
        // `st` is the state before this ACK: SND.UNA after it is `snd_una + acked`.
        self.bytes_acked += ack.acked;
        if ack.ece {
            self.bytes_marked += ack.acked;
        }
        let snd_una = st.snd_una + ack.acked;
        if snd_una <= self.window_end {
            return;
        }
        if self.bytes_acked > 0 {
            let m = self.bytes_marked as f64 / self.bytes_acked as f64;
            self.alpha = (1.0 - self.g) * self.alpha + self.g * m;
        }
        debug_assert!((0.0..=1.0).contains(&self.alpha), "alpha {}", self.alpha);
        self.window_end = st.snd_nxt;
        self.bytes_acked = 0;
        self.bytes_marked = 0;
    }

    fn ssthresh(&mut self, st: &CcState, event: Congestion) -> u64 {
        let min = 2 * st.mss as u64;
        match event {
            Congestion::Ecn => ((st.cwnd as f64 * (1.0 - self.alpha / 2.0)) as u64).max(min),
            Congestion::Loss | Congestion::Timeout => (st.flight_size / 2).max(min),
        }
    }

    fn needs(&self) -> TransportNeeds {
        TransportNeeds { ecn: true, ecn_feedback: EcnFeedback::Dctcp, ..TransportNeeds::default() }
    }

    fn vars(&self) -> &'static [VarSpec] {
        VARS
    }

    fn var(&self, name: &str) -> Option<f64> {
        (name == "alpha").then_some(self.alpha)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::testkit::{window, MSS};

    /// Feed `n` one-segment ACKs, the k-th (counting from 1 over the whole stream, `k0` so
    /// far) carrying ECE when `marked(k)`. The sender keeps `inflight` segments outstanding:
    /// SND.NXT = SND.UNA + inflight before each ACK.
    fn feed(cc: &mut Dctcp, st: &mut CcState, k0: &mut u64, n: u64, inflight: u64, marked: impl Fn(u64) -> bool) {
        for _ in 0..n {
            *k0 += 1;
            st.snd_nxt = st.snd_una + inflight * MSS;
            cc.on_ack_received(st, &Ack { acked: MSS, ece: marked(*k0), ..Ack::default() });
            st.snd_una += MSS;
        }
    }

    #[test]
    fn alpha_follows_the_ewma_of_the_marked_fraction_window_by_window() {
        // Every 4th ACK marked. With 8 segments outstanding before each ACK, a window closes
        // every 8 ACKs and holds exactly 2 marked ones: M = 1/4. The first window is the first
        // ACK alone (Window_End starts at 0), unmarked: alpha = 15/16 * 1 + 0 = 0.9375.
        let mut cc = Dctcp::new(1.0 / 16.0, 1.0);
        let mut st = window(MSS, 8, None);
        let mut k = 0;
        let every_4th = |k: u64| k.is_multiple_of(4);
        feed(&mut cc, &mut st, &mut k, 1, 8, every_4th);
        assert_eq!(cc.alpha(), 0.9375);
        // Hand computation of the next step: 15/16 * 0.9375 + 1/16 * 0.25 = 0.89453125.
        feed(&mut cc, &mut st, &mut k, 8, 8, every_4th);
        assert!((cc.alpha() - 0.894_531_25).abs() < 1e-12, "{}", cc.alpha());
        // Closed form after n windows of M = 1/4: 1/4 + (alpha_1 - 1/4) (15/16)^n.
        for n in 2..=120 {
            feed(&mut cc, &mut st, &mut k, 8, 8, every_4th);
            let expect = 0.25 + (0.9375 - 0.25) * (15.0f64 / 16.0).powi(n);
            assert!((cc.alpha() - expect).abs() < 1e-9, "window {n}: {} vs {expect}", cc.alpha());
        }
        assert!((cc.alpha() - 0.25).abs() < 0.001);
        // Mid-window ACKs do not move alpha.
        let before = cc.alpha();
        feed(&mut cc, &mut st, &mut k, 7, 8, |_| true);
        assert_eq!(cc.alpha(), before);
    }

    #[test]
    fn alpha_converges_to_the_marked_fraction_when_windows_do_not_align_with_marks() {
        // 10 segments outstanding: windows of 11 ACKs hold 2 or 3 of the every-4th marks;
        // over many windows alpha settles near 1/4 (within the per-window spread times g).
        for (every, fraction) in [(4u64, 0.25), (2, 0.5), (10, 0.1)] {
            let mut cc = Dctcp::new(1.0 / 16.0, 1.0);
            let mut st = window(MSS, 10, None);
            let mut k = 0;
            feed(&mut cc, &mut st, &mut k, 11 * 300, 10, |k| k % every == 0);
            assert!((cc.alpha() - fraction).abs() < 0.03, "1 in {every}: alpha {}", cc.alpha());
        }
        // Nothing marked: alpha decays towards 0; everything marked: stays at 1.
        let mut cc = Dctcp::new(1.0 / 16.0, 1.0);
        let mut st = window(MSS, 10, None);
        let mut k = 0;
        feed(&mut cc, &mut st, &mut k, 11 * 200, 10, |_| true);
        assert_eq!(cc.alpha(), 1.0);
        feed(&mut cc, &mut st, &mut k, 11 * 200, 10, |_| false);
        assert!(cc.alpha() < 1e-4);
    }

    #[test]
    fn marks_count_in_bytes_not_in_acks() {
        // g = 1/2, alpha from 0. A window of a 3-segment ECE ACK and a 1-segment unmarked one:
        // M = 3/4, although only one ACK in two was marked.
        let mut cc = Dctcp::new(0.5, 0.0);
        let mut st = window(MSS, 10, None);
        st.snd_nxt = 4 * MSS;
        // First ACK closes the initial window (Window_End 0): M = 1, alpha = 1/2.
        cc.on_ack_received(&st, &Ack { acked: 3 * MSS, ece: true, ..Ack::default() });
        assert_eq!(cc.alpha(), 0.5);
        st.snd_una = 3 * MSS;
        // A duplicate ACK with ECE acknowledges no bytes; the next reaches SND.UNA = 4000 =
        // Window_End, which does not pass it yet.
        cc.on_ack_received(&st, &Ack { acked: 0, ece: true, ..Ack::default() });
        cc.on_ack_received(&st, &Ack { acked: MSS, ece: false, ..Ack::default() });
        assert_eq!(cc.alpha(), 0.5);
        st.snd_una = 4 * MSS;
        st.snd_nxt = 8 * MSS;
        cc.on_ack_received(&st, &Ack { acked: 3 * MSS, ece: true, ..Ack::default() });
        // Window bytes 1000 + 3000, marked 3000: alpha = 1/2 * 1/2 + 1/2 * 3/4.
        assert_eq!(cc.alpha(), 0.625);
    }

    #[test]
    fn the_traced_alpha_is_the_estimate() {
        // The windows of the test above, read as the traces read them.
        let mut cc = Dctcp::new(0.5, 0.0);
        let alpha = |cc: &Dctcp| cc.var("alpha").unwrap();
        assert_eq!(cc.vars().iter().map(|v| v.name).collect::<Vec<_>>(), ["alpha"]);
        let mut st = window(MSS, 10, None);
        st.snd_nxt = 4 * MSS;
        cc.on_ack_received(&st, &Ack { acked: 3 * MSS, ece: true, ..Ack::default() });
        assert_eq!(alpha(&cc), 0.5);
        st.snd_una = 3 * MSS;
        cc.on_ack_received(&st, &Ack { acked: MSS, ece: false, ..Ack::default() });
        assert_eq!(alpha(&cc), 0.5, "mid-window");
        st.snd_una = 4 * MSS;
        st.snd_nxt = 8 * MSS;
        cc.on_ack_received(&st, &Ack { acked: 3 * MSS, ece: true, ..Ack::default() });
        assert_eq!(alpha(&cc), 0.625);
        assert_eq!(cc.var("cwnd"), None, "the sender's variables are the sender's");
    }

    #[test]
    fn ecn_reduction_scales_the_window_by_one_minus_half_alpha() {
        let mut st = window(MSS, 100, None);
        st.flight_size = 100 * MSS;
        let mut cc = Dctcp::new(1.0 / 16.0, 0.25);
        assert_eq!(cc.ssthresh(&st, Congestion::Ecn), 87_500);
        let mut cc = Dctcp::new(1.0 / 16.0, 1.0);
        assert_eq!(cc.ssthresh(&st, Congestion::Ecn), 50_000);
        // Never below two segments.
        let mut small = window(MSS, 2, None);
        small.cwnd = 2500;
        assert_eq!(cc.ssthresh(&small, Congestion::Ecn), 2000);
        // Loss and timeout: Reno's half of the flight, whatever alpha.
        let mut cc = Dctcp::new(1.0 / 16.0, 0.1);
        st.flight_size = 60 * MSS;
        assert_eq!(cc.ssthresh(&st, Congestion::Loss), 30_000);
        assert_eq!(cc.ssthresh(&st, Congestion::Timeout), 30_000);
    }

    #[test]
    fn needs_ecn_and_the_dctcp_receiver() {
        let n = Dctcp::new(0.0625, 1.0).needs();
        assert!(n.ecn && !n.loss_notice);
        assert_eq!(n.ecn_feedback, EcnFeedback::Dctcp);
    }
}
