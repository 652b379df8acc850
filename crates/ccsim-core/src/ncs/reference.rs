//! Reference signals r(t): what the controlled output should follow. Piecewise constant, so
//! the loop also asks each one when it next changes (a breakpoint of the error integrals).
//!
//! - `square`: between `low` and `high` with a `period`, `high` for the first `duty` of each
//!   period (the convention of `scipy.signal.square`), or `low` first with `high_first = false`.
//!   Paper 000 sec. 4: "a square wave reference (R) between 1 and 2 radians, with period 2
//!   seconds"; which level comes first is not said.
//! - `step`: `initial` before `at`, `final` from `at` on.
//! - `constant`: `value`.
//!
//! Time is the simulation's (from 0), in integer nanoseconds, so switching instants are exact.

use crate::params::{ParamKind, ParamSpec, ParamValue, Params};
use crate::sim::time::{Time, SEC};

/// A reference signal.
pub trait Reference: Send {
    /// r(t); right-continuous at switching instants.
    fn value(&self, t: Time) -> f64;
    /// The first instant after `t` at which r changes, if any.
    fn next_change(&self, t: Time) -> Option<Time>;
}

/// A registered reference signal.
pub struct ReferenceModel {
    /// Name used in scenarios.
    pub name: &'static str,
    /// One line: what it does.
    pub doc: &'static str,
    /// Declared parameters.
    pub params: &'static [ParamSpec],
    /// Construct from validated parameters.
    pub build: fn(&Params) -> Box<dyn Reference>,
}

static SQUARE_PARAMS: &[ParamSpec] = &[
    ParamSpec::new("low", ParamKind::Float, Some(ParamValue::Float(1.0)), "low level (paper 000: 1 rad)"),
    ParamSpec::new("high", ParamKind::Float, Some(ParamValue::Float(2.0)), "high level (paper 000: 2 rad)"),
    ParamSpec::new("period", ParamKind::Time, Some(ParamValue::Int(2 * SEC as i64)), "period (paper 000: 2 s)")
        .range(2.0, 1e18),
    ParamSpec::new("duty", ParamKind::Prob, Some(ParamValue::Float(0.5)), "share of each period at the first level"),
    ParamSpec::new("high_first", ParamKind::Bool, Some(ParamValue::Bool(true)), "each period starts at `high`"),
];

static STEP_PARAMS: &[ParamSpec] = &[
    ParamSpec::new("initial", ParamKind::Float, Some(ParamValue::Float(0.0)), "value before `at`"),
    ParamSpec::new("final", ParamKind::Float, Some(ParamValue::Float(1.0)), "value from `at` on"),
    ParamSpec::new("at", ParamKind::Time, Some(ParamValue::Int(0)), "time of the step"),
];

static CONSTANT_PARAMS: &[ParamSpec] =
    &[ParamSpec::new("value", ParamKind::Float, Some(ParamValue::Float(1.0)), "the constant reference")];

/// Every reference signal ccsim knows.
pub static REFERENCES: &[ReferenceModel] = &[
    ReferenceModel {
        name: "square",
        doc: "square wave between low and high with a period (paper 000: 1..2 rad, 2 s)",
        params: SQUARE_PARAMS,
        build: |p| {
            let period = p.uint("period").max(2);
            let (first, second) = if p.bool("high_first") {
                (p.float("high"), p.float("low"))
            } else {
                (p.float("low"), p.float("high"))
            };
            let split = ((p.float("duty") * period as f64).round() as Time).min(period);
            Box::new(Square { first, second, period, split })
        },
    },
    ReferenceModel {
        name: "step",
        doc: "a step from initial to final at time `at`",
        params: STEP_PARAMS,
        build: |p| Box::new(Step { initial: p.float("initial"), last: p.float("final"), at: p.uint("at") }),
    },
    ReferenceModel {
        name: "constant",
        doc: "a constant set point",
        params: CONSTANT_PARAMS,
        build: |p| Box::new(Step { initial: p.float("value"), last: p.float("value"), at: 0 }),
    },
];

/// `first` on `[kP, kP + split)`, `second` on `[kP + split, (k+1)P)`.
#[derive(Clone, Debug)]
pub struct Square {
    first: f64,
    second: f64,
    period: Time,
    split: Time,
}

impl Reference for Square {
    fn value(&self, t: Time) -> f64 {
        if t % self.period < self.split {
            self.first
        } else {
            self.second
        }
    }

    fn next_change(&self, t: Time) -> Option<Time> {
        let base = t - t % self.period;
        let candidates = [base + self.split, base + self.period, base + self.period + self.split];
        candidates.into_iter().find(|&c| c > t && self.value(c) != self.value(t))
    }
}

/// `initial` before `at`, `last` from `at` on.
#[derive(Clone, Debug)]
pub struct Step {
    initial: f64,
    last: f64,
    at: Time,
}

impl Reference for Step {
    fn value(&self, t: Time) -> f64 {
        if t < self.at {
            self.initial
        } else {
            self.last
        }
    }

    fn next_change(&self, t: Time) -> Option<Time> {
        (t < self.at && self.initial != self.last).then_some(self.at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::time::MS;

    fn build(name: &str, given: &[(&str, ParamValue)]) -> Box<dyn Reference> {
        let model = REFERENCES.iter().find(|m| m.name == name).unwrap();
        let given = given.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        (model.build)(&Params::resolve(name, model.params, &given).unwrap())
    }

    #[test]
    fn paper_square_wave_alternates_every_second_and_reports_its_edges() {
        let r = build("square", &[]);
        assert_eq!(
            (r.value(0), r.value(999 * MS), r.value(SEC), r.value(2 * SEC - 1), r.value(2 * SEC)),
            (2.0, 2.0, 1.0, 1.0, 2.0)
        );
        assert_eq!(r.next_change(0), Some(SEC));
        assert_eq!(r.next_change(SEC), Some(2 * SEC));
        assert_eq!(r.next_change(2 * SEC - 1), Some(2 * SEC));
        let low_first = build("square", &[("high_first", ParamValue::Bool(false)), ("duty", ParamValue::Float(0.25))]);
        assert_eq!((low_first.value(0), low_first.value(500 * MS), low_first.value(2 * SEC)), (1.0, 2.0, 1.0));
        assert_eq!(low_first.next_change(0), Some(500 * MS));
    }

    #[test]
    fn a_square_wave_with_equal_levels_or_full_duty_never_changes() {
        let flat = build("square", &[("low", ParamValue::Float(2.0))]);
        assert_eq!(flat.next_change(0), None);
        let full = build("square", &[("duty", ParamValue::Float(1.0))]);
        assert_eq!((full.value(SEC), full.next_change(SEC)), (2.0, None));
    }

    #[test]
    fn step_and_constant() {
        let s = build("step", &[("at", ParamValue::Int(5 * MS as i64)), ("final", ParamValue::Float(3.0))]);
        assert_eq!((s.value(5 * MS - 1), s.value(5 * MS)), (0.0, 3.0));
        assert_eq!((s.next_change(0), s.next_change(5 * MS)), (Some(5 * MS), None));
        let c = build("constant", &[("value", ParamValue::Float(-1.5))]);
        assert_eq!((c.value(7), c.next_change(0)), (-1.5, None));
    }
}
