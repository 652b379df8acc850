//! Delivery-rate estimation, for congestion controls that own their window (BBR): the
//! per-connection and per-transmission state of draft-cheng-iccrg-delivery-rate-estimation-02
//! §3 and Linux `net/ipv4/tcp_rate.c`, in bytes, and the sender's side of Linux's
//! `cong_control` hook (a [`RateSample`] after every ACK). Sources and departures are listed
//! in the module header (`mod.rs`).
//!
//! Only a sender whose congestion control owns its window has a [`RateSampler`], whose
//! per-segment state is a queue aligned with the scoreboard's segments (which stay 24
//! bytes). Every other sender keeps `None` and pays a few untaken branches per ACK and none
//! per new segment: a new segment's snapshot is taken lazily, before the connection state
//! next changes ([`RateSampler::catch_up`]), and the hooks are out of line.

use std::collections::VecDeque;

use super::{Recovery, TcpSender};
use crate::endpoint::Cx;
use crate::packet::Packet;
use crate::sim::time::Time;
use crate::tcp::cc::{Ack, CaState, RateSample};
use crate::tcp::scoreboard::{Scoreboard, Segment};

/// What the sender remembers of the latest transmission of one outstanding segment (the
/// draft's per-packet state; the send time and whether it was retransmitted are in the
/// scoreboard's [`Segment`]).
#[derive(Clone, Copy, Debug)]
struct TxRate {
    /// `C.delivered` when it was sent (`P.delivered`).
    delivered: u64,
    /// `C.delivered_time` when it was sent (`P.delivered_time`).
    delivered_time: Time,
    /// `C.first_sent_time` when it was sent (`P.first_sent_time`).
    first_sent_time: Time,
    /// Sent while the connection was marked application-limited (`P.is_app_limited`).
    app_limited: bool,
    /// Already counted delivered, by a SACK (the draft's `P.delivered_time = 0`).
    counted: bool,
}

/// The newly delivered transmission a sample is taken from.
#[derive(Clone, Copy, Debug)]
struct Newest {
    tx: TxRate,
    sent: Time,
    seq: u64,
    retransmitted: bool,
}

/// The state of the delivery-rate estimator (draft §3.1, in bytes).
#[derive(Debug, Default)]
pub(super) struct RateSampler {
    /// One entry per scoreboard segment, in the same order.
    tx: VecDeque<TxRate>,
    /// Bytes delivered, cumulatively acknowledged or SACKed (`C.delivered`).
    pub(super) delivered: u64,
    /// When `delivered` last grew (`C.delivered_time`, Linux `delivered_mstamp`).
    delivered_time: Time,
    /// Send time of the transmission the last sample was taken from (`C.first_sent_time`,
    /// Linux `first_tx_mstamp`).
    first_sent_time: Time,
    /// 0, or the value of `delivered` past which the connection is no longer
    /// application-limited (`C.app_limited`).
    pub(super) app_limited: u64,
    /// Smallest `rs.rtt` so far.
    min_rtt: Option<Time>,
    /// The sample of the ACK being processed: the transmission it is taken from so far.
    newest: Option<Newest>,
    /// At the start of the ACK being processed: `delivered`, the scoreboard's `lost_total`
    /// and `pipe`.
    ack_start: (u64, u64, u64),
    /// The ACK being processed is older than SND.UNA.
    old_ack: bool,
}

impl RateSampler {
    /// The per-transmission snapshot (draft §3.2, `tcp_rate_skb_sent`).
    fn snapshot(&self) -> TxRate {
        TxRate {
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            app_limited: self.app_limited != 0,
            counted: false,
        }
    }

    /// The segments sent new since the last call, at the end of the scoreboard, get their
    /// snapshot (draft §3.2, `tcp_rate_skb_sent`). It is taken lazily, before anything that
    /// changes the connection state (an ACK, a retransmission, an application write), so
    /// that transmitting costs nothing: the state is then still the one they were sent with.
    /// If nothing was outstanding when the first of them left (Linux `packets_out == 0`, not
    /// `pipe`, so that loss marking cannot shorten the interval), the sample starts at its
    /// send time.
    pub(super) fn catch_up(&mut self, sb: &Scoreboard) {
        let k = self.tx.len();
        if sb.len() == k {
            return;
        }
        if k == 0 {
            self.first_sent_time = sb[0].xmit_time;
            self.delivered_time = sb[0].xmit_time;
        }
        let tx = self.snapshot();
        self.tx.resize(sb.len(), tx);
    }

