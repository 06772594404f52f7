//! Planning: which profiles are bridged, with which credential, what the result looks like in state, and
//! which writes and deletes apply has to make. Pure: the caller supplies everything read from the cluster.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Secret;

use super::{
    BridgeSpec, Selection, UnhealthyPolicy,
    credentials::{
        CheckedKubeconfigs, CredentialProblem, CredentialSecrets, CredentialSource, Lookup,
        Resolved, SecretIndex, locate, material::secrets_to_read, resolve,
    },
    desired::{ClusterEntry, DesiredCluster, Material, desired, renewal_of, secret_name},
    exec::{ExecInvocation, ProvidersFile},
    is_healthy,
    observed::World,
    selection_miss, sha256_hex, unhealthy_reason,
};
use crate::api::{ClusterProfile, SveltosCluster};

pub use super::problem::{Problem, Severity, Step};

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

impl Phase {
    fn margin(self, refresh_before: std::time::Duration) -> jiff::SignedDuration {
        let rb =
            jiff::SignedDuration::try_from(refresh_before).unwrap_or(jiff::SignedDuration::MAX);
        match self {
            Self::Plan => rb.checked_mul(2).unwrap_or(jiff::SignedDuration::MAX),
            Self::Replan => rb,
            Self::Apply => jiff::SignedDuration::ZERO,
        }
    }
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
    pub world: &'a World,
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
}

/// The longest object name the API server accepts (a DNS-1123 subdomain).
const MAX_NAME: usize = 253;

/// No undecodable ClusterProfiles (for [`Inputs::undecodable`]).
pub static NO_UNDECODABLE: BTreeMap<String, String> = BTreeMap::new();

/// A located credential per selected profile (first planning phase).
#[derive(Debug, Clone, Default)]
pub struct Located {
    /// `(profile index in Inputs::profiles, lookup)` for every selected, non-skipped profile.
    pub lookups: Vec<(usize, Lookup)>,
    /// Profiles not selected, by key, with the reason.
    pub unselected: BTreeMap<String, String>,
    /// Bridged clusters whose profile is not healthy, kept registered as they are (`unhealthy = "keep"`).
    pub unhealthy_kept: BTreeSet<String>,
    /// Bridged clusters whose profile is not healthy, paused (`unhealthy = "pause"`).
    pub unhealthy_paused: BTreeSet<String>,
}

impl Located {
    /// Secrets named by `kubeconfig-secretreader` providers, which the caller must read (`namespace/name`).
    pub fn secrets_to_read(&self) -> BTreeSet<(String, String)> {
        secrets_to_read(self.lookups.iter().map(|(_, l)| l))
    }
}

/// The objects a plan may create: for every selected profile, its SveltosCluster and Secret (`namespace`,
/// `name`) unless this bridge already owns them. Only these can collide with objects someone else made, so only
/// these need checking; a plan that creates nothing checks nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CreationTargets {
    /// SveltosClusters not owned yet.
    pub clusters: BTreeSet<(String, String)>,
    /// Secrets not owned yet.
    pub secrets: BTreeSet<(String, String)>,
}

impl CreationTargets {
    /// Whether there is nothing to check.
    pub fn is_empty(&self) -> bool {
        self.clusters.is_empty() && self.secrets.is_empty()
    }

    /// Number of objects to check.
    pub fn len(&self) -> usize {
        self.clusters.len() + self.secrets.len()
    }

    /// The namespaces involved.
    pub fn namespaces(&self) -> BTreeSet<String> {
        self.clusters
            .iter()
            .chain(&self.secrets)
            .map(|(ns, _)| ns.clone())
            .collect()
    }
}

impl Located {
    /// What a plan over these lookups may create that `world` does not show as ours.
    pub fn creation_targets(&self, profiles: &[ClusterProfile], world: &World) -> CreationTargets {
        let mut out = CreationTargets::default();
        for (i, _) in &self.lookups {
            let p = &profiles[*i];
            let ns = p.metadata.namespace.clone().unwrap_or_default();
            let name = p.metadata.name.clone().unwrap_or_default();
            let owned = world.owned.get(&p.key());
            if owned.is_none_or(|o| o.sveltos_cluster.is_none()) {
                out.clusters.insert((ns.clone(), name.clone()));
            }
            if owned.is_none_or(|o| o.secret.is_none()) {
                out.secrets.insert((ns, secret_name(&name)));
            }
        }
        out
    }
}

/// First phase: select profiles and locate their credentials. With `require_healthy`, health gates
/// registration, not existence: an unhealthy profile is not registered, but an already bridged cluster whose
/// profile turns unhealthy follows `unhealthy` (kept, paused or removed).
pub fn locate_all(inputs: &Inputs<'_>) -> Located {
    let spec = inputs.spec;
    let index = SecretIndex::new(
        inputs.credential_secrets,
        &spec.credentials,
        inputs.namespace_labels,
    );
    let mut out = Located::default();
    let health_blind = Selection {
        require_healthy: false,
        ..spec.selection.clone()
    };
    for (i, p) in inputs.profiles.iter().enumerate() {
        let key = p.key();
        if let Some(reason) = selection_miss(&health_blind, p) {
            out.unselected.insert(key, reason);
            continue;
        }
        if spec.overrides.get(&key).is_some_and(|o| o.skip) {
            out.unselected.insert(key, "skipped by overrides".into());
            continue;
        }
        if spec.selection.require_healthy && !is_healthy(p) {
            let bridged = inputs.world.owned.contains_key(&key);
            match spec.unhealthy {
                UnhealthyPolicy::Keep if bridged => {
                    out.unhealthy_kept.insert(key);
                    continue;
                }
                UnhealthyPolicy::Pause if bridged => {
                    out.unhealthy_paused.insert(key);
                }
                _ => {
                    out.unselected.insert(key, unhealthy_reason());
                    continue;
                }
            }
        }
        out.lookups
            .push((i, locate(p, &spec.credentials, inputs.providers, &index)));
    }
    out
}

