//! Replays a failed run: `cargo run -p ccsim-core --bin ccsim-replay -- replay.json`.
//!
//! Takes the replay file `ccsim run` writes when the engine fails (its `config` is the exact
//! core configuration, seed included) or a bare core configuration. Built in debug mode (the
//! default for `cargo run`), every invariant of `invariants.rs` is checked, so a run that
//! went wrong silently in the release-built Python bindings stops at the first violation with
//! its time, component and values. Honours the test-only `_panic_at_ns` key as the bindings do.

fn main() {
    let path = std::env::args().nth(1).unwrap_or_else(|| {
        eprintln!("usage: ccsim-replay REPLAY.json");
        std::process::exit(2);
    });
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("ccsim-replay: {path}: {e}");
        std::process::exit(2);
    });
    let mut value: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| {
        eprintln!("ccsim-replay: {path}: {e}");
        std::process::exit(2);
    });
    if value.get("ccsim_replay").is_some() {
        value = value.get("config").cloned().unwrap_or_default();
    }
    let panic_at = value.as_object_mut().and_then(|m| m.remove("_panic_at_ns")).and_then(|v| v.as_u64());
    let mut sim = ccsim_core::from_json(&value.to_string()).unwrap_or_else(|e| {
        eprintln!("ccsim-replay: {path}: {e}");
        std::process::exit(2);
    });
    sim.set_panic_at(panic_at);
    sim.run();
    let checked = if cfg!(debug_assertions) { "every invariant held" } else { "release build: invariants not checked" };
    println!("{path}: ran to {} ns, {} events; {checked}", sim.now(), sim.events_executed());
}
