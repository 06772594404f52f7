//! Reads and writes against the API server: paginated LISTs, server-side apply with the provider's field
//! manager, deletes, and retries on conflicts, throttling and server errors.

use std::{fmt::Debug, future::Future, time::Duration};

use k8s_openapi::{NamespaceResourceScope, apimachinery::pkg::apis::meta::v1::ObjectMeta};
use kube::{
    Api, Client, Resource,
    api::{DeleteParams, ListParams, Patch, PatchParams},
    core::Status,
};
use serde::{Serialize, de::DeserializeOwned};

use crate::bridge::{FIELD_MANAGER, observed::compact_managed_fields};

/// Page size of every LIST.
pub const PAGE_SIZE: u32 = 500;
const MAX_ATTEMPTS: u32 = 6;

/// An API error with the object it concerns.
#[derive(Debug, thiserror::Error)]
#[error("{action} {object}: {message}")]
pub struct IoError {
    /// What was being done (`list`, `apply`, `delete`, `get`).
    pub action: &'static str,
    /// Kind and `namespace/name` (or the collection).
    pub object: String,
    /// What went wrong, with a hint where one helps.
    pub message: String,
    /// HTTP status, when the server answered.
    pub code: Option<u16>,
}

fn status(err: &kube::Error) -> Option<&Status> {
    match err {
        kube::Error::Api(s) => Some(s),
        _ => None,
    }
}

fn is_retryable(err: &kube::Error) -> bool {
    match err {
        kube::Error::Api(s) => s.code == 409 || s.code == 429 || s.code >= 500,
        kube::Error::HyperError(_) | kube::Error::Service(_) => true,
        _ => false,
    }
}

fn describe(err: &kube::Error, kind: &str) -> String {
    match err {
        kube::Error::Api(s)
            if s.code == 404
                && s.reason == "NotFound"
                && s.message
                    .contains("the server could not find the requested resource") =>
        {
            format!("the {kind} API is not served by this cluster: install its CRD (HTTP 404)")
        }
        kube::Error::Api(s) if s.code == 403 => format!(
            "forbidden (HTTP 403): {}. Grant the provider's identity access to {kind} objects.",
            s.message
        ),
        kube::Error::Api(s) => format!("{} (HTTP {}, reason {})", s.message, s.code, s.reason),
        other => other.to_string(),
    }
}

/// Runs `op` with retries on 409/429/5xx and transport errors (exponential backoff, 6 attempts).
pub async fn with_retry<T, F, Fut>(
    action: &'static str,
    kind: &str,
    object: &str,
    mut op: F,
) -> Result<T, IoError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, kube::Error>>,
{
    let mut delay = Duration::from_millis(100);
    let mut attempt = 1;
    loop {
        match op().await {
            Ok(v) => return Ok(v),
            Err(e) if attempt < MAX_ATTEMPTS && is_retryable(&e) => {
                tracing::debug!(action, kind, object, attempt, error = %e, "retrying Kubernetes request");
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_secs(5));
                attempt += 1;
            }
            Err(e) => {
                return Err(IoError {
                    action,
                    object: format!("{kind} {object}"),
                    message: describe(&e, kind),
                    code: status(&e).map(|s| s.code),
                });
            }
        }
    }
}

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

fn scope_label(namespace: Option<&str>) -> String {
    namespace
        .map(|n| format!("in namespace {n}"))
        .unwrap_or_else(|| "in all namespaces".into())
}

/// Runs a paginated LIST (pages of [`PAGE_SIZE`]) to the end, with retries on every page. Each page's items have
/// their `managedFields` compacted as they arrive ([`compact_managed_fields`]): callers never see other managers'
/// entries.
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
        out.extend(list.items.into_iter().map(|mut item| {
            compact_managed_fields(item.meta_mut());
            item
        }));
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

