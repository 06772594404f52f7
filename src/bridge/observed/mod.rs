//! What exists: the objects a bridge owns, read back into state entries, and the objects it must not touch.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::{
    api::core::v1::Secret,
    apimachinery::pkg::apis::meta::v1::{ManagedFieldsEntry, ObjectMeta},
};

use super::{
    CREDENTIAL_CONFIG_ANNOTATION, CREDENTIAL_SOURCE_ANNOTATION, FIELD_MANAGER, SECRET_KEY,
    SECRET_SUFFIX,
    desired::{ClusterEntry, config_sha256},
    ownership::{Kind, Ledger},
    sha256_hex,
};
use crate::api::{SveltosCluster, keys};

/// A bridged Secret as found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ObservedSecret {
    /// `namespace/name`.
    pub id: String,
    /// The API server's UID.
    pub uid: Option<String>,
    /// SHA-256 of its `kubeconfig` value (`None` if the key is missing).
    pub kubeconfig_sha256: Option<String>,
    /// With the token-renewal annotation: the hash annotation of the source credential the bridge last wrote
    /// (Sveltos rewrites the data on renewal). Trusted only for clusters whose renewal the configuration asks for
    /// ([`ObservedSecret::sha`]): anyone who can annotate the Secret could otherwise hide a swapped kubeconfig.
    pub renewed_sha256: Option<String>,
    /// Recorded expiry.
    pub expires_at: Option<String>,
    /// Recorded credential source.
    pub credential_source: Option<String>,
    /// Recorded exec-provider settings hash.
    pub credential_config_sha256: Option<String>,
}

impl ObservedSecret {
    /// The hash to compare with what the bridge would write: the renewal annotation's when the configuration asks
    /// Sveltos to renew this cluster's credentials (`renewal`) and the Secret carries it, the data's otherwise.
    pub fn sha(&self, renewal: bool) -> Option<&String> {
        match (&self.renewed_sha256, renewal) {
            (Some(annotated), true) => Some(annotated),
            _ => self.kubeconfig_sha256.as_ref(),
        }
    }
}

/// A bridged SveltosCluster as found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ObservedCluster {
    /// `namespace/name`.
    pub id: String,
    /// The API server's UID.
    pub uid: Option<String>,
    /// Labels our field manager owns (without the ownership label).
    pub labels: BTreeMap<String, String>,
    /// Hash of the managed fields as they are.
    pub config_sha256: String,
    /// The bridge-config record it carries.
    pub record: Option<String>,
    /// Top-level `spec` fields our field manager owns.
    pub owned_spec: BTreeSet<String>,
    /// Fields of `spec.tokenRequestRenewalOption` our field manager owns.
    pub owned_renewal: BTreeSet<String>,
    /// The token renewal settings it was written with (the annotation), if Sveltos renews its credentials.
    pub renewal: Option<String>,
}

/// Both objects of one bridged profile, as found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BridgedObjects {
    /// The SveltosCluster, if it exists.
    pub sveltos_cluster: Option<ObservedCluster>,
    /// The Secret, if it exists.
    pub secret: Option<ObservedSecret>,
}

impl BridgedObjects {
    /// The state entry describing what exists; `renewal`: the configuration asks Sveltos to renew this cluster's
    /// credentials (see [`ObservedSecret::sha`]).
    pub fn entry(&self, renewal: bool) -> ClusterEntry {
        let sc = self.sveltos_cluster.as_ref();
        let secret = self.secret.as_ref();
        ClusterEntry {
            sveltos_cluster: sc.map(|s| s.id.clone()),
            secret: secret.map(|s| s.id.clone()),
            credential_source: secret
                .and_then(|s| s.credential_source.clone())
                .unwrap_or_default(),
            kubeconfig_sha256: secret.and_then(|s| s.sha(renewal).cloned()),
            credential_expires_at: secret.and_then(|s| s.expires_at.clone()),
            labels: sc.map(|s| s.labels.clone()).unwrap_or_default(),
            config_sha256: sc.map(|s| s.config_sha256.clone()).unwrap_or_default(),
            credential_pending: false,
        }
    }
}

