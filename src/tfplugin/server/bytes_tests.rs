//! Attributes answered as bytes (`Cached::encode_state_with`): spliced where the resource gives them, refused where
//! they would bypass the nulling of write-only values or name bytes the request did not carry.

use super::Cached;
use super::rpc::unread_digests;
use crate::tfplugin::diag::Diagnostics;
use crate::tfplugin::pb::tfplugin6 as pb;
use crate::tfplugin::provider::AttributeBytes;
use crate::tfplugin::schema::{Attribute, Block, NestedBlock, Schema};
use crate::tfplugin::value::{Type, Value, msgpack};

fn schema() -> Schema {
    Schema::new(0)
        .attribute(Attribute::string("name").required())
        .attribute(Attribute::map("big", Type::String).computed())
        .attribute(Attribute::string("password_wo").optional().write_only())
        .block(NestedBlock::single(
            "conn",
            Block::new().attribute(Attribute::string("key").optional()),
        ))
}

fn big(n: usize) -> Value {
    Value::Map(
        (0..n)
            .map(|i| (format!("k{i}"), Value::string(format!("v{i}"))))
            .collect(),
    )
}

fn state(name: &str, big: Value) -> Value {
    Value::object([
        ("name", Value::string(name)),
        ("big", big),
        ("password_wo", Value::Null),
        ("conn", Value::Null),
    ])
}

fn dv(v: &Value, ty: &Type) -> pb::DynamicValue {
    pb::DynamicValue {
        msgpack: msgpack::encode(v, ty).unwrap(),
        json: Vec::new(),
    }
}

/// The layer's schema, a request holding `big` with `n` entries, and that request read with `big` left undecoded.
fn received(n: usize) -> (Cached, pb::DynamicValue, Value, Vec<msgpack::Span>) {
    let cached = Cached::new(schema());
    let request = dv(&state("a", big(n)), &cached.ty);
    let decoded = cached.decode_unread(Some(&request), "state", &["big"]);
    let (read, unread) = decoded.ok().expect("decoded");
    (cached, request, read, unread)
}

#[test]
fn received_and_encoded_bytes_are_spliced_in() {
    let (cached, request, read, unread) = received(50);
    assert!(read.get_attr("big").is_null());
    // The digest a resource is given is that of the bytes where the attribute lies.
    let digests = unread_digests(Some(&request), &unread);
    let big_bytes = msgpack::encode(&big(50), &Type::map(Type::String)).unwrap();
    let sha = {
        use sha2::Digest;
        hex::encode(sha2::Sha256::digest(&big_bytes))
    };
    assert_eq!(digests.sha256("big"), Some(sha.as_str()));
    let mut diags = Diagnostics::new();
    // As received, another name: the request's bytes for `big`, whatever the value held there.
    let answer = state("b", Value::string_map([("ignored", "x")]));
    let bytes = [("big", AttributeBytes::Received)];
    let out = cached
        .encode_state_with(
            answer,
            &bytes,
            (Some(&request), &unread),
            "state",
            &mut diags,
        )
        .expect("encoded");
    assert!(!diags.has_errors());
    assert_eq!(out.msgpack, dv(&state("b", big(50)), &cached.ty).msgpack);
    // Encoded by the resource.
    let encoded = schema().encode_attribute("big", &big(3)).unwrap();
    let bytes = [("big", AttributeBytes::Encoded(encoded))];
    let out = cached
        .encode_state_with(
            state("b", Value::Null),
            &bytes,
            (None, &[]),
            "state",
            &mut diags,
        )
        .expect("encoded");
    assert_eq!(out.msgpack, dv(&state("b", big(3)), &cached.ty).msgpack);
    // A null state (the object is gone) ignores them.
    let out = cached.encode_state_with(Value::Null, &bytes, (None, &[]), "state", &mut diags);
    assert_eq!(out.map(|d| d.msgpack), Some(vec![0xc0]));
    assert!(!diags.has_errors());
}

/// What is refused, the bytes given, and the request they come with.
type Case<'a> = (
    &'static str,
    (&'static str, AttributeBytes),
    Option<&'a pb::DynamicValue>,
    &'a [msgpack::Span],
);

#[test]
fn bytes_that_bypass_write_only_or_were_not_received_are_refused() {
    let (cached, request, _, unread) = received(2);
    let json = pb::DynamicValue {
        msgpack: Vec::new(),
        json: br#"{"name":"a","big":{"k":"v"},"password_wo":null,"conn":null}"#.to_vec(),
    };
    let (_, json_unread) = cached
        .decode_unread(Some(&json), "state", &["big"])
        .ok()
        .unwrap();
    assert!(json_unread.is_empty(), "a JSON value is decoded whole");
    let encoded = |name: &str| schema().encode_attribute(name, &Value::string("x"));
    let cases: Vec<Case<'_>> = vec![
        (
            "a block",
            ("conn", AttributeBytes::Received),
            Some(&request),
            &unread,
        ),
        (
            "a write-only attribute",
            (
                "password_wo",
                AttributeBytes::Encoded(encoded("password_wo").unwrap()),
            ),
            None,
            &[],
        ),
        ("not carried", ("big", AttributeBytes::Received), None, &[]),
        (
            "carried as JSON",
            ("big", AttributeBytes::Received),
            Some(&json),
            &json_unread,
        ),
        (
            "another attribute's bytes",
            ("big", AttributeBytes::Encoded(encoded("name").unwrap())),
            None,
            &[],
        ),
    ];
    for (what, given, dv, unread) in cases {
        let mut diags = Diagnostics::new();
        let out = cached.encode_state_with(
            state("b", Value::Null),
            &[given],
            (dv, unread),
            "state",
            &mut diags,
        );
        assert!(out.is_none(), "{what}");
        let summaries: Vec<&str> = diags.iter().map(|d| d.summary.as_str()).collect();
        assert_eq!(summaries, ["Provider produced an invalid state"], "{what}");
    }
    // Not an attribute of the schema at all.
    assert!(schema().encode_attribute("nope", &Value::Null).is_err());
}