    /// Segment `i` is retransmitted: its snapshot is taken again.
    #[inline(never)]
    pub(super) fn resent(&mut self, sb: &Scoreboard, i: usize) {
        self.catch_up(sb);
        let counted = self.tx[i].counted;
        self.tx[i] = TxRate { counted, ..self.snapshot() };
    }

    /// Segment `i`, `s`, is delivered (SACKed or cumulatively acknowledged) at `now`: draft
    /// §3.3 `UpdateRateSample`, once per segment. The sample comes from the transmission with
    /// the highest `P.delivered`, ties going to the latest sent (then the highest sequence
    /// number), so the order in which an ACK's segments are visited does not matter.
    /// The connection state is complete once the last segment is counted, before anything
    /// this ACK makes the sender retransmit (as in Linux, where `tcp_rate_gen` runs before
    /// `tcp_xmit_recovery`): the application-limited mark is cleared here rather than in
    /// `GenerateRateSample`.
    fn deliver(&mut self, i: usize, s: &Segment, now: Time) {
        let tx = &mut self.tx[i];
        if tx.counted {
            return;
        }
        tx.counted = true;
        let tx = *tx;
        self.delivered += s.len as u64;
        self.delivered_time = now;
        // Draft §3.4: the bubble is gone once everything in flight when it was marked is.
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        let newer = self.newest.is_none_or(|n| (tx.delivered, s.xmit_time, s.seq) > (n.tx.delivered, n.sent, n.seq));
        if newer {
            self.newest = Some(Newest { tx, sent: s.xmit_time, seq: s.seq, retransmitted: s.ever_retx });
            self.first_sent_time = s.xmit_time;
        }
    }

    /// The segments below `ack` are cumulatively acknowledged: those not SACKed before are
    /// delivered, and all leave (call before the scoreboard removes them).
    #[inline(never)]
    pub(super) fn acked(&mut self, sb: &Scoreboard, ack: u64, now: Time) {
        debug_assert_eq!(self.tx.len(), sb.len());
        let n = sb.end_count(ack);
        for i in 0..n {
            self.deliver(i, &sb[i], now);
        }
        self.tx.drain(..n);
    }

    /// An ACK arrives (`old`: below SND.UNA): remember what its sample is measured against.
    fn begin_ack(&mut self, sb: &Scoreboard, pipe: u64, old: bool) {
        self.catch_up(sb);
        self.ack_start = (self.delivered, sb.lost_total(), pipe);
        self.old_ack = old;
    }

    /// The sample of the ACK just processed (draft §3.3 `GenerateRateSample`, Linux
    /// `tcp_rate_gen`). `ts_min_rtt`: the smallest RTT from timestamps; the interval is
    /// checked against the smaller of it and the smallest `rs.rtt`.
    pub(super) fn generate(&mut self, now: Time, ts_min_rtt: Option<Time>, lost_total: u64) -> RateSample {
        let (delivered_before, lost_before, prior_in_flight) = self.ack_start;
        let mut rs = RateSample {
            newly_acked: self.delivered - delivered_before,
            newly_lost: lost_total - lost_before,
            prior_in_flight,
            ..RateSample::default()
        };
        let Some(p) = self.newest.take() else { return rs }; // nothing delivered
        rs.prior_delivered = p.tx.delivered;
        rs.delivered = self.delivered - p.tx.delivered;
        rs.is_app_limited = p.tx.app_limited;
        rs.rtt = (!p.retransmitted).then(|| now.saturating_sub(p.sent));
        if let Some(r) = rs.rtt {
            self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        }
        // The longer of the send and ACK phases (ACK compression shortens the latter).
        let send_elapsed = p.sent.saturating_sub(p.tx.first_sent_time);
        let ack_elapsed = self.delivered_time.saturating_sub(p.tx.delivered_time);
        let interval = send_elapsed.max(ack_elapsed);
        let min_rtt = match (ts_min_rtt, self.min_rtt) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b).unwrap_or(0),
        };
        if interval == 0 || interval < min_rtt {
            return rs; // not a reliable sample
        }
        rs.interval = interval;
        rs.delivery_rate = rs.delivered as f64 * 1e9 / interval as f64;
        rs
    }
}

