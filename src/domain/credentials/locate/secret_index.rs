//! The labelled credential Secrets, indexed by the profile they point at, with the trust rule for Secrets in
//! another namespace than the profile's.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Secret;

use crate::{
    api::keys,
    domain::credentials::{CredentialOptions, object_id},
};

/// Index of the candidate labelled Secrets, by the `namespace/name` of the profile they point at. `Debug` shows
/// counts only: the Secrets hold credentials.
#[derive(Default)]
pub struct SecretIndex<'a> {
    by_profile: BTreeMap<String, Vec<&'a Secret>>,
    rejected: BTreeMap<String, Vec<String>>,
}

impl std::fmt::Debug for SecretIndex<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecretIndex")
            .field("profiles", &self.by_profile.len())
            .field("rejected", &self.rejected.len())
            .finish()
    }
}

impl<'a> SecretIndex<'a> {
    /// Indexes the Secrets carrying `options.secret_label`. A Secret in namespace B counts for a profile in
    /// namespace A when:
    /// - B is listed in `secret_namespaces`, or
    /// - B is labelled `x-k8s.io/cluster-inventory-consumer=<consumer>` (the default consumer is `sveltos`), or
    /// - A = B, unless `consumer` was set explicitly (then only the two rules above count).
    ///
    /// `namespace_labels` gives the labels of the namespaces (needed with a consumer only).
    pub fn new(
        secrets: &'a [Secret],
        options: &CredentialOptions,
        namespace_labels: &BTreeMap<String, BTreeMap<String, String>>,
    ) -> Self {
        let mut index = Self::default();
        for secret in secrets {
            let meta = &secret.metadata;
            let Some(labels) = meta.labels.as_ref() else {
                continue;
            };
            let Some(profile) = labels.get(&options.secret_label) else {
                continue;
            };
            let ns = meta.namespace.clone().unwrap_or_default();
            let profile_ns = labels
                .get(keys::CLUSTER_PROFILE_NAMESPACE_LABEL)
                .cloned()
                .unwrap_or_else(|| ns.clone());
            let key = format!("{profile_ns}/{profile}");
            let listed = options.secret_namespaces.contains(&ns);
            let consumer_ns = options.consumer.as_ref().is_some_and(|consumer| {
                namespace_labels
                    .get(&ns)
                    .and_then(|l| l.get(keys::CONSUMER_NAMESPACE_LABEL))
                    .is_some_and(|c| c == consumer)
            });
            let own = profile_ns == ns && !options.consumer_only;
            let refusal = (!own && !listed && !consumer_ns).then(|| match &options.consumer {
                Some(consumer) if options.consumer_only => format!(
                    "namespace {ns} is not labelled {}={consumer} nor listed in credentials.secret_namespaces",
                    keys::CONSUMER_NAMESPACE_LABEL
                ),
                Some(consumer) => format!(
                    "it is in namespace {ns}, not the ClusterProfile's, and {ns} is not labelled {}={consumer}; \
                     label it, or list it in credentials.secret_namespaces",
                    keys::CONSUMER_NAMESPACE_LABEL
                ),
                None => format!(
                    "it is in namespace {ns}, not the ClusterProfile's; list {ns} in credentials.secret_namespaces \
                     or set credentials.consumer to accept it"
                ),
            });
            if let Some(why) = refusal {
                index
                    .rejected
                    .entry(key)
                    .or_default()
                    .push(format!("{} ({why})", object_id(meta)));
                continue;
            }
            index.by_profile.entry(key).or_default().push(secret);
        }
        index
    }

    /// `(namespace, name)` of the Secrets whose bodies [`locate`](super::locate) reads for these profile keys: the sole
    /// candidate of each (with none, or several, no body is read: the lookup needs names only). Indexed from
    /// metadata alone, this bounds the credential Secrets read in full to one per profile in scope.
    pub fn sole_candidates<'k>(
        &self,
        profile_keys: impl IntoIterator<Item = &'k str>,
    ) -> std::collections::BTreeSet<(String, String)> {
        profile_keys
            .into_iter()
            .filter_map(|key| match self.candidates(key) {
                [one] => Some((
                    one.metadata.namespace.clone().unwrap_or_default(),
                    one.metadata.name.clone().unwrap_or_default(),
                )),
                _ => None,
            })
            .collect()
    }

    /// Candidate Secrets for a profile key.
    pub fn candidates(&self, profile_key: &str) -> &[&'a Secret] {
        self.by_profile
            .get(profile_key)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }
    /// The labelled Secrets that point at a profile key but may not supply it, with why.
    pub(super) fn rejected(&self, profile_key: &str) -> &[String] {
        self.rejected
            .get(profile_key)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }
}
