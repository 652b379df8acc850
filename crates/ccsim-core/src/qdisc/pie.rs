//! PIE: Proportional Integral controller Enhanced, RFC 8033 (Pan, Natarajan, Baker, White,
//! "Proportional Integral Controller Enhanced (PIE): A Lightweight Control Scheme to Address
//! the Bufferbloat Problem", 2017).
//!
//! Arrivals are dropped (or ECN-marked) at random with probability `drop_prob`, which a timer
//! updates every `tupdate` from the queueing delay: `Δp = α·(qdelay − target) +
//! β·(qdelay − qdelay_old)`, scaled down while `p` is small (§4.2). The delay comes from the
//! departure-rate estimator and Little's law (§4.3, §5.2, Appendix B) or, with
//! `use_timestamps`, from the sojourn time of the latest departing packet (§4.3; Linux
//! `dq_rate_estimator` off, ns-3 `UseDequeueRateEstimator` false).
//!
//! The controller (its state, the arrival decision, the departure sample and the update) is
//! [`PieVars`] (`pie_vars.rs`), told the backlog of the queue it controls, as Linux `include/net/pie.h`
//! shares it between `sch_pie` and `sch_fq_pie`; `fq_pie` runs one per flow queue.
//!
//! Reference implementations read: Linux `net/sched/sch_pie.c`, ns-3 `pie-queue-disc.cc`,
//! FreeBSD `dn_aqm_pie.c`, DPDK `rte_pie.h` (the last two follow RFC 8033 Appendix B).
//!
//! Default mode is RFC 8033. Where the sources differ:
//!
//! | point | RFC 8033 (default here) | Linux `sch_pie` | ns-3 `PieQueueDisc` |
//! |---|---|---|---|
//! | dequeue-rate EWMA weight | `DQ_THRESHOLD/2^16` = 0.25 (App. B; FreeBSD, DPDK) | 1/8 (on the rate) | 0.5 (on the rate) |
//! | default latency source | rate estimator (App. B) | timestamps | timestamps |
//! | early-drop gate | `qdelay_old < target/2 && p < 0.2`, or `bytes <= 2·MEAN_PKTSIZE` | current `qdelay`, `backlog < 2·MTU` | as RFC, `2·MeanPktSize` |
//! | idle decay | `p *= 0.98` when `qdelay == qdelay_old == 0` (§4.2) | `p -= p/64`, skipped while backlog > 0 | `p *= 0.98` |
//! | burst allowance | −`tupdate` per update; reset to `max_burst` when `p == 0` and both delays < target/2 (§4.4) | reduced by time between dequeues; restored by a full state reset when idle | burst state machine; `p` forced to 0 during the burst |
//! | high delay | none | `+2 %` when `qdelay > 250 ms` | none |
//! | cap (§5.5) | `Δp ≤ 0.02` when `p ≥ 0.1` (parameter, on) | always | `UseCapDropAdjustment` true |
//! | de-randomization (§5.4) | optional (parameter, off) | always on | `UseDerandomization` false |
//! | ECN (§5.1) | mark while `p ≤ 0.1` | `p ≤ 0.1` | `p < 0.1` |
//! | queue limit | not given | 1000 p | 25 p |
//!
//! `linux = true` switches on the cheap Linux differences of that table (gate, decay, +2 %,
//! burst allowance, state reset); the EWMA weight (`dq_weight`), the latency source and
//! de-randomization stay separate parameters, so a Linux-like queue is `linux = true,
//! use_timestamps = true, derandomize = true` (and `dq_weight = 0.125` with the estimator).
//!
//! Deliberate choices and deviations:
//! - The update timer always runs (Linux, ns-3); the optional active/inactive switch of §5.3
//!   (only FreeBSD implements it) is not modelled.
//! - `accu_prob` is also reset after an ECN mark. The RFC resets it only after a drop, so with
//!   ECN an accumulator that once reaches 8.5 would mark every later packet until `p` is 0.
//! - `MEAN_PKTSIZE` of the gate is the `mtu` parameter (Linux uses the device MTU).
//! - With the rate estimator, `qdelay = bytes · avg_dq_time / dq_threshold` as in App. B: a
//!   cycle ends once at least `dq_threshold` bytes left, so the estimate is high by the
//!   overshoot, under one packet in `dq_threshold` (0.7 % with 1500 B packets: 11 of them).
//! - The idle decay follows the §4.2 text (both delays exactly 0). DPDK `rte_pie.h` decays
//!   whenever both delays are below target/2 instead.
//! - Byte mode (`p·size/MTU`, Linux and ns-3 option) is not a parameter of `pie`; the shared
//!   controller ([`PieVars`], which `fq_pie` also runs per flow queue) has it.

