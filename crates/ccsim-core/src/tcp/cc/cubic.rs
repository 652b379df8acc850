//! CUBIC (RFC 9438), optionally with HyStart++ (RFC 9406) for the initial slow start.
//!
//! Source: RFC 9438 §4.1-§4.8; constants cross-checked with Linux `tcp_cubic.c` and ns-3
//! `TcpCubic`. State is kept in segments and seconds as in the RFC
//! (`W_max`, `cwnd_prior`, `cwnd_epoch`, `K`, `t_epoch`, `W_est`) and applied to the byte
//! window of [`CcState`], with fractional bytes carried from ACK to ACK.
//!
//! - §4.2: `W_cubic(t) = C (t - K)^3 + W_max`, `t` from the start of the congestion-avoidance
//!   stage (the first ACK in congestion avoidance after slow start, recovery or an ECN
//!   reduction), `K = cbrt((W_max - cwnd_epoch) / C)`, which is `cbrt(W_max (1 - beta) / C)`
//!   when the stage starts at `beta * W_max`. The target is `W_cubic(t + RTT)` with the
//!   smoothed RTT, clamped to `[cwnd, 1.5 cwnd]`.
//! - §4.4-4.5 (concave and convex regions): the window grows by `(target - cwnd) / cwnd` per
//!   acknowledged segment. Choice: per segment rather than per ACK (the RFC's wording), as in
//!   Linux, so that delayed ACKs do not halve the growth; the per-RTT increase is the same.
//!   Like slow start (RFC 3465, L = 2), one ACK counts for at most 2 segments, in the cubic
//!   and Reno-friendly rules alike: after recovery a cumulative ACK can cover dozens of
//!   segments SACKed long ago, and `0.5` segment per acknowledged segment (the `1.5 cwnd`
//!   bound) would then open the window by half of them in one burst.
//! - §4.3 (Reno-friendly region): `W_est` starts at `cwnd_epoch` and grows by
//!   `alpha_cubic * segments_acked / cwnd`, `alpha_cubic = 3 (1 - beta) / (1 + beta)`, and by
//!   1 once `W_est >= cwnd_prior` (so at once before any reduction, `cwnd_prior` being 0).
//!   When `W_cubic(t) < W_est` the window is set to `W_est`.
//!   Choice: it is never lowered to `W_est` (`cwnd = max(cwnd, W_est)`), as Linux's
//!   friendliness only ever speeds growth up. `tcp_friendliness = false` turns the region
//!   off (the add-on ns-3 CUBIC of the Piotrowska paper may have lacked it).
//! - §4.6: on loss or ECN-Echo `ssthresh = max(flight_size * beta, 2 SMSS)`; the sender then
//!   sets cwnd to ssthresh (RFC 6675 / RFC 3168). Choice among sources: the RFC's
//!   `flight_size`, not the `cwnd` of Linux and ns-3 (the RFC requires implementations that
//!   use cwnd to stop growth when not cwnd-limited, which ccsim does not model), but bounded
//!   by cwnd: RFC 5681's FlightSize (sent, not cumulatively acknowledged) also counts data
//!   the receiver has SACKed, which after a recovery stalled until the RTO is many windows
//!   (on a 34-segment path a flow stalled for 1 s got an ssthresh of hundreds of segments
//!   and slow-started into the next overflow, eight timeouts in 10 s). The two sources
//!   agree whenever the sender is cwnd-limited with nothing SACKed; an
//!   application-limited flight still lowers ssthresh.
//! - §4.7 fast convergence: at a congestion event below the previous `W_max`,
//!   `W_max = cwnd (1 + beta) / 2`, else `W_max = cwnd` (cwnd before the reduction).
//! - §4.8 timeout: ssthresh as in §4.6 (the sender asks on the first timeout of a series
//!   only, RFC 5681 §3.1), cwnd = 1 SMSS by the sender; the first congestion-avoidance stage
//!   afterwards uses `K = 0` and `W_max = W_est = cwnd_epoch`.
//! - A stage that starts with `cwnd_epoch >= W_max` (the first one after the initial slow
//!   start, or after HyStart++ left CSS) uses `K = 0` and `W_max = cwnd_epoch` (§4.2 "K is
//!   set to 0"; Linux moves the origin point to cwnd likewise).
//! - §4.10 slow start: RFC 5681 with RFC 3465 byte counting (L = 2), as NewReno; with
//!   `hystart = true` HyStart++ drives the initial slow start ([`super::hystart`]).
//!
//! Not modelled: §4.9 spurious-congestion undo (the sender detects no spurious events) and
//! the application-limited rules of §4.2 / §5.8 (bulk senders stay cwnd-limited).