/// Lists every `K` in the given namespaces (all when empty) matching `label_selector`, page by page.
pub async fn list<K>(
    client: &Client,
    namespaces: &[String],
    label_selector: Option<&str>,
) -> Result<Vec<K>, IoError>
where
    K: Resource<Scope = NamespaceResourceScope> + Clone + DeserializeOwned + Debug,
    <K as Resource>::DynamicType: Default,
{
    let kind = K::kind(&Default::default()).to_string();
    let mut out = Vec::new();
    for ns in scopes(namespaces) {
        let api: Api<K> = api(client, ns);
        let api = &api;
        out.extend(
            paginate(&kind, &scope_label(ns), label_selector, |lp| async move {
                api.list(&lp).await
            })
            .await?,
        );
    }
    Ok(out)
}

/// Like [`list`], metadata only (no object bodies cross the wire).
pub async fn list_metadata<K>(
    client: &Client,
    namespaces: &[String],
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
        let page = paginate(&kind, &scope_label(ns), None, |lp| async move {
            api.list_metadata(&lp).await
        })
        .await?;
        out.extend(page.into_iter().map(|o| o.metadata));
    }
    Ok(out)
}

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

/// Where an object lives: its kind, `namespace/name` (for messages), name and API.
struct Target<K> {
    kind: String,
    object: String,
    name: String,
    api: Api<K>,
}

fn named<K>(client: &Client, namespace: &str, name: &str) -> Target<K>
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

fn target<K>(client: &Client, obj: &K) -> Target<K>
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

/// Server-side applies `obj` with the provider's field manager, taking over fields others changed.
pub async fn apply<K>(client: &Client, obj: &K) -> Result<K, IoError>
where
    K: Resource<Scope = NamespaceResourceScope> + Clone + DeserializeOwned + Serialize + Debug,
    <K as Resource>::DynamicType: Default,
{
    let Target {
        kind,
        object,
        name,
        api,
    } = target(client, obj);
    let pp = PatchParams::apply(FIELD_MANAGER).force();
    // The body carries apiVersion/kind, as server-side apply requires.
    let mut body = serde_json::to_value(obj).map_err(|e| IoError {
        action: "apply",
        object: format!("{kind} {object}"),
        message: format!("cannot serialize: {e}"),
        code: None,
    })?;
    body["apiVersion"] = K::api_version(&Default::default()).to_string().into();
    body["kind"] = kind.clone().into();
    let patch = Patch::Apply(&body);
    with_retry("apply", &kind, &object, || api.patch(&name, &pp, &patch)).await
}

/// Removes from `fields` (a `fieldsV1` tree of another manager) every field that `body` sets.
fn strip_owned(fields: &mut serde_json::Value, body: &serde_json::Value) {
    let (Some(f), Some(b)) = (fields.as_object_mut(), body.as_object()) else {
        return;
    };
    for (k, v) in b {
        let fk = format!("f:{k}");
        match f.get_mut(&fk) {
            Some(sub)
                if v.is_object()
                    && sub.is_object()
                    && !v.as_object().is_some_and(|o| o.is_empty()) =>
            {
                strip_owned(sub, v);
            }
            Some(_) => {
                f.remove(&fk);
            }
            None => {}
        }
    }
}

/// Adoption: moves the ownership of every field `obj` sets away from the object's other field managers, so that
/// after the next apply the provider alone owns what it sets (and what it later stops setting is removed).
pub async fn take_ownership<K>(client: &Client, obj: &K) -> Result<(), IoError>
where
    K: Resource<Scope = NamespaceResourceScope> + Clone + DeserializeOwned + Serialize + Debug,
    <K as Resource>::DynamicType: Default,
{
    let Target {
        kind,
        object,
        name,
        api,
    } = target(client, obj);
    let Some(current) = with_retry("get", &kind, &object, || api.get_opt(&name)).await? else {
        return Ok(());
    };
    let mut body = serde_json::to_value(obj).unwrap_or_default();
    if let Some(m) = body.get_mut("metadata").and_then(|m| m.as_object_mut()) {
        m.remove("name");
        m.remove("namespace");
    }
    let mut entries = current.meta().managed_fields.clone().unwrap_or_default();
    for e in entries
        .iter_mut()
        .filter(|e| e.manager.as_deref() != Some(FIELD_MANAGER))
    {
        if let Some(f) = e.fields_v1.as_mut() {
            strip_owned(&mut f.0, &body);
        }
    }
    let patch = Patch::Merge(serde_json::json!({
        "metadata": {"managedFields": entries, "resourceVersion": current.meta().resource_version}
    }));
    let pp = PatchParams::default();
    with_retry("adopt", &kind, &object, || api.patch(&name, &pp, &patch))
        .await
        .map(|_| ())
}

