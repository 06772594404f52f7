//! The IO side of the data sources' credential report: read the labelled Secrets (and, with a consumer, the
//! labelled namespaces) once, locate each profile's credentials, and read the Secrets named by
//! `kubeconfig-secretreader` access providers. Secret contents are only inspected for the presence of a
//! kubeconfig; they are never copied into a result or a log.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Namespace, Secret};

use super::profile_value::{CredentialStatus, assess};
use crate::{
    api::{ClusterProfile, keys},
    bridge::{
        CredentialOptions,
        credentials::{CredentialSource, Lookup, SecretIndex, locate},
        exec::ProvidersFile,
    },
    k8s::io::{self, IoError},
};

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
    // Existence selector on the label key: only Secrets that name some profile.
    let labelled: Vec<Secret> = io::list(client, &[], Some(&options.secret_label)).await?;
    let mut namespace_labels: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    if options.consumer.is_some() {
        let namespaces: Vec<Namespace> =
            io::list_cluster_scoped(client, Some(keys::CONSUMER_NAMESPACE_LABEL)).await?;
        for ns in namespaces {
            if let Some(name) = ns.metadata.name {
                namespace_labels.insert(name, ns.metadata.labels.unwrap_or_default());
            }
        }
    }
    let index = SecretIndex::new(&labelled, options, &namespace_labels);
    let lookups: Vec<Lookup> = profiles
        .iter()
        .map(|p| locate(p, options, providers, &index))
        .collect();
    let to_read: BTreeSet<(String, String)> = lookups
        .iter()
        .filter_map(|l| match l {
            Lookup::Found(CredentialSource::SecretReader {
                namespace, name, ..
            }) => Some((namespace.clone(), name.clone())),
            _ => None,
        })
        .collect();
    let mut fetched = BTreeMap::new();
    for (ns, name) in to_read {
        let secret = io::get_opt::<Secret>(client, &ns, &name).await?;
        fetched.insert((ns, name), secret);
    }
    tracing::debug!(
        profiles = profiles.len(),
        labelled_secrets = labelled.len(),
        secretreader_secrets = fetched.len(),
        "located ClusterProfile credentials"
    );
    Ok(lookups
        .iter()
        .map(|l| assess(l, options, &labelled, &fetched))
        .collect())
}
