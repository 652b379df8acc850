//! Behaviour profiles of TCP flows: named sets of transport parameters and a default
//! congestion control standing for a real stack's defaults.
//!
//! ccsim cannot run a kernel (paper `004_5f7aee26e41e985e.txt` ran Linux in ns-3 DCE), so
//! `profile = "linux"` sets the Linux defaults that change results, each with its source:
//! - transport: initial window 10, RTO bounds 200 ms .. 120 s (initial 1 s), delayed-ACK
//!   timeout 40 ms (every second full segment), ECN requested, SACK with RACK-style
//!   lost-retransmission detection, DupThresh 3, timestamps (52-byte headers);
//! - congestion control: CUBIC with Linux's beta = 717/1024, C = 0.4, fast convergence, the
//!   TCP-friendly region and HyStart.
//!
//! `"rfc"` (the default) changes nothing: the transport's declared defaults, which cite
//! their RFCs in `ccsim list`, and NewReno.
//!
//! Not modelled, so not in the profile: Linux's adaptive delayed-ACK timeout (it starts at
//! 40 ms and adapts up to 200 ms; ccsim's timer is fixed), quick-ACK mode at connection
//! start, receive-buffer autotuning (`tcp_rmem`), tail-loss probes, PRR (RFC 6937) and the
//! classic HyStart of `tcp_cubic.c` (ccsim has HyStart++, RFC 9406, which replaced it in
//! the RFC series; it is the nearest). `tcp_ecn` defaults to 2 in Linux (accept ECN, do not
//! ask for it): the profile requests ECN (`tcp_ecn = 1`) as ECN experiments with Linux
//! endpoints, paper 004's included, configure it; set `ecn = false` for a stock kernel.
//!
//! Values are canonical ([`ParamValue`]): times in ns, sizes in bytes or packets. The
//! profiles reach the front through the registry (their `settings`); the scenario compiler
//! applies them (`python/ccsim/scenario/profiles.py`, the one place the rule lives): explicit
//! parameters win over the profile, and the profile's congestion-control parameters apply
//! whenever the flow runs that congestion control.

use serde::Serialize;
use serde_json::{json, Value};

use crate::params::{ParamKind, ParamSpec, ParamValue};
use crate::sim::time::{MS, SEC};
use crate::tcp::cc::CCS;

/// One parameter value set by a profile, and where it comes from.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Setting {
    /// Parameter name (a `tcp` transport parameter, or a parameter of the profile's cc).
    pub param: &'static str,
    /// Canonical value.
    pub value: ParamValue,
    /// Source of the value.
    pub source: &'static str,
}

/// The congestion control a profile selects when a flow names none.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct CcDefault {
    /// Registered name.
    pub kind: &'static str,
    /// Source of the choice.
    pub source: &'static str,
    /// Its parameters.
    pub params: &'static [Setting],
}

/// A named behaviour profile.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Profile {
    /// Name used in scenarios (`profile = "linux"`).
    pub name: &'static str,
    /// One line.
    pub doc: &'static str,
    /// TCP transport parameters.
    pub transport: &'static [Setting],
    /// Default congestion control, if the profile sets one.
    pub cc: Option<CcDefault>,
}

const fn set(param: &'static str, value: ParamValue, source: &'static str) -> Setting {
    Setting { param, value, source }
}

const fn ms(n: u64) -> ParamValue {
    ParamValue::Int((n * MS) as i64)
}

/// The profile used when none is named.
pub const DEFAULT: &str = "rfc";

