//! The checks of the `credentials` block's attributes, one per attribute (`exec_providers`: `exec_providers.rs`).

use std::{collections::BTreeSet, time::Duration};

use super::{
    validated::{SecretReaderMode, default_kubeconfig_keys},
    written::CredentialsConfig,
};
use crate::domain::{
    duration::parse_duration,
    exec::ServerAllowList,
    names::{dns1123_label, secret_data_key},
    problem::{Problem, Step},
    selector::{label_key, label_value},
};

/// The path of the attribute `attr` of the `credentials` block.
pub(super) fn path(attr: &'static str) -> Vec<Step> {
    vec![Step::Attr("credentials"), Step::Attr(attr)]
}

/// The path of element `i` of the list attribute `attr` of the `credentials` block.
pub(super) fn indexed(attr: &'static str, i: usize) -> Vec<Step> {
    vec![Step::Attr("credentials"), Step::Attr(attr), Step::Index(i)]
}

/// Checks a host pattern of `exec_allowed_servers` (the rule is `crate::domain::exec::ServerAllowList`'s).
pub fn server_pattern(p: &str) -> Result<(), crate::domain::exec::ExecError> {
    if p.len() > 260 {
        return Err(crate::domain::exec::ExecError::BadServerPattern {
            pattern: p.chars().take(64).collect(),
        });
    }
    ServerAllowList::parse(&[p]).map(|_| ())
}

/// The namespaces of the list attribute `attr`, each checked (an invalid one is left out, with an error).
pub(super) fn namespace_list(
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
    /// `secret_reader_mode` when set and one of [`SecretReaderMode::VALUES`].
    pub(super) fn checked_secret_reader_mode(
        &self,
        problems: &mut Vec<Problem>,
    ) -> Option<SecretReaderMode> {
        let mode = self.secret_reader_mode.as_ref()?;
        let parsed = SecretReaderMode::parse(mode);
        if parsed.is_none() {
            problems.push(Problem::error(
                path("secret_reader_mode"),
                "Invalid credentials.secret_reader_mode",
                format!(
                    "\"{}\" is not one of \"credential\" (the default) or \"whole_kubeconfig\".",
                    crate::domain::text::shown(mode, 64),
                ),
            ));
        }
        parsed
    }

    /// `secret_label` when set and a label key.
    pub(super) fn checked_secret_label(&self, problems: &mut Vec<Problem>) -> Option<String> {
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
    pub(super) fn checked_consumer(&self, problems: &mut Vec<Problem>) -> Option<Option<String>> {
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
    pub(super) fn checked_kubeconfig_keys(
        &self,
        problems: &mut Vec<Problem>,
    ) -> Option<Vec<String>> {
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
    pub(super) fn checked_exec_providers_file(
        &self,
        problems: &mut Vec<Problem>,
    ) -> Option<String> {
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
    pub(super) fn checked_refresh_before(&self, problems: &mut Vec<Problem>) -> Option<Duration> {
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
    pub(super) fn checked_exec_allowed_servers(
        &self,
        problems: &mut Vec<Problem>,
    ) -> ServerAllowList {
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
