//! The network: link directions (transmitter + wire + output queue), static routes and
//! per-packet processing at nodes.

pub mod link;
pub mod processing;
pub mod route;
