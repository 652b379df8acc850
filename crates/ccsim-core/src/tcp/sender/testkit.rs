//! The sender's test harness: a sender with an unlimited backlog (or a given application),
//! driven with ACKs built by hand; its window and output are read after each step. MSS 1000 B, header 40 B, IW as given (in segments).

pub(super) use super::*;
pub(super) use crate::app::UNLIMITED;
pub(super) use crate::packet::SackBlock;
pub(super) use crate::sim::time::MS;
pub(super) use crate::stats::FlowStats;
pub(super) use crate::tcp::cc::newreno::NewReno;
pub(super) use crate::tcp::cc::reno::Reno;

pub(super) struct Backlog;
impl Application for Backlog {
    fn next_wakeup(&self) -> Option<Time> {
        None
    }
    fn on_wakeup(&mut self, _: Time, _: &mut dyn Socket, _: &mut FlowStats) {}
}

pub(super) struct Harness {
    pub s: TcpSender,
    pub stats: FlowStats,
    pub now: Time,
}

impl Harness {
    pub fn new(init_cwnd: u64, sack: bool) -> Self {
        Self::with_cc(init_cwnd, sack, Box::new(NewReno::default()))
    }

    pub fn with_cc(init_cwnd: u64, sack: bool, cc: Box<dyn CongestionControl>) -> Self {
        let mut h = Self::with_app(init_cwnd, sack, cc, Box::new(Backlog));
        h.s.app_end = UNLIMITED;
        h
    }

    /// A sender fed by `app` (which writes when woken, see [`Harness::wake`]).
    pub fn with_app(init_cwnd: u64, sack: bool, cc: Box<dyn CongestionControl>, app: Box<dyn Application>) -> Self {
        let mut cfg = TcpConfig::default_config();
        cfg.mss = 1000;
        cfg.header = 40;
        cfg.init_cwnd = init_cwnd * 1000;
        cfg.sack = sack;
        cfg.rwnd = 1 << 30;
        let s = TcpSender::new(0, 1, cfg, cc, app);
        Harness { s, stats: FlowStats::default(), now: 0 }
    }

    /// Let the sender transmit; returns the sequence numbers sent (in segments).
    pub fn send(&mut self) -> Vec<u64> {
        let mut out = Vec::new();
        let mut cx =
            Cx { now: self.now, out: &mut out, stats: &mut self.stats, messages: &mut MessageLedger::default() };
        self.s.try_send(&mut cx);
        out.iter().map(|p| p.seq / 1000).collect()
    }

    /// Deliver an ACK for segment number `ack` (cumulative), with SACK blocks in segments.
    pub fn ack(&mut self, ack: u64, sack: &[(u64, u64)], ts_echo: Time) -> Vec<u64> {
        let mut pkt = Packet { kind: Kind::TcpAck, ack: ack * 1000, ts_echo, window: u32::MAX, ..Packet::default() };
        for (k, &(a, b)) in sack.iter().enumerate() {
            pkt.sack[k] = SackBlock { start: ((a - ack) * 1000) as u32, end: ((b - ack) * 1000) as u32 };
        }
        pkt.sack_len = sack.len() as u8;
        let mut out = Vec::new();
        let mut cx =
            Cx { now: self.now, out: &mut out, stats: &mut self.stats, messages: &mut MessageLedger::default() };
        self.s.on_packet(&pkt, &mut cx);
        out.iter().map(|p| p.seq / 1000).collect()
    }

    pub fn cwnd_segs(&self) -> f64 {
        self.s.st.cwnd as f64 / 1000.0
    }

    pub fn fire_rto(&mut self) -> Vec<u64> {
        self.wake(self.s.rto_deadline.expect("timer armed"))
    }

    /// Wake the sender at `at` (its timers, pacing); returns the sequence numbers sent.
    pub fn wake(&mut self, at: Time) -> Vec<u64> {
        self.now = at;
        let mut out = Vec::new();
        let mut cx =
            Cx { now: self.now, out: &mut out, stats: &mut self.stats, messages: &mut MessageLedger::default() };
        self.s.on_wakeup(&mut cx);
        out.iter().map(|p| p.seq / 1000).collect()
    }
}
