//! The packet path does not allocate: once queues, wires and scoreboards have grown to their
//! working size, events run without touching the heap allocator (no allocation per event).
//! Counted with a global allocator wrapper, so this file is its own test binary.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use ccsim_core::sim::time::{MS, SEC};
use ccsim_core::Simulation;
use common::*;

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn steady_state_events_do_not_allocate() {
    // Twenty SACK flows through a 100-packet DropTail: drops, SACK recoveries, delayed ACKs
    // and the RTO all run in the measured interval.
    let mut cfg = dumbbell(20, 50_000_000, 2 * MS, droptail(100), 1_000_000_000, |i| (1 + i as u64) * MS);
    cfg.duration_ns = 14 * SEC;
    for i in 0..20 {
        let mut f = bulk_tcp(20, i, "newreno");
        f.start_max_ns = Some(SEC);
        cfg.flows.push(f);
    }
    let mut sim = Simulation::new(&cfg).unwrap();
    // Warm-up: buffers grow to their working size.
    sim.run_until(8 * SEC);
    let (events0, allocs0) = (sim.events_executed(), ALLOCATIONS.load(Ordering::Relaxed));
    sim.run_until(14 * SEC);
    let events = sim.events_executed() - events0;
    let allocs = ALLOCATIONS.load(Ordering::Relaxed) - allocs0;
    let drops: u64 = (0..20).map(|f| sim.flow_stats(f).total_lost).sum();
    assert!(drops > 0, "the scenario must exercise loss recovery");
    assert!(events > 100_000, "{events} events");
    // A rare capacity doubling (a new record of out-of-order ranges) is fine; one allocation
    // per packet or per event is what this test catches.
    assert!(allocs * 10_000 < events, "{allocs} allocations in {events} events");
}
