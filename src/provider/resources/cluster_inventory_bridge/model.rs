//! The resource's configuration as the user wrote it, its validation into a [`BridgeSpec`], and the
//! conversions between Terraform values and the domain types.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{
    api::ActiveWindow,
    bridge::{
        BridgeSpec, DEFAULT_DELETION_TIMEOUT, LabelCopy, Override, Selection, TokenRenewal,
        UnhealthyPolicy,
        credentials::{
            CredentialOptions, CredentialsConfig, options::validate as validate_credentials,
        },
        desired::ClusterEntry,
        duration::parse_duration,
        names,
        selector::{Selector, label_key, label_value},
    },
    provider::{blocks::credentials as credentials_block, diag::problems_diags},
    tfplugin::{AttributePath, Diagnostic, Diagnostics, Value},
};

/// One `overrides` entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OverrideConfig {
    /// `extra_labels` as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_labels: Option<BTreeMap<String, String>>,
    /// `extra_annotations` as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_annotations: Option<BTreeMap<String, String>>,
    /// `paused` as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
    /// `skip` as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip: Option<bool>,
    /// `token_renewal` as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_renewal: Option<TokenRenewal>,
    /// `active_window` as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_window: Option<ActiveWindow>,
    /// `consecutive_failure_threshold` as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consecutive_failure_threshold: Option<i64>,
}

/// Reads a `token_renewal` object (block or nested attribute); `None` when null or not known.
fn token_renewal_of(v: &Value) -> Option<TokenRenewal> {
    (!v.is_null() && v.is_known()).then(|| TokenRenewal {
        interval: v
            .get_attr("interval")
            .as_str()
            .unwrap_or_default()
            .to_string(),
        token_duration: opt_str(v.get_attr("token_duration")),
        // `namespace/name`; without a `/` the namespace reads as empty and fails validation.
        sa_namespace: v
            .get_attr("service_account")
            .as_str()
            .map(|s| s.split_once('/').map_or("", |(ns, _)| ns).to_string()),
        sa_name: v
            .get_attr("service_account")
            .as_str()
            .map(|s| s.split_once('/').map_or(s, |(_, n)| n).to_string()),
    })
}

/// A `token_renewal` value.
fn token_renewal_value(r: &Option<TokenRenewal>) -> Value {
    r.as_ref()
        .map(|r| {
            Value::object([
                ("interval", Value::string(&r.interval)),
                ("token_duration", str_value(&r.token_duration)),
                (
                    "service_account",
                    match (&r.sa_namespace, &r.sa_name) {
                        (Some(ns), Some(n)) => Value::string(format!("{ns}/{n}")),
                        _ => Value::Null,
                    },
                ),
            ])
        })
        .unwrap_or(Value::Null)
}

/// An `active_window` object; `None` when null or not known.
fn active_window_of(window: &Value) -> Option<ActiveWindow> {
    (!window.is_null() && window.is_known()).then(|| ActiveWindow {
        from: window
            .get_attr("from")
            .as_str()
            .unwrap_or_default()
            .to_string(),
        to: window
            .get_attr("to")
            .as_str()
            .unwrap_or_default()
            .to_string(),
    })
}

fn active_window_value(w: &Option<ActiveWindow>) -> Value {
    w.as_ref()
        .map(|w| {
            Value::object([
                ("from", Value::string(&w.from)),
                ("to", Value::string(&w.to)),
            ])
        })
        .unwrap_or(Value::Null)
}

