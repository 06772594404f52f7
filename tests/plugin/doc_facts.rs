//! Facts in the prose that have one source elsewhere, checked against it (`tests/plugin/doc_truth.rs` checks the
//! quoted diagnostics, the registry, the RBAC and the examples' pins):
//!
//! 1. **The README's performance figures are generated from `docs/benchmarks.md`** (which `scripts/bench`
//!    writes): the paragraph between [`BEGIN`] and [`END`] in the README is the one [`figures`] makes from the
//!    page's tables, and `UPDATE_DOCS=1 cargo test --test plugin doc_facts::` rewrites it after a new run.
//! 2. **Every test the prose names exists.** A code span naming a file under `tests/` or `src/` (README,
//!    CHANGELOG, CONTRIBUTING, `docs/`, the examples' READMEs) names a file that exists, and a code span right after
//!    it, in the form `` (`tests/e2e/x.rs`, `the_test`) ``, names a function defined in that file: a claim backed
//!    by a test loses that backing visibly when the test is renamed or removed.
//! 3. **One version.** The crate's version is the one the CHANGELOG releases (a `## [VERSION] - date` section, or,
//!    before the release, the `[Unreleased]` section's announcement of it in bold), the README's configuration
//!    pins a constraint that admits it, and the CHANGELOG has each kind of section at most once per version.
//! 4. **Links work where the pages are read.** The registries render `docs/` alone: a relative link in a published
//!    page of `docs/` (all but `docs/design/`) names a file of `docs/` that exists, and a file elsewhere in the repository is linked by its absolute
//!    address at the release's tag ([`REPOSITORY`]`/blob/vVERSION/<path>`, `tree` for a folder), naming a path
//!    that exists.
//! 5. **Every behavioural claim is indexed and backed by a test.** `docs/design/claims.md` has one row per claim
//!    (`| id | page | claim | tests |`): a stable id, the page, a verbatim fragment of it (whitespace-insensitive)
//!    and the tests exercising it, `tests/<bin>/<file>.rs::<fn>` (or a unit test, `src/<file>.rs::<fn>`). Every
//!    row's page contains its fragment (a claim reworded without the index following fails), every named function
//!    is a test (`#[...test...]` above `fn name(`) in the named file, ids are unique, and every page of
//!    [`claim_pages`] (the README, `docs/index.md`, the guides, the resource, data source and ephemeral resource
//!    pages, the examples' READMEs) has at least one row, so a new page cannot land without its claims indexed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The line before the generated figures in the README.
const BEGIN: &str = "<!-- figures generated from docs/benchmarks.md (UPDATE_DOCS=1 cargo test --test plugin doc_facts::) -->";
/// The line after them.
const END: &str = "<!-- end of generated figures -->";

fn repo() -> PathBuf {
    support::repo_root()
}

fn read(rel: &str) -> String {
    let path = repo().join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

// ---------------------------------------------------------------------------------------------------------------
// 1. README figures
// ---------------------------------------------------------------------------------------------------------------

/// A markdown table: its header cells and rows.
struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// The first table after the heading `## <title>` of `md`.
    fn after(md: &str, title: &str) -> Table {
        let at = md
            .find(&format!("\n## {title}"))
            .unwrap_or_else(|| panic!("docs/benchmarks.md has no section {title:?}"));
        let cells = |l: &str| -> Vec<String> {
            l.trim()
                .trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect()
        };
        let mut lines = md[at..].lines().skip_while(|l| !l.starts_with('|'));
        let header = cells(lines.next().expect("a table"));
        let rows = lines
            .skip(1)
            .take_while(|l| l.starts_with('|'))
            .map(cells)
            .collect();
        Table { header, rows }
    }

    /// The cell of `column` in the row of `step` at `n`; panics when it is absent or empty (`–`).
    fn cell(&self, step: &str, n: &str, column: &str) -> String {
        let c = self
            .header
            .iter()
            .position(|h| h == column)
            .unwrap_or_else(|| panic!("no column {column:?} in {:?}", self.header));
        let row = self
            .rows
            .iter()
            .find(|r| r[0] == step && r[1] == n)
            .unwrap_or_else(|| panic!("no row {step:?}, N = {n}"));
        assert!(
            row[c] != "–" && !row[c].is_empty(),
            "{step}, N = {n}: no {column}"
        );
        row[c].clone()
    }
}

