//! DCCP (RFC 4340) as a transport: unreliable datagrams, never retransmitted, whose sending
//! is governed by the congestion control chosen with the flow's CCID (`transport = { kind =
//! "dccp", ccid = 2 }`): 2 = TCP-like (RFC 4341, `ccid2.rs`), 3 = TFRC (RFC 4342 profiling
//! RFC 5348, `ccid3.rs` with the equation and loss history of `tfrc.rs`).
//!
//! The endpoints here are the parts both CCIDs share:
//! - The sender keeps a FIFO of datagrams the application wrote and sends the head whenever
//!   the CCID allows (`pipe < cwnd` for CCID 2, the paced send time `s / X` for CCID 3). The
//!   application's `buffer` bounds that FIFO through [`Socket::buffered`] (bytes written and
//!   not yet sent), so a message that finds it full is "lost on sensor" (paper 001). A write
//!   of at most `mps` bytes is one datagram; a larger one is cut into `mps`-byte datagrams,
//!   each its own message in the flow's ledger; an unlimited write (the `bulk` application)
//!   keeps an `mps`-byte datagram always ready, entered in the ledger when it leaves.
//! - Every datagram is entered in the message ledger when written, so a message waiting in
//!   the sender is "pending"; one the network drops is "lost on network" at once (the engine
//!   reports dropped datagrams to the ledger), and one overtaken by a later arrival too.
//!   Nothing is retransmitted.
//! - The receiver delivers every data packet and lets its CCID half decide when to send a
//!   DCCP-Ack (CCID 2: every Ack Ratio data packets or after `ack_delay`; CCID 3: feedback
//!   about once per RTT and at each new loss event).
//!
//! Deliberate simplifications (each one because the simulator has no use for the mechanism):
//! no handshake or teardown (the connection starts OPEN, as TCP here), so CCID 3 starts
//! without an RTT sample (RFC 5348 §4.2); no feature negotiation (the CCID is fixed per flow,
//! and CCID 2's Ack Ratio travels on every data packet instead of in Change L options); the
//! sender sends no acknowledgements of acknowledgements (RFC 4341 §6.2 needs them only so
//! that the receiver can prune Ack Vector state, which a bounded bitmap does not need); no
//! Sync, Reset, checksum coverage or ECN nonces.
//!
//! Packets stay small (`packet.rs`): DCCP fields are carried in the existing ones.
//! - Data: `seq` = the DCCP sequence number, which equals the datagram's number in the message
//!   ledger since the sender sends nothing but data; `window` = CCID 2's current Ack Ratio or
//!   CCID 3's window counter (CCVal, RFC 4342 §8.1); option word 0 = CCID 3's RTT estimate in
//!   microseconds (the Sender RTT Estimate option, RFC 6323; 0 = none yet).
//! - Ack: `seq` = the receiver's own sequence number (gaps reveal lost ACKs, RFC 4341
//!   §6.1.2); `ack` = the Acknowledgement Number, the highest data sequence number received;
//!   `ts_echo` = Timestamp Echo of that packet and `window` = Elapsed Time since it arrived, in
//!   microseconds (RFC 4340 §13.2-13.3), so `RTT = now - ts_echo - elapsed`.
//!   CCID 2's Ack Vector is summarised as a 128-bit bitmap of the sequence numbers
//!   `ack - 127 ..= ack` received (bit i for `ack - i`) plus a 64-bit bitmap of those that
//!   arrived CE-marked, in option words 0-3 and 4-5; packets older than the bitmap are not
//!   reported again (they matter only if every ACK covering them was lost). CCID 3's feedback
//!   carries the Loss Event Rate option (1/p, `u32::MAX` = no loss, RFC 4342 §8.5) in word 0
//!   and the Receive Rate option (bytes/s, §8.3) in word 1. The six option words are the
//!   storage of the packet's SACK blocks, which DCCP does not use.
//!
//! Statistics: `packets_sent` counts data packets, `retransmissions` stays 0; a CCID 2 window
//! halving on loss counts in `fast_recoveries` and on a CE mark in `ecn_reductions`;
//! `timeouts` counts CCID 2 retransmission-timer and CCID 3 nofeedback-timer expiries; RTT
//! samples are the sender's (from ACKs for CCID 2, from feedback for CCID 3).

