//! BBR v3's control law against Linux tcp_bbr.c (v3) and draft-ietf-ccwg-bbr-06, by hand:
//! each test drives the algorithm with transmissions and rate samples built by hand on a
//! 1 MB/s, 100 ms path of 1000-byte packets (v1's test path, `tcp/cc/bbr/tests.rs`).

use std::collections::BTreeMap;

use super::*;
use crate::sim::time::US;
use crate::tcp::cc::testkit::{window, Setup, MSS};

/// The tests' path: bottleneck rate `B` = 1 MB/s, min RTT `R` = 100 ms: a BDP of 100 packets
/// of `MSS` = 1000 bytes. The send quantum is 2 segments throughout (1 ms of any pacing rate
/// here is under 3 segments, and 100 ms of min RTT adds nothing), so the quantisation budget
/// (at least 6 packets) never exceeds these windows.
const B: f64 = 1_000_000.0;
const R: Time = 100 * MS;

fn assert_close(got: f64, want: f64) {
    assert!((got - want).abs() <= 1e-9 * want.abs().max(1.0), "got {got}, want {want}");
}

/// BBR v3 with Linux's defaults but for `given`.
fn bbr3(given: &[(&str, ParamValue)]) -> Bbr3 {
    let g: BTreeMap<String, ParamValue> = given.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    Bbr3::from_params(&Params::resolve("bbr3", PARAMS, &g).unwrap())
}

/// BBR v3 without ProbeRTT, for tests of the ProbeBW cycle longer than its 5 s interval.
fn no_probe_rtt() -> Bbr3 {
    bbr3(&[("probe_rtt_time", ParamValue::Int(0))])
}

/// Drives a BBR v3 with hand-made transmissions and rate samples. The test sets
/// `st.bytes_in_flight` (the pipe after the next ACK, and its `prior_in_flight`),
/// `st.ca_state`, `sent_at` (`C.delivered` when the packet ending the next sample left) and,
/// optionally, `tx_inflight`: what was in flight when that packet left, itself included
/// (default: `st.bytes_in_flight`). The packet's transmission is recorded (`on_sent`) before
/// the first ACK that names it, with the connection's lost and CE counts of that moment.
struct Drive {
    cc: Bbr3,
    st: CcState,
    sent_at: u64,
    tx_inflight: Option<u64>,
    recorded: Option<u64>,
}

impl Drive {
    fn new(cc: Bbr3) -> Self {
        Drive { cc, st: window(MSS, 10, None).with_rtt(R, R), sent_at: 0, tx_inflight: None, recorded: None }
    }

    /// The transmission of the packet the next samples name, if it is later than every one
    /// recorded so far.
    fn send(&mut self) {
        if self.recorded.is_some_and(|r| r >= self.sent_at) {
            return;
        }
        let inflight = self.tx_inflight.unwrap_or(self.st.bytes_in_flight);
        self.send_at(self.sent_at, inflight);
    }

    /// A transmission now, with `C.delivered` = `delivered` and `inflight` in flight once it
    /// left.
    fn send_at(&mut self, delivered: u64, inflight: u64) {
        self.recorded = Some(delivered);
        let inflight = inflight.max(MSS);
        let mut s = self.st.clone();
        s.delivered = delivered;
        s.bytes_in_flight = inflight - MSS;
        // Something outstanding (no restart from idle); the window full (cwnd-limited) when
        // `inflight` leaves no room for another packet, until this packet is acknowledged.
        s.snd_nxt = s.snd_una + inflight - MSS + 1;
        self.cc.on_sent(&s, MSS as u32);
    }

    /// One ACK `gap` after the previous one, for one packet (unless `f` says otherwise),
    /// carrying the RTT sample `R`, whose rate sample measures `rate`.
    fn ack_with(&mut self, gap: Time, rate: f64, f: impl FnOnce(&mut RateSample, &mut Ack)) {
        self.send();
        self.st.now += gap;
        let mut rs = RateSample {
            prior_delivered: self.sent_at,
            newly_acked: MSS,
            rtt: Some(R),
            prior_in_flight: self.st.bytes_in_flight,
            delivery_rate: rate,
            ..RateSample::default()
        };
        let mut ack = Ack { acked: MSS, ..Ack::default() };
        f(&mut rs, &mut ack);
        self.st.delivered += rs.newly_acked;
        self.st.lost += rs.newly_lost;
        self.st.snd_una += rs.newly_acked;
        if rs.newly_acked == 0 {
            (rs.prior_delivered, rs.delivered, rs.interval, rs.delivery_rate) = (0, 0, 0, 0.0);
        } else {
            rs.delivered = self.st.delivered - rs.prior_delivered;
            rs.interval = (rs.delivered as f64 * SEC as f64 / rs.delivery_rate).round() as Time;
        }
        self.cc.on_ack_received(&self.st, &ack);
        self.cc.on_rate_sample(&mut self.st, &ack, &rs);
    }

    fn ack(&mut self, gap: Time, rate: f64) {
        self.ack_with(gap, rate, |_, _| {});
    }

    /// A round trip of `n` one-packet ACKs `gap` apart at `rate`: the first delivers a packet
    /// sent after the previous round's first ACK (a round starts), the others packets sent
    /// before this round's first ACK.
    fn round(&mut self, n: u64, gap: Time, rate: f64, app_limited: bool) {
        let mut next = None;
        for _ in 0..n {
            self.ack_with(gap, rate, |rs, _| rs.is_app_limited = app_limited);
            next.get_or_insert(self.st.delivered);
        }
        self.sent_at = next.unwrap();
    }

    /// An ACK that starts a round: its packet was sent after every ACK so far.
    fn round_ack(&mut self, gap: Time, rate: f64, f: impl FnOnce(&mut RateSample, &mut Ack)) {
        self.sent_at = self.st.delivered;
        self.ack_with(gap, rate, f);
    }

    /// Startup at a constant `rate` with 150 packets in flight: four rounds of 100 ACKs 1 ms
    /// apart end in Drain (the first ACK of the fourth round is the third round start without
    /// growth), then one ACK with 110 packets in flight before it and `after` after it.
    fn reach_probe_bw(&mut self, rate: f64, after: u64) {
        self.st.bytes_in_flight = 150 * MSS;
        for _ in 0..4 {
            self.round(100, MS, rate, false);
        }
        assert_eq!(self.cc.mode(), Mode::Drain);
        self.st.bytes_in_flight = after;
        self.ack_with(MS, rate, |rs, _| rs.prior_in_flight = 110 * MSS);
        assert!(matches!(self.cc.mode(), Mode::ProbeBw(_)), "{:?}", self.cc.mode());
    }