/// The resource's configuration (everything but `id` and `clusters`), as written. Serialized into the
/// bridge-config annotation so `import` can restore it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BridgeConfig {
    /// `name` as written.
    pub name: String,
    /// `namespaces` as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespaces: Option<Vec<String>>,
    /// `names` as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub names: Option<Vec<String>>,
    /// `label_selector` as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<String>,
    /// `cluster_manager` as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_manager: Option<String>,
    /// `require_healthy` as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub require_healthy: Option<bool>,
    /// `require_credentials` as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub require_credentials: Option<bool>,
    /// `extra_labels` as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_labels: Option<BTreeMap<String, String>>,
    /// `extra_annotations` as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_annotations: Option<BTreeMap<String, String>>,
    /// `paused` as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
    /// `consecutive_failure_threshold` as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consecutive_failure_threshold: Option<i64>,
    /// `adopt` as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adopt: Option<bool>,
    /// `overrides` as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overrides: Option<BTreeMap<String, OverrideConfig>>,
    /// `credentials` as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<CredentialsConfig>,
    /// `active_window` as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_window: Option<ActiveWindow>,
    /// `strict` as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
    /// `unhealthy` as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unhealthy: Option<String>,
    /// `max_removals` as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_removals: Option<i64>,
    /// `copy_labels` as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_labels: Option<CopyLabelsConfig>,
    /// `deletion_timeout` as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_timeout: Option<String>,
    /// `claim_namespace` as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim_namespace: Option<String>,
    /// `token_renewal` as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_renewal: Option<TokenRenewal>,
}

/// The `copy_labels` block.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CopyLabelsConfig {
    /// `include` as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include: Option<Vec<String>>,
    /// `exclude` as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclude: Option<Vec<String>>,
}

fn opt_str(v: &Value) -> Option<String> {
    v.as_str().map(String::from)
}

fn opt_list(v: &Value) -> Option<Vec<String>> {
    v.as_list().map(|_| v.as_string_vec())
}

fn opt_map(v: &Value) -> Option<BTreeMap<String, String>> {
    v.as_map().map(|_| v.as_string_map())
}

fn str_value(s: &Option<String>) -> Value {
    s.as_ref().map(Value::string).unwrap_or(Value::Null)
}

fn bool_value(b: Option<bool>) -> Value {
    b.map(Value::bool).unwrap_or(Value::Null)
}

fn list_value(l: &Option<Vec<String>>) -> Value {
    l.as_ref()
        .map(|l| Value::string_list(l.clone()))
        .unwrap_or(Value::Null)
}

fn int_value(n: Option<i64>) -> Value {
    n.map(Value::int).unwrap_or(Value::Null)
}

fn map_value(m: &Option<BTreeMap<String, String>>) -> Value {
    m.as_ref()
        .map(|m| Value::string_map(m.clone()))
        .unwrap_or(Value::Null)
}

impl OverrideConfig {
    /// Reads one `overrides` entry.
    fn from_value(o: &Value) -> Self {
        Self {
            extra_labels: opt_map(o.get_attr("extra_labels")),
            extra_annotations: opt_map(o.get_attr("extra_annotations")),
            paused: o.get_attr("paused").as_bool(),
            skip: o.get_attr("skip").as_bool(),
            token_renewal: token_renewal_of(o.get_attr("token_renewal")),
            active_window: active_window_of(o.get_attr("active_window")),
            consecutive_failure_threshold: o.get_attr("consecutive_failure_threshold").as_i64(),
        }
    }

    /// This entry as an `overrides` element value.
    fn to_value(&self) -> Value {
        Value::object([
            ("extra_labels", map_value(&self.extra_labels)),
            ("extra_annotations", map_value(&self.extra_annotations)),
            ("paused", bool_value(self.paused)),
            ("skip", bool_value(self.skip)),
            ("token_renewal", token_renewal_value(&self.token_renewal)),
            ("active_window", active_window_value(&self.active_window)),
            (
                "consecutive_failure_threshold",
                int_value(self.consecutive_failure_threshold),
            ),
        ])
    }

    /// This entry as the domain's [`Override`].
    fn to_override(&self) -> Override {
        Override {
            extra_labels: self.extra_labels.clone().unwrap_or_default(),
            extra_annotations: self.extra_annotations.clone().unwrap_or_default(),
            paused: self.paused,
            skip: self.skip.unwrap_or(false),
            token_renewal: self.token_renewal.clone(),
            active_window: self.active_window.clone(),
            consecutive_failure_threshold: self.consecutive_failure_threshold,
        }
    }
}

