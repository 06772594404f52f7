//! The `credentials` options: as the user wrote them ([`CredentialsConfig`], also kept in the bridge's
//! configuration record) and validated ([`CredentialOptions`]). One validator for every resource, data source and
//! ephemeral resource, so that they accept and reject exactly the same values.

use std::{
    collections::{BTreeMap, BTreeSet},
    time::Duration,
};

use serde::{Deserialize, Serialize};

use crate::{
    api::keys,
    bridge::{
        duration::parse_duration,
        exec::{ExecScope, NamespaceScope, ServerAllowList, forbidden_profile_env},
        names::{dns1123_label, secret_data_key},
        problem::{Problem, Step},
        selector::{label_key, label_value},
    },
};

/// The `credentials` block as written (every attribute optional).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CredentialsConfig {
    /// `secret_label`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_label: Option<String>,
    /// `consumer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consumer: Option<String>,
    /// `kubeconfig_keys`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubeconfig_keys: Option<Vec<String>>,
    /// `use_access_providers`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub use_access_providers: Option<bool>,
    /// `exec_providers_file`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec_providers_file: Option<String>,
    /// `refresh_before`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_before: Option<String>,
    /// `secret_namespaces`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_namespaces: Option<Vec<String>>,
    /// `secret_reader_namespaces`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_reader_namespaces: Option<Vec<String>>,
    /// `allow_exec_kubeconfigs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_exec_kubeconfigs: Option<bool>,
    /// `exec_allowed_servers`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec_allowed_servers: Option<Vec<String>>,
    /// `exec_providers`, by provider name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec_providers: Option<BTreeMap<String, ExecProviderConfig>>,
}

/// One entry of `credentials.exec_providers` as written: which ClusterProfiles may use a provider of the providers
/// file, and what they may add.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecProviderConfig {
    /// `namespaces` (required): namespace names, or `["*"]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespaces: Option<Vec<String>>,
    /// `servers`: host patterns, as `exec_allowed_servers`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub servers: Option<Vec<String>>,
    /// `profile_env`: variable names a profile may add.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile_env: Option<Vec<String>>,
}

/// Validated credential options.
#[derive(Debug, Clone, PartialEq)]
pub struct CredentialOptions {
    /// Label naming the profile on kubeconfig Secrets.
    pub secret_label: String,
    /// The consumer whose namespaces (labelled `x-k8s.io/cluster-inventory-consumer=<consumer>`) may supply
    /// credentials to profiles in any namespace ([`DEFAULT_CONSUMER`] unless configured; `None`: `consumer = ""`).
    pub consumer: Option<String>,
    /// `consumer` was set explicitly: only Secrets in the consumer's namespaces (or `secret_namespaces`) count,
    /// a Secret next to its profile included. With the default consumer, a Secret next to its profile counts too.
    pub consumer_only: bool,
    /// Keys tried, in order, for the kubeconfig inside a Secret.
    pub kubeconfig_keys: Vec<String>,
    /// Use exec-plugin access providers (the `kubeconfig-secretreader` provider is always used).
    pub use_access_providers: bool,
    /// Path of the providers file (read by `crate::k8s`).
    pub exec_providers_file: Option<String>,
    /// Refresh exec credentials this long before they expire.
    pub refresh_before: Duration,
    /// Namespaces whose labelled Secrets may supply credentials to profiles in other namespaces.
    pub secret_namespaces: BTreeSet<String>,
    /// Namespaces, besides the profile's own, that a `kubeconfig-secretreader` provider may name.
    pub secret_reader_namespaces: BTreeSet<String>,
    /// Accept kubeconfigs whose users run an `exec` plugin (Sveltos images that ship the plugin).
    pub allow_exec_kubeconfigs: bool,
    /// When non-empty, exec plugins only run for profiles whose server host matches one of these patterns.
    pub exec_allowed_servers: ServerAllowList,
    /// Which profiles may use each provider of the providers file (a provider not here is used by none).
    pub exec_providers: BTreeMap<String, ExecScope>,
}

