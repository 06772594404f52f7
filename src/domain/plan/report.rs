//! Diagnostics of a plan: per-cluster issues grouped by cause, objects wearing this bridge's label without being
//! its own, and the clusters a plan deregisters (with the `max_removals` guard).

use std::collections::BTreeMap;

use super::{Inputs, Plan};
use crate::domain::{
    BridgeSpec, Deregistration,
    problem::{Problem, Step},
};

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
    /// A credential problem ([`CredentialProblem::cause`](crate::domain::credentials::CredentialProblem::cause)).
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
    /// The ClusterProfile has more labels to copy than the bridge copies
    /// ([`MAX_COPIED_LABELS`](crate::domain::desired::MAX_COPIED_LABELS)).
    TooManyLabels,
    /// One of the bridge's own objects of the cluster (its SveltosCluster or Secret) does not decode.
    UnreadableObject,
    /// Another ClusterProfile describes the same member cluster and is the one registered
    /// (`duplicate_members = "register_one"`).
    DuplicateMember,
    /// A Cluster API `Cluster` of the same namespace and name exists: Sveltos manages that cluster natively
    /// (`skip_cluster_api_clusters`).
    ClusterApiCluster,
    /// A property `copy_properties` maps is out of bounds (reported twice, an empty or too long value, an entry
    /// that cannot be read).
    BadProperties,
}

impl Cause {
    /// The cause in words (the grouped diagnostic's summary and the `skipped` attribute).
    pub fn describe(self) -> &'static str {
        match self {
            Self::Credentials(c) => c,
            Self::Collision => "an object this bridge does not own has the name it would write",
            Self::Unhealthy => "the ClusterProfile is not healthy",
            Self::ChangedSincePlan => "the ClusterProfile changed since plan",
            Self::Undecodable => "the ClusterProfile cannot be read",
            Self::UnreadableObject => "an object of this bridge cannot be read",
            Self::NameTooLong => {
                "the ClusterProfile's name is too long for its kubeconfig Secret's name"
            }
            Self::TooManyLabels => {
                "the ClusterProfile has more labels to copy than the bridge copies"
            }
            Self::DuplicateMember => "another ClusterProfile describes the same member cluster",
            Self::ClusterApiCluster => {
                "a Cluster API Cluster of the same namespace and name exists, which Sveltos manages natively"
            }
            Self::BadProperties => "a property of the ClusterProfile cannot be mapped",
        }
    }

    pub(super) fn hint(self) -> &'static str {
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
            Self::UnreadableObject => {
                "Nothing is written to or deleted from those clusters until the object named decodes again \
                 (someone stored a value in it the bridge cannot read); fix or delete it."
            }
            Self::NameTooLong => {
                "The Secret is named <name>-sveltos-kubeconfig and a name has at most 253 characters: such a \
                 ClusterProfile cannot be bridged. Exclude it with overrides[\"<namespace>/<name>\"].skip = true."
            }
            Self::TooManyLabels => {
                "They are kept as they are (or stay unregistered): their labels would grow the state and the \
                 SveltosCluster without bound. Narrow copy_labels (include or exclude) or ask their writer to \
                 remove labels."
            }
            Self::DuplicateMember => {
                "duplicate_members = \"register_one\" registers the first ClusterProfile of each member cluster (in \
                 the order of namespaces, else by namespace name, then by name) and skips the others; \
                 duplicate_members = \"warn\" registers each."
            }
            Self::ClusterApiCluster => {
                "skip_cluster_api_clusters = true leaves out every ClusterProfile that has a Cluster API Cluster \
                 (cluster.x-k8s.io) of the same namespace and name: Sveltos manages that cluster as a Cluster API \
                 cluster (cluster type Capi), and registering it again would deploy its add-ons twice. Unset it to \
                 register them."
            }
            Self::BadProperties => {
                "They are kept as they are (or stay unregistered), their labels and spec.data unchanged, until the \
                 property is reported once with a value of 1 to 1024 bytes (copy_properties.names lists which \
                 properties are read); ask the ClusterProfile's cluster manager to fix it."
            }
        }
    }
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

