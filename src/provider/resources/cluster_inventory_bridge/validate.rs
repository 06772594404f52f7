//! Validation of the configuration into the core's [`BridgeSpec`]: every check, each problem an error at its
//! attribute path (the CLIs point at it), and what the checks parse (selector, policies, durations).

use std::collections::BTreeMap;

use super::model::{BridgeConfig, OverrideConfig, TokenRenewalConfig, WindowConfig};
use crate::{
    api::ActiveWindow,
    domain::{
        BridgeSpec, DEFAULT_DEREGISTRATION_TIMEOUT, Deregistration, LabelCopy, Override, Selection,
        TokenRenewal, UnhealthyPolicy,
        credentials::{CredentialOptions, options::validate as validate_credentials},
        duration::parse_duration,
        members::{DuplicateMembers, MemberPolicy},
        names,
        selector::{Selector, label_key, label_value},
    },
    provider::diag::problems_diags,
    tfplugin::{AttributePath, Diagnostic, Diagnostics},
};

/// Where `to_spec`'s checks report a problem: the attribute path, a summary and a detail.
trait Report: FnMut(AttributePath, &str, String) {}
impl<F: FnMut(AttributePath, &str, String)> Report for F {}

/// The values `to_spec` parses while it validates.
struct Parsed {
    label_selector: Option<Selector>,
    unhealthy: UnhealthyPolicy,
    max_removals: Option<usize>,
    max_updates: Option<usize>,
    copy_labels: LabelCopy,
    deregistration: Deregistration,
    deregistration_timeout: std::time::Duration,
    ready_wait: Option<std::time::Duration>,
    checks: [Vec<crate::api::ClusterCheck>; 2],
    /// Each override's `readiness_checks` and `liveness_checks` (`None`: the bridge-wide list), by key.
    override_checks: BTreeMap<String, OverrideChecks>,
    duplicates: DuplicateMembers,
    properties: crate::domain::properties::PropertyCopy,
}

impl TokenRenewalConfig {
    /// The core's renewal: `service_account` split into namespace and name (without a `/` the namespace reads as
    /// empty and fails validation).
    fn to_renewal(&self) -> TokenRenewal {
        let sa = self.service_account.as_deref();
        TokenRenewal {
            interval: self.interval.clone(),
            token_duration: self.token_duration.clone(),
            sa_namespace: sa.map(|s| s.split_once('/').map_or("", |(ns, _)| ns).to_string()),
            sa_name: sa.map(|s| s.split_once('/').map_or(s, |(_, n)| n).to_string()),
        }
    }
}

impl WindowConfig {
    fn to_window(&self) -> ActiveWindow {
        ActiveWindow {
            from: self.from.clone(),
            to: self.to.clone(),
        }
    }
}

fn renewal_of(r: &Option<TokenRenewalConfig>) -> Option<TokenRenewal> {
    r.as_ref().map(TokenRenewalConfig::to_renewal)
}

fn window_of(w: &Option<WindowConfig>) -> Option<ActiveWindow> {
    w.as_ref().map(WindowConfig::to_window)
}

impl OverrideConfig {
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
            token_renewal: renewal_of(&self.token_renewal),
            active_window: window_of(&self.active_window),
            consecutive_failure_threshold: self.consecutive_failure_threshold,
            data: self.data.clone().unwrap_or_default(),
            pull_mode: self.pull_mode,
            workload_identity: self.workload_identity.as_ref().map(|w| w.to_identity()),
        }
    }
}

