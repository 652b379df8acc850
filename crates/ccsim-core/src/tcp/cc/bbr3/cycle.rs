//! BBR v3's ProbeBW cycle: DOWN, CRUISE, REFILL, UP, when to probe, and the long-term bounds
//! the probes adapt (Linux `bbr_update_cycle_phase`, `bbr_adapt_upper_bounds`,
//! `bbr_check_time_to_probe_bw`, `bbr_is_reno_coexistence_probe_time`, `bbr_pick_probe_wait`,
//! `bbr_start_bw_probe_*`, `bbr_raise_inflight_hi_slope`, `bbr_probe_inflight_hi_upward`,
//! `bbr_advance_max_bw_filter`; the draft's "ProbeBW" section).

use super::*;

impl Bbr3 {
    /// `bbr_update_cycle_phase`, on every ACK once the pipe was full.
    pub(super) fn update_cycle_phase(
        &mut self,
        st: &CcState,
        rs: &RateSample,
        tx: &TxSample,
        sample_bw: f64,
        app_limited: bool,
    ) {
        if !self.full_bw_reached {
            return;
        }
        if self.adapt_upper_bounds(st, rs, tx, app_limited) {
            return;
        }
        let Mode::ProbeBw(phase) = self.mode else { return };
        let mss = st.mss as u64;
        let inflight = self.in_net_at_edt(mss, rs.prior_in_flight);
        match phase {
            Phase::Cruise => {
                self.check_time_to_probe_bw(st);
            }
            Phase::Refill => {
                // After a round of REFILL its own samples arrive: probe.
                if self.round_start {
                    self.bw_probe_samples = true;
                    self.start_bw_probe_up(st, sample_bw);
                }
            }
            Phase::Up => {
                let mut done = false;
                if self.prev_probe_too_high && inflight >= self.inflight_hi {
                    // The last probe went too high at this level: stop here, re-probe if safe.
                    self.stopped_risky_probe = true;
                    done = true;
                } else if self.tx.is_cwnd_limited(st) && st.cwnd >= self.inflight_hi {
                    // inflight_hi limits the growth: no plateau can be measured yet.
                    self.reset_full_bw();
                    self.full_bw = sample_bw;
                } else if self.full_bw_now {
                    done = true;
                }
                if done {
                    self.prev_probe_too_high = false;
                    self.start_bw_probe_down(st);
                }
            }
            Phase::Down => {
                if self.check_time_to_probe_bw(st) {
                    return;
                }
                if self.check_time_to_cruise(mss, inflight, self.max_bw()) {
                    self.start_bw_probe_cruise();
                }
            }
        }
    }

