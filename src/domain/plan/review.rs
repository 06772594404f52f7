//! What a plan does to the fleet, counted: the one-line summary (registered / updated / deregistered / skipped)
//! and the `max_updates` guard on the clusters whose SveltosCluster it changes. In memory only: the counts compare
//! the planned entries with what the plan's own reading found.

use std::collections::BTreeSet;

use super::{Inputs, LISTED, Phase, Plan, report::removal_limit};
use crate::domain::{
    observed::EntryChanges,
    problem::{Problem, Step},
};

/// The clusters a plan registers, updates and leaves as they are.
#[derive(Debug, Default)]
struct Tally<'a> {
    /// Selected clusters without a SveltosCluster yet.
    registered: Vec<&'a str>,
    /// Registered clusters whose entry changes, with what changes.
    updated: Vec<(&'a str, EntryChanges)>,
    /// Registered clusters planned exactly as they are (those kept because of a problem are skipped).
    unchanged: usize,
}

impl Tally<'_> {
    /// The updated clusters whose SveltosCluster changes (what `max_updates` counts).
    fn sveltos_updates(&self) -> impl Iterator<Item = &(&str, EntryChanges)> {
        self.updated.iter().filter(|(_, c)| c.sveltos_cluster)
    }
}

/// Counts what `plan` registers and updates against what `inputs` observed.
fn tally<'a>(inputs: &Inputs<'_>, plan: &'a Plan) -> Tally<'a> {
    let mut t = Tally::default();
    for (key, d) in &plan.desired {
        let current = inputs.observed.owned.get(key);
        match current.filter(|o| o.sveltos_cluster.is_some()) {
            None => t.registered.push(key),
            Some(o) => {
                let changes = o.changes(plan.renews(key), &d.entry);
                if changes.none() {
                    t.unchanged += 1;
                } else {
                    t.updated.push((key, changes));
                }
            }
        }
    }
    t
}

/// The summary warning (at plan, when the plan changes anything) and the `max_updates` error.
pub(super) fn review(inputs: &Inputs<'_>, plan: &Plan) -> Vec<Problem> {
    let t = tally(inputs, plan);
    let mut out = Vec::new();
    let changes = !t.registered.is_empty() || !t.updated.is_empty() || !plan.removals.is_empty();
    if changes && inputs.phase != Phase::Apply {
        out.push(summary(&t, plan));
    }
    out.extend(updates_problem(inputs, &t));
    out
}

/// `key (labels, paused)`: a cluster with what changes in its entry.
fn with_fields(key: &str, c: &EntryChanges) -> String {
    let mut fields = c.fields.clone();
    if c.credential {
        fields.push("credential");
    }
    if fields.is_empty() {
        key.to_string()
    } else {
        format!("{key} ({})", fields.join(", "))
    }
}

/// The first [`LISTED`] of `items` as `show` writes them, then how many more.
fn listed<T>(mut items: impl Iterator<Item = T>, show: impl Fn(T) -> String) -> String {
    let mut out: Vec<String> = items.by_ref().take(LISTED).map(show).collect();
    let more = items.count();
    if more > 0 {
        out.push(format!("and {more} more"));
    }
    out.join(", ")
}

/// One line counting what the plan does to the fleet, its detail naming the clusters.
fn summary(t: &Tally<'_>, plan: &Plan) -> Problem {
    let skipped: BTreeSet<&str> = plan.issues.iter().map(|i| i.key.as_str()).collect();
    let line = format!(
        "Bridge plan: {} to register, {} to update, {} to deregister, {} skipped, {} unchanged",
        t.registered.len(),
        t.updated.len(),
        plan.removals.len(),
        skipped.len(),
        t.unchanged,
    );
    let mut parts = Vec::new();
    if !t.registered.is_empty() {
        let names = listed(t.registered.iter(), |k| k.to_string());
        parts.push(format!("To register: {names}."));
    }
    if !t.updated.is_empty() {
        let names = listed(t.updated.iter(), |(k, c)| with_fields(k, c));
        parts.push(format!("To update: {names}."));
    }
    if !plan.removals.is_empty() {
        let names = listed(plan.removals.iter(), String::clone);
        parts.push(format!("To deregister: {names}."));
    }
    if !skipped.is_empty() {
        parts.push("Skipped: see the warnings by cause.".to_string());
    }
    Problem::warning(vec![], line, parts.join(" "))
}

