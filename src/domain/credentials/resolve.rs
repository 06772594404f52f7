//! Whether the source a profile's credentials come from holds usable, inert credentials: one judgement used by
//! the bridge's plan, the data sources' `credential_source`/`ready_to_bridge` and the ephemeral credentials.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Secret;

use super::connect::credential_for;
use super::{
    CredentialOptions, CredentialProblem, CredentialSource, Lookup, SecretReaderMode,
    access_providers, object_id,
};
use crate::{
    api::{AccessProvider, ClusterProfile, KubeconfigCluster, keys},
    domain::{
        exec::{ExecInvocation, ProvidersFile, invocation},
        kubeconfig::{ConnectionError, KubeconfigPolicy, canonical},
    },
};

/// The Secrets credentials may come from, as read by `crate::k8s::credentials`: the labelled Secrets (indexed by
/// `namespace/name` once, so each lookup is O(log N)) and the Secrets named by `kubeconfig-secretreader`
/// providers (`None`: it does not exist).
pub struct CredentialSecrets<'a> {
    by_id: BTreeMap<(&'a str, &'a str), &'a Secret>,
    fetched: &'a BTreeMap<(String, String), Option<Secret>>,
    checked: Option<&'a CheckedKubeconfigs>,
}

impl<'a> CredentialSecrets<'a> {
    /// Indexes the labelled Secrets.
    pub fn new(
        labelled: &'a [Secret],
        fetched: &'a BTreeMap<(String, String), Option<Secret>>,
    ) -> Self {
        let by_id = labelled
            .iter()
            .map(|s| {
                let m = &s.metadata;
                (
                    (
                        m.namespace.as_deref().unwrap_or_default(),
                        m.name.as_deref().unwrap_or_default(),
                    ),
                    s,
                )
            })
            .collect();
        Self {
            by_id,
            fetched,
            checked: None,
        }
    }

    /// Kubeconfigs already found inert ([`CheckedKubeconfigs`]): a kubeconfig with the same bytes, under the same
    /// policy, is not parsed again.
    pub fn with_checked(mut self, checked: Option<&'a CheckedKubeconfigs>) -> Self {
        self.checked = checked;
        self
    }
}

/// The kubeconfigs that passed [`check_kubeconfig`] under one policy, by SHA-256 of their bytes, with what the
/// bridge writes for each ([`canonical`]): what a plan's check of the same bytes under the same policy would find,
/// worked out ahead of it (the refresh's read-ahead checks the credential Secrets it read while Terraform processes
/// the refreshed state). Only passes are kept, so a refused kubeconfig is always checked again and its error is the
/// check's own; a kubeconfig with other bytes, or a policy that differs in anything, is checked as if nothing had
/// been checked.
#[derive(Clone, Default)]
pub struct CheckedKubeconfigs {
    policy: KubeconfigPolicy,
    passed: std::collections::HashMap<[u8; 32], std::sync::Arc<[u8]>>,
}

impl std::fmt::Debug for CheckedKubeconfigs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckedKubeconfigs")
            .field("policy", &self.policy)
            .field("passed", &self.passed.len())
            .finish()
    }
}

impl CheckedKubeconfigs {
    /// Checks, under `options`' policy, the kubeconfig a plan with `options` takes from each of `secrets` (the
    /// first of `options.kubeconfig_keys` present, as [`kubeconfig_in_secret`] picks it).
    pub fn check(secrets: &[Secret], options: &CredentialOptions) -> Self {
        Self::check_while(secrets, options, &Default::default(), || true).unwrap_or_default()
    }