pub mod ccid2;
pub mod ccid3;
pub mod tfrc;

use std::collections::VecDeque;

use crate::app::{Application, Socket, UNLIMITED};
use crate::endpoint::{Cx, Endpoint};
use crate::messages::MessageLedger;
use crate::packet::{Ecn, Kind, Packet, SackBlock};
use crate::params::{ParamKind, ParamSpec, ParamValue, Params};
use crate::results::FlowResult;
use crate::sim::time::{Time, MS, SEC};
use crate::transport::{refuse_cc, Segments, TransportModel};
use ccid2::{Ccid2Receiver, Ccid2Sender};
use ccid3::{Ccid3Receiver, Ccid3Sender};

/// Socket options of a DCCP flow, declared for `ccsim list` and validation.
pub static PARAMS: &[ParamSpec] = &[
    ParamSpec::new("ccid", ParamKind::Int, Some(ParamValue::Int(2)), "congestion control: 2 = TCP-like (RFC 4341), 3 = TFRC (RFC 4342)")
        .range(2.0, 3.0),
    ParamSpec::new(
        "header",
        ParamKind::Bytes,
        Some(ParamValue::Int(36)),
        "IP + DCCP-Data header bytes (20 + 16, RFC 4340 §5.1 with 48-bit sequence numbers)",
    )
    .range(0.0, 200.0),
    ParamSpec::new(
        "ack_size",
        ParamKind::Bytes,
        Some(ParamValue::Int(0)),
        "DCCP-Ack packet size; 0 = per CCID: 52 B for CCID 2 (20 IP + 24 DCCP-Ack + 8 Ack Vector), 64 B for CCID 3 (20 + 24 + 20 of Elapsed Time, Loss Event Rate and Receive Rate options)",
    )
    .range(0.0, 1500.0),
    ParamSpec::new("mps", ParamKind::Bytes, Some(ParamValue::Int(1464)), "largest datagram payload; larger writes are cut (1464 B gives 1500 B packets)")
        .range(1.0, 65_000.0),
    ParamSpec::new("ecn", ParamKind::Bool, Some(ParamValue::Bool(false)), "send data ECT(0); CE marks are congestion events (CCID 2) or losses (CCID 3)"),
    ParamSpec::new("ack_ratio", ParamKind::Int, Some(ParamValue::Int(2)), "CCID 2: initial Ack Ratio, data packets per ACK (RFC 4341 §6.1.2 default 2)")
        .range(1.0, 1e4),
    ParamSpec::new(
        "init_cwnd",
        ParamKind::Int,
        Some(ParamValue::Int(0)),
        "CCID 2: initial window in packets; 0 = RFC 3390 from mps (4 if mps <= 1095, 3 if <= 2190, else 2; RFC 4341 §5)",
    )
    .range(0.0, 1e6),
    ParamSpec::new("ack_delay", ParamKind::Time, Some(ParamValue::Int(200 * MS as i64)), "CCID 2: receiver's delayed-ACK timer when fewer than Ack Ratio packets arrived (ns-2 dack_delay_ 0.2 s)"),
    ParamSpec::new(
        "min_rto",
        ParamKind::Time,
        Some(ParamValue::Int(200 * MS as i64)),
        "CCID 2: minimum RTO; RFC 4341 §5 does not require TCP's 1 s as nothing is retransmitted (Linux 200 ms, ns-2 1 s)",
    ),
    ParamSpec::new("max_rto", ParamKind::Time, Some(ParamValue::Int(64 * SEC as i64)), "CCID 2: maximum RTO (Linux DCCP_RTO_MAX 64 s)"),
    ParamSpec::new("initial_rto", ParamKind::Time, Some(ParamValue::Int(SEC as i64)), "CCID 2: RTO before the first RTT sample (RFC 6298: 1 s)"),
    ParamSpec::new("t_mbi", ParamKind::Time, Some(ParamValue::Int(64 * SEC as i64)), "CCID 3: maximum backoff interval; the rate never falls below s/t_mbi (RFC 5348 §4.3)")
        .range(1.0, 1e13),
    ParamSpec::new(
        "history_discounting",
        ParamKind::Bool,
        Some(ParamValue::Bool(true)),
        "CCID 3: discount old loss intervals after a long loss-free period (RFC 5348 §5.5)",
    ),
];

