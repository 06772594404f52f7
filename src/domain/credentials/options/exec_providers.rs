//! The check of `credentials.exec_providers`: each entry becomes the [`ExecScope`] of its provider.

use std::collections::{BTreeMap, BTreeSet};

use super::{
    checks::server_pattern,
    written::{CredentialsConfig, ExecProviderConfig},
};
use crate::domain::{
    exec::{ExecScope, NamespaceScope, ServerAllowList, forbidden_profile_env},
    names::dns1123_label,
    problem::{Problem, Step},
};

/// The summary of every problem of `exec_providers`.
const SUMMARY: &str = "Invalid credentials.exec_providers";

impl CredentialsConfig {
    /// `exec_providers`, each entry checked (an entry with a problem is left out: the block is refused anyway).
    pub(super) fn checked_exec_providers(
        &self,
        problems: &mut Vec<Problem>,
    ) -> BTreeMap<String, ExecScope> {
        let mut out = BTreeMap::new();
        for (provider, entry) in self.exec_providers.iter().flatten() {
            let before = problems.len();
            let at = EntryPath(provider);
            if provider.is_empty() || provider.len() > 253 {
                problems.push(Problem::error(
                    at.key(),
                    SUMMARY,
                    "The key is the name of a provider of the providers file (1 to 253 characters).",
                ));
            }
            let namespaces = namespace_scope(entry, &at, problems);
            check_servers(entry, &at, problems);
            let profile_env = profile_env(entry, &at, problems);
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

/// The paths of one entry of `exec_providers`, by the provider's name.
struct EntryPath<'a>(&'a String);

impl EntryPath<'_> {
    /// The entry itself (its key).
    fn key(&self) -> Vec<Step> {
        vec![
            Step::Attr("credentials"),
            Step::Attr("exec_providers"),
            Step::Key(self.0.clone()),
        ]
    }

    /// Its attribute `attr`, or element `i` of it.
    fn at(&self, attr: &'static str, i: Option<usize>) -> Vec<Step> {
        let mut p = self.key();
        p.push(Step::Attr(attr));
        p.extend(i.map(Step::Index));
        p
    }
}

/// The entry's `namespaces`: required, each a namespace name, or `["*"]` alone for every namespace.
fn namespace_scope(
    entry: &ExecProviderConfig,
    at: &EntryPath<'_>,
    problems: &mut Vec<Problem>,
) -> NamespaceScope {
    match entry.namespaces.as_deref() {
        None | Some([]) => {
            problems.push(Problem::error(
                at.at("namespaces", None),
                SUMMARY,
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
                    Some(why) => {
                        problems.push(Problem::error(at.at("namespaces", Some(i)), SUMMARY, why));
                    }
                    None => {
                        set.insert(ns.clone());
                    }
                }
            }
            NamespaceScope::Only(set)
        }
    }
}

/// Checks the entry's `servers`, each a host pattern.
fn check_servers(entry: &ExecProviderConfig, at: &EntryPath<'_>, problems: &mut Vec<Problem>) {
    for (i, p) in entry.servers.iter().flatten().enumerate() {
        if let Err(e) = server_pattern(p) {
            problems.push(Problem::error(
                at.at("servers", Some(i)),
                SUMMARY,
                format!("Element {i}: {e}."),
            ));
        }
    }
}

/// The entry's `profile_env`: the variables a ClusterProfile may set, none of those it may never set.
fn profile_env(
    entry: &ExecProviderConfig,
    at: &EntryPath<'_>,
    problems: &mut Vec<Problem>,
) -> BTreeSet<String> {
    let mut profile_env = BTreeSet::new();
    for (i, name) in entry.profile_env.iter().flatten().enumerate() {
        match forbidden_profile_env(name) {
            Some(rule) => problems.push(Problem::error(
                at.at("profile_env", Some(i)),
                SUMMARY,
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
    profile_env
}
