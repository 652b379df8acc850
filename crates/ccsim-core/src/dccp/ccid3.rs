//! CCID 3, TCP-Friendly Rate Control (RFC 4342 profiling RFC 5348), sender and receiver
//! halves; the equation and the loss interval history are in `tfrc.rs`.
//!
//! Sender (RFC 5348 §4):
//! - §4.2: before any feedback the allowed rate is one packet per second (`X = s`) and the
//!   nofeedback timer is 2 s; the first feedback sets `R` to its sample and `X = W_init / R`
//!   with `W_init = min(4 MSS, max(2 MSS, 4380 B))` (RFC 3390; MSS = this transport's
//!   `mps`), `tld = now`. `X_recv_set` starts as `{Infinity}`.
//! - §4.3, on each feedback: `R_sample = now - t_recvdata - t_delay` (Timestamp Echo and
//!   Elapsed Time), `R = 0.9 R + 0.1 R_sample`; then, if the whole interval the feedback
//!   covers was data-limited: when it reports a new loss event or a higher `p`, halve the
//!   entries of `X_recv_set`, take `X_recv = 0.85 X_recv`, maximize the set and
//!   `recv_limit = max(X_recv_set)`, otherwise maximize it and `recv_limit = 2
//!   max(X_recv_set)`; if not data-limited, add `X_recv`, drop entries older than two RTTs
//!   and `recv_limit = 2 max(X_recv_set)`. With `p > 0`: `X = max(min(X_Bps, recv_limit),
//!   s / t_mbi)`; with `p = 0` (slow start), once per RTT (`now - tld >= R`):
//!   `X = max(min(2 X, recv_limit), W_init / R)`, `tld = now`. The nofeedback timer is reset
//!   to `max(4 R, 2 s / X)`. "Maximize" adds `X_recv`, removes Infinity and keeps only the
//!   largest entry.
//! - Data-limited intervals (§8.2.1's aim, in this simulator's terms): the sender notes every
//!   moment a datagram had to wait for the rate; a feedback covers the data sent between the
//!   packets echoed by the previous feedback and by this one, and the interval was
//!   data-limited if no datagram waited during it.
//! - §4.4, nofeedback timer expiry: with no RTT yet, `X = max(X/2, s/t_mbi)`, next in 2 s.
//!   Otherwise, with `recover_rate = W_init / R`: if the sender has been idle since the timer
//!   was set and (`p > 0` and `X_recv < recover_rate`, or `p = 0` and `X < 2
//!   recover_rate`), nothing changes; else with `p = 0`, `X = max(X/2, s/t_mbi)`; else if
//!   `X_Bps > 2 X_recv`, `update_limits(X_recv)`, otherwise `update_limits(X_Bps / 2)`, where
//!   `update_limits(l)` sets `X_recv_set = {max(l, s/t_mbi) / 2}` and recomputes `X` as in
//!   §4.3 with `recv_limit = max(l, s/t_mbi)`. (`X_recv` here is `max(X_recv_set)`.) The
//!   timer restarts at `max(4 R, 2 s / X)`.
//! - §8.3 / §4.6 pacing: a packet may leave `s / X` after the previous one (`t_ipi`), with
//!   the current `X`; the simulator's clock is exact, so `t_delta = 0`, and an idle sender
//!   gains no credit for a burst.
//! - `s` is the mean payload (EWMA, weight 0.9 on the old value, as Linux; RFC 5348 §3.1 and
//!   RFC 4342 §5.3 count `s` without headers).
//! - RFC 4342 §8.1 window counter (CCVal): 0 at the start, advanced on each data packet by
//!   the number of quarter RTTs since its last advance, at most 5, modulo 16 (not advanced
//!   before the first RTT sample, as Linux).
//! - Oscillation damping (§4.5, optional) is not implemented.
//!
//! Receiver (RFC 5348 §5-6 with RFC 4342 §10):
//! - A packet is lost once `NDUPACK = 3` packets with higher sequence numbers have arrived
//!   (§5.1); a CE-marked packet counts as a loss too. Losses form loss events by window
//!   counter (`tfrc.rs`); the first loss interval is synthesised from the receive rate
//!   (§6.3.1: `1/p` for the `p` at which the equation gives `X_recv`, with the sender's RTT
//!   and the mean packet size), or, if the sender's RTT is not yet known, is the number of
//!   packets received so far.
//! - `X_recv` is the payload received since the last feedback over the time since then, but
//!   over at least one RTT (RFC 4342 errata 610/611, as Linux); the first loss interval uses
//!   the larger of that and the last reported `X_recv`.
//! - Feedback (a DCCP-Ack with the Loss Event Rate and Receive Rate options): at the first
//!   data packet, whenever a loss event raises `p` (§6.1), when a data packet's window
//!   counter is at least 4 (one RTT) beyond the one of the last packet before the previous
//!   feedback (RFC 4342 §10.3), and on every data packet while the sender has no RTT
//!   estimate yet (so that a lost first feedback cannot stall the connection).
//! - The receiver learns `R` from the Sender RTT Estimate option (RFC 6323) each data packet
//!   carries, instead of estimating it from window counters.

