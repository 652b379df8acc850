//! BBR v3: draft-ietf-ccwg-bbr-06 (Cardwell, Swett, Beshay, "BBR Congestion Control", IETF
//! CCWG, 6 July 2026, the latest revision) and its reference implementation, Google's Linux
//! `net/ipv4/tcp_bbr.c` on the `v3` branch of github.com/google/bbr (`BBR_VERSION` 3, the code
//! the draft's Implementation Status lists; read at commit 001a430b). Where the two differ,
//! Linux is followed, as for v1 (`tcp/cc/bbr/`), and the draft's value is a parameter away
//! where it is a constant; the differences are listed below. Also: Cardwell et al., "BBR v2: A
//! Model-based Congestion Control" (IETF 104 and 105 ICCRG) and "BBRv3: Algorithm Bug Fixes
//! and Performance Improvements" (IETF 117 CCWG).
//!
//! Like v1, BBR v3 owns its window ([`CongestionControl::owns_window`]): the sender hands it a
//! delivery-rate sample ([`RateSample`]) on every ACK and it sets cwnd and the pacing rate
//! (Linux `bbr_main`). Its flows are paced unless they say `pacing = false`. The pieces v1 and
//! v3 share (the pacing rate and its start, the ACK-aggregation estimator, ProbeRTT's
//! application-limited mark) are v1's (`tcp/cc/bbr/shared.rs`).
//!
//! The model, per ACK in Linux's order (`bbr_main`):
//! - Rounds (`bbr_update_round_start`): a round ends when a valid sample's `prior_delivered`
//!   reaches `next_rtt_delivered`, which then becomes `C.delivered`; each phase change that
//!   starts a round (`StartRound`) sets it too. `rounds_since_probe` counts them.
//! - Long-term model, `max_bw`: the max of two slots (`bw_hi[2]`), the current and the previous
//!   ProbeBW cycle; samples go to the current slot (app-limited ones only if at least
//!   `max_bw`); the window advances one round after each probe ends (`ACKS_PROBE_STOPPING`),
//!   unless that round's sample is app-limited or the slot is empty (the draft's "BBR.max_bw
//!   Max Filter"). `inflight_hi` (draft `inflight_longterm`): unset until the loss or CE rate of
//!   a probe is too high.
//! - Short-term model: `bw_lo` and `inflight_lo` (draft `bw_shortterm`, `inflight_shortterm`),
//!   unset until congestion is seen while not probing; `bw = min(max_bw, bw_lo)`.
//! - Loss (`bbr_is_inflight_too_high`): a sample's loss rate is too high when the bytes marked
//!   lost between its packet's transmission and its ACK exceed `loss_thresh` (2 %) of what was
//!   in flight when that packet left. While probing (Startup excepted) the first such sample
//!   sets `inflight_hi = max(tx_in_flight, beta x target_inflight)` and ends the probe
//!   (`bbr_handle_inflight_too_high`); for the ACK that marked the loss, `tx_in_flight` is the
//!   in-flight at which the rate crossed 2 % (`bbr_inflight_hi_from_lost_skb`). Outside a
//!   probe, any loss in a round cuts `bw_lo` and `inflight_lo` to `max(latest, beta x itself)`
//!   at the round's end, `beta` = 0.7, from `max_bw` and cwnd the first time
//!   (`bbr_adapt_lower_bounds`); the latest values are the round's max delivery rate and
//!   delivered volume (`bw_latest`, `inflight_latest`). A round without too much loss raises
//!   `inflight_hi` to any larger `tx_in_flight`.
//! - ECN (`ecn = true`, off by default as in Linux outside shallow-threshold paths, see below):
//!   once the min RTT is at most `ecn_max_rtt` (5 ms) the flow is ECN-eligible; at each round
//!   start `ecn_alpha` (initially 1) moves 1/16 of the way to the round's fraction of
//!   CE-marked bytes delivered (`bbr_update_ecn_alpha`); a round with CE marks outside a probe
//!   cuts `inflight_lo` to `(1 - ecn_factor x ecn_alpha)` of itself, `ecn_factor` = 1/3; a
//!   sample whose CE-marked share exceeds `ecn_thresh` (1/2) is "too high" as a lossy one is;
//!   two rounds in a row at or above `ecn_thresh` end Startup; a cycle with CE marks and no
//!   loss probes again at once, `inflight_hi` growing from half of itself
//!   (`bbr_ecn_reprobe_gain`).
//! - Startup: pacing gain 2.77 (4 ln 2), cwnd gain 2. It ends (`full_bw_reached`) after
//!   `full_bw_cnt` = 3 round starts without a sample 25 % above `full_bw` (a larger sample
//!   restarts the count on any ACK that is not app-limited, `bbr_check_full_bw_reached`), or at
//!   the end of a round in fast recovery with at least `full_loss_cnt` = 6 loss-marking ACKs and
//!   a loss rate above 2 %, or on two CE rounds; then `inflight_hi = max(bbr_inflight(max_bw,
//!   1), inflight_latest)` (`bbr_handle_queue_too_high_in_startup`).
//! - Drain: pacing gain `drain_gain`, cwnd gain 2, ssthresh set to `bbr_inflight(max_bw, 1)`
//!   (for reporting, as Linux), until inflight is at most `bbr_inflight(max_bw, 1)`, or
//!   `drain_rounds` have passed if set (the draft's 3); then ProbeBW_DOWN.
//! - ProbeBW (`bbr_update_cycle_phase`), on every ACK once the pipe was full:
//!   - DOWN (pacing gain `probe_down_gain`, 0.91): starts a cycle: congestion signals reset,
//!     the wall clock and a round start, and a random wait is drawn: 2 s plus U[0, 1 s)
//!     (`probe_wait`), and a round count of 0 or 1 (`rounds_since_probe`). It moves to CRUISE
//!     once inflight (`prior_in_flight`, plus a send quantum while the gain is above 1) is at
//!     most both `inflight_hi - headroom` (`headroom` = 15 % of it, at least a packet) and
//!     `bbr_inflight(max_bw, 1)`.
//!   - CRUISE (gain 1): cwnd capped at `inflight_hi - headroom` and `inflight_lo`; entering it
//!     caps `inflight_lo` at `inflight_hi`.
//!   - From DOWN or CRUISE, REFILL once the wait has elapsed, or once `rounds_since_probe`
//!     reaches `min(63, target_inflight)` packets' worth of rounds (Reno coexistence: a
//!     62-63-round bound), `target_inflight = min(bbr_inflight(bw, 1), cwnd)`
//!     (`bbr_check_time_to_probe_bw`).
//!   - REFILL (gain 1): the short-term model is reset; after one round, UP, whose samples count
//!     as probe feedback (`bw_probe_samples`).
//!   - UP (gain 1.25, cwnd gain 2.25): `full_bw` restarts from the current sample; cwnd capped at
//!     `inflight_hi`, which grows by one packet per `max(cwnd / 2^k, 1)` packets (S)ACKed while
//!     cwnd-limited at it, `k` counting the rounds of UP (1, 2, 4, ... packets per round,
//!     `bbr_probe_inflight_hi_upward`). UP ends (to DOWN) when the loss or CE rate is too high,
//!     when `full_bw_reached`'s estimator finds a plateau (3 rounds without 25 % growth, counted
//!     afresh while `inflight_hi` limits the window), or, after a probe that was too high,
//!     as soon as inflight reaches `inflight_hi` (the draft's precautionary probing: a round
//!     later, if that probe saw no excess loss, REFILL comes again at once).
//! - Window (`bbr_set_cwnd`, `bbr_bound_cwnd_for_inflight_model`): target
//!   `ceil(cwnd_gain x bw x min_rtt)` packets plus the ACK-aggregation allowance (kept over
//!   one round in Startup, five after), quantised (`bbr_quantization_budget`: at least 3 send
//!   quanta and 4 packets, 2 more in UP); cwnd grows by the bytes (S)ACKed up to it once the
//!   pipe was full, and before while below it or below twice the initial window; at least 4
//!   packets. Then capped by the model: `inflight_hi` in DOWN, REFILL and UP, `inflight_hi -
//!   headroom` in CRUISE and ProbeRTT, `inflight_lo` always (at least 4 packets).
//! - Send quantum (`bbr_tso_segs_goal`, v3): 1 ms of the pacing rate plus 64 KB halved for
//!   every 512 us of min RTT, at most `GSO_MAX_SIZE - 1 - MAX_TCP_HEADER` (65 215 bytes), at
//!   least 2 segments; `tso_segs > 0` fixes it.
//! - Pacing: `pacing_gain x bw x 0.99`, raised only until the pipe is full (v1's rule).
//! - ProbeRTT (`bbr_update_min_rtt`): `probe_rtt_min` is the min RTT over `probe_rtt_interval`
//!   (5 s), renewed by a lower sample or by any once expired; `min_rtt` takes it when lower or
//!   equal, or when its own 10 s window (`min_rtt_win`) has expired. When `probe_rtt_min`
//!   expires (not on an idle restart), ProbeRTT: cwnd saved, pacing gain 1, cwnd capped at
//!   `max(4 packets, ceil(0.5 x bw x min_rtt))` (half the BDP) and at `inflight_hi - headroom`;
//!   once inflight is down to that, it holds for `probe_rtt_time` (200 ms) and at least a round,
//!   then restamps `probe_rtt_min`, restores cwnd to at least the saved one, resets the
//!   short-term model and goes to ProbeBW CRUISE (through DOWN, which draws a new wait), or
//!   Startup if the pipe was never full. Its samples count as app-limited (v1's mark).
//! - Loss recovery: no packet conservation and no per-ACK subtraction of losses (v1 had
//!   both); losses act through the model above. ssthresh() saves cwnd (`bbr_save_cwnd`). A
//!   retransmission timeout (`bbr_set_state(TCP_CA_Loss)`) resets the full-bandwidth estimator
//!   and, outside a probe, sets `inflight_lo` to the saved cwnd if unset; leaving the Loss
//!   state restores cwnd to at least the saved one (`bbr_exit_loss_recovery`).
//! - Restart from idle: as v1 (pace at 1.0 x bw in ProbeBW, end a ProbeRTT whose time is up,
//!   no ProbeRTT until data is delivered).
//!
//! Where draft-06 and Linux v3 differ (Linux followed; parameter for the draft's value):
//! - ProbeBW_DOWN's pacing gain: draft 0.90, Linux 0.91 (`probe_down_gain`).
//! - Drain's pacing gain: draft 0.5, Linux 1/2.885 as in v1 (`drain_gain`).
//! - The draft also leaves Drain after 3 rounds whatever inflight; Linux has no such limit
//!   (`drain_rounds`, 0 = none).
//! - The draft's Startup plateau check looks at round starts only; Linux restarts the count on
//!   any ACK whose sample is 25 % above `full_bw`.
//! - ECN: the draft specifies no response (a flow that sends ECT must treat CE as congestion);
//!   Linux has the response above, used only on paths its route marks as shallow-threshold
//!   ECN (`TCP_ECN_LOW`) and with a min RTT of at most 5 ms (`ecn`, `ecn_max_rtt`).
//! - The draft restores cwnd on leaving fast recovery too; Linux only on leaving the Loss state.
//! - Startup's loss exit: the draft sets `inflight_hi` from the BDP, Linux from the quantised
//!   `bbr_inflight` (with the send quanta).
//! - Linux's fixed point (gains in 1/256) is not reproduced: the gains are exact (2.77 not
//!   710/256, 0.91 not 232/256, 2 % not 5/256, beta 0.7 not 180/256, headroom 0.15 not
//!   38/256); alpha and the CE fraction are floating point.
//!
//! Deviations from Linux, forced by the simulator's interface:
//! - The sender's rate sample lacks Linux v3's `tx_in_flight`, `lost` and `delivered_ce` (the
//!   per-packet fields v3 adds to `tcp_rate.c`); BBR v3 keeps them itself, per transmission,
//!   keyed by `C.delivered` at transmission ([`txlog`]): a burst sent between two ACKs shares
//!   the record of its last packet.
//! - Linux examines each packet as it is marked lost (`bbr_skb_marked_lost`); the sender here
//!   reports only the bytes an ACK marked lost (`rs.newly_lost`), so the lost packets are taken
//!   one by one with the ACK's sample packet's record standing in for theirs. Losses marked by
//!   a timeout are noted (a lossy round) and reach the model through later samples' `lost`.
//! - `tp->is_cwnd_limited` is taken as "data sent while the window was full (not another
//!   segment fitted) is still outstanding" ([`txlog`]).
//! - CE marks come from Accurate ECN feedback (`Ack::ce_packets`, RFC 9768: the packets, counted
//!   at one MSS each), which `ecn = true` asks for; Linux counts the packets an ECE-bearing ACK
//!   delivers, with DCTCP-style precise ACKs from a BBR v3 receiver (`bbr_precise_ece_ack`).
//!   Either way the count is exact per packet.
//! - ProbeRTT's app-limited mark, departure-time accounting, the min-RTT filter's delayed-ACK
//!   test and restart from idle: as v1 (module header of `tcp/cc/bbr/mod.rs`).
//! - The random wait and round count are drawn from the flow's congestion-control stream
//!   (`Stream::Cc`), not `get_random_u32_below`.
//!
//! Not implemented: `bbr_undo_cwnd` and the draft's spurious-recovery undo (the sender detects no
//! spurious recoveries), TLP-based loss probing (`bbr_run_loss_probe_recovery`; the sender has
//! no tail loss probe), Protective Load Balancing (`bbr_plb`), the fast path for app-limited
//! ACKs (`bbr_run_fast_path`, a CPU saving that skips some model updates), the
//! `sk_max_pacing_rate` and `snd_cwnd_clamp` caps, `get_info` and `sndbuf_expand`.

