//! Building a simulation from its configuration: every check names the offending field.

use super::workload::build_workloads;
use super::*;
use crate::config::FlowSpec;
use crate::vars::{OfferedVars, COUNTER_COLUMNS, CWND_COLUMN, QUEUE_COLUMNS, QUEUE_VARS};

/// At most this many names in the list of what is allowed of an error message.
const LISTED_NAMES: usize = 12;

/// `names` joined by ", ", the first `LISTED_NAMES` of them then "...".
fn listed<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let mut all: Vec<&str> = names.collect();
    let more = all.len() > LISTED_NAMES;
    all.truncate(LISTED_NAMES);
    if more {
        all.push("...");
    }
    all.join(", ")
}

/// A time in whole seconds, milliseconds, microseconds or nanoseconds ("5s", "1500ms"), as
/// scenario files write it.
pub(super) fn show_time(ns: Time) -> String {
    let units = [("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)];
    match units.iter().find(|(_, f)| ns > 0 && ns.is_multiple_of(*f)) {
        Some((unit, f)) => format!("{}{unit}", ns / f),
        None if ns == 0 => "0s".to_string(),
        None => format!("{ns}ns"),
    }
}

fn build_queue(spec: &AlgoSpec, field: &str, rng: Rng, warmup: Time) -> Result<Queue, ConfigError> {
    if let Some(source) = &spec.external {
        let disc = crate::external::queue_disc(spec, source, field)?;
        return Ok(Queue::new(crate::external::intern(&spec.kind), disc, rng, warmup).with_checks(field, None));
    }
    let model = find(QUEUES, &spec.kind, |m| m.name, &format!("{field}.kind"))?;
    let params = Params::resolve(field, model.params, &spec.params)?;
    let limit = model.params.iter().any(|p| p.name == "limit").then(|| params.size("limit"));
    Ok(Queue::new(model.name, (model.build)(&params), rng, warmup).with_checks(field, limit))
}

impl Simulation {
    /// Every check of `new`, for a caller that only wants to know whether (and why not) `cfg`
    /// can be simulated. The checks are interleaved with the making of the parts (a transport
    /// or an app checks its parameters as it is made), so the parts are made and dropped; the
    /// first events, whose scheduling is most of the cost for many flows, are not.
    pub fn validate(cfg: &Config) -> Result<(), ConfigError> {
        Simulation::assemble(cfg).map(drop)
    }

    /// Check `cfg`, build the network and schedule the first events. Every error names the
    /// offending field.
    pub fn new(cfg: &Config) -> Result<Simulation, ConfigError> {
        let mut sim = Simulation::assemble(cfg)?;
        sim.schedule_first_events();
        Ok(sim)
    }

    /// Check `cfg` and make every part of the simulation; nothing is scheduled yet.
    fn assemble(cfg: &Config) -> Result<Simulation, ConfigError> {
        let node_names = check_run(cfg)?;
        let mut links = build_links(cfg, &node_names)?;
        let node_processing = build_processing(cfg)?;
        let routes = Routes::of(cfg);
        let FlowParts { flows, endpoints, endpoint_host, listeners } = build_flows(cfg, &node_names, &routes, &links)?;
        let workloads = build_workloads(cfg, &node_names, &routes, &links)?;
        let bottleneck = cfg.bottleneck.as_deref().map(|b| queue_index(&links, b, "bottleneck")).transpose()?;
        let sampler = build_sampler(cfg, &links, &routes, &endpoints)?;
        let pcap = build_pcap(cfg, &links, &flows)?;
        let jain_flows = check_jain_flows(cfg, flows.len())?;
        let (control, flow_control) = crate::ncs::build_loops(cfg)?;
        let dynamic = dynamic::build_dynamic(cfg)?;

        // Disciplines that tell hosts apart (CAKE) learn each flow's two ends.
        let flow_hosts: Vec<(u32, u32)> = flows.iter().map(|f| (f.src, f.dst)).collect();
        links.iter_mut().for_each(|l| l.queue.set_flow_hosts(&flow_hosts));
        let n_links = links.len();
        let inv = Invariants::new(&links);
        let prefetch_next = links.len() * std::mem::size_of::<LinkDir>() > PREFETCH_ABOVE_BYTES;
        let endpoint_links = endpoint_host.iter().map(|&host| routes.only_link(host)).collect();
        Ok(Simulation {
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
            node_kinds: cfg.nodes.iter().map(|n| n.kind).collect(),
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
            pcap,
            bottleneck,
            jain_flows,
            control,
            flow_control,
            n_configured: cfg.flows.len(),
            next_flow_id: cfg.flows.len() as u32,
            workloads,
            free_slots: Vec::new(),
            retired: Vec::new(),
            retired_rtt: Vec::new(),
            rtt_logs: cfg.trace.rtt,
            lost_flows: Vec::new(),
            inv,
            dynamic,
            panic_at: None,
        })
    }

    /// Schedule the link changes, arm every endpoint and queue, and the sampler's and the
    /// control loops' first events.
    fn schedule_first_events(&mut self) {
        self.schedule_link_changes();
        for e in 0..self.endpoints.len() {
            self.arm_endpoint(e);
        }
        for l in 0..self.links.len() {
            self.arm_queue(l);
        }
        if self.sampler.is_some() {
            self.events.push(0, Event::Sample);
        }
        self.schedule_arrivals();
        for (l, c) in self.control.iter().enumerate() {
            if c.next_sample_time() <= self.duration {
                self.events.push(c.next_sample_time(), Event::Control(l as u32));
            }
        }
    }
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
        up: true,
        tx_event_while_down: false,
        last_arrival: 0,
    })
}

