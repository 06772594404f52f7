//! What both ClusterProfile data sources share: the per-profile attributes and their object type, the conversion
//! of a `ClusterProfile` (plus its credential status) into a Terraform value, the optional `credentials` block,
//! and the handling of configurations that are not wholly known.
//!
//! Nothing here ever reads Secret data into a value: access providers are reported without certificate data or
//! extension contents, and the credential status carries names and keys only.

use std::collections::BTreeMap;

pub use super::lookup::CredentialStatus;
use crate::{
    api::{AccessProvider, ClusterProfile},
    domain::{
        credentials::{CredentialOptions, CredentialsConfig, access_providers},
        exec::ProvidersFile,
    },
    provider::blocks::connection::ConnectionConfig,
    tfplugin::{
        DataReadRequest, DataReadResponse, DeferredReason, Diagnostic, Diagnostics, Fields, Schema,
        Type, Value,
        schema::{Attribute, Block},
        value::Partial,
    },
};

/// Type of one element of `conditions`.
pub fn condition_type() -> Type {
    Type::object([
        ("type", Type::String),
        ("status", Type::String),
        ("reason", Type::String),
        ("message", Type::String),
        ("last_transition_time", Type::String),
    ])
}

/// Type of one element of `access_providers`.
pub fn access_provider_type() -> Type {
    Type::object([
        ("name", Type::String),
        ("server", Type::String),
        ("tls_server_name", Type::String),
        ("insecure_skip_tls_verify", Type::Bool),
        ("proxy_url", Type::String),
        ("has_ca", Type::Bool),
        ("extensions", Type::list(Type::String)),
    ])
}

/// The computed attributes describing one profile. With `identity`, `name` and `namespace` are included (as
/// computed); the single data source declares those itself as required arguments.
pub fn profile_attributes(identity: bool) -> Vec<Attribute> {
    let c = |a: Attribute, doc: &str| a.computed().markdown_description(doc);
    let mut out = vec![c(
        Attribute::string("id"),
        "`namespace/name` of the ClusterProfile.",
    )];
    if identity {
        out.push(c(Attribute::string("name"), "Name of the ClusterProfile."));
        out.push(c(
            Attribute::string("namespace"),
            "Namespace of the ClusterProfile.",
        ));
    }
    out.extend([
        c(
            Attribute::map("labels", Type::String),
            "Labels of the ClusterProfile (empty values included).",
        ),
        c(
            Attribute::map("annotations", Type::String),
            "Annotations of the ClusterProfile.",
        ),
        c(
            Attribute::string("display_name"),
            "`spec.displayName` (null when unset).",
        ),
        c(
            Attribute::string("cluster_manager"),
            "`spec.clusterManager.name`.",
        ),
        c(
            Attribute::string("kubernetes_version"),
            "`status.version.kubernetes` (null when not reported).",
        ),
        c(
            Attribute::list("conditions", condition_type()),
            "`status.conditions`: `type`, `status`, `reason`, `message`, `last_transition_time` (RFC 3339).",
        ),
        c(
            Attribute::map("properties", Type::String),
            "`status.properties` as a map from property name to value.",
        ),
        c(
            Attribute::list("access_providers", access_provider_type()),
            "`status.accessProviders` (then deprecated `status.credentialProviders` whose names are not already \
             listed): `name`, `server`, `tls_server_name`, `insecure_skip_tls_verify`, `proxy_url`, `has_ca` \
             (whether CA data or a CA file is given) and the `extensions` names. No certificate data and no \
             extension contents.",
        ),
        c(
            Attribute::string("credential_source"),
            "Where the bridge would take this cluster's kubeconfig from: `secret:<ns>/<name>#<key>` (labelled \
             Secret), `access-provider:kubeconfig-secretreader:<ns>/<name>[#<key>]`, `exec:<provider>`; \
             `none: <reason>` or `ambiguous: <secrets>` when there is no single usable source. A source that \
             exists but cannot be used has ` (not usable: <reason>)` appended.",
        ),
        c(
            Attribute::bool("ready_to_bridge"),
            "Whether usable credentials were found: for Secrets, the Secret exists and holds a kubeconfig under \
             the expected key; for exec providers, the provider is configured in `exec_providers_file` (the \
             plugin is not run by the data source).",
        ),
    ]);
    out
}

