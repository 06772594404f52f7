//! `sveltos_clusters`: the Sveltos `SveltosCluster`s (`lib.projectsveltos.io/v1beta1`) matching some filters, each
//! with the status Sveltos reports for it (`ready`, `connectionStatus`, `failureMessage`, `version`), whether a given
//! bridge owns it, and the credential expiry that bridge recorded.
//!
//! Secrets are only ever listed as metadata (no Secret data crosses the wire): the expiry is the annotation the
//! bridge writes on the kubeconfig Secret it owns next to the SveltosCluster.

use std::{collections::BTreeMap, sync::Arc};

use async_trait::async_trait;
use k8s_openapi::{api::core::v1::Secret, apimachinery::pkg::apis::meta::v1::ObjectMeta};

use super::{
    ownership::{BridgeOwnership, labelled_for},
    profile_value::{failed, unknown_config},
};
use crate::{
    api::{SveltosCluster, keys},
    bridge::{
        desired::secret_name,
        selector::{Selector, label_value},
    },
    k8s::io::{self, IoError},
    provider::blocks::selection::known_only,
    provider::state::ProviderState,
    tfplugin::{
        AttributePath, DataReadRequest, DataReadResponse, DataSource, Diagnostic, Diagnostics,
        Schema, Type, Value,
        schema::{Attribute, Block},
    },
};

/// The server-side label selector that narrows the Secret LIST to the bridge's kubeconfig Secrets
/// ([`labelled_for`] still decides).
fn owner_prefilter(bridge: &str) -> String {
    format!("{}={bridge}", keys::BRIDGE_LABEL)
}

/// The `sveltos_clusters` data source.
pub struct SveltosClustersDataSource {
    state: Arc<ProviderState>,
}

impl SveltosClustersDataSource {
    /// The data source, using the provider's shared state.
    pub fn new(state: Arc<ProviderState>) -> Self {
        Self { state }
    }
}

/// The computed attributes of one element of `clusters`.
fn cluster_attributes() -> Vec<Attribute> {
    let c = |a: Attribute, doc: &str| a.computed().markdown_description(doc);
    vec![
        c(
            Attribute::string("id"),
            "`namespace/name` of the SveltosCluster.",
        ),
        c(Attribute::string("name"), "Name of the SveltosCluster."),
        c(
            Attribute::string("namespace"),
            "Namespace of the SveltosCluster.",
        ),
        c(
            Attribute::map("labels", Type::String),
            "Labels of the SveltosCluster (including those Sveltos writes, e.g. `projectsveltos.io/k8s-version`).",
        ),
        c(
            Attribute::bool("ready"),
            "`status.ready`: whether Sveltos reached the cluster (`false` until Sveltos reports it).",
        ),
        c(
            Attribute::string("connection_status"),
            "`status.connectionStatus` (`Healthy` or `Down`; null until Sveltos reports it).",
        ),
        c(
            Attribute::string("failure_message"),
            "`status.failureMessage` (null when none).",
        ),
        c(
            Attribute::string("version"),
            "`status.version`: the Kubernetes version Sveltos found (null until reported).",
        ),
        c(
            Attribute::bool("paused"),
            "`spec.paused` (`false` when unset).",
        ),
        c(
            Attribute::string("credential_expires_at"),
            "The credential expiry (RFC 3339) that the bridge named in `bridge` recorded on the kubeconfig Secret \
             it owns for this cluster. Null when `bridge` is not set, when the bridge does not own the cluster or \
             its Secret, when no expiry was recorded (static credentials), or when the recorded value is not an \
             RFC 3339 timestamp.",
        ),
        c(
            Attribute::bool("owned"),
            "Whether the bridge named in `bridge` owns this SveltosCluster, by the bridge's own rule: the cluster \
             carries the bridge's label and is the object the bridge created (its UID, as recorded in the bridge's \
             claim at the end of its last apply, or the mark of a run of the bridge that died before recording \
             it). A label copied onto another SveltosCluster is not ownership. Null when `bridge` is not set, and \
             when the bridge's claim holds no record (last applied by an earlier version of the provider: apply it \
             once; a warning says so).",
        ),
    ]
}

/// The object type of one element of `clusters`.
pub fn cluster_object_type() -> Type {
    let mut block = Block::new();
    for a in cluster_attributes() {
        block = block.attribute(a);
    }
    block.value_type()
}

