//! Where an object lives: its API, and the names an [`IoError`](super::IoError) gives it.

use k8s_openapi::NamespaceResourceScope;
use kube::{Api, Client, Resource};

/// The namespaced API for `K`, in one namespace or across all.
pub fn api<K>(client: &Client, namespace: Option<&str>) -> Api<K>
where
    K: Resource<Scope = NamespaceResourceScope>,
    <K as Resource>::DynamicType: Default,
{
    match namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    }
}

/// Where an object lives: its kind, `namespace/name` (for messages), name and API.
pub(super) struct Target<K> {
    pub(super) kind: String,
    pub(super) object: String,
    pub(super) name: String,
    pub(super) api: Api<K>,
}

/// The object `namespace/name` of kind `K`.
pub(super) fn named<K>(client: &Client, namespace: &str, name: &str) -> Target<K>
where
    K: Resource<Scope = NamespaceResourceScope>,
    <K as Resource>::DynamicType: Default,
{
    Target {
        kind: K::kind(&Default::default()).to_string(),
        object: format!("{namespace}/{name}"),
        name: name.to_string(),
        api: api(client, Some(namespace)),
    }
}

/// Where `obj` lives, from its metadata.
pub(super) fn target<K>(client: &Client, obj: &K) -> Target<K>
where
    K: Resource<Scope = NamespaceResourceScope>,
    <K as Resource>::DynamicType: Default,
{
    let meta = obj.meta();
    named(
        client,
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default(),
    )
}
