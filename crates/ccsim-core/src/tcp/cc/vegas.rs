//! TCP Vegas: Brakmo & Peterson, "TCP Vegas: End to End Congestion Avoidance on a Global
//! Internet", IEEE JSAC 13(8), 1995; reference implementations Linux `net/ipv4/tcp_vegas.c` and
//! ns-3 `tcp-vegas.cc`.
//!
//! State, named as in Linux: `baseRTT` (minimum RTT over the connection), `minRTT` and `cntRTT`
//! (minimum and number of RTT samples in the current round), `beg_snd_nxt` (SND.NXT when the
//! round began; the round ends when SND.UNA passes it).
//!
//! Rules:
//! - Every RTT sample lowers `baseRTT` and the round's `minRTT` and counts in `cntRTT`.
//! - Once per round trip, on the first ACK beyond `beg_snd_nxt` (everything sent before the
//!   round began is acknowledged and the ACK passes the mark, Linux `after(ack, beg_snd_nxt)`),
//!   `beg_snd_nxt = SND.NXT` and, with more than two samples in the round (fewer mean delayed
//!   ACKs only, Linux's rule; Reno is used for that ACK instead), `RTT = minRTT` (the minimum
//!   filters delayed-ACK noise, Linux) and
//!   `diff = cwnd * (1 - baseRTT / RTT)` packets, i.e. `(Expected - Actual) * baseRTT` with
//!   `Expected = cwnd / baseRTT` and `Actual = cwnd / RTT` (the paper's and ns-3's form; Linux
//!   computes `cwnd * (RTT - baseRTT) / baseRTT`, which is larger by the factor `RTT / baseRTT`
//!   and diverges from it at large queueing delay). In a single-bottleneck steady state `diff`
//!   is the flow's own backlog in the bottleneck queue.
//!   - Slow start and `diff > gamma`: leave slow start with `cwnd = min(cwnd, target + 1)`,
//!     `target = floor(cwnd - diff) = floor(cwnd * baseRTT / RTT)` (Linux: the window that
//!     matches the actual rate, plus one for the truncation), `ssthresh = min(ssthresh, cwnd)`.
//!   - Slow start otherwise: Reno's exponential growth, but only every other round trip (the
//!     paper: the window is held for one round so that the next comparison sees a settled
//!     rate). `paper_slow_start = false` grows every round trip as Linux and ns-3 do.
//!   - Congestion avoidance: `diff > beta` -> `cwnd - 1` and `ssthresh = min(ssthresh, cwnd)`;
//!     `diff < alpha` -> `cwnd + 1`; otherwise unchanged. Nothing changes between round ends.
//!   - `cwnd >= 2` segments (Linux).
//! - Loss, ECN-Echo and timeout: Reno underneath (the default RFC 5681 ssthresh and the
//!   sender's recovery), as Linux (`tcp_reno_ssthresh`). While the sender recovers, Reno's
//!   growth applies (Linux turns Vegas off outside the Open state); when recovery ends, and
//!   after an ECN reduction, a fresh round starts with no samples (Linux `vegas_enable`), so the
//!   first decision uses only post-reduction samples.
//!
//! Deliberate choices:
//! - Units: `alpha`, `beta`, `gamma` are packets (MSS); `cwnd` is bytes and is converted to
//!   packets as a real number, so windows that are not a whole number of segments (after a
//!   halving) are handled without rounding; increases and decreases are one MSS.
//! - ns-3 lowers ssthresh to `cwnd - 1` on loss and raises it to `3/4 cwnd` at every
//!   adjustment; Linux also applies `tcp_current_ssthresh` there. Neither changes which branch a
//!   later decision takes, so they are left out.
//! - Not modelled: the paper's fine-grained retransmission checks (loss recovery stays in the
//!   sender, as in Linux) and Linux's re-initialisation after an idle period (there is no idle
//!   hook; bulk senders are never idle).
//! - Linux adds 1 us to every sample so that it is never 0; samples here are in ns and
//!   divisions use at least 1 ns.
//!
//! [`VegasCore`] holds the machinery (rounds, filters, slow start, the once-per-RTT rule on a
//! backlog estimate) so that CA-ARTT (`ca_artt.rs`) differs from Vegas only in its estimate.

