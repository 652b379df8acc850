//! DualPI2, the DualQ Coupled AQM for L4S: RFC 9332 (De Schepper, Briscoe, White,
//! "Dual-Queue Coupled Active Queue Management (AQM) for Low Latency, Low Loss, and Scalable
//! Throughput (L4S)", 2023), Appendix A (the DualPI2 pseudocode), with the defaults and the
//! variants of Linux `sch_dualpi2`.
//!
//! Reference implementations read (facts and constants only): Linux
//! `net/sched/sch_dualpi2.c` as merged upstream in 2025 (Nokia; De Schepper, Albisser, Steen,
//! Tilmans, Chang; iproute2 `tc-dualpi2(8)` and its tdc test give the same defaults), and the
//! L4S team's out-of-tree version (github L4STeam/linux, `net/sched/sch_dualpi2.c`, commit
//! 29c297fd), which differs only in details noted below.
//!
//! - Classifier (RFC 9332 §2.5.1.1; Linux `ecn_mask` = `l4s_ect`): ECT(1) and CE go to the
//!   L queue, Not-ECT and ECT(0) to the C queue. `any_ect` (Linux `any_ect`) sends ECT(0) to
//!   the L queue too.
//! - Base PI (App. A `dualpi2_update`; Linux `calculate_probability`): every `tupdate`,
//!   `p' += alpha·(q − target) + beta·(q − q_prev)` (delays in seconds), clamped to [0, 1],
//!   where `q` is, as in Linux, the larger of the head-packet sojourn times of the two
//!   queues (0 for an empty queue); RFC App. A uses the C queue's alone
//!   (`classic_delay_only = true`). `q_prev` is the `q` of the previous update.
//! - Probabilities: classic `p_C = p'²`, drawn as two independent draws with `p'` that must
//!   both succeed (Linux `dualpi2_roll(p) && dualpi2_roll(p)`; App. A compares `p'` with the
//!   max of two random numbers: the same law); coupled `p_CL = k·p'`.
//! - Where the AQM acts (Linux default `drop_dequeue`, `drop_early = false`): on the packet
//!   taken from the head, after it has left (so the backlog seen excludes it); with
//!   `drop_early` on the arrival instead. Either way nothing is dropped or marked while both
//!   queues together hold fewer than 2 `mtu` bytes (Linux `must_drop`).
//!   - C packet: with `p_C`, an ECT(0) one is CE-marked and a Not-ECT one dropped.
//!   - L packet: CE-marked with `p_CL`.
//!   - Overload, `k·p' > 1` (App. A's `p_C > p_Cmax = 1/k²`): with `drop_overload` (Linux
//!     default on) an L packet is dropped with `p_C` and every L packet not dropped is
//!     marked; a C packet chosen with `p_C` is dropped even when ECT. Without
//!     `drop_overload` L packets are all marked, never dropped, and the update caps `p'` at
//!     `1/k` (Linux), so the queues grow to `limit`.
//! - Native L AQM (Linux `do_step_aqm`): on departure from the L queue, an L packet whose
//!   sojourn time exceeds `step_thresh` (strictly) is CE-marked, whatever `p'`, if the L queue
//!   held at least `min_qlen_step` packets when it arrived (Linux default 0: always).
//!   `ramp_range > 0` replaces the step by App. A's ramp: native probability
//!   `(sojourn − step_thresh) / ramp_range` clamped to [0, 1]. The native mark comes after
//!   the coupled one and is not gated by the 2-MTU rule, as in Linux; so an L packet is
//!   marked with `1 − (1 − p_CL)(1 − p_native)`, which for the step (0 or 1) is App. A's
//!   `max(p_native, p_CL)`.
//! - Scheduler (Linux default; App. A leaves it open, time-shifted FIFO is the RFC's other
//!   example, not implemented): weighted round robin in bytes with C protection. Credit
//!   starts at `mtu·(wc − wl)`, `wc = c_protection` %, `wl = 100 − wc` (negative: L first).
//!   The L queue is served when non-empty and the C queue is empty or the credit is ≤ 0,
//!   else the C queue. Serving L while C waits adds `wc·size`, serving C while L waits
//!   subtracts `wl·size`; a packet dropped by the AQM on dequeue changes nothing. With both
//!   backlogged the C queue gets `wc` % of the bytes (10 %: L×9, C×1 in equal packets).
//! - Limit (Linux `limit` 10000 packets): shared by both queues; an arrival that finds them
//!   holding `limit` packets (or whose bytes would exceed a byte limit) is tail-dropped,
//!   before classification or AQM.
//!
//! Linux defaults: limit 10000p, target 15 ms, tupdate 16 ms, alpha 41/256 ≈ 0.16 Hz, beta
//! 819/256 ≈ 3.2 Hz, step_thresh 1 ms (time, not packets), min_qlen_step 0, coupling_factor
//! 2, drop_overload on, drop_early off, c_protection 10 %, l4s_ect, mtu = `psched_mtu`
//! (1514 B on Ethernet).
//!
//! Deviations from Linux:
//! - `alpha` and `beta` default to 0.16 and 3.2 exactly (RFC 9332 App. A), not 41/256 and
//!   819/256; probabilities are `f64`, not 32-bit fixed point; `tupdate` is exact rather than
//!   rounded to jiffies; the first update is at `tupdate` (upstream: `tupdate` after
//!   creation; out-of-tree: HZ/2).
//! - Linux resets the WRR credit when a dequeue finds both queues empty; the engine may not
//!   call dequeue on an empty queue, so the credit is reset when a dequeue leaves both
//!   queues empty (and on a dequeue that finds them empty): the same busy-period boundary.
//! - `coupling_factor` is a real number (Linux: integer 1..255; RFC: any k > 0).
//! - Not modelled: `memlimit` (skb truesize), GSO splitting (ccsim has no GSO), the step
//!   threshold in packets (`step_thresh` in `p`), `tc` filters and priorities (the
//!   unmarked-L "LLLL" class). The out-of-tree version applies the step only when the L
//!   queue already held more than one packet at the arrival: `min_qlen_step = 2`.
//!
//! Statistics: the `Queue` wrapper keeps one set for the whole discipline; the per-queue
//! lengths, arrivals, step marks, `p'` and the credit are accessors of [`DualPi2`].

