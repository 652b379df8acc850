//! `ccsim._core`: thin Python bindings over ccsim-core.
//!
//! The engine runs with the GIL released. A configuration error becomes `ConfigError` (a
//! `ValueError` with `.field` and `.message`); a panic in the engine, which would be a bug,
//! becomes `SimulationError` (a `RuntimeError`) naming the seed to replay it, never an abort;
//! it carries `.seed` and `.panic` (the engine's message, with the simulated time for an
//! invariant violation). The Python front adds the scenario and writes a replay file.
//!
//! Test-only: a top-level `_panic_at_ns` key in the configuration JSON is removed before
//! the engine parses it and makes the run panic once it reaches that time, so that the panic
//! path can be tested against a release build (where invariant checks are compiled out).

mod columns;
mod models;

use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, Once};

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

pyo3::create_exception!(_core, ConfigError, PyValueError, "A core configuration that cannot be simulated.");
pyo3::create_exception!(
    _core,
    SimulationError,
    PyRuntimeError,
    "The engine failed (a bug): replay with the seed given."
);

fn config_error(py: Python<'_>, e: ccsim_core::ConfigError) -> PyErr {
    let err = ConfigError::new_err(e.to_string());
    let value = err.value(py);
    // Attributes for callers that map the field back to the scenario file.
    let _ = value.setattr("field", e.field);
    let _ = value.setattr("message", e.message);
    err
}

/// A `SimulationError` with the seed and the engine's panic message as attributes.
fn simulation_error(py: Python<'_>, seed: u64, what: &str, panic: String) -> PyErr {
    let err = SimulationError::new_err(format!("{what} (seed {seed}): {panic}"));
    let value = err.value(py);
    let _ = value.setattr("seed", seed);
    let _ = value.setattr("panic", panic);
    err
}

/// A Python model's callback raised: a `SimulationError` naming the model, the callback and
/// the simulated time, caused by the exception (whose traceback shows the user's code).
fn model_error(py: Python<'_>, seed: u64, f: models::Failure) -> PyErr {
    let at = f.now as f64 / 1e9;
    let err = SimulationError::new_err(format!(
        "{} '{}' failed in {} at t = {at:.9} s: {}",
        f.family,
        f.model,
        f.callback,
        f.error.value(py).repr().map_or_else(|_| f.error.to_string(), |r| r.to_string())
    ));
    let value = err.value(py);
    let _ = value.setattr("seed", seed);
    let _ = value.setattr("model", f.model);
    let _ = value.setattr("callback", f.callback);
    let _ = value.setattr("time_s", at);
    err.set_cause(py, Some(f.error));
    err
}

/// Split the test-only `_panic_at_ns` key off a configuration. Only tests set it, and a
/// configuration of thousands of flows is megabytes, so a text search decides whether the
/// configuration is parsed here as well as by the engine.
fn take_panic_knob(config_json: &str) -> (Option<String>, Option<u64>) {
    if !config_json.contains("\"_panic_at_ns\"") {
        return (None, None);
    }
    let Ok(serde_json::Value::Object(mut map)) = serde_json::from_str::<serde_json::Value>(config_json) else {
        return (None, None);
    };
    match map.remove("_panic_at_ns") {
        Some(v) => (Some(serde_json::Value::Object(map).to_string()), v.as_u64()),
        None => (None, None),
    }
}

/// The seed of a configuration the engine could not build (1, the engine's default, when
/// missing or malformed), for the message of a panic while building.
fn seed_of(config_json: &str) -> u64 {
    serde_json::from_str::<serde_json::Value>(config_json)
        .ok()
        .and_then(|v| v.get("seed").and_then(|s| s.as_u64()))
        .unwrap_or(1)
}

thread_local! {
    /// True while this thread runs engine code under `catch_unwind`.
    static IN_ENGINE: Cell<bool> = const { Cell::new(false) };
    /// Where the last engine panic on this thread happened (`file:line`).
    static PANIC_AT: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// A panic inside the engine becomes the exception's message, which names where it happened:
/// the default hook's report (and backtrace) on stderr would only add noise to the one-line
/// error. Panics elsewhere go to the previous hook as before.
fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if IN_ENGINE.with(|e| e.get()) {
                let at = info.location().map(|l| format!("{}:{}", l.file(), l.line()));
                PANIC_AT.with(|p| *p.borrow_mut() = at);
            } else {
                previous(info);
            }
        }));
    });
}

