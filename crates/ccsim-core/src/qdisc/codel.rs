//! CoDel (Controlled Delay): RFC 8289, Nichols, Jacobson, McGregor, Iyengar, "Controlled Delay
//! Active Queue Management", 2018.
//!
//! The dequeue side follows the pseudocode of RFC 8289 §5 (`dodequeue`, `dequeue`,
//! `control_law`): the sojourn time of the head packet is compared with `target`; once it
//! has stayed at or above `target` for a whole `interval` the queue enters the dropping
//! state, drops one packet from the head and schedules the next drop at
//! `drop_next = t + interval / sqrt(count)`. On re-entry the RFC 8289 (Linux) count-reuse rule
//! applies: `count <- count - lastcount` when that difference exceeds 1 and the previous
//! episode ended less than 16 intervals ago (RFC 8289 §5 and Linux `codel_impl.h`; the 2012
//! ACM Queue article's pseudocode differs). `ok_to_drop`
//! uses the RFC's `now >= first_above_time` (Linux uses `>`), and the RFC's "queue below
//! one MTU" exception (`bytes() <= MAXPACKET`, parameter `mtu`) with the backlog counted
//! after the head packet has been removed, as RFC `bytes()` and Linux `codel_should_drop`.
//!
//! ECN (`ecn = true`) follows Linux `include/net/codel_impl.h`, since RFC 8289 gives no
//! pseudocode for it: where CoDel would drop an ECT packet it sets CE and delivers it
//! instead (the control law still advances); Not-ECT packets are dropped as usual.
//!
//! `ce_threshold` (off by default, as in Linux) is Linux's marking threshold for DCTCP-style
//! and L4S senders (`codel_impl.h`, the check at the end of `codel_dequeue` on
//! `vars->ldelay`; added to `sch_codel.c` and `sch_fq_codel.c` in Linux 4.2): the packet a
//! dequeue delivers, whatever the control law decided and whatever its state, is CE-marked
//! when its sojourn time is strictly above `ce_threshold` and it is ECN-capable (Linux
//! `INET_ECN_set_ce`; a Not-ECT packet is left alone, never dropped for it, and a packet
//! already CE is not counted again). It is independent of `ecn`, of `target` and of the
//! "below one MTU" exception (Linux sets `ldelay` before that test). The marks are the queue's
//! marks (Linux counts them apart, as `ce_mark`). The mark does not touch the control-law
//! state. `ce_threshold_ect1` restricts it to ECT(1) packets: FQ-CoDel's selector of Linux
//! 5.16 and later, see [`CodelParams::ce_threshold_ect1`]; `sch_codel` has no selector, so
//! the `codel` queue has only `ce_threshold`.
//!
//! The control law lives in [`CodelVars::dequeue`], generic over a [`PacketStore`], so that
//! FQ-CoDel runs the same code on each of its flow queues.
//!
//! Deliberate choices: `1/sqrt(count)` is computed in floating point rather than with
//! Linux's Newton iteration in Q0.32 (`codel_Newton_step` in `codel_impl.h`), so drop times
//! can differ from Linux by a nanosecond. Times are exact nanoseconds, where Linux keeps
//! CoDel's times (`ldelay`, `ce_threshold` included) in 1.024 us units (`CODEL_SHIFT`), so
//! a sojourn within about a microsecond of `ce_threshold` may be judged differently.
//! `ce_threshold = 0` means off here; in Linux "off" is a huge value (`CODEL_DISABLED_THRESHOLD`)
//! and 0 would mark every ECT packet that waited at all. Arrivals beyond `limit` are
//! tail-dropped (Linux `sch_codel`), as overflow.

use crate::registry::Randomness;

use super::fifo::Fifo;
use super::{DropReason, QdiscCtx, QueueDisc, QueueModel, VarSpec, VarUnit};
use crate::packet::{Ecn, Packet};
use crate::params::{ParamKind, ParamSpec, ParamValue, Params, Size};
use crate::sim::time::{secs, Time, MS};