/// A `copy_labels` object; `None` when null or not known.
fn copy_labels_of(c: &Value) -> Option<CopyLabelsConfig> {
    (!c.is_null() && c.is_known()).then(|| CopyLabelsConfig {
        include: opt_list(c.get_attr("include")),
        exclude: opt_list(c.get_attr("exclude")),
    })
}

/// A `copy_labels` value.
fn copy_labels_value(c: &Option<CopyLabelsConfig>) -> Value {
    c.as_ref()
        .map(|c| {
            Value::object([
                ("include", list_value(&c.include)),
                ("exclude", list_value(&c.exclude)),
            ])
        })
        .unwrap_or(Value::Null)
}

/// Where `to_spec`'s checks report a problem: the attribute path, a summary and a detail.
trait Report: FnMut(AttributePath, &str, String) {}
impl<F: FnMut(AttributePath, &str, String)> Report for F {}

/// The values `to_spec` parses while it validates.
struct Parsed {
    label_selector: Option<Selector>,
    unhealthy: UnhealthyPolicy,
    max_removals: Option<usize>,
    copy_labels: LabelCopy,
    deletion_timeout: std::time::Duration,
}

impl BridgeConfig {
    /// Reads the configuration attributes of a resource value (unknown values read as unset).
    pub fn from_value(v: &Value) -> Self {
        Self {
            name: v.get_attr("name").as_str().unwrap_or_default().to_string(),
            namespaces: opt_list(v.get_attr("namespaces")),
            names: opt_list(v.get_attr("names")),
            label_selector: opt_str(v.get_attr("label_selector")),
            cluster_manager: opt_str(v.get_attr("cluster_manager")),
            require_healthy: v.get_attr("require_healthy").as_bool(),
            require_credentials: v.get_attr("require_credentials").as_bool(),
            extra_labels: opt_map(v.get_attr("extra_labels")),
            extra_annotations: opt_map(v.get_attr("extra_annotations")),
            paused: v.get_attr("paused").as_bool(),
            consecutive_failure_threshold: v.get_attr("consecutive_failure_threshold").as_i64(),
            adopt: v.get_attr("adopt").as_bool(),
            overrides: v.get_attr("overrides").as_map().map(|m| {
                m.iter()
                    .map(|(k, o)| (k.clone(), OverrideConfig::from_value(o)))
                    .collect()
            }),
            credentials: credentials_block::from_value(v.get_attr("credentials")),
            strict: v.get_attr("strict").as_bool(),
            unhealthy: opt_str(v.get_attr("unhealthy")),
            max_removals: v.get_attr("max_removals").as_i64(),
            copy_labels: copy_labels_of(v.get_attr("copy_labels")),
            deletion_timeout: opt_str(v.get_attr("deletion_timeout")),
            claim_namespace: opt_str(v.get_attr("claim_namespace")),
            token_renewal: token_renewal_of(v.get_attr("token_renewal")),
            active_window: active_window_of(v.get_attr("active_window")),
        }
    }

    /// Whether this configuration asks Sveltos to renew cluster `key`'s credentials (its override's
    /// `token_renewal`, else the bridge-wide one), as `crate::bridge::desired::renewal_of` decides for a spec.
    pub fn renews(&self, key: &str) -> bool {
        self.token_renewal.is_some()
            || self
                .overrides
                .as_ref()
                .and_then(|o| o.get(key))
                .is_some_and(|o| o.token_renewal.is_some())
    }

