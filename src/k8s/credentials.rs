//! The reads the credential path (`crate::bridge::credentials`) asks for: the labelled credential Secrets, the
//! labels of consumer namespaces, the Secrets named by `kubeconfig-secretreader` providers (only those that
//! passed the core's namespace rules), and the operator's providers file.
//!
//! Cost: a metadata LIST of labelled Secrets, then the bodies of the sole candidate of each profile in scope
//! ([`read_labelled_bodies`], bounded as `crate::k8s::bodies` says); one LIST of consumer-labelled namespaces
//! (only with a consumer); for named Secrets, concurrent GETs, or a LIST of a namespace that holds many of them
//! and little else.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::{
    api::core::v1::{Namespace, Secret},
    apimachinery::pkg::apis::meta::v1::ObjectMeta,
};
use kube::Client;

use super::{
    bodies,
    io::{self, IoError},
};
use crate::{
    api::keys,
    bridge::{
        credentials::{CredentialOptions, SecretIndex},
        exec::ProvidersFile,
    },
};

/// Labels of namespaces, by name.
pub type NamespaceLabels = BTreeMap<String, BTreeMap<String, String>>;

/// What credential lookups start from.
#[derive(Default)]
pub struct CredentialReads {
    /// Secrets carrying `credentials.secret_label`: metadata (names and labels) only, until
    /// [`read_labelled_bodies`] fills in the data of the ones a lookup reads.
    pub labelled: Vec<Secret>,
    /// Labels of the namespaces that carry the consumer label (empty without a consumer).
    pub namespace_labels: NamespaceLabels,
}

/// Metadata kept of a listed Secret: what the credential lookup reads (namespace, name, labels), nothing that
/// its writer could make large besides its labels.
fn slim(meta: ObjectMeta) -> Secret {
    Secret {
        metadata: ObjectMeta {
            namespace: meta.namespace,
            name: meta.name,
            uid: meta.uid,
            labels: meta.labels,
            ..Default::default()
        },
        ..Default::default()
    }
}

/// Reads what credential lookups for `profile_keys` (`namespace/name`) start from: the labelled Secrets (a
/// metadata LIST, then the data of the sole candidate of each of these profiles only, see
/// [`read_labelled_bodies`]) and, with a consumer, the consumer-labelled namespaces.
pub async fn read_sources(
    client: &Client,
    options: &CredentialOptions,
    profile_keys: &[String],
) -> Result<CredentialReads, IoError> {
    let secrets = async {
        let mut labelled = Vec::new();
        io::list_metadata_each::<Secret>(client, &[], Some(&options.secret_label), |metas| {
            labelled.extend(metas.into_iter().map(slim))
        })
        .await?;
        Ok(labelled)
    };
    let namespaces = async {
        if options.consumer.is_none() {
            return Ok(NamespaceLabels::new());
        }
        let list: Vec<Namespace> =
            io::list_cluster_scoped(client, Some(keys::CONSUMER_NAMESPACE_LABEL)).await?;
        Ok(list
            .into_iter()
            .map(|n| {
                (
                    n.metadata.name.unwrap_or_default(),
                    n.metadata.labels.unwrap_or_default(),
                )
            })
            .collect())
    };
    let (labelled, namespace_labels) = futures::try_join!(secrets, namespaces)?;
    let mut reads = CredentialReads {
        labelled,
        namespace_labels,
    };
    let wanted = SecretIndex::new(&reads.labelled, options, &reads.namespace_labels)
        .sole_candidates(profile_keys.iter().map(String::as_str));
    read_labelled_bodies(client, options, &mut reads, &wanted).await?;
    Ok(reads)
}

