//! Terraform values and types, independent of any wire encoding.
//!
//! [`Type`] mirrors cty's type system (primitive, collection, structural and `dynamic`); [`Value`] is a plain tree of
//! values. Values are untyped: the codecs in [`msgpack`] and [`json`] are directed by a [`Type`] (usually derived from
//! a [`Schema`](super::schema::Schema)), so a provider only ever handles [`Value`]s.
//!
//! ```
//! use tfsveltos::tfplugin::Value;
//! let v = Value::object([("name", Value::string("a")), ("count", Value::int(2))]);
//! assert_eq!(v.get_attr("name").as_str(), Some("a"));
//! assert_eq!(v.get_attr("count").as_i64(), Some(2));
//! assert!(v.get_attr("missing").is_null());
//! ```

mod fields;
pub mod json;
pub mod msgpack;
pub mod serde_bridge;
mod types;

pub use fields::Fields;
pub use serde_bridge::{
    FromValueError, Partial, Sensitive, from_value, from_value_partial, to_value,
};
pub use types::{Type, TypeJsonError};

use std::collections::BTreeMap;
use std::fmt;

/// A Terraform number: an integer, a float, or an arbitrary-precision decimal kept as its decimal text.
#[derive(Debug, Clone, PartialEq)]
pub enum Number {
    /// Fits in an `i64`.
    Int(i64),
    /// A finite or infinite binary float.
    Float(f64),
    /// Any other number, as decimal text (e.g. `"18446744073709551616"` or `"0.1000000000000000000001"`).
    Big(String),
}

impl Number {
    /// The number as `i64`, when it is an integer in range.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Number::Int(i) => Some(*i),
            Number::Float(f)
                if f.fract() == 0.0
                    && *f >= -9.223_372_036_854_776e18
                    && *f < 9.223_372_036_854_776e18 =>
            {
                Some(*f as i64)
            }
            Number::Float(_) => None,
            Number::Big(s) => s.parse().ok(),
        }
    }

    /// The number as `f64` (possibly rounded).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Number::Int(i) => Some(*i as f64),
            Number::Float(f) => Some(*f),
            Number::Big(s) => s.parse().ok(),
        }
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Number::Int(i) => write!(f, "{i}"),
            Number::Float(x) => write!(f, "{x}"),
            Number::Big(s) => f.write_str(s),
        }
    }
}

impl From<i64> for Number {
    fn from(i: i64) -> Self {
        Number::Int(i)
    }
}

impl From<f64> for Number {
    fn from(x: f64) -> Self {
        Number::Float(x)
    }
}

/// What is known about an unknown value (cty "refinements"). `Default` means nothing is known.
///
/// `Debug` redacts the string prefix (it may be the start of a secret).
#[derive(Clone, Default, PartialEq)]
pub struct Refinements {
    /// The value will not be null.
    pub not_null: bool,
    /// A string value will start with this prefix.
    pub string_prefix: Option<String>,
    /// A number value is at least this (bound, inclusive).
    pub number_lower: Option<(Number, bool)>,
    /// A number value is at most this (bound, inclusive).
    pub number_upper: Option<(Number, bool)>,
    /// A collection value has at least this many elements.
    pub length_lower: Option<u64>,
    /// A collection value has at most this many elements.
    pub length_upper: Option<u64>,
}

impl Refinements {
    /// Whether nothing is known (a plain unknown).
    pub fn is_empty(&self) -> bool {
        *self == Refinements::default()
    }
}

/// A Terraform value. Objects and maps are ordered by key; sets keep the order they were given in.
///
/// `Debug` shows the structure, attribute / map keys, booleans and numbers, but never the contents of strings (a
/// value does not know whether its attribute is sensitive, so every string is treated as if it were); use
/// [`Value::reveal`] where the full contents are wanted, e.g. in a test's failure message.
#[derive(Clone, Default, PartialEq)]
pub enum Value {
    /// Null (absent).
    #[default]
    Null,
    /// Not known until apply, with whatever is known about it.
    Unknown(Box<Refinements>),
    /// A boolean.
    Bool(bool),
    /// A number.
    Number(Number),
    /// A string.
    String(String),
    /// A list.
    List(Vec<Value>),
    /// A set (element order is not significant).
    Set(Vec<Value>),
    /// A map.
    Map(Fields),
    /// An object (attributes or block contents).
    Object(Fields),
    /// A tuple.
    Tuple(Vec<Value>),
}