use crate::registry::Randomness;

use super::fifo::Fifo;
use super::pie_vars::{next_update_after, PieVars};
use super::{QdiscCtx, QueueDisc, QueueModel, VarSpec};
use crate::packet::Packet;
use crate::params::{ParamKind, ParamSpec, ParamValue, Params, Size};
use crate::sim::time::{Time, MS};

static PARAMS: &[ParamSpec] = &[
    ParamSpec::new(
        "limit",
        ParamKind::Size,
        Some(ParamValue::Size(Size::Packets(1000))),
        "buffer size (packets or bytes), tail drop beyond it; Linux 1000p (ns-3's 25p is far smaller)",
    ),
    ParamSpec::new(
        "target",
        ParamKind::Time,
        Some(ParamValue::Int(15 * MS as i64)),
        "QDELAY_REF, target queueing delay; RFC 8033 §4.2: 15ms",
    ),
    ParamSpec::new(
        "tupdate",
        ParamKind::Time,
        Some(ParamValue::Int(15 * MS as i64)),
        "T_UPDATE, period of the drop probability update; RFC 8033 §4.2: 15ms",
    )
    .range(1.0, 1e12),
    ParamSpec::new(
        "alpha",
        ParamKind::Float,
        Some(ParamValue::Float(0.125)),
        "alpha (1/s), weight of the delay error; RFC 8033 §4.2: 0.125",
    )
    .range(0.0, 1e3),
    ParamSpec::new(
        "beta",
        ParamKind::Float,
        Some(ParamValue::Float(1.25)),
        "beta (1/s), weight of the delay trend; RFC 8033 §4.2: 1.25",
    )
    .range(0.0, 1e3),
    ParamSpec::new(
        "max_burst",
        ParamKind::Time,
        Some(ParamValue::Int(150 * MS as i64)),
        "MAX_BURST, allowance without early drops; RFC 8033 §4.4: 150ms",
    ),
    ParamSpec::new(
        "use_timestamps",
        ParamKind::Bool,
        Some(ParamValue::Bool(false)),
        "delay = sojourn of the departing packet, not the departure-rate estimate (RFC 8033 §4.3)",
    ),
    ParamSpec::new(
        "dq_threshold",
        ParamKind::Bytes,
        Some(ParamValue::Int(16384)),
        "DQ_THRESHOLD, bytes per departure-rate measurement cycle; RFC 8033 §5.2: 16KiB",
    )
    .range(1.0, 1e12),
    ParamSpec::new(
        "dq_weight",
        ParamKind::Float,
        Some(ParamValue::Float(0.25)),
        "EWMA weight of a new departure-time sample; RFC 8033 App. B: 2^14/2^16 = 0.25 (Linux 1/8, ns-3 0.5)",
    )
    .range(0.0, 1.0),
    ParamSpec::new(
        "mtu",
        ParamKind::Bytes,
        Some(ParamValue::Int(1514)),
        "MEAN_PKTSIZE: no early drop while at most 2 of these are queued (RFC 8033 §4.1)",
    )
    .range(1.0, 1e9),
    ParamSpec::new(
        "ecn",
        ParamKind::Bool,
        Some(ParamValue::Bool(false)),
        "mark ECN-capable packets instead of dropping them (RFC 8033 §5.1)",
    ),
    ParamSpec::new(
        "ecn_threshold",
        ParamKind::Prob,
        Some(ParamValue::Float(0.1)),
        "mark only while the drop probability is at most this; RFC 8033 §5.1: 10%",
    ),
    ParamSpec::new(
        "derandomize",
        ParamKind::Bool,
        Some(ParamValue::Bool(false)),
        "space drops with the accu_prob accumulator (RFC 8033 §5.4; always on in Linux)",
    ),
    ParamSpec::new(
        "cap_drop_adjustment",
        ParamKind::Bool,
        Some(ParamValue::Bool(true)),
        "increase p by at most 2% per update once it is 10% (RFC 8033 §5.5; on in Linux, ns-3)",
    ),
    ParamSpec::new(
        "linux",
        ParamKind::Bool,
        Some(ParamValue::Bool(false)),
        "Linux sch_pie variants: gate on current delay, p -= p/64, +2% above 250ms, Linux burst/reset",
    ),
];