use super::hystart::HyStartPlusPlus;
use super::{Ack, CcModel, CcState, Congestion, CongestionControl, VarSpec, VarUnit};
use crate::params::{ParamKind, ParamSpec, ParamValue, Params};
use crate::registry::Randomness;
use crate::sim::time::{secs, Time, SEC};

/// RFC 9438 §4.1.1 / §5.1: `C`, segments per second cubed.
pub const C: f64 = 0.4;
/// RFC 9438 §4.1.1 / §4.6: multiplicative decrease factor `beta_cubic`.
pub const BETA: f64 = 0.7;

/// RFC 3465 §2.2 `L`: segments per ACK counted for growth, as in slow start.
const ABC_L: u64 = 2;

/// A window no simulation reaches (bytes), to keep float-to-integer conversions finite.
const MAX_CWND: f64 = 1e15;

/// Declared parameters.
pub static PARAMS: &[ParamSpec] = &[
    ParamSpec::new(
        "c",
        ParamKind::Float,
        Some(ParamValue::Float(C)),
        "cubic scaling constant C, segments/s^3 (RFC 9438 §5.1: 0.4)",
    )
    .range(1e-3, 100.0),
    ParamSpec::new(
        "beta",
        ParamKind::Float,
        Some(ParamValue::Float(BETA)),
        "multiplicative decrease factor beta_cubic (RFC 9438 §4.6: 0.7)",
    )
    .range(0.05, 0.99),
    ParamSpec::new(
        "tcp_friendliness",
        ParamKind::Bool,
        Some(ParamValue::Bool(true)),
        "Reno-friendly region (RFC 9438 §4.3); false as in add-on CUBICs that lacked it",
    ),
    ParamSpec::new(
        "fast_convergence",
        ParamKind::Bool,
        Some(ParamValue::Bool(true)),
        "fast convergence (RFC 9438 §4.7)",
    ),
    ParamSpec::new(
        "hystart",
        ParamKind::Bool,
        Some(ParamValue::Bool(false)),
        "HyStart++ for the initial slow start (RFC 9406)",
    ),
];

/// Registration.
pub const MODEL: CcModel = CcModel {
    name: "cubic",
    doc: "CUBIC (RFC 9438): cubic window growth, Reno-friendly region, fast convergence; optional HyStart++ (RFC 9406)",
    params: PARAMS,
    random: Randomness::Never,
    partner_queues: &[],
    build: |p, _| Box::new(Cubic::from_params(p)),
};

/// CUBIC's traceable variables (RFC 9438 names, in segments as the RFC keeps them).
pub static VARS: &[VarSpec] = &[
    VarSpec::new(
        "w_max",
        VarUnit::Segments,
        "window just before the last reduction, after fast convergence (RFC 9438 W_max); 0 before any",
    ),
    VarSpec::new(
        "k",
        VarUnit::Seconds,
        "time the cubic function takes to regain W_max in the current stage (RFC 9438 K)",
    ),
    VarSpec::new("w_est", VarUnit::Segments, "Reno-friendly estimate of the window (RFC 9438 §4.3 W_est)"),
    VarSpec::new(
        "cwnd_epoch",
        VarUnit::Segments,
        "window at the start of the current congestion-avoidance stage (RFC 9438 cwnd_epoch)",
    ),
    VarSpec::new(
        "epoch_start",
        VarUnit::Seconds,
        "start of the current congestion-avoidance stage, simulated time (RFC 9438 t_epoch); NaN until its first ACK",
    ),
];

/// CUBIC congestion control.
#[derive(Clone, Debug)]
pub struct Cubic {
    c: f64,
    beta: f64,
    /// `alpha_cubic` of §4.3 for this beta.
    alpha_cubic: f64,
    tcp_friendliness: bool,
    fast_convergence: bool,
    hystart: Option<HyStartPlusPlus>,