/// `target`: RFC 8289 §4.4 (5 ms).
pub(crate) const TARGET_SPEC: ParamSpec = ParamSpec::new(
    "target",
    ParamKind::Time,
    Some(ParamValue::Int(5 * MS as i64)),
    "acceptable standing queue delay; RFC 8289 §4.4 default 5ms",
)
.range(0.0, 10e9);

/// `interval`: RFC 8289 §4.3 (100 ms).
pub(crate) const INTERVAL_SPEC: ParamSpec = ParamSpec::new(
    "interval",
    ParamKind::Time,
    Some(ParamValue::Int(100 * MS as i64)),
    "window over which the delay must stay above target before dropping; RFC 8289 §4.3 default 100ms",
)
.range(1.0, 100e9);

/// `mtu`: RFC 8289 MAXPACKET; 1514 B = 1500 B MTU + 14 B Ethernet header, as Linux `psched_mtu`.
pub(crate) const MTU_SPEC: ParamSpec = ParamSpec::new(
    "mtu",
    ParamKind::Bytes,
    Some(ParamValue::Int(1514)),
    "no drop while the backlog is at most this (RFC 8289 MAXPACKET); default 1514B (Linux psched_mtu)",
)
.range(0.0, 1e9);

/// `ecn`: off by default (RFC 8289 leaves it optional; Linux `codel` and ns-3 default off).
pub(crate) const ECN_SPEC: ParamSpec = ParamSpec::new(
    "ecn",
    ParamKind::Bool,
    Some(ParamValue::Bool(false)),
    "CE-mark ECT packets instead of dropping them (Linux codel default off)",
);

/// `limit`: tail drop beyond it (Linux `codel` default 1000 packets).
pub(crate) const LIMIT_SPEC: ParamSpec = ParamSpec::new(
    "limit",
    ParamKind::Size,
    Some(ParamValue::Size(Size::Packets(1000))),
    "buffer size in packets or bytes, tail drop beyond it; Linux codel default 1000p",
);

/// `ce_threshold`: Linux `codel` and `fq_codel`, disabled by default.
pub(crate) const CE_THRESHOLD_SPEC: ParamSpec = ParamSpec::new(
    "ce_threshold",
    ParamKind::Time,
    Some(ParamValue::Int(0)),
    "CE-mark every ECT packet whose sojourn time exceeds this, whatever CoDel's state (Linux ce_threshold, \
     for DCTCP and L4S senders); 0 = off, the Linux default",
)
.range(0.0, 10e9);

static PARAMS: &[ParamSpec] = &[TARGET_SPEC, INTERVAL_SPEC, MTU_SPEC, ECN_SPEC, LIMIT_SPEC, CE_THRESHOLD_SPEC];

/// Registration.
pub const MODEL: QueueModel = QueueModel {
    name: "codel",
    doc: "CoDel: drop from the head when the sojourn time stays above target for an interval (RFC 8289)",
    params: PARAMS,
    random: Randomness::Never,
    build: |p: &Params| Box::new(Codel::new(CodelParams::from_params(p), p.size("limit"))),
};

/// CoDel's configuration, shared by all the queues it controls (FQ-CoDel: all flows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodelParams {
    /// TARGET (ns).
    pub target: Time,
    /// INTERVAL (ns).
    pub interval: Time,
    /// MAXPACKET: no drop while the remaining backlog is at most this many bytes.
    pub mtu: u64,
    /// Mark ECT packets instead of dropping them.
    pub ecn: bool,
    /// Linux `ce_threshold` (ns): CE-mark a delivered ECT packet whose sojourn time is
    /// strictly above it, whatever the control law's state; 0: off.
    pub ce_threshold: Time,
    /// Apply `ce_threshold` to ECT(1) packets only. Linux `sch_fq_codel.c` (5.16 and later)
    /// compares the whole DS byte, masked, with a selector (`ce_threshold_mask`,
    /// `ce_threshold_selector`); the L4S setting is selector 0x1 under mask 0x3, the ECN
    /// bits equal to ECT(1). ccsim packets carry no DSCP, so only selectors on the ECN bits
    /// could be expressed; this flag is the L4S one, 0x1/0x3 (Not-ECT and CE packets cannot
    /// be marked anyway, and an ECT(0)-only selector is not offered). Mask 0x1 would select
    /// CE packets as well, which changes nothing.
    pub ce_threshold_ect1: bool,
}