/// The schema of `sveltos_clusters`.
pub fn schema() -> Schema {
    Schema::new(0)
        .markdown_description(
            "Lists Sveltos `SveltosCluster`s (`lib.projectsveltos.io/v1beta1`) with the status Sveltos reports for \
             them (`ready`, `connection_status`, `failure_message`, `version`), whether a given \
             `sveltos_cluster_inventory_bridge` owns them, and the credential expiry it recorded. Use it after \
             `apply` to see which bridged clusters Sveltos actually reached, for example in a `check` block. Never \
             reads Secret data.",
        )
        .attribute(
            Attribute::string("id")
                .computed()
                .markdown_description("A description of the query (the filters)."),
        )
        .attribute(
            Attribute::string("bridge")
                .optional()
                .markdown_description(
                    "The `name` of a `sveltos_cluster_inventory_bridge`. Only the SveltosClusters it owns are \
                     listed (unless `owned_only = false`), and `owned` and `credential_expires_at` are reported \
                     for it.",
                ),
        )
        .attribute(
            Attribute::string("claim_namespace")
                .optional()
                .markdown_description(
                    "With `bridge`: the `claim_namespace` of that bridge, where its claim (ConfigMap \
                     `sveltos-bridge-<name>`) records what it owns (default `default`). Reading it needs `get` on \
                     ConfigMaps there.",
                ),
        )
        .attribute(
            Attribute::string("instance_id")
                .optional()
                .markdown_description(
                    "With `bridge`: that bridge's `instance_id` (e.g. `sveltos_cluster_inventory_bridge.fleet.instance_id`). \
                     The claim must then be that instance's: a claim another state wrote, or none at all (a wrong \
                     `claim_namespace`), is an error instead of a list in which nothing is owned.",
                ),
        )
        .attribute(
            Attribute::bool("owned_only")
                .optional()
                .markdown_description(
                    "With `bridge`: list only the SveltosClusters that bridge owns (default `true`). Set it to \
                     `false` to list every SveltosCluster matching the other filters, `owned` telling which are \
                     the bridge's. Requires `bridge` when `true`.",
                ),
        )
        .attribute(
            Attribute::list("namespaces", Type::String)
                .optional()
                .markdown_description("Only SveltosClusters in these namespaces (default: all namespaces)."),
        )
        .attribute(
            Attribute::string("label_selector")
                .optional()
                .markdown_description(
                    "Only SveltosClusters whose labels match this Kubernetes label selector, e.g. \
                     `env=prod,tier in (a,b),!legacy`.",
                ),
        )
        .attribute(
            Attribute::list("clusters", cluster_object_type())
                .computed()
                .markdown_description(
                    "The matching SveltosClusters, ordered by namespace and name: `id`, `name`, `namespace`, \
                     `labels`, `ready`, `connection_status`, `failure_message`, `version`, `paused`, \
                     `credential_expires_at`, `owned`.",
                ),
        )
}

/// What a configuration asks for.
#[derive(Debug, Clone, PartialEq)]
struct Query {
    /// The bridge whose ownership is reported.
    bridge: Option<String>,
    /// Namespace of `bridge`'s claim.
    claim_namespace: String,
    /// Whether `claim_namespace` was set (it is then part of the id).
    claim_namespace_set: bool,
    /// The instance id the claim must hold.
    instance_id: Option<String>,
    /// Only clusters `bridge` owns.
    owned_only: bool,
    /// Namespaces to list (empty: all), sorted and deduplicated.
    namespaces: Vec<String>,
    /// Label selector on the SveltosClusters.
    label_selector: Option<Selector>,
}

impl Query {
    fn id(&self) -> String {
        let mut claim = if self.claim_namespace_set {
            format!("claim_namespace={};", self.claim_namespace)
        } else {
            String::new()
        };
        if let Some(i) = &self.instance_id {
            claim.push_str(&format!("instance_id={i};"));
        }
        format!(
            "bridge={};{claim}owned_only={};namespaces={};label_selector={}",
            self.bridge.as_deref().unwrap_or_default(),
            self.owned_only,
            if self.namespaces.is_empty() {
                "*".to_string()
            } else {
                self.namespaces.join(",")
            },
            self.label_selector
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default(),
        )
    }
}

