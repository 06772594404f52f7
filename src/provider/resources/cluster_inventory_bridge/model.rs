//! The resource's configuration as the user wrote it ([`BridgeConfig`], every argument and block), read from a
//! Terraform value in one pass by the plugin layer's serde bridge: the field names are the schema's attribute
//! names, written once here (the test below checks them against the schema). The same types, as JSON, are the
//! configuration record of the claim, without the `inventory` block's secrets, from which `import` restores
//! the configuration. [`BridgeConfig::to_spec`] maps it field for field into the core's
//! [`crate::domain::config::BridgeInput`], whose `validate` holds every check, and maps the problems to diagnostics.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use super::timeouts::TimeoutsConfig;
use crate::{
    api::{
        ActiveWindow, AwsIdentity, AzureIdentity, GcpIdentity, LocalObjectReference,
        WorkloadIdentity,
    },
    domain::{
        BridgeSpec, TokenRenewal,
        config::{
            self, BridgeInput, LabelCopyInput, OverrideInput, PropertyCopyInput, written_renewal,
        },
        credentials::CredentialsConfig,
    },
    provider::{blocks::connection::ConnectionConfig, diag::config_problems_diags},
    tfplugin::{
        Diagnostics, Value,
        value::{Partial, from_value, from_value_partial},
    },
};

/// The resource's configuration (everything but the computed `id`, `instance_id`, `clusters` and `skipped`), as
/// written.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BridgeConfig {
    /// `name` (required).
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
    /// `readiness_checks`: the upstream `readinessChecks` list as JSON text, checked by validation.
    pub readiness_checks: Option<String>,
    /// `liveness_checks` (as `readiness_checks`).
    pub liveness_checks: Option<String>,
    /// `pull_mode`.
    pub pull_mode: Option<bool>,
    /// `workload_identity` (an override's replaces it).
    pub workload_identity: Option<WorkloadIdentityConfig>,
    /// `adopt`.
    pub adopt: Option<bool>,
    /// `overrides`, keyed `namespace/name`.
    pub overrides: Option<BTreeMap<String, OverrideConfig>>,
    /// The `credentials` block.
    pub credentials: Option<CredentialsConfig>,
    /// The `active_window` block.
    pub active_window: Option<WindowConfig>,
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
    pub copy_labels: Option<CopyLabelsConfig>,
    /// The `copy_properties` block.
    pub copy_properties: Option<CopyPropertiesConfig>,
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
    /// The `token_renewal` block.
    pub token_renewal: Option<TokenRenewalConfig>,
    /// The `inventory` block (its secrets are [`crate::tfplugin::Sensitive`] and never recorded).
    pub inventory: Option<ConnectionConfig>,
    /// The `timeouts` block.
    pub timeouts: Option<TimeoutsConfig>,
}

/// One `overrides` entry.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OverrideConfig {
    /// `extra_labels`.
    pub extra_labels: Option<BTreeMap<String, String>>,
    /// `extra_annotations`.
    pub extra_annotations: Option<BTreeMap<String, String>>,
    /// `paused`.
    pub paused: Option<bool>,
    /// `skip`.
    pub skip: Option<bool>,
    /// `token_renewal`.
    pub token_renewal: Option<TokenRenewalConfig>,
    /// `active_window`.
    pub active_window: Option<WindowConfig>,
    /// `consecutive_failure_threshold`.
    pub consecutive_failure_threshold: Option<i64>,
    /// `data`.
    pub data: Option<BTreeMap<String, String>>,
    /// `pull_mode`.
    pub pull_mode: Option<bool>,
    /// `workload_identity`.
    pub workload_identity: Option<WorkloadIdentityConfig>,
    /// `readiness_checks` (JSON text, as the bridge-wide one, which it replaces for this cluster).
    pub readiness_checks: Option<String>,
    /// `liveness_checks` (as `readiness_checks`).
    pub liveness_checks: Option<String>,
}

/// A `workload_identity` object (bridge-wide or an override's).
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WorkloadIdentityConfig {
    /// `provider` (required).
    pub provider: String,
    /// `endpoint` (required).
    pub endpoint: String,
    /// `ca_secret`.
    pub ca_secret: Option<String>,
    /// `aws`.
    pub aws: Option<AwsIdentityConfig>,
    /// `gcp`.
    pub gcp: Option<GcpIdentityConfig>,
    /// `azure`.
    pub azure: Option<AzureIdentityConfig>,
}

