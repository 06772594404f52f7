use super::*;

fn config() -> BridgeConfig {
    BridgeConfig {
        name: "main".into(),
        label_selector: Some("env in (prod,staging)".into()),
        extra_labels: Some(BTreeMap::from([("team".into(), "a".into())])),
        overrides: Some(BTreeMap::from([(
            "ns/c1".into(),
            OverrideConfig {
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
fn value_round_trip() {
    let c = config();
    let v = crate::tfplugin::value::to_value(&c).unwrap();
    assert_eq!(BridgeConfig::read(&v).unwrap(), c);
    let json = serde_json::to_string(&c).unwrap();
    assert_eq!(serde_json::from_str::<BridgeConfig>(&json).unwrap(), c);
}

#[test]
fn a_fractional_number_is_an_error_at_its_path() {
    let v = crate::tfplugin::Value::object([
        ("name", crate::tfplugin::Value::string("main")),
        ("max_removals", crate::tfplugin::Value::float(2.5)),
    ]);
    let d = BridgeConfig::read(&v).unwrap_err();
    let d = d.iter().next().unwrap();
    assert_eq!(d.summary, "Invalid configuration value");
    assert_eq!(d.attribute, Some(AttributePath::attr("max_removals")));
}

#[test]
fn valid_config_maps_to_spec() {
    let spec = config().to_spec().unwrap();
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
        OverrideConfig::default(),
    )]));
    c.credentials.as_mut().unwrap().refresh_before = Some("10 minutes".into());
    c.consecutive_failure_threshold = Some(0);
    let diags = c.to_spec().unwrap_err();
    let paths: Vec<String> = diags.iter().map(|d| format!("{:?}", d.attribute)).collect();
    assert_eq!(diags.len(), 5, "{paths:?}");
    assert!(diags.iter().all(|d| d.attribute.is_some()));
}

#[test]
fn deregistration_is_withdraw_unless_orphan_is_asked_for() {
    let mut c = config();
    assert_eq!(
        c.to_spec().unwrap().deregistration,
        Deregistration::Withdraw
    );
    c.deregistration = Some("orphan".into());
    assert_eq!(c.to_spec().unwrap().deregistration, Deregistration::Orphan);
    c.deregistration = Some("withdraw".into());
    assert_eq!(
        c.to_spec().unwrap().deregistration,
        Deregistration::Withdraw
    );
    c.deregistration = Some("delete".into());
    let diags = c.to_spec().unwrap_err();
    let d = diags.iter().next().unwrap();
    assert_eq!(d.summary, "Invalid deregistration");
    assert_eq!(d.attribute, Some(AttributePath::attr("deregistration")));
    assert!(
        d.detail.contains("\"withdraw\" or \"orphan\""),
        "{}",
        d.detail
    );
}

fn window() -> Option<WindowConfig> {
    Some(WindowConfig {
        from: "0 20 * * 5".into(),
        to: "0 7 * * 1".into(),
    })
}

/// The attribute paths of `c`'s errors whose summary is `summary`, and their details.
fn errors_at(c: &BridgeConfig, summary: &str) -> Vec<(String, String)> {
    c.to_spec()
        .err()
        .map(|d| {
            d.iter()
                .filter(|d| d.summary == summary)
                .map(|d| {
                    (
                        format!("{}", d.attribute.clone().unwrap()),
                        d.detail.clone(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn paused_or_unhealthy_pause_next_to_an_active_window_is_refused_at_its_attribute() {
    const PAUSED: &str = "paused next to an active window";
    const UNHEALTHY: &str = "unhealthy = \"pause\" next to an active window";
    // The bridge-wide pair.
    let mut c = BridgeConfig {
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
    assert!(c.to_spec().is_ok());
    c.paused = None;
    c.active_window = window();
    assert!(c.to_spec().is_ok());
    // An override's paused under the bridge-wide window, and the bridge-wide paused under an override's window.
    c.overrides = Some(BTreeMap::from([(
        "ns/c1".into(),
        OverrideConfig {
            paused: Some(true),
            ..Default::default()
        },
    )]));
    let e = errors_at(&c, PAUSED);
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].0, "overrides[\"ns/c1\"]");
    assert!(
        e[0].1.starts_with("overrides[\"ns/c1\"].paused: "),
        "{}",
        e[0].1
    );
    c.active_window = None;
    assert!(
        c.to_spec().is_ok(),
        "an override's paused without any window"
    );
    c.paused = Some(true);
    c.overrides = Some(BTreeMap::from([(
        "ns/c1".into(),
        OverrideConfig {
            active_window: window(),
            ..Default::default()
        },
    )]));
    let e = errors_at(&c, PAUSED);
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].1.starts_with("overrides[\"ns/c1\"].active_window: "),
        "{}",
        e[0].1
    );
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
        c.to_spec().is_ok(),
        "unhealthy = \"pause\" without a window"
    );
    c.active_window = window();
    assert_eq!(errors_at(&c, UNHEALTHY).len(), 1);
    c.unhealthy = Some("remove".into());
    assert!(c.to_spec().is_ok());
}

#[test]
fn the_limits_of_one_plan_are_zero_or_more_at_their_path() {
    let mut c = config();
    c.max_updates = Some(60);
    assert_eq!(c.to_spec().unwrap().max_updates, Some(60));
    for (name, value) in [("max_removals", -1), ("max_updates", -1)] {
        let mut c = config();
        if name == "max_removals" {
            c.max_removals = Some(value);
        } else {
            c.max_updates = Some(value);
        }
        let diags = c.to_spec().unwrap_err();
        let d = diags.iter().next().unwrap();
        assert_eq!(d.summary, format!("Invalid {name}"));
        assert_eq!(d.attribute, Some(AttributePath::attr(name)));
        assert_eq!(d.detail, format!("{name} must be 0 or more, got -1."));
    }
}

/// With an `inventory` block the hub's namespace names would choose where the bridge writes: a namespaces list,
/// not empty, is required (an error at `namespaces`).
#[test]
fn an_inventory_block_needs_a_namespaces_list() {
    let hub = Some(crate::provider::blocks::connection::ConnectionConfig {
        host: Some("https://hub:6443".into()),
        ..Default::default()
    });
    for namespaces in [None, Some(vec![])] {
        let c = BridgeConfig {
            inventory: hub.clone(),
            namespaces,
            ..config()
        };
        let diags = c.to_spec().unwrap_err();
        assert_eq!(diags.len(), 1);
        let d = diags.iter().next().unwrap();
        assert_eq!(d.summary, INVENTORY_NEEDS_NAMESPACES);
        assert_eq!(d.attribute, Some(AttributePath::attr("namespaces")));
    }
    let listed = BridgeConfig {
        inventory: hub,
        namespaces: Some(vec!["fleet".into()]),
        ..config()
    };
    assert!(listed.to_spec().is_ok());
    assert!(
        config().to_spec().is_ok(),
        "without inventory: all namespaces"
    );
}

#[test]
fn wait_for_ready_gives_the_spec_its_timeout() {
    let mut c = config();
    assert_eq!(c.to_spec().unwrap().ready_wait, None);
    c.ready_timeout = Some("90s".into());
    assert_eq!(
        c.to_spec().unwrap().ready_wait,
        None,
        "no wait without wait_for_ready"
    );
    c.wait_for_ready = Some(true);
    assert_eq!(
        c.to_spec().unwrap().ready_wait,
        Some(std::time::Duration::from_secs(90))
    );
    c.ready_timeout = None;
    assert_eq!(
        c.to_spec().unwrap().ready_wait,
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
    let spec = c.to_spec().unwrap();
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
    use super::super::model::{AzureIdentityConfig, WorkloadIdentityConfig};
    let identity = |provider: &str| WorkloadIdentityConfig {
        provider: provider.into(),
        endpoint: "https://eks.example:443".into(),
        azure: Some(AzureIdentityConfig {
            client_id: "c".into(),
            tenant_id: "t".into(),
            ..Default::default()
        }),
        ..Default::default()
    };
    let with = |w: WorkloadIdentityConfig, renew: bool| {
        let mut c = config();
        let o = c.overrides.as_mut().unwrap().get_mut("ns/c1").unwrap();
        o.workload_identity = Some(w);
        if renew {
            o.token_renewal = Some(TokenRenewalConfig {
                interval: "1h".into(),
                ..Default::default()
            });
        }
        c
    };
    let spec = with(identity("Azure"), false).to_spec().unwrap();
    let wi = spec.overrides["ns/c1"].workload_identity.clone().unwrap();
    assert_eq!(
        (wi.provider.as_str(), wi.azure.unwrap().tenant_id.as_str()),
        ("Azure", "t")
    );
    let errors = errors_at(&with(identity("AWS"), false), "Invalid workload_identity");
    let paths: Vec<&str> = errors.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(paths, ["overrides[\"ns/c1\"]"; 2], "{errors:?}");
    assert!(
        errors[0]
            .1
            .contains("workload_identity.aws: aws must be set if and only if provider is \"AWS\"")
    );
    assert!(errors[1].1.contains(
        "workload_identity.azure: azure must be set if and only if provider is \"Azure\""
    ));
    let mut empty = identity("Azure");
    empty.endpoint.clear();
    empty.ca_secret = Some("Not A Name".into());
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
    let spec = c.to_spec().unwrap();
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
                && errors[0].0 == "overrides[\"ns/c1\"]"
                && errors[0]
                    .1
                    .starts_with(&format!("overrides[\"ns/c1\"].{attr}"))
                && errors[0].1.contains(expected),
            "{attr}: {errors:?}"
        );
    }
}

#[test]
fn the_bridge_wide_workload_identity_follows_the_crd_rules_and_an_override_replaces_it() {
    use super::super::model::{GcpIdentityConfig, WorkloadIdentityConfig};
    let gcp = |project: &str| WorkloadIdentityConfig {
        provider: "GCP".into(),
        endpoint: "https://gke.example".into(),
        gcp: Some(GcpIdentityConfig {
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
    let spec = c.to_spec().unwrap();
    assert_eq!(
        spec.workload_identity.unwrap().gcp.unwrap().project_id,
        "bridge"
    );
    let own = spec.overrides["ns/c1"].workload_identity.clone().unwrap();
    assert_eq!(own.gcp.unwrap().project_id, "own");
    // The CRD's rules at the bridge-wide attribute.
    let mut bad = config();
    bad.workload_identity = Some(WorkloadIdentityConfig {
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
        .token_renewal = Some(TokenRenewalConfig {
        interval: "1h".into(),
        ..Default::default()
    });
    let errors = errors_at(&renewed, "Invalid workload_identity");
    assert!(
        errors.len() == 1
            && errors[0].0.starts_with("workload_identity")
            && errors[0].1.contains("token_renewal"),
        "{errors:?}"
    );
}