/// The filters of a configuration, or diagnostics with attribute paths.
fn query(config: &Value) -> Result<Query, Diagnostics> {
    let mut diags = Diagnostics::new();
    let bridge = config.get_attr("bridge").as_str().map(str::to_string);
    if let Some(b) = &bridge
        && (b.is_empty() || label_value(b).is_err())
    {
        diags.attribute_error(
            AttributePath::attr("bridge"),
            "Invalid bridge name",
            format!(
                "bridge {b:?} is not a possible bridge name: a bridge's name is a label value (1-63 alphanumerics, \
                 '-', '_' or '.', starting and ending alphanumeric)."
            ),
        );
    }
    let owned_only = config.get_attr("owned_only").as_bool();
    if bridge.is_none() && owned_only == Some(true) {
        diags.attribute_error(
            AttributePath::attr("owned_only"),
            "owned_only needs bridge",
            "owned_only = true lists the SveltosClusters a bridge owns: set bridge to that bridge's name.",
        );
    }
    let claim_namespace = config.get_attr("claim_namespace").as_str();
    if let Some(ns) = claim_namespace
        && crate::bridge::names::dns1123_label(ns).is_err()
    {
        diags.attribute_error(
            AttributePath::attr("claim_namespace"),
            "Invalid claim namespace",
            format!("claim_namespace {ns:?} is not a namespace name (a DNS-1123 label)."),
        );
    }
    let instance_id = config.get_attr("instance_id").as_str().map(str::to_string);
    if instance_id.is_some() && bridge.is_none() {
        diags.attribute_error(
            AttributePath::attr("instance_id"),
            "instance_id needs bridge",
            "instance_id pins the claim of a bridge: set bridge to that bridge's name.",
        );
    }
    let namespaces = crate::provider::blocks::selection::namespaces(config, &mut diags);
    let label_selector = crate::provider::blocks::selection::label_selector(config, &mut diags);
    if diags.has_errors() {
        return Err(diags);
    }
    Ok(Query {
        claim_namespace: claim_namespace
            .unwrap_or(crate::bridge::ownership::DEFAULT_CLAIM_NAMESPACE)
            .to_string(),
        claim_namespace_set: claim_namespace.is_some(),
        instance_id,
        owned_only: bridge.is_some() && owned_only.unwrap_or(true),
        bridge,
        namespaces,
        label_selector,
    })
}

/// The expiry a bridge recorded on a Secret's metadata, when it is a valid RFC 3339 timestamp (anything else
/// written there is not reported).
fn recorded_expiry(meta: &ObjectMeta) -> Option<String> {
    meta.annotations
        .as_ref()?
        .get(keys::EXPIRES_ANNOTATION)
        .filter(|v| v.parse::<jiff::Timestamp>().is_ok())
        .cloned()
}

/// The selected clusters as `clusters` elements, ordered by namespace and name. `secrets` holds the metadata of
/// candidate kubeconfig Secrets of `q.bridge` (empty without a bridge), `ownership` what its claim tells.
fn cluster_values(
    q: &Query,
    clusters: &[SveltosCluster],
    secrets: &[ObjectMeta],
    ownership: &BridgeOwnership,
) -> Vec<Value> {
    let bridge = q.bridge.as_deref();
    let expiries: BTreeMap<(&str, &str), Option<String>> = match bridge {
        Some(b) => secrets
            .iter()
            .filter(|m| labelled_for(m, b))
            .map(|m| {
                (
                    (
                        m.namespace.as_deref().unwrap_or_default(),
                        m.name.as_deref().unwrap_or_default(),
                    ),
                    recorded_expiry(m),
                )
            })
            .collect(),
        None => BTreeMap::new(),
    };
    let mut selected: Vec<(String, String, &SveltosCluster, Option<bool>)> = clusters
        .iter()
        .filter_map(|sc| {
            let owned = bridge.and_then(|b| ownership.owns(&sc.metadata, b));
            if q.owned_only && owned != Some(true) {
                return None;
            }
            let empty = BTreeMap::new();
            let labels = sc.metadata.labels.as_ref().unwrap_or(&empty);
            if q.label_selector
                .as_ref()
                .is_some_and(|s| !s.matches(labels))
            {
                return None;
            }
            Some((
                sc.metadata.namespace.clone().unwrap_or_default(),
                sc.metadata.name.clone().unwrap_or_default(),
                sc,
                owned,
            ))
        })
        .collect();
    selected.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    selected
        .into_iter()
        .map(|(ns, name, sc, owned)| {
            let status = sc.status.clone().unwrap_or_default();
            let expires = if owned == Some(true) {
                expiries
                    .get(&(ns.as_str(), secret_name(&name).as_str()))
                    .cloned()
                    .flatten()
            } else {
                None
            };
            let opt = |s: Option<String>| s.map(Value::string).unwrap_or_else(Value::null);
            Value::object([
                ("id", Value::string(format!("{ns}/{name}"))),
                ("name", Value::string(name)),
                ("namespace", Value::string(ns)),
                (
                    "labels",
                    Value::string_map(sc.metadata.labels.clone().unwrap_or_default()),
                ),
                ("ready", Value::bool(status.ready.unwrap_or(false))),
                ("connection_status", opt(status.connection_status)),
                ("failure_message", opt(status.failure_message)),
                ("version", opt(status.version)),
                ("paused", Value::bool(sc.spec.paused.unwrap_or(false))),
                ("credential_expires_at", opt(expires)),
                ("owned", owned.map(Value::bool).unwrap_or_else(Value::null)),
            ])
        })
        .collect()
}

