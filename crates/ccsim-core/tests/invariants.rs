//! The run-time invariants (`src/invariants.rs`) on whole runs: their bookkeeping follows a
//! congested network, and the test-only panic knob fails with the seed.

mod common;

use ccsim_core::sim::time::MS;
use ccsim_core::Simulation;
use common::*;

/// Two NewReno flows into a 20-packet DropTail bottleneck: drops, a standing queue, packets
/// on every wire.
fn congested() -> Simulation {
    let mut cfg = dumbbell(2, 10_000_000, 10 * MS, droptail(20), 100_000_000, |_| MS);
    cfg.duration_ns = 2_000 * MS;
    cfg.seed = 11;
    cfg.flows = vec![bulk_tcp(2, 0, "newreno"), bulk_tcp(2, 1, "newreno")];
    Simulation::new(&cfg).expect("valid configuration")
}

#[test]
#[cfg_attr(not(debug_assertions), ignore = "the bookkeeping exists in debug builds only")]
fn per_flow_queue_bookkeeping_matches_the_queues_mid_run() {
    let mut sim = congested();
    let mut saw_both_flows_queued = false;
    for step in 1..=20 {
        sim.run_until(step * 100 * MS); // each call also checks per-flow conservation
        let q = sim.queue("A->B").expect("bottleneck");
        let held: u64 = (0..2).map(|f| q.check.held(f)).sum();
        assert_eq!(held, q.len_packets() as u64, "at step {step}");
        saw_both_flows_queued |= (0..2).all(|f| q.check.held(f) > 0);
    }
    let q = sim.queue("A->B").unwrap();
    assert!(q.stats.drops > 0, "the bottleneck must overflow for this test to mean anything");
    assert!(q.stats.max_len_pkts <= 20);
    assert!(saw_both_flows_queued);
    sim.check_conservation().expect("conservation");
}

#[test]
#[should_panic(expected = "test-only panic requested with _panic_at_ns at t=500000000 ns (seed 11)")]
fn the_test_only_panic_knob_fails_with_time_and_seed() {
    let mut sim = congested();
    sim.set_panic_at(Some(500 * MS));
    sim.run_until(400 * MS); // before the requested time: nothing
    assert_eq!(sim.now(), 400 * MS);
    sim.run_until(900 * MS); // stops at exactly 500 ms, whatever the slice
}
