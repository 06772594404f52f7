//! The GitHub workflows (`.github/workflows/*.yml`) are checked the way `actionlint` would catch the usual
//! mistakes, without GitHub: each file is valid YAML with a trigger and jobs; every job has `runs-on` and
//! steps, and every step either `uses` an action pinned to a full commit hash or `run`s a script; `${{ }}`
//! expressions name only known contexts, and only secrets, variables, inputs, env entries, steps and needs
//! that exist; no expression is pasted into a `run:` script (values reach scripts through `env:`, so no
//! event text such as a branch name or a pull request title can become shell code); permissions are set,
//! read-only at the top; checkouts do not leave the token in `.git/config`. Also: `ci.yml` runs `.ci/run`,
//! and `release.yml` builds a signed release on `v*` tags and uploads every file the registry needs.
//! Beside them, the other house-rules tool with behaviour of its own: `scripts/deps-policy` rejects yanked crates.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::Value;

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
/// Expression contexts GitHub defines.
const CONTEXTS: &[&str] = &[
    "github", "env", "vars", "job", "jobs", "steps", "runner", "secrets", "strategy", "matrix",
    "needs", "inputs",
];
/// Expression functions GitHub defines, and literals.
const FUNCTIONS: &[&str] = &[
    "contains",
    "startsWith",
    "endsWith",
    "format",
    "join",
    "toJSON",
    "fromJSON",
    "hashFiles",
    "success",
    "always",
    "cancelled",
    "failure",
    "true",
    "false",
    "null",
];

fn workflows_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".github/workflows")
}

/// The one place the YAML parser is named.
fn parse_yaml(text: &str) -> Result<Value, String> {
    serde_saphyr::from_str::<Value>(text).map_err(|e| e.to_string())
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

/// The `${{ ... }}` expressions in `s`, or an error for an unterminated one.
fn expressions(s: &str) -> Result<Vec<&str>, String> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(start) = rest.find("${{") {
        let after = &rest[start + 3..];
        let end = after
            .find("}}")
            .ok_or_else(|| format!("unterminated expression in {s:?}"))?;
        out.push(after[..end].trim());
        rest = &after[end + 2..];
    }
    Ok(out)
}

/// The dotted names an expression reads (`secrets.X`, `github.event.pull_request.title`, `success`),
/// string literals left out.
fn names_in(expr: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let chars: Vec<char> = expr.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' {
            // a string literal; '' is an escaped quote
            i += 1;
            while i < chars.len() {
                if chars[i] == '\'' {
                    if chars.get(i + 1) == Some(&'\'') {
                        i += 2;
                        continue;
                    }
                    break;
                }
                i += 1;
            }
            i += 1;
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric() || matches!(chars[i], '_' | '-' | '.' | '*'))
            {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            out.push(word.split('.').map(str::to_string).collect());
        } else if c.is_ascii_digit() {
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    out
}

/// Keys of a mapping, upper-cased when `upper`.
fn keys(v: &Value, upper: bool) -> BTreeSet<String> {
    v.as_object()
        .map(|m| {
            m.keys()
                .map(|k| if upper { k.to_uppercase() } else { k.clone() })
                .collect()
        })
        .unwrap_or_default()
}

/// What an expression at some place of a workflow may refer to.
#[derive(Clone, Default)]
struct Scope {
    env: BTreeSet<String>,
    inputs: BTreeSet<String>,
    steps: BTreeSet<String>,
    needs: BTreeSet<String>,
    matrix: BTreeSet<String>,
}

