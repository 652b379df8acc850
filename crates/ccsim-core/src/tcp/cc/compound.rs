//! Compound TCP (CTCP): a Reno loss window plus a scalable delay-based window.
//!
//! Source: draft-sridharan-tcpm-ctcp-02 (Sridharan, Tan, Bansal, Thaler, 2008) and Tan et
//! al., "A Compound TCP Approach for High-Speed and Long Distance Networks", INFOCOM 2006
//! (MSR-TR-2005-86); details the draft
//! leaves open follow the out-of-tree Linux module `tcp_compound.c` (Castellani, Hemminger,
//! Andrew, release 1.3).
//!
//! The send window is `win = cwnd + dwnd` (the sender's `st.cwnd`); the loss window `cwnd`
//! and the delay window `dwnd` are kept here, and `st.cwnd` is set to their sum after every
//! change. The sender also changes `st.cwnd` on its own (recovery exit, the RTO); such an
//! outside reduction is shared between the two parts in proportion, as the Linux module
//! does, and an outside increase is credited to `cwnd`.
//!
//! - Loss window: Reno. Slow start as RFC 5681 with RFC 3465 byte counting (L = 2) and
//!   `dwnd` untouched (0 in the initial slow start); in congestion avoidance `cwnd` grows by
//!   `1 / win` segment per acknowledged segment, so `win` gains one segment per RTT from it.
//! - Delay window, once per round (a round ends with the ACK that brings SND.UNA to the
//!   SND.NXT recorded at its start; that ACK's RTT sample, taken first, still counts in it),
//!   with `baseRTT` the smallest RTT seen and `RTT` the smallest in the round:
//!   `diff = win (1 - baseRTT / RTT)` segments; if `diff < gamma`,
//!   `dwnd += (alpha win^k - 1)^+`; otherwise `dwnd = (dwnd - eta diff)^+`. `win` is the
//!   send window at the update (the draft's `win(t)`). Choices, where the draft is silent:
//!   - the increase is spread over the next round in proportion to the bytes acknowledged,
//!     what is left of it being added at the round's end, as the Linux module's
//!     `PACE_DWND` (on by default there); `pace_dwnd = false` applies it at once, which
//!     sends it as one line-rate burst. Decreases apply at once and cancel a pending
//!     increase (Linux);
//!   - an update needs at least 3 RTT samples in the round (Linux: fewer mean that only
//!     delayed ACKs were sampled);
//!   - gamma is fixed (the Linux module's gamma auto-tuning comes from the later
//!     CTCP-TUBE work).
//! - Low-window threshold: `dwnd = 0` while `win < low_window` segments. Choice: 38, the
//!   Linux module's `LOW_WINDOW` and HighSpeed TCP's `Low_Window` (RFC 3649) which CTCP's
//!   scalability argument borrows; the CTCP paper quotes about 41 (parameter).
//! - Loss (fast retransmit), ECN-Echo and the RTO: `cwnd = cwnd / 2`,
//!   `dwnd = (win (1 - beta) - cwnd / 2)^+`, so `win` falls to `max(win (1 - beta), cwnd / 2)`;
//!   ssthresh is that window (at least 2 SMSS) and the sender sets `st.cwnd` to it. The
//!   loss window halves from its own value as the draft's Reno component does (NewReno in
//!   this simulator halves FlightSize, which with SACK is a few segments larger). ECN is
//!   not in the draft and is treated as a loss. On an RTO the sender then sets the window
//!   to one segment: `dwnd = 0`, `cwnd = 1 SMSS` (slow start back to ssthresh).
//! - `win` never exceeds the receiver window (draft: `win = min(cwnd + dwnd, awnd)`): `dwnd`
//!   is capped there so that it cannot grow without bound while the queue stays empty.

use super::{Ack, CcModel, CcState, Congestion, CongestionControl, VarSpec, VarUnit};
use crate::params::{ParamKind, ParamSpec, ParamValue, Params};
use crate::registry::Randomness;
use crate::sim::time::Time;

