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
use std::collections::BTreeMap;

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
    name: String,
    group: Option<String>,
    src: u32,
    dst: u32,
    transport: String,
    app: String,
    start: Time,
}

/// The sampled time series.
struct Sampler {
    interval: Time,
    queues: Vec<u32>,
    cwnd_flows: Vec<u32>,
    /// Flows whose cumulative delivered bytes and retransmissions are sampled.
    counter_flows: Vec<u32>,
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
    bottleneck: Option<u32>,
    jain_flows: Vec<u32>,
    /// Networked control loops, and per flow the loop and role it carries messages for.
    control: Vec<ControlLoop>,
    flow_control: Vec<Option<(u32, Role)>>,
    /// Debug-build invariant bookkeeping (zero-sized in release; see `invariants.rs`).
    inv: Invariants,
    /// Test-only: panic once the run reaches this time (see [`Simulation::set_panic_at`]).
    panic_at: Option<Time>,
}

fn build_queue(spec: &AlgoSpec, field: &str, rng: Rng, warmup: Time) -> Result<Queue, ConfigError> {
    let model = find(QUEUES, &spec.kind, |m| m.name, &format!("{field}.kind"))?;
    let params = Params::resolve(field, model.params, &spec.params)?;
    let limit = model.params.iter().any(|p| p.name == "limit").then(|| params.size("limit"));
    Ok(Queue::new(model.name, (model.build)(&params), rng, warmup).with_checks(field, limit))
}