/// Everything relevant that exists, for one bridge.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    /// Objects owned by this bridge, by profile key `namespace/name`.
    pub owned: BTreeMap<String, BridgedObjects>,
    /// SveltosClusters (`namespace/name`) that exist and are not owned by this bridge, with their owner bridge.
    pub foreign_clusters: BTreeMap<String, Option<String>>,
    /// Secrets (`namespace/name`) that exist and are not owned by this bridge, with their owner bridge.
    pub foreign_secrets: BTreeMap<String, Option<String>>,
    /// Bridge-configuration records found on owned SveltosClusters (sorted by cluster key).
    pub records: Vec<String>,
    /// Objects (`"<Kind> namespace/name"`) that carry this bridge's ownership label but whose UID it never
    /// recorded: someone else made them. Never updated or deleted.
    pub impostors: BTreeSet<String>,
}

fn id(meta: &ObjectMeta) -> String {
    format!(
        "{}/{}",
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default()
    )
}

/// The run mark an object carries (`crate::bridge::ownership::MARK_ANNOTATION`).
fn mark_of(meta: &ObjectMeta) -> Option<&str> {
    meta.annotations
        .as_ref()?
        .get(super::ownership::MARK_ANNOTATION)
        .map(String::as_str)
}

fn owner(meta: &ObjectMeta) -> Option<&str> {
    meta.labels
        .as_ref()?
        .get(keys::BRIDGE_LABEL)
        .map(String::as_str)
}

/// Whether a `managedFields` entry is our field manager's server-side apply.
fn is_ours(entry: &ManagedFieldsEntry) -> bool {
    entry.manager.as_deref() == Some(FIELD_MANAGER) && entry.operation.as_deref() == Some("Apply")
}

/// The field set at `path` below a `fieldsV1` value, if it is there.
fn fields_at<'a>(
    fields: &'a serde_json::Value,
    path: &[&str],
) -> Option<&'a serde_json::Map<String, serde_json::Value>> {
    path.iter()
        .try_fold(fields, |node, step| node.get(*step))?
        .as_object()
}

/// Keys under `f:<path[0]>` → `f:<path[1]>` … that our field manager owns through server-side apply.
fn owned_keys(managed: Option<&Vec<ManagedFieldsEntry>>, path: &[&str]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for entry in managed.into_iter().flatten().filter(|e| is_ours(e)) {
        let Some(fields) = entry.fields_v1.as_ref() else {
            continue;
        };
        if let Some(map) = fields_at(&fields.0, path) {
            out.extend(
                map.keys()
                    .filter_map(|k| k.strip_prefix("f:"))
                    .map(String::from),
            );
        }
    }
    out
}

/// The paths of our field manager's `fieldsV1` that [`observe_cluster`] reads: the keys one level below each.
const OWNED_PATHS: [&[&str]; 4] = [
    &["f:metadata", "f:labels"],
    &["f:metadata", "f:annotations"],
    &["f:spec"],
    &["f:spec", "f:tokenRequestRenewalOption"],
];

