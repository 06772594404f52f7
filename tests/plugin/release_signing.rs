//! A signed release as the registries and a careful user check it: `scripts/release` signs `SHA256SUMS` with a
//! throwaway RSA key made here, in the two ways a release runs it (`--package-only --sign KEY` on one machine;
//! and, as `.github/workflows/release.yml` does, the key imported from its ASCII-armoured export into a fresh
//! keyring, then `--sums-only` with `GPG_FINGERPRINT` and `GPG_PASSPHRASE` over zips packaged before). In a third
//! keyring that holds only the exported public key, `gpg --verify` accepts `_SHA256SUMS.sig` as a valid signature
//! by that key, and `sha256sum -c` accepts every file `SHA256SUMS` lists, which are exactly the zips and the
//! manifest; a changed `SHA256SUMS` or zip is refused. This is what docs/guides/installing.md tells users to run.
//!
//! Needs `gpg` (GnuPG 2) on PATH: without it the test fails under `CI=true` and is skipped loudly otherwise.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const VERSION: &str = env!("CARGO_PKG_VERSION");
const NAME: &str = "terraform-provider-sveltos";
const PASSPHRASE: &str = "throwaway release-test passphrase";

/// A GnuPG home of its own (`GNUPGHOME`), whose agent is stopped when it is dropped.
struct Keyring {
    home: tempfile::TempDir,
}

impl Keyring {
    fn new(what: &str) -> Keyring {
        // Short and under /tmp: the agent's socket path must stay under the Unix socket limit.
        let home = tempfile::Builder::new()
            .prefix(&format!("gpg-{what}-"))
            .tempdir_in("/tmp")
            .expect("creating a GNUPGHOME");
        let mut perms = std::fs::metadata(home.path()).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o700);
        std::fs::set_permissions(home.path(), perms).unwrap();
        Keyring { home }
    }

    fn home(&self) -> &Path {
        self.home.path()
    }

    /// `gpg --batch ARGS` in this keyring.
    fn gpg(&self, args: &[&str]) -> Output {
        Command::new("gpg")
            .arg("--batch")
            .args(args)
            .env("GNUPGHOME", self.home())
            .output()
            .expect("running gpg")
    }

    fn gpg_ok(&self, args: &[&str]) -> Vec<u8> {
        let out = self.gpg(args);
        assert!(
            out.status.success(),
            "gpg {args:?} failed:\n{}",
            support::describe_output(&out)
        );
        out.stdout
    }
}

impl Drop for Keyring {
    fn drop(&mut self) {
        let _ = Command::new("gpgconf")
            .args(["--kill", "gpg-agent"])
            .env("GNUPGHOME", self.home())
            .output();
    }
}

fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// A keyring with a new passphrase-protected RSA signing key (the Terraform Registry accepts RSA and DSA keys,
/// not EdDSA); returns it with the key's fingerprint.
fn signing_key() -> (Keyring, String) {
    let keys = Keyring::new("signer");
    keys.gpg_ok(&[
        "--pinentry-mode",
        "loopback",
        "--passphrase",
        PASSPHRASE,
        "--quick-generate-key",
        "terraform-provider-sveltos release test <release-test@example.invalid>",
        "rsa2048",
        "sign",
        "never",
    ]);
    let listing = String::from_utf8(keys.gpg_ok(&["--with-colons", "--list-secret-keys"])).unwrap();
    let fingerprint = listing
        .lines()
        .find_map(|l| l.strip_prefix("fpr:"))
        .and_then(|l| l.split(':').find(|f| f.len() == 40))
        .unwrap_or_else(|| panic!("no fingerprint in:\n{listing}"))
        .to_string();
    (keys, fingerprint)
}

/// `scripts/release ARGS VERSION` with `envs`; asserts success.
fn release(args: &[&str], envs: &[(&str, &Path)], gpg_env: &[(&str, &str)]) {
    let mut cmd = Command::new(support::repo_root().join("scripts").join("release"));
    cmd.args(args)
        .arg(VERSION)
        .env("SOURCE_DATE_EPOCH", "1700000000")
        .env_remove("GPG_FINGERPRINT")
        .env_remove("GPG_PASSPHRASE");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    for (k, v) in gpg_env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("running scripts/release");
    assert!(
        out.status.success(),
        "scripts/release {args:?} failed:\n{}",
        support::describe_output(&out)
    );
}

fn stand_in_binary(dir: &Path) -> PathBuf {
    let binary = dir.join("provider");
    support::write_executable(
        &binary,
        "#!/bin/sh\necho a stand-in: packaging does not look inside\n",
    );
    binary
}

fn sums_file(dist: &Path) -> PathBuf {
    dist.join(format!("{NAME}_{VERSION}_SHA256SUMS"))
}

fn sig_file(dist: &Path) -> PathBuf {
    dist.join(format!("{NAME}_{VERSION}_SHA256SUMS.sig"))
}

