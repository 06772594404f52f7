//! Ephemeral resources (Terraform >= 1.10, OpenTofu >= 1.11): values that exist only during one run and never
//! reach state or plan files. One: `sveltos_cluster_credentials`, a member cluster's credentials resolved from
//! its ClusterProfile exactly as the bridge resolves them.

pub mod cluster_credentials;

use std::sync::Arc;

use crate::{provider::state::ProviderState, tfplugin::EphemeralResource};

/// Every ephemeral resource of the provider.
pub fn all(state: &Arc<ProviderState>) -> Vec<Arc<dyn EphemeralResource>> {
    vec![Arc::new(cluster_credentials::ClusterCredentials::new(
        state.clone(),
    ))]
}
