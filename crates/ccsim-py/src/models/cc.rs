//! A Python congestion control behind the engine's `CongestionControl` trait.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use ccsim_core::sim::rng::Rng;
use ccsim_core::sim::time::Time;
use ccsim_core::tcp::cc::{Ack, CcState, Congestion, CongestionControl, EcnFeedback, TransportNeeds};

use super::{fail, seconds};

/// A window or threshold a model set: a non-negative integer or finite float of bytes
/// (floats are rounded down).
fn bytes_of(value: &Bound<'_, PyAny>, what: &str) -> PyResult<u64> {
    if let Ok(v) = value.extract::<u64>() {
        return Ok(v);
    }
    if !value.is_instance_of::<pyo3::types::PyBool>() {
        if let Ok(v) = value.extract::<f64>() {
            if v.is_finite() && v >= 0.0 {
                return Ok(v as u64);
            }
        }
    }
    Err(PyValueError::new_err(format!("{what} must be a non-negative number of bytes, got {value}")))
}

/// What a Python congestion control sees and may change: the sender's window and
/// measurements (bytes and seconds; `_ns` for nanoseconds).
#[pyclass(module = "ccsim._core", name = "CcState")]
pub struct CcView {
    /// Sender maximum segment size (bytes).
    #[pyo3(get)]
    mss: u64,
    cwnd: u64,
    ssthresh: u64,
    srtt_ns: Option<Time>,
    min_rtt_ns: Option<Time>,
    /// Data in the network, RFC 6675 `pipe` (bytes).
    #[pyo3(get)]
    in_flight: u64,
    /// Data sent and not cumulatively acknowledged, RFC 5681 FlightSize (bytes).
    #[pyo3(get)]
    flight_size: u64,
    /// In fast recovery or recovery after a timeout.
    #[pyo3(get)]
    in_recovery: bool,
    /// Oldest unacknowledged byte.
    #[pyo3(get)]
    snd_una: u64,
    /// Next new byte to send.
    #[pyo3(get)]
    snd_nxt: u64,
    /// Peer's advertised window (bytes).
    #[pyo3(get)]
    rwnd: u64,
    /// Simulated time (ns).
    #[pyo3(get)]
    now_ns: Time,
    pacing_rate: Option<f64>,
    rng: Rng,
}

#[pymethods]
impl CcView {
    /// Congestion window (bytes); at least one segment.
    #[getter]
    fn cwnd(&self) -> u64 {
        self.cwnd
    }

    #[setter]
    fn set_cwnd(&mut self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let v = bytes_of(value, "cwnd")?;
        if v < self.mss {
            return Err(PyValueError::new_err(format!(
                "cwnd must be at least one segment ({} bytes), got {v}",
                self.mss
            )));
        }
        self.cwnd = v;
        Ok(())
    }

    /// Slow-start threshold (bytes); at least one segment.
    #[getter]
    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    #[setter]
    fn set_ssthresh(&mut self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let v = bytes_of(value, "ssthresh")?;
        if v < self.mss {
            return Err(PyValueError::new_err(format!(
                "ssthresh must be at least one segment ({} bytes), got {v}",
                self.mss
            )));
        }
        self.ssthresh = v;
        Ok(())
    }

    /// Smoothed RTT (s), None before the first sample.
    #[getter]
    fn srtt(&self) -> Option<f64> {
        self.srtt_ns.map(seconds)
    }

    /// Smallest RTT seen (s), None before the first sample.
    #[getter]
    fn min_rtt(&self) -> Option<f64> {
        self.min_rtt_ns.map(seconds)
    }

    /// Simulated time (s).
    #[getter]
    fn now(&self) -> f64 {
        seconds(self.now_ns)
    }

    /// True while cwnd < ssthresh.
    #[getter]
    fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// The rate a paced flow sends at (bytes per second), None for the sender's default.
    #[getter]
    fn pacing_rate(&self) -> Option<f64> {
        self.pacing_rate
    }

    #[setter]
    fn set_pacing_rate(&mut self, value: Option<f64>) -> PyResult<()> {
        if let Some(v) = value {
            if !(v.is_finite() && v > 0.0) {
                return Err(PyValueError::new_err(format!(
                    "pacing_rate must be a positive number of bytes per second or None, got {v}"
                )));
            }
        }
        self.pacing_rate = value;
        Ok(())
    }

    /// Uniform in [0, 1) from the flow's own congestion-control stream (the same seed gives
    /// the same draws).
    fn random(&mut self) -> f64 {
        self.rng.uniform()
    }

