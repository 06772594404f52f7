//! Exec-plugin access providers (KEP-4322 providers file, KEP-541 ExecCredential, KEP-5339 extensions):
//! what to run for a profile, and how to turn the plugin's answer into a static kubeconfig.
//! Running the plugin is IO and lives in `crate::k8s`; everything here is pure.

use std::{collections::BTreeMap, fmt};

use serde::Deserialize;

use super::credentials::exec_extension;
use crate::api::{AccessProvider, KubeconfigCluster, keys};

/// Why a providers file, a plugin run or a plugin's answer is refused. Nothing here quotes inventory data
/// except a refused variable name or server host (escaped and shortened), nor any credential.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The providers file is not the expected JSON (the message gives the position only: the file may hold
    /// secrets in its env values; the source has the parser's wording).
    #[error("not a valid providers file (line {}, column {})", .0.line(), .0.column())]
    ProvidersFileSyntax(#[source] serde_json::Error),
    /// The providers file has a member the format does not know (at any level).
    #[error("not a valid providers file (line {line}, column {column}): unknown member {member:?}")]
    ProvidersFileUnknownMember {
        /// The member's name (escaped, at most 64 characters).
        member: String,
        /// Line of the error.
        line: usize,
        /// Column of the error.
        column: usize,
    },
    /// An `execConfig.env` entry of the providers file has a name no environment can hold.
    #[error(
        "providers[{index}] ({name}): execConfig.env name {variable:?} is empty or holds '=' or NUL"
    )]
    BadFileEnvName {
        /// Position in `providers`.
        index: usize,
        /// The provider's name.
        name: String,
        /// The variable's name (escaped, at most 64 characters).
        variable: String,
    },
    /// Two providers share a name.
    #[error("providers[{index}]: duplicate provider name {name:?}")]
    DuplicateProvider {
        /// Position in `providers`.
        index: usize,
        /// The name.
        name: String,
    },
    /// A provider has an empty `execConfig.command`.
    #[error("providers[{index}] ({name}): execConfig.command is empty")]
    EmptyCommand {
        /// Position in `providers`.
        index: usize,
        /// The provider's name.
        name: String,
    },
    /// `profileSourcedCLIArgsPolicy` is not `Append` or `Ignore`.
    #[error(
        "providers[{index}] ({name}): unknown profileSourcedCLIArgsPolicy {value:?} (Append or Ignore)"
    )]
    UnknownArgsPolicy {
        /// Position in `providers`.
        index: usize,
        /// The provider's name.
        name: String,
        /// The value found.
        value: String,
    },
    /// `profileSourcedEnvVarsPolicy` is not `AppendIfNotExists`, `Replace` or `Ignore`.
    #[error(
        "providers[{index}] ({name}): unknown profileSourcedEnvVarsPolicy {value:?} (AppendIfNotExists, Replace or Ignore)"
    )]
    UnknownEnvPolicy {
        /// Position in `providers`.
        index: usize,
        /// The provider's name.
        name: String,
        /// The value found.
        value: String,
    },
    /// The profile's access provider has no `cluster` entry.
    #[error("access provider {provider} has no cluster entry")]
    NoCluster {
        /// The provider's name.
        provider: String,
    },
    /// The additional-args extension is not a list of strings.
    #[error(
        "extension {} must be a list of strings",
        keys::ADDITIONAL_ARGS_EXTENSION
    )]
    BadAdditionalArgs,
    /// The additional-envs extension is not a map of strings.
    #[error(
        "extension {} must be a map of strings",
        keys::ADDITIONAL_ENVS_EXTENSION
    )]
    BadAdditionalEnvs,
    /// The profile asks for an environment variable that could change what the plugin runs or trusts.
    #[error(
        "extension {} sets {name}, which a profile may not set ({rule}); no plugin was run",
        keys::ADDITIONAL_ENVS_EXTENSION
    )]
    ForbiddenEnv {
        /// The variable's name (escaped, at most 64 characters).
        name: String,
        /// The rule it breaks.
        rule: &'static str,
    },
    /// The profile asks for an environment variable the operator did not allow for this provider.
    #[error(
        "extension {} sets {name}, which credentials.exec_providers[\"{provider}\"].profile_env does not list; \
         no plugin was run",
        keys::ADDITIONAL_ENVS_EXTENSION
    )]
    EnvNotAllowed {
        /// The provider's name.
        provider: String,
        /// The variable's name (escaped, at most 64 characters).
        name: String,
    },
    /// The profile's `cluster.server` is not in `credentials.exec_allowed_servers`.
    #[error(
        "the profile's cluster.server host {host} matches no entry of {attribute}; no plugin was run"
    )]
    ServerNotAllowed {
        /// The host (escaped, at most 64 characters), or `<unparsable>`.
        host: String,
        /// The setting holding the patterns.
        attribute: String,
    },
    /// An `exec_allowed_servers` entry is not `host`, `host:port`, `*.suffix` or `*.suffix:port`.
    #[error(
        "exec_allowed_servers entry {pattern:?} is not a host, host:port, *.domain or *.domain:port"
    )]
    BadServerPattern {
        /// The entry.
        pattern: String,
    },
    /// The plugin's stdout is not an ExecCredential JSON object.
    #[error("the plugin's output is not an ExecCredential JSON object")]
    NotExecCredential,
    /// The plugin's answer has another `kind`.
    #[error("the plugin's output has kind other than ExecCredential")]
    WrongKind,
    /// The plugin's answer has another `apiVersion`.
    #[error("the plugin answered apiVersion {got:?}, expected {expected:?}")]
    WrongApiVersion {
        /// What it answered (escaped, at most 64 characters).
        got: String,
        /// What the providers file asks for.
        expected: String,
    },
    /// The plugin's answer has no `status`.
    #[error("the plugin's ExecCredential has no status")]
    NoStatus,
    /// The plugin's answer has neither a token nor a certificate and key.
    #[error("the plugin's ExecCredential has neither a token nor a client certificate and key")]
    NoCredential,
    /// `status.expirationTimestamp` is not RFC 3339.
    #[error("the plugin's expirationTimestamp is not RFC 3339")]
    BadExpiry,
}

/// `s` escaped and cut to 64 characters, for naming untrusted identifiers in messages.
pub(crate) fn shown(s: &str) -> String {
    let mut out: String = s.chars().take(64).flat_map(char::escape_debug).collect();
    if s.chars().count() > 64 {
        out.push('…');
    }
    out
}

