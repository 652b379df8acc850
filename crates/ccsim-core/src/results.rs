//! What a run returns: per-flow and per-queue statistics over the measured window
//! (warm-up excluded), aggregate figures and sampled time series.

use serde::Serialize;
use std::collections::BTreeMap;

/// Everything a run measured.
#[derive(Clone, Debug, Serialize)]
pub struct Results {
    /// Master seed of the run.
    pub seed: u64,
    /// Events executed in the whole run.
    pub events: u64,
    /// Simulated time reached (s).
    pub duration_s: f64,
    /// Start of the measured window (s).
    pub warmup_s: f64,
    /// One entry per flow, in configuration order.
    pub flows: Vec<FlowResult>,
    /// One entry per link direction (output queue), in configuration order.
    pub queues: Vec<QueueResult>,
    /// Jain's fairness index of goodput over the chosen flows; `None` when undefined.
    pub jain_index: Option<f64>,
    /// Name of the bottleneck queue, if the scenario named one.
    pub bottleneck: Option<String>,
    /// Share of the bottleneck's capacity used in the measured window.
    pub utilization: Option<f64>,
    /// Sampled series: `time_s` plus one column per series, all the same length.
    pub traces: BTreeMap<String, Vec<f64>>,
    /// Every drop and mark with its time, when `trace.events` is on.
    pub queue_events: Option<QueueEventLog>,
    /// Every application message, when `trace.messages` is on.
    pub messages: Option<MessageLog>,
    /// Every RTT sample of every TCP sender, when `trace.rtt` is on.
    pub rtt_samples: Option<RttSampleLog>,
    /// One entry per control loop, in configuration order: scores and counters.
    pub control: Vec<crate::ncs::ControlResult>,
    /// Every control loop's reference, output, control and error at each sampling instant;
    /// `None` without loops.
    pub control_traces: Option<crate::ncs::ControlTraceLog>,
}

/// Application messages, one row per message delivered or found lost (and, at the end, one
/// per message still pending), as columns.
#[derive(Clone, Debug, Default, Serialize)]
pub struct MessageLog {
    /// Flow index.
    pub flow: Vec<u32>,
    /// Message index within the flow.
    pub index: Vec<u64>,
    /// When the application wrote it (s).
    pub created_s: Vec<f64>,
    /// When it was delivered (s); `None` if lost or still pending.
    pub delivered_s: Vec<Option<f64>>,
    /// Delivery delay (s); `None` if not delivered.
    pub delay_s: Vec<Option<f64>>,
    /// Known lost (a later datagram arrived first).
    pub lost: Vec<bool>,
}

/// RTT samples of the whole run (warm-up included), one row per sample, as columns, ordered
/// by time and then flow.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RttSampleLog {
    /// When the ACK carrying the sample arrived (s).
    pub time_s: Vec<f64>,
    /// Flow index.
    pub flow: Vec<u32>,
    /// The sample (s).
    pub rtt_s: Vec<f64>,
}

/// Drops and marks, one row per event, as columns.
#[derive(Clone, Debug, Default, Serialize)]
pub struct QueueEventLog {
    /// When (s).
    pub time_s: Vec<f64>,
    /// Queue name.
    pub queue: Vec<String>,
    /// Flow index.
    pub flow: Vec<u32>,
    /// `drop_overflow`, `drop_early` or `mark`.
    pub event: Vec<&'static str>,
}