/// The value after `- <label>: ` in the page's list of run facts, up to the first `;`.
fn fact<'a>(md: &'a str, label: &str) -> &'a str {
    let line = md
        .lines()
        .find_map(|l| l.strip_prefix(&format!("- {label}: ")))
        .unwrap_or_else(|| panic!("docs/benchmarks.md has no \"- {label}:\" line"));
    line.split(';').next().unwrap().trim()
}

/// The README's performance figures, made from `docs/benchmarks.md`.
fn figures(md: &str) -> String {
    let wall = Table::after(md, "Wall time");
    let requests = Table::after(md, "API requests per step");
    let t = |step: &str, n: &str, col: &str| wall.cell(step, n, col);
    let (plan, apply, changes, destroy) = (
        "plan, no change",
        "apply from empty",
        "apply of that plan",
        "destroy",
    );
    let versions = fact(md, "Versions");
    let tofu = versions.split(',').next().unwrap().trim();
    let commit = versions
        .split("terraform-provider-sveltos at `")
        .nth(1)
        .and_then(|r| r.split('`').next())
        .expect("the provider's commit in the Versions line");
    let cores = fact(md, "Machine").split(" (").next().unwrap();
    let date = fact(md, "Date");
    format!(
        "From the run of {date} (provider at `{commit}`, {tofu}, {cores}): with 1,000 ClusterProfiles a no-change \
         plan takes {} s ({} requests: {}; the floor {} s) where the per-object resources take {} s; creating the \
         1,000 SveltosClusters and Secrets takes {} s against {} s, and {} s for the bare 2,000 server-side applies. \
         With 10,000, a no-change plan takes {} s (the floor {} s) and the provider peaks at {} MB in it and at {} \
         MB in an apply of 1 % changes; destroy takes {} s, against {} s for the bare 20,000 deletes.",
        t(plan, "1000", "ours"),
        requests
            .cell(plan, "1000", "ours")
            .split_whitespace()
            .filter_map(|w| w.parse::<u32>().ok())
            .sum::<u32>(),
        requests.cell(plan, "1000", "ours"),
        t(plan, "1000", "floor"),
        t(plan, "1000", "peer"),
        t(apply, "1000", "ours"),
        t(apply, "1000", "peer"),
        t(apply, "1000", "limit"),
        t(plan, "10000", "ours"),
        t(plan, "10000", "floor"),
        t(plan, "10000", "ours peak RSS (MB)"),
        t(changes, "10000", "ours peak RSS (MB)"),
        t(destroy, "10000", "ours"),
        t(destroy, "10000", "limit"),
    )
}

/// `text` wrapped at 116 columns, as the README's paragraphs are.
fn wrap(text: &str) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + word.len() > 116 {
            out += &line;
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line += word;
    }
    out + &line + "\n"
}

#[test]
fn readme_figures_are_generated_from_the_benchmarks_page() {
    let wanted = format!(
        "{BEGIN}\n{}{END}",
        wrap(&figures(&read("docs/benchmarks.md")))
    );
    let readme = read("README.md");
    let (b, e) = (readme.find(BEGIN), readme.find(END));
    let (Some(b), Some(e)) = (b, e) else {
        panic!("README.md has no generated figures between {BEGIN:?} and {END:?}")
    };
    let current = &readme[b..e + END.len()];
    if current == wanted {
        return;
    }
    if std::env::var_os("UPDATE_DOCS").is_some() {
        let updated = format!("{}{wanted}{}", &readme[..b], &readme[e + END.len()..]);
        std::fs::write(repo().join("README.md"), updated).unwrap();
        return;
    }
    panic!(
        "README.md's figures are not docs/benchmarks.md's (UPDATE_DOCS=1 cargo test --test plugin doc_facts:: \
         rewrites them):\n--- README\n{current}\n--- generated\n{wanted}"
    );
}

