use std::collections::BTreeMap;

use super::{checks::INVENTORY_NEEDS_NAMESPACES, *};
use crate::api::{AzureIdentity, GcpIdentity, LocalObjectReference};

/// A path as the CLIs show it: `overrides["ns/c1"].paused`, `copy_properties.names[0]`.
pub(super) fn shown(path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Attr(a) if out.is_empty() => out.push_str(a),
            Step::Attr(a) => out.push_str(&format!(".{a}")),
            Step::Key(k) => out.push_str(&format!("[{k:?}]")),
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

fn config() -> BridgeInput {
    BridgeInput {
        name: "main".into(),
        label_selector: Some("env in (prod,staging)".into()),
        extra_labels: Some(BTreeMap::from([("team".into(), "a".into())])),
        overrides: Some(BTreeMap::from([(
            "ns/c1".into(),
            OverrideInput {
                paused: Some(true),
                ..Default::default()
            },
        )])),
        credentials: Some(crate::domain::credentials::CredentialsConfig {
            refresh_before: Some("15m".into()),
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[test]
fn valid_config_maps_to_spec() {
    let spec = validate(&config()).unwrap();
    assert_eq!(spec.credentials.refresh_before.as_secs(), 900);
    assert!(spec.overrides["ns/c1"].paused == Some(true));
    assert_eq!(
        spec.credentials.kubeconfig_keys,
        crate::domain::default_kubeconfig_keys()
    );
}

#[test]
fn every_error_has_an_attribute_path() {
    let mut c = config();
    c.label_selector = Some("a in b".into());
    c.extra_labels = Some(BTreeMap::from([("bad key!".into(), "v".into())]));
    c.overrides = Some(BTreeMap::from([(
        "noslash".into(),
        OverrideInput::default(),
    )]));
    c.credentials.as_mut().unwrap().refresh_before = Some("10 minutes".into());
    c.consecutive_failure_threshold = Some(0);
    let diags = validate(&c).unwrap_err();
    let paths: Vec<String> = diags.iter().map(|d| shown(&d.path)).collect();
    assert_eq!(diags.len(), 5, "{paths:?}");
    assert!(diags.iter().all(|d| !d.path.is_empty()));
}

#[test]
fn deregistration_is_withdraw_unless_orphan_is_asked_for() {
    let mut c = config();
    assert_eq!(
        validate(&c).unwrap().deregistration,
        Deregistration::Withdraw
    );
    c.deregistration = Some("orphan".into());
    assert_eq!(validate(&c).unwrap().deregistration, Deregistration::Orphan);
    c.deregistration = Some("withdraw".into());
    assert_eq!(
        validate(&c).unwrap().deregistration,
        Deregistration::Withdraw
    );
    c.deregistration = Some("delete".into());
    let diags = validate(&c).unwrap_err();
    let d = diags.first().unwrap();
    assert_eq!(d.summary, "Invalid deregistration");
    assert_eq!(d.path, at("deregistration"));
    assert!(
        d.detail.contains("\"withdraw\" or \"orphan\""),
        "{}",
        d.detail
    );
}

fn window() -> Option<ActiveWindow> {
    Some(ActiveWindow {
        from: "0 20 * * 5".into(),
        to: "0 7 * * 1".into(),
    })
}

/// The attribute paths of `c`'s errors whose summary is `summary`, and their details.
fn errors_at(c: &BridgeInput, summary: &str) -> Vec<(String, String)> {
    validate(c)
        .err()
        .map(|d| {
            d.iter()
                .filter(|d| d.summary == summary)
                .map(|d| (shown(&d.path), d.detail.clone()))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn paused_or_unhealthy_pause_next_to_an_active_window_is_refused_at_its_attribute() {
    const PAUSED: &str = "paused next to an active window";
    const UNHEALTHY: &str = "unhealthy = \"pause\" next to an active window";
    // The bridge-wide pair.
    let mut c = BridgeInput {
        name: "main".into(),
        paused: Some(false),
        active_window: window(),
        ..Default::default()
    };
    let e = errors_at(&c, PAUSED);
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].0, "paused");
    assert!(
        e[0].1.contains("sveltoscluster-manager owns spec.paused"),
        "{}",
        e[0].1
    );
    // Without the window, paused is fine; so is a window without paused.
    c.active_window = None;
    assert!(validate(&c).is_ok());
    c.paused = None;
    c.active_window = window();
    assert!(validate(&c).is_ok());
    // An override's paused under the bridge-wide window, and the bridge-wide paused under an override's window.
    c.overrides = Some(BTreeMap::from([(
        "ns/c1".into(),
        OverrideInput {
            paused: Some(true),
            ..Default::default()
        },
    )]));
    let e = errors_at(&c, PAUSED);
    assert_eq!(e.len(), 1, "{e:?}");
    // The core reports the full path (the mapping layer shortens it for the CLIs).
    assert_eq!(e[0].0, "overrides[\"ns/c1\"].paused");
    c.active_window = None;
    assert!(
        validate(&c).is_ok(),
        "an override's paused without any window"
    );
    c.paused = Some(true);
    c.overrides = Some(BTreeMap::from([(
        "ns/c1".into(),
        OverrideInput {
            active_window: window(),
            ..Default::default()
        },
    )]));
    let e = errors_at(&c, PAUSED);
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].0, "overrides[\"ns/c1\"].active_window");
    // unhealthy = "pause" with any window.
    c.paused = None;
    c.unhealthy = Some("pause".into());
    let e = errors_at(&c, UNHEALTHY);
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].0, "unhealthy");
    assert!(
        e[0].1.contains("overrides[\"ns/c1\"].active_window"),
        "{}",
        e[0].1
    );
    c.overrides = None;
    assert!(
        validate(&c).is_ok(),
        "unhealthy = \"pause\" without a window"
    );
    c.active_window = window();
    assert_eq!(errors_at(&c, UNHEALTHY).len(), 1);
    c.unhealthy = Some("remove".into());
    assert!(validate(&c).is_ok());
}

#[test]
fn the_limits_of_one_plan_are_zero_or_more_at_their_path() {
    let mut c = config();
    c.max_updates = Some(60);
    assert_eq!(validate(&c).unwrap().max_updates, Some(60));
    for (name, value) in [("max_removals", -1), ("max_updates", -1)] {
        let mut c = config();
        if name == "max_removals" {
            c.max_removals = Some(value);
        } else {
            c.max_updates = Some(value);
        }
        let diags = validate(&c).unwrap_err();
        let d = diags.first().unwrap();
        assert_eq!(d.summary, format!("Invalid {name}"));
        assert_eq!(d.path, at(name));
        assert_eq!(d.detail, format!("{name} must be 0 or more, got -1."));
    }
}

/// With an `inventory` block the hub's namespace names would choose where the bridge writes: a namespaces list,
/// not empty, is required (an error at `namespaces`).
#[test]
fn an_inventory_block_needs_a_namespaces_list() {
    for namespaces in [None, Some(vec![])] {
        let c = BridgeInput {
            inventory: true,
            namespaces,
            ..config()
        };
        let diags = validate(&c).unwrap_err();
        assert_eq!(diags.len(), 1);
        let d = diags.first().unwrap();
        assert_eq!(d.summary, INVENTORY_NEEDS_NAMESPACES);
        assert_eq!(d.path, at("namespaces"));
    }
    let listed = BridgeInput {
        inventory: true,
        namespaces: Some(vec!["fleet".into()]),
        ..config()
    };
    assert!(validate(&listed).is_ok());
    assert!(
        validate(&config()).is_ok(),
        "without inventory: all namespaces"
    );
}

#[test]
fn wait_for_ready_gives_the_spec_its_timeout() {
    let mut c = config();
    assert_eq!(validate(&c).unwrap().ready_wait, None);
    c.ready_timeout = Some("90s".into());
    assert_eq!(
        validate(&c).unwrap().ready_wait,
        None,
        "no wait without wait_for_ready"
    );
    c.wait_for_ready = Some(true);
    assert_eq!(
        validate(&c).unwrap().ready_wait,
        Some(std::time::Duration::from_secs(90))
    );
    c.ready_timeout = None;
    assert_eq!(
        validate(&c).unwrap().ready_wait,
        Some(crate::domain::DEFAULT_READY_TIMEOUT)
    );
    for bad in ["0s", "soon"] {
        c.ready_timeout = Some(bad.into());
        let errors = errors_at(&c, "Invalid ready_timeout");
        assert_eq!(errors.len(), 1, "{bad}: {errors:?}");
        assert_eq!(errors[0].0, "ready_timeout");
    }
}

/// A readiness check as the upstream CRD has it, changed by `edit`, in a list.
fn check(edit: impl FnOnce(&mut serde_json::Value)) -> serde_json::Value {
    let mut c = serde_json::json!({
        "name": "gate",
        "condition": "function evaluate() return {pass = true} end",
        "resourceSelectors": [{"group": "", "version": "v1", "kind": "ConfigMap", "name": "gate",
            "namespace": null, "labelFilters": [{"key": "a", "operation": "Has"}]}],
    });
    edit(&mut c);
    serde_json::json!([c])
}

#[test]
fn checks_are_read_as_the_upstream_crd_has_them() {
    let mut c = config();
    c.readiness_checks = Some(check(|_| {}).to_string());
    c.liveness_checks = Some(check(|c| c["name"] = "alive".into()).to_string());
    c.data = Some(BTreeMap::from([("region".into(), "eu-1".into())]));
    let spec = validate(&c).unwrap();
    assert_eq!(
        spec.readiness_checks[0].resource_selectors[0].kind,
        "ConfigMap"
    );
    assert_eq!(
        spec.readiness_checks[0].resource_selectors[0].namespace,
        None
    );
    assert_eq!(spec.liveness_checks[0].name, "alive");
    assert_eq!(spec.data["region"], "eu-1");
}

#[test]
fn checks_the_crd_refuses_are_refused_at_their_attribute() {
    let cases: Vec<(serde_json::Value, &str)> = vec![
        (
            check(|c| {
                c.as_object_mut()
                    .unwrap()
                    .remove("condition")
                    .map(drop)
                    .unwrap()
            }),
            "missing field `condition`",
        ),
        (
            check(|c| c["resourceSelectors"][0]["kind"] = "".into()),
            "resourceSelectors[0].kind must not be empty",
        ),
        (
            check(|c| c["resourceSelectors"][0]["labelFilters"][0]["operation"] = "Is".into()),
            "labelFilters[0].operation must be one of",
        ),
        (
            check(|c| c["resourceSelectors"][0]["evaluateCel"] = serde_json::json!([])),
            "resourceSelectors[0].evaluateCel is not a field of the upstream SveltosCluster CRD",
        ),
        (check(|c| c["name"] = "".into()), "name must not be empty"),
        (serde_json::json!({"name": "x"}), "must be a list of checks"),
    ];
    let not_json = (serde_json::Value::Null, "must be JSON text");
    for (value, expected) in cases.into_iter().chain([not_json]) {
        let mut c = config();
        c.liveness_checks = Some(if value.is_null() {
            "[{".into()
        } else {
            value.to_string()
        });
        let errors = errors_at(&c, "Invalid checks");
        assert!(
            errors.len() == 1
                && errors[0].0.starts_with("liveness_checks")
                && errors[0].1.contains(expected),
            "{value}: {errors:?}"
        );
    }
    let mut c = config();
    let twice = check(|_| {});
    c.readiness_checks = Some(serde_json::json!([twice[0], twice[0]]).to_string());
    let errors = errors_at(&c, "Invalid checks");
    assert!(
        errors.len() == 1 && errors[0].1.contains("used twice"),
        "{errors:?}"
    );
}

#[test]
fn workload_identity_follows_the_crd_rules() {
    let identity = |provider: &str| WorkloadIdentity {
        provider: provider.into(),
        endpoint: "https://eks.example:443".into(),
        azure: Some(AzureIdentity {
            client_id: "c".into(),
            tenant_id: "t".into(),
            ..Default::default()
        }),
        ..Default::default()
    };
    let with = |w: WorkloadIdentity, renew: bool| {
        let mut c = config();
        let o = c.overrides.as_mut().unwrap().get_mut("ns/c1").unwrap();
        o.workload_identity = Some(w);
        if renew {
            o.token_renewal = Some(written_renewal("1h".into(), None, None));
        }
        c
    };
    let spec = validate(&with(identity("Azure"), false)).unwrap();
    let wi = spec.overrides["ns/c1"].workload_identity.clone().unwrap();
    assert_eq!(
        (wi.provider.as_str(), wi.azure.unwrap().tenant_id.as_str()),
        ("Azure", "t")
    );
    let errors = errors_at(&with(identity("AWS"), false), "Invalid workload_identity");
    let paths: Vec<&str> = errors.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        paths,
        [
            "overrides[\"ns/c1\"].workload_identity.aws",
            "overrides[\"ns/c1\"].workload_identity.azure"
        ],
        "{errors:?}"
    );
    assert_eq!(
        errors[0].1,
        "aws must be set if and only if provider is \"AWS\"."
    );
    assert_eq!(
        errors[1].1,
        "azure must be set if and only if provider is \"Azure\"."
    );
    let mut empty = identity("Azure");
    empty.endpoint.clear();
    empty.ca_secret_ref = Some(LocalObjectReference {
        name: "Not A Name".into(),
    });
    assert_eq!(
        errors_at(&with(empty, false), "Invalid workload_identity").len(),
        2
    );
    let renewed = errors_at(&with(identity("Azure"), true), "Invalid workload_identity");
    assert!(
        renewed.len() == 1 && renewed[0].1.contains("token_renewal"),
        "{renewed:?}"
    );
}

#[test]
fn an_override_s_checks_are_checked_as_the_bridge_wide_ones_and_replace_them() {
    let mut c = config();
    c.readiness_checks = Some(check(|_| {}).to_string());
    let o = c.overrides.as_mut().unwrap().get_mut("ns/c1").unwrap();
    o.readiness_checks = Some(check(|c| c["name"] = "own".into()).to_string());
    o.liveness_checks = Some("[]".into());
    let spec = validate(&c).unwrap();
    let own = &spec.overrides["ns/c1"];
    let names =
        |l: &[crate::api::ClusterCheck]| l.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(own.readiness_checks.as_deref().unwrap()), ["own"]);
    assert_eq!(own.liveness_checks.as_deref(), Some(&[][..]));
    assert_eq!(names(&spec.readiness_checks), ["gate"]);
    // Bad JSON, or a check the CRD refuses, in an override: an error at that override's attribute.
    for (attr, value, expected) in [
        ("readiness_checks", "[{".to_string(), "must be JSON text"),
        (
            "liveness_checks",
            check(|c| c["resourceSelectors"][0]["kind"] = "".into()).to_string(),
            "liveness_checks[0]: resourceSelectors[0].kind must not be empty",
        ),
    ] {
        let mut c = config();
        let o = c.overrides.as_mut().unwrap().get_mut("ns/c1").unwrap();
        *if attr == "readiness_checks" {
            &mut o.readiness_checks
        } else {
            &mut o.liveness_checks
        } = Some(value);
        let errors = errors_at(&c, "Invalid checks");
        assert!(
            errors.len() == 1
                && errors[0]
                    .0
                    .starts_with(&format!("overrides[\"ns/c1\"].{attr}"))
                && errors[0].1.contains(expected),
            "{attr}: {errors:?}"
        );
    }
}

