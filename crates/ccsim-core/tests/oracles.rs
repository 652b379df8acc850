//! Analytic oracles: the simulator against closed-form queueing results (Kleinrock, *Queueing
//! Systems* Vol. 1, 1975; Pollaczek-Khinchine for M/G/1) and TCP results (the Mathis et al.
//! 1997 throughput formula).
//!
//! - M/M/1 and M/D/1: Poisson UDP arrivals (`poisson` app) into one FIFO (DropTail) link.
//!   `QueueResult.mean_len_pkts` excludes the packet in transmission, so it is Lq, and
//!   `mean_sojourn_s` runs from enqueue to the start of transmission, so it is Wq:
//!   M/M/1 Lq = rho^2 / (1 - rho), M/D/1 Lq = rho^2 / (2 (1 - rho)) (Pollaczek-Khinchine with
//!   zero service variance), Wq = Lq / lambda (Little).
//! - Little's law L = lambda_accepted * W on every queue of every run here.
//! - Mathis et al. (1997): one NewReno flow under Bernoulli loss p.

mod common;

use ccsim_core::config::{AlgoSpec, Config, DirSpec, FlowSpec, NodeKind, NodeSpec, TraceSpec};
use ccsim_core::params::{ParamValue, Size};
use ccsim_core::results::QueueResult;
use ccsim_core::sim::time::{MS, SEC, US};
use common::*;

/// Two hosts a -> b over one link, `ab` from a to b and its twin without wire loss back;
/// `flow` from a to b.
fn two_hosts(ab: DirSpec, duration: u64, warmup: u64, seed: u64, flow: FlowSpec) -> Config {
    let ba = DirSpec { loss: 0.0, ..ab.clone() };
    Config {
        duration_ns: duration,
        warmup_ns: warmup,
        seed,
        nodes: vec![
            NodeSpec { name: "a".into(), kind: NodeKind::Host, processing: None },
            NodeSpec { name: "b".into(), kind: NodeKind::Host, processing: None },
        ],
        links: vec![ccsim_core::config::LinkSpec { a: 0, b: 1, ab, ba, schedule: Vec::new() }],
        flows: vec![flow],
        trace: TraceSpec::default(),
        bottleneck: None,
        jain_flows: None,
        control: Vec::new(),
        workloads: Vec::new(),
    }
}

/// Little's law on one queue: time-average length = departure rate * mean sojourn. Both
/// sides are measured over the same window; they differ only by the packets queued at the
/// window's edges (at most the max queue length, over >= thousands of departures), so 2 %
/// is generous yet catches any mis-accounting of length or sojourn (which would be off by
/// a service time per packet, i.e. tens of percent at these loads).
fn assert_little(q: &QueueResult, window_s: f64) {
    if q.departures < 1000 {
        return;
    }
    let lambda = q.departures as f64 / window_s;
    let rhs = lambda * q.mean_sojourn_s;
    let err = (q.mean_len_pkts - rhs).abs();
    assert!(
        err <= 0.02 * q.mean_len_pkts.max(rhs) + 1e-3,
        "Little on {}: L = {} vs lambda W = {}",
        q.name,
        q.mean_len_pkts,
        rhs
    );
}

/// Link rate: 1000 B take 1 us, so a million packets fit in about a second of simulated time.
const RATE: u64 = 8_000_000_000;
const SIZE: u64 = 1000;

/// Run a Poisson source at load `rho` for `n` mean service times; (Lq, Wq, lambda, result).
fn mg1(rho: f64, exp_size: bool, n: u64) -> (f64, f64, f64) {
    let service_ns = SIZE * 8 * SEC / RATE; // 1 us
                                            // Warm-up: the queue relaxes from empty in ~ 1/(1-sqrt(rho))^2 service times (~400 at
                                            // rho = 0.9); 1 % of the run is far more.
    let warmup = n / 100 * service_ns;
    let duration = warmup + n * service_ns;
    let flow = FlowSpec {
        name: None,
        src: 0,
        dst: 1,
        // No header: the wire size is the drawn size, so service is exactly size * 8 / rate.
        transport: AlgoSpec::named("udp").with("header", ParamValue::Int(0)),
        cc: None,
        app: AlgoSpec::named("poisson")
            .with("rate", ParamValue::Int((rho * RATE as f64) as i64))
            .with("packet_size", ParamValue::Int(SIZE as i64))
            .with("exp_size", ParamValue::Bool(exp_size)),
        start_ns: 0,
        start_max_ns: None,
        stop_ns: None,
        group: None,
    };
    // DropTail limit far above any queue these loads reach (P(Lq > 10^6) is nil).
    let r = run(&two_hosts(dir(RATE, 10 * US, droptail(1_000_000)), duration, warmup, 11, flow));
    let window_s = (duration - warmup) as f64 / SEC as f64;
    for q in &r.queues {
        assert_little(q, window_s);
    }
    let q = r.queues.iter().find(|q| q.name == "a->b").expect("queue a->b");
    assert_eq!(q.drops, 0, "the buffer is large enough that nothing drops");
    let lambda = q.arrivals as f64 / window_s;
    (q.mean_len_pkts, q.mean_sojourn_s, lambda)
}

