//! The event queue: a 4-ary min-heap ordered by (time, insertion sequence).
//!
//! The sequence number breaks ties in insertion order, which makes a run a pure function of
//! its configuration and seed. Events are small `Copy` values; packets never travel inside
//! events (they wait in queues and on the wire, see `net::link`).
//!
//! Why 4-ary (LaMarca & Ladner 1996, "The influence of caches on the performance of heaps"):
//! half the levels of a binary heap, and the four children of a node are adjacent (128 bytes:
//! two cache lines), so a pop touches about half as many lines; the extra comparisons per level
//! are cheap register work. Pop moves the last entry into the hole left by the root and sifts
//! it down, moving entries rather than swapping them.
//!
//! In front of the heap sits one slot holding the earliest pending event whenever that event
//! was pushed as the new earliest (the next packet on a busy wire usually is): it is then
//! popped without entering the heap at all. The order of pops is exactly (time, sequence).

use super::time::Time;

/// Something that happens at a point in simulated time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A link direction finished serializing a packet and may start the next one.
    TxDone(u32),
    /// The packet at the head of a link direction's wire reaches the far end.
    Arrive(u32),
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
}

/// A pending event; `key` is `time << 64 | seq`, so one integer comparison orders entries
/// by time and then by insertion.
#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u128,
    event: Event,
}

/// Pending events.
#[derive(Debug, Default)]
pub struct EventQueue {
    /// If set, earlier than every entry of `heap`.
    front: Option<Entry>,
    heap: Vec<Entry>,
    next_seq: u64,
}

/// Children per node.
const ARITY: usize = 4;

impl EventQueue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Schedule `event` at `time`.
    #[inline]
    pub fn push(&mut self, time: Time, event: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let entry = Entry { key: (time as u128) << 64 | seq as u128, event };
        let entry = match self.front {
            // Later than the earliest: into the heap.
            Some(f) if f.key < entry.key => entry,
            // The new earliest: it takes the slot and the previous holder goes to the heap.
            Some(f) => {
                self.front = Some(entry);
                f
            }
            None if self.heap.first().is_none_or(|h| entry.key < h.key) => {
                self.front = Some(entry);
                return;
            }
            None => entry,
        };
        self.heap_push(entry);
    }

    fn heap_push(&mut self, entry: Entry) {
        // Sift up: move parents down into the hole until the entry fits.
        let mut i = self.heap.len();
        self.heap.push(entry);
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if self.heap[parent].key <= entry.key {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = entry;
    }

    /// Time of the earliest pending event.
    #[inline]
    pub fn peek_time(&self) -> Option<Time> {
        self.front.as_ref().or(self.heap.first()).map(|e| (e.key >> 64) as Time)
    }

    /// Remove and return the earliest pending event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        if let Some(f) = self.front.take() {
            return Some(((f.key >> 64) as Time, f.event));
        }
        let last = self.heap.pop()?;
        let Some(&top) = self.heap.first() else {
            return Some(((last.key >> 64) as Time, last.event));
        };
        // Sift `last` down from the root: move the smallest child up into the hole.
        let heap = &mut self.heap[..];
        let n = heap.len();
        let mut i = 0;
        loop {
            let first = ARITY * i + 1;
            if first >= n {
                break;
            }
            let (m, min) = if first + ARITY <= n {
                // All four children exist (the common case): a two-round tournament, fewer
                // dependent compares than a scan. Ties go to the lower index, as in the scan,
                // though keys are unique anyway (the sequence number).
                let k = &heap[first..first + ARITY];
                let (a, ka) = if k[1].key < k[0].key { (1, k[1].key) } else { (0, k[0].key) };
                let (b, kb) = if k[3].key < k[2].key { (3, k[3].key) } else { (2, k[2].key) };
                if kb < ka { (b, kb) } else { (a, ka) }
            } else {
                let kids = &heap[first..n];
                let (mut m, mut min) = (0, kids[0].key);
                for (j, c) in kids.iter().enumerate().skip(1) {
                    if c.key < min {
                        (m, min) = (j, c.key);
                    }
                }
                (m, min)
            };
            if last.key <= min {
                break;
            }
            heap[i] = heap[first + m];
            i = first + m;
        }
        heap[i] = last;
        Some(((top.key >> 64) as Time, top.event))
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len() + self.front.is_some() as usize
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.front.is_none() && self.heap.is_empty()
    }
}

/// A re-armable timer over the event queue with lazy cancellation.
///
/// Re-arming to a later deadline (an RTO restarted on every ACK) pushes nothing: the pending
/// event fires at the old time, sees the later deadline and re-schedules itself. Re-arming
/// to an earlier deadline pushes a new event with a new token, and the old one is ignored.
/// So a timer costs at most one live heap entry per arming, never one per restart.
#[derive(Clone, Copy, Debug, Default)]
pub struct Timer {
    deadline: Option<Time>,
    pending: Option<(Time, u32)>,
    token: u32,
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
        self.deadline = deadline;
        match (deadline, self.pending) {
            (None, _) => TimerAction::None,
            (Some(d), Some((t, _))) if t <= d => TimerAction::None,
            (Some(d), _) => {
                self.token = self.token.wrapping_add(1);
                self.pending = Some((d, self.token));
                TimerAction::Schedule(d, self.token)
            }
        }
    }

    /// The timer's event with `token` fired at `now`.
    pub fn fired(&mut self, now: Time, token: u32) -> TimerAction {
        match self.pending {
            Some((_, t)) if t == token => self.pending = None,
            _ => return TimerAction::None, // stale
        }
        match self.deadline {
            None => TimerAction::None,
            Some(d) if d <= now => {
                self.deadline = None;
                TimerAction::Fire
            }
            Some(d) => {
                self.pending = Some((d, token));
                TimerAction::Schedule(d, token)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_times_pop_in_insertion_order() {
        let mut q = EventQueue::new();
        q.push(10, Event::Arrive(1));
        q.push(5, Event::TxDone(9));
        q.push(10, Event::Arrive(2));
        q.push(10, Event::Sample);
        q.push(10, Event::Arrive(0));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (5, Event::TxDone(9)),
                (10, Event::Arrive(1)),
                (10, Event::Arrive(2)),
                (10, Event::Sample),
                (10, Event::Arrive(0)),
            ]
        );
    }

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
    fn pops_follow_time_then_insertion_order_under_random_pushes_and_pops() {
        // Oracle: a sorted list of (time, insertion number). Interleaved pushes and pops with
        // many equal times exercise the sift in both directions.
        let mut rng = crate::sim::rng::Rng::stream(3, crate::sim::rng::Stream::Queue(0));
        let mut q = EventQueue::new();
        let mut reference: Vec<(Time, u32)> = Vec::new();
        let mut pushed = 0u32;
        for _ in 0..20_000 {
            if reference.is_empty() || rng.chance(0.55) {
                let t = rng.range_u64(0, 50);
                q.push(t, Event::Arrive(pushed));
                reference.push((t, pushed));
                pushed += 1;
            } else {
                reference.sort();
                let (t, k) = reference.remove(0);
                assert_eq!(q.pop(), Some((t, Event::Arrive(k))));
            }
            assert_eq!(q.len(), reference.len());
        }
        reference.sort();
        for (t, k) in reference {
            assert_eq!(q.pop(), Some((t, Event::Arrive(k))));
        }
        assert!(q.is_empty() && q.pop().is_none());
    }
}
