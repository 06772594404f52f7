//! Helper of `scripts/bench`.
//!
//! ```text
//! bench-limit seed   --ns NS --n N [--only K] [--vars FILE]   N ClusterProfiles + labelled kubeconfig Secrets
//! bench-limit mutate --ns NS --n N                             1 % of the profiles relabelled, 1 % deleted
//! bench-limit limit  --ns NS --n N --bridge NAME               the 2N server-side applies the bridge makes
//! bench-limit unlimit --ns NS --n N                            the 2N deletes the bridge makes on destroy
//! bench-limit clean  --ns NS                                   delete every SveltosCluster and every Secret but the
//!                                                              labelled kubeconfig Secrets `seed` wrote
//! bench-limit wipe   --ns NS                                   delete every profile, Secret, SveltosCluster in NS
//! bench-limit reads  --ns NS --bridge NAME --claim-namespace NS  the reads a no-change plan cannot avoid (the
//!                                                              read floor, see `reads`)
//! ```
//!
//! The cluster is the one `KUBECONFIG` names. `limit` and `unlimit` print one JSON line `{"seconds": .., "writes": ..}`;
//! `reads` prints `{"seconds": .., "requests": {"LIST": .., "GET": ..}, "bytes": ..}`.
//! Profiles are `c00000`, `c00001`, ...; profile `cX` has the Secret `cX-access` (label
//! `x-k8s.io/cluster-profile=cX`, key `Config`), which is what the bridge picks up by default.
//! Everything here runs with the bridge's concurrency (16, `CONCURRENCY` in the bridge's crud.rs).

use std::collections::BTreeMap;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use futures::{StreamExt, TryStreamExt, stream};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Client;
use kube::api::GetParams;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use kube::core::{ApiResource, DynamicObject, ObjectList, Request};
use serde::de::IgnoredAny;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// Same as `CONCURRENCY` in src/provider/resources/cluster_inventory_bridge/crud.rs.
const CONCURRENCY: usize = 16;
const SEED_MANAGER: &str = "bench-seed";
const LIMIT_MANAGER: &str = "bench-limit";
const BRIDGE_LABEL: &str = "sveltos.clusterinventory.io/bridge";
const SOURCE_ANNOTATION: &str = "sveltos.clusterinventory.io/cluster-profile";
const DISPLAY_NAME_ANNOTATION: &str = "sveltos.clusterinventory.io/display-name";
const KUBECONFIG_SHA_ANNOTATION: &str = "sveltos.clusterinventory.io/kubeconfig-sha256";
const CREDENTIAL_SOURCE_ANNOTATION: &str = "sveltos.clusterinventory.io/credential-source";

fn profile_ar() -> ApiResource {
    ApiResource {
        group: "multicluster.x-k8s.io".into(),
        version: "v1alpha1".into(),
        api_version: "multicluster.x-k8s.io/v1alpha1".into(),
        kind: "ClusterProfile".into(),
        plural: "clusterprofiles".into(),
    }
}

fn sveltos_ar() -> ApiResource {
    ApiResource {
        group: "lib.projectsveltos.io".into(),
        version: "v1beta1".into(),
        api_version: "lib.projectsveltos.io/v1beta1".into(),
        kind: "SveltosCluster".into(),
        plural: "sveltosclusters".into(),
    }
}

fn name(i: usize) -> String {
    format!("c{i:05}")
}

fn kubeconfig(i: usize) -> String {
    let n = name(i);
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: {n}\n  cluster:\n    server: https://{n}.bench.invalid:6443\n\
         users:\n- name: admin\n  user:\n    token: bench-token-{i:05}\ncontexts:\n- name: {n}\n  context:\n    cluster: {n}\n    user: admin\n\
         current-context: {n}\n"
    )
}

fn profile_labels(i: usize, changed: bool) -> BTreeMap<String, String> {
    BTreeMap::from([
        (
            "env".to_string(),
            if changed { "changed" } else { "bench" }.to_string(),
        ),
        ("region".to_string(), format!("r{}", i % 7)),
        ("tier".to_string(), format!("t{}", i % 3)),
    ])
}

