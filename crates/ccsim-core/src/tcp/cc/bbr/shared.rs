//! Building blocks that BBR v1 and BBR v3 (`tcp/cc/bbr3/`) share, as Linux's two
//! `tcp_bbr.c` versions do: the pacing rate and its Startup start (`bbr_init_pacing_rate_from_rtt`,
//! `bbr_set_pacing_rate`), the ACK-aggregation estimator (`bbr_update_ack_aggregation`,
//! `bbr_ack_aggregation_cwnd`) and the application-limited mark ProbeRTT puts on the packets it
//! sends (`tp->app_limited` in `bbr_update_min_rtt`).

use super::{ACK_EPOCH_ACKED_RESET_PKTS, EXTRA_ACKED_GAIN, EXTRA_ACKED_MAX, PACING_MARGIN};
use crate::sim::time::{Time, MS, SEC, US};
use crate::tcp::cc::CcState;

/// The pacing rate (`sk_pacing_rate`), bytes per second.
#[derive(Clone, Debug)]
pub(crate) struct Pacing {
    /// Gain of the initial rate (the Startup pacing gain).
    startup_gain: f64,
    /// The rate; `None` before the first hook call.
    rate: Option<f64>,
    /// An RTT sample had been seen when the rate was last initialised (`has_seen_rtt`).
    has_seen_rtt: bool,
}

impl Pacing {
    /// Not started; the initial rate uses `startup_gain`.
    pub(crate) fn new(startup_gain: f64) -> Self {
        Pacing { startup_gain, rate: None, has_seen_rtt: false }
    }

    /// `startup_gain x cwnd / srtt`, 1 ms without an RTT sample, less the pacing margin.
    pub(crate) fn initial(&self, st: &CcState) -> f64 {
        let rtt = st.srtt.map_or(MS, |s| s.max(US));
        st.cwnd as f64 * SEC as f64 / rtt as f64 * self.startup_gain * PACING_MARGIN
    }

    /// `bbr_init_pacing_rate_from_rtt`.
    pub(crate) fn init_from_rtt(&mut self, st: &CcState) {
        self.has_seen_rtt = st.srtt.is_some();
        self.rate = Some(self.initial(st));
    }

    /// `bbr_set_pacing_rate`: `gain x bw` less the margin, raised only until the pipe is full
    /// and set freely after; the initial rate is recomputed at the first RTT sample.
    pub(crate) fn set(&mut self, st: &CcState, bw: f64, gain: f64, full_bw_reached: bool) {
        let rate = bw * gain * PACING_MARGIN;
        if !self.has_seen_rtt && st.srtt.is_some() {
            self.init_from_rtt(st);
        }
        if full_bw_reached || rate > self.rate.unwrap_or(0.0) {
            self.rate = Some(rate);
        }
    }

    /// The rate set so far (0 before the first hook call).
    pub(crate) fn current(&self) -> f64 {
        self.rate.unwrap_or(0.0)
    }

    /// The rate the sender paces at: the one set, or the initial one before the first hook.
    pub(crate) fn rate(&self, st: &CcState) -> f64 {
        self.rate.unwrap_or_else(|| self.initial(st))
    }
}

/// The ACK-aggregation estimator: bytes (S)ACKed in an epoch beyond `bw x epoch`, max over the
/// two halves of a window of rounds (Linux `extra_acked[2]`).
#[derive(Clone, Debug, Default)]
pub(crate) struct AckAggregation {
    /// Start of the epoch (`ack_epoch_mstamp`).
    epoch_start: Time,
    /// Bytes (S)ACKed in the epoch (`ack_epoch_acked`).
    epoch_acked: u64,
    /// Max excess of each half-window (`extra_acked`).
    extra_acked: [u64; 2],
    /// Rounds since the current half-window began (`extra_acked_win_rtts`).
    win_rtts: u32,
    /// The current half-window (`extra_acked_win_idx`).
    win_idx: usize,
}

impl AckAggregation {
    /// A new epoch starts at `now` (connection start, restart from idle).
    pub(crate) fn restart(&mut self, now: Time) {
        self.epoch_start = now;
        self.epoch_acked = 0;
    }

    /// `bbr_update_ack_aggregation` for an ACK that (S)ACKed `acked` bytes with a valid rate
    /// sample, the latest delivery at `delivered_at`; a half-window lasts `win_rtts` rounds.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn update(
        &mut self,
        round_start: bool,
        win_rtts: u32,
        bw: f64,
        delivered_at: Time,
        acked: u64,
        cwnd: u64,
        mss: u64,
    ) {
        if round_start {
            self.win_rtts = (self.win_rtts + 1).min(0x1F);
            if self.win_rtts >= win_rtts {
                self.win_rtts = 0;
                self.win_idx ^= 1;
                self.extra_acked[self.win_idx] = 0;
            }
        }
        let epoch = delivered_at.saturating_sub(self.epoch_start);
        let mut expected = (bw * epoch as f64 / SEC as f64).floor() as u64;
        if self.epoch_acked <= expected || self.epoch_acked + acked >= ACK_EPOCH_ACKED_RESET_PKTS * mss {
            self.epoch_acked = 0;
            self.epoch_start = delivered_at;
            expected = 0;
        }
        self.epoch_acked = (self.epoch_acked + acked).min(0xFFFFF * mss);
        let extra = self.epoch_acked.saturating_sub(expected).min(cwnd);
        let slot = &mut self.extra_acked[self.win_idx];
        *slot = (*slot).max(extra);
    }

    /// The max excess over both half-windows (`bbr_extra_acked`), bytes.
    pub(crate) fn extra_acked(&self) -> u64 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// `bbr_ack_aggregation_cwnd`: the allowance in packets, at most 100 ms at `bw`.
    pub(crate) fn cwnd_packets(&self, bw: f64, mss: u64) -> u64 {
        if EXTRA_ACKED_GAIN <= 0.0 {
            return 0;
        }
        let max_aggr = (bw * EXTRA_ACKED_MAX as f64 / SEC as f64 / mss as f64).floor() as u64;
        let extra = self.extra_acked() / mss;
        ((EXTRA_ACKED_GAIN * extra as f64) as u64).min(max_aggr)
    }
}

/// The packets ProbeRTT sends count as application-limited (Linux marks the connection:
/// `tp->app_limited = delivered + inflight`); the sender does not know about ProbeRTT, so BBR
/// keeps the range itself: samples whose `prior_delivered` lies between `C.delivered` at
/// ProbeRTT entry and the last `delivered + inflight` mark.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ProbeRttMark(Option<(u64, u64)>);

impl ProbeRttMark {
    /// ProbeRTT starts with `C.delivered` = `delivered`.
    pub(crate) fn begin(&mut self, delivered: u64) {
        self.0 = Some((delivered, delivered));
    }

    /// An ACK in ProbeRTT: the mark moves to `delivered + inflight` (at least 1).
    pub(crate) fn extend(&mut self, delivered: u64, inflight: u64) {
        if let Some((from, _)) = self.0 {
            self.0 = Some((from, (delivered + inflight).max(1)));
        }
    }

    /// Whether a sample whose packet left at `C.delivered` = `prior_delivered` is marked.
    pub(crate) fn covers(&self, prior_delivered: u64) -> bool {
        self.0.is_some_and(|(from, to)| (from..=to).contains(&prior_delivered))
    }
}