use std::collections::VecDeque;

use crate::registry::Randomness;

use super::fifo::Fifo;
use super::pie_vars::next_update_after;
use super::{DropReason, QdiscCtx, QueueDisc, QueueModel, VarSpec, VarUnit};
use crate::packet::{Ecn, Packet};
use crate::params::{ParamKind, ParamSpec, ParamValue, Params, Size};
use crate::sim::time::{Time, MS, SEC};

static PARAMS: &[ParamSpec] = &[
    ParamSpec::new(
        "limit",
        ParamKind::Size,
        Some(ParamValue::Size(Size::Packets(10000))),
        "buffer shared by both queues (packets or bytes), tail drop beyond it; Linux dualpi2 default 10000p",
    ),
    ParamSpec::new(
        "target",
        ParamKind::Time,
        Some(ParamValue::Int(15 * MS as i64)),
        "queueing delay the base PI controller aims at; RFC 9332 App. A and Linux: 15ms",
    )
    .range(0.0, 1e12),
    ParamSpec::new(
        "tupdate",
        ParamKind::Time,
        Some(ParamValue::Int(16 * MS as i64)),
        "period of the base probability update; RFC 9332 App. A and Linux: 16ms",
    )
    .range(1.0, 1e12),
    ParamSpec::new(
        "alpha",
        ParamKind::Float,
        Some(ParamValue::Float(0.16)),
        "integral gain (1/s) on the delay error; RFC 9332 App. A 0.16 (Linux 41/256)",
    )
    .range(0.0, 1e3),
    ParamSpec::new(
        "beta",
        ParamKind::Float,
        Some(ParamValue::Float(3.2)),
        "proportional gain (1/s) on the delay change; RFC 9332 App. A 3.2 (Linux 819/256)",
    )
    .range(0.0, 1e3),
    ParamSpec::new(
        "coupling_factor",
        ParamKind::Float,
        Some(ParamValue::Float(2.0)),
        "k: the L queue is marked with k*p' (classic gets p'^2); RFC 9332 and Linux: 2",
    )
    .range(0.01, 256.0),
    ParamSpec::new(
        "step_thresh",
        ParamKind::Time,
        Some(ParamValue::Int(MS as i64)),
        "L packets that waited longer are CE-marked (native step AQM); Linux default 1ms",
    )
    .range(0.0, 1e12),
    ParamSpec::new(
        "ramp_range",
        ParamKind::Time,
        Some(ParamValue::Int(0)),
        "0: step at step_thresh (Linux); >0: RFC 9332 App. A ramp from step_thresh to step_thresh + this",
    )
    .range(0.0, 1e12),
    ParamSpec::new(
        "min_qlen_step",
        ParamKind::Int,
        Some(ParamValue::Int(0)),
        "native AQM only for L packets that found at least this many L packets; Linux default 0",
    )
    .range(0.0, 1e9),
    ParamSpec::new(
        "c_protection",
        ParamKind::Int,
        Some(ParamValue::Int(10)),
        "WRR weight (%) of the C queue, its guaranteed share when both are backlogged; Linux default 10",
    )
    .range(0.0, 100.0),
    ParamSpec::new(
        "drop_overload",
        ParamKind::Bool,
        Some(ParamValue::Bool(true)),
        "when k*p' > 1, drop L packets with p'^2 (on, Linux default) or only mark and let the queue grow (off)",
    ),
    ParamSpec::new(
        "drop_early",
        ParamKind::Bool,
        Some(ParamValue::Bool(false)),
        "apply the PI2 drop/mark on arrival instead of on departure (Linux default off: drop_dequeue)",
    ),
    ParamSpec::new(
        "any_ect",
        ParamKind::Bool,
        Some(ParamValue::Bool(false)),
        "classify ECT(0) into the L queue too (Linux any_ect); default: ECT(1) and CE only (l4s_ect)",
    ),
    ParamSpec::new(
        "classic_delay_only",
        ParamKind::Bool,
        Some(ParamValue::Bool(false)),
        "base PI on the C queue's delay (RFC 9332 App. A) instead of the max of both queues' (Linux)",
    ),
    ParamSpec::new(
        "mtu",
        ParamKind::Bytes,
        Some(ParamValue::Int(1514)),
        "no drop or coupled mark below 2 of these in the queues; WRR credit unit; Linux psched_mtu 1514B",
    )
    .range(1.0, 1e9),
];