use super::tfrc::{ccval_after, p_for_rate, x_bps, LossHistory};
use super::{ack_rtt, micros, options, set_options, DccpConfig};
use crate::packet::{Ecn, Packet};
use crate::sim::time::{secs, Time, SEC};
use crate::stats::FlowStats;

/// Packets that must arrive after a missing one before it is lost (RFC 5348 §5.1).
pub const NDUPACK: u32 = 3;

/// Nofeedback timeout before the first RTT sample (RFC 5348 §4.2).
const INITIAL_NOFEEDBACK: Time = 2 * SEC;

/// `X_recv_set` capacity; entries older than two RTTs are dropped long before it fills.
const XRECV_CAP: usize = 8;

/// Recently reported receive rates with the times they were recorded (RFC 5348 §4.3).
#[derive(Clone, Copy, Debug)]
struct XRecvSet {
    e: [(Time, f64); XRECV_CAP],
    n: usize,
}

impl XRecvSet {
    fn infinite(now: Time) -> Self {
        let mut e = [(0, 0.0); XRECV_CAP];
        e[0] = (now, f64::INFINITY);
        XRecvSet { e, n: 1 }
    }

    fn max(&self) -> f64 {
        self.e[..self.n].iter().map(|x| x.1).fold(0.0, f64::max)
    }

    /// Add `x`, then drop what is older than `window` (two RTTs).
    fn update(&mut self, now: Time, x: f64, window: Time) {
        if self.n == XRECV_CAP {
            self.e.copy_within(1.., 0);
            self.n -= 1;
        }
        self.e[self.n] = (now, x);
        self.n += 1;
        let mut k = 0;
        for i in 0..self.n {
            if self.e[i].0 + window >= now {
                self.e[k] = self.e[i];
                k += 1;
            }
        }
        self.n = k;
    }

    /// Add `x`, drop Infinity, keep the largest entry only.
    fn maximize(&mut self, now: Time, x: f64) {
        let m = self.e[..self.n].iter().map(|e| e.1).filter(|v| v.is_finite()).fold(x, f64::max);
        self.set(now, m);
    }

    fn halve(&mut self) {
        for e in &mut self.e[..self.n] {
            e.1 /= 2.0;
        }
    }

    fn set(&mut self, now: Time, x: f64) {
        self.e[0] = (now, x);
        self.n = 1;
    }
}

/// The CCID 3 sender half.
pub struct Ccid3Sender {
    mps: f64,
    t_mbi: f64,
    /// Allowed sending rate (payload bytes/s).
    x: f64,
    /// Rate from the throughput equation.
    x_calc: f64,
    /// Loss event rate last reported.
    p: f64,
    /// Smoothed RTT (s), once feedback arrived.
    r: Option<f64>,
    /// Mean payload size (bytes).
    s: f64,
    /// Time the rate last doubled in slow start.
    tld: Time,
    last_send: Option<Time>,
    nofb_deadline: Option<Time>,
    /// No packet sent since the nofeedback timer was last set.
    idle_since_nofb: bool,
    ccval: u8,
    last_wc: Time,
    /// Last time a datagram waited for the rate (the sender was not data-limited).
    last_rate_limited: Option<Time>,
    /// Send time from which the next feedback's interval starts.
    covered_from: Time,
    x_recv_set: XRecvSet,
}

impl Ccid3Sender {
    /// A sender at the start of a connection (it has sent nothing).
    pub fn new(cfg: &DccpConfig) -> Self {
        Ccid3Sender {
            mps: cfg.mps as f64,
            t_mbi: secs(cfg.t_mbi),
            x: 0.0,
            x_calc: 0.0,
            p: 0.0,
            r: None,
            s: 0.0,
            tld: 0,
            last_send: None,
            nofb_deadline: None,
            idle_since_nofb: false,
            ccval: 0,
            last_wc: 0,
            last_rate_limited: None,
            covered_from: 0,
            x_recv_set: XRecvSet::infinite(0),
        }
    }

    /// Allowed sending rate (payload bytes/s).
    pub fn rate(&self) -> f64 {
        self.x
    }

