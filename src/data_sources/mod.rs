//! Data sources: `sveltos_clusterprofile` and `sveltos_clusterprofiles`.

use std::sync::Arc;

use crate::{provider::ProviderState, tfplugin::DataSource};

/// Every data source of the provider.
pub fn all(_state: &Arc<ProviderState>) -> Vec<Arc<dyn DataSource>> {
    Vec::new()
}
