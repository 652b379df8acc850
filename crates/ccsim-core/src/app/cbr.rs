//! Constant bit rate: a packet of `packet_size` bytes every `packet_size * 8 / rate`
//! (ns-2 CBR, ns-3 `OnOffApplication` always on). Implemented as periodic messages.

use super::periodic::Periodic;
use super::{AppModel, SEND_BUFFER};
use crate::params::{ParamKind, ParamSpec, ParamValue, Params};
use crate::registry::Randomness;
use crate::sim::time::{tx_time, Time};

static PARAMS: &[ParamSpec] = &[
    ParamSpec::new("rate", ParamKind::Rate, None, "application data rate").range(1.0, 1e13),
    ParamSpec::new("packet_size", ParamKind::Bytes, Some(ParamValue::Int(1000)), "payload per packet")
        .range(1.0, 65507.0),
    SEND_BUFFER,
];

/// Registration.
pub const MODEL: AppModel = AppModel {
    name: "cbr",
    doc: "constant bit rate: packet_size bytes every packet_size*8/rate",
    params: PARAMS,
    random: Randomness::Never,
    flow_refs: &[],
    build: |p: &Params, start, stop, _rng| {
        let size = p.uint("packet_size");
        let period: Time = tx_time(size as u32, p.uint("rate"));
        Box::new(Periodic::new(start, stop, size, period, p.uint("buffer")))
    },
};
