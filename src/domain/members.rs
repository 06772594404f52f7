//! One member cluster seen as one. KEP-4322 lets the same member cluster appear in several inventories
//! (namespaces), and the `multicluster.x-k8s.io/inventory-member-id` label (cluster-inventory-api PR #83) says which
//! ClusterProfiles describe the same member. Registering each would make Sveltos deploy every add-on twice to one
//! cluster. This module finds such groups; the plan warns about them, or registers one per group
//! ([`DuplicateMembers`]).
//!
//! The label's value is the inventory writer's data: it is compared as an opaque, bounded string and never chooses
//! anything but which profiles are grouped; it reaches diagnostics and state only escaped and bounded.

use std::collections::BTreeMap;

use crate::{
    api::{ClusterProfile, keys},
    domain::text::shown,
};

/// The longest member id compared: a label value has at most 63 characters; a longer value is not an id.
pub const MAX_MEMBER_ID: usize = 63;
/// The longest server URL compared (a longer one is not used to match profiles).
pub const MAX_SERVER: usize = 2048;
/// How many characters of a shared server URL a diagnostic shows.
const SHOWN_SERVER: usize = 120;

/// What the bridge does with ClusterProfiles that describe one member cluster (`duplicate_members`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DuplicateMembers {
    /// Register each, with a warning naming them (default): a namespaced Sveltos `Profile` only sees the
    /// clusters of its own namespace, so which one may go is the user's decision.
    #[default]
    Warn,
    /// Register the first of each group in preference order ([`member_groups`]) and skip the others.
    RegisterOne,
}

/// How member clusters are recognised, and what happens to duplicates.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemberPolicy {
    /// What happens to duplicates.
    pub duplicates: DuplicateMembers,
    /// Also treat profiles whose access providers name the same server URL as one member
    /// (`duplicate_members_by_server`).
    pub match_server: bool,
    /// Leave out each ClusterProfile with a Cluster API `Cluster` of the same namespace and name, which Sveltos
    /// manages natively (`skip_cluster_api_clusters`).
    pub skip_cluster_api: bool,
}

/// What makes two profiles one member.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Token {
    MemberId(String),
    Server(String),
}

impl Token {
    fn describe(&self) -> String {
        match self {
            Self::MemberId(id) => format!(
                "{} \"{}\"",
                keys::INVENTORY_MEMBER_ID_LABEL,
                shown(id, MAX_MEMBER_ID)
            ),
            Self::Server(s) => format!("server \"{}\"", shown(s, SHOWN_SERVER)),
        }
    }
}

/// Two or more ClusterProfiles that describe one member cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberGroup {
    /// Profile keys (`namespace/name`) in preference order: the first is the one `register_one` keeps.
    pub keys: Vec<String>,
    /// What they share, escaped and bounded (for diagnostics and `skipped`).
    pub shared: String,
}

/// A server URL as compared: surrounding blanks and trailing slashes removed, scheme and host lowercased (the
/// path is kept as it is); `None` when empty or longer than [`MAX_SERVER`].
pub fn normalized_server(server: &str) -> Option<String> {
    let s = server.trim().trim_end_matches('/');
    if s.is_empty() || s.len() > MAX_SERVER {
        return None;
    }
    let authority_end = match s.find("://") {
        Some(i) => s[i + 3..].find('/').map_or(s.len(), |j| i + 3 + j),
        None => s.find('/').unwrap_or(s.len()),
    };
    Some(format!(
        "{}{}",
        s[..authority_end].to_ascii_lowercase(),
        &s[authority_end..]
    ))
}

/// The profile's member id: the label's value, when it is a non-empty string of at most [`MAX_MEMBER_ID`]
/// characters.
pub fn member_id(profile: &ClusterProfile) -> Option<&str> {
    let id = profile
        .metadata
        .labels
        .as_ref()?
        .get(keys::INVENTORY_MEMBER_ID_LABEL)?;
    (!id.is_empty() && id.chars().count() <= MAX_MEMBER_ID).then_some(id.as_str())
}

fn tokens(profile: &ClusterProfile, match_server: bool) -> Vec<Token> {
    let mut out: Vec<Token> = member_id(profile)
        .map(|id| Token::MemberId(id.to_string()))
        .into_iter()
        .collect();
    if match_server && let Some(status) = &profile.status {
        let servers = status
            .access_providers
            .iter()
            .chain(&status.credential_providers)
            .filter_map(|p| p.cluster.as_ref())
            .filter_map(|c| normalized_server(&c.server));
        out.extend(servers.map(Token::Server));
    }
    out.sort();
    out.dedup();
    out
}

/// The preference of a profile: its namespace's position in `namespaces` (unlisted namespaces after), then the
/// namespace, then the name.
fn preference<'a>(namespaces: &[String], p: &'a ClusterProfile) -> (usize, &'a str, &'a str) {
    let ns = p.metadata.namespace.as_deref().unwrap_or_default();
    let rank = namespaces
        .iter()
        .position(|n| n == ns)
        .unwrap_or(namespaces.len());
    (rank, ns, p.metadata.name.as_deref().unwrap_or_default())
}

