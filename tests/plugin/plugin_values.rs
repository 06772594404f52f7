//! Property tests of the msgpack `DynamicValue` codec: random values of random types round-trip, arbitrary or
//! truncated input never panics, and a decode error's attribute path leads through the type, outermost step first.

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use tfsveltos::tfplugin::path::PathStep;
use tfsveltos::tfplugin::value::msgpack;
use tfsveltos::tfplugin::{Number, Refinements, Type, Value};

fn leaf_type() -> impl Strategy<Value = Type> {
    prop_oneof![
        Just(Type::String),
        Just(Type::Number),
        Just(Type::Bool),
        Just(Type::Dynamic)
    ]
}

fn arb_type() -> impl Strategy<Value = Type> {
    leaf_type().prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            inner.clone().prop_map(Type::list),
            inner.clone().prop_map(Type::set),
            inner.clone().prop_map(Type::map),
            prop::collection::btree_map("[a-z_]{1,6}", inner.clone(), 0..4).prop_map(Type::object),
            prop::collection::vec(inner, 0..4).prop_map(Type::Tuple),
        ]
    })
}

/// Types a `dynamic` value can have (no `dynamic` inside).
fn concrete_type() -> impl Strategy<Value = Type> {
    prop_oneof![Just(Type::String), Just(Type::Number), Just(Type::Bool)].prop_recursive(
        3,
        16,
        3,
        |inner| {
            prop_oneof![
                inner.clone().prop_map(Type::list),
                inner.clone().prop_map(Type::set),
                inner.clone().prop_map(Type::map),
                prop::collection::btree_map("[a-z]{1,5}", inner.clone(), 0..3)
                    .prop_map(Type::object),
                prop::collection::vec(inner, 0..3).prop_map(Type::Tuple),
            ]
        },
    )
}

fn arb_number() -> impl Strategy<Value = Number> {
    prop_oneof![
        any::<i64>().prop_map(Number::Int),
        any::<f64>()
            .prop_filter("finite, non-integral", |x| x.is_finite()
                && x.fract() != 0.0)
            .prop_map(Number::Float),
        // Beyond i64 / exact f64: kept as decimal text.
        "[1-9][0-9]{19,30}".prop_map(Number::Big),
        "-?[0-9]{1,5}\\.[0-9]{20,25}1".prop_map(Number::Big),
    ]
}

fn refinements(ty: &Type) -> BoxedStrategy<Refinements> {
    let not_null = any::<bool>();
    match ty {
        Type::Dynamic => Just(Refinements::default()).boxed(),
        Type::String => (not_null, prop::option::of("[a-z]{1,4}"))
            .prop_map(|(not_null, string_prefix)| Refinements {
                not_null,
                string_prefix,
                ..Default::default()
            })
            .boxed(),
        Type::Number => (
            not_null,
            prop::option::of((
                any::<i32>().prop_map(|i| Number::Int(i.into())),
                any::<bool>(),
            )),
            prop::option::of((
                any::<i32>().prop_map(|i| Number::Int(i.into())),
                any::<bool>(),
            )),
        )
            .prop_map(|(not_null, mut number_lower, mut number_upper)| {
                // Consistent (cty refuses a lower bound above the upper one) and never one value (which a
                // not-null unknown would be).
                if let (Some(lo), Some(hi)) = (&mut number_lower, &mut number_upper) {
                    if lo.0.as_i64() > hi.0.as_i64() {
                        std::mem::swap(lo, hi);
                    }
                    if lo.0 == hi.0 {
                        (lo.1, hi.1) = (false, false);
                    }
                }
                Refinements {
                    not_null,
                    number_lower,
                    number_upper,
                    ..Default::default()
                }
            })
            .boxed(),
        Type::List(_) | Type::Set(_) | Type::Map(_) => (
            not_null,
            prop::option::of(1u64..100),
            prop::option::of(1u64..100),
        )
            .prop_map(|(not_null, mut length_lower, mut length_upper)| {
                // Consistent, and never one length (a not-null unknown with one would be known).
                if let (Some(lo), Some(hi)) = (&mut length_lower, &mut length_upper)
                    && *lo >= *hi
                {
                    (*lo, *hi) = ((*hi).max(1), *lo + 1);
                }
                Refinements {
                    not_null,
                    length_lower,
                    length_upper,
                    ..Default::default()
                }
            })
            .boxed(),
        _ => not_null
            .prop_map(|not_null| Refinements {
                not_null,
                ..Default::default()
            })
            .boxed(),
    }
}

/// A value of `ty`, possibly null or unknown at any level.
fn value_for(ty: &Type) -> BoxedStrategy<Value> {
    let special = prop_oneof![Just(Value::Null), refinements(ty).prop_map(Value::refined)];
    prop_oneof![1 => special, 4 => known_for(ty, true)].boxed()
}

