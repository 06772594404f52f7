//! One plugin run for one profile: the providers file's command, arguments and environment, what the profile may
//! add to them (KEP-5339 extensions, under the provider's policies and the operator's allow list), and the
//! `KUBERNETES_EXEC_INFO` the plugin reads.

use std::{collections::BTreeMap, fmt};

use super::{ExecError, ProviderEntry, shown};
use crate::api::{AccessProvider, KubeconfigCluster, keys};
use crate::domain::credentials::exec_extension;

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
/// policy of the providers file) must be listed in the provider's `profile_env` (its [`ExecScope`](super::ExecScope)) and must not
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
        args.extend(profile_args(extra)?);
    }
    let (env, if_unset) = environment(entry, ext(keys::ADDITIONAL_ENVS_EXTENSION), runner_sets)?;
    Ok(ExecInvocation {
        provider: entry.name.clone(),
        command: entry.exec_config.command.clone(),
        args,
        env,
        if_unset,
        exec_info: exec_info(entry, provider, cluster),
        install_hint: entry.exec_config.install_hint.clone(),
        api_version: entry.exec_config.api_version.clone(),
    })
}

/// The most arguments a profile may add through the KEP-5339 additional-args extension.
pub const MAX_PROFILE_ARGS: usize = 64;

/// The longest argument or environment variable value a profile may add through a KEP-5339 extension, in bytes.
pub const MAX_PROFILE_VALUE_BYTES: usize = 4096;

/// The arguments a profile adds (the additional-args extension, read under `Append`): a list of strings, as the
/// upstream access library reads it, within [`MAX_PROFILE_ARGS`] and [`MAX_PROFILE_VALUE_BYTES`]. Anything else
/// (an object, the only shape the upstream ClusterProfile CRD stores there) is refused, as upstream refuses it.
fn profile_args(extra: &serde_json::Value) -> Result<Vec<String>, ExecError> {
    let list = extra.as_array().ok_or(ExecError::BadAdditionalArgs)?;
    if list.len() > MAX_PROFILE_ARGS {
        return Err(ExecError::ProfileValueRefused {
            extension: keys::ADDITIONAL_ARGS_EXTENSION,
            what: format!(
                "holds {} arguments, more than {MAX_PROFILE_ARGS}",
                list.len()
            ),
        });
    }
    list.iter()
        .map(|v| {
            let arg = v.as_str().ok_or(ExecError::BadAdditionalArgs)?;
            bounded_value(keys::ADDITIONAL_ARGS_EXTENSION, arg)?;
            Ok(arg.to_string())
        })
        .collect()
}

/// `value`, added by a profile through `extension`, is passable to a plugin: no NUL byte (no argument or
/// environment can hold one) and at most [`MAX_PROFILE_VALUE_BYTES`]. The value is never quoted.
fn bounded_value(extension: &'static str, value: &str) -> Result<(), ExecError> {
    let what = if value.contains('\0') {
        "holds a value with a NUL byte".to_string()
    } else if value.len() > MAX_PROFILE_VALUE_BYTES {
        format!(
            "holds a value of {} bytes, more than {MAX_PROFILE_VALUE_BYTES}",
            value.len()
        )
    } else {
        return Ok(());
    };
    Err(ExecError::ProfileValueRefused { extension, what })
}

/// What [`environment`] returns: the additions, and those of them added under `AppendIfNotExists`.
type Environment = (Vec<(String, String)>, std::collections::BTreeSet<String>);

