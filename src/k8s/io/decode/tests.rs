use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::core::PartialObjectMeta;
use serde_json::json;

use super::*;
use crate::{api::SveltosCluster, domain::FIELD_MANAGER};

/// A `fieldsV1` value nested `depth` levels, as a client may store it (text: `serde_json` itself cannot build one
/// this deep).
fn deep(depth: usize) -> String {
    format!("{}{{}}{}", "{\"f:a\":".repeat(depth), "}".repeat(depth))
}

/// A `managedFields` entry of `manager` with `fields` (JSON text).
fn entry(manager: &str, operation: &str, fields: &str) -> String {
    format!(
        r#"{{"manager":"{manager}","operation":"{operation}","apiVersion":"v1","time":"2026-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":{fields}}}"#
    )
}

fn secret_text(name: &str, managed: &[String]) -> String {
    format!(
        r#"{{"apiVersion":"v1","kind":"Secret","metadata":{{"name":"{name}","namespace":"n","uid":"u-{name}","labels":{{"x-k8s.io/cluster-profile":"p"}},"managedFields":[{}]}},"data":{{"k":"dg=="}}}}"#,
        managed.join(",")
    )
}

fn decode_list<K: DeserializeOwned + Resource>(body: &str) -> (Vec<K>, Vec<Undecodable>, ListMeta) {
    let (mut got, mut bad, mut sizes) = (Vec::new(), Vec::new(), 0usize);
    let meta = decode_items::<K>(body, &mut |b| got.extend(b), &mut bad, &mut |_, n| {
        sizes += n
    })
    .expect("a list");
    assert!(sizes > 0 || got.is_empty() && bad.is_empty());
    (got, bad, meta)
}

#[test]
fn ten_thousand_levels_of_managed_fields_decode_and_are_skipped() {
    let hostile = secret_text("deep", &[entry("x", "Update", &deep(10_000))]);
    // The attack is real: a plain decode gives up.
    let plain = serde_json::from_str::<Secret>(&hostile).unwrap_err();
    assert!(plain.to_string().contains("recursion limit"), "{plain}");
    let s: Secret = decode_object(&hostile).unwrap();
    assert_eq!(s.metadata.name.as_deref(), Some("deep"));
    assert!(
        s.metadata.managed_fields.is_none(),
        "another manager's entry is dropped"
    );
    assert_eq!(s.data.unwrap()["k"].0, b"v");
    // Metadata only, and our own manager's entry nested as deep below an owned path: its key is kept.
    let ours = secret_text(
        "ours",
        &[entry(
            FIELD_MANAGER,
            "Apply",
            &format!(
                r#"{{"f:metadata":{{"f:labels":{{"f:env":{},"f:tier":{{}}}}}},"f:data":{}}}"#,
                deep(10_000),
                deep(10_000)
            ),
        )],
    );
    let m: PartialObjectMeta<Secret> = decode_object(&ours).unwrap();
    let mf = m.metadata.managed_fields.unwrap();
    assert_eq!(
        mf[0].fields_v1.as_ref().unwrap().0,
        json!({"f:metadata": {"f:labels": {"f:env": {}, "f:tier": {}}}})
    );
    assert_eq!(mf[0].time, None);
    // In a LIST: both decode, neighbours too.
    let body = format!(
        r#"{{"kind":"SecretList","items":[{hostile},{ours},{}]}}"#,
        secret_text("plain", &[])
    );
    let (got, bad, _) = decode_list::<Secret>(&body);
    assert!(bad.is_empty(), "{bad:?}");
    let names: Vec<_> = got
        .iter()
        .filter_map(|s| s.metadata.name.as_deref())
        .collect();
    assert_eq!(names, ["deep", "ours", "plain"]);
}

