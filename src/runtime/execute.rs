//! Apply's writes and deletes: what the pure core decided on ([`actions`]), carried out 16 clusters at a time,
//! for each cluster the Secret first (minting an exec credential when the plan says so), then the SveltosCluster,
//! each object written journaled in the claim in batches ([`super::journal`]); removals in Sveltos' order
//! ([`super::deregister`]).

use std::collections::BTreeMap;

use futures::{StreamExt, stream};
use k8s_openapi::api::core::v1::Secret;
use kube::Client;

use super::{
    CONCURRENCY, Namespaced,
    credentials::{self, MintError},
    deregister::{Removal, RemoveError, Removed, deregister},
    journal::{Journal, journaled},
    snapshot::Snapshot,
};
use crate::{
    api::{ClusterProfile, SveltosCluster},
    domain::{
        BridgeSpec, SECRET_KEY, SECRET_SUFFIX,
        credentials::CredentialSource,
        desired::{ClusterEntry, Material, desired, written_credential},
        exec::ExecInvocation,
        observed::Observed,
        ownership::{Kind, Ledger, MARK_ANNOTATION, RunKey, WrittenCredential},
        plan::{Plan, Write, take_actions},
        sha256_hex,
    },
    k8s::io::{self, IoError},
};

/// Why one cluster's objects were not written. Nothing else was changed for that cluster, but an object whose
/// write failed may exist all the same (the API server can carry out a write whose answer is lost).
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Its credential could not be minted; nothing was written for it.
    #[error(transparent)]
    Mint(#[from] MintError),
    /// A write of its Secret or SveltosCluster failed (the error names the object).
    #[error("cannot bridge ClusterProfile {key}")]
    Io {
        /// The profile key.
        key: String,
        /// The failed write.
        #[source]
        source: IoError,
    },
}

impl WriteError {
    /// The key of the profile whose write failed.
    pub fn key(&self) -> &str {
        match self {
            WriteError::Io { key, .. } => key,
            WriteError::Mint(m) => m.key(),
        }
    }
}

/// Result of executing the writes and deletes.
pub struct Outcome {
    /// Final entries of clusters whose credential was minted during apply.
    pub minted: BTreeMap<String, ClusterEntry>,
    /// Objects written (kind, `namespace/name`, UID): recorded in the ledger.
    pub written: Vec<(Kind, String, String)>,
    /// What was written in each kubeconfig Secret written (`namespace/name`): recorded in the ledger.
    pub credentials: Vec<(String, WrittenCredential)>,
    /// What deregistration deleted, and the removals that failed.
    pub removed: Removed,
    /// The clusters whose write failed. Their objects may exist all the same: the API server can carry out a
    /// write whose answer is lost (a connection reset, a restart), so the names are trusted when reading back.
    pub write_errors: Vec<WriteError>,
}

impl Outcome {
    /// The ledger after this outcome, starting from what was observed to be owned (read with `basis`).
    pub fn ledger(&self, observed: &Observed, basis: &Ledger) -> Ledger {
        let mut l = observed.ledger(basis);
        for (kind, id, uid) in &self.written {
            l.record(*kind, id, uid);
        }
        for (id, credential) in &self.credentials {
            l.record_written(id, credential.clone());
        }
        self.removed.forget_in(&mut l);
        l
    }

    /// The profile keys whose write or removal failed.
    pub fn failed(&self) -> impl Iterator<Item = &str> {
        let removals = self.removed.errors.iter().map(RemoveError::key);
        self.write_errors
            .iter()
            .map(WriteError::key)
            .chain(removals)
    }

    /// The profile keys of the clusters whose SveltosCluster or Secret this apply wrote (registered or changed).
    pub fn touched(&self) -> std::collections::BTreeSet<String> {
        self.written
            .iter()
            .map(|(kind, id, _)| match kind {
                Kind::Secret => id.strip_suffix(SECRET_SUFFIX).unwrap_or(id).to_string(),
                _ => id.clone(),
            })
            .collect()
    }

