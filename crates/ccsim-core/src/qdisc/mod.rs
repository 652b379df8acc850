//! Output queues: a [`Queue`] keeps the packets' statistics and wraps a [`QueueDisc`], which
//! only holds packets and decides (ns-3 `QueueDisc` non-virtual-interface pattern).
//!
//! A discipline never sees a clock or the statistics: it gets `now`, a random stream and a
//! place to report drops and marks through [`QdiscCtx`]. The wrapper timestamps packets on
//! enqueue (for sojourn time), counts arrivals, departures, drops and marks, integrates the
//! length over time, and in debug builds checks the identity
//! `arrivals = departures + drops + length` (in total and per flow), the discipline's limit
//! and the length counters after every operation (`invariants.rs`).
//!
//! Length convention: the packet being serialized has left the queue, as
//! in ns-3 and Linux; it does not count toward the limit or the reported length.
//!
//! A discipline that keeps one FIFO (or one per flow) stores it in [`fifo::Fifo`], which owns
//! the packets, their byte count and the packet or byte limit; the disciplines' tests share
//! one kit (`testkit.rs`).

pub mod cake;
pub mod choke;
pub mod codel;
pub mod droptail;
pub mod dualpi2;
pub mod ecn_codel;
pub mod encn;
pub mod fifo;
pub mod fq_codel;
pub mod fq_pie;
pub mod jersey_cw;
pub mod pie;
pub mod pie_vars;
pub mod red;
#[cfg(test)]
pub(crate) mod testkit;
pub mod threshold;

use crate::invariants::QueueCheck;
use crate::packet::{Ecn, Kind, Packet, FLAG_LN};
use crate::params::{ParamSpec, Params, Size};
use crate::sim::rng::Rng;
use crate::sim::time::Time;
pub use crate::vars::{VarSpec, VarUnit, QUEUE_VARS};

/// Why a discipline dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// The buffer was full.
    Overflow,
    /// An AQM decision (early drop).
    Early,
}

/// A drop or a mark, as reported to the engine (which charges it to the flow and may log it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueEvent {
    /// Flow of the packet.
    pub flow: u32,
    /// What the packet carries (a dropped datagram loses its message).
    pub packet: crate::packet::Kind,
    /// Its sequence number (the datagram number of a datagram).
    pub seq: u64,
    /// What happened to it.
    pub kind: QueueEventKind,
    /// A dropped data segment that asked for an explicit loss notification (E-DCTCP,
    /// [`FLAG_LN`]): the engine returns its header to the sender.
    pub notice: Option<DropNotice>,
}

/// What the engine needs to return a dropped segment's header to its sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DropNotice {
    /// First payload byte of the dropped segment.
    pub seq: u64,
    /// Its send time (TSval), telling which copy was dropped.
    pub ts: Time,
    /// Its header bytes (size minus payload): the size of the returned packet.
    pub header: u32,
}

/// What happened to a packet in a queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueEventKind {
    /// Dropped because the buffer was full.
    Overflow,
    /// Dropped by the AQM.
    EarlyDrop,
    /// ECN-marked (CE) by the AQM.
    Mark,
}

impl QueueEventKind {
    /// Name used in result tables.
    pub fn name(self) -> &'static str {
        match self {
            QueueEventKind::Overflow => "drop_overflow",
            QueueEventKind::EarlyDrop => "drop_early",
            QueueEventKind::Mark => "mark",
        }
    }

    /// True for drops.
    pub fn is_drop(self) -> bool {
        self != QueueEventKind::Mark
    }
}

/// What a discipline may do besides holding packets.
pub struct QdiscCtx<'a> {
    /// Current simulated time.
    pub now: Time,
    /// The queue's own random stream.
    pub rng: &'a mut Rng,
    events: &'a mut Vec<QueueEvent>,
    drops: u64,
    early_drops: u64,
    marks: u64,
    /// Time the dropped packets spent in the queue (ns; 0 for a packet dropped on arrival).
    drop_sojourn: u64,
}

impl<'a> QdiscCtx<'a> {
    fn new(now: Time, rng: &'a mut Rng, events: &'a mut Vec<QueueEvent>) -> Self {
        QdiscCtx { now, rng, events, drops: 0, early_drops: 0, marks: 0, drop_sojourn: 0 }
    }