impl CodelParams {
    /// From validated `target`, `interval`, `mtu` and `ecn` parameters, and `ce_threshold`
    /// and `ce_threshold_ect1` where the model has them (off otherwise).
    pub fn from_params(p: &Params) -> Self {
        CodelParams {
            target: p.uint("target"),
            interval: p.uint("interval"),
            mtu: p.uint("mtu"),
            ecn: p.bool("ecn"),
            ce_threshold: if p.has("ce_threshold") { p.uint("ce_threshold") } else { 0 },
            ce_threshold_ect1: p.has("ce_threshold_ect1") && p.bool("ce_threshold_ect1"),
        }
    }

    /// Whether `ce_threshold` applies to `pkt` after it waited `sojourn`: the end of Linux
    /// `codel_dequeue` (strictly above; the ECT(1) selector).
    fn above_ce_threshold(&self, pkt: &Packet, sojourn: Time) -> bool {
        self.ce_threshold > 0 && sojourn > self.ce_threshold && (!self.ce_threshold_ect1 || pkt.ecn == Ecn::Ect1)
    }
}

impl Default for CodelParams {
    /// RFC 8289 defaults: 5 ms, 100 ms; MAXPACKET 1514 B; no ECN; no `ce_threshold`.
    fn default() -> Self {
        CodelParams {
            target: 5 * MS,
            interval: 100 * MS,
            mtu: 1514,
            ecn: false,
            ce_threshold: 0,
            ce_threshold_ect1: false,
        }
    }
}

/// Where CoDel takes packets from: a FIFO of timestamped packets.
pub trait PacketStore {
    /// Remove and return the head packet.
    fn pop_head(&mut self) -> Option<Packet>;
    /// Bytes the MTU exception looks at, after the pop (RFC 8289 `bytes()`).
    fn backlog_bytes(&self) -> u64;
}

/// `t + interval / sqrt(count)` (RFC 8289 §5 `control_law`).
pub fn control_law(t: Time, interval: Time, count: u64) -> Time {
    // count >= 1 whenever the law is used; max(1) keeps a corrupted state from dividing by 0.
    let step = interval as f64 / (count.max(1) as f64).sqrt();
    t.saturating_add(step as Time)
}

/// Per-queue CoDel state, named as in RFC 8289 §5.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CodelVars {
    /// Time at which the sojourn time will have been above target for an interval (0: below).
    pub first_above_time: Time,
    /// Time of the next drop in the dropping state.
    pub drop_next: Time,
    /// Drops (or marks) since entering the dropping state, plus the reused count.
    pub count: u64,
    /// `count` right after the last entry into the dropping state.
    pub lastcount: u64,
    /// In the dropping state.
    pub dropping: bool,
}

/// CoDel's traceable variables (RFC 8289 §5 names), also FQ-CoDel's per-queue state.
pub static VARS: &[VarSpec] = &[
    VarSpec::new("count", VarUnit::Count, "drops (or marks) since entering the dropping state, plus the count reused (RFC 8289 count)"),
    VarSpec::new("lastcount", VarUnit::Count, "count just after the last entry into the dropping state (RFC 8289 lastcount)"),
    VarSpec::new("dropping", VarUnit::State, "1 in the dropping state, else 0 (RFC 8289 dropping)"),
    VarSpec::new(
        "drop_next",
        VarUnit::Seconds,
        "time of the next drop (or mark) in the dropping state, simulated time; kept from the last episode outside it (RFC 8289 drop_next)",
    ),
    VarSpec::new(
        "first_above_time",
        VarUnit::Seconds,
        "time at which the sojourn time will have stayed above target for an interval; 0 while below (RFC 8289 first_above_time)",
    ),
];

impl CodelVars {
    /// The value of variable `name` of [`VARS`].
    pub fn var(&self, name: &str) -> Option<f64> {
        Some(match name {
            "count" => self.count as f64,
            "lastcount" => self.lastcount as f64,
            "dropping" => u8::from(self.dropping) as f64,
            "drop_next" => secs(self.drop_next),
            "first_above_time" => secs(self.first_above_time),
            _ => return None,
        })
    }

