//! The JSON form of values (stored state in `UpgradeResourceState`), directed by a [`Type`].
//!
//! Follows cty's JSON encoding: objects and maps are JSON objects, lists, sets and tuples arrays, `dynamic` values
//! `{"value": ..., "type": ...}`; primitives are converted leniently as cty does (a number or bool token is accepted
//! for a string, a numeric string for a number, `"true"`/`"false"` for a bool). Numbers keep their exact decimal text
//! when they fit neither `i64` nor `f64`. Every error carries an attribute path and never the value.
//!
//! Why a tokenizer of our own and not `serde_json`, already a dependency: cty numbers are arbitrary precision and
//! state keeps them as JSON number tokens (`123456789012345678901234567890` must come back as that text, see the
//! test below), but `serde_json` without its `arbitrary_precision` feature turns every number into `u64`, `i64` or
//! `f64` before we see it. That feature cannot be enabled for this module alone: Cargo unifies features, so it
//! would change `serde_json::Number` for every user in the build, and serde_json's own tracker documents that it
//! breaks numbers read through `#[serde(flatten)]`, internally tagged and untagged enums (serde-rs/json#505,
//! #559, #721), which other dependencies of this crate use. The tokenizer below (about 190 lines) keeps the
//! number text, every member of an object in order, and our limits (nesting depth 128, errors with a byte
//! offset and no content); `serde_json` is still used to hand a `dynamic` value's type to [`Type::from_json`].

use super::msgpack::parse_decimal;
use super::{Fields, Number, Type, Value, ValueError};
use crate::tfplugin::path::{AttributePath, PathStep};
use crate::tfplugin::schema::Schema;
use std::collections::BTreeMap;

/// Nesting limit of the JSON document (guards against stack exhaustion on hostile input).
const MAX_DEPTH: usize = 128;

/// Options for [`decode_with`].
#[derive(Debug, Clone, Copy, Default)]
pub struct DecodeOptions {
    /// Drop object attributes the type does not know (e.g. attributes removed from a schema) instead of failing.
    pub ignore_undefined_attributes: bool,
}

/// Decodes stored state JSON against the current `schema`, ignoring attributes the schema no longer has.
pub fn decode_state(bytes: &[u8], schema: &Schema) -> Result<Value, ValueError> {
    decode_with(
        bytes,
        &schema.value_type(),
        DecodeOptions {
            ignore_undefined_attributes: true,
        },
    )
}

/// Decodes JSON `bytes` as a value of type `ty`, strictly.
pub fn decode(bytes: &[u8], ty: &Type) -> Result<Value, ValueError> {
    decode_with(bytes, ty, DecodeOptions::default())
}

/// Decodes JSON `bytes` as a value of type `ty`.
pub fn decode_with(bytes: &[u8], ty: &Type, opts: DecodeOptions) -> Result<Value, ValueError> {
    let mut p = Parser {
        buf: bytes,
        pos: 0,
        depth: 0,
    };
    let json = p
        .document()
        .map_err(|m| ValueError::new(&AttributePath::root(), m))?;
    let mut c = Converter {
        path: AttributePath::root(),
        opts,
        depth: 0,
    };
    c.convert(&json, ty)
}

/// Parsed JSON with numbers kept as text.
#[derive(Debug, Clone, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Number(String),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "bool",
            Json::Number(_) => "number",
            Json::String(_) => "string",
            Json::Array(_) => "array",
            Json::Object(_) => "object",
        }
    }
}

struct Parser<'a> {
    buf: &'a [u8],
    pos: usize,
    depth: usize,
}