impl BridgeConfig {
    /// Validates the configuration into a [`BridgeSpec`]; every problem carries its attribute path.
    pub fn to_spec(&self) -> Result<BridgeSpec, Diagnostics> {
        let mut diags = Diagnostics::new();
        let credentials = match validate_credentials(self.credentials.as_ref()) {
            Ok(c) => Some(c),
            Err(problems) => {
                diags.extend(problems_diags(&problems).into_vec());
                None
            }
        };
        let mut err = |path: AttributePath, summary: &str, detail: String| {
            diags.push(Diagnostic::error(summary, detail).with_attribute(path));
        };
        let parsed = self.check(&mut err);
        let diags = shorten_override_paths(diags);
        let (Some(credentials), false) = (credentials, diags.has_errors()) else {
            return Err(diags);
        };
        Ok(self.spec(credentials, parsed))
    }

    /// Runs every check but the credentials' (in the order their diagnostics are reported) and keeps
    /// what they parse.
    fn check(&self, err: &mut impl Report) -> Parsed {
        self.check_name(err);
        let label_selector = self.parse_label_selector(err);
        check_labels(
            err,
            AttributePath::attr("extra_labels"),
            &self.extra_labels,
            true,
        );
        check_labels(
            err,
            AttributePath::attr("extra_annotations"),
            &self.extra_annotations,
            false,
        );
        self.check_override_entries(err);
        check_threshold(
            err,
            AttributePath::attr("consecutive_failure_threshold"),
            self.consecutive_failure_threshold,
        );
        let unhealthy = self.parse_unhealthy(err);
        let duplicates = self.parse_duplicate_members(err);
        let max_removals = parse_limit(err, "max_removals", self.max_removals);
        let max_updates = parse_limit(err, "max_updates", self.max_updates);
        let copy_labels = self.parse_copy_labels(err);
        let properties = self.parse_copy_properties(err);
        let deregistration = self.parse_deregistration(err);
        let deregistration_timeout = self.parse_deletion_timeout(err);
        let ready_wait = self.parse_ready_wait(err);
        let checks = self.parse_checks(err);
        let override_checks = self.parse_override_checks(err);
        self.check_workload_identities(err);
        self.check_name_lists(err);
        self.check_inventory_namespaces(err);
        check_renewal(
            err,
            AttributePath::attr("token_renewal"),
            &renewal_of(&self.token_renewal),
        );
        self.check_override_schedules(err);
        self.check_claim_namespace_and_manager(err);
        check_window(
            err,
            AttributePath::attr("active_window"),
            &window_of(&self.active_window),
        );
        self.check_paused_beside_windows(err);
        Parsed {
            label_selector,
            unhealthy,
            max_removals,
            max_updates,
            copy_labels,
            deregistration,
            deregistration_timeout,
            ready_wait,
            checks,
            override_checks,
            duplicates,
            properties,
        }
    }

    fn check_name(&self, err: &mut impl Report) {
        if self.name.is_empty() || label_value(&self.name).is_err() {
            err(
                AttributePath::attr("name"),
                "Invalid bridge name",
                format!(
                    "name {:?} is written as the value of the ownership label, so it must be a valid label value: 1-63 \
                     alphanumerics, '-', '_' or '.', starting and ending alphanumeric.",
                    self.name
                ),
            );
        }
    }

    fn parse_label_selector(&self, err: &mut impl Report) -> Option<Selector> {
        match self.label_selector.as_deref().map(Selector::parse) {
            Some(Ok(s)) => Some(s),
            Some(Err(e)) => {
                err(
                    AttributePath::attr("label_selector"),
                    "Invalid label selector",
                    e.to_string(),
                );
                None
            }
            None => None,
        }
    }

    /// The `overrides` keys and the labels and annotations of each entry.
    fn check_override_entries(&self, err: &mut impl Report) {
        for (k, o) in self.overrides.iter().flatten() {
            let base = AttributePath::attr("overrides").then_key(k);
            let shown: String = k.chars().take(80).collect();
            if !k.contains('/') {
                err(
                    base.clone(),
                    "Invalid override key",
                    format!(
                        "overrides key {shown:?} must be \"namespace/name\" of a ClusterProfile."
                    ),
                );
            } else if let Err(e) = names::profile_ref(k) {
                err(
                    base.clone(),
                    "Invalid override key",
                    format!(
                        "overrides key {shown:?} is not \"namespace/name\" of a ClusterProfile: {e}."
                    ),
                );
            }
            check_labels(
                err,
                base.clone().then_attr("extra_labels"),
                &o.extra_labels,
                true,
            );
            check_labels(
                err,
                base.then_attr("extra_annotations"),
                &o.extra_annotations,
                false,
            );
        }
    }

