//! Networked control loops: a continuous plant sampled every h, a remote controller, and an
//! actuator, joined by messages that travel through the simulated network (the ANCE paper,
//! Sup, de Moraes, Bauchspiess, IJCNIS 2020, sec. 4, Fig. 7: sensor -> controller delay
//! τ^sc, controller -> actuator delay τ^ca, switches S1 and S2 for losses).
//!
//! One loop, with a *sensor flow* (plant host -> controller host) and an *actuator flow*
//! (controller host -> plant host), both flows whose application is [`crate::app::ncs`]:
//!
//! 1. Every `h` from `start` the sensor samples `y(t_k)` (sample k) and the loop writes one
//!    message on the sensor flow. The flow's message ledger numbers it; the loop keeps
//!    (message index -> sample) until the ledger reports it delivered or lost.
//! 2. When a sample is delivered the controller computes `u_k` from `e_k = r(t_k) - y_k` (the
//!    error at the sampling instant: the sample is time-stamped) and writes one message on
//!    the actuator flow, kept as (message index -> u_k).
//! 3. When a control is delivered the actuator applies `u_k` at once and holds it (zero-order
//!    hold) until the next one. The plant is advanced exactly over every interval in between
//!    (`plant.rs`), whatever its length.
//!
//! Late and lost messages, the event-driven rule (controller and actuator act on arrival,
//! as in paper 000 Fig. 7 where only the sensor is clock-driven):
//! - the controller ignores a sample whose index is not newer than the newest sample it
//!   already used (a late, reordered or duplicated sample: counted `samples_stale`);
//! - the actuator ignores a control computed from a sample not newer than the one behind the
//!   control it applies (`controls_stale`);
//! - a lost sample or control changes nothing: the actuator keeps the last value it applied
//!   (`samples_lost`, `controls_lost`). The controller's integral then spans the gap (see
//!   `controller.rs`).
//!
//! Deviation from paper 000, whose UPPAAL controller is clock-driven (it computes every h from
//! the newest measurement it has, Algorithm 3): here it is event-driven, which adds no
//! waiting for the next controller tick; the paper does not give the two clocks' phases.
//!
//! *Ideal* loop (no sensor or actuator flow): sample, control and actuation happen at the
//! same instant `t_k`, which is the classical sampled-data loop with a zero-order hold; a
//! reference for the network's effect, and what the tests compare with an independent
//! discretization.
//!
//! Scores (`score.rs`) are those of the plant side: the error `r(t) - y(t)` whatever reached
//! the controller, over the measured window `[warm-up, end]` with `t` the simulation time
//! (paper 000's 30 s runs have no warm-up). Counters are over the whole run.

pub mod controller;
pub mod expm;
pub mod plant;
pub mod reference;
pub mod score;

use std::collections::VecDeque;

use serde::Serialize;

use crate::config::{Config, ControlLoopSpec};
use crate::error::ConfigError;
use crate::params::Params;
use crate::sim::time::{secs, Time};
use controller::{Controller, CONTROLLERS};
use plant::{Plant, Zoh};
use reference::{Reference, REFERENCES};
use score::Scores;

/// Name of the application that carries a loop's messages.
pub const NCS_APP: &str = "ncs";

/// Which of a loop's messages a flow carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Samples, plant host -> controller host.
    Sensor,
    /// Controls, controller host -> plant host.
    Actuator,
}

/// Sample k of the output.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// Sample index.
    pub k: u64,
    /// Sampling instant t_k.
    pub t: Time,
    /// y(t_k).
    pub y: f64,
}

/// The control computed from sample k.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Control {
    /// Index of the sample it was computed from.
    pub k: u64,
    /// That sample's instant.
    pub t: Time,
    /// The control value.
    pub u: f64,
}