fn check_expression(expr: &str, scope: &Scope, at: &str, problems: &mut Vec<String>) {
    for name in names_in(expr) {
        let root = name[0].as_str();
        let second = name.get(1).map(String::as_str);
        if name.len() == 1 {
            if !FUNCTIONS.contains(&root) && !CONTEXTS.contains(&root) {
                problems.push(format!("{at}: unknown name `{root}` in `{expr}`"));
            }
            continue;
        }
        let known = |set: &BTreeSet<String>, key: &str| set.contains(key);
        match (root, second) {
            (r, _) if !CONTEXTS.contains(&r) => {
                problems.push(format!("{at}: unknown context `{r}` in `{expr}`"));
            }
            ("secrets", Some(s)) if !SECRETS.contains(&s.to_uppercase().as_str()) => {
                problems.push(format!("{at}: undefined secret `{s}`"));
            }
            ("vars", Some(v)) if !VARIABLES.contains(&v) => {
                problems.push(format!("{at}: undefined variable `{v}`"));
            }
            ("inputs", Some(i)) if !known(&scope.inputs, i) => {
                problems.push(format!("{at}: undefined input `{i}`"));
            }
            ("env", Some(e)) if !known(&scope.env, &e.to_uppercase()) => {
                problems.push(format!("{at}: undefined env `{e}`"));
            }
            ("steps", Some(s)) if !known(&scope.steps, s) => {
                problems.push(format!("{at}: no earlier step with id `{s}`"));
            }
            ("needs", Some(n)) if !known(&scope.needs, n) => {
                problems.push(format!("{at}: `{n}` is not in this job's needs"));
            }
            ("matrix", Some(m)) if !known(&scope.matrix, m) => {
                problems.push(format!("{at}: no matrix key `{m}`"));
            }
            _ => {}
        }
    }
}

/// Checks an `if:` condition: an expression whether or not it is written inside `${{ }}`.
fn check_condition(v: &Value, scope: &Scope, at: &str, problems: &mut Vec<String>) {
    match v.as_str() {
        Some(s) if !s.contains("${{") => check_expression(s, scope, at, problems),
        _ => check_value(v, scope, at, problems),
    }
}

/// Checks every expression in `v` (keys and values, recursively).
fn check_value(v: &Value, scope: &Scope, at: &str, problems: &mut Vec<String>) {
    match v {
        Value::String(s) => match expressions(s) {
            Ok(exprs) => {
                for e in exprs {
                    check_expression(e, scope, at, problems);
                }
            }
            Err(e) => problems.push(format!("{at}: {e}")),
        },
        Value::Array(items) => {
            for item in items {
                check_value(item, scope, at, problems);
            }
        }
        Value::Object(map) => {
            for (k, item) in map {
                check_value(&Value::String(k.clone()), scope, at, problems);
                check_value(item, scope, &format!("{at}.{k}"), problems);
            }
        }
        _ => {}
    }
}

/// Whether `uses` names an action pinned to a full commit hash (or a local action).
fn pinned(uses: &str) -> bool {
    if uses.starts_with("./") {
        return true;
    }
    if let Some(image) = uses.strip_prefix("docker://") {
        return image.contains("@sha256:");
    }
    uses.rsplit_once('@').is_some_and(|(action, rev)| {
        action.contains('/') && rev.len() == 40 && rev.chars().all(|c| c.is_ascii_hexdigit())
    })
}

fn has_write(permissions: &Value) -> bool {
    match permissions {
        Value::String(s) => s == "write-all",
        Value::Object(m) => m.values().any(|v| v == "write"),
        _ => false,
    }
}