    /// [`Drive::reach_probe_bw`] at `B`, then ACKs at 100 packets in flight: CRUISE.
    fn cruise(&mut self) {
        self.reach_probe_bw(B, 100 * MSS);
        assert_eq!(self.cc.mode(), Mode::ProbeBw(Phase::Down));
        self.ack(MS, B);
        assert_eq!(self.cc.mode(), Mode::ProbeBw(Phase::Cruise));
    }

    /// ACKs `gap` apart, a round of `per_round` each, at `rate`, until the phase is `phase`
    /// (at most `limit` ACKs).
    fn until(&mut self, phase: Phase, per_round: u64, gap: Time, rate: f64, limit: usize) {
        for k in 0..limit {
            if self.cc.mode() == Mode::ProbeBw(phase) {
                return;
            }
            if (k as u64).is_multiple_of(per_round) {
                self.round_ack(gap, rate, |_, _| {});
            } else {
                self.ack(gap, rate);
            }
        }
        panic!("no {phase:?} after {limit} ACKs: {:?}", self.cc.mode());
    }
}

#[test]
fn startup_paces_at_2_77_with_cwnd_gain_2_then_drains_into_probe_bw_down_and_cruise() {
    let mut d = Drive::new(Bbr3::default());
    // Before any ACK: 2.77 x initial cwnd / 1 ms (no RTT yet) x 0.99 = 27 423 000 B/s; with
    // srtt = 100 ms, 274 230 B/s.
    d.st.srtt = None;
    assert_close(d.cc.pacing_rate(&d.st).unwrap(), 27_423_000.0);
    d.st.srtt = Some(R);
    assert_close(d.cc.pacing_rate(&d.st).unwrap(), 274_230.0);

    // The first round, 100 ACKs at rate B: pacing 2.77 x B x 0.99; cwnd grows by the bytes
    // ACKed, 10 000 + 100 x 1000.
    d.st.bytes_in_flight = 150 * MSS;
    d.round(100, MS, B, false);
    assert_eq!(d.cc.mode(), Mode::Startup);
    assert_eq!(d.cc.gains(), (2.77, 2.0));
    assert_close(d.cc.pacing_rate(&d.st).unwrap(), 2.77 * B * 0.99);
    assert_eq!(d.st.cwnd, 110_000);
    // Target = ceil(2 x B x R) = 200 packets plus the ACK-aggregation allowance of 1 packet
    // (every ACK starts an aggregation epoch with its own 1000 bytes as the excess) = 201, above
    // the 6-packet budget: the second round stops growing at 201 000.
    d.round(100, MS, B, false);
    assert_eq!(d.st.cwnd, 201_000);
    d.round(100, MS, B, false);
    assert_eq!(d.st.cwnd, 201_000);
    assert_eq!(d.cc.mode(), Mode::Startup);
    // The first ACK of the fourth round is the third round start without a sample 25 % above
    // full_bw = B: Drain, at 1/2.885; ssthresh = bbr_inflight(B, 1) = 100 packets.
    d.ack(MS, B);
    assert_eq!(d.cc.mode(), Mode::Drain);
    assert!(d.cc.full_bw_reached());
    assert_eq!(d.cc.gains(), (1.0 / 2.885, 2.0));
    assert_close(d.cc.pacing_rate(&d.st).unwrap(), B / 2.885 * 0.99);
    assert_eq!(d.st.ssthresh, 100_000);
    // Drain holds while inflight is above 100 packets...
    d.st.bytes_in_flight = 101 * MSS;
    d.ack(MS, B);
    assert_eq!(d.cc.mode(), Mode::Drain);
    // ... and ends at 100: ProbeBW_DOWN (inflight before the ACK still above the BDP), pacing
    // at 0.91, the window at its target (201 packets; no model caps yet).
    d.st.bytes_in_flight = 100 * MSS;
    d.ack_with(MS, B, |rs, _| rs.prior_in_flight = 101 * MSS);
    assert_eq!(d.cc.mode(), Mode::ProbeBw(Phase::Down));
    assert_eq!(d.cc.gains(), (0.91, 2.0));
    assert_close(d.cc.pacing_rate(&d.st).unwrap(), 0.91 * B * 0.99);
    assert_eq!(d.st.cwnd, 201_000);
    // DOWN holds while inflight (before the ACK) is above the BDP, then CRUISE at 1.0.
    d.st.bytes_in_flight = 101 * MSS;
    d.ack(MS, B);
    assert_eq!(d.cc.mode(), Mode::ProbeBw(Phase::Down));
    d.st.bytes_in_flight = 100 * MSS;
    d.ack(MS, B);
    assert_eq!(d.cc.mode(), Mode::ProbeBw(Phase::Cruise));
    assert_eq!(d.cc.gains(), (1.0, 2.0));
    assert_close(d.cc.pacing_rate(&d.st).unwrap(), B * 0.99);
}

#[test]
fn the_draft_values_are_a_parameter_away() {
    // Drain at 0.5, DOWN at 0.90, and Drain left after 3 rounds whatever inflight.
    let mut d = Drive::new(bbr3(&[
        ("drain_gain", ParamValue::Float(0.5)),
        ("probe_down_gain", ParamValue::Float(0.9)),
        ("drain_rounds", ParamValue::Int(3)),
    ]));
    d.st.bytes_in_flight = 150 * MSS;
    for _ in 0..3 {
        d.round(100, MS, B, false);
    }
    d.round(1, MS, B, false);
    assert_eq!(d.cc.mode(), Mode::Drain);
    assert_eq!(d.cc.gains(), (0.5, 2.0));
    let start = d.cc.round_count();
    // 150 packets in flight keep Drain through three more rounds (the round count must pass
    // the start by more than 3); the first ACK of the fourth leaves it.
    for k in 1..=3 {
        d.round(100, MS, B, false);
        assert_eq!(d.cc.mode(), Mode::Drain);
        assert_eq!(d.cc.round_count(), start + k);
    }
    d.round_ack(MS, B, |_, _| {});
    assert_eq!(d.cc.mode(), Mode::ProbeBw(Phase::Down));
    assert_eq!(d.cc.gains(), (0.9, 2.0));
}

