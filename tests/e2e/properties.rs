//! Issue 35, item 8: inventory facts into Sveltos (`copy_properties`) with OpenTofu. The properties a ClusterProfile
//! reports in `status.properties` and its `status.version.kubernetes` become labels and `spec.data` entries of its
//! SveltosCluster, as the API server stores them; a value that is no label value is data only, with a warning naming
//! the cluster; a label of the ClusterProfile cannot stand in for a property; and a changed property shows in one
//! plan, as the label and the data entry old -> new, and is applied. A property written through
//! `multicluster.x-k8s.io/v1alpha2` (the same shape as v1alpha1's) is mapped the same.

use std::collections::BTreeMap;

use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use serde_json::{Value as Json, json};
use support::inventory::{
    Inv, apply_ok, bridge, clusters_change, flat, labels_of, one_diagnostic, run,
};
use support::{Cli, fixtures, unique_namespace};
use tfsveltos::api::v1alpha2::V1ALPHA2;

const PLAN_OUT: &[&str] = &["plan", "-input=false", "-no-color", "-out=tfplan"];
const LOCATION: &str = "property.clusterinventory.io/location";
const ZONE: &str = "property.clusterinventory.io/zone";
const VERSION: &str = "property.clusterinventory.io/kubernetes-version";

/// A status reporting `location`, a `zone` that is no label value (a space), a property the bridge does not read,
/// and the Kubernetes version.
fn status(location: &str) -> Json {
    json!({
        "properties": [
            {"name": "location", "value": location},
            {"name": "zone", "value": "rack 7"},
            {"name": "unlisted", "value": "not read"},
        ],
        "version": {"kubernetes": "v1.31.2"},
    })
}

/// `(labels, spec.data)` of SveltosCluster `ns/name` as the API server stores it.
async fn stored(
    inv: &Inv,
    ns: &str,
    name: &str,
) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    let sc = inv
        .sc(ns, name)
        .await
        .unwrap_or_else(|| panic!("SveltosCluster {ns}/{name} exists"));
    let data = sc.spec.data.clone().unwrap_or_default();
    (labels_of(&sc), data)
}

/// Whether the human plan `out` shows `field` going from `old` to `new`.
fn shows(out: &str, field: &str, old: &str, new: &str) -> bool {
    out.lines().map(str::trim).any(|l| {
        l.starts_with(&format!("~ \"{field}\" "))
            && l.ends_with(&format!("= \"{old}\" -> \"{new}\""))
    })
}

/// Properties become labels (valid label values) and `spec.data` (every value), with the version; a change of
/// one property is one plan showing the label and the data entry old -> new, applied as planned.
#[tokio::test(flavor = "multi_thread")]
async fn properties_become_labels_and_data_and_a_change_shows_in_one_plan() {
    let inv = Inv::new().await;
    let kc = fixtures::unreachable_kubeconfig("t");
    let ns = unique_namespace(&inv.client, "props").await;
    // p0's own label under the prefix is never copied: the property decides (`zone` has no label anyway).
    inv.profile_with_secret(
        &ns,
        "p0",
        &[(ZONE, "forged"), ("env", "prod")],
        status("eu-west-1"),
        &kc,
    )
    .await;
    inv.profile_with_secret(&ns, "p1", &[], status("us-east-1"), &kc)
        .await;
    let body = bridge(
        &ns,
        &[&ns],
        "  data = { team = \"a\" }\n  copy_properties {\n    names = [\"location\", \"zone\"]\n    \
         kubernetes_version_as = \"kubernetes-version\"\n  }",
    );
    let tf = inv.tf(&Cli::tofu(), &body);
    let out = apply_ok(&tf);
    let warning = flat(one_diagnostic(&out, "Warning", "not a valid label value"));
    for p in ["p0", "p1"] {
        assert!(
            warning.contains(&format!("- {ns}/{p}: zone = \"rack 7\"")),
            "{warning}"
        );
    }
    let (labels, data) = stored(&inv, &ns, "p0").await;
    assert_eq!(labels.get(LOCATION).map(String::as_str), Some("eu-west-1"));
    assert_eq!(labels.get(VERSION).map(String::as_str), Some("v1.31.2"));
    assert_eq!(labels.get("env").map(String::as_str), Some("prod"));
    assert!(!labels.contains_key(ZONE), "{labels:?}");
    assert!(!labels.keys().any(|k| k.contains("unlisted")), "{labels:?}");
    assert_eq!(
        data,
        BTreeMap::from([
            ("kubernetes-version".to_string(), "v1.31.2".to_string()),
            ("location".to_string(), "eu-west-1".to_string()),
            ("team".to_string(), "a".to_string()),
            ("zone".to_string(), "rack 7".to_string()),
        ])
    );
    assert_eq!(tf.plan(), 0, "the plan after the apply is empty");

    inv.profile_status(&ns, "p0", status("eu-central-1")).await;
    let (ok, out) = run(&tf, PLAN_OUT);
    assert!(ok, "{out}");
    let summary = flat(one_diagnostic(&out, "Warning", "Bridge plan:"));
    assert!(
        summary.contains("0 to register, 1 to update, 0 to deregister, 0 skipped, 1 unchanged")
            && summary.contains(&format!("To update: {ns}/p0 (labels, data).")),
        "{summary}"
    );
    assert!(shows(&out, LOCATION, "eu-west-1", "eu-central-1"), "{out}");
    assert!(
        shows(&out, "location", "eu-west-1", "eu-central-1"),
        "{out}"
    );
    let (before, after) = clusters_change(&tf);
    let p0 = format!("{ns}/p0");
    assert_eq!(before[&p0]["labels"][LOCATION], "eu-west-1");
    assert_eq!(after[&p0]["labels"][LOCATION], "eu-central-1");
    assert_eq!(before[&p0]["data"]["location"], "eu-west-1");
    assert_eq!(after[&p0]["data"]["location"], "eu-central-1");
    assert_eq!(after[&p0]["data"]["zone"], "rack 7");
    let p1 = format!("{ns}/p1");
    assert_eq!(before[&p1], after[&p1], "the other cluster does not change");

    let (ok, out) = run(&tf, &["apply", "-input=false", "-no-color", "tfplan"]);
    assert!(ok, "{out}");
    let (labels, data) = stored(&inv, &ns, "p0").await;
    assert_eq!(
        labels.get(LOCATION).map(String::as_str),
        Some("eu-central-1")
    );
    assert_eq!(
        data.get("location").map(String::as_str),
        Some("eu-central-1")
    );
    assert_eq!(tf.plan(), 0, "the plan after the apply is empty");

    // Written through v1alpha2 (stored as v1alpha1, which the bridge reads): the same shape, mapped the same.
    let gvk = GroupVersionKind::gvk("multicluster.x-k8s.io", V1ALPHA2, "ClusterProfile");
    let ar = ApiResource::from_gvk_with_plural(&gvk, "clusterprofiles");
    Api::<DynamicObject>::namespaced_with(inv.client.clone(), &ns, &ar)
        .patch_status(
            "p1",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"status": {"properties": [{"name": "location", "value": "ap-south-1"}]}}),
            ),
        )
        .await
        .expect("patching the status through v1alpha2");
    apply_ok(&tf);
    let (labels, data) = stored(&inv, &ns, "p1").await;
    assert_eq!(labels.get(LOCATION).map(String::as_str), Some("ap-south-1"));
    assert!(
        !data.contains_key("zone"),
        "a property no longer reported goes: {data:?}"
    );
}
