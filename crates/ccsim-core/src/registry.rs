//! The registry of pluggable models, as data: what `ccsim list` prints and what the Python
//! front validates scenarios against. Generated from the models' own tables.

use serde::Serialize;

use crate::app::APPS;
use crate::error::ConfigError;
use crate::params::ParamSpec;
use crate::params::Params;
use crate::qdisc::QueueModel;
use crate::qdisc::QUEUES;
use crate::sim::rng::{Rng, Stream};
use crate::tcp::cc::{CcModel, CCS};
use crate::vars::{self, VarSpec, VarUnit};

/// The model called `name` in `models` (by `key`), or an error for `field` that lists the
/// registered names.
pub fn find<'a, M>(
    models: &'a [M],
    name: &str,
    key: fn(&M) -> &'static str,
    field: &str,
) -> Result<&'a M, ConfigError> {
    models.iter().find(|m| key(m) == name).ok_or_else(|| {
        let known: Vec<&str> = models.iter().map(key).collect();
        ConfigError::new(field, format!("unknown '{name}'; registered: {}", known.join(", ")))
    })
}

/// Whether a model draws from its random stream, so that runs with different seeds differ
/// (statistical model checking needs a random element; `what` says what is random).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "when", rename_all = "snake_case")]
pub enum Randomness {
    /// Never: every seed gives the same behaviour.
    Never,
    /// Always.
    Always {
        /// What is random.
        what: &'static str,
    },
    /// When parameter `param` is not at its default.
    UnlessDefault {
        /// The parameter.
        param: &'static str,
        /// What is random.
        what: &'static str,
    },
}

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
    /// Whether it draws random numbers.
    pub random: Randomness,
    /// Congestion controls: the queue disciplines it needs at its bottleneck (any of them),
    /// empty when it works with any.
    pub partner_queues: &'static [&'static str],
    /// Applications: integer parameters that name another flow (an index or a flow's name).
    pub flow_refs: &'static [&'static str],
    /// The variables traces can sample (`trace.flow_vars`, `trace.queue_vars`): a queue
    /// discipline's or congestion control's own (read from an instance at its defaults), a
    /// transport's sender's.
    pub vars: &'static [VarSpec],
}

impl ModelInfo {
    fn new(family: &'static str, name: &'static str, doc: &'static str, params: &'static [ParamSpec]) -> Self {
        ModelInfo {
            family,
            name,
            doc,
            params,
            random: Randomness::Never,
            partner_queues: &[],
            flow_refs: &[],
            vars: &[],
        }
    }
}

/// The parameters of a model at their defaults; `None` when one is required.
fn defaults(name: &str, params: &'static [ParamSpec]) -> Option<Params> {
    Params::resolve(name, params, &Default::default()).ok()
}

/// The variables queue discipline `m` declares, read from an instance at its defaults (the
/// table is static; a discipline whose unit follows a parameter, as RED's average, declares
/// its default one).
pub fn queue_vars(m: &QueueModel) -> &'static [VarSpec] {
    defaults(m.name, m.params).map_or(&[], |p| (m.build)(&p).vars())
}

/// The variables congestion control `m` declares, read from an instance at its defaults.
pub fn cc_vars(m: &CcModel) -> &'static [VarSpec] {
    defaults(m.name, m.params).map_or(&[], |p| (m.build)(&p, Rng::stream(0, Stream::Cc(0))).vars())
}

