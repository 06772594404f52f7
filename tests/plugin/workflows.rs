//! The GitHub workflows (`.github/workflows/*.yml`) are checked the way `actionlint` would catch the usual
//! mistakes, without GitHub: each file is valid YAML with a trigger and jobs; every job has `runs-on` and
//! steps, and every step either `uses` an action pinned to a full commit hash or `run`s a script; `${{ }}`
//! expressions name only known contexts, and only secrets, variables, inputs, env entries, steps and needs
//! that exist; no expression is pasted into a `run:` script (values reach scripts through `env:`, so no
//! event text such as a branch name or a pull request title can become shell code); permissions are set,
//! read-only at the top; checkouts do not leave the token in `.git/config`. Also: `ci.yml` runs `.ci/run`,
//! and `release.yml` builds a signed release on `v*` tags and uploads every file the registry needs.
//! The checks themselves are in `support/workflow_lint.rs` (also run on the recipes' workflows by `recipes.rs`).
//! Beside them, the other house-rules tool with behaviour of its own: `scripts/deps-policy` rejects yanked crates.

use std::path::PathBuf;

/// Secrets the repository defines (names are case-insensitive on GitHub; written upper case here).
const SECRETS: &[&str] = &[
    "GITHUB_TOKEN",
    "GPG_PRIVATE_KEY",
    "GPG_PASSPHRASE",
    "GPG_FINGERPRINT",
    "REFERENCE_TOKEN",
];
/// Repository variables (`vars.*`).
const VARIABLES: &[&str] = &["REFERENCE_REPOSITORY"];
const KNOWN: Known<'static> = Known {
    secrets: SECRETS,
    variables: VARIABLES,
};

use support::workflow_lint::{Known, lint, parse_yaml};

fn workflows_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".github/workflows")
}

/// Every workflow file: (file name, text).
fn workflows() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(workflows_dir())
        .expect(".github/workflows")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "yml" || x == "yaml"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("reading a workflow");
            (p.file_name().unwrap().to_string_lossy().into_owned(), text)
        })
        .collect();
    out.sort();
    out
}

