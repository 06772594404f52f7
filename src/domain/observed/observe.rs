//! One object the bridge owns read back: what is observed of a SveltosCluster or a Secret.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::{api::core::v1::Secret, apimachinery::pkg::apis::meta::v1::ObjectMeta};

use super::{
    managed_fields::owned_keys,
    meta::id,
    objects::{ObservedCluster, ObservedSecret},
};
use crate::api::{SveltosCluster, keys};
use crate::domain::{CREDENTIAL_SOURCE_ANNOTATION, SECRET_KEY, desired::config_sha256, sha256_hex};

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
    let foreign_labels = foreign_label_keys(sc.metadata.labels.as_ref(), &own_labels);
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
        // Only the entries of `data` we own: a key someone else added is theirs.
        data: s.data.as_ref().filter(|_| own("data")).map(|d| {
            let ours = owned_keys(managed, &["f:spec", "f:data"]);
            d.iter()
                .filter(|(k, _)| ours.contains(*k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        }),
        readiness_checks: s
            .readiness_checks
            .clone()
            .filter(|_| own("readinessChecks")),
        liveness_checks: s.liveness_checks.clone().filter(|_| own("livenessChecks")),
        pull_mode: s.pull_mode.filter(|_| own("pullMode")),
        workload_identity: s
            .workload_identity
            .clone()
            .filter(|_| own("workloadIdentity")),
        ..Default::default()
    };
    ObservedCluster {
        id: id(&sc.metadata),
        uid: sc.metadata.uid.clone(),
        labels,
        config_sha256: config_sha256(&annotations, &spec),
        managed: crate::domain::managed_view::ManagedView::of(&annotations, &spec),
        record: annotations
            .get(crate::domain::BRIDGE_CONFIG_ANNOTATION)
            .cloned(),
        owned_renewal: owned_keys(managed, &["f:spec", "f:tokenRequestRenewalOption"]),
        renewal: annotations
            .get(crate::domain::TOKEN_RENEWAL_ANNOTATION)
            .cloned(),
        owned_spec: own_spec.clone(),
        terminating: sc.metadata.deletion_timestamp.is_some(),
        foreign_labels,
        removable_labels: BTreeSet::new(),
    }
}

/// The keys of the labels our field manager does not own (`own`), but for the ownership label and Sveltos' own
/// `projectsveltos.io/k8s-version` (sveltoscluster-manager writes it on every SveltosCluster).
fn foreign_label_keys(
    labels: Option<&BTreeMap<String, String>>,
    own: &BTreeSet<String>,
) -> BTreeSet<String> {
    labels
        .into_iter()
        .flatten()
        .map(|(k, _)| k)
        .filter(|k| !own.contains(*k))
        .filter(|k| *k != keys::BRIDGE_LABEL && *k != keys::SVELTOS_K8S_VERSION_LABEL)
        .cloned()
        .collect()
}

/// The keys of the labels of a SveltosCluster the bridge did not write (see [`foreign_label_keys`]): its
/// field manager's share of `managedFields` must have been kept while it was decoded.
pub fn labels_not_written(sc: &SveltosCluster) -> BTreeSet<String> {
    let own = owned_keys(
        sc.metadata.managed_fields.as_ref(),
        &["f:metadata", "f:labels"],
    );
    foreign_label_keys(sc.metadata.labels.as_ref(), &own)
}

/// Longest annotation value read back into an entry, in characters (a credential source names at most two
/// object names, a key and a context).
pub(super) const ANNOTATION_SHOWN: usize = 1024;

/// The annotations of a Secret labelled for a bridge that sorting it reads ([`super::Observed::sort_labelled`]):
/// the run mark, and what [`observe_secret_meta`] reads.
const SORTED_SECRET_ANNOTATIONS: [&str; 5] = [
    crate::domain::ownership::MARK_ANNOTATION,
    crate::domain::TOKEN_RENEWAL_ANNOTATION,
    keys::KUBECONFIG_SHA_ANNOTATION,
    keys::EXPIRES_ANNOTATION,
    CREDENTIAL_SOURCE_ANNOTATION,
];