#[test]
fn the_bridge_wide_workload_identity_follows_the_crd_rules_and_an_override_replaces_it() {
    let gcp = |project: &str| WorkloadIdentity {
        provider: "GCP".into(),
        endpoint: "https://gke.example".into(),
        gcp: Some(GcpIdentity {
            cluster_name: "c".into(),
            location: "europe-west1".into(),
            project_id: project.into(),
        }),
        ..Default::default()
    };
    let mut c = config();
    c.workload_identity = Some(gcp("bridge"));
    c.overrides
        .as_mut()
        .unwrap()
        .get_mut("ns/c1")
        .unwrap()
        .workload_identity = Some(gcp("own"));
    let spec = validate(&c).unwrap();
    assert_eq!(
        spec.workload_identity.unwrap().gcp.unwrap().project_id,
        "bridge"
    );
    let own = spec.overrides["ns/c1"].workload_identity.clone().unwrap();
    assert_eq!(own.gcp.unwrap().project_id, "own");
    // The CRD's rules at the bridge-wide attribute.
    let mut bad = config();
    bad.workload_identity = Some(WorkloadIdentity {
        provider: "AWS".into(),
        ..gcp("")
    });
    let errors = errors_at(&bad, "Invalid workload_identity");
    let details: Vec<&str> = errors.iter().map(|(_, d)| d.as_str()).collect();
    assert_eq!(details.len(), 3, "{errors:?}");
    assert!(
        errors
            .iter()
            .all(|(p, _)| p.starts_with("workload_identity")),
        "{errors:?}"
    );
    assert!(
        details
            .iter()
            .any(|d| d.contains("aws must be set if and only if provider is \"AWS\""))
    );
    assert!(
        details
            .iter()
            .any(|d| d.contains("gcp.project_id must not be empty"))
    );
    // A token renewal for a cluster the bridge-wide identity applies to (an override without its own identity).
    let mut renewed = config();
    renewed.workload_identity = Some(gcp("bridge"));
    renewed
        .overrides
        .as_mut()
        .unwrap()
        .get_mut("ns/c1")
        .unwrap()
        .token_renewal = Some(written_renewal("1h".into(), None, None));
    let errors = errors_at(&renewed, "Invalid workload_identity");
    assert!(
        errors.len() == 1
            && errors[0].0.starts_with("workload_identity")
            && errors[0].1.contains("token_renewal"),
        "{errors:?}"
    );
}