    /// Drop `pkt` (the arriving packet or one taken out of the queue).
    pub fn drop(&mut self, pkt: Packet, reason: DropReason) {
        self.drops += 1;
        self.drop_sojourn += self.now.saturating_sub(pkt.enqueued_at);
        let kind = match reason {
            DropReason::Overflow => QueueEventKind::Overflow,
            DropReason::Early => {
                self.early_drops += 1;
                QueueEventKind::EarlyDrop
            }
        };
        let notice = (pkt.kind == Kind::TcpData && pkt.flags & FLAG_LN != 0).then(|| DropNotice {
            seq: pkt.seq,
            ts: pkt.ts,
            header: pkt.size.saturating_sub(pkt.payload),
        });
        self.events.push(QueueEvent { flow: pkt.flow, packet: pkt.kind, seq: pkt.seq, kind, notice });
    }

    /// Set CE on an ECN-capable packet (RFC 3168 §5). Returns false, changing nothing, when
    /// the packet is Not-ECT: the caller should then drop it.
    pub fn mark(&mut self, pkt: &mut Packet) -> bool {
        if !pkt.ecn.is_ect() {
            return false;
        }
        if pkt.ecn != Ecn::Ce {
            pkt.ecn = Ecn::Ce;
            self.marks += 1;
            self.events.push(QueueEvent {
                flow: pkt.flow,
                packet: pkt.kind,
                seq: pkt.seq,
                kind: QueueEventKind::Mark,
                notice: None,
            });
        }
        true
    }
}

/// A queue discipline: holds packets and decides which to accept, drop, mark and send next.
pub trait QueueDisc: Send {
    /// Offer an arriving packet: keep it, or report it through `ctx.drop`.
    fn enqueue(&mut self, pkt: Packet, ctx: &mut QdiscCtx);
    /// The next packet for the link, if any (may drop packets on the way, e.g. CoDel).
    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<Packet>;
    /// Packets held.
    fn len_packets(&self) -> usize;
    /// Bytes held.
    fn len_bytes(&self) -> u64;
    /// When the discipline wants [`QueueDisc::on_wakeup`] (e.g. PIE's periodic update).
    fn next_wakeup(&self) -> Option<Time> {
        None
    }
    /// A requested wakeup is due.
    fn on_wakeup(&mut self, _ctx: &mut QdiscCtx) {}
    /// The (source, destination) node of every flow, by flow index, given once when the
    /// network is built, for a discipline that tells hosts apart (CAKE's host isolation).
    fn set_flow_hosts(&mut self, _hosts: &[(u32, u32)]) {}
    /// A plain DropTail hands itself over so that the wrapper can call it directly (most
    /// queues of a large topology are DropTail; see [`Disc`]).
    fn take_droptail(&mut self) -> Option<droptail::DropTail> {
        None
    }
    /// The discipline's variables that traces can sample (`trace.queue_vars`): a static
    /// table, the same for every instance built from the same parameters, which the registry
    /// reads from an instance at its defaults. Names differ from those every queue has
    /// ([`QUEUE_VARS`]).
    fn vars(&self) -> &'static [VarSpec] {
        &[]
    }
    /// The current value of variable `name`, one of [`QueueDisc::vars`] (`None` for any other
    /// name); NaN while it is undefined. Read every trace interval, never per packet.
    fn var(&self, _name: &str) -> Option<f64> {
        None
    }
}

/// The discipline inside a [`Queue`]: DropTail, the common case, is called directly (its
/// methods inline into the packet path); every other one through its trait object.
enum Disc {
    DropTail(droptail::DropTail),
    Dyn(Box<dyn QueueDisc>),
}

