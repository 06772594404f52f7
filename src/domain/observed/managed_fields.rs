//! Our field manager's share of `managedFields`: what it owns, and everything else skipped while an object is
//! decoded ([`decode_managed_fields`]).

use std::collections::BTreeSet;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{FieldsV1, ManagedFieldsEntry};
use serde::de::{
    DeserializeSeed, Deserializer, Error as _, IgnoredAny, MapAccess, SeqAccess, Visitor,
};

use crate::domain::FIELD_MANAGER;

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

/// Whether the bridge reads the `managedFields` of objects of `kind`: only its SveltosClusters' (what it owns of
/// their labels, annotations and spec, [`observe_cluster`](super::observe_cluster)). Of every other kind
/// (ClusterProfiles, Secrets, their metadata) a LIST cuts `managedFields` out of each item unread: listed by the
/// ten thousand, decoding it was a large share of a plan's own work.
pub fn reads_managed_fields(kind: &str) -> bool {
    kind == "SveltosCluster"
}

/// The paths of our field manager's `fieldsV1` that [`observe_cluster`](super::observe_cluster) reads: the keys one
/// level below each.
const OWNED_PATHS: [&[&str]; 5] = [
    &["f:metadata", "f:labels"],
    &["f:metadata", "f:annotations"],
    &["f:spec"],
    &["f:spec", "f:tokenRequestRenewalOption"],
    &["f:spec", "f:data"],
];

/// Decodes the JSON text of an object's `metadata.managedFields` into what the bridge reads of it: only our field
/// manager's `Apply` entries, and of those only the keys under [`OWNED_PATHS`] (without `time`). Everything else is
/// skipped without being built: whoever can write the object writes its `managedFields` (the API server keeps a
/// client's entries, nested as deep as it likes), so nothing here recurses on its content. What is not on an
/// owned path is skipped by `serde_json`'s iterative skipping, which has no depth limit; the decoder itself goes at
/// most as deep as the longest owned path.
///
/// `None` for `null` or no entry of ours. Objects are listed by the thousand and `managedFields` are most of their
/// size once parsed, so this also keeps a plan's memory free of every other manager's field sets. Adoption reads
/// the object afresh (with all its entries) before it changes ownership.
pub fn decode_managed_fields(
    raw: &str,
) -> Result<Option<Vec<ManagedFieldsEntry>>, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(raw);
    let entries = serde::Deserializer::deserialize_option(&mut de, Entries)?;
    de.end()?;
    Ok(entries.filter(|e| !e.is_empty()))
}

/// `managedFields`: `null` or a list of entries, ours kept.
struct Entries;

impl<'de> Visitor<'de> for Entries {
    type Value = Option<Vec<ManagedFieldsEntry>>;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a list of managedFields entries")
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut kept = Vec::new();
        while let Some(entry) = seq.next_element_seed(Entry)? {
            kept.extend(entry.filter(is_ours));
        }
        Ok(Some(kept))
    }
}

/// One entry: its manager and operation (and the identifying strings), and of its `fieldsV1` the owned paths only.
struct Entry;

impl<'de> DeserializeSeed<'de> for Entry {
    type Value = Option<ManagedFieldsEntry>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Entry {
    type Value = Option<ManagedFieldsEntry>;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a managedFields entry")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut e = ManagedFieldsEntry::default();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            let slot = match key.as_ref() {
                "manager" => &mut e.manager,
                "operation" => &mut e.operation,
                "apiVersion" => &mut e.api_version,
                "fieldsType" => &mut e.fields_type,
                "subresource" => &mut e.subresource,
                "fieldsV1" => {
                    let kept = map.next_value_seed(Node(&[]))?;
                    e.fields_v1 = Some(FieldsV1(serde_json::Value::Object(
                        kept.unwrap_or_default(),
                    )));
                    continue;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            if slot.is_some() {
                return Err(A::Error::custom(format_args!(
                    "duplicate field `{key}` in a managedFields entry"
                )));
            }
            *slot = map.next_value::<Option<String>>()?;
        }
        Ok(Some(e))
    }
}

/// The field set at `path` (a prefix of some of [`OWNED_PATHS`]) below a `fieldsV1` value: the keys kept there (each
/// with an empty set, or with what is kept below it when it leads on to an owned path), `None` when the value is
/// not an object or, off the owned paths themselves, when nothing was kept.
#[derive(Clone, Copy)]
struct Node<'p>(&'p [&'static str]);

type Fields = serde_json::Map<String, serde_json::Value>;

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = Option<Fields>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = Option<Fields>;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a field set")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let owned = OWNED_PATHS.contains(&self.0);
        let mut kept = Fields::new();
        while let Some(key) = map.next_key::<String>()? {
            let next = OWNED_PATHS.iter().find(|p| {
                p.len() > self.0.len() && p.starts_with(self.0) && p[self.0.len()] == key
            });
            if let Some(path) = next {
                let below = map.next_value_seed(Node(&path[..=self.0.len()]))?;
                if let Some(below) = below {
                    kept.insert(key, serde_json::Value::Object(below));
                }
            } else {
                map.next_value::<IgnoredAny>()?;
                if owned && key.starts_with("f:") {
                    kept.insert(key, serde_json::Value::Object(Fields::new()));
                }
            }
        }
        Ok((owned || !kept.is_empty()).then_some(kept))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}