impl Default for CredentialOptions {
    fn default() -> Self {
        Self {
            secret_label: keys::CLUSTER_PROFILE_LABEL.to_string(),
            consumer: Some(DEFAULT_CONSUMER.to_string()),
            consumer_only: false,
            kubeconfig_keys: default_kubeconfig_keys(),
            use_access_providers: true,
            exec_providers_file: None,
            refresh_before: DEFAULT_REFRESH_BEFORE,
            secret_namespaces: BTreeSet::new(),
            secret_reader_namespaces: BTreeSet::new(),
            allow_exec_kubeconfigs: false,
            exec_allowed_servers: ServerAllowList::default(),
            exec_providers: BTreeMap::new(),
        }
    }
}

/// The consumer name used when `credentials.consumer` is not set: the KEP push model's Secrets for Sveltos live in
/// namespaces labelled `x-k8s.io/cluster-inventory-consumer=sveltos`. Labelling a namespace is a cluster-scoped
/// write (`patch namespaces`), which the tenants of the security guide do not have.
pub const DEFAULT_CONSUMER: &str = "sveltos";

/// Default `refresh_before`.
pub const DEFAULT_REFRESH_BEFORE: Duration = Duration::from_secs(600);

/// The default `kubeconfig_keys`.
pub fn default_kubeconfig_keys() -> Vec<String> {
    ["Config", "config", "kubeconfig", "value"]
        .map(String::from)
        .to_vec()
}

fn path(attr: &'static str) -> Vec<Step> {
    vec![Step::Attr("credentials"), Step::Attr(attr)]
}

fn indexed(attr: &'static str, i: usize) -> Vec<Step> {
    vec![Step::Attr("credentials"), Step::Attr(attr), Step::Index(i)]
}

/// Checks a host pattern of `exec_allowed_servers` (the rule is `crate::bridge::exec::ServerAllowList`'s).
pub fn server_pattern(p: &str) -> Result<(), crate::bridge::exec::ExecError> {
    if p.len() > 260 {
        return Err(crate::bridge::exec::ExecError::BadServerPattern {
            pattern: p.chars().take(64).collect(),
        });
    }
    ServerAllowList::parse(&[p]).map(|_| ())
}

fn namespace_list(
    problems: &mut Vec<Problem>,
    attr: &'static str,
    list: &Option<Vec<String>>,
) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, ns) in list.iter().flatten().enumerate() {
        match dns1123_label(ns) {
            Ok(()) => {
                out.insert(ns.clone());
            }
            Err(e) => problems.push(Problem::error(
                indexed(attr, i),
                format!("Invalid namespace in credentials.{attr}"),
                format!("Element {i}: {e}."),
            )),
        }
    }
    out
}

impl CredentialsConfig {
    /// Validates the block into [`CredentialOptions`]. Every problem is an error whose path starts at
    /// `credentials`; no file is read here (the providers file is read by `crate::k8s`).
    pub fn validate(&self) -> Result<CredentialOptions, Vec<Problem>> {
        let mut problems = Vec::new();
        let mut opts = CredentialOptions::default();
        if let Some(label) = self.checked_secret_label(&mut problems) {
            opts.secret_label = label;
        }
        if let Some(consumer) = self.checked_consumer(&mut problems) {
            opts.consumer_only = consumer.is_some();
            opts.consumer = consumer;
        }
        if let Some(keys) = self.checked_kubeconfig_keys(&mut problems) {
            opts.kubeconfig_keys = keys;
        }
        if let Some(b) = self.use_access_providers {
            opts.use_access_providers = b;
        }
        opts.exec_providers_file = self.checked_exec_providers_file(&mut problems);
        if let Some(d) = self.checked_refresh_before(&mut problems) {
            opts.refresh_before = d;
        }
        opts.secret_namespaces =
            namespace_list(&mut problems, "secret_namespaces", &self.secret_namespaces);
        opts.secret_reader_namespaces = namespace_list(
            &mut problems,
            "secret_reader_namespaces",
            &self.secret_reader_namespaces,
        );
        opts.allow_exec_kubeconfigs = self.allow_exec_kubeconfigs.unwrap_or(false);
        opts.exec_allowed_servers = self.checked_exec_allowed_servers(&mut problems);
        opts.exec_providers = self.checked_exec_providers(&mut problems);
        if problems.is_empty() {
            Ok(opts)
        } else {
            Err(problems)
        }
    }

