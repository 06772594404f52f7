//! LISTs: of objects or of metadata only, in some namespaces or all, paginated or in one request per namespace.

use std::{fmt::Debug, future::Future};

use k8s_openapi::{NamespaceResourceScope, apimachinery::pkg::apis::meta::v1::ObjectMeta};
use kube::{Api, Client, Resource, api::ListParams};
use serde::de::DeserializeOwned;

use super::{
    decode::{Undecodable, decode_items},
    error::{IoCause, IoError},
    retry::with_retry,
    target::api,
};
use crate::bridge::observed::compact_managed_fields;

/// Page size of every LIST.
pub const PAGE_SIZE: u32 = 500;

fn scope_label(namespace: Option<&str>) -> String {
    namespace
        .map(|n| format!("in namespace {n}"))
        .unwrap_or_else(|| "in all namespaces".into())
}

/// Runs a paginated LIST (pages of [`PAGE_SIZE`]) to the end, with retries on every page. Each page's items have
/// their `managedFields` compacted as they arrive ([`compact_managed_fields`]): callers never see other managers'
/// entries. (Metadata-only and cluster-scoped lists; [`list_each`] lists objects in one request.)
pub async fn paginate<T, F, Fut>(
    kind: &str,
    scope: &str,
    label_selector: Option<&str>,
    mut page: F,
) -> Result<Vec<T>, IoError>
where
    T: Clone + Resource,
    F: FnMut(ListParams) -> Fut,
    Fut: Future<Output = Result<kube::core::ObjectList<T>, kube::Error>>,
{
    let mut out = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let mut lp = ListParams::default().limit(PAGE_SIZE);
        if let Some(sel) = label_selector {
            lp = lp.labels(sel);
        }
        if let Some(t) = &token {
            lp = lp.continue_token(t);
        }
        let list = with_retry("list", kind, scope, || page(lp.clone())).await?;
        token = list.metadata.continue_.clone().filter(|t| !t.is_empty());
        let mut items = list.items;
        for item in &mut items {
            compact_managed_fields(item.meta_mut());
        }
        out.extend(items);
        if token.is_none() {
            return Ok(out);
        }
    }
}

fn scopes(namespaces: &[String]) -> Vec<Option<&str>> {
    if namespaces.is_empty() {
        vec![None]
    } else {
        namespaces.iter().map(|n| Some(n.as_str())).collect()
    }
}

/// Lists every `K` in the given namespaces (all when empty) matching `label_selector` (see [`list_each`]).
pub async fn list<K>(
    client: &Client,
    namespaces: &[String],
    label_selector: Option<&str>,
) -> Result<Vec<K>, IoError>
where
    K: Resource<Scope = NamespaceResourceScope> + Clone + DeserializeOwned + Debug,
    <K as Resource>::DynamicType: Default,
{
    let mut out = Vec::new();
    list_each(client, namespaces, label_selector, |page| out.extend(page)).await?;
    Ok(out)
}

/// Like [`list`], but an item that does not decode is set aside ([`Undecodable`]) instead of failing the LIST:
/// for objects others write (ClusterProfiles), where one bad item must not hide every other one.
pub async fn list_tolerant<K>(
    client: &Client,
    namespaces: &[String],
    label_selector: Option<&str>,
) -> Result<(Vec<K>, Vec<Undecodable>), IoError>
where
    K: Resource<Scope = NamespaceResourceScope> + Clone + DeserializeOwned + Debug,
    <K as Resource>::DynamicType: Default,
{
    let mut out = Vec::new();
    let mut bad = Vec::new();
    list_pages::<K, K>(
        client,
        namespaces,
        label_selector,
        false,
        Some(&mut bad),
        |page| out.extend(page),
    )
    .await?;
    Ok((out, bad))
}

/// Lists every `K` in the given namespaces (all when empty) matching `label_selector`, handing the items to
/// `each` in batches of [`PAGE_SIZE`] (their `managedFields` compacted) as they are decoded.
///
/// One LIST per namespace, not paginated: the API server answers it from its watch cache (a consistent read,
/// as a paginated LIST is), where every page of a paginated LIST of custom resources is read from etcd; measured
/// at 10,000 SveltosClusters, 0.9 s against 2.6 s. The body is decoded item by item, so what is held at once is
/// the body and one batch, never every parsed object. A failed request is retried ([`with_retry`]); the body is
/// decoded once, after the request succeeded. The whole LIST is one attempt of [`ATTEMPT_TIMEOUT`]. (Older API
/// servers, without consistent reads from the cache, read an unpaginated LIST from etcd in one go.)
pub async fn list_each<K>(
    client: &Client,
    namespaces: &[String],
    label_selector: Option<&str>,
    each: impl FnMut(Vec<K>),
) -> Result<(), IoError>
where
    K: Resource<Scope = NamespaceResourceScope> + Clone + DeserializeOwned + Debug,
    <K as Resource>::DynamicType: Default,
{
    list_pages::<K, K>(client, namespaces, label_selector, false, None, each).await
}