    /// `bbr_adapt_upper_bounds`: the probe's feedback phases, the max filter's window, and
    /// `inflight_hi` down on too much loss or CE, up when a higher level proved safe. True if
    /// it started a new phase.
    fn adapt_upper_bounds(&mut self, st: &CcState, rs: &RateSample, tx: &TxSample, app_limited: bool) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            // The probe's samples are over: the best time to forget the previous cycle's.
            self.bw_probe_samples = false;
            self.ack_phase = AckPhase::Init;
            let in_probe_bw = matches!(self.mode, Mode::ProbeBw(_));
            if in_probe_bw && !app_limited {
                self.advance_max_bw_filter();
            }
            // A probe stopped at the risky level without excess loss: probe again, this time
            // holding inflight_hi for a round.
            if in_probe_bw && self.stopped_risky_probe && !self.prev_probe_too_high {
                self.start_bw_probe_refill(st, 0);
                return true;
            }
        }
        if self.is_inflight_too_high(tx, rs.delivered) {
            if self.bw_probe_samples {
                self.handle_inflight_too_high(st, tx.tx_in_flight, app_limited);
            }
        } else {
            if self.inflight_hi == UNSET {
                return false;
            }
            // Robust to random loss: a level proved safe in any phase raises the bound.
            if tx.tx_in_flight > self.inflight_hi {
                self.inflight_hi = tx.tx_in_flight;
            }
            if self.mode == Mode::ProbeBw(Phase::Up) {
                self.probe_inflight_hi_upward(st, rs);
            }
        }
        false
    }

    /// `bbr_advance_max_bw_filter`: the current slot becomes the previous one, unless it is
    /// empty.
    fn advance_max_bw_filter(&mut self) {
        if self.bw_hi[1] == 0.0 {
            return;
        }
        self.bw_hi[0] = self.bw_hi[1];
        self.bw_hi[1] = 0.0;
    }

    /// `bbr_raise_inflight_hi_slope`: each round of UP doubles the growth of `inflight_hi`.
    fn raise_inflight_hi_slope(&mut self, st: &CcState) {
        let mss = st.mss as u64;
        let growth = 1u64 << self.bw_probe_up_rounds;
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(MAX_PROBE_UP_ROUNDS);
        self.bw_probe_up_cnt = (st.cwnd / mss / growth).max(1) * mss;
    }

    /// `bbr_probe_inflight_hi_upward`: while cwnd-limited at `inflight_hi`, one packet more
    /// per `bw_probe_up_cnt` bytes (S)ACKed.
    fn probe_inflight_hi_upward(&mut self, st: &CcState, rs: &RateSample) {
        if !self.tx.is_cwnd_limited(st) || st.cwnd < self.inflight_hi {
            return;
        }
        self.bw_probe_up_acks += rs.newly_acked;
        if self.bw_probe_up_acks >= self.bw_probe_up_cnt {
            let delta = self.bw_probe_up_acks / self.bw_probe_up_cnt;
            self.bw_probe_up_acks -= delta * self.bw_probe_up_cnt;
            self.inflight_hi += delta * st.mss as u64;
        }
        if self.round_start {
            self.raise_inflight_hi_slope(st);
        }
    }

    /// `bbr_check_time_to_probe_bw`: from DOWN or CRUISE to REFILL, at once after a cycle with
    /// CE marks and no loss, else when the wall-clock wait or the Reno-coexistence rounds are
    /// up. True if it started REFILL.
    fn check_time_to_probe_bw(&mut self, st: &CcState) -> bool {
        if self.ecn_eligible && self.ecn_in_cycle && !self.loss_in_cycle && st.ca_state == CaState::Open {
            // Grow inflight_hi from about half of itself: 2^n packets in the first round.
            let half = if self.inflight_hi == UNSET {
                u64::from(u32::MAX) / 2
            } else {
                (self.inflight_hi as f64 / st.mss as f64 * ECN_REPROBE_GAIN) as u64
            };
            let n = if half == 0 { 0 } else { half.ilog2().min(MAX_PROBE_UP_ROUNDS) };
            self.start_bw_probe_refill(st, n);
            return true;
        }
        if st.now > self.cycle_mstamp + self.probe_wait || self.is_reno_coexistence_probe_time(st) {
            self.start_bw_probe_refill(st, 0);
            return true;
        }
        false
    }

    /// `bbr_is_reno_coexistence_probe_time`: as many rounds as a Reno flow with our target
    /// in flight would take between losses, at most 63.
    fn is_reno_coexistence_probe_time(&self, st: &CcState) -> bool {
        let target_packets = self.target_inflight(st) / st.mss as u64;
        let rounds = (BW_PROBE_MAX_ROUNDS as u64).min(target_packets);
        self.rounds_since_probe as u64 >= rounds
    }

    /// `bbr_check_time_to_cruise`: inflight down to the headroom level and to the BDP.
    fn check_time_to_cruise(&self, mss: u64, inflight: u64, bw: f64) -> bool {
        if inflight > self.inflight_with_headroom(mss) {
            return false;
        }
        inflight <= self.inflight(mss, bw, 1.0)
    }

    /// `bbr_pick_probe_wait`: a round count of 0 or 1, and a wall-clock wait of 2 s plus a
    /// uniform draw below 1 s (in whole microseconds).
    pub(super) fn pick_probe_wait(&mut self) {
        self.rounds_since_probe = self.rng.range_u64(0, BW_PROBE_RAND_ROUNDS) as u32;
        let rand_us = self.rng.range_u64(0, BW_PROBE_RAND / crate::sim::time::US);
        self.probe_wait = BW_PROBE_BASE + rand_us * crate::sim::time::US;
    }

    /// `bbr_start_bw_probe_down`: a new cycle.
    pub(super) fn start_bw_probe_down(&mut self, st: &CcState) {
        self.reset_congestion_signals();
        self.bw_probe_up_cnt = UNSET;
        self.pick_probe_wait();
        self.cycle_mstamp = st.now;
        self.ack_phase = AckPhase::ProbeStopping;
        self.next_rtt_delivered = st.delivered;
        self.mode = Mode::ProbeBw(Phase::Down);
    }

    /// `bbr_start_bw_probe_cruise`.
    pub(super) fn start_bw_probe_cruise(&mut self) {
        if self.inflight_lo != UNSET {
            self.inflight_lo = self.inflight_lo.min(self.inflight_hi);
        }
        self.mode = Mode::ProbeBw(Phase::Cruise);
    }

    /// `bbr_start_bw_probe_refill`: the short-term model is dropped; UP will start its
    /// `inflight_hi` growth at `2^up_rounds` packets per round.
    fn start_bw_probe_refill(&mut self, st: &CcState, up_rounds: u32) {
        self.reset_lower_bounds();
        self.bw_probe_up_rounds = up_rounds;
        self.bw_probe_up_acks = 0;
        self.stopped_risky_probe = false;
        self.ack_phase = AckPhase::Refilling;
        self.next_rtt_delivered = st.delivered;
        self.mode = Mode::ProbeBw(Phase::Refill);
    }

    /// `bbr_start_bw_probe_up`.
    fn start_bw_probe_up(&mut self, st: &CcState, sample_bw: f64) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.next_rtt_delivered = st.delivered;
        self.cycle_mstamp = st.now;
        self.reset_full_bw();
        self.full_bw = sample_bw;
        self.mode = Mode::ProbeBw(Phase::Up);
        self.raise_inflight_hi_slope(st);
    }
}
