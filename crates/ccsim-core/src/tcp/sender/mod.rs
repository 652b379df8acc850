//! The TCP sender: segmentation, the retransmission scoreboard, loss recovery and the RTO.
//!
//! Sources, applied where cited below:
//! - RFC 5681 §3.1-3.2: slow start, congestion avoidance, fast retransmit / fast recovery.
//! - RFC 6582 §3.2: NewReno partial and full ACKs; §4: no new recovery before `recover` is
//!   acknowledged. Used when SACK is off.
//! - RFC 5681 §3.2 plain Reno, when SACK is off and the congestion control asks for it
//!   ([`FastRecovery::Reno`]): the first ACK of new data ends fast recovery with
//!   cwnd = ssthresh, without repairing further holes, and RFC 6582 §4's guard is not applied.
//! - ENCN (`qdisc/encn.rs`): if the congestion control asks for it, every data segment
//!   carries `FLAG_NC`; the echo reaches the congestion control as [`Ack::nc_echo`].
//! - RFC 6675: SACK scoreboard, `IsLost`, `pipe`, `NextSeg` rules 1 and 2, recovery entry and
//!   exit, §5.1 timeout handling. Rules 3 and 4 of `NextSeg` (sending not-yet-lost holes and
//!   the rescue retransmission) are not implemented.
//! - Lost retransmissions (optional, `lost_retransmit`, on by default): RFC 6675 alone can only
//!   find them by timeout. As RACK (RFC 8985 §6.2) and Linux do, a retransmission is deemed
//!   lost once data sent more than a reordering window (min RTT / 4) after it has been
//!   SACKed or acknowledged; it becomes eligible for `NextSeg` again.
//! - RFC 3042: limited transmit (without SACK; with SACK, SACKed bytes leave `pipe`, which has
//!   the same effect).
//! - RFC 6298: RTO management (§5.1-5.7), via [`RttEstimator`].
//! - Pacing (optional, `pacing`), as Linux's internal pacing (`tcp_update_pacing_rate`,
//!   `tcp_update_skb_after_send`, Linux 4.20 on): every segment, new or retransmitted,
//!   leaves no earlier than `next_send`, which each transmission pushes on by its size on the
//!   wire over the pacing rate. The rate is the congestion control's
//!   ([`CongestionControl::pacing_rate`]) or Linux's default, `ratio * max(cwnd, FlightSize) /
//!   srtt` with ratio 2 while cwnd < ssthresh / 2 (`tcp_pacing_ss_ratio` 200 %) and 1.2 after
//!   (`tcp_pacing_ca_ratio` 120 %); before the first RTT sample nothing is paced (Linux
//!   divides by srtt only once it has one). Departures from Linux: the time per segment counts
//!   the whole packet (Linux: the TCP segment without the IP header), and the rate is taken
//!   when a burst of transmissions starts rather than at each ACK. A sender held back by
//!   pacing asks for a wakeup at `next_send`: one timer event per paced segment.
//! - RFC 5681 §3.1 on a timeout, with one departure: ssthresh comes from `pipe` (RFC 6675
//!   §5.1), and a timeout that interrupts a fast recovery may lower the ssthresh that recovery
//!   set but never raise it (Linux's `tcp_enter_loss` keeps it): without SACK, FlightSize
//!   has by then grown with every segment NewReno sent while repairing one hole per round
//!   trip. NewReno's timer is RFC 6582's Impatient variant (§3.2 step 5, §4): reset on the
//!   first partial ACK only, so a window with many losses ends in one timeout rather than
//!   one round trip per hole.
//! - RFC 3168 §6.1.2: ECN-Echo reaction at most once per window, CWR on the next new segment;
//!   retransmissions are sent Not-ECT (§6.1.5).
//! - RFC 9331 §5.1: with `ect1`, ECN-capable data carries ECT(1), the L4S identifier, so that
//!   an L4S queue (DualPI2) classifies it as scalable; the feedback and the reaction are the
//!   congestion control's (DCTCP's or Prague's).
//! - RFC 9768 (Accurate ECN, for algorithms that ask for it, Prague): the sender decodes the
//!   ACE counter of every ACK against its own count (`s.cep`, from 5) and reports the change,
//!   the CE-marked packets newly fed back, to the algorithm ([`Ack::ce_packets`]); a change
//!   counts as an ECN-Echo for the once-per-window reaction, and no CWR is sent (the flag is
//!   part of the ACE field). The counter is read modulo 8 without the safety heuristics of
//!   RFC 9768 Appendix A.2: the receiver's increment-triggered ACKs keep it from wrapping
//!   between two ACKs, and ACKs are neither lost on the way back nor reordered unless the
//!   return path drops them.
//! - E-DCTCP explicit loss notifications (`cc/edctcp.rs`), for algorithms that ask for them:
//!   data carries `FLAG_LN`; a notice for a segment marks it lost at once, starts a recovery
//!   episode (once per window, as a fast retransmit would) and makes it eligible for
//!   retransmission (within the window, as RFC 6675's `NextSeg`) once the backoff the
//!   algorithm draws has passed.
//! - Delivery-rate estimation (`rate.rs`), for a congestion control that owns its window
//!   ([`CongestionControl::owns_window`], BBR): draft-cheng-iccrg-delivery-rate-estimation-02
//!   §3 and Linux `tcp_rate.c`; a [`RateSample`](super::cc::RateSample) for every ACK not older
//!   than SND.UNA, then `on_rate_sample` (Linux `tcp_cong_control` calling `cong_control`).
//!   `delivered`, `lost` (as `tcp_mark_skb_lost`: a lost retransmission counts again) and
//!   `ca_state` are kept in [`CcState`]; `ssthresh` (which then only sets ssthresh), `on_ack`,
//!   `on_recovery_exit` and `on_timeout` are called as for any algorithm; cwnd is set only to
//!   the loss window, on a timeout. Departures: bytes, not packets; the sample's packet is the
//!   highest `P.delivered`, ties to the latest sent (the draft; recent Linux: the latest sent);
//!   `rs.rtt` is none if it was retransmitted (Linux: the latest sent once); the interval is
//!   checked against the smaller of the timestamp and `rs.rtt` minima over the connection
//!   (Linux: a 5-minute windowed minimum); application-limited is checked at application
//!   writes (`tcp_sendmsg`) without Linux's host-queue test; no SACK reneging; the fast
//!   retransmit leaves before `on_rate_sample`, whatever cwnd (Linux: after, within cwnd).
//!
//! One accounting serves both recovery styles, as in Linux: every outstanding segment is in
//! the scoreboard with `sacked`, `lost` and `retrans` flags, and
//! `pipe = FlightSize - sacked - lost + retransmitted` (RFC 6675 `SetPipe` with lost
//! segments marked once). Without SACK nothing is ever SACKed and a segment is marked lost
//! only when it is retransmitted, so `pipe` equals FlightSize as RFC 6582 expects.

