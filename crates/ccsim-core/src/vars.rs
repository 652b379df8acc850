//! Traceable model variables: the state a model exposes to the sampled traces
//! (`trace.flow_vars`, `trace.queue_vars`), declared once as a static table of [`VarSpec`]s.
//!
//! A congestion control or a queue discipline declares its table with
//! `CongestionControl::vars` / `QueueDisc::vars` and reports current values by name with
//! `var`; the TCP sender declares its own ([`crate::tcp::vars::SENDER_VARS`], every TCP flow),
//! the queue wrapper its own ([`QUEUE_VARS`], every queue). The registry reads the tables
//! (`ccsim list`, Python validation, docs/models.md); the engine samples the named ones every
//! trace interval, never on the packet path.
//!
//! A variable's trace column is its name followed by its unit's suffix: `srtt` in seconds is
//! `flow.0.srtt_s`, `drop_prob` (a probability) is `queue.A->B.drop_prob`, as the columns
//! sampled before declared variables existed (`len_pkts`, `cwnd_bytes`, `retransmissions`).

use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

/// The unit of a traceable variable: it fixes the suffix of the trace column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarUnit {
    /// Bytes (`_bytes`).
    Bytes,
    /// Packets (`_pkts`).
    Packets,
    /// Segments of the flow's MSS (`_segs`), for models that keep their state in segments.
    Segments,
    /// Seconds (`_s`): durations, and instants in simulated time.
    Seconds,
    /// Bits per second (`_bps`), as the results' rates (`goodput_bps`).
    BitsPerSecond,
    /// A probability, 0..1 (no suffix).
    Probability,
    /// A fraction, 0..1, that is not a probability (an estimate of the marked fraction).
    Fraction,
    /// A dimensionless number (a gain, a score).
    Number,
    /// A count of events or things (no suffix), as `retransmissions`.
    Count,
    /// A state, coded as a small integer that the variable's doc lists (no suffix).
    State,
}

impl VarUnit {
    /// The suffix of the trace column.
    pub const fn suffix(self) -> &'static str {
        match self {
            VarUnit::Bytes => "_bytes",
            VarUnit::Packets => "_pkts",
            VarUnit::Segments => "_segs",
            VarUnit::Seconds => "_s",
            VarUnit::BitsPerSecond => "_bps",
            VarUnit::Probability | VarUnit::Fraction | VarUnit::Number | VarUnit::Count | VarUnit::State => "",
        }
    }

    /// The unit as written in listings and in the long form of the traces.
    pub const fn name(self) -> &'static str {
        match self {
            VarUnit::Bytes => "bytes",
            VarUnit::Packets => "packets",
            VarUnit::Segments => "segments",
            VarUnit::Seconds => "s",
            VarUnit::BitsPerSecond => "bit/s",
            VarUnit::Probability => "probability",
            VarUnit::Fraction => "fraction",
            VarUnit::Number => "number",
            VarUnit::Count => "count",
            VarUnit::State => "state",
        }
    }

    /// Every unit, for the registry's facts and tests.
    pub const ALL: [VarUnit; 10] = [
        VarUnit::Bytes,
        VarUnit::Packets,
        VarUnit::Segments,
        VarUnit::Seconds,
        VarUnit::BitsPerSecond,
        VarUnit::Probability,
        VarUnit::Fraction,
        VarUnit::Number,
        VarUnit::Count,
        VarUnit::State,
    ];
}

/// One traceable variable: its name in `trace.flow_vars` / `trace.queue_vars`, its unit and
/// what it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VarSpec {
    /// Name in scenarios: lowercase snake case, not ending in a unit suffix.
    pub name: &'static str,
    /// Unit of the values reported.
    pub unit: VarUnit,
    /// One line: what it is, its source's name for it, when it is NaN.
    pub doc: &'static str,
}

impl VarSpec {
    /// A declaration.
    pub const fn new(name: &'static str, unit: VarUnit, doc: &'static str) -> Self {
        VarSpec { name, unit, doc }
    }

    /// The last part of its trace column: the name and the unit's suffix (`srtt_s`).
    pub fn column(&self) -> String {
        format!("{}{}", self.name, self.unit.suffix())
    }
}

