//! Models defined outside the engine: congestion controls and queue disciplines whose code
//! lives elsewhere (the Python bindings run a researcher's Python class behind the engine's
//! traits).
//!
//! A model is external when its [`AlgoSpec`] carries `external` (where its code comes from,
//! e.g. `my_cc.py:MyAimd`); the engine then asks the hook installed with [`install`] to build
//! it from that source, its name and its parameters, and uses the object it gets like any
//! built-in model: the same trait, the same wrapper statistics, the same random streams. The
//! parameters reach the hook as given (canonical units): the front that defined the model
//! declared and checked them. Without a hook, an external model is a configuration error.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

use crate::config::AlgoSpec;
use crate::error::ConfigError;
use crate::qdisc::QueueDisc;
use crate::sim::rng::Rng;
use crate::tcp::cc::CongestionControl;

/// What the hook is asked to build.
pub struct ExternalSpec<'a> {
    /// The model's name, as the scenario and the results call it.
    pub name: &'static str,
    /// Where its code comes from (opaque to the engine).
    pub source: &'a str,
    /// Its parameters, canonical units.
    pub spec: &'a AlgoSpec,
    /// The configuration field that named it (`flows[2].cc`), for errors.
    pub field: &'a str,
}

/// Builds external models. Installed once per process.
pub trait ExternalModels: Send + Sync {
    /// A congestion control for flow `flow`; `rng` is the flow's congestion-control stream
    /// (`Stream::Cc`). An `Err` is the reason, reported against `spec.field`.
    fn congestion_control(
        &self,
        spec: &ExternalSpec,
        flow: u32,
        rng: Rng,
    ) -> Result<Box<dyn CongestionControl>, String>;

    /// A queue discipline (its random stream comes with every call, through `QdiscCtx`).
    fn queue_disc(&self, spec: &ExternalSpec) -> Result<Box<dyn QueueDisc>, String>;
}

static HOOK: OnceLock<Box<dyn ExternalModels>> = OnceLock::new();

/// Install the process's hook; false if one was installed already (it stays).
pub fn install(hook: Box<dyn ExternalModels>) -> bool {
    HOOK.set(hook).is_ok()
}

/// `name` with a static lifetime: model names are `&'static str` throughout the engine (its
/// own are literals); an external model's name is kept once per process.
pub fn intern(name: &str) -> &'static str {
    static NAMES: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut names = NAMES.lock().unwrap_or_else(|p| p.into_inner());
    let names = names.get_or_insert_with(HashSet::new);
    match names.get(name) {
        Some(kept) => kept,
        None => {
            let kept: &'static str = Box::leak(name.to_string().into_boxed_str());
            names.insert(kept);
            kept
        }
    }
}

fn with_hook<T>(
    spec: &AlgoSpec,
    source: &str,
    field: &str,
    build: impl FnOnce(&dyn ExternalModels, &ExternalSpec) -> Result<T, String>,
) -> Result<T, ConfigError> {
    let hook = HOOK.get().ok_or_else(|| {
        ConfigError::new(format!("{field}.external"), "models defined outside the engine need the Python front (ccsim)")
    })?;
    let ext = ExternalSpec { name: intern(&spec.kind), source, spec, field };
    build(hook.as_ref(), &ext).map_err(|why| ConfigError::new(field.to_string(), why))
}

/// The external congestion control `spec` names (its `external` is `source`).
pub(crate) fn congestion_control(
    spec: &AlgoSpec,
    source: &str,
    field: &str,
    flow: u32,
    rng: Rng,
) -> Result<Box<dyn CongestionControl>, ConfigError> {
    with_hook(spec, source, field, |hook, ext| hook.congestion_control(ext, flow, rng))
}

/// The external queue discipline `spec` names (its `external` is `source`).
pub(crate) fn queue_disc(spec: &AlgoSpec, source: &str, field: &str) -> Result<Box<dyn QueueDisc>, ConfigError> {
    with_hook(spec, source, field, |hook, ext| hook.queue_disc(ext))
}
