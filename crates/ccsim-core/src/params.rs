//! Parameters of pluggable models, declared once in code.
//!
//! Every queue discipline, congestion control, transport and application declares its
//! parameters as a `&'static [ParamSpec]` table next to its implementation. The same table
//! drives three things, so they can never drift apart:
//! - validation of a scenario's parameters (here, and in the Python front through
//!   [`crate::registry::registry_json`]),
//! - defaults,
//! - `ccsim list`, which prints the table.
//!
//! Values travel in one canonical encoding (see [`ParamValue`]): times in integer nanoseconds,
//! rates in bits per second, sizes in bytes or packets.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::error::ConfigError;

/// What kind of quantity a parameter is; decides its unit and how it is written in a scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ParamKind {
    /// A duration, canonical value: integer nanoseconds (`"5ms"`).
    Time,
    /// A bit rate, canonical value: integer bits per second (`"10Mbps"`).
    Rate,
    /// A byte count (`"1500B"`, `"64KiB"`).
    Bytes,
    /// A buffer size in packets or bytes (`"100p"` or `"150000B"`).
    Size,
    /// A real number.
    Float,
    /// A probability in [0, 1].
    Prob,
    /// An integer.
    Int,
    /// `true` / `false`.
    Bool,
}

/// A parameter value in canonical units.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ParamValue {
    /// Booleans.
    Bool(bool),
    /// Integers: times (ns), rates (bit/s), byte counts, counts.
    Int(i64),
    /// Reals and probabilities.
    Float(f64),
    /// Buffer sizes.
    Size(Size),
}

/// A buffer limit, in packets or in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Size {
    /// A number of packets.
    Packets(u64),
    /// A number of bytes.
    Bytes(u64),
}

/// One declared parameter.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct ParamSpec {
    /// Key in the scenario file.
    pub name: &'static str,
    /// Kind of quantity (decides the unit).
    pub kind: ParamKind,
    /// Default in canonical units; `None` means the parameter is required.
    pub default: Option<ParamValue>,
    /// Smallest allowed value (canonical units), if bounded.
    pub min: Option<f64>,
    /// Largest allowed value (canonical units), if bounded.
    pub max: Option<f64>,
    /// One line saying what it is.
    pub doc: &'static str,
}

impl ParamSpec {
    /// A parameter with a default and no bounds.
    pub const fn new(
        name: &'static str,
        kind: ParamKind,
        default: Option<ParamValue>,
        doc: &'static str,
    ) -> Self {
        ParamSpec { name, kind, default, min: None, max: None, doc }
    }

    /// The same parameter with inclusive bounds.
    pub const fn range(mut self, min: f64, max: f64) -> Self {
        self.min = Some(min);
        self.max = Some(max);
        self
    }
}

/// Validated parameters of one model instance: every declared name has a value.
#[derive(Clone, Debug)]
pub struct Params {
    values: BTreeMap<&'static str, ParamValue>,
}

impl Params {
    /// Check `given` against `specs`: unknown names, wrong kinds, bounds; fill defaults.
    /// `owner` names the model in error messages (e.g. `queue 'A->B' (codel)`).
    pub fn resolve(
        owner: &str,
        specs: &'static [ParamSpec],
        given: &BTreeMap<String, ParamValue>,
    ) -> Result<Params, ConfigError> {
        for name in given.keys() {
            if !specs.iter().any(|s| s.name == name) {
                let allowed: Vec<&str> = specs.iter().map(|s| s.name).collect();
                return Err(ConfigError::new(
                    format!("{owner}.{name}"),
                    format!("unknown parameter; allowed: {}", allowed.join(", ")),
                ));
            }
        }
        let mut values = BTreeMap::new();
        for spec in specs {
            let value = match given.get(spec.name) {
                Some(v) => check_value(owner, spec, *v)?,
                None => spec.default.ok_or_else(|| {
                    ConfigError::new(format!("{owner}.{}", spec.name), "required parameter missing")
                })?,
            };
            values.insert(spec.name, value);
        }
        Ok(Params { values })
    }

    fn get(&self, name: &str) -> ParamValue {
        // Names come from the model's own table; a miss is a bug in that model, not bad input.
        *self.values.get(name).unwrap_or_else(|| panic!("parameter '{name}' not declared"))
    }

    /// An integer-valued parameter (time in ns, rate in bit/s, bytes, counts).
    pub fn int(&self, name: &str) -> i64 {
        match self.get(name) {
            ParamValue::Int(v) => v,
            ParamValue::Float(v) => v as i64,
            other => panic!("parameter '{name}' is {other:?}, not an integer"),
        }
    }

    /// A non-negative integer parameter.
    pub fn uint(&self, name: &str) -> u64 {
        self.int(name).max(0) as u64
    }

    /// A real parameter (an integer is accepted).
    pub fn float(&self, name: &str) -> f64 {
        match self.get(name) {
            ParamValue::Float(v) => v,
            ParamValue::Int(v) => v as f64,
            other => panic!("parameter '{name}' is {other:?}, not a number"),
        }
    }

