//! The deserializer: one [`Value`] at one attribute path, read as whatever the type asks for.

use std::{cell::RefCell, fmt};

use serde::de::{self, IntoDeserializer, Visitor};

use super::super::{Number, Value, ValueError};
use super::FromValueError;
use crate::tfplugin::path::{AttributePath, PathStep};

/// What one read shares across its nested deserializers.
pub(super) struct Ctx {
    /// Unknown values read as absent (else they are errors).
    partial: bool,
    pub(super) unknown: RefCell<Vec<AttributePath>>,
    /// Paths the type did not read (serde's ignored values: attributes the struct has no field for).
    pub(super) ignored: RefCell<Vec<AttributePath>>,
}

impl Ctx {
    pub(super) fn new(partial: bool) -> Self {
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
pub(super) struct Error {
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

    pub(super) fn into_public(self) -> FromValueError {
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
pub(super) struct De<'a> {
    value: &'a Value,
    path: AttributePath,
    ctx: &'a Ctx,
}

impl<'a> De<'a> {
    pub(super) fn new(value: &'a Value, path: AttributePath, ctx: &'a Ctx) -> Self {
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
