//! The checks of the settings that go into a SveltosCluster's spec beyond the kubeconfig (`data`,
//! `readiness_checks`, `liveness_checks`), and of `wait_for_ready`'s `ready_timeout`.

use serde_json::Value as Json;

use super::Report;
use crate::{
    api::ClusterCheck,
    domain::{DEFAULT_READY_TIMEOUT, duration::parse_duration},
    provider::resources::cluster_inventory_bridge::model::BridgeConfig,
    tfplugin::AttributePath,
};

impl BridgeConfig {
    /// `wait_for_ready` with its `ready_timeout` (longer than 0): how long apply waits, `None` without the wait.
    pub(super) fn parse_ready_wait(&self, err: &mut impl Report) -> Option<std::time::Duration> {
        let timeout = match self.ready_timeout.as_deref().map(parse_duration) {
            None => DEFAULT_READY_TIMEOUT,
            Some(Ok(d)) if !d.is_zero() => d,
            Some(Ok(_)) => {
                err(
                    AttributePath::attr("ready_timeout"),
                    "Invalid ready_timeout",
                    "ready_timeout must be longer than 0.".into(),
                );
                DEFAULT_READY_TIMEOUT
            }
            Some(Err(e)) => {
                err(
                    AttributePath::attr("ready_timeout"),
                    "Invalid ready_timeout",
                    e.to_string(),
                );
                DEFAULT_READY_TIMEOUT
            }
        };
        self.wait_for_ready.unwrap_or(false).then_some(timeout)
    }
}

/// The label filter operations the upstream CRD allows.
const LABEL_FILTER_OPERATIONS: [&str; 4] = ["Equal", "Different", "Has", "DoesNotHave"];

impl BridgeConfig {
    /// `readiness_checks` and `liveness_checks` as the upstream CRD has them (empty: none).
    pub(super) fn parse_checks(&self, err: &mut impl Report) -> [Vec<ClusterCheck>; 2] {
        [
            ("readiness_checks", &self.readiness_checks),
            ("liveness_checks", &self.liveness_checks),
        ]
        .map(|(attr, value)| {
            value
                .as_ref()
                .map(|v| parse_check_list(err, attr, v))
                .unwrap_or_default()
        })
    }
}

/// One list of checks (JSON text): decoded into the CRD's types (a missing or mistyped field refused by the
/// decoder), then nothing the CRD does not have (what the types drop), then the CRD's rules the types do not carry.
fn parse_check_list(err: &mut impl Report, attr: &'static str, text: &str) -> Vec<ClusterCheck> {
    let path = AttributePath::attr(attr);
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
        let at = path.clone().then_index(i as i64);
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
fn check_rules(err: &mut impl Report, at: &AttributePath, shown: &str, check: &ClusterCheck) {
    let mut problem =
        |detail: String| err(at.clone(), "Invalid checks", format!("{shown}: {detail}."));
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
