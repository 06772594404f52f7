//! `kubeconfig-secretreader` as upstream means it, with the real CLI: the Secret supplies the credential, the
//! ClusterProfile's access provider the connection (`credentials.secret_reader_mode = "credential"`, the default),
//! with a warning naming each cluster whose Secret points elsewhere; `"whole_kubeconfig"` (the convention of
//! Sveltos' clusterinventory-controller, for migrating from it) uses the Secret's kubeconfig as it is. What was
//! written is judged by client-go (`support::client_go_view`) and by connecting with it.

use std::path::{Path, PathBuf};

use serde_json::{Value as Json, json};
use support::inventory::{Inv, apply_ok, bridge, entry, flat, one_diagnostic, run};
use support::{Cli, TestEnv, client_go_view, fixtures, unique_namespace};

/// The warning's summary (from `src/domain/plan/report.rs`).
const POINTS_ELSEWHERE: &str =
    "the kubeconfig-secretreader Secret points elsewhere than the ClusterProfile";

/// `text` with its first cluster's server replaced by `server`.
fn with_server(kubeconfig: &str, server: &str) -> String {
    let mut kc: Json = serde_saphyr::from_str(kubeconfig).unwrap();
    kc["clusters"][0]["cluster"]["server"] = server.into();
    kc.to_string()
}

/// Profile `<ns>/c1`, whose access provider publishes the member cluster and whose Secret's kubeconfig (returned)
/// names `https://127.0.0.1:1` with the member's credential; and `<ns>/c2`, whose Secret agrees with its profile.
async fn seed(inv: &Inv, ns: &str, member: &str) -> String {
    let stored = with_server(member, "https://127.0.0.1:1");
    for (name, kubeconfig) in [("c1", &stored), ("c2", &member.to_string())] {
        let secret = format!("{name}-access");
        inv.secret(ns, &secret, &[], &[("value", kubeconfig)]).await;
        let status =
            fixtures::secret_reader_status(member, json!({"name": secret, "key": "value"}));
        inv.profile(ns, name, &[], status).await;
    }
    stored
}

/// The member cluster's kubeconfig, as client-go reads it, and its server (endpoint A, which its access provider
/// publishes).
fn member_seen(env: &TestEnv) -> (String, Json, String) {
    let member = std::fs::read_to_string(env.member_kubeconfig()).unwrap();
    let view = client_go_view(tempfile::tempdir().unwrap().path(), member.as_bytes()).unwrap();
    let endpoint_a = view["clusters"][0]["cluster"]["server"]
        .as_str()
        .unwrap()
        .to_string();
    (member, view, endpoint_a)
}

/// The one warning names `<ns>/c1`, its Secret and both endpoints, and not `<ns>/c2`.
fn check_warning(out: &str, ns: &str, endpoint_a: &str) {
    let warning = one_diagnostic(out, "Warning", POINTS_ELSEWHERE);
    let line = entry(warning, &format!("{ns}/c1"));
    let host_a = endpoint_a.trim_start_matches("https://");
    assert!(
        line.contains("127.0.0.1:1 ")
            && line.contains(host_a)
            && line.contains(&format!("{ns}/c1-access")),
        "the warning names the cluster, its Secret and both endpoints ({host_a}):\n{line}"
    );
    assert!(
        !warning
            .lines()
            .any(|l| l.starts_with(&format!("- {ns}/c2 "))),
        "{warning}"
    );
    assert!(warning.contains("1 ClusterProfile(s)"), "{warning}");
}

