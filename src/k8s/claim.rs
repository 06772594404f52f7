//! The claim ConfigMap of a bridge name (see `crate::domain::ownership::Claim`): read, write (server-side apply)
//! and delete. The claim is owned by the operator's namespace of choice (`claim_namespace`), not the inventory's.

use std::collections::BTreeMap;

use k8s_openapi::{api::core::v1::ConfigMap, apimachinery::pkg::apis::meta::v1::ObjectMeta};
use kube::Client;

use super::io::{self, IoError};
use crate::{
    api::keys,
    domain::{
        journal::{self, Journals},
        ownership::{Claim, RunKey},
    },
};

const INSTANCE_KEY: &str = "instance";
const CONFIG_KEY: &str = "config";
const KEYS_KEY: &str = "runKeys";
const RUN_KEY: &str = "run";
const LEDGER_COPY_KEY: &str = "ownedClusters";
const SKIPPED_KEY: &str = "skipped";

/// What a claim's data may hold in all: a ConfigMap's keys and values are limited to 1 MiB; a little is left
/// for the API server's own accounting.
const MAX_CLAIM_BYTES: usize = 1024 * 1024 - 4096;

/// Reads the claim (`None`: the name is free). A ConfigMap at that name that does not look like a claim
/// counts as a claim by an unknown instance, so it is never overwritten silently.
pub async fn read(client: &Client, namespace: &str, name: &str) -> Result<Option<Claim>, IoError> {
    Ok(read_with_uid(client, namespace, name)
        .await?
        .map(|(c, _)| c))
}

/// [`read`], with the ConfigMap's UID (for [`delete`]).
pub async fn read_with_uid(
    client: &Client,
    namespace: &str,
    name: &str,
) -> Result<Option<(Claim, Option<String>)>, IoError> {
    let cm = io::get_opt::<ConfigMap>(client, namespace, name).await?;
    Ok(cm.map(|cm| {
        let data = cm.data.unwrap_or_default();
        let keys = data
            .get(KEYS_KEY)
            .map(|k| k.split(',').filter_map(RunKey::from_hex).collect())
            .unwrap_or_default();
        let mut journals = Journals::default();
        for (key, value) in data.range(journal::DATA_PREFIX.to_string()..) {
            if !key.starts_with(journal::DATA_PREFIX) {
                break;
            }
            journals.add_batch(key, value);
        }
        let claim = Claim {
            journals,
            instance: data
                .get(INSTANCE_KEY)
                .cloned()
                .unwrap_or_else(|| "<not a bridge claim>".into()),
            config: data.get(CONFIG_KEY).cloned(),
            keys,
            run: data.get(RUN_KEY).and_then(|r| serde_json::from_str(r).ok()),
            ledger_copy: data.get(LEDGER_COPY_KEY).cloned(),
            skipped: data.get(SKIPPED_KEY).cloned(),
        };
        (claim, cm.metadata.uid)
    }))
}

/// Writes (creates or updates) the claim.
pub async fn write(
    client: &Client,
    namespace: &str,
    name: &str,
    bridge: &str,
    claim: &Claim,
) -> Result<(), IoError> {
    let mut data = BTreeMap::from([(INSTANCE_KEY.to_string(), claim.instance.clone())]);
    if let Some(c) = &claim.config {
        data.insert(CONFIG_KEY.to_string(), c.clone());
    }
    if !claim.keys.is_empty() {
        let keys: Vec<String> = claim.keys.iter().map(RunKey::to_hex).collect();
        data.insert(KEYS_KEY.to_string(), keys.join(","));
    }
    if let Some(run) = &claim.run {
        data.insert(
            RUN_KEY.to_string(),
            serde_json::to_string(run).unwrap_or_default(),
        );
    }
    // Readers of a record left out say they cannot tell (server-side apply removes an earlier one).
    for (key, value, what) in [
        (
            LEDGER_COPY_KEY,
            &claim.ledger_copy,
            "the copy of the ledger",
        ),
        (
            SKIPPED_KEY,
            &claim.skipped,
            "the record of the skipped clusters",
        ),
    ] {
        let Some(value) = value else { continue };
        // The journals' batches (written by merge patches, not here) share the ConfigMap's limit.
        let others: usize =
            data.iter().map(|(k, v)| k.len() + v.len()).sum::<usize>() + claim.journals.bytes();
        if others + key.len() + value.len() <= MAX_CLAIM_BYTES {
            data.insert(key.to_string(), value.clone());
        } else {
            tracing::warn!(
                bytes = value.len(),
                "{what} does not fit in the claim; it is left out"
            );
        }
    }
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            namespace: Some(namespace.to_string()),
            labels: Some(BTreeMap::from([(
                keys::BRIDGE_LABEL.to_string(),
                bridge.to_string(),
            )])),
            ..Default::default()
        },
        data: Some(data),
        ..Default::default()
    };
    io::server_side_apply(client, &cm).await.map(|_| ())
}