/// Shrinks a listed object's `managedFields` to what the bridge reads: only our field manager's `Apply` entries,
/// and of those only the keys under [`OWNED_PATHS`] (other managers' entries and deeper field sets go).
///
/// Objects are listed by the thousand and `managedFields` are most of their size once parsed; this runs on every
/// page as it arrives, so a plan's memory does not carry every other manager's field sets. Adoption reads the
/// object afresh (with all its entries) before it changes ownership.
pub fn compact_managed_fields(meta: &mut ObjectMeta) {
    let Some(entries) = meta.managed_fields.as_mut() else {
        return;
    };
    entries.retain(is_ours);
    for entry in entries.iter_mut() {
        let Some(fields) = entry.fields_v1.as_mut() else {
            continue;
        };
        let mut kept = serde_json::Map::new();
        for path in OWNED_PATHS {
            let Some(map) = fields_at(&fields.0, path) else {
                continue;
            };
            let keys: serde_json::Map<String, serde_json::Value> = map
                .keys()
                .filter(|k| k.starts_with("f:"))
                .map(|k| (k.clone(), serde_json::Value::Object(Default::default())))
                .collect();
            // Rebuild the path down to the kept keys.
            let mut at = &mut kept;
            for step in &path[..path.len() - 1] {
                at = at
                    .entry(step.to_string())
                    .or_insert_with(|| serde_json::Value::Object(Default::default()))
                    .as_object_mut()
                    .expect("built as objects");
            }
            at.insert(
                path[path.len() - 1].to_string(),
                serde_json::Value::Object(keys),
            );
        }
        fields.0 = serde_json::Value::Object(kept);
        entry.time = None;
    }
    if entries.is_empty() {
        meta.managed_fields = None;
    }
}