/// Draft / paper: `alpha = 1/8` (Linux `LOG_ALPHA` 3).
pub const ALPHA: f64 = 0.125;
/// Draft / paper: multiplicative decrease of the whole window, `beta = 1/2`.
pub const BETA: f64 = 0.5;
/// Draft / paper: exponent of the scalable increase, `k = 0.75` (HSTCP-like).
pub const K: f64 = 0.75;
/// Draft / paper: `eta = 1`, share of the estimated queue removed from dwnd.
pub const ETA: f64 = 1.0;
/// Draft / paper: `gamma = 30` packets of backlog (Linux `GAMMA` 30).
pub const GAMMA: f64 = 30.0;
/// Linux module `LOW_WINDOW` = 38 segments (RFC 3649 `Low_Window`).
pub const LOW_WINDOW: u64 = 38;
/// Linux module: fewest RTT samples in a round for a dwnd update (`cntRTT > 2`).
const MIN_SAMPLES: u32 = 3;

/// Declared parameters.
pub static PARAMS: &[ParamSpec] = &[
    ParamSpec::new(
        "alpha",
        ParamKind::Float,
        Some(ParamValue::Float(ALPHA)),
        "dwnd increase factor alpha (draft: 1/8)",
    )
    .range(0.0, 10.0),
    ParamSpec::new(
        "beta",
        ParamKind::Float,
        Some(ParamValue::Float(BETA)),
        "window decrease factor beta on loss (draft: 1/2)",
    )
    .range(0.0, 0.99),
    ParamSpec::new(
        "k",
        ParamKind::Float,
        Some(ParamValue::Float(K)),
        "exponent k of the dwnd increase alpha win^k (draft: 0.75)",
    )
    .range(0.0, 2.0),
    ParamSpec::new(
        "eta",
        ParamKind::Float,
        Some(ParamValue::Float(ETA)),
        "dwnd decrease per packet of estimated backlog (draft: 1)",
    )
    .range(0.0, 10.0),
    ParamSpec::new(
        "gamma",
        ParamKind::Float,
        Some(ParamValue::Float(GAMMA)),
        "backlog threshold gamma in packets (draft: 30)",
    )
    .range(0.0, 1e6),
    ParamSpec::new(
        "low_window",
        ParamKind::Int,
        Some(ParamValue::Int(LOW_WINDOW as i64)),
        "dwnd stays 0 below this window in packets (Linux module 38; CTCP paper about 41)",
    )
    .range(0.0, 1e9),
    ParamSpec::new(
        "pace_dwnd",
        ParamKind::Bool,
        Some(ParamValue::Bool(true)),
        "spread each dwnd increase over the next RTT (Linux module PACE_DWND); false = at once",
    ),
];

/// Registration.
pub const MODEL: CcModel = CcModel {
    name: "compound",
    doc: "Compound TCP (draft-sridharan-tcpm-ctcp-02): Reno loss window plus delay-based dwnd",
    params: PARAMS,
    random: Randomness::Never,
    partner_queues: &[],
    build: |p, _| Box::new(Compound::from_params(p)),
};

/// Compound TCP.
#[derive(Clone, Debug)]
pub struct Compound {
    alpha: f64,
    beta: f64,
    k: f64,
    eta: f64,
    gamma: f64,
    low_window: f64,
    pace_dwnd: bool,

    /// Loss-based window (bytes); `None` until the first hook sees the initial window.
    cwnd: Option<u64>,
    /// Delay-based window (segments).
    dwnd: f64,
    /// Increase of dwnd decided at the last round end and not yet applied (segments).
    dwnd_pending: f64,
    /// Pace of that increase, segments per acknowledged byte.
    dwnd_rate: f64,
    /// Bytes acknowledged towards the next one-segment increase of `cwnd`.
    bytes_acked: u64,
    /// Smallest RTT ever seen.
    base_rtt: Option<Time>,
    /// SND.NXT at the start of the current round; `None` until the next ACK starts one.
    round_end: Option<u64>,
    /// Smallest RTT of the current round and the number of samples.
    round_min_rtt: Option<Time>,
    round_samples: u32,
}

