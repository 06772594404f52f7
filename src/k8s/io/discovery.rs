//! Discovery reads: which versions of an API group the server serves, and which resources one version holds.
//! Each is one GET, retried as every read is, its answer read to at most [`DISCOVERY_BYTES`].

use serde::Deserialize;

use super::{
    error::{IoCause, IoError},
    retry::with_retry,
};

/// The most bytes of one discovery answer read (a group or a version of it has a handful of entries).
pub const DISCOVERY_BYTES: usize = 1 << 20;

#[derive(Deserialize)]
struct Group {
    #[serde(default)]
    versions: Vec<GroupVersion>,
    #[serde(default, rename = "preferredVersion")]
    preferred_version: Option<GroupVersion>,
}

#[derive(Deserialize)]
struct GroupVersion {
    version: String,
}

#[derive(Deserialize)]
struct ResourceList {
    #[serde(default)]
    resources: Vec<Named>,
}

#[derive(Deserialize)]
struct Named {
    name: String,
}

/// The body of `GET path`, `None` on a 404 (not served); an error naming `object` otherwise.
async fn read(client: &kube::Client, path: &str, object: &str) -> Result<Option<String>, IoError> {
    let body = with_retry("discover", "API", object, || async {
        let req = http::Request::get(path)
            .body(Vec::new())
            .map_err(kube::Error::HttpError)?;
        match super::capped_text(client, req, Some(DISCOVERY_BYTES)).await {
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(Some(None)),
            Ok(text) => Ok(text.map(Some)),
            Err(e) => Err(e),
        }
    })
    .await?;
    match body {
        Some(text) => Ok(text),
        None => Err(IoError {
            action: "discover",
            object: format!("API {object}"),
            message: format!("the answer is longer than {DISCOVERY_BYTES} bytes"),
            code: None,
            source: IoCause::Budget,
        }),
    }
}

/// The error for a discovery answer of `object` that does not decode.
fn undecodable(object: &str, e: &serde_json::Error) -> IoError {
    IoError {
        action: "discover",
        object: format!("API {object}"),
        message: format!("the answer does not decode: {e}"),
        code: None,
        source: IoCause::Undecodable,
    }
}

/// The versions of `group` the API server serves (`GET /apis/{group}`), in its order; empty when it serves none.
pub async fn group_versions(client: &kube::Client, group: &str) -> Result<Vec<String>, IoError> {
    let Some(text) = read(client, &format!("/apis/{group}"), group).await? else {
        return Ok(Vec::new());
    };
    let got: Group = serde_json::from_str(&text).map_err(|e| undecodable(group, &e))?;
    Ok(got.versions.into_iter().map(|v| v.version).collect())
}

/// The version of `group` the API server prefers (`GET /apis/{group}`, its `preferredVersion`); `None` when it
/// serves no version of it.
pub async fn preferred_version(
    client: &kube::Client,
    group: &str,
) -> Result<Option<String>, IoError> {
    let Some(text) = read(client, &format!("/apis/{group}"), group).await? else {
        return Ok(None);
    };
    let got: Group = serde_json::from_str(&text).map_err(|e| undecodable(group, &e))?;
    Ok(got.preferred_version.map(|v| v.version))
}

/// Whether `group/version` holds the resource `plural` (`GET /apis/{group}/{version}`); `false` when the version is
/// not served at all.
pub async fn serves(
    client: &kube::Client,
    group: &str,
    version: &str,
    plural: &str,
) -> Result<bool, IoError> {
    let object = format!("{group}/{version}");
    let Some(text) = read(client, &format!("/apis/{object}"), &object).await? else {
        return Ok(false);
    };
    let got: ResourceList = serde_json::from_str(&text).map_err(|e| undecodable(&object, &e))?;
    Ok(got.resources.iter().any(|r| r.name == plural))
}
