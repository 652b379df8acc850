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
//! - RFC 5681 §3.1 on a timeout, with one departure: ssthresh comes from `pipe` (RFC 6675
//!   §5.1), and a timeout that interrupts a fast recovery may lower the ssthresh that recovery
//!   set but never raise it (Linux's `tcp_enter_loss` keeps it): without SACK, FlightSize
//!   has by then grown with every segment NewReno sent while repairing one hole per round
//!   trip. NewReno's timer is RFC 6582's Impatient variant (§3.2 step 5, §4): reset on the
//!   first partial ACK only, so a window with many losses ends in one timeout rather than
//!   one round trip per hole.
//! - RFC 3168 §6.1.2: ECN-Echo reaction at most once per window, CWR on the next new segment;
//!   retransmissions are sent Not-ECT (§6.1.5).
//! - E-DCTCP explicit loss notifications (`cc/edctcp.rs`), for algorithms that ask for them:
//!   data carries `FLAG_LN`; a notice for a segment marks it lost at once, starts a recovery
//!   episode (once per window, as a fast retransmit would) and makes it eligible for
//!   retransmission (within the window, as RFC 6675's `NextSeg`) once the backoff the
//!   algorithm draws has passed.
//!
//! One accounting serves both recovery styles, as in Linux: every outstanding segment is in
//! the scoreboard with `sacked`, `lost` and `retrans` flags, and
//! `pipe = FlightSize - sacked - lost + retransmitted` (RFC 6675 `SetPipe` with lost
//! segments marked once). Without SACK nothing is ever SACKed and a segment is marked lost
//! only when it is retransmitted, so `pipe` equals FlightSize as RFC 6582 expects.

use std::collections::VecDeque;

use super::cc::{Ack, CcState, Congestion, CongestionControl, FastRecovery};
use super::rtt::RttEstimator;
use super::scoreboard::Scoreboard;
use super::TcpConfig;
use crate::app::{Application, Socket};
use crate::endpoint::{Cx, Endpoint};
use crate::messages::MessageLedger;
use crate::packet::{Ecn, Kind, Packet, FLAG_CWR, FLAG_ECE, FLAG_LN, FLAG_LOST, FLAG_NC, FLAG_NC_ECHO};
use crate::results::FlowResult;
use crate::sim::rng::{Rng, Stream};
use crate::sim::time::Time;

