//! Which single source a ClusterProfile's kubeconfig comes from: access providers (`kubeconfig-secretreader`,
//! exec plugins named in the providers file) and labelled Secrets, in that order of preference.
//!
//! Trust rules (the inventory is not trusted; see the security guide): a `kubeconfig-secretreader` provider may
//! only name a Secret in the profile's own namespace or in `credentials.secret_reader_namespaces`; a labelled
//! Secret in namespace B only supplies credentials to a profile in namespace A != B when B carries the consumer
//! label for `credentials.consumer` or is listed in `credentials.secret_namespaces`.

use std::{collections::BTreeMap, fmt};

use k8s_openapi::api::core::v1::Secret;

use super::{CredentialOptions, CredentialProblem, object_id};
use crate::{
    api::{AccessProvider, ClusterProfile, keys},
    bridge::exec::ProvidersFile,
};

/// A place a kubeconfig can be read from (never the bytes themselves).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum CredentialSource {
    /// A Secret labelled `x-k8s.io/cluster-profile=<name>`.
    LabelledSecret {
        /// Secret namespace.
        namespace: String,
        /// Secret name.
        name: String,
        /// Data key holding the kubeconfig.
        key: String,
    },
    /// The `kubeconfig-secretreader` access provider naming a Secret; `key` is `None` when the provider does
    /// not name one (then the configured `kubeconfig_keys` are tried in order).
    SecretReader {
        /// Secret namespace.
        namespace: String,
        /// Secret name.
        name: String,
        /// Data key, if the provider names one.
        key: Option<String>,
    },
    /// An exec plugin provider from the providers file.
    Exec {
        /// Provider name (as in `status.accessProviders[].name` and the providers file).
        provider: String,
    },
}

impl fmt::Display for CredentialSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::LabelledSecret {
                namespace,
                name,
                key,
            } => write!(f, "secret:{namespace}/{name}#{key}"),
            Self::SecretReader {
                namespace,
                name,
                key: Some(key),
            } => write!(
                f,
                "access-provider:{}:{namespace}/{name}#{key}",
                keys::SECRET_READER_PROVIDER
            ),
            Self::SecretReader {
                namespace,
                name,
                key: None,
            } => write!(
                f,
                "access-provider:{}:{namespace}/{name}",
                keys::SECRET_READER_PROVIDER
            ),
            Self::Exec { provider } => write!(f, "exec:{provider}"),
        }
    }
}

/// The outcome of looking for a profile's credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// Found a single source (whether it holds usable credentials is [`super::resolve`]'s question).
    Found(CredentialSource),
    /// No single usable source.
    Unusable(CredentialProblem),
}

impl Lookup {
    /// Human-readable description for `credential_source` attributes.
    pub fn describe(&self) -> String {
        match self {
            Self::Found(s) => s.to_string(),
            Self::Unusable(CredentialProblem::NotFound { looked_at }) => {
                format!("none: {looked_at}")
            }
            Self::Unusable(CredentialProblem::Ambiguous { secrets }) => {
                format!("ambiguous: {}", secrets.join(", "))
            }
            Self::Unusable(p) => format!("none: {p}"),
        }
    }
}

/// Index of the candidate labelled Secrets, by the `namespace/name` of the profile they point at.
#[derive(Debug, Default)]
pub struct SecretIndex<'a> {
    by_profile: BTreeMap<String, Vec<&'a Secret>>,
    rejected: BTreeMap<String, Vec<String>>,
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

    /// Candidate Secrets for a profile key.
    pub fn candidates(&self, profile_key: &str) -> &[&'a Secret] {
        self.by_profile
            .get(profile_key)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }
}

/// The access providers of a profile: `accessProviders`, then deprecated `credentialProviders` whose names are
/// not already present.
pub fn access_providers(profile: &ClusterProfile) -> Vec<&AccessProvider> {
    let Some(status) = profile.status.as_ref() else {
        return Vec::new();
    };
    let mut out: Vec<&AccessProvider> = status.access_providers.iter().collect();
    for p in &status.credential_providers {
        if !out.iter().any(|q| q.name == p.name) {
            out.push(p);
        }
    }
    out
}

/// The exec extension of an access provider (`client.authentication.k8s.io/exec`), if any.
pub fn exec_extension(provider: &AccessProvider) -> Option<&serde_json::Value> {
    provider
        .cluster
        .as_ref()?
        .extensions
        .iter()
        .find(|e| e.name == keys::EXEC_EXTENSION)
        .map(|e| &e.extension)
}