use super::{reno_increase, Ack, CcModel, CcState, Congestion, CongestionControl, VarSpec, VarUnit};
use crate::params::{ParamKind, ParamSpec, ParamValue, Params};
use crate::registry::Randomness;
use crate::sim::time::{secs, Time};

/// Declared parameters (packets; defaults of Linux `tcp_vegas.c` and ns-3).
pub static PARAMS: &[ParamSpec] = &[
    ParamSpec::new("alpha", ParamKind::Float, Some(ParamValue::Float(2.0)), "lower bound of the backlog in packets: below it cwnd grows by 1 per RTT (Linux/ns-3: 2; the paper also used 1)")
        .range(0.0, 1e6),
    ParamSpec::new("beta", ParamKind::Float, Some(ParamValue::Float(4.0)), "upper bound of the backlog in packets: above it cwnd shrinks by 1 per RTT (Linux/ns-3: 4; the paper also used 3)")
        .range(0.0, 1e6),
    ParamSpec::new("gamma", ParamKind::Float, Some(ParamValue::Float(1.0)), "backlog in packets above which slow start ends (Linux/ns-3: 1)")
        .range(0.0, 1e6),
    ParamSpec::new("paper_slow_start", ParamKind::Bool, Some(ParamValue::Bool(true)), "slow start doubles cwnd every other RTT (Brakmo & Peterson); false: every RTT (Linux, ns-3)"),
];

/// Registration.
pub const MODEL: CcModel = CcModel {
    name: "vegas",
    doc: "TCP Vegas, delay-based: keeps alpha..beta packets queued (Brakmo & Peterson 1995; Linux tcp_vegas, ns-3)",
    params: PARAMS,
    random: Randomness::Never,
    partner_queues: &[],
    build: |p, _| Box::new(Vegas::new(VegasConfig::from_params(p))),
};

/// Thresholds of the Vegas rules.
#[derive(Clone, Copy, Debug)]
pub struct VegasConfig {
    /// Lower backlog bound (packets).
    pub alpha: f64,
    /// Upper backlog bound (packets).
    pub beta: f64,
    /// Slow-start exit threshold (packets).
    pub gamma: f64,
    /// Grow in slow start every other round trip only.
    pub paper_slow_start: bool,
}

impl VegasConfig {
    /// From validated parameters (the `PARAMS` names).
    pub fn from_params(p: &Params) -> Self {
        VegasConfig {
            alpha: p.float("alpha"),
            beta: p.float("beta"),
            gamma: p.float("gamma"),
            paper_slow_start: p.bool("paper_slow_start"),
        }
    }
}

impl Default for VegasConfig {
    fn default() -> Self {
        VegasConfig { alpha: 2.0, beta: 4.0, gamma: 1.0, paper_slow_start: true }
    }
}

/// What the Vegas rule did at a round end (for tests and traces).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Decision {
    /// Slow start continues.
    SlowStart,
    /// Slow start ended (`diff > gamma`).
    ExitSlowStart,
    /// `diff < alpha`: one more segment.
    Increase,
    /// `diff > beta`: one segment less.
    Decrease,
    /// Between alpha and beta.
    Hold,
}

/// Rounds, RTT filters, slow start and the once-per-RTT rule on a backlog estimate.
#[derive(Clone, Debug)]
pub struct VegasCore {
    cfg: VegasConfig,
    /// Minimum RTT over the connection.
    base_rtt: Option<Time>,
    /// Minimum RTT of the current round (`Time::MAX` when none).
    min_rtt: Time,
    /// RTT samples in the current round.
    cnt_rtt: u32,
    /// SND.NXT when the round began; the round ends when SND.UNA passes it.
    beg_snd_nxt: u64,
    /// Slow start may grow during the current round.
    ss_grow: bool,
    /// Reno's byte counter (rounds with too few samples, recovery).
    bytes_acked: u64,
    /// Backlog estimate and decision of the last round end, if any.
    last: Option<(f64, Decision)>,
}