impl Parser<'_> {
    fn document(&mut self) -> Result<Json, String> {
        let v = self.value()?;
        self.ws();
        if self.pos != self.buf.len() {
            return Err(format!(
                "invalid JSON: trailing characters at byte {}",
                self.pos
            ));
        }
        Ok(v)
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.buf.get(self.pos) {
            self.pos += 1;
        }
    }

    fn fail<T>(&self, what: &str) -> Result<T, String> {
        Err(format!("invalid JSON: {what} at byte {}", self.pos))
    }

    fn literal(&mut self, word: &[u8], v: Json) -> Result<Json, String> {
        if self.buf[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(v)
        } else {
            self.fail("unexpected token")
        }
    }

    fn value(&mut self) -> Result<Json, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return self.fail("nested too deeply");
        }
        self.ws();
        let v = match self.buf.get(self.pos) {
            None => self.fail("unexpected end"),
            Some(b'n') => self.literal(b"null", Json::Null),
            Some(b't') => self.literal(b"true", Json::Bool(true)),
            Some(b'f') => self.literal(b"false", Json::Bool(false)),
            Some(b'"') => self.string().map(Json::String),
            Some(b'[') => Ok(Json::Array(self.array_items()?)),
            Some(b'{') => Ok(Json::Object(self.object_members()?)),
            Some(b'-' | b'0'..=b'9') => Ok(self.number()?),
            Some(_) => self.fail("unexpected character"),
        };
        self.depth -= 1;
        v
    }

    /// The items of an array, its `[` next.
    fn array_items(&mut self) -> Result<Vec<Json>, String> {
        self.pos += 1;
        let mut items = Vec::new();
        self.ws();
        if self.buf.get(self.pos) == Some(&b']') {
            self.pos += 1;
            return Ok(items);
        }
        loop {
            items.push(self.value()?);
            self.ws();
            match self.buf.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(items);
                }
                _ => return self.fail("expected ',' or ']'"),
            }
        }
    }

    /// The members of an object, in their order, its `{` next.
    fn object_members(&mut self) -> Result<Vec<(String, Json)>, String> {
        self.pos += 1;
        let mut items = Vec::new();
        self.ws();
        if self.buf.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            return Ok(items);
        }
        loop {
            self.ws();
            if self.buf.get(self.pos) != Some(&b'"') {
                return self.fail("expected a string key");
            }
            let key = self.string()?;
            self.ws();
            if self.buf.get(self.pos) != Some(&b':') {
                return self.fail("expected ':'");
            }
            self.pos += 1;
            items.push((key, self.value()?));
            self.ws();
            match self.buf.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(items);
                }
                _ => return self.fail("expected ',' or '}'"),
            }
        }
    }

    /// A number, kept as its text once checked.
    fn number(&mut self) -> Result<Json, String> {
        let start = self.pos;
        while let Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') = self.buf.get(self.pos) {
            self.pos += 1;
        }
        let text = std::str::from_utf8(&self.buf[start..self.pos]).unwrap_or_default();
        if parse_decimal(text).is_none() {
            return self.fail("invalid number");
        }
        Ok(Json::Number(text.to_owned()))
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let Some(h) = self.buf.get(self.pos..self.pos + 4) else {
            return self.fail("truncated escape");
        };
        let s = std::str::from_utf8(h).map_err(|_| "invalid JSON: bad escape".to_owned())?;
        let v = u32::from_str_radix(s, 16).map_err(|_| "invalid JSON: bad escape".to_owned())?;
        self.pos += 4;
        Ok(v)
    }

    fn string(&mut self) -> Result<String, String> {
        self.pos += 1; // opening quote
        let mut out = Vec::new();
        loop {
            let Some(&b) = self.buf.get(self.pos) else {
                return self.fail("unterminated string");
            };
            self.pos += 1;
            match b {
                b'"' => break,
                b'\\' => {
                    let Some(&e) = self.buf.get(self.pos) else {
                        return self.fail("unterminated string");
                    };
                    self.pos += 1;
                    let c = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hi = self.hex4()?;
                            let code = if (0xd800..0xdc00).contains(&hi) {
                                if self.buf.get(self.pos..self.pos + 2) != Some(b"\\u") {
                                    return self.fail("unpaired surrogate");
                                }
                                self.pos += 2;
                                let lo = self.hex4()?;
                                if !(0xdc00..0xe000).contains(&lo) {
                                    return self.fail("unpaired surrogate");
                                }
                                0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00)
                            } else {
                                hi
                            };
                            match char::from_u32(code) {
                                Some(c) => c,
                                None => return self.fail("invalid unicode escape"),
                            }
                        }
                        _ => return self.fail("invalid escape"),
                    };
                    let mut tmp = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
                }
                0x00..=0x1f => return self.fail("control character in string"),
                _ => out.push(b),
            }
        }
        String::from_utf8(out).map_err(|_| "invalid JSON: string is not valid UTF-8".to_owned())
    }
}

