//! At apply, around the writes: which credentials the plan promised to mint, the plan's errors split into those
//! that stop the apply and those confined to their clusters, and what the state records once the writes ran.

use std::collections::{BTreeMap, BTreeSet};

use super::{Plan, Severity, drift::Promised};
use crate::domain::{
    desired::{ClusterEntry, DesiredCluster},
    ownership::{Kind, Ledger},
    problem::Problem,
};

/// The clusters whose credential the plan left to mint at apply (or planned without knowing it): apply mints
/// those even when the current credential would still be valid.
pub fn planned_mints(planned: &BTreeMap<String, Option<Promised>>) -> BTreeSet<String> {
    planned
        .iter()
        .filter(|(_, e)| e.as_ref().is_none_or(|e| e.credential_pending))
        .map(|(k, _)| k.clone())
        .collect()
}

/// The error-severity problems of a plan (apply reports no warnings: the plan showed them).
pub fn plan_errors(plan: &Plan) -> Vec<Problem> {
    plan.problems
        .iter()
        .filter(|p| p.severity == Severity::Error)
        .cloned()
        .collect()
}

/// `ledger` trusting the names of the given planned clusters: an object written at one of them (before a timeout,
/// or by a write whose answer was lost) carries the label and is then recorded by the read back.
pub fn trusting_targets<'a>(
    mut ledger: Ledger,
    targets: impl Iterator<Item = &'a DesiredCluster>,
) -> Ledger {
    for d in targets {
        if let Some(id) = &d.entry.sveltos_cluster {
            ledger.trust_name(Kind::SveltosCluster, id);
        }
        if let Some(id) = &d.entry.secret {
            ledger.trust_name(Kind::Secret, id);
        }
    }
    ledger
}

/// The entries of an apply in which the clusters `failed` failed (outside `strict`): the plan's, with the minted
/// credentials, and known values where the plan left a credential to mint that was not minted.
pub fn entries_despite_failures(
    plan: Plan,
    minted: BTreeMap<String, ClusterEntry>,
    failed: &BTreeSet<String>,
) -> BTreeMap<String, ClusterEntry> {
    let mut entries = plan.into_entries();
    entries.extend(minted);
    for key in failed {
        if let Some(e) = entries.get_mut(key)
            && e.credential_pending
        {
            // Minting failed: known values for what the plan left unknown.
            e.credential_pending = false;
            e.kubeconfig_sha256 = None;
            e.credential_expires_at = None;
        }
    }
    entries
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(sc: &str, pending: bool) -> ClusterEntry {
        ClusterEntry {
            sveltos_cluster: Some(sc.to_string()),
            secret: Some(format!("{sc}-kubeconfig")),
            kubeconfig_sha256: (!pending).then(|| "sha".to_string()),
            credential_expires_at: (!pending).then(|| "2030-01-01T00:00:00Z".to_string()),
            credential_pending: pending,
            ..Default::default()
        }
    }

    fn desired(key: &str, sc: &str, pending: bool) -> DesiredCluster {
        DesiredCluster {
            key: key.to_string(),
            entry: entry(sc, pending),
            secret: None,
            sveltos_cluster: None,
            packed: None,
        }
    }

    #[test]
    fn apply_mints_what_plan_left_pending_or_did_not_know() {
        let planned = BTreeMap::from([
            (
                "ns/known".to_string(),
                Some(Promised::of(&entry("ns/known", false))),
            ),
            (
                "ns/pending".to_string(),
                Some(Promised::of(&entry("ns/pending", true))),
            ),
            ("ns/unknown".to_string(), None),
        ]);
        let mints: Vec<String> = planned_mints(&planned).into_iter().collect();
        assert_eq!(mints, ["ns/pending", "ns/unknown"]);
    }

    #[test]
    fn only_errors_of_the_plan_are_reported_at_apply() {
        let plan = Plan {
            problems: vec![
                Problem::warning(vec![], "shown at plan", ""),
                Problem::error(vec![], "stops the apply", ""),
            ],
            ..Plan::default()
        };
        let errors = plan_errors(&plan);
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].summary, "stops the apply");
    }

    #[test]
    fn the_names_being_written_are_trusted_for_the_read_back() {
        let target = desired("ns/a", "ns/a", false);
        let ledger = trusting_targets(Ledger::default(), std::iter::once(&target));
        // An object found at those names after a lost answer or a timeout is this apply's, whatever its UID.
        assert!(ledger.owns(Kind::SveltosCluster, "ns/a", Some("any-uid")));
        assert!(ledger.owns(Kind::Secret, "ns/a-kubeconfig", Some("any-uid")));
        assert!(!ledger.owns(Kind::SveltosCluster, "ns/b", Some("any-uid")));
    }

    #[test]
    fn a_failed_mint_records_known_values_and_the_others_keep_what_was_minted() {
        let plan = Plan {
            desired: BTreeMap::from([
                (
                    "ns/failed".to_string(),
                    desired("ns/failed", "ns/failed", true),
                ),
                (
                    "ns/minted".to_string(),
                    desired("ns/minted", "ns/minted", true),
                ),
            ]),
            ..Plan::default()
        };
        let minted = BTreeMap::from([("ns/minted".to_string(), entry("ns/minted", false))]);
        let failed = BTreeSet::from(["ns/failed".to_string()]);
        let entries = entries_despite_failures(plan, minted, &failed);
        let f = &entries["ns/failed"];
        assert!(!f.credential_pending);
        assert_eq!(
            (
                f.kubeconfig_sha256.as_deref(),
                f.credential_expires_at.as_deref()
            ),
            (None, None)
        );
        assert_eq!(entries["ns/minted"], entry("ns/minted", false));
    }
}
