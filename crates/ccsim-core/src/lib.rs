//! ccsim-core: a deterministic packet-level simulator for TCP congestion control, active
//! queue management and networked control systems.
//!
//! Build a [`config::Config`] (or let the Python front compile a scenario file into one),
//! make a [`Simulation`], run it, read its [`results::Results`].
//!
//! Design: integer-nanosecond time and one event queue ordered by (time, insertion
//! sequence), so a seed gives bit-identical runs; one random stream per component; components
//! in vectors addressed by index; packets are small `Copy` values; models (queue
//! disciplines, congestion controls, endpoints, applications) are sans-IO state machines
//! behind one trait per family, one file per algorithm.
#![warn(missing_docs)]

pub mod app;
pub mod config;
pub mod dccp;
pub mod endpoint;
pub mod engine;
pub mod error;
pub mod external;
pub mod invariants;
pub mod messages;
pub mod ncs;
pub mod net;
pub mod packet;
pub mod params;
pub mod qdisc;
pub mod registry;
pub mod results;
pub mod sim;
pub mod stats;
pub mod tcp;
pub mod transport;
pub mod udp;
pub mod vars;
pub mod workload;

pub use config::Config;
pub use engine::Simulation;
pub use error::{ConfigError, Stalled, STALL_EVENTS};
pub use results::Results;

/// Parse a JSON core configuration.
pub fn config_from_json(json: &str) -> Result<Config, ConfigError> {
    serde_json::from_str(json).map_err(|e| {
        // serde's message names the field ("unknown field `x`, expected one of ...").
        ConfigError::new(format!("config (line {}, column {})", e.line(), e.column()), e.to_string())
    })
}

/// Parse a JSON core configuration and run every check of building it, keeping nothing.
pub fn validate_json(json: &str) -> Result<(), ConfigError> {
    Simulation::validate(&config_from_json(json)?)
}

/// Parse a JSON core configuration and build the simulation.
pub fn from_json(json: &str) -> Result<Simulation, ConfigError> {
    Simulation::new(&config_from_json(json)?)
}
