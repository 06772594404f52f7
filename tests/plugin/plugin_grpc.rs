//! In-process tests of the plugin server: every implemented RPC is driven through a real tonic client over mutual
//! TLS, with a Terraform-like (ECDSA P-521, CA:true) client certificate and the server certificate pinned from the
//! handshake line.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use support::plugin::*;
use tfsveltos::tfplugin::{self, ListenConfig, RunningServer, Value};

use pb::plugin::Empty;
use pb::plugin::grpc_controller_client::GrpcControllerClient;
use pb::plugin::grpc_stdio_client::GrpcStdioClient;
use pb::tfplugin6 as tf;
use pb::tfplugin6::provider_client::ProviderClient;

type Client = ProviderClient<tonic::transport::Channel>;

struct Fixture {
    server: RunningServer,
    channel: tonic::transport::Channel,
    client: Client,
    seen: std::sync::Arc<Seen>,
}

async fn fixture() -> Fixture {
    let cert = terraform_like_client_cert();
    let (provider, seen) = toy_provider();
    let server = tfplugin::start(
        provider,
        ListenConfig {
            client_cert_pem: Some(cert.pem.clone().into_bytes()),
            honour_shutdown: true,
            ..Default::default()
        },
    )
    .await
    .expect("server starts");
    let hs = parse_handshake(&server.handshake_line());
    assert_eq!(hs.addr, Addr::of(server.addr()));
    let server_cert = hs.cert.expect("AutoMTLS advertises a certificate");
    assert_eq!(Some(&server_cert), server.server_cert());
    let channel = mtls_channel(&hs.addr, server_cert, &cert)
        .await
        .expect("mTLS connect");
    let client = ProviderClient::new(channel.clone()).max_decoding_message_size(64 << 20);
    Fixture {
        server,
        channel,
        client,
        seen,
    }
}

fn caps(deferral_allowed: bool) -> Option<tf::ClientCapabilities> {
    Some(tf::ClientCapabilities {
        deferral_allowed,
        write_only_attributes_allowed: false,
    })
}