/// Registration.
pub const MODEL: QueueModel = QueueModel {
    name: "dualpi2",
    doc: "DualPI2: L4S (ECT(1)/CE) queue with step marking coupled to a PI2 classic queue, WRR with classic protection (RFC 9332; Linux sch_dualpi2)",
    params: PARAMS,
    random: Randomness::Always { what: "random drops and marks" },
    build: |p: &Params| Box::new(DualPi2::new(DualPi2Config::from_params(p))),
};

/// DualPI2 parameters (defaults: Linux `sch_dualpi2`, alpha and beta as RFC 9332 App. A).
#[derive(Clone, Debug, PartialEq)]
pub struct DualPi2Config {
    /// Shared buffer limit.
    pub limit: Size,
    /// PI target delay (ns).
    pub target: Time,
    /// Update period (ns).
    pub tupdate: Time,
    /// Integral gain (1/s).
    pub alpha: f64,
    /// Proportional gain (1/s).
    pub beta: f64,
    /// Coupling factor k.
    pub k: f64,
    /// Step threshold (ns).
    pub step_thresh: Time,
    /// Ramp width (ns); 0 for the step.
    pub ramp_range: Time,
    /// Minimum L queue length at arrival for the native AQM to apply.
    pub min_qlen_step: u64,
    /// C queue WRR weight (%).
    pub c_protection: u64,
    /// Drop L packets on overload.
    pub drop_overload: bool,
    /// AQM on enqueue instead of dequeue.
    pub drop_early: bool,
    /// ECT(0) to the L queue too.
    pub any_ect: bool,
    /// Base PI on the C queue's delay only.
    pub classic_delay_only: bool,
    /// MTU (bytes): the 2-MTU gate and the credit unit.
    pub mtu: u64,
}

impl Default for DualPi2Config {
    fn default() -> Self {
        DualPi2Config {
            limit: Size::Packets(10000),
            target: 15 * MS,
            tupdate: 16 * MS,
            alpha: 0.16,
            beta: 3.2,
            k: 2.0,
            step_thresh: MS,
            ramp_range: 0,
            min_qlen_step: 0,
            c_protection: 10,
            drop_overload: true,
            drop_early: false,
            any_ect: false,
            classic_delay_only: false,
            mtu: 1514,
        }
    }
}

impl DualPi2Config {
    /// From validated parameters.
    pub fn from_params(p: &Params) -> Self {
        DualPi2Config {
            limit: p.size("limit"),
            target: p.uint("target"),
            tupdate: p.uint("tupdate").max(1),
            alpha: p.float("alpha"),
            beta: p.float("beta"),
            k: p.float("coupling_factor"),
            step_thresh: p.uint("step_thresh"),
            ramp_range: p.uint("ramp_range"),
            min_qlen_step: p.uint("min_qlen_step"),
            c_protection: p.uint("c_protection").min(100),
            drop_overload: p.bool("drop_overload"),
            drop_early: p.bool("drop_early"),
            any_ect: p.bool("any_ect"),
            classic_delay_only: p.bool("classic_delay_only"),
            mtu: p.uint("mtu"),
        }
    }
}

/// A DualPI2 queue: the L and C FIFOs, the base probability `p'` and the WRR credit.
pub struct DualPi2 {
    cfg: DualPi2Config,
    /// The L4S queue.
    l: Fifo,
    /// Per L packet, in queue order: does the native AQM apply to it (`min_qlen_step`)?
    l_step: VecDeque<bool>,
    /// The classic queue.
    c: Fifo,
    /// Base probability p'.
    prob: f64,
    /// Delay used at the previous update (ns).
    last_qdelay: Time,
    /// WRR credit (bytes × percent): ≤ 0 favours L.
    credit: i64,
    /// When the next update is due.
    next_update: Time,
    packets_in_l: u64,
    packets_in_c: u64,
    step_marks: u64,
}

/// Two draws with `p` that must both succeed: probability `p²`.
fn squared_roll(ctx: &mut QdiscCtx, p: f64) -> bool {
    ctx.rng.chance(p) && ctx.rng.chance(p)
}

fn secs(t: Time) -> f64 {
    t as f64 / SEC as f64
}

impl DualPi2 {
    /// A DualPI2 queue; the first update is at `tupdate`.
    pub fn new(cfg: DualPi2Config) -> Self {
        let next_update = cfg.tupdate;
        let mut q = DualPi2 {
            cfg,
            l: Fifo::unbounded(),
            l_step: VecDeque::new(),
            c: Fifo::unbounded(),
            prob: 0.0,
            last_qdelay: 0,
            credit: 0,
            next_update,
            packets_in_l: 0,
            packets_in_c: 0,
            step_marks: 0,
        };
        q.credit = q.credit_init();
        q
    }

    fn credit_init(&self) -> i64 {
        let wc = self.cfg.c_protection as i64;
        self.cfg.mtu as i64 * (wc - (100 - wc))
    }

