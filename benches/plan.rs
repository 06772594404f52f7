//! The pure desired-state computation (`locate_all` + `plan`) for 10,000 ClusterProfiles with labelled
//! kubeconfig Secrets: once against an empty cluster (everything to create) and once against a cluster
//! that already holds exactly what the bridge wants (the no-change plan).
//!
//! `cargo bench --bench plan`

use std::collections::BTreeMap;
use std::hint::black_box;

use criterion::{Criterion, criterion_main};
use k8s_openapi::api::core::v1::Secret;
use tfsveltos::api::{ClusterProfile, keys};
use tfsveltos::domain::BridgeSpec;
use tfsveltos::domain::observed::Observed;
use tfsveltos::domain::ownership::{IMPORTED, Ledger};
use tfsveltos::domain::plan::{Inputs, Phase, locate_all, plan};

// The test data of the integration tests (pure values).
use support::fixtures;

const N: usize = 10_000;

fn fleet() -> (Vec<ClusterProfile>, Vec<Secret>) {
    let mut profiles = Vec::with_capacity(N);
    let mut secrets = Vec::with_capacity(N);
    for i in 0..N {
        let ns = format!("fleet-{}", i % 10);
        let name = format!("c{i:05}");
        let (region, tier) = (format!("r{}", i % 7), format!("t{}", i % 3));
        profiles.push(fixtures::cluster_profile(
            &ns,
            &name,
            "bench",
            &[("env", "prod"), ("region", &region), ("tier", &tier)],
        ));
        let kubeconfig = fixtures::kubeconfig_for(
            &format!("c{i}"),
            &format!("https://c{i}.example:6443"),
            &format!("token-{i}"),
        );
        secrets.push(fixtures::secret(
            &ns,
            &format!("{name}-access"),
            &[(keys::CLUSTER_PROFILE_LABEL, &name)],
            &[("Config", kubeconfig)],
        ));
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
        // The objects are looked at below (what exists after the first apply).
        pack: false,
    };

    // What exists after the first apply: exactly what the plan against the empty cluster wants.
    let first = {
        let i = inputs(&empty, Phase::Apply);
        plan(&i, &locate_all(&i), &fetched)
    };
    assert_eq!(first.desired.len(), N, "every profile is bridged");
    let clusters: Vec<_> = first
        .desired
        .values()
        .map(|d| *d.sveltos_cluster.clone().unwrap())
        .collect();
    let owned: Vec<Secret> = first
        .desired
        .values()
        .filter_map(|d| d.secret.as_deref().cloned())
        .collect();
    // Read back as a bridge that took over what it wrote (the objects here have no UIDs).
    let ledger = Ledger::from_private(IMPORTED, Vec::new).expect("ledger");
    let steady = Observed::build(&spec.name, &ledger, &clusters, &owned);

    let mut g = c.benchmark_group("plan_10000");
    g.sample_size(10);
    g.bench_function("from_empty", |b| {
        b.iter(|| {
            let i = inputs(&empty, Phase::Plan);
            black_box(plan(&i, &locate_all(&i), &fetched))
        })
    });
    g.bench_function("no_change", |b| {
        b.iter(|| {
            let i = inputs(&steady, Phase::Plan);
            black_box(plan(&i, &locate_all(&i), &fetched))
        })
    });
    g.finish();
}

// criterion generates the group function without a doc comment.
#[allow(missing_docs)]
mod group {
    use super::bench;
    criterion::criterion_group!(benches, bench);
}
use group::benches;
criterion_main!(benches);
