//! A fixed-size transfer: `size` bytes written at the start time.

use super::{AppModel, Application, Socket};
use crate::params::{ParamKind, ParamSpec};
use crate::sim::time::Time;
use crate::stats::FlowStats;

static PARAMS: &[ParamSpec] =
    &[ParamSpec::new("size", ParamKind::Bytes, None, "bytes to transfer").range(1.0, 1e15)];

/// Registration.
pub const MODEL: AppModel = AppModel {
    name: "transfer",
    doc: "one transfer of a fixed number of bytes written at the start time",
    params: PARAMS,
    build: |p, start, _stop, _rng| Box::new(Transfer { start, size: p.uint("size"), done: false }),
};

/// Writes `size` bytes once.
pub struct Transfer {
    start: Time,
    size: u64,
    done: bool,
}

impl Application for Transfer {
    fn next_wakeup(&self) -> Option<Time> {
        (!self.done).then_some(self.start)
    }

    fn on_wakeup(&mut self, now: Time, sock: &mut dyn Socket, _stats: &mut FlowStats) {
        if !self.done && now >= self.start {
            self.done = true;
            sock.write(self.size);
        }
    }
}
