//! The body of a LIST answer, decoded item by item into batches of [`PAGE_SIZE`](super::PAGE_SIZE), and the items
//! that do not decode ([`Undecodable`]).

use std::marker::PhantomData;

use kube::Resource;
use serde::de::{
    DeserializeOwned, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor,
};

use super::list::PAGE_SIZE;
use crate::bridge::observed::compact_managed_fields;

/// An item of a LIST that does not decode as the expected type: written by whoever can write it, it is that
/// object's problem, not the whole list's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undecodable {
    /// Its namespace (empty when even that cannot be read).
    pub namespace: String,
    /// Its name (empty when even that cannot be read).
    pub name: String,
    /// Why it does not decode: the decoder's message, escaped and bounded (it may quote the value, which whoever
    /// wrote the item chose).
    pub reason: String,
}

impl Undecodable {
    /// Undecodable items by `namespace/name`, with why.
    pub fn by_key(items: Vec<Undecodable>) -> std::collections::BTreeMap<String, String> {
        items
            .into_iter()
            .map(|u| (format!("{}/{}", u.namespace, u.name), u.reason))
            .collect()
    }
}

/// What is known of an item that does not decode: its namespace and name when those decode, and the decoder's
/// message (which names the field and what was expected, and holds no value of the item).
fn undecodable(raw: &str, e: &serde_json::Error) -> Undecodable {
    #[derive(serde::Deserialize, Default)]
    #[serde(default)]
    struct Meta {
        namespace: String,
        name: String,
    }
    #[derive(serde::Deserialize, Default)]
    #[serde(default)]
    struct Item {
        metadata: Meta,
    }
    let item: Item = serde_json::from_str(raw).unwrap_or_default();
    let shown = |s: &str| crate::bridge::text::shown(s, 253);
    Undecodable {
        namespace: shown(&item.metadata.namespace),
        name: shown(&item.metadata.name),
        reason: crate::bridge::text::shown(&e.to_string(), 200),
    }
}
/// Decodes the `items` of a LIST answer one by one, handing them to `each` in batches of [`PAGE_SIZE`]. With
/// `bad`, an item that does not decode as `K` is recorded there and skipped (each item is then first taken as
/// raw JSON text, then decoded on its own).
pub(super) fn decode_items<K: DeserializeOwned + Resource>(
    body: &str,
    each: &mut impl FnMut(Vec<K>),
    bad: Option<&mut Vec<Undecodable>>,
) -> Result<(), serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(body);
    de.deserialize_map(ListBody(each, bad, PhantomData))?;
    de.end()
}

/// Where the items that do not decode go, when they are set aside.
type Bad<'b> = Option<&'b mut Vec<Undecodable>>;

/// The LIST answer: a map whose `items` are read by [`Items`], every other field skipped.
struct ListBody<'f, 'b, K, F>(&'f mut F, Bad<'b>, PhantomData<K>);

/// The `items` of a LIST answer (null or a sequence), handed on in batches.
struct Items<'f, 'b, K, F>(&'f mut F, Bad<'b>, PhantomData<K>);

impl<'de, K: DeserializeOwned + Resource, F: FnMut(Vec<K>)> Visitor<'de>
    for ListBody<'_, '_, K, F>
{
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a Kubernetes list")
    }
    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        let mut items = false;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == "items" {
                if items {
                    return Err(serde::de::Error::duplicate_field("items"));
                }
                map.next_value_seed(Items(&mut *self.0, self.1.as_deref_mut(), PhantomData))?;
                items = true;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        if !items {
            return Err(serde::de::Error::missing_field("items"));
        }
        Ok(())
    }
}

impl<'de, K: DeserializeOwned + Resource, F: FnMut(Vec<K>)> DeserializeSeed<'de>
    for Items<'_, '_, K, F>
{
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de, K: DeserializeOwned + Resource, F: FnMut(Vec<K>)> Visitor<'de> for Items<'_, '_, K, F> {
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
        let mut batch = Vec::new();
        let mut push = |mut item: K, batch: &mut Vec<K>| {
            compact_managed_fields(item.meta_mut());
            batch.push(item);
            if batch.len() == PAGE_SIZE as usize {
                (self.0)(std::mem::take(batch));
            }
        };
        match self.1 {
            None => {
                while let Some(item) = seq.next_element::<K>()? {
                    push(item, &mut batch);
                }
            }
            Some(bad) => {
                while let Some(raw) = seq.next_element::<&'de serde_json::value::RawValue>()? {
                    match serde_json::from_str::<K>(raw.get()) {
                        Ok(item) => push(item, &mut batch),
                        Err(e) => bad.push(undecodable(raw.get(), &e)),
                    }
                }
            }
        }
        if !batch.is_empty() {
            (self.0)(batch);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_body_is_decoded_in_batches_with_managed_fields_compacted() {
        use k8s_openapi::api::core::v1::ConfigMap;
        let item = |i: usize| {
            serde_json::json!({
                "metadata": {
                    "name": format!("c{i}"),
                    "managedFields": [{"manager": "someone-else", "operation": "Update", "fieldsV1": {"f:data": {}}}]
                },
                "data": {"k": "v"}
            })
        };
        let items: Vec<_> = (0..1201).map(item).collect();
        let body = serde_json::json!({
            "kind": "ConfigMapList",
            "metadata": {"resourceVersion": "7"},
            "items": items,
            "extra": [1, 2, {"x": null}]
        })
        .to_string();
        let mut batches = Vec::new();
        decode_items::<ConfigMap>(&body, &mut |b| batches.push(b), None).unwrap();
        let sizes: Vec<usize> = batches.iter().map(Vec::len).collect();
        assert_eq!(sizes, [500, 500, 201]);
        assert_eq!(batches[2][200].metadata.name.as_deref(), Some("c1200"));
        assert!(
            batches
                .iter()
                .flatten()
                .all(|c| c.metadata.managed_fields.is_none())
        );

        let mut none = 0;
        decode_items::<ConfigMap>(
            r#"{"kind":"ConfigMapList","items":null}"#,
            &mut |_| none += 1,
            None,
        )
        .unwrap();
        decode_items::<ConfigMap>(r#"{"items":[]}"#, &mut |_| none += 1, None).unwrap();
        assert_eq!(none, 0);
        for bad in [
            r#"{"kind":"Status"}"#,
            r#"{"items":[{"metadata":3}]}"#,
            r#"{"items":[]} x"#,
            "[]",
        ] {
            assert!(
                decode_items::<ConfigMap>(bad, &mut |_| {}, None).is_err(),
                "{bad}"
            );
        }
        // Tolerant: a bad item is set aside with its name, the others decode.
        let mut bad = Vec::new();
        let mut got = Vec::new();
        decode_items::<ConfigMap>(
            r#"{"items":[{"metadata":{"name":"a","namespace":"n"}},{"metadata":{"name":"b","namespace":"n"},"data":{"k":3}},{"metadata":{"name":"c"}}]}"#,
            &mut |b| got.extend(b),
            Some(&mut bad),
        )
        .unwrap();
        let names: Vec<_> = got.iter().filter_map(|c| c.metadata.name.clone()).collect();
        assert_eq!(names, ["a", "c"]);
        assert_eq!(
            (bad[0].namespace.as_str(), bad[0].name.as_str()),
            ("n", "b")
        );
        assert!(bad[0].reason.contains("invalid type"), "{}", bad[0].reason);
    }
}