mod connection;
mod notice;
mod rate;
mod recovery;
#[cfg(test)]
mod testkit;

use std::collections::VecDeque;

use super::cc::{Ack, CcState, CongestionControl, FastRecovery};
use super::rtt::RttEstimator;
use super::scoreboard::Scoreboard;
use super::{EcnFeedback, TcpConfig};
use crate::app::{Application, Socket};
use crate::endpoint::{Cx, Endpoint};
use crate::messages::MessageLedger;
use crate::packet::{
    Ecn, Kind, Packet, FLAG_AE, FLAG_CWR, FLAG_ECE, FLAG_LN, FLAG_LOST, FLAG_NC, FLAG_NC_ECHO, FLAG_SYN_FIN,
};
use crate::results::FlowResult;
use crate::sim::rng::{Rng, Stream};
use crate::sim::time::Time;
use notice::Notice;

/// Where the sender is in loss recovery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Recovery {
    /// Normal transmission.
    Open,
    /// Fast recovery until `recover` (RFC 6582 `recover`, RFC 6675 `RecoveryPoint`) is acked.
    Fast,
    /// Retransmitting after a timeout until `recover` is acked.
    Timeout,
}

/// A TCP sender.
pub struct TcpSender {
    flow: u32,
    dst: u32,
    cfg: TcpConfig,
    cc: Box<dyn CongestionControl>,
    st: CcState,
    app: Box<dyn Application>,
    /// `app.next_wakeup()`, read after every call into the application (the only times its
    /// state changes), so the engine's per-event `next_wakeup` makes no virtual call.
    app_wakeup: Option<Time>,
    rtt: RttEstimator,

    /// Oldest unacknowledged byte (RFC 793 SND.UNA).
    snd_una: u64,
    /// Next new byte to send; every byte below it has been sent at least once.
    snd_nxt: u64,
    /// Bytes the application has written (or what remains sendable after `close`).
    app_end: u64,
    /// Peer's advertised window.
    rwnd: u64,

    /// Every outstanding segment and its flags.
    sb: Scoreboard,
    /// Retransmissions in the order they were sent, as (seq, send time); entries whose
    /// segment was since acknowledged, SACKed or sent again are stale and skipped. Lets the
    /// lost-retransmission check look only at the oldest ones instead of the whole window.
    retx_order: VecDeque<(u64, Time)>,
    /// Segments below this have been examined by the loss marking (RFC 6675 `IsLost`).
    lost_frontier: u64,
    /// Lost segments below this have all been retransmitted (search start for `NextSeg`).
    retx_hint: u64,
    /// End of the highest segment marked lost by a loss notification: `NextSeg` searches
    /// up to here as well as up to `lost_frontier`.
    notice_frontier: u64,

    recovery: Recovery,
    recover: u64,
    dupacks: u32,
    /// RFC 6582: the RTO is restarted on the first partial ACK of an episode only.
    partial_acked: bool,

