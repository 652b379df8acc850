//! Links that change during a run (`LinkSpec::schedule`): each scheduled change is one
//! event ([`Event::LinkChange`]) that sets a link direction's rate, delay, loss or state.
//!
//! Semantics, for every link direction the change applies to:
//!
//! - **rate**: the packet being serialized finishes at the old rate (its transmission time
//!   was fixed when it started, as a NIC's is); the next one starts at the new rate. The
//!   cached transmission time (`LinkDir::last_tx`) is forgotten.
//! - **delay**: packets already on the wire keep their arrival times; a packet that enters
//!   the wire from now on takes the new delay, but never arrives before the packet ahead of
//!   it: its arrival is `max(end of its transmission + delay, arrival of the packet ahead)`.
//!   A shorter delay would otherwise let a packet overtake the one before it on the same
//!   wire, which a physical wire (and the engine's FIFO wire, one event per head) cannot do.
//! - **loss**: the next packet transmitted is lost with the new probability.
//! - **up = false**: the direction stops transmitting. Every packet on its wire, including
//!   the one being serialized, is lost, and counted as a wire loss exactly as a random one
//!   (the link's and the flow's `link_losses`, a lost datagram's message), so per-flow
//!   conservation holds. The queue keeps its packets and goes on accepting (and, when full,
//!   dropping) arrivals, as a Linux qdisc does while the device has no carrier: the device
//!   stops dequeuing, the qdisc holds what it has. The transmitter stays busy until the end
//!   of the packet it was serializing, as if it had finished it (the utilization counts it).
//! - **up = true**: the direction transmits again, starting with what its queue holds.
//!
//! A change of state computes the routes again over the link directions that are up
//! ([`Routes::compute_with_links_up`]): traffic moves to another path where the topology has
//! one. Where none is left, a node keeps its route over the link that is down and its
//! packets wait in that queue until the link returns (or the queue drops them). Packets
//! already queued stay where they are when the routes change, and drain when their link is
//! up. A packet on a wire takes the routes in force when it arrives at the far end: in a
//! run with changes, the far end works out the next hop on arrival instead of using the one
//! worked out when the packet entered the wire. A packet that finds no route at all
//! (impossible while the fallback keeps every route of the full topology) is dropped and
//! counted as a link loss of its flow.
//!
//! A run without changes does none of this: the engine tests one field (`dynamic`) per
//! transmission, arrival and transmitter event.

use super::*;
use crate::config::{LinkChange, LinkDirection};
use crate::net::route::out_links;
use crate::stats::FlowStats;

/// What a run with scheduled link changes keeps (`Simulation::dynamic`).
pub(super) struct Dynamic {
    /// Every scheduled change with its link (index in the configuration), link by link in
    /// configuration order; [`Event::LinkChange`] names a change by its index here.
    changes: Vec<(u32, LinkChange)>,
    /// What routes are computed from: per node, its outgoing `(link direction, neighbour)`;
    /// which nodes forward; the flows' ends.
    out_links: Vec<Vec<(u32, u32)>>,
    forwards: Vec<bool>,
    destinations: Vec<u32>,
    /// The routes with every link up: the fallback where links that are up join no path.
    full: Routes,
    /// Wires a change emptied whose head's arrival event was still pending: the link
    /// direction and the head's slot, kept out of use until that event comes and is ignored.
    stale: Vec<(u32, u32)>,
    /// Scratch: the packets taken off a wire that went down.
    lost: Vec<Packet>,
}