    /// [`CheckedKubeconfigs::check`], leaving out the kubeconfigs whose [`source_sha256`] is in `recorded` (the
    /// ledger records that the last apply checked them: the plan takes what it wrote from the ledger), given up
    /// (`None`) as soon as `go_on` says so (asked before each kubeconfig).
    pub fn check_while(
        secrets: &[Secret],
        options: &CredentialOptions,
        recorded: &std::collections::HashSet<String>,
        go_on: impl Fn() -> bool,
    ) -> Option<Self> {
        let policy = policy_of(options);
        let mut passed = std::collections::HashMap::new();
        for (_, bytes) in secrets
            .iter()
            .filter_map(|s| kubeconfig_in_secret(s, &options.kubeconfig_keys).ok())
        {
            if !go_on() {
                return None;
            }
            let sha = source_digest(&policy, bytes);
            if passed.contains_key(&sha)
                || (!recorded.is_empty() && recorded.contains(&hex::encode(sha)))
            {
                continue;
            }
            if let Ok(written) = canonical(bytes, &policy, None) {
                passed.insert(sha, written.into());
            }
        }
        Some(Self { policy, passed })
    }

    /// How many distinct kubeconfigs passed.
    pub fn len(&self) -> usize {
        self.passed.len()
    }

    /// Whether none passed (or none was checked).
    pub fn is_empty(&self) -> bool {
        self.passed.is_empty()
    }

    /// Whether `bytes` passed under `policy`.
    #[cfg(test)]
    fn written_ok(&self, bytes: &[u8], policy: &KubeconfigPolicy) -> bool {
        self.written(bytes, policy).is_some()
    }

    /// What the bridge writes for `bytes`, when they passed under `policy`.
    fn written(&self, bytes: &[u8], policy: &KubeconfigPolicy) -> Option<Vec<u8>> {
        (self.policy == *policy)
            .then(|| self.passed.get(&source_digest(policy, bytes)))
            .flatten()
            .map(|w| w.to_vec())
    }
}

/// What the check of a kubeconfig depends on besides its bytes and the policy, named so that a plan never takes a
/// check made by another build for its own: the version, and the digest `build.rs` takes of the checking code and
/// of `Cargo.lock` (the parser's version), so that any change to what the check accepts, refuses or writes makes
/// another build, whatever the version number says.
pub(crate) const CHECK_BUILD: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " ",
    env!("KUBECONFIG_CHECK_BUILD")
);

/// SHA-256 of a kubeconfig's bytes as checked under `policy` by this build: the same digest means the same
/// verdict and the same rewritten form ([`canonical`] is a function of the bytes, the policy and the build).
fn source_digest(policy: &KubeconfigPolicy, bytes: &[u8]) -> [u8; 32] {
    digest_under(CHECK_BUILD, policy, bytes)
}

/// [`source_digest`] as the build `build` computes it.
fn digest_under(build: &str, policy: &KubeconfigPolicy, bytes: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    // Every field of the policy: one added later must be hashed too.
    let KubeconfigPolicy { allow_exec } = policy;
    let mut h = sha2::Sha256::new();
    h.update(b"terraform-provider-sveltos kubeconfig check\0");
    h.update(build.as_bytes());
    h.update([0, u8::from(*allow_exec)]);
    h.update(bytes);
    h.finalize().into()
}

/// The [`source_sha256`] of `bytes` as build `build` records it (for tests of a record made by another build).
#[cfg(test)]
pub(crate) fn source_sha256_under(
    build: &str,
    options: &CredentialOptions,
    bytes: &[u8],
) -> String {
    hex::encode(digest_under(build, &policy_of(options), bytes))
}

/// The digest a plan compares with the ledger's record of the last apply's check
/// ([`WrittenCredential::source_sha256`](crate::domain::ownership::WrittenCredential::source_sha256)): of the
/// kubeconfig `source` gives to copy whole (a labelled Secret's, or with `secret_reader_mode = "whole_kubeconfig"`
/// a `kubeconfig-secretreader` Secret's without a context), under this build and `options`' policy. `None` for
/// any other source, and for one [`resolve`] would refuse before checking the kubeconfig (missing, unreadable, no
/// key): those are resolved as usual.
pub fn source_sha256(
    source: &CredentialSource,
    options: &CredentialOptions,
    secrets: &CredentialSecrets<'_>,
) -> Option<String> {
    let whole = match source {
        CredentialSource::LabelledSecret { .. } => true,
        CredentialSource::SecretReader { context, .. } => {
            context.is_none() && options.secret_reader_mode == SecretReaderMode::WholeKubeconfig
        }
        CredentialSource::Exec { .. } => false,
    };
    if !whole {
        return None;
    }
    let Ok(Named::Secret(secret, keys)) = secret_of(source, options, secrets) else {
        return None;
    };
    let bytes = kubeconfig_bytes(secret, keys).ok()?;
    Some(hex::encode(source_digest(&policy_of(options), bytes)))
}

