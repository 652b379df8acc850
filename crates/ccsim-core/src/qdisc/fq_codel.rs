//! FQ-CoDel (Flow Queue CoDel): RFC 8290, Hoeiland-Joergensen, McKenney, Taht, Gettys,
//! Dumazet, "The Flow Queue CoDel Packet Scheduler and Active Queue Management Algorithm", 2018.
//!
//! Packets are hashed by flow into `flows` queues (§4.1.1); the hash is perturbed by a value
//! drawn once from the queue's random stream (on the first arrival), so which flows share a
//! queue changes with the seed, as Linux's per-qdisc `perturbation`. Queues are served by
//! deficit round robin in bytes with `quantum` (§4.2), new queues before old ones: a queue
//! that becomes active joins the tail of `new_flows` with one quantum of credit; a queue that
//! runs out of credit gets another quantum and moves to the tail of `old_flows`; a queue
//! found empty moves from `new_flows` to the tail of `old_flows` (§4.2, the anti-starvation
//! rule; Linux only does this when `old_flows` is non-empty) or leaves `old_flows`. Each
//! queue runs CoDel ([`super::codel::CodelVars::dequeue`], the same code as `codel`) with
//! shared parameters. The scheduler, [`FqScheduler`], is generic over the per-queue AQM:
//! `fq_pie` runs the same one with PIE.
//!
//! L4S marking (Linux `sch_fq_codel.c`, 5.16 and later): `ce_threshold` CE-marks every
//! delivered ECT packet whose sojourn time in its flow queue is strictly above the
//! threshold, whatever the state of that queue's CoDel (the check at the end of Linux
//! `codel_dequeue`, see [`super::codel`]). With `ce_threshold_ect1` only ECT(1) packets are
//! subject to it: Linux's `ce_threshold_selector 0x1/0x3`, which compares the DS byte under
//! the mask 0x3 (the ECN bits) with 0x1 (ECT(1)); ccsim models no DSCP, so that is the only
//! selector offered ([`CodelParams::ce_threshold_ect1`]). This is the L4S use: scalable
//! (ECT(1)) flows get an immediate, shallow marking threshold while classic ECT(0) and
//! Not-ECT flows see plain CoDel. Both are off by default, as in Linux.
//!
//! When the total exceeds `limit`, packets are dropped from the head of the queue with the
//! largest byte backlog (§4.1: one packet). `drop_batch` > 1 gives Linux's batch drop (up to
//! that many packets, stopping once half of that queue's backlog is gone).
//!
//! Choices: CoDel's "below one MTU" exception looks at the whole FQ-CoDel backlog, as Linux
//! `fq_codel_dequeue` (which passes `sch->qstats.backlog`); ns-3 looks at the flow queue's
//! own backlog. Linux also adds the batch size to the fat queue's CoDel `count`; RFC 8290
//! does not, and neither does this model. ECN defaults to on (RFC 8290 §5, Linux
//! `fq_codel_init`). The memory limit of Linux (32 MB) is not modelled; `limit` may be given
//! in bytes instead.

use crate::registry::Randomness;
use std::collections::VecDeque;

use super::codel::{CodelParams, CodelVars, PacketStore, CE_THRESHOLD_SPEC, INTERVAL_SPEC, MTU_SPEC, TARGET_SPEC};
use super::fifo::Fifo;
use super::{DropReason, QdiscCtx, QueueDisc, QueueModel, VarSpec, VarUnit};
use crate::packet::Packet;
use crate::params::{ParamKind, ParamSpec, ParamValue, Params, Size};
use crate::sim::rng::Rng;