struct Converter {
    path: AttributePath,
    opts: DecodeOptions,
    depth: usize,
}

impl Converter {
    fn err(&self, msg: impl Into<String>) -> ValueError {
        ValueError::new(&self.path, msg)
    }

    fn mismatch(&self, ty: &Type, j: &Json) -> ValueError {
        self.err(format!(
            "expected a value of type {ty}, got JSON {}",
            j.kind()
        ))
    }

    fn convert(&mut self, j: &Json, ty: &Type) -> Result<Value, ValueError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err("value nested too deeply"));
        }
        let r = self.convert_inner(j, ty);
        self.depth -= 1;
        r
    }

    fn convert_inner(&mut self, j: &Json, ty: &Type) -> Result<Value, ValueError> {
        if *j == Json::Null {
            return Ok(Value::Null);
        }
        match (ty, j) {
            (Type::Dynamic, Json::Object(fields)) => self.convert_dynamic(fields),
            (Type::String, Json::String(s)) => Ok(Value::String(s.clone())),
            (Type::String, Json::Number(n)) => Ok(Value::String(n.clone())),
            (Type::String, Json::Bool(b)) => Ok(Value::String(b.to_string())),
            (Type::Number, Json::Number(n) | Json::String(n)) => number_from_text(n)
                .map(Value::Number)
                .ok_or_else(|| self.err("not a valid number")),
            (Type::Bool, Json::Bool(b)) => Ok(Value::Bool(*b)),
            (Type::Bool, Json::String(s)) if s == "true" || s == "false" => {
                Ok(Value::Bool(s == "true"))
            }
            (Type::List(elem), Json::Array(items)) => {
                let mut out = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    self.path.push(PathStep::KeyInt(i as i64));
                    let r = self.convert(item, elem);
                    self.path.pop();
                    out.push(r?);
                }
                Ok(Value::List(out))
            }
            (Type::Set(elem), Json::Array(items)) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    let v = self.convert(item, elem)?;
                    if !out.contains(&v) {
                        out.push(v);
                    }
                }
                Ok(Value::Set(out))
            }
            (Type::Tuple(elems), Json::Array(items)) => self.convert_tuple(items, elems),
            (Type::Map(elem), Json::Object(fields)) => {
                let mut out = Vec::with_capacity(fields.len());
                for (k, item) in fields {
                    self.path.push(PathStep::KeyString(k.clone()));
                    let r = self.convert(item, elem);
                    self.path.pop();
                    out.push((k.clone(), r?));
                }
                Ok(Value::Map(out.into_iter().collect()))
            }
            (Type::Object { attributes, .. }, Json::Object(fields)) => {
                self.convert_object(fields, attributes)
            }
            _ => Err(self.mismatch(ty, j)),
        }
    }

    /// A value of type `dynamic`: an object holding its `type` and its `value`.
    fn convert_dynamic(&mut self, fields: &[(String, Json)]) -> Result<Value, ValueError> {
        let get = |name: &str| fields.iter().find(|(k, _)| k == name).map(|(_, v)| v);
        let (Some(tj), Some(vj)) = (get("type"), get("value")) else {
            return Err(self.err("dynamic value must be an object with \"type\" and \"value\""));
        };
        let inner = type_from_json(tj).ok_or_else(|| self.err("invalid type in dynamic value"))?;
        self.convert(vj, &inner)
    }

    /// A tuple: as many items as its type has elements, each of its element's type.
    fn convert_tuple(&mut self, items: &[Json], elems: &[Type]) -> Result<Value, ValueError> {
        if elems.len() != items.len() {
            return Err(self.err(format!(
                "tuple has {} elements but its type has {}",
                items.len(),
                elems.len()
            )));
        }
        let mut out = Vec::with_capacity(items.len());
        for (i, (item, t)) in items.iter().zip(elems).enumerate() {
            self.path.push(PathStep::KeyInt(i as i64));
            let r = self.convert(item, t);
            self.path.pop();
            out.push(r?);
        }
        Ok(Value::Tuple(out))
    }

    /// An object: each field of its type's attributes (others are an error unless ignored), absent ones null.
    fn convert_object(
        &mut self,
        fields: &[(String, Json)],
        attributes: &BTreeMap<String, Type>,
    ) -> Result<Value, ValueError> {
        let mut given = Vec::with_capacity(fields.len());
        for (k, item) in fields {
            self.path.push(PathStep::Attribute(k.clone()));
            let r = match attributes.get(k) {
                Some(t) => self.convert(item, t).map(Some),
                None if self.opts.ignore_undefined_attributes => Ok(None),
                None => Err(self.err("unsupported attribute (not in the schema)")),
            };
            self.path.pop();
            if let Some(v) = r? {
                given.push((k.clone(), v));
            }
        }
        // Ordered once, each field's last value kept, then the absent attributes added as null and ordered again.
        let given: Fields = given.into_iter().collect();
        let absent: Vec<(String, Value)> = attributes
            .keys()
            .filter(|name| !given.contains_key(*name))
            .map(|name| (name.clone(), Value::Null))
            .collect();
        Ok(Value::Object(given.into_iter().chain(absent).collect()))
    }
}

