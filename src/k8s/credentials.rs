//! The reads the credential path (`crate::bridge::credentials`) asks for: the labelled credential Secrets, the
//! labels of consumer namespaces, the Secrets named by `kubeconfig-secretreader` providers (only those that
//! passed the core's namespace rules), and the operator's providers file.
//!
//! Cost: one LIST of labelled Secrets, one LIST of consumer-labelled namespaces (only with a
//! consumer), and for named Secrets concurrent GETs, or one LIST of a namespace that holds many of them.

use std::collections::{BTreeMap, BTreeSet};

use futures::{StreamExt, TryStreamExt, stream};
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::Client;

use super::io::{self, IoError};
use crate::{
    api::keys,
    bridge::{credentials::CredentialOptions, exec::ProvidersFile},
};

/// How many reads run at once.
const CONCURRENCY: usize = 16;
/// A namespace holding more named Secrets than this is read with one LIST instead of one GET per Secret.
const LIST_ABOVE: usize = 16;

/// Labels of namespaces, by name.
pub type NamespaceLabels = BTreeMap<String, BTreeMap<String, String>>;

/// What credential lookups start from.
#[derive(Default)]
pub struct CredentialReads {
    /// Secrets carrying `credentials.secret_label` (with data).
    pub labelled: Vec<Secret>,
    /// Labels of the namespaces that carry the consumer label (empty without a consumer).
    pub namespace_labels: NamespaceLabels,
}

/// Reads the labelled Secrets and, with a consumer, the consumer-labelled namespaces (concurrently).
pub async fn read_sources(
    client: &Client,
    options: &CredentialOptions,
) -> Result<CredentialReads, IoError> {
    let secrets = io::list::<Secret>(client, &[], Some(&options.secret_label));
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
    Ok(CredentialReads {
        labelled,
        namespace_labels,
    })
}

/// Reads the named Secrets (`None`: does not exist): concurrent GETs, or one LIST for a namespace holding more
/// than [`LIST_ABOVE`] of them.
pub async fn read_named_secrets(
    client: &Client,
    wanted: &BTreeSet<(String, String)>,
) -> Result<BTreeMap<(String, String), Option<Secret>>, IoError> {
    let mut by_ns: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (ns, name) in wanted {
        by_ns.entry(ns).or_default().push(name);
    }
    let mut out: BTreeMap<(String, String), Option<Secret>> =
        wanted.iter().map(|k| (k.clone(), None)).collect();
    let mut gets = Vec::new();
    for (ns, names) in by_ns {
        if names.len() > LIST_ABOVE {
            for s in io::list::<Secret>(client, &[ns.to_string()], None).await? {
                let key = (ns.to_string(), s.metadata.name.clone().unwrap_or_default());
                if let Some(slot) = out.get_mut(&key) {
                    *slot = Some(s);
                }
            }
        } else {
            gets.extend(names.into_iter().map(|n| (ns.to_string(), n.to_string())));
        }
    }
    let got: Vec<((String, String), Option<Secret>)> = stream::iter(gets)
        .map(|(ns, name)| async move {
            let s = io::get_opt::<Secret>(client, &ns, &name).await?;
            Ok::<_, IoError>(((ns, name), s))
        })
        .buffer_unordered(CONCURRENCY)
        .try_collect()
        .await?;
    out.extend(got);
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
