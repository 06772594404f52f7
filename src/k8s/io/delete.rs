//! Deletes: of one object, and of one object only while it still has the UID the bridge owns.

use std::fmt::Debug;

use k8s_openapi::{NamespaceResourceScope, apimachinery::pkg::apis::meta::v1::ObjectMeta};
use kube::{Client, Resource, api::DeleteParams};
use serde::de::DeserializeOwned;

use kube::core::PartialObjectMeta;

use super::{
    decode::decode_object,
    error::IoError,
    retry::with_retry,
    target::{Target, named},
};

/// Deletes one object; absent objects are fine.
pub async fn delete<K>(client: &Client, namespace: &str, name: &str) -> Result<(), IoError>
where
    K: Resource<Scope = NamespaceResourceScope> + Clone + DeserializeOwned + Debug,
    <K as Resource>::DynamicType: Default,
{
    delete_owned::<K>(client, namespace, name, None)
        .await
        .map(|_| ())
}

/// Whether [`delete_owned`] deleted the object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deleted {
    /// Gone: the API server removed it from storage before it answered.
    Yes,
    /// Deletion started, but the object still exists (finalizers, or a graceful deletion, hold it): it is gone
    /// only once a later read no longer finds it.
    Terminating,
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
    let Target { kind, object, .. } = named::<K>(client, namespace, name);
    let url = K::url_path(&Default::default(), Some(namespace));
    let mut dp = DeleteParams::background();
    if let Some(uid) = uid {
        dp = dp.preconditions(kube::api::Preconditions {
            uid: Some(uid.to_string()),
            resource_version: None,
        });
    }
    let dp = &dp;
    with_retry("delete", &kind, &object, || async {
        let req = kube::core::Request::new(&url)
            .delete(name, dp)
            .map_err(kube::Error::BuildRequest)?;
        match super::capped_text(client, req, None).await {
            // The API server answers a delete with the object when it still exists (marked for deletion), and
            // with a Status, or (custom resources) the object as it was removed, when it is gone. The object is
            // decoded as every answer is (its metadata only); one that does not decode is taken as still there,
            // and waiting for it to go names it.
            Ok(answer) => Ok(gone_or_not::<K>(&answer.unwrap_or_default())),
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

/// What a delete's answer `text` says.
fn gone_or_not<K: Resource>(text: &str) -> Deleted {
    if super::decode::kind_of(text).as_deref() == Some("Status") {
        return Deleted::Yes;
    }
    match decode_object::<PartialObjectMeta<K>>(text) {
        Ok(obj) if !still_exists(&obj.metadata) => Deleted::Yes,
        _ => Deleted::Terminating,
    }
}

/// Whether a delete answered with `meta` left the object in storage: it is marked for deletion (a
/// `deletionTimestamp`) or holds finalizers. An object removed at once carries neither.
fn still_exists(meta: &ObjectMeta) -> bool {
    meta.deletion_timestamp.is_some() || meta.finalizers.as_ref().is_some_and(|f| !f.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delete_answer_tells_gone_from_terminating() {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
        // Removed at once: the answer carries the object as it was, with neither mark.
        assert!(!still_exists(&ObjectMeta {
            name: Some("c".into()),
            finalizers: Some(vec![]),
            ..Default::default()
        }));
        // Held by a finalizer, or marked for (graceful) deletion: it still exists.
        assert!(still_exists(&ObjectMeta {
            finalizers: Some(vec!["projectsveltos.io/finalizer".into()]),
            ..Default::default()
        }));
        assert!(still_exists(&ObjectMeta {
            deletion_timestamp: Some(Time(jiff::Timestamp::UNIX_EPOCH)),
            ..Default::default()
        }));
    }
}