    /// Base probability p'.
    pub fn prob(&self) -> f64 {
        self.prob
    }

    /// Packets in the L queue.
    pub fn l_len(&self) -> usize {
        self.l.len()
    }

    /// Packets in the C queue.
    pub fn c_len(&self) -> usize {
        self.c.len()
    }

    /// Arrivals admitted to the L and C queues so far (Linux `packets_in_l`, `packets_in_c`).
    pub fn packets_in(&self) -> (u64, u64) {
        (self.packets_in_l, self.packets_in_c)
    }

    /// CE marks by the native (step or ramp) AQM.
    pub fn step_marks(&self) -> u64 {
        self.step_marks
    }

    /// WRR credit (bytes × percent; ≤ 0 serves L first).
    pub fn credit(&self) -> i64 {
        self.credit
    }

    /// Does `pkt` go to the L queue?
    fn is_l4s(&self, pkt: &Packet) -> bool {
        match pkt.ecn {
            Ecn::Ect1 | Ecn::Ce => true,
            Ecn::Ect0 => self.cfg.any_ect,
            Ecn::NotEct => false,
        }
    }

    fn fits(&self, pkt: &Packet) -> bool {
        match self.cfg.limit {
            Size::Packets(n) => ((self.l.len() + self.c.len()) as u64) < n,
            Size::Bytes(n) => self.l.bytes() + self.c.bytes() + pkt.size as u64 <= n,
        }
    }

    /// The PI2 decision (Linux `must_drop`) for a packet of the L (`l4s`) or C queue while
    /// the queues hold `backlog` bytes besides it: marks it, or returns true to drop it.
    fn must_drop(&self, pkt: &mut Packet, l4s: bool, backlog: u64, ctx: &mut QdiscCtx) -> bool {
        if backlog < 2 * self.cfg.mtu {
            return false;
        }
        let p = self.prob;
        let p_cl = self.cfg.k * p;
        let overload = p_cl > 1.0;
        if l4s {
            if overload {
                if self.cfg.drop_overload && squared_roll(ctx, p) {
                    return true;
                }
                return !ctx.mark(pkt);
            }
            return ctx.rng.chance(p_cl) && !ctx.mark(pkt);
        }
        squared_roll(ctx, p) && (overload || !ctx.mark(pkt))
    }

    /// The native L AQM on a departing L packet: marks it, or returns true to drop it (a
    /// Not-ECT packet, which the classifier never puts in the L queue).
    fn native_aqm(&mut self, pkt: &mut Packet, apply: bool, ctx: &mut QdiscCtx) -> bool {
        if !apply {
            return false;
        }
        let sojourn = ctx.now.saturating_sub(pkt.enqueued_at);
        let hit = if self.cfg.ramp_range == 0 {
            sojourn > self.cfg.step_thresh
        } else {
            let over = sojourn.saturating_sub(self.cfg.step_thresh) as f64 / self.cfg.ramp_range as f64;
            over >= 1.0 || ctx.rng.chance(over)
        };
        if !hit {
            return false;
        }
        if !ctx.mark(pkt) {
            return true;
        }
        self.step_marks += 1;
        false
    }

    /// The base PI update (RFC 9332 App. A `dualpi2_update`, Linux `calculate_probability`).
    fn update(&mut self, now: Time) {
        let head = |f: &Fifo| f.get(0).map_or(0, |p| now.saturating_sub(p.enqueued_at));
        let qc = head(&self.c);
        let q = if self.cfg.classic_delay_only { qc } else { qc.max(head(&self.l)) };
        let c = &self.cfg;
        let delta = c.alpha * (secs(q) - secs(c.target)) + c.beta * (secs(q) - secs(self.last_qdelay));
        self.last_qdelay = q;
        let mut p = (self.prob + delta).clamp(0.0, 1.0);
        if !c.drop_overload {
            p = p.min(1.0 / c.k);
        }
        self.prob = p;
    }
}