impl Default for Compound {
    fn default() -> Self {
        Self::new(ALPHA, BETA, K, ETA, GAMMA, LOW_WINDOW, true)
    }
}

impl Compound {
    /// A Compound instance with explicit settings (`gamma`, `low_window` in packets).
    pub fn new(alpha: f64, beta: f64, k: f64, eta: f64, gamma: f64, low_window: u64, pace_dwnd: bool) -> Self {
        Compound {
            alpha,
            beta,
            k,
            eta,
            gamma,
            low_window: low_window as f64,
            pace_dwnd,
            cwnd: None,
            dwnd: 0.0,
            dwnd_pending: 0.0,
            dwnd_rate: 0.0,
            bytes_acked: 0,
            base_rtt: None,
            round_end: None,
            round_min_rtt: None,
            round_samples: 0,
        }
    }

    /// From validated parameters.
    pub fn from_params(p: &Params) -> Self {
        Self::new(
            p.float("alpha"),
            p.float("beta"),
            p.float("k"),
            p.float("eta"),
            p.float("gamma"),
            p.uint("low_window"),
            p.bool("pace_dwnd"),
        )
    }

    /// The delay window in segments.
    pub fn dwnd(&self) -> f64 {
        self.dwnd
    }

    /// The delay window once the increase being paced out is complete (segments).
    pub fn dwnd_target(&self) -> f64 {
        self.dwnd + self.dwnd_pending
    }

    /// The loss window in bytes (the initial window before any hook ran).
    pub fn loss_cwnd(&self) -> Option<u64> {
        self.cwnd
    }

    fn dwnd_bytes(&self, mss: u64) -> u64 {
        (self.dwnd * mss as f64) as u64
    }

    /// Bring the two parts in line with a window the sender changed on its own.
    fn sync(&mut self, st: &CcState) {
        let mss = st.mss as u64;
        let Some(cwnd) = self.cwnd else {
            self.cwnd = Some(st.cwnd.saturating_sub(self.dwnd_bytes(mss)));
            return;
        };
        let total = cwnd + self.dwnd_bytes(mss);
        if st.cwnd < total {
            // Shrink both in proportion (Linux module), keeping the sum exact.
            self.dwnd *= st.cwnd as f64 / total as f64;
            self.cwnd = Some(st.cwnd - self.dwnd_bytes(mss).min(st.cwnd));
        } else if st.cwnd > total {
            self.cwnd = Some(st.cwnd - self.dwnd_bytes(mss));
        }
    }

    fn publish(&self, st: &mut CcState) {
        let mss = st.mss as u64;
        // Draft: win = min(cwnd + dwnd, awnd).
        let cwnd = self.cwnd.unwrap_or(st.cwnd);
        st.cwnd = (cwnd + self.dwnd_bytes(mss)).max(mss);
    }

    fn start_round(&mut self, st: &CcState) {
        self.round_end = Some(st.snd_nxt);
        self.round_min_rtt = None;
        self.round_samples = 0;
    }

    /// The once-per-round dwnd control law.
    fn update_dwnd(&mut self, st: &CcState) {
        let mss = st.mss as f64;
        let win = st.cwnd as f64 / mss;
        if win < self.low_window {
            // Small windows: plain Reno.
            self.dwnd = 0.0;
            self.dwnd_pending = 0.0;
            return;
        }
        let (Some(base), Some(rtt)) = (self.base_rtt, self.round_min_rtt) else {
            return;
        };
        if self.round_samples < MIN_SAMPLES || rtt == 0 {
            return;
        }
        let diff = win * (1.0 - base as f64 / rtt as f64);
        if diff < self.gamma {
            let inc = (self.alpha * win.powf(self.k) - 1.0).max(0.0);
            if self.pace_dwnd {
                self.dwnd_pending = inc;
                self.dwnd_rate = inc / st.cwnd as f64;
            } else {
                self.dwnd += inc;
            }
        } else {
            self.dwnd = (self.dwnd - self.eta * diff).max(0.0);
            self.dwnd_pending = 0.0;
        }
        self.cap_dwnd(st);
    }

