//! The sender's retransmission scoreboard: every outstanding segment with its `sacked`, `lost`
//! and `retrans` flags, and byte counters kept exact by every flag change, from which the
//! sender computes RFC 6675's `pipe = FlightSize - sacked - lost + retransmitted`.
//!
//! Sources: RFC 6675 §4 (`Update()`: a segment is SACKed when a block covers it whole;
//! `IsLost`: DupThresh SACKed segments above it), RFC 8985 §6.2 (RACK's `xmit_ts`, the latest
//! send time among segments known delivered, which the sender's lost-retransmission check
//! reads). Without SACK nothing is ever SACKed, and a segment is marked lost only when it is
//! retransmitted, so `pipe` equals FlightSize as RFC 6582 expects.

use std::collections::VecDeque;
use std::ops::Index;

use crate::packet::Packet;
use crate::sim::time::Time;

/// One outstanding segment: 24 bytes, so that the walks over the window (acknowledged
/// segments, SACKed ones) touch as few cache lines as they can.
#[derive(Clone, Copy, Debug)]
pub(super) struct Segment {
    pub seq: u64,
    /// When this segment was last sent.
    pub xmit_time: Time,
    pub len: u32,
    /// Reported by a SACK block (RFC 6675 "SACKed").
    pub sacked: bool,
    /// Deemed lost (RFC 6675 `IsLost`, a timeout, a loss notice, or a NewReno retransmission).
    pub lost: bool,
    /// A retransmitted copy is in flight.
    pub retrans: bool,
    /// Sent more than once: a SACK for it does not tell which copy arrived.
    pub ever_retx: bool,
}

impl Segment {
    pub fn end(&self) -> u64 {
        self.seq + self.len as u64
    }
}

/// Number of ranges (sorted, disjoint) ending at or before `x`: `partition_point(|r| r.1 <= x)`.
/// There are seldom more than a few SACKed ranges, and a scan of those is cheaper than a
/// binary search's setup; many (heavy loss) are searched.
#[inline]
fn ranges_ending_by(r: &[(u64, u64)], x: u64) -> usize {
    if r.len() > 4 {
        return r.partition_point(|q| q.1 <= x);
    }
    r.iter().take_while(|q| q.1 <= x).count()
}

/// The outstanding segments, contiguous from SND.UNA, and their flag counters.
pub(super) struct Scoreboard {
    segs: VecDeque<Segment>,
    mss: u32,
    /// Segments shorter than one MSS (the application had less to send). While there are
    /// none, segment `i` starts at `front.seq + i * MSS`, so a sequence number's index is
    /// computed instead of searched for (see [`Scoreboard::seq_count`]).
    short_segs: u32,
    /// The byte ranges SACKed so far above SND.UNA, sorted and disjoint: their segments are
    /// all marked, so a SACK block is applied by visiting only what lies outside them.
    sacked_ranges: Vec<(u64, u64)>,
    sacked_bytes: u64,
    lost_bytes: u64,
    retrans_bytes: u64,
    /// Bytes marked lost over the connection, counted again when a retransmission is found
    /// lost (Linux `tp->lost`, in bytes): only grows.
    lost_total: u64,
    /// End of the highest SACKed segment (at least SND.UNA).
    high_sacked: u64,
    /// RACK's `xmit_ts`: the latest send time among segments known delivered, from segments
    /// sent once that were SACKed or acknowledged, and from echoed timestamps.
    delivered_xmit_time: Time,
}

impl Index<usize> for Scoreboard {
    type Output = Segment;
    #[inline]
    fn index(&self, i: usize) -> &Segment {
        &self.segs[i]
    }
}

