//! BBR's pacing rate and window: the initial rate, the send quantum, the BDP, the
//! quantization budget, in-flight targets, the ACK-aggregation allowance, and the window
//! after losses and recovery (Linux `bbr_set_pacing_rate`, `bbr_tso_segs_goal`, `bbr_bdp`,
//! `bbr_quantization_budget`, `bbr_inflight`, `bbr_ack_aggregation_cwnd`,
//! `bbr_set_cwnd_to_recover_or_restore`, `bbr_set_cwnd`).

use super::*;

impl Bbr {
    /// `high_gain x cwnd / srtt`, 1 ms without an RTT sample (`bbr_init_pacing_rate_from_rtt`).
    pub(super) fn init_pacing_rate_from_rtt(&mut self, st: &CcState) {
        self.pacing.init_from_rtt(st);
    }

    /// `bbr_set_pacing_rate`.
    pub(super) fn set_pacing_rate(&mut self, st: &CcState, bw: f64, gain: f64) {
        self.pacing.set(st, bw, gain, self.full_bw_reached);
    }

    /// Segments per send quantum (`bbr_tso_segs_goal`), module header.
    pub(super) fn tso_segs_goal(&self, mss: u64) -> u64 {
        if self.tso_segs > 0 {
            return self.tso_segs;
        }
        let rate = self.pacing.current();
        let bytes = ((rate / PACING_SHIFT_DIV).floor() as u64).min(GSO_MAX_BYTES);
        let min_segs = if rate < MIN_TSO_RATE { 1 } else { 2 };
        (bytes / mss).max(min_segs).min(MAX_TSO_SEGS)
    }

    /// `ceil(gain x bw x min_rtt)` in packets; 10 without an RTT sample (`bbr_bdp`).
    pub(super) fn bdp(&self, mss: u64, bw: f64, gain: f64) -> u64 {
        match self.min_rtt {
            None => INIT_CWND,
            Some(rtt) => ceil_packets(bw * rtt as f64 / SEC as f64 * gain / mss as f64),
        }
    }

    /// `bbr_quantization_budget`, in packets.
    pub(super) fn quantization_budget(&self, mss: u64, cwnd: u64) -> u64 {
        let mut cwnd = cwnd + 3 * self.tso_segs_goal(mss);
        cwnd = (cwnd + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    /// `bbr_inflight`: the inflight target for `gain`, in bytes.
    pub(super) fn inflight(&self, mss: u64, bw: f64, gain: f64) -> u64 {
        self.quantization_budget(mss, self.bdp(mss, bw, gain)) * mss
    }

    /// `bbr_packets_in_net_at_edt`, in bytes, with no departure-time queue (module header).
    pub(super) fn in_net_at_edt(&self, mss: u64, inflight: u64) -> u64 {
        if self.pacing_gain > 1.0 {
            inflight + self.tso_segs_goal(mss) * mss
        } else {
            inflight
        }
    }

    /// `bbr_ack_aggregation_cwnd`, in packets.
    pub(super) fn ack_aggregation_cwnd(&self, mss: u64) -> u64 {
        if !self.full_bw_reached {
            return 0;
        }
        self.aggregation.cwnd_packets(self.bw(), mss)
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: the window after losses and recovery
    /// transitions, and whether packet conservation holds it.
    pub(super) fn recover_or_restore(&mut self, st: &mut CcState, rs: &RateSample, acked: u64) -> (bool, u64) {
        let mss = st.mss as u64;
        let (prev, state) = (self.prev_ca_state, st.ca_state);
        let mut cwnd = st.cwnd;
        if rs.newly_lost > 0 {
            cwnd = cwnd.saturating_sub(rs.newly_lost).max(mss);
        }
        if state == CaState::Recovery && prev != CaState::Recovery {
            // First round of recovery: packet conservation.
            self.packet_conservation = true;
            self.next_rtt_delivered = st.delivered;
            cwnd = st.bytes_in_flight + acked;
        } else if recovering(prev) && !recovering(state) {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (true, cwnd.max(st.bytes_in_flight + acked));
        }
        (false, cwnd)
    }

    /// `bbr_set_cwnd`.
    pub(super) fn set_cwnd(&mut self, st: &mut CcState, rs: &RateSample, bw: f64, gain: f64) {
        let mss = st.mss as u64;
        let acked = rs.newly_acked;
        let mut cwnd = st.cwnd;
        if acked > 0 {
            let (conserving, c) = self.recover_or_restore(st, rs, acked);
            cwnd = c;
            if !conserving {
                let target_pkts = self.bdp(mss, bw, gain) + self.ack_aggregation_cwnd(mss);
                let target = self.quantization_budget(mss, target_pkts) * mss;
                if self.full_bw_reached {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || st.delivered < INIT_CWND * mss {
                    cwnd += acked;
                }
                cwnd = cwnd.max(CWND_MIN_TARGET * mss);
            }
        }
        st.cwnd = cwnd;
        if self.mode == Mode::ProbeRtt {
            st.cwnd = st.cwnd.min(CWND_MIN_TARGET * mss);
        }
    }
}
