//! BBR v3's window: the send quantum, the BDP and its quantisation, in-flight targets, the
//! window's growth and the model's caps on it (Linux v3 `bbr_tso_segs_goal`, `bbr_bdp`,
//! `bbr_quantization_budget`, `bbr_inflight`, `bbr_packets_in_net_at_edt`,
//! `bbr_target_inflight`, `bbr_probe_rtt_cwnd`, `bbr_inflight_with_headroom`, `bbr_set_cwnd`,
//! `bbr_bound_cwnd_for_inflight_model`).

use super::*;
use crate::sim::time::US;
use crate::tcp::cc::bbr::{ceil_packets, GSO_MAX_BYTES, PACING_SHIFT_DIV};

/// The min-RTT part of the send quantum: 64 KB, halved per this many microseconds of min RTT
/// (`GSO_LEGACY_MAX_SIZE >> (min_rtt_us >> bbr_tso_rtt_shift)`, shift 9).
const TSO_RTT_SHIFT: u32 = 9;
/// `GSO_LEGACY_MAX_SIZE`, bytes.
const GSO_LEGACY_MAX_SIZE: u64 = 65_536;
/// Linux's `sysctl_tcp_min_tso_segs` default.
const MIN_TSO_SEGS: u64 = 2;

impl Bbr3 {
    /// Segments per send quantum (`bbr_tso_segs_goal`, v3): 1 ms of the pacing rate plus a
    /// min-RTT allowance, at most 64 KB less headers, at least 2 segments.
    pub(super) fn tso_segs_goal(&self, mss: u64) -> u64 {
        if self.tso_segs > 0 {
            return self.tso_segs;
        }
        let mut bytes = (self.pacing.current() / PACING_SHIFT_DIV).floor() as u64;
        if let Some(rtt) = self.min_rtt {
            let r = (rtt / US) >> TSO_RTT_SHIFT;
            if r < 32 {
                bytes += GSO_LEGACY_MAX_SIZE >> r;
            }
        }
        (bytes.min(GSO_MAX_BYTES) / mss).max(MIN_TSO_SEGS)
    }

    /// `ceil(gain x bw x min_rtt)` in packets; the initial window without an RTT sample
    /// (`bbr_bdp`).
    pub(super) fn bdp(&self, mss: u64, bw: f64, gain: f64) -> u64 {
        match self.min_rtt {
            None => self.init_cwnd,
            Some(rtt) => ceil_packets(bw * rtt as f64 / SEC as f64 * gain / mss as f64),
        }
    }

    /// `bbr_quantization_budget` (v3), packets: at least 3 send quanta and 4 packets, 2 more
    /// in UP.
    pub(super) fn quantization_budget(&self, mss: u64, cwnd: u64) -> u64 {
        let mut cwnd = cwnd.max(3 * self.tso_segs_goal(mss)).max(CWND_MIN_TARGET);
        if self.mode == Mode::ProbeBw(Phase::Up) {
            cwnd += 2;
        }
        cwnd
    }

    /// `bbr_inflight`: the quantised in-flight target for `gain`, bytes.
    pub(super) fn inflight(&self, mss: u64, bw: f64, gain: f64) -> u64 {
        self.quantization_budget(mss, self.bdp(mss, bw, gain)) * mss
    }

    /// `bbr_packets_in_net_at_edt`, bytes, with no departure-time queue (as v1).
    pub(super) fn in_net_at_edt(&self, mss: u64, inflight: u64) -> u64 {
        if self.pacing_gain > 1.0 {
            inflight + self.tso_segs_goal(mss) * mss
        } else {
            inflight
        }
    }

    /// `bbr_target_inflight`: the BDP (quantised) unless congestion cut cwnd, bytes.
    pub(super) fn target_inflight(&self, st: &CcState) -> u64 {
        self.inflight(st.mss as u64, self.bw(), 1.0).min(st.cwnd)
    }

    /// `bbr_probe_rtt_cwnd`: half the BDP, at least 4 packets, bytes.
    pub(super) fn probe_rtt_cwnd(&self, mss: u64) -> u64 {
        self.bdp(mss, self.bw(), PROBE_RTT_CWND_GAIN).max(CWND_MIN_TARGET) * mss
    }

    /// `bbr_inflight_with_headroom`: `inflight_hi` less `headroom` of it (at least a packet),
    /// at least 4 packets; [`UNSET`] while `inflight_hi` is.
    pub(super) fn inflight_with_headroom(&self, mss: u64) -> u64 {
        if self.inflight_hi == UNSET {
            return UNSET;
        }
        let headroom = floor_packets(self.inflight_hi as f64 * self.headroom, mss).max(mss);
        self.inflight_hi.saturating_sub(headroom).max(min_cwnd(mss))
    }

    /// `bbr_set_cwnd` (v3): towards the target by the bytes (S)ACKed; no recovery rules.
    pub(super) fn set_cwnd(&mut self, st: &mut CcState, rs: &RateSample, bw: f64, gain: f64) {
        let mss = st.mss as u64;
        let acked = rs.newly_acked;
        let mut cwnd = st.cwnd;
        if acked > 0 {
            let target_pkts = self.bdp(mss, bw, gain) + self.aggregation.cwnd_packets(self.bw(), mss);
            let target = self.quantization_budget(mss, target_pkts) * mss;
            if self.full_bw_reached {
                cwnd = (cwnd + acked).min(target);
            } else if cwnd < target || cwnd < 2 * self.init_cwnd * mss {
                cwnd += acked;
            }
            cwnd = cwnd.max(min_cwnd(mss));
        }
        if self.mode == Mode::ProbeRtt {
            cwnd = cwnd.min(self.probe_rtt_cwnd(mss));
        }
        st.cwnd = cwnd;
    }

    /// `bbr_bound_cwnd_for_inflight_model`: `inflight_hi` while probing in ProbeBW,
    /// `inflight_hi` less headroom in CRUISE and ProbeRTT, `inflight_lo` always; at least 4
    /// packets.
    pub(super) fn bound_cwnd_for_inflight_model(&self, st: &mut CcState) {
        let mss = st.mss as u64;
        let cap = match self.mode {
            Mode::ProbeBw(Phase::Cruise) | Mode::ProbeRtt => self.inflight_with_headroom(mss),
            Mode::ProbeBw(_) => self.inflight_hi,
            Mode::Startup | Mode::Drain => UNSET,
        };
        let cap = cap.min(self.inflight_lo).max(min_cwnd(mss));
        st.cwnd = st.cwnd.min(cap);
    }
}
