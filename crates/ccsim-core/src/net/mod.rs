//! The network: link directions (transmitter + wire + output queue), static routes,
//! per-packet processing at nodes and packet captures of link directions.

pub mod link;
pub mod pcap;
pub mod processing;
pub mod route;