    /// Window just before the last reduction (segments); 0 before any.
    w_max: f64,
    /// cwnd when ssthresh was last set (segments), for the alpha switch of §4.3.
    cwnd_prior: f64,
    /// Start of the current congestion-avoidance stage; `None` until its first ACK.
    t_epoch: Option<Time>,
    /// cwnd at the start of the stage (segments).
    cwnd_epoch: f64,
    /// Time for `W_cubic` to reach `W_max` (seconds).
    k: f64,
    /// Reno-friendly estimate (segments).
    w_est: f64,
    /// The last reduction was a timeout (§4.8).
    after_timeout: bool,
    /// Fraction of a byte of growth not yet applied.
    carry: f64,
}

impl Default for Cubic {
    fn default() -> Self {
        Self::new(C, BETA, true, true, false)
    }
}

impl Cubic {
    /// A CUBIC instance with explicit settings.
    pub fn new(c: f64, beta: f64, tcp_friendliness: bool, fast_convergence: bool, hystart: bool) -> Self {
        Cubic {
            c,
            beta,
            alpha_cubic: 3.0 * (1.0 - beta) / (1.0 + beta),
            tcp_friendliness,
            fast_convergence,
            hystart: hystart.then(HyStartPlusPlus::new),
            w_max: 0.0,
            cwnd_prior: 0.0,
            t_epoch: None,
            cwnd_epoch: 0.0,
            k: 0.0,
            w_est: 0.0,
            after_timeout: false,
            carry: 0.0,
        }
    }

    /// From validated parameters.
    pub fn from_params(p: &Params) -> Self {
        Self::new(
            p.float("c"),
            p.float("beta"),
            p.bool("tcp_friendliness"),
            p.bool("fast_convergence"),
            p.bool("hystart"),
        )
    }

    /// `W_max` in segments.
    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    /// `K` of the current stage in seconds (valid once the stage has started).
    pub fn k(&self) -> f64 {
        self.k
    }

    /// `W_est` in segments.
    pub fn w_est(&self) -> f64 {
        self.w_est
    }

    /// Start of the current congestion-avoidance stage.
    pub fn epoch_start(&self) -> Option<Time> {
        self.t_epoch
    }

    /// HyStart++ state, when enabled.
    pub fn hystart(&self) -> Option<&HyStartPlusPlus> {
        self.hystart.as_ref()
    }

    /// Eq. 1 of §4.2, `t` in seconds from the stage start.
    pub fn w_cubic(&self, t: f64) -> f64 {
        self.c * (t - self.k).powi(3) + self.w_max
    }

    /// §4.2 stage start.
    fn start_epoch(&mut self, now: Time, cwnd: f64) {
        self.t_epoch = Some(now);
        self.cwnd_epoch = cwnd;
        if self.after_timeout || self.w_max <= cwnd {
            // §4.8 after a timeout, and §4.2's special case cwnd_epoch >= W_max.
            self.w_max = cwnd;
            self.k = 0.0;
        } else {
            self.k = ((self.w_max - cwnd) / self.c).cbrt();
        }
        self.after_timeout = false;
        self.w_est = cwnd;
    }

