//! The transports a flow can use, as a table like the queue disciplines' and congestion
//! controls': adding one is a module plus a line in [`TRANSPORTS`].

use crate::app::Application;
use crate::config::FlowSpec;
use crate::endpoint::Endpoint;
use crate::error::ConfigError;
use crate::params::{ParamSpec, Params};
use crate::sim::rng::Rng;

/// What a transport builds its two endpoints from.
pub struct TransportArgs<'a> {
    /// The flow's field in the configuration (`flows[3]`), for errors.
    pub field: &'a str,
    /// Flow index: what its packets carry.
    pub flow: u32,
    /// The flow's number for its random streams (`Stream::Cc`): its index, or for a flow a
    /// workload created, its number among all flows (`workload.rs`), since indices are reused.
    pub stream: u32,
    /// The flow as configured (its congestion control, its transport's parameters as given).
    pub spec: &'a FlowSpec,
    /// The transport's parameters, validated.
    pub params: Params,
    /// The sending application.
    pub app: Box<dyn Application>,
    /// The sender's own random stream (`Stream::Flow(flow)`).
    pub rng: Rng,
    /// The run's seed, for the flow's other streams (`Stream::Cc(flow)`).
    pub seed: u64,
}

/// A flow's sender and receiver.
pub type Endpoints = (Box<dyn Endpoint>, Box<dyn Endpoint>);

/// A registered transport.
pub struct TransportModel {
    /// Name used in scenarios.
    pub name: &'static str,
    /// One line: what it is and its sources.
    pub doc: &'static str,
    /// Declared parameters (socket options).
    pub params: &'static [ParamSpec],
    /// The variables its sender offers to traces (`trace.flow_vars`) besides its congestion
    /// control's.
    pub vars: &'static [crate::vars::VarSpec],
    /// Build the sender and the receiver; errors name the field.
    pub build: fn(TransportArgs) -> Result<Endpoints, ConfigError>,
    /// How it carries a transfer, from its validated parameters: for the ideal completion
    /// time a flow's `slowdown` is measured against (`workload::ideal_fct`).
    pub segments: fn(&Params) -> Segments,
}

/// How a transport puts a transfer on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segments {
    /// Payload bytes of a segment; `None`: a transfer is one datagram.
    pub payload: Option<u64>,
    /// Header bytes of each segment.
    pub header: u64,
    /// Bytes of each of the two segments of an opening handshake, if the transport has one.
    pub handshake: Option<u64>,
}

/// Every transport ccsim knows.
pub static TRANSPORTS: &[TransportModel] = &[crate::tcp::MODEL, crate::udp::MODEL, crate::dccp::MODEL];

/// A transport without a congestion control of its own choosing refuses `cc`.
pub(crate) fn refuse_cc(args: &TransportArgs, why: &str) -> Result<(), ConfigError> {
    match args.spec.cc {
        Some(_) => Err(ConfigError::new(format!("{}.cc", args.field), why)),
        None => Ok(()),
    }
}
