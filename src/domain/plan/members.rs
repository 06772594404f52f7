//! ClusterProfiles that describe one member cluster ([`crate::domain::members`]): the plan warns about them
//! (`duplicate_members = "warn"`), or registers the first of each group and skips the others
//! (`duplicate_members = "register_one"`).

use super::{Cause, ClusterIssue, Inputs, LISTED, Located, Plan, name_list};
use crate::{
    api::{CLUSTER_API_GROUP, ClusterProfile},
    domain::{
        members::{DuplicateMembers, MemberGroup, member_groups},
        problem::{Problem, Step},
        text::shown,
    },
};

/// The profiles a plan considers registered or registrable: every selected profile (unselected and skipped ones
/// do not count).
fn selected<'a>(inputs: &Inputs<'a>, located: &Located) -> Vec<&'a ClusterProfile> {
    inputs
        .profiles
        .iter()
        .filter(|p| !located.unselected.contains_key(&p.key()))
        .collect()
}

/// Applies the member policy to a plan whose clusters are all planned (before its removals are worked out).
pub(super) fn one_per_member(inputs: &Inputs<'_>, located: &Located, plan: &mut Plan) {
    let policy = &inputs.spec.members;
    if policy.skip_cluster_api {
        skip_cluster_api(inputs, plan);
    }
    let groups = member_groups(
        &selected(inputs, located),
        &inputs.spec.selection.namespaces,
        policy.match_server,
    );
    if groups.is_empty() {
        return;
    }
    match policy.duplicates {
        DuplicateMembers::Warn => plan.problems.push(duplicates_warning(&groups)),
        DuplicateMembers::RegisterOne => {
            for g in &groups {
                register_one(plan, g);
            }
        }
    }
}

/// Skips every planned profile with a Cluster API Cluster of its namespace and name, as `register_one` skips a
/// duplicate (a bridged one is deregistered); a profile kept as it is for a problem of its own stays so.
fn skip_cluster_api(inputs: &Inputs<'_>, plan: &mut Plan) {
    let matched: Vec<String> = plan
        .desired
        .keys()
        .filter(|k| inputs.cluster_api.contains(*k))
        .cloned()
        .collect();
    for key in matched {
        plan.forget(&key);
        plan.issues.push(ClusterIssue {
            detail: format!("Cluster {} ({CLUSTER_API_GROUP})", shown(&key, SHOWN_KEY)),
            key,
            cause: Cause::ClusterApiCluster,
            kept: false,
        });
    }
}

/// How many characters of a Cluster's key a diagnostic shows (a namespace and a name, 63 and 253 at most).
const SHOWN_KEY: usize = 320;

/// Keeps the first key of the group that the plan registers (planned or kept as it is) and skips every other
/// planned one. A group none of which is registered (each has a problem of its own) is left as it is.
fn register_one(plan: &mut Plan, group: &MemberGroup) {
    let registered = |k: &String| plan.desired.contains_key(k) || plan.kept.contains_key(k);
    let Some(chosen) = group.keys.iter().find(|k| registered(k)).cloned() else {
        return;
    };
    for key in group.keys.iter().filter(|k| **k != chosen) {
        if !plan.desired.contains_key(key) {
            continue;
        }
        plan.forget(key);
        plan.issues.push(ClusterIssue {
            key: key.clone(),
            cause: Cause::DuplicateMember,
            detail: format!("{chosen} is registered ({})", group.shared),
            kept: false,
        });
    }
}

