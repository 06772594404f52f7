//! The reads the credential path (`crate::domain::credentials`) asks for: the labelled credential Secrets, the
//! labels of consumer namespaces, the Secrets named by `kubeconfig-secretreader` providers (only those that
//! passed the core's namespace rules), and the operator's providers file.
//!
//! Cost: one LIST of consumer-labelled namespaces (only with a consumer); a metadata LIST of the labelled Secrets
//! of the namespaces that may supply credentials (paginated, within the run's [`io::ReadBudget`]), then the bodies
//! of the sole candidate of each profile in scope ([`read_labelled_bodies`], bounded as `crate::k8s::bodies`
//! says); for named Secrets, concurrent GETs, or a LIST of a namespace that holds many of them and little else.

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
    domain::{
        credentials::{CredentialOptions, SecretIndex, UNREADABLE_MARK},
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

/// Metadata kept of a listed credential Secret: what the credential lookup reads (namespace, name, and of its
/// labels the credential label and the profile-namespace label), nothing its writer could make large.
fn slim(meta: ObjectMeta, secret_label: &str) -> Secret {
    let labels = meta.labels.map(|l| {
        l.into_iter()
            .filter(|(k, _)| k == secret_label || k == keys::CLUSTER_PROFILE_NAMESPACE_LABEL)
            .collect()
    });
    Secret {
        metadata: ObjectMeta {
            namespace: meta.namespace,
            name: meta.name,
            uid: meta.uid,
            labels,
            ..Default::default()
        },
        ..Default::default()
    }
}

/// A Secret that exists but does not decode, as a credential lookup sees it: its name and (when they can be read)
/// the labels that make it a candidate, marked unreadable with why ([`unreadable_mark`]). A profile it is the
/// source of has that problem, confined to it; one that names no profile in scope is never looked at.
fn unreadable(bad: &io::Undecodable, secret_label: &str) -> Secret {
    let mut secret = slim(bad.meta.clone(), secret_label);
    unreadable_mark(&mut secret, &bad.reason);
    secret
}

/// Marks `secret` (a copy the provider made, which carries no annotation read from the cluster) as a Secret that
/// does not decode, with why (see `crate::domain::credentials::UNREADABLE_MARK`).
fn unreadable_mark(secret: &mut Secret, reason: &str) {
    secret.data = None;
    secret.metadata.annotations = Some(BTreeMap::from([(
        UNREADABLE_MARK.to_string(),
        reason.to_string(),
    )]));
}

/// Above this many namespaces that may supply credentials, the credential Secrets are listed in all namespaces (one
/// paginated LIST within the run's budget) rather than one namespace at a time.
pub const CREDENTIAL_NAMESPACES: usize = 32;

/// The namespaces whose labelled Secrets may supply credentials to the profiles `profile_keys`: theirs (unless
/// `consumer` was set explicitly), `secret_namespaces`, and the namespaces labelled for the consumer. Empty: none;
/// `None`: so many that one LIST of all namespaces is cheaper ([`CREDENTIAL_NAMESPACES`]).
fn credential_namespaces(
    options: &CredentialOptions,
    profile_keys: &[String],
    namespace_labels: &NamespaceLabels,
) -> Option<Vec<String>> {
    let mut out: BTreeSet<String> = options.secret_namespaces.iter().cloned().collect();
    if !options.consumer_only {
        out.extend(
            profile_keys
                .iter()
                .filter_map(|k| k.split_once('/').map(|(ns, _)| ns.to_string())),
        );
    }
    if let Some(consumer) = &options.consumer {
        out.extend(
            namespace_labels
                .iter()
                .filter(|(_, l)| l.get(keys::CONSUMER_NAMESPACE_LABEL) == Some(consumer))
                .map(|(ns, _)| ns.clone()),
        );
    }
    (out.len() <= CREDENTIAL_NAMESPACES).then(|| out.into_iter().collect())
}

/// Reads what credential lookups for `profile_keys` (`namespace/name`) start from: with a consumer, the
/// consumer-labelled namespaces; then the labelled Secrets of the namespaces that may supply these profiles
/// ([`credential_namespaces`]; a metadata LIST within `budget`), and the data of the sole candidate of each of
/// these profiles only ([`read_labelled_bodies`]). A Secret that does not decode is kept as unreadable
/// ([`unreadable`]): the problem of the profile it would serve.
pub async fn read_sources(
    client: &Client,
    options: &CredentialOptions,
    profile_keys: &[String],
    budget: &io::ReadBudget,
) -> Result<CredentialReads, IoError> {
    let namespace_labels = if options.consumer.is_none() {
        NamespaceLabels::new()
    } else {
        let list: Vec<Namespace> =
            io::list_cluster_scoped(client, Some(keys::CONSUMER_NAMESPACE_LABEL)).await?;
        list.into_iter()
            .map(|n| {
                (
                    n.metadata.name.unwrap_or_default(),
                    n.metadata.labels.unwrap_or_default(),
                )
            })
            .collect()
    };
    let mut labelled = Vec::new();
    let namespaces = credential_namespaces(options, profile_keys, &namespace_labels);
    if namespaces.as_ref().is_none_or(|n| !n.is_empty()) {
        let label = &options.secret_label;
        // One labelled Secret per profile is what an inventory usually holds: asked for in the first page.
        let bad = io::list_metadata_expecting::<Secret>(
            client,
            (namespaces.as_deref().unwrap_or_default(), Some(label)),
            budget,
            profile_keys.len() + 1,
            |metas| labelled.extend(metas.into_iter().map(|m| slim(m, label))),
        )
        .await?;
        labelled.extend(bad.iter().map(|b| unreadable(b, label)));
    }
    // Grown page by page: its spare room would be held through the plan.
    labelled.shrink_to_fit();
    let mut reads = CredentialReads {
        labelled,
        namespace_labels,
    };
    let wanted = SecretIndex::new(&reads.labelled, options, &reads.namespace_labels)
        .sole_candidates(profile_keys.iter().map(String::as_str));
    let scope = namespaces.unwrap_or_default();
    read_labelled_bodies(client, options, &mut reads, (&wanted, &scope)).await?;
    Ok(reads)
}

/// Fills in the data of the labelled Secrets in `wanted` (`(namespace, name)`, the sole candidates of the
/// profiles in scope: `crate::domain::credentials::SecretIndex::sole_candidates`). Only the values of
/// `credentials.kubeconfig_keys` are kept (the other keys stay, empty, so that a lookup can name them). One whose
/// body does not decode is marked unreadable; one already unreadable is not read again. `scope`: the namespaces
/// the Secrets were listed in (empty: all).
async fn read_labelled_bodies(
    client: &Client,
    options: &CredentialOptions,
    reads: &mut CredentialReads,
    (wanted, scope): (&BTreeSet<(String, String)>, &[String]),
) -> Result<(), IoError> {
    let listed: Vec<bodies::ObjectKey> = reads
        .labelled
        .iter()
        .map(|s| bodies::key_of(&s.metadata))
        .collect();
    let unreadable: BTreeSet<bodies::ObjectKey> = reads
        .labelled
        .iter()
        .filter(|s| is_unreadable(s))
        .map(|s| bodies::key_of(&s.metadata))
        .collect();
    let wanted: BTreeSet<bodies::ObjectKey> = wanted.difference(&unreadable).cloned().collect();
    let mut data: BTreeMap<bodies::ObjectKey, Secret> = BTreeMap::new();
    let bad = bodies::read_bodies::<Secret>(
        client,
        (Some(&options.secret_label), scope),
        &listed,
        &wanted,
        |page| {
            for mut secret in page {
                keep_kubeconfig_keys(&mut secret, &options.kubeconfig_keys);
                data.insert(bodies::key_of(&secret.metadata), secret);
            }
        },
    )
    .await?;
    let bad: BTreeMap<bodies::ObjectKey, String> = bad
        .into_iter()
        .map(|u| (bodies::key_of(&u.meta), u.reason))
        .collect();
    for slot in &mut reads.labelled {
        let key = bodies::key_of(&slot.metadata);
        if let Some(full) = data.remove(&key) {
            // The body as read now: its labels may have changed since the metadata LIST; the lookup uses the
            // labels it indexed, and the data of the object at that name.
            slot.data = full.data;
        } else if let Some(why) = bad.get(&key) {
            unreadable_mark(slot, why);
        }
    }
    Ok(())
}

/// Whether `secret` was marked unreadable by [`unreadable_mark`].
fn is_unreadable(secret: &Secret) -> bool {
    secret
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(UNREADABLE_MARK))
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
/// at most [`bodies::GET_AT_MOST`] of them; otherwise a metadata LIST of the namespace (within `budget`), then
/// their bodies as `crate::k8s::bodies` says (one LIST of the namespace when it holds little else, one GET each
/// otherwise). Never a LIST of all namespaces: these Secrets carry no label to narrow it. One that does not decode
/// is there, marked unreadable (the problem of the profile that names it).
pub async fn read_named_secrets(
    client: &Client,
    wanted: &BTreeSet<(String, String)>,
    budget: &io::ReadBudget,
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
            let bad = io::list_metadata_each::<Secret>(
                client,
                &[ns.to_string()],
                None,
                budget,
                |metas| listed.extend(metas.iter().map(bodies::key_of)),
            )
            .await?;
            listed.extend(bad.iter().map(|u| bodies::key_of(&u.meta)));
        } else {
            // One GET each: listed as if nothing else were there.
            listed.extend(here.iter().cloned());
        }
        let bad = bodies::read_bodies::<Secret>(client, (None, &[]), &listed, &here, |page| {
            for mut secret in page {
                // Only the provider marks a Secret unreadable.
                if let Some(a) = secret.metadata.annotations.as_mut() {
                    a.remove(UNREADABLE_MARK);
                }
                if let Some(slot) = out.get_mut(&bodies::key_of(&secret.metadata)) {
                    *slot = Some(secret);
                }
            }
        })
        .await?;
        for u in bad {
            if let Some(slot) = out.get_mut(&bodies::key_of(&u.meta)) {
                *slot = Some(unreadable(&u, ""));
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn options(consumer: Option<&str>, consumer_only: bool, listed: &[&str]) -> CredentialOptions {
        CredentialOptions {
            consumer: consumer.map(String::from),
            consumer_only,
            secret_namespaces: listed.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn credential_secrets_are_listed_only_where_they_may_supply_a_profile_in_scope() {
        let keys = vec!["a/p1".to_string(), "a/p2".to_string(), "b/p".to_string()];
        let labels: NamespaceLabels = BTreeMap::from([
            (
                "kep".into(),
                BTreeMap::from([(keys::CONSUMER_NAMESPACE_LABEL.into(), "sveltos".into())]),
            ),
            (
                "other".into(),
                BTreeMap::from([(keys::CONSUMER_NAMESPACE_LABEL.into(), "else".into())]),
            ),
        ]);
        let ns = |o: &CredentialOptions, keys: &[String]| credential_namespaces(o, keys, &labels);
        // Default: the profiles' own namespaces, the listed ones, and the consumer's.
        assert_eq!(
            ns(&options(Some("sveltos"), false, &["creds"]), &keys),
            Some(vec!["a".into(), "b".into(), "creds".into(), "kep".into()])
        );
        // `consumer = "else"` set explicitly: the profiles' namespaces no longer supply them.
        assert_eq!(
            ns(&options(Some("else"), true, &[]), &keys),
            Some(vec!["other".into()])
        );
        // `consumer = ""`: own namespaces and listed ones only.
        assert_eq!(
            ns(&options(None, false, &[]), &keys),
            Some(vec!["a".into(), "b".into()])
        );
        // Nothing in scope reads nothing; very many namespaces read all at once.
        assert_eq!(ns(&options(None, false, &[]), &[]), Some(vec![]));
        let many: Vec<String> = (0..=CREDENTIAL_NAMESPACES)
            .map(|i| format!("n{i}/p"))
            .collect();
        assert_eq!(ns(&options(None, false, &[]), &many), None);
    }

    #[test]
    fn a_listed_secret_keeps_only_what_the_lookup_reads() {
        let meta = ObjectMeta {
            namespace: Some("a".into()),
            name: Some("s".into()),
            labels: Some(BTreeMap::from([
                ("x-k8s.io/cluster-profile".into(), "p".into()),
                (keys::CLUSTER_PROFILE_NAMESPACE_LABEL.into(), "b".into()),
                ("big".into(), "x".repeat(60)),
            ])),
            annotations: Some(BTreeMap::from([(UNREADABLE_MARK.into(), "forged".into())])),
            ..Default::default()
        };
        let s = slim(meta.clone(), "x-k8s.io/cluster-profile");
        assert_eq!(s.metadata.labels.as_ref().unwrap().len(), 2);
        assert!(
            !is_unreadable(&s),
            "a mark read from the cluster is never kept"
        );
        let bad = io::Undecodable {
            meta,
            reason: "invalid type".into(),
            ..Default::default()
        };
        let u = unreadable(&bad, "x-k8s.io/cluster-profile");
        assert!(is_unreadable(&u) && u.data.is_none());
        assert_eq!(
            u.metadata.annotations.unwrap()[UNREADABLE_MARK],
            "invalid type"
        );
    }
}
