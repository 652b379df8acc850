//! BBR v1: draft-cardwell-iccrg-bbr-congestion-control-00 (Cardwell, Cheng, Hassas Yeganeh,
//! Jacobson, July 2017) and its reference implementation, Linux `net/ipv4/tcp_bbr.c` as in
//! mainline 5.1 to 6.x (the version with ACK-aggregation estimation and departure-time
//! accounting; 6.2 on only renames helpers such as `get_random_u32_below`). Where the two
//! differ, Linux is followed (listed below). Also: Cardwell et al., "BBR: Congestion-Based
//! Congestion Control", ACM Queue 14(5), 2016; the windowed max filter is Linux
//! `lib/win_minmax.c` (Kathleen Nichols' algorithm).
//!
//! BBR owns its window ([`CongestionControl::owns_window`]): the sender hands it a delivery-rate
//! sample on every ACK ([`RateSample`], Linux `struct rate_sample`) and BBR sets cwnd and the
//! pacing rate from its model of the path, as Linux's `cong_control` hook (`bbr_main`). Its
//! flows are paced unless they say `pacing = false` ([`TransportNeeds::pacing`]): Linux BBR
//! always paces (fq, or TCP's internal pacing, which it requests with `SK_PACING_NEEDED`);
//! without pacing only the window acts, at 2 BDP plus quanta in steady state, and Startup,
//! Drain and the gain cycle lose their rate half.
//!
//! Model, per ACK in Linux's order (`bbr_update_model`, then pacing rate, then cwnd):
//! - Rounds (`bbr_update_bw`): a packet-timed round trip ends when an ACK delivers a packet
//!   sent after the round began: `rs.prior_delivered >= next_rtt_delivered`, which then becomes
//!   `C.delivered`. Only valid samples (interval > 0) count.
//! - Bottleneck bandwidth `BtlBw`: windowed max of the sample rates over `bw_rtts` = 10 rounds
//!   (Linux `bbr_bw_rtts` = `CYCLE_LEN + 2`), Linux's three-sample running max filter, so a
//!   sample of round `t` is forgotten at the first sample of round `t + 11`. App-limited
//!   samples enter it only if they are at least the current max.
//! - Min RTT `RTprop`: the lowest `rs.rtt`, replaced by any sample once it is older than
//!   `min_rtt_win` = 10 s (`bbr_min_rtt_win_sec`).
//! - Startup: pacing and cwnd gain `high_gain` = 2.885 (2/ln 2, `bbr_high_gain`). The pipe is
//!   full (`bbr_check_full_bw_reached`) after `full_bw_cnt` = 3 round starts whose max bandwidth
//!   did not grow by `full_bw_thresh` = 25 % over the last one that did, counting only rounds
//!   that start with a sample that is not app-limited.
//! - Drain: pacing gain `1 / high_gain`, cwnd gain `high_gain`, ssthresh set to the 1.0 x BDP
//!   inflight (as Linux, for reporting only), until inflight <= `bbr_inflight(bw, 1)`.
//! - ProbeBW: pacing gains [5/4, 3/4, 1, 1, 1, 1, 1, 1], cwnd gain `cwnd_gain` = 2; entered at
//!   a random phase other than 3/4 (`bbr_reset_probe_bw_mode`: index `7 - U{0..6}`, then one
//!   advance). A phase ends (`bbr_is_next_cycle_phase`) once more than one min RTT has passed
//!   since it began (measured between delivery times, `delivered_mstamp`); the 5/4 phase
//!   further waits until losses or inflight >= `bbr_inflight(bw, 5/4)`; the 3/4 phase ends
//!   early once inflight <= `bbr_inflight(bw, 1)` (inflight before the ACK, `prior_in_flight`).
//! - ProbeRTT (`bbr_update_min_rtt`): when the min RTT estimate has expired (and the flow is not
//!   restarting from idle), save cwnd, cap it at 4 packets (`bbr_cwnd_min_target`), pacing gain
//!   1; once inflight <= 4 packets, hold for `probe_rtt_time` = 200 ms and at least one round,
//!   then restamp the min RTT, restore cwnd to at least the saved value and go back to ProbeBW
//!   (or Startup if the pipe was never full). `probe_rtt_time = 0` disables ProbeRTT, as
//!   Linux's `bbr_probe_rtt_mode_ms > 0` test.
//! - Pacing rate (`bbr_set_pacing_rate`): `pacing_gain x bw x 0.99` (`bbr_rate_bytes_per_sec`,
//!   `bbr_pacing_margin_percent` = 1), raised only until the pipe is full, set freely after.
//!   Initially `high_gain x cwnd / srtt` (1 ms without an RTT sample), recomputed once at the
//!   first RTT sample (`bbr_init_pacing_rate_from_rtt`).
//! - Window (`bbr_set_cwnd`): on ACKs that (S)ACK data, target =
//!   `bbr_quantization_budget(ceil(cwnd_gain x bw x min_rtt) + extra_acked)` packets: plus 3
//!   send quanta, rounded up to an even number of packets, plus 2 in the 5/4 phase; 10 packets
//!   (`TCP_INIT_CWND`) while there is no RTT sample. Once the pipe is full,
//!   `cwnd = min(cwnd + acked, target)`; before, cwnd grows by the acked bytes while below
//!   target (or while fewer than 10 packets have been delivered). At least 4 packets, at most
//!   4 packets in ProbeRTT.
//! - Send quantum (`bbr_tso_segs_goal`): Linux's TSO autosizing, 1 ms of the pacing rate
//!   (`rate >> sk_pacing_shift`, shift 10) in whole segments, at most `GSO_MAX_SIZE - 1 -
//!   MAX_TCP_HEADER` = 65 215 bytes (MAX_TCP_HEADER 320, a typical x86-64 build) and 127
//!   segments, at least 2 segments (1 below 1.2 Mbit/s, `bbr_min_tso_rate`). So 2 segments
//!   until the pacing rate reaches 3 MSS per 1.024 ms (36 Mbit/s with 1448-byte segments),
//!   more above (45 segments of 1448 bytes, the 64 KB cap, from about 0.53 Gbit/s).
//!   `tso_segs > 0` fixes it instead: the simulator has no TSO, GSO or GRO, whose buffers the
//!   budget covers in Linux, so at high rates Linux's budget puts up to 3 x 45 more packets
//!   into the bottleneck.
//! - ACK aggregation (`bbr_update_ack_aggregation`, Linux 5.1): the bytes (S)ACKed in an epoch
//!   beyond `bw x epoch`, max over two 5-round windows, at most cwnd; added to the target once
//!   the pipe is full, capped at 100 ms of `bw`.
//! - Loss recovery (`bbr_set_cwnd_to_recover_or_restore`): each ACK's newly lost bytes come off
//!   cwnd (at least 1 packet); on entering Recovery, packet conservation for one round:
//!   `cwnd = inflight + acked` (`tcp_packets_in_flight` after the ACK), then at least that on
//!   each ACK of the round (a new round starts at once); afterwards growth toward the target as
//!   usual. On leaving Recovery or Loss, `cwnd = max(cwnd, prior_cwnd)`. `prior_cwnd` is saved
//!   by [`CongestionControl::ssthresh`] (`bbr_save_cwnd`: the current cwnd if the previous ACK
//!   saw Open and not ProbeRTT, else the max of both), which leaves ssthresh unchanged.
//!   An RTO (`bbr_set_state(TCP_CA_Loss)`, [`CongestionControl::on_timeout`]): previous state
//!   Loss, `full_bw = 0`, a round start, and a loss for the long-term sampler.
//! - Long-term bandwidth for policers (`bbr_lt_bw_sampling`): from the first loss, intervals
//!   of 4 to 16 rounds ending at a loss with lost/delivered >= 50/256; two consecutive intervals
//!   whose rates differ by <= 1/8 or <= 4 kbit/s make BBR use their mean (`lt_bw`) as its
//!   bandwidth with pacing gain 1, for 48 ProbeBW rounds; app-limited samples restart it.
//! - Restart from idle (`bbr_cwnd_event(CA_EVENT_TX_START)`), seen in
//!   [`CongestionControl::on_sent`]: a segment sent with nothing outstanding marks
//!   `idle_restart` (no ProbeRTT entry until data is delivered), restarts the ACK epoch, paces at
//!   1.0 x bw in ProbeBW, and ends a ProbeRTT whose time is up.
//!
//! Units and representation (choices): bytes, nanoseconds and bytes per second throughout, in
//! f64 for rates and gains (Linux: packets per us << 24 and gains in 1/256), so Linux's
//! fixed-point roundings are not reproduced: the high gain is 2.885 (Linux 739/256 = 2.8867),
//! the drain gain 1/2.885 = 0.3466 (Linux 88/256 = 0.3438). Windows and targets are whole
//! packets as in Linux (BDP rounded up), converted to bytes with the MSS; the sender's cwnd
//! grows by acknowledged bytes.
//!
//! Where draft-00 and Linux differ, Linux is followed:
//! - the 1 % pacing margin (draft-00 paces at exactly `pacing_gain x BtlBw`);
//! - the quantization budget: Linux's TSO quantum, even rounding and +2 packets in the 5/4
//!   phase (draft-00: 3 `send_quantum`s of 1 MSS below 1.2 Mbit/s, 2 below 24 Mbit/s, else
//!   `min(1 ms of pacing, 64 KB)`);
//! - Linux mechanisms that draft-00's pseudocode does not have: the ACK-aggregation allowance,
//!   departure-time inflight, the long-term policer model, ending ProbeRTT on an idle restart,
//!   and the Drain ssthresh.
//!
//! Deviations from Linux, forced by the simulator's interface:
//! - ProbeRTT marks the connection app-limited in Linux (`tp->app_limited = delivered +
//!   inflight`), so that its low-rate samples are kept out of the bandwidth filter. The sender
//!   here does not know about it, so BBR classifies a sample itself: app-limited if the
//!   sender says so, or if its `prior_delivered` lies between `C.delivered` at ProbeRTT entry
//!   and the last `delivered + inflight` mark (exactly the packets Linux would mark, except
//!   ones sent before entry after the last delivery, if the entry ACK delivered nothing).
//! - Departure-time accounting: the sender has no queue of packets stamped with future
//!   departure times (it sends at `next_send`), so `bbr_packets_in_net_at_edt` reduces to
//!   inflight plus one send quantum when the pacing gain is above 1.
//! - The random ProbeBW phase is drawn from the flow's congestion-control stream
//!   (`Stream::Cc`, from the run's seed), not from Linux's `get_random_u32_below`.
//! - The expired min-RTT filter takes any RTT sample (Linux skips samples from ACKs that were
//!   possibly delayed, `FLAG_ACK_MAYBE_DELAYED`, which a [`RateSample`] does not carry).
//! - The min-RTT and ProbeRTT clocks are exact ns (Linux: jiffies); the long-term interval's
//!   duration is truncated to whole ms as in Linux.
//! - Recovery exit: Linux restores `prior_cwnd` on the first ACK processed in Open. Here
//!   [`CongestionControl::on_recovery_exit`] does it at once when the sender already reports
//!   Open (else the next [`CongestionControl::on_rate_sample`] does, as in Linux), so the result
//!   does not depend on the order in which the sender calls the two.
//! - A ProbeRTT ended by an idle restart restores cwnd at the next ACK (`on_sent` may not
//!   change the window).
//! - Linux sets ssthresh to infinity at init; here the sender's initial ssthresh is kept (BBR
//!   never reads it; Drain sets it as Linux does).
//! - Restart from idle is taken as "nothing outstanding when a segment is sent" (Linux:
//!   nothing in flight and `tp->app_limited`, which an application that let the connection
//!   go idle has set); after an RTO, with lost data still outstanding, it does not fire.
//!
//! Not implemented: `bbr_undo_cwnd` (the sender detects no spurious recoveries),
//! `sk_max_pacing_rate` and `snd_cwnd_clamp` (no caps), the `get_info` and `sndbuf_expand`
//! hooks.

