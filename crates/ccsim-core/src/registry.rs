//! The registry of pluggable models, as data: what `ccsim list` prints and what the Python
//! front validates scenarios against. Generated from the models' own tables.

use serde::Serialize;

use crate::app::APPS;
use crate::error::ConfigError;
use crate::params::ParamSpec;
use crate::qdisc::QUEUES;
use crate::tcp::cc::CCS;

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
}

impl ModelInfo {
    fn new(family: &'static str, name: &'static str, doc: &'static str, params: &'static [ParamSpec]) -> Self {
        ModelInfo { family, name, doc, params, random: Randomness::Never, partner_queues: &[], flow_refs: &[] }
    }
}

/// Every registered model, family by family.
pub fn registry() -> Vec<ModelInfo> {
    let mut out = Vec::new();
    for m in QUEUES {
        out.push(ModelInfo { random: m.random, ..ModelInfo::new("queue", m.name, m.doc, m.params) });
    }
    for m in CCS {
        let info = ModelInfo::new("cc", m.name, m.doc, m.params);
        out.push(ModelInfo { random: m.random, partner_queues: m.partner_queues, ..info });
    }
    for m in crate::transport::TRANSPORTS {
        out.push(ModelInfo::new("transport", m.name, m.doc, m.params));
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
/// still gets a typed table) and the highest plant order a loop supports.
pub fn facts_json() -> String {
    let control = serde_json::to_string(&crate::ncs::ControlResult::default()).expect("a row serializes");
    format!(r#"{{"control_row":{control},"max_plant_order":{}}}"#, crate::ncs::plant::MAX_ORDER)
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
