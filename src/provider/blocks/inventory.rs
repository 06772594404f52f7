//! The `inventory` block: where ClusterProfiles and their credential sources are read when the inventory lives
//! on another cluster than Sveltos (an OCM hub, a GKE Fleet host project, a cluster-api management cluster).
//!
//! One schema and one resolution for the bridge resource and both ClusterProfile data sources. The block holds
//! the provider block's connection attributes ([`connection::with_connection_schema`]: same names and precedence, but
//! no `KUBE_*` environment fallback: [`crate::provider::state::hub_environment`]). With it, every read of the inventory (ClusterProfiles, labelled credential
//! Secrets, the labels of consumer namespaces, Secrets named by `kubeconfig-secretreader` access providers)
//! goes to that cluster; everything the bridge writes and owns stays on the provider's connection. Without it,
//! one cluster does both, as before.
//!
//! The resource's block ([`resource_block`]) also has write-only twins of its secrets (`token_wo`,
//! `client_key_wo`, `exec.env_wo`): given in configuration (an ephemeral value may feed them), handed to every
//! plan and apply, never stored in state or plan files (Terraform and OpenTofu 1.11+). Each excludes its stored
//! twin ([`check`]). The data sources' block ([`block`]) has none: the protocol allows write-only attributes on
//! managed resources only. There is no `*_wo_version`: the hub credential is read with at every plan and apply
//! and nothing derived from it is stored, so a rotated value is used by the next run without a change to plan.

use serde::Deserialize;

use crate::{
    k8s::config::{ConfigError, KubeSettings},
    provider::blocks::connection::{self, ConnectionConfig},
    provider::state::{NotReady, ProviderState},
    tfplugin::{
        AttributePath, ClientCapabilities, DeferredReason, Diagnostic, Diagnostics, Type, Value,
        schema::{Attribute, Block, NestedBlock},
        value::from_value_partial,
    },
};

/// The block's name.
pub const BLOCK: &str = "inventory";

/// What the block is, for its description.
const DESCRIPTION: &str = "The cluster holding the inventory, when it is not the cluster the provider writes to. The \
     same connection attributes as the provider block, without its `KUBE_*` environment fallbacks (those are the \
     management cluster's; a `KUBE_TOKEN` must never reach the hub): what the block says connects. With it, \
     ClusterProfiles, labelled credential Secrets, consumer namespaces and Secrets named by \
     `kubeconfig-secretreader` access providers are read on that cluster, which is never written to; \
     SveltosClusters and their Secrets are written through the provider's connection, in the ClusterProfile's \
     namespace (which must exist there). Without it, one cluster holds both.";

/// Where the block's secrets end up (the data sources' version; [`resource_block`] replaces it).
const STORED_NOTE: &str = " Its arguments are stored in the state like every argument (sensitive ones hidden in \
     output): prefer `config_path` with a context, or `exec`, over `token` and `client_key`.";

/// The `inventory` block (optional, at most one).
pub fn block() -> NestedBlock {
    let mut block = connection::with_connection_schema(
        Block::new().markdown_description(format!("{DESCRIPTION}{STORED_NOTE}")),
    );
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

pub use connection::{ENV_TWINS, TWINS};

/// The `inventory` block of the bridge resource: [`block`] plus the write-only twins of its secrets
/// ([`TWINS`], [`ENV_TWINS`]), each placed after its stored twin.
pub fn resource_block() -> NestedBlock {
    let mut nb = block();
    nb.block.description = nb.block.description.replace(
        STORED_NOTE,
        " Secrets given as `token_wo`, `client_key_wo` and `exec.env_wo` (Terraform and OpenTofu 1.11+) are never \
         stored in state or plan files; `token`, `client_key` and `exec.env` are stored like every argument.",
    );
    for (stored, wo) in TWINS {
        let at = nb
            .block
            .attributes
            .iter()
            .position(|a| a.name == stored)
            .map_or(nb.block.attributes.len(), |i| i + 1);
        nb.block.attributes.insert(
            at,
            Attribute::string(wo)
                .optional()
                .sensitive()
                .write_only()
                .markdown_description(format!(
                    "Write-only `{stored}` (Terraform and OpenTofu 1.11+): used to connect at every plan and apply, \
                     never stored in state or plan files, and may be an ephemeral value. Conflicts with `{stored}`. \
                     Older CLIs refuse a configuration that sets it."
                )),
        );
    }
    for exec in nb.block.blocks.iter_mut().filter(|b| b.type_name == "exec") {
        let (stored, wo) = ENV_TWINS;
        exec.block.attributes.push(
            Attribute::map(wo, Type::String)
                .optional()
                .sensitive()
                .write_only()
                .markdown_description(format!(
                    "Write-only environment variables for the plugin (Terraform and OpenTofu 1.11+), added to \
                     `{stored}`: never stored in state or plan files, and may hold ephemeral values. A variable may be \
                     in `{stored}` or here, not both. Older CLIs refuse a configuration that sets it."
                )),
        );
    }
    nb
}

/// A configuration's `inventory` block, read alone (the bridge reads it with the rest of its configuration).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Holder {
    inventory: Option<ConnectionConfig>,
}