#[test]
fn startup_plateau_counts_round_starts_but_any_larger_sample_restarts_it() {
    let mut d = Drive::new(Bbr3::default());
    d.st.bytes_in_flight = 150 * MSS;
    // The first round sets full_bw = B; the starts of the second and third count 1 and 2.
    d.round(10, MS, B, false);
    d.round(10, MS, B, false);
    d.ack(MS, B);
    let next = d.st.delivered;
    assert_eq!((d.cc.full_bw, d.cc.full_bw_cnt), (B, 2));
    // Within the third round, a sample at 1.25 B (>= 1.25 x full_bw) restarts the count
    // (Linux v3; the draft only looks at round starts): three more round starts are needed.
    d.ack(MS, 1.25 * B);
    assert_eq!((d.cc.full_bw, d.cc.full_bw_cnt), (1.25 * B, 0));
    d.sent_at = next;
    for k in 1..=3 {
        d.round(10, MS, B, false);
        assert_eq!(d.cc.full_bw_reached(), k == 3, "round {k}");
    }
    assert_eq!(d.cc.mode(), Mode::Drain);

    // App-limited samples neither restart nor advance the count.
    let mut d = Drive::new(Bbr3::default());
    d.st.bytes_in_flight = 150 * MSS;
    d.round(10, MS, B, false);
    for _ in 0..10 {
        d.round(10, MS, 2.0 * B, true);
    }
    assert_eq!((d.cc.full_bw, d.cc.full_bw_cnt), (B, 0));
    assert_eq!(d.cc.mode(), Mode::Startup);
}

#[test]
fn probe_bw_refills_on_the_wall_clock_then_probes_up_until_a_plateau_then_drains_down() {
    let mut d = Drive::new(Bbr3::default());
    d.cruise();
    // The cycle began at DOWN's start with a wait of 2 s plus U[0, 1 s), whole microseconds.
    let (start, wait) = (d.cc.cycle_mstamp, d.cc.probe_wait());
    assert!((2 * SEC..3 * SEC).contains(&wait) && wait % US == 0, "{wait}");
    // ACKs every 10 ms, ten per round: 63 rounds (the Reno bound, min(63, 100 packets of
    // target)) would take 6.3 s, so the clock decides: CRUISE until the first ACK after
    // start + wait, then REFILL (pacing gain 1, cwnd gain 2).
    d.st.bytes_in_flight = 100 * MSS;
    let mut k = 0;
    loop {
        let t = d.st.now + 10 * MS;
        if k % 10 == 0 {
            d.round_ack(10 * MS, B, |_, _| {});
        } else {
            d.ack(10 * MS, B);
        }
        k += 1;
        let want = if t > start + wait { Phase::Refill } else { Phase::Cruise };
        assert_eq!(d.cc.mode(), Mode::ProbeBw(want), "at {t}");
        if want == Phase::Refill {
            break;
        }
    }
    assert!(d.cc.rounds_since_probe < 63);
    assert_eq!(d.cc.gains(), (1.0, 2.0));
    // REFILL lasts until a packet sent during it is ACKed (a round), then UP: pacing 1.25,
    // cwnd gain 2.25.
    for _ in 0..5 {
        d.ack(10 * MS, B);
        assert_eq!(d.cc.mode(), Mode::ProbeBw(Phase::Refill));
    }
    d.round_ack(10 * MS, B, |_, _| {});
    assert_eq!(d.cc.mode(), Mode::ProbeBw(Phase::Up));
    assert_eq!(d.cc.gains(), (1.25, 2.25));
    assert_close(d.cc.pacing_rate(&d.st).unwrap(), 1.25 * B * 0.99);
    // UP's window target: ceil(2.25 x B x R) = 225 packets + 1 (aggregation) + 2 (UP's
    // budget) = 228; it grows from 201 by the bytes ACKed.
    assert_eq!(d.st.cwnd, 202_000);
    for _ in 0..9 {
        d.ack(10 * MS, B);
    }
    assert_eq!(d.st.cwnd, 211_000);
    // No sample 25 % above the entry sample (B): the third round start ends UP, into DOWN,
    // whose target is back to 201 packets (the window snaps down to it).
    for r in 1..=3 {
        d.round_ack(10 * MS, B, |_, _| {});
        for _ in 0..9 {
            if d.cc.mode() == Mode::ProbeBw(Phase::Up) {
                d.ack(10 * MS, B);
            }
        }
        if r < 3 {
            assert_eq!(d.cc.mode(), Mode::ProbeBw(Phase::Up), "round {r}");
        }
    }
    assert_eq!(d.cc.mode(), Mode::ProbeBw(Phase::Down));
    assert_eq!(d.cc.gains(), (0.91, 2.0));
    assert_eq!(d.st.cwnd, 201_000);
    // A new cycle: a new wait from now; DOWN holds while inflight is above the BDP.
    let (start2, wait2) = (d.cc.cycle_mstamp, d.cc.probe_wait());
    assert_eq!(start2, d.st.now);
    assert!((2 * SEC..3 * SEC).contains(&wait2));
    d.st.bytes_in_flight = 101 * MSS;
    d.ack(10 * MS, B);
    assert_eq!(d.cc.mode(), Mode::ProbeBw(Phase::Down));
    d.st.bytes_in_flight = 100 * MSS;
    d.ack(10 * MS, B);
    assert_eq!(d.cc.mode(), Mode::ProbeBw(Phase::Cruise));
}

#[test]
fn a_small_bdp_probes_after_as_many_rounds_as_its_packets_the_reno_bound() {
    // At B/4 the BDP is 25 packets: a Reno flow with that window would lose every 25 rounds,
    // so BBR probes after min(63, 25) rounds counted from 0 or 1, long before its 2-3 s wait.
    let mut d = Drive::new(Bbr3::default());
    d.reach_probe_bw(B / 4.0, 20 * MSS);
    let r0 = d.cc.rounds_since_probe;
    assert!(r0 <= 1);
    d.st.bytes_in_flight = 20 * MSS;
    for k in 1.. {
        d.round_ack(10 * MS, B / 4.0, |_, _| {});
        if r0 + k >= 25 {
            assert_eq!(d.cc.mode(), Mode::ProbeBw(Phase::Refill), "round {k}");
            break;
        }
        assert_eq!(d.cc.mode(), Mode::ProbeBw(Phase::Cruise), "round {k}");
    }
    assert!(d.st.now < d.cc.cycle_mstamp + 2 * SEC);
}