/// Run `f` under `catch_unwind`, marked as engine code for the panic hook.
fn catch_engine<T>(f: impl FnOnce() -> T) -> Result<T, Box<dyn std::any::Any + Send>> {
    IN_ENGINE.with(|e| e.set(true));
    let out = catch_unwind(AssertUnwindSafe(f));
    IN_ENGINE.with(|e| e.set(false));
    out
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "unknown panic".to_string());
    match PANIC_AT.with(|p| p.borrow_mut().take()) {
        Some(at) => format!("{message} (at {at})"),
        None => message,
    }
}

/// A simulation built from a core configuration (JSON).
#[pyclass(module = "ccsim._core")]
struct Simulation {
    /// `None` once the engine has panicked: its state can no longer be trusted.
    inner: Mutex<Option<ccsim_core::Simulation>>,
    seed: u64,
    duration_ns: u64,
}

/// Why a call into the engine failed.
enum Failure {
    /// It panicked now, with this message.
    Panicked(String),
    /// It had panicked before.
    Dead,
}

impl Simulation {
    fn with<T: Send>(
        &self,
        py: Python<'_>,
        release_gil: bool,
        f: impl FnOnce(&mut ccsim_core::Simulation) -> T + Send,
    ) -> PyResult<T> {
        let seed = self.seed;
        let run = || {
            let mut guard = self.inner.lock().unwrap_or_else(|p| p.into_inner());
            let Some(sim) = guard.as_mut() else {
                return Err(Failure::Dead);
            };
            match catch_engine(|| f(sim)) {
                Ok(v) => Ok(v),
                Err(payload) => {
                    *guard = None;
                    Err(Failure::Panicked(panic_message(payload)))
                }
            }
        };
        let out = if release_gil { py.detach(run) } else { run() };
        out.map_err(|e| match e {
            Failure::Panicked(message) => match models::take_failure() {
                Some(failure) => model_error(py, seed, failure),
                None => simulation_error(py, seed, "engine panic", message),
            },
            Failure::Dead => {
                let err = SimulationError::new_err("this simulation failed earlier and cannot continue");
                let _ = err.value(py).setattr("seed", seed);
                err
            }
        })
    }
}

#[pymethods]
impl Simulation {
    #[new]
    fn new(py: Python<'_>, config_json: &str) -> PyResult<Self> {
        let (stripped, panic_at) = take_panic_knob(config_json);
        let json = stripped.as_deref().unwrap_or(config_json);
        match catch_engine(|| ccsim_core::from_json(json)) {
            Ok(Ok(mut sim)) => {
                sim.set_panic_at(panic_at);
                let (seed, duration_ns) = (sim.seed(), sim.duration());
                Ok(Simulation { inner: Mutex::new(Some(sim)), seed, duration_ns })
            }
            Ok(Err(e)) => Err(config_error(py, e)),
            Err(p) => Err(simulation_error(py, seed_of(json), "engine panic while building", panic_message(p))),
        }
    }

    /// Advance simulated time to `t_ns` (capped at the duration), with the GIL released.
    fn run_until(&self, py: Python<'_>, t_ns: u64) -> PyResult<()> {
        self.advance(py, t_ns, u64::MAX).map(|_| ())
    }

    /// Run at most `max_events` events towards `t_ns` (capped at the duration), with the
    /// GIL released: True once `t_ns` is reached. Raises SimulationError if simulated time
    /// stops advancing.
    fn advance(&self, py: Python<'_>, t_ns: u64, max_events: u64) -> PyResult<bool> {
        let seed = self.seed;
        self.with(py, true, |sim| sim.advance(t_ns, max_events.max(1)))?.map_err(|stall| {
            let err = SimulationError::new_err(format!("seed {seed}: {stall}"));
            let _ = err.value(py).setattr("seed", seed);
            err
        })
    }

