//! The one way an object from the API server is decoded ([`decode_object`]): depth-safe, with `managedFields`
//! reduced to what the bridge reads while it is decoded; a LIST answer decoded item by item with it
//! ([`decode_items_capped`]), an item that does not decode set aside by name ([`Undecodable`]).
//!
//! Every object the provider reads may have been written by someone else (ClusterProfiles and Secrets by the
//! inventory's tenants, the bridge's own objects patched by them), and the API server keeps whatever a client
//! writes into `metadata.managedFields`, nested as deep as it likes. So no item is decoded as part of its list
//! (one item must not fail the others), and `managedFields` is never decoded as it stands: it is cut out of the
//! item's text and decoded by `crate::domain::observed::decode_managed_fields`, which keeps our field manager's
//! owned paths and skips everything else without recursing. Everything else in an item is skipped the same way
//! (as raw text) until the item is decoded as its type, whose fields are bounded by its schema.

use std::{borrow::Cow, collections::BTreeMap, marker::PhantomData};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use serde::de::{
    DeserializeOwned, DeserializeSeed, Deserializer, Error as _, IgnoredAny, MapAccess, SeqAccess,
    Visitor,
};
use serde_json::value::RawValue;

use crate::domain::observed::decode_managed_fields;

/// Page size of every paginated LIST, and the size of the batches LIST items are handed on in (here, where the
/// items are decoded, so that `list.rs`, which pages, uses this file and not the other way round).
pub const PAGE_SIZE: u32 = 500;

/// An item of a LIST (or the answer of a GET) that does not decode as the expected type: written by whoever can
/// write it, it is that object's problem, not the whole list's.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Undecodable {
    /// Its namespace, escaped and bounded for messages (empty when even that cannot be read).
    pub namespace: String,
    /// Its name, escaped and bounded for messages (empty when even that cannot be read).
    pub name: String,
    /// What could be read of its metadata, field by field (`namespace`, `name`, `uid`, `labels`, `annotations`;
    /// a field that does not decode is left out): enough to tell whose it is.
    pub meta: ObjectMeta,
    /// Why it does not decode: the decoder's message, escaped and bounded (it may quote the value, which whoever
    /// wrote the item chose).
    pub reason: String,
}

impl Undecodable {
    /// Undecodable items by `namespace/name`, with why.
    pub fn by_key(items: Vec<Undecodable>) -> BTreeMap<String, String> {
        items.into_iter().map(|u| (u.id(), u.reason)).collect()
    }

    /// `namespace/name`, as shown in messages.
    pub fn id(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// What is known of the object `raw` that did not decode (`e`).
    pub fn of(raw: &str, e: &serde_json::Error) -> Self {
        let meta = lenient_meta(raw);
        let shown =
            |s: &Option<String>| crate::domain::text::shown(s.as_deref().unwrap_or(""), 253);
        Undecodable {
            namespace: shown(&meta.namespace),
            name: shown(&meta.name),
            meta,
            reason: crate::domain::text::shown(&e.to_string(), 200),
        }
    }
}

impl Undecodable {
    /// What is kept of the object `raw`, longer than `cap.bytes`: its namespace, name and UID, and of its labels
    /// and annotations only those keyed in `cap.keep` (with values of at most 253 characters), never the bulk.
    pub fn oversized(raw: &str, cap: &ItemCap<'_>) -> Self {
        let mut meta = lenient_meta(raw);
        let keep = |m: Option<BTreeMap<String, String>>| {
            let kept: BTreeMap<String, String> = m
                .into_iter()
                .flatten()
                .filter(|(k, v)| cap.keep.contains(&k.as_str()) && v.len() <= 253)
                .collect();
            (!kept.is_empty()).then_some(kept)
        };
        meta.labels = keep(meta.labels.take());
        meta.annotations = keep(meta.annotations.take());
        let shown =
            |s: &Option<String>| crate::domain::text::shown(s.as_deref().unwrap_or(""), 253);
        Undecodable {
            namespace: shown(&meta.namespace),
            name: shown(&meta.name),
            meta,
            reason: format!(
                "it is {} bytes as the API server serves it, over the {} KiB the provider reads of one object \
                 (its labels, annotations or managedFields were made large)",
                raw.len(),
                cap.bytes >> 10
            ),
        }
    }
}

/// The most of one LIST item a bounded LIST decodes: an item longer than `bytes` is set aside as an
/// [`Undecodable`] ([`Undecodable::oversized`]) and not counted in the run's budget, so one object made large is its
/// own problem, not the run's.
#[derive(Debug, Clone, Copy)]
pub struct ItemCap<'k> {
    /// Most bytes of one item, as served.
    pub bytes: usize,
    /// The label and annotation keys kept of a longer item (enough to tell whose it is).
    pub keep: &'k [&'k str],
}

