//! Per-packet processing at a node: every packet the node handles waits a fixed `delay` plus a
//! random `jitter` before it moves on, without ever overtaking an earlier packet.
//!
//! Model. Packet k reaching the node's processing stage at `a_k` draws `X_k` from the node's
//! own stream (`Stream::Node(node)`) and is released at
//!
//! ```text
//! r_k = max(r_{k-1}, a_k + delay + X_k)
//! ```
//!
//! with X uniform on [0, jitter] or exponential of mean `jitter` (tc-netem(8): `delay TIME
//! JITTER distribution ...`). Linux netem itself reorders packets under jitter, because its
//! tfifo sorts by each packet's own send time; a router's forwarding pipeline does not reorder
//! the packets of one input, so ccsim keeps FIFO order with the non-overtaking recursion above
//! (the departure recursion of a FIFO stage; netem applies the same "no earlier than the last
//! queued packet" reference in its `rate` path, `sch_netem.c` netem_enqueue). Deliberate
//! consequences: a packet's extra delay is `delay + X_k` only when the previous release is
//! already past (packets spaced more than the jitter apart); close packets inherit part of
//! their predecessor's draw, so the delay distribution then has a heavier mass near the
//! previous release. Draws are rounded to the integer-nanosecond clock (< 0.5 ns each).
//!
//! Where it applies (engine.rs): a router processes each packet it forwards, between arrival
//! and its output queue; a host processes each packet it receives (before delivery to the
//! endpoint) and each packet it sends (between the endpoint and the output queue), both in the
//! one FIFO, as one CPU handling the host's network stack. A node without processing (no
//! `processing` table, or delay and jitter both zero) has no stage at all: one check of an
//! `Option` per packet and no event.
//!
//! The held packets are plain values in a ring (`VecDeque`) that grows to the largest
//! backlog and is then reused; only its head has an event, as on a link's wire.

use std::collections::VecDeque;

use crate::packet::Packet;
use crate::params::{Name, ParamKind, ParamSpec, ParamValue, Params};
use crate::sim::dist::Dist;
use crate::sim::rng::Rng;
use crate::sim::time::Time;

/// Largest delay or jitter accepted (ns): 1000 s, far beyond any processing time and small
/// enough that release times cannot overflow.
const MAX_NS: f64 = 1e12;

/// Parameters of a node's `processing` table.
pub static PARAMS: &[ParamSpec] = &[
    ParamSpec::new("delay", ParamKind::Time, Some(ParamValue::Int(0)), "fixed processing time of every packet")
        .range(0.0, MAX_NS),
    ParamSpec::new(
        "jitter",
        ParamKind::Time,
        Some(ParamValue::Int(0)),
        "random extra time per packet: uniform on [0, jitter], or exponential of mean jitter",
    )
    .range(0.0, MAX_NS),
    ParamSpec::new(
        "distribution",
        ParamKind::Choice,
        Some(ParamValue::Name(Name::lit("uniform"))),
        "distribution of the jitter",
    )
    .choices(&["uniform", "exponential"]),
];

/// A jitter above 0 draws from the node's stream for every packet.
pub const RANDOM: crate::registry::Randomness =
    crate::registry::Randomness::UnlessDefault { param: "jitter", what: "random processing jitter" };

/// Doc line for `ccsim list`.
pub const DOC: &str = "per-packet processing at a node (routers: forwarded packets; hosts: sent and received), FIFO: \
                       released at max(previous release, arrival + delay + jitter draw)";

/// A node's processing stage.
pub struct Processing {
    delay: Time,
    jitter: Dist,
    rng: Rng,
    /// Packets being processed with their release times, in arrival order (which is also
    /// release order).
    held: VecDeque<(Time, Packet)>,
    /// Release time of the last packet admitted, `r_{k-1}`.
    last_release: Time,
}

