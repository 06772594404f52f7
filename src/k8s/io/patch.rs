//! Merge patches: labels removed from one object while it still has the UID the bridge owns.

use std::fmt::Debug;

use k8s_openapi::NamespaceResourceScope;
use kube::{
    Client, Resource,
    api::{Patch, PatchParams},
};
use serde::de::DeserializeOwned;

use super::{
    error::IoError,
    retry::with_retry,
    target::{Target, named},
};
use crate::domain::FIELD_MANAGER;

/// What [`remove_labels`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Patched {
    /// The labels are gone from the object.
    Yes,
    /// It did not exist.
    Absent,
    /// An object with another UID stands at that name now: it was left as it is.
    Replaced,
}

/// The merge patch removing `keys` from an object's labels, guarded by `uid`: the API server refuses to change
/// a UID (HTTP 422), so the patch applies only to the object that still has it. Absent keys are fine.
fn patch_body(keys: &[String], uid: Option<&str>) -> serde_json::Value {
    let labels: serde_json::Map<String, serde_json::Value> = keys
        .iter()
        .map(|k| (k.clone(), serde_json::Value::Null))
        .collect();
    let mut metadata = serde_json::json!({ "labels": labels });
    if let Some(uid) = uid {
        metadata["uid"] = uid.into();
    }
    serde_json::json!({ "metadata": metadata })
}

/// Removes the labels `keys` from object `namespace/name` of kind `K`, only if it still has `uid` (a plain merge
/// patch, not server-side apply: the labels go whoever wrote them).
pub async fn remove_labels<K>(
    client: &Client,
    namespace: &str,
    name: &str,
    uid: Option<&str>,
    keys: &[String],
) -> Result<Patched, IoError>
where
    K: Resource<Scope = NamespaceResourceScope> + Clone + DeserializeOwned + Debug,
    <K as Resource>::DynamicType: Default,
{
    let Target {
        kind, object, api, ..
    } = named::<K>(client, namespace, name);
    let params = PatchParams {
        field_manager: Some(FIELD_MANAGER.to_string()),
        ..Default::default()
    };
    let patch = Patch::Merge(patch_body(keys, uid));
    let (params, patch) = (&params, &patch);
    with_retry("patch", &kind, &object, || async {
        match api.patch(name, params, patch).await {
            Ok(_) => Ok(Patched::Yes),
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(Patched::Absent),
            Err(kube::Error::Api(s)) if s.code == 422 && s.message.contains("metadata.uid") => {
                Ok(Patched::Replaced)
            }
            Err(e) => Err(e),
        }
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_patch_nulls_each_label_and_carries_the_uid() {
        let body = patch_body(&["team".into(), "a.b/c".into()], Some("u-1"));
        assert_eq!(
            body,
            serde_json::json!({"metadata": {"labels": {"team": null, "a.b/c": null}, "uid": "u-1"}})
        );
        assert_eq!(
            patch_body(&[], None),
            serde_json::json!({"metadata": {"labels": {}}})
        );
    }
}
