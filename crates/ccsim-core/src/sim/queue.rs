//! The event queue: the pending events as a calendar queue (a timing wheel; Brown 1988,
//! "Calendar queues", CACM 31(10); Varghese & Lauck 1987, "Hashed and hierarchical timing
//! wheels"), popped in exactly (time, insertion sequence) order.
//!
//! Why a calendar: nearly every event of a packet simulation is scheduled a link's delay or
//! a transmission time ahead (microseconds to tens of milliseconds). Time is cut into
//! buckets of 2^[`SHIFT`] ns; the [`SLOTS`] buckets after the current one are slots of a
//! wheel, each an unordered list, with a bitmap of the non-empty ones. A push into the wheel
//! is a list insertion; when the current bucket is used up, the next non-empty one (a bitmap
//! scan) is sorted, once, by key, and popped in order. Events beyond the wheel's horizon
//! (timers: retransmission timeouts, delayed ACKs) wait in an outer wheel of coarse buckets
//! ([`COARSE_SHIFT`]), each moved into the wheel when the cursor reaches the coarse bucket
//! before it (the hierarchical wheel of Varghese & Lauck); the rare events beyond the outer
//! wheel's horizon wait in a binary heap and join their bucket when it becomes current. A
//! timer thus costs a list insertion and one move instead of a heap's logarithmic sift
//! through memory that hundreds of flows keep cold. Entries pushed for the current bucket
//! (or an earlier one: the engine never schedules into the past, but a `pop_until` that
//! found nothing due may have moved the calendar ahead of the engine's clock) go straight
//! into its sorted list.
//! It replaced a 4-ary heap (about 200 instructions per pop on the benchmark); a compact heap
//! tuned in the same round cost about the same as this calendar, which was kept as the
//! simpler of the two (docs/performance.md).
//!
//! Order: the key is `time << 64 | seq` with a sequence number that grows with every push,
//! so keys are unique and sorting a bucket by key gives exactly (time, insertion) order,
//! which is what makes a run a pure function of its configuration and seed.
//!
//! Events are small `Copy` values; packets never travel inside events (they wait in queues
//! and on the wire, see `net::link`).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::time::Time;

/// Something that happens at a point in simulated time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A link direction finished serializing a packet and may start the next one.
    TxDone(u32),
    /// The packet at the head of a link direction's wire reaches the far end.
    Arrive {
        /// Link direction index.
        link: u32,
        /// The packet's slot in the engine's packet pool.
        slot: u32,
        /// Where the packet goes from the far end (see `Simulation::next_hop`). Slot and hop
        /// are known when the packet enters the wire; the event carries them so that the
        /// engine can ask for their memory while it runs the event before.
        hop: u32,
    },
    /// A timer of an endpoint (sender or receiver of a flow) may be due.
    Endpoint {
        /// Endpoint index.
        endpoint: u32,
        /// Which arming of the timer this is; stale tokens are ignored.
        token: u32,
    },
    /// A timer of a queue discipline (e.g. PIE's probability update) may be due.
    Queue {
        /// Link direction index.
        link: u32,
        /// Which arming of the timer this is.
        token: u32,
    },
    /// Time to record one row of the sampled time series.
    Sample,
    /// The sensor of a control loop (by index) samples its plant.
    Control(u32),
    /// The packet at the head of a node's processing stage (by node index) is released.
    Process(u32),
    /// A scheduled change of a link (`LinkSpec::schedule`) happens: the index of the change
    /// in the engine's list of them (`engine/dynamic.rs`).
    LinkChange(u32),
    /// A flow of a workload (by index) arrives (`workload.rs`).
    Arrival(u32),
}