static PARAMS: &[ParamSpec] = &[
    TARGET_SPEC,
    INTERVAL_SPEC,
    MTU_SPEC,
    ParamSpec::new(
        "ecn",
        ParamKind::Bool,
        Some(ParamValue::Bool(true)),
        "CE-mark ECT packets instead of dropping them (RFC 8290 / Linux fq_codel default on)",
    ),
    ParamSpec::new(
        "flows",
        ParamKind::Int,
        Some(ParamValue::Int(1024)),
        "number of flow queues the hash maps into; RFC 8290 §5.2.1 default 1024 (Linux max 65536)",
    )
    .range(1.0, 65536.0),
    ParamSpec::new(
        "quantum",
        ParamKind::Bytes,
        Some(ParamValue::Int(1514)),
        "DRR credit per round; RFC 8290 §5.2.2 default 1514B (MTU + Ethernet header); Linux min 256B",
    )
    .range(256.0, 1e9),
    ParamSpec::new(
        "limit",
        ParamKind::Size,
        Some(ParamValue::Size(Size::Packets(10240))),
        "total buffer in packets or bytes, overflow dropped from the fattest queue; RFC 8290 §5.2.3 default 10240p",
    ),
    ParamSpec::new(
        "drop_batch",
        ParamKind::Int,
        Some(ParamValue::Int(1)),
        "packets dropped from the fattest queue per overflow (RFC 8290: 1; Linux: 64, up to half its backlog)",
    )
    .range(1.0, 65536.0),
    CE_THRESHOLD_SPEC,
    ParamSpec::new(
        "ce_threshold_ect1",
        ParamKind::Bool,
        Some(ParamValue::Bool(false)),
        "apply ce_threshold to ECT(1) packets only, the L4S setting (Linux ce_threshold_selector 0x1/0x3); \
         default off: every ECT packet",
    ),
];

/// Registration.
pub const MODEL: QueueModel = QueueModel {
    name: "fq_codel",
    doc: "FQ-CoDel: per-flow CoDel queues served by deficit round robin, new flows first (RFC 8290)",
    params: PARAMS,
    random: Randomness::Always { what: "random flow-hash perturbation" },
    build: |p: &Params| {
        Box::new(FqCodel::new(
            CodelParams::from_params(p),
            p.uint("flows") as usize,
            p.uint("quantum"),
            p.size("limit"),
            p.uint("drop_batch"),
        ))
    },
};

/// Which scheduling list a flow queue is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum List {
    /// Neither (inactive).
    None,
    /// `new_flows`.
    New,
    /// `old_flows`.
    Old,
}

/// One flow queue, with the state `V` its AQM keeps for it.
#[derive(Debug)]
pub struct FlowQueue<V> {
    /// The packets; unbounded, as the limit applies to the scheduler's total.
    pub fifo: Fifo,
    /// DRR deficit (bytes); may go negative by less than one packet.
    pub credits: i64,
    /// List membership.
    pub list: List,
    /// The AQM's state for this queue (CoDel's for FQ-CoDel, PIE's for FQ-PIE).
    pub aqm: V,
}

/// Packets and bytes held by all the flow queues together.
#[derive(Debug, Default)]
pub struct Backlog {
    /// Packets.
    pub pkts: usize,
    /// Bytes.
    pub bytes: u64,
}

impl Backlog {
    /// Take the head of `fifo`, one of the queues counted here.
    pub fn pop(&mut self, fifo: &mut Fifo) -> Option<Packet> {
        let pkt = fifo.pop()?;
        self.pkts -= 1;
        self.bytes -= pkt.size as u64;
        Some(pkt)
    }
}

/// A flow queue seen by CoDel: pops keep the scheduler's totals right.
struct FlowStore<'a> {
    fifo: &'a mut Fifo,
    total: &'a mut Backlog,
}

impl PacketStore for FlowStore<'_> {
    fn pop_head(&mut self) -> Option<Packet> {
        self.total.pop(self.fifo)
    }

    fn backlog_bytes(&self) -> u64 {
        // Whole-qdisc backlog, as Linux (see the module comment).
        self.total.bytes
    }
}

/// The flow-queue scheduler of RFC 8290 §4.1-4.2 (hashing, DRR++ with new and old lists),
/// shared by FQ-CoDel and FQ-PIE: `V` is the per-queue state of the discipline's AQM, `S`
/// what the discipline keeps for all its queues.
pub struct FqScheduler<V, S> {
    /// The discipline's parameters and whatever state it keeps beside its queues.
    pub shared: S,
    quantum: i64,
    limit: Size,
    /// Flow queues, indexed by hash bucket.
    pub queues: Vec<FlowQueue<V>>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    total: Backlog,
    perturbation: Option<u64>,
}

/// FQ-CoDel's own part: CoDel's parameters and the overflow batch size.
pub struct CodelShared {
    /// CoDel parameters, the same for every queue.
    pub codel: CodelParams,
    /// Packets dropped from the fattest queue per overflow.
    pub drop_batch: u64,
}

/// The FQ-CoDel scheduler.
pub type FqCodel = FqScheduler<CodelVars, CodelShared>;

