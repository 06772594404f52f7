//! Reads of one object by name: the object, its metadata, or the object through a LIST narrowed to its name.

use std::fmt::Debug;

use k8s_openapi::{NamespaceResourceScope, apimachinery::pkg::apis::meta::v1::ObjectMeta};
use kube::{Client, Resource, api::ListParams};
use serde::de::DeserializeOwned;

use super::{
    error::IoError,
    retry::with_retry,
    target::{Target, named},
};
use crate::bridge::observed::compact_managed_fields;

/// Reads one object; `None` when it does not exist.
pub async fn get_opt<K>(client: &Client, namespace: &str, name: &str) -> Result<Option<K>, IoError>
where
    K: Resource<Scope = NamespaceResourceScope> + Clone + DeserializeOwned + Debug,
    <K as Resource>::DynamicType: Default,
{
    let Target {
        kind, object, api, ..
    } = named::<K>(client, namespace, name);
    with_retry("get", &kind, &object, || api.get_opt(name)).await
}

/// Reads one object with a LIST narrowed to its name (`fieldSelector=metadata.name=`); `None` when it does not
/// exist. The same answer as a GET, under the `list` right: the identity needs no `get` where it only lists
/// (RBAC's `get` would let it read any Secret there by name).
pub async fn get_by_list<K>(
    client: &Client,
    namespace: &str,
    name: &str,
    label_selector: Option<&str>,
) -> Result<Option<K>, IoError>
where
    K: Resource<Scope = NamespaceResourceScope> + Clone + DeserializeOwned + Debug,
    <K as Resource>::DynamicType: Default,
{
    let Target {
        kind, object, api, ..
    } = named::<K>(client, namespace, name);
    let mut lp = ListParams::default().fields(&format!("metadata.name={name}"));
    if let Some(sel) = label_selector {
        lp = lp.labels(sel);
    }
    let list = with_retry("list", &kind, &object, || api.list(&lp)).await?;
    let mut items = list.items;
    for item in &mut items {
        compact_managed_fields(item.meta_mut());
    }
    Ok(items.into_iter().next())
}

/// Reads one object's metadata (no body crosses the wire); `None` when it does not exist.
pub async fn get_metadata_opt<K>(
    client: &Client,
    namespace: &str,
    name: &str,
) -> Result<Option<ObjectMeta>, IoError>
where
    K: Resource<Scope = NamespaceResourceScope> + Clone + DeserializeOwned + Debug,
    <K as Resource>::DynamicType: Default,
{
    let Target {
        kind, object, api, ..
    } = named::<K>(client, namespace, name);
    Ok(
        with_retry("get", &kind, &object, || api.get_metadata_opt(name))
            .await?
            .map(|o| o.metadata),
    )
}