/// E-DCTCP state of an outstanding segment that a router returned at least once.
#[derive(Clone, Copy, Debug)]
struct Notice {
    /// The segment `[seq, end)`.
    seq: u64,
    end: u64,
    /// Explicit loss notifications received for it.
    bounces: u8,
    /// Not to be retransmitted before this time (the algorithm's backoff); 0 if not held.
    hold_until: Time,
}

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
    /// Earliest end of a retransmission hold (E-DCTCP backoff), if any is pending.
    hold_expiry: Option<Time>,
    /// The flow's random stream (E-DCTCP backoff draws).
    rng: Rng,
    /// The congestion control asked for plain Reno fast recovery (effective without SACK).
    reno_recovery: bool,
    /// The congestion control asked for `FLAG_NC` on every data segment (ENCN).
    set_nc: bool,
    /// Segments returned by loss notifications (E-DCTCP), in sequence order; an entry goes
    /// when its segment is acknowledged. Empty for every other algorithm.
    notices: VecDeque<Notice>,
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
        TcpSender {
            flow,
            dst,
            rtt: RttEstimator::new(cfg.initial_rto, cfg.min_rto, cfg.max_rto),
            rwnd: cfg.rwnd,
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
            hold_expiry: None,
            rng: Rng::stream(0, Stream::Flow(flow)),
            reno_recovery,
            set_nc,
            notices: VecDeque::new(),
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
    }

    /// E-DCTCP: until when segment `seq` is held back from retransmission (0: not held).
    fn hold_until(&self, seq: u64) -> Time {
        if self.notices.is_empty() {
            return 0;
        }
        self.notices.binary_search_by_key(&seq, |n| n.seq).map_or(0, |k| self.notices[k].hold_until)
    }

    /// RFC 6675 `IsLost` over the scoreboard, once anything above SND.UNA is SACKed.
    fn mark_sack_losses(&mut self) {
        if self.sb.high_sacked() > self.snd_una {
            self.sb.mark_sack_losses(self.cfg.dupthresh, &mut self.lost_frontier);
        }
    }

    /// A retransmission is lost once data sent more than a reordering window after it has
    /// been delivered (RACK, RFC 8985 §6.2, applied to retransmissions): it may be sent again.
    /// Returns true if one of them was sent at or after the last window reduction (the
    /// retransmission that starts a recovery goes out with the reduced window).
    fn mark_lost_retransmissions(&mut self) -> bool {
        let reo_wnd = self.rtt.min_rtt.unwrap_or(0) / 4;
        let mut after_reduction = false;
        // `delivered_xmit_time` only grows and the reordering window only shrinks, so the
        // retransmissions found lost are always the oldest ones: pop them from the front.
        while let Some(&(seq, sent)) = self.retx_order.front() {
            if sent + reo_wnd >= self.sb.delivered_xmit_time() {
                break;
            }
            self.retx_order.pop_front();
            let Some(i) = self.sb.index_of(seq) else { continue }; // acknowledged meanwhile
            let s = self.sb[i];
            if s.retrans && !s.sacked && s.xmit_time == sent {
                self.sb.clear_retrans(i);
                self.retx_hint = self.retx_hint.min(s.seq);
                after_reduction |= sent >= self.reduced_at;
            }
        }
        after_reduction
    }

    /// A retransmission sent after the window was last reduced was lost too: the reduced
    /// window is still too large. RFC 5681 §4.3: "the loss of a retransmission [is] two
    /// indications of congestion and, therefore, cwnd (and ssthresh) MUST be lowered twice".
    /// As Linux does (also after a timeout), start a new fast-recovery episode, halving from
    /// the data actually in flight; without this, a queue that drops most of a flow's packets
    /// (CoDel at a high drop count, a policer) meets a retransmission storm.
    fn reduce_on_lost_retransmission(&mut self, cx: &mut Cx) {
        self.sync_state(cx.now);
        self.st.flight_size = self.pipe();
        self.st.ssthresh = self.cc.ssthresh(&self.st, Congestion::Loss);
        self.st.cwnd = self.st.ssthresh;
        self.recovery = Recovery::Fast;
        self.recover = self.snd_nxt;
        self.partial_acked = false;
        self.ecn_recover = self.snd_nxt;
        self.reduced_at = cx.now;
        cx.stats.count(cx.now, |s| &mut s.fast_recoveries);
        self.sync_state(cx.now);
    }

    // ----- transmission -----

    /// Inlined: called once per data segment from two places (new data, retransmission).
    #[inline(always)]
    fn emit(&mut self, seq: u64, len: u32, retransmission: bool, cx: &mut Cx) {
        let mut flags = if self.set_nc { FLAG_NC } else { 0 };
        let ecn = if self.cfg.ecn && !retransmission { Ecn::Ect0 } else { Ecn::NotEct };
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
        if retransmission {
            cx.stats.count(cx.now, |s| &mut s.retransmissions);
        }
        self.cc.on_sent(&self.st, len);
        // RFC 6298 §5.1: start the timer if it is not running.
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(cx.now + self.rtt.rto());
        }
    }

    /// Retransmit the segment at index `i` regardless of the window.
    fn retransmit(&mut self, i: usize, cx: &mut Cx) {
        if self.sb.retrans_bytes() == 0 {
            // No retransmission is outstanding: every remembered one is stale.
            self.retx_order.clear();
        }
        self.retx_order.push_back((self.sb[i].seq, cx.now));
        let (seq, len) = self.sb.retransmitted(i, cx.now);
        self.emit(seq, len, true, cx);
    }

    /// RFC 6675 `NextSeg` rule 1: the first lost, un-SACKed segment not yet retransmitted.
    /// Segments held by a backoff are skipped; the hint may pass them, and
    /// [`TcpSender::release_holds`] moves it back when their hold ends.
    fn next_lost(&mut self, now: Time) -> Option<usize> {
        if self.sb.lost_bytes() == 0 {
            // Nothing is lost and un-SACKed (the common case, checked on every transmission).
            // The hint is left where it is: a lower start finds the same segment, since
            // whatever makes a segment below it eligible again also lowers the hint.
            return None;
        }
        let mut i = self.sb.seq_count(self.retx_hint);
        let frontier = self.lost_frontier.max(self.notice_frontier);
        while i < self.sb.len() {
            let s = &self.sb[i];
            if s.seq >= frontier && !s.lost {
                break;
            }
            if s.lost && !s.sacked && !s.retrans && self.hold_until(s.seq) <= now {
                return Some(i);
            }
            i += 1;
        }
        self.retx_hint = if i < self.sb.len() { self.sb[i].seq } else { self.snd_nxt };
        None
    }

    /// Send what the window allows: lost segments first, then new data.
    fn try_send(&mut self, cx: &mut Cx) {
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
                if pipe + len > window {
                    break;
                }
                self.retransmit(i, cx);
                self.retx_hint = self.sb[i].end();
                pipe = self.pipe();
                continue;
            }
            let len = (self.app_end.saturating_sub(self.snd_nxt)).min(mss);
            if len == 0 || pipe + len > window || self.snd_nxt + len - self.snd_una > self.rwnd {
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
        let ece = self.cfg.ecn && pkt.flags & FLAG_ECE != 0;
        if pkt.ts_echo <= now {
            self.sb.delivered_sent_at(pkt.ts_echo);
        }
        if self.cfg.sack && pkt.sack_len > 0 && self.sb.update_sack(pkt, self.snd_nxt) {
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
        let info = Ack { acked, rtt, ece, size: pkt.size, nc_echo, rtt_last };
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
            self.sb.remove_acked(ack);
            self.snd_una = ack;
            self.dupacks = 0;
            self.retx_hint = self.retx_hint.max(ack);
            self.lost_frontier = self.lost_frontier.max(ack);
            // Since the full sync above only SND.UNA and the scoreboard counters changed.
            self.st.snd_una = self.snd_una;
            self.st.flight_size = self.flight_size();
            self.st.bytes_in_flight = self.pipe();

            let mut restart_rto = true;
            match self.recovery {
                Recovery::Fast if self.plain_reno() => {
                    // RFC 5681 §3.2 step 6: the first ACK of new data deflates the window and
                    // ends recovery, whether or not it covers `recover`.
                    self.st.cwnd = self.st.ssthresh;
                    self.exit_recovery(now);
                }
                Recovery::Fast if ack >= self.recover => {
                    // Full ACK, RFC 6582 §3.2 step 3 option (1).
                    let flight = self.flight_size().max(self.cfg.mss as u64);
                    self.st.cwnd = self.st.ssthresh.min(flight + self.cfg.mss as u64);
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
                        self.st.cwnd = self.st.cwnd.saturating_sub(acked) + if acked >= mss { mss } else { 0 };
                        self.st.cwnd = self.st.cwnd.max(mss);
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
            } else if restart_rto {
                self.rto_deadline = Some(now + self.rtt.rto()); // §5.3
            }
        } else if ack == self.snd_una && self.snd_nxt > self.snd_una && pkt.payload == 0 {
            // Duplicate ACK (RFC 5681 §2; the advertised window never changes here).
            self.dupacks += 1;
            if self.recovery == Recovery::Fast && !self.cfg.sack {
                // RFC 5681 §3.2 step 4: inflate by one segment per further dupACK.
                self.st.cwnd += self.cfg.mss as u64;
            }
        }

        self.maybe_enter_fast_recovery(cx);
        self.try_send(cx);
    }

    /// RFC 5681 §3.2 / RFC 6675 §5: enter fast recovery on the DupThresh-th dupACK or when
    /// SACK says the first outstanding segment is lost; RFC 6582 §4: not before `recover`
    /// has been acknowledged.
    fn maybe_enter_fast_recovery(&mut self, cx: &mut Cx) {
        if self.recovery == Recovery::Fast || self.snd_una == self.snd_nxt {
            return;
        }
        let head_lost = self.cfg.sack && self.sb.front().is_some_and(|s| s.lost);
        if !(self.dupacks >= self.cfg.dupthresh || head_lost) {
            return;
        }
        // RFC 6582 §4 (NewReno, SACK): no new episode before `recover` is acknowledged.
        // Plain Reno has no such guard: fresh dupACKs after a partial ACK start a new one.
        if self.recovery == Recovery::Timeout || (self.snd_una < self.recover && !self.plain_reno()) {
            return;
        }
        self.start_fast_recovery(cx);
        self.retransmit(0, cx);
        self.st.cwnd = if self.cfg.sack {
            self.st.ssthresh // RFC 6675 §5 step 4.2
        } else {
            self.st.ssthresh + 3 * self.cfg.mss as u64 // RFC 5681 §3.2 step 3
        };
        self.sync_state(cx.now);
    }

    /// Enter fast recovery: new ssthresh, recovery point at SND.NXT.
    fn start_fast_recovery(&mut self, cx: &mut Cx) {
        self.sync_state(cx.now);
        self.st.ssthresh = self.cc.ssthresh(&self.st, Congestion::Loss);
        self.recovery = Recovery::Fast;
        self.recover = self.snd_nxt;
        self.partial_acked = false;
        // A loss reduction is also the window's ECN reaction (RFC 3168 §6.1.2).
        self.ecn_recover = self.snd_nxt;
        self.reduced_at = cx.now;
        cx.stats.count(cx.now, |s| &mut s.fast_recoveries);
    }

    /// E-DCTCP: a router returned segment `pkt.seq`, sent at `pkt.ts`, instead of forwarding
    /// it. The loss is certain and immediate: mark it lost (its copy is out of the network),
    /// hold its retransmission for the algorithm's backoff, and reduce the window as a fast
    /// retransmit would, once per window (RFC 6582 §4's rule; a returned retransmission sent
    /// after the last reduction reduces again, RFC 5681 §4.3).
    fn on_loss_notice(&mut self, pkt: &Packet, cx: &mut Cx) {
        cx.stats.count(cx.now, |s| &mut s.loss_notices);
        let Some(i) = self.sb.index_of(pkt.seq) else { return }; // acknowledged meanwhile
        let seg = self.sb[i];
        if seg.sacked || seg.xmit_time > pkt.ts {
            return; // delivered, or the notice is about an older copy
        }
        let was_retrans = self.sb.clear_retrans(i);
        let (xmit_time, end) = (seg.xmit_time, seg.end());
        let k = match self.notices.binary_search_by_key(&pkt.seq, |n| n.seq) {
            Ok(k) => k,
            Err(k) => {
                self.notices.insert(k, Notice { seq: pkt.seq, end, bounces: 0, hold_until: 0 });
                k
            }
        };
        let n = &mut self.notices[k];
        n.bounces = n.bounces.saturating_add(1);
        let bounces = n.bounces;
        self.sb.mark_lost(i);
        self.sync_state(cx.now);
        let hold = self.cc.on_loss_notice(&self.st, bounces as u32, &mut self.rng);
        self.retx_hint = self.retx_hint.min(pkt.seq);
        self.notice_frontier = self.notice_frontier.max(end);
        match self.recovery {
            Recovery::Open if self.snd_una >= self.recover && self.snd_una < self.snd_nxt => {
                self.start_fast_recovery(cx);
                self.st.cwnd = self.st.ssthresh.max(self.cfg.mss as u64);
            }
            Recovery::Fast if was_retrans && xmit_time >= self.reduced_at => {
                self.reduce_on_lost_retransmission(cx);
            }
            _ => {}
        }
        if hold > 0 {
            let until = cx.now.saturating_add(hold);
            self.notices[k].hold_until = until;
            self.hold_expiry = Some(self.hold_expiry.map_or(until, |t| t.min(until)));
        }
        // The notice is feedback as an ACK is (RFC 6298 §5.3): the path is alive and the loss
        // is being repaired, so the timer restarts rather than firing during the backoff.
        self.rto_deadline = Some(cx.now + self.rtt.rto());
        self.sync_state(cx.now);
        self.try_send(cx);
    }

    /// Returned segments whose backoff has passed become eligible for retransmission.
    fn release_holds(&mut self, now: Time) {
        self.hold_expiry = None;
        for s in self.notices.iter_mut() {
            if s.hold_until == 0 {
                continue;
            }
            if s.hold_until <= now {
                s.hold_until = 0;
                self.retx_hint = self.retx_hint.min(s.seq);
            } else {
                let until = s.hold_until;
                self.hold_expiry = Some(self.hold_expiry.map_or(until, |t| t.min(until)));
            }
        }
    }

    fn exit_recovery(&mut self, now: Time) {
        self.recovery = Recovery::Open;
        self.sync_state(now);
        self.cc.on_recovery_exit(&mut self.st);
        self.check_cwnd(now, "cc.on_recovery_exit");
    }

    /// RFC 3168 §6.1.2: halve like a fast retransmit, without retransmitting, once per window.
    fn reduce_on_ecn(&mut self, cx: &mut Cx) {
        self.sync_state(cx.now);
        self.st.ssthresh = self.cc.ssthresh(&self.st, Congestion::Ecn);
        self.st.cwnd = self.st.ssthresh.max(self.cfg.mss as u64);
        self.ecn_recover = self.snd_nxt;
        self.reduced_at = cx.now;
        self.cwr_pending = true;
        cx.stats.count(cx.now, |s| &mut s.ecn_reductions);
    }

    /// RFC 6298 §5.4-5.6, RFC 5681 §3.1 and RFC 6675 §5.1.
    fn on_rto(&mut self, cx: &mut Cx) {
        let now = cx.now;
        if self.snd_una == self.snd_nxt {
            self.rto_deadline = None;
            return;
        }
        cx.stats.count(now, |s| &mut s.timeouts);
        self.sync_state(now);
        // RFC 5681 §3.1: a segment that already timed out keeps ssthresh unchanged. FlightSize
        // is taken as the data still believed in the network (RFC 6675 pipe, before this
        // timeout marks it lost), as ns-3 does: data SACKed during a failed recovery has left
        // the network and must not inflate ssthresh. A timeout that ends a fast recovery may
        // lower the ssthresh that recovery set but not raise it (module header).
        if self.rtt.backoff == 0 {
            self.st.flight_size = self.pipe();
            let ssthresh = self.cc.ssthresh(&self.st, Congestion::Timeout);
            self.st.ssthresh = match self.recovery {
                Recovery::Fast => ssthresh.min(self.st.ssthresh),
                _ => ssthresh,
            };
        }
        self.st.cwnd = self.cfg.mss as u64; // loss window
        self.recovery = Recovery::Timeout;
        self.recover = self.snd_nxt;
        self.reduced_at = now;
        self.ecn_recover = self.snd_nxt;
        self.dupacks = 0;
        // Everything not SACKed is presumed lost and no retransmission is still in flight;
        // the SACK information is kept (RFC 6675 §5.1).
        self.retx_order.clear();
        self.sb.all_lost();
        for n in self.notices.iter_mut() {
            n.hold_until = 0;
        }
        self.hold_expiry = None;
        self.lost_frontier = self.snd_nxt;
        self.retx_hint = self.snd_una;
        self.sync_state(now);
        self.cc.on_timeout(&mut self.st);
        self.check_cwnd(now, "cc.on_timeout");
        self.rtt.back_off();
        self.rto_deadline = Some(now + self.rtt.rto());
        self.sync_state(now);
        self.try_send(cx);
    }

    /// Let the application act: at its own wakeup, or `triggered` by another flow.
    fn run_app(&mut self, cx: &mut Cx, triggered: bool) {
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
    }
}

