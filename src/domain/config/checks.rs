//! The checks of the bridge's own arguments (name, selection, labels, policies, limits, durations, schedules,
//! windows), run in the order their problems are reported, and what they parse.

use std::collections::BTreeMap;

use super::{BridgeInput, Parsed, PathBuild, Report, at};
use crate::{
    api::ActiveWindow,
    domain::{
        DEFAULT_DEREGISTRATION_TIMEOUT, Deregistration, LabelCopy, TokenRenewal, UnhealthyPolicy,
        duration::parse_duration,
        members::DuplicateMembers,
        names,
        problem::Step,
        selector::{Selector, label_key, label_value},
    },
};

impl BridgeInput {
    /// Runs every check but the credentials' (in the order their diagnostics are reported) and keeps
    /// what they parse.
    pub(super) fn check(&self, err: &mut impl Report) -> Parsed {
        self.check_name(err);
        let label_selector = self.parse_label_selector(err);
        check_labels(err, at("extra_labels"), &self.extra_labels, true);
        check_labels(err, at("extra_annotations"), &self.extra_annotations, false);
        self.check_override_entries(err);
        check_threshold(
            err,
            at("consecutive_failure_threshold"),
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
        check_renewal(err, at("token_renewal"), &self.token_renewal);
        self.check_override_schedules(err);
        self.check_claim_namespace_and_manager(err);
        check_window(err, at("active_window"), &self.active_window);
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
                at("name"),
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
                    at("label_selector"),
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
            let base = at("overrides").then_key(k);
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
                    at("unhealthy"),
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

    fn parse_duplicate_members(&self, err: &mut impl Report) -> DuplicateMembers {
        match self.duplicate_members.as_deref() {
            None | Some("warn") => DuplicateMembers::Warn,
            Some("register_one") => DuplicateMembers::RegisterOne,
            Some(other) => {
                err(
                    at("duplicate_members"),
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
                        at("copy_labels").then_attr(attr).then_index(i),
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
                    at("deregistration"),
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
                    at("deregistration_timeout"),
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
                names::dns1123_label as fn(&str) -> Result<(), names::NameError>,
            ),
            ("names", &self.names, names::profile_ref),
        ] {
            for (i, v) in list.iter().flatten().enumerate() {
                if let Err(e) = rule(v) {
                    err(
                        at(attr).then_index(i),
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
        if !self.inventory || self.namespaces.as_ref().is_some_and(|n| !n.is_empty()) {
            return;
        }
        err(
            at("namespaces"),
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
            let base = at("overrides").then_key(k);
            check_renewal(
                err,
                base.clone().then_attr("token_renewal"),
                &o.token_renewal,
            );
            check_threshold(
                err,
                base.clone().then_attr("consecutive_failure_threshold"),
                o.consecutive_failure_threshold,
            );
            check_window(err, base.then_attr("active_window"), &o.active_window);
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
                at("unhealthy"),
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
                at("paused"),
                PAUSED_BESIDE_WINDOW,
                paused_detail("active_window"),
            );
        }
        for (k, o) in overrides {
            let base = at("overrides").then_key(k);
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
                at("claim_namespace"),
                "Invalid claim_namespace",
                format!("claim_namespace {e}."),
            );
        }
        if let Some(m) = &self.cluster_manager
            && (m.is_empty() || m.len() > 253)
        {
            err(
                at("cluster_manager"),
                "Invalid cluster_manager",
                "cluster_manager must be 1 to 253 characters (it is compared with spec.clusterManager.name).".into(),
            );
        }
    }
}

/// The summary of an `inventory` block without a `namespaces` list.
pub(super) const INVENTORY_NEEDS_NAMESPACES: &str = "namespaces required with an inventory block";

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

/// A limit of one plan (`max_removals`, `max_updates`): 0 or more.
fn parse_limit(err: &mut impl Report, name: &'static str, value: Option<i64>) -> Option<usize> {
    match value {
        Some(n) if n < 0 => {
            err(
                at(name),
                &format!("Invalid {name}"),
                format!("{name} must be 0 or more, got {n}."),
            );
            None
        }
        n => n.map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
    }
}

/// A `consecutive_failure_threshold` (top level or in an override) is at least 1.
fn check_threshold(err: &mut impl Report, path: Vec<Step>, threshold: Option<i64>) {
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
fn check_window(err: &mut impl Report, path: Vec<Step>, window: &Option<ActiveWindow>) {
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

fn check_renewal(err: &mut impl Report, path: Vec<Step>, renewal: &Option<TokenRenewal>) {
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
    attr: Vec<Step>,
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
