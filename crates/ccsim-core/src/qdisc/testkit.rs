//! The queue-discipline test kit, shared by the tests of every discipline.
//!
//! [`Harness`] drives a discipline directly, so that a test can read and set its state, with
//! synthetic arrivals, departures and wakeups: it stamps arrivals as the [`Queue`] wrapper
//! does, records every drop and mark and every dequeue, and asserts after each call the
//! identity the wrapper checks, `arrivals = departures + drops + held`. [`queue`] gives the
//! wrapper itself, for tests of the statistics and its invariant checks. The rest are the
//! packets, parameter tables and statistical bounds the tests have in common.

use super::{QdiscCtx, Queue, QueueDisc, QueueEvent, QueueEventKind};
use crate::packet::{Ecn, Packet};
use crate::params::{ParamSpec, ParamValue, Params};
use crate::sim::rng::{Rng, Stream};
use crate::sim::time::Time;
use std::collections::BTreeMap;

/// A queue around `disc` measuring from time 0.
pub fn queue(kind: &'static str, disc: Box<dyn QueueDisc>) -> Queue {
    Queue::new(kind, disc, Rng::stream(1, Stream::Queue(0)), 0)
}

/// A data packet of `size` bytes of flow `flow`, numbered `seq`, Not-ECT.
pub fn pkt(flow: u32, seq: u64, size: u32) -> Packet {
    Packet { flow, seq, size, payload: size, ..Packet::default() }
}

/// [`pkt`] with the ECN field `ecn`.
pub fn ecn_pkt(flow: u32, seq: u64, size: u32, ecn: Ecn) -> Packet {
    Packet { ecn, ..pkt(flow, seq, size) }
}

/// Resolve `given` against a parameter table (the tests' parameters must be valid).
pub fn params(specs: &'static [ParamSpec], given: &[(&str, ParamValue)]) -> Params {
    let g: BTreeMap<String, ParamValue> = given.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    Params::resolve("test", specs, &g).expect("valid test parameters")
}

/// Mean gap between RED's marks when the gap is uniform on {1, …, n} with n = ⌊1/p_b⌋ plus
/// the leftover mass at n + 1 (see `red.rs`, `early_drop_rate_matches_the_count_spacing_rule`).
pub fn mean_gap(pb: f64) -> f64 {
    let n = (1.0 / pb).floor();
    pb * n * (n + 1.0) / 2.0 + (n + 1.0) * (1.0 - n * pb)
}

/// True if `k` events out of `n` are within 5 binomial standard deviations of `p`.
pub fn within_binomial(k: u64, n: u64, p: f64) -> bool {
    let (mean, sd) = (n as f64 * p, (n as f64 * p * (1.0 - p)).sqrt());
    (k as f64 - mean).abs() <= 5.0 * sd
}

/// Which call reported an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    /// An arrival.
    Enqueue,
    /// A departure.
    Dequeue,
    /// A wakeup the discipline asked for.
    Wakeup,
}

/// A drop or mark, with the time and the call that reported it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Logged {
    /// Time of the call.
    pub now: Time,
    /// The call.
    pub call: Call,
    /// What happened.
    pub event: QueueEvent,
}

/// What happened at one dequeue call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// Time of the call.
    pub now: Time,
    /// The packet delivered, if any.
    pub out: Option<Packet>,
    /// Drops and marks reported during the call.
    pub events: Vec<QueueEvent>,
}

/// What happened to an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Admitted unchanged.
    Queued,
    /// Admitted with CE set.
    Marked,
    /// Dropped by the AQM.
    Early,
    /// Dropped because it did not fit.
    Overflow,
}

/// A discipline, its random stream, and the record of what it did.
pub struct Harness<D: QueueDisc> {
    /// The discipline under test.
    pub disc: D,
    rng: Rng,
    ctx_events: Vec<QueueEvent>,
    /// Every drop and mark, in order.
    pub log: Vec<Logged>,
    /// Where the latest call's events start in `log`.
    latest: usize,
    /// Every dequeue call, in order.
    pub steps: Vec<Step>,
    /// Packets offered (a test that adds packets behind the discipline's back adjusts the
    /// counts, so that the conservation check still holds).
    pub arrivals: u64,
    /// Packets delivered.
    pub departures: u64,
    /// Packets dropped.
    pub drops: u64,
    /// Packets marked.
    pub marks: u64,
    /// Latest time seen; [`Harness::hold`] continues from here.
    pub last: Time,
}

impl<D: QueueDisc> Harness<D> {
    /// A harness around `disc`, with the queue random stream of seed 1.
    pub fn new(disc: D) -> Self {
        Self::with_seed(disc, 1)
    }

