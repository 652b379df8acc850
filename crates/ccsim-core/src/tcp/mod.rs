//! TCP: a sender with NewReno (RFC 5681, RFC 6582) and SACK-based (RFC 6675) loss recovery,
//! RTO per RFC 6298, ECN per RFC 3168, and pluggable congestion control; a receiver with
//! delayed ACKs, SACK blocks and ECN echo.
//!
//! Simplifications, deliberate and documented: by default no connection handshake or
//! teardown (the sender starts in ESTABLISHED with ECN and SACK as configured, like ns-2's
//! one-way TCP; `handshake = true` opens and closes connections, `sender/connection.rs`);
//! timestamps (RFC 7323) are always on and give every RTT sample, including on
//! retransmissions; the receiver's advertised window is constant (the application reads
//! everything immediately).

pub mod cc;
pub mod profile;
pub mod receiver;
pub mod rtt;
mod scoreboard;
pub mod sender;
pub mod vars;

use crate::config::AlgoSpec;
use crate::error::ConfigError;
use crate::packet::{Packet, SackBlock, FLAG_SYN_FIN};
use crate::params::{ParamKind, ParamSpec, ParamValue, Params, Size};
use crate::sim::rng::{Rng, Stream};
use crate::sim::time::{Time, MS, SEC};
use crate::transport::{Endpoints, Segments, TransportArgs, TransportModel};
use cc::CCS;

/// Bounds of the RTO parameters (ns): 1 us to a day.
const RTO_FLOOR: f64 = 1e3;
const RTO_CEILING: f64 = 86_400e9;

/// Socket options of a TCP flow, declared for `ccsim list` and validation.
pub static PARAMS: &[ParamSpec] = &[
    ParamSpec::new("mss", ParamKind::Bytes, Some(ParamValue::Int(1448)), "maximum segment size (payload bytes)")
        .range(1.0, 65_495.0),
    ParamSpec::new(
        "header",
        ParamKind::Bytes,
        Some(ParamValue::Int(52)),
        "IP+TCP header bytes per segment (20+20+12 timestamps: 1448 MSS gives 1500 B packets)",
    )
    .range(0.0, 200.0),
    ParamSpec::new("init_cwnd", ParamKind::Int, Some(ParamValue::Int(10)), "initial window in segments (RFC 6928 IW10)")
        .range(1.0, 1e6),
    ParamSpec::new(
        "init_ssthresh",
        ParamKind::Size,
        Some(ParamValue::Size(Size::Packets(0))),
        "initial slow-start threshold in segments or bytes; 0 = unlimited (RFC 5681)",
    ),
    ParamSpec::new(
        "rwnd",
        ParamKind::Size,
        Some(ParamValue::Size(Size::Bytes(4 << 20))),
        "receiver's advertised window, segments or bytes",
    ),
    ParamSpec::new("delack_count", ParamKind::Int, Some(ParamValue::Int(2)), "ACK every Nth full segment (RFC 5681 §4.2: 2)")
        .range(1.0, 64.0),
    ParamSpec::new("delack_timeout", ParamKind::Time, Some(ParamValue::Int(200 * MS as i64)), "delayed-ACK timer (ns-3 200 ms; RFC 1122 < 500 ms)")
        .range(0.0, 500e6),
    // A timer of zero would fire at the instant it is set, for ever: at least a microsecond.
    ParamSpec::new("min_rto", ParamKind::Time, Some(ParamValue::Int(SEC as i64)), "minimum RTO (RFC 6298: 1 s; Linux: 200 ms)")
        .range(RTO_FLOOR, RTO_CEILING),
    ParamSpec::new("max_rto", ParamKind::Time, Some(ParamValue::Int(60 * SEC as i64)), "maximum RTO (RFC 6298: at least 60 s)")
        .range(RTO_FLOOR, RTO_CEILING),
    ParamSpec::new("initial_rto", ParamKind::Time, Some(ParamValue::Int(SEC as i64)), "RTO before the first RTT sample (RFC 6298: 1 s)")
        .range(RTO_FLOOR, RTO_CEILING),
    ParamSpec::new("sack", ParamKind::Bool, Some(ParamValue::Bool(true)), "SACK-based loss recovery (RFC 6675); false = NewReno (RFC 6582)"),
    ParamSpec::new(
        "lost_retransmit",
        ParamKind::Bool,
        Some(ParamValue::Bool(true)),
        "detect lost retransmissions from SACKs of data sent after them (RFC 8985 RACK idea; Linux); false = RFC 6675 only, a lost retransmission waits for the RTO (ns-3)",
    ),
    ParamSpec::new("ecn", ParamKind::Bool, Some(ParamValue::Bool(false)), "ECN-capable (RFC 3168): data sent ECT(0), reacts to ECE"),
    ParamSpec::new(
        "ect1",
        ParamKind::Bool,
        Some(ParamValue::Bool(false)),
        "send data as ECT(1), the L4S identifier (RFC 9331 §5.1), instead of ECT(0); needs ECN (a scalable congestion control such as dctcp, for DualPI2's L queue)",
    ),
    ParamSpec::new("dupthresh", ParamKind::Int, Some(ParamValue::Int(3)), "duplicate ACKs that trigger fast retransmit")
        .range(1.0, 1000.0),
    ParamSpec::new(
        "pacing",
        ParamKind::Bool,
        Some(ParamValue::Bool(false)),
        "pace every segment at the congestion control's rate, or Linux's default (2 x cwnd/srtt while cwnd < ssthresh/2, 1.2 x after; none before the first RTT sample)",
    ),
    ParamSpec::new(
        "handshake",
        ParamKind::Bool,
        Some(ParamValue::Bool(false)),
        "open the connection with SYN, SYN-ACK, ACK (RFC 9293; a lost SYN is sent again after the initial RTO, doubling, RFC 6298 §5.5 and §5.7) and close a `transfer` with a FIN exchange; false = start established, as ns-2's one-way TCP",
    ),
    ParamSpec::new(
        "syn_retries",
        ParamKind::Int,
        Some(ParamValue::Int(6)),
        "SYN retransmissions before the connection attempt is given up (Linux tcp_syn_retries: 6, 127 s with a 1 s initial RTO and a maximum RTO of at least 64 s); with `handshake`",
    )
    .range(0.0, 255.0),
];

