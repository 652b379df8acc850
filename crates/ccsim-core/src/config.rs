//! The core configuration: an explicit network (nodes, links, flows) in canonical units.
//!
//! This is what the engine compiles. The Python front turns a researcher's scenario file
//! (units such as `"10Mbps"`, topology helpers such as `dumbbell`) into this form, as JSON;
//! Rust users build it directly. All times are integer nanoseconds, rates bits per second,
//! sizes bytes. Model parameters (`AlgoSpec::params`) use the encoding of
//! [`crate::params::ParamValue`] and are checked against each model's declared table.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::error::ConfigError;
use crate::params::ParamValue;

/// A whole simulation.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Simulated time at which the run stops (ns).
    pub duration_ns: u64,
    /// Statistics are collected from this time on (ns); 0 collects from the start.
    #[serde(default)]
    pub warmup_ns: u64,
    /// Master seed; every component derives its own stream from (seed, component id).
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Hosts and routers, addressed by their index in this list.
    pub nodes: Vec<NodeSpec>,
    /// Full-duplex links; each direction has its own rate, delay, loss and queue.
    pub links: Vec<LinkSpec>,
    /// Traffic: one transport connection (or UDP stream) per entry.
    #[serde(default)]
    pub flows: Vec<FlowSpec>,
    /// What to record as time series.
    #[serde(default)]
    pub trace: TraceSpec,
    /// Queue (link direction) whose utilization is reported, by name, e.g. `"A->B"`.
    #[serde(default)]
    pub bottleneck: Option<String>,
    /// Flows (by index) over which Jain's index is computed; all flows when absent.
    #[serde(default)]
    pub jain_flows: Option<Vec<u32>>,
    /// Networked control loops (plant, controller, actuator) whose messages use flows.
    #[serde(default)]
    pub control: Vec<ControlLoopSpec>,
    /// Open-loop traffic: flows created while the run goes on (`workload.rs`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workloads: Vec<WorkloadSpec>,
}

/// Flows that arrive while the run goes on: each a `transfer` of a size drawn from `size`
/// (or `size_cdf`) between one of `pairs`, arriving as a Poisson process (`workload.rs`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    /// Prefix of the created flows' names (`NAME.k`); `workloadW` when absent.
    #[serde(default)]
    pub name: Option<String>,
    /// Group label of the created flows; the name when absent.
    #[serde(default)]
    pub group: Option<String>,
    /// The (sender, receiver) host pairs (node indices) a flow is drawn from, uniformly.
    pub pairs: Vec<(u32, u32)>,
    /// Mean arrivals per second of the Poisson process.
    pub rate_per_s: f64,
    /// First possible arrival (ns).
    #[serde(default)]
    pub start_ns: u64,
    /// No arrival at or after this time (ns); the end of the run when absent.
    #[serde(default)]
    pub stop_ns: Option<u64>,
    /// Flow sizes as the `transfer` application's parameters (`size`, `distribution`,
    /// `shape`, `size_min`); ignored when `size_cdf` is given.
    #[serde(default)]
    pub size: BTreeMap<String, ParamValue>,
    /// Flow sizes from an empirical CDF: (bytes, cumulative probability) points, both
    /// increasing, the last probability 1; sizes are interpolated linearly between points.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub size_cdf: Vec<(f64, f64)>,
    /// Transport of the created flows, as in a flow.
    pub transport: AlgoSpec,
    /// Congestion control of the created flows (TCP only).
    #[serde(default)]
    pub cc: Option<AlgoSpec>,
}

fn default_seed() -> u64 {
    1
}

impl Config {
    /// The hosts packets are sent to: both ends of every flow, and of every pair a workload
    /// draws its flows on (repeats included).
    pub fn flow_ends(&self) -> Vec<u32> {
        let pairs = self.workloads.iter().flat_map(|w| w.pairs.iter().copied());
        self.flows.iter().map(|f| (f.src, f.dst)).chain(pairs).flat_map(|(s, d)| [s, d]).collect()
    }

    /// Every node index that links and flows name exists; the error names the first field
    /// that names one that does not.
    pub fn check_node_indices(&self) -> Result<(), ConfigError> {
        let n = self.nodes.len() as u32;
        let links = self.links.iter().enumerate().flat_map(|(i, l)| [(i, "links", "a", l.a), (i, "links", "b", l.b)]);
        let flows =
            self.flows.iter().enumerate().flat_map(|(i, f)| [(i, "flows", "src", f.src), (i, "flows", "dst", f.dst)]);
        if let Some((i, list, end, v)) = links.chain(flows).find(|&(.., v)| v >= n) {
            return Err(ConfigError::new(
                format!("{list}[{i}].{end}"),
                format!("node index {v} does not exist ({n} nodes)"),
            ));
        }
        for (w, workload) in self.workloads.iter().enumerate() {
            if let Some(k) = workload.pairs.iter().position(|&(s, d)| s >= n || d >= n) {
                let (s, d) = workload.pairs[k];
                return Err(ConfigError::new(
                    format!("workloads[{w}].pairs[{k}]"),
                    format!("node index {} does not exist ({n} nodes)", s.max(d)),
                ));
            }
        }
        Ok(())
    }
}