/// `workload_identity.aws`.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AwsIdentityConfig {
    /// `cluster_name` (required).
    pub cluster_name: String,
    /// `region`.
    pub region: Option<String>,
    /// `role_arn`.
    pub role_arn: Option<String>,
}

/// `workload_identity.gcp`.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GcpIdentityConfig {
    /// `cluster_name` (required).
    pub cluster_name: String,
    /// `location` (required).
    pub location: String,
    /// `project_id` (required).
    pub project_id: String,
}

/// `workload_identity.azure`.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AzureIdentityConfig {
    /// `client_id` (required).
    pub client_id: String,
    /// `tenant_id` (required).
    pub tenant_id: String,
    /// `cluster_name`.
    pub cluster_name: Option<String>,
    /// `resource_group`.
    pub resource_group: Option<String>,
    /// `subscription_id`.
    pub subscription_id: Option<String>,
}

/// A `token_renewal` object (the block, and the attribute of an `overrides` entry).
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TokenRenewalConfig {
    /// `interval` (required).
    pub interval: String,
    /// `token_duration`.
    pub token_duration: Option<String>,
    /// `service_account`: `namespace/name`.
    pub service_account: Option<String>,
    /// Records written by earlier versions held `service_account` split in two; read only
    /// ([`BridgeConfig::from_record`] joins them).
    #[serde(skip_serializing)]
    pub sa_namespace: Option<String>,
    /// See `sa_namespace`.
    #[serde(skip_serializing)]
    pub sa_name: Option<String>,
}

/// An `active_window` object: two cron schedules.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WindowConfig {
    /// `from` (required).
    pub from: String,
    /// `to` (required).
    pub to: String,
}

/// The `copy_labels` block.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CopyLabelsConfig {
    /// `include`.
    pub include: Option<Vec<String>>,
    /// `exclude`.
    pub exclude: Option<Vec<String>>,
    /// `remove_foreign`.
    pub remove_foreign: Option<bool>,
}

/// The `copy_properties` block.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CopyPropertiesConfig {
    /// `names`.
    pub names: Option<Vec<String>>,
    /// `label_prefix`.
    pub label_prefix: Option<String>,
    /// `kubernetes_version_as`.
    pub kubernetes_version_as: Option<String>,
}

impl BridgeConfig {
    /// Reads a configuration whose values are all known (plan, apply); an error names the attribute.
    pub fn read(config: &Value) -> Result<Self, Diagnostics> {
        from_value(config).map_err(|e| e.to_diagnostic().into())
    }

    /// Reads a configuration that may hold values not known yet (validation): they read as unset, and their
    /// paths are listed.
    pub fn read_partial(config: &Value) -> Result<Partial<Self>, Diagnostics> {
        from_value_partial(config).map_err(|e| e.to_diagnostic().into())
    }

    /// Reads the configuration recorded in a state (the prior state of a destroy, a refreshed state): unknown
    /// values read as unset; a state this version cannot read keeps only its `name`.
    pub fn of_state(state: &Value) -> Self {
        from_value_partial(state).map_or_else(
            |_| Self {
                name: state.get_attr("name").as_str().unwrap_or_default().into(),
                ..Self::default()
            },
            |p| p.value,
        )
    }

    /// Whether this configuration asks Sveltos to renew cluster `key`'s credentials (its override's
    /// `token_renewal`, else the bridge-wide one), as `crate::domain::desired::renewal_of` decides for a spec.
    pub fn renews(&self, key: &str) -> bool {
        self.token_renewal.is_some()
            || self
                .overrides
                .as_ref()
                .and_then(|o| o.get(key))
                .is_some_and(|o| o.token_renewal.is_some())
    }

    /// The configuration record written into the claim (for `import`): this configuration as JSON, without the
    /// `inventory` block's secrets (`token`, `client_key`, `exec.env` and their write-only twins), which the
    /// configuration supplies after an import.
    pub fn record(&self) -> Option<String> {
        let recorded = Self {
            inventory: self
                .inventory
                .as_ref()
                .map(ConnectionConfig::without_secrets),
            ..self.clone()
        };
        serde_json::to_string(&recorded).ok()
    }

