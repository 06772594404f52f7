//! What is observed of one cluster: its Secret and SveltosCluster as found, together its bridged objects.

use std::collections::{BTreeMap, BTreeSet};

use crate::bridge::desired::ClusterEntry;

/// A bridged Secret as found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ObservedSecret {
    /// `namespace/name`.
    pub id: String,
    /// The API server's UID.
    pub uid: Option<String>,
    /// SHA-256 of its `kubeconfig` value (`None` if the key is missing).
    pub kubeconfig_sha256: Option<String>,
    /// With the token-renewal annotation: the hash annotation of the source credential the bridge last wrote
    /// (Sveltos rewrites the data on renewal). Trusted only for clusters whose renewal the configuration asks for
    /// ([`ObservedSecret::sha`]): anyone who can annotate the Secret could otherwise hide a swapped kubeconfig.
    pub renewed_sha256: Option<String>,
    /// Recorded expiry.
    pub expires_at: Option<String>,
    /// Recorded credential source.
    pub credential_source: Option<String>,
    /// Recorded exec-provider settings hash.
    pub credential_config_sha256: Option<String>,
}

impl ObservedSecret {
    /// The hash to compare with what the bridge would write: the renewal annotation's when the configuration asks
    /// Sveltos to renew this cluster's credentials (`renewal`) and the Secret carries it, the data's otherwise.
    pub fn sha(&self, renewal: bool) -> Option<&String> {
        match (&self.renewed_sha256, renewal) {
            (Some(annotated), true) => Some(annotated),
            _ => self.kubeconfig_sha256.as_ref(),
        }
    }
}

/// A bridged SveltosCluster as found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ObservedCluster {
    /// `namespace/name`.
    pub id: String,
    /// The API server's UID.
    pub uid: Option<String>,
    /// Labels our field manager owns (without the ownership label).
    pub labels: BTreeMap<String, String>,
    /// Hash of the managed fields as they are.
    pub config_sha256: String,
    /// The bridge-config record it carries.
    pub record: Option<String>,
    /// Top-level `spec` fields our field manager owns.
    pub owned_spec: BTreeSet<String>,
    /// Fields of `spec.tokenRequestRenewalOption` our field manager owns.
    pub owned_renewal: BTreeSet<String>,
    /// The token renewal settings it was written with (the annotation), if Sveltos renews its credentials.
    pub renewal: Option<String>,
    /// It was being deleted when read (`metadata.deletionTimestamp` set: a finalizer holds it).
    pub terminating: bool,
}

/// Both objects of one bridged profile, as found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BridgedObjects {
    /// The SveltosCluster, if it exists.
    pub sveltos_cluster: Option<ObservedCluster>,
    /// The Secret, if it exists.
    pub secret: Option<ObservedSecret>,
}

impl BridgedObjects {
    /// The state entry describing what exists; `renewal`: the configuration asks Sveltos to renew this cluster's
    /// credentials (see [`ObservedSecret::sha`]).
    pub fn entry(&self, renewal: bool) -> ClusterEntry {
        let sc = self.sveltos_cluster.as_ref();
        let secret = self.secret.as_ref();
        ClusterEntry {
            sveltos_cluster: sc.map(|s| s.id.clone()),
            secret: secret.map(|s| s.id.clone()),
            credential_source: secret
                .and_then(|s| s.credential_source.clone())
                .unwrap_or_default(),
            kubeconfig_sha256: secret.and_then(|s| s.sha(renewal).cloned()),
            credential_expires_at: secret.and_then(|s| s.expires_at.clone()),
            labels: sc.map(|s| s.labels.clone()).unwrap_or_default(),
            config_sha256: sc.map(|s| s.config_sha256.clone()).unwrap_or_default(),
            credential_pending: false,
        }
    }
}