/// Whether a node terminates flows or only forwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    /// An end host: flows start and end here; it does not forward.
    Host,
    /// A router: forwards along static shortest-path routes.
    Router,
}

/// A node.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    /// Unique name (used in queue names `a->b`).
    pub name: String,
    /// Host or router.
    pub kind: NodeKind,
    /// Per-packet processing (`net/processing.rs`: `delay`, `jitter`, `distribution`); none
    /// when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processing: Option<BTreeMap<String, ParamValue>>,
}

impl NodeSpec {
    /// A host without processing.
    pub fn host(name: &str) -> Self {
        NodeSpec { name: name.to_string(), kind: NodeKind::Host, processing: None }
    }

    /// A router without processing.
    pub fn router(name: &str) -> Self {
        NodeSpec { name: name.to_string(), kind: NodeKind::Router, processing: None }
    }
}

/// A full-duplex link between nodes `a` and `b`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// Index of one end.
    pub a: u32,
    /// Index of the other end.
    pub b: u32,
    /// Direction a -> b.
    pub ab: DirSpec,
    /// Direction b -> a.
    pub ba: DirSpec,
    /// Changes of the link during the run, in time order (see [`LinkChange`]); none when
    /// empty, and then the link is the same from start to end.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub schedule: Vec<LinkChange>,
}

impl LinkSpec {
    /// A link between `a` and `b` that never changes.
    pub fn new(a: u32, b: u32, ab: DirSpec, ba: DirSpec) -> Self {
        LinkSpec { a, b, ab, ba, schedule: Vec::new() }
    }
}

/// Which direction of a link a [`LinkChange`] applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LinkDirection {
    /// a -> b only.
    Ab,
    /// b -> a only.
    Ba,
}

/// A change of a link at time `at_ns`: any of its rate, delay, loss and state (up or down),
/// in both directions unless `direction` names one. What is not given stays as it is.
///
/// The engine's semantics (`engine/dynamic.rs`): a new rate applies from the next packet
/// whose transmission starts (the one being serialized finishes at the old rate); a new
/// delay applies to packets that start on the wire from now on, never letting one arrive
/// before the packet ahead of it; a new loss probability applies to the next packet
/// transmitted. A link that goes down loses the packets on its wire and holds its queue
/// until it comes back up, and routes are computed again over the links that are up.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkChange {
    /// When the change happens (ns from the start of the run).
    pub at_ns: u64,
    /// New transmission rate (bit/s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_bps: Option<u64>,
    /// New propagation delay (ns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_ns: Option<u64>,
    /// New probability that a packet is lost on the wire.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<f64>,
    /// The link goes down (`false`) or comes back up (`true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub up: Option<bool>,
    /// Only this direction changes; both when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<LinkDirection>,
}

impl LinkChange {
    /// A change at `at_ns` that changes nothing yet (set the fields to change).
    pub fn at(at_ns: u64) -> Self {
        LinkChange { at_ns, rate_bps: None, delay_ns: None, loss: None, up: None, direction: None }
    }
}

/// One direction of a link: its transmitter, wire and output queue.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirSpec {
    /// Transmission rate (bit/s).
    pub rate_bps: u64,
    /// Propagation delay (ns).
    pub delay_ns: u64,
    /// Probability that a packet is corrupted on the wire and lost.
    #[serde(default)]
    pub loss: f64,
    /// The output queue discipline feeding this direction.
    pub queue: AlgoSpec,
}

/// A pluggable model chosen by name, with parameters in canonical units.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlgoSpec {
    /// Registered name, e.g. `droptail`, `newreno`, `bulk`.
    pub kind: String,
    /// Parameters; missing ones take their declared defaults.
    #[serde(default)]
    pub params: BTreeMap<String, ParamValue>,
    /// For a congestion control or queue discipline defined outside the engine: where its
    /// code comes from (see [`crate::external`]); its parameters are then passed as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external: Option<String>,
}

impl AlgoSpec {
    /// A model with all parameters at their defaults.
    pub fn named(kind: &str) -> Self {
        AlgoSpec { kind: kind.to_string(), params: BTreeMap::new(), external: None }
    }

    /// Builder: set one parameter.
    pub fn with(mut self, name: &str, value: ParamValue) -> Self {
        self.params.insert(name.to_string(), value);
        self
    }
}