/// Registration.
pub const MODEL: TransportModel = TransportModel {
    name: "tcp",
    doc: "TCP with NewReno/SACK recovery, RFC 6298 RTO, delayed ACKs, ECN",
    params: PARAMS,
    vars: vars::SENDER_VARS,
    build: build_endpoints,
    // MSS-sized segments; with `handshake`, a SYN and a SYN-ACK carrying their options first.
    segments: |p| Segments {
        payload: Some(p.uint("mss")),
        header: p.uint("header"),
        handshake: p.bool("handshake").then(|| p.uint("header") + SYN_EXTRA_HEADER as u64),
    },
};

fn build_endpoints(args: TransportArgs) -> Result<Endpoints, ConfigError> {
    let field = args.field;
    let mut tcp = TcpConfig::from_params(&args.params);
    let cc_spec = args.spec.cc.clone().unwrap_or_else(|| AlgoSpec::named("newreno"));
    let cc_rng = Rng::stream(args.seed, Stream::Cc(args.stream));
    let cc = match &cc_spec.external {
        Some(source) => {
            crate::external::congestion_control(&cc_spec, source, &format!("{field}.cc"), args.flow, cc_rng)?
        }
        None => {
            let cc_model = crate::registry::find(CCS, &cc_spec.kind, |m| m.name, &format!("{field}.cc.kind"))?;
            let cc_params = Params::resolve(&format!("{field}.cc"), cc_model.params, &cc_spec.params)?;
            (cc_model.build)(&cc_params, cc_rng)
        }
    };
    // What the algorithm needs from the connection: an ECN-driven algorithm turns ECN on (as
    // Linux's TCP_CONG_NEEDS_ECN), unless refused explicitly.
    let needs = cc.needs();
    if needs.ecn {
        if args.spec.transport.params.get("ecn") == Some(&ParamValue::Bool(false)) {
            return Err(ConfigError::new(
                format!("{field}.transport.ecn"),
                format!("congestion control '{}' needs ECN; remove 'ecn = false'", cc.name()),
            ));
        }
        tcp.ecn = true;
    }
    // Pacing, for an algorithm built around it (Linux paces BBR by itself), unless refused.
    if needs.pacing && args.spec.transport.params.get("pacing") != Some(&ParamValue::Bool(false)) {
        tcp.pacing = true;
    }
    // ECT(1), for an algorithm that identifies itself as L4S (Prague), unless refused.
    if needs.ect1 && args.spec.transport.params.get("ect1") != Some(&ParamValue::Bool(false)) {
        tcp.ect1 = true;
    }
    if tcp.ect1 && !tcp.ecn {
        return Err(ConfigError::new(
            format!("{field}.transport.ect1"),
            "ECT(1) is an ECN codepoint: set 'ecn = true' too, or use a congestion control that needs ECN",
        ));
    }
    tcp.ecn_feedback = needs.ecn_feedback;
    tcp.loss_notice = needs.loss_notice;
    // A transfer writes its data once and has nothing more to say: with a handshake its
    // connection closes once the data is acknowledged, as an application that writes its
    // file and calls close().
    tcp.closes = tcp.handshake && args.spec.app.kind == crate::app::transfer::MODEL.name;
    let (flow, src, dst) = (args.flow, args.spec.src, args.spec.dst);
    Ok((
        Box::new(sender::TcpSender::new(flow, dst, tcp.clone(), cc, args.app).with_rng(args.rng)),
        Box::new(receiver::TcpReceiver::new(flow, src, tcp)),
    ))
}