/// Resolved DCCP socket options.
#[derive(Clone, Debug)]
pub struct DccpConfig {
    /// 2 or 3.
    pub ccid: u8,
    /// IP + DCCP-Data header bytes.
    pub header: u32,
    /// DCCP-Ack packet size.
    pub ack_size: u32,
    /// Largest datagram payload.
    pub mps: u32,
    /// ECN-capable.
    pub ecn: bool,
    /// CCID 2: initial Ack Ratio.
    pub ack_ratio: u32,
    /// CCID 2: initial window in packets.
    pub init_cwnd: u32,
    /// CCID 2: receiver's delayed-ACK timer.
    pub ack_delay: Time,
    /// CCID 2: minimum RTO.
    pub min_rto: Time,
    /// CCID 2: maximum RTO.
    pub max_rto: Time,
    /// CCID 2: RTO before the first sample.
    pub initial_rto: Time,
    /// CCID 3: maximum backoff interval.
    pub t_mbi: Time,
    /// CCID 3: RFC 5348 §5.5 history discounting.
    pub history_discounting: bool,
}

impl DccpConfig {
    /// From validated parameters.
    pub fn from_params(p: &Params) -> Self {
        let ccid = p.uint("ccid") as u8;
        let mps = p.uint("mps") as u32;
        let ack_size = match p.uint("ack_size") as u32 {
            0 if ccid == 2 => 52,
            0 => 64,
            n => n,
        };
        let init_cwnd = match p.uint("init_cwnd") as u32 {
            // RFC 3390 in packets, as RFC 4341 §5 asks.
            0 if mps <= 1095 => 4,
            0 if mps <= 2190 => 3,
            0 => 2,
            n => n,
        };
        DccpConfig {
            ccid,
            header: p.uint("header") as u32,
            ack_size,
            mps,
            ecn: p.bool("ecn"),
            ack_ratio: p.uint("ack_ratio") as u32,
            init_cwnd,
            ack_delay: p.uint("ack_delay"),
            min_rto: p.uint("min_rto"),
            max_rto: p.uint("max_rto").max(p.uint("min_rto")),
            initial_rto: p.uint("initial_rto"),
            t_mbi: p.uint("t_mbi").max(1),
            history_discounting: p.bool("history_discounting"),
        }
    }

    /// Defaults for `ccid`, for tests and Rust users.
    pub fn default_config(ccid: u8) -> Self {
        let given = [("ccid".to_string(), ParamValue::Int(ccid as i64))].into_iter().collect();
        let p = Params::resolve("dccp", PARAMS, &given).expect("defaults are valid");
        Self::from_params(&p)
    }
}

/// Registration.
pub const MODEL: TransportModel = TransportModel {
    name: "dccp",
    doc: "DCCP datagrams, never retransmitted, under CCID 2 (TCP-like, RFC 4341) or CCID 3 (TFRC, RFC 4342/5348)",
    params: PARAMS,
    vars: &[],
    build: |args| {
        refuse_cc(&args, "DCCP chooses its congestion control with transport.ccid (2 or 3)")?;
        let cfg = DccpConfig::from_params(&args.params);
        let (flow, src, dst) = (args.flow, args.spec.src, args.spec.dst);
        Ok((Box::new(DccpSender::new(flow, dst, cfg.clone(), args.app)), Box::new(DccpReceiver::new(flow, src, cfg))))
    },
    // A write larger than `mps` is cut into `mps`-byte datagrams; no connection set-up.
    segments: |p| Segments { payload: Some(p.uint("mps")), header: p.uint("header"), handshake: None },
};