    rto_deadline: Option<Time>,
    /// RFC 3168: no new ECE reaction until data sent after the last one is acknowledged.
    ecn_recover: u64,
    /// When the window was last reduced (recovery entry, ECE, timeout).
    reduced_at: Time,
    cwr_pending: bool,
    /// Accurate ECN: the CE-marked packets fed back so far, plus 5 (RFC 9768 `s.cep`).
    s_cep: u8,
    /// Earliest end of a retransmission hold (E-DCTCP backoff), if any is pending.
    hold_expiry: Option<Time>,
    /// The flow's random stream (E-DCTCP backoff draws).
    rng: Rng,
    /// The congestion control asked for plain Reno fast recovery (effective without SACK).
    reno_recovery: bool,
    /// The congestion control asked for `FLAG_NC` on every data segment (ENCN).
    set_nc: bool,
    /// Pacing: no segment leaves before this time (Linux `tcp_wstamp_ns`).
    next_send: Time,
    /// Pacing: the rate of the current burst of transmissions (bytes per second).
    pace_rate: f64,
    /// Pacing: the last transmission attempt stopped at `next_send` with a segment to send.
    pace_blocked: bool,
    /// Segments returned by loss notifications (E-DCTCP), in sequence order; an entry goes
    /// when its segment is acknowledged. Empty for every other algorithm.
    notices: VecDeque<Notice>,
    /// Delivery-rate estimation (`rate.rs`), present only if the congestion control owns its
    /// window: the sender then leaves the window to it (module header).
    rate: Option<Box<rate::RateSampler>>,
    /// The connection's opening and closing (`connection.rs`), present only with `handshake`.
    conn: Option<Box<connection::Connection>>,
}

struct SockView<'a> {
    app_end: &'a mut u64,
    snd_una: u64,
    snd_nxt: u64,
    now: Time,
    messages: &'a mut MessageLedger,
}

impl Socket for SockView<'_> {
    fn buffered(&self) -> u64 {
        *self.app_end - self.snd_una
    }
    fn write(&mut self, bytes: u64) {
        *self.app_end = self.app_end.saturating_add(bytes).min(crate::app::UNLIMITED);
        self.messages.write_stream(self.now, bytes);
    }
    fn close(&mut self) {
        *self.app_end = self.snd_nxt;
    }
}

impl TcpSender {
    /// A sender for `flow` towards node `dst`.
    pub fn new(flow: u32, dst: u32, cfg: TcpConfig, cc: Box<dyn CongestionControl>, app: Box<dyn Application>) -> Self {
        let st = CcState::new(cfg.mss, cfg.init_cwnd, cfg.init_ssthresh, cfg.rwnd);
        let reno_recovery = cc.fast_recovery() == FastRecovery::Reno;
        let set_nc = cc.marks_non_congestion();
        let rate = cc.owns_window().then(Box::default);
        TcpSender {
            flow,
            dst,
            rtt: RttEstimator::new(cfg.initial_rto, cfg.min_rto, cfg.max_rto),
            // With a handshake the peer's window is unknown until its SYN-ACK: nothing is sent.
            rwnd: if cfg.handshake { 0 } else { cfg.rwnd },
            conn: cfg.handshake.then(|| Box::new(connection::Connection::new())),
            sb: Scoreboard::new(cfg.mss),
            cfg,
            cc,
            st,
            app_wakeup: app.next_wakeup(),
            app,
            snd_una: 0,
            snd_nxt: 0,
            app_end: 0,
            retx_order: VecDeque::new(),
            lost_frontier: 0,
            retx_hint: 0,
            notice_frontier: 0,
            recovery: Recovery::Open,
            recover: 0,
            dupacks: 0,
            partial_acked: false,
            rto_deadline: None,
            ecn_recover: 0,
            reduced_at: 0,
            cwr_pending: false,
            s_cep: 5,
            hold_expiry: None,
            rng: Rng::stream(0, Stream::Flow(flow)),
            reno_recovery,
            set_nc,
            notices: VecDeque::new(),
            next_send: 0,
            pace_rate: f64::INFINITY,
            pace_blocked: false,
            rate,
        }
    }

    /// Use `rng` (the flow's own stream) for the sender's random draws.
    pub fn with_rng(mut self, rng: Rng) -> Self {
        self.rng = rng;
        self
    }

    /// The congestion state (window, thresholds, RTT), for tests and traces.
    pub fn state(&self) -> &CcState {
        &self.st
    }

    /// Current retransmission timeout.
    pub fn rto(&self) -> Time {
        self.rtt.rto()
    }

