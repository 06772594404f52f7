//! The read-ahead's policy: what a refresh reads for the plan that follows it, when the inventory is read ahead
//! and which plan may use what was read (the reading itself is `runtime::read_ahead`, started by
//! `runtime::refresh` with the settings [`ahead_of`] gives).
//!
//! Terraform hands a bridge's state over (`UpgradeResourceState`), refreshes it (`ReadResource`) and then plans
//! (`PlanResourceChange`), all in the same provider process, and before each of the last two it spends seconds, at
//! thousands of clusters, processing the state while the provider waits. So:
//!
//! * **The bridge's SveltosClusters** are listed from the moment the state is handed over ([`list_ahead`]), in the
//!   namespaces the state selects, each page reduced as it is decoded to what is observed of it; the refresh sorts
//!   them with the ledger (which Terraform hands over only with the refresh) and lists the Secrets. A refresh whose
//!   ledger names a namespace the state does not select (or after an import, which takes over labelled objects
//!   wherever they are) cancels that listing and lists for itself.
//! * **What the bridge owns**, as the refresh read it, is kept for the plan ([`Refreshed`]), which then does not
//!   list the same objects again. Only a plan whose prior private data is exactly what the refresh returned uses
//!   it (that data's ledger decides what is owned).
//! * **The inventory** (ClusterProfiles, credential sources) is read in the background from the moment the
//!   refresh has read what the bridge owns ([`ahead_of`]). What is read depends only on the namespaces, the credential label, the
//!   consumer and `secret_namespaces` ([`reads_sha256`]), taken from the refreshed state (the configuration last applied); a plan whose
//!   configuration differs in any of them, or reads through an `inventory` block, cancels it and reads for itself.
//!   The kubeconfigs of the credential Secrets read are then checked, as the plan would check them, under the
//!   kubeconfig policy last applied (`CheckedKubeconfigs`): the plan does not parse again a kubeconfig with the
//!   same bytes when its own policy is the same, and inspects every other one itself.
//!
//! The inventory is read ahead only through the provider's own connection, never through an `inventory` block
//! (its stored credentials or `exec` command may have changed since they were applied), and only with settings
//! an apply of the operator's configuration recorded in the private state ([`reads_sha256`]): after an import,
//! the configuration in the state comes from the cluster, and nothing is read ahead until the next apply.
//!
//! Each is used at most once, by the next refresh or plan of that bridge in this process; a plan that stops early
//! drops them (cancelling the reads). This relies on Terraform's order of calls (docs/design/adr/0003): the
//! refresh and the first plan share a process, and the re-plan before apply runs in another one, without a
//! refresh, so it never sees what a refresh read. A plan (`-refresh=false`, or the re-plan) cancels a listing no
//! refresh took; a destroy plan and every apply cancel what is pending: apply always reads afresh, since what it
//! writes is decided on what it reads. A failed background read is read again by the one that needs it: it is
//! only ever a head start.

use super::model::BridgeConfig;
use crate::{
    domain::{BridgeSpec, observed::Observed, ownership::Ledger},
    provider::state::ProviderState,
    runtime::{
        inventory::reads_sha256,
        owned::owned_scope,
        read_ahead::{OwnedAhead, ReadAhead},
    },
    tfplugin::{ClientCapabilities, Value},
};

/// Starts listing the SveltosClusters and Secrets of the bridge whose state Terraform upgraded (`upgraded`), for the refresh
/// that follows ([`OwnedAhead`]), when the provider is configured: where the state selects (the refresh uses
/// the listing only if its ledger names no other namespace), within the budget of a bridge that owns what the
/// state lists. Returns the bridge's name with the listing (to keep for its refresh), or `None`.
pub fn list_ahead(provider: &ProviderState, upgraded: &Value) -> Option<(String, OwnedAhead)> {
    let bridge = upgraded.get_attr("name").as_str()?;
    let client = provider.client(ClientCapabilities::default()).ok()?;
    let selected = BridgeConfig::of_state(upgraded)
        .namespaces
        .unwrap_or_default();
    let scope = owned_scope(&selected, &Ledger::default());
    let clusters = upgraded
        .get_attr("clusters")
        .as_map()
        .map_or(0, |m| m.len());
    // A SveltosCluster and a Secret for each.
    let owned = clusters.saturating_mul(2);
    let listed = OwnedAhead::start(client, bridge, scope, owned);
    Some((bridge.to_string(), listed))
}

/// Whether `config` (a configuration or a state) reads the inventory through the provider's own connection (no
/// `inventory` block): the only connection anything is read ahead through.
pub fn through_provider(config: &Value) -> bool {
    matches!(
        crate::provider::blocks::inventory::inventory(config),
        crate::provider::blocks::inventory::Inventory::Provider
    )
}