impl Endpoint for TcpSender {
    fn on_packet(&mut self, pkt: &Packet, cx: &mut Cx) {
        if pkt.kind == Kind::TcpAck {
            if pkt.flags & FLAG_LOST != 0 {
                if self.cfg.loss_notice {
                    self.on_loss_notice(pkt, cx);
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
        earlier(earlier(self.app_wakeup, self.rto_deadline), self.hold_expiry)
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
    }
}

#[cfg(test)]
mod tests {
    //! Hand-computed traces: the sender is driven with ACKs built by hand and its window and
    //! output are checked after each step. MSS 1000 B, header 40 B, IW 1 segment unless said.
    use super::*;
    use crate::app::UNLIMITED;
    use crate::packet::SackBlock;
    use crate::sim::time::MS;
    use crate::stats::FlowStats;
    use crate::tcp::cc::newreno::NewReno;
    use crate::tcp::cc::reno::Reno;

    struct Backlog;
    impl Application for Backlog {
        fn next_wakeup(&self) -> Option<Time> {
            None
        }
        fn on_wakeup(&mut self, _: Time, _: &mut dyn Socket, _: &mut FlowStats) {}
    }

    struct Harness {
        s: TcpSender,
        stats: FlowStats,
        now: Time,
    }

    impl Harness {
        fn new(init_cwnd: u64, sack: bool) -> Self {
            Self::with_cc(init_cwnd, sack, Box::new(NewReno::default()))
        }

        fn with_cc(init_cwnd: u64, sack: bool, cc: Box<dyn CongestionControl>) -> Self {
            let mut cfg = TcpConfig::default_config();
            cfg.mss = 1000;
            cfg.header = 40;
            cfg.init_cwnd = init_cwnd * 1000;
            cfg.sack = sack;
            cfg.rwnd = 1 << 30;
            let mut s = TcpSender::new(0, 1, cfg, cc, Box::new(Backlog));
            s.app_end = UNLIMITED;
            Harness { s, stats: FlowStats::default(), now: 0 }
        }

        /// Let the sender transmit; returns the sequence numbers sent (in segments).
        fn send(&mut self) -> Vec<u64> {
            let mut out = Vec::new();
            let mut cx =
                Cx { now: self.now, out: &mut out, stats: &mut self.stats, messages: &mut MessageLedger::default() };
            self.s.try_send(&mut cx);
            out.iter().map(|p| p.seq / 1000).collect()
        }

        /// Deliver an ACK for segment number `ack` (cumulative), with SACK blocks in segments.
        fn ack(&mut self, ack: u64, sack: &[(u64, u64)], ts_echo: Time) -> Vec<u64> {
            let mut pkt =
                Packet { kind: Kind::TcpAck, ack: ack * 1000, ts_echo, window: u32::MAX, ..Packet::default() };
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

        fn cwnd_segs(&self) -> f64 {
            self.s.st.cwnd as f64 / 1000.0
        }

        fn fire_rto(&mut self) -> Vec<u64> {
            self.now = self.s.rto_deadline.expect("timer armed");
            let mut out = Vec::new();
            let mut cx =
                Cx { now: self.now, out: &mut out, stats: &mut self.stats, messages: &mut MessageLedger::default() };
            self.s.on_wakeup(&mut cx);
            out.iter().map(|p| p.seq / 1000).collect()
        }
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

    #[test]
    fn three_dupacks_trigger_fast_retransmit_and_halve_the_window() {
        // NewReno (no SACK), cwnd 10: segments 0..9 out, segment 0 is lost.
        let mut h = Harness::new(10, false);
        h.s.st.ssthresh = 1 << 40;
        assert_eq!(h.send(), (0..10).collect::<Vec<_>>());
        // Dupacks 1 and 2: limited transmit sends one new segment each (RFC 3042).
        assert_eq!(h.ack(0, &[], 0), vec![10]);
        assert_eq!(h.ack(0, &[], 0), vec![11]);
        // Third dupack: ssthresh = FlightSize/2 = 12/2 = 6 segments, retransmit 0,
        // cwnd = 6 + 3 = 9; pipe is 12 so nothing new.
        assert_eq!(h.ack(0, &[], 0), vec![0]);
        assert_eq!(h.s.st.ssthresh, 6000);
        assert_eq!(h.cwnd_segs(), 9.0);
        assert_eq!(h.s.recovery, Recovery::Fast);
        // Further dupacks inflate by one MSS each; new data once cwnd exceeds FlightSize 12.
        for expect in [vec![], vec![], vec![], vec![12]] {
            assert_eq!(h.ack(0, &[], 0), expect);
        }
        assert_eq!(h.cwnd_segs(), 13.0);
        // Full ACK (everything up to recover = 12): cwnd = min(ssthresh, FlightSize + MSS)
        // with FlightSize = 1 (segment 12 outstanding) -> 2 segments.
        h.ack(12, &[], 0);
        assert_eq!(h.s.recovery, Recovery::Open);
        assert_eq!(h.cwnd_segs(), 2.0);
        assert_eq!(h.stats.fast_recoveries, 1);
        assert_eq!(h.stats.retransmissions, 1);
    }

    #[test]
    fn partial_acks_retransmit_the_next_hole_and_deflate() {
        // NewReno, cwnd 10, segments 0 and 4 lost.
        let mut h = Harness::new(10, false);
        h.s.st.ssthresh = 1 << 40;
        h.send();
        h.ack(0, &[], 0);
        h.ack(0, &[], 0);
        assert_eq!(h.ack(0, &[], 0), vec![0]); // 12 outstanding, ssthresh 6, cwnd 9
                                               // Five more dupacks (for 5..9 arriving; 10 and 11 were limited transmits... keep simple).
        for _ in 0..4 {
            h.ack(0, &[], 0);
        }
        assert_eq!(h.cwnd_segs(), 13.0);
        // Retransmitted 0 arrives; receiver has 1..3 and 5..: partial ACK up to 4.
        // Acked 4 segments: cwnd = 13 - 4 + 1 = 10; segment 4 retransmitted at once.
        let sent = h.ack(4, &[], 0);
        assert_eq!(sent[0], 4);
        assert_eq!(h.s.recovery, Recovery::Fast);
        // pipe = FlightSize = 13 - 4 = 9 (segments 4..12) -> one new segment (13) fits in 10.
        assert_eq!(&sent[1..], &[13]);
        assert_eq!(h.cwnd_segs(), 10.0);
        assert_eq!(h.stats.retransmissions, 2);
        assert_eq!(h.stats.timeouts, 0);
    }

    /// Two losses in one window without SACK, up to the first partial ACK: cwnd 10, segments
    /// 0..9 out, 0 and 4 lost. By hand: the dupACKs for 1 and 2 send 10 and 11 (limited
    /// transmit); the third retransmits 0 with FlightSize 12: ssthresh 6, cwnd 6 + 3 = 9. The
    /// dupACKs for 5..9 inflate cwnd to 14 and release 12 and 13 (pipe 12); those for 10 and
    /// 11 bring it to 16 and release 14 and 15. The retransmitted 0 then arrives: ACK 4,
    /// partial (recover = 12). Returns what that partial ACK makes the sender send.
    fn two_losses_up_to_the_partial_ack(h: &mut Harness) -> Vec<u64> {
        h.s.st.ssthresh = 1 << 40;
        assert_eq!(h.send(), (0..10).collect::<Vec<_>>());
        assert_eq!(h.ack(0, &[], 0), vec![10]);
        assert_eq!(h.ack(0, &[], 0), vec![11]);
        assert_eq!(h.ack(0, &[], 0), vec![0]);
        assert_eq!((h.s.st.ssthresh, h.s.st.cwnd), (6000, 9000));
        let mut sent = vec![];
        for _ in 5..=11 {
            sent.extend(h.ack(0, &[], 0));
        }
        assert_eq!(sent, vec![12, 13, 14, 15]);
        assert_eq!(h.cwnd_segs(), 16.0);
        h.ack(4, &[], 0)
    }

    #[test]
    fn newreno_repairs_two_losses_in_one_window_in_a_single_episode() {
        let mut h = Harness::new(10, false);
        // Partial ACK: retransmit 4 at once, cwnd = 16 - 4 + 1 = 13 over pipe 12 (4..15):
        // one new segment, 16. Still in recovery.
        assert_eq!(two_losses_up_to_the_partial_ack(&mut h), vec![4, 16]);
        assert_eq!(h.s.recovery, Recovery::Fast);
        assert_eq!(h.cwnd_segs(), 13.0);
        // 12..15 arrive: four dupACKs inflate to 17 and send 17..20.
        let mut sent = vec![];
        for _ in 12..=15 {
            sent.extend(h.ack(4, &[], 0));
        }
        assert_eq!(sent, vec![17, 18, 19, 20]);
        // The retransmitted 4 arrives: ACK 16 covers recover = 12, a full ACK:
        // cwnd = min(ssthresh 6, FlightSize 5 (16..20) + 1) = 6.
        h.ack(16, &[], 0);
        assert_eq!(h.s.recovery, Recovery::Open);
        assert_eq!(h.cwnd_segs(), 6.0);
        assert_eq!((h.stats.fast_recoveries, h.stats.retransmissions, h.stats.timeouts), (1, 2, 0));
    }

    #[test]
    fn a_timeout_during_newreno_recovery_keeps_the_recovery_ssthresh() {
        let mut h = Harness::new(10, false);
        // Recovery with ssthresh 6 and a partial ACK at 4 (recover = 12).
        two_losses_up_to_the_partial_ack(&mut h);
        assert_eq!((h.s.recovery, h.s.st.ssthresh), (Recovery::Fast, 6000));
        // Sixty more dupACKs for 4 (data beyond the holes arriving) inflate the window and
        // release sixty new segments: FlightSize grows from 4..16 to 4..76, 73 segments, but
        // the network holds no more than before.
        for _ in 0..60 {
            h.ack(4, &[], 0);
        }
        assert_eq!(h.s.flight_size(), 73_000);
        // The timer runs out before the next hole is repaired. FlightSize / 2 would give
        // ssthresh 36.5 segments, six times what the recovery found the path to carry.
        h.fire_rto();
        assert_eq!(h.s.recovery, Recovery::Timeout);
        assert_eq!((h.s.st.ssthresh, h.s.st.cwnd), (6000, 1000));
    }

    #[test]
    fn reno_leaves_recovery_on_the_first_partial_ack_and_needs_a_second_fast_retransmit() {
        let mut h = Harness::with_cc(10, false, Box::new(Reno::default()));
        // RFC 5681 step 6: the partial ACK ends recovery with cwnd = ssthresh = 6 and does
        // not retransmit 4; pipe 12 (4..15) > 6: nothing is sent.
        assert_eq!(two_losses_up_to_the_partial_ack(&mut h), Vec::<u64>::new());
        assert_eq!(h.s.recovery, Recovery::Open);
        assert_eq!(h.cwnd_segs(), 6.0);
        assert_eq!((h.stats.fast_recoveries, h.stats.retransmissions), (1, 1));
        // 12..15 arrive: fresh dupACKs for 4. The first two allow no limited transmit
        // (FlightSize 12 > cwnd 6 + 2); the third is a new fast retransmit: FlightSize 12,
        // ssthresh 6, cwnd 9; the fourth inflates to 10 (pipe 12, nothing new).
        let sent: Vec<Vec<u64>> = (12..=15).map(|_| h.ack(4, &[], 0)).collect();
        assert_eq!(sent, vec![vec![], vec![], vec![4], vec![]]);
        assert_eq!(h.s.recovery, Recovery::Fast);
        assert_eq!((h.s.st.ssthresh, h.s.st.cwnd), (6000, 10_000));
        // The retransmitted 4 arrives: ACK 16, recovery ends with cwnd = ssthresh.
        h.ack(16, &[], 0);
        assert_eq!(h.s.recovery, Recovery::Open);
        assert_eq!(h.cwnd_segs(), 6.0);
        assert_eq!((h.stats.fast_recoveries, h.stats.retransmissions, h.stats.timeouts), (2, 2, 0));
    }

    #[test]
    fn reno_without_enough_fresh_dupacks_repairs_the_second_loss_by_timeout() {
        let mut h = Harness::with_cc(10, false, Box::new(Reno::default()));
        assert!(two_losses_up_to_the_partial_ack(&mut h).is_empty());
        // Only 12 and 13 arrive (14 and 15 are lost as well): two dupACKs, no retransmission.
        assert!(h.ack(4, &[], 0).is_empty());
        assert!(h.ack(4, &[], 0).is_empty());
        assert_eq!(h.stats.retransmissions, 1);
        // The RTO (restarted by the partial ACK) resends 4 with cwnd = 1 segment.
        assert_eq!(h.fire_rto(), vec![4]);
        assert_eq!(h.cwnd_segs(), 1.0);
        assert_eq!((h.stats.fast_recoveries, h.stats.timeouts), (1, 1));
    }

    #[test]
    fn reno_with_sack_recovers_like_newreno_with_sack() {
        // With SACK, RFC 6675 recovery applies whatever the congestion control asks.
        let run = |cc: Box<dyn CongestionControl>| {
            let mut h = Harness::with_cc(10, true, cc);
            h.s.st.ssthresh = 1 << 40;
            let mut sent = h.send();
            for k in 2..=10 {
                sent.extend(h.ack(0, &[(1, k)], 0));
            }
            sent.extend(h.ack(4, &[(5, 10)], 0));
            (sent, h.s.st.cwnd, h.s.recovery, h.stats.retransmissions)
        };
        assert_eq!(run(Box::<Reno>::default()), run(Box::<NewReno>::default()));
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

    #[test]
    fn sack_repairs_several_losses_in_one_recovery_without_timeout() {
        // cwnd 20, segments 0..19 out; 2, 7 and 12 are lost; every other one arrives and is
        // acknowledged with SACK blocks as a receiver would (most recent block first).
        let mut h = Harness::new(20, true);
        h.s.st.ssthresh = 1 << 40;
        h.send();
        let lost = [2u64, 7, 12];
        let mut retransmitted = vec![];
        let mut cum = 0;
        for seg in 0..20u64 {
            if lost.contains(&seg) {
                continue;
            }
            if seg == cum {
                cum += 1;
            }
            // Blocks: contiguous runs of received segments above `cum`.
            let mut blocks = vec![];
            let mut s = cum;
            while s <= seg {
                if lost.contains(&s) || s < cum {
                    s += 1;
                    continue;
                }
                let start = s;
                while s <= seg && !lost.contains(&s) {
                    s += 1;
                }
                blocks.push((start, s));
            }
            blocks.reverse();
            blocks.truncate(3);
            let sent = h.ack(cum, &blocks, 0);
            retransmitted.extend(sent.iter().copied().filter(|s| *s < 20));
        }
        // All three holes were retransmitted during the single recovery episode.
        assert_eq!(retransmitted, lost.to_vec());
        assert_eq!(h.stats.fast_recoveries, 1);
        // By hand: ACKs 1 and 2 grow cwnd to 22 and send 20..23; the SACKs for 3 and 4 let
        // 24 and 25 out; the SACK for 5 marks 2 lost (three SACKed above it) and starts
        // recovery with FlightSize 26 - 2 = 24 segments: ssthresh = 12.
        assert_eq!(h.s.st.ssthresh, 12_000);
        // The retransmissions and the rest arrive: the cumulative ACK passes the recovery point.
        let all = h.s.snd_nxt / 1000;
        h.ack(all, &[], 0);
        assert_eq!(h.s.recovery, Recovery::Open);
        assert_eq!(h.stats.timeouts, 0);
    }

    /// Segment 0 is lost, retransmitted at 10 ms, and the retransmission is lost too.
    /// Returns what the sender sends when, at 60 ms, a SACK reports data it sent at 30 ms.
    fn lost_retransmission_scenario(lost_retransmit: bool) -> (Vec<u64>, Vec<u64>) {
        let mut h = Harness::new(10, true);
        h.s.cfg.lost_retransmit = lost_retransmit;
        h.s.st.ssthresh = 1 << 40;
        h.send();
        h.now = 10 * MS;
        let mut first = vec![];
        for k in 2..=4 {
            first.extend(h.ack(0, &[(1, k)], 0));
        }
        assert!(first.contains(&0), "fast retransmit of 0: {first:?}");
        // SACKs for the rest of the first window (sent at 0 ms, before the retransmission)
        // prove nothing about it.
        h.now = 30 * MS;
        let mut middle = vec![];
        for k in 5..=10 {
            middle.extend(h.ack(0, &[(1, k)], 0));
        }
        assert!(!middle.contains(&0), "no early re-retransmission: {middle:?}");
        assert!(middle.iter().any(|&s| s >= 10), "new data sent at 30 ms: {middle:?}");
        // Data sent at 30 ms arrives while 0 is still missing: its retransmission is lost.
        h.now = 60 * MS;
        let top = *middle.iter().max().unwrap() + 1;
        let last = h.ack(0, &[(1, top)], 0);
        (last, middle)
    }

    #[test]
    fn a_lost_retransmission_is_sent_again_once_later_data_is_sacked() {
        let (last, _) = lost_retransmission_scenario(true);
        assert_eq!(last.first(), Some(&0), "{last:?}");
        // RFC 6675 alone has to wait for the timeout.
        let (last, _) = lost_retransmission_scenario(false);
        assert!(!last.contains(&0), "{last:?}");
    }

    #[test]
    fn a_lost_retransmission_lowers_the_window_a_second_time() {
        // RFC 5681 §4.3: two congestion indications, two reductions. The scenario's first
        // recovery set cwnd = ssthresh; the lost retransmission halves again from pipe.
        let mut h = Harness::new(10, true);
        h.s.st.ssthresh = 1 << 40;
        h.send();
        h.now = 10 * MS;
        for k in 2..=4 {
            h.ack(0, &[(1, k)], 0);
        }
        let cwnd_after_first = h.s.st.cwnd;
        h.now = 30 * MS;
        let mut top = 0;
        for k in 5..=10 {
            top = top.max(h.ack(0, &[(1, k)], 0).into_iter().max().unwrap_or(0));
        }
        assert_eq!(h.s.st.cwnd, cwnd_after_first, "one reduction per episode so far");
        h.now = 60 * MS;
        let pipe_before = h.s.pipe();
        h.ack(0, &[(1, top + 1)], 0);
        assert_eq!(h.stats.fast_recoveries, 2);
        // pipe fell by the SACKed segments and the lost retransmission before halving.
        assert!(h.s.st.ssthresh < cwnd_after_first && h.s.st.ssthresh <= pipe_before / 2);
    }

    #[test]
    fn ssthresh_after_a_timeout_counts_only_data_still_in_flight() {
        // cwnd 10, segment 0 lost, 1..9 SACKed. By hand: the first two SACKs free pipe for
        // segments 10 and 11; the third marks 0 lost and enters recovery with FlightSize 12:
        // ssthresh = cwnd = 6. The remaining SACKs bring pipe down to 3, so 12..14 go out:
        // pipe 6, FlightSize 15. Then the retransmission is lost and the timer expires.
        // FlightSize still counts the nine SACKed segments; pipe does not.
        let mut h = Harness::new(10, true);
        h.s.cfg.lost_retransmit = false;
        h.s.st.ssthresh = 10_000;
        h.send();
        for k in 2..=10 {
            h.ack(0, &[(1, k)], 0);
        }
        assert_eq!(h.s.recovery, Recovery::Fast);
        let (pipe, flight) = (h.s.pipe(), h.s.flight_size());
        assert_eq!((pipe, flight), (6000, 15_000));
        h.fire_rto();
        assert_eq!(h.s.st.ssthresh, 3000); // pipe / 2, where FlightSize / 2 would give 7500
        assert_eq!(h.cwnd_segs(), 1.0);
    }

    #[test]
    fn rto_resets_the_window_and_backs_off_exponentially() {
        let mut h = Harness::new(4, true);
        h.send();
        // First sample 100 ms: RTO = max(1 s, 100 + 4*50 ms) = 1 s.
        h.now = 100 * MS;
        h.ack(1, &[], 0); // echoes the send time 0: a 100 ms sample
        assert_eq!(h.s.rto(), 1_000_000_000);
        let flight = h.s.flight_size();
        assert_eq!(flight, 5000); // 1..5 (cwnd grew to 5)
                                  // Nothing more arrives. First timeout: ssthresh = max(5000/2, 2000) = 2500,
                                  // cwnd = 1 MSS, the first unacked segment is resent, RTO doubles.
        let t0 = h.now;
        assert_eq!(h.fire_rto(), vec![1]);
        assert_eq!(h.now - t0, 1_000_000_000);
        assert_eq!(h.cwnd_segs(), 1.0);
        assert_eq!(h.s.st.ssthresh, 2500);
        assert_eq!(h.s.rto(), 2_000_000_000);
        // Second timeout 2 s later: ssthresh unchanged (RFC 5681 §3.1), RTO 4 s.
        let t1 = h.now;
        assert_eq!(h.fire_rto(), vec![1]);
        assert_eq!(h.now - t1, 2_000_000_000);
        assert_eq!(h.s.st.ssthresh, 2500);
        assert_eq!(h.s.rto(), 4_000_000_000);
        let t2 = h.now;
        h.fire_rto();
        assert_eq!(h.now - t2, 4_000_000_000);
        assert_eq!(h.stats.timeouts, 3);
        // The retransmission is acknowledged: go-back-N resends 2 and 3 as the window opens.
        h.now += 100 * MS;
        let sent = h.ack(2, &[], h.now - 100 * MS);
        assert_eq!(sent, vec![2, 3]);
        assert_eq!(h.cwnd_segs(), 2.0);
        assert_eq!(h.s.rtt.backoff, 0);
    }

    #[test]
    fn ecn_echo_halves_once_per_window_without_retransmitting() {
        let mut h = Harness::new(10, true);
        h.s.cfg.ecn = true;
        h.s.st.ssthresh = 1 << 40;
        h.send();
        let mut pkt = Packet { kind: Kind::TcpAck, ack: 1000, window: u32::MAX, flags: FLAG_ECE, ..Packet::default() };
        let mut out = Vec::new();
        let mut cx = Cx { now: 0, out: &mut out, stats: &mut h.stats, messages: &mut MessageLedger::default() };
        h.s.on_packet(&pkt, &mut cx);
        // FlightSize after this ACK is 9 segments -> ssthresh = cwnd = 4.5 segments.
        assert_eq!(h.s.st.cwnd, 4500);
        assert_eq!(h.s.st.ssthresh, 4500);
        assert!(out.iter().all(|p| p.seq >= 10_000), "no retransmission");
        // A second ECE in the same window does nothing more.
        pkt.ack = 2000;
        let mut out2 = Vec::new();
        let mut cx = Cx { now: 0, out: &mut out2, stats: &mut h.stats, messages: &mut MessageLedger::default() };
        h.s.on_packet(&pkt, &mut cx);
        assert_eq!(h.stats.ecn_reductions, 1);
        assert!(out.is_empty() && out2.is_empty(), "window 4.5 segments < 8 in flight");
        // Once the window opens, the first new segment carries CWR, and only that one.
        let sent: Vec<Packet> = (3..=6)
            .flat_map(|a| {
                let mut out = Vec::new();
                let ack = Packet { kind: Kind::TcpAck, ack: a * 1000, window: u32::MAX, ..Packet::default() };
                h.s.on_packet(
                    &ack,
                    &mut Cx { now: 0, out: &mut out, stats: &mut h.stats, messages: &mut MessageLedger::default() },
                );
                out
            })
            .collect();
        assert!(!sent.is_empty());
        assert_eq!(sent[0].flags & FLAG_CWR, FLAG_CWR);
        assert!(sent[1..].iter().all(|p| p.flags & FLAG_CWR == 0));
        assert!(sent.iter().all(|p| p.ecn == Ecn::Ect0));
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

    #[test]
    fn sack_marking_equals_the_naive_rule_under_random_blocks() {
        // Oracle: a segment is SACKed iff some block received so far covered it whole
        // (RFC 6675 Update()). Random receivers: each ACK reports the runs of a random set of
        // received segments above a random cumulative ACK, in random order, up to three.
        let mut rng = Rng::stream(7, Stream::Flow(0));
        for _round in 0..20 {
            let mut h = Harness::new(60, true);
            h.s.st.ssthresh = 1 << 40;
            h.send();
            let mut received = [false; 60];
            let mut covered = [false; 60];
            let mut cum = 0u64;
            for _ in 0..80 {
                received[rng.range_u64(0, 60) as usize] = true;
                if rng.chance(0.1) {
                    while cum < 60 && received[cum as usize] {
                        cum += 1;
                    }
                }
                let mut runs = vec![];
                let mut k = cum;
                while k < 60 {
                    if received[k as usize] {
                        let a = k;
                        while k < 60 && received[k as usize] {
                            k += 1;
                        }
                        runs.push((a, k));
                    } else {
                        k += 1;
                    }
                }
                // A random choice of at most three runs, in random order.
                let mut blocks = vec![];
                while !runs.is_empty() && blocks.len() < 3 {
                    let j = rng.range_u64(0, runs.len() as u64) as usize;
                    blocks.push(runs.swap_remove(j));
                }
                for &(a, b) in &blocks {
                    for c in &mut covered[a as usize..b as usize] {
                        *c = true;
                    }
                }
                let before = h.s.snd_una;
                h.ack(cum, &blocks, 0);
                assert!(h.s.snd_una >= before);
                let mut sacked_bytes = 0;
                for seg in h.s.sb.iter() {
                    let n = (seg.seq / 1000) as usize;
                    assert_eq!(seg.sacked, n < 60 && covered[n], "segment {n}");
                    if seg.sacked {
                        sacked_bytes += seg.len as u64;
                    }
                }
                assert_eq!(h.s.sb.sacked_bytes(), sacked_bytes);
            }
        }
    }
}
