//! At apply: what changed between the plan Terraform showed and the plan apply would make now.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

use super::{Cause, ClusterIssue, LISTED, Plan, name_list};
use crate::domain::{desired::ClusterEntry, observed::Observed, problem::Problem};

/// What plan promised of one cluster, as apply compares it ([`drift_since_plan`]): the SHA-256 of each field
/// compared rather than the fields (an entry with its labels and managed fields is about a kilobyte; held for every
/// cluster through the apply's plan). Whole digests, collision-resistant: whoever writes a ClusterProfile cannot
/// make a change between plan and apply compare equal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Promised {
    objects: [u8; 32],
    credential_source: [u8; 32],
    labels: [u8; 32],
    config_sha256: [u8; 32],
    kubeconfig_sha256: [u8; 32],
    /// The credential is minted at apply (its hash unknown at plan).
    pub credential_pending: bool,
}

impl Promised {
    /// What `entry` promises.
    pub fn of(entry: &ClusterEntry) -> Self {
        fn digest(parts: &[Option<&str>]) -> [u8; 32] {
            let mut h = Sha256::new();
            for p in parts {
                // Each part framed by its length (absent: a marker no length takes), so parts cannot run together.
                match p {
                    Some(p) => {
                        h.update((p.len() as u64).to_le_bytes());
                        h.update(p.as_bytes());
                    }
                    None => h.update(u64::MAX.to_le_bytes()),
                }
            }
            h.finalize().into()
        }
        let labels: Vec<Option<&str>> = entry
            .labels
            .iter()
            .flat_map(|(k, v)| [Some(k.as_str()), Some(v.as_str())])
            .collect();
        Self {
            objects: digest(&[entry.sveltos_cluster.as_deref(), entry.secret.as_deref()]),
            credential_source: digest(&[Some(&entry.credential_source)]),
            labels: digest(&labels),
            config_sha256: digest(&[Some(&entry.config_sha256)]),
            kubeconfig_sha256: digest(&[entry.kubeconfig_sha256.as_deref()]),
            credential_pending: entry.credential_pending,
        }
    }
}

/// At apply: the clusters whose plan-time entry differs from what apply would produce now are left as they are
/// (an error for each, grouped), so that every other cluster is still applied as planned.
pub fn isolate_drift(
    plan: &mut Plan,
    observed: &Observed,
    planned: &BTreeMap<String, Option<Promised>>,
) {
    let drift = drift_since_plan(planned, &plan.entry_refs());
    if drift.is_empty() {
        return;
    }
    for (key, why) in drift {
        plan.isolate(observed, &key, Cause::ChangedSincePlan, why);
        plan.removals.retain(|k| *k != key);
    }
    // A planned cluster that no longer appears at all (its profile deleted) is kept too.
    for key in planned.keys() {
        if !plan.desired.contains_key(key)
            && !plan.kept.contains_key(key)
            && let Some(o) = observed.owned.get(key)
        {
            let renews = plan.renews(key);
            plan.kept.insert(key.clone(), o.entry(renews));
            plan.removals.retain(|k| k != key);
        }
    }
    let issues: Vec<ClusterIssue> = plan
        .issues
        .iter()
        .filter(|i| i.cause == Cause::ChangedSincePlan)
        .cloned()
        .collect();
    let names = name_list(issues.iter().map(|i| i.key.as_str()));
    let lines: Vec<String> = issues
        .iter()
        .take(LISTED)
        .map(|i| format!("- {}: {}", i.key, i.detail))
        .collect();
    plan.problems.push(Problem::error(
        vec![],
        format!(
            "{} ClusterProfile(s) changed since plan: {names}",
            issues.len()
        ),
        format!("{}\n\n{}", lines.join("\n"), Cause::ChangedSincePlan.hint()),
    ));
}

/// Compares what apply is about to produce with what plan promised. Returns the keys that differ, with the
/// first differing field, ignoring values plan left unknown.
pub fn drift_since_plan(
    planned: &BTreeMap<String, Option<Promised>>,
    now: &BTreeMap<&str, &ClusterEntry>,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (k, p) in planned {
        let Some(n) = now.get(k.as_str()) else {
            out.push((
                k.clone(),
                "the cluster is no longer selected or has no credentials".into(),
            ));
            continue;
        };
        let Some(p) = p else { continue };
        let n = Promised::of(n);
        let field = if p.objects != n.objects {
            Some("objects")
        } else if p.credential_source != n.credential_source {
            Some("credential_source")
        } else if p.labels != n.labels {
            Some("labels")
        } else if p.config_sha256 != n.config_sha256 {
            Some("config_sha256")
        } else if !p.credential_pending && p.kubeconfig_sha256 != n.kubeconfig_sha256 {
            Some("kubeconfig_sha256")
        } else {
            None
        };
        if let Some(f) = field {
            out.push((k.clone(), format!("{f} changed")));
        }
    }
    for k in now.keys().filter(|k| !planned.contains_key(**k)) {
        out.push((k.to_string(), "a new cluster appeared".into()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::plan::fixture::*;
    use crate::domain::{plan::Phase, problem::Severity};

    #[test]
    fn apply_isolates_drift_and_applies_the_rest() {
        let mut f = Fixture::new();
        let planned: BTreeMap<String, Option<Promised>> = f
            .run()
            .entries()
            .into_iter()
            .map(|(k, e)| (k, Some(Promised::of(&e))))
            .collect();
        // Between plan and apply, b/c1's profile changes its labels.
        f.set_label(1, "env", "changed");
        f.phase = Phase::Apply;
        let mut p = f.run();
        isolate_drift(&mut p, &f.observed, &planned);
        assert_eq!(p.desired.keys().collect::<Vec<_>>(), ["a/c1"]);
        let e = p
            .problems
            .iter()
            .find(|x| x.severity == Severity::Error)
            .unwrap();
        assert!(e.summary.contains("b/c1"), "{e:?}");
    }

    #[test]
    fn drift_since_plan_ignores_pending_hashes() {
        let p = Fixture::new().run();
        let mut planned: BTreeMap<String, Option<Promised>> = p
            .entries()
            .into_iter()
            .map(|(k, e)| (k, Some(Promised::of(&e))))
            .collect();
        assert!(drift_since_plan(&planned, &p.entry_refs()).is_empty());
        let mut rotated = p.entries();
        rotated.get_mut("a/c1").unwrap().kubeconfig_sha256 = Some("rotated".into());
        let now = rotated.iter().map(|(k, e)| (k.as_str(), e)).collect();
        assert_eq!(drift_since_plan(&planned, &now)[0].0, "a/c1");
        planned
            .get_mut("a/c1")
            .unwrap()
            .as_mut()
            .unwrap()
            .credential_pending = true;
        assert!(drift_since_plan(&planned, &now).is_empty());
    }
}