#[test]
fn a_deep_value_elsewhere_is_that_items_problem_named() {
    // A field the type holds as free JSON (a ClusterProfile's status extension) nested past any decoder's limit:
    // that item is set aside with its name and labels; the others decode.
    let item = |name: &str, ext: &str| {
        format!(
            r#"{{"metadata":{{"name":"{name}","namespace":"t","uid":"u","labels":{{"a":"b"}},"annotations":{{"c":"d"}},"managedFields":[{}]}},"spec":{{"clusterManager":{{"name":"m"}}}},"status":{{"accessProviders":[{{"name":"x","cluster":{{"server":"https://s","extensions":[{{"name":"e","extension":{ext}}}]}}}}]}}}}"#,
            entry("x", "Update", &deep(5_000))
        )
    };
    let body = format!(
        r#"{{"items":[{},{}]}}"#,
        item("bad", &deep(10_000)),
        item("good", "{}")
    );
    let (got, bad, _) = decode_list::<crate::api::ClusterProfile>(&body);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].metadata.name.as_deref(), Some("good"));
    assert_eq!(bad.len(), 1);
    assert_eq!(bad[0].id(), "t/bad");
    assert!(
        bad[0].reason.contains("recursion limit"),
        "{}",
        bad[0].reason
    );
    assert_eq!(bad[0].meta.uid.as_deref(), Some("u"));
    assert_eq!(bad[0].meta.labels.as_ref().unwrap()["a"], "b");
    assert_eq!(bad[0].meta.annotations.as_ref().unwrap()["c"], "d");
}

#[test]
fn unknown_fields_however_deep_are_skipped() {
    let text = format!(
        r#"{{"metadata":{{"name":"c","namespace":"n","x":{d}}},"spec":{{}},"extra":{d}}}"#,
        d = deep(10_000)
    );
    let sc: SveltosCluster = decode_object(&text).unwrap();
    assert_eq!(sc.metadata.name.as_deref(), Some("c"));
}

#[test]
fn a_repeated_metadata_or_managed_fields_is_refused() {
    // A reader taking the first copy and one taking the last would see different objects.
    for text in [
        format!(
            r#"{{"metadata":{{"name":"a","managedFields":[{}]}},"metadata":{{"name":"a"}}}}"#,
            entry("x", "Update", &deep(300))
        ),
        format!(
            r#"{{"metadata":{{"name":"a","managedFields":null,"managedFields":[{}]}}}}"#,
            entry("x", "Update", &deep(300))
        ),
    ] {
        let e = decode_object::<ConfigMap>(&text).unwrap_err();
        assert!(e.to_string().contains("duplicate field"), "{e}");
    }
    let dup_entry = r#"{"metadata":{"name":"a","managedFields":[{"manager":"a","manager":"b"}]}}"#;
    assert!(decode_object::<ConfigMap>(dup_entry).is_err());
}

#[test]
fn compaction_keeps_exactly_what_observation_reads() {
    let ours = json!({
        "f:metadata": {
            "f:labels": {".": {}, "f:env": {}, "f:sveltos.clusterinventory.io/bridge": {}},
            "f:annotations": {"f:a": {}},
            "f:finalizers": {".": {}, "v:\"x\"": {}}
        },
        "f:spec": {"f:kubeconfigName": {}, "f:activeWindow": {"f:from": {}, "f:to": {}},
                   "f:tokenRequestRenewalOption": {"f:renewTokenRequestInterval": {}}},
        "f:status": {"f:ready": {}}
    });
    let text = json!({
        "metadata": {"name": "c", "namespace": "n", "managedFields": [
            {"manager": "sveltos-controller", "operation": "Update", "fieldsV1": {"f:metadata": {"f:labels": {"f:x": {}}}}},
            {"manager": FIELD_MANAGER, "operation": "Apply", "fieldsV1": ours, "time": "2026-01-01T00:00:00Z"},
            {"manager": FIELD_MANAGER, "operation": "Update", "fieldsV1": {"f:status": {}}},
            {"manager": FIELD_MANAGER, "operation": "Apply", "fieldsV1": {"f:metadata": 3, "f:spec": []}}
        ]},
        "spec": {}
    })
    .to_string();
    let sc: SveltosCluster = decode_object(&text).unwrap();
    let mf = sc.metadata.managed_fields.unwrap();
    assert_eq!(mf.len(), 2, "only our Apply entries stay");
    assert_eq!(
        mf[0].fields_v1.as_ref().unwrap().0,
        json!({
            "f:metadata": {
                "f:labels": {"f:env": {}, "f:sveltos.clusterinventory.io/bridge": {}},
                "f:annotations": {"f:a": {}}
            },
            "f:spec": {"f:kubeconfigName": {}, "f:activeWindow": {},
                       "f:tokenRequestRenewalOption": {"f:renewTokenRequestInterval": {}}}
        })
    );
    assert_eq!(mf[1].fields_v1.as_ref().unwrap().0, json!({}));
    // What the bridge observes is what it would observe of the whole object.
    let mut whole: SveltosCluster = serde_json::from_str(&text).unwrap();
    whole.metadata.labels = Some([("env".to_string(), "prod".to_string())].into());
    let compacted: SveltosCluster = decode_object(&serde_json::to_string(&whole).unwrap()).unwrap();
    assert_eq!(
        crate::domain::observed::observe_cluster(&compacted),
        crate::domain::observed::observe_cluster(&whole)
    );
    // Nobody applied with our manager: the field is gone.
    let other = r#"{"metadata":{"name":"d","managedFields":[{"manager":"kubectl","operation":"Apply","fieldsV1":{"f:spec":{}}}]},"spec":{}}"#;
    assert!(
        decode_object::<SveltosCluster>(other)
            .unwrap()
            .metadata
            .managed_fields
            .is_none()
    );
}