/// Every registered model, family by family.
pub fn registry() -> Vec<ModelInfo> {
    let mut out = Vec::new();
    for m in QUEUES {
        out.push(ModelInfo {
            random: m.random,
            vars: queue_vars(m),
            ..ModelInfo::new("queue", m.name, m.doc, m.params)
        });
    }
    for m in CCS {
        let info = ModelInfo::new("cc", m.name, m.doc, m.params);
        out.push(ModelInfo { random: m.random, partner_queues: m.partner_queues, vars: cc_vars(m), ..info });
    }
    for m in crate::transport::TRANSPORTS {
        out.push(ModelInfo { vars: m.vars, ..ModelInfo::new("transport", m.name, m.doc, m.params) });
    }
    for m in APPS {
        out.push(ModelInfo {
            random: m.random,
            flow_refs: m.flow_refs,
            ..ModelInfo::new("app", m.name, m.doc, m.params)
        });
    }
    let processing = ModelInfo::new("node", "processing", crate::net::processing::DOC, crate::net::processing::PARAMS);
    out.push(ModelInfo { random: crate::net::processing::RANDOM, ..processing });
    for m in crate::ncs::controller::CONTROLLERS {
        out.push(ModelInfo::new("controller", m.name, m.doc, m.params));
    }
    for m in crate::ncs::reference::REFERENCES {
        out.push(ModelInfo::new("reference", m.name, m.doc, m.params));
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

/// Facts of the engine the Python front needs besides the models: the columns of a control
/// loop's results (an empty loop's row, in declaration order, so that a run without loops
/// still gets a typed table), the highest plant order a loop supports, the variables every
/// queue offers to traces (`queue_vars`), the trace columns sampled without being named
/// (`trace_columns`, by entity), and each variable unit's column suffix (`var_units`).
pub fn facts_json() -> String {
    // The control row keeps its fields' order: serialized on its own, not through a `Value`.
    let control = serde_json::to_string(&crate::ncs::ControlResult::default()).expect("a row serializes");
    let units: serde_json::Map<String, serde_json::Value> =
        VarUnit::ALL.iter().map(|u| (u.name().to_string(), u.suffix().into())).collect();
    let flow_columns = [&vars::CWND_COLUMN, &vars::COUNTER_COLUMNS[0], &vars::COUNTER_COLUMNS[1]];
    let traces = serde_json::json!({
        "queue_vars": vars::QUEUE_VARS,
        "trace_columns": { "queue": &vars::QUEUE_COLUMNS[..], "flow": flow_columns },
        "var_units": units,
    })
    .to_string();
    format!(r#"{{"control_row":{control},"max_plant_order":{},{}"#, crate::ncs::plant::MAX_ORDER, &traces[1..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_models_facts_name_what_exists() {
        let queues: Vec<&str> = QUEUES.iter().map(|m| m.name).collect();
        for m in registry() {
            if let Randomness::UnlessDefault { param, .. } = m.random {
                let spec = m.params.iter().find(|p| p.name == param);
                assert!(spec.is_some_and(|p| p.default.is_some()), "{}: {param} needs a default", m.name);
            }
            for q in m.partner_queues {
                assert!(queues.contains(q), "{}: no queue '{q}'", m.name);
            }
            for r in m.flow_refs {
                let spec = m.params.iter().find(|p| p.name == *r);
                assert!(
                    spec.is_some_and(|p| p.kind == crate::params::ParamKind::Int),
                    "{}: {r} must be an int",
                    m.name
                );
            }
        }
        let json = registry_json();
        assert!(json.contains(r#""random":{"what":"random early drops","when":"always"}"#));
        assert!(json.contains(r#""partner_queues":["threshold"]"#));
        assert!(json.contains(r#""flow_refs":["to"]"#));
    }

    #[test]
    fn every_declared_variable_is_reported_and_named_as_its_column_needs() {
        use std::collections::BTreeMap;
        let suffixes: Vec<&str> = VarUnit::ALL.iter().map(|u| u.suffix()).filter(|s| !s.is_empty()).collect();
        // A name without a unit suffix means one unit wherever it is declared: the long form
        // of the traces reads that unit back from the name.
        let mut unsuffixed: BTreeMap<&str, (VarUnit, String)> = BTreeMap::new();
        let mut check = |model: &str, vars: &[VarSpec], reserved: &[VarSpec], var: &dyn Fn(&str) -> Option<f64>| {
            for (i, v) in vars.iter().enumerate() {
                let who = format!("{model}: {}", v.name);
                assert!(
                    !v.name.is_empty()
                        && v.name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
                    "{who}"
                );
                assert!(suffixes.iter().all(|s| !v.name.ends_with(s)), "{who}: the unit's suffix is added to the name");
                assert!(!v.doc.is_empty(), "{who}: no doc");
                assert!(vars[..i].iter().all(|w| w.name != v.name), "{who}: declared twice");
                assert!(reserved.iter().all(|w| w.name != v.name), "{who}: every flow or queue has it already");
                assert!(var(v.name).is_some(), "{who}: declared but not reported");
                if v.unit.suffix().is_empty() {
                    let (unit, first) = unsuffixed.entry(v.name).or_insert((v.unit, who.clone()));
                    assert_eq!(*unit, v.unit, "{who}: {first} has another unit");
                }
            }
            assert_eq!(var("no_such_variable"), None, "{model}");
        };
        for m in QUEUES {
            let q = (m.build)(&defaults(m.name, m.params).unwrap());
            check(m.name, q.vars(), vars::QUEUE_VARS, &|n| q.var(n));
            assert_eq!(queue_vars(m), q.vars());
        }
        for m in CCS {
            let cc = (m.build)(&defaults(m.name, m.params).unwrap(), Rng::stream(0, Stream::Cc(0)));
            check(m.name, cc.vars(), crate::tcp::vars::SENDER_VARS, &|n| cc.var(n));
        }
        let queue = crate::qdisc::Queue::new(
            "codel",
            (crate::qdisc::codel::MODEL.build)(&defaults("codel", crate::qdisc::codel::MODEL.params).unwrap()),
            Rng::stream(0, Stream::Cc(0)),
            0,
        );
        check("every queue", vars::QUEUE_VARS, &[], &|n| queue.var(n));
        let columns: Vec<VarSpec> =
            vars::QUEUE_COLUMNS.iter().chain([&vars::CWND_COLUMN]).chain(&vars::COUNTER_COLUMNS).copied().collect();
        for c in &columns {
            if c.unit.suffix().is_empty() {
                assert!(unsuffixed.get(c.name).is_none_or(|(u, _)| *u == c.unit), "{}", c.name);
            }
        }
        // The tables as the Python front reads them.
        let json = registry_json();
        assert!(json.contains(r#""vars":[{"column":"cwnd_bytes","doc":"congestion window"#));
        assert!(json.contains(r#"{"column":"drop_prob","doc":"drop (or mark) probability p"#));
        let facts = facts_json();
        assert!(facts.contains(r#""queue_vars":[{"column":"len_pkts","doc":"packets waiting"#), "{facts}");
        assert!(facts.contains(r#""var_units":{"bit/s":"_bps","bytes":"_bytes","count":"","#), "{facts}");
    }

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
