//! Exec-plugin access providers (KEP-4322 providers file, KEP-541 ExecCredential, KEP-5339 extensions):
//! what to run for a profile, and how to turn the plugin's answer into a static kubeconfig.
//! Running the plugin is IO and lives in `crate::k8s`; everything here is pure.
//!
//! `providers_file` reads and scopes the operator's providers file; `invocation` builds one plugin run for a
//! profile (with the policy on what a profile may add); `allow_list` matches a profile's server against the
//! operator's host patterns; `credential` reads the plugin's ExecCredential and writes the static kubeconfig;
//! `redact` strips credentials from a plugin's stderr before it reaches a diagnostic.

mod allow_list;
mod credential;
#[cfg(test)]
mod fixtures;
mod invocation;
mod providers_file;
mod redact;

use crate::api::keys;

pub use allow_list::ServerAllowList;
pub(crate) use allow_list::server_host_port;
pub use credential::{ExecCredentialStatus, parse_exec_credential, static_kubeconfig};
pub use invocation::{
    ExecInvocation, FORBIDDEN_PROFILE_ENV, MAX_PROFILE_ARGS, MAX_PROFILE_VALUE_BYTES,
    forbidden_profile_env, invocation, invocation_in,
};
pub use providers_file::{
    EnvVar, ExecConfig, ExecScope, NamespaceScope, ProviderEntry, ProvidersFile,
};
pub use redact::{REDACTED, redact_secrets};

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
    /// The additional-args extension is not a list of strings (the upstream ClusterProfile CRD stores an object
    /// there, never a list: the message says where per-cluster values go instead).
    #[error(
        "extension {} must be a list of strings, which the upstream ClusterProfile CRD cannot store (it stores \
         objects only); give per-cluster values in extension {}, which a plugin with provideClusterInfo reads as \
         spec.cluster.config",
        keys::ADDITIONAL_ARGS_EXTENSION,
        keys::EXEC_EXTENSION
    )]
    BadAdditionalArgs,
    /// The additional-envs extension is not a map of strings.
    #[error(
        "extension {} must be a map of strings",
        keys::ADDITIONAL_ENVS_EXTENSION
    )]
    BadAdditionalEnvs,
    /// What a profile adds through a KEP-5339 extension is past the bridge's bounds (too many arguments, a value
    /// too long or holding NUL). No value is quoted.
    #[error("extension {extension} {what}; no plugin was run")]
    ProfileValueRefused {
        /// The extension's name.
        extension: &'static str,
        /// What is wrong, in counts and sizes.
        what: String,
    },
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

#[cfg(test)]
mod tests;
