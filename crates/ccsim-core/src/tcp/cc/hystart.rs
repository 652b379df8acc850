//! HyStart++: delay-based slow-start exit with Conservative Slow Start (RFC 9406).
//!
//! A building block, not a registered algorithm: a congestion control that wants it (CUBIC
//! with `hystart = true`) hands every slow-start ACK to [`HyStartPlusPlus::on_ack`] instead
//! of growing the window itself, and calls [`HyStartPlusPlus::on_congestion`] on any
//! congestion event.
//!
//! Source: RFC 9406 §4.2 (algorithm) and §4.3 (constants and tuning).
//! - Rounds (§4.2): a round ends when SND.UNA passes `windowEnd`, the SND.NXT recorded when
//!   the round began, both read from [`CcState`].
//! - Slow start grows by `min(N, L * SMSS)` per ACK, N being the bytes newly acknowledged;
//!   with `L = 8` as §4.3 recommends for a sender without pacing (ccsim does not pace).
//!   Growth never crosses ssthresh (RFC 5681 §3.1), and what is left of the ACK is returned
//!   to the caller for congestion avoidance.
//! - After `N_RTT_SAMPLE` samples in a round, if the round's minimum RTT exceeds the previous
//!   round's by `RttThresh = clamp(lastRoundMinRTT / MIN_RTT_DIVISOR, MIN_RTT_THRESH,
//!   MAX_RTT_THRESH)`, slow start ends and Conservative Slow Start (CSS) begins, with
//!   `cssBaselineMinRtt = currentRoundMinRTT`.
//! - CSS grows by `min(N, L * SMSS) / CSS_GROWTH_DIVISOR`. If a round's minimum RTT (after
//!   `N_RTT_SAMPLE` samples) falls below the baseline, the exit was spurious and slow start
//!   resumes. After `CSS_ROUNDS` rounds in CSS, `ssthresh = cwnd`: congestion avoidance.
//!   Choice: the round in which CSS was entered counts as the first of the `CSS_ROUNDS`
//!   (the round counter advances at each round boundary passed in CSS), as in ngtcp2.
//! - A loss or ECN-Echo in slow start or CSS is handled by the congestion control's normal
//!   response; HyStart++ is then finished for the connection (§4.3: "use HyStart++ only for
//!   the initial slow start", later slow starts exit at the ssthresh they inherited). This
//!   also settles whether HyStart++ applies after an RTO: it does not.

use super::CcState;
use crate::sim::time::{Time, MS};

/// RFC 9406 §4.3: lower bound of the RTT increase that ends slow start.
pub const MIN_RTT_THRESH: Time = 4 * MS;
/// RFC 9406 §4.3: upper bound of the RTT increase that ends slow start.
pub const MAX_RTT_THRESH: Time = 16 * MS;
/// RFC 9406 §4.3: the threshold is the last round's minimum RTT divided by this.
pub const MIN_RTT_DIVISOR: Time = 8;
/// RFC 9406 §4.3: RTT samples needed in a round before it is judged.
pub const N_RTT_SAMPLE: u32 = 8;
/// RFC 9406 §4.3: CSS grows this many times slower than slow start.
pub const CSS_GROWTH_DIVISOR: u64 = 4;
/// RFC 9406 §4.3: rounds spent in CSS before congestion avoidance.
pub const CSS_ROUNDS: u32 = 5;
/// RFC 9406 §4.3: at most `L` SMSS per ACK when the sender does not pace.
pub const L_UNPACED: u64 = 8;

/// Where HyStart++ has the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Standard slow start with delay-increase detection.
    SlowStart,
    /// Conservative Slow Start.
    Css,
    /// Finished: congestion avoidance or any slow start after a congestion event.
    Done,
}

/// HyStart++ state (RFC 9406 §4.2 names).
#[derive(Clone, Debug)]
pub struct HyStartPlusPlus {
    phase: Phase,
    /// SND.NXT when the current round began; `None` before the first ACK.
    window_end: Option<u64>,
    last_round_min_rtt: Option<Time>,
    current_round_min_rtt: Option<Time>,
    rtt_sample_count: u32,
    css_baseline_min_rtt: Option<Time>,
    /// Round boundaries passed since CSS began.
    css_rounds: u32,
}

impl Default for HyStartPlusPlus {
    fn default() -> Self {
        Self::new()
    }
}

impl HyStartPlusPlus {
    /// Fresh state at connection start.
    pub fn new() -> Self {
        HyStartPlusPlus {
            phase: Phase::SlowStart,
            window_end: None,
            last_round_min_rtt: None,
            current_round_min_rtt: None,
            rtt_sample_count: 0,
            css_baseline_min_rtt: None,
            css_rounds: 0,
        }
    }

