//! The planning tests' shared fixture: two profiles with kubeconfig Secrets, planned for apply, and what is
//! observed after an apply.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Secret;

use super::*;
use crate::api::SveltosCluster;
pub(crate) use crate::domain::{
    Override, Selection, UnhealthyPolicy, observed::Observed, selector::Selector, testutil::*,
};

pub(crate) struct Fixture {
    pub(crate) spec: BridgeSpec,
    pub(crate) profiles: Vec<ClusterProfile>,
    pub(crate) secrets: Vec<Secret>,
    pub(crate) ns_labels: BTreeMap<String, BTreeMap<String, String>>,
    pub(crate) observed: Observed,
    pub(crate) providers: Option<ProvidersFile>,
    pub(crate) phase: Phase,
    pub(crate) cluster_api: BTreeSet<String>,
}

impl Fixture {
    pub(crate) fn new() -> Self {
        Self {
            spec: BridgeSpec {
                name: "main".into(),
                ..Default::default()
            },
            profiles: vec![
                profile("a", "c1", &[("env", "prod")]),
                profile("b", "c1", &[("env", "dev")]),
            ],
            secrets: vec![
                labelled_secret("a", "s1", "c1", None, &[("Config", KUBECONFIG)]),
                labelled_secret("b", "s2", "c1", None, &[("config", KUBECONFIG)]),
            ],
            ns_labels: BTreeMap::new(),
            observed: Observed::default(),
            providers: None,
            // A plan made for apply, with the objects to write (as `actions` needs).
            phase: Phase::Apply,
            cluster_api: BTreeSet::new(),
        }
    }

    /// Sets label `key` of profile `i` (to change what that cluster's SveltosCluster carries).
    pub(crate) fn set_label(&mut self, i: usize, key: &str, value: &str) {
        self.profiles[i]
            .metadata
            .labels
            .get_or_insert_with(Default::default)
            .insert(key.into(), value.into());
    }

    pub(crate) fn run(&self) -> Plan {
        self.run_with(&NO_UNDECODABLE)
    }

    pub(crate) fn run_with(&self, undecodable: &BTreeMap<String, String>) -> Plan {
        self.run_reading(undecodable, &BTreeMap::new())
    }

    /// The plan, given the Secrets `kubeconfig-secretreader` providers name (`fetched`).
    pub(crate) fn run_reading(
        &self,
        undecodable: &BTreeMap<String, String>,
        fetched: &BTreeMap<(String, String), Option<Secret>>,
    ) -> Plan {
        let inputs = Inputs {
            spec: &self.spec,
            profiles: &self.profiles,
            credential_secrets: &self.secrets,
            checked_kubeconfigs: None,
            namespace_labels: &self.ns_labels,
            providers: self.providers.as_ref(),
            observed: &self.observed,
            now: jiff::Timestamp::from_second(1_800_000_000).unwrap(),
            phase: self.phase,
            planned_mints: None,
            undecodable,
            cluster_api: &self.cluster_api,
            pack: false,
        };
        let located = locate_all(&inputs);
        let built = plan(&inputs, &located, fetched);
        if inputs.phase == Phase::Apply {
            // Every plan made for apply here is made again with its objects packed, as apply makes it: the same
            // entries, and the same writes once each is unpacked.
            let observed = inputs.observed;
            let packed = plan(
                &Inputs {
                    pack: true,
                    ..inputs
                },
                &located,
                fetched,
            );
            assert_same_plan_for_apply(&built, &packed, observed);
        }
        built
    }
}

/// `built` and `packed` (the same plan, its objects packed) plan the same entries and the same writes.
fn assert_same_plan_for_apply(built: &Plan, packed: &Plan, observed: &Observed) {
    let entries = |p: &Plan| -> Vec<(String, ClusterEntry)> {
        p.desired
            .iter()
            .map(|(k, d)| (k.clone(), d.entry.clone()))
            .collect()
    };
    assert_eq!(entries(built), entries(packed));
    assert!(
        packed
            .desired
            .values()
            .all(|d| d.secret.is_none() && d.sveltos_cluster.is_none()),
        "a packed plan holds no built object"
    );
    let writes = |p: &Plan| -> Vec<String> {
        let copied = actions::actions(p, observed).0;
        let taken = actions::take_actions(&mut p.clone(), observed).0;
        copied
            .into_iter()
            .chain(taken)
            .map(|w| {
                let w = w.unpack(observed);
                assert!(w.packed.is_none());
                format!(
                    "{} {} {} {:?} {} {} {} {:?}",
                    w.key,
                    serde_json::to_string(&w.secret).unwrap(),
                    serde_json::to_string(&w.sveltos_cluster).unwrap(),
                    w.exec,
                    w.adopt_secret,
                    w.adopt_sveltos_cluster,
                    w.health_pause,
                    w.remove_labels
                )
            })
            .collect()
    };
    assert_eq!(writes(built), writes(packed));
}

/// What is observed after applying `plan` faithfully.
pub(crate) fn observed_after(plan: &Plan, bridge: &str) -> Observed {
    let scs: Vec<SveltosCluster> = plan
        .desired
        .values()
        .map(|d| {
            let mut sc = *d.sveltos_cluster.clone().expect("planned for apply");
            let f = |m: &Option<BTreeMap<String, String>>| {
                serde_json::Value::Object(m.iter().flatten().map(|(k, _)| (format!("f:{k}"), serde_json::json!({}))).collect())
            };
            sc.metadata.managed_fields = Some(vec![k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry {
                manager: Some(crate::domain::FIELD_MANAGER.into()),
                operation: Some("Apply".into()),
                fields_v1: Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1(
                    serde_json::json!({"f:metadata": {"f:labels": f(&sc.metadata.labels), "f:annotations": f(&sc.metadata.annotations)},
            "f:spec": crate::domain::observed::tests::spec_fields(&sc)}),
                )),
                ..Default::default()
            }]);
            sc
        })
        .collect();
    let secrets: Vec<Secret> = plan
        .desired
        .values()
        .filter_map(|d| d.secret.as_deref().cloned())
        .collect();
    Observed::build(
        bridge,
        &crate::domain::ownership::Ledger::trusting(),
        &scs,
        &secrets,
    )
}