/// Turns the plan's per-cluster issues, removals and impostors into grouped diagnostics.
pub(super) fn report(inputs: &Inputs<'_>, plan: &mut Plan) {
    let spec = inputs.spec;
    let mut by_cause: BTreeMap<Cause, Vec<&ClusterIssue>> = BTreeMap::new();
    for issue in &plan.issues {
        by_cause.entry(issue.cause).or_default().push(issue);
    }
    let mut problems: Vec<Problem> = by_cause
        .into_iter()
        .map(|(cause, issues)| cause_problem(spec, cause, issues))
        .collect();
    problems.extend(notices_problem(&plan.notices));
    problems.extend(renewal_problems(&plan.renewal_notes));
    problems.extend(unlabelled_problem(&plan.unlabelled));
    problems.extend(impostors_problem(inputs));
    problems.extend(foreign_labels_problem(inputs));
    problems.extend(removals_problem(
        spec,
        &plan.removals,
        inputs.observed.owned.len(),
    ));
    plan.problems.extend(problems);
}

/// One diagnostic for every cluster with the same cause, listing the first [`LISTED`].
fn cause_problem(spec: &BridgeSpec, cause: Cause, mut issues: Vec<&ClusterIssue>) -> Problem {
    issues.sort_by(|a, b| a.key.cmp(&b.key));
    let error = match cause {
        Cause::Unhealthy | Cause::DuplicateMember | Cause::ClusterApiCluster => false,
        Cause::ChangedSincePlan => true,
        Cause::Credentials(_) => {
            spec.strict || (spec.require_credentials && issues.iter().any(|i| !i.kept))
        }
        Cause::Collision
        | Cause::Undecodable
        | Cause::UnreadableObject
        | Cause::NameTooLong
        | Cause::TooManyLabels
        | Cause::BadProperties => spec.strict,
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
    } else if cause == Cause::DuplicateMember {
        "Their member clusters stay registered through the ClusterProfile named."
    } else if cause == Cause::ClusterApiCluster {
        "Sveltos reaches those clusters through their Cluster API Cluster."
    } else {
        "Every other cluster is planned normally. Set strict = true to make this an error."
    };
    let summary = format!(
        "{} ClusterProfile(s): {} ({kept} kept as they are)",
        issues.len(),
        cause.describe()
    );
    // `destroy` plans the configuration first: the same error would stop it, and -refresh=false skips that plan.
    let destroy = if error && !matches!(cause, Cause::ChangedSincePlan) {
        " A destroy stopped by this error runs with -refresh=false, which skips this plan."
    } else {
        ""
    };
    let detail = format!(
        "{}{more}\n\n{} {after}{destroy}",
        lines.join("\n"),
        cause.hint()
    );
    let path = match cause {
        Cause::Credentials(_) => vec![Step::Attr("credentials")],
        Cause::Collision => vec![Step::Attr("adopt")],
        Cause::Unhealthy => vec![Step::Attr("require_healthy")],
        Cause::TooManyLabels => vec![Step::Attr("copy_labels")],
        Cause::BadProperties => vec![Step::Attr("copy_properties")],
        Cause::DuplicateMember => vec![Step::Attr("duplicate_members")],
        Cause::ClusterApiCluster => vec![Step::Attr("skip_cluster_api_clusters")],
        Cause::ChangedSincePlan
        | Cause::Undecodable
        | Cause::UnreadableObject
        | Cause::NameTooLong => vec![],
    };
    if error {
        Problem::error(path, summary, detail)
    } else {
        Problem::warning(path, summary, detail)
    }
}

/// The warning for the clusters planned normally whose `kubeconfig-secretreader` Secret points elsewhere than their
/// ClusterProfile (see `crate::domain::credentials::connect`).
fn notices_problem(notices: &BTreeMap<String, String>) -> Option<Problem> {
    if notices.is_empty() {
        return None;
    }
    let mut lines: Vec<String> = notices
        .iter()
        .take(LISTED)
        .map(|(key, what)| format!("- {key} (registered): {what}"))
        .collect();
    if notices.len() > LISTED {
        lines.push(format!("- and {} more", notices.len() - LISTED));
    }
    Some(Problem::warning(
        vec![Step::Attr("credentials"), Step::Attr("secret_reader_mode")],
        format!(
            "{} ClusterProfile(s): the kubeconfig-secretreader Secret points elsewhere than the ClusterProfile",
            notices.len()
        ),
        format!(
            "{}\n\nThese clusters are registered with the credential of their Secret and the server, CA, \
             tls-server-name and proxy-url of their access provider's cluster entry, as the upstream \
             kubeconfig-secretreader plugin and every consumer of the upstream access library connect. If the \
             Secret's kubeconfig is the one to use, fix the ClusterProfile, or set \
             credentials.secret_reader_mode = \"whole_kubeconfig\" (the convention of Sveltos' \
             clusterinventory-controller).",
            lines.join("\n")
        ),
    ))
}