#[test]
fn the_probe_wait_is_uniform_over_two_to_three_seconds_and_the_rounds_start_at_zero_or_one() {
    let (mut sum, mut lo, mut hi, mut ones) = (0u128, Time::MAX, 0, 0);
    let n = 400;
    for seed in 0..n {
        let mut cc = Bbr3::default().with_rng(Rng::stream(seed, Stream::Cc(0)));
        cc.pick_probe_wait();
        let w = cc.probe_wait();
        (sum, lo, hi) = (sum + w as u128, lo.min(w), hi.max(w));
        assert_eq!(w % US, 0);
        ones += cc.rounds_since_probe;
        assert!(cc.rounds_since_probe <= 1);
    }
    assert!(lo >= 2 * SEC && hi < 3 * SEC, "{lo} {hi}");
    // Mean 2.5 s, standard error 1 s / sqrt(12 x 400) = 14 ms.
    let mean = sum as f64 / n as f64 / SEC as f64;
    assert!((mean - 2.5).abs() < 0.05, "{mean}");
    assert!((150..=250).contains(&ones), "{ones} of {n}");
}

#[test]
fn loss_above_two_percent_of_the_flight_in_up_sets_inflight_hi_and_ends_the_probe() {
    let mut d = Drive::new(no_probe_rtt());
    d.cruise();
    d.until(Phase::Refill, 10, 10 * MS, B, 400);
    d.round_ack(10 * MS, B, |_, _| {});
    assert_eq!(d.cc.mode(), Mode::ProbeBw(Phase::Up));
    assert!(d.cc.bw_probe_samples);
    // The packets of the next round leave with 100 packets in flight. Two of them lost (2 %,
    // not above it): no reaction, UP goes on, no inflight_hi yet.
    d.tx_inflight = Some(100 * MSS);
    d.round_ack(10 * MS, B, |_, _| {});
    d.ack_with(10 * MS, B, |rs, _| rs.newly_lost = 2 * MSS);
    assert_eq!(d.cc.mode(), Mode::ProbeBw(Phase::Up));
    assert_eq!(d.cc.inflight_hi(), None);
    // A third: 3 % of the flight. The loss rate crossed 2 % with this packet; before it, 99
    // packets were in flight with 2 lost, a loss budget of ceil(0.02 x 99) = 2 already used:
    // inflight_hi = 99 packets (bbr_inflight_hi_from_lost_skb), above beta x the target
    // (0.7 x 102 packets in UP). UP ends: DOWN, and the window is capped at inflight_hi.
    d.ack_with(10 * MS, B, |rs, _| rs.newly_lost = MSS);
    assert_eq!(d.cc.inflight_hi(), Some(99 * MSS));
    assert_eq!(d.cc.mode(), Mode::ProbeBw(Phase::Down));
    assert!(d.cc.prev_probe_too_high && !d.cc.bw_probe_samples);
    assert_eq!(d.st.cwnd, 99 * MSS);
    // DOWN ends once inflight is at most inflight_hi less 15 % (99 - 14 = 85 packets) and
    // the BDP: 86 packets keep it; at 85, CRUISE, whose cap is that headroom level.
    d.st.bytes_in_flight = 86 * MSS;
    d.ack(10 * MS, B);
    assert_eq!(d.cc.mode(), Mode::ProbeBw(Phase::Down));
    d.st.bytes_in_flight = 85 * MSS;
    d.ack(10 * MS, B);
    assert_eq!(d.cc.mode(), Mode::ProbeBw(Phase::Cruise));
    assert_eq!(d.st.cwnd, 85 * MSS);

    // The next probe is precautionary: UP stops as soon as inflight (plus a send quantum of
    // 2 packets at a gain above 1) reaches inflight_hi...
    d.tx_inflight = None;
    d.until(Phase::Refill, 10, 10 * MS, B, 400);
    d.round_ack(10 * MS, B, |_, _| {});
    assert_eq!(d.cc.mode(), Mode::ProbeBw(Phase::Up));
    d.st.bytes_in_flight = 96 * MSS;
    d.ack(10 * MS, B);
    assert_eq!(d.cc.mode(), Mode::ProbeBw(Phase::Up));
    d.st.bytes_in_flight = 97 * MSS;
    d.ack(10 * MS, B);
    assert_eq!(d.cc.mode(), Mode::ProbeBw(Phase::Down));
    assert!(d.cc.stopped_risky_probe && !d.cc.prev_probe_too_high);
    // ... and, its feedback over a round later without excess loss, REFILL comes at once,
    // skipping CRUISE and the wait.
    d.round_ack(10 * MS, B, |_, _| {});
    assert_eq!(d.cc.mode(), Mode::ProbeBw(Phase::Refill));
}

#[test]
fn inflight_hi_grows_by_1_2_4_packets_per_round_while_the_window_is_limited_by_it() {
    let mut d = Drive::new(no_probe_rtt());
    d.cruise();
    d.until(Phase::Refill, 10, 10 * MS, B, 400);
    // A previous probe left inflight_hi at 100 packets, the flight REFILL keeps; the window
    // is capped at it.
    d.cc.inflight_hi = 100 * MSS;
    d.ack(10 * MS, B);
    assert_eq!(d.st.cwnd, 100 * MSS);
    d.tx_inflight = Some(100 * MSS);
    d.round_ack(10 * MS, B, |_, _| {});
    assert_eq!(d.cc.mode(), Mode::ProbeBw(Phase::Up));
    assert_eq!(d.st.cwnd, 100 * MSS);
    // Entering UP set the slope: one packet per window (100 packets) ACKed. Packets leave with
    // the window full (cwnd-limited at inflight_hi): the full-pipe estimator restarts on
    // every ACK, so UP goes on.
    assert_eq!(d.cc.bw_probe_up_cnt, 100 * MSS);
    d.st.bytes_in_flight = 90 * MSS;
    d.round_ack(10 * MS, B, |_, _| {});
    // That round start doubled the slope (growth 2): 100 / 2 = 50 packets ACKed per packet,
    // counting from its own 1000 bytes.
    assert_eq!(d.cc.bw_probe_up_cnt, 50 * MSS);
    assert_eq!(d.cc.inflight_hi(), Some(100 * MSS));
    for k in 1..=98 {
        d.ack(MS, B);
        assert_eq!(d.cc.inflight_hi(), Some((100 + (k + 1) / 50) * MSS), "ACK {k}");
    }
    assert_eq!(d.cc.mode(), Mode::ProbeBw(Phase::Up));
    // The window followed inflight_hi to 101 packets. The next round start completes another
    // 50 packets (102), then sets growth 4: 101 / 4 = 25 packets per packet, 2 more in 50.
    assert_eq!(d.st.cwnd, 101 * MSS);
    d.tx_inflight = Some(101 * MSS);
    d.round_ack(MS, B, |_, _| {});
    assert_eq!(d.cc.inflight_hi(), Some(102 * MSS));
    assert_eq!(d.cc.bw_probe_up_cnt, 25 * MSS);
    for _ in 0..50 {
        d.ack(MS, B);
    }
    assert_eq!(d.cc.inflight_hi(), Some(104 * MSS));
    // Once the data sent with the window full is acknowledged, packets that leave room in it
    // (not cwnd-limited) let inflight_hi be.
    d.tx_inflight = Some(80 * MSS);
    d.round_ack(MS, B, |_, _| {});
    for _ in 0..60 {
        d.ack(MS, B);
    }
    let hi = d.cc.inflight_hi;
    for _ in 0..100 {
        d.ack(MS, B);
    }
    assert_eq!(d.cc.inflight_hi, hi);
    assert_eq!(d.cc.mode(), Mode::ProbeBw(Phase::Up));
}