impl Disc {
    fn new(mut disc: Box<dyn QueueDisc>) -> Disc {
        match disc.take_droptail() {
            Some(d) => Disc::DropTail(d),
            None => Disc::Dyn(disc),
        }
    }
    #[inline]
    fn enqueue(&mut self, pkt: Packet, ctx: &mut QdiscCtx) {
        match self {
            Disc::DropTail(d) => d.enqueue(pkt, ctx),
            Disc::Dyn(d) => d.enqueue(pkt, ctx),
        }
    }
    #[inline]
    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<Packet> {
        match self {
            Disc::DropTail(d) => d.dequeue(ctx),
            Disc::Dyn(d) => d.dequeue(ctx),
        }
    }
    #[inline]
    fn len_packets(&self) -> usize {
        match self {
            Disc::DropTail(d) => d.len_packets(),
            Disc::Dyn(d) => d.len_packets(),
        }
    }
    #[inline]
    fn len_bytes(&self) -> u64 {
        match self {
            Disc::DropTail(d) => d.len_bytes(),
            Disc::Dyn(d) => d.len_bytes(),
        }
    }
    #[inline]
    fn next_wakeup(&self) -> Option<Time> {
        match self {
            Disc::DropTail(_) => None,
            Disc::Dyn(d) => d.next_wakeup(),
        }
    }
    fn on_wakeup(&mut self, ctx: &mut QdiscCtx) {
        match self {
            Disc::DropTail(d) => d.on_wakeup(ctx),
            Disc::Dyn(d) => d.on_wakeup(ctx),
        }
    }
    fn vars(&self) -> &'static [VarSpec] {
        match self {
            Disc::DropTail(d) => d.vars(),
            Disc::Dyn(d) => d.vars(),
        }
    }
    fn var(&self, name: &str) -> Option<f64> {
        match self {
            Disc::DropTail(d) => d.var(name),
            Disc::Dyn(d) => d.var(name),
        }
    }
}

/// A registered queue discipline.
pub struct QueueModel {
    /// Name used in scenarios.
    pub name: &'static str,
    /// One line: what it is and its source.
    pub doc: &'static str,
    /// Declared parameters.
    pub params: &'static [ParamSpec],
    /// Whether it draws random numbers (marks, drops, hashing).
    pub random: crate::registry::Randomness,
    /// Construct from validated parameters.
    pub build: fn(&Params) -> Box<dyn QueueDisc>,
}

/// Every queue discipline ccsim knows; adding one is a file plus a line here.
pub static QUEUES: &[QueueModel] = &[
    droptail::MODEL,
    red::MODEL,
    codel::MODEL,
    pie::MODEL,
    fq_codel::MODEL,
    fq_pie::MODEL,
    choke::MODEL,
    ecn_codel::MODEL,
    threshold::MODEL,
    jersey_cw::MODEL,
    encn::MODEL,
    dualpi2::MODEL,
    cake::MODEL,
];

/// Statistics of a queue over the measured window (and whole-run totals for invariants).
#[derive(Clone, Debug, Default)]
#[repr(C)]
pub struct QueueStats {
    // What every packet touches first (`repr(C)` keeps this order), the integrals and rarer
    // counters after.
    /// Whole run: packets accepted in, sent out, dropped (for the conservation identity).
    pub total_in: u64,
    /// Whole run departures.
    pub total_out: u64,
    /// Packets offered (measured window).
    pub arrivals: u64,
    /// Packets handed to the link.
    pub departures: u64,
    /// Sojourn time of the latest departure (ns), for sampled traces.
    pub last_sojourn: Time,
    /// Largest length seen (packets).
    pub max_len_pkts: u64,
    /// Sojourn times of departures (measured window), for quantiles and the maximum.
    pub sojourn_hist: crate::sim::histogram::LogHistogram,
    /// Sum and maximum of sojourn times of departures (ns).
    pub sojourn_sum: u128,
    /// Sum of the times dropped packets spent in the queue (ns, measured window): a packet
    /// dropped on arrival adds 0, one an AQM takes from the head its wait.
    pub drop_sojourn_sum: u128,
    /// Integral of length over time: packets*ns, packets^2*ns, bytes*ns, bytes^2*ns.
    pub area_pkts: u128,
    /// See `area_pkts`.
    pub area_pkts_sq: u128,
    /// See `area_pkts`.
    pub area_bytes: u128,
    /// See `area_pkts`.
    pub area_bytes_sq: u128,
    /// Packets dropped (any reason).
    pub drops: u64,
    /// Of which AQM early drops.
    pub early_drops: u64,
    /// Packets ECN-marked.
    pub marks: u64,
    /// Whole run drops.
    pub total_dropped: u64,
}