fn number_from_text(text: &str) -> Option<Number> {
    match parse_decimal(text)? {
        Number::Big(s) => {
            // Prefer an exact f64 when the text round-trips through it.
            match s.parse::<f64>() {
                Ok(x) if x.is_finite() && x.fract() != 0.0 && format!("{x}") == s => {
                    Some(Number::Float(x))
                }
                _ => Some(Number::Big(s)),
            }
        }
        n => Some(n),
    }
}

fn type_from_json(j: &Json) -> Option<Type> {
    Type::from_json(&to_serde(j)).ok()
}

fn to_serde(j: &Json) -> serde_json::Value {
    match j {
        Json::Null => serde_json::Value::Null,
        Json::Bool(b) => serde_json::Value::Bool(*b),
        Json::Number(n) => serde_json::Value::String(n.clone()),
        Json::String(s) => serde_json::Value::String(s.clone()),
        Json::Array(items) => serde_json::Value::Array(items.iter().map(to_serde).collect()),
        Json::Object(fields) => serde_json::Value::Object(
            fields
                .iter()
                .map(|(k, v)| (k.clone(), to_serde(v)))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tfplugin::schema::{Attribute, Block, NestedBlock, Schema};

    #[test]
    fn state() {
        let schema = Schema::new(0)
            .attribute(Attribute::string("id").computed())
            .attribute(Attribute::number("n").optional())
            .attribute(Attribute::dynamic("d").optional())
            .block(NestedBlock::list(
                "b",
                Block::new().attribute(Attribute::map("m", Type::Bool).optional()),
            ));
        let raw = br#"{"id":"x\u00e9\ud83d\ude00","n":123456789012345678901234567890,"gone":1,
            "d":{"value":["a",1],"type":["tuple",["string","number"]]},"b":[{"m":{"k":"true"}}]}"#;
        let v = decode_state(raw, &schema).expect("decode");
        assert_eq!(v.get_attr("id").as_str(), Some("xé😀"));
        assert_eq!(
            v.get_attr("n"),
            &Value::Number(Number::Big("123456789012345678901234567890".into()))
        );
        assert_eq!(
            v.get_attr("d"),
            &Value::tuple([Value::string("a"), Value::int(1)])
        );
        assert_eq!(
            v.get_attr("b").get_index(0).get_attr("m").get_attr("k"),
            &Value::Bool(true)
        );
        assert!(v.as_map().is_some_and(|m| !m.contains_key("gone")));
        let err = decode(raw, &schema.value_type()).expect_err("strict");
        assert_eq!(err.path.to_string(), "gone");
        let err = decode_state(br#"{"b":[{"m":{"k":[]}}]}"#, &schema).expect_err("type");
        assert_eq!(err.path.to_string(), r#"b[0].m["k"]"#);
        assert!(decode_state(b"{\"id\":", &schema).is_err());
        assert_eq!(decode_state(b"null", &schema), Ok(Value::Null));
        assert_eq!(decode(b"0.25", &Type::Number), Ok(Value::float(0.25)));
    }
}
