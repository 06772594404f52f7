//! [`Value`]s to and from Rust types through serde, in the spirit of terraform-plugin-framework's
//! `Config.Get(&model)`: a provider declares its configuration as a `Deserialize` struct whose field names are the
//! schema's attribute names, and reads a whole request in one pass.
//!
//! - **Null** is absent: an object attribute that is null is not handed to the struct, so an `Option` field reads
//!   `None` and a field with `#[serde(default)]` its default; a required field reads "missing".
//! - **Unknown** (plan time): [`from_value`] refuses it, naming the first unknown attribute path
//!   ([`FromValueError::Unknown`]); [`from_value_partial`] reads it as absent and lists every such path
//!   ([`Partial::unknown`]), for validation, which checks what is known and leaves the rest for later. A list,
//!   set or map holding an unknown value is read whole or not at all (unknown as a whole): leaving an element out
//!   would shift the positions that diagnostics point at. Objects (blocks) are read attribute by attribute.
//! - **Numbers**: integer fields take whole numbers only; a fractional value is an error naming its path.
//! - Lists, sets and tuples read as sequences, maps and objects as maps or structs; nested blocks are objects
//!   (single), sequences (list, set) or maps.
//!
//! Every error carries the attribute path it concerns, and no message quotes a string value (values may be
//! secrets); wrap secret fields in [`Sensitive`], whose `Debug` is redacted.
//! [`to_value`] is the way back: structs become objects, maps maps, sequences lists, `None` null.

use std::{cell::RefCell, collections::BTreeMap, fmt};

use serde::{
    Deserialize, Serialize,
    de::{self, DeserializeOwned, IntoDeserializer, Visitor},
    ser,
};

use super::{Number, Value, ValueError};
use crate::tfplugin::{
    diag::Diagnostic,
    path::{AttributePath, PathStep},
};

/// Why a value could not be read into a Rust type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FromValueError {
    /// The value at this path is not known yet (only [`from_value`] refuses unknown values).
    Unknown(AttributePath),
    /// The value does not fit the type: a fractional number for an integer, a missing required attribute, a value
    /// of another kind.
    Invalid(ValueError),
}

impl FromValueError {
    /// The attribute path the error concerns.
    pub fn path(&self) -> &AttributePath {
        match self {
            FromValueError::Unknown(p) => p,
            FromValueError::Invalid(e) => &e.path,
        }
    }

    /// The error as an error diagnostic at its attribute path: "Invalid configuration value", or "Value not known
    /// yet" for an unknown value.
    pub fn to_diagnostic(&self) -> Diagnostic {
        match self {
            FromValueError::Unknown(p) => Diagnostic::error(
                "Value not known yet",
                format!("{p} is known only after apply; it is needed now."),
            )
            .with_attribute(p.clone()),
            FromValueError::Invalid(e) => Diagnostic::error(
                "Invalid configuration value",
                format!("{}: {}.", e.path, e.message),
            )
            .with_attribute(e.path.clone()),
        }
    }
}

impl fmt::Display for FromValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FromValueError::Unknown(p) => write!(f, "{p} is not known yet"),
            FromValueError::Invalid(e) => write!(f, "{}: {}", e.path, e.message),
        }
    }
}

impl std::error::Error for FromValueError {}

/// What [`from_value_partial`] read: the value, with unknown values read as absent, and their paths.
#[derive(Debug, Clone, PartialEq)]
pub struct Partial<T> {
    /// The value read.
    pub value: T,
    /// The paths of the values that were not known (in the order they were met), read as absent.
    pub unknown: Vec<AttributePath>,
}

impl<T> Partial<T> {
    /// Whether the path, or a path inside it, was not known.
    pub fn is_unknown_at(&self, path: &AttributePath) -> bool {
        self.unknown
            .iter()
            .any(|u| u.steps().starts_with(path.steps()) || path.steps().starts_with(u.steps()))
    }
}

