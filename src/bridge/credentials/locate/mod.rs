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
//! `credentials.secret_namespaces`.

use std::{collections::BTreeMap, fmt};

use k8s_openapi::api::core::v1::Secret;

use super::{CredentialOptions, CredentialProblem, object_id};
use crate::{
    api::{AccessProvider, ClusterProfile, keys},
    bridge::{
        exec::{ProviderEntry, ProvidersFile, shown},
        names::{dns1123_label, dns1123_subdomain, secret_data_key},
    },
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
        /// Context of the stored kubeconfig to use (upstream's optional `context` member); `None`: its
        /// current-context.
        context: Option<String>,
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
                key,
                context,
            } => {
                write!(
                    f,
                    "access-provider:{}:{namespace}/{name}",
                    keys::SECRET_READER_PROVIDER
                )?;
                if let Some(key) = key {
                    write!(f, "#{key}")?;
                }
                if let Some(context) = context {
                    write!(f, "@{}", crate::bridge::text::shown(context, 253))?;
                }
                Ok(())
            }
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

    /// `(namespace, name)` of the Secrets whose bodies [`locate`] reads for these profile keys: the sole
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

/// A member of a `kubeconfig-secretreader` reference: absent (or `null`, or `""`), or a string; anything else is
/// an invalid reference.
fn reference_member<'v>(
    target: &'v serde_json::Value,
    member: &'static str,
) -> Result<Option<&'v str>, CredentialProblem> {
    match target.get(member) {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(s)) => Ok(Some(s.as_str()).filter(|s| !s.is_empty())),
        Some(other) => Err(CredentialProblem::BadSecretReaderReference {
            member,
            value: format!("\"{}\"", shown(&other.to_string())),
            reason: "not a string".into(),
        }),
    }
}

/// Checks one member of a `kubeconfig-secretreader` reference with `rule` (a `crate::bridge::names` rule).
fn checked<E: fmt::Display>(
    member: &'static str,
    value: Option<&str>,
    rule: impl Fn(&str) -> Result<(), E>,
) -> Result<(), CredentialProblem> {
    match value.map(|v| (v, rule(v))) {
        Some((v, Err(e))) => Err(CredentialProblem::BadSecretReaderReference {
            member,
            value: format!("\"{}\"", shown(v)),
            reason: e.to_string(),
        }),
        _ => Ok(()),
    }
}

/// A kubeconfig context name as a reference may carry it: 1 to 253 characters, no control characters.
fn context_name(s: &str) -> Result<(), &'static str> {
    if s.chars().count() > 253 {
        return Err("more than 253 characters");
    }
    if s.chars().any(char::is_control) {
        return Err("holds control characters");
    }
    Ok(())
}

/// The Secret a `kubeconfig-secretreader` provider names. `Ok(None)`: the provider names none (reported, and other
/// sources are tried); `Err`: it names a namespace that is not allowed, or a name, key, namespace or context
/// that is not valid (the profile is not bridged at all, and nothing is requested for it).
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
    let name = reference_member(target, "name")?;
    let key = reference_member(target, "key")?;
    let namespace = reference_member(target, "namespace")?;
    let context = reference_member(target, "context")?;
    // Checked before anything else: these values become parts of a request path.
    checked("name", name, dns1123_subdomain)?;
    checked("key", key, secret_data_key)?;
    checked("namespace", namespace, dns1123_label)?;
    checked("context", context, context_name)?;
    let Some(name) = name else {
        return Ok(Err(format!(
            "access provider {} names no Secret (extension {} needs {{\"name\": ..., \"key\": ...}})",
            keys::SECRET_READER_PROVIDER,
            keys::EXEC_EXTENSION
        )));
    };
    let namespace = namespace.unwrap_or(profile_ns);
    if namespace != profile_ns && !options.secret_reader_namespaces.contains(namespace) {
        return Err(CredentialProblem::ForeignSecretReaderNamespace {
            namespace: truncate(namespace),
        });
    }
    Ok(Ok(CredentialSource::SecretReader {
        namespace: namespace.to_string(),
        name: name.to_string(),
        key: key.map(str::to_string),
        context: context.map(str::to_string),
    }))
}

