//! Applications: what feeds a transport. An application writes bytes into its socket at the
//! times it chooses; the transport decides when they leave.

pub mod bulk;
pub mod cbr;
pub mod ncs;
pub mod periodic;
pub mod poisson;
pub mod reply;
pub mod transfer;

use crate::params::{ParamKind, ParamSpec, ParamValue, Params};
use crate::sim::rng::Rng;
use crate::sim::time::Time;
use crate::stats::FlowStats;

/// Bytes written by an application that never runs out of data.
pub const UNLIMITED: u64 = 1 << 62;

/// The send buffer of an application that writes messages: bytes written and not yet
/// acknowledged (TCP) or sent (UDP, DCCP). A message that would take it past the bound is
/// refused and counted as lost at the sender, as a full socket buffer refuses a write; an
/// application offering more than its path carries thus holds a bounded backlog. Default 4 MiB,
/// Linux's largest `tcp_wmem`.
pub const SEND_BUFFER: ParamSpec = ParamSpec::new(
    "buffer",
    ParamKind::Bytes,
    Some(ParamValue::Int(4 << 20)),
    "send buffer bound (bytes written and not yet acknowledged or sent); a message that would overflow it is lost at the sender",
)
.range(1.0, 1e12);

/// Offer a message of `bytes` at `now`: written if the send buffer (`buffer` bytes) has room
/// for it, otherwise lost at the sender; counted as generated either way.
pub fn offer(now: Time, bytes: u64, buffer: u64, sock: &mut dyn Socket, stats: &mut FlowStats) {
    stats.count(now, |s| &mut s.messages_generated);
    if sock.buffered() + bytes > buffer {
        stats.count(now, |s| &mut s.messages_lost_at_sender);
    } else {
        sock.write(bytes);
    }
}

/// The transport as an application sees it.
pub trait Socket {
    /// Bytes written and not yet acknowledged (TCP) or not yet sent (UDP): the occupancy of
    /// the send buffer.
    fn buffered(&self) -> u64;
    /// Hand `bytes` to the transport.
    fn write(&mut self, bytes: u64);
    /// Stop: data written but not yet sent is discarded.
    fn close(&mut self);
}

/// An application on the sending host of a flow.
pub trait Application: Send {
    /// When the application next acts; `None` once it has nothing more to do.
    fn next_wakeup(&self) -> Option<Time>;
    /// Act at `now`.
    fn on_wakeup(&mut self, now: Time, sock: &mut dyn Socket, stats: &mut FlowStats);
    /// The bytes this application writes in all, if it writes a known amount (a transfer):
    /// the flows table's `size_bytes`.
    fn size(&self) -> Option<u64> {
        None
    }
    /// The flow whose delivered messages this application reacts to (a controller's reply).
    fn trigger_flow(&self) -> Option<u32> {
        None
    }
    /// A message of [`Application::trigger_flow`] was delivered at `now`.
    fn on_trigger(&mut self, _now: Time, _sock: &mut dyn Socket, _stats: &mut FlowStats) {}
}

/// A registered application.
pub struct AppModel {
    /// Name used in scenarios.
    pub name: &'static str,
    /// One line: what it does.
    pub doc: &'static str,
    /// Declared parameters.
    pub params: &'static [ParamSpec],
    /// Whether it draws random numbers.
    pub random: crate::registry::Randomness,
    /// Integer parameters that name another flow (an index, or a flow's name in a scenario).
    pub flow_refs: &'static [&'static str],
    /// Construct from validated parameters, the flow's start time, optional stop time and the
    /// application's own random stream (`Stream::App(flow)`; deterministic apps ignore it).
    pub build: fn(&Params, Time, Option<Time>, Rng) -> Box<dyn Application>,
}

/// Checks across an application's parameters that its table cannot express (a Pareto shape
/// above 1, a uniform's lower end below its mean); `field` is the application's path.
pub fn check(name: &str, params: &Params, field: &str) -> Result<(), crate::error::ConfigError> {
    match name {
        "transfer" => transfer::check(params, field),
        _ => Ok(()),
    }
}

/// Every application ccsim knows.
pub static APPS: &[AppModel] =
    &[bulk::MODEL, transfer::MODEL, periodic::MODEL, cbr::MODEL, reply::MODEL, ncs::MODEL, poisson::MODEL];

#[cfg(test)]
pub(crate) mod testing {
    //! A socket that records writes.
    use super::Socket;

    #[derive(Default)]
    pub struct RecordingSocket {
        pub written: Vec<u64>,
        pub buffered: u64,
        pub closed: bool,
    }

    impl Socket for RecordingSocket {
        fn buffered(&self) -> u64 {
            self.buffered
        }
        fn write(&mut self, bytes: u64) {
            self.written.push(bytes);
            self.buffered += bytes;
        }
        fn close(&mut self) {
            self.closed = true;
        }
    }
}
