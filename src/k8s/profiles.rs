//! ClusterProfiles read through a version the API server serves among those the provider knows, into one model
//! ([`ClusterProfile`]): the one place that chooses (ADR 0001, `docs/design/adr/0001-clusterprofile-version.md`).
//!
//! Each read asks discovery first: v1alpha1 while `multicluster.x-k8s.io/v1alpha1` holds `clusterprofiles` (the
//! storage version, with every field the bridge supports), else v1alpha2 when it holds them (read as
//! [`ClusterProfileV1alpha2`] and converted; no `status.credentialProviders`), else an error naming the versions
//! the server serves ClusterProfiles in and those the provider knows. The version's own resource list is read, not
//! only the group's versions: the group is shared with the Multi-Cluster Services API, whose v1alpha1 may be served
//! where ClusterProfiles are not.

use kube::{Client, Resource};

use crate::{
    api::{ClusterProfile, v1alpha2::ClusterProfileV1alpha2},
    domain::text::shown,
    k8s::io::{self, IoCause, IoError, Undecodable},
};

/// A version of ClusterProfile the provider reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProfileVersion {
    /// `multicluster.x-k8s.io/v1alpha1`, the storage version.
    V1alpha1,
    /// `multicluster.x-k8s.io/v1alpha2`.
    V1alpha2,
}

/// The versions the provider reads, in order of preference.
pub const KNOWN: [ProfileVersion; 2] = [ProfileVersion::V1alpha1, ProfileVersion::V1alpha2];

/// The most versions of the group an error names.
const MAX_NAMED: usize = 16;

impl ProfileVersion {
    /// Its name (`v1alpha1`).
    pub fn name(self) -> &'static str {
        match self {
            ProfileVersion::V1alpha1 => "v1alpha1",
            ProfileVersion::V1alpha2 => crate::api::v1alpha2::V1ALPHA2,
        }
    }
}

fn group() -> String {
    ClusterProfile::group(&()).into_owned()
}

fn plural() -> String {
    ClusterProfile::plural(&()).into_owned()
}

/// The version to read ClusterProfiles through: the first of [`KNOWN`] whose resource list holds them.
pub async fn served_version(client: &Client) -> Result<ProfileVersion, IoError> {
    let (group, plural) = (group(), plural());
    for version in KNOWN {
        if io::serves(client, &group, version.name(), &plural).await? {
            tracing::debug!(version = version.name(), "reading ClusterProfiles");
            return Ok(version);
        }
    }
    Err(no_known_version(client, &group, &plural).await?)
}

/// The error when no known version is served: which versions serve ClusterProfiles (at most [`MAX_NAMED`]).
async fn no_known_version(client: &Client, group: &str, plural: &str) -> Result<IoError, IoError> {
    let mut serving = Vec::new();
    for version in io::group_versions(client, group)
        .await?
        .iter()
        .take(MAX_NAMED)
    {
        if io::serves(client, group, version, plural).await? {
            serving.push(shown(version, 63));
        }
    }
    let known: Vec<&str> = KNOWN.iter().map(|v| v.name()).collect();
    let served = if serving.is_empty() {
        "in no version (is the Cluster Inventory API's ClusterProfile CRD installed?)".to_string()
    } else {
        format!("only in {}", serving.join(", "))
    };
    Ok(IoError {
        action: "discover",
        object: format!("ClusterProfile versions ({group})"),
        message: format!(
            "the API server serves ClusterProfiles {served}; the provider reads {}",
            known.join(" or ")
        ),
        code: None,
        source: IoCause::NotServed,
    })
}

/// Lists the ClusterProfiles of `namespaces` (all when empty) through the served version; those that do not decode
/// beside them.
pub async fn list(
    client: &Client,
    namespaces: &[String],
) -> Result<(Vec<ClusterProfile>, Vec<Undecodable>), IoError> {
    match served_version(client).await? {
        ProfileVersion::V1alpha1 => io::list::<ClusterProfile>(client, namespaces, None).await,
        ProfileVersion::V1alpha2 => {
            let (got, bad) = io::list::<ClusterProfileV1alpha2>(client, namespaces, None).await?;
            Ok((got.into_iter().map(ClusterProfile::from).collect(), bad))
        }
    }
}

/// [`list`] within a read budget, each profile within the cap (`sveltos_clusterprofiles`: profiles are written by
/// the inventory's tenants; a longer one is among the undecodable ones, named).
pub async fn list_bounded(
    client: &Client,
    namespaces: &[String],
    bound: (&io::ReadBudget, io::ItemCap<'_>),
) -> Result<(Vec<ClusterProfile>, Vec<Undecodable>), IoError> {
    match served_version(client).await? {
        ProfileVersion::V1alpha1 => {
            io::list_bounded::<ClusterProfile>(client, namespaces, None, bound).await
        }
        ProfileVersion::V1alpha2 => {
            let (got, bad) =
                io::list_bounded::<ClusterProfileV1alpha2>(client, namespaces, None, bound).await?;
            Ok((got.into_iter().map(ClusterProfile::from).collect(), bad))
        }
    }
}

/// Reads ClusterProfile `namespace/name` through the served version; `None` when it does not exist.
pub async fn get_opt(
    client: &Client,
    namespace: &str,
    name: &str,
) -> Result<Option<ClusterProfile>, IoError> {
    match served_version(client).await? {
        ProfileVersion::V1alpha1 => io::get_opt::<ClusterProfile>(client, namespace, name).await,
        ProfileVersion::V1alpha2 => Ok(io::get_opt::<ClusterProfileV1alpha2>(
            client, namespace, name,
        )
        .await?
        .map(ClusterProfile::from)),
    }
}