use super::bbr::shared::{AckAggregation, Pacing, ProbeRttMark};
use super::bbr::{recovering, CWND_MIN_TARGET, EXTRA_ACKED_WIN_RTTS};
use super::{
    Ack, CaState, CcModel, CcState, Congestion, CongestionControl, EcnFeedback, RateSample, TransportNeeds, VarSpec,
    VarUnit,
};
use crate::params::{ParamKind, ParamSpec, ParamValue, Params};
use crate::registry::Randomness;
use crate::sim::rng::{Rng, Stream};
use crate::sim::time::{Time, MS, SEC};

mod cycle;
mod model;
#[cfg(test)]
mod tests;
pub mod txlog;
mod window;

use txlog::{TxLog, TxSample};

/// Startup pacing gain, 4 ln 2 rounded as the draft does (`BBR.StartupPacingGain`, Linux
/// `bbr_startup_pacing_gain`).
pub const STARTUP_GAIN: f64 = 2.77;
/// cwnd gain in Startup, Drain and ProbeBW (`BBR.DefaultCwndGain`, Linux `bbr_cwnd_gain`).
pub const CWND_GAIN: f64 = 2.0;
/// ProbeBW_UP's pacing gain (Linux `bbr_pacing_gain[BBR_BW_PROBE_UP]`).
pub const PROBE_UP_GAIN: f64 = 1.25;
/// ProbeBW_UP adds this to the cwnd gain (Linux `bbr_bw_probe_cwnd_gain`: 1/4).
pub const PROBE_UP_CWND_GAIN: f64 = 0.25;
/// ProbeRTT's window over the BDP (`BBR.ProbeRTTCwndGain`, Linux `bbr_probe_rtt_cwnd_gain`).
pub const PROBE_RTT_CWND_GAIN: f64 = 0.5;
/// The full-pipe estimator's growth threshold (Linux `bbr_full_bw_thresh`).
pub const FULL_BW_THRESH: f64 = 1.25;
/// Startup ends after this many rounds in a row with a CE fraction of at least `ecn_thresh`
/// (Linux `bbr_full_ecn_cnt`).
const FULL_ECN_CNT: u32 = 2;
/// `ecn_alpha`'s EWMA gain (Linux `bbr_ecn_alpha_gain`).
pub const ECN_ALPHA_GAIN: f64 = 1.0 / 16.0;
/// After a cycle with CE marks and no loss, `inflight_hi` grows from this fraction of itself
/// (Linux `bbr_ecn_reprobe_gain`).
const ECN_REPROBE_GAIN: f64 = 0.5;
/// The Reno-coexistence bound on the rounds between probes (Linux `bbr_bw_probe_max_rounds`).
pub const BW_PROBE_MAX_ROUNDS: u32 = 63;
/// The round count starts at a random value below this (Linux `bbr_bw_probe_rand_rounds`).
const BW_PROBE_RAND_ROUNDS: u64 = 2;
/// The wall-clock wait before a probe: at least this (Linux `bbr_bw_probe_base_us`) ...
pub const BW_PROBE_BASE: Time = 2 * SEC;
/// ... plus a uniform draw below this (Linux `bbr_bw_probe_rand_us`), in whole microseconds.
pub const BW_PROBE_RAND: Time = SEC;
/// `bw_probe_up_rounds` stops doubling here (Linux: `min(rounds + 1, 30)`).
const MAX_PROBE_UP_ROUNDS: u32 = 30;