/// Whether a read ahead with digest `reads` is what a plan of `spec` configured by `config` would read.
fn serves(reads: &str, spec: &BridgeSpec, config: &Value) -> bool {
    through_provider(config) && reads == reads_sha256(spec)
}

/// The settings a refresh of `state` reads the inventory ahead with: its configuration (the one last applied),
/// when it reads through the provider's own connection and validates; `None`, nothing is read ahead (the plan
/// reads for itself). `runtime::refresh` then reads only when the ledger recorded the same reads.
pub fn ahead_of(state: &Value) -> Option<BridgeSpec> {
    if !through_provider(state) {
        return None;
    }
    BridgeConfig::of_state(state).to_spec().ok()
}

/// The inventory `read` ahead, if it is what a plan of `spec` configured by `config` reads (else it is cancelled).
pub fn for_plan(read: ReadAhead, spec: &BridgeSpec, config: &Value) -> Option<ReadAhead> {
    serves(read.reads(), spec, config).then_some(read)
}

/// What a refresh read of the objects a bridge owns, kept for the first plan after it: it is used once, and only by
/// a plan whose prior private data is exactly what the refresh returned (its ledger decides what is owned).
pub struct Refreshed {
    /// SHA-256 of the private data the refresh returned.
    pub private_sha256: String,
    /// The ledger that private data holds, as it reads back (`Ledger::into_stored`), when the refresh wrote it:
    /// the plan takes it instead of decoding the private data again (megabytes at ten thousand clusters).
    pub ledger: Option<Ledger>,
    /// What it found the bridge owns.
    pub observed: Observed,
}

impl std::fmt::Debug for Refreshed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Refreshed")
            .field("private_sha256", &self.private_sha256)
            .field("ledger", &self.ledger.as_ref().map(Ledger::len))
            .field("owned", &self.observed.owned.len())
            .finish()
    }
}

impl Refreshed {
    /// This reading, for a plan whose prior private data is `private`: `None` unless it is what the refresh
    /// returned.
    pub fn for_plan(self, private: &[u8]) -> Option<Self> {
        (self.private_sha256 == crate::domain::sha256_hex(private)).then_some(self)
    }
}

/// What is pending for one bridge in this process.
#[derive(Debug, Default)]
pub struct Pending {
    /// What the last refresh found the bridge owns.
    pub refreshed: Option<Refreshed>,
    /// The inventory, read ahead since that refresh.
    pub inventory: Option<ReadAhead>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::sha256_hex;

    #[test]
    fn the_refresh_reading_serves_only_the_private_data_it_returned() {
        let ledger = Ledger::default().with_reads(Some("r".into()));
        let refreshed = || Refreshed {
            private_sha256: sha256_hex(b"ledger-1"),
            ledger: Some(ledger.clone()),
            observed: Observed::default(),
        };
        // The plan takes the ledger decoded with the reading, and only with it.
        let served = refreshed()
            .for_plan(b"ledger-1")
            .expect("the private data it returned");
        assert_eq!(served.ledger, Some(ledger.clone()));
        assert!(refreshed().for_plan(b"ledger-2").is_none());
        assert!(refreshed().for_plan(b"").is_none());
    }

    #[test]
    fn an_inventory_read_serves_only_the_same_namespaces_credentials_and_connection() {
        let spec = BridgeSpec {
            name: "b".into(),
            selection: crate::domain::Selection {
                namespaces: vec!["a".into()],
                ..Default::default()
            },
            ..Default::default()
        };
        let state = Value::object([("inventory", Value::Null)]);
        let reads = reads_sha256(&spec);
        assert!(serves(&reads, &spec, &state));
        let mut other = spec.clone();
        other.selection.namespaces.push("b".into());
        assert!(!serves(&reads, &other, &state));
        let mut other = spec.clone();
        other.credentials.secret_label = "other".into();
        assert!(!serves(&reads, &other, &state));
        let mut other = spec.clone();
        other.credentials.consumer = Some("team".into());
        assert!(!serves(&reads, &other, &state));
        let hub = Value::object([(
            "inventory",
            Value::List(vec![Value::object([(
                "host",
                Value::string("https://hub"),
            )])]),
        )]);
        assert!(!serves(&reads, &spec, &hub));
        // Settings that do not change what is read do not matter.
        let mut other = spec.clone();
        other.selection.names.push("x".into());
        other.strict = true;
        other.credentials.kubeconfig_keys = vec!["other".into()];
        assert!(serves(&reads, &other, &state));
    }
}