/// One loop's figures (whole-run counters; scores over the measured window).
#[derive(Clone, Debug, Default, Serialize)]
pub struct ControlResult {
    /// Index in the configuration.
    pub id: u32,
    /// Label (`control{id}` unless named).
    pub name: String,
    /// Sampling period (s).
    pub h_s: f64,
    /// Sensor flow index; `None` for an ideal loop.
    pub sensor_flow: Option<u32>,
    /// Actuator flow index; `None` for an ideal loop.
    pub actuator_flow: Option<u32>,
    /// ∫ t |e| dt over the measured window (rad.s for a position).
    pub itae: f64,
    /// Σ t_k |e_k| over the sampling instants of the measured window (paper 000's 8727 scale).
    pub itae_sum: f64,
    /// ∫ |e| dt.
    pub iae: f64,
    /// ∫ e^2 dt.
    pub ise: f64,
    /// Σ |e_k|.
    pub iae_sum: f64,
    /// Σ e_k^2.
    pub ise_sum: f64,
    /// Sampling instants in the measured window (terms of the sums).
    pub samples_scored: u64,
    /// Samples taken.
    pub samples: u64,
    /// Samples whose message was known lost.
    pub samples_lost: u64,
    /// Samples delivered but ignored as not newer than one already used.
    pub samples_stale: u64,
    /// Controls computed.
    pub controls: u64,
    /// Controls whose message was known lost.
    pub controls_lost: u64,
    /// Controls delivered but ignored as older than the one in force.
    pub controls_stale: u64,
    /// Controls applied by the actuator.
    pub controls_applied: u64,
    /// Mean time from sampling instant to actuation, over applied controls (s).
    pub actuation_delay_mean_s: Option<f64>,
    /// Largest time from sampling instant to actuation (s).
    pub actuation_delay_max_s: Option<f64>,
    /// Control held by the actuator at the end.
    pub final_u: f64,
    /// Plant output at the end.
    pub final_y: f64,
}

/// One row per sample of every loop, as columns.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ControlTraceLog {
    /// Loop index.
    #[serde(rename = "loop")]
    pub loop_id: Vec<u32>,
    /// Sampling instant (s).
    pub time_s: Vec<f64>,
    /// r(t_k).
    pub reference: Vec<f64>,
    /// y(t_k).
    pub output: Vec<f64>,
    /// u held by the actuator just after t_k (an actuation at t_k itself included).
    pub control: Vec<f64>,
    /// r(t_k) - y(t_k).
    pub error: Vec<f64>,
}

#[derive(Clone, Copy, Debug, Default)]
struct Counters {
    samples: u64,
    samples_lost: u64,
    samples_stale: u64,
    controls: u64,
    controls_lost: u64,
    controls_stale: u64,
    controls_applied: u64,
    delay_sum: u128,
    delay_max: Option<Time>,
}

/// A control loop and its state.
pub struct ControlLoop {
    name: String,
    plant: Plant,
    controller: Box<dyn Controller>,
    reference: Box<dyn Reference>,
    h: Time,
    next_sample: Time,
    k: u64,
    /// Time the plant state is at.
    t: Time,
    /// Control held by the actuator.
    u: f64,
    /// Integration grid step of the scores, and its exact discretization.
    grid: Time,
    zoh_grid: Zoh,
    score_from: Time,
    /// Flows carrying samples and controls; `None`: ideal loop.
    pub sensor_flow: Option<u32>,
    /// See `sensor_flow`.
    pub actuator_flow: Option<u32>,
    samples_in_flight: VecDeque<(u64, Sample)>,
    controls_in_flight: VecDeque<(u64, Control)>,
    newest_used: Option<u64>,
    newest_applied: Option<u64>,
    scores: Scores,
    counters: Counters,
    last_sample_at: Option<Time>,
    trace: ControlTraceLog,
}

impl ControlLoop {
    /// Build loop `id` from its spec; `field` names it in errors (`control[i]`).
    pub fn new(spec: &ControlLoopSpec, id: usize, warmup: Time, field: &str) -> Result<ControlLoop, ConfigError> {
        let plant = Plant::from_tf(&spec.plant_num, &spec.plant_den)
            .map_err(|m| ConfigError::new(format!("{field}.plant_den"), m))?;
        if spec.period_ns == 0 {
            return Err(ConfigError::new(format!("{field}.period_ns"), "the sampling period must be positive"));
        }
        if spec.substeps == 0 {
            return Err(ConfigError::new(format!("{field}.substeps"), "must be at least 1"));
        }
        let cmodel =
            crate::registry::find(CONTROLLERS, &spec.controller.kind, |m| m.name, &format!("{field}.controller.kind"))?;
        let cparams = Params::resolve(&format!("{field}.controller"), cmodel.params, &spec.controller.params)?;
        let rmodel =
            crate::registry::find(REFERENCES, &spec.reference.kind, |m| m.name, &format!("{field}.reference.kind"))?;
        let rparams = Params::resolve(&format!("{field}.reference"), rmodel.params, &spec.reference.params)?;
        let grid = (spec.period_ns / spec.substeps as u64).max(1);
        let zoh_grid = plant.zoh(secs(grid));
        Ok(ControlLoop {
            name: spec.name.clone().unwrap_or_else(|| format!("control{id}")),
            controller: (cmodel.build)(&cparams, spec.period_ns),
            reference: (rmodel.build)(&rparams),
            plant,
            h: spec.period_ns,
            next_sample: spec.start_ns,
            k: 0,
            t: 0,
            u: 0.0,
            grid,
            zoh_grid,
            score_from: warmup,
            sensor_flow: spec.sensor_flow,
            actuator_flow: spec.actuator_flow,
            samples_in_flight: VecDeque::new(),
            controls_in_flight: VecDeque::new(),
            newest_used: None,
            newest_applied: None,
            scores: Scores::default(),
            counters: Counters::default(),
            last_sample_at: None,
            trace: ControlTraceLog::default(),
        })
    }