/// Declared parameters (Linux defaults; the draft's values where they differ are noted).
pub static PARAMS: &[ParamSpec] = &[
    ParamSpec::new(
        "probe_down_gain",
        ParamKind::Float,
        Some(ParamValue::Float(0.91)),
        "ProbeBW_DOWN pacing gain (Linux bbr_pacing_gain[DOWN]: 0.91; draft-ietf-ccwg-bbr-06: 0.90)",
    )
    .range(0.1, 1.0),
    ParamSpec::new(
        "drain_gain",
        ParamKind::Float,
        Some(ParamValue::Float(1.0 / 2.885)),
        "Drain pacing gain (Linux bbr_drain_gain: 1/2.885; draft-ietf-ccwg-bbr-06: 0.5)",
    )
    .range(0.01, 1.0),
    ParamSpec::new(
        "drain_rounds",
        ParamKind::Int,
        Some(ParamValue::Int(0)),
        "leave Drain after this many rounds even above the BDP; 0 = only once inflight is down to it (Linux; draft-ietf-ccwg-bbr-06: 3)",
    )
    .range(0.0, 1e6),
    ParamSpec::new(
        "loss_thresh",
        ParamKind::Float,
        Some(ParamValue::Float(0.02)),
        "loss rate of a round trip's flight above which inflight was too high (draft BBR.LossThresh, Linux bbr_loss_thresh: 2 %)",
    )
    .range(0.001, 0.5),
    ParamSpec::new(
        "beta",
        ParamKind::Float,
        Some(ParamValue::Float(0.7)),
        "bw_lo and inflight_lo become max(latest, beta x themselves) per lossy round; inflight_hi is at least beta x the target after a probe (draft BBR.Beta, Linux 1 - bbr_beta: 0.7)",
    )
    .range(0.01, 1.0),
    ParamSpec::new(
        "headroom",
        ParamKind::Float,
        Some(ParamValue::Float(0.15)),
        "fraction of inflight_hi left unused in CRUISE and ProbeRTT (draft BBR.Headroom, Linux bbr_inflight_headroom: 0.15)",
    )
    .range(0.0, 0.99),
    ParamSpec::new(
        "probe_rtt_interval",
        ParamKind::Time,
        Some(ParamValue::Int(5 * SEC as i64)),
        "ProbeRTT once the RTT has not fallen to its minimum for this long (draft BBR.ProbeRTTInterval, Linux bbr_probe_rtt_win_ms: 5 s)",
    )
    .range(1.0, 1e15),
    ParamSpec::new(
        "probe_rtt_time",
        ParamKind::Time,
        Some(ParamValue::Int(200 * MS as i64)),
        "time at half the BDP in ProbeRTT, at least one round too; 0 = no ProbeRTT (draft BBR.ProbeRTTDuration, Linux bbr_probe_rtt_mode_ms: 200 ms)",
    ),
    ParamSpec::new(
        "min_rtt_win",
        ParamKind::Time,
        Some(ParamValue::Int(10 * SEC as i64)),
        "min RTT filter window (draft BBR.MinRTTFilterLen, Linux bbr_min_rtt_win_sec: 10 s)",
    )
    .range(1.0, 1e15),
    ParamSpec::new(
        "full_bw_cnt",
        ParamKind::Int,
        Some(ParamValue::Int(3)),
        "rounds without 25 % bandwidth growth before the pipe counts as full, in Startup and ProbeBW_UP (Linux bbr_full_bw_cnt: 3)",
    )
    .range(1.0, 1000.0),
    ParamSpec::new(
        "full_loss_cnt",
        ParamKind::Int,
        Some(ParamValue::Int(6)),
        "Startup ends at the end of a round in recovery with this many loss-marking ACKs and loss above loss_thresh; 0 = not on loss (draft BBRStartupFullLossCnt, Linux bbr_full_loss_cnt: 6)",
    )
    .range(0.0, 15.0),
    ParamSpec::new(
        "ecn",
        ParamKind::Bool,
        Some(ParamValue::Bool(false)),
        "respond to CE marks, for shallow-threshold (L4S-style) marking: needs ECN and AccECN feedback (implied when true); off as Linux outside TCP_ECN_LOW routes",
    ),
    ParamSpec::new(
        "ecn_max_rtt",
        ParamKind::Time,
        Some(ParamValue::Int(5 * MS as i64)),
        "with ecn, CE marks count once the min RTT is at most this; 0 = at any RTT (Linux bbr_ecn_max_rtt_us: 5 ms)",
    ),
    ParamSpec::new(
        "ecn_thresh",
        ParamKind::Float,
        Some(ParamValue::Float(0.5)),
        "CE-marked fraction of a sample above which inflight was too high; two Startup rounds at it end Startup (Linux bbr_ecn_thresh: 0.5)",
    )
    .range(0.0, 1.0),
    ParamSpec::new(
        "ecn_factor",
        ParamKind::Float,
        Some(ParamValue::Float(1.0 / 3.0)),
        "a round with CE marks outside a probe cuts inflight_lo to (1 - ecn_factor x ecn_alpha) of itself (Linux bbr_ecn_factor: 1/3)",
    )
    .range(0.0, 1.0),
    ParamSpec::new(
        "tso_segs",
        ParamKind::Int,
        Some(ParamValue::Int(0)),
        "send quantum in segments, 3 of which the window keeps; 0 = Linux v3 bbr_tso_segs_goal: 1 ms of the pacing rate plus 64 KB halved per 512 us of min RTT, at least 2 segments, at most 64 KB",
    )
    .range(0.0, 1000.0),
];