    /// Oldest unacknowledged byte.
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }

    /// The congestion control, for traces.
    pub fn cc(&self) -> &dyn CongestionControl {
        self.cc.as_ref()
    }

    /// The RTT estimator (SRTT, RTTVAR, RTO), for traces.
    pub fn rtt_estimator(&self) -> &RttEstimator {
        &self.rtt
    }

    /// RFC 6675 `pipe` now, for traces.
    pub fn inflight(&self) -> u64 {
        self.pipe()
    }

    /// RFC 5681 FlightSize now, for traces.
    pub fn outstanding(&self) -> u64 {
        self.flight_size()
    }

    /// The pacing rate the sender would take now (bytes per second; infinite: none yet), for
    /// traces.
    pub fn pacing_rate_now(&self) -> f64 {
        self.pacing_rate()
    }

    /// Where the sender is in loss recovery, for traces.
    pub fn ca_state(&self) -> super::cc::CaState {
        match self.recovery {
            Recovery::Open => super::cc::CaState::Open,
            Recovery::Fast => super::cc::CaState::Recovery,
            Recovery::Timeout => super::cc::CaState::Loss,
        }
    }

    /// Debug builds: the window is at least one segment, RFC 5681 §3.1's loss window (the
    /// floor every algorithm shares; `invariants.rs`).
    #[inline(always)]
    fn check_cwnd(&self, now: Time, after: &str) {
        crate::invariants::cwnd_floor(now, self.flow, after, self.st.cwnd, self.cfg.mss as u64);
    }

    /// Plain Reno fast recovery: asked for by the congestion control, and SACK is off.
    fn plain_reno(&self) -> bool {
        self.reno_recovery && !self.cfg.sack
    }

    fn flight_size(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }

    /// RFC 6675 `pipe`: bytes believed to be in the network.
    fn pipe(&self) -> u64 {
        self.flight_size() - self.sb.sacked_bytes() - self.sb.lost_bytes() + self.sb.retrans_bytes()
    }

    fn sync_state(&mut self, now: Time) {
        self.st.now = now;
        self.st.flight_size = self.flight_size();
        self.st.bytes_in_flight = self.pipe();
        self.st.in_recovery = self.recovery != Recovery::Open;
        self.st.srtt = self.rtt.srtt;
        self.st.min_rtt = self.rtt.min_rtt;
        self.st.snd_una = self.snd_una;
        self.st.snd_nxt = self.snd_nxt;
        self.st.rwnd = self.rwnd;
        if self.owns_window() {
            self.sync_owned_state();
        }
    }

    // ----- transmission -----

    /// Inlined: called once per data segment from two places (new data, retransmission).
    #[inline(always)]
    fn emit(&mut self, seq: u64, len: u32, retransmission: bool, cx: &mut Cx) {
        let mut flags = if self.set_nc { FLAG_NC } else { 0 };
        let ecn = match (self.cfg.ecn && !retransmission, self.cfg.ect1) {
            (false, _) => Ecn::NotEct,
            (true, false) => Ecn::Ect0,
            (true, true) => Ecn::Ect1,
        };
        if self.cwr_pending && !retransmission {
            flags |= FLAG_CWR;
            self.cwr_pending = false;
        }
        if self.cfg.loss_notice {
            flags |= FLAG_LN;
        }
        cx.out.push(Packet {
            flow: self.flow,
            dst: self.dst,
            size: len + self.cfg.header,
            payload: len,
            seq,
            ts: cx.now,
            kind: Kind::TcpData,
            ecn,
            flags,
            ..Packet::default()
        });
        cx.stats.count(cx.now, |s| &mut s.packets_sent);
        if self.cfg.pacing && self.pace_rate.is_finite() {
            let gap = ((len + self.cfg.header) as f64 * 1e9 / self.pace_rate).round() as Time;
            self.next_send = self.next_send.max(cx.now) + gap;
        }
        if retransmission {
            cx.stats.count(cx.now, |s| &mut s.retransmissions);
        }
        self.cc.on_sent(&self.st, len);
        // RFC 6298 §5.1: start the timer if it is not running.
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(cx.now + self.rtt.rto());
        }
    }

    /// The pacing rate (bytes per second; infinite: not paced yet). Module header.
    fn pacing_rate(&self) -> f64 {
        if let Some(rate) = self.cc.pacing_rate(&self.st) {
            return rate;
        }
        let Some(srtt) = self.rtt.srtt.filter(|&s| s > 0) else { return f64::INFINITY };
        let ratio = if self.st.cwnd < self.st.ssthresh / 2 { 2.0 } else { 1.2 };
        ratio * self.st.cwnd.max(self.flight_size()) as f64 * 1e9 / srtt as f64
    }

    /// Pacing: whether a segment may leave now; if not, the sender waits for `next_send`.
    #[inline(always)]
    fn paced_out(&mut self, now: Time) -> bool {
        if self.cfg.pacing && now < self.next_send {
            self.pace_blocked = true;
            return true;
        }
        false
    }

    /// Send what the window allows: lost segments first, then new data.
    fn try_send(&mut self, cx: &mut Cx) {
        if self.cfg.pacing {
            self.pace_blocked = false;
            self.pace_rate = self.pacing_rate();
        }
        let mss = self.cfg.mss as u64;
        // RFC 3042 limited transmit: one new segment for each of the first two dupACKs.
        let allowance =
            if !self.cfg.sack && self.recovery == Recovery::Open { self.dupacks.min(2) as u64 * mss } else { 0 };
        // Nothing in the loop changes the window; `pipe` is carried along: a new segment adds
        // its length, a retransmission (which also marks the segment lost) is recounted.
        let window = self.st.cwnd + allowance;
        let mut pipe = self.pipe();
        loop {
            if let Some(i) = self.next_lost(cx.now) {
                let len = self.sb[i].len as u64;
                if pipe + len > window || self.paced_out(cx.now) {
                    break;
                }
                self.retransmit(i, cx);
                self.retx_hint = self.sb[i].end();
                pipe = self.pipe();
                continue;
            }
            let len = (self.app_end.saturating_sub(self.snd_nxt)).min(mss);
            if len == 0
                || pipe + len > window
                || self.snd_nxt + len - self.snd_una > self.rwnd
                || self.paced_out(cx.now)
            {
                break;
            }
            pipe += len;
            let seq = self.snd_nxt;
            self.sb.push(seq, len as u32, cx.now);
            self.snd_nxt += len;
            self.emit(seq, len as u32, false, cx);
        }
        self.sync_state(cx.now);
    }

    // ----- events -----

    fn on_ack(&mut self, pkt: &Packet, cx: &mut Cx) {
        let now = cx.now;
        self.rwnd = pkt.window as u64;
        let ack = pkt.ack.min(self.snd_nxt);
        let (ece, ce_packets) = if self.cfg.ecn_feedback == EcnFeedback::Accurate {
            let ace = (pkt.flags & FLAG_AE != 0) as u8 * 4
                + (pkt.flags & FLAG_CWR != 0) as u8 * 2
                + (pkt.flags & FLAG_ECE != 0) as u8;
            let delta = ace.wrapping_sub(self.s_cep) & 7;
            self.s_cep = self.s_cep.wrapping_add(delta);
            (self.cfg.ecn && delta > 0, delta as u32)
        } else {
            (self.cfg.ecn && pkt.flags & FLAG_ECE != 0, 0)
        };
        if self.owns_window() {
            self.rate_begin_ack(pkt);
        }
        if pkt.ts_echo <= now {
            self.sb.delivered_sent_at(pkt.ts_echo);
        }
        if self.cfg.sack && pkt.sack_len > 0 && self.update_sack(pkt, now) {
            self.mark_sack_losses();
            if self.cfg.lost_retransmit
                && self.sb.retrans_bytes() > 0
                && self.mark_lost_retransmissions()
                && self.recovery != Recovery::Open
            {
                self.reduce_on_lost_retransmission(cx);
            }
        }

        // Timestamps give a valid sample even for retransmitted data (RFC 7323 §4); only ACKs
        // of new data are sampled, as a duplicate ACK echoes an older segment's time.
        let acked = ack.saturating_sub(self.snd_una);
        let rtt = (acked > 0 && pkt.ts_echo <= now).then(|| now - pkt.ts_echo);
        // Linux's `ca_rtt`: from the newest segment this ACK covers, which triggered it, so
        // the receiver's delayed-ACK wait is left out; only for a segment sent once and not
        // SACKed before (whose arrival this ACK then reports).
        let newest = self.sb.end_count(ack);
        let rtt_last = newest
            .checked_sub(1)
            .map(|i| self.sb[i])
            .filter(|s| !s.ever_retx && !s.sacked && s.xmit_time <= now)
            .map(|s| now - s.xmit_time);
        let nc_echo = pkt.flags & FLAG_NC_ECHO != 0;
        let info = Ack { acked, rtt, ece, size: pkt.size, nc_echo, rtt_last, ce_packets };
        self.sync_state(now);
        self.cc.on_ack_received(&self.st, &info);

        if ack > self.snd_una {
            if let Some(r) = rtt {
                self.rtt.sample(r);
                cx.stats.rtt_sample(now, r);
                // `st` was synced above; only the RTT estimates changed since.
                self.st.srtt = self.rtt.srtt;
                self.st.min_rtt = self.rtt.min_rtt;
                self.cc.on_rtt_sample(&self.st, r);
            }
            while self.notices.front().is_some_and(|n| n.end <= ack) {
                self.notices.pop_front();
            }
            if let Some(r) = &mut self.rate {
                r.acked(&self.sb, ack, now);
            }
            self.sb.remove_acked(ack);
            self.snd_una = ack;
            self.dupacks = 0;
            self.retx_hint = self.retx_hint.max(ack);
            self.lost_frontier = self.lost_frontier.max(ack);
            // Since the full sync above only SND.UNA and the scoreboard counters changed.
            self.st.snd_una = self.snd_una;
            self.st.flight_size = self.flight_size();
            self.st.bytes_in_flight = self.pipe();

            // An algorithm that owns its window gets none of the window changes below.
            let owns = self.owns_window();
            let mut restart_rto = true;
            match self.recovery {
                Recovery::Fast if self.plain_reno() => {
                    // RFC 5681 §3.2 step 6: the first ACK of new data deflates the window and
                    // ends recovery, whether or not it covers `recover`.
                    if !owns {
                        self.st.cwnd = self.st.ssthresh;
                    }
                    self.exit_recovery(now);
                }
                Recovery::Fast if ack >= self.recover => {
                    // Full ACK, RFC 6582 §3.2 step 3 option (1).
                    if !owns {
                        let flight = self.flight_size().max(self.cfg.mss as u64);
                        self.st.cwnd = self.st.ssthresh.min(flight + self.cfg.mss as u64);
                    }
                    self.exit_recovery(now);
                }
                Recovery::Fast => {
                    if !self.cfg.sack {
                        // Partial ACK, RFC 6582 §3.2 step 5: retransmit the next hole, deflate
                        // by the amount acknowledged, add back one SMSS if that was >= SMSS.
                        if let Some(i) = self.sb.index_of(self.snd_una) {
                            self.retransmit(i, cx);
                        }
                        let mss = self.cfg.mss as u64;
                        if !owns {
                            self.st.cwnd = self.st.cwnd.saturating_sub(acked) + if acked >= mss { mss } else { 0 };
                            self.st.cwnd = self.st.cwnd.max(mss);
                        }
                        restart_rto = !self.partial_acked;
                        self.partial_acked = true;
                    }
                }
                Recovery::Timeout | Recovery::Open => {
                    if self.recovery == Recovery::Timeout && ack >= self.recover {
                        self.exit_recovery(now);
                    }
                    if ece && ack > self.ecn_recover {
                        self.reduce_on_ecn(cx);
                    } else {
                        self.cc.on_ack(&mut self.st, &info);
                        self.check_cwnd(now, "cc.on_ack");
                    }
                }
            }
            if self.snd_una == self.snd_nxt {
                self.rto_deadline = None; // RFC 6298 §5.2
                if self.conn.is_some() {
                    self.on_all_acked(cx);
                }
            } else if restart_rto {
                self.rto_deadline = Some(now + self.rtt.rto()); // §5.3
            }
        } else if ack == self.snd_una && self.snd_nxt > self.snd_una && pkt.payload == 0 {
            // Duplicate ACK (RFC 5681 §2; the advertised window never changes here).
            self.dupacks += 1;
            if self.recovery == Recovery::Fast && !self.cfg.sack && !self.owns_window() {
                // RFC 5681 §3.2 step 4: inflate by one segment per further dupACK.
                self.st.cwnd += self.cfg.mss as u64;
            }
        }

        self.maybe_enter_fast_recovery(cx);
        if self.owns_window() {
            self.rate_sample_ack(&info, cx);
        }
        self.try_send(cx);
    }

    /// Let the application act: at its own wakeup, or `triggered` by another flow.
    fn run_app(&mut self, cx: &mut Cx, triggered: bool) {
        let (app_limited, written) = (self.app_limited_mark(), self.app_end);
        let mut sock = SockView {
            app_end: &mut self.app_end,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            now: cx.now,
            messages: cx.messages,
        };
        if triggered {
            self.app.on_trigger(cx.now, &mut sock, cx.stats);
        } else {
            self.app.on_wakeup(cx.now, &mut sock, cx.stats);
        }
        self.app_wakeup = self.app.next_wakeup();
        if let Some(mark) = app_limited.filter(|_| self.app_end > written) {
            self.set_app_limited(mark);
        }
        if self.conn.is_some() {
            self.open_connection(cx);
        }
    }
}