impl Processing {
    /// The stage described by validated `PARAMS` values; `None` when it would do nothing
    /// (delay and jitter both zero).
    pub fn from_params(p: &Params, rng: Rng) -> Option<Processing> {
        let (delay, jitter) = (p.uint("delay"), p.uint("jitter"));
        let dist = match p.choice("distribution") {
            "exponential" => Dist::Exponential { mean: jitter as f64 },
            _ => Dist::Uniform { lo: 0.0, hi: jitter as f64 },
        };
        (delay > 0 || jitter > 0).then(|| Processing::new(delay, dist, rng))
    }

    /// A stage of fixed `delay` and random extra time drawn from `jitter` (ns).
    pub fn new(delay: Time, jitter: Dist, rng: Rng) -> Processing {
        Processing { delay, jitter, rng, held: VecDeque::new(), last_release: 0 }
    }

    /// The release time of a packet arriving at `now`: `max(r_{k-1}, now + delay + X)`.
    fn release_time(&mut self, now: Time) -> Time {
        let x = if self.jitter.is_fixed() { self.jitter.mean() } else { self.jitter.sample(&mut self.rng) };
        // Parameters are bounded (MAX_NS), and an exponential draw exceeds 40 means with
        // probability e^-40: the clamp only guards the cast.
        let extra = x.round().clamp(0.0, 1e15) as Time;
        let t = now.saturating_add(self.delay).saturating_add(extra).max(self.last_release);
        self.last_release = t;
        t
    }

    /// Take `pkt` arriving at `now`. Returns the time for which the caller must schedule the
    /// stage's release event, when the packet became the head (the stage was idle).
    pub fn admit(&mut self, now: Time, pkt: Packet) -> Option<Time> {
        let t = self.release_time(now);
        let was_idle = self.held.is_empty();
        self.held.push_back((t, pkt));
        was_idle.then_some(t)
    }

    /// The release event at `now`: the head packet, and the time of the next release event if
    /// another packet waits. `None` if nothing is held (a scheduling bug; never on a valid run).
    pub fn release(&mut self, now: Time) -> Option<(Packet, Option<Time>)> {
        let (at, pkt) = self.held.pop_front()?;
        debug_assert_eq!(at, now, "a processing release event fires at its head's release time");
        Some((pkt, self.held.front().map(|&(t, _)| t)))
    }

    /// Packets being processed.
    pub fn len(&self) -> usize {
        self.held.len()
    }

    /// The packets being processed, oldest first (for the conservation checks).
    pub fn packets(&self) -> impl Iterator<Item = &Packet> {
        self.held.iter().map(|(_, p)| p)
    }

    /// True when nothing is being processed.
    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::rng::Stream;
    use std::collections::BTreeMap;

    fn pkt(seq: u64) -> Packet {
        Packet { seq, ..Packet::default() }
    }

    /// Admit packets at the given times, releasing everything due before each arrival (as
    /// the engine's events would), then drain; (release time, seq) in release order.
    fn run(stage: &mut Processing, arrivals: &[Time]) -> Vec<(Time, u64)> {
        let mut next: Option<Time> = None;
        let mut out = vec![];
        let drain_until = |stage: &mut Processing, next: &mut Option<Time>, until: Time, out: &mut Vec<(Time, u64)>| {
            while let Some(t) = *next {
                if t > until {
                    break;
                }
                let (p, n) = stage.release(t).expect("the head exists");
                out.push((t, p.seq));
                *next = n;
            }
        };
        for (k, &a) in arrivals.iter().enumerate() {
            drain_until(stage, &mut next, a, &mut out);
            if let Some(t) = stage.admit(a, pkt(k as u64)) {
                assert!(next.is_none(), "only an idle stage asks for an event");
                next = Some(t);
            }
        }
        drain_until(stage, &mut next, Time::MAX, &mut out);
        assert!(stage.is_empty());
        out
    }

