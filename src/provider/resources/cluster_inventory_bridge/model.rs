//! The resource's configuration as the user wrote it ([`BridgeConfig`], every argument and block), read from a
//! Terraform value in one pass by the plugin layer's serde bridge: the field names are the schema's attribute
//! names, written once here (the test below checks them against the schema). The same types, as JSON, are the
//! configuration record of the claim, without the `inventory` block's secrets, from which `import` restores
//! the configuration. Validation into a [`crate::domain::BridgeSpec`] is [`super::validate`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::timeouts::TimeoutsConfig;
use crate::{
    domain::credentials::CredentialsConfig,
    provider::blocks::connection::ConnectionConfig,
    tfplugin::{
        Diagnostics, Value,
        value::{Partial, from_value, from_value_partial},
    },
};

/// The resource's configuration (everything but the computed `id`, `instance_id`, `clusters` and `skipped`), as
/// written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BridgeConfig {
    /// `name` (required).
    pub name: String,
    /// `namespaces`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespaces: Option<Vec<String>>,
    /// `names`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub names: Option<Vec<String>>,
    /// `label_selector`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<String>,
    /// `cluster_manager`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_manager: Option<String>,
    /// `require_healthy`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub require_healthy: Option<bool>,
    /// `require_credentials`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub require_credentials: Option<bool>,
    /// `extra_labels`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra_labels: Option<BTreeMap<String, String>>,
    /// `extra_annotations`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra_annotations: Option<BTreeMap<String, String>>,
    /// `paused`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
    /// `consecutive_failure_threshold`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consecutive_failure_threshold: Option<i64>,
    /// `data`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<BTreeMap<String, String>>,
    /// `readiness_checks`: the upstream `readinessChecks` list as JSON text, checked by validation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub readiness_checks: Option<String>,
    /// `liveness_checks` (as `readiness_checks`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub liveness_checks: Option<String>,
    /// `pull_mode`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pull_mode: Option<bool>,
    /// `workload_identity` (an override's replaces it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workload_identity: Option<WorkloadIdentityConfig>,
    /// `adopt`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adopt: Option<bool>,
    /// `overrides`, keyed `namespace/name`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overrides: Option<BTreeMap<String, OverrideConfig>>,
    /// The `credentials` block.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credentials: Option<CredentialsConfig>,
    /// The `active_window` block.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_window: Option<WindowConfig>,
    /// `strict`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
    /// `fail_on_skipped`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fail_on_skipped: Option<bool>,
    /// `unhealthy`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unhealthy: Option<String>,
    /// `duplicate_members`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duplicate_members: Option<String>,
    /// `duplicate_members_by_server`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duplicate_members_by_server: Option<bool>,
    /// `skip_cluster_api_clusters`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skip_cluster_api_clusters: Option<bool>,
    /// `max_removals`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_removals: Option<i64>,
    /// `max_updates`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_updates: Option<i64>,
    /// The `copy_labels` block.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub copy_labels: Option<CopyLabelsConfig>,
    /// The `copy_properties` block.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub copy_properties: Option<CopyPropertiesConfig>,
    /// `deregistration`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deregistration: Option<String>,
    /// `deregistration_timeout`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deregistration_timeout: Option<String>,
    /// `wait_for_ready`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait_for_ready: Option<bool>,
    /// `ready_timeout`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready_timeout: Option<String>,
    /// `claim_namespace`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claim_namespace: Option<String>,
    /// The `token_renewal` block.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_renewal: Option<TokenRenewalConfig>,
    /// The `inventory` block (its secrets are [`crate::tfplugin::Sensitive`] and never recorded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inventory: Option<ConnectionConfig>,
    /// The `timeouts` block.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeouts: Option<TimeoutsConfig>,
}

/// One `overrides` entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OverrideConfig {
    /// `extra_labels`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra_labels: Option<BTreeMap<String, String>>,
    /// `extra_annotations`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra_annotations: Option<BTreeMap<String, String>>,
    /// `paused`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
    /// `skip`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skip: Option<bool>,
    /// `token_renewal`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_renewal: Option<TokenRenewalConfig>,
    /// `active_window`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_window: Option<WindowConfig>,
    /// `consecutive_failure_threshold`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consecutive_failure_threshold: Option<i64>,
    /// `data`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<BTreeMap<String, String>>,
    /// `pull_mode`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pull_mode: Option<bool>,
    /// `workload_identity`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workload_identity: Option<WorkloadIdentityConfig>,
    /// `readiness_checks` (JSON text, as the bridge-wide one, which it replaces for this cluster).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub readiness_checks: Option<String>,
    /// `liveness_checks` (as `readiness_checks`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub liveness_checks: Option<String>,
}

/// A `workload_identity` object (bridge-wide or an override's).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WorkloadIdentityConfig {
    /// `provider` (required).
    pub provider: String,
    /// `endpoint` (required).
    pub endpoint: String,
    /// `ca_secret`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca_secret: Option<String>,
    /// `aws`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aws: Option<AwsIdentityConfig>,
    /// `gcp`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gcp: Option<GcpIdentityConfig>,
    /// `azure`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub azure: Option<AzureIdentityConfig>,
}

/// `workload_identity.aws`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AwsIdentityConfig {
    /// `cluster_name` (required).
    pub cluster_name: String,
    /// `region`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// `role_arn`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role_arn: Option<String>,
}

/// `workload_identity.gcp`.
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
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AzureIdentityConfig {
    /// `client_id` (required).
    pub client_id: String,
    /// `tenant_id` (required).
    pub tenant_id: String,
    /// `cluster_name`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_name: Option<String>,
    /// `resource_group`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_group: Option<String>,
    /// `subscription_id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subscription_id: Option<String>,
}

/// A `token_renewal` object (the block, and the attribute of an `overrides` entry).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TokenRenewalConfig {
    /// `interval` (required).
    pub interval: String,
    /// `token_duration`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_duration: Option<String>,
    /// `service_account`: `namespace/name`.
    #[serde(skip_serializing_if = "Option::is_none")]
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
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WindowConfig {
    /// `from` (required).
    pub from: String,
    /// `to` (required).
    pub to: String,
}

/// The `copy_labels` block.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CopyLabelsConfig {
    /// `include`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub include: Option<Vec<String>>,
    /// `exclude`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exclude: Option<Vec<String>>,
    /// `remove_foreign`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remove_foreign: Option<bool>,
}

/// The `copy_properties` block.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CopyPropertiesConfig {
    /// `names`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub names: Option<Vec<String>>,
    /// `label_prefix`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label_prefix: Option<String>,
    /// `kubernetes_version_as`.
    #[serde(skip_serializing_if = "Option::is_none")]
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tfplugin::{Sensitive, value::serde_bridge::coverage::assert_covers};

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
