//! The data sources' credential report: the same credential path as the bridge (`crate::domain::credentials`),
//! on what `crate::runtime::profiles` read. Secret contents are only inspected to judge them; they are never
//! copied into a result or a log.

use crate::{
    api::ClusterProfile,
    domain::{
        credentials::{CredentialOptions, CredentialSecrets, Lookup, resolve},
        exec::ProvidersFile,
    },
    runtime::profiles::ReadProfiles,
};

/// Where a profile's credentials would come from, and whether they are usable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CredentialStatus {
    /// Value of `credential_source`.
    pub source: String,
    /// Value of `ready_to_bridge`.
    pub ready: bool,
}

/// Judges one lookup as the bridge would: `credential_source` names the source (or why there is none), with
/// ` (not usable: <reason>)` when the source exists but its credentials cannot be used.
pub fn status(
    profile: &ClusterProfile,
    lookup: &Lookup,
    options: &CredentialOptions,
    providers: Option<&ProvidersFile>,
    secrets: &CredentialSecrets<'_>,
) -> CredentialStatus {
    let describe = lookup.describe();
    let Lookup::Found(source) = lookup else {
        return CredentialStatus {
            source: describe,
            ready: false,
        };
    };
    match resolve(profile, source, options, providers, secrets) {
        Ok(_) => CredentialStatus {
            source: describe,
            ready: true,
        },
        Err(problem) => CredentialStatus {
            source: format!("{describe} (not usable: {problem})"),
            ready: false,
        },
    }
}

/// The credential status of every profile read, in their order.
pub fn statuses(
    read: &ReadProfiles,
    options: &CredentialOptions,
    providers: Option<&ProvidersFile>,
) -> Vec<CredentialStatus> {
    let secrets = read.located.secrets();
    read.profiles
        .iter()
        .zip(&read.located.lookups)
        .map(|(p, l)| status(p, l, options, providers, &secrets))
        .collect()
}