/// Why one cluster was left as it is (or not registered) while the others were planned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterIssue {
    /// Profile key.
    pub key: String,
    /// The cause, shared by every cluster with the same problem (diagnostics are grouped by it).
    pub cause: Cause,
    /// This cluster's specifics (object names, fields), never credential content.
    pub detail: String,
    /// Whether the cluster's existing bridged objects are kept (false: it is not registered).
    pub kept: bool,
}

/// The cause of a [`ClusterIssue`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Cause {
    /// A credential problem ([`CredentialProblem::cause`]).
    Credentials(&'static str),
    /// An object this bridge does not own stands where it would write.
    Collision,
    /// The profile is not healthy (`require_healthy`); the cluster is kept or paused.
    Unhealthy,
    /// At apply: the profile changed between plan and apply.
    ChangedSincePlan,
    /// The ClusterProfile's name is too long for the name of the Secret the bridge would write next to it.
    NameTooLong,
    /// The ClusterProfile as stored does not decode (its writer stored a value the API server's schema admits
    /// and the bridge cannot read, such as a malformed timestamp).
    Undecodable,
}

impl Cause {
    fn describe(self) -> &'static str {
        match self {
            Self::Credentials(c) => c,
            Self::Collision => "an object this bridge does not own has the name it would write",
            Self::Unhealthy => "the ClusterProfile is not healthy",
            Self::ChangedSincePlan => "the ClusterProfile changed since plan",
            Self::Undecodable => "the ClusterProfile cannot be read",
            Self::NameTooLong => {
                "the ClusterProfile's name is too long for its kubeconfig Secret's name"
            }
        }
    }

    fn hint(self) -> &'static str {
        match self {
            Self::Credentials(_) => {
                "Fix the credential source of each listed ClusterProfile (see the sveltos_clusterprofile data \
                 source's credential_source), or exclude it with overrides[\"<namespace>/<name>\"].skip = true."
            }
            Self::Collision => {
                "Nothing was written to those objects. Set adopt = true to take them over, or exclude the \
                 ClusterProfiles with overrides[\"<namespace>/<name>\"].skip = true."
            }
            Self::Unhealthy => {
                "They stay registered (unhealthy = \"keep\") or paused (unhealthy = \"pause\") until healthy \
                 again; unhealthy = \"remove\" deregisters them."
            }
            Self::ChangedSincePlan => {
                "Nothing was written for them; every other cluster was applied. Run plan again."
            }
            Self::Undecodable => {
                "They are kept as they are (or stay unregistered) until their writer fixes the field named."
            }
            Self::NameTooLong => {
                "The Secret is named <name>-sveltos-kubeconfig and a name has at most 253 characters: such a \
                 ClusterProfile cannot be bridged. Exclude it with overrides[\"<namespace>/<name>\"].skip = true."
            }
        }
    }
}

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
}

impl Plan {
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

