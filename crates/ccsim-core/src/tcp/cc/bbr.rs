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
//! pacing rate from its model of the path, as Linux's `cong_control` hook (`bbr_main`). **Run
//! it with `pacing = true`**: Linux BBR always paces (fq, or TCP's internal pacing, which it
//! requests with `SK_PACING_NEEDED`); without pacing only the window acts, at 2 BDP plus
//! quanta in steady state, and Startup, Drain and the gain cycle lose their rate half.
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
use super::{Ack, CaState, CcModel, CcState, Congestion, CongestionControl, RateSample};
use crate::params::{ParamKind, ParamSpec, ParamValue, Params};
use crate::registry::Randomness;
use crate::sim::rng::{Rng, Stream};
use crate::sim::time::{Time, MS, SEC, US};

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
const INIT_CWND: u64 = 10;
/// Below this pacing rate the send quantum is 1 segment (Linux `bbr_min_tso_rate`,
/// 1.2 Mbit/s), in bytes per second.
const MIN_TSO_RATE: f64 = 1_200_000.0 / 8.0;
/// The send quantum covers `rate >> sk_pacing_shift` bytes (default shift 10: ~1 ms).
const PACING_SHIFT_DIV: f64 = 1024.0;
/// Largest send quantum in bytes: `GSO_MAX_SIZE - 1 - MAX_TCP_HEADER` (MAX_TCP_HEADER 320).
const GSO_MAX_BYTES: u64 = 65_536 - 1 - 320;
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
const EXTRA_ACKED_GAIN: f64 = 1.0;
/// ACK aggregation: rounds per window of the two-window max (`bbr_extra_acked_win_rtts`).
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
/// ACK aggregation: epochs restart past this many packets (`bbr_ack_epoch_acked_reset_thresh`).
const ACK_EPOCH_ACKED_RESET_PKTS: u64 = 1 << 20;
/// ACK aggregation: at most this long at `bw` is added to cwnd (`bbr_extra_acked_max_us`).
const EXTRA_ACKED_MAX: Time = 100 * MS;

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

/// One sample of the running max: value `v` at round `t`.
#[derive(Clone, Copy, Debug, Default)]
struct MinmaxSample {
    t: u64,
    v: f64,
}

/// Windowed running max over rounds (Linux `lib/win_minmax.c`, `minmax_running_max`): the
/// best, second and third best samples, spread over the window.
#[derive(Clone, Debug, Default)]
struct MaxFilter {
    s: [MinmaxSample; 3],
}

impl MaxFilter {
    fn get(&self) -> f64 {
        self.s[0].v
    }

    fn reset(&mut self, t: u64, v: f64) -> f64 {
        self.s = [MinmaxSample { t, v }; 3];
        v
    }

    /// Take `v`, measured in round `t`, with a window of `win` rounds.
    fn update(&mut self, win: u64, t: u64, v: f64) -> f64 {
        let val = MinmaxSample { t, v };
        if v >= self.s[0].v || t.saturating_sub(self.s[2].t) > win {
            return self.reset(t, v);
        }
        if v >= self.s[1].v {
            self.s[2] = val;
            self.s[1] = val;
        } else if v >= self.s[2].v {
            self.s[2] = val;
        }
        // As time passes, promote the second and third choices (`minmax_subwin_update`).
        let dt = t.saturating_sub(self.s[0].t);
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if t.saturating_sub(self.s[0].t) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            self.s[2] = val;
            self.s[1] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            self.s[2] = val;
        }
        self.s[0].v
    }
}

/// True in fast recovery or after a timeout (Linux `state >= TCP_CA_Recovery`).
fn recovering(s: CaState) -> bool {
    s != CaState::Open
}