    /// RFC 8289 `dodequeue`: take the head packet and say whether CoDel may drop it.
    fn dodequeue<S: PacketStore>(&mut self, p: &CodelParams, store: &mut S, now: Time) -> (Option<Packet>, bool) {
        let Some(pkt) = store.pop_head() else {
            // Empty queue: we cannot be above target.
            self.first_above_time = 0;
            return (None, false);
        };
        debug_assert!(pkt.enqueued_at <= now);
        let sojourn = now.saturating_sub(pkt.enqueued_at);
        let mut ok_to_drop = false;
        if sojourn < p.target || store.backlog_bytes() <= p.mtu {
            // Below target, or too little left to keep the link busy: not above.
            self.first_above_time = 0;
        } else if self.first_above_time == 0 {
            // Interval >= 1 ns, so this is never the "below" sentinel 0.
            self.first_above_time = now.saturating_add(p.interval);
        } else if now >= self.first_above_time {
            ok_to_drop = true;
        }
        (Some(pkt), ok_to_drop)
    }

    /// RFC 8289 `dequeue`: the next packet to send, after the drops (or marks) CoDel decides,
    /// then Linux's `ce_threshold` mark on it.
    pub fn dequeue<S: PacketStore>(&mut self, p: &CodelParams, store: &mut S, ctx: &mut QdiscCtx) -> Option<Packet> {
        let mut pkt = self.control(p, store, ctx);
        if let Some(head) = pkt.as_mut() {
            if p.above_ce_threshold(head, ctx.now.saturating_sub(head.enqueued_at)) {
                // Not-ECT: mark() changes nothing, and the packet goes on unmarked.
                ctx.mark(head);
            }
        }
        pkt
    }

    /// RFC 8289 `dequeue` proper: the control law's drops (or marks) and the packet left.
    fn control<S: PacketStore>(&mut self, p: &CodelParams, store: &mut S, ctx: &mut QdiscCtx) -> Option<Packet> {
        let now = ctx.now;
        let (mut pkt, mut ok_to_drop) = self.dodequeue(p, store, now);
        if self.dropping {
            if !ok_to_drop {
                // Sojourn time below target (or queue nearly empty): leave the dropping state.
                self.dropping = false;
            }
            // Several drops may be due at once when the backlog is large, hence the loop.
            while self.dropping && now >= self.drop_next {
                // ok_to_drop held, so there is a packet.
                let Some(mut head) = pkt.take() else {
                    debug_assert!(false, "dropping with no packet");
                    self.dropping = false;
                    break;
                };
                self.count = self.count.saturating_add(1);
                if p.ecn && ctx.mark(&mut head) {
                    // Linux: mark, schedule the next signal, deliver this packet.
                    self.drop_next = control_law(self.drop_next, p.interval, self.count);
                    pkt = Some(head);
                    break;
                }
                ctx.drop(head, DropReason::Early);
                (pkt, ok_to_drop) = self.dodequeue(p, store, now);
                if ok_to_drop {
                    self.drop_next = control_law(self.drop_next, p.interval, self.count);
                } else {
                    self.dropping = false;
                }
            }
        } else if ok_to_drop {
            // Above target for a whole interval: enter the dropping state with one drop (or mark).
            if let Some(mut head) = pkt.take() {
                if p.ecn && ctx.mark(&mut head) {
                    pkt = Some(head);
                } else {
                    ctx.drop(head, DropReason::Early);
                    (pkt, _) = self.dodequeue(p, store, now);
                }
            }
            self.dropping = true;
            // Count reuse (RFC 8289 §5, the Linux rule): if the last episode ended recently,
            // resume near the drop rate that controlled the queue then. `now - drop_next`
            // may be negative when the episode ended before its next scheduled drop.
            let delta = self.count.saturating_sub(self.lastcount);
            let since = now as i128 - self.drop_next as i128;
            self.count = if delta > 1 && since < 16 * p.interval as i128 { delta } else { 1 };
            self.drop_next = control_law(now, p.interval, self.count);
            self.lastcount = self.count;
        }
        pkt
    }
}

