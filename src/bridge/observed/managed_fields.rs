//! Our field manager's share of `managedFields`: what it owns, and the rest compacted away as lists arrive.

use std::collections::BTreeSet;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ManagedFieldsEntry, ObjectMeta};

use crate::bridge::FIELD_MANAGER;

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
pub(super) fn owned_keys(
    managed: Option<&Vec<ManagedFieldsEntry>>,
    path: &[&str],
) -> BTreeSet<String> {
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
