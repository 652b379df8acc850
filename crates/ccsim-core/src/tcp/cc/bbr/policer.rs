//! BBR's long-term bandwidth sampling, which detects token-bucket policers (Linux
//! `bbr_lt_bw_sampling`, `bbr_lt_bw_interval_done`, `bbr_reset_lt_bw_sampling`).

use super::*;

impl Bbr {
    /// Start a new long-term sampling interval (`bbr_reset_lt_bw_sampling_interval`).
    pub(super) fn reset_lt_bw_sampling_interval(&mut self, st: &CcState) {
        self.lt_last_stamp_ms = self.delivered_mstamp / MS;
        self.lt_last_delivered = st.delivered;
        self.lt_last_lost = st.lost;
        self.lt_rtt_cnt = 0;
    }

    /// `bbr_reset_lt_bw_sampling`.
    pub(super) fn reset_lt_bw_sampling(&mut self, st: &CcState) {
        self.lt_bw = 0.0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(st);
    }

    /// `bbr_lt_bw_interval_done`: a lossy interval at rate `bw` ended.
    pub(super) fn lt_bw_interval_done(&mut self, st: &CcState, bw: f64) {
        if self.lt_bw > 0.0 {
            let diff = (bw - self.lt_bw).abs();
            if diff <= LT_BW_RATIO * self.lt_bw || diff * PACING_MARGIN <= LT_BW_DIFF {
                // Two consistent lossy intervals: assume a policer.
                self.lt_bw = (bw + self.lt_bw) / 2.0;
                self.lt_use_bw = true;
                self.pacing_gain = 1.0;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(st);
    }

    /// `bbr_lt_bw_sampling`.
    pub(super) fn lt_bw_sampling(&mut self, st: &CcState, losses: bool, app_limited: bool) {
        if !self.lt_enabled {
            return;
        }
        if self.lt_use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(st);
                    self.reset_probe_bw_mode();
                }
            }
            return;
        }
        // Sample only from the first loss on, once the policer's tokens are exhausted.
        if !self.lt_is_sampling {
            if !losses {
                return;
            }
            self.reset_lt_bw_sampling_interval(st);
            self.lt_is_sampling = true;
        }
        if app_limited {
            self.reset_lt_bw_sampling(st);
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(st);
            return;
        }
        if !losses {
            return;
        }
        let lost = st.lost - self.lt_last_lost;
        let delivered = st.delivered - self.lt_last_delivered;
        if delivered == 0 || (lost as u128) << 8 < LT_LOSS_THRESH as u128 * delivered as u128 {
            return;
        }
        let t_ms = (self.delivered_mstamp / MS) as i64 - self.lt_last_stamp_ms as i64;
        if t_ms < 1 {
            return;
        }
        self.lt_bw_interval_done(st, delivered as f64 * 1000.0 / t_ms as f64);
    }
}
