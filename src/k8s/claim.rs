//! The claim ConfigMap of a bridge name (see `crate::bridge::ownership::Claim`): read, write (server-side apply)
//! and delete. The claim is owned by the operator's namespace of choice (`claim_namespace`), not the inventory's.

use std::collections::BTreeMap;

use k8s_openapi::{api::core::v1::ConfigMap, apimachinery::pkg::apis::meta::v1::ObjectMeta};
use kube::Client;

use super::io::{self, IoError};
use crate::{api::keys, bridge::ownership::Claim};

const INSTANCE_KEY: &str = "instance";
const CONFIG_KEY: &str = "config";

/// Reads the claim (`None`: the name is free). A ConfigMap at that name that does not look like a claim
/// counts as a claim by an unknown instance, so it is never overwritten silently.
pub async fn read(client: &Client, namespace: &str, name: &str) -> Result<Option<Claim>, IoError> {
    let cm = io::get_opt::<ConfigMap>(client, namespace, name).await?;
    Ok(cm.map(|cm| {
        let data = cm.data.unwrap_or_default();
        Claim {
            instance: data
                .get(INSTANCE_KEY)
                .cloned()
                .unwrap_or_else(|| "<not a bridge claim>".into()),
            config: data.get(CONFIG_KEY).cloned(),
        }
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
    io::apply(client, &cm).await.map(|_| ())
}

/// Deletes the claim (absent is fine).
pub async fn delete(client: &Client, namespace: &str, name: &str) -> Result<(), IoError> {
    io::delete::<ConfigMap>(client, namespace, name).await
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
