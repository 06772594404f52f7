//! Unit tests of the connection settings: env fallbacks, kubeconfig selection, overrides, PEM, redaction.

use super::errors::*;
use super::resolve::*;
use super::settings::*;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use kube::config::{Config, ExecInteractiveMode};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::OnceLock;

struct Pki {
    ca_pem: String,
    ca_der: Vec<u8>,
    client_cert_pem: String,
    client_key_pem: String,
}

/// Throwaway self-signed certificates and keys generated per test run (no fixtures).
fn pki() -> &'static Pki {
    static PKI: OnceLock<Pki> = OnceLock::new();
    PKI.get_or_init(|| {
        let ca = rcgen::generate_simple_self_signed(vec!["test-ca.invalid".to_owned()])
            .expect("generate CA");
        let client = rcgen::generate_simple_self_signed(vec!["client.invalid".to_owned()])
            .expect("generate client cert");
        Pki {
            ca_pem: ca.cert.pem(),
            ca_der: ca.cert.der().to_vec(),
            client_cert_pem: client.cert.pem(),
            client_key_pem: client.signing_key.serialize_pem(),
        }
    })
}

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    move |name: &str| map.get(name).cloned()
}

fn no_env(_: &str) -> Option<String> {
    None
}

/// Resolves with an in-cluster directory that does not exist, so the
/// machine running the tests cannot leak into them.
fn run(s: &KubeSettings, env: &dyn Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
    resolve_with(s, env, Path::new("/nonexistent/serviceaccount"))
}

fn err(s: &KubeSettings, env: &dyn Fn(&str) -> Option<String>) -> ConfigError {
    match run(s, env) {
        Ok(config) => panic!("expected an error, got {:?}", config.cluster_url),
        Err(e) => e,
    }
}

fn token_of(config: &Config) -> Option<String> {
    serde_json::to_value(&config.auth_info).unwrap()["token"]
        .as_str()
        .map(str::to_owned)
}

fn b64(text: &str) -> String {
    BASE64.encode(text)
}

fn write(dir: &Path, name: &str, content: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    path.to_string_lossy().into_owned()
}

/// ctx1 -> c1 (CA, https://one.example:6443) + u1 (token), namespace ns1;
/// ctx2 -> c2 (insecure, https://two.example:6443) + u2 (token file).
fn two_context_kubeconfig(dir: &Path) -> String {
    let yaml = format!(
        r#"apiVersion: v1
kind: Config
current-context: ctx1
clusters:
- name: c1
  cluster:
    server: https://one.example:6443
    certificate-authority-data: {ca}
- name: c2
  cluster:
    server: https://two.example:6443
    insecure-skip-tls-verify: true
users:
- name: u1
  user:
    token: kubeconfig-token-one
- name: u2
  user:
    tokenFile: /var/run/u2-token
contexts:
- name: ctx1
  context:
    cluster: c1
    user: u1
    namespace: ns1
- name: ctx2
  context:
    cluster: c2
    user: u2
"#,
        ca = b64(&pki().ca_pem)
    );
    write(dir, "config", &yaml)
}

fn with_path(path: &str) -> KubeSettings {
    KubeSettings {
        config_path: Some(path.to_owned()),
        ..KubeSettings::default()
    }
}

// ---------- with_env ----------

#[test]
fn with_env_fills_every_variable() {
    let env = env_of(&[
        (ENV_CONFIG_PATH, "/env/config"),
        (ENV_CTX, "env-ctx"),
        (ENV_CTX_AUTH_INFO, "env-user"),
        (ENV_CTX_CLUSTER, "env-cluster"),
        (ENV_HOST, "https://env.example"),
        (ENV_TOKEN, "env-token"),
        (ENV_CLUSTER_CA_CERT_DATA, "env-ca"),
        (ENV_CLIENT_CERT_DATA, "env-cert"),
        (ENV_CLIENT_KEY_DATA, "env-key"),
        (ENV_INSECURE, "true"),
        (ENV_TLS_SERVER_NAME, "env-sni"),
        (ENV_PROXY_URL, "http://env-proxy:3128"),
    ]);
    let s = KubeSettings::default().with_env(&env);
    assert_eq!(s.config_path.as_deref(), Some("/env/config"));
    assert!(s.config_paths.is_empty());
    assert_eq!(s.config_context.as_deref(), Some("env-ctx"));
    assert_eq!(s.config_context_auth_info.as_deref(), Some("env-user"));
    assert_eq!(s.config_context_cluster.as_deref(), Some("env-cluster"));
    assert_eq!(s.host.as_deref(), Some("https://env.example"));
    assert_eq!(s.token.as_deref(), Some("env-token"));
    assert_eq!(s.cluster_ca_certificate.as_deref(), Some("env-ca"));
    assert_eq!(s.client_certificate.as_deref(), Some("env-cert"));
    assert_eq!(s.client_key.as_deref(), Some("env-key"));
    assert_eq!(s.insecure, Some(true));
    assert_eq!(s.tls_server_name.as_deref(), Some("env-sni"));
    assert_eq!(s.proxy_url.as_deref(), Some("http://env-proxy:3128"));
    assert_eq!(s.exec, None);
}

#[test]
fn with_env_never_overrides_attributes() {
    let env = env_of(&[
        (ENV_CONFIG_PATH, "/env/config"),
        (ENV_CTX, "env-ctx"),
        (ENV_HOST, "https://env.example"),
        (ENV_TOKEN, "env-token"),
        (ENV_INSECURE, "true"),
    ]);
    let explicit = KubeSettings {
        config_path: Some("/attr/config".into()),
        config_context: Some("attr-ctx".into()),
        host: Some("https://attr.example".into()),
        token: Some("attr-token".into()),
        insecure: Some(false),
        ..KubeSettings::default()
    };
    let s = explicit.clone().with_env(&env);
    assert_eq!(s, explicit);
}

