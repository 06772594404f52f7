use std::collections::BTreeMap;

use k8s_openapi::{api::core::v1::Secret, apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry};

use super::{observe::ANNOTATION_SHOWN, *};
use crate::api::{SveltosCluster, keys};
use crate::domain::{
    BridgeSpec,
    credentials::CredentialSource,
    desired::{Material, desired},
    testutil::*,
};
use crate::domain::{
    CREDENTIAL_SOURCE_ANNOTATION, FIELD_MANAGER,
    ownership::{Kind, Ledger, WrittenCredential},
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1;

#[test]
fn annotations_a_tenant_rewrote_reach_the_entry_escaped_and_bounded() {
    let mut secret = Secret::default();
    secret.metadata.namespace = Some("ns".into());
    secret.metadata.name = Some("c-sveltos-kubeconfig".into());
    secret.metadata.annotations = Some(BTreeMap::from([
        (
            CREDENTIAL_SOURCE_ANNOTATION.to_string(),
            format!("\u{1b}[2J\u{1b}]0;pwned\u{7}{}", "x".repeat(200_000)),
        ),
        (keys::EXPIRES_ANNOTATION.to_string(), "2030\n01".into()),
    ]));
    let observed = observe_secret(&secret);
    let source = observed.credential_source.unwrap();
    assert!(
        !source.contains('\u{1b}') && !source.contains('\u{7}'),
        "{source}"
    );
    assert!(source.len() < 2 * ANNOTATION_SHOWN, "{}", source.len());
    assert_eq!(observed.expires_at.as_deref(), Some("2030\\n01"));
    // What the bridge writes itself passes unchanged.
    secret.metadata.annotations = Some(BTreeMap::from([(
        CREDENTIAL_SOURCE_ANNOTATION.to_string(),
        "labelled Secret ns/c-kubeconfig#value".to_string(),
    )]));
    assert_eq!(
        observe_secret(&secret).credential_source.as_deref(),
        Some("labelled Secret ns/c-kubeconfig#value")
    );
}

/// The `f:spec` ownership our apply of `sc` records.
pub(crate) fn spec_fields(sc: &SveltosCluster) -> serde_json::Value {
    let v = serde_json::to_value(&sc.spec).unwrap();
    serde_json::Value::Object(
        v.as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| {
                let sub = match v.as_object() {
                    Some(o) if k == "tokenRequestRenewalOption" || k == "data" => {
                        serde_json::Value::Object(
                            o.keys()
                                .map(|k| (format!("f:{k}"), serde_json::json!({})))
                                .collect(),
                        )
                    }
                    _ => serde_json::json!({}),
                };
                (format!("f:{k}"), sub)
            })
            .collect(),
    )
}

/// Simulates what the API server records after our server-side apply of `obj`'s labels and annotations.
fn applied(mut sc: SveltosCluster) -> SveltosCluster {
    let f = |m: &Option<BTreeMap<String, String>>| {
        serde_json::Value::Object(
            m.iter()
                .flatten()
                .map(|(k, _)| (format!("f:{k}"), serde_json::json!({})))
                .collect(),
        )
    };
    sc.metadata.managed_fields = Some(vec![ManagedFieldsEntry {
        manager: Some(FIELD_MANAGER.into()),
        operation: Some("Apply".into()),
        fields_v1: Some(FieldsV1(serde_json::json!({
            "f:metadata": {"f:labels": f(&sc.metadata.labels), "f:annotations": f(&sc.metadata.annotations)},
            "f:spec": spec_fields(&sc)
        }))),
        ..Default::default()
    }]);
    sc
}

fn bridged() -> (BridgeSpec, crate::domain::desired::DesiredCluster) {
    let spec = BridgeSpec {
        name: "main".into(),
        ..Default::default()
    };
    let p = profile("ns", "c1", &[("a", "1")]);
    let src = CredentialSource::LabelledSecret {
        namespace: "ns".into(),
        name: "s".into(),
        key: "Config".into(),
    };
    let material = Material::Bytes {
        bytes: KUBECONFIG.as_bytes().to_vec(),
        expires_at: None,
        config_sha256: None,
    };
    let d = desired(&spec, &p, &src, &material, false);
    (spec, d)
}

