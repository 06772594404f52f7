//! The one mapping from what the layers below report to Terraform diagnostics: the core's problems (with their
//! attribute paths) and the typed errors of the Kubernetes layer (each naming its cluster and object).

use crate::{
    domain::{
        claim_check::ClaimRefusal,
        ownership::ClaimConflict,
        plan::name_list,
        problem::{Problem, Severity, Step},
    },
    k8s::io::{self, IoError},
    runtime::{
        apply::{DestroyStop, NotApplied},
        clusters::ClustersError,
        credentials::{CredentialsError, MintError},
        deregister::RemoveError,
        execute::{Outcome, WriteError},
        plan::PlanStop,
        profiles::ProfilesError,
        readiness::NotReady,
    },
    tfplugin::{AttributePath, Diagnostic, Diagnostics},
};

/// The attribute path of a core problem.
pub fn problem_path(steps: &[Step]) -> Option<AttributePath> {
    let mut path: Option<AttributePath> = None;
    for step in steps {
        let base = path.unwrap_or_else(AttributePath::root);
        path = Some(match step {
            Step::Attr(a) => base.then_attr(*a),
            Step::Key(k) => base.then_key(k),
            Step::Index(i) => base.then_index(i64::try_from(*i).unwrap_or(i64::MAX)),
        });
    }
    path
}

/// A core problem as a diagnostic with its attribute path.
pub fn problem_diag(p: &Problem) -> Diagnostic {
    let d = match p.severity {
        Severity::Error => Diagnostic::error(&p.summary, &p.detail),
        Severity::Warning => Diagnostic::warning(&p.summary, &p.detail),
    };
    match problem_path(&p.path) {
        Some(path) => d.with_attribute(path),
        None => d,
    }
}

/// Core problems as diagnostics.
pub fn problems_diags<'p>(problems: impl IntoIterator<Item = &'p Problem>) -> Diagnostics {
    let mut d = Diagnostics::new();
    d.extend(problems.into_iter().map(problem_diag));
    d
}

/// The problems of the bridge's configuration as diagnostics. The CLIs cannot point at a path that continues
/// past a map key (a limit of theirs, not a rule of the core, which reports the full path): a problem deeper inside
/// `overrides["<key>"]` points at that entry and names the rest of its path in its detail.
pub fn config_problems_diags(problems: &[Problem]) -> Diagnostics {
    let mut d = Diagnostics::new();
    d.extend(problems.iter().map(|p| {
        if p.path.len() > 2 && p.path.first() == Some(&Step::Attr("overrides")) {
            let full = problem_path(&p.path)
                .map(|f| f.to_string())
                .unwrap_or_default();
            problem_diag(&Problem {
                path: p.path[..2].to_vec(),
                detail: format!("{full}: {}", p.detail),
                ..p.clone()
            })
        } else {
            problem_diag(p)
        }
    }));
    d
}

/// A Kubernetes error as a diagnostic.
pub fn io_diag(e: &IoError) -> Diagnostic {
    Diagnostic::error(
        format!("Cannot {} {}", e.action, e.object),
        e.message.clone(),
    )
}

/// A Kubernetes error as the diagnostics of a call that stops on it.
pub fn io_diags(e: IoError) -> Diagnostics {
    io_diag(&e).into()
}

/// A cluster whose objects were not written at apply.
pub fn write_diag(e: &WriteError) -> Diagnostic {
    match e {
        WriteError::Io { key, source } => Diagnostic::error(
            format!("Cannot bridge ClusterProfile {key}"),
            format!(
                "{source}. Nothing else was changed for this cluster; run apply again to converge."
            ),
        ),
        WriteError::Mint(m) => mint_diag(m),
    }
}

/// A cluster whose credential was not minted at apply.
fn mint_diag(e: &MintError) -> Diagnostic {
    match e {
        MintError::ProfileVanished { key } => Diagnostic::error(
            format!("ClusterProfile {key} vanished during apply"),
            "Run plan again.",
        ),
        MintError::ProviderVanished { key, provider } => Diagnostic::error(
            format!("Access provider {provider} of ClusterProfile {key} vanished"),
            "Run plan again.",
        ),
        MintError::Exec { key, source } => Diagnostic::error(
            format!("Cannot mint credentials for ClusterProfile {key}"),
            source.to_string(),
        ),
        MintError::Kubeconfig { key, source } => Diagnostic::error(
            format!("Cannot mint credentials for ClusterProfile {key}"),
            format!(
                "The access provider's cluster entry cannot be written as a kubeconfig: {source}."
            ),
        ),
    }
}

