//! Resources: `sveltos_cluster_inventory_bridge`.

pub mod cluster_inventory_bridge;

use std::sync::Arc;

use crate::{provider::state::ProviderState, tfplugin::Resource};

/// Every resource of the provider.
pub fn all(state: &Arc<ProviderState>) -> Vec<Arc<dyn Resource>> {
    vec![Arc::new(
        cluster_inventory_bridge::ClusterInventoryBridge::new(state.clone()),
    )]
}
