//! The bridge's configuration as written ([`BridgeInput`], plain values, every argument optional as in the
//! configuration) and its validation into a [`BridgeSpec`]: every check of the bridge's arguments, each problem an
//! error at its attribute path, and what the checks parse (selector, policies, durations, checks). The mapping
//! layer decodes Terraform values into the input and maps the problems to diagnostics, nothing else.

mod checks;
mod copy_properties;
mod sveltos_fields;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use crate::{
    api::{ActiveWindow, ClusterCheck, WorkloadIdentity},
    domain::{
        BridgeSpec, Deregistration, LabelCopy, Override, Selection, TokenRenewal, UnhealthyPolicy,
        credentials::{
            CredentialOptions, CredentialsConfig, options::validate as validate_credentials,
        },
        members::{DuplicateMembers, MemberPolicy},
        ownership::DEFAULT_CLAIM_NAMESPACE,
        problem::{Problem, Step},
        properties::PropertyCopy,
        selector::Selector,
    },
};
use sveltos_fields::OverrideChecks;

/// The bridge's configuration as written: each field one argument or block of the resource (absent: `None`), the
/// `inventory` block reduced to whether it is there, and the configuration record the spec carries.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BridgeInput {
    /// `name`.
    pub name: String,
    /// `namespaces`.
    pub namespaces: Option<Vec<String>>,
    /// `names`.
    pub names: Option<Vec<String>>,
    /// `label_selector`.
    pub label_selector: Option<String>,
    /// `cluster_manager`.
    pub cluster_manager: Option<String>,
    /// `require_healthy`.
    pub require_healthy: Option<bool>,
    /// `require_credentials`.
    pub require_credentials: Option<bool>,
    /// `extra_labels`.
    pub extra_labels: Option<BTreeMap<String, String>>,
    /// `extra_annotations`.
    pub extra_annotations: Option<BTreeMap<String, String>>,
    /// `paused`.
    pub paused: Option<bool>,
    /// `consecutive_failure_threshold`.
    pub consecutive_failure_threshold: Option<i64>,
    /// `data`.
    pub data: Option<BTreeMap<String, String>>,
    /// `readiness_checks`: the upstream `readinessChecks` list as JSON text.
    pub readiness_checks: Option<String>,
    /// `liveness_checks` (as `readiness_checks`).
    pub liveness_checks: Option<String>,
    /// `pull_mode`.
    pub pull_mode: Option<bool>,
    /// `workload_identity`, as the upstream CRD has it (its rules are checked here).
    pub workload_identity: Option<WorkloadIdentity>,
    /// `adopt`.
    pub adopt: Option<bool>,
    /// `overrides`, keyed `namespace/name`.
    pub overrides: Option<BTreeMap<String, OverrideInput>>,
    /// The `credentials` block.
    pub credentials: Option<CredentialsConfig>,
    /// The `active_window` block.
    pub active_window: Option<ActiveWindow>,
    /// `strict`.
    pub strict: Option<bool>,
    /// `fail_on_skipped`.
    pub fail_on_skipped: Option<bool>,
    /// `unhealthy`.
    pub unhealthy: Option<String>,
    /// `duplicate_members`.
    pub duplicate_members: Option<String>,
    /// `duplicate_members_by_server`.
    pub duplicate_members_by_server: Option<bool>,
    /// `skip_cluster_api_clusters`.
    pub skip_cluster_api_clusters: Option<bool>,
    /// `max_removals`.
    pub max_removals: Option<i64>,
    /// `max_updates`.
    pub max_updates: Option<i64>,
    /// The `copy_labels` block.
    pub copy_labels: Option<LabelCopyInput>,
    /// The `copy_properties` block.
    pub copy_properties: Option<PropertyCopyInput>,
    /// `deregistration`.
    pub deregistration: Option<String>,
    /// `deregistration_timeout`.
    pub deregistration_timeout: Option<String>,
    /// `wait_for_ready`.
    pub wait_for_ready: Option<bool>,
    /// `ready_timeout`.
    pub ready_timeout: Option<String>,
    /// `claim_namespace`.
    pub claim_namespace: Option<String>,
    /// The `token_renewal` block (see [`written_renewal`]).
    pub token_renewal: Option<TokenRenewal>,
    /// Whether the `inventory` block is set (the ClusterProfiles are read from a hub).
    pub inventory: bool,
    /// The configuration record the spec carries ([`BridgeSpec::config_record`]), as the mapping layer wrote it.
    pub config_record: Option<String>,
}