    /// A harness around `disc`, with the queue random stream of `seed`.
    pub fn with_seed(disc: D, seed: u64) -> Self {
        Harness {
            disc,
            rng: Rng::stream(seed, Stream::Queue(0)),
            ctx_events: Vec::new(),
            log: Vec::new(),
            latest: 0,
            steps: Vec::new(),
            arrivals: 0,
            departures: 0,
            drops: 0,
            marks: 0,
            last: 0,
        }
    }

    /// Run `op` on the discipline at `now`; count and log what it reported.
    fn call<R>(&mut self, now: Time, call: Call, op: impl FnOnce(&mut D, &mut QdiscCtx) -> R) -> R {
        self.last = self.last.max(now);
        let mut ctx = QdiscCtx::new(now, &mut self.rng, &mut self.ctx_events);
        let r = op(&mut self.disc, &mut ctx);
        self.drops += ctx.drops;
        self.marks += ctx.marks;
        self.latest = self.log.len();
        self.log.extend(self.ctx_events.iter().map(|&event| Logged { now, call, event }));
        r
    }

    fn check(&self) {
        let held = self.disc.len_packets() as u64;
        assert_eq!(self.arrivals, self.departures + self.drops + held, "conservation");
    }

    /// Offer `pkt` at `now`, stamped with its arrival time as the `Queue` wrapper does.
    /// Returns the drops and marks this call reported (a discipline may drop queued packets
    /// besides the arrival: CHOKe, FQ-CoDel).
    pub fn enqueue(&mut self, now: Time, mut pkt: Packet) -> (u64, u64) {
        pkt.enqueued_at = now;
        let (drops, marks) = (self.drops, self.marks);
        self.call(now, Call::Enqueue, |d, ctx| d.enqueue(pkt, ctx));
        self.ctx_events.clear();
        self.arrivals += 1;
        self.check();
        (self.drops - drops, self.marks - marks)
    }

    /// Offer `pkt` at `now` to a discipline that reports at most one event per arrival (about
    /// the arrival itself): what happened to it.
    pub fn offer(&mut self, now: Time, pkt: Packet) -> Fate {
        self.enqueue(now, pkt);
        match self.latest_events() {
            [] => Fate::Queued,
            [e] => match e.event.kind {
                QueueEventKind::Mark => Fate::Marked,
                QueueEventKind::EarlyDrop => Fate::Early,
                QueueEventKind::Overflow => Fate::Overflow,
            },
            many => panic!("one arrival, several events: {many:?}"),
        }
    }

    /// Offer a Not-ECT packet of flow 0 of `size` bytes, numbered by arrival.
    pub fn arrive(&mut self, now: Time, size: u32) -> Fate {
        self.arrive_ecn(now, size, Ecn::NotEct)
    }

    /// [`Harness::arrive`] with the ECN field `ecn`.
    pub fn arrive_ecn(&mut self, now: Time, size: u32, ecn: Ecn) -> Fate {
        self.offer(now, ecn_pkt(0, self.arrivals, size, ecn))
    }

    /// Dequeue at `now`; returns the packet delivered.
    pub fn dequeue(&mut self, now: Time) -> Option<Packet> {
        let out = self.call(now, Call::Dequeue, |d, ctx| d.dequeue(ctx));
        self.departures += out.is_some() as u64;
        let events = std::mem::take(&mut self.ctx_events);
        self.steps.push(Step { now, out, events });
        self.check();
        out
    }

    /// Run the discipline's wakeup at `now`.
    pub fn wakeup(&mut self, now: Time) {
        self.call(now, Call::Wakeup, |d, ctx| d.on_wakeup(ctx));
        self.ctx_events.clear();
        self.check();
    }

    /// (arrivals, departures, drops).
    pub fn counts(&self) -> (u64, u64, u64) {
        (self.arrivals, self.departures, self.drops)
    }

    /// The events of the latest call.
    pub fn latest_events(&self) -> &[Logged] {
        &self.log[self.latest..]
    }

    /// Every event so far.
    pub fn events(&self) -> impl Iterator<Item = &QueueEvent> {
        self.log.iter().map(|l| &l.event)
    }

    /// The events reported by arrivals (overflow, early drops and marks on enqueue).
    pub fn enqueue_events(&self) -> Vec<QueueEvent> {
        self.log.iter().filter(|l| l.call == Call::Enqueue).map(|l| l.event).collect()
    }

    /// The events of kind `kind` reported by departures.
    pub fn dequeue_events(&self, kind: QueueEventKind) -> Vec<QueueEvent> {
        let on_dequeue = self.log.iter().filter(|l| l.call == Call::Dequeue);
        on_dequeue.map(|l| l.event).filter(|e| e.kind == kind).collect()
    }