/// An output queue: a discipline plus the statistics kept for it.
#[repr(C)]
pub struct Queue {
    // Declared order kept (`repr(C)`): what a pass-through touches first (28 bytes, which
    // `net/link.rs` keeps in the link's second cache line), then the discipline.
    /// Pass-throughs not yet added to `stats` (whole run, and in the measured window):
    /// counted here so that an uncongested hop touches neither the statistics nor the
    /// discipline; [`Queue::settle`] adds them.
    passed: u64,
    passed_measured: u64,
    measure_from: Time,
    /// Packets smaller than this (bytes) are handed straight back by the empty queue (a
    /// DropTail within its limit); 0 for none: see `pass_through`.
    pass_below: u32,
    disc: Disc,
    last_change: Time,
    /// Statistics.
    pub stats: QueueStats,
    rng: Rng,
    /// Registered name of the discipline.
    pub kind: &'static str,
    /// Debug-build invariant checks (zero-sized in release; see `invariants.rs`).
    pub check: QueueCheck,
}

impl Queue {
    /// Bytes from the start of a queue to the end of what `pass_through` touches (in
    /// release builds): the pending counts, `measure_from` and `pass_below`.
    #[cfg(test)]
    pub(crate) const PASS_THROUGH_BYTES: usize = std::mem::offset_of!(Queue, pass_below) + 4;

    /// Wrap a discipline; statistics count from `measure_from` on.
    pub fn new(kind: &'static str, disc: Box<dyn QueueDisc>, rng: Rng, measure_from: Time) -> Self {
        let disc = Disc::new(disc);
        let pass_below = match &disc {
            Disc::DropTail(d) => d.empty_admits_below(),
            Disc::Dyn(_) => 0,
        };
        Queue {
            kind,
            disc,
            rng,
            measure_from,
            passed: 0,
            passed_measured: 0,
            pass_below,
            last_change: 0,
            stats: QueueStats::default(),
            check: QueueCheck::new(kind, None),
        }
    }

    /// Name the queue in invariant violations (its configuration field, e.g.
    /// `links[0].ab.queue`) and check its length against the `limit` its discipline enforces.
    pub fn with_checks(mut self, name: &str, limit: Option<Size>) -> Self {
        self.check = QueueCheck::new(name, limit);
        self
    }

    /// Packets held.
    pub fn len_packets(&self) -> usize {
        self.disc.len_packets()
    }

    /// Bytes held.
    pub fn len_bytes(&self) -> u64 {
        self.disc.len_bytes()
    }

