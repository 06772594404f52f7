//! The test control plane enforces the upstream CRDs (`testenv/crds`, compared keyword by keyword with upstream by
//! `plugin/crds.rs`): what a real API server with the upstream ClusterProfile and SveltosCluster CRDs refuses, it
//! refuses (the KEP-5339 additional-args extension as a list, `workloadIdentity` beside `kubeconfigName`, a change
//! of `pullMode` or of the cluster manager, a bad enum value, v1alpha2's CEL rules), and it defaults what upstream
//! defaults (`consecutiveFailureThreshold: 3`, `pullMode: false`, `connectionFailures: 0`).

use kube::api::{
    Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams,
};
use serde_json::{Value as Json, json};
use support::{TestEnv, unique_namespace};
use tfsveltos::api::keys;

fn api(
    client: &kube::Client,
    ns: &str,
    group: &str,
    version: &str,
    kind: &str,
) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk(group, version, kind);
    let plural = format!("{}s", kind.to_lowercase());
    Api::namespaced_with(
        client.clone(),
        ns,
        &ApiResource::from_gvk_with_plural(&gvk, &plural),
    )
}

fn profiles(client: &kube::Client, ns: &str, version: &str) -> Api<DynamicObject> {
    api(
        client,
        ns,
        "multicluster.x-k8s.io",
        version,
        "ClusterProfile",
    )
}

fn clusters(client: &kube::Client, ns: &str) -> Api<DynamicObject> {
    api(
        client,
        ns,
        "lib.projectsveltos.io",
        "v1beta1",
        "SveltosCluster",
    )
}

/// `body` (an object without `metadata`) named `name`, created through `api`.
async fn create(api: &Api<DynamicObject>, name: &str, body: Json) -> kube::Result<DynamicObject> {
    let mut body = body;
    body["metadata"] = json!({ "name": name });
    let object: DynamicObject = serde_json::from_value(body).expect("an object");
    api.create(&PostParams::default(), &object).await
}

async fn merge(api: &Api<DynamicObject>, name: &str, patch: Json) -> kube::Result<DynamicObject> {
    api.patch(name, &PatchParams::default(), &Patch::Merge(patch))
        .await
}

async fn merge_status(
    api: &Api<DynamicObject>,
    name: &str,
    status: Json,
) -> kube::Result<DynamicObject> {
    api.patch_status(
        name,
        &PatchParams::default(),
        &Patch::Merge(json!({ "status": status })),
    )
    .await
}

/// The API server refused the write as invalid (422), naming `needle` (a field path or the reason).
fn refused(what: &str, result: kube::Result<DynamicObject>, needle: &str) {
    match result {
        Err(kube::Error::Api(s)) if s.code == 422 => {
            assert!(
                s.message.contains(needle),
                "{what}: refused, but not for {needle}: {}",
                s.message
            )
        }
        Err(e) => panic!("{what}: refused otherwise than as invalid: {e}"),
        Ok(o) => panic!(
            "{what}: accepted, as upstream's CRD would not: {:?}",
            o.data
        ),
    }
}

fn accepted(what: &str, result: kube::Result<DynamicObject>) -> DynamicObject {
    result.unwrap_or_else(|e| panic!("{what}: refused: {e}"))
}

fn profile_body(api_version: &str, manager: &str) -> Json {
    json!({
        "apiVersion": format!("multicluster.x-k8s.io/{api_version}"),
        "kind": "ClusterProfile",
        "spec": { "clusterManager": { "name": manager } }
    })
}

/// An access provider reaching `server`, with `extensions`.
fn provider(name: &str, server: &str, extensions: Json) -> Json {
    json!({ "name": name, "cluster": { "server": server, "extensions": extensions } })
}

fn condition(status: &str) -> Json {
    json!({ "type": keys::CONTROL_PLANE_HEALTHY, "status": status, "reason": "Probe", "message": "",
            "lastTransitionTime": "2026-01-01T00:00:00Z" })
}

