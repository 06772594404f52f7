//! Data sources: `sveltos_clusterprofile` and `sveltos_clusterprofiles`.

pub mod clusterprofile;
pub mod clusterprofiles;
mod lookup;
pub mod profile_value;

use std::sync::Arc;

use crate::{provider::ProviderState, tfplugin::DataSource};

/// Every data source of the provider.
pub fn all(state: &Arc<ProviderState>) -> Vec<Arc<dyn DataSource>> {
    vec![
        Arc::new(clusterprofile::ClusterProfileDataSource::new(state.clone())),
        Arc::new(clusterprofiles::ClusterProfilesDataSource::new(
            state.clone(),
        )),
    ]
}