impl Serialize for VarSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut v = s.serialize_struct("VarSpec", 4)?;
        v.serialize_field("name", self.name)?;
        v.serialize_field("unit", self.unit.name())?;
        v.serialize_field("column", &self.column())?;
        v.serialize_field("doc", self.doc)?;
        v.end()
    }
}

/// What a flow's sending end offers to `trace.flow_vars` (see
/// [`crate::endpoint::Endpoint::vars`]): its own variables and its model's.
#[derive(Clone, Copy, Debug)]
pub struct OfferedVars {
    /// The model whose variables these are, for messages: a TCP sender's congestion control.
    pub model: &'static str,
    /// The end's own variables (every TCP sender's).
    pub own: &'static [VarSpec],
    /// The model's.
    pub model_vars: &'static [VarSpec],
}

impl OfferedVars {
    /// The variable called `name`, the end's own first.
    pub fn find(&self, name: &str) -> Option<&'static VarSpec> {
        find(self.own, name).or_else(|| find(self.model_vars, name))
    }
}

/// The variable called `name` in `vars`.
pub fn find(vars: &'static [VarSpec], name: &str) -> Option<&'static VarSpec> {
    vars.iter().find(|v| v.name == name)
}

/// The variables of every queue, kept by the queue wrapper whatever the discipline
/// (`qdisc::Queue::var`). `len` and `sojourn` are sampled for every traced queue anyway,
/// naming them adds nothing; `drops` and `marks` count as the queue's result row does.
pub static QUEUE_VARS: &[VarSpec] = &[
    VarSpec::new(
        "len",
        VarUnit::Packets,
        "packets waiting, the one in transmission excluded; sampled for every traced queue, with len_bytes in bytes",
    ),
    VarSpec::new(
        "sojourn",
        VarUnit::Seconds,
        "time the latest departure waited (0 when none yet); sampled for every traced queue",
    ),
    VarSpec::new("drops", VarUnit::Count, "packets dropped so far in the measured window (the queues table's drops)"),
    VarSpec::new("marks", VarUnit::Count, "packets CE-marked so far in the measured window (the queues table's marks)"),
];

/// The trace columns sampled without being named as variables, with the variable and unit
/// each stands for: per queue, `len_pkts`, `len_bytes`, `sojourn_s`; per flow, `cwnd_bytes`
/// (`trace.cwnd`), `delivered_bytes` and `retransmissions` (`trace.flow_counters`). Their
/// column names are built from these, so that the long form of the traces reads them back.
pub static QUEUE_COLUMNS: [VarSpec; 3] = [
    VarSpec::new("len", VarUnit::Packets, "packets waiting"),
    VarSpec::new("len", VarUnit::Bytes, "bytes waiting"),
    VarSpec::new("sojourn", VarUnit::Seconds, "time the latest departure waited"),
];

/// See [`QUEUE_COLUMNS`]: the window (`trace.cwnd`).
pub static CWND_COLUMN: VarSpec = VarSpec::new("cwnd", VarUnit::Bytes, "congestion window");

/// See [`QUEUE_COLUMNS`]: the flow counters (`trace.flow_counters`).
pub static COUNTER_COLUMNS: [VarSpec; 2] = [
    VarSpec::new("delivered", VarUnit::Bytes, "bytes delivered in order, cumulative over the measured window"),
    VarSpec::new("retransmissions", VarUnit::Count, "retransmissions, cumulative over the measured window"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_named_as_the_traces_always_were() {
        let names: Vec<String> =
            QUEUE_COLUMNS.iter().chain([&CWND_COLUMN]).chain(&COUNTER_COLUMNS).map(VarSpec::column).collect();
        assert_eq!(names, ["len_pkts", "len_bytes", "sojourn_s", "cwnd_bytes", "delivered_bytes", "retransmissions"]);
        assert_eq!(VarSpec::new("drop_prob", VarUnit::Probability, "").column(), "drop_prob");
        let json = serde_json::to_string(&QUEUE_VARS[1]).unwrap();
        assert!(json.starts_with(r#"{"name":"sojourn","unit":"s","column":"sojourn_s","doc":"#), "{json}");
    }
}