/// One flow: an application on `src` sending to `dst` over a transport.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    /// Label carried into the results (defaults to the flow index).
    #[serde(default)]
    pub name: Option<String>,
    /// Sending host (node index).
    pub src: u32,
    /// Receiving host (node index).
    pub dst: u32,
    /// Transport and its socket options: `tcp`, `udp` or `dccp` (see `ccsim list`).
    pub transport: AlgoSpec,
    /// Congestion control (TCP only); `newreno` when absent.
    #[serde(default)]
    pub cc: Option<AlgoSpec>,
    /// The application feeding the transport: `bulk`, `transfer`, `periodic`, `cbr`.
    pub app: AlgoSpec,
    /// Start time (ns), or the start of the window it is drawn from.
    #[serde(default)]
    pub start_ns: u64,
    /// If set, the start time is drawn uniformly from [start_ns, start_max_ns) with the
    /// flow's own random stream.
    #[serde(default)]
    pub start_max_ns: Option<u64>,
    /// The application stops producing data at this time (ns).
    #[serde(default)]
    pub stop_ns: Option<u64>,
    /// Free-form group label (e.g. RTT class or algorithm) carried into the results.
    #[serde(default)]
    pub group: Option<String>,
}

/// Time series to record.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    /// Sampling interval (ns); no traces when absent or zero.
    #[serde(default)]
    pub interval_ns: Option<u64>,
    /// Queues to sample (by name `a->b`); empty means every queue fed by a router.
    #[serde(default)]
    pub queues: Vec<String>,
    /// Sample each TCP flow's cwnd (bytes).
    #[serde(default = "yes")]
    pub cwnd: bool,
    /// Sample each flow's delivered bytes and retransmissions, cumulative over the measured
    /// window (`flow.N.delivered_bytes`, `flow.N.retransmissions`): throughput over time.
    #[serde(default)]
    pub flow_counters: bool,
    /// Log every drop and mark with its time, queue and flow.
    #[serde(default)]
    pub events: bool,
    /// Log every application message: flow, index, created, delivered or lost.
    #[serde(default)]
    pub messages: bool,
    /// Log every RTT sample of every TCP sender with its time and flow.
    #[serde(default)]
    pub rtt: bool,
    /// Link directions (by name `a->b`) whose transmitted packets are captured as pcap files
    /// (`net/pcap.rs`); none when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pcap: Vec<String>,
    /// Model variables sampled on every flow whose model has them (`flow.N.NAME_UNIT`, see
    /// `vars.rs`): the TCP sender's and its congestion control's. A name that no flow's model
    /// has is an error.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flow_vars: Vec<String>,
    /// Model variables sampled on every traced queue whose discipline has them
    /// (`queue.A->B.NAME_UNIT`): every queue's and the discipline's. A name that no traced
    /// queue has is an error.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queue_vars: Vec<String>,
}

fn yes() -> bool {
    true
}

/// A networked control loop (see [`crate::ncs`]): a plant sampled every `period_ns`, a
/// controller, a reference, and the two flows (application `ncs`) that carry samples and
/// controls. Defaults: the DC motor, PI controller and square-wave reference of the ANCE
/// paper (Sup, de Moraes, Bauchspiess, IJCNIS 2020) sec. 4, h = 14 ms, no network (ideal loop).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControlLoopSpec {
    /// Label carried into the results (`control{i}` when absent).
    #[serde(default)]
    pub name: Option<String>,
    /// Plant transfer function numerator, descending powers of s.
    #[serde(default = "motor_num")]
    pub plant_num: Vec<f64>,
    /// Plant transfer function denominator, descending powers of s.
    #[serde(default = "motor_den")]
    pub plant_den: Vec<f64>,
    /// Controller model (`pid`) and its parameters.
    #[serde(default = "default_controller")]
    pub controller: AlgoSpec,
    /// Reference signal model (`square`, `step`, `constant`) and its parameters.
    #[serde(default = "default_reference")]
    pub reference: AlgoSpec,
    /// Sampling period h (ns).
    #[serde(default = "default_sampling_period")]
    pub period_ns: u64,
    /// Flow carrying samples, plant host -> controller host; with `actuator_flow` absent too,
    /// the loop is ideal (no network).
    #[serde(default)]
    pub sensor_flow: Option<u32>,
    /// Flow carrying controls, controller host -> plant host.
    #[serde(default)]
    pub actuator_flow: Option<u32>,
    /// First sampling instant (ns).
    #[serde(default)]
    pub start_ns: u64,
    /// Integration steps per sampling period for the integral scores (ITAE, IAE, ISE).
    #[serde(default = "default_substeps")]
    pub substeps: u32,
}

impl Default for ControlLoopSpec {
    fn default() -> Self {
        ControlLoopSpec {
            name: None,
            plant_num: motor_num(),
            plant_den: motor_den(),
            controller: default_controller(),
            reference: default_reference(),
            period_ns: default_sampling_period(),
            sensor_flow: None,
            actuator_flow: None,
            start_ns: 0,
            substeps: default_substeps(),
        }
    }
}

fn motor_num() -> Vec<f64> {
    crate::ncs::plant::MOTOR_NUM.to_vec()
}

fn motor_den() -> Vec<f64> {
    crate::ncs::plant::MOTOR_DEN.to_vec()
}

fn default_controller() -> AlgoSpec {
    AlgoSpec::named("pid")
}

fn default_reference() -> AlgoSpec {
    AlgoSpec::named("square")
}

fn default_sampling_period() -> u64 {
    14_000_000
}

fn default_substeps() -> u32 {
    16
}
