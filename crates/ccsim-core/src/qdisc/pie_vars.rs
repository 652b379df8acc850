//! The PIE controller (RFC 8033 §4-5; Linux `include/net/pie.h` `struct pie_vars`,
//! `pie_drop_early`, `pie_process_dequeue`, `pie_calculate_probability`): the state, the
//! arrival decision, the departure sample and the probability update of one controlled
//! queue. `pie` runs one for its queue, `fq_pie` one per flow queue; both configure it with
//! [`PieConfig`], whose header (`pie.rs`) lists where RFC 8033, Linux and ns-3 differ. Its
//! tests are `pie`'s (through the queue) and `fq_pie`'s.

use super::pie::PieConfig;
use super::{DropReason, QdiscCtx, VarSpec, VarUnit};
use crate::packet::Packet;
use crate::sim::time::{secs, Time, MS, SEC};

/// RFC 8033 §4.1: below this probability the gate on a low delay skips early drops.
pub(super) const GATE_PROB: f64 = 0.2;
/// RFC 8033 §5.5: above this probability an increase is capped ...
pub(super) const CAP_FROM_PROB: f64 = 0.1;
/// ... to this step.
pub(super) const CAP_STEP: f64 = 0.02;
/// RFC 8033 §4.2: decay factor per update when the queue has been empty for two updates.
pub(super) const IDLE_DECAY: f64 = 0.98;
/// Linux `sch_pie`: decay `p -= p / 64` instead.
pub(super) const LINUX_IDLE_DECAY_DIV: f64 = 64.0;
/// Linux `sch_pie`: extra 2 % per update above this delay.
pub(super) const LINUX_HIGH_DELAY: Time = 250 * MS;
/// RFC 8033 §5.4: no early drop while the accumulated probability is below this ...
pub(super) const DERAND_LOW: f64 = 0.85;
/// ... and always one once it reaches this.
pub(super) const DERAND_HIGH: f64 = 8.5;

/// RFC 8033 §4.2: the update `Δp` is divided by this at the current drop probability, so
/// that `p` moves in finer steps while it is small.
pub fn scale_divisor(p: f64) -> f64 {
    const STEPS: [(f64, f64); 6] =
        [(0.000001, 2048.0), (0.00001, 512.0), (0.0001, 128.0), (0.001, 32.0), (0.01, 8.0), (0.1, 2.0)];
    for (below, div) in STEPS {
        if p < below {
            return div;
        }
    }
    1.0
}

/// The update after `next` when a wakeup runs at `now`: keep the grid of period `tupdate`,
/// or restart it from `now` if the wakeup came late.
pub(crate) fn next_update_after(next: Time, now: Time, tupdate: Time) -> Time {
    let after = next.saturating_add(tupdate);
    if after <= now {
        now.saturating_add(tupdate)
    } else {
        after
    }
}

/// The state of one PIE controller (Linux `struct pie_vars`): `pie` keeps one for its
/// queue, `fq_pie` one per flow queue. Each method is told the configuration and the backlog
/// (bytes) of the queue it controls, as Linux's `pie_drop_early`, `pie_process_dequeue` and
/// `pie_calculate_probability` are.
#[derive(Clone, Debug, PartialEq)]
pub struct PieVars {
    /// `drop_prob_`.
    pub(super) drop_prob: f64,
    /// `current_qdelay`: at the last update (estimator), or of the last departure (timestamps).
    pub(super) qdelay: Time,
    /// `qdelay_old_`: the delay used at the previous update.
    pub(super) qdelay_old: Time,
    /// `burst_allowance_` (ns).
    pub(super) burst_allowance: Time,
    /// `accu_prob_` (§5.4).
    pub(super) accu_prob: f64,
    /// `in_measurement_` (§5.2).
    pub(super) in_measurement: bool,
    /// `measurement_start_`.
    pub(super) measurement_start: Time,
    /// `dq_count_` (bytes).
    pub(super) dq_count: u64,
    /// `avg_dq_time_` (ns per `dq_threshold` bytes); 0 until the first cycle ends.
    pub(super) avg_dq_time: f64,
    /// Time of the previous departure (Linux burst accounting with timestamps).
    pub(super) last_departure: Option<Time>,
}

