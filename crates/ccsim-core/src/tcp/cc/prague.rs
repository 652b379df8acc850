//! TCP Prague: De Schepper, Tilmans, Briscoe, Goel, "Prague Congestion Control",
//! draft-briscoe-iccrg-prague-congestion-control-04 (July 2024), and its reference, the L4S
//! team's Linux `tcp_prague.c` (version 0.6), whose defaults the draft describes. The L4S
//! sender of RFC 9330-9332: ECT(1) data (RFC 9331 §5.1), Accurate ECN feedback (RFC 9768;
//! the receiver and the sender's decoding live in `tcp/receiver.rs` and `tcp/sender/`), paced.
//!
//! Control law, as Linux keeps it (fixed point, 2^20 per segment and per unit of alpha):
//! - alpha, the EWMA of the fraction of packets CE-marked over a round trip, `alpha = (1 - g)
//!   alpha + g F` with `g = 1/16`, kept upscaled by 1/g so that its remainder carries
//!   (draft §2.3.2); updated once per round trip (SND.UNA passing the SND.NXT of the round's
//!   start), and not before the first CE mark; initial alpha 1.
//! - The window is a fractional `frac_cwnd`: on the ECN reaction (at most once per window, the
//!   sender's CWR rule) it loses `alpha / 2` of itself (draft §2.4.1); on a fast retransmit or
//!   a timeout it halves (§2.4.2, Reno-friendly). Every ACK adds `acked x ai_ack_increase /
//!   cwnd` for the packets it acknowledged that were *not* CE-marked ("unsaturated" additive
//!   increase, §2.4.3: Prague spends most of its time with marks); the integer cwnd then
//!   steps one segment per ACK towards `frac_cwnd` (setting ssthresh when it steps down).
//! - Slow start (RFC 5681, in segments) until the first reduction.
//! - RTT independence (§2.5, Linux `RTT_CONTROL_RATE`, the default): after `rtt_transition`
//!   rounds of congestion avoidance, a flow whose smoothed RTT is below `rtt_target` (25 ms)
//!   grows by `(srtt / rtt_target)^2` segments per round trip, i.e. at the rate a 25 ms flow
//!   would, and updates alpha and reduces at most once per `rtt_target`.
//! - Pacing (§2.6): at `cwnd x mss / srtt`, twice that while cwnd < ssthresh / 2.
//! - Classic ECN AQM detection and fallback (§2.4.4, Linux `prague_ecn_fallback`, off by
//!   default as in Linux; `ecn_fallback = true`): each round adds half the log2 of the RTT's
//!   mean deviation over 750 us, and half the log2 of the queue delay (srtt - min RTT) over
//!   2 ms when above, to a score kept in [0, 17]; above 8, alpha is kept at least
//!   `0.625 min(score - 8, 1)`, so that the flow competes as a classic one would. The RTT
//!   statistics are Prague's own slow EWMAs of the last-segment RTT, with gain `2^-k`,
//!   `k = min(lg W + lg W / 2 + 1, 18)` for an ssthresh of W segments.
//!
//! Departures from Linux:
//! - Linux's `tcp_slow_start` grows `snd_cwnd` and leaves `frac_cwnd` behind, which the next
//!   step-down would chase; here `frac_cwnd` follows the window in slow start.
//! - cwnd-limited (`tcp_is_cwnd_limited`) is read as "the rate sample is not
//!   application-limited".
//! - RTTs and the scaled increase are computed in nanoseconds, not Linux's 128 us units; the
//!   classic-ECN score uses exact logarithms, not integer logs with carried remainders.
//! - The pacing rate counts payload bytes (Linux: MTU-sized packets); GSO burst sizing
//!   (`max_tso_burst`) and undo (`cwnd_undo`) are not modelled.
//! - Without Accurate ECN Linux falls back to Reno (`prague-reno`); here the feedback is
//!   always Accurate ECN (no handshake negotiates it).

use super::{
    Ack, CaState, CcModel, CcState, Congestion, CongestionControl, EcnFeedback, RateSample, TransportNeeds, VarSpec,
    VarUnit,
};
use crate::params::{ParamKind, ParamSpec, ParamValue, Params};
use crate::registry::Randomness;
use crate::sim::time::{Time, MS};

