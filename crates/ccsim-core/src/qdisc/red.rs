//! RED: Random Early Detection, with gentle mode, byte mode, ECN and
//! Adaptive RED. The averaging and the drop decision live in [`RedCore`] (and the averaging
//! alone in [`QueueAverage`]), which CHOKe (`choke.rs`), TCP-Jersey's congestion warning
//! (`jersey_cw.rs`) and ENCN (`encn.rs`) reuse.
//!
//! Sources:
//! - Floyd & Jacobson, "Random Early Detection Gateways for Congestion Avoidance", IEEE/ACM
//!   ToN 1(4), 1993: Fig. 2 (the algorithm), §7 (spacing of marks with `count`).
//! - Floyd, "Recommendations on using the gentle_ variant of RED", 2000: `p_b` ramps linearly
//!   from `max_p` to 1 between `max_th` and `2·max_th`.
//! - Floyd, Gummadi, Shenker, "Adaptive RED", ICSI 2001: `max_p` adapted every 0.5 s.
//! - Reference implementations: ns-2 `queue/red.cc`, ns-3 `red-queue-disc.cc`, Linux
//!   `include/net/red.h` (for defaults and the ECN/hard-drop behaviour).
//!
//! Choices where the sources differ:
//! - **Measured length**: `q` is the length found by the arrival (the arrival excluded), in the
//!   unit of `min_th` (packets or bytes). If `max_th` is given in the other unit it is
//!   converted with `mean_pkt_size`.
//! - **Spacing** (`count`): `p_a = p_b / (1 − count·p_b)` where `count` is the number of
//!   arrivals since the last early mark or drop, *not counting the current one* (paper §7,
//!   Linux's divisionless form). The gap between marks is then uniform on `{1, …, 1/p_b}`.
//!   ns-2/ns-3 increment `count` before computing `p_a`, which gives `{1, …, 1/p_b − 1}`.
//!   `count` restarts at 0 below `min_th` and after a forced drop. Spacing applies in the
//!   gentle region too (as ns-2/ns-3). ns-3's `m_old` skip of the first early decision and
//!   ns-2's `wait` option are not implemented.
//! - **Idle decay**: when an arrival finds the queue empty, `avg ← (1 − w_q)^m · avg` with
//!   `m = idle time / s` (real-valued, paper Fig. 2; no extra EWMA step with `q = 0` as ns-3
//!   does). The discipline does not know its link's rate, so `s` is either the parameter
//!   `mean_pkt_time`, or, when that is 0 (default), `mean_pkt_size` times the per-byte
//!   transmission time measured from back-to-back departures: when a departure leaves a
//!   backlog, the link takes the next packet as soon as the previous one is serialized, so
//!   the gap between the two departures is the previous packet's transmission time. Before
//!   the first such measurement (no queue has built yet, so `avg` is still 0) there is no decay.
//! - **Limit before RED**: an arrival that does not fit under `limit` is tail-dropped before
//!   RED decides, so a packet is never both marked and dropped; it still updates `avg`.
//! - **ECN**: with `ecn`, ECT packets are CE-marked instead of early-dropped (also in the
//!   gentle region); forced drops (`avg ≥ max_th`, or `≥ 2·max_th` in gentle mode) drop
//!   ECT packets too (ns-3 `UseHardDrop` default, Linux `harddrop`).
//! - **Adaptive RED**: only `max_p` is adapted (AIMD towards the band
//!   `[min_th + 0.4·(max_th − min_th), min_th + 0.6·(max_th − min_th)]`, `α = min(0.01, max_p/4)`,
//!   `β = 0.9`, `max_p` kept in about `[0.01, 0.5]`). The paper's automatic `w_q` and
//!   thresholds need the link rate and are not done. The update runs on a timer
//!   (`next_wakeup`) rather than on the next arrival as in ns-2; an idle queue's average is
//!   decayed to the update time first.
//!
//! The ANCE paper's setting (`min_th = Q/4`, `max_th = 3Q/4`, `max_p = 0.1`, `w_q = 0.002`,
//! `Q = 17 KB`) is `limit = 17000B, min_th = 4250B, max_th = 12750B`.

use crate::registry::Randomness;

use super::fifo::Fifo;
use super::{DropReason, QdiscCtx, QueueDisc, QueueModel, VarSpec, VarUnit};
use crate::packet::Packet;
use crate::params::{ParamKind, ParamSpec, ParamValue, Params, Size};
use crate::sim::rng::Rng;
use crate::sim::time::{Time, MS};

/// Adaptive RED: interval between `max_p` updates (Floyd, Gummadi, Shenker 2001, §4).
pub const ARED_INTERVAL: Time = 500 * MS;
/// Adaptive RED: largest additive increase of `max_p` per update.
const ARED_ALPHA_MAX: f64 = 0.01;
/// Adaptive RED: multiplicative decrease factor of `max_p`.
const ARED_BETA: f64 = 0.9;
/// Adaptive RED: `max_p` is increased only while at most this.
const ARED_TOP: f64 = 0.5;
/// Adaptive RED: `max_p` is decreased only while at least this.
const ARED_BOTTOM: f64 = 0.01;

