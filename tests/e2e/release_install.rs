//! Release artifacts installed the way users install them: `scripts/release --package-only`
//! packages the provider binary cargo built for these tests with the code path of a real release,
//! the zip goes into a packed `filesystem_mirror`, and every CLI (`tofu init`, `terraform-1.0.3
//! init -plugin-dir`, the `terraform` on PATH) installs it, pins it in `.terraform.lock.hcl` and
//! plans against the test control plane.
//!
//! The lock file starts with only the `zh:` hash from our `SHA256SUMS` (what a registry would
//! hand out), so `init` succeeding proves the published checksum matches the zip; `init` then
//! adds the `h1:` hash, which must be the one computed from the binary inside.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use base64::Engine as _;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};
use serde_json::Value as Json;
use sha2::{Digest, Sha256};
use support::{Cli, PROVIDER_HOSTS, PROVIDER_SOURCE, TestEnv, Tf, fixtures};
use tfsveltos::api::ClusterProfile;

const VERSION: &str = env!("CARGO_PKG_VERSION");
const NAME: &str = "terraform-provider-sveltos";
/// 2023-11-14T22:13:20Z, as SOURCE_DATE_EPOCH.
const EPOCH: u64 = 1_700_000_000;

fn zip_name() -> String {
    format!("{NAME}_{VERSION}_{}.zip", support::release_platform())
}

/// `scripts/release --package-only --binary BINARY --out OUT VERSION` with a fixed
/// SOURCE_DATE_EPOCH.
fn package(binary: &Path, out: &Path) -> Output {
    Command::new(support::repo_root().join("scripts").join("release"))
        .args(["--package-only", "--binary"])
        .arg(binary)
        .arg("--out")
        .arg(out)
        .arg(VERSION)
        .env("SOURCE_DATE_EPOCH", EPOCH.to_string())
        .env_remove("GPG_FINGERPRINT")
        .output()
        .expect("running scripts/release")
}

fn package_ok(binary: &Path, out: &Path) {
    let o = package(binary, out);
    assert!(
        o.status.success(),
        "scripts/release --package-only failed ({}):\n{}",
        o.status,
        support::describe_output(&o)
    );
}

/// `sha256sum FILE` (fast also for the unoptimised test build's 200 MB debug binary).
fn sha256_file(path: &Path) -> String {
    let out = Command::new("sha256sum")
        .arg(path)
        .output()
        .expect("running sha256sum");
    assert!(out.status.success(), "sha256sum {}", path.display());
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .expect("sha256sum output")
        .to_string()
}

