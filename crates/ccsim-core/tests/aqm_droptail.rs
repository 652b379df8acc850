//! DropTail end to end: with ten NewReno flows a tail-drop buffer stays nearly full, which is
//! the baseline the AQM tests compare against.

mod common;

use ccsim_core::sim::time::{MS, SEC};
use ccsim_core::Simulation;
use common::*;

#[test]
fn ten_newreno_flows_keep_a_droptail_buffer_near_its_limit() {
    // 100 Mbit/s, 2 ms bottleneck; access delays 1..10 ms give RTTs of 8..44 ms, so the
    // largest BDP is ~370 packets: a 200-packet buffer is filled by loss-based senders.
    let mut cfg = dumbbell(10, 100_000_000, 2 * MS, droptail(200), 1_000_000_000, |i| (1 + i as u64) * MS);
    cfg.duration_ns = 60 * SEC;
    cfg.warmup_ns = 10 * SEC;
    for i in 0..10 {
        let mut f = bulk_tcp(10, i, "newreno");
        f.start_max_ns = Some(SEC);
        cfg.flows.push(f);
    }
    let mut sim = Simulation::new(&cfg).unwrap();
    sim.run();
    sim.check_conservation().unwrap();
    let r = sim.results();
    let q = &r.queues[0];
    assert!(q.mean_len_pkts > 0.6 * 200.0, "mean queue {}", q.mean_len_pkts);
    assert!(q.max_len_pkts == 200);
    assert!(q.drops > 0 && q.marks == 0);
    assert!(r.utilization.unwrap() > 0.95);
    // Standing queue: every packet waits most of the buffer's drain time (200 * 0.12 ms).
    assert!(q.mean_sojourn_s > 0.6 * 200.0 * 1500.0 * 8.0 / 100e6, "sojourn {}", q.mean_sojourn_s);
}

/// Regression: with lost-retransmission detection, a flow whose FQ-CoDel sub-queue drops
/// nearly everything (CoDel at a high count) once re-sent its losses as fast as they were
/// dropped: 18 587 retransmissions for 18 694 drops in the flagship scenario. RFC 5681 §4.3's
/// second reduction stops that; every retransmission must answer a drop.
#[test]
fn losses_of_retransmissions_do_not_start_a_retransmission_storm() {
    let mut cfg = dumbbell(4, 10_000_000, 5 * MS, ccsim_core::config::AlgoSpec::named("fq_codel"), 100_000_000, |i| {
        [2, 10, 25, 50][i] * MS
    });
    cfg.duration_ns = 60 * SEC;
    cfg.warmup_ns = 10 * SEC;
    for i in 0..4 {
        let mut f = bulk_tcp(4, i, "newreno");
        f.start_max_ns = Some(SEC);
        cfg.flows.push(f);
    }
    let mut sim = Simulation::new(&cfg).unwrap();
    sim.run();
    let r = sim.results();
    let retx: u64 = r.flows.iter().map(|f| f.retransmissions).sum();
    let drops = r.queues[0].drops;
    assert!(retx <= drops + drops / 5 + 10, "retransmissions {retx}, drops {drops}");
    assert!(drops < 2000, "drops {drops}");
    assert!(r.utilization.unwrap() > 0.9);
}