impl VegasCore {
    /// Fresh state.
    pub fn new(cfg: VegasConfig) -> Self {
        VegasCore {
            cfg,
            base_rtt: None,
            min_rtt: Time::MAX,
            cnt_rtt: 0,
            beg_snd_nxt: 0,
            ss_grow: true,
            bytes_acked: 0,
            last: None,
        }
    }

    /// Minimum RTT over the connection.
    pub fn base_rtt(&self) -> Option<Time> {
        self.base_rtt
    }

    /// Backlog estimate (packets) and decision of the last round end.
    pub fn last_decision(&self) -> Option<(f64, Decision)> {
        self.last
    }

    /// An RTT sample.
    pub fn on_rtt_sample(&mut self, rtt: Time) {
        let rtt = rtt.max(1);
        self.base_rtt = Some(self.base_rtt.map_or(rtt, |b| b.min(rtt)));
        self.min_rtt = self.min_rtt.min(rtt);
        self.cnt_rtt = self.cnt_rtt.saturating_add(1);
    }

    /// Start a fresh round with no samples (Linux `vegas_enable`).
    pub fn restart(&mut self, st: &CcState) {
        self.beg_snd_nxt = st.snd_nxt;
        self.cnt_rtt = 0;
        self.min_rtt = Time::MAX;
    }

    /// New data acknowledged outside fast recovery. At a round end with enough samples,
    /// `backlog(st, rtt, base_rtt)` gives the backlog estimate in packets from the round's
    /// minimum RTT and the connection's; the Vegas rules act on it.
    pub fn on_ack(&mut self, st: &mut CcState, ack: &Ack, backlog: impl FnOnce(&CcState, Time, Time) -> f64) {
        if st.in_recovery {
            // Recovery after a timeout: Reno until it ends (Linux: Vegas off outside Open).
            reno_increase(st, ack.acked, &mut self.bytes_acked);
            return;
        }
        if st.snd_una <= self.beg_snd_nxt {
            if st.in_slow_start() && self.ss_grow {
                slow_start(st, ack.acked);
            }
            return;
        }
        // Round end: this ACK passed the mark, so it acknowledges data sent after the round
        // began (Linux `after(ack, beg_snd_nxt)`); the round is one window long.
        self.beg_snd_nxt = st.snd_nxt;
        self.ss_grow = !self.cfg.paper_slow_start || !self.ss_grow;
        match self.base_rtt {
            Some(base) if self.cnt_rtt > 2 => {
                let n = backlog(st, self.min_rtt, base);
                // A non-finite estimate (only from a forecast gone wild) carries no information.
                let n = if n.is_finite() { n } else { 0.0 };
                let d = self.decide(st, n, ack.acked);
                self.last = Some((n, d));
            }
            _ => reno_increase(st, ack.acked, &mut self.bytes_acked),
        }
        self.cnt_rtt = 0;
        self.min_rtt = Time::MAX;
    }

    /// The once-per-RTT rules on a backlog estimate `n` (packets).
    fn decide(&mut self, st: &mut CcState, n: f64, acked: u64) -> Decision {
        let mss = st.mss as u64;
        let decision = if st.in_slow_start() {
            if n > self.cfg.gamma {
                let target = (st.cwnd as f64 / mss as f64 - n).max(0.0).floor() as u64;
                st.cwnd = st.cwnd.min(target.saturating_add(1).saturating_mul(mss));
                Decision::ExitSlowStart
            } else {
                if self.ss_grow {
                    slow_start(st, acked);
                }
                Decision::SlowStart
            }
        } else if n > self.cfg.beta {
            st.cwnd = st.cwnd.saturating_sub(mss);
            Decision::Decrease
        } else if n < self.cfg.alpha {
            st.cwnd += mss;
            Decision::Increase
        } else {
            Decision::Hold
        };
        st.cwnd = st.cwnd.max(2 * mss);
        if matches!(decision, Decision::ExitSlowStart | Decision::Decrease) {
            st.ssthresh = st.ssthresh.min(st.cwnd);
        }
        debug_assert!(st.cwnd >= 2 * mss);
        decision
    }
}

