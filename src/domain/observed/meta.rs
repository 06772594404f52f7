//! What the bridge reads of any object's metadata: its `namespace/name`, owner label, run mark and profile key.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::api::keys;

/// `namespace/name`.
pub(super) fn id(meta: &ObjectMeta) -> String {
    format!(
        "{}/{}",
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default()
    )
}

/// The run mark an object carries (`crate::domain::ownership::MARK_ANNOTATION`).
pub(super) fn mark_of(meta: &ObjectMeta) -> Option<&str> {
    meta.annotations
        .as_ref()?
        .get(crate::domain::ownership::MARK_ANNOTATION)
        .map(String::as_str)
}

pub(super) fn owner(meta: &ObjectMeta) -> Option<&str> {
    meta.labels
        .as_ref()?
        .get(keys::BRIDGE_LABEL)
        .map(String::as_str)
}

/// The profile key of an object the bridge wrote: its own namespace and name (without the Secret suffix). The
/// `…/cluster-profile` annotation is never used for this: whoever can patch the object can change it, and an
/// object keyed by it could shadow another cluster's and have its UID dropped from the ledger.
pub(super) fn profile_key(meta: &ObjectMeta, strip: &str) -> String {
    let name = meta.name.as_deref().unwrap_or_default();
    format!(
        "{}/{}",
        meta.namespace.as_deref().unwrap_or_default(),
        name.strip_suffix(strip).unwrap_or(name)
    )
}