/// The `SHA256SUMS` file as (file name, hex digest) pairs, in file order.
fn read_sums(dir: &Path) -> Vec<(String, String)> {
    let path = dir.join(format!("{NAME}_{VERSION}_SHA256SUMS"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    text.lines()
        .map(|l| {
            let (sum, file) = l
                .split_once("  ")
                .unwrap_or_else(|| panic!("malformed SHA256SUMS line {l:?}"));
            (file.to_string(), sum.to_string())
        })
        .collect()
}

/// One entry of a zip's central directory.
#[derive(Debug, PartialEq, Eq)]
struct ZipEntry {
    name: String,
    /// upper byte of "version made by": 3 = Unix
    made_by_os: u8,
    method: u16,
    dos_time: u16,
    dos_date: u16,
    uncompressed_size: u32,
    /// st_mode from the upper half of the external attributes
    mode: u32,
    extra_len: u16,
}

/// Reads the central directory of a (non-zip64, comment-less) zip file.
fn zip_entries(bytes: &[u8]) -> Vec<ZipEntry> {
    let u16_at = |o: usize| u16::from_le_bytes([bytes[o], bytes[o + 1]]);
    let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().unwrap());
    let eocd = bytes.len() - 22;
    assert_eq!(
        u32_at(eocd),
        0x0605_4b50,
        "end of central directory record (no archive comment expected)"
    );
    let count = u16_at(eocd + 10) as usize;
    let mut at = u32_at(eocd + 16) as usize;
    let mut entries = Vec::new();
    for _ in 0..count {
        assert_eq!(u32_at(at), 0x0201_4b50, "central directory header");
        let name_len = u16_at(at + 28) as usize;
        let extra_len = u16_at(at + 30);
        let comment_len = u16_at(at + 32) as usize;
        entries.push(ZipEntry {
            name: String::from_utf8(bytes[at + 46..at + 46 + name_len].to_vec()).unwrap(),
            made_by_os: bytes[at + 5],
            method: u16_at(at + 10),
            dos_time: u16_at(at + 12),
            dos_date: u16_at(at + 14),
            uncompressed_size: u32_at(at + 24),
            mode: u32_at(at + 38) >> 16,
            extra_len,
        });
        at += 46 + name_len + extra_len as usize + comment_len;
    }
    entries
}

/// The `h1:` hash Terraform and OpenTofu compute for an unpacked provider package: sha256 over the
/// lines `<sha256 hex>  <path>\n` of its files, sorted by path, base64.
fn h1_hash(files: &[(&str, &str)]) -> String {
    let mut files = files.to_vec();
    files.sort();
    let mut summary = String::new();
    for (path, sum) in files {
        summary += &format!("{sum}  {path}\n");
    }
    let digest = Sha256::digest(summary.as_bytes());
    format!(
        "h1:{}",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

#[test]
fn packaging_is_reproducible_and_registry_shaped() {
    // A small stand-in binary keeps this fast; the packaging does not look inside.
    let work = tempfile::tempdir().unwrap();
    let binary = work.path().join("provider");
    std::fs::write(&binary, b"#!/bin/sh\necho not really a provider\n").unwrap();
    let mut perms = std::fs::metadata(&binary).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o700);
    std::fs::set_permissions(&binary, perms).unwrap();

    let (a, b) = (work.path().join("a"), work.path().join("b"));
    package_ok(&binary, &a);
    // Same input again, at another time and with another file mtime: same bytes.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let now = std::fs::read(&binary).unwrap();
    std::fs::write(&binary, now).unwrap();
    package_ok(&binary, &b);

    let listing = |d: &Path| {
        let mut names: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let prefix = format!("{NAME}_{VERSION}");
    assert_eq!(
        listing(&a),
        vec![
            format!("{prefix}_SHA256SUMS"),
            zip_name(),
            format!("{prefix}_manifest.json"),
        ],
        "artifacts without a signing key"
    );
    assert_eq!(listing(&a), listing(&b));
    for name in listing(&a) {
        assert_eq!(
            std::fs::read(a.join(&name)).unwrap(),
            std::fs::read(b.join(&name)).unwrap(),
            "{name} differs between two packagings of the same input"
        );
    }

    // The zip: exactly the binary, named terraform-provider-sveltos_vVERSION, mode 0755, dated
    // SOURCE_DATE_EPOCH (2023-11-14 22:13:20 UTC), no extra fields (no local times, uid/gid).
    let zip = std::fs::read(a.join(zip_name())).unwrap();
    let entries = zip_entries(&zip);
    let (year, month, day, hour, min, sec) = (2023u16, 11u16, 14u16, 22u16, 13u16, 20u16);
    assert_eq!(
        entries,
        vec![ZipEntry {
            name: format!("{NAME}_v{VERSION}"),
            made_by_os: 3,
            method: 8,
            dos_time: (hour << 11) | (min << 5) | (sec / 2),
            dos_date: ((year - 1980) << 9) | (month << 5) | day,
            uncompressed_size: std::fs::metadata(&binary).unwrap().len() as u32,
            mode: 0o100755,
            extra_len: 0,
        }]
    );

    // SHA256SUMS lists the zip and the manifest with their real digests, sorted.
    let sums = read_sums(&a);
    let mut expected: Vec<(String, String)> = [zip_name(), format!("{prefix}_manifest.json")]
        .into_iter()
        .map(|f| {
            let sum = hex::encode(Sha256::digest(std::fs::read(a.join(&f)).unwrap()));
            (f, sum)
        })
        .collect();
    expected.sort();
    assert_eq!(sums, expected);

    // The manifest is the repository's terraform-registry-manifest.json: protocol 6.0.
    let manifest = std::fs::read(a.join(format!("{prefix}_manifest.json"))).unwrap();
    assert_eq!(
        manifest,
        std::fs::read(support::repo_root().join("terraform-registry-manifest.json")).unwrap()
    );
    let manifest: Json = serde_json::from_slice(&manifest).unwrap();
    assert_eq!(
        manifest,
        serde_json::json!({"version": 1, "metadata": {"protocol_versions": ["6.0"]}})
    );
}

#[test]
fn release_refuses_bad_versions_before_building() {
    let script = support::repo_root().join("scripts").join("release");
    let run = |args: &[&str]| {
        let o = Command::new(&script)
            .args(args)
            .output()
            .expect("running scripts/release");
        assert!(!o.status.success(), "scripts/release {args:?} succeeded");
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let err = run(&["not-a-version"]);
    assert!(err.contains("VERSION must be semantic"), "{err}");
    // A full release must carry the version the binary reports (Cargo.toml's).
    let err = run(&["999.0.0", "--out", "/nonexistent/never-written"]);
    assert!(err.contains("differs from Cargo.toml"), "{err}");
    let err = run(&["--package-only", VERSION]);
    assert!(err.contains("--package-only needs --binary"), "{err}");
    // darwin named explicitly on Linux: the missing macOS SDK is the reason given (nothing a package installs).
    if cfg!(target_os = "linux") {
        let err = run(&[
            "--platforms",
            "darwin_arm64",
            "--out",
            "/nonexistent/never-written",
            VERSION,
        ]);
        assert!(
            err.contains("cannot build darwin_arm64: no macOS SDK/linker"),
            "{err}"
        );
    }
}

/// A fresh namespace with one ClusterProfile and its kubeconfig Secret, so the plan reads
/// something real. Returns the namespace.
async fn sample_inventory(env: &TestEnv) -> String {
    let client = env.client().await;
    let ns = support::unique_namespace(&client, "release-install").await;
    let profile = fixtures::cluster_profile(&ns, "edge-1", "release-test", &[]);
    Api::<ClusterProfile>::namespaced(client.clone(), &ns)
        .create(&PostParams::default(), &profile)
        .await
        .expect("creating ClusterProfile");
    let secret = fixtures::secret(
        &ns,
        "edge-1-kubeconfig",
        &[],
        &[("kubeconfig", "apiVersion: v1\nkind: Config\n")],
    );
    Api::<Secret>::namespaced(client, &ns)
        .create(&PostParams::default(), &secret)
        .await
        .expect("creating Secret");
    ns
}

fn main_tf(env: &TestEnv, ns: &str) -> String {
    format!(
        r#"{}
data "sveltos_clusterprofiles" "here" {{
  namespaces = ["{ns}"]
}}

output "ids" {{
  value = [for p in data.sveltos_clusterprofiles.here.cluster_profiles : p.id]
}}
"#,
        fixtures::provider_header(&env.kubeconfig, Some(VERSION))
    )
}

/// The host a bare `clusterinventory/sveltos` resolves to for this CLI.
fn host_for(cli: &Cli) -> &'static str {
    if cli.is_tofu() {
        "registry.opentofu.org"
    } else {
        "registry.terraform.io"
    }
}

fn lock_file(cli: &Cli, hashes: &[String]) -> String {
    let list = hashes
        .iter()
        .map(|h| format!("    \"{h}\",\n"))
        .collect::<String>();
    format!(
        "provider \"{}/{PROVIDER_SOURCE}\" {{\n  version     = \"{VERSION}\"\n  constraints = \"{VERSION}\"\n  hashes = [\n{list}  ]\n}}\n",
        host_for(cli)
    )
}

/// `init` the way each CLI installs from a local directory: the CLI configuration's
/// `filesystem_mirror` for tofu and terraform, `-plugin-dir` for terraform 1.0.3.
fn init(tf: &Tf, mirror: &Path) -> Output {
    let plugin_dir = format!("-plugin-dir={}", mirror.display());
    let mut args = vec!["init", "-input=false", "-no-color"];
    if tf.cli.name == "terraform-1.0.3" {
        args.push(&plugin_dir);
    }
    tf.run(&args)
}

/// Hashes in `.terraform.lock.hcl` for our provider.
fn locked_hashes(tf: &Tf) -> Vec<String> {
    let text = std::fs::read_to_string(tf.dir().join(".terraform.lock.hcl"))
        .expect("reading .terraform.lock.hcl");
    assert!(
        text.contains(&format!(
            "provider \"{}/{PROVIDER_SOURCE}\"",
            host_for(&tf.cli)
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!("version     = \"{VERSION}\"")),
        "{text}"
    );
    text.lines()
        .map(str::trim)
        .filter_map(|l| l.strip_prefix('"')?.strip_suffix("\",").map(str::to_string))
        .filter(|h| h.starts_with("h1:") || h.starts_with("zh:"))
        .collect()
}

#[tokio::test]
async fn release_zip_installs_from_a_filesystem_mirror_and_plans_with_every_cli() {
    let env = TestEnv::get();
    let ns = sample_inventory(env).await;

    let work = tempfile::tempdir().unwrap();
    let dist = work.path().join("dist");
    package_ok(&support::provider_binary(), &dist);
    let zip_sha = read_sums(&dist)
        .into_iter()
        .find(|(f, _)| *f == zip_name())
        .map(|(_, s)| s)
        .expect("SHA256SUMS lists the zip");
    let zh = format!("zh:{zip_sha}");
    let binary_name = format!("{NAME}_v{VERSION}");
    let h1 = h1_hash(&[(&binary_name, &sha256_file(&support::provider_binary()))]);

    // Packed mirror layout: <mirror>/<host>/clusterinventory/sveltos/<zip>, for both hosts.
    let mirror = work.path().join("mirror");
    for host in PROVIDER_HOSTS {
        let dir = mirror.join(host).join(PROVIDER_SOURCE);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(dist.join(zip_name()), dir.join(zip_name())).unwrap();
    }

    let clis = Cli::all();
    eprintln!(
        "CLIs: {:?}",
        clis.iter().map(Cli::version).collect::<Vec<_>>()
    );
    for cli in &clis {
        // A lock file naming a checksum the zip does not have: init must refuse the package.
        let tf = Tf::with_mirror(cli, &mirror);
        tf.write_main(&main_tf(env, &ns));
        tf.write_file(
            ".terraform.lock.hcl",
            &lock_file(cli, &[format!("zh:{}", "0".repeat(64))]),
        );
        let out = init(&tf, &mirror);
        let text = support::describe_output(&out);
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            !out.status.success() && flat.contains("checksums previously recorded"),
            "{}: init accepted a zip whose checksum is not in the lock file:\n{text}",
            cli.name
        );

        // The lock file a registry user would have: only our SHA256SUMS entry.
        let tf = Tf::with_mirror(cli, &mirror);
        tf.write_main(&main_tf(env, &ns));
        tf.write_file(
            ".terraform.lock.hcl",
            &lock_file(cli, std::slice::from_ref(&zh)),
        );
        let out = init(&tf, &mirror);
        assert!(
            out.status.success(),
            "{}: init from the mirror failed:\n{}",
            cli.name,
            support::describe_output(&out)
        );
        let mut hashes = locked_hashes(&tf);
        hashes.sort();
        assert_eq!(
            hashes,
            vec![h1.clone(), zh.clone()],
            "{}: lock file hashes",
            cli.name
        );
        let installed: PathBuf = tf
            .dir()
            .join(".terraform/providers")
            .join(host_for(cli))
            .join(PROVIDER_SOURCE)
            .join(VERSION)
            .join(support::release_platform())
            .join(&binary_name);
        assert_eq!(
            sha256_file(&installed),
            sha256_file(&support::provider_binary()),
            "{}: installed binary",
            cli.name
        );

        // The installed provider plans against the control plane, reading only.
        let plan = tf.plan_json();
        let ids = &plan["planned_values"]["outputs"]["ids"]["value"];
        assert_eq!(
            ids,
            &serde_json::json!([format!("{ns}/edge-1")]),
            "{}: planned output:\n{plan:#}",
            cli.name
        );
        assert!(
            plan["resource_changes"]
                .as_array()
                .is_none_or(|rc| rc.iter().all(|c| c["mode"] == "data")),
            "{}: the plan changes resources:\n{plan:#}",
            cli.name
        );

        // A fresh init on an already-initialised directory with a lock file from the first
        // one is a no-op for the provider (the h1: hash matches the unpacked package).
        let out = init(&tf, &mirror);
        assert!(
            out.status.success(),
            "{}: second init failed:\n{}",
            cli.name,
            support::describe_output(&out)
        );
    }
}