#[test]
fn with_env_treats_empty_as_unset() {
    let env = env_of(&[(ENV_HOST, "https://env.example"), (ENV_TOKEN, "")]);
    let s = KubeSettings {
        host: Some(String::new()),
        ..KubeSettings::default()
    }
    .with_env(&env);
    assert_eq!(s.host.as_deref(), Some("https://env.example"));
    assert_eq!(s.token, None);
}

#[test]
fn with_env_parses_insecure_like_go() {
    for (raw, want) in [
        ("1", Some(true)),
        ("t", Some(true)),
        ("TRUE", Some(true)),
        ("True", Some(true)),
        ("0", Some(false)),
        ("f", Some(false)),
        ("false", Some(false)),
        ("yes", None),
    ] {
        let s = KubeSettings::default().with_env(&env_of(&[(ENV_INSECURE, raw)]));
        assert_eq!(s.insecure, want, "KUBE_INSECURE={raw}");
    }
}

#[test]
fn with_env_config_path_rules() {
    let list = std::env::join_paths(["/a/one", "/b/two"]).unwrap();
    let list = list.to_str().unwrap();
    // KUBE_CONFIG_PATH wins over KUBE_CONFIG_PATHS.
    let s = KubeSettings::default().with_env(&env_of(&[
        (ENV_CONFIG_PATH, "/single"),
        (ENV_CONFIG_PATHS, list),
    ]));
    assert_eq!(s.config_path.as_deref(), Some("/single"));
    assert!(s.config_paths.is_empty());
    // KUBE_CONFIG_PATHS is split with the OS separator.
    let s = KubeSettings::default().with_env(&env_of(&[(ENV_CONFIG_PATHS, list)]));
    assert_eq!(
        s.config_paths,
        vec!["/a/one".to_owned(), "/b/two".to_owned()]
    );
    assert_eq!(s.config_path, None);
    // An explicit `config_paths` shadows both variables.
    let explicit = KubeSettings {
        config_paths: vec!["/attr".into()],
        ..KubeSettings::default()
    };
    let s = explicit.clone().with_env(&env_of(&[
        (ENV_CONFIG_PATH, "/single"),
        (ENV_CONFIG_PATHS, list),
    ]));
    assert_eq!(s, explicit);
}

// ---------- host-based configuration ----------

#[test]
fn host_token_and_ca() {
    let s = KubeSettings {
        host: Some("https://api.example:6443".into()),
        token: Some("attr-token".into()),
        cluster_ca_certificate: Some(pki().ca_pem.clone()),
        ..KubeSettings::default()
    };
    let config = run(&s, &no_env).unwrap();
    assert_eq!(config.cluster_url.to_string(), "https://api.example:6443/");
    assert_eq!(config.root_cert, Some(vec![pki().ca_der.clone()]));
    assert!(!config.accept_invalid_certs);
    assert_eq!(token_of(&config).as_deref(), Some("attr-token"));
    assert_eq!(config.default_namespace, "default");
}

#[test]
fn every_attribute_can_come_from_env() {
    let env = env_of(&[
        (ENV_HOST, "api.example:6443"),
        (ENV_TOKEN, "env-token"),
        (ENV_CLUSTER_CA_CERT_DATA, &pki().ca_pem),
        (ENV_CLIENT_CERT_DATA, &pki().client_cert_pem),
        (ENV_CLIENT_KEY_DATA, &pki().client_key_pem),
        (ENV_TLS_SERVER_NAME, "sni.example"),
        (ENV_PROXY_URL, "http://proxy.example:3128"),
    ]);
    let config = run(&KubeSettings::default(), &env).unwrap();
    // CA given and not insecure: client-go defaults the scheme to https.
    assert_eq!(config.cluster_url.to_string(), "https://api.example:6443/");
    assert_eq!(token_of(&config).as_deref(), Some("env-token"));
    assert_eq!(config.root_cert, Some(vec![pki().ca_der.clone()]));
    assert_eq!(config.tls_server_name.as_deref(), Some("sni.example"));
    assert_eq!(
        config.proxy_url.map(|u| u.to_string()).as_deref(),
        Some("http://proxy.example:3128/")
    );
    let cert = config.auth_info.client_certificate_data.clone().unwrap();
    assert_eq!(
        BASE64.decode(cert).unwrap(),
        pki().client_cert_pem.as_bytes()
    );
    let key = serde_json::to_value(&config.auth_info).unwrap()["client-key-data"].clone();
    let key = BASE64.decode(key.as_str().unwrap()).unwrap();
    assert_eq!(String::from_utf8(key).unwrap(), pki().client_key_pem);

    let env = env_of(&[(ENV_HOST, "https://api.example"), (ENV_INSECURE, "1")]);
    assert!(
        run(&KubeSettings::default(), &env)
            .unwrap()
            .accept_invalid_certs
    );
}

#[test]
fn host_without_scheme_follows_default_server_url() {
    let base = KubeSettings {
        host: Some("api.example:6443".into()),
        ..KubeSettings::default()
    };
    let plain = run(&base, &no_env).unwrap();
    assert_eq!(plain.cluster_url.to_string(), "http://api.example:6443/");
    let with_ca = KubeSettings {
        cluster_ca_certificate: Some(pki().ca_pem.clone()),
        ..base.clone()
    };
    assert_eq!(
        run(&with_ca, &no_env).unwrap().cluster_url.to_string(),
        "https://api.example:6443/"
    );
    let with_cert = KubeSettings {
        client_certificate: Some(pki().client_cert_pem.clone()),
        client_key: Some(pki().client_key_pem.clone()),
        ..base.clone()
    };
    assert_eq!(
        run(&with_cert, &no_env).unwrap().cluster_url.to_string(),
        "https://api.example:6443/"
    );
    let insecure = KubeSettings {
        client_certificate: Some(pki().client_cert_pem.clone()),
        client_key: Some(pki().client_key_pem.clone()),
        insecure: Some(true),
        ..base
    };
    assert_eq!(
        run(&insecure, &no_env).unwrap().cluster_url.to_string(),
        "http://api.example:6443/"
    );
}