    /// When the sensor samples next.
    pub fn next_sample_time(&self) -> Time {
        self.next_sample
    }

    /// Take sample k at `now` (the engine calls this at [`Self::next_sample_time`]).
    pub fn take_sample(&mut self, now: Time) -> Sample {
        self.advance_to(now);
        let y = self.plant.output(self.u);
        let r = self.reference.value(now);
        let e = r - y;
        if now >= self.score_from {
            self.scores.add_sample(secs(now), e);
        }
        self.trace.time_s.push(secs(now));
        self.trace.reference.push(r);
        self.trace.output.push(y);
        self.trace.control.push(self.u);
        self.trace.error.push(e);
        self.last_sample_at = Some(now);
        let sample = Sample { k: self.k, t: now, y };
        self.k += 1;
        self.counters.samples += 1;
        self.next_sample = now.saturating_add(self.h);
        sample
    }

    /// The controller receives `s`: the control to send, or `None` if the sample is stale.
    pub fn compute(&mut self, s: Sample) -> Option<Control> {
        if self.newest_used.is_some_and(|n| s.k <= n) {
            self.counters.samples_stale += 1;
            return None;
        }
        self.newest_used = Some(s.k);
        let e = self.reference.value(s.t) - s.y;
        let u = self.controller.control(s.t, e);
        self.counters.controls += 1;
        Some(Control { k: s.k, t: s.t, u })
    }

    /// The actuator receives `c` at `now`: apply it unless it is older than the one in force.
    pub fn apply(&mut self, c: Control, now: Time) {
        if self.newest_applied.is_some_and(|n| c.k <= n) {
            self.counters.controls_stale += 1;
            return;
        }
        self.advance_to(now);
        self.u = c.u;
        self.newest_applied = Some(c.k);
        let delay = now.saturating_sub(c.t);
        let n = &mut self.counters;
        n.controls_applied += 1;
        n.delay_sum += delay as u128;
        n.delay_max = Some(n.delay_max.map_or(delay, |d| d.max(delay)));
        if self.last_sample_at == Some(now) {
            // The trace shows the control in force just after the sampling instant.
            if let Some(last) = self.trace.control.last_mut() {
                *last = c.u;
            }
        }
    }

    /// Sample `s` left as message `index` of the sensor flow.
    pub fn sample_sent(&mut self, index: u64, s: Sample) {
        self.samples_in_flight.push_back((index, s));
    }

    /// The sensor flow's message `index` was delivered (or found lost): the control to send.
    pub fn sample_message(&mut self, index: u64, lost: bool) -> Option<Control> {
        let s = take_message(&mut self.samples_in_flight, index)?;
        if lost {
            self.counters.samples_lost += 1;
            return None;
        }
        self.compute(s)
    }

    /// The sample registered as message `index` was not sent after all (the flow was not
    /// running).
    pub fn unsend_sample(&mut self, index: u64) {
        if self.samples_in_flight.back().is_some_and(|&(i, _)| i == index) {
            self.samples_in_flight.pop_back();
        }
    }

    /// The control registered as message `index` was not sent after all.
    pub fn unsend_control(&mut self, index: u64) {
        if self.controls_in_flight.back().is_some_and(|&(i, _)| i == index) {
            self.controls_in_flight.pop_back();
        }
    }

    /// Control `c` left as message `index` of the actuator flow.
    pub fn control_sent(&mut self, index: u64, c: Control) {
        self.controls_in_flight.push_back((index, c));
    }

    /// The actuator flow's message `index` was delivered (or found lost) at `now`.
    pub fn control_message(&mut self, index: u64, lost: bool, now: Time) {
        let Some(c) = take_message(&mut self.controls_in_flight, index) else { return };
        if lost {
            self.counters.controls_lost += 1;
        } else {
            self.apply(c, now);
        }
    }