/// The run's length and the nodes: a positive duration, a warm-up inside it, at least one
/// node, indices in range and unique names. Returns the node names.
fn check_run(cfg: &Config) -> Result<Vec<String>, ConfigError> {
    if cfg.duration_ns == 0 {
        return Err(ConfigError::new("duration_ns", "must be positive"));
    }
    if cfg.warmup_ns >= cfg.duration_ns {
        return Err(ConfigError::new(
            "warmup_ns",
            format!(
                "must be shorter than the duration ({}), got {}",
                show_time(cfg.duration_ns),
                show_time(cfg.warmup_ns)
            ),
        ));
    }
    if cfg.nodes.is_empty() {
        return Err(ConfigError::new("nodes", "at least one node is needed"));
    }
    cfg.check_node_indices()?;
    let mut names = BTreeMap::new();
    for (i, node) in cfg.nodes.iter().enumerate() {
        if names.insert(node.name.as_str(), i).is_some() {
            return Err(ConfigError::new(format!("nodes[{i}].name"), format!("duplicate node name '{}'", node.name)));
        }
    }
    Ok(cfg.nodes.iter().map(|n| n.name.clone()).collect())
}

/// Both directions of every link: link i's a->b direction is 2 i, its b->a direction 2 i + 1
/// (as `route::out_links` numbers them).
fn build_links(cfg: &Config, node_names: &[String]) -> Result<Vec<LinkDir>, ConfigError> {
    let mut links = Vec::with_capacity(2 * cfg.links.len());
    for (i, l) in cfg.links.iter().enumerate() {
        if l.a == l.b {
            return Err(ConfigError::new(format!("links[{i}]"), "a link must join two different nodes"));
        }
        for (dir, (from, to), spec) in [("ab", (l.a, l.b), &l.ab), ("ba", (l.b, l.a), &l.ba)] {
            let index = links.len() as u32;
            let field = format!("links[{i}].{dir}");
            links.push(build_link(cfg, node_names, index, from, to, spec, &field)?);
        }
    }
    Ok(links)
}

