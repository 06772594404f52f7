//! Test helper: does a configuration type read every attribute of its schema, and write it back? A value with
//! every configurable attribute set (nested attributes and blocks included) is read into the type and written back
//! with [`to_value`](super::to_value); what the type ignored, what it wrote that the schema lacks and what did not
//! come back unchanged are listed, by attribute path.

use serde::{Serialize, de::DeserializeOwned};

use super::de::{Ctx, De};
use crate::tfplugin::{
    AttributePath, Fields, Type, Value,
    schema::{Attribute, AttributeType, Block, BlockNesting, Nesting},
};

/// What [`coverage`] found.
#[derive(Debug, Default, PartialEq)]
pub struct Coverage {
    /// Schema attributes the type did not read.
    pub not_read: Vec<String>,
    /// Attributes the type wrote that the schema lacks.
    pub not_in_schema: Vec<String>,
    /// Schema attributes that did not come back as they were.
    pub changed: Vec<String>,
}

/// A value for `block` with every attribute that configuration may set (required or optional) set, and every
/// nested block present once.
pub fn sample(block: &Block) -> Value {
    let mut attrs: Fields = block
        .attributes
        .iter()
        .filter(|a| a.required || a.optional)
        .map(|a| (a.name.clone(), sample_attribute(a)))
        .collect();
    for b in &block.blocks {
        let one = sample(&b.block);
        let v = match b.nesting {
            BlockNesting::Single | BlockNesting::Group => one,
            BlockNesting::List => Value::list([one]),
            BlockNesting::Set => Value::set([one]),
            BlockNesting::Map => Value::map([("label", one)]),
        };
        attrs.insert(b.type_name.clone(), v);
    }
    Value::Object(attrs)
}

fn sample_attribute(a: &Attribute) -> Value {
    match &a.kind {
        AttributeType::Type(t) => sample_type(t, &a.name),
        AttributeType::Nested(n) => {
            let one = sample(&Block {
                attributes: n.attributes.clone(),
                ..Block::default()
            });
            match n.nesting {
                Nesting::Single => one,
                Nesting::List => Value::list([one]),
                Nesting::Set => Value::set([one]),
                Nesting::Map => Value::map([("key", one)]),
            }
        }
    }
}

fn sample_type(t: &Type, name: &str) -> Value {
    match t {
        Type::Bool => Value::bool(true),
        Type::Number => Value::int(2),
        Type::List(e) => Value::list([sample_type(e, name)]),
        Type::Set(e) => Value::set([sample_type(e, name)]),
        Type::Map(e) => Value::map([("key", sample_type(e, name))]),
        Type::Object { attributes, .. } => Value::object(
            attributes
                .iter()
                .map(|(k, t)| (k.clone(), sample_type(t, k))),
        ),
        _ => Value::string(format!("{name}-sample")),
    }
}

/// Reads [`sample`]`(block)` into `T`, writes it back, and says what was not read, not in the schema, or changed.
pub fn coverage<T: DeserializeOwned + Serialize>(block: &Block) -> Coverage {
    let sample = sample(block);
    let ctx = Ctx::new(false);
    let read = match T::deserialize(De::new(&sample, AttributePath::root(), &ctx)) {
        Ok(v) => v,
        Err(e) => panic!("the sample does not read: {}", e.into_public()),
    };
    let back = super::to_value(&read).expect("written back");
    let mut c = Coverage {
        not_read: ctx
            .ignored
            .into_inner()
            .iter()
            .map(ToString::to_string)
            .collect(),
        ..Coverage::default()
    };
    compare(&sample, &back, &AttributePath::root(), &mut c);
    c
}

/// Panics unless `T` reads and writes back every attribute of `block` and writes nothing else but
/// `allowed_not_in_schema` (dotted paths).
pub fn assert_covers<T: DeserializeOwned + Serialize>(
    block: &Block,
    allowed_not_in_schema: &[&str],
) {
    let mut c = coverage::<T>(block);
    c.not_in_schema
        .retain(|p| !allowed_not_in_schema.contains(&p.as_str()));
    assert_eq!(c, Coverage::default(), "{}", std::any::type_name::<T>());
}

fn compare(sample: &Value, back: &Value, path: &AttributePath, c: &mut Coverage) {
    match (sample, back) {
        (Value::Object(s) | Value::Map(s), Value::Object(b) | Value::Map(b)) => {
            let object = matches!(sample, Value::Object(_));
            let step = |k: &str| {
                if object {
                    path.clone().then_attr(k)
                } else {
                    path.clone().then_key(k)
                }
            };
            for (k, sv) in s {
                compare(sv, b.get(k).unwrap_or(&Value::Null), &step(k), c);
            }
            for k in b.keys().filter(|k| !s.contains_key(*k)) {
                c.not_in_schema.push(step(k).to_string());
            }
        }
        (
            Value::List(s) | Value::Set(s) | Value::Tuple(s),
            Value::List(b) | Value::Set(b) | Value::Tuple(b),
        ) if s.len() == b.len() => {
            for (i, (sv, bv)) in s.iter().zip(b).enumerate() {
                compare(sv, bv, &path.clone().then_index(i as i64), c);
            }
        }
        (s, b) if s == b => {}
        _ => c.changed.push(path.to_string()),
    }
}