    /// The current phase.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// True while HyStart++ drives slow start (it is used for the initial one only).
    pub fn active(&self) -> bool {
        self.phase != Phase::Done
    }

    /// A congestion event: the caller's normal response takes over for good (§4.2, §4.3).
    pub fn on_congestion(&mut self) {
        self.phase = Phase::Done;
    }

    /// `RttThresh` of §4.2.
    fn rtt_thresh(last_round_min_rtt: Time) -> Time {
        (last_round_min_rtt / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH, MAX_RTT_THRESH)
    }

    fn start_round(&mut self, snd_nxt: u64) {
        self.window_end = Some(snd_nxt);
        self.last_round_min_rtt = self.current_round_min_rtt;
        self.current_round_min_rtt = None;
        self.rtt_sample_count = 0;
    }

    /// One ACK of `acked` new bytes with RTT sample `rtt`, while `st` is in slow start.
    /// Grows `st.cwnd` (never past ssthresh), and on leaving CSS sets `st.ssthresh = st.cwnd`.
    /// Returns the bytes of this ACK not used by slow start (for congestion avoidance).
    pub fn on_ack(&mut self, st: &mut CcState, acked: u64, rtt: Option<Time>) -> u64 {
        if !self.active() || !st.in_slow_start() {
            return acked;
        }
        // §4.2: the round ends when windowEnd is acknowledged, i.e. SND.UNA passes it (the
        // first ACK for data sent in the new round, whose RTT sample belongs to that round,
        // as Linux's `after(ack, end_seq)`); the new round ends at SND.NXT.
        if self.window_end.is_none_or(|end| st.snd_una > end) {
            self.start_round(st.snd_nxt);
            if self.phase == Phase::Css {
                self.css_rounds += 1;
                if self.css_rounds >= CSS_ROUNDS {
                    // §4.2: CSS_ROUNDS rounds done: congestion avoidance from this window.
                    st.ssthresh = st.cwnd;
                    self.phase = Phase::Done;
                    return acked;
                }
            }
        }

        let mss = st.mss as u64;
        let mut grow = acked.min(L_UNPACED * mss);
        if self.phase == Phase::Css {
            grow /= CSS_GROWTH_DIVISOR;
        }
        let grow = grow.min(st.ssthresh.saturating_sub(st.cwnd));
        st.cwnd += grow;
        // The bytes that carried the window to ssthresh are used; the rest is the caller's.
        let used = if st.in_slow_start() { acked } else { grow.min(acked) };

        if let Some(r) = rtt {
            self.current_round_min_rtt = Some(self.current_round_min_rtt.map_or(r, |m| m.min(r)));
            self.rtt_sample_count += 1;
        }
        if self.rtt_sample_count >= N_RTT_SAMPLE {
            if let (Some(cur), Some(last)) = (self.current_round_min_rtt, self.last_round_min_rtt) {
                match self.phase {
                    Phase::SlowStart if cur >= last + Self::rtt_thresh(last) => {
                        self.css_baseline_min_rtt = Some(cur);
                        self.css_rounds = 0;
                        self.phase = Phase::Css;
                    }
                    Phase::Css if self.css_baseline_min_rtt.is_some_and(|b| cur < b) => {
                        // §4.2: the delay fell back: the exit was spurious.
                        self.css_baseline_min_rtt = None;
                        self.phase = Phase::SlowStart;
                    }
                    _ => {}
                }
            }
        }
        acked - used
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::testkit::{window, Setup, MSS};

    /// One round: the window in flight is acknowledged one segment per ACK, every ACK with
    /// RTT `rtt`; whole new segments are sent as the window allows.
    fn round(h: &mut HyStartPlusPlus, st: &mut CcState, rtt: Time) -> u64 {
        let end = st.snd_nxt;
        let mut growth = 0;
        while st.snd_una < end {
            st.snd_una += MSS;
            st.now += rtt / 16;
            let before = st.cwnd;
            h.on_ack(st, MSS, Some(rtt));
            growth += st.cwnd - before;
            st.snd_nxt = st.snd_una + st.cwnd / MSS * MSS;
        }
        growth
    }

    #[test]
    fn rtt_threshold_is_an_eighth_of_the_last_minimum_clamped_to_4_and_16_ms() {
        assert_eq!(HyStartPlusPlus::rtt_thresh(100 * MS), 12_500_000);
        assert_eq!(HyStartPlusPlus::rtt_thresh(10 * MS), 4 * MS);
        assert_eq!(HyStartPlusPlus::rtt_thresh(1000 * MS), 16 * MS);
    }

    #[test]
    fn slow_start_doubles_per_round_while_the_rtt_is_flat() {
        let mut h = HyStartPlusPlus::new();
        let mut st = window(MSS, 10, None).with_flight(10);
        for k in 1..=4 {
            round(&mut h, &mut st, 100 * MS);
            assert_eq!(st.cwnd, (10 << k) * MSS, "round {k}");
            assert_eq!(h.phase(), Phase::SlowStart);
        }
    }

    #[test]
    fn an_rtt_rise_above_the_threshold_enters_css_which_grows_a_quarter_as_fast() {
        let mut h = HyStartPlusPlus::new();
        let mut st = window(MSS, 16, None).with_flight(16);
        round(&mut h, &mut st, 100 * MS); // cwnd 32
                                          // Threshold: 100 ms / 8 = 12.5 ms. A rise of 12 ms is not enough...
        round(&mut h, &mut st, 112 * MS); // cwnd 64
        assert_eq!(h.phase(), Phase::SlowStart);
        assert_eq!(st.cwnd, 64 * MSS);
        // ...but 112 + 14 = 126 >= 112 + 112/8 = 126 is: CSS after the 8th sample of the round.
        let before = st.cwnd;
        let growth = round(&mut h, &mut st, 126 * MS);
        assert_eq!(h.phase(), Phase::Css);
        // 8 ACKs at full rate (the 8th triggers after its growth), 56 at a quarter.
        assert_eq!(growth, 8 * MSS + 56 * MSS / 4);
        assert_eq!(st.cwnd, before + growth);
        assert_eq!(h.css_baseline_min_rtt, Some(126 * MS));
        // A CSS round at the same delay: every ACK adds a quarter segment.
        let cwnd = st.cwnd;
        let growth = round(&mut h, &mut st, 126 * MS);
        assert_eq!(growth, (cwnd / MSS) * MSS / 4);
        assert_eq!(h.phase(), Phase::Css);
    }

    #[test]
    fn css_returns_to_slow_start_when_the_rtt_falls_back_below_the_baseline() {
        let mut h = HyStartPlusPlus::new();
        let mut st = window(MSS, 16, None).with_flight(16);
        round(&mut h, &mut st, 100 * MS);
        round(&mut h, &mut st, 120 * MS);
        assert_eq!(h.phase(), Phase::Css);
        // The next round's minimum (110 ms) is below the baseline (120 ms): the exit was
        // spurious; slow start resumes after the 8th sample and grows at the full rate again.
        let cwnd = st.cwnd / MSS;
        let growth = round(&mut h, &mut st, 110 * MS);
        assert_eq!(h.phase(), Phase::SlowStart);
        assert_eq!(h.css_baseline_min_rtt, None);
        assert_eq!(growth, 8 * MSS / 4 + (cwnd - 8) * MSS);
    }

    #[test]
    fn after_css_rounds_rounds_in_css_ssthresh_is_set_to_cwnd() {
        let mut h = HyStartPlusPlus::new();
        let mut st = window(MSS, 16, None).with_flight(16);
        round(&mut h, &mut st, 100 * MS);
        round(&mut h, &mut st, 120 * MS); // enters CSS: the first of CSS_ROUNDS
                                          // Rounds 2..=CSS_ROUNDS of CSS.
        for _ in 1..CSS_ROUNDS {
            round(&mut h, &mut st, 120 * MS);
            assert_eq!(h.phase(), Phase::Css);
            assert!(st.in_slow_start());
        }
        // The first ACK of the next round ends CSS: ssthresh = cwnd, nothing grown.
        let cwnd = st.cwnd;
        st.snd_una += MSS;
        let left = h.on_ack(&mut st, MSS, Some(120 * MS));
        assert_eq!(left, MSS, "the ACK is handed back for congestion avoidance");
        assert_eq!(h.phase(), Phase::Done);
        assert_eq!(st.ssthresh, cwnd);
        assert_eq!(st.cwnd, cwnd);
        assert!(!st.in_slow_start());
    }

    #[test]
    fn a_congestion_event_ends_hystart_for_good() {
        let mut h = HyStartPlusPlus::new();
        let mut st = window(MSS, 10, None).with_flight(10);
        h.on_congestion();
        assert!(!h.active());
        st.ssthresh = 100 * MSS;
        st.snd_una += MSS;
        assert_eq!(h.on_ack(&mut st, MSS, Some(MS)), MSS);
        assert_eq!(st.cwnd, 10 * MSS, "the caller's slow start grows the window");
    }

    #[test]
    fn growth_stops_at_ssthresh_and_returns_the_rest() {
        let mut h = HyStartPlusPlus::new();
        let mut st = window(MSS, 10, None).with_flight(10);
        st.ssthresh = 11 * MSS + 500;
        st.snd_una += 3 * MSS;
        let left = h.on_ack(&mut st, 3 * MSS, None);
        assert_eq!(st.cwnd, 11 * MSS + 500);
        assert_eq!(left, 1500);
    }
}