impl QueueDisc for DualPi2 {
    fn enqueue(&mut self, mut pkt: Packet, ctx: &mut QdiscCtx) {
        if !self.fits(&pkt) {
            ctx.drop(pkt, DropReason::Overflow);
            return;
        }
        let l4s = self.is_l4s(&pkt);
        let backlog = self.l.bytes() + self.c.bytes();
        if self.cfg.drop_early && self.must_drop(&mut pkt, l4s, backlog, ctx) {
            ctx.drop(pkt, DropReason::Early);
            return;
        }
        if l4s {
            self.l_step.push_back(self.l.len() as u64 >= self.cfg.min_qlen_step);
            self.l.push(pkt);
            self.packets_in_l += 1;
        } else {
            self.c.push(pkt);
            self.packets_in_c += 1;
        }
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<Packet> {
        loop {
            let (l_len, c_len) = (self.l.len(), self.c.len());
            let (mut pkt, from_l, change) = if l_len > 0 && (c_len == 0 || self.credit <= 0) {
                let pkt = self.l.pop()?;
                let w = if c_len > 0 { self.cfg.c_protection as i64 } else { 0 };
                (pkt, true, w * pkt.size as i64)
            } else if c_len > 0 {
                let pkt = self.c.pop()?;
                let w = if l_len > 0 { 100 - self.cfg.c_protection as i64 } else { 0 };
                (pkt, false, -w * pkt.size as i64)
            } else {
                self.credit = self.credit_init();
                return None;
            };
            let apply_step = if from_l { self.l_step.pop_front().unwrap_or(true) } else { false };
            let backlog = self.l.bytes() + self.c.bytes();
            if !self.cfg.drop_early && self.must_drop(&mut pkt, from_l, backlog, ctx) {
                ctx.drop(pkt, DropReason::Early);
                continue;
            }
            if from_l && self.native_aqm(&mut pkt, apply_step, ctx) {
                ctx.drop(pkt, DropReason::Early);
                continue;
            }
            self.credit += change;
            if self.l.is_empty() && self.c.is_empty() {
                self.credit = self.credit_init();
            }
            return Some(pkt);
        }
    }

    fn len_packets(&self) -> usize {
        self.l.len() + self.c.len()
    }

    fn len_bytes(&self) -> u64 {
        self.l.bytes() + self.c.bytes()
    }

    fn next_wakeup(&self) -> Option<Time> {
        Some(self.next_update)
    }

    fn on_wakeup(&mut self, ctx: &mut QdiscCtx) {
        if ctx.now < self.next_update {
            return;
        }
        self.update(ctx.now);
        self.next_update = next_update_after(self.next_update, ctx.now, self.cfg.tupdate);
    }

    fn vars(&self) -> &'static [VarSpec] {
        VARS
    }

    fn var(&self, name: &str) -> Option<f64> {
        Some(match name {
            "base_prob" => self.prob,
            "classic_prob" => self.prob * self.prob,
            "coupled_prob" => (self.cfg.k * self.prob).min(1.0),
            "qdelay" => secs(self.last_qdelay),
            "l_len" => self.l.len() as f64,
            "c_len" => self.c.len() as f64,
            "step_marks" => self.step_marks as f64,
            _ => return None,
        })
    }
}