/// Registration.
pub const MODEL: CcModel = CcModel {
    name: "bbr3",
    doc: "BBR v3 (draft-ietf-ccwg-bbr-06, Linux tcp_bbr.c v3): Startup at 2.77, Drain, ProbeBW DOWN/CRUISE/REFILL/UP probing after 2-3 s or at most 63 rounds, ProbeRTT every 5 s at half the BDP; loss above 2 % per round (and CE marks with ecn = true) bounds inflight_hi, inflight_lo and bw_lo; paced (implied unless pacing = false)",
    params: PARAMS,
    random: Randomness::Always { what: "the wait before each bandwidth probe (2-3 s, 62-63 rounds)" },
    partner_queues: &[],
    build: |p, rng| Box::new(Bbr3::from_params(p).with_rng(rng)),
};

/// The ProbeBW phases (Linux `enum bbr_pacing_gain_phase`, draft `ProbeBW_*` states).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Probe for bandwidth: pacing gain 1.25.
    Up,
    /// Drain the queue the probe built: pacing gain `probe_down_gain`.
    Down,
    /// Send at the estimated bandwidth, leaving headroom.
    Cruise,
    /// Refill the pipe for one round before probing.
    Refill,
}

/// BBR v3's state machine (Linux `enum bbr_mode` with the ProbeBW phase).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Ramp up at the Startup gain until the pipe is full.
    Startup,
    /// Drain the queue Startup built.
    Drain,
    /// The bandwidth-probing cycle.
    ProbeBw(Phase),
    /// Cut inflight to half the BDP to measure the min RTT again.
    ProbeRtt,
}