/// What one read found: the SveltosClusters of `q`'s namespaces and, with a bridge, the metadata of its candidate
/// kubeconfig Secrets there and what its claim tells.
struct Found {
    clusters: Vec<SveltosCluster>,
    secrets: Vec<ObjectMeta>,
    ownership: BridgeOwnership,
}

/// Reads what `q` needs: a number of requests that does not depend on the number of clusters.
async fn read_objects(client: &kube::Client, q: &Query) -> Result<Found, Diagnostic> {
    let read_failed = |e: IoError| {
        Diagnostic::error(
            "Cannot read SveltosClusters",
            format!(
                "{e}. Check that the management cluster is reachable with the provider's configuration and that \
                 the SveltosCluster CRD is installed."
            ),
        )
    };
    let clusters: Vec<SveltosCluster> = io::list(client, &q.namespaces, None)
        .await
        .map_err(read_failed)?;
    let (secrets, ownership) = match &q.bridge {
        Some(b) if !clusters.is_empty() => {
            let secrets =
                io::list_metadata_matching::<Secret>(client, &q.namespaces, &owner_prefilter(b))
                    .await
                    .map_err(read_failed)?;
            let (ownership, instance) = BridgeOwnership::read(client, &q.claim_namespace, b)
                .await
                .map_err(|e| {
                    Diagnostic::error(
                        "Cannot read the bridge's claim",
                        format!(
                            "{e}. Which SveltosClusters bridge {b:?} owns is recorded in its claim, ConfigMap \
                             {}/{}: the provider's identity needs `get` on ConfigMaps there (set \
                             `claim_namespace` if the bridge sets it).",
                            q.claim_namespace,
                            crate::bridge::ownership::claim_name(b)
                        ),
                    )
                    .with_attribute(AttributePath::attr("claim_namespace"))
                })?;
            check_instance(q, b, instance.as_deref())?;
            (secrets, ownership)
        }
        _ => (Vec::new(), BridgeOwnership::NoClaim),
    };
    Ok(Found {
        clusters,
        secrets,
        ownership,
    })
}

/// An error when `instance_id` pins the claim and the claim of bridge `bridge` holds another instance (or there
/// is none: `found` is `None`).
fn check_instance(q: &Query, bridge: &str, found: Option<&str>) -> Result<(), Diagnostic> {
    let Some(pinned) = &q.instance_id else {
        return Ok(());
    };
    if found == Some(pinned.as_str()) {
        return Ok(());
    }
    let claim = format!(
        "{}/{}",
        q.claim_namespace,
        crate::bridge::ownership::claim_name(bridge)
    );
    let what = match found {
        Some(other) => format!("holds instance {other:?}"),
        None => "does not exist".to_string(),
    };
    Err(Diagnostic::error(
        "Not this bridge's claim",
        format!(
            "instance_id is {pinned:?}, but the claim of bridge {bridge:?}, ConfigMap {claim}, {what}: set \
             claim_namespace to the bridge's own, and instance_id from the bridge's state."
        ),
    )
    .with_attribute(AttributePath::attr("instance_id")))
}