/// Run length (service times) so that 3 standard deviations of the Lq estimate are within
/// `tol`. Whitt (1989, "Planning queueing simulations") gives the asymptotic variance of the
/// time-average number in an M/M/1 system as 2 rho (1 + rho) / (1 - rho)^4 per unit time (in
/// service times); relative to Lq = rho^2 / (1 - rho) this is 2 (1 + rho) / (rho^3 (1 - rho)^2).
/// M/D/1 fluctuates less, so the same length is conservative for it.
fn run_length(rho: f64, tol: f64) -> u64 {
    let rel_var = 2.0 * (1.0 + rho) / (rho.powi(3) * (1.0 - rho).powi(2));
    (9.0 * rel_var / (tol * tol)).ceil() as u64
}

/// Check Lq and Wq against the formula at load `rho` within `tol` (relative).
fn check_mg1(rho: f64, exp_size: bool, tol: f64) {
    let (lq, wq, lambda) = mg1(rho, exp_size, run_length(rho, tol));
    let lq_theory = if exp_size { rho * rho / (1.0 - rho) } else { rho * rho / (2.0 * (1.0 - rho)) };
    let wq_theory = lq_theory / lambda;
    // Offered load itself: lambda * service time = rho (Poisson count, sd << 1 %).
    let rho_meas = lambda * (SIZE * 8) as f64 / RATE as f64;
    eprintln!(
        "rho {rho} exp_size {exp_size}: Lq {lq:.4} (theory {lq_theory:.4}), Wq {wq:.4e} s (theory {wq_theory:.4e} s)"
    );
    assert!((rho_meas / rho - 1.0).abs() < 0.01, "offered load {rho_meas} vs {rho}");
    assert!((lq / lq_theory - 1.0).abs() < tol, "rho {rho} exp {exp_size}: Lq {lq} vs {lq_theory}");
    assert!((wq / wq_theory - 1.0).abs() < tol, "rho {rho} exp {exp_size}: Wq {wq} vs {wq_theory}");
}

// Exponential sizes are rounded to whole bytes (mean 1000 B, so the service distribution's
// mean and variance move by < 0.1 %) and transmission times are rounded up to whole ns
// (+0.5 ns on a 1000 ns mean: +0.05 % on rho, which moves Lq by ~ 0.05 % * (2 - rho)/(1 - rho)
// < 1 % at rho = 0.9); both are well inside the tolerances. Tolerance 3 % at rho <= 0.8; at
// 0.9 the run length needed grows like 1/(1-rho)^2, so 5 % keeps the test short (1.9 M
// service times).

#[test]
fn mm1_queue_matches_lq_and_wq_at_load_0_5() {
    check_mg1(0.5, true, 0.03);
}

#[test]
fn mm1_queue_matches_lq_and_wq_at_load_0_8() {
    check_mg1(0.8, true, 0.03);
}

#[test]
fn mm1_queue_matches_lq_and_wq_at_load_0_9() {
    check_mg1(0.9, true, 0.05);
}

#[test]
fn md1_queue_matches_lq_and_wq_at_load_0_5() {
    check_mg1(0.5, false, 0.03);
}

#[test]
fn md1_queue_matches_lq_and_wq_at_load_0_8() {
    check_mg1(0.8, false, 0.03);
}

#[test]
fn md1_queue_matches_lq_and_wq_at_load_0_9() {
    check_mg1(0.9, false, 0.05);
}