/// Statistics of one flow over the measured window.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FlowResult {
    /// Index in the configuration.
    pub id: u32,
    /// Label (the index unless the scenario named it).
    pub name: String,
    /// Group label, if any.
    pub group: Option<String>,
    /// Sending host name.
    pub src: String,
    /// Receiving host name.
    pub dst: String,
    /// `tcp`, `udp` or `dccp`.
    pub transport: String,
    /// Congestion control name (TCP), `ccid2` or `ccid3` (DCCP), or empty.
    pub cc: String,
    /// Application name.
    pub app: String,
    /// Actual start time (s), after drawing from its window.
    pub start_s: f64,
    // The four columns below are left out of a row that has nothing to say in them (no
    // handshake, not a transfer), so that a run without handshakes and transfers gives the
    // results it gave before they existed, byte for byte; `Result` (Python) puts them back,
    // as NaN, 0 and false.
    /// Whole run: time from the first SYN to the SYN-ACK's arrival at the sender (s), TCP
    /// with `handshake`; `None` without a handshake or if the connection never opened.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connect_s: Option<f64>,
    /// Whole run: flow completion time (s) of a `transfer`, from its start (its first SYN, or
    /// its first data packet without a handshake) to the moment the receiving application has
    /// its last byte; `None` for other applications and for a transfer not complete at the
    /// end of the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fct_s: Option<f64>,
    /// Bytes the application writes in all, for a `transfer` (a workload's flows are).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<u64>,
    /// `fct_s` over the transfer's completion time alone on an idle path with a window that
    /// never limits it (`workload::ideal_fct`): 1 is as fast as the path allows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowdown: Option<f64>,
    /// Whole run: SYNs sent again because the SYN or SYN-ACK was lost (TCP with `handshake`).
    #[serde(skip_serializing_if = "is_zero")]
    pub syn_retransmissions: u64,
    /// The connection attempt was given up after `syn_retries` SYN retransmissions.
    #[serde(skip_serializing_if = "is_false")]
    pub connect_failed: bool,
    /// Application bytes delivered in order to the receiving application in the measured
    /// window. Data that arrived out of order before the window and is released by a
    /// retransmission inside it counts here, so this can exceed what the path carried.
    pub bytes_delivered: u64,
    /// Payload bytes that reached the receiving host for the first time in the measured
    /// window, each byte once, in order or not (duplicates and retransmissions of data
    /// already held add nothing).
    pub bytes_received: u64,
    /// Goodput, `bytes_received * 8 / window` (bit/s): summed over flows it never exceeds
    /// the payload the bottleneck carried (RFC 2647 §3.17 counts each payload byte once).
    pub goodput_bps: f64,
    /// Data packets the sender put on the wire (first transmissions and retransmissions).
    pub packets_sent: u64,
    /// Data packets that reached the receiving host (including duplicates).
    pub packets_received: u64,
    /// Retransmitted data packets.
    pub retransmissions: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Fast-recovery episodes entered.
    pub fast_recoveries: u64,
    /// ECN-Echo reactions (window reductions on ECE).
    pub ecn_reductions: u64,
    /// Packets of this flow CE-marked by queues.
    pub ecn_marks: u64,
    /// Packets of this flow (data or ACK) dropped by queues.
    pub queue_drops: u64,
    /// Packets of this flow (data or ACK) lost on links (random errors).
    pub link_losses: u64,
    /// RTT samples taken by the sender.
    pub rtt_samples: u64,
    /// Smallest RTT sample (s).
    pub rtt_min_s: Option<f64>,
    /// Mean RTT sample (s).
    pub rtt_mean_s: Option<f64>,
    /// Largest RTT sample (s).
    pub rtt_max_s: Option<f64>,
    /// Mean one-way delay of data packets that reached the receiver (s).
    pub delay_mean_s: Option<f64>,
    /// Largest one-way delay of data packets that reached the receiver (s).
    pub delay_max_s: Option<f64>,
    /// Median one-way delay of data packets that reached the receiver (s; from a log-linear
    /// histogram, within 6.25 %, as `p50_sojourn_s`).
    pub delay_p50_s: Option<f64>,
    /// 99th percentile of the one-way delay of data packets that reached the receiver (s; as
    /// `delay_p50_s`).
    pub delay_p99_s: Option<f64>,
    /// Messages the application generated (message-based applications).
    pub messages_generated: u64,
    /// Messages refused because the sender's buffer was full ("lost on sensor").
    pub messages_lost_at_sender: u64,
    /// Messages delivered to the receiving application.
    pub messages_received: u64,
    /// Messages known lost in the network (datagram transports).
    pub messages_lost_network: u64,
    /// Messages written and neither delivered nor known lost at the end of the run.
    pub messages_pending: u64,
    /// Mean delay of delivered messages, from write to delivery (s).
    pub message_delay_mean_s: Option<f64>,
    /// Largest delay of a delivered message (s).
    pub message_delay_max_s: Option<f64>,
    /// Congestion window at the end of the run (bytes, TCP).
    pub final_cwnd_bytes: Option<u64>,
}

/// Statistics of one output queue (one link direction) over the measured window.
#[derive(Clone, Debug, Default, Serialize)]
pub struct QueueResult {
    /// `from->to`.
    pub name: String,
    /// Queue discipline name.
    pub kind: String,
    /// Transmitting node.
    pub from: String,
    /// Receiving node.
    pub to: String,
    /// Link rate of this direction (bit/s); at the end of the run, when a scheduled change
    /// (`LinkSpec::schedule`) set it during the run.
    pub rate_bps: u64,
    /// Packets offered to the queue.
    pub arrivals: u64,
    /// Packets handed to the link.
    pub departures: u64,
    /// Packets the discipline dropped (on arrival or from the queue).
    pub drops: u64,
    /// Packets the discipline ECN-marked.
    pub marks: u64,
    /// `drops / arrivals`.
    pub drop_ratio: f64,
    /// Time-weighted mean length (packets, excluding the one in transmission).
    pub mean_len_pkts: f64,
    /// Time-weighted standard deviation of the length (packets).
    pub sd_len_pkts: f64,
    /// Time-weighted mean length (bytes).
    pub mean_len_bytes: f64,
    /// Time-weighted standard deviation of the length (bytes).
    pub sd_len_bytes: f64,
    /// Largest length seen (packets).
    pub max_len_pkts: u64,
    /// Mean sojourn time of departing packets (s), as the papers plot it. Under an AQM that
    /// drops from the head (CoDel, PIE) it leaves out the packets dropped after waiting, so
    /// Little's law holds for all arrivals only with them:
    /// `mean_len_pkts = (departures * mean_sojourn_s + drops * mean_drop_sojourn_s) / window`.
    pub mean_sojourn_s: f64,
    /// Mean time dropped packets spent in the queue before their drop (s; 0 for a packet
    /// dropped on arrival; 0 without drops).
    pub mean_drop_sojourn_s: f64,
    /// Largest sojourn time (s).
    pub max_sojourn_s: f64,
    /// Median sojourn time (s; from a log-linear histogram, within 6.25 %; 0 without departures).
    pub p50_sojourn_s: f64,
    /// 99th percentile of the sojourn time (s; as `p50_sojourn_s`).
    pub p99_sojourn_s: f64,
    /// Bytes transmitted on the link.
    pub tx_bytes: u64,
    /// Fraction of the measured window the transmitter was busy (at most 1; equals
    /// `tx_bytes * 8 / (rate * window)` up to the transmissions cut by the window's edges).
    pub utilization: f64,
    /// Packets lost on the wire by random errors.
    pub link_losses: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}
