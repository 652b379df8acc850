//! The messages of a networked control loop (see [`crate::ncs`]): one message of `size`
//! bytes each time the loop hands one over — a sample on the sensor flow, a control on the
//! actuator flow — between the flow's start and stop times. The ANCE paper (Sup, de Moraes,
//! Bauchspiess, IJCNIS 2020) sec. 4: 48-byte packets every h = 14 ms.

use super::{AppModel, Application, Socket};
use crate::params::{ParamKind, ParamSpec, ParamValue, Params};
use crate::registry::Randomness;
use crate::sim::time::Time;
use crate::stats::FlowStats;

static PARAMS: &[ParamSpec] = &[ParamSpec::new(
    "size",
    ParamKind::Bytes,
    Some(ParamValue::Int(48)),
    "message size (payload; paper 000: 48 B packets)",
)
.range(1.0, 1e12)];

/// Registration.
pub const MODEL: AppModel = AppModel {
    name: "ncs",
    doc: "a control loop's samples or controls: `size` bytes each time the loop (control[]) sends",
    params: PARAMS,
    random: Randomness::Never,
    flow_refs: &[],
    build: |p: &Params, start, stop, _rng| Box::new(Ncs { size: p.uint("size"), start, stop }),
};

/// Writes one message per trigger from its control loop.
pub struct Ncs {
    size: u64,
    start: Time,
    stop: Option<Time>,
}

impl Application for Ncs {
    fn next_wakeup(&self) -> Option<Time> {
        None
    }

    fn on_wakeup(&mut self, _now: Time, _sock: &mut dyn Socket, _stats: &mut FlowStats) {}

    fn on_trigger(&mut self, now: Time, sock: &mut dyn Socket, stats: &mut FlowStats) {
        if now >= self.start && self.stop.is_none_or(|s| now < s) {
            stats.count(now, |s| &mut s.messages_generated);
            sock.write(self.size);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::testing::RecordingSocket;

    #[test]
    fn writes_one_message_per_trigger_between_start_and_stop() {
        let mut app = Ncs { size: 48, start: 10, stop: Some(30) };
        let mut sock = RecordingSocket::default();
        let mut stats = FlowStats::default();
        for t in [5, 10, 20, 30, 40] {
            app.on_trigger(t, &mut sock, &mut stats);
        }
        assert_eq!(sock.written, vec![48, 48]);
        assert_eq!(stats.messages_generated, 2);
        assert_eq!(app.next_wakeup(), None);
    }
}