impl Event {
    /// The event as 128 bits: a tag and up to three 32-bit fields. The queue stores and moves
    /// events in this form because a `u128` travels in two registers. An `Event` argument
    /// is passed through memory, written field by field by the caller and read back whole by
    /// the callee, and such a read cannot be served from the pending narrower writes: the
    /// load waited for them to reach the cache on every push.
    #[inline(always)]
    fn pack(self) -> u128 {
        let (tag, a, b, c) = match self {
            Event::TxDone(l) => (0, l, 0, 0),
            Event::Arrive { link, slot, hop } => (1, link, slot, hop),
            Event::Endpoint { endpoint, token } => (2, endpoint, token, 0),
            Event::Queue { link, token } => (3, link, token, 0),
            Event::Sample => (4, 0, 0, 0),
            Event::Control(l) => (5, l, 0, 0),
            Event::Process(n) => (6, n, 0, 0),
            Event::LinkChange(k) => (7, k, 0, 0),
            Event::Arrival(w) => (8, w, 0, 0),
        };
        tag as u128 | (a as u128) << 32 | (b as u128) << 64 | (c as u128) << 96
    }

    /// The inverse of [`Event::pack`].
    #[inline(always)]
    fn unpack(bits: u128) -> Event {
        let field = |i: u32| (bits >> (32 * i)) as u32;
        match field(0) {
            0 => Event::TxDone(field(1)),
            1 => Event::Arrive { link: field(1), slot: field(2), hop: field(3) },
            2 => Event::Endpoint { endpoint: field(1), token: field(2) },
            3 => Event::Queue { link: field(1), token: field(2) },
            4 => Event::Sample,
            5 => Event::Control(field(1)),
            6 => Event::Process(field(1)),
            7 => Event::LinkChange(field(1)),
            tag => {
                debug_assert_eq!(tag, 8, "not a packed event");
                Event::Arrival(field(1))
            }
        }
    }
}

/// log2 of the bucket width in ns (65.5 us). Measured on the benchmark dumbbell (callgrind,
/// 10 and 900 flows at 100 Mbit/s, 90 flows at 10 Gbit/s): widths from 1 us to 262 us all
/// beat the heap; 65-262 us cost the fewest instructions, even at 10 Gbit/s where a bucket
/// holds dozens of events, and 65 us with a small wheel ran fastest.
const SHIFT: u32 = 16;
/// Buckets in the wheel (a horizon of 67 ms ahead of the current bucket: link delays; the
/// timers beyond it are few). Heads and bitmap fit in 4 KB.
const SLOTS: usize = 1 << 10;
/// Words of the occupancy bitmap.
const WORDS: usize = SLOTS / 64;
/// log2 of the buckets in a coarse bucket (33.5 ms): half the wheel, so that the coarse bucket
/// after the current one always lies within the wheel's horizon.
const COARSE_SHIFT: u32 = 9;
/// Coarse buckets in the outer wheel (a horizon of 34 s: retransmission and delayed-ACK
/// timers).
const COARSE_SLOTS: usize = 1 << 10;
const COARSE_WORDS: usize = COARSE_SLOTS / 64;
/// End of a slot's list.
const NIL: u32 = u32::MAX;

/// A pending event; `key` is `time << 64 | seq`, `event` the event packed ([`Event::pack`]).
#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u128,
    event: u128,
}

impl Entry {
    #[inline]
    fn time(&self) -> Time {
        (self.key >> 64) as Time
    }
    #[inline]
    fn bucket(&self) -> u64 {
        self.time() >> SHIFT
    }
}

/// An entry beyond the wheel's horizon, ordered by key alone.
#[derive(Clone, Copy, Debug)]
struct Far(Entry);

impl PartialEq for Far {
    fn eq(&self, other: &Self) -> bool {
        self.0.key == other.0.key
    }
}
impl Eq for Far {}
impl PartialOrd for Far {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Far {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.key.cmp(&other.0.key)
    }
}

/// A wheel entry: one link of a slot's list, in a pool of reused nodes.
#[derive(Clone, Copy, Debug)]
struct Node {
    entry: Entry,
    next: u32,
}