/// What the ACKs arriving now say about the bandwidth probe (Linux `enum bbr_ack_phase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckPhase {
    /// Not probing, no probe feedback.
    Init,
    /// Sending at the estimated bandwidth to fill the pipe.
    Refilling,
    /// Inflight rising to probe.
    ProbeStarting,
    /// Feedback from the probe arriving.
    ProbeFeedback,
    /// Probe over, its feedback still arriving.
    ProbeStopping,
}

/// "Unset" for the byte bounds (Linux `~0U`).
const UNSET: u64 = u64::MAX;

/// BBR v3.
#[derive(Clone, Debug)]
pub struct Bbr3 {
    // Settings.
    probe_down_gain: f64,
    drain_gain: f64,
    drain_rounds: u64,
    loss_thresh: f64,
    beta: f64,
    headroom: f64,
    probe_rtt_interval: Time,
    probe_rtt_time: Time,
    min_rtt_win: Time,
    full_bw_cnt_max: u32,
    full_loss_cnt: u32,
    ecn: bool,
    ecn_max_rtt: Time,
    ecn_thresh: f64,
    ecn_factor: f64,
    tso_segs: u64,
    rng: Rng,

    /// Set up on the first hook call (Linux `bbr_init`).
    started: bool,
    mode: Mode,
    ack_phase: AckPhase,
    /// Packet-timed rounds so far.
    round_count: u64,
    /// `C.delivered` at which the current round ends (`next_rtt_delivered`).
    next_rtt_delivered: u64,
    round_start: bool,
    /// Time of the latest delivery (`tp->delivered_mstamp`), and `C.delivered` then.
    delivered_mstamp: Time,
    last_delivered: u64,
    /// The two slots of the max-bandwidth filter, bytes per second (`bw_hi`): the previous
    /// cycle's and the current one's.
    bw_hi: [f64; 2],
    /// Short-term bandwidth bound (`bw_lo`); infinite when unset.
    bw_lo: f64,
    /// This round's max delivery rate and delivered volume (`bw_latest`, `inflight_latest`).
    bw_latest: f64,
    inflight_latest: u64,
    /// Long-term and short-term in-flight bounds, bytes ([`UNSET`]: none).
    inflight_hi: u64,
    inflight_lo: u64,
    /// The loss round (`loss_round_delivered`, `loss_round_start`) and its signals.
    loss_round_delivered: u64,
    loss_round_start: bool,
    loss_in_round: bool,
    ecn_in_round: bool,
    loss_in_cycle: bool,
    ecn_in_cycle: bool,
    /// ACKs that marked losses in the current loss round, in Startup (`loss_events_in_round`).
    loss_events_in_round: u32,
    /// The full-pipe estimator.
    full_bw: f64,
    full_bw_cnt: u32,
    full_bw_now: bool,
    full_bw_reached: bool,
    /// ProbeBW_UP's growth of `inflight_hi`: bytes (S)ACKed per packet of growth, bytes
    /// (S)ACKed towards the next packet, and rounds of growth so far.
    bw_probe_up_cnt: u64,
    bw_probe_up_acks: u64,
    bw_probe_up_rounds: u32,
    /// The wall-clock wait of this cycle (`probe_wait_us`) and its start (`cycle_mstamp`).
    probe_wait: Time,
    cycle_mstamp: Time,
    /// Rounds since the last probe (`rounds_since_probe`), from a random 0 or 1.
    rounds_since_probe: u32,
    /// Samples reflect the probe (`bw_probe_samples`).
    bw_probe_samples: bool,
    prev_probe_too_high: bool,
    stopped_risky_probe: bool,
    /// ECN state: eligible, alpha, and the delivered and CE counts at alpha's last update.
    ecn_eligible: bool,
    ecn_alpha: f64,
    alpha_last_delivered: u64,
    alpha_last_delivered_ce: u64,
    startup_ecn_rounds: u32,
    /// CE-marked bytes delivered so far (`tp->delivered_ce`, counted as MSS-sized packets).
    delivered_ce: u64,
    /// Min RTT (`min_rtt_us`) and its stamp; the min over the ProbeRTT interval
    /// (`probe_rtt_min_us`) and its stamp.
    min_rtt: Option<Time>,
    min_rtt_stamp: Time,
    probe_rtt_min: Option<Time>,
    probe_rtt_min_stamp: Time,
    /// End of the time at ProbeRTT's window (`probe_rtt_done_stamp`), and a round passed.
    probe_rtt_done: Option<Time>,
    probe_rtt_round_done: bool,
    probe_rtt_mark: ProbeRttMark,
    prev_ca_state: CaState,
    idle_restart: bool,
    /// cwnd before recovery or ProbeRTT (`prior_cwnd`), bytes.
    prior_cwnd: u64,
    /// A ProbeRTT ended by an idle restart: restore `prior_cwnd` at the next ACK.
    restore_pending: bool,
    pacing_gain: f64,
    cwnd_gain: f64,
    pacing: Pacing,
    /// The initial window, packets (`init_cwnd`).
    init_cwnd: u64,
    /// Round count when Drain began (`BBR.drain_start_round`).
    drain_start_round: u64,
    aggregation: AckAggregation,
    tx: TxLog,
}

