//! What a kubeconfig or the in-cluster service account gives, before the explicit settings are applied.

use kube::config::{AuthInfo, Cluster};

/// The selected cluster and user, before the explicit attributes are applied.
#[derive(Default)]
pub(crate) struct Selected {
    pub(super) cluster: Cluster,
    pub(super) user: AuthInfo,
    pub(super) namespace: Option<String>,
    /// Human description of where `cluster`/`user` came from, for errors.
    pub(super) origin: String,
}