/// The warning of a bridge whose ownership cannot be told.
fn unknown_ownership(q: &Query) -> Diagnostic {
    Diagnostic::warning(
        "Ownership unknown",
        format!(
            "The claim of bridge {:?} ({}/{}) holds no copy of what the bridge owns that can be read: the bridge \
             was last applied by an earlier version of the provider, its last applies died before they \
             finished, or the copy does not fit in the claim (some 20,000 clusters). `owned` is null and \
             `owned_only = true` lists nothing until an apply of the bridge finishes with this version.",
            q.bridge.as_deref().unwrap_or_default(),
            q.claim_namespace,
            crate::bridge::ownership::claim_name(q.bridge.as_deref().unwrap_or_default()),
        ),
    )
}

/// The warning of SveltosClusters carrying the label of a bridge that has no claim in `claim_namespace`.
fn no_claim(q: &Query, labelled: usize) -> Diagnostic {
    let bridge = q.bridge.as_deref().unwrap_or_default();
    Diagnostic::warning(
        "No claim for this bridge",
        format!(
            "{labelled} SveltosCluster(s) carry the label of bridge {bridge:?}, but there is no claim \
             {}/{}: none of them is reported as owned. If the bridge sets claim_namespace, set the same here \
             (and instance_id, to make this an error).",
            q.claim_namespace,
            crate::bridge::ownership::claim_name(bridge),
        ),
    )
    .with_attribute(AttributePath::attr("claim_namespace"))
}

