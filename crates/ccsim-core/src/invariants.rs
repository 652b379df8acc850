//! Run-time invariants, checked in every run of a debug or test build and compiled
//! out of release builds (`cargo test` builds with debug assertions, so every Rust test run
//! checks them; the Python bindings are built in release mode and do not).
//!
//! | invariant | where | component named |
//! |---|---|---|
//! | time never goes backwards | event loop, per event ([`time_order`]) | the event |
//! | FIFO per link direction: packets leave a wire in the order they entered it, and at the arrival time they were given, which never decreases ([`Invariants::wire_enter`], [`Invariants::wire_leave`]) | engine, per packet | link direction (index and `from->to`) |
//! | queue identity `in = out + dropped + held`, per flow and in total; length within the discipline's limit (packets or bytes); an empty queue holds 0 bytes, so an unsigned counter cannot underflow unseen ([`QueueCheck`]) | `Queue` wrapper, after every operation | the queue's configuration field, e.g. `links[0].ab.queue` |
//! | per-flow packet conservation: `injected = arrived + lost + in queues + on wires (+ held elsewhere)` ([`flow_conservation`]) | every [`CONSERVATION_EVERY`] events and at the end of every `run_until` | the flow |
//! | cwnd never below its floor, one MSS (RFC 5681 §3.1's loss window, the smallest window any algorithm may leave) ([`cwnd_floor`]) | TCP sender, after every mutating CC hook and every event | the flow and the hook |
//! | TCP delivers bytes to the application in order and exactly once: each delivery starts where the previous one ended, and the total equals the in-order sequence minus the ISN ([`DeliveryCheck`]) | TCP receiver, every delivery | the flow |
//!
//! A violation panics with `invariant violated at t=<ns> ns in <component>: <what and the
//! values>`.
//!
//! Deliberate choices: the per-flow conservation check runs every 1024 events and at the end
//! of every `run_until` rather than after every event (it walks every queue and wire; the
//! per-queue identity, which is local, runs after every queue operation). Algorithm-specific
//! floors above one MSS (Vegas' two segments outside an RTO) are asserted in the algorithms'
//! own files; the sender checks the floor every algorithm shares. The wire check identifies a
//! packet by its header fields rather than a stamp (packets stay at most 96 bytes); two
//! packets identical in every one of them are interchangeable, so their order cannot matter.
//!
//! Stateless checks use `cfg!(debug_assertions)` (the branch folds away in release); checks
//! that keep state hold it in fields that exist only in debug builds, so the structures are
//! zero-sized in release and packets stay the same size.

#[cfg(debug_assertions)]
use std::collections::VecDeque;
use std::fmt::Display;

use crate::net::link::LinkDir;
use crate::packet::Packet;
use crate::params::Size;
use crate::qdisc::QueueEvent;
use crate::sim::queue::Event;
use crate::sim::time::Time;
use crate::stats::FlowStats;

/// Debug builds check per-flow conservation after every this many events (and at the end of
/// every `run_until`): it walks every queue and wire, so per event it would dominate a run.
pub const CONSERVATION_EVERY: u64 = 1024;

/// Fail loudly: the time, the component, the values.
#[cold]
#[inline(never)]
#[track_caller]
pub fn violation(now: Time, component: impl Display, what: impl Display) -> ! {
    panic!("invariant violated at t={now} ns in {component}: {what}")
}

/// The event loop is about to run `event` at `next` while the clock says `now`.
#[inline(always)]
pub fn time_order(now: Time, next: Time, event: &Event) {
    if cfg!(debug_assertions) && next < now {
        violation(
            now,
            format_args!("the event loop ({event:?})"),
            format_args!("time went backwards: next event at {next} ns < now {now} ns"),
        );
    }
}

/// The congestion window of flow `flow` after `hook` must be at least `floor` bytes.
#[inline(always)]
pub fn cwnd_floor(now: Time, flow: u32, hook: &str, cwnd: u64, floor: u64) {
    if cfg!(debug_assertions) && cwnd < floor {
        violation(
            now,
            format_args!("flow {flow} (TCP sender, after {hook})"),
            format_args!("cwnd {cwnd} B below its floor {floor} B"),
        );
    }
}

/// What identifies a packet on a wire without stamping the packet itself (packets stay
/// small): flow, kind, sequence, acknowledgement, send time and size.
#[cfg(debug_assertions)]
type PacketId = (u32, u8, u64, u64, Time, u32);