fn profile_body(ns: &str, i: usize, changed: bool) -> Value {
    json!({
        "apiVersion": "multicluster.x-k8s.io/v1alpha1",
        "kind": "ClusterProfile",
        "metadata": { "name": name(i), "namespace": ns, "labels": profile_labels(i, changed) },
        "spec": { "displayName": format!("{} display", name(i)), "clusterManager": { "name": "bench" } },
    })
}

fn secret_json(s: Secret) -> Value {
    let mut v = serde_json::to_value(s).expect("a Secret serializes");
    v["apiVersion"] = "v1".into();
    v["kind"] = "Secret".into();
    v
}

fn access_secret(ns: &str, i: usize) -> Value {
    secret_json(Secret {
        metadata: ObjectMeta {
            name: Some(format!("{}-access", name(i))),
            namespace: Some(ns.into()),
            labels: Some(BTreeMap::from([(
                "x-k8s.io/cluster-profile".to_string(),
                name(i),
            )])),
            ..Default::default()
        },
        type_: Some("Opaque".into()),
        data: Some(BTreeMap::from([(
            "Config".to_string(),
            ByteString(kubeconfig(i).into_bytes()),
        )])),
        ..Default::default()
    })
}

/// The Secret the bridge writes for profile `i` (see src/domain/desired.rs).
fn bridge_secret(ns: &str, i: usize, bridge: &str) -> Value {
    let bytes = kubeconfig(i).into_bytes();
    let key = format!("{ns}/{}", name(i));
    secret_json(Secret {
        metadata: ObjectMeta {
            name: Some(format!("{}-sveltos-kubeconfig", name(i))),
            namespace: Some(ns.into()),
            labels: Some(BTreeMap::from([(
                BRIDGE_LABEL.to_string(),
                bridge.to_string(),
            )])),
            annotations: Some(BTreeMap::from([
                (SOURCE_ANNOTATION.to_string(), key),
                (
                    KUBECONFIG_SHA_ANNOTATION.to_string(),
                    hex::encode(Sha256::digest(&bytes)),
                ),
                (
                    CREDENTIAL_SOURCE_ANNOTATION.to_string(),
                    format!("secret:{ns}/{}-access#Config", name(i)),
                ),
            ])),
            ..Default::default()
        },
        type_: Some("Opaque".into()),
        data: Some(BTreeMap::from([(
            "kubeconfig".to_string(),
            ByteString(bytes),
        )])),
        ..Default::default()
    })
}

/// The SveltosCluster the bridge writes for profile `i` (see src/domain/desired.rs).
fn bridge_cluster(ns: &str, i: usize, bridge: &str) -> Value {
    let mut labels = profile_labels(i, false);
    labels.insert(BRIDGE_LABEL.into(), bridge.into());
    json!({
        "apiVersion": "lib.projectsveltos.io/v1beta1",
        "kind": "SveltosCluster",
        "metadata": {
            "name": name(i),
            "namespace": ns,
            "labels": labels,
            "annotations": {
                SOURCE_ANNOTATION: format!("{ns}/{}", name(i)),
                DISPLAY_NAME_ANNOTATION: format!("{} display", name(i)),
            },
        },
        "spec": { "kubeconfigName": format!("{}-sveltos-kubeconfig", name(i)), "kubeconfigKeyName": "kubeconfig" },
    })
}

/// Server-side applies `body` (a Secret, ClusterProfile or SveltosCluster) as `manager`.
async fn apply_body<K>(api: &Api<K>, body: &Value, manager: &str) -> Result<()>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let name = body["metadata"]["name"].as_str().unwrap_or_default();
    let kind = body["kind"].as_str().unwrap_or_default();
    api.patch(
        name,
        &PatchParams::apply(manager).force(),
        &Patch::Apply(body),
    )
    .await
    .with_context(|| format!("apply {kind} {name}"))?;
    Ok(())
}