/// The warning of `duplicate_members = "warn"`: every group, bounded.
fn duplicates_warning(groups: &[MemberGroup]) -> Problem {
    let mut lines: Vec<String> = groups
        .iter()
        .take(LISTED)
        .map(|g| {
            format!(
                "- {} ({})",
                name_list(g.keys.iter().map(String::as_str)),
                g.shared
            )
        })
        .collect();
    if groups.len() > LISTED {
        lines.push(format!("- and {} more", groups.len() - LISTED));
    }
    Problem::warning(
        vec![Step::Attr("duplicate_members")],
        format!(
            "{} member cluster(s) are described by more than one ClusterProfile",
            groups.len()
        ),
        format!(
            "{}\n\nEach ClusterProfile is registered, so Sveltos sees each of these clusters more than once and may \
             deploy the same add-ons to it twice. A namespaced Sveltos Profile only sees the clusters of its own \
             namespace, so the bridge does not choose: set duplicate_members = \"register_one\" to register the \
             first of each (in the order of namespaces, else by namespace name) and skip the others, or exclude \
             one with overrides[\"<namespace>/<name>\"].skip = true.",
            lines.join("\n")
        ),
    )
}

#[cfg(test)]
mod tests {
    use crate::api::keys::INVENTORY_MEMBER_ID_LABEL as ID;
    use crate::domain::members::{DuplicateMembers, MemberPolicy};
    use crate::domain::plan::fixture::*;
    use crate::domain::plan::*;

    /// The problems of `p` at the top-level attribute `attr`.
    fn problems_at<'p>(p: &'p Plan, attr: &'static str) -> Vec<&'p Problem> {
        p.problems
            .iter()
            .filter(|x| x.path == vec![Step::Attr(attr)])
            .collect()
    }

    /// The fixture's a/c1 and b/c1 (one Secret each), labelled as one member.
    fn one_member() -> Fixture {
        let mut f = Fixture::new();
        for p in &mut f.profiles {
            p.metadata
                .labels
                .get_or_insert_with(Default::default)
                .insert(ID.into(), "member-1".into());
        }
        f
    }

    #[test]
    fn by_default_one_member_in_two_inventories_is_registered_twice_with_a_warning_naming_both() {
        let p = one_member().run();
        assert_eq!(p.entries().keys().collect::<Vec<_>>(), ["a/c1", "b/c1"]);
        assert!(p.skipped().is_empty());
        let w: Vec<&Problem> = problems_at(&p, "duplicate_members");
        assert_eq!(w.len(), 1, "{:?}", p.problems);
        assert_eq!(w[0].severity, Severity::Warning);
        assert!(
            w[0].detail.contains("- a/c1, b/c1 (")
                && w[0].detail.contains(&format!("{ID} \"member-1\"")),
            "{w:?}"
        );
        // One of them excluded by hand: no warning.
        let mut f = one_member();
        f.spec.overrides.insert(
            "b/c1".into(),
            Override {
                skip: true,
                ..Default::default()
            },
        );
        assert!(f.run().problems.is_empty(), "{:?}", f.run().problems);
        // Distinct ids: no warning.
        let mut f = one_member();
        f.profiles[1]
            .metadata
            .labels
            .as_mut()
            .unwrap()
            .insert(ID.into(), "member-2".into());
        assert!(f.run().problems.is_empty());
    }

    /// A duplicate `register_one` skips is named by that skip only: no renewal warning says it is registered.
    #[test]
    fn a_skipped_duplicate_is_in_no_other_warning() {
        let mut f = one_member();
        f.spec.members = MemberPolicy {
            duplicates: DuplicateMembers::RegisterOne,
            ..Default::default()
        };
        f.spec.token_renewal = Some(crate::domain::TokenRenewal {
            interval: "1h".into(),
            token_duration: None,
            sa_namespace: None,
            sa_name: None,
        });
        let p = f.run();
        assert_eq!(p.entries().keys().collect::<Vec<_>>(), ["a/c1"]);
        let renewal: Vec<&Problem> = problems_at(&p, "token_renewal");
        assert_eq!(renewal.len(), 1, "{:?}", p.problems);
        assert!(
            renewal[0].summary.starts_with("1 ClusterProfile(s)")
                && renewal[0].detail.contains("- a/c1: ")
                && !renewal[0].detail.contains("b/c1"),
            "{:?}",
            renewal[0]
        );
    }

