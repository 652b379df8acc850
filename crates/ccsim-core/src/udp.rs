//! UDP: every write of the application leaves at once as one datagram (no segmentation, no
//! IP fragmentation); the receiver delivers every datagram that arrives.

use crate::app::{Application, Socket};
use crate::endpoint::{Cx, Endpoint};
use crate::packet::{Ecn, Kind, Packet};
use crate::params::{ParamKind, ParamSpec, ParamValue, Params};
use crate::sim::time::Time;
use crate::transport::{refuse_cc, Segments, TransportModel};

/// Socket options of a UDP flow.
pub static PARAMS: &[ParamSpec] = &[
    ParamSpec::new("header", ParamKind::Bytes, Some(ParamValue::Int(28)), "IP+UDP header bytes (20+8)")
        .range(0.0, 200.0),
    ParamSpec::new("ecn", ParamKind::Bool, Some(ParamValue::Bool(false)), "send datagrams ECT(0)"),
];

/// Registration.
pub const MODEL: TransportModel = TransportModel {
    name: "udp",
    doc: "UDP datagrams, one per application write",
    params: PARAMS,
    vars: &[],
    build: |args| {
        refuse_cc(&args, "UDP has no congestion control")?;
        Ok((Box::new(UdpSender::new(args.flow, args.spec.dst, &args.params, args.app)), Box::new(UdpReceiver)))
    },
    // A write is one datagram: UDP does not segment.
    segments: |p| Segments { payload: None, header: p.uint("header"), handshake: None },
};

/// A UDP sender.
pub struct UdpSender {
    flow: u32,
    dst: u32,
    header: u32,
    ecn: bool,
    app: Box<dyn Application>,
    writes: Writes,
}

impl UdpSender {
    /// A sender for `flow` towards node `dst`.
    pub fn new(flow: u32, dst: u32, p: &Params, app: Box<dyn Application>) -> Self {
        UdpSender { flow, dst, header: p.uint("header") as u32, ecn: p.bool("ecn"), app, writes: Writes::default() }
    }
}

/// The application's writes during one wakeup, each to become one datagram.
#[derive(Default)]
struct Writes(Vec<u64>);

impl Socket for Writes {
    fn buffered(&self) -> u64 {
        0
    }
    fn write(&mut self, bytes: u64) {
        self.0.push(bytes);
    }
    fn close(&mut self) {}
}

impl Endpoint for UdpSender {
    fn on_packet(&mut self, _pkt: &Packet, _cx: &mut Cx) {}

    fn on_wakeup(&mut self, cx: &mut Cx) {
        if self.app.next_wakeup().is_some_and(|t| t <= cx.now) {
            self.run_app(cx, false);
        }
    }

    fn on_app_trigger(&mut self, cx: &mut Cx) {
        self.run_app(cx, true);
    }

    fn next_wakeup(&self) -> Option<Time> {
        self.app.next_wakeup()
    }
}

impl UdpSender {
    /// Let the application act and send each message it wrote as one datagram.
    fn run_app(&mut self, cx: &mut Cx, triggered: bool) {
        let now = cx.now;
        let mut writes = std::mem::take(&mut self.writes);
        if triggered {
            self.app.on_trigger(now, &mut writes, cx.stats);
        } else {
            self.app.on_wakeup(now, &mut writes, cx.stats);
        }
        for bytes in writes.0.drain(..) {
            let payload = bytes.min((u32::MAX - self.header) as u64) as u32;
            cx.out.push(Packet {
                flow: self.flow,
                dst: self.dst,
                size: payload + self.header,
                payload,
                seq: cx.messages.write_datagram(now),
                ts: now,
                kind: Kind::Udp,
                ecn: if self.ecn { Ecn::Ect0 } else { Ecn::NotEct },
                ..Packet::default()
            });
            cx.stats.count(now, |s| &mut s.packets_sent);
        }
        self.writes = writes;
    }
}

/// A UDP receiver: counts what arrives.
pub struct UdpReceiver;

impl Endpoint for UdpReceiver {
    fn on_packet(&mut self, pkt: &Packet, cx: &mut Cx) {
        cx.stats.delivered(cx.now, pkt.payload as u64, pkt.payload as u64);
        cx.messages.deliver_datagram(cx.now, pkt.seq);
    }
    fn on_wakeup(&mut self, _cx: &mut Cx) {}
    fn next_wakeup(&self) -> Option<Time> {
        None
    }
}