/// Registration.
pub const MODEL: QueueModel = QueueModel {
    name: "pie",
    doc: "PIE: early drop from a PI controller of the queueing delay (RFC 8033; Linux sch_pie, ns-3 PieQueueDisc)",
    params: PARAMS,
    random: Randomness::Always { what: "random drops" },
    build: |p: &Params| Box::new(Pie::new(PieConfig::from_params(p))),
};

/// PIE parameters (defaults: RFC 8033).
#[derive(Clone, Debug, PartialEq)]
pub struct PieConfig {
    /// Buffer limit.
    pub limit: Size,
    /// `QDELAY_REF` (ns).
    pub target: Time,
    /// `T_UPDATE` (ns).
    pub tupdate: Time,
    /// α (1/s).
    pub alpha: f64,
    /// β (1/s).
    pub beta: f64,
    /// `MAX_BURST` (ns).
    pub max_burst: Time,
    /// Latency from packet timestamps instead of the departure-rate estimator.
    pub use_timestamps: bool,
    /// `DQ_THRESHOLD` (bytes).
    pub dq_threshold: u64,
    /// EWMA weight of a new `dq_time` sample.
    pub dq_weight: f64,
    /// `MEAN_PKTSIZE` of the early-drop gate (bytes).
    pub mtu: u64,
    /// Mark ECT packets instead of dropping them.
    pub ecn: bool,
    /// `mark_ecnth`.
    pub ecn_threshold: f64,
    /// De-randomization (§5.4).
    pub derandomize: bool,
    /// Cap drop adjustment (§5.5).
    pub cap_drop_adjustment: bool,
    /// Linux `sch_pie` variants.
    pub linux: bool,
    /// Byte mode (Linux): drop a packet smaller than `mtu` with `p · size / mtu`.
    pub bytemode: bool,
}

impl Default for PieConfig {
    fn default() -> Self {
        PieConfig {
            limit: Size::Packets(1000),
            target: 15 * MS,
            tupdate: 15 * MS,
            alpha: 0.125,
            beta: 1.25,
            max_burst: 150 * MS,
            use_timestamps: false,
            dq_threshold: 16384,
            dq_weight: 0.25,
            mtu: 1514,
            ecn: false,
            ecn_threshold: 0.1,
            derandomize: false,
            cap_drop_adjustment: true,
            linux: false,
            bytemode: false,
        }
    }
}

impl PieConfig {
    /// From validated parameters.
    pub fn from_params(p: &Params) -> Self {
        PieConfig {
            limit: p.size("limit"),
            target: p.uint("target"),
            tupdate: p.uint("tupdate").max(1),
            alpha: p.float("alpha"),
            beta: p.float("beta"),
            max_burst: p.uint("max_burst"),
            use_timestamps: p.bool("use_timestamps"),
            dq_threshold: p.uint("dq_threshold").max(1),
            dq_weight: p.float("dq_weight"),
            mtu: p.uint("mtu"),
            ecn: p.bool("ecn"),
            ecn_threshold: p.float("ecn_threshold"),
            derandomize: p.bool("derandomize"),
            cap_drop_adjustment: p.bool("cap_drop_adjustment"),
            linux: p.bool("linux"),
            // Not a parameter of `pie` (`fq_pie` has it).
            bytemode: false,
        }
    }
}

/// A PIE queue.
pub struct Pie {
    cfg: PieConfig,
    fifo: Fifo,
    vars: PieVars,
    /// When the next probability update is due.
    next_update: Time,
}

impl Pie {
    /// A PIE queue; the first probability update is at `tupdate`.
    pub fn new(cfg: PieConfig) -> Self {
        let (vars, first, limit) = (PieVars::new(&cfg), cfg.tupdate, cfg.limit);
        Pie { cfg, fifo: Fifo::new(limit), vars, next_update: first }
    }

    /// Current drop probability.
    pub fn drop_prob(&self) -> f64 {
        self.vars.drop_prob
    }
}

/// The tests read and set the controller's state as fields of the queue.
#[cfg(test)]
impl std::ops::Deref for Pie {
    type Target = PieVars;
    fn deref(&self) -> &PieVars {
        &self.vars
    }
}