impl Simulation {
    /// Check `cfg` and build the network. Every error names the offending field.
    pub fn new(cfg: &Config) -> Result<Simulation, ConfigError> {
        if cfg.duration_ns == 0 {
            return Err(ConfigError::new("duration_ns", "must be positive"));
        }
        if cfg.warmup_ns >= cfg.duration_ns {
            return Err(ConfigError::new("warmup_ns", "must be shorter than the duration"));
        }
        if cfg.nodes.is_empty() {
            return Err(ConfigError::new("nodes", "at least one node is needed"));
        }
        cfg.check_node_indices()?;
        let mut names = BTreeMap::new();
        for (i, node) in cfg.nodes.iter().enumerate() {
            if names.insert(node.name.as_str(), i).is_some() {
                return Err(ConfigError::new(
                    format!("nodes[{i}].name"),
                    format!("duplicate node name '{}'", node.name),
                ));
            }
        }
        let node_names: Vec<String> = cfg.nodes.iter().map(|n| n.name.clone()).collect();

        // Links.
        let mut links = Vec::with_capacity(2 * cfg.links.len());
        for (i, l) in cfg.links.iter().enumerate() {
            if l.a == l.b {
                return Err(ConfigError::new(format!("links[{i}]"), "a link must join two different nodes"));
            }
            // Link 2 i runs from a to b, 2 i + 1 back (as `route::out_links` numbers them).
            for (dir, (from, to), spec) in [("ab", (l.a, l.b), &l.ab), ("ba", (l.b, l.a), &l.ba)] {
                let index = links.len() as u32;
                let field = format!("links[{i}].{dir}");
                links.push(Self::build_link(cfg, &node_names, index, from, to, spec, &field)?);
            }
        }
        let mut node_processing = Vec::with_capacity(cfg.nodes.len());
        for (i, node) in cfg.nodes.iter().enumerate() {
            let stage = match &node.processing {
                Some(given) => {
                    let p = Params::resolve(&format!("nodes[{i}].processing"), processing::PARAMS, given)?;
                    Processing::from_params(&p, Rng::stream(cfg.seed, Stream::Node(i as u32)))
                }
                None => None,
            };
            node_processing.push(stage.map(Box::new));
        }
        let routes = Routes::of(cfg);

        // Flows and their endpoints.
        let mut flows = Vec::with_capacity(cfg.flows.len());
        let mut endpoints: Vec<Box<dyn Endpoint>> = Vec::with_capacity(2 * cfg.flows.len());
        let mut endpoint_host = Vec::with_capacity(2 * cfg.flows.len());
        let mut listeners: Vec<Vec<u32>> = vec![Vec::new(); cfg.flows.len()];
        for (i, f) in cfg.flows.iter().enumerate() {
            let field = format!("flows[{i}]");
            for (end, v) in [("src", f.src), ("dst", f.dst)] {
                if cfg.nodes[v as usize].kind != NodeKind::Host {
                    return Err(ConfigError::new(
                        format!("{field}.{end}"),
                        format!("node '{}' is a router; flows run between hosts", node_names[v as usize]),
                    ));
                }
            }
            if f.src == f.dst {
                return Err(ConfigError::new(field, "source and destination are the same host"));
            }
            for (from, to) in [(f.src, f.dst), (f.dst, f.src)] {
                if routes.path(from, to).is_none() {
                    return Err(ConfigError::new(
                        field,
                        format!(
                            "no route from '{}' to '{}': they are not connected through routers",
                            node_names[from as usize], node_names[to as usize]
                        ),
                    ));
                }
            }
            let mut rng = Rng::stream(cfg.seed, Stream::Flow(i as u32));
            let start = match f.start_max_ns {
                Some(hi) if hi < f.start_ns => {
                    return Err(ConfigError::new(format!("{field}.start_max_ns"), "window ends before it starts"))
                }
                Some(hi) => rng.range_u64(f.start_ns, hi),
                None => f.start_ns,
            };
            if f.stop_ns.is_some_and(|s| s < start) {
                return Err(ConfigError::new(format!("{field}.stop_ns"), "flow stops before it starts"));
            }
            let app_model = find(APPS, &f.app.kind, |m| m.name, &format!("{field}.app.kind"))?;
            let app_params = Params::resolve(&format!("{field}.app"), app_model.params, &f.app.params)?;
            crate::app::check(app_model.name, &app_params, &format!("{field}.app"))?;
            let app = (app_model.build)(&app_params, start, f.stop_ns, Rng::stream(cfg.seed, Stream::App(i as u32)));
            let id = i as u32;
            if let Some(to) = app.trigger_flow() {
                if to as usize >= cfg.flows.len() || to == id {
                    return Err(ConfigError::new(
                        format!("{field}.app.to"),
                        format!("must name another flow (0..{})", cfg.flows.len()),
                    ));
                }
                listeners[to as usize].push(id);
            }
            let model = find(TRANSPORTS, &f.transport.kind, |m| m.name, &format!("{field}.transport.kind"))?;
            let params = Params::resolve(&format!("{field}.transport"), model.params, &f.transport.params)?;
            let (sender, receiver) =
                (model.build)(TransportArgs { field: &field, flow: id, spec: f, params, app, rng })?;
            endpoints.push(sender);
            endpoints.push(receiver);
            endpoint_host.push(f.src);
            endpoint_host.push(f.dst);
            flows.push(FlowInfo {
                name: f.name.clone().unwrap_or_else(|| i.to_string()),
                group: f.group.clone(),
                src: f.src,
                dst: f.dst,
                transport: f.transport.kind.clone(),
                app: f.app.kind.clone(),
                start,
            });
        }

        let queue_index = |name: &str, field: &str| -> Result<u32, ConfigError> {
            links.iter().position(|l| l.name == name).map(|i| i as u32).ok_or_else(|| {
                ConfigError::new(field, format!("no queue named '{name}' (queues are named 'from->to')"))
            })
        };
        let bottleneck = cfg.bottleneck.as_deref().map(|b| queue_index(b, "bottleneck")).transpose()?;
        let sampler = match cfg.trace.interval_ns {
            Some(interval) if interval > 0 => {
                let queues: Vec<u32> = if cfg.trace.queues.is_empty() {
                    (0..links.len() as u32).filter(|&l| routes.is_router(links[l as usize].from)).collect()
                } else {
                    cfg.trace
                        .queues
                        .iter()
                        .enumerate()
                        .map(|(i, q)| queue_index(q, &format!("trace.queues[{i}]")))
                        .collect::<Result<_, _>>()?
                };
                let cwnd_flows: Vec<u32> = if cfg.trace.cwnd {
                    (0..flows.len() as u32).filter(|&f| endpoints[2 * f as usize].cwnd().is_some()).collect()
                } else {
                    Vec::new()
                };
                let counter_flows: Vec<u32> =
                    if cfg.trace.flow_counters { (0..flows.len() as u32).collect() } else { Vec::new() };
                let columns = vec![Vec::new(); 3 * queues.len() + cwnd_flows.len() + 2 * counter_flows.len()];
                Some(Sampler { interval, queues, cwnd_flows, counter_flows, time: Vec::new(), columns })
            }
            _ => None,
        };
        let jain_flows = match &cfg.jain_flows {
            Some(list) => {
                if let Some(bad) = list.iter().find(|&&f| f as usize >= flows.len()) {
                    return Err(ConfigError::new(
                        "jain_flows",
                        format!("flow {bad} does not exist ({} flows)", flows.len()),
                    ));
                }
                list.clone()
            }
            None => (0..flows.len() as u32).collect(),
        };

        let (control, flow_control) = crate::ncs::build_loops(cfg)?;

        let n_links = links.len();
        let n_endpoints = endpoints.len();
        let inv = Invariants::new(&links);
        let prefetch_next = links.len() * std::mem::size_of::<LinkDir>() > PREFETCH_ABOVE_BYTES;
        let endpoint_links = endpoint_host.iter().map(|&host| routes.only_link(host)).collect();
        let mut sim = Simulation {
            now: 0,
            duration: cfg.duration_ns,
            warmup: cfg.warmup_ns,
            seed: cfg.seed,
            events: EventQueue::new(),
            executed: 0,
            stall_time: Time::MAX,
            stall_since: 0,
            stall_check: 1 << 16,
            stall_events: STALL_EVENTS,
            node_names,
            links,
            routes,
            processing: node_processing,
            flow_stats: (0..flows.len())
                .map(|_| FlowStats { rtt_log: cfg.trace.rtt.then(Vec::new), ..FlowStats::new(cfg.warmup_ns) })
                .collect(),
            ledgers: vec![MessageLedger::default(); flows.len()],
            listeners,
            flows,
            endpoint_links,
            prefetch_next,
            endpoints: endpoints
                .into_iter()
                .zip(endpoint_host)
                .map(|(model, host)| EndpointSlot { model, timer: Timer::default(), host })
                .collect(),
            queue_timers: vec![Timer::default(); n_links],
            queue_events: Vec::new(),
            emitted: Vec::new(),
            wire_packets: PacketPool::default(),
            notices: Vec::new(),
            event_log: cfg.trace.events.then(QueueEventLog::default),
            message_log: cfg.trace.messages.then(MessageLog::default),
            sampler,
            bottleneck,
            jain_flows,
            control,
            flow_control,
            inv,
            panic_at: None,
        };
        for e in 0..n_endpoints {
            sim.arm_endpoint(e);
        }
        for l in 0..n_links {
            sim.arm_queue(l);
        }
        if sim.sampler.is_some() {
            sim.events.push(0, Event::Sample);
        }
        for (l, c) in sim.control.iter().enumerate() {
            if c.next_sample_time() <= sim.duration {
                sim.events.push(c.next_sample_time(), Event::Control(l as u32));
            }
        }
        Ok(sim)
    }