/// SplitMix64's finalizer (Steele, Lea, Flood 2014): a bijective 64-bit mixer.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl<V, S> FqScheduler<V, S> {
    /// `flows` empty, inactive queues (at least one), each with the AQM state `aqm()`.
    pub fn with_queues(shared: S, flows: usize, quantum: u64, limit: Size, mut aqm: impl FnMut() -> V) -> Self {
        let flows = flows.max(1);
        let queues =
            (0..flows).map(|_| FlowQueue { fifo: Fifo::unbounded(), credits: 0, list: List::None, aqm: aqm() });
        FqScheduler {
            shared,
            quantum: quantum.clamp(1, i64::MAX as u64) as i64,
            limit,
            queues: queues.collect(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            total: Backlog::default(),
            perturbation: None,
        }
    }

    /// Fix the hash perturbation instead of drawing it (tests, reproducing a mapping).
    pub fn with_perturbation(mut self, perturbation: u64) -> Self {
        self.perturbation = Some(perturbation);
        self
    }

    /// The bucket of `flow` under `perturbation`: multiply-shift reduction of a mixed hash,
    /// as Linux `reciprocal_scale`.
    fn bucket_with(&self, perturbation: u64, flow: u32) -> usize {
        let h = mix(flow as u64 ^ perturbation) >> 32;
        ((h * self.queues.len() as u64) >> 32) as usize
    }

    /// The bucket of `flow`, drawing the perturbation the first time.
    pub fn classify(&mut self, flow: u32, rng: &mut Rng) -> usize {
        let perturbation = *self.perturbation.get_or_insert_with(|| rng.next_u64());
        self.bucket_with(perturbation, flow)
    }

    /// The bucket `flow` maps to, once the perturbation is known.
    pub fn bucket_of(&self, flow: u32) -> Option<usize> {
        self.perturbation.map(|p| self.bucket_with(p, flow))
    }

    /// The total exceeds the limit.
    fn over_limit(&self) -> bool {
        match self.limit {
            Size::Packets(n) => self.total.pkts as u64 > n,
            Size::Bytes(n) => self.total.bytes > n,
        }
    }

    /// Add `pkt` to queue `i`; an inactive queue joins the tail of `new_flows` with one
    /// quantum of credit (§4.1). The limit is the caller's business.
    pub fn push(&mut self, i: usize, pkt: Packet) {
        let q = &mut self.queues[i];
        self.total.pkts += 1;
        self.total.bytes += pkt.size as u64;
        q.fifo.push(pkt);
        if q.list == List::None {
            q.list = List::New;
            q.credits = self.quantum;
            self.new_flows.push_back(i as u32);
        }
    }

    /// Adding `pkt` would exceed the limit.
    pub fn full_for(&self, pkt: &Packet) -> bool {
        match self.limit {
            Size::Packets(n) => self.total.pkts as u64 >= n,
            Size::Bytes(n) => self.total.bytes + pkt.size as u64 > n,
        }
    }

    /// DRR++ (§4.2): the next packet, taken by `take` from the queue whose turn it is
    /// (`take` may drop packets on the way, through the [`Backlog`] it is given; `None`
    /// means that queue is empty now).
    pub fn dequeue_with(
        &mut self,
        mut take: impl FnMut(&S, &mut FlowQueue<V>, &mut Backlog) -> Option<Packet>,
    ) -> Option<Packet> {
        loop {
            let (from_new, i) = match (self.new_flows.front(), self.old_flows.front()) {
                (Some(&i), _) => (true, i as usize),
                (None, Some(&i)) => (false, i as usize),
                (None, None) => return None,
            };
            let q = &mut self.queues[i];
            if q.credits <= 0 {
                // Out of credit: one more quantum, and wait behind the other old flows.
                q.credits += self.quantum;
                q.list = List::Old;
                if from_new {
                    self.new_flows.pop_front();
                } else {
                    self.old_flows.pop_front();
                }
                self.old_flows.push_back(i as u32);
                continue;
            }
            match take(&self.shared, q, &mut self.total) {
                Some(pkt) => {
                    q.credits -= pkt.size as i64;
                    return Some(pkt);
                }
                None if from_new => {
                    // RFC 8290 §4.2: an emptied new queue goes to the old list, so that a
                    // flow cannot stay "new" forever by keeping its queue short.
                    q.list = List::Old;
                    self.new_flows.pop_front();
                    self.old_flows.push_back(i as u32);
                }
                None => {
                    q.list = List::None;
                    self.old_flows.pop_front();
                }
            }
        }
    }

    /// Packets held.
    pub fn len_packets(&self) -> usize {
        self.total.pkts
    }

    /// The value of the scheduler's variable `name`: [`NEW_FLOWS`] or [`OLD_FLOWS`].
    pub fn list_var(&self, name: &str) -> Option<f64> {
        match name {
            "new_flows" => Some(self.new_flows.len() as f64),
            "old_flows" => Some(self.old_flows.len() as f64),
            _ => None,
        }
    }

    /// Bytes held.
    pub fn len_bytes(&self) -> u64 {
        self.total.bytes
    }
}

