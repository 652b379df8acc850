//! Compound TCP end to end: link utilization and packet conservation on a 10 Mbit/s
//! dumbbell, the delay-based window backing off at gamma packets of backlog, and the
//! low-window rule leaving small windows to Reno.

mod common;

use ccsim_core::config::{AlgoSpec, Config};
use ccsim_core::params::ParamValue;
use ccsim_core::sim::time::{MS, SEC};
use common::*;

/// One Compound flow on 10 Mbit/s for 60 s (10 s warm-up), one-way bottleneck delay
/// `half_rtt` (access links add 1 ms each way), a `buffer`-packet DropTail queue.
fn one_flow(half_rtt: u64, buffer: u64, gamma: Option<f64>) -> Config {
    let mut cfg = dumbbell(1, 10_000_000, half_rtt, droptail(buffer), 1_000_000_000, |_| MS);
    cfg.duration_ns = 60 * SEC;
    cfg.warmup_ns = 10 * SEC;
    let mut f = bulk_tcp(1, 0, "compound");
    if let Some(g) = gamma {
        f.cc = Some(AlgoSpec::named("compound").with("gamma", ParamValue::Float(g)));
    }
    cfg.flows.push(f);
    cfg
}

#[test]
fn one_compound_flow_fills_a_10mbps_dumbbell() {
    // RTT 100 ms: BDP 83 packets, above the 38-packet low window, so dwnd takes part.
    let r = run(&one_flow(48 * MS, 83, None));
    let u = r.utilization.unwrap();
    let f = &r.flows[0];
    println!("compound 10 Mb/s, 100 ms, 83-packet buffer: utilization {u:.4}, goodput {:.0} b/s, {} fast recoveries, {} timeouts",
        f.goodput_bps, f.fast_recoveries, f.timeouts);
    assert_eq!(f.cc, "compound");
    assert!(u > 0.80, "utilization {u}");
    assert!(f.goodput_bps > 0.8 * 10e6);
}

#[test]
fn three_compound_flows_fill_a_10mbps_dumbbell() {
    let mut cfg = dumbbell(3, 10_000_000, 5 * MS, droptail(50), 100_000_000, |i| (1 + 5 * i as u64) * MS);
    cfg.duration_ns = 60 * SEC;
    cfg.warmup_ns = 10 * SEC;
    for i in 0..3 {
        let mut f = bulk_tcp(3, i, "compound");
        f.start_max_ns = Some(SEC);
        cfg.flows.push(f);
    }
    let r = run(&cfg);
    let u = r.utilization.unwrap();
    let g: Vec<f64> = r.flows.iter().map(|f| f.goodput_bps).collect();
    println!(
        "3 compound flows (RTT 14/34/54 ms): utilization {u:.4}, goodputs {g:?}, Jain {:.3}",
        r.jain_index.unwrap()
    );
    assert!(u > 0.80, "utilization {u}");
    assert!(g.iter().all(|&x| x > 0.1 * 10e6 / 3.0), "every flow progresses: {g:?}");
}

#[test]
fn the_delay_window_backs_off_at_gamma_and_spares_losses() {
    // 100 ms RTT, one-BDP buffer. With gamma = 30 the delay window is withdrawn once the
    // flow's backlog estimate reaches 30 packets and the window then grows as Reno's; with
    // the rule disabled (gamma beyond any backlog) dwnd keeps growing by 0.125 win^0.75 per
    // RTT into every overflow.
    let backs_off = run(&one_flow(48 * MS, 83, Some(30.0)));
    let never = run(&one_flow(48 * MS, 83, Some(1e6)));
    let (a, b) = (backs_off.flows[0].fast_recoveries, never.flows[0].fast_recoveries);
    println!(
        "fast recoveries in 50 s: gamma 30: {a}, delay rule disabled: {b}; drops {} vs {}",
        backs_off.queues[0].drops, never.queues[0].drops
    );
    assert!(a > 0 && 2 * a < b, "{a} vs {b}");
    assert!(backs_off.utilization.unwrap() > 0.95);
}

#[test]
fn below_the_low_window_compound_is_reno_and_gamma_is_irrelevant() {
    // 20 ms RTT, 17-packet buffer: the window never exceeds 34 < 38 packets, so dwnd stays
    // 0 and the runs with and without the delay rule are identical.
    let a = run(&one_flow(8 * MS, 17, Some(30.0)));
    let b = run(&one_flow(8 * MS, 17, Some(1e6)));
    assert_eq!(serde_json::to_string(&a.flows).unwrap(), serde_json::to_string(&b.flows).unwrap());
    let u = a.utilization.unwrap();
    println!("20 ms RTT, 17-packet buffer: utilization {u:.4}, {} fast recoveries", a.flows[0].fast_recoveries);
    assert!(u > 0.80, "utilization {u}");
    assert!(a.flows[0].fast_recoveries > 10);
}
