//! What is observed of one cluster: its Secret and SveltosCluster as found, together its bridged objects.

use std::collections::{BTreeMap, BTreeSet};

use crate::domain::{
    desired::ClusterEntry, managed_view::ManagedView, ownership::WrittenCredential,
};

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
    /// (Sveltos rewrites the data on renewal). Used only for clusters whose renewal the configuration asks for and
    /// whose ledger records nothing ([`ObservedSecret::sha`]): anyone who can annotate the Secret could otherwise
    /// hide a swapped kubeconfig. Only its presence counts where the ledger has a record.
    pub renewed_sha256: Option<String>,
    /// The expiry annotation (anyone who can patch the Secret writes it: see [`ObservedSecret::expiry`]).
    pub expires_at: Option<String>,
    /// The credential source annotation.
    pub credential_source: Option<String>,
    /// What the bridge's ledger records it wrote here (see [`ObservedSecret::verified`]).
    pub written: Option<WrittenCredential>,
}

impl ObservedSecret {
    /// The hash to compare with what the bridge would write: the data's; but when the configuration asks Sveltos to
    /// renew this cluster's credentials (`renewal`) and the Secret carries the renewal annotation (Sveltos then
    /// rewrites the data), the hash of what the bridge last wrote: its ledger's record, when that record says the
    /// bridge wrote renewal here ([`WrittenCredential::renewal`]), or for a Secret the ledger has no record of (a
    /// state just imported), the Secret's hash annotation.
    ///
    /// `renewal` is the configured renewal: refresh reads no ClusterProfile, so it cannot judge whether renewal is
    /// withheld for the cluster (its connection needs what a renewal drops). The ledger's record can: the bridge
    /// wrote the annotation only where renewal was judged enabled, and a tenant who copies the annotation onto a
    /// Secret where it was withheld changes the Secret, not the record, so its swapped data is compared.
    pub fn sha(&self, renewal: bool) -> Option<&String> {
        let renewed = renewal && self.written.as_ref().is_none_or(|w| w.renewal);
        match (&self.renewed_sha256, renewed) {
            (Some(annotated), true) => Some(
                self.written
                    .as_ref()
                    .map_or(annotated, |w| &w.kubeconfig_sha256),
            ),
            _ => self.kubeconfig_sha256.as_ref(),
        }
    }

    /// What the ledger records the bridge wrote here, when the Secret still holds it: its data has the recorded
    /// hash (or, for a cluster Sveltos renews, [`ObservedSecret::sha`] stands for the data). `None` when the data
    /// is not what the bridge wrote, or when nothing is recorded.
    pub fn verified(&self, renewal: bool) -> Option<&WrittenCredential> {
        let w = self.written.as_ref()?;
        (self.sha(renewal) == Some(&w.kubeconfig_sha256)).then_some(w)
    }

    /// The credential's expiry: the recorded one while the Secret holds what the bridge wrote
    /// ([`ObservedSecret::verified`]), the annotation's otherwise (what the Secret claims: its kubeconfig then
    /// shows as drift anyway).
    pub fn expiry(&self, renewal: bool) -> Option<&String> {
        match self.verified(renewal) {
            Some(w) => w.expires_at.as_ref(),
            None => self.expires_at.as_ref(),
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
    /// The managed fields as they are, in words.
    pub managed: ManagedView,
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
    /// Keys of the labels our field manager does not own (someone else wrote them), but for the ownership label and
    /// Sveltos' own `projectsveltos.io/k8s-version`.
    pub foreign_labels: BTreeSet<String>,
    /// Those of `foreign_labels` apply removes (`copy_labels.remove_foreign`, set by
    /// [`Observed::mark_removable_labels`](super::Observed::mark_removable_labels)): they count in the entry's
    /// `config_sha256`, so that the plan shows the cluster as changing until they are gone.
    pub removable_labels: BTreeSet<String>,
}

impl ObservedCluster {
    /// The entry's `config_sha256`: the hash of the managed fields, and of the labels apply removes when there
    /// are any.
    pub fn entry_sha256(&self) -> String {
        if self.removable_labels.is_empty() {
            return self.config_sha256.clone();
        }
        let doc = serde_json::json!({
            "config": self.config_sha256,
            "removable_labels": self.removable_labels,
        });
        crate::domain::sha256_hex(doc.to_string().as_bytes())
    }
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
            credential_expires_at: secret.and_then(|s| s.expiry(renewal).cloned()),
            labels: sc.map(|s| s.labels.clone()).unwrap_or_default(),
            config_sha256: sc.map(ObservedCluster::entry_sha256).unwrap_or_default(),
            managed: sc.map(|s| s.managed.clone()).unwrap_or_default(),
            credential_pending: false,
        }
    }

    /// What of `planned` differs from what exists (as [`BridgedObjects::entry`] would record it), without building
    /// that entry: the plan's reader sees these fields change.
    pub fn changes(&self, renewal: bool, planned: &ClusterEntry) -> EntryChanges {
        let sc = self.sveltos_cluster.as_ref();
        let secret = self.secret.as_ref();
        let credential = planned.credential_pending
            || secret.map(|s| &s.id) != planned.secret.as_ref()
            || secret
                .and_then(|s| s.credential_source.as_deref())
                .unwrap_or_default()
                != planned.credential_source
            || secret.and_then(|s| s.sha(renewal)) != planned.kubeconfig_sha256.as_ref()
            || secret.and_then(|s| s.expiry(renewal)) != planned.credential_expires_at.as_ref();
        let empty = ManagedView::default();
        let managed = sc.map_or(&empty, |s| &s.managed);
        let mut fields = managed.changed(&planned.managed);
        if fields.is_empty()
            && sc.map(|s| s.config_sha256.as_str()).unwrap_or_default() != planned.config_sha256
        {
            fields.push("config_sha256");
        }
        if sc.map(|s| &s.labels).unwrap_or(&BTreeMap::new()) != &planned.labels {
            fields.insert(0, "labels");
        }
        EntryChanges {
            sveltos_cluster: sc.map(|s| &s.id) != planned.sveltos_cluster.as_ref()
                || !fields.is_empty(),
            fields,
            credential,
        }
    }
}

/// What a plan changes of one cluster's entry ([`BridgedObjects::changes`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EntryChanges {
    /// The SveltosCluster is created, or its labels or managed fields change.
    pub sveltos_cluster: bool,
    /// Which of those: `labels`, the fields of [`ManagedView`], or `config_sha256` for a field it does not show.
    pub fields: Vec<&'static str>,
    /// The kubeconfig Secret or what the entry records of its credential changes.
    pub credential: bool,
}

impl EntryChanges {
    /// Nothing changes.
    pub fn none(&self) -> bool {
        !self.sveltos_cluster && !self.credential
    }
}
