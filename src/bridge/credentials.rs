//! Where a ClusterProfile's kubeconfig comes from: access providers (`kubeconfig-secretreader`, exec plugins named
//! in the providers file) and labelled Secrets, in that order of preference.

use std::{collections::BTreeMap, fmt};

use k8s_openapi::api::core::v1::Secret;

use super::{CredentialOptions, exec::ProvidersFile};
use crate::api::{AccessProvider, ClusterProfile, keys};

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
    /// Found a usable source.
    Found(CredentialSource),
    /// No usable source; the reason says what was looked at.
    Missing(String),
    /// More than one candidate Secret: an error naming all of them.
    Ambiguous(Vec<String>),
}

impl Lookup {
    /// Human-readable description for `credential_source` attributes.
    pub fn describe(&self) -> String {
        match self {
            Self::Found(s) => s.to_string(),
            Self::Missing(reason) => format!("none: {reason}"),
            Self::Ambiguous(names) => format!("ambiguous: {}", names.join(", ")),
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
    /// Indexes the Secrets carrying `options.secret_label`. With a `consumer`, only Secrets in namespaces
    /// labelled `x-k8s.io/cluster-inventory-consumer=<consumer>` count (`namespace_labels` gives those labels).
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
            if let Some(consumer) = &options.consumer {
                let ok = namespace_labels
                    .get(&ns)
                    .and_then(|l| l.get(keys::CONSUMER_NAMESPACE_LABEL))
                    .is_some_and(|c| c == consumer);
                if !ok {
                    index.rejected.entry(key).or_default().push(format!(
                        "{ns}/{} (namespace {ns} is not labelled {}={consumer})",
                        meta.name.as_deref().unwrap_or_default(),
                        keys::CONSUMER_NAMESPACE_LABEL
                    ));
                    continue;
                }
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

/// Picks the kubeconfig out of a Secret: the first of `keys` present with a non-empty value.
pub fn kubeconfig_in_secret<'s>(
    secret: &'s Secret,
    keys: &[String],
) -> Result<(String, &'s [u8]), String> {
    let data = secret.data.as_ref();
    for key in keys {
        if let Some(bytes) = data.and_then(|d| d.get(key))
            && !bytes.0.is_empty()
        {
            return Ok((key.clone(), &bytes.0));
        }
    }
    let present: Vec<&str> = data
        .map(|d| d.keys().map(String::as_str).collect())
        .unwrap_or_default();
    Err(format!(
        "Secret {}/{} has none of the keys {:?} (it has {:?}); set credentials.kubeconfig_keys",
        secret.metadata.namespace.as_deref().unwrap_or_default(),
        secret.metadata.name.as_deref().unwrap_or_default(),
        keys,
        present
    ))
}

/// Checks that bytes are an inert kubeconfig under the default policy ([`super::kubeconfig::inspect`]). The error never
/// quotes the content.
pub fn check_kubeconfig(bytes: &[u8]) -> Result<(), String> {
    super::kubeconfig::inspect(bytes, &super::kubeconfig::KubeconfigPolicy::default())
        .map(|_| ())
        .map_err(|e| e.to_string())
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

fn secret_reader_target(
    profile_ns: &str,
    provider: &AccessProvider,
) -> Result<CredentialSource, String> {
    let ext = exec_extension(provider).ok_or_else(|| {
        format!(
            "access provider {} has no {} extension naming the Secret",
            keys::SECRET_READER_PROVIDER,
            keys::EXEC_EXTENSION
        )
    })?;
    // The reference is either the extension object itself or its `config` member.
    let target = ext.get("config").filter(|c| c.is_object()).unwrap_or(ext);
    let name = target
        .get("name")
        .and_then(|v| v.as_str())
        .filter(|s| !s.is_empty());
    let Some(name) = name else {
        return Err(format!(
            "access provider {} names no Secret (extension {} needs {{\"name\": ..., \"key\": ...}})",
            keys::SECRET_READER_PROVIDER,
            keys::EXEC_EXTENSION
        ));
    };
    let namespace = target
        .get("namespace")
        .and_then(|v| v.as_str())
        .filter(|s| !s.is_empty())
        .unwrap_or(profile_ns);
    let key = target
        .get("key")
        .and_then(|v| v.as_str())
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    Ok(CredentialSource::SecretReader {
        namespace: namespace.to_string(),
        name: name.to_string(),
        key,
    })
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
            match secret_reader_target(ns, provider) {
                Ok(source) => return Lookup::Found(source),
                Err(reason) => looked_at.push(reason),
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
    let candidates = secrets.candidates(&key);
    match candidates {
        [] => {}
        [one] => {
            return match kubeconfig_in_secret(one, &options.kubeconfig_keys) {
                Ok((k, _)) => Lookup::Found(CredentialSource::LabelledSecret {
                    namespace: one.metadata.namespace.clone().unwrap_or_default(),
                    name: one.metadata.name.clone().unwrap_or_default(),
                    key: k,
                }),
                Err(reason) => Lookup::Missing(reason),
            };
        }
        many => {
            let mut names: Vec<String> = many
                .iter()
                .map(|s| {
                    format!(
                        "{}/{}",
                        s.metadata.namespace.as_deref().unwrap_or_default(),
                        s.metadata.name.as_deref().unwrap_or_default()
                    )
                })
                .collect();
            names.sort();
            return Lookup::Ambiguous(names);
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
    Lookup::Missing(looked_at.join("; "))
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
    fn secret_in_another_namespace_via_namespace_label() {
        let p = profile("team-a", "c1", &[]);
        let secrets = [labelled_secret(
            "creds",
            "x",
            "c1",
            Some("team-a"),
            &[("config", KUBECONFIG)],
        )];
        let idx = SecretIndex::new(&secrets, &opts(), &BTreeMap::new());
        assert!(
            matches!(locate(&p, &opts(), None, &idx), Lookup::Found(CredentialSource::LabelledSecret { namespace, .. }) if namespace == "creds")
        );
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
            Lookup::Missing(_)
        ));
    }

    #[test]
    fn consumer_filter_ignores_other_namespaces() {
        let p = profile("team-a", "c1", &[]);
        let o = CredentialOptions {
            consumer: Some("sveltos".into()),
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
        // Without a consumer both match: ambiguous, naming both.
        let idx = SecretIndex::new(&secrets, &opts(), &ns_labels);
        assert_eq!(
            locate(&p, &opts(), None, &idx),
            Lookup::Ambiguous(vec!["consumer-ns/y".into(), "other/x".into()])
        );
    }

    #[test]
    fn key_preference_and_missing_key() {
        let s = labelled_secret("a", "s", "c", None, &[("value", "v"), ("kubeconfig", "k")]);
        let (k, v) = kubeconfig_in_secret(&s, &opts().kubeconfig_keys).unwrap();
        assert_eq!((k.as_str(), v), ("kubeconfig", b"k".as_slice()));
        let s = labelled_secret("a", "s", "c", None, &[("other", "x")]);
        let e = kubeconfig_in_secret(&s, &opts().kubeconfig_keys).unwrap_err();
        assert!(
            e.contains("a/s") && e.contains("other") && !e.contains('x'),
            "{e}"
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
    fn exec_provider_needs_the_providers_file() {
        let mut p = profile("team-a", "c1", &[]);
        add_provider(&mut p, "token-plugin", serde_json::json!({}));
        let idx = SecretIndex::default();
        let Lookup::Missing(reason) = locate(&p, &opts(), None, &idx) else {
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

    #[test]
    fn kubeconfig_check_never_quotes_content() {
        assert!(check_kubeconfig(KUBECONFIG.as_bytes()).is_ok());
        let e = check_kubeconfig(b"token: canary-123").unwrap_err();
        assert!(!e.contains("canary"));
        let e = check_kubeconfig(b"{{{ canary-123").unwrap_err();
        assert!(!e.contains("canary"));
    }
}
