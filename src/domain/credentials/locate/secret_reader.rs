//! The Secret a `kubeconfig-secretreader` access provider names, checked before anything is requested: a name,
//! key, namespace and context that are valid, in a namespace the configuration allows.

use std::fmt;

use super::{offered::exec_extension, source::CredentialSource};
use crate::{
    api::{AccessProvider, keys},
    domain::{
        credentials::{CredentialOptions, CredentialProblem},
        exec::shown,
        names::{dns1123_label, dns1123_subdomain, secret_data_key},
    },
};

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

/// Checks one member of a `kubeconfig-secretreader` reference with `rule` (a `crate::domain::names` rule).
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
pub(super) fn secret_reader_target(
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
