//! Which single source a ClusterProfile's kubeconfig comes from: access providers (`kubeconfig-secretreader`,
//! exec plugins named in the providers file), chosen in the providers file's order as upstream does, then
//! labelled Secrets.
//!
//! Trust rules (the inventory is not trusted; see the security guide): a `kubeconfig-secretreader` provider may
//! only name a Secret in the profile's own namespace or in `credentials.secret_reader_namespaces`, with a name,
//! key, namespace and context checked before anything is requested; an exec provider is only used for a profile
//! in a namespace its `credentials.exec_providers` scope allows (and, when the scope lists servers, only for a
//! matching `https://` server); a labelled Secret in namespace B only supplies credentials to a profile in
//! namespace A != B when B carries the consumer label for `credentials.consumer` or is listed in
//! `credentials.secret_namespaces`.//!
//! | File | What it is |
//! |---|---|
//! | `source.rs` | What a lookup finds: [`CredentialSource`], [`Lookup`] |
//! | `offered.rs` | The access providers a profile offers ([`access_providers`], [`exec_extension`]) |
//! | `secret_reader.rs` | The Secret a `kubeconfig-secretreader` provider names, checked |
//! | `exec_scope.rs` | Whether `credentials.exec_providers` lets a profile use an exec provider |
//! | `secret_index.rs` | The labelled Secrets by profile ([`SecretIndex`]), with the namespace trust rule |

mod exec_scope;
mod offered;
mod secret_index;
mod secret_reader;
mod source;
#[cfg(test)]
mod tests;

use exec_scope::{Passed, exec_usable};
pub use offered::{access_providers, exec_extension};
pub use secret_index::SecretIndex;
use secret_reader::secret_reader_target;
pub use source::{CredentialSource, Lookup};

use super::{CredentialOptions, CredentialProblem, object_id};
use crate::{
    api::{AccessProvider, ClusterProfile, keys},
    domain::exec::{ProviderEntry, ProvidersFile},
};

/// Finds the credential source of one profile.
///
/// Access providers come first, chosen as the upstream access library chooses (`BuildConfigFromCP`): the
/// providers file is walked **in its order**, and the first provider the profile offers (in
/// `status.accessProviders`, else in the deprecated `status.credentialProviders`) is used. The built-in
/// `kubeconfig-secretreader` (the bridge reads the named Secret itself; no plugin runs) takes the place the file
/// gives it when the file lists it, and comes after every provider of the file otherwise (with no providers file,
/// it is the only access provider used). An exec provider the operator's scope does not allow for the profile
/// (`credentials.exec_providers`: not listed, or another namespace) is passed over as if the file did not list
/// it. Then labelled Secrets.
pub fn locate(
    profile: &ClusterProfile,
    options: &CredentialOptions,
    providers: Option<&ProvidersFile>,
    secrets: &SecretIndex<'_>,
) -> Lookup {
    let key = profile.key();
    let mut looked_at = Vec::new();
    if let Some(found) = from_access_providers(profile, options, providers, &mut looked_at) {
        return found;
    }
    if let Some(found) = from_labelled_secrets(&key, options, secrets) {
        return found;
    }
    looked_at.extend(
        secrets
            .rejected(&key)
            .iter()
            .map(|r| format!("Secret {r} ignored")),
    );
    looked_at.push(format!(
        "no Secret labelled {}={} {}",
        options.secret_label,
        profile.metadata.name.as_deref().unwrap_or_default(),
        where_secrets_may_be(
            profile.metadata.namespace.as_deref().unwrap_or_default(),
            options
        )
    ));
    Lookup::Unusable(CredentialProblem::NotFound {
        looked_at: looked_at.join("; "),
    })
}

/// Where a labelled Secret may supply a profile in namespace `ns` from (the only namespaces whose Secrets are read
/// for it), in words.
fn where_secrets_may_be(ns: &str, options: &CredentialOptions) -> String {
    let mut places = Vec::new();
    if !options.consumer_only {
        places.push(format!("namespace {ns}"));
    }
    places.push("credentials.secret_namespaces".to_string());
    if let Some(consumer) = &options.consumer {
        places.push(format!(
            "namespaces labelled {}={consumer}",
            keys::CONSUMER_NAMESPACE_LABEL
        ));
    }
    format!("in {}", places.join(", "))
}