/// A bridged cluster that was not (wholly) removed.
pub fn remove_diag(e: &RemoveError) -> Diagnostic {
    match e {
        RemoveError::Io { key, source } => Diagnostic::error(
            format!("Cannot remove the bridged cluster {key}"),
            format!("{source}. Run apply again to finish removing it."),
        ),
        RemoveError::StillTerminating {
            key,
            namespace,
            name,
            timeout,
            already_terminating,
        } => still_terminating_diag(key, (namespace, name), *timeout, *already_terminating),
        RemoveError::NotWithdrawn {
            key,
            namespace,
            name,
            summaries,
            timeout,
            resumed,
        } => not_withdrawn_diag(key, (namespace, name), summaries, *timeout, *resumed),
    }
}

fn still_terminating_diag(
    key: &str,
    (namespace, name): (&str, &str),
    timeout: std::time::Duration,
    already_terminating: bool,
) -> Diagnostic {
    let waited = if already_terminating {
        "was already being deleted when this run started (so it was not waited for again)"
            .to_string()
    } else {
        format!(
            "was asked to go but still exists after deregistration_timeout ({}s)",
            timeout.as_secs()
        )
    };
    Diagnostic::error(
        format!("SveltosCluster {namespace}/{name} is still being deleted"),
        format!(
            "ClusterProfile {key}: the SveltosCluster {waited}: a finalizer holds it (Sveltos itself puts none on \
             SveltosClusters; see its metadata.finalizers). Its kubeconfig Secret was kept; once the finalizer is \
             removed, apply (or destroy) finishes removing it."
        ),
    )
}

fn not_withdrawn_diag(
    key: &str,
    (namespace, name): (&str, &str),
    summaries: &[String],
    timeout: std::time::Duration,
    resumed: bool,
) -> Diagnostic {
    let held = format!(
        "addon-controller still keeps {} ClusterSummary object(s) for it ({})",
        summaries.len(),
        name_list(summaries.iter().map(String::as_str))
    );
    let when = if resumed {
        "; the labels the bridge wrote on it were already gone (removed by an earlier run, or it had none), so \
         this run did not wait"
            .to_string()
    } else {
        format!(
            " after deregistration_timeout ({}s), the labels the bridge wrote on it removed",
            timeout.as_secs()
        )
    };
    Diagnostic::error(
        format!("Add-ons of SveltosCluster {namespace}/{name} not withdrawn"),
        format!(
            "ClusterProfile {key}: {held}{when}. The SveltosCluster and its kubeconfig Secret were kept, so that \
             Sveltos can still reach the cluster and withdraw them. Sveltos withdraws nothing from a paused cluster \
             (paused, or outside its active window) or an unreachable one, nor while a Sveltos profile selects the \
             cluster by clusterRefs, by the bridge's ownership label or by a label the bridge does not write. Once \
             they are gone, apply (or destroy) finishes removing it; deregistration = \"orphan\" removes it now \
             and leaves its add-ons on the cluster."
        ),
    )
}

/// Removals that failed, one diagnostic each.
pub fn removals_diags(errors: &[RemoveError]) -> Diagnostics {
    errors.iter().map(remove_diag).collect()
}

/// What failed in apply's writes and deletes: the removals, then the writes.
pub fn outcome_diags(outcome: &Outcome) -> Diagnostics {
    let mut d = removals_diags(&outcome.removed.errors);
    d.extend(outcome.write_errors.iter().map(write_diag));
    d
}

/// Failures confined to their clusters (outside `strict`), as warnings: every other cluster was applied.
pub fn confined_diags(outcome: &Outcome) -> impl Iterator<Item = Diagnostic> {
    outcome_diags(outcome).into_vec().into_iter().map(|mut d| {
        if d.is_error() {
            d.severity = crate::tfplugin::Severity::Warning;
            d.detail
                .push_str(" Every other cluster was applied; strict = true makes this an error.");
        }
        d
    })
}

/// Most clusters named one by one in the diagnostics of `wait_for_ready` (the rest are counted in one more).
const NOT_READY_NAMED: usize = 20;