fn policy_of(options: &CredentialOptions) -> KubeconfigPolicy {
    KubeconfigPolicy {
        allow_exec: options.allow_exec_kubeconfigs,
    }
}

/// Usable credentials of one profile. `Debug` shows the length of a kubeconfig only.
pub enum Resolved {
    /// The kubeconfig to write: the checked source rewritten ([`canonical`]), never the source's bytes.
    Kubeconfig {
        /// What the bridge writes.
        bytes: Vec<u8>,
        /// Something the plan warns about without leaving the cluster out (a `kubeconfig-secretreader` Secret
        /// whose kubeconfig names another server than the ClusterProfile): names fields and hosts, escaped and
        /// bounded, never credential content.
        notice: Option<String>,
    },
    /// An exec plugin run that mints the credential (the plugin is not run here).
    Exec(ExecInvocation),
}

impl std::fmt::Debug for Resolved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Kubeconfig { bytes, notice } => write!(
                f,
                "Kubeconfig(<{} bytes redacted>, notice: {})",
                bytes.len(),
                notice.is_some()
            ),
            Self::Exec(inv) => f.debug_tuple("Exec").field(inv).finish(),
        }
    }
}

/// The Secrets that `kubeconfig-secretreader` providers name, which the caller must read (`namespace`, `name`).
/// Only sources that passed the namespace rules of [`super::locate`] are here.
pub fn secrets_to_read<'l>(
    lookups: impl IntoIterator<Item = &'l Lookup>,
) -> BTreeSet<(String, String)> {
    lookups
        .into_iter()
        .filter_map(|l| match l {
            Lookup::Found(CredentialSource::SecretReader {
                namespace, name, ..
            }) => Some((namespace.clone(), name.clone())),
            _ => None,
        })
        .collect()
}

/// Picks the kubeconfig out of a Secret: the first of `keys` present with a non-empty value.
pub fn kubeconfig_in_secret<'s>(
    secret: &'s Secret,
    keys: &[String],
) -> Result<(String, &'s [u8]), CredentialProblem> {
    let data = secret.data.as_ref();
    for key in keys {
        if let Some(bytes) = data.and_then(|d| d.get(key))
            && !bytes.0.is_empty()
        {
            return Ok((key.clone(), &bytes.0));
        }
    }
    Err(CredentialProblem::NoKey {
        secret: object_id(&secret.metadata),
        keys: keys.to_vec(),
        present: data
            .map(|d| d.keys().take(32).cloned().collect())
            .unwrap_or_default(),
    })
}

/// Checks that bytes hold a kubeconfig Sveltos may load and returns what the bridge writes for it: parsed under a
/// budget, with clusters, inert (no `exec` unless `allow_exec_kubeconfigs`, no `auth-provider`, `tokenFile` or file
/// paths), its current context (or `context`) complete, rewritten ([`canonical`]; see
/// `crate::domain::kubeconfig`). The error names the field, never the content.
pub fn check_kubeconfig(
    bytes: &[u8],
    options: &CredentialOptions,
    context: Option<&str>,
) -> Result<Vec<u8>, ConnectionError> {
    canonical(bytes, &policy_of(options), context)
}

/// How the kubeconfig a Secret holds is used.
#[derive(Clone, Copy)]
enum Use<'p> {
    /// Its chosen context, cluster and user (labelled Secrets; `secret_reader_mode = "whole_kubeconfig"`).
    Whole,
    /// The user of its chosen context, to reach `cluster`, the access provider's entry (`kubeconfig-secretreader`
    /// with `secret_reader_mode = "credential"`); `foreign`: the Secret is outside the ClusterProfile's namespace.
    CredentialFor {
        cluster: &'p KubeconfigCluster,
        foreign: bool,
    },
}