/// Each node's processing stage, if it has one.
fn build_processing(cfg: &Config) -> Result<Vec<Option<Box<Processing>>>, ConfigError> {
    let mut stages = Vec::with_capacity(cfg.nodes.len());
    for (i, node) in cfg.nodes.iter().enumerate() {
        let stage = match &node.processing {
            Some(given) => {
                let p = Params::resolve(&format!("nodes[{i}].processing"), processing::PARAMS, given)?;
                Processing::from_params(&p, Rng::stream(cfg.seed, Stream::Node(i as u32)))
            }
            None => None,
        };
        stages.push(stage.map(Box::new));
    }
    Ok(stages)
}

/// The flows' descriptions and endpoints: sender of flow f at 2 f, its receiver at 2 f + 1.
struct FlowParts {
    flows: Vec<FlowInfo>,
    endpoints: Vec<Box<dyn Endpoint>>,
    /// The host of each endpoint.
    endpoint_host: Vec<u32>,
    /// For each flow, the flows whose application it triggers.
    listeners: Vec<Vec<u32>>,
}

/// The parts of one flow.
pub(super) struct MadeFlow {
    pub sender: Box<dyn Endpoint>,
    pub receiver: Box<dyn Endpoint>,
    pub info: FlowInfo,
    /// The flow its application answers (`Application::trigger_flow`).
    pub triggered_by: Option<u32>,
}

/// What making a flow reads of the network.
pub(super) struct Net<'a> {
    pub seed: u64,
    pub kinds: &'a [NodeKind],
    pub names: &'a [String],
    pub routes: &'a Routes,
    pub links: &'a [LinkDir],
}

/// Make flow `spec` (`field` in errors), numbered `id` for its results and random streams,
/// its packets carrying `slot`: endpoints on two different hosts joined by a route both
/// ways, its application and transport made from their registered parameters. `start` is
/// its start, `rng` its own stream (after the start's draw).
pub(super) fn make_flow(
    net: &Net,
    field: &str,
    spec: &FlowSpec,
    (id, slot): (u32, u32),
    start: Time,
    rng: Rng,
) -> Result<MadeFlow, ConfigError> {
    let Net { seed, kinds, names: node_names, routes, links } = *net;
    let hosts = || listed(kinds.iter().zip(node_names).filter(|(k, _)| **k == NodeKind::Host).map(|(_, n)| n.as_str()));
    for (end, v) in [("src", spec.src), ("dst", spec.dst)] {
        if kinds[v as usize] != NodeKind::Host {
            return Err(ConfigError::new(
                format!("{field}.{end}"),
                format!("'{}' is a router; flows run between hosts: {}", node_names[v as usize], hosts()),
            ));
        }
    }
    if spec.src == spec.dst {
        return Err(ConfigError::new(
            format!("{field}.dst"),
            format!("same host as src ('{}')", node_names[spec.src as usize]),
        ));
    }
    let path = |from: u32, to: u32| {
        routes.path(from, to).ok_or_else(|| {
            ConfigError::new(
                field,
                format!(
                    "no route from '{}' to '{}': they are not connected through routers",
                    node_names[from as usize], node_names[to as usize]
                ),
            )
        })
    };
    let forward = path(spec.src, spec.dst)?;
    let back = path(spec.dst, spec.src)?;
    if spec.stop_ns.is_some_and(|s| s < start) {
        return Err(ConfigError::new(format!("{field}.stop_ns"), "flow stops before it starts"));
    }
    let app_model = find(APPS, &spec.app.kind, |m| m.name, &format!("{field}.app.kind"))?;
    let app_params = Params::resolve(&format!("{field}.app"), app_model.params, &spec.app.params)?;
    crate::app::check(app_model.name, &app_params, &format!("{field}.app"))?;
    let app = (app_model.build)(&app_params, start, spec.stop_ns, Rng::stream(seed, Stream::App(id)));
    let triggered_by = app.trigger_flow();
    let size = app.size();
    let model = find(TRANSPORTS, &spec.transport.kind, |m| m.name, &format!("{field}.transport.kind"))?;
    let params = Params::resolve(&format!("{field}.transport"), model.params, &spec.transport.params)?;
    let ideal = size.map(|size| {
        let hops = |path: &[u32]| -> Vec<crate::workload::Hop> {
            path.iter()
                .map(|&l| crate::workload::Hop { rate_bps: links[l as usize].rate_bps, delay: links[l as usize].delay })
                .collect()
        };
        let seg = (model.segments)(&params);
        crate::workload::ideal_fct(
            &hops(&forward),
            &hops(&back),
            size,
            seg.payload.unwrap_or(size),
            seg.header,
            seg.handshake,
        )
    });
    let (sender, receiver) =
        (model.build)(TransportArgs { field, flow: slot, stream: id, spec, params, app, rng, seed })?;
    let info = FlowInfo {
        id,
        name: spec.name.clone().unwrap_or_else(|| id.to_string()),
        group: spec.group.clone(),
        src: spec.src,
        dst: spec.dst,
        transport: spec.transport.kind.clone(),
        app: spec.app.kind.clone(),
        start,
        size,
        ideal,
    };
    Ok(MadeFlow { sender, receiver, info, triggered_by })
}