use super::TransportNeeds;
use super::{Ack, CaState, CcModel, CcState, Congestion, CongestionControl, RateSample, VarSpec, VarUnit};
use crate::params::{ParamKind, ParamSpec, ParamValue, Params};
use crate::registry::Randomness;
use crate::sim::rng::{Rng, Stream};
use crate::sim::time::{secs, Time, MS, SEC};

mod filter;
mod policer;
pub(crate) mod shared;
#[cfg(test)]
mod tests;
mod window;

use filter::MaxFilter;
use shared::{AckAggregation, Pacing, ProbeRttMark};

/// Startup pacing and cwnd gain, 2/ln 2 (draft-00 `BBRHighGain`, Linux `bbr_high_gain`).
pub const HIGH_GAIN: f64 = 2.885;
/// ProbeBW cwnd gain (Linux `bbr_cwnd_gain`).
pub const CWND_GAIN: f64 = 2.0;
/// The ProbeBW pacing-gain cycle (Linux `bbr_pacing_gain`).
pub const PACING_GAIN: [f64; CYCLE_LEN] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// Phases in the gain cycle (Linux `CYCLE_LEN`).
pub const CYCLE_LEN: usize = 8;
/// The entry phase is drawn over this many phases (Linux `bbr_cycle_rand`).
const CYCLE_RAND: u64 = 7;
/// Pacing rate as a fraction of `gain x bw` (Linux `bbr_pacing_margin_percent` = 1).
pub const PACING_MARGIN: f64 = 0.99;
/// Smallest window, and the ProbeRTT window, in packets (Linux `bbr_cwnd_min_target`).
pub const CWND_MIN_TARGET: u64 = 4;
/// Window without an RTT sample, and the Startup growth allowance (Linux `TCP_INIT_CWND`).
pub(crate) const INIT_CWND: u64 = 10;
/// Below this pacing rate the send quantum is 1 segment (Linux `bbr_min_tso_rate`,
/// 1.2 Mbit/s), in bytes per second.
const MIN_TSO_RATE: f64 = 1_200_000.0 / 8.0;
/// The send quantum covers `rate >> sk_pacing_shift` bytes (default shift 10: ~1 ms).
pub(crate) const PACING_SHIFT_DIV: f64 = 1024.0;
/// Largest send quantum in bytes: `GSO_MAX_SIZE - 1 - MAX_TCP_HEADER` (MAX_TCP_HEADER 320).
pub(crate) const GSO_MAX_BYTES: u64 = 65_536 - 1 - 320;
/// Largest send quantum in segments (Linux `bbr_tso_segs_goal`: `0x7F`).
const MAX_TSO_SEGS: u64 = 0x7F;
/// Long-term sampling: fewest rounds in an interval (`bbr_lt_intvl_min_rtts`).
const LT_INTVL_MIN_RTTS: u32 = 4;
/// Long-term sampling: an interval is lossy at lost/delivered >= 50/256 (`bbr_lt_loss_thresh`).
const LT_LOSS_THRESH: u64 = 50;
/// Long-term sampling: consistent rates differ by at most 1/8 (`bbr_lt_bw_ratio`)...
const LT_BW_RATIO: f64 = 1.0 / 8.0;
/// ... or by at most 4 kbit/s (`bbr_lt_bw_diff`), in bytes per second.
const LT_BW_DIFF: f64 = 4000.0 / 8.0;
/// Long-term sampling: use `lt_bw` for this many ProbeBW rounds (`bbr_lt_bw_max_rtts`).
const LT_BW_MAX_RTTS: u32 = 48;
/// ACK aggregation: gain on `extra_acked` (`bbr_extra_acked_gain` = 1.0).
pub(crate) const EXTRA_ACKED_GAIN: f64 = 1.0;
/// ACK aggregation: rounds per window of the two-window max (`bbr_extra_acked_win_rtts`).
pub(crate) const EXTRA_ACKED_WIN_RTTS: u32 = 5;
/// ACK aggregation: epochs restart past this many packets (`bbr_ack_epoch_acked_reset_thresh`).
pub(crate) const ACK_EPOCH_ACKED_RESET_PKTS: u64 = 1 << 20;
/// ACK aggregation: at most this long at `bw` is added to cwnd (`bbr_extra_acked_max_us`).
pub(crate) const EXTRA_ACKED_MAX: Time = 100 * MS;

