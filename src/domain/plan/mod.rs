//! Planning: which profiles are bridged, with which credential, what the result looks like in state, and
//! which writes and deletes apply has to make. Pure: the caller supplies everything read from the cluster.
//!
//! The steps, each in its own module: `select` picks the profiles and locates their credentials (first
//! phase); [`plan()`] (here) builds the entries and objects, with `material` deciding per cluster whether its
//! credential is copied, reused or minted; `report` groups per-cluster issues into diagnostics; `drift`
//! compares an apply-time plan with what plan promised; `review` counts what the plan changes (the summary line and
//! the `max_updates` guard); `settle` decides what an apply records around its writes;
//! [`actions()`] turns a plan made for apply into writes and deletes.

mod actions;
mod deprecated;
mod drift;
#[cfg(test)]
mod fixture;
mod material;
mod members;
mod report;
mod review;
mod select;
mod settle;

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Secret;

use super::{
    BridgeSpec,
    credentials::{CheckedKubeconfigs, CredentialSecrets, CredentialSource, Lookup, source_sha256},
    desired::{
        ClusterEntry, DesiredCluster, Material, Packed, copied_labels_out_of_bounds, desired,
        desired_entry, renewal_of, secret_name,
    },
    exec::{ExecInvocation, ProvidersFile},
    observed::Observed,
    properties,
    renewal::{Verdict, judge},
};
use crate::api::ClusterProfile;

pub use super::problem::{Problem, Severity, Step};
pub use actions::{Delete, Write, actions, take_actions};
pub use drift::{Promised, drift_since_plan, isolate_drift};
pub use material::invocation_sha256;
pub use report::{Cause, ClusterIssue, LISTED, name_list};
pub use select::{CreationTargets, Located, locate_all};
pub use settle::{entries_despite_failures, plan_errors, planned_mints, trusting_targets};

use actions::differs;
use material::material_for;
use report::report;
use review::review;

/// When a plan is computed. Terraform plans a resource, and plans it again right before applying it (a saved
/// plan can wait for review in between); the CLI rejects a value that was known in the first plan and is unknown in
/// the second. Exec credentials are therefore renewed with a margin that shrinks from one step to the next, so that
/// a credential reused by the plan is still reused by the re-plan made up to `refresh_before` later.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Phase {
    /// The first plan (`terraform plan`, or the plan step of `terraform apply`): renews exec credentials that
    /// expire within twice `refresh_before`.
    #[default]
    Plan,
    /// The plan made again right before apply: renews exec credentials that expire within `refresh_before`.
    Replan,
    /// `ApplyResourceChange`: renews what the (re-)plan said to renew ([`Inputs::planned_mints`]) and reuses every
    /// other credential that has not expired.
    Apply,
}

/// What the cluster holds, as read by the caller.
pub struct Inputs<'a> {
    /// The bridge's configuration.
    pub spec: &'a BridgeSpec,
    /// ClusterProfiles in scope.
    pub profiles: &'a [ClusterProfile],
    /// Secrets carrying the credential label (with data).
    pub credential_secrets: &'a [Secret],
    /// Kubeconfigs already found inert under some policy (worked out ahead of the plan), if any: the plan does not
    /// parse them again when its own policy is the same ([`CheckedKubeconfigs`]).
    pub checked_kubeconfigs: Option<&'a CheckedKubeconfigs>,
    /// Labels of the consumer-labelled namespaces (needed with a consumer filter).
    pub namespace_labels: &'a BTreeMap<String, BTreeMap<String, String>>,
    /// The parsed providers file, if configured.
    pub providers: Option<&'a ProvidersFile>,
    /// What exists.
    pub observed: &'a Observed,
    /// Now.
    pub now: jiff::Timestamp,
    /// Plan or apply.
    pub phase: Phase,
    /// At apply: the clusters whose plan said their exec credential is minted at apply (they are minted even if
    /// their current credential would still be valid).
    pub planned_mints: Option<&'a BTreeSet<String>>,
    /// ClusterProfiles in scope that exist but do not decode, by key, with why (escaped and bounded): each is kept
    /// as it is, never deregistered for it.
    pub undecodable: &'a BTreeMap<String, String>,
    /// The keys (`namespace/name`) of the Cluster API Clusters in scope (read only with
    /// `skip_cluster_api_clusters`; empty otherwise or when Cluster API is not installed).
    pub cluster_api: &'a BTreeSet<String>,
    /// In phase `Apply`: hold the objects to write packed ([`crate::domain::desired::Packed`]), as apply's writes
    /// take them; `false` holds them built, for a caller that looks at them.
    pub pack: bool,
}

/// The longest object name the API server accepts (a DNS-1123 subdomain).
const MAX_NAME: usize = 253;