/// `wait_for_ready`: one diagnostic per cluster sveltoscluster-manager did not report Ready in time, a warning (an
/// error with `strict`); every cluster was written either way.
pub fn not_ready_diags(not_ready: &[NotReady], strict: bool) -> Diagnostics {
    let tail = if strict {
        "Every cluster was written; strict = true makes this an error."
    } else {
        "Every cluster was written and every other cluster applied; strict = true makes this an error."
    };
    let diag = |summary: String, detail: String| {
        if strict {
            Diagnostic::error(summary, detail)
        } else {
            Diagnostic::warning(summary, detail)
        }
    };
    let mut out: Diagnostics = not_ready
        .iter()
        .take(NOT_READY_NAMED)
        .map(|n| {
            diag(
                format!("SveltosCluster {} is not Ready", n.key),
                format!(
                    "sveltoscluster-manager did not report SveltosCluster {} Ready within {}s (wait_for_ready,                      ready_timeout): {}. {tail}",
                    n.key,
                    n.waited.as_secs(),
                    n.last_seen
                ),
            )
        })
        .collect();
    if let Some(rest) = not_ready
        .len()
        .checked_sub(NOT_READY_NAMED)
        .filter(|r| *r > 0)
    {
        out.push(diag(
            format!("{rest} more SveltosClusters are not Ready"),
            format!(
                "sveltoscluster-manager did not report {rest} more clusters Ready in time: {}. {tail}",
                name_list(not_ready.iter().skip(NOT_READY_NAMED).map(|n| n.key.as_str()))
            ),
        ));
    }
    out
}

/// An apply that stopped before it wrote anything.
pub fn not_applied_diags(e: NotApplied) -> Diagnostics {
    match e {
        NotApplied::Read(e) => io_diags(e),
        NotApplied::Plan(problems) => problems_diags(&problems),
    }
}

/// An apply whose writes did not finish within `limit`.
pub fn apply_timed_out_diag(limit: std::time::Duration) -> Diagnostic {
    Diagnostic::error(
        "Apply timed out",
        format!(
            "The bridge's writes did not finish within {}s (timeouts). What was written is kept and recorded; run \
             apply again to converge.",
            limit.as_secs()
        ),
    )
}

/// A plan that stopped before it planned: its claim refused it, or what it reads could not be read.
pub fn plan_stop_diags(stop: PlanStop) -> Diagnostics {
    match stop {
        PlanStop::Claim(refusal) => claim_refusal_diags(&refusal),
        PlanStop::Read(e) => io_diags(e),
    }
}

/// Why this state may not use the bridge's name, at the attribute `name`.
pub fn claim_refusal_diags(refusal: &ClaimRefusal) -> Diagnostics {
    let d = match refusal {
        ClaimRefusal::Tainted {
            conflict,
            failed_first,
        } => tainted(conflict, *failed_first),
        ClaimRefusal::UsedByAnother(conflict) => used_by_another_state(conflict),
    };
    Diagnostics::from(d.with_attribute(AttributePath::attr("name")))
}

/// This state's own bridge, marked tainted: Terraform plans to replace it without telling the provider what it
/// owns. After a failed first apply the apply resumes once untainted; otherwise the bridge was tainted on
/// purpose, and `-replace` is how to ask for a replacement.
fn tainted(e: &ClaimConflict, failed_first: bool) -> Diagnostic {
    if failed_first {
        return Diagnostic::error(
            "Bridge tainted after a failed first apply",
            format!(
                "Bridge {:?} is this state's own (instance {}), marked tainted by Terraform because its first \
                 apply failed part-way. Replacing it would deregister every cluster it registered and register \
                 them again, so nothing was planned. Run `terraform untaint` (or `tofu untaint`) with the \
                 resource's address; the next apply then resumes where the failed one stopped.",
                e.bridge, e.other
            ),
        );
    }
    Diagnostic::error(
        "Bridge tainted",
        format!(
            "Bridge {:?} is this state's own (instance {}) and its last apply succeeded, but it is marked tainted \
             (`terraform taint`), so Terraform plans to replace it. A tainted bridge is replaced without the record \
             of what it owns, so nothing was planned. Run `terraform untaint` (or `tofu untaint`) with the \
             resource's address to keep it; to replace it (deregister every cluster, then register them again), \
             untaint it and run `terraform apply -replace=<address>`.",
            e.bridge, e.other
        ),
    )
}

/// The name is claimed by another instance: another state's bridge, or the bridge this resource replaces with
/// `create_before_destroy` (not destroyed yet; the provider cannot tell the two apart then).
fn used_by_another_state(e: &ClaimConflict) -> Diagnostic {
    Diagnostic::error(
        "Bridge name already used by another state",
        format!(
            "{e}. Two states managing one bridge name would delete each other's clusters, so nothing was \
             written. If the bridge belongs in another state, use another name here. If another state imported \
             this bridge, it holds it now: remove it from this state (`terraform state rm <address>`). (A first \
             apply of this state that was interrupted is taken over once its run is gone, at the latest when \
             its timeout has passed. A replacement of this bridge with `create_before_destroy` cannot take the \
             name while the bridge it replaces holds it: remove `create_before_destroy` from its `lifecycle`.)"
        ),
    )
}

