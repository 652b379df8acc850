//! E-DCTCP end to end: routers return dropped segments to their senders, which retransmit them
//! after a backoff instead of waiting for duplicate ACKs or the RTO. On a 10 Mbit/s dumbbell it
//! fills the link for 60 s; under incast it finishes without the timeouts DCTCP suffers.

mod common;

use ccsim_core::config::{AlgoSpec, Config};
use ccsim_core::params::{ParamValue, Size};
use ccsim_core::sim::time::{Time, MS, SEC, US};
use ccsim_core::{Results, Simulation};
use common::*;

fn threshold(k: u64, limit: u64) -> AlgoSpec {
    AlgoSpec::named("threshold")
        .with("k", ParamValue::Size(Size::Packets(k)))
        .with("limit", ParamValue::Size(Size::Packets(limit)))
}

#[test]
fn edctcp_fills_a_10_mbps_dumbbell_for_60_s() {
    // K = 20 packets and a 25-packet buffer: slow start overflows it, and with three flows
    // so do the marking cycles now and then; every drop comes back as a notice and is
    // repaired without a timeout. Measured from the start.
    for n in [1, 3] {
        let mut cfg = dumbbell(n, 10_000_000, 10 * MS, threshold(20, 25), 100_000_000, |i| (5 + 5 * i as u64) * MS);
        cfg.duration_ns = 60 * SEC;
        cfg.warmup_ns = 0;
        for i in 0..n {
            cfg.flows.push(bulk_tcp(n, i, "edctcp"));
        }
        let mut sim = Simulation::new(&cfg).expect("valid config");
        sim.run();
        sim.check_conservation().expect("conservation, returned headers included");
        let notices: u64 = (0..n).map(|f| sim.flow_stats(f).loss_notices).sum();
        let r: Results = sim.results();
        let util = r.utilization.unwrap();
        let timeouts: u64 = r.flows.iter().map(|f| f.timeouts).sum();
        eprintln!(
            "{n} flow(s): utilization {util:.4}, queue mean {:.1} max {} drops {}, loss notices {notices}, timeouts {timeouts}, jain {:?}",
            r.queues[0].mean_len_pkts, r.queues[0].max_len_pkts, r.queues[0].drops, r.jain_index
        );
        assert!(util > 0.8, "{n} flows: utilization {util}");
        assert!(notices > 0, "the 25-packet buffer overflowed");
        assert_eq!(notices, r.queues[0].drops, "one notice per drop (none lost on the way back)");
        assert_eq!(timeouts, 0);
    }
}

/// Incast: `n` senders start a 64 KB transfer each at the same instant through a 100 Mbit/s
/// switch port with a 64-packet buffer (K = 20), RTT about 0.2 ms. Returns the time the last
/// transfer completed and the total number of timeouts.
fn incast(cc: &str, n: usize, seed: u64) -> (Option<Time>, u64, u64) {
    const SIZE: u64 = 64 * 1024;
    let mut cfg: Config = dumbbell(n, 100_000_000, 10 * US, threshold(20, 64), 1_000_000_000, |_| 20 * US);
    cfg.duration_ns = 3 * SEC;
    cfg.seed = seed;
    for i in 0..n {
        let mut f = bulk_tcp(n, i, cc);
        f.app = AlgoSpec::named("transfer").with("size", ParamValue::Int(SIZE as i64));
        // Linux's 200 ms minimum RTO, as data centres run.
        f.transport = AlgoSpec::named("tcp").with("min_rto", ParamValue::Int(200 * MS as i64));
        f.start_ns = 0;
        f.start_max_ns = Some(20 * US);
        cfg.flows.push(f);
    }
    let mut sim = Simulation::new(&cfg).expect("valid config");
    let mut done = None;
    let mut t = 0;
    while t < cfg.duration_ns {
        t += 100 * US;
        sim.run_until(t);
        if (0..n).all(|f| sim.flow_stats(f).bytes_delivered >= SIZE) {
            done = Some(t);
            break;
        }
    }
    sim.check_conservation().expect("conservation");
    let timeouts = (0..n).map(|f| sim.flow_stats(f).timeouts).sum();
    let notices = (0..n).map(|f| sim.flow_stats(f).loss_notices).sum();
    (done, timeouts, notices)
}

#[test]
fn under_incast_edctcp_avoids_the_timeouts_of_dctcp() {
    // 40 synchronised senders: 400 packets of initial windows meet a 64-packet buffer.
    for seed in 1..=3 {
        let (d_done, d_rto, _) = incast("dctcp", 40, seed);
        let (e_done, e_rto, e_notices) = incast("edctcp", 40, seed);
        eprintln!(
            "seed {seed}: dctcp done {:?} ms, {d_rto} timeouts; edctcp done {:?} ms, {e_rto} timeouts, {e_notices} notices",
            d_done.map(|t| t as f64 / 1e6),
            e_done.map(|t| t as f64 / 1e6)
        );
        assert!(d_rto > 0, "the scenario does make DCTCP time out");
        assert!(e_notices > 0);
        assert_eq!(e_rto, 0, "seed {seed}");
        let (d, e) = (d_done.expect("dctcp completes"), e_done.expect("edctcp completes"));
        // The 40 transfers need 40 x (64 KiB + 46 headers of 52 B) at 100 Mbit/s: 217.4 ms.
        let ideal = 40 * (65_536 + 46 * 52) * 8 * SEC / 100_000_000;
        assert!(e < ideal + ideal / 10, "seed {seed}: edctcp {e} ns, line rate {ideal} ns");
        // DCTCP loses at least one 200 ms RTO on top.
        assert!(d > e + 150 * MS, "seed {seed}: dctcp {d} ns vs edctcp {e} ns");
    }
}