/// The plugin's environment additions: the providers file's `env`, then what the profile's additional-envs
/// extension (`extra`) may add under the provider's `profileSourcedEnvVarsPolicy` (see [`invocation_in`]).
fn environment(
    entry: &ProviderEntry,
    extra: Option<&serde_json::Value>,
    runner_sets: &dyn Fn(&str) -> bool,
) -> Result<Environment, ExecError> {
    let mut if_unset = std::collections::BTreeSet::new();
    let mut env: Vec<(String, String)> = entry
        .exec_config
        .env
        .iter()
        .map(|e| (e.name.clone(), e.value.clone()))
        .collect();
    let policy = entry
        .profile_sourced_env_vars_policy
        .as_deref()
        .unwrap_or("Ignore");
    let Some(extra) = extra.filter(|_| policy != "Ignore") else {
        return Ok((env, if_unset));
    };
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
    for value in extra.values() {
        bounded_value(keys::ADDITIONAL_ENVS_EXTENSION, value)?;
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
    Ok((env, if_unset))
}

/// The `KUBERNETES_EXEC_INFO` value: a non-interactive ExecCredential request, with the profile's cluster entry
/// when the providers file sets `provideClusterInfo`.
fn exec_info(
    entry: &ProviderEntry,
    provider: &AccessProvider,
    cluster: &KubeconfigCluster,
) -> String {
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
    serde_json::json!({
        "apiVersion": entry.exec_config.api_version,
        "kind": "ExecCredential",
        "spec": spec,
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::exec::fixtures::*;

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

    fn with_args(args: serde_json::Value) -> Result<ExecInvocation, ExecError> {
        let mut p = provider();
        p.cluster.as_mut().unwrap().extensions[0].extension = args;
        invocation_in(file().get("tok").unwrap(), &p, &bare)
    }

    #[test]
    fn profile_args_are_a_bounded_list_and_an_object_is_refused() {
        // The list upstream's library reads, appended once.
        let inv = with_args(serde_json::json!(["--region", "eu"])).unwrap();
        assert_eq!(inv.args, ["--a", "--region", "eu"]);
        let at_most = vec!["x".repeat(MAX_PROFILE_VALUE_BYTES); MAX_PROFILE_ARGS];
        assert_eq!(
            with_args(serde_json::json!(at_most)).unwrap().args.len(),
            MAX_PROFILE_ARGS + 1
        );
        // An object (what the upstream CRD stores) or a list holding anything but strings: refused, pointing
        // at the exec extension.
        for bad in [
            serde_json::json!({"args": ["--region", "eu"]}),
            serde_json::json!(["--region", 1]),
            serde_json::json!("--region eu"),
        ] {
            let e = with_args(bad.clone()).unwrap_err();
            assert!(matches!(e, ExecError::BadAdditionalArgs), "{bad}: {e:?}");
            assert!(
                e.to_string().contains(keys::EXEC_EXTENSION)
                    && e.to_string().contains("spec.cluster.config"),
                "{e}"
            );
        }
        // Past the bounds: refused, in counts and sizes, never quoting a value.
        let secret = "canary-arg";
        for bad in [
            serde_json::json!(vec![secret; MAX_PROFILE_ARGS + 1]),
            serde_json::json!([format!("{secret}{}", "x".repeat(MAX_PROFILE_VALUE_BYTES))]),
            serde_json::json!([format!("{secret}\u{0}")]),
        ] {
            let e = with_args(bad).unwrap_err();
            assert!(matches!(e, ExecError::ProfileValueRefused { .. }), "{e:?}");
            let e = e.to_string();
            assert!(
                e.contains(keys::ADDITIONAL_ARGS_EXTENSION)
                    && e.contains("no plugin was run")
                    && !e.contains(secret),
                "{e}"
            );
        }
    }

    #[test]
    fn profile_env_values_are_bounded() {
        for value in [
            format!("canary-env{}", "x".repeat(MAX_PROFILE_VALUE_BYTES)),
            "canary-env\u{0}".to_string(),
        ] {
            let e = with_envs(serde_json::json!({ "OK": value }), "Replace").unwrap_err();
            assert!(matches!(e, ExecError::ProfileValueRefused { .. }), "{e:?}");
            assert!(
                e.to_string().contains(keys::ADDITIONAL_ENVS_EXTENSION)
                    && !e.to_string().contains("canary-env"),
                "{e}"
            );
        }
        let inv = with_envs(
            serde_json::json!({ "OK": "x".repeat(MAX_PROFILE_VALUE_BYTES) }),
            "Replace",
        )
        .unwrap();
        assert!(inv.env.iter().any(|(k, _)| k == "OK"));
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
}