/// Reads `value` into `T`; an unknown value anywhere is an error naming its path.
pub fn from_value<T: DeserializeOwned>(value: &Value) -> Result<T, FromValueError> {
    let ctx = Ctx::new(false);
    T::deserialize(De::new(value, AttributePath::root(), &ctx)).map_err(Error::into_public)
}

/// Reads `value` into `T`, unknown values read as absent (an `Option` reads `None`; a collection holding one is
/// absent as a whole); their paths are in [`Partial::unknown`].
pub fn from_value_partial<T: DeserializeOwned>(
    value: &Value,
) -> Result<Partial<T>, FromValueError> {
    let ctx = Ctx::new(true);
    let value =
        T::deserialize(De::new(value, AttributePath::root(), &ctx)).map_err(Error::into_public)?;
    Ok(Partial {
        value,
        unknown: ctx.unknown.into_inner(),
    })
}

/// `value` as a [`Value`]: structs become objects, maps maps, sequences lists, `None` and `()` null.
pub fn to_value<T: Serialize + ?Sized>(value: &T) -> Result<Value, ValueError> {
    value.serialize(Ser).map_err(|e| e.0)
}

/// A secret: serialized and deserialized as the value it holds, but its `Debug` never shows it.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Sensitive<T>(pub T);

impl<T> Sensitive<T> {
    /// The secret.
    pub fn expose(&self) -> &T {
        &self.0
    }

    /// The secret, unwrapped.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> fmt::Debug for Sensitive<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Sensitive(<redacted>)")
    }
}

impl<T> From<T> for Sensitive<T> {
    fn from(value: T) -> Self {
        Sensitive(value)
    }
}

/// What one read shares across its nested deserializers.
struct Ctx {
    /// Unknown values read as absent (else they are errors).
    partial: bool,
    unknown: RefCell<Vec<AttributePath>>,
    /// Paths the type did not read (serde's ignored values: attributes the struct has no field for).
    ignored: RefCell<Vec<AttributePath>>,
}

impl Ctx {
    fn new(partial: bool) -> Self {
        Self {
            partial,
            unknown: RefCell::default(),
            ignored: RefCell::default(),
        }
    }
}

/// The deserializer's error: where, and what. The path is filled in by the innermost deserializer that sees the
/// error without one (errors raised by serde's visitors know no path).
#[derive(Debug)]
struct Error {
    path: Option<AttributePath>,
    kind: ErrorKind,
}

#[derive(Debug)]
enum ErrorKind {
    Unknown,
    Missing(&'static str),
    Message(String),
}

impl Error {
    fn at(path: &AttributePath, kind: ErrorKind) -> Self {
        Self {
            path: Some(path.clone()),
            kind,
        }
    }

    /// This error with `path` when it has none yet (a missing field names the field under it).
    fn located(mut self, path: &AttributePath) -> Self {
        if self.path.is_none() {
            self.path = Some(match self.kind {
                ErrorKind::Missing(field) => path.clone().then_attr(field),
                _ => path.clone(),
            });
        }
        self
    }

    fn into_public(self) -> FromValueError {
        let path = self.path.unwrap_or_default();
        match self.kind {
            ErrorKind::Unknown => FromValueError::Unknown(path),
            ErrorKind::Missing(_) => {
                FromValueError::Invalid(ValueError::new(&path, "a required value is missing"))
            }
            ErrorKind::Message(m) => FromValueError::Invalid(ValueError::new(&path, m)),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::Unknown => f.write_str("value not known yet"),
            ErrorKind::Missing(field) => write!(f, "missing {field}"),
            ErrorKind::Message(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {}

impl de::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Self {
            path: None,
            kind: ErrorKind::Message(msg.to_string()),
        }
    }

    fn missing_field(field: &'static str) -> Self {
        Self {
            path: None,
            kind: ErrorKind::Missing(field),
        }
    }
}

/// A deserializer over one value at one path.
struct De<'a> {
    value: &'a Value,
    path: AttributePath,
    ctx: &'a Ctx,
}

impl<'a> De<'a> {
    fn new(value: &'a Value, path: AttributePath, ctx: &'a Ctx) -> Self {
        Self { value, path, ctx }
    }

