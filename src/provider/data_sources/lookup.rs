//! The data sources' credential report: the same credential path as the bridge (`crate::domain::credentials`),
//! on what `crate::runtime::profiles` read. Secret contents are only inspected to judge them; they are never
//! copied into a result or a log.

use crate::{
    api::ClusterProfile,
    domain::{
        credentials::{CredentialOptions, CredentialSecrets, Lookup, Resolved, resolve},
        exec::ProvidersFile,
    },
    provider::diag::secret_reader_notices,
    runtime::profiles::ReadProfiles,
};

/// Where a profile's credentials would come from, and whether they are usable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CredentialStatus {
    /// Value of `credential_source`.
    pub source: String,
    /// Value of `ready_to_bridge`.
    pub ready: bool,
    /// What the bridge's plan would warn about for a usable source (a `kubeconfig-secretreader` Secret pointing
    /// elsewhere than the ClusterProfile): fields and hosts, never credential content.
    pub notice: Option<String>,
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
            notice: None,
        };
    };
    match resolve(profile, source, options, providers, secrets) {
        Ok(resolved) => CredentialStatus {
            source: describe,
            ready: true,
            notice: match resolved {
                Resolved::Kubeconfig { notice, .. } => notice,
                Resolved::Exec(_) => None,
            },
        },
        Err(problem) => CredentialStatus {
            source: format!("{describe} (not usable: {problem})"),
            ready: false,
            notice: None,
        },
    }
}

/// The warning for the profiles read whose `kubeconfig-secretreader` Secret points elsewhere (`statuses` in the
/// order of `profiles`), as the bridge's plan gives it.
pub fn notices_warning(
    profiles: &[ClusterProfile],
    statuses: &[CredentialStatus],
) -> Option<crate::tfplugin::Diagnostic> {
    let keys: Vec<String> = profiles.iter().map(ClusterProfile::key).collect();
    secret_reader_notices(
        keys.iter()
            .zip(statuses)
            .filter_map(|(k, s)| Some((k.as_str(), s.notice.as_deref()?))),
    )
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