async fn ensure_namespace(client: &Client, ns: &str) -> Result<()> {
    let api: Api<Namespace> = Api::all(client.clone());
    let body = json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": ns } });
    api.patch(
        ns,
        &PatchParams::apply(SEED_MANAGER).force(),
        &Patch::Apply(&body),
    )
    .await?;
    Ok(())
}

struct Args(BTreeMap<String, String>);

impl Args {
    fn parse(rest: &[String]) -> Result<Self> {
        let mut m = BTreeMap::new();
        let mut it = rest.iter();
        while let Some(k) = it.next() {
            let Some(k) = k.strip_prefix("--") else {
                bail!("unexpected argument {k}")
            };
            let v = it.next().with_context(|| format!("--{k} needs a value"))?;
            m.insert(k.to_string(), v.clone());
        }
        Ok(Args(m))
    }
    fn str(&self, k: &str) -> Result<&str> {
        self.0
            .get(k)
            .map(String::as_str)
            .with_context(|| format!("missing --{k}"))
    }
    fn num(&self, k: &str) -> Result<usize> {
        Ok(self.str(k)?.parse()?)
    }
}

/// Items per page of a metadata LIST, as the provider asks for them.
const PAGE_SIZE: u32 = tfsveltos::k8s::io::PAGE_SIZE;
/// The label of the credential Secrets the bridge lists by default (`keys::CLUSTER_PROFILE_LABEL` in src/api).
const CREDENTIAL_LABEL: &str = "x-k8s.io/cluster-profile";

/// What one collection's reads cost: requests and bytes of the answers.
#[derive(Default)]
struct Read {
    requests: usize,
    bytes: usize,
}

/// One request's answer, whole (an error answer fails the read, but a 404 of a GET, which is an answer too).
async fn answer(client: &Client, req: http::Request<Vec<u8>>) -> Result<String> {
    match client.request_text(req).await {
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(String::new()),
        other => Ok(other?),
    }
}

/// A LIST of whole objects, as the provider makes it: one request, not paginated (the API server answers it from
/// its watch cache; src/k8s/io/list.rs, `list_each`).
async fn list_objects(client: &Client, url: &str, lp: &ListParams) -> Result<Read> {
    let body = answer(client, Request::new(url).list(lp)?).await?;
    Ok(Read {
        requests: 1,
        bytes: body.len(),
    })
}

/// A metadata LIST, as the provider makes it: page by page, `first` items in the first page and [`PAGE_SIZE`] in
/// each after it, each page asked for once the previous one's continue token is known (src/k8s/io/list.rs,
/// `list_metadata_each`; a refresh asks for all the bridge owns in its first page, `ReadBudget::first_page`). Of
/// each answer only the continue token is decoded.
async fn list_metadata_pages(
    client: &Client,
    url: &str,
    base: &ListParams,
    first: u32,
) -> Result<Read> {
    let mut read = Read::default();
    let mut token: Option<String> = None;
    loop {
        let limit = if token.is_none() { first } else { PAGE_SIZE };
        let mut lp = base.clone().limit(limit);
        if let Some(t) = &token {
            lp = lp.continue_token(t);
        }
        let body = answer(client, Request::new(url).list_metadata(&lp)?).await?;
        read.requests += 1;
        read.bytes += body.len();
        let page: ObjectList<IgnoredAny> =
            serde_json::from_str(&body).context("a metadata LIST answer")?;
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(next) => token = Some(next),
            None => return Ok(read),
        }
    }
}