/// Environment variables a profile may never set through the KEP-5339 additional-envs extension, whatever the
/// provider's `profileSourcedEnvVarsPolicy`: they change which program runs, what it loads, which files it
/// reads, which proxies or CAs it trusts. Names are compared without regard to ASCII case. Each entry is
/// `(pattern, rule)`: `NAME` exact, `PREFIX*` or `*SUFFIX`.
pub const FORBIDDEN_PROFILE_ENV: &[(&str, &str)] = &[
    ("PATH", "chooses which program runs"),
    ("HOME", "chooses which configuration files are read"),
    ("KUBECONFIG", "chooses which kubeconfig is read"),
    ("KUBERNETES_EXEC_INFO", "set by the bridge"),
    ("HTTP_PROXY", "redirects the plugin's traffic"),
    ("HTTPS_PROXY", "redirects the plugin's traffic"),
    ("NO_PROXY", "redirects the plugin's traffic"),
    ("ALL_PROXY", "redirects the plugin's traffic"),
    ("SSL_CERT_FILE", "chooses which CAs are trusted"),
    ("SSL_CERT_DIR", "chooses which CAs are trusted"),
    ("*_CA_BUNDLE", "chooses which CAs are trusted"),
    ("LD_*", "loads code into the plugin (dynamic linker)"),
    ("DYLD_*", "loads code into the plugin (dynamic linker)"),
    ("GCONV_PATH", "loads code into the plugin (glibc)"),
    (
        "*_OPTIONS",
        "passes options to an interpreter or runtime (NODE_OPTIONS, JAVA_TOOL_OPTIONS, ...)",
    ),
    ("PERL5*", "configures the Perl interpreter"),
    ("PYTHON*", "configures the Python interpreter"),
    ("RUBY*", "configures the Ruby interpreter"),
    ("NODE_*", "configures Node.js"),
    ("BASH_FUNC_*", "defines shell functions"),
    ("BASH_ENV", "makes shells run a file"),
    ("ENV", "makes shells run a file"),
    ("SHELLOPTS", "configures shells"),
    ("BASHOPTS", "configures shells"),
    ("IFS", "changes how shells split words"),
    ("PS4", "runs code in traced shells"),
    ("GIT_*", "configures git"),
];

/// Why a profile may not set the environment variable `name`, if it may not.
pub fn forbidden_profile_env(name: &str) -> Option<&'static str> {
    let valid = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return Some("not a portable variable name: letters, digits and '_' only");
    }
    let upper = name.to_ascii_uppercase();
    FORBIDDEN_PROFILE_ENV.iter().find_map(|(pattern, rule)| {
        let hit = if let Some(prefix) = pattern.strip_suffix('*') {
            upper.starts_with(prefix)
        } else if let Some(suffix) = pattern.strip_prefix('*') {
            upper.ends_with(suffix)
        } else {
            upper == *pattern
        };
        hit.then_some(*rule)
    })
}

/// `credentials.exec_allowed_servers`: host patterns a profile's `cluster.server` must match before its exec
/// plugin runs (a token minted for a host goes to that host).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerAllowList {
    patterns: Vec<HostPattern>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct HostPattern {
    /// `*.host`: any host strictly under `host`.
    wildcard: bool,
    /// Lower-cased host or domain.
    host: String,
    /// Required port, if any.
    port: Option<u16>,
}

impl ServerAllowList {
    /// Parses patterns: `host`, `host:port`, `*.domain`, `*.domain:port`, `[v6]`, `[v6]:port`. Hosts are
    /// compared without regard to case; without a port in the pattern any port matches.
    pub fn parse<S: AsRef<str>>(patterns: &[S]) -> Result<Self, ExecError> {
        let patterns = patterns
            .iter()
            .map(|p| {
                let raw = p.as_ref();
                let bad = || ExecError::BadServerPattern {
                    pattern: raw.into(),
                };
                let (wildcard, rest) = match raw.strip_prefix("*.") {
                    Some(r) => (true, r),
                    None => (false, raw),
                };
                let (host, port) = split_host_port(rest).ok_or_else(bad)?;
                let ok_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | ':');
                if host.is_empty() || !host.chars().all(ok_char) || (wildcard && host.contains(':'))
                {
                    return Err(bad());
                }
                Ok(HostPattern {
                    wildcard,
                    host: host.trim_end_matches('.').to_ascii_lowercase(),
                    port,
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { patterns })
    }

    /// Whether no pattern is configured (every server is allowed).
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// Whether the host (and port, where the pattern has one) of `server`, an `https://` or `http://` URL,
    /// matches a pattern. An empty list allows every server; an unparsable URL matches nothing.
    pub fn allows(&self, server: &str) -> bool {
        if self.patterns.is_empty() {
            return true;
        }
        let Some((host, port)) = server_host_port(server) else {
            return false;
        };
        self.patterns.iter().any(|p| {
            let host_ok = if p.wildcard {
                host.len() > p.host.len() + 1
                    && host.ends_with(&p.host)
                    && host.as_bytes()[host.len() - p.host.len() - 1] == b'.'
            } else {
                host == p.host
            };
            host_ok && p.port.is_none_or(|want| port == Some(want))
        })
    }

    /// [`Self::allows`] as a result naming the host (for `credentials.exec_allowed_servers`).
    pub fn check(&self, server: &str) -> Result<(), ExecError> {
        self.check_for(server, "credentials.exec_allowed_servers")
    }

    /// [`Self::allows`] as a result naming the host and `attribute`, the setting that holds the patterns.
    pub fn check_for(&self, server: &str, attribute: &str) -> Result<(), ExecError> {
        if self.allows(server) {
            return Ok(());
        }
        let host =
            server_host_port(server).map_or_else(|| "<unparsable>".to_string(), |(h, _)| shown(&h));
        Err(ExecError::ServerNotAllowed {
            host,
            attribute: attribute.to_string(),
        })
    }
}

/// `host[:port]` or `[v6][:port]`; `None` when the port is not a number.
fn split_host_port(s: &str) -> Option<(&str, Option<u16>)> {
    if let Some(rest) = s.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        return match after {
            "" => Some((host, None)),
            p => Some((host, Some(p.strip_prefix(':')?.parse().ok()?))),
        };
    }
    match s.rsplit_once(':') {
        Some((h, p)) if !h.contains(':') => Some((h, Some(p.parse().ok()?))),
        _ => Some((s, None)),
    }
}

/// The lower-cased host and the port (explicit, or the scheme's default) of an `http(s)://` URL.
fn server_host_port(url: &str) -> Option<(String, Option<u16>)> {
    let (scheme, rest) = url.trim().split_once("://")?;
    let default = match scheme.to_ascii_lowercase().as_str() {
        "https" => 443,
        "http" => 80,
        _ => return None,
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (host, port) = split_host_port(hostport)?;
    if host.is_empty() {
        return None;
    }
    Some((
        host.trim_end_matches('.').to_ascii_lowercase(),
        Some(port.unwrap_or(default)),
    ))
}

/// The providers file: `{"providers": [{"name": ..., "execConfig": {...}}]}`, as the upstream access library
/// (`sigs.k8s.io/cluster-inventory-api/pkg/access`) reads it with Go's `encoding/json`: `null` for an optional
/// member is the same as leaving it out (the upstream example files carry `"args": null`, `"env": null`), and every
/// member of client-go's `ExecConfig` is accepted. Unlike Go, a member the format does not have is refused, at
/// every level (a typo would otherwise be silently ignored). `Debug` shows no argument or environment value.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProvidersFile {
    /// Configured providers, in the file's order (the order decides which provider a profile uses).
    #[serde(default, deserialize_with = "null_as_default")]
    pub providers: Vec<ProviderEntry>,
}

/// `null` or a value; `null` gives the type's default (Go's `encoding/json` leaves the field as it is).
fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// One provider of the providers file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProviderEntry {
    /// Name matched against `status.accessProviders[].name`.
    pub name: String,
    /// What to run.
    pub exec_config: ExecConfig,
    /// How profile-supplied args are used (`Append` | `Ignore`, default `Ignore`).
    #[serde(default, rename = "profileSourcedCLIArgsPolicy")]
    pub profile_sourced_cli_args_policy: Option<String>,
    /// How profile-supplied env vars are used (`AppendIfNotExists` | `Replace` | `Ignore`, default `Ignore`).
    #[serde(default)]
    pub profile_sourced_env_vars_policy: Option<String>,
    /// Which profiles may use this provider, from `credentials.exec_providers` ([`ProvidersFile::scope`]);
    /// `None`: no profile may (the operator did not configure it).
    #[serde(skip)]
    pub scope: Option<ExecScope>,
}