/// The metadata fields of `raw` that decode, each on its own (depth-safe: only `metadata`'s members are looked at,
/// and each is decoded as a string or a map of strings).
fn lenient_meta(raw: &str) -> ObjectMeta {
    let Ok(Some(meta)) = member(raw, "metadata") else {
        return ObjectMeta::default();
    };
    let field = |key: &str| member(meta.get(), key).ok().flatten();
    let string = |key: &str| field(key).and_then(|v| serde_json::from_str::<String>(v.get()).ok());
    let map = |key: &str| field(key).and_then(|v| serde_json::from_str(v.get()).ok());
    ObjectMeta {
        namespace: string("namespace"),
        name: string("name"),
        uid: string("uid"),
        labels: map("labels"),
        annotations: map("annotations"),
        ..Default::default()
    }
}

/// The value of member `key` of the JSON object `raw`, as raw text borrowed from `raw`; `None` when `raw` is not an
/// object or has no such member. Every other member is skipped without being built (no depth limit applies).
/// Two members named `key` are an error: a reader taking the first and one taking the last would disagree.
fn member<'a>(raw: &'a str, key: &str) -> Result<Option<&'a RawValue>, serde_json::Error> {
    struct Member<'k>(&'k str);
    impl<'de> Visitor<'de> for Member<'_> {
        type Value = Option<&'de RawValue>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut found = None;
            while let Some(k) = map.next_key::<Cow<'de, str>>()? {
                if k != self.0 {
                    map.next_value::<IgnoredAny>()?;
                } else if found.is_some() {
                    return Err(A::Error::custom(format_args!("duplicate field `{k}`")));
                } else {
                    found = Some(map.next_value::<&'de RawValue>()?);
                }
            }
            Ok(found)
        }
    }
    if !raw.trim_start().starts_with('{') {
        return Ok(None);
    }
    serde_json::Deserializer::from_str(raw).deserialize_map(Member(key))
}

/// The `kind` of the object `raw`, if it has one that is a string.
pub(super) fn kind_of(raw: &str) -> Option<String> {
    let kind = member(raw, "kind").ok()??;
    serde_json::from_str(kind.get()).ok()
}

/// Where `part` (a slice of `whole`) starts in `whole`.
fn offset_in(whole: &str, part: &str) -> Option<usize> {
    let start = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    (whole.get(start..start + part.len())? == part).then_some(start)
}

/// Decodes one object as the API server serves it, depth-safe: its `metadata.managedFields` is cut out of the text
/// and decoded on its own by [`decode_managed_fields`] (our field manager's owned paths only), the rest decoded as
/// `K`. An object whose `metadata` or `managedFields` appears twice is refused.
pub fn decode_object<K: DeserializeOwned + Resource>(raw: &str) -> Result<K, serde_json::Error> {
    decode_object_keeping::<K>(raw, true)
}

/// [`decode_object`], our field manager's share of `managedFields` kept only when `managed` (the objects of a kind
/// whose `managedFields` nobody reads, `crate::domain::observed::reads_managed_fields`, are not charged for it: the
/// list is still cut out unread, and the object decoded without it).
fn decode_object_keeping<K: DeserializeOwned + Resource>(
    raw: &str,
    managed: bool,
) -> Result<K, serde_json::Error> {
    let managed_text = match member(raw, "metadata")? {
        Some(meta) => member(meta.get(), "managedFields")?,
        None => None,
    };
    let Some(part) = managed_text.map(RawValue::get) else {
        return serde_json::from_str(raw);
    };
    let entries = if managed {
        decode_managed_fields(part)?
    } else {
        None
    };
    let start = offset_in(raw, part)
        .ok_or_else(|| serde_json::Error::custom("managedFields is not part of the object"))?;
    let mut text = String::with_capacity(raw.len() - part.len() + 4);
    text.push_str(&raw[..start]);
    text.push_str("null");
    text.push_str(&raw[start + part.len()..]);
    let mut object: K = serde_json::from_str(&text)?;
    object.meta_mut().managed_fields = entries;
    Ok(object)
}

/// What a LIST answer says besides its items: where the next page starts.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct ListMeta {
    /// The `continue` token of a paginated LIST (`None` on the last page).
    pub(super) next: Option<String>,
    /// The bytes of the items set aside for being longer than the [`ItemCap`].
    pub(super) oversized_bytes: usize,
}

/// Decodes the `items` of a LIST answer one by one, each with [`decode_object`], handing them to `each` in batches
/// of [`PAGE_SIZE`]; an item that does not decode is recorded in `bad` and skipped. `sizes` is told each item's
/// namespace (as far as it can be read) and the length of its text.
#[cfg(test)]
pub(super) fn decode_items<K: DeserializeOwned + Resource>(
    body: &str,
    each: &mut impl FnMut(Vec<K>),
    bad: &mut Vec<Undecodable>,
    sizes: &mut impl FnMut(&str, usize),
) -> Result<ListMeta, serde_json::Error> {
    let keep = Keep {
        cap: None,
        managed: true,
    };
    decode_items_capped(body, each, bad, sizes, keep)
}