#[test]
fn invalid_host_is_reported() {
    for host in ["ftp://api.example", "https://", "https://api example"] {
        let s = KubeSettings {
            host: Some(host.into()),
            ..KubeSettings::default()
        };
        let e = err(&s, &no_env);
        assert!(matches!(e, ConfigError::InvalidHost { .. }), "{host}: {e}");
        assert_eq!(attribute_of(&e), Some("host"));
        assert!(e.to_string().contains("`host`"));
    }
}

#[test]
fn host_attribute_ignores_kubeconfig_env() {
    let dir = tempfile::tempdir().unwrap();
    let path = two_context_kubeconfig(dir.path());
    let s = KubeSettings {
        host: Some("https://attr.example".into()),
        ..KubeSettings::default()
    };
    let config = run(&s, &env_of(&[(ENV_KUBECONFIG, &path)])).unwrap();
    assert_eq!(config.cluster_url.to_string(), "https://attr.example/");
    assert_eq!(token_of(&config), None);
}

// ---------- kubeconfig files ----------

#[test]
fn config_path_uses_current_context() {
    let dir = tempfile::tempdir().unwrap();
    let path = two_context_kubeconfig(dir.path());
    let config = run(&with_path(&path), &no_env).unwrap();
    assert_eq!(config.cluster_url.to_string(), "https://one.example:6443/");
    assert_eq!(config.root_cert, Some(vec![pki().ca_der.clone()]));
    assert_eq!(config.default_namespace, "ns1");
    assert_eq!(token_of(&config).as_deref(), Some("kubeconfig-token-one"));
}

#[test]
fn config_path_from_env_and_context_from_env() {
    let dir = tempfile::tempdir().unwrap();
    let path = two_context_kubeconfig(dir.path());
    let env = env_of(&[(ENV_CONFIG_PATH, &path), (ENV_CTX, "ctx2")]);
    let config = run(&KubeSettings::default(), &env).unwrap();
    assert_eq!(config.cluster_url.to_string(), "https://two.example:6443/");
    assert!(config.accept_invalid_certs);
    assert_eq!(
        config.auth_info.token_file.as_deref(),
        Some("/var/run/u2-token")
    );
    // The attribute beats KUBE_CTX.
    let s = KubeSettings {
        config_context: Some("ctx1".into()),
        ..KubeSettings::default()
    };
    let config = run(&s, &env).unwrap();
    assert_eq!(config.cluster_url.to_string(), "https://one.example:6443/");
}

#[test]
fn context_cluster_and_auth_info_overrides() {
    let dir = tempfile::tempdir().unwrap();
    let path = two_context_kubeconfig(dir.path());
    let s = KubeSettings {
        config_context_cluster: Some("c2".into()),
        config_context_auth_info: Some("u2".into()),
        ..with_path(&path)
    };
    let config = run(&s, &no_env).unwrap();
    assert_eq!(config.cluster_url.to_string(), "https://two.example:6443/");
    assert_eq!(config.default_namespace, "ns1"); // still ctx1's namespace
    assert_eq!(token_of(&config), None);
    assert_eq!(
        config.auth_info.token_file.as_deref(),
        Some("/var/run/u2-token")
    );
    // The same through KUBE_CTX_CLUSTER / KUBE_CTX_AUTH_INFO.
    let env = env_of(&[(ENV_CTX_CLUSTER, "c2"), (ENV_CTX_AUTH_INFO, "u2")]);
    let config = run(&with_path(&path), &env).unwrap();
    assert_eq!(config.cluster_url.to_string(), "https://two.example:6443/");
    assert_eq!(
        config.auth_info.token_file.as_deref(),
        Some("/var/run/u2-token")
    );
}

#[test]
fn missing_context_cluster_user_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = two_context_kubeconfig(dir.path());

    let e = err(
        &KubeSettings {
            config_context: Some("nope".into()),
            ..with_path(&path)
        },
        &no_env,
    );
    assert!(matches!(
        e,
        ConfigError::ContextNotFound { explicit: true, .. }
    ));
    assert_eq!(attribute_of(&e), Some("config_context"));
    let msg = e.to_string();
    assert!(
        msg.contains("\"nope\"") && msg.contains("ctx1, ctx2"),
        "{msg}"
    );
    assert!(
        msg.contains("`config_context`") && msg.contains("KUBE_CTX"),
        "{msg}"
    );

    let e = err(
        &KubeSettings {
            config_context_cluster: Some("nope".into()),
            ..with_path(&path)
        },
        &no_env,
    );
    assert!(matches!(
        e,
        ConfigError::ClusterNotFound { explicit: true, .. }
    ));
    assert_eq!(attribute_of(&e), Some("config_context_cluster"));
    assert!(e.to_string().contains("c1, c2"), "{e}");

    let e = err(
        &KubeSettings {
            config_context_auth_info: Some("nope".into()),
            ..with_path(&path)
        },
        &no_env,
    );
    assert!(matches!(e, ConfigError::AuthInfoNotFound { .. }));
    assert_eq!(attribute_of(&e), Some("config_context_auth_info"));
    assert!(e.to_string().contains("KUBE_CTX_AUTH_INFO"), "{e}");
}