#[test]
fn a_list_body_is_decoded_in_batches_with_its_continue_token() {
    let item = |i: usize| {
        json!({
            "metadata": {
                "name": format!("c{i}"),
                "managedFields": [{"manager": "someone-else", "operation": "Update", "fieldsV1": {"f:data": {}}}]
            },
            "data": {"k": "v"}
        })
    };
    let items: Vec<_> = (0..1201).map(item).collect();
    let body = json!({
        "kind": "ConfigMapList",
        "metadata": {"resourceVersion": "7", "continue": "next-page"},
        "items": items,
        "extra": [1, 2, {"x": null}]
    })
    .to_string();
    let (mut batches, mut bad) = (Vec::new(), Vec::new());
    let meta = decode_items::<ConfigMap>(&body, &mut |b| batches.push(b), &mut bad, &mut |_, _| {})
        .unwrap();
    assert_eq!(meta.next.as_deref(), Some("next-page"));
    let sizes: Vec<usize> = batches.iter().map(Vec::len).collect();
    assert_eq!(sizes, [500, 500, 201]);
    assert_eq!(batches[2][200].metadata.name.as_deref(), Some("c1200"));
    assert!(
        batches
            .iter()
            .flatten()
            .all(|c| c.metadata.managed_fields.is_none())
    );

    let (none, _, meta) = decode_list::<ConfigMap>(
        r#"{"kind":"ConfigMapList","metadata":{"continue":""},"items":null}"#,
    );
    assert!(none.is_empty() && meta.next.is_none());
    for bad_body in [
        r#"{"kind":"Status"}"#,
        r#"{"items":[]} x"#,
        "[]",
        r#"{"items":[],"items":[]}"#,
    ] {
        let r = decode_items::<ConfigMap>(bad_body, &mut |_| {}, &mut Vec::new(), &mut |_, _| {});
        assert!(r.is_err(), "{bad_body}");
    }
    // A bad item is set aside with its name, the others decode; every item's size is told, by namespace.
    let (mut got, mut bad, mut sizes) = (Vec::new(), Vec::new(), BTreeMap::new());
    decode_items::<ConfigMap>(
        r#"{"items":[{"metadata":{"name":"a","namespace":"n"}},{"metadata":{"name":"b","namespace":"n"},"data":{"k":3}},{"metadata":{"name":"c","namespace":"o"}},{"metadata":3}]}"#,
        &mut |b| got.extend(b),
        &mut bad,
        &mut |ns: &str, n| *sizes.entry(ns.to_string()).or_insert(0) += n,
    )
    .unwrap();
    let names: Vec<_> = got.iter().filter_map(|c| c.metadata.name.clone()).collect();
    assert_eq!(names, ["a", "c"]);
    assert_eq!(bad.len(), 2);
    assert_eq!(bad[0].id(), "n/b");
    assert!(bad[0].reason.contains("invalid type"), "{}", bad[0].reason);
    assert_eq!(bad[1].id(), "/");
    assert_eq!(sizes.keys().collect::<Vec<_>>(), ["", "n", "o"]);
}