    /// Advance the plant to `to` with the held control, integrating the scores on the way.
    pub fn advance_to(&mut self, to: Time) {
        while self.t < to {
            let t = self.t;
            let mut next = (t / self.grid + 1).saturating_mul(self.grid).min(to);
            if let Some(c) = self.reference.next_change(t) {
                next = next.min(c);
            }
            if t < self.score_from {
                next = next.min(self.score_from);
            }
            let r = self.reference.value(t);
            let e0 = r - self.plant.output(self.u);
            if next - t == self.grid {
                self.plant.advance(&self.zoh_grid, self.u);
            } else {
                let zoh = self.plant.zoh(secs(next - t));
                self.plant.advance(&zoh, self.u);
            }
            let e1 = r - self.plant.output(self.u);
            if t >= self.score_from {
                self.scores.add_piece(secs(t), secs(next), e0, e1);
            }
            self.t = next;
        }
    }

    /// The scores so far.
    pub fn scores(&self) -> Scores {
        self.scores
    }

    /// The control held by the actuator.
    pub fn u(&self) -> f64 {
        self.u
    }

    /// The plant output now.
    pub fn y(&self) -> f64 {
        self.plant.output(self.u)
    }

    /// This loop's result row (call [`Self::advance_to`] the end first).
    pub fn result(&self, id: u32) -> ControlResult {
        let s = &self.scores;
        let n = &self.counters;
        ControlResult {
            id,
            name: self.name.clone(),
            h_s: secs(self.h),
            sensor_flow: self.sensor_flow,
            actuator_flow: self.actuator_flow,
            itae: s.itae,
            itae_sum: s.itae_sum,
            iae: s.iae,
            ise: s.ise,
            iae_sum: s.iae_sum,
            ise_sum: s.ise_sum,
            samples_scored: s.samples,
            samples: n.samples,
            samples_lost: n.samples_lost,
            samples_stale: n.samples_stale,
            controls: n.controls,
            controls_lost: n.controls_lost,
            controls_stale: n.controls_stale,
            controls_applied: n.controls_applied,
            actuation_delay_mean_s: (n.controls_applied > 0)
                .then(|| n.delay_sum as f64 / n.controls_applied as f64 / 1e9),
            actuation_delay_max_s: n.delay_max.map(secs),
            final_u: self.u,
            final_y: self.y(),
        }
    }

    /// Append this loop's per-sample rows to `log`.
    pub fn append_trace(&self, id: u32, log: &mut ControlTraceLog) {
        let t = &self.trace;
        log.loop_id.extend(std::iter::repeat_n(id, t.time_s.len()));
        log.time_s.extend_from_slice(&t.time_s);
        log.reference.extend_from_slice(&t.reference);
        log.output.extend_from_slice(&t.output);
        log.control.extend_from_slice(&t.control);
        log.error.extend_from_slice(&t.error);
    }
}

/// Pop the in-flight entry for message `index`, dropping older ones (the ledger reports
/// messages in order, so those were accounted for already).
fn take_message<T: Copy>(queue: &mut VecDeque<(u64, T)>, index: u64) -> Option<T> {
    while let Some(&(i, v)) = queue.front() {
        if i > index {
            return None;
        }
        queue.pop_front();
        if i == index {
            return Some(v);
        }
    }
    None
}

/// Per flow: the loop (index) and role it carries messages for, if any.
pub type FlowRoles = Vec<Option<(u32, Role)>>;