/// Every flow of the configuration, its start drawn from its window.
fn build_flows(
    cfg: &Config,
    node_names: &[String],
    routes: &Routes,
    links: &[LinkDir],
) -> Result<FlowParts, ConfigError> {
    let mut parts = FlowParts {
        flows: Vec::with_capacity(cfg.flows.len()),
        endpoints: Vec::with_capacity(2 * cfg.flows.len()),
        endpoint_host: Vec::with_capacity(2 * cfg.flows.len()),
        listeners: vec![Vec::new(); cfg.flows.len()],
    };
    let kinds: Vec<NodeKind> = cfg.nodes.iter().map(|n| n.kind).collect();
    let net = Net { seed: cfg.seed, kinds: &kinds, names: node_names, routes, links };
    for (i, f) in cfg.flows.iter().enumerate() {
        let field = format!("flows[{i}]");
        let id = i as u32;
        let mut rng = Rng::stream(cfg.seed, Stream::Flow(id));
        let start = match f.start_max_ns {
            Some(hi) if hi < f.start_ns => {
                return Err(ConfigError::new(format!("{field}.start_max_ns"), "window ends before it starts"))
            }
            Some(hi) => rng.range_u64(f.start_ns, hi),
            None => f.start_ns,
        };
        let made = make_flow(&net, &field, f, (id, id), start, rng)?;
        if let Some(to) = made.triggered_by {
            if to as usize >= cfg.flows.len() || to == id {
                return Err(ConfigError::new(
                    format!("{field}.app.to"),
                    format!("must name another flow (0..{})", cfg.flows.len()),
                ));
            }
            parts.listeners[to as usize].push(id);
        }
        parts.endpoints.push(made.sender);
        parts.endpoints.push(made.receiver);
        parts.endpoint_host.push(f.src);
        parts.endpoint_host.push(f.dst);
        parts.flows.push(made.info);
    }
    Ok(parts)
}

/// The index of the queue named `name` ("FROM->TO"); the error lists the names there are.
fn queue_index(links: &[LinkDir], name: &str, field: &str) -> Result<u32, ConfigError> {
    links.iter().position(|l| l.name == name).map(|i| i as u32).ok_or_else(|| {
        let allowed = listed(links.iter().map(|l| l.name.as_str()));
        ConfigError::new(field, format!("no queue '{name}'; queues are named FROM->TO: {allowed}"))
    })
}