/// A kubeconfig `exec` stanza: every member of client-go's `ExecConfig` as it is decoded from JSON.
#[derive(Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExecConfig {
    /// ExecCredential API version, e.g. `client.authentication.k8s.io/v1`.
    pub api_version: String,
    /// Command to run.
    pub command: String,
    /// Arguments.
    #[serde(default, deserialize_with = "null_as_default")]
    pub args: Vec<String>,
    /// Extra environment variables.
    #[serde(default, deserialize_with = "null_as_default")]
    pub env: Vec<EnvVar>,
    /// Pass the cluster entry to the plugin in `KUBERNETES_EXEC_INFO`.
    #[serde(default, deserialize_with = "null_as_default")]
    pub provide_cluster_info: bool,
    /// Shown when the command is missing.
    #[serde(default)]
    pub install_hint: Option<String>,
    /// `Never` | `IfAvailable` | `Always`: accepted and ignored, as upstream does (the bridge, like the upstream
    /// access library, never runs plugins interactively).
    #[serde(default)]
    pub interactive_mode: Option<String>,
}

/// A `name`/`value` environment variable.
#[derive(Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvVar {
    /// Name.
    pub name: String,
    /// Value (`null` or absent: empty).
    #[serde(default, deserialize_with = "null_as_default")]
    pub value: String,
}

impl fmt::Debug for ExecConfig {
    /// Arguments and environment values may hold secrets: only their count and the variable names are shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExecConfig")
            .field("api_version", &self.api_version)
            .field("command", &self.command)
            .field("args", &format_args!("<{} redacted>", self.args.len()))
            .field("env", &self.env)
            .field("provide_cluster_info", &self.provide_cluster_info)
            .field("install_hint", &self.install_hint)
            .field("interactive_mode", &self.interactive_mode)
            .finish()
    }
}

impl fmt::Debug for EnvVar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}=<redacted>", self.name)
    }
}

impl ProvidersFile {
    /// Parses and validates a providers file (policies must be known values; names unique).
    pub fn parse(bytes: &[u8]) -> Result<Self, ExecError> {
        let file: Self = serde_json::from_slice(bytes).map_err(|e| {
            // serde's wording for an unknown member is `unknown field `x`, expected ...`: the member's name is
            // the operator's, never a secret value, so it is shown.
            let text = e.to_string();
            match text
                .strip_prefix("unknown field `")
                .and_then(|rest| rest.split_once('`'))
            {
                Some((field, _)) => ExecError::ProvidersFileUnknownMember {
                    member: shown(field),
                    line: e.line(),
                    column: e.column(),
                },
                None => ExecError::ProvidersFileSyntax(e),
            }
        })?;
        let mut seen = std::collections::BTreeSet::new();
        for (index, p) in file.providers.iter().enumerate() {
            let name = || p.name.clone();
            if let Some(env) = p
                .exec_config
                .env
                .iter()
                .find(|e| e.name.is_empty() || e.name.contains(['=', '\0']))
            {
                return Err(ExecError::BadFileEnvName {
                    index,
                    name: name(),
                    variable: shown(&env.name),
                });
            }
            if !seen.insert(p.name.as_str()) {
                return Err(ExecError::DuplicateProvider {
                    index,
                    name: name(),
                });
            }
            if p.exec_config.command.is_empty() {
                return Err(ExecError::EmptyCommand {
                    index,
                    name: name(),
                });
            }
            if let Some(v) = &p.profile_sourced_cli_args_policy
                && !matches!(v.as_str(), "Append" | "Ignore")
            {
                return Err(ExecError::UnknownArgsPolicy {
                    index,
                    name: name(),
                    value: v.clone(),
                });
            }
            if let Some(v) = &p.profile_sourced_env_vars_policy
                && !matches!(v.as_str(), "AppendIfNotExists" | "Replace" | "Ignore")
            {
                return Err(ExecError::UnknownEnvPolicy {
                    index,
                    name: name(),
                    value: v.clone(),
                });
            }
        }
        Ok(file)
    }

    /// The provider with this name.
    pub fn get(&self, name: &str) -> Option<&ProviderEntry> {
        self.providers.iter().find(|p| p.name == name)
    }

    /// Attaches the operator's scopes (`credentials.exec_providers`, by provider name) to the providers: a
    /// provider without one is used by no profile.
    pub fn scope(&mut self, scopes: &BTreeMap<String, ExecScope>) {
        for p in &mut self.providers {
            p.scope = scopes.get(&p.name).cloned();
        }
    }

    /// [`Self::scope`], by value.
    #[must_use]
    pub fn scoped(mut self, scopes: &BTreeMap<String, ExecScope>) -> Self {
        self.scope(scopes);
        self
    }
}

/// Which profiles may use one provider of the providers file, and what they may add: one entry of
/// `credentials.exec_providers`, validated. There is deliberately no default: a provider the operator did not
/// configure is used by no profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecScope {
    /// Namespaces whose ClusterProfiles may use the provider.
    pub namespaces: NamespaceScope,
    /// Host patterns the profile's `cluster.server` must match (empty: any server; `exec_allowed_servers`, when
    /// set, applies as well).
    pub servers: ServerAllowList,
    /// Environment variables a profile may add through the KEP-5339 additional-envs extension (exact names).
    pub profile_env: std::collections::BTreeSet<String>,
}

/// The namespaces of an [`ExecScope`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NamespaceScope {
    /// `["*"]`: every namespace the configuration selects.
    Any,
    /// These namespaces only.
    Only(std::collections::BTreeSet<String>),
}

impl ExecScope {
    /// For tests: every namespace, any server, no profile variable.
    #[cfg(test)]
    pub fn any_namespace() -> Self {
        Self {
            namespaces: NamespaceScope::Any,
            servers: ServerAllowList::default(),
            profile_env: Default::default(),
        }
    }

    /// Whether a ClusterProfile in `namespace` may use the provider.
    pub fn allows_namespace(&self, namespace: &str) -> bool {
        match &self.namespaces {
            NamespaceScope::Any => true,
            NamespaceScope::Only(list) => list.contains(namespace),
        }
    }
}

/// A fully determined plugin run. `Debug` shows no argument, environment value or `KUBERNETES_EXEC_INFO`.
#[derive(Clone, PartialEq)]
pub struct ExecInvocation {
    /// Provider name.
    pub provider: String,
    /// Command.
    pub command: String,
    /// Arguments (config args, then profile args when allowed).
    pub args: Vec<String>,
    /// Environment additions, in order.
    pub env: Vec<(String, String)>,
    /// Names in `env` that the profile added under `AppendIfNotExists`: the run leaves them out when the
    /// environment it inherits sets them (decided where the plugin runs, `crate::k8s::exec`: the core reads no
    /// environment).
    pub if_unset: std::collections::BTreeSet<String>,
    /// The `KUBERNETES_EXEC_INFO` value.
    pub exec_info: String,
    /// Install hint for a missing command.
    pub install_hint: Option<String>,
    /// The ExecCredential API version the plugin must answer with.
    pub api_version: String,
}