/// The order access providers are tried in: the providers file's, then the built-in `kubeconfig-secretreader`
/// when the file does not list it.
fn provider_order(providers: Option<&ProvidersFile>) -> Vec<(&str, Option<&ProviderEntry>)> {
    let mut order: Vec<(&str, Option<&ProviderEntry>)> = providers
        .map(|f| {
            f.providers
                .iter()
                .map(|e| (e.name.as_str(), Some(e)))
                .collect()
        })
        .unwrap_or_default();
    if !file_lists(providers, keys::SECRET_READER_PROVIDER) {
        order.push((keys::SECRET_READER_PROVIDER, None));
    }
    order
}

/// Whether the providers file lists the provider `name`.
fn file_lists(providers: Option<&ProvidersFile>, name: &str) -> bool {
    providers.is_some_and(|f| f.providers.iter().any(|e| e.name == name))
}

/// The access providers, in [`provider_order`]: the first the profile offers and may use is its source, and one
/// it may not use with what it offers makes it unusable. `None`: no access provider applies; why each offered
/// one was passed over is added to `looked_at`.
fn from_access_providers(
    profile: &ClusterProfile,
    options: &CredentialOptions,
    providers: Option<&ProvidersFile>,
    looked_at: &mut Vec<String>,
) -> Option<Lookup> {
    let ns = profile.metadata.namespace.as_deref().unwrap_or_default();
    let offered = access_providers(profile);
    for (name, entry) in provider_order(providers) {
        let Some(provider) = offered.iter().find(|p| p.name == name) else {
            continue;
        };
        if name == keys::SECRET_READER_PROVIDER {
            match secret_reader_target(ns, provider, options) {
                Ok(Ok(source)) => return Some(Lookup::Found(source)),
                Ok(Err(reason)) => looked_at.push(reason),
                Err(refused) => return Some(Lookup::Unusable(refused)),
            }
            continue;
        }
        let Some(entry) = entry else { continue };
        match exec_usable(ns, provider, entry, options) {
            Ok(()) => {
                return Some(Lookup::Found(CredentialSource::Exec {
                    provider: provider.name.clone(),
                }));
            }
            Err(Passed::Over(reason)) => looked_at.push(reason),
            Err(Passed::Refused(problem)) => return Some(Lookup::Unusable(problem)),
        }
    }
    note_unlisted(&offered, options, providers, looked_at);
    None
}

/// Adds to `looked_at` why each access provider the profile offers that the providers file does not list was not
/// used.
fn note_unlisted(
    offered: &[&AccessProvider],
    options: &CredentialOptions,
    providers: Option<&ProvidersFile>,
    looked_at: &mut Vec<String>,
) {
    for provider in offered {
        if provider.name == keys::SECRET_READER_PROVIDER || file_lists(providers, &provider.name) {
            continue;
        }
        // A name only the profile gives: escaped and bounded before it reaches a warning or state.
        let name = crate::domain::text::shown(&provider.name, 64);
        looked_at.push(if !options.use_access_providers {
            format!("access provider {name} ignored (credentials.use_access_providers = false)")
        } else if providers.is_some() {
            format!("access provider {name} is not in credentials.exec_providers_file")
        } else {
            format!("access provider {name} needs credentials.exec_providers_file")
        });
    }
}

/// The labelled Secrets pointing at the profile `key`: the sole candidate is its source (with its kubeconfig key),
/// several are ambiguous. `None`: there is none.
fn from_labelled_secrets(
    key: &str,
    options: &CredentialOptions,
    secrets: &SecretIndex<'_>,
) -> Option<Lookup> {
    match secrets.candidates(key) {
        [] => None,
        [one] => Some(
            match super::resolve::kubeconfig_in_secret(one, &options.kubeconfig_keys) {
                Ok((key, _)) => Lookup::Found(CredentialSource::LabelledSecret {
                    namespace: one.metadata.namespace.clone().unwrap_or_default(),
                    name: one.metadata.name.clone().unwrap_or_default(),
                    key,
                }),
                Err(problem) => Lookup::Unusable(problem),
            },
        ),
        many => {
            let mut secrets: Vec<String> = many.iter().map(|s| object_id(&s.metadata)).collect();
            secrets.sort();
            Some(Lookup::Unusable(CredentialProblem::Ambiguous { secrets }))
        }
    }
}
