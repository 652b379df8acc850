//! A Python queue discipline behind the engine's `QueueDisc` trait: the packets stay in the
//! engine (a slab); Python holds handles to them.

use std::cell::Cell;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use ccsim_core::packet::{Ecn, Kind, Packet};
use ccsim_core::qdisc::{DropReason, QdiscCtx, QueueDisc};
use ccsim_core::sim::time::Time;

use super::{fail, seconds};

/// The packets a Python discipline holds, owned here: Python holds handles (slot and
/// generation, so that a handle to a packet already sent or dropped is recognised).
#[derive(Default)]
struct Slab {
    slots: Vec<(u32, Option<Packet>)>,
    free: Vec<u32>,
    held: usize,
    bytes: u64,
}

impl Slab {
    fn insert(&mut self, pkt: Packet) -> (u32, u32) {
        self.held += 1;
        self.bytes += pkt.size as u64;
        match self.free.pop() {
            Some(i) => {
                let slot = &mut self.slots[i as usize];
                slot.0 = slot.0.wrapping_add(1);
                slot.1 = Some(pkt);
                (i, slot.0)
            }
            None => {
                self.slots.push((0, Some(pkt)));
                (self.slots.len() as u32 - 1, 0)
            }
        }
    }

    fn get(&mut self, slot: u32, generation: u32) -> Option<&mut Packet> {
        match self.slots.get_mut(slot as usize) {
            Some((g, Some(pkt))) if *g == generation => Some(pkt),
            _ => None,
        }
    }

    fn take(&mut self, slot: u32, generation: u32) -> Option<Packet> {
        let pkt = self.get(slot, generation).map(|p| *p)?;
        self.slots[slot as usize].1 = None;
        self.free.push(slot);
        self.held -= 1;
        self.bytes -= pkt.size as u64;
        Some(pkt)
    }
}

/// The engine's side of a discipline's call: what `Queue`'s methods act on.
#[derive(Clone, Copy)]
struct QueueCall {
    ctx: *mut QdiscCtx<'static>,
    slab: *mut Slab,
    wakeup: *mut Option<Time>,
}

thread_local! {
    static QUEUE_CALL: Cell<Option<QueueCall>> = const { Cell::new(None) };
}

/// Run `f` on the current call's context; an error outside a callback.
fn in_call<T>(f: impl FnOnce(&mut QdiscCtx<'static>, &mut Slab, &mut Option<Time>) -> PyResult<T>) -> PyResult<T> {
    let call = QUEUE_CALL
        .with(|c| c.get())
        .ok_or_else(|| PyValueError::new_err("a Queue can only be used inside its discipline's callbacks"))?;
    // SAFETY: the pointers are set by `PyQueue::call` to objects it borrows mutably for the
    // duration of the Python call, on this thread, and cleared (restored) before it returns;
    // the GIL serialises the Python code that reaches here.
    unsafe { f(&mut *call.ctx, &mut *call.slab, &mut *call.wakeup) }
}

/// A packet held by a Python discipline (its fields as it arrived; `ecn` follows marks).
#[pyclass(module = "ccsim._core", name = "Packet")]
pub struct PacketView {
    slot: u32,
    generation: u32,
    /// Size on the wire (bytes).
    #[pyo3(get)]
    size: u32,
    /// Flow index.
    #[pyo3(get)]
    flow: u32,
    /// Sequence number (first payload byte; ACK: the acknowledgement number's segment).
    #[pyo3(get)]
    seq: u64,
    /// `tcp_data`, `tcp_ack`, `udp`, `dccp_data` or `dccp_ack`.
    #[pyo3(get)]
    kind: &'static str,
    ecn: Ecn,
    /// When it entered the queue (ns).
    #[pyo3(get)]
    arrival_ns: Time,
}

fn ecn_name(e: Ecn) -> &'static str {
    match e {
        Ecn::NotEct => "not_ect",
        Ecn::Ect0 => "ect0",
        Ecn::Ect1 => "ect1",
        Ecn::Ce => "ce",
    }
}

