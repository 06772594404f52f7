//! Server-side apply with the provider's field manager, and adoption: taking the ownership of fields over.

use std::fmt::Debug;

use k8s_openapi::NamespaceResourceScope;
use kube::{
    Client, Resource,
    api::{Patch, PatchParams},
};
use serde::{Serialize, de::DeserializeOwned};

use super::{
    decode::{Undecodable, decode_object},
    error::{IoCause, IoError},
    get::undecodable_error,
    retry::with_retry,
    target::{Target, target},
};
use crate::domain::FIELD_MANAGER;

/// Server-side applies `obj` with the provider's field manager, taking over fields others changed.
pub async fn server_side_apply<K>(client: &Client, obj: &K) -> Result<K, IoError>
where
    K: Resource<Scope = NamespaceResourceScope> + Clone + DeserializeOwned + Serialize + Debug,
    <K as Resource>::DynamicType: Default,
{
    let Target {
        kind, object, name, ..
    } = target(client, obj);
    let pp = PatchParams::apply(FIELD_MANAGER).force();
    // The body carries apiVersion/kind, as server-side apply requires.
    let mut body = serde_json::to_value(obj).map_err(|e| {
        IoError::new(
            "apply",
            format!("{kind} {object}"),
            &kind,
            IoCause::Serialize(e),
        )
    })?;
    body["apiVersion"] = K::api_version(&Default::default()).to_string().into();
    body["kind"] = kind.clone().into();
    let patch = Patch::Apply(&body);
    let answer = with_retry("apply", &kind, &object, || {
        patch_text::<K, _>(client, &object, &name, &pp, &patch)
    })
    .await?;
    decode_object::<K>(&answer).map_err(|e| {
        let mut err = undecodable_error(&kind, &object, &Undecodable::of(&answer, &e));
        err.action = "apply";
        err
    })
}

/// PATCHes `namespace/name` (`object`) of `K` and returns the answer's text (decoded by the caller as every answer
/// is, [`decode_object`]).
async fn patch_text<K, P>(
    client: &Client,
    object: &str,
    name: &str,
    pp: &PatchParams,
    patch: &Patch<P>,
) -> Result<String, kube::Error>
where
    K: Resource,
    <K as Resource>::DynamicType: Default,
    P: Serialize + Debug,
{
    let namespace = object.split_once('/').map(|(ns, _)| ns);
    let url = K::url_path(&Default::default(), namespace);
    let req = kube::core::Request::new(url)
        .patch(name, pp, patch)
        .map_err(kube::Error::BuildRequest)?;
    super::capped_text(client, req, None)
        .await
        .map(Option::unwrap_or_default)
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
    with_retry("adopt", &kind, &object, || {
        patch_text::<K, _>(client, &object, &name, &pp, &patch)
    })
    .await
    .map(|_| ())
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
