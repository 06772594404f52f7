use super::*;
use crate::domain::exec::fixtures::*;

#[test]
fn debug_output_redacts_secrets() {
    const CANARY: &str = "canary-5e1";
    let f = ProvidersFile::parse(
        format!(r#"{{"providers":[{{"name":"p","execConfig":{{"apiVersion":"v","command":"c","args":["--token={CANARY}"],"env":[{{"name":"SECRET","value":"{CANARY}"}}]}}}}]}}"#)
            .as_bytes(),
    )
    .unwrap();
    let mut p = provider();
    p.cluster.as_mut().unwrap().extensions[2].extension = serde_json::json!({ "secret": CANARY });
    let mut entry = f.providers[0].clone();
    entry.exec_config.provide_cluster_info = true;
    let inv = invocation_in(&entry, &p, &bare).unwrap();
    assert!(inv.exec_info.contains(CANARY));
    let status = ExecCredentialStatus {
        token: Some(CANARY.into()),
        client_key_data: Some(CANARY.into()),
        ..Default::default()
    };
    for shown in [
        format!("{f:?}"),
        format!("{entry:?}"),
        format!("{:?}", entry.exec_config.env[0]),
        format!("{inv:?}"),
        format!("{status:?}"),
    ] {
        assert!(!shown.contains(CANARY), "{shown}");
    }
    assert!(format!("{inv:?}").contains("SECRET"));
}