/// The error when the plan changes the SveltosClusters of more registered clusters than the limit
/// ([`removal_limit`]'s rule, with `max_updates`).
fn updates_problem(inputs: &Inputs<'_>, t: &Tally<'_>) -> Option<Problem> {
    let n = t.sveltos_updates().count();
    let bridged = inputs.observed.owned.len();
    let max = inputs.spec.max_updates;
    let limit = removal_limit(max, bridged);
    if n <= limit {
        return None;
    }
    let (summary, hint) = match max {
        Some(max) => (
            format!(
                "This plan would update the SveltosClusters of {n} clusters, more than max_updates = {max}"
            ),
            "If this is intended, raise max_updates".to_string(),
        ),
        None => (
            format!(
                "This plan would update the SveltosClusters of {n} of {bridged} clusters, more than the default \
                 limit of {limit}"
            ),
            format!(
                "Without max_updates a plan may update at most {} clusters or {} % of those bridged, whichever is \
                 more. If this is intended, set max_updates to at least {n} for this apply",
                super::report::DEFAULT_MAX_REMOVALS_MIN,
                super::report::DEFAULT_MAX_REMOVALS_PERCENT
            ),
        ),
    };
    let names = listed(t.sveltos_updates(), |(k, c)| with_fields(k, c));
    Some(Problem::error(
        vec![Step::Attr("max_updates")],
        summary,
        format!(
            "A SveltosCluster's labels, annotations and spec decide which Sveltos profiles match the cluster and \
             whether Sveltos manages it: changing them on many clusters at once can deploy or withdraw add-ons \
             across the fleet. Clusters: {names}. Nothing was written. {hint}; otherwise check extra_labels, \
             extra_annotations, copy_labels, overrides and the labels of the ClusterProfiles. Credential changes \
             alone are not counted."
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::BridgeSpec;
    use crate::domain::plan::{NO_UNDECODABLE, fixture::*};
    use crate::domain::problem::Severity;

    fn summary_of(p: &Plan) -> Option<&Problem> {
        p.problems
            .iter()
            .find(|x| x.summary.starts_with("Bridge plan:"))
    }

    #[test]
    fn a_plan_that_changes_clusters_says_how_many_and_which() {
        let mut f = Fixture::new();
        f.phase = Phase::Plan;
        let first = f.run();
        let s = summary_of(&first).unwrap();
        assert_eq!(s.severity, Severity::Warning);
        assert_eq!(
            s.summary,
            "Bridge plan: 2 to register, 0 to update, 0 to deregister, 0 skipped, 0 unchanged"
        );
        assert_eq!(s.detail, "To register: a/c1, b/c1.");
        f.phase = Phase::Apply;
        f.observed = observed_after(&f.run(), "main");
        f.phase = Phase::Plan;
        assert!(summary_of(&f.run()).is_none(), "nothing changes: no line");
        // a/c1 relabelled, b/c1 paused by an override.
        f.set_label(0, "env", "staging");
        f.spec.overrides.insert(
            "b/c1".into(),
            Override {
                paused: Some(true),
                ..Default::default()
            },
        );
        let p = f.run();
        let s = summary_of(&p).unwrap();
        assert!(s.summary.contains("0 to register, 2 to update"), "{s:?}");
        assert_eq!(s.detail, "To update: a/c1 (labels), b/c1 (paused).");
        let e = &p.entries()["b/c1"];
        assert_eq!(e.managed.paused, Some(true));
        // What the line counts is what the plan diff shows: the entry read back differs.
        for (key, d) in &p.desired {
            let o = &f.observed.owned[key];
            assert_eq!(
                o.changes(false, &d.entry).none(),
                o.entry(false) == d.entry,
                "{key}"
            );
        }
        // At apply the line is not repeated.
        f.phase = Phase::Apply;
        assert!(summary_of(&f.run()).is_none());
    }

    #[test]
    fn max_updates_guards_sveltos_cluster_changes_like_max_removals() {
        let mut f = Fixture::new();
        f.observed = observed_after(&f.run(), "main");
        f.set_label(0, "env", "staging");
        f.set_label(1, "env", "staging");
        f.spec.max_updates = Some(1);
        let p = f.run();
        let e = p
            .problems
            .iter()
            .find(|x| x.path == vec![Step::Attr("max_updates")])
            .unwrap();
        assert_eq!(e.severity, Severity::Error);
        assert!(
            e.summary
                .contains("update the SveltosClusters of 2 clusters, more than max_updates = 1"),
            "{e:?}"
        );
        assert!(e.detail.contains("a/c1 (labels), b/c1 (labels)"), "{e:?}");
        assert!(e.detail.contains("raise max_updates"), "{e:?}");
        f.spec.max_updates = Some(2);
        assert!(!f.run().has_errors());
        // A credential change alone is not counted: the kubeconfig of both clusters rotated.
        f.spec.max_updates = Some(0);
        f.set_label(0, "env", "prod");
        f.set_label(1, "env", "dev");
        let rotated = KUBECONFIG.replace("https://127.0.0.1:1", "https://127.0.0.1:2");
        for s in &mut f.secrets {
            for v in s.data.as_mut().unwrap().values_mut() {
                v.0 = rotated.as_bytes().to_vec();
            }
        }
        let p = f.run();
        assert!(!p.has_errors(), "{:?}", p.problems);
        f.phase = Phase::Plan;
        let p = f.run();
        assert_eq!(
            summary_of(&p).unwrap().detail,
            "To update: a/c1 (credential), b/c1 (credential)."
        );
    }

    #[test]
    fn without_max_updates_the_default_is_that_of_removals() {
        let keys: Vec<String> = (0..12).map(|i| format!("ns/c{i}")).collect();
        let t = Tally {
            updated: keys
                .iter()
                .map(|k| {
                    (
                        k.as_str(),
                        EntryChanges {
                            sveltos_cluster: true,
                            fields: vec!["labels"],
                            credential: false,
                        },
                    )
                })
                .collect(),
            ..Tally::default()
        };
        let f = Fixture::new();
        let spec = BridgeSpec::default();
        let mut observed = Observed::default();
        for k in &keys {
            observed.owned.insert(k.clone(), Default::default());
        }
        let inputs = Inputs {
            spec: &spec,
            profiles: &f.profiles,
            credential_secrets: &f.secrets,
            checked_kubeconfigs: None,
            namespace_labels: &f.ns_labels,
            providers: None,
            observed: &observed,
            now: jiff::Timestamp::now(),
            phase: Phase::Plan,
            planned_mints: None,
            undecodable: &NO_UNDECODABLE,
            cluster_api: &crate::domain::plan::NO_CLUSTER_API,
            pack: false,
        };
        let e = updates_problem(&inputs, &t).unwrap();
        assert!(
            e.summary
                .contains("12 of 12 clusters, more than the default limit of 10")
                && e.detail
                    .contains("set max_updates to at least 12 for this apply")
                && e.detail.contains("ns/c11 (labels). Nothing"),
            "{e:?}"
        );
        let ten = Tally {
            updated: t.updated[..10].to_vec(),
            ..Tally::default()
        };
        assert!(updates_problem(&inputs, &ten).is_none());
    }
}