    /// Rate from the throughput equation at the last feedback.
    pub fn x_calc(&self) -> f64 {
        self.x_calc
    }

    /// Loss event rate last reported.
    pub fn p(&self) -> f64 {
        self.p
    }

    /// Smoothed RTT (s).
    pub fn rtt(&self) -> Option<f64> {
        self.r
    }

    /// Mean payload size (bytes).
    pub fn s(&self) -> f64 {
        self.s
    }

    /// The window counter of the next packet.
    pub fn ccval(&self) -> u8 {
        self.ccval
    }

    /// `W_init / R` (RFC 3390 window per RTT).
    fn initial_rate(&self, r: f64) -> f64 {
        (4.0 * self.mps).min((2.0 * self.mps).max(4380.0)) / r
    }

    fn min_rate(&self) -> f64 {
        self.s / self.t_mbi
    }

    /// Inter-packet interval `s / X`.
    fn t_ipi(&self) -> Time {
        if self.x > 0.0 {
            ((self.s / self.x) * 1e9).min(1e15) as Time
        } else {
            0
        }
    }

    /// Earliest time the next packet may leave.
    pub fn send_time(&self) -> Option<Time> {
        Some(self.last_send.map_or(0, |t| t + self.t_ipi()))
    }

    /// A data packet leaves: its window counter and the RTT estimate go with it.
    pub fn on_send(&mut self, now: Time, pkt: &mut Packet) {
        let len = pkt.payload as f64;
        if self.last_send.is_none() {
            // §4.2: one packet per second until feedback, nofeedback timer 2 s.
            self.s = len.max(1.0);
            self.x = self.s;
            self.nofb_deadline = Some(now + INITIAL_NOFEEDBACK);
            self.x_recv_set = XRecvSet::infinite(now);
            self.last_wc = now;
            self.covered_from = now;
        } else {
            self.s = 0.9 * self.s + 0.1 * len;
        }
        if let Some(r) = self.r {
            let quarter = ((r / 4.0) * 1e9).max(1.0) as Time;
            let steps = (now - self.last_wc) / quarter;
            if steps > 0 {
                self.last_wc = now;
                self.ccval = ((self.ccval as u64 + steps.min(5)) & 0xF) as u8;
            }
        }
        pkt.window = self.ccval as u32;
        let mut w = [0u32; 6];
        w[0] = self.r.map_or(0, |r| micros((r * 1e9) as Time).max(1));
        set_options(pkt, w);
        self.last_send = Some(now);
        self.idle_since_nofb = false;
    }

    /// A datagram is waiting for the rate.
    pub fn on_blocked(&mut self, now: Time) {
        self.last_rate_limited = Some(now);
    }

    /// A feedback packet arrived (RFC 5348 §4.3).
    pub fn on_feedback(&mut self, now: Time, pkt: &Packet, stats: &mut FlowStats) {
        if self.last_send.is_none() {
            return;
        }
        let w = options(pkt);
        let p_new = match w[0] {
            u32::MAX => 0.0,
            0 => 1.0,
            n => 1.0 / n as f64,
        };
        let x_recv = w[1] as f64;
        let Some(sample) = ack_rtt(now, pkt) else { return };
        stats.rtt_sample(now, sample);
        let data_limited = self.last_rate_limited.is_none_or(|t| t < self.covered_from);
        self.covered_from = self.covered_from.max(pkt.ts_echo);

        let first = self.r.is_none();
        let r = match self.r {
            None => secs(sample),
            Some(r) => 0.9 * r + 0.1 * secs(sample),
        };
        self.r = Some(r);
        if first {
            self.x = self.initial_rate(r);
            self.tld = now;
        }
        if !first || p_new > 0.0 {
            let recv_limit = if data_limited {
                if p_new > self.p {
                    self.x_recv_set.halve();
                    self.x_recv_set.maximize(now, 0.85 * x_recv);
                    self.x_recv_set.max()
                } else {
                    self.x_recv_set.maximize(now, x_recv);
                    2.0 * self.x_recv_set.max()
                }
            } else {
                self.x_recv_set.update(now, x_recv, (2.0 * r * 1e9) as Time);
                2.0 * self.x_recv_set.max()
            };
            self.p = p_new;
            self.recompute(now, recv_limit);
        }
        self.restart_nofeedback(now);
    }

    /// Step 4 of §4.3 with `recv_limit`.
    fn recompute(&mut self, now: Time, recv_limit: f64) {
        let r = self.r.unwrap_or(1.0);
        if self.p > 0.0 {
            self.x_calc = x_bps(self.s, r, self.p);
            self.x = self.x_calc.min(recv_limit).max(self.min_rate());
        } else if secs(now.saturating_sub(self.tld)) >= r {
            self.x = (2.0 * self.x).min(recv_limit).max(self.initial_rate(r));
            self.tld = now;
        }
    }