// Parameter declarations, shared by the disciplines built on RED's machinery.

pub(crate) const P_LIMIT: ParamSpec = ParamSpec::new(
    "limit",
    ParamKind::Size,
    Some(ParamValue::Size(Size::Packets(1000))),
    "hard buffer limit, packets or bytes (ns-3/Linux default 1000p)",
);
const P_MIN_TH: ParamSpec = ParamSpec::new(
    "min_th",
    ParamKind::Size,
    Some(ParamValue::Size(Size::Packets(5))),
    "lower threshold of the average queue; its unit (p or B) is the unit the queue is measured in (paper, ns-3: 5p)",
);
const P_MAX_TH: ParamSpec = ParamSpec::new(
    "max_th",
    ParamKind::Size,
    Some(ParamValue::Size(Size::Packets(15))),
    "upper threshold of the average queue (paper, ns-3: 15p)",
);
const P_MAX_P: ParamSpec = ParamSpec::new(
    "max_p",
    ParamKind::Prob,
    Some(ParamValue::Float(0.1)),
    "early-drop probability at max_th (Floyd's advice with gentle: 0.1); initial value under adaptive",
);
pub(crate) const P_WQ: ParamSpec = ParamSpec::new(
    "wq",
    ParamKind::Float,
    Some(ParamValue::Float(0.002)),
    "weight of the queue-length EWMA (paper, ns-3: 0.002; 1 = instantaneous)",
)
.range(1e-9, 1.0);
const P_GENTLE: ParamSpec = ParamSpec::new(
    "gentle",
    ParamKind::Bool,
    Some(ParamValue::Bool(true)),
    "ramp p from max_p to 1 between max_th and 2*max_th (ns-2/ns-3 default true)",
);
const P_GENTLE_OFF: ParamSpec = ParamSpec::new(
    "gentle",
    ParamKind::Bool,
    Some(ParamValue::Bool(false)),
    "ramp p from max_p to 1 between max_th and 2*max_th (CHOKe paper, Linux choke: off)",
);
const P_BYTES: ParamSpec = ParamSpec::new(
    "bytes",
    ParamKind::Bool,
    Some(ParamValue::Bool(false)),
    "byte mode: scale p_b by packet size / mean_pkt_size",
);
pub(crate) const P_MEAN_PKT_SIZE: ParamSpec = ParamSpec::new(
    "mean_pkt_size",
    ParamKind::Bytes,
    Some(ParamValue::Int(500)),
    "typical packet size: byte-mode scaling and idle decay (ns-2/ns-3 MeanPktSize 500 B)",
)
.range(1.0, 1e9);
pub(crate) const P_MEAN_PKT_TIME: ParamSpec = ParamSpec::new(
    "mean_pkt_time",
    ParamKind::Time,
    Some(ParamValue::Int(0)),
    "transmission time s of a typical packet for the idle decay m = idle/s; 0 = mean_pkt_size at the measured link rate",
);
const P_ECN: ParamSpec = ParamSpec::new(
    "ecn",
    ParamKind::Bool,
    Some(ParamValue::Bool(false)),
    "CE-mark ECT packets instead of early-dropping them (forced drops still drop)",
);
const P_ADAPTIVE: ParamSpec = ParamSpec::new(
    "adaptive",
    ParamKind::Bool,
    Some(ParamValue::Bool(false)),
    "Adaptive RED: AIMD on max_p every 0.5 s towards the middle of [min_th, max_th]",
);

static PARAMS: &[ParamSpec] = &[
    P_LIMIT,
    P_MIN_TH,
    P_MAX_TH,
    P_MAX_P,
    P_WQ,
    P_GENTLE,
    P_BYTES,
    P_MEAN_PKT_SIZE,
    P_MEAN_PKT_TIME,
    P_ECN,
    P_ADAPTIVE,
];

/// CHOKe takes RED's parameters; gentle mode is off by default as in the paper and Linux.
pub(crate) static CHOKE_PARAMS: &[ParamSpec] = &[
    P_LIMIT,
    P_MIN_TH,
    P_MAX_TH,
    P_MAX_P,
    P_WQ,
    P_GENTLE_OFF,
    P_BYTES,
    P_MEAN_PKT_SIZE,
    P_MEAN_PKT_TIME,
    P_ECN,
    P_ADAPTIVE,
];

/// Registration.
pub const MODEL: QueueModel = QueueModel {
    name: "red",
    doc: "Random Early Detection (Floyd & Jacobson 1993) with gentle, byte mode, ECN, Adaptive RED (Floyd et al. 2001)",
    params: PARAMS,
    random: Randomness::Always { what: "random early drops" },
    build: |p: &Params| Box::new(Red::new(RedCore::from_params(p), p.size("limit"))),
};

/// The unit a queue is measured in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Packets.
    Packets,
    /// Bytes.
    Bytes,
}

impl Unit {
    /// The unit of a size parameter.
    pub fn of(size: Size) -> Unit {
        match size {
            Size::Packets(_) => Unit::Packets,
            Size::Bytes(_) => Unit::Bytes,
        }
    }