    /// Reads a configuration record (see [`BridgeConfig::record`]), including those of earlier versions.
    pub fn from_record(record: &str) -> Result<Self, serde_json::Error> {
        let mut config: Self = serde_json::from_str(record)?;
        let renewals = config.token_renewal.iter_mut().chain(
            config
                .overrides
                .iter_mut()
                .flat_map(|o| o.values_mut())
                .filter_map(|o| o.token_renewal.as_mut()),
        );
        for r in renewals {
            if let (None, Some(ns), Some(name)) =
                (&r.service_account, r.sa_namespace.take(), r.sa_name.take())
            {
                r.service_account = Some(format!("{ns}/{name}"));
            }
        }
        Ok(config)
    }
}

impl BridgeConfig {
    /// Validates the configuration into a [`BridgeSpec`]: the core's checks
    /// ([`crate::domain::config::validate`]), each problem an error at its attribute path.
    pub fn to_spec(&self) -> Result<BridgeSpec, Diagnostics> {
        config::validate(&self.input()).map_err(|p| config_problems_diags(&p))
    }

    /// This configuration as the core's input, field for field: the `inventory` block reduced to its presence,
    /// with the configuration record ([`BridgeConfig::record`]) the spec carries.
    fn input(&self) -> BridgeInput {
        BridgeInput {
            name: self.name.clone(),
            namespaces: self.namespaces.clone(),
            names: self.names.clone(),
            label_selector: self.label_selector.clone(),
            cluster_manager: self.cluster_manager.clone(),
            require_healthy: self.require_healthy,
            require_credentials: self.require_credentials,
            extra_labels: self.extra_labels.clone(),
            extra_annotations: self.extra_annotations.clone(),
            paused: self.paused,
            consecutive_failure_threshold: self.consecutive_failure_threshold,
            data: self.data.clone(),
            readiness_checks: self.readiness_checks.clone(),
            liveness_checks: self.liveness_checks.clone(),
            pull_mode: self.pull_mode,
            workload_identity: self
                .workload_identity
                .as_ref()
                .map(WorkloadIdentityConfig::input),
            adopt: self.adopt,
            overrides: self
                .overrides
                .as_ref()
                .map(|o| o.iter().map(|(k, o)| (k.clone(), o.input())).collect()),
            credentials: self.credentials.clone(),
            active_window: self.active_window.as_ref().map(WindowConfig::input),
            strict: self.strict,
            fail_on_skipped: self.fail_on_skipped,
            unhealthy: self.unhealthy.clone(),
            duplicate_members: self.duplicate_members.clone(),
            duplicate_members_by_server: self.duplicate_members_by_server,
            skip_cluster_api_clusters: self.skip_cluster_api_clusters,
            max_removals: self.max_removals,
            max_updates: self.max_updates,
            copy_labels: self.copy_labels.as_ref().map(|c| LabelCopyInput {
                include: c.include.clone(),
                exclude: c.exclude.clone(),
                remove_foreign: c.remove_foreign,
            }),
            copy_properties: self.copy_properties.as_ref().map(|c| PropertyCopyInput {
                names: c.names.clone(),
                label_prefix: c.label_prefix.clone(),
                kubernetes_version_as: c.kubernetes_version_as.clone(),
            }),
            deregistration: self.deregistration.clone(),
            deregistration_timeout: self.deregistration_timeout.clone(),
            wait_for_ready: self.wait_for_ready,
            ready_timeout: self.ready_timeout.clone(),
            claim_namespace: self.claim_namespace.clone(),
            token_renewal: self.token_renewal.as_ref().map(TokenRenewalConfig::input),
            inventory: self.inventory.is_some(),
            config_record: self.record(),
        }
    }
}

impl OverrideConfig {
    fn input(&self) -> OverrideInput {
        OverrideInput {
            extra_labels: self.extra_labels.clone(),
            extra_annotations: self.extra_annotations.clone(),
            paused: self.paused,
            skip: self.skip,
            token_renewal: self.token_renewal.as_ref().map(TokenRenewalConfig::input),
            active_window: self.active_window.as_ref().map(WindowConfig::input),
            consecutive_failure_threshold: self.consecutive_failure_threshold,
            data: self.data.clone(),
            pull_mode: self.pull_mode,
            workload_identity: self
                .workload_identity
                .as_ref()
                .map(WorkloadIdentityConfig::input),
            readiness_checks: self.readiness_checks.clone(),
            liveness_checks: self.liveness_checks.clone(),
        }
    }
}

impl TokenRenewalConfig {
    fn input(&self) -> TokenRenewal {
        written_renewal(
            self.interval.clone(),
            self.token_duration.clone(),
            self.service_account.as_deref(),
        )
    }
}