    fn restart_nofeedback(&mut self, now: Time) {
        let r = self.r.unwrap_or(0.0);
        let t = (4.0 * r).max(2.0 * self.s / self.x.max(f64::MIN_POSITIVE));
        self.nofb_deadline = Some(now + (t * 1e9).min(1e15) as Time);
        self.idle_since_nofb = true;
    }

    /// The nofeedback timer's deadline.
    pub fn timer(&self) -> Option<Time> {
        self.nofb_deadline
    }

    /// The nofeedback timer expired (RFC 5348 §4.4).
    pub fn on_timer(&mut self, now: Time, stats: &mut FlowStats) {
        if self.nofb_deadline.is_none_or(|t| t > now) {
            return;
        }
        stats.count(now, |s| &mut s.timeouts);
        let Some(r) = self.r else {
            self.x = (self.x / 2.0).max(self.min_rate());
            self.nofb_deadline = Some(now + INITIAL_NOFEEDBACK);
            self.idle_since_nofb = true;
            return;
        };
        let recover_rate = self.initial_rate(r);
        let x_recv = self.x_recv_set.max();
        let idle = self.idle_since_nofb;
        if idle && ((self.p > 0.0 && x_recv < recover_rate) || (self.p == 0.0 && self.x < 2.0 * recover_rate)) {
            // An idle sender keeps its rate (RFC 4342 §5.1, RFC 5348 §4.4).
        } else if self.p == 0.0 {
            self.x = (self.x / 2.0).max(self.min_rate());
        } else if self.x_calc > 2.0 * x_recv {
            self.update_limits(now, x_recv);
        } else {
            self.update_limits(now, self.x_calc / 2.0);
        }
        self.restart_nofeedback(now);
    }

    fn update_limits(&mut self, now: Time, limit: f64) {
        let limit = limit.max(self.min_rate());
        self.x_recv_set.set(now, limit / 2.0);
        self.recompute(now, limit);
    }
}

/// Per-sequence-number record in the receiver's window: window counter and CE mark.
const MARKED: u8 = 0x80;

/// The CCID 3 receiver half.
pub struct Ccid3Receiver {
    /// Highest data sequence number received.
    gsr: Option<u64>,
    /// Bit i: `gsr - i` received.
    recv: u128,
    /// Window counter (and [`MARKED`]) of each sequence number in the window, by `seq % 128`.
    info: [u8; 128],
    /// Every sequence number up to this one has been resolved (received or lost).
    nonloss: u64,
    /// Window counter of the last packet received at or below `nonloss`.
    nonloss_ccval: u8,
    history: LossHistory,
    /// Mean payload size (bytes).
    s: f64,
    /// The sender's RTT estimate (s).
    r: Option<f64>,
    bytes_since_fb: u64,
    t_last_fb: Option<Time>,
    x_recv_last: f64,
    ccval_last_fb: u8,
    last_ccval: u8,
    last_ts: Time,
    last_arrival: Time,
    /// `p` in the last feedback.
    p_last: f64,
    /// Data packets received.
    received: u64,
}

impl Ccid3Receiver {
    /// A receiver at the start of a connection.
    pub fn new(cfg: &DccpConfig) -> Self {
        Ccid3Receiver {
            gsr: None,
            recv: 0,
            info: [0; 128],
            nonloss: 0,
            nonloss_ccval: 0,
            history: LossHistory::new(cfg.history_discounting),
            s: 0.0,
            r: None,
            bytes_since_fb: 0,
            t_last_fb: None,
            x_recv_last: 0.0,
            ccval_last_fb: 0,
            last_ccval: 0,
            last_ts: 0,
            last_arrival: 0,
            p_last: 0.0,
            received: 0,
        }
    }

    /// The loss event rate now.
    pub fn p(&self) -> f64 {
        self.history.p()
    }

    /// The loss history (tests and inspection).
    pub fn history(&self) -> &LossHistory {
        &self.history
    }