fn from_secret(
    secret: &Secret,
    keys: &[String],
    options: &CredentialOptions,
    context: Option<&str>,
    checked: Option<&CheckedKubeconfigs>,
    usage: Use<'_>,
) -> Result<Resolved, CredentialProblem> {
    let bytes = kubeconfig_bytes(secret, keys)?;
    if let Use::CredentialFor { cluster, foreign } = usage {
        let id = object_id(&secret.metadata);
        let (bytes, notice) =
            credential_for(&id, bytes, &policy_of(options), context, cluster, foreign)?;
        return Ok(Resolved::Kubeconfig { bytes, notice });
    }
    let policy = policy_of(options);
    let cached = context
        .is_none()
        .then(|| checked.and_then(|c| c.written(bytes, &policy)))
        .flatten();
    let written = match cached {
        Some(w) => w,
        None => check_kubeconfig(bytes, options, context).map_err(|e| {
            CredentialProblem::Kubeconfig {
                secret: object_id(&secret.metadata),
                reason: e.to_string(),
            }
        })?,
    };
    Ok(Resolved::Kubeconfig {
        bytes: written,
        notice: None,
    })
}

/// How a `kubeconfig-secretreader` Secret in `namespace` is used for `profile` under `options`: the whole
/// kubeconfig, or its user to reach the access provider's `cluster` entry.
fn secret_reader_use<'p>(
    profile: &'p ClusterProfile,
    namespace: &str,
    options: &CredentialOptions,
) -> Result<Use<'p>, CredentialProblem> {
    if options.secret_reader_mode == SecretReaderMode::WholeKubeconfig {
        return Ok(Use::Whole);
    }
    let cluster = access_providers(profile)
        .into_iter()
        .find(|a| a.name == keys::SECRET_READER_PROVIDER)
        .and_then(|a| a.cluster.as_ref())
        .ok_or_else(|| CredentialProblem::SecretReaderConnection {
            reason: "the access provider vanished".into(),
        })?;
    Ok(Use::CredentialFor {
        cluster,
        foreign: profile.metadata.namespace.as_deref() != Some(namespace),
    })
}

/// Judges a located source: the kubeconfig it holds (checked), or the exec run that would mint one (built and
/// checked against the operator's rules, not run).
pub fn resolve(
    profile: &ClusterProfile,
    source: &CredentialSource,
    options: &CredentialOptions,
    providers: Option<&ProvidersFile>,
    secrets: &CredentialSecrets<'_>,
) -> Result<Resolved, CredentialProblem> {
    let (secret, keys) = match secret_of(source, options, secrets)? {
        Named::Secret(secret, keys) => (secret, keys),
        Named::Exec(provider) => return resolve_exec(profile, provider, options, providers),
    };
    let (context, usage) = match source {
        CredentialSource::SecretReader {
            namespace, context, ..
        } => (
            context.as_deref(),
            secret_reader_use(profile, namespace, options)?,
        ),
        _ => (None, Use::Whole),
    };
    from_secret(secret, keys, options, context, secrets.checked, usage)
}