    /// `secret_label` when set and a label key.
    fn checked_secret_label(&self, problems: &mut Vec<Problem>) -> Option<String> {
        let label = self.secret_label.as_ref()?;
        match label_key(label) {
            Ok(_) => Some(label.clone()),
            Err(e) => {
                problems.push(Problem::error(
                    path("secret_label"),
                    "Invalid credentials.secret_label",
                    format!("{e} (it is a label key, e.g. `x-k8s.io/cluster-profile`)."),
                ));
                None
            }
        }
    }

    /// `consumer` when set and a label value: `Some(None)` for `""` (no consumer namespaces at all).
    fn checked_consumer(&self, problems: &mut Vec<Problem>) -> Option<Option<String>> {
        let consumer = self.consumer.as_ref()?;
        match label_value(consumer) {
            Ok(_) if consumer.is_empty() => Some(None),
            Ok(_) => Some(Some(consumer.clone())),
            Err(e) => {
                problems.push(Problem::error(
                    path("consumer"),
                    "Invalid credentials.consumer",
                    format!("{e} (it is compared with a label value)."),
                ));
                None
            }
        }
    }

    /// `kubeconfig_keys` when set (kept even when an element is refused).
    fn checked_kubeconfig_keys(&self, problems: &mut Vec<Problem>) -> Option<Vec<String>> {
        let keys = self.kubeconfig_keys.as_ref()?;
        if keys.is_empty() {
            problems.push(Problem::error(
                path("kubeconfig_keys"),
                "Invalid credentials.kubeconfig_keys",
                format!(
                    "Give at least one Secret data key (default {:?}).",
                    default_kubeconfig_keys()
                ),
            ));
        }
        for (i, k) in keys.iter().enumerate() {
            if let Err(e) = secret_data_key(k) {
                problems.push(Problem::error(
                    indexed("kubeconfig_keys", i),
                    "Invalid credentials.kubeconfig_keys",
                    format!("Element {i}: {e}."),
                ));
            }
        }
        Some(keys.clone())
    }

    /// `exec_providers_file` when set (kept even when refused as blank).
    fn checked_exec_providers_file(&self, problems: &mut Vec<Problem>) -> Option<String> {
        let p = self.exec_providers_file.as_ref()?;
        if p.trim().is_empty() {
            problems.push(Problem::error(
                path("exec_providers_file"),
                "Invalid credentials.exec_providers_file",
                "Leave exec_providers_file unset instead of setting it to an empty string.",
            ));
        }
        Some(p.clone())
    }

    /// `refresh_before` when set and a duration.
    fn checked_refresh_before(&self, problems: &mut Vec<Problem>) -> Option<Duration> {
        let d = self.refresh_before.as_ref()?;
        match parse_duration(d) {
            Ok(d) => Some(d),
            Err(e) => {
                problems.push(Problem::error(
                    path("refresh_before"),
                    "Invalid duration",
                    e.to_string(),
                ));
                None
            }
        }
    }

    /// `exec_allowed_servers`, each pattern checked, parsed once.
    fn checked_exec_allowed_servers(&self, problems: &mut Vec<Problem>) -> ServerAllowList {
        for (i, p) in self.exec_allowed_servers.iter().flatten().enumerate() {
            if let Err(e) = server_pattern(p) {
                problems.push(Problem::error(
                    indexed("exec_allowed_servers", i),
                    "Invalid credentials.exec_allowed_servers",
                    format!("Element {i}: {e}."),
                ));
            }
        }
        // Every pattern was checked above.
        ServerAllowList::parse(self.exec_allowed_servers.as_deref().unwrap_or_default())
            .unwrap_or_default()
    }
}