/// The `inventory` block of `config` with its values not known yet left out; an error names the attribute that
/// does not read.
fn known_block(config: &Value) -> Result<Option<ConnectionConfig>, Diagnostic> {
    from_value_partial::<Holder>(config)
        .map(|p| p.value.inventory)
        .map_err(|e| e.to_diagnostic())
}

/// Errors for a stored secret and its write-only twin both set in `config`'s block (each at the write-only
/// attribute's path). Values not known yet are not checked (plan checks them again, known).
pub fn check(config: &Value) -> Diagnostics {
    match known_block(config) {
        Ok(block) => check_block(block.as_ref()),
        Err(d) => d.into(),
    }
}

/// Errors for a stored secret and its write-only twin both set in the block (each at the write-only
/// attribute's path).
pub fn check_block(block: Option<&ConnectionConfig>) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let Some(block) = block else {
        return diags;
    };
    let (twins, env) = block.conflicts();
    for (stored, wo) in twins {
        diags.push(
            Diagnostic::error(
                "Conflicting inventory credentials",
                format!(
                    "{BLOCK}.{stored} and {BLOCK}.{wo} are both set; set one of them ({wo} keeps the value out \
                     of state and plan files)."
                ),
            )
            .with_attribute(prefix().then_attr(wo)),
        );
    }
    let (stored, wo) = ENV_TWINS;
    for key in env {
        diags.push(
            Diagnostic::error(
                "Conflicting inventory credentials",
                format!(
                    "The variable {key:?} is in both {BLOCK}.exec.{stored} and {BLOCK}.exec.{wo}; keep it in \
                     one of them."
                ),
            )
            .with_attribute(prefix().then_attr("exec").then_attr(wo).then_key(key)),
        );
    }
    diags
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
    if config.get_attr(BLOCK).is_null() {
        return Inventory::Provider;
    }
    let unknown = unknown(config);
    if !unknown.is_empty() {
        return Inventory::Unknown(unknown);
    }
    // A block that does not read is still a block: never the provider's cluster (`client` reports it).
    let block = known_block(config).ok().flatten().unwrap_or_default();
    Inventory::Hub(Box::new(block.settings()))
}

/// A connection problem of the block as a diagnostic, with the attribute path (under `inventory.`) it concerns:
/// a write-only twin's path when the block sets it rather than the stored attribute.
pub fn connect_error(e: &ConfigError, block: &ConnectionConfig) -> Diagnostic {
    let d = match e {
        ConfigError::Client(_) => Diagnostic::error(
            "Cannot create the Kubernetes client for the inventory",
            e.to_string(),
        ),
        _ => Diagnostic::error("Invalid inventory configuration", e.to_string()),
    };
    let path = connection::error_path(e, &prefix()).map(|p| {
        TWINS
            .iter()
            .find(|(stored, _)| p == prefix().then_attr(*stored) && block.twin_set(stored))
            .map_or(p, |(_, wo)| prefix().then_attr(*wo))
    });
    d.with_attribute(path.unwrap_or_else(prefix))
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
        Inventory::Provider | Inventory::Hub(_) => match known_block(config) {
            Ok(block) => client_of(state, block.as_ref(), caps),
            Err(d) => Err(NotReady::Fail(d)),
        },
    }
}