#[test]
fn the_figures_follow_the_page() {
    // A page whose no-change plan at N = 1000 took 9.99 s gives that figure.
    let md = read("docs/benchmarks.md");
    let row = md
        .lines()
        .find(|l| l.starts_with("| plan, no change | 1000 |"))
        .expect("the row")
        .to_string();
    let mut cells: Vec<String> = row.split('|').map(str::to_string).collect();
    cells[3] = " 9.99 ".to_string();
    let after = figures(&md.replacen(&row, &cells.join("|"), 1));
    assert_ne!(figures(&md), after);
    assert!(after.contains("a no-change plan takes 9.99 s"), "{after}");
}

// ---------------------------------------------------------------------------------------------------------------
// 2. Tests named in the prose
// ---------------------------------------------------------------------------------------------------------------

/// The markdown files whose references are checked.
fn prose() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>, readme_only: bool) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out, readme_only);
            } else if p.extension().is_some_and(|x| x == "md")
                && (!readme_only || p.file_name().is_some_and(|n| n == "README.md"))
            {
                out.push(p);
            }
        }
    }
    let mut out: Vec<PathBuf> = ["README.md", "CHANGELOG.md", "CONTRIBUTING.md"]
        .iter()
        .map(|f| repo().join(f))
        .collect();
    walk(&repo().join("docs"), &mut out, false);
    walk(&repo().join("examples"), &mut out, true);
    out.sort();
    out
}

