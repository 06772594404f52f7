//! The reads of the ClusterProfile data sources, one call down each: the profiles asked for and their
//! credentials located as the bridge locates them ([`super::credentials::locate_credentials`]).

use kube::Client;

use super::credentials::{LocatedCredentials, locate_credentials};
use crate::{
    api::ClusterProfile,
    domain::{credentials::CredentialOptions, exec::ProvidersFile},
    k8s::{
        io::{self, IoError},
        profiles,
    },
};

/// Most bytes of one ClusterProfile, as served, that `sveltos_clusterprofiles` reads (the bridge's bound on its
/// own SveltosClusters): a real profile's status is a few KiB; a longer one was made large by whoever writes it.
pub const LISTED_PROFILE_BYTES: usize = 512 << 10;

/// What a data source read: the profiles (in the order they are reported), their credentials located (one lookup
/// per profile, in the same order), and the profiles that exist but do not decode.
pub struct ReadProfiles {
    /// The profiles.
    pub profiles: Vec<ClusterProfile>,
    /// Their credentials.
    pub located: LocatedCredentials,
    /// Profiles that do not decode (not reported; a warning names them).
    pub undecodable: Vec<io::Undecodable>,
}

/// Why a data source's read failed.
#[derive(Debug, thiserror::Error)]
pub enum ProfilesError {
    /// The one profile asked for does not exist.
    #[error(
        "There is no ClusterProfile (multicluster.x-k8s.io) named {name} in namespace {namespace}."
    )]
    NotFound {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
    },
    /// Reading the one profile asked for failed.
    #[error("{source}")]
    Read {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// The API error.
        #[source]
        source: IoError,
    },
    /// Listing the profiles failed.
    #[error("{source}")]
    List {
        /// The API error.
        #[source]
        source: IoError,
    },
    /// Reading the credential sources failed; `key` is the one profile asked for, if one was.
    #[error("{source}")]
    Locate {
        /// The profile, when one was asked for.
        key: Option<String>,
        /// The API error.
        #[source]
        source: IoError,
    },
}

/// ClusterProfile `namespace/name` and its credentials.
pub async fn read_profile(
    client: &Client,
    namespace: &str,
    name: &str,
    options: &CredentialOptions,
    providers: Option<&ProvidersFile>,
) -> Result<ReadProfiles, ProfilesError> {
    let profile = profiles::get_opt(client, namespace, name)
        .await
        .map_err(|source| ProfilesError::Read {
            namespace: namespace.into(),
            name: name.into(),
            source,
        })?
        .ok_or_else(|| ProfilesError::NotFound {
            namespace: namespace.into(),
            name: name.into(),
        })?;
    let key = Some(profile.key());
    let budget = io::ReadBudget::default();
    let read = (vec![profile], Vec::new());
    located(client, read, (options, providers), key, &budget).await
}

/// The ClusterProfiles of `namespaces` (all when empty) that `keep` keeps, sorted by key, and their credentials.
pub async fn read_profiles(
    client: &Client,
    namespaces: &[String],
    keep: impl Fn(&ClusterProfile) -> bool,
    options: &CredentialOptions,
    providers: Option<&ProvidersFile>,
) -> Result<ReadProfiles, ProfilesError> {
    // ClusterProfiles are written by the inventory's tenants: paged within the read's budget, each within
    // [`LISTED_PROFILE_BYTES`] (a longer one is named in a warning, not listed).
    let budget = io::ReadBudget::default();
    let cap = io::ItemCap {
        bytes: LISTED_PROFILE_BYTES,
        keep: &[],
    };
    let (mut profiles, undecodable): (Vec<ClusterProfile>, _) =
        profiles::list_bounded(client, namespaces, (&budget, cap))
            .await
            .map_err(|source| ProfilesError::List { source })?;
    profiles.retain(keep);
    profiles.sort_by_key(ClusterProfile::key);
    let read = (profiles, undecodable);
    located(client, read, (options, providers), None, &budget).await
}

async fn located(
    client: &Client,
    (profiles, undecodable): (Vec<ClusterProfile>, Vec<io::Undecodable>),
    (options, providers): (&CredentialOptions, Option<&ProvidersFile>),
    key: Option<String>,
    budget: &io::ReadBudget,
) -> Result<ReadProfiles, ProfilesError> {
    let located = locate_credentials(client, options, providers, &profiles, budget)
        .await
        .map_err(|source| ProfilesError::Locate { key, source })?;
    Ok(ReadProfiles {
        profiles,
        located,
        undecodable,
    })
}