    /// Leaves one cluster as it is: its existing objects are kept (no write, no delete), or, when it has none,
    /// it is not registered.
    pub fn isolate(&mut self, world: &World, key: &str, cause: Cause, detail: String) {
        self.desired.remove(key);
        self.exec.remove(key);
        self.health_paused.remove(key);
        let existing = world.owned.get(key);
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

/// Hash identifying an exec plugin run (command, args, env, cluster info); a change forces a new credential.
pub fn invocation_sha256(inv: &ExecInvocation) -> String {
    let doc = serde_json::json!([inv.command, inv.args, inv.env, inv.exec_info]);
    sha256_hex(doc.to_string().as_bytes())
}

/// How many clusters a grouped diagnostic names before it gives a count.
pub const LISTED: usize = 20;

/// A list of names for a diagnostic: the first [`LISTED`], then how many more.
pub fn name_list<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.into_iter().collect();
    let mut out: Vec<String> = names.iter().take(LISTED).map(|n| n.to_string()).collect();
    if names.len() > LISTED {
        out.push(format!("and {} more", names.len() - LISTED));
    }
    out.join(", ")
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
        let profile = &inputs.profiles[*i];
        let key = profile.key();
        let name = profile.metadata.name.as_deref().unwrap_or_default();
        if secret_name(name).len() > MAX_NAME {
            let detail = format!("{} characters", name.len());
            plan.isolate(inputs.world, &key, Cause::NameTooLong, detail);
            continue;
        }
        let pause = located.unhealthy_paused.contains(&key);
        let source = match lookup {
            Lookup::Found(source) => source,
            Lookup::Unusable(problem) => {
                let cause = Cause::Credentials(problem.cause());
                plan.isolate(inputs.world, &key, cause, problem.to_string());
                continue;
            }
        };
        match material_for(inputs, &secrets, profile, source) {
            Ok((material, inv)) => {
                let d = desired(inputs.spec, profile, source, &material, pause);
                let mint = material == Material::Pending && inv.is_some();
                if mint && let Some(inv) = inv {
                    plan.exec.insert(key.clone(), inv);
                }
                if pause {
                    plan.health_paused.insert(key.clone());
                }
                // Only apply writes, and only what differs from what exists: a plan keeps the entries, not ten
                // thousand kubeconfigs and objects.
                let writes = inputs.phase == Phase::Apply
                    && differs(&d, inputs.world.owned.get(&key), mint).is_some();
                let d = if writes { d } else { d.entry_only() };
                plan.desired.insert(key, d);
            }
            Err(problem) => {
                let cause = Cause::Credentials(problem.cause());
                plan.isolate(inputs.world, &key, cause, problem.to_string());
            }
        }
    }
    for key in &located.unhealthy_kept {
        plan.isolate(
            inputs.world,
            key,
            Cause::Unhealthy,
            "kept registered".into(),
        );
    }
    for (key, why) in inputs.undecodable {
        plan.isolate(inputs.world, key, Cause::Undecodable, why.clone());
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
    plan.removals = inputs
        .world
        .owned
        .keys()
        .filter(|k| !plan.desired.contains_key(*k) && !plan.kept.contains_key(*k))
        .cloned()
        .collect();
    report(inputs, &mut plan);
    plan
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

/// Turns the plan's per-cluster issues, removals and impostors into grouped diagnostics.
fn report(inputs: &Inputs<'_>, plan: &mut Plan) {
    let spec = inputs.spec;
    let mut by_cause: BTreeMap<Cause, Vec<&ClusterIssue>> = BTreeMap::new();
    for issue in &plan.issues {
        by_cause.entry(issue.cause).or_default().push(issue);
    }
    let mut problems: Vec<Problem> = by_cause
        .into_iter()
        .map(|(cause, issues)| cause_problem(spec, cause, issues))
        .collect();
    problems.extend(impostors_problem(inputs));
    problems.extend(removals_problem(spec, &plan.removals));
    plan.problems.extend(problems);
}

/// One diagnostic for every cluster with the same cause, listing the first [`LISTED`].
fn cause_problem(spec: &BridgeSpec, cause: Cause, mut issues: Vec<&ClusterIssue>) -> Problem {
    issues.sort_by(|a, b| a.key.cmp(&b.key));
    let error = match cause {
        Cause::Unhealthy => false,
        Cause::ChangedSincePlan => true,
        Cause::Credentials(_) => {
            spec.strict || (spec.require_credentials && issues.iter().any(|i| !i.kept))
        }
        Cause::Collision | Cause::Undecodable | Cause::NameTooLong => spec.strict,
    };
    let kept = issues.iter().filter(|i| i.kept).count();
    let lines: Vec<String> = issues
        .iter()
        .take(LISTED)
        .map(|i| {
            let state = if i.kept {
                "kept as it is"
            } else {
                "not registered"
            };
            format!("- {} ({state}): {}", i.key, i.detail)
        })
        .collect();
    let more = issues
        .len()
        .checked_sub(LISTED)
        .filter(|n| *n > 0)
        .map(|n| format!("\n- and {n} more"))
        .unwrap_or_default();
    let after = if error {
        if spec.strict {
            "strict = true makes this an error: nothing was written."
        } else {
            "require_credentials = true makes this an error: nothing was written."
        }
    } else {
        "Every other cluster is planned normally. Set strict = true to make this an error."
    };
    let summary = format!(
        "{} ClusterProfile(s): {} ({kept} kept as they are)",
        issues.len(),
        cause.describe()
    );
    let detail = format!("{}{more}\n\n{} {after}", lines.join("\n"), cause.hint());
    let path = match cause {
        Cause::Credentials(_) => vec![Step::Attr("credentials")],
        Cause::Collision => vec![Step::Attr("adopt")],
        Cause::Unhealthy => vec![Step::Attr("require_healthy")],
        Cause::ChangedSincePlan | Cause::Undecodable | Cause::NameTooLong => vec![],
    };
    if error {
        Problem::error(path, summary, detail)
    } else {
        Problem::warning(path, summary, detail)
    }
}

/// The warning for objects that carry this bridge's ownership label without being its own.
fn impostors_problem(inputs: &Inputs<'_>) -> Option<Problem> {
    let impostors = &inputs.world.impostors;
    (!impostors.is_empty()).then(|| {
        Problem::warning(
            vec![Step::Attr("name")],
            format!(
                "{} object(s) carry the ownership label of bridge {:?} but were not created by it",
                impostors.len(),
                inputs.spec.name
            ),
            format!(
                "{}. The bridge never updates or deletes them. If they are really this bridge's (for example \
                 after the state was lost), take them over with `terraform import`.",
                name_list(impostors.iter().map(String::as_str))
            ),
        )
    })
}

/// The warning for the clusters this plan deregisters, or the error when they are more than `max_removals`.
fn removals_problem(spec: &BridgeSpec, removals: &[String]) -> Option<Problem> {
    if removals.is_empty() {
        return None;
    }
    let n = removals.len();
    let names = name_list(removals.iter().map(String::as_str));
    Some(match spec.max_removals {
        Some(max) if n > max => Problem::error(
            vec![Step::Attr("max_removals")],
            format!("This plan would deregister {n} clusters, more than max_removals = {max}"),
            format!(
                "Deregistering a cluster makes Sveltos withdraw its add-ons. Clusters: {names}. Nothing was \
                 written. If this is intended, raise max_removals; otherwise check label_selector, \
                 namespaces and names."
            ),
        ),
        _ => Problem::warning(
            vec![],
            format!("This plan deregisters {n} cluster(s)"),
            format!(
                "{names}. Sveltos withdraws their add-ons once their SveltosClusters are gone. Set \
                 max_removals to cap how many one plan may deregister."
            ),
        ),
    })
}

type MaterialAndRun = (Material, Option<ExecInvocation>);

fn material_for(
    inputs: &Inputs<'_>,
    secrets: &CredentialSecrets<'_>,
    profile: &ClusterProfile,
    source: &CredentialSource,
) -> Result<MaterialAndRun, CredentialProblem> {
    let opts = &inputs.spec.credentials;
    let inv = match resolve(profile, source, opts, inputs.providers, secrets)? {
        Resolved::Kubeconfig(bytes) => {
            return Ok((
                Material::Bytes {
                    bytes,
                    expires_at: None,
                    config_sha256: None,
                },
                None,
            ));
        }
        Resolved::Exec(inv) => inv,
    };
    let inv_sha = invocation_sha256(&inv);
    let existing = inputs
        .world
        .owned
        .get(&profile.key())
        .and_then(|o| o.secret.as_ref());
    if let Some(s) = existing
        && s.credential_source.as_deref() == Some(source.to_string().as_str())
        && s.credential_config_sha256.as_deref() == Some(inv_sha.as_str())
        && let Some(sha) = s.sha(renewal_of(inputs.spec, &profile.key()).is_some())
        && !inputs
            .planned_mints
            .is_some_and(|m| inputs.phase == Phase::Apply && m.contains(&profile.key()))
        && still_fresh(s.expires_at.as_deref(), inputs, opts.refresh_before)
    {
        return Ok((
            Material::Reuse {
                kubeconfig_sha256: sha.clone(),
                expires_at: s.expires_at.clone(),
            },
            None,
        ));
    }
    Ok((Material::Pending, Some(inv)))
}

/// Whether a credential expiring at `expires_at` may be reused now (see [`Phase`] for the margin).
fn still_fresh(
    expires_at: Option<&str>,
    inputs: &Inputs<'_>,
    refresh_before: std::time::Duration,
) -> bool {
    let Some(t) = expires_at else {
        return true;
    };
    let Ok(exp) = t.parse::<jiff::Timestamp>() else {
        return false;
    };
    let margin = inputs.phase.margin(refresh_before);
    inputs
        .now
        .checked_add(margin)
        .is_ok_and(|deadline| exp > deadline)
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
            ("SveltosCluster", key, &inputs.world.foreign_clusters),
            ("Secret", &secret_id, &inputs.world.foreign_secrets),
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
        plan.isolate(inputs.world, &key, Cause::Collision, why);
    }
}

/// At apply: the clusters whose plan-time entry differs from what apply would produce now are left as they are
/// (an error for each, grouped), so that every other cluster is still applied as planned.
pub fn isolate_drift(
    plan: &mut Plan,
    world: &World,
    planned: &BTreeMap<String, Option<ClusterEntry>>,
) {
    let drift = drift_since_plan(planned, &plan.entry_refs());
    if drift.is_empty() {
        return;
    }
    for (key, why) in drift {
        plan.isolate(world, &key, Cause::ChangedSincePlan, why);
        plan.removals.retain(|k| *k != key);
    }
    // A planned cluster that no longer appears at all (its profile deleted) is kept too.
    for key in planned.keys() {
        if !plan.desired.contains_key(key)
            && !plan.kept.contains_key(key)
            && let Some(o) = world.owned.get(key)
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

/// A write apply has to make for one cluster. `Debug` never shows the Secret's data.
#[derive(Clone)]
pub struct Write {
    /// Profile key.
    pub key: String,
    /// Secret to apply first (`None`: keep it, or mint at apply when the key is in [`Plan::exec`]).
    pub secret: Option<Secret>,
    /// SveltosCluster to apply after the Secret (`None`: up to date).
    pub sveltos_cluster: Option<SveltosCluster>,
    /// Mint the credential with this exec run, then apply its Secret.
    pub exec: Option<ExecInvocation>,
    /// The SveltosCluster exists and is adopted (not created by this bridge): clear others' field ownership first,
    /// so that what the bridge later stops setting is really removed.
    pub adopt_sveltos_cluster: bool,
    /// Likewise for the Secret.
    pub adopt_secret: bool,
    /// The profile is unhealthy and the SveltosCluster is paused (`unhealthy = "pause"`).
    pub health_pause: bool,
}

impl std::fmt::Debug for Write {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Write")
            .field("key", &self.key)
            .field("secret", &super::desired::SecretName(&self.secret))
            .field("sveltos_cluster", &self.sveltos_cluster)
            .field("exec", &self.exec)
            .field("adopt_sveltos_cluster", &self.adopt_sveltos_cluster)
            .field("adopt_secret", &self.adopt_secret)
            .field("health_pause", &self.health_pause)
            .finish()
    }
}

/// A delete apply has to make for one cluster (SveltosCluster first, then Secret).
#[derive(Debug, Clone)]
pub struct Delete {
    /// Profile key.
    pub key: String,
    /// `(namespace, name)` of the SveltosCluster, if it exists.
    pub sveltos_cluster: Option<(String, String)>,
    /// `(namespace, name)` of the Secret, if it exists.
    pub secret: Option<(String, String)>,
}

fn split(id: &str) -> (String, String) {
    let (ns, name) = id.split_once('/').unwrap_or(("", id));
    (ns.to_string(), name.to_string())
}

/// What apply must do to turn `world` into `plan`: only objects that differ are written, only owned objects
/// that are no longer wanted are deleted.
///
/// `plan` is a plan made for apply ([`Phase::Apply`]); a plan made in another phase has no objects to write, and
/// passing one is a bug (this panics).
pub fn actions(plan: &Plan, world: &World) -> (Vec<Write>, Vec<Delete>) {
    assert!(
        plan.for_apply,
        "actions() needs a plan made for apply (Phase::Apply)"
    );
    let mut writes = Vec::new();
    for (key, d) in &plan.desired {
        // A cluster without objects was found up to date when planned (see `plan`), against this same `world`:
        // `actions` is only ever given the world its plan was made with.
        let Some(desired_sc) = d.sveltos_cluster.as_ref() else {
            continue;
        };
        let current = world.owned.get(key);
        let cur_sc = current.and_then(|c| c.sveltos_cluster.as_ref());
        let exec = plan.exec.get(key).cloned();
        let Some((secret, sc_stale)) = differs(d, current, exec.is_some()) else {
            continue;
        };
        let mut sc = desired_sc.clone();
        if sc_stale
            && sc.spec.token_request_renewal_option.is_some()
            && let Some(cur) = cur_sc
        {
            leave_renewal_to_sveltos(&mut sc, cur, secret.is_some() || exec.is_some());
        }
        writes.push(Write {
            key: key.clone(),
            secret: secret.cloned(),
            sveltos_cluster: sc_stale.then_some(sc),
            exec,
            adopt_sveltos_cluster: world.foreign_clusters.contains_key(key),
            adopt_secret: d
                .entry
                .secret
                .as_ref()
                .is_some_and(|s| world.foreign_secrets.contains_key(s)),
            health_pause: plan.health_paused.contains(key),
        });
    }
    let deletes = world
        .owned
        .iter()
        .filter(|(k, _)| !plan.desired.contains_key(*k) && !plan.kept.contains_key(*k))
        .map(|(k, o)| Delete {
            key: k.clone(),
            sveltos_cluster: o.sveltos_cluster.as_ref().map(|s| split(&s.id)),
            secret: o.secret.as_ref().map(|s| split(&s.id)),
        })
        .collect();
    (writes, deletes)
}

/// What of `d` (a cluster built with its objects) differs from `current`, what exists and the bridge owns:
/// `None` when nothing does; otherwise the Secret to write (if it differs) and whether the SveltosCluster is
/// stale. `mint`: the credential is minted at apply (its Secret is then written whatever exists).
fn differs<'a>(
    d: &'a DesiredCluster,
    current: Option<&super::observed::Observed>,
    mint: bool,
) -> Option<(Option<&'a Secret>, bool)> {
    let desired_sc = d.sveltos_cluster.as_ref()?;
    let renewed = desired_sc.spec.token_request_renewal_option.is_some();
    let cur_secret = current.and_then(|c| c.secret.as_ref());
    let cur_sc = current.and_then(|c| c.sveltos_cluster.as_ref());
    let secret = d.secret.as_ref().filter(|_| {
        cur_secret.is_none_or(|s| {
            s.sha(renewed).cloned() != d.entry.kubeconfig_sha256
                || s.credential_source.as_deref() != Some(d.entry.credential_source.as_str())
                || s.expires_at != d.entry.credential_expires_at
        })
    });
    let record = desired_sc
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(super::BRIDGE_CONFIG_ANNOTATION));
    let sc_stale = cur_sc.is_none_or(|s| {
        s.labels != d.entry.labels
            || s.config_sha256 != d.entry.config_sha256
            || s.record.as_ref() != record
    });
    // Sveltos renews this cluster's credentials: a rotated source credential is written and the SveltosCluster
    // pointed back at it; otherwise what Sveltos took over on renewal is left to it.
    let rewrite_source = secret.is_some() || mint;
    let sc_stale = sc_stale || (renewed && rewrite_source && cur_sc.is_some());
    (secret.is_some() || mint || sc_stale).then_some((secret, sc_stale))
}