    fn invalid(&self, message: impl Into<String>) -> Error {
        Error::at(&self.path, ErrorKind::Message(message.into()))
    }

    /// The error for a value of another kind than `expected` (an unknown value: "not known yet").
    fn mismatch(&self, expected: &str) -> Error {
        match self.value {
            Value::Unknown(_) => Error::at(&self.path, ErrorKind::Unknown),
            Value::Null => self.invalid(format!("a {expected} is required here, not null")),
            v => self.invalid(format!("a {expected} is required here, not a {}", v.kind())),
        }
    }

    /// The value as a whole number.
    fn whole(&self) -> Result<i128, Error> {
        let Value::Number(n) = self.value else {
            return Err(self.mismatch("whole number"));
        };
        let not_whole = || self.invalid("must be a whole number");
        match n {
            Number::Int(i) => Ok(i128::from(*i)),
            Number::Float(f) if f.is_finite() && f.fract() == 0.0 && f.abs() < 1.7e38 => {
                Ok(*f as i128)
            }
            Number::Float(_) => Err(not_whole()),
            Number::Big(s) => s.parse::<i128>().map_err(|_| {
                if s.contains(['.', 'e', 'E']) {
                    not_whole()
                } else {
                    self.invalid("is out of range")
                }
            }),
        }
    }

    fn child(&self, value: &'a Value, step: PathStep) -> De<'a> {
        let mut path = self.path.clone();
        path.push(step);
        De::new(value, path, self.ctx)
    }

    /// Whether an unknown value inside a collection or object is left out (partial reads record its path).
    fn skip_unknown(&self, value: &Value, path: impl FnOnce() -> AttributePath) -> bool {
        if !self.ctx.partial || !unknown_for_partial(value) {
            return false;
        }
        self.ctx.unknown.borrow_mut().push(path());
        true
    }
}

/// Whether a partial read takes `value` as not known: an unknown value, or a list, set, tuple or map holding one
/// (read whole or not at all: leaving an element out would shift the positions of the others).
fn unknown_for_partial(value: &Value) -> bool {
    match value {
        Value::Unknown(_) => true,
        Value::List(_) | Value::Set(_) | Value::Tuple(_) | Value::Map(_) => {
            !value.is_wholly_known()
        }
        _ => false,
    }
}

macro_rules! whole_number {
    ($($method:ident => $visit:ident),* $(,)?) => {$(
        fn $method<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
            let n = self.whole()?;
            let path = self.path.clone();
            match i64::try_from(n) {
                Ok(i) => visitor.visit_i64(i),
                Err(_) => visitor.$visit(n),
            }
            .map_err(|e: Error| e.located(&path))
        }
    )*};
}

impl<'a> de::Deserializer<'a> for De<'a> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        let path = self.path.clone();
        match self.value {
            Value::Null => visitor.visit_unit(),
            Value::Unknown(_) => Err(self.mismatch("known value")),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(Number::Int(i)) => visitor.visit_i64(*i),
            Value::Number(Number::Float(f)) => visitor.visit_f64(*f),
            Value::Number(Number::Big(s)) => visitor.visit_str(s),
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::List(_) | Value::Set(_) | Value::Tuple(_) => {
                return self.deserialize_seq(visitor);
            }
            Value::Map(_) | Value::Object(_) => return self.deserialize_map(visitor),
        }
        .map_err(|e: Error| e.located(&path))
    }

