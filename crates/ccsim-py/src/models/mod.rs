//! Congestion controls and queue disciplines written in Python, run inside the engine behind
//! its own traits (`CongestionControl`, `QueueDisc`), through ccsim-core's external-model hook.
//!
//! The Python class is made by `ccsim.engine.user_models.instantiate` (which finds it by its
//! source, converts its parameters and sets them as attributes). Each engine call of the trait
//! takes the GIL, shows the Python method a view of the state (`CcState`, or the queue `Queue`
//! and a `Packet`), and reads back what it changed; methods a class does not define are never
//! called, and cost nothing. The engine holds the GIL only while a callback runs.
//!
//! A Python exception in a callback cannot return through the trait: it is kept in
//! [`FAILURE`] with the model, the callback and the simulated time, and the engine is stopped
//! by a panic, which the binding turns into a `SimulationError` whose cause is the exception
//! (so the user's traceback is kept). Values a model sets are checked where they are set (a
//! window below one segment, a packet the queue does not hold), so the error points at the
//! user's line.

mod cc;
mod queue;

use std::cell::RefCell;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use ccsim_core::external::{ExternalModels, ExternalSpec};
use ccsim_core::qdisc::QueueDisc;
use ccsim_core::sim::rng::Rng;
use ccsim_core::sim::time::Time;
use ccsim_core::tcp::cc::CongestionControl;

pub use cc::{AckView, CcView};
pub use queue::{PacketView, QueueView};

const NS_PER_S: f64 = 1e9;

fn seconds(ns: Time) -> f64 {
    ns as f64 / NS_PER_S
}

/// A Python callback that raised, kept until the engine's panic has unwound.
pub struct Failure {
    /// `congestion control` or `queue discipline`.
    pub family: &'static str,
    /// The model's name.
    pub model: &'static str,
    /// The method that raised.
    pub callback: &'static str,
    /// Simulated time of the call.
    pub now: Time,
    /// The exception.
    pub error: PyErr,
}

thread_local! {
    static FAILURE: RefCell<Option<Failure>> = const { RefCell::new(None) };
}

/// The failure behind the last engine panic on this thread, if a Python model caused it.
pub fn take_failure() -> Option<Failure> {
    FAILURE.with(|f| f.borrow_mut().take())
}

/// Keep `error` and stop the engine.
fn fail(family: &'static str, model: &'static str, callback: &'static str, now: Time, error: PyErr) -> ! {
    let message = format!("{family} '{model}' raised in {callback}");
    FAILURE.with(|f| *f.borrow_mut() = Some(Failure { family, model, callback, now, error }));
    std::panic::panic_any(message)
}

/// The hook ccsim-core calls for models it does not know.
pub struct PythonModels;

fn instantiate<'py>(py: Python<'py>, family: &str, spec: &ExternalSpec) -> PyResult<Bound<'py, PyAny>> {
    let params = serde_json::to_string(&spec.spec.params).map_err(|e| PyValueError::new_err(e.to_string()))?;
    py.import("ccsim.engine.user_models")?.call_method1("instantiate", (family, spec.name, spec.source, params))
}

impl ExternalModels for PythonModels {
    fn congestion_control(
        &self,
        spec: &ExternalSpec,
        _flow: u32,
        rng: Rng,
    ) -> Result<Box<dyn CongestionControl>, String> {
        Python::attach(|py| {
            let obj = instantiate(py, "cc", spec)?;
            cc::PyCc::new(py, spec.name, obj, rng)
        })
        .map(|cc| Box::new(cc) as Box<dyn CongestionControl>)
        .map_err(|e| e.to_string())
    }

    fn queue_disc(&self, spec: &ExternalSpec) -> Result<Box<dyn QueueDisc>, String> {
        Python::attach(|py| {
            let obj = instantiate(py, "queue", spec)?;
            queue::PyQueue::new(py, spec.name, obj)
        })
        .map(|q| Box::new(q) as Box<dyn QueueDisc>)
        .map_err(|e| e.to_string())
    }
}