#[cfg(debug_assertions)]
fn packet_id(p: &Packet) -> PacketId {
    (p.flow, p.kind as u8, p.seq, p.ack, p.ts, p.size)
}

/// Debug-only side record of one wire: what entered it, in order.
#[cfg(debug_assertions)]
struct WireLog {
    name: String,
    entered: VecDeque<(u64, Time, PacketId)>,
    /// Packets that entered so far (numbers the entries).
    count: u64,
    /// Arrival time of the latest packet that entered.
    last_arrival: Time,
}

/// The engine's debug-only bookkeeping for the checks that need state; zero-sized in
/// release builds, where every method is an empty inline function.
#[derive(Default)]
pub struct Invariants {
    #[cfg(debug_assertions)]
    wires: Vec<WireLog>,
}

impl Invariants {
    /// Bookkeeping for the link directions `links` (indexed as the engine indexes them).
    pub fn new(links: &[LinkDir]) -> Self {
        #[cfg(debug_assertions)]
        {
            let wires = links
                .iter()
                .map(|l| WireLog { name: l.name.clone(), entered: VecDeque::new(), count: 0, last_arrival: 0 })
                .collect();
            Invariants { wires }
        }
        #[cfg(not(debug_assertions))]
        {
            let _ = links;
            Invariants {}
        }
    }

    /// `pkt` goes onto the wire of link direction `l` at `now`, to arrive at `arrive`.
    #[inline(always)]
    pub fn wire_enter(&mut self, l: usize, now: Time, arrive: Time, pkt: &Packet) {
        #[cfg(debug_assertions)]
        {
            let w = &mut self.wires[l];
            if arrive < now || arrive < w.last_arrival {
                violation(
                    now,
                    format_args!("link direction {l} ({})", w.name),
                    format_args!(
                        "FIFO order broken: packet (flow {}, seq {}) would arrive at {arrive} ns, before the previous packet ({} ns) or now",
                        pkt.flow, pkt.seq, w.last_arrival
                    ),
                );
            }
            w.last_arrival = arrive;
            w.entered.push_back((w.count, arrive, packet_id(pkt)));
            w.count += 1;
        }
        #[cfg(not(debug_assertions))]
        let _ = (l, now, arrive, pkt);
    }

    /// Link direction `l` went down and lost every packet on its wire: none of them leaves
    /// it, and the next packet to enter may arrive earlier than they would have.
    #[inline(always)]
    pub fn wire_clear(&mut self, l: usize) {
        #[cfg(debug_assertions)]
        {
            let w = &mut self.wires[l];
            w.entered.clear();
            w.last_arrival = 0;
        }
        #[cfg(not(debug_assertions))]
        let _ = l;
    }

    /// `pkt` leaves the wire of link direction `l` at `now`.
    #[inline(always)]
    pub fn wire_leave(&mut self, l: usize, now: Time, pkt: &Packet) {
        #[cfg(debug_assertions)]
        {
            let popped = self.wires[l].entered.pop_front();
            let name = &self.wires[l].name;
            let component = || format!("link direction {l} ({name})");
            match popped {
                None => violation(
                    now,
                    component(),
                    format_args!("packet (flow {}, seq {}) left a wire it never entered", pkt.flow, pkt.seq),
                ),
                Some((n, due, id)) => {
                    if id != packet_id(pkt) {
                        violation(
                            now,
                            component(),
                            format_args!(
                                "FIFO order broken: packet (flow {}, seq {}) left before entry #{n} (flow {}, seq {}), which entered earlier",
                                pkt.flow, pkt.seq, id.0, id.2
                            ),
                        );
                    }
                    if due != now {
                        violation(
                            now,
                            component(),
                            format_args!(
                                "packet (flow {}, seq {}) due at {due} ns arrived at {now} ns",
                                pkt.flow, pkt.seq
                            ),
                        );
                    }
                }
            }
        }
        #[cfg(not(debug_assertions))]
        let _ = (l, now, pkt);
    }
}

