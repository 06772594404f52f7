//! [`Value`] to msgpack for a [`Type`], with `rmp::encode`; errors name the attribute path, never the value.

use std::collections::BTreeMap;

use super::{
    EXT_UNKNOWN_REFINED, MAX_DEPTH,
    decode::{normalize_float, parse_decimal},
    infer_type,
};
use crate::tfplugin::path::{AttributePath, PathStep};
use crate::tfplugin::value::{Number, Refinements, Type, Value, ValueError};

/// Encodes `value` as msgpack for type `ty`.
pub fn encode(value: &Value, ty: &Type) -> Result<Vec<u8>, ValueError> {
    let mut e = Encoder {
        out: Vec::with_capacity(64),
        path: AttributePath::root(),
        depth: 0,
    };
    e.value(value, ty)?;
    Ok(e.out)
}

struct Encoder {
    out: Vec<u8>,
    path: AttributePath,
    depth: usize,
}

impl Encoder {
    fn err(&self, msg: impl Into<String>) -> ValueError {
        ValueError::new(&self.path, msg)
    }

    /// Checks the result of an `rmp` write (writing into a `Vec` fails only on lengths msgpack cannot express).
    fn wrote<T, E: std::fmt::Display>(&self, r: Result<T, E>) -> Result<T, ValueError> {
        r.map_err(|e| self.err(format!("cannot encode as msgpack: {e}")))
    }

    /// A collection or string length as msgpack's `u32`.
    fn len32(&self, n: usize) -> Result<u32, ValueError> {
        u32::try_from(n).map_err(|_| self.err(format!("length {n} is too large for msgpack")))
    }

    fn mismatch(&self, ty: &Type, v: &Value) -> ValueError {
        self.err(format!("expected a value of type {ty}, got {}", v.kind()))
    }