    /// The discipline's traceable variables (besides [`QUEUE_VARS`], which every queue has).
    pub fn vars(&self) -> &'static [VarSpec] {
        self.disc.vars()
    }

    /// The current value of variable `name`: one of [`QUEUE_VARS`] or of the discipline's.
    /// Pending pass-throughs count as [`Queue::settle`] would add them.
    pub fn var(&self, name: &str) -> Option<f64> {
        match name {
            "len" => Some(self.len_packets() as f64),
            "sojourn" => Some(crate::sim::time::secs(self.last_sojourn())),
            "drops" => Some(self.stats.drops as f64),
            "marks" => Some(self.stats.marks as f64),
            _ => self.disc.var(name),
        }
    }

    /// Offer `pkt` at `now`; drops and marks are appended to `events`.
    pub fn enqueue(&mut self, now: Time, mut pkt: Packet, events: &mut Vec<QueueEvent>) {
        self.integrate(now);
        let first = events.len();
        pkt.enqueued_at = now;
        let mut ctx = QdiscCtx::new(now, &mut self.rng, events);
        self.disc.enqueue(pkt, &mut ctx);
        let (drops, early, marks, drop_sojourn) = (ctx.drops, ctx.early_drops, ctx.marks, ctx.drop_sojourn);
        let s = &mut self.stats;
        s.total_in += 1;
        s.total_dropped += drops;
        if now >= self.measure_from {
            s.arrivals += 1;
            s.drops += drops;
            s.drop_sojourn_sum += drop_sojourn as u128;
            s.early_drops += early;
            s.marks += marks;
            s.max_len_pkts = s.max_len_pkts.max(self.disc.len_packets() as u64);
        }
        self.check_invariants(now, Some(&pkt), None, &events[first..]);
    }

    /// An arrival at `now` at an empty queue whose link is idle: when the discipline would
    /// accept the packet and hand it straight back (DropTail with room for it), count the
    /// arrival and the departure as `enqueue` + `dequeue` would and return true: the packet
    /// (stamped with its arrival time) goes to the transmitter; otherwise return false, the
    /// packet untouched, for the normal path. Saves writing the packet into the buffer and
    /// reading it back on the most common hop of a large topology (an uncongested access
    /// link). The counts wait in `passed` until [`Queue::settle`]:
    /// with thousands of access queues, their statistics lines are rarely in cache.
    ///
    /// The queue must be empty, which the caller knows without asking the discipline: the
    /// engine calls this only when the link is idle with no transmission pending, and a
    /// DropTail queue holding packets always has one of the two (debug builds check).
    #[inline]
    pub fn pass_through(&mut self, now: Time, pkt: &mut Packet) -> bool {
        if pkt.size >= self.pass_below {
            return false;
        }
        debug_assert_eq!(self.disc.len_packets(), 0, "pass_through on a queue holding packets");
        // Length 0 before and after: the integrals gain nothing (`integrate` is not needed,
        // as every change of length integrates first).
        pkt.enqueued_at = now;
        self.passed += 1;
        if now >= self.measure_from {
            self.passed_measured += 1;
        }
        self.check_invariants(now, Some(pkt), Some(pkt), &[]);
        true
    }

    /// Add the pending pass-throughs to `stats`, each as an arrival and a departure with
    /// zero sojourn. Called before every other departure (so that `last_sojourn` is the
    /// latest one's) and by the engine at the end of every `run_until`, so `stats` is exact
    /// whenever it can be read.
    #[inline]
    pub fn settle(&mut self) {
        if self.passed != 0 {
            self.add_passed();
        }
    }

    fn add_passed(&mut self) {
        let (n, measured) = (self.passed, self.passed_measured);
        let s = &mut self.stats;
        s.total_in += n;
        s.total_out += n;
        s.last_sojourn = 0;
        if measured > 0 {
            s.arrivals += measured;
            s.departures += measured;
            s.max_len_pkts = s.max_len_pkts.max(1);
            s.sojourn_hist.record_n(0, measured);
        }
        self.passed = 0;
        self.passed_measured = 0;
    }

    /// Sojourn time of the latest departure (ns), for sampled traces.
    pub fn last_sojourn(&self) -> Time {
        if self.passed != 0 {
            0
        } else {
            self.stats.last_sojourn
        }
    }

    /// Take the next packet for the link at `now`.
    pub fn dequeue(&mut self, now: Time, events: &mut Vec<QueueEvent>) -> Option<Packet> {
        self.settle();
        self.integrate(now);
        let first = events.len();
        let mut ctx = QdiscCtx::new(now, &mut self.rng, events);
        let pkt = self.disc.dequeue(&mut ctx);
        let (drops, early, marks, drop_sojourn) = (ctx.drops, ctx.early_drops, ctx.marks, ctx.drop_sojourn);
        let s = &mut self.stats;
        s.total_dropped += drops;
        if let Some(p) = &pkt {
            s.total_out += 1;
            debug_assert!(p.enqueued_at <= now, "packet leaves before it arrived");
            let sojourn = now - p.enqueued_at;
            s.last_sojourn = sojourn;
            if now >= self.measure_from {
                s.departures += 1;
                s.sojourn_sum += sojourn as u128;
                s.sojourn_hist.record(sojourn);
            }
        }
        if now >= self.measure_from {
            s.drops += drops;
            s.drop_sojourn_sum += drop_sojourn as u128;
            s.early_drops += early;
            s.marks += marks;
        }
        self.check_invariants(now, None, pkt.as_ref(), &events[first..]);
        pkt
    }

    /// When the discipline wants a wakeup.
    pub fn next_wakeup(&self) -> Option<Time> {
        self.disc.next_wakeup()
    }

    /// Give the discipline the (source, destination) node of every flow.
    pub fn set_flow_hosts(&mut self, hosts: &[(u32, u32)]) {
        if let Disc::Dyn(d) = &mut self.disc {
            d.set_flow_hosts(hosts);
        }
    }

    /// Run the discipline's wakeup.
    pub fn on_wakeup(&mut self, now: Time, events: &mut Vec<QueueEvent>) {
        self.integrate(now);
        let first = events.len();
        let mut ctx = QdiscCtx::new(now, &mut self.rng, events);
        self.disc.on_wakeup(&mut ctx);
        let (drops, early, marks, drop_sojourn) = (ctx.drops, ctx.early_drops, ctx.marks, ctx.drop_sojourn);
        let s = &mut self.stats;
        s.total_dropped += drops;
        if now >= self.measure_from {
            s.drops += drops;
            s.drop_sojourn_sum += drop_sojourn as u128;
            s.early_drops += early;
            s.marks += marks;
        }
        self.check_invariants(now, None, None, &events[first..]);
    }

    /// Bring the time integrals of the length up to `now` (also called at the end of a run).
    #[inline]
    pub fn integrate(&mut self, now: Time) {
        // An empty queue (most of them, most of the time) adds nothing.
        if self.disc.len_packets() > 0 {
            self.accumulate(now);
        }
        self.last_change = now;
    }

    /// The integrals' work for a queue that holds packets.
    fn accumulate(&mut self, now: Time) {
        let from = self.last_change.max(self.measure_from);
        if now > from {
            let dt = (now - from) as u128;
            let p = self.disc.len_packets() as u128;
            let b = self.disc.len_bytes() as u128;
            let s = &mut self.stats;
            s.area_pkts += p * dt;
            s.area_pkts_sq += p * p * dt;
            s.area_bytes += b * dt;
            s.area_bytes_sq += b * b * dt;
        }
    }

    /// Debug builds: `in = out + dropped + held` (per flow and in total), the limit, and
    /// the length counters (`invariants.rs`).
    #[inline(always)]
    fn check_invariants(&mut self, now: Time, entered: Option<&Packet>, left: Option<&Packet>, events: &[QueueEvent]) {
        if !cfg!(debug_assertions) {
            return; // the lengths below are virtual calls for most disciplines: not in release
        }
        let s = &self.stats;
        let len = (self.disc.len_packets(), self.disc.len_bytes());
        let totals = (s.total_in + self.passed, s.total_out + self.passed, s.total_dropped);
        self.check.after(now, self.kind, entered, left, events, len, totals);
    }
}