/// A destroy that did not finish.
pub fn destroy_diags(stop: DestroyStop) -> Diagnostics {
    match stop {
        DestroyStop::Read(e) | DestroyStop::Claim(e) => io_diags(e),
        DestroyStop::Removals(errors) => removals_diags(&errors),
        DestroyStop::TimedOut(limit) => Diagnostic::error(
            "Destroy timed out",
            format!(
                "Not every bridged cluster was removed within {}s (timeouts.delete); run destroy again.",
                limit.as_secs()
            ),
        )
        .into(),
    }
}

/// The error diagnostic for a failure on ClusterProfile `namespace/name`.
pub fn credentials_failure(namespace: &str, name: &str, e: &CredentialsError) -> Diagnostic {
    let d = Diagnostic::error(
        format!("Cannot get the credentials of ClusterProfile {namespace}/{name}"),
        format!(
            "{e}. The sveltos_cluster_credentials ephemeral resource resolves credentials as \
             sveltos_cluster_inventory_bridge does; the sveltos_clusterprofile data source reports where they would \
             come from."
        ),
    );
    match e {
        CredentialsError::ProfileNotFound { .. } => d.with_attribute(AttributePath::attr("name")),
        _ => d,
    }
}

/// The error diagnostic for a failed read of the ClusterProfile data sources.
pub fn profiles_failure(e: &ProfilesError) -> Diagnostic {
    match e {
        ProfilesError::NotFound { namespace, name } => Diagnostic::error(
            format!("ClusterProfile {namespace}/{name} not found"),
            e.to_string(),
        )
        .with_attribute(AttributePath::attr("name")),
        ProfilesError::Read {
            namespace, name, ..
        } => Diagnostic::error(
            format!("Cannot read ClusterProfile {namespace}/{name}"),
            e.to_string(),
        ),
        ProfilesError::List { .. } => {
            Diagnostic::error("Cannot list ClusterProfiles", e.to_string())
        }
        ProfilesError::Locate { key: Some(key), .. } => Diagnostic::error(
            format!("Cannot locate the credentials of ClusterProfile {key}"),
            e.to_string(),
        ),
        ProfilesError::Locate { key: None, .. } => Diagnostic::error(
            "Cannot locate the credentials of the ClusterProfiles",
            e.to_string(),
        ),
    }
}

/// The warning naming the objects of `kind` that exist but cannot be read (at most 20 of them); `None` when every
/// one was read.
pub fn undecodable_warning(kind: &str, undecodable: Vec<io::Undecodable>) -> Option<Diagnostic> {
    let bad = io::Undecodable::by_key(undecodable);
    if bad.is_empty() {
        return None;
    }
    let lines: Vec<String> = bad
        .iter()
        .take(20)
        .map(|(k, why)| format!("- {k}: {why}"))
        .collect();
    Some(Diagnostic::warning(
        format!("{} {kind}(s) cannot be read and are not listed", bad.len()),
        lines.join("\n"),
    ))
}

/// The warning for the ClusterProfiles whose `kubeconfig-secretreader` Secret points elsewhere than the profile
/// (`notices`: profile key and what differs, in the core's words: fields and hosts, escaped and bounded), as the
/// bridge's plan gives it, for the data sources and the ephemeral resource; `None` for none. At most 20 are named.
pub fn secret_reader_notices<'n>(
    notices: impl IntoIterator<Item = (&'n str, &'n str)>,
) -> Option<Diagnostic> {
    let notices: Vec<(&str, &str)> = notices.into_iter().collect();
    if notices.is_empty() {
        return None;
    }
    let mut lines: Vec<String> = notices
        .iter()
        .take(20)
        .map(|(key, what)| format!("- {key} (the ClusterProfile's connection): {what}"))
        .collect();
    if notices.len() > 20 {
        lines.push(format!("- and {} more", notices.len() - 20));
    }
    let detail = format!(
        "{}\n\nTheir credentials are the user of their Secret's kubeconfig with the server, CA, tls-server-name and \
         proxy-url of their access provider's cluster entry, as sveltos_cluster_inventory_bridge registers them and \
         as the upstream kubeconfig-secretreader plugin and every consumer of the upstream access library connect. \
         If the Secret's kubeconfig is the one to use, fix the ClusterProfile, or set \
         credentials.secret_reader_mode = \"whole_kubeconfig\" (the convention of Sveltos' \
         clusterinventory-controller).",
        lines.join("\n")
    );
    Some(
        Diagnostic::warning(
            format!(
                "{} ClusterProfile(s): the kubeconfig-secretreader Secret points elsewhere than the ClusterProfile",
                notices.len()
            ),
            detail,
        )
        .with_attribute(AttributePath::attr("credentials").then_attr("secret_reader_mode")),
    )
}