impl FqCodel {
    /// An FQ-CoDel queue with `flows` buckets.
    pub fn new(params: CodelParams, flows: usize, quantum: u64, limit: Size, drop_batch: u64) -> Self {
        let shared = CodelShared { codel: params, drop_batch: drop_batch.max(1) };
        FqScheduler::with_queues(shared, flows, quantum, limit, CodelVars::default)
    }

    /// Drop from the head of the queue with the largest byte backlog (RFC 8290 §4.1).
    fn drop_from_fattest(&mut self, ctx: &mut QdiscCtx) {
        // Linear scan, as Linux: only on overflow. Ties go to the lowest index.
        let mut fat = 0;
        for (i, q) in self.queues.iter().enumerate() {
            if q.fifo.bytes() > self.queues[fat].fifo.bytes() {
                fat = i;
            }
        }
        let q = &mut self.queues[fat];
        let half = q.fifo.bytes() / 2;
        let (mut n, mut dropped) = (0, 0);
        while let Some(pkt) = self.total.pop(&mut q.fifo) {
            let size = pkt.size as u64;
            ctx.drop(pkt, DropReason::Overflow);
            n += 1;
            dropped += size;
            if n >= self.shared.drop_batch || dropped >= half {
                break;
            }
        }
    }
}

impl QueueDisc for FqCodel {
    fn enqueue(&mut self, pkt: Packet, ctx: &mut QdiscCtx) {
        let i = self.classify(pkt.flow, ctx.rng);
        self.push(i, pkt);
        // Each pass removes at least one packet, so this ends.
        while self.over_limit() && self.total.pkts > 0 {
            self.drop_from_fattest(ctx);
        }
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<Packet> {
        self.dequeue_with(|shared, q, total| {
            let mut store = FlowStore { fifo: &mut q.fifo, total };
            q.aqm.dequeue(&shared.codel, &mut store, ctx)
        })
    }

    fn len_packets(&self) -> usize {
        self.total.pkts
    }

    fn len_bytes(&self) -> u64 {
        self.total.bytes
    }

    fn vars(&self) -> &'static [VarSpec] {
        VARS
    }

    fn var(&self, name: &str) -> Option<f64> {
        let dropping = || self.queues.iter().filter(|q| q.aqm.dropping);
        Some(match name {
            "dropping_flows" => dropping().count() as f64,
            "max_count" => dropping().map(|q| q.aqm.count).max().unwrap_or(0) as f64,
            _ => return self.list_var(name),
        })
    }
}

/// The scheduler's variables, FQ-CoDel's and FQ-PIE's.
pub(crate) const NEW_FLOWS: VarSpec =
    VarSpec::new("new_flows", VarUnit::Count, "flow queues on the new list (RFC 8290 new_flows)");
/// See [`NEW_FLOWS`].
pub(crate) const OLD_FLOWS: VarSpec =
    VarSpec::new("old_flows", VarUnit::Count, "flow queues on the old list (RFC 8290 old_flows)");