#[pymethods]
impl PacketView {
    /// ECN codepoint: `not_ect`, `ect0`, `ect1` or `ce`.
    #[getter]
    fn ecn(&self) -> &'static str {
        ecn_name(self.ecn)
    }

    /// True if it may be CE-marked instead of dropped (ECT(0), ECT(1) or CE).
    #[getter]
    fn ect(&self) -> bool {
        self.ecn.is_ect()
    }

    /// When it entered the queue (s).
    #[getter]
    fn arrival(&self) -> f64 {
        seconds(self.arrival_ns)
    }

    fn __repr__(&self) -> String {
        format!(
            "Packet(flow={}, kind={}, seq={}, size={} B, ecn={}, arrival={:.6} s)",
            self.flow,
            self.kind,
            self.seq,
            self.size,
            self.ecn(),
            self.arrival()
        )
    }
}

/// What a Python discipline may do besides holding packets (valid inside its callbacks).
#[pyclass(module = "ccsim._core", name = "Queue", frozen)]
pub struct QueueView;

#[pymethods]
impl QueueView {
    /// Simulated time (s).
    #[getter]
    fn now(&self) -> PyResult<f64> {
        in_call(|ctx, _, _| Ok(seconds(ctx.now)))
    }

    /// Simulated time (ns).
    #[getter]
    fn now_ns(&self) -> PyResult<Time> {
        in_call(|ctx, _, _| Ok(ctx.now))
    }

    /// Packets the discipline holds (accepted and not yet dequeued or dropped).
    #[getter]
    fn len_packets(&self) -> PyResult<usize> {
        in_call(|_, slab, _| Ok(slab.held))
    }

    /// Bytes the discipline holds.
    #[getter]
    fn len_bytes(&self) -> PyResult<u64> {
        in_call(|_, slab, _| Ok(slab.bytes))
    }

    /// Drop `pkt` (the arriving packet or one held): `reason` is `early` (an AQM decision)
    /// or `overflow` (the buffer is full).
    #[pyo3(signature = (pkt, reason = "early"))]
    fn drop(&self, pkt: PyRef<'_, PacketView>, reason: &str) -> PyResult<()> {
        let reason = match reason {
            "early" => DropReason::Early,
            "overflow" => DropReason::Overflow,
            other => return Err(PyValueError::new_err(format!("reason must be 'early' or 'overflow', got {other:?}"))),
        };
        in_call(|ctx, slab, _| {
            let packet = slab.take(pkt.slot, pkt.generation).ok_or_else(not_held)?;
            ctx.drop(packet, reason);
            Ok(())
        })
    }

    /// Set CE on `pkt` if it is ECN-capable (RFC 3168 §5): False, changing nothing, when it
    /// is Not-ECT (drop it instead).
    fn mark(&self, mut pkt: PyRefMut<'_, PacketView>) -> PyResult<bool> {
        let (slot, generation) = (pkt.slot, pkt.generation);
        let (marked, ecn) = in_call(|ctx, slab, _| {
            let packet = slab.get(slot, generation).ok_or_else(not_held)?;
            Ok((ctx.mark(packet), packet.ecn))
        })?;
        pkt.ecn = ecn;
        Ok(marked)
    }

    /// Uniform in [0, 1) from the queue's own random stream.
    fn random(&self) -> PyResult<f64> {
        in_call(|ctx, _, _| Ok(ctx.rng.uniform()))
    }

    /// Ask for `on_wakeup` at simulated time `t_ns` (replacing an earlier request), or
    /// cancel it with None.
    fn wake_at_ns(&self, t_ns: Option<Time>) -> PyResult<()> {
        in_call(|_, _, wakeup| {
            *wakeup = t_ns;
            Ok(())
        })
    }
}

fn not_held() -> PyErr {
    PyValueError::new_err("the queue does not hold this packet (it was dequeued or dropped already)")
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::TcpData => "tcp_data",
        Kind::TcpAck => "tcp_ack",
        Kind::Udp => "udp",
        Kind::DccpData => "dccp_data",
        Kind::DccpAck => "dccp_ack",
    }
}