/// No undecodable ClusterProfiles (for [`Inputs::undecodable`]).
pub static NO_UNDECODABLE: BTreeMap<String, String> = BTreeMap::new();

/// No Cluster API Clusters (for [`Inputs::cluster_api`]).
pub static NO_CLUSTER_API: BTreeSet<String> = BTreeSet::new();

/// The plan: the state entries apply will produce, the objects to write, and what it found wrong.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// Clusters to bridge, by key.
    pub desired: BTreeMap<String, DesiredCluster>,
    /// Clusters kept exactly as they are (a problem confined to them, or unhealthy and kept), by key.
    pub kept: BTreeMap<String, ClusterEntry>,
    /// Exec plugin runs needed at apply, by key (for credentials that are pending).
    pub exec: BTreeMap<String, ExecInvocation>,
    /// Clusters whose SveltosCluster is paused because their profile is unhealthy.
    pub health_paused: BTreeSet<String>,
    /// Per-cluster problems (reported grouped by cause in `problems`).
    pub issues: Vec<ClusterIssue>,
    /// Clusters planned normally that the plan warns about, by key, with what (a `kubeconfig-secretreader` Secret
    /// whose kubeconfig points elsewhere than the ClusterProfile: see [`Resolved`](super::credentials::Resolved)).
    pub notices: BTreeMap<String, String>,
    /// Clusters with `token_renewal` that Sveltos will not renew as configured, by key: whether renewal is
    /// withheld from them (`true`: a renewal would break their connection) or written but never done, and why
    /// (see [`crate::domain::renewal`]).
    pub renewal_notes: BTreeMap<String, (bool, String)>,
    /// Clusters planned normally some of whose properties get no label (`copy_properties`: a value that is not a
    /// valid label value), by key: property name to value (escaped and bounded).
    pub unlabelled: BTreeMap<String, BTreeMap<String, String>>,
    /// Bridged clusters this plan deregisters, by key.
    pub removals: Vec<String>,
    /// Errors and warnings, with attribute paths.
    pub problems: Vec<Problem>,
    /// Made for apply ([`Phase::Apply`]): the clusters that differ from what exists hold their objects (the
    /// others only their entries), and [`actions`] may be asked for.
    pub for_apply: bool,
    /// Sveltos renews every cluster's credentials (`token_renewal`).
    pub renew_all: bool,
    /// Clusters whose override asks Sveltos to renew their credentials.
    pub renew_keys: BTreeSet<String>,
    /// Made for apply: for each cluster whose kubeconfig is copied whole from its source, the source's
    /// [`source_sha256`](crate::domain::credentials::source_sha256), by key. Apply records it with what it wrote
    /// ([`Plan::record_sources`]), so that a later plan of the same bytes does not check them again.
    pub checked_sources: BTreeMap<String, String>,
    /// How many clusters' kubeconfigs this plan took from the ledger's record of the last apply's check instead of
    /// checking them ([`Material::Recorded`]).
    pub recorded_checks: usize,
}

/// A cluster the plan leaves out or keeps as it is, as the `skipped` attribute shows it: its cause (the same
/// words as the grouped diagnostic's summary; no object content) and whether its bridged objects are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// Why, as [`Cause`] describes it.
    pub cause: String,
    /// Its existing SveltosCluster and Secret are kept as they are (`false`: it is not registered).
    pub kept: bool,
    /// The cause as the plan found it (`None`: read back from a state or a claim's record, in words only).
    pub reason: Option<Cause>,
}

impl Skipped {
    /// Whether the configuration chose to leave it out: a duplicate that `duplicate_members = "register_one"`
    /// skips, its member cluster registered through another ClusterProfile, or a Cluster API cluster
    /// `skip_cluster_api_clusters` skips, which Sveltos manages natively.
    pub fn chosen(&self) -> bool {
        matches!(
            self.reason,
            Some(Cause::DuplicateMember | Cause::ClusterApiCluster)
        )
    }
}

impl Plan {
    /// Records in `ledger`, for each cluster whose kubeconfig this plan (made for apply) copies whole, that what the
    /// cluster's Secret holds is the checked form of its source ([`Plan::checked_sources`]), when the ledger
    /// records that Secret holding what this plan writes there (written by this apply, or found so).
    pub fn record_sources(&self, ledger: &mut crate::domain::ownership::Ledger) {
        for (key, src) in &self.checked_sources {
            if let Some(d) = self.desired.get(key)
                && let (Some(id), Some(sha)) = (&d.entry.secret, &d.entry.kubeconfig_sha256)
            {
                ledger.record_source(id, sha, src.clone());
            }
        }
    }