impl CredentialsConfig {
    /// `exec_providers`, each entry checked (an entry with a problem is left out: the block is refused anyway).
    fn checked_exec_providers(&self, problems: &mut Vec<Problem>) -> BTreeMap<String, ExecScope> {
        let mut out = BTreeMap::new();
        for (provider, entry) in self.exec_providers.iter().flatten() {
            let before = problems.len();
            let at = |attr: &'static str, i: Option<usize>| {
                let mut p = vec![
                    Step::Attr("credentials"),
                    Step::Attr("exec_providers"),
                    Step::Key(provider.clone()),
                    Step::Attr(attr),
                ];
                p.extend(i.map(Step::Index));
                p
            };
            let summary = "Invalid credentials.exec_providers";
            if provider.is_empty() || provider.len() > 253 {
                problems.push(Problem::error(
                    vec![
                        Step::Attr("credentials"),
                        Step::Attr("exec_providers"),
                        Step::Key(provider.clone()),
                    ],
                    summary,
                    "The key is the name of a provider of the providers file (1 to 253 characters).",
                ));
            }
            let namespaces = match entry.namespaces.as_deref() {
                None | Some([]) => {
                    problems.push(Problem::error(
                        at("namespaces", None),
                        summary,
                        "List the namespaces whose ClusterProfiles may use this provider, or [\"*\"] for every \
                         namespace the configuration selects.",
                    ));
                    NamespaceScope::Only(BTreeSet::new())
                }
                Some([one]) if one == "*" => NamespaceScope::Any,
                Some(list) => {
                    let mut set = BTreeSet::new();
                    for (i, ns) in list.iter().enumerate() {
                        let why = if ns == "*" {
                            Some(
                                "\"*\" stands for every namespace; it must be the only element."
                                    .to_string(),
                            )
                        } else {
                            dns1123_label(ns)
                                .err()
                                .map(|e| format!("Element {i}: {e}."))
                        };
                        match why {
                            Some(why) => problems.push(Problem::error(
                                at("namespaces", Some(i)),
                                summary,
                                why,
                            )),
                            None => {
                                set.insert(ns.clone());
                            }
                        }
                    }
                    NamespaceScope::Only(set)
                }
            };
            for (i, p) in entry.servers.iter().flatten().enumerate() {
                if let Err(e) = server_pattern(p) {
                    problems.push(Problem::error(
                        at("servers", Some(i)),
                        summary,
                        format!("Element {i}: {e}."),
                    ));
                }
            }
            let mut profile_env = BTreeSet::new();
            for (i, name) in entry.profile_env.iter().flatten().enumerate() {
                match forbidden_profile_env(name) {
                    Some(rule) => problems.push(Problem::error(
                        at("profile_env", Some(i)),
                        summary,
                        format!(
                            "Element {i}: {:?} may never come from a ClusterProfile ({rule}).",
                            name.chars().take(64).collect::<String>()
                        ),
                    )),
                    None => {
                        profile_env.insert(name.clone());
                    }
                }
            }
            if problems.len() == before {
                out.insert(
                    provider.clone(),
                    ExecScope {
                        namespaces,
                        // Every pattern was checked above.
                        servers: ServerAllowList::parse(
                            entry.servers.as_deref().unwrap_or_default(),
                        )
                        .unwrap_or_default(),
                        profile_env,
                    },
                );
            }
        }
        out
    }
}