    #[test]
    fn release_is_max_of_previous_release_and_arrival_plus_delay_plus_draw_on_a_hand_trace() {
        // Same stream as the stage: the draws X_k, then the recursion by hand.
        let (delay, jitter) = (1_000, 10_000);
        let arrivals = [0, 500, 20_000, 20_100, 60_000];
        let mut rng = Rng::stream(5, Stream::Node(2));
        let draws: Vec<Time> = arrivals.iter().map(|_| (rng.uniform() * jitter as f64).round() as Time).collect();
        let mut expected = vec![];
        let mut prev = 0;
        for (k, &a) in arrivals.iter().enumerate() {
            prev = (a + delay + draws[k]).max(prev);
            expected.push((prev, k as u64));
        }
        let mut stage =
            Processing::new(delay, Dist::Uniform { lo: 0.0, hi: jitter as f64 }, Rng::stream(5, Stream::Node(2)));
        assert_eq!(run(&mut stage, &arrivals), expected);
        // The trace exercises both branches of the max: some packet waits for its predecessor.
        assert!(arrivals.iter().zip(&draws).zip(&expected).any(|((&a, &x), &(r, _))| r > a + delay + x));
    }

    #[test]
    fn fifo_order_is_kept_under_jitter_much_larger_than_the_spacing() {
        // 10 000 packets 1 us apart through an exponential jitter of mean 1 ms.
        let mut stage = Processing::new(0, Dist::Exponential { mean: 1e6 }, Rng::stream(9, Stream::Node(0)));
        let arrivals: Vec<Time> = (0..10_000).map(|k| k * 1_000).collect();
        let out = run(&mut stage, &arrivals);
        assert_eq!(out.len(), arrivals.len());
        assert!(out.windows(2).all(|w| w[0].0 <= w[1].0), "release times never decrease");
        assert!(out.iter().enumerate().all(|(k, &(_, seq))| seq == k as u64), "order kept");
        assert!(out.iter().zip(&arrivals).all(|(&(r, _), &a)| r >= a), "no packet leaves before it came");
    }

    #[test]
    fn drawn_jitter_has_the_configured_mean() {
        // Packets far apart (10 s) never wait for each other: release - arrival - delay = X.
        let n = 50_000;
        let arrivals: Vec<Time> = (0..n).map(|k| k * 10_000_000_000).collect();
        for (dist, mean, sd) in [
            (Dist::Uniform { lo: 0.0, hi: 50_000.0 }, 25_000.0, 50_000.0 / 12f64.sqrt()),
            (Dist::Exponential { mean: 50_000.0 }, 50_000.0, 50_000.0),
        ] {
            let mut stage = Processing::new(20_000, dist, Rng::stream(3, Stream::Node(1)));
            let out = run(&mut stage, &arrivals);
            let m = out.iter().zip(&arrivals).map(|(&(r, _), &a)| (r - a - 20_000) as f64).sum::<f64>() / n as f64;
            assert!((m - mean).abs() < 5.0 * sd / (n as f64).sqrt(), "{dist:?}: mean {m}");
        }
    }

    #[test]
    fn parameters_build_the_stage_or_nothing() {
        let resolve = |given: &[(&str, ParamValue)]| {
            let given: BTreeMap<String, ParamValue> = given.iter().map(|(k, v)| (k.to_string(), *v)).collect();
            Params::resolve("nodes[0].processing", PARAMS, &given)
        };
        let none = resolve(&[]).unwrap();
        assert!(Processing::from_params(&none, Rng::stream(1, Stream::Node(0))).is_none(), "all zero: no stage");
        let exp =
            resolve(&[("jitter", ParamValue::Int(10)), ("distribution", ParamValue::name("exponential"))]).unwrap();
        let stage = Processing::from_params(&exp, Rng::stream(1, Stream::Node(0))).unwrap();
        assert_eq!(stage.jitter, Dist::Exponential { mean: 10.0 });
        let err = resolve(&[("distribution", ParamValue::name("normal"))]).unwrap_err();
        assert_eq!(err.field, "nodes[0].processing.distribution");
        let err = resolve(&[("jitter", ParamValue::Int(-5))]).unwrap_err();
        assert_eq!(err.field, "nodes[0].processing.jitter");
    }
}