impl Endpoint for TcpSender {
    fn on_packet(&mut self, pkt: &Packet, cx: &mut Cx) {
        if pkt.kind == Kind::TcpAck {
            // One test for both rare kinds: a router's loss notice, the receiver's SYN-ACK or FIN-ACK.
            if pkt.flags & (FLAG_LOST | FLAG_SYN_FIN) != 0 {
                if pkt.flags & FLAG_LOST != 0 {
                    if self.cfg.loss_notice {
                        self.on_loss_notice(pkt, cx);
                    }
                } else {
                    self.on_connection_segment(pkt, cx);
                }
            } else {
                self.on_ack(pkt, cx);
            }
        }
        self.check_cwnd(cx.now, "an ACK");
    }

    fn on_wakeup(&mut self, cx: &mut Cx) {
        let now = cx.now;
        if self.app_wakeup.is_some_and(|t| t <= now) {
            self.run_app(cx, false);
        }
        if self.rto_deadline.is_some_and(|t| t <= now) {
            self.on_rto(cx);
        }
        if self.hold_expiry.is_some_and(|t| t <= now) {
            self.release_holds(now);
        }
        self.try_send(cx);
        self.check_cwnd(now, "a timer");
    }

    fn next_wakeup(&self) -> Option<Time> {
        fn earlier(a: Option<Time>, b: Option<Time>) -> Option<Time> {
            match (a, b) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, None) => x,
                (None, y) => y,
            }
        }
        let paced = self.pace_blocked.then_some(self.next_send);
        earlier(earlier(earlier(self.app_wakeup, self.rto_deadline), self.hold_expiry), paced)
    }

    fn on_app_trigger(&mut self, cx: &mut Cx) {
        self.run_app(cx, true);
        self.try_send(cx);
    }

    fn cwnd(&self) -> Option<u64> {
        Some(self.st.cwnd)
    }

    fn report(&self, row: &mut FlowResult) {
        row.cc = self.cc.name().to_string();
        row.final_cwnd_bytes = Some(self.st.cwnd);
        self.report_connection(row);
    }

    fn vars(&self) -> Option<crate::vars::OfferedVars> {
        Some(super::vars::offered(self))
    }

    fn var(&self, name: &str) -> Option<f64> {
        super::vars::sender_var(self, name)
    }
}