/// A profile whose access provider publishes the member cluster (endpoint A, with its CA) and whose Secret's
/// kubeconfig names `https://127.0.0.1:1` (endpoint B, where nothing listens) with the member's credential: by
/// default it is registered against A, with a warning naming the cluster and both endpoints, and the written
/// kubeconfig reaches the member; with `secret_reader_mode = "whole_kubeconfig"` it is registered against B, as
/// clusterinventory-controller registers it, without the warning.
#[tokio::test(flavor = "multi_thread")]
async fn the_profiles_server_wins_over_the_secrets_with_a_warning() {
    let env = TestEnv::get();
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "reader-a").await;
    let (member, member_view, endpoint_a) = member_seen(env);
    let stored = seed(&inv, &ns, &member).await;

    let tf = inv.tf(&Cli::tofu(), &bridge(&ns, &[&ns], ""));
    let out = apply_ok(&tf);
    check_warning(&out, &ns, &endpoint_a);
    let dir = tempfile::tempdir().unwrap();
    let written = inv.bridged_kubeconfig(&ns, "c1").await.unwrap();
    let view = client_go_view(dir.path(), &written).unwrap();
    assert_eq!(
        view["clusters"][0]["cluster"]["server"],
        endpoint_a.as_str()
    );
    assert_eq!(
        view["clusters"][0]["cluster"]["certificate-authority-data"],
        member_view["clusters"][0]["cluster"]["certificate-authority-data"]
    );
    assert_eq!(view["users"][0]["user"], member_view["users"][0]["user"]);
    let file = dir.path().join("written");
    std::fs::write(&file, &written).unwrap();
    env.kubectl_at(&file, &["get", "--raw", "/version"]);

    // Migration from clusterinventory-controller: the whole kubeconfig, endpoint B, and no warning.
    inv.rewrite(
        &tf,
        &bridge(
            &ns,
            &[&ns],
            "  credentials {\n    secret_reader_mode = \"whole_kubeconfig\"\n  }",
        ),
    );
    let out = apply_ok(&tf);
    assert!(!out.contains(POINTS_ELSEWHERE), "{out}");
    let written = inv.bridged_kubeconfig(&ns, "c1").await.unwrap();
    let view = client_go_view(dir.path(), &written).unwrap();
    assert_eq!(
        view["clusters"][0]["cluster"]["server"],
        "https://127.0.0.1:1"
    );
    assert_eq!(written, fixtures::written(&stored));
    let (ok, out) = run(
        &tf,
        &["plan", "-input=false", "-no-color", "-detailed-exitcode"],
    );
    assert!(ok, "no change after apply:\n{out}");

    // A bad value is an error at its attribute path.
    inv.rewrite(
        &tf,
        &bridge(
            &ns,
            &[&ns],
            "  credentials {\n    secret_reader_mode = \"whole\"\n  }",
        ),
    );
    let (ok, out) = run(&tf, &["plan", "-input=false", "-no-color"]);
    assert!(
        !ok && flat(&out).contains("Invalid credentials.secret_reader_mode"),
        "{out}"
    );
    inv.rewrite(&tf, &bridge(&ns, &[&ns], ""));
    tf.destroy();
}

/// The data sources and the ephemeral resource warn as the bridge's plan does: `sveltos_clusterprofiles` and
/// `sveltos_clusterprofile` name `<ns>/c1`, whose Secret points elsewhere (and not `<ns>/c2`, whose Secret agrees),
/// both endpoints and the Secret; `sveltos_cluster_credentials` of `c1` warns the same way, and its `host` is the
/// profile's endpoint, not the Secret's.
#[tokio::test(flavor = "multi_thread")]
async fn the_data_sources_and_the_ephemeral_resource_warn_as_the_bridge_does() {
    let env = TestEnv::get();
    let inv = Inv::new().await;
    let ns = unique_namespace(&inv.client, "reader-ds").await;
    let (member, _, endpoint_a) = member_seen(env);
    seed(&inv, &ns, &member).await;
    let list =
        format!("data \"sveltos_clusterprofiles\" \"all\" {{\n  namespaces = [\"{ns}\"]\n}}\n");
    let tf = inv.tf(&Cli::tofu(), &list);
    check_warning(&apply_ok(&tf), &ns, &endpoint_a);
    let one = |name: &str| {
        format!(
            "data \"sveltos_clusterprofile\" \"one\" {{\n  namespace = \"{ns}\"\n  name      = \"{name}\"\n}}\n"
        )
    };
    inv.rewrite(&tf, &one("c1"));
    check_warning(&apply_ok(&tf), &ns, &endpoint_a);
    inv.rewrite(&tf, &one("c2"));
    let out = apply_ok(&tf);
    assert!(!out.contains(POINTS_ELSEWHERE), "{out}");
    inv.rewrite(
        &tf,
        &format!(
            "ephemeral \"sveltos_cluster_credentials\" \"c1\" {{\n  namespace = \"{ns}\"\n  name      = \"c1\"\n}}\n\
             resource \"terraform_data\" \"host\" {{\n  provisioner \"local-exec\" {{\n    \
             command     = \"printf %s \\\"$HOST\\\" > host.txt\"\n    \
             environment = {{ HOST = ephemeral.sveltos_cluster_credentials.c1.host }}\n  }}\n}}\n"
        ),
    );
    // A plan opens the ephemeral resource once (an apply opens it again).
    let (ok, out) = run(&tf, &["plan", "-input=false", "-no-color"]);
    assert!(ok, "{out}");
    check_warning(&out, &ns, &endpoint_a);
    apply_ok(&tf);
    let host = std::fs::read_to_string(tf.dir().join("host.txt")).unwrap();
    assert_eq!(
        host, endpoint_a,
        "the ephemeral resource connects where the profile says"
    );
}

