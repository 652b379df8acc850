//! End-to-end runs of RED (with and without ECN) and DCTCP-style threshold marking on a
//! 100 Mb/s dumbbell with ten NewReno bulk flows.
//!
//! Topology: bottleneck A->B 100 Mb/s, 2 ms; access links 1 Gb/s with 4 + i ms for pair i,
//! so the base RTTs are 2·(2 + 2·(4 + i)) = 20 + 4i ms (20..56 ms). 60 s runs, 10 s warm-up.

mod common;

use ccsim_core::config::{AlgoSpec, Config};
use ccsim_core::params::{ParamValue, Size};
use ccsim_core::sim::time::{MS, SEC};
use ccsim_core::{Results, Simulation};
use common::*;

const N: usize = 10;

fn pkts(n: u64) -> ParamValue {
    ParamValue::Size(Size::Packets(n))
}

fn scenario(queue: AlgoSpec, ecn: bool) -> Config {
    let mut cfg = dumbbell(N, 100_000_000, 2 * MS, queue, 1_000_000_000, |i| (4 + i as u64) * MS);
    cfg.duration_ns = 60 * SEC;
    cfg.warmup_ns = 10 * SEC;
    for i in 0..N {
        let mut f = bulk_tcp(N, i, "newreno");
        f.start_max_ns = Some(SEC);
        if ecn {
            f.transport = AlgoSpec::named("tcp").with("ecn", ParamValue::Bool(true));
        }
        cfg.flows.push(f);
    }
    cfg
}

/// Run; return the results and the bottleneck's early drops (measured window).
fn run(cfg: &Config) -> (Results, u64) {
    let mut sim = Simulation::new(cfg).expect("valid config");
    sim.run();
    sim.check_conservation().expect("conservation");
    let early = sim.queue("A->B").expect("bottleneck queue").stats.early_drops;
    (sim.results(), early)
}

fn red(ecn: bool) -> AlgoSpec {
    AlgoSpec::named("red")
        .with("min_th", pkts(50))
        .with("max_th", pkts(150))
        .with("limit", pkts(300))
        .with("ecn", ParamValue::Bool(ecn))
}

fn report(name: &str, r: &Results, early: u64) {
    let q = r.queues.iter().find(|q| q.name == "A->B").unwrap();
    eprintln!(
        "{name}: mean queue {:.1} p (sd {:.1}), max {}, drops {} (early {early}), marks {}, utilization {:.4}, Jain {:.3}",
        q.mean_len_pkts,
        q.sd_len_pkts,
        q.max_len_pkts,
        q.drops,
        q.marks,
        r.utilization.unwrap(),
        r.jain_index.unwrap()
    );
}

// Where the mean queue should sit: ten NewReno flows with about (317 + 50)/10 ≈ 37-packet
// windows need a congestion-signal rate of about 8/(3·37²) ≈ 0.2 %, i.e. p_b ≈ 0.001 with
// RED's spacing (rate ≈ 2·p_b), so the average settles just above min_th. The instantaneous
// queue, which empties after nearly synchronized reductions, averages somewhat below it. The
// checks: well above empty, well below max_th (DropTail with the same 300p buffer averages
// about 210p here), and the link kept busy.

#[test]
fn red_holds_the_queue_around_min_th_at_full_utilization() {
    // The default w_q = 0.002. (Before the sender detected lost retransmissions and took
    // ssthresh after a timeout from the data still in flight, this setting cycled through
    // gentle-region drop bursts and 1 s timeouts: utilization 0.72, 273 timeouts.)
    let (r, early) = run(&scenario(red(false), false));
    report("red", &r, early);
    let q = r.queues.iter().find(|q| q.name == "A->B").unwrap();
    assert!(q.mean_len_pkts > 20.0 && q.mean_len_pkts < 150.0, "mean queue {}", q.mean_len_pkts);
    assert!(r.utilization.unwrap() > 0.9, "utilization {:?}", r.utilization);
    assert!(r.flows.iter().map(|f| f.timeouts).sum::<u64>() < 10);
    // Congestion is signalled by early drops, not by overflowing the 300p buffer.
    assert!(early > 0);
    assert!(q.max_len_pkts < 300, "max queue {}", q.max_len_pkts);
    assert_eq!(q.drops, early);
    assert_eq!(q.marks, 0);
}

#[test]
fn red_with_ecn_marks_instead_of_dropping() {
    let (r, early) = run(&scenario(red(true), true));
    report("red+ecn", &r, early);
    let q = r.queues.iter().find(|q| q.name == "A->B").unwrap();
    assert!(q.marks > 0);
    // Only Not-ECT packets (retransmissions) could still be dropped early, and without
    // losses there is nothing to retransmit.
    assert_eq!(early, 0);
    assert_eq!(q.drops, 0);
    assert!(q.mean_len_pkts > 20.0 && q.mean_len_pkts < 150.0, "mean queue {}", q.mean_len_pkts);
    assert!(r.utilization.unwrap() > 0.9, "utilization {:?}", r.utilization);
    assert!(r.flows.iter().all(|f| f.ecn_reductions > 0 && f.timeouts == 0));
}

#[test]
fn threshold_marking_keeps_the_queue_below_k_without_drops() {
    // Every ECT arrival above K is marked, so all ten flows see marks within about one RTT
    // and NewReno halves each: the queue peaks a little above K and drains well below it
    // (DCTCP's proportional reduction is what keeps it at K; NewReno is not DCTCP).
    let k = 65.0;
    let queue = AlgoSpec::named("threshold").with("k", pkts(65)).with("limit", pkts(300));
    let (r, early) = run(&scenario(queue, true));
    report("threshold", &r, early);
    let q = r.queues.iter().find(|q| q.name == "A->B").unwrap();
    assert!(q.marks > 0);
    assert_eq!(q.drops, 0);
    assert!(q.mean_len_pkts > 0.1 * k && q.mean_len_pkts < k, "mean queue {}", q.mean_len_pkts);
    assert!((q.max_len_pkts as f64) < 2.0 * k, "max queue {}", q.max_len_pkts);
    assert!(r.utilization.unwrap() > 0.85, "utilization {:?}", r.utilization);
}
