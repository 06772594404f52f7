//! The msgpack form of `DynamicValue`, directed by a [`Type`].
//!
//! Follows cty's encoding: nulls are `nil`; unknowns are extension values (type 0 for a plain unknown, type 12 with a
//! map of refinements for a refined one; on input any extension of at most one byte is a plain unknown); numbers are
//! msgpack integers or floats when exact, otherwise decimal strings; `dynamic` values are a two-element array of the
//! type's JSON and the value; objects and maps are msgpack maps; lists, sets and tuples are arrays. Every error names
//! the attribute path where it happened and never includes the value (values may be secret). go-cty's codec is the
//! judge of both directions (`tests/plugin/cty_oracle.rs`); where its reading normalises (refinements that leave one
//! value, tighter of two bounds), the decoder does the same.
//!
//! Both directions are built on `rmp`: the decoder reads markers, lengths and scalars with `rmp::decode` and the
//! [`Type`] chooses what to read next; the encoder writes with `rmp::encode` and checks every result. Decode
//! failures are `DecodeError`s, located by attribute path and turned into the public [`ValueError`](super::ValueError) (message:
//! the error and its causes) at [`decode`]'s boundary. Limits: nesting `MAX_DEPTH`, refinement payloads
//! `MAX_REFINEMENT_LEN` bytes; a claimed length never allocates more than the input could hold.
//!
//! [`decode`] lives in `decode/` (the type-directed reader in `mod.rs`; `error.rs`, `number.rs` and
//! `refinement.rs` beside it), [`encode`] in `encode.rs`, [`splice_attributes`] (an object's msgpack with some of its
//! attributes given as bytes) in `splice.rs`; this file holds the entry points, the limits both share,
//! and the type inference `dynamic` values need.

mod decode;
mod encode;
mod splice;

pub(crate) use decode::parse_decimal;
pub use decode::{Span, attribute_spans, decode, decode_unread};
pub use encode::encode;
pub use splice::splice_attributes;

use super::{Type, Value};

/// Nesting limit for decoding and encoding (guards against stack exhaustion on hostile input).
const MAX_DEPTH: usize = 128;
/// Refinement payloads larger than this are rejected, as cty does.
const MAX_REFINEMENT_LEN: usize = 1024;
const EXT_UNKNOWN_REFINED: i8 = 12;

/// Why the type of a value cannot be inferred.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InferError {
    /// Two elements of one collection have types that do not unify.
    #[error("collection elements have different types ({first} and {second})")]
    Conflict {
        /// The type of the elements so far.
        first: Type,
        /// The conflicting element's type.
        second: Type,
    },
}

/// Infers the type of a known value (used for `dynamic` attributes). Nulls and unknowns are `dynamic`.
pub fn infer_type(value: &Value) -> Result<Type, InferError> {
    Ok(match value {
        Value::Null | Value::Unknown(_) => Type::Dynamic,
        Value::Bool(_) => Type::Bool,
        Value::Number(_) => Type::Number,
        Value::String(_) => Type::String,
        Value::List(items) => Type::list(unify(items.iter())?),
        Value::Set(items) => Type::set(unify(items.iter())?),
        Value::Map(items) => Type::map(unify(items.values())?),
        Value::Tuple(items) => Type::Tuple(items.iter().map(infer_type).collect::<Result<_, _>>()?),
        Value::Object(attrs) => Type::object(
            attrs
                .iter()
                .map(|(k, v)| Ok((k.clone(), infer_type(v)?)))
                .collect::<Result<Vec<_>, InferError>>()?,
        ),
    })
}

fn unify<'a>(items: impl Iterator<Item = &'a Value>) -> Result<Type, InferError> {
    let mut ty = Type::Dynamic;
    for item in items {
        let t = infer_type(item)?;
        ty = match unify_types(&ty, &t) {
            Some(u) => u,
            None => {
                return Err(InferError::Conflict {
                    first: ty,
                    second: t,
                });
            }
        };
    }
    Ok(ty)
}