// ---------------------------------------------------------------------------------------------
// the differential test against cia-oracle
// ---------------------------------------------------------------------------------------------

/// What one side connects to, and with which credential: the access provider chosen, the connection settings and
/// the SHA-256 of the bearer token. `None` on a side: it connects nowhere with a credential (the oracle refuses
/// the profile or its plugin returns no token; the bridge does not register the cluster).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    provider: String,
    server: String,
    proxy: String,
    ca_sha256: String,
    tls_server_name: String,
    insecure: bool,
    token_sha256: String,
    connected: bool,
}

impl Seen {
    /// The names of the fields that differ.
    fn differences(a: &Option<Seen>, b: &Option<Seen>) -> Vec<&'static str> {
        let (a, b) = match (a, b) {
            (None, None) => return vec![],
            (Some(a), Some(b)) => (a, b),
            _ => return vec!["registered"],
        };
        let fields = [
            ("provider", a.provider != b.provider),
            ("server", a.server != b.server),
            ("proxy", a.proxy != b.proxy),
            ("ca", a.ca_sha256 != b.ca_sha256),
            ("tls_server_name", a.tls_server_name != b.tls_server_name),
            ("insecure", a.insecure != b.insecure),
            ("token", a.token_sha256 != b.token_sha256),
            ("connected", a.connected != b.connected),
        ];
        fields.iter().filter(|(_, d)| *d).map(|(n, _)| *n).collect()
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

/// One case of the corpus: a ClusterProfile `<ns>/c` with `status`, the providers file's entries in order, the
/// Secrets to create, and, when the bridge and the upstream library must differ, the difference's name in the
/// credential-models guide and the fields that differ.
struct Case {
    id: &'static str,
    status: Json,
    providers: Vec<&'static str>,
    secrets: Vec<SecretSpec>,
    /// The namespace the upstream plugins take for their own (their KUBECONFIG's context): `None`, the case's.
    plugin_namespace: Option<String>,
    /// `credentials.secret_reader_namespaces` of the case's bridge.
    reader_namespaces: Vec<String>,
    differs: Option<(&'static str, &'static [&'static str])>,
}

/// The member cluster as the corpus uses it: its kubeconfig, server, CA (base64) and token.
struct Member {
    kubeconfig: String,
    server: String,
    ca: String,
    token: String,
}

impl Member {
    fn get() -> Member {
        let kubeconfig = std::fs::read_to_string(TestEnv::get().member_kubeconfig()).unwrap();
        let kc: Json = serde_saphyr::from_str(&kubeconfig).unwrap();
        let cluster = &kc["clusters"][0]["cluster"];
        Member {
            server: cluster["server"].as_str().unwrap().into(),
            ca: cluster["certificate-authority-data"]
                .as_str()
                .unwrap()
                .into(),
            token: kc["users"][0]["user"]["token"].as_str().unwrap().into(),
            kubeconfig,
        }
    }

    /// An access provider `name` at the member's server and CA, with `extra` cluster fields and exec extension
    /// `ext`.
    fn provider(&self, name: &str, extra: Json, ext: Json) -> Json {
        let mut cluster = json!({"server": self.server, "certificate-authority-data": self.ca,
            "extensions": [{"name": "client.authentication.k8s.io/exec", "extension": ext}]});
        for (k, v) in extra.as_object().into_iter().flatten() {
            if v.is_null() {
                cluster.as_object_mut().unwrap().remove(k);
            } else {
                cluster[k] = v.clone();
            }
        }
        json!({"name": name, "cluster": cluster})
    }

    /// The member's kubeconfig with `edit` applied to its JSON form.
    fn kubeconfig_with(&self, edit: impl Fn(&mut Json)) -> String {
        let mut kc: Json = serde_saphyr::from_str(&self.kubeconfig).unwrap();
        edit(&mut kc);
        kc.to_string()
    }
}

const READER: &str = "kubeconfig-secretreader";
const TOKENS: &str = "secretreader";

/// A Secret to create: namespace, name, data key, value.
type SecretSpec = (String, String, String, String);

/// A case that must differ: id, status, providers, Secrets, its name in the guide, the fields that differ.
type Differing = (
    &'static str,
    Json,
    Vec<&'static str>,
    Vec<SecretSpec>,
    &'static str,
    &'static [&'static str],
);

/// The corpus' fixtures for one case: the member, the case's namespace `ns` and a second namespace `other`.
struct Fx<'a> {
    m: &'a Member,
    ns: &'a str,
    other: &'a str,
}

impl Fx<'_> {
    /// Secret `<ns>/<name>` holding `kubeconfig` under `value`.
    fn kc(&self, name: &str, kubeconfig: &str) -> SecretSpec {
        (
            self.ns.into(),
            name.into(),
            "value".into(),
            kubeconfig.into(),
        )
    }