/// Declared parameters (Linux defaults).
pub static PARAMS: &[ParamSpec] = &[
    ParamSpec::new(
        "high_gain",
        ParamKind::Float,
        Some(ParamValue::Float(HIGH_GAIN)),
        "Startup pacing and cwnd gain, Drain pacing gain 1/high_gain (2/ln 2; Linux bbr_high_gain)",
    )
    .range(1.0, 100.0),
    ParamSpec::new(
        "cwnd_gain",
        ParamKind::Float,
        Some(ParamValue::Float(CWND_GAIN)),
        "ProbeBW cwnd gain over the BDP (Linux bbr_cwnd_gain: 2)",
    )
    .range(1.0, 100.0),
    ParamSpec::new(
        "bw_rtts",
        ParamKind::Int,
        Some(ParamValue::Int(10)),
        "bandwidth max filter window in round trips (Linux bbr_bw_rtts: 10)",
    )
    .range(1.0, 1e6),
    ParamSpec::new(
        "min_rtt_win",
        ParamKind::Time,
        Some(ParamValue::Int(10 * SEC as i64)),
        "min RTT filter window; ProbeRTT starts when it expires (Linux bbr_min_rtt_win_sec: 10 s)",
    )
    .range(1.0, 1e15),
    ParamSpec::new(
        "probe_rtt_time",
        ParamKind::Time,
        Some(ParamValue::Int(200 * MS as i64)),
        "time at 4 packets in ProbeRTT, at least one round too; 0 = no ProbeRTT (Linux bbr_probe_rtt_mode_ms: 200 ms)",
    ),
    ParamSpec::new(
        "full_bw_thresh",
        ParamKind::Float,
        Some(ParamValue::Float(1.25)),
        "bandwidth growth per round that keeps Startup going (Linux bbr_full_bw_thresh: 1.25)",
    )
    .range(1.0, 100.0),
    ParamSpec::new(
        "full_bw_cnt",
        ParamKind::Int,
        Some(ParamValue::Int(3)),
        "rounds without that growth before the pipe counts as full (Linux bbr_full_bw_cnt: 3)",
    )
    .range(1.0, 1000.0),
    ParamSpec::new(
        "tso_segs",
        ParamKind::Int,
        Some(ParamValue::Int(0)),
        "send quantum in segments, 3 of which the cwnd target adds; 0 = Linux bbr_tso_segs_goal: 1 ms of the pacing rate, at least 2 segments (1 below 1.2 Mbit/s), at most 64 KB",
    )
    .range(0.0, 127.0),
    ParamSpec::new(
        "lt_bw",
        ParamKind::Bool,
        Some(ParamValue::Bool(true)),
        "long-term bandwidth sampling that detects token-bucket policers (Linux bbr_lt_bw_sampling)",
    ),
];