    /// The planned `skipped` attribute: every cluster with an issue, by key.
    pub fn skipped(&self) -> BTreeMap<String, Skipped> {
        self.issues
            .iter()
            .map(|i| {
                // A duplicate names the cluster registered instead (its detail, escaped and bounded).
                let cause = match i.cause {
                    Cause::DuplicateMember | Cause::ClusterApiCluster => {
                        format!("{}: {}", i.cause.describe(), i.detail)
                    }
                    c => c.describe().to_string(),
                };
                (
                    i.key.clone(),
                    Skipped {
                        cause,
                        kept: i.kept,
                        reason: Some(i.cause),
                    },
                )
            })
            .collect()
    }

    /// The planned `clusters` attribute.
    pub fn entries(&self) -> BTreeMap<String, ClusterEntry> {
        self.entry_refs()
            .into_iter()
            .map(|(k, e)| (k.to_string(), e.clone()))
            .collect()
    }

    /// The planned entries, by reference (what [`drift_since_plan`] compares, without a copy).
    pub fn entry_refs(&self) -> BTreeMap<&str, &ClusterEntry> {
        self.desired
            .iter()
            .map(|(k, d)| (k.as_str(), &d.entry))
            .chain(self.kept.iter().map(|(k, e)| (k.as_str(), e)))
            .collect()
    }

    /// The planned `clusters` attribute, taken out of the plan (no copy of ten thousand entries).
    pub fn into_entries(self) -> BTreeMap<String, ClusterEntry> {
        let mut m: BTreeMap<String, ClusterEntry> = self
            .desired
            .into_iter()
            .map(|(k, d)| (k, d.entry))
            .collect();
        m.extend(self.kept);
        m
    }

    /// Whether any problem is an error.
    pub fn has_errors(&self) -> bool {
        self.problems.iter().any(|p| p.severity == Severity::Error)
    }

    /// Whether the configuration asks Sveltos to renew cluster `key`'s credentials.
    pub fn renews(&self, key: &str) -> bool {
        self.renew_all || self.renew_keys.contains(key)
    }

    /// Drops what the plan would write for cluster `key` and every warning note about it (a cluster the plan does
    /// not register is named only by the issue that says why); whether it was planned for a write.
    pub(super) fn forget(&mut self, key: &str) -> bool {
        self.exec.remove(key);
        self.notices.remove(key);
        self.renewal_notes.remove(key);
        self.unlabelled.remove(key);
        self.health_paused.remove(key);
        self.desired.remove(key).is_some()
    }

    /// Leaves one cluster as it is: its existing objects are kept (no write, no delete), or, when it has none,
    /// it is not registered.
    pub fn isolate(&mut self, observed: &Observed, key: &str, cause: Cause, detail: String) {
        self.forget(key);
        let existing = observed.owned.get(key);
        if let Some(o) = existing {
            self.kept.insert(key.to_string(), o.entry(self.renews(key)));
        }
        self.issues.push(ClusterIssue {
            key: key.to_string(),
            cause,
            detail,
            kept: existing.is_some(),
        });
    }
}

/// Second phase: given the Secrets read for `kubeconfig-secretreader` providers, build the plan. A problem
/// confined to one cluster leaves that cluster as it is and is reported once per cause; every other cluster is
/// planned normally (with `strict`, such problems are errors instead).
pub fn plan(
    inputs: &Inputs<'_>,
    located: &Located,
    fetched: &BTreeMap<(String, String), Option<Secret>>,
) -> Plan {
    let secrets = CredentialSecrets::new(inputs.credential_secrets, fetched)
        .with_checked(inputs.checked_kubeconfigs);
    let mut plan = Plan {
        renew_all: inputs.spec.token_renewal.is_some(),
        renew_keys: inputs
            .spec
            .overrides
            .iter()
            .filter(|(_, o)| o.token_renewal.is_some())
            .map(|(k, _)| k.clone())
            .collect(),
        ..Plan::default()
    };
    check_override_keys(inputs, &mut plan);
    for (i, lookup) in &located.lookups {
        plan_cluster(
            inputs,
            located,
            &secrets,
            &mut plan,
            &inputs.profiles[*i],
            lookup,
        );
    }
    for key in &located.unhealthy_kept {
        plan.isolate(
            inputs.observed,
            key,
            Cause::Unhealthy,
            "kept registered".into(),
        );
    }
    for (key, why) in inputs.undecodable {
        plan.isolate(inputs.observed, key, Cause::Undecodable, why.clone());
    }
    for (key, why) in &inputs.observed.unreadable {
        plan.isolate(inputs.observed, key, Cause::UnreadableObject, why.clone());
    }
    for key in &plan.health_paused.clone() {
        plan.issues.push(ClusterIssue {
            key: key.clone(),
            cause: Cause::Unhealthy,
            detail: "paused".into(),
            kept: true,
        });
    }
    plan.for_apply = inputs.phase == Phase::Apply;
    isolate_collisions(inputs, &mut plan);
    members::one_per_member(inputs, located, &mut plan);
    deprecated::warn_credential_providers_only(inputs, located, &mut plan);
    plan.removals = inputs
        .observed
        .owned
        .keys()
        .filter(|k| !plan.desired.contains_key(*k) && !plan.kept.contains_key(*k))
        .cloned()
        .collect();
    // The count of what the plan does comes first, then the diagnostics by cause.
    let reviewed = review(inputs, &plan);
    let at = plan.problems.len();
    report(inputs, &mut plan);
    plan.problems.splice(at..at, reviewed);
    plan
}

