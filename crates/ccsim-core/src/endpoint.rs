//! Endpoints: the sending and receiving ends of a flow, as sans-IO state machines.
//!
//! An endpoint never reads a clock and never schedules anything itself: the engine hands it a
//! packet or a wakeup together with the current time, collects the packets it emits, and asks
//! it when it next wants to be woken (smoltcp's `poll_at` pattern).

use crate::messages::MessageLedger;
use crate::packet::Packet;
use crate::results::FlowResult;
use crate::sim::time::Time;
use crate::stats::FlowStats;
use crate::vars::OfferedVars;

/// What an endpoint may touch while handling one event.
pub struct Cx<'a> {
    /// Current simulated time.
    pub now: Time,
    /// Packets to send, in order, from this endpoint's host.
    pub out: &'a mut Vec<Packet>,
    /// The flow's statistics.
    pub stats: &'a mut FlowStats,
    /// The flow's application messages.
    pub messages: &'a mut MessageLedger,
}

/// One end of a flow.
pub trait Endpoint: Send {
    /// A packet of this flow addressed to this end arrived.
    fn on_packet(&mut self, pkt: &Packet, cx: &mut Cx);
    /// A wakeup this endpoint asked for is due (it checks which of its deadlines passed).
    fn on_wakeup(&mut self, cx: &mut Cx);
    /// Earliest time this endpoint wants `on_wakeup`.
    fn next_wakeup(&self) -> Option<Time>;
    /// A message this flow's application listens to was delivered (see
    /// [`crate::app::Application::trigger_flow`]): let the application act.
    fn on_app_trigger(&mut self, _cx: &mut Cx) {}
    /// Congestion window in bytes, for traces (window-based senders only).
    fn cwnd(&self) -> Option<u64> {
        None
    }
    /// Add this end's own figures to the flow's result row.
    fn report(&self, _row: &mut FlowResult) {}
    /// The variables traces can sample on this end (`trace.flow_vars`), if it has any: a TCP
    /// sender's own and its congestion control's.
    fn vars(&self) -> Option<OfferedVars> {
        None
    }
    /// The current value of variable `name`, one of [`Endpoint::vars`] (`None` for any other
    /// name); NaN while it is undefined. Read every trace interval, never per packet.
    fn var(&self, _name: &str) -> Option<f64> {
        None
    }
}