/// Registration.
pub const MODEL: CcModel = CcModel {
    name: "bbr",
    doc: "BBR v1 (draft-cardwell-iccrg-bbr-congestion-control-00, Linux tcp_bbr.c): paces at gain x max delivery rate, cwnd 2 BDP; Startup, Drain, ProbeBW gain cycle, ProbeRTT; policer detection; paced (implied unless pacing = false)",
    params: PARAMS,
    random: Randomness::Always { what: "the ProbeBW entry phase" },
    partner_queues: &[],
    build: |p, rng| Box::new(Bbr::from_params(p).with_rng(rng)),
};

/// BBR's state machine (Linux `enum bbr_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Ramp up at `high_gain` until the bandwidth stops growing.
    Startup,
    /// Drain the queue Startup built.
    Drain,
    /// Cycle the pacing gain around the estimated bandwidth.
    ProbeBw,
    /// Cut inflight to 4 packets to measure the min RTT again.
    ProbeRtt,
}

/// True in fast recovery or after a timeout (Linux `state >= TCP_CA_Recovery`).
pub(crate) fn recovering(s: CaState) -> bool {
    s != CaState::Open
}

/// `ceil(x)` for a packet count computed in floating point, without turning an exact
/// product that picked up rounding noise (100.000000000001) into one packet more.
pub(crate) fn ceil_packets(x: f64) -> u64 {
    (x - 1e-9).ceil().max(0.0) as u64
}

