//! Errors exist only at the edges: a scenario is checked once when the simulation is built;
//! the hot path cannot fail.

use std::fmt;

/// A scenario that cannot be simulated: which field, and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// Dotted path of the offending field in the core configuration (e.g. `flows[3].cc.beta`).
    pub field: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl ConfigError {
    /// A new error for `field`.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigError { field: field.into(), message: message.into() }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for ConfigError {}

/// Simulated time stopped advancing: this many events in a row happened at one instant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stalled {
    /// The instant (ns).
    pub time: u64,
    /// Events run at it (at least).
    pub events: u64,
    /// The next one due, in the scenario's names.
    pub next: String,
}

/// Events in a row at one instant that stop a run ([`Stalled`]): far more than any scenario
/// that advances needs (every flow of a large topology starting together is a few per flow),
/// and reached within a few seconds of wall time by one that does not.
pub const STALL_EVENTS: u64 = 50_000_000;

impl fmt::Display for Stalled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "simulated time stopped advancing at t = {} ns: {} events in a row at that instant, the next: {}; \
             a timer or a link of zero duration keeps scheduling at the same time (check RTO bounds, \
             link rates and delays)",
            self.time, self.events, self.next
        )
    }
}

impl std::error::Error for Stalled {}