/// What a LIST decodes of its items: each within `cap` (when set), and our field manager's share of their
/// `managedFields` only when `managed`.
#[derive(Clone, Copy)]
pub(super) struct Keep<'k> {
    pub(super) cap: Option<ItemCap<'k>>,
    pub(super) managed: bool,
}

/// [`decode_items`] as `keep` says: an item longer than its cap set aside in `bad` without being decoded (and not
/// told to `sizes`), `managedFields` decoded or only cut out.
pub(super) fn decode_items_capped<K: DeserializeOwned + Resource>(
    body: &str,
    each: &mut impl FnMut(Vec<K>),
    bad: &mut Vec<Undecodable>,
    sizes: &mut impl FnMut(&str, usize),
    keep: Keep<'_>,
) -> Result<ListMeta, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(body);
    let sinks = Sinks {
        each,
        bad,
        sizes,
        cap: keep.cap,
        managed: keep.managed,
        oversized_bytes: 0,
    };
    let meta = de.deserialize_map(ListBody(sinks, PhantomData))?;
    de.end()?;
    Ok(meta)
}

/// Where decoded items, items that do not decode, and item sizes go; what is longer than `cap` is set aside.
struct Sinks<'s, 'k, F, S> {
    each: &'s mut F,
    bad: &'s mut Vec<Undecodable>,
    sizes: &'s mut S,
    cap: Option<ItemCap<'k>>,
    managed: bool,
    oversized_bytes: usize,
}

/// The LIST answer: a map whose `items` are read by [`Items`] and whose `metadata.continue` is kept, every other
/// field skipped.
struct ListBody<'s, 'k, K, F, S>(Sinks<'s, 'k, F, S>, PhantomData<K>);

/// The `items` of a LIST answer (null or a sequence), handed on in batches.
struct Items<'a, 's, 'k, K, F, S>(&'a mut Sinks<'s, 'k, F, S>, PhantomData<K>);

impl<'de, K, F, S> Visitor<'de> for ListBody<'_, '_, K, F, S>
where
    K: DeserializeOwned + Resource,
    F: FnMut(Vec<K>),
    S: FnMut(&str, usize),
{
    type Value = ListMeta;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a Kubernetes list")
    }
    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<ListMeta, A::Error> {
        #[derive(serde::Deserialize, Default)]
        #[serde(default)]
        struct Meta {
            #[serde(rename = "continue")]
            next: Option<String>,
        }
        let (mut items, mut meta) = (false, None);
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "items" if items => return Err(A::Error::duplicate_field("items")),
                "items" => {
                    map.next_value_seed(Items(&mut self.0, PhantomData))?;
                    items = true;
                }
                "metadata" if meta.is_some() => return Err(A::Error::duplicate_field("metadata")),
                "metadata" => meta = Some(map.next_value::<Option<Meta>>()?.unwrap_or_default()),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if !items {
            return Err(A::Error::missing_field("items"));
        }
        let next = meta.and_then(|m| m.next).filter(|t| !t.is_empty());
        Ok(ListMeta {
            next,
            oversized_bytes: self.0.oversized_bytes,
        })
    }
}

impl<'de, K, F, S> DeserializeSeed<'de> for Items<'_, '_, '_, K, F, S>
where
    K: DeserializeOwned + Resource,
    F: FnMut(Vec<K>),
    S: FnMut(&str, usize),
{
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de, K, F, S> Visitor<'de> for Items<'_, '_, '_, K, F, S>
where
    K: DeserializeOwned + Resource,
    F: FnMut(Vec<K>),
    S: FnMut(&str, usize),
{
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a list of items")
    }
    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let sinks = self.0;
        let mut batch = Vec::new();
        while let Some(raw) = seq.next_element::<&'de RawValue>()? {
            let raw = raw.get();
            if let Some(cap) = sinks.cap.filter(|c| raw.len() > c.bytes) {
                sinks.bad.push(Undecodable::oversized(raw, &cap));
                sinks.oversized_bytes += raw.len();
                continue;
            }
            match decode_object_keeping::<K>(raw, sinks.managed) {
                Ok(item) => {
                    (sinks.sizes)(item.meta().namespace.as_deref().unwrap_or(""), raw.len());
                    batch.push(item);
                    if batch.len() == PAGE_SIZE as usize {
                        (sinks.each)(std::mem::take(&mut batch));
                    }
                }
                Err(e) => {
                    let bad = Undecodable::of(raw, &e);
                    (sinks.sizes)(bad.meta.namespace.as_deref().unwrap_or(""), raw.len());
                    sinks.bad.push(bad);
                }
            }
        }
        if !batch.is_empty() {
            (sinks.each)(batch);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