#[test]
fn workflows_have_no_actionlint_style_mistakes() {
    let all = workflows();
    let names: Vec<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
    assert!(
        names.contains(&"ci.yml") && names.contains(&"release.yml"),
        "{names:?}"
    );
    let problems: Vec<String> = all.iter().flat_map(|(f, t)| lint(f, t, &KNOWN)).collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Every `run:` script of a workflow, in order.
fn scripts(text: &str) -> Vec<String> {
    let wf = parse_yaml(text).expect("valid YAML");
    wf["jobs"]
        .as_object()
        .into_iter()
        .flat_map(|jobs| jobs.values())
        .flat_map(|job| job["steps"].as_array().cloned().unwrap_or_default())
        .filter_map(|s| s["run"].as_str().map(String::from))
        .collect()
}

fn workflow(name: &str) -> String {
    std::fs::read_to_string(workflows_dir().join(name)).expect(name)
}

#[test]
fn ci_runs_the_projects_ci_entry_point_on_pushes_and_pull_requests() {
    let text = workflow("ci.yml");
    let wf = parse_yaml(&text).unwrap();
    assert!(wf["on"].get("push").is_some() && wf["on"].get("pull_request").is_some());
    assert!(
        scripts(&text).iter().any(|s| s.trim() == ".ci/run"),
        "ci.yml must run .ci/run"
    );
    assert!(
        text.contains("hashicorp/setup-terraform@"),
        "CI=true needs `terraform` on PATH"
    );
}

#[test]
fn release_signs_and_uploads_what_the_registry_reads_on_version_tags() {
    let text = workflow("release.yml");
    let wf = parse_yaml(&text).unwrap();
    assert_eq!(wf["on"]["push"]["tags"], serde_json::json!(["v*"]));
    let scripts = scripts(&text).join("\n");
    assert!(
        scripts.contains("scripts/release ") && scripts.contains("--sign "),
        "{scripts}"
    );
    for asset in ["_*.zip", "_SHA256SUMS", "_SHA256SUMS.sig", "_manifest.json"] {
        assert!(
            scripts.contains(&format!("\"$version\"{asset}")),
            "release.yml does not upload {asset}:\n{scripts}"
        );
    }
    assert!(
        text.contains("contents: write"),
        "uploading needs contents: write"
    );
}

/// The checks catch what they claim to: each broken workflow below is reported for its mistake.
#[test]
fn lint_reports_each_kind_of_mistake() {
    let base = "name: x\non: push\npermissions:\n  contents: read\njobs:\n  j:\n    runs-on: ubuntu-24.04\n    steps:\n";
    let cases: &[(&str, &str, &str)] = &[
        ("invalid YAML", "name: [x\n", "not valid YAML"),
        (
            "no runs-on",
            "name: x\non: push\npermissions: {}\njobs:\n  j:\n    steps:\n      - run: true\n",
            "no `runs-on`",
        ),
        (
            "no steps",
            "name: x\non: push\npermissions: {}\njobs:\n  j:\n    runs-on: ubuntu-24.04\n",
            "no steps",
        ),
        (
            "no permissions",
            "name: x\non: push\njobs:\n  j:\n    runs-on: u\n    steps:\n      - run: true\n",
            "no top-level `permissions`",
        ),
        (
            "write at the top",
            "name: x\non: push\npermissions: write-all\njobs:\n  j:\n    runs-on: u\n    steps:\n      - run: true\n",
            "grant write",
        ),
        (
            "tag instead of hash",
            "      - uses: actions/setup-go@v7\n",
            "not pinned",
        ),
        (
            "event text in a script",
            "      - run: echo \"${{ github.event.pull_request.title }}\"\n",
            "becomes shell code",
        ),
        (
            "unknown context",
            "      - if: ${{ secret.X }}\n        run: true\n",
            "unknown context `secret`",
        ),
        (
            "undefined secret",
            "      - env:\n          K: ${{ secrets.NOT_DEFINED }}\n        run: true\n",
            "undefined secret `NOT_DEFINED`",
        ),
        (
            "undefined env in a bare condition",
            "      - if: env.NOPE == 'x'\n        run: true\n",
            "undefined env `NOPE`",
        ),
        (
            "undefined env",
            "      - name: ${{ env.NOPE }}\n        run: true\n",
            "undefined env `NOPE`",
        ),
        (
            "undefined input",
            "      - name: ${{ inputs.version }}\n        run: true\n",
            "undefined input `version`",
        ),
        (
            "later step",
            "      - name: ${{ steps.later.outputs.x }}\n        run: true\n      - id: later\n        run: true\n",
            "no earlier step with id `later`",
        ),
        (
            "unterminated",
            "      - name: ${{ github.sha\n        run: true\n",
            "unterminated expression",
        ),
        (
            "uses and run",
            "      - uses: ./local\n        run: true\n",
            "both `uses` and `run`",
        ),
        (
            "checkout keeps the token",
            "      - uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1\n",
            "persist-credentials",
        ),
    ];
    for (what, body, expect) in cases {
        let text = if body.starts_with("name:") {
            body.to_string()
        } else {
            format!("{base}{body}")
        };
        let problems = lint("case.yml", &text, &KNOWN);
        assert!(
            problems.iter().any(|p| p.contains(expect)),
            "{what}: expected {expect:?} in {problems:?}"
        );
    }
    // A clean workflow passes: names from env, steps, secrets and strings are all accepted.
    let clean = format!(
        "{base}      - id: first\n        env:\n          TOKEN: ${{{{ secrets.GPG_PASSPHRASE }}}}\n        run: echo \"$TOKEN\"\n      - if: ${{{{ steps.first.outcome == 'success' && !contains(github.ref, 'refs/heads/x.y') }}}}\n        run: true\n"
    );
    assert_eq!(lint("clean.yml", &clean, &KNOWN), Vec::<String>::new());
}

/// The locked version of `name` in Cargo.lock.
fn locked_version(name: &str) -> String {
    let lock =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("Cargo.lock"))
            .expect("Cargo.lock");
    let at = lock
        .find(&format!("\nname = \"{name}\"\n"))
        .unwrap_or_else(|| panic!("{name} is not in Cargo.lock"));
    lock[at..]
        .lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .and_then(|v| v.strip_suffix('"'))
        .expect("a version line")
        .to_string()
}

/// `scripts/deps-policy` rejects a yanked crate: an index cache in cargo's layout that marks the
/// locked `serde_json` yanked makes it fail naming that version (the other locked crates, absent
/// from this cache, are reported as unknown rather than passed).
#[test]
fn deps_policy_rejects_a_yanked_crate() {
    let cache = tempfile::tempdir().expect("tempdir");
    let version = locked_version("serde_json");
    let dir = cache.path().join("se").join("rd");
    std::fs::create_dir_all(&dir).unwrap();
    let mut entry = b"\x03\x02\0\0\0test\0".to_vec();
    for (v, yanked) in [("1.0.0", false), (version.as_str(), true)] {
        entry.extend_from_slice(v.as_bytes());
        entry.push(0);
        entry.extend_from_slice(
            serde_json::json!({"name": "serde_json", "vers": v, "deps": [], "yanked": yanked})
                .to_string()
                .as_bytes(),
        );
        entry.push(0);
    }
    std::fs::write(dir.join("serde_json"), entry).unwrap();
    let out = std::process::Command::new(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/deps-policy"),
    )
    .env("DEPS_POLICY_INDEX_CACHE", cache.path())
    .output()
    .expect("running scripts/deps-policy");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("serde_json {version}: yanked from crates.io")),
        "{stderr}"
    );
    assert!(
        stderr.contains("not in the local index cache"),
        "a crate the cache does not know must not pass: {stderr}"
    );
}