    fn parse_unhealthy(&self, err: &mut impl Report) -> UnhealthyPolicy {
        match self.unhealthy.as_deref() {
            None | Some("keep") => UnhealthyPolicy::Keep,
            Some("pause") => UnhealthyPolicy::Pause,
            Some("remove") => UnhealthyPolicy::Remove,
            Some(other) => {
                err(
                    AttributePath::attr("unhealthy"),
                    "Invalid unhealthy",
                    format!(
                        "unhealthy must be \"keep\", \"pause\" or \"remove\", got {:?}.",
                        other.chars().take(64).collect::<String>()
                    ),
                );
                UnhealthyPolicy::Keep
            }
        }
    }

    /// `skip_cluster_api_clusters` (default false).
    fn skip_cluster_api(&self) -> bool {
        self.skip_cluster_api_clusters.unwrap_or(false)
    }

    fn parse_duplicate_members(&self, err: &mut impl Report) -> DuplicateMembers {
        match self.duplicate_members.as_deref() {
            None | Some("warn") => DuplicateMembers::Warn,
            Some("register_one") => DuplicateMembers::RegisterOne,
            Some(other) => {
                err(
                    AttributePath::attr("duplicate_members"),
                    "Invalid duplicate_members",
                    format!(
                        "duplicate_members must be \"warn\" or \"register_one\", got {:?}.",
                        other.chars().take(64).collect::<String>()
                    ),
                );
                DuplicateMembers::Warn
            }
        }
    }

    fn parse_copy_labels(&self, err: &mut impl Report) -> LabelCopy {
        let mut copy_labels = LabelCopy::default();
        let Some(c) = &self.copy_labels else {
            return copy_labels;
        };
        for (attr, list, into) in [
            ("include", &c.include, &mut copy_labels.include),
            ("exclude", &c.exclude, &mut copy_labels.exclude),
        ] {
            let Some(list) = list else { continue };
            for (i, pattern) in list.iter().enumerate() {
                if !is_label_key_pattern(pattern) {
                    err(
                        AttributePath::attr("copy_labels")
                            .then_attr(attr)
                            .then_index(i as i64),
                        "Invalid label key pattern",
                        format!(
                            "Element {i} must be a label key, or a key prefix ending in `*` (e.g. `team.example.com/*`)."
                        ),
                    );
                }
            }
            *into = list.clone();
        }
        copy_labels.remove_foreign = c.remove_foreign.unwrap_or(false);
        copy_labels
    }

    fn parse_deregistration(&self, err: &mut impl Report) -> Deregistration {
        match self.deregistration.as_deref() {
            None | Some("withdraw") => Deregistration::Withdraw,
            Some("orphan") => Deregistration::Orphan,
            Some(other) => {
                err(
                    AttributePath::attr("deregistration"),
                    "Invalid deregistration",
                    format!(
                        "deregistration must be \"withdraw\" or \"orphan\", got {:?}.",
                        other.chars().take(64).collect::<String>()
                    ),
                );
                Deregistration::Withdraw
            }
        }
    }

    fn parse_deletion_timeout(&self, err: &mut impl Report) -> std::time::Duration {
        match self.deregistration_timeout.as_deref().map(parse_duration) {
            None => DEFAULT_DEREGISTRATION_TIMEOUT,
            Some(Ok(d)) => d,
            Some(Err(e)) => {
                err(
                    AttributePath::attr("deregistration_timeout"),
                    "Invalid deregistration_timeout",
                    e.to_string(),
                );
                DEFAULT_DEREGISTRATION_TIMEOUT
            }
        }
    }