/// Fixed point: one segment of `frac_cwnd`, and alpha = 1.
const ONE: u64 = 1 << 20;
/// Linux `MIN_CWND` (segments): the step-down stops here.
const MIN_CWND: u64 = 2;

static PARAMS: &[ParamSpec] = &[
    ParamSpec::new(
        "g_shift",
        ParamKind::Int,
        Some(ParamValue::Int(4)),
        "alpha's EWMA gain is 2^-g_shift (draft §2.3.2, Linux PRAGUE_SHIFT_G: 4, g = 1/16)",
    )
    .range(1.0, 10.0),
    ParamSpec::new(
        "rtt_target",
        ParamKind::Time,
        Some(ParamValue::Int(25 * MS as i64)),
        "RTT independence: flows below it grow as one with this RTT (draft §2.5, Linux prague_rtt_target: 25ms)",
    )
    .range(1.0, 10e9),
    ParamSpec::new(
        "rtt_transition",
        ParamKind::Int,
        Some(ParamValue::Int(500)),
        "rounds of congestion avoidance before RTT independence applies (Linux prague_rtt_transition: 500)",
    )
    .range(0.0, 1e9),
    ParamSpec::new(
        "rtt_scaling",
        ParamKind::Bool,
        Some(ParamValue::Bool(true)),
        "RTT independence on (Linux RTT_CONTROL_RATE, the default) or off (RTT_CONTROL_NONE)",
    ),
    ParamSpec::new(
        "ecn_fallback",
        ParamKind::Bool,
        Some(ParamValue::Bool(false)),
        "detect a classic ECN AQM from RTT variation and queue delay and respond as classic (Linux prague_ecn_fallback: off)",
    ),
];

/// Registration.
pub const MODEL: CcModel = CcModel {
    name: "prague",
    doc: "TCP Prague (draft-briscoe-iccrg-prague-congestion-control-04, L4S Linux tcp_prague.c): cwnd (1 - alpha/2) per CE episode, unsaturated additive increase, RTT independence; needs ECN (implied), ECT(1) (implied unless ect1 = false), AccECN feedback (RFC 9768), paced (implied unless pacing = false)",
    params: PARAMS,
    random: Randomness::Never,
    partner_queues: &["dualpi2"],
    build: |p: &Params, _| Box::new(Prague::new(p)),
};

/// Prague's classic-ECN-AQM detector (module header).
#[derive(Debug, Default)]
struct ClassicDetector {
    /// Slow EWMA of the last-segment RTT (ns) and of its mean deviation (ns).
    srtt: f64,
    mdev: f64,
    /// log2 of the inverse EWMA gain of `srtt` (`mdev`'s is one more).
    shift: u32,
    /// The score, in units of alpha (0 pure L4S .. 17 pure classic).
    score: f64,
}

impl ClassicDetector {
    const L_STICKY: f64 = 8.0;
    const CLASSIC: f64 = 9.0;
    const C_STICKY: f64 = 17.0;

    fn new() -> Self {
        ClassicDetector { shift: 18, ..Default::default() }
    }

    fn sample(&mut self, rtt: Time) {
        let m = rtt as f64;
        if self.srtt == 0.0 {
            self.srtt = m;
            self.mdev = 1e3; // 1 us, Linux's initial mdev
            return;
        }
        let err = m - self.srtt;
        self.srtt += err / (1u64 << self.shift) as f64;
        self.mdev += (err.abs() - self.mdev) / (1u64 << (self.shift + 1)) as f64;
    }

    /// `prague_update_rtt_scaling`: the gains follow the window (ssthresh, segments).
    fn set_window(&mut self, ssthresh_segs: u64) {
        let lg = 63 - ssthresh_segs.max(1).leading_zeros();
        self.shift = (lg + lg / 2 + 1).min(18);
    }