/// FQ-CoDel's traceable variables: the scheduler's lists and CoDel's state over the flow queues.
pub static VARS: &[VarSpec] = &[
    NEW_FLOWS,
    OLD_FLOWS,
    VarSpec::new("dropping_flows", VarUnit::Count, "flow queues whose CoDel is in the dropping state"),
    VarSpec::new(
        "max_count",
        VarUnit::Count,
        "largest CoDel count among the flow queues in the dropping state; 0 when none",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::qdisc::testkit::{assert_drr_byte_shares, ecn_pkt, pkt, Harness};
    use crate::qdisc::QueueEventKind;
    use crate::sim::time::{Time, MS, US};

    fn fq(limit: Size, drop_batch: u64) -> Harness<FqCodel> {
        let h = Harness::new(FqCodel::new(CodelParams::default(), 1024, 1514, limit, drop_batch).with_perturbation(7));
        // The tests use flows 0, 1 and 2; they must not share a bucket.
        let b: Vec<usize> = (0..3).map(|f| h.disc.bucket_of(f).unwrap()).collect();
        assert!(b[0] != b[1] && b[1] != b[2] && b[0] != b[2], "{b:?}");
        h
    }

    #[test]
    fn a_sparse_flow_bypasses_the_bulk_flows_standing_queue() {
        // Bulk flow 0: 1500 B every 100 us into a link that takes one packet every 120 us,
        // so its queue grows (CoDel drops some, not enough). Sparse flow 1: 100 B every 5 ms.
        // Each sparse packet finds its queue inactive and joins new_flows, so it leaves at
        // the next dequeue: sojourn below one dequeue interval.
        let mut h = fq(Size::Packets(10240), 1);
        let (mut bulk_seq, mut sparse_seq) = (0, 0);
        for t in (0..2000 * MS).step_by(US as usize) {
            if t % (100 * US) == 0 {
                h.enqueue(t, pkt(0, bulk_seq, 1500));
                bulk_seq += 1;
            }
            if t % (5 * MS) == 37 * US {
                h.enqueue(t, pkt(1, sparse_seq, 100));
                sparse_seq += 1;
            }
            if t % (120 * US) == 0 {
                h.dequeue(t);
            }
        }
        let sojourn = |flow: u32| -> Vec<(Time, Time)> {
            let out = h.steps.iter().filter_map(|s| s.out.map(|p| (s.now, p)));
            out.filter(|(_, p)| p.flow == flow).map(|(now, p)| (p.enqueued_at, now - p.enqueued_at)).collect()
        };
        let sparse = sojourn(1);
        assert_eq!(sparse.len() as u64, sparse_seq);
        // The very first sparse packet queues behind the bulk flow's first quantum, which is
        // itself new at that moment; from then on the bulk flow is old.
        assert!(sparse[1..].iter().all(|&(_, s)| s <= 120 * US), "{:?}", sparse.iter().max_by_key(|x| x.1));
        assert!(sparse[0].1 <= 240 * US);
        let bulk: Vec<Time> = sojourn(0).iter().map(|x| x.1).collect();
        let late: Vec<Time> = bulk[bulk.len() / 2..].to_vec();
        let mean = late.iter().sum::<Time>() / late.len() as Time;
        assert!(mean > 20 * MS, "bulk sojourn {mean}");
        let bulk_queue = h.disc.queues[h.disc.bucket_of(0).unwrap()].fifo.len();
        assert!(bulk_queue > 100, "{bulk_queue}");
        // CoDel acted on the bulk flow only.
        let drops = h.dequeue_events(QueueEventKind::EarlyDrop);
        assert!(!drops.is_empty() && drops.iter().all(|e| e.flow == 0));
    }

    #[test]
    fn drr_shares_bytes_equally_between_flows_of_different_packet_sizes() {
        assert_drr_byte_shares(&mut fq(Size::Packets(10240), 1));
    }

    #[test]
    fn overflow_drops_from_the_head_of_the_fattest_queue() {
        // Limit 10 packets: flow 0 holds 7 x 500 B, flow 1 3 x 1400 B. An 11th packet, of
        // flow 0, overflows; counting it, flow 0 holds 8 packets but 4000 B < 4200 B, so
        // flow 1 is the fattest in bytes and loses its head (seq 0).
        let mut h = fq(Size::Packets(10), 1);
        for k in 0..7 {
            h.enqueue(0, pkt(0, k, 500));
        }
        for k in 0..3 {
            h.enqueue(0, pkt(1, k, 1400));
        }
        assert!(h.enqueue_events().is_empty());
        h.enqueue(1, pkt(0, 7, 500));
        assert_eq!(h.enqueue_events().len(), 1);
        assert_eq!(h.enqueue_events()[0].flow, 1);
        assert_eq!(h.enqueue_events()[0].kind, QueueEventKind::Overflow);
        assert_eq!(h.disc.len_packets(), 10);
        assert_eq!(h.disc.len_bytes(), 4000 + 2800);
        // One more of flow 0 makes it the fattest (4500 B vs 2800 B): its head goes.
        h.enqueue(2, pkt(0, 8, 500));
        assert_eq!(h.enqueue_events()[1].flow, 0);
        let out: Vec<Packet> = std::iter::from_fn(|| h.dequeue(3)).collect();
        assert_eq!(out.iter().find(|p| p.flow == 0).unwrap().seq, 1);
        assert_eq!(out.iter().find(|p| p.flow == 1).unwrap().seq, 1);
        assert_eq!(out.len(), 10);
    }

    #[test]
    fn batch_drop_removes_up_to_half_the_fattest_backlog() {
        // Linux mode, batch 64: flow 0 holds 20 x 1000 B; at the limit of 20 one more packet
        // drops from flow 0 until half of its 20 000 B (or more) is gone: 10 packets.
        let mut h = fq(Size::Packets(20), 64);
        for k in 0..20 {
            h.enqueue(0, pkt(0, k, 1000));
        }
        h.enqueue(0, pkt(1, 0, 1000));
        assert_eq!(h.enqueue_events().len(), 10);
        assert!(h.enqueue_events().iter().all(|e| e.flow == 0));
        assert_eq!(h.disc.len_packets(), 11);
    }

    #[test]
    fn an_emptied_new_flow_moves_to_the_old_list() {
        // Flow 1 has one packet and is the only new flow besides flow 2; flow 0 nowhere.
        let mut h = fq(Size::Packets(100), 1);
        h.enqueue(0, pkt(1, 0, 100));
        for k in 0..5 {
            h.enqueue(0, pkt(2, k, 1500));
        }
        assert_eq!(h.dequeue(0).unwrap().flow, 1);
        let b1 = h.disc.bucket_of(1).unwrap();
        assert_eq!(h.disc.queues[b1].list, List::New);
        // Next dequeue finds flow 1 empty at the head of new_flows: RFC 8290 moves it to the
        // old list even though that list is empty (Linux would deactivate it).
        assert_eq!(h.dequeue(0).unwrap().flow, 2);
        assert_eq!(h.disc.queues[b1].list, List::Old);
        assert_eq!(h.disc.old_flows.front().copied(), Some(b1 as u32));
        // Serve flow 2 dry: flow 1 is removed when found empty in the old list.
        while h.dequeue(0).is_some() {}
        assert_eq!(h.disc.queues[b1].list, List::None);
        assert!(h.disc.new_flows.is_empty() && h.disc.old_flows.is_empty());
    }

    #[test]
    fn the_hash_spreads_flows_over_the_buckets_and_depends_on_the_seed() {
        // 1000 flows into 1024 buckets: about 1024 (1 - e^(-1000/1024)) = 638 distinct
        // buckets expected (sd ~ 10); accept > 580.
        let a = FqCodel::new(CodelParams::default(), 1024, 1514, Size::Packets(10), 1).with_perturbation(1);
        let b = FqCodel::new(CodelParams::default(), 1024, 1514, Size::Packets(10), 1).with_perturbation(2);
        let mut used = std::collections::BTreeSet::new();
        let mut same = 0;
        for f in 0..1000 {
            used.insert(a.bucket_of(f).unwrap());
            same += (a.bucket_of(f) == b.bucket_of(f)) as u32;
        }
        assert!(used.len() > 580, "{}", used.len());
        assert!(same < 20, "{same}");
        // The perturbation is drawn on the first arrival.
        let mut h = Harness::new(FqCodel::new(CodelParams::default(), 1024, 1514, Size::Packets(10), 1));
        assert!(h.disc.bucket_of(0).is_none());
        h.enqueue(0, pkt(0, 0, 100));
        assert!(h.disc.bucket_of(0).is_some());
    }

    #[test]
    fn registered_with_rfc_defaults() {
        let m = crate::qdisc::QUEUES.iter().find(|m| m.name == "fq_codel").unwrap();
        let p = Params::resolve("q", m.params, &Default::default()).unwrap();
        assert_eq!((p.uint("flows"), p.uint("quantum"), p.uint("drop_batch")), (1024, 1514, 1));
        assert_eq!(p.size("limit"), Size::Packets(10240));
        assert!(p.bool("ecn"));
    }

    /// FQ-CoDel with CoDel parameters `p`, 1024 queues, default quantum and limit.
    fn fq_with(p: CodelParams) -> Harness<FqCodel> {
        Harness::new(FqCodel::new(p, 1024, 1514, Size::Packets(10240), 1).with_perturbation(7))
    }

    /// One flow of `n` 1500 B packets, packet k (codepoint `ecn(k)`) arriving at k * `gap`,
    /// and one dequeue per arrival, at k * `gap` + `sojourn`: while nothing is dropped the
    /// k-th dequeue delivers packet k after exactly `sojourn`.
    fn standing(p: CodelParams, gap: Time, sojourn: Time, n: u64, ecn: impl Fn(u64) -> Ecn) -> Harness<FqCodel> {
        let mut h = fq_with(p);
        let mut served = 0;
        for k in 0..n {
            let t = k * gap;
            while served < k && served * gap + sojourn <= t {
                h.dequeue(served * gap + sojourn);
                served += 1;
            }
            h.enqueue(t, ecn_pkt(0, k, 1500, ecn(k)));
        }
        for j in served..n {
            h.dequeue(j * gap + sojourn);
        }
        h
    }

    /// Sequence numbers of the packets marked, in order.
    fn marked(h: &Harness<FqCodel>) -> Vec<u64> {
        h.dequeue_events(QueueEventKind::Mark).iter().map(|e| e.seq).collect()
    }

    #[test]
    fn ce_threshold_marks_the_ect_packets_that_waited_longer_while_codel_is_idle() {
        // Packets every 500 us, alternately ECT(0) and Not-ECT, each leaving `sojourn` after it
        // arrived, for 2 s (20 intervals). 1 ms and 1.1 ms are far below the 5 ms target:
        // CoDel never acts, so every mark is the threshold's.
        let p = CodelParams { ecn: true, ce_threshold: MS, ..CodelParams::default() };
        let alternate = |k: u64| if k.is_multiple_of(2) { Ecn::Ect0 } else { Ecn::NotEct };
        // Exactly at the threshold is not above it (Linux `codel_time_after`): no mark.
        let h = standing(p, 500 * US, MS, 4000, alternate);
        assert_eq!((h.marks, h.drops, h.departures), (0, 0, 4000));
        // 0.1 ms slower: every ECT packet is marked on its way out, no Not-ECT one, and
        // nothing is dropped.
        let h = standing(p, 500 * US, 1100 * US, 4000, alternate);
        assert_eq!((h.drops, h.departures), (0, 4000));
        assert_eq!(marked(&h), (0..4000).step_by(2).collect::<Vec<u64>>());
        for out in h.steps.iter().map(|s| s.out.unwrap()) {
            assert_eq!(out.ecn, if out.seq % 2 == 0 { Ecn::Ce } else { Ecn::NotEct }, "{}", out.seq);
        }
        // The marks leave CoDel's state alone: still below target, never dropping.
        let q = &h.disc.queues[h.disc.bucket_of(0).unwrap()].aqm;
        assert_eq!(*q, CodelVars::default());
        // The same run without the threshold marks nothing.
        let h = standing(CodelParams { ce_threshold: 0, ..p }, 500 * US, 1100 * US, 4000, alternate);
        assert_eq!(h.marks, 0);
        // Unlike CoDel's own signal the threshold ignores the "below one MTU" exception
        // (Linux sets `ldelay` before that test): a packet alone in its queue (every 2 ms,
        // leaving 1.1 ms later) is marked too.
        let h = standing(p, 2 * MS, 1100 * US, 1000, |_| Ecn::Ect0);
        assert_eq!(h.marks, 1000);
    }

    #[test]
    fn ce_threshold_ect1_marks_only_ect1_packets_and_leaves_the_rest_to_codel() {
        // Packets every 500 us cycling ECT(1), ECT(0), Not-ECT (seq % 3 = 0, 1, 2).
        let p = CodelParams { ecn: true, ce_threshold: MS, ce_threshold_ect1: true, ..CodelParams::default() };
        let cycle = |k: u64| [Ecn::Ect1, Ecn::Ect0, Ecn::NotEct][(k % 3) as usize];
        // A 2 ms sojourn, below target for 2 s: every ECT(1) packet is marked, nothing else.
        let h = standing(p, 500 * US, 2 * MS, 3000, cycle);
        assert_eq!(h.drops, 0);
        assert_eq!(marked(&h), (0..3000).step_by(3).collect::<Vec<u64>>());
        // Without the selector the ECT(0) packets are marked as well: the test can fail.
        let h = standing(CodelParams { ce_threshold_ect1: false, ..p }, 500 * US, 2 * MS, 3000, cycle);
        assert_eq!(marked(&h), (0..3000).filter(|k| k % 3 != 2).collect::<Vec<u64>>());
        // A 6 ms sojourn, above target: the first dequeue (6 ms) sets first_above_time to
        // 106 ms, so CoDel's first signal comes at the dequeue of 106 ms. Until then only
        // ECT(1) packets are marked; from then on CoDel marks ECT(0) packets and drops Not-ECT
        // ones, and every ECT(1) packet delivered is still marked (each CoDel drop shortens
        // the sojourn by 0.5 ms, and CoDel stops below 5 ms, far above the threshold).
        let h = standing(p, 500 * US, 6 * MS, 2000, cycle);
        let marks: Vec<(Time, u64)> =
            h.log.iter().filter(|l| l.event.kind == QueueEventKind::Mark).map(|l| (l.now, l.event.seq)).collect();
        assert!(marks.iter().all(|&(t, seq)| seq % 3 == 0 || t >= 106 * MS), "{marks:?}");
        assert!(marks.iter().any(|&(_, seq)| seq % 3 == 1), "CoDel marks ECT(0) packets");
        let drops = h.dequeue_events(QueueEventKind::EarlyDrop);
        assert!(!drops.is_empty() && drops.iter().all(|e| e.seq % 3 == 2), "{drops:?}");
        assert_eq!(h.early_drop_times()[0], 106 * MS);
        let ect1_out: Vec<Packet> = h.steps.iter().filter_map(|s| s.out).filter(|p| p.seq % 3 == 0).collect();
        assert_eq!(ect1_out.len(), 667);
        assert!(ect1_out.iter().all(|p| p.ecn == Ecn::Ce));
    }

    /// Three flows overloading the link (one dequeue per 100 us) for 1 s: flow 0 ECT(0)
    /// every 90 us, flow 1 Not-ECT every 250 us, flow 2 ECT(1) every 300 us.
    fn overload(p: CodelParams) -> Harness<FqCodel> {
        let mut h = fq_with(p);
        let mut seq = 0;
        h.drive(
            10 * US,
            1000 * MS,
            |t| {
                let (flow, ecn) = if t % (90 * US) == 0 {
                    (0, Ecn::Ect0)
                } else if t % (250 * US) == 10 * US {
                    (1, Ecn::NotEct)
                } else if t % (300 * US) == 20 * US {
                    (2, Ecn::Ect1)
                } else {
                    return None;
                };
                seq += 1;
                Some(ecn_pkt(flow, seq, 1500, ecn))
            },
            |t| t % (100 * US) == 0,
        );
        h
    }

    #[test]
    fn without_ce_threshold_the_queue_behaves_as_before_it_existed() {
        // Off by default, as in Linux.
        let m = crate::qdisc::QUEUES.iter().find(|m| m.name == "fq_codel").unwrap();
        let p = CodelParams::from_params(&Params::resolve("q", m.params, &Default::default()).unwrap());
        assert_eq!(p, CodelParams { ecn: true, ..CodelParams::default() });
        // The overload gives the figures it gave before `ce_threshold` was added: 27 CoDel
        // marks, 23 CoDel drops, 10001 departures, the same packets at the same times
        // (a checksum over the departures).
        let h = overload(p);
        let out = h.steps.iter().filter_map(|s| s.out.map(|p| (s.now, p)));
        let sum = out.fold(0u64, |a, (now, p)| {
            a.wrapping_mul(1_000_003).wrapping_add(now ^ (p.seq << 20) ^ ((p.ecn as u64) << 60))
        });
        assert_eq!((h.marks, h.drops, h.early_drops(), h.departures), (27, 23, 23, 10001));
        assert_eq!(sum, 12_055_787_194_269_106_432);
        // A threshold that is never exceeded changes nothing, step for step; 1 ms does.
        assert_eq!(overload(CodelParams { ce_threshold: 10_000 * MS, ..p }).steps, h.steps);
        assert!(overload(CodelParams { ce_threshold: MS, ..p }).marks > 1000);
    }
}