    /// Each element of `namespaces` and `names`.
    fn check_name_lists(&self, err: &mut impl Report) {
        for (attr, list, rule) in [
            (
                "namespaces",
                &self.namespaces,
                names::dns1123_label as fn(&str) -> Result<(), crate::domain::names::NameError>,
            ),
            ("names", &self.names, names::profile_ref),
        ] {
            for (i, v) in list.iter().flatten().enumerate() {
                if let Err(e) = rule(v) {
                    err(
                        AttributePath::attr(attr).then_index(i as i64),
                        &format!("Invalid {attr}"),
                        format!("Element {i}: {e}."),
                    );
                }
            }
        }
    }

    /// With an `inventory` block, the hub's namespaces are not the management cluster's: a profile in hub namespace
    /// `X` is written into management namespace `X`, so whoever may create a ClusterProfile in any hub namespace
    /// would choose where the bridge writes. The namespaces must then be listed, by the operator.
    fn check_inventory_namespaces(&self, err: &mut impl Report) {
        if self.inventory.is_none() || self.namespaces.as_ref().is_some_and(|n| !n.is_empty()) {
            return;
        }
        err(
            AttributePath::attr("namespaces"),
            INVENTORY_NEEDS_NAMESPACES,
            "With an inventory block, the bridge writes the SveltosCluster and Secret of hub ClusterProfile \
             \"ns/name\" into namespace \"ns\" of the management cluster: without a namespaces list, whoever may \
             create a ClusterProfile in any namespace of the hub would choose the management namespace written to \
             (and so which Sveltos profiles of that namespace deploy to their cluster). List the hub namespaces to \
             bridge in namespaces (not empty)."
                .into(),
        );
    }

    /// The `token_renewal`, `consecutive_failure_threshold` and `active_window` of each `overrides` entry.
    fn check_override_schedules(&self, err: &mut impl Report) {
        for (k, o) in self.overrides.iter().flatten() {
            let base = AttributePath::attr("overrides").then_key(k);
            check_renewal(
                err,
                base.clone().then_attr("token_renewal"),
                &renewal_of(&o.token_renewal),
            );
            check_threshold(
                err,
                base.clone().then_attr("consecutive_failure_threshold"),
                o.consecutive_failure_threshold,
            );
            check_window(
                err,
                base.then_attr("active_window"),
                &window_of(&o.active_window),
            );
        }
    }

    /// With an active window, sveltoscluster-manager owns `spec.paused` (it sets it outside the window and removes
    /// it inside, on every flip): `paused` and `unhealthy = "pause"` would fight it, so neither may apply to a
    /// cluster with a window. The error is at the most specific attribute that brings the two together.
    fn check_paused_beside_windows(&self, err: &mut impl Report) {
        let window_here = self.active_window.is_some();
        let overrides = self.overrides.iter().flatten();
        let windows: Vec<&String> = overrides
            .clone()
            .filter(|(_, o)| o.active_window.is_some())
            .map(|(k, _)| k)
            .collect();
        if self.unhealthy.as_deref() == Some("pause") && (window_here || !windows.is_empty()) {
            let which = if window_here {
                "active_window".to_string()
            } else {
                format!("overrides[{:?}].active_window", windows[0])
            };
            err(
                AttributePath::attr("unhealthy"),
                "unhealthy = \"pause\" next to an active window",
                format!(
                    "unhealthy = \"pause\" pauses an unhealthy cluster through spec.paused, which sveltoscluster-manager \
                     owns for a cluster with an active window ({which}): {WINDOW_OWNS_PAUSED} Use unhealthy = \"keep\" or \
                     \"remove\", or drop the window."
                ),
            );
        }
        if window_here && self.paused.is_some() {
            err(
                AttributePath::attr("paused"),
                PAUSED_BESIDE_WINDOW,
                paused_detail("active_window"),
            );
        }
        for (k, o) in overrides {
            let base = AttributePath::attr("overrides").then_key(k);
            if o.paused.is_some() && (window_here || o.active_window.is_some()) {
                let which = if o.active_window.is_some() {
                    "its active_window"
                } else {
                    "active_window"
                };
                err(
                    base.then_attr("paused"),
                    PAUSED_BESIDE_WINDOW,
                    paused_detail(which),
                );
            } else if o.paused.is_none() && self.paused.is_some() && o.active_window.is_some() {
                err(
                    base.then_attr("active_window"),
                    PAUSED_BESIDE_WINDOW,
                    paused_detail("this active_window, with the bridge-wide paused"),
                );
            }
        }
    }