#[cfg(test)]
mod tests {
    //! Transmission and ACK processing; the recovery tests are in `recovery.rs`.
    use super::testkit::*;

    /// A paced sender (IW 10): everything sent at 0, then the ACK of segment 0 at 100 ms
    /// gives the first RTT sample (srtt 100 ms).
    fn paced_after_one_sample(ssthresh_segs: Option<u64>) -> (Harness, Vec<u64>) {
        let mut h = Harness::new(10, true);
        h.s.cfg.pacing = true;
        if let Some(s) = ssthresh_segs {
            h.s.st.ssthresh = s * 1000;
        }
        assert_eq!(h.send(), (0..10).collect::<Vec<_>>(), "no pacing before an RTT sample");
        h.now = 100 * MS;
        let sent = h.ack(1, &[], 0);
        (h, sent)
    }

    #[test]
    fn pacing_spaces_segments_at_twice_cwnd_over_srtt_in_slow_start() {
        // After the ACK: cwnd 11 segments (slow start), 9 outstanding, ssthresh unset, so the
        // rate is 2 * 11 000 B / 0.1 s = 220 000 B/s and a 1 040 B packet takes 4 727 273 ns.
        let (mut h, sent) = paced_after_one_sample(None);
        assert_eq!(h.cwnd_segs(), 11.0);
        assert_eq!(sent, vec![10], "the second segment the window allows waits");
        let gap = 4_727_273;
        assert_eq!(h.s.next_wakeup(), Some(100 * MS + gap));
        assert!(h.wake(100 * MS + gap - 1).is_empty(), "not a nanosecond early");
        assert_eq!(h.wake(100 * MS + gap), vec![11]);
        // The window is full now: no pacing wakeup, only the RTO.
        assert_eq!(h.s.next_wakeup(), h.s.rto_deadline);
    }

