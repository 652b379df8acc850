//! End-to-end networked control loops (the ANCE paper, Sup, de Moraes, Bauchspiess, IJCNIS
//! 2020, sec. 4): the DC motor under PI control with its samples and controls travelling as UDP
//! packets, checked against the ideal (network-free) loop and against each other.

mod common;

use ccsim_core::config::{AlgoSpec, Config, ControlLoopSpec, FlowSpec, NodeKind, NodeSpec, TraceSpec};
use ccsim_core::ncs::ControlResult;
use ccsim_core::params::ParamValue;
use ccsim_core::sim::time::{Time, MS, SEC};
use ccsim_core::Simulation;
use common::*;

fn ncs_flow(src: u32, dst: u32, stop: Option<Time>) -> FlowSpec {
    FlowSpec {
        name: None,
        src,
        dst,
        transport: AlgoSpec::named("udp"),
        cc: None,
        app: AlgoSpec::named("ncs").with("size", ParamValue::Int(20)),
        start_ns: 0,
        start_max_ns: None,
        stop_ns: stop,
        group: None,
    }
}

/// Plant host 0 and controller host 1 joined by one link of `delay` each way; the paper's
/// loop with its sensor flow 0 -> 1 and actuator flow 1 -> 0.
fn two_hosts(delay: Time, duration: Time, sensor_stop: Option<Time>, actuator_stop: Option<Time>) -> Config {
    Config {
        duration_ns: duration,
        warmup_ns: 0,
        seed: 1,
        nodes: vec![
            NodeSpec { name: "plant".into(), kind: NodeKind::Host, processing: None },
            NodeSpec { name: "controller".into(), kind: NodeKind::Host, processing: None },
        ],
        // 100 Gbit/s: a 48 B packet takes 4 ns.
        links: vec![link(0, 1, dir(100_000_000_000, delay, droptail(1000)))],
        flows: vec![ncs_flow(0, 1, sensor_stop), ncs_flow(1, 0, actuator_stop)],
        trace: TraceSpec::default(),
        bottleneck: None,
        jain_flows: None,
        control: vec![ControlLoopSpec { sensor_flow: Some(0), actuator_flow: Some(1), ..ControlLoopSpec::default() }],
        workloads: Vec::new(),
    }
}

fn ideal(duration: Time) -> ControlResult {
    let mut cfg = two_hosts(0, duration, None, None);
    cfg.flows.clear();
    cfg.control[0].sensor_flow = None;
    cfg.control[0].actuator_flow = None;
    run(&cfg).control[0].clone()
}

#[test]
fn a_network_without_delay_reproduces_the_ideal_loop() {
    let net = &run(&two_hosts(0, 6 * SEC, None, None)).control[0];
    let ideal = ideal(6 * SEC);
    println!(
        "ideal ITAE {:.6} sum {:.3}; network ITAE {:.6} sum {:.3}",
        ideal.itae, ideal.itae_sum, net.itae, net.itae_sum
    );
    // The only difference is 2 x 4 ns of serialization per sample.
    assert_eq!(net.controls_applied, ideal.controls_applied);
    assert!(net.actuation_delay_max_s.unwrap() < 1e-8);
    assert!((net.itae - ideal.itae).abs() < 1e-4 * ideal.itae);
    assert!((net.itae_sum - ideal.itae_sum).abs() < 1e-4 * ideal.itae_sum);
}

#[test]
fn more_constant_network_delay_gives_a_larger_itae() {
    let delays_ms = [0, 2, 5, 10, 14];
    let mut last: Option<ControlResult> = None;
    for d in delays_ms {
        let r = run(&two_hosts(d * MS, 10 * SEC, None, None)).control[0].clone();
        let loop_delay = r.actuation_delay_mean_s.unwrap();
        println!(
            "one-way delay {d:>2} ms: actuation delay {:.4} s, ITAE {:.4}, ITAE sum {:.2}, IAE {:.4}, ISE {:.4}",
            loop_delay, r.itae, r.itae_sum, r.iae, r.ise
        );
        // Sample to actuation: both ways over the link (plus 2 x 4 ns serialization).
        assert!((loop_delay - 2.0 * d as f64 * 1e-3).abs() < 1e-7, "{loop_delay}");
        assert_eq!(r.samples_lost + r.controls_lost, 0);
        if let Some(prev) = &last {
            assert!(r.itae > prev.itae, "ITAE {} at {d} ms is not above {}", r.itae, prev.itae);
            assert!(r.itae_sum > prev.itae_sum);
        }
        last = Some(r);
    }
}