/// Sets (`Some`) or removes (`None`) data keys of the claim by a merge patch: the journal's batches
/// ([`crate::domain::journal`]), which the claim's own server-side apply neither writes nor removes (the patch is
/// an update, a field manager entry of its own), so that one batch costs one small write.
pub async fn patch_data(
    client: &Client,
    namespace: &str,
    name: &str,
    entries: &BTreeMap<String, Option<String>>,
) -> Result<(), IoError> {
    let api = io::api::<ConfigMap>(client, Some(namespace));
    let params = kube::api::PatchParams {
        field_manager: Some(crate::domain::FIELD_MANAGER.to_string()),
        ..Default::default()
    };
    let patch = kube::api::Patch::Merge(serde_json::json!({ "data": entries }));
    let object = format!("{namespace}/{name}");
    io::with_retry("patch", "ConfigMap", &object, || async {
        api.patch_metadata(name, &params, &patch).await.map(|_| ())
    })
    .await
}

/// Deletes the claim read with `uid` (absent is fine): the delete carries the UID as a precondition, so a claim
/// that another state wrote at the same name since it was read is never deleted.
pub async fn delete(
    client: &Client,
    namespace: &str,
    name: &str,
    uid: Option<&str>,
) -> Result<(), IoError> {
    io::delete_owned::<ConfigMap>(client, namespace, name, uid)
        .await
        .map(|_| ())
}

/// A new run key: 256 bits from the TLS stack's random generator (aws-lc, seeded by the kernel's `getrandom`
/// system call): the same source the provider's own certificates use, which needs no `/dev/urandom` (absent in a
/// minimal root file system) and no C library lookup (absent from the static build).
pub fn new_run_key() -> Result<RunKey, rustls::Error> {
    let mut bytes = [0u8; 32];
    rustls::crypto::aws_lc_rs::default_provider()
        .secure_random
        .fill(&mut bytes)
        .map_err(|_| rustls::Error::FailedToGetRandomBytes)?;
    Ok(RunKey::new(bytes))
}

/// This process as a claim's run holder: `host:pid`.
pub fn holder() -> String {
    format!("{}:{}", host_name(), std::process::id())
}

/// Whether the holder `host:pid` of a claim's run is alive: `None` when it is another host's (unknowable here).
pub fn holder_alive(holder: &str) -> Option<bool> {
    let (host, pid) = holder.rsplit_once(':')?;
    if host != host_name() {
        return None;
    }
    let pid: u32 = pid.parse().ok()?;
    if !cfg!(target_os = "linux") {
        return None;
    }
    // A zombie (dead, not reaped yet: some container inits never reap) is dead.
    let alive = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next().map(String::from))
        })
        .is_some_and(|state| state != "Z" && state != "X");
    Some(alive)
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown-host".into())
}

/// A new instance id: 128 bits from the OS's hashing seed, the time and the process id (an identity, not a
/// secret: ownership of objects rests on recorded UIDs).
pub fn new_instance_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let mut parts = [0u64; 2];
    for (i, part) in parts.iter_mut().enumerate() {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(now);
        h.write_u32(std::process::id());
        h.write_usize(i);
        *part = h.finish();
    }
    format!("{:016x}{:016x}", parts[0], parts[1])
}