/// Every problem found in one workflow file.
fn lint(file: &str, text: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let wf = match parse_yaml(text) {
        Ok(v) => v,
        Err(e) => return vec![format!("{file}: not valid YAML: {e}")],
    };
    if !wf.is_object() {
        return vec![format!("{file}: not a mapping")];
    }
    if wf.get("name").and_then(Value::as_str).is_none() {
        problems.push(format!("{file}: no `name`"));
    }
    let on = &wf["on"];
    if on.is_null() {
        problems.push(format!("{file}: no `on` trigger"));
    }
    match wf.get("permissions") {
        None => problems.push(format!(
            "{file}: no top-level `permissions` (the default token can write)"
        )),
        Some(p) if has_write(p) => problems.push(format!(
            "{file}: top-level `permissions` grant write; grant it to the job that needs it"
        )),
        Some(_) => {}
    }
    let mut inputs = keys(&on["workflow_dispatch"]["inputs"], false);
    inputs.extend(keys(&on["workflow_call"]["inputs"], false));
    let top = Scope {
        env: keys(&wf["env"], true),
        inputs,
        ..Scope::default()
    };
    for key in ["name", "run-name", "concurrency", "env", "on"] {
        if let Some(v) = wf.get(key) {
            check_value(v, &top, &format!("{file}: {key}"), &mut problems);
        }
    }
    let Some(jobs) = wf["jobs"].as_object().filter(|j| !j.is_empty()) else {
        problems.push(format!("{file}: no jobs"));
        return problems;
    };
    for (id, job) in jobs {
        let at = format!("{file}: job `{id}`");
        if job.get("runs-on").is_none() && job.get("uses").is_none() {
            problems.push(format!("{at}: no `runs-on`"));
        }
        let needs: BTreeSet<String> = match &job["needs"] {
            Value::String(s) => [s.clone()].into(),
            Value::Array(a) => a
                .iter()
                .filter_map(|n| n.as_str().map(String::from))
                .collect(),
            _ => BTreeSet::new(),
        };
        for n in needs.iter().filter(|n| !jobs.contains_key(*n)) {
            problems.push(format!("{at}: needs unknown job `{n}`"));
        }
        let mut scope = top.clone();
        scope.env.extend(keys(&job["env"], true));
        scope.needs = needs;
        scope.matrix = keys(&job["strategy"]["matrix"], false);
        for key in [
            "name",
            "if",
            "env",
            "runs-on",
            "timeout-minutes",
            "strategy",
            "permissions",
        ] {
            if let Some(v) = job.get(key) {
                let at = format!("{at}.{key}");
                if key == "if" {
                    check_condition(v, &scope, &at, &mut problems);
                } else {
                    check_value(v, &scope, &at, &mut problems);
                }
            }
        }
        let Some(steps) = job["steps"].as_array().filter(|s| !s.is_empty()) else {
            problems.push(format!("{at}: no steps"));
            continue;
        };
        for (n, step) in steps.iter().enumerate() {
            let at = format!("{at} step {}", n + 1);
            let uses = step.get("uses").and_then(Value::as_str);
            let run = step.get("run").map(|r| match r {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            });
            match (uses, &run) {
                (Some(_), Some(_)) => problems.push(format!("{at}: both `uses` and `run`")),
                (None, None) => problems.push(format!("{at}: neither `uses` nor `run`")),
                (None, Some(_)) if step.get("with").is_some() => {
                    problems.push(format!("{at}: `with` on a `run` step"));
                }
                _ => {}
            }
            if let Some(u) = uses {
                if !pinned(u) {
                    problems.push(format!("{at}: `{u}` is not pinned to a full commit hash"));
                }
                if u.starts_with("actions/checkout@")
                    && step["with"]["persist-credentials"] != Value::Bool(false)
                {
                    problems.push(format!(
                        "{at}: checkout without `persist-credentials: false` leaves the token in .git/config"
                    ));
                }
            }
            if run.as_ref().is_some_and(|r| r.contains("${{")) {
                problems.push(format!(
                    "{at}: an expression in `run:` becomes shell code; pass it through `env:`"
                ));
            }
            let mut step_scope = scope.clone();
            step_scope.env.extend(keys(&step["env"], true));
            for (key, v) in step.as_object().into_iter().flatten() {
                let at = format!("{at}.{key}");
                match key.as_str() {
                    "run" => {}
                    "if" => check_condition(v, &step_scope, &at, &mut problems),
                    _ => check_value(v, &step_scope, &at, &mut problems),
                }
            }
            if let Some(id) = step.get("id").and_then(Value::as_str) {
                scope.steps.insert(id.to_string());
            }
        }
    }
    problems
}

#[test]
fn workflows_have_no_actionlint_style_mistakes() {
    let all = workflows();
    let names: Vec<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
    assert!(
        names.contains(&"ci.yml") && names.contains(&"release.yml"),
        "{names:?}"
    );
    let problems: Vec<String> = all.iter().flat_map(|(f, t)| lint(f, t)).collect();
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
        let problems = lint("case.yml", &text);
        assert!(
            problems.iter().any(|p| p.contains(expect)),
            "{what}: expected {expect:?} in {problems:?}"
        );
    }
    // A clean workflow passes: names from env, steps, secrets and strings are all accepted.
    let clean = format!(
        "{base}      - id: first\n        env:\n          TOKEN: ${{{{ secrets.GPG_PASSPHRASE }}}}\n        run: echo \"$TOKEN\"\n      - if: ${{{{ steps.first.outcome == 'success' && !contains(github.ref, 'refs/heads/x.y') }}}}\n        run: true\n"
    );
    assert_eq!(lint("clean.yml", &clean), Vec::<String>::new());
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