    #[test]
    fn pacing_uses_one_point_two_times_cwnd_over_srtt_from_half_ssthresh_on() {
        // ssthresh 20 segments: cwnd 11 >= 20 / 2, so the ratio is 1.2: 132 000 B/s, and a
        // 1 040 B packet takes 7 878 788 ns.
        let (h, sent) = paced_after_one_sample(Some(20));
        assert_eq!((h.cwnd_segs(), sent), (11.0, vec![10]));
        assert_eq!(h.s.next_wakeup(), Some(100 * MS + 7_878_788));
        // Without pacing the same ACK sends both at once.
        let mut unpaced = Harness::new(10, true);
        unpaced.s.st.ssthresh = 20_000;
        unpaced.send();
        unpaced.now = 100 * MS;
        assert_eq!(unpaced.ack(1, &[], 0), vec![10, 11]);
    }

    #[test]
    fn data_carries_the_configured_ecn_codepoint_and_retransmissions_none() {
        let codepoints = |ecn: bool, ect1: bool| {
            let mut h = Harness::new(2, false);
            (h.s.cfg.ecn, h.s.cfg.ect1) = (ecn, ect1);
            let mut out = Vec::new();
            let mut cx = Cx { now: 0, out: &mut out, stats: &mut h.stats, messages: &mut MessageLedger::default() };
            h.s.try_send(&mut cx);
            h.s.retransmit(0, &mut cx);
            out.iter().map(|p| p.ecn).collect::<Vec<_>>()
        };
        // Two new segments, then segment 0 again: RFC 3168 §6.1.5 sends a retransmission Not-ECT.
        assert_eq!(codepoints(false, false), [Ecn::NotEct; 3]);
        assert_eq!(codepoints(true, false), [Ecn::Ect0, Ecn::Ect0, Ecn::NotEct]);
        assert_eq!(codepoints(true, true), [Ecn::Ect1, Ecn::Ect1, Ecn::NotEct]);
    }

    #[test]
    fn slow_start_doubles_the_window_every_round_trip() {
        let mut h = Harness::new(1, true);
        assert_eq!(h.send(), vec![0]);
        let mut next = 1;
        for round in 1..=5u64 {
            h.now = round * 100 * MS;
            // Every segment of the previous round is acked one by one.
            let in_flight = h.s.flight_size() / 1000;
            let mut sent = 0;
            for _ in 0..in_flight {
                sent += h.ack(next, &[], h.now - 100 * MS).len();
                next += 1;
            }
            assert_eq!(h.cwnd_segs(), (1u64 << round) as f64, "round {round}");
            assert_eq!(sent as u64, 1 << round, "round {round}: a window of segments sent");
        }
    }

    #[test]
    fn congestion_avoidance_adds_one_segment_per_round_trip() {
        let mut h = Harness::new(10, true);
        h.s.st.ssthresh = 10_000; // start in congestion avoidance
        h.send();
        let mut next = 1;
        for round in 1..=4u64 {
            h.now = round * 100 * MS;
            let in_flight = h.s.flight_size() / 1000;
            for _ in 0..in_flight {
                h.ack(next, &[], 0);
                next += 1;
            }
            // One MSS per window of acknowledged bytes: 10, 11, 12, 13, 14.
            assert_eq!(h.cwnd_segs(), (10 + round) as f64, "round {round}");
        }
    }