#[async_trait]
impl DataSource for SveltosClustersDataSource {
    fn type_name(&self) -> &'static str {
        "sveltos_clusters"
    }

    fn schema(&self) -> Schema {
        schema()
    }

    async fn validate(&self, config: &Value) -> Diagnostics {
        let known = known_only(
            config,
            &[
                "bridge",
                "claim_namespace",
                "instance_id",
                "owned_only",
                "namespaces",
                "label_selector",
            ],
        );
        query(&known).err().unwrap_or_default()
    }

    async fn read(&self, req: DataReadRequest) -> DataReadResponse {
        let schema = schema();
        if let Some(resp) = unknown_config(&schema, &req) {
            return resp;
        }
        let config = &req.config;
        let q = match query(config) {
            Ok(q) => q,
            Err(d) => return failed(config, d),
        };
        let client = match self.state.client(req.client) {
            Ok(c) => c,
            Err(why) => return super::profile_value::not_ready(&schema, config, why),
        };
        let found = match read_objects(&client, &q).await {
            Ok(v) => v,
            Err(d) => return failed(config, d.into()),
        };
        let list = cluster_values(&q, &found.clusters, &found.secrets, &found.ownership);
        tracing::debug!(
            listed = found.clusters.len(),
            secrets = found.secrets.len(),
            selected = list.len(),
            "read SveltosClusters"
        );
        let mut diagnostics = Diagnostics::new();
        match (&found.ownership, q.bridge.as_deref()) {
            (BridgeOwnership::Unknown, _) => diagnostics.push(unknown_ownership(&q)),
            (BridgeOwnership::NoClaim, Some(b)) => {
                let labelled = found
                    .clusters
                    .iter()
                    .filter(|sc| labelled_for(&sc.metadata, b))
                    .count();
                if labelled > 0 {
                    diagnostics.push(no_claim(&q, labelled));
                }
            }
            _ => {}
        }
        let mut state = config.clone();
        state.set_attr("id", Value::string(q.id()));
        state.set_attr("clusters", Value::List(list));
        DataReadResponse {
            state,
            diagnostics,
            ..DataReadResponse::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{SveltosClusterSpec, SveltosClusterStatus};

    fn meta(ns: &str, name: &str, labels: &[(&str, &str)]) -> ObjectMeta {
        ObjectMeta {
            namespace: Some(ns.into()),
            name: Some(name.into()),
            labels: Some(
                labels
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            ..Default::default()
        }
    }

    fn cluster(ns: &str, name: &str, labels: &[(&str, &str)]) -> SveltosCluster {
        let mut sc = SveltosCluster::new(name, SveltosClusterSpec::default());
        sc.metadata = meta(ns, name, labels);
        sc.metadata.uid = Some(format!("uid-{ns}/{name}"));
        sc
    }

    fn secret(ns: &str, cluster: &str, bridge: &str, expiry: Option<&str>) -> ObjectMeta {
        let mut m = meta(ns, &secret_name(cluster), &[(keys::BRIDGE_LABEL, bridge)]);
        m.annotations =
            expiry.map(|e| BTreeMap::from([(keys::EXPIRES_ANNOTATION.into(), e.into())]));
        m
    }

    fn q(config: Value) -> Query {
        query(&config).unwrap()
    }

    /// The ownership a claim records for `ids` (`namespace/name`, each with UID `uid-<namespace/name>`).
    fn recorded(ids: &[&str]) -> BridgeOwnership {
        let key = crate::bridge::ownership::RunKey::new([4; 32]);
        let mut ledger = crate::bridge::ownership::Ledger::default();
        for id in ids {
            ledger.record(
                crate::bridge::ownership::Kind::SveltosCluster,
                id,
                &format!("uid-{id}"),
            );
        }
        let mut claim = crate::bridge::ownership::Claim::new("i".into(), None);
        claim.ledger_copy =
            Some(crate::bridge::ledger_copy::LedgerCopy::of(&ledger, &key).encode());
        claim.keys = vec![key];
        BridgeOwnership::from_claim(Some(claim))
    }

    #[test]
    fn filters_validation_and_id() {
        let cfg = Value::object([
            ("bridge", Value::string("fleet")),
            ("namespaces", Value::string_list(["b", "a", "b"])),
            ("label_selector", Value::string("env in (prod),!legacy")),
        ]);
        let got = q(cfg);
        assert!(got.owned_only, "owned_only defaults to true with a bridge");
        assert_eq!(got.namespaces, vec!["a".to_string(), "b".to_string()]);
        assert_eq!(
            got.id(),
            "bridge=fleet;owned_only=true;namespaces=a,b;label_selector=env in (prod),!legacy"
        );
        assert!(!q(Value::object([("bridge", Value::Null)])).owned_only);
        for (cfg, path) in [
            (
                Value::object([("label_selector", Value::string("env in (prod"))]),
                "label_selector",
            ),
            (
                Value::object([("bridge", Value::string("not a label value"))]),
                "bridge",
            ),
            (Value::object([("bridge", Value::string(""))]), "bridge"),
            (
                Value::object([("owned_only", Value::bool(true))]),
                "owned_only",
            ),
            (
                Value::object([("namespaces", Value::string_list([""]))]),
                "namespaces",
            ),
        ] {
            let d = query(&cfg).unwrap_err();
            let first = d.iter().next().unwrap();
            let at = first
                .attribute
                .as_ref()
                .and_then(|p| p.steps().first().cloned());
            assert_eq!(
                at,
                AttributePath::attr(path).steps().first().cloned(),
                "{cfg:?}"
            );
        }
    }

    #[test]
    fn values_report_status_ownership_and_recorded_expiry() {
        let mut ready = cluster(
            "n1",
            "ready",
            &[(keys::BRIDGE_LABEL, "fleet"), ("env", "prod")],
        );
        ready.status = Some(SveltosClusterStatus {
            ready: Some(true),
            version: Some("v1.37.2".into()),
            connection_status: Some("Healthy".into()),
            ..Default::default()
        });
        ready.spec.paused = Some(true);
        let mut down = cluster("n1", "down", &[(keys::BRIDGE_LABEL, "fleet")]);
        down.status = Some(SveltosClusterStatus {
            ready: Some(false),
            connection_status: Some("Down".into()),
            failure_message: Some("dial tcp: refused".into()),
            ..Default::default()
        });
        let fresh = cluster("n0", "fresh", &[(keys::BRIDGE_LABEL, "fleet")]);
        let foreign = cluster("n1", "foreign", &[(keys::BRIDGE_LABEL, "other")]);
        // Carries the bridge's label, but the bridge never created it.
        let impostor = cluster("n1", "impostor", &[(keys::BRIDGE_LABEL, "fleet")]);
        let clusters = [ready, down, fresh, foreign, impostor];
        let fleet = recorded(&["n1/ready", "n1/down", "n0/fresh"]);
        let secrets = [
            secret("n1", "ready", "fleet", Some("2030-01-02T03:04:05Z")),
            secret("n1", "down", "fleet", Some("not a time")),
            // The foreign cluster's Secret carries our label: its expiry is still not reported.
            secret("n1", "foreign", "fleet", Some("2030-01-02T03:04:05Z")),
        ];

        let owned = cluster_values(
            &q(Value::object([("bridge", Value::string("fleet"))])),
            &clusters,
            &secrets,
            &fleet,
        );
        let ids: Vec<&str> = owned
            .iter()
            .map(|v| v.get_attr("id").as_str().unwrap())
            .collect();
        assert_eq!(ids, ["n0/fresh", "n1/down", "n1/ready"]);
        let fresh = &owned[0];
        assert_eq!(fresh.get_attr("ready").as_bool(), Some(false));
        assert!(fresh.get_attr("connection_status").is_null());
        assert!(fresh.get_attr("credential_expires_at").is_null());
        let down = &owned[1];
        assert_eq!(
            down.get_attr("failure_message").as_str(),
            Some("dial tcp: refused")
        );
        assert!(
            down.get_attr("credential_expires_at").is_null(),
            "an invalid recorded expiry is not reported"
        );
        let ready = &owned[2];
        assert_eq!(ready.get_attr("ready").as_bool(), Some(true));
        assert_eq!(
            ready.get_attr("connection_status").as_str(),
            Some("Healthy")
        );
        assert_eq!(ready.get_attr("version").as_str(), Some("v1.37.2"));
        assert_eq!(ready.get_attr("paused").as_bool(), Some(true));
        assert_eq!(ready.get_attr("owned").as_bool(), Some(true));
        assert_eq!(
            ready.get_attr("credential_expires_at").as_str(),
            Some("2030-01-02T03:04:05Z")
        );
        assert_eq!(ready.get_attr("labels").as_string_map()["env"], "prod");

        let all = cluster_values(
            &q(Value::object([
                ("bridge", Value::string("fleet")),
                ("owned_only", Value::bool(false)),
                (
                    "label_selector",
                    Value::string("sveltos.clusterinventory.io/bridge"),
                ),
            ])),
            &clusters,
            &secrets,
            &fleet,
        );
        let impostor = all
            .iter()
            .find(|v| v.get_attr("id").as_str() == Some("n1/impostor"))
            .expect("listed with owned_only = false");
        assert_eq!(impostor.get_attr("owned").as_bool(), Some(false));
        let unknown = cluster_values(
            &q(Value::object([
                ("bridge", Value::string("fleet")),
                ("owned_only", Value::bool(false)),
            ])),
            &clusters,
            &secrets,
            &BridgeOwnership::Unknown,
        );
        let owned_of = |id: &str| {
            unknown
                .iter()
                .find(|v| v.get_attr("id").as_str() == Some(id))
                .map(|v| v.get_attr("owned").clone())
        };
        assert_eq!(owned_of("n1/ready"), Some(Value::Null), "cannot tell");
        assert_eq!(owned_of("n1/foreign"), Some(Value::bool(false)));
        let foreign = all
            .iter()
            .find(|v| v.get_attr("id").as_str() == Some("n1/foreign"))
            .expect("listed with owned_only = false");
        assert_eq!(foreign.get_attr("owned").as_bool(), Some(false));
        assert!(foreign.get_attr("credential_expires_at").is_null());

        let anonymous = cluster_values(
            &q(Value::object([(
                "label_selector",
                Value::string("env=prod"),
            )])),
            &clusters,
            &[],
            &BridgeOwnership::NoClaim,
        );
        assert_eq!(anonymous.len(), 1);
        assert!(anonymous[0].get_attr("owned").is_null());
        assert!(anonymous[0].get_attr("credential_expires_at").is_null());
    }

    #[test]
    fn values_match_the_object_type() {
        let Type::Object { attributes, .. } = cluster_object_type() else {
            panic!("not an object type");
        };
        let v = cluster_values(
            &q(Value::object([("bridge", Value::string("b"))])),
            &[cluster("n", "c", &[(keys::BRIDGE_LABEL, "b")])],
            &[],
            &recorded(&["n/c"]),
        );
        let got: Vec<&String> = v[0].as_map().unwrap().keys().collect();
        let want: Vec<&String> = attributes.keys().collect();
        assert_eq!(got, want);
    }
}