    /// A data packet arrived; true if feedback is due now.
    pub fn on_data(&mut self, now: Time, pkt: &Packet) -> bool {
        let ccval = (pkt.window & 0xF) as u8;
        let mark = if pkt.ecn == Ecn::Ce { MARKED } else { 0 };
        let rtt_us = options(pkt)[0];
        if rtt_us > 0 {
            self.r = Some(rtt_us as f64 * 1e-6);
        }
        let len = pkt.payload as f64;
        self.s = if self.received == 0 { len } else { 0.9 * self.s + 0.1 * len };
        self.received += 1;
        self.bytes_since_fb += pkt.payload as u64;
        let seq = pkt.seq;
        let Some(g) = self.gsr else {
            self.gsr = Some(seq);
            self.recv = 1;
            self.info[(seq % 128) as usize] = ccval | mark;
            self.nonloss = seq;
            self.nonloss_ccval = ccval;
            self.newest(now, pkt, ccval);
            return true; // initial feedback
        };
        if seq > g {
            let shift = seq - g;
            self.recv = if shift >= 128 { 0 } else { self.recv << shift };
            self.recv |= 1;
            self.gsr = Some(seq);
            self.newest(now, pkt, ccval);
        } else if seq <= self.nonloss || g - seq >= 128 {
            return false; // already resolved: a duplicate, or too late to matter
        } else {
            self.recv |= 1 << (g - seq);
        }
        self.info[(seq % 128) as usize] = ccval | mark;
        self.resolve(now);
        self.history.on_data(self.gsr.unwrap_or(seq), ccval);

        if self.history.p() > self.p_last {
            return true; // a new loss event (RFC 5348 §6.1)
        }
        if self.r.is_none() {
            return true;
        }
        ccval_after(ccval, self.ccval_last_fb) >= 4 // one RTT since the last feedback (RFC 4342 §10.3)
    }

    fn newest(&mut self, now: Time, pkt: &Packet, ccval: u8) {
        self.last_ts = pkt.ts;
        self.last_arrival = now;
        self.last_ccval = ccval;
    }

    /// Walk up from the last resolved sequence number: received packets resolve at once
    /// (CE-marked ones as losses), missing ones once NDUPACK later packets arrived.
    fn resolve(&mut self, now: Time) {
        let Some(g) = self.gsr else { return };
        while self.nonloss < g {
            let h = self.nonloss + 1;
            let d = g - h;
            if d < 128 && self.recv >> d & 1 == 1 {
                let info = self.info[(h % 128) as usize];
                if info & MARKED != 0 {
                    self.loss(now, h, self.nonloss_ccval);
                }
                self.nonloss = h;
                self.nonloss_ccval = info & 0xF;
                continue;
            }
            let above = if d >= 128 { self.recv.count_ones() } else { (self.recv & ((1u128 << d) - 1)).count_ones() };
            if above < NDUPACK {
                break;
            }
            self.loss(now, h, self.nonloss_ccval);
            self.nonloss = h;
        }
    }

    /// Packet `seq` is lost; `ccval` is the window counter of the packet received before it.
    fn loss(&mut self, now: Time, seq: u64, ccval: u8) {
        let highest = self.gsr.unwrap_or(seq);
        if self.history.has_loss() {
            self.history.on_loss(seq, ccval, highest);
            return;
        }
        let x_recv = self.receive_rate(now).max(self.x_recv_last);
        let synthetic = match self.r {
            Some(r) if x_recv > 0.0 && self.s > 0.0 => 1.0 / p_for_rate(self.s, r, x_recv),
            _ => self.received as f64,
        };
        self.history.first_event(seq, ccval, synthetic, highest);
    }

    /// Payload bytes per second since the last feedback, over at least one RTT.
    fn receive_rate(&self, now: Time) -> f64 {
        let Some(t) = self.t_last_fb else { return 0.0 };
        let interval = secs(now - t).max(self.r.unwrap_or(0.0));
        if interval > 0.0 {
            self.bytes_since_fb as f64 / interval
        } else {
            0.0
        }
    }