impl TcpSender {
    /// True if the congestion control owns the window (module header).
    #[inline(always)]
    pub(super) fn owns_window(&self) -> bool {
        self.rate.is_some()
    }

    /// The part of [`CcState`](crate::tcp::cc::CcState) kept only for an algorithm that owns
    /// its window: `delivered`, `lost` and `ca_state` (out of line: `sync_state` is hot).
    #[inline(never)]
    pub(super) fn sync_owned_state(&mut self) {
        self.st.delivered = self.rate.as_ref().map_or(0, |r| r.delivered);
        self.st.lost = self.sb.lost_total();
        self.st.ca_state = match self.recovery {
            Recovery::Open => CaState::Open,
            Recovery::Fast => CaState::Recovery,
            Recovery::Timeout => CaState::Loss,
        };
    }

    /// An ACK arrives: the rate state before it (out of line, as every owns-window hook, to
    /// keep the ACK path of the other algorithms as it was).
    #[inline(never)]
    pub(super) fn rate_begin_ack(&mut self, pkt: &Packet) {
        let (pipe, old) = (self.pipe(), pkt.ack < self.snd_una);
        if let Some(r) = self.rate.as_deref_mut() {
            r.begin_ack(&self.sb, pipe, old);
        }
    }

    /// SACK processing: the newly SACKed segments are delivered.
    #[inline(always)]
    pub(super) fn update_sack(&mut self, pkt: &Packet, now: Time) -> bool {
        if self.owns_window() {
            return self.update_sack_delivered(pkt, now);
        }
        self.sb.update_sack(pkt, self.snd_nxt, |_, _| {})
    }

    #[inline(never)]
    fn update_sack_delivered(&mut self, pkt: &Packet, now: Time) -> bool {
        let r = self.rate.as_deref_mut().expect("owns the window");
        self.sb.update_sack(pkt, self.snd_nxt, |i, s| r.deliver(i, s, now))
    }

    /// An application write: the mark of [`TcpSender::app_limited_mark`] takes effect.
    #[inline(never)]
    pub(super) fn set_app_limited(&mut self, mark: u64) {
        if let Some(r) = self.rate.as_deref_mut() {
            r.catch_up(&self.sb);
            r.app_limited = mark;
        }
    }

    /// Draft §3.4, Linux `tcp_rate_check_app_limited`, checked when the application writes
    /// (as Linux's `tcp_sendmsg` does), on the state before the write: less than one segment
    /// unsent, `pipe` below cwnd and every lost segment retransmitted. Returns the mark to
    /// set, `max(C.delivered + pipe, 1)`.
    pub(super) fn app_limited_mark(&self) -> Option<u64> {
        let r = self.rate.as_deref()?;
        let pipe = self.pipe();
        let limited = self.app_end.saturating_sub(self.snd_nxt) < self.cfg.mss as u64
            && pipe < self.st.cwnd
            && self.sb.lost_bytes() <= self.sb.retrans_bytes();
        limited.then(|| (r.delivered + pipe).max(1))
    }

    /// The end of an ACK's processing for a congestion control that owns its window: the
    /// rate sample, then `cong_control` (the caller sends what the window allows after).
    /// An ACK older than SND.UNA gets no call, as in Linux (`tcp_ack`'s `old_ack`).
    #[inline(never)]
    pub(super) fn rate_sample_ack(&mut self, info: &Ack, cx: &mut Cx) {
        let lost_total = self.sb.lost_total();
        let Some(r) = self.rate.as_deref_mut() else { return };
        let rs = r.generate(cx.now, self.rtt.min_rtt, lost_total);
        if r.old_ack {
            return;
        }
        self.sync_state(cx.now);
        self.cc.on_rate_sample(&mut self.st, info, &rs);
        self.check_cwnd(cx.now, "cc.on_rate_sample");
    }
}