/// Deletes one object; absent objects are fine.
pub async fn delete<K>(client: &Client, namespace: &str, name: &str) -> Result<(), IoError>
where
    K: Resource<Scope = NamespaceResourceScope> + Clone + DeserializeOwned + Debug,
    <K as Resource>::DynamicType: Default,
{
    let Target {
        kind, object, api, ..
    } = named::<K>(client, namespace, name);
    with_retry("delete", &kind, &object, || async {
        match api.delete(name, &DeleteParams::background()).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
            Err(e) => Err(e),
        }
    })
    .await
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

/// Whether [`delete_owned`] deleted the object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deleted {
    /// Deleted (or deletion started: finalizers may keep it a while).
    Yes,
    /// It did not exist.
    Absent,
    /// An object with another UID stands at that name now: it is not the one the bridge owns, so it was left.
    Replaced,
}

/// Deletes one object only if it still has `uid` (a delete precondition the API server enforces), so that an
/// object someone recreated under the same name is never deleted.
pub async fn delete_owned<K>(
    client: &Client,
    namespace: &str,
    name: &str,
    uid: Option<&str>,
) -> Result<Deleted, IoError>
where
    K: Resource<Scope = NamespaceResourceScope> + Clone + DeserializeOwned + Debug,
    <K as Resource>::DynamicType: Default,
{
    let Target {
        kind, object, api, ..
    } = named::<K>(client, namespace, name);
    let mut dp = DeleteParams::background();
    if let Some(uid) = uid {
        dp = dp.preconditions(kube::api::Preconditions {
            uid: Some(uid.to_string()),
            resource_version: None,
        });
    }
    let dp = &dp;
    with_retry("delete", &kind, &object, || async {
        match api.delete(name, dp).await {
            Ok(_) => Ok(Deleted::Yes),
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(Deleted::Absent),
            Err(kube::Error::Api(s))
                if s.code == 409 && s.message.contains("Precondition failed") =>
            {
                Ok(Deleted::Replaced)
            }
            Err(e) => Err(e),
        }
    })
    .await
}

/// Like [`list_metadata`], only the objects matching `label_selector` (evaluated by the API server).
pub async fn list_metadata_matching<K>(
    client: &Client,
    namespaces: &[String],
    label_selector: &str,
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
        let page = paginate(
            &kind,
            &scope_label(ns),
            Some(label_selector),
            |lp| async move { api.list_metadata(&lp).await },
        )
        .await?;
        out.extend(page.into_iter().map(|o| o.metadata));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strip_owned_removes_exactly_what_we_set() {
        let mut fields = serde_json::json!({
            "f:metadata": {"f:labels": {"f:tier": {}, "f:owner": {}}},
            "f:spec": {"f:kubeconfigName": {}, "f:paused": {}}
        });
        let body = serde_json::json!({
            "metadata": {"labels": {"tier": "gold", "x": "1"}},
            "spec": {"kubeconfigName": "a"}
        });
        strip_owned(&mut fields, &body);
        assert_eq!(
            fields,
            serde_json::json!({"f:metadata": {"f:labels": {"f:owner": {}}}, "f:spec": {"f:paused": {}}})
        );
    }
}
