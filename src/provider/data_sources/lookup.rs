//! The data sources' credential report: the same credential path as the bridge (`crate::domain::credentials`),
//! with the reads of `crate::k8s::credentials`. Secret contents are only inspected to judge them; they are never
//! copied into a result or a log.

use crate::{
    api::ClusterProfile,
    domain::{
        credentials::{
            CredentialOptions, CredentialSecrets, Lookup, SecretIndex, locate, resolve,
            resolve::secrets_to_read,
        },
        exec::ProvidersFile,
    },
    k8s::{
        credentials::{read_named_secrets, read_sources},
        io::{self, IoError},
    },
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

/// The credential status of every profile, in the order given.
pub async fn credential_statuses(
    client: &kube::Client,
    options: &CredentialOptions,
    providers: Option<&ProvidersFile>,
    profiles: &[ClusterProfile],
) -> Result<Vec<CredentialStatus>, IoError> {
    if profiles.is_empty() {
        return Ok(Vec::new());
    }
    let keys: Vec<String> = profiles.iter().map(|p| p.key()).collect();
    let budget = io::ReadBudget::default();
    let reads = read_sources(client, options, &keys, &budget).await?;
    let index = SecretIndex::new(&reads.labelled, options, &reads.namespace_labels);
    let lookups: Vec<Lookup> = profiles
        .iter()
        .map(|p| locate(p, options, providers, &index))
        .collect();
    let fetched = read_named_secrets(client, &secrets_to_read(&lookups), &budget).await?;
    tracing::debug!(
        profiles = profiles.len(),
        labelled_secrets = reads.labelled.len(),
        secretreader_secrets = fetched.len(),
        "located ClusterProfile credentials"
    );
    let secrets = CredentialSecrets::new(&reads.labelled, &fetched);
    Ok(profiles
        .iter()
        .zip(&lookups)
        .map(|(p, l)| status(p, l, options, providers, &secrets))
        .collect())
}
