//! What exists: the objects a bridge owns, read back into state entries, and the objects it must not touch
//! ([`Observed`]).
//!
//! | File | What it is |
//! |---|---|
//! | `objects.rs` | One cluster's objects as found: [`ObservedSecret`], [`ObservedCluster`], together [`BridgedObjects`] |
//! | `observe.rs` | One owned object read back ([`observe_cluster`], [`observe_secret`]) |
//! | `managed_fields.rs` | What our field manager owns, and [`decode_managed_fields`] |
//! | `meta.rs` | What is read of any object's metadata: `namespace/name`, owner label, run mark, profile key |

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::{api::core::v1::Secret, apimachinery::pkg::apis::meta::v1::ObjectMeta};

use super::{
    SECRET_SUFFIX,
    desired::ClusterEntry,
    ownership::{Kind, Ledger, WrittenCredential},
};
use crate::api::SveltosCluster;

mod managed_fields;
mod meta;
mod objects;
mod observe;
#[cfg(test)]
pub(crate) mod tests;

pub use managed_fields::{decode_managed_fields, reads_managed_fields};
use meta::{id, mark_of, owner, profile_key};
pub use objects::{BridgedObjects, EntryChanges, ObservedCluster, ObservedSecret};
pub use observe::{
    labels_not_written, meta_text_bytes, observe_cluster, observe_secret, observe_secret_meta,
    secret_meta_for_sorting,
};

/// Objects listed with a bridge's label, as [`Observed::sort_labelled`] sorted the bridge's own: `(namespace, name)`.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Sorted {
    /// Whose bodies are to be read.
    pub wanted: Vec<ObjectKey>,
    /// Known without their bodies (Secrets nobody wrote since the bridge wrote them), already added.
    pub known: Vec<ObjectKey>,
}

/// `(namespace, name)` of an object.
pub type ObjectKey = (String, String);

/// The key of `meta`.
pub fn key_of(meta: &ObjectMeta) -> ObjectKey {
    (
        meta.namespace.clone().unwrap_or_default(),
        meta.name.clone().unwrap_or_default(),
    )
}

/// SveltosClusters carrying a bridge's ownership label, each reduced to what is observed of it as it is listed
/// ([`observe_cluster`]), before the bridge's ledger tells its own from impostors
/// ([`Observed::add_listed_clusters`]): what a LIST can find without the ledger, which Terraform hands over later
/// than the state.
#[derive(Debug, Default)]
pub struct ListedClusters(Vec<ListedCluster>);

#[derive(Debug)]
struct ListedCluster {
    observed: ObservedCluster,
    /// Its run mark, if any.
    mark: Option<String>,
    /// The bridge-configuration record it carries, if any.
    record: Option<String>,
}

impl ListedClusters {
    /// Adds the SveltosClusters of `page` labelled for `bridge` (those labelled for another bridge are skipped).
    pub fn add(&mut self, bridge: &str, page: &[SveltosCluster]) {
        for sc in page.iter().filter(|sc| owner(&sc.metadata) == Some(bridge)) {
            // Its id (`namespace/name`) is also its profile key: the profile key of a SveltosCluster is its own
            // namespace and name (see `meta::profile_key`).
            let observed = observe_cluster(sc);
            self.0.push(ListedCluster {
                observed,
                mark: mark_of(&sc.metadata).map(String::from),
                record: sc
                    .metadata
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get(crate::domain::BRIDGE_CONFIG_ANNOTATION))
                    .cloned(),
            });
        }
    }
}

