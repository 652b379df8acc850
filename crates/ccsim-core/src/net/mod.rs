//! The network: link directions (transmitter + wire + output queue) and static routes.

pub mod link;
pub mod route;