/// The warnings for the clusters with `token_renewal` that Sveltos will not renew as configured: one for those
/// whose renewal is withheld (it would break their connection), one for those it is written for but never done.
fn renewal_problems(notes: &BTreeMap<String, (bool, String)>) -> Vec<Problem> {
    let mut out = Vec::new();
    for withheld in [true, false] {
        let listed: Vec<(&String, &String)> = notes
            .iter()
            .filter(|(_, (w, _))| *w == withheld)
            .map(|(k, (_, why))| (k, why))
            .collect();
        if listed.is_empty() {
            continue;
        }
        let mut lines: Vec<String> = listed
            .iter()
            .take(LISTED)
            .map(|(key, why)| format!("- {key}: {why}"))
            .collect();
        if listed.len() > LISTED {
            lines.push(format!("- and {} more", listed.len() - LISTED));
        }
        let (summary, after) = if withheld {
            (
                "token_renewal not enabled, a renewal would break their connection",
                "sveltoscluster-manager's renewal writes a kubeconfig holding only the server, the CA and the new \
                 token. These clusters are registered without spec.tokenRequestRenewalOption, their credential \
                 renewed only by apply as without token_renewal. To let Sveltos renew them, give their ClusterProfile \
                 a connection that needs none of insecure-skip-tls-verify, tls-server-name and proxy-url.",
            )
        } else {
            (
                "token_renewal set, but Sveltos will not renew their credential",
                "Without service_account, sveltoscluster-manager renews only a ServiceAccount token (it asks the \
                 member cluster whom the credential authenticates); any other credential is never renewed and \
                 Sveltos reports nothing. Set service_account (in token_renewal, or in the cluster's overrides \
                 entry) to a ServiceAccount of the member cluster this credential may create tokens for.",
            )
        };
        out.push(Problem::warning(
            vec![Step::Attr("token_renewal")],
            format!("{} ClusterProfile(s): {summary}", listed.len()),
            format!("{}\n\n{after}", lines.join("\n")),
        ));
    }
    out
}

/// The warning for the clusters planned normally some of whose properties get no label (`copy_properties`): each
/// cluster with the properties and their values (escaped and bounded).
fn unlabelled_problem(unlabelled: &BTreeMap<String, BTreeMap<String, String>>) -> Option<Problem> {
    if unlabelled.is_empty() {
        return None;
    }
    let mut lines: Vec<String> = unlabelled
        .iter()
        .take(LISTED)
        .map(|(key, props)| {
            let props: Vec<String> = props
                .iter()
                .map(|(n, v)| format!("{n} = \"{v}\""))
                .collect();
            format!("- {key}: {}", props.join(", "))
        })
        .collect();
    if unlabelled.len() > LISTED {
        lines.push(format!("- and {} more", unlabelled.len() - LISTED));
    }
    Some(Problem::warning(
        vec![Step::Attr("copy_properties")],
        format!(
            "{} ClusterProfile(s): a property value is not a valid label value, its label is left out",
            unlabelled.len()
        ),
        format!(
            "{}\n\nThese clusters are registered without the label of each property listed (a label value has at \
             most 63 characters: letters, digits, '-', '_' and '.', a letter or digit at either end); the value is \
             not rewritten or hashed, so no selector matches a value the cluster does not have. Their spec.data \
             holds each value in full.",
            lines.join("\n")
        ),
    ))
}