/// The changes of every link's schedule, checked: each at a time within the run and not
/// before the one listed before it, a rate above 0, a loss probability in [0, 1], and
/// something to change. `None` when no link has a schedule.
pub(super) fn build_dynamic(cfg: &Config) -> Result<Option<Box<Dynamic>>, ConfigError> {
    let mut changes = Vec::new();
    for (i, link) in cfg.links.iter().enumerate() {
        let mut previous = 0;
        for (j, c) in link.schedule.iter().enumerate() {
            let field = |key: &str| format!("links[{i}].schedule[{j}]{key}");
            if c.at_ns > cfg.duration_ns {
                return Err(ConfigError::new(
                    field(".at_ns"),
                    format!(
                        "{} is after the end of the run ({})",
                        super::build::show_time(c.at_ns),
                        super::build::show_time(cfg.duration_ns)
                    ),
                ));
            }
            if c.at_ns < previous {
                return Err(ConfigError::new(
                    field(".at_ns"),
                    format!(
                        "{} is before the previous change ({}); list the changes in time order",
                        super::build::show_time(c.at_ns),
                        super::build::show_time(previous)
                    ),
                ));
            }
            previous = c.at_ns;
            if c.rate_bps == Some(0) {
                return Err(ConfigError::new(field(".rate_bps"), "must be positive"));
            }
            if c.loss.is_some_and(|p| !(0.0..=1.0).contains(&p)) {
                return Err(ConfigError::new(field(".loss"), "must be a probability in [0, 1]"));
            }
            if c.rate_bps.is_none() && c.delay_ns.is_none() && c.loss.is_none() && c.up.is_none() {
                return Err(ConfigError::new(field(""), "changes nothing: give rate_bps, delay_ns, loss or up"));
            }
            changes.push((i as u32, c.clone()));
        }
    }
    if changes.is_empty() {
        return Ok(None);
    }
    Ok(Some(Box::new(Dynamic {
        changes,
        out_links: out_links(cfg.nodes.len(), cfg.links.iter().map(|l| (l.a, l.b))),
        forwards: cfg.nodes.iter().map(|v| v.kind == NodeKind::Router).collect(),
        destinations: cfg.flow_ends(),
        full: Routes::of(cfg),
        stale: Vec::new(),
        lost: Vec::new(),
    })))
}

/// `pkt` is lost on `link`'s wire: charge the link and the flow (`link_losses` in the
/// measured window, `total_lost` always). Returns the datagram whose message is then lost,
/// if it is one.
#[inline]
pub(super) fn charge_wire_loss(
    link: &mut LinkDir,
    fs: &mut FlowStats,
    pkt: &Packet,
    measuring: bool,
) -> Option<(usize, u64)> {
    link.total_losses += 1;
    fs.total_lost += 1;
    if measuring {
        link.losses += 1;
        fs.link_losses += 1;
    }
    pkt.kind.is_datagram().then_some((pkt.flow as usize, pkt.seq))
}

/// When the packet `pkt`, whose transmission on `link` ends at `done`, reaches the far end,
/// and its hop from there, in a run with changes: never before the packet ahead of it on the
/// wire (a delay may have shrunk), and the hop by the routes now, which the far end works out
/// again on arrival (`Simulation::arrive_changing`).
#[cold]
#[inline(never)]
pub(super) fn wire_entry(link: &mut LinkDir, done: Time, routes: &Routes, pkt: &Packet) -> (Time, u32) {
    let arrive = (done + link.delay).max(link.last_arrival);
    link.last_arrival = arrive;
    (arrive, Simulation::route_hop(routes, link.to, pkt))
}

impl Simulation {
    /// Schedule every link change, before any other event: a change at time t takes
    /// effect before everything else that happens at t (events at one time run in the order
    /// they were scheduled), so a link down `at = "0s"` sends nothing. Without changes this
    /// schedules nothing, and the run's events are what they were before changes existed.
    pub(super) fn schedule_link_changes(&mut self) {
        let Some(d) = self.dynamic.as_ref() else { return };
        let times: Vec<Time> = d.changes.iter().map(|(_, c)| c.at_ns).collect();
        for (k, at) in times.into_iter().enumerate() {
            self.events.push(at, Event::LinkChange(k as u32));
        }
    }

    /// What change `k` is, for an error message.
    pub(super) fn describe_change(&self, k: u32) -> String {
        match self.dynamic.as_ref().and_then(|d| d.changes.get(k as usize)) {
            Some((i, _)) => format!("links[{i}]: a scheduled change"),
            None => format!("link change {k}"),
        }
    }