#[test]
fn losing_every_control_after_t0_freezes_the_actuator() {
    // The actuator flow stops at 5.003 s: the last control to get through is computed from the
    // sample of 4.998 s (5 ms each way) and applied at 5.008 s.
    let t0 = 5 * SEC + 3 * MS;
    let r = run(&two_hosts(5 * MS, 8 * SEC, None, Some(t0)));
    let c = &r.control[0];
    let tr = r.control_traces.as_ref().unwrap();
    let last_applied = tr.time_s.iter().position(|&t| t > 5.008).unwrap();
    let frozen = tr.control[last_applied];
    assert!(tr.control[last_applied..].iter().all(|&u| u == frozen), "u moved after the actuator's flow stopped");
    assert_eq!(c.final_u, frozen);
    // Before, it was moving; the controller kept computing after t0, but nothing arrived.
    assert!(tr.control[last_applied - 50..last_applied].windows(2).any(|w| w[0] != w[1]));
    assert!(c.controls > c.controls_applied + 100);
    assert!((c.actuation_delay_max_s.unwrap() - 0.010).abs() < 1e-6);
}

#[test]
fn losing_every_sample_after_t0_freezes_the_actuator_too() {
    let t0 = 5 * SEC;
    let r = run(&two_hosts(5 * MS, 8 * SEC, Some(t0), None));
    let c = &r.control[0];
    let tr = r.control_traces.as_ref().unwrap();
    let after = tr.time_s.iter().position(|&t| t > 5.0 + 0.011).unwrap();
    assert!(tr.control[after..].iter().all(|&u| u == c.final_u));
    assert_eq!(c.controls, c.controls_applied);
    // Samples are still taken at the plant (and scored), just not sent.
    assert_eq!(c.samples, 8000 / 14 + 1);
}

#[test]
fn control_loops_are_checked_and_errors_name_the_field() {
    let field = |cfg: &Config| Simulation::new(cfg).err().expect("rejected").field;
    let mut cfg = two_hosts(0, SEC, None, None);
    cfg.control[0].actuator_flow = None;
    assert_eq!(field(&cfg), "control[0].actuator_flow");
    let mut cfg = two_hosts(0, SEC, None, None);
    cfg.control[0].sensor_flow = Some(7);
    assert_eq!(field(&cfg), "control[0].sensor_flow");
    let mut cfg = two_hosts(0, SEC, None, None);
    cfg.control[0].actuator_flow = Some(0);
    assert_eq!(field(&cfg), "control[0].actuator_flow");
    let mut cfg = two_hosts(0, SEC, None, None);
    cfg.flows[1] = ncs_flow(0, 1, None);
    assert_eq!(field(&cfg), "control[0].actuator_flow", "same direction as the sensor flow");
    let mut cfg = two_hosts(0, SEC, None, None);
    cfg.flows[1].app = AlgoSpec::named("bulk");
    assert_eq!(field(&cfg), "control[0].actuator_flow");
    let mut cfg = two_hosts(0, SEC, None, None);
    cfg.control.clear();
    assert_eq!(field(&cfg), "flows[0].app.kind");
    let mut cfg = two_hosts(0, SEC, None, None);
    cfg.control[0].plant_num = vec![1.0, 2.0, 3.0, 4.0];
    assert_eq!(field(&cfg), "control[0].plant_den");
    let mut cfg = two_hosts(0, SEC, None, None);
    cfg.control[0].controller = AlgoSpec::named("pid").with("kp", ParamValue::Bool(true));
    assert_eq!(field(&cfg), "control[0].controller.kp");
    let mut cfg = two_hosts(0, SEC, None, None);
    cfg.control[0].reference = AlgoSpec::named("sine");
    assert_eq!(field(&cfg), "control[0].reference.kind");
    let mut cfg = two_hosts(0, SEC, None, None);
    cfg.control[0].period_ns = 0;
    assert_eq!(field(&cfg), "control[0].period_ns");
}

#[test]
fn random_losses_are_counted_per_direction_and_cost_performance() {
    let mut lossy = two_hosts(2 * MS, 10 * SEC, None, None);
    lossy.links[0].ab.loss = 0.2;
    lossy.links[0].ba.loss = 0.2;
    let r = run(&lossy);
    let c = &r.control[0];
    let clean = &run(&two_hosts(2 * MS, 10 * SEC, None, None)).control[0];
    println!(
        "loss 20 % each way: ITAE {:.4} (lossless {:.4}), samples lost {}, controls lost {}",
        c.itae, clean.itae, c.samples_lost, c.controls_lost
    );
    // The loop's counts are the flows' message counts (warm-up 0, so whole run = window).
    assert_eq!(c.samples_lost, r.flows[0].messages_lost_network);
    assert_eq!(c.controls_lost, r.flows[1].messages_lost_network);
    assert_eq!(c.controls, r.flows[0].messages_received);
    assert_eq!(c.controls_applied, r.flows[1].messages_received);
    // About 20 % of each, with a loose binomial bound (n ~ 700, sd ~ 11).
    let frac = c.samples_lost as f64 / c.samples as f64;
    assert!((frac - 0.2).abs() < 0.06, "{frac}");
    assert!(c.itae > clean.itae);
    // An applied control is never older than the previous one: no stale actuation over FIFO links.
    assert_eq!((c.samples_stale, c.controls_stale), (0, 0));
}