/// Reads a SveltosCluster the bridge owns.
pub fn observe_cluster(sc: &SveltosCluster) -> ObservedCluster {
    let managed = sc.metadata.managed_fields.as_ref();
    let own_labels = owned_keys(managed, &["f:metadata", "f:labels"]);
    let own_annotations = owned_keys(managed, &["f:metadata", "f:annotations"]);
    let own_spec = owned_keys(managed, &["f:spec"]);
    let pick = |m: Option<&BTreeMap<String, String>>,
                keys: &BTreeSet<String>|
     -> BTreeMap<String, String> {
        m.map(|m| {
            m.iter()
                .filter(|(k, _)| keys.contains(*k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default()
    };
    let mut labels = pick(sc.metadata.labels.as_ref(), &own_labels);
    labels.remove(keys::BRIDGE_LABEL);
    let annotations = pick(sc.metadata.annotations.as_ref(), &own_annotations);
    // Only spec fields we own count: a field someone else set (or took over) is theirs, and taking over one of
    // ours shows as drift because it leaves our set.
    let own = |f: &str| own_spec.contains(f);
    let s = &sc.spec;
    let spec = crate::api::SveltosClusterSpec {
        kubeconfig_name: s.kubeconfig_name.clone().filter(|_| own("kubeconfigName")),
        kubeconfig_key_name: s
            .kubeconfig_key_name
            .clone()
            .filter(|_| own("kubeconfigKeyName")),
        paused: s.paused.filter(|_| own("paused")),
        consecutive_failure_threshold: s
            .consecutive_failure_threshold
            .filter(|_| own("consecutiveFailureThreshold")),
        active_window: s.active_window.clone().filter(|_| own("activeWindow")),
        ..Default::default()
    };
    ObservedCluster {
        id: id(&sc.metadata),
        uid: sc.metadata.uid.clone(),
        labels,
        config_sha256: config_sha256(&annotations, &spec),
        record: annotations.get(super::BRIDGE_CONFIG_ANNOTATION).cloned(),
        owned_renewal: owned_keys(managed, &["f:spec", "f:tokenRequestRenewalOption"]),
        renewal: annotations.get(super::TOKEN_RENEWAL_ANNOTATION).cloned(),
        owned_spec: own_spec.clone(),
    }
}

/// Longest annotation value read back into an entry, in characters (a credential source names at most two
/// object names, a key and a context).
const ANNOTATION_SHOWN: usize = 1024;

/// Reads a Secret the bridge owns (hashing, never keeping, its kubeconfig).
pub fn observe_secret(secret: &Secret) -> ObservedSecret {
    let ann = secret.metadata.annotations.as_ref();
    // Annotations reach the refreshed state: whoever can patch the Secret can write anything there, so they are
    // escaped and bounded (what the bridge writes is short and printable, so it passes unchanged).
    let get = |k: &str| {
        ann.and_then(|a| a.get(k))
            .map(|v| super::text::shown(v, ANNOTATION_SHOWN))
    };
    // When Sveltos renews the credential it rewrites the Secret's data: the bridge then compares the source
    // credential it last wrote (its hash annotation), not what Sveltos put there; but only for clusters the
    // configuration renews (`ObservedSecret::sha`).
    let renewed = get(super::TOKEN_RENEWAL_ANNOTATION).is_some();
    ObservedSecret {
        id: id(&secret.metadata),
        uid: secret.metadata.uid.clone(),
        kubeconfig_sha256: secret
            .data
            .as_ref()
            .and_then(|d| d.get(SECRET_KEY))
            .map(|b| sha256_hex(&b.0)),
        renewed_sha256: renewed
            .then(|| get(keys::KUBECONFIG_SHA_ANNOTATION))
            .flatten(),
        expires_at: get(keys::EXPIRES_ANNOTATION),
        credential_source: get(CREDENTIAL_SOURCE_ANNOTATION),
        credential_config_sha256: get(CREDENTIAL_CONFIG_ANNOTATION),
    }
}

/// The profile key of an object the bridge wrote: its own namespace and name (without the Secret suffix). The
/// `…/cluster-profile` annotation is never used for this: whoever can patch the object can change it, and an
/// object keyed by it could shadow another cluster's and have its UID dropped from the ledger.
fn profile_key(meta: &ObjectMeta, strip: &str) -> String {
    let name = meta.name.as_deref().unwrap_or_default();
    format!(
        "{}/{}",
        meta.namespace.as_deref().unwrap_or_default(),
        name.strip_suffix(strip).unwrap_or(name)
    )
}

impl Observed {
    /// Builds the view for bridge `bridge` from the SveltosClusters and Secrets carrying its ownership label
    /// (Secrets with data): those the `ledger` says it owns are owned, the others are impostors; objects labelled
    /// for another bridge are skipped. Objects at names the bridge would create but does not own are added with
    /// [`Observed::add_foreign`].
    pub fn build(
        bridge: &str,
        ledger: &Ledger,
        clusters: &[SveltosCluster],
        owned_secrets: &[Secret],
    ) -> Self {
        let mut w = Observed::default();
        w.add_owned_clusters(bridge, ledger, clusters);
        w.add_owned_secrets(bridge, ledger, owned_secrets);
        w
    }

    /// Sorts objects listed with this bridge's label (metadata only): those that are the bridge's
    /// ([`Ledger::owns_marked`]) are returned, their bodies to be read and added with [`Observed::add_owned_clusters`]
    /// or [`Observed::add_owned_secrets`]; the others are impostors, known from their metadata alone (their bodies,
    /// whatever their number and size, are never read).
    pub fn sort_labelled(
        &mut self,
        bridge: &str,
        ledger: &Ledger,
        kind: Kind,
        listed: &[ObjectMeta],
    ) -> Vec<(String, String)> {
        let mut owned = Vec::new();
        for meta in listed.iter().filter(|m| owner(m) == Some(bridge)) {
            let object = id(meta);
            if ledger.owns_marked(kind, &object, meta.uid.as_deref(), mark_of(meta)) {
                owned.push((
                    meta.namespace.clone().unwrap_or_default(),
                    meta.name.clone().unwrap_or_default(),
                ));
            } else {
                self.impostors.insert(format!("{} {object}", kind.prefix()));
            }
        }
        owned
    }

    /// [`Observed::build`] one batch (a LIST page) of labelled SveltosClusters at a time.
    pub fn add_owned_clusters(
        &mut self,
        bridge: &str,
        ledger: &Ledger,
        clusters: &[SveltosCluster],
    ) {
        let w = self;
        for sc in clusters
            .iter()
            .filter(|sc| owner(&sc.metadata) == Some(bridge))
        {
            let sc_id = id(&sc.metadata);
            if !ledger.owns_marked(
                Kind::SveltosCluster,
                &sc_id,
                sc.metadata.uid.as_deref(),
                mark_of(&sc.metadata),
            ) {
                w.impostors.insert(format!("SveltosCluster {sc_id}"));
                continue;
            }
            w.owned
                .entry(profile_key(&sc.metadata, ""))
                .or_default()
                .sveltos_cluster = Some(observe_cluster(sc));
            if let Some(r) = sc
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(super::BRIDGE_CONFIG_ANNOTATION))
            {
                w.records.push(r.clone());
            }
        }
    }

    /// [`Observed::build`] one batch (a LIST page) of labelled Secrets at a time.
    pub fn add_owned_secrets(&mut self, bridge: &str, ledger: &Ledger, owned_secrets: &[Secret]) {
        let w = self;
        for s in owned_secrets
            .iter()
            .filter(|s| owner(&s.metadata) == Some(bridge))
        {
            let s_id = id(&s.metadata);
            if !ledger.owns_marked(
                Kind::Secret,
                &s_id,
                s.metadata.uid.as_deref(),
                mark_of(&s.metadata),
            ) {
                w.impostors.insert(format!("Secret {s_id}"));
                continue;
            }
            w.owned
                .entry(profile_key(&s.metadata, SECRET_SUFFIX))
                .or_default()
                .secret = Some(observe_secret(s));
        }
    }

    /// Joins what two partial views found: `other`'s Secrets (and impostors) into this one's SveltosClusters.
    pub fn join(&mut self, other: Observed) {
        for (key, o) in other.owned {
            let mine = self.owned.entry(key).or_default();
            if o.sveltos_cluster.is_some() {
                mine.sveltos_cluster = o.sveltos_cluster;
            }
            if o.secret.is_some() {
                mine.secret = o.secret;
            }
        }
        self.records.extend(other.records);
        self.impostors.extend(other.impostors);
        self.foreign_clusters.extend(other.foreign_clusters);
        self.foreign_secrets.extend(other.foreign_secrets);
    }

    /// Records objects found at names the bridge would create and does not own: owned by another bridge
    /// (`Some(name)`), carrying this bridge's label without being its own (`Some(this bridge)`: an impostor), or
    /// made by someone the provider does not know (`None`). Objects whose UID the ledger recorded are the
    /// bridge's own, whatever their labels say.
    pub fn add_foreign(
        &mut self,
        ledger: &Ledger,
        clusters: &[ObjectMeta],
        secrets: &[ObjectMeta],
    ) {
        for (kind, metas, into) in [
            (Kind::SveltosCluster, clusters, &mut self.foreign_clusters),
            (Kind::Secret, secrets, &mut self.foreign_secrets),
        ] {
            for m in metas {
                if ledger.recorded(kind, &id(m), m.uid.as_deref()) {
                    continue;
                }
                into.insert(id(m), owner(m).map(String::from));
            }
        }
    }

    /// The ledger of what is observed to be owned: every owned object's UID (a legacy or imported ledger becomes a
    /// UID ledger here).
    pub fn ledger(&self) -> Ledger {
        let mut l = Ledger::default();
        for o in self.owned.values() {
            if let Some(sc) = &o.sveltos_cluster
                && let Some(uid) = &sc.uid
            {
                l.record(Kind::SveltosCluster, &sc.id, uid);
            }
            if let Some(s) = &o.secret
                && let Some(uid) = &s.uid
            {
                l.record(Kind::Secret, &s.id, uid);
            }
        }
        l
    }

    /// State entries for everything this bridge owns; `renewal` tells for a cluster key whether the
    /// configuration asks Sveltos to renew its credentials.
    pub fn entries(&self, renewal: impl Fn(&str) -> bool) -> BTreeMap<String, ClusterEntry> {
        self.owned
            .iter()
            .map(|(k, o)| (k.clone(), o.entry(renewal(k))))
            .collect()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::bridge::{
        BridgeSpec,
        credentials::CredentialSource,
        desired::{Material, desired},
        testutil::*,
    };
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1;

    #[test]
    fn annotations_a_tenant_rewrote_reach_the_entry_escaped_and_bounded() {
        let mut secret = Secret::default();
        secret.metadata.namespace = Some("ns".into());
        secret.metadata.name = Some("c-sveltos-kubeconfig".into());
        secret.metadata.annotations = Some(BTreeMap::from([
            (
                CREDENTIAL_SOURCE_ANNOTATION.to_string(),
                format!("\u{1b}[2J\u{1b}]0;pwned\u{7}{}", "x".repeat(200_000)),
            ),
            (keys::EXPIRES_ANNOTATION.to_string(), "2030\n01".into()),
        ]));
        let observed = observe_secret(&secret);
        let source = observed.credential_source.unwrap();
        assert!(
            !source.contains('\u{1b}') && !source.contains('\u{7}'),
            "{source}"
        );
        assert!(source.len() < 2 * ANNOTATION_SHOWN, "{}", source.len());
        assert_eq!(observed.expires_at.as_deref(), Some("2030\\n01"));
        // What the bridge writes itself passes unchanged.
        secret.metadata.annotations = Some(BTreeMap::from([(
            CREDENTIAL_SOURCE_ANNOTATION.to_string(),
            "labelled Secret ns/c-kubeconfig#value".to_string(),
        )]));
        assert_eq!(
            observe_secret(&secret).credential_source.as_deref(),
            Some("labelled Secret ns/c-kubeconfig#value")
        );
    }

    #[test]
    fn compacting_managed_fields_keeps_what_observation_reads() {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1;
        let entry = |manager: &str, op: &str, fields: serde_json::Value| ManagedFieldsEntry {
            manager: Some(manager.into()),
            operation: Some(op.into()),
            fields_v1: Some(FieldsV1(fields)),
            api_version: Some("lib.projectsveltos.io/v1beta1".into()),
            fields_type: Some("FieldsV1".into()),
            ..Default::default()
        };
        let ours = serde_json::json!({
            "f:metadata": {
                "f:labels": {".": {}, "f:env": {}, "f:sveltos.clusterinventory.io/bridge": {}},
                "f:annotations": {"f:a": {}},
                "f:finalizers": {".": {}, "v:\"x\"": {}}
            },
            "f:spec": {"f:kubeconfigName": {}, "f:activeWindow": {"f:from": {}, "f:to": {}}}
        });
        let mut sc = SveltosCluster::new("c", Default::default());
        sc.metadata.namespace = Some("ns".into());
        sc.metadata.labels = Some(BTreeMap::from([
            ("env".into(), "prod".into()),
            ("sveltos-agent".into(), "present".into()),
            (keys::BRIDGE_LABEL.into(), "b".into()),
        ]));
        sc.metadata.annotations = Some(BTreeMap::from([("a".into(), "1".into())]));
        sc.spec.kubeconfig_name = Some("c-sveltos-kubeconfig".into());
        sc.metadata.managed_fields = Some(vec![
            entry(
                "sveltos-controller",
                "Update",
                serde_json::json!({"f:metadata": {"f:labels": {"f:sveltos-agent": {}}}}),
            ),
            entry(FIELD_MANAGER, "Apply", ours),
            entry(FIELD_MANAGER, "Update", serde_json::json!({"f:status": {}})),
        ]);
        let before = observe_cluster(&sc);
        compact_managed_fields(&mut sc.metadata);
        let mf = sc.metadata.managed_fields.as_ref().unwrap();
        assert_eq!(mf.len(), 1, "only our Apply entry stays");
        assert_eq!(
            mf[0].fields_v1.as_ref().unwrap().0,
            serde_json::json!({
                "f:metadata": {
                    "f:labels": {"f:env": {}, "f:sveltos.clusterinventory.io/bridge": {}},
                    "f:annotations": {"f:a": {}}
                },
                "f:spec": {"f:kubeconfigName": {}, "f:activeWindow": {}}
            })
        );
        assert_eq!(observe_cluster(&sc), before, "observation is unchanged");

        // Objects nobody applied with our manager lose the field entirely.
        let mut other = SveltosCluster::new("d", Default::default());
        other.metadata.managed_fields = Some(vec![entry(
            "kubectl",
            "Apply",
            serde_json::json!({"f:spec": {}}),
        )]);
        compact_managed_fields(&mut other.metadata);
        assert!(other.metadata.managed_fields.is_none());
    }

    /// The `f:spec` ownership our apply of `sc` records.
    pub(crate) fn spec_fields(sc: &SveltosCluster) -> serde_json::Value {
        let v = serde_json::to_value(&sc.spec).unwrap();
        serde_json::Value::Object(
            v.as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| {
                    let sub = match v.as_object() {
                        Some(o) if k == "tokenRequestRenewalOption" => serde_json::Value::Object(
                            o.keys()
                                .map(|k| (format!("f:{k}"), serde_json::json!({})))
                                .collect(),
                        ),
                        _ => serde_json::json!({}),
                    };
                    (format!("f:{k}"), sub)
                })
                .collect(),
        )
    }

    /// Simulates what the API server records after our server-side apply of `obj`'s labels and annotations.
    fn applied(mut sc: SveltosCluster) -> SveltosCluster {
        let f = |m: &Option<BTreeMap<String, String>>| {
            serde_json::Value::Object(
                m.iter()
                    .flatten()
                    .map(|(k, _)| (format!("f:{k}"), serde_json::json!({})))
                    .collect(),
            )
        };
        sc.metadata.managed_fields = Some(vec![ManagedFieldsEntry {
            manager: Some(FIELD_MANAGER.into()),
            operation: Some("Apply".into()),
            fields_v1: Some(FieldsV1(serde_json::json!({
                "f:metadata": {"f:labels": f(&sc.metadata.labels), "f:annotations": f(&sc.metadata.annotations)},
                "f:spec": spec_fields(&sc)
            }))),
            ..Default::default()
        }]);
        sc
    }

    fn bridged() -> (BridgeSpec, crate::bridge::desired::DesiredCluster) {
        let spec = BridgeSpec {
            name: "main".into(),
            ..Default::default()
        };
        let p = profile("ns", "c1", &[("a", "1")]);
        let src = CredentialSource::LabelledSecret {
            namespace: "ns".into(),
            name: "s".into(),
            key: "Config".into(),
        };
        let material = Material::Bytes {
            bytes: KUBECONFIG.as_bytes().to_vec(),
            expires_at: None,
            config_sha256: None,
        };
        let d = desired(&spec, &p, &src, &material, false);
        (spec, d)
    }

    #[test]
    fn reading_back_what_was_written_gives_the_planned_entry() {
        let (_, d) = bridged();
        let mut sc = applied(d.sveltos_cluster.clone().unwrap());
        // Fields others write never show: the k8s-version label, status, foreign annotations.
        sc.metadata
            .labels
            .as_mut()
            .unwrap()
            .insert(keys::SVELTOS_K8S_VERSION_LABEL.into(), "v1.37.2".into());
        sc.metadata
            .annotations
            .as_mut()
            .unwrap()
            .insert("other".into(), "x".into());
        sc.status = Some(Default::default());
        let w = Observed::build(
            "main",
            &crate::bridge::ownership::Ledger::trusting(),
            &[sc],
            &[d.secret.clone().unwrap()],
        );
        assert_eq!(w.entries(|_| false)["ns/c1"], d.entry);
    }

    #[test]
    fn out_of_band_edits_show() {
        let (_, d) = bridged();
        let mut sc = applied(d.sveltos_cluster.clone().unwrap());
        sc.metadata
            .labels
            .as_mut()
            .unwrap()
            .insert("a".into(), "edited".into());
        // Someone else takes over kubeconfigName (an Update moves ownership away from us) ...
        sc.spec.kubeconfig_name = Some("theirs".into());
        let mf = &mut sc.metadata.managed_fields.as_mut().unwrap()[0];
        mf.fields_v1.as_mut().unwrap().0["f:spec"]
            .as_object_mut()
            .unwrap()
            .remove("f:kubeconfigName");
        let mut secret = d.secret.clone().unwrap();
        secret
            .data
            .as_mut()
            .unwrap()
            .get_mut("kubeconfig")
            .unwrap()
            .0 = b"other".to_vec();
        let w = Observed::build(
            "main",
            &crate::bridge::ownership::Ledger::trusting(),
            &[sc],
            &[secret],
        );
        let e = &w.entries(|_| false)["ns/c1"];
        assert_eq!(e.labels["a"], "edited");
        assert_ne!(e.config_sha256, d.entry.config_sha256);
        assert_ne!(e.kubeconfig_sha256, d.entry.kubeconfig_sha256);
    }

    #[test]
    fn fields_set_by_others_are_theirs() {
        let (_, d) = bridged();
        let mut sc = applied(d.sveltos_cluster.clone().unwrap());
        sc.spec.paused = Some(true);
        sc.spec.consecutive_failure_threshold = Some(7);
        let w = Observed::build(
            "main",
            &crate::bridge::ownership::Ledger::trusting(),
            &[sc],
            &[d.secret.clone().unwrap()],
        );
        assert_eq!(w.entries(|_| false)["ns/c1"], d.entry);
    }

    #[test]
    fn ownership_is_by_recorded_uid_not_by_label() {
        let (_, d) = bridged();
        let mut ours = d.sveltos_cluster.clone().unwrap();
        ours.metadata.uid = Some("uid-ours".into());
        let mut forged = d.sveltos_cluster.clone().unwrap();
        forged.metadata.name = Some("c3".into());
        forged.metadata.uid = Some("uid-forged".into());
        let mut other = d.sveltos_cluster.clone().unwrap();
        other.metadata.name = Some("c4".into());
        other
            .metadata
            .labels
            .as_mut()
            .unwrap()
            .insert(keys::BRIDGE_LABEL.into(), "other".into());
        let mut ledger = Ledger::default();
        ledger.record(Kind::SveltosCluster, "ns/c1", "uid-ours");
        // Attack: an object carrying this bridge's label that the bridge never created is an impostor.
        let w = Observed::build("main", &ledger, &[ours, forged.clone(), other.clone()], &[]);
        assert_eq!(w.owned.keys().collect::<Vec<_>>(), ["ns/c1"]);
        assert_eq!(
            w.impostors.iter().collect::<Vec<_>>(),
            ["SveltosCluster ns/c3"]
        );
        assert_eq!(w.ledger(), ledger);
        // At a name the bridge would create: foreign, whoever's label it carries.
        let mut unlabelled = d.sveltos_cluster.clone().unwrap();
        unlabelled.metadata.name = Some("c2".into());
        unlabelled.metadata.labels = None;
        let mut w = Observed::default();
        w.add_foreign(
            &ledger,
            &[other.metadata, unlabelled.metadata, forged.metadata],
            &[],
        );
        assert_eq!(w.foreign_clusters["ns/c4"], Some("other".into()));
        assert_eq!(w.foreign_clusters["ns/c2"], None);
        assert_eq!(w.foreign_clusters["ns/c3"], Some("main".into()));
    }

    #[test]
    fn half_written_cluster_reads_as_partial_entry() {
        let (_, d) = bridged();
        let w = Observed::build(
            "main",
            &crate::bridge::ownership::Ledger::trusting(),
            &[],
            &[d.secret.clone().unwrap()],
        );
        let e = &w.entries(|_| false)["ns/c1"];
        assert_eq!(e.sveltos_cluster, None);
        assert_eq!(e.secret.as_deref(), Some("ns/c1-sveltos-kubeconfig"));
    }
}