/// The trace sampler, when the scenario asks for traces: the queues named (by default every
/// router's), the windows of the flows that have one, the per-flow counters.
fn build_sampler(
    cfg: &Config,
    links: &[LinkDir],
    routes: &Routes,
    endpoints: &[Box<dyn Endpoint>],
) -> Result<Option<Sampler>, ConfigError> {
    let Some(interval) = cfg.trace.interval_ns.filter(|&i| i > 0) else { return Ok(None) };
    let queues: Vec<u32> = if cfg.trace.queues.is_empty() {
        (0..links.len() as u32).filter(|&l| routes.is_router(links[l as usize].from)).collect()
    } else {
        cfg.trace
            .queues
            .iter()
            .enumerate()
            .map(|(i, q)| queue_index(links, q, &format!("trace.queues[{i}]")))
            .collect::<Result<_, _>>()?
    };
    let n_flows = endpoints.len() as u32 / 2;
    let cwnd_flows: Vec<u32> = if cfg.trace.cwnd {
        (0..n_flows).filter(|&f| endpoints[2 * f as usize].cwnd().is_some()).collect()
    } else {
        Vec::new()
    };
    let counter_flows: Vec<u32> = if cfg.trace.flow_counters { (0..n_flows).collect() } else { Vec::new() };
    let flow_vars = sampled_flow_vars(cfg, endpoints)?;
    let queue_vars = sampled_queue_vars(cfg, links, &queues)?;
    let columns = vec![
        Vec::new();
        QUEUE_COLUMNS.len() * queues.len()
            + cwnd_flows.len()
            + COUNTER_COLUMNS.len() * counter_flows.len()
            + flow_vars.len()
            + queue_vars.len()
    ];
    Ok(Some(Sampler { interval, queues, cwnd_flows, counter_flows, flow_vars, queue_vars, time: Vec::new(), columns }))
}

/// The names of `vars`, or "none of its own".
fn var_names(vars: &[VarSpec]) -> String {
    if vars.is_empty() {
        return "none of its own".to_string();
    }
    vars.iter().map(|v| v.name).collect::<Vec<_>>().join(", ")
}

/// The error for a variable `name` (`field`) that none of `models` has: what each offers,
/// then what every one of them has (`common`, `of_every`).
fn no_such_var(
    field: String,
    name: &str,
    models: &[(&'static str, &'static [VarSpec])],
    common: &[VarSpec],
    of_every: &str,
) -> ConfigError {
    let mut names: Vec<&str> = models.iter().map(|m| m.0).collect();
    names.dedup();
    let offers: Vec<String> = models.iter().map(|(m, vars)| format!("{m} offers: {}", var_names(vars))).collect();
    let common = var_names(common);
    ConfigError::new(
        field,
        format!("'{name}' is not a variable of {}; {}; {of_every}: {common}", names.join(" or "), offers.join("; ")),
    )
}

/// Rule of `trace.flow_vars`: each variable named is sampled on every flow whose sender offers
/// it (its own, or its congestion control's); a name that no flow offers, or one listed twice,
/// is an error. The window is left out on flows whose `trace.cwnd` column samples it already.
fn sampled_flow_vars(
    cfg: &Config,
    endpoints: &[Box<dyn Endpoint>],
) -> Result<Vec<(u32, &'static VarSpec)>, ConfigError> {
    if cfg.trace.flow_vars.is_empty() {
        return Ok(Vec::new());
    }
    let offered: Vec<Option<OfferedVars>> = endpoints.iter().step_by(2).map(|e| e.vars()).collect();
    let mut sampled = Vec::new();
    for (i, name) in cfg.trace.flow_vars.iter().enumerate() {
        let field = format!("trace.flow_vars[{i}]");
        if cfg.trace.flow_vars[..i].contains(name) {
            return Err(ConfigError::new(field, format!("'{name}' is listed twice")));
        }
        let mut found = false;
        for (f, o) in offered.iter().enumerate() {
            let Some(v) = o.as_ref().and_then(|o| o.find(name)) else { continue };
            found = true;
            let sampled_as_cwnd =
                cfg.trace.cwnd && endpoints[2 * f].cwnd().is_some() && v.column() == CWND_COLUMN.column();
            if !sampled_as_cwnd {
                sampled.push((f as u32, v));
            }
        }
        if !found {
            let mut models: Vec<(&'static str, &'static [VarSpec])> =
                offered.iter().flatten().map(|o| (o.model, o.model_vars)).collect();
            models.sort_by_key(|m| m.0);
            models.dedup_by_key(|m| m.0);
            if models.is_empty() {
                return Err(ConfigError::new(
                    field,
                    format!(
                        "'{name}' is not a variable of any flow: only TCP flows offer variables, and there are none"
                    ),
                ));
            }
            let own = offered.iter().flatten().next().map_or(&[][..], |o| o.own);
            return Err(no_such_var(field, name, &models, own, "and every TCP sender"));
        }
    }
    Ok(sampled)
}