    /// Change `k` happens.
    pub(super) fn link_change(&mut self, k: u32) {
        let Some((i, c)) = self.dynamic.as_ref().and_then(|d| d.changes.get(k as usize)).cloned() else {
            debug_assert!(false, "no link change {k}");
            return;
        };
        let dirs = match c.direction {
            None => 2 * i..2 * i + 2,
            Some(LinkDirection::Ab) => 2 * i..2 * i + 1,
            Some(LinkDirection::Ba) => 2 * i + 1..2 * i + 2,
        };
        let mut reroute = false;
        for l in dirs.map(|l| l as usize) {
            let link = &mut self.links[l];
            if let Some(rate) = c.rate_bps {
                link.rate_bps = rate;
                // Size 0 takes no time at any rate: the cache holds nothing stale.
                link.last_tx = (0, 0);
            }
            if let Some(delay) = c.delay_ns {
                link.delay = delay;
            }
            if let Some(loss) = c.loss {
                link.loss = loss;
            }
            match c.up {
                Some(false) if link.up => {
                    self.take_down(l);
                    reroute = true;
                }
                Some(true) if !link.up => {
                    self.bring_up(l);
                    reroute = true;
                }
                _ => {}
            }
        }
        if reroute {
            self.reroute();
        }
    }

    /// Link direction `l` goes down: its wire loses every packet, its transmitter stops.
    fn take_down(&mut self, l: usize) {
        let Some(d) = self.dynamic.as_mut() else { return };
        let link = &mut self.links[l];
        link.up = false;
        // `tx_pending` set keeps the transmitter from starting (`kick`) and packets from
        // passing the queue (`LinkDir::passes`); a `TxDone` still to come finds the link
        // down and leaves it set.
        link.tx_event_while_down = link.tx_pending;
        link.tx_pending = true;
        link.last_arrival = 0;
        let mut lost = std::mem::take(&mut d.lost);
        if let Some(head) = self.wire_packets.clear(&mut link.wire, &mut lost) {
            d.stale.push((l as u32, head));
        }
        self.inv.wire_clear(l);
        let measuring = self.now >= self.warmup;
        for pkt in lost.drain(..) {
            let fs = &mut self.flow_stats[pkt.flow as usize];
            if let Some((f, seq)) = charge_wire_loss(&mut self.links[l], fs, &pkt, measuring) {
                self.lose_datagram(f, seq);
            }
            // A workload's flow may be over once its last packet is lost.
            self.retire_if_over(pkt.flow as usize);
        }
        if let Some(d) = self.dynamic.as_mut() {
            d.lost = lost;
        }
    }

    /// Link direction `l` comes back up: it transmits what its queue holds.
    fn bring_up(&mut self, l: usize) {
        let link = &mut self.links[l];
        link.up = true;
        // With a `TxDone` still to come, that event starts the transmitter.
        link.tx_pending = link.tx_event_while_down;
        link.tx_event_while_down = false;
        self.kick(l);
    }

    /// Routes over the link directions that are up.
    fn reroute(&mut self) {
        let Some(d) = self.dynamic.as_ref() else { return };
        let up: Vec<bool> = self.links.iter().map(|l| l.up).collect();
        self.routes = Routes::compute_with_links_up(&d.out_links, &d.forwards, &d.destinations, &up, &d.full);
    }

    /// A `TxDone` of link direction `l` in a run with changes: false if the link is down
    /// (the event is spent; `tx_pending` stays set while the link is down).
    #[inline]
    pub(super) fn tx_done_while_up(&mut self, l: usize) -> bool {
        let link = &mut self.links[l];
        if !link.up {
            link.tx_event_while_down = false;
        }
        link.up
    }