impl fmt::Debug for ExecInvocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.env.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("ExecInvocation")
            .field("provider", &self.provider)
            .field("command", &self.command)
            .field("args", &format_args!("<{} redacted>", self.args.len()))
            .field("env", &format_args!("{names:?} (values redacted)"))
            .field(
                "exec_info",
                &format_args!("<{} bytes redacted>", self.exec_info.len()),
            )
            .field("install_hint", &self.install_hint)
            .field("api_version", &self.api_version)
            .finish()
    }
}

/// Builds the plugin run for a profile's access provider: [`invocation_in`] before the inherited environment is
/// known (variables the profile adds under `AppendIfNotExists` are left out at run time when it sets them: see
/// [`ExecInvocation::if_unset`]).
pub fn invocation(
    entry: &ProviderEntry,
    provider: &AccessProvider,
) -> Result<ExecInvocation, ExecError> {
    invocation_in(entry, provider, &|_| false)
}

/// Builds the plugin run for a profile's access provider. `runner_sets` tells whether the environment the plugin
/// inherits sets a variable.
///
/// Variables the profile adds (KEP-5339 additional-envs, read only under an `AppendIfNotExists` or `Replace`
/// policy of the providers file) must be listed in the provider's `profile_env` (its [`ExecScope`]) and must not
/// be named in [`FORBIDDEN_PROFILE_ENV`]; otherwise this fails, so that no plugin runs. `AppendIfNotExists` adds a
/// variable only when neither the providers file's `env` nor the inherited environment sets it; `Replace` replaces
/// the providers file's value (upstream's meaning).
pub fn invocation_in(
    entry: &ProviderEntry,
    provider: &AccessProvider,
    runner_sets: &dyn Fn(&str) -> bool,
) -> Result<ExecInvocation, ExecError> {
    let cluster = provider
        .cluster
        .as_ref()
        .ok_or_else(|| ExecError::NoCluster {
            provider: provider.name.clone(),
        })?;
    let ext = |name: &str| {
        cluster
            .extensions
            .iter()
            .find(|e| e.name == name)
            .map(|e| &e.extension)
    };
    let mut args = entry.exec_config.args.clone();
    if entry.profile_sourced_cli_args_policy.as_deref() == Some("Append")
        && let Some(extra) = ext(keys::ADDITIONAL_ARGS_EXTENSION)
    {
        let extra: Vec<String> =
            serde_json::from_value(extra.clone()).map_err(|_| ExecError::BadAdditionalArgs)?;
        args.extend(extra);
    }
    let mut env: Vec<(String, String)> = entry
        .exec_config
        .env
        .iter()
        .map(|e| (e.name.clone(), e.value.clone()))
        .collect();
    let mut if_unset = std::collections::BTreeSet::new();
    let policy = entry
        .profile_sourced_env_vars_policy
        .as_deref()
        .unwrap_or("Ignore");
    if policy != "Ignore"
        && let Some(extra) = ext(keys::ADDITIONAL_ENVS_EXTENSION)
    {
        let extra: BTreeMap<String, String> =
            serde_json::from_value(extra.clone()).map_err(|_| ExecError::BadAdditionalEnvs)?;
        if let Some((name, rule)) = extra
            .keys()
            .find_map(|k| forbidden_profile_env(k).map(|rule| (k, rule)))
        {
            return Err(ExecError::ForbiddenEnv {
                name: shown(name),
                rule,
            });
        }
        let allowed = |k: &str| {
            entry
                .scope
                .as_ref()
                .is_some_and(|s| s.profile_env.contains(k))
        };
        if let Some(name) = extra.keys().find(|k| !allowed(k)) {
            return Err(ExecError::EnvNotAllowed {
                provider: entry.name.clone(),
                name: shown(name),
            });
        }
        for (k, v) in extra {
            match env.iter_mut().find(|(n, _)| *n == k) {
                Some(slot) if policy == "Replace" => slot.1 = v,
                Some(_) => {}
                None if policy == "AppendIfNotExists" && runner_sets(&k) => {}
                None => {
                    if policy == "AppendIfNotExists" {
                        if_unset.insert(k.clone());
                    }
                    env.push((k, v));
                }
            }
        }
    }
    let mut spec = serde_json::json!({ "interactive": false });
    if entry.exec_config.provide_cluster_info {
        let mut c = serde_json::json!({ "server": cluster.server });
        if let Some(ca) = &cluster.certificate_authority_data {
            c["certificate-authority-data"] = ca.clone().into();
        }
        if let Some(v) = &cluster.tls_server_name {
            c["tls-server-name"] = v.clone().into();
        }
        if let Some(v) = cluster.insecure_skip_tls_verify {
            c["insecure-skip-tls-verify"] = v.into();
        }
        if let Some(v) = &cluster.proxy_url {
            c["proxy-url"] = v.clone().into();
        }
        if let Some(cfg) = exec_extension(provider) {
            c["config"] = cfg.clone();
        }
        spec["cluster"] = c;
    }
    let exec_info = serde_json::json!({
        "apiVersion": entry.exec_config.api_version,
        "kind": "ExecCredential",
        "spec": spec,
    })
    .to_string();
    Ok(ExecInvocation {
        provider: entry.name.clone(),
        command: entry.exec_config.command.clone(),
        args,
        env,
        if_unset,
        exec_info,
        install_hint: entry.exec_config.install_hint.clone(),
        api_version: entry.exec_config.api_version.clone(),
    })
}

/// Placeholder written where [`redact_secrets`] removed something.
pub const REDACTED: &str = "<redacted>";

/// Words that mark the value after them (`name=value`, `name: value`) as secret.
const SECRET_KEYS: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "token",
    "secret",
    "apikey",
    "api_key",
    "api-key",
    "credential",
    "private_key",
    "access_key",
    "session_key",
    "authorization",
    "cookie",
];

/// Removes what looks like a credential from free text (a plugin's stderr), keeping the rest readable:
/// PEM blocks; values after `password=`, `token:`, `secret=`-like keys; `Bearer`/`Basic` credentials;
/// JWT-like strings; runs of 32+ hex digits; runs of 32+ base64 characters that mix upper case, lower case
/// and digits; AWS access key ids. Control characters are dropped. Meant for error messages, so it errs on
/// the side of removing too much.
pub fn redact_secrets(text: &str) -> String {
    let text: String = text
        .chars()
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .collect();
    let text = redact_pem(&text);
    let text = redact_key_values(&text);
    redact_words(&text)
}

fn redact_pem(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("-----BEGIN") {
        out.push_str(&rest[..start]);
        out.push_str("<redacted PEM block>");
        let after = &rest[start + "-----BEGIN".len()..];
        rest = match after.find("-----END") {
            Some(end) => {
                let tail = &after[end + "-----END".len()..];
                match tail.find("-----") {
                    Some(close) => &tail[close + 5..],
                    None => "",
                }
            }
            None => "",
        };
    }
    out.push_str(rest);
    out
}