/// Rule of `trace.queue_vars`: each variable named is sampled on every traced queue (`queues`)
/// that has it (every queue's, `QUEUE_VARS`, or its discipline's); a name that no traced queue
/// has, or one listed twice, is an error. `len` and `sojourn` are sampled for every traced
/// queue anyway and add nothing.
fn sampled_queue_vars(
    cfg: &Config,
    links: &[LinkDir],
    queues: &[u32],
) -> Result<Vec<(u32, &'static VarSpec)>, ConfigError> {
    let mut sampled = Vec::new();
    for (i, name) in cfg.trace.queue_vars.iter().enumerate() {
        let field = format!("trace.queue_vars[{i}]");
        if cfg.trace.queue_vars[..i].contains(name) {
            return Err(ConfigError::new(field, format!("'{name}' is listed twice")));
        }
        if let Some(v) = crate::vars::find(QUEUE_VARS, name) {
            if QUEUE_COLUMNS.iter().all(|c| c.name != v.name) {
                sampled.extend(queues.iter().map(|&q| (q, v)));
            }
            continue;
        }
        let before = sampled.len();
        sampled.extend(
            queues.iter().filter_map(|&q| crate::vars::find(links[q as usize].queue.vars(), name).map(|v| (q, v))),
        );
        if sampled.len() == before {
            let mut models: Vec<(&'static str, &'static [VarSpec])> =
                queues.iter().map(|&q| (links[q as usize].queue.kind, links[q as usize].queue.vars())).collect();
            models.sort_by_key(|m| m.0);
            models.dedup_by_key(|m| m.0);
            if models.is_empty() {
                return Err(ConfigError::new(
                    field,
                    format!("'{name}' is not a variable of any traced queue: none is traced"),
                ));
            }
            return Err(no_such_var(field, name, &models, QUEUE_VARS, "and every queue"));
        }
    }
    Ok(sampled)
}

/// The packet captures of the link directions `trace.pcap` names, if it names any.
fn build_pcap(cfg: &Config, links: &[LinkDir], flows: &[FlowInfo]) -> Result<Option<Box<Pcap>>, ConfigError> {
    if cfg.trace.pcap.is_empty() {
        return Ok(None);
    }
    let mut traced = Vec::with_capacity(cfg.trace.pcap.len());
    for (i, name) in cfg.trace.pcap.iter().enumerate() {
        let Some(l) = links.iter().position(|l| &l.name == name) else {
            let allowed = listed(links.iter().map(|l| l.name.as_str()));
            return Err(ConfigError::new(
                format!("trace.pcap[{i}]"),
                format!("no link direction '{name}'; link directions are named FROM->TO: {allowed}"),
            ));
        };
        traced.push(l as u32);
    }
    let names: Vec<String> = links.iter().map(|l| l.name.clone()).collect();
    let ends = flows.iter().map(|f| (f.src, f.dst)).collect();
    Ok(Some(Box::new(Pcap::new(&names, &traced, ends))))
}

