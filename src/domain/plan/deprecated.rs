//! ClusterProfiles whose credential comes from an access provider offered only in the deprecated
//! `status.credentialProviders`. `multicluster.x-k8s.io/v1alpha2` drops the field, and the upstream access library
//! from v0.2 on reads v1alpha2: the bridge still uses such a provider (it reads v1alpha1, the storage version, which
//! keeps the field), every consumer built on the current library does not see it. One warning names them.

use super::{Inputs, LISTED, Located, Plan};
use crate::{
    api::{ClusterProfile, keys},
    domain::{
        credentials::{CredentialSource, Lookup},
        problem::{Problem, Step},
        text::shown,
    },
};

/// The provider name a located credential uses, if it comes from an access provider.
fn provider_name(lookup: &Lookup) -> Option<&str> {
    match lookup {
        Lookup::Found(CredentialSource::SecretReader { .. }) => Some(keys::SECRET_READER_PROVIDER),
        Lookup::Found(CredentialSource::Exec { provider }) => Some(provider),
        _ => None,
    }
}

/// Whether `provider` is offered in `credentialProviders` and not in `accessProviders`.
fn only_in_credential_providers(profile: &ClusterProfile, provider: &str) -> bool {
    profile.status.as_ref().is_some_and(|s| {
        !s.access_providers.iter().any(|p| p.name == provider)
            && s.credential_providers.iter().any(|p| p.name == provider)
    })
}

/// Adds the warning naming every selected cluster whose credential relies on `credentialProviders` only.
pub(super) fn warn_credential_providers_only(
    inputs: &Inputs<'_>,
    located: &Located,
    plan: &mut Plan,
) {
    let mut lines: Vec<String> = Vec::new();
    for (i, lookup) in &located.lookups {
        let profile = &inputs.profiles[*i];
        if let Some(provider) = provider_name(lookup)
            && only_in_credential_providers(profile, provider)
        {
            lines.push(format!(
                "- {} (provider \"{}\")",
                profile.key(),
                shown(provider, 63)
            ));
        }
    }
    if lines.is_empty() {
        return;
    }
    let n = lines.len();
    lines.sort();
    if n > LISTED {
        lines.truncate(LISTED);
        lines.push(format!("- and {} more", n - LISTED));
    }
    plan.problems.push(Problem::warning(
        vec![Step::Attr("credentials")],
        format!(
            "{n} ClusterProfile(s) offer their access provider only in the deprecated status.credentialProviders"
        ),
        format!(
            "{}\n\nThe bridge uses these providers (it reads multicluster.x-k8s.io/v1alpha1, the storage version, \
             which keeps the field). multicluster.x-k8s.io/v1alpha2 has no credentialProviders, and consumers built \
             on the upstream access library from v0.2 on read v1alpha2: they do not see these providers. Ask the \
             cluster manager to publish them in status.accessProviders.",
            lines.join("\n")
        ),
    ));
}

#[cfg(test)]
mod tests {
    use crate::api::AccessProvider;
    use crate::domain::plan::fixture::*;
    use crate::domain::plan::*;

    fn secret_reader(secret: &str) -> AccessProvider {
        serde_json::from_value(serde_json::json!({
            "name": "kubeconfig-secretreader",
            "cluster": {
                "server": "https://member.example.com:6443",
                "extensions": [{"name": "client.authentication.k8s.io/exec",
                                "extension": {"name": secret}}]
            }
        }))
        .unwrap()
    }

    fn warning(p: &Plan) -> Option<&Problem> {
        p.problems
            .iter()
            .find(|x| x.summary.contains("status.credentialProviders"))
    }

    #[test]
    fn a_provider_offered_only_in_credential_providers_is_used_with_a_warning_naming_its_cluster() {
        let mut f = Fixture::new();
        // a/c1 has no labelled Secret: its credential comes from the secretreader provider in credentialProviders.
        f.secrets
            .retain(|s| s.metadata.namespace.as_deref() != Some("a"));
        let status = f.profiles[0].status.get_or_insert_with(Default::default);
        status.credential_providers = vec![secret_reader("member-kc")];
        let p = f.run();
        let w = warning(&p).unwrap_or_else(|| panic!("{:?}", p.problems));
        assert_eq!(w.severity, Severity::Warning);
        assert!(w.summary.starts_with("1 ClusterProfile(s)"), "{w:?}");
        assert!(
            w.detail
                .contains("- a/c1 (provider \"kubeconfig-secretreader\")")
                && !w.detail.contains("b/c1"),
            "{w:?}"
        );
        // Offered in accessProviders too: upstream consumers see it, no warning.
        let status = f.profiles[0].status.as_mut().unwrap();
        status.access_providers = vec![secret_reader("member-kc")];
        assert!(warning(&f.run()).is_none());
    }
}
