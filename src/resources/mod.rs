//! Resources: `sveltos_cluster_inventory_bridge`.

use std::sync::Arc;

use crate::{provider::ProviderState, tfplugin::Resource};

/// Every resource of the provider.
pub fn all(_state: &Arc<ProviderState>) -> Vec<Arc<dyn Resource>> {
    Vec::new()
}