    /// Records every ACK it is shown; Reno's growth.
    struct Spy(std::sync::Arc<std::sync::Mutex<Vec<Ack>>>, u64);
    impl CongestionControl for Spy {
        fn name(&self) -> &'static str {
            "spy"
        }
        fn on_ack(&mut self, st: &mut CcState, ack: &Ack) {
            crate::tcp::cc::reno_increase(st, ack.acked, &mut self.1);
        }
        fn on_ack_received(&mut self, _: &CcState, ack: &Ack) {
            self.0.lock().unwrap().push(*ack);
        }
        fn marks_non_congestion(&self) -> bool {
            true
        }
    }

    #[test]
    fn an_encn_sender_flags_every_data_segment_and_passes_the_echo_on() {
        use crate::tcp::cc::encn::Encn;
        let flags = |cc: Box<dyn CongestionControl>| {
            let mut h = Harness::with_cc(4, false, cc);
            let mut out = Vec::new();
            let mut cx = Cx { now: 0, out: &mut out, stats: &mut h.stats, messages: &mut MessageLedger::default() };
            h.s.try_send(&mut cx);
            assert_eq!(out.len(), 4);
            out.iter().map(|p| p.flags & FLAG_NC != 0).collect::<Vec<_>>()
        };
        assert_eq!(flags(Box::<Encn>::default()), vec![true; 4]);
        assert_eq!(flags(Box::<NewReno>::default()), vec![false; 4]);
        // Retransmissions carry it too; FLAG_NC_ECHO on an ACK reaches the congestion control.
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut h = Harness::with_cc(4, false, Box::new(Spy(seen.clone(), 0)));
        h.send();
        for (ack, echo) in [(1, true), (2, false), (2, true), (2, true), (2, true)] {
            let pkt = Packet {
                kind: Kind::TcpAck,
                ack: ack * 1000,
                window: u32::MAX,
                flags: if echo { FLAG_NC_ECHO } else { 0 },
                ..Packet::default()
            };
            let mut out = Vec::new();
            let mut cx = Cx { now: 0, out: &mut out, stats: &mut h.stats, messages: &mut MessageLedger::default() };
            h.s.on_packet(&pkt, &mut cx);
            assert!(out.iter().all(|p| p.flags & FLAG_NC != 0));
        }
        assert_eq!(h.stats.retransmissions, 1, "the third dupACK retransmitted segment 2");
        let echoes: Vec<bool> = seen.lock().unwrap().iter().map(|a| a.nc_echo).collect();
        assert_eq!(echoes, vec![true, false, true, true, true]);
    }

    #[test]
    fn the_congestion_control_gets_the_rtt_of_the_newest_segment_acknowledged() {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut h = Harness::with_cc(2, true, Box::new(Spy(seen.clone(), 0)));
        h.s.st.ssthresh = 1 << 40;
        assert_eq!(h.send(), vec![0, 1]); // at 0 ms
        h.now = 50 * MS;
        assert_eq!(h.ack(1, &[], 0), vec![2, 3]); // at 50 ms
                                                  // A delayed ACK for 1 and 2 echoes the timestamp of 1 (sent at 0 ms) but was
                                                  // triggered by 2 (sent at 50 ms): 120 ms by timestamps, 70 ms for the newest.
        h.now = 120 * MS;
        assert_eq!(h.ack(3, &[], 0), vec![4, 5, 6, 7]);
        // 3 is lost; the SACKs for 4..7 mark it lost and it is retransmitted at 130 ms. The
        // ACK that covers the retransmission has no newest-segment sample (7 was SACKed
        // before), only the timestamp one.
        h.now = 130 * MS;
        for k in 5..=8 {
            h.ack(3, &[(4, k)], 120 * MS);
        }
        assert_eq!(h.stats.retransmissions, 1);
        h.now = 150 * MS;
        h.ack(8, &[], 130 * MS);
        let acks = seen.lock().unwrap().clone();
        let samples: Vec<_> = acks.iter().filter(|a| a.acked > 0).map(|a| (a.rtt, a.rtt_last)).collect();
        assert_eq!(
            samples,
            vec![(Some(50 * MS), Some(50 * MS)), (Some(120 * MS), Some(70 * MS)), (Some(20 * MS), None)]
        );
        // Duplicate ACKs carry neither.
        assert!(acks.iter().filter(|a| a.acked == 0).all(|a| a.rtt.is_none() && a.rtt_last.is_none()));
    }

    /// A broken algorithm: its growth hook collapses the window to `to` bytes.
    struct Collapse(u64);
    impl CongestionControl for Collapse {
        fn name(&self) -> &'static str {
            "collapse"
        }
        fn on_ack(&mut self, st: &mut CcState, _: &Ack) {
            st.cwnd = self.0;
        }
    }

    #[test]
    fn a_window_left_at_one_segment_by_the_algorithm_is_accepted() {
        let mut h = Harness::with_cc(2, false, Box::new(Collapse(1000)));
        h.send();
        h.ack(1, &[], 0);
        assert_eq!(h.cwnd_segs(), 1.0);
    }

    #[test]
    #[cfg_attr(not(debug_assertions), ignore = "invariants are checked in debug builds")]
    #[should_panic(
        expected = "invariant violated at t=0 ns in flow 0 (TCP sender, after cc.on_ack): cwnd 999 B below its floor 1000 B"
    )]
    fn an_algorithm_shrinking_the_window_below_one_segment_fails_loudly() {
        let mut h = Harness::with_cc(2, false, Box::new(Collapse(999)));
        h.send();
        h.ack(1, &[], 0);
    }
}
