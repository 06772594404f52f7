//! The `inventory` block: where ClusterProfiles and their credential sources are read when the inventory lives
//! on another cluster than Sveltos (an OCM hub, a GKE Fleet host project, a cluster-api management cluster).
//!
//! One schema and one resolution for the bridge resource and both ClusterProfile data sources. The block holds
//! the provider block's connection attributes ([`connection::with_connection_schema`]: same names and precedence, but
//! no `KUBE_*` environment fallback: [`crate::provider::state::hub_environment`]). With it, every read of the inventory (ClusterProfiles, labelled credential
//! Secrets, the labels of consumer namespaces, Secrets named by `kubeconfig-secretreader` access providers)
//! goes to that cluster; everything the bridge writes and owns stays on the provider's connection. Without it,
//! one cluster does both, as before.

use crate::{
    k8s::config::{ConfigError, KubeSettings},
    provider::blocks::connection,
    provider::state::{NotReady, ProviderState},
    tfplugin::{
        AttributePath, ClientCapabilities, DeferredReason, Diagnostic, Value,
        schema::{Block, NestedBlock},
    },
};

/// The block's name.
pub const BLOCK: &str = "inventory";

/// The `inventory` block (optional, at most one).
pub fn block() -> NestedBlock {
    let mut block = connection::with_connection_schema(Block::new().markdown_description(
            "The cluster holding the inventory, when it is not the cluster the provider writes to. The same \
             connection attributes as the provider block, without its `KUBE_*` environment fallbacks (those are the \
             management cluster's; a `KUBE_TOKEN` must never reach the hub): what the block says connects. With \
             it, ClusterProfiles, labelled credential Secrets, consumer namespaces and Secrets named by \
             `kubeconfig-secretreader` access providers are read on that cluster, which is never written to; \
             SveltosClusters and their Secrets are written through the provider's connection, in the \
             ClusterProfile's namespace (which must exist there). Without it, one cluster holds both.",
    ));
    // No environment fallback here: the shared descriptions' `Env: ...` notes are the provider block's.
    for a in &mut block.attributes {
        if let Some(at) = a.description.find(" Env: `") {
            let end = a.description[at..]
                .find("`.")
                .map_or(a.description.len(), |e| at + e + 2);
            a.description.replace_range(at..end, "");
        }
    }
    // The shared schema describes `exec` for the provider block (the management cluster); here it is the hub's.
    for b in block.blocks.iter_mut().filter(|b| b.type_name == "exec") {
        b.block = std::mem::take(&mut b.block)
            .markdown_description("Exec credential plugin for the inventory's cluster.");
    }
    NestedBlock::single(BLOCK, block)
}

/// The path of the block.
fn prefix() -> AttributePath {
    AttributePath::attr(BLOCK)
}

/// The paths of the block's attributes whose values are not known yet (empty without the block).
pub fn unknown(config: &Value) -> Vec<AttributePath> {
    let block = config.get_attr(BLOCK);
    if !block.is_known() {
        return vec![prefix()];
    }
    connection::unknown_attributes(block, &prefix())
}

/// What a configuration's `inventory` block says.
#[derive(Debug, PartialEq)]
pub enum Inventory {
    /// No block: the inventory is on the provider's cluster.
    Provider,
    /// A block with known values.
    Hub(Box<KubeSettings>),
    /// A block with values not known yet (their paths).
    Unknown(Vec<AttributePath>),
}

/// Reads the `inventory` block of a resource or data source configuration.
pub fn inventory(config: &Value) -> Inventory {
    let block = config.get_attr(BLOCK);
    if block.is_null() {
        return Inventory::Provider;
    }
    let unknown = unknown(config);
    if !unknown.is_empty() {
        return Inventory::Unknown(unknown);
    }
    Inventory::Hub(Box::new(connection::settings_from_value(block)))
}

/// A connection problem of the block as a diagnostic, with the attribute path (under `inventory.`) it concerns.
pub fn connect_error(e: &ConfigError) -> Diagnostic {
    let d = match e {
        ConfigError::Client(_) => Diagnostic::error(
            "Cannot create the Kubernetes client for the inventory",
            e.to_string(),
        ),
        _ => Diagnostic::error("Invalid inventory configuration", e.to_string()),
    };
    match connection::error_path(e, &prefix()) {
        Some(path) => d.with_attribute(path),
        None => d.with_attribute(prefix()),
    }
}