/// Pending events.
#[derive(Debug)]
pub struct EventQueue {
    /// The bucket whose entries are in `current`.
    cursor: u64,
    /// Entries of buckets up to `cursor`, sorted by key from largest to smallest (popped
    /// from the end).
    current: Vec<Entry>,
    /// Per slot: the first node of its list, or `NIL`. Slot `b % SLOTS` holds bucket `b`,
    /// for buckets in `(cursor, cursor + SLOTS)`.
    heads: Box<[u32; SLOTS]>,
    /// One bit per slot: its list is not empty.
    occupied: Box<[u64; WORDS]>,
    /// Entries in the wheel.
    in_wheel: usize,
    /// The node pool; free nodes are chained from `free`.
    nodes: Vec<Node>,
    free: u32,
    /// The outer wheel: per coarse slot, an unordered list of the entries of coarse bucket
    /// `cb` (bucket `>> COARSE_SHIFT`), for `cb` in `(coarse_cursor, coarse_cursor +
    /// COARSE_SLOTS)`, in the same node pool. Coarse buckets up to `coarse_cursor` have
    /// been moved into the wheel.
    coarse_heads: Box<[u32; COARSE_SLOTS]>,
    coarse_occupied: Box<[u64; COARSE_WORDS]>,
    in_coarse: usize,
    coarse_cursor: u64,
    /// The first bucket of the coarse bucket before the outer wheel's first non-empty one
    /// (`u64::MAX` when it is empty): once the cursor gets there, that coarse bucket lies
    /// within the wheel's horizon and must join it.
    coarse_due: u64,
    /// Entries beyond the outer wheel's horizon when they were pushed.
    far: BinaryHeap<Reverse<Far>>,
    next_seq: u64,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl EventQueue {
    /// An empty queue.
    pub fn new() -> Self {
        EventQueue {
            cursor: 0,
            current: Vec::new(),
            heads: Box::new([NIL; SLOTS]),
            occupied: Box::new([0; WORDS]),
            in_wheel: 0,
            nodes: Vec::new(),
            free: NIL,
            coarse_heads: Box::new([NIL; COARSE_SLOTS]),
            coarse_occupied: Box::new([0; COARSE_WORDS]),
            in_coarse: 0,
            coarse_cursor: 1,
            coarse_due: u64::MAX,
            far: BinaryHeap::new(),
            next_seq: 0,
        }
    }

    /// Schedule `event` at `time`.
    #[inline(always)]
    pub fn push(&mut self, time: Time, event: Event) {
        self.push_packed(time, event.pack());
    }

    #[inline]
    fn push_packed(&mut self, time: Time, event: u128) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let entry = Entry { key: (time as u128) << 64 | seq as u128, event };
        let bucket = time >> SHIFT;
        if bucket <= self.cursor {
            // Most keys pushed here are the largest so far: the position is near the front.
            let at = self.current.partition_point(|e| e.key > entry.key);
            self.current.insert(at, entry);
        } else if bucket - self.cursor < SLOTS as u64 {
            let slot = bucket as usize & (SLOTS - 1);
            let i = self.new_node(Node { entry, next: self.heads[slot] });
            self.heads[slot] = i;
            self.occupied[slot / 64] |= 1 << (slot % 64);
            self.in_wheel += 1;
        } else {
            self.push_beyond(entry);
        }
    }

    /// A node of the pool holding `node`: the one freed last, which is likely still cached.
    #[inline(always)]
    fn new_node(&mut self, node: Node) -> u32 {
        if self.free != NIL {
            let i = self.free;
            self.free = self.nodes[i as usize].next;
            self.nodes[i as usize] = node;
            i
        } else {
            self.nodes.push(node);
            (self.nodes.len() - 1) as u32
        }
    }

