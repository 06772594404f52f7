use super::*;

#[test]
fn implied_type_and_computed_marking() {
    let s = Schema::new(0)
        .attribute(Attribute::string("name").required())
        .attribute(Attribute::string("id").computed())
        .attribute(Attribute::nested(
            "items",
            Nesting::List,
            [Attribute::string("x").optional().computed()],
        ))
        .block(NestedBlock::list(
            "b",
            Block::new().attribute(Attribute::number("n").computed()),
        ));
    let Type::Object { attributes, .. } = s.value_type() else {
        panic!("object expected")
    };
    assert_eq!(attributes.len(), 4);
    assert!(matches!(attributes.get("items"), Some(Type::List(_))));
    let proposed = Value::object([
        ("name", Value::string("a")),
        ("id", Value::Null),
        ("items", Value::list([Value::object([("x", Value::Null)])])),
        ("b", Value::list([Value::object([("n", Value::int(1))])])),
    ]);
    let planned = s.mark_computed_unknown(&proposed);
    assert!(!planned.get_attr("id").is_known());
    assert!(
        !planned
            .get_attr("items")
            .get_index(0)
            .get_attr("x")
            .is_known()
    );
    assert_eq!(
        planned.get_attr("b").get_index(0).get_attr("n").as_i64(),
        Some(1)
    );
}

/// A schema with write-only attributes at the top, in a nested single block, in a list block, in a map of
/// nested attributes and in a set block.
fn write_only_schema() -> Schema {
    let inner = || {
        Block::new()
            .attribute(Attribute::string("secret_wo").optional().write_only())
            .attribute(Attribute::string("plain").optional())
    };
    Schema::new(0)
        .attribute(
            Attribute::string("password_wo")
                .optional()
                .sensitive()
                .write_only(),
        )
        .attribute(Attribute::string("name").required())
        .attribute(Attribute::map("big", Type::String).computed())
        .attribute(
            Attribute::nested(
                "endpoints",
                Nesting::Map,
                [
                    Attribute::string("url").optional(),
                    Attribute::string("key_wo").optional().write_only(),
                ],
            )
            .optional(),
        )
        .block(NestedBlock::single(
            "conn",
            inner().block(NestedBlock::single(
                "exec",
                Block::new().attribute(
                    Attribute::map("env_wo", Type::String)
                        .optional()
                        .write_only(),
                ),
            )),
        ))
        .block(NestedBlock::list("rule", inner()))
        .block(NestedBlock::set("tag", inner()))
        .block(NestedBlock::list(
            "other",
            Block::new().attribute(Attribute::string("x").optional()),
        ))
}

fn write_only_value() -> Value {
    let inner = |s: &str| {
        Value::object([
            ("secret_wo", Value::string(s)),
            ("plain", Value::string("p")),
        ])
    };
    Value::object([
        ("password_wo", Value::string("canary-1")),
        ("name", Value::string("n")),
        ("big", Value::string_map([("a", "1")])),
        (
            "endpoints",
            Value::map([(
                "e1",
                Value::object([("url", Value::string("u")), ("key_wo", Value::unknown())]),
            )]),
        ),
        (
            "conn",
            Value::object([
                ("secret_wo", Value::string("canary-2")),
                ("plain", Value::string("p")),
                (
                    "exec",
                    Value::object([("env_wo", Value::string_map([("K", "canary-3")]))]),
                ),
            ]),
        ),
        (
            "rule",
            Value::list([
                inner("canary-4"),
                Value::object([("secret_wo", Value::Null)]),
            ]),
        ),
        ("tag", Value::set([inner("canary-5")])),
        (
            "other",
            Value::list([Value::object([("x", Value::string("kept"))])]),
        ),
    ])
}

#[test]
fn write_only_values_are_nulled_wherever_they_are_nested() {
    let s = write_only_schema();
    assert!(s.has_write_only());
    assert!(
        !Schema::new(0)
            .attribute(Attribute::string("a").optional())
            .has_write_only()
    );
    let mut v = write_only_value();
    let set: Vec<String> = s
        .block
        .write_only_set(&v)
        .iter()
        .map(ToString::to_string)
        .collect();
    let mut nulled: Vec<String> = s
        .block
        .null_write_only(&mut v)
        .iter()
        .map(ToString::to_string)
        .collect();
    nulled.sort();
    assert_eq!(
        nulled,
        [
            r#"conn.exec.env_wo"#,
            r#"conn.secret_wo"#,
            r#"endpoints["e1"].key_wo"#,
            r#"password_wo"#,
            r#"rule[0].secret_wo"#,
            r#"tag.secret_wo"#,
        ]
    );
    let mut sorted = set.clone();
    sorted.sort();
    assert_eq!(
        sorted, nulled,
        "write_only_set finds what null_write_only nulls"
    );
    assert!(
        !format!("{:?}", v.reveal()).contains("canary"),
        "a write-only value is left: {:?}",
        v.reveal()
    );
    // Everything else is as it was.
    let mut expected = write_only_value();
    expected.set_attr("password_wo", Value::Null);
    assert_eq!(v.get_attr("name"), expected.get_attr("name"));
    assert_eq!(v.get_attr("big"), expected.get_attr("big"));
    assert_eq!(v.get_attr("other"), expected.get_attr("other"));
    assert_eq!(v.get_attr("conn").get_attr("plain"), &Value::string("p"));
    assert_eq!(
        v.get_attr("endpoints").get_attr("e1").get_attr("url"),
        &Value::string("u")
    );
    // Nulling again finds nothing; a value with nothing set is left alone.
    assert!(s.block.null_write_only(&mut v).is_empty());
    let mut null = Value::Null;
    assert!(s.block.null_write_only(&mut null).is_empty());
    let mut unknown_block = Value::object([("conn", Value::unknown())]);
    assert!(s.block.null_write_only(&mut unknown_block).is_empty());
}

#[test]
fn write_only_schema_problems() {
    let s = write_only_schema();
    assert!(s.block.write_only_problems(true, "resource r").is_empty());
    let refused = s.block.write_only_problems(false, "data source d");
    assert_eq!(refused.len(), 6, "{refused:?}");
    assert!(
        refused[0].starts_with("data source d: attribute password_wo is write-only"),
        "{refused:?}"
    );
    let bad = Block::new()
        .attribute(Attribute::string("a").optional().computed().write_only())
        .attribute(Attribute::string("b").computed().write_only())
        .block(NestedBlock::single(
            "n",
            Block::new().attribute(Attribute::string("c").write_only()),
        ));
    let problems = bad.write_only_problems(true, "resource r");
    assert_eq!(problems.len(), 3, "{problems:?}");
    assert!(
        problems[2].contains("n.c is write-only but neither optional nor required"),
        "{problems:?}"
    );
}
