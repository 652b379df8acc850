//! The registry of pluggable models, as data: what `ccsim list` prints and what the Python
//! front validates scenarios against. Generated from the models' own tables.

use serde::Serialize;

use crate::app::APPS;
use crate::params::ParamSpec;
use crate::qdisc::QUEUES;
use crate::tcp::cc::CCS;

/// One registered model.
#[derive(Serialize)]
pub struct ModelInfo {
    /// `queue`, `cc`, `transport`, `app`, `node` (a node's `processing` table), `controller` or
    /// `reference`.
    pub family: &'static str,
    /// Name used in scenarios.
    pub name: &'static str,
    /// One line.
    pub doc: &'static str,
    /// Declared parameters.
    pub params: &'static [ParamSpec],
}

/// Every registered model, family by family.
pub fn registry() -> Vec<ModelInfo> {
    let mut out = Vec::new();
    for m in QUEUES {
        out.push(ModelInfo { family: "queue", name: m.name, doc: m.doc, params: m.params });
    }
    for m in CCS {
        out.push(ModelInfo { family: "cc", name: m.name, doc: m.doc, params: m.params });
    }
    out.push(ModelInfo {
        family: "transport",
        name: "tcp",
        doc: "TCP with NewReno/SACK recovery, RFC 6298 RTO, delayed ACKs, ECN",
        params: crate::tcp::PARAMS,
    });
    out.push(ModelInfo {
        family: "transport",
        name: "udp",
        doc: "UDP datagrams, one per application write",
        params: crate::udp::PARAMS,
    });
    out.push(ModelInfo {
        family: "transport",
        name: "dccp",
        doc: "DCCP datagrams, never retransmitted, under CCID 2 (TCP-like, RFC 4341) or CCID 3 (TFRC, RFC 4342/5348)",
        params: crate::dccp::PARAMS,
    });
    for m in APPS {
        out.push(ModelInfo { family: "app", name: m.name, doc: m.doc, params: m.params });
    }
    out.push(ModelInfo {
        family: "node",
        name: "processing",
        doc: crate::net::processing::DOC,
        params: crate::net::processing::PARAMS,
    });
    for m in crate::ncs::controller::CONTROLLERS {
        out.push(ModelInfo { family: "controller", name: m.name, doc: m.doc, params: m.params });
    }
    for m in crate::ncs::reference::REFERENCES {
        out.push(ModelInfo { family: "reference", name: m.name, doc: m.doc, params: m.params });
    }
    out
}

/// The registry as JSON: one entry per model, then one per TCP behaviour profile (family
/// `profile`, with its `settings`; see [`crate::tcp::profile`]).
pub fn registry_json() -> String {
    let mut entries: Vec<serde_json::Value> =
        registry().iter().map(|m| serde_json::to_value(m).expect("a model serializes")).collect();
    entries.extend(crate::tcp::profile::PROFILES.iter().map(|p| p.registry_entry()));
    serde_json::to_string(&entries).expect("the registry serializes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_satisfies_its_own_declaration() {
        for m in registry() {
            let given = Default::default();
            let required = m.params.iter().any(|p| p.default.is_none());
            let resolved = crate::params::Params::resolve(m.name, m.params, &given);
            assert_eq!(resolved.is_err(), required, "{} {}", m.family, m.name);
        }
        let json = registry_json();
        assert!(json.contains("\"name\":\"droptail\""));
        assert!(json.contains("{\"packets\":1000}"));
        assert!(json.contains("\"family\":\"profile\",\"name\":\"linux\""), "{json}");
    }
}