impl WindowConfig {
    fn input(&self) -> ActiveWindow {
        ActiveWindow {
            from: self.from.clone(),
            to: self.to.clone(),
        }
    }
}

impl WorkloadIdentityConfig {
    /// `spec.workloadIdentity` as the upstream CRD has it (its rules are the core's checks).
    fn input(&self) -> WorkloadIdentity {
        WorkloadIdentity {
            provider: self.provider.clone(),
            endpoint: self.endpoint.clone(),
            ca_secret_ref: self
                .ca_secret
                .clone()
                .map(|name| LocalObjectReference { name }),
            aws: self.aws.as_ref().map(|a| AwsIdentity {
                cluster_name: a.cluster_name.clone(),
                region: a.region.clone(),
                role_arn: a.role_arn.clone(),
            }),
            gcp: self.gcp.as_ref().map(|g| GcpIdentity {
                cluster_name: g.cluster_name.clone(),
                location: g.location.clone(),
                project_id: g.project_id.clone(),
            }),
            azure: self.azure.as_ref().map(|a| AzureIdentity {
                client_id: a.client_id.clone(),
                tenant_id: a.tenant_id.clone(),
                cluster_name: a.cluster_name.clone(),
                resource_group: a.resource_group.clone(),
                subscription_id: a.subscription_id.clone(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tfplugin::{Sensitive, value::serde_bridge::coverage::assert_covers};

    #[test]
    fn value_round_trip() {
        let c = BridgeConfig {
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
        };
        let v = crate::tfplugin::value::to_value(&c).unwrap();
        assert_eq!(BridgeConfig::read(&v).unwrap(), c);
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(serde_json::from_str::<BridgeConfig>(&json).unwrap(), c);
    }

    #[test]
    fn a_fractional_number_is_an_error_at_its_path() {
        let v = Value::object([
            ("name", Value::string("main")),
            ("max_removals", Value::float(2.5)),
        ]);
        let d = BridgeConfig::read(&v).unwrap_err();
        let d = d.iter().next().unwrap();
        assert_eq!(d.summary, "Invalid configuration value");
        assert_eq!(
            d.attribute,
            Some(crate::tfplugin::AttributePath::attr("max_removals"))
        );
    }

    #[test]
    fn the_config_covers_the_schema() {
        assert_covers::<BridgeConfig>(&super::super::schema::schema().block, &[]);
    }

    #[test]
    fn the_record_holds_no_secret_and_reads_back() {
        let mut c = BridgeConfig {
            name: "main".into(),
            inventory: Some(ConnectionConfig {
                host: Some("https://hub:6443".into()),
                token: Some(Sensitive("canary-token".into())),
                token_wo: Some(Sensitive("canary-wo".into())),
                client_key: Some(Sensitive("canary-key".into())),
                ..Default::default()
            }),
            timeouts: Some(TimeoutsConfig {
                create: Some("5m".into()),
                ..Default::default()
            }),
            ..Default::default()
        };
        let record = c.record().unwrap();
        assert!(!record.contains("canary"), "{record}");
        let back = BridgeConfig::from_record(&record).unwrap();
        c.inventory = c.inventory.map(|i| i.without_secrets());
        assert_eq!(back, c);
        assert!(!format!("{c:?}").contains("canary"));
    }

    #[test]
    fn the_record_writes_only_what_is_set() {
        let c = BridgeConfig {
            name: "main".into(),
            token_renewal: Some(TokenRenewalConfig {
                interval: "1h".into(),
                sa_namespace: Some("old".into()),
                sa_name: Some("old".into()),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(
            c.record().unwrap(),
            r#"{"name":"main","token_renewal":{"interval":"1h"}}"#
        );
    }

    #[test]
    fn records_of_earlier_versions_read() {
        let old = r#"{"name":"main","token_renewal":{"interval":"1h","sa_namespace":"ns","sa_name":"sa"},
            "overrides":{"a/b":{"token_renewal":{"interval":"2h"}}}}"#;
        let c = BridgeConfig::from_record(old).unwrap();
        let r = c.token_renewal.unwrap();
        assert_eq!(r.service_account.as_deref(), Some("ns/sa"));
        assert_eq!((r.sa_namespace, r.sa_name), (None, None));
        assert_eq!(
            c.overrides.unwrap()["a/b"]
                .token_renewal
                .as_ref()
                .unwrap()
                .interval,
            "2h"
        );
    }
}
