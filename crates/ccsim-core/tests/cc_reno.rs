//! Plain Reno end to end on a 10 Mbit/s dumbbell (RTT 40 ms, BDP 33 packets), without SACK.

mod common;

use ccsim_core::config::{AlgoSpec, Config};
use ccsim_core::params::ParamValue;
use ccsim_core::sim::time::{MS, SEC};
use ccsim_core::Results;
use common::*;

fn dumbbell_10m(n: usize, cc: &str, buffer: u64) -> Config {
    let mut cfg = dumbbell(n, 10_000_000, 10 * MS, droptail(buffer), 100_000_000, |i| (5 + 5 * i as u64) * MS);
    cfg.duration_ns = 60 * SEC;
    cfg.warmup_ns = 10 * SEC;
    for i in 0..n {
        let mut f = bulk_tcp(n, i, cc);
        f.transport = AlgoSpec::named("tcp").with("sack", ParamValue::Bool(false));
        cfg.flows.push(f);
    }
    cfg
}

#[test]
fn reno_fills_a_10_mbps_link_alone_and_in_company() {
    for n in [1, 3] {
        let r = run(&dumbbell_10m(n, "reno", 100));
        let util = r.utilization.unwrap();
        let f = |k: fn(&ccsim_core::results::FlowResult) -> u64| r.flows.iter().map(k).sum::<u64>();
        eprintln!(
            "{n} reno flow(s): utilization {util:.4}, fast recoveries {}, timeouts {}, jain {:?}",
            f(|x| x.fast_recoveries),
            f(|x| x.timeouts),
            r.jain_index
        );
        assert!(util > 0.8, "{n} flows: utilization {util}");
        assert!(r.flows.iter().all(|f| f.goodput_bps > 0.0 && f.cc == "reno"));
    }
}

#[test]
fn several_losses_in_a_window_cost_reno_more_timeouts_than_newreno() {
    // Three flows and a 20-packet buffer (less than one BDP): slow-start overshoots and
    // synchronized overflows drop several segments of one window. NewReno repairs them in
    // one episode (one hole per RTT); Reno leaves recovery at the first partial ACK and,
    // short of three fresh duplicate ACKs, waits for the RTO.
    let mut reno = dumbbell_10m(3, "reno", 20);
    let mut newreno = dumbbell_10m(3, "newreno", 20);
    reno.warmup_ns = 0;
    newreno.warmup_ns = 0;
    let (r, nr) = (run(&reno), run(&newreno));
    let count = |r: &Results, k: fn(&ccsim_core::results::FlowResult) -> u64| r.flows.iter().map(k).sum::<u64>();
    let (rt, nt) = (count(&r, |f| f.timeouts), count(&nr, |f| f.timeouts));
    let (rf, nf) = (count(&r, |f| f.fast_recoveries), count(&nr, |f| f.fast_recoveries));
    eprintln!(
        "20-packet buffer: reno {rt} timeouts / {rf} fast recoveries, newreno {nt} / {nf}; utilization {:.4} / {:.4}",
        r.utilization.unwrap(),
        nr.utilization.unwrap()
    );
    assert!(rt > nt, "reno {rt} timeouts, newreno {nt}");
}