impl Default for Bbr3 {
    /// Linux's defaults.
    fn default() -> Self {
        Bbr3::from_params(&Params::resolve("bbr3", PARAMS, &Default::default()).expect("defaults are valid"))
    }
}

impl Bbr3 {
    /// From validated parameters.
    pub fn from_params(p: &Params) -> Self {
        Bbr3 {
            probe_down_gain: p.float("probe_down_gain"),
            drain_gain: p.float("drain_gain"),
            drain_rounds: p.uint("drain_rounds"),
            loss_thresh: p.float("loss_thresh"),
            beta: p.float("beta"),
            headroom: p.float("headroom"),
            probe_rtt_interval: p.uint("probe_rtt_interval"),
            probe_rtt_time: p.uint("probe_rtt_time"),
            min_rtt_win: p.uint("min_rtt_win"),
            full_bw_cnt_max: p.uint("full_bw_cnt") as u32,
            full_loss_cnt: p.uint("full_loss_cnt") as u32,
            ecn: p.bool("ecn"),
            ecn_max_rtt: p.uint("ecn_max_rtt"),
            ecn_thresh: p.float("ecn_thresh"),
            ecn_factor: p.float("ecn_factor"),
            tso_segs: p.uint("tso_segs"),
            rng: Rng::stream(0, Stream::Cc(0)),
            started: false,
            mode: Mode::Startup,
            ack_phase: AckPhase::Init,
            round_count: 0,
            next_rtt_delivered: 0,
            round_start: false,
            delivered_mstamp: 0,
            last_delivered: 0,
            bw_hi: [0.0; 2],
            bw_lo: f64::INFINITY,
            bw_latest: 0.0,
            inflight_latest: 0,
            inflight_hi: UNSET,
            inflight_lo: UNSET,
            loss_round_delivered: 0,
            loss_round_start: false,
            loss_in_round: false,
            ecn_in_round: false,
            loss_in_cycle: false,
            ecn_in_cycle: false,
            loss_events_in_round: 0,
            full_bw: 0.0,
            full_bw_cnt: 0,
            full_bw_now: false,
            full_bw_reached: false,
            bw_probe_up_cnt: UNSET,
            bw_probe_up_acks: 0,
            bw_probe_up_rounds: 0,
            probe_wait: 0,
            cycle_mstamp: 0,
            rounds_since_probe: 0,
            bw_probe_samples: false,
            prev_probe_too_high: false,
            stopped_risky_probe: false,
            ecn_eligible: false,
            ecn_alpha: 1.0,
            alpha_last_delivered: 0,
            alpha_last_delivered_ce: 0,
            startup_ecn_rounds: 0,
            delivered_ce: 0,
            min_rtt: None,
            min_rtt_stamp: 0,
            probe_rtt_min: None,
            probe_rtt_min_stamp: 0,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            probe_rtt_mark: ProbeRttMark::default(),
            prev_ca_state: CaState::Open,
            idle_restart: false,
            prior_cwnd: 0,
            restore_pending: false,
            pacing_gain: STARTUP_GAIN,
            cwnd_gain: CWND_GAIN,
            pacing: Pacing::new(STARTUP_GAIN),
            init_cwnd: 0,
            drain_start_round: 0,
            aggregation: AckAggregation::default(),
            tx: TxLog::default(),
        }
    }

    /// Draw the probe waits from `rng` (the flow's congestion-control stream).
    pub fn with_rng(mut self, rng: Rng) -> Self {
        self.rng = rng;
        self
    }

    /// The current state.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The max of the bandwidth filter's two slots, bytes per second (`bbr_max_bw`).
    pub fn max_bw(&self) -> f64 {
        self.bw_hi[0].max(self.bw_hi[1])
    }

    /// The bandwidth the model uses, `min(max_bw, bw_lo)` (`bbr_bw`).
    pub fn bw(&self) -> f64 {
        self.max_bw().min(self.bw_lo)
    }

    /// The short-term bandwidth bound, if set.
    pub fn bw_lo(&self) -> Option<f64> {
        self.bw_lo.is_finite().then_some(self.bw_lo)
    }

    /// The long-term in-flight bound (bytes), if set.
    pub fn inflight_hi(&self) -> Option<u64> {
        (self.inflight_hi != UNSET).then_some(self.inflight_hi)
    }

    /// The short-term in-flight bound (bytes), if set.
    pub fn inflight_lo(&self) -> Option<u64> {
        (self.inflight_lo != UNSET).then_some(self.inflight_lo)
    }

    /// The EWMA of the CE-marked fraction.
    pub fn ecn_alpha(&self) -> f64 {
        self.ecn_alpha
    }

    /// The current pacing and cwnd gains.
    pub fn gains(&self) -> (f64, f64) {
        (self.pacing_gain, self.cwnd_gain)
    }

    /// The min RTT estimate.
    pub fn min_rtt(&self) -> Option<Time> {
        self.min_rtt
    }

    /// Packet-timed rounds so far.
    pub fn round_count(&self) -> u64 {
        self.round_count
    }