/// The reads a correct no-change plan of the bridge `bridge` selecting namespace `ns` cannot avoid, issued all at
/// once (each metadata LIST's pages one after the other): the ClusterProfiles of `ns`, the metadata of its
/// labelled credential Secrets, the bridge's SveltosClusters and its Secrets' metadata (selected by its label),
/// and its claim ConfigMap. The URLs, selectors and pagination are the provider's (src/runtime/snapshot.rs,
/// src/runtime/inventory.rs, src/k8s/credentials.rs, src/k8s/claim.rs); the bodies the provider reads after the
/// metadata LISTs, and the decoding of every answer, are left out: they are the provider's own choice of work.
async fn read_floor(
    client: &Client,
    ns: &str,
    bridge: &str,
    claim_ns: &str,
    (owned_first, labelled_first): (u32, u32),
) -> Result<(Read, Read)> {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::Resource;
    let (all, labelled) = (
        ListParams::default(),
        ListParams::default().labels(CREDENTIAL_LABEL),
    );
    let owner = ListParams::default().labels(&format!("{BRIDGE_LABEL}={bridge}"));
    let profiles_url = DynamicObject::url_path(&profile_ar(), Some(ns));
    let clusters_url = DynamicObject::url_path(&sveltos_ar(), Some(ns));
    let secrets_url = Secret::url_path(&(), Some(ns));
    let claim_url = ConfigMap::url_path(&(), Some(claim_ns));
    let claim = format!("sveltos-bridge-{bridge}");
    let (profiles, credentials, clusters, owned, claim) = futures::try_join!(
        list_objects(client, &profiles_url, &all),
        list_metadata_pages(client, &secrets_url, &labelled, labelled_first),
        list_objects(client, &clusters_url, &owner),
        list_metadata_pages(client, &secrets_url, &owner, owned_first),
        async {
            let body = answer(
                client,
                Request::new(&claim_url).get(&claim, &GetParams::default())?,
            )
            .await?;
            anyhow::Ok(Read {
                requests: 1,
                bytes: body.len(),
            })
        },
    )?;
    let lists = [profiles, credentials, clusters, owned];
    let list = Read {
        requests: lists.iter().map(|r| r.requests).sum(),
        bytes: lists.iter().map(|r| r.bytes).sum(),
    };
    Ok((list, claim))
}

/// How many profiles `mutate` relabels, and how many it deletes (1 %, at least one).
fn one_percent(n: usize) -> usize {
    (n / 100).max(1)
}