/// One `overrides` entry as written.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OverrideInput {
    /// `extra_labels`.
    pub extra_labels: Option<BTreeMap<String, String>>,
    /// `extra_annotations`.
    pub extra_annotations: Option<BTreeMap<String, String>>,
    /// `paused`.
    pub paused: Option<bool>,
    /// `skip`.
    pub skip: Option<bool>,
    /// `token_renewal` (see [`written_renewal`]).
    pub token_renewal: Option<TokenRenewal>,
    /// `active_window`.
    pub active_window: Option<ActiveWindow>,
    /// `consecutive_failure_threshold`.
    pub consecutive_failure_threshold: Option<i64>,
    /// `data`.
    pub data: Option<BTreeMap<String, String>>,
    /// `pull_mode`.
    pub pull_mode: Option<bool>,
    /// `workload_identity`.
    pub workload_identity: Option<WorkloadIdentity>,
    /// `readiness_checks` (JSON text, as the bridge-wide one, which it replaces for this cluster).
    pub readiness_checks: Option<String>,
    /// `liveness_checks` (as `readiness_checks`).
    pub liveness_checks: Option<String>,
}

/// The `copy_labels` block as written.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LabelCopyInput {
    /// `include`.
    pub include: Option<Vec<String>>,
    /// `exclude` (absent: the default excludes).
    pub exclude: Option<Vec<String>>,
    /// `remove_foreign`.
    pub remove_foreign: Option<bool>,
}

/// The `copy_properties` block as written.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PropertyCopyInput {
    /// `names`.
    pub names: Option<Vec<String>>,
    /// `label_prefix` (absent: the default prefix).
    pub label_prefix: Option<String>,
    /// `kubernetes_version_as`.
    pub kubernetes_version_as: Option<String>,
}

/// A `token_renewal` object as written: `service_account` (`namespace/name`) split into namespace and name; without
/// a `/` the namespace reads as empty, which validation refuses.
pub fn written_renewal(
    interval: String,
    token_duration: Option<String>,
    service_account: Option<&str>,
) -> TokenRenewal {
    TokenRenewal {
        interval,
        token_duration,
        sa_namespace: service_account
            .map(|s| s.split_once('/').map_or("", |(ns, _)| ns).to_string()),
        sa_name: service_account.map(|s| s.split_once('/').map_or(s, |(_, n)| n).to_string()),
    }
}

/// Validates the configuration into a [`BridgeSpec`]: every problem is an error at its attribute path, the
/// `credentials` block's first, then the others in the order of [`BridgeInput::check`].
pub fn validate(input: &BridgeInput) -> Result<BridgeSpec, Vec<Problem>> {
    let (credentials, mut problems) = match validate_credentials(input.credentials.as_ref()) {
        Ok(c) => (Some(c), Vec::new()),
        Err(problems) => (None, problems),
    };
    let mut err = |path: Vec<Step>, summary: &str, detail: String| {
        problems.push(Problem::error(path, summary, detail));
    };
    let parsed = input.check(&mut err);
    match credentials {
        Some(credentials) if problems.is_empty() => Ok(input.spec(credentials, parsed)),
        _ => Err(problems),
    }
}

/// Where the checks report a problem: the attribute path, a summary and a detail.
trait Report: FnMut(Vec<Step>, &str, String) {}
impl<F: FnMut(Vec<Step>, &str, String)> Report for F {}