    /// An entry beyond the wheel's horizon: into the outer wheel, or the heap beyond that.
    #[cold]
    #[inline(never)]
    fn push_beyond(&mut self, entry: Entry) {
        let coarse = entry.bucket() >> COARSE_SHIFT;
        debug_assert!(coarse > self.coarse_cursor, "an entry beyond the wheel in a coarse bucket already moved");
        if coarse - self.coarse_cursor < COARSE_SLOTS as u64 {
            let slot = coarse as usize & (COARSE_SLOTS - 1);
            let i = self.new_node(Node { entry, next: self.coarse_heads[slot] });
            self.coarse_heads[slot] = i;
            self.coarse_occupied[slot / 64] |= 1 << (slot % 64);
            self.in_coarse += 1;
            self.coarse_due = self.coarse_due.min((coarse - 1) << COARSE_SHIFT);
        } else {
            self.far.push(Reverse(Far(entry)));
        }
    }

    /// Remove and return the earliest pending event if it is due at or before `end` (finding
    /// that it is not may move the calendar to its bucket).
    #[inline]
    pub fn pop_until(&mut self, end: Time) -> Option<(Time, Event)> {
        if self.current.is_empty() && !self.advance() {
            return None;
        }
        let e = self.current.last()?;
        if e.time() > end {
            return None;
        }
        self.current.pop().map(|e| (e.time(), Event::unpack(e.event)))
    }