#[test]
fn losses_outside_a_probe_cut_bw_lo_and_inflight_lo_to_beta_once_per_round() {
    let mut d = Drive::new(Bbr3::default());
    d.cruise();
    assert_eq!(d.st.cwnd, 201_000);
    // A round at 0.5 B with a loss in it: at the end of the loss round (the first ACK of a
    // packet sent after the loss was seen), bw_lo = max(bw_latest, 0.7 x max_bw) = 0.7 B and
    // inflight_lo = max(inflight_latest, 0.7 x cwnd) = 140 packets (0.7 x 201, rounded down).
    let rate = 0.5 * B;
    d.round_ack(10 * MS, rate, |_, _| {});
    d.ack_with(10 * MS, rate, |rs, _| rs.newly_lost = MSS);
    for _ in 0..8 {
        d.ack(10 * MS, rate);
        assert_eq!(d.cc.bw_lo(), None);
    }
    d.round_ack(10 * MS, rate, |_, _| {});
    assert_close(d.cc.bw_lo().unwrap(), 0.7 * B);
    assert_eq!(d.cc.inflight_lo(), Some(140 * MSS));
    assert_close(d.cc.bw(), 0.7 * B);
    assert_close(d.cc.pacing_rate(&d.st).unwrap(), 0.7 * B * 0.99);
    assert_eq!(d.st.cwnd, 140 * MSS);
    // Another lossy round: 0.7 of each again, 0.49 B and 98 packets; but not below this
    // round's delivery: at 0.6 B, bw_lo = 0.6 B.
    d.ack_with(10 * MS, 0.6 * B, |rs, _| rs.newly_lost = MSS);
    for _ in 0..8 {
        d.ack(10 * MS, 0.6 * B);
    }
    d.round_ack(10 * MS, 0.6 * B, |_, _| {});
    assert_close(d.cc.bw_lo().unwrap(), 0.6 * B);
    assert_eq!(d.cc.inflight_lo(), Some(98 * MSS));
    assert_eq!(d.st.cwnd, 98 * MSS);
    // A round without loss changes nothing.
    for _ in 0..9 {
        d.ack(10 * MS, 0.6 * B);
    }
    d.round_ack(10 * MS, 0.6 * B, |_, _| {});
    assert_eq!(d.cc.inflight_lo(), Some(98 * MSS));
    // REFILL drops the short-term model.
    d.until(Phase::Refill, 10, 10 * MS, 0.6 * B, 400);
    assert_eq!((d.cc.bw_lo(), d.cc.inflight_lo()), (None, None));
}

#[test]
fn ecn_alpha_is_an_ewma_of_the_ce_fraction_with_gain_one_sixteenth_and_cuts_inflight_lo() {
    let ecn =
        |max_rtt: Time| bbr3(&[("ecn", ParamValue::Bool(true)), ("ecn_max_rtt", ParamValue::Int(max_rtt as i64))]);
    // The path's 100 ms min RTT is above Linux's 5 ms: CE marks are ignored, alpha stays 1.
    let mut d = Drive::new(ecn(5 * MS));
    d.cruise();
    for _ in 0..5 {
        d.round_ack(10 * MS, B, |_, a| a.ce_packets = 1);
        for _ in 0..9 {
            d.ack_with(10 * MS, B, |_, a| a.ce_packets = 1);
        }
    }
    assert_eq!((d.cc.ecn_alpha(), d.cc.inflight_lo()), (1.0, None));
    assert!(!d.cc.ecn_eligible);

    // At any RTT (ecn_max_rtt = 0): each round start without marks multiplies alpha by 15/16.
    let mut d = Drive::new(ecn(0));
    d.cruise();
    let rounds = d.cc.round_count() as i32;
    let mut alpha = (15.0f64 / 16.0).powi(rounds);
    assert_close(d.cc.ecn_alpha(), alpha);
    // A cycle with a loss (no immediate re-probe), then a round whose ten packets five are
    // CE-marked: at the next round start alpha = 15/16 alpha + 1/16 x 1/2.
    d.round_ack(10 * MS, B, |_, _| {});
    d.ack_with(10 * MS, B, |rs, _| rs.newly_lost = MSS);
    for _ in 0..8 {
        d.ack(10 * MS, B);
    }
    d.round_ack(10 * MS, B, |_, _| {});
    alpha *= (15.0f64 / 16.0).powi(2);
    assert_close(d.cc.ecn_alpha(), alpha);
    let lo = d.cc.inflight_lo().unwrap();
    assert_eq!(lo, 140 * MSS, "the loss cut: 0.7 x 201 packets");
    for k in 0..9 {
        d.ack_with(10 * MS, B, |_, a| a.ce_packets = (k < 5) as u32);
    }
    d.round_ack(10 * MS, B, |_, _| {});
    alpha = alpha * 15.0 / 16.0 + 0.5 / 16.0;
    assert_close(d.cc.ecn_alpha(), alpha);
    // The marked round cut inflight_lo to (1 - alpha / 3) of itself, in whole packets.
    let want = ((lo / MSS) as f64 * (1.0 - alpha / 3.0)).floor() as u64 * MSS;
    assert_eq!(d.cc.inflight_lo(), Some(want));
    assert_eq!(d.st.cwnd, want);
    assert_eq!(d.cc.mode(), Mode::ProbeBw(Phase::Cruise));
}

#[test]
fn marks_in_a_cycle_without_loss_start_a_probe_at_once() {
    let mut d = Drive::new(bbr3(&[("ecn", ParamValue::Bool(true)), ("ecn_max_rtt", ParamValue::Int(0))]));
    d.cruise();
    d.round_ack(10 * MS, B, |_, _| {});
    // The sample of the marked ACK shows CE since its packet left: a CE cycle.
    d.ack_with(10 * MS, B, |_, a| a.ce_packets = 1);
    assert_eq!(d.cc.mode(), Mode::ProbeBw(Phase::Cruise));
    d.ack(10 * MS, B);
    assert_eq!(d.cc.mode(), Mode::ProbeBw(Phase::Refill));
    // With no inflight_hi, its growth starts from the largest slope (2^30).
    assert_eq!(d.cc.bw_probe_up_rounds, 30);
}

