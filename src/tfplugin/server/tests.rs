//! The write-only guarantees of this layer, on the service itself: whatever a resource answers, no state
//! leaving it holds a write-only value, and a client without the capability cannot set one.

use super::ProviderService;
use crate::tfplugin::diag::Diagnostics;
use crate::tfplugin::pb::tfplugin6 as pb;
use crate::tfplugin::pb::tfplugin6::provider_server::Provider as ProviderRpc;
use crate::tfplugin::provider::{
    ApplyRequest, ConfigureRequest, DataReadRequest, DataSource, ImportRequest, PlanRequest,
    Provider, ReadRequest, Resource,
};
use crate::tfplugin::provider::{
    ApplyResponse, ImportResponse, ImportedResource, PlanResponse, ReadResponse,
};
use crate::tfplugin::schema::{Attribute, NestedBlock};
use crate::tfplugin::schema::{Block, Schema};
use crate::tfplugin::value::Value;
use crate::tfplugin::value::msgpack;
use async_trait::async_trait;
use std::sync::Arc;
use tonic::Request;

const CANARY: &str = "canary-7c1e";

fn leaky_schema() -> Schema {
    Schema::new(0)
        .attribute(Attribute::string("name").required())
        .attribute(
            Attribute::string("password_wo")
                .optional()
                .sensitive()
                .write_only(),
        )
        .block(NestedBlock::single(
            "conn",
            Block::new()
                .attribute(Attribute::string("key").optional())
                .attribute(Attribute::string("key_wo").optional().write_only()),
        ))
}

fn with_canary(mut v: Value) -> Value {
    v.set_attr("password_wo", Value::string(CANARY));
    v.set_attr(
        "conn",
        Value::object([("key", Value::Null), ("key_wo", Value::string(CANARY))]),
    );
    v
}

/// A resource that puts write-only values in every state it answers with.
struct Leaky;

#[async_trait]
impl Resource for Leaky {
    fn type_name(&self) -> &'static str {
        "toy_leaky"
    }
    fn schema(&self) -> Schema {
        leaky_schema()
    }
    async fn plan(&self, req: PlanRequest) -> PlanResponse {
        let planned = if req.is_destroy() {
            Value::Null
        } else {
            req.config.clone()
        };
        PlanResponse::planned(&req, planned)
    }
    async fn apply(&self, req: ApplyRequest) -> ApplyResponse {
        ApplyResponse {
            new_state: req.config.clone(),
            ..Default::default()
        }
    }
    async fn read(&self, req: ReadRequest) -> ReadResponse {
        ReadResponse {
            new_state: with_canary(req.current_state),
            ..Default::default()
        }
    }
    async fn import(&self, req: ImportRequest) -> ImportResponse {
        ImportResponse {
            imported: vec![ImportedResource {
                type_name: String::new(),
                state: with_canary(Value::object([("name", Value::string(req.id))])),
                private: Vec::new(),
            }],
            ..Default::default()
        }
    }
}

/// A data source declaring a write-only attribute, which only managed resources may.
struct BadData;

#[async_trait]
impl DataSource for BadData {
    fn type_name(&self) -> &'static str {
        "toy_bad"
    }
    fn schema(&self) -> Schema {
        Schema::new(0).attribute(Attribute::string("secret_wo").optional().write_only())
    }
    async fn read(&self, req: DataReadRequest) -> crate::tfplugin::provider::DataReadResponse {
        crate::tfplugin::provider::DataReadResponse {
            state: req.config,
            ..Default::default()
        }
    }
}

struct Toy {
    bad_data_source: bool,
}

#[async_trait]
impl Provider for Toy {
    fn schema(&self) -> Schema {
        Schema::new(0)
    }
    fn resources(&self) -> Vec<Arc<dyn Resource>> {
        vec![Arc::new(Leaky)]
    }
    fn data_sources(&self) -> Vec<Arc<dyn DataSource>> {
        if self.bad_data_source {
            vec![Arc::new(BadData)]
        } else {
            Vec::new()
        }
    }
    async fn configure(&self, _req: ConfigureRequest) -> Diagnostics {
        Diagnostics::new()
    }
}

fn service() -> ProviderService {
    ProviderService::new(Arc::new(Toy {
        bad_data_source: false,
    }))
}

fn dv(v: &Value) -> Option<pb::DynamicValue> {
    Some(pb::DynamicValue {
        msgpack: msgpack::encode(v, &leaky_schema().value_type()).expect("encode"),
        json: Vec::new(),
    })
}

/// Decodes a state the service sent and checks it holds no write-only value, nowhere in its bytes either.
fn no_write_only(dv: &Option<pb::DynamicValue>) -> Value {
    let dv = dv.as_ref().expect("a state");
    assert!(
        !String::from_utf8_lossy(&dv.msgpack).contains(CANARY),
        "the canary is in the bytes"
    );
    let v = msgpack::decode(&dv.msgpack, &leaky_schema().value_type()).expect("decode");
    assert!(v.get_attr("password_wo").is_null());
    assert!(v.get_attr("conn").get_attr("key_wo").is_null());
    v
}