    /// Whether every write and delete succeeded.
    pub fn is_clean(&self) -> bool {
        self.write_errors.is_empty() && self.removed.errors.is_empty()
    }
}

/// Writes (Secret before SveltosCluster) and deletes (add-ons withdrawn, SveltosCluster, wait until it is gone,
/// then Secret) with bounded concurrency. The objects written are taken out of `plan` (its entries stay).
pub async fn execute(
    client: &Client,
    spec: &BridgeSpec,
    snap: &Snapshot,
    plan: &mut Plan,
    run_key: &RunKey,
) -> Outcome {
    // The objects to write move out of the plan into the writes, each freed once written.
    let (writes, deletes) = take_actions(plan, &snap.observed);
    tracing::info!(bridge = %spec.name, writes = writes.len(), deletes = deletes.len(), "applying bridge changes");
    let journal = Journal::new(client, spec, run_key);
    let writing = stream::iter(writes)
        .map(|w| async {
            let written = write_one(client, spec, snap, w, run_key).await;
            if let Ok(w) = &written {
                journal.note(&w.objects).await;
            }
            written
        })
        .buffer_unordered(CONCURRENCY)
        .collect::<Vec<Result<Written, WriteError>>>();
    let results = journaled(&journal, writing).await;
    tracing::debug!(bridge = %spec.name, batches = journal.batches(), "write journal");
    let removed = deregister(client, &snap.observed, deletes, Removal::of(spec)).await;
    let mut out = Outcome {
        minted: BTreeMap::new(),
        written: Vec::new(),
        credentials: Vec::new(),
        removed,
        write_errors: Vec::new(),
    };
    for r in results {
        match r {
            Ok(w) => {
                out.minted.extend(w.minted);
                out.written.extend(w.objects);
                out.credentials.extend(w.credential);
            }
            Err(e) => out.write_errors.push(e),
        }
    }
    out
}

/// What one write produced.
struct Written {
    minted: Option<(String, ClusterEntry)>,
    objects: Vec<(Kind, String, String)>,
    credential: Option<(String, WrittenCredential)>,
}

/// `namespace/name` of an object.
fn id_of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> String {
    format!(
        "{}/{}",
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default()
    )
}

/// Sets `obj`'s [`MARK_ANNOTATION`] for this run (see `crate::domain::ownership::RunKey`).
fn marked<K: kube::Resource>(mut obj: K, kind: Kind, run_key: &RunKey) -> K {
    let mark = run_key.mark(kind, &id_of(obj.meta()));
    obj.meta_mut()
        .annotations
        .get_or_insert_with(Default::default)
        .insert(MARK_ANNOTATION.to_string(), mark);
    obj
}

/// Applies one object (taking it over first when it is adopted) and returns what the ledger records of it, with
/// the object as the API server answered.
async fn write_object<K: Namespaced + serde::Serialize>(
    client: &Client,
    key: &str,
    obj: &K,
    kind: Kind,
    adopt: bool,
) -> Result<((Kind, String, String), K), WriteError> {
    let failed = |source| WriteError::Io {
        key: key.to_string(),
        source,
    };
    if adopt {
        io::take_ownership(client, obj).await.map_err(failed)?;
    }
    let written = io::server_side_apply(client, obj).await.map_err(failed)?;
    let uid = written.meta().uid.clone().unwrap_or_default();
    Ok(((kind, id_of(written.meta()), uid), written))
}

/// What the ledger records of kubeconfig Secret `sent` once written: [`written_credential`], with the version the
/// API server answered with when its answer holds the kubeconfig sent (so a later read may skip the body).
fn credential_written(sent: &Secret, answer: &Secret) -> Option<WrittenCredential> {
    let mut credential = written_credential(sent)?;
    let answered = answer.data.as_ref().and_then(|d| d.get(SECRET_KEY));
    if answered.is_some_and(|b| sha256_hex(&b.0) == credential.kubeconfig_sha256) {
        credential.resource_version = answer.metadata.resource_version.clone();
    }
    Some(credential)
}

