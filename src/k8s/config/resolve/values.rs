//! Checks of single values: the exec plugin settings, the host, the proxy URL, the token.

use std::collections::HashMap;

use kube::config::{ExecConfig, ExecInteractiveMode};

use super::super::errors::ConfigError;
use super::super::settings::*;

pub(crate) fn exec_config(exec: &ExecSettings) -> Result<ExecConfig, ConfigError> {
    let api_version = exec.api_version.trim();
    if api_version.is_empty() {
        return Err(ConfigError::ExecMissingField {
            field: "exec.api_version",
        });
    }
    if exec.command.trim().is_empty() {
        return Err(ConfigError::ExecMissingField {
            field: "exec.command",
        });
    }
    let env = exec
        .env
        .iter()
        .map(|(name, value)| {
            HashMap::from([
                ("name".to_owned(), name.clone()),
                ("value".to_owned(), value.clone()),
            ])
        })
        .collect();
    Ok(ExecConfig {
        api_version: Some(api_version.to_owned()),
        command: Some(exec.command.clone()),
        args: (!exec.args.is_empty()).then(|| exec.args.clone()),
        env: (!exec.env.is_empty()).then_some(env),
        // The plugin runs under Terraform, which owns the terminal.
        interactive_mode: Some(ExecInteractiveMode::Never),
        ..ExecConfig::default()
    })
}

/// Replaces `user:password@` in a URL with a marker, for error messages.
pub(crate) fn redact_userinfo(url: &str) -> String {
    let (prefix, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (format!("{scheme}://"), rest),
        None => (String::new(), url),
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{prefix}{REDACTED}@{}", &rest[at + 1..]),
        None => url.to_owned(),
    }
}

/// The `host[:port]` of what follows `scheme://`, without any `userinfo@`.
pub(crate) fn host_part(after_scheme: &str) -> &str {
    let authority = after_scheme.split(['/', '?', '#']).next().unwrap_or("");
    authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host)
}

pub(crate) fn normalize_host(host: &str, default_tls: bool) -> Result<String, ConfigError> {
    let host = host.trim();
    let invalid = |reason: &str| ConfigError::InvalidHost {
        value: redact_userinfo(host),
        reason: reason.to_owned(),
    };
    let url = if host.contains("://") {
        host.to_owned()
    } else {
        let scheme = if default_tls { "https" } else { "http" };
        format!("{scheme}://{host}")
    };
    let (scheme, rest) = url.split_once("://").unwrap_or(("", ""));
    if !scheme.eq_ignore_ascii_case("https") && !scheme.eq_ignore_ascii_case("http") {
        return Err(invalid("the scheme must be https:// (or http://)"));
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(invalid("it contains whitespace"));
    }
    if host_part(rest).is_empty() {
        return Err(invalid("the host name is missing"));
    }
    Ok(url)
}

pub(crate) fn check_proxy_url(proxy: &str) -> Result<String, ConfigError> {
    let proxy = proxy.trim();
    let invalid = |reason: &str| ConfigError::InvalidProxyUrl {
        value: redact_userinfo(proxy),
        reason: reason.to_owned(),
    };
    let Some((scheme, rest)) = proxy.split_once("://") else {
        return Err(invalid(
            "it must be a URL with a scheme, e.g. http://proxy.example.com:3128",
        ));
    };
    match scheme.to_ascii_lowercase().as_str() {
        "http" | "https" => {}
        "socks5" | "socks5h" => {
            return Err(invalid(
                "SOCKS5 proxies are not supported by this provider; use an http:// or https:// proxy",
            ));
        }
        _ => return Err(invalid("the scheme must be http:// or https://")),
    }
    if proxy.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(invalid("it contains whitespace"));
    }
    if host_part(rest).is_empty() {
        return Err(invalid("the proxy host name is missing"));
    }
    Ok(proxy.to_owned())
}

pub(crate) fn check_token(token: &str) -> Result<String, ConfigError> {
    let token = token.trim();
    let invalid = |reason: &str| ConfigError::InvalidToken {
        reason: reason.to_owned(),
    };
    if token
        .get(..7)
        .is_some_and(|p| p.eq_ignore_ascii_case("bearer "))
    {
        return Err(invalid(
            "give the bare token, without the \"Bearer \" prefix",
        ));
    }
    if token.chars().any(|c| c.is_control() || !c.is_ascii()) {
        return Err(invalid(
            "it contains line breaks, control or non-ASCII characters; it must be a single-line bearer token",
        ));
    }
    Ok(token.to_owned())
}
