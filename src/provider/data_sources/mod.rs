//! Data sources: `sveltos_clusterprofile`, `sveltos_clusterprofiles` and `sveltos_clusters`.

pub mod clusterprofile;
pub mod clusterprofiles;
mod lookup;
pub mod ownership;
pub mod profile_value;
pub mod sveltos_clusters;

use std::sync::Arc;

use crate::{provider::state::ProviderState, tfplugin::DataSource};

/// Every data source of the provider.
pub fn all(state: &Arc<ProviderState>) -> Vec<Arc<dyn DataSource>> {
    vec![
        Arc::new(clusterprofile::ClusterProfileDataSource::new(state.clone())),
        Arc::new(clusterprofiles::ClusterProfilesDataSource::new(
            state.clone(),
        )),
        Arc::new(sveltos_clusters::SveltosClustersDataSource::new(
            state.clone(),
        )),
    ]
}