    fn __repr__(&self) -> String {
        let ms = |t: Option<Time>| t.map_or("none".to_string(), |t| format!("{:.3} ms", t as f64 / 1e6));
        format!(
            "CcState(now={:.6} s, cwnd={} B, ssthresh={} B, mss={} B, in_flight={} B, srtt={}, min_rtt={}, in_recovery={})",
            self.now(),
            self.cwnd,
            self.ssthresh,
            self.mss,
            self.in_flight,
            ms(self.srtt_ns),
            ms(self.min_rtt_ns),
            self.in_recovery
        )
    }
}

impl CcView {
    fn load(&mut self, st: &CcState) {
        self.mss = st.mss as u64;
        self.cwnd = st.cwnd;
        self.ssthresh = st.ssthresh;
        self.srtt_ns = st.srtt;
        self.min_rtt_ns = st.min_rtt;
        self.in_flight = st.bytes_in_flight;
        self.flight_size = st.flight_size;
        self.in_recovery = st.in_recovery;
        self.snd_una = st.snd_una;
        self.snd_nxt = st.snd_nxt;
        self.rwnd = st.rwnd;
        self.now_ns = st.now;
    }
}

/// An acknowledgement, as a Python congestion control sees it.
#[pyclass(module = "ccsim._core", name = "Ack", frozen)]
pub struct AckView {
    /// Bytes newly acknowledged cumulatively (0 for a duplicate ACK).
    #[pyo3(get)]
    acked_bytes: u64,
    rtt_ns: Option<Time>,
    /// The ACK carried ECN-Echo.
    #[pyo3(get)]
    ece: bool,
    /// Size of the ACK on the wire (bytes).
    #[pyo3(get)]
    size: u32,
    /// Accurate ECN: CE-marked packets newly reported by this ACK (0 otherwise).
    #[pyo3(get)]
    ce_packets: u32,
}

#[pymethods]
impl AckView {
    /// The RTT sample this ACK carries (s), if any.
    #[getter]
    fn rtt(&self) -> Option<f64> {
        self.rtt_ns.map(seconds)
    }

    /// The RTT sample in nanoseconds, if any.
    #[getter]
    fn rtt_ns(&self) -> Option<Time> {
        self.rtt_ns
    }

    fn __repr__(&self) -> String {
        format!("Ack(acked_bytes={}, rtt={:?}, ece={})", self.acked_bytes, self.rtt(), self.ece)
    }
}

/// Which optional methods the class defines.
#[derive(Default)]
struct CcHooks {
    on_ack: bool,
    on_ack_received: bool,
    on_congestion: bool,
    on_rtt_sample: bool,
    on_sent: bool,
    on_recovery_exit: bool,
    on_timeout: bool,
}

/// The argument after the state.
enum Arg {
    None,
    Ack(Ack),
    Seconds(Time),
    Bytes(u32),
    Name(&'static str),
}

const CC: &str = "congestion control";

pub(super) struct PyCc {
    name: &'static str,
    obj: Py<PyAny>,
    view: Py<CcView>,
    hooks: CcHooks,
    needs: TransportNeeds,
    pacing_rate: Option<f64>,
}

impl PyCc {
    pub(super) fn new(py: Python<'_>, name: &'static str, obj: Bound<'_, PyAny>, rng: Rng) -> PyResult<Self> {
        let has = |m: &str| obj.hasattr(m);
        let hooks = CcHooks {
            on_ack: has("on_ack")?,
            on_ack_received: has("on_ack_received")?,
            on_congestion: has("on_congestion")?,
            on_rtt_sample: has("on_rtt_sample")?,
            on_sent: has("on_sent")?,
            on_recovery_exit: has("on_recovery_exit")?,
            on_timeout: has("on_timeout")?,
        };
        let flag = |attr: &str| -> PyResult<bool> {
            match obj.getattr(attr) {
                Ok(v) => v.extract::<bool>().map_err(|_| PyTypeError::new_err(format!("{attr} must be True or False"))),
                Err(_) => Ok(false),
            }
        };
        let feedback = match obj.getattr("ecn_feedback") {
            Err(_) => EcnFeedback::Classic,
            Ok(v) => match v.extract::<String>().ok().as_deref() {
                Some("classic") => EcnFeedback::Classic,
                Some("dctcp") => EcnFeedback::Dctcp,
                Some("accurate") => EcnFeedback::Accurate,
                _ => {
                    return Err(PyValueError::new_err(format!(
                        "ecn_feedback must be 'classic', 'dctcp' or 'accurate', got {v}"
                    )))
                }
            },
        };
        let needs = TransportNeeds {
            ecn: flag("needs_ecn")?,
            ecn_feedback: feedback,
            loss_notice: false,
            pacing: flag("needs_pacing")?,
            ect1: flag("needs_ect1")?,
        };
        let view = CcView {
            mss: 0,
            cwnd: 0,
            ssthresh: 0,
            srtt_ns: None,
            min_rtt_ns: None,
            in_flight: 0,
            flight_size: 0,
            in_recovery: false,
            snd_una: 0,
            snd_nxt: 0,
            rwnd: 0,
            now_ns: 0,
            pacing_rate: None,
            rng,
        };
        Ok(PyCc { name, obj: obj.unbind(), view: Py::new(py, view)?, hooks, needs, pacing_rate: None })
    }

