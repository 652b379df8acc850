//! CUBIC end to end: link utilization and packet conservation on a 10 Mbit/s dumbbell, the
//! parameters reaching the algorithm from a configuration, and HyStart++ leaving the initial
//! slow start before a large buffer overflows.

mod common;

use ccsim_core::config::{AlgoSpec, Config};
use ccsim_core::params::ParamValue;
use ccsim_core::sim::time::{MS, SEC};
use ccsim_core::Simulation;
use common::*;

/// One flow on 10 Mbit/s with 20 ms RTT and a one-BDP (17-packet) buffer, as the NewReno
/// baseline in `e2e.rs`, for 60 s.
fn one_flow(cc: AlgoSpec) -> Config {
    let mut cfg = dumbbell(1, 10_000_000, 8 * MS, droptail(17), 1_000_000_000, |_| MS);
    cfg.duration_ns = 60 * SEC;
    let mut f = bulk_tcp(1, 0, "cubic");
    f.cc = Some(cc);
    cfg.flows.push(f);
    cfg
}

#[test]
fn one_cubic_flow_fills_a_10mbps_dumbbell() {
    let r = run(&one_flow(AlgoSpec::named("cubic")));
    let u = r.utilization.unwrap();
    let f = &r.flows[0];
    println!(
        "cubic 10 Mb/s 60 s: utilization {u:.4}, goodput {:.0} b/s, {} fast recoveries, {} timeouts, {} drops",
        f.goodput_bps, f.fast_recoveries, f.timeouts, r.queues[0].drops
    );
    assert_eq!(f.cc, "cubic");
    assert!(u > 0.80, "utilization {u}");
    assert!(f.fast_recoveries > 0, "the buffer overflows now and then");
    // At most the one timeout that ends the initial slow start's overshoot (NewReno has it
    // too): later reductions to 0.7 W_max leave the retransmissions room in the buffer.
    assert!(f.timeouts <= 1, "{} timeouts", f.timeouts);
}

#[test]
fn three_cubic_flows_with_different_rtts_fill_a_10mbps_dumbbell() {
    // RTTs 14, 34 and 54 ms; 50-packet buffer.
    let mut cfg = dumbbell(3, 10_000_000, 5 * MS, droptail(50), 100_000_000, |i| (1 + 5 * i as u64) * MS);
    cfg.duration_ns = 60 * SEC;
    cfg.warmup_ns = 10 * SEC;
    for i in 0..3 {
        let mut f = bulk_tcp(3, i, "cubic");
        f.start_max_ns = Some(SEC);
        cfg.flows.push(f);
    }
    let r = run(&cfg);
    let u = r.utilization.unwrap();
    let g: Vec<f64> = r.flows.iter().map(|f| f.goodput_bps).collect();
    println!("3 cubic flows: utilization {u:.4}, goodputs {g:?}, Jain {:.3}", r.jain_index.unwrap());
    assert!(u > 0.80, "utilization {u}");
    assert!(g.iter().all(|&x| x > 0.1 * 10e6 / 3.0), "every flow progresses: {g:?}");
}

#[test]
fn parameters_reach_cubic_from_the_configuration() {
    // A smaller beta backs off more: beta = 0.5 cannot keep a 0.3-BDP buffer's link busy
    // as well as beta = 0.7 (after a loss the window falls to beta * (BDP + buffer)).
    let cfg_with = |beta: f64| {
        let mut cfg = dumbbell(1, 10_000_000, 48 * MS, droptail(25), 1_000_000_000, |_| MS);
        cfg.duration_ns = 30 * SEC;
        cfg.warmup_ns = 5 * SEC;
        let mut f = bulk_tcp(1, 0, "cubic");
        f.cc = Some(
            AlgoSpec::named("cubic")
                .with("beta", ParamValue::Float(beta))
                .with("tcp_friendliness", ParamValue::Bool(false)),
        );
        cfg.flows.push(f);
        cfg
    };
    let u7 = run(&cfg_with(0.7)).utilization.unwrap();
    let u5 = run(&cfg_with(0.5)).utilization.unwrap();
    println!("100 ms RTT, 0.3 BDP buffer: utilization beta 0.7 {u7:.4}, beta 0.5 {u5:.4}");
    assert!(u7 > u5 + 0.02, "beta 0.7 {u7} vs beta 0.5 {u5}");
    // Unknown or out-of-range parameters are refused with the field named.
    let mut cfg = one_flow(AlgoSpec::named("cubic").with("beta", ParamValue::Float(1.5)));
    cfg.duration_ns = SEC;
    let e = Simulation::new(&cfg).err().unwrap();
    assert_eq!(e.field, "flows[0].cc.beta");
}

#[test]
fn hystart_leaves_slow_start_before_a_large_buffer_overflows() {
    // 10 Mbit/s, 100 ms RTT (BDP 83 packets), 1500-packet buffer: standard slow start
    // doubles until the buffer overflows by hundreds of packets. HyStart++ sees the round's
    // minimum RTT grow by more than 12.5 ms one round after the window passes the BDP
    // (cwnd about 340) and continues in CSS at a quarter of the rate for 5 rounds (to about
    // 1000 segments, the rounds lengthening as the queue grows), then in congestion
    // avoidance: no loss in the first 5 s.
    let cfg_with = |hystart: bool| {
        let mut cfg = dumbbell(1, 10_000_000, 48 * MS, droptail(1500), 1_000_000_000, |_| MS);
        cfg.duration_ns = 5 * SEC;
        let mut f = bulk_tcp(1, 0, "cubic");
        f.cc = Some(AlgoSpec::named("cubic").with("hystart", ParamValue::Bool(hystart)));
        cfg.flows.push(f);
        cfg
    };
    let plain = run(&cfg_with(false));
    let hy = run(&cfg_with(true));
    let (dp, dh) = (plain.queues[0].drops, hy.queues[0].drops);
    println!(
        "first 5 s, 1500-packet buffer: drops {dp} without HyStart++, {dh} with; max queue {} vs {}; goodput {:.0} vs {:.0}",
        plain.queues[0].max_len_pkts, hy.queues[0].max_len_pkts, plain.flows[0].goodput_bps, hy.flows[0].goodput_bps
    );
    assert!(dp > 100, "slow start overshoots: {dp} drops");
    assert_eq!(dh, 0, "HyStart++ exits before the buffer overflows");
    assert!(plain.queues[0].max_len_pkts == 1500 && hy.queues[0].max_len_pkts < 1200);
    assert!(hy.flows[0].goodput_bps > 0.7 * 10e6, "and still fills the link: {}", hy.flows[0].goodput_bps);
}