/// Resolved TCP socket options (bytes and nanoseconds).
#[derive(Clone, Debug)]
pub struct TcpConfig {
    /// Maximum segment size (payload bytes).
    pub mss: u32,
    /// Header bytes added to each segment and forming each pure ACK.
    pub header: u32,
    /// Initial window (bytes).
    pub init_cwnd: u64,
    /// Initial ssthresh (bytes).
    pub init_ssthresh: u64,
    /// Receiver window (bytes).
    pub rwnd: u64,
    /// ACK every this many full segments.
    pub delack_count: u32,
    /// Delayed-ACK timeout.
    pub delack_timeout: Time,
    /// RTO bounds and initial value.
    pub min_rto: Time,
    /// Upper bound of the RTO.
    pub max_rto: Time,
    /// RTO before the first sample.
    pub initial_rto: Time,
    /// SACK-based recovery.
    pub sack: bool,
    /// Detect lost retransmissions with SACK.
    pub lost_retransmit: bool,
    /// ECN-capable.
    pub ecn: bool,
    /// Fast-retransmit threshold.
    pub dupthresh: u32,
    /// Pace transmissions (sender/mod.rs `pacing_rate`).
    pub pacing: bool,
    /// ECN-capable data carries ECT(1) (the L4S identifier) rather than ECT(0).
    pub ect1: bool,
    /// How the receiver echoes CE marks; set from the congestion control
    /// ([`cc::CongestionControl::needs`]), not a socket option.
    pub ecn_feedback: EcnFeedback,
    /// Data asks routers for an explicit loss notification (E-DCTCP); set from the
    /// congestion control, not a socket option.
    pub loss_notice: bool,
    /// Open with a three-way handshake (and close a transfer with FINs).
    pub handshake: bool,
    /// SYN retransmissions before giving up.
    pub syn_retries: u32,
    /// The application closes the connection once its data is acknowledged (a `transfer`
    /// with `handshake`); set from the flow's application, not a socket option.
    pub closes: bool,
}

/// How a receiver reports CE marks on its ACKs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EcnFeedback {
    /// RFC 3168 §6.1.3: ECE on every ACK from a CE-marked segment until a segment with CWR.
    #[default]
    Classic,
    /// RFC 8257 §3.2 (DCTCP): ECE reflects exactly the CE marks of the segments an ACK
    /// covers; a change of CE state sends an immediate ACK for the data before the change.
    Dctcp,
    /// RFC 9768 (Accurate ECN): every ACK carries the count of CE-marked packets received,
    /// modulo 8, in its ACE field (AE, CWR, ECE); see `receiver.rs` and the sender's decoding.
    Accurate,
}

impl TcpConfig {
    /// From validated parameters.
    pub fn from_params(p: &Params) -> Self {
        let mss = p.uint("mss") as u32;
        let bytes = |s: Size| match s {
            Size::Packets(n) => n.saturating_mul(mss as u64),
            Size::Bytes(n) => n,
        };
        let init_ssthresh = match bytes(p.size("init_ssthresh")) {
            0 => u64::MAX / 4,
            n => n,
        };
        TcpConfig {
            mss,
            header: p.uint("header") as u32,
            init_cwnd: p.uint("init_cwnd") * mss as u64,
            init_ssthresh,
            rwnd: bytes(p.size("rwnd")).clamp(mss as u64, u32::MAX as u64),
            delack_count: p.uint("delack_count") as u32,
            delack_timeout: p.uint("delack_timeout"),
            min_rto: p.uint("min_rto"),
            max_rto: p.uint("max_rto").max(p.uint("min_rto")),
            initial_rto: p.uint("initial_rto"),
            sack: p.bool("sack"),
            lost_retransmit: p.bool("lost_retransmit"),
            ecn: p.bool("ecn"),
            dupthresh: p.uint("dupthresh") as u32,
            pacing: p.bool("pacing"),
            ect1: p.bool("ect1"),
            ecn_feedback: EcnFeedback::Classic,
            loss_notice: false,
            handshake: p.bool("handshake"),
            syn_retries: p.uint("syn_retries") as u32,
            closes: false,
        }
    }