/// The code spans of `md`, in order.
fn code_spans(md: &str) -> Vec<String> {
    let squashed = md.split_whitespace().collect::<Vec<_>>().join(" ");
    squashed
        .split("```")
        .step_by(2)
        .flat_map(|outside| {
            outside
                .split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// `(path, function)` pairs and lone paths the prose of `md` names under `tests/` and `src/`.
fn references(md: &str) -> Vec<(String, Option<String>)> {
    let spans = code_spans(md);
    let squashed = md.split_whitespace().collect::<Vec<_>>().join(" ");
    let is_path = |s: &str| {
        (s.starts_with("tests/") || s.starts_with("src/")) && s.ends_with(".rs") && !s.contains(' ')
    };
    let is_ident = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    };
    let mut out = Vec::new();
    for (i, s) in spans.iter().enumerate() {
        if is_path(s) {
            let next = spans
                .get(i + 1)
                .filter(|n| is_ident(n) && squashed.contains(&format!("`{s}`, `{n}`")));
            out.push((s.clone(), next.cloned()));
        }
    }
    out
}

#[test]
fn every_test_the_prose_names_exists() {
    let mut wrong = Vec::new();
    let mut checked = 0;
    for file in prose() {
        let md = std::fs::read_to_string(&file).unwrap();
        let rel = file.strip_prefix(repo()).unwrap().display().to_string();
        for (path, function) in references(&md) {
            checked += 1;
            let Ok(source) = std::fs::read_to_string(repo().join(&path)) else {
                wrong.push(format!("{rel}: `{path}` does not exist"));
                continue;
            };
            if let Some(f) = function
                && !source.contains(&format!("fn {f}("))
            {
                wrong.push(format!("{rel}: `{path}` defines no `{f}`"));
            }
        }
    }
    assert!(
        checked > 20,
        "only {checked} references found: is the pattern still the prose's?"
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn references_are_read_from_code_spans() {
    let md =
        "backed by (`tests/e2e/a.rs`, `one_test`) and `src/x.rs`; not ```\n`tests/no.rs`\n``` here";
    assert_eq!(
        references(md),
        vec![
            ("tests/e2e/a.rs".to_string(), Some("one_test".to_string())),
            ("src/x.rs".to_string(), None)
        ]
    );
}

// ---------------------------------------------------------------------------------------------------------------
// 3. The version
// ---------------------------------------------------------------------------------------------------------------

/// The CHANGELOG's version sections: heading line → the kinds (`### Kind`) in it.
fn changelog_sections(text: &str) -> BTreeMap<String, (String, Vec<String>)> {
    let mut out: BTreeMap<String, (String, Vec<String>)> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            current = Some(h.to_string());
            out.insert(h.to_string(), (String::new(), Vec::new()));
        } else if let Some(c) = &current {
            let entry = out.get_mut(c).unwrap();
            if let Some(kind) = line.strip_prefix("### ") {
                entry.1.push(kind.to_string());
            }
            entry.0 += line;
            entry.0.push('\n');
        }
    }
    out
}

#[test]
fn one_version_in_cargo_the_changelog_and_the_readme() {
    let version = env!("CARGO_PKG_VERSION");
    let changelog = read("CHANGELOG.md");
    let sections = changelog_sections(&changelog);
    let kinds = [
        "Added",
        "Changed",
        "Deprecated",
        "Removed",
        "Fixed",
        "Security",
    ];
    for (heading, (_, found)) in &sections {
        for k in found {
            assert!(
                kinds.contains(&k.as_str()),
                "CHANGELOG {heading}: unknown kind {k:?}"
            );
            let n = found.iter().filter(|f| *f == k).count();
            assert_eq!(
                n, 1,
                "CHANGELOG {heading}: {n} sections ### {k} (one per kind)"
            );
        }
    }
    let released = sections
        .keys()
        .any(|h| h.starts_with(&format!("[{version}] - ")));
    let unreleased = &sections
        .get("[Unreleased]")
        .expect("an [Unreleased] section")
        .0;
    assert!(
        released || unreleased.contains(&format!("**{version}**")),
        "Cargo.toml's version {version} is neither a released section of the CHANGELOG nor announced in **bold** \
         in its [Unreleased] section"
    );
    assert!(
        !sections.keys().any(|h| h.contains("not yet released")),
        "a version section that is not released: that is what [Unreleased] is for"
    );
    let readme = read("README.md");
    let pin = readme
        .lines()
        .find(|l| l.contains("source = \"clusterinventory/sveltos\""))
        .and_then(|l| l.split("version = \"").nth(1))
        .and_then(|r| r.split('"').next())
        .expect("the README's configuration pins a version");
    assert!(
        crate::doc_truth::admits(pin, version),
        "README.md pins {pin:?}, which does not admit {version}"
    );
}

// ---------------------------------------------------------------------------------------------------------------
// 4. Links in docs/
// ---------------------------------------------------------------------------------------------------------------

/// The repository's public address (the registries derive it from `clusterinventory/sveltos`).
const REPOSITORY: &str = "https://github.com/clusterinventory/terraform-provider-sveltos";

/// The targets of the inline links of `md` (`[text](target)`), anchors cut off; code spans and fenced blocks
/// aside.
fn link_targets(md: &str) -> Vec<String> {
    let prose: String = md
        .split("```")
        .step_by(2)
        .flat_map(|outside| outside.split('`').step_by(2))
        .collect::<Vec<_>>()
        .join(" ");
    let mut out = Vec::new();
    for part in prose.split("](").skip(1) {
        let Some(end) = part.find(')') else { continue };
        let target = part[..end].split('#').next().unwrap_or_default().trim();
        if !target.is_empty() && !target.contains(' ') {
            out.push(target.to_string());
        }
    }
    out
}

/// What is wrong with `target`, linked from `page` (a path under the repository), if anything.
fn broken_link(page: &Path, target: &str) -> Option<String> {
    let version = env!("CARGO_PKG_VERSION");
    if let Some(rest) = target.strip_prefix(REPOSITORY) {
        let tagged = ["blob", "tree"].iter().find_map(|kind| {
            rest.strip_prefix(&format!("/{kind}/v{version}/"))
                .map(|p| (*kind, p))
        });
        let Some((kind, path)) = tagged else {
            return Some(format!("{target}: not at the tag v{version}"));
        };
        let file = repo().join(path);
        return match (kind, file.is_dir(), file.exists()) {
            (_, _, false) => Some(format!("{target}: {path} does not exist")),
            ("blob", true, _) => Some(format!("{target}: {path} is a folder (tree)")),
            ("tree", false, _) => Some(format!("{target}: {path} is a file (blob)")),
            _ => None,
        };
    }
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let dir = page.parent().expect("a page has a folder");
    let mut resolved = PathBuf::new();
    for c in dir.join(target).components() {
        match c {
            std::path::Component::ParentDir => {
                resolved.pop();
            }
            std::path::Component::CurDir => {}
            other => resolved.push(other),
        }
    }
    if !resolved.starts_with("docs") {
        return Some(format!(
            "{target}: outside docs/, which the registries do not publish (link {REPOSITORY}/blob/v{version}/...)"
        ));
    }
    (!repo().join(&resolved).exists())
        .then(|| format!("{target}: {} does not exist", resolved.display()))
}

#[test]
fn links_in_the_docs_work_on_the_registries() {
    let mut wrong = Vec::new();
    let mut checked = 0;
    // docs/design/ is for contributors and not published (its claims index quotes other pages' links).
    let published = |f: &PathBuf| {
        f.starts_with(repo().join("docs")) && !f.starts_with(repo().join("docs/design"))
    };
    for file in prose().into_iter().filter(published) {
        let page = file.strip_prefix(repo()).unwrap().to_path_buf();
        for target in link_targets(&std::fs::read_to_string(&file).unwrap()) {
            checked += 1;
            if let Some(why) = broken_link(&page, &target) {
                wrong.push(format!("{}: {why}", page.display()));
            }
        }
    }
    assert!(
        checked > 30,
        "only {checked} links found: is the pattern still the docs'?"
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_link_outside_docs_or_at_another_tag_is_refused() {
    let page = Path::new("docs/guides/x.md");
    assert_eq!(broken_link(page, "../index.md"), None);
    assert!(broken_link(page, "../../CONTRIBUTING.md").is_some());
    assert!(broken_link(page, "../nope.md").is_some());
    let at = |kind: &str, tag: &str, path: &str| format!("{REPOSITORY}/{kind}/{tag}/{path}");
    let v = format!("v{}", env!("CARGO_PKG_VERSION"));
    assert_eq!(broken_link(page, &at("blob", &v, "CONTRIBUTING.md")), None);
    assert_eq!(broken_link(page, &at("tree", &v, "examples/rbac")), None);
    assert!(broken_link(page, &at("blob", "main", "CONTRIBUTING.md")).is_some());
    assert!(broken_link(page, &at("blob", &v, "examples/rbac")).is_some());
    assert!(broken_link(page, &at("blob", &v, "NOPE.md")).is_some());
    assert_eq!(
        link_targets("[a](x.md#y) `[b](no.md)` ```\n[c](no2.md)\n``` [d](https://e.org/f)"),
        ["x.md", "https://e.org/f"]
    );
}

// ---------------------------------------------------------------------------------------------------------------
// 5. The claims index
// ---------------------------------------------------------------------------------------------------------------

/// The index of behavioural claims: one row per claim, `| id | page | claim | tests |`.
const CLAIMS_INDEX: &str = "docs/design/claims.md";

/// One row of the claims index.
#[derive(Debug)]
struct Claim {
    id: String,
    page: String,
    /// A verbatim fragment of the page (whitespace-insensitive).
    fragment: String,
    /// `(file, function)`: the tests that exercise the claim.
    tests: Vec<(String, String)>,
}

/// The cells of a table row, `\|` standing for a `|` inside a cell.
fn row_cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    let mut cells = vec![String::new()];
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cells.last_mut().unwrap().push('|');
                chars.next();
            }
            '|' => cells.push(String::new()),
            c => cells.last_mut().unwrap().push(c),
        }
    }
    cells.iter().map(|c| c.trim().to_string()).collect()
}

