//! DynamicValue (msgpack) encode/decode of the bridge's computed `clusters` attribute with 1,000 clusters:
//! what every plan and apply of a 1,000-cluster bridge sends to and receives from the CLI; and decode of the
//! same map with 10,000 entries (about 4.9 MB; 3.7 MB before the entries held the managed fields in words), the largest fleet the budgets in the design notes name.
//!
//! `cargo bench --bench values`

use std::collections::BTreeMap;
use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_main};
use tfsveltos::domain::{desired::ClusterEntry, managed_view::ManagedView};
use tfsveltos::provider::resources::cluster_inventory_bridge::{
    cluster_entry_type, clusters::clusters_value,
};
use tfsveltos::tfplugin::Type;
use tfsveltos::tfplugin::value::msgpack::{decode, encode};

fn entries(n: usize) -> BTreeMap<String, ClusterEntry> {
    (0..n)
        .map(|i| {
            let key = format!("fleet-{}/c{i:05}", i % 10);
            let entry = ClusterEntry {
                sveltos_cluster: Some(key.clone()),
                secret: Some(format!("{key}-sveltos-kubeconfig")),
                credential_source: format!("secret:{key}-access#Config"),
                kubeconfig_sha256: Some(format!("{:064x}", i * 7919)),
                credential_expires_at: None,
                labels: BTreeMap::from([
                    ("env".to_string(), "prod".to_string()),
                    ("region".to_string(), format!("r{}", i % 7)),
                    ("tier".to_string(), format!("t{}", i % 3)),
                ]),
                config_sha256: format!("{:064x}", i * 104_729),
                managed: ManagedView {
                    annotations: BTreeMap::from([(
                        "sveltos.clusterinventory.io/display-name".to_string(),
                        format!("cluster {i}"),
                    )]),
                    ..ManagedView::default()
                },
                credential_pending: false,
            };
            (key, entry)
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let ty = Type::map(cluster_entry_type());
    let value = clusters_value(entries(1000));
    let bytes = encode(&value, &ty).expect("encodes");
    let mut g = c.benchmark_group("clusters_1000");
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.bench_function("msgpack_encode", |b| {
        b.iter(|| encode(black_box(&value), &ty).expect("encodes"))
    });
    g.bench_function("msgpack_decode", |b| {
        b.iter(|| decode(black_box(&bytes), &ty).expect("decodes"))
    });
    g.finish();

    let value = clusters_value(entries(10_000));
    let bytes = encode(&value, &ty).expect("encodes");
    let mut g = c.benchmark_group("clusters_10000");
    g.sample_size(20);
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.bench_function("msgpack_decode", |b| {
        b.iter(|| decode(black_box(&bytes), &ty).expect("decodes"))
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