fn redact_key_values(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let bytes = text.as_bytes();
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
    let is_value_end = |b: u8| {
        b.is_ascii_whitespace()
            || matches!(b, b'"' | b'\'' | b',' | b';' | b'&' | b')' | b'}' | b']')
    };
    let mut out = String::with_capacity(text.len());
    let (mut i, mut copied) = (0, 0);
    while i < bytes.len() {
        let at_word_start = i == 0 || !is_ident(bytes[i - 1]);
        let bearer = ["bearer", "basic"]
            .iter()
            .find(|w| at_word_start && lower[i..].starts_with(**w))
            .map(|w| i + w.len())
            .filter(|&j| j < bytes.len() && bytes[j].is_ascii_whitespace());
        let key_end = if bearer.is_some() {
            None
        } else {
            SECRET_KEYS
                .iter()
                .find(|k| lower[i..].starts_with(**k))
                .map(|k| {
                    let mut j = i + k.len();
                    while j < bytes.len() && is_ident(bytes[j]) {
                        j += 1;
                    }
                    j
                })
        };
        // Where the value starts (and the quote that ends it, if it is quoted): after `Bearer `, or after the
        // key, an optional quote, spaces, `=` or `:`, spaces.
        let value_start = bearer.map(|j| (j + 1, None)).or_else(|| {
            let mut j = key_end?;
            while j < bytes.len() && matches!(bytes[j], b'"' | b'\'') {
                j += 1;
            }
            while j < bytes.len() && bytes[j] == b' ' {
                j += 1;
            }
            if j >= bytes.len() || !matches!(bytes[j], b'=' | b':') {
                return None;
            }
            j += 1;
            while j < bytes.len() && bytes[j] == b' ' {
                j += 1;
            }
            let quote = bytes.get(j).copied().filter(|b| matches!(b, b'"' | b'\''));
            j += usize::from(quote.is_some());
            // `Authorization: Bearer x`: the scheme stays, its value goes.
            let scheme = ["bearer ", "basic "]
                .iter()
                .find(|w| lower[j..].starts_with(**w));
            Some((j + scheme.map_or(0, |w| w.len()), quote))
        });
        let Some((start, quote)) = value_start else {
            i += 1;
            while i < bytes.len() && !text.is_char_boundary(i) {
                i += 1;
            }
            continue;
        };
        let mut end = start;
        while end < bytes.len()
            && match quote {
                Some(q) => bytes[end] != q,
                None => !is_value_end(bytes[end]),
            }
        {
            end += 1;
        }
        if end > start {
            out.push_str(&text[copied..start]);
            out.push_str(REDACTED);
            copied = end;
        }
        i = end.max(i + 1);
        while i < bytes.len() && !text.is_char_boundary(i) {
            i += 1;
        }
    }
    out.push_str(&text[copied..]);
    out
}

fn redact_words(text: &str) -> String {
    let in_word =
        |c: char| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=' | '_' | '-' | '.' | '~');
    let mut out = String::with_capacity(text.len());
    let mut word_start = None;
    for (i, c) in text.char_indices().chain([(text.len(), ' ')]) {
        match (in_word(c) && i < text.len(), word_start) {
            (true, None) => word_start = Some(i),
            (false, Some(start)) => {
                let word = &text[start..i];
                out.push_str(if looks_secret(word) { REDACTED } else { word });
                word_start = None;
                if i < text.len() {
                    out.push(c);
                }
            }
            (false, None) if i < text.len() => out.push(c),
            _ => {}
        }
    }
    out
}

fn looks_secret(word: &str) -> bool {
    let b64 = |s: &str| {
        s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=' | '_' | '-'))
    };
    let segments: Vec<&str> = word.split('.').collect();
    let jwt = segments.len() >= 2
        && word.starts_with("eyJ")
        && segments.iter().all(|s| b64(s))
        && word.len() >= 16;
    let hex = word.len() >= 32 && word.chars().all(|c| c.is_ascii_hexdigit());
    let mixed = |s: &str| {
        s.len() >= 32
            && b64(s)
            && s.chars().any(|c| c.is_ascii_uppercase())
            && s.chars().any(|c| c.is_ascii_lowercase())
            && s.chars().any(|c| c.is_ascii_digit())
    };
    let aws_key = (word.starts_with("AKIA") || word.starts_with("ASIA"))
        && word.len() == 20
        && word
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit());
    jwt || hex
        || aws_key
        || word.split(['.', '~']).any(mixed)
        || word
            .split(['.', '~', '/', '-', '_'])
            .any(|s| s.len() >= 32 && s.chars().all(|c| c.is_ascii_hexdigit()))
}

/// The `status` of an ExecCredential.
#[derive(Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecCredentialStatus {
    /// Bearer token.
    #[serde(default)]
    pub token: Option<String>,
    /// PEM client certificate.
    #[serde(default)]
    pub client_certificate_data: Option<String>,
    /// PEM client key.
    #[serde(default)]
    pub client_key_data: Option<String>,
    /// RFC 3339 expiry.
    #[serde(default)]
    pub expiration_timestamp: Option<String>,
}

impl std::fmt::Debug for ExecCredentialStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecCredentialStatus")
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field(
                "client_certificate_data",
                &self.client_certificate_data.is_some(),
            )
            .field(
                "client_key_data",
                &self.client_key_data.as_ref().map(|_| "<redacted>"),
            )
            .field("expiration_timestamp", &self.expiration_timestamp)
            .finish()
    }
}

/// Parses a plugin's stdout. Errors never quote the output.
pub fn parse_exec_credential(
    stdout: &[u8],
    expected_api_version: &str,
) -> Result<ExecCredentialStatus, ExecError> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Cred {
        api_version: Option<String>,
        kind: Option<String>,
        status: Option<ExecCredentialStatus>,
    }
    let cred: Cred = serde_json::from_slice(stdout).map_err(|_| ExecError::NotExecCredential)?;
    if cred.kind.as_deref() != Some("ExecCredential") {
        return Err(ExecError::WrongKind);
    }
    if cred.api_version.as_deref() != Some(expected_api_version) {
        return Err(ExecError::WrongApiVersion {
            got: shown(&cred.api_version.unwrap_or_default()),
            expected: expected_api_version.into(),
        });
    }
    let status = cred.status.ok_or(ExecError::NoStatus)?;
    let has_token = status.token.as_deref().is_some_and(|t| !t.is_empty());
    let has_cert = status.client_certificate_data.is_some() && status.client_key_data.is_some();
    if !has_token && !has_cert {
        return Err(ExecError::NoCredential);
    }
    if let Some(ts) = &status.expiration_timestamp
        && ts.parse::<jiff::Timestamp>().is_err()
    {
        return Err(ExecError::BadExpiry);
    }
    Ok(status)
}