const QUEUE: &str = "queue discipline";

pub(super) struct PyQueue {
    name: &'static str,
    obj: Py<PyAny>,
    queue: Py<QueueView>,
    slab: Slab,
    wakeup: Option<Time>,
    has_on_wakeup: bool,
}

impl PyQueue {
    pub(super) fn new(py: Python<'_>, name: &'static str, obj: Bound<'_, PyAny>) -> PyResult<Self> {
        for required in ["enqueue", "dequeue"] {
            if !obj.hasattr(required)? {
                return Err(PyTypeError::new_err(format!("a queue discipline needs a method {required}")));
            }
        }
        let has_on_wakeup = obj.hasattr("on_wakeup")?;
        Ok(PyQueue {
            name,
            obj: obj.unbind(),
            queue: Py::new(py, QueueView)?,
            slab: Slab::default(),
            wakeup: None,
            has_on_wakeup,
        })
    }

    /// Call `callback(queue, *extra)` with the context set for `Queue`'s methods; its result.
    fn call<T>(
        &mut self,
        ctx: &mut QdiscCtx,
        callback: &'static str,
        extra: Option<Packet>,
        read: impl FnOnce(&Bound<'_, PyAny>, &mut Slab) -> PyResult<T>,
    ) -> T {
        let now = ctx.now;
        let call = QueueCall {
            ctx: std::ptr::from_mut(ctx).cast::<QdiscCtx<'static>>(),
            slab: &mut self.slab,
            wakeup: &mut self.wakeup,
        };
        let before = QUEUE_CALL.with(|c| c.replace(Some(call)));
        let out = Python::attach(|py| {
            let queue = self.queue.bind(py).as_any().clone();
            let result = match extra {
                None => self.obj.bind(py).call_method1(callback, (queue,)),
                Some(pkt) => {
                    // SAFETY: as in `in_call`; the slab is only reached through `call` here.
                    let (slot, generation) = unsafe { (*call.slab).insert(pkt) };
                    let view = PacketView {
                        slot,
                        generation,
                        size: pkt.size,
                        flow: pkt.flow,
                        seq: pkt.seq,
                        kind: kind_name(pkt.kind),
                        ecn: pkt.ecn,
                        arrival_ns: pkt.enqueued_at,
                    };
                    Bound::new(py, view).and_then(|v| self.obj.bind(py).call_method1(callback, (queue, v)))
                }
            };
            // SAFETY: as above.
            result.and_then(|r| read(&r, unsafe { &mut *call.slab }))
        });
        QUEUE_CALL.with(|c| c.set(before));
        out.unwrap_or_else(|e| fail(QUEUE, self.name, callback, now, e))
    }
}

impl QueueDisc for PyQueue {
    fn enqueue(&mut self, pkt: Packet, ctx: &mut QdiscCtx) {
        self.call(ctx, "enqueue", Some(pkt), |_, _| Ok(()));
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<Packet> {
        self.call(ctx, "dequeue", None, |result, slab| {
            if result.is_none() {
                return Ok(None);
            }
            let pkt = result.cast::<PacketView>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "dequeue must return a Packet it holds or None, got {}",
                    result.repr().map_or_else(|_| "?".into(), |r| r.to_string())
                ))
            })?;
            let pkt = pkt.borrow();
            slab.take(pkt.slot, pkt.generation).map(Some).ok_or_else(not_held)
        })
    }

    fn len_packets(&self) -> usize {
        self.slab.held
    }

    fn len_bytes(&self) -> u64 {
        self.slab.bytes
    }

    fn next_wakeup(&self) -> Option<Time> {
        self.wakeup
    }

    fn on_wakeup(&mut self, ctx: &mut QdiscCtx) {
        self.wakeup = None;
        if self.has_on_wakeup {
            self.call(ctx, "on_wakeup", None, |_, _| Ok(()));
        }
    }
}