/// The error diagnostic for a failed read of the `sveltos_clusters` data source.
pub fn clusters_failure(e: &ClustersError) -> Diagnostic {
    match e {
        ClustersError::List { .. } => Diagnostic::error(
            "Cannot read SveltosClusters",
            format!(
                "{e}. Check that the management cluster is reachable with the provider's configuration and that \
                 the SveltosCluster CRD is installed."
            ),
        ),
        ClustersError::Claim {
            bridge,
            namespace,
            name,
            ..
        } => Diagnostic::error(
            "Cannot read the bridge's claim",
            format!(
                "{e}. Which SveltosClusters bridge {bridge:?} owns is recorded in its claim, ConfigMap \
                 {namespace}/{name}: the provider's identity needs `get` on ConfigMaps there (set \
                 `claim_namespace` if the bridge sets it)."
            ),
        )
        .with_attribute(AttributePath::attr("claim_namespace")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configuration_problem_inside_an_override_points_at_the_entry_and_names_the_rest() {
        let deep = Problem::error(
            vec![
                Step::Attr("overrides"),
                Step::Key("ns/c1".into()),
                Step::Attr("extra_labels"),
                Step::Key("bad key!".into()),
            ],
            "Invalid label",
            "why",
        );
        let entry = Problem::error(
            vec![Step::Attr("overrides"), Step::Key("noslash".into())],
            "Invalid override key",
            "why",
        );
        let top = Problem::error(
            vec![Step::Attr("extra_labels"), Step::Key("k".into())],
            "s",
            "why",
        );
        let d = config_problems_diags(&[deep, entry, top]).into_vec();
        let shown: Vec<(String, &str)> = d
            .iter()
            .map(|d| (d.attribute.as_ref().unwrap().to_string(), d.detail.as_str()))
            .collect();
        assert_eq!(
            shown,
            [
                (
                    "overrides[\"ns/c1\"]".to_string(),
                    "overrides[\"ns/c1\"].extra_labels[\"bad key!\"]: why"
                ),
                ("overrides[\"noslash\"]".to_string(), "why"),
                ("extra_labels[\"k\"]".to_string(), "why"),
            ]
        );
    }

    #[test]
    fn a_cluster_still_being_deleted_is_named_in_one_readable_sentence() {
        let d = remove_diag(&RemoveError::StillTerminating {
            key: "ns/c1".into(),
            namespace: "ns".into(),
            name: "c1".into(),
            timeout: std::time::Duration::from_secs(300),
            already_terminating: false,
        });
        assert_eq!(d.summary, "SveltosCluster ns/c1 is still being deleted");
        assert!(
            d.detail.contains("deregistration_timeout (300s)"),
            "{}",
            d.detail
        );
        assert!(!d.detail.contains("  "), "runs of spaces: {:?}", d.detail);
    }

    #[test]
    fn add_ons_not_withdrawn_name_the_cluster_its_summaries_and_the_ways_out() {
        let e = |resumed| RemoveError::NotWithdrawn {
            key: "ns/c1".into(),
            namespace: "ns".into(),
            name: "c1".into(),
            summaries: vec!["web-sveltos-c1".into()],
            timeout: std::time::Duration::from_secs(300),
            resumed,
        };
        let d = remove_diag(&e(false));
        assert_eq!(d.summary, "Add-ons of SveltosCluster ns/c1 not withdrawn");
        for part in [
            "ClusterProfile ns/c1: addon-controller still keeps 1 ClusterSummary object(s) for it (web-sveltos-c1)",
            "after deregistration_timeout (300s)",
            "were kept",
            "deregistration = \"orphan\"",
        ] {
            assert!(d.detail.contains(part), "{part:?} not in {:?}", d.detail);
        }
        assert!(!d.detail.contains("  "), "runs of spaces: {:?}", d.detail);
        let d = remove_diag(&e(true));
        assert!(
            d.detail.contains("so this run did not wait"),
            "{}",
            d.detail
        );
        assert!(!d.detail.contains("deregistration_timeout"), "{}", d.detail);
        assert!(!d.detail.contains("  "), "runs of spaces: {:?}", d.detail);
    }
}