/// Everything relevant that exists, for one bridge.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    /// Objects owned by this bridge, by profile key `namespace/name` (boxed: a B-tree node holds eleven values,
    /// and a cluster's objects as found are a few hundred bytes).
    pub owned: BTreeMap<String, Box<BridgedObjects>>,
    /// SveltosClusters (`namespace/name`) that exist and are not owned by this bridge, with their owner bridge.
    pub foreign_clusters: BTreeMap<String, Option<String>>,
    /// Secrets (`namespace/name`) that exist and are not owned by this bridge, with their owner bridge.
    pub foreign_secrets: BTreeMap<String, Option<String>>,
    /// Bridge-configuration records found on owned SveltosClusters (sorted by cluster key).
    pub records: Vec<String>,
    /// Objects (`"<Kind> namespace/name"`) that carry this bridge's ownership label but whose UID it never
    /// recorded: someone else made them. Never updated or deleted.
    pub impostors: BTreeSet<String>,
    /// Clusters (profile key) one of whose owned objects does not decode, with the object and why: each is kept as
    /// it is, never written or deregistered for it ([`Observed::add_unreadable`]).
    pub unreadable: BTreeMap<String, String>,
}

impl Observed {
    /// Builds the view for bridge `bridge` from the SveltosClusters and Secrets carrying its ownership label
    /// (Secrets with data): those the `ledger` says it owns are owned, the others are impostors; objects labelled
    /// for another bridge are skipped. Objects at names the bridge would create but does not own are added with
    /// [`Observed::add_foreign`].
    pub fn build(
        bridge: &str,
        ledger: &Ledger,
        clusters: &[SveltosCluster],
        owned_secrets: &[Secret],
    ) -> Self {
        let mut w = Observed::default();
        w.add_owned_clusters(bridge, ledger, clusters);
        w.add_owned_secrets(bridge, ledger, owned_secrets);
        w
    }

    /// Sorts objects listed with this bridge's label (metadata only): those that are the bridge's
    /// ([`Ledger::owns_marked`]) are returned (`wanted`), their bodies to be read and added with [`Observed::add_owned_clusters`]
    /// or [`Observed::add_owned_secrets`]; the others are impostors, known from their metadata alone (their bodies,
    /// whatever their number and size, are never read). A Secret the ledger recorded (same UID) that has not been
    /// written since the bridge wrote it (its `resourceVersion` is the one the write answered with,
    /// [`WrittenCredential::resource_version`]) holds the kubeconfig recorded: it is added from its metadata and
    /// that record (`known`), its body not read.
    pub fn sort_labelled(
        &mut self,
        bridge: &str,
        ledger: &Ledger,
        kind: Kind,
        listed: &[ObjectMeta],
    ) -> Sorted {
        let mut sorted = Sorted::default();
        for meta in listed.iter().filter(|m| owner(m) == Some(bridge)) {
            let object = id(meta);
            if ledger.owns_marked(kind, &object, meta.uid.as_deref(), mark_of(meta)) {
                if kind == Kind::Secret
                    && let Some(written) = unwritten_since(ledger, &object, meta)
                {
                    let sha = Some(written.kubeconfig_sha256.clone());
                    let mut observed = observe_secret_meta(meta, sha);
                    observed.written = Some(written.clone());
                    self.owned
                        .entry(profile_key(meta, SECRET_SUFFIX))
                        .or_default()
                        .secret = Some(observed);
                    sorted.known.push(key_of(meta));
                    continue;
                }
                sorted.wanted.push(key_of(meta));
            } else {
                self.impostors.insert(format!("{} {object}", kind.prefix()));
            }
        }
        sorted
    }

    /// [`Observed::build`] one batch (a LIST page) of labelled SveltosClusters at a time.
    pub fn add_owned_clusters(
        &mut self,
        bridge: &str,
        ledger: &Ledger,
        clusters: &[SveltosCluster],
    ) {
        let mut listed = ListedClusters::default();
        listed.add(bridge, clusters);
        self.add_listed_clusters(ledger, listed);
    }

    /// Adds the SveltosClusters `listed` with the bridge's label: those the `ledger` says it owns are owned, the
    /// others are impostors.
    pub fn add_listed_clusters(&mut self, ledger: &Ledger, listed: ListedClusters) {
        for c in listed.0 {
            let ListedCluster {
                observed,
                mark,
                record,
            } = c;
            if !ledger.owns_marked(
                Kind::SveltosCluster,
                &observed.id,
                observed.uid.as_deref(),
                mark.as_deref(),
            ) {
                self.impostors
                    .insert(format!("SveltosCluster {}", observed.id));
                continue;
            }
            let key = observed.id.clone();
            self.owned.entry(key).or_default().sveltos_cluster = Some(observed);
            self.records.extend(record);
        }
    }

