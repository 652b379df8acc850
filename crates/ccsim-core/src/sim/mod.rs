//! The discrete-event core: simulated time, the event queue and random streams.

pub mod dist;
pub mod histogram;
pub mod queue;
pub mod rng;
pub mod time;