/// BBR v1.
#[derive(Clone, Debug)]
pub struct Bbr {
    // Settings.
    high_gain: f64,
    drain_gain: f64,
    cwnd_gain_bw: f64,
    bw_rtts: u64,
    min_rtt_win: Time,
    probe_rtt_time: Time,
    full_bw_thresh: f64,
    full_bw_cnt_max: u32,
    tso_segs: u64,
    lt_enabled: bool,
    rng: Rng,

    /// Set up on the first hook call (Linux `bbr_init` at connection start).
    started: bool,
    mode: Mode,
    /// Max recent delivery rate, bytes per second (`bbr->bw`).
    bw: MaxFilter,
    /// Packet-timed rounds so far (`rtt_cnt`).
    rtt_cnt: u64,
    /// `C.delivered` at which the current round ends (`next_rtt_delivered`).
    next_rtt_delivered: u64,
    /// This ACK started a round (`round_start`).
    round_start: bool,
    /// Current phase of the gain cycle (`cycle_idx`).
    cycle_idx: usize,
    /// Delivery time at which the phase began (`cycle_mstamp`).
    cycle_mstamp: Time,
    /// Time of the latest delivery (Linux `tp->delivered_mstamp`).
    delivered_mstamp: Time,
    /// `C.delivered` seen at the previous hook, to spot deliveries.
    last_delivered: u64,
    /// Min RTT estimate (`min_rtt_us`; `None`: Linux's `~0U`).
    min_rtt: Option<Time>,
    /// When it was taken (`min_rtt_stamp`).
    min_rtt_stamp: Time,
    /// End of the 200 ms at 4 packets (`probe_rtt_done_stamp`).
    probe_rtt_done: Option<Time>,
    /// A round passed at 4 packets (`probe_rtt_round_done`).
    probe_rtt_round_done: bool,
    /// Packets sent with `prior_delivered` in this range count as app-limited (the ProbeRTT
    /// `tp->app_limited` mark; module header).
    probe_rtt_mark: ProbeRttMark,
    /// `ca_state` on the previous ACK (`prev_ca_state`).
    prev_ca_state: CaState,
    /// First round of recovery (`packet_conservation`).
    packet_conservation: bool,
    /// Restarting after idle (`idle_restart`).
    idle_restart: bool,
    /// cwnd before recovery or ProbeRTT (`prior_cwnd`), bytes.
    prior_cwnd: u64,
    /// A ProbeRTT ended by an idle restart: restore `prior_cwnd` at the next ACK.
    restore_pending: bool,
    pacing_gain: f64,
    cwnd_gain: f64,
    full_bw_reached: bool,
    /// Bandwidth at the last round that grew it by `full_bw_thresh` (`full_bw`).
    full_bw: f64,
    full_bw_cnt: u32,
    /// Current pacing rate (`sk_pacing_rate`).
    pacing: Pacing,
    // Long-term (policer) sampling.
    lt_is_sampling: bool,
    lt_rtt_cnt: u32,
    lt_use_bw: bool,
    lt_bw: f64,
    lt_last_delivered: u64,
    lt_last_stamp_ms: u64,
    lt_last_lost: u64,
    /// ACK aggregation.
    aggregation: AckAggregation,
}

impl Default for Bbr {
    /// Linux's defaults.
    fn default() -> Self {
        Bbr::from_params(&Params::resolve("bbr", PARAMS, &Default::default()).expect("defaults are valid"))
    }
}