async fn write_one(
    client: &Client,
    spec: &BridgeSpec,
    snap: &Snapshot,
    w: Write,
    run_key: &RunKey,
) -> Result<Written, WriteError> {
    let mut w = w.unpack(&snap.observed);
    let mut secret = w.secret.take();
    let mut minted = None;
    if let Some(inv) = &w.exec {
        let (s, entry) = mint(spec, &snap.profiles, &w, inv).await?;
        secret = s;
        minted = Some((w.key.clone(), entry));
    }
    let (mut objects, mut credential) = (Vec::new(), None);
    if let Some(s) = secret.map(|s| marked(s, Kind::Secret, run_key)) {
        let (written, answer) =
            write_object(client, &w.key, &s, Kind::Secret, w.adopt_secret).await?;
        credential = credential_written(&s, &answer).map(|c| (written.1.clone(), c));
        objects.push(written);
    }
    if let Some(sc) = w.sveltos_cluster.take() {
        let sc = marked(sc, Kind::SveltosCluster, run_key);
        let kind = Kind::SveltosCluster;
        let (written, _) = write_object(client, &w.key, &sc, kind, w.adopt_sveltos_cluster).await?;
        remove_foreign_labels(client, &w, (&written.1, &written.2)).await?;
        objects.push(written);
    }
    Ok(Written {
        minted,
        objects,
        credential,
    })
}

/// Removes the labels others added that the plan marked (`copy_labels.remove_foreign`) from the SveltosCluster just
/// written, while it still has that UID (an object replaced in between is left as it is).
async fn remove_foreign_labels(
    client: &Client,
    w: &Write,
    (id, uid): (&str, &str),
) -> Result<(), WriteError> {
    if w.remove_labels.is_empty() {
        return Ok(());
    }
    let (ns, name) = id.split_once('/').unwrap_or(("", id));
    let removed =
        io::remove_labels::<SveltosCluster>(client, ns, name, Some(uid), &w.remove_labels).await;
    removed.map(|_| ()).map_err(|source| WriteError::Io {
        key: w.key.clone(),
        source,
    })
}

/// Runs the exec plugin of one cluster and builds its Secret and entry.
async fn mint(
    spec: &BridgeSpec,
    profiles: &[ClusterProfile],
    w: &Write,
    inv: &ExecInvocation,
) -> Result<(Option<Secret>, ClusterEntry), MintError> {
    let profile = profiles
        .iter()
        .find(|p| p.key() == w.key)
        .ok_or_else(|| MintError::ProfileVanished { key: w.key.clone() })?;
    let minted = credentials::mint(profile, inv).await?;
    let source = CredentialSource::Exec {
        provider: inv.provider.clone(),
    };
    let d = desired(
        spec,
        profile,
        &source,
        &Material::Bytes {
            bytes: minted.kubeconfig,
            expires_at: minted.expires_at,
            config_sha256: Some(minted.invocation_sha256),
        },
        w.health_pause,
    );
    Ok((d.secret.map(|s| *s), d.entry))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::ByteString;

    use super::*;

    fn secret(kubeconfig: &[u8], version: &str) -> Secret {
        let mut s = Secret {
            data: Some(BTreeMap::from([(
                SECRET_KEY.to_string(),
                ByteString(kubeconfig.to_vec()),
            )])),
            ..Default::default()
        };
        s.metadata.resource_version = Some(version.into());
        s
    }

    #[test]
    fn the_version_answered_is_recorded_only_when_the_answer_holds_what_was_sent() {
        let sent = secret(b"ours", "");
        let as_sent = credential_written(&sent, &secret(b"ours", "7")).unwrap();
        assert_eq!(as_sent.resource_version.as_deref(), Some("7"));
        assert_eq!(as_sent.kubeconfig_sha256, sha256_hex(b"ours"));
        // An answer holding other data (another writer's field, a webhook): no version, the body is read next time.
        let other = credential_written(&sent, &secret(b"theirs", "8")).unwrap();
        assert_eq!(other.resource_version, None);
        let mut empty = secret(b"", "9");
        empty.data = None;
        assert_eq!(
            credential_written(&sent, &empty).unwrap().resource_version,
            None
        );
    }
}