    /// Current simulated time (ns).
    #[getter]
    fn now_ns(&self, py: Python<'_>) -> PyResult<u64> {
        self.with(py, false, |sim| sim.now())
    }

    /// Configured duration (ns).
    #[getter]
    fn duration_ns(&self) -> u64 {
        self.duration_ns
    }

    /// Master seed.
    #[getter]
    fn seed(&self) -> u64 {
        self.seed
    }

    /// True once the run has reached its duration.
    #[getter]
    fn finished(&self, py: Python<'_>) -> PyResult<bool> {
        self.with(py, false, |sim| sim.finished())
    }

    /// Events executed so far.
    #[getter]
    fn events(&self, py: Python<'_>) -> PyResult<u64> {
        self.with(py, false, |sim| sim.events_executed())
    }

    /// Everything measured so far, as the engine's JSON (tables as records), as `ccsim-bench`
    /// writes it.
    fn results_json(&self, py: Python<'_>) -> PyResult<String> {
        let results = self.with(py, true, |sim| sim.results())?;
        serde_json::to_string(&results).map_err(|e| SimulationError::new_err(e.to_string()))
    }

    /// Everything measured so far: a dict of the `Results` fields, each table (flows, queues,
    /// control loops, logs) a dict of columns, NumPy arrays where they are numeric (columns.rs);
    /// with packet captures (`trace.pcap`), also `pcap`: a dict of `bytes`, one pcap file per
    /// traced link direction, by name.
    fn results(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let (node, pcap) = self.with(py, true, |sim| (columns::node_of(&sim.results()), sim.pcap()))?;
        let out = columns::to_py(py, node.map_err(|e| SimulationError::new_err(e.to_string()))?)?;
        if !pcap.is_empty() {
            let files = PyDict::new(py);
            for (name, bytes) in pcap {
                files.set_item(name, PyBytes::new(py, &bytes))?;
            }
            out.bind(py).set_item("pcap", files)?;
        }
        Ok(out)
    }
}

/// Every registered model with its parameters, as JSON.
/// Check a core configuration (JSON) as `Simulation(config_json)` would, keeping nothing:
/// `ConfigError` names the field the engine refuses.
#[pyfunction]
fn validate(py: Python<'_>, config_json: &str) -> PyResult<()> {
    let (stripped, _) = take_panic_knob(config_json);
    let json = stripped.as_deref().unwrap_or(config_json);
    match catch_engine(|| ccsim_core::validate_json(json)) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(config_error(py, e)),
        Err(p) => Err(simulation_error(py, seed_of(json), "engine panic while checking", panic_message(p))),
    }
}

#[pyfunction]
fn registry_json() -> String {
    ccsim_core::registry::registry_json()
}

/// Every flow's path from its source to its destination as the engine routes it: link
/// indices (2 i is `links[i]` from a to b, 2 i + 1 back), empty when not connected.
/// Engine facts besides the models (registry.rs `facts_json`), as JSON.
#[pyfunction]
fn facts_json() -> String {
    ccsim_core::registry::facts_json()
}

#[pyfunction]
fn flow_paths(py: Python<'_>, config_json: &str) -> PyResult<Vec<Vec<u32>>> {
    match catch_engine(|| {
        ccsim_core::config_from_json(config_json).and_then(|cfg| ccsim_core::net::route::flow_paths(&cfg))
    }) {
        Ok(Ok(paths)) => Ok(paths),
        Ok(Err(e)) => Err(config_error(py, e)),
        Err(p) => Err(simulation_error(py, seed_of(config_json), "engine panic while routing", panic_message(p))),
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    install_panic_hook();
    ccsim_core::external::install(Box::new(models::PythonModels));
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("ConfigError", m.py().get_type::<ConfigError>())?;
    m.add("SimulationError", m.py().get_type::<SimulationError>())?;
    m.add_class::<Simulation>()?;
    m.add_class::<models::CcView>()?;
    m.add_class::<models::AckView>()?;
    m.add_class::<models::QueueView>()?;
    m.add_class::<models::PacketView>()?;
    m.add_function(wrap_pyfunction!(registry_json, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(flow_paths, m)?)?;
    m.add_function(wrap_pyfunction!(facts_json, m)?)?;
    Ok(())
}
