//! The pure desired-state computation (`locate_all` + `plan`) for 10,000 ClusterProfiles with labelled
//! kubeconfig Secrets: once against an empty cluster (everything to create) and once against a cluster
//! that already holds exactly what the bridge wants (the no-change plan).
//!
//! `cargo bench --bench plan`

use std::collections::BTreeMap;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use tfsveltos::api::{ClusterManager, ClusterProfile, ClusterProfileSpec, keys};
use tfsveltos::bridge::BridgeSpec;
use tfsveltos::bridge::observed::World;
use tfsveltos::bridge::plan::{Inputs, locate_all, plan};

const N: usize = 10_000;

fn kubeconfig(i: usize) -> Vec<u8> {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c{i}\n  cluster:\n    server: https://c{i}.example:6443\n\
         users:\n- name: u\n  user:\n    token: token-{i}\ncontexts:\n- name: c{i}\n  context: {{cluster: c{i}, user: u}}\n\
         current-context: c{i}\n"
    )
    .into_bytes()
}

fn fleet() -> (Vec<ClusterProfile>, Vec<Secret>) {
    let mut profiles = Vec::with_capacity(N);
    let mut secrets = Vec::with_capacity(N);
    for i in 0..N {
        let ns = format!("fleet-{}", i % 10);
        let name = format!("c{i:05}");
        let mut p = ClusterProfile::new(
            &name,
            ClusterProfileSpec {
                display_name: Some(format!("{name} display")),
                cluster_manager: ClusterManager {
                    name: "bench".into(),
                },
            },
        );
        p.metadata.namespace = Some(ns.clone());
        p.metadata.labels = Some(BTreeMap::from([
            ("env".to_string(), "prod".to_string()),
            ("region".to_string(), format!("r{}", i % 7)),
            ("tier".to_string(), format!("t{}", i % 3)),
        ]));
        profiles.push(p);
        secrets.push(Secret {
            metadata: ObjectMeta {
                name: Some(format!("{name}-access")),
                namespace: Some(ns),
                labels: Some(BTreeMap::from([(
                    keys::CLUSTER_PROFILE_LABEL.to_string(),
                    name.clone(),
                )])),
                ..Default::default()
            },
            data: Some(BTreeMap::from([(
                "Config".to_string(),
                ByteString(kubeconfig(i)),
            )])),
            ..Default::default()
        });
    }
    (profiles, secrets)
}

fn bench(c: &mut Criterion) {
    let spec = BridgeSpec {
        name: "bench".into(),
        extra_labels: BTreeMap::from([("bridged".to_string(), "yes".to_string())]),
        ..Default::default()
    };
    let (profiles, secrets) = fleet();
    let namespace_labels = BTreeMap::new();
    let fetched = BTreeMap::new();
    let now = jiff::Timestamp::now();
    let empty = World::default();
    let inputs = |world| Inputs {
        spec: &spec,
        profiles: &profiles,
        credential_secrets: &secrets,
        namespace_labels: &namespace_labels,
        providers: None,
        world,
        now,
    };

    // What exists after the first apply: exactly what the plan against the empty cluster wants.
    let first = {
        let i = inputs(&empty);
        plan(&i, &locate_all(&i), &fetched)
    };
    assert_eq!(first.desired.len(), N, "every profile is bridged");
    let clusters: Vec<_> = first
        .desired
        .values()
        .map(|d| d.sveltos_cluster.clone())
        .collect();
    let owned: Vec<Secret> = first
        .desired
        .values()
        .filter_map(|d| d.secret.clone())
        .collect();
    let steady = World::build(&spec.name, &clusters, &owned);

    let mut g = c.benchmark_group("plan_10000");
    g.sample_size(10);
    g.bench_function("from_empty", |b| {
        b.iter(|| {
            let i = inputs(&empty);
            black_box(plan(&i, &locate_all(&i), &fetched))
        })
    });
    g.bench_function("no_change", |b| {
        b.iter(|| {
            let i = inputs(&steady);
            black_box(plan(&i, &locate_all(&i), &fetched))
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
