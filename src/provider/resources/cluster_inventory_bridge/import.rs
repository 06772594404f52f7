//! `ImportResourceState`: the import ID names a bridge (and its claim's namespace); the state starts null with the
//! import marker as private data, and the first refresh after it ([`restore_imported`]) takes over every object
//! carrying the bridge's label and restores the instance id and configuration from the claim.

use crate::{
    bridge::ownership::{IMPORTED, claim_name},
    k8s::claim as k8s_claim,
    provider::diag::io_diags,
    tfplugin::{Diagnostic, Diagnostics, ImportRequest, ImportResponse, ImportedResource, Value},
};

use super::{
    claim::claim_namespace,
    model::BridgeConfig,
    schema::{TYPE_NAME, null_state},
};

/// The import of `req.id`: `<bridge name>`, or `<claim namespace>/<bridge name>` for a claim outside the default
/// namespace.
pub(super) fn import(req: &ImportRequest) -> ImportResponse {
    let mut resp = ImportResponse::default();
    let (claim_ns, name) = match req.id.split_once('/') {
        Some((ns, name)) => (Some(ns), name),
        None => (None, req.id.as_str()),
    };
    let ns_ok = claim_ns.is_none_or(|ns| crate::bridge::names::dns1123_label(ns).is_ok());
    if crate::bridge::selector::label_value(name).is_err() || name.is_empty() || !ns_ok {
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

/// At the first refresh after an import: restores into `state` the instance id and configuration recorded in the
/// claim of `bridge` (states of older versions recorded the configuration on the bridged SveltosClusters).
/// Returns the warnings of a configuration not restored; `Err` when the claim cannot be read.
pub(super) async fn restore_imported(
    client: &kube::Client,
    state: &mut Value,
    bridge: &str,
) -> Result<Diagnostics, Diagnostics> {
    let claim_ns = claim_namespace(state);
    let claim = k8s_claim::read(client, &claim_ns, &claim_name(bridge))
        .await
        .map_err(io_diags)?;
    if let Some(c) = &claim {
        state.set_attr("instance_id", Value::string(&c.instance));
    }
    let record = claim.and_then(|c| c.config);
    let mut warnings = Diagnostics::new();
    // Only the claim, in the operator's namespace: the bridged SveltosClusters carry a copy of the record too, but
    // they sit in the inventory's namespaces, where their tenants may rewrite it.
    match record.map(|r| serde_json::from_str::<BridgeConfig>(&r)) {
        Some(Ok(cfg)) if cfg.name == bridge => {
            let instance = state.get_attr("instance_id").clone();
            cfg.write_into(state);
            state.set_attr("instance_id", instance);
        }
        Some(_) => warnings.push(Diagnostic::warning(
            "Imported bridge configuration not restored",
            format!("The configuration recorded in the claim of bridge {bridge:?} is unreadable; the next plan shows the configuration as changes."),
        )),
        None => warnings.push(Diagnostic::warning(
            "Imported bridge configuration not restored",
            format!("The claim of bridge {bridge:?} records no configuration (it was written by an older version); the next plan shows the configuration as changes."),
        )),
    }
    Ok(warnings)
}