#[cfg(test)]
impl std::ops::DerefMut for Pie {
    fn deref_mut(&mut self) -> &mut PieVars {
        &mut self.vars
    }
}

impl QueueDisc for Pie {
    fn enqueue(&mut self, pkt: Packet, ctx: &mut QdiscCtx) {
        if !self.fifo.fits(&pkt) {
            self.vars.overflow(pkt, ctx);
            return;
        }
        if let Some(pkt) = self.vars.admit(&self.cfg, pkt, self.fifo.bytes(), ctx) {
            self.fifo.push(pkt);
        }
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<Packet> {
        let pkt = self.fifo.pop()?;
        self.vars.departed(&self.cfg, ctx.now, &pkt, self.fifo.bytes());
        Some(pkt)
    }

    fn len_packets(&self) -> usize {
        self.fifo.len()
    }

    fn len_bytes(&self) -> u64 {
        self.fifo.bytes()
    }

    fn next_wakeup(&self) -> Option<Time> {
        Some(self.next_update)
    }

    fn on_wakeup(&mut self, ctx: &mut QdiscCtx) {
        if ctx.now < self.next_update {
            return;
        }
        self.vars.update(&self.cfg, self.fifo.bytes());
        self.next_update = next_update_after(self.next_update, ctx.now, self.cfg.tupdate);
    }

    fn vars(&self) -> &'static [VarSpec] {
        super::pie_vars::VARS
    }