static NULL: Value = Value::Null;

/// Stands for a redacted string in `Debug` output.
struct RedactedStr(usize);

impl fmt::Debug for RedactedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<redacted, {} bytes>", self.0)
    }
}

impl fmt::Debug for Refinements {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Refinements")
            .field("not_null", &self.not_null)
            .field(
                "string_prefix",
                &self.string_prefix.as_ref().map(|p| RedactedStr(p.len())),
            )
            .field("number_lower", &self.number_lower)
            .field("number_upper", &self.number_upper)
            .field("length_lower", &self.length_lower)
            .field("length_upper", &self.length_upper)
            .finish()
    }
}

/// `Debug` of a value, strings redacted or not.
fn debug_value(v: &Value, reveal: bool, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    struct D<'a>(&'a Value, bool);
    impl fmt::Debug for D<'_> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            debug_value(self.0, self.1, f)
        }
    }
    let seq = |name: &str, items: &[Value], f: &mut fmt::Formatter<'_>| {
        f.write_str(name)?;
        f.debug_list()
            .entries(items.iter().map(|i| D(i, reveal)))
            .finish()
    };
    let map = |name: &str, m: &Fields, f: &mut fmt::Formatter<'_>| {
        f.write_str(name)?;
        f.debug_map()
            .entries(m.iter().map(|(k, v)| (k, D(v, reveal))))
            .finish()
    };
    match v {
        Value::Null => f.write_str("Null"),
        Value::Unknown(r) if reveal => f
            .debug_tuple("Unknown")
            .field(&RevealedRefinements(r))
            .finish(),
        Value::Unknown(r) => f.debug_tuple("Unknown").field(r).finish(),
        Value::Bool(b) => f.debug_tuple("Bool").field(b).finish(),
        Value::Number(n) => f.debug_tuple("Number").field(n).finish(),
        Value::String(s) if reveal => f.debug_tuple("String").field(s).finish(),
        Value::String(s) => f
            .debug_tuple("String")
            .field(&RedactedStr(s.len()))
            .finish(),
        Value::List(items) => seq("List", items, f),
        Value::Set(items) => seq("Set", items, f),
        Value::Tuple(items) => seq("Tuple", items, f),
        Value::Map(m) => map("Map", m, f),
        Value::Object(m) => map("Object", m, f),
    }
}

/// Refinements with their string prefix shown.
struct RevealedRefinements<'a>(&'a Refinements);

impl fmt::Debug for RevealedRefinements<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = self.0;
        f.debug_struct("Refinements")
            .field("not_null", &r.not_null)
            .field("string_prefix", &r.string_prefix)
            .field("number_lower", &r.number_lower)
            .field("number_upper", &r.number_upper)
            .field("length_lower", &r.length_lower)
            .field("length_upper", &r.length_upper)
            .finish()
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_value(self, false, f)
    }
}

/// A value whose `Debug` shows string contents (see [`Value::reveal`]).
pub struct Revealed<'a>(&'a Value);

impl fmt::Debug for Revealed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_value(self.0, true, f)
    }
}