// ----- the option words carried in the SACK storage -----

/// Read the six 32-bit option words of a DCCP packet.
pub fn options(p: &Packet) -> [u32; 6] {
    let s = &p.sack;
    [s[0].start, s[0].end, s[1].start, s[1].end, s[2].start, s[2].end]
}

/// Write the six 32-bit option words of a DCCP packet.
pub fn set_options(p: &mut Packet, w: [u32; 6]) {
    p.sack = [
        SackBlock { start: w[0], end: w[1] },
        SackBlock { start: w[2], end: w[3] },
        SackBlock { start: w[4], end: w[5] },
    ];
    p.sack_len = 0; // not SACK blocks
}

/// CCID 2's summarised Ack Vector: which of `ack - 127 ..= ack` arrived, and which of
/// `ack - 63 ..= ack` arrived CE-marked (bit i for `ack - i`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckVector {
    /// Received.
    pub received: u128,
    /// Received CE-marked.
    pub marked: u64,
}

impl AckVector {
    /// Sequence numbers covered below the Acknowledgement Number.
    pub const SPAN: u64 = 128;

    /// Pack into option words.
    pub fn to_words(self) -> [u32; 6] {
        let r = self.received;
        [r as u32, (r >> 32) as u32, (r >> 64) as u32, (r >> 96) as u32, self.marked as u32, (self.marked >> 32) as u32]
    }

    /// Unpack from option words.
    pub fn from_words(w: [u32; 6]) -> Self {
        let received = w[0] as u128 | (w[1] as u128) << 32 | (w[2] as u128) << 64 | (w[3] as u128) << 96;
        AckVector { received, marked: w[4] as u64 | (w[5] as u64) << 32 }
    }

    /// Whether `ack - i` was received.
    pub fn has(&self, i: u64) -> bool {
        i < Self::SPAN && self.received >> i & 1 == 1
    }

    /// Whether `ack - i` was received CE-marked.
    pub fn is_marked(&self, i: u64) -> bool {
        i < 64 && self.marked >> i & 1 == 1
    }
}

/// Microseconds, saturating in 32 bits (Elapsed Time and RTT options).
fn micros(t: Time) -> u32 {
    (t / 1_000).min(u32::MAX as u64) as u32
}

/// The RTT sample of an ACK: now minus the echoed timestamp minus the receiver's hold time;
/// `None` if the fields are inconsistent (they never are in a run).
pub fn ack_rtt(now: Time, pkt: &Packet) -> Option<Time> {
    let elapsed = pkt.window as u64 * 1_000;
    now.checked_sub(pkt.ts_echo)?.checked_sub(elapsed).map(|r| r.max(1_000))
}

// ----- the sender -----

/// The sender half of a CCID.
enum TxCcid {
    Two(Ccid2Sender),
    Three(Ccid3Sender),
}

impl TxCcid {
    fn send_time(&self) -> Option<Time> {
        match self {
            TxCcid::Two(c) => c.send_time(),
            TxCcid::Three(c) => c.send_time(),
        }
    }
    fn on_send(&mut self, now: Time, pkt: &mut Packet) {
        match self {
            TxCcid::Two(c) => c.on_send(now, pkt),
            TxCcid::Three(c) => c.on_send(now, pkt),
        }
    }
    fn on_blocked(&mut self, now: Time) {
        if let TxCcid::Three(c) = self {
            c.on_blocked(now);
        }
    }
    fn on_ack(&mut self, pkt: &Packet, cx: &mut Cx) {
        match self {
            TxCcid::Two(c) => c.on_ack(cx.now, pkt, cx.stats),
            TxCcid::Three(c) => c.on_feedback(cx.now, pkt, cx.stats),
        }
    }
    fn timer(&self) -> Option<Time> {
        match self {
            TxCcid::Two(c) => c.timer(),
            TxCcid::Three(c) => c.timer(),
        }
    }
    fn on_timer(&mut self, cx: &mut Cx) {
        match self {
            TxCcid::Two(c) => c.on_timer(cx.now, cx.stats),
            TxCcid::Three(c) => c.on_timer(cx.now, cx.stats),
        }
    }
}

