//! The simulation: builds the network from a [`Config`], runs the event loop, and reports.
//!
//! Components live in vectors and are addressed by index: link directions (`2i` is link i's
//! a->b direction, `2i+1` its b->a direction), endpoints (`2f` is flow f's sender, `2f+1` its
//! receiver), flows. Events carry indices, never packets or references.

use crate::app::APPS;
use crate::config::{AlgoSpec, Config, DirSpec, NodeKind};
use crate::endpoint::{Cx, Endpoint};
use crate::error::{ConfigError, Stalled, STALL_EVENTS};
use crate::invariants::{self, Invariants};
use crate::messages::{MessageEvent, MessageLedger};
use crate::ncs::{ControlLoop, ControlTraceLog, Role};
use crate::net::link::LinkDir;
use crate::net::pcap::Pcap;
use crate::net::processing::{self, Processing};
use crate::net::route::{Routes, NO_ROUTE};
use crate::packet::{Kind, OnWire, Packet, PacketPool, FLAG_LOST};
use crate::params::Params;
use crate::qdisc::{Queue, QueueEvent, QUEUES};
use crate::registry::find;
use crate::results::{FlowResult, MessageLog, QueueEventLog, QueueResult, Results, RttSampleLog};
use crate::sim::queue::{Event, EventQueue, Timer, TimerAction};
use crate::sim::rng::{Rng, Stream};
use crate::sim::time::{secs, Time};
use crate::stats::FlowStats;
use crate::transport::{TransportArgs, TRANSPORTS};
use crate::vars::VarSpec;
use std::collections::BTreeMap;

mod build;
mod dynamic;
mod report;
mod workload;

pub use report::jain_index;

/// What an endpoint is called for.
#[derive(Clone, Copy)]
enum Call<'a> {
    /// A packet arrived for it.
    Packet(&'a Packet),
    /// Its timer is due.
    Wakeup,
    /// A message its application answers was delivered.
    Trigger,
}

/// Static facts about a flow, for the results.
struct FlowInfo {
    /// Its number in the results: its index for a configured flow; for a workload's, its
    /// number among all flows (`u32::MAX` once it is retired and its index free).
    id: u32,
    name: String,
    group: Option<String>,
    src: u32,
    dst: u32,
    transport: String,
    app: String,
    start: Time,
    /// Bytes its application writes in all, if known (a transfer).
    size: Option<u64>,
    /// Its completion time alone on an idle path (`workload::ideal_fct`), for a transfer.
    ideal: Option<Time>,
}