impl Value {
    /// This value with a `Debug` that shows string contents too. Only for output that cannot hold secrets (tests
    /// with synthetic data); never log it.
    pub fn reveal(&self) -> Revealed<'_> {
        Revealed(self)
    }

    /// Null.
    pub fn null() -> Self {
        Value::Null
    }

    /// A plain unknown value.
    pub fn unknown() -> Self {
        Value::Unknown(Box::default())
    }

    /// An unknown value with what is known about it (boxed: a value is 40 bytes, not 150, and a state of ten
    /// thousand objects holds millions of values).
    pub fn refined(r: Refinements) -> Self {
        Value::Unknown(Box::new(r))
    }

    /// An unknown value that is known not to be null.
    pub fn unknown_not_null() -> Self {
        Value::Unknown(Box::new(Refinements {
            not_null: true,
            ..Refinements::default()
        }))
    }

    /// A string.
    pub fn string(s: impl Into<String>) -> Self {
        Value::String(s.into())
    }

    /// A boolean.
    pub fn bool(b: bool) -> Self {
        Value::Bool(b)
    }

    /// An integer number.
    pub fn int(i: i64) -> Self {
        Value::Number(Number::Int(i))
    }

    /// A float number.
    pub fn float(x: f64) -> Self {
        Value::Number(Number::Float(x))
    }

    /// An object from `(name, value)` pairs.
    pub fn object<K: Into<String>>(attrs: impl IntoIterator<Item = (K, Value)>) -> Self {
        Value::Object(attrs.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }

    /// A map from `(key, value)` pairs.
    pub fn map<K: Into<String>>(entries: impl IntoIterator<Item = (K, Value)>) -> Self {
        Value::Map(entries.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }

    /// A list.
    pub fn list(items: impl IntoIterator<Item = Value>) -> Self {
        Value::List(items.into_iter().collect())
    }

    /// A set (duplicates are removed, first occurrence kept).
    pub fn set(items: impl IntoIterator<Item = Value>) -> Self {
        let mut out: Vec<Value> = Vec::new();
        for v in items {
            if !out.contains(&v) {
                out.push(v);
            }
        }
        Value::Set(out)
    }

    /// A tuple.
    pub fn tuple(items: impl IntoIterator<Item = Value>) -> Self {
        Value::Tuple(items.into_iter().collect())
    }

    /// A list of strings.
    pub fn string_list<S: Into<String>>(items: impl IntoIterator<Item = S>) -> Self {
        Value::List(items.into_iter().map(|s| Value::String(s.into())).collect())
    }

    /// A map of strings.
    pub fn string_map<K: Into<String>, S: Into<String>>(
        entries: impl IntoIterator<Item = (K, S)>,
    ) -> Self {
        Value::Map(
            entries
                .into_iter()
                .map(|(k, v)| (k.into(), Value::String(v.into())))
                .collect(),
        )
    }

    /// Whether this is null.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Whether this value itself is known (its elements may still be unknown; see [`Value::is_wholly_known`]).
    pub fn is_known(&self) -> bool {
        !matches!(self, Value::Unknown(_))
    }

    /// Whether this value and everything inside it is known.
    pub fn is_wholly_known(&self) -> bool {
        match self {
            Value::Unknown(_) => false,
            Value::List(v) | Value::Set(v) | Value::Tuple(v) => {
                v.iter().all(Value::is_wholly_known)
            }
            Value::Map(m) | Value::Object(m) => m.values().all(Value::is_wholly_known),
            _ => true,
        }
    }

    /// Whether this is known and not null.
    pub fn is_present(&self) -> bool {
        !self.is_null() && self.is_known()
    }

    /// Attribute `name` of an object (or element `name` of a map); `Null` when absent or when this is not an object.
    pub fn get_attr(&self, name: &str) -> &Value {
        match self {
            Value::Object(m) | Value::Map(m) => m.get(name).unwrap_or(&NULL),
            _ => &NULL,
        }
    }

    /// Mutable attribute `name` of an object or map, if present.
    pub fn get_attr_mut(&mut self, name: &str) -> Option<&mut Value> {
        match self {
            Value::Object(m) | Value::Map(m) => m.get_mut(name),
            _ => None,
        }
    }

    /// Sets attribute `name` of an object or map (no effect on other values). Returns the previous value.
    pub fn set_attr(&mut self, name: impl Into<String>, value: Value) -> Option<Value> {
        match self {
            Value::Object(m) | Value::Map(m) => m.insert(name.into(), value),
            _ => None,
        }
    }

    /// Element `index` of a list, set or tuple; `Null` when absent.
    pub fn get_index(&self, index: usize) -> &Value {
        match self {
            Value::List(v) | Value::Set(v) | Value::Tuple(v) => v.get(index).unwrap_or(&NULL),
            _ => &NULL,
        }
    }

    /// The string, if this is a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The boolean, if this is a boolean.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The number, if this is a number.
    pub fn as_number(&self) -> Option<&Number> {
        match self {
            Value::Number(n) => Some(n),
            _ => None,
        }
    }

    /// The number as `i64`, if this is an integer number in range.
    pub fn as_i64(&self) -> Option<i64> {
        self.as_number().and_then(Number::as_i64)
    }

    /// The number as `f64`, if this is a number.
    pub fn as_f64(&self) -> Option<f64> {
        self.as_number().and_then(Number::as_f64)
    }

    /// The elements, if this is a list, set or tuple.
    pub fn as_list(&self) -> Option<&[Value]> {
        match self {
            Value::List(v) | Value::Set(v) | Value::Tuple(v) => Some(v),
            _ => None,
        }
    }

    /// The entries, if this is a map or an object.
    pub fn as_map(&self) -> Option<&Fields> {
        match self {
            Value::Map(m) | Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The refinements, if this is unknown.
    pub fn refinements(&self) -> Option<&Refinements> {
        match self {
            Value::Unknown(r) => Some(r),
            _ => None,
        }
    }

    /// The strings of a list/set/tuple of strings (non-strings are skipped).
    pub fn as_string_vec(&self) -> Vec<String> {
        self.as_list()
            .unwrap_or(&[])
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect()
    }

    /// The string entries of a map/object of strings (non-strings are skipped).
    pub fn as_string_map(&self) -> BTreeMap<String, String> {
        self.as_map()
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_owned())))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Short name of the value's kind, for messages ("string", "object", ...). Never includes the value itself.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Unknown(_) => "unknown",
            Value::Bool(_) => "bool",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::List(_) => "list",
            Value::Set(_) => "set",
            Value::Map(_) => "map",
            Value::Object(_) => "object",
            Value::Tuple(_) => "tuple",
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::String(s.to_owned())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::String(s)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Self {
        Value::int(i)
    }
}

impl From<Number> for Value {
    fn from(n: Number) -> Self {
        Value::Number(n)
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(o: Option<T>) -> Self {
        o.map(Into::into).unwrap_or(Value::Null)
    }
}

/// A value that does not fit the type or schema it is decoded or encoded with; always carries the attribute path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} (at {path})")]
pub struct ValueError {
    /// Where the problem is.
    pub path: crate::tfplugin::path::AttributePath,
    /// What is wrong (never contains the value itself: values may be secret).
    pub message: String,
}

impl ValueError {
    pub(crate) fn new(
        path: &crate::tfplugin::path::AttributePath,
        message: impl Into<String>,
    ) -> Self {
        Self {
            path: path.clone(),
            message: message.into(),
        }
    }

    /// This error as an error diagnostic with the given summary.
    pub fn to_diagnostic(&self, summary: &str) -> crate::tfplugin::diag::Diagnostic {
        crate::tfplugin::diag::Diagnostic::error(
            summary,
            format!("{} (at {})", self.message, self.path),
        )
        .with_attribute(self.path.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A state of ten thousand clusters holds millions of values, and every object or map node reserves room for
    /// eleven of them: the refinements of an unknown are boxed so a value stays small (it was 152 bytes).
    #[test]
    fn a_value_is_small() {
        assert!(
            std::mem::size_of::<Value>() <= 40,
            "{}",
            std::mem::size_of::<Value>()
        );
    }

    #[test]
    fn accessors() {
        let v = Value::object([
            ("s", Value::string("x")),
            ("n", Value::int(3)),
            ("l", Value::list([Value::unknown()])),
            ("m", Value::string_map([("a", "b")])),
        ]);
        assert_eq!(v.get_attr("s").as_str(), Some("x"));
        assert_eq!(v.get_attr("n").as_i64(), Some(3));
        assert!(v.get_attr("nope").is_null());
        assert!(v.is_known());
        assert!(!v.is_wholly_known());
        assert!(!v.get_attr("l").get_index(0).is_known());
        assert_eq!(
            v.get_attr("m").as_string_map().get("a").map(String::as_str),
            Some("b")
        );
        assert_eq!(Number::Float(4.0).as_i64(), Some(4));
        assert_eq!(Number::Big("12".into()).as_i64(), Some(12));
        assert_eq!(
            Value::set([Value::int(1), Value::int(1)]),
            Value::Set(vec![Value::int(1)])
        );
    }
}