impl Bbr {
    /// From validated parameters.
    pub fn from_params(p: &Params) -> Self {
        let high_gain = p.float("high_gain");
        Bbr {
            high_gain,
            drain_gain: 1.0 / high_gain,
            cwnd_gain_bw: p.float("cwnd_gain"),
            bw_rtts: p.uint("bw_rtts"),
            min_rtt_win: p.uint("min_rtt_win"),
            probe_rtt_time: p.uint("probe_rtt_time"),
            full_bw_thresh: p.float("full_bw_thresh"),
            full_bw_cnt_max: p.uint("full_bw_cnt") as u32,
            tso_segs: p.uint("tso_segs"),
            lt_enabled: p.bool("lt_bw"),
            rng: Rng::stream(0, Stream::Cc(0)),
            started: false,
            mode: Mode::Startup,
            bw: MaxFilter::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            round_start: false,
            cycle_idx: 0,
            cycle_mstamp: 0,
            delivered_mstamp: 0,
            last_delivered: 0,
            min_rtt: None,
            min_rtt_stamp: 0,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            probe_rtt_mark: ProbeRttMark::default(),
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            idle_restart: false,
            prior_cwnd: 0,
            restore_pending: false,
            pacing_gain: high_gain,
            cwnd_gain: high_gain,
            full_bw_reached: false,
            full_bw: 0.0,
            full_bw_cnt: 0,
            pacing: Pacing::new(high_gain),
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0.0,
            lt_last_delivered: 0,
            lt_last_stamp_ms: 0,
            lt_last_lost: 0,
            aggregation: AckAggregation::default(),
        }
    }

    /// Draw the ProbeBW entry phases from `rng` (the flow's congestion-control stream).
    pub fn with_rng(mut self, rng: Rng) -> Self {
        self.rng = rng;
        self
    }

    /// The current mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The windowed max delivery rate (bytes per second).
    pub fn max_bw(&self) -> f64 {
        self.bw.get()
    }

