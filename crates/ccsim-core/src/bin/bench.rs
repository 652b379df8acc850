//! Runs one core configuration (JSON file) and prints wall time (of the run, and of building
//! the simulation from the configuration's text), events, peak memory and the bottleneck's
//! packet count as JSON. Used by `make bench`; memory is read from
//! /proc/self/status (VmHWM), so each measurement is its own process.

use std::time::Instant;

fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn main() {
    let path = std::env::args().nth(1).unwrap_or_else(|| {
        eprintln!("usage: ccsim-bench CONFIG.json");
        std::process::exit(2);
    });
    let json = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("ccsim-bench: {path}: {e}");
        std::process::exit(2);
    });
    let built = Instant::now();
    let mut sim = ccsim_core::from_json(&json).unwrap_or_else(|e| {
        eprintln!("ccsim-bench: {path}: {e}");
        std::process::exit(2);
    });
    let build = built.elapsed().as_secs_f64();
    let t0 = Instant::now();
    sim.run();
    let wall = t0.elapsed().as_secs_f64();
    let results = sim.results();
    // Packets the bottleneck transmitted over the whole run, warm-up included (the benchmark's
    // definition, docs/performance.md).
    let bottleneck_tx = results.bottleneck.as_deref().and_then(|b| sim.queue(b)).map(|q| q.stats.total_out);
    let out = serde_json::json!({
        "wall_s": wall,
        "build_s": build,
        "events": results.events,
        "bottleneck_packets": bottleneck_tx,
        "peak_rss_bytes": peak_rss_bytes(),
        "results": results,
    });
    println!("{out}");
}