/// Reno slow start: the bytes acknowledged, at most 2 SMSS per ACK (RFC 3465, L = 2), not
/// beyond ssthresh.
pub(crate) fn slow_start(st: &mut CcState, acked: u64) {
    let grow = acked.min(2 * st.mss as u64).min(st.ssthresh.saturating_sub(st.cwnd));
    st.cwnd += grow;
}

/// Vegas's backlog estimate: `cwnd * (1 - baseRTT / RTT)` packets.
pub fn vegas_diff(cwnd_pkts: f64, rtt_s: f64, base_s: f64) -> f64 {
    cwnd_pkts * (1.0 - base_s / rtt_s)
}

/// TCP Vegas.
#[derive(Clone, Debug)]
pub struct Vegas {
    pub(crate) core: VegasCore,
}

impl Vegas {
    /// With the given thresholds.
    pub fn new(cfg: VegasConfig) -> Self {
        Vegas { core: VegasCore::new(cfg) }
    }

    /// The shared machinery, for inspection.
    pub fn core(&self) -> &VegasCore {
        &self.core
    }
}

/// Vegas's traceable variables (also CA-ARTT's).
pub static VARS: &[VarSpec] = &[
    VarSpec::new(
        "base_rtt",
        VarUnit::Seconds,
        "smallest RTT over the connection (Vegas BaseRTT); NaN before the first sample",
    ),
    VarSpec::new(
        "diff",
        VarUnit::Packets,
        "backlog estimate of the last round end, compared with alpha and beta (Vegas diff); NaN before the first",
    ),
];

impl VegasCore {
    /// The value of variable `name` of [`VARS`].
    pub fn var(&self, name: &str) -> Option<f64> {
        Some(match name {
            "base_rtt" => self.base_rtt.map_or(f64::NAN, secs),
            "diff" => self.last.map_or(f64::NAN, |(diff, _)| diff),
            _ => return None,
        })
    }
}