/// A DCCP sender.
pub struct DccpSender {
    flow: u32,
    dst: u32,
    cfg: DccpConfig,
    app: Box<dyn Application>,
    tx: TxCcid,
    /// Payload sizes of the datagrams written and not yet sent, oldest first.
    queue: VecDeque<u32>,
    queued_bytes: u64,
    /// An unlimited write: an `mps`-byte datagram is always ready once `queue` is empty.
    backlog: bool,
    /// The socket was closed: further writes are ignored.
    closed: bool,
    /// Sequence number of the next data packet.
    next_seq: u64,
}

/// The socket as the application sees it.
struct SockView<'a> {
    s: &'a mut DccpSender,
    now: Time,
    messages: &'a mut MessageLedger,
}

impl Socket for SockView<'_> {
    fn buffered(&self) -> u64 {
        if self.s.backlog {
            UNLIMITED
        } else {
            self.s.queued_bytes
        }
    }

    fn write(&mut self, bytes: u64) {
        let s = &mut *self.s;
        if s.closed || s.backlog || bytes == 0 {
            return;
        }
        if bytes >= UNLIMITED / 2 {
            s.backlog = true;
            return;
        }
        let mps = s.cfg.mps as u64;
        let mut left = bytes;
        while left > 0 {
            let len = left.min(mps);
            let n = self.messages.write_datagram(self.now);
            debug_assert_eq!(n, s.next_seq + s.queue.len() as u64, "ledger and sequence numbers agree");
            s.queue.push_back(len as u32);
            s.queued_bytes += len;
            left -= len;
        }
    }

    fn close(&mut self) {
        let s = &mut *self.s;
        s.closed = true;
        s.backlog = false;
        s.queue.clear();
        s.queued_bytes = 0;
    }
}

impl DccpSender {
    /// A sender for `flow` towards node `dst`.
    pub fn new(flow: u32, dst: u32, cfg: DccpConfig, app: Box<dyn Application>) -> Self {
        let tx = match cfg.ccid {
            3 => TxCcid::Three(Ccid3Sender::new(&cfg)),
            _ => TxCcid::Two(Ccid2Sender::new(&cfg)),
        };
        DccpSender {
            flow,
            dst,
            cfg,
            app,
            tx,
            queue: VecDeque::new(),
            queued_bytes: 0,
            backlog: false,
            closed: false,
            next_seq: 0,
        }
    }

    fn has_data(&self) -> bool {
        !self.queue.is_empty() || self.backlog
    }

    /// Datagrams written and not yet sent.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// The CCID 2 half, for tests and inspection.
    pub fn ccid2(&self) -> Option<&Ccid2Sender> {
        match &self.tx {
            TxCcid::Two(c) => Some(c),
            TxCcid::Three(_) => None,
        }
    }

    /// The CCID 3 half, for tests and inspection.
    pub fn ccid3(&self) -> Option<&Ccid3Sender> {
        match &self.tx {
            TxCcid::Three(c) => Some(c),
            TxCcid::Two(_) => None,
        }
    }

    fn run_app(&mut self, cx: &mut Cx, triggered: bool) {
        let now = cx.now;
        // The application borrows the socket, which is this sender minus the application.
        let mut app = std::mem::replace(&mut self.app, Box::new(NoApp));
        {
            let mut sock = SockView { s: self, now, messages: cx.messages };
            if triggered {
                app.on_trigger(now, &mut sock, cx.stats);
            } else {
                app.on_wakeup(now, &mut sock, cx.stats);
            }
        }
        self.app = app;
    }