#[cfg(test)]
mod tests {
    use super::testkit::{pkt, queue};
    use super::*;

    #[test]
    fn length_statistics_are_time_weighted() {
        // Length 1 during [0,10), 3 during [10,20), 0 during [20,40):
        // mean = (10 + 30) / 40 = 1, E[L^2] = (10 + 90) / 40 = 2.5, sd = sqrt(1.5).
        let mut q = queue("droptail", Box::new(droptail::DropTail::packets(100)));
        let mut events = Vec::new();
        q.enqueue(0, pkt(0, 0, 100), &mut events);
        q.enqueue(10, pkt(0, 1, 100), &mut events);
        q.enqueue(10, pkt(0, 2, 100), &mut events);
        for _ in 0..3 {
            assert!(q.dequeue(20, &mut events).is_some());
        }
        q.integrate(40);
        let s = &q.stats;
        assert_eq!(s.area_pkts, 40);
        assert_eq!(s.area_pkts_sq, 100);
        assert_eq!(s.area_bytes, 4000);
        assert_eq!((s.arrivals, s.departures, s.drops), (3, 3, 0));
        // Sojourn: 20, 10, 10 ns.
        assert_eq!(s.sojourn_sum, 40);
        assert_eq!(s.sojourn_hist.max(), 20);
        assert_eq!(s.sojourn_hist.count(), 3);
        assert_eq!(s.sojourn_hist.quantile(0.5), Some(10.0));
        assert_eq!(s.max_len_pkts, 3);
    }