#[test]
fn reading_back_what_was_written_gives_the_planned_entry() {
    let (_, d) = bridged();
    let mut sc = applied(*d.sveltos_cluster.clone().unwrap());
    // Fields others write never show: the k8s-version label, status, foreign annotations.
    sc.metadata
        .labels
        .as_mut()
        .unwrap()
        .insert(keys::SVELTOS_K8S_VERSION_LABEL.into(), "v1.37.2".into());
    sc.metadata
        .annotations
        .as_mut()
        .unwrap()
        .insert("other".into(), "x".into());
    sc.status = Some(Default::default());
    let w = Observed::build(
        "main",
        &crate::domain::ownership::Ledger::trusting(),
        &[sc],
        &[*d.secret.clone().unwrap()],
    );
    assert_eq!(w.entries(|_| false)["ns/c1"], d.entry);
}

#[test]
fn out_of_band_edits_show() {
    let (_, d) = bridged();
    let mut sc = applied(*d.sveltos_cluster.clone().unwrap());
    sc.metadata
        .labels
        .as_mut()
        .unwrap()
        .insert("a".into(), "edited".into());
    // Someone else takes over kubeconfigName (an Update moves ownership away from us) ...
    sc.spec.kubeconfig_name = Some("theirs".into());
    let mf = &mut sc.metadata.managed_fields.as_mut().unwrap()[0];
    mf.fields_v1.as_mut().unwrap().0["f:spec"]
        .as_object_mut()
        .unwrap()
        .remove("f:kubeconfigName");
    let mut secret = d.secret.clone().unwrap();
    secret
        .data
        .as_mut()
        .unwrap()
        .get_mut("kubeconfig")
        .unwrap()
        .0 = b"other".to_vec();
    let w = Observed::build(
        "main",
        &crate::domain::ownership::Ledger::trusting(),
        &[sc],
        &[*secret],
    );
    let e = &w.entries(|_| false)["ns/c1"];
    assert_eq!(e.labels["a"], "edited");
    assert_ne!(e.config_sha256, d.entry.config_sha256);
    assert_ne!(e.kubeconfig_sha256, d.entry.kubeconfig_sha256);
}

#[test]
fn fields_set_by_others_are_theirs() {
    let (_, d) = bridged();
    let mut sc = applied(*d.sveltos_cluster.clone().unwrap());
    sc.spec.paused = Some(true);
    sc.spec.consecutive_failure_threshold = Some(7);
    let w = Observed::build(
        "main",
        &crate::domain::ownership::Ledger::trusting(),
        &[sc],
        &[*d.secret.clone().unwrap()],
    );
    assert_eq!(w.entries(|_| false)["ns/c1"], d.entry);
}

#[test]
fn ownership_is_by_recorded_uid_not_by_label() {
    let (_, d) = bridged();
    let mut ours = *d.sveltos_cluster.clone().unwrap();
    ours.metadata.uid = Some("uid-ours".into());
    let mut forged = *d.sveltos_cluster.clone().unwrap();
    forged.metadata.name = Some("c3".into());
    forged.metadata.uid = Some("uid-forged".into());
    let mut other = *d.sveltos_cluster.clone().unwrap();
    other.metadata.name = Some("c4".into());
    other
        .metadata
        .labels
        .as_mut()
        .unwrap()
        .insert(keys::BRIDGE_LABEL.into(), "other".into());
    let mut ledger = Ledger::default();
    ledger.record(Kind::SveltosCluster, "ns/c1", "uid-ours");
    // Attack: an object carrying this bridge's label that the bridge never created is an impostor.
    let w = Observed::build("main", &ledger, &[ours, forged.clone(), other.clone()], &[]);
    assert_eq!(w.owned.keys().collect::<Vec<_>>(), ["ns/c1"]);
    assert_eq!(
        w.impostors.iter().collect::<Vec<_>>(),
        ["SveltosCluster ns/c3"]
    );
    assert_eq!(w.ledger(&ledger), ledger);
    // At a name the bridge would create: foreign, whoever's label it carries.
    let mut unlabelled = *d.sveltos_cluster.clone().unwrap();
    unlabelled.metadata.name = Some("c2".into());
    unlabelled.metadata.labels = None;
    let mut w = Observed::default();
    w.add_foreign(
        &ledger,
        &[other.metadata, unlabelled.metadata, forged.metadata],
        &[],
    );
    assert_eq!(w.foreign_clusters["ns/c4"], Some("other".into()));
    assert_eq!(w.foreign_clusters["ns/c2"], None);
    assert_eq!(w.foreign_clusters["ns/c3"], Some("main".into()));
}

