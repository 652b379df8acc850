//! DCTCP end to end: with the `threshold` switch (RFC 8257 §3.1) the bottleneck queue
//! hovers at the marking threshold K with the link full; on a 10 Mbit/s dumbbell it fills the
//! link for 60 s; ECN is implied by the algorithm.

mod common;

use ccsim_core::config::{AlgoSpec, Config};
use ccsim_core::params::{ParamValue, Size};
use ccsim_core::sim::time::{MS, SEC, US};
use ccsim_core::{Results, Simulation};
use common::*;

fn threshold(k: u64, limit: u64) -> AlgoSpec {
    AlgoSpec::named("threshold")
        .with("k", ParamValue::Size(Size::Packets(k)))
        .with("limit", ParamValue::Size(Size::Packets(limit)))
}

fn run(cfg: &Config) -> (Results, u64) {
    let mut sim = Simulation::new(cfg).expect("valid config");
    sim.run();
    sim.check_conservation().expect("conservation");
    let dropped = sim.queue("A->B").unwrap().stats.total_dropped;
    (sim.results(), dropped)
}

/// `n` DCTCP flows through a threshold queue (K, buffer 300 p) on a dumbbell.
fn dctcp_dumbbell(n: usize, rate: u64, k: u64, delay: impl Fn(usize) -> u64, duration: u64) -> Config {
    let mut cfg = dumbbell(n, rate, 100 * US, threshold(k, 300), 10 * rate, delay);
    cfg.duration_ns = duration;
    cfg.warmup_ns = duration / 5;
    for i in 0..n {
        cfg.flows.push(bulk_tcp(n, i, "dctcp"));
    }
    cfg
}

#[test]
fn the_queue_stays_near_k_with_the_link_full_at_100_mbps() {
    // DCTCP paper's K = 20 packets at 100 Mbit/s (Alizadeh et al. 2010 §4), RTTs 0.8-1.6 ms:
    // C RTT = 7-14 packets, well below K, so without marking the queue would grow to the
    // 300-packet buffer. Two and five flows.
    for n in [2, 5] {
        let cfg = dctcp_dumbbell(n, 100_000_000, 20, |i| (100 + 50 * i as u64) * US, 5 * SEC);
        let (r, dropped) = run(&cfg);
        let q = &r.queues[0];
        let util = r.utilization.unwrap();
        let marked: u64 = r.flows.iter().map(|f| f.ecn_marks).sum();
        eprintln!(
            "{n} flows: utilization {util:.4}, queue mean {:.1} sd {:.1} max {}, marks {marked}, ECN reductions {:?}, drops {dropped}",
            q.mean_len_pkts,
            q.sd_len_pkts,
            q.max_len_pkts,
            r.flows.iter().map(|f| f.ecn_reductions).collect::<Vec<_>>()
        );
        assert!((10.0..=30.0).contains(&q.mean_len_pkts), "{n} flows: mean queue {}", q.mean_len_pkts);
        assert!(util > 0.9, "{n} flows: utilization {util}");
        assert_eq!(dropped, 0, "{n} flows");
        assert!(r.flows.iter().all(|f| f.ecn_reductions > 0 && f.retransmissions == 0));
    }
}

#[test]
fn dctcp_fills_a_10_mbps_dumbbell_for_60_s() {
    // 10 Mbit/s, RTT 40-60 ms (BDP 33-50 packets), K = 20 packets: alone and three flows.
    for n in [1, 3] {
        let mut cfg = dumbbell(n, 10_000_000, 10 * MS, threshold(20, 200), 100_000_000, |i| (5 + 5 * i as u64) * MS);
        cfg.duration_ns = 60 * SEC;
        cfg.warmup_ns = 10 * SEC;
        for i in 0..n {
            cfg.flows.push(bulk_tcp(n, i, "dctcp"));
        }
        let (r, dropped) = run(&cfg);
        let util = r.utilization.unwrap();
        eprintln!(
            "{n} flow(s): utilization {util:.4}, queue mean {:.1} max {}, drops {dropped}, jain {:?}",
            r.queues[0].mean_len_pkts, r.queues[0].max_len_pkts, r.jain_index
        );
        assert!(util > 0.8, "{n} flows: utilization {util}");
        assert!(r.queues[0].mean_len_pkts < 40.0, "marking keeps the queue short");
        assert_eq!(dropped, 0);
    }
}

#[test]
fn dctcp_turns_ecn_on_and_refuses_an_explicit_ecn_off() {
    let mut cfg = dctcp_dumbbell(1, 100_000_000, 20, |_| 100 * US, 200 * MS);
    let (r, _) = run(&cfg);
    assert!(r.flows[0].ecn_marks > 0, "data was sent ECT without ecn = true");
    cfg.flows[0].transport = AlgoSpec::named("tcp").with("ecn", ParamValue::Bool(false));
    let err = Simulation::new(&cfg).err().expect("ecn = false with dctcp is an error");
    assert_eq!(err.field, "flows[0].transport.ecn", "{err}");
    assert!(err.message.contains("dctcp"), "{err}");
}
