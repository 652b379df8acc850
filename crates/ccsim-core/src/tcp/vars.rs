//! The variables every TCP sender offers to the traces (`trace.flow_vars`), whatever its
//! congestion control, read through the sender's accessors at sampling times.

use super::cc::CaState;
use super::sender::TcpSender;
use crate::sim::time::secs;
use crate::vars::{OfferedVars, VarSpec, VarUnit};

/// The sender's traceable variables (the `tcp` transport's in the registry).
pub static SENDER_VARS: &[VarSpec] = &[
    VarSpec::new("cwnd", VarUnit::Bytes, "congestion window (the cwnd_bytes column of trace.cwnd)"),
    VarSpec::new("ssthresh", VarUnit::Bytes, "slow-start threshold; NaN while unlimited (init_ssthresh = 0)"),
    VarSpec::new("srtt", VarUnit::Seconds, "smoothed RTT (RFC 6298 SRTT); NaN before the first RTT sample"),
    VarSpec::new("rttvar", VarUnit::Seconds, "RTT variation (RFC 6298 RTTVAR); NaN before the first RTT sample"),
    VarSpec::new("rto", VarUnit::Seconds, "retransmission timeout, backoff included (RFC 6298)"),
    VarSpec::new(
        "pacing_rate",
        VarUnit::BitsPerSecond,
        "rate the sender paces at (the congestion control's, or Linux's default 2 or 1.2 x cwnd / srtt), also computed when pacing is off; NaN before the first RTT sample unless the algorithm sets it",
    ),
    VarSpec::new("inflight", VarUnit::Bytes, "data believed in the network (RFC 6675 pipe)"),
    VarSpec::new("outstanding", VarUnit::Bytes, "data sent and not cumulatively acknowledged (RFC 5681 FlightSize)"),
    VarSpec::new(
        "cc_state",
        VarUnit::State,
        "loss recovery: 0 none (Linux Open), 1 fast recovery (Recovery), 2 recovery after a timeout (Loss)",
    ),
];

/// What a sender offers: its own variables and its congestion control's.
pub(crate) fn offered(s: &TcpSender) -> OfferedVars {
    OfferedVars { model: s.cc().name(), own: SENDER_VARS, model_vars: s.cc().vars() }
}

/// The current value of variable `name` of sender `s`, its own or its congestion control's.
pub(crate) fn sender_var(s: &TcpSender, name: &str) -> Option<f64> {
    let st = s.state();
    let rtt = s.rtt_estimator();
    let value = match name {
        "cwnd" => st.cwnd as f64,
        // The "unlimited" initial threshold is a large finite number (tcp/mod.rs).
        "ssthresh" if st.ssthresh >= u64::MAX / 4 => f64::NAN,
        "ssthresh" => st.ssthresh as f64,
        "srtt" => rtt.srtt.map_or(f64::NAN, secs),
        "rttvar" => rtt.srtt.map_or(f64::NAN, |_| secs(rtt.rttvar)),
        "rto" => secs(rtt.rto()),
        "pacing_rate" => Some(s.pacing_rate_now()).filter(|r| r.is_finite()).map_or(f64::NAN, |r| 8.0 * r),
        "inflight" => s.inflight() as f64,
        "outstanding" => s.outstanding() as f64,
        "cc_state" => match s.ca_state() {
            CaState::Open => 0.0,
            CaState::Recovery => 1.0,
            CaState::Loss => 2.0,
        },
        _ => return s.cc().var(name),
    };
    Some(value)
}