#[test]
fn half_written_cluster_reads_as_partial_entry() {
    let (_, d) = bridged();
    let w = Observed::build(
        "main",
        &crate::domain::ownership::Ledger::trusting(),
        &[],
        &[*d.secret.clone().unwrap()],
    );
    let e = &w.entries(|_| false)["ns/c1"];
    assert_eq!(e.sveltos_cluster, None);
    assert_eq!(e.secret.as_deref(), Some("ns/c1-sveltos-kubeconfig"));
}

/// Labels someone else added under `copy_labels.exclude` (never Sveltos' k8s-version label) are reported, and count
/// in the entry only when apply removes them (`remove_foreign`), so that the plan shows the cluster changing.
#[test]
fn labels_others_add_under_exclude_are_found_and_marked_on_request() {
    let (_, d) = bridged();
    let mut sc = applied(*d.sveltos_cluster.clone().unwrap());
    let labels = sc.metadata.labels.as_mut().unwrap();
    for (k, v) in [
        (keys::SVELTOS_K8S_VERSION_LABEL, "v1.37.2"),
        ("projectsveltos.io/tier", "platform"),
        ("mine", "x"),
    ] {
        labels.insert(k.into(), v.into());
    }
    assert_eq!(
        labels_not_written(&sc).into_iter().collect::<Vec<_>>(),
        ["mine", "projectsveltos.io/tier"]
    );
    let mut w = Observed::build("main", &Ledger::trusting(), &[sc], &[]);
    let mut copy = crate::domain::LabelCopy::default();
    let found = w.foreign_excluded_labels(&copy);
    assert_eq!(
        found["ns/c1"].iter().collect::<Vec<_>>(),
        ["projectsveltos.io/tier"]
    );
    w.mark_removable_labels(&copy);
    assert_eq!(
        w.entries(|_| false)["ns/c1"].config_sha256,
        d.entry.config_sha256
    );
    copy.remove_foreign = true;
    w.mark_removable_labels(&copy);
    assert_ne!(
        w.entries(|_| false)["ns/c1"].config_sha256,
        d.entry.config_sha256
    );
    copy.remove_foreign = false;
    w.mark_removable_labels(&copy);
    assert_eq!(
        w.entries(|_| false)["ns/c1"].config_sha256,
        d.entry.config_sha256
    );
}

/// The bridged Secret of `ns/c1` as listed (UID `uid-s`, version 41), and its id.
fn written_secret() -> (Secret, &'static str) {
    let (_, d) = bridged();
    let mut secret = *d.secret.clone().unwrap();
    secret.metadata.uid = Some("uid-s".into());
    secret.metadata.resource_version = Some("41".into());
    (secret, "ns/c1-sveltos-kubeconfig")
}