    /// The length of `fifo` in this unit.
    pub fn measure(self, fifo: &Fifo) -> f64 {
        match self {
            Unit::Packets => fifo.len() as f64,
            Unit::Bytes => fifo.bytes() as f64,
        }
    }

    /// `size` in this unit, converting with `mean_pkt_size` bytes per packet if needed.
    pub fn convert(self, size: Size, mean_pkt_size: u64) -> f64 {
        match (self, size) {
            (Unit::Packets, Size::Packets(n)) | (Unit::Bytes, Size::Bytes(n)) => n as f64,
            (Unit::Packets, Size::Bytes(n)) => n as f64 / mean_pkt_size.max(1) as f64,
            (Unit::Bytes, Size::Packets(n)) => n as f64 * mean_pkt_size as f64,
        }
    }
}

/// RED's average queue length: an EWMA updated on arrivals, decayed over idle periods
/// (paper Fig. 2). Used alone by `jersey_cw` and `encn`.
#[derive(Clone, Debug)]
pub struct QueueAverage {
    /// EWMA weight `w_q`.
    wq: f64,
    /// The average, in the unit of the owner's thresholds.
    pub avg: f64,
    /// When the queue last became empty (paper `q_time`).
    q_time: Time,
    mean_pkt_size: u64,
    /// `s` given as a parameter (ns); 0 = derive from the measured link rate.
    mean_pkt_time: Time,
    /// Measured transmission time per byte (ns/B); 0 until measured.
    ns_per_byte: f64,
    /// The latest departure, if it left a backlog (so the next one follows back to back).
    last_departure: Option<(Time, u32)>,
}

impl QueueAverage {
    /// An average with weight `wq`; `mean_pkt_time` 0 means "measure the link".
    pub fn new(wq: f64, mean_pkt_size: u64, mean_pkt_time: Time) -> Self {
        QueueAverage {
            wq,
            avg: 0.0,
            q_time: 0,
            mean_pkt_size: mean_pkt_size.max(1),
            mean_pkt_time,
            ns_per_byte: 0.0,
            last_departure: None,
        }
    }

    /// From the `wq`, `mean_pkt_size` and `mean_pkt_time` parameters.
    pub fn from_params(p: &Params) -> Self {
        Self::new(p.float("wq"), p.uint("mean_pkt_size"), p.uint("mean_pkt_time"))
    }

    /// The typical transmission time `s` (ns), if known.
    pub fn pkt_time(&self) -> Option<f64> {
        if self.mean_pkt_time > 0 {
            Some(self.mean_pkt_time as f64)
        } else if self.ns_per_byte > 0.0 {
            Some(self.ns_per_byte * self.mean_pkt_size as f64)
        } else {
            None
        }
    }

    /// An arrival finds the queue at length `q` (in the owner's unit): update and return `avg`.
    pub fn on_arrival(&mut self, now: Time, q: f64) -> f64 {
        if q > 0.0 {
            self.avg = (1.0 - self.wq) * self.avg + self.wq * q;
        } else {
            self.decay(now);
        }
        self.avg
    }

    /// The queue is empty: apply the decay for the idle time up to `now`, as if
    /// `m = (now − q_time)/s` empty-queue arrivals had occurred. Decays compose, so
    /// restarting the idle clock at `now` changes nothing later.
    pub fn decay(&mut self, now: Time) {
        if let Some(s) = self.pkt_time() {
            let m = now.saturating_sub(self.q_time) as f64 / s;
            self.avg *= (1.0 - self.wq).powf(m);
        }
        self.q_time = now;
    }

    /// Take the head of `fifo` at `now`, telling the average of the departure.
    pub fn dequeue(&mut self, fifo: &mut Fifo, now: Time) -> Option<Packet> {
        let pkt = fifo.pop()?;
        self.on_dequeue(now, pkt.size, fifo.len());
        Some(pkt)
    }

    /// A packet of `size` bytes left at `now`, leaving `remaining` packets queued.
    pub fn on_dequeue(&mut self, now: Time, size: u32, remaining: usize) {
        if let Some((t, s)) = self.last_departure {
            if now > t && s > 0 {
                self.ns_per_byte = (now - t) as f64 / s as f64;
            }
        }
        if remaining > 0 {
            self.last_departure = Some((now, size));
        } else {
            self.emptied(now);
        }
    }

    /// The queue became empty at `now` (by a departure or a drop from inside the queue).
    pub fn emptied(&mut self, now: Time) {
        self.q_time = now;
        self.last_departure = None;
    }
}

/// What RED decides for an arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Admit unchanged.
    Admit,
    /// Early ("unforced") congestion signal: mark if ECN allows, else drop.
    Early,
    /// Forced drop (average beyond the early region).
    Forced,
}

/// RED's variables besides the average.
const P_B: VarSpec = VarSpec::new(
    "p_b",
    VarUnit::Probability,
    "base probability at the current average, before byte-mode scaling and count spacing (paper p_b); 0 below min_th, 1 in the forced region",
);
const MAX_P: VarSpec = VarSpec::new("max_p", VarUnit::Probability, "current max_p (moves under Adaptive RED)");
const COUNT: VarSpec = VarSpec::new(
    "count",
    VarUnit::Count,
    "arrivals since the last early mark or drop, the current one excluded (paper count)",
);