/// The flows Jain's index is taken over: those listed, each of which must exist, or all.
fn check_jain_flows(cfg: &Config, n_flows: usize) -> Result<Vec<u32>, ConfigError> {
    let Some(list) = &cfg.jain_flows else { return Ok((0..n_flows as u32).collect()) };
    if let Some((k, bad)) = list.iter().enumerate().find(|(_, &f)| f as usize >= n_flows) {
        let numbered = match n_flows {
            0 => "there are no flows".to_string(),
            n => format!("flows are numbered 0..{} ({n} flows)", n - 1),
        };
        return Err(ConfigError::new(format!("jain_flows[{k}]"), format!("no flow {bad}; {numbered}")));
    }
    Ok(list.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{FlowSpec, LinkSpec, NodeSpec, TraceSpec};
    use crate::params::ParamValue;
    use crate::sim::time::{MS, SEC};

    /// s0 -- A -- B -- r0: a 5 Mbit/s CoDel bottleneck (ECN), one TCP flow per congestion
    /// control in `ccs`, then a UDP flow; traces every 100 ms.
    fn traced(ccs: &[&str], flow_vars: &[&str], queue_vars: &[&str]) -> Config {
        let dir = |rate, queue: AlgoSpec| DirSpec { rate_bps: rate, delay_ns: 2 * MS, loss: 0.0, queue };
        let codel = AlgoSpec::named("codel").with("ecn", ParamValue::Bool(true));
        let fast = || dir(100_000_000, AlgoSpec::named("droptail"));
        let flow = |transport: &str, cc: Option<&str>, app: AlgoSpec| FlowSpec {
            name: None,
            src: 2,
            dst: 3,
            transport: AlgoSpec::named(transport),
            cc: cc.map(AlgoSpec::named),
            app,
            start_ns: 0,
            start_max_ns: None,
            stop_ns: None,
            group: None,
        };
        let mut flows: Vec<FlowSpec> = ccs.iter().map(|&cc| flow("tcp", Some(cc), AlgoSpec::named("bulk"))).collect();
        flows.push(flow("udp", None, AlgoSpec::named("cbr").with("rate", ParamValue::Int(500_000))));
        Config {
            duration_ns: 2 * SEC,
            warmup_ns: 0,
            seed: 1,
            nodes: vec![NodeSpec::router("A"), NodeSpec::router("B"), NodeSpec::host("s0"), NodeSpec::host("r0")],
            links: vec![
                LinkSpec {
                    a: 0,
                    b: 1,
                    ab: dir(5_000_000, codel.clone()),
                    ba: dir(5_000_000, codel),
                    schedule: Vec::new(),
                },
                LinkSpec { a: 2, b: 0, ab: fast(), ba: fast(), schedule: Vec::new() },
                LinkSpec { a: 1, b: 3, ab: fast(), ba: fast(), schedule: Vec::new() },
            ],
            flows,
            trace: TraceSpec {
                interval_ns: Some(100 * MS),
                flow_vars: flow_vars.iter().map(|v| v.to_string()).collect(),
                queue_vars: queue_vars.iter().map(|v| v.to_string()).collect(),
                ..TraceSpec::default()
            },
            bottleneck: None,
            jain_flows: None,
            control: Vec::new(),
            workloads: Vec::new(),
        }
    }

    fn error(cfg: &Config) -> String {
        let e = Simulation::new(cfg).err().expect("refused");
        format!("{}: {}", e.field, e.message)
    }

    #[test]
    fn named_variables_are_sampled_on_every_flow_and_queue_whose_model_has_them() {
        let cfg = traced(&["cubic", "dctcp"], &["srtt", "cwnd", "w_max", "alpha"], &["count", "drops", "len"]);
        let mut sim = Simulation::new(&cfg).unwrap();
        sim.run();
        let r = sim.results();
        let columns: Vec<&str> = r.traces.keys().map(String::as_str).collect();
        let ours: Vec<&str> = columns
            .iter()
            .copied()
            .filter(|c| {
                c.contains(".srtt")
                    || c.contains("w_max")
                    || c.contains("alpha")
                    || c.contains("count")
                    || c.contains("drops")
            })
            .collect();
        // Every TCP flow has srtt, cubic W_max, dctcp alpha; the UDP flow (2) none. Every
        // traced queue (the routers') counts its drops; the CoDel ones have count.
        assert_eq!(
            ours,
            [
                "flow.0.srtt_s",
                "flow.0.w_max_segs",
                "flow.1.alpha",
                "flow.1.srtt_s",
                "queue.A->B.count",
                "queue.A->B.drops",
                "queue.A->s0.drops",
                "queue.B->A.count",
                "queue.B->A.drops",
                "queue.B->r0.drops",
            ]
        );
        // The window is trace.cwnd's column, once; len adds nothing to len_pkts.
        assert!(columns.contains(&"flow.0.cwnd_bytes") && !columns.iter().any(|c| c.starts_with("flow.2.")));
        assert_eq!(columns.iter().filter(|c| c.starts_with("queue.A->B.")).count(), 5);
        let n = r.traces["time_s"].len();
        assert_eq!(n, 21);
        assert!(r.traces.values().all(|v| v.len() == n));
        let srtt = &r.traces["flow.0.srtt_s"];
        assert!(srtt[0].is_nan(), "no RTT sample at 0");
        assert!(srtt[1..].iter().all(|&s| s >= 0.012), "at least the base RTT (4 x 2 ms and more): {srtt:?}");
        let alpha = &r.traces["flow.1.alpha"];
        assert!(alpha.iter().all(|a| (0.0..=1.0).contains(a)) && alpha[0] == 1.0 && alpha[n - 1] < 1.0, "{alpha:?}");
        let drops = &r.traces["queue.A->B.drops"];
        assert!(drops.windows(2).all(|w| w[0] <= w[1]));
        assert!(drops[n - 1] <= r.queues.iter().find(|q| q.name == "A->B").unwrap().drops as f64);
        // Without the variables, the same run gives the same results otherwise.
        let mut plain = Simulation::new(&traced(&["cubic", "dctcp"], &[], &[])).unwrap();
        plain.run();
        let mut p = plain.results();
        let mut q = sim.results();
        q.traces.retain(|c, _| !ours.contains(&c.as_str()));
        p.traces.clear();
        q.traces.clear();
        assert_eq!(serde_json::to_string(&p).unwrap(), serde_json::to_string(&q).unwrap());
    }

    #[test]
    fn a_variable_no_traced_model_has_is_refused_with_what_they_offer() {
        let e = error(&traced(&["cubic"], &["srtt", "alpha"], &[]));
        assert!(
            e.starts_with("trace.flow_vars[1]: 'alpha' is not a variable of cubic; cubic offers: w_max, k, w_est, cwnd_epoch, epoch_start; and every TCP sender: cwnd, ssthresh, srtt,"),
            "{e}"
        );
        let e = error(&traced(&["cubic", "newreno"], &["alpha"], &[]));
        assert!(
            e.contains("not a variable of cubic or newreno; cubic offers: w_max,")
                && e.contains("newreno offers: none of its own"),
            "{e}"
        );
        let e = error(&traced(&[], &["cwnd"], &[]));
        assert!(e.starts_with("trace.flow_vars[0]: 'cwnd' is not a variable of any flow: only TCP flows"), "{e}");
        let e = error(&traced(&["cubic"], &[], &["drops", "drop_prob"]));
        assert!(
            e.starts_with("trace.queue_vars[1]: 'drop_prob' is not a variable of codel or droptail; codel offers: count, lastcount,")
                && e.contains("droptail offers: none of its own; and every queue: len, sojourn, drops, marks"),
            "{e}"
        );
        assert_eq!(error(&traced(&["cubic"], &["srtt", "srtt"], &[])), "trace.flow_vars[1]: 'srtt' is listed twice");
        // Checked only when there are traces to sample.
        let mut untraced = traced(&["cubic"], &["alpha"], &[]);
        untraced.trace.interval_ns = None;
        assert!(Simulation::new(&untraced).is_ok());
    }

    #[test]
    fn lists_are_capped_and_times_read_as_scenario_files_write_them() {
        let names: Vec<String> = (0..14).map(|i| format!("h{i}")).collect();
        assert_eq!(listed(names.iter().take(2).map(String::as_str)), "h0, h1");
        assert_eq!(listed(names.iter().map(String::as_str)), "h0, h1, h2, h3, h4, h5, h6, h7, h8, h9, h10, h11, ...");
        assert_eq!(
            [0, 5_000_000_000, 1_500_000_000, 2_000, 7].map(show_time),
            ["0s", "5s", "1500ms", "2us", "7ns"].map(String::from)
        );
    }
}