    #[test]
    fn warmup_excludes_early_counts_but_keeps_the_queue_state() {
        let mut q = Queue::new(
            "droptail",
            Box::new(droptail::DropTail::packets(10)),
            Rng::stream(1, crate::sim::rng::Stream::Queue(0)),
            100,
        );
        let mut events = Vec::new();
        q.enqueue(0, pkt(0, 0, 100), &mut events);
        q.enqueue(150, pkt(0, 1, 100), &mut events);
        q.integrate(200);
        // Only the arrival at 150 counts; length was 1 during [100,150) and 2 during [150,200).
        assert_eq!(q.stats.arrivals, 1);
        assert_eq!(q.stats.area_pkts, 50 + 100);
    }

    #[test]
    fn marking_sets_ce_only_on_ect_packets() {
        let mut rng = Rng::stream(1, crate::sim::rng::Stream::Queue(0));
        let mut events = Vec::new();
        let mut ctx = QdiscCtx::new(0, &mut rng, &mut events);
        let mut p = pkt(0, 0, 100);
        assert!(!ctx.mark(&mut p));
        assert_eq!(p.ecn, Ecn::NotEct);
        p.ecn = Ecn::Ect0;
        assert!(ctx.mark(&mut p));
        assert_eq!(p.ecn, Ecn::Ce);
        assert!(ctx.mark(&mut p)); // already CE: not counted twice
        assert_eq!(ctx.marks, 1);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "pass_through on a queue holding packets")]
    fn pass_through_requires_an_empty_queue() {
        let mut busy = Queue::new(
            "droptail",
            Box::new(droptail::DropTail::packets(10)),
            Rng::stream(1, crate::sim::rng::Stream::Queue(0)),
            0,
        );
        busy.enqueue(0, pkt(0, 0, 1000), &mut Vec::new());
        let _ = busy.pass_through(0, &mut pkt(0, 1, 1000));
    }

    #[test]
    fn pass_through_counts_exactly_as_enqueue_then_dequeue() {
        // Oracle: the same arrivals through enqueue + immediate dequeue on a second queue.
        let mk = || {
            Queue::new(
                "droptail",
                Box::new(droptail::DropTail::packets(10)),
                Rng::stream(1, crate::sim::rng::Stream::Queue(0)),
                100,
            )
        };
        let (mut fast, mut slow) = (mk(), mk());
        let mut events = Vec::new();
        // Before and after the start of the measured window, with an idle gap between.
        for (k, t) in [50u64, 90, 150, 400, 401].into_iter().enumerate() {
            let p = pkt(0, k as u64, 1000);
            let mut a = p;
            assert!(fast.pass_through(t, &mut a), "empty DropTail passes");
            slow.enqueue(t, p, &mut events);
            let b = slow.dequeue(t, &mut events).unwrap();
            assert_eq!(a, b);
        }
        fast.integrate(500);
        slow.integrate(500);
        assert_eq!(fast.stats.total_in, 0, "counted only when settled");
        assert_eq!(fast.last_sojourn(), 0);
        fast.settle();
        assert_eq!(format!("{:?}", fast.stats), format!("{:?}", slow.stats));
        assert!(events.is_empty());
        // Not taken: a packet larger than a byte limit (the slow path drops it), a queue that
        // holds packets, and any other discipline.
        let mut small = Queue::new(
            "droptail",
            Box::new(droptail::DropTail::new(crate::params::Size::Bytes(500))),
            Rng::stream(1, crate::sim::rng::Stream::Queue(0)),
            0,
        );
        let big = pkt(0, 0, 1000);
        let mut left = big;
        assert!(!small.pass_through(0, &mut left));
        assert_eq!(left, big, "a packet not passed is untouched");
        // At the byte limit exactly it fits (0 + 500 <= 500), one byte more it does not.
        assert!(!small.pass_through(0, &mut pkt(0, 1, 501)));
        assert!(small.pass_through(0, &mut pkt(0, 2, 500)));
        let mut red =
            queue("red", (red::MODEL.build)(&Params::resolve("q", red::MODEL.params, &Default::default()).unwrap()));
        assert!(!red.pass_through(0, &mut pkt(0, 0, 1000)));
        assert_eq!(red.stats.total_in, 0);
    }
}