    fn deserialize_bool<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            Value::Bool(b) => visitor
                .visit_bool(*b)
                .map_err(|e: Error| e.located(&self.path)),
            _ => Err(self.mismatch("bool")),
        }
    }

    whole_number! {
        deserialize_i8 => visit_i128, deserialize_i16 => visit_i128, deserialize_i32 => visit_i128,
        deserialize_i64 => visit_i128, deserialize_i128 => visit_i128,
        deserialize_u8 => visit_i128, deserialize_u16 => visit_i128, deserialize_u32 => visit_i128,
        deserialize_u64 => visit_i128, deserialize_u128 => visit_i128,
    }

    fn deserialize_f32<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_f64(visitor)
    }

    fn deserialize_f64<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value.as_f64() {
            Some(f) => visitor
                .visit_f64(f)
                .map_err(|e: Error| e.located(&self.path)),
            None => Err(self.mismatch("number")),
        }
    }

    fn deserialize_char<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_str<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            Value::String(s) => visitor
                .visit_borrowed_str(s)
                .map_err(|e: Error| e.located(&self.path)),
            _ => Err(self.mismatch("string")),
        }
    }

    fn deserialize_string<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_byte_buf<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_option<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        let path = self.path.clone();
        match self.value {
            Value::Null => visitor.visit_none(),
            v if self.ctx.partial && unknown_for_partial(v) => {
                self.ctx.unknown.borrow_mut().push(path.clone());
                visitor.visit_none()
            }
            Value::Unknown(_) => return Err(Error::at(&path, ErrorKind::Unknown)),
            _ => visitor.visit_some(self),
        }
        .map_err(|e: Error| e.located(&path))
    }

    fn deserialize_unit<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            Value::Null => visitor
                .visit_unit()
                .map_err(|e: Error| e.located(&self.path)),
            _ => Err(self.mismatch("null")),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        let path = self.path.clone();
        visitor
            .visit_newtype_struct(self)
            .map_err(|e: Error| e.located(&path))
    }

    fn deserialize_seq<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        let Some(items) = self.value.as_list() else {
            return Err(self.mismatch("list"));
        };
        // Set elements have no path of their own: the protocol's paths stop at the set.
        let indexed = !matches!(self.value, Value::Set(_));
        let step = |i: usize| {
            if indexed {
                Some(PathStep::KeyInt(i64::try_from(i).unwrap_or(i64::MAX)))
            } else {
                None
            }
        };
        let elements: Vec<De<'a>> = items
            .iter()
            .enumerate()
            .filter(|(i, v)| {
                !self.skip_unknown(v, || {
                    let mut p = self.path.clone();
                    p.extend(step(*i));
                    p
                })
            })
            .map(|(i, v)| match step(i) {
                Some(s) => self.child(v, s),
                None => De::new(v, self.path.clone(), self.ctx),
            })
            .collect();
        let path = self.path.clone();
        visitor
            .visit_seq(Seq {
                elements: elements.into_iter(),
            })
            .map_err(|e: Error| e.located(&path))
    }

    fn deserialize_tuple<V: Visitor<'a>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        self.entries(visitor, false)
    }

    fn deserialize_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.entries(visitor, true)
    }

    fn deserialize_enum<V: Visitor<'a>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.value {
            Value::String(s) => visitor
                .visit_enum(s.as_str().into_deserializer())
                .map_err(|e: Error| e.located(&self.path)),
            _ => Err(self.mismatch("string")),
        }
    }

    fn deserialize_identifier<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        self.ctx.ignored.borrow_mut().push(self.path.clone());
        visitor.visit_unit()
    }
}

impl<'a> De<'a> {
    /// A map or object read as a map or a struct. A struct is handed only the attributes that are set: null ones
    /// are absent, and so are unknown ones in a partial read.
    fn entries<V: Visitor<'a>>(self, visitor: V, is_struct: bool) -> Result<V::Value, Error> {
        let Some(map) = self.value.as_map() else {
            return Err(self.mismatch("object"));
        };
        let attribute = matches!(self.value, Value::Object(_));
        let step = |k: &str| {
            if attribute {
                PathStep::Attribute(k.to_string())
            } else {
                PathStep::KeyString(k.to_string())
            }
        };
        let entries: Vec<(&'a str, De<'a>)> = map
            .iter()
            .filter(|(_, v)| !(is_struct && v.is_null()))
            .filter(|(k, v)| {
                !self.skip_unknown(v, || {
                    let mut p = self.path.clone();
                    p.push(step(k));
                    p
                })
            })
            .map(|(k, v)| (k.as_str(), self.child(v, step(k))))
            .collect();
        let path = self.path.clone();
        visitor
            .visit_map(Entries {
                entries: entries.into_iter(),
                next: None,
            })
            .map_err(|e: Error| e.located(&path))
    }
}