/// Per-flow packet conservation: for every flow, the packets it injected have arrived, been
/// dropped or lost, or are still in a queue, on a wire (`on_wires_now`: the packets the
/// wires hold), or in `elsewhere` (packets a node holds outside the link queues, e.g. during
/// a processing delay).
#[inline(always)]
pub fn flow_conservation<'a>(
    now: Time,
    seed: u64,
    flows: &[FlowStats],
    links: &[LinkDir],
    on_wires_now: impl Iterator<Item = &'a Packet>,
    elsewhere: impl Iterator<Item = &'a Packet>,
) {
    #[cfg(debug_assertions)]
    SCRATCH.with(|scratch| {
        // Reused counters: the check itself must not allocate in steady state (alloc_free.rs).
        let (on_wires, other) = &mut *scratch.borrow_mut();
        on_wires.clear();
        on_wires.resize(flows.len(), 0);
        other.clear();
        other.resize(flows.len(), 0);
        for p in on_wires_now {
            if let Some(c) = on_wires.get_mut(p.flow as usize) {
                *c += 1;
            }
        }
        for p in elsewhere {
            if let Some(c) = other.get_mut(p.flow as usize) {
                *c += 1;
            }
        }
        for (f, s) in flows.iter().enumerate() {
            let queued: u64 = links.iter().map(|l| l.queue.check.held(f)).sum();
            let accounted = s.total_arrived + s.total_lost + queued + on_wires[f] + other[f];
            if s.total_injected != accounted {
                violation(
                    now,
                    format_args!("flow {f}"),
                    format_args!(
                        "packet conservation: injected {} != arrived {} + lost {} + in queues {queued} + on wires {} + elsewhere {} (seed {seed})",
                        s.total_injected, s.total_arrived, s.total_lost, on_wires[f], other[f]
                    ),
                );
            }
        }
    });
    #[cfg(not(debug_assertions))]
    let _ = (now, seed, flows, links, on_wires_now, elsewhere);
}

#[cfg(debug_assertions)]
thread_local! {
    /// Per-flow counters of `flow_conservation` (on wires, elsewhere), kept between calls.
    static SCRATCH: std::cell::RefCell<(Vec<u64>, Vec<u64>)> = const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

/// The `Queue` wrapper's debug-only checks: which flows' packets it holds, and its limit.
/// Zero-sized in release builds.
#[derive(Clone, Debug, Default)]
pub struct QueueCheck {
    #[cfg(debug_assertions)]
    name: String,
    #[cfg(debug_assertions)]
    limit: Option<Size>,
    /// Per flow: packets held.
    #[cfg(debug_assertions)]
    held: Vec<u64>,
}

impl QueueCheck {
    /// Checks for the queue configured at `name` (e.g. `links[0].ab.queue`), whose
    /// discipline enforces `limit` (if it has one).
    pub fn new(name: &str, limit: Option<Size>) -> Self {
        #[cfg(debug_assertions)]
        {
            QueueCheck { name: name.to_string(), limit, held: Vec::new() }
        }
        #[cfg(not(debug_assertions))]
        {
            let _ = (name, limit);
            QueueCheck {}
        }
    }

    /// Packets of flow `f` held (always 0 in release builds).
    pub fn held(&self, f: usize) -> u64 {
        #[cfg(debug_assertions)]
        {
            self.held.get(f).copied().unwrap_or(0)
        }
        #[cfg(not(debug_assertions))]
        {
            let _ = f;
            0
        }
    }

    /// After one queue operation at `now`: `entered` was offered, `left` was handed to the
    /// link, `events` are the drops and marks it reported; the discipline now holds
    /// `pkts` packets and `bytes` bytes; the whole-run counters are `total_in`, `total_out`,
    /// `total_dropped`. `kind` names the discipline.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn after(
        &mut self,
        now: Time,
        kind: &str,
        entered: Option<&Packet>,
        left: Option<&Packet>,
        events: &[QueueEvent],
        (pkts, bytes): (usize, u64),
        (total_in, total_out, total_dropped): (u64, u64, u64),
    ) {
        #[cfg(debug_assertions)]
        {
            let component = || format!("queue {} ({kind})", self.name);
            if let Some(p) = entered {
                let f = p.flow as usize;
                if self.held.len() <= f {
                    self.held.resize(f + 1, 0);
                }
                self.held[f] += 1;
            }
            for (p, why) in left
                .map(|p| (p.flow, "left"))
                .into_iter()
                .chain(events.iter().filter(|e| e.kind.is_drop()).map(|e| (e.flow, "was dropped")))
            {
                match self.held.get_mut(p as usize).and_then(|h| h.checked_sub(1).map(|v| (h, v))) {
                    Some((h, v)) => *h = v,
                    None => violation(
                        now,
                        component(),
                        format_args!("a packet of flow {p} {why} but the queue held none of that flow"),
                    ),
                }
            }
            let held: u64 = self.held.iter().sum();
            if total_in != total_out + total_dropped + pkts as u64 || held != pkts as u64 {
                violation(
                    now,
                    component(),
                    format_args!(
                        "queue identity: in {total_in} != out {total_out} + dropped {total_dropped} + held {pkts} (per-flow count of held packets: {held})"
                    ),
                );
            }
            // Counters are unsigned: an underflow shows as bytes left in an empty queue.
            if pkts == 0 && bytes != 0 {
                violation(now, component(), format_args!("length counters disagree: {pkts} packets but {bytes} bytes"));
            }
            match self.limit {
                Some(Size::Packets(n)) if pkts as u64 > n => {
                    violation(now, component(), format_args!("length {pkts} packets above the limit {n} packets"))
                }
                Some(Size::Bytes(n)) if bytes > n => {
                    violation(now, component(), format_args!("length {bytes} B above the limit {n} B"))
                }
                _ => {}
            }
        }
        #[cfg(not(debug_assertions))]
        let _ = (now, kind, entered, left, events, pkts, bytes, total_in, total_out, total_dropped);
    }
}