    /// Send what the CCID allows, oldest datagram first.
    fn try_send(&mut self, cx: &mut Cx) {
        let now = cx.now;
        while self.has_data() && self.tx.send_time().is_some_and(|t| t <= now) {
            let payload = match self.queue.pop_front() {
                Some(len) => {
                    self.queued_bytes -= len as u64;
                    len
                }
                None => {
                    let n = cx.messages.write_datagram(now);
                    debug_assert_eq!(n, self.next_seq);
                    self.cfg.mps
                }
            };
            let mut pkt = Packet {
                flow: self.flow,
                dst: self.dst,
                size: payload.saturating_add(self.cfg.header),
                payload,
                seq: self.next_seq,
                ts: now,
                kind: Kind::DccpData,
                ecn: if self.cfg.ecn { Ecn::Ect0 } else { Ecn::NotEct },
                ..Packet::default()
            };
            self.next_seq += 1;
            self.tx.on_send(now, &mut pkt);
            cx.out.push(pkt);
            cx.stats.count(now, |s| &mut s.packets_sent);
        }
        if self.has_data() {
            self.tx.on_blocked(now);
        }
    }
}

/// Stands in for the application while it runs.
struct NoApp;

impl Application for NoApp {
    fn next_wakeup(&self) -> Option<Time> {
        None
    }
    fn on_wakeup(&mut self, _: Time, _: &mut dyn Socket, _: &mut crate::stats::FlowStats) {}
}

impl Endpoint for DccpSender {
    fn on_packet(&mut self, pkt: &Packet, cx: &mut Cx) {
        if pkt.kind == Kind::DccpAck {
            self.tx.on_ack(pkt, cx);
            self.try_send(cx);
        }
    }

    fn on_wakeup(&mut self, cx: &mut Cx) {
        let now = cx.now;
        if self.app.next_wakeup().is_some_and(|t| t <= now) {
            self.run_app(cx, false);
        }
        if self.tx.timer().is_some_and(|t| t <= now) {
            self.tx.on_timer(cx);
        }
        self.try_send(cx);
    }

    fn next_wakeup(&self) -> Option<Time> {
        let send = if self.has_data() { self.tx.send_time() } else { None };
        [self.app.next_wakeup(), self.tx.timer(), send].into_iter().flatten().min()
    }

    fn on_app_trigger(&mut self, cx: &mut Cx) {
        self.run_app(cx, true);
        self.try_send(cx);
    }

    fn cwnd(&self) -> Option<u64> {
        match &self.tx {
            TxCcid::Two(c) => Some(c.cwnd() as u64 * self.cfg.mps as u64),
            TxCcid::Three(_) => None,
        }
    }

    fn report(&self, row: &mut FlowResult) {
        match &self.tx {
            TxCcid::Two(c) => {
                row.cc = "ccid2".to_string();
                row.final_cwnd_bytes = Some(c.cwnd() as u64 * self.cfg.mps as u64);
            }
            TxCcid::Three(_) => row.cc = "ccid3".to_string(),
        }
    }
}

// ----- the receiver -----

/// The receiver half of a CCID.
enum RxCcid {
    Two(Ccid2Receiver),
    /// Boxed: its per-sequence-number window makes it several times larger.
    Three(Box<Ccid3Receiver>),
}

/// A DCCP receiver.
pub struct DccpReceiver {
    flow: u32,
    /// The sending host, where ACKs go.
    peer: u32,
    ack_size: u32,
    rx: RxCcid,
    /// Sequence number of the next ACK.
    ack_seq: u64,
}

impl DccpReceiver {
    /// A receiver for `flow` acknowledging to node `peer`.
    pub fn new(flow: u32, peer: u32, cfg: DccpConfig) -> Self {
        let rx = match cfg.ccid {
            3 => RxCcid::Three(Box::new(Ccid3Receiver::new(&cfg))),
            _ => RxCcid::Two(Ccid2Receiver::new(&cfg)),
        };
        DccpReceiver { flow, peer, ack_size: cfg.ack_size, rx, ack_seq: 0 }
    }

    /// The CCID 3 half, for tests and inspection.
    pub fn ccid3(&self) -> Option<&Ccid3Receiver> {
        match &self.rx {
            RxCcid::Three(r) => Some(&**r),
            RxCcid::Two(_) => None,
        }
    }

