//! ENCN, router side: Explicit Non-Congestion Notification.
//!
//! Source: Sup, de Moraes, Bauchspiess, "Simultaneous TCP and NCS flows in a UPPAAL framework
//! with a new AQM technique", IEEE INDIN 2016 (**not available** to us), read through the
//! authors' later paper, "Acknowledge-Based Non-Congestion Estimation: An Indirect Queue
//! Management Approach for Concurrent TCP and UDP-like Flows", IJCNIS 2020, sec. 2 and 3.1: a
//! router signals *non*-congestion while its queue is below `Q_min` (3 kbytes in the paper's
//! daisy chain), and ENCN senders grow their window on that signal.
//!
//! Carriage in ccsim (our design; the paper's codepoint is unknown):
//! - the flag [`FLAG_NC`] on a data packet means "no ENCN router on the path so far is
//!   congested". An ENCN-capable sender sets it on every data packet (sender side: not here);
//! - every ENCN queue **clears** it on an arrival that finds the queue at or above `q_min`
//!   (instantaneous length, or RED's average when `wq > 0`), so the flag reaching the
//!   receiver is the AND over the ENCN routers of the path; non-ENCN queues leave it alone;
//! - the receiver echoes it with [`FLAG_NC_ECHO`] on the ACK triggered by the flagged
//!   segment (`tcp/receiver.rs`).
//!
//! Otherwise an ENCN queue is DropTail with `limit`: an arrival that does not fit is
//! tail-dropped, nothing is dropped or marked early. The length is measured on arrival, the
//! arrival excluded, in the unit of `q_min`.
//!
//! [`FLAG_NC`]: crate::packet::FLAG_NC
//! [`FLAG_NC_ECHO`]: crate::packet::FLAG_NC_ECHO

use super::fifo::Fifo;
use super::red::{QueueAverage, Unit, P_LIMIT, P_MEAN_PKT_SIZE, P_MEAN_PKT_TIME};
use super::{QdiscCtx, QueueDisc, QueueModel};
use crate::packet::{Packet, FLAG_NC};
use crate::params::{ParamKind, ParamSpec, ParamValue, Params, Size};
use crate::registry::Randomness;

static PARAMS: &[ParamSpec] = &[
    P_LIMIT,
    ParamSpec::new(
        "q_min",
        ParamKind::Size,
        Some(ParamValue::Size(Size::Bytes(3000))),
        "non-congestion threshold: FLAG_NC is cleared at or above it, packets or bytes (ANCE paper: 3 kbytes)",
    ),
    ParamSpec::new(
        "wq",
        ParamKind::Float,
        Some(ParamValue::Float(0.0)),
        "EWMA weight of an averaged queue length as in RED; 0 = instantaneous length",
    )
    .range(0.0, 1.0),
    P_MEAN_PKT_SIZE,
    P_MEAN_PKT_TIME,
];

/// Registration.
pub const MODEL: QueueModel = QueueModel {
    name: "encn",
    doc: "ENCN router (Sup et al. 2016, via the ANCE paper): DropTail that clears FLAG_NC while its queue is >= q_min",
    params: PARAMS,
    random: Randomness::Never,
    build: |p: &Params| {
        let wq = p.float("wq");
        let avg = (wq > 0.0).then(|| QueueAverage::from_params(p));
        Box::new(Encn::new(p.size("q_min"), avg, p.size("limit")))
    },
};

/// A DropTail queue that withdraws the non-congestion flag when its queue is long.
pub struct Encn {
    unit: Unit,
    q_min: f64,
    /// RED-style average, or `None` for the instantaneous length.
    pub avg: Option<QueueAverage>,
    fifo: Fifo,
}

impl Encn {
    /// Clear `FLAG_NC` at or above `q_min` (whose unit is the queue's unit); hold at most `limit`.
    pub fn new(q_min: Size, avg: Option<QueueAverage>, limit: Size) -> Self {
        let unit = Unit::of(q_min);
        Encn { unit, q_min: unit.convert(q_min, 1), avg, fifo: Fifo::new(limit) }
    }
}