#[test]
fn dangling_references_in_the_kubeconfig() {
    let dir = tempfile::tempdir().unwrap();
    let yaml = "current-context: x\ncontexts:\n- name: x\n  context:\n    cluster: gone\n    user: ghost\n";
    let path = write(dir.path(), "dangling", yaml);
    let e = err(&with_path(&path), &no_env);
    assert!(
        matches!(
            e,
            ConfigError::ClusterNotFound {
                explicit: false,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("\"gone\""));
    // `host` supplies the server; the dangling user means no credentials.
    let s = KubeSettings {
        host: Some("https://h.example".into()),
        ..with_path(&path)
    };
    let config = run(&s, &no_env).unwrap();
    assert_eq!(config.cluster_url.to_string(), "https://h.example/");
    assert_eq!(token_of(&config), None);
}

#[test]
fn current_context_missing_or_unset() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "stale",
        "current-context: old\nclusters:\n- name: c\n  cluster:\n    server: https://c.example\ncontexts:\n- name: new\n  context:\n    cluster: c\n",
    );
    let e = err(&with_path(&path), &no_env);
    assert!(
        matches!(
            e,
            ConfigError::ContextNotFound {
                explicit: false,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("current-context"));

    let path = write(
        dir.path(),
        "nocurrent",
        "clusters:\n- name: c\n  cluster:\n    server: https://c.example\ncontexts:\n- name: new\n  context:\n    cluster: c\n",
    );
    let e = err(&with_path(&path), &no_env);
    assert!(matches!(e, ConfigError::NoCurrentContext { .. }), "{e}");
    assert_eq!(attribute_of(&e), Some("config_context"));
    // Either picking a context or naming the cluster fixes it.
    let s = KubeSettings {
        config_context: Some("new".into()),
        ..with_path(&path)
    };
    assert_eq!(
        run(&s, &no_env).unwrap().cluster_url.to_string(),
        "https://c.example/"
    );
    let s = KubeSettings {
        config_context_cluster: Some("c".into()),
        ..with_path(&path)
    };
    assert_eq!(
        run(&s, &no_env).unwrap().cluster_url.to_string(),
        "https://c.example/"
    );
}

#[test]
fn cluster_without_server_needs_host() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "noserver",
        "current-context: x\nclusters:\n- name: c\n  cluster:\n    insecure-skip-tls-verify: true\ncontexts:\n- name: x\n  context:\n    cluster: c\n",
    );
    let e = err(&with_path(&path), &no_env);
    assert!(matches!(e, ConfigError::MissingServer { .. }), "{e}");
    assert_eq!(attribute_of(&e), Some("host"));
    assert!(e.to_string().contains("context \"x\""), "{e}");
}

#[test]
fn attributes_override_the_kubeconfig() {
    let dir = tempfile::tempdir().unwrap();
    let path = two_context_kubeconfig(dir.path());
    let s = KubeSettings {
        host: Some("https://override.example".into()),
        token: Some("attr-token".into()),
        tls_server_name: Some("sni.example".into()),
        ..with_path(&path)
    };
    let config = run(&s, &no_env).unwrap();
    assert_eq!(config.cluster_url.to_string(), "https://override.example/");
    assert_eq!(token_of(&config).as_deref(), Some("attr-token"));
    assert_eq!(config.root_cert, Some(vec![pki().ca_der.clone()])); // kept
    assert_eq!(config.tls_server_name.as_deref(), Some("sni.example"));

    // ctx2 uses a token file; an explicit token replaces it.
    let s = KubeSettings {
        config_context: Some("ctx2".into()),
        ..s
    };
    let config = run(&s, &no_env).unwrap();
    assert_eq!(config.auth_info.token_file, None);
    assert_eq!(token_of(&config).as_deref(), Some("attr-token"));

    // Env values override the kubeconfig too.
    let env = env_of(&[(ENV_HOST, "https://env.example"), (ENV_TOKEN, "env-token")]);
    let config = run(&with_path(&path), &env).unwrap();
    assert_eq!(config.cluster_url.to_string(), "https://env.example/");
    assert_eq!(token_of(&config).as_deref(), Some("env-token"));
}

#[test]
fn tls_overrides_follow_client_go() {
    let dir = tempfile::tempdir().unwrap();
    let path = two_context_kubeconfig(dir.path());
    // insecure = true drops the kubeconfig CA instead of clashing with it.
    let s = KubeSettings {
        insecure: Some(true),
        ..with_path(&path)
    };
    let config = run(&s, &no_env).unwrap();
    assert!(config.accept_invalid_certs);
    assert_eq!(config.root_cert, None);
    // An explicit CA re-enables verification of an insecure kubeconfig cluster.
    let s = KubeSettings {
        config_context: Some("ctx2".into()),
        cluster_ca_certificate: Some(pki().ca_pem.clone()),
        ..with_path(&path)
    };
    let config = run(&s, &no_env).unwrap();
    assert!(!config.accept_invalid_certs);
    assert_eq!(config.root_cert, Some(vec![pki().ca_der.clone()]));
    // An explicit insecure = false also does.
    let s = KubeSettings {
        config_context: Some("ctx2".into()),
        insecure: Some(false),
        ..with_path(&path)
    };
    assert!(!run(&s, &no_env).unwrap().accept_invalid_certs);
}

#[test]
fn proxy_url_is_a_default_for_the_kubeconfig() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "proxied",
        "current-context: x\nclusters:\n- name: c\n  cluster:\n    server: https://c.example\n    proxy-url: http://kubeconfig-proxy:3128\n- name: d\n  cluster:\n    server: https://d.example\ncontexts:\n- name: x\n  context:\n    cluster: c\n- name: y\n  context:\n    cluster: d\n",
    );
    let s = KubeSettings {
        proxy_url: Some("http://attr-proxy:3128".into()),
        ..with_path(&path)
    };
    let config = run(&s, &no_env).unwrap();
    assert_eq!(
        config.proxy_url.map(|u| u.to_string()).as_deref(),
        Some("http://kubeconfig-proxy:3128/")
    );
    let s = KubeSettings {
        config_context: Some("y".into()),
        ..s
    };
    let config = run(&s, &no_env).unwrap();
    assert_eq!(
        config.proxy_url.map(|u| u.to_string()).as_deref(),
        Some("http://attr-proxy:3128/")
    );
}