/// What a user does with a download: `gpg --verify` against the published public key (in a keyring holding only
/// it), then `sha256sum -c`. Asserts both pass, that the signature is a binary detached one by `fingerprint`, and
/// that SHA256SUMS lists exactly the zips and the manifest in `dist`.
fn verify_as_a_user(dist: &Path, public_key: &Path, fingerprint: &str) {
    let user = Keyring::new("user");
    user.gpg_ok(&["--import", public_key.to_str().unwrap()]);
    let sig = std::fs::read(sig_file(dist)).expect("the .sig file");
    assert!(
        !sig.starts_with(b"-----BEGIN"),
        "the registries read a binary signature, not an ASCII-armoured one"
    );
    let sums = sums_file(dist);
    let status = user.gpg_ok(&[
        "--status-fd",
        "1",
        "--verify",
        sig_file(dist).to_str().unwrap(),
        sums.to_str().unwrap(),
    ]);
    let status = String::from_utf8_lossy(&status);
    assert!(
        status.contains(&format!("[GNUPG:] VALIDSIG {fingerprint}")),
        "gpg --verify did not report a valid signature by {fingerprint}:\n{status}"
    );

    let check = Command::new("sha256sum")
        .args(["--check", "--strict"])
        .arg(sums.file_name().unwrap())
        .current_dir(dist)
        .output()
        .expect("running sha256sum");
    assert!(
        check.status.success(),
        "sha256sum --check:\n{}",
        support::describe_output(&check)
    );
    let listed: Vec<String> = std::fs::read_to_string(&sums)
        .unwrap()
        .lines()
        .map(|l| {
            l.split_once("  ")
                .expect("`<sha256>  <file>`")
                .1
                .to_string()
        })
        .collect();
    let mut published: Vec<String> = std::fs::read_dir(dist)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f.ends_with(".zip") || f.ends_with("_manifest.json"))
        .collect();
    published.sort();
    assert_eq!(
        listed, published,
        "SHA256SUMS lists exactly the zips and the manifest"
    );
    assert!(listed.iter().any(|f| f.ends_with(".zip")), "{listed:?}");
    refuses_tampering(&user, dist);
}

/// The same checks refuse a changed SHA256SUMS (bad signature) and a changed zip (bad checksum).
fn refuses_tampering(user: &Keyring, dist: &Path) {
    let copy = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(dist).unwrap().flatten() {
        std::fs::copy(e.path(), copy.path().join(e.file_name())).unwrap();
    }
    let sums = sums_file(copy.path());
    let text = std::fs::read_to_string(&sums).unwrap();
    std::fs::write(
        &sums,
        text.replacen(&text[..1], if &text[..1] == "0" { "1" } else { "0" }, 1),
    )
    .unwrap();
    let out = user.gpg(&[
        "--verify",
        sig_file(copy.path()).to_str().unwrap(),
        sums.to_str().unwrap(),
    ]);
    assert!(
        !out.status.success(),
        "gpg --verify accepted a changed SHA256SUMS"
    );

    std::fs::write(&sums, text).unwrap();
    let zip = std::fs::read_dir(copy.path())
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().ends_with(".zip"))
        .unwrap()
        .path();
    let mut bytes = std::fs::read(&zip).unwrap();
    bytes.push(0);
    std::fs::write(&zip, bytes).unwrap();
    let check = Command::new("sha256sum")
        .args(["--check", "--strict", "--quiet"])
        .arg(sums.file_name().unwrap())
        .current_dir(copy.path())
        .output()
        .unwrap();
    assert!(
        !check.status.success(),
        "sha256sum --check accepted a changed zip"
    );
}

#[test]
fn release_signatures_verify_against_the_exported_public_key() {
    if support::needed(on_path("gpg"), "`gpg` on PATH (GnuPG 2)").is_none() {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let binary = stand_in_binary(work.path());
    let (signer, fingerprint) = signing_key();
    let public_key = work.path().join("public.asc");
    std::fs::write(
        &public_key,
        signer.gpg_ok(&["--armor", "--export", &fingerprint]),
    )
    .unwrap();

    // One machine: package and sign in one run (`--sign KEY`, passphrase through GPG_PASSPHRASE). The agent is
    // restarted first so that no passphrase it cached while making the key does the work.
    let _ = Command::new("gpgconf")
        .args(["--kill", "gpg-agent"])
        .env("GNUPGHOME", signer.home())
        .output();
    let one = work.path().join("one");
    let bin = binary.to_str().unwrap();
    release(
        &[
            "--package-only",
            "--binary",
            bin,
            "--out",
            one.to_str().unwrap(),
            "--sign",
            &fingerprint,
        ],
        &[("GNUPGHOME", signer.home())],
        &[("GPG_PASSPHRASE", PASSPHRASE)],
    );
    verify_as_a_user(&one, &public_key, &fingerprint);

    // The release workflow: the private key comes as an ASCII-armoured secret, imported into the runner's fresh
    // keyring; the zips were packaged by other jobs; one `--sums-only` run writes and signs SHA256SUMS.
    let secret = signer.gpg_ok(&[
        "--pinentry-mode",
        "loopback",
        "--passphrase",
        PASSPHRASE,
        "--armor",
        "--export-secret-keys",
        &fingerprint,
    ]);
    let runner = Keyring::new("runner");
    let secret_file = work.path().join("secret.asc");
    std::fs::write(&secret_file, secret).unwrap();
    runner.gpg_ok(&["--import", secret_file.to_str().unwrap()]);
    let two = work.path().join("two");
    release(
        &[
            "--package-only",
            "--binary",
            bin,
            "--out",
            two.to_str().unwrap(),
        ],
        &[],
        &[],
    );
    assert!(!sig_file(&two).exists(), "no key given, no signature");
    release(
        &[
            "--sums-only",
            "--out",
            two.to_str().unwrap(),
            "--sign",
            &fingerprint,
        ],
        &[("GNUPGHOME", runner.home())],
        &[
            ("GPG_FINGERPRINT", &fingerprint),
            ("GPG_PASSPHRASE", PASSPHRASE),
        ],
    );
    verify_as_a_user(&two, &public_key, &fingerprint);
}