/// RED's traceable variables (also CHOKe's) when its thresholds are in packets ...
pub static VARS_PKTS: &[VarSpec] = &[
    VarSpec::new("avg", VarUnit::Packets, "average queue length, the EWMA as of the last arrival (paper avg); in bytes, avg_bytes, when the thresholds are"),
    P_B,
    MAX_P,
    COUNT,
];

/// ... and in bytes.
pub static VARS_BYTES: &[VarSpec] = &[
    VarSpec::new(
        "avg",
        VarUnit::Bytes,
        "average queue length, the EWMA as of the last arrival (paper avg), thresholds in bytes",
    ),
    P_B,
    MAX_P,
    COUNT,
];

/// RED's average and decision, shared by RED and CHOKe.
#[derive(Clone, Debug)]
pub struct RedCore {
    /// The average queue length.
    pub avg: QueueAverage,
    /// Unit of `q`, `avg` and the thresholds.
    pub unit: Unit,
    /// Thresholds, in `unit`.
    pub min_th: f64,
    /// See `min_th`.
    pub max_th: f64,
    /// Current `max_p` (changes under Adaptive RED).
    pub max_p: f64,
    gentle: bool,
    bytes: bool,
    ecn: bool,
    mean_pkt_size: u64,
    /// Arrivals since the last early mark or drop, the current one excluded.
    count: u64,
    adaptive: bool,
    /// Next Adaptive RED update.
    next_adapt: Time,
}

impl RedCore {
    /// From RED's parameter table (also CHOKe's).
    pub fn from_params(p: &Params) -> Self {
        let mean_pkt_size = p.uint("mean_pkt_size").max(1);
        let min = p.size("min_th");
        let unit = Unit::of(min);
        RedCore {
            avg: QueueAverage::from_params(p),
            unit,
            min_th: unit.convert(min, mean_pkt_size),
            max_th: unit.convert(p.size("max_th"), mean_pkt_size),
            max_p: p.float("max_p"),
            gentle: p.bool("gentle"),
            bytes: p.bool("bytes"),
            ecn: p.bool("ecn"),
            mean_pkt_size,
            count: 0,
            adaptive: p.bool("adaptive"),
            next_adapt: ARED_INTERVAL,
        }
    }

    /// An arrival finds `fifo` as it is: update the average.
    pub fn on_arrival(&mut self, now: Time, fifo: &Fifo) -> f64 {
        self.avg.on_arrival(now, self.unit.measure(fifo))
    }

    /// The base probability `p_b` for the current average, or the verdict when it is outside
    /// the probabilistic region.
    fn base_probability(&self) -> Result<f64, Verdict> {
        let avg = self.avg.avg;
        if avg < self.min_th {
            Err(Verdict::Admit)
        } else if avg < self.max_th {
            // avg ≥ min_th and avg < max_th imply max_th > min_th.
            Ok(self.max_p * (avg - self.min_th) / (self.max_th - self.min_th))
        } else if self.gentle && avg < 2.0 * self.max_th {
            // avg ≥ max_th and avg < 2·max_th imply max_th > 0.
            Ok(self.max_p + (1.0 - self.max_p) * (avg - self.max_th) / self.max_th)
        } else {
            Err(Verdict::Forced)
        }
    }

    /// The traceable variables: the average is in the thresholds' unit.
    pub fn vars(&self) -> &'static [VarSpec] {
        match self.unit {
            Unit::Packets => VARS_PKTS,
            Unit::Bytes => VARS_BYTES,
        }
    }

    /// The value of variable `name` of [`RedCore::vars`].
    pub fn var(&self, name: &str) -> Option<f64> {
        Some(match name {
            "avg" => self.avg.avg,
            "p_b" => match self.base_probability() {
                Ok(p) => p,
                Err(Verdict::Admit) => 0.0,
                Err(_) => 1.0,
            },
            "max_p" => self.max_p,
            "count" => self.count as f64,
            _ => return None,
        })
    }

    /// RED's decision for an arrival of `size` bytes at the current average.
    pub fn decide(&mut self, size: u32, rng: &mut Rng) -> Verdict {
        let pb = match self.base_probability() {
            Ok(pb) => pb,
            Err(v) => {
                self.count = 0;
                return v;
            }
        };
        let pb = if self.bytes { pb * size as f64 / self.mean_pkt_size as f64 } else { pb };
        // Paper §7 "method 2": spread marks so the gap is uniform on {1, …, 1/p_b}.
        let c = self.count as f64 * pb;
        let pa = if c >= 1.0 { 1.0 } else { pb / (1.0 - c) };
        debug_assert!(pa >= 0.0, "negative marking probability {pa}");
        if rng.chance(pa) {
            self.count = 0;
            Verdict::Early
        } else {
            self.count += 1;
            Verdict::Admit
        }
    }

    /// Carry out `verdict` on `pkt`: the packet to admit, if any (drops are reported).
    pub fn apply(&self, verdict: Verdict, mut pkt: Packet, ctx: &mut QdiscCtx) -> Option<Packet> {
        match verdict {
            Verdict::Admit => Some(pkt),
            Verdict::Early if self.ecn && ctx.mark(&mut pkt) => Some(pkt),
            Verdict::Early | Verdict::Forced => {
                ctx.drop(pkt, DropReason::Early);
                None
            }
        }
    }

    /// When the next Adaptive RED update is due.
    pub fn next_wakeup(&self) -> Option<Time> {
        self.adaptive.then_some(self.next_adapt)
    }

    /// Adaptive RED's periodic update (paper Fig. 1 of Floyd, Gummadi, Shenker 2001).
    pub fn adapt(&mut self, now: Time, queue_empty: bool) {
        if now < self.next_adapt {
            return;
        }
        if queue_empty {
            self.avg.decay(now);
        }
        let span = self.max_th - self.min_th;
        let (low, high) = (self.min_th + 0.4 * span, self.min_th + 0.6 * span);
        let avg = self.avg.avg;
        if avg > high && self.max_p <= ARED_TOP {
            self.max_p += ARED_ALPHA_MAX.min(self.max_p / 4.0);
        } else if avg < low && self.max_p >= ARED_BOTTOM {
            self.max_p *= ARED_BETA;
        }
        self.next_adapt = now + ARED_INTERVAL;
    }
}