/// The client that reads the inventory of a configuration whose block (known) is `block`: the provider's without
/// one, else one for the block's cluster (cached per settings by [`ProviderState::client_for`]).
pub fn client_of(
    state: &ProviderState,
    block: Option<&ConnectionConfig>,
    caps: ClientCapabilities,
) -> Result<kube::Client, NotReady> {
    let Some(block) = block else {
        return state.client(caps);
    };
    if let Some(conflict) = check_block(Some(block)).into_vec().into_iter().next() {
        return Err(NotReady::Fail(conflict));
    }
    state
        .client_for(&block.settings())
        .map_err(|e| NotReady::Fail(connect_error(&e, block)))
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
                .block_named("exec")
                .and_then(|e| e.block.attribute_named("env"))
                .is_some_and(|a| a.sensitive),
            "exec.env carries secrets (a vault token): hidden in plan output"
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

    #[test]
    fn the_resource_block_has_write_only_twins_and_the_data_source_block_none() {
        let b = resource_block();
        let names: Vec<&str> = b.block.attributes.iter().map(|a| a.name.as_str()).collect();
        for (stored, wo) in TWINS {
            let at = names.iter().position(|n| *n == stored).unwrap();
            assert_eq!(names.get(at + 1), Some(&wo), "{names:?}");
            let a = b.block.attribute_named(wo).unwrap();
            assert!(
                a.write_only && a.sensitive && a.optional && !a.computed,
                "{wo}"
            );
        }
        let exec = b.block.block_named("exec").unwrap();
        assert!(
            exec.block
                .attribute_named("env_wo")
                .is_some_and(|a| a.write_only && a.sensitive)
        );
        assert!(b.block.write_only_problems(true, "resource").is_empty());
        assert!(
            !block().block.has_write_only(),
            "data sources cannot declare write-only attributes"
        );
        assert!(b.block.description.contains("`token_wo`"));
        assert!(!b.block.description.contains(STORED_NOTE));
        assert!(block().block.description.ends_with(STORED_NOTE));
    }

    #[test]
    fn write_only_twins_connect_and_conflict_with_their_stored_twins() {
        let hub = with_block(Value::object([
            ("host", Value::string("https://hub.example:6443")),
            ("token_wo", Value::string("from-ephemeral")),
            ("client_key_wo", Value::string("key")),
            (
                "exec",
                Value::object([
                    (
                        "api_version",
                        Value::string("client.authentication.k8s.io/v1"),
                    ),
                    ("command", Value::string("get-token")),
                    ("env", Value::string_map([("REGION", "eu")])),
                    ("env_wo", Value::string_map([("SECRET", "s")])),
                ]),
            ),
        ]));
        assert!(check(&hub).is_empty());
        match inventory(&hub) {
            Inventory::Hub(s) => {
                assert_eq!(s.token.as_deref(), Some("from-ephemeral"));
                assert_eq!(s.client_key.as_deref(), Some("key"));
                let env = s.exec.expect("exec").env;
                assert_eq!(env.len(), 2);
                assert_eq!(env["SECRET"], "s");
            }
            other => panic!("{other:?}"),
        }
        // Both twins set: an error at the write-only one's path, for each pair.
        let both = with_block(Value::object([
            ("token", Value::string("a")),
            ("token_wo", Value::string("b")),
            ("client_key", Value::string("a")),
            ("client_key_wo", Value::string("b")),
            (
                "exec",
                Value::object([
                    ("env", Value::string_map([("K", "1"), ("L", "1")])),
                    ("env_wo", Value::string_map([("K", "2")])),
                ]),
            ),
        ]));
        let paths: Vec<String> = check(&both)
            .iter()
            .map(|d| d.attribute.as_ref().unwrap().to_string())
            .collect();
        assert_eq!(
            paths,
            [
                "inventory.token_wo",
                "inventory.client_key_wo",
                r#"inventory.exec.env_wo["K"]"#
            ]
        );
        assert!(
            check(&both)
                .iter()
                .all(|d| !d.detail.contains("\"2\"") && !d.detail.contains("\"b\"")),
            "no value is quoted"
        );
        // A value not known yet is checked later; the connection then fails at the write-only path.
        let unknown = with_block(Value::object([
            ("token", Value::unknown()),
            ("token_wo", Value::string("b")),
        ]));
        assert!(check(&unknown).is_empty());
        assert_eq!(
            inventory(&unknown),
            Inventory::Unknown(vec![AttributePath::attr("inventory").then_attr("token")])
        );
        let state = ProviderState::new();
        let both_hub = with_block(Value::object([
            ("host", Value::string("https://hub.example:6443")),
            ("token", Value::string("a")),
            ("token_wo", Value::string("b")),
        ]));
        let d = failure(client(&state, &both_hub, ClientCapabilities::default()));
        assert_eq!(
            d.attribute.map(|p| p.to_string()).as_deref(),
            Some("inventory.token_wo")
        );
        assert_eq!(state.inventory_clients(), 0);
    }

    #[test]
    fn connection_errors_name_the_write_only_twin_that_was_set() {
        let err = ConfigError::InvalidToken {
            reason: "has a newline".into(),
        };
        let block = |v| known_block(&with_block(v)).unwrap().unwrap();
        let wo = block(Value::object([("token_wo", Value::string("x"))]));
        let stored = block(Value::object([("token", Value::string("x"))]));
        let path = |c: &ConnectionConfig| connect_error(&err, c).attribute.map(|p| p.to_string());
        assert_eq!(path(&wo).as_deref(), Some("inventory.token_wo"));
        assert_eq!(path(&stored).as_deref(), Some("inventory.token"));
    }
}