    #[test]
    fn a_profile_with_a_cluster_api_cluster_is_skipped_only_when_asked_and_deregistered_if_bridged()
    {
        let mut f = Fixture::new();
        f.cluster_api = ["b/c1".to_string(), "x/other".to_string()].into();
        // Off (the default): the Cluster is not looked at.
        let p = f.run();
        assert_eq!(p.entries().keys().collect::<Vec<_>>(), ["a/c1", "b/c1"]);
        assert!(p.skipped().is_empty() && p.problems.is_empty(), "{p:?}");
        // On: b/c1 is skipped, named with its Cluster in one warning at the attribute; a chosen skip.
        f.observed = observed_after(&p, "main");
        f.spec.members.skip_cluster_api = true;
        let p = f.run();
        assert_eq!(p.entries().keys().collect::<Vec<_>>(), ["a/c1"]);
        assert_eq!(p.removals, ["b/c1"], "bridged before: deregistered");
        let skipped = &p.skipped()["b/c1"];
        assert!(!skipped.kept && skipped.chosen(), "{skipped:?}");
        assert!(
            skipped.cause.contains("Cluster b/c1 (cluster.x-k8s.io)"),
            "{skipped:?}"
        );
        let w: Vec<&Problem> = problems_at(&p, "skip_cluster_api_clusters");
        assert_eq!(w.len(), 1, "{:?}", p.problems);
        assert_eq!(w[0].severity, Severity::Warning);
        assert!(
            w[0].summary
                .starts_with("1 ClusterProfile(s): a Cluster API Cluster")
                && w[0]
                    .detail
                    .contains("- b/c1 (not registered): Cluster b/c1 (cluster.x-k8s.io)"),
            "{w:?}"
        );
        f.spec.strict = true;
        assert!(!f.run().has_errors(), "a stated choice, not an error");
    }

    #[test]
    fn register_one_keeps_the_preferred_namespace_and_skips_the_other_naming_the_kept_one() {
        let mut f = one_member();
        f.spec.members = MemberPolicy {
            duplicates: DuplicateMembers::RegisterOne,
            ..Default::default()
        };
        let p = f.run();
        assert_eq!(p.entries().keys().collect::<Vec<_>>(), ["a/c1"]);
        let skipped = p.skipped();
        assert!(!skipped["b/c1"].kept);
        assert!(
            skipped["b/c1"].cause.contains("a/c1 is registered")
                && skipped["b/c1"].cause.contains("member-1"),
            "{skipped:?}"
        );
        assert!(!p.has_errors(), "a stated choice, not a problem");
        let w = p
            .problems
            .iter()
            .find(|x| x.path == vec![Step::Attr("duplicate_members")])
            .unwrap();
        assert!(
            w.detail
                .contains("- b/c1 (not registered): a/c1 is registered")
                && !w.detail.contains("strict"),
            "{w:?}"
        );
        f.spec.strict = true;
        assert!(!f.run().has_errors(), "not an error under strict either");
        // The order of namespaces decides: b first. a/c1, bridged, is deregistered.
        f.spec.strict = false;
        f.observed = observed_after(&p, "main");
        f.spec.selection.namespaces = vec!["b".into(), "a".into()];
        let p = f.run();
        assert_eq!(p.entries().keys().collect::<Vec<_>>(), ["b/c1"]);
        assert_eq!(p.removals, ["a/c1"]);
        // The preferred one cannot be registered (no credential): the other is.
        f.observed = Default::default();
        f.secrets
            .retain(|s| s.metadata.namespace.as_deref() != Some("b"));
        let p = f.run();
        assert_eq!(p.entries().keys().collect::<Vec<_>>(), ["a/c1"]);
        let b = &p.skipped()["b/c1"];
        assert!(
            !b.cause.contains("is registered"),
            "skipped for its credential: {b:?}"
        );
    }
}