#[cfg(test)]
mod tests {
    //! Hand-computed delivery-rate samples (draft §3 pseudocode), and the owns-window mode.
    use std::sync::{Arc, Mutex};

    use super::super::testkit::*;
    use super::*;

    type Log = Arc<Mutex<Vec<(RateSample, CcState)>>>;

    /// Owns its window: records every sample and the state it came with; with `cwnd`, holds
    /// the window there after every sample, otherwise never touches it.
    struct Owner {
        log: Log,
        cwnd: Option<u64>,
    }
    impl CongestionControl for Owner {
        fn name(&self) -> &'static str {
            "owner"
        }
        fn on_ack(&mut self, _: &mut CcState, _: &Ack) {}
        fn owns_window(&self) -> bool {
            true
        }
        fn on_rate_sample(&mut self, st: &mut CcState, _: &Ack, rs: &RateSample) {
            self.log.lock().unwrap().push((*rs, st.clone()));
            if let Some(c) = self.cwnd {
                st.cwnd = c;
            }
        }
    }

    fn owner(init_cwnd: u64, sack: bool, cwnd: Option<u64>) -> (Harness, Log) {
        let log = Log::default();
        (Harness::with_cc(init_cwnd, sack, Box::new(Owner { log: log.clone(), cwnd })), log)
    }

    fn last(log: &Log) -> (RateSample, CcState) {
        log.lock().unwrap().last().cloned().expect("a sample")
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn samples_follow_the_draft_by_hand() {
        // IW 4, window never changed. At 0 ms segments 0..3 leave with nothing outstanding
        // before: C.first_sent_time = C.delivered_time = 0, and each snapshot is P.delivered 0,
        // P.delivered_time 0, P.first_sent_time 0.
        let (mut h, log) = owner(4, true, None);
        assert_eq!(h.send(), vec![0, 1, 2, 3]);
        let ms = |t: u64| t * MS;
        // (ACK time, cumulative ACK in segments, echoed timestamp, sent in reply,
        //  rs.delivered, rs.interval, rs.rtt, prior_in_flight)
        let steps = [
            // 100 ms, segment 0: C.delivered 1000; send_elapsed = 0 - 0, ack_elapsed = 100 - 0:
            // interval 100 ms (= min RTT: valid), 1000 B / 0.1 s. Segment 4 leaves with
            // P.delivered 1000, P.delivered_time 100 ms, P.first_sent_time 0 (segment 0's).
            (100, 1, 0, 4, 1000, 100, 100, 4000),
            // 110 ms, segment 1 (P.delivered 0): delivered 2000 - 0 over max(0, 110 - 0).
            (110, 2, 0, 5, 2000, 110, 110, 4000),
            (120, 3, 0, 6, 3000, 120, 120, 4000),
            (130, 4, 0, 7, 4000, 130, 130, 4000),
            // 200 ms, segment 4: 5000 - 1000 over max(send 100 - 0, ACK 200 - 100): a window
            // (4000 B) per round trip (100 ms).
            (200, 5, 100, 8, 4000, 100, 100, 4000),
        ];
        for (k, &(t, ack, echo, sent, delivered, interval, rtt, prior)) in steps.iter().enumerate() {
            h.now = ms(t);
            assert_eq!(h.ack(ack, &[], ms(echo)), vec![sent], "{t} ms");
            let (rs, st) = last(&log);
            assert_eq!(log.lock().unwrap().len(), k + 1);
            assert_eq!(
                (rs.delivered, rs.interval, rs.rtt, rs.prior_in_flight),
                (delivered, ms(interval), Some(ms(rtt)), prior),
                "{t} ms"
            );
            assert!(close(rs.delivery_rate, delivered as f64 / (interval as f64 / 1e3)), "{t} ms: {rs:?}");
            assert_eq!((rs.newly_acked, rs.newly_lost, rs.is_app_limited), (1000, 0, false));
            assert_eq!((st.delivered, st.lost, st.ca_state, st.cwnd), (ack * 1000, 0, CaState::Open, 4000));
        }
        // 10 000, 18 181.8, 25 000, 30 769.2, then 40 000 B/s.
        let rates: Vec<u64> = log.lock().unwrap().iter().map(|(rs, _)| rs.delivery_rate.round() as u64).collect();
        assert_eq!(rates, vec![10_000, 18_182, 25_000, 30_769, 40_000]);
        assert_eq!(last(&log).0.prior_delivered, 1000);
    }

    #[test]
    fn a_sacked_segment_is_delivered_once() {
        // IW 4, window never changed; segment 0 is lost. By hand (draft §3.3):
        let (mut h, log) = owner(4, true, None);
        h.send();
        // 100 ms, SACK of 1: C.delivered 1000 over max(0, 100 - 0); pipe 3 segments: 4 leaves
        // (P.delivered 1000, P.delivered_time 100 ms, P.first_sent_time 0).
        h.now = 100 * MS;
        assert_eq!(h.ack(0, &[(1, 2)], 0), vec![4]);
        // 110 ms, SACK of 1..2: only 2 is new. 5 leaves (2000, 110 ms, 0).
        h.now = 110 * MS;
        assert_eq!(h.ack(0, &[(1, 3)], 0), vec![5]);
        let (rs, _) = last(&log);
        assert_eq!((rs.newly_acked, rs.delivered, rs.interval, rs.prior_in_flight), (1000, 2000, 110 * MS, 4000));
        // 120 ms, SACK of 1..3: 3 is new; three SACKed segments above 0 mark it lost
        // (newly_lost 1000) and start fast recovery. Before this ACK pipe was
        // 6 outstanding - 2 SACKed = 4 segments. 0 is retransmitted (P.delivered 3000,
        // P.delivered_time 120 ms, P.first_sent_time 0) and, pipe being 3, 6 leaves too.
        h.now = 120 * MS;
        assert_eq!(h.ack(0, &[(1, 4)], 0), vec![0, 6]);
        let (rs, st) = last(&log);
        assert_eq!((rs.newly_acked, rs.newly_lost, rs.delivered, rs.prior_in_flight), (1000, 1000, 3000, 4000));
        assert_eq!((st.delivered, st.lost, st.ca_state, st.cwnd), (3000, 1000, CaState::Recovery, 4000));
        // 220 ms: the retransmission fills the hole, ACK 6 (the SACKs for 4 and 5 were lost).
        // Newly delivered: 0, 4 and 5, not 1..3 again: 3000 bytes, C.delivered 6000. The
        // sample comes from the highest P.delivered, 0's retransmission (3000): delivered
        // 6000 - 3000 over max(send 120 - 0, ACK 220 - 120) = 120 ms; no RTT (retransmitted).
        h.now = 220 * MS;
        h.ack(6, &[], 120 * MS);
        let (rs, st) = last(&log);
        assert_eq!(
            (rs.newly_acked, rs.prior_delivered, rs.delivered, rs.interval, rs.rtt),
            (3000, 3000, 3000, 120 * MS, None)
        );
        assert!(close(rs.delivery_rate, 25_000.0));
        assert_eq!((st.delivered, st.lost, st.ca_state), (6000, 1000, CaState::Open));
    }

    #[test]
    fn a_lost_retransmission_counts_as_lost_again() {
        // cwnd 10 (never changed by the algorithm), 0 lost. At 10 ms the SACKs for 1..3 let
        // 10 and 11 out, mark 0 lost (newly_lost 1000) and retransmit it, with 12.
        let (mut h, log) = owner(10, true, None);
        h.send();
        h.now = 10 * MS;
        let sent: Vec<_> = (2..=4).flat_map(|k| h.ack(0, &[(1, k)], 0)).collect();
        assert_eq!(sent, vec![10, 11, 0, 12]);
        assert_eq!((last(&log).0.newly_lost, h.s.st.lost), (1000, 1000));
        // 30 ms: the SACKs for 4..9 let 13..18 out; 60 ms: a SACK for 10..13, sent at 10 and
        // 30 ms, while 0 is still missing: its retransmission (10 ms) was lost too. It counts
        // again, the second reduction only sets ssthresh, and 0 leaves a third time.
        h.now = 30 * MS;
        let sent: Vec<_> = (5..=10).flat_map(|k| h.ack(0, &[(1, k)], 0)).collect();
        assert_eq!(sent, (13..=18).collect::<Vec<_>>());
        h.now = 60 * MS;
        assert_eq!(h.ack(0, &[(1, 14)], 0).first(), Some(&0));
        let (rs, st) = last(&log);
        assert_eq!((rs.newly_lost, st.lost, st.cwnd, h.stats.fast_recoveries), (1000, 2000, 10_000, 2));
    }

    /// Writes `bytes` at each given time.
    struct Writes(VecDeque<(Time, u64)>);
    impl Application for Writes {
        fn next_wakeup(&self) -> Option<Time> {
            self.0.front().map(|w| w.0)
        }
        fn on_wakeup(&mut self, now: Time, sock: &mut dyn Socket, _: &mut FlowStats) {
            while self.0.front().is_some_and(|w| w.0 <= now) {
                sock.write(self.0.pop_front().unwrap().1);
            }
        }
    }

    #[test]
    fn samples_are_app_limited_until_the_bubble_is_delivered() {
        let log = Log::default();
        let writes = Writes([(0, 3000), (105 * MS, 20_000)].into());
        let cc = Box::new(Owner { log: log.clone(), cwnd: None });
        let mut h = Harness::with_app(10, true, cc, Box::new(writes));
        // 0 ms: the application writes 3 segments with nothing unsent and pipe 0 < cwnd 10:
        // C.app_limited = max(0 + 0, 1) = 1, and 0..2 leave marked.
        assert_eq!(h.wake(0), vec![0, 1, 2]);
        let mark = |h: &Harness| h.s.rate.as_ref().unwrap().app_limited;
        assert_eq!(mark(&h), 1);
        // 100 ms: ACK of 0, C.delivered 1000 > 1: the mark is cleared; 0's sample is limited.
        h.now = 100 * MS;
        assert!(h.ack(1, &[], 0).is_empty());
        assert_eq!(mark(&h), 0);
        // 105 ms: 20 more segments, written with 1 and 2 (2000 B) in flight: C.app_limited =
        // 1000 + 2000 = 3000. cwnd 10 lets 3..10 out, all marked.
        assert_eq!(h.wake(105 * MS), (3..=10).collect::<Vec<_>>());
        assert_eq!(mark(&h), 3000);
        // 110 and 120 ms: ACKs of 1 and 2, C.delivered 2000 then 3000, not past the mark:
        // 11 and 12 leave marked.
        h.now = 110 * MS;
        assert_eq!(h.ack(2, &[], 0), vec![11]);
        h.now = 120 * MS;
        assert_eq!(h.ack(3, &[], 0), vec![12]);
        assert_eq!(mark(&h), 3000);
        // 205 ms: ACK of 3, C.delivered 4000 > 3000: cleared, and 13 leaves unmarked.
        h.now = 205 * MS;
        assert_eq!(h.ack(4, &[], 0), vec![13]);
        assert_eq!(mark(&h), 0);
        // 215 ms: ACK of 4..12, sent marked; 310 ms: ACK of 13, the first sample that is not.
        h.now = 215 * MS;
        h.ack(13, &[], 0);
        h.now = 310 * MS;
        h.ack(14, &[], 0);
        let limited: Vec<bool> = log.lock().unwrap().iter().map(|(rs, _)| rs.is_app_limited).collect();
        assert_eq!(limited, vec![true, true, true, true, true, false]);
        // A backlogged sender is never application-limited.
        let (mut h, log) = owner(4, true, None);
        h.send();
        h.now = 100 * MS;
        h.ack(1, &[], 0);
        assert_eq!(h.s.rate.as_ref().unwrap().app_limited, 0);
        assert!(!last(&log).0.is_app_limited);
    }

    #[test]
    fn an_interval_shorter_than_the_min_rtt_is_no_sample() {
        // A spurious timeout: the path stalls after the first ACK (100 ms, min RTT 100 ms)
        // and the originals arrive just after the retransmissions. IW 4, window never
        // changed by the algorithm.
        let (mut h, log) = owner(4, true, None);
        h.send();
        h.now = 100 * MS;
        assert_eq!(h.ack(1, &[], 0), vec![4]);
        // The RTO (T = 100 ms + 1 s) resends 1 with the loss window: P.delivered 1000,
        // P.delivered_time 100 ms, P.first_sent_time 0 (segment 0's send time).
        let t = h.s.rto_deadline.unwrap();
        assert_eq!(t, 1100 * MS);
        assert_eq!(h.fire_rto(), vec![1]);
        assert_eq!(h.s.st.ca_state, CaState::Loss);
        // T + 1 ms, the original 1: delivered 2000 - 1000 over max(send T - 0, ACK T + 1 -
        // 100 ms) = T: valid, no RTT. C.first_sent_time = T. 2 is resent (P.delivered 2000,
        // P.delivered_time T + 1, P.first_sent_time T).
        h.now = t + MS;
        assert_eq!(h.ack(2, &[], 0), vec![2]);
        let (rs, st) = last(&log);
        assert_eq!((rs.delivered, rs.interval, rs.rtt, st.ca_state), (1000, t, None, CaState::Loss));
        // The four segments outstanding at the timeout were marked lost.
        assert_eq!((rs.newly_lost, st.lost), (0, 4000));
        // T + 2 ms, the original 2: delivered 1000 over max(send 1 ms, ACK 1 ms) = 1 ms, below
        // the min RTT: no sample.
        h.now = t + 2 * MS;
        h.ack(3, &[], 0);
        let (rs, _) = last(&log);
        assert_eq!((rs.prior_delivered, rs.delivered, rs.interval, rs.delivery_rate), (2000, 1000, 0, 0.0));
        assert_eq!(rs.newly_acked, 1000);
        // Everything outstanding at the timeout acknowledged: Open again.
        h.now = t + 3 * MS;
        h.ack(5, &[], 0);
        assert_eq!(last(&log).1.ca_state, CaState::Open);
    }

    #[test]
    fn an_algorithm_that_owns_its_window_keeps_it_through_recovery() {
        for sack in [true, false] {
            // cwnd 10, 0 lost; the algorithm never changes the window.
            let (mut h, log) = owner(10, sack, None);
            h.send();
            for k in 2..=4 {
                let blocks: &[(u64, u64)] = if sack { &[(1, k)] } else { &[] };
                h.ack(0, blocks, 0);
            }
            // The first two ACKs let 10 and 11 out (SACKed bytes leave pipe; limited transmit
            // without SACK). The third: fast retransmit, ssthresh = FlightSize / 2 = 12 / 2 = 6
            // segments, and no cwnd = ssthresh (+ 3 MSS) nor per-dupACK inflation after.
            assert_eq!(h.stats.retransmissions, 1, "sack {sack}");
            assert_eq!((h.s.st.ssthresh, h.s.st.cwnd, h.s.st.ca_state), (6000, 10_000, CaState::Recovery));
            for _ in 5..=9 {
                let blocks: &[(u64, u64)] = if sack { &[(1, 10)] } else { &[] };
                h.ack(0, blocks, 0);
            }
            assert_eq!(h.s.st.cwnd, 10_000, "sack {sack}");
            // The retransmission arrives: no deflation at the exit.
            let top = h.s.snd_nxt / 1000;
            h.ack(top, &[], 0);
            assert_eq!((h.s.st.cwnd, h.s.st.ca_state), (10_000, CaState::Open), "sack {sack}");
            let states: Vec<CaState> = log.lock().unwrap().iter().map(|(_, st)| st.ca_state).collect();
            let mut seen = states.clone();
            seen.dedup();
            assert_eq!(seen, vec![CaState::Open, CaState::Recovery, CaState::Open], "sack {sack}");
            assert_eq!(states.len(), 9, "a sample on every ACK, duplicates included");
            // A timeout sets the loss window, as for any algorithm.
            h.send();
            h.fire_rto();
            assert_eq!((h.s.st.cwnd, h.s.st.ca_state), (1000, CaState::Loss), "sack {sack}");
        }
    }

    #[test]
    fn other_algorithms_have_no_rate_state() {
        let mut h = Harness::new(4, true);
        h.send();
        h.ack(1, &[(2, 3)], 0);
        assert!(h.s.rate.is_none());
        assert_eq!((h.s.st.delivered, h.s.st.ca_state), (0, CaState::Open));
    }
}