    /// win <= awnd (draft).
    fn cap_dwnd(&mut self, st: &CcState) {
        let mss = st.mss as f64;
        let cwnd = self.cwnd.unwrap_or(st.cwnd) as f64 / mss;
        let room = (st.rwnd as f64 / mss - cwnd).max(0.0);
        self.dwnd = self.dwnd.min(room);
    }

    /// Apply the paced increase for `acked` bytes, or all of it at the end of the round.
    fn pace(&mut self, st: &CcState, acked: Option<u64>) {
        if self.dwnd_pending <= 0.0 {
            return;
        }
        let add = match acked {
            Some(bytes) => (self.dwnd_rate * bytes as f64).min(self.dwnd_pending),
            None => self.dwnd_pending,
        };
        self.dwnd += add;
        self.dwnd_pending -= add;
        self.cap_dwnd(st);
    }
}

/// Compound TCP's traceable variables.
pub static VARS: &[VarSpec] = &[
    VarSpec::new("dwnd", VarUnit::Segments, "delay-based window, added to the loss-based one (CTCP dwnd)"),
    VarSpec::new("base_rtt", VarUnit::Seconds, "smallest RTT ever seen (CTCP baseRTT); NaN before the first sample"),
];

impl CongestionControl for Compound {
    fn name(&self) -> &'static str {
        "compound"
    }

    fn vars(&self) -> &'static [VarSpec] {
        VARS
    }

    fn var(&self, name: &str) -> Option<f64> {
        Some(match name {
            "dwnd" => self.dwnd,
            "base_rtt" => self.base_rtt.map_or(f64::NAN, crate::sim::time::secs),
            _ => return None,
        })
    }

    fn on_rtt_sample(&mut self, _st: &CcState, rtt: Time) {
        self.base_rtt = Some(self.base_rtt.map_or(rtt, |b| b.min(rtt)));
        self.round_min_rtt = Some(self.round_min_rtt.map_or(rtt, |m| m.min(rtt)));
        self.round_samples += 1;
    }

    fn on_ack(&mut self, st: &mut CcState, ack: &Ack) {
        self.sync(st);
        let mss = st.mss as u64;
        let mut acked = ack.acked;
        if st.in_slow_start() {
            // RFC 5681 slow start of the loss window (RFC 3465, L = 2), up to ssthresh.
            let grow = acked.min(2 * mss).min(st.ssthresh - st.cwnd);
            self.cwnd = Some(self.cwnd.unwrap_or(st.cwnd) + grow);
            acked -= grow;
            self.publish(st);
        }
        if !st.in_slow_start() && acked > 0 {
            // Congestion avoidance: one segment per window of acknowledged bytes, counted
            // against the whole window win, i.e. cwnd += 1/win per segment.
            self.bytes_acked += acked;
            let win = st.cwnd.max(mss);
            if self.bytes_acked >= win {
                self.bytes_acked -= win;
                self.cwnd = Some(self.cwnd.unwrap_or(st.cwnd) + mss);
            }
            self.pace(st, Some(acked));
            self.publish(st);
        }

        match self.round_end {
            None => self.start_round(st),
            Some(end) if st.snd_una >= end => {
                // Finish the previous round's increase, then decide this round's.
                self.pace(st, None);
                self.publish(st);
                if !st.in_slow_start() {
                    self.update_dwnd(st);
                    self.publish(st);
                }
                self.start_round(st);
            }
            Some(_) => {}
        }
        debug_assert!(st.cwnd >= mss);
    }

    fn ssthresh(&mut self, st: &CcState, _event: Congestion) -> u64 {
        if !st.in_recovery {
            self.sync(st);
        }
        let mss = st.mss as u64;
        let cwnd = self.cwnd.unwrap_or(st.cwnd);
        let win = (cwnd as f64 / mss as f64) + self.dwnd;
        // An increase still being paced out is forgotten (the window it was for is gone).
        self.dwnd_pending = 0.0;
        let half = cwnd / 2;
        // dwnd = (win (1 - beta) - cwnd / 2)^+ with the halved loss window.
        self.dwnd = (win * (1.0 - self.beta) - half as f64 / mss as f64).max(0.0);
        let ssthresh = (half + self.dwnd_bytes(mss)).max(2 * mss);
        self.cwnd = Some(ssthresh - self.dwnd_bytes(mss));
        self.bytes_acked = 0;
        // The next round starts afresh after recovery.
        self.round_end = None;
        ssthresh
    }

    fn on_timeout(&mut self, st: &mut CcState) {
        // The sender set the loss window (one segment); the delay part restarts from 0.
        self.dwnd = 0.0;
        self.dwnd_pending = 0.0;
        self.cwnd = Some(st.cwnd);
        self.bytes_acked = 0;
        self.round_end = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::time::MS;
    use crate::tcp::cc::testkit::{window, Setup, MSS};

    /// One round with RTT `rtt`: `acks` ACKs of one segment each, then the ACK that ends
    /// the round (SND.UNA reaches the SND.NXT recorded at its start). Few ACKs, so the Reno
    /// part does not grow unless `acks` is a full window.
    fn round(cc: &mut Compound, st: &mut CcState, rtt: Time, acks: u64) {
        let end = st.snd_nxt;
        for _ in 0..acks {
            st.snd_una = (st.snd_una + MSS).min(end - MSS);
            st.now += MS;
            cc.on_rtt_sample(st, rtt);
            cc.on_ack(st, &Ack { acked: MSS, rtt: Some(rtt), ..Ack::default() });
        }
        st.snd_una = end;
        st.snd_nxt = end + st.cwnd;
        cc.on_rtt_sample(st, rtt);
        cc.on_ack(st, &Ack { acked: MSS, rtt: Some(rtt), ..Ack::default() });
    }

    /// The send window the next dwnd update will see: the loss window plus dwnd with the
    /// paced increase completed (it is flushed at the round's end).
    fn win_at_update(cc: &Compound) -> f64 {
        (cc.loss_cwnd().unwrap() + (cc.dwnd_target() * MSS as f64) as u64) as f64 / MSS as f64
    }

    #[test]
    fn dwnd_grows_by_alpha_win_to_the_k_minus_one_when_there_is_no_queue() {
        for pace in [true, false] {
            let mut cc = Compound::new(ALPHA, BETA, K, ETA, GAMMA, LOW_WINDOW, pace);
            let mut st = window(MSS, 100, 2).with_flight(100);
            round(&mut cc, &mut st, 100 * MS, 8); // sets the loss window
            for _ in 0..5 {
                let w = win_at_update(&cc);
                let d = cc.dwnd_target();
                round(&mut cc, &mut st, 100 * MS, 8);
                // diff = 0 < gamma: dwnd += 0.125 w^0.75 - 1 (w = 100: 2.95 segments).
                let expect = d + 0.125 * w.powf(0.75) - 1.0;
                assert!((cc.dwnd_target() - expect).abs() < 1e-9, "dwnd {} expected {expect}", cc.dwnd_target());
                // The send window is the sum of the two parts.
                assert_eq!(st.cwnd, cc.loss_cwnd().unwrap() + (cc.dwnd() * MSS as f64) as u64);
                if !pace {
                    assert_eq!(cc.dwnd(), cc.dwnd_target());
                }
            }
            assert!(cc.dwnd_target() > 14.0);
        }
    }

    #[test]
    fn a_dwnd_increase_is_paced_over_the_next_round() {
        let mut cc = Compound::default();
        let mut st = window(MSS, 100, 2).with_flight(100);
        round(&mut cc, &mut st, 100 * MS, 8);
        round(&mut cc, &mut st, 100 * MS, 8);
        let (d, target) = (cc.dwnd(), cc.dwnd_target());
        let inc = target - d;
        assert!(inc > 2.0);
        // Half the window acknowledged: half the increase applied.
        let half = st.cwnd / 2 / MSS;
        for _ in 0..half {
            st.snd_una += MSS;
            cc.on_rtt_sample(&st, 100 * MS);
            cc.on_ack(&mut st, &Ack { acked: MSS, ..Ack::default() });
        }
        let applied = cc.dwnd() - d;
        let share = (half * MSS) as f64 / (cc.loss_cwnd().unwrap() as f64 + (d * MSS as f64).floor());
        assert!((applied - inc * share).abs() < 1e-9, "applied {applied} of {inc}, expected share {share}");
        assert_eq!(st.cwnd, cc.loss_cwnd().unwrap() + (cc.dwnd() * MSS as f64) as u64);
    }

    #[test]
    fn dwnd_shrinks_by_eta_diff_when_the_queue_estimate_reaches_gamma() {
        let mut cc = Compound::default();
        let mut st = window(MSS, 100, 2).with_flight(100);
        for _ in 0..21 {
            round(&mut cc, &mut st, 100 * MS, 8);
        }
        let d = cc.dwnd_target();
        assert!(d > 55.0, "dwnd {d}");
        // RTT 150 ms against a base of 100 ms: diff = win / 3 (about 60) >= gamma = 30.
        let w = win_at_update(&cc);
        round(&mut cc, &mut st, 150 * MS, 8);
        let diff = w * (1.0 - 100.0 / 150.0);
        assert!(diff >= GAMMA && diff < d);
        assert!((cc.dwnd() - (d - diff)).abs() < 1e-9, "dwnd {} expected {}", cc.dwnd(), d - diff);
        assert_eq!(cc.dwnd_target(), cc.dwnd(), "no increase pending after a decrease");
        // Just under gamma it grows again: RTT such that diff = 29 packets.
        let w = win_at_update(&cc);
        let d = cc.dwnd_target();
        let rtt = (100.0 * MS as f64 / (1.0 - 29.0 / w)) as Time;
        round(&mut cc, &mut st, rtt, 8);
        assert!((cc.dwnd_target() - (d + 0.125 * w.powf(0.75) - 1.0)).abs() < 1e-9);
        // A large queue takes dwnd to zero, not below.
        round(&mut cc, &mut st, 1000 * MS, 8);
        assert_eq!(cc.dwnd_target(), 0.0);
    }

    #[test]
    fn dwnd_stays_zero_below_the_low_window() {
        let mut cc = Compound::default();
        let mut st = window(MSS, 37, 2).with_flight(37);
        // Two ACKs a round: the Reno part stays at 37 segments.
        for _ in 0..10 {
            round(&mut cc, &mut st, 100 * MS, 2);
        }
        assert_eq!(st.cwnd, 37 * MSS);
        assert_eq!(cc.dwnd(), 0.0);
        let mut cc = Compound::new(ALPHA, BETA, K, ETA, GAMMA, 30, true);
        let mut st = window(MSS, 37, 2).with_flight(37);
        for _ in 0..3 {
            round(&mut cc, &mut st, 100 * MS, 2);
        }
        assert!(cc.dwnd() > 0.0);
    }

    #[test]
    fn on_loss_dwnd_becomes_win_times_one_minus_beta_minus_half_cwnd() {
        let mut cc = Compound::default();
        let mut st = window(MSS, 80, 2).with_flight(80);
        round(&mut cc, &mut st, 100 * MS, 2);
        cc.dwnd = 40.0;
        cc.publish(&mut st);
        assert_eq!(st.cwnd, 120 * MSS);
        // win = 120: cwnd 80 -> 40, dwnd = 120 * 0.5 - 40 = 20, ssthresh = window = 60.
        let ssthresh = cc.ssthresh(&st, Congestion::Loss);
        assert_eq!(ssthresh, 60 * MSS);
        assert_eq!(cc.loss_cwnd(), Some(40 * MSS));
        assert!((cc.dwnd() - 20.0).abs() < 1e-12);
        // beta = 0.3: dwnd = 120 * 0.7 - 40 = 44, window 84.
        let mut cc = Compound::new(ALPHA, 0.3, K, ETA, GAMMA, LOW_WINDOW, true);
        cc.cwnd = Some(80 * MSS);
        cc.dwnd = 40.0;
        let ssthresh = cc.ssthresh(&st, Congestion::Loss);
        assert!((cc.dwnd() - 44.0).abs() < 1e-9);
        assert_eq!(ssthresh, 40 * MSS + (cc.dwnd() * MSS as f64) as u64);
        // dwnd never goes negative: without a delay window, 100 * 0.5 - 50 = 0.
        let mut cc = Compound { cwnd: Some(100 * MSS), ..Compound::default() };
        st.cwnd = 100 * MSS;
        assert_eq!(cc.ssthresh(&st, Congestion::Ecn), 50 * MSS);
        assert_eq!(cc.dwnd(), 0.0);
    }

    #[test]
    fn an_outside_reduction_is_shared_in_proportion() {
        let mut cc = Compound::default();
        let mut st = window(MSS, 60, 2).with_flight(60);
        round(&mut cc, &mut st, 100 * MS, 2);
        cc.dwnd = 30.0;
        cc.publish(&mut st);
        assert_eq!(st.cwnd, 90 * MSS);
        // Recovery exit with a small flight: the sender cuts the window to 45 segments.
        st.cwnd = 45 * MSS;
        cc.on_ack(&mut st, &Ack { acked: MSS, ..Ack::default() });
        assert!((cc.dwnd() - 15.0).abs() < 1e-9);
        assert_eq!(cc.loss_cwnd(), Some(30 * MSS));
        assert_eq!(st.cwnd, 45 * MSS);
    }

    #[test]
    fn a_timeout_clears_dwnd_and_slow_start_regrows_the_loss_window_only() {
        let mut cc = Compound::default();
        let mut st = window(MSS, 80, 2).with_flight(80);
        round(&mut cc, &mut st, 100 * MS, 2);
        cc.dwnd = 40.0;
        cc.publish(&mut st);
        st.ssthresh = cc.ssthresh(&st, Congestion::Timeout);
        st.cwnd = MSS;
        cc.on_timeout(&mut st);
        assert_eq!(cc.dwnd(), 0.0);
        assert_eq!(st.ssthresh, 60 * MSS);
        for _ in 0..5 {
            st.snd_una += 2 * MSS;
            cc.on_ack(&mut st, &Ack { acked: 2 * MSS, ..Ack::default() });
        }
        assert_eq!(st.cwnd, 11 * MSS);
        assert_eq!(cc.loss_cwnd(), Some(11 * MSS));
        assert_eq!(cc.dwnd(), 0.0);
    }

    #[test]
    fn the_loss_window_gains_one_segment_per_window_of_acks() {
        let mut cc = Compound::default();
        let mut st = window(MSS, 20, 2).with_flight(20);
        for _ in 0..20 {
            st.snd_una += MSS;
            cc.on_ack(&mut st, &Ack { acked: MSS, ..Ack::default() });
        }
        assert_eq!(st.cwnd, 21 * MSS);
    }
}
