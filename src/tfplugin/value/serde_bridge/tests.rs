use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::*;
use crate::tfplugin::Number;
use crate::tfplugin::schema::{Attribute, Block, NestedBlock, Nesting};

#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
struct Inner {
    #[serde(default)]
    name: String,
    count: Option<i64>,
    secret: Option<Sensitive<String>>,
}

#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
struct Config {
    #[serde(default)]
    name: String,
    flag: Option<bool>,
    limit: Option<u32>,
    items: Option<Vec<String>>,
    labels: Option<BTreeMap<String, String>>,
    inner: Option<Inner>,
    entries: Option<BTreeMap<String, Inner>>,
}

fn value() -> Value {
    Value::object([
        ("name", Value::string("a")),
        ("flag", Value::bool(true)),
        ("limit", Value::int(3)),
        ("items", Value::string_list(["x", "y"])),
        ("labels", Value::string_map([("k", "v")])),
        (
            "inner",
            Value::object([
                ("name", Value::string("i")),
                ("count", Value::Number(Number::Float(2.0))),
                ("secret", Value::string("canary")),
            ]),
        ),
        (
            "entries",
            Value::map([(
                "e1",
                Value::object([("name", Value::string("e")), ("count", Value::Null)]),
            )]),
        ),
    ])
}

#[test]
fn reads_a_whole_value_and_writes_it_back() {
    let c: Config = from_value(&value()).unwrap();
    assert_eq!(c.name, "a");
    assert_eq!(c.limit, Some(3));
    assert_eq!(
        c.items.as_deref(),
        Some(&["x".to_string(), "y".to_string()][..])
    );
    let inner = c.inner.as_ref().unwrap();
    assert_eq!(inner.count, Some(2), "a whole float is a whole number");
    assert_eq!(
        inner.secret.as_ref().map(|s| s.expose().as_str()),
        Some("canary")
    );
    assert_eq!(c.entries.as_ref().unwrap()["e1"].count, None);
    let back = to_value(&c).unwrap();
    assert_eq!(from_value::<Config>(&back).unwrap(), c);
    assert_eq!(
        back.get_attr("inner").get_attr("secret").as_str(),
        Some("canary")
    );
    assert!(
        back.get_attr("entries")
            .get_attr("e1")
            .get_attr("count")
            .is_null()
    );
    assert!(matches!(back.get_attr("labels"), Value::Map(_)));
    assert!(matches!(back.get_attr("inner"), Value::Object(_)));
}

#[test]
fn null_is_absent() {
    let c: Config = from_value(&Value::object([("inner", Value::Null)])).unwrap();
    assert_eq!(c, Config::default());
    let missing = from_value::<Inner>(&Value::Null).unwrap_err();
    assert_eq!(missing.path(), &AttributePath::root());
}

#[test]
fn unknown_values_are_errors_or_read_as_absent_with_their_paths() {
    let mut v = value();
    v.get_attr_mut("inner")
        .unwrap()
        .set_attr("count", Value::unknown());
    v.set_attr("items", Value::list([Value::string("x"), Value::unknown()]));
    let err = from_value::<Config>(&v).unwrap_err();
    assert!(matches!(err, FromValueError::Unknown(_)), "{err}");
    assert_eq!(err.path().to_string(), "inner.count");
    assert_eq!(err.to_diagnostic().attribute, Some(err.path().clone()));

    let p = from_value_partial::<Config>(&v).unwrap();
    let paths: Vec<String> = p.unknown.iter().map(ToString::to_string).collect();
    assert_eq!(paths, ["items", "inner.count"]);
    assert_eq!(p.value.inner.unwrap().count, None);
    assert_eq!(
        p.value.items, None,
        "a list holding an unknown value is unknown as a whole"
    );
    assert_eq!(p.value.labels.unwrap()["k"], "v");
    let whole =
        from_value_partial::<Config>(&Value::object([("inner", Value::unknown())])).unwrap();
    assert!(whole.is_unknown_at(&AttributePath::attr("inner").then_attr("count")));
    assert!(!whole.is_unknown_at(&AttributePath::attr("name")));
}

#[test]
fn fractional_numbers_for_integers_are_errors_at_their_path() {
    for (n, path) in [
        (Value::float(1.5), "entries[\"e1\"].count"),
        (
            Value::Number(Number::Big("1.25".into())),
            "entries[\"e1\"].count",
        ),
    ] {
        let v = Value::object([(
            "entries",
            Value::map([("e1", Value::object([("count", n)]))]),
        )]);
        let err = from_value::<Config>(&v).unwrap_err();
        assert_eq!(err.path().to_string(), path);
        let d = err.to_diagnostic();
        assert_eq!(d.summary, "Invalid configuration value");
        assert!(d.detail.contains("whole number"), "{}", d.detail);
    }
    let too_big = Value::object([("limit", Value::int(1 << 40))]);
    assert_eq!(
        from_value::<Config>(&too_big)
            .unwrap_err()
            .path()
            .to_string(),
        "limit"
    );
    let big = Value::object([("limit", Value::Number(Number::Big("7".into())))]);
    assert_eq!(from_value::<Config>(&big).unwrap().limit, Some(7));
}

#[test]
fn wrong_kinds_and_missing_fields_name_their_path_but_never_the_value() {
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Required {
        must: String,
    }
    let err = from_value::<Required>(&Value::object([("other", Value::string("x"))])).unwrap_err();
    assert_eq!(err.path().to_string(), "must");
    let v = Value::object([("inner", Value::object([("name", Value::bool(true))]))]);
    let err = from_value::<Config>(&v).unwrap_err();
    assert_eq!(err.path().to_string(), "inner.name");
    let v = Value::object([(
        "items",
        Value::list([Value::string("secret-canary"), Value::int(1)]),
    )]);
    let err = from_value::<Config>(&v).unwrap_err();
    assert_eq!(err.path().to_string(), "items[1]");
    assert!(!err.to_string().contains("secret-canary"));
}

#[test]
fn set_elements_have_the_path_of_the_set() {
    let v = Value::object([("items", Value::set([Value::string("a"), Value::bool(true)]))]);
    assert_eq!(
        from_value::<Config>(&v).unwrap_err().path().to_string(),
        "items"
    );
}

#[test]
fn sensitive_debug_is_redacted() {
    let c: Config = from_value(&value()).unwrap();
    let shown = format!("{c:?}");
    assert!(!shown.contains("canary"), "{shown}");
    assert!(shown.contains("redacted"));
}

#[test]
fn coverage_lists_what_a_type_does_not_read_or_the_schema_lacks() {
    let block = Block::new()
        .attribute(Attribute::string("name").required())
        .attribute(Attribute::bool("flag").optional())
        .attribute(Attribute::string("id").computed())
        .attribute(Attribute::string("extra").optional())
        .attribute(
            Attribute::nested(
                "entries",
                Nesting::Map,
                [
                    Attribute::string("name").optional(),
                    Attribute::number("count").optional(),
                    Attribute::string("secret").optional(),
                ],
            )
            .optional(),
        )
        .block(NestedBlock::single(
            "inner",
            Block::new()
                .attribute(Attribute::string("name").optional())
                .attribute(Attribute::number("count").optional())
                .attribute(Attribute::string("secret").optional().sensitive()),
        ));
    let c = coverage::coverage::<Config>(&block);
    assert_eq!(c.not_read, ["extra"]);
    assert_eq!(c.changed, ["extra"]);
    assert_eq!(c.not_in_schema, ["items", "labels", "limit"]);
}