/// Caps a name taken from a profile before it goes into a message (the API server caps real names anyway).
fn truncate(s: &str) -> String {
    s.chars().take(253).collect()
}

/// Why an exec provider of the providers file is passed over for a profile.
enum Passed {
    /// Try the next source; the text says why this one was not used.
    Over(String),
    /// The profile may use the provider, but not with this cluster entry: the profile is not bridged.
    Refused(CredentialProblem),
}

/// Whether a profile in `namespace` may use exec provider `entry` with its access provider `provider`: the
/// operator's scope (`credentials.exec_providers`) must allow the namespace and, when it lists servers, the
/// server (https, verified TLS).
fn exec_usable(
    namespace: &str,
    provider: &AccessProvider,
    entry: &ProviderEntry,
    options: &CredentialOptions,
) -> Result<(), Passed> {
    let name = &provider.name;
    if !options.use_access_providers {
        return Err(Passed::Over(format!(
            "access provider {name} ignored (credentials.use_access_providers = false)"
        )));
    }
    let Some(scope) = entry.scope.as_ref() else {
        return Err(Passed::Over(format!(
            "exec provider {name} is in the providers file but not in credentials.exec_providers, so no \
             ClusterProfile may use it; set credentials.exec_providers[\"{name}\"] to allow it"
        )));
    };
    if !scope.allows_namespace(namespace) {
        return Err(Passed::Over(format!(
            "exec provider {name} is not allowed for namespace {namespace} \
             (credentials.exec_providers[\"{name}\"].namespaces)"
        )));
    }
    let Some(cluster) = provider.cluster.as_ref() else {
        return Err(Passed::Over(format!(
            "access provider {name} has no cluster entry"
        )));
    };
    if !scope.servers.is_empty() {
        let attribute = format!("credentials.exec_providers[\"{name}\"].servers");
        let refused = |reason: String| {
            Passed::Refused(CredentialProblem::Exec {
                provider: name.clone(),
                reason,
            })
        };
        if cluster.insecure_skip_tls_verify == Some(true) || !cluster.server.starts_with("https://")
        {
            return Err(refused(format!(
                "with {attribute}, the access provider's server must be https:// without insecure-skip-tls-verify"
            )));
        }
        scope
            .servers
            .check_for(&cluster.server, &attribute)
            .map_err(|e| refused(e.to_string()))?;
    }
    Ok(())
}

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
    let ns = profile.metadata.namespace.as_deref().unwrap_or_default();
    let mut looked_at = Vec::new();
    let offered = access_providers(profile);
    let listed: Vec<&ProviderEntry> = providers
        .map(|f| f.providers.iter().collect())
        .unwrap_or_default();
    let file_has = |name: &str| listed.iter().any(|e| e.name == name);
    let mut order: Vec<(&str, Option<&ProviderEntry>)> =
        listed.iter().map(|e| (e.name.as_str(), Some(*e))).collect();
    if !file_has(keys::SECRET_READER_PROVIDER) {
        order.push((keys::SECRET_READER_PROVIDER, None));
    }
    for (name, entry) in order {
        let Some(provider) = offered.iter().find(|p| p.name == name) else {
            continue;
        };
        if name == keys::SECRET_READER_PROVIDER {
            match secret_reader_target(ns, provider, options) {
                Ok(Ok(source)) => return Lookup::Found(source),
                Ok(Err(reason)) => looked_at.push(reason),
                Err(refused) => return Lookup::Unusable(refused),
            }
            continue;
        }
        let Some(entry) = entry else { continue };
        match exec_usable(ns, provider, entry, options) {
            Ok(()) => {
                return Lookup::Found(CredentialSource::Exec {
                    provider: provider.name.clone(),
                });
            }
            Err(Passed::Over(reason)) => looked_at.push(reason),
            Err(Passed::Refused(problem)) => return Lookup::Unusable(problem),
        }
    }
    for provider in offered {
        if provider.name == keys::SECRET_READER_PROVIDER || file_has(&provider.name) {
            continue;
        }
        // A name only the profile gives: escaped and bounded before it reaches a warning or state.
        let name = crate::bridge::text::shown(&provider.name, 64);
        looked_at.push(if !options.use_access_providers {
            format!("access provider {name} ignored (credentials.use_access_providers = false)")
        } else if providers.is_some() {
            format!("access provider {name} is not in credentials.exec_providers_file")
        } else {
            format!("access provider {name} needs credentials.exec_providers_file")
        });
    }
    match secrets.candidates(&key) {
        [] => {}
        [one] => {
            return match super::resolve::kubeconfig_in_secret(one, &options.kubeconfig_keys) {
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
    use crate::bridge::{
        exec::{ExecScope, NamespaceScope, ServerAllowList},
        testutil::*,
    };

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
    fn access_provider_names_from_a_profile_are_escaped_and_bounded() {
        let mut p = profile("team-a", "c1", &[]);
        let hostile = format!("x\u{1b}[31m{}", "y".repeat(10_000));
        add_provider(&mut p, &hostile, serde_json::json!({}));
        let Lookup::Unusable(problem) = locate(&p, &opts(), None, &SecretIndex::default()) else {
            panic!("no source expected")
        };
        let text = problem.to_string();
        assert!(!text.contains('\u{1b}'), "{text}");
        assert!(text.len() < 2_000, "{}", text.len());
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
                key: Some("value".into()),
                context: None,
            })
        );
        assert_eq!(
            locate(&p, &opts(), None, &idx).describe(),
            "access-provider:kubeconfig-secretreader:team-a/kc#value"
        );
        // Upstream's optional `context` member is carried, and shown.
        let mut p = profile("team-a", "c2", &[]);
        add_provider(
            &mut p,
            "kubeconfig-secretreader",
            serde_json::json!({"name": "kc", "key": "value", "context": "admin@prod"}),
        );
        assert_eq!(
            locate(&p, &opts(), None, &idx).describe(),
            "access-provider:kubeconfig-secretreader:team-a/kc#value@admin@prod"
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

    /// A providers file listing `names` in this order (each runs `/bin/true`).
    fn providers_file(names: &[&str]) -> ProvidersFile {
        let entries: Vec<String> = names
            .iter()
            .map(|n| {
                format!(
                    r#"{{"name":"{n}","execConfig":{{"apiVersion":"client.authentication.k8s.io/v1","command":"/bin/true","args":null,"env":null}}}}"#
                )
            })
            .collect();
        ProvidersFile::parse(format!(r#"{{"providers":[{}]}}"#, entries.join(",")).as_bytes())
            .unwrap()
    }

    /// Scopes allowing each of `names` in `namespaces`.
    fn scopes(names: &[&str], namespaces: &[&str]) -> BTreeMap<String, ExecScope> {
        names
            .iter()
            .map(|n| {
                let ns = if namespaces == ["*"] {
                    NamespaceScope::Any
                } else {
                    NamespaceScope::Only(namespaces.iter().map(|s| s.to_string()).collect())
                };
                (
                    n.to_string(),
                    ExecScope {
                        namespaces: ns,
                        servers: ServerAllowList::default(),
                        profile_env: Default::default(),
                    },
                )
            })
            .collect()
    }

    fn exec(provider: &str) -> Lookup {
        Lookup::Found(CredentialSource::Exec {
            provider: provider.into(),
        })
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
        let file = providers_file(&["token-plugin"]).scoped(&scopes(&["token-plugin"], &["*"]));
        assert_eq!(locate(&p, &opts(), Some(&file), &idx), exec("token-plugin"));
    }

    /// A profile offering the built-in `kubeconfig-secretreader` first and exec provider `secretreader` second.
    fn offering_both() -> ClusterProfile {
        let mut p = profile("team-a", "c1", &[]);
        add_provider(
            &mut p,
            keys::SECRET_READER_PROVIDER,
            serde_json::json!({"name": "kc", "key": "value"}),
        );
        add_provider(
            &mut p,
            "secretreader",
            serde_json::json!({"clusterName": "c1"}),
        );
        p
    }

    #[test]
    fn the_providers_file_order_decides_which_provider_is_used() {
        let p = offering_both();
        let idx = SecretIndex::default();
        let all = scopes(&["secretreader", keys::SECRET_READER_PROVIDER], &["*"]);
        // The file lists secretreader first: it is used, though the profile lists it second.
        let file = providers_file(&["secretreader", keys::SECRET_READER_PROVIDER]).scoped(&all);
        let found = locate(&p, &opts(), Some(&file), &idx);
        assert_eq!(found, exec("secretreader"));
        assert_eq!(found.describe(), "exec:secretreader");
        // The file lists kubeconfig-secretreader first: the built-in reads the named Secret.
        let file = providers_file(&[keys::SECRET_READER_PROVIDER, "secretreader"]).scoped(&all);
        let found = locate(&p, &opts(), Some(&file), &idx);
        assert_eq!(
            found.describe(),
            "access-provider:kubeconfig-secretreader:team-a/kc#value"
        );
        // Not in the file: the built-in comes after every provider of the file ...
        let file = providers_file(&["secretreader"]).scoped(&all);
        assert_eq!(locate(&p, &opts(), Some(&file), &idx), exec("secretreader"));
        // ... and without a providers file it is the only access provider used.
        assert!(matches!(
            locate(&p, &opts(), None, &idx),
            Lookup::Found(CredentialSource::SecretReader { .. })
        ));
        // A provider the file lists but the profile does not offer is skipped.
        let file = providers_file(&["other", "secretreader"])
            .scoped(&scopes(&["other", "secretreader"], &["*"]));
        assert_eq!(locate(&p, &opts(), Some(&file), &idx), exec("secretreader"));
    }

    #[test]
    fn deprecated_credential_providers_count_when_access_providers_lack_the_name() {
        let mut p = profile("team-a", "c1", &[]);
        add_provider(&mut p, "b", serde_json::json!({}));
        let status = p.status.as_mut().unwrap();
        let mut old = status.access_providers[0].clone();
        old.name = "a".into();
        status.credential_providers.push(old);
        let file = providers_file(&["a", "b"]).scoped(&scopes(&["a", "b"], &["*"]));
        assert_eq!(
            locate(&p, &opts(), Some(&file), &SecretIndex::default()),
            exec("a")
        );
    }

    #[test]
    fn an_exec_provider_is_used_only_where_the_operator_allows_it() {
        let mut p = profile("tenant", "c1", &[]);
        add_provider(&mut p, "aws", serde_json::json!({}));
        let idx = SecretIndex::default();
        // In the providers file but not in exec_providers: never used (default-deny), the reason names the attribute.
        let file = providers_file(&["aws"]);
        let Lookup::Unusable(CredentialProblem::NotFound { looked_at }) =
            locate(&p, &opts(), Some(&file), &idx)
        else {
            panic!("an unscoped exec provider was used")
        };
        assert!(
            looked_at.contains(r#"credentials.exec_providers["aws"]"#),
            "{looked_at}"
        );
        // Scoped to another namespace: passed over, naming the namespaces attribute.
        let file = providers_file(&["aws"]).scoped(&scopes(&["aws"], &["team-a"]));
        let Lookup::Unusable(CredentialProblem::NotFound { looked_at }) =
            locate(&p, &opts(), Some(&file), &idx)
        else {
            panic!("an exec provider ran for a namespace it is not allowed in")
        };
        assert!(
            looked_at.contains(r#"credentials.exec_providers["aws"].namespaces"#)
                && looked_at.contains("tenant"),
            "{looked_at}"
        );
        // Passed over means the next source is tried: here a labelled Secret next to the profile.
        let secrets = [labelled_secret(
            "tenant",
            "kc",
            "c1",
            None,
            &[("Config", KUBECONFIG)],
        )];
        let with_secret = SecretIndex::new(&secrets, &opts(), &BTreeMap::new());
        assert!(matches!(
            locate(&p, &opts(), Some(&file), &with_secret),
            Lookup::Found(CredentialSource::LabelledSecret { .. })
        ));
        // Allowed for the namespace: used.
        let file = providers_file(&["aws"]).scoped(&scopes(&["aws"], &["tenant"]));
        assert_eq!(locate(&p, &opts(), Some(&file), &idx), exec("aws"));
    }

    #[test]
    fn an_exec_providers_servers_bind_the_profiles_server() {
        let mut p = profile("team-a", "c1", &[]);
        add_provider(&mut p, "aws", serde_json::json!({}));
        let idx = SecretIndex::default();
        let mut s = scopes(&["aws"], &["*"]);
        s.get_mut("aws").unwrap().servers =
            ServerAllowList::parse(&["*.eks.amazonaws.com"]).unwrap();
        let file = providers_file(&["aws"]).scoped(&s);
        let set_server = |p: &mut ClusterProfile, server: &str, insecure: Option<bool>| {
            let c = p.status.as_mut().unwrap().access_providers[0]
                .cluster
                .as_mut()
                .unwrap();
            c.server = server.into();
            c.insecure_skip_tls_verify = insecure;
        };
        // Attack: send the token minted with the operator's identity to a server of the profile writer's choice.
        for (server, insecure) in [
            ("https://sink.attacker.example", None),
            ("http://x.eks.amazonaws.com", None),
            ("https://x.eks.amazonaws.com", Some(true)),
        ] {
            set_server(&mut p, server, insecure);
            let found = locate(&p, &opts(), Some(&file), &idx);
            let Lookup::Unusable(CredentialProblem::Exec { provider, reason }) = &found else {
                panic!("{server}: {found:?}")
            };
            assert_eq!(provider, "aws");
            assert!(
                reason.contains(r#"credentials.exec_providers["aws"].servers"#),
                "{reason}"
            );
        }
        set_server(&mut p, "https://abc.gr7.eu-west-1.eks.amazonaws.com", None);
        assert_eq!(locate(&p, &opts(), Some(&file), &idx), exec("aws"));
    }

    #[test]
    fn a_bad_secret_reader_reference_refuses_the_profile_and_requests_nothing() {
        let long = "a".repeat(10_000);
        for (ext, member) in [
            (
                serde_json::json!({"name": "x?watch=true", "key": "k"}),
                "name",
            ),
            (
                serde_json::json!({"name": "../../kube-system/secrets/x"}),
                "name",
            ),
            (serde_json::json!({"name": "x#frag"}), "name"),
            (serde_json::json!({"name": "a b"}), "name"),
            (serde_json::json!({"name": "Upper"}), "name"),
            (serde_json::json!({"name": long.clone()}), "name"),
            (serde_json::json!({"name": 7}), "name"),
            (serde_json::json!({"name": "kc", "key": "a/b"}), "key"),
            (serde_json::json!({"name": "kc", "key": "../x"}), "key"),
            (
                serde_json::json!({"name": "kc", "namespace": "x/y"}),
                "namespace",
            ),
            (
                serde_json::json!({"config": {"name": "kc", "context": "a\nb"}}),
                "context",
            ),
            (
                serde_json::json!({"name": "kc", "context": long.clone()}),
                "context",
            ),
            (
                serde_json::json!({"name": "kc", "context": ["x"]}),
                "context",
            ),
        ] {
            let mut p = profile("team-a", "c1", &[]);
            add_provider(&mut p, keys::SECRET_READER_PROVIDER, ext.clone());
            let found = locate(&p, &opts(), None, &SecretIndex::default());
            let Lookup::Unusable(CredentialProblem::BadSecretReaderReference { member: m, .. }) =
                &found
            else {
                panic!("{ext}: {found:?}")
            };
            assert_eq!(*m, member, "{ext}");
            let shown = found.describe();
            assert!(shown.len() < 400 && !shown.contains('\n'), "{shown}");
            assert!(
                crate::bridge::credentials::resolve::secrets_to_read([&found]).is_empty(),
                "{ext}: a request was planned"
            );
        }
        // Valid references, a context included, still resolve.
        let mut p = profile("team-a", "c1", &[]);
        add_provider(
            &mut p,
            keys::SECRET_READER_PROVIDER,
            serde_json::json!({"name": "kc.prod", "key": "my_key-1.yaml", "context": "admin@prod", "namespace": null}),
        );
        assert!(matches!(
            locate(&p, &opts(), None, &SecretIndex::default()),
            Lookup::Found(CredentialSource::SecretReader { .. })
        ));
    }
}
