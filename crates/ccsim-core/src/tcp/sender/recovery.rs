//! Loss recovery of the TCP sender: SACK loss marking (RFC 6675 `IsLost`), lost
//! retransmissions (RFC 8985 §6.2 applied to retransmissions, RFC 5681 §4.3), `NextSeg`,
//! fast-recovery entry and exit (RFC 5681 §3.2, RFC 6582, RFC 6675 §5), the ECN-Echo
//! reduction (RFC 3168 §6.1.2) and the retransmission timeout (RFC 6298 §5.4-5.6, RFC 6675
//! §5.1). The sources and departures are listed in the module header (`mod.rs`).

use super::{Recovery, TcpSender};
use crate::endpoint::Cx;
use crate::sim::time::Time;
use crate::tcp::cc::Congestion;

impl TcpSender {
    /// RFC 6675 `IsLost` over the scoreboard, once anything above SND.UNA is SACKed.
    pub(super) fn mark_sack_losses(&mut self) {
        if self.sb.high_sacked() > self.snd_una {
            self.sb.mark_sack_losses(self.cfg.dupthresh, &mut self.lost_frontier);
        }
    }

    /// A retransmission is lost once data sent more than a reordering window after it has
    /// been delivered (RACK, RFC 8985 §6.2, applied to retransmissions): it may be sent again.
    /// Returns true if one of them was sent at or after the last window reduction (the
    /// retransmission that starts a recovery goes out with the reduced window).
    pub(super) fn mark_lost_retransmissions(&mut self) -> bool {
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
    pub(super) fn reduce_on_lost_retransmission(&mut self, cx: &mut Cx) {
        self.sync_state(cx.now);
        self.st.flight_size = self.pipe();
        self.st.ssthresh = self.cc.ssthresh(&self.st, Congestion::Loss);
        if !self.owns_window() {
            self.st.cwnd = self.st.ssthresh;
        }
        self.recovery = Recovery::Fast;
        self.recover = self.snd_nxt;
        self.partial_acked = false;
        self.ecn_recover = self.snd_nxt;
        self.reduced_at = cx.now;
        cx.stats.count(cx.now, |s| &mut s.fast_recoveries);
        self.sync_state(cx.now);
    }

    /// Retransmit the segment at index `i` regardless of the window.
    pub(super) fn retransmit(&mut self, i: usize, cx: &mut Cx) {
        if self.sb.retrans_bytes() == 0 {
            // No retransmission is outstanding: every remembered one is stale.
            self.retx_order.clear();
        }
        self.retx_order.push_back((self.sb[i].seq, cx.now));
        if let Some(r) = &mut self.rate {
            r.resent(&self.sb, i);
        }
        let (seq, len) = self.sb.retransmitted(i, cx.now);
        self.emit(seq, len, true, cx);
    }

    /// RFC 6675 `NextSeg` rule 1: the first lost, un-SACKed segment not yet retransmitted.
    /// Segments held by a backoff are skipped; the hint may pass them, and
    /// [`TcpSender::release_holds`] moves it back when their hold ends.
    pub(super) fn next_lost(&mut self, now: Time) -> Option<usize> {
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

    /// RFC 5681 §3.2 / RFC 6675 §5: enter fast recovery on the DupThresh-th dupACK or when
    /// SACK says the first outstanding segment is lost; RFC 6582 §4: not before `recover`
    /// has been acknowledged.
    pub(super) fn maybe_enter_fast_recovery(&mut self, cx: &mut Cx) {
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
        if !self.owns_window() {
            self.st.cwnd = if self.cfg.sack {
                self.st.ssthresh // RFC 6675 §5 step 4.2
            } else {
                self.st.ssthresh + 3 * self.cfg.mss as u64 // RFC 5681 §3.2 step 3
            };
        }
        self.sync_state(cx.now);
    }

    /// Enter fast recovery: new ssthresh, recovery point at SND.NXT (the caller sets the
    /// window, unless the congestion control owns it).
    pub(super) fn start_fast_recovery(&mut self, cx: &mut Cx) {
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

    pub(super) fn exit_recovery(&mut self, now: Time) {
        self.recovery = Recovery::Open;
        self.sync_state(now);
        self.cc.on_recovery_exit(&mut self.st);
        self.check_cwnd(now, "cc.on_recovery_exit");
    }

    /// RFC 3168 §6.1.2: halve like a fast retransmit, without retransmitting, once per window.
    pub(super) fn reduce_on_ecn(&mut self, cx: &mut Cx) {
        self.sync_state(cx.now);
        self.st.ssthresh = self.cc.ssthresh(&self.st, Congestion::Ecn);
        if !self.owns_window() {
            self.st.cwnd = self.st.ssthresh.max(self.cfg.mss as u64);
        }
        self.ecn_recover = self.snd_nxt;
        self.reduced_at = cx.now;
        // Accurate ECN has no CWR signal: the flag belongs to the ACE field.
        self.cwr_pending = self.cfg.ecn_feedback != super::super::EcnFeedback::Accurate;
        cx.stats.count(cx.now, |s| &mut s.ecn_reductions);
    }

    /// RFC 6298 §5.4-5.6, RFC 5681 §3.1 and RFC 6675 §5.1.
    pub(super) fn on_rto(&mut self, cx: &mut Cx) {
        let now = cx.now;
        if self.snd_una == self.snd_nxt {
            // No data outstanding: the timer of a SYN or a FIN, if any (`connection.rs`).
            if !self.connection_timeout(cx) {
                self.rto_deadline = None;
            }
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
}

#[cfg(test)]
mod tests {
    //! Hand-computed traces of loss recovery: fast retransmit, NewReno and Reno partial ACKs,
    //! SACK recovery, lost retransmissions, timeouts and ECN-Echo.
    use super::super::testkit::*;
    use super::super::*;

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