/// The rows of the index's tables whose header is `| id | page | claim | tests |`; a malformed row is an error.
fn claim_rows(md: &str) -> Result<Vec<Claim>, String> {
    let mut out = Vec::new();
    let mut in_table = false;
    for (n, line) in md.lines().enumerate() {
        if !line.trim_start().starts_with('|') {
            in_table = false;
            continue;
        }
        let cells = row_cells(line);
        if cells == ["id", "page", "claim", "tests"] {
            in_table = true;
            continue;
        }
        if !in_table
            || cells
                .iter()
                .all(|c| c.chars().all(|c| c == '-' || c == ':'))
        {
            continue;
        }
        let [id, page, fragment, tests] = &cells[..] else {
            return Err(format!(
                "{CLAIMS_INDEX}:{}: {} cells, not 4",
                n + 1,
                cells.len()
            ));
        };
        let unquote = |s: &str| s.trim_matches('`').to_string();
        let tests = tests
            .split([',', ' '])
            .filter(|t| !t.is_empty())
            .map(|t| {
                let t = unquote(t);
                if t.starts_with("scripts/") && !t.contains("::") {
                    // A step of the test command (see `claim_problems`).
                    return Ok((t, String::new()));
                }
                t.split_once("::")
                    .map(|(f, name)| (f.to_string(), name.to_string()))
                    .ok_or_else(|| {
                        format!(
                            "{CLAIMS_INDEX}:{}: {t:?} is not `tests/<file>.rs::<fn>`",
                            n + 1
                        )
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        out.push(Claim {
            id: unquote(id),
            page: unquote(page),
            fragment: fragment.clone(),
            tests,
        });
    }
    Ok(out)
}

/// The pages whose behavioural statements the index must cover: the README, `docs/index.md`, every page of
/// `docs/guides/`, `docs/resources/`, `docs/data-sources/` and `docs/ephemeral-resources/`, and the examples' READMEs.
fn claim_pages() -> Vec<String> {
    let mut out = vec!["README.md".to_string(), "docs/index.md".to_string()];
    for dir in [
        "docs/guides",
        "docs/resources",
        "docs/data-sources",
        "docs/ephemeral-resources",
    ] {
        for e in std::fs::read_dir(repo().join(dir))
            .into_iter()
            .flatten()
            .flatten()
        {
            if e.path().extension().is_some_and(|x| x == "md") {
                out.push(format!("{dir}/{}", e.file_name().to_string_lossy()));
            }
        }
    }
    for p in prose() {
        let rel = p.strip_prefix(repo()).unwrap().display().to_string();
        if rel.starts_with("examples/") {
            out.push(rel);
        }
    }
    out.sort();
    out
}

fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `source` defines `name` as a test: `fn name(` with a `#[...test...]` attribute right above it (doc
/// comments and other attributes between them allowed).
fn defines_test(source: &str, name: &str) -> bool {
    let lines: Vec<&str> = source.lines().collect();
    lines.iter().enumerate().any(|(i, l)| {
        let l = l.trim_start();
        let l = l.strip_prefix("pub ").unwrap_or(l);
        let l = l.strip_prefix("async ").unwrap_or(l);
        l.starts_with(&format!("fn {name}("))
            && lines[..i]
                .iter()
                .rev()
                .map(|l| l.trim())
                .take_while(|l| l.starts_with("#[") || l.starts_with("//"))
                .any(|l| l.starts_with("#[") && l.contains("test"))
    })
}

/// What is wrong with the index `rows` over `pages`: ids not unique, a page or test file `read` cannot give, a
/// fragment its page does not contain, a test its file does not define, a script `scripts/test` does not run, a
/// row without tests, a page without rows.
fn claim_problems(
    rows: &[Claim],
    pages: &[String],
    read: &dyn Fn(&str) -> Option<String>,
) -> Vec<String> {
    let mut wrong = Vec::new();
    let mut ids = BTreeMap::new();
    for r in rows {
        if let Some(other) = ids.insert(r.id.as_str(), r.page.as_str()) {
            wrong.push(format!("id {} used twice ({other}, {})", r.id, r.page));
        }
        match read(&r.page) {
            None => wrong.push(format!("{}: page {} does not exist", r.id, r.page)),
            Some(text) if !squash(&text).contains(&squash(&r.fragment)) => wrong.push(format!(
                "{}: {} does not say {:?} (any more?): update the row with the page",
                r.id, r.page, r.fragment
            )),
            Some(_) => {}
        }
        if r.tests.is_empty() {
            wrong.push(format!("{}: no test", r.id));
        }
        for (file, name) in &r.tests {
            if name.is_empty() {
                // A script counts when the test command runs it: a word of one of its command lines.
                let runs = read("scripts/test").is_some_and(|t| {
                    t.lines()
                        .filter(|l| !l.trim_start().starts_with('#'))
                        .any(|l| l.split_whitespace().any(|w| w == file))
                });
                if read(file).is_none() || !runs {
                    wrong.push(format!("{}: {file} is not a step of scripts/test", r.id));
                }
                continue;
            }
            match read(file) {
                None => wrong.push(format!("{}: {file} does not exist", r.id)),
                Some(src) if !defines_test(&src, name) => {
                    wrong.push(format!("{}: {file} defines no test `fn {name}(`", r.id))
                }
                Some(_) => {}
            }
        }
    }
    for p in pages {
        if !rows.iter().any(|r| &r.page == p) {
            wrong.push(format!("{p}: no claim of this page in {CLAIMS_INDEX}"));
        }
    }
    wrong
}

#[test]
fn every_claim_is_on_its_page_and_backed_by_a_test() {
    let rows = claim_rows(&read(CLAIMS_INDEX)).unwrap_or_else(|e| panic!("{e}"));
    let read_rel = |rel: &str| std::fs::read_to_string(repo().join(rel)).ok();
    let wrong = claim_problems(&rows, &claim_pages(), &read_rel);
    assert!(
        rows.len() >= 60,
        "only {} claims in {CLAIMS_INDEX}: is the table's header still `| id | page | claim | tests |`?",
        rows.len()
    );
    assert!(wrong.is_empty(), "{CLAIMS_INDEX}:\n{}", wrong.join("\n"));
}

#[test]
fn the_claims_checker_refuses_what_is_not_backed() {
    let page = "The bridge\n  deregisters what it no longer selects.\n";
    let test = "/// Deregisters.\n#[tokio::test]\nasync fn deregisters() {}\nfn helper() {}\n";
    let read = |rel: &str| match rel {
        "docs/a.md" => Some(page.to_string()),
        "docs/b.md" => Some(String::new()),
        "tests/e2e/x.rs" => Some(test.to_string()),
        "scripts/test" => {
            Some("# scripts/other\nstep \"scripts/other\"\nscripts/check \"$@\"\n".to_string())
        }
        "scripts/check" | "scripts/other" => Some("#!/bin/sh\n".to_string()),
        _ => None,
    };
    let index = |fragment: &str, tests: &str| {
        format!(
            "| id | page | claim | tests |\n|---|---|---|---|\n| a.one | `docs/a.md` | {fragment} | {tests} |\n"
        )
    };
    let pages = ["docs/a.md".to_string()];
    let problems =
        |md: &str, pages: &[String]| claim_problems(&claim_rows(md).unwrap(), pages, &read);
    // The row as it should be: the fragment across a line break, the test a test.
    let good = index(
        "The bridge deregisters what",
        "`tests/e2e/x.rs::deregisters`",
    );
    assert_eq!(problems(&good, &pages), Vec::<String>::new());
    // The page's text changed: the fragment is missing.
    let moved = problems(
        &index("The bridge withdraws what", "`tests/e2e/x.rs::deregisters`"),
        &pages,
    );
    assert!(moved[0].contains("does not say"), "{moved:?}");
    // A test that is missing, a helper that is no test, a file that is missing.
    for tests in [
        "tests/e2e/x.rs::gone",
        "tests/e2e/x.rs::helper",
        "tests/e2e/y.rs::deregisters",
    ] {
        let p = problems(&index("The bridge", tests), &pages);
        assert_eq!(p.len(), 1, "{tests}: {p:?}");
    }
    // A script the test command runs counts; one it does not run, or one that does not exist, does not.
    assert_eq!(
        problems(&index("The bridge", "`scripts/check`"), &pages),
        Vec::<String>::new()
    );
    for script in ["scripts/other", "scripts/gone"] {
        let p = problems(&index("The bridge", script), &pages);
        assert_eq!(p.len(), 1, "{script}: {p:?}");
    }
    // A page of the set without a row.
    let both = ["docs/a.md".to_string(), "docs/b.md".to_string()];
    assert_eq!(
        problems(&good, &both),
        vec![format!(
            "docs/b.md: no claim of this page in {CLAIMS_INDEX}"
        )]
    );
    // An id used twice.
    let twice =
        format!("{good}| a.one | `docs/a.md` | deregisters | `tests/e2e/x.rs::deregisters` |\n");
    assert!(problems(&twice, &pages)[0].contains("used twice"));
    // A row that is not id, page, claim, tests.
    assert!(
        claim_rows("| id | page | claim | tests |\n|---|---|---|---|\n| a | b | c |\n").is_err()
    );
}