/// The object type of one element of `cluster_profiles`.
pub fn profile_object_type() -> Type {
    let mut block = Block::new();
    for a in profile_attributes(true) {
        block = block.attribute(a);
    }
    block.value_type()
}

fn opt_string(s: Option<&str>) -> Value {
    s.map(Value::string).unwrap_or(Value::Null)
}

fn access_provider_value(p: &AccessProvider) -> Value {
    let c = p.cluster.as_ref();
    Value::object([
        ("name", Value::string(&p.name)),
        ("server", opt_string(c.map(|c| c.server.as_str()))),
        (
            "tls_server_name",
            opt_string(c.and_then(|c| c.tls_server_name.as_deref())),
        ),
        (
            "insecure_skip_tls_verify",
            Value::bool(c.and_then(|c| c.insecure_skip_tls_verify).unwrap_or(false)),
        ),
        (
            "proxy_url",
            opt_string(c.and_then(|c| c.proxy_url.as_deref())),
        ),
        (
            "has_ca",
            Value::bool(c.is_some_and(|c| {
                c.certificate_authority_data
                    .as_deref()
                    .is_some_and(|d| !d.is_empty())
                    || c.certificate_authority
                        .as_deref()
                        .is_some_and(|f| !f.is_empty())
            })),
        ),
        (
            "extensions",
            Value::string_list(
                c.map(|c| {
                    c.extensions
                        .iter()
                        .map(|e| e.name.clone())
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default(),
            ),
        ),
    ])
}

/// The attributes of one profile (all of [`profile_attributes`]`(true)`), by name.
pub fn profile_attrs(p: &ClusterProfile, cred: &CredentialStatus) -> Fields {
    let meta = &p.metadata;
    let status = p.status.as_ref();
    let conditions = status
        .map(|s| {
            s.conditions
                .iter()
                .map(|c| {
                    Value::object([
                        ("type", Value::string(&c.type_)),
                        ("status", Value::string(&c.status)),
                        ("reason", Value::string(&c.reason)),
                        ("message", Value::string(&c.message)),
                        (
                            "last_transition_time",
                            Value::string(c.last_transition_time.0.to_string()),
                        ),
                    ])
                })
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let properties: BTreeMap<String, String> = status
        .map(|s| {
            s.properties
                .iter()
                .filter(|p| p.unreadable.is_none())
                .map(|p| (p.name.clone(), p.value.clone()))
                .collect()
        })
        .unwrap_or_default();
    let providers: Vec<Value> = access_providers(p)
        .into_iter()
        .map(access_provider_value)
        .collect();
    let mut out = Fields::new();
    let mut put = |k: &str, v: Value| {
        out.insert(k.to_string(), v);
    };
    put("id", Value::string(p.key()));
    put("name", opt_string(meta.name.as_deref()));
    put("namespace", opt_string(meta.namespace.as_deref()));
    put("labels", Value::string_map(p.labels_map()));
    put(
        "annotations",
        Value::string_map(meta.annotations.clone().unwrap_or_default()),
    );
    put("display_name", opt_string(p.spec.display_name.as_deref()));
    put(
        "cluster_manager",
        Value::string(&p.spec.cluster_manager.name),
    );
    put(
        "kubernetes_version",
        opt_string(
            status
                .and_then(|s| s.version.as_ref())
                .and_then(|v| v.kubernetes.as_deref()),
        ),
    );
    put("conditions", Value::List(conditions));
    put("properties", Value::string_map(properties));
    put("access_providers", Value::List(providers));
    put("credential_source", Value::string(&cred.source));
    put("ready_to_bridge", Value::bool(cred.ready));
    out
}

/// One element of `cluster_profiles`.
pub fn profile_value(p: &ClusterProfile, cred: &CredentialStatus) -> Value {
    Value::Object(profile_attrs(p, cred))
}

/// For a configuration that is not wholly known: a deferred response (computed attributes unknown) when the
/// client can defer, else an error. `None` when the configuration is wholly known.
pub fn unknown_config(schema: &Schema, req: &DataReadRequest) -> Option<DataReadResponse> {
    if req.config.is_wholly_known() {
        return None;
    }
    let state = schema.mark_computed_unknown(&req.config);
    if req.client.deferral_allowed {
        return Some(DataReadResponse {
            state,
            deferred: Some(DeferredReason::ResourceConfigUnknown),
            ..DataReadResponse::default()
        });
    }
    let unknown: Vec<String> = req
        .config
        .as_map()
        .map(|m| {
            m.iter()
                .filter(|(_, v)| !v.is_wholly_known())
                .map(|(k, _)| k.clone())
                .collect()
        })
        .unwrap_or_default();
    Some(DataReadResponse {
        state,
        diagnostics: Diagnostic::error(
            "Data source configuration is not known yet",
            format!(
                "{} depend(s) on values known only after apply, and this Terraform version cannot defer the \
                 read. Apply the resources those values come from first.",
                unknown.join(", ")
            ),
        )
        .into(),
        ..DataReadResponse::default()
    })
}

/// The response of a read that has no client yet: deferred (computed attributes unknown) when the provider's or the
/// inventory's configuration is not known, else the failure.
pub fn not_ready(
    schema: &Schema,
    config: &Value,
    why: crate::provider::state::NotReady,
) -> DataReadResponse {
    match why {
        crate::provider::state::NotReady::Defer(reason) => DataReadResponse {
            state: schema.mark_computed_unknown(config),
            deferred: Some(reason),
            ..DataReadResponse::default()
        },
        crate::provider::state::NotReady::Fail(d) => failed(config, d.into()),
    }
}

/// The `credentials` and `inventory` blocks of a ClusterProfile data source's configuration (read with the rest
/// of it).
pub struct InventoryBlocks<'a> {
    /// The `credentials` block.
    pub credentials: Option<&'a CredentialsConfig>,
    /// The `inventory` block.
    pub inventory: Option<&'a ConnectionConfig>,
}

/// The `credentials` settings of a ClusterProfile data source's configuration and the inventory's client (the
/// `inventory` block's, else the provider's); or the response that ends the read when either is not there.
pub fn inventory_access(
    state: &crate::provider::state::ProviderState,
    schema: &Schema,
    req: &DataReadRequest,
    blocks: InventoryBlocks<'_>,
) -> Result<(CredentialOptions, Option<ProvidersFile>, kube::Client), Box<DataReadResponse>> {
    let config = &req.config;
    let (options, providers) = crate::provider::blocks::credentials::settings(blocks.credentials)
        .map_err(|d| Box::new(failed(config, d)))?;
    let client = crate::provider::blocks::inventory::client_of(state, blocks.inventory, req.client)
        .map_err(|why| Box::new(not_ready(schema, config, why)))?;
    Ok((options, providers, client))
}

/// Validation of a data source's `credentials` block: its errors once it is wholly known (unknown values are
/// checked at read time).
pub fn check_credentials<T>(
    config: &Partial<T>,
    credentials: Option<&CredentialsConfig>,
) -> Diagnostics {
    if config.is_unknown_at(&crate::tfplugin::AttributePath::attr("credentials")) {
        return Diagnostics::new();
    }
    crate::provider::blocks::credentials::check(credentials)
}

/// A response carrying only diagnostics (state = the configuration).
pub fn failed(config: &Value, diagnostics: Diagnostics) -> DataReadResponse {
    DataReadResponse {
        state: config.clone(),
        diagnostics,
        ..DataReadResponse::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{ClusterVersion, Property};
    use crate::domain::testutil::*;

    fn ready() -> CredentialStatus {
        CredentialStatus {
            source: "secret:a/b#Config".into(),
            ready: true,
            notice: None,
        }
    }

    #[test]
    fn conversion_matches_the_object_type() {
        let mut p = profile("team-a", "c1", &[("env", "true"), ("empty", "")]);
        set_healthy(&mut p, true);
        add_provider(
            &mut p,
            "kubeconfig-secretreader",
            serde_json::json!({"name": "kc", "token": "canary-ext"}),
        );
        {
            let s = p.status.as_mut().unwrap();
            s.version = Some(ClusterVersion {
                kubernetes: Some("v1.37.2".into()),
            });
            s.properties.push(Property {
                name: "region".into(),
                value: "eu".into(),
                ..Default::default()
            });
            let c = s.access_providers[0].cluster.as_mut().unwrap();
            c.certificate_authority_data = Some("Y2FuYXJ5LWNh".into());
            c.tls_server_name = Some("api.example".into());
        }
        let v = profile_value(&p, &ready());
        let Type::Object { attributes, .. } = profile_object_type() else {
            panic!("object type expected")
        };
        let keys: Vec<&String> = v.as_map().unwrap().keys().collect();
        assert_eq!(keys, attributes.keys().collect::<Vec<_>>());
        assert_eq!(v.get_attr("id").as_str(), Some("team-a/c1"));
        assert_eq!(v.get_attr("labels").get_attr("env").as_str(), Some("true"));
        assert_eq!(v.get_attr("labels").get_attr("empty").as_str(), Some(""));
        assert_eq!(v.get_attr("display_name").as_str(), Some("c1 display"));
        assert_eq!(v.get_attr("cluster_manager").as_str(), Some("ocm"));
        assert_eq!(v.get_attr("kubernetes_version").as_str(), Some("v1.37.2"));
        assert_eq!(
            v.get_attr("properties").get_attr("region").as_str(),
            Some("eu")
        );
        let cond = v.get_attr("conditions").get_index(0);
        assert_eq!(cond.get_attr("type").as_str(), Some("ControlPlaneHealthy"));
        assert_eq!(cond.get_attr("status").as_str(), Some("True"));
        assert_eq!(
            cond.get_attr("last_transition_time").as_str(),
            Some("1970-01-01T00:00:00Z")
        );
        let ap = v.get_attr("access_providers").get_index(0);
        assert_eq!(
            ap.get_attr("name").as_str(),
            Some("kubeconfig-secretreader")
        );
        assert_eq!(ap.get_attr("has_ca").as_bool(), Some(true));
        assert_eq!(ap.get_attr("tls_server_name").as_str(), Some("api.example"));
        assert_eq!(ap.get_attr("proxy_url"), &Value::Null);
        assert_eq!(
            ap.get_attr("extensions").as_string_vec(),
            vec!["client.authentication.k8s.io/exec".to_string()]
        );
        // No certificate data and no extension contents anywhere.
        let dump = format!("{:?}", v.reveal());
        assert!(
            !dump.contains("Y2FuYXJ5") && !dump.contains("canary"),
            "{dump}"
        );
        // The value encodes with the schema's type.
        let bytes = crate::tfplugin::value::msgpack::encode(&v, &profile_object_type());
        assert!(bytes.is_ok(), "{bytes:?}");
    }

    #[test]
    fn bare_profile_has_empty_collections_and_null_optionals() {
        let mut p = profile("ns", "bare", &[]);
        p.metadata.labels = None;
        p.spec.display_name = None;
        let v = profile_value(&p, &ready());
        assert_eq!(v.get_attr("labels"), &Value::map::<String>([]));
        assert_eq!(v.get_attr("annotations"), &Value::map::<String>([]));
        assert_eq!(v.get_attr("conditions"), &Value::List(vec![]));
        assert_eq!(v.get_attr("access_providers"), &Value::List(vec![]));
        assert!(v.get_attr("display_name").is_null());
        assert!(v.get_attr("kubernetes_version").is_null());
    }

    #[test]
    fn unknown_config_defers_or_fails() {
        let schema = Schema::new(0)
            .attribute(Attribute::string("name").required())
            .attribute(Attribute::string("id").computed());
        let mut req = DataReadRequest {
            config: Value::object([("name", Value::unknown()), ("id", Value::Null)]),
            ..DataReadRequest::default()
        };
        let r = unknown_config(&schema, &req).expect("unknown");
        assert!(r.diagnostics.has_errors() && r.deferred.is_none());
        req.client.deferral_allowed = true;
        let r = unknown_config(&schema, &req).expect("unknown");
        assert_eq!(r.deferred, Some(DeferredReason::ResourceConfigUnknown));
        assert!(!r.state.get_attr("id").is_known());
        req.config = Value::object([("name", Value::string("x")), ("id", Value::Null)]);
        assert!(unknown_config(&schema, &req).is_none());
    }
}