/// The client that reads the inventory of `config`: the provider's without an `inventory` block, else one for
/// the block's cluster (cached per settings by [`ProviderState::client_for`]). Values not known yet defer when
/// `caps` allows it, like the provider's own configuration; otherwise they are an error naming them.
pub fn client(
    state: &ProviderState,
    config: &Value,
    caps: ClientCapabilities,
) -> Result<kube::Client, NotReady> {
    match inventory(config) {
        Inventory::Provider => state.client(caps),
        Inventory::Unknown(_) if caps.deferral_allowed => {
            Err(NotReady::Defer(DeferredReason::ResourceConfigUnknown))
        }
        Inventory::Unknown(paths) => {
            let names: Vec<String> = paths.iter().map(ToString::to_string).collect();
            Err(NotReady::Fail(
                Diagnostic::error(
                    "Inventory connection is not known yet",
                    format!(
                        "{} depend(s) on values known only after apply, and this Terraform version cannot defer. \
                         Apply the resources those values come from first (for example with -target). The \
                         provider never falls back to another cluster.",
                        names.join(", ")
                    ),
                )
                .with_attribute(paths.into_iter().next().unwrap_or_else(prefix)),
            ))
        }
        Inventory::Hub(settings) => state
            .client_for(&settings)
            .map_err(|e| NotReady::Fail(connect_error(&e))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_block(block: Value) -> Value {
        Value::object([("name", Value::string("fleet")), (BLOCK, block)])
    }

    fn failure(r: Result<kube::Client, NotReady>) -> Diagnostic {
        match r {
            Err(NotReady::Fail(d)) => d,
            Err(NotReady::Defer(_)) => panic!("deferred"),
            Ok(_) => panic!("connected"),
        }
    }

    #[test]
    fn the_block_has_the_provider_connection_attributes() {
        let b = block();
        assert_eq!(b.type_name, BLOCK);
        let provider = crate::provider::blocks::provider_config::config_schema();
        let names = |blk: &Block| -> Vec<String> {
            blk.attributes.iter().map(|a| a.name.clone()).collect()
        };
        assert_eq!(names(&b.block), names(&provider.block));
        assert!(
            b.block
                .attribute_named("token")
                .is_some_and(|a| a.sensitive)
        );
        assert!(
            b.block
                .block_named("exec")
                .is_some_and(|e| e.block.description.contains("inventory"))
        );
        assert!(
            b.block
                .attributes
                .iter()
                .all(|a| !a.description.contains("KUBE_")),
            "no environment fallback is documented for the hub"
        );
        // Terraform rejects NestingSingle blocks whose MinItems and MaxItems differ.
        assert_eq!(b.min_items, b.max_items);
    }

    #[test]
    fn absent_unknown_and_known_blocks() {
        assert_eq!(
            inventory(&Value::object([("name", Value::string("x"))])),
            Inventory::Provider
        );
        assert_eq!(inventory(&with_block(Value::Null)), Inventory::Provider);
        let unknown = with_block(Value::object([
            ("host", Value::unknown()),
            ("token", Value::string("t")),
        ]));
        assert_eq!(
            inventory(&unknown),
            Inventory::Unknown(vec![AttributePath::attr("inventory").then_attr("host")])
        );
        assert_eq!(
            inventory(&with_block(Value::unknown())),
            Inventory::Unknown(vec![AttributePath::attr("inventory")])
        );
        match inventory(&with_block(Value::object([(
            "host",
            Value::string("https://hub.example:6443"),
        )]))) {
            Inventory::Hub(s) => assert_eq!(s.host.as_deref(), Some("https://hub.example:6443")),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn unknown_values_defer_when_allowed_and_fail_naming_them_otherwise() {
        let state = ProviderState::new();
        let config = with_block(Value::object([("host", Value::unknown())]));
        let caps = ClientCapabilities {
            deferral_allowed: true,
            ..Default::default()
        };
        assert!(matches!(
            client(&state, &config, caps),
            Err(NotReady::Defer(DeferredReason::ResourceConfigUnknown))
        ));
        let d = failure(client(&state, &config, ClientCapabilities::default()));
        assert_eq!(
            d.attribute.map(|p| p.to_string()).as_deref(),
            Some("inventory.host")
        );
        assert!(d.detail.contains("inventory.host"), "{}", d.detail);
        assert_eq!(state.inventory_clients(), 0);
    }

    #[tokio::test]
    async fn connection_errors_carry_paths_under_the_block() {
        let state = ProviderState::new();
        let bad = with_block(Value::object([
            ("host", Value::string("https://hub.example:6443")),
            ("insecure", Value::bool(true)),
            (
                "cluster_ca_certificate",
                Value::string("-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n"),
            ),
        ]));
        let d = failure(client(&state, &bad, ClientCapabilities::default()));
        let path = d.attribute.map(|p| p.to_string()).unwrap_or_default();
        assert!(path.starts_with("inventory."), "{path}: {}", d.detail);
        let missing = with_block(Value::object([(
            "config_path",
            Value::string("/nonexistent/tfsveltos/hub-kubeconfig"),
        )]));
        let d = failure(client(&state, &missing, ClientCapabilities::default()));
        assert_eq!(
            d.attribute.map(|p| p.to_string()).as_deref(),
            Some("inventory.config_path")
        );
        assert_eq!(state.inventory_clients(), 0, "failures are not cached");
    }

    #[tokio::test]
    async fn clients_are_cached_per_settings() {
        let state = ProviderState::new();
        let hub = |host: &str| {
            with_block(Value::object([
                ("host", Value::string(host)),
                ("token", Value::string("hub-token")),
                ("insecure", Value::bool(true)),
            ]))
        };
        for _ in 0..3 {
            assert!(
                client(
                    &state,
                    &hub("https://hub-a.example:6443"),
                    Default::default()
                )
                .is_ok()
            );
        }
        assert_eq!(state.inventory_clients(), 1);
        assert!(
            client(
                &state,
                &hub("https://hub-b.example:6443"),
                Default::default()
            )
            .is_ok()
        );
        assert_eq!(state.inventory_clients(), 2);
        // Without the block, the provider's own (here: unconfigured) connection is used, never a hub's.
        let d = failure(client(
            &state,
            &Value::object([("name", Value::string("x"))]),
            Default::default(),
        ));
        assert_eq!(d.summary, "Provider not configured");
    }
}