    /// Writes the configuration attributes into `state` (used to restore an imported bridge).
    pub fn write_into(&self, state: &mut Value) {
        let overrides = self
            .overrides
            .as_ref()
            .map(|m| Value::map(m.iter().map(|(k, o)| (k.clone(), o.to_value()))))
            .unwrap_or(Value::Null);
        let attrs = [
            ("name", Value::string(&self.name)),
            ("namespaces", list_value(&self.namespaces)),
            ("names", list_value(&self.names)),
            ("label_selector", str_value(&self.label_selector)),
            ("cluster_manager", str_value(&self.cluster_manager)),
            ("require_healthy", bool_value(self.require_healthy)),
            ("require_credentials", bool_value(self.require_credentials)),
            ("extra_labels", map_value(&self.extra_labels)),
            ("extra_annotations", map_value(&self.extra_annotations)),
            ("paused", bool_value(self.paused)),
            (
                "consecutive_failure_threshold",
                int_value(self.consecutive_failure_threshold),
            ),
            ("adopt", bool_value(self.adopt)),
            ("overrides", overrides),
            (
                "credentials",
                credentials_block::to_value(self.credentials.as_ref()),
            ),
            ("strict", bool_value(self.strict)),
            ("unhealthy", str_value(&self.unhealthy)),
            ("max_removals", int_value(self.max_removals)),
            ("copy_labels", copy_labels_value(&self.copy_labels)),
            ("deletion_timeout", str_value(&self.deletion_timeout)),
            ("claim_namespace", str_value(&self.claim_namespace)),
            ("token_renewal", token_renewal_value(&self.token_renewal)),
            ("active_window", active_window_value(&self.active_window)),
        ];
        for (k, v) in attrs {
            state.set_attr(k, v);
        }
    }

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
        let max_removals = self.parse_max_removals(err);
        let copy_labels = self.parse_copy_labels(err);
        let deletion_timeout = self.parse_deletion_timeout(err);
        self.check_name_lists(err);
        check_renewal(
            err,
            AttributePath::attr("token_renewal"),
            &self.token_renewal,
        );
        self.check_override_schedules(err);
        self.check_claim_namespace_and_manager(err);
        check_window(
            err,
            AttributePath::attr("active_window"),
            &self.active_window,
        );
        Parsed {
            label_selector,
            unhealthy,
            max_removals,
            copy_labels,
            deletion_timeout,
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

    fn parse_max_removals(&self, err: &mut impl Report) -> Option<usize> {
        match self.max_removals {
            Some(n) if n < 0 => {
                err(
                    AttributePath::attr("max_removals"),
                    "Invalid max_removals",
                    format!("max_removals must be 0 or more, got {n}."),
                );
                None
            }
            n => n.map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
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
        copy_labels
    }

    fn parse_deletion_timeout(&self, err: &mut impl Report) -> std::time::Duration {
        match self.deletion_timeout.as_deref().map(parse_duration) {
            None => DEFAULT_DELETION_TIMEOUT,
            Some(Ok(d)) => d,
            Some(Err(e)) => {
                err(
                    AttributePath::attr("deletion_timeout"),
                    "Invalid deletion_timeout",
                    e.to_string(),
                );
                DEFAULT_DELETION_TIMEOUT
            }
        }
    }

    /// Each element of `namespaces` and `names`.
    fn check_name_lists(&self, err: &mut impl Report) {
        for (attr, list, rule) in [
            (
                "namespaces",
                &self.namespaces,
                names::dns1123_label as fn(&str) -> Result<(), crate::bridge::names::NameError>,
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

    /// The `token_renewal`, `consecutive_failure_threshold` and `active_window` of each `overrides` entry.
    fn check_override_schedules(&self, err: &mut impl Report) {
        for (k, o) in self.overrides.iter().flatten() {
            let base = AttributePath::attr("overrides").then_key(k);
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
            active_window: self.active_window.clone(),
            overrides: self
                .overrides
                .iter()
                .flatten()
                .map(|(k, o)| (k.clone(), o.to_override()))
                .collect(),
            adopt: self.adopt.unwrap_or(false),
            strict: self.strict.unwrap_or(false),
            unhealthy: parsed.unhealthy,
            max_removals: parsed.max_removals,
            copy_labels: parsed.copy_labels,
            deletion_timeout: parsed.deletion_timeout,
            token_renewal: self.token_renewal.clone(),
            claim_namespace: self
                .claim_namespace
                .clone()
                .unwrap_or_else(|| crate::bridge::ownership::DEFAULT_CLAIM_NAMESPACE.to_string()),
            config_record: serde_json::to_string(self).ok(),
        }
    }
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

/// The `clusters` attribute value for these entries (pending credentials become unknown).
pub fn clusters_value(entries: &BTreeMap<String, ClusterEntry>) -> Value {
    Value::map(entries.iter().map(|(k, e)| {
        let opt = |s: &Option<String>| s.as_ref().map(Value::string).unwrap_or(Value::Null);
        let (sha, exp) = if e.credential_pending {
            (Value::unknown(), Value::unknown())
        } else {
            (opt(&e.kubeconfig_sha256), opt(&e.credential_expires_at))
        };
        (
            k.clone(),
            Value::object([
                ("sveltos_cluster", opt(&e.sveltos_cluster)),
                ("secret", opt(&e.secret)),
                ("credential_source", Value::string(&e.credential_source)),
                ("kubeconfig_sha256", sha),
                ("credential_expires_at", exp),
                ("labels", Value::string_map(e.labels.clone())),
                ("config_sha256", Value::string(&e.config_sha256)),
            ]),
        )
    }))
}

/// Reads a `clusters` value back (unknown hashes become `credential_pending`); `None` entries are wholly
/// unknown.
pub fn entries_from_value(v: &Value) -> BTreeMap<String, Option<ClusterEntry>> {
    let Some(m) = v.as_map() else {
        return BTreeMap::new();
    };
    m.iter()
        .map(|(k, e)| {
            if !e.is_known() {
                return (k.clone(), None);
            }
            let s = |n: &str| e.get_attr(n).as_str().map(String::from);
            let sha = e.get_attr("kubeconfig_sha256");
            (
                k.clone(),
                Some(ClusterEntry {
                    sveltos_cluster: s("sveltos_cluster"),
                    secret: s("secret"),
                    credential_source: s("credential_source").unwrap_or_default(),
                    kubeconfig_sha256: s("kubeconfig_sha256"),
                    credential_expires_at: s("credential_expires_at"),
                    labels: e.get_attr("labels").as_string_map(),
                    config_sha256: s("config_sha256").unwrap_or_default(),
                    credential_pending: !sha.is_known(),
                }),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> BridgeConfig {
        BridgeConfig {
            name: "main".into(),
            label_selector: Some("env in (prod,staging)".into()),
            extra_labels: Some(BTreeMap::from([("team".into(), "a".into())])),
            overrides: Some(BTreeMap::from([(
                "ns/c1".into(),
                OverrideConfig {
                    paused: Some(true),
                    ..Default::default()
                },
            )])),
            credentials: Some(CredentialsConfig {
                refresh_before: Some("15m".into()),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn value_round_trip() {
        let c = config();
        let mut v = Value::object(Vec::<(String, Value)>::new());
        c.write_into(&mut v);
        assert_eq!(BridgeConfig::from_value(&v), c);
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(serde_json::from_str::<BridgeConfig>(&json).unwrap(), c);
    }

    #[test]
    fn valid_config_maps_to_spec() {
        let spec = config().to_spec().unwrap();
        assert_eq!(spec.credentials.refresh_before.as_secs(), 900);
        assert!(spec.overrides["ns/c1"].paused == Some(true));
        assert_eq!(
            spec.credentials.kubeconfig_keys,
            crate::bridge::default_kubeconfig_keys()
        );
    }

    #[test]
    fn every_error_has_an_attribute_path() {
        let mut c = config();
        c.label_selector = Some("a in b".into());
        c.extra_labels = Some(BTreeMap::from([("bad key!".into(), "v".into())]));
        c.overrides = Some(BTreeMap::from([(
            "noslash".into(),
            OverrideConfig::default(),
        )]));
        c.credentials.as_mut().unwrap().refresh_before = Some("10 minutes".into());
        c.consecutive_failure_threshold = Some(0);
        let diags = c.to_spec().unwrap_err();
        let paths: Vec<String> = diags.iter().map(|d| format!("{:?}", d.attribute)).collect();
        assert_eq!(diags.len(), 5, "{paths:?}");
        assert!(diags.iter().all(|d| d.attribute.is_some()));
    }
}