/// A static kubeconfig for `cluster` (the profile's access provider entry) authenticated with the plugin's
/// credential, written like every kubeconfig the bridge writes (`crate::bridge::kubeconfig::canonical`) and read
/// back through the same checks, so a value no reader agrees on (a control character in the server address, a CA
/// that is not base64 PEM) is that cluster's error.
pub fn static_kubeconfig(
    cluster: &KubeconfigCluster,
    cred: &ExecCredentialStatus,
) -> Result<Vec<u8>, crate::bridge::kubeconfig::ConnectionError> {
    use crate::bridge::kubeconfig::{Connection, KubeconfigPolicy, canonical};
    let mut c = Connection {
        host: cluster.server.clone(),
        tls_server_name: cluster.tls_server_name.clone(),
        proxy_url: cluster.proxy_url.clone(),
        insecure: cluster.insecure_skip_tls_verify == Some(true),
        ..Default::default()
    };
    if let Some(t) = cred.token.as_deref().filter(|t| !t.is_empty()) {
        c.token = Some(t.to_string());
    } else if let (Some(cert), Some(key)) = (&cred.client_certificate_data, &cred.client_key_data) {
        c.client_certificate = Some(cert.clone());
        c.client_key = Some(key.clone());
    }
    // The CA arrives base64-encoded; written through the Connection, it is decoded and checked by the read-back.
    let mut doc = c.to_kubeconfig();
    if let Some(ca) = &cluster.certificate_authority_data {
        let mut v: serde_json::Value = serde_json::from_slice(&doc).expect("we wrote JSON");
        v["clusters"][0]["cluster"]["certificate-authority-data"] = ca.clone().into();
        doc = serde_json::to_vec(&v).expect("JSON serializes");
    }
    canonical(&doc, &KubeconfigPolicy::default(), None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::NamedExtension;

    /// A scope for every namespace allowing these profile variables.
    fn scope(profile_env: &[&str]) -> ExecScope {
        ExecScope {
            namespaces: NamespaceScope::Any,
            servers: ServerAllowList::default(),
            profile_env: profile_env.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn file() -> ProvidersFile {
        ProvidersFile::parse(
            br#"{"providers":[{"name":"tok","execConfig":{"apiVersion":"client.authentication.k8s.io/v1","command":"/usr/bin/get-token","args":["--a"],"env":[{"name":"X","value":"1"}],"provideClusterInfo":true},
            "profileSourcedCLIArgsPolicy":"Append","profileSourcedEnvVarsPolicy":"AppendIfNotExists"}]}"#,
        )
        .unwrap()
        .scoped(&BTreeMap::from([(
            "tok".to_string(),
            scope(&["X", "Y", "OK", "AUDIENCE", "region_1"]),
        )]))
    }

    /// The runner's environment sets nothing.
    fn bare(_: &str) -> bool {
        false
    }

    /// The providers file of upstream's `examples/controller-example/plugins/secretreader`, as written there.
    const UPSTREAM_SECRETREADER_FILE: &str = r#"{
  "providers": [
    {
      "name": "secretreader",
      "execConfig": {
        "apiVersion": "client.authentication.k8s.io/v1",
        "args": null,
        "command": "./bin/secretreader-plugin",
        "env": null,
        "provideClusterInfo": true
      }
    }
  ]
}
"#;

    #[test]
    fn the_upstream_example_providers_file_is_accepted() {
        let f = ProvidersFile::parse(UPSTREAM_SECRETREADER_FILE.as_bytes()).unwrap();
        let p = f.get("secretreader").unwrap();
        assert_eq!(p.exec_config.command, "./bin/secretreader-plugin");
        assert_eq!(p.exec_config.api_version, "client.authentication.k8s.io/v1");
        assert!(p.exec_config.args.is_empty() && p.exec_config.env.is_empty());
        assert!(p.exec_config.provide_cluster_info);
        assert_eq!(
            p.scope, None,
            "no profile may use it until the operator scopes it"
        );
        let other = UPSTREAM_SECRETREADER_FILE
            .replace("\"secretreader\"", "\"kubeconfig-secretreader\"")
            .replace("secretreader-plugin", "kubeconfig-secretreader-plugin");
        ProvidersFile::parse(other.as_bytes()).unwrap();
    }

    #[test]
    fn null_is_absent_and_every_exec_config_member_is_accepted() {
        let f = ProvidersFile::parse(
            br#"{"providers":[{"name":"p","execConfig":{"apiVersion":"client.authentication.k8s.io/v1","command":"c",
            "args":null,"env":[{"name":"A","value":null}],"installHint":null,"interactiveMode":null,"provideClusterInfo":null},
            "profileSourcedCLIArgsPolicy":null,"profileSourcedEnvVarsPolicy":null},
            {"name":"q","execConfig":{"apiVersion":"client.authentication.k8s.io/v1beta1","command":"d","args":["x"],
            "env":[{"name":"B","value":"2"}],"installHint":"apt install d","interactiveMode":"IfAvailable","provideClusterInfo":false}}]}"#,
        )
        .unwrap();
        let p = &f.providers[0];
        assert!(!p.exec_config.provide_cluster_info && p.exec_config.args.is_empty());
        assert_eq!(p.exec_config.env[0].value, "");
        assert_eq!(p.exec_config.install_hint, None);
        assert_eq!(p.profile_sourced_env_vars_policy, None);
        let q = &f.providers[1];
        assert_eq!(q.exec_config.install_hint.as_deref(), Some("apt install d"));
        assert_eq!(
            q.exec_config.interactive_mode.as_deref(),
            Some("IfAvailable")
        );
        assert_eq!(
            ProvidersFile::parse(br#"{"providers":null}"#).unwrap(),
            ProvidersFile::default()
        );
    }

    #[test]
    fn unknown_members_are_refused_at_every_level() {
        let exec = r#""execConfig":{"apiVersion":"v","command":"c""#;
        for (json, member) in [
            (r#"{"providers":[],"extra":1}"#.to_string(), "extra"),
            (
                format!(r#"{{"providers":[{{"name":"p",{exec}}},"nmae":"x"}}]}}"#),
                "nmae",
            ),
            (
                format!(r#"{{"providers":[{{"name":"p",{exec},"comand":"x"}}}}]}}"#),
                "comand",
            ),
            (
                format!(
                    r#"{{"providers":[{{"name":"p",{exec},"env":[{{"name":"A","value":"1","valueFrom":"s"}}]}}}}]}}"#
                ),
                "valueFrom",
            ),
            (
                format!(r#"{{"providers":[{{"name":"p",{exec},"config":{{}}}}}}]}}"#),
                "config",
            ),
        ] {
            let e = ProvidersFile::parse(json.as_bytes()).unwrap_err();
            assert!(
                matches!(&e, ExecError::ProvidersFileUnknownMember { member: m, .. } if m == member),
                "{json}: {e:?}"
            );
            assert!(e.to_string().contains(member), "{e}");
        }
        // Other syntax errors give the position only: values may be secrets.
        let e = ProvidersFile::parse(br#"{"providers":[{"name":"p","execConfig":{"apiVersion":"v","command":"c","env":[{"name":"A","value":1234}]}}]}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 1") && !e.contains("1234"), "{e}");
        let e = ProvidersFile::parse(br#"{"providers":[{"name":"p","execConfig":{"apiVersion":"v","command":"c","env":[{"name":"A=B","value":"1"}]}}]}"#)
            .unwrap_err();
        assert!(matches!(e, ExecError::BadFileEnvName { .. }), "{e:?}");
    }

    fn provider() -> AccessProvider {
        AccessProvider {
            name: "tok".into(),
            cluster: Some(KubeconfigCluster {
                server: "https://10.0.0.1:6443".into(),
                certificate_authority_data: Some("Q0E=".into()),
                extensions: vec![
                    NamedExtension {
                        name: keys::ADDITIONAL_ARGS_EXTENSION.into(),
                        extension: serde_json::json!(["--cluster", "c1"]),
                    },
                    NamedExtension {
                        name: keys::ADDITIONAL_ENVS_EXTENSION.into(),
                        extension: serde_json::json!({"X": "2", "Y": "3"}),
                    },
                    NamedExtension {
                        name: keys::EXEC_EXTENSION.into(),
                        extension: serde_json::json!({"audience": "a"}),
                    },
                ],
                ..Default::default()
            }),
        }
    }

    #[test]
    fn invocation_applies_policies_and_cluster_info() {
        let inv = invocation_in(file().get("tok").unwrap(), &provider(), &bare).unwrap();
        assert_eq!(inv.args, ["--a", "--cluster", "c1"]);
        assert_eq!(
            inv.env,
            [("X".into(), "1".into()), ("Y".into(), "3".into())]
        );
        let info: serde_json::Value = serde_json::from_str(&inv.exec_info).unwrap();
        assert_eq!(info["spec"]["cluster"]["server"], "https://10.0.0.1:6443");
        assert_eq!(info["spec"]["cluster"]["config"]["audience"], "a");
        assert_eq!(info["spec"]["interactive"], false);
    }

    #[test]
    fn replace_and_ignore_policies() {
        let mut f = file();
        f.providers[0].profile_sourced_env_vars_policy = Some("Replace".into());
        f.providers[0].profile_sourced_cli_args_policy = None;
        let inv = invocation_in(&f.providers[0], &provider(), &bare).unwrap();
        assert_eq!(inv.args, ["--a"]);
        assert_eq!(
            inv.env,
            [("X".into(), "2".into()), ("Y".into(), "3".into())]
        );
    }

    #[test]
    fn unknown_policy_is_an_error() {
        let e = ProvidersFile::parse(
            br#"{"providers":[{"name":"p","execConfig":{"apiVersion":"v","command":"c"},"profileSourcedEnvVarsPolicy":"Sometimes"}]}"#,
        )
        .unwrap_err();
        let e = e.to_string();
        assert!(
            e.contains("Sometimes") && e.contains("profileSourcedEnvVarsPolicy"),
            "{e}"
        );
        assert!(ProvidersFile::parse(b"{").is_err());
    }

    #[test]
    fn exec_credential_to_kubeconfig() {
        let out = br#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"canary-tok","expirationTimestamp":"2030-01-01T00:00:00Z"}}"#;
        let st = parse_exec_credential(out, "client.authentication.k8s.io/v1").unwrap();
        assert!(!format!("{st:?}").contains("canary"));
        let kc = static_kubeconfig(provider().cluster.as_ref().unwrap(), &st).unwrap();
        let doc: serde_json::Value = serde_saphyr::from_slice(&kc).unwrap();
        assert_eq!(
            doc["users"][0]["user"]["token"].as_str(),
            Some("canary-tok")
        );
        assert_eq!(
            doc["clusters"][0]["cluster"]["server"].as_str(),
            Some("https://10.0.0.1:6443")
        );
        assert_eq!(
            doc["current-context"].as_str(),
            Some(crate::bridge::kubeconfig::NAME)
        );
        let facts = crate::bridge::kubeconfig::inspect(&kc, &Default::default()).unwrap();
        assert_eq!(facts.servers, ["https://10.0.0.1:6443"]);
    }

    #[test]
    fn static_kubeconfig_is_one_line_of_json() {
        let token = format!(
            "eyJ{}.{}.{}",
            "a".repeat(200),
            "b".repeat(300),
            "c".repeat(100)
        );
        let st = ExecCredentialStatus {
            token: Some(token.clone()),
            ..Default::default()
        };
        let kc = static_kubeconfig(provider().cluster.as_ref().unwrap(), &st).unwrap();
        let text = String::from_utf8(kc.clone()).unwrap();
        assert_eq!(text.lines().count(), 1, "{text}");
        let doc: serde_json::Value = serde_saphyr::from_slice(&kc).unwrap();
        assert_eq!(
            doc["users"][0]["user"]["token"].as_str(),
            Some(token.as_str())
        );
        let pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
        let st = ExecCredentialStatus {
            client_certificate_data: Some(pem.into()),
            client_key_data: Some(pem.into()),
            ..Default::default()
        };
        let kc = static_kubeconfig(provider().cluster.as_ref().unwrap(), &st).unwrap();
        crate::bridge::kubeconfig::inspect(&kc, &Default::default()).unwrap();
        let doc: serde_json::Value = serde_saphyr::from_slice(&kc).unwrap();
        let b64 = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, pem);
        assert_eq!(
            doc["users"][0]["user"]["client-key-data"].as_str(),
            Some(b64.as_str())
        );
    }

    #[test]
    fn bad_exec_output_is_rejected_without_quoting_it() {
        for out in [
            &b"not json canary"[..],
            br#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{}}"#,
            br#"{"apiVersion":"v1beta1","kind":"ExecCredential","status":{"token":"canary"}}"#,
            br#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"canary","expirationTimestamp":"tomorrow"}}"#,
        ] {
            let e = parse_exec_credential(out, "client.authentication.k8s.io/v1").unwrap_err();
            assert!(!e.to_string().contains("canary"), "{e}");
            assert!(!format!("{e:?}").contains("canary"), "{e:?}");
        }
    }

    fn with_envs(envs: serde_json::Value, policy: &str) -> Result<ExecInvocation, ExecError> {
        let mut f = file();
        f.providers[0].profile_sourced_env_vars_policy = Some(policy.into());
        let mut p = provider();
        let cluster = p.cluster.as_mut().unwrap();
        cluster.extensions[1].extension = envs;
        invocation_in(&f.providers[0], &p, &bare)
    }

    #[test]
    fn profile_env_needs_the_operators_allowlist() {
        // Not listed in profile_env: refused, naming the variable and the attribute, whatever the policy.
        for policy in ["AppendIfNotExists", "Replace"] {
            let e = with_envs(
                serde_json::json!({ "OK": "1", "AWS_PROFILE": "admin" }),
                policy,
            )
            .unwrap_err();
            assert!(matches!(e, ExecError::EnvNotAllowed { .. }), "{e:?}");
            let e = e.to_string();
            assert!(
                e.contains("AWS_PROFILE")
                    && e.contains(r#"credentials.exec_providers["tok"].profile_env"#)
                    && e.contains("no plugin was run"),
                "{e}"
            );
        }
        // A provider without a scope (not in exec_providers) admits no profile variable at all.
        let mut f = file();
        f.providers[0].scope = None;
        let e = invocation_in(&f.providers[0], &provider(), &bare).unwrap_err();
        assert!(matches!(e, ExecError::EnvNotAllowed { .. }), "{e:?}");
        // Under Ignore the extension is not read, so nothing is refused.
        f.providers[0].profile_sourced_env_vars_policy = None;
        invocation_in(&f.providers[0], &provider(), &bare).unwrap();
    }

    #[test]
    fn append_if_not_exists_never_overrides_the_file_or_the_runner() {
        let envs = serde_json::json!({ "X": "profile", "OK": "profile", "AUDIENCE": "profile" });
        let mut f = file();
        f.providers[0].profile_sourced_env_vars_policy = Some("AppendIfNotExists".into());
        let mut p = provider();
        p.cluster.as_mut().unwrap().extensions[1].extension = envs.clone();
        // The runner's environment sets OK: the plugin inherits the runner's value.
        let inv = invocation_in(&f.providers[0], &p, &|n| n == "OK").unwrap();
        assert_eq!(
            inv.env,
            [
                ("X".into(), "1".into()),
                ("AUDIENCE".into(), "profile".into())
            ]
        );
        // Replace replaces the providers file's value (upstream's meaning), for listed variables only.
        f.providers[0].profile_sourced_env_vars_policy = Some("Replace".into());
        let inv = invocation_in(&f.providers[0], &p, &|n| n == "OK").unwrap();
        assert_eq!(
            inv.env,
            [
                ("X".into(), "profile".into()),
                ("AUDIENCE".into(), "profile".into()),
                ("OK".into(), "profile".into())
            ]
        );
    }

    #[test]
    fn profile_env_that_steers_the_plugin_is_refused() {
        for name in [
            "LD_PRELOAD",
            "ld_library_path",
            "DYLD_INSERT_LIBRARIES",
            "NODE_OPTIONS",
            "JAVA_TOOL_OPTIONS",
            "PERL5OPT",
            "PYTHONPATH",
            "RUBYOPT",
            "BASH_FUNC_x%%",
            "PATH",
            "Path",
            "HOME",
            "KUBECONFIG",
            "http_proxy",
            "HTTPS_PROXY",
            "No_Proxy",
            "all_proxy",
            "GIT_SSH_COMMAND",
            "BASH_ENV",
            "SSL_CERT_FILE",
            "",
            "A=B",
            "X\u{0}",
        ] {
            for policy in ["AppendIfNotExists", "Replace"] {
                let e = with_envs(serde_json::json!({ "OK": "1", name: "v" }), policy).unwrap_err();
                let ExecError::ForbiddenEnv {
                    name: shown_name, ..
                } = &e
                else {
                    panic!("{name}: {e:?}");
                };
                if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    assert_eq!(shown_name, name);
                }
                assert!(e.to_string().contains("no plugin was run"), "{e}");
            }
        }
        // A huge name is shortened in the message.
        let long = format!("LD_{}", "A".repeat(10_000));
        let e = with_envs(serde_json::json!({ long: "v" }), "Replace").unwrap_err();
        assert!(e.to_string().len() < 400, "{e}");
        // Under `Ignore` the extension is not read at all.
        with_envs(serde_json::json!({ "LD_PRELOAD": "/x.so" }), "Ignore").unwrap();
        // Harmless names still pass.
        let inv = with_envs(
            serde_json::json!({ "AUDIENCE": "a", "region_1": "eu" }),
            "Replace",
        )
        .unwrap();
        assert_eq!(inv.env.len(), 3);
    }

    #[test]
    fn allowed_servers_match_hosts_and_ports() {
        let list = ServerAllowList::parse(&[
            "api.example.com",
            "*.prod.example.net",
            "10.0.0.1:6443",
            "[fd00::1]",
        ])
        .unwrap();
        for ok in [
            "https://api.example.com",
            "https://API.Example.com:6443/path",
            "https://user:pw@api.example.com.:443",
            "https://a.prod.example.net",
            "https://a.b.prod.example.net:8443",
            "https://10.0.0.1:6443",
            "https://[fd00::1]:6443",
        ] {
            assert!(list.allows(ok), "{ok}");
            list.check(ok).unwrap();
        }
        for bad in [
            "https://api.example.com.evil.io",
            "https://evilapi.example.com",
            "https://prod.example.net",
            "https://aprod.example.net",
            "https://10.0.0.1",
            "https://10.0.0.1:443",
            "https://api.example.com@evil.io",
            "ftp://api.example.com",
            "api.example.com",
            "https://",
            "https://[fd00::2]",
        ] {
            assert!(!list.allows(bad), "{bad}");
            let e = list.check(bad).unwrap_err();
            assert!(matches!(e, ExecError::ServerNotAllowed { .. }), "{e:?}");
        }
        assert!(
            ServerAllowList::parse::<&str>(&[])
                .unwrap()
                .allows("https://anything")
        );
        for bad in ["", "*.", "a/b", "*.a:b:c", "host:notaport", "**.x", "a b"] {
            assert!(ServerAllowList::parse(&[bad]).is_err(), "{bad}");
        }
        let e = list.check("https://evil.io:1/x").unwrap_err().to_string();
        assert!(
            e.contains("evil.io") && e.contains("exec_allowed_servers"),
            "{e}"
        );
    }

    #[test]
    fn debug_output_redacts_secrets() {
        const CANARY: &str = "canary-5e1";
        let f = ProvidersFile::parse(
            format!(r#"{{"providers":[{{"name":"p","execConfig":{{"apiVersion":"v","command":"c","args":["--token={CANARY}"],"env":[{{"name":"SECRET","value":"{CANARY}"}}]}}}}]}}"#)
                .as_bytes(),
        )
        .unwrap();
        let mut p = provider();
        p.cluster.as_mut().unwrap().extensions[2].extension =
            serde_json::json!({ "secret": CANARY });
        let mut entry = f.providers[0].clone();
        entry.exec_config.provide_cluster_info = true;
        let inv = invocation_in(&entry, &p, &bare).unwrap();
        assert!(inv.exec_info.contains(CANARY));
        let status = ExecCredentialStatus {
            token: Some(CANARY.into()),
            client_key_data: Some(CANARY.into()),
            ..Default::default()
        };
        for shown in [
            format!("{f:?}"),
            format!("{entry:?}"),
            format!("{:?}", entry.exec_config.env[0]),
            format!("{inv:?}"),
            format!("{status:?}"),
        ] {
            assert!(!shown.contains(CANARY), "{shown}");
        }
        assert!(format!("{inv:?}").contains("SECRET"));
    }

    #[test]
    fn redaction_removes_credentials_and_keeps_prose() {
        let jwt =
            "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJzdWIiOiJzeXN0ZW06c2EifQ.c2lnbmF0dXJlLWNhbmFyeQ";
        let text = format!(
            "error: login failed for user admin\n\
             token=tok-canary-1 password: \"pw canary\"\n\
             Authorization: Bearer bearer-canary-2\n\
             got {jwt}\n\
             key 0123456789abcdef0123456789abcdef01\n\
             b64 QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0MTIzNDU2Nzg5\n\
             aws AKIAABCDEFGHIJKLMNOP\n\
             -----BEGIN RSA PRIVATE KEY-----\nMIIEcanary3\n-----END RSA PRIVATE KEY-----\n\
             client_secret=\"s3cr3t-canary-4\" done\x1b[31m\n\
             see /usr/local/bin/kubelogin --help"
        );
        let r = redact_secrets(&text);
        for gone in [
            "tok-canary-1",
            "canary\"",
            "bearer-canary-2",
            "eyJ",
            "0123456789abcdef",
            "QUJDREVG",
            "AKIAABCD",
            "MIIEcanary3",
            "s3cr3t-canary-4",
            "\x1b",
        ] {
            assert!(!r.contains(gone), "{gone} in {r}");
        }
        for kept in [
            "error: login failed for user admin",
            "<redacted PEM block>",
            "done",
            "see /usr/local/bin/kubelogin --help",
        ] {
            assert!(r.contains(kept), "{kept} missing from {r}");
        }
        assert_eq!(
            redact_secrets("plain words, no secret"),
            "plain words, no secret"
        );
        assert_eq!(
            redact_secrets("héllo token=wörld ü"),
            "héllo token=<redacted> ü"
        );
        assert_eq!(
            redact_secrets("-----BEGIN CERT\nabc"),
            "<redacted PEM block>"
        );
    }
}