/// What a source names: a Secret with the keys its kubeconfig is taken from, or an exec provider.
enum Named<'a, 's> {
    Secret(&'s Secret, &'a [String]),
    Exec(&'a str),
}

/// The Secret `source` names and the keys its kubeconfig is taken from (the located key, or for a
/// `kubeconfig-secretreader` Secret without one, `kubeconfig_keys`), or why it is missing; for an exec source, its
/// provider. The one reading of a source that [`resolve`] and [`source_sha256`] share.
fn secret_of<'a, 's>(
    source: &'a CredentialSource,
    options: &'a CredentialOptions,
    secrets: &CredentialSecrets<'s>,
) -> Result<Named<'a, 's>, CredentialProblem> {
    let missing = |namespace: &str, name: &str| CredentialProblem::SecretMissing {
        secret: format!("{namespace}/{name}"),
    };
    match source {
        CredentialSource::LabelledSecret {
            namespace,
            name,
            key,
        } => secrets
            .by_id
            .get(&(namespace.as_str(), name.as_str()))
            .map(|s| Named::Secret(s, std::slice::from_ref(key)))
            .ok_or_else(|| missing(namespace, name)),
        CredentialSource::SecretReader {
            namespace,
            name,
            key,
            ..
        } => {
            let keys = match key {
                Some(k) => std::slice::from_ref(k),
                None => &options.kubeconfig_keys[..],
            };
            let fetched: &'s BTreeMap<(String, String), Option<Secret>> = secrets.fetched;
            fetched
                .get(&(namespace.clone(), name.clone()))
                .and_then(Option::as_ref)
                .map(|s| Named::Secret(s, keys))
                .ok_or_else(|| missing(namespace, name))
        }
        CredentialSource::Exec { provider } => Ok(Named::Exec(provider)),
    }
}

/// The kubeconfig bytes `secret` holds under the first of `keys` present, unless it is marked unreadable.
fn kubeconfig_bytes<'s>(
    secret: &'s Secret,
    keys: &[String],
) -> Result<&'s [u8], CredentialProblem> {
    if let Some(reason) = secret
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(super::UNREADABLE_MARK))
    {
        return Err(CredentialProblem::Unreadable {
            secret: object_id(&secret.metadata),
            reason: reason.clone(),
        });
    }
    kubeconfig_in_secret(secret, keys).map(|(_, bytes)| bytes)
}

/// Why exec provider `provider` cannot be used.
fn exec_problem(provider: &str, reason: impl Into<String>) -> CredentialProblem {
    CredentialProblem::Exec {
        provider: provider.to_string(),
        reason: reason.into(),
    }
}

/// The invocation of exec provider `provider` for `profile`, or why there is none.
fn resolve_exec(
    profile: &ClusterProfile,
    provider: &str,
    options: &CredentialOptions,
    providers: Option<&ProvidersFile>,
) -> Result<Resolved, CredentialProblem> {
    let entry = providers
        .and_then(|f| f.get(provider))
        .ok_or_else(|| exec_problem(provider, "not in the providers file"))?;
    let access = access_providers(profile)
        .into_iter()
        .find(|a| a.name == provider)
        .ok_or_else(|| exec_problem(provider, "the access provider vanished"))?;
    check_exec_target(provider, access, options)?;
    let inv = invocation(entry, access).map_err(|e| exec_problem(provider, e.to_string()))?;
    Ok(Resolved::Exec(inv))
}

