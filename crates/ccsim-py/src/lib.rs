//! `ccsim._core`: thin Python bindings over ccsim-core.
//!
//! The engine runs with the GIL released. A configuration error becomes `ConfigError` (a
//! `ValueError` with `.field` and `.message`); a panic in the engine, which would be a bug,
//! becomes `SimulationError` (a `RuntimeError`) naming the seed to replay it, never an abort.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

pyo3::create_exception!(_core, ConfigError, PyValueError, "A core configuration that cannot be simulated.");
pyo3::create_exception!(_core, SimulationError, PyRuntimeError, "The engine failed (a bug): replay with the seed given.");

fn config_error(py: Python<'_>, e: ccsim_core::ConfigError) -> PyErr {
    let err = ConfigError::new_err(e.to_string());
    let value = err.value(py);
    // Attributes for callers that map the field back to the scenario file.
    let _ = value.setattr("field", e.field);
    let _ = value.setattr("message", e.message);
    err
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "unknown panic".to_string())
}

/// A simulation built from a core configuration (JSON).
#[pyclass(module = "ccsim._core")]
struct Simulation {
    /// `None` once the engine has panicked: its state can no longer be trusted.
    inner: Mutex<Option<ccsim_core::Simulation>>,
    seed: u64,
    duration_ns: u64,
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
                return Err("this simulation failed earlier and cannot continue".to_string());
            };
            match catch_unwind(AssertUnwindSafe(|| f(sim))) {
                Ok(v) => Ok(v),
                Err(payload) => {
                    *guard = None;
                    Err(format!("engine panic (seed {seed}): {}", panic_message(payload)))
                }
            }
        };
        let out = if release_gil { py.detach(run) } else { run() };
        out.map_err(SimulationError::new_err)
    }
}

#[pymethods]
impl Simulation {
    #[new]
    fn new(py: Python<'_>, config_json: &str) -> PyResult<Self> {
        let seed = serde_json::from_str::<serde_json::Value>(config_json)
            .ok()
            .and_then(|v| v.get("seed").and_then(|s| s.as_u64()))
            .unwrap_or(1);
        match catch_unwind(|| ccsim_core::from_json(config_json)) {
            Ok(Ok(sim)) => {
                let duration_ns = sim.duration();
                Ok(Simulation { inner: Mutex::new(Some(sim)), seed, duration_ns })
            }
            Ok(Err(e)) => Err(config_error(py, e)),
            Err(p) => Err(SimulationError::new_err(format!("engine panic while building (seed {seed}): {}", panic_message(p)))),
        }
    }

    /// Advance simulated time to `t_ns` (capped at the duration), with the GIL released.
    fn run_until(&self, py: Python<'_>, t_ns: u64) -> PyResult<()> {
        self.with(py, true, |sim| sim.run_until(t_ns))
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

    /// Everything measured so far, as JSON.
    fn results_json(&self, py: Python<'_>) -> PyResult<String> {
        let results = self.with(py, true, |sim| sim.results())?;
        serde_json::to_string(&results).map_err(|e| SimulationError::new_err(e.to_string()))
    }
}

/// Every registered model with its parameters, as JSON.
#[pyfunction]
fn registry_json() -> String {
    ccsim_core::registry::registry_json()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("ConfigError", m.py().get_type::<ConfigError>())?;
    m.add("SimulationError", m.py().get_type::<SimulationError>())?;
    m.add_class::<Simulation>()?;
    m.add_function(wrap_pyfunction!(registry_json, m)?)?;
    Ok(())
}