    fn check_claim_namespace_and_manager(&self, err: &mut impl Report) {
        if let Some(ns) = &self.claim_namespace
            && let Err(e) = names::dns1123_label(ns)
        {
            err(
                AttributePath::attr("claim_namespace"),
                "Invalid claim_namespace",
                format!("claim_namespace {e}."),
            );
        }
        if let Some(m) = &self.cluster_manager
            && (m.is_empty() || m.len() > 253)
        {
            err(
                AttributePath::attr("cluster_manager"),
                "Invalid cluster_manager",
                "cluster_manager must be 1 to 253 characters (it is compared with spec.clusterManager.name).".into(),
            );
        }
    }

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
            active_window: window_of(&self.active_window),
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
            token_renewal: renewal_of(&self.token_renewal),
            ready_wait: parsed.ready_wait,
            data: self.data.clone().unwrap_or_default(),
            readiness_checks: parsed.checks[0].clone(),
            liveness_checks: parsed.checks[1].clone(),
            pull_mode: self.pull_mode,
            workload_identity: self.workload_identity.as_ref().map(|w| w.to_identity()),
            members: MemberPolicy {
                duplicates: parsed.duplicates,
                match_server: self.duplicate_members_by_server.unwrap_or(false),
                skip_cluster_api: self.skip_cluster_api(),
            },
            properties: parsed.properties,
            claim_namespace: self
                .claim_namespace
                .clone()
                .unwrap_or_else(|| crate::domain::ownership::DEFAULT_CLAIM_NAMESPACE.to_string()),
            config_record: self.record(),
        }
    }
}

/// The summary of an `inventory` block without a `namespaces` list.
const INVENTORY_NEEDS_NAMESPACES: &str = "namespaces required with an inventory block";

/// The summary of `paused` set for a cluster that has an active window.
const PAUSED_BESIDE_WINDOW: &str = "paused next to an active window";

/// Why the bridge does not set `spec.paused` where a window is (completed by the callers).
const WINDOW_OWNS_PAUSED: &str = "it sets spec.paused = true outside the window and removes it inside, on every flip, \
     and a bridge that also set it would undo each flip at the next apply and show it as a change in every plan.";

/// The detail of [`PAUSED_BESIDE_WINDOW`]; `which`: the window concerned.
fn paused_detail(which: &str) -> String {
    format!(
        "With an active window ({which}), sveltoscluster-manager owns spec.paused: {WINDOW_OWNS_PAUSED} Remove \
         paused here to let the window pause and unpause the cluster, or drop the window to pause it yourself."
    )
}

/// Whether a `copy_labels` element is a label key, or a key prefix ending in `*`.
fn is_label_key_pattern(pattern: &str) -> bool {
    let key = pattern.strip_suffix('*').unwrap_or(pattern);
    if pattern.ends_with('*') {
        key.is_empty()
            || label_key(key.trim_end_matches('/')).is_ok()
            || label_key(&format!("{key}x")).is_ok()
    } else {
        label_key(key).is_ok()
    }
}