/// The minted token goes wherever the profile's cluster entry points: never through a proxy the profile
/// chooses, and with `exec_allowed_servers`, only over verified TLS to an allowed server.
fn check_exec_target(
    provider: &str,
    access: &AccessProvider,
    options: &CredentialOptions,
) -> Result<(), CredentialProblem> {
    let allow_list = !options.exec_allowed_servers.is_empty();
    if let Some(c) = access.cluster.as_ref() {
        if c.proxy_url.as_deref().is_some_and(|p| !p.is_empty()) {
            return Err(exec_problem(
                provider,
                "the access provider's cluster entry sets proxy-url; a token minted by an exec plugin is \
                 never sent through a proxy the ClusterProfile chooses",
            ));
        }
        if allow_list
            && (c.insecure_skip_tls_verify == Some(true) || !c.server.starts_with("https://"))
        {
            return Err(exec_problem(
                provider,
                "with credentials.exec_allowed_servers, the access provider's server must be https:// \
                 without insecure-skip-tls-verify",
            ));
        }
    }
    if allow_list {
        let server = access
            .cluster
            .as_ref()
            .map(|c| c.server.as_str())
            .unwrap_or_default();
        options
            .exec_allowed_servers
            .check(server)
            .map_err(|e| exec_problem(provider, e.to_string()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{credentials::SecretIndex, credentials::locate, testutil::*};

    fn opts() -> CredentialOptions {
        CredentialOptions::default()
    }

    #[test]
    fn key_preference_and_missing_key() {
        let s = labelled_secret("a", "s", "c", None, &[("value", "v"), ("kubeconfig", "k")]);
        let (k, v) = kubeconfig_in_secret(&s, &opts().kubeconfig_keys).unwrap();
        assert_eq!((k.as_str(), v), ("kubeconfig", b"k".as_slice()));
        let s = labelled_secret("a", "s", "c", None, &[("other", "x")]);
        let e = kubeconfig_in_secret(&s, &opts().kubeconfig_keys)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("a/s") && e.contains("other") && !e.contains('x'),
            "{e}"
        );
    }

    #[test]
    fn kubeconfig_check_never_quotes_content() {
        let written = check_kubeconfig(KUBECONFIG.as_bytes(), &opts(), None).unwrap();
        assert_ne!(
            written,
            KUBECONFIG.as_bytes(),
            "the source is rewritten, never copied"
        );
        let e = check_kubeconfig(b"token: canary-123", &opts(), None).unwrap_err();
        assert!(!e.to_string().contains("canary"));
        let e = check_kubeconfig(b"{{{ canary-123", &opts(), None).unwrap_err();
        assert!(!e.to_string().contains("canary"));
    }

    #[test]
    fn labelled_and_secretreader_sources() {
        let o = opts();
        let p = profile("team-a", "c1", &[]);
        let good = [labelled_secret(
            "team-a",
            "kc",
            "c1",
            None,
            &[("Config", KUBECONFIG)],
        )];
        let none = BTreeMap::new();
        let src = lookup(&good, &p, &o);
        let secrets = CredentialSecrets::new(&good, &none);
        assert!(matches!(
            resolve(&p, &src, &o, None, &secrets),
            Ok(Resolved::Kubeconfig { bytes: b, notice: None }) if b == check_kubeconfig(KUBECONFIG.as_bytes(), &o, None).unwrap()
        ));
        let bad = [labelled_secret(
            "team-a",
            "kc",
            "c1",
            None,
            &[("Config", "token: canary")],
        )];
        let secrets = CredentialSecrets::new(&bad, &none);
        let e = resolve(&p, &src, &o, None, &secrets).unwrap_err();
        assert!(matches!(e, CredentialProblem::Kubeconfig { .. }), "{e}");
        assert!(!e.to_string().contains("canary"), "{e}");

        let mut p = profile("team-a", "c2", &[]);
        add_provider(
            &mut p,
            "kubeconfig-secretreader",
            serde_json::json!({"name": "reader", "key": "value"}),
        );
        let Lookup::Found(src) = locate(&p, &o, None, &SecretIndex::default()) else {
            panic!()
        };
        let key = ("team-a".to_string(), "reader".to_string());
        let missing = BTreeMap::from([(key.clone(), None)]);
        let e = resolve(&p, &src, &o, None, &CredentialSecrets::new(&[], &missing)).unwrap_err();
        assert!(matches!(e, CredentialProblem::SecretMissing { .. }), "{e}");
        let present = BTreeMap::from([(
            key,
            Some(labelled_secret(
                "team-a",
                "reader",
                "x",
                None,
                &[("value", KUBECONFIG)],
            )),
        )]);
        assert!(resolve(&p, &src, &o, None, &CredentialSecrets::new(&[], &present)).is_ok());
    }

    /// An `exec` kubeconfig with a harmless command (the check refuses it by its field, whatever it runs).
    const EXEC_KUBECONFIG: &str = "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\nusers:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/true\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n";

    /// The options with `allow_exec_kubeconfigs = true`.
    fn lenient() -> CredentialOptions {
        CredentialOptions {
            allow_exec_kubeconfigs: true,
            ..opts()
        }
    }

    fn lookup(secrets: &[Secret], p: &ClusterProfile, o: &CredentialOptions) -> CredentialSource {
        let idx = SecretIndex::new(secrets, o, &BTreeMap::new());
        let Lookup::Found(src) = locate(p, o, None, &idx) else {
            panic!("no source")
        };
        src
    }

    /// One labelled Secret `a/good` for profile `c1`, holding a kubeconfig the check passes.
    fn one_good_secret() -> [Secret; 1] {
        [labelled_secret(
            "a",
            "good",
            "c1",
            None,
            &[("value", KUBECONFIG)],
        )]
    }

    #[test]
    fn a_check_told_to_stop_gives_up() {
        let o = opts();
        let secrets = one_good_secret();
        assert!(
            CheckedKubeconfigs::check_while(&secrets, &o, &Default::default(), || false).is_none()
        );
        let whole =
            CheckedKubeconfigs::check_while(&secrets, &o, &Default::default(), || true).unwrap();
        assert_eq!(whole.len(), CheckedKubeconfigs::check(&secrets, &o).len());
        assert_eq!(whole.len(), 1);
    }

    /// The check ahead leaves out the kubeconfigs the ledger records the last apply checked (by
    /// [`source_sha256`]), and only those: under another policy the same bytes are checked.
    #[test]
    fn a_check_ahead_leaves_out_the_sources_the_last_apply_checked() {
        let o = opts();
        let secrets = one_good_secret();
        let p = profile("a", "c1", &[]);
        let none = BTreeMap::new();
        let src = lookup(&secrets, &p, &o);
        let index = CredentialSecrets::new(&secrets, &none);
        let recorded = [source_sha256(&src, &o, &index).unwrap()].into();
        let ahead = CheckedKubeconfigs::check_while(&secrets, &o, &recorded, || true).unwrap();
        assert_eq!(ahead.len(), 0);
        let lenient = lenient();
        assert_ne!(
            source_sha256(&src, &lenient, &index),
            source_sha256(&src, &o, &index)
        );
        let ahead = CheckedKubeconfigs::check_while(&secrets, &lenient, &recorded, || true);
        assert_eq!(ahead.unwrap().len(), 1);
        // An exec source has none.
        let exec = CredentialSource::Exec {
            provider: "tok".into(),
        };
        assert_eq!(source_sha256(&exec, &o, &index), None);
    }

    #[test]
    fn checked_kubeconfigs_keep_only_passes_under_their_policy() {
        let o = opts();
        let secrets = [
            labelled_secret("a", "good", "c1", None, &[("value", KUBECONFIG)]),
            labelled_secret("a", "exec", "c2", None, &[("value", EXEC_KUBECONFIG)]),
            labelled_secret("a", "junk", "c3", None, &[("value", "{{{")]),
            labelled_secret(
                "a",
                "other",
                "c4",
                None,
                &[("not-a-kubeconfig-key", KUBECONFIG)],
            ),
        ];
        let checked = CheckedKubeconfigs::check(&secrets, &o);
        assert_eq!(checked.len(), 1, "{checked:?}");
        assert!(checked.written_ok(KUBECONFIG.as_bytes(), &policy_of(&o)));
        assert!(!checked.written_ok(EXEC_KUBECONFIG.as_bytes(), &policy_of(&o)));
        let lenient = lenient();
        assert!(!checked.written_ok(KUBECONFIG.as_bytes(), &policy_of(&lenient)));
        // Only the key a plan takes: the first of `kubeconfig_keys` present.
        let two = [labelled_secret(
            "a",
            "two",
            "c5",
            None,
            &[("kubeconfig", KUBECONFIG), ("value", EXEC_KUBECONFIG)],
        )];
        let first = CheckedKubeconfigs::check(&two, &lenient);
        assert_eq!(first.len(), 1, "{first:?}");
        assert!(first.written_ok(KUBECONFIG.as_bytes(), &policy_of(&lenient)));
        let checked = CheckedKubeconfigs::check(&secrets, &lenient);
        assert_eq!(checked.len(), 2, "{checked:?}");
        // Debug shows counts, never digests or content.
        assert!(!format!("{checked:?}").contains("canary"));
    }

    #[test]
    fn a_plan_skips_only_the_kubeconfigs_checked_under_its_own_policy() {
        let p = profile("a", "c1", &[]);
        let none = BTreeMap::new();
        // Checked ahead with exec allowed (the configuration last applied); the plan's configuration now refuses
        // exec: the same bytes are inspected again, and refused.
        let strict = opts();
        let lenient = lenient();
        let exec = [labelled_secret(
            "a",
            "kc",
            "c1",
            None,
            &[("value", EXEC_KUBECONFIG)],
        )];
        let checked = CheckedKubeconfigs::check(&exec, &lenient);
        assert_eq!(checked.len(), 1);
        let src = lookup(&exec, &p, &strict);
        let secrets = CredentialSecrets::new(&exec, &none).with_checked(Some(&checked));
        let e = resolve(&p, &src, &strict, None, &secrets).unwrap_err();
        assert!(matches!(e, CredentialProblem::Kubeconfig { .. }), "{e}");
        assert!(resolve(&p, &src, &lenient, None, &secrets).is_ok());

        // The Secret changed after the check (other bytes): inspected, and refused.
        let good = [labelled_secret(
            "a",
            "kc",
            "c1",
            None,
            &[("value", KUBECONFIG)],
        )];
        let checked = CheckedKubeconfigs::check(&good, &strict);
        let swapped = [labelled_secret(
            "a",
            "kc",
            "c1",
            None,
            &[("value", EXEC_KUBECONFIG)],
        )];
        let secrets = CredentialSecrets::new(&swapped, &none).with_checked(Some(&checked));
        let e = resolve(&p, &src, &strict, None, &secrets).unwrap_err();
        assert!(matches!(e, CredentialProblem::Kubeconfig { .. }), "{e}");

        // What was checked under the same policy is not parsed again: a digest recorded as passed is taken as
        // the check's answer (shown here with bytes the check would refuse, recorded by hand).
        let recorded = CheckedKubeconfigs {
            policy: policy_of(&strict),
            passed: [(
                source_digest(&policy_of(&strict), EXEC_KUBECONFIG.as_bytes()),
                std::sync::Arc::from(&b"recorded"[..]),
            )]
            .into(),
        };
        let secrets = CredentialSecrets::new(&swapped, &none).with_checked(Some(&recorded));
        assert!(matches!(
            resolve(&p, &src, &strict, None, &secrets),
            Ok(Resolved::Kubeconfig { bytes: b, .. }) if b == b"recorded"
        ));
        let secrets = CredentialSecrets::new(&swapped, &none);
        assert!(resolve(&p, &src, &strict, None, &secrets).is_err());
    }

    #[test]
    fn exec_provider_outside_allowed_servers_is_refused_before_any_run() {
        let mut p = profile("team-a", "c1", &[]);
        add_provider(&mut p, "token-plugin", serde_json::json!({}));
        let file = ProvidersFile::parse(
            br#"{"providers":[{"name":"token-plugin","execConfig":{"apiVersion":"client.authentication.k8s.io/v1","command":"/bin/true"}}]}"#,
        )
        .unwrap();
        let src = CredentialSource::Exec {
            provider: "token-plugin".into(),
        };
        let none = BTreeMap::new();
        let secrets = CredentialSecrets::new(&[], &none);
        let o = CredentialOptions {
            exec_allowed_servers: crate::domain::exec::ServerAllowList::parse(&[
                "*.trusted.example",
            ])
            .unwrap(),
            ..opts()
        };
        let e = resolve(&p, &src, &o, Some(&file), &secrets).unwrap_err();
        assert!(matches!(e, CredentialProblem::Exec { .. }), "{e}");
        assert!(e.to_string().contains("exec_allowed_servers"), "{e}");
        assert!(matches!(
            resolve(&p, &src, &opts(), Some(&file), &secrets),
            Ok(Resolved::Exec(_))
        ));
        // Attack: route the minted token through the profile writer's proxy.
        p.status.as_mut().unwrap().access_providers[0]
            .cluster
            .as_mut()
            .unwrap()
            .proxy_url = Some("http://sink.attacker.example:3128".into());
        let e = resolve(&p, &src, &opts(), Some(&file), &secrets).unwrap_err();
        assert!(e.to_string().contains("proxy-url"), "{e}");
    }
}
