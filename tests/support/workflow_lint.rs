//! An actionlint-style checker of GitHub workflows, without GitHub: valid YAML with a trigger and jobs; every job has
//! `runs-on` and steps, and every step either `uses` an action pinned to a full commit hash or `run`s a script;
//! `${{ }}` expressions name only known contexts, and only secrets, variables, inputs, env entries, steps and needs
//! that exist; no expression is pasted into a `run:` script; permissions are set, read-only at the top; checkouts do
//! not leave the token in `.git/config`. Used by `tests/plugin/workflows.rs` (the repository's workflows) and
//! `tests/e2e/recipes.rs` (the workflows of `examples/recipes`), each with the secrets and variables its repository
//! defines.

use std::collections::BTreeSet;

use serde_json::Value;

/// The secrets and repository variables a workflow may name (secrets upper case: GitHub ignores their case).
pub struct Known<'a> {
    /// Secret names, upper case.
    pub secrets: &'a [&'a str],
    /// Repository variable names.
    pub variables: &'a [&'a str],
}

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

/// The one place the YAML parser is named.
pub fn parse_yaml(text: &str) -> Result<Value, String> {
    serde_saphyr::from_str::<Value>(text).map_err(|e| e.to_string())
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
    secrets: BTreeSet<String>,
    variables: BTreeSet<String>,
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
            ("secrets", Some(s)) if !known(&scope.secrets, &s.to_uppercase()) => {
                problems.push(format!("{at}: undefined secret `{s}`"));
            }
            ("vars", Some(v)) if !known(&scope.variables, v) => {
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

/// Every problem found in one workflow file, for a repository that defines the secrets and variables of `known`.
pub fn lint(file: &str, text: &str, known: &Known<'_>) -> Vec<String> {
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
        secrets: known.secrets.iter().map(|s| s.to_uppercase()).collect(),
        variables: known.variables.iter().map(|v| v.to_string()).collect(),
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
