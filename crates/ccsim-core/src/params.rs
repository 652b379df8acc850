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
    /// One name out of the parameter's declared `choices` (`"uniform"`).
    Choice,
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
    /// A name (the value of a [`ParamKind::Choice`] parameter).
    Name(Name),
}

/// A short name held by value, so that [`ParamValue`] stays `Copy` (no allocation).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Name {
    len: u8,
    bytes: [u8; Name::MAX],
}

impl Name {
    /// Longest name, in bytes.
    pub const MAX: usize = 23;

    /// `text` as a name, if it is at most [`Name::MAX`] bytes long.
    pub const fn new(text: &str) -> Option<Name> {
        let len = text.len();
        if len > Name::MAX {
            return None;
        }
        let src = text.as_bytes();
        let mut bytes = [0; Name::MAX];
        let mut i = 0;
        while i < len {
            bytes[i] = src[i];
            i += 1;
        }
        Some(Name { len: len as u8, bytes })
    }

    /// A name for a declaration table (a default); too long a literal fails to compile.
    pub const fn lit(text: &'static str) -> Name {
        match Name::new(text) {
            Some(n) => n,
            None => panic!("a parameter name value is at most 23 bytes"),
        }
    }

    /// The name's text.
    pub fn as_str(&self) -> &str {
        // Built from a &str cut at its own length, so always valid UTF-8.
        std::str::from_utf8(&self.bytes[..self.len as usize]).unwrap_or("")
    }
}

impl std::fmt::Debug for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

impl Serialize for Name {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Name, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Name::new(&text)
            .ok_or_else(|| serde::de::Error::custom(format!("name longer than {} bytes: {text:?}", Name::MAX)))
    }
}

impl ParamValue {
    /// A name value; names longer than [`Name::MAX`] bytes are cut (they match no choice).
    pub fn name(text: &str) -> ParamValue {
        let cut = (0..=text.len().min(Name::MAX)).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
        ParamValue::Name(Name::new(&text[..cut]).unwrap_or(Name { len: 0, bytes: [0; Name::MAX] }))
    }
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
    /// The allowed names of a [`ParamKind::Choice`] parameter (empty otherwise).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub choices: &'static [&'static str],
}

impl ParamSpec {
    /// A parameter with a default and no bounds.
    pub const fn new(name: &'static str, kind: ParamKind, default: Option<ParamValue>, doc: &'static str) -> Self {
        ParamSpec { name, kind, default, min: None, max: None, doc, choices: &[] }
    }

    /// The same parameter restricted to these names (for [`ParamKind::Choice`]).
    pub const fn choices(mut self, choices: &'static [&'static str]) -> Self {
        self.choices = choices;
        self
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
                None => spec
                    .default
                    .ok_or_else(|| ConfigError::new(format!("{owner}.{}", spec.name), "required parameter missing"))?,
            };
            values.insert(spec.name, value);
        }
        Ok(Params { values })
    }

    /// Whether the model declares a parameter `name`.
    pub fn has(&self, name: &str) -> bool {
        self.values.contains_key(name)
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

    /// A choice parameter's name.
    pub fn choice(&self, name: &str) -> &str {
        match self.values.get(name) {
            Some(ParamValue::Name(n)) => n.as_str(),
            other => panic!("parameter '{name}' is {other:?}, not a name"),
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
        (ParamKind::Choice, ParamValue::Name(n)) => {
            if spec.choices.contains(&n.as_str()) {
                Ok(v)
            } else {
                Err(ConfigError::new(field(), format!("unknown '{}'; one of: {}", n.as_str(), spec.choices.join(", "))))
            }
        }
        (kind, other) => {
            Err(ConfigError::new(field(), format!("expected a {kind:?} value, got {other:?}").to_lowercase()))
        }
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
        let err =
            Params::resolve("q", SPECS, &given(&[("p", ParamValue::Float(0.1)), ("target", ParamValue::Int(-1))]))
                .unwrap_err();
        assert_eq!(err.field, "q.target");
        let err =
            Params::resolve("q", SPECS, &given(&[("p", ParamValue::Float(0.1)), ("limit", ParamValue::Bool(true))]))
                .unwrap_err();
        assert_eq!(err.field, "q.limit");
    }

    static CHOICE: &[ParamSpec] =
        &[ParamSpec::new("dist", ParamKind::Choice, Some(ParamValue::Name(Name::lit(""))), "distribution").choices(&[
            "",
            "uniform",
            "exponential",
        ])];

    #[test]
    fn choices_accept_declared_names_only_and_round_trip_through_json() {
        let p = Params::resolve("n", CHOICE, &given(&[("dist", ParamValue::name("uniform"))])).unwrap();
        assert_eq!(p.choice("dist"), "uniform");
        let err = Params::resolve("n", CHOICE, &given(&[("dist", ParamValue::name("gauss"))])).unwrap_err();
        assert_eq!(err.field, "n.dist");
        assert!(err.message.contains("one of: , uniform, exponential"), "{}", err.message);
        let err = Params::resolve("n", CHOICE, &given(&[("dist", ParamValue::Int(1))])).unwrap_err();
        assert_eq!(err.field, "n.dist");
        let v: ParamValue = serde_json::from_str("\"exponential\"").unwrap();
        assert_eq!(v, ParamValue::name("exponential"));
        assert_eq!(serde_json::to_string(&v).unwrap(), "\"exponential\"");
        // Numbers and sizes still decode as before.
        assert_eq!(serde_json::from_str::<ParamValue>("3").unwrap(), ParamValue::Int(3));
        assert_eq!(serde_json::from_str::<ParamValue>("{\"packets\":5}").unwrap(), ParamValue::Size(Size::Packets(5)));
        assert!(serde_json::from_str::<ParamValue>("\"a-name-much-longer-than-allowed\"").is_err());
    }
}