impl QueueDisc for Encn {
    fn enqueue(&mut self, pkt: Packet, ctx: &mut QdiscCtx) {
        let q = self.unit.measure(&self.fifo);
        let level = match &mut self.avg {
            Some(a) => a.on_arrival(ctx.now, q),
            None => q,
        };
        let Some(mut pkt) = self.fifo.admissible(pkt, ctx) else { return };
        if level >= self.q_min {
            pkt.flags &= !FLAG_NC;
        }
        self.fifo.push(pkt);
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<Packet> {
        match &mut self.avg {
            Some(avg) => avg.dequeue(&mut self.fifo, ctx.now),
            None => self.fifo.pop(),
        }
    }

    fn len_packets(&self) -> usize {
        self.fifo.len()
    }

    fn len_bytes(&self) -> u64 {
        self.fifo.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::FLAG_ECE;
    use crate::qdisc::testkit::{params, pkt, Harness};

    fn nc(seq: u64, size: u32) -> Packet {
        Packet { flags: FLAG_NC, ..pkt(0, seq, size) }
    }

    fn flagged(h: &mut Harness<Encn>, now: u64) -> Vec<u64> {
        std::iter::from_fn(|| h.dequeue(now)).filter(|p| p.flags & FLAG_NC != 0).map(|p| p.seq).collect()
    }

    #[test]
    fn clears_nc_at_or_above_q_min_and_keeps_it_below() {
        // q_min = 3000 B, 1000 B packets: arrival i finds 1000·i bytes; cleared iff i ≥ 3.
        let mut h = Harness::new(Encn::new(Size::Bytes(3000), None, Size::Packets(100)));
        for i in 0..6 {
            h.enqueue(i, nc(i, 1000));
        }
        assert_eq!(flagged(&mut h, 10), vec![0, 1, 2]);
        // Packets mode, q_min = 2p; other flags are untouched, unflagged packets stay so.
        let mut h = Harness::new(Encn::new(Size::Packets(2), None, Size::Packets(100)));
        for i in 0..4 {
            h.enqueue(i, nc(i, 100));
        }
        h.enqueue(4, Packet { flags: FLAG_ECE, ..pkt(0, 4, 100) });
        let out: Vec<Packet> = std::iter::from_fn(|| h.dequeue(10)).collect();
        let flags: Vec<u8> = out.iter().map(|p| p.flags).collect();
        assert_eq!(flags, vec![FLAG_NC, FLAG_NC, 0, 0, FLAG_ECE]);
        assert_eq!((h.drops, h.marks), (0, 0));
    }

    #[test]
    fn averaged_length_decides_when_wq_is_set() {
        // wq = 0.5, q_min = 2p: the average after arrivals finding 1, 2, 3, 4 packets is
        // 0.5, 1.25, 2.125, 3.0625, so the arrivals finding 0..2 keep the flag, and the one
        // finding 3 (average 2.125) is the first to lose it.
        let p = params(
            PARAMS,
            &[
                ("wq", ParamValue::Float(0.5)),
                ("q_min", ParamValue::Size(Size::Packets(2))),
                ("mean_pkt_time", ParamValue::Int(1000)),
            ],
        );
        let mut h = Harness::new(Encn::new(p.size("q_min"), Some(QueueAverage::from_params(&p)), p.size("limit")));
        for i in 0..5 {
            h.enqueue(i, nc(i, 100));
        }
        assert_eq!(flagged(&mut h, 10), vec![0, 1, 2]);
    }

    #[test]
    fn behaves_as_droptail_at_the_limit() {
        let mut h = Harness::new(Encn::new(Size::Bytes(3000), None, Size::Packets(5)));
        for i in 0..8 {
            h.enqueue(i, nc(i, 1000));
        }
        assert_eq!(h.drops, 3);
        assert_eq!(h.disc.len_packets(), 5);
    }
}
