//! Where a plan's memory goes at 10,000 ClusterProfiles: the live heap held by each thing a no-change plan
//! builds (the listed inventory, what the bridge owns, the plan, the planned `clusters` value and its msgpack
//! encoding), measured with a counting global allocator. Objects are built the way a LIST delivers them: as
//! JSON with server-set metadata (UID, resource version, creation time, the writer's `managedFields`),
//! decoded as `k8s::io` decodes every object (`decode_object`).
//!
//! `cargo test --release --bench memory -- --nocapture` (or without `--release`: the byte counts are the same)

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use k8s_openapi::api::core::v1::Secret;
use serde::de::DeserializeOwned;
use tfsveltos::api::{SveltosCluster, keys};
use tfsveltos::domain::BridgeSpec;
use tfsveltos::domain::observed::Observed;
use tfsveltos::domain::ownership::{IMPORTED, Ledger};
use tfsveltos::domain::plan::{Inputs, Phase, locate_all, plan};
use tfsveltos::provider::resources::cluster_inventory_bridge::{
    cluster_entry_type, clusters::clusters_value,
};
use tfsveltos::tfplugin::Type;
use tfsveltos::tfplugin::value::msgpack::{decode, encode};

// The test data of the integration tests (pure values).
use support::fixtures;

/// Counts the bytes currently allocated and the most ever allocated at once.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

const N: usize = 10_000;
const MB: f64 = 1024.0 * 1024.0;

fn live() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// Runs `f`, prints what it left allocated and its peak above the starting point, returns its value.
fn stage<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let before = live();
    PEAK.store(before, Ordering::Relaxed);
    let v = f();
    let after = live();
    println!(
        "{what:<58} holds {:>7.1} MB   peak while built {:>7.1} MB",
        after.saturating_sub(before) as f64 / MB,
        PEAK.load(Ordering::Relaxed).saturating_sub(before) as f64 / MB
    );
    v
}

/// `obj` as a LIST page would carry it: with server-set metadata and a `managedFields` entry of `manager`.
fn listed<T: serde::Serialize + DeserializeOwned + kube::Resource>(
    obj: &T,
    i: usize,
    manager: &str,
) -> T {
    let mut v = serde_json::to_value(obj).expect("serializes");
    let m = &mut v["metadata"];
    m["uid"] = format!("{i:08x}-1111-2222-3333-444455556666").into();
    m["resourceVersion"] = format!("{}", 100_000 + i).into();
    m["creationTimestamp"] = "2026-01-01T00:00:00Z".into();
    m["managedFields"] = serde_json::json!([{
        "manager": manager, "operation": "Apply", "apiVersion": "v1", "time": "2026-01-01T00:00:00Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:metadata": {"f:labels": {"f:env": {}, "f:region": {}, "f:tier": {}},
                     "f:annotations": {"f:a": {}}}, "f:spec": {"f:kubeconfigName": {}, "f:kubeconfigKeyName": {}}}
    }]);
    let text = serde_json::to_string(&v).expect("serializes");
    tfsveltos::k8s::io::decode_object(&text).expect("deserializes")
}