#[test]
fn invalid_proxy_urls() {
    for (proxy, needle) in [
        ("socks5://p.example:1080", "SOCKS5"),
        ("ftp://p.example", "scheme"),
        ("p.example:3128", "scheme"),
        ("http://user:hunter2@", "host name"),
    ] {
        let s = KubeSettings {
            host: Some("https://h.example".into()),
            proxy_url: Some(proxy.into()),
            ..KubeSettings::default()
        };
        let e = err(&s, &no_env);
        assert!(
            matches!(e, ConfigError::InvalidProxyUrl { .. }),
            "{proxy}: {e}"
        );
        assert_eq!(attribute_of(&e), Some("proxy_url"));
        let msg = e.to_string();
        assert!(
            msg.contains(needle) && msg.contains("KUBE_PROXY_URL"),
            "{msg}"
        );
        assert!(!msg.contains("hunter2"), "{msg}");
    }
}

#[test]
fn config_paths_are_merged_first_wins() {
    let dir = tempfile::tempdir().unwrap();
    let first = write(
        dir.path(),
        "a",
        "current-context: a\nclusters:\n- name: shared\n  cluster:\n    server: https://from-a.example\ncontexts:\n- name: a\n  context:\n    cluster: shared\n",
    );
    let second = write(
        dir.path(),
        "b",
        "current-context: b\nclusters:\n- name: shared\n  cluster:\n    server: https://from-b.example\n- name: only-b\n  cluster:\n    server: https://only-b.example\ncontexts:\n- name: b\n  context:\n    cluster: only-b\n",
    );
    let missing = dir.path().join("missing").to_string_lossy().into_owned();
    let s = KubeSettings {
        config_paths: vec![first.clone(), missing.clone(), second.clone()],
        ..KubeSettings::default()
    };
    let config = run(&s, &no_env).unwrap();
    assert_eq!(config.cluster_url.to_string(), "https://from-a.example/");
    let s = KubeSettings {
        config_context: Some("b".into()),
        ..s
    };
    assert_eq!(
        run(&s, &no_env).unwrap().cluster_url.to_string(),
        "https://only-b.example/"
    );
    // Order matters.
    let s = KubeSettings {
        config_paths: vec![second.clone(), first.clone()],
        config_context: Some("a".into()),
        ..KubeSettings::default()
    };
    assert_eq!(
        run(&s, &no_env).unwrap().cluster_url.to_string(),
        "https://from-b.example/"
    );
    // The same through KUBE_CONFIG_PATHS.
    let list = std::env::join_paths([&first, &second]).unwrap();
    let env = env_of(&[(ENV_CONFIG_PATHS, list.to_str().unwrap()), (ENV_CTX, "b")]);
    assert_eq!(
        run(&KubeSettings::default(), &env)
            .unwrap()
            .cluster_url
            .to_string(),
        "https://only-b.example/"
    );
}

#[test]
fn missing_kubeconfig_files() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing").to_string_lossy().into_owned();
    let e = err(&with_path(&missing), &no_env);
    assert!(matches!(e, ConfigError::KubeconfigNotFound { .. }), "{e}");
    assert_eq!(attribute_of(&e), Some("config_path"));
    assert!(e.to_string().contains("KUBE_CONFIG_PATH"));
    // A single entry in config_paths must exist too (client-go ExplicitPath).
    let s = KubeSettings {
        config_paths: vec![missing.clone()],
        ..KubeSettings::default()
    };
    let e = err(&s, &no_env);
    assert!(matches!(e, ConfigError::KubeconfigNotFound { .. }), "{e}");
    assert_eq!(attribute_of(&e), Some("config_paths"));
    let s = KubeSettings {
        config_paths: vec![missing.clone(), format!("{missing}-2")],
        ..KubeSettings::default()
    };
    let e = err(&s, &no_env);
    assert!(matches!(e, ConfigError::NoKubeconfigFound { .. }), "{e}");
    assert_eq!(attribute_of(&e), Some("config_paths"));
}

#[test]
fn config_path_and_config_paths_conflict() {
    let s = KubeSettings {
        config_path: Some("/a".into()),
        config_paths: vec!["/b".into()],
        ..KubeSettings::default()
    };
    let e = err(&s, &no_env);
    assert!(matches!(e, ConfigError::ConflictingConfigPaths));
    assert_eq!(attribute_of(&e), Some("config_paths"));
    assert!(e.to_string().contains("`config_path`"));
}

#[test]
fn tilde_is_expanded_with_home() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".kube")).unwrap();
    two_context_kubeconfig(&dir.path().join(".kube"));
    let env = env_of(&[("HOME", dir.path().to_str().unwrap())]);
    let config = run(&with_path("~/.kube/config"), &env).unwrap();
    assert_eq!(config.cluster_url.to_string(), "https://one.example:6443/");
    let e = err(&with_path("~someone/.kube/config"), &env);
    assert!(matches!(e, ConfigError::PathExpansion { .. }), "{e}");
    let e = err(&with_path("~/.kube/config"), &no_env);
    assert!(e.to_string().contains("HOME"), "{e}");
}

#[test]
fn unreadable_kubeconfig_does_not_leak_its_content() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "broken",
        "users:\n- name: u\n  user:\n    token: super-secret-token-value\n  - : [\n",
    );
    let e = err(&with_path(&path), &no_env);
    assert!(matches!(e, ConfigError::KubeconfigUnreadable { .. }), "{e}");
    assert_eq!(attribute_of(&e), Some("config_path"));
    let msg = e.to_string();
    assert!(msg.contains(&path), "{msg}");
    assert!(!msg.contains("super-secret"), "{msg}");
    assert!(!format!("{e:?}").contains("super-secret"));

    let e = err(&with_path(dir.path().to_str().unwrap()), &no_env);
    assert!(matches!(e, ConfigError::KubeconfigUnreadable { .. }), "{e}");
}