    /// Once per round.
    fn update(&mut self, min_rtt: Option<Time>) {
        let Some(min_rtt) = min_rtt.filter(|_| self.srtt > 0.0) else { return };
        let us = |ns: f64| (ns / 1e3).max(1.0);
        self.score += 0.5 * (us(self.mdev).log2() - 750f64.log2());
        let depth = self.srtt - min_rtt as f64;
        if depth > 0.0 {
            self.score += 0.5 * (us(depth).log2() - 2000f64.log2()).max(0.0);
        }
        self.score = self.score.clamp(0.0, Self::C_STICKY);
    }

    /// The least alpha (fixed point) the score allows.
    fn alpha_floor(&self) -> u64 {
        if self.score <= Self::L_STICKY {
            return 0;
        }
        let c = self.score.min(Self::CLASSIC) - Self::L_STICKY;
        (c * 0.625 * ONE as f64) as u64
    }
}

/// TCP Prague.
#[derive(Debug)]
pub struct Prague {
    g_shift: u32,
    rtt_target: Time,
    rtt_transition: u32,
    rtt_scaling: bool,
    fallback: Option<ClassicDetector>,
    started: bool,
    /// alpha x 2^20 / g.
    upscaled_alpha: u64,
    /// Increase per non-marked segment acknowledged, x 2^20 (then divided by cwnd).
    ai_ack_increase: u64,
    /// The window, segments x 2^20.
    frac_cwnd: u64,
    in_loss: bool,
    saw_ce: bool,
    /// CE-marked packets fed back so far (Linux `delivered_ce`).
    delivered_ce: u64,
    /// The round: SND.NXT, bytes delivered and CE packets at its start; rounds of congestion
    /// avoidance so far.
    next_seq: u64,
    old_delivered: u64,
    old_delivered_ce: u64,
    round: u32,
    /// Last alpha update and last ECN reduction.
    alpha_stamp: Time,
    cwr_stamp: Time,
    pacing: Option<f64>,
}

impl Prague {
    /// From validated parameters.
    pub fn new(p: &Params) -> Self {
        let g_shift = p.uint("g_shift") as u32;
        Prague {
            g_shift,
            rtt_target: p.uint("rtt_target"),
            rtt_transition: p.uint("rtt_transition") as u32,
            rtt_scaling: p.bool("rtt_scaling"),
            fallback: p.bool("ecn_fallback").then(ClassicDetector::new),
            started: false,
            upscaled_alpha: ONE << g_shift,
            ai_ack_increase: ONE,
            frac_cwnd: 0,
            in_loss: false,
            saw_ce: false,
            delivered_ce: 0,
            next_seq: 0,
            old_delivered: 0,
            old_delivered_ce: 0,
            round: 0,
            alpha_stamp: 0,
            cwr_stamp: 0,
            pacing: None,
        }
    }

    /// alpha as a fraction.
    pub fn alpha(&self) -> f64 {
        (self.upscaled_alpha >> self.g_shift) as f64 / ONE as f64
    }

    fn start(&mut self, st: &CcState) {
        if self.started {
            return;
        }
        self.started = true;
        self.frac_cwnd = (st.cwnd / st.mss as u64) << 20;
        self.alpha_stamp = st.now;
        self.new_round(st);
    }

    fn segs(st: &CcState) -> u64 {
        st.cwnd / st.mss as u64
    }

    /// `prague_frac_cwnd_to_snd_cwnd`: the window rounded up, at least one segment.
    fn frac_segs(&self) -> u64 {
        self.frac_cwnd.div_ceil(ONE).max(1)
    }

    /// `prague_is_rtt_indep`.
    fn rtt_independent(&self, st: &CcState) -> bool {
        self.rtt_scaling && !st.in_slow_start() && self.round >= self.rtt_transition
    }

    /// `prague_ai_ack_increase`, `RTT_CONTROL_RATE`: `(srtt / target)^2` below the target.
    fn update_ai(&mut self, st: &CcState) {
        self.ai_ack_increase = match st.srtt {
            Some(srtt)
                if self.rtt_scaling && self.round >= self.rtt_transition && srtt > 0 && srtt < self.rtt_target =>
            {
                let (r, t) = (srtt as u128, self.rtt_target as u128);
                (((r * r) << 20) + t * t / 2).div_euclid(t * t) as u64
            }
            _ => ONE,
        };
    }