/// Elements of a list, set or tuple.
struct Seq<'a> {
    elements: std::vec::IntoIter<De<'a>>,
}

impl<'a> de::SeqAccess<'a> for Seq<'a> {
    type Error = Error;

    fn next_element_seed<S: de::DeserializeSeed<'a>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, Error> {
        self.elements
            .next()
            .map(|d| seed.deserialize(d))
            .transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.elements.len())
    }
}

/// Entries of a map or attributes of an object.
struct Entries<'a> {
    entries: std::vec::IntoIter<(&'a str, De<'a>)>,
    next: Option<De<'a>>,
}

impl<'a> de::MapAccess<'a> for Entries<'a> {
    type Error = Error;

    fn next_key_seed<K: de::DeserializeSeed<'a>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        let path = value.path.clone();
        self.next = Some(value);
        seed.deserialize(de::value::BorrowedStrDeserializer::<Error>::new(key))
            .map(Some)
            .map_err(|e: Error| e.located(&path))
    }

    fn next_value_seed<S: de::DeserializeSeed<'a>>(&mut self, seed: S) -> Result<S::Value, Error> {
        match self.next.take() {
            Some(d) => seed.deserialize(d),
            None => Err(de::Error::custom("a value without its key")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// The serializer's error.
#[derive(Debug)]
struct SerError(ValueError);

impl fmt::Display for SerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for SerError {}

impl ser::Error for SerError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        SerError(ValueError::new(&AttributePath::root(), msg.to_string()))
    }
}

fn unsupported(what: &str) -> SerError {
    ser::Error::custom(format!("{what} has no Terraform value"))
}

/// The serializer into [`Value`].
struct Ser;

/// A list being serialized.
struct SerSeq(Vec<Value>);

/// A map or object being serialized, with the key of the value to come.
struct SerMap {
    entries: BTreeMap<String, Value>,
    key: Option<String>,
    object: bool,
}

impl ser::Serializer for Ser {
    type Ok = Value;
    type Error = SerError;
    type SerializeSeq = SerSeq;
    type SerializeTuple = SerSeq;
    type SerializeTupleStruct = SerSeq;
    type SerializeTupleVariant = ser::Impossible<Value, SerError>;
    type SerializeMap = SerMap;
    type SerializeStruct = SerMap;
    type SerializeStructVariant = ser::Impossible<Value, SerError>;