    /// True once Startup found the pipe full.
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }

    /// The wall-clock wait drawn for the current cycle.
    pub fn probe_wait(&self) -> Time {
        self.probe_wait
    }

    /// Linux `bbr_init`, at the first hook call.
    fn start(&mut self, st: &CcState) {
        if self.started {
            return;
        }
        self.started = true;
        let mss = st.mss as u64;
        self.init_cwnd = (st.cwnd / mss).min(0x7F);
        self.next_rtt_delivered = st.delivered;
        self.min_rtt = st.min_rtt;
        self.probe_rtt_min = st.min_rtt;
        self.min_rtt_stamp = st.now;
        self.probe_rtt_min_stamp = st.now;
        self.pacing.init_from_rtt(st);
        self.aggregation.restart(st.now);
        self.delivered_mstamp = st.now;
        self.last_delivered = st.delivered;
        // Start sampling loss rounds after the first flight is acknowledged.
        self.loss_round_delivered = st.delivered + 1;
    }

    /// `bbr_save_cwnd`.
    fn save_cwnd(&mut self, cwnd: u64) {
        if !recovering(self.prev_ca_state) && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    /// The current ProbeBW phase, if in ProbeBW.
    pub fn phase(&self) -> Option<Phase> {
        match self.mode {
            Mode::ProbeBw(p) => Some(p),
            _ => None,
        }
    }

    /// Whether the sample counts as app-limited: the sender's flag or ProbeRTT's mark.
    fn app_limited(&self, rs: &RateSample) -> bool {
        rs.is_app_limited || self.probe_rtt_mark.covers(rs.prior_delivered)
    }

    /// `bbr_update_gains`.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (STARTUP_GAIN, CWND_GAIN),
            Mode::Drain => (self.drain_gain, CWND_GAIN),
            Mode::ProbeBw(Phase::Up) => (PROBE_UP_GAIN, CWND_GAIN + PROBE_UP_CWND_GAIN),
            Mode::ProbeBw(Phase::Down) => (self.probe_down_gain, CWND_GAIN),
            Mode::ProbeBw(Phase::Cruise | Phase::Refill) => (1.0, CWND_GAIN),
            Mode::ProbeRtt => (1.0, 1.0),
        };
    }
}

impl CongestionControl for Bbr3 {
    fn name(&self) -> &'static str {
        "bbr3"
    }

    fn on_ack(&mut self, _st: &mut CcState, _ack: &Ack) {}

    /// CE marks, from every ACK (including those the rate sampler skips).
    fn on_ack_received(&mut self, st: &CcState, ack: &Ack) {
        if self.ecn {
            self.delivered_ce += ack.ce_packets as u64 * st.mss as u64;
        }
    }

    /// `bbr_ssthresh`: save cwnd for the end of recovery; ssthresh unchanged.
    fn ssthresh(&mut self, st: &CcState, _event: Congestion) -> u64 {
        self.start(st);
        self.save_cwnd(st.cwnd);
        st.ssthresh
    }

    fn on_sent(&mut self, st: &CcState, bytes: u32) {
        self.start(st);
        let idle = st.snd_nxt == st.snd_una;
        self.tx.on_sent(st, bytes as u64, self.delivered_ce);
        if !idle {
            return;
        }
        // Restart from idle (CA_EVENT_TX_START with tp->app_limited).
        self.idle_restart = true;
        self.aggregation.restart(st.now);
        match self.mode {
            Mode::ProbeBw(_) => self.pacing.set(st, self.bw(), 1.0, self.full_bw_reached),
            Mode::ProbeRtt => {
                if self.check_probe_rtt_done(st) {
                    self.restore_pending = true;
                }
            }
            Mode::Startup | Mode::Drain => {}
        }
    }

    fn on_recovery_exit(&mut self, st: &mut CcState) {
        if st.ca_state == CaState::Open && self.prev_ca_state == CaState::Loss {
            st.cwnd = st.cwnd.max(self.prior_cwnd);
            self.prev_ca_state = CaState::Open;
        }
    }

    /// `bbr_set_state(TCP_CA_Loss)`, and the losses the timeout marks (`bbr_note_loss`).
    fn on_timeout(&mut self, st: &mut CcState) {
        self.start(st);
        self.prev_ca_state = CaState::Loss;
        self.reset_full_bw();
        if !self.is_probing_bandwidth() && self.inflight_lo == UNSET {
            self.inflight_lo = st.cwnd.max(self.prior_cwnd);
        }
        self.note_loss(st);
    }

    fn needs(&self) -> TransportNeeds {
        if self.ecn {
            TransportNeeds { ecn: true, ecn_feedback: EcnFeedback::Accurate, pacing: true, ..TransportNeeds::default() }
        } else {
            TransportNeeds { pacing: true, ..TransportNeeds::default() }
        }
    }

    fn owns_window(&self) -> bool {
        true
    }

    /// `bbr_main`, preceded by what Linux does for the ACK before calling it: the losses it
    /// marked (`bbr_skb_marked_lost`) and a change of recovery state (`bbr_set_state`).
    fn on_rate_sample(&mut self, st: &mut CcState, ack: &Ack, rs: &RateSample) {
        self.start(st);
        if st.delivered != self.last_delivered {
            self.delivered_mstamp = st.now;
            self.last_delivered = st.delivered;
        }
        if self.restore_pending {
            st.cwnd = st.cwnd.max(self.prior_cwnd);
            self.restore_pending = false;
        }
        if self.prev_ca_state == CaState::Loss && st.ca_state != CaState::Loss {
            st.cwnd = st.cwnd.max(self.prior_cwnd); // bbr_exit_loss_recovery
        }
        let app_limited = self.app_limited(rs);
        let tx = self.tx.sample(rs, st, self.delivered_ce);
        if rs.newly_lost > 0 {
            self.on_lost(st, rs, &tx, app_limited);
        }

        self.update_round_start(st, rs);
        if self.round_start {
            self.rounds_since_probe = (self.rounds_since_probe + 1).min(0xFF);
            self.update_ecn_alpha(st);
        }
        self.ecn_in_round |= self.ecn_eligible && ack.ce_packets > 0;
        let sample_bw = if rs.interval > 0 { rs.delivery_rate } else { 0.0 };
        self.update_latest_delivery_signals(st, rs, sample_bw);

        // bbr_update_model
        self.update_congestion_signals(st, rs, sample_bw, app_limited);
        self.update_ack_aggregation(st, rs);
        self.check_loss_too_high_in_startup(st, rs, &tx);
        self.check_full_bw_reached(sample_bw, app_limited);
        self.check_drain(st);
        self.update_cycle_phase(st, rs, &tx, sample_bw, app_limited);
        self.update_min_rtt(st, rs);

        self.update_gains();
        let bw = self.bw();
        self.pacing.set(st, bw, self.pacing_gain, self.full_bw_reached);
        self.set_cwnd(st, rs, bw, self.cwnd_gain);
        self.bound_cwnd_for_inflight_model(st);

        // bbr_advance_latest_delivery_signals and the end of bbr_main.
        if self.loss_round_start {
            self.bw_latest = sample_bw;
            self.inflight_latest = rs.delivered;
        }
        self.prev_ca_state = st.ca_state;
        self.loss_in_cycle |= tx.lost > 0;
        self.ecn_in_cycle |= tx.delivered_ce > 0;
        if rs.delivered > 0 {
            self.tx.prune(rs.prior_delivered);
        }
    }

    fn pacing_rate(&self, st: &CcState) -> Option<f64> {
        Some(self.pacing.rate(st))
    }

    fn vars(&self) -> &'static [VarSpec] {
        VARS
    }

    fn var(&self, name: &str) -> Option<f64> {
        let bound = |v: u64| if v == UNSET { f64::NAN } else { v as f64 };
        Some(match name {
            "bw" => 8.0 * self.bw(),
            "max_bw" => 8.0 * self.max_bw(),
            "bw_lo" => self.bw_lo().map_or(f64::NAN, |b| 8.0 * b),
            "inflight_hi" => bound(self.inflight_hi),
            "inflight_lo" => bound(self.inflight_lo),
            "min_rtt" => self.min_rtt.map_or(f64::NAN, crate::sim::time::secs),
            "mode" => match self.mode {
                Mode::Startup => 0.0,
                Mode::Drain => 1.0,
                Mode::ProbeBw(Phase::Down) => 2.0,
                Mode::ProbeBw(Phase::Cruise) => 3.0,
                Mode::ProbeBw(Phase::Refill) => 4.0,
                Mode::ProbeBw(Phase::Up) => 5.0,
                Mode::ProbeRtt => 6.0,
            },
            "pacing_gain" => self.pacing_gain,
            "cwnd_gain" => self.cwnd_gain,
            "ecn_alpha" => self.ecn_alpha,
            "rounds" => self.round_count as f64,
            "full_bw_reached" => u8::from(self.full_bw_reached) as f64,
            _ => return None,
        })
    }
}