/// PIE's traceable variables (RFC 8033 names), also FQ-PIE's per-queue state.
pub static VARS: &[VarSpec] = &[
    VarSpec::new("drop_prob", VarUnit::Probability, "drop (or mark) probability p (RFC 8033 drop_prob_)"),
    VarSpec::new(
        "qdelay",
        VarUnit::Seconds,
        "queueing delay: at the last update (departure-rate estimator) or of the last departure (timestamps) (RFC 8033 current_qdelay)",
    ),
    VarSpec::new("qdelay_old", VarUnit::Seconds, "queueing delay used at the previous update (RFC 8033 qdelay_old_)"),
    VarSpec::new("burst_allowance", VarUnit::Seconds, "burst allowance left (RFC 8033 burst_allowance_)"),
    VarSpec::new("accu_prob", VarUnit::Number, "accumulated probability of the derandomization (RFC 8033 §5.4 accu_prob_)"),
];

impl PieVars {
    /// The value of variable `name` of [`VARS`].
    pub fn var(&self, name: &str) -> Option<f64> {
        Some(match name {
            "drop_prob" => self.drop_prob,
            "qdelay" => secs(self.qdelay),
            "qdelay_old" => secs(self.qdelay_old),
            "burst_allowance" => secs(self.burst_allowance),
            "accu_prob" => self.accu_prob,
            _ => return None,
        })
    }

    /// The initial state: `p = 0`, the whole burst allowance.
    pub fn new(cfg: &PieConfig) -> Self {
        PieVars {
            drop_prob: 0.0,
            qdelay: 0,
            qdelay_old: 0,
            burst_allowance: cfg.max_burst,
            accu_prob: 0.0,
            in_measurement: false,
            measurement_start: 0,
            dq_count: 0,
            avg_dq_time: 0.0,
            last_departure: None,
        }
    }

    /// Current drop probability.
    pub fn drop_prob(&self) -> f64 {
        self.drop_prob
    }

    /// `drop_early()` of RFC 8033 §4.1, §4.4, §5.4 (Appendix B) for an arrival of `size`
    /// bytes at a queue holding `backlog` bytes.
    fn drop_early(&mut self, c: &PieConfig, backlog: u64, size: u32, ctx: &mut QdiscCtx) -> bool {
        if self.burst_allowance > 0 {
            return false;
        }
        let p = self.drop_prob;
        // Work conservation: no early drop at low delay (unless p is already high) or on a
        // queue of a couple of packets.
        let (delay, tiny) =
            if c.linux { (self.qdelay, backlog < 2 * c.mtu) } else { (self.qdelay_old, backlog <= 2 * c.mtu) };
        if (delay < c.target / 2 && p < GATE_PROB) || tiny {
            return false;
        }
        // Byte mode (Linux): a packet smaller than the MTU is dropped in proportion to its size.
        let p = if c.bytemode && size as u64 <= c.mtu { p * size as f64 / c.mtu as f64 } else { p };
        if c.derandomize {
            if p == 0.0 {
                self.accu_prob = 0.0;
            }
            self.accu_prob += p;
            if self.accu_prob < DERAND_LOW {
                return false;
            }
            if self.accu_prob >= DERAND_HIGH {
                return true;
            }
        }
        if ctx.rng.chance(p) {
            self.accu_prob = 0.0;
            return true;
        }
        false
    }

    /// PIE's decision on an arrival that fits in the buffer, at a queue holding `backlog`
    /// bytes: the packet to queue (CE-marked, maybe), or `None` when it was dropped early
    /// (reported through `ctx`).
    pub fn admit(&mut self, c: &PieConfig, mut pkt: Packet, backlog: u64, ctx: &mut QdiscCtx) -> Option<Packet> {
        if self.drop_early(c, backlog, pkt.size, ctx) {
            // §5.1: ECN-capable packets are marked while p is at most the threshold.
            let marked = c.ecn && self.drop_prob <= c.ecn_threshold && ctx.mark(&mut pkt);
            self.accu_prob = 0.0;
            if !marked {
                ctx.drop(pkt, DropReason::Early);
                return None;
            }
        }
        Some(pkt)
    }

    /// Drop an arrival that does not fit in the buffer.
    pub fn overflow(&mut self, pkt: Packet, ctx: &mut QdiscCtx) {
        self.accu_prob = 0.0;
        ctx.drop(pkt, DropReason::Overflow);
    }