    /// Defaults, for tests and Rust users.
    pub fn default_config() -> Self {
        let p = Params::resolve("tcp", PARAMS, &Default::default()).expect("defaults are valid");
        Self::from_params(&p)
    }
}

/// What a segment carrying [`FLAG_SYN_FIN`] is: the bit is shared, and the place of the
/// segment in the sequence space tells (a SYN before the first byte, a FIN after the last).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// The sender's SYN, or the receiver's SYN-ACK.
    Syn,
    /// The sender's FIN, or the receiver's FIN-ACK.
    Fin,
}

impl Control {
    /// The control `pkt` carries, if any. A segment towards the sender (the receiver's) is a
    /// SYN-ACK if it acknowledges nothing beyond the SYN (`ack` 0); one towards the receiver
    /// (the sender's) is a SYN if it sits before the first byte (`seq` 0).
    pub fn of(pkt: &Packet) -> Option<Control> {
        if pkt.flags & FLAG_SYN_FIN == 0 {
            return None;
        }
        let at = if pkt.kind.to_sender() { pkt.ack } else { pkt.seq };
        Some(if at == 0 { Control::Syn } else { Control::Fin })
    }
}

/// Bytes a SYN or SYN-ACK adds to the header of a data segment: its options (MSS 4,
/// SACK-permitted 2, timestamps 10, window scale 3, padded: 20 bytes, as Linux sends them)
/// against a data segment's 12 bytes of timestamps.
pub const SYN_EXTRA_HEADER: u32 = 8;

/// The window scale both ends offer (RFC 7323 §2.2): the shift that brings a 4 MiB window
/// within 16 bits, as Linux chooses for its default buffers; the captures (`net/pcap.rs`)
/// write the receiver's windows with it.
pub const WINDOW_SHIFT: u8 = 7;

/// The options a SYN or SYN-ACK offers (RFC 9293 §3.7.1 MSS, RFC 2018 SACK-permitted, RFC
/// 7323 window scale and timestamps). A SYN acknowledges no data, so it carries them in its
/// first SACK block (`sack_len` stays 0, so nothing reads it as one): `start` the MSS, `end`
/// bit 0 SACK-permitted, bits 8..16 the window shift, bit 16 timestamps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SynOptions {
    /// Largest segment this end receives (payload bytes).
    pub mss: u32,
    /// SACK-permitted.
    pub sack: bool,
    /// Window scale shift.
    pub wscale: u8,
    /// Timestamps (always offered: ccsim's RTT samples come from them).
    pub timestamps: bool,
}

impl SynOptions {
    /// What an end configured as `cfg` offers.
    pub fn offered(cfg: &TcpConfig) -> Self {
        SynOptions { mss: cfg.mss, sack: cfg.sack, wscale: WINDOW_SHIFT, timestamps: true }
    }

    /// Write them into the SYN or SYN-ACK `pkt`.
    pub fn write(self, pkt: &mut Packet) {
        let bits = self.sack as u32 | (self.wscale as u32) << 8 | (self.timestamps as u32) << 16;
        pkt.sack[0] = SackBlock { start: self.mss, end: bits };
    }

    /// The options the SYN or SYN-ACK `pkt` carries.
    pub fn read(pkt: &Packet) -> Self {
        let SackBlock { start, end } = pkt.sack[0];
        SynOptions { mss: start, sack: end & 1 != 0, wscale: (end >> 8) as u8, timestamps: end >> 16 & 1 != 0 }
    }

    /// What both ends use: the smaller MSS (RFC 9293 §3.7.1), SACK and timestamps only if
    /// both ends offered them (RFC 2018 §2, RFC 7323 §3.2); both ends offer the same window
    /// scale here, and the smaller is kept.
    pub fn agreed(self, other: SynOptions) -> Self {
        SynOptions {
            mss: self.mss.min(other.mss),
            sack: self.sack && other.sack,
            wscale: self.wscale.min(other.wscale),
            timestamps: self.timestamps && other.timestamps,
        }
    }
}
