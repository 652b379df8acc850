//! Reply: answers every message delivered on another flow with a message of its own, as the
//! controller of paper 001 (Dedu et al.) answers each sensor sample with 200 B.

use super::{AppModel, Application, Socket};
use crate::params::{ParamKind, ParamSpec, ParamValue, Params};
use crate::registry::Randomness;
use crate::sim::time::Time;
use crate::stats::FlowStats;

static PARAMS: &[ParamSpec] = &[
    ParamSpec::new("size", ParamKind::Bytes, Some(ParamValue::Int(200)), "reply size").range(1.0, 1e12),
    ParamSpec::new("to", ParamKind::Int, None, "index of the flow whose delivered messages are answered"),
];

/// Registration.
pub const MODEL: AppModel = AppModel {
    name: "reply",
    doc: "answers each message delivered on flow `to` with `size` bytes (a controller's reply)",
    params: PARAMS,
    random: Randomness::Never,
    flow_refs: &["to"],
    build: |p: &Params, start, stop, _rng| {
        Box::new(Reply { to: p.uint("to") as u32, size: p.uint("size"), start, stop })
    },
};

/// Writes one message per message delivered on flow `to`, between its start and stop times.
pub struct Reply {
    to: u32,
    size: u64,
    start: Time,
    stop: Option<Time>,
}

impl Application for Reply {
    fn next_wakeup(&self) -> Option<Time> {
        None
    }

    fn on_wakeup(&mut self, _now: Time, _sock: &mut dyn Socket, _stats: &mut FlowStats) {}

    fn trigger_flow(&self) -> Option<u32> {
        Some(self.to)
    }

    fn on_trigger(&mut self, now: Time, sock: &mut dyn Socket, stats: &mut FlowStats) {
        if now >= self.start && self.stop.is_none_or(|s| now < s) {
            stats.count(now, |s| &mut s.messages_generated);
            sock.write(self.size);
        }
    }
}