    /// The bandwidth the model uses: the long-term rate while a policer is assumed, else
    /// [`Bbr::max_bw`] (Linux `bbr_bw`).
    pub fn bw(&self) -> f64 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }

    /// The current pacing gain.
    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }

    /// The current phase of the ProbeBW gain cycle (index into [`PACING_GAIN`]).
    pub fn cycle_index(&self) -> usize {
        self.cycle_idx
    }

    /// The min RTT estimate.
    pub fn min_rtt(&self) -> Option<Time> {
        self.min_rtt
    }

    /// Packet-timed rounds so far.
    pub fn round_count(&self) -> u64 {
        self.rtt_cnt
    }

    /// True once Startup has found the pipe full.
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }

    /// Linux `bbr_init`, at the first hook call: the clocks start now.
    fn start(&mut self, st: &CcState) {
        if self.started {
            return;
        }
        self.started = true;
        self.min_rtt_stamp = st.now;
        self.aggregation.restart(st.now);
        self.delivered_mstamp = st.now;
        self.last_delivered = st.delivered;
        self.init_pacing_rate_from_rtt(st);
        self.reset_lt_bw_sampling(st);
    }

    /// `bbr_save_cwnd`.
    fn save_cwnd(&mut self, cwnd: u64) {
        if !recovering(self.prev_ca_state) && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    /// A uniform draw from `0..n` on the flow's congestion-control stream.
    fn draw(&mut self, n: u64) -> u64 {
        self.rng.range_u64(0, n)
    }

    /// `bbr_reset_probe_bw_mode`: ProbeBW at a random phase other than 3/4.
    fn reset_probe_bw_mode(&mut self) {
        self.mode = Mode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - self.draw(CYCLE_RAND) as usize;
        self.advance_cycle_phase();
    }

    /// `bbr_reset_mode`.
    fn reset_mode(&mut self) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode();
        } else {
            self.mode = Mode::Startup;
        }
    }

    fn advance_cycle_phase(&mut self) {
        self.cycle_idx = (self.cycle_idx + 1) % CYCLE_LEN;
        self.cycle_mstamp = self.delivered_mstamp;
    }

    /// `bbr_is_next_cycle_phase`.
    fn is_next_cycle_phase(&self, st: &CcState, rs: &RateSample) -> bool {
        let mss = st.mss as u64;
        let is_full_length = self.min_rtt.is_some_and(|m| self.delivered_mstamp.saturating_sub(self.cycle_mstamp) > m);
        if self.pacing_gain == 1.0 {
            return is_full_length;
        }
        let inflight = self.in_net_at_edt(mss, rs.prior_in_flight);
        let bw = self.max_bw();
        if self.pacing_gain > 1.0 {
            return is_full_length && (rs.newly_lost > 0 || inflight >= self.inflight(mss, bw, self.pacing_gain));
        }
        is_full_length || inflight <= self.inflight(mss, bw, 1.0)
    }

    /// `bbr_update_bw`: rounds, long-term sampling, the max filter.
    fn update_bw(&mut self, st: &CcState, rs: &RateSample, app_limited: bool) {
        self.round_start = false;
        if rs.interval == 0 || rs.delivered == 0 {
            return; // not a valid observation
        }
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = st.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(st, rs.newly_lost > 0, app_limited);
        let bw = rs.delivery_rate;
        if !app_limited || bw >= self.max_bw() {
            self.bw.update(self.bw_rtts, self.rtt_cnt, bw);
        }
    }

    /// `bbr_update_ack_aggregation`.
    fn update_ack_aggregation(&mut self, st: &CcState, rs: &RateSample) {
        let mss = st.mss as u64;
        if EXTRA_ACKED_GAIN <= 0.0 || rs.newly_acked == 0 || rs.interval == 0 || rs.delivered == 0 {
            return;
        }
        let bw = self.bw();
        self.aggregation.update(
            self.round_start,
            EXTRA_ACKED_WIN_RTTS,
            bw,
            self.delivered_mstamp,
            rs.newly_acked,
            st.cwnd,
            mss,
        );
    }

    /// `bbr_check_full_bw_reached`.
    fn check_full_bw_reached(&mut self, app_limited: bool) {
        if self.full_bw_reached || !self.round_start || app_limited {
            return;
        }
        if self.max_bw() >= self.full_bw * self.full_bw_thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= self.full_bw_cnt_max;
    }

    /// `bbr_check_drain`.
    fn check_drain(&mut self, st: &mut CcState) {
        let mss = st.mss as u64;
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            st.ssthresh = self.inflight(mss, self.max_bw(), 1.0);
        }
        if self.mode == Mode::Drain
            && self.in_net_at_edt(mss, st.bytes_in_flight) <= self.inflight(mss, self.max_bw(), 1.0)
        {
            self.reset_probe_bw_mode();
        }
    }

    /// `bbr_check_probe_rtt_done` without the window: true if ProbeRTT ended now.
    fn probe_rtt_done(&mut self, st: &CcState) -> bool {
        if self.probe_rtt_done.is_none_or(|done| st.now <= done) {
            return false;
        }
        self.min_rtt_stamp = st.now;
        self.reset_mode();
        true
    }

    /// `bbr_update_min_rtt`: the min RTT filter and ProbeRTT.
    fn update_min_rtt(&mut self, st: &mut CcState, rs: &RateSample) {
        let mss = st.mss as u64;
        let filter_expired = st.now > self.min_rtt_stamp + self.min_rtt_win;
        if let Some(rtt) = rs.rtt {
            if self.min_rtt.is_none_or(|m| rtt < m) || filter_expired {
                self.min_rtt = Some(rtt);
                self.min_rtt_stamp = st.now;
            }
        }
        if self.probe_rtt_time > 0 && filter_expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(st.cwnd);
            self.probe_rtt_done = None;
            self.probe_rtt_mark.begin(st.delivered);
        }
        if self.mode == Mode::ProbeRtt {
            // Linux marks the connection app-limited so that ProbeRTT's low-rate samples stay
            // out of the bandwidth filter (module header).
            self.probe_rtt_mark.extend(st.delivered, st.bytes_in_flight);
            if self.probe_rtt_done.is_none() && st.bytes_in_flight <= CWND_MIN_TARGET * mss {
                self.probe_rtt_done = Some(st.now + self.probe_rtt_time);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = st.delivered;
            } else if self.probe_rtt_done.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done && self.probe_rtt_done(st) {
                    st.cwnd = st.cwnd.max(self.prior_cwnd);
                }
            }
        }
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// `bbr_update_gains`.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (self.high_gain, self.high_gain),
            Mode::Drain => (self.drain_gain, self.high_gain),
            Mode::ProbeBw => {
                let gain = if self.lt_use_bw { 1.0 } else { PACING_GAIN[self.cycle_idx] };
                (gain, self.cwnd_gain_bw)
            }
            Mode::ProbeRtt => (1.0, 1.0),
        };
    }

    /// Whether the sample counts as app-limited: the sender's flag or the ProbeRTT mark.
    fn app_limited(&self, rs: &RateSample) -> bool {
        rs.is_app_limited || self.probe_rtt_mark.covers(rs.prior_delivered)
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }

    fn on_ack(&mut self, _st: &mut CcState, _ack: &Ack) {}

    /// `bbr_ssthresh`: save cwnd for the end of recovery; ssthresh unchanged.
    fn ssthresh(&mut self, st: &CcState, _event: Congestion) -> u64 {
        self.save_cwnd(st.cwnd);
        st.ssthresh
    }

    fn on_sent(&mut self, st: &CcState, _bytes: u32) {
        self.start(st);
        if st.snd_nxt != st.snd_una {
            return;
        }
        // Restart from idle (CA_EVENT_TX_START with tp->app_limited).
        self.idle_restart = true;
        self.aggregation.restart(st.now);
        match self.mode {
            Mode::ProbeBw => self.set_pacing_rate(st, self.bw(), 1.0),
            Mode::ProbeRtt => {
                if self.probe_rtt_done(st) {
                    self.restore_pending = true;
                }
            }
            Mode::Startup | Mode::Drain => {}
        }
    }

    fn on_recovery_exit(&mut self, st: &mut CcState) {
        if st.ca_state == CaState::Open && recovering(self.prev_ca_state) {
            st.cwnd = st.cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
            self.prev_ca_state = CaState::Open;
        }
    }

    /// `bbr_set_state(TCP_CA_Loss)`.
    fn on_timeout(&mut self, st: &mut CcState) {
        self.start(st);
        self.prev_ca_state = CaState::Loss;
        self.full_bw = 0.0;
        self.round_start = true; // treat the RTO like the end of a round
        self.lt_bw_sampling(st, true, false);
    }

    fn needs(&self) -> TransportNeeds {
        TransportNeeds { pacing: true, ..TransportNeeds::default() }
    }

    fn owns_window(&self) -> bool {
        true
    }

    /// `bbr_main`.
    fn on_rate_sample(&mut self, st: &mut CcState, _ack: &Ack, rs: &RateSample) {
        self.start(st);
        if st.delivered != self.last_delivered {
            self.delivered_mstamp = st.now;
            self.last_delivered = st.delivered;
        }
        if self.restore_pending {
            st.cwnd = st.cwnd.max(self.prior_cwnd);
            self.restore_pending = false;
        }
        let app_limited = self.app_limited(rs);
        // bbr_update_model
        self.update_bw(st, rs, app_limited);
        self.update_ack_aggregation(st, rs);
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(st, rs) {
            self.advance_cycle_phase();
        }
        self.check_full_bw_reached(app_limited);
        self.check_drain(st);
        self.update_min_rtt(st, rs);
        self.update_gains();
        let bw = self.bw();
        self.set_pacing_rate(st, bw, self.pacing_gain);
        self.set_cwnd(st, rs, bw, self.cwnd_gain);
    }

    fn pacing_rate(&self, st: &CcState) -> Option<f64> {
        Some(self.pacing.rate(st))
    }

    fn vars(&self) -> &'static [VarSpec] {
        VARS
    }

    fn var(&self, name: &str) -> Option<f64> {
        let flag = |b: bool| u8::from(b) as f64;
        Some(match name {
            "bw" => 8.0 * self.bw(),
            "max_bw" => 8.0 * self.max_bw(),
            "lt_bw" => 8.0 * self.lt_bw,
            "min_rtt" => self.min_rtt.map_or(f64::NAN, secs),
            "mode" => match self.mode {
                Mode::Startup => 0.0,
                Mode::Drain => 1.0,
                Mode::ProbeBw => 2.0,
                Mode::ProbeRtt => 3.0,
            },
            "pacing_gain" => self.pacing_gain,
            "cwnd_gain" => self.cwnd_gain,
            "cycle_idx" => self.cycle_idx as f64,
            "rounds" => self.rtt_cnt as f64,
            "full_bw_reached" => flag(self.full_bw_reached),
            "lt_use_bw" => flag(self.lt_use_bw),
            _ => return None,
        })
    }
}