/// The Secret a `kubeconfig-secretreader` provider names. `Ok(None)`: the provider names none (reported, and other
/// sources are tried); `Err`: it names a namespace that is not allowed (the profile is not bridged at all).
fn secret_reader_target(
    profile_ns: &str,
    provider: &AccessProvider,
    options: &CredentialOptions,
) -> Result<Result<CredentialSource, String>, CredentialProblem> {
    let Some(ext) = exec_extension(provider) else {
        return Ok(Err(format!(
            "access provider {} has no {} extension naming the Secret",
            keys::SECRET_READER_PROVIDER,
            keys::EXEC_EXTENSION
        )));
    };
    // The reference is either the extension object itself or its `config` member.
    let target = ext.get("config").filter(|c| c.is_object()).unwrap_or(ext);
    let text = |k: &str| {
        target
            .get(k)
            .and_then(|v| v.as_str())
            .filter(|s| !s.is_empty())
    };
    let Some(name) = text("name") else {
        return Ok(Err(format!(
            "access provider {} names no Secret (extension {} needs {{\"name\": ..., \"key\": ...}})",
            keys::SECRET_READER_PROVIDER,
            keys::EXEC_EXTENSION
        )));
    };
    let namespace = text("namespace").unwrap_or(profile_ns);
    if namespace != profile_ns && !options.secret_reader_namespaces.contains(namespace) {
        return Err(CredentialProblem::ForeignSecretReaderNamespace {
            namespace: truncate(namespace),
        });
    }
    Ok(Ok(CredentialSource::SecretReader {
        namespace: namespace.to_string(),
        name: name.to_string(),
        key: text("key").map(str::to_string),
    }))
}

/// Caps a name taken from a profile before it goes into a message (the API server caps real names anyway).
fn truncate(s: &str) -> String {
    s.chars().take(253).collect()
}

