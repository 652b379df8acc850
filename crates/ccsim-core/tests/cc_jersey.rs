//! TCP-Jersey end to end on a 10 Mbit/s dumbbell (RTT 40-60 ms, BDP 33-50 packets) whose
//! bottleneck is a `jersey_cw` router (congestion warnings while RED's average exceeds 5
//! packets): it fills the link for 60 s and loses fewer packets than NewReno does through a
//! DropTail queue of the same size; with random losses it keeps its window.

mod common;

use ccsim_core::config::{AlgoSpec, Config};
use ccsim_core::params::{ParamValue, Size};
use ccsim_core::sim::time::{MS, SEC};
use ccsim_core::{Results, Simulation};
use common::*;

const BUFFER: u64 = 100;

fn jersey_cw(limit: u64) -> AlgoSpec {
    AlgoSpec::named("jersey_cw").with("limit", ParamValue::Size(Size::Packets(limit)))
}

fn scenario(n: usize, cc: &str, queue: AlgoSpec, loss: f64) -> Config {
    let mut cfg = dumbbell(n, 10_000_000, 10 * MS, queue, 100_000_000, |i| (5 + 5 * i as u64) * MS);
    cfg.links[0].ab.loss = loss;
    cfg.duration_ns = 60 * SEC;
    cfg.warmup_ns = 10 * SEC;
    for i in 0..n {
        cfg.flows.push(bulk_tcp(n, i, cc));
    }
    cfg
}

/// Run; return the results and the bottleneck's drops over the whole run.
fn run(cfg: &Config) -> (Results, u64) {
    let mut sim = Simulation::new(cfg).expect("valid config");
    sim.run();
    sim.check_conservation().expect("conservation");
    let dropped = sim.queue("A->B").unwrap().stats.total_dropped;
    (sim.results(), dropped)
}

#[test]
fn jersey_fills_the_link_with_fewer_drops_than_newreno_over_droptail() {
    for n in [1, 3] {
        let (j, j_drops) = run(&scenario(n, "jersey", jersey_cw(BUFFER), 0.0));
        let (r, r_drops) = run(&scenario(n, "newreno", droptail(BUFFER), 0.0));
        let (ju, ru) = (j.utilization.unwrap(), r.utilization.unwrap());
        eprintln!(
            "{n} flow(s): jersey utilization {ju:.4}, queue mean {:.1}, drops {j_drops}, CW reductions {:?}, timeouts {}; \
             newreno/droptail utilization {ru:.4}, queue mean {:.1}, drops {r_drops}",
            j.queues[0].mean_len_pkts,
            j.flows.iter().map(|f| f.ecn_reductions).collect::<Vec<_>>(),
            j.flows.iter().map(|f| f.timeouts).sum::<u64>(),
            r.queues[0].mean_len_pkts,
        );
        assert!(ju > 0.8, "{n} flows: utilization {ju}");
        assert!(j_drops < r_drops, "{n} flows: jersey {j_drops} drops, newreno {r_drops}");
        assert!(j.flows.iter().all(|f| f.ecn_reductions > 0), "the warnings drive the window");
    }
}

#[test]
fn random_losses_without_warnings_do_not_shrink_the_window() {
    // 1 % random loss on the bottleneck and a queue that never warns (its threshold is above
    // the buffer): Jersey retransmits without reducing and keeps the link far busier than
    // NewReno, whose window the losses halve again and again.
    let never_warns = jersey_cw(BUFFER).with("min_th", ParamValue::Size(Size::Packets(10 * BUFFER)));
    let (j, _) = run(&scenario(1, "jersey", never_warns, 0.01));
    let (r, _) = run(&scenario(1, "newreno", droptail(BUFFER), 0.01));
    let (jg, rg) = (j.flows[0].goodput_bps, r.flows[0].goodput_bps);
    eprintln!(
        "1 % loss: jersey {:.2} Mb/s ({} fast recoveries, {} timeouts), newreno {:.2} Mb/s",
        jg / 1e6,
        j.flows[0].fast_recoveries,
        j.flows[0].timeouts,
        rg / 1e6
    );
    assert!(jg > 2.0 * rg, "jersey {jg} vs newreno {rg}");
    assert!(j.utilization.unwrap() > 0.8);
}