#[test]
fn kubeconfig_env_is_the_last_file_fallback() {
    let dir = tempfile::tempdir().unwrap();
    let path = two_context_kubeconfig(dir.path());
    let env = env_of(&[(ENV_KUBECONFIG, &path), (ENV_CTX, "ctx2")]);
    let config = run(&KubeSettings::default(), &env).unwrap();
    assert_eq!(config.cluster_url.to_string(), "https://two.example:6443/");
    // KUBE_CONFIG_PATH beats KUBECONFIG.
    let other = write(
        dir.path(),
        "other",
        "current-context: o\nclusters:\n- name: o\n  cluster:\n    server: https://other.example\ncontexts:\n- name: o\n  context:\n    cluster: o\n",
    );
    let env = env_of(&[(ENV_KUBECONFIG, &path), (ENV_CONFIG_PATH, &other)]);
    assert_eq!(
        run(&KubeSettings::default(), &env)
            .unwrap()
            .cluster_url
            .to_string(),
        "https://other.example/"
    );
    let missing = dir.path().join("missing").to_string_lossy().into_owned();
    let e = err(
        &KubeSettings::default(),
        &env_of(&[(ENV_KUBECONFIG, &missing)]),
    );
    assert!(matches!(e, ConfigError::NoKubeconfigFound { .. }), "{e}");
    assert_eq!(attribute_of(&e), None);
    assert!(e.to_string().contains("KUBECONFIG"));
}

// ---------- in-cluster ----------

fn service_account_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("token"), "sa-token").unwrap();
    std::fs::write(dir.path().join("ca.crt"), &pki().ca_pem).unwrap();
    std::fs::write(dir.path().join("namespace"), "sveltos-system\n").unwrap();
    dir
}

#[test]
fn in_cluster_service_account() {
    let sa = service_account_dir();
    let env = env_of(&[(ENV_SERVICE_HOST, "10.96.0.1"), (ENV_SERVICE_PORT, "443")]);
    let config = resolve_with(&KubeSettings::default(), &env, sa.path()).unwrap();
    assert_eq!(config.cluster_url.to_string(), "https://10.96.0.1/");
    assert_eq!(config.root_cert, Some(vec![pki().ca_der.clone()]));
    assert_eq!(config.default_namespace, "sveltos-system");
    let token_file = sa.path().join("token").to_string_lossy().into_owned();
    assert_eq!(
        config.auth_info.token_file.as_deref(),
        Some(token_file.as_str())
    );

    let env = env_of(&[(ENV_SERVICE_HOST, "fd00::1"), (ENV_SERVICE_PORT, "6443")]);
    let config = resolve_with(&KubeSettings::default(), &env, sa.path()).unwrap();
    assert_eq!(config.cluster_url.to_string(), "https://[fd00::1]:6443/");

    // An explicit token replaces the service-account token.
    let s = KubeSettings {
        token: Some("attr-token".into()),
        ..KubeSettings::default()
    };
    let config = resolve_with(&s, &env, sa.path()).unwrap();
    assert_eq!(token_of(&config).as_deref(), Some("attr-token"));
    assert_eq!(config.auth_info.token_file, None);
}

#[test]
fn in_cluster_needs_env_and_token_and_loses_to_kubeconfig() {
    let sa = service_account_dir();
    let e = resolve_with(
        &KubeSettings::default(),
        &env_of(&[(ENV_SERVICE_HOST, "10.96.0.1")]),
        sa.path(),
    )
    .unwrap_err();
    assert!(matches!(e, ConfigError::NothingConfigured), "{e}");
    let empty = tempfile::tempdir().unwrap();
    let env = env_of(&[(ENV_SERVICE_HOST, "10.96.0.1"), (ENV_SERVICE_PORT, "443")]);
    let e = resolve_with(&KubeSettings::default(), &env, empty.path()).unwrap_err();
    assert!(matches!(e, ConfigError::NothingConfigured), "{e}");

    let dir = tempfile::tempdir().unwrap();
    let path = two_context_kubeconfig(dir.path());
    let env = env_of(&[
        (ENV_SERVICE_HOST, "10.96.0.1"),
        (ENV_SERVICE_PORT, "443"),
        (ENV_KUBECONFIG, &path),
    ]);
    let config = resolve_with(&KubeSettings::default(), &env, sa.path()).unwrap();
    assert_eq!(config.cluster_url.to_string(), "https://one.example:6443/");

    let env = env_of(&[(ENV_SERVICE_HOST, "10.96.0.1"), (ENV_SERVICE_PORT, "https")]);
    let e = resolve_with(&KubeSettings::default(), &env, sa.path()).unwrap_err();
    assert!(matches!(e, ConfigError::InCluster { .. }), "{e}");
    assert!(e.to_string().contains("KUBERNETES_SERVICE_PORT"));
}

// ---------- nothing / partial configuration ----------

#[test]
fn nothing_configured_is_an_explicit_error() {
    let e = err(&KubeSettings::default(), &no_env);
    assert!(matches!(e, ConfigError::NothingConfigured));
    assert_eq!(attribute_of(&e), None);
    let msg = e.to_string();
    for needle in [
        "config_path",
        "KUBE_CONFIG_PATHS",
        "`host`",
        "KUBECONFIG",
        "in",
        "exec",
    ] {
        assert!(msg.contains(needle), "{needle} missing from: {msg}");
    }
    // Context selection alone does not configure a connection.
    let s = KubeSettings {
        config_context: Some("ctx".into()),
        ..KubeSettings::default()
    };
    assert!(matches!(err(&s, &no_env), ConfigError::NothingConfigured));
}

#[test]
fn credentials_without_host() {
    let s = KubeSettings {
        token: Some("lonely-token".into()),
        ..KubeSettings::default()
    };
    let e = err(&s, &no_env);
    assert!(matches!(e, ConfigError::MissingHost), "{e}");
    assert_eq!(attribute_of(&e), Some("host"));
    assert!(e.to_string().contains("KUBE_HOST"));
    assert!(!e.to_string().contains("lonely-token"));
}

// ---------- exec ----------