/// The sampled time series.
struct Sampler {
    interval: Time,
    queues: Vec<u32>,
    cwnd_flows: Vec<u32>,
    /// Flows whose cumulative delivered bytes and retransmissions are sampled.
    counter_flows: Vec<u32>,
    /// Model variables (`trace.flow_vars`): each flow with one of the variables its sender
    /// offers, in column order.
    flow_vars: Vec<(u32, &'static VarSpec)>,
    /// Model variables (`trace.queue_vars`): each traced link direction with one of its
    /// queue's variables, in column order.
    queue_vars: Vec<(u32, &'static VarSpec)>,
    time: Vec<f64>,
    columns: Vec<Vec<f64>>,
}

/// The bit of a hop ([`Simulation::next_hop`]) that says it names an endpoint, not a link.
const HOP_ENDPOINT: u32 = 1 << 31;

/// The size of the links' state above which the engine prefetches for the next event: the
/// second-level cache of one core of the machines this was measured on (1 MiB; AMD EPYC).
const PREFETCH_ABOVE_BYTES: usize = 1 << 20;

/// Ask the memory system for the `lines` cache lines from `p` on. A hint: it never faults,
/// whatever the address, and changes no result (a no-op off x86-64).
#[inline(always)]
fn prefetch<T>(p: *const T, lines: usize) {
    for line in 0..lines {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch reads nothing architecturally and cannot fault.
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>((p as *const i8).wrapping_add(64 * line));
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (p, line);
    }
}

/// An endpoint with what the engine keeps for it, in one cache line: every call into an
/// endpoint reads its pointer and host and re-arms its timer, and with hundreds of flows
/// three separate arrays were three cold lines per call.
#[repr(align(64))]
struct EndpointSlot {
    model: Box<dyn Endpoint>,
    timer: Timer,
    host: u32,
}

/// A simulation ready to run.
pub struct Simulation {
    now: Time,
    duration: Time,
    warmup: Time,
    seed: u64,
    events: EventQueue,
    executed: u64,
    /// Stall guard: every `stall_check` events (a power of two), the instant and event count
    /// of the last check at which time had moved; `stall_events` at one instant stop the run.
    stall_time: Time,
    stall_since: u64,
    stall_check: u64,
    stall_events: u64,
    node_names: Vec<String>,
    node_kinds: Vec<NodeKind>,
    links: Vec<LinkDir>,
    routes: Routes,
    /// Per node: its per-packet processing stage, if it has one (`net/processing.rs`). Boxed:
    /// every packet reaching a node reads its entry, and 8 bytes a node keep the table small.
    processing: Vec<Option<Box<Processing>>>,
    flows: Vec<FlowInfo>,
    flow_stats: Vec<FlowStats>,
    /// Per flow: its application messages.
    ledgers: Vec<MessageLedger>,
    /// Per flow: the flows whose applications answer its delivered messages.
    listeners: Vec<Vec<u32>>,
    endpoints: Vec<EndpointSlot>,
    /// Per endpoint: its host's only outgoing link (`NO_ROUTE` if the host has several),
    /// where what the endpoint sends goes first; a small table read to prefetch that link.
    endpoint_links: Vec<u32>,
    /// Whether to prefetch for the next event ([`Simulation::prefetch_for`]): only when the
    /// links alone outgrow a core's second-level cache: it gains where thousands of link
    /// directions miss the cache and costs where a few links stay cached (docs/performance.md).
    prefetch_next: bool,
    queue_timers: Vec<Timer>,
    /// Scratch buffers reused for every event: drops and marks reported by a queue, packets
    /// emitted by an endpoint.
    queue_events: Vec<QueueEvent>,
    emitted: Vec<Packet>,
    /// The packets on the wires (`LinkDir::wire` holds their slots).
    wire_packets: PacketPool,
    /// Scratch: loss notifications to send back after a queue reported drops.
    notices: Vec<Packet>,
    /// Every drop and mark with its time, when the scenario asks for it.
    event_log: Option<QueueEventLog>,
    /// Every application message, when the scenario asks for it.
    message_log: Option<MessageLog>,
    sampler: Option<Sampler>,
    /// Packet captures of the link directions `trace.pcap` names (`net/pcap.rs`); `None`
    /// without any, so that a run without captures tests one field per transmission.
    pcap: Option<Box<Pcap>>,
    bottleneck: Option<u32>,
    jain_flows: Vec<u32>,
    /// Networked control loops, and per flow the loop and role it carries messages for.
    control: Vec<ControlLoop>,
    flow_control: Vec<Option<(u32, Role)>>,
    /// Open-loop workloads (`workload.rs`): flows made while the run goes on, in flow
    /// indices from `n_configured` on, each reused once its flow is retired.
    workloads: Vec<crate::workload::Workload>,
    n_configured: usize,
    next_flow_id: u32,
    free_slots: Vec<u32>,
    /// The rows of the retired flows, and their RTT samples (time, flow id, RTT) when
    /// `trace.rtt` asks for them.
    retired: Vec<FlowResult>,
    retired_rtt: Vec<(Time, u32, Time)>,
    rtt_logs: bool,
    /// Scratch: the workload flows a queue dropped a packet of.
    lost_flows: Vec<u32>,
    /// Debug-build invariant bookkeeping (zero-sized in release; see `invariants.rs`).
    inv: Invariants,
    /// Scheduled link changes and what they need (`engine/dynamic.rs`); `None` when no link
    /// has a schedule, and then a transmission, arrival or transmitter event tests only this.
    dynamic: Option<Box<dynamic::Dynamic>>,
    /// Test-only: panic once the run reaches this time (see [`Simulation::set_panic_at`]).
    panic_at: Option<Time>,
}

impl Simulation {
    // ----- running -----

    /// Current simulated time.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Configured duration.
    pub fn duration(&self) -> Time {
        self.duration
    }

    /// Master seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Events executed so far.
    pub fn events_executed(&self) -> u64 {
        self.executed
    }

    /// True once the run reached its duration.
    pub fn finished(&self) -> bool {
        self.now >= self.duration
    }

    /// Run every event up to and including time `t` (capped at the duration). Panics if
    /// simulated time stops advancing (see [`Simulation::advance`]).
    pub fn run_until(&mut self, t: Time) {
        if let Err(stall) = self.advance(t, u64::MAX) {
            panic!("{stall}");
        }
    }

    /// Run the events up to and including time `t` (capped at the duration), at most
    /// `max_events` (at least 1) of them: `Ok(true)` once `t` is reached, `Ok(false)` when the budget ran
    /// out first (call again to go on; the result is the same as one call's). A caller that
    /// slices a run by events answers an interrupt within one slice, however dense the
    /// events are in simulated time. `Err` when [`STALL_EVENTS`] events in a row happen at
    /// one instant: a component keeps scheduling at the same time, and the run would never
    /// end.
    pub fn advance(&mut self, t: Time, max_events: u64) -> Result<bool, Stalled> {
        let end = t.min(self.duration);
        if let Some(p) = self.panic_at.filter(|&p| p <= end) {
            self.panic_at = None;
            self.advance(p, u64::MAX)?;
            panic!("test-only panic requested with _panic_at_ns at t={} ns (seed {})", self.now, self.seed);
        }
        let stop = self.executed.saturating_add(max_events);
        let mut reached = true;
        'run: loop {
            // Up to the next multiple of `stall_check` events (a power of two), or the budget.
            let chunk = ((self.executed | (self.stall_check - 1)) + 1).min(stop);
            while self.executed < chunk {
                let Some((time, event)) = self.events.pop_until(end) else { break 'run };
                invariants::time_order(self.now, time, &event);
                self.now = time;
                self.executed += 1;
                if self.prefetch_next {
                    if let Some(next) = self.events.peek_current() {
                        self.prefetch_for(next);
                    }
                }
                self.dispatch(event);
                if cfg!(debug_assertions) && self.executed.is_multiple_of(invariants::CONSERVATION_EVERY) {
                    self.check_flow_conservation();
                }
            }
            if self.executed >= stop {
                // A budget spent exactly at the last event still says "not reached": the
                // next call finds nothing to do and says it.
                reached = false;
                break;
            }
            // Has simulated time moved since the last check? Time never goes back, so the same
            // instant at two checks means every event in between happened at it.
            if self.now != self.stall_time {
                (self.stall_time, self.stall_since) = (self.now, self.executed);
            } else if self.executed - self.stall_since >= self.stall_events {
                let next = self.events.peek_current().map_or_else(|| "none".to_string(), |e| self.describe(e));
                return Err(Stalled { time: self.now, events: self.executed - self.stall_since, next });
            }
        }
        if reached {
            self.now = self.now.max(end);
        }
        for link in &mut self.links {
            link.queue.settle();
        }
        self.check_flow_conservation();
        Ok(reached)
    }

    /// What `event` is, in the scenario's names, for an error message.
    fn describe(&self, event: Event) -> String {
        let link =
            |l: u32| self.links.get(l as usize).map_or_else(|| format!("link {l}"), |l| format!("queue {}", l.name));
        match event {
            Event::TxDone(l) => format!("{}: a transmission ends", link(l)),
            Event::Arrive { link: l, .. } => format!("{}: a packet arrives at the far end", link(l)),
            Event::Endpoint { endpoint, .. } => {
                let side = if endpoint % 2 == 0 { "sender" } else { "receiver" };
                let flow = &self.flows[endpoint as usize / 2];
                format!("flows[{}] ({}): the {side}'s timer", flow.id, flow.name)
            }
            Event::Queue { link: l, .. } => format!("{}: the discipline's timer", link(l)),
            Event::Sample => "trace: the sampling timer".to_string(),
            Event::Control(c) => format!("control[{c}]: the sensor's timer"),
            Event::Process(n) => format!("node {}: the processing stage", self.node_names[n as usize]),
            Event::LinkChange(k) => self.describe_change(k),
            Event::Arrival(w) => format!("workloads[{w}]: a flow arrives"),
        }
    }

    /// Debug builds: per-flow packet conservation, counting the packets held in processing
    /// stages (`invariants::flow_conservation`; nothing in release builds).
    #[inline(always)]
    fn check_flow_conservation(&self) {
        let on_wires = self.links.iter().flat_map(|l| self.wire_packets.on(&l.wire));
        let elsewhere = self.processing.iter().flatten().flat_map(|s| s.packets());
        invariants::flow_conservation(self.now, self.seed, &self.flow_stats, &self.links, on_wires, elsewhere);
    }

    /// Test-only: make the run panic at time `t`, after the events up to `t`, whatever the
    /// slices `run_until` is called with (honoured in every build, so that the Python
    /// bindings' panic reporting can be tested; never set it otherwise).
    #[doc(hidden)]
    pub fn set_panic_at(&mut self, t: Option<Time>) {
        self.panic_at = t;
    }

    /// Test-only: how many events in a row at one instant stop the run (default
    /// [`STALL_EVENTS`]), so that the guard can be tested on a scenario that advances.
    #[doc(hidden)]
    pub fn set_stall_events(&mut self, n: u64) {
        self.stall_events = n;
        self.stall_check = 1;
    }

    /// Test-only: prefetch for the next event or not, whatever the network's size (the
    /// choice made in `new` is [`Simulation::prefetch_for`]'s rule; it never changes a
    /// result, which tests check by running both ways).
    #[doc(hidden)]
    pub fn set_prefetch(&mut self, on: bool) {
        self.prefetch_next = on;
    }

    /// The packet captures (`trace.pcap`) so far: per traced link direction, by name, the
    /// bytes of a pcap file (`net/pcap.rs`); empty without captures.
    pub fn pcap(&self) -> BTreeMap<String, Vec<u8>> {
        self.pcap.as_ref().map(|p| p.files()).unwrap_or_default()
    }

    /// Run to the end.
    pub fn run(&mut self) {
        self.run_until(self.duration);
    }

    /// Ask the memory system for what `event`, the next to run, reads first. With hundreds
    /// of flows its link, packet and endpoint are rarely cached, and each of these reads
    /// decides what the event reads next, so their misses add up one after the other; asked
    /// for while the current event runs, they overlap with it.
    #[inline(always)]
    fn prefetch_for(&self, event: Event) {
        match event {
            Event::Arrive { link, slot, hop } => {
                prefetch(self.links.as_ptr().wrapping_add(link as usize), 1);
                prefetch(self.wire_packets.slot_ptr(slot), 2);
                if hop & HOP_ENDPOINT != 0 {
                    let e = (hop & !HOP_ENDPOINT) as usize;
                    prefetch(self.endpoints.as_ptr().wrapping_add(e), 1);
                    prefetch(self.flow_stats.as_ptr().wrapping_add(e / 2), 1);
                    // Where its answer goes (an ACK, the next segments).
                    if let Some(&out) = self.endpoint_links.get(e).filter(|&&out| out != NO_ROUTE) {
                        prefetch(self.links.as_ptr().wrapping_add(out as usize), 2);
                    }
                } else {
                    // An enqueue reads the link's first line and the queue's pass-through
                    // part in the second (`layout_keeps_the_hop_in_two_cache_lines`).
                    prefetch(self.links.as_ptr().wrapping_add(hop as usize), 2);
                }
            }
            Event::TxDone(link) => prefetch(self.links.as_ptr().wrapping_add(link as usize), 1),
            Event::Endpoint { endpoint, .. } => prefetch(self.endpoints.as_ptr().wrapping_add(endpoint as usize), 1),
            _ => {}
        }
    }

    #[inline(always)]
    fn dispatch(&mut self, event: Event) {
        match event {
            Event::TxDone(l) => {
                if self.dynamic.is_some() && !self.tx_done_while_up(l as usize) {
                    return;
                }
                self.links[l as usize].tx_pending = false;
                self.start_tx(l as usize);
            }
            Event::Arrive { link: l, slot, hop } => {
                let (to, hop) = if self.dynamic.is_some() {
                    match self.arrive_changing(l, slot) {
                        Some(to_hop) => to_hop,
                        None => return,
                    }
                } else {
                    let link = &mut self.links[l as usize];
                    let next = self.wire_packets.arrive(&mut link.wire, slot);
                    self.inv.wire_leave(l as usize, self.now, self.wire_packets.get(slot));
                    if let Some(OnWire { arrival, slot, hop }) = next {
                        self.events.push(arrival, Event::Arrive { link: l, slot, hop });
                    }
                    (link.to, hop)
                };
                self.receive(to, slot, hop);
            }
            Event::Endpoint { endpoint, token } => {
                match self.endpoints[endpoint as usize].timer.fired(self.now, token) {
                    TimerAction::Fire => self.call_endpoint(endpoint as usize, Call::Wakeup),
                    TimerAction::Schedule(t, tok) => self.events.push(t, Event::Endpoint { endpoint, token: tok }),
                    TimerAction::None => {}
                }
            }
            Event::Queue { link, token } => match self.queue_timers[link as usize].fired(self.now, token) {
                TimerAction::Fire => {
                    let l = link as usize;
                    self.links[l].queue.on_wakeup(self.now, &mut self.queue_events);
                    self.account_queue_events(l);
                    self.arm_queue(l);
                    self.kick(l);
                }
                TimerAction::Schedule(t, tok) => self.events.push(t, Event::Queue { link, token: tok }),
                TimerAction::None => {}
            },
            Event::Sample => self.sample(),
            Event::Control(l) => self.control_sample(l as usize),
            Event::Process(node) => self.release_processed(node),
            Event::LinkChange(k) => self.link_change(k),
            Event::Arrival(w) => self.arrive(w as usize),
        }
    }

    // ----- node processing (net/processing.rs) -----

    /// Hold `pkt` in `node`'s processing stage, if the node has one; false if it has none.
    #[inline]
    fn hold_for_processing(&mut self, node: u32, pkt: Packet) -> bool {
        let Some(stage) = self.processing[node as usize].as_mut() else { return false };
        if let Some(at) = stage.admit(self.now, pkt) {
            self.events.push(at, Event::Process(node));
        }
        true
    }

    /// The head of `node`'s processing stage is done: deliver it or send it on its way.
    fn release_processed(&mut self, node: u32) {
        let Some((pkt, next)) = self.processing[node as usize].as_mut().and_then(|s| s.release(self.now)) else {
            debug_assert!(false, "a processing event without a packet at node {node}");
            return;
        };
        if let Some(at) = next {
            self.events.push(at, Event::Process(node));
        }
        self.deliver_or_forward(node, pkt);
    }

    // ----- end of node processing -----

    /// The packet in pool slot `slot` reaches `node`, bound for `hop` from there
    /// ([`Simulation::next_hop`]): its processing stage first, if the node has one; else its
    /// endpoint, or the next link, which takes it from its slot.
    fn receive(&mut self, node: u32, slot: u32, hop: u32) {
        debug_assert_eq!(
            hop,
            Self::next_hop(&self.routes, node, self.wire_packets.get(slot)),
            "a packet at node {node}"
        );
        if self.processing[node as usize].is_some() {
            let pkt = self.wire_packets.take(slot);
            let held = self.hold_for_processing(node, pkt);
            debug_assert!(held);
        } else if hop & HOP_ENDPOINT != 0 {
            let pkt = self.wire_packets.take(slot);
            self.deliver((hop & !HOP_ENDPOINT) as usize, pkt);
        } else {
            self.forward(hop as usize, slot);
        }
    }

    /// A packet leaves `node`'s processing stage: deliver it to its endpoint there or enqueue
    /// it on the next link.
    fn deliver_or_forward(&mut self, node: u32, pkt: Packet) {
        let hop = Self::next_hop(&self.routes, node, &pkt);
        if hop & HOP_ENDPOINT != 0 {
            self.deliver((hop & !HOP_ENDPOINT) as usize, pkt);
        } else {
            self.enqueue(hop as usize, pkt);
        }
    }

    /// Where `pkt` goes from `node`: to its endpoint there (`HOP_ENDPOINT` and the endpoint's
    /// index) or onto the next link of its route. Routes are fixed for the run unless links
    /// change (`engine/dynamic.rs`), so a link works this out when it puts the packet on the
    /// wire, and the far end (and the prefetch before it) reads it from there; in a run
    /// with changes the far end works it out again on arrival.
    #[inline]
    fn next_hop(routes: &Routes, node: u32, pkt: &Packet) -> u32 {
        let l = Self::route_hop(routes, node, pkt);
        debug_assert_ne!(l, NO_ROUTE, "no route from {node} to {}", pkt.dst);
        l
    }

    /// [`Simulation::next_hop`], `NO_ROUTE` when there is none.
    #[inline]
    fn route_hop(routes: &Routes, node: u32, pkt: &Packet) -> u32 {
        if pkt.dst == node {
            HOP_ENDPOINT | (2 * pkt.flow + !pkt.kind.to_sender() as u32)
        } else {
            routes.next_link(node, pkt.dst)
        }
    }

    /// `pkt` reaches endpoint `e` (the sender of flow `e / 2` if `e` is even, its receiver
    /// if odd).
    fn deliver(&mut self, e: usize, pkt: Packet) {
        let f = e / 2;
        self.flow_stats[f].total_arrived += 1;
        // A TCP sender's header-only segments (SYN, its ACKs, FIN: `handshake`) are not data.
        if e % 2 == 1 && pkt.payload != 0 {
            self.flow_stats[f].received(self.now, self.now - pkt.ts);
        }
        self.call_endpoint(e, Call::Packet(&pkt));
    }

    /// Hand a packet, a wakeup or a trigger to an endpoint, then send what it emitted, act on
    /// the messages it delivered, and re-arm it.
    fn call_endpoint(&mut self, e: usize, call: Call) {
        let mut out = std::mem::take(&mut self.emitted);
        let f = e / 2;
        {
            let mut cx =
                Cx { now: self.now, out: &mut out, stats: &mut self.flow_stats[f], messages: &mut self.ledgers[f] };
            match call {
                Call::Packet(p) => self.endpoints[e].model.on_packet(p, &mut cx),
                Call::Wakeup => self.endpoints[e].model.on_wakeup(&mut cx),
                Call::Trigger => self.endpoints[e].model.on_app_trigger(&mut cx),
            }
        }
        let host = self.endpoints[e].host;
        self.flow_stats[f].total_injected += out.len() as u64;
        // Checked once per call: most hosts have no processing stage, and the packet is not
        // copied into `hold_for_processing` then.
        let staged = self.processing[host as usize].is_some();
        for p in out.drain(..) {
            if staged && self.hold_for_processing(host, p) {
                continue;
            }
            let l = self.routes.next_link(host, p.dst);
            self.enqueue(l as usize, p);
        }
        self.emitted = out;
        self.arm_endpoint(e);
        // Messages complete only where they are delivered, at the receiving end (and in
        // `lose_datagram`): a sender's call leaves its flow's ledger untouched.
        debug_assert!(e % 2 == 1 || self.ledgers[f].events.is_empty(), "flow {f}: its sender completed a message");
        if e % 2 == 1 && !self.ledgers[f].events.is_empty() {
            self.account_messages(f);
        }
        self.retire_if_over(f);
    }

    /// Record the messages flow `f` delivered or lost, and wake the applications that answer
    /// its messages.
    fn account_messages(&mut self, f: usize) {
        let events = std::mem::take(&mut self.ledgers[f].events);
        for m in &events {
            let s = &mut self.flow_stats[f];
            if !m.lost {
                s.last_message_at = m.at;
            }
            if s.measuring(m.at) {
                if m.lost {
                    s.messages_lost_network += 1;
                } else {
                    let delay = m.at - m.created;
                    s.messages_received += 1;
                    s.message_delay_sum += delay as u128;
                    s.message_delay_max = Some(s.message_delay_max.map_or(delay, |d| d.max(delay)));
                }
            }
            if let Some(log) = self.message_log.as_mut() {
                log.flow.push(self.flows[f].id);
                log.index.push(m.index);
                log.created_s.push(secs(m.created));
                log.delivered_s.push((!m.lost).then(|| secs(m.at)));
                log.delay_s.push((!m.lost).then(|| secs(m.at - m.created)));
                log.lost.push(m.lost);
            }
            if let Some((l, role)) = self.flow_control[f] {
                self.control_message(l as usize, role, *m);
            }
            if !m.lost {
                for k in 0..self.listeners[f].len() {
                    let listener = self.listeners[f][k] as usize;
                    self.call_endpoint(2 * listener, Call::Trigger);
                }
            }
        }
        // Give the buffer back so that its capacity is reused.
        let mut events = events;
        events.clear();
        if self.ledgers[f].events.is_empty() {
            self.ledgers[f].events = events;
        }
    }

    /// The sensor of loop `l` samples: an ideal loop acts at once, a networked one sends the
    /// sample on its sensor flow.
    fn control_sample(&mut self, l: usize) {
        let now = self.now;
        let sample = self.control[l].take_sample(now);
        match self.control[l].sensor_flow {
            None => {
                if let Some(c) = self.control[l].compute(sample) {
                    self.control[l].apply(c, now);
                }
            }
            Some(f) => {
                // Registered before the write: a datagram dropped on its first link is
                // reported lost within the write itself.
                let index = self.ledgers[f as usize].messages_written();
                self.control[l].sample_sent(index, sample);
                if self.write_control_message(f as usize).is_none() {
                    self.control[l].unsend_sample(index);
                }
            }
        }
        let next = self.control[l].next_sample_time();
        if next <= self.duration && next > now {
            self.events.push(next, Event::Control(l as u32));
        }
    }

    /// A message of a flow carrying loop `l`'s samples or controls was delivered or lost.
    fn control_message(&mut self, l: usize, role: Role, m: MessageEvent) {
        match role {
            Role::Sensor => {
                if let Some(c) = self.control[l].sample_message(m.index, m.lost) {
                    if let Some(f) = self.control[l].actuator_flow {
                        let index = self.ledgers[f as usize].messages_written();
                        self.control[l].control_sent(index, c);
                        if self.write_control_message(f as usize).is_none() {
                            self.control[l].unsend_control(index);
                        }
                    }
                }
            }
            Role::Actuator => self.control[l].control_message(m.index, m.lost, self.now),
        }
    }

    /// Let flow `f`'s `ncs` application write one message; its ledger index, if it wrote one
    /// (not before the flow's start or after its stop). Nothing is delivered within this call
    /// (packets reach the far end through link events), but a datagram dropped by the first
    /// queue or link is reported lost within it, so callers register the message first.
    fn write_control_message(&mut self, f: usize) -> Option<u64> {
        let before = self.ledgers[f].messages_written();
        self.call_endpoint(2 * f, Call::Trigger);
        (self.ledgers[f].messages_written() > before).then_some(before)
    }

    fn arm_endpoint(&mut self, e: usize) {
        let slot = &mut self.endpoints[e];
        let wake = slot.model.next_wakeup().map(|t| t.max(self.now));
        if let TimerAction::Schedule(t, token) = slot.timer.set(wake) {
            self.events.push(t, Event::Endpoint { endpoint: e as u32, token });
        }
    }

    fn arm_queue(&mut self, l: usize) {
        let wake = self.links[l].queue.next_wakeup().map(|t| t.max(self.now));
        if let TimerAction::Schedule(t, token) = self.queue_timers[l].set(wake) {
            self.events.push(t, Event::Queue { link: l as u32, token });
        }
    }

    /// Send `pkt` on over link `l`: at once if the link passes it ([`LinkDir::passes`]),
    /// else through its queue.
    fn enqueue(&mut self, l: usize, mut pkt: Packet) {
        if self.links[l].passes(self.now, &mut pkt) {
            let slot = self.wire_packets.put(pkt);
            self.transmit(l, slot, false);
        } else {
            self.queue_packet(l, pkt);
        }
    }

    /// Send the packet in pool slot `slot` on over link `l`, as [`Simulation::enqueue`] does;
    /// a packet the link passes goes onto its wire without leaving the slot. This is a
    /// router's most common hop, and the packet is not copied out of the pool and back in.
    fn forward(&mut self, l: usize, slot: u32) {
        if self.links[l].passes(self.now, self.wire_packets.get_mut(slot)) {
            self.transmit(l, slot, false);
        } else {
            let pkt = self.wire_packets.take(slot);
            self.queue_packet(l, pkt);
        }
    }

    /// Offer `pkt` to link `l`'s queue and start the transmitter if it is free.
    fn queue_packet(&mut self, l: usize, pkt: Packet) {
        self.links[l].queue.enqueue(self.now, pkt, &mut self.queue_events);
        self.account_queue_events(l);
        self.kick(l);
    }

    /// Start the transmitter if it is idle, or make sure it will look at the queue when it
    /// becomes free.
    fn kick(&mut self, l: usize) {
        let link = &mut self.links[l];
        if link.tx_pending || link.queue.len_packets() == 0 {
            return;
        }
        if self.now >= link.busy_until {
            self.start_tx(l);
        } else {
            link.tx_pending = true;
            let at = link.busy_until;
            self.events.push(at, Event::TxDone(l as u32));
        }
    }

    /// The transmitter is free: take the next packet and put it on the wire.
    fn start_tx(&mut self, l: usize) {
        if let Some(pkt) = self.links[l].queue.dequeue(self.now, &mut self.queue_events) {
            let more = self.links[l].queue.len_packets() > 0;
            let slot = self.wire_packets.put(pkt);
            self.transmit(l, slot, more);
        }
        self.account_queue_events(l);
        self.arm_queue(l);
    }

    /// Serialize the packet in pool slot `slot` on link `l` from now on (the transmitter is
    /// free) and put it on the wire, or lose it to a wire error; `more` says whether packets
    /// wait in the queue (the caller knows, and a pass-through need not read the
    /// discipline's line to find out).
    fn transmit(&mut self, l: usize, slot: u32, more: bool) {
        let now = self.now;
        // The packet's first bit goes on the wire now: a traced link direction records it.
        if let Some(pcap) = self.pcap.as_deref_mut() {
            pcap.record(l, now, self.wire_packets.get(slot));
        }
        let link = &mut self.links[l];
        let pkt = self.wire_packets.get(slot);
        let mut lost_datagram = None;
        let mut lost_flow = None;
        let done = now + link.tx_time(pkt.size);
        link.busy_until = done;
        let measuring = now >= self.warmup;
        if measuring {
            link.tx_bytes += pkt.size as u64;
        }
        if done > self.warmup {
            link.busy_ns += done - now.max(self.warmup);
        }
        if link.loss > 0.0 && link.rng.chance(link.loss) {
            let pkt = self.wire_packets.take(slot);
            lost_datagram = dynamic::charge_wire_loss(link, &mut self.flow_stats[pkt.flow as usize], &pkt, measuring);
            lost_flow = Some(pkt.flow as usize);
        } else {
            let (arrive, hop) = if self.dynamic.is_some() {
                dynamic::wire_entry(link, done, &self.routes, pkt)
            } else {
                (done + link.delay, Self::next_hop(&self.routes, link.to, pkt))
            };
            self.inv.wire_enter(l, now, arrive, pkt);
            if self.wire_packets.send(&mut link.wire, slot, arrive, hop) {
                self.events.push(arrive, Event::Arrive { link: l as u32, slot, hop });
            }
        }
        debug_assert_eq!(more, link.queue.len_packets() > 0, "link {l}: whether packets wait behind this one");
        if more {
            link.tx_pending = true;
            self.events.push(done, Event::TxDone(l as u32));
        }
        if let Some((f, seq)) = lost_datagram {
            self.lose_datagram(f, seq);
        }
        if let Some(f) = lost_flow {
            self.retire_if_over(f);
        }
    }

    /// Datagram `seq` of flow `f` was lost in the network: its message is lost on the network
    /// (a datagram is never retransmitted).
    fn lose_datagram(&mut self, f: usize, seq: u64) {
        self.ledgers[f].lose_datagram(self.now, seq);
        if !self.ledgers[f].events.is_empty() {
            debug_assert!(self.ledgers[f].events.iter().all(|m| m.lost), "a loss delivers nothing");
            self.account_messages(f);
        }
    }

    /// Charge the drops and marks queue `l` just reported to their flows (and log them).
    #[inline]
    fn account_queue_events(&mut self, l: usize) {
        // Called after every enqueue and transmission; most of them drop and mark nothing.
        if !self.queue_events.is_empty() {
            self.charge_queue_events(l);
        }
    }

    /// The work of `account_queue_events` when there is some.
    fn charge_queue_events(&mut self, l: usize) {
        let measuring = self.now >= self.warmup;
        let node = self.links[l].from;
        let mut events = std::mem::take(&mut self.queue_events);
        for e in events.drain(..) {
            if e.kind.is_drop() && e.packet.is_datagram() {
                self.lose_datagram(e.flow as usize, e.seq);
            }
            let fs = &mut self.flow_stats[e.flow as usize];
            if e.kind.is_drop() {
                fs.total_lost += 1;
                if e.flow as usize >= self.n_configured {
                    self.lost_flows.push(e.flow);
                }
                if measuring {
                    fs.queue_drops += 1;
                }
            } else if measuring {
                fs.ecn_marks += 1;
            }
            if let Some(log) = self.event_log.as_mut() {
                log.time_s.push(secs(self.now));
                log.queue.push(self.links[l].name.clone());
                log.flow.push(self.flows[e.flow as usize].id);
                log.event.push(e.kind.name());
            }
            // E-DCTCP: a router returns the header of a dropped segment that asked for it.
            if let (Some(n), true) = (e.notice, self.routes.is_router(node)) {
                self.notices.push(Packet {
                    flow: e.flow,
                    dst: self.flows[e.flow as usize].src,
                    size: n.header,
                    seq: n.seq,
                    ts: n.ts,
                    kind: Kind::TcpAck,
                    flags: FLAG_LOST,
                    ..Packet::default()
                });
            }
        }
        if !self.notices.is_empty() {
            // Notices are ACK-kind packets and never carry a notice request themselves, so
            // this recursion is one level deep.
            let mut notices = std::mem::take(&mut self.notices);
            for p in notices.drain(..) {
                let next = self.routes.next_link(node, p.dst);
                if next != NO_ROUTE {
                    self.flow_stats[p.flow as usize].total_injected += 1;
                    self.enqueue(next as usize, p);
                }
            }
            self.notices = notices;
        }
        self.queue_events = events;
        // A workload's flow may be over once its last packet is dropped.
        while let Some(f) = self.lost_flows.pop() {
            self.retire_if_over(f as usize);
        }
    }

    /// Kept out of the event loop: it runs once per trace interval.
    #[cold]
    #[inline(never)]
    fn sample(&mut self) {
        let Some(s) = self.sampler.as_mut() else { return };
        s.time.push(secs(self.now));
        let mut c = 0;
        for &q in &s.queues {
            let queue = &self.links[q as usize].queue;
            s.columns[c].push(queue.len_packets() as f64);
            s.columns[c + 1].push(queue.len_bytes() as f64);
            s.columns[c + 2].push(secs(queue.last_sojourn()));
            c += 3;
        }
        for &f in &s.cwnd_flows {
            s.columns[c].push(self.endpoints[2 * f as usize].model.cwnd().unwrap_or(0) as f64);
            c += 1;
        }
        for &f in &s.counter_flows {
            let fs = &self.flow_stats[f as usize];
            s.columns[c].push(fs.bytes_delivered as f64);
            s.columns[c + 1].push(fs.retransmissions as f64);
            c += 2;
        }
        for &(f, v) in &s.flow_vars {
            s.columns[c].push(self.endpoints[2 * f as usize].model.var(v.name).unwrap_or(f64::NAN));
            c += 1;
        }
        for &(q, v) in &s.queue_vars {
            s.columns[c].push(self.links[q as usize].queue.var(v.name).unwrap_or(f64::NAN));
            c += 1;
        }
        let next = self.now + s.interval;
        if next <= self.duration {
            self.events.push(next, Event::Sample);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endpoint_slot_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<EndpointSlot>(), 64);
        assert_eq!(std::mem::align_of::<EndpointSlot>(), 64);
    }

    #[test]
    fn jain_index_matches_the_reference_vectors() {
        assert_eq!(jain_index(&[1.0, 1.0, 1.0, 1.0]), Some(1.0));
        assert_eq!(jain_index(&[1.0, 0.0, 0.0, 0.0]), Some(0.25));
        assert!((jain_index(&[2.0, 1.0]).unwrap() - 0.9).abs() < 1e-12);
        assert_eq!(jain_index(&[0.0, 0.0]), None);
        assert_eq!(jain_index(&[]), None);
    }
}