/// DualPI2's traceable variables (RFC 9332 Appendix A names where it has them).
pub static VARS: &[VarSpec] = &[
    VarSpec::new("base_prob", VarUnit::Probability, "base probability p' of the PI controller (RFC 9332 p')"),
    VarSpec::new("classic_prob", VarUnit::Probability, "drop or mark probability of the C queue, p'^2 (RFC 9332 p_C)"),
    VarSpec::new(
        "coupled_prob",
        VarUnit::Probability,
        "coupled mark probability of the L queue, k p' up to 1 (RFC 9332 p_CL)",
    ),
    VarSpec::new(
        "qdelay",
        VarUnit::Seconds,
        "queueing delay the last update used (RFC 9332 q; Linux: the larger head sojourn of the two queues)",
    ),
    VarSpec::new("l_len", VarUnit::Packets, "packets in the L queue"),
    VarSpec::new("c_len", VarUnit::Packets, "packets in the C queue"),
    VarSpec::new(
        "step_marks",
        VarUnit::Count,
        "CE marks by the native L AQM (step or ramp) since the start, warm-up included",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testkit::{ecn_pkt, params, within_binomial, Fate, Harness};
    use crate::qdisc::QueueEventKind;
    use crate::sim::time::US;

    fn dualpi2(cfg: DualPi2Config) -> Harness<DualPi2> {
        Harness::with_seed(DualPi2::new(cfg), 11)
    }

    /// Sequence numbers of `n` departures at `now`, each tagged with its queue ('L' or 'C').
    fn order(h: &mut Harness<DualPi2>, now: Time, n: usize) -> String {
        (0..n).map(|_| if h.dequeue(now).unwrap().ecn == Ecn::NotEct { 'C' } else { 'L' }).collect()
    }

    /// With p' fixed at `p` (no update runs), keep 30 packets of 1500 B with `ecn` queued at
    /// time 0 (so no step mark) and serve until `n` packets have met the dequeue AQM.
    /// Returns (examined, early drops, marks).
    fn at_fixed_p(cfg: DualPi2Config, p: f64, ecn: Ecn, n: u64) -> (u64, u64, u64) {
        let mut h = dualpi2(cfg);
        h.disc.prob = p;
        let mut seq = 0;
        while h.departures + h.drops < n {
            while h.disc.len_packets() < 30 {
                h.enqueue(0, ecn_pkt(0, seq, 1500, ecn));
                seq += 1;
            }
            h.dequeue(0);
        }
        assert_eq!(h.events().filter(|e| e.kind == QueueEventKind::Overflow).count(), 0);
        (h.departures + h.drops, h.early_drops(), h.marks)
    }

    #[test]
    fn parameter_defaults_are_linux_and_rfc_values() {
        let cfg = DualPi2Config::from_params(&params(PARAMS, &[]));
        assert_eq!(cfg, DualPi2Config::default());
        assert_eq!((cfg.limit, cfg.target, cfg.tupdate, cfg.step_thresh), (Size::Packets(10000), 15 * MS, 16 * MS, MS));
        assert_eq!((cfg.alpha, cfg.beta, cfg.k, cfg.c_protection), (0.16, 3.2, 2.0, 10));
        assert!(cfg.drop_overload && !cfg.drop_early && !cfg.any_ect && !cfg.classic_delay_only);
        assert!(crate::qdisc::QUEUES.iter().any(|m| m.name == "dualpi2"));
        // Initial credit: 1514 * (10 - 90) = -121120: the L queue is served first.
        assert_eq!(DualPi2::new(cfg).credit(), -121_120);
    }

    #[test]
    fn classifier_sends_ect1_and_ce_to_l_and_the_rest_to_c() {
        let mut h = dualpi2(DualPi2Config::default());
        for (seq, ecn) in [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ce, Ecn::Ect1].into_iter().enumerate() {
            assert_eq!(h.offer(0, ecn_pkt(0, seq as u64, 100, ecn)), Fate::Queued);
        }
        assert_eq!((h.disc.l_len(), h.disc.c_len()), (3, 2));
        assert_eq!(h.disc.packets_in(), (3, 2));
        // The L queue goes first (credit -121120 + 3 * 10 * 100 stays negative), in order.
        let out: Vec<u64> = std::iter::from_fn(|| h.dequeue(0)).map(|p| p.seq).collect();
        assert_eq!(out, [2, 3, 4, 0, 1]);
        // any_ect: ECT(0) joins the L queue.
        let mut h = dualpi2(DualPi2Config { any_ect: true, ..DualPi2Config::default() });
        for (seq, ecn) in [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1].into_iter().enumerate() {
            h.offer(0, ecn_pkt(0, seq as u64, 100, ecn));
        }
        assert_eq!((h.disc.l_len(), h.disc.c_len()), (2, 1));
    }

    #[test]
    fn pi_update_follows_the_hand_computed_sequence() {
        // 100 B packets: the backlog stays under 2 MTU, so no AQM acts on departure.
        let mut h = dualpi2(DualPi2Config::default());
        for (seq, t) in [0, 10 * MS, 20 * MS].into_iter().enumerate() {
            h.enqueue(t, ecn_pkt(0, seq as u64, 100, Ecn::NotEct));
        }
        assert_eq!(h.disc.next_wakeup(), Some(16 * MS));
        h.wakeup(10 * MS); // early: ignored
        assert_eq!(h.disc.prob(), 0.0);
        // 16 ms: head of C queued at 0: q = 16 ms, q_prev = 0.
        // dp = 0.16 (0.016 - 0.015) + 3.2 (0.016 - 0) = 0.00016 + 0.0512 = 0.05136.
        h.wakeup(16 * MS);
        assert!((h.disc.prob() - 0.05136).abs() < 1e-12, "{}", h.disc.prob());
        assert_eq!(h.disc.next_wakeup(), Some(32 * MS));
        // 31 ms: the packet of 0 leaves; the head is the one of 10 ms. At 32 ms q = 22 ms:
        // dp = 0.16 (0.022 - 0.015) + 3.2 (0.022 - 0.016) = 0.00112 + 0.0192 = 0.02032.
        assert_eq!(h.dequeue(31 * MS).map(|p| p.seq), Some(0));
        h.wakeup(32 * MS);
        assert!((h.disc.prob() - 0.07168).abs() < 1e-12, "{}", h.disc.prob());
        // 40 ms: queue emptied. At 48 ms q = 0:
        // dp = 0.16 (0 - 0.015) + 3.2 (0 - 0.022) = -0.0024 - 0.0704 = -0.0728 -> below 0 -> 0.
        h.dequeue(40 * MS);
        h.dequeue(40 * MS);
        h.wakeup(48 * MS);
        assert_eq!(h.disc.prob(), 0.0);
        // An L packet at 50 ms; at 64 ms the L head has waited 14 ms, C is empty: q = 14 ms
        // (Linux: max of both), dp = 0.16 (0.014 - 0.015) + 3.2 (0.014 - 0) = 0.04464.
        h.enqueue(50 * MS, ecn_pkt(0, 3, 100, Ecn::Ect1));
        h.wakeup(64 * MS);
        assert!((h.disc.prob() - 0.04464).abs() < 1e-12, "{}", h.disc.prob());

        // RFC App. A variant: only the C queue's delay (0 here): dp = 0.16 (0 - 0.015) < 0.
        let mut h = dualpi2(DualPi2Config { classic_delay_only: true, ..DualPi2Config::default() });
        h.enqueue(0, ecn_pkt(0, 0, 100, Ecn::Ect1));
        h.wakeup(16 * MS);
        assert_eq!(h.disc.prob(), 0.0);
        // A late wakeup restarts the grid from now.
        h.wakeup(100 * MS);
        assert_eq!(h.disc.next_wakeup(), Some(116 * MS));
    }

    #[test]
    fn coupling_gives_p_squared_to_classic_and_k_p_to_l() {
        let cfg = DualPi2Config::default;
        let n = 40_000;
        // p' = 0.1: Not-ECT C packets dropped with 0.1^2 = 1 % (mean 400 of 40000, sd ~20).
        let (seen, drops, marks) = at_fixed_p(cfg(), 0.1, Ecn::NotEct, n);
        assert!(within_binomial(drops, seen, 0.01), "{drops} of {seen}");
        assert_eq!(marks, 0);
        // ECT(0) C packets marked with 1 %, never dropped.
        let (seen, drops, marks) = at_fixed_p(cfg(), 0.1, Ecn::Ect0, n);
        assert!(within_binomial(marks, seen, 0.01), "{marks} of {seen}");
        assert_eq!(drops, 0);
        // ECT(1) L packets marked with k p' = 2 * 0.1 = 20 % (mean 8000, sd 80), never dropped.
        let (seen, drops, marks) = at_fixed_p(cfg(), 0.1, Ecn::Ect1, n);
        assert!(within_binomial(marks, seen, 0.2), "{marks} of {seen}");
        assert_eq!(drops, 0);
        // k = 3: 30 %.
        let (seen, _, marks) = at_fixed_p(DualPi2Config { k: 3.0, ..cfg() }, 0.1, Ecn::Ect1, n);
        assert!(within_binomial(marks, seen, 0.3), "{marks} of {seen}");
        // Nothing below 2 MTU of backlog: a lone packet at p' = 0.4 is never touched.
        let mut h = dualpi2(cfg());
        h.disc.prob = 0.4;
        for k in 0..1000 {
            h.enqueue(0, ecn_pkt(0, k, 1500, Ecn::NotEct));
            h.enqueue(0, ecn_pkt(0, k, 1500, Ecn::Ect1));
            h.dequeue(0);
            h.dequeue(0);
        }
        assert_eq!((h.drops, h.marks), (0, 0));
    }

    #[test]
    fn the_l_step_marks_packets_that_waited_longer_than_step_thresh() {
        let mut h = dualpi2(DualPi2Config::default());
        for seq in 0..3 {
            h.enqueue(0, ecn_pkt(0, seq, 1500, Ecn::Ect1));
        }
        h.enqueue(0, ecn_pkt(0, 3, 1500, Ecn::Ect0));
        // p' = 0. Waited 0.5 ms, then exactly 1 ms (the step needs more): not marked.
        assert_eq!(h.dequeue(500 * US).unwrap().ecn, Ecn::Ect1);
        assert_eq!(h.dequeue(MS).unwrap().ecn, Ecn::Ect1);
        // 1 ms + 1 ns: marked.
        assert_eq!(h.dequeue(MS + 1).unwrap().ecn, Ecn::Ce);
        assert_eq!((h.marks, h.disc.step_marks()), (1, 1));
        // The C queue has no step: ECT(0) after 5 ms stays ECT(0).
        assert_eq!(h.dequeue(5 * MS).unwrap().ecn, Ecn::Ect0);
        assert_eq!(h.marks, 1);

        // min_qlen_step = 1: a packet that found the L queue empty is exempt.
        let mut h = dualpi2(DualPi2Config { min_qlen_step: 1, ..DualPi2Config::default() });
        h.enqueue(0, ecn_pkt(0, 0, 1500, Ecn::Ect1));
        h.enqueue(0, ecn_pkt(0, 1, 1500, Ecn::Ect1));
        assert_eq!(h.dequeue(2 * MS).unwrap().ecn, Ecn::Ect1);
        assert_eq!(h.dequeue(2 * MS).unwrap().ecn, Ecn::Ce);

        // Ramp 1 ms..2 ms: a packet that waited 1.5 ms is marked with (1.5 - 1) / 1 = 50 %.
        let mut h = dualpi2(DualPi2Config { ramp_range: MS, ..DualPi2Config::default() });
        let n = 4000;
        for k in 0..n {
            let t = k * 10 * MS;
            h.enqueue(t, ecn_pkt(0, k, 1500, Ecn::Ect1));
            h.dequeue(t + 1500 * US);
        }
        assert!(within_binomial(h.marks, n, 0.5), "{}", h.marks);
        assert_eq!(h.drops, 0);
    }

    #[test]
    fn wrr_gives_l_priority_and_c_its_protected_share() {
        // Both backlogged with 1514 B packets: credit starts at -80 units of 1514 B; each L
        // adds 10 units, each C takes 90. L is served while credit <= 0: 9 L (-80 + 90 = 10),
        // then C (10 - 90 = -80), and again: C gets exactly 10 %.
        let backlog = |cfg: DualPi2Config| {
            let mut h = dualpi2(cfg);
            for k in 0..200 {
                h.enqueue(0, ecn_pkt(0, k, 1514, Ecn::Ect1));
                h.enqueue(0, ecn_pkt(1, k, 1514, Ecn::NotEct));
            }
            h
        };
        let mut h = backlog(DualPi2Config::default());
        assert_eq!(order(&mut h, 0, 20), "LLLLLLLLLCLLLLLLLLLC");
        let s = order(&mut h, 0, 100);
        assert_eq!(s.matches('C').count(), 10, "{s}");
        // c_protection 50: alternate. 0: strict L priority. 100: strict C priority.
        let mut h = backlog(DualPi2Config { c_protection: 50, ..DualPi2Config::default() });
        assert_eq!(order(&mut h, 0, 6), "LCLCLC");
        let mut h = backlog(DualPi2Config { c_protection: 0, ..DualPi2Config::default() });
        assert_eq!(order(&mut h, 0, 200), "L".repeat(200));
        let mut h = backlog(DualPi2Config { c_protection: 100, ..DualPi2Config::default() });
        assert_eq!(order(&mut h, 0, 200), "C".repeat(200));
        // A lone queue is served without touching the credit; emptying both resets it.
        let mut h = dualpi2(DualPi2Config::default());
        h.enqueue(0, ecn_pkt(0, 0, 1514, Ecn::NotEct));
        h.dequeue(0);
        assert_eq!(h.disc.credit(), -121_120);
        let mut h = backlog(DualPi2Config::default());
        order(&mut h, 0, 9);
        assert_eq!(h.disc.credit(), 10 * 1514);
        while h.dequeue(0).is_some() {}
        assert_eq!(h.disc.credit(), -121_120);
    }

    #[test]
    fn overload_drops_l_packets_with_p_squared_or_only_marks_them() {
        let n = 20_000;
        // p' = 0.6: k p' = 1.2 > 1. drop_overload (default): L packets dropped with
        // 0.6^2 = 36 % (sd ~0.48 % of n), every one not dropped marked.
        let cfg = DualPi2Config::default;
        let (seen, drops, marks) = at_fixed_p(cfg(), 0.6, Ecn::Ect1, n);
        assert!(within_binomial(drops, seen, 0.36), "{drops} of {seen}");
        assert_eq!(marks, seen - drops);
        // ECT(0) C packets are dropped, not marked, with 36 %.
        let (seen, drops, marks) = at_fixed_p(cfg(), 0.6, Ecn::Ect0, n);
        assert!(within_binomial(drops, seen, 0.36), "{drops} of {seen}");
        assert_eq!(marks, 0);
        // Below overload (p' = 0.5, k p' = 1): L packets all marked, none dropped.
        let (seen, drops, marks) = at_fixed_p(cfg(), 0.5, Ecn::Ect1, n);
        assert_eq!((drops, marks), (0, seen));
        // Without drop_overload: L packets only marked.
        let no_drop = || DualPi2Config { drop_overload: false, ..cfg() };
        let (seen, drops, marks) = at_fixed_p(no_drop(), 0.6, Ecn::Ect1, n);
        assert_eq!((drops, marks), (0, seen));
        // ... and the update caps p' at 1/k = 0.5: from 0.49 with a C head of 16 ms,
        // 0.49 + 0.16 (0.016 - 0.015) + 3.2 (0.016 - 0) = 0.54136 -> 0.5.
        for (cfg, want) in [(no_drop(), 0.5), (cfg(), 0.54136)] {
            let mut h = dualpi2(cfg);
            h.disc.prob = 0.49;
            h.enqueue(0, ecn_pkt(0, 0, 100, Ecn::NotEct));
            h.wakeup(16 * MS);
            assert!((h.disc.prob() - want).abs() < 1e-12, "{}", h.disc.prob());
        }
    }

    #[test]
    fn the_limit_is_shared_and_tail_drops() {
        let mut h = dualpi2(DualPi2Config { limit: Size::Packets(4), ..DualPi2Config::default() });
        for (seq, ecn) in [Ecn::Ect1, Ecn::NotEct, Ecn::Ect1, Ecn::NotEct].into_iter().enumerate() {
            assert_eq!(h.offer(0, ecn_pkt(0, seq as u64, 100, ecn)), Fate::Queued);
        }
        assert_eq!(h.offer(0, ecn_pkt(0, 4, 100, Ecn::Ect1)), Fate::Overflow);
        assert_eq!(h.offer(0, ecn_pkt(0, 5, 100, Ecn::NotEct)), Fate::Overflow);
        h.dequeue(0);
        assert_eq!(h.offer(0, ecn_pkt(0, 6, 100, Ecn::NotEct)), Fate::Queued);
        // Bytes: 1000 B holds 600 + 400 exactly, not one byte more.
        let mut h = dualpi2(DualPi2Config { limit: Size::Bytes(1000), ..DualPi2Config::default() });
        assert_eq!(h.offer(0, ecn_pkt(0, 0, 600, Ecn::Ect1)), Fate::Queued);
        assert_eq!(h.offer(0, ecn_pkt(0, 1, 401, Ecn::NotEct)), Fate::Overflow);
        assert_eq!(h.offer(0, ecn_pkt(0, 2, 400, Ecn::NotEct)), Fate::Queued);
    }

    #[test]
    fn drop_early_decides_on_arrival() {
        // p' = 0.1 on arrival with at least 2 MTU queued: Not-ECT dropped at 1 % on enqueue.
        let mut h = dualpi2(DualPi2Config { drop_early: true, ..DualPi2Config::default() });
        h.disc.prob = 0.1;
        let n = 40_000;
        for k in 0..n {
            h.enqueue(0, ecn_pkt(0, k, 1500, Ecn::NotEct));
            while h.disc.len_packets() > 10 {
                h.dequeue(0);
            }
        }
        let on_arrival = h.enqueue_events().iter().filter(|e| e.kind == QueueEventKind::EarlyDrop).count() as u64;
        assert_eq!(on_arrival, h.drops);
        assert!(within_binomial(on_arrival, n - 3, 0.01), "{on_arrival}");
    }
}