    /// `pkt` left at `now`, leaving `backlog` bytes in its queue: the latency sample
    /// (timestamps) or the departure-rate measurement (§4.3, §5.2).
    pub fn departed(&mut self, c: &PieConfig, now: Time, pkt: &Packet, backlog: u64) {
        if c.use_timestamps {
            debug_assert!(pkt.enqueued_at <= now);
            // The sojourn of the departing packet; an emptied queue has no delay.
            self.qdelay = if backlog == 0 { 0 } else { now.saturating_sub(pkt.enqueued_at) };
            if c.linux {
                if let Some(last) = self.last_departure {
                    self.burst_allowance = self.burst_allowance.saturating_sub(now.saturating_sub(last));
                }
                self.last_departure = Some(now);
            }
        } else {
            self.measure_departure(c, now, pkt.size, backlog);
        }
    }

    /// Queueing delay for this update (§4.3).
    fn current_qdelay(&self, c: &PieConfig, backlog: u64) -> Time {
        if c.use_timestamps {
            self.qdelay
        } else if self.avg_dq_time > 0.0 {
            // Little's law with the rate DQ_THRESHOLD / avg_dq_time (Appendix B).
            (backlog as f64 * self.avg_dq_time / c.dq_threshold as f64).round() as Time
        } else {
            0
        }
    }

    /// `calculate_drop_prob()`, every `tupdate` (§4.2, §4.4, §5.5), for a queue holding
    /// `backlog` bytes.
    pub fn update(&mut self, c: &PieConfig, backlog: u64) {
        let qdelay = self.current_qdelay(c, backlog);
        let p = self.drop_prob;
        let secs = |t: Time| t as f64 / SEC as f64;
        let mut delta = c.alpha * (secs(qdelay) - secs(c.target)) + c.beta * (secs(qdelay) - secs(self.qdelay_old));
        delta /= scale_divisor(p);
        if c.cap_drop_adjustment && p >= CAP_FROM_PROB && delta > CAP_STEP {
            delta = CAP_STEP;
        }
        if c.linux && qdelay > LINUX_HIGH_DELAY {
            delta += CAP_STEP;
        }
        let mut np = p + delta;
        if qdelay == 0 && self.qdelay_old == 0 {
            if !c.linux {
                np *= IDLE_DECAY;
            } else if backlog == 0 {
                np -= np / LINUX_IDLE_DECAY_DIV;
            }
        }
        np = np.clamp(0.0, 1.0);
        self.drop_prob = np;

        let calm = np == 0.0 && qdelay < c.target / 2 && self.qdelay_old < c.target / 2;
        if c.linux {
            // Linux restores the burst allowance by resetting all PIE variables once the
            // estimator has a sample (or timestamps are used).
            if calm && (c.use_timestamps || self.avg_dq_time > 0.0) {
                self.burst_allowance = c.max_burst;
                self.accu_prob = 0.0;
                self.in_measurement = false;
                self.dq_count = 0;
                self.avg_dq_time = 0.0;
                self.last_departure = None;
            }
        } else {
            self.burst_allowance = self.burst_allowance.saturating_sub(c.tupdate);
            if calm {
                self.burst_allowance = c.max_burst;
            }
        }
        self.qdelay = qdelay;
        self.qdelay_old = qdelay;
    }

    /// Departure-rate estimation (§5.2, Appendix B); `backlog` is what is left queued.
    fn measure_departure(&mut self, c: &PieConfig, now: Time, size: u32, backlog: u64) {
        if self.in_measurement {
            self.dq_count += size as u64;
            if self.dq_count >= c.dq_threshold {
                let dq_time = now.saturating_sub(self.measurement_start) as f64;
                self.avg_dq_time = if self.avg_dq_time == 0.0 {
                    dq_time
                } else {
                    dq_time * c.dq_weight + self.avg_dq_time * (1.0 - c.dq_weight)
                };
                self.in_measurement = false;
                if c.linux {
                    self.burst_allowance = self.burst_allowance.saturating_sub(dq_time as Time);
                }
            }
        }
        // Start a cycle when enough data is queued to measure the drain rate.
        if !self.in_measurement && backlog >= c.dq_threshold {
            self.in_measurement = true;
            self.measurement_start = now;
            self.dq_count = 0;
        }
    }
}
