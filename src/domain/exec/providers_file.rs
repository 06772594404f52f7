//! The operator's providers file (KEP-4322) and the scope `credentials.exec_providers` puts on each provider.

use std::{collections::BTreeMap, fmt};

use serde::Deserialize;

use super::{ExecError, ServerAllowList, shown};

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
            p.validate(index, &mut seen)?;
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

impl ProviderEntry {
    /// Checks one provider of the file (at `index`): env names an environment can hold, a name not in `seen`
    /// (then added), a command, and known policy values.
    fn validate<'a>(
        &'a self,
        index: usize,
        seen: &mut std::collections::BTreeSet<&'a str>,
    ) -> Result<(), ExecError> {
        let name = || self.name.clone();
        if let Some(env) = self
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
        if !seen.insert(&self.name) {
            return Err(ExecError::DuplicateProvider {
                index,
                name: name(),
            });
        }
        if self.exec_config.command.is_empty() {
            return Err(ExecError::EmptyCommand {
                index,
                name: name(),
            });
        }
        if let Some(v) = &self.profile_sourced_cli_args_policy
            && !matches!(v.as_str(), "Append" | "Ignore")
        {
            return Err(ExecError::UnknownArgsPolicy {
                index,
                name: name(),
                value: v.clone(),
            });
        }
        if let Some(v) = &self.profile_sourced_env_vars_policy
            && !matches!(v.as_str(), "AppendIfNotExists" | "Replace" | "Ignore")
        {
            return Err(ExecError::UnknownEnvPolicy {
                index,
                name: name(),
                value: v.clone(),
            });
        }
        Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