    fn var(&self, name: &str) -> Option<f64> {
        self.vars.var(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::qdisc::pie_vars::*;
    use crate::qdisc::testkit::{pkt, queue, within_binomial, Fate, Harness};
    use crate::qdisc::QueueEventKind;
    use crate::sim::time::{SEC, US};
    use std::collections::BTreeMap;

    /// PIE in the kit's harness, on its own random stream.
    fn pie(cfg: PieConfig) -> Harness<Pie> {
        Harness::with_seed(Pie::new(cfg), 7)
    }

    fn timestamps() -> PieConfig {
        PieConfig { use_timestamps: true, ..PieConfig::default() }
    }

    /// A state in which every arrival reaches the random decision with probability `p`: no
    /// burst allowance, an old delay above target/2 and a queue of more than 2 MTU.
    fn congested(cfg: PieConfig, p: f64) -> Harness<Pie> {
        let mut h = pie(cfg);
        for _ in 0..10 {
            h.arrive(0, 1500);
        }
        h.disc.burst_allowance = 0;
        h.disc.qdelay_old = 20 * MS;
        h.disc.qdelay = 20 * MS;
        h.disc.drop_prob = p;
        h
    }

    /// `n` arrivals at a fixed p, each followed by a departure when it was queued (the queue
    /// stays at 10 packets); no probability update runs.
    fn fates_at_fixed_p(h: &mut Harness<Pie>, n: usize, ecn: Ecn) -> Vec<Fate> {
        (0..n)
            .map(|i| {
                let t = i as Time * US;
                let f = h.arrive_ecn(t, 1500, ecn);
                if matches!(f, Fate::Queued | Fate::Marked) {
                    h.dequeue(t);
                }
                f
            })
            .collect()
    }

    fn count(fates: &[Fate], f: Fate) -> usize {
        fates.iter().filter(|&&x| x == f).count()
    }

    #[test]
    fn parameter_defaults_are_the_rfc_values() {
        let p = Params::resolve("q", PARAMS, &BTreeMap::new()).unwrap();
        let cfg = PieConfig::from_params(&p);
        assert_eq!(cfg, PieConfig::default());
        assert_eq!((cfg.target, cfg.tupdate, cfg.max_burst), (15 * MS, 15 * MS, 150 * MS));
        assert_eq!((cfg.alpha, cfg.beta, cfg.dq_threshold, cfg.ecn_threshold), (0.125, 1.25, 1 << 14, 0.1));
        // App. B: weight = DQ_THRESHOLD / 2^16.
        assert_eq!(cfg.dq_weight, (1u64 << 14) as f64 / (1u64 << 16) as f64);
        assert!(crate::qdisc::QUEUES.iter().any(|m| m.name == "pie"));
    }

    #[test]
    fn scaling_divides_the_update_at_the_rfc_thresholds() {
        // RFC 8033 §4.2: p < 0.000001 -> /2048, < 0.00001 -> /512, < 0.0001 -> /128,
        // < 0.001 -> /32, < 0.01 -> /8, < 0.1 -> /2, otherwise /1.
        let cases = [
            (0.0, 2048.0),
            (0.9e-6, 2048.0),
            (1e-6, 512.0),
            (9.9e-6, 512.0),
            (1e-5, 128.0),
            (9.9e-5, 128.0),
            (1e-4, 32.0),
            (9.9e-4, 32.0),
            (1e-3, 8.0),
            (9.9e-3, 8.0),
            (1e-2, 2.0),
            (0.0999, 2.0),
            (0.1, 1.0),
            (0.5, 1.0),
            (1.0, 1.0),
        ];
        for (p, div) in cases {
            assert_eq!(scale_divisor(p), div, "p = {p}");
        }
    }

    #[test]
    fn update_timer_fires_every_tupdate() {
        let mut h = pie(PieConfig::default());
        assert_eq!(h.disc.next_wakeup(), Some(15 * MS));
        h.wakeup(10 * MS); // early: ignored
        assert_eq!(h.disc.next_wakeup(), Some(15 * MS));
        h.wakeup(15 * MS);
        assert_eq!(h.disc.next_wakeup(), Some(30 * MS));
        h.wakeup(95 * MS); // late: the grid restarts from now
        assert_eq!(h.disc.next_wakeup(), Some(110 * MS));
    }

    #[test]
    fn first_update_follows_the_pi_formula_and_p_grows_while_delay_exceeds_target() {
        let mut h = pie(timestamps());
        for _ in 0..100 {
            h.arrive(0, 1500);
        }
        // Departure at 14 ms of a packet queued at 0: qdelay = 14 ms, qdelay_old = 0, p = 0.
        h.dequeue(14 * MS);
        h.wakeup(15 * MS);
        // dp = 0.125 (0.014 - 0.015) + 1.25 (0.014 - 0) = 0.017375, divided by 2048 at p = 0.
        let p1 = 0.017375 / 2048.0;
        assert!((h.disc.drop_prob() - p1).abs() < 1e-18, "{}", h.disc.drop_prob());
        // Next: qdelay 29 ms, p1 = 8.5e-6 is in [1e-6, 1e-5): divide by 512.
        // dp = 0.125 (0.029 - 0.015) + 1.25 (0.029 - 0.014) = 0.0205.
        h.dequeue(29 * MS);
        h.wakeup(30 * MS);
        let p2 = p1 + 0.0205 / 512.0;
        assert!((h.disc.drop_prob() - p2).abs() < 1e-15, "{}", h.disc.drop_prob());
        // The delay keeps growing above target: p grows at every update.
        let mut last = p2;
        for k in 3..=20u64 {
            h.dequeue(k * 15 * MS - MS);
            h.wakeup(k * 15 * MS);
            assert!(h.disc.drop_prob() > last, "update {k}: {} <= {last}", h.disc.drop_prob());
            last = h.disc.drop_prob();
        }
        assert!(last > 0.1, "{last}");
    }

    #[test]
    fn traced_variables_are_the_controller_state() {
        let read = |h: &Harness<Pie>| VARS.iter().map(|v| h.disc.var(v.name).unwrap()).collect::<Vec<_>>();
        let names: Vec<&str> = VARS.iter().map(|v| v.name).collect();
        assert_eq!(names, ["drop_prob", "qdelay", "qdelay_old", "burst_allowance", "accu_prob"]);
        // The sequence of the test above: the departure at 14 ms samples a 14 ms delay; the
        // burst allowance (150 ms) keeps every arrival from the random decision.
        let mut h = pie(timestamps());
        for _ in 0..100 {
            h.arrive(0, 1500);
        }
        h.dequeue(14 * MS);
        assert_eq!(read(&h), [0.0, 0.014, 0.0, 0.150, 0.0]);
        // The update at 15 ms: p = 0.017375 / 2048, the delay becomes the old one, the
        // allowance loses one tupdate (RFC 8033 §4.4).
        h.wakeup(15 * MS);
        let v = read(&h);
        assert!((v[0] - 0.017375 / 2048.0).abs() < 1e-18, "{}", v[0]);
        assert_eq!(v[1..], [0.014, 0.014, 0.135, 0.0]);
        assert_eq!(h.disc.var("count"), None);
    }

    #[test]
    fn p_decays_to_zero_on_an_empty_queue() {
        let mut h = pie(timestamps());
        h.disc.drop_prob = 0.5;
        h.disc.burst_allowance = 0;
        // Empty queue, no delay now or at the previous update:
        // p = (0.5 + 0.125 (0 - 0.015)) * 0.98 = 0.4881625.
        h.wakeup(15 * MS);
        assert!((h.disc.drop_prob() - 0.4881625).abs() < 1e-15, "{}", h.disc.drop_prob());
        // p <= 0.5 * 0.98^k is below 1e-6 after 650 updates, and the -0.001875/2048 step
        // then clears it within two more.
        let mut last = h.disc.drop_prob();
        let mut k = 1u64;
        while h.disc.drop_prob() > 0.0 {
            k += 1;
            h.wakeup(k * 15 * MS);
            assert!(h.disc.drop_prob() < last);
            last = h.disc.drop_prob();
            assert!(k <= 652, "p = {last} after {k} updates");
        }
        assert!(k > 100, "decayed in {k} updates: too fast for 0.98 per update");
        h.wakeup((k + 1) * 15 * MS);
        assert_eq!(h.disc.drop_prob(), 0.0);
        // Congestion is over: the burst allowance is back.
        assert_eq!(h.disc.burst_allowance, 150 * MS);
    }

    #[test]
    fn rate_estimator_measures_the_drain_rate_and_applies_littles_law() {
        let mut h = pie(PieConfig::default());
        for _ in 0..40 {
            h.arrive(0, 1000);
        }
        // The departure at 0 leaves 39 000 B >= 16 384 B queued: a cycle starts. It ends at
        // the 17th packet counted (17 000 B), 17 x 80 us later.
        h.dequeue(0);
        for k in 1..=17 {
            h.dequeue(k * 80 * US);
        }
        assert_eq!(h.disc.avg_dq_time, 1_360_000.0);
        // 22 000 B left: the next cycle starts at once; its packets leave every 160 us.
        assert!(h.disc.in_measurement);
        for k in 1..=17 {
            h.dequeue(1360 * US + k * 160 * US);
        }
        // EWMA with weight 0.25: 0.25 * 2720 us + 0.75 * 1360 us = 1700 us.
        assert_eq!(h.disc.avg_dq_time, 1_700_000.0);
        assert!(!h.disc.in_measurement, "5000 B left: no new cycle");
        // Little's law at the update: 5000 B * 1.7 ms / 16384 B = 518 798.8 ns.
        h.wakeup(15 * MS);
        assert_eq!(h.disc.qdelay, 518_799);
    }

    #[test]
    fn burst_allowance_lets_an_initial_burst_through() {
        // Arrivals at twice the drain rate (1500 B every 60 us into 120 us of service): the
        // delay grows by 0.5 ms per ms, above the 15 ms target from 30 ms on.
        let mut h = pie(PieConfig { limit: Size::Packets(100_000), ..PieConfig::default() });
        let fates = h.drive_link(0, 150 * MS, 60 * US, 120 * US, 1500);
        assert_eq!(count(&fates.iter().map(|f| f.1).collect::<Vec<_>>(), Fate::Early), 0);
        assert!(h.disc.qdelay > 4 * h.disc.cfg.target, "qdelay {}", h.disc.qdelay);
        assert!(h.disc.drop_prob() > 0.0);
        // Nine updates (15 ms to 135 ms) used 135 ms of the allowance; the update at 150 ms
        // takes the rest, and early drops follow.
        assert_eq!(h.disc.burst_allowance, 15 * MS);
        let later = h.drive_link(150 * MS, 400 * MS, 60 * US, 120 * US, 1500);
        assert!(later.iter().any(|f| f.1 == Fate::Early));

        // Without the allowance the same burst meets early drops well before 150 ms.
        let mut h = pie(PieConfig { limit: Size::Packets(100_000), max_burst: 0, ..PieConfig::default() });
        let fates = h.drive_link(0, 150 * MS, 60 * US, 120 * US, 1500);
        assert!(fates.iter().any(|f| f.1 == Fate::Early && f.0 < 150 * MS));
    }

    #[test]
    fn burst_allowance_is_restored_once_congestion_clears() {
        let mut h = pie(PieConfig { limit: Size::Packets(100_000), ..PieConfig::default() });
        h.drive_link(0, 300 * MS, 60 * US, 120 * US, 1500);
        assert_eq!(h.disc.burst_allowance, 0);
        assert!(h.disc.drop_prob() > 0.0);
        // No more arrivals: the queue drains, p decays to 0 and the allowance returns.
        h.drive_link(300 * MS, 30 * SEC, SEC * 1000, 120 * US, 1500);
        assert_eq!(h.disc.len_packets(), 0);
        assert_eq!(h.disc.drop_prob(), 0.0);
        assert_eq!(h.disc.burst_allowance, 150 * MS);
    }

    #[test]
    fn derandomized_drops_are_spaced_by_the_accumulator() {
        // RFC 8033 §5.4: after a drop accu_prob restarts from 0 and grows by p per arrival;
        // no drop while it is below 0.85, a drop for sure once it reaches 8.5. With
        // p = 0.125 (exact in binary) drops are 7 to 68 arrivals apart.
        let p = 0.125;
        let mut h = congested(PieConfig { derandomize: true, ..PieConfig::default() }, p);
        let fates = fates_at_fixed_p(&mut h, 20_000, Ecn::NotEct);
        let drops: Vec<usize> = (0..fates.len()).filter(|&i| fates[i] == Fate::Early).collect();
        assert!(drops.len() > 200, "{} drops", drops.len());
        assert!(drops[0] >= 6, "first drop at arrival {}", drops[0]);
        let gaps: Vec<usize> = drops.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(gaps.iter().all(|&g| (7..=68).contains(&g)), "{:?}", gaps.iter().min());

        // Plain random drops at the same p come as close as back to back.
        let mut h = congested(PieConfig::default(), p);
        let fates = fates_at_fixed_p(&mut h, 20_000, Ecn::NotEct);
        let drops: Vec<usize> = (0..fates.len()).filter(|&i| fates[i] == Fate::Early).collect();
        assert!(drops.windows(2).any(|w| w[1] - w[0] < 7));

        // Reaching 8.5 forces the drop whatever the random draw.
        let mut h = congested(PieConfig { derandomize: true, ..PieConfig::default() }, p);
        h.disc.accu_prob = 8.4;
        assert_eq!(h.arrive(0, 1500), Fate::Early);
        assert_eq!(h.disc.accu_prob, 0.0);
    }

    #[test]
    fn ecn_marks_ect_packets_up_to_the_threshold_and_drops_above() {
        let ecn = PieConfig { ecn: true, ..PieConfig::default() };
        let n = 4000;
        // Binomial(4000, p) bounds: mean +- 5 sd.
        let within = |k: usize, p: f64| within_binomial(k as u64, n as u64, p);
        for p in [0.05, 0.1] {
            let mut h = congested(ecn.clone(), p);
            let f = fates_at_fixed_p(&mut h, n, Ecn::Ect0);
            assert_eq!(count(&f, Fate::Early), 0, "p = {p}");
            assert!(within(count(&f, Fate::Marked), p), "p = {p}: {} marks", count(&f, Fate::Marked));
            // Not-ECT packets are dropped instead.
            let mut h = congested(ecn.clone(), p);
            let f = fates_at_fixed_p(&mut h, n, Ecn::NotEct);
            assert_eq!(count(&f, Fate::Marked), 0);
            assert!(within(count(&f, Fate::Early), p));
        }
        let p = 0.15;
        let mut h = congested(ecn.clone(), p);
        let f = fates_at_fixed_p(&mut h, n, Ecn::Ect0);
        assert_eq!(count(&f, Fate::Marked), 0);
        assert!(within(count(&f, Fate::Early), p), "{} drops", count(&f, Fate::Early));
        // ECN off: ECT packets are dropped at any p.
        let mut h = congested(PieConfig::default(), 0.05);
        let f = fates_at_fixed_p(&mut h, n, Ecn::Ect0);
        assert_eq!(count(&f, Fate::Marked), 0);
        assert!(count(&f, Fate::Early) > 0);
    }

    #[test]
    fn no_early_drop_at_low_delay_or_on_a_queue_of_two_packets() {
        // qdelay_old just under target/2 with p < 0.2: no early drop.
        let mut h = congested(PieConfig::default(), 0.19);
        h.disc.qdelay_old = 7_499_999;
        assert_eq!(count(&fates_at_fixed_p(&mut h, 1000, Ecn::NotEct), Fate::Early), 0);
        // At p = 0.2 the low delay no longer protects.
        let mut h = congested(PieConfig::default(), 0.2);
        h.disc.qdelay_old = 7_499_999;
        assert!(count(&fates_at_fixed_p(&mut h, 1000, Ecn::NotEct), Fate::Early) > 100);
        // Two 1500 B packets (3000 B <= 2 x 1514 B) are never dropped early, even at p = 1.
        let mut h = pie(PieConfig::default());
        h.disc.burst_allowance = 0;
        h.disc.qdelay_old = SEC;
        h.disc.drop_prob = 1.0;
        assert_eq!(h.arrive(0, 1500), Fate::Queued);
        assert_eq!(h.arrive(0, 1500), Fate::Queued);
        assert_eq!(h.arrive(0, 1500), Fate::Queued);
        assert_eq!(h.arrive(0, 1500), Fate::Early);
    }

    #[test]
    fn tail_drop_at_the_limit() {
        let cfg = PieConfig { limit: Size::Packets(5), ..PieConfig::default() };
        let mut q = queue("pie", Box::new(Pie::new(cfg.clone())));
        let mut events = Vec::new();
        for seq in 0..8 {
            q.enqueue(seq, pkt(0, seq, 1000), &mut events);
        }
        assert_eq!(events.len(), 3);
        assert!(events.iter().all(|e| e.kind == QueueEventKind::Overflow));
        let out: Vec<u64> = std::iter::from_fn(|| q.dequeue(10, &mut events)).map(|p| p.seq).collect();
        assert_eq!(out, vec![0, 1, 2, 3, 4]);
        // A tail drop restarts the de-randomization accumulator (App. B).
        let mut h = pie(cfg);
        for _ in 0..5 {
            h.arrive(0, 1000);
        }
        h.disc.accu_prob = 3.0;
        assert_eq!(h.arrive(0, 1000), Fate::Overflow);
        assert_eq!(h.disc.accu_prob, 0.0);
    }

    #[test]
    fn increases_are_capped_at_two_percent_from_ten_percent_on() {
        // qdelay 100 ms from 0: dp = 0.125 (0.1 - 0.015) + 1.25 (0.1 - 0) = 0.135625.
        let step = |cap: bool, p: f64| {
            let mut h = pie(PieConfig { cap_drop_adjustment: cap, ..timestamps() });
            h.arrive(0, 1500);
            h.arrive(0, 1500);
            h.dequeue(100 * MS);
            h.disc.drop_prob = p;
            h.wakeup(100 * MS);
            h.disc.drop_prob()
        };
        assert!((step(true, 0.5) - 0.52).abs() < 1e-12);
        assert!((step(false, 0.5) - 0.635625).abs() < 1e-12);
        // Below 10 % the cap does not apply (and dp is halved).
        assert!((step(true, 0.09) - (0.09 + 0.135625 / 2.0)).abs() < 1e-12);
    }

    #[test]
    fn linux_variant_decays_by_a_64th_gates_on_the_current_delay_and_adds_two_percent() {
        let linux = PieConfig { linux: true, ..timestamps() };
        // Decay: (0.5 - 0.001875) * 63/64 = 0.490341796875.
        let mut h = pie(linux.clone());
        h.disc.drop_prob = 0.5;
        h.wakeup(15 * MS);
        assert!((h.disc.drop_prob() - 0.490341796875).abs() < 1e-15);
        // Gate: an old delay of 20 ms but a current one of 1 ms protects under Linux only.
        for (cfg, protected) in [(linux.clone(), true), (timestamps(), false)] {
            let mut h = congested(cfg, 0.15);
            h.disc.qdelay = MS;
            let drops = count(&fates_at_fixed_p(&mut h, 1000, Ecn::NotEct), Fate::Early);
            assert_eq!(drops == 0, protected, "{drops} drops");
        }
        // Above 250 ms: the capped 2 % plus 2 %.
        let mut h = pie(linux);
        h.arrive(0, 1500);
        h.arrive(0, 1500);
        h.dequeue(300 * MS);
        h.disc.drop_prob = 0.5;
        h.wakeup(300 * MS);
        assert!((h.disc.drop_prob() - 0.54).abs() < 1e-12);
    }
}