    /// Call `callback(state, arg)`; the window and threshold it leaves, or the model's failure.
    fn call(&mut self, st: &CcState, callback: &'static str, arg: Arg) -> (u64, u64) {
        Python::attach(|py| {
            let view = self.view.bind(py);
            view.borrow_mut().load(st);
            let args = match arg {
                Arg::None => PyTuple::new(py, [view.as_any().clone()]),
                Arg::Ack(a) => {
                    let ack = AckView {
                        acked_bytes: a.acked,
                        rtt_ns: a.rtt,
                        ece: a.ece,
                        size: a.size,
                        ce_packets: a.ce_packets,
                    };
                    Bound::new(py, ack).and_then(|ack| PyTuple::new(py, [view.as_any().clone(), ack.into_any()]))
                }
                Arg::Seconds(t) => {
                    PyTuple::new(py, [view.as_any().clone(), seconds(t).into_pyobject(py).unwrap().into_any()])
                }
                Arg::Bytes(b) => PyTuple::new(py, [view.as_any().clone(), b.into_pyobject(py).unwrap().into_any()]),
                Arg::Name(n) => PyTuple::new(py, [view.as_any().clone(), pyo3::types::PyString::new(py, n).into_any()]),
            };
            let result = args.and_then(|args| self.obj.bind(py).call_method1(callback, args));
            if let Err(e) = result {
                fail(CC, self.name, callback, st.now, e);
            }
            let v = view.borrow();
            self.pacing_rate = v.pacing_rate;
            (v.cwnd, v.ssthresh)
        })
    }

    /// A callback whose state is read-only in the engine: changing the window there is an error.
    fn call_reading(&mut self, st: &CcState, callback: &'static str, arg: Arg) {
        let (cwnd, ssthresh) = self.call(st, callback, arg);
        if (cwnd, ssthresh) != (st.cwnd, st.ssthresh) {
            let why = format!(
                "{callback} may not change cwnd or ssthresh (set them in on_ack, on_congestion, on_recovery_exit or on_timeout)"
            );
            fail(CC, self.name, callback, st.now, PyValueError::new_err(why));
        }
    }
}

impl CongestionControl for PyCc {
    fn name(&self) -> &'static str {
        self.name
    }

    fn on_ack(&mut self, st: &mut CcState, ack: &Ack) {
        if self.hooks.on_ack {
            (st.cwnd, st.ssthresh) = self.call(st, "on_ack", Arg::Ack(*ack));
        }
    }

    fn on_ack_received(&mut self, st: &CcState, ack: &Ack) {
        if self.hooks.on_ack_received {
            self.call_reading(st, "on_ack_received", Arg::Ack(*ack));
        }
    }

    fn ssthresh(&mut self, st: &CcState, event: Congestion) -> u64 {
        if !self.hooks.on_congestion {
            return (st.flight_size / 2).max(2 * st.mss as u64);
        }
        let name = match event {
            Congestion::Loss => "loss",
            Congestion::Ecn => "ecn",
            Congestion::Timeout => "timeout",
        };
        self.call(st, "on_congestion", Arg::Name(name)).1
    }

    fn on_rtt_sample(&mut self, st: &CcState, rtt: Time) {
        if self.hooks.on_rtt_sample {
            self.call_reading(st, "on_rtt_sample", Arg::Seconds(rtt));
        }
    }

    fn on_sent(&mut self, st: &CcState, bytes: u32) {
        if self.hooks.on_sent {
            self.call_reading(st, "on_sent", Arg::Bytes(bytes));
        }
    }

    fn on_recovery_exit(&mut self, st: &mut CcState) {
        if self.hooks.on_recovery_exit {
            (st.cwnd, st.ssthresh) = self.call(st, "on_recovery_exit", Arg::None);
        }
    }

    fn on_timeout(&mut self, st: &mut CcState) {
        if self.hooks.on_timeout {
            (st.cwnd, st.ssthresh) = self.call(st, "on_timeout", Arg::None);
        }
    }

    fn pacing_rate(&self, _st: &CcState) -> Option<f64> {
        self.pacing_rate
    }

    fn needs(&self) -> TransportNeeds {
        self.needs
    }
}