#[test]
fn a_secret_unwritten_since_the_bridge_wrote_it_is_known_without_its_body() {
    let (secret, id) = written_secret();
    let mut written = crate::domain::desired::written_credential(&secret).unwrap();
    written.resource_version = Some("41".into());
    let mut ledger = Ledger::default();
    ledger.record(Kind::Secret, id, "uid-s");
    ledger.record_written(id, written.clone());
    let listed = |uid: &str, version: &str| {
        let mut meta = secret.metadata.clone();
        meta.uid = Some(uid.into());
        meta.resource_version = Some(version.into());
        meta
    };
    let key = ("ns".to_string(), "c1-sveltos-kubeconfig".to_string());
    // As written: known from its metadata and the record, the same as from its body.
    let mut w = Observed::default();
    let sorted = w.sort_labelled("main", &ledger, Kind::Secret, &[listed("uid-s", "41")]);
    assert_eq!(
        sorted,
        Sorted {
            wanted: Vec::new(),
            known: vec![key.clone()]
        }
    );
    let mut from_body = Observed::default();
    from_body.add_owned_secrets("main", &ledger, std::slice::from_ref(&secret));
    assert_eq!(w.owned["ns/c1"].secret, from_body.owned["ns/c1"].secret);
    assert_eq!(
        w.owned["ns/c1"].secret.as_ref().unwrap().kubeconfig_sha256,
        Some(written.kubeconfig_sha256.clone())
    );
    // Written since (a tenant, Sveltos' renewal), or another object at that name (a mark admitted it), or a record
    // without a version (an older state): the body is read.
    for (uid, version, ledger) in [
        ("uid-s", "42", ledger.clone()),
        ("uid-other", "41", {
            let mut l = ledger.clone();
            l.trust_name(Kind::Secret, id);
            l
        }),
        ("uid-s", "41", {
            let mut l = ledger.clone();
            l.record_written(
                id,
                WrittenCredential {
                    resource_version: None,
                    source_sha256: None,
                    ..written.clone()
                },
            );
            l
        }),
    ] {
        let mut w = Observed::default();
        let sorted = w.sort_labelled("main", &ledger, Kind::Secret, &[listed(uid, version)]);
        assert_eq!(sorted.wanted, std::slice::from_ref(&key), "{uid} {version}");
        assert!(sorted.known.is_empty() && w.owned.is_empty());
    }
}

#[test]
fn a_version_is_recorded_only_for_the_object_and_the_kubeconfig_it_was_read_with() {
    let (secret, id) = written_secret();
    let recorded = crate::domain::desired::written_credential(&secret).unwrap();
    let mut ledger = Ledger::default();
    ledger.record(Kind::Secret, id, "uid-s");
    ledger.record_written(id, recorded.clone());
    let version_after = |secret: &Secret, ledger: &Ledger| {
        let mut w = Observed::default();
        w.add_owned_secrets("main", ledger, std::slice::from_ref(secret));
        w.ledger(ledger)
            .written(id)
            .unwrap()
            .resource_version
            .clone()
    };
    // A record without a version (an earlier build, a write whose answer was lost): the body read holds what was
    // recorded, so its version is recorded.
    assert_eq!(version_after(&secret, &ledger), Some("41".into()));
    // A body that holds something else (a tenant's swap, Sveltos' renewal): no version for it.
    let mut swapped = secret.clone();
    swapped.metadata.resource_version = Some("42".into());
    swapped.data.as_mut().unwrap().insert(
        crate::domain::SECRET_KEY.into(),
        k8s_openapi::ByteString(b"swapped".to_vec()),
    );
    assert_eq!(version_after(&swapped, &ledger), None);
    // Another object at that name (another UID, admitted by a run's mark): the version recorded for the first one
    // is dropped.
    ledger.record_written(
        id,
        WrittenCredential {
            resource_version: Some("41".into()),
            source_sha256: None,
            ..recorded
        },
    );
    let next = ledger.successor([(Kind::Secret, id.to_string(), "uid-new".to_string())]);
    assert_eq!(next.written(id).unwrap().resource_version, None);
    let same = ledger.successor([(Kind::Secret, id.to_string(), "uid-s".to_string())]);
    assert_eq!(
        same.written(id).unwrap().resource_version,
        Some("41".into())
    );
}