    /// The arrival of the packet in `slot` at the far end of link direction `l`, in a run
    /// with changes: `None` if a change emptied the wire since the event was scheduled (the
    /// event is ignored) or the packet has no route from there (it is dropped and counted
    /// as a link loss of its flow); else the far end and the packet's hop from there by the
    /// routes in force now, for [`Simulation::receive`].
    #[cold]
    #[inline(never)]
    pub(super) fn arrive_changing(&mut self, l: u32, slot: u32) -> Option<(u32, u32)> {
        if let Some(d) = self.dynamic.as_mut() {
            if let Some(k) = d.stale.iter().position(|&s| s == (l, slot)) {
                d.stale.swap_remove(k);
                self.wire_packets.release(slot);
                return None;
            }
        }
        let link = &mut self.links[l as usize];
        let next = self.wire_packets.arrive(&mut link.wire, slot);
        self.inv.wire_leave(l as usize, self.now, self.wire_packets.get(slot));
        if let Some(OnWire { arrival, slot, hop }) = next {
            self.events.push(arrival, Event::Arrive { link: l, slot, hop });
        }
        let to = link.to;
        let hop = Self::route_hop(&self.routes, to, self.wire_packets.get(slot));
        if hop != NO_ROUTE {
            return Some((to, hop));
        }
        let pkt = self.wire_packets.take(slot);
        let fs = &mut self.flow_stats[pkt.flow as usize];
        fs.total_lost += 1;
        if self.now >= self.warmup {
            fs.link_losses += 1;
        }
        if pkt.kind.is_datagram() {
            self.lose_datagram(pkt.flow as usize, pkt.seq);
        }
        self.retire_if_over(pkt.flow as usize);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{DirSpec, FlowSpec, LinkSpec, NodeSpec, TraceSpec};
    use crate::params::{ParamValue, Size};
    use crate::sim::time::{MS, SEC};

    /// UDP payload and header making 1250-byte packets: 1 ms at 10 Mbit/s.
    const PAYLOAD: i64 = 1222;
    const WIRE_BYTES: u64 = 1250;

    fn dir(rate_bps: u64, delay_ns: u64) -> DirSpec {
        let queue = AlgoSpec::named("droptail").with("limit", ParamValue::Size(Size::Packets(100)));
        DirSpec { rate_bps, delay_ns, loss: 0.0, queue }
    }

    fn link(a: u32, b: u32, rate_bps: u64, delay_ns: u64, schedule: Vec<LinkChange>) -> LinkSpec {
        LinkSpec { schedule, ..LinkSpec::new(a, b, dir(rate_bps, delay_ns), dir(rate_bps, delay_ns)) }
    }

    fn change(at_ns: u64, f: impl FnOnce(&mut LinkChange)) -> LinkChange {
        let mut c = LinkChange::at(at_ns);
        f(&mut c);
        c
    }

    /// A UDP flow from `src` to `dst`: constant bit rate `rate_bps` of 1250-byte packets, or
    /// with `period` a packet of `payload` bytes every `period`.
    fn udp(src: u32, dst: u32, app: AlgoSpec) -> FlowSpec {
        FlowSpec {
            name: None,
            src,
            dst,
            transport: AlgoSpec::named("udp"),
            cc: None,
            app,
            start_ns: 0,
            start_max_ns: None,
            stop_ns: None,
            group: None,
        }
    }

    fn cbr(rate_bps: i64) -> AlgoSpec {
        AlgoSpec::named("cbr").with("rate", ParamValue::Int(rate_bps)).with("packet_size", ParamValue::Int(PAYLOAD))
    }

    fn config(duration_ns: u64, nodes: Vec<NodeSpec>, links: Vec<LinkSpec>, flows: Vec<FlowSpec>) -> Config {
        Config {
            duration_ns,
            warmup_ns: 0,
            seed: 1,
            nodes,
            links,
            flows,
            trace: TraceSpec { messages: true, ..TraceSpec::default() },
            bottleneck: None,
            jain_flows: None,
            control: Vec::new(),
            workloads: Vec::new(),
        }
    }

    /// Hosts a and b joined by one 10 Mbit/s link of 20 ms whose schedule is `schedule`;
    /// a sends b 15 Mbit/s of 1250-byte packets, more than the link carries at any time.
    fn saturated(duration_ns: u64, schedule: Vec<LinkChange>) -> Config {
        config(
            duration_ns,
            vec![NodeSpec::host("a"), NodeSpec::host("b")],
            vec![link(0, 1, 10_000_000, 20 * MS, schedule)],
            vec![udp(0, 1, cbr(15_000_000))],
        )
    }

    fn run(cfg: &Config) -> Results {
        let mut sim = Simulation::new(cfg).expect("valid config");
        sim.run();
        sim.check_conservation().expect("conservation");
        sim.results()
    }

    /// Every delivered message: (created, delivered), in ns, in delivery order.
    fn deliveries(r: &Results) -> Vec<(u64, u64)> {
        let log = r.messages.as_ref().expect("message log");
        let mut rows: Vec<(u64, u64)> = (0..log.index.len())
            .filter_map(|i| {
                log.delivered_s[i].map(|d| ((log.created_s[i] * 1e9).round() as u64, (d * 1e9).round() as u64))
            })
            .collect();
        rows.sort_by_key(|&(c, d)| (d, c));
        rows
    }

    fn delivered_in(r: &Results, from: u64, to: u64) -> usize {
        deliveries(r).iter().filter(|&&(_, d)| d >= from && d < to).count()
    }

    #[test]
    fn a_rate_change_applies_from_the_next_packet() {
        // 10 Mbit/s, then 5 Mbit/s from 2.0005 s: a packet per ms, then one per 2 ms.
        let halve = change(2 * SEC + MS / 2, |c| c.rate_bps = Some(5_000_000));
        let r = run(&saturated(4 * SEC, vec![halve]));
        let per_s = |rate: u64| (rate / (8 * WIRE_BYTES)) as usize;
        let before = delivered_in(&r, SEC, 2 * SEC);
        let after = delivered_in(&r, 3 * SEC, 4 * SEC);
        assert!(before.abs_diff(per_s(10_000_000)) <= 1, "{before} packets in the second before");
        assert!(after.abs_diff(per_s(5_000_000)) <= 1, "{after} packets in a second after");
        // The packet being serialized at 2.0005 s started at 2 s and ends at 2.001 s (old
        // rate, arrives 2.021 s); the next starts then and takes 2 ms (arrives 2.023 s).
        let d: Vec<u64> = deliveries(&r).iter().map(|&(_, d)| d).filter(|&d| d > 2 * SEC + 20 * MS).take(3).collect();
        assert_eq!(d, [2 * SEC + 21 * MS, 2 * SEC + 23 * MS, 2 * SEC + 25 * MS]);
        assert_eq!(r.queues[0].rate_bps, 5_000_000);
    }

    #[test]
    fn a_link_that_goes_down_loses_its_wire_and_holds_its_queue() {
        // Packets start every 1 ms from t = 0 (the link is saturated) and arrive 21 ms later.
        // At 2.0005 s the one started at 2 s is being serialized and the 20 before it are
        // propagating (started 1.980 s .. 1.999 s, arriving after 2.0005 s): 21 = delay /
        // transmission time + 1 packets are lost on the wire.
        let (t1, t2) = (2 * SEC + MS / 2, 3 * SEC);
        let schedule = vec![change(t1, |c| c.up = Some(false)), change(t2, |c| c.up = Some(true))];
        let r = run(&saturated(4 * SEC, schedule));
        let on_wire = 20 * MS / MS + 1;
        assert_eq!(r.flows[0].link_losses, on_wire);
        assert_eq!(r.queues[0].link_losses, on_wire);
        let lost = r.messages.as_ref().unwrap().lost.iter().filter(|&&l| l).count() as u64;
        assert!(lost >= on_wire, "the lost datagrams' messages are lost ({lost})");
        // The last delivery before: the packet started at 1.979 s; the first after: the
        // queue's head, sent at t2, after a transmission and the delay.
        let d: Vec<u64> = deliveries(&r).iter().map(|&(_, d)| d).collect();
        assert_eq!(d.iter().filter(|&&d| d <= t1).max(), Some(&(2 * SEC)));
        assert_eq!(d.iter().find(|&&d| d > t1), Some(&(t2 + MS + 20 * MS)));
        // The queue held its packets (its 100 packets were sent first, created before t1).
        let first_after: Vec<(u64, u64)> = deliveries(&r).into_iter().filter(|&(_, d)| d > t1).take(100).collect();
        assert!(first_after.iter().all(|&(c, _)| c < t1), "held packets go first");
    }

    #[test]
    fn a_link_down_from_the_start_sends_nothing_until_it_is_up_and_one_direction_changes_alone() {
        // Down at 0 s: the change runs before the first packet is sent, so nothing is on the
        // wire to lose; the queue's head goes at 1 s and arrives a transmission and a delay
        // later.
        let schedule = vec![change(0, |c| c.up = Some(false)), change(SEC, |c| c.up = Some(true))];
        let r = run(&saturated(2 * SEC, schedule));
        assert_eq!(r.flows[0].link_losses, 0);
        assert_eq!(deliveries(&r).first().map(|&(_, d)| d), Some(SEC + 21 * MS));
        // Only b -> a goes down: a -> b carries on as if nothing happened.
        let down_ba = |c: &mut LinkChange| {
            c.up = Some(false);
            c.direction = Some(LinkDirection::Ba);
        };
        let r = run(&saturated(2 * SEC, vec![change(0, down_ba)]));
        assert_eq!(r.flows[0].link_losses, 0);
        assert_eq!(deliveries(&r).first().map(|&(_, d)| d), Some(21 * MS));
        assert_eq!(deliveries(&r), deliveries(&run(&saturated(2 * SEC, Vec::new()))));
    }

    #[test]
    fn a_shorter_delay_never_lets_a_packet_overtake_the_one_ahead() {
        // 20 ms, then 5 ms from 1.0005 s. Packets start every 1 ms and take 1 ms to send.
        // The one started at 1.000 s is on the wire and arrives at 1.021 s; the next ones
        // (started at 1.001 s ..) would arrive 6 ms after they start, before it, and arrive
        // with it instead, up to the one started at 1.015 s; from the one started at 1.016 s
        // (arriving 1.022 s) on, each arrives on its own delay. The wire invariant checks
        // the order in debug builds.
        let shorter = change(SEC + MS / 2, |c| c.delay_ns = Some(5 * MS));
        let r = run(&saturated(2 * SEC, vec![shorter]));
        let d: Vec<u64> = deliveries(&r).iter().map(|&(_, d)| d).collect();
        assert!(d.windows(2).all(|w| w[0] <= w[1]));
        let at = |t: u64| d.iter().filter(|&&x| x == t).count();
        assert_eq!((at(SEC + 20 * MS), at(SEC + 21 * MS), at(SEC + 22 * MS), at(SEC + 23 * MS)), (1, 16, 1, 1));
        assert_eq!(r.flows[0].link_losses, 0);
    }

    /// h1 (0) -- R1 (1) -- R2 (2) -- h2 (3), 1 + 10 + 1 ms, and the long way round R1 --
    /// R3 (4) -- R2, 10 + 15 ms; 100 Mbit/s everywhere. The short middle link R1--R2 has
    /// `schedule`. h1 sends h2 a 100-byte datagram every 10 ms.
    fn two_paths(schedule: Vec<LinkChange>) -> Config {
        let fast = 100_000_000;
        config(
            3 * SEC,
            vec![
                NodeSpec::host("h1"),
                NodeSpec::router("R1"),
                NodeSpec::router("R2"),
                NodeSpec::host("h2"),
                NodeSpec::router("R3"),
            ],
            vec![
                link(0, 1, fast, MS, Vec::new()),
                link(1, 2, fast, 10 * MS, schedule),
                link(2, 3, fast, MS, Vec::new()),
                link(1, 4, fast, 10 * MS, Vec::new()),
                link(4, 2, fast, 15 * MS, Vec::new()),
            ],
            vec![udp(
                0,
                3,
                AlgoSpec::named("periodic")
                    .with("size", ParamValue::Int(100))
                    .with("period", ParamValue::Int(10 * MS as i64)),
            )],
        )
    }

    #[test]
    fn traffic_takes_the_long_way_while_the_short_link_is_down_and_comes_back() {
        let (t1, t2) = (SEC + 5 * MS, 2 * SEC + 5 * MS);
        let r = run(&two_paths(vec![change(t1, |c| c.up = Some(false)), change(t2, |c| c.up = Some(true))]));
        // 128 bytes (100 + 28 of headers) take 10.24 us a hop at 100 Mbit/s.
        let tx = 128 * 8 * SEC / 100_000_000;
        let short = MS + 10 * MS + MS + 3 * tx;
        let long = MS + 10 * MS + 15 * MS + MS + 4 * tx;
        for (created, delivered) in deliveries(&r) {
            let delay = delivered - created;
            // Sent before the link went down, after it came back, or in between.
            let expected = if created + MS < t1 || created + MS > t2 { short } else { long };
            assert_eq!(delay, expected, "datagram created at {created} ns");
        }
        // The datagram created at 1 s was on R1->R2's wire (1.001 s .. 1.011 s) at t1.
        assert_eq!(r.flows[0].link_losses, 1);
        assert_eq!(r.queues[2].link_losses, 1, "{}", r.queues[2].name);
        // Every other datagram sent up to 2.98 s (later ones are still on their way) arrived,
        // but for one: the one sent at 2 s, on its way round when the link came back, was
        // overtaken by the next one on the short way, and the receiver counts a datagram
        // that a later one overtook as lost.
        let got: Vec<u64> = deliveries(&r).iter().map(|&(c, _)| c).collect();
        let missing: Vec<u64> = (0..299).map(|k| k * 10 * MS).filter(|t| !got.contains(t)).collect();
        assert_eq!(missing, [SEC, 2 * SEC]);
        // The long way was used by the datagrams sent from 1.01 s to 1.99 s (and 2 s's).
        assert_eq!(deliveries(&r).iter().filter(|&&(c, d)| d - c == long).count(), 99);
    }

    #[test]
    fn tcp_over_a_link_that_fails_and_reroutes_is_deterministic_and_conserves_packets() {
        let schedule = vec![
            change(SEC + 3 * MS, |c| c.up = Some(false)),
            change(SEC + 500 * MS, |c| {
                c.up = Some(true);
                c.delay_ns = Some(2 * MS);
                c.rate_bps = Some(20_000_000);
            }),
            change(2 * SEC, |c| c.loss = Some(0.01)),
        ];
        let mut cfg = two_paths(schedule);
        cfg.flows.push(FlowSpec {
            transport: AlgoSpec::named("tcp"),
            cc: Some(AlgoSpec::named("cubic")),
            app: AlgoSpec::named("bulk"),
            ..udp(0, 3, AlgoSpec::named("bulk"))
        });
        cfg.flows.push(FlowSpec { transport: AlgoSpec::named("tcp"), ..udp(3, 0, AlgoSpec::named("bulk")) });
        let (a, b) = (run(&cfg), run(&cfg));
        assert_eq!(format!("{:?}", a.flows), format!("{:?}", b.flows));
        assert_eq!(format!("{:?}", a.queues), format!("{:?}", b.queues));
        assert!(a.flows[1].link_losses > 0 && a.flows[1].bytes_delivered > 0);
        assert!(a.flows[2].bytes_delivered > 0);
    }

    #[test]
    fn a_run_without_changes_is_the_same_with_an_empty_schedule_and_an_idle_one() {
        // A schedule that changes nothing that matters (the loss stays 0) still runs the
        // dynamic code paths; the results are the same as without it.
        let plain = run(&saturated(SEC, Vec::new()));
        let idle = run(&saturated(SEC, vec![change(SEC / 2, |c| c.loss = Some(0.0))]));
        assert_eq!(format!("{:?}", plain.flows), format!("{:?}", idle.flows));
        assert_eq!(format!("{:?}", plain.messages), format!("{:?}", idle.messages));
    }

    #[test]
    fn bad_schedules_are_errors_naming_the_key() {
        let err = |schedule: Vec<LinkChange>| {
            let e = Simulation::validate(&saturated(4 * SEC, schedule)).unwrap_err();
            (e.field, e.message)
        };
        let (field, message) = err(vec![change(5 * SEC, |c| c.up = Some(false))]);
        assert_eq!(field, "links[0].schedule[0].at_ns");
        assert_eq!(message, "5s is after the end of the run (4s)");
        let (field, message) = err(vec![change(2 * SEC, |c| c.up = Some(false)), change(SEC, |c| c.up = Some(true))]);
        assert_eq!(field, "links[0].schedule[1].at_ns");
        assert!(message.contains("before the previous change (2s)"), "{message}");
        assert_eq!(err(vec![change(SEC, |c| c.rate_bps = Some(0))]).0, "links[0].schedule[0].rate_bps");
        assert_eq!(err(vec![change(SEC, |c| c.loss = Some(1.5))]).0, "links[0].schedule[0].loss");
        assert_eq!(err(vec![change(SEC, |c| c.loss = Some(f64::NAN))]).0, "links[0].schedule[0].loss");
        assert_eq!(err(vec![change(SEC, |_| {})]).0, "links[0].schedule[0]");
        // Unknown keys are refused when the configuration is read.
        let json = r#"{"at_ns": 1, "rate": 5}"#;
        assert!(serde_json::from_str::<LinkChange>(json).unwrap_err().to_string().contains("unknown field `rate`"));
    }

    #[test]
    fn a_configuration_without_schedules_serializes_as_before() {
        let cfg = saturated(SEC, Vec::new());
        let json = serde_json::to_string(&cfg.links[0]).unwrap();
        assert!(!json.contains("schedule"), "{json}");
        let with = saturated(SEC, vec![change(1, |c| c.up = Some(false))]);
        let json = serde_json::to_string(&with.links[0]).unwrap();
        assert!(json.ends_with(r#""schedule":[{"at_ns":1,"up":false}]}"#), "{json}");
    }
}