/// The warning for objects that carry this bridge's ownership label without being its own.
fn impostors_problem(inputs: &Inputs<'_>) -> Option<Problem> {
    let impostors = &inputs.observed.impostors;
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

/// How many label keys the foreign-labels warning names per cluster before it gives a count.
const KEYS_LISTED: usize = 10;

/// The warning for owned SveltosClusters on which someone else added labels under `copy_labels.exclude` (the
/// boundary on add-on selection): each cluster with the label keys (escaped, bounded), and whether apply removes
/// them (`copy_labels.remove_foreign`).
fn foreign_labels_problem(inputs: &Inputs<'_>) -> Option<Problem> {
    let copy = &inputs.spec.copy_labels;
    let found = inputs.observed.foreign_excluded_labels(copy);
    if found.is_empty() {
        return None;
    }
    let mut lines: Vec<String> = found
        .iter()
        .take(LISTED)
        .map(|(key, labels)| {
            let shown = labels
                .iter()
                .take(KEYS_LISTED)
                .map(|k| crate::domain::text::shown(k, 120));
            let more = labels.len().saturating_sub(KEYS_LISTED);
            let more = (more > 0).then(|| format!("and {more} more"));
            let all: Vec<String> = shown.chain(more).collect();
            format!(
                "- {}: {}",
                crate::domain::text::shown(key, 520),
                all.join(", ")
            )
        })
        .collect();
    if found.len() > LISTED {
        lines.push(format!("- and {} more", found.len() - LISTED));
    }
    let what = if copy.remove_foreign {
        "Apply removes them (copy_labels.remove_foreign = true)."
    } else {
        "Sveltos selects add-ons by labels: whoever added them chose add-ons for the cluster. Set \
         copy_labels.remove_foreign = true to have apply remove them, and grant no one but Sveltos' \
         administrators patch on SveltosClusters where labels are a boundary."
    };
    Some(Problem::warning(
        vec![Step::Attr("copy_labels")],
        format!(
            "{} SveltosCluster(s) of this bridge carry labels under copy_labels.exclude that the bridge did not write",
            found.len()
        ),
        format!("{}\n\n{what}", lines.join("\n")),
    ))
}

/// Without `max_removals`, a plan may deregister at most this many clusters...
pub const DEFAULT_MAX_REMOVALS_MIN: usize = 10;
/// ...or this percentage of the clusters bridged before it, whichever is more.
pub const DEFAULT_MAX_REMOVALS_PERCENT: usize = 25;

/// How many clusters one plan may deregister: `max_removals` when set; otherwise the default guard, the larger of
/// [`DEFAULT_MAX_REMOVALS_MIN`] and [`DEFAULT_MAX_REMOVALS_PERCENT`] % of the `bridged` clusters (rounded down).
/// The default stops what deregisters a fleet by mistake (a selector typo, a namespace list edited, an inventory
/// that answers with nothing) while letting routine decommissions through.
pub fn removal_limit(max_removals: Option<usize>, bridged: usize) -> usize {
    max_removals.unwrap_or_else(|| {
        DEFAULT_MAX_REMOVALS_MIN.max(bridged * DEFAULT_MAX_REMOVALS_PERCENT / 100)
    })
}

/// The warning for the clusters this plan deregisters, or the error when they are more than the limit
/// ([`removal_limit`]; `bridged`: how many clusters the bridge had before this plan).
fn removals_problem(spec: &BridgeSpec, removals: &[String], bridged: usize) -> Option<Problem> {
    if removals.is_empty() {
        return None;
    }
    let n = removals.len();
    let names = name_list(removals.iter().map(String::as_str));
    let limit = removal_limit(spec.max_removals, bridged);
    if n <= limit {
        let what = match spec.deregistration {
            Deregistration::Withdraw => {
                "Their add-ons are withdrawn first: the labels the bridge wrote on their SveltosClusters are \
                 removed and apply waits (deregistration_timeout) until addon-controller has taken off the clusters what \
                 Sveltos deployed there (deregistration = \"withdraw\")"
            }
            Deregistration::Orphan => {
                "Add-ons Sveltos deployed there stay on the clusters, managed by no one (deregistration = \
                 \"orphan\"; addon-controller does not withdraw them when a SveltosCluster is deleted)"
            }
        };
        return Some(Problem::warning(
            vec![],
            format!("This plan deregisters {n} cluster(s)"),
            format!(
                "{names}. {what}. max_removals caps how many one plan may deregister (now {limit})."
            ),
        ));
    }
    let (summary, hint) = match spec.max_removals {
        Some(max) => (
            format!("This plan would deregister {n} clusters, more than max_removals = {max}"),
            "If this is intended, raise max_removals".to_string(),
        ),
        None => (
            format!(
                "This plan would deregister {n} of {bridged} clusters, more than the default limit of {limit}"
            ),
            format!(
                "Without max_removals a plan may deregister at most {DEFAULT_MAX_REMOVALS_MIN} clusters or \
                 {DEFAULT_MAX_REMOVALS_PERCENT} % of those bridged, whichever is more. If this is intended, set \
                 max_removals to at least {n} for this apply"
            ),
        ),
    };
    let consequence = match spec.deregistration {
        Deregistration::Withdraw => {
            "Deregistering a cluster withdraws every add-on Sveltos deployed there (deregistration = \"withdraw\")."
        }
        Deregistration::Orphan => {
            "Deregistering a cluster leaves the add-ons Sveltos deployed there managed by no one (deregistration = \
             \"orphan\")."
        }
    };
    Some(Problem::error(
        vec![Step::Attr("max_removals")],
        summary,
        format!(
            "{consequence} Clusters: {names}. Nothing was written. {hint}; otherwise check label_selector, \
             namespaces and names (and that the inventory lists its ClusterProfiles)."
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::plan::fixture::*;
    use crate::domain::problem::Severity;

    /// A `kubeconfig-secretreader` Secret naming another server than its profile: the cluster is planned with the
    /// profile's server, and one warning names it and both hosts; with `whole_kubeconfig`, the Secret's server and
    /// no warning.
    #[test]
    fn a_secret_reader_pointing_elsewhere_is_planned_with_a_warning() {
        use crate::{api::keys, domain::credentials::SecretReaderMode};
        let mut f = Fixture::new();
        let mut p = profile("a", "r", &[]);
        add_provider(
            &mut p,
            keys::SECRET_READER_PROVIDER,
            serde_json::json!({"name": "kc", "key": "value"}),
        );
        f.profiles.push(p);
        let stored = labelled_secret("a", "kc", "-", None, &[("value", KUBECONFIG)]);
        let fetched = BTreeMap::from([(("a".to_string(), "kc".to_string()), Some(stored))]);
        let server = |p: &Plan| {
            let secret = p.desired["a/r"].secret.as_ref().unwrap();
            let written = &secret.data.as_ref().unwrap()["kubeconfig"].0;
            let v: serde_json::Value = serde_json::from_slice(written).unwrap();
            v["clusters"][0]["cluster"]["server"]
                .as_str()
                .unwrap()
                .to_string()
        };
        let p = f.run_reading(&crate::domain::plan::NO_UNDECODABLE, &fetched);
        assert_eq!(server(&p), "https://127.0.0.1:6443", "the profile's server");
        let w: Vec<&Problem> = p
            .problems
            .iter()
            .filter(|x| x.summary.contains("points elsewhere"))
            .collect();
        assert_eq!(w.len(), 1, "{:?}", p.problems);
        assert_eq!(w[0].severity, Severity::Warning);
        assert!(
            w[0].detail.contains("- a/r (registered): ")
                && w[0].detail.contains("127.0.0.1:1 ")
                && w[0].detail.contains("127.0.0.1:6443")
                && !w[0].detail.contains("canary"),
            "{}",
            w[0].detail
        );
        assert!(!p.has_errors());
        f.spec.credentials.secret_reader_mode = SecretReaderMode::WholeKubeconfig;
        let p = f.run_reading(&crate::domain::plan::NO_UNDECODABLE, &fetched);
        assert_eq!(server(&p), "https://127.0.0.1:1", "the Secret's server");
        assert!(
            !p.problems
                .iter()
                .any(|x| x.summary.contains("points elsewhere")),
            "{:?}",
            p.problems
        );
    }

    /// Once a profile names a `kubeconfig-secretreader` Secret, that is its source: with the Secret missing, the
    /// profile has no usable credentials although a labelled Secret for it exists (no fallback).
    #[test]
    fn a_missing_secret_reader_secret_never_falls_back_to_labelled_secrets() {
        use crate::api::keys;
        let mut f = Fixture::new();
        f.profiles = vec![profile("a", "r", &[])];
        f.secrets = vec![labelled_secret(
            "a",
            "s1",
            "r",
            None,
            &[("config", KUBECONFIG)],
        )];
        assert!(
            f.run().desired.contains_key("a/r"),
            "control: the labelled Secret serves"
        );
        add_provider(
            &mut f.profiles[0],
            keys::SECRET_READER_PROVIDER,
            serde_json::json!({"name": "kc", "key": "value"}),
        );
        let fetched = BTreeMap::from([(("a".to_string(), "kc".to_string()), None)]);
        let p = f.run_reading(&crate::domain::plan::NO_UNDECODABLE, &fetched);
        assert!(
            !p.desired.contains_key("a/r"),
            "registered from the labelled Secret"
        );
        assert!(
            p.problems
                .iter()
                .any(|x| x.summary.contains("no usable credentials") && x.detail.contains("- a/r ")),
            "{:?}",
            p.problems
        );
    }

    /// A cause shared by 25 clusters: one warning listing the first 20 by name (whatever order the inventory
    /// answered in), then how many more.
    #[test]
    fn a_grouped_warning_names_the_first_twenty_by_name_then_a_count() {
        let mut f = Fixture::new();
        f.secrets.clear();
        f.profiles = (0..25)
            .rev()
            .map(|i| profile("a", &format!("c{i:02}"), &[]))
            .collect();
        let p = f.run();
        let w: Vec<&Problem> = p
            .problems
            .iter()
            .filter(|x| x.summary.starts_with("25 ClusterProfile(s)"))
            .collect();
        assert_eq!(w.len(), 1, "{:?}", p.problems);
        let listed: Vec<&str> = w[0]
            .detail
            .lines()
            .filter_map(|l| l.strip_prefix("- a/"))
            .map(|l| l.split(' ').next().unwrap())
            .collect();
        let first: Vec<String> = (0..20).map(|i| format!("c{i:02}")).collect();
        assert_eq!(listed, first, "{}", w[0].detail);
        assert!(w[0].detail.contains("\n- and 5 more\n"), "{}", w[0].detail);
    }

    #[test]
    fn removal_guard() {
        let mut f = Fixture::new();
        f.observed = observed_after(&f.run(), "main");
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
    fn without_max_removals_a_plan_deregisters_at_most_ten_or_a_quarter() {
        assert_eq!(removal_limit(None, 0), 10);
        assert_eq!(removal_limit(None, 40), 10);
        assert_eq!(removal_limit(None, 100), 25);
        assert_eq!(removal_limit(None, 10_000), 2_500);
        assert_eq!(removal_limit(Some(0), 10_000), 0);
        assert_eq!(removal_limit(Some(5_000), 10), 5_000);
        let spec = BridgeSpec::default();
        let keys = |n: usize| (0..n).map(|i| format!("ns/c{i}")).collect::<Vec<_>>();
        // An inventory that answers with nothing: all 100 would go.
        let e = removals_problem(&spec, &keys(100), 100).unwrap();
        assert_eq!(e.severity, Severity::Error);
        assert!(
            e.summary.contains("100 of 100") && e.detail.contains("at least 100"),
            "{e:?}"
        );
        assert_eq!(e.path, vec![Step::Attr("max_removals")]);
        // A routine decommission passes with a warning naming the limit and what happens to the add-ons.
        let w = removals_problem(&spec, &keys(25), 100).unwrap();
        assert_eq!(w.severity, Severity::Warning);
        assert!(w.detail.contains("(now 25)"), "{w:?}");
        assert!(w.detail.contains("add-ons are withdrawn first"), "{w:?}");
        let orphan = BridgeSpec {
            deregistration: Deregistration::Orphan,
            ..BridgeSpec::default()
        };
        let w = removals_problem(&orphan, &keys(25), 100).unwrap();
        assert!(w.detail.contains("managed by no one"), "{w:?}");
        assert!(!w.detail.contains("  "), "runs of spaces: {:?}", w.detail);
        // Small fleets: up to ten.
        assert_eq!(
            removals_problem(&spec, &keys(10), 12).unwrap().severity,
            Severity::Warning
        );
    }
}