    /// Secret `<ns>/tok` holding the member's token under `token`, as upstream's `secretreader` reads it.
    fn tok(&self) -> SecretSpec {
        (
            self.ns.into(),
            "tok".into(),
            "token".into(),
            self.m.token.clone(),
        )
    }

    /// A status with one `kubeconfig-secretreader` access provider.
    fn reader(&self, extra: Json, ext: Json) -> Json {
        json!({"accessProviders": [self.m.provider(READER, extra, ext)]})
    }

    fn plain(&self) -> Json {
        json!({"name": "kc", "key": "value"})
    }

    fn case(
        &self,
        id: &'static str,
        status: Json,
        providers: Vec<&'static str>,
        secrets: Vec<SecretSpec>,
    ) -> Case {
        Case {
            id,
            status,
            providers,
            secrets,
            plugin_namespace: None,
            reader_namespaces: vec![],
            differs: None,
        }
    }

    /// The member's kubeconfig naming a server where nothing listens.
    fn decoy(&self) -> String {
        self.m.kubeconfig_with(|k| {
            k["clusters"][0]["cluster"]["server"] = "https://127.0.0.1:1".into();
        })
    }

    /// The member's kubeconfig with a second context `decoy` (current) whose user has a token the member does not
    /// know; the member's context is `member`.
    fn two_contexts(&self) -> String {
        self.m.kubeconfig_with(|k| {
            k["users"]
                .as_array_mut()
                .unwrap()
                .push(json!({"name": "decoy", "user": {"token": "decoy-token"}}));
            let mut d = k["contexts"][0].clone();
            k["contexts"][0]["name"] = "member".into();
            d["name"] = "decoy".into();
            d["context"]["user"] = "decoy".into();
            k["contexts"].as_array_mut().unwrap().push(d);
            k["current-context"] = "decoy".into();
        })
    }

    /// The member's kubeconfig with top-level `extensions`.
    fn with_extensions(&self) -> String {
        self.m.kubeconfig_with(|k| {
            k["extensions"] = json!([{"name": "x", "extension": {"a": "b"}}]);
        })
    }
}