fn exec_block() -> ExecSettings {
    ExecSettings {
        api_version: "client.authentication.k8s.io/v1beta1".into(),
        command: "aws".into(),
        args: vec![
            "eks".into(),
            "get-token".into(),
            "--cluster-name".into(),
            "c".into(),
        ],
        env: BTreeMap::from([
            ("AWS_PROFILE".to_owned(), "prod".to_owned()),
            ("AWS_REGION".to_owned(), "eu-west-1".to_owned()),
        ]),
    }
}

#[test]
fn exec_block_is_mapped() {
    let s = KubeSettings {
        host: Some("https://eks.example".into()),
        cluster_ca_certificate: Some(pki().ca_pem.clone()),
        exec: Some(exec_block()),
        ..KubeSettings::default()
    };
    let config = run(&s, &no_env).unwrap();
    let exec = config.auth_info.exec.clone().expect("exec config");
    assert_eq!(
        exec.api_version.as_deref(),
        Some("client.authentication.k8s.io/v1beta1")
    );
    assert_eq!(exec.command.as_deref(), Some("aws"));
    assert_eq!(
        exec.args,
        Some(vec![
            "eks".into(),
            "get-token".into(),
            "--cluster-name".into(),
            "c".into()
        ])
    );
    let env: Vec<(String, String)> = exec
        .env
        .unwrap()
        .into_iter()
        .map(|m| (m["name"].clone(), m["value"].clone()))
        .collect();
    assert_eq!(
        env,
        vec![
            ("AWS_PROFILE".to_owned(), "prod".to_owned()),
            ("AWS_REGION".to_owned(), "eu-west-1".to_owned())
        ]
    );
    assert_eq!(exec.interactive_mode, Some(ExecInteractiveMode::Never));
    assert!(!exec.provide_cluster_info);
    assert_eq!(token_of(&config), None);

    let minimal = ExecSettings {
        args: vec![],
        env: BTreeMap::new(),
        ..exec_block()
    };
    let s = KubeSettings {
        exec: Some(minimal),
        ..s
    };
    let exec = run(&s, &no_env).unwrap().auth_info.exec.unwrap();
    assert_eq!(exec.args, None);
    assert_eq!(exec.env, None);
}

#[test]
fn exec_replaces_kubeconfig_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let path = two_context_kubeconfig(dir.path());
    let s = KubeSettings {
        exec: Some(exec_block()),
        ..with_path(&path)
    };
    let config = run(&s, &no_env).unwrap();
    assert_eq!(token_of(&config), None);
    assert_eq!(
        config.auth_info.exec.unwrap().command.as_deref(),
        Some("aws")
    );
}

#[test]
fn exec_requires_api_version_and_command() {
    for (block, field) in [
        (
            ExecSettings {
                command: " ".into(),
                ..exec_block()
            },
            "exec.command",
        ),
        (
            ExecSettings {
                api_version: String::new(),
                ..exec_block()
            },
            "exec.api_version",
        ),
    ] {
        let s = KubeSettings {
            host: Some("https://h.example".into()),
            exec: Some(block),
            ..KubeSettings::default()
        };
        let e = err(&s, &no_env);
        assert!(matches!(e, ConfigError::ExecMissingField { .. }), "{e}");
        assert_eq!(attribute_of(&e), Some(field));
        assert!(e.to_string().contains(&format!("`{field}`")), "{e}");
    }
}

// ---------- validation of PEM, token, booleans ----------

fn host_with(f: impl FnOnce(&mut KubeSettings)) -> KubeSettings {
    let mut s = KubeSettings {
        host: Some("https://h.example".into()),
        ..KubeSettings::default()
    };
    f(&mut s);
    s
}

/// The base64 lines of a PEM text, i.e. the secret material.
fn pem_body_lines(pem: &str) -> Vec<&str> {
    pem.lines()
        .filter(|l| !l.starts_with("-----") && l.len() > 8)
        .collect()
}

fn assert_no_secret(e: &ConfigError, secret_pem: &str) {
    let shown = format!("{e} {e:?}");
    for line in pem_body_lines(secret_pem) {
        assert!(!shown.contains(line), "error leaks key material: {shown}");
    }
}

#[test]
fn malformed_ca_certificates() {
    let ca = &pki().ca_pem;
    let cases: Vec<(String, &str)> = vec![
        ("not a certificate".into(), "no PEM block"),
        (b64(ca), "base64-encoded"),
        ("/home/me/.kube/ca.crt".into(), "file path"),
        (pki().client_key_pem.clone(), "no CERTIFICATE block"),
        (ca.replace("-----END CERTIFICATE-----", ""), "no END line"),
        (
            "-----BEGIN CERTIFICATE-----\n!!!notbase64!!!\n-----END CERTIFICATE-----\n".into(),
            "not valid base64",
        ),
        (
            "-----BEGIN CERTIFICATE-----\naGVsbG8gd29ybGQ=\n-----END CERTIFICATE-----\n".into(),
            "not a valid X.509",
        ),
    ];
    for (value, needle) in cases {
        let s = host_with(|s| s.cluster_ca_certificate = Some(value.clone()));
        let e = err(&s, &no_env);
        assert!(matches!(e, ConfigError::InvalidPem { .. }), "{needle}: {e}");
        assert_eq!(attribute_of(&e), Some("cluster_ca_certificate"));
        let msg = e.to_string();
        assert!(msg.contains(needle), "{needle}: {msg}");
        assert!(msg.contains("KUBE_CLUSTER_CA_CERT_DATA"), "{msg}");
        assert_no_secret(&e, &pki().client_key_pem);
    }
}