#[test]
fn startup_ends_after_two_rounds_with_half_the_bytes_ce_marked() {
    let mut d = Drive::new(bbr3(&[("ecn", ParamValue::Bool(true)), ("ecn_max_rtt", ParamValue::Int(0))]));
    d.st.bytes_in_flight = 150 * MSS;
    d.tx_inflight = Some(150 * MSS);
    // Rates growing by 25 % per round keep the plateau detector away; the third and fourth
    // rounds have five of their ten ACKs marked (after their first).
    let rate = |r: i32| B * 1.25f64.powi(r - 1);
    for r in 1..=4 {
        d.round_ack(MS, rate(r), |_, _| {});
        for k in 0..9 {
            d.ack_with(MS, rate(r), |_, a| a.ce_packets = (r >= 3 && k < 5) as u32);
        }
        assert_eq!(d.cc.mode(), Mode::Startup, "round {r}");
    }
    // The start of the fifth round closes the second marked one (ratio 1/2 >= ecn_thresh):
    // the pipe is full; inflight_hi = bbr_inflight(max_bw, 1) with the fourth round's
    // 1.953 B: ceil(195.3) = 196 packets; Drain (300 packets in flight are above its BDP, 245
    // packets at the fifth round's 2.44 B).
    d.st.bytes_in_flight = 300 * MSS;
    d.round_ack(MS, rate(5), |_, _| {});
    assert!(d.cc.full_bw_reached());
    assert_eq!(d.cc.inflight_hi(), Some(196 * MSS));
    assert_eq!(d.cc.mode(), Mode::Drain);

    // One marked round is not enough.
    let mut d = Drive::new(bbr3(&[("ecn", ParamValue::Bool(true)), ("ecn_max_rtt", ParamValue::Int(0))]));
    d.st.bytes_in_flight = 150 * MSS;
    for r in 1..=6 {
        d.round_ack(MS, rate(r), |_, _| {});
        for k in 0..9 {
            d.ack_with(MS, rate(r), |_, a| a.ce_packets = ((r == 3 || r == 5) && k < 5) as u32);
        }
    }
    assert_eq!(d.cc.mode(), Mode::Startup);
}

#[test]
fn startup_ends_on_a_recovery_round_with_six_loss_events_and_loss_above_two_percent() {
    // Rounds doubling the rate (no plateau); the third is spent in fast recovery. Its first ACK
    // starts the loss round; one marks a loss, which extends the loss round to the packets
    // sent after it; a packet leaves then, with 100 in flight; five more ACKs of older packets
    // mark one loss each. The ACK of that packet ends the loss round: six loss-marking ACKs,
    // and 5 of its 100-packet flight lost (5 % > 2 %): Startup ends, inflight_hi =
    // bbr_inflight(max_bw, 1) = 800 packets at 8 B (its own sample), and Drain (with 900 in
    // flight).
    let run = |events: u64, state: CaState| {
        let mut d = Drive::new(Bbr3::default());
        d.st.bytes_in_flight = 150 * MSS;
        for r in 0..2 {
            d.round(10, MS, B * 2f64.powi(r), false);
        }
        d.st.ca_state = state;
        d.round_ack(MS, 4.0 * B, |_, _| {});
        d.ack_with(MS, 4.0 * B, |rs, _| rs.newly_lost = MSS);
        let after = d.st.delivered;
        d.send_at(after, 100 * MSS);
        for _ in 1..events {
            d.ack_with(MS, 4.0 * B, |rs, _| rs.newly_lost = MSS);
        }
        assert_eq!(d.cc.mode(), Mode::Startup);
        d.sent_at = after;
        d.st.bytes_in_flight = 900 * MSS;
        d.ack(MS, 8.0 * B);
        d
    };
    let d = run(6, CaState::Recovery);
    assert!(d.cc.full_bw_reached());
    assert_eq!(d.cc.inflight_hi(), Some(800 * MSS));
    assert_eq!(d.cc.mode(), Mode::Drain);
    // Five loss events, or the same losses outside fast recovery: Startup goes on.
    assert_eq!(run(5, CaState::Recovery).cc.mode(), Mode::Startup);
    assert_eq!(run(6, CaState::Open).cc.mode(), Mode::Startup);
    // Startup's own losses leave the short-term model alone (it is probing).
    assert_eq!(run(5, CaState::Recovery).cc.inflight_lo(), None);
}