fn caps(write_only: bool) -> Option<pb::ClientCapabilities> {
    Some(pb::ClientCapabilities {
        deferral_allowed: false,
        write_only_attributes_allowed: write_only,
    })
}

fn config() -> Value {
    with_canary(Value::object([("name", Value::string("a"))]))
}

#[tokio::test]
async fn no_state_leaving_the_layer_holds_a_write_only_value() {
    let svc = service();
    let schema = svc
        .get_provider_schema(Request::new(Default::default()))
        .await
        .unwrap()
        .into_inner();
    assert!(schema.diagnostics.is_empty());
    let attrs = &schema.resource_schemas["toy_leaky"]
        .block
        .as_ref()
        .unwrap()
        .attributes;
    let wire = |name: &str| attrs.iter().find(|a| a.name == name).unwrap().write_only;
    assert!(wire("password_wo") && !wire("name"));

    let plan = svc
        .plan_resource_change(Request::new(pb::plan_resource_change::Request {
            type_name: "toy_leaky".into(),
            prior_state: dv(&Value::Null),
            proposed_new_state: dv(&config()),
            config: dv(&config()),
            client_capabilities: caps(true),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert!(plan.diagnostics.is_empty(), "{:?}", plan.diagnostics);
    let planned = no_write_only(&plan.planned_state);
    assert_eq!(
        planned.get_attr("name").as_str(),
        Some("a"),
        "the rest is kept"
    );

    let apply = svc
        .apply_resource_change(Request::new(pb::apply_resource_change::Request {
            type_name: "toy_leaky".into(),
            prior_state: dv(&Value::Null),
            planned_state: plan.planned_state.clone(),
            config: dv(&config()),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert!(apply.diagnostics.is_empty(), "{:?}", apply.diagnostics);
    no_write_only(&apply.new_state);

    let read = svc
        .read_resource(Request::new(pb::read_resource::Request {
            type_name: "toy_leaky".into(),
            current_state: apply.new_state.clone(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert!(read.diagnostics.is_empty(), "{:?}", read.diagnostics);
    no_write_only(&read.new_state);

    let import = svc
        .import_resource_state(Request::new(pb::import_resource_state::Request {
            type_name: "toy_leaky".into(),
            id: "b".into(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(import.imported_resources.len(), 1);
    no_write_only(&import.imported_resources[0].state);
}

#[tokio::test]
async fn a_client_without_the_capability_cannot_set_a_write_only_attribute() {
    let svc = service();
    let validate = |config: Value, write_only: bool| {
        svc.validate_resource_config(Request::new(pb::validate_resource_config::Request {
            type_name: "toy_leaky".into(),
            config: dv(&config),
            client_capabilities: caps(write_only),
        }))
    };
    let refused = validate(config(), false)
        .await
        .unwrap()
        .into_inner()
        .diagnostics;
    let mut paths: Vec<Vec<String>> = refused
        .iter()
        .map(|d| {
            d.attribute
                .as_ref()
                .unwrap()
                .steps
                .iter()
                .map(|s| format!("{:?}", s.selector))
                .collect()
        })
        .collect();
    paths.sort();
    assert_eq!(refused.len(), 2, "{refused:?}");
    assert!(paths[0].concat().contains("conn") && paths[0].concat().contains("key_wo"));
    assert!(
        refused
            .iter()
            .all(|d| d.summary.contains("Write-only attribute not supported"))
    );
    assert!(refused.iter().all(|d| !d.detail.contains(CANARY)));
    // With the capability, or without a write-only value (unknown counts as set), the configuration is valid.
    assert!(
        validate(config(), true)
            .await
            .unwrap()
            .into_inner()
            .diagnostics
            .is_empty()
    );
    let plain = Value::object([("name", Value::string("a"))]);
    assert!(
        validate(plain.clone(), false)
            .await
            .unwrap()
            .into_inner()
            .diagnostics
            .is_empty()
    );
    let mut unknown = plain.clone();
    unknown.set_attr("password_wo", Value::unknown());
    assert_eq!(
        validate(unknown, false)
            .await
            .unwrap()
            .into_inner()
            .diagnostics
            .len(),
        1
    );

    // A plan from such a client is refused too, before the resource plans.
    let plan = svc
        .plan_resource_change(Request::new(pb::plan_resource_change::Request {
            type_name: "toy_leaky".into(),
            prior_state: dv(&Value::Null),
            proposed_new_state: dv(&config()),
            config: dv(&config()),
            client_capabilities: None,
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(plan.diagnostics.len(), 2, "{:?}", plan.diagnostics);
    assert!(plan.planned_state.is_none());
}

#[tokio::test]
async fn write_only_attributes_outside_managed_resources_fail_the_schema() {
    let svc = ProviderService::new(Arc::new(Toy {
        bad_data_source: true,
    }));
    let schema = svc
        .get_provider_schema(Request::new(Default::default()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(schema.diagnostics.len(), 1, "{:?}", schema.diagnostics);
    assert!(
        schema.diagnostics[0]
            .detail
            .contains("data source toy_bad: attribute secret_wo is write-only"),
        "{:?}",
        schema.diagnostics
    );
}