#[tokio::test]
async fn metadata_and_schema() {
    let mut f = fixture().await;
    let md = f
        .client
        .get_metadata(tf::get_metadata::Request {})
        .await
        .expect("GetMetadata")
        .into_inner();
    let caps = md.server_capabilities.expect("capabilities");
    assert!(caps.plan_destroy && caps.get_provider_schema_optional && !caps.move_resource_state);
    assert_eq!(
        md.resources
            .iter()
            .map(|r| r.type_name.as_str())
            .collect::<Vec<_>>(),
        ["toy_thing"]
    );
    assert_eq!(
        md.data_sources
            .iter()
            .map(|r| r.type_name.as_str())
            .collect::<Vec<_>>(),
        ["toy_echo"]
    );
    assert!(md.functions.is_empty() && md.diagnostics.is_empty());

    let s = f
        .client
        .get_provider_schema(tf::get_provider_schema::Request {})
        .await
        .expect("schema")
        .into_inner();
    assert!(s.diagnostics.is_empty());
    assert!(s.server_capabilities.is_some_and(|c| c.plan_destroy));
    let provider = s.provider.and_then(|p| p.block).expect("provider block");
    let token = provider
        .attributes
        .iter()
        .find(|a| a.name == "token")
        .expect("token");
    assert!(token.sensitive && token.optional && !token.write_only);
    let thing = s.resource_schemas.get("toy_thing").expect("thing schema");
    assert_eq!(thing.version, 2);
    let block = thing.block.as_ref().expect("block");
    assert_eq!(block.description_kind, tf::StringKind::Markdown as i32);
    let attr = |n: &str| {
        block
            .attributes
            .iter()
            .find(|a| a.name == n)
            .expect("attribute")
    };
    assert_eq!(attr("tags").r#type, br#"["map","string"]"#);
    assert_eq!(attr("extra").r#type, br#""dynamic""#);
    assert!(attr("id").computed && !attr("id").optional);
    assert!(attr("name").required);
    assert!(attr("old").deprecated);
    let eps = attr("endpoints");
    assert!(eps.r#type.is_empty());
    let nested = eps.nested_type.as_ref().expect("nested type");
    assert_eq!(nested.nesting, tf::schema::object::NestingMode::List as i32);
    assert_eq!(nested.attributes.len(), 2);
    let rule = &block.block_types[0];
    assert_eq!((rule.type_name.as_str(), rule.max_items), ("rule", 2));
    assert_eq!(
        rule.nesting,
        tf::schema::nested_block::NestingMode::List as i32
    );
    assert!(s.data_source_schemas.contains_key("toy_echo"));
    assert!(s.functions.is_empty());
    assert_eq!(
        s.ephemeral_resource_schemas.keys().collect::<Vec<_>>(),
        ["toy_token"]
    );

    let ids = f
        .client
        .get_resource_identity_schemas(tf::get_resource_identity_schemas::Request {})
        .await;
    assert!(
        ids.expect("identity schemas")
            .into_inner()
            .identity_schemas
            .is_empty()
    );
    let fns = f
        .client
        .get_functions(tf::get_functions::Request {})
        .await
        .expect("functions")
        .into_inner();
    assert!(fns.functions.is_empty() && fns.diagnostics.is_empty());
}

#[tokio::test]
async fn configure_and_validate() {
    let mut f = fixture().await;
    let pschema = tfsveltos::tfplugin::Schema::new(0)
        .attribute(tfsveltos::tfplugin::Attribute::string("endpoint").optional())
        .attribute(tfsveltos::tfplugin::Attribute::string("token").optional());
    let bad = Value::object([("endpoint", Value::string("")), ("token", Value::Null)]);
    let r = f
        .client
        .validate_provider_config(tf::validate_provider_config::Request {
            config: dv(&bad, &pschema),
        })
        .await
        .expect("validate")
        .into_inner();
    assert_eq!(errors(&r.diagnostics), ["Empty endpoint"]);
    let path = r.diagnostics[0].attribute.as_ref().expect("path");
    assert_eq!(
        path.steps[0].selector,
        Some(tf::attribute_path::step::Selector::AttributeName(
            "endpoint".into()
        ))
    );

    let cfg = Value::object([
        ("endpoint", Value::string("https://x")),
        ("token", Value::unknown()),
    ]);
    let r = f
        .client
        .configure_provider(tf::configure_provider::Request {
            terraform_version: "1.11.0".into(),
            config: dv(&cfg, &pschema),
            client_capabilities: caps(true),
        })
        .await
        .expect("configure")
        .into_inner();
    assert!(r.diagnostics.is_empty());
    let seen = f
        .seen
        .configured
        .lock()
        .expect("lock")
        .clone()
        .expect("configured");
    assert_eq!(seen.terraform_version, "1.11.0");
    assert!(seen.client.deferral_allowed);
    assert_eq!(seen.config.get_attr("endpoint").as_str(), Some("https://x"));
    assert!(!seen.config.get_attr("token").is_known());

    // Garbage instead of msgpack: a diagnostic, not a crash.
    let r = f
        .client
        .configure_provider(tf::configure_provider::Request {
            terraform_version: "1.11.0".into(),
            config: Some(tf::DynamicValue {
                msgpack: vec![0x81, 0xa8],
                json: vec![],
            }),
            client_capabilities: None,
        })
        .await
        .expect("configure")
        .into_inner();
    assert_eq!(
        errors(&r.diagnostics),
        ["Invalid provider configuration received from Terraform"]
    );

    let schema = thing_schema();
    let cfg = Value::object([("name", Value::string("a")), ("size", Value::int(-1))]);
    let r = f
        .client
        .validate_resource_config(tf::validate_resource_config::Request {
            type_name: "toy_thing".into(),
            config: dv(&cfg, &schema),
            client_capabilities: caps(false),
        })
        .await
        .expect("validate resource")
        .into_inner();
    assert_eq!(errors(&r.diagnostics), ["Negative size"]);

    let r = f
        .client
        .validate_data_resource_config(tf::validate_data_resource_config::Request {
            type_name: "toy_echo".into(),
            config: dv(
                &Value::object([("input", Value::string("x"))]),
                &echo_schema(),
            ),
        })
        .await
        .expect("validate data")
        .into_inner();
    assert!(r.diagnostics.is_empty());

    let r = f
        .client
        .validate_resource_config(tf::validate_resource_config::Request {
            type_name: "toy_nope".into(),
            config: None,
            client_capabilities: None,
        })
        .await
        .expect("unknown type is a diagnostic")
        .into_inner();
    assert_eq!(errors(&r.diagnostics), ["Unknown resource type"]);
}

#[tokio::test]
async fn resource_lifecycle() {
    let mut f = fixture().await;
    let schema = thing_schema();
    let config = Value::object([
        ("name", Value::string("a")),
        ("tags", Value::string_map([("k", "v")])),
        ("secret", Value::string("s3cr3t")),
        ("extra", Value::list([Value::int(1), Value::int(2)])),
        (
            "endpoints",
            Value::list([Value::object([
                ("url", Value::string("https://e")),
                ("port", Value::Null),
            ])]),
        ),
        ("rule", Value::list([])),
    ]);
    // create
    let plan = f
        .client
        .plan_resource_change(tf::plan_resource_change::Request {
            type_name: "toy_thing".into(),
            prior_state: dv(&Value::Null, &schema),
            proposed_new_state: dv(&config, &schema),
            config: dv(&config, &schema),
            client_capabilities: caps(true),
            ..Default::default()
        })
        .await
        .expect("plan")
        .into_inner();
    assert!(plan.diagnostics.is_empty(), "{:?}", plan.diagnostics);
    assert!(plan.deferred.is_none());
    assert_eq!(plan.planned_private, b"planned");
    let planned = undv(&plan.planned_state, &schema);
    assert!(!planned.get_attr("id").is_known());
    assert!(
        !planned
            .get_attr("endpoints")
            .get_index(0)
            .get_attr("port")
            .is_known()
    );
    assert_eq!(
        planned.get_attr("extra"),
        &Value::list([Value::int(1), Value::int(2)])
    );

    let applied = f
        .client
        .apply_resource_change(tf::apply_resource_change::Request {
            type_name: "toy_thing".into(),
            prior_state: dv(&Value::Null, &schema),
            planned_state: plan.planned_state.clone(),
            config: dv(&config, &schema),
            planned_private: plan.planned_private.clone(),
            ..Default::default()
        })
        .await
        .expect("apply")
        .into_inner();
    assert!(applied.diagnostics.is_empty(), "{:?}", applied.diagnostics);
    assert_eq!(applied.private, b"planned");
    let state = undv(&applied.new_state, &schema);
    assert_eq!(state.get_attr("id").as_str(), Some("id-a"));
    assert_eq!(
        state
            .get_attr("endpoints")
            .get_index(0)
            .get_attr("port")
            .as_i64(),
        Some(443)
    );
    assert_eq!(
        state.get_attr("rule"),
        &Value::List(vec![]),
        "absent list block encoded as empty list"
    );
    assert!(state.is_wholly_known());

    // read
    let read = f
        .client
        .read_resource(tf::read_resource::Request {
            type_name: "toy_thing".into(),
            current_state: applied.new_state.clone(),
            private: applied.private.clone(),
            client_capabilities: caps(false),
            ..Default::default()
        })
        .await
        .expect("read")
        .into_inner();
    assert!(read.diagnostics.is_empty());
    assert_eq!(undv(&read.new_state, &schema), state);

    // update with a replacement
    let mut renamed = config.clone();
    renamed.set_attr("name", Value::string("b"));
    let plan2 = f
        .client
        .plan_resource_change(tf::plan_resource_change::Request {
            type_name: "toy_thing".into(),
            prior_state: applied.new_state.clone(),
            proposed_new_state: dv(&renamed, &schema),
            config: dv(&renamed, &schema),
            prior_private: applied.private.clone(),
            client_capabilities: caps(false),
            ..Default::default()
        })
        .await
        .expect("plan update")
        .into_inner();
    assert_eq!(plan2.requires_replace.len(), 1);
    assert_eq!(
        plan2.requires_replace[0].steps[0].selector,
        Some(tf::attribute_path::step::Selector::AttributeName(
            "name".into()
        ))
    );

    // destroy: null proposed state goes to the provider and comes back null
    let before = f.seen.plans.load(Ordering::SeqCst);
    let destroy = f
        .client
        .plan_resource_change(tf::plan_resource_change::Request {
            type_name: "toy_thing".into(),
            prior_state: applied.new_state.clone(),
            proposed_new_state: dv(&Value::Null, &schema),
            config: dv(&Value::Null, &schema),
            ..Default::default()
        })
        .await
        .expect("plan destroy")
        .into_inner();
    assert_eq!(f.seen.plans.load(Ordering::SeqCst), before + 1);
    assert!(destroy.diagnostics.is_empty());
    assert_eq!(undv(&destroy.planned_state, &schema), Value::Null);
    let deleted = f
        .client
        .apply_resource_change(tf::apply_resource_change::Request {
            type_name: "toy_thing".into(),
            prior_state: applied.new_state.clone(),
            planned_state: destroy.planned_state.clone(),
            config: dv(&Value::Null, &schema),
            ..Default::default()
        })
        .await
        .expect("delete")
        .into_inner();
    assert!(deleted.diagnostics.is_empty());
    assert_eq!(undv(&deleted.new_state, &schema), Value::Null);
}

/// `apply_unread_attributes` leaves an attribute of the prior state undecoded, and `keep_prior_state` answers
/// with the prior state exactly as sent, that attribute included.
#[tokio::test]
async fn apply_can_keep_a_prior_state_it_did_not_decode_whole() {
    let mut f = fixture().await;
    let schema = thing_schema();
    let prior = Value::object([
        ("id", Value::string("id-a")),
        ("name", Value::string("a")),
        ("extra", Value::list([Value::int(1), Value::int(2)])),
    ]);
    let mut planned = prior.clone();
    planned.set_attr("name", Value::string("b"));
    let prior_dv = dv(&prior, &schema);
    let resp = f
        .client
        .apply_resource_change(tf::apply_resource_change::Request {
            type_name: "toy_thing".into(),
            prior_state: prior_dv.clone(),
            planned_state: dv(&planned, &schema),
            config: dv(&planned, &schema),
            planned_private: b"keep".to_vec(),
            ..Default::default()
        })
        .await
        .expect("apply")
        .into_inner();
    assert_eq!(resp.diagnostics.len(), 1, "{:?}", resp.diagnostics);
    assert_eq!(resp.diagnostics[0].summary, "Kept");
    assert_eq!(resp.new_state, prior_dv, "the prior state, byte for byte");
    assert_eq!(
        undv(&resp.new_state, &schema).get_attr("extra"),
        &Value::list([Value::int(1), Value::int(2)])
    );
    assert_eq!(resp.private, b"keep");
}

/// `read_unread_attributes` leaves an attribute of the current state undecoded, and `keep_current_state` answers
/// with the current state exactly as sent, that attribute included.
#[tokio::test]
async fn read_can_keep_a_current_state_it_did_not_decode_whole() {
    let mut f = fixture().await;
    let schema = thing_schema();
    let current = Value::object([
        ("id", Value::string("id-a")),
        ("name", Value::string("a")),
        ("extra", Value::list([Value::int(3), Value::int(4)])),
    ]);
    let current_dv = dv(&current, &schema);
    let read = |private: &[u8]| tf::read_resource::Request {
        type_name: "toy_thing".into(),
        current_state: current_dv.clone(),
        private: private.to_vec(),
        ..Default::default()
    };
    let resp = f
        .client
        .read_resource(read(b"keep"))
        .await
        .expect("read")
        .into_inner();
    assert_eq!(resp.diagnostics.len(), 1, "{:?}", resp.diagnostics);
    assert_eq!(resp.diagnostics[0].summary, "Kept");
    assert_eq!(
        resp.new_state, current_dv,
        "the current state, byte for byte"
    );
    let whole = undv(&current_dv, &schema);
    assert_eq!(
        whole.get_attr("extra"),
        &Value::list([Value::int(3), Value::int(4)])
    );
    assert_eq!(resp.private, b"keep");
    // Without the marker every attribute is decoded, and the answer is encoded from what the read returned.
    let resp = f
        .client
        .read_resource(read(b""))
        .await
        .expect("read")
        .into_inner();
    assert!(resp.diagnostics.is_empty(), "{:?}", resp.diagnostics);
    let echoed = undv(&resp.new_state, &schema);
    for attr in ["id", "name", "extra"] {
        assert_eq!(echoed.get_attr(attr), whole.get_attr(attr), "{attr}");
    }
}

#[tokio::test]
async fn deferral_only_when_allowed() {
    let mut f = fixture().await;
    let schema = thing_schema();
    let config = Value::object([("name", Value::unknown())]);
    let plan = |allowed: bool| tf::plan_resource_change::Request {
        type_name: "toy_thing".into(),
        prior_state: dv(&Value::Null, &schema),
        proposed_new_state: dv(&config, &schema),
        config: dv(&config, &schema),
        client_capabilities: caps(allowed),
        ..Default::default()
    };
    let r = f
        .client
        .plan_resource_change(plan(true))
        .await
        .expect("plan")
        .into_inner();
    assert_eq!(
        r.deferred.map(|d| d.reason),
        Some(tf::deferred::Reason::ResourceConfigUnknown as i32)
    );
    assert!(r.diagnostics.is_empty());
    let r = f
        .client
        .plan_resource_change(plan(false))
        .await
        .expect("plan")
        .into_inner();
    assert!(
        r.deferred.is_none(),
        "never deferred when the client does not allow it"
    );
    assert_eq!(
        errors(&r.diagnostics),
        ["Deferred action not supported by this Terraform version"]
    );

    let echo = echo_schema();
    let unknown = Value::object([("input", Value::unknown()), ("output", Value::Null)]);
    let r = f
        .client
        .read_data_source(tf::read_data_source::Request {
            type_name: "toy_echo".into(),
            config: dv(&unknown, &echo),
            provider_meta: None,
            client_capabilities: caps(true),
        })
        .await
        .expect("read data")
        .into_inner();
    assert!(r.deferred.is_some());
    let r = f
        .client
        .read_data_source(tf::read_data_source::Request {
            type_name: "toy_echo".into(),
            config: dv(&unknown, &echo),
            provider_meta: None,
            client_capabilities: None,
        })
        .await
        .expect("read data")
        .into_inner();
    assert!(r.deferred.is_none() && !errors(&r.diagnostics).is_empty());
}

#[tokio::test]
async fn data_source_import_upgrade() {
    let mut f = fixture().await;
    let echo = echo_schema();
    let r = f
        .client
        .read_data_source(tf::read_data_source::Request {
            type_name: "toy_echo".into(),
            config: dv(
                &Value::object([("input", Value::string("hi")), ("output", Value::Null)]),
                &echo,
            ),
            provider_meta: None,
            client_capabilities: caps(false),
        })
        .await
        .expect("read data")
        .into_inner();
    assert!(r.diagnostics.is_empty());
    assert_eq!(
        undv(&r.state, &echo).get_attr("output").as_str(),
        Some("HI")
    );

    let schema = thing_schema();
    let imp = f
        .client
        .import_resource_state(tf::import_resource_state::Request {
            type_name: "toy_thing".into(),
            id: "x1".into(),
            client_capabilities: caps(false),
            identity: None,
        })
        .await
        .expect("import")
        .into_inner();
    assert!(imp.diagnostics.is_empty());
    assert_eq!(imp.imported_resources.len(), 1);
    assert_eq!(imp.imported_resources[0].type_name, "toy_thing");
    let st = undv(&imp.imported_resources[0].state, &schema);
    assert_eq!(st.get_attr("id").as_str(), Some("x1"));
    assert_eq!(st.get_attr("rule"), &Value::List(vec![]));
    let bad = f
        .client
        .import_resource_state(tf::import_resource_state::Request {
            type_name: "toy_thing".into(),
            id: "bad".into(),
            ..Default::default()
        })
        .await
        .expect("import")
        .into_inner();
    assert_eq!(errors(&bad.diagnostics), ["Bad import ID"]);

    let raw = br#"{"id":"id-a","name":"a","size":12345678901234567890123,"removed_attr":true,
        "extra":{"value":{"k":"v"},"type":["object",{"k":"string"}]},"endpoints":null,"rule":[{"enabled":true}]}"#;
    let up = f
        .client
        .upgrade_resource_state(tf::upgrade_resource_state::Request {
            type_name: "toy_thing".into(),
            version: 1,
            raw_state: Some(tf::RawState {
                json: raw.to_vec(),
                flatmap: Default::default(),
            }),
        })
        .await
        .expect("upgrade")
        .into_inner();
    assert!(up.diagnostics.is_empty(), "{:?}", up.diagnostics);
    let st = undv(&up.upgraded_state, &schema);
    assert_eq!(st.get_attr("name").as_str(), Some("a"));
    assert_eq!(
        st.get_attr("size")
            .as_number()
            .map(ToString::to_string)
            .as_deref(),
        Some("12345678901234567890123")
    );
    assert_eq!(
        st.get_attr("extra"),
        &Value::object([("k", Value::string("v"))])
    );
    assert_eq!(
        st.get_attr("rule")
            .get_index(0)
            .get_attr("enabled")
            .as_bool(),
        Some(true)
    );

    let up = f
        .client
        .upgrade_resource_state(tf::upgrade_resource_state::Request {
            type_name: "toy_thing".into(),
            version: 1,
            raw_state: Some(tf::RawState {
                json: br#"{"size":"many"}"#.to_vec(),
                flatmap: Default::default(),
            }),
        })
        .await
        .expect("upgrade")
        .into_inner();
    let d = &up.diagnostics[0];
    assert_eq!(d.severity, 1);
    assert!(d.detail.contains("size"), "{d:?}");
    assert!(d.attribute.is_some());
}

/// Calls `$rpc` with its default request and asserts that the answer carries exactly one error diagnostic.
macro_rules! assert_one_error {
    ($f:expr, $rpc:ident) => {{
        let r = $f
            .client
            .$rpc(tf::$rpc::Request::default())
            .await
            .expect(stringify!($rpc))
            .into_inner();
        assert_eq!(errors(&r.diagnostics).len(), 1, stringify!($rpc));
    }};
}

#[tokio::test]
async fn unsupported_rpcs_answer_cleanly() {
    let mut f = fixture().await;
    assert_one_error!(f, move_resource_state);
    assert_one_error!(f, upgrade_resource_identity);
    assert_one_error!(f, generate_resource_config);
    assert_one_error!(f, validate_ephemeral_resource_config);
    assert_one_error!(f, open_ephemeral_resource);
    assert_one_error!(f, renew_ephemeral_resource);
    assert_one_error!(f, close_ephemeral_resource);
    assert_one_error!(f, validate_list_resource_config);
    let mut events = f
        .client
        .list_resource(tf::list_resource::Request::default())
        .await
        .expect("list")
        .into_inner();
    let ev = events.message().await.expect("event").expect("one event");
    assert_eq!(errors(&ev.diagnostic).len(), 1);
    assert!(events.message().await.expect("end").is_none());
    let r = f
        .client
        .call_function(tf::call_function::Request::default())
        .await
        .expect("call")
        .into_inner();
    assert!(r.error.is_some());
    assert_one_error!(f, validate_action_config);
    assert_one_error!(f, plan_action);
    let mut ev = f
        .client
        .invoke_action(tf::invoke_action::Request::default())
        .await
        .expect("invoke")
        .into_inner();
    assert!(ev.message().await.expect("event").is_some());
    assert_one_error!(f, validate_state_store_config);
    assert_one_error!(f, configure_state_store);
    let mut chunks = f
        .client
        .read_state_bytes(tf::read_state_bytes::Request::default())
        .await
        .expect("read bytes")
        .into_inner();
    assert!(chunks.message().await.expect("chunk").is_some());
    let w = f
        .client
        .write_state_bytes(futures::stream::iter([
            tf::write_state_bytes::RequestChunk::default(),
        ]))
        .await
        .expect("write bytes")
        .into_inner();
    assert_eq!(errors(&w.diagnostics).len(), 1);
    assert_one_error!(f, lock_state);
    assert_one_error!(f, unlock_state);
    assert_one_error!(f, get_states);
    assert_one_error!(f, delete_state);
    let r = f
        .client
        .read_resource(tf::read_resource::Request {
            type_name: "toy_nope".into(),
            ..Default::default()
        })
        .await
        .expect("unknown type")
        .into_inner();
    assert_eq!(errors(&r.diagnostics), ["Unknown resource type"]);
    let r = f
        .client
        .read_data_source(tf::read_data_source::Request {
            type_name: "toy_nope".into(),
            ..Default::default()
        })
        .await
        .expect("unknown data source")
        .into_inner();
    assert_eq!(errors(&r.diagnostics), ["Unknown data source type"]);
}

#[tokio::test]
async fn health_stdio_stop_and_shutdown() {
    let mut f = fixture().await;
    assert_serving(&f.channel).await;

    let mut stdio = GrpcStdioClient::new(f.channel.clone());
    let mut stream = stdio.stream_stdio(()).await.expect("stdio").into_inner();

    let stop = f
        .client
        .stop_provider(tf::stop_provider::Request {})
        .await
        .expect("stop")
        .into_inner();
    assert!(stop.error.is_empty());
    assert_eq!(f.seen.stops.load(Ordering::SeqCst), 1);

    // A large message (above tonic's 4 MiB default) passes both ways.
    let schema = thing_schema();
    let big = Value::object([("name", Value::string("x".repeat(6 << 20)))]);
    let read = f
        .client
        .read_resource(tf::read_resource::Request {
            type_name: "toy_thing".into(),
            current_state: dv(&big, &schema),
            ..Default::default()
        })
        .await
        .expect("large read")
        .into_inner();
    assert_eq!(
        undv(&read.new_state, &schema)
            .get_attr("name")
            .as_str()
            .map(str::len),
        Some(6 << 20)
    );

    let mut controller = GrpcControllerClient::new(f.channel.clone());
    let started = Instant::now();
    controller.shutdown(Empty {}).await.expect("shutdown");
    // The stdio stream ends at shutdown.
    let end = tokio::time::timeout(Duration::from_secs(3), stream.message())
        .await
        .expect("stdio stream ends");
    assert!(matches!(end, Ok(None) | Err(_)));
    drop(f.client);
    drop(f.channel);
    tokio::time::timeout(Duration::from_secs(5), f.server.wait())
        .await
        .expect("server stops promptly")
        .expect("clean stop");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "shutdown took {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn other_client_certificates_are_refused() {
    let cert = terraform_like_client_cert();
    let (provider, _) = toy_provider();
    let server = tfplugin::start(
        provider,
        ListenConfig {
            client_cert_pem: Some(cert.pem.clone().into_bytes()),
            honour_shutdown: true,
            ..Default::default()
        },
    )
    .await
    .expect("server");
    let hs = parse_handshake(&server.handshake_line());
    let server_cert = hs.cert.expect("cert");

    // Another certificate, same shape as Terraform's: refused.
    let intruder = terraform_like_client_cert();
    let refused = async {
        let channel = mtls_channel(&hs.addr, server_cert.clone(), &intruder).await?;
        let mut c = ProviderClient::new(channel);
        c.get_metadata(tf::get_metadata::Request {})
            .await
            .map_err(|e| e.to_string())?;
        Ok::<_, Box<dyn std::error::Error>>(())
    };
    assert!(
        tokio::time::timeout(Duration::from_secs(10), refused)
            .await
            .expect("no hang")
            .is_err()
    );

    // The right certificate still works afterwards.
    let channel = mtls_channel(&hs.addr, server_cert, &cert)
        .await
        .expect("connect");
    let mut c = ProviderClient::new(channel);
    c.get_metadata(tf::get_metadata::Request {})
        .await
        .expect("accepted");

    // No client certificate at all: refused.
    let no_cert = async {
        let tcp = hs.addr.connect().await?;
        let provider = std::sync::Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .dangerous()
            .with_custom_certificate_verifier(std::sync::Arc::new(AcceptAny))
            .with_no_client_auth();
        let connector = tokio_rustls::TlsConnector::from(std::sync::Arc::new(config));
        let mut tls = connector
            .connect(rustls::pki_types::ServerName::try_from("localhost")?, tcp)
            .await?;
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        tls.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").await?;
        let mut buf = [0u8; 16];
        let n = tls.read(&mut buf).await?;
        if n == 0 {
            return Err("closed".into());
        }
        Ok::<_, Box<dyn std::error::Error>>(())
    };
    assert!(
        tokio::time::timeout(Duration::from_secs(10), no_cert)
            .await
            .expect("no hang")
            .is_err()
    );
    server.shutdown();
}

#[derive(Debug)]
struct AcceptAny;

impl rustls::client::danger::ServerCertVerifier for AcceptAny {
    fn verify_server_cert(
        &self,
        _: &rustls::pki_types::CertificateDer<'_>,
        _: &[rustls::pki_types::CertificateDer<'_>],
        _: &rustls::pki_types::ServerName<'_>,
        _: &[u8],
        _: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        _: &[u8],
        _: &rustls::pki_types::CertificateDer<'_>,
        _: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        Ok(rustls::client::danger::HandshakeSignatureValid::assertion())
    }
    fn verify_tls13_signature(
        &self,
        _: &[u8],
        _: &rustls::pki_types::CertificateDer<'_>,
        _: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        Ok(rustls::client::danger::HandshakeSignatureValid::assertion())
    }
    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        rustls::crypto::aws_lc_rs::default_provider()
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[tokio::test]
async fn debug_mode_serves_plain_and_ignores_shutdown() {
    let (provider, _) = toy_provider();
    let server = tfplugin::start(provider, ListenConfig::default())
        .await
        .expect("server");
    assert!(
        server.handshake_line().ends_with("|grpc|"),
        "no certificate without AutoMTLS"
    );
    let json: serde_json::Value =
        serde_json::from_str(&server.reattach_json("registry.example.com/acme/toy"))
            .expect("reattach JSON");
    let entry = &json["registry.example.com/acme/toy"];
    assert_eq!(entry["Protocol"], "grpc");
    assert_eq!(entry["ProtocolVersion"], 6);
    assert_eq!(entry["Test"], true);
    assert_eq!(entry["Pid"], std::process::id());
    assert_eq!(entry["Addr"]["Network"], "unix");
    assert_eq!(entry["Addr"]["String"], server.addr().to_string());

    let channel = plain_channel(&Addr::of(server.addr()))
        .await
        .expect("connect");
    GrpcControllerClient::new(channel.clone())
        .shutdown(Empty {})
        .await
        .expect("shutdown");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut c = ProviderClient::new(channel);
    c.get_metadata(tf::get_metadata::Request {})
        .await
        .expect("still serving after Shutdown in debug mode");
    server.shutdown();
    tokio::time::timeout(Duration::from_secs(5), server.wait())
        .await
        .expect("stops")
        .expect("clean");
}

fn token_config(name: Value) -> Option<tf::DynamicValue> {
    dv(
        &Value::object([("name", name), ("token", Value::Null)]),
        &token_schema(),
    )
}

#[tokio::test]
async fn ephemeral_resources_are_listed() {
    let mut f = fixture().await;
    let md = f
        .client
        .get_metadata(tf::get_metadata::Request {})
        .await
        .expect("GetMetadata")
        .into_inner();
    assert_eq!(
        md.ephemeral_resources
            .iter()
            .map(|r| r.type_name.as_str())
            .collect::<Vec<_>>(),
        ["toy_token"]
    );
    let schema = f
        .client
        .get_provider_schema(tf::get_provider_schema::Request {})
        .await
        .expect("GetProviderSchema")
        .into_inner();
    let token = &schema.ephemeral_resource_schemas["toy_token"];
    let attrs = &token.block.as_ref().expect("block").attributes;
    let t = attrs.iter().find(|a| a.name == "token").expect("token");
    assert!(t.computed && t.sensitive);
    assert!(!schema.resource_schemas.contains_key("toy_token"));
}

#[tokio::test]
async fn ephemeral_validate_open_renew_close() {
    let mut f = fixture().await;
    // Validate: the resource's own rule, with its attribute path.
    let v = f
        .client
        .validate_ephemeral_resource_config(tf::validate_ephemeral_resource_config::Request {
            type_name: "toy_token".into(),
            config: token_config(Value::string("")),
        })
        .await
        .expect("validate")
        .into_inner();
    assert_eq!(errors(&v.diagnostics), ["Empty name"]);
    assert!(v.diagnostics[0].attribute.is_some());

    // Open: result, private bytes, renew_at.
    let before = std::time::SystemTime::now();
    let open = f
        .client
        .open_ephemeral_resource(tf::open_ephemeral_resource::Request {
            type_name: "toy_token".into(),
            config: token_config(Value::string("a")),
            client_capabilities: caps(false),
        })
        .await
        .expect("open")
        .into_inner();
    assert!(
        errors(&open.diagnostics).is_empty(),
        "{:?}",
        open.diagnostics
    );
    let result = undv(&open.result, &token_schema());
    assert_eq!(result.get_attr("token").as_str(), Some("tok-a"));
    assert_eq!(open.private.as_deref(), Some(&b"lease-a"[..]));
    let renew_at: std::time::SystemTime = open
        .renew_at
        .expect("renew_at")
        .try_into()
        .expect("valid timestamp");
    assert!(renew_at >= before + TOKEN_RENEW_IN - Duration::from_secs(1));
    assert!(open.deferred.is_none());

    // Renew with the private bytes: new private bytes, new renew_at.
    let renew = f
        .client
        .renew_ephemeral_resource(tf::renew_ephemeral_resource::Request {
            type_name: "toy_token".into(),
            private: open.private.clone(),
        })
        .await
        .expect("renew")
        .into_inner();
    assert!(renew.diagnostics.is_empty());
    assert_eq!(renew.private.as_deref(), Some(&b"lease-a+r"[..]));
    assert!(renew.renew_at.is_some());

    // Close with the renewed private bytes.
    let close = f
        .client
        .close_ephemeral_resource(tf::close_ephemeral_resource::Request {
            type_name: "toy_token".into(),
            private: renew.private.clone(),
        })
        .await
        .expect("close")
        .into_inner();
    assert!(close.diagnostics.is_empty());
    assert_eq!(
        f.seen.ephemeral_calls(),
        ["open a", "renew lease-a", "close lease-a+r"]
    );

    // A failing open: error diagnostic, no result.
    let failed = f
        .client
        .open_ephemeral_resource(tf::open_ephemeral_resource::Request {
            type_name: "toy_token".into(),
            config: token_config(Value::string("fail")),
            client_capabilities: caps(false),
        })
        .await
        .expect("open")
        .into_inner();
    assert_eq!(errors(&failed.diagnostics), ["Cannot open"]);
    assert!(failed.result.is_none() && failed.private.is_none());
}

#[tokio::test]
async fn ephemeral_open_defers_only_when_allowed() {
    let mut f = fixture().await;
    let unknown = Value::Unknown(Default::default());
    let allowed = f
        .client
        .open_ephemeral_resource(tf::open_ephemeral_resource::Request {
            type_name: "toy_token".into(),
            config: token_config(unknown.clone()),
            client_capabilities: caps(true),
        })
        .await
        .expect("open")
        .into_inner();
    assert!(allowed.deferred.is_some());
    assert!(errors(&allowed.diagnostics).is_empty());
    let result = undv(&allowed.result, &token_schema());
    assert!(!result.get_attr("token").is_known());

    let refused = f
        .client
        .open_ephemeral_resource(tf::open_ephemeral_resource::Request {
            type_name: "toy_token".into(),
            config: token_config(unknown),
            client_capabilities: caps(false),
        })
        .await
        .expect("open")
        .into_inner();
    assert!(refused.deferred.is_none());
    assert_eq!(errors(&refused.diagnostics).len(), 1);
}

#[tokio::test]
async fn ephemeral_unknown_type_and_bad_config() {
    let mut f = fixture().await;
    let open = f
        .client
        .open_ephemeral_resource(tf::open_ephemeral_resource::Request {
            type_name: "toy_nope".into(),
            config: token_config(Value::string("a")),
            client_capabilities: caps(false),
        })
        .await
        .expect("open")
        .into_inner();
    assert_eq!(
        errors(&open.diagnostics),
        ["Unknown ephemeral resource type"]
    );
    for (rpc, diags) in [
        (
            "renew",
            f.client
                .renew_ephemeral_resource(tf::renew_ephemeral_resource::Request {
                    type_name: "toy_nope".into(),
                    private: None,
                })
                .await
                .expect("renew")
                .into_inner()
                .diagnostics,
        ),
        (
            "close",
            f.client
                .close_ephemeral_resource(tf::close_ephemeral_resource::Request {
                    type_name: "toy_nope".into(),
                    private: None,
                })
                .await
                .expect("close")
                .into_inner()
                .diagnostics,
        ),
    ] {
        assert_eq!(errors(&diags), ["Unknown ephemeral resource type"], "{rpc}");
    }
    // A config that does not match the schema: a decode diagnostic, the resource is not called.
    let bad = f
        .client
        .open_ephemeral_resource(tf::open_ephemeral_resource::Request {
            type_name: "toy_token".into(),
            config: Some(tf::DynamicValue {
                msgpack: vec![0xc1],
                json: Vec::new(),
            }),
            client_capabilities: caps(false),
        })
        .await
        .expect("open")
        .into_inner();
    assert_eq!(errors(&bad.diagnostics).len(), 1);
    assert!(f.seen.ephemeral_calls().is_empty());
}