    fn build_link(
        cfg: &Config,
        names: &[String],
        index: u32,
        from: u32,
        to: u32,
        spec: &DirSpec,
        field: &str,
    ) -> Result<LinkDir, ConfigError> {
        if spec.rate_bps == 0 {
            return Err(ConfigError::new(format!("{field}.rate_bps"), "must be positive"));
        }
        if !(0.0..=1.0).contains(&spec.loss) {
            return Err(ConfigError::new(format!("{field}.loss"), "must be a probability in [0, 1]"));
        }
        let queue = build_queue(
            &spec.queue,
            &format!("{field}.queue"),
            Rng::stream(cfg.seed, Stream::Queue(index)),
            cfg.warmup_ns,
        )?;
        Ok(LinkDir {
            name: format!("{}->{}", names[from as usize], names[to as usize]),
            from,
            to,
            rate_bps: spec.rate_bps,
            delay: spec.delay_ns,
            loss: spec.loss,
            queue,
            busy_until: 0,
            last_tx: (0, 0),
            tx_pending: false,
            wire: Default::default(),
            rng: Rng::stream(cfg.seed, Stream::Link(index)),
            tx_bytes: 0,
            busy_ns: 0,
            losses: 0,
            total_losses: 0,
        })
    }

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
                format!("flows[{}] ({}): the {side}'s timer", endpoint / 2, flow.name)
            }
            Event::Queue { link: l, .. } => format!("{}: the discipline's timer", link(l)),
            Event::Sample => "trace: the sampling timer".to_string(),
            Event::Control(c) => format!("control[{c}]: the sensor's timer"),
            Event::Process(n) => format!("node {}: the processing stage", self.node_names[n as usize]),
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

    fn dispatch(&mut self, event: Event) {
        match event {
            Event::TxDone(l) => {
                self.links[l as usize].tx_pending = false;
                self.start_tx(l as usize);
            }
            Event::Arrive { link: l, slot, hop } => {
                let link = &mut self.links[l as usize];
                let next = self.wire_packets.arrive(&mut link.wire, slot);
                self.inv.wire_leave(l as usize, self.now, self.wire_packets.get(slot));
                if let Some(OnWire { arrival, slot, hop }) = next {
                    self.events.push(arrival, Event::Arrive { link: l, slot, hop });
                }
                let to = link.to;
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
    /// index) or onto the next link of its route. Routes are fixed for the run, so a link
    /// works this out when it puts the packet on the wire, and the far end (and the prefetch
    /// before it) reads it from there.
    #[inline]
    fn next_hop(routes: &Routes, node: u32, pkt: &Packet) -> u32 {
        if pkt.dst == node {
            HOP_ENDPOINT | (2 * pkt.flow + !pkt.kind.to_sender() as u32)
        } else {
            let l = routes.next_link(node, pkt.dst);
            debug_assert_ne!(l, NO_ROUTE, "no route from {node} to {}", pkt.dst);
            l
        }
    }

    /// `pkt` reaches endpoint `e` (the sender of flow `e / 2` if `e` is even, its receiver
    /// if odd).
    fn deliver(&mut self, e: usize, pkt: Packet) {
        let f = e / 2;
        self.flow_stats[f].total_arrived += 1;
        if e % 2 == 1 {
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
    }

    /// Record the messages flow `f` delivered or lost, and wake the applications that answer
    /// its messages.
    fn account_messages(&mut self, f: usize) {
        let events = std::mem::take(&mut self.ledgers[f].events);
        for m in &events {
            let s = &mut self.flow_stats[f];
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
                log.flow.push(f as u32);
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
        let link = &mut self.links[l];
        let pkt = self.wire_packets.get(slot);
        let mut lost_datagram = None;
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
            link.total_losses += 1;
            let fs = &mut self.flow_stats[pkt.flow as usize];
            fs.total_lost += 1;
            if measuring {
                link.losses += 1;
                fs.link_losses += 1;
            }
            if pkt.kind.is_datagram() {
                lost_datagram = Some((pkt.flow as usize, pkt.seq));
            }
        } else {
            let arrive = done + link.delay;
            let hop = Self::next_hop(&self.routes, link.to, pkt);
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
                if measuring {
                    fs.queue_drops += 1;
                }
            } else if measuring {
                fs.ecn_marks += 1;
            }
            if let Some(log) = self.event_log.as_mut() {
                log.time_s.push(secs(self.now));
                log.queue.push(self.links[l].name.clone());
                log.flow.push(e.flow);
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
    }

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
        let next = self.now + s.interval;
        if next <= self.duration {
            self.events.push(next, Event::Sample);
        }
    }

    // ----- checks and results -----

    /// Packet conservation over the whole run: every packet injected by an endpoint has
    /// arrived, been dropped or lost, or is still in a queue, on a wire or in a node's
    /// processing stage.
    pub fn check_conservation(&self) -> Result<(), String> {
        let injected: u64 = self.flow_stats.iter().map(|s| s.total_injected).sum();
        let arrived: u64 = self.flow_stats.iter().map(|s| s.total_arrived).sum();
        let lost: u64 = self.flow_stats.iter().map(|s| s.total_lost).sum();
        let held: u64 = self
            .links
            .iter()
            .map(|l| l.queue.len_packets() as u64 + self.wire_packets.on(&l.wire).count() as u64)
            .sum::<u64>()
            + self.processing.iter().flatten().map(|s| s.len() as u64).sum::<u64>();
        if injected == arrived + lost + held {
            Ok(())
        } else {
            Err(format!(
                "packet conservation violated at t={} ns (seed {}): injected {injected} != arrived {arrived} + lost {lost} + in network {held}",
                self.now, self.seed
            ))
        }
    }

    /// The sender endpoint of flow `f`, for inspection.
    pub fn sender(&self, f: usize) -> &dyn Endpoint {
        &*self.endpoints[2 * f].model
    }

    /// The output queue named `from->to`, for whole-run totals and inspection.
    pub fn queue(&self, name: &str) -> Option<&Queue> {
        self.links.iter().find(|l| l.name == name).map(|l| &l.queue)
    }

    /// Statistics of flow `f` so far.
    pub fn flow_stats(&self, f: usize) -> &FlowStats {
        &self.flow_stats[f]
    }

    /// Everything measured, over the window [warm-up, now].
    pub fn results(&mut self) -> Results {
        let now = self.now;
        for l in &mut self.links {
            l.queue.integrate(now);
        }
        let window = now.saturating_sub(self.warmup);
        let window_s = secs(window);
        let per_sec = |x: f64| if window > 0 { x / window_s } else { 0.0 };
        let mean = |sum: u128, n: u64| (n > 0).then(|| sum as f64 / n as f64 / 1e9);

        let flows: Vec<FlowResult> = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, info)| {
                let s = &self.flow_stats[i];
                let mut row = FlowResult {
                    id: i as u32,
                    name: info.name.clone(),
                    group: info.group.clone(),
                    src: self.node_names[info.src as usize].clone(),
                    dst: self.node_names[info.dst as usize].clone(),
                    transport: info.transport.clone(),
                    app: info.app.clone(),
                    start_s: secs(info.start),
                    bytes_delivered: s.bytes_delivered,
                    bytes_received: s.bytes_received,
                    goodput_bps: per_sec(s.bytes_received as f64 * 8.0),
                    packets_sent: s.packets_sent,
                    packets_received: s.packets_received,
                    retransmissions: s.retransmissions,
                    timeouts: s.timeouts,
                    fast_recoveries: s.fast_recoveries,
                    ecn_reductions: s.ecn_reductions,
                    ecn_marks: s.ecn_marks,
                    queue_drops: s.queue_drops,
                    link_losses: s.link_losses,
                    rtt_samples: s.rtt_n,
                    rtt_min_s: s.rtt_min.map(secs),
                    rtt_mean_s: mean(s.rtt_sum, s.rtt_n),
                    rtt_max_s: s.rtt_max.map(secs),
                    delay_mean_s: mean(s.delay_sum, s.delay_n),
                    delay_max_s: s.delay_max.map(secs),
                    messages_generated: s.messages_generated,
                    messages_lost_at_sender: s.messages_lost_at_sender,
                    messages_received: s.messages_received,
                    messages_lost_network: s.messages_lost_network,
                    messages_pending: self.ledgers[i].pending() as u64,
                    message_delay_mean_s: mean(s.message_delay_sum, s.messages_received),
                    message_delay_max_s: s.message_delay_max.map(secs),
                    ..FlowResult::default()
                };
                self.endpoints[2 * i].model.report(&mut row);
                row
            })
            .collect();

        let queues: Vec<QueueResult> = self
            .links
            .iter()
            .map(|l| {
                let s = &l.queue.stats;
                let w = window.max(1) as f64;
                let mean_p = s.area_pkts as f64 / w;
                let mean_b = s.area_bytes as f64 / w;
                let sd = |sq: u128, m: f64| (sq as f64 / w - m * m).max(0.0).sqrt();
                QueueResult {
                    name: l.name.clone(),
                    kind: l.queue.kind.to_string(),
                    from: self.node_names[l.from as usize].clone(),
                    to: self.node_names[l.to as usize].clone(),
                    rate_bps: l.rate_bps,
                    arrivals: s.arrivals,
                    departures: s.departures,
                    drops: s.drops,
                    marks: s.marks,
                    drop_ratio: if s.arrivals > 0 { s.drops as f64 / s.arrivals as f64 } else { 0.0 },
                    mean_len_pkts: mean_p,
                    sd_len_pkts: sd(s.area_pkts_sq, mean_p),
                    mean_len_bytes: mean_b,
                    sd_len_bytes: sd(s.area_bytes_sq, mean_b),
                    max_len_pkts: s.max_len_pkts,
                    mean_sojourn_s: if s.departures > 0 {
                        s.sojourn_sum as f64 / s.departures as f64 / 1e9
                    } else {
                        0.0
                    },
                    mean_drop_sojourn_s: if s.drops > 0 {
                        s.drop_sojourn_sum as f64 / s.drops as f64 / 1e9
                    } else {
                        0.0
                    },
                    max_sojourn_s: secs(s.sojourn_hist.max()),
                    p50_sojourn_s: s.sojourn_hist.quantile(0.5).map_or(0.0, |v| v / 1e9),
                    p99_sojourn_s: s.sojourn_hist.quantile(0.99).map_or(0.0, |v| v / 1e9),
                    tx_bytes: l.tx_bytes,
                    // Busy time inside [warm-up, now]: the part of a transmission still in
                    // progress at `now` is not in the window yet.
                    utilization: if window > 0 {
                        l.busy_ns.saturating_sub(l.busy_until.saturating_sub(now.max(self.warmup))) as f64
                            / window as f64
                    } else {
                        0.0
                    },
                    link_losses: l.losses,
                }
            })
            .collect();

        let mut control = Vec::with_capacity(self.control.len());
        let mut control_traces = (!self.control.is_empty()).then(ControlTraceLog::default);
        for (i, c) in self.control.iter_mut().enumerate() {
            c.advance_to(now);
            control.push(c.result(i as u32));
            if let Some(log) = control_traces.as_mut() {
                c.append_trace(i as u32, log);
            }
        }

        let goodputs: Vec<f64> = self.jain_flows.iter().map(|&f| flows[f as usize].goodput_bps).collect();
        let mut traces = BTreeMap::new();
        if let Some(s) = &self.sampler {
            traces.insert("time_s".to_string(), s.time.clone());
            let mut c = 0;
            for &q in &s.queues {
                let name = &self.links[q as usize].name;
                traces.insert(format!("queue.{name}.len_pkts"), s.columns[c].clone());
                traces.insert(format!("queue.{name}.len_bytes"), s.columns[c + 1].clone());
                traces.insert(format!("queue.{name}.sojourn_s"), s.columns[c + 2].clone());
                c += 3;
            }
            for &f in &s.cwnd_flows {
                traces.insert(format!("flow.{f}.cwnd_bytes"), s.columns[c].clone());
                c += 1;
            }
            for &f in &s.counter_flows {
                traces.insert(format!("flow.{f}.delivered_bytes"), s.columns[c].clone());
                traces.insert(format!("flow.{f}.retransmissions"), s.columns[c + 1].clone());
                c += 2;
            }
        }
        Results {
            seed: self.seed,
            events: self.executed,
            duration_s: secs(now),
            warmup_s: secs(self.warmup),
            jain_index: jain_index(&goodputs),
            bottleneck: self.bottleneck.map(|b| self.links[b as usize].name.clone()),
            utilization: self.bottleneck.map(|b| queues[b as usize].utilization),
            flows,
            queues,
            traces,
            queue_events: self.event_log.clone(),
            messages: self.message_log.clone(),
            rtt_samples: self.rtt_sample_log(),
            control,
            control_traces,
        }
    }

    /// Every flow's RTT samples merged into one log ordered by time, then flow.
    fn rtt_sample_log(&self) -> Option<RttSampleLog> {
        let mut rows: Vec<(Time, u32, Time)> = Vec::new();
        for (f, s) in self.flow_stats.iter().enumerate() {
            rows.extend(s.rtt_log.as_ref()?.iter().map(|&(t, rtt)| (t, f as u32, rtt)));
        }
        // Each flow's log is already in time order; a stable sort by time keeps flows in order.
        rows.sort_by_key(|&(t, f, _)| (t, f));
        let mut log = RttSampleLog::default();
        for (t, f, rtt) in rows {
            log.time_s.push(secs(t));
            log.flow.push(f);
            log.rtt_s.push(secs(rtt));
        }
        Some(log)
    }
}

/// Jain's fairness index (Jain, Chiu, Hawe, "A Quantitative Measure of Fairness and
/// Discrimination for Resource Allocation in Shared Computer Systems", DEC-TR-301, 1984):
/// `(Σx)² / (n Σx²)`; `None` when undefined (no flows, or all zero).
pub fn jain_index(x: &[f64]) -> Option<f64> {
    let sum: f64 = x.iter().sum();
    let sum_sq: f64 = x.iter().map(|v| v * v).sum();
    (sum_sq > 0.0).then(|| sum * sum / (x.len() as f64 * sum_sq))
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