/// Finds the credential source of one profile.
pub fn locate(
    profile: &ClusterProfile,
    options: &CredentialOptions,
    providers: Option<&ProvidersFile>,
    secrets: &SecretIndex<'_>,
) -> Lookup {
    let key = profile.key();
    let ns = profile.metadata.namespace.as_deref().unwrap_or_default();
    let mut looked_at = Vec::new();
    for provider in access_providers(profile) {
        if provider.name == keys::SECRET_READER_PROVIDER {
            match secret_reader_target(ns, provider, options) {
                Ok(Ok(source)) => return Lookup::Found(source),
                Ok(Err(reason)) => looked_at.push(reason),
                Err(refused) => return Lookup::Unusable(refused),
            }
        } else if !options.use_access_providers {
            looked_at.push(format!(
                "access provider {} ignored (credentials.use_access_providers = false)",
                provider.name
            ));
        } else if let Some(file) = providers {
            if file.get(&provider.name).is_some() {
                if provider.cluster.is_none() {
                    looked_at.push(format!(
                        "access provider {} has no cluster entry",
                        provider.name
                    ));
                    continue;
                }
                return Lookup::Found(CredentialSource::Exec {
                    provider: provider.name.clone(),
                });
            }
            looked_at.push(format!(
                "access provider {} is not in credentials.exec_providers_file",
                provider.name
            ));
        } else {
            looked_at.push(format!(
                "access provider {} needs credentials.exec_providers_file",
                provider.name
            ));
        }
    }
    match secrets.candidates(&key) {
        [] => {}
        [one] => {
            return match super::material::kubeconfig_in_secret(one, &options.kubeconfig_keys) {
                Ok((key, _)) => Lookup::Found(CredentialSource::LabelledSecret {
                    namespace: one.metadata.namespace.clone().unwrap_or_default(),
                    name: one.metadata.name.clone().unwrap_or_default(),
                    key,
                }),
                Err(problem) => Lookup::Unusable(problem),
            };
        }
        many => {
            let mut secrets: Vec<String> = many.iter().map(|s| object_id(&s.metadata)).collect();
            secrets.sort();
            return Lookup::Unusable(CredentialProblem::Ambiguous { secrets });
        }
    }
    if let Some(rejected) = secrets.rejected.get(&key) {
        looked_at.extend(rejected.iter().map(|r| format!("Secret {r} ignored")));
    }
    looked_at.push(format!(
        "no Secret labelled {}={}",
        options.secret_label,
        profile.metadata.name.as_deref().unwrap_or_default()
    ));
    Lookup::Unusable(CredentialProblem::NotFound {
        looked_at: looked_at.join("; "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bridge::testutil::*;

    fn opts() -> CredentialOptions {
        CredentialOptions::default()
    }

    #[test]
    fn labelled_secret_in_profile_namespace() {
        let p = profile("team-a", "c1", &[]);
        let secrets = [labelled_secret(
            "team-a",
            "c1-kc",
            "c1",
            None,
            &[("Config", KUBECONFIG)],
        )];
        let idx = SecretIndex::new(&secrets, &opts(), &BTreeMap::new());
        assert_eq!(
            locate(&p, &opts(), None, &idx),
            Lookup::Found(CredentialSource::LabelledSecret {
                namespace: "team-a".into(),
                name: "c1-kc".into(),
                key: "Config".into()
            })
        );
    }

    #[test]
    fn secret_in_another_namespace_needs_the_operators_consent() {
        let p = profile("team-a", "c1", &[]);
        let secrets = [labelled_secret(
            "creds",
            "x",
            "c1",
            Some("team-a"),
            &[("config", KUBECONFIG)],
        )];
        // Attack: whoever writes namespace `creds` cannot feed team-a's profile by labelling a Secret.
        let idx = SecretIndex::new(&secrets, &opts(), &BTreeMap::new());
        let Lookup::Unusable(CredentialProblem::NotFound { looked_at }) =
            locate(&p, &opts(), None, &idx)
        else {
            panic!("a cross-namespace Secret was used without consent")
        };
        assert!(
            looked_at.contains("creds/x") && looked_at.contains("secret_namespaces"),
            "{looked_at}"
        );
        // Listed by the operator: used.
        let o = CredentialOptions {
            secret_namespaces: ["creds".to_string()].into(),
            ..opts()
        };
        let idx = SecretIndex::new(&secrets, &o, &BTreeMap::new());
        assert!(
            matches!(locate(&p, &o, None, &idx), Lookup::Found(CredentialSource::LabelledSecret { namespace, .. }) if namespace == "creds")
        );
        // A consumer-labelled namespace: used.
        let o = CredentialOptions {
            consumer: Some("sveltos".into()),
            consumer_only: true,
            ..opts()
        };
        let labels = BTreeMap::from([(
            "creds".to_string(),
            BTreeMap::from([(
                keys::CONSUMER_NAMESPACE_LABEL.to_string(),
                "sveltos".to_string(),
            )]),
        )]);
        let idx = SecretIndex::new(&secrets, &o, &labels);
        assert!(matches!(locate(&p, &o, None, &idx), Lookup::Found(_)));
        // Without the namespace label the Secret belongs to a profile in its own namespace.
        let secrets = [labelled_secret(
            "creds",
            "x",
            "c1",
            None,
            &[("config", KUBECONFIG)],
        )];
        let idx = SecretIndex::new(&secrets, &opts(), &BTreeMap::new());
        assert!(matches!(
            locate(&p, &opts(), None, &idx),
            Lookup::Unusable(CredentialProblem::NotFound { .. })
        ));
    }

    #[test]
    fn the_default_consumer_accepts_its_namespaces_and_the_profiles_own() {
        let p = profile("team-a", "c1", &[]);
        let o = opts();
        assert_eq!(o.consumer.as_deref(), Some("sveltos"));
        let kep = labelled_secret(
            "inventory",
            "kep",
            "c1",
            Some("team-a"),
            &[("Config", KUBECONFIG)],
        );
        let own = labelled_secret("team-a", "seed", "c1", None, &[("config", KUBECONFIG)]);
        let ns_labels = BTreeMap::from([(
            "inventory".to_string(),
            BTreeMap::from([(
                keys::CONSUMER_NAMESPACE_LABEL.to_string(),
                "sveltos".to_string(),
            )]),
        )]);
        for (secrets, want) in [(vec![kep.clone()], "kep"), (vec![own.clone()], "seed")] {
            let idx = SecretIndex::new(&secrets, &o, &ns_labels);
            assert!(
                matches!(locate(&p, &o, None, &idx), Lookup::Found(CredentialSource::LabelledSecret { name, .. }) if name == want),
                "{want}"
            );
        }
        // Labelled for another consumer: refused.
        let other = BTreeMap::from([(
            "inventory".to_string(),
            BTreeMap::from([(
                keys::CONSUMER_NAMESPACE_LABEL.to_string(),
                "argo".to_string(),
            )]),
        )]);
        let secrets = [kep];
        let idx = SecretIndex::new(&secrets, &o, &other);
        assert!(matches!(
            locate(&p, &o, None, &idx),
            Lookup::Unusable(CredentialProblem::NotFound { .. })
        ));
    }

    #[test]
    fn consumer_filter_ignores_other_namespaces() {
        let p = profile("team-a", "c1", &[]);
        let o = CredentialOptions {
            consumer: Some("sveltos".into()),
            consumer_only: true,
            ..opts()
        };
        let secrets = [
            labelled_secret(
                "other",
                "x",
                "c1",
                Some("team-a"),
                &[("Config", KUBECONFIG)],
            ),
            labelled_secret(
                "consumer-ns",
                "y",
                "c1",
                Some("team-a"),
                &[("Config", KUBECONFIG)],
            ),
        ];
        let ns_labels = BTreeMap::from([(
            "consumer-ns".to_string(),
            BTreeMap::from([(
                keys::CONSUMER_NAMESPACE_LABEL.to_string(),
                "sveltos".to_string(),
            )]),
        )]);
        let idx = SecretIndex::new(&secrets, &o, &ns_labels);
        assert!(
            matches!(locate(&p, &o, None, &idx), Lookup::Found(CredentialSource::LabelledSecret { name, .. }) if name == "y")
        );
        // Without a consumer, both listed by the operator: ambiguous, naming both.
        let o = CredentialOptions {
            secret_namespaces: ["other".to_string(), "consumer-ns".to_string()].into(),
            ..opts()
        };
        let idx = SecretIndex::new(&secrets, &o, &ns_labels);
        assert_eq!(
            locate(&p, &o, None, &idx),
            Lookup::Unusable(CredentialProblem::Ambiguous {
                secrets: vec!["consumer-ns/y".into(), "other/x".into()]
            })
        );
    }

    #[test]
    fn secret_reader_provider_wins_and_defaults_namespace() {
        let mut p = profile("team-a", "c1", &[]);
        add_provider(
            &mut p,
            "kubeconfig-secretreader",
            serde_json::json!({"name": "kc", "key": "value"}),
        );
        let idx = SecretIndex::default();
        assert_eq!(
            locate(&p, &opts(), None, &idx),
            Lookup::Found(CredentialSource::SecretReader {
                namespace: "team-a".into(),
                name: "kc".into(),
                key: Some("value".into())
            })
        );
        assert_eq!(
            locate(&p, &opts(), None, &idx).describe(),
            "access-provider:kubeconfig-secretreader:team-a/kc#value"
        );
    }

    #[test]
    fn secret_reader_cannot_name_another_namespace() {
        let mut p = profile("tenant", "c1", &[]);
        // Attack: steal team-b's Secret by naming it from a profile in `tenant`.
        add_provider(
            &mut p,
            "kubeconfig-secretreader",
            serde_json::json!({"name": "prod-admin", "namespace": "team-b", "key": "value"}),
        );
        let idx = SecretIndex::default();
        let lookup = locate(&p, &opts(), None, &idx);
        assert_eq!(
            lookup,
            Lookup::Unusable(CredentialProblem::ForeignSecretReaderNamespace {
                namespace: "team-b".into()
            })
        );
        assert!(
            lookup.describe().contains("team-b"),
            "{}",
            lookup.describe()
        );
        // The same through the `config` member.
        let mut q = profile("tenant", "c2", &[]);
        add_provider(
            &mut q,
            "kubeconfig-secretreader",
            serde_json::json!({"config": {"name": "prod-admin", "namespace": "team-b"}}),
        );
        assert!(matches!(
            locate(&q, &opts(), None, &idx),
            Lookup::Unusable(CredentialProblem::ForeignSecretReaderNamespace { .. })
        ));
        // Allowed by the operator.
        let o = CredentialOptions {
            secret_reader_namespaces: ["team-b".to_string()].into(),
            ..opts()
        };
        assert!(matches!(
            locate(&p, &o, None, &idx),
            Lookup::Found(CredentialSource::SecretReader { namespace, .. }) if namespace == "team-b"
        ));
    }

    #[test]
    fn exec_provider_needs_the_providers_file() {
        let mut p = profile("team-a", "c1", &[]);
        add_provider(&mut p, "token-plugin", serde_json::json!({}));
        let idx = SecretIndex::default();
        let Lookup::Unusable(CredentialProblem::NotFound { looked_at: reason }) =
            locate(&p, &opts(), None, &idx)
        else {
            panic!()
        };
        assert!(reason.contains("exec_providers_file"), "{reason}");
        let file = ProvidersFile::parse(br#"{"providers":[{"name":"token-plugin","execConfig":{"apiVersion":"client.authentication.k8s.io/v1","command":"/bin/true"}}]}"#).unwrap();
        assert_eq!(
            locate(&p, &opts(), Some(&file), &idx),
            Lookup::Found(CredentialSource::Exec {
                provider: "token-plugin".into()
            })
        );
    }
}