    /// `prague_new_round`.
    fn new_round(&mut self, st: &CcState) {
        self.next_seq = st.snd_nxt;
        self.old_delivered = st.delivered;
        self.old_delivered_ce = self.delivered_ce;
        if !st.in_slow_start() {
            self.round = self.round.saturating_add(1);
        }
        self.update_ai(st);
    }

    /// `prague_update_alpha`: once per round (and per target RTT when RTT-independent).
    fn update_alpha(&mut self, st: &CcState) {
        if self.saw_ce {
            if let Some(d) = &mut self.fallback {
                d.update(st.min_rtt);
            }
            let ce = self.delivered_ce - self.old_delivered_ce;
            let delivered = st.delivered.saturating_sub(self.old_delivered);
            let f = if ce == 0 {
                0
            } else {
                // The fraction of packets marked: CE packets over packets delivered.
                let delivered_segs = delivered.div_ceil(st.mss as u64).max(1);
                ((ce << 20) / delivered_segs).min(ONE)
            };
            let alpha = self.upscaled_alpha - (self.upscaled_alpha >> self.g_shift) + f;
            self.upscaled_alpha = alpha.min(ONE << self.g_shift);
            self.alpha_stamp = st.now;
        }
        self.new_round(st);
    }

    /// `prague_enter_loss`: halve.
    fn enter_loss(&mut self, st: &CcState) {
        self.start(st);
        self.frac_cwnd -= self.frac_cwnd >> 1;
        self.in_loss = true;
        self.update_ai(st);
    }

    /// `prague_update_pacing_rate`.
    fn update_pacing(&mut self, st: &CcState) {
        self.pacing = st.srtt.filter(|&s| s > 0).map(|srtt| {
            let ratio = if st.cwnd < st.ssthresh / 2 { 2.0 } else { 1.0 };
            ratio * st.mss as f64 * (self.frac_cwnd as f64 / ONE as f64) * 1e9 / srtt as f64
        });
    }
}