    /// [`Observed::build`] one batch (a LIST page) of labelled Secrets at a time.
    pub fn add_owned_secrets(&mut self, bridge: &str, ledger: &Ledger, owned_secrets: &[Secret]) {
        let w = self;
        for s in owned_secrets
            .iter()
            .filter(|s| owner(&s.metadata) == Some(bridge))
        {
            let s_id = id(&s.metadata);
            if !ledger.owns_marked(
                Kind::Secret,
                &s_id,
                s.metadata.uid.as_deref(),
                mark_of(&s.metadata),
            ) {
                w.impostors.insert(format!("Secret {s_id}"));
                continue;
            }
            let mut observed = observe_secret(s);
            observed.written = ledger.written(&s_id).cloned().map(|mut w| {
                // Read whole and holding what was recorded: this version stands for it from now on (a record from
                // an earlier build, or of a write whose answer was lost, gets one).
                if observed.kubeconfig_sha256.as_ref() == Some(&w.kubeconfig_sha256) {
                    w.resource_version = s.metadata.resource_version.clone();
                }
                w
            });
            w.owned
                .entry(profile_key(&s.metadata, SECRET_SUFFIX))
                .or_default()
                .secret = Some(observed);
        }
    }

    /// Records an object carrying this bridge's label that does not decode (`meta`: what could be read of its
    /// metadata; `why`: the decoder's message, escaped). The bridge's own (by the ledger) stays owned, known by its
    /// name and UID only, and its cluster is kept as it is (see [`Observed::unreadable`]); anyone else's is an
    /// impostor.
    pub fn add_unreadable(&mut self, ledger: &Ledger, kind: Kind, meta: &ObjectMeta, why: &str) {
        let object = id(meta);
        if !ledger.owns_marked(kind, &object, meta.uid.as_deref(), mark_of(meta)) {
            self.impostors.insert(format!("{} {object}", kind.prefix()));
            return;
        }
        let strip = match kind {
            Kind::SveltosCluster => "",
            Kind::Secret => SECRET_SUFFIX,
        };
        let key = profile_key(meta, strip);
        let objects = self.owned.entry(key.clone()).or_default();
        let uid = meta.uid.clone();
        match kind {
            Kind::SveltosCluster => {
                objects.sveltos_cluster = Some(ObservedCluster {
                    id: object.clone(),
                    uid,
                    ..Default::default()
                })
            }
            Kind::Secret => {
                objects.secret = Some(ObservedSecret {
                    id: object.clone(),
                    uid,
                    ..Default::default()
                })
            }
        }
        self.unreadable.insert(
            key,
            format!(
                "{} {} cannot be read: {why}",
                kind.prefix(),
                crate::domain::text::shown(&object, 520)
            ),
        );
    }

    /// Joins what two partial views found: `other`'s Secrets (and impostors) into this one's SveltosClusters.
    pub fn join(&mut self, other: Observed) {
        for (key, o) in other.owned {
            let mine = self.owned.entry(key).or_default();
            if o.sveltos_cluster.is_some() {
                mine.sveltos_cluster = o.sveltos_cluster;
            }
            if o.secret.is_some() {
                mine.secret = o.secret;
            }
        }
        self.records.extend(other.records);
        self.impostors.extend(other.impostors);
        self.unreadable.extend(other.unreadable);
        self.foreign_clusters.extend(other.foreign_clusters);
        self.foreign_secrets.extend(other.foreign_secrets);
    }

    /// Records objects found at names the bridge would create and does not own: owned by another bridge
    /// (`Some(name)`), carrying this bridge's label without being its own (`Some(this bridge)`: an impostor), or
    /// made by someone the provider does not know (`None`). Objects whose UID the ledger recorded are the
    /// bridge's own, whatever their labels say.
    pub fn add_foreign(
        &mut self,
        ledger: &Ledger,
        clusters: &[ObjectMeta],
        secrets: &[ObjectMeta],
    ) {
        for (kind, metas, into) in [
            (Kind::SveltosCluster, clusters, &mut self.foreign_clusters),
            (Kind::Secret, secrets, &mut self.foreign_secrets),
        ] {
            for m in metas {
                if ledger.recorded(kind, &id(m), m.uid.as_deref()) {
                    continue;
                }
                into.insert(id(m), owner(m).map(String::from));
            }
        }
    }