    /// The event `pop_until` would return next, if it is already in the current bucket
    /// (a hint for prefetching; `None` says nothing about what is pending).
    #[inline]
    pub fn peek_current(&self) -> Option<Event> {
        self.current.last().map(|e| Event::unpack(e.event))
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.current.len() + self.in_wheel + self.in_coarse + self.far.len()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `current` is empty: make the next non-empty bucket current and sort it. False when
    /// nothing is pending.
    #[cold]
    fn advance(&mut self) -> bool {
        let (wheel, bucket) = loop {
            let wheel = self.next_occupied();
            let far = self.far.peek().map(|Reverse(Far(e))| e.bucket());
            let near = match (wheel, far) {
                (Some(w), Some(f)) => Some(w.min(f)),
                (w, f) => w.or(f),
            };
            match near {
                Some(b) if b < self.coarse_due => break (wheel, b),
                None if self.coarse_due == u64::MAX => return false,
                _ => {}
            }
            // The outer wheel's first non-empty coarse bucket must join the wheel before the
            // cursor gets to `near`; if its entries may come before `near`, the cursor
            // moves to just before them (nothing is pending in between) and looks again.
            let first = self.coarse_due + (1 << COARSE_SHIFT);
            debug_assert!(self.coarse_due > self.cursor);
            match near {
                Some(b) if b < first => {
                    self.cursor = b;
                    self.move_coarse();
                    break (wheel, b);
                }
                _ => {
                    self.cursor = first - 1;
                    self.move_coarse();
                }
            }
        };
        self.cursor = bucket;
        if wheel == Some(bucket) {
            let slot = bucket as usize & (SLOTS - 1);
            let mut i = std::mem::replace(&mut self.heads[slot], NIL);
            self.occupied[slot / 64] &= !(1 << (slot % 64));
            while i != NIL {
                let node = self.nodes[i as usize];
                self.current.push(node.entry);
                self.in_wheel -= 1;
                self.nodes[i as usize].next = self.free;
                self.free = i;
                i = node.next;
            }
        }
        while let Some(Reverse(Far(e))) = self.far.peek() {
            if e.bucket() != bucket {
                break;
            }
            self.current.push(e.to_owned());
            self.far.pop();
        }
        // A few entries (dozens at 10 Gbit/s), mostly pushed in time order: an insertion
        // sort, largest key first.
        let c = &mut self.current[..];
        for i in 1..c.len() {
            let e = c[i];
            let mut j = i;
            while j > 0 && c[j - 1].key < e.key {
                c[j] = c[j - 1];
                j -= 1;
            }
            c[j] = e;
        }
        true
    }

    /// Move the coarse buckets up to the one after the cursor's into the wheel (each lies
    /// within its horizon, a coarse bucket being half the wheel), before any of their entries
    /// can be due.
    #[inline(never)]
    fn move_coarse(&mut self) {
        let to = (self.cursor >> COARSE_SHIFT) + 1;
        while let Some(c) = self.next_coarse().filter(|&c| c <= to) {
            let slot = c as usize & (COARSE_SLOTS - 1);
            let mut i = std::mem::replace(&mut self.coarse_heads[slot], NIL);
            self.coarse_occupied[slot / 64] &= !(1 << (slot % 64));
            while i != NIL {
                let next = self.nodes[i as usize].next;
                let bucket = self.nodes[i as usize].entry.bucket();
                debug_assert!(bucket > self.cursor && bucket - self.cursor < SLOTS as u64);
                let fine = bucket as usize & (SLOTS - 1);
                self.nodes[i as usize].next = self.heads[fine];
                self.heads[fine] = i;
                self.occupied[fine / 64] |= 1 << (fine % 64);
                self.in_coarse -= 1;
                self.in_wheel += 1;
                i = next;
            }
        }
        self.coarse_cursor = to;
        self.coarse_due = self.next_coarse().map_or(u64::MAX, |c| (c - 1) << COARSE_SHIFT);
    }

    /// The first coarse bucket after `coarse_cursor` with entries in the outer wheel.
    fn next_coarse(&self) -> Option<u64> {
        first_after(&self.coarse_occupied[..], self.coarse_cursor, self.in_coarse)
    }

    /// The first bucket after `cursor` with entries in the wheel.
    #[inline]
    fn next_occupied(&self) -> Option<u64> {
        first_after(&self.occupied[..], self.cursor, self.in_wheel)
    }
}

/// In a wheel whose occupancy bitmap is `bits` (one bit per slot, a power of two of them),
/// holding `entries`, the first bucket after `cursor` with entries (bucket `b` is in slot
/// `b % slots`, buckets `cursor + 1 ..= cursor + slots` are in the wheel).
#[inline]
fn first_after(bits: &[u64], cursor: u64, entries: usize) -> Option<u64> {
    if entries == 0 {
        return None;
    }
    let slots = bits.len() * 64;
    let start = (cursor + 1) as usize & (slots - 1);
    let mut word = start / 64;
    let mut set = bits[word] & (!0u64 << (start % 64));
    // One word more than there are: the first is visited again at the end for the slots
    // below `start`.
    for _ in 0..=bits.len() {
        if set != 0 {
            let slot = word * 64 + set.trailing_zeros() as usize;
            return Some(cursor + 1 + ((slot + slots - start) & (slots - 1)) as u64);
        }
        word = (word + 1) % bits.len();
        set = bits[word];
    }
    debug_assert!(false, "{entries} entries in a wheel but no slot occupied");
    None
}

/// A re-armable timer over the event queue with lazy cancellation.
///
/// Re-arming to a later deadline (an RTO restarted on every ACK) pushes nothing: the pending
/// event fires at the old time, sees the later deadline and re-schedules itself. Re-arming
/// to an earlier deadline pushes a new event with a new token, and the old one is ignored.
/// So a timer costs at most one live heap entry per arming, never one per restart.
///
/// 24 bytes (`NEVER` stands for "none"), so that the engine keeps it in one cache line with
/// the endpoint it belongs to.
#[derive(Clone, Copy, Debug)]
pub struct Timer {
    /// The deadline, or `NEVER`.
    deadline: Time,
    /// Time of the live event, or `NEVER` when none is pending.
    pending_at: Time,
    /// Token of the live event.
    pending_token: u32,
    /// The latest token handed out.
    token: u32,
}

/// "None" for a timer's times: no event runs at the end of `u64` time.
const NEVER: Time = Time::MAX;

impl Default for Timer {
    fn default() -> Self {
        Timer { deadline: NEVER, pending_at: NEVER, pending_token: 0, token: 0 }
    }
}

/// What the owner of a timer must do after arming it or when its event fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerAction {
    /// Nothing.
    None,
    /// Push an event at this time carrying this token.
    Schedule(Time, u32),
    /// The deadline has come: run the timer's work.
    Fire,
}