impl CongestionControl for Prague {
    fn name(&self) -> &'static str {
        "prague"
    }

    /// The window is set in `on_rate_sample`.
    fn on_ack(&mut self, _st: &mut CcState, _ack: &Ack) {}

    fn on_ack_received(&mut self, _st: &CcState, ack: &Ack) {
        if let (Some(d), Some(rtt)) = (&mut self.fallback, ack.rtt_last) {
            d.sample(rtt);
        }
    }

    /// The ECN reaction (`prague_enter_cwr`) or a fast retransmit (`prague_enter_loss`);
    /// ssthresh itself follows the window's steps down.
    fn ssthresh(&mut self, st: &CcState, event: Congestion) -> u64 {
        self.start(st);
        if let Some(d) = &mut self.fallback {
            d.set_window(st.ssthresh / st.mss as u64);
        }
        match event {
            Congestion::Ecn => {
                if self.rtt_independent(st) && st.now < self.cwr_stamp + self.rtt_target {
                    return st.ssthresh;
                }
                self.cwr_stamp = st.now;
                let mut alpha = self.upscaled_alpha >> self.g_shift;
                if let Some(d) = &self.fallback {
                    alpha = alpha.max(d.alpha_floor());
                }
                // alpha x frac / 2, the rounding unbiased.
                let reduction = ((alpha as u128 * self.frac_cwnd as u128 + ONE as u128) >> 21) as u64;
                self.frac_cwnd -= reduction.min(self.frac_cwnd);
            }
            Congestion::Loss => self.enter_loss(st),
            Congestion::Timeout => {} // `on_timeout` halves (Linux CA_EVENT_LOSS)
        }
        st.ssthresh
    }

    fn on_timeout(&mut self, st: &mut CcState) {
        self.enter_loss(st);
    }

    fn on_recovery_exit(&mut self, st: &mut CcState) {
        if st.ca_state == CaState::Open {
            self.in_loss = false;
        }
    }

    fn owns_window(&self) -> bool {
        true
    }

    /// `prague_cong_control`: `prague_update_cwnd`, the alpha update, the pacing rate.
    fn on_rate_sample(&mut self, st: &mut CcState, ack: &Ack, rs: &RateSample) {
        self.start(st);
        let mss = st.mss as u64;
        let mut acked = rs.newly_acked.div_ceil(mss) as i64;
        if ack.ce_packets > 0 {
            self.saw_ce = true;
            self.delivered_ce += ack.ce_packets as u64;
            acked -= ack.ce_packets as i64;
        }
        let mut segs = Self::segs(st);
        let mut grow = acked > 0 && !self.in_loss && !rs.is_app_limited;
        if grow && st.in_slow_start() {
            let ssthresh_segs = (st.ssthresh / mss).max(segs);
            let grown = (segs + acked as u64).min(ssthresh_segs);
            acked -= (grown - segs) as i64;
            segs = grown;
            st.cwnd = segs * mss;
            self.frac_cwnd = segs << 20;
            grow = acked > 0;
            if !grow {
                self.update_ai(st);
            }
        }
        if grow {
            let acked = acked as u64;
            let increase = (acked * self.ai_ack_increase + self.frac_segs() / 2) / self.frac_segs();
            self.frac_cwnd += increase.max(acked);
        }
        // Step the integer window one segment towards the fractional one.
        let target = self.frac_segs();
        if segs > target && segs > MIN_CWND {
            st.cwnd = (segs - 1) * mss;
            st.ssthresh = st.cwnd;
            self.update_ai(st);
        } else if segs < target {
            st.cwnd = (segs + 1) * mss;
            self.update_ai(st);
        }
        let round_over = st.snd_una >= self.next_seq;
        let too_soon = self.rtt_independent(st) && st.now < self.alpha_stamp + self.rtt_target;
        if round_over && !too_soon {
            self.update_alpha(st);
        }
        self.update_pacing(st);
    }

    fn pacing_rate(&self, _st: &CcState) -> Option<f64> {
        self.pacing
    }

    fn needs(&self) -> TransportNeeds {
        TransportNeeds { ecn: true, ecn_feedback: EcnFeedback::Accurate, pacing: true, ect1: true, loss_notice: false }
    }

    fn vars(&self) -> &'static [VarSpec] {
        VARS
    }

    fn var(&self, name: &str) -> Option<f64> {
        Some(match name {
            "alpha" => self.alpha(),
            "frac_cwnd" => self.frac_cwnd as f64 / ONE as f64,
            "rounds" => self.round as f64,
            "classic_score" => self.fallback.as_ref().map_or(f64::NAN, |d| d.score),
            _ => return None,
        })
    }
}

