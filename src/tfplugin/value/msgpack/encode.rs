//! [`Value`] to msgpack for a [`Type`], with `rmp::encode`; errors name the attribute path, never the value.

use std::collections::BTreeMap;

use super::{
    EXT_UNKNOWN_REFINED, InferError, MAX_DEPTH,
    decode::{compare_numbers, normalize_float, parse_decimal},
    infer_type, unify_types,
};
use crate::tfplugin::path::{AttributePath, PathStep};
use crate::tfplugin::value::{Fields, Number, Refinements, Type, Value, ValueError};

/// Encodes `value` as msgpack for type `ty`.
pub fn encode(value: &Value, ty: &Type) -> Result<Vec<u8>, ValueError> {
    let mut e = Encoder {
        out: Vec::with_capacity(64),
        path: AttributePath::root(),
        depth: 0,
    };
    e.value(value, ty, None)?;
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

    /// Writes `v` of type `ty`. `hint`, where `ty` has `dynamic` parts, is the type `v` has there: the one type
    /// all the elements of the collection `v` is in have (cty's collections have one element type, so the type
    /// written for each element's `dynamic` parts must be the same).
    fn value(&mut self, v: &Value, ty: &Type, hint: Option<&Type>) -> Result<(), ValueError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err("value nested too deeply"));
        }
        let r = self.value_inner(v, ty, hint);
        self.depth -= 1;
        r
    }

    fn value_inner(&mut self, v: &Value, ty: &Type, hint: Option<&Type>) -> Result<(), ValueError> {
        if *ty == Type::Dynamic {
            // A value whose type is known is written with it, null and unknown ones too (as cty writes a typed
            // null or unknown); one of type `dynamic` itself is a bare null or unknown.
            match hint {
                Some(h) if *h != Type::Dynamic => return self.dynamic(v, h.clone()),
                _ if v.is_present() => {
                    let inner = infer_type(v).map_err(|e| self.err(e.to_string()))?;
                    return self.dynamic(v, inner);
                }
                _ => {}
            }
        }
        match v {
            Value::Null => {
                self.out.push(0xc0);
                return Ok(());
            }
            Value::Unknown(r) => return self.unknown(r, ty),
            _ => {}
        }
        match (ty, v) {
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
                let hint = self.element_hint(elem, items.iter(), hint)?;
                self.array_len(items.len())?;
                for (i, item) in items.iter().enumerate() {
                    self.path.push(PathStep::KeyInt(i as i64));
                    let r = self.value(item, elem, hint.as_ref());
                    self.path.pop();
                    r?;
                }
                Ok(())
            }
            (Type::Set(elem), Value::List(items) | Value::Set(items) | Value::Tuple(items)) => {
                let hint = self.element_hint(elem, items.iter(), hint)?;
                self.array_len(items.len())?;
                for item in items {
                    self.value(item, elem, hint.as_ref())?;
                }
                Ok(())
            }
            (Type::Tuple(elems), Value::List(items) | Value::Tuple(items)) => {
                self.tuple(items, elems, hint)
            }
            (Type::Map(elem), Value::Map(items) | Value::Object(items)) => {
                let hint = self.element_hint(elem, items.values(), hint)?;
                self.map_len(items.len())?;
                for (k, item) in items {
                    self.str(k)?;
                    self.path.push(PathStep::KeyString(k.clone()));
                    let r = self.value(item, elem, hint.as_ref());
                    self.path.pop();
                    r?;
                }
                Ok(())
            }
            (Type::Object { attributes, .. }, Value::Object(items) | Value::Map(items)) => {
                self.object(items, attributes, hint)
            }
            _ => Err(self.mismatch(ty, v)),
        }
    }

    /// A `dynamic` value: `[type JSON, value]`.
    fn dynamic(&mut self, v: &Value, inner: Type) -> Result<(), ValueError> {
        self.array_len(2)?;
        let json = inner.to_json_bytes();
        self.bin(&json)?;
        self.value(v, &inner, None)
    }

    /// The type the elements of a collection of `elem` have where `elem` has `dynamic` parts: the collection's
    /// `hint` element type when it has one, else every element's type unified (`None` without `dynamic` parts).
    ///
    /// go-cty reads a null, unknown or empty element at a position whose type is not `dynamic` itself as being of
    /// the declared type, `dynamic` parts and all, and panics when another element's type differs (cty's
    /// collections have one element type): such a value is refused here, rather than crash Terraform.
    fn element_hint<'v, I>(
        &self,
        elem: &Type,
        items: I,
        hint: Option<&Type>,
    ) -> Result<Option<Type>, ValueError>
    where
        I: Iterator<Item = &'v Value> + Clone,
    {
        if !has_dynamic(elem) {
            return Ok(None);
        }
        let unified = match hint {
            Some(Type::List(h) | Type::Set(h) | Type::Map(h)) => (**h).clone(),
            _ => unify_elements(elem, items.clone()).map_err(|e| self.err(e.to_string()))?,
        };
        let mut seen: Option<Type> = None;
        for item in items {
            let t = read_type(item, elem, Some(&unified));
            match &seen {
                _ if t == Type::Dynamic => {}
                Some(first) if *first != t => {
                    return Err(self.err(format!(
                        "elements of this collection would be of different types for Terraform ({first} and \
                         {t}): a null, unknown or empty element whose type has dynamic parts has them in go-cty"
                    )));
                }
                Some(_) => {}
                None => seen = Some(t),
            }
        }
        Ok(Some(unified))
    }

    fn tuple(
        &mut self,
        items: &[Value],
        elems: &[Type],
        hint: Option<&Type>,
    ) -> Result<(), ValueError> {
        if elems.len() != items.len() {
            return Err(self.err(format!(
                "tuple value has {} elements but its type has {}",
                items.len(),
                elems.len()
            )));
        }
        self.array_len(items.len())?;
        let hints = match hint {
            Some(Type::Tuple(hints)) => hints.as_slice(),
            _ => &[],
        };
        for (i, (item, t)) in items.iter().zip(elems).enumerate() {
            self.path.push(PathStep::KeyInt(i as i64));
            let r = self.value(item, t, hints.get(i));
            self.path.pop();
            r?;
        }
        Ok(())
    }

    /// An object: every attribute of the type, in order (absent ones as null); a value attribute the type lacks
    /// is an error.
    fn object(
        &mut self,
        items: &Fields,
        attributes: &BTreeMap<String, Type>,
        hint: Option<&Type>,
    ) -> Result<(), ValueError> {
        let hints = match hint {
            Some(Type::Object { attributes, .. }) => Some(attributes),
            _ => None,
        };
        if let Some(extra) = items.keys().find(|k| !attributes.contains_key(*k)) {
            let at = self.path.clone().then_attr(extra.clone());
            return Err(ValueError::new(&at, "attribute is not in the schema"));
        }
        self.map_len(attributes.len())?;
        for (name, t) in attributes {
            self.str(name)?;
            self.path.push(PathStep::Attribute(name.clone()));
            let hint = hints.and_then(|h| h.get(name));
            let r = self.value(items.get(name).unwrap_or(&Value::Null), t, hint);
            self.path.pop();
            r?;
        }
        Ok(())
    }

    fn unknown(&mut self, r: &Refinements, ty: &Type) -> Result<(), ValueError> {
        if contradictory(r) {
            return Err(self.err("unknown value refinements contradict each other"));
        }
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
                    let prefix = r.string_prefix.as_deref().map(|p| cut(p, MAX_PREFIX_LEN));
                    if let Some(prefix) = prefix.filter(|p| !p.is_empty()) {
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
                    // cty's lengths are ints, its largest one meaning no upper bound: larger bounds are left out.
                    let fits = |l: &u64| *l < i64::MAX as u64;
                    for (key, bound) in [
                        (5u8, r.length_lower.filter(|&l| l > 0).filter(fits)),
                        (6u8, r.length_upper.filter(fits)),
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

/// Whether `ty` has a `dynamic` part.
fn has_dynamic(ty: &Type) -> bool {
    match ty {
        Type::Dynamic => true,
        Type::List(e) | Type::Set(e) | Type::Map(e) => has_dynamic(e),
        Type::Tuple(ts) => ts.iter().any(has_dynamic),
        Type::Object { attributes, .. } => attributes.values().any(has_dynamic),
        _ => false,
    }
}

/// The type `v` has as a value of `ty`: `ty` with its `dynamic` parts replaced by the types of the values there
/// (left `dynamic` where those are null, unknown or empty).
fn concrete_type(ty: &Type, v: &Value) -> Result<Type, InferError> {
    Ok(match (ty, v) {
        (_, Value::Null | Value::Unknown(_)) => ty.clone(),
        (Type::Dynamic, _) => infer_type(v)?,
        (Type::List(e), Value::List(i) | Value::Set(i) | Value::Tuple(i)) => {
            Type::list(unify_elements(e, i.iter())?)
        }
        (Type::Set(e), Value::List(i) | Value::Set(i) | Value::Tuple(i)) => {
            Type::set(unify_elements(e, i.iter())?)
        }
        (Type::Map(e), Value::Map(m) | Value::Object(m)) => {
            Type::map(unify_elements(e, m.values())?)
        }
        (Type::Tuple(ts), Value::List(i) | Value::Tuple(i)) if ts.len() == i.len() => Type::Tuple(
            ts.iter()
                .zip(i)
                .map(|(t, v)| concrete_type(t, v))
                .collect::<Result<_, _>>()?,
        ),
        (Type::Object { attributes, .. }, Value::Object(m) | Value::Map(m)) => Type::object(
            attributes
                .iter()
                .map(|(k, t)| {
                    Ok((
                        k.clone(),
                        concrete_type(t, m.get(k).unwrap_or(&Value::Null))?,
                    ))
                })
                .collect::<Result<Vec<_>, InferError>>()?,
        ),
        _ => ty.clone(),
    })
}

/// The one type elements `items` of declared type `elem` have: their [`concrete_type`]s unified.
fn unify_elements<'v>(
    elem: &Type,
    items: impl Iterator<Item = &'v Value>,
) -> Result<Type, InferError> {
    items.into_iter().try_fold(elem.clone(), |acc, item| {
        let t = concrete_type(elem, item)?;
        unify_types(&acc, &t).ok_or(InferError::Conflict {
            first: acc,
            second: t,
        })
    })
}

/// The longest string prefix refinement written: go-cty's encoder writes at most 256 bytes (its decoder refuses
/// refinements over `MAX_REFINEMENT_LEN` bytes), so a longer prefix is cut, which keeps it true.
const MAX_PREFIX_LEN: usize = 256;

/// The longest start of `s` of at most `max` bytes that ends on a character boundary.
fn cut(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Whether refinements leave no value at all (a lower bound above the upper one): cty panics on such a value.
fn contradictory(r: &Refinements) -> bool {
    let lengths = matches!((r.length_lower, r.length_upper), (Some(lo), Some(hi)) if lo > hi);
    let numbers = match (&r.number_lower, &r.number_upper) {
        (Some((lo, lo_inclusive)), Some((hi, hi_inclusive))) => match compare_numbers(lo, hi) {
            Some(std::cmp::Ordering::Greater) => true,
            Some(std::cmp::Ordering::Equal) => lo_inclusive != hi_inclusive,
            _ => false,
        },
        _ => false,
    };
    lengths || numbers
}

/// The type go-cty gives `v`, written as a value of `ty` with `hint` (as [`Encoder::value`] writes it): at a
/// `dynamic` position the type written there; a null or unknown value, or an empty collection, has the declared
/// type (`dynamic` parts included), any other value the types of its parts.
fn read_type(v: &Value, ty: &Type, hint: Option<&Type>) -> Type {
    if *ty == Type::Dynamic {
        return match hint {
            Some(h) if *h != Type::Dynamic => read_type(v, h, None),
            _ if v.is_present() => match infer_type(v) {
                Ok(inner) => read_type(v, &inner, None),
                Err(_) => Type::Dynamic,
            },
            _ => Type::Dynamic,
        };
    }
    let part = |i: usize| match hint {
        Some(Type::Tuple(hs)) => hs.get(i),
        _ => None,
    };
    let elements = |e: &Type, items: &mut dyn Iterator<Item = &Value>| {
        let h = match hint {
            Some(Type::List(h) | Type::Set(h) | Type::Map(h)) => Some((**h).clone()),
            _ => None,
        };
        items
            .map(|item| read_type(item, e, h.as_ref()))
            .find(|t| *t != Type::Dynamic)
            .unwrap_or(Type::Dynamic)
    };
    match (ty, v) {
        (_, Value::Null | Value::Unknown(_)) => ty.clone(),
        (Type::List(e), Value::List(i) | Value::Set(i) | Value::Tuple(i)) if !i.is_empty() => {
            Type::list(elements(e, &mut i.iter()))
        }
        (Type::Set(e), Value::List(i) | Value::Set(i) | Value::Tuple(i)) if !i.is_empty() => {
            Type::set(elements(e, &mut i.iter()))
        }
        (Type::Map(e), Value::Map(m) | Value::Object(m)) if !m.is_empty() => {
            Type::map(elements(e, &mut m.values()))
        }
        (Type::Tuple(ts), Value::List(i) | Value::Tuple(i)) => Type::Tuple(
            ts.iter()
                .zip(i)
                .enumerate()
                .map(|(n, (t, v))| read_type(v, t, part(n)))
                .collect(),
        ),
        (Type::Object { attributes, .. }, Value::Object(m) | Value::Map(m)) => Type::object(
            attributes
                .iter()
                .map(|(k, t)| {
                    let h = match hint {
                        Some(Type::Object { attributes, .. }) => attributes.get(k),
                        _ => None,
                    };
                    let v = m.get(k).unwrap_or(&Value::Null);
                    (k.clone(), read_type(v, t, h))
                })
                .collect::<Vec<_>>(),
        ),
        _ => ty.clone(),
    }
}
