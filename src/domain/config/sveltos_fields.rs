//! The checks of the settings that go into a SveltosCluster's spec beyond the kubeconfig (`readiness_checks`,
//! `liveness_checks`, bridge-wide and in overrides, `workload_identity`), and of `wait_for_ready`'s `ready_timeout`.

use serde_json::Value as Json;

use super::{BridgeInput, PathBuild, Report, at};
use crate::{
    api::{ClusterCheck, WorkloadIdentity},
    domain::{DEFAULT_READY_TIMEOUT, duration::parse_duration, names, problem::Step},
};

impl BridgeInput {
    /// `wait_for_ready` with its `ready_timeout` (longer than 0): how long apply waits, `None` without the wait.
    pub(super) fn parse_ready_wait(&self, err: &mut impl Report) -> Option<std::time::Duration> {
        let timeout = match self.ready_timeout.as_deref().map(parse_duration) {
            None => DEFAULT_READY_TIMEOUT,
            Some(Ok(d)) if !d.is_zero() => d,
            Some(Ok(_)) => {
                err(
                    at("ready_timeout"),
                    "Invalid ready_timeout",
                    "ready_timeout must be longer than 0.".into(),
                );
                DEFAULT_READY_TIMEOUT
            }
            Some(Err(e)) => {
                err(at("ready_timeout"), "Invalid ready_timeout", e.to_string());
                DEFAULT_READY_TIMEOUT
            }
        };
        self.wait_for_ready.unwrap_or(false).then_some(timeout)
    }
}

/// The label filter operations the upstream CRD allows.
const LABEL_FILTER_OPERATIONS: [&str; 4] = ["Equal", "Different", "Has", "DoesNotHave"];

/// An override's `readiness_checks` and `liveness_checks`: `None` where it leaves the bridge-wide list.
pub(super) type OverrideChecks = [Option<Vec<ClusterCheck>>; 2];

impl BridgeInput {
    /// `readiness_checks` and `liveness_checks` as the upstream CRD has them (empty: none).
    pub(super) fn parse_checks(&self, err: &mut impl Report) -> [Vec<ClusterCheck>; 2] {
        [
            ("readiness_checks", &self.readiness_checks),
            ("liveness_checks", &self.liveness_checks),
        ]
        .map(|(attr, value)| {
            value
                .as_ref()
                .map(|v| parse_check_list(err, at(attr), attr, v))
                .unwrap_or_default()
        })
    }

    /// Each override's `readiness_checks` and `liveness_checks`, checked as the bridge-wide ones (which they
    /// replace for that cluster), by override key; an override setting neither is left out.
    pub(super) fn parse_override_checks(
        &self,
        err: &mut impl Report,
    ) -> std::collections::BTreeMap<String, OverrideChecks> {
        let mut out = std::collections::BTreeMap::new();
        for (k, o) in self.overrides.iter().flatten() {
            let checks = [
                ("readiness_checks", &o.readiness_checks),
                ("liveness_checks", &o.liveness_checks),
            ]
            .map(|(attr, value)| {
                let path = at("overrides").then_key(k).then_attr(attr);
                value.as_ref().map(|v| parse_check_list(err, path, attr, v))
            });
            if checks.iter().any(Option::is_some) {
                out.insert(k.clone(), checks);
            }
        }
        out
    }
}

/// One list of checks (JSON text): decoded into the CRD's types (a missing or mistyped field refused by the
/// decoder), then nothing the CRD does not have (what the types drop), then the CRD's rules the types do not carry.
fn parse_check_list(
    err: &mut impl Report,
    path: Vec<Step>,
    attr: &str,
    text: &str,
) -> Vec<ClusterCheck> {
    let written = match serde_json::from_str::<Json>(text) {
        Ok(v) => without_nulls(&v),
        Err(e) => {
            err(
                path,
                "Invalid checks",
                format!("{attr} must be JSON text (jsonencode of a list of checks): {e}."),
            );
            return Vec::new();
        }
    };
    let checks: Vec<ClusterCheck> = match serde_json::from_value(written.clone()) {
        Ok(c) => c,
        Err(e) => {
            err(
                path,
                "Invalid checks",
                format!(
                    "{attr} must be a list of checks as the upstream SveltosCluster CRD has them (name, condition, \
                     resourceSelectors): {e}."
                ),
            );
            return Vec::new();
        }
    };
    let mut names = std::collections::BTreeSet::new();
    for (i, check) in checks.iter().enumerate() {
        let at = path.clone().then_index(i);
        let decoded = serde_json::to_value(check).unwrap_or_default();
        if let Some(field) = unknown_field(&written[i], &decoded, "") {
            err(
                at.clone(),
                "Invalid checks",
                format!("{attr}[{i}]: {field} is not a field of the upstream SveltosCluster CRD."),
            );
        }
        if !names.insert(check.name.as_str()) {
            err(
                at.clone(),
                "Invalid checks",
                format!("{attr}[{i}]: the name {:?} is used twice.", check.name),
            );
        }
        check_rules(err, &at, &format!("{attr}[{i}]"), check);
    }
    checks
}

/// The CRD's rules for one check that its types do not carry: a name, a `kind` in every selector, an allowed
/// label filter operation.
fn check_rules(err: &mut impl Report, at: &[Step], shown: &str, check: &ClusterCheck) {
    let mut problem =
        |detail: String| err(at.to_vec(), "Invalid checks", format!("{shown}: {detail}."));
    if check.name.is_empty() {
        problem("name must not be empty".into());
    }
    for (j, s) in check.resource_selectors.iter().enumerate() {
        if s.kind.is_empty() {
            problem(format!("resourceSelectors[{j}].kind must not be empty"));
        }
        for (k, f) in s.label_filters.iter().flatten().enumerate() {
            if !LABEL_FILTER_OPERATIONS.contains(&f.operation.as_str()) {
                problem(format!(
                    "resourceSelectors[{j}].labelFilters[{k}].operation must be one of {}",
                    LABEL_FILTER_OPERATIONS.join(", ")
                ));
            }
        }
    }
}