    /// The ledger of what is observed to be owned, following `basis` (the ledger it was read with): every owned
    /// object's UID (a legacy or imported ledger becomes a UID ledger here), and a tombstone at each name `basis`
    /// recorded that is not owned any more ([`Ledger::successor`]).
    pub fn ledger(&self, basis: &Ledger) -> Ledger {
        let mut owned = Vec::new();
        for o in self.owned.values() {
            if let Some(sc) = &o.sveltos_cluster
                && let Some(uid) = &sc.uid
            {
                owned.push((Kind::SveltosCluster, sc.id.clone(), uid.clone()));
            }
            if let Some(s) = &o.secret
                && let Some(uid) = &s.uid
            {
                owned.push((Kind::Secret, s.id.clone(), uid.clone()));
            }
        }
        let mut next = basis.successor(owned);
        // What was recorded of each Secret still owned, with the version it was last found holding it at.
        for s in self.owned.values().filter_map(|o| o.secret.as_ref()) {
            if let Some(w) = &s.written
                && next.written(&s.id).is_some_and(|recorded| recorded != w)
                && next.recorded(Kind::Secret, &s.id, s.uid.as_deref())
            {
                next.record_written(&s.id, w.clone());
            }
        }
        next
    }

    /// Marks, on every owned SveltosCluster, the labels others added under `copy.exclude` as removable when
    /// `copy.remove_foreign` is set (none otherwise). Idempotent: the marks follow `copy` alone.
    pub fn mark_removable_labels(&mut self, copy: &super::LabelCopy) {
        for sc in self
            .owned
            .values_mut()
            .filter_map(|o| o.sveltos_cluster.as_mut())
        {
            sc.removable_labels = if copy.remove_foreign {
                excluded(copy, &sc.foreign_labels)
            } else {
                BTreeSet::new()
            };
        }
    }

    /// The owned SveltosClusters (by profile key) on which others added labels under `copy.exclude`, with their
    /// keys.
    pub fn foreign_excluded_labels(
        &self,
        copy: &super::LabelCopy,
    ) -> BTreeMap<&str, BTreeSet<String>> {
        self.owned
            .iter()
            .filter_map(|(k, o)| {
                let sc = o.sveltos_cluster.as_ref()?;
                let keys = excluded(copy, &sc.foreign_labels);
                (!keys.is_empty()).then_some((k.as_str(), keys))
            })
            .collect()
    }

    /// State entries for everything this bridge owns; `renewal` tells for a cluster key whether the
    /// configuration asks Sveltos to renew its credentials.
    pub fn entries(&self, renewal: impl Fn(&str) -> bool) -> BTreeMap<String, ClusterEntry> {
        self.owned
            .iter()
            .map(|(k, o)| (k.clone(), o.entry(renewal(k))))
            .collect()
    }
}

/// The keys of `labels` under `copy.exclude`.
fn excluded(copy: &super::LabelCopy, labels: &BTreeSet<String>) -> BTreeSet<String> {
    labels
        .iter()
        .filter(|k| copy.excludes(k))
        .cloned()
        .collect()
}

/// What the ledger records of Secret `id` when the Secret listed with `meta` is the one the bridge wrote (same UID)
/// and nobody wrote it since: its `resourceVersion` is the one the bridge's write was answered with.
fn unwritten_since<'l>(
    ledger: &'l Ledger,
    id: &str,
    meta: &ObjectMeta,
) -> Option<&'l WrittenCredential> {
    let written = ledger.written(id)?;
    let version = meta.resource_version.as_deref()?;
    let same = ledger.recorded(Kind::Secret, id, meta.uid.as_deref())
        && written.resource_version.as_deref() == Some(version);
    same.then_some(written)
}