    fn send_ack(&mut self, cx: &mut Cx) {
        let mut pkt = Packet {
            flow: self.flow,
            dst: self.peer,
            size: self.ack_size,
            seq: self.ack_seq,
            ts: cx.now,
            kind: Kind::DccpAck,
            ..Packet::default()
        };
        self.ack_seq += 1;
        match &mut self.rx {
            RxCcid::Two(r) => r.fill_ack(cx.now, &mut pkt),
            RxCcid::Three(r) => r.fill_feedback(cx.now, &mut pkt),
        }
        cx.out.push(pkt);
    }
}

impl Endpoint for DccpReceiver {
    fn on_packet(&mut self, pkt: &Packet, cx: &mut Cx) {
        if pkt.kind != Kind::DccpData {
            return;
        }
        cx.stats.delivered(cx.now, pkt.payload as u64, pkt.payload as u64);
        cx.messages.deliver_datagram(cx.now, pkt.seq);
        let ack_now = match &mut self.rx {
            RxCcid::Two(r) => r.on_data(cx.now, pkt),
            RxCcid::Three(r) => r.on_data(cx.now, pkt),
        };
        if ack_now {
            self.send_ack(cx);
        }
    }

    fn on_wakeup(&mut self, cx: &mut Cx) {
        let due = match &mut self.rx {
            RxCcid::Two(r) => r.on_timer(cx.now),
            RxCcid::Three(_) => false,
        };
        if due {
            self.send_ack(cx);
        }
    }