    /// Congestion avoidance for `acked` bytes (§4.3-§4.5).
    fn congestion_avoidance(&mut self, st: &mut CcState, acked: u64) {
        let mss = st.mss as f64;
        let cwnd = st.cwnd.max(st.mss as u64) as f64 / mss;
        if self.t_epoch.is_none() {
            self.start_epoch(st.now, cwnd);
        }
        let t = st.now.saturating_sub(self.t_epoch.unwrap_or(st.now)) as f64 / SEC as f64;
        let rtt = st.srtt.or(st.min_rtt).unwrap_or(0) as f64 / SEC as f64;
        // At most L = 2 segments per ACK (see the module doc): a cumulative ACK that jumps
        // over data SACKed during recovery must not open the window by half of it at once.
        let segments_acked = acked.min(ABC_L * st.mss as u64) as f64 / mss;

        // §4.3: alpha_cubic until W_est reaches the window of the last reduction, then 1.
        let alpha = if self.w_est >= self.cwnd_prior { 1.0 } else { self.alpha_cubic };
        self.w_est += alpha * segments_acked / cwnd;

        let new = if self.tcp_friendliness && self.w_cubic(t) < self.w_est {
            // Reno-friendly region.
            cwnd.max(self.w_est)
        } else {
            // Concave (cwnd < W_max) or convex region: the same rule.
            let target = self.w_cubic(t + rtt).clamp(cwnd, 1.5 * cwnd);
            cwnd + (target - cwnd) / cwnd * segments_acked
        };
        let bytes = (st.cwnd as f64 + self.carry + (new - cwnd) * mss).min(MAX_CWND);
        let whole = bytes.floor();
        self.carry = bytes - whole;
        st.cwnd = (whole as u64).max(st.cwnd);
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn on_ack(&mut self, st: &mut CcState, ack: &Ack) {
        let mss = st.mss as u64;
        let mut acked = ack.acked;
        if st.in_slow_start() {
            match self.hystart.as_mut() {
                Some(h) if h.active() => acked = h.on_ack(st, acked, ack.rtt),
                _ => {
                    // RFC 5681 §3.1 with RFC 3465 byte counting (L = 2), as NewReno.
                    let grow = acked.min(2 * mss).min(st.ssthresh - st.cwnd);
                    st.cwnd += grow;
                    acked -= grow;
                }
            }
            if st.in_slow_start() {
                return;
            }
        }
        if acked > 0 {
            self.congestion_avoidance(st, acked);
        }
        debug_assert!(st.cwnd >= mss);
    }

    fn ssthresh(&mut self, st: &CcState, _event: Congestion) -> u64 {
        let mss = st.mss as u64;
        let cwnd = st.cwnd as f64 / mss as f64;
        // §4.7 fast convergence, on the window before the reduction.
        self.w_max = if self.fast_convergence && cwnd < self.w_max { cwnd * (1.0 + self.beta) / 2.0 } else { cwnd };
        self.cwnd_prior = cwnd;
        // The next congestion-avoidance ACK starts a new stage with the reduced window.
        self.t_epoch = None;
        self.carry = 0.0;
        if let Some(h) = self.hystart.as_mut() {
            h.on_congestion();
        }
        // §4.6: ssthresh = flight_size * beta_cubic, at least 2 SMSS, with flight_size
        // bounded by cwnd (module doc).
        let flight = st.flight_size.min(st.cwnd);
        ((flight as f64 * self.beta).round() as u64).max(2 * mss)
    }

    fn on_timeout(&mut self, _st: &mut CcState) {
        // §4.8: the next stage uses K = 0 and W_max = cwnd_epoch.
        self.after_timeout = true;
        self.t_epoch = None;
        self.carry = 0.0;
        if let Some(h) = self.hystart.as_mut() {
            h.on_congestion();
        }
    }

    fn vars(&self) -> &'static [VarSpec] {
        VARS
    }