/// A RED queue.
pub struct Red {
    /// Average and decision.
    pub core: RedCore,
    pub(super) fifo: Fifo,
}

impl Red {
    /// RED with the given core and hard limit.
    pub fn new(core: RedCore, limit: Size) -> Self {
        Red { core, fifo: Fifo::new(limit) }
    }

    /// An arrival after the average has been updated: the hard limit, then RED's decision.
    /// CHOKe's arrivals end here too when they are not matched (`choke.rs`).
    pub(super) fn admit(&mut self, pkt: Packet, ctx: &mut QdiscCtx) {
        let Some(pkt) = self.fifo.admissible(pkt, ctx) else { return };
        let verdict = self.core.decide(pkt.size, ctx.rng);
        if let Some(pkt) = self.core.apply(verdict, pkt, ctx) {
            self.fifo.push(pkt);
        }
    }
}

impl QueueDisc for Red {
    fn enqueue(&mut self, pkt: Packet, ctx: &mut QdiscCtx) {
        self.core.on_arrival(ctx.now, &self.fifo);
        self.admit(pkt, ctx);
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<Packet> {
        self.core.avg.dequeue(&mut self.fifo, ctx.now)
    }

    fn len_packets(&self) -> usize {
        self.fifo.len()
    }

    fn len_bytes(&self) -> u64 {
        self.fifo.bytes()
    }

    fn next_wakeup(&self) -> Option<Time> {
        self.core.next_wakeup()
    }

    fn on_wakeup(&mut self, ctx: &mut QdiscCtx) {
        self.core.adapt(ctx.now, self.fifo.is_empty());
    }

    fn vars(&self) -> &'static [VarSpec] {
        self.core.vars()
    }