/// The corpus; `ns` is the case's namespace, `other` a second namespace.
fn corpus(m: &Member, ns: &str, other: &str) -> Vec<Case> {
    let f = Fx { m, ns, other };
    let mut cases = agreeing(&f);
    cases.extend(differing(&f));
    cases
}

/// The cases where the bridge and the upstream library must agree.
fn agreeing(f: &Fx<'_>) -> Vec<Case> {
    let mut cases = reader_cases(f);
    cases.extend(provider_choice_cases(f));
    cases
}

/// `kubeconfig-secretreader` alone: where it connects, with which user.
fn reader_cases(f: &Fx<'_>) -> Vec<Case> {
    let mut cases = vec![
        f.case(
            "basic",
            f.reader(json!({}), f.plain()),
            vec![READER],
            vec![f.kc("kc", &f.m.kubeconfig)],
        ),
        f.case(
            "secret-names-another-server",
            f.reader(json!({}), f.plain()),
            vec![READER],
            vec![f.kc("kc", &f.decoy())],
        ),
        f.case(
            "context",
            f.reader(
                json!({}),
                json!({"name": "kc", "key": "value", "context": "member"}),
            ),
            vec![READER],
            vec![f.kc("kc", &f.two_contexts())],
        ),
        f.case(
            "current-context",
            f.reader(json!({}), f.plain()),
            vec![READER],
            vec![f.kc("kc", &f.two_contexts())],
        ),
        f.case(
            "ca-only-in-the-secret",
            f.reader(json!({"certificate-authority-data": null}), f.plain()),
            vec![READER],
            vec![f.kc("kc", &f.m.kubeconfig)],
        ),
        f.case(
            "proxy",
            f.reader(json!({"proxy-url": "http://127.0.0.1:1"}), f.plain()),
            vec![READER],
            vec![f.kc("kc", &f.m.kubeconfig)],
        ),
        f.case(
            "missing-secret",
            f.reader(json!({}), f.plain()),
            vec![READER],
            vec![],
        ),
        f.case(
            "bad-server",
            f.reader(json!({"server": "https://"}), f.plain()),
            vec![READER],
            vec![f.kc("kc", &f.m.kubeconfig)],
        ),
    ];
    let mut explicit = f.case(
        "explicit-namespace",
        f.reader(
            json!({}),
            json!({"name": "kc", "key": "value", "namespace": f.other}),
        ),
        vec![READER],
        vec![(
            f.other.into(),
            "kc".into(),
            "value".into(),
            f.m.kubeconfig.clone(),
        )],
    );
    explicit.reader_namespaces = vec![f.other.into()];
    cases.push(explicit);
    cases
}

/// Which access provider: the providers file's order, the deprecated list, an exec provider's extensions.
fn provider_choice_cases(f: &Fx<'_>) -> Vec<Case> {
    vec![
        f.case(
            "file-order-exec-first",
            json!({"accessProviders": [f.m.provider(READER, json!({}), f.plain()),
                f.m.provider(TOKENS, json!({}), json!({"clusterName": "tok"}))]}),
            vec![TOKENS, READER],
            vec![f.kc("kc", &f.decoy()), f.tok()],
        ),
        f.case(
            "file-order-reader-first",
            json!({"accessProviders": [f.m.provider(TOKENS, json!({}), json!({"clusterName": "tok"})),
                f.m.provider(READER, json!({}), f.plain())]}),
            vec![READER, TOKENS],
            vec![f.kc("kc", &f.m.kubeconfig), f.tok()],
        ),
        f.case(
            "deprecated-credential-providers",
            json!({"credentialProviders": [f.m.provider(READER, json!({}), f.plain())]}),
            vec![READER],
            vec![f.kc("kc", &f.m.kubeconfig)],
        ),
        f.case(
            "exec-extensions",
            json!({"accessProviders": [f.m.provider(TOKENS, json!({}), json!({"clusterName": "tok"}))]}),
            vec![TOKENS],
            vec![f.tok()],
        ),

    ]
}