/// A single CoDel queue takes from the shared FIFO store; its whole backlog is `bytes()`.
impl PacketStore for Fifo {
    fn pop_head(&mut self) -> Option<Packet> {
        self.pop()
    }

    fn backlog_bytes(&self) -> u64 {
        self.bytes()
    }
}

/// A single CoDel queue with a tail-drop limit.
pub struct Codel {
    /// Configuration.
    pub params: CodelParams,
    /// Control-law state.
    pub vars: CodelVars,
    fifo: Fifo,
}

impl Codel {
    /// A CoDel queue with the given configuration and buffer limit.
    pub fn new(params: CodelParams, limit: Size) -> Self {
        Codel { params, vars: CodelVars::default(), fifo: Fifo::new(limit) }
    }
}

impl QueueDisc for Codel {
    fn enqueue(&mut self, pkt: Packet, ctx: &mut QdiscCtx) {
        self.fifo.push_or_drop(pkt, ctx);
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<Packet> {
        self.vars.dequeue(&self.params, &mut self.fifo, ctx)
    }

    fn len_packets(&self) -> usize {
        self.fifo.len()
    }

    fn len_bytes(&self) -> u64 {
        self.fifo.bytes()
    }

    fn vars(&self) -> &'static [VarSpec] {
        VARS
    }