/// The TCP receiver's delivery record: bytes reach the application in order, exactly once.
/// Zero-sized in release builds.
#[derive(Clone, Debug, Default)]
pub struct DeliveryCheck {
    /// One past the last byte delivered so far.
    #[cfg(debug_assertions)]
    delivered_to: u64,
    /// Bytes delivered so far, counted delivery by delivery.
    #[cfg(debug_assertions)]
    total: u64,
    /// Initial sequence number: the first byte of the stream.
    #[cfg(debug_assertions)]
    isn: u64,
}

impl DeliveryCheck {
    /// A stream whose first byte is `isn`.
    pub fn new(isn: u64) -> Self {
        #[cfg(debug_assertions)]
        {
            DeliveryCheck { delivered_to: isn, total: 0, isn }
        }
        #[cfg(not(debug_assertions))]
        {
            let _ = isn;
            DeliveryCheck {}
        }
    }

    /// Flow `flow`'s receiver hands bytes `[from, to)` to the application at `now`.
    #[inline(always)]
    pub fn deliver(&mut self, now: Time, flow: u32, from: u64, to: u64) {
        #[cfg(debug_assertions)]
        {
            let component = || format!("flow {flow} (TCP receiver)");
            if from != self.delivered_to {
                let what = if from < self.delivered_to { "delivered twice" } else { "skipped (a gap)" };
                violation(
                    now,
                    component(),
                    format_args!(
                        "in-order delivery broken: delivering [{from}, {to}) after [{}, {}): bytes {what}",
                        self.isn, self.delivered_to
                    ),
                );
            }
            if to < from {
                violation(now, component(), format_args!("delivered sequence went backwards: [{from}, {to})"));
            }
            self.total += to - from;
            self.delivered_to = to;
            if self.total != to - self.isn {
                violation(
                    now,
                    component(),
                    format_args!("delivered {} B != in-order sequence {to} - ISN {}", self.total, self.isn),
                );
            }
        }
        #[cfg(not(debug_assertions))]
        let _ = (now, flow, from, to);
    }
}

#[cfg(all(test, debug_assertions))]
mod tests {
    use super::*;
    use crate::packet::Kind;
    use crate::qdisc::{QdiscCtx, Queue, QueueDisc};
    use crate::sim::rng::{Rng, Stream};

    fn pkt(flow: u32, seq: u64, size: u32) -> Packet {
        Packet { flow, seq, size, payload: size, kind: Kind::TcpData, ..Packet::default() }
    }

    fn link(name: &str) -> LinkDir {
        LinkDir {
            name: name.to_string(),
            from: 0,
            to: 1,
            rate_bps: 1_000_000,
            delay: 10,
            loss: 0.0,
            queue: Queue::new(
                "droptail",
                Box::new(crate::qdisc::droptail::DropTail::packets(10)),
                Rng::stream(1, Stream::Queue(0)),
                0,
            ),
            busy_until: 0,
            last_tx: (0, 0),
            tx_pending: false,
            wire: Default::default(),
            rng: Rng::stream(1, Stream::Link(0)),
            tx_bytes: 0,
            busy_ns: 0,
            losses: 0,
            total_losses: 0,
            up: true,
            tx_event_while_down: false,
            last_arrival: 0,
        }
    }

    #[test]
    fn time_order_accepts_equal_and_later_times() {
        time_order(5, 5, &Event::Sample);
        time_order(5, 6, &Event::Sample);
    }

