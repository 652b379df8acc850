//! Application messages: every write of an application is a message, and the flow's ledger
//! matches what the sender wrote with what the receiving application got, so that message
//! delays, losses and completions are measured end to end, whatever the transport.
//!
//! A byte-stream transport (TCP) completes a message when its last byte is delivered in
//! order; a datagram transport (UDP, DCCP) completes the message a datagram carries, and a
//! datagram's message is lost when the network drops the datagram (the engine reports it:
//! datagrams are never retransmitted) and, since a path is FIFO, when a later datagram
//! arrives first. Messages complete in the order written, so a message lost behind one still
//! in flight is reported when that one completes. A transfer is one message, so its
//! completion time is the flow completion time; a bulk flow's single unlimited message never
//! completes.

use std::collections::VecDeque;

use crate::sim::time::Time;

/// A message delivered or found lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MessageEvent {
    /// Index of the message in the order written.
    pub index: u64,
    /// When the application wrote it.
    pub created: Time,
    /// When it was delivered or found lost.
    pub at: Time,
    /// Never delivered (datagram transports only).
    pub lost: bool,
}

/// The messages of one flow.
///
/// What a receiver touches on every in-order segment (`front`) and what the engine checks after
/// each of its calls (`events`) come first, in one cache line: with hundreds of flows the
/// ledger is rarely cached, and a bulk flow's single message never completes.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct MessageLedger {
    /// End offset (stream) or datagram number of the oldest pending message; `u64::MAX` when
    /// none is pending.
    front: u64,
    /// Deliveries and losses not yet collected by the engine.
    pub events: Vec<MessageEvent>,
    /// Bytes (stream) or datagrams written so far.
    written: u64,
    /// Index of the oldest pending message.
    next_index: u64,
    /// Written, not yet delivered: (end offset in the stream, or datagram number; created;
    /// known lost in the network).
    pending: VecDeque<(u64, Time, bool)>,
}

impl Default for MessageLedger {
    fn default() -> Self {
        MessageLedger { front: u64::MAX, events: Vec::new(), written: 0, next_index: 0, pending: VecDeque::new() }
    }
}

impl MessageLedger {
    /// A stream transport accepted a message of `bytes`.
    pub fn write_stream(&mut self, now: Time, bytes: u64) {
        self.written = self.written.saturating_add(bytes);
        self.push(self.written, now);
    }

    /// A datagram transport sends a message; returns its datagram number.
    pub fn write_datagram(&mut self, now: Time) -> u64 {
        let n = self.written;
        self.written += 1;
        self.push(n, now);
        n
    }

    fn push(&mut self, end: u64, now: Time) {
        if self.pending.is_empty() {
            self.front = end;
        }
        self.pending.push_back((end, now, false));
    }

    /// The stream has been delivered in order up to (excluding) byte `end`.
    pub fn deliver_stream(&mut self, now: Time, end: u64) {
        if self.front > end {
            return; // nothing completes (the usual case: the queue is not read)
        }
        while let Some(&(msg_end, created, _)) = self.pending.front() {
            if msg_end > end {
                break;
            }
            self.complete(now, created, false);
        }
    }

    /// Datagram `n` arrived.
    pub fn deliver_datagram(&mut self, now: Time, n: u64) {
        while let Some(&(number, created, _)) = self.pending.front() {
            if number > n {
                break; // a duplicate of something already accounted for
            }
            self.complete(now, created, number < n);
        }
        self.settle(now);
    }

    /// Datagram `n` was lost in the network: its message is lost (reported once every older
    /// message has completed).
    pub fn lose_datagram(&mut self, now: Time, n: u64) {
        if let Ok(i) = self.pending.binary_search_by_key(&n, |p| p.0) {
            self.pending[i].2 = true;
            self.settle(now);
        }
    }

    /// Complete the messages at the front already known lost.
    fn settle(&mut self, now: Time) {
        while let Some(&(_, created, true)) = self.pending.front() {
            self.complete(now, created, true);
        }
    }

    /// Messages written so far; the next message written gets this index.
    pub fn messages_written(&self) -> u64 {
        self.next_index + self.pending.len() as u64
    }

    /// Messages written and neither delivered nor known lost.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    fn complete(&mut self, now: Time, created: Time, lost: bool) {
        self.pending.pop_front();
        self.front = self.pending.front().map_or(u64::MAX, |p| p.0);
        self.events.push(MessageEvent { index: self.next_index, created, at: now, lost });
        self.next_index += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_messages_complete_when_their_last_byte_is_delivered() {
        let mut m = MessageLedger::default();
        m.write_stream(10, 1000);
        m.write_stream(20, 500);
        m.deliver_stream(30, 999);
        assert!(m.events.is_empty());
        m.deliver_stream(40, 1400);
        assert_eq!(m.events, vec![MessageEvent { index: 0, created: 10, at: 40, lost: false }]);
        m.deliver_stream(50, 1500);
        assert_eq!(m.events[1], MessageEvent { index: 1, created: 20, at: 50, lost: false });
        assert_eq!(m.pending(), 0);
        // Written after the queue emptied: its end is the new front.
        m.write_stream(60, 100);
        m.deliver_stream(70, 1599);
        assert_eq!(m.events.len(), 2);
        m.deliver_stream(80, 1600);
        assert_eq!(m.events[2], MessageEvent { index: 2, created: 60, at: 80, lost: false });
    }

    #[test]
    fn a_later_datagram_proves_older_ones_lost() {
        let mut m = MessageLedger::default();
        for t in 0..4 {
            assert_eq!(m.write_datagram(t * 10), t);
        }
        m.deliver_datagram(100, 0);
        m.deliver_datagram(130, 2);
        m.deliver_datagram(131, 2); // duplicate: ignored
        let got: Vec<(u64, bool)> = m.events.iter().map(|e| (e.index, e.lost)).collect();
        assert_eq!(got, vec![(0, false), (1, true), (2, false)]);
        assert_eq!(m.events[1].created, 10);
        assert_eq!(m.pending(), 1);
    }

    #[test]
    fn a_dropped_datagram_is_lost_once_older_ones_are_settled() {
        let mut m = MessageLedger::default();
        for t in 0..5 {
            m.write_datagram(t);
        }
        // 2 is dropped while 0 and 1 are in flight: nothing is reported yet.
        m.lose_datagram(50, 2);
        assert!(m.events.is_empty());
        m.deliver_datagram(60, 0);
        m.deliver_datagram(70, 1);
        // 1's delivery settles 2 as lost; 3 dropped at the front is reported at once; a second
        // report of the same loss and one for an unknown number change nothing.
        m.lose_datagram(80, 3);
        m.lose_datagram(81, 3);
        m.lose_datagram(82, 9);
        let got: Vec<(u64, bool, Time)> = m.events.iter().map(|e| (e.index, e.lost, e.at)).collect();
        assert_eq!(got, vec![(0, false, 60), (1, false, 70), (2, true, 70), (3, true, 80)]);
        assert_eq!(m.pending(), 1);
    }
}