/// The metadata of a Secret listed with a bridge's label reduced to what sorting it reads
/// ([`super::Observed::sort_labelled`]): its identity (namespace, name, UID, resourceVersion), the bridge label,
/// and [`SORTED_SECRET_ANNOTATIONS`], each cut to one character more than [`ANNOTATION_SHOWN`]. Sorting the
/// reduced metadata finds what sorting the whole would: an annotation is read back escaped and cut to
/// [`ANNOTATION_SHOWN`] characters, and no run mark is that long, so a cut one matches none, as it did whole. For
/// a reader that holds many of them before the ledger is known (`runtime::read_ahead::OwnedAhead`): what a
/// tenant adds to its Secrets' metadata is not held.
pub fn secret_meta_for_sorting(meta: ObjectMeta) -> ObjectMeta {
    let cut = |v: String| match v.char_indices().nth(ANNOTATION_SHOWN + 1) {
        Some((at, _)) => v[..at].to_string(),
        None => v,
    };
    let labels = meta.labels.map(|l| {
        l.into_iter()
            .filter(|(k, _)| k == keys::BRIDGE_LABEL)
            .collect()
    });
    let annotations = meta.annotations.map(|a| {
        a.into_iter()
            .filter(|(k, _)| SORTED_SECRET_ANNOTATIONS.contains(&k.as_str()))
            .map(|(k, v)| (k, cut(v)))
            .collect()
    });
    ObjectMeta {
        namespace: meta.namespace,
        name: meta.name,
        uid: meta.uid,
        resource_version: meta.resource_version,
        labels,
        annotations,
        ..Default::default()
    }
}

/// The bytes of text `meta` holds (names, UID, resourceVersion, labels and annotations): what holding it costs,
/// give or take the containers.
pub fn meta_text_bytes(meta: &ObjectMeta) -> usize {
    let text = |s: &Option<String>| s.as_ref().map_or(0, String::len);
    let map = |m: &Option<BTreeMap<String, String>>| {
        m.as_ref()
            .map_or(0, |m| m.iter().map(|(k, v)| k.len() + v.len()).sum())
    };
    text(&meta.namespace)
        + text(&meta.name)
        + text(&meta.uid)
        + text(&meta.resource_version)
        + map(&meta.labels)
        + map(&meta.annotations)
}

/// Reads a Secret the bridge owns (hashing, never keeping, its kubeconfig). What the ledger records of it is added
/// by the caller ([`ObservedSecret::written`]).
pub fn observe_secret(secret: &Secret) -> ObservedSecret {
    let sha = secret
        .data
        .as_ref()
        .and_then(|d| d.get(SECRET_KEY))
        .map(|b| sha256_hex(&b.0));
    observe_secret_meta(&secret.metadata, sha)
}

/// [`observe_secret`] of a Secret known by its metadata and the hash of its kubeconfig (`None`: no kubeconfig).
pub fn observe_secret_meta(meta: &ObjectMeta, kubeconfig_sha256: Option<String>) -> ObservedSecret {
    let ann = meta.annotations.as_ref();
    // Annotations reach the refreshed state: whoever can patch the Secret can write anything there, so they are
    // escaped and bounded (what the bridge writes is short and printable, so it passes unchanged).
    let get = |k: &str| {
        ann.and_then(|a| a.get(k))
            .map(|v| crate::domain::text::shown(v, ANNOTATION_SHOWN))
    };
    // When Sveltos renews the credential it rewrites the Secret's data: the bridge then compares the source
    // credential it last wrote (as its ledger records it; without a record, its hash annotation), not what Sveltos
    // put there; but only for clusters the configuration renews (`ObservedSecret::sha`).
    let renewed = get(crate::domain::TOKEN_RENEWAL_ANNOTATION).is_some();
    ObservedSecret {
        id: id(meta),
        uid: meta.uid.clone(),
        kubeconfig_sha256,
        renewed_sha256: renewed
            .then(|| get(keys::KUBECONFIG_SHA_ANNOTATION))
            .flatten(),
        expires_at: get(keys::EXPIRES_ANNOTATION),
        credential_source: get(CREDENTIAL_SOURCE_ANNOTATION),
        written: None,
    }
}