/// Plans one selected cluster: its entry (and, at apply, its objects when they differ from what exists), or the
/// issue that leaves it as it is.
fn plan_cluster(
    inputs: &Inputs<'_>,
    located: &Located,
    secrets: &CredentialSecrets<'_>,
    plan: &mut Plan,
    profile: &ClusterProfile,
    lookup: &Lookup,
) {
    let key = profile.key();
    let name = profile.metadata.name.as_deref().unwrap_or_default();
    if secret_name(name).len() > MAX_NAME {
        let detail = format!("{} characters", name.len());
        plan.isolate(inputs.observed, &key, Cause::NameTooLong, detail);
        return;
    }
    if let Some(detail) = copied_labels_out_of_bounds(inputs.spec, profile) {
        plan.isolate(inputs.observed, &key, Cause::TooManyLabels, detail);
        return;
    }
    match properties::facts(&inputs.spec.properties, profile) {
        Err(detail) => {
            plan.isolate(inputs.observed, &key, Cause::BadProperties, detail);
            return;
        }
        Ok(f) if !f.unlabelled.is_empty() => {
            plan.unlabelled.insert(key.clone(), f.unlabelled);
        }
        Ok(_) => {}
    }
    let pause = located.unhealthy_paused.contains(&key);
    let source = match lookup {
        Lookup::Found(source) => source,
        Lookup::Unusable(problem) => {
            let cause = Cause::Credentials(problem.cause());
            plan.isolate(inputs.observed, &key, cause, problem.to_string());
            return;
        }
    };
    match material_for(inputs, secrets, profile, source) {
        Ok((material, inv, notice)) => {
            if let Some(notice) = notice {
                plan.notices.insert(key.clone(), notice);
            }
            note_renewal(inputs, plan, profile, source, &material);
            // Only apply writes, and only what differs from what exists: a plan keeps the entries, not ten
            // thousand kubeconfigs and objects (not even built).
            let build = if inputs.phase == Phase::Apply {
                desired
            } else {
                desired_entry
            };
            // Not for a cluster whose renewal is judged on its kubeconfig: a plan checks it in full.
            if inputs.phase == Phase::Apply
                && let Material::Bytes { .. } = material
                && renewal_of(inputs.spec, &key).is_none()
                && let Some(src) = source_sha256(source, &inputs.spec.credentials, secrets)
            {
                plan.checked_sources.insert(key.clone(), src);
            }
            if let Material::Recorded { .. } = material {
                plan.recorded_checks += 1;
            }
            let d = build(inputs.spec, profile, source, &material, pause);
            let mint = material == Material::Pending && inv.is_some();
            if mint && let Some(inv) = inv {
                plan.exec.insert(key.clone(), inv);
            }
            if pause {
                plan.health_paused.insert(key.clone());
            }
            let current = inputs.observed.owned.get(&key).map(|b| &**b);
            let d = match (inputs.phase == Phase::Apply).then(|| differs(&d, current, mint)) {
                Some(Some((secret, stale))) if inputs.pack => {
                    let packed =
                        Packed::pack(secret, d.sveltos_cluster.as_deref().filter(|_| stale));
                    DesiredCluster {
                        packed: Some(Box::new(packed)),
                        ..d.entry_only()
                    }
                }
                Some(Some(_)) => d,
                _ => d.entry_only(),
            };
            plan.desired.insert(key, d);
        }
        Err(problem) => {
            let cause = Cause::Credentials(problem.cause());
            plan.isolate(inputs.observed, &key, cause, problem.to_string());
        }
    }
}

/// Records in `plan.renewal_notes` why Sveltos will not renew cluster `profile`'s credential as configured, if it
/// will not (`crate::domain::desired::desired` leaves renewal out where it is withheld).
fn note_renewal(
    inputs: &Inputs<'_>,
    plan: &mut Plan,
    profile: &ClusterProfile,
    source: &CredentialSource,
    material: &Material,
) {
    let key = profile.key();
    let Some(r) = renewal_of(inputs.spec, &key) else {
        return;
    };
    match judge(r, profile, source, material.bytes()) {
        Verdict::Renewable => {}
        Verdict::Withheld(why) => {
            plan.renewal_notes.insert(key, (true, why));
        }
        Verdict::NotRenewed(why) => {
            plan.renewal_notes.insert(key, (false, why));
        }
    }
}

