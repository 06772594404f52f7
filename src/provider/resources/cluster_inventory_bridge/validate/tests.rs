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
        credentials: Some(crate::bridge::credentials::CredentialsConfig {
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
        crate::bridge::default_kubeconfig_keys()
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