/// BBR's traceable variables (Linux `struct bbr` names).
pub static VARS: &[VarSpec] = &[
    VarSpec::new(
        "bw",
        VarUnit::BitsPerSecond,
        "bottleneck bandwidth the model uses: lt_bw while a policer is assumed, else max_bw (Linux bbr_bw)",
    ),
    VarSpec::new(
        "max_bw",
        VarUnit::BitsPerSecond,
        "windowed max of the delivery-rate samples over bw_rtts rounds (draft BtlBw, Linux bbr_max_bw)",
    ),
    VarSpec::new(
        "lt_bw",
        VarUnit::BitsPerSecond,
        "long-term (policed) bandwidth estimate; 0 until one is found (Linux lt_bw)",
    ),
    VarSpec::new(
        "min_rtt",
        VarUnit::Seconds,
        "min RTT estimate over min_rtt_win (draft RTprop, Linux min_rtt_us); NaN before the first sample",
    ),
    VarSpec::new("mode", VarUnit::State, "0 Startup, 1 Drain, 2 ProbeBW, 3 ProbeRTT (Linux bbr_mode)"),
    VarSpec::new("pacing_gain", VarUnit::Number, "current pacing gain"),
    VarSpec::new("cwnd_gain", VarUnit::Number, "current cwnd gain"),
    VarSpec::new("cycle_idx", VarUnit::State, "phase of the ProbeBW gain cycle, 0 (5/4) to 7 (Linux cycle_idx)"),
    VarSpec::new("rounds", VarUnit::Count, "packet-timed round trips so far (Linux rtt_cnt)"),
    VarSpec::new("full_bw_reached", VarUnit::State, "1 once Startup has found the pipe full, else 0"),
    VarSpec::new("lt_use_bw", VarUnit::State, "1 while the long-term bandwidth is used (a policer is assumed), else 0"),
];