/// Validates an optional block (absent: the defaults).
pub fn validate(config: Option<&CredentialsConfig>) -> Result<CredentialOptions, Vec<Problem>> {
    config.cloned().unwrap_or_default().validate()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err_paths(c: CredentialsConfig) -> Vec<Vec<Step>> {
        c.validate()
            .unwrap_err()
            .into_iter()
            .map(|p| p.path)
            .collect()
    }

    #[test]
    fn defaults_and_mapping() {
        assert_eq!(validate(None).unwrap(), CredentialOptions::default());
        let o = CredentialsConfig {
            secret_label: Some("example.com/profile".into()),
            consumer: Some("sveltos".into()),
            kubeconfig_keys: Some(vec!["kc".into()]),
            use_access_providers: Some(false),
            refresh_before: Some("5m".into()),
            secret_namespaces: Some(vec!["creds".into()]),
            secret_reader_namespaces: Some(vec!["vault".into()]),
            allow_exec_kubeconfigs: Some(true),
            exec_allowed_servers: Some(vec!["*.eks.amazonaws.com".into(), "10.0.0.1:6443".into()]),
            ..Default::default()
        }
        .validate()
        .unwrap();
        assert_eq!(o.secret_label, "example.com/profile");
        assert_eq!(o.consumer.as_deref(), Some("sveltos"));
        assert!(o.consumer_only);
        assert_eq!(o.refresh_before, Duration::from_secs(300));
        assert!(o.secret_namespaces.contains("creds"));
        assert!(o.secret_reader_namespaces.contains("vault"));
        assert!(o.allow_exec_kubeconfigs && !o.use_access_providers);
    }

    #[test]
    fn every_bad_value_is_an_error_at_its_path() {
        let c = CredentialsConfig {
            secret_label: Some(String::new()),
            consumer: Some("not a label value".into()),
            kubeconfig_keys: Some(vec!["ok".into(), String::new()]),
            exec_providers_file: Some(" ".into()),
            refresh_before: Some("soon".into()),
            secret_namespaces: Some(vec!["Bad_NS".into()]),
            secret_reader_namespaces: Some(vec!["ok".into(), "x".repeat(64)]),
            exec_allowed_servers: Some(vec!["http://x".into()]),
            ..Default::default()
        };
        let paths = err_paths(c);
        for want in [
            path("secret_label"),
            path("consumer"),
            indexed("kubeconfig_keys", 1),
            path("exec_providers_file"),
            path("refresh_before"),
            indexed("secret_namespaces", 0),
            indexed("secret_reader_namespaces", 1),
            indexed("exec_allowed_servers", 0),
        ] {
            assert!(paths.contains(&want), "{want:?} not in {paths:?}");
        }
        assert_eq!(
            err_paths(CredentialsConfig {
                kubeconfig_keys: Some(vec![]),
                ..Default::default()
            }),
            vec![path("kubeconfig_keys")]
        );
    }

    #[test]
    fn consumer_defaults_to_sveltos_and_the_empty_string_turns_it_off() {
        let d = validate(None).unwrap();
        assert_eq!(d.consumer.as_deref(), Some(DEFAULT_CONSUMER));
        assert!(
            !d.consumer_only,
            "the default keeps Secrets next to their profile"
        );
        let off = CredentialsConfig {
            consumer: Some(String::new()),
            ..Default::default()
        }
        .validate()
        .unwrap();
        assert_eq!((off.consumer, off.consumer_only), (None, false));
    }

    fn provider_path(provider: &str, attr: &'static str, i: Option<usize>) -> Vec<Step> {
        let mut p = vec![
            Step::Attr("credentials"),
            Step::Attr("exec_providers"),
            Step::Key(provider.into()),
            Step::Attr(attr),
        ];
        p.extend(i.map(Step::Index));
        p
    }

    fn exec_providers(entries: &[(&str, ExecProviderConfig)]) -> CredentialsConfig {
        CredentialsConfig {
            exec_providers: Some(
                entries
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.clone()))
                    .collect(),
            ),
            ..Default::default()
        }
    }

    fn strings(v: &[&str]) -> Option<Vec<String>> {
        Some(v.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn exec_providers_are_scopes_and_nothing_is_allowed_by_default() {
        assert!(validate(None).unwrap().exec_providers.is_empty());
        let o = exec_providers(&[
            (
                "aws",
                ExecProviderConfig {
                    namespaces: strings(&["team-a", "team-b"]),
                    servers: strings(&["*.eks.amazonaws.com"]),
                    profile_env: strings(&["AWS_REGION"]),
                },
            ),
            (
                "gke",
                ExecProviderConfig {
                    namespaces: strings(&["*"]),
                    ..Default::default()
                },
            ),
        ])
        .validate()
        .unwrap();
        let aws = &o.exec_providers["aws"];
        assert!(aws.allows_namespace("team-b") && !aws.allows_namespace("team-c"));
        assert!(aws.servers.allows("https://x.eks.amazonaws.com"));
        assert!(!aws.servers.allows("https://evil.example"));
        assert_eq!(aws.profile_env, BTreeSet::from(["AWS_REGION".to_string()]));
        let gke = &o.exec_providers["gke"];
        assert_eq!(gke.namespaces, NamespaceScope::Any);
        assert!(gke.servers.is_empty() && gke.profile_env.is_empty());
    }

    #[test]
    fn bad_exec_providers_entries_are_errors_at_their_path() {
        let paths = err_paths(exec_providers(&[
            (
                "aws",
                ExecProviderConfig {
                    namespaces: strings(&["team-a", "Bad_NS", "*"]),
                    servers: strings(&["ok.example", "https://x"]),
                    profile_env: strings(&["AWS_REGION", "LD_PRELOAD", "https_proxy", "A-B"]),
                },
            ),
            ("none", ExecProviderConfig::default()),
            (
                "empty",
                ExecProviderConfig {
                    namespaces: Some(vec![]),
                    ..Default::default()
                },
            ),
        ]));
        let want = [
            provider_path("aws", "namespaces", Some(1)),
            provider_path("aws", "namespaces", Some(2)),
            provider_path("aws", "servers", Some(1)),
            provider_path("aws", "profile_env", Some(1)),
            provider_path("aws", "profile_env", Some(2)),
            provider_path("aws", "profile_env", Some(3)),
            provider_path("none", "namespaces", None),
            provider_path("empty", "namespaces", None),
        ];
        let mut sorted = paths.clone();
        sorted.sort_by_key(|p| format!("{p:?}"));
        let mut want_sorted = want.to_vec();
        want_sorted.sort_by_key(|p| format!("{p:?}"));
        assert_eq!(sorted, want_sorted);
        // The denylist's reason is given.
        let problems = exec_providers(&[(
            "aws",
            ExecProviderConfig {
                namespaces: strings(&["*"]),
                profile_env: strings(&["PATH"]),
                ..Default::default()
            },
        )])
        .validate()
        .unwrap_err();
        assert!(
            problems[0].detail.contains("PATH") && problems[0].detail.contains("program"),
            "{problems:?}"
        );
    }

    #[test]
    fn exec_providers_keep_the_serde_shape_backward_compatible() {
        // A record written before exec_providers existed still reads, and one without it writes no new key.
        let old: CredentialsConfig =
            serde_json::from_str(r#"{"exec_providers_file":"/p.json"}"#).unwrap();
        assert_eq!(old.exec_providers, None);
        assert_eq!(
            serde_json::to_string(&old).unwrap(),
            r#"{"exec_providers_file":"/p.json"}"#
        );
        let new = exec_providers(&[(
            "aws",
            ExecProviderConfig {
                namespaces: strings(&["*"]),
                ..Default::default()
            },
        )]);
        let text = serde_json::to_string(&new).unwrap();
        assert_eq!(text, r#"{"exec_providers":{"aws":{"namespaces":["*"]}}}"#);
        assert_eq!(
            serde_json::from_str::<CredentialsConfig>(&text).unwrap(),
            new
        );
    }

    #[test]
    fn server_patterns() {
        for ok in [
            "api.example.com",
            "*.example.com",
            "10.0.0.1",
            "host:6443",
            "[::1]:6443",
        ] {
            assert!(server_pattern(ok).is_ok(), "{ok}");
        }
        let huge = "a".repeat(100_000);
        for bad in [
            "",
            "*.",
            "https://x",
            "a b",
            "host:port",
            "*.[::1]",
            huge.as_str(),
        ] {
            assert!(server_pattern(bad).is_err(), "{bad}");
        }
    }
}