/// Like [`list_each`], metadata only (no object bodies cross the wire; `managedFields` compacted): for objects
/// whose number and size others choose, read first as metadata so that only the bodies needed are read
/// (`crate::k8s::bodies`).
pub async fn list_metadata_each<K>(
    client: &Client,
    namespaces: &[String],
    label_selector: Option<&str>,
    mut each: impl FnMut(Vec<ObjectMeta>),
) -> Result<(), IoError>
where
    K: Resource<Scope = NamespaceResourceScope> + Clone + DeserializeOwned + Debug,
    <K as Resource>::DynamicType: Default,
{
    list_pages::<K, kube::core::PartialObjectMeta<K>>(
        client,
        namespaces,
        label_selector,
        true,
        None,
        |page| each(page.into_iter().map(|o| o.metadata).collect()),
    )
    .await
}

/// [`list_each`] of `K`s decoded as `T` (`K` itself, or its metadata with `metadata_only`); with `bad`, items
/// that do not decode go there instead of failing the LIST.
async fn list_pages<K, T>(
    client: &Client,
    namespaces: &[String],
    label_selector: Option<&str>,
    metadata_only: bool,
    mut bad: Option<&mut Vec<Undecodable>>,
    mut each: impl FnMut(Vec<T>),
) -> Result<(), IoError>
where
    K: Resource<Scope = NamespaceResourceScope>,
    <K as Resource>::DynamicType: Default,
    T: DeserializeOwned + Resource,
{
    let kind = K::kind(&Default::default()).to_string();
    for ns in scopes(namespaces) {
        let scope = scope_label(ns);
        let mut lp = ListParams::default();
        if let Some(sel) = label_selector {
            lp = lp.labels(sel);
        }
        let request = || {
            let lp = lp.clone();
            async move {
                let request = kube::core::Request::new(K::url_path(&Default::default(), ns));
                let req = if metadata_only {
                    request.list_metadata(&lp)
                } else {
                    request.list(&lp)
                }
                .map_err(kube::Error::BuildRequest)?;
                client.request_text(req).await
            }
        };
        let body = with_retry("list", &kind, &scope, request).await?;
        decode_items::<T>(&body, &mut each, bad.as_deref_mut()).map_err(|e| IoError {
            action: "list",
            object: format!("{kind} {scope}"),
            message: format!("the API server's answer is not a list of {kind}: {e}"),
            code: None,
            source: IoCause::Kube(kube::Error::SerdeError(e)),
        })?;
    }
    Ok(())
}

/// Like [`list`], metadata only (no object bodies cross the wire), of the objects matching `label_selector` when
/// one is given (evaluated by the API server).
pub async fn list_metadata<K>(
    client: &Client,
    namespaces: &[String],
    label_selector: Option<&str>,
) -> Result<Vec<ObjectMeta>, IoError>
where
    K: Resource<Scope = NamespaceResourceScope> + Clone + DeserializeOwned + Debug,
    <K as Resource>::DynamicType: Default,
{
    let kind = K::kind(&Default::default()).to_string();
    let mut out = Vec::new();
    for ns in scopes(namespaces) {
        let api: Api<K> = api(client, ns);
        let api = &api;
        let page = paginate(&kind, &scope_label(ns), label_selector, |lp| async move {
            api.list_metadata(&lp).await
        })
        .await?;
        out.extend(page.into_iter().map(|o| o.metadata));
    }
    Ok(out)
}

/// Lists every cluster-scoped `K` matching `label_selector`, page by page.
pub async fn list_cluster_scoped<K>(
    client: &Client,
    label_selector: Option<&str>,
) -> Result<Vec<K>, IoError>
where
    K: Resource<Scope = k8s_openapi::ClusterResourceScope> + Clone + DeserializeOwned + Debug,
    <K as Resource>::DynamicType: Default,
{
    let kind = K::kind(&Default::default()).to_string();
    let api: Api<K> = Api::all(client.clone());
    let api = &api;
    paginate(&kind, "(cluster-scoped)", label_selector, |lp| async move {
        api.list(&lp).await
    })
    .await
}