    /// A boolean parameter.
    pub fn bool(&self, name: &str) -> bool {
        match self.get(name) {
            ParamValue::Bool(v) => v,
            other => panic!("parameter '{name}' is {other:?}, not a boolean"),
        }
    }

    /// A buffer-size parameter.
    pub fn size(&self, name: &str) -> Size {
        match self.get(name) {
            ParamValue::Size(v) => v,
            other => panic!("parameter '{name}' is {other:?}, not a size"),
        }
    }
}

fn check_value(owner: &str, spec: &ParamSpec, v: ParamValue) -> Result<ParamValue, ConfigError> {
    let field = || format!("{owner}.{}", spec.name);
    let numeric = |x: f64| -> Result<(), ConfigError> {
        if !x.is_finite() {
            return Err(ConfigError::new(field(), "must be a finite number"));
        }
        if let Some(min) = spec.min {
            if x < min {
                return Err(ConfigError::new(field(), format!("must be >= {min}, got {x}")));
            }
        }
        if let Some(max) = spec.max {
            if x > max {
                return Err(ConfigError::new(field(), format!("must be <= {max}, got {x}")));
            }
        }
        Ok(())
    };
    match (spec.kind, v) {
        (ParamKind::Bool, ParamValue::Bool(_)) => Ok(v),
        (ParamKind::Size, ParamValue::Size(s)) => {
            let n = match s {
                Size::Packets(n) | Size::Bytes(n) => n,
            };
            numeric(n as f64)?;
            Ok(v)
        }
        (ParamKind::Time | ParamKind::Rate | ParamKind::Bytes | ParamKind::Int, ParamValue::Int(x)) => {
            if x < 0 {
                return Err(ConfigError::new(field(), format!("must not be negative, got {x}")));
            }
            numeric(x as f64)?;
            Ok(v)
        }
        (ParamKind::Float, ParamValue::Float(x)) => numeric(x).map(|_| v),
        (ParamKind::Float, ParamValue::Int(x)) => numeric(x as f64).map(|_| ParamValue::Float(x as f64)),
        (ParamKind::Prob, ParamValue::Float(x)) => {
            numeric(x)?;
            if !(0.0..=1.0).contains(&x) {
                return Err(ConfigError::new(field(), format!("must be a probability in [0, 1], got {x}")));
            }
            Ok(v)
        }
        (ParamKind::Prob, ParamValue::Int(x)) if x == 0 || x == 1 => Ok(ParamValue::Float(x as f64)),
        (kind, other) => Err(ConfigError::new(
            field(),
            format!("expected a {kind:?} value, got {other:?}").to_lowercase(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static SPECS: &[ParamSpec] = &[
        ParamSpec::new("limit", ParamKind::Size, Some(ParamValue::Size(Size::Packets(100))), "buffer"),
        ParamSpec::new("target", ParamKind::Time, Some(ParamValue::Int(5_000_000)), "target"),
        ParamSpec::new("p", ParamKind::Prob, None, "prob"),
        ParamSpec::new("w", ParamKind::Float, Some(ParamValue::Float(0.5)), "w").range(0.0, 1.0),
    ];

    fn given(pairs: &[(&str, ParamValue)]) -> BTreeMap<String, ParamValue> {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn defaults_fill_and_required_is_enforced() {
        let p = Params::resolve("q", SPECS, &given(&[("p", ParamValue::Float(0.25))])).unwrap();
        assert_eq!(p.size("limit"), Size::Packets(100));
        assert_eq!(p.int("target"), 5_000_000);
        assert_eq!(p.float("p"), 0.25);
        let err = Params::resolve("q", SPECS, &given(&[])).unwrap_err();
        assert_eq!(err.field, "q.p");
    }

    #[test]
    fn unknown_names_wrong_kinds_and_bounds_are_rejected() {
        let err = Params::resolve("q", SPECS, &given(&[("p", ParamValue::Float(0.1)), ("x", ParamValue::Int(1))]))
            .unwrap_err();
        assert_eq!(err.field, "q.x");
        assert!(err.message.contains("allowed: limit, target, p, w"), "{}", err.message);
        let err = Params::resolve("q", SPECS, &given(&[("p", ParamValue::Float(1.5))])).unwrap_err();
        assert_eq!(err.field, "q.p");
        let err = Params::resolve("q", SPECS, &given(&[("p", ParamValue::Float(0.1)), ("w", ParamValue::Float(2.0))]))
            .unwrap_err();
        assert_eq!(err.field, "q.w");
        let err = Params::resolve("q", SPECS, &given(&[("p", ParamValue::Float(0.1)), ("target", ParamValue::Int(-1))]))
            .unwrap_err();
        assert_eq!(err.field, "q.target");
        let err = Params::resolve("q", SPECS, &given(&[("p", ParamValue::Float(0.1)), ("limit", ParamValue::Bool(true))]))
            .unwrap_err();
        assert_eq!(err.field, "q.limit");
    }
}
