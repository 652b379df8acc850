//! Flows created while the run goes on (`workload.rs`), and their retirement.
//!
//! A workload's flow takes a free flow index (a *slot*) or a new one; its packets carry the
//! slot, its results its own number (`FlowInfo::id`: after the configured flows, in order of
//! arrival). Once it is over (its transfer delivered, neither end waiting for a timer, none
//! of its packets left in the network) its row of the flows table is written, and the slot
//! is free for the next arrival: the engine's memory follows the flows alive at once. A slot
//! is reused only when no packet of its previous flow can still arrive, so an endpoint never
//! sees another flow's packet.

use super::build::{make_flow, Net};
use super::*;
use crate::config::FlowSpec;
use crate::params::ParamValue;
use crate::workload::Workload;

/// The workloads of `cfg`, checked: their sizes, and a flow on each of their pairs (hosts
/// with a route, the transport and congestion control as configured) made and dropped.
pub(super) fn build_workloads(
    cfg: &Config,
    node_names: &[String],
    routes: &Routes,
    links: &[LinkDir],
) -> Result<Vec<Workload>, ConfigError> {
    let mut workloads = Vec::with_capacity(cfg.workloads.len());
    let kinds: Vec<NodeKind> = cfg.nodes.iter().map(|n| n.kind).collect();
    for (w, spec) in cfg.workloads.iter().enumerate() {
        let field = format!("workloads[{w}]");
        let size = if spec.size_cdf.is_empty() {
            crate::app::transfer::dist_of(&spec.size, &format!("{field}.size"))?
        } else {
            crate::sim::dist::Dist::Fixed(1.0)
        };
        let workload = Workload::new(cfg, w, size)?;
        for k in 0..spec.pairs.len() {
            // The first pair's errors are the workload's (its transport, its congestion
            // control); later pairs can only fail on their hosts and routes.
            let at = if k == 0 { field.clone() } else { format!("{field}.pairs[{k}]") };
            let spec = flow_spec(&workload, k, 1, 0);
            let net = Net { seed: cfg.seed, kinds: &kinds, names: node_names, routes, links };
            make_flow(&net, &at, &spec, (0, 0), 0, Rng::stream(cfg.seed, Stream::Flow(0)))?;
        }
        workloads.push(workload);
    }
    Ok(workloads)
}

/// The configuration of a flow of `workload` on its pair `pair`, transferring `size` bytes
/// from `start`.
fn flow_spec(workload: &Workload, pair: usize, size: u64, start: Time) -> FlowSpec {
    let spec = &workload.spec;
    let (src, dst) = spec.pairs[pair];
    FlowSpec {
        name: None,
        src,
        dst,
        transport: spec.transport.clone(),
        cc: spec.cc.clone(),
        app: AlgoSpec::named(crate::app::transfer::MODEL.name).with("size", ParamValue::Int(size as i64)),
        start_ns: start,
        start_max_ns: None,
        stop_ns: None,
        group: Some(spec.group.clone().unwrap_or_else(|| workload.name.clone())),
    }
}

impl Simulation {
    /// The first arrival of every workload.
    pub(super) fn schedule_arrivals(&mut self) {
        for (w, workload) in self.workloads.iter_mut().enumerate() {
            if let Some(at) = workload.first_arrival() {
                self.events.push(at, Event::Arrival(w as u32));
            }
        }
    }

    /// A flow of workload `w` arrives now: make it in a free slot and start it; schedule the
    /// next arrival.
    pub(super) fn arrive(&mut self, w: usize) {
        let workload = &mut self.workloads[w];
        let arrival = workload.arrive();
        let k = workload.created - 1;
        if let Some(at) = workload.next_arrival(self.now) {
            self.events.push(at, Event::Arrival(w as u32));
        }
        let id = self.next_flow_id;
        self.next_flow_id += 1;
        let slot = self.free_slots.pop().unwrap_or(self.flows.len() as u32);
        let workload = &self.workloads[w];
        let mut spec = flow_spec(workload, arrival.pair, arrival.size, self.now);
        spec.name = Some(format!("{}.{k}", workload.name));
        let field = format!("workloads[{w}]");
        let rng = Rng::stream(self.seed, Stream::Flow(id));
        let net = Net {
            seed: self.seed,
            kinds: &self.node_kinds,
            names: &self.node_names,
            routes: &self.routes,
            links: &self.links,
        };
        let made = make_flow(&net, &field, &spec, (id, slot), self.now, rng)
            .expect("a workload's flows were checked when the simulation was built");
        let (src, dst) = (spec.src, spec.dst);
        let s = slot as usize;
        let stats = FlowStats { rtt_log: self.rtt_logs.then(Vec::new), ..FlowStats::new(self.warmup) };
        if s == self.flows.len() {
            self.flows.push(made.info);
            self.flow_stats.push(stats);
            self.ledgers.push(MessageLedger::default());
            self.listeners.push(Vec::new());
            self.flow_control.push(None);
            for (model, host) in [(made.sender, src), (made.receiver, dst)] {
                self.endpoints.push(EndpointSlot { model, timer: Timer::default(), host });
                self.endpoint_links.push(self.routes.only_link(host));
            }
        } else {
            self.flows[s] = made.info;
            self.flow_stats[s] = stats;
            self.ledgers[s] = MessageLedger::default();
            // The timers stay: events of the slot's previous flow still queued carry tokens
            // the new flow's armings never reuse, and are ignored.
            for (e, model, host) in [(2 * s, made.sender, src), (2 * s + 1, made.receiver, dst)] {
                self.endpoints[e].model = model;
                self.endpoints[e].host = host;
                self.endpoint_links[e] = self.routes.only_link(host);
            }
        }
        if let Some(pcap) = self.pcap.as_mut() {
            pcap.open_flow(slot, (src, dst));
        }
        // Disciplines that tell hosts apart (CAKE) learn the new flow's ends.
        let hosts: Vec<(u32, u32)> = self.flows.iter().map(|f| (f.src, f.dst)).collect();
        self.links.iter_mut().for_each(|l| l.queue.set_flow_hosts(&hosts));
        self.arm_endpoint(2 * s);
        self.arm_endpoint(2 * s + 1);
    }

    /// Retire flow `f` if it is a workload's and it is over: its row is written and its slot
    /// freed.
    #[inline]
    pub(super) fn retire_if_over(&mut self, f: usize) {
        if f >= self.n_configured && self.is_over(f) {
            self.retire(f);
        }
    }

    fn is_over(&self, f: usize) -> bool {
        let s = &self.flow_stats[f];
        let in_network = s.total_injected - s.total_arrived - s.total_lost;
        in_network == 0
            && self.ledgers[f].pending() == 0
            && s.last_message_at > 0
            && self.endpoints[2 * f].model.next_wakeup().is_none()
            && self.endpoints[2 * f + 1].model.next_wakeup().is_none()
            && self.flows[f].id != u32::MAX
    }

    #[cold]
    fn retire(&mut self, f: usize) {
        let row = self.flow_row(f);
        if let Some(log) = self.flow_stats[f].rtt_log.take() {
            self.retired_rtt.extend(log.into_iter().map(|(t, rtt)| (t, row.id, rtt)));
        }
        self.retired.push(row);
        self.flows[f].id = u32::MAX;
        self.free_slots.push(f as u32);
    }

    /// Flow slots in use or free: the most flows alive at once (with the configured ones).
    pub fn flow_slots(&self) -> usize {
        self.flows.len()
    }
}