#[test]
fn probe_rtt_every_five_seconds_holds_half_the_bdp_for_200_ms_and_a_round() {
    let mut d = Drive::new(Bbr3::default());
    d.cruise();
    // A sample 1 us below the minimum restamps the ProbeRTT clock (and the min RTT) at t0.
    d.ack_with(10 * MS, B, |rs, _| rs.rtt = Some(R - US));
    let t0 = d.st.now;
    assert_eq!(d.cc.min_rtt(), Some(R - US));
    // ACKs every 100 ms with RTTs of 120 ms do not renew it; 5 s after t0 it has not expired
    // yet (it must be older than 5 s); the next ACK enters ProbeRTT.
    let slow = |rs: &mut RateSample, _: &mut Ack| rs.rtt = Some(120 * MS);
    d.st.bytes_in_flight = 100 * MSS;
    for k in 0..50 {
        if k % 2 == 0 {
            d.round_ack(100 * MS, B, slow);
        } else {
            d.ack_with(100 * MS, B, slow);
        }
        assert_ne!(d.cc.mode(), Mode::ProbeRtt, "at {}", d.st.now);
    }
    assert_eq!(d.st.now, t0 + 5 * SEC);
    let before = d.st.cwnd;
    d.ack_with(100 * MS, B, slow);
    assert_eq!(d.cc.mode(), Mode::ProbeRtt);
    assert_eq!(d.cc.prior_cwnd, before);
    assert_eq!(d.cc.gains(), (1.0, 1.0));
    assert_close(d.cc.pacing_rate(&d.st).unwrap(), B * 0.99);
    // The window: half the BDP, ceil(0.5 x B x 99.999 ms) = 50 packets.
    assert_eq!(d.st.cwnd, 50 * MSS);
    // While more than 50 packets are in flight the 200 ms do not start, however long.
    d.st.bytes_in_flight = 60 * MSS;
    for _ in 0..30 {
        d.ack(10 * MS, B);
        assert_eq!((d.cc.mode(), d.st.cwnd), (Mode::ProbeRtt, 50 * MSS));
    }
    // At 50: the 200 ms start, and a round with the next packet sent.
    d.st.bytes_in_flight = 50 * MSS;
    d.ack(10 * MS, B);
    let tq = d.st.now;
    let mark = d.st.delivered;
    // 300 ms pass without a round: still ProbeRTT.
    for _ in 0..30 {
        d.ack(10 * MS, B);
        assert_eq!((d.cc.mode(), d.st.cwnd), (Mode::ProbeRtt, 50 * MSS));
    }
    assert_eq!(d.st.now, tq + 300 * MS);
    // The round ends: ProbeBW CRUISE (the pipe was full), through DOWN with a new wait; the
    // saved window back, capped by this ACK's rule: min(before + 1000, 201 packets).
    d.sent_at = mark;
    d.ack(10 * MS, B);
    assert_eq!(d.cc.mode(), Mode::ProbeBw(Phase::Cruise));
    assert_eq!(d.st.cwnd, (before + MSS).min(201 * MSS));
    assert_eq!(d.cc.cycle_mstamp, d.st.now);
    let t1 = d.st.now;
    // The next ProbeRTT comes 5 s after this one ended.
    d.st.bytes_in_flight = 100 * MSS;
    while d.cc.mode() != Mode::ProbeRtt {
        d.round_ack(100 * MS, B, slow);
        assert!(d.st.now <= t1 + 5 * SEC + 100 * MS);
    }
    assert!(d.st.now > t1 + 5 * SEC);
    // This time the round comes first: ProbeRTT lasts until the first ACK after 200 ms.
    d.st.bytes_in_flight = 40 * MSS;
    d.ack(10 * MS, B);
    let tq = d.st.now;
    d.round_ack(10 * MS, B, |_, _| {});
    for _ in 0..19 {
        d.ack(10 * MS, B);
        assert_eq!(d.cc.mode(), Mode::ProbeRtt);
    }
    assert_eq!(d.st.now, tq + 200 * MS);
    d.ack(10 * MS, B);
    assert_eq!(d.cc.mode(), Mode::ProbeBw(Phase::Cruise));
}

#[test]
fn the_min_rtt_follows_the_five_second_minimum_once_its_ten_seconds_are_up() {
    let mut d = Drive::new(bbr3(&[("probe_rtt_time", ParamValue::Int(0))]));
    d.cruise();
    d.ack_with(10 * MS, B, |rs, _| rs.rtt = Some(R - US));
    let t0 = d.st.now;
    // RTTs of 150 ms only: at t0 + 5 s the 5 s minimum expires and takes them; the min RTT
    // keeps its own until its 10 s are up, then takes the 5 s minimum.
    d.st.bytes_in_flight = 100 * MSS;
    while d.st.now + 100 * MS <= t0 + 10 * SEC {
        d.round_ack(100 * MS, B, |rs, _| rs.rtt = Some(150 * MS));
        assert_eq!(d.cc.min_rtt(), Some(R - US));
    }
    d.round_ack(100 * MS, B, |rs, _| rs.rtt = Some(150 * MS));
    assert_eq!(d.cc.min_rtt(), Some(150 * MS));
    assert_ne!(d.cc.mode(), Mode::ProbeRtt, "probe_rtt_time = 0: no ProbeRTT");
}

#[test]
fn the_bandwidth_filter_keeps_the_max_of_this_cycle_and_the_last() {
    let mut d = Drive::new(no_probe_rtt());
    d.cruise();
    assert_eq!(d.cc.max_bw(), B);
    // The window advanced at the first round of DOWN (Startup's B the previous cycle's), and
    // the first cycle has a sample at B. Samples at 0.5 B from now on: B stays through the
    // first cycle and the next, until a round after the second one's UP ends.
    for _ in 0..2 {
        d.until(Phase::Refill, 10, 10 * MS, 0.5 * B, 400);
        d.until(Phase::Up, 10, 10 * MS, 0.5 * B, 100);
        d.until(Phase::Down, 10, 10 * MS, 0.5 * B, 100);
        assert_eq!(d.cc.max_bw(), B);
        d.st.bytes_in_flight = 120 * MSS;
        for _ in 0..9 {
            d.ack(10 * MS, 0.5 * B);
            assert_eq!(d.cc.max_bw(), B);
        }
        d.round_ack(10 * MS, 0.5 * B, |_, _| {});
        d.st.bytes_in_flight = 100 * MSS;
    }
    assert_eq!(d.cc.max_bw(), 0.5 * B);
    // App-limited samples below the estimate do not enter it; one above does at once.
    d.round(10, 10 * MS, 0.2 * B, true);
    assert_eq!(d.cc.max_bw(), 0.5 * B);
    d.round(10, 10 * MS, 0.8 * B, true);
    assert_eq!(d.cc.max_bw(), 0.8 * B);
}

#[test]
fn a_timeout_sets_inflight_lo_from_the_saved_window_and_leaving_loss_restores_it() {
    let mut d = Drive::new(Bbr3::default());
    d.cruise();
    let prior = d.st.cwnd;
    // The sender saves through ssthresh(), sets the loss window, then on_timeout.
    assert_eq!(d.cc.ssthresh(&d.st, Congestion::Timeout), d.st.ssthresh);
    assert_eq!(d.cc.prior_cwnd, prior);
    d.st.cwnd = MSS;
    d.st.ca_state = CaState::Loss;
    d.cc.on_timeout(&mut d.st);
    assert_eq!(d.cc.inflight_lo(), Some(prior));
    assert!(d.cc.loss_in_round && d.cc.full_bw == 0.0);
    // In the Loss state the window grows from one packet by the bytes ACKed (at least 4).
    d.st.bytes_in_flight = 0;
    d.ack(MS, B);
    assert_eq!(d.st.cwnd, 4 * MSS);
    d.ack(MS, B);
    assert_eq!(d.st.cwnd, 5 * MSS);
    // Leaving it restores the saved window (then the usual rule and caps).
    d.st.ca_state = CaState::Open;
    d.ack(MS, B);
    assert_eq!(d.st.cwnd, prior.min(d.cc.inflight_lo.min(201 * MSS)));
    // Fast recovery has no such rules: the window follows the model.
    let mut d = Drive::new(Bbr3::default());
    d.cruise();
    d.cc.ssthresh(&d.st, Congestion::Loss);
    d.st.ca_state = CaState::Recovery;
    d.st.bytes_in_flight = 30 * MSS;
    d.ack(MS, B);
    assert_eq!(d.st.cwnd, 201 * MSS);
}