/// A known, non-null value of `ty`; when `partial`, its elements may be null or unknown.
fn known_for(ty: &Type, partial: bool) -> BoxedStrategy<Value> {
    let elem = |t: &Type| {
        if partial {
            value_for(t)
        } else {
            known_for(t, false)
        }
    };
    match ty {
        Type::String => any::<String>().prop_map(Value::String).boxed(),
        Type::Number => arb_number().prop_map(Value::Number).boxed(),
        Type::Bool => any::<bool>().prop_map(Value::Bool).boxed(),
        Type::Dynamic => concrete_type()
            .prop_flat_map(|t| known_for(&t, false))
            .boxed(),
        Type::List(t) => prop::collection::vec(elem(t), 0..4)
            .prop_map(Value::List)
            .boxed(),
        Type::Set(t) => prop::collection::vec(elem(t), 0..4)
            .prop_map(Value::Set)
            .boxed(),
        Type::Map(t) => prop::collection::btree_map(".{0,6}", elem(t), 0..4)
            .prop_map(|m| Value::Map(m.into_iter().collect()))
            .boxed(),
        Type::Object { attributes, .. } => {
            let parts: Vec<BoxedStrategy<(String, Value)>> = attributes
                .iter()
                .map(|(k, t)| {
                    let k = k.clone();
                    elem(t).prop_map(move |v| (k.clone(), v)).boxed()
                })
                .collect();
            parts
                .prop_map(|kv| Value::Object(kv.into_iter().collect()))
                .boxed()
        }
        Type::Tuple(ts) => {
            let parts: Vec<BoxedStrategy<Value>> = ts.iter().map(elem).collect();
            parts.prop_map(Value::Tuple).boxed()
        }
    }
}

/// Whether `steps` (outermost first) is a path into a value of `ty`. Set elements have no step of their own, and
/// the last step may name an attribute the object does not have (the error is that attribute).
fn path_fits(ty: &Type, steps: &[PathStep]) -> bool {
    let Some((first, rest)) = steps.split_first() else {
        return true;
    };
    match (ty, first) {
        // The type of a dynamic value's contents is in the input.
        (Type::Dynamic, _) => true,
        (Type::Set(t), _) => path_fits(t, steps),
        (Type::List(t), PathStep::KeyInt(i)) => *i >= 0 && path_fits(t, rest),
        (Type::Tuple(ts), PathStep::KeyInt(i)) => usize::try_from(*i)
            .ok()
            .and_then(|i| ts.get(i))
            .is_some_and(|t| path_fits(t, rest)),
        (Type::Map(t), PathStep::KeyString(_)) => path_fits(t, rest),
        (Type::Object { attributes, .. }, PathStep::Attribute(a)) => match attributes.get(a) {
            Some(t) => path_fits(t, rest),
            None => rest.is_empty(),
        },
        _ => false,
    }
}

fn typed_value() -> impl Strategy<Value = (Type, Value)> {
    arb_type().prop_flat_map(|t| {
        let v = value_for(&t);
        (Just(t), v)
    })
}

/// The encoding of `value`, or a rejection of the case when it is not a value cty can hold: collection elements whose
/// `dynamic` parts have different types (the generator does not keep them alike), which the encoder refuses
/// (`tests/plugin/cty_oracle.rs` covers them).
fn encoded(value: &Value, ty: &Type) -> Result<Vec<u8>, TestCaseError> {
    match msgpack::encode(value, ty) {
        Ok(bytes) => Ok(bytes),
        Err(e)
            if e.message
                .contains("collection elements have different types")
                || e.message
                    .contains("would be of different types for Terraform") =>
        {
            Err(TestCaseError::reject(e.message))
        }
        Err(e) => Err(TestCaseError::fail(e.to_string())),
    }
}

proptest! {
    // Failures are kept beside this file, in `plugin_values.proptest-regressions` (commit it). proptest's default
    // (`SourceParallel`) would look for the crate root's `main.rs` above this file, find `tests/plugin/main.rs`,
    // and use `tests/proptest-regressions/plugin_values.txt` instead.
    #![proptest_config(ProptestConfig {
        cases: 2000,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn msgpack_round_trip((ty, value) in typed_value()) {
        let bytes = encoded(&value, &ty)?;
        let back = msgpack::decode(&bytes, &ty).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(back, value);
    }

    #[test]
    fn type_json_round_trip(ty in arb_type()) {
        prop_assert_eq!(Type::from_json_bytes(&ty.to_json_bytes()), Ok(ty));
    }

    #[test]
    fn truncated_input_is_an_error_not_a_panic((ty, value) in typed_value(), cut in any::<prop::sample::Index>()) {
        let bytes = encoded(&value, &ty)?;
        let n = cut.index(bytes.len());
        prop_assert!(msgpack::decode(&bytes[..n], &ty).is_err());
    }

    #[test]
    fn error_paths_lead_through_the_type(
        (ty, value) in typed_value(),
        at in any::<prop::sample::Index>(),
        byte in any::<u8>(),
        cut in any::<bool>(),
    ) {
        let mut bytes = encoded(&value, &ty)?;
        let i = at.index(bytes.len());
        if cut {
            bytes.truncate(i);
        } else {
            bytes[i] = byte;
        }
        if let Err(e) = msgpack::decode(&bytes, &ty) {
            prop_assert!(path_fits(&ty, e.path.steps()), "{} does not fit {}", e.path, ty);
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(ty in arb_type(), bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = msgpack::decode(&bytes, &ty);
        let _ = tfsveltos::tfplugin::value::json::decode(&bytes, &ty);
    }
}