/// The cases where they differ on purpose, each with its name in the guide and the fields that differ.
fn differing(f: &Fx<'_>) -> Vec<Case> {
    let differing: [Differing; 6] = [
        (
            "tls-server-name",
            f.reader(json!({"tls-server-name": "wrong.example"}), f.plain()),
            vec![READER],
            vec![f.kc("kc", &f.m.kubeconfig)],
            "drops-tls-server-name",
            &["tls_server_name", "connected"],
        ),
        (
            "insecure",
            f.reader(
                json!({"insecure-skip-tls-verify": true, "certificate-authority-data": null}),
                f.plain(),
            ),
            vec![READER],
            vec![f.kc("kc", &f.m.kubeconfig)],
            "drops-insecure-skip-tls-verify",
            &["insecure", "connected"],
        ),
        (
            "config-member",
            f.reader(json!({}), json!({"config": {"name": "kc", "key": "value"}})),
            vec![READER],
            vec![f.kc("kc", &f.m.kubeconfig)],
            "config-member",
            &["registered"],
        ),
        (
            "kubeconfig-extensions",
            f.reader(json!({}), f.plain()),
            vec![READER],
            vec![f.kc("kc", &f.with_extensions())],
            "kubeconfig-extensions",
            &["registered"],
        ),
        (
            "no-key",
            f.reader(json!({}), json!({"name": "kc"})),
            vec![READER],
            vec![f.kc("kc", &f.m.kubeconfig)],
            "optional-key",
            &["registered"],
        ),
        (
            "unlisted-secretreader",
            f.reader(json!({}), f.plain()),
            vec![TOKENS],
            vec![f.kc("kc", &f.m.kubeconfig)],
            "unlisted-secretreader",
            &["registered"],
        ),
    ];
    let mut cases = Vec::new();
    for (id, status, providers, secrets, doc, fields) in differing {
        let mut c = f.case(id, status, providers, secrets);
        c.differs = Some((doc, fields));
        cases.push(c);
    }
    // The plugin's own namespace holds a Secret of the same name with another credential: upstream reads that one.
    let mut consumer = f.case(
        "namespace-default",
        f.reader(json!({}), f.plain()),
        vec![READER],
        vec![
            f.kc("kc", &f.m.kubeconfig),
            (f.other.into(), "kc".into(), "value".into(), decoy_user(f.m)),
        ],
    );
    consumer.plugin_namespace = Some(f.other.into());
    consumer.differs = Some(("namespace-default", &["token", "connected"]));
    cases.push(consumer);
    cases
}

/// The member's kubeconfig with a token the member does not know.
fn decoy_user(m: &Member) -> String {
    m.kubeconfig_with(|k| k["users"][0]["user"]["token"] = "consumer-token".into())
}

/// A copy of the admin kubeconfig whose current context's namespace is `ns`: the upstream plugins' own
/// KUBECONFIG (they read Secrets with it, and take its namespace for their own).
fn plugin_kubeconfig(dir: &Path, i: usize, ns: &str) -> PathBuf {
    let env = TestEnv::get();
    let copy = dir.join(format!("plugin-{i}.kubeconfig"));
    std::fs::copy(&env.kubeconfig, &copy).unwrap();
    env.kubectl_at(
        &copy,
        &["config", "set-context", "--current", "--namespace", ns],
    );
    copy
}

/// The providers file of case `i`: its providers in order, each the upstream plugin of its name, given the
/// plugin's KUBECONFIG.
fn providers_file(
    dir: &Path,
    i: usize,
    bin: &Path,
    providers: &[&str],
    kubeconfig: &Path,
) -> PathBuf {
    let entries: Vec<Json> = providers
        .iter()
        .map(|p| {
            json!({"name": p, "execConfig": {
                "apiVersion": "client.authentication.k8s.io/v1",
                "command": bin.join(format!("{p}-plugin")),
                "provideClusterInfo": true,
                "env": [{"name": "KUBECONFIG", "value": kubeconfig}],
            }})
        })
        .collect();
    let file = dir.join(format!("providers-{i}.json"));
    std::fs::write(&file, json!({"providers": entries}).to_string()).unwrap();
    file
}