/// The CLIs cannot point at a path that continues past a map key: an error deeper inside
/// `overrides["<key>"]` points at that entry and names the rest of the path in its detail.
fn shorten_override_paths(diags: Diagnostics) -> Diagnostics {
    diags
        .into_vec()
        .into_iter()
        .map(|mut d| {
            if let Some(path) = d.attribute.as_ref()
                && path.steps().len() > 2
                && matches!(path.steps().first(), Some(crate::tfplugin::PathStep::Attribute(a)) if a == "overrides")
            {
                let full = path.to_string();
                let mut short = path.clone();
                while short.steps().len() > 2 {
                    short.pop();
                }
                d.detail = format!("{full}: {}", d.detail);
                d.attribute = Some(short);
            }
            d
        })
        .collect()
}

/// A limit of one plan (`max_removals`, `max_updates`): 0 or more.
fn parse_limit(err: &mut impl Report, name: &str, value: Option<i64>) -> Option<usize> {
    match value {
        Some(n) if n < 0 => {
            err(
                AttributePath::attr(name),
                &format!("Invalid {name}"),
                format!("{name} must be 0 or more, got {n}."),
            );
            None
        }
        n => n.map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
    }
}

/// A `consecutive_failure_threshold` (top level or in an override) is at least 1.
fn check_threshold(err: &mut impl Report, path: AttributePath, threshold: Option<i64>) {
    if let Some(t) = threshold
        && t < 1
    {
        err(
            path,
            "Invalid consecutive_failure_threshold",
            format!("consecutive_failure_threshold must be at least 1, got {t}."),
        );
    }
}

/// An `active_window` (top level or in an override) has both schedules.
fn check_window(err: &mut impl Report, path: AttributePath, window: &Option<ActiveWindow>) {
    if let Some(w) = window
        && (w.from.trim().is_empty() || w.to.trim().is_empty())
    {
        err(
            path.then_attr(if w.from.trim().is_empty() {
                "from"
            } else {
                "to"
            }),
            "Invalid active window",
            "active_window needs both `from` and `to` (cron schedules).".into(),
        );
    }
}

fn check_renewal(err: &mut impl Report, path: AttributePath, renewal: &Option<TokenRenewal>) {
    let Some(r) = renewal else { return };
    for (attr, d) in [
        ("interval", Some(&r.interval)),
        ("token_duration", r.token_duration.as_ref()),
    ] {
        if let Some(d) = d {
            match parse_duration(d) {
                Ok(v) if !v.is_zero() => {}
                Ok(_) => err(
                    path.clone().then_attr(attr),
                    "Invalid duration",
                    format!("{attr} must be longer than 0."),
                ),
                Err(e) => err(
                    path.clone().then_attr(attr),
                    "Invalid duration",
                    e.to_string(),
                ),
            }
        }
    }
    for (what, v) in [("namespace", &r.sa_namespace), ("name", &r.sa_name)] {
        if let Some(v) = v {
            let ok = if what == "namespace" {
                names::dns1123_label(v)
            } else {
                names::dns1123_subdomain(v)
            };
            if let Err(e) = ok {
                err(
                    path.clone().then_attr("service_account"),
                    "Invalid service_account",
                    format!("service_account must be \"<namespace>/<name>\": the {what} {e}."),
                );
            }
        }
    }
}

fn check_labels(
    err: &mut impl Report,
    attr: AttributePath,
    m: &Option<BTreeMap<String, String>>,
    labels: bool,
) {
    for (k, v) in m.iter().flatten() {
        let val_ok = if labels {
            label_value(v).map(|_| ())
        } else {
            Ok(())
        };
        if let Err(e) = label_key(k).map(|_| ()).and(val_ok) {
            err(
                attr.clone().then_key(k),
                if labels {
                    "Invalid label"
                } else {
                    "Invalid annotation key"
                },
                e.to_string(),
            );
        }
    }
}

mod copy_properties;
mod sveltos_fields;
use sveltos_fields::OverrideChecks;

#[cfg(test)]
mod tests;