    fn value(&mut self, v: &Value, ty: &Type) -> Result<(), ValueError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err("value nested too deeply"));
        }
        let r = self.value_inner(v, ty);
        self.depth -= 1;
        r
    }

    fn value_inner(&mut self, v: &Value, ty: &Type) -> Result<(), ValueError> {
        match v {
            Value::Null => {
                self.out.push(0xc0);
                return Ok(());
            }
            Value::Unknown(r) => return self.unknown(r, ty),
            _ => {}
        }
        match (ty, v) {
            (Type::Dynamic, _) => {
                let inner = infer_type(v).map_err(|e| self.err(e.to_string()))?;
                self.array_len(2)?;
                let json = inner.to_json_bytes();
                self.bin(&json)?;
                self.value(v, &inner)
            }
            (Type::String, Value::String(s)) => {
                self.str(s)?;
                Ok(())
            }
            (Type::Bool, Value::Bool(b)) => {
                self.out.push(if *b { 0xc3 } else { 0xc2 });
                Ok(())
            }
            (Type::Number, Value::Number(n)) => self.number(n),
            (Type::List(elem), Value::List(items) | Value::Set(items) | Value::Tuple(items)) => {
                self.array_len(items.len())?;
                for (i, item) in items.iter().enumerate() {
                    self.path.push(PathStep::KeyInt(i as i64));
                    let r = self.value(item, elem);
                    self.path.pop();
                    r?;
                }
                Ok(())
            }
            (Type::Set(elem), Value::List(items) | Value::Set(items) | Value::Tuple(items)) => {
                self.array_len(items.len())?;
                for item in items {
                    self.value(item, elem)?;
                }
                Ok(())
            }
            (Type::Tuple(elems), Value::List(items) | Value::Tuple(items)) => {
                self.tuple(items, elems)
            }
            (Type::Map(elem), Value::Map(items) | Value::Object(items)) => {
                self.map_len(items.len())?;
                for (k, item) in items {
                    self.str(k)?;
                    self.path.push(PathStep::KeyString(k.clone()));
                    let r = self.value(item, elem);
                    self.path.pop();
                    r?;
                }
                Ok(())
            }
            (Type::Object { attributes, .. }, Value::Object(items) | Value::Map(items)) => {
                self.object(items, attributes)
            }
            _ => Err(self.mismatch(ty, v)),
        }
    }

    fn tuple(&mut self, items: &[Value], elems: &[Type]) -> Result<(), ValueError> {
        if elems.len() != items.len() {
            return Err(self.err(format!(
                "tuple value has {} elements but its type has {}",
                items.len(),
                elems.len()
            )));
        }
        self.array_len(items.len())?;
        for (i, (item, t)) in items.iter().zip(elems).enumerate() {
            self.path.push(PathStep::KeyInt(i as i64));
            let r = self.value(item, t);
            self.path.pop();
            r?;
        }
        Ok(())
    }

    /// An object: every attribute of the type, in order (absent ones as null); a value attribute the type lacks
    /// is an error.
    fn object(
        &mut self,
        items: &BTreeMap<String, Value>,
        attributes: &BTreeMap<String, Type>,
    ) -> Result<(), ValueError> {
        if let Some(extra) = items.keys().find(|k| !attributes.contains_key(*k)) {
            let at = self.path.clone().then_attr(extra.clone());
            return Err(ValueError::new(&at, "attribute is not in the schema"));
        }
        self.map_len(attributes.len())?;
        for (name, t) in attributes {
            self.str(name)?;
            self.path.push(PathStep::Attribute(name.clone()));
            let r = self.value(items.get(name).unwrap_or(&Value::Null), t);
            self.path.pop();
            r?;
        }
        Ok(())
    }

    fn unknown(&mut self, r: &Refinements, ty: &Type) -> Result<(), ValueError> {
        let mut body = Vec::new();
        let mut entries = 0u32;
        if *ty != Type::Dynamic {
            if r.not_null {
                entries += 1;
                body.push(1);
                body.push(0xc2);
            }
            match ty {
                Type::String => {
                    if let Some(prefix) = r.string_prefix.as_deref().filter(|p| !p.is_empty()) {
                        entries += 1;
                        body.push(2);
                        self.wrote(rmp::encode::write_str(&mut body, prefix))?;
                    }
                }
                Type::Number => {
                    for (key, bound) in [(3u8, &r.number_lower), (4u8, &r.number_upper)] {
                        if let Some((n, inclusive)) = bound {
                            let mut tmp = Encoder {
                                out: Vec::new(),
                                path: AttributePath::root(),
                                depth: 0,
                            };
                            if tmp.number(n).is_ok() {
                                entries += 1;
                                body.push(key);
                                body.push(0x92);
                                body.extend_from_slice(&tmp.out);
                                body.push(if *inclusive { 0xc3 } else { 0xc2 });
                            }
                        }
                    }
                }
                Type::List(_) | Type::Set(_) | Type::Map(_) => {
                    for (key, bound) in [
                        (5u8, r.length_lower.filter(|&l| l > 0)),
                        (6u8, r.length_upper),
                    ] {
                        if let Some(b) = bound {
                            entries += 1;
                            body.push(key);
                            self.wrote(rmp::encode::write_uint(&mut body, b))?;
                        }
                    }
                }
                _ => {}
            }
        }
        if entries == 0 {
            self.out.extend_from_slice(&[0xd4, 0, 0]);
            return Ok(());
        }
        let mut payload = Vec::with_capacity(body.len() + 1);
        self.wrote(rmp::encode::write_map_len(&mut payload, entries))?;
        payload.extend_from_slice(&body);
        let len = self.len32(payload.len())?;
        let r = rmp::encode::write_ext_meta(&mut self.out, len, EXT_UNKNOWN_REFINED);
        self.wrote(r)?;
        self.out.extend_from_slice(&payload);
        Ok(())
    }

    fn number(&mut self, n: &Number) -> Result<(), ValueError> {
        match n {
            Number::Int(i) => {
                let r = rmp::encode::write_sint(&mut self.out, *i);
                self.wrote(r)?;
            }
            Number::Float(x) => {
                if x.is_nan() {
                    return Err(self.err("NaN is not a valid number"));
                }
                match normalize_float(*x) {
                    Number::Int(i) => {
                        let r = rmp::encode::write_sint(&mut self.out, i);
                        self.wrote(r)?;
                    }
                    _ => {
                        let r = rmp::encode::write_f64(&mut self.out, *x);
                        self.wrote(r)?;
                    }
                }
            }
            Number::Big(s) => match parse_decimal(s) {
                Some(Number::Int(i)) => {
                    let r = rmp::encode::write_sint(&mut self.out, i);
                    self.wrote(r)?;
                }
                Some(_) => self.str(s)?,
                None => return Err(self.err("number text is not a valid decimal number")),
            },
        }
        Ok(())
    }

    fn str(&mut self, s: &str) -> Result<(), ValueError> {
        self.len32(s.len())?;
        let r = rmp::encode::write_str(&mut self.out, s);
        self.wrote(r)
    }

    fn bin(&mut self, b: &[u8]) -> Result<(), ValueError> {
        self.len32(b.len())?;
        let r = rmp::encode::write_bin(&mut self.out, b);
        self.wrote(r)
    }

    fn array_len(&mut self, n: usize) -> Result<(), ValueError> {
        let n = self.len32(n)?;
        let r = rmp::encode::write_array_len(&mut self.out, n);
        self.wrote(r).map(drop)
    }

    fn map_len(&mut self, n: usize) -> Result<(), ValueError> {
        let n = self.len32(n)?;
        let r = rmp::encode::write_map_len(&mut self.out, n);
        self.wrote(r).map(drop)
    }
}