    fn serialize_bool(self, v: bool) -> Result<Value, SerError> {
        Ok(Value::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Value, SerError> {
        self.serialize_i64(v.into())
    }
    fn serialize_i16(self, v: i16) -> Result<Value, SerError> {
        self.serialize_i64(v.into())
    }
    fn serialize_i32(self, v: i32) -> Result<Value, SerError> {
        self.serialize_i64(v.into())
    }
    fn serialize_i64(self, v: i64) -> Result<Value, SerError> {
        Ok(Value::int(v))
    }
    fn serialize_i128(self, v: i128) -> Result<Value, SerError> {
        Ok(i64::try_from(v).map_or_else(|_| Value::Number(Number::Big(v.to_string())), Value::int))
    }
    fn serialize_u8(self, v: u8) -> Result<Value, SerError> {
        self.serialize_i64(v.into())
    }
    fn serialize_u16(self, v: u16) -> Result<Value, SerError> {
        self.serialize_i64(v.into())
    }
    fn serialize_u32(self, v: u32) -> Result<Value, SerError> {
        self.serialize_i64(v.into())
    }
    fn serialize_u64(self, v: u64) -> Result<Value, SerError> {
        self.serialize_i128(v.into())
    }
    fn serialize_u128(self, v: u128) -> Result<Value, SerError> {
        Ok(i64::try_from(v).map_or_else(|_| Value::Number(Number::Big(v.to_string())), Value::int))
    }
    fn serialize_f32(self, v: f32) -> Result<Value, SerError> {
        self.serialize_f64(v.into())
    }
    fn serialize_f64(self, v: f64) -> Result<Value, SerError> {
        Ok(Value::float(v))
    }
    fn serialize_char(self, v: char) -> Result<Value, SerError> {
        Ok(Value::string(v.to_string()))
    }
    fn serialize_str(self, v: &str) -> Result<Value, SerError> {
        Ok(Value::string(v))
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<Value, SerError> {
        Err(unsupported("a byte string"))
    }
    fn serialize_none(self) -> Result<Value, SerError> {
        Ok(Value::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Value, SerError> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Value, SerError> {
        Ok(Value::Null)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Value, SerError> {
        Ok(Value::Null)
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Value, SerError> {
        Ok(Value::string(variant))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Value, SerError> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<Value, SerError> {
        Err(unsupported("an enum variant with data"))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<SerSeq, SerError> {
        Ok(SerSeq(Vec::with_capacity(len.unwrap_or(0))))
    }
    fn serialize_tuple(self, len: usize) -> Result<SerSeq, SerError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<SerSeq, SerError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, SerError> {
        Err(unsupported("an enum variant with data"))
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<SerMap, SerError> {
        Ok(SerMap {
            entries: BTreeMap::new(),
            key: None,
            object: false,
        })
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<SerMap, SerError> {
        Ok(SerMap {
            entries: BTreeMap::new(),
            key: None,
            object: true,
        })
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, SerError> {
        Err(unsupported("an enum variant with data"))
    }
}

impl ser::SerializeSeq for SerSeq {
    type Ok = Value;
    type Error = SerError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerError> {
        let path = AttributePath::root().then_index(i64::try_from(self.0.len()).unwrap_or(0));
        self.0
            .push(value.serialize(Ser).map_err(|e| e.under(&path))?);
        Ok(())
    }
    fn end(self) -> Result<Value, SerError> {
        Ok(Value::List(self.0))
    }
}

impl ser::SerializeTuple for SerSeq {
    type Ok = Value;
    type Error = SerError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerError> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<Value, SerError> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleStruct for SerSeq {
    type Ok = Value;
    type Error = SerError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerError> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<Value, SerError> {
        ser::SerializeSeq::end(self)
    }
}

impl SerError {
    /// This error with `prefix` in front of its path.
    fn under(mut self, prefix: &AttributePath) -> Self {
        let mut path = prefix.clone();
        path.extend(self.0.path.steps().iter().cloned());
        self.0.path = path;
        self
    }
}

impl ser::SerializeMap for SerMap {
    type Ok = Value;
    type Error = SerError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), SerError> {
        match key.serialize(Ser)? {
            Value::String(s) => self.key = Some(s),
            Value::Number(n) => self.key = Some(n.to_string()),
            _ => return Err(unsupported("a map key that is not a string")),
        }
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerError> {
        let key = self.key.take().unwrap_or_default();
        let path = AttributePath::root().then_key(key.clone());
        let v = value.serialize(Ser).map_err(|e| e.under(&path))?;
        self.entries.insert(key, v);
        Ok(())
    }
    fn end(self) -> Result<Value, SerError> {
        Ok(if self.object {
            Value::Object(self.entries)
        } else {
            Value::Map(self.entries)
        })
    }
}

impl ser::SerializeStruct for SerMap {
    type Ok = Value;
    type Error = SerError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), SerError> {
        let v = value
            .serialize(Ser)
            .map_err(|e| e.under(&AttributePath::attr(key)))?;
        self.entries.insert(key.to_string(), v);
        Ok(())
    }
    fn end(self) -> Result<Value, SerError> {
        ser::SerializeMap::end(self)
    }
}

#[cfg(test)]
pub mod coverage;

#[cfg(test)]
mod tests;