    fn var(&self, name: &str) -> Option<f64> {
        self.vars.var(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::qdisc::testkit::{ecn_pkt, pkt, Harness};
    use crate::qdisc::QueueEventKind;
    use crate::sim::time::US;

    fn codel(p: CodelParams, limit_pkts: u64) -> Harness<Codel> {
        Harness::new(Codel::new(p, Size::Packets(limit_pkts)))
    }

    /// Arrivals of 1500 B packets every `a` us and dequeues every `d` us from time 0, on a
    /// 10 us grid: while nothing is dropped the m-th dequeue serves packet m, which waited
    /// m*(d - a) us.
    fn ramp(h: &mut Harness<Codel>, a: Time, d: Time, end: Time) {
        let mut seq = 0;
        h.drive(
            10 * US,
            end,
            |t| {
                (t % (a * US) == 0).then(|| {
                    seq += 1;
                    pkt(0, seq - 1, 1500)
                })
            },
            |t| t % (d * US) == 0,
        );
    }

    #[test]
    fn no_drop_while_sojourn_stays_below_target() {
        // Packet k arrives at k ms and leaves at k ms + 4.9 ms: sojourn 4.9 ms < 5 ms, with
        // four packets (> one MTU) left behind it. Two seconds, twenty intervals.
        let mut h = codel(CodelParams::default(), 1000);
        for k in 0..2000u64 {
            h.enqueue(k * MS, pkt(0, k, 1500));
            if k >= 4 {
                let out = h.dequeue((k - 4) * MS + 4_900 * US).unwrap();
                assert_eq!(out.seq, k - 4);
            }
        }
        assert_eq!(h.drops, 0);
        assert!(!h.disc.vars.dropping);
        // The same pattern 0.2 ms slower (sojourn 5.1 ms) does drop: the test can fail.
        let mut h = codel(CodelParams::default(), 1000);
        for k in 0..2000u64 {
            h.enqueue(k * MS, pkt(0, k, 1500));
            if k >= 5 {
                h.dequeue((k - 5) * MS + 5_100 * US);
            }
        }
        assert!(h.drops > 0);
    }

    #[test]
    fn ce_threshold_marks_ect_packets_above_it_with_or_without_ecn() {
        // Packet k (ECT(0) when k is even, else Not-ECT) arrives at k ms and leaves `sojourn`
        // later, for 2 s: below target, so CoDel itself never signals.
        let run = |p: CodelParams, sojourn: Time| {
            let mut h = codel(p, 1000);
            for k in 0..2000u64 {
                let ecn = if k % 2 == 0 { Ecn::Ect0 } else { Ecn::NotEct };
                h.enqueue(k * MS, ecn_pkt(0, k, 1500, ecn));
                if k >= 4 {
                    assert_eq!(h.dequeue((k - 4) * MS + sojourn).unwrap().seq, k - 4);
                }
            }
            assert_eq!(h.drops, 0);
            h.dequeue_events(QueueEventKind::Mark).iter().map(|e| e.seq).collect::<Vec<u64>>()
        };
        let p = CodelParams { ce_threshold: 3 * MS, ..CodelParams::default() };
        // At 3 ms: not above the threshold. At 3.5 ms: every ECT packet, whether CoDel's own
        // `ecn` is on or not (Linux `codel_dequeue` checks `ce_threshold` apart from it).
        assert!(run(p, 3 * MS).is_empty());
        let even: Vec<u64> = (0..1996).step_by(2).collect();
        assert_eq!(run(p, 3_500 * US), even);
        assert_eq!(run(CodelParams { ecn: true, ..p }, 3_500 * US), even);
        assert!(run(CodelParams::default(), 3_500 * US).is_empty());
    }

    #[test]
    fn first_drop_comes_one_interval_after_sojourn_first_reaches_target() {
        // Arrivals every 90 us, dequeues every 100 us: the m-th dequeue (at 100m us) serves
        // packet m with sojourn 10m us, which reaches 5 ms at m = 500, t1 = 50 ms. CoDel
        // must drop nothing before t1 + 100 ms = 150 ms and drop at exactly 150 ms (the
        // first dequeue with now >= first_above_time, RFC 8289).
        let mut h = codel(CodelParams::default(), 100_000);
        ramp(&mut h, 90, 100, 160 * MS);
        let drops = h.early_drop_times();
        assert_eq!(drops, vec![150 * MS]);
        // Until then the m-th dequeue delivered packet m.
        for s in h.steps.iter().filter(|s| s.now < 150 * MS) {
            assert_eq!(s.out.unwrap().seq, s.now / (100 * US));
        }
    }

    #[test]
    fn drop_spacing_follows_interval_over_sqrt_count() {
        // Same ramp, kept up for 2 s so that the sojourn never falls back. Entry at
        // T = 150 ms with count = 1 and drop_next = T + 100 ms; after the k-th drop of the
        // dropping state count = k + 1 and drop_next grows by interval/sqrt(k + 1). Each drop
        // happens at the first dequeue (100 us grid) at or after its drop_next.
        let mut h = codel(CodelParams::default(), 100_000);
        ramp(&mut h, 90, 100, 2000 * MS);
        let drops = h.early_drop_times();
        let grid = 100 * US;
        let mut expect = vec![150 * MS];
        let mut drop_next = 150 * MS + 100 * MS;
        let mut count = 1u64;
        while drop_next <= 2000 * MS {
            expect.push(drop_next.div_ceil(grid) * grid);
            count += 1;
            drop_next += (1e8 / (count as f64).sqrt()) as Time;
        }
        assert!(expect.len() > 20, "{}", expect.len());
        assert_eq!(drops, expect);
        assert!(h.disc.vars.dropping);
        assert_eq!(h.disc.vars.count, count);
    }

    #[test]
    fn traced_variables_are_the_control_law_state() {
        let read = |h: &Harness<Codel>| VARS.iter().map(|v| h.disc.var(v.name).unwrap()).collect::<Vec<_>>();
        let names: Vec<&str> = VARS.iter().map(|v| v.name).collect();
        assert_eq!(names, ["count", "lastcount", "dropping", "drop_next", "first_above_time"]);
        // The ramp of the test above: the sojourn reaches target at 50 ms, so at 100 ms CoDel
        // waits for first_above_time = 150 ms and has dropped nothing.
        let mut h = codel(CodelParams::default(), 100_000);
        ramp(&mut h, 90, 100, 100 * MS);
        assert_eq!(read(&h), [0.0, 0.0, 0.0, 0.0, 0.150]);
        // At 260 ms: entry at 150 ms (count 1, lastcount 1, drop_next 250 ms), the second
        // drop at 250 ms (count 2, drop_next = 250 ms + 100 ms / sqrt(2) = 320.710678 ms).
        let mut h = codel(CodelParams::default(), 100_000);
        ramp(&mut h, 90, 100, 260 * MS);
        assert_eq!(h.early_drop_times(), [150 * MS, 250 * MS]);
        assert_eq!(read(&h), [2.0, 1.0, 1.0, 0.320_710_678, 0.150]);
        assert_eq!(h.disc.var("len"), None, "every queue's variables are the wrapper's");
    }

    #[test]
    fn leaves_the_dropping_state_when_sojourn_falls_below_target() {
        // The ramp puts CoDel in the dropping state by 300 ms; then two dequeues per arrival
        // drain the backlog (still hundreds of packets, far above one MTU) and the head's
        // sojourn falls. The state must end at the first dequeue whose packet waited less
        // than 5 ms, and no drop may follow.
        let mut h = codel(CodelParams::default(), 100_000);
        ramp(&mut h, 90, 100, 300 * MS);
        assert!(h.disc.vars.dropping);
        let mut t = 300 * MS;
        let mut seq = 1_000_000;
        let mut left_at = None;
        while left_at.is_none() && t < 2000 * MS {
            t += 90 * US;
            h.enqueue(t, pkt(0, seq, 1500));
            seq += 1;
            for dt in [0, 45 * US] {
                let out = h.dequeue(t + dt).unwrap();
                let sojourn = t + dt - out.enqueued_at;
                assert!(h.disc.len_bytes() > 1514);
                if sojourn < 5 * MS {
                    assert!(!h.disc.vars.dropping, "still dropping with sojourn {sojourn}");
                    left_at = Some(t + dt);
                    break;
                }
                assert!(h.disc.vars.dropping, "left with sojourn {sojourn}");
            }
        }
        let left_at = left_at.expect("the sojourn fell below target");
        let n = h.drops;
        for _ in 0..100 {
            t += 90 * US;
            h.enqueue(t, pkt(0, seq, 1500));
            seq += 1;
            h.dequeue(t);
        }
        assert_eq!(h.drops, n, "drops after leaving at {left_at}");
    }

    #[test]
    fn a_backlog_of_at_most_one_mtu_is_never_dropped_from() {
        // Packet k arrives at 10k ms and leaves at 10k + 15 ms, when only packet k + 1
        // (1500 B <= 1514 B) remains behind it: a 15 ms sojourn for 2 s, yet no drop.
        let mut h = codel(CodelParams::default(), 1000);
        for k in 0..200u64 {
            h.enqueue(k * 10 * MS, pkt(0, k, 1500));
            if k >= 1 {
                h.dequeue((k - 1) * 10 * MS + 15 * MS);
            }
        }
        assert_eq!(h.drops, 0);
        // Contrast: the MTU set below one packet lets CoDel drop in the same pattern.
        let p = CodelParams { mtu: 1499, ..CodelParams::default() };
        let mut h = codel(p, 1000);
        for k in 0..200u64 {
            h.enqueue(k * 10 * MS, pkt(0, k, 1500));
            if k >= 1 {
                h.dequeue((k - 1) * 10 * MS + 15 * MS);
            }
        }
        assert!(h.drops > 0);
    }

    #[test]
    fn ecn_marks_ect_packets_and_still_drops_not_ect_ones() {
        // The ramp with alternate packets ECT(0) (flow 1) and Not-ECT (flow 0).
        let run = |ecn: bool| {
            let mut h = codel(CodelParams { ecn, ..CodelParams::default() }, 100_000);
            let mut seq = 0;
            h.drive(
                10 * US,
                1000 * MS,
                |t| {
                    (t % (90 * US) == 0).then(|| {
                        seq += 1;
                        let ecn = if seq % 2 == 1 { Ecn::Ect0 } else { Ecn::NotEct };
                        ecn_pkt((seq % 2) as u32, seq, 1500, ecn)
                    })
                },
                |t| t % (100 * US) == 0,
            );
            h
        };
        let h = run(true);
        let marks = h.dequeue_events(QueueEventKind::Mark);
        let drops = h.dequeue_events(QueueEventKind::EarlyDrop);
        assert!(marks.len() > 5, "{}", marks.len());
        assert!(!drops.is_empty());
        assert!(marks.iter().all(|e| e.flow == 1), "only ECT packets are marked");
        assert!(drops.iter().all(|e| e.flow == 0), "ECT packets are never dropped");
        let delivered_ce: Vec<Packet> = h.steps.iter().filter_map(|s| s.out).filter(|p| p.ecn == Ecn::Ce).collect();
        assert_eq!(delivered_ce.len(), marks.len());
        // Without ECN the same run drops packets of both kinds and marks none.
        let h = run(false);
        assert!(h.dequeue_events(QueueEventKind::Mark).is_empty());
        let drops = h.dequeue_events(QueueEventKind::EarlyDrop);
        assert!(drops.iter().any(|e| e.flow == 1) && drops.iter().any(|e| e.flow == 0));
    }

    /// A store of `n` 1500 B packets that all arrived at time 0.
    struct Old(u64);
    impl PacketStore for Old {
        fn pop_head(&mut self) -> Option<Packet> {
            (self.0 > 0).then(|| {
                self.0 -= 1;
                pkt(0, self.0, 1500)
            })
        }
        fn backlog_bytes(&self) -> u64 {
            self.0 * 1500
        }
    }

    #[test]
    fn reentry_reuses_the_count_only_soon_after_a_busy_episode() {
        // Not dropping, sojourn above target for an interval already (first_above_time in
        // the past): this dequeue enters the dropping state.
        let p = CodelParams::default();
        let now = 10_000 * MS;
        let enter = |count, lastcount, drop_next| {
            let mut v = CodelVars { first_above_time: now - 1, drop_next, count, lastcount, dropping: false };
            let mut rng = crate::sim::rng::Rng::stream(1, crate::sim::rng::Stream::Queue(0));
            let mut ev = Vec::new();
            let mut ctx = QdiscCtx::new(now, &mut rng, &mut ev);
            let out = v.dequeue(&p, &mut Old(100), &mut ctx);
            assert!(out.is_some());
            assert_eq!(ctx.early_drops, 1);
            assert!(v.dropping);
            assert_eq!(v.lastcount, v.count);
            assert_eq!(v.drop_next, control_law(now, p.interval, v.count));
            v.count
        };
        // delta = 10 - 4 = 6 > 1 and the last episode ended 50 ms ago: count = 6.
        assert_eq!(enter(10, 4, now - 50 * MS), 6);
        // drop_next still in the future (episode ended early): the difference is negative.
        assert_eq!(enter(10, 4, now + 50 * MS), 6);
        // 16 intervals or more ago: start afresh.
        assert_eq!(enter(10, 4, now - 1600 * MS), 1);
        assert_eq!(enter(10, 4, now - 1600 * MS + 1), 6);
        // delta = 1 is not reused.
        assert_eq!(enter(5, 4, now - 50 * MS), 1);
    }

    #[test]
    fn control_law_divides_the_interval_by_sqrt_count() {
        assert_eq!(control_law(1000, 100 * MS, 1), 1000 + 100 * MS);
        assert_eq!(control_law(0, 100 * MS, 4), 50 * MS);
        assert_eq!(control_law(0, 100 * MS, 2), 70_710_678);
        assert_eq!(control_law(Time::MAX - 1, 100 * MS, 1), Time::MAX);
    }

    #[test]
    fn arrivals_beyond_the_limit_are_tail_dropped_as_overflow() {
        let mut h = codel(CodelParams::default(), 5);
        for k in 0..8 {
            h.enqueue(0, pkt(0, k, 1000));
        }
        assert_eq!(h.enqueue_events().len(), 3);
        assert!(h.enqueue_events().iter().all(|e| e.kind == QueueEventKind::Overflow));
        let out: Vec<u64> = std::iter::from_fn(|| h.dequeue(MS)).map(|p| p.seq).collect();
        assert_eq!(out, vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn registered_and_built_from_defaults() {
        let m = crate::qdisc::QUEUES.iter().find(|m| m.name == "codel").unwrap();
        let p = Params::resolve("q", m.params, &Default::default()).unwrap();
        assert_eq!(CodelParams::from_params(&p), CodelParams::default());
        assert_eq!(p.size("limit"), Size::Packets(1000));
        assert_eq!(p.uint("ce_threshold"), 0);
    }
}