/// Case `i`'s bridge, selecting its namespace only, and its `clusters` as output `c<i>`.
fn bridge_block(i: usize, ns: &str, file: &Path, case: &Case) -> String {
    let mut credentials = format!("    exec_providers_file = \"{}\"\n", file.display());
    if case.providers.contains(&TOKENS) {
        credentials += "    exec_providers = { secretreader = { namespaces = [\"*\"] } }\n";
    }
    if !case.reader_namespaces.is_empty() {
        let list: Vec<String> = case
            .reader_namespaces
            .iter()
            .map(|n| format!("\"{n}\""))
            .collect();
        credentials += &format!("    secret_reader_namespaces = [{}]\n", list.join(", "));
    }
    format!(
        "resource \"sveltos_cluster_inventory_bridge\" \"c{i}\" {{\n  name = \"{ns}\"\n  namespaces = [\"{ns}\"]\n  \
         credentials {{\n{credentials}  }}\n}}\noutput \"c{i}\" {{\n  value = sveltos_cluster_inventory_bridge.c{i}.clusters\n}}\n"
    )
}

/// What the upstream access library makes of the stored ClusterProfile `<ns>/c` with `providers`: `cia-oracle`'s
/// answer, and `None` when it refuses the profile or its plugin returns no token.
fn oracle_seen(bin: &Path, providers: &Path, dir: &Path, ns: &str) -> (Option<Seen>, Json) {
    let env = TestEnv::get();
    // As stored (v1alpha1): the upstream library in ../shared reads v1alpha1 and still sees
    // `credentialProviders`, which a v1alpha2 read (what kubectl now prefers) prunes.
    let stored = env.kubectl(&[
        "get",
        "clusterprofiles.v1alpha1.multicluster.x-k8s.io",
        "-n",
        ns,
        "c",
        "-o",
        "json",
    ]);
    let profile = dir.join(format!("{ns}.profile.json"));
    std::fs::write(&profile, stored).unwrap();
    let out = std::process::Command::new(bin.join("cia-oracle"))
        .arg("-providers")
        .arg(providers)
        .arg("-profile")
        .arg(&profile)
        .arg("-connect")
        .output()
        .expect("running cia-oracle");
    let answer: Json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "cia-oracle answered no JSON ({e}): {}",
            support::describe_output(&out)
        )
    });
    let s = |k: &str| answer[k].as_str().unwrap_or_default().to_string();
    if !s("error").is_empty() || s("token_sha256").is_empty() {
        return (None, answer);
    }
    let seen = Seen {
        provider: s("provider"),
        server: s("server"),
        proxy: s("proxy"),
        ca_sha256: s("ca_sha256"),
        tls_server_name: s("tls_server_name"),
        insecure: answer["insecure"] == true,
        token_sha256: s("token_sha256"),
        connected: answer["connected"] == true,
    };
    (Some(seen), answer)
}

