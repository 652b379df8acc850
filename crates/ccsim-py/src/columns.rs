//! The engine's results as Python objects, column by column.
//!
//! A list of records (the flows, the queues, the control loops) becomes a dict of columns in
//! the records' field order; a column of numbers or of booleans without a missing value
//! becomes one NumPy array (int64, uint64 above `i64::MAX`, float64 or bool) made from one
//! buffer; any other column (strings, or values some of which are missing) stays a list, with
//! `None` where the engine wrote nothing, so that pandas infers the same dtypes it inferred
//! from the records. Logs that the engine already keeps as columns (`traces`, `rtt_samples`,
//! ...) arrive the same way. The records are read through their serde form (a serializer into
//! [`Node`], which keeps field order and every number exact), so a new result field needs no
//! change here.

use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyDict, PyList};
use serde::ser::{self, Serialize};

/// A value of the results in serde's data model, maps in field order.
pub enum Node {
    Null,
    Bool(bool),
    U64(u64),
    I64(i64),
    F64(f64),
    Str(String),
    Seq(Vec<Node>),
    /// A sequence of finite floats, kept compact (a trace column can hold millions).
    Floats(Vec<f64>),
    /// A sequence of unsigned integers, kept compact.
    Ints(Vec<u64>),
    Map(Vec<(String, Node)>),
}

/// Why a value could not be put in serde's data model here (a kind results never hold).
#[derive(Debug)]
pub struct Unsupported(String);

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unsupported {}

impl ser::Error for Unsupported {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        Unsupported(msg.to_string())
    }
}

/// `value` in serde's data model, maps and structs in field order, numbers exact.
pub fn node_of<T: Serialize>(value: &T) -> Result<Node, Unsupported> {
    value.serialize(NodeSerializer)
}

struct NodeSerializer;

/// A sequence or a map being filled.
#[derive(Default)]
pub struct Compound {
    items: Vec<Node>,
    entries: Vec<(String, Node)>,
    key: Option<String>,
}

impl ser::Serializer for NodeSerializer {
    type Ok = Node;
    type Error = Unsupported;
    type SerializeSeq = Compound;
    type SerializeTuple = Compound;
    type SerializeTupleStruct = Compound;
    type SerializeTupleVariant = ser::Impossible<Node, Unsupported>;
    type SerializeMap = Compound;
    type SerializeStruct = Compound;
    type SerializeStructVariant = ser::Impossible<Node, Unsupported>;

