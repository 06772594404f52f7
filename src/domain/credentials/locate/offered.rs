//! The access providers a profile offers, and their exec extension.

use crate::api::{AccessProvider, ClusterProfile, keys};

/// The access providers of a profile: `accessProviders`, then deprecated `credentialProviders` whose names are
/// not already present.
pub fn access_providers(profile: &ClusterProfile) -> Vec<&AccessProvider> {
    let Some(status) = profile.status.as_ref() else {
        return Vec::new();
    };
    let mut out: Vec<&AccessProvider> = status.access_providers.iter().collect();
    for p in &status.credential_providers {
        if !out.iter().any(|q| q.name == p.name) {
            out.push(p);
        }
    }
    out
}

/// The exec extension of an access provider (`client.authentication.k8s.io/exec`), if any.
pub fn exec_extension(provider: &AccessProvider) -> Option<&serde_json::Value> {
    provider
        .cluster
        .as_ref()?
        .extensions
        .iter()
        .find(|e| e.name == keys::EXEC_EXTENSION)
        .map(|e| &e.extension)
}
