//! BBR v3's path model: rounds, the congestion signals (loss, ECN) and the short-term bounds
//! they drive, the loss and ECN tests of a probe, Startup's and Drain's exits, and the min RTT
//! with ProbeRTT (Linux `bbr_update_round_start`, `bbr_update_ecn_alpha`,
//! `bbr_update_latest_delivery_signals`, `bbr_update_congestion_signals`,
//! `bbr_adapt_lower_bounds`, `bbr_skb_marked_lost`, `bbr_is_inflight_too_high`,
//! `bbr_inflight_hi_from_lost_skb`, `bbr_handle_inflight_too_high`,
//! `bbr_check_loss_too_high_in_startup`, `bbr_check_full_bw_reached`, `bbr_check_drain`,
//! `bbr_update_min_rtt`, `bbr_check_probe_rtt_done`, `bbr_exit_probe_rtt`).

use super::*;

impl Bbr3 {
    /// `bbr_update_round_start`.
    pub(super) fn update_round_start(&mut self, st: &CcState, rs: &RateSample) {
        self.round_start = false;
        if rs.interval > 0 && rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = st.delivered;
            self.round_count += 1;
            self.round_start = true;
        }
    }

    /// `bbr_update_ecn_alpha`, at a round start: eligibility, then alpha from the fraction of
    /// the bytes delivered since the last update that were CE-marked.
    pub(super) fn update_ecn_alpha(&mut self, st: &CcState) {
        if !self.ecn_eligible
            && self.ecn
            && self.ecn_factor > 0.0
            && (self.ecn_max_rtt == 0 || self.min_rtt.is_some_and(|m| m <= self.ecn_max_rtt))
        {
            self.ecn_eligible = true;
        }
        if !self.ecn_eligible {
            return;
        }
        let delivered = st.delivered.saturating_sub(self.alpha_last_delivered);
        if delivered == 0 {
            return;
        }
        let ce = self.delivered_ce.saturating_sub(self.alpha_last_delivered_ce);
        let ce_ratio = (ce as f64 / delivered as f64).min(1.0);
        self.ecn_alpha = ((1.0 - ECN_ALPHA_GAIN) * self.ecn_alpha + ECN_ALPHA_GAIN * ce_ratio).min(1.0);
        self.alpha_last_delivered = st.delivered;
        self.alpha_last_delivered_ce = self.delivered_ce;
        // bbr_check_ecn_too_high_in_startup
        if self.full_bw_reached || self.ecn_thresh <= 0.0 {
            return;
        }
        if ce_ratio >= self.ecn_thresh {
            self.startup_ecn_rounds += 1;
        } else {
            self.startup_ecn_rounds = 0;
        }
        if self.startup_ecn_rounds >= FULL_ECN_CNT {
            self.handle_queue_too_high_in_startup(st);
        }
    }

    /// `bbr_update_latest_delivery_signals`: this round's max rate and volume, and the loss
    /// round.
    pub(super) fn update_latest_delivery_signals(&mut self, st: &CcState, rs: &RateSample, sample_bw: f64) {
        self.loss_round_start = false;
        if rs.interval == 0 || rs.newly_acked == 0 {
            return;
        }
        self.bw_latest = self.bw_latest.max(sample_bw);
        self.inflight_latest = self.inflight_latest.max(rs.delivered);
        if rs.prior_delivered >= self.loss_round_delivered {
            self.loss_round_delivered = st.delivered;
            self.loss_round_start = true;
        }
    }

    /// `bbr_update_congestion_signals`: the max filter takes the sample; at the end of a loss
    /// round the short-term model adapts and the round's signals clear.
    pub(super) fn update_congestion_signals(
        &mut self,
        st: &CcState,
        rs: &RateSample,
        sample_bw: f64,
        app_limited: bool,
    ) {
        if rs.interval == 0 || rs.newly_acked == 0 {
            return;
        }
        if !app_limited || sample_bw >= self.max_bw() {
            self.bw_hi[1] = self.bw_hi[1].max(sample_bw);
        }
        self.loss_in_round |= rs.newly_lost > 0;
        if !self.loss_round_start {
            return;
        }
        self.adapt_lower_bounds(st);
        self.loss_in_round = false;
        self.ecn_in_round = false;
    }

    /// `bbr_is_probing_bandwidth`: Startup, REFILL and UP.
    pub(super) fn is_probing_bandwidth(&self) -> bool {
        matches!(self.mode, Mode::Startup | Mode::ProbeBw(Phase::Refill | Phase::Up))
    }

    /// `bbr_adapt_lower_bounds`, once per loss round, outside probes: a CE round cuts
    /// `inflight_lo` by `ecn_factor x alpha`; a lossy round cuts `bw_lo` and `inflight_lo` to
    /// `beta` of themselves, but not below this round's delivery.
    fn adapt_lower_bounds(&mut self, st: &CcState) {
        if self.is_probing_bandwidth() {
            return;
        }
        let mss = st.mss as u64;
        let mut ecn_inflight_lo = UNSET;
        if self.ecn_in_round && self.ecn_factor > 0.0 {
            if self.inflight_lo == UNSET {
                self.inflight_lo = st.cwnd;
            }
            let cut = 1.0 - self.ecn_alpha * self.ecn_factor;
            ecn_inflight_lo = floor_packets(self.inflight_lo as f64 * cut, mss);
        }
        if self.loss_in_round {
            if !self.bw_lo.is_finite() {
                self.bw_lo = self.max_bw();
            }
            if self.inflight_lo == UNSET {
                self.inflight_lo = st.cwnd;
            }
            self.bw_lo = self.bw_latest.max(self.bw_lo * self.beta);
            self.inflight_lo = self.inflight_latest.max(floor_packets(self.inflight_lo as f64 * self.beta, mss));
        }
        self.inflight_lo = self.inflight_lo.min(ecn_inflight_lo);
    }

    /// `bbr_reset_lower_bounds`.
    pub(super) fn reset_lower_bounds(&mut self) {
        self.bw_lo = f64::INFINITY;
        self.inflight_lo = UNSET;
    }

    /// `bbr_reset_congestion_signals`.
    pub(super) fn reset_congestion_signals(&mut self) {
        self.loss_in_round = false;
        self.ecn_in_round = false;
        self.loss_in_cycle = false;
        self.ecn_in_cycle = false;
        self.bw_latest = 0.0;
        self.inflight_latest = 0;
    }

    /// `bbr_note_loss`: the first loss of a round extends the loss round to the data delivered
    /// so far.
    pub(super) fn note_loss(&mut self, st: &CcState) {
        if !self.loss_in_round {
            self.loss_round_delivered = st.delivered;
        }
        self.loss_in_round = true;
        self.loss_in_cycle = true;
    }

    /// `bbr_skb_marked_lost` for each packet this ACK marked lost, in order, the ACK's sample
    /// packet's record standing in for theirs (module header): while probing, the first one
    /// after which the loss rate is too high gives `inflight_hi` the in-flight at which it
    /// crossed the threshold.
    pub(super) fn on_lost(&mut self, st: &CcState, rs: &RateSample, tx: &TxSample, app_limited: bool) {
        self.note_loss(st);
        if !self.bw_probe_samples || tx.tx_in_flight == 0 {
            return;
        }
        let mss = st.mss as u64;
        let before = tx.lost.saturating_sub(rs.newly_lost);
        let packets = rs.newly_lost.div_ceil(mss);
        for k in 1..=packets {
            let lost = (before + k * mss).min(tx.lost);
            let probe = TxSample { lost, ..*tx };
            if self.is_inflight_too_high(&probe, 0) {
                let at_loss = self.inflight_hi_from_lost(tx.tx_in_flight, lost, mss);
                self.handle_inflight_too_high(st, at_loss, app_limited);
                return;
            }
        }
    }

    /// `bbr_is_inflight_too_high`: the loss rate of the sample's flight above `loss_thresh`,
    /// or (ECN-eligible) its CE-marked share of the `delivered` bytes above `ecn_thresh`.
    pub(super) fn is_inflight_too_high(&self, tx: &TxSample, delivered: u64) -> bool {
        if tx.lost > 0 && tx.tx_in_flight > 0 && tx.lost as f64 > tx.tx_in_flight as f64 * self.loss_thresh {
            return true;
        }
        tx.delivered_ce > 0
            && delivered > 0
            && self.ecn_eligible
            && self.ecn_thresh > 0.0
            && tx.delivered_ce as f64 > delivered as f64 * self.ecn_thresh
    }

    /// `bbr_inflight_hi_from_lost_skb`: the in-flight (bytes) at which a flight of
    /// `tx_in_flight`, `lost` of it lost, the last `pcount` bytes being the packet just lost,
    /// crossed `loss_thresh`: solving `(lost_prev + x) / (inflight_prev + x) = loss_thresh`
    /// for the prefix `x` of that packet, in packets, rounded as Linux. [`UNSET`] when the
    /// counts are inconsistent (Linux `~0U`).
    pub(super) fn inflight_hi_from_lost(&self, tx_in_flight: u64, lost: u64, pcount: u64) -> u64 {
        let (Some(inflight_prev), Some(lost_prev)) = (tx_in_flight.checked_sub(pcount), lost.checked_sub(pcount))
        else {
            return UNSET;
        };
        let packets = |b: u64| (b as f64 / pcount as f64).round();
        let (inflight_prev, lost_prev) = (packets(inflight_prev), packets(lost_prev));
        let budget = (inflight_prev * self.loss_thresh - 1e-9).ceil();
        let prefix = if lost_prev >= budget { 0.0 } else { ((budget - lost_prev) / (1.0 - self.loss_thresh)).floor() };
        (inflight_prev + prefix) as u64 * pcount
    }

    /// `bbr_handle_inflight_too_high`: once per probe, `inflight_hi` drops to what was in
    /// flight (at least `beta` of the target) unless the sample is app-limited; UP ends.
    pub(super) fn handle_inflight_too_high(&mut self, st: &CcState, tx_in_flight: u64, app_limited: bool) {
        self.prev_probe_too_high = true;
        self.bw_probe_samples = false;
        if !app_limited {
            let floor = floor_packets(self.target_inflight(st) as f64 * self.beta, st.mss as u64);
            self.inflight_hi = tx_in_flight.max(floor);
        }
        if self.mode == Mode::ProbeBw(Phase::Up) {
            self.start_bw_probe_down(st);
        }
    }

    /// `bbr_handle_queue_too_high_in_startup`: the pipe is full; `inflight_hi` from the
    /// estimated BDP (quantised) or this round's delivered volume, whichever is larger.
    pub(super) fn handle_queue_too_high_in_startup(&mut self, st: &CcState) {
        self.full_bw_reached = true;
        let bdp = self.inflight(st.mss as u64, self.max_bw(), 1.0);
        self.inflight_hi = bdp.max(self.inflight_latest);
    }

    /// `bbr_check_loss_too_high_in_startup`: at the end of a loss round spent in fast recovery
    /// with `full_loss_cnt` loss-marking ACKs and a too-high loss rate, Startup ends.
    pub(super) fn check_loss_too_high_in_startup(&mut self, st: &CcState, rs: &RateSample, tx: &TxSample) {
        if self.full_bw_reached {
            return;
        }
        if rs.newly_lost > 0 && self.loss_events_in_round < 0xF {
            self.loss_events_in_round += 1;
        }
        if self.full_loss_cnt > 0
            && self.loss_round_start
            && st.ca_state == CaState::Recovery
            && self.loss_events_in_round >= self.full_loss_cnt
            && self.is_inflight_too_high(tx, rs.delivered)
        {
            self.handle_queue_too_high_in_startup(st);
            return;
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }

    /// `bbr_reset_full_bw`.
    pub(super) fn reset_full_bw(&mut self) {
        self.full_bw = 0.0;
        self.full_bw_cnt = 0;
        self.full_bw_now = false;
    }

    /// `bbr_check_full_bw_reached` (v3): a sample 25 % above `full_bw` restarts the count on
    /// any ACK that is not app-limited; a round start without one counts.
    pub(super) fn check_full_bw_reached(&mut self, sample_bw: f64, app_limited: bool) {
        if self.full_bw_now || app_limited {
            return;
        }
        if sample_bw >= self.full_bw * FULL_BW_THRESH {
            self.reset_full_bw();
            self.full_bw = sample_bw;
            return;
        }
        if !self.round_start {
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_now = self.full_bw_cnt >= self.full_bw_cnt_max;
        self.full_bw_reached |= self.full_bw_now;
    }

    /// `bbr_check_drain`, with the draft's limit of `drain_rounds` if set.
    pub(super) fn check_drain(&mut self, st: &mut CcState) {
        let mss = st.mss as u64;
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            self.drain_start_round = self.round_count;
            st.ssthresh = self.inflight(mss, self.max_bw(), 1.0);
            self.reset_congestion_signals();
        }
        if self.mode != Mode::Drain {
            return;
        }
        let drained = self.in_net_at_edt(mss, st.bytes_in_flight) <= self.inflight(mss, self.max_bw(), 1.0);
        let timed_out = self.drain_rounds > 0 && self.round_count > self.drain_start_round + self.drain_rounds;
        if drained || timed_out {
            self.mode = Mode::ProbeBw(Phase::Down);
            self.start_bw_probe_down(st);
        }
    }

    /// `bbr_update_ack_aggregation`: a window of one round in Startup, five after.
    pub(super) fn update_ack_aggregation(&mut self, st: &CcState, rs: &RateSample) {
        if rs.newly_acked == 0 || rs.interval == 0 {
            return;
        }
        let win = if self.full_bw_reached { EXTRA_ACKED_WIN_RTTS } else { 1 };
        let bw = self.bw();
        let mss = st.mss as u64;
        self.aggregation.update(self.round_start, win, bw, self.delivered_mstamp, rs.newly_acked, st.cwnd, mss);
    }

    /// `bbr_update_min_rtt`: the ProbeRTT-interval min and the min RTT, ProbeRTT's entry and
    /// its window.
    pub(super) fn update_min_rtt(&mut self, st: &mut CcState, rs: &RateSample) {
        let probe_rtt_expired = st.now > self.probe_rtt_min_stamp + self.probe_rtt_interval;
        if let Some(rtt) = rs.rtt {
            if self.probe_rtt_min.is_none_or(|m| rtt < m) || probe_rtt_expired {
                self.probe_rtt_min = Some(rtt);
                self.probe_rtt_min_stamp = st.now;
            }
        }
        let min_rtt_expired = st.now > self.min_rtt_stamp + self.min_rtt_win;
        if let Some(p) = self.probe_rtt_min {
            if self.min_rtt.is_none_or(|m| p <= m) || min_rtt_expired {
                self.min_rtt = Some(p);
                self.min_rtt_stamp = self.probe_rtt_min_stamp;
            }
        }
        if self.probe_rtt_time > 0 && probe_rtt_expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(st.cwnd);
            self.probe_rtt_done = None;
            self.ack_phase = AckPhase::ProbeStopping;
            self.next_rtt_delivered = st.delivered;
            self.probe_rtt_mark.begin(st.delivered);
        }
        if self.mode == Mode::ProbeRtt {
            // Linux marks the connection app-limited so that ProbeRTT's low-rate samples stay
            // out of the model (module header).
            self.probe_rtt_mark.extend(st.delivered, st.bytes_in_flight);
            if self.probe_rtt_done.is_none() && st.bytes_in_flight <= self.probe_rtt_cwnd(st.mss as u64) {
                self.probe_rtt_done = Some(st.now + self.probe_rtt_time);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = st.delivered;
            } else if self.probe_rtt_done.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done && self.check_probe_rtt_done(st) {
                    st.cwnd = st.cwnd.max(self.prior_cwnd);
                }
            }
        }
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// `bbr_check_probe_rtt_done` without the window (the caller restores it): true if
    /// ProbeRTT ended now.
    pub(super) fn check_probe_rtt_done(&mut self, st: &CcState) -> bool {
        if self.probe_rtt_done.is_none_or(|done| st.now <= done) {
            return false;
        }
        self.probe_rtt_min_stamp = st.now; // schedule the next ProbeRTT
                                           // bbr_exit_probe_rtt
        self.reset_lower_bounds();
        if self.full_bw_reached {
            self.mode = Mode::ProbeBw(Phase::Down);
            self.start_bw_probe_down(st);
            self.start_bw_probe_cruise();
        } else {
            self.mode = Mode::Startup;
        }
        true
    }
}