    /// Fill a feedback packet (Loss Event Rate and Receive Rate options).
    pub fn fill_feedback(&mut self, now: Time, pkt: &mut Packet) {
        let x_recv = self.receive_rate(now);
        let p = self.history.p();
        // RFC 4342 §8.5: the inverse of p, rounded up; all ones means no loss.
        let p_inv = if p > 0.0 { (1.0 / p).ceil().clamp(1.0, (u32::MAX - 1) as f64) as u32 } else { u32::MAX };
        pkt.ack = self.gsr.unwrap_or(0);
        pkt.ts_echo = self.last_ts;
        pkt.window = micros(now - self.last_arrival);
        set_options(pkt, [p_inv, x_recv.round().min(u32::MAX as f64) as u32, 0, 0, 0, 0]);
        self.t_last_fb = Some(now);
        self.bytes_since_fb = 0;
        self.ccval_last_fb = self.last_ccval;
        self.p_last = p;
        self.x_recv_last = x_recv;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dccp::tests::{run_pipe, Every};
    use crate::packet::Kind;
    use crate::sim::time::MS;

    fn cfg() -> DccpConfig {
        DccpConfig::default_config(3)
    }

    fn data(seq: u64) -> Packet {
        Packet { kind: Kind::DccpData, seq, payload: 1000, ..Packet::default() }
    }

    /// Feedback echoing a packet sent at `echo`, held `elapsed`, with `p_inv` and `x_recv`.
    fn feedback(echo: Time, elapsed: Time, p_inv: u32, x_recv: u32) -> Packet {
        let mut p = Packet { kind: Kind::DccpAck, ts_echo: echo, window: micros(elapsed), ..Packet::default() };
        set_options(&mut p, [p_inv, x_recv, 0, 0, 0, 0]);
        p
    }

    /// Send one 1000 B packet now.
    fn send(s: &mut Ccid3Sender, now: Time) {
        let mut p = data(0);
        s.on_send(now, &mut p);
    }

    #[test]
    fn the_allowed_rate_is_the_equation_once_loss_is_reported() {
        let mut s = Ccid3Sender::new(&cfg());
        let mut stats = FlowStats::default();
        send(&mut s, 0);
        // Before feedback: one packet per second, nofeedback timer at 2 s.
        assert_eq!(s.rate(), 1000.0);
        assert_eq!(s.send_time(), Some(SEC));
        assert_eq!(s.timer(), Some(2 * SEC));
        // First feedback after 100 ms (held 10 ms at the receiver): R = 90 ms, X = W_init/R
        // with W_init = min(4*1464, max(2*1464, 4380)) = 4380 B.
        s.on_feedback(100 * MS, &feedback(0, 10 * MS, u32::MAX, 0), &mut stats);
        assert!((s.rtt().unwrap() - 0.09).abs() < 1e-12);
        assert!((s.rate() - 4380.0 / 0.09).abs() < 1e-6);
        // Backlogged sender; feedback reporting p = 1/100 and a large receive rate, with an RTT
        // sample of 90 ms again: X = X_Bps(s = 1000, R = 0.09, p = 0.01).
        send(&mut s, 100 * MS);
        s.on_blocked(100 * MS);
        s.on_feedback(190 * MS, &feedback(100 * MS, 0, 100, 10_000_000), &mut stats);
        // By hand (RFC 5348 §3.1, b = 1, t_RTO = 4R = 0.36): 0.09 * 0.08164966 = 0.00734847;
        // 0.36 * 0.18371173 * 0.01 * 1.0032 = 0.00066347860; X = 1000 / 0.00801194830 =
        // 124813.6 B/s.
        assert!((s.rate() - 124_813.6).abs() < 0.1, "{}", s.rate());
        assert_eq!(s.rate(), s.x_calc());
        // Packets are paced s / X apart.
        let ipi = (1000.0 / s.rate() * 1e9) as Time;
        assert_eq!(s.send_time(), Some(100 * MS + ipi));
        // The nofeedback timer: max(4R, 2s/X) = 360 ms after the feedback.
        assert_eq!(s.timer(), Some(190 * MS + 360 * MS));
    }

    #[test]
    fn the_receive_rate_limits_the_rate_and_slow_start_doubles_once_per_rtt() {
        let mut s = Ccid3Sender::new(&cfg());
        let mut stats = FlowStats::default();
        send(&mut s, 0);
        s.on_feedback(100 * MS, &feedback(0, 0, u32::MAX, 0), &mut stats);
        assert!((s.rate() - 43_800.0).abs() < 1e-6);
        // Not data-limited, X_recv = 30 000, R = 100 ms. At 200 ms the initial Infinity of
        // X_recv_set (set at the first packet, 0 ms) is not yet older than two RTTs, and one
        // RTT has passed since tld: X doubles.
        send(&mut s, 110 * MS);
        s.on_blocked(110 * MS);
        s.on_feedback(200 * MS, &feedback(100 * MS, 0, u32::MAX, 30_000), &mut stats);
        assert!((s.rate() - 87_600.0).abs() < 1e-6, "{}", s.rate());
        // 50 ms later: Infinity has aged out, but less than R since the doubling: no change.
        s.on_feedback(250 * MS, &feedback(150 * MS, 0, u32::MAX, 30_000), &mut stats);
        assert!((s.rate() - 87_600.0).abs() < 1e-6);
        // At 400 ms: X = max(min(2X, 2 max(X_recv_set)), W_init/R) = 60 000.
        send(&mut s, 400 * MS);
        s.on_blocked(400 * MS);
        s.on_feedback(400 * MS, &feedback(300 * MS, 0, u32::MAX, 30_000), &mut stats);
        assert!((s.rate() - 60_000.0).abs() < 1e-6, "{}", s.rate());
    }

    #[test]
    fn a_data_limited_sender_with_new_loss_falls_to_the_receive_rate() {
        let mut s = Ccid3Sender::new(&cfg());
        let mut stats = FlowStats::default();
        send(&mut s, 0);
        s.on_feedback(100 * MS, &feedback(0, 0, u32::MAX, 0), &mut stats);
        // The sender never waited for the rate: data-limited. A feedback with a new loss and
        // X_recv = 20 000: the set (Infinity) is halved, X_recv becomes 17 000, the set is
        // maximized to {17 000} and recv_limit = 17 000 (not doubled).
        send(&mut s, 150 * MS);
        s.on_feedback(250 * MS, &feedback(150 * MS, 0, 10, 20_000), &mut stats);
        assert!((s.rate() - 17_000.0).abs() < 1e-6, "{}", s.rate());
    }

    #[test]
    fn the_nofeedback_timer_halves_the_rate() {
        let mut s = Ccid3Sender::new(&cfg());
        let mut stats = FlowStats::default();
        send(&mut s, 0);
        // No feedback at all: X halves at 2 s, down to s / t_mbi at most.
        s.on_timer(2 * SEC, &mut stats);
        assert_eq!(s.rate(), 500.0);
        assert_eq!(s.timer(), Some(4 * SEC));
        assert_eq!(stats.timeouts, 1);
        // With feedback and p = 0, a sender that kept sending halves its rate.
        let mut s = Ccid3Sender::new(&cfg());
        send(&mut s, 0);
        s.on_feedback(100 * MS, &feedback(0, 0, u32::MAX, 0), &mut stats);
        let x = s.rate();
        let deadline = s.timer().unwrap();
        assert_eq!(deadline, 100 * MS + 400 * MS);
        send(&mut s, 200 * MS);
        s.on_timer(deadline, &mut stats);
        assert!((s.rate() - x / 2.0).abs() < 1e-9);
        // With p > 0, X_calc <= 2 X_recv: the limit becomes X_calc / 2.
        send(&mut s, 600 * MS);
        s.on_blocked(600 * MS);
        s.on_feedback(700 * MS, &feedback(600 * MS, 0, 50, 1_000_000), &mut stats);
        let calc = s.x_calc();
        assert_eq!(s.rate(), calc);
        send(&mut s, 710 * MS);
        let deadline = s.timer().unwrap();
        s.on_timer(deadline, &mut stats);
        assert!((s.rate() - calc / 2.0).abs() < 1e-9, "{} vs {}", s.rate(), calc / 2.0);
    }

    #[test]
    fn the_window_counter_advances_per_quarter_rtt_by_at_most_five() {
        let mut s = Ccid3Sender::new(&cfg());
        let mut stats = FlowStats::default();
        send(&mut s, 0);
        s.on_feedback(100 * MS, &feedback(0, 0, u32::MAX, 0), &mut stats);
        // R = 100 ms: a quarter is 25 ms.
        let mut p = data(1);
        s.on_send(110 * MS, &mut p); // 110 ms since the start: 4 quarters
        assert_eq!(p.window, 4);
        s.on_send(120 * MS, &mut p);
        assert_eq!(p.window, 4);
        s.on_send(140 * MS, &mut p); // 30 ms: one quarter
        assert_eq!(p.window, 5);
        s.on_send(1_140 * MS, &mut p); // a second: 40 quarters, capped at 5
        assert_eq!(p.window, 10);
        assert_eq!(options(&p)[0], 100_000); // the RTT estimate, in microseconds
    }

    fn rx_data(seq: u64, ccval: u8, rtt_us: u32) -> Packet {
        let mut p = Packet {
            kind: Kind::DccpData,
            seq,
            payload: 1000,
            window: ccval as u32,
            ts: seq * MS,
            ..Packet::default()
        };
        set_options(&mut p, [rtt_us, 0, 0, 0, 0, 0]);
        p
    }

    #[test]
    fn the_receiver_sends_feedback_once_per_rtt_of_window_counter() {
        let mut r = Ccid3Receiver::new(&cfg());
        let mut fb = Packet::default();
        assert!(r.on_data(0, &rx_data(0, 0, 100_000))); // initial feedback
        r.fill_feedback(MS, &mut fb);
        assert_eq!(options(&fb)[0], u32::MAX); // no loss
        for (seq, cc) in [(1, 1), (2, 2), (3, 3)] {
            assert!(!r.on_data(seq * 10 * MS, &rx_data(seq, cc, 100_000)));
        }
        assert!(r.on_data(40 * MS, &rx_data(4, 4, 100_000)));
        r.fill_feedback(40 * MS, &mut fb);
        // 4 packets of 1000 B since the feedback at 1 ms, over max(39 ms, R = 100 ms).
        assert_eq!(options(&fb)[1], 40_000);
        assert_eq!(fb.ack, 4);
        // While the sender has no RTT estimate, every packet is answered.
        let mut r = Ccid3Receiver::new(&cfg());
        assert!(r.on_data(0, &rx_data(0, 0, 0)));
        r.fill_feedback(0, &mut fb);
        assert!(r.on_data(MS, &rx_data(1, 0, 0)));
    }

    #[test]
    fn losses_are_found_after_three_later_packets_and_grouped_per_rtt() {
        let mut r = Ccid3Receiver::new(&cfg());
        let mut fb = Packet::default();
        // A packet per ms, 1000 B each, R = 100 ms: the counter advances every 25 packets, and
        // feedback goes at 0 ms and when the counter reaches 4 (packet 100).
        let cc = |seq: u64| ((seq / 25) % 16) as u8;
        let mut feedbacks = vec![];
        let deliver = |r: &mut Ccid3Receiver, fb: &mut Packet, seq: u64, feedbacks: &mut Vec<u64>| {
            let due = r.on_data(seq * MS, &rx_data(seq, cc(seq), 100_000));
            if due {
                r.fill_feedback(seq * MS, fb);
                feedbacks.push(seq);
            }
            due
        };
        for seq in 0..110 {
            deliver(&mut r, &mut fb, seq, &mut feedbacks);
        }
        // 110 and 111 lost; 112 and 113 arrive: not yet known lost.
        assert!(!deliver(&mut r, &mut fb, 112, &mut feedbacks));
        assert!(!deliver(&mut r, &mut fb, 113, &mut feedbacks));
        assert_eq!(r.p(), 0.0);
        // 114 makes three packets above both: two losses, one event (same counter), and the
        // new loss event is reported at once.
        assert!(deliver(&mut r, &mut fb, 114, &mut feedbacks));
        assert_eq!(feedbacks, vec![0, 100, 114]);
        let l = r.history().lengths();
        assert_eq!(l[0], 5.0); // I_0: 110 ..= 114
                               // The first interval is synthesised (RFC 5348 §6.3.1): the equation at p = 1/I_1 gives
                               // the receive rate, the larger of the 12 000 B since the feedback at 100 ms over
                               // R = 0.1 s and the 100 000 B over 0.1 s reported then: 1e6 B/s.
        assert!((x_bps(1000.0, 0.1, 1.0 / l[1]) / 1e6 - 1.0).abs() < 1e-6, "{l:?}");
        assert!((r.p() - 1.0 / l[1]).abs() < 1e-15);
        assert_eq!(options(&fb)[0], l[1].ceil() as u32);
        // Losses at 134 and 180 (counters 5 and 7 against 4 at the event's start, within one
        // RTT): the same event. 230 comes after packets with counter 9 (5 steps): a new one.
        for seq in 115..260 {
            if ![134, 180, 230].contains(&seq) {
                deliver(&mut r, &mut fb, seq, &mut feedbacks);
            }
        }
        let l2 = r.history().lengths();
        assert_eq!(l2[..2], [30.0, 120.0], "{l2:?}"); // 230 ..= 259, and 110 .. 230
        assert_eq!(l2[2], l[1]);
    }

    #[test]
    fn under_regular_loss_the_sender_runs_at_the_equation_of_its_own_r_and_p() {
        // A backlogged sender over a 100 ms round trip; every 20th packet from the 400th on is
        // lost. Once feedback reports loss, X is the equation at the sender's R and reported p
        // (the receive-rate limit does not bind for a sender that always has data).
        let app = Every { next: 0, period: MS / 10, size: 1000, until: 30 * SEC };
        let (s, r, trace, _) = run_pipe(cfg(), Box::new(app), 50 * MS, 30 * SEC, |q| q >= 400 && q % 20 == 0);
        let c = s.ccid3().unwrap();
        let p = c.p();
        assert!(p > 0.0);
        // The sender's rate is the equation at its own R and p (recv_limit does not bind).
        let expect = x_bps(c.s(), c.rtt().unwrap(), p);
        assert!((c.rate() - expect).abs() / expect < 1e-9, "{} vs {}", c.rate(), expect);
        assert!(trace.data.len() > 1000);
        assert!(r.ccid3().unwrap().p() > 0.0);
    }
}