/// Sorting Secrets' metadata reduced by [`secret_meta_for_sorting`] finds what sorting the whole finds: the same
/// wanted and known Secrets, the same owned entries (annotations read back escaped and cut alike) and impostors.
/// Among them a Secret known without its body, one written since, an impostor whose mark is the bridge's own with
/// more after it, and one whose annotations are long, hostile text with a multi-byte character where the cut falls.
#[test]
fn sorting_reduced_metadata_finds_what_sorting_the_whole_finds() {
    let (secret, id) = written_secret();
    let mut written = crate::domain::desired::written_credential(&secret).unwrap();
    written.resource_version = Some("41".into());
    let run = crate::domain::ownership::RunKey::new([7; 32]);
    let mut ledger = Ledger::default().with_run_keys(vec![run.clone()]);
    ledger.record(Kind::Secret, id, "uid-s");
    ledger.record_written(id, written);
    let known = secret.metadata.clone();
    let mut since = known.clone();
    since.resource_version = Some("42".into());
    let hostile = |name: &str, uid: &str, value: String| {
        let mut meta = known.clone();
        meta.name = Some(name.into());
        meta.uid = Some(uid.into());
        let a = meta.annotations.get_or_insert_default();
        for k in [
            crate::domain::ownership::MARK_ANNOTATION,
            crate::domain::TOKEN_RENEWAL_ANNOTATION,
            CREDENTIAL_SOURCE_ANNOTATION,
            keys::KUBECONFIG_SHA_ANNOTATION,
            keys::EXPIRES_ANNOTATION,
            "bulk",
        ] {
            a.insert(k.into(), value.clone());
        }
        meta.labels
            .get_or_insert_default()
            .insert("x".repeat(60), "y".repeat(63));
        meta
    };
    // The cut (1,025 characters) falls inside the multi-byte characters.
    let at_cut = format!(
        "{}\u{1b}[2J{}",
        "é".repeat(1_020),
        "\u{2028}".repeat(10_000)
    );
    let mark = run.mark(Kind::Secret, "ns/c2-sveltos-kubeconfig");
    // Known from its metadata, with long text in every annotation read back (what no write leaves at the version
    // recorded, but what is read back from a listing all the same): the credential source, the expiry, and with
    // token renewal the hash annotation.
    let mut known_long = known.clone();
    let a = known_long.annotations.get_or_insert_default();
    for k in [
        CREDENTIAL_SOURCE_ANNOTATION,
        keys::EXPIRES_ANNOTATION,
        keys::KUBECONFIG_SHA_ANNOTATION,
        crate::domain::TOKEN_RENEWAL_ANNOTATION,
    ] {
        a.insert(k.into(), at_cut.clone());
    }
    let metas = vec![
        known.clone(),
        known_long,
        since,
        hostile(
            "c2-sveltos-kubeconfig",
            "uid-2",
            format!("{mark}{}", "m".repeat(2_000)),
        ),
        hostile("c2-sveltos-kubeconfig", "uid-2", mark.clone()),
        hostile("c3-sveltos-kubeconfig", "uid-3", at_cut),
        hostile("c4-sveltos-kubeconfig", "uid-4", "short".into()),
    ];
    for meta in metas {
        let reduced = secret_meta_for_sorting(meta.clone());
        assert!(meta_text_bytes(&reduced) <= meta_text_bytes(&meta));
        assert!(meta_text_bytes(&reduced) < 6 * (ANNOTATION_SHOWN + 1) * 4 + 512);
        let (mut whole, mut cut) = (Observed::default(), Observed::default());
        let from_whole =
            whole.sort_labelled("main", &ledger, Kind::Secret, std::slice::from_ref(&meta));
        let from_cut = cut.sort_labelled("main", &ledger, Kind::Secret, &[reduced]);
        assert_eq!(from_whole, from_cut, "{:?}", meta.name);
        assert_eq!(whole.owned, cut.owned, "{:?}", meta.name);
        assert_eq!(whole.impostors, cut.impostors, "{:?}", meta.name);
    }
}
