//! The `clusters` elements of `sveltos_clusters`: each selected SveltosCluster with its status, whether the bridge
//! owns it, and the credential expiry the bridge recorded on its kubeconfig Secret.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::{
    super::ownership::{BridgeOwnership, labelled_for},
    query::Query,
};
use crate::{
    api::{SveltosCluster, keys},
    domain::{desired::secret_name, observed::labels_not_written},
    tfplugin::Value,
};

/// The expiry a bridge recorded on a Secret's metadata, when it is a valid RFC 3339 timestamp (anything else
/// written there is not reported).
fn recorded_expiry(meta: &ObjectMeta) -> Option<String> {
    meta.annotations
        .as_ref()?
        .get(keys::EXPIRES_ANNOTATION)
        .filter(|v| v.parse::<jiff::Timestamp>().is_ok())
        .cloned()
}

/// The expiry each kubeconfig Secret labelled for `bridge` records, by namespace and name (`None` when it records
/// none, or not a valid one).
fn recorded_expiries<'a>(
    secrets: &'a [ObjectMeta],
    bridge: &str,
) -> BTreeMap<(&'a str, &'a str), Option<String>> {
    secrets
        .iter()
        .filter(|m| labelled_for(m, bridge))
        .map(|m| {
            (
                (
                    m.namespace.as_deref().unwrap_or_default(),
                    m.name.as_deref().unwrap_or_default(),
                ),
                recorded_expiry(m),
            )
        })
        .collect()
}

/// A SveltosCluster the query selects, with whether `q.bridge` owns it (`None` when that is not known).
struct Selected<'a> {
    /// The SveltosCluster's namespace.
    namespace: String,
    /// The SveltosCluster's name.
    name: String,
    /// The SveltosCluster.
    cluster: &'a SveltosCluster,
    /// Whether the bridge owns it.
    owned: Option<bool>,
}

/// The clusters that pass the query's ownership and label filters, ordered by namespace and name.
fn selected<'a>(
    q: &Query,
    clusters: &'a [SveltosCluster],
    ownership: &BridgeOwnership,
) -> Vec<Selected<'a>> {
    let bridge = q.bridge.as_deref();
    let mut selected: Vec<Selected<'a>> = clusters
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
            Some(Selected {
                namespace: sc.metadata.namespace.clone().unwrap_or_default(),
                name: sc.metadata.name.clone().unwrap_or_default(),
                cluster: sc,
                owned,
            })
        })
        .collect();
    selected.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    selected
}

/// One `clusters` element: the SveltosCluster's identity, labels and status, whether the bridge owns it, and the
/// credential expiry `expires` (for a cluster the bridge owns).
fn cluster_value(selected: Selected<'_>, expires: Option<String>) -> Value {
    let Selected {
        namespace: ns,
        name,
        cluster: sc,
        owned,
    } = selected;
    let status = sc.status.clone().unwrap_or_default();
    let opt = |s: Option<String>| s.map(Value::string).unwrap_or_else(Value::null);
    // Label keys are checked by the API server (a prefix of at most 253 characters, a name of at most 63).
    let foreign = match owned {
        Some(true) => Value::string_list(labels_not_written(sc)),
        _ => Value::null(),
    };
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
        (
            "connection_failures",
            status
                .connection_failures
                .map(Value::int)
                .unwrap_or_else(Value::null),
        ),
        (
            "last_renewed_at",
            opt(status.last_reconciled_token_request_at),
        ),
        ("version", opt(status.version)),
        ("foreign_label_keys", foreign),
        ("paused", Value::bool(sc.spec.paused.unwrap_or(false))),
        ("credential_expires_at", opt(expires)),
        ("owned", owned.map(Value::bool).unwrap_or_else(Value::null)),
    ])
}

/// The selected clusters as `clusters` elements, ordered by namespace and name. `secrets` holds the metadata of
/// candidate kubeconfig Secrets of `q.bridge` (empty without a bridge), `ownership` what its claim tells.
pub(super) fn cluster_values(
    q: &Query,
    clusters: &[SveltosCluster],
    secrets: &[ObjectMeta],
    ownership: &BridgeOwnership,
) -> Vec<Value> {
    let expiries = match q.bridge.as_deref() {
        Some(b) => recorded_expiries(secrets, b),
        None => BTreeMap::new(),
    };
    selected(q, clusters, ownership)
        .into_iter()
        .map(|s| {
            let expires = if s.owned == Some(true) {
                expiries
                    .get(&(s.namespace.as_str(), secret_name(&s.name).as_str()))
                    .cloned()
                    .flatten()
            } else {
                None
            };
            cluster_value(s, expires)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::schema::cluster_object_type;
    use super::*;
    use crate::api::{SveltosClusterSpec, SveltosClusterStatus};
    use crate::tfplugin::Type;

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
        super::super::query::query(&crate::tfplugin::value::from_value(&config).unwrap()).unwrap()
    }

    /// The ownership a claim records for `ids` (`namespace/name`, each with UID `uid-<namespace/name>`).
    fn recorded(ids: &[&str]) -> BridgeOwnership {
        let key = crate::domain::ownership::RunKey::new([4; 32]);
        let mut ledger = crate::domain::ownership::Ledger::default();
        for id in ids {
            ledger.record(
                crate::domain::ownership::Kind::SveltosCluster,
                id,
                &format!("uid-{id}"),
            );
        }
        let mut claim = crate::domain::ownership::Claim::new("i".into(), None);
        claim.ledger_copy =
            Some(crate::domain::ledger_copy::LedgerCopy::of(&ledger, &key).encode());
        claim.keys = vec![key];
        BridgeOwnership::from_claim(Some(claim))
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
            connection_failures: Some(3),
            last_reconciled_token_request_at: Some("2026-12-05T10:00:00Z".into()),
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
        assert_eq!(down.get_attr("connection_failures"), &Value::int(3));
        assert_eq!(
            down.get_attr("last_renewed_at").as_str(),
            Some("2026-12-05T10:00:00Z")
        );
        assert!(fresh.get_attr("last_renewed_at").is_null());
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