/// For a SveltosCluster whose credentials Sveltos renews: leaves out of the apply body the fields
/// sveltoscluster-manager has taken over by its own updates on renewal (`spec.kubeconfigKeyName`, the renewal
/// interval), so the bridge never reverts them; unless the source credential is rewritten (the SveltosCluster then
/// points at it again) or the renewal settings themselves changed.
fn leave_renewal_to_sveltos(
    sc: &mut SveltosCluster,
    cur: &super::observed::ObservedCluster,
    rewrite_source: bool,
) {
    let wanted = sc
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(super::TOKEN_RENEWAL_ANNOTATION));
    let settings_changed = cur.renewal.as_ref() != wanted;
    if !rewrite_source && !cur.owned_spec.contains("kubeconfigKeyName") {
        sc.spec.kubeconfig_key_name = None;
    }
    if !settings_changed
        && !cur.owned_renewal.contains("renewTokenRequestInterval")
        && let Some(o) = sc.spec.token_request_renewal_option.as_mut()
    {
        o.renew_token_request_interval = String::new();
    }
}

/// Compares what apply is about to produce with what plan promised. Returns the keys that differ, with the
/// first differing field, ignoring values plan left unknown.
pub fn drift_since_plan(
    planned: &BTreeMap<String, Option<ClusterEntry>>,
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
        let field = if p.sveltos_cluster != n.sveltos_cluster || p.secret != n.secret {
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
    use crate::bridge::{
        Override, Selection, UnhealthyPolicy, observed::World, selector::Selector, testutil::*,
    };

    struct Fixture {
        spec: BridgeSpec,
        profiles: Vec<ClusterProfile>,
        secrets: Vec<Secret>,
        ns_labels: BTreeMap<String, BTreeMap<String, String>>,
        world: World,
        providers: Option<ProvidersFile>,
        phase: Phase,
    }

    impl Fixture {
        fn new() -> Self {
            Self {
                spec: BridgeSpec {
                    name: "main".into(),
                    ..Default::default()
                },
                profiles: vec![
                    profile("a", "c1", &[("env", "prod")]),
                    profile("b", "c1", &[("env", "dev")]),
                ],
                secrets: vec![
                    labelled_secret("a", "s1", "c1", None, &[("Config", KUBECONFIG)]),
                    labelled_secret("b", "s2", "c1", None, &[("config", KUBECONFIG)]),
                ],
                ns_labels: BTreeMap::new(),
                world: World::default(),
                providers: None,
                // A plan made for apply, with the objects to write (as `actions` needs).
                phase: Phase::Apply,
            }
        }

        /// Sets label `key` of profile `i` (to change what that cluster's SveltosCluster carries).
        fn set_label(&mut self, i: usize, key: &str, value: &str) {
            self.profiles[i]
                .metadata
                .labels
                .get_or_insert_with(Default::default)
                .insert(key.into(), value.into());
        }

        fn run(&self) -> Plan {
            self.run_with(&NO_UNDECODABLE)
        }

        fn run_with(&self, undecodable: &BTreeMap<String, String>) -> Plan {
            let inputs = Inputs {
                spec: &self.spec,
                profiles: &self.profiles,
                credential_secrets: &self.secrets,
                checked_kubeconfigs: None,
                namespace_labels: &self.ns_labels,
                providers: self.providers.as_ref(),
                world: &self.world,
                now: jiff::Timestamp::from_second(1_800_000_000).unwrap(),
                phase: self.phase,
                planned_mints: None,
                undecodable,
            };
            let located = locate_all(&inputs);
            plan(&inputs, &located, &BTreeMap::new())
        }
    }

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
        f.world = world_after(&p, "main");
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

    /// At apply, only the clusters that differ from what exists hold their objects (at ten thousand clusters and
    /// 1 % of changes, a hundred clusters' objects instead of ten thousand); the others keep their entries.
    #[test]
    fn a_plan_for_apply_holds_only_the_objects_it_writes() {
        let f = Fixture::new();
        let world = world_after(&f.run(), "main");
        let mut f2 = Fixture::new();
        f2.world = world.clone();
        let unchanged = f2.run();
        assert!(
            unchanged
                .desired
                .values()
                .all(|d| d.sveltos_cluster.is_none() && d.secret.is_none())
        );
        assert_eq!(unchanged.entries(), f.run().entries());
        assert!(actions(&unchanged, &world).0.is_empty());
        f2.set_label(0, "env", "staging");
        let changed = f2.run();
        let key = f2.profiles[0].key();
        for (k, d) in &changed.desired {
            assert_eq!(d.sveltos_cluster.is_some(), *k == key, "{k}");
        }
        let (writes, _) = actions(&changed, &world);
        assert_eq!(
            writes.iter().map(|w| w.key.as_str()).collect::<Vec<_>>(),
            [key.as_str()]
        );
    }

    #[test]
    #[should_panic(expected = "needs a plan made for apply")]
    fn actions_refuse_a_plan_not_made_for_apply() {
        let mut f = Fixture::new();
        f.phase = Phase::Plan;
        let _ = actions(&f.run(), &World::default());
    }

    /// The world as it is after applying `plan` faithfully.
    fn world_after(plan: &Plan, bridge: &str) -> World {
        let scs: Vec<SveltosCluster> = plan
            .desired
            .values()
            .map(|d| {
                let mut sc = d.sveltos_cluster.clone().expect("planned for apply");
                let f = |m: &Option<BTreeMap<String, String>>| {
                    serde_json::Value::Object(m.iter().flatten().map(|(k, _)| (format!("f:{k}"), serde_json::json!({}))).collect())
                };
                sc.metadata.managed_fields = Some(vec![k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry {
                    manager: Some(crate::bridge::FIELD_MANAGER.into()),
                    operation: Some("Apply".into()),
                    fields_v1: Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1(
                        serde_json::json!({"f:metadata": {"f:labels": f(&sc.metadata.labels), "f:annotations": f(&sc.metadata.annotations)},
                "f:spec": crate::bridge::observed::tests::spec_fields(&sc)}),
                    )),
                    ..Default::default()
                }]);
                sc
            })
            .collect();
        let secrets: Vec<Secret> = plan
            .desired
            .values()
            .filter_map(|d| d.secret.clone())
            .collect();
        World::build(
            bridge,
            &crate::bridge::ownership::Ledger::trusting(),
            &scs,
            &secrets,
        )
    }

    #[test]
    fn creation_targets_are_the_unowned_objects_of_selected_profiles() {
        let mut f = Fixture::new();
        f.profiles.push(profile("a", "c2", &[]));
        f.spec.overrides.insert(
            "a/c2".into(),
            Override {
                skip: true,
                ..Default::default()
            },
        );
        let inputs = |f: &Fixture| -> Located {
            locate_all(&Inputs {
                spec: &f.spec,
                profiles: &f.profiles,
                credential_secrets: &f.secrets,
                checked_kubeconfigs: None,
                namespace_labels: &f.ns_labels,
                providers: None,
                world: &f.world,
                now: jiff::Timestamp::from_second(1_800_000_000).unwrap(),
                phase: Phase::Plan,
                planned_mints: None,
                undecodable: &NO_UNDECODABLE,
            })
        };
        let t = inputs(&f).creation_targets(&f.profiles, &f.world);
        let pairs = |v: &[(&str, &str)]| -> BTreeSet<(String, String)> {
            v.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        assert_eq!(
            t.clusters,
            pairs(&[("a", "c1"), ("b", "c1")]),
            "skipped profiles are not targets"
        );
        assert_eq!(
            t.secrets,
            pairs(&[
                ("a", "c1-sveltos-kubeconfig"),
                ("b", "c1-sveltos-kubeconfig")
            ])
        );
        assert_eq!(t.namespaces().into_iter().collect::<Vec<_>>(), ["a", "b"]);

        // After apply, nothing is left to check; a deleted Secret of ours is a target again.
        f.world = world_after(&f.run(), "main");
        assert!(
            inputs(&f)
                .creation_targets(&f.profiles, &f.world)
                .is_empty()
        );
        f.world.owned.get_mut("b/c1").unwrap().secret = None;
        let t = inputs(&f).creation_targets(&f.profiles, &f.world);
        assert_eq!((t.clusters.len(), t.secrets.len()), (0, 1));
    }

    #[test]
    fn same_name_in_two_namespaces_are_two_clusters() {
        let p = Fixture::new().run();
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        assert_eq!(p.entries().keys().collect::<Vec<_>>(), ["a/c1", "b/c1"]);
    }

    #[test]
    fn apply_then_plan_converges_with_no_writes() {
        let f = Fixture::new();
        let p = f.run();
        let (writes, deletes) = actions(&p, &World::default());
        assert_eq!((writes.len(), deletes.len()), (2, 0));
        assert!(
            writes
                .iter()
                .all(|w| w.secret.is_some() && w.sveltos_cluster.is_some())
        );
        let world = world_after(&p, "main");
        assert_eq!(
            world.entries(|_| false),
            p.entries(),
            "read after apply equals the plan"
        );
        let mut f2 = Fixture::new();
        f2.world = world.clone();
        let p2 = f2.run();
        let (writes, deletes) = actions(&p2, &world);
        assert!(writes.is_empty() && deletes.is_empty());
    }

    #[test]
    fn removed_profile_deletes_only_owned_objects() {
        let f = Fixture::new();
        let world = world_after(&f.run(), "main");
        let mut f2 = Fixture::new();
        f2.profiles.pop();
        f2.world = world.clone();
        let (writes, deletes) = actions(&f2.run(), &world);
        assert!(writes.is_empty());
        assert_eq!(deletes.len(), 1);
        assert_eq!(deletes[0].sveltos_cluster, Some(("b".into(), "c1".into())));
        assert_eq!(
            deletes[0].secret,
            Some(("b".into(), "c1-sveltos-kubeconfig".into()))
        );
    }

    #[test]
    fn label_change_rewrites_only_the_cluster() {
        let f = Fixture::new();
        let world = world_after(&f.run(), "main");
        let mut f2 = Fixture::new();
        f2.set_label(0, "env", "staging");
        f2.world = world.clone();
        let (writes, _) = actions(&f2.run(), &world);
        assert_eq!(writes.len(), 1);
        assert!(writes[0].secret.is_none() && writes[0].sveltos_cluster.is_some());
    }

    #[test]
    fn argument_changes_rewrite_no_sveltos_cluster() {
        let mut f = Fixture::new();
        f.spec.config_record = Some("{\"v\":1}".into());
        let p = f.run();
        let world = world_after(&p, "main");
        let mut f2 = Fixture::new();
        f2.spec.config_record = Some("{\"v\":2}".into());
        f2.world = world.clone();
        let p2 = f2.run();
        assert_eq!(p2.entries(), p.entries(), "plan shows no cluster change");
        let (writes, _) = actions(&p2, &world);
        assert!(
            writes.is_empty(),
            "the configuration record lives in the claim, not on every SveltosCluster: {writes:?}"
        );
    }

    #[test]
    fn selection_filters() {
        let mut f = Fixture::new();
        f.spec.selection = Selection {
            label_selector: Some(Selector::parse("env=prod").unwrap()),
            ..Default::default()
        };
        assert_eq!(f.run().entries().keys().collect::<Vec<_>>(), ["a/c1"]);
        f.spec.selection = Selection {
            namespaces: vec!["b".into()],
            ..Default::default()
        };
        assert_eq!(f.run().entries().keys().collect::<Vec<_>>(), ["b/c1"]);
        f.spec.selection = Selection {
            require_healthy: true,
            ..Default::default()
        };
        set_healthy(&mut f.profiles[1], true);
        set_healthy(&mut f.profiles[0], false);
        assert_eq!(f.run().entries().keys().collect::<Vec<_>>(), ["b/c1"]);
        f.spec.selection = Selection::default();
        f.spec.overrides.insert(
            "a/c1".into(),
            Override {
                skip: true,
                ..Default::default()
            },
        );
        assert_eq!(f.run().entries().keys().collect::<Vec<_>>(), ["b/c1"]);
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
        f.world.foreign_clusters.insert("a/c1".into(), None);
        f.world
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
        let world = world_after(&f.run(), "main");
        f.secrets.pop();
        f.world = world.clone();
        f.spec.require_credentials = true;
        let p = f.run();
        assert!(p.kept.contains_key("b/c1"));
        assert!(!p.has_errors(), "{:?}", p.problems);
        let (_, deletes) = actions(&p, &world);
        assert!(deletes.is_empty());
    }

    #[test]
    fn ambiguous_secrets_keep_the_bridged_cluster_and_name_both() {
        let mut f = Fixture::new();
        f.world = world_after(&f.run(), "main");
        f.secrets.push(labelled_secret(
            "a",
            "s9",
            "c1",
            None,
            &[("Config", KUBECONFIG)],
        ));
        let p = f.run();
        assert!(!p.has_errors());
        let (writes, deletes) = actions(&p, &f.world);
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
    fn health_gates_registration_not_existence() {
        let mut f = Fixture::new();
        f.spec.selection.require_healthy = true;
        for p in &mut f.profiles {
            set_healthy(p, true);
        }
        f.world = world_after(&f.run(), "main");
        set_healthy(&mut f.profiles[1], false);
        // keep: registered as it is.
        let p = f.run();
        assert!(p.kept.contains_key("b/c1") && p.removals.is_empty());
        assert!(
            p.problems
                .iter()
                .any(|x| x.path == vec![Step::Attr("require_healthy")])
        );
        // pause: paused.
        f.spec.unhealthy = UnhealthyPolicy::Pause;
        let p = f.run();
        assert_eq!(
            p.desired["b/c1"]
                .sveltos_cluster
                .as_ref()
                .unwrap()
                .spec
                .paused,
            Some(true)
        );
        let (writes, _) = actions(&p, &f.world);
        assert!(
            writes
                .iter()
                .any(|w| w.key == "b/c1" && w.sveltos_cluster.is_some())
        );
        // remove: deregistered.
        f.spec.unhealthy = UnhealthyPolicy::Remove;
        let p = f.run();
        assert_eq!(p.removals, ["b/c1"]);
        // A new unhealthy profile is not registered.
        f.spec.unhealthy = UnhealthyPolicy::Keep;
        f.world = World::default();
        assert!(!f.run().entries().contains_key("b/c1"));
    }

    #[test]
    fn removal_guard() {
        let mut f = Fixture::new();
        f.world = world_after(&f.run(), "main");
        f.profiles.clear();
        let p = f.run();
        assert_eq!(p.removals.len(), 2);
        let w = p
            .problems
            .iter()
            .find(|x| x.summary.contains("deregisters 2"))
            .unwrap();
        assert_eq!(w.severity, Severity::Warning);
        f.spec.max_removals = Some(1);
        let p = f.run();
        let e = p
            .problems
            .iter()
            .find(|x| x.path == vec![Step::Attr("max_removals")])
            .unwrap();
        assert!(
            e.severity == Severity::Error && e.summary.contains('2'),
            "{e:?}"
        );
        f.spec.max_removals = Some(2);
        assert!(!f.run().has_errors());
    }

    #[test]
    fn sveltos_token_renewal_is_never_reverted_but_a_rotated_source_is_written() {
        let mut f = Fixture::new();
        f.spec.token_renewal = Some(crate::bridge::TokenRenewal {
            interval: "1h".into(),
            token_duration: Some("3h".into()),
            sa_namespace: Some("kube-system".into()),
            sa_name: Some("sveltos".into()),
        });
        let first = f.run();
        let sc = first.desired["a/c1"].sveltos_cluster.as_ref().unwrap();
        let opt = sc.spec.token_request_renewal_option.as_ref().unwrap();
        assert_eq!(
            (
                opt.renew_token_request_interval.as_str(),
                opt.sa_name.as_deref()
            ),
            ("1h", Some("sveltos"))
        );
        f.world = world_after(&first, "main");
        // What sveltoscluster-manager does on renewal, by plain updates: it takes over spec.kubeconfigKeyName (now
        // `re-kubeconfig`) and the interval, and rewrites the Secret's data. The bridge owns neither field any more;
        // its hashes do not move (the Secret is compared by the source hash it recorded).
        for o in f.world.owned.values_mut() {
            let sc = o.sveltos_cluster.as_mut().unwrap();
            sc.owned_spec.remove("kubeconfigKeyName");
            sc.owned_renewal.remove("renewTokenRequestInterval");
        }
        let p = f.run();
        let (writes, deletes) = actions(&p, &f.world);
        assert!(
            writes.is_empty() && deletes.is_empty(),
            "a renewal is never reverted: {writes:?}"
        );
        // A rotated source credential is written, and the SveltosCluster pointed back at it; the interval Sveltos
        // shortened stays Sveltos'.
        f.secrets[0] = labelled_secret(
            "a",
            "s1",
            "c1",
            None,
            &[(
                "Config",
                "apiVersion: v1\nclusters:\n- name: x\n  cluster:\n    server: https://10.0.0.9\n",
            )],
        );
        let p = f.run();
        let (writes, _) = actions(&p, &f.world);
        assert_eq!(writes.len(), 1, "{writes:?}");
        let w = &writes[0];
        assert!(w.secret.is_some());
        let sc = w.sveltos_cluster.as_ref().unwrap();
        assert_eq!(sc.spec.kubeconfig_key_name.as_deref(), Some("kubeconfig"));
        assert_eq!(
            sc.spec
                .token_request_renewal_option
                .as_ref()
                .unwrap()
                .renew_token_request_interval,
            ""
        );
        // Changing the renewal settings themselves shows and is written.
        f.secrets[0] = labelled_secret("a", "s1", "c1", None, &[("Config", KUBECONFIG)]);
        f.spec.token_renewal.as_mut().unwrap().interval = "2h".into();
        let p = f.run();
        assert_ne!(
            p.desired["a/c1"].entry.config_sha256,
            f.world.owned["a/c1"].entry(true).config_sha256
        );
        let (writes, _) = actions(&p, &f.world);
        let sc = writes
            .iter()
            .find(|w| w.key == "a/c1")
            .unwrap()
            .sveltos_cluster
            .as_ref()
            .unwrap();
        assert_eq!(
            sc.spec
                .token_request_renewal_option
                .as_ref()
                .unwrap()
                .renew_token_request_interval,
            "2h"
        );
    }

    #[test]
    fn apply_isolates_drift_and_applies_the_rest() {
        let mut f = Fixture::new();
        let planned: BTreeMap<String, Option<ClusterEntry>> = f
            .run()
            .entries()
            .into_iter()
            .map(|(k, e)| (k, Some(e)))
            .collect();
        // Between plan and apply, b/c1's profile changes its labels.
        f.set_label(1, "env", "changed");
        f.phase = Phase::Apply;
        let mut p = f.run();
        isolate_drift(&mut p, &f.world, &planned);
        assert_eq!(p.desired.keys().collect::<Vec<_>>(), ["a/c1"]);
        let e = p
            .problems
            .iter()
            .find(|x| x.severity == Severity::Error)
            .unwrap();
        assert!(e.summary.contains("b/c1"), "{e:?}");
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
    fn exec_credentials_are_reused_until_refresh_window() {
        let mut f = Fixture::new();
        f.phase = Phase::Plan;
        f.secrets.clear();
        f.profiles.truncate(1);
        add_provider(&mut f.profiles[0], "tok", serde_json::json!({}));
        f.providers = Some(
            ProvidersFile::parse(br#"{"providers":[{"name":"tok","execConfig":{"apiVersion":"client.authentication.k8s.io/v1","command":"get-token"}}]}"#)
                .unwrap()
        .scoped(
            &[(
                "tok".to_string(),
                crate::bridge::exec::ExecScope::any_namespace(),
            )]
            .into(),
        ),
        );
        let p = f.run();
        assert!(p.desired["a/c1"].entry.credential_pending);
        let inv = p.exec["a/c1"].clone();
        // Simulate apply having minted a credential that expires in 1 h.
        let now = jiff::Timestamp::from_second(1_800_000_000).unwrap();
        let mut world = World::default();
        let mut observed = crate::bridge::observed::Observed {
            secret: Some(crate::bridge::observed::ObservedSecret {
                uid: None,
                id: "a/c1-sveltos-kubeconfig".into(),
                kubeconfig_sha256: Some("h1".into()),
                renewed_sha256: None,
                expires_at: Some((now + jiff::SignedDuration::from_hours(1)).to_string()),
                credential_source: Some("exec:tok".into()),
                credential_config_sha256: Some(invocation_sha256(&inv)),
            }),
            ..Default::default()
        };
        world.owned.insert("a/c1".into(), observed.clone());
        f.world = world.clone();
        let p = f.run();
        assert!(!p.desired["a/c1"].entry.credential_pending);
        assert_eq!(
            p.desired["a/c1"].entry.kubeconfig_sha256.as_deref(),
            Some("h1")
        );
        // Inside refresh_before (default 10 min) of expiry: a new credential is planned.
        observed.secret.as_mut().unwrap().expires_at =
            Some((now + jiff::SignedDuration::from_mins(5)).to_string());
        f.world.owned.insert("a/c1".into(), observed);
        assert!(f.run().desired["a/c1"].entry.credential_pending);
        // The first plan renews from twice refresh_before ahead, the re-plan before apply from refresh_before:
        // a credential the first plan reused is still reused by a re-plan up to refresh_before later.
        let mut at = |mins: i64, phase: Phase| {
            f.world
                .owned
                .get_mut("a/c1")
                .unwrap()
                .secret
                .as_mut()
                .unwrap()
                .expires_at = Some((now + jiff::SignedDuration::from_mins(mins)).to_string());
            f.phase = phase;
            f.run().desired["a/c1"].entry.credential_pending
        };
        assert!(
            at(15, Phase::Plan),
            "within 2 x refresh_before: renewed by the first plan"
        );
        assert!(!at(25, Phase::Plan));
        assert!(
            !at(15, Phase::Replan),
            "not yet within refresh_before: the re-plan keeps it"
        );
        assert!(at(9, Phase::Replan));
        // Apply reuses what the plan reused while it is unexpired ...
        assert!(!at(1, Phase::Apply));
        // ... while a cluster the plan said to mint is minted at apply.
        let mints = BTreeSet::from(["a/c1".to_string()]);
        let inputs = Inputs {
            spec: &f.spec,
            profiles: &f.profiles,
            credential_secrets: &f.secrets,
            checked_kubeconfigs: None,
            namespace_labels: &f.ns_labels,
            providers: f.providers.as_ref(),
            world: &f.world,
            now,
            phase: Phase::Apply,
            planned_mints: Some(&mints),
            undecodable: &NO_UNDECODABLE,
        };
        let p = plan(&inputs, &locate_all(&inputs), &BTreeMap::new());
        assert!(p.desired["a/c1"].entry.credential_pending);
    }

    #[test]
    fn drift_since_plan_ignores_pending_hashes() {
        let p = Fixture::new().run();
        let mut planned: BTreeMap<String, Option<ClusterEntry>> =
            p.entries().into_iter().map(|(k, e)| (k, Some(e))).collect();
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