#[tokio::main]
async fn main() -> Result<()> {
    let argv: Vec<String> = std::env::args().collect();
    let Some(cmd) = argv.get(1) else {
        bail!("usage: bench-limit seed|mutate|limit|unlimit|clean|wipe --ns NS ...")
    };
    let args = Args::parse(&argv[2..])?;
    // The provider's stack, with kube's retry of 429/503/504 answers left on (`Client::try_default` has it; seeding right
    // after the CRDs are installed meets "storage is (re)initializing").
    let client = tfsveltos::k8s::io::client_of(
        kube::Config::infer()
            .await
            .context("connecting (KUBECONFIG)")?,
    )?;
    let ns = args.str("ns")?.to_string();
    let profiles: Api<DynamicObject> = Api::namespaced_with(client.clone(), &ns, &profile_ar());
    let clusters: Api<DynamicObject> = Api::namespaced_with(client.clone(), &ns, &sveltos_ar());
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &ns);
    match cmd.as_str() {
        "seed" => {
            let n = args.num("n")?;
            let only = args
                .0
                .get("only")
                .map(|s| s.parse())
                .transpose()?
                .unwrap_or(n)
                .min(n);
            ensure_namespace(&client, &ns).await?;
            stream::iter(0..only)
                .map(|i| {
                    let (profiles, secrets, ns) = (&profiles, &secrets, &ns);
                    async move {
                        apply_body(secrets, &access_secret(ns, i), SEED_MANAGER).await?;
                        apply_body(profiles, &profile_body(ns, i, false), SEED_MANAGER).await
                    }
                })
                .buffer_unordered(CONCURRENCY)
                .try_collect::<Vec<()>>()
                .await?;
            if let Some(path) = args.0.get("vars") {
                let vars: BTreeMap<String, String> = (0..n)
                    .map(|i| (format!("{ns}/{}", name(i)), kubeconfig(i)))
                    .collect();
                std::fs::write(path, serde_json::to_vec(&json!({ "kubeconfigs": vars }))?)?;
            }
        }
        "mutate" => {
            let n = args.num("n")?;
            let k = one_percent(n);
            stream::iter(0..(2 * k).min(n))
                .map(|i| {
                    let (profiles, ns) = (&profiles, &ns);
                    async move {
                        if i < k {
                            apply_body(profiles, &profile_body(ns, i, true), SEED_MANAGER).await
                        } else {
                            profiles.delete(&name(i), &DeleteParams::default()).await?;
                            Ok(())
                        }
                    }
                })
                .buffer_unordered(CONCURRENCY)
                .try_collect::<Vec<()>>()
                .await?;
        }
        "limit" => {
            let n = args.num("n")?;
            let bridge = args.str("bridge")?.to_string();
            let start = Instant::now();
            stream::iter(0..n)
                .map(|i| {
                    let (clusters, secrets, ns, bridge) = (&clusters, &secrets, &ns, &bridge);
                    async move {
                        apply_body(secrets, &bridge_secret(ns, i, bridge), LIMIT_MANAGER).await?;
                        apply_body(clusters, &bridge_cluster(ns, i, bridge), LIMIT_MANAGER).await
                    }
                })
                .buffer_unordered(CONCURRENCY)
                .try_collect::<Vec<()>>()
                .await?;
            let secs = start.elapsed().as_secs_f64();
            println!("{}", json!({ "seconds": secs, "writes": 2 * n }));
        }
        "unlimit" => {
            let n = args.num("n")?;
            let start = Instant::now();
            stream::iter(0..n)
                .map(|i| {
                    let (clusters, secrets) = (&clusters, &secrets);
                    async move {
                        clusters.delete(&name(i), &DeleteParams::default()).await?;
                        secrets
                            .delete(
                                &format!("{}-sveltos-kubeconfig", name(i)),
                                &DeleteParams::default(),
                            )
                            .await?;
                        anyhow::Ok(())
                    }
                })
                .buffer_unordered(CONCURRENCY)
                .try_collect::<Vec<()>>()
                .await?;
            let secs = start.elapsed().as_secs_f64();
            println!("{}", json!({ "seconds": secs, "writes": 2 * n }));
        }
        "clean" => {
            delete_all(&clusters, &ListParams::default()).await?;
            let not_seeded = ListParams::default().labels("!x-k8s.io/cluster-profile");
            delete_all(&secrets, &not_seeded).await?;
        }
        "wipe" => {
            let lp = ListParams::default();
            delete_all(&clusters, &lp).await?;
            delete_all(&profiles, &lp).await?;
            delete_all(&secrets, &lp).await?;
        }
        "reads" => {
            let bridge = args.str("bridge")?.to_string();
            let claim_ns = args.str("claim-namespace")?.to_string();
            let start = Instant::now();
            // As a refresh of a bridge of `n` clusters asks (its ledger records 2n objects).
            let n = args.num("n")?;
            let owned_first = tfsveltos::k8s::io::first_page_items(2 * n + 1);
            // As the credential read asks, expecting one labelled Secret per profile (`list_metadata_expecting`).
            let labelled_first = tfsveltos::k8s::io::first_page_items(n + 1);
            let first = (owned_first, labelled_first);
            let (list, get) = read_floor(&client, &ns, &bridge, &claim_ns, first).await?;
            let secs = start.elapsed().as_secs_f64();
            let requests = json!({ "LIST": list.requests, "GET": get.requests });
            println!(
                "{}",
                json!({ "seconds": secs, "requests": requests, "bytes": list.bytes + get.bytes })
            );
        }
        other => bail!("unknown command {other}"),
    }
    Ok(())
}

/// Deletes every object `lp` selects, however many: a DELETE of a collection of tens of thousands can outlast the
/// API server's request timeout, which closes the connection while the deletion goes on; so it is asked again
/// until a LIST finds none left.
async fn delete_all<K>(api: &Api<K>, lp: &ListParams) -> Result<()>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    for _ in 0..60 {
        if let Err(e) = api.delete_collection(&DeleteParams::default(), lp).await {
            eprintln!("bench-limit: a delete of a collection failed ({e}); asking again");
        }
        if api
            .list_metadata(&lp.clone().limit(1))
            .await?
            .items
            .is_empty()
        {
            return Ok(());
        }
        tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    }
    bail!("objects are left after 60 deletes of their collection")
}