/// The groups of two or more `profiles` that describe one member cluster: profiles sharing a member id (or, with
/// `match_server`, a server URL) are one member, transitively. Each group lists its keys in preference order: the
/// order of `namespaces` (the bridge's namespace list), else by namespace name, then by name. Groups are sorted by
/// their first key.
pub fn member_groups(
    profiles: &[&ClusterProfile],
    namespaces: &[String],
    match_server: bool,
) -> Vec<MemberGroup> {
    let mut parent: Vec<usize> = (0..profiles.len()).collect();
    let mut first_of: BTreeMap<Token, usize> = BTreeMap::new();
    let mut tokens_of = Vec::with_capacity(profiles.len());
    for (i, p) in profiles.iter().enumerate() {
        let ts = tokens(p, match_server);
        for t in &ts {
            match first_of.get(t) {
                Some(&j) => union(&mut parent, i, j),
                None => {
                    first_of.insert(t.clone(), i);
                }
            }
        }
        tokens_of.push(ts);
    }
    let mut members: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for i in 0..profiles.len() {
        let root = find(&mut parent, i);
        members.entry(root).or_default().push(i);
    }
    let mut groups: Vec<MemberGroup> = members
        .into_values()
        .filter(|m| m.len() > 1)
        .map(|mut m| {
            m.sort_by(|a, b| {
                preference(namespaces, profiles[*a]).cmp(&preference(namespaces, profiles[*b]))
            });
            MemberGroup {
                keys: m.iter().map(|i| profiles[*i].key()).collect(),
                shared: shared_tokens(m.iter().map(|i| &tokens_of[*i])),
            }
        })
        .collect();
    groups.sort_by(|a, b| a.keys[0].cmp(&b.keys[0]));
    groups
}

/// The tokens held by two or more members of a group, described (at most three, then a count).
fn shared_tokens<'a>(of: impl Iterator<Item = &'a Vec<Token>>) -> String {
    let mut count: BTreeMap<&Token, usize> = BTreeMap::new();
    for ts in of {
        for t in ts {
            *count.entry(t).or_default() += 1;
        }
    }
    let shared: Vec<&Token> = count
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .map(|(t, _)| t)
        .collect();
    let mut out: Vec<String> = shared.iter().take(3).map(|t| t.describe()).collect();
    if shared.len() > 3 {
        out.push(format!("and {} more", shared.len() - 3));
    }
    out.join(", ")
}

fn find(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

fn union(parent: &mut [usize], a: usize, b: usize) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    if ra != rb {
        parent[ra.max(rb)] = ra.min(rb);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::testutil::profile;

    fn with_server(mut p: ClusterProfile, server: &str) -> ClusterProfile {
        let provider: crate::api::AccessProvider = serde_json::from_value(serde_json::json!({
            "name": "p", "cluster": {"server": server}
        }))
        .unwrap();
        p.status
            .get_or_insert_with(Default::default)
            .access_providers = vec![provider];
        p
    }

    const ID: &str = keys::INVENTORY_MEMBER_ID_LABEL;

    #[test]
    fn profiles_sharing_a_member_id_are_one_member_in_preference_order() {
        let ps = [
            profile("b", "x", &[(ID, "m1")]),
            profile("a", "y", &[(ID, "m1")]),
            profile("c", "z", &[(ID, "m2")]),
            profile("d", "w", &[]),
        ];
        let refs: Vec<&ClusterProfile> = ps.iter().collect();
        let g = member_groups(&refs, &[], false);
        assert_eq!(g.len(), 1, "{g:?}");
        assert_eq!(g[0].keys, ["a/y", "b/x"], "namespace name order");
        assert!(g[0].shared.contains("\"m1\""), "{}", g[0].shared);
        // The bridge's namespace list wins over name order.
        let g = member_groups(&refs, &["c".into(), "b".into()], false);
        assert_eq!(g[0].keys, ["b/x", "a/y"]);
    }

    #[test]
    fn a_server_url_joins_profiles_only_when_enabled_and_transitively() {
        let ps = [
            with_server(
                profile("a", "x", &[(ID, "m1")]),
                "https://API.example.com:6443/",
            ),
            with_server(profile("b", "y", &[]), "https://api.example.com:6443"),
            profile("c", "z", &[(ID, "m1")]),
            with_server(profile("d", "w", &[]), "https://api.example.com:6443/Other"),
        ];
        let refs: Vec<&ClusterProfile> = ps.iter().collect();
        assert_eq!(member_groups(&refs, &[], false)[0].keys, ["a/x", "c/z"]);
        let g = member_groups(&refs, &[], true);
        assert_eq!(g.len(), 1, "{g:?}");
        assert_eq!(g[0].keys, ["a/x", "b/y", "c/z"], "d's path differs");
        assert!(
            g[0].shared
                .contains("server \"https://api.example.com:6443\"")
        );
    }

    #[test]
    fn a_member_id_is_opaque_bounded_and_shown_escaped() {
        let long = "m".repeat(MAX_MEMBER_ID + 1);
        let hostile = "m\u{1b}[31m\"\n";
        let ps = [
            profile("a", "x", &[(ID, &long)]),
            profile("b", "x", &[(ID, &long)]),
            profile("a", "e", &[(ID, "")]),
            profile("b", "e", &[(ID, "")]),
            profile("a", "h", &[(ID, hostile)]),
            profile("b", "h", &[(ID, hostile)]),
            profile("c", "h", &[(ID, "M\u{1b}[31m\"\n")]),
        ];
        let refs: Vec<&ClusterProfile> = ps.iter().collect();
        let g = member_groups(&refs, &[], false);
        assert_eq!(g.len(), 1, "too long and empty ids are no ids: {g:?}");
        assert_eq!(g[0].keys, ["a/h", "b/h"], "compared exactly, case included");
        assert!(
            !g[0].shared.contains('\u{1b}') && !g[0].shared.contains('\n'),
            "{}",
            g[0].shared
        );
    }

    #[test]
    fn servers_are_normalised_in_scheme_and_host_only() {
        assert_eq!(
            normalized_server(" HTTPS://Api.Example.COM:6443/Path/ ").as_deref(),
            Some("https://api.example.com:6443/Path")
        );
        assert_eq!(normalized_server("/"), None);
        assert_eq!(normalized_server(&"h".repeat(MAX_SERVER + 1)), None);
    }
}
