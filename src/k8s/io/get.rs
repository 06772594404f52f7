//! Reads of one object by name: the object, its metadata, or the object through a LIST narrowed to its name.
//! Every answer is decoded as LIST items are ([`decode_object`]).

use std::fmt::Debug;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::{Client, Resource, api::GetParams};
use serde::de::DeserializeOwned;

use super::{
    decode::{Undecodable, decode_object},
    error::{IoCause, IoError},
    list::list_named,
    retry::with_retry,
};

/// One object read by name: absent, decoded, or what is known of it when it does not decode.
#[derive(Debug)]
pub enum Got<K> {
    /// It does not exist.
    Absent,
    /// It exists and decodes.
    Found(K),
    /// It exists and does not decode as its kind: its writer's problem, to confine to it.
    Undecodable(Box<Undecodable>),
}

impl<K> Got<K> {
    /// The object (`None` when absent), or what is known of it when it does not decode.
    fn found(self) -> Result<Option<K>, Box<Undecodable>> {
        match self {
            Got::Absent => Ok(None),
            Got::Found(k) => Ok(Some(k)),
            Got::Undecodable(u) => Err(u),
        }
    }
}

/// The error for an object that does not decode.
pub(super) fn undecodable_error(kind: &str, object: &str, u: &Undecodable) -> IoError {
    IoError {
        action: "get",
        object: format!("{kind} {object}"),
        message: format!("it does not decode as {kind}: {}", u.reason),
        code: None,
        source: IoCause::Undecodable,
    }
}

/// GETs `namespace/name` of `K` (its metadata only with `metadata_only`), decoded as `T`.
async fn get_as<K, T>(
    client: &Client,
    namespace: &str,
    name: &str,
    metadata_only: bool,
) -> Result<Got<T>, IoError>
where
    K: Resource,
    <K as Resource>::DynamicType: Default,
    T: DeserializeOwned + Resource,
{
    let kind = K::kind(&Default::default()).to_string();
    let object = format!("{namespace}/{name}");
    let url = K::url_path(&Default::default(), Some(namespace));
    let body = with_retry("get", &kind, &object, || async {
        let request = kube::core::Request::new(&url);
        let req = if metadata_only {
            request.get_metadata(name, &GetParams::default())
        } else {
            request.get(name, &GetParams::default())
        }
        .map_err(kube::Error::BuildRequest)?;
        match super::capped_text(client, req, None).await {
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(None),
            other => other,
        }
    })
    .await?;
    Ok(match body {
        None => Got::Absent,
        Some(text) => match decode_object::<T>(&text) {
            Ok(t) => Got::Found(t),
            Err(e) => Got::Undecodable(Box::new(Undecodable::of(&text, &e))),
        },
    })
}

/// Reads one object: absent, decoded, or what is known of it when it does not decode.
pub async fn get<K>(client: &Client, namespace: &str, name: &str) -> Result<Got<K>, IoError>
where
    K: Resource + DeserializeOwned + Debug,
    <K as Resource>::DynamicType: Default,
{
    get_as::<K, K>(client, namespace, name, false).await
}

/// Reads one object; `None` when it does not exist, an error naming it when it does not decode.
pub async fn get_opt<K>(client: &Client, namespace: &str, name: &str) -> Result<Option<K>, IoError>
where
    K: Resource + DeserializeOwned + Debug,
    <K as Resource>::DynamicType: Default,
{
    get::<K>(client, namespace, name)
        .await?
        .found()
        .map_err(|u| {
            let kind = K::kind(&Default::default()).to_string();
            undecodable_error(&kind, &format!("{namespace}/{name}"), &u)
        })
}

/// Reads one object with a LIST narrowed to its name (`fieldSelector=metadata.name=`): the same answer as a GET,
/// under the `list` right (the identity needs no `get` where it only lists; RBAC's `get` would let it read any
/// Secret there by name).
pub async fn get_by_list<K>(
    client: &Client,
    namespace: &str,
    name: &str,
    label_selector: Option<&str>,
) -> Result<Got<K>, IoError>
where
    K: Resource + DeserializeOwned + Debug,
    <K as Resource>::DynamicType: Default,
{
    Ok(
        match list_named::<K>(client, namespace, name, label_selector).await? {
            (Some(k), _) => Got::Found(k),
            (None, Some(u)) => Got::Undecodable(Box::new(u)),
            (None, None) => Got::Absent,
        },
    )
}

/// Reads one object's metadata (no body crosses the wire): absent, decoded, or what is known of it.
pub async fn get_metadata<K>(
    client: &Client,
    namespace: &str,
    name: &str,
) -> Result<Got<ObjectMeta>, IoError>
where
    K: Resource + Debug,
    <K as Resource>::DynamicType: Default,
{
    Ok(
        match get_as::<K, kube::core::PartialObjectMeta<K>>(client, namespace, name, true).await? {
            Got::Absent => Got::Absent,
            Got::Found(o) => Got::Found(o.metadata),
            Got::Undecodable(u) => Got::Undecodable(u),
        },
    )
}

/// Reads one object's metadata; `None` when it does not exist, an error naming it when it does not decode.
pub async fn get_metadata_opt<K>(
    client: &Client,
    namespace: &str,
    name: &str,
) -> Result<Option<ObjectMeta>, IoError>
where
    K: Resource + Debug,
    <K as Resource>::DynamicType: Default,
{
    get_metadata::<K>(client, namespace, name)
        .await?
        .found()
        .map_err(|u| {
            let kind = K::kind(&Default::default()).to_string();
            undecodable_error(&kind, &format!("{namespace}/{name}"), &u)
        })
}