/// Every profile.
pub static PROFILES: &[Profile] = &[
    Profile {
        name: "rfc",
        doc: "the transport's declared defaults (each cites its RFC in the tcp table) and NewReno",
        transport: &[],
        cc: None,
    },
    Profile {
        name: "linux",
        doc: "Linux TCP defaults that change results (for comparisons with kernel stacks, e.g. ns-3 DCE)",
        transport: &[
            set("init_cwnd", ParamValue::Int(10), "include/net/tcp.h TCP_INIT_CWND = 10 (RFC 6928)"),
            set("min_rto", ms(200), "include/net/tcp.h TCP_RTO_MIN = HZ/5 = 200 ms (RFC 6298: 1 s)"),
            set("max_rto", ParamValue::Int((120 * SEC) as i64), "include/net/tcp.h TCP_RTO_MAX = 120*HZ = 120 s"),
            set("initial_rto", ParamValue::Int(SEC as i64), "include/net/tcp.h TCP_TIMEOUT_INIT = 1*HZ (RFC 6298 §2.1, Linux >= 3.1)"),
            set(
                "delack_timeout",
                ms(40),
                "include/net/tcp.h TCP_DELACK_MIN = TCP_ATO_MIN = HZ/25 = 40 ms, where Linux's delayed-ACK timeout starts (it adapts up to TCP_DELACK_MAX = 200 ms)",
            ),
            set("delack_count", ParamValue::Int(2), "net/ipv4/tcp_input.c __tcp_ack_snd_check: ACKs as soon as more than one full-sized segment is unacknowledged"),
            set(
                "ecn",
                ParamValue::Bool(true),
                "sysctl net.ipv4.tcp_ecn = 1 (request ECN), as set for ECN experiments with Linux endpoints (paper 004); the kernel default 2 only accepts ECN",
            ),
            set("sack", ParamValue::Bool(true), "sysctl net.ipv4.tcp_sack = 1 (default)"),
            set(
                "lost_retransmit",
                ParamValue::Bool(true),
                "sysctl net.ipv4.tcp_recovery = 1 (default): RACK loss detection, which finds lost retransmissions",
            ),
            set("dupthresh", ParamValue::Int(3), "sysctl net.ipv4.tcp_reordering = 3 (default)"),
            set("header", ParamValue::Int(52), "sysctl net.ipv4.tcp_timestamps = 1 (default): 20 B IP + 20 B TCP + 12 B timestamp option"),
        ],
        cc: Some(CcDefault {
            kind: "cubic",
            source: "CONFIG_DEFAULT_TCP_CONG = \"cubic\" (the default since Linux 2.6.19)",
            params: &[
                set("beta", ParamValue::Float(717.0 / 1024.0), "net/ipv4/tcp_cubic.c beta = 717 (/1024 = 0.7002)"),
                set("c", ParamValue::Float(0.4), "net/ipv4/tcp_cubic.c bic_scale = 41 (C = 41 * 10 / 1024 = 0.4)"),
                set("fast_convergence", ParamValue::Bool(true), "net/ipv4/tcp_cubic.c fast_convergence = 1"),
                set("tcp_friendliness", ParamValue::Bool(true), "net/ipv4/tcp_cubic.c tcp_friendliness = 1"),
                set(
                    "hystart",
                    ParamValue::Bool(true),
                    "net/ipv4/tcp_cubic.c hystart = 1 (classic HyStart: ACK trains and delay increase); ccsim runs HyStart++ (RFC 9406), the nearest",
                ),
            ],
        }),
    },
];

/// The profile called `name`.
pub fn find(name: &str) -> Option<&'static Profile> {
    PROFILES.iter().find(|p| p.name == name)
}

fn kind_of(specs: &[ParamSpec], name: &str) -> Option<ParamKind> {
    specs.iter().find(|s| s.name == name).map(|s| s.kind)
}

impl Profile {
    /// The profile as a registry entry (family `profile`; `settings` lists every value with
    /// its target, the kind of the parameter it sets, and its source).
    pub fn registry_entry(&self) -> Value {
        let mut settings = Vec::new();
        for s in self.transport {
            let kind = kind_of(crate::tcp::PARAMS, s.param);
            settings.push(
                json!({"target": "transport", "param": s.param, "kind": kind, "value": s.value, "source": s.source}),
            );
        }
        if let Some(d) = &self.cc {
            settings
                .push(json!({"target": "cc", "param": "kind", "kind": "name", "value": d.kind, "source": d.source}));
            let specs = CCS.iter().find(|m| m.name == d.kind).map_or(&[][..], |m| m.params);
            for s in d.params {
                let kind = kind_of(specs, s.param);
                settings.push(
                    json!({"target": "cc", "param": s.param, "kind": kind, "value": s.value, "source": s.source}),
                );
            }
        }
        json!({"family": "profile", "name": self.name, "doc": self.doc, "params": [], "settings": settings})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Params;
    use std::collections::BTreeMap;

    fn given(settings: &[Setting]) -> BTreeMap<String, ParamValue> {
        settings.iter().map(|s| (s.param.to_string(), s.value)).collect()
    }

    #[test]
    fn every_setting_is_a_declared_parameter_with_a_valid_value() {
        for p in PROFILES {
            Params::resolve(p.name, crate::tcp::PARAMS, &given(p.transport)).expect("transport settings");
            if let Some(d) = &p.cc {
                let model = CCS.iter().find(|m| m.name == d.kind).expect("registered cc");
                Params::resolve(p.name, model.params, &given(d.params)).expect("cc settings");
            }
            assert!(p.transport.iter().chain(p.cc.iter().flat_map(|d| d.params)).all(|s| !s.source.is_empty()));
        }
        assert!(find(DEFAULT).is_some_and(|p| p.transport.is_empty() && p.cc.is_none()));
    }

    #[test]
    fn registry_entries_list_each_value_with_its_kind_and_source() {
        let e = find("linux").unwrap().registry_entry();
        assert_eq!(e["family"], "profile");
        let settings = e["settings"].as_array().unwrap();
        let min_rto = settings.iter().find(|s| s["param"] == "min_rto").unwrap();
        assert_eq!(
            (min_rto["target"].as_str(), min_rto["kind"].as_str(), min_rto["value"].as_u64()),
            (Some("transport"), Some("time"), Some(200 * MS))
        );
        let kind = settings.iter().find(|s| s["param"] == "kind").unwrap();
        assert_eq!((kind["target"].as_str(), kind["value"].as_str()), (Some("cc"), Some("cubic")));
        assert!(settings.iter().all(|s| s["kind"].is_string() && s["source"].as_str().is_some_and(|x| !x.is_empty())));
    }
}
