//! Nothing secret in `Debug` output: every plugin-layer type that can carry a configuration value, a state, private
//! bytes or a key is formatted with `{:?}` and `{:#?}` while holding a canary, which must not appear.

use std::time::SystemTime;
use tfsveltos::tfplugin::tls::generate_server_identity;
use tfsveltos::tfplugin::{
    ApplyRequest, ApplyResponse, Attribute, AttributeBytes, ClientCapabilities,
    CloseEphemeralRequest, ConfigureRequest, DataReadRequest, DataReadResponse, EncodedAttribute,
    ImportResponse, ImportedResource, OpenEphemeralRequest, OpenEphemeralResponse, PlanRequest,
    PlanResponse, ReadRequest, ReadResponse, Refinements, RenewEphemeralRequest,
    RenewEphemeralResponse, Schema, UnreadDigests, UpgradeRequest, UpgradeResponse, Value,
};

const CANARY: &str = "CANARY-s3cr3t";

/// A value holding the canary at every depth and in every kind of container.
fn secret_value() -> Value {
    Value::object([
        ("token", Value::string(CANARY)),
        ("list", Value::List(vec![Value::string(CANARY)])),
        ("set", Value::Set(vec![Value::string(CANARY)])),
        ("tuple", Value::Tuple(vec![Value::string(CANARY)])),
        (
            "map",
            Value::Map([("k".to_owned(), Value::string(CANARY))].into()),
        ),
        (
            "pending",
            Value::refined(Refinements {
                string_prefix: Some(CANARY.to_owned()),
                ..Default::default()
            }),
        ),
    ])
}

fn bytes() -> Vec<u8> {
    CANARY.as_bytes().to_vec()
}

/// The canary encoded as an attribute's value, as a resource answers an attribute as bytes.
fn encoded() -> EncodedAttribute {
    let schema = Schema::new(0).attribute(Attribute::string("a").computed());
    schema
        .encode_attribute("a", &Value::string(CANARY))
        .unwrap()
}

fn assert_redacted(what: &str, shown: String) {
    assert!(!shown.contains(CANARY), "{what} leaks the canary: {shown}");
    assert!(
        !shown.contains(&format!("{:?}", CANARY.as_bytes())[1..20]),
        "{what} leaks the canary's bytes: {shown}"
    );
}

macro_rules! check {
    ($($e:expr),* $(,)?) => {
        $(
            let v = $e;
            assert_redacted(stringify!($e), format!("{v:?} {v:#?}"));
        )*
    };
}

#[test]
fn debug_output_never_shows_secrets() {
    let v = secret_value;
    let client = ClientCapabilities::default();
    check!(
        v(),
        ConfigureRequest {
            config: v(),
            terraform_version: "1.0.3".into(),
            client,
        },
        PlanRequest {
            type_name: "t".into(),
            prior_state: v(),
            proposed_new_state: v(),
            config: v(),
            prior_private: bytes(),
            provider_meta: v(),
            client,
            prior_unread: UnreadDigests::default(),
        },
        PlanResponse {
            planned_state: v(),
            planned_private: bytes(),
            attribute_bytes: vec![("a", AttributeBytes::Encoded(encoded()))],
            ..Default::default()
        },
        ApplyRequest {
            type_name: "t".into(),
            prior_state: v(),
            planned_state: v(),
            config: v(),
            planned_private: bytes(),
            provider_meta: v(),
        },
        ApplyResponse {
            new_state: v(),
            private: bytes(),
            attribute_bytes: vec![("a", AttributeBytes::Encoded(encoded()))],
            ..Default::default()
        },
        ReadRequest {
            type_name: "t".into(),
            current_state: v(),
            private: bytes(),
            provider_meta: v(),
            client,
            unread: UnreadDigests::default(),
        },
        ReadResponse {
            new_state: v(),
            private: bytes(),
            attribute_bytes: vec![("a", AttributeBytes::Encoded(encoded()))],
            ..Default::default()
        },
        ImportResponse {
            imported: vec![ImportedResource {
                type_name: "t".into(),
                state: v(),
                private: bytes(),
            }],
            ..Default::default()
        },
        UpgradeRequest {
            type_name: "t".into(),
            version: 1,
            raw_state_json: bytes(),
        },
        UpgradeResponse {
            upgraded_state: v(),
            ..Default::default()
        },
        DataReadRequest {
            type_name: "t".into(),
            config: v(),
            provider_meta: v(),
            client,
        },
        DataReadResponse {
            state: v(),
            ..Default::default()
        },
        OpenEphemeralRequest {
            type_name: "t".into(),
            config: v(),
            client,
        },
        OpenEphemeralResponse {
            result: v(),
            private: bytes(),
            renew_at: Some(SystemTime::now()),
            ..Default::default()
        },
        RenewEphemeralRequest {
            type_name: "t".into(),
            private: bytes(),
        },
        RenewEphemeralResponse {
            private: Some(bytes()),
            ..Default::default()
        },
        CloseEphemeralRequest {
            type_name: "t".into(),
            private: bytes(),
        },
    );
}

#[test]
fn redacted_debug_keeps_structure_and_reveal_shows_all() {
    let v = secret_value();
    let shown = format!("{v:?}");
    assert!(
        shown.contains("\"token\"") && shown.contains("redacted, 13 bytes"),
        "{shown}"
    );
    let revealed = format!("{:?}", v.reveal());
    assert!(revealed.contains(CANARY), "{revealed}");
    let req = PlanRequest {
        prior_private: bytes(),
        ..Default::default()
    };
    assert!(format!("{req:?}").contains("prior_private: <redacted, 13 bytes>"));
}

#[test]
fn server_identity_debug_hides_the_key() {
    let id = generate_server_identity().expect("identity");
    let shown = format!("{id:?} {id:#?}");
    let key = id.key.secret_der();
    assert!(shown.contains("<redacted>"), "{shown}");
    assert!(!shown.contains(&format!("{:?}", &key[..8])[1..]), "{shown}");
}