/// An attribute path being built: `at("overrides").then_key(k).then_attr("paused")`.
trait PathBuild: Sized {
    fn then_attr(self, attr: &'static str) -> Self;
    fn then_key(self, key: &str) -> Self;
    fn then_index(self, index: usize) -> Self;
}

impl PathBuild for Vec<Step> {
    fn then_attr(mut self, attr: &'static str) -> Self {
        self.push(Step::Attr(attr));
        self
    }
    fn then_key(mut self, key: &str) -> Self {
        self.push(Step::Key(key.to_string()));
        self
    }
    fn then_index(mut self, index: usize) -> Self {
        self.push(Step::Index(index));
        self
    }
}

/// The path of a top-level attribute or block.
fn at(attr: &'static str) -> Vec<Step> {
    vec![Step::Attr(attr)]
}

/// The values the checks parse while they validate.
struct Parsed {
    label_selector: Option<Selector>,
    unhealthy: UnhealthyPolicy,
    max_removals: Option<usize>,
    max_updates: Option<usize>,
    copy_labels: LabelCopy,
    deregistration: Deregistration,
    deregistration_timeout: std::time::Duration,
    ready_wait: Option<std::time::Duration>,
    checks: [Vec<ClusterCheck>; 2],
    /// Each override's `readiness_checks` and `liveness_checks` (`None`: the bridge-wide list), by key.
    override_checks: BTreeMap<String, OverrideChecks>,
    duplicates: DuplicateMembers,
    properties: PropertyCopy,
}

impl OverrideInput {
    /// This entry as the domain's [`Override`], with the checks validation parsed.
    fn to_override(&self, checks: Option<OverrideChecks>) -> Override {
        let [readiness_checks, liveness_checks] = checks.unwrap_or_default();
        Override {
            readiness_checks,
            liveness_checks,
            extra_labels: self.extra_labels.clone().unwrap_or_default(),
            extra_annotations: self.extra_annotations.clone().unwrap_or_default(),
            paused: self.paused,
            skip: self.skip.unwrap_or(false),
            token_renewal: self.token_renewal.clone(),
            active_window: self.active_window.clone(),
            consecutive_failure_threshold: self.consecutive_failure_threshold,
            data: self.data.clone().unwrap_or_default(),
            pull_mode: self.pull_mode,
            workload_identity: self.workload_identity.clone(),
        }
    }
}

impl BridgeInput {
    /// The validated spec: the configuration with its defaults, the credentials and what the checks parsed.
    fn spec(&self, credentials: CredentialOptions, parsed: Parsed) -> BridgeSpec {
        BridgeSpec {
            name: self.name.clone(),
            selection: Selection {
                namespaces: self.namespaces.clone().unwrap_or_default(),
                names: self.names.clone().unwrap_or_default(),
                label_selector: parsed.label_selector,
                cluster_manager: self.cluster_manager.clone(),
                require_healthy: self.require_healthy.unwrap_or(false),
            },
            credentials,
            require_credentials: self.require_credentials.unwrap_or(false),
            extra_labels: self.extra_labels.clone().unwrap_or_default(),
            extra_annotations: self.extra_annotations.clone().unwrap_or_default(),
            paused: self.paused,
            consecutive_failure_threshold: self.consecutive_failure_threshold,
            active_window: self.active_window.clone(),
            overrides: self
                .overrides
                .iter()
                .flatten()
                .map(|(k, o)| {
                    let checks = parsed.override_checks.get(k).cloned();
                    (k.clone(), o.to_override(checks))
                })
                .collect(),
            adopt: self.adopt.unwrap_or(false),
            strict: self.strict.unwrap_or(false),
            fail_on_skipped: self.fail_on_skipped.unwrap_or(false),
            unhealthy: parsed.unhealthy,
            max_removals: parsed.max_removals,
            max_updates: parsed.max_updates,
            copy_labels: parsed.copy_labels,
            deregistration: parsed.deregistration,
            deregistration_timeout: parsed.deregistration_timeout,
            token_renewal: self.token_renewal.clone(),
            ready_wait: parsed.ready_wait,
            data: self.data.clone().unwrap_or_default(),
            readiness_checks: parsed.checks[0].clone(),
            liveness_checks: parsed.checks[1].clone(),
            pull_mode: self.pull_mode,
            workload_identity: self.workload_identity.clone(),
            members: MemberPolicy {
                duplicates: parsed.duplicates,
                match_server: self.duplicate_members_by_server.unwrap_or(false),
                skip_cluster_api: self.skip_cluster_api_clusters.unwrap_or(false),
            },
            properties: parsed.properties,
            claim_namespace: self
                .claim_namespace
                .clone()
                .unwrap_or_else(|| DEFAULT_CLAIM_NAMESPACE.to_string()),
            config_record: self.config_record.clone(),
        }
    }
}