    fn var(&self, name: &str) -> Option<f64> {
        self.core.var(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::qdisc::testkit::{mean_gap, params, pkt, queue, within_binomial, Fate, Harness};
    use crate::sim::time::US;

    fn red(given: &[(&str, ParamValue)]) -> Harness<Red> {
        let p = params(PARAMS, given);
        Harness::new(Red::new(RedCore::from_params(&p), p.size("limit")))
    }

    fn pk(n: u64) -> ParamValue {
        ParamValue::Size(Size::Packets(n))
    }

    #[test]
    fn traced_variables_are_the_average_and_the_decision_state() {
        // w_q = 1/2 and no idle decay (no packet time is known yet): arrivals finding 0, 1, 2
        // and 3 packets give avg = 0, 1/2, 1/4 + 1 = 1.25, 0.625 + 1.5 = 2.125.
        let mut h = red(&[("wq", ParamValue::Float(0.5)), ("min_th", pk(2)), ("max_th", pk(4))]);
        let read = |h: &Harness<Red>| VARS_PKTS.iter().map(|v| h.disc.var(v.name).unwrap()).collect::<Vec<_>>();
        for _ in 0..3 {
            h.arrive(0, 1000);
        }
        // avg 1.25 < min_th: no early signal, p_b 0, count restarted.
        assert_eq!(read(&h), [1.25, 0.0, 0.1, 0.0]);
        // The fourth: avg 2.125, p_b = 0.1 (2.125 - 2) / (4 - 2) = 0.00625; a survivor
        // counts one arrival since the last signal.
        assert_eq!(h.arrive(0, 1000), Fate::Queued);
        assert_eq!(read(&h), [2.125, 0.00625, 0.1, 1.0]);
        assert_eq!(h.disc.vars(), VARS_PKTS);
        // Thresholds in bytes: the average is in bytes, and so is its column.
        let b =
            red(&[("min_th", ParamValue::Size(Size::Bytes(5000))), ("max_th", ParamValue::Size(Size::Bytes(15000)))]);
        assert_eq!(b.disc.vars()[0].column(), "avg_bytes");
    }

    /// min_th 10p, max_th 30p, max_p 0.1, wq = 1 (the average is the length found), so a
    /// queue held at L packets holds the average at L.
    fn red_10_30(extra: &[(&str, ParamValue)]) -> Harness<Red> {
        let mut g = vec![
            ("min_th", pk(10)),
            ("max_th", pk(30)),
            ("max_p", ParamValue::Float(0.1)),
            ("wq", ParamValue::Float(1.0)),
            ("limit", pk(200)),
        ];
        g.extend_from_slice(extra);
        red(&g)
    }

    fn rate(dropped: &[bool]) -> u64 {
        dropped.iter().filter(|&&d| d).count() as u64
    }

    #[test]
    fn average_follows_the_ewma_with_wq() {
        let mut h = red(&[("min_th", pk(100)), ("max_th", pk(300)), ("mean_pkt_time", ParamValue::Int(1000))]);
        // First arrival finds the queue empty at q_time = 0, now = 0: m = 0, no change.
        h.enqueue(0, pkt(0, 0, 1000));
        assert_eq!(h.disc.core.avg.avg, 0.0);
        // Then q = 1, 2, 3 with w = 0.002:
        // a1 = 0.002·1 = 0.002
        // a2 = 0.998·0.002 + 0.002·2 = 0.005996
        // a3 = 0.998·0.005996 + 0.002·3 = 0.011984008
        let expect = [0.002, 0.005996, 0.011984008];
        for (i, e) in expect.iter().enumerate() {
            h.enqueue(1 + i as u64, pkt(0, 1 + i as u64, 1000));
            assert!((h.disc.core.avg.avg - e).abs() < 1e-15, "step {i}: {} vs {e}", h.disc.core.avg.avg);
        }
    }

    #[test]
    fn no_early_drops_below_min_th() {
        let mut h = red_10_30(&[]);
        let (dropped, _) = h.hold(9, 20_000, 1000, Ecn::NotEct);
        assert_eq!(rate(&dropped), 0);
        assert_eq!(h.drops, 0);
    }

    #[test]
    fn early_drop_rate_matches_the_count_spacing_rule() {
        // avg = 20: p_b = 0.1·(20 − 10)/(30 − 10) = 0.05.
        // With count = arrivals since the last drop before this one, the k-th arrival after a
        // drop is dropped with p_a = p_b/(1 − (k−1)p_b). It survives the first k − 1 with
        // probability ∏_{j<k} (1 − j·p_b)/(1 − (j−1)p_b) = 1 − (k−1)p_b (telescoping), so
        // P(gap = k) = p_b for k ≤ n = ⌊1/p_b⌋ and the rest, 1 − n·p_b, at n + 1 (where
        // count·p_b ≥ 1 forces p_a = 1). Here 1/p_b = 20: the gap is uniform on {1..20},
        // mean 10.5, so the drop rate is 1/10.5 = 2p_b/(1 + p_b) ≈ 0.0952.
        let mut h = red_10_30(&[]);
        let n = 100_000;
        let (dropped, _) = h.hold(20, n, 1000, Ecn::NotEct);
        let p = 1.0 / mean_gap(0.05);
        assert!((p - 2.0 * 0.05 / 1.05).abs() < 1e-12);
        // The drop process is a renewal process with less variance than a binomial one, so
        // the binomial bound is conservative.
        let k = rate(&dropped);
        assert!(within_binomial(k, n as u64, p), "{k} drops in {n}, expected {}", p * n as f64);
        // Spacing: no gap exceeds 1/p_b = 20 (a memoryless drop would give gaps > 20 with
        // probability 0.95^20 ≈ 0.36 each), and the longest possible gap does occur.
        let drops: Vec<usize> = dropped.iter().enumerate().filter(|(_, &d)| d).map(|(i, _)| i).collect();
        let gaps: Vec<usize> = drops.windows(2).map(|w| w[1] - w[0]).collect();
        assert_eq!(gaps.iter().max(), Some(&20));
        assert!(gaps.iter().all(|&g| g >= 1));
        // Uniform: each gap value has probability 1/20.
        let ones = gaps.iter().filter(|&&g| g == 1).count() as u64;
        assert!(within_binomial(ones, gaps.len() as u64, 0.05), "{ones} gaps of 1 in {}", gaps.len());
        assert_eq!(h.early_drops(), h.drops);
    }

    #[test]
    fn forced_drops_above_max_th_without_gentle() {
        let mut h = red_10_30(&[("gentle", ParamValue::Bool(false))]);
        let (dropped, _) = h.hold(30, 1000, 1000, Ecn::NotEct);
        assert_eq!(rate(&dropped), 1000);
        // Just below max_th the drops are probabilistic: p_b = 0.1·19/20 = 0.095.
        let mut h = red_10_30(&[("gentle", ParamValue::Bool(false))]);
        let n = 20_000;
        let (dropped, _) = h.hold(29, n, 1000, Ecn::NotEct);
        assert!(within_binomial(rate(&dropped), n as u64, 1.0 / mean_gap(0.095)));
    }

    #[test]
    fn gentle_mode_ramps_the_probability_between_max_th_and_twice_max_th() {
        // avg = 35: p_b = 0.1 + 0.9·(35 − 30)/30 = 0.25, gap uniform on {1..4}: rate 0.4.
        // avg = 45: p_b = 0.55: gap 1 w.p. 0.55, else 2: rate 1/1.45.
        for (level, pb) in [(35, 0.25), (45, 0.55)] {
            let mut h = red_10_30(&[]);
            let n = 20_000;
            let (dropped, _) = h.hold(level, n, 1000, Ecn::NotEct);
            let p = 1.0 / mean_gap(pb);
            let k = rate(&dropped);
            assert!(within_binomial(k, n as u64, p), "level {level}: {k} drops in {n}, expected {}", p * n as f64);
        }
        // At 2·max_th every arrival is dropped.
        let mut h = red_10_30(&[]);
        let (dropped, _) = h.hold(60, 1000, 1000, Ecn::NotEct);
        assert_eq!(rate(&dropped), 1000);
    }

    #[test]
    fn idle_period_decays_the_average_by_one_minus_wq_to_the_m() {
        // s = 1 ms given; w = 0.1.
        let mut h = red(&[
            ("min_th", pk(1000)),
            ("max_th", pk(2000)),
            ("limit", pk(3000)),
            ("wq", ParamValue::Float(0.1)),
            ("mean_pkt_time", ParamValue::Int(MS as i64)),
        ]);
        for i in 0..50 {
            h.enqueue(i, pkt(0, i, 1000));
        }
        let before = h.disc.core.avg.avg;
        assert!(before > 10.0);
        for _ in 0..50 {
            h.dequeue(100);
        }
        // Empty since t = 100; arrival 7.5 ms later: m = 7.5.
        h.enqueue(100 + 7 * MS + MS / 2, pkt(0, 99, 1000));
        let expect = before * 0.9f64.powf(7.5);
        assert!((h.disc.core.avg.avg - expect).abs() < 1e-12 * before, "{} vs {expect}", h.disc.core.avg.avg);
    }

    #[test]
    fn idle_decay_derives_the_packet_time_from_back_to_back_departures() {
        // 1000 B packets leaving every 80 us (100 Mb/s): 80 ns/B, s = 500 B · 80 ns = 40 us.
        let mut h = red(&[("min_th", pk(1000)), ("max_th", pk(2000)), ("wq", ParamValue::Float(0.01))]);
        for i in 0..4 {
            h.enqueue(i, pkt(0, i, 1000));
        }
        let before = h.disc.core.avg.avg;
        assert!(before > 0.0);
        assert_eq!(h.disc.core.avg.pkt_time(), None);
        for k in 0..4 {
            h.dequeue(10 + k * 80 * US);
        }
        assert_eq!(h.disc.core.avg.pkt_time(), Some(40_000.0));
        // Empty since 10 + 240 us; 2 ms later: m = 50.
        h.enqueue(10 + 240 * US + 2 * MS, pkt(0, 9, 1000));
        let expect = before * 0.99f64.powi(50);
        assert!((h.disc.core.avg.avg - expect).abs() < 1e-12, "{} vs {expect}", h.disc.core.avg.avg);
    }

    #[test]
    fn ecn_marks_ect_packets_instead_of_early_drops_but_forced_drops_still_drop() {
        let n = 20_000;
        let mut h = red_10_30(&[("ecn", ParamValue::Bool(true))]);
        let (dropped, marks) = h.hold(20, n, 1000, Ecn::Ect0);
        assert_eq!(rate(&dropped), 0);
        assert!(within_binomial(marks, n as u64, 1.0 / mean_gap(0.05)), "{marks} marks");
        // Non-ECT packets are still dropped early.
        let mut h = red_10_30(&[("ecn", ParamValue::Bool(true))]);
        let (dropped, marks) = h.hold(20, n, 1000, Ecn::NotEct);
        assert_eq!(marks, 0);
        assert!(within_binomial(rate(&dropped), n as u64, 1.0 / mean_gap(0.05)));
        // Forced region (non-gentle, avg ≥ max_th): ECT packets are dropped, not marked.
        let mut h = red_10_30(&[("ecn", ParamValue::Bool(true)), ("gentle", ParamValue::Bool(false))]);
        let (dropped, marks) = h.hold(30, 1000, 1000, Ecn::Ect0);
        assert_eq!((rate(&dropped), marks), (1000, 0));
        // Gentle forced region (avg ≥ 2·max_th) likewise.
        let mut h = red_10_30(&[("ecn", ParamValue::Bool(true))]);
        let (dropped, marks) = h.hold(60, 1000, 1000, Ecn::Ect0);
        assert_eq!((rate(&dropped), marks), (1000, 0));
    }

    #[test]
    fn byte_mode_scales_the_probability_with_packet_size() {
        // p_b = 0.05 at avg 20p, scaled by size/500: 1000 B → 0.1, 250 B → 0.025.
        let n = 40_000;
        for (size, pb) in [(1000u32, 0.1), (250, 0.025)] {
            let mut h = red_10_30(&[("bytes", ParamValue::Bool(true))]);
            let (dropped, _) = h.hold(20, n, size, Ecn::NotEct);
            let p = 1.0 / mean_gap(pb);
            let k = rate(&dropped);
            assert!(within_binomial(k, n as u64, p), "size {size}: {k} drops, expected {}", p * n as f64);
        }
    }

    #[test]
    fn byte_thresholds_compare_bytes() {
        let b = |n| ParamValue::Size(Size::Bytes(n));
        let given = [("min_th", b(10_000)), ("max_th", b(30_000)), ("wq", ParamValue::Float(1.0)), ("limit", pk(200))];
        // 20 packets of 400 B = 8000 B < min_th: no drops (in packets it would be 20 > 10).
        let mut h = red(&given);
        let (dropped, _) = h.hold(20, 10_000, 400, Ecn::NotEct);
        assert_eq!(rate(&dropped), 0);
        // 20 packets of 1000 B = 20 000 B: p_b = 0.05.
        let mut h = red(&given);
        let n = 40_000;
        let (dropped, _) = h.hold(20, n, 1000, Ecn::NotEct);
        assert!(within_binomial(rate(&dropped), n as u64, 1.0 / mean_gap(0.05)));
    }

    #[test]
    fn adaptive_red_moves_max_p_towards_the_target_band() {
        // Band: [10 + 0.4·20, 10 + 0.6·20] = [18, 22].
        let mut h = red_10_30(&[("adaptive", ParamValue::Bool(true)), ("limit", pk(1000))]);
        assert_eq!(h.disc.next_wakeup(), Some(ARED_INTERVAL));
        h.hold(25, 10, 1000, Ecn::NotEct);
        assert_eq!(h.disc.core.avg.avg, 25.0);
        h.wakeup(ARED_INTERVAL);
        // Above the band: + min(0.01, 0.1/4).
        assert!((h.disc.core.max_p - 0.11).abs() < 1e-12);
        assert_eq!(h.disc.next_wakeup(), Some(2 * ARED_INTERVAL));
        h.wakeup(2 * ARED_INTERVAL);
        assert!((h.disc.core.max_p - 0.12).abs() < 1e-12);
        // Inside the band: unchanged.
        while h.disc.len_packets() > 20 {
            h.dequeue(2 * ARED_INTERVAL);
        }
        h.hold(20, 1, 1000, Ecn::NotEct);
        assert_eq!(h.disc.core.avg.avg, 20.0);
        h.wakeup(3 * ARED_INTERVAL);
        assert!((h.disc.core.max_p - 0.12).abs() < 1e-12);
        // Below the band: × 0.9.
        while h.disc.len_packets() > 15 {
            h.dequeue(3 * ARED_INTERVAL);
        }
        h.hold(15, 1, 1000, Ecn::NotEct);
        h.wakeup(4 * ARED_INTERVAL);
        assert!((h.disc.core.max_p - 0.108).abs() < 1e-12);
        // A small max_p grows by a quarter of itself.
        h.disc.core.max_p = 0.02;
        h.hold(25, 1, 1000, Ecn::NotEct);
        h.wakeup(5 * ARED_INTERVAL);
        assert!((h.disc.core.max_p - 0.025).abs() < 1e-12);
        // Not adaptive: no timer.
        assert_eq!(red_10_30(&[]).disc.next_wakeup(), None);
    }

    #[test]
    fn the_ance_setting_is_expressible_in_bytes() {
        // Q = 17 KB: min_th = Q/4, max_th = 3Q/4, max_p 0.1, wq 0.002.
        let b = |n| ParamValue::Size(Size::Bytes(n));
        let h = red(&[("limit", b(17_000)), ("min_th", b(4250)), ("max_th", b(12_750))]);
        let c = &h.disc.core;
        assert_eq!((c.unit, c.min_th, c.max_th, c.max_p), (Unit::Bytes, 4250.0, 12_750.0, 0.1));
    }

    #[test]
    fn registered_models_run_random_traffic_under_the_wrapper() {
        // Every model of this family, with defaults, behind the statistics wrapper (which
        // asserts arrivals = departures + drops + held after every operation).
        let mut rng = Rng::stream(5, crate::sim::rng::Stream::Flow(0));
        for m in
            crate::qdisc::QUEUES.iter().filter(|m| ["red", "choke", "threshold", "jersey_cw", "encn"].contains(&m.name))
        {
            let p = params(m.params, &[("limit", pk(40))]);
            let mut q = queue(m.name, (m.build)(&p));
            let mut events = Vec::new();
            let mut t = 0;
            for seq in 0..20_000 {
                t += 1 + rng.range_u64(0, 100);
                let mut p = pkt(rng.range_u64(0, 4) as u32, seq, 100 + rng.range_u64(0, 1400) as u32);
                p.ecn = if seq % 2 == 0 { Ecn::Ect0 } else { Ecn::NotEct };
                q.enqueue(t, p, &mut events);
                if rng.chance(0.45) {
                    q.dequeue(t, &mut events);
                }
                if let Some(w) = q.next_wakeup() {
                    if w <= t {
                        q.on_wakeup(t, &mut events);
                    }
                }
            }
            let s = &q.stats;
            assert_eq!(s.total_in, s.total_out + s.total_dropped + q.len_packets() as u64, "{}", m.name);
            assert!(s.total_dropped > 0, "{}: the 40p limit must overflow", m.name);
        }
    }
}