/// Fills in the data of the labelled Secrets in `wanted` (`(namespace, name)`, the sole candidates of the
/// profiles in scope: `crate::bridge::credentials::SecretIndex::sole_candidates`). Only the values of
/// `credentials.kubeconfig_keys` are kept (the other keys stay, empty, so that a lookup can name them).
async fn read_labelled_bodies(
    client: &Client,
    options: &CredentialOptions,
    reads: &mut CredentialReads,
    wanted: &BTreeSet<(String, String)>,
) -> Result<(), IoError> {
    let listed: Vec<bodies::ObjectKey> = reads
        .labelled
        .iter()
        .map(|s| bodies::key_of(&s.metadata))
        .collect();
    let mut data: BTreeMap<bodies::ObjectKey, Secret> = BTreeMap::new();
    bodies::read_bodies::<Secret>(
        client,
        Some(&options.secret_label),
        &listed,
        wanted,
        |page| {
            for mut secret in page {
                keep_kubeconfig_keys(&mut secret, &options.kubeconfig_keys);
                data.insert(bodies::key_of(&secret.metadata), secret);
            }
        },
    )
    .await?;
    for slot in &mut reads.labelled {
        if let Some(full) = data.remove(&bodies::key_of(&slot.metadata)) {
            // The body as read now: its labels may have changed since the metadata LIST; the lookup uses the
            // labels it indexed, and the data of the object at that name.
            slot.data = full.data;
        }
    }
    Ok(())
}

/// Empties the values of `secret` under keys other than `keys`.
fn keep_kubeconfig_keys(secret: &mut Secret, keys: &[String]) {
    secret.string_data = None;
    if let Some(data) = secret.data.as_mut() {
        for (key, value) in data.iter_mut() {
            if !keys.contains(key) {
                value.0 = Vec::new();
            }
        }
    }
}

/// Reads the named Secrets (`None`: does not exist), namespace by namespace: one GET each where a namespace holds
/// at most [`bodies::GET_AT_MOST`] of them; otherwise a metadata LIST of the namespace, then their bodies as
/// `crate::k8s::bodies` says (one LIST of the namespace when it holds little else, one GET each otherwise).
/// Never a LIST of all namespaces: these Secrets carry no label to narrow it.
pub async fn read_named_secrets(
    client: &Client,
    wanted: &BTreeSet<(String, String)>,
) -> Result<BTreeMap<(String, String), Option<Secret>>, IoError> {
    let mut by_ns: BTreeMap<&str, BTreeSet<bodies::ObjectKey>> = BTreeMap::new();
    for key in wanted {
        by_ns.entry(&key.0).or_default().insert(key.clone());
    }
    let mut out: BTreeMap<(String, String), Option<Secret>> =
        wanted.iter().map(|k| (k.clone(), None)).collect();
    for (ns, here) in by_ns {
        let mut listed: Vec<bodies::ObjectKey> = Vec::new();
        if here.len() > bodies::GET_AT_MOST {
            io::list_metadata_each::<Secret>(client, &[ns.to_string()], None, |metas| {
                listed.extend(metas.iter().map(bodies::key_of))
            })
            .await?;
        } else {
            // One GET each: listed as if nothing else were there.
            listed.extend(here.iter().cloned());
        }
        bodies::read_bodies::<Secret>(client, None, &listed, &here, |page| {
            for secret in page {
                if let Some(slot) = out.get_mut(&bodies::key_of(&secret.metadata)) {
                    *slot = Some(secret);
                }
            }
        })
        .await?;
    }
    Ok(out)
}

/// Why the providers file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ProvidersFileError {
    /// The file cannot be read.
    #[error(
        "cannot read {path}: {source}. Check the path (relative paths are resolved from the working directory)"
    )]
    Read {
        /// The configured path.
        path: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a valid providers file.
    #[error("{path}: {detail}")]
    Parse {
        /// The configured path.
        path: String,
        /// What is wrong.
        detail: String,
    },
}

/// Reads and parses the operator's providers file (`credentials.exec_providers_file`).
pub fn read_providers_file(path: &str) -> Result<ProvidersFile, ProvidersFileError> {
    let bytes = std::fs::read(path).map_err(|source| ProvidersFileError::Read {
        path: path.to_string(),
        source,
    })?;
    ProvidersFile::parse(&bytes).map_err(|e| ProvidersFileError::Parse {
        path: path.to_string(),
        detail: e.to_string(),
    })
}