#[test]
fn memory_of_a_no_change_plan_at_10000() {
    let spec = BridgeSpec {
        name: "bench".into(),
        ..Default::default()
    };
    let (profiles, secrets) = stage("ClusterProfiles (listed)", || {
        let mut profiles = Vec::with_capacity(N);
        let mut secrets = Vec::with_capacity(N);
        for i in 0..N {
            let ns = "bench-10000";
            let name = format!("c{i:05}");
            let (region, tier) = (format!("r{}", i % 7), format!("t{}", i % 3));
            let p = fixtures::cluster_profile(
                ns,
                &name,
                "bench",
                &[("env", "bench"), ("region", &region), ("tier", &tier)],
            );
            profiles.push(listed(&p, i, "bench-seed"));
            let kubeconfig = fixtures::kubeconfig_for(
                &name,
                &format!("https://{name}.bench.invalid:6443"),
                &format!("bench-token-{i:05}"),
            );
            let s = fixtures::secret(
                ns,
                &format!("{name}-access"),
                &[(keys::CLUSTER_PROFILE_LABEL, &name)],
                &[("Config", kubeconfig)],
            );
            secrets.push(s);
        }
        (profiles, secrets)
    });
    let secrets: Vec<Secret> = stage("credential Secrets (listed)", || {
        secrets
            .iter()
            .enumerate()
            .map(|(i, s)| listed(s, i, "bench-seed"))
            .collect()
    });
    let namespace_labels = BTreeMap::new();
    let fetched = BTreeMap::new();
    let now = jiff::Timestamp::now();
    let empty = Observed::default();
    let inputs = |observed, phase| Inputs {
        spec: &spec,
        profiles: &profiles,
        credential_secrets: &secrets,
        checked_kubeconfigs: None,
        namespace_labels: &namespace_labels,
        providers: None,
        observed,
        now,
        phase,
        planned_mints: None,
        undecodable: &tfsveltos::domain::plan::NO_UNDECODABLE,
        cluster_api: &tfsveltos::domain::plan::NO_CLUSTER_API,
        // The objects are looked at below (listed as what exists after the first apply).
        pack: false,
    };
    let first = {
        let i = inputs(&empty, Phase::Apply);
        plan(&i, &locate_all(&i), &fetched)
    };
    assert_eq!(first.desired.len(), N, "every profile is bridged");
    let (clusters, owned): (Vec<SveltosCluster>, Vec<Secret>) =
        stage("owned SveltosClusters + Secrets (listed)", || {
            let c = first
                .desired
                .values()
                .enumerate()
                .map(|(i, d)| {
                    listed(
                        d.sveltos_cluster.as_deref().unwrap(),
                        i,
                        tfsveltos::domain::FIELD_MANAGER,
                    )
                })
                .collect();
            let s = first
                .desired
                .values()
                .enumerate()
                .filter_map(|(i, d)| {
                    d.secret
                        .as_deref()
                        .map(|s| listed(s, i, tfsveltos::domain::FIELD_MANAGER))
                })
                .collect();
            (c, s)
        });
    let ledger = Ledger::from_private(IMPORTED, Vec::new).expect("ledger");
    let observed = stage("Observed (what the bridge owns)", || {
        Observed::build(&spec.name, &ledger, &clusters, &owned)
    });
    stage("  (the listed owned objects, dropped)", || {
        drop((clusters, owned))
    });
    drop(observed);
    // What `read_owned` does: each LIST page is reduced to the `Observed` as it arrives.
    let observed = stage(
        "Observed built page by page (peak: one page of each kind)",
        || {
            let desired: Vec<_> = first.desired.values().collect();
            let (mut clusters, mut secrets) = (Observed::default(), Observed::default());
            for (p, chunk) in desired.chunks(500).enumerate() {
                let page: Vec<SveltosCluster> = chunk
                    .iter()
                    .enumerate()
                    .map(|(j, d)| {
                        listed(
                            d.sveltos_cluster.as_deref().unwrap(),
                            p * 500 + j,
                            tfsveltos::domain::FIELD_MANAGER,
                        )
                    })
                    .collect();
                clusters.add_owned_clusters(&spec.name, &ledger, &page);
                let page: Vec<Secret> = chunk
                    .iter()
                    .enumerate()
                    .filter_map(|(j, d)| {
                        d.secret
                            .as_deref()
                            .map(|s| listed(s, p * 500 + j, tfsveltos::domain::FIELD_MANAGER))
                    })
                    .collect();
                secrets.add_owned_secrets(&spec.name, &ledger, &page);
            }
            clusters.join(secrets);
            clusters
        },
    );
    drop(first);
    let p = stage("Plan (no change): desired objects, entries", || {
        let i = inputs(&observed, Phase::Plan);
        plan(&i, &locate_all(&i), &fetched)
    });
    let entries = stage("planned entries (BTreeMap<String, ClusterEntry>)", || {
        p.entries()
    });
    let value = stage(
        "planned `clusters` Value (the entries moved into it)",
        || clusters_value(entries),
    );
    let ty = Type::map(cluster_entry_type());
    let bytes = stage("its msgpack encoding", || {
        encode(&value, &ty).expect("encodes")
    });
    let decoded = stage("a `clusters` Value decoded from msgpack", || {
        decode(&bytes, &ty).expect("decodes")
    });
    assert_eq!(decoded, value);
    stage("  (Plan, dropped)", || drop(p));
}