/// BBR v3's traceable variables (draft-ietf-ccwg-bbr names, Linux `struct bbr` in brackets).
pub static VARS: &[VarSpec] = &[
    VarSpec::new("bw", VarUnit::BitsPerSecond, "bandwidth the model uses, min(max_bw, bw_lo) (BBR.bw, Linux bbr_bw)"),
    VarSpec::new(
        "max_bw",
        VarUnit::BitsPerSecond,
        "max of the two slots of the bandwidth filter (BBR.max_bw, Linux bw_hi)",
    ),
    VarSpec::new(
        "bw_lo",
        VarUnit::BitsPerSecond,
        "short-term bandwidth bound after loss or ECN (BBR.bw_shortterm, Linux bw_lo); NaN while unset",
    ),
    VarSpec::new(
        "inflight_hi",
        VarUnit::Bytes,
        "long-term in-flight bound (BBR.inflight_longterm, Linux inflight_hi); NaN while unset",
    ),
    VarSpec::new(
        "inflight_lo",
        VarUnit::Bytes,
        "short-term in-flight bound (BBR.inflight_shortterm, Linux inflight_lo); NaN while unset",
    ),
    VarSpec::new(
        "min_rtt",
        VarUnit::Seconds,
        "min RTT estimate (BBR.min_rtt, Linux min_rtt_us); NaN before the first sample",
    ),
    VarSpec::new(
        "mode",
        VarUnit::State,
        "0 Startup, 1 Drain, 2 ProbeBW_DOWN, 3 ProbeBW_CRUISE, 4 ProbeBW_REFILL, 5 ProbeBW_UP, 6 ProbeRTT",
    ),
    VarSpec::new("pacing_gain", VarUnit::Number, "current pacing gain"),
    VarSpec::new("cwnd_gain", VarUnit::Number, "current cwnd gain"),
    VarSpec::new(
        "ecn_alpha",
        VarUnit::Fraction,
        "EWMA of the CE-marked fraction of delivered packets (Linux ecn_alpha)",
    ),
    VarSpec::new("rounds", VarUnit::Count, "packet-timed round trips so far (BBR.round_count)"),
    VarSpec::new("full_bw_reached", VarUnit::State, "1 once Startup has found the pipe full, else 0"),
];

/// Bytes to whole packets, rounded down, for a fraction of a bound (Linux keeps bounds in
/// packets).
fn floor_packets(bytes: f64, mss: u64) -> u64 {
    (bytes / mss as f64 + 1e-9).floor().max(0.0) as u64 * mss
}

/// The floor of every window, bytes.
fn min_cwnd(mss: u64) -> u64 {
    CWND_MIN_TARGET * mss
}