impl Scoreboard {
    pub fn new(mss: u32) -> Self {
        Scoreboard {
            segs: VecDeque::new(),
            mss,
            short_segs: 0,
            sacked_ranges: Vec::new(),
            sacked_bytes: 0,
            lost_bytes: 0,
            retrans_bytes: 0,
            lost_total: 0,
            high_sacked: 0,
            delivered_xmit_time: 0,
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.segs.len()
    }

    #[inline]
    pub fn front(&self) -> Option<&Segment> {
        self.segs.front()
    }

    #[cfg(test)]
    pub fn iter(&self) -> impl Iterator<Item = &Segment> {
        self.segs.iter()
    }

    /// Bytes SACKed, lost (not SACKed), and retransmitted copies in flight.
    #[inline]
    pub fn sacked_bytes(&self) -> u64 {
        self.sacked_bytes
    }
    #[inline]
    pub fn lost_bytes(&self) -> u64 {
        self.lost_bytes
    }
    #[inline]
    pub fn retrans_bytes(&self) -> u64 {
        self.retrans_bytes
    }
    #[inline]
    pub fn lost_total(&self) -> u64 {
        self.lost_total
    }
    #[inline]
    pub fn high_sacked(&self) -> u64 {
        self.high_sacked
    }
    #[inline]
    pub fn delivered_xmit_time(&self) -> Time {
        self.delivered_xmit_time
    }

    /// A segment sent at `xmit` is known delivered (its timestamp was echoed).
    #[inline]
    pub fn delivered_sent_at(&mut self, xmit: Time) {
        self.delivered_xmit_time = self.delivered_xmit_time.max(xmit);
    }

    /// Number of segments starting before byte `x`: `partition_point(|s| s.seq < x)`, computed
    /// while every segment is one MSS long (a division, which neither costs a binary search's
    /// ~10 probes nor touches the scoreboard's cold middle).
    #[inline]
    pub fn seq_count(&self, x: u64) -> usize {
        let i = self.uniform_count(x, u64::div_ceil);
        let i = i.unwrap_or_else(|| self.search(|s| s.seq < x));
        debug_assert_eq!(i, self.segs.partition_point(|s| s.seq < x));
        i
    }

    /// Number of segments ending at or before byte `x`: `partition_point(|s| s.end() <= x)`,
    /// computed as in [`Scoreboard::seq_count`].
    #[inline]
    pub fn end_count(&self, x: u64) -> usize {
        let i = self.uniform_count(x, |d, mss| d / mss);
        let i = i.unwrap_or_else(|| self.search(|s| s.end() <= x));
        debug_assert_eq!(i, self.segs.partition_point(|s| s.end() <= x));
        i
    }

    /// `partition_point` over the segments, out of line and marked cold: only short segments
    /// need it, and keeping it out of the callers keeps the common path as it was.
    #[cold]
    #[inline(never)]
    fn search(&self, pred: impl Fn(&Segment) -> bool) -> usize {
        self.segs.partition_point(pred)
    }

    /// While every segment is one MSS long: `divide(x - front.seq, MSS)`, at most the number
    /// of segments; `None` otherwise (or with an empty scoreboard).
    #[inline]
    fn uniform_count(&self, x: u64, divide: fn(u64, u64) -> u64) -> Option<usize> {
        let f = self.segs.front().filter(|_| self.short_segs == 0)?;
        Some(divide(x.saturating_sub(f.seq), self.mss as u64).min(self.segs.len() as u64) as usize)
    }

    /// Index of the segment starting at `seq`.
    pub fn index_of(&self, seq: u64) -> Option<usize> {
        let i = self.seq_count(seq);
        (i < self.segs.len() && self.segs[i].seq == seq).then_some(i)
    }

    /// A new segment `[seq, seq + len)` sent at `now`.
    #[inline]
    pub fn push(&mut self, seq: u64, len: u32, now: Time) {
        if len != self.mss {
            self.short_segs += 1;
        }
        self.segs.push_back(Segment {
            seq,
            len,
            sacked: false,
            lost: false,
            retrans: false,
            xmit_time: now,
            ever_retx: false,
        });
    }

    // ----- flag changes, keeping the byte counters exact -----

    pub fn mark_lost(&mut self, i: usize) {
        let s = &mut self.segs[i];
        if !s.lost && !s.sacked {
            s.lost = true;
            self.lost_bytes += s.len as u64;
            self.lost_total += s.len as u64;
        }
    }

    /// Mark segment `i` SACKed; false if it already was.
    fn mark_sacked(&mut self, i: usize) -> bool {
        let s = &mut self.segs[i];
        if s.sacked {
            return false;
        }
        s.sacked = true;
        self.sacked_bytes += s.len as u64;
        if !s.ever_retx {
            self.delivered_xmit_time = self.delivered_xmit_time.max(s.xmit_time);
        }
        if s.lost {
            self.lost_bytes -= s.len as u64;
        }
        if s.retrans {
            self.retrans_bytes -= s.len as u64;
        }
        self.high_sacked = self.high_sacked.max(s.end());
        true
    }

    /// Segment `i` is sent again at `now` (it is marked lost first): a copy is in flight.
    pub fn retransmitted(&mut self, i: usize, now: Time) -> (u64, u32) {
        self.mark_lost(i);
        let s = &mut self.segs[i];
        if !s.retrans {
            s.retrans = true;
            self.retrans_bytes += s.len as u64;
        }
        s.xmit_time = now;
        s.ever_retx = true;
        (s.seq, s.len)
    }

    /// The retransmitted copy of segment `i` is no longer in flight (known lost, or returned
    /// by a router): a loss. Returns whether there was one.
    pub fn clear_retrans(&mut self, i: usize) -> bool {
        let s = &mut self.segs[i];
        let was = s.retrans;
        if was {
            s.retrans = false;
            self.retrans_bytes -= s.len as u64;
            self.lost_total += s.len as u64;
        }
        was
    }

    /// A timeout: no retransmission is in flight any more, and everything not SACKed is lost
    /// (RFC 6675 §5.1 keeps the SACK information). Retransmissions still in flight count as
    /// lost again, as Linux's `tcp_mark_skb_lost` counts them.
    pub fn all_lost(&mut self) {
        self.lost_total += self.retrans_bytes;
        self.retrans_bytes = 0;
        let mut marked = 0;
        for s in self.segs.iter_mut() {
            s.retrans = false;
            if !s.lost && !s.sacked {
                s.lost = true;
                marked += s.len as u64;
            }
        }
        self.lost_bytes += marked;
        self.lost_total += marked;
    }

    /// Remove the segments cumulatively acknowledged by `ack`, and what is remembered of them.
    pub fn remove_acked(&mut self, ack: u64) {
        while let Some(s) = self.segs.front() {
            if s.end() > ack {
                break;
            }
            let s = self.segs.pop_front().expect("front exists");
            if s.len != self.mss {
                self.short_segs -= 1;
            }
            if !s.ever_retx {
                self.delivered_xmit_time = self.delivered_xmit_time.max(s.xmit_time);
            }
            if s.sacked {
                self.sacked_bytes -= s.len as u64;
            } else {
                if s.lost {
                    self.lost_bytes -= s.len as u64;
                }
                if s.retrans {
                    self.retrans_bytes -= s.len as u64;
                }
            }
        }
        if !self.sacked_ranges.is_empty() {
            let gone = ranges_ending_by(&self.sacked_ranges, ack);
            self.sacked_ranges.drain(..gone);
        }
        self.high_sacked = self.high_sacked.max(ack);
    }

    /// Apply the SACK blocks of `pkt` (RFC 6675 `Update()`); true if anything new was SACKed.
    /// A segment is SACKed when a block covers it whole; `on_sacked` is called with the index
    /// of every segment newly SACKed (the delivery-rate estimator counts it delivered). Blocks repeat what earlier ACKs
    /// reported, so only the parts of a block outside `sacked_ranges` are visited: the cost is
    /// the newly SACKed segments, not the size of the blocks. (Segments keep their boundaries
    /// when retransmitted, so a segment inside the remembered ranges was inside one block.)
    /// Only what was sent, below `snd_nxt`, is remembered.
    pub fn update_sack(&mut self, pkt: &Packet, snd_nxt: u64, mut on_sacked: impl FnMut(usize, &Segment)) -> bool {
        let before = self.sacked_bytes;
        for b in &pkt.sack[..pkt.sack_len as usize] {
            let (start, end) = (pkt.ack + b.start as u64, pkt.ack + b.end as u64);
            if end <= start {
                continue;
            }
            let mut lo = start;
            let mut k = ranges_ending_by(&self.sacked_ranges, lo);
            if self.sacked_ranges.get(k).is_some_and(|&(rs, re)| rs <= start && re >= end) {
                // Inside one remembered range (most blocks repeat an earlier ACK's): nothing
                // to mark, and remembering it again would change nothing.
                continue;
            }
            while lo < end {
                let gap_end = match self.sacked_ranges.get(k) {
                    Some(&(rs, re)) if rs <= lo => {
                        lo = re;
                        k += 1;
                        continue;
                    }
                    Some(&(rs, _)) => rs.min(end),
                    None => end,
                };
                // Segments overlapping the uncovered part [lo, gap_end) of the block.
                let mut i = self.end_count(lo);
                while i < self.segs.len() && self.segs[i].seq < gap_end {
                    let s = &self.segs[i];
                    if s.seq >= start && s.end() <= end && self.mark_sacked(i) {
                        on_sacked(i, &self.segs[i]);
                    }
                    i += 1;
                }
                lo = gap_end;
            }
            // A (malformed) block beyond SND.NXT must not hide segments sent later from the
            // blocks that will cover them.
            self.remember_sacked(start, end.min(snd_nxt));
        }
        self.sacked_bytes > before
    }

    /// Add `[start, end)` to `sacked_ranges`, merging with overlapping or touching ranges.
    fn remember_sacked(&mut self, start: u64, end: u64) {
        if end <= start {
            return;
        }
        let r = &mut self.sacked_ranges;
        let i = ranges_ending_by(r, start.saturating_sub(1));
        let mut j = i;
        let (mut s, mut e) = (start, end);
        while j < r.len() && r[j].0 <= end {
            s = s.min(r[j].0);
            e = e.max(r[j].1);
            j += 1;
        }
        if j == i {
            r.insert(i, (s, e));
        } else {
            r[i] = (s, e);
            r.drain(i + 1..j);
        }
    }

    /// RFC 6675 `IsLost`: a segment is lost once `dupthresh` SACKed segments lie above it.
    /// Marking is monotone, so only segments between the previous `frontier` and the new one
    /// are visited; `frontier` moves up to the new one.
    pub fn mark_sack_losses(&mut self, dupthresh: u32, frontier: &mut u64) {
        // Walk down from the highest SACKed segment to the DupThresh-th SACKed one.
        let mut i = self.end_count(self.high_sacked.saturating_sub(1));
        let mut seen = 0;
        let new = loop {
            if i >= self.segs.len() {
                return;
            }
            if self.segs[i].sacked {
                seen += 1;
                if seen >= dupthresh {
                    break self.segs[i].seq;
                }
            }
            if i == 0 {
                return;
            }
            i -= 1;
        };
        if new <= *frontier {
            return;
        }
        let j = self.seq_count(*frontier);
        let mut marked = 0;
        for s in self.segs.range_mut(j..) {
            if s.seq >= new {
                break;
            }
            if !s.lost && !s.sacked {
                s.lost = true;
                marked += s.len as u64;
            }
        }
        self.lost_bytes += marked;
        self.lost_total += marked;
        *frontier = new;
    }
}