/// Prague's traceable variables (Linux `struct prague` names).
pub static VARS: &[VarSpec] = &[
    VarSpec::new(
        "alpha",
        VarUnit::Fraction,
        "EWMA of the fraction of packets CE-marked per round, from 1, updated from the first mark on (draft §2.3.2, Linux upscaled_alpha)",
    ),
    VarSpec::new(
        "frac_cwnd",
        VarUnit::Segments,
        "the fractional window the integer cwnd steps towards (Linux frac_cwnd); 0 until the first hook call",
    ),
    VarSpec::new("rounds", VarUnit::Count, "round trips of congestion avoidance so far (Linux round)"),
    VarSpec::new(
        "classic_score",
        VarUnit::Number,
        "classic-ECN-AQM detection score, 0 (L4S) to 17 (classic), above 8 alpha is floored (§2.4.4); NaN unless ecn_fallback",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::testkit::{window, MSS};

    fn prague() -> Prague {
        let p = Params::resolve("prague", PARAMS, &Default::default()).unwrap();
        Prague::new(&p)
    }

    /// Feed one ACK of `segs` segments of which `ce` were CE-marked, advancing SND.UNA.
    fn ack(cc: &mut Prague, st: &mut CcState, segs: u64, ce: u32) {
        st.snd_una += segs * MSS;
        st.delivered += segs * MSS;
        let rs = RateSample { newly_acked: segs * MSS, ..RateSample::default() };
        let a = Ack { acked: segs * MSS, ce_packets: ce, ..Ack::default() };
        cc.on_rate_sample(st, &a, &rs);
    }

    fn congestion_avoidance(cwnd: u64) -> CcState {
        let mut st = window(MSS, cwnd, cwnd);
        st.srtt = Some(40 * MS);
        st.snd_nxt = 1_000_000 * MSS;
        st
    }

    #[test]
    fn alpha_is_an_ewma_of_the_marked_fraction_per_round_with_gain_one_sixteenth() {
        let mut cc = prague();
        let mut st = congestion_avoidance(100);
        assert_eq!(cc.alpha(), 1.0);
        // The first ACK closes the first round (next_seq was 0 at start), before any mark:
        // alpha stays 1 until a CE mark has been seen.
        ack(&mut cc, &mut st, 1, 0);
        assert_eq!(cc.alpha(), 1.0);
        // A round of 100 segments, 25 marked: alpha = 15/16 + 1/16 x 1/4.
        cc.next_seq = st.snd_una + 100 * MSS;
        for k in 0..100 {
            ack(&mut cc, &mut st, 1, (k % 4 == 0) as u32);
        }
        let want = 15.0 / 16.0 + 0.25 / 16.0;
        assert!((cc.alpha() - want).abs() < 1e-5, "{} vs {want}", cc.alpha());
        // A round without marks: alpha x 15/16.
        cc.next_seq = st.snd_una + 50 * MSS;
        for _ in 0..50 {
            ack(&mut cc, &mut st, 1, 0);
        }
        assert!((cc.alpha() - want * 15.0 / 16.0).abs() < 1e-5);
    }

    #[test]
    fn traced_variables_are_alpha_and_the_fractional_window() {
        let mut cc = prague();
        let mut st = congestion_avoidance(100);
        let var = |cc: &Prague, name: &str| cc.var(name).unwrap();
        assert_eq!([var(&cc, "alpha"), var(&cc, "frac_cwnd"), var(&cc, "rounds")], [1.0, 0.0, 0.0]);
        assert!(var(&cc, "classic_score").is_nan(), "no fallback by default");
        // The first test's rounds: 1/4 marked, then none: alpha 15/16 + 1/64, then x 15/16.
        ack(&mut cc, &mut st, 1, 0);
        cc.next_seq = st.snd_una + 100 * MSS;
        for k in 0..100 {
            ack(&mut cc, &mut st, 1, (k % 4 == 0) as u32);
        }
        let want = 15.0 / 16.0 + 0.25 / 16.0;
        assert!((var(&cc, "alpha") - want).abs() < 1e-5);
        cc.next_seq = st.snd_una + 50 * MSS;
        for _ in 0..50 {
            ack(&mut cc, &mut st, 1, 0);
        }
        assert!((var(&cc, "alpha") - want * 15.0 / 16.0).abs() < 1e-5);
        assert_eq!(var(&cc, "alpha"), cc.alpha());
        // The window: 100 segments plus the growth of the 113 unmarked ACKs, about one segment.
        assert_eq!(var(&cc, "frac_cwnd"), cc.frac_cwnd as f64 / ONE as f64);
        assert!((101.0..102.0).contains(&var(&cc, "frac_cwnd")), "{}", var(&cc, "frac_cwnd"));
        assert_eq!(var(&cc, "rounds"), 3.0, "three rounds of congestion avoidance started");
    }

    #[test]
    fn an_ecn_reaction_takes_alpha_over_two_of_the_window_and_a_loss_halves_it() {
        let mut cc = prague();
        let mut st = congestion_avoidance(100);
        cc.start(&st);
        cc.upscaled_alpha = (ONE / 4) << cc.g_shift; // alpha = 1/4
        cc.ssthresh(&st, Congestion::Ecn);
        assert_eq!(cc.frac_cwnd, (100 << 20) - (100 << 20) / 8);
        // The integer window follows one segment per ACK (CE-marked ACKs add nothing).
        for _ in 0..20 {
            ack(&mut cc, &mut st, 1, 1);
        }
        assert_eq!(st.cwnd / MSS, 88); // ceil(87.5)
        assert_eq!(st.ssthresh, st.cwnd);
        cc.ssthresh(&st, Congestion::Loss);
        assert_eq!(cc.frac_cwnd, ((100 << 20) - (100 << 20) / 8) / 2);
        assert!(cc.in_loss);
    }

    #[test]
    fn unmarked_acks_add_one_segment_per_window_and_marked_ones_nothing() {
        let mut cc = prague();
        let mut st = congestion_avoidance(50);
        cc.start(&st);
        let before = cc.frac_cwnd;
        for _ in 0..50 {
            ack(&mut cc, &mut st, 1, 0);
        }
        // 50 ACKs of 1/50 segment each (the divisor grows a little on the way).
        let grown = (cc.frac_cwnd - before) as f64 / ONE as f64;
        assert!((0.97..=1.0).contains(&grown), "{grown}");
        let before = cc.frac_cwnd;
        for _ in 0..50 {
            ack(&mut cc, &mut st, 1, 1);
        }
        assert_eq!(cc.frac_cwnd, before);
    }

    #[test]
    fn below_the_target_rtt_an_rtt_independent_flow_grows_as_a_25ms_one() {
        let mut cc = prague();
        let mut st = congestion_avoidance(50);
        st.srtt = Some(5 * MS);
        cc.start(&st);
        // Before the transition: one segment per round.
        assert_eq!(cc.ai_ack_increase, ONE);
        cc.round = cc.rtt_transition;
        cc.update_ai(&st);
        // (5 / 25)^2 = 1/25 segment per 5 ms round, 1/5 segment per 25 ms; a segment of window
        // is worth 5 times more rate at 5 ms than at 25 ms: the rate grows as a 25 ms flow's
        // growing one segment per round.
        assert_eq!(cc.ai_ack_increase, (ONE as f64 / 25.0).round() as u64);
        // At or above the target: unscaled.
        st.srtt = Some(30 * MS);
        cc.update_ai(&st);
        assert_eq!(cc.ai_ack_increase, ONE);
    }

    #[test]
    fn slow_start_grows_by_the_unmarked_segments_and_ends_at_the_first_step_down() {
        let mut cc = prague();
        let mut st = window(MSS, 10, None);
        st.snd_nxt = 1_000 * MSS;
        cc.start(&st);
        ack(&mut cc, &mut st, 2, 0);
        assert_eq!(st.cwnd, 12 * MSS);
        assert_eq!(cc.frac_cwnd, 12 << 20);
        ack(&mut cc, &mut st, 2, 1); // one of two marked: +1
        assert_eq!(st.cwnd, 13 * MSS);
        // The ECN reaction with alpha = 1 halves; the next ACK steps down and sets ssthresh.
        cc.ssthresh(&st, Congestion::Ecn);
        ack(&mut cc, &mut st, 1, 1);
        assert_eq!((st.cwnd, st.ssthresh), (12 * MSS, 12 * MSS));
        assert!(!st.in_slow_start());
    }

    #[test]
    fn the_classic_detector_scores_a_deep_varying_queue_as_classic() {
        let mut d = ClassicDetector::new();
        d.shift = 3;
        // RTT oscillating 40..80 ms over a 20 ms base: mdev ~20 ms, depth ~40 ms.
        for k in 0..400 {
            d.sample(if k % 2 == 0 { 40 * MS } else { 80 * MS });
            if k % 20 == 19 {
                d.update(Some(20 * MS));
            }
        }
        assert_eq!(d.score, ClassicDetector::C_STICKY);
        assert!(d.alpha_floor() as f64 >= 0.6 * ONE as f64);
        // A steady RTT 1 ms above its base: L4S.
        let mut d = ClassicDetector::new();
        d.shift = 3;
        for k in 0..400 {
            d.sample(21 * MS);
            if k % 20 == 19 {
                d.update(Some(20 * MS));
            }
        }
        assert_eq!((d.score, d.alpha_floor()), (0.0, 0));
    }
}