    fn var(&self, name: &str) -> Option<f64> {
        Some(match name {
            "w_max" => self.w_max,
            "k" => self.k,
            "w_est" => self.w_est,
            "cwnd_epoch" => self.cwnd_epoch,
            "epoch_start" => self.t_epoch.map_or(f64::NAN, secs),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::time::MS;
    use crate::tcp::cc::testkit::{window, Setup, TestSender, MSS};

    /// `cc` with a window of 10 segments in flight, in slow start up to `ssthresh` segments.
    fn sender(cc: Cubic, ssthresh: u64) -> TestSender<Cubic> {
        TestSender::new(cc, window(MSS, 10, ssthresh).with_flight(10))
    }

    fn segs(st: &CcState) -> f64 {
        st.cwnd as f64 / MSS as f64
    }

    /// A loss at `w_max` segments (all in flight), handled as the sender does (cwnd = ssthresh).
    fn loss_at(s: &mut TestSender<Cubic>, w_max: u64) {
        s.st.cwnd = w_max * MSS;
        s.st.flight_size = w_max * MSS;
        s.congestion(Congestion::Loss);
    }

    /// One RTT of ACKs, one per segment of the window, evenly spread; calls `each` after
    /// every ACK.
    fn rtt_of_acks(s: &mut TestSender<Cubic>, rtt: Time, mut each: impl FnMut(&Cubic, &CcState)) {
        let n = s.cwnd_segs();
        for _ in 0..n {
            s.ack_after(rtt / n, Ack { acked: MSS, ..Ack::default() });
            each(&s.cc, &s.st);
        }
    }

    #[test]
    fn ssthresh_after_loss_is_beta_times_the_window() {
        let mut cc = Cubic::default();
        let mut st = window(MSS, 100, 1 << 20).with_flight(100);
        assert_eq!(cc.ssthresh(&st, Congestion::Loss), 70_000);
        // With ECN-Echo too, and never below 2 segments.
        st.flight_size = 2 * MSS;
        st.cwnd = 2 * MSS;
        assert_eq!(cc.ssthresh(&st, Congestion::Ecn), 2 * MSS);
        // beta is a parameter.
        let mut cc = Cubic::new(C, 0.5, true, true, false);
        let st = window(MSS, 100, 1 << 20).with_flight(100);
        assert_eq!(cc.ssthresh(&st, Congestion::Loss), 50_000);
    }

    #[test]
    fn ssthresh_follows_the_flight_size_as_rfc_9438_says() {
        let mut cc = Cubic::default();
        let mut st = window(MSS, 100, 1 << 20).with_flight(60);
        assert_eq!(cc.ssthresh(&st, Congestion::Loss), 42_000);
        // W_max is the window, though.
        assert_eq!(cc.w_max(), 100.0);
        // Data SACKed but not cumulatively acknowledged does not count beyond the window.
        st.flight_size = 800 * MSS;
        assert_eq!(cc.ssthresh(&st, Congestion::Timeout), 70_000);
    }

    #[test]
    fn k_is_the_time_to_regain_w_max_from_beta_w_max() {
        let mut s = sender(Cubic::default(), 1 << 20);
        s.st.srtt = Some(100 * MS);
        loss_at(&mut s, 1000);
        s.st.now = 5 * SEC;
        s.ack(Ack { acked: MSS, ..Ack::default() });
        let k = (1000.0 * (1.0 - BETA) / C).cbrt();
        assert!((s.cc.k() - k).abs() < 1e-12, "K {} vs {k}", s.cc.k());
        assert_eq!(s.cc.epoch_start(), Some(5 * SEC));
        // W_cubic(0) is the reduced window and W_cubic(K) is W_max.
        assert!((s.cc.w_cubic(0.0) - 700.0).abs() < 1e-9);
        assert!((s.cc.w_cubic(k) - 1000.0).abs() < 1e-12);
    }

    #[test]
    fn traced_variables_are_the_rfc_state() {
        let read = |cc: &Cubic| VARS.iter().map(|v| cc.var(v.name).unwrap()).collect::<Vec<_>>();
        let mut s = sender(Cubic::default(), 1 << 20);
        // No stage yet: W_max 0, no epoch start.
        let v = read(&s.cc);
        assert_eq!(v[..4], [0.0, 0.0, 0.0, 0.0]);
        assert!(v[4].is_nan());
        // The test above: a loss at 1000 segments, the stage starting at 5 s from 700 with
        // K = cbrt(1000 (1 - 0.7) / 0.4) = cbrt(750) s; W_est starts at cwnd_epoch.
        s.st.srtt = Some(100 * MS);
        loss_at(&mut s, 1000);
        s.st.now = 5 * SEC;
        s.ack(Ack { acked: MSS, ..Ack::default() });
        let v = read(&s.cc);
        assert_eq!([v[0], v[3], v[4]], [1000.0, 700.0, 5.0]);
        assert!((v[1] - 750f64.cbrt()).abs() < 1e-12, "K {}", v[1]);
        assert!(v[2] >= 700.0 && v[2] < 700.1, "W_est {} just past cwnd_epoch", v[2]);
        assert_eq!(s.cc.var("cwnd"), None);
    }

    #[test]
    fn after_a_loss_the_window_follows_the_cubic_function_within_one_segment() {
        // W_max = 1000 segments, RTT 100 ms: K = 9.09 s; the cubic curve is far above the
        // Reno estimate, so the window follows W_cubic through the concave region, the
        // plateau and into the convex region.
        let mut s = sender(Cubic::default(), 1 << 20);
        let rtt = 100 * MS;
        s.st.srtt = Some(rtt);
        loss_at(&mut s, 1000);
        let start = s.st.now;
        let mut worst: f64 = 0.0;
        let mut reached = 0.0;
        while s.st.now < start + 14 * SEC {
            rtt_of_acks(&mut s, rtt, |cc, st| {
                // The stage starts at the first ACK, one ACK spacing after `start`.
                let t = (st.now - cc.epoch_start().unwrap()) as f64 / SEC as f64;
                let closed = C * (t - cc.k()).powi(3) + 1000.0;
                worst = worst.max((segs(st) - closed).abs());
                reached = segs(st);
            });
        }
        assert!(worst <= 1.0, "largest deviation from C (t - K)^3 + W_max: {worst} segments");
        // Convex region: at t >= K + 4 s the curve is 0.4 * 4^3 = 25.6 segments above W_max.
        assert!(reached > 1025.6, "convex region reached: {reached}");
    }

    #[test]
    fn in_the_reno_friendly_region_the_window_is_never_below_w_est() {
        // Small W_max, long RTT: Reno's estimate outgrows the cubic curve.
        let mut s = sender(Cubic::default(), 1 << 20);
        let rtt = 200 * MS;
        s.st.srtt = Some(rtt);
        loss_at(&mut s, 20);
        let mut friendly_acks = 0;
        for _ in 0..60 {
            rtt_of_acks(&mut s, rtt, |cc, st| {
                let t = (st.now - cc.epoch_start().unwrap()) as f64 / SEC as f64;
                if cc.w_cubic(t) < cc.w_est() {
                    friendly_acks += 1;
                    assert!(segs(st) >= cc.w_est() - 2e-3, "cwnd {} < W_est {}", segs(st), cc.w_est());
                }
            });
        }
        assert!(friendly_acks > 100, "the region was visited ({friendly_acks} ACKs)");
    }

    #[test]
    fn w_est_grows_by_alpha_cubic_per_window_then_by_one_after_cwnd_prior() {
        // Loss at 20 segments: W_est starts at 14 and must grow alpha_cubic (0.53) segments
        // per window of ACKs until it reaches cwnd_prior = 20, then one per window.
        let mut s = sender(Cubic::default(), 1 << 20);
        let rtt = 200 * MS;
        s.st.srtt = Some(rtt);
        loss_at(&mut s, 20);
        let alpha = 3.0 * (1.0 - BETA) / (1.0 + BETA);
        let (mut slow, mut fast) = (0, 0);
        for _ in 0..40 {
            let before = s.cc.w_est();
            rtt_of_acks(&mut s, rtt, |_, _| {});
            if s.cc.epoch_start().is_none() || before == 0.0 {
                continue; // the first window starts the stage
            }
            let inc = s.cc.w_est() - before;
            // sum of rate / cwnd over about cwnd ACKs; cwnd grows a little within the RTT.
            if s.cc.w_est() < 20.0 {
                slow += 1;
                assert!(inc <= alpha + 1e-9 && inc > 0.9 * alpha, "{inc} at W_est {before}");
            } else if before >= 20.0 {
                fast += 1;
                assert!(inc <= 1.0 + 1e-9 && inc > 0.9, "{inc} at W_est {before}");
            }
        }
        assert!(slow >= 5 && fast >= 5, "{slow} windows below cwnd_prior, {fast} above");
    }

    #[test]
    fn without_tcp_friendliness_the_window_follows_the_cubic_curve_only() {
        let mut on = sender(Cubic::default(), 1 << 20);
        let mut off = sender(Cubic::new(C, BETA, false, true, false), 1 << 20);
        for s in [&mut on, &mut off] {
            s.st.srtt = Some(200 * MS);
            loss_at(s, 20);
            for _ in 0..20 {
                rtt_of_acks(s, 200 * MS, |_, _| {});
            }
        }
        // After 4 s: W_cubic(4) = 0.4 (4 - 2.47)^3 + 20 = 21.4; Reno would be near 27.
        assert!(segs(&off.st) < 22.5, "cubic only: {}", segs(&off.st));
        assert!(segs(&on.st) > 25.0, "Reno-friendly: {}", segs(&on.st));
    }

    #[test]
    fn fast_convergence_lowers_w_max_when_a_loss_comes_below_the_previous_one() {
        let mut s = sender(Cubic::default(), 1 << 20);
        loss_at(&mut s, 1000);
        assert_eq!(s.cc.w_max(), 1000.0);
        loss_at(&mut s, 800);
        assert!((s.cc.w_max() - 800.0 * (1.0 + BETA) / 2.0).abs() < 1e-9, "{}", s.cc.w_max());
        // A loss above the previous W_max sets it to the window.
        loss_at(&mut s, 900);
        assert_eq!(s.cc.w_max(), 900.0);
        // Without fast convergence, W_max is always the window.
        s.cc = Cubic::new(C, BETA, true, false, false);
        loss_at(&mut s, 1000);
        loss_at(&mut s, 800);
        assert_eq!(s.cc.w_max(), 800.0);
    }

    #[test]
    fn growth_per_rtt_is_at_most_half_the_window() {
        // Far past K the cubic target is clamped to 1.5 cwnd.
        let mut s = sender(Cubic::new(C, BETA, false, true, false), 1 << 20);
        s.st.srtt = Some(100 * MS);
        loss_at(&mut s, 100);
        s.st.now = 0;
        s.ack(Ack { acked: MSS, ..Ack::default() });
        s.st.now = 100 * SEC; // W_cubic is astronomically large now
        let before = segs(&s.st);
        rtt_of_acks(&mut s, 100 * MS, |_, _| {});
        let after = segs(&s.st);
        assert!(after <= 1.5 * before + 1e-9 && after >= 1.49 * before, "{before} -> {after}");
        // Per ACK: (1.5 cwnd - cwnd) / cwnd = half a segment.
        let mut st2 = s.st.clone();
        let c0 = st2.cwnd;
        st2.now += MS;
        s.cc.on_ack(&mut st2, &Ack { acked: MSS, ..Ack::default() });
        assert!((st2.cwnd - c0) as f64 <= 0.5 * MSS as f64 + 1.0);
    }

    #[test]
    fn after_a_timeout_the_stage_starts_with_k_zero_at_the_current_window() {
        let mut s = sender(Cubic::default(), 1 << 20);
        s.st.srtt = Some(100 * MS);
        loss_at(&mut s, 1000);
        // A timeout: ssthresh = 0.7 * flight, cwnd = 1 segment, slow start up to ssthresh.
        s.st.flight_size = 700 * MSS;
        s.congestion(Congestion::Timeout);
        assert_eq!((s.st.ssthresh, s.st.cwnd), (490 * MSS, MSS));
        s.st.ssthresh = 20 * MSS; // keep the slow start short
        while s.st.in_slow_start() {
            s.ack_after(MS, Ack { acked: MSS, ..Ack::default() });
        }
        s.ack_after(MS, Ack { acked: MSS, ..Ack::default() });
        assert_eq!(s.cc.k(), 0.0);
        assert_eq!(s.cc.w_max(), 20.0);
        // alpha_cubic, as W_est (20) is below cwnd_prior (700).
        assert!((s.cc.w_est() - (20.0 + 3.0 * (1.0 - BETA) / (1.0 + BETA) / 20.0)).abs() < 1e-12);
    }

    #[test]
    fn the_first_stage_after_slow_start_is_convex_from_the_current_window() {
        let mut s = sender(Cubic::default(), 12);
        s.st.srtt = Some(100 * MS);
        // Slow start to ssthresh; the leftover of the ACK that crosses it is avoidance.
        s.ack(Ack { acked: 2 * MSS, ..Ack::default() });
        s.ack(Ack { acked: 2 * MSS, ..Ack::default() });
        // No reduction yet: cwnd_prior = 0, so W_est grows at Reno's rate: 12 + 2/12.
        assert!((segs(&s.st) - (12.0 + 2.0 / 12.0)).abs() < 2e-3, "{}", segs(&s.st));
        assert_eq!(s.cc.w_max(), 12.0);
        assert_eq!(s.cc.k(), 0.0);
    }

    #[test]
    fn hystart_drives_the_initial_slow_start_when_enabled() {
        let mut cc = Cubic::new(C, BETA, true, true, true);
        let mut st = window(MSS, 10, None).with_flight(10);
        st.snd_una = MSS;
        cc.on_ack(&mut st, &Ack { acked: 4 * MSS, rtt: Some(100 * MS), ..Ack::default() });
        // RFC 9406 L = 8: a stretch ACK of 4 segments grows by 4 (RFC 3465's L = 2 would say 2).
        assert_eq!(st.cwnd, 14 * MSS);
        cc.ssthresh(&st, Congestion::Loss);
        assert!(!cc.hystart().unwrap().active());
    }
}
