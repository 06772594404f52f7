//! `ImportResourceState`: the import ID names a bridge (and its claim's namespace); the state starts null with the
//! import marker as private data, and the first refresh after it ([`restore_imported`]) takes over every object
//! carrying the bridge's label, restores the configuration from the claim and gives this state an instance id of
//! its own: its first apply takes the claim over, so that the state that held it (alive or not) cannot manage the
//! bridge any more (its next plan fails, naming the claim).

use crate::{
    domain::{
        ownership::{Claim, IMPORTED},
        skipped_record,
    },
    k8s::{claim as k8s_claim, io::IoError},
    provider::diag::io_diags,
    tfplugin::{
        Diagnostic, Diagnostics, ImportRequest, ImportResponse, ImportedResource, Value,
        value::to_value,
    },
};

use super::{
    model::BridgeConfig,
    schema::{TYPE_NAME, null_state, schema, skipped_value},
};

/// The import of `req.id`: `<bridge name>`, or `<claim namespace>/<bridge name>` for a claim outside the default
/// namespace.
pub(super) fn import(req: &ImportRequest) -> ImportResponse {
    let mut resp = ImportResponse::default();
    let (claim_ns, name) = match req.id.split_once('/') {
        Some((ns, name)) => (Some(ns), name),
        None => (None, req.id.as_str()),
    };
    let ns_ok = claim_ns.is_none_or(|ns| crate::domain::names::dns1123_label(ns).is_ok());
    if crate::domain::selector::label_value(name).is_err() || name.is_empty() || !ns_ok {
        resp.diagnostics.push(Diagnostic::error(
            "Invalid import ID",
            format!("{:?} is not a bridge name. Use: terraform import sveltos_cluster_inventory_bridge.<address> <bridge name> (or <claim namespace>/<bridge name>)", req.id),
        ));
        return resp;
    }
    let mut state = null_state();
    state.set_attr("name", Value::string(name));
    state.set_attr("id", Value::string(name));
    if let Some(ns) = claim_ns {
        state.set_attr("claim_namespace", Value::string(ns));
    }
    resp.imported.push(ImportedResource {
        type_name: TYPE_NAME.to_string(),
        state,
        private: IMPORTED.to_vec(),
    });
    resp
}

/// What the first refresh after an import restored: its warnings, and the instance id of the claim it found (the
/// state this one takes the bridge over from at its first apply).
pub(super) struct Restored {
    pub warnings: Diagnostics,
    pub takes_over: Option<String>,
}

/// At the first refresh after an import: restores into `state` the `skipped` and configuration recorded in the
/// claim of `bridge` (every argument and block, `inventory` without its secrets: `token`, `client_key`, `exec.env`
/// and their write-only twins are never recorded, the configuration supplies them; and `timeouts`) and gives it a
/// new instance id. The claim's instance id is not copied: a state that copied it could not be told from the state
/// it was copied from, and both would manage the bridge. `claim` is the claim as the refresh read it
/// (`runtime::refresh`); `Err` when it could not be read.
pub(super) fn restore_imported(
    claim: Result<Option<Claim>, IoError>,
    state: &mut Value,
    bridge: &str,
) -> Result<Restored, Diagnostics> {
    let claim = claim.map_err(io_diags)?;
    state.set_attr("instance_id", Value::string(k8s_claim::new_instance_id()));
    let takes_over = claim.as_ref().map(|c| c.instance.clone());
    // `skipped` as the last apply left it (a claim without the record, of an older version or too large, restores
    // none: the next plan shows the skipped clusters as a change).
    let skipped = claim.as_ref().and_then(|c| c.skipped.as_deref());
    if let Some(skipped) = skipped.and_then(skipped_record::decode) {
        state.set_attr("skipped", skipped_value(&skipped));
    }
    let record = claim.and_then(|c| c.config);
    let mut warnings = Diagnostics::new();
    // Only the claim, in the operator's namespace: the bridged SveltosClusters carry a copy of the record too, but
    // they sit in the inventory's namespaces, where their tenants may rewrite it.
    match record.map(|r| BridgeConfig::from_record(&r)) {
        Some(Ok(cfg)) if cfg.name == bridge => write_config(&cfg, state),
        Some(_) => warnings.push(Diagnostic::warning(
            "Imported bridge configuration not restored",
            format!("The configuration recorded in the claim of bridge {bridge:?} is unreadable; the next plan shows the configuration as changes."),
        )),
        None => warnings.push(Diagnostic::warning(
            "Imported bridge configuration not restored",
            format!("The claim of bridge {bridge:?} records no configuration (it was written by an older version); the next plan shows the configuration as changes."),
        )),
    }
    if let Some(from) = &takes_over {
        warnings.push(Diagnostic::warning(
            "Imported bridge taken over at the next apply",
            format!(
                "The claim of bridge {bridge:?} is held by the state with instance {from}. This state's next apply \
                 takes it over: from then on that state's plans fail naming the claim (remove the bridge from it \
                 with `state rm` if it still exists), so that two states never manage this bridge."
            ),
        ));
    }
    Ok(Restored {
        warnings,
        takes_over,
    })
}

/// Writes the configuration arguments and blocks of `config` into `state` (the computed attributes are left as they
/// are); an argument `config` does not set is null.
fn write_config(config: &BridgeConfig, state: &mut Value) {
    let Ok(written) = to_value(config) else {
        return;
    };
    let schema = schema();
    let arguments = schema
        .block
        .attributes
        .iter()
        .filter(|a| a.required || a.optional)
        .map(|a| &a.name)
        .chain(schema.block.blocks.iter().map(|b| &b.type_name));
    for name in arguments {
        state.set_attr(name.clone(), written.get_attr(name).clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{provider::blocks::connection::ConnectionConfig, tfplugin::Sensitive};

    #[test]
    fn the_restored_configuration_is_the_recorded_one_without_secrets() {
        let config = BridgeConfig {
            name: "main".into(),
            label_selector: Some("env=prod".into()),
            inventory: Some(ConnectionConfig {
                config_path: Some("/hub/kubeconfig".into()),
                token: Some(Sensitive("canary".into())),
                ..Default::default()
            }),
            timeouts: Some(super::super::timeouts::TimeoutsConfig {
                delete: Some("1h".into()),
                ..Default::default()
            }),
            ..Default::default()
        };
        let recorded = BridgeConfig::from_record(&config.record().unwrap()).unwrap();
        let mut state = null_state();
        state.set_attr("instance_id", Value::string("i-1"));
        write_config(&recorded, &mut state);
        assert_eq!(state.get_attr("instance_id").as_str(), Some("i-1"));
        assert_eq!(state.get_attr("label_selector").as_str(), Some("env=prod"));
        let inventory = state.get_attr("inventory");
        assert_eq!(
            inventory.get_attr("config_path").as_str(),
            Some("/hub/kubeconfig")
        );
        assert!(inventory.get_attr("token").is_null());
        assert_eq!(
            state.get_attr("timeouts").get_attr("delete").as_str(),
            Some("1h")
        );
        assert!(state.get_attr("copy_labels").is_null());
        let again = BridgeConfig::read(&state).unwrap();
        assert_eq!(again.record(), config.record());
    }
}