/// What the bridge registered for `<ns>/c` (output `c<i>`), as client-go reads the kubeconfig it wrote, and
/// whether that kubeconfig reaches a server that accepts it.
async fn bridge_seen(inv: &Inv, outputs: &Json, i: usize, ns: &str, dir: &Path) -> Option<Seen> {
    use base64::Engine as _;
    let entry = &outputs[format!("c{i}")]["value"][format!("{ns}/c")];
    let source = entry["credential_source"].as_str()?;
    let provider = match source.split(':').collect::<Vec<_>>()[..] {
        ["access-provider" | "exec", name, ..] => name.to_string(),
        _ => source.to_string(),
    };
    let written = inv.bridged_kubeconfig(ns, "c").await?;
    let view = client_go_view(dir, &written).unwrap();
    let cluster = &view["clusters"][0]["cluster"];
    let s = |v: &Json| v.as_str().unwrap_or_default().to_string();
    let ca = base64::engine::general_purpose::STANDARD
        .decode(s(&cluster["certificate-authority-data"]))
        .unwrap();
    let token = s(&view["users"][0]["user"]["token"]);
    let file = dir.join(format!("{ns}.written"));
    std::fs::write(&file, &written).unwrap();
    let connected = std::process::Command::new(TestEnv::get().bin.join("kubectl"))
        .args([
            "get",
            "--raw",
            "/version",
            "--request-timeout=20s",
            "--kubeconfig",
        ])
        .arg(&file)
        .env_remove("KUBECONFIG")
        .output()
        .unwrap()
        .status
        .success();
    Some(Seen {
        provider,
        server: s(&cluster["server"]),
        proxy: s(&cluster["proxy-url"]),
        ca_sha256: if ca.is_empty() {
            String::new()
        } else {
            sha256_hex(&ca)
        },
        tls_server_name: s(&cluster["tls-server-name"]),
        insecure: cluster["insecure-skip-tls-verify"] == true,
        token_sha256: if token.is_empty() {
            String::new()
        } else {
            sha256_hex(token.as_bytes())
        },
        connected,
    })
}

/// The differential test: for every profile and providers file of the corpus, what the bridge registers (client-go's
/// reading of the kubeconfig it wrote, and whether it connects) against what a consumer built on the upstream
/// access library connects to with the upstream plugins (`cia-oracle -connect`). They agree, or differ exactly as a
/// difference the credential-models guide lists (by its name in a code span) says.
#[tokio::test(flavor = "multi_thread")]
async fn the_bridge_connects_as_the_upstream_access_library_does() {
    let Some(bin) = support::sveltos::upstream_binaries() else {
        return;
    };
    let inv = Inv::new().await;
    let m = Member::get();
    let dir = tempfile::tempdir().unwrap();
    let n = corpus(&m, "-", "-").len();
    let mut hcl = String::new();
    let mut cases = Vec::new();
    for i in 0..n {
        let ns = unique_namespace(&inv.client, "diff").await;
        let other = unique_namespace(&inv.client, "diff-other").await;
        let case = corpus(&m, &ns, &other).into_iter().nth(i).unwrap();
        for (sns, name, key, value) in &case.secrets {
            inv.secret(sns, name, &[], &[(key.as_str(), value.as_str())])
                .await;
        }
        inv.profile(&ns, "c", &[], case.status.clone()).await;
        let kc = plugin_kubeconfig(
            dir.path(),
            i,
            case.plugin_namespace.as_deref().unwrap_or(&ns),
        );
        let file = providers_file(dir.path(), i, &bin, &case.providers, &kc);
        hcl += &bridge_block(i, &ns, &file, &case);
        cases.push((case, ns, file));
    }
    let tf = inv.tf(&Cli::tofu(), &hcl);
    apply_ok(&tf);
    let outputs = tf.outputs_json();
    let guide = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/guides/credential-models.md"),
    )
    .unwrap();
    let mut failures = Vec::new();
    for (i, (case, ns, file)) in cases.iter().enumerate() {
        let (oracle, answer) = oracle_seen(&bin, file, dir.path(), ns);
        let bridged = bridge_seen(&inv, &outputs, i, ns, dir.path()).await;
        let diff = Seen::differences(&oracle, &bridged);
        let expected: Vec<&str> = case.differs.map(|(_, f)| f.to_vec()).unwrap_or_default();
        support::inventory::report(&format!(
            "upstream differential: {}: differs in {diff:?} (oracle connected: {}, bridge registered: {})",
            case.id,
            answer["connected"],
            bridged.is_some()
        ));
        if diff != expected {
            failures.push(format!(
                "{}: differs in {diff:?}, expected {expected:?}\n  oracle: {answer}\n  oracle seen: {oracle:?}\n  bridge seen: {bridged:?}",
                case.id
            ));
        }
        if let Some((doc, _)) = case.differs
            && !guide.contains(&format!("`{doc}`"))
        {
            failures.push(format!("{}: the guide does not list `{doc}`", case.id));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    tf.destroy();
}
