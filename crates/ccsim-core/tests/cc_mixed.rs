//! NewReno, CUBIC and Compound sharing one bottleneck (the mixed-TCP runs of Piotrowska,
//! `002_fc58f7a1258d710e.txt` §5.3-5.4): per-algorithm goodput shares.

mod common;

use ccsim_core::sim::time::{MS, SEC};
use ccsim_core::Simulation;
use common::*;

#[test]
fn newreno_cubic_and_compound_share_a_100mbps_droptail_bottleneck() {
    // 100 Mbit/s, 2 ms bottleneck, 8 ms access links: RTT 36 ms, BDP 300 packets; a
    // one-BDP DropTail buffer. Three flows of each algorithm, interleaved, starting within
    // 1 s; 60 s with a 10 s warm-up.
    const ALGOS: [&str; 3] = ["newreno", "cubic", "compound"];
    let n = 9;
    let mut cfg = dumbbell(n, 100_000_000, 2 * MS, droptail(300), 1_000_000_000, |_| 8 * MS);
    cfg.duration_ns = 60 * SEC;
    cfg.warmup_ns = 10 * SEC;
    for i in 0..n {
        let mut f = bulk_tcp(n, i, ALGOS[i % 3]);
        f.start_max_ns = Some(SEC);
        cfg.flows.push(f);
    }
    let mut sim = Simulation::new(&cfg).unwrap();
    sim.run();
    sim.check_conservation().unwrap();
    let r = sim.results();

    let total: f64 = r.flows.iter().map(|f| f.goodput_bps).sum();
    let share = |cc: &str| r.flows.iter().filter(|f| f.cc == cc).map(|f| f.goodput_bps).sum::<f64>() / total;
    let u = r.utilization.unwrap();
    println!(
        "mixed run, 100 Mbit/s, 9 flows: utilization {u:.4}, Jain {:.3}, drops {}",
        r.jain_index.unwrap(),
        r.queues[0].drops
    );
    for cc in ALGOS {
        let flows: Vec<String> = r
            .flows
            .iter()
            .filter(|f| f.cc == cc)
            .map(|f| format!("{:.1} Mb/s ({} FR)", f.goodput_bps / 1e6, f.fast_recoveries))
            .collect();
        println!("  {cc:>8}: share {:.3}  flows {}", share(cc), flows.join(", "));
    }
    assert_eq!(r.flows.iter().filter(|f| f.cc == "cubic").count(), 3);
    assert!(u > 0.90, "utilization {u}");
    for cc in ALGOS {
        assert!(share(cc) > 0.10, "{cc} gets a non-trivial share: {}", share(cc));
    }
    // As the paper finds with DropTail: CUBIC is the most aggressive of the three.
    assert!(share("cubic") > share("newreno") && share("cubic") > share("compound"));
}