impl CongestionControl for Vegas {
    fn name(&self) -> &'static str {
        "vegas"
    }

    fn vars(&self) -> &'static [VarSpec] {
        VARS
    }

    fn var(&self, name: &str) -> Option<f64> {
        self.core.var(name)
    }

    fn on_ack(&mut self, st: &mut CcState, ack: &Ack) {
        self.core.on_ack(st, ack, |st, rtt, base| vegas_diff(st.cwnd as f64 / st.mss as f64, secs(rtt), secs(base)));
    }

    fn on_rtt_sample(&mut self, _st: &CcState, rtt: Time) {
        self.core.on_rtt_sample(rtt);
    }

    fn ssthresh(&mut self, st: &CcState, _event: Congestion) -> u64 {
        self.core.restart(st);
        (st.flight_size / 2).max(2 * st.mss as u64)
    }

    fn on_recovery_exit(&mut self, st: &mut CcState) {
        self.core.restart(st);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::time::MS;
    use crate::tcp::cc::testkit::{window, Setup, TestSender, MSS};

    /// Default Vegas with a window of `cwnd` segments in flight and threshold `ssthresh`.
    fn vegas(cwnd: u64, ssthresh: u64) -> TestSender<Vegas> {
        vegas_with(VegasConfig::default(), cwnd, ssthresh)
    }

    /// [`vegas`] with `cfg`.
    fn vegas_with(cfg: VegasConfig, cwnd: u64, ssthresh: u64) -> TestSender<Vegas> {
        TestSender::new(Vegas::new(cfg), window(MSS, cwnd, ssthresh).with_flight(cwnd))
    }

    /// Feed `n` samples of `rtt`, then an ACK that passes the round mark with no sample of its
    /// own: exactly one round end.
    fn end_round(s: &mut TestSender<Vegas>, n: u32, rtt: Time) {
        for _ in 0..n {
            s.cc.on_rtt_sample(&s.st, rtt);
        }
        s.st.snd_una = s.st.snd_una.max(s.cc.core.beg_snd_nxt + MSS);
        s.st.snd_nxt = s.st.snd_nxt.max(s.st.snd_una);
        s.cc.on_ack(&mut s.st, &Ack { acked: MSS, ..Ack::default() });
    }

    #[test]
    fn window_changes_once_per_round_in_congestion_avoidance() {
        // cwnd 20 in avoidance, no queueing: diff = 0 < alpha -> +1 per round, on the ACK that
        // ends the round (the first of each window) and on no other.
        let mut s = vegas(20, 10);
        s.round(|_| 100 * MS); // fills the first round with samples
        for r in 0..4 {
            let before = s.st.cwnd as f64 / MSS as f64;
            let trace = s.round(|_| 100 * MS);
            assert_eq!(trace[0], before + 1.0, "round {r}: {trace:?}");
            assert!(trace.iter().all(|&c| c == trace[0]), "round {r}: {trace:?}");
            assert_eq!(s.cc.core.last_decision().map(|d| d.1), Some(Decision::Increase));
        }
    }

    #[test]
    fn diff_against_alpha_and_beta_decides_the_step() {
        // base 100 ms, cwnd 20 = ssthresh (avoidance). Round minimum 125 ms: diff = 20 (1 - 100/125) = 4, within
        // [alpha, beta] = [2, 4]: hold. 130 ms: diff = 4.615 > 4: decrease. 105 ms:
        // diff = 0.952 < 2: increase. Only the round's minimum counts: the other samples are
        // 40 ms larger (delayed ACKs).
        for (rtt_ms, expect, delta) in
            [(125, Decision::Hold, 0i64), (130, Decision::Decrease, -1), (105, Decision::Increase, 1)]
        {
            let mut s = vegas(20, 20);
            s.cc.on_rtt_sample(&s.st, 100 * MS); // baseRTT
            s.round(|k| if k % 3 == 1 { rtt_ms * MS } else { (rtt_ms + 40) * MS });
            assert_eq!(s.st.cwnd, 20 * MSS, "the first round end had too few samples");
            // The first ACK of the next round ends the round.
            end_round(&mut s, 0, (rtt_ms + 40) * MS);
            let (n, d) = s.cc.core.last_decision().unwrap();
            let want = 20.0 * (1.0 - 100.0 / rtt_ms as f64);
            assert!((n - want).abs() < 1e-9, "rtt {rtt_ms}: n {n} want {want}");
            assert_eq!(d, expect, "rtt {rtt_ms}");
            assert_eq!(s.st.cwnd as i64, 20 * MSS as i64 + delta * MSS as i64, "rtt {rtt_ms}");
            if delta < 0 {
                assert_eq!(s.st.ssthresh, s.st.cwnd, "a decrease lowers ssthresh to cwnd");
            } else {
                assert_eq!(s.st.ssthresh, 20 * MSS);
            }
        }
    }

    #[test]
    fn rounds_with_two_samples_or_fewer_fall_back_to_reno() {
        // base 100 ms, cwnd 8 in avoidance, round minimum 300 ms: diff = 5.3 > beta. With two
        // samples (one delayed ACK per segment pair of a tiny window) Vegas does not act: Reno
        // credits the acknowledged bytes instead.
        let mut s = vegas(8, 4);
        s.cc.on_rtt_sample(&s.st, 100 * MS);
        s.cc.core.restart(&s.st);
        end_round(&mut s, 1, 300 * MS); // 2 samples with the base one
        assert_eq!(s.cc.core.last_decision(), None);
        assert_eq!((s.st.cwnd, s.cc.core.bytes_acked), (8 * MSS, MSS));
        end_round(&mut s, 2, 300 * MS);
        assert_eq!(s.cc.core.last_decision(), None);
        end_round(&mut s, 3, 300 * MS);
        let (n, d) = s.cc.core.last_decision().unwrap();
        assert!((n - 8.0 * (1.0 - 1.0 / 3.0)).abs() < 1e-9);
        assert_eq!(d, Decision::Decrease);
        assert_eq!(s.st.cwnd, 7 * MSS);
    }

    #[test]
    fn slow_start_doubles_every_other_round_and_exits_when_diff_exceeds_gamma() {
        let mut s = vegas(4, 1_000_000);
        // By hand, one ACK per segment, no queueing. RTT 1: its first ACK passes the initial
        // mark with a single sample: one Reno slow-start step (4 -> 5), and the next round is
        // a hold round. RTT 2: its first ACK ends the hold round (Vegas: diff 0 <= gamma,
        // slow start goes on) and opens a growth round: each of its 5 ACKs adds one segment
        // (5 -> 10). RTT 3 holds; RTT 4 doubles to 20; RTT 5 holds; RTT 6 -> 40.
        let mut ends = Vec::new();
        for _ in 0..6 {
            s.round(|_| 100 * MS);
            ends.push(s.st.cwnd / MSS);
        }
        assert_eq!(ends, vec![5, 10, 10, 20, 20, 40]);
        // Queueing appears: 110 ms on a 100 ms base. RTT 7's first ACK closes RTT 6
        // (samples of 100 ms, diff 0); RTT 8's first ACK closes RTT 7: diff = 40 (1 -
        // 100/110) = 3.64 > gamma: cwnd = min(40, floor(40 - 3.64) + 1) = 37, slow start ends.
        s.round(|_| 110 * MS);
        assert_eq!(s.st.cwnd, 40 * MSS);
        s.round(|_| 110 * MS);
        let (n, d) = s.cc.core.last_decision().unwrap();
        assert_eq!(d, Decision::ExitSlowStart, "n = {n}");
        assert_eq!(s.st.cwnd, 37 * MSS);
        assert_eq!(s.st.ssthresh, 37 * MSS);
        assert!(!s.st.in_slow_start());
    }

    #[test]
    fn linux_slow_start_grows_every_round() {
        let mut s = vegas_with(VegasConfig { paper_slow_start: false, ..VegasConfig::default() }, 4, 1_000_000);
        let mut ends = Vec::new();
        for _ in 0..3 {
            s.round(|_| 100 * MS);
            ends.push(s.st.cwnd / MSS);
        }
        // Every ACK adds one segment: 4 -> 8 -> 16 -> 32.
        assert_eq!(ends, vec![8, 16, 32]);
    }

    #[test]
    fn the_window_never_falls_below_two_segments() {
        // beta 1: cwnd 2 with a 500 ms minimum on a 10 ms base gives diff 1.96 > beta.
        let mut s = vegas_with(VegasConfig { alpha: 0.5, beta: 1.0, ..VegasConfig::default() }, 2, 2);
        s.cc.on_rtt_sample(&s.st, 10 * MS);
        s.cc.core.restart(&s.st);
        end_round(&mut s, 3, 500 * MS);
        assert_eq!(s.cc.core.last_decision().unwrap().1, Decision::Decrease);
        assert_eq!(s.st.cwnd, 2 * MSS);
    }

    #[test]
    fn loss_halves_the_flight_and_restarts_the_round() {
        let mut s = vegas(20, 10);
        s.round(|_| 100 * MS);
        s.st.flight_size = 20 * MSS;
        assert_eq!(s.cc.ssthresh(&s.st, Congestion::Loss), 10 * MSS);
        // Samples of the old round are gone: the next round end needs three new ones.
        assert_eq!(s.cc.core.cnt_rtt, 0);
        assert_eq!(s.cc.core.beg_snd_nxt, s.st.snd_nxt);
    }

    #[test]
    fn timeout_recovery_grows_like_reno_until_it_ends() {
        let mut s = vegas(1, 5);
        s.st.in_recovery = true;
        s.cc.on_rtt_sample(&s.st, 100 * MS);
        // Slow start by Reno's rule on every ACK, no Vegas hold rounds.
        for k in 1..=3 {
            s.st.snd_una += MSS;
            s.cc.on_ack(&mut s.st, &Ack { acked: MSS, ..Ack::default() });
            assert_eq!(s.st.cwnd, (1 + k) * MSS);
        }
        assert_eq!(s.cc.core.last_decision(), None);
    }
}