/// With an [`ItemCap`], an item longer than the cap is set aside without being decoded: what is kept of it is its
/// identity and the labels and annotations the cap names (never its bulk), and its bytes are reported apart (the
/// run's budget does not count them); the items around it decode as usual.
#[test]
fn an_item_over_the_cap_is_set_aside_with_its_identity_only() {
    let bulk: serde_json::Map<String, serde_json::Value> = (0..2000)
        .map(|i| (format!("tenant.example.com/k{i:04}"), json!("v".repeat(60))))
        .collect();
    let mut labels = bulk.clone();
    labels.insert("owner".into(), json!("main"));
    let big = json!({"metadata": {"name": "big", "namespace": "n", "uid": "u-big", "labels": labels,
        "annotations": {"mark": "m1", "other": "x".repeat(300)}}, "data": {}});
    let small = |name: &str| json!({"metadata": {"name": name, "namespace": "n", "labels": {"owner": "main"}}});
    let body =
        json!({"kind": "ConfigMapList", "metadata": {}, "items": [small("a"), big, small("b")]})
            .to_string();
    let cap = ItemCap {
        bytes: 64 << 10,
        keep: &["owner", "mark"],
    };
    let (mut got, mut bad, mut told) = (Vec::<ConfigMap>::new(), Vec::new(), 0usize);
    let meta = decode_items_capped(
        &body,
        &mut |b| got.extend(b),
        &mut bad,
        &mut |_, n| told += n,
        Keep {
            cap: Some(cap),
            managed: true,
        },
    )
    .unwrap();
    let names: Vec<_> = got.iter().filter_map(|c| c.metadata.name.clone()).collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(bad.len(), 1);
    let u = &bad[0];
    assert_eq!(
        (u.id().as_str(), u.meta.uid.as_deref()),
        ("n/big", Some("u-big"))
    );
    assert_eq!(
        u.meta.labels,
        Some(BTreeMap::from([("owner".to_string(), "main".to_string())]))
    );
    assert_eq!(
        u.meta.annotations,
        Some(BTreeMap::from([("mark".to_string(), "m1".to_string())]))
    );
    assert!(u.reason.contains("over the 64 KiB"), "{}", u.reason);
    assert!(meta.oversized_bytes > 64 << 10);
    assert!(told + meta.oversized_bytes <= body.len() && told > 0);
    // Without a cap, the same item decodes.
    let (all, none, _) = decode_list::<ConfigMap>(&body);
    assert_eq!((all.len(), none.len()), (3, 0));
}

#[test]
fn managed_fields_are_cut_out_unread_where_nobody_reads_them() {
    let ours = entry(
        FIELD_MANAGER,
        "Apply",
        r#"{"f:metadata":{"f:labels":{"f:env":{}}}}"#,
    );
    let deep_other = entry("x", "Update", &deep(10_000));
    let body = format!(
        r#"{{"kind":"SecretList","items":[{}]}}"#,
        secret_text("s", &[ours, deep_other])
    );
    let decode = |managed| {
        let mut got = Vec::<Secret>::new();
        let keep = Keep { cap: None, managed };
        decode_items_capped(
            &body,
            &mut |b| got.extend(b),
            &mut Vec::new(),
            &mut |_, _| {},
            keep,
        )
        .unwrap();
        got.pop().expect("the Secret decodes")
    };
    // Kept where it is read: our entry alone.
    let kept = decode(true).metadata.managed_fields.expect("our entry");
    assert_eq!(kept.len(), 1);
    // Cut out where it is not: the object decodes all the same (depth-safe), without it.
    let cut = decode(false);
    assert_eq!(cut.metadata.name.as_deref(), Some("s"));
    assert_eq!(cut.data.unwrap()["k"].0, b"v");
    assert!(cut.metadata.managed_fields.is_none());
    // Which kinds are read: the bridge's SveltosClusters only.
    assert!(crate::domain::observed::reads_managed_fields(
        "SveltosCluster"
    ));
    assert!(!crate::domain::observed::reads_managed_fields("Secret"));
    assert!(!crate::domain::observed::reads_managed_fields(
        "ClusterProfile"
    ));
}