/// Build every loop of `cfg` and each flow's role in them; checks that the flows exist, carry
/// the `ncs` application, join the same two hosts in opposite directions, and that every
/// `ncs` flow belongs to exactly one loop.
pub fn build_loops(cfg: &Config) -> Result<(Vec<ControlLoop>, FlowRoles), ConfigError> {
    let mut roles: FlowRoles = vec![None; cfg.flows.len()];
    let mut loops = Vec::with_capacity(cfg.control.len());
    for (i, spec) in cfg.control.iter().enumerate() {
        let field = format!("control[{i}]");
        match (spec.sensor_flow, spec.actuator_flow) {
            (None, None) => {}
            (Some(s), Some(a)) => {
                for (key, f, role) in [("sensor_flow", s, Role::Sensor), ("actuator_flow", a, Role::Actuator)] {
                    let Some(flow) = cfg.flows.get(f as usize) else {
                        return Err(ConfigError::new(
                            format!("{field}.{key}"),
                            format!("flow {f} does not exist ({} flows)", cfg.flows.len()),
                        ));
                    };
                    if flow.app.kind != NCS_APP {
                        return Err(ConfigError::new(
                            format!("{field}.{key}"),
                            format!(
                                "flow {f} runs the '{}' application; a control loop's flows run '{NCS_APP}'",
                                flow.app.kind
                            ),
                        ));
                    }
                    if let Some((other, _)) = roles[f as usize] {
                        return Err(ConfigError::new(
                            format!("{field}.{key}"),
                            format!("flow {f} already carries messages of control[{other}]"),
                        ));
                    }
                    roles[f as usize] = Some((i as u32, role));
                }
                let (sf, af) = (&cfg.flows[s as usize], &cfg.flows[a as usize]);
                if s == a || af.src != sf.dst || af.dst != sf.src {
                    return Err(ConfigError::new(
                        format!("{field}.actuator_flow"),
                        "the actuator flow must run from the sensor flow's destination (controller) back to its source (plant)",
                    ));
                }
            }
            _ => {
                return Err(ConfigError::new(
                    format!("{field}.actuator_flow"),
                    "give both sensor_flow and actuator_flow, or neither (an ideal loop without network)",
                ))
            }
        }
        loops.push(ControlLoop::new(spec, i, cfg.warmup_ns, &field)?);
    }
    for (f, flow) in cfg.flows.iter().enumerate() {
        if flow.app.kind == NCS_APP && roles[f].is_none() {
            return Err(ConfigError::new(
                format!("flows[{f}].app.kind"),
                "an 'ncs' application only sends what a control loop gives it; no control[] entry uses this flow",
            ));
        }
    }
    Ok((loops, roles))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::time::MS;

    fn ideal(reference: crate::config::AlgoSpec) -> ControlLoop {
        let spec = ControlLoopSpec { reference, ..ControlLoopSpec::default() };
        ControlLoop::new(&spec, 0, 0, "control[0]").unwrap()
    }

    /// Run an ideal loop (sample, control and actuation at t_k) to `end`.
    fn run_ideal(l: &mut ControlLoop, end: Time) {
        while l.next_sample_time() <= end {
            let now = l.next_sample_time();
            let s = l.take_sample(now);
            if let Some(c) = l.compute(s) {
                l.apply(c, now);
            }
        }
        l.advance_to(end);
    }

    #[test]
    fn paper_loop_without_network_tracks_a_constant_reference() {
        let mut l = ideal(crate::config::AlgoSpec::named("constant"));
        run_ideal(&mut l, 3000 * MS);
        // PI on a type-1 plant: zero steady-state error, and u -> 0 (the motor holds still).
        assert!((l.y() - 1.0).abs() < 1e-6, "y = {}", l.y());
        assert!(l.u().abs() < 1e-5, "u = {}", l.u());
    }

    #[test]
    fn grid_refinement_changes_the_integral_itae_by_little() {
        let run = |substeps: u32| {
            let spec = ControlLoopSpec { substeps, ..ControlLoopSpec::default() };
            let mut l = ControlLoop::new(&spec, 0, 0, "c").unwrap();
            run_ideal(&mut l, 4000 * MS);
            l.scores()
        };
        let (coarse, fine) = (run(16), run(224));
        let rel = (coarse.itae - fine.itae).abs() / fine.itae;
        assert!(rel < 1e-3, "ITAE {} vs {} ({rel})", coarse.itae, fine.itae);
        // The per-sample sums see the same samples.
        assert!((coarse.itae_sum - fine.itae_sum).abs() < 1e-9 * fine.itae_sum);
        // And the integral is of the order of h times the sum.
        let ratio = fine.itae_sum * 0.014 / fine.itae;
        assert!(ratio > 0.8 && ratio < 1.25, "{ratio}");
    }

    #[test]
    fn stale_samples_and_controls_are_ignored_and_lost_ones_change_nothing() {
        let mut l = ideal(crate::config::AlgoSpec::named("square"));
        let s0 = l.take_sample(0);
        let s1 = l.take_sample(14 * MS);
        let c1 = l.compute(s1).unwrap();
        assert_eq!(l.compute(s0), None, "older than the newest used");
        l.apply(c1, 20 * MS);
        let held = l.u();
        l.apply(Control { k: 0, t: 0, u: 99.0 }, 21 * MS);
        assert_eq!(l.u(), held, "older than the control in force");
        let r = l.result(0);
        assert_eq!((r.samples_stale, r.controls_stale, r.controls_applied), (1, 1, 1));
        assert_eq!(r.actuation_delay_max_s, Some(0.006));
        // Messages: 5 and 6 in flight, 5 reported lost, 6 delivered.
        l.sample_sent(5, s0);
        l.sample_sent(6, Sample { k: 2, t: 28 * MS, y: 0.0 });
        assert_eq!(l.sample_message(5, true), None);
        assert!(l.sample_message(6, false).is_some());
        assert_eq!(l.result(0).samples_lost, 1);
    }
}