#[test]
fn probe_rtt_samples_count_as_app_limited() {
    let mut d = Drive::new(Bbr3::default());
    d.cruise();
    d.st.bytes_in_flight = 100 * MSS;
    while d.cc.mode() != Mode::ProbeRtt {
        d.round_ack(500 * MS, B, |rs, _| rs.rtt = Some(2 * R));
    }
    // Rounds of low-rate samples from packets sent in ProbeRTT, not flagged by the sender,
    // with 60 packets in flight holding it open: they do not enter the filter.
    d.st.bytes_in_flight = 60 * MSS;
    for _ in 0..30 {
        d.round_ack(10 * MS, B / 10.0, |_, _| {});
        assert_eq!(d.cc.mode(), Mode::ProbeRtt);
    }
    assert_eq!(d.cc.max_bw(), B);
}

#[test]
fn a_restart_from_idle_paces_at_the_estimate_and_skips_probe_rtt() {
    let mut d = Drive::new(Bbr3::default());
    d.cruise();
    d.until(Phase::Up, 10, 10 * MS, B, 400);
    assert_close(d.cc.pacing_rate(&d.st).unwrap(), 1.25 * B * 0.99);
    // Nothing outstanding when a segment leaves: pace at 1.0 x bw (x 0.99).
    d.st.snd_nxt = d.st.snd_una;
    d.cc.on_sent(&d.st, MSS as u32);
    assert_close(d.cc.pacing_rate(&d.st).unwrap(), B * 0.99);
    assert!(d.cc.idle_restart);
    // 6 s later, the ProbeRTT interval expired: not entered on an ACK that delivers nothing,
    // nor on the first that delivers data (whose sample renews the expired minimum).
    d.st.now += 6 * SEC;
    d.ack_with(MS, B, |rs, _| (rs.newly_acked, rs.rtt) = (0, None));
    assert_ne!(d.cc.mode(), Mode::ProbeRtt);
    d.ack_with(MS, B, |rs, _| rs.rtt = Some(R + MS));
    assert_ne!(d.cc.mode(), Mode::ProbeRtt);
    assert!(!d.cc.idle_restart);
    d.ack(MS, B);
    assert_ne!(d.cc.mode(), Mode::ProbeRtt);
}

#[test]
fn the_transmission_log_gives_each_sample_its_flight_losses_and_marks() {
    let mut log = TxLog::default();
    let mut st = window(MSS, 10, None);
    st.snd_una = 5 * MSS;
    st.snd_nxt = 5 * MSS + 1;
    st.bytes_in_flight = 3 * MSS;
    // A burst of three from one state: in flight 4, 5, 6 packets; one record, the last.
    for _ in 0..3 {
        log.on_sent(&st, MSS, 7);
    }
    assert_eq!(log.records(), 1);
    // The window (10 packets) is not full: not cwnd-limited.
    assert!(!log.is_cwnd_limited(&st));
    // Later, with 2000 bytes delivered and 1000 lost: 9 then 10 packets in flight, the window
    // full, cwnd-limited until what was sent up to then is acknowledged.
    st.now = MS;
    (st.delivered, st.lost, st.bytes_in_flight) = (2 * MSS, MSS, 8 * MSS);
    log.on_sent(&st, MSS, 9);
    log.on_sent(&st, MSS, 9);
    assert_eq!(log.records(), 2);
    assert!(log.is_cwnd_limited(&st));
    // A sample naming the first burst (prior_delivered 0): 6 packets in flight when it left,
    // losses and marks since.
    st.lost = 4 * MSS;
    let rs = |prior_delivered| RateSample { prior_delivered, delivered: MSS, ..RateSample::default() };
    let want = TxSample { tx_in_flight: 6 * MSS, lost: 4 * MSS, delivered_ce: 20 - 7 };
    assert_eq!(log.sample(&rs(0), &st, 20), want);
    assert_eq!(log.sample(&rs(MSS), &st, 20), want);
    let want = TxSample { tx_in_flight: 10 * MSS, lost: 3 * MSS, delivered_ce: 11 };
    assert_eq!(log.sample(&rs(2 * MSS), &st, 20), want);
    // An ACK that delivered nothing has no sample.
    assert_eq!(log.sample(&RateSample::default(), &st, 20), TxSample::default());
    // Once a sample names the second burst, the first is dropped.
    log.prune(2 * MSS);
    assert_eq!(log.records(), 1);
    st.snd_una = 5 * MSS + 1 + 2 * MSS;
    assert!(!log.is_cwnd_limited(&st));
}

#[test]
fn registered_as_an_owner_of_its_window_with_linux_defaults_paced_and_ecn_on_request() {
    let m = crate::tcp::cc::CCS.iter().find(|m| m.name == "bbr3").unwrap();
    let p = Params::resolve("bbr3", m.params, &Default::default()).unwrap();
    let cc = (m.build)(&p, Rng::stream(0, Stream::Cc(0)));
    assert!(cc.owns_window());
    assert_eq!(cc.name(), "bbr3");
    assert_eq!(cc.needs(), TransportNeeds { pacing: true, ..TransportNeeds::default() });
    assert!(matches!(m.random, Randomness::Always { .. }));
    let with_ecn = bbr3(&[("ecn", ParamValue::Bool(true))]).needs();
    assert!(with_ecn.ecn && with_ecn.pacing && with_ecn.ecn_feedback == EcnFeedback::Accurate && !with_ecn.ect1);
    let d = Bbr3::default();
    assert_eq!((d.probe_down_gain, d.drain_gain, d.drain_rounds), (0.91, 1.0 / 2.885, 0));
    assert_eq!((d.loss_thresh, d.beta, d.headroom), (0.02, 0.7, 0.15));
    assert_eq!((d.probe_rtt_interval, d.probe_rtt_time, d.min_rtt_win), (5 * SEC, 200 * MS, 10 * SEC));
    assert_eq!((d.full_bw_cnt_max, d.full_loss_cnt), (3, 6));
    assert_eq!((d.ecn, d.ecn_max_rtt, d.ecn_thresh, d.ecn_factor), (false, 5 * MS, 0.5, 1.0 / 3.0));
    assert_eq!((STARTUP_GAIN, CWND_GAIN, PROBE_UP_GAIN, PROBE_UP_CWND_GAIN), (2.77, 2.0, 1.25, 0.25));
    assert_eq!((ECN_ALPHA_GAIN, BW_PROBE_MAX_ROUNDS, BW_PROBE_BASE, BW_PROBE_RAND), (1.0 / 16.0, 63, 2 * SEC, SEC));
}