impl Timer {
    /// Set the deadline (or cancel with `None`).
    pub fn set(&mut self, deadline: Option<Time>) -> TimerAction {
        let Some(d) = deadline else {
            self.deadline = NEVER;
            return TimerAction::None;
        };
        self.deadline = d;
        if self.pending_at <= d {
            return TimerAction::None; // the live event comes first and re-schedules itself
        }
        self.token = self.token.wrapping_add(1);
        self.pending_at = d;
        self.pending_token = self.token;
        TimerAction::Schedule(d, self.token)
    }

    /// The timer's event with `token` fired at `now`.
    pub fn fired(&mut self, now: Time, token: u32) -> TimerAction {
        if self.pending_at == NEVER || self.pending_token != token {
            return TimerAction::None; // stale
        }
        self.pending_at = NEVER;
        if self.deadline == NEVER {
            TimerAction::None
        } else if self.deadline <= now {
            self.deadline = NEVER;
            TimerAction::Fire
        } else {
            self.pending_at = self.deadline;
            TimerAction::Schedule(self.deadline, token)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timer_pushes_once_for_later_rearms_and_ignores_stale_events() {
        let mut t = Timer::default();
        assert_eq!(t.set(Some(100)), TimerAction::Schedule(100, 1));
        // Later deadlines reuse the pending event.
        assert_eq!(t.set(Some(150)), TimerAction::None);
        assert_eq!(t.set(Some(200)), TimerAction::None);
        // The event at 100 finds the deadline moved and re-schedules itself.
        assert_eq!(t.fired(100, 1), TimerAction::Schedule(200, 1));
        // An earlier deadline needs a fresh event; the one at 200 becomes stale.
        assert_eq!(t.set(Some(120)), TimerAction::Schedule(120, 2));
        assert_eq!(t.fired(120, 2), TimerAction::Fire);
        assert_eq!(t.fired(200, 1), TimerAction::None);
        // Cancel: the pending event fires and does nothing.
        assert_eq!(t.set(Some(300)), TimerAction::Schedule(300, 3));
        assert_eq!(t.set(None), TimerAction::None);
        assert_eq!(t.fired(300, 3), TimerAction::None);
    }

    #[test]
    fn every_event_survives_packing() {
        let big = u32::MAX;
        for e in [
            Event::TxDone(big),
            Event::Arrive { link: 1, slot: big, hop: 1 << 31 | 5 },
            Event::Arrive { link: big, slot: 0, hop: big },
            Event::Endpoint { endpoint: 7, token: big },
            Event::Queue { link: big, token: 3 },
            Event::Sample,
            Event::Control(big),
            Event::Process(9),
            Event::LinkChange(big),
            Event::Arrival(big),
        ] {
            assert_eq!(Event::unpack(e.pack()), e);
        }
    }

    #[test]
    fn equal_times_pop_in_insertion_order() {
        let mut q = EventQueue::new();
        q.push(10, Event::TxDone(1));
        q.push(5, Event::TxDone(9));
        q.push(10, Event::TxDone(2));
        q.push(10, Event::Sample);
        q.push(10, Event::TxDone(0));
        let order: Vec<_> = std::iter::from_fn(|| q.pop_until(Time::MAX)).collect();
        assert_eq!(
            order,
            vec![
                (5, Event::TxDone(9)),
                (10, Event::TxDone(1)),
                (10, Event::TxDone(2)),
                (10, Event::Sample),
                (10, Event::TxDone(0)),
            ]
        );
    }

    /// Interleaved pushes and pops against a sorted list of (time, insertion number), the
    /// pushes drawn `ahead` of the last popped time with many equal times, within a bucket,
    /// across the wheel, and beyond its horizon.
    fn against_a_sorted_list(seed: u64, ahead: &[(u64, u64)]) {
        let mut rng = crate::sim::rng::Rng::stream(seed, crate::sim::rng::Stream::Queue(0));
        let mut q = EventQueue::new();
        let mut reference: Vec<(Time, u32)> = Vec::new();
        let mut now = 0;
        let mut pushed = 0u32;
        for _ in 0..30_000 {
            if reference.is_empty() || rng.chance(0.52) {
                let (lo, hi) = ahead[rng.range_u64(0, ahead.len() as u64) as usize];
                let t = now + rng.range_u64(lo, hi);
                q.push(t, Event::TxDone(pushed));
                reference.push((t, pushed));
                pushed += 1;
            } else {
                reference.sort();
                let (t, k) = reference.remove(0);
                // Not due before its time, then due.
                if t > 0 {
                    assert_eq!(q.pop_until(t - 1), None, "popped before {t}");
                }
                assert_eq!(q.pop_until(t), Some((t, Event::TxDone(k))));
                now = t;
            }
            assert_eq!(q.len(), reference.len());
        }
        reference.sort();
        for (t, k) in reference {
            assert_eq!(q.pop_until(Time::MAX), Some((t, Event::TxDone(k))));
        }
        assert!(q.is_empty() && q.pop_until(Time::MAX).is_none());
    }

    #[test]
    fn pops_follow_time_then_insertion_order_within_buckets() {
        // Times a few ns apart: many equal times, mostly within the current bucket.
        against_a_sorted_list(3, &[(0, 50)]);
    }

    #[test]
    fn pops_follow_time_then_insertion_order_across_the_wheel_and_beyond_it() {
        let bucket = 1 << SHIFT;
        let horizon = bucket * SLOTS as u64;
        against_a_sorted_list(
            5,
            &[
                (0, 3),
                (0, bucket),
                (bucket, 40 * bucket),
                (0, horizon),
                (horizon - 2 * bucket, horizon + 2 * bucket),
                (horizon, 5 * horizon),
            ],
        );
    }

    #[test]
    fn pops_follow_time_then_insertion_order_across_the_outer_wheel_and_beyond_it() {
        let bucket = 1 << SHIFT;
        let horizon = bucket * SLOTS as u64;
        let coarse = bucket << COARSE_SHIFT;
        let outer = coarse * COARSE_SLOTS as u64;
        for seed in [7, 8, 9, 10] {
            against_a_sorted_list(
                seed,
                &[
                    (0, 3),
                    (0, bucket),
                    (0, horizon),
                    (horizon - 2 * bucket, horizon + 2 * bucket),
                    (coarse - 2 * bucket, 3 * coarse),
                    (outer - 2 * coarse, outer + 2 * coarse),
                    (outer, 3 * outer),
                ],
            );
        }
    }

    #[test]
    fn a_push_behind_a_slice_end_that_moved_the_calendar_ahead_still_comes_first() {
        // A slice of the run ends before the next event, whose bucket the calendar has loaded
        // to find that out; an event scheduled earlier than it must still come first.
        let mut q = EventQueue::new();
        q.push(10 << SHIFT, Event::Sample);
        assert_eq!(q.pop_until(2 << SHIFT), None);
        q.push(3 << SHIFT, Event::TxDone(1));
        q.push(3 << SHIFT, Event::TxDone(2));
        assert_eq!(q.pop_until(Time::MAX), Some((3 << SHIFT, Event::TxDone(1))));
        assert_eq!(q.pop_until(Time::MAX), Some((3 << SHIFT, Event::TxDone(2))));
        assert_eq!(q.pop_until(Time::MAX), Some((10 << SHIFT, Event::Sample)));
    }
}