/// `ceil(x)` for a packet count computed in floating point, without turning an exact
/// product that picked up rounding noise (100.000000000001) into one packet more.
fn ceil_packets(x: f64) -> u64 {
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
    probe_rtt_mark: Option<(u64, u64)>,
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
    has_seen_rtt: bool,
    /// Current pacing rate, bytes per second (`sk_pacing_rate`); `None` before start.
    pacing: Option<f64>,
    // Long-term (policer) sampling.
    lt_is_sampling: bool,
    lt_rtt_cnt: u32,
    lt_use_bw: bool,
    lt_bw: f64,
    lt_last_delivered: u64,
    lt_last_stamp_ms: u64,
    lt_last_lost: u64,
    // ACK aggregation.
    ack_epoch_mstamp: Time,
    ack_epoch_acked: u64,
    extra_acked: [u64; 2],
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
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
            probe_rtt_mark: None,
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
            has_seen_rtt: false,
            pacing: None,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0.0,
            lt_last_delivered: 0,
            lt_last_stamp_ms: 0,
            lt_last_lost: 0,
            ack_epoch_mstamp: 0,
            ack_epoch_acked: 0,
            extra_acked: [0; 2],
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
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
        self.ack_epoch_mstamp = st.now;
        self.delivered_mstamp = st.now;
        self.last_delivered = st.delivered;
        self.init_pacing_rate_from_rtt(st);
        self.reset_lt_bw_sampling(st);
    }

    /// `high_gain x cwnd / srtt`, 1 ms without an RTT sample (`bbr_init_pacing_rate_from_rtt`).
    fn initial_pacing_rate(&self, st: &CcState) -> f64 {
        let rtt = st.srtt.map_or(MS, |s| s.max(US));
        st.cwnd as f64 * SEC as f64 / rtt as f64 * self.high_gain * PACING_MARGIN
    }

    fn init_pacing_rate_from_rtt(&mut self, st: &CcState) {
        self.has_seen_rtt = st.srtt.is_some();
        self.pacing = Some(self.initial_pacing_rate(st));
    }

    /// `bbr_set_pacing_rate`.
    fn set_pacing_rate(&mut self, st: &CcState, bw: f64, gain: f64) {
        let rate = bw * gain * PACING_MARGIN;
        if !self.has_seen_rtt && st.srtt.is_some() {
            self.init_pacing_rate_from_rtt(st);
        }
        if self.full_bw_reached || rate > self.pacing.unwrap_or(0.0) {
            self.pacing = Some(rate);
        }
    }

    /// Segments per send quantum (`bbr_tso_segs_goal`), module header.
    fn tso_segs_goal(&self, mss: u64) -> u64 {
        if self.tso_segs > 0 {
            return self.tso_segs;
        }
        let rate = self.pacing.unwrap_or(0.0);
        let bytes = ((rate / PACING_SHIFT_DIV).floor() as u64).min(GSO_MAX_BYTES);
        let min_segs = if rate < MIN_TSO_RATE { 1 } else { 2 };
        (bytes / mss).max(min_segs).min(MAX_TSO_SEGS)
    }

    /// `ceil(gain x bw x min_rtt)` in packets; 10 without an RTT sample (`bbr_bdp`).
    fn bdp(&self, mss: u64, bw: f64, gain: f64) -> u64 {
        match self.min_rtt {
            None => INIT_CWND,
            Some(rtt) => ceil_packets(bw * rtt as f64 / SEC as f64 * gain / mss as f64),
        }
    }

    /// `bbr_quantization_budget`, in packets.
    fn quantization_budget(&self, mss: u64, cwnd: u64) -> u64 {
        let mut cwnd = cwnd + 3 * self.tso_segs_goal(mss);
        cwnd = (cwnd + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    /// `bbr_inflight`: the inflight target for `gain`, in bytes.
    fn inflight(&self, mss: u64, bw: f64, gain: f64) -> u64 {
        self.quantization_budget(mss, self.bdp(mss, bw, gain)) * mss
    }

    /// `bbr_packets_in_net_at_edt`, in bytes, with no departure-time queue (module header).
    fn in_net_at_edt(&self, mss: u64, inflight: u64) -> u64 {
        if self.pacing_gain > 1.0 {
            inflight + self.tso_segs_goal(mss) * mss
        } else {
            inflight
        }
    }

    /// `bbr_ack_aggregation_cwnd`, in packets.
    fn ack_aggregation_cwnd(&self, mss: u64) -> u64 {
        if EXTRA_ACKED_GAIN <= 0.0 || !self.full_bw_reached {
            return 0;
        }
        let max_aggr = (self.bw() * EXTRA_ACKED_MAX as f64 / SEC as f64 / mss as f64).floor() as u64;
        let extra = self.extra_acked[0].max(self.extra_acked[1]) / mss;
        ((EXTRA_ACKED_GAIN * extra as f64) as u64).min(max_aggr)
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
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1F);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch = self.delivered_mstamp.saturating_sub(self.ack_epoch_mstamp);
        let mut expected = (self.bw() * epoch as f64 / SEC as f64).floor() as u64;
        if self.ack_epoch_acked <= expected || self.ack_epoch_acked + rs.newly_acked >= ACK_EPOCH_ACKED_RESET_PKTS * mss
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp = self.delivered_mstamp;
            expected = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.newly_acked).min(0xFFFFF * mss);
        let extra = self.ack_epoch_acked.saturating_sub(expected).min(st.cwnd);
        let slot = &mut self.extra_acked[self.extra_acked_win_idx];
        *slot = (*slot).max(extra);
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
            self.probe_rtt_mark = Some((st.delivered, st.delivered));
        }
        if self.mode == Mode::ProbeRtt {
            // Linux marks the connection app-limited so that ProbeRTT's low-rate samples stay
            // out of the bandwidth filter (module header).
            if let Some((from, _)) = self.probe_rtt_mark {
                self.probe_rtt_mark = Some((from, (st.delivered + st.bytes_in_flight).max(1)));
            }
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

    /// Start a new long-term sampling interval (`bbr_reset_lt_bw_sampling_interval`).
    fn reset_lt_bw_sampling_interval(&mut self, st: &CcState) {
        self.lt_last_stamp_ms = self.delivered_mstamp / MS;
        self.lt_last_delivered = st.delivered;
        self.lt_last_lost = st.lost;
        self.lt_rtt_cnt = 0;
    }

    /// `bbr_reset_lt_bw_sampling`.
    fn reset_lt_bw_sampling(&mut self, st: &CcState) {
        self.lt_bw = 0.0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(st);
    }

    /// `bbr_lt_bw_interval_done`: a lossy interval at rate `bw` ended.
    fn lt_bw_interval_done(&mut self, st: &CcState, bw: f64) {
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
    fn lt_bw_sampling(&mut self, st: &CcState, losses: bool, app_limited: bool) {
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

    /// `bbr_set_cwnd_to_recover_or_restore`: the window after losses and recovery
    /// transitions, and whether packet conservation holds it.
    fn recover_or_restore(&mut self, st: &mut CcState, rs: &RateSample, acked: u64) -> (bool, u64) {
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
    fn set_cwnd(&mut self, st: &mut CcState, rs: &RateSample, bw: f64, gain: f64) {
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

    /// Whether the sample counts as app-limited: the sender's flag or the ProbeRTT mark.
    fn app_limited(&self, rs: &RateSample) -> bool {
        rs.is_app_limited || self.probe_rtt_mark.is_some_and(|(from, to)| (from..=to).contains(&rs.prior_delivered))
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
        self.ack_epoch_mstamp = st.now;
        self.ack_epoch_acked = 0;
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
        Some(self.pacing.unwrap_or_else(|| self.initial_pacing_rate(st)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::testkit::{window, Setup, MSS};

    /// The tests' path: bottleneck rate `B` = 1 MB/s (8 Mbit/s), min RTT `R` = 100 ms, so the
    /// BDP is `B x R` = 100 000 bytes = 100 packets of `MSS` = 1000 bytes.
    const B: f64 = 1_000_000.0;
    const R: Time = 100 * MS;

    fn assert_close(got: f64, want: f64) {
        assert!((got - want).abs() <= 1e-9 * want.abs().max(1.0), "got {got}, want {want}");
    }

    /// The ProbeBW window target on the tests' path with one packet per ACK (bytes):
    /// `ceil(2 x B x R) = 200` packets, plus the ACK-aggregation allowance of 1 packet (every
    /// ACK here starts a new aggregation epoch with its own 1000 bytes as the excess), plus
    /// 3 send quanta of 2 segments (pacing below ~2 MB/s: 1 ms of it is under 2 segments):
    /// 207, rounded up to even: 208; 210 in the 5/4 phase (index 0), which adds 2.
    fn probe_bw_target(cycle_idx: usize) -> u64 {
        if cycle_idx == 0 {
            210 * MSS
        } else {
            208 * MSS
        }
    }

    /// Drives a BBR directly with hand-made rate samples. The test sets
    /// `st.bytes_in_flight` (the pipe after the next ACK; also its `prior_in_flight`),
    /// `st.ca_state`, and `sent_at`: `C.delivered` when the packet ending the next sample left.
    struct Drive {
        cc: Bbr,
        st: CcState,
        sent_at: u64,
    }

    impl Drive {
        fn new(cc: Bbr) -> Self {
            Drive { cc, st: window(MSS, 10, None).with_rtt(R, R), sent_at: 0 }
        }

        /// One ACK `gap` after the previous one, for one packet (unless `f` says otherwise),
        /// carrying the RTT sample `R`, whose rate sample measures `rate`.
        fn ack_with(&mut self, gap: Time, rate: f64, f: impl FnOnce(&mut RateSample)) {
            self.st.now += gap;
            let mut rs = RateSample {
                prior_delivered: self.sent_at,
                newly_acked: MSS,
                rtt: Some(R),
                prior_in_flight: self.st.bytes_in_flight,
                delivery_rate: rate,
                ..RateSample::default()
            };
            f(&mut rs);
            self.st.delivered += rs.newly_acked;
            self.st.lost += rs.newly_lost;
            if rs.newly_acked == 0 {
                (rs.prior_delivered, rs.delivered, rs.interval, rs.delivery_rate) = (0, 0, 0, 0.0);
            } else {
                rs.delivered = self.st.delivered - rs.prior_delivered;
                rs.interval = (rs.delivered as f64 * SEC as f64 / rs.delivery_rate).round() as Time;
            }
            self.cc.on_rate_sample(&mut self.st, &Ack::default(), &rs);
        }

        fn ack(&mut self, gap: Time, rate: f64) {
            self.ack_with(gap, rate, |_| {});
        }

        /// A round trip of `n` one-packet ACKs `gap` apart at `rate`: the first delivers a
        /// packet sent after the previous round's first ACK (a round starts), the others
        /// packets sent before this round's first ACK.
        fn round(&mut self, n: u64, gap: Time, rate: f64, app_limited: bool) {
            let mut next = None;
            for _ in 0..n {
                self.ack_with(gap, rate, |rs| rs.is_app_limited = app_limited);
                next.get_or_insert(self.st.delivered);
            }
            self.sent_at = next.unwrap();
        }

        /// An ACK that starts a round: its packet was sent after every ACK so far.
        fn round_ack(&mut self, gap: Time, rate: f64, f: impl FnOnce(&mut RateSample)) {
            self.sent_at = self.st.delivered;
            self.ack_with(gap, rate, f);
        }

        /// Startup at a constant `B` with 150 packets in flight: 4 rounds of 100 ACKs 1 ms
        /// apart end in Drain (test 1), then one ACK with 100 packets in flight enters ProbeBW.
        fn reach_probe_bw(&mut self) {
            self.st.bytes_in_flight = 150 * MSS;
            for _ in 0..4 {
                self.round(100, MS, B, false);
            }
            assert_eq!(self.cc.mode(), Mode::Drain);
            self.st.bytes_in_flight = 100 * MSS;
            self.ack(MS, B);
            assert_eq!(self.cc.mode(), Mode::ProbeBw);
        }
    }

    #[test]
    fn startup_paces_at_high_gain_fills_the_pipe_then_drains_reach_probe_bw() {
        let mut d = Drive::new(Bbr::default());
        // Before any ACK: high_gain x initial cwnd / 1 ms (no RTT yet) x 0.99
        // = 2.885 x 10 000 B / 0.001 s x 0.99 = 28 561 500 B/s.
        d.st.srtt = None;
        assert_close(d.cc.pacing_rate(&d.st).unwrap(), 28_561_500.0);
        // With srtt = 100 ms: 2.885 x 10 000 / 0.1 x 0.99 = 285 615 B/s.
        d.st.srtt = Some(R);
        assert_close(d.cc.pacing_rate(&d.st).unwrap(), 285_615.0);

        // Round 1, 100 ACKs 1 ms apart at rate B: pacing 2.885 x B x 0.99 = 2 856 150 B/s;
        // cwnd grows by the 1000 acked bytes per ACK: 10 000 + 100 x 1000.
        d.st.bytes_in_flight = 150 * MSS;
        d.round(100, MS, B, false);
        assert_eq!(d.cc.mode(), Mode::Startup);
        assert_close(d.cc.pacing_rate(&d.st).unwrap(), 2_856_150.0);
        assert_eq!(d.st.cwnd, 110_000);
        // Target = ceil(2.885 x B x R) = ceil(288.5) = 289 packets, plus 3 send quanta of
        // 2 segments (1 ms of 2.86 MB/s is 2789 bytes: 2 segments) = 295, rounded up to even:
        // 296 packets. Round 2 reaches 210 000; round 3 reaches 296 000 after 86 ACKs and
        // stays there (grows only while below target).
        d.round(100, MS, B, false);
        assert_eq!(d.st.cwnd, 210_000);
        d.round(100, MS, B, false);
        assert_eq!(d.st.cwnd, 296_000);
        // Rounds 2 and 3 did not grow the bandwidth by 25 %: 2 of the 3 rounds; still Startup.
        assert_eq!(d.cc.mode(), Mode::Startup);
        assert!(!d.cc.full_bw_reached());
        // The first ACK of round 4 is the third such round: Drain. Pacing gain 1/2.885:
        // B / 2.885 x 0.99 = 343 154.246... B/s; ssthresh = the 1.0 x BDP inflight:
        // 100 + 3 x 2 = 106 packets.
        d.ack(MS, B);
        assert_eq!(d.cc.mode(), Mode::Drain);
        assert_close(d.cc.pacing_rate(&d.st).unwrap(), B / 2.885 * 0.99);
        assert_eq!(d.st.ssthresh, 106_000);
        // Drain holds while inflight exceeds 106 packets...
        d.st.bytes_in_flight = 107 * MSS;
        d.ack(MS, B);
        assert_eq!(d.cc.mode(), Mode::Drain);
        // ... and ends once it is down to it: ProbeBW, at a phase other than 3/4.
        d.st.bytes_in_flight = 106 * MSS;
        d.ack(MS, B);
        assert_eq!(d.cc.mode(), Mode::ProbeBw);
        let idx = d.cc.cycle_index();
        assert_ne!(idx, 1);
        assert_eq!(d.cc.pacing_gain(), PACING_GAIN[idx]);
        assert_close(d.cc.pacing_rate(&d.st).unwrap(), PACING_GAIN[idx] * B * 0.99);
    }

    #[test]
    fn startup_continues_while_the_bandwidth_grows_by_a_quarter_per_round() {
        // Exactly +25 % per round (>= the threshold) resets the count every round: still
        // Startup after 10 rounds. Growth is measured against `full_bw`, the last estimate that
        // grew enough: 3 rounds at 1.24 x that one end Startup on the third.
        let mut d = Drive::new(Bbr::default());
        d.st.bytes_in_flight = 150 * MSS;
        let mut rate = B;
        for _ in 0..10 {
            d.round(10, MS, rate, false);
            assert_eq!(d.cc.full_bw, rate);
            rate *= 1.25;
        }
        assert_eq!(d.cc.mode(), Mode::Startup);
        let full_bw = d.cc.full_bw;
        for k in 1..=3 {
            d.round(10, MS, full_bw * 1.24, false);
            assert_eq!(d.cc.full_bw_reached(), k == 3, "round {k} at +24 %");
        }
        // Drain, left at once: 150 packets in flight are below the BDP at ~9 MB/s.
        assert_eq!(d.cc.mode(), Mode::ProbeBw);
    }

    #[test]
    fn the_bandwidth_filter_is_the_max_over_the_last_ten_rounds() {
        let mut d = Drive::new(Bbr::default());
        // Round 1 at 2B, then B. Linux's running max keeps a sample of round t until the first
        // sample of round t + 11 (10 rounds of window after it): 2B through round 11.
        d.round(10, MS, 2.0 * B, false);
        assert_eq!(d.cc.round_count(), 1);
        assert_eq!(d.cc.max_bw(), 2.0 * B);
        for r in 2..=11 {
            d.round(10, MS, B, false);
            assert_eq!(d.cc.round_count(), r);
            assert_eq!(d.cc.max_bw(), 2.0 * B, "round {r}");
        }
        d.round(10, MS, B, false);
        assert_eq!(d.cc.round_count(), 12);
        assert_eq!(d.cc.max_bw(), B, "the 2B sample of round 1 aged out in round 12");
        // A higher sample takes over at once; lower ones do not lower it within the window.
        d.round(10, MS, 1.5 * B, false);
        assert_eq!(d.cc.max_bw(), 1.5 * B);
        for _ in 0..10 {
            d.round(10, MS, 0.5 * B, false);
            assert_eq!(d.cc.max_bw(), 1.5 * B);
        }
        d.round(10, MS, 0.5 * B, false);
        assert_eq!(d.cc.max_bw(), 0.5 * B);
        // ACKs within a round do not count rounds.
        assert_eq!(d.cc.round_count(), 24);
    }

    #[test]
    fn probe_bw_cycles_the_pacing_gain_each_min_rtt() {
        let mut d = Drive::new(Bbr::default());
        d.reach_probe_bw();
        let first = d.cc.cycle_index();
        assert_ne!(first, 1, "never entered at the 3/4 phase");
        // ACKs every 10 ms (R = 100 ms): a phase lasts until the first ACK more than R after
        // its start, the 11th. Inflight (before each ACK) chosen so that the inflight
        // conditions hold at that time:
        // - 5/4: bbr_inflight(B, 5/4) = ceil(125) + 3 x 2 = 131 -> 132 (even) + 2 (phase 0) =
        //   134 packets, against inflight + one quantum of 2: 132 000 reaches it;
        // - 3/4: it ends early at inflight <= bbr_inflight(B, 1) = 100 + 6 = 106 packets, so
        //   107 000 lets it run its full length.
        let inflight = |idx: usize| match idx {
            0 => 132 * MSS,
            1 => 107 * MSS,
            _ => 100 * MSS,
        };
        let mut idx = first;
        for _ in 0..16 {
            for k in 1..=11 {
                d.st.bytes_in_flight = inflight(idx);
                d.ack(10 * MS, B);
                let want = if k < 11 { idx } else { (idx + 1) % CYCLE_LEN };
                assert_eq!(d.cc.cycle_index(), want, "phase {idx}, ACK {k}");
                assert_eq!(d.cc.pacing_gain(), PACING_GAIN[want]);
                assert_close(d.cc.pacing_rate(&d.st).unwrap(), PACING_GAIN[want] * B * 0.99);
            }
            idx = (idx + 1) % CYCLE_LEN;
        }
        // The 5/4 phase with inflight short of its target (131 000 + 2000 < 134 000) and no
        // loss outlasts its min RTT...
        while d.cc.cycle_index() != 0 {
            d.st.bytes_in_flight = 100 * MSS;
            d.ack(10 * MS, B);
        }
        d.st.bytes_in_flight = 131 * MSS;
        for _ in 0..30 {
            d.ack(10 * MS, B);
            assert_eq!(d.cc.cycle_index(), 0);
        }
        // ... until a loss ends it.
        d.ack_with(10 * MS, B, |rs| rs.newly_lost = MSS);
        assert_eq!(d.cc.cycle_index(), 1);
        // The 3/4 phase ends at the first ACK with inflight down to 106 packets, 10 ms in.
        d.st.bytes_in_flight = 106 * MSS;
        d.ack(10 * MS, B);
        assert_eq!(d.cc.cycle_index(), 2);
        // Gain-1 phases go by time alone, whatever inflight.
        for k in 1..=11 {
            d.st.bytes_in_flight = if k % 2 == 0 { 0 } else { 500 * MSS };
            d.ack(10 * MS, B);
            assert_eq!(d.cc.cycle_index(), if k < 11 { 2 } else { 3 });
        }
        // The 5/4 phase also ends once inflight reaches its target after its min RTT.
        while d.cc.cycle_index() != 0 {
            d.st.bytes_in_flight = 100 * MSS;
            d.ack(10 * MS, B);
        }
        d.st.bytes_in_flight = 131 * MSS;
        for _ in 0..15 {
            d.ack(10 * MS, B);
        }
        assert_eq!(d.cc.cycle_index(), 0);
        d.st.bytes_in_flight = 132 * MSS;
        d.ack(10 * MS, B);
        assert_eq!(d.cc.cycle_index(), 1);
    }

    #[test]
    fn probe_bw_starts_at_a_random_phase_other_than_three_quarters() {
        // Linux: cycle_idx = 7 - U{0..6}, then one advance: phases 2..7 and 0, evenly.
        let mut seen = [0u32; CYCLE_LEN];
        for seed in 0..100u64 {
            let mut cc = Bbr::default().with_rng(Rng::stream(seed, Stream::Cc(0)));
            for _ in 0..14 {
                cc.reset_probe_bw_mode();
                seen[cc.cycle_index()] += 1;
            }
        }
        assert_eq!(seen[1], 0);
        for (idx, n) in seen.iter().enumerate().filter(|&(i, _)| i != 1) {
            // 1400 draws over 7 phases: 200 each on average.
            assert!((140..=260).contains(n), "phase {idx}: {n} of 1400");
        }
        // Through the real path, different seeds enter at different phases, never at 3/4.
        let mut entries = std::collections::BTreeSet::new();
        for seed in 0..20 {
            let mut d = Drive::new(Bbr::default().with_rng(Rng::stream(seed, Stream::Cc(0))));
            d.reach_probe_bw();
            assert_ne!(d.cc.cycle_index(), 1);
            entries.insert(d.cc.cycle_index());
        }
        assert!(entries.len() >= 3, "{entries:?}");
    }

    #[test]
    fn probe_rtt_holds_four_packets_for_200_ms_and_a_round_then_restores_the_window() {
        let mut d = Drive::new(Bbr::default());
        d.reach_probe_bw();
        // Settle ProbeBW; then an ACK carrying an RTT 1 us below the minimum restamps it at
        // t0 (only a strictly lower sample does, Linux's `rtt_us < min_rtt_us`).
        d.st.bytes_in_flight = 150 * MSS;
        for _ in 0..20 {
            d.ack(10 * MS, B);
        }
        d.ack_with(10 * MS, B, |rs| rs.rtt = Some(R - 1_000));
        let t0 = d.st.now;
        // ACKs every 100 ms with RTT samples of 120 ms do not refresh it; 10 s after t0 the
        // filter has not expired yet (it must be older than 10 s).
        let slow = |rs: &mut RateSample| rs.rtt = Some(120 * MS);
        for _ in 0..100 {
            d.ack_with(100 * MS, B, slow);
            assert_eq!(d.cc.mode(), Mode::ProbeBw);
        }
        assert_eq!(d.st.now, t0 + 10 * SEC);
        let before = d.st.cwnd;
        assert_eq!(before, probe_bw_target(d.cc.cycle_index()));
        d.ack_with(100 * MS, B, slow);
        assert_eq!(d.cc.mode(), Mode::ProbeRtt);
        assert_eq!(d.st.cwnd, 4 * MSS, "bbr_cwnd_min_target");
        assert_eq!(d.cc.prior_cwnd, before);
        assert_eq!(d.cc.pacing_gain(), 1.0);
        // While inflight is above 4 packets the 200 ms do not start, however long.
        d.st.bytes_in_flight = 50 * MSS;
        for _ in 0..100 {
            d.ack(10 * MS, B);
            assert_eq!((d.cc.mode(), d.st.cwnd), (Mode::ProbeRtt, 4 * MSS));
        }
        // Inflight at 4 packets: the 200 ms start, and a round starts with the next delivery
        // of a packet sent from now on.
        d.st.bytes_in_flight = 4 * MSS;
        d.ack(10 * MS, B);
        let tq = d.st.now;
        let round_mark = d.st.delivered;
        // 300 ms pass but no round ends (every ACK is for a packet sent before): still ProbeRTT.
        for _ in 0..30 {
            d.ack(10 * MS, B);
            assert_eq!((d.cc.mode(), d.st.cwnd), (Mode::ProbeRtt, 4 * MSS));
        }
        assert_eq!(d.st.now, tq + 300 * MS);
        // The round ends: back to ProbeBW (the pipe was full before), the saved window back,
        // capped by this ACK's growth rule: min(before + 1000, target).
        d.sent_at = round_mark;
        d.ack(10 * MS, B);
        assert_eq!(d.cc.mode(), Mode::ProbeBw);
        assert_eq!(d.st.cwnd, (before + MSS).min(probe_bw_target(d.cc.cycle_index())));
        assert!(d.st.cwnd >= before.min(probe_bw_target(d.cc.cycle_index())));
        assert_eq!(d.cc.min_rtt(), Some(R), "ProbeRTT's samples brought the min RTT back to R");
        let t1 = d.st.now;

        // Next time the round comes first: ProbeRTT lasts until the first ACK after 200 ms.
        d.st.bytes_in_flight = 150 * MSS;
        while d.st.now <= t1 + 10 * SEC {
            assert_ne!(d.cc.mode(), Mode::ProbeRtt);
            d.ack_with(100 * MS, B, slow);
        }
        assert_eq!(d.cc.mode(), Mode::ProbeRtt, "10 s after the last min RTT update");
        d.st.bytes_in_flight = 4 * MSS;
        d.ack(10 * MS, B);
        let tq = d.st.now;
        d.round_ack(10 * MS, B, |_| {});
        for _ in 0..19 {
            d.ack(10 * MS, B);
            assert_eq!((d.cc.mode(), d.st.cwnd), (Mode::ProbeRtt, 4 * MSS));
        }
        assert_eq!(d.st.now, tq + 200 * MS, "not yet past the 200 ms");
        d.ack(10 * MS, B);
        assert_eq!(d.cc.mode(), Mode::ProbeBw);
        assert!(d.st.cwnd > 4 * MSS);
    }

    #[test]
    fn recovery_conserves_packets_for_a_round_then_restores_the_prior_window() {
        let mut d = Drive::new(Bbr::default());
        d.reach_probe_bw();
        d.st.bytes_in_flight = 150 * MSS;
        for _ in 0..5 {
            d.ack(MS, B);
        }
        // Lose outside the 5/4 phase, whose window is 2 packets larger, so that the prior
        // window is the plain target: 208 packets.
        while d.cc.cycle_index() == 0 {
            d.ack(10 * MS, B);
        }
        let prior = d.st.cwnd;
        assert_eq!(prior, probe_bw_target(1));
        // The sender enters fast recovery: ssthresh() saves the window and leaves ssthresh.
        let ssthresh = d.st.ssthresh;
        assert_eq!(d.cc.ssthresh(&d.st, Congestion::Loss), ssthresh);
        assert_eq!(d.cc.prior_cwnd, prior);
        // First ACK in Recovery, 3 packets newly lost, 50 left in flight after it:
        // cwnd = inflight + acked = 50 000 + 1000 (packet conservation).
        d.st.ca_state = CaState::Recovery;
        d.st.bytes_in_flight = 50 * MSS;
        d.ack_with(MS, B, |rs| rs.newly_lost = 3 * MSS);
        let entry_delivered = d.st.delivered;
        assert_eq!(d.st.cwnd, 51_000);
        // Within that round, at least inflight + acked, no growth beyond: 49 in flight keeps
        // 51 000; 60 in flight allows 61 000; a loss of 5 packets with 40 in flight:
        // max(61 000 - 5000, 40 000 + 1000) = 56 000.
        d.st.bytes_in_flight = 49 * MSS;
        d.ack(MS, B);
        assert_eq!(d.st.cwnd, 51_000);
        d.st.bytes_in_flight = 60 * MSS;
        d.ack(MS, B);
        assert_eq!(d.st.cwnd, 61_000);
        d.st.bytes_in_flight = 40 * MSS;
        d.ack_with(MS, B, |rs| rs.newly_lost = 5 * MSS);
        assert_eq!(d.st.cwnd, 56_000);
        // A packet sent after recovery began is delivered: the round ends, conservation
        // ends, and the window grows by the acked bytes toward the target (56 000 + 1000).
        d.sent_at = entry_delivered;
        d.ack(MS, B);
        assert_eq!(d.st.cwnd, 57_000);
        d.ack(MS, B);
        assert_eq!(d.st.cwnd, 58_000);
        // Back to Open: the window saved at the start of recovery comes back, then the usual
        // rule min(cwnd + acked, target) (208 packets, 210 in the 5/4 phase) applies.
        d.st.ca_state = CaState::Open;
        d.ack(MS, B);
        assert!(d.st.cwnd >= prior);
        assert_eq!(d.st.cwnd, (prior + MSS).min(probe_bw_target(d.cc.cycle_index())));

        // The same through on_recovery_exit, when the sender reports Open there: the window
        // comes back at once.
        d.st.ssthresh = d.cc.ssthresh(&d.st, Congestion::Loss);
        let prior = d.cc.prior_cwnd;
        d.st.ca_state = CaState::Recovery;
        d.st.bytes_in_flight = 30 * MSS;
        d.ack(MS, B);
        assert_eq!(d.st.cwnd, 31_000);
        d.st.ca_state = CaState::Open;
        d.cc.on_recovery_exit(&mut d.st);
        assert_eq!(d.st.cwnd, prior);

        // A timeout: the sender saves through ssthresh(), sets the loss window, on_timeout.
        // Then growth by acked bytes (at least 4 packets) until Open restores the prior window.
        let prior = d.st.cwnd;
        d.cc.ssthresh(&d.st, Congestion::Timeout);
        d.st.cwnd = MSS;
        d.st.ca_state = CaState::Loss;
        d.cc.on_timeout(&mut d.st);
        assert_eq!(d.cc.full_bw, 0.0, "bbr_set_state(TCP_CA_Loss) resets full_bw");
        assert!(d.cc.lt_is_sampling, "and counts a loss for the long-term sampler");
        d.st.bytes_in_flight = 0;
        d.ack(MS, B);
        assert_eq!(d.st.cwnd, 4 * MSS, "max(1000 + 1000, 4 packets)");
        d.ack(MS, B);
        assert_eq!(d.st.cwnd, 5 * MSS);
        d.st.ca_state = CaState::Open;
        d.ack(MS, B);
        assert!(d.st.cwnd >= prior.min(probe_bw_target(d.cc.cycle_index())));
    }

    #[test]
    fn app_limited_samples_do_not_lower_the_bandwidth_estimate() {
        let mut d = Drive::new(Bbr::default());
        d.reach_probe_bw();
        assert_eq!(d.cc.max_bw(), B);
        // 20 rounds of app-limited samples at B/4: far beyond the 10-round window, still B.
        for _ in 0..20 {
            d.round(10, MS, B / 4.0, true);
            assert_eq!(d.cc.max_bw(), B);
        }
        // An app-limited sample above the estimate is taken.
        d.round(10, MS, 2.0 * B, true);
        assert_eq!(d.cc.max_bw(), 2.0 * B);
        // The same low samples, not app-limited, replace it once it is more than 10 rounds
        // old: after 9 app-limited rounds (which leave the filter alone), a round 10 rounds
        // after the 2B sample still keeps it (win_minmax: `t - s[2].t > win` to forget); the
        // next one replaces it.
        for _ in 0..9 {
            d.round(10, MS, B / 4.0, true);
        }
        d.round(10, MS, B / 4.0, false);
        assert_eq!(d.cc.max_bw(), 2.0 * B);
        d.round(10, MS, B / 4.0, false);
        assert_eq!(d.cc.max_bw(), B / 4.0);
    }

    #[test]
    fn probe_rtt_samples_count_as_app_limited() {
        // Linux marks the connection app-limited in ProbeRTT; the sender here does not, so BBR
        // classifies the packets sent during ProbeRTT itself.
        let mut d = Drive::new(Bbr::default());
        d.reach_probe_bw();
        d.st.bytes_in_flight = 150 * MSS;
        d.ack_with(10 * MS, B, |rs| rs.rtt = Some(R - 1_000)); // restamps the minimum
        let t0 = d.st.now;
        while d.cc.mode() != Mode::ProbeRtt {
            d.ack_with(500 * MS, B, |rs| rs.rtt = Some(2 * R));
        }
        assert!(d.st.now > t0 + 10 * SEC);
        // 30 rounds of 4-packet flights at B/10, sent during ProbeRTT and not flagged by the
        // sender; 50 packets in flight hold ProbeRTT open. The estimate stays B.
        d.st.bytes_in_flight = 50 * MSS;
        for _ in 0..30 {
            d.round_ack(10 * MS, B / 10.0, |_| {});
            assert_eq!(d.cc.mode(), Mode::ProbeRtt);
        }
        assert_eq!(d.cc.max_bw(), B);
    }

    #[test]
    fn a_policer_is_detected_from_two_lossy_intervals_at_the_same_rate() {
        let mut d = Drive::new(Bbr::default());
        d.reach_probe_bw();
        d.st.bytes_in_flight = 150 * MSS;
        // Every ACK (2 ms apart) starts a round, delivers 1000 bytes at 500 000 B/s and
        // reports 1000 bytes lost. The first loss starts sampling; the interval ends at the
        // loss of its 4th round: 3000 lost of 3000 delivered (>= 50/256) over 6 ms = 500 000
        // B/s. The next one: 4000 bytes over 8 ms, the same rate: a policer, lt_bw = 500 000.
        let policed = 500_000.0;
        for k in 0..8 {
            assert!(!d.cc.lt_use_bw, "ACK {k}");
            d.round_ack(2 * MS, policed, |rs| rs.newly_lost = MSS);
        }
        assert!(d.cc.lt_use_bw);
        assert_eq!(d.cc.bw(), policed);
        assert_eq!(d.cc.max_bw(), B, "the max filter still holds B");
        assert_eq!(d.cc.pacing_gain(), 1.0);
        assert_close(d.cc.pacing_rate(&d.st).unwrap(), policed * 0.99);
        // lt_bw holds for 48 ProbeBW rounds, then sampling starts over.
        for _ in 0..47 {
            d.round_ack(2 * MS, policed, |_| {});
            assert!(d.cc.lt_use_bw);
            assert_eq!(d.cc.pacing_gain(), 1.0);
        }
        d.round_ack(2 * MS, policed, |_| {});
        assert!(!d.cc.lt_use_bw);
        assert_eq!(d.cc.mode(), Mode::ProbeBw);
    }

    #[test]
    fn a_restart_from_idle_paces_at_the_estimate_and_skips_probe_rtt() {
        let mut d = Drive::new(Bbr::default());
        d.reach_probe_bw();
        while d.cc.cycle_index() != 0 {
            d.ack(10 * MS, B);
        }
        assert_close(d.cc.pacing_rate(&d.st).unwrap(), 1.25 * B * 0.99);
        // Nothing outstanding, a segment leaves: pace at 1.0 x bw (x 0.99).
        d.st.snd_una = 5 * MSS;
        d.st.snd_nxt = 5 * MSS;
        d.cc.on_sent(&d.st, MSS as u32);
        assert_close(d.cc.pacing_rate(&d.st).unwrap(), B * 0.99);
        // With data outstanding, sending is no restart.
        d.st.snd_nxt = 6 * MSS;
        d.ack(MS, B);
        let rate = d.cc.pacing_rate(&d.st).unwrap();
        d.cc.on_sent(&d.st, MSS as u32);
        assert_eq!(d.cc.pacing_rate(&d.st).unwrap(), rate);

        // Without a restart, an expired min RTT (11 s without an update) starts ProbeRTT at the
        // next ACK.
        let mut busy = Drive::new(Bbr::default());
        busy.reach_probe_bw();
        busy.st.now += 11 * SEC;
        busy.ack(MS, B);
        assert_eq!(busy.cc.mode(), Mode::ProbeRtt);
        // After a restart from idle it does not: not on an ACK that delivers nothing, nor on
        // the first that delivers data, whose RTT sample the expired filter takes; then the
        // estimate is fresh for another 10 s.
        d.st.now += 11 * SEC;
        d.st.snd_nxt = d.st.snd_una;
        d.cc.on_sent(&d.st, MSS as u32);
        d.ack_with(MS, B, |rs| (rs.newly_acked, rs.rtt) = (0, None));
        assert_eq!(d.cc.mode(), Mode::ProbeBw);
        d.ack_with(MS, B, |rs| rs.rtt = Some(R + MS));
        assert_eq!(d.cc.mode(), Mode::ProbeBw);
        assert_eq!(d.cc.min_rtt(), Some(R + MS));
        assert!(!d.cc.idle_restart);
        d.ack(MS, B);
        assert_eq!(d.cc.mode(), Mode::ProbeBw);
    }

    #[test]
    fn registered_as_an_owner_of_its_window_with_linux_defaults() {
        let m = crate::tcp::cc::CCS.iter().find(|m| m.name == "bbr").unwrap();
        let p = Params::resolve("bbr", m.params, &Default::default()).unwrap();
        let cc = (m.build)(&p, Rng::stream(0, Stream::Cc(0)));
        assert!(cc.owns_window());
        assert_eq!(cc.name(), "bbr");
        let st = window(MSS, 10, None);
        assert!(cc.pacing_rate(&st).is_some());
        let d = Bbr::default();
        assert_eq!((d.high_gain, d.cwnd_gain_bw, d.bw_rtts), (2.885, 2.0, 10));
        assert_eq!((d.min_rtt_win, d.probe_rtt_time), (10 * SEC, 200 * MS));
        assert_eq!((d.full_bw_thresh, d.full_bw_cnt_max), (1.25, 3));
    }
}
