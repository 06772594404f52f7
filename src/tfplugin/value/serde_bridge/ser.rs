//! The serializer: any serde value as a [`Value`].

use std::fmt;

use serde::{Serialize, ser};

use super::super::{Fields, Number, Value, ValueError};
use crate::tfplugin::path::AttributePath;

/// The serializer's error.
#[derive(Debug)]
pub(super) struct SerError(pub(super) ValueError);

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
pub(super) struct Ser;

/// A list being serialized.
pub(super) struct SerSeq(Vec<Value>);

/// A map or object being serialized, with the key of the value to come.
pub(super) struct SerMap {
    entries: Fields,
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
            entries: Fields::new(),
            key: None,
            object: false,
        })
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<SerMap, SerError> {
        Ok(SerMap {
            entries: Fields::new(),
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
        // Collected again: already in order, this only gives back the room the inserts reserved.
        let entries = self.entries.into_iter().collect();
        Ok(if self.object {
            Value::Object(entries)
        } else {
            Value::Map(entries)
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