    fn serialize_bool(self, v: bool) -> Result<Node, Unsupported> {
        Ok(Node::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Node, Unsupported> {
        self.serialize_i64(v.into())
    }
    fn serialize_i16(self, v: i16) -> Result<Node, Unsupported> {
        self.serialize_i64(v.into())
    }
    fn serialize_i32(self, v: i32) -> Result<Node, Unsupported> {
        self.serialize_i64(v.into())
    }
    fn serialize_i64(self, v: i64) -> Result<Node, Unsupported> {
        Ok(if v >= 0 { Node::U64(v as u64) } else { Node::I64(v) })
    }
    fn serialize_u8(self, v: u8) -> Result<Node, Unsupported> {
        Ok(Node::U64(v.into()))
    }
    fn serialize_u16(self, v: u16) -> Result<Node, Unsupported> {
        Ok(Node::U64(v.into()))
    }
    fn serialize_u32(self, v: u32) -> Result<Node, Unsupported> {
        Ok(Node::U64(v.into()))
    }
    fn serialize_u64(self, v: u64) -> Result<Node, Unsupported> {
        Ok(Node::U64(v))
    }
    fn serialize_f32(self, v: f32) -> Result<Node, Unsupported> {
        self.serialize_f64(v.into())
    }
    /// A non-finite number is missing, as JSON writes it (`null`).
    fn serialize_f64(self, v: f64) -> Result<Node, Unsupported> {
        Ok(if v.is_finite() { Node::F64(v) } else { Node::Null })
    }
    fn serialize_char(self, v: char) -> Result<Node, Unsupported> {
        Ok(Node::Str(v.to_string()))
    }
    fn serialize_str(self, v: &str) -> Result<Node, Unsupported> {
        Ok(Node::Str(v.to_owned()))
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<Node, Unsupported> {
        Err(Unsupported("bytes".into()))
    }
    fn serialize_none(self) -> Result<Node, Unsupported> {
        Ok(Node::Null)
    }
    fn serialize_some<T: ?Sized + Serialize>(self, v: &T) -> Result<Node, Unsupported> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<Node, Unsupported> {
        Ok(Node::Null)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<Node, Unsupported> {
        Ok(Node::Null)
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<Node, Unsupported> {
        Ok(Node::Str(variant.to_owned()))
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _: &'static str, v: &T) -> Result<Node, Unsupported> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: &T,
    ) -> Result<Node, Unsupported> {
        Err(Unsupported(format!("enum variant {variant} with data")))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Compound, Unsupported> {
        Ok(Compound { items: Vec::with_capacity(len.unwrap_or(0)), ..Compound::default() })
    }
    fn serialize_tuple(self, len: usize) -> Result<Compound, Unsupported> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Compound, Unsupported> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Unsupported> {
        Err(Unsupported(format!("enum variant {variant} with data")))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Compound, Unsupported> {
        Ok(Compound::default())
    }
    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Compound, Unsupported> {
        Ok(Compound { entries: Vec::with_capacity(len), ..Compound::default() })
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Unsupported> {
        Err(Unsupported(format!("enum variant {variant} with data")))
    }
}

impl ser::SerializeSeq for Compound {
    type Ok = Node;
    type Error = Unsupported;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), Unsupported> {
        self.items.push(v.serialize(NodeSerializer)?);
        Ok(())
    }
    fn end(self) -> Result<Node, Unsupported> {
        let items = self.items;
        if items.is_empty() {
            return Ok(Node::Seq(items));
        }
        if items.iter().all(|n| matches!(n, Node::F64(_))) {
            return Ok(Node::Floats(items.into_iter().map(|n| if let Node::F64(v) = n { v } else { 0.0 }).collect()));
        }
        if items.iter().all(|n| matches!(n, Node::U64(_))) {
            return Ok(Node::Ints(items.into_iter().map(|n| if let Node::U64(v) = n { v } else { 0 }).collect()));
        }
        Ok(Node::Seq(items))
    }
}

impl ser::SerializeTuple for Compound {
    type Ok = Node;
    type Error = Unsupported;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), Unsupported> {
        ser::SerializeSeq::serialize_element(self, v)
    }
    fn end(self) -> Result<Node, Unsupported> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleStruct for Compound {
    type Ok = Node;
    type Error = Unsupported;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), Unsupported> {
        ser::SerializeSeq::serialize_element(self, v)
    }
    fn end(self) -> Result<Node, Unsupported> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeMap for Compound {
    type Ok = Node;
    type Error = Unsupported;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<(), Unsupported> {
        match key.serialize(NodeSerializer)? {
            Node::Str(k) => self.key = Some(k),
            Node::U64(k) => self.key = Some(k.to_string()),
            _ => return Err(Unsupported("a map key that is not a string".into())),
        }
        Ok(())
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), Unsupported> {
        let key = self.key.take().ok_or_else(|| Unsupported("a map value without a key".into()))?;
        self.entries.push((key, v.serialize(NodeSerializer)?));
        Ok(())
    }
    fn end(self) -> Result<Node, Unsupported> {
        Ok(Node::Map(self.entries))
    }
}

impl ser::SerializeStruct for Compound {
    type Ok = Node;
    type Error = Unsupported;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, v: &T) -> Result<(), Unsupported> {
        self.entries.push((key.to_owned(), v.serialize(NodeSerializer)?));
        Ok(())
    }
    fn end(self) -> Result<Node, Unsupported> {
        Ok(Node::Map(self.entries))
    }
}

/// The Python form of `node` (module docs).
pub fn to_py(py: Python<'_>, node: Node) -> PyResult<Py<PyAny>> {
    Ok(match node {
        Node::Null => py.None(),
        Node::Bool(v) => v.into_pyobject(py)?.to_owned().into_any().unbind(),
        Node::U64(v) => v.into_pyobject(py)?.into_any().unbind(),
        Node::I64(v) => v.into_pyobject(py)?.into_any().unbind(),
        Node::F64(v) => v.into_pyobject(py)?.into_any().unbind(),
        Node::Str(v) => v.into_pyobject(py)?.into_any().unbind(),
        Node::Map(entries) => {
            let dict = PyDict::new(py);
            for (key, value) in entries {
                dict.set_item(key, to_py(py, value)?)?;
            }
            dict.into_any().unbind()
        }
        Node::Seq(items) if !items.is_empty() && items.iter().all(|n| matches!(n, Node::Map(_))) => table(py, items)?,
        Node::Seq(items) => column(py, items)?,
        Node::Floats(v) => array(py, "float64", v.into_iter().flat_map(f64::to_ne_bytes).collect())?,
        Node::Ints(v) if v.iter().all(|&x| x <= i64::MAX as u64) => {
            array(py, "int64", v.into_iter().flat_map(|x| (x as i64).to_ne_bytes()).collect())?
        }
        Node::Ints(v) => array(py, "uint64", v.into_iter().flat_map(u64::to_ne_bytes).collect())?,
    })
}

/// Records with the same fields, as a dict of columns.
fn table(py: Python<'_>, rows: Vec<Node>) -> PyResult<Py<PyAny>> {
    let mut names: Vec<String> = Vec::new();
    let mut columns: Vec<Vec<Node>> = Vec::new();
    let n = rows.len();
    for (i, row) in rows.into_iter().enumerate() {
        let Node::Map(entries) = row else { unreachable!("a table holds records only") };
        for (key, value) in entries {
            let c = match names.iter().position(|k| *k == key) {
                Some(c) => c,
                None => {
                    names.push(key);
                    columns.push((0..i).map(|_| Node::Null).collect());
                    columns.len() - 1
                }
            };
            columns[c].push(value);
        }
        for col in columns.iter_mut().filter(|col| col.len() <= i) {
            col.push(Node::Null);
        }
    }
    let dict = PyDict::new(py);
    for (name, col) in names.into_iter().zip(columns) {
        debug_assert_eq!(col.len(), n);
        dict.set_item(name, column(py, col)?)?;
    }
    Ok(dict.into_any().unbind())
}

/// One column: a NumPy array when every value is a number, or every one a boolean.
fn column(py: Python<'_>, items: Vec<Node>) -> PyResult<Py<PyAny>> {
    let all = |f: fn(&Node) -> bool| !items.is_empty() && items.iter().all(f);
    let bytes: Option<(&str, Vec<u8>)> = if all(|n| matches!(n, Node::Bool(_))) {
        Some(("bool", items.iter().map(|n| matches!(n, Node::Bool(true)) as u8).collect()))
    } else if all(|n| matches!(n, Node::U64(v) if *v <= i64::MAX as u64) || matches!(n, Node::I64(_))) {
        let ints = items.iter().map(|n| match n {
            Node::U64(v) => *v as i64,
            Node::I64(v) => *v,
            _ => unreachable!(),
        });
        Some(("int64", ints.flat_map(i64::to_ne_bytes).collect()))
    } else if all(|n| matches!(n, Node::U64(_))) {
        let ints = items.iter().map(|n| if let Node::U64(v) = n { *v } else { unreachable!() });
        Some(("uint64", ints.flat_map(u64::to_ne_bytes).collect()))
    } else if all(|n| matches!(n, Node::U64(_) | Node::I64(_) | Node::F64(_))) {
        let floats = items.iter().map(|n| match n {
            Node::U64(v) => *v as f64,
            Node::I64(v) => *v as f64,
            Node::F64(v) => *v,
            _ => unreachable!(),
        });
        Some(("float64", floats.flat_map(f64::to_ne_bytes).collect()))
    } else {
        None
    };
    match bytes {
        Some((dtype, bytes)) => array(py, dtype, bytes),
        None => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            Ok(list.into_any().unbind())
        }
    }
}

/// A NumPy array of `dtype` over a copy of `bytes` (native byte order), writable.
fn array(py: Python<'_>, dtype: &str, bytes: Vec<u8>) -> PyResult<Py<PyAny>> {
    let buffer = PyByteArray::new(py, &bytes);
    drop(bytes);
    Ok(py.import("numpy")?.call_method1("frombuffer", (buffer, dtype))?.unbind())
}