/// `value` without its `null` members (`jsonencode` writes an attribute set to `null`; the CRD takes it as absent).
fn without_nulls(value: &Json) -> Json {
    match value {
        Json::Object(m) => Json::Object(
            m.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), without_nulls(v)))
                .collect(),
        ),
        Json::Array(items) => Json::Array(items.iter().map(without_nulls).collect()),
        other => other.clone(),
    }
}

/// The path of the first member of `written` that `decoded` (the same value decoded into the CRD's types and
/// encoded again) lacks: a field the CRD does not have.
fn unknown_field(written: &Json, decoded: &Json, at: &str) -> Option<String> {
    match (written, decoded) {
        (Json::Object(w), Json::Object(d)) => w.iter().find_map(|(k, v)| match d.get(k) {
            None => Some(format!("{at}{k}")),
            Some(dv) => unknown_field(v, dv, &format!("{at}{k}.")),
        }),
        (Json::Array(w), Json::Array(d)) => {
            w.iter().zip(d).enumerate().find_map(|(i, (wv, dv))| {
                let at = at.strip_suffix('.').unwrap_or(at);
                unknown_field(wv, dv, &format!("{at}[{i}]."))
            })
        }
        _ => None,
    }
}

/// The providers the upstream CRD allows for `workloadIdentity`.
const IDENTITY_PROVIDERS: [&str; 3] = ["AWS", "GCP", "Azure"];

impl BridgeInput {
    /// The bridge-wide `workload_identity` and every override's (which replaces it for its cluster): the upstream
    /// CRD's rules, and no token renewal for a cluster that gets one (it rewrites a kubeconfig Sveltos would not
    /// read).
    pub(super) fn check_workload_identities(&self, err: &mut impl Report) {
        let overrides = || self.overrides.iter().flatten();
        if let Some(w) = &self.workload_identity {
            let renewed = self.token_renewal.is_some()
                || overrides()
                    .any(|(_, o)| o.workload_identity.is_none() && o.token_renewal.is_some());
            check_identity(err, at("workload_identity"), w, renewed);
        }
        for (k, o) in overrides() {
            if let Some(w) = &o.workload_identity {
                let base = at("overrides").then_key(k).then_attr("workload_identity");
                let renewed = o.token_renewal.is_some() || self.token_renewal.is_some();
                check_identity(err, base, w, renewed);
            }
        }
    }
}

/// One `workload_identity`: the upstream CRD's rules (a known provider, an endpoint, the block of that provider and
/// no other, its required fields not empty), a Secret name for `ca_secret`; `renewed`: a cluster it applies to also
/// has a `token_renewal`.
fn check_identity(err: &mut impl Report, base: Vec<Step>, w: &WorkloadIdentity, renewed: bool) {
    let mut problem = |attr: &'static str, detail: String| {
        err(
            base.clone().then_attr(attr),
            "Invalid workload_identity",
            detail,
        );
    };
    if !IDENTITY_PROVIDERS.contains(&w.provider.as_str()) {
        let shown: String = w.provider.chars().take(64).collect();
        problem(
            "provider",
            format!("provider must be \"AWS\", \"GCP\" or \"Azure\", got {shown:?}."),
        );
    }
    if w.endpoint.is_empty() {
        problem("endpoint", "endpoint must not be empty.".into());
    }
    if let Some(ca) = w.ca_secret_ref.as_ref().map(|r| &r.name)
        && let Err(e) = names::dns1123_subdomain(ca)
    {
        problem("ca_secret", format!("ca_secret names a Secret: it {e}."));
    }
    for (block, set) in [
        ("aws", w.aws.is_some()),
        ("gcp", w.gcp.is_some()),
        ("azure", w.azure.is_some()),
    ] {
        if set != w.provider.eq_ignore_ascii_case(block) {
            problem(
                block,
                format!(
                    "{block} must be set if and only if provider is {:?}.",
                    provider_of(block)
                ),
            );
        }
    }
    for (attr, value) in required_fields(w) {
        if value.is_empty() {
            problem(attr, format!("{attr} must not be empty."));
        }
    }
    if renewed {
        problem(
            "provider",
            "a cluster with workload_identity has no kubeconfig for token_renewal to renew: remove one of them \
             (a bridge-wide token_renewal or workload_identity applies to every cluster without its own)."
                .into(),
        );
    }
}

/// The provider name of a provider block (`aws` → `AWS`).
fn provider_of(block: &str) -> &'static str {
    match block {
        "aws" => "AWS",
        "gcp" => "GCP",
        _ => "Azure",
    }
}

/// The fields the upstream CRD requires (and wants at least one character long) in the provider block that is set.
fn required_fields(w: &WorkloadIdentity) -> Vec<(&'static str, &str)> {
    let mut out = Vec::new();
    if let Some(a) = &w.aws {
        out.push(("aws.cluster_name", a.cluster_name.as_str()));
    }
    if let Some(g) = &w.gcp {
        out.extend([
            ("gcp.cluster_name", g.cluster_name.as_str()),
            ("gcp.location", g.location.as_str()),
            ("gcp.project_id", g.project_id.as_str()),
        ]);
    }
    if let Some(a) = &w.azure {
        out.extend([
            ("azure.client_id", a.client_id.as_str()),
            ("azure.tenant_id", a.tenant_id.as_str()),
        ]);
    }
    out
}