#[test]
fn deterministic_sizes_halve_the_waiting_of_exponential_ones() {
    // Pollaczek-Khinchine: Lq is proportional to (1 + Cs^2), Cs = 0 vs 1; a model-free
    // consequence, and it fails if `exp_size` were ignored. Same tolerance budget as above.
    let n = run_length(0.8, 0.05);
    let (lq_d, _, _) = mg1(0.8, false, n);
    let (lq_m, _, _) = mg1(0.8, true, n);
    eprintln!("Lq exponential / deterministic = {}", lq_m / lq_d);
    assert!((lq_m / lq_d / 2.0 - 1.0).abs() < 0.1, "ratio {}", lq_m / lq_d);
}

/// Mathis, Semke, Mahdavi, Ott, "The Macroscopic Behavior of the TCP Congestion Avoidance
/// Algorithm", ACM CCR 27(3), 1997: BW = MSS/RTT * sqrt(3/(2b)) / sqrt(p).
///
/// Choices: `sack = false` (NewReno, RFC 6582, the Reno-style AIMD(1, 1/2) the formula
/// models); `delack_count = 1`, so every segment is ACKed and b = 1 (C = sqrt(3/2)): with
/// b = 2 the window growth would also depend on the delayed-ACK timer at small windows.
/// Path: 10 ms each way (RTT 20 ms) on 1 Gb/s, so the flow (<= ~90 Mb/s) never queues and
/// RTT is the fixed delay; a 10^5-packet buffer and rwnd 4 MB (default) never bind; losses
/// are only the Bernoulli ones on a->b. `min_rto = 200 ms` (Linux) so that the few timeouts
/// at p = 1 % cost what they cost in practice.
///
/// Band 0.75..1.33 of the formula (a factor 4/3 either way): +-20 % would need >= 1000 loss
/// events; we have fewer (below), hence the wider band. Systematic
/// deviations it must absorb: the formula ignores timeouts and slow start (throughput below
/// it at large p) and counts loss *events*, while several Bernoulli losses in one window
/// make one event (throughput above it, growing with p). The run lengths give ~150
/// loss events at p = 1e-4, ~200 at 1e-3 and ~600 at 1e-2 (a sawtooth cycle's throughput
/// varies by tens of percent, so the mean over >= 150 cycles is within a few percent).
fn mathis(p: f64, duration: u64) -> f64 {
    let mss = 1448u64;
    let flow = FlowSpec {
        name: None,
        src: 0,
        dst: 1,
        transport: AlgoSpec::named("tcp")
            .with("sack", ParamValue::Bool(false))
            .with("delack_count", ParamValue::Int(1))
            .with("min_rto", ParamValue::Int((200 * MS) as i64))
            .with("mss", ParamValue::Int(mss as i64))
            .with("rwnd", ParamValue::Size(Size::Bytes(64 << 20))),
        cc: Some(AlgoSpec::named("newreno")),
        app: AlgoSpec::named("bulk"),
        start_ns: 0,
        start_max_ns: None,
        stop_ns: None,
        group: None,
    };
    let warmup = 2 * SEC;
    let r = run(&two_hosts(
        DirSpec { loss: p, ..dir(1_000_000_000, 10 * MS, droptail(100_000)) },
        duration,
        warmup,
        5,
        flow,
    ));
    let window_s = (duration - warmup) as f64 / SEC as f64;
    for q in &r.queues {
        assert_little(q, window_s);
    }
    let goodput = r.flows[0].goodput_bps;
    let losses: u64 = r.queues.iter().map(|q| q.link_losses).sum();
    eprintln!("p {p}: goodput {goodput:.4e} b/s, link losses {losses}");
    let rtt = 0.020;
    let oracle = (mss * 8) as f64 / rtt * (1.5f64).sqrt() / p.sqrt();
    eprintln!("p {p}: Mathis {oracle:.4e} b/s, ratio {}", goodput / oracle);
    goodput / oracle
}

#[test]
fn newreno_under_random_loss_follows_mathis_at_p_1e_4() {
    let ratio = mathis(1e-4, 200 * SEC);
    assert!((0.75..1.33).contains(&ratio), "goodput / Mathis = {ratio}");
}

#[test]
fn newreno_under_random_loss_follows_mathis_at_p_1e_3() {
    let ratio = mathis(1e-3, 100 * SEC);
    assert!((0.75..1.33).contains(&ratio), "goodput / Mathis = {ratio}");
}

#[test]
fn newreno_under_random_loss_follows_mathis_at_p_1e_2() {
    let ratio = mathis(1e-2, 100 * SEC);
    assert!((0.75..1.33).contains(&ratio), "goodput / Mathis = {ratio}");
}