    fn next_wakeup(&self) -> Option<Time> {
        match &self.rx {
            RxCcid::Two(r) => r.timer(),
            RxCcid::Three(_) => None,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    //! The two endpoints joined by a scripted network: a delay each way and a rule that
    //! decides which data packets the network drops.
    use super::*;
    use crate::stats::FlowStats;
    use std::collections::BTreeMap;

    /// An application that writes `size` bytes every `period` (a sensor), unbounded.
    pub struct Every {
        pub next: Time,
        pub period: Time,
        pub size: u64,
        pub until: Time,
    }

    impl Application for Every {
        fn next_wakeup(&self) -> Option<Time> {
            (self.next < self.until).then_some(self.next)
        }
        fn on_wakeup(&mut self, now: Time, sock: &mut dyn Socket, _: &mut FlowStats) {
            while self.next <= now && self.next < self.until {
                sock.write(self.size);
                self.next += self.period;
            }
        }
    }

    /// What the run saw.
    #[derive(Default)]
    pub struct Trace {
        /// Every data packet the sender emitted, in order.
        pub data: Vec<Packet>,
        /// Every ACK the receiver emitted, in order.
        pub acks: Vec<Packet>,
        pub delivered: Vec<u64>,
    }

    /// Run sender and receiver over a network with one-way delay `delay` (no queueing) that
    /// drops the data packets for which `drop(seq)` is true, until `end`.
    pub fn run_pipe(
        cfg: DccpConfig,
        app: Box<dyn Application>,
        delay: Time,
        end: Time,
        mut drop: impl FnMut(u64) -> bool,
    ) -> (DccpSender, DccpReceiver, Trace, FlowStats) {
        let mut s = DccpSender::new(0, 1, cfg.clone(), app);
        let mut r = DccpReceiver::new(0, 0, cfg);
        let mut trace = Trace::default();
        let mut stats = FlowStats::default();
        let mut ledger = MessageLedger::default();
        // In flight: (arrival time, order) -> (to the receiver?, packet).
        let mut wire: BTreeMap<(Time, u64), (bool, Packet)> = BTreeMap::new();
        let mut order = 0u64;
        let mut out = Vec::new();
        let mut now = 0;
        loop {
            let next_wire = wire.keys().next().map(|k| k.0);
            let next = [s.next_wakeup(), r.next_wakeup(), next_wire].into_iter().flatten().min();
            let Some(t) = next else { break };
            if t > end {
                break;
            }
            now = now.max(t);
            {
                let mut cx = Cx { now, out: &mut out, stats: &mut stats, messages: &mut ledger };
                if next_wire == Some(t) {
                    let (&key, _) = wire.iter().next().unwrap();
                    let (to_rx, pkt) = wire.remove(&key).unwrap();
                    if to_rx {
                        trace.delivered.push(pkt.seq);
                        r.on_packet(&pkt, &mut cx);
                    } else {
                        s.on_packet(&pkt, &mut cx);
                    }
                } else if s.next_wakeup().is_some_and(|w| w <= now) {
                    s.on_wakeup(&mut cx);
                } else {
                    r.on_wakeup(&mut cx);
                }
            }
            for p in out.drain(..) {
                let to_rx = p.kind == Kind::DccpData;
                if to_rx {
                    trace.data.push(p);
                    if drop(p.seq) {
                        continue;
                    }
                } else {
                    trace.acks.push(p);
                }
                wire.insert((now + delay, order), (to_rx, p));
                order += 1;
            }
        }
        (s, r, trace, stats)
    }

    #[test]
    fn ack_vectors_round_trip_through_the_option_words() {
        let v = AckVector { received: (1u128 << 127) | (1 << 64) | 0b1011, marked: (1u64 << 63) | 2 };
        assert_eq!(AckVector::from_words(v.to_words()), v);
        let mut p = Packet::default();
        set_options(&mut p, v.to_words());
        assert_eq!(AckVector::from_words(options(&p)), v);
        assert!(v.has(0) && v.has(1) && !v.has(2) && v.has(3) && v.has(64) && v.has(127) && !v.has(128));
        assert!(v.is_marked(1) && v.is_marked(63) && !v.is_marked(0) && !v.is_marked(64));
    }

    #[test]
    fn defaults_follow_rfc_3390_and_the_ccid() {
        let c2 = DccpConfig::default_config(2);
        assert_eq!((c2.mps, c2.init_cwnd, c2.ack_size, c2.header), (1464, 3, 52, 36));
        let c3 = DccpConfig::default_config(3);
        assert_eq!(c3.ack_size, 64);
        let mut given: BTreeMap<String, ParamValue> = BTreeMap::new();
        given.insert("mps".into(), ParamValue::Int(1000));
        assert_eq!(DccpConfig::from_params(&Params::resolve("d", PARAMS, &given).unwrap()).init_cwnd, 4);
        given.insert("mps".into(), ParamValue::Int(3000));
        assert_eq!(DccpConfig::from_params(&Params::resolve("d", PARAMS, &given).unwrap()).init_cwnd, 2);
        given.insert("ccid".into(), ParamValue::Int(4));
        assert_eq!(Params::resolve("d", PARAMS, &given).unwrap_err().field, "d.ccid");
    }

    #[test]
    fn writes_become_datagrams_and_the_buffer_counts_unsent_bytes() {
        let mut cfg = DccpConfig::default_config(2);
        cfg.mps = 1000;
        let mut s = DccpSender::new(0, 1, cfg, Box::new(NoApp));
        let mut ledger = MessageLedger::default();
        {
            let mut sock = SockView { s: &mut s, now: 0, messages: &mut ledger };
            sock.write(300);
            sock.write(2500); // cut into 1000, 1000, 500
            assert_eq!(sock.buffered(), 2800);
        }
        assert_eq!(s.queue, VecDeque::from(vec![300, 1000, 1000, 500]));
        assert_eq!(ledger.pending(), 4);
        let mut out = Vec::new();
        let mut stats = FlowStats::default();
        let mut cx = Cx { now: 0, out: &mut out, stats: &mut stats, messages: &mut ledger };
        s.try_send(&mut cx); // initial window 3 packets
        assert_eq!(
            out.iter().map(|p| (p.seq, p.payload, p.size)).collect::<Vec<_>>(),
            vec![(0, 300, 336), (1, 1000, 1036), (2, 1000, 1036)]
        );
        assert_eq!(s.queued_bytes, 500);
        assert!(out.iter().all(|p| p.kind == Kind::DccpData && p.window == 2));
    }
}