#[tokio::test(flavor = "multi_thread")]
async fn clusterprofile_v1alpha1_refuses_what_upstream_refuses() {
    let client = TestEnv::get().client().await;
    let ns = unique_namespace(&client, "crd-cp1").await;
    let v1 = profiles(&client, &ns, "v1alpha1");
    accepted(
        "a profile",
        create(&v1, "p", profile_body("v1alpha1", "fleet")).await,
    );
    let args = |extension: Json| {
        json!({ "accessProviders": [provider("tok", "https://api.example:6443",
            json!([{ "name": keys::ADDITIONAL_ARGS_EXTENSION, "extension": extension }]))] })
    };
    refused(
        "KEP-5339 additional-args as a list",
        merge_status(&v1, "p", args(json!(["--region", "eu"]))).await,
        "must be of type object",
    );
    accepted(
        "KEP-5339 additional-args as an object",
        merge_status(&v1, "p", args(json!({ "args": ["--region", "eu"] }))).await,
    );
    let twice = json!([
        provider("tok", "https://a.example", json!([])),
        provider("tok", "https://b.example", json!([]))
    ]);
    refused(
        "two access providers of one name",
        merge_status(&v1, "p", json!({ "accessProviders": twice })).await,
        "status.accessProviders[1]",
    );
    refused(
        "a condition status out of its enum",
        merge_status(&v1, "p", json!({ "conditions": [condition("Yes")] })).await,
        "status.conditions[0].status",
    );
    accepted(
        "a condition as upstream has it",
        merge_status(&v1, "p", json!({ "conditions": [condition("True")] })).await,
    );
    refused(
        "a property without a value",
        merge_status(
            &v1,
            "p",
            json!({ "properties": [{ "name": "location", "value": "" }] }),
        )
        .await,
        "status.properties[0].value",
    );
    refused(
        "a new cluster manager",
        merge(
            &v1,
            "p",
            json!({ "spec": { "clusterManager": { "name": "other" } } }),
        )
        .await,
        "spec.clusterManager",
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn clusterprofile_v1alpha2_refuses_what_upstream_v1alpha2_refuses() {
    let client = TestEnv::get().client().await;
    let ns = unique_namespace(&client, "crd-cp2").await;
    let v2 = profiles(&client, &ns, "v1alpha2");
    refused(
        "a cluster manager name that is no label value",
        create(&v2, "bad", profile_body("v1alpha2", "not a label!")).await,
        "spec.clusterManager.name",
    );
    accepted(
        "a profile",
        create(&v2, "p", profile_body("v1alpha2", "fleet")).await,
    );
    let offer = |providers: Json| merge_status(&v2, "p", json!({ "accessProviders": providers }));
    let with_proxy = |proxy: &str| json!([{ "name": "tok", "cluster": { "server": "https://api.example", "proxy-url": proxy } }]);
    refused(
        "a server without a host",
        offer(json!([provider("tok", "not-a-url", json!([]))])).await,
        "status.accessProviders[0].cluster.server",
    );
    refused(
        "a proxy-url of another scheme",
        offer(with_proxy("ftp://proxy.example")).await,
        "status.accessProviders[0].cluster.proxy-url",
    );
    accepted(
        "a socks5 proxy-url",
        offer(with_proxy("socks5://proxy.example:1080")).await,
    );
    refused(
        "an access provider without its cluster",
        offer(json!([{ "name": "tok" }])).await,
        "status.accessProviders[0].cluster",
    );
    let many: Vec<Json> = (0..65)
        .map(|i| provider(&format!("p{i}"), "https://api.example", json!([])))
        .collect();
    refused(
        "65 access providers",
        offer(Json::Array(many)).await,
        "status.accessProviders",
    );
    let ext = json!({ "name": keys::EXEC_EXTENSION, "extension": {} });
    refused(
        "two extensions of one name",
        offer(json!([provider(
            "tok",
            "https://api.example",
            json!([ext.clone(), ext.clone()])
        )]))
        .await,
        "status.accessProviders[0].cluster.extensions[1]",
    );
    accepted(
        "an access provider as upstream v1alpha2 has it",
        offer(json!([provider(
            "tok",
            "https://api.example:6443",
            json!([ext])
        )]))
        .await,
    );
}

fn cluster_body(spec: Json) -> Json {
    json!({ "apiVersion": "lib.projectsveltos.io/v1beta1", "kind": "SveltosCluster", "spec": spec })
}

#[tokio::test(flavor = "multi_thread")]
async fn sveltoscluster_defaults_and_refuses_as_upstream() {
    let client = TestEnv::get().client().await;
    let ns = unique_namespace(&client, "crd-sc").await;
    let sc = clusters(&client, &ns);
    let made = accepted(
        "a cluster",
        create(&sc, "c", cluster_body(json!({ "kubeconfigName": "c-kc" }))).await,
    );
    assert_eq!(
        made.data["spec"]["consecutiveFailureThreshold"], 3,
        "{:?}",
        made.data
    );
    assert_eq!(made.data["spec"]["pullMode"], false, "{:?}", made.data);
    let status = accepted(
        "a status",
        merge_status(&sc, "c", json!({ "ready": false })).await,
    );
    assert_eq!(
        status.data["status"]["connectionFailures"], 0,
        "{:?}",
        status.data
    );
    refused(
        "a change of pullMode",
        merge(&sc, "c", json!({ "spec": { "pullMode": true } })).await,
        "spec.pullMode",
    );
    refused(
        "a connection status out of its enum",
        merge_status(&sc, "c", json!({ "connectionStatus": "Maybe" })).await,
        "status.connectionStatus",
    );
    let identity = |provider: &str| json!({ "provider": provider, "endpoint": "https://eks.example", "aws": { "clusterName": "prod" } });
    refused(
        "workloadIdentity beside kubeconfigName",
        create(
            &sc,
            "both",
            cluster_body(json!({ "kubeconfigName": "x", "workloadIdentity": identity("AWS") })),
        )
        .await,
        "spec: Invalid value",
    );
    refused(
        "a workload identity provider out of its enum",
        create(
            &sc,
            "oracle",
            cluster_body(json!({ "workloadIdentity": identity("Oracle") })),
        )
        .await,
        "spec.workloadIdentity.provider",
    );
    refused(
        "aws settings with provider GCP",
        create(
            &sc,
            "gcp",
            cluster_body(json!({ "workloadIdentity": identity("GCP") })),
        )
        .await,
        "spec.workloadIdentity",
    );
    let wi = accepted(
        "a workload identity as upstream has it",
        create(
            &sc,
            "aws",
            cluster_body(json!({ "workloadIdentity": identity("AWS") })),
        )
        .await,
    );
    assert_eq!(wi.data["spec"].get("kubeconfigName"), None, "{:?}", wi.data);
}