    /// Early drops so far.
    pub fn early_drops(&self) -> u64 {
        self.events().filter(|e| e.kind == QueueEventKind::EarlyDrop).count() as u64
    }

    /// Times of every early drop, in order (one entry per drop).
    pub fn early_drop_times(&self) -> Vec<Time> {
        self.log.iter().filter(|l| l.event.kind == QueueEventKind::EarlyDrop).map(|l| l.now).collect()
    }

    /// Step through time in `tick`s from 0 to `end`: at each tick, first an arrival (when
    /// `arrive(t)` gives a packet), then a dequeue when `serve(t)`.
    pub fn drive(
        &mut self,
        tick: Time,
        end: Time,
        mut arrive: impl FnMut(Time) -> Option<Packet>,
        mut serve: impl FnMut(Time) -> bool,
    ) {
        let mut t = 0;
        while t <= end {
            if let Some(p) = arrive(t) {
                self.enqueue(t, p);
            }
            if serve(t) {
                self.dequeue(t);
            }
            t += tick;
        }
    }

    /// A link: arrivals of `size` bytes (flow 0, Not-ECT) every `gap` from `from`, one
    /// server taking `service` per packet, and the wakeups the discipline asks for, until
    /// `until` (at equal times: wakeup, then departure, then arrival). Returns the arrivals'
    /// fates with their times.
    pub fn drive_link(&mut self, from: Time, until: Time, gap: Time, service: Time, size: u32) -> Vec<(Time, Fate)> {
        let (mut next_arrival, mut free_at) = (from, from);
        let mut fates = Vec::new();
        loop {
            let next_departure = if self.disc.len_packets() > 0 { free_at } else { Time::MAX };
            let next_wakeup = self.disc.next_wakeup().unwrap_or(Time::MAX);
            let t = next_arrival.min(next_departure).min(next_wakeup);
            if t >= until {
                return fates;
            }
            if t == next_wakeup {
                self.wakeup(t);
            } else if t == next_departure {
                self.dequeue(t);
                free_at = t + service;
            } else {
                fates.push((t, self.arrive(t, size)));
                free_at = free_at.max(t);
                next_arrival += gap;
            }
        }
    }

    /// Keep the queue at `level` packets of `size` bytes: before each of `n` arrivals the
    /// queue holds exactly `level` packets (an admitted arrival is matched by a departure).
    /// Returns the drop flags of the `n` arrivals and the marks among them.
    pub fn hold(&mut self, level: usize, n: usize, size: u32, ecn: Ecn) -> (Vec<bool>, u64) {
        let mut t: Time = self.last + 1;
        let mut seq = 0;
        while self.disc.len_packets() < level {
            self.enqueue(t, ecn_pkt(0, seq, size, ecn));
            seq += 1;
            t += 1;
        }
        let mut dropped = Vec::with_capacity(n);
        let mut marks = 0;
        for _ in 0..n {
            let p = ecn_pkt(0, seq, size, ecn);
            seq += 1;
            t += 1;
            let (d, m) = self.enqueue(t, p);
            dropped.push(d > 0);
            marks += m;
            while self.disc.len_packets() > level {
                self.dequeue(t);
            }
        }
        (dropped, marks)
    }
}

/// A flow scheduler's DRR++ byte fairness (RFC 8290 §4.2, quantum 1514 B): flow 0 sends
/// 1 500 B packets, flow 1 300 B ones, both backlogged and served at their arrival time (so no
/// AQM acts). After k turns each, a flow has been served k * quantum - credits with credits in
/// (-1500, 0] at the end of its turn: at every switch from flow 1 back to flow 0 the bytes
/// served differ by less than a quantum, and by at most a quantum and a packet in between.
/// Per-packet round robin would give flow 0 five times the bytes of flow 1.
pub fn assert_drr_byte_shares<D: QueueDisc>(h: &mut Harness<D>) {
    for k in 0..1000 {
        h.enqueue(0, pkt(0, k, 1500));
    }
    for k in 0..5000 {
        h.enqueue(0, pkt(1, k, 300));
    }
    let mut served = [0i64; 2];
    let (mut last, mut switches) = (0, 0);
    for _ in 0..2500 {
        let p = h.dequeue(0).unwrap();
        if p.flow == 0 && last == 1 {
            assert!((served[0] - served[1]).abs() < 1514, "{served:?}");
            switches += 1;
        }
        served[p.flow as usize] += p.size as i64;
        last = p.flow;
        assert!((served[0] - served[1]).abs() <= 1514 + 1500, "{served:?}");
    }
    assert!(switches > 100, "{switches}");
    let ratio = served[0] as f64 / served[1] as f64;
    assert!((ratio - 1.0).abs() < 0.01, "{ratio}");
}