#[test]
fn malformed_client_certificate_and_key() {
    let s = host_with(|s| {
        s.client_certificate = Some("garbage".into());
        s.client_key = Some(pki().client_key_pem.clone());
    });
    let e = err(&s, &no_env);
    assert_eq!(attribute_of(&e), Some("client_certificate"));
    assert!(e.to_string().contains("KUBE_CLIENT_CERT_DATA"));

    // A key whose body is damaged: the error must not echo any of it.
    let key = &pki().client_key_pem;
    let damaged = key.replacen("\n", "\n%%%", 1);
    let encrypted = key.replace("PRIVATE KEY", "ENCRYPTED PRIVATE KEY");
    let doubled = format!("{key}{key}");
    let unsupported = key.replace("PRIVATE KEY", "DSA PRIVATE KEY");
    for (value, needle) in [
        (damaged, "not valid base64"),
        (encrypted, "encrypted"),
        (doubled, "exactly one"),
        (unsupported, "unsupported key type"),
        (pki().client_cert_pem.clone(), "no PRIVATE KEY block"),
        (b64(key), "base64-encoded"),
    ] {
        let s = host_with(|s| {
            s.client_certificate = Some(pki().client_cert_pem.clone());
            s.client_key = Some(value.clone());
        });
        let e = err(&s, &no_env);
        assert!(matches!(e, ConfigError::InvalidPem { .. }), "{needle}: {e}");
        assert_eq!(attribute_of(&e), Some("client_key"));
        let msg = e.to_string();
        assert!(
            msg.contains(needle) && msg.contains("KUBE_CLIENT_KEY_DATA"),
            "{msg}"
        );
        assert_no_secret(&e, key);
    }
}

#[test]
fn client_certificate_and_key_come_in_pairs() {
    let s = host_with(|s| s.client_certificate = Some(pki().client_cert_pem.clone()));
    let e = err(&s, &no_env);
    assert!(matches!(e, ConfigError::ClientKeyMissing { .. }), "{e}");
    assert_eq!(attribute_of(&e), Some("client_key"));
    let s = host_with(|s| s.client_key = Some(pki().client_key_pem.clone()));
    let e = err(&s, &no_env);
    assert!(
        matches!(e, ConfigError::ClientCertificateMissing { .. }),
        "{e}"
    );
    assert_eq!(attribute_of(&e), Some("client_certificate"));
    assert_no_secret(&e, &pki().client_key_pem);
}

#[test]
fn insecure_with_ca_is_rejected() {
    let s = host_with(|s| {
        s.insecure = Some(true);
        s.cluster_ca_certificate = Some(pki().ca_pem.clone());
    });
    let e = err(&s, &no_env);
    assert!(matches!(e, ConfigError::InsecureWithCa));
    assert_eq!(attribute_of(&e), Some("insecure"));
}

#[test]
fn invalid_kube_insecure() {
    let e = err(&host_with(|_| {}), &env_of(&[(ENV_INSECURE, "maybe")]));
    assert!(matches!(e, ConfigError::InvalidBool { .. }), "{e}");
    assert_eq!(attribute_of(&e), Some("insecure"));
    assert!(e.to_string().contains("KUBE_INSECURE") && e.to_string().contains("maybe"));
    // Irrelevant when the attribute is set.
    let s = host_with(|s| s.insecure = Some(true));
    assert!(
        run(&s, &env_of(&[(ENV_INSECURE, "maybe")]))
            .unwrap()
            .accept_invalid_certs
    );
}

#[test]
fn invalid_tokens_are_not_echoed() {
    for (token, needle) in [
        ("Bearer abc.def-secret", "Bearer"),
        ("abc\ndef-secret", "single-line"),
        ("abcé-secret", "non-ASCII"),
    ] {
        let s = host_with(|s| s.token = Some(token.into()));
        let e = err(&s, &no_env);
        assert!(matches!(e, ConfigError::InvalidToken { .. }), "{e}");
        assert_eq!(attribute_of(&e), Some("token"));
        let shown = format!("{e} {e:?}");
        assert!(
            shown.contains(needle) && shown.contains("KUBE_TOKEN"),
            "{shown}"
        );
        assert!(!shown.contains("secret"), "{shown}");
    }
    // Surrounding whitespace (e.g. from file()) is trimmed.
    let s = host_with(|s| s.token = Some("  tok-123\n".into()));
    assert_eq!(
        token_of(&run(&s, &no_env).unwrap()).as_deref(),
        Some("tok-123")
    );
}

#[test]
fn pem_text_around_blocks_and_crlf_is_accepted() {
    let ca = format!(
        "subject=CN = test\r\n{}",
        pki().ca_pem.replace('\n', "\r\n")
    );
    let bundle = format!("{ca}\n{}", pki().client_cert_pem);
    let s = host_with(|s| s.cluster_ca_certificate = Some(bundle));
    let config = run(&s, &no_env).unwrap();
    assert_eq!(config.root_cert.unwrap().len(), 2);
}

// ---------- Debug ----------

#[test]
fn debug_redacts_secrets() {
    let s = KubeSettings {
        host: Some("https://visible.example".into()),
        token: Some("token-value-xyz".into()),
        client_key: Some(pki().client_key_pem.clone()),
        client_certificate: Some("cert-is-public".into()),
        exec: Some(ExecSettings {
            env: BTreeMap::from([("AWS_SECRET_ACCESS_KEY".to_owned(), "s3cr3t".to_owned())]),
            ..exec_block()
        }),
        ..KubeSettings::default()
    };
    let shown = format!("{s:?} {s:#?}");
    assert!(shown.contains("https://visible.example"));
    assert!(shown.contains("cert-is-public"));
    assert!(shown.contains("AWS_SECRET_ACCESS_KEY"));
    assert!(shown.contains(REDACTED));
    assert!(!shown.contains("token-value-xyz"));
    assert!(!shown.contains("s3cr3t"));
    for line in pem_body_lines(&pki().client_key_pem) {
        assert!(!shown.contains(line));
    }
    assert!(!format!("{:?}", KubeSettings::default()).contains(REDACTED));
}

#[test]
fn resolve_uses_the_given_env_only() {
    // The public entry point works the same with an injected environment.
    let env = env_of(&[(ENV_HOST, "https://pub.example"), (ENV_TOKEN, "t")]);
    let config = resolve(&KubeSettings::default(), &env).unwrap();
    assert_eq!(config.cluster_url.to_string(), "https://pub.example/");
}