fn check_override_keys(inputs: &Inputs<'_>, plan: &mut Plan) {
    for k in inputs.spec.overrides.keys() {
        if !k.contains('/') {
            plan.problems.push(Problem::error(
                vec![Step::Attr("overrides"), Step::Key(k.clone())],
                "Invalid override key",
                format!("overrides key {k:?} must be \"namespace/name\" of a ClusterProfile."),
            ));
        } else if !inputs.profiles.iter().any(|p| p.key() == *k) {
            plan.problems.push(Problem::warning(
                vec![Step::Attr("overrides"), Step::Key(k.clone())],
                "Override for an unknown ClusterProfile",
                format!("No ClusterProfile {k} exists; this override has no effect."),
            ));
        }
    }
}

/// Clusters whose SveltosCluster or Secret name is taken by an object this bridge does not own are left as
/// they are (unless `adopt`).
fn isolate_collisions(inputs: &Inputs<'_>, plan: &mut Plan) {
    let spec = inputs.spec;
    if spec.adopt {
        return;
    }
    let mut collided = Vec::new();
    for (key, d) in &plan.desired {
        let secret_id = d.entry.secret.clone().unwrap_or_default();
        let mut why = Vec::new();
        for (kind, id, foreign) in [
            ("SveltosCluster", key, &inputs.observed.foreign_clusters),
            ("Secret", &secret_id, &inputs.observed.foreign_secrets),
        ] {
            if let Some(owner) = foreign.get(id) {
                let who = match owner {
                    Some(o) if *o == spec.name => {
                        "carries this bridge's label but was not created by it".to_string()
                    }
                    Some(o) => format!("is managed by bridge {o:?}"),
                    None => "was not created by this provider".to_string(),
                };
                why.push(format!("{kind} {id} {who}"));
            }
        }
        if !why.is_empty() {
            collided.push((key.clone(), why.join("; ")));
        }
    }
    for (key, why) in collided {
        plan.isolate(inputs.observed, &key, Cause::Collision, why);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::plan::fixture::*;

    #[test]
    fn a_name_too_long_for_the_secret_and_an_unreadable_profile_are_their_clusters_problems() {
        let mut f = Fixture::new();
        let long = "x".repeat(240);
        f.profiles.push(profile("a", &long, &[]));
        f.secrets.push(labelled_secret(
            "a",
            "s3",
            &long,
            None,
            &[("Config", KUBECONFIG)],
        ));
        // b/c1 is bridged, then its profile stops decoding.
        let p = f.run();
        f.observed = observed_after(&p, "main");
        f.profiles.retain(|p| p.key() != "b/c1");
        let undecodable = BTreeMap::from([("b/c1".to_string(), "bad timestamp".to_string())]);
        let p = f.run_with(&undecodable);
        assert!(p.desired.contains_key("a/c1"));
        assert!(!p.desired.contains_key(&format!("a/{long}")));
        assert!(p.kept.contains_key("b/c1"), "kept, not deregistered");
        assert!(p.removals.is_empty(), "{:?}", p.removals);
        let causes: Vec<Cause> = p.issues.iter().map(|i| i.cause).collect();
        assert!(causes.contains(&Cause::NameTooLong) && causes.contains(&Cause::Undecodable));
        assert!(!p.has_errors());
    }

    /// `token_renewal` without `service_account` over a static token (a/c1) and a kubeconfig that needs
    /// `insecure-skip-tls-verify` (b/c1): a/c1 is renewed as configured and named by one warning, b/c1 registered
    /// without renewal and named by another; no credential byte in either.
    #[test]
    fn renewal_sveltos_cannot_do_is_named_per_cluster() {
        let mut f = Fixture::new();
        f.spec.token_renewal = Some(crate::domain::TokenRenewal {
            interval: "1h".into(),
            token_duration: None,
            sa_namespace: None,
            sa_name: None,
        });
        let insecure = KUBECONFIG.replace(
            "server: https://127.0.0.1:1\n",
            "server: https://127.0.0.1:1\n    insecure-skip-tls-verify: true\n",
        );
        f.secrets[1] = labelled_secret("b", "s2", "c1", None, &[("config", &insecure)]);
        let p = f.run();
        let option = |k: &str| {
            let sc = p.desired[k].sveltos_cluster.as_ref().unwrap();
            let ann = sc.metadata.annotations.as_ref().unwrap();
            (
                sc.spec.token_request_renewal_option.is_some(),
                ann.contains_key(crate::domain::TOKEN_RENEWAL_ANNOTATION),
            )
        };
        assert_eq!(option("a/c1"), (true, true));
        assert_eq!(option("b/c1"), (false, false), "renewal withheld");
        let warning = |summary: &str| {
            p.problems
                .iter()
                .find(|x| x.summary.contains(summary))
                .unwrap_or_else(|| panic!("no {summary:?} in {:?}", p.problems))
        };
        let not_renewed =
            warning("1 ClusterProfile(s): token_renewal set, but Sveltos will not renew");
        assert!(
            not_renewed
                .detail
                .contains("- a/c1: its token is not a ServiceAccount token")
        );
        let withheld = warning("1 ClusterProfile(s): token_renewal not enabled");
        assert!(
            withheld
                .detail
                .contains("- b/c1: its connection needs insecure-skip-tls-verify")
        );
        for x in &p.problems {
            assert_eq!(x.severity, Severity::Warning, "{x:?}");
            assert!(!x.detail.contains("canary-secret-token"), "{x:?}");
        }
        // With service_account, a/c1 is renewable; b/c1 still withheld.
        f.spec.token_renewal.as_mut().unwrap().sa_namespace = Some("kube-system".into());
        f.spec.token_renewal.as_mut().unwrap().sa_name = Some("sveltos".into());
        let p = f.run();
        assert_eq!(p.renewal_notes.keys().collect::<Vec<_>>(), ["b/c1"]);
    }

    #[test]
    fn a_profile_with_more_labels_than_the_bridge_copies_is_its_clusters_problem() {
        let mut f = Fixture::new();
        // b/c1 is bridged, then grows 65 labels: kept as it is. a/c9 never was: not registered.
        let p = f.run();
        f.observed = observed_after(&p, "main");
        let many: Vec<(String, String)> = (0..=crate::domain::desired::MAX_COPIED_LABELS)
            .map(|i| (format!("team.example.com/l{i}"), "v".to_string()))
            .collect();
        let many: Vec<(&str, &str)> = many.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        for p in f.profiles.iter_mut().filter(|p| p.key() == "b/c1") {
            *p = profile("b", "c1", &many);
        }
        f.profiles.push(profile("a", "c9", &many));
        f.secrets.push(labelled_secret(
            "a",
            "s9",
            "c9",
            None,
            &[("Config", KUBECONFIG)],
        ));
        let p = f.run();
        assert!(p.kept.contains_key("b/c1"), "kept, not deregistered");
        assert!(!p.desired.contains_key("a/c9") && !p.desired.contains_key("b/c1"));
        assert!(p.desired.contains_key("a/c1"), "the rest is planned");
        assert!(p.removals.is_empty(), "{:?}", p.removals);
        let issues: Vec<&ClusterIssue> = p
            .issues
            .iter()
            .filter(|i| i.cause == Cause::TooManyLabels)
            .collect();
        assert_eq!(issues.len(), 2, "{:?}", p.issues);
        assert!(
            issues[0].detail.contains("65 labels"),
            "{}",
            issues[0].detail
        );
        assert!(!p.has_errors());
    }

    #[test]
    fn a_bad_property_keeps_its_cluster_and_a_value_without_label_is_a_warning() {
        let set = |f: &mut Fixture, i: usize, props: &[(&str, &str)]| {
            let status = f.profiles[i].status.get_or_insert_with(Default::default);
            status.properties = props
                .iter()
                .map(|(n, v)| crate::api::Property {
                    name: n.to_string(),
                    value: v.to_string(),
                    ..Default::default()
                })
                .collect();
        };
        let mut f = Fixture::new();
        f.spec.properties.names = vec!["location".into()];
        set(&mut f, 0, &[("location", "eu-west-1")]);
        set(&mut f, 1, &[("location", "us-east-1")]);
        let p = f.run();
        assert!(
            p.problems.iter().all(|x| x.severity != Severity::Error),
            "{:?}",
            p.problems
        );
        let label = "property.clusterinventory.io/location";
        assert_eq!(p.desired["a/c1"].entry.labels[label], "eu-west-1");
        f.observed = observed_after(&p, "main");
        // b/c1 reports its property twice: kept as it is. a/c1's value is no label value: registered without
        // the label, its spec.data holding the value, and a warning naming it.
        set(
            &mut f,
            1,
            &[("location", "us-east-1"), ("location", "eu-west-1")],
        );
        set(&mut f, 0, &[("location", "eu west 1")]);
        let p = f.run();
        assert!(p.kept.contains_key("b/c1") && !p.desired.contains_key("b/c1"));
        assert_eq!(p.kept["b/c1"].labels[label], "us-east-1", "kept as it is");
        assert!(p.removals.is_empty());
        let issue = p.issues.iter().find(|i| i.key == "b/c1").unwrap();
        assert_eq!(issue.cause, Cause::BadProperties);
        assert!(
            issue
                .detail
                .contains("\"location\" is reported more than once"),
            "{}",
            issue.detail
        );
        let a = &p.desired["a/c1"];
        assert!(!a.entry.labels.contains_key(label), "{:?}", a.entry.labels);
        assert_eq!(a.entry.managed.data["location"], "eu west 1");
        let w = p
            .problems
            .iter()
            .find(|x| x.summary.contains("not a valid label value"))
            .unwrap();
        assert_eq!(w.severity, Severity::Warning);
        assert_eq!(w.path, vec![Step::Attr("copy_properties")]);
        assert!(
            w.detail.contains("- a/c1: location = \"eu west 1\""),
            "{}",
            w.detail
        );
        assert!(!w.detail.contains("b/c1"), "{}", w.detail);
        let bad = p
            .problems
            .iter()
            .find(|x| x.summary.contains("cannot be mapped"))
            .unwrap();
        assert_eq!(
            (bad.severity, bad.path.clone()),
            (Severity::Warning, vec![Step::Attr("copy_properties")])
        );
        assert!(
            bad.detail.contains("b/c1 (kept as it is)"),
            "{}",
            bad.detail
        );
        f.spec.strict = true;
        assert!(f.run().has_errors());
    }

    #[test]
    fn an_unreadable_object_or_credential_secret_is_its_clusters_problem() {
        use crate::domain::{credentials::UNREADABLE_MARK, ownership::Kind};
        let mut f = Fixture::new();
        let p = f.run();
        f.observed = observed_after(&p, "main");
        // b/c1's SveltosCluster stops decoding and its profile goes: kept as it is, never deregistered for it.
        let uid = f.observed.owned["b/c1"]
            .sveltos_cluster
            .as_ref()
            .unwrap()
            .uid
            .clone();
        let meta = k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            namespace: Some("b".into()),
            name: Some("c1".into()),
            uid,
            ..Default::default()
        };
        let ledger = crate::domain::ownership::Ledger::trusting();
        f.observed
            .add_unreadable(&ledger, Kind::SveltosCluster, &meta, "recursion limit");
        f.profiles.retain(|p| p.key() != "b/c1");
        // a/c1's credential Secret does not decode either.
        f.secrets[0].metadata.annotations = Some(BTreeMap::from([(
            UNREADABLE_MARK.into(),
            "invalid type".into(),
        )]));
        let p = f.run();
        assert!(p.desired.is_empty(), "{:?}", p.desired.keys());
        assert!(p.kept.contains_key("a/c1") && p.kept.contains_key("b/c1"));
        assert!(p.removals.is_empty(), "{:?}", p.removals);
        let issue = |key: &str| p.issues.iter().find(|i| i.key == key).unwrap();
        assert_eq!(issue("b/c1").cause, Cause::UnreadableObject);
        assert!(
            issue("b/c1")
                .detail
                .contains("SveltosCluster b/c1 cannot be read: recursion limit")
        );
        assert_eq!(
            issue("a/c1").cause,
            Cause::Credentials("a credential Secret cannot be read")
        );
        assert!(
            issue("a/c1")
                .detail
                .contains("a/s1 cannot be read: invalid type"),
            "{}",
            issue("a/c1").detail
        );
        assert!(!p.has_errors());
        f.spec.strict = true;
        assert!(f.run().has_errors());
    }

    #[test]
    fn only_a_plan_made_for_apply_holds_the_objects() {
        let mut f = Fixture::new();
        for phase in [Phase::Plan, Phase::Replan, Phase::Apply] {
            f.phase = phase;
            let p = f.run();
            assert_eq!(p.desired.len(), 2);
            let with_objects = p
                .desired
                .values()
                .all(|d| d.sveltos_cluster.is_some() && d.secret.is_some());
            let without = p
                .desired
                .values()
                .all(|d| d.sveltos_cluster.is_none() && d.secret.is_none());
            assert!(
                if phase == Phase::Apply {
                    with_objects
                } else {
                    without
                },
                "{phase:?}"
            );
            // The entries are the same in every phase.
            f.phase = Phase::Apply;
            assert_eq!(p.entries(), f.run().entries(), "{phase:?}");
        }
    }

    #[test]
    fn same_name_in_two_namespaces_are_two_clusters() {
        let p = Fixture::new().run();
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        assert_eq!(p.entries().keys().collect::<Vec<_>>(), ["a/c1", "b/c1"]);
    }

    #[test]
    fn collisions_are_isolated_to_their_cluster() {
        let mut f = Fixture::new();
        f.profiles.push(profile("a", "c2", &[]));
        f.secrets.push(labelled_secret(
            "a",
            "s3",
            "c2",
            None,
            &[("Config", KUBECONFIG)],
        ));
        f.observed.foreign_clusters.insert("a/c1".into(), None);
        f.observed
            .foreign_secrets
            .insert("b/c1-sveltos-kubeconfig".into(), Some("other".into()));
        let p = f.run();
        assert!(!p.has_errors(), "{:?}", p.problems);
        assert_eq!(
            p.desired.keys().collect::<Vec<_>>(),
            ["a/c2"],
            "the others are still planned"
        );
        let w: Vec<_> = p
            .problems
            .iter()
            .filter(|p| p.path == vec![Step::Attr("adopt")])
            .collect();
        assert_eq!(w.len(), 1, "one diagnostic per cause: {w:?}");
        assert_eq!(w[0].severity, Severity::Warning);
        assert!(w[0].summary.starts_with("2 ClusterProfile(s)"), "{w:?}");
        assert!(
            w[0].detail.contains("SveltosCluster a/c1") && w[0].detail.contains("bridge \"other\""),
            "{w:?}"
        );
        f.spec.strict = true;
        assert!(f.run().has_errors());
        f.spec.strict = false;
        f.spec.adopt = true;
        assert_eq!(f.run().desired.len(), 3);
    }

    #[test]
    fn missing_credentials_warn_or_fail_and_keep_existing() {
        let mut f = Fixture::new();
        f.secrets.pop();
        let p = f.run();
        assert_eq!(p.entries().len(), 1);
        assert!(
            p.problems
                .iter()
                .any(|x| x.severity == Severity::Warning && x.detail.contains("b/c1")),
            "{:?}",
            p.problems
        );
        f.spec.require_credentials = true;
        assert!(f.run().has_errors());
        // Already bridged: kept (never deleted because a credential went missing), even with require_credentials.
        let mut f = Fixture::new();
        let observed = observed_after(&f.run(), "main");
        f.secrets.pop();
        f.observed = observed.clone();
        f.spec.require_credentials = true;
        let p = f.run();
        assert!(p.kept.contains_key("b/c1"));
        assert!(!p.has_errors(), "{:?}", p.problems);
        let (_, deletes) = actions(&p, &observed);
        assert!(deletes.is_empty());
    }

    #[test]
    fn ambiguous_secrets_keep_the_bridged_cluster_and_name_both() {
        let mut f = Fixture::new();
        f.observed = observed_after(&f.run(), "main");
        f.secrets.push(labelled_secret(
            "a",
            "s9",
            "c1",
            None,
            &[("Config", KUBECONFIG)],
        ));
        let p = f.run();
        assert!(!p.has_errors());
        let (writes, deletes) = actions(&p, &f.observed);
        assert!(
            writes.is_empty() && deletes.is_empty(),
            "a/c1 is kept exactly as it is"
        );
        assert_eq!(p.kept.keys().collect::<Vec<_>>(), ["a/c1"]);
        let w = p
            .problems
            .iter()
            .find(|x| x.summary.contains("two or more"))
            .unwrap();
        assert!(
            w.detail.contains("a/s1")
                && w.detail.contains("a/s9")
                && w.detail.contains("kept as it is"),
            "{w:?}"
        );
        f.spec.strict = true;
        assert!(f.run().has_errors());
    }

    #[test]
    fn unknown_override_key_warns() {
        let mut f = Fixture::new();
        f.spec
            .overrides
            .insert("x/none".into(), Override::default());
        f.spec.overrides.insert("bad".into(), Override::default());
        let p = f.run();
        assert!(p.problems.iter().any(|x| x.severity == Severity::Warning && x.path[1] == Step::Key("x/none".into())));
        assert!(
            p.problems
                .iter()
                .any(|x| x.severity == Severity::Error && x.path[1] == Step::Key("bad".into()))
        );
    }

    #[test]
    fn skipped_lists_every_cluster_with_an_issue_with_its_cause_and_whether_it_is_kept() {
        let mut f = fixture::Fixture::new();
        assert!(f.run().skipped().is_empty());
        // Bridged, then b/c1 loses its Secret: kept as it is.
        f.observed = fixture::observed_after(&f.run(), "main");
        f.secrets.truncate(1);
        // And a new profile without any Secret: not registered.
        f.profiles
            .push(crate::domain::testutil::profile("c", "new", &[]));
        let skipped = f.run().skipped();
        assert_eq!(
            skipped.keys().collect::<Vec<_>>(),
            ["b/c1", "c/new"],
            "{skipped:?}"
        );
        assert!(skipped["b/c1"].kept && !skipped["c/new"].kept);
        assert_eq!(
            skipped["c/new"].cause,
            f.run()
                .issues
                .iter()
                .find(|i| i.key == "c/new")
                .unwrap()
                .cause
                .describe()
        );
        assert!(!skipped["c/new"].cause.is_empty());
    }
}