    #[test]
    #[should_panic(
        expected = "invariant violated at t=100 ns in the event loop (TxDone(3)): time went backwards: next event at 99 ns"
    )]
    fn time_going_backwards_fails_with_the_time_and_event() {
        time_order(100, 99, &Event::TxDone(3));
    }

    #[test]
    fn a_wire_in_fifo_order_passes() {
        let mut inv = Invariants::new(&[link("A->B")]);
        let (a, b) = (pkt(0, 0, 100), pkt(1, 7, 100));
        inv.wire_enter(0, 0, 10, &a);
        inv.wire_enter(0, 1, 10, &b); // same arrival time: allowed
        inv.wire_leave(0, 10, &a);
        inv.wire_leave(0, 10, &b);
    }

    #[test]
    #[should_panic(
        expected = "in link direction 0 (A->B): FIFO order broken: packet (flow 1, seq 7) left before entry #0 (flow 0, seq 0)"
    )]
    fn a_packet_overtaking_another_on_a_wire_fails() {
        let mut inv = Invariants::new(&[link("A->B")]);
        let (a, b) = (pkt(0, 0, 100), pkt(1, 7, 100));
        inv.wire_enter(0, 0, 10, &a);
        inv.wire_enter(0, 1, 11, &b);
        inv.wire_leave(0, 11, &b);
    }

    #[test]
    #[should_panic(
        expected = "FIFO order broken: packet (flow 0, seq 1) would arrive at 15 ns, before the previous packet (20 ns)"
    )]
    fn a_later_packet_scheduled_to_arrive_earlier_fails() {
        let mut inv = Invariants::new(&[link("A->B")]);
        inv.wire_enter(0, 0, 20, &pkt(0, 0, 100));
        inv.wire_enter(0, 5, 15, &pkt(0, 1, 100));
    }

    #[test]
    #[should_panic(expected = "due at 10 ns arrived at 12 ns")]
    fn a_packet_arriving_late_fails() {
        let mut inv = Invariants::new(&[link("A->B")]);
        inv.wire_enter(0, 0, 10, &pkt(0, 0, 100));
        inv.wire_leave(0, 12, &pkt(0, 0, 100));
    }

    fn stats(injected: u64, arrived: u64, lost: u64) -> FlowStats {
        FlowStats { total_injected: injected, total_arrived: arrived, total_lost: lost, ..FlowStats::default() }
    }

    #[test]
    fn conservation_counts_packets_in_queues_on_wires_and_elsewhere() {
        let mut l = link("A->B");
        let mut ev = Vec::new();
        l.queue.enqueue(0, pkt(1, 0, 100), &mut ev);
        let on_wire = [pkt(0, 0, 100)];
        let held = [pkt(1, 1, 100)];
        // Flow 0: 4 injected = 2 arrived + 1 lost + 1 on the wire; flow 1: 2 = 1 queued + 1 held.
        flow_conservation(5, 1, &[stats(4, 2, 1), stats(2, 0, 0)], &[l], on_wire.iter(), held.iter());
    }

    #[test]
    #[should_panic(
        expected = "in flow 0: packet conservation: injected 3 != arrived 4 + lost 0 + in queues 0 + on wires 0 + elsewhere 0 (seed 9)"
    )]
    fn a_packet_charged_to_the_wrong_flow_fails_even_if_the_totals_balance() {
        // Flow 0 counts an arrival of flow 1 as its own: the global totals agree
        // (5 injected = 4 arrived + 1 queued), per flow they do not.
        let mut l = link("A->B");
        let mut ev = Vec::new();
        l.queue.enqueue(0, pkt(1, 0, 100), &mut ev);
        let flows = [stats(3, 4, 0), stats(2, 0, 0)];
        let global: u64 = flows.iter().map(|s| s.total_injected).sum();
        assert_eq!(global, flows.iter().map(|s| s.total_arrived).sum::<u64>() + 1);
        flow_conservation(7, 9, &flows, &[l], std::iter::empty(), std::iter::empty());
    }

    /// A discipline that ignores its limit, or corrupts its byte count.
    struct Broken {
        held: std::collections::VecDeque<Packet>,
        bytes_offset: u64,
        rogue_drop: bool,
    }

    impl QueueDisc for Broken {
        fn enqueue(&mut self, pkt: Packet, ctx: &mut QdiscCtx) {
            if self.rogue_drop {
                // Reports a drop of another flow's packet, and keeps the arrival.
                ctx.drop(Packet { flow: pkt.flow + 1, ..pkt }, crate::qdisc::DropReason::Early);
                self.held.push_back(pkt);
                self.held.pop_front();
                return;
            }
            self.held.push_back(pkt);
        }
        fn dequeue(&mut self, _: &mut QdiscCtx) -> Option<Packet> {
            self.held.pop_front()
        }
        fn len_packets(&self) -> usize {
            self.held.len()
        }
        fn len_bytes(&self) -> u64 {
            self.held.iter().map(|p| p.size as u64).sum::<u64>().wrapping_sub(self.bytes_offset)
        }
    }

    fn broken(limit: Option<Size>, bytes_offset: u64, rogue_drop: bool) -> Queue {
        let disc = Broken { held: Default::default(), bytes_offset, rogue_drop };
        Queue::new("broken", Box::new(disc), Rng::stream(1, Stream::Queue(0)), 0)
            .with_checks("links[2].ba.queue", limit)
    }

    #[test]
    fn a_queue_within_its_limit_passes() {
        let mut q = broken(Some(Size::Packets(2)), 0, false);
        let mut ev = Vec::new();
        q.enqueue(0, pkt(0, 0, 100), &mut ev);
        q.enqueue(1, pkt(3, 0, 100), &mut ev);
        assert_eq!((q.check.held(0), q.check.held(3)), (1, 1));
        q.dequeue(2, &mut ev);
        assert_eq!(q.check.held(0), 0);
    }

    #[test]
    #[should_panic(
        expected = "invariant violated at t=3 ns in queue links[2].ba.queue (broken): length 3 packets above the limit 2 packets"
    )]
    fn a_queue_above_its_packet_limit_fails() {
        let mut q = broken(Some(Size::Packets(2)), 0, false);
        let mut ev = Vec::new();
        for t in 1..=3 {
            q.enqueue(t, pkt(0, t, 100), &mut ev);
        }
    }

    #[test]
    #[should_panic(expected = "length 300 B above the limit 250 B")]
    fn a_queue_above_its_byte_limit_fails() {
        let mut q = broken(Some(Size::Bytes(250)), 0, false);
        let mut ev = Vec::new();
        for t in 1..=3 {
            q.enqueue(t, pkt(0, t, 100), &mut ev);
        }
    }

    #[test]
    #[should_panic(expected = "length counters disagree: 0 packets but 18446744073709551516 bytes")]
    fn a_byte_counter_that_underflows_fails() {
        let mut q = broken(None, 100, false);
        let mut ev = Vec::new();
        q.enqueue(1, pkt(0, 0, 100), &mut ev);
        q.dequeue(2, &mut ev);
    }

    #[test]
    #[should_panic(expected = "a packet of flow 1 was dropped but the queue held none of that flow")]
    fn a_queue_dropping_a_packet_it_never_held_fails() {
        let mut q = broken(None, 0, true);
        let mut ev = Vec::new();
        q.enqueue(1, pkt(0, 0, 100), &mut ev);
    }

    #[test]
    #[should_panic(expected = "in flow 4 (TCP sender, after cc.on_ack): cwnd 999 B below its floor 1000 B")]
    fn a_window_below_one_segment_fails() {
        cwnd_floor(50, 4, "cc.on_ack", 999, 1000);
    }

    #[test]
    fn in_order_deliveries_pass() {
        let mut d = DeliveryCheck::new(0);
        d.deliver(1, 0, 0, 1000);
        d.deliver(2, 0, 1000, 1000); // nothing new
        d.deliver(3, 0, 1000, 5000);
    }

    #[test]
    #[should_panic(
        expected = "in flow 2 (TCP receiver): in-order delivery broken: delivering [500, 2000) after [0, 1000): bytes delivered twice"
    )]
    fn delivering_bytes_twice_fails() {
        let mut d = DeliveryCheck::new(0);
        d.deliver(1, 2, 0, 1000);
        d.deliver(2, 2, 500, 2000);
    }

    #[test]
    #[should_panic(expected = "bytes skipped (a gap)")]
    fn delivering_past_a_gap_fails() {
        let mut d = DeliveryCheck::new(0);
        d.deliver(1, 2, 0, 1000);
        d.deliver(2, 2, 2000, 3000);
    }

    #[test]
    #[should_panic(expected = "delivered sequence went backwards: [1000, 900)")]
    fn a_delivered_sequence_going_backwards_fails() {
        let mut d = DeliveryCheck::new(0);
        d.deliver(1, 2, 0, 1000);
        d.deliver(2, 2, 1000, 900);
    }
}