/// The most specific type both `a` and `b` conform to, treating `dynamic` parts (from nulls, unknowns and empty
/// collections) as wildcards; `None` when they conflict.
fn unify_types(a: &Type, b: &Type) -> Option<Type> {
    Some(match (a, b) {
        _ if a == b => a.clone(),
        (Type::Dynamic, t) | (t, Type::Dynamic) => t.clone(),
        (Type::List(x), Type::List(y)) => Type::list(unify_types(x, y)?),
        (Type::Set(x), Type::Set(y)) => Type::set(unify_types(x, y)?),
        (Type::Map(x), Type::Map(y)) => Type::map(unify_types(x, y)?),
        (Type::Tuple(xs), Type::Tuple(ys)) if xs.len() == ys.len() => Type::Tuple(
            xs.iter()
                .zip(ys)
                .map(|(x, y)| unify_types(x, y))
                .collect::<Option<_>>()?,
        ),
        (Type::Object { attributes: xa, .. }, Type::Object { attributes: ya, .. })
            if xa.len() == ya.len() && xa.keys().eq(ya.keys()) =>
        {
            Type::object(
                xa.iter()
                    .zip(ya.values())
                    .map(|((k, x), y)| Some((k.clone(), unify_types(x, y)?)))
                    .collect::<Option<Vec<_>>>()?,
            )
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tfplugin::value::{Number, Refinements};

    fn obj_type() -> Type {
        Type::object([
            ("s", Type::String),
            ("n", Type::Number),
            ("l", Type::list(Type::Bool)),
            ("m", Type::map(Type::Number)),
            ("d", Type::Dynamic),
        ])
    }

    #[test]
    fn round_trip_object() {
        let v = Value::object([
            ("s", Value::string("héllo")),
            ("n", Value::float(1.5)),
            ("l", Value::list([Value::bool(true), Value::unknown()])),
            (
                "m",
                Value::map([
                    ("a", Value::Number(Number::Big("1e400".into()))),
                    ("b", Value::int(-7)),
                ]),
            ),
            (
                "d",
                Value::object([("x", Value::list([Value::string("y")]))]),
            ),
        ]);
        let bytes = encode(&v, &obj_type()).expect("encode");
        assert_eq!(decode(&bytes, &obj_type()).expect("decode"), v);
    }

    #[test]
    fn unknown_encodings() {
        assert_eq!(
            encode(&Value::unknown(), &Type::String).expect("enc"),
            vec![0xd4, 0, 0]
        );
        let refined = Value::refined(Refinements {
            not_null: true,
            string_prefix: Some("ab".into()),
            ..Refinements::default()
        });
        let bytes = encode(&refined, &Type::String).expect("enc");
        assert_eq!(bytes[0], 0xc7);
        assert_eq!(bytes[2], 12);
        assert_eq!(decode(&bytes, &Type::String).expect("dec"), refined);
        let num = Value::refined(Refinements {
            number_lower: Some((Number::Int(0), true)),
            number_upper: Some((Number::Float(2.5), false)),
            ..Refinements::default()
        });
        let bytes = encode(&num, &Type::Number).expect("enc");
        assert_eq!(decode(&bytes, &Type::Number).expect("dec"), num);
        // Any extension with a payload of at most one byte is a plain unknown; a longer one must be refinements.
        assert_eq!(
            decode(&[0xd4, 3, 1], &Type::Bool).expect("dec"),
            Value::unknown()
        );
        assert!(decode(&[0xd5, 3, 1, 2], &Type::Bool).is_err());
    }

    #[test]
    fn errors_carry_paths() {
        let t = Type::object([("a", Type::list(Type::object([("b", Type::Number)])))]);
        let v = Value::object([(
            "a",
            Value::list([Value::object([("b", Value::string("x"))])]),
        )]);
        let e = encode(&v, &t).expect_err("mismatch");
        assert_eq!(e.path.to_string(), "a[0].b");
        // a string where a number is expected
        let bytes = [0x81, 0xa1, b'a', 0x91, 0x81, 0xa1, b'b', 0xa1, b'x'];
        let e = decode(&bytes, &t).expect_err("bad number");
        assert_eq!(e.path.to_string(), "a[0].b");
        let e = decode(&[0x81, 0xa1, b'z', 0xc0], &t).expect_err("extra attribute");
        assert_eq!(e.path.to_string(), "z");
    }

    #[test]
    fn numbers() {
        let dec = |b: &[u8]| decode(b, &Type::Number).expect("dec");
        assert_eq!(
            dec(&[0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
            Value::Number(Number::Big(u64::MAX.to_string()))
        );
        assert_eq!(dec(&[0xcb, 0x40, 0x10, 0, 0, 0, 0, 0, 0]), Value::int(4));
        assert_eq!(
            dec(&[0xa3, b'1', b'.', b'5']),
            Value::Number(Number::Big("1.5".into()))
        );
        assert!(decode(&[0xa3, b'1', b'x', b'5'], &Type::Number).is_err());
        assert!(decode(&[0xcb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 1], &Type::Number).is_err());
    }

    #[test]
    fn dynamic_inference_unifies_partial_types() {
        let v = Value::list([
            Value::list([]),
            Value::list([Value::string("a")]),
            Value::list([Value::Null]),
        ]);
        assert_eq!(infer_type(&v), Ok(Type::list(Type::list(Type::String))));
        let bytes = encode(&v, &Type::Dynamic).expect("encode");
        assert_eq!(decode(&bytes, &Type::Dynamic).expect("decode"), v);
        assert!(infer_type(&Value::list([Value::int(1), Value::string("x")])).is_err());
    }

    /// What go-cty reads back (differences `tests/plugin/cty_oracle.rs` found).
    #[test]
    fn encodings_go_cty_reads_back() {
        let wrapped = |json: &str, value: &[u8]| {
            [&[0x92, 0xc4, json.len() as u8][..], json.as_bytes(), value].concat()
        };
        // The elements of a list(dynamic) have one type, a null one too.
        let list = Type::list(Type::Dynamic);
        let v = Value::list([Value::Null, Value::string("a")]);
        let string = wrapped("\"string\"", &[0xa1, b'a']);
        let null = wrapped("\"string\"", &[0xc0]);
        assert_eq!(
            encode(&v, &list).unwrap(),
            [&[0x92][..], &null, &string].concat()
        );
        let v = Value::list([Value::list([]), Value::list([Value::string("a")])]);
        let empty = wrapped(r#"["list","string"]"#, &[0x90]);
        let one = wrapped(r#"["list","string"]"#, &[0x91, 0xa1, b'a']);
        assert_eq!(
            encode(&v, &list).unwrap(),
            [&[0x92][..], &empty, &one].concat()
        );
        assert_eq!(decode(&encode(&v, &list).unwrap(), &list).unwrap(), v);
        // A null element of a list(object({b=dynamic})) beside one whose b is a string: go-cty panics on it.
        let objects = Type::list(Type::object([("b", Type::Dynamic)]));
        let v = Value::list([Value::Null, Value::object([("b", Value::string("x"))])]);
        let e = encode(&v, &objects).expect_err("refused");
        assert!(e.message.contains("different types"), "{}", e.message);
        let v = Value::list([Value::Null, Value::object([("b", Value::Null)])]);
        assert!(encode(&v, &objects).is_ok());
        // A prefix is cut at 256 bytes, on a character boundary; no upper length bound is i64::MAX and up.
        let long = Value::refined(Refinements {
            string_prefix: Some("é".repeat(200)),
            ..Refinements::default()
        });
        let back = decode(&encode(&long, &Type::String).unwrap(), &Type::String).unwrap();
        let prefix = back.refinements().and_then(|r| r.string_prefix.clone());
        assert_eq!(prefix, Some("é".repeat(128)));
        let unbounded = Value::refined(Refinements {
            length_upper: Some(u64::MAX),
            ..Refinements::default()
        });
        let strings = Type::list(Type::String);
        assert_eq!(encode(&unbounded, &strings).unwrap(), [0xd4, 0, 0]);
        // Refinements that leave no value are refused (cty panics on them).
        let crossed = Value::refined(Refinements {
            number_lower: Some((Number::Int(5), true)),
            number_upper: Some((Number::Big("4.5".into()), true)),
            ..Refinements::default()
        });
        assert!(encode(&crossed, &Type::Number).is_err());
    }

    #[test]
    fn refinements_must_fit_the_type() {
        // ext 12, payload {5: 5}: a length refinement on a bool (found by fuzzing).
        let bool_with_length = [0xc7, 3, 12, 0x81, 5, 5];
        assert!(decode(&bool_with_length, &Type::Bool).is_err());
        let list = Type::list(Type::String);
        let r = decode(&bool_with_length, &list).expect("fits a list");
        assert_eq!(r.refinements().and_then(|r| r.length_lower), Some(5));
        // A zero lower bound and an empty prefix carry no information.
        assert_eq!(
            decode(&[0xc7, 3, 12, 0x81, 5, 0], &list).expect("dec"),
            Value::unknown()
        );
        assert_eq!(
            decode(&[0xc7, 3, 12, 0x81, 2, 0xa0], &Type::String).expect("dec"),
            Value::unknown()
        );
    }

    #[test]
    fn skipped_attributes_are_null_and_only_at_the_top() {
        let ty = Type::object([
            ("big", Type::map(Type::object([("big", Type::String)]))),
            ("name", Type::String),
        ]);
        let inner = Value::object([("big", Value::string("kept"))]);
        let v = Value::object([
            ("big", Value::Map([("k".to_string(), inner.clone())].into())),
            ("name", Value::string("n")),
        ]);
        let bytes = encode(&v, &ty).unwrap();
        let (got, spans) = decode_unread(&bytes, &ty, &["big"]).unwrap();
        assert_eq!(
            spans.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
            ["big"]
        );
        assert!(got.get_attr("big").is_null());
        assert_eq!(got.get_attr("name"), &Value::string("n"));
        // A nested attribute of the same name is decoded.
        let nested = Type::object([("outer", ty.clone())]);
        let wrapped = Value::object([("outer", v.clone())]);
        let (got, spans) =
            decode_unread(&encode(&wrapped, &nested).unwrap(), &nested, &["big"]).unwrap();
        assert!(spans.is_empty());
        assert_eq!(got, wrapped);
        // Skipped bytes must still be well-formed msgpack.
        let mut truncated = bytes.clone();
        truncated.truncate(bytes.len() - 4);
        assert!(decode_unread(&truncated, &ty, &["big"]).is_err());
        assert_eq!(decode_unread(&bytes, &ty, &[]).unwrap(), (v, Vec::new()));
    }
}
