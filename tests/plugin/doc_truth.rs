//! Prose that can be checked against the code is checked here, so the docs stay true when the code moves on.
//! Nothing here builds a cluster or runs a CLI; every check reads files (and the provider's registry).
//!
//! 1. **Quoted diagnostics occur in the code.** The convention for quoting a diagnostic of the provider in
//!    `docs/`, `README.md` or an example's `README.md`:
//!    - in a fenced block tagged `text`, a line that starts with `Error: ` or `Warning: ` starts a diagnostic: the
//!      rest of the line is its summary, and the lines up to the next such line are its detail (paragraphs split
//!      by blank lines; a paragraph starting `with <address>,` is the CLI's framing and is skipped). A block that
//!      shows another program's diagnostic (the CLI's own, `Check block assertion failed`) is exempted by the line
//!      [`NOT_OURS`] right before its opening fence;
//!    - in prose, a code span whose text starts with `Error: ` or `Warning: ` is a diagnostic (summary, or summary
//!      and detail run together). Quote other fragments of a message without that prefix only as plain code,
//!      which is not checked: so do not.
//!
//!    Each summary and detail paragraph must be text the code can print: made of whole pieces of the string
//!    literals under `src/` (found by a recursive walk, test modules left out; a literal's format placeholders,
//!    `{}` or `{name:?}`, split it into pieces) and of values standing where placeholders were: a whitespace-free
//!    token (a name, a number, a quoted bridge name, or `...`/`…` for an elided part) or a comma-separated list of
//!    them. Line breaks and runs of spaces count as one space. The exact rules are on [`covered`].
//! 2. **The registry is documented.** Every resource, data source and ephemeral resource the provider registers
//!    has its page and is linked from `docs/index.md` and the README, and the counts in the sentence of
//!    `docs/index.md` that starts with `It offers` are the registry's.
//! 3. **RBAC shown is RBAC granted.** A `yaml` block in the docs that defines a Role or ClusterRole defines one of
//!    `examples/rbac/**.yaml` (by name) with the same rules; a markdown table whose header has the columns `file`
//!    and `rules` lists, for each file it names, exactly the rules of that file (`` `resource` (`group`): verbs ``,
//!    one row per rule, an empty `file` cell continuing the file above).
//! 4. **Examples pin the provider.** Every directory under `examples/` with `.tf` files declares the provider in
//!    `required_providers` with a `version` constraint, and the constraint admits this crate's version.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use tfsveltos::provider::registry as provider;

/// The line that exempts the fenced block right after it from the diagnostic check (a diagnostic of the CLI or of
/// Terraform's `check` blocks, not of the provider).
const NOT_OURS: &str = "<!-- not a diagnostic of the provider -->";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Files under `dir` (recursively) whose name ends with `suffix`, sorted.
fn files(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    fn walk(dir: &Path, suffix: &str, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, suffix, out);
            } else if p.to_string_lossy().ends_with(suffix) {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, suffix, &mut out);
    out.sort();
    out
}

/// The markdown files whose prose is checked: `docs/`, the README and the examples' READMEs.
fn prose_files() -> Vec<PathBuf> {
    let mut out = files(&repo().join("docs"), ".md");
    out.push(repo().join("README.md"));
    out.extend(files(&repo().join("examples"), "README.md"));
    out
}

fn rel(path: &Path) -> String {
    path.strip_prefix(repo())
        .unwrap_or(path)
        .display()
        .to_string()
}

// ---------------------------------------------------------------------------------------------------------------
// 1. Quoted diagnostics
// ---------------------------------------------------------------------------------------------------------------

/// Collapses every run of whitespace into one space and trims.
fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The string literals of one Rust source file (plain, byte and raw strings), unescaped; comments and char
/// literals are skipped.
fn string_literals(src: &str) -> Vec<String> {
    let b: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == '/' && b.get(i + 1) == Some(&'/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && b.get(i + 1) == Some(&'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == '\'' {
            // A char literal ('x', '\n', '\'', '\u{..}') or a lifetime ('a).
            if b.get(i + 1) == Some(&'\\') {
                i += 2;
                while i < b.len() && b[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if b.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
            }
        } else if (c == 'r' || (c == 'b' && b.get(i + 1) == Some(&'r')))
            && (i == 0 || !(b[i - 1].is_alphanumeric() || b[i - 1] == '_'))
            && {
                let mut j = i + if c == 'b' { 2 } else { 1 };
                while b.get(j) == Some(&'#') {
                    j += 1;
                }
                b.get(j) == Some(&'"')
            }
        {
            let mut j = i + if c == 'b' { 2 } else { 1 };
            let mut hashes = 0;
            while b[j] == '#' {
                hashes += 1;
                j += 1;
            }
            j += 1;
            let start = j;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == '"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&'#')) {
                    break;
                }
                j += 1;
            }
            out.push(b[start..j.min(b.len())].iter().collect());
            i = j + 1 + hashes;
        } else if c == '"' {
            let mut s = String::new();
            let mut j = i + 1;
            while j < b.len() && b[j] != '"' {
                if b[j] == '\\' {
                    match b.get(j + 1) {
                        Some('n') => s.push('\n'),
                        Some('t') => s.push('\t'),
                        Some('r' | '0') => {}
                        Some('\n') => {
                            // Line continuation: the break and the next line's leading whitespace go.
                            j += 2;
                            while j < b.len() && b[j].is_whitespace() {
                                j += 1;
                            }
                            continue;
                        }
                        Some('u') => {
                            let end = (j..b.len()).find(|&k| b[k] == '}').unwrap_or(j + 1);
                            let hex: String = b[j + 3..end].iter().collect();
                            if let Some(ch) =
                                u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32)
                            {
                                s.push(ch);
                            }
                            j = end + 1;
                            continue;
                        }
                        Some(other) => s.push(*other),
                        None => {}
                    }
                    j += 2;
                } else {
                    s.push(b[j]);
                    j += 1;
                }
            }
            out.push(s);
            i = j + 1;
        } else {
            i += 1;
        }
    }
    out
}

/// The Rust files under `src/` that are not test code: files of modules declared `#[cfg(test)] mod x;` are left
/// out, and so is everything after a `#[cfg(test)]` followed by an inline `mod x {`.
fn production_sources() -> Vec<(PathBuf, String)> {
    let all = files(&repo().join("src"), ".rs");
    let mut test_modules: BTreeSet<PathBuf> = BTreeSet::new();
    for path in &all {
        let text = read(path);
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        for (n, line) in lines.iter().enumerate() {
            if *line != "#[cfg(test)]" {
                continue;
            }
            let Some(next) = lines[n + 1..].iter().find(|l| !l.is_empty()) else {
                continue;
            };
            let decl = next
                .trim_start_matches("pub(crate) ")
                .trim_start_matches("pub(super) ")
                .trim_start_matches("pub ");
            if let Some(name) = decl.strip_prefix("mod ").and_then(|d| d.strip_suffix(';')) {
                let dir = path.parent().unwrap();
                let stem = path.file_stem().unwrap().to_string_lossy();
                let base = if ["mod", "lib", "main"].contains(&stem.as_ref()) {
                    dir.to_path_buf()
                } else {
                    dir.join(stem.as_ref())
                };
                test_modules.insert(base.join(format!("{name}.rs")));
                test_modules.insert(base.join(name));
            }
        }
    }
    all.into_iter()
        .filter(|p| !test_modules.iter().any(|t| p.starts_with(t)))
        .map(|p| {
            let text = read(&p);
            let mut kept = String::new();
            let mut lines = text.lines().peekable();
            while let Some(line) = lines.next() {
                if line.trim() == "#[cfg(test)]"
                    && lines.peek().is_some_and(|n| {
                        n.trim_start().starts_with("mod ") && n.trim_end().ends_with('{')
                    })
                {
                    break;
                }
                kept.push_str(line);
                kept.push('\n');
            }
            (p, kept)
        })
        .collect()
}

/// A fixed piece of a string literal: its text (whitespace squashed) and whether it starts and ends its literal
/// (a piece that does not is next to a format placeholder there).
type Pieces = BTreeMap<String, Flags>;

/// The (starts its literal, ends its literal) combinations a piece's text occurs with.
type Flags = BTreeSet<(bool, bool)>;

/// The fixed pieces of every string literal of the production sources: each literal split at its format
/// placeholders, whitespace squashed, empty pieces dropped.
fn code_pieces() -> Pieces {
    let mut pieces = Pieces::new();
    for (_, text) in production_sources() {
        for lit in string_literals(&text) {
            let chars: Vec<char> = lit.chars().collect();
            let mut found: Vec<(String, bool)> = Vec::new();
            let mut piece = String::new();
            let mut starts = true;
            let mut i = 0;
            while i < chars.len() {
                match (chars[i], chars.get(i + 1)) {
                    ('{', Some('{')) | ('}', Some('}')) => {
                        piece.push(chars[i]);
                        i += 2;
                    }
                    ('{', _) => {
                        match (i + 1..chars.len()).find(|&k| chars[k] == '}' || chars[k] == '{') {
                            Some(end) if chars[end] == '}' => {
                                found.push((squash(&piece), starts));
                                piece.clear();
                                starts = false;
                                i = end + 1;
                            }
                            _ => {
                                piece.push('{');
                                i += 1;
                            }
                        }
                    }
                    (c, _) => {
                        piece.push(c);
                        i += 1;
                    }
                }
            }
            let whole = starts;
            let last = squash(&piece);
            for (text, sl) in found {
                if !text.is_empty() {
                    pieces.entry(text).or_default().insert((sl, false));
                }
            }
            if !last.is_empty() {
                pieces.entry(last).or_default().insert((whole, true));
            }
        }
    }
    pieces
}

/// Whether `quote` can be what the code prints: a sequence of whole pieces of its literals and values, where a
/// value is one whitespace-free token (a name, a number, `"quoted"`, `...`) or a list of them (`a, b, c`). Two values never touch; two pieces of
/// the middle of literals never touch (a placeholder lies between them, so a value or a whole other literal must
/// too); at most three one-word items (values or one-word pieces with a letter or digit) follow each other
/// (`SveltosCluster ns/name`, `- ns/name: kubeconfig_sha256 changed`); the
/// quote starts with a value or the start of a literal and ends with a value or the end of one. Spaces are free.
fn covered(quote: &str, pieces: &Pieces) -> bool {
    // What the last item was.
    const START: usize = 0;
    const VALUE: usize = 1;
    const END: usize = 2;
    const MID: usize = 3;
    // How many one-word items end at this position (0 to 3).
    const RUNS: usize = 4;
    let q: Vec<char> = squash(quote).chars().collect();
    let n = q.len();
    let mut reach = vec![[[false; RUNS]; 4]; n + 1];
    reach[0][START][0] = true;
    let mut by_first: BTreeMap<char, Vec<(Vec<char>, &Flags)>> = BTreeMap::new();
    for (p, flags) in pieces {
        let chars: Vec<char> = p.chars().collect();
        by_first.entry(chars[0]).or_default().push((chars, flags));
    }
    for i in 0..n {
        for s in 0..4 {
            for run in 0..RUNS {
                if !reach[i][s][run] {
                    continue;
                }
                if q[i] == ' ' {
                    reach[i + 1][s][run] = true;
                    continue;
                }
                for (p, flags) in by_first.get(&q[i]).into_iter().flatten() {
                    if !q[i..].starts_with(p) {
                        continue;
                    }
                    let run = if p.contains(&' ') {
                        0
                    } else if p.iter().any(|c| c.is_alphanumeric()) {
                        run + 1
                    } else {
                        run
                    };
                    if run >= RUNS {
                        continue;
                    }
                    for &(sl, el) in flags.iter() {
                        if (s == START || s == MID) && !sl {
                            continue;
                        }
                        reach[i + p.len()][if el { END } else { MID }][run] = true;
                    }
                }
                if s != VALUE && run + 1 < RUNS {
                    // One token, or a list of them (`a, b, c`, as the code joins names).
                    // It may end anywhere in its last token (`c9.` is the value `c9` and a piece's `.`).
                    let mut j = i;
                    loop {
                        while j < n && q[j] != ' ' {
                            j += 1;
                            reach[j][VALUE][run + 1] = true;
                        }
                        if j + 1 < n && q[j - 1] == ',' {
                            j += 1;
                        } else {
                            break;
                        }
                    }
                }
            }
        }
    }
    n > 0 && reach[n][VALUE].iter().chain(&reach[n][END]).any(|r| *r)
}

/// One quoted diagnostic: where, and its summary and detail paragraphs.
struct Quote {
    at: String,
    texts: Vec<String>,
}

fn diagnostic_prefix(line: &str) -> Option<&str> {
    let line = line.trim_start_matches(['│', '╷', ' ']);
    line.strip_prefix("Error: ")
        .or_else(|| line.strip_prefix("Warning: "))
}

/// The diagnostics quoted in one markdown file, by the convention of this file's header.
fn quotes_in(path: &Path, md: &str) -> Vec<Quote> {
    let mut out = Vec::new();
    let lines: Vec<&str> = md.lines().collect();
    let mut i = 0;
    let mut prose: Vec<(usize, &str)> = Vec::new();
    while i < lines.len() {
        let t = lines[i].trim_start();
        if let Some(info) = t.strip_prefix("```") {
            let fence_indent = lines[i].len() - t.len();
            let exempt = i > 0 && lines[i - 1].trim() == NOT_OURS;
            let tagged_text = info.trim() == "text";
            let start = i + 1;
            i += 1;
            while i < lines.len() && !lines[i].trim_start().starts_with("```") {
                i += 1;
            }
            let body: Vec<&str> = lines[start..i.min(lines.len())]
                .iter()
                .map(|l| l.get(fence_indent..).unwrap_or(l.trim_start()))
                .collect();
            i += 1;
            if !tagged_text || exempt {
                continue;
            }
            let mut current: Option<(usize, Vec<String>, Vec<String>)> = None;
            let flush = |cur: Option<(usize, Vec<String>, Vec<String>)>, out: &mut Vec<Quote>| {
                if let Some((line, mut texts, para)) = cur {
                    if !para.is_empty() {
                        texts.push(para.join(" "));
                    }
                    let texts = texts
                        .into_iter()
                        .filter(|t| !(t.starts_with("with ") && t.contains(" on ")))
                        .collect();
                    out.push(Quote {
                        at: format!("{}:{}", rel(path), line + 1),
                        texts,
                    });
                }
            };
            for (k, l) in body.iter().enumerate() {
                if let Some(summary) = diagnostic_prefix(l) {
                    flush(current.take(), &mut out);
                    current = Some((start + k, vec![summary.to_string()], Vec::new()));
                } else if let Some((_, texts, para)) = current.as_mut() {
                    let l = l.trim_start_matches(['│', '╵']).trim();
                    if l.is_empty() {
                        if !para.is_empty() {
                            texts.push(para.join(" "));
                            para.clear();
                        }
                    } else {
                        para.push(l.to_string());
                    }
                }
            }
            flush(current, &mut out);
            continue;
        }
        prose.push((i, lines[i]));
        i += 1;
    }
    // Code spans in prose, per paragraph (a span may wrap onto the next line).
    let mut para: Vec<(usize, &str)> = Vec::new();
    prose.push((lines.len(), ""));
    for (n, line) in prose {
        if !line.trim().is_empty() {
            para.push((n, line));
            continue;
        }
        if para.is_empty() {
            continue;
        }
        let first = para[0].0;
        let text = para
            .iter()
            .map(|(_, l)| l.trim())
            .collect::<Vec<_>>()
            .join(" ");
        for (k, span) in text.split('`').enumerate() {
            if k % 2 == 1
                && let Some(summary) = diagnostic_prefix(span)
            {
                out.push(Quote {
                    at: format!("{}:{}", rel(path), first + 1),
                    texts: vec![summary.to_string()],
                });
            }
        }
        para.clear();
    }
    out
}

#[test]
fn quoted_diagnostics_are_made_of_the_codes_own_text() {
    let pieces = code_pieces();
    assert!(
        pieces.len() > 500,
        "too few string literals found under src/: {}",
        pieces.len()
    );
    let mut quotes = 0;
    let mut wrong = Vec::new();
    for path in prose_files() {
        for q in quotes_in(&path, &read(&path)) {
            for text in &q.texts {
                quotes += 1;
                if !covered(text, &pieces) {
                    wrong.push(format!("{}: {text:?}", q.at));
                }
            }
        }
    }
    assert!(quotes >= 10, "too few quoted diagnostics found: {quotes}");
    assert!(
        wrong.is_empty(),
        "diagnostics quoted in the docs that the code does not produce (quote the code's message; see the \
         convention at the top of tests/plugin/doc_truth.rs):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_quote_matcher_accepts_the_codes_shapes_and_nothing_else() {
    let piece = |t: &str, sl: bool, el: bool| (t.to_string(), BTreeSet::from([(sl, el)]));
    let pieces: Pieces = BTreeMap::from([
        piece("ClusterProfile(s):", false, false),
        piece(
            "an object this bridge does not own has the name it would write",
            true,
            true,
        ),
        piece("(", false, false),
        piece("kept as they are)", false, true),
        piece("already exists and is not owned by bridge", false, true),
        piece("exists", false, false),
        piece("is not", false, false),
        piece("SveltosCluster", true, true),
        piece("or", true, true),
        piece("more", false, true),
        piece("kubeconfig", true, true),
        piece("Nothing was written.", true, true),
    ]);
    assert!(covered(
        "2 ClusterProfile(s): an object this bridge does not own has the name it would write (1 kept as they are)",
        &pieces
    ));
    assert!(covered("... Nothing was written.", &pieces));
    assert!(covered(
        "SveltosCluster a/b already exists and is not owned by bridge \"x\"",
        &pieces
    ));
    // Three values in a row, two middles of literals touching, a piece cut short, words of no literal: refused.
    assert!(!covered(
        "SveltosCluster a/b c already exists and is not owned by bridge \"x\"",
        &pieces
    ));
    assert!(!covered("a exists is not b", &pieces));
    assert!(!covered("Two or more kubeconfig", &pieces));
    assert!(!covered("Nothing was", &pieces));
    assert!(!covered("Two candidates are an error naming both", &pieces));

    let lits = string_literals(
        "let a = 'x'; let b = \"one \\\"two\\\" \\\n      three\"; // \"not this\"\nlet c = r#\"raw \"q\"\"#; fn f<'a>() {}",
    );
    assert_eq!(lits, ["one \"two\" three", "raw \"q\""]);

    let md = "Plan warns with `Warning: 2 ClusterProfile(s): x` and\n`Error: a\nb`.\n\n\
              <!-- not a diagnostic of the provider -->\n```text\nError: CLI's own\n```\n\n\
              ```text\nWarning: one\n\nwith a.b,\non main.tf line 1:\n\ndetail one\ncontinued\n\nsecond\n```\n";
    let qs = quotes_in(Path::new("x.md"), md);
    let texts: Vec<Vec<String>> = qs.into_iter().map(|q| q.texts).collect();
    assert_eq!(
        texts,
        [
            vec![
                "one".to_string(),
                "detail one continued".into(),
                "second".into()
            ],
            vec!["2 ClusterProfile(s): x".into()],
            vec!["a b".into()],
        ]
    );
}

// ---------------------------------------------------------------------------------------------------------------
// 2. The registry
// ---------------------------------------------------------------------------------------------------------------

fn number_word(w: &str) -> Option<usize> {
    [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    ]
    .iter()
    .position(|n| *n == w)
}

#[test]
fn every_registered_type_has_its_page_and_is_listed() {
    let p = provider::new();
    let kinds: [(&str, &str, Vec<String>); 3] = [
        (
            "resource",
            "resources",
            p.resources()
                .iter()
                .map(|r| r.type_name().to_string())
                .collect(),
        ),
        (
            "data source",
            "data-sources",
            p.data_sources()
                .iter()
                .map(|d| d.type_name().to_string())
                .collect(),
        ),
        (
            "ephemeral resource",
            "ephemeral-resources",
            p.ephemeral_resources()
                .iter()
                .map(|e| e.type_name().to_string())
                .collect(),
        ),
    ];
    let index = read(&repo().join("docs/index.md"));
    let readme = read(&repo().join("README.md"));
    let mut missing = Vec::new();
    for (_, dir, names) in &kinds {
        for name in names {
            let short = name.trim_start_matches("sveltos_");
            let page = format!("{dir}/{short}.md");
            if !repo().join("docs").join(&page).is_file() {
                missing.push(format!("docs/{page} does not exist"));
            }
            if !index.contains(&format!("[`{name}`]({page})")) {
                missing.push(format!("docs/index.md does not link [`{name}`]({page})"));
            }
            if !readme.contains(&format!("[`{name}`](docs/{page})")) {
                missing.push(format!("README.md does not link [`{name}`](docs/{page})"));
            }
        }
    }
    // The sentence that counts them.
    let offers = index
        .lines()
        .find(|l| l.starts_with("It offers "))
        .expect("docs/index.md has a sentence starting with \"It offers\"");
    let list = offers
        .trim_start_matches("It offers ")
        .trim_end_matches(':')
        .replace(" and ", ", ");
    let mut said: BTreeMap<String, usize> = BTreeMap::new();
    for part in list.split(", ") {
        let (n, kind) = part.split_once(' ').unwrap_or((part, ""));
        let n = number_word(n).unwrap_or_else(|| panic!("{offers:?}: {n:?} is not a number word"));
        said.insert(kind.trim_end_matches('s').to_string(), n);
    }
    for (kind, _, names) in &kinds {
        if said.get(*kind).copied().unwrap_or(0) != names.len() {
            missing.push(format!(
                "docs/index.md says {offers:?}, but the provider registers {} {kind}(s): {names:?}",
                names.len()
            ));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

// ---------------------------------------------------------------------------------------------------------------
// 3. RBAC
// ---------------------------------------------------------------------------------------------------------------

#[derive(serde::Deserialize, Default)]
struct Manifest {
    #[serde(default)]
    kind: String,
    #[serde(default)]
    metadata: Metadata,
    #[serde(default)]
    rules: Vec<Rule>,
}

#[derive(serde::Deserialize, Default)]
struct Metadata {
    #[serde(default)]
    name: String,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Rule {
    #[serde(default)]
    api_groups: Vec<String>,
    #[serde(default)]
    resources: Vec<String>,
    #[serde(default)]
    verbs: Vec<String>,
}

/// One granted right: resource, API group, sorted verbs.
type Right = (String, String, Vec<String>);

fn rights(rules: &[Rule]) -> BTreeSet<Right> {
    let mut out = BTreeSet::new();
    for r in rules {
        let mut verbs = r.verbs.clone();
        verbs.sort();
        for g in &r.api_groups {
            for res in &r.resources {
                out.insert((res.clone(), g.clone(), verbs.clone()));
            }
        }
    }
    out
}

fn roles(yaml: &str, at: &str) -> Vec<(String, BTreeSet<Right>)> {
    let docs: Vec<Manifest> =
        serde_saphyr::from_multiple(yaml).unwrap_or_else(|e| panic!("{at}: not YAML: {e}"));
    docs.into_iter()
        .filter(|d| d.kind == "Role" || d.kind == "ClusterRole")
        .map(|d| (d.metadata.name, rights(&d.rules)))
        .collect()
}

/// `examples/rbac/**.yaml`: file (relative to `examples/rbac`) to its roles.
fn granted() -> BTreeMap<String, Vec<(String, BTreeSet<Right>)>> {
    let dir = repo().join("examples/rbac");
    files(&dir, ".yaml")
        .into_iter()
        .map(|p| {
            let name = p.strip_prefix(&dir).unwrap().display().to_string();
            let roles = roles(&read(&p), &rel(&p));
            (name, roles)
        })
        .collect()
}

/// A rule as a docs table shows it: resource, API group when given, sorted verbs.
type ShownRule = (String, Option<String>, Vec<String>);

/// The code spans of a table cell.
fn spans(cell: &str) -> Vec<&str> {
    cell.split('`').skip(1).step_by(2).collect()
}

#[test]
fn rbac_shown_in_the_docs_is_what_examples_rbac_grants() {
    let granted = granted();
    assert!(granted.len() >= 4, "examples/rbac: {:?}", granted.keys());
    let by_role: BTreeMap<&str, &BTreeSet<Right>> = granted
        .values()
        .flatten()
        .map(|(n, r)| (n.as_str(), r))
        .collect();
    let mut wrong = Vec::new();
    let mut tables = 0;
    for path in prose_files() {
        let md = read(&path);
        let lines: Vec<&str> = md.lines().collect();
        // YAML blocks defining roles.
        let mut i = 0;
        while i < lines.len() {
            if lines[i].trim_start().starts_with("```yaml") {
                let start = i + 1;
                i += 1;
                while i < lines.len() && !lines[i].trim_start().starts_with("```") {
                    i += 1;
                }
                let at = format!("{}:{}", rel(&path), start);
                for (name, shown) in roles(&lines[start..i].join("\n"), &at) {
                    match by_role.get(name.as_str()) {
                        None => wrong.push(format!("{at}: role {name} is not in examples/rbac")),
                        Some(g) if **g != shown => wrong.push(format!(
                            "{at}: role {name} shows {shown:?}, examples/rbac grants {g:?}"
                        )),
                        Some(_) => {}
                    }
                }
            }
            i += 1;
        }
        // Tables with `file` and `rules` columns.
        let mut i = 0;
        while i < lines.len() {
            let cells = |l: &str| -> Vec<String> {
                l.trim()
                    .trim_matches('|')
                    .split('|')
                    .map(|c| c.trim().to_string())
                    .collect()
            };
            let header = cells(lines[i]);
            let (Some(fcol), Some(rcol)) = (
                header.iter().position(|c| c == "file"),
                header.iter().position(|c| c == "rules"),
            ) else {
                i += 1;
                continue;
            };
            if !lines[i].trim_start().starts_with('|') {
                i += 1;
                continue;
            }
            tables += 1;
            let at = format!("{}:{}", rel(&path), i + 1);
            let mut shown: BTreeMap<String, Vec<ShownRule>> = BTreeMap::new();
            let mut file = String::new();
            i += 2;
            while i < lines.len() && lines[i].trim_start().starts_with('|') {
                let row = cells(lines[i]);
                if let Some(f) = spans(&row[fcol]).first() {
                    file = f.to_string();
                    shown.entry(file.clone()).or_default();
                }
                let rule = &row[rcol];
                if let Some((what, verbs)) = rule.rsplit_once(": ") {
                    let s = spans(what);
                    let mut verbs: Vec<String> =
                        verbs.split(',').map(|v| v.trim().to_string()).collect();
                    verbs.sort();
                    shown.entry(file.clone()).or_default().push((
                        s.first().unwrap_or(&"").to_string(),
                        s.get(1).map(|g| g.to_string()),
                        verbs,
                    ));
                }
                i += 1;
            }
            for (file, rows) in shown {
                let Some(roles) = granted.get(&file) else {
                    wrong.push(format!("{at}: {file} is not a file of examples/rbac"));
                    continue;
                };
                let real: BTreeSet<(String, Vec<String>)> = roles
                    .iter()
                    .flat_map(|(_, r)| r.iter().map(|(res, _, v)| (res.clone(), v.clone())))
                    .collect();
                let listed: BTreeSet<(String, Vec<String>)> = rows
                    .iter()
                    .map(|(r, _, v)| (r.clone(), v.clone()))
                    .collect();
                if real != listed {
                    wrong.push(format!(
                        "{at}: {file} is shown as {listed:?}, but grants {real:?}"
                    ));
                }
                for (res, group, _) in &rows {
                    let Some(group) = group else { continue };
                    let ok = roles
                        .iter()
                        .flat_map(|(_, r)| r.iter())
                        .any(|(r, g, _)| r == res && g == group);
                    if !ok {
                        wrong.push(format!("{at}: {file}: {res} is not in API group {group}"));
                    }
                }
            }
        }
    }
    assert!(tables >= 3, "RBAC tables found: {tables}");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

// ---------------------------------------------------------------------------------------------------------------
// 4. Version constraints
// ---------------------------------------------------------------------------------------------------------------

fn parse_version(v: &str) -> Vec<u64> {
    v.trim()
        .split('.')
        .map(|p| {
            p.parse()
                .unwrap_or_else(|_| panic!("{v:?} is not a version"))
        })
        .collect()
}

/// Whether `version` satisfies a Terraform version constraint (`~>`, `>=`, `>`, `<=`, `<`, `=`, `!=`, bare).
pub(crate) fn admits(constraint: &str, version: &str) -> bool {
    let have = parse_version(version);
    constraint.split(',').all(|c| {
        let c = c.trim();
        let (op, v) = ["~>", ">=", "<=", "!=", ">", "<", "="]
            .iter()
            .find_map(|op| c.strip_prefix(op).map(|v| (*op, v)))
            .unwrap_or(("=", c));
        let want = parse_version(v);
        let pad = |x: &[u64]| {
            let mut x = x.to_vec();
            x.resize(3, 0);
            x
        };
        let (h, w) = (pad(&have), pad(&want));
        match op {
            "~>" => {
                // The last given part may grow; the ones before it are fixed.
                let fixed = want.len().saturating_sub(1).max(1);
                h >= w && h[..fixed] == w[..fixed]
            }
            ">=" => h >= w,
            "<=" => h <= w,
            ">" => h > w,
            "<" => h < w,
            "!=" => h != w,
            _ => h == w,
        }
    })
}

/// The `version` of the `sveltos` entry of `required_providers` in `tf`, if any.
fn sveltos_constraint(tf: &str) -> Option<Option<String>> {
    let rp = tf.find("required_providers")?;
    let rest = &tf[rp..];
    let entry = rest.find("sveltos")?;
    let rest = &rest[entry..];
    let open = rest.find('{')?;
    let close = rest[open..].find('}')? + open;
    let body = &rest[open + 1..close];
    let version = body.split(['\n', ',']).find_map(|l| {
        let (k, v) = l.split_once('=')?;
        (k.trim() == "version").then(|| v.trim().trim_matches('"').to_string())
    });
    Some(version)
}

#[test]
fn every_example_pins_the_provider_version() {
    let crate_version = env!("CARGO_PKG_VERSION");
    let mut by_dir: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
    for tf in files(&repo().join("examples"), ".tf") {
        by_dir
            .entry(tf.parent().unwrap().to_path_buf())
            .or_default()
            .push(tf);
    }
    assert!(
        by_dir.len() >= 5,
        "example directories: {:?}",
        by_dir.keys()
    );
    let mut wrong = Vec::new();
    for (dir, tfs) in by_dir {
        let mut pinned = false;
        for tf in tfs {
            match sveltos_constraint(&read(&tf)) {
                None => {}
                Some(None) => wrong.push(format!("{}: sveltos without a version", rel(&tf))),
                Some(Some(c)) if !admits(&c, crate_version) => wrong.push(format!(
                    "{}: version {c:?} does not admit this crate's version {crate_version}",
                    rel(&tf)
                )),
                Some(Some(_)) => pinned = true,
            }
        }
        if !pinned {
            wrong.push(format!(
                "{}: no required_providers entry for sveltos with a version",
                rel(&dir)
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn version_constraints_are_read_as_terraform_reads_them() {
    assert!(admits("~> 0.1.0", "0.1.7"));
    assert!(!admits("~> 0.1.0", "0.2.0"));
    assert!(admits("~> 0.1", "0.9.0"));
    assert!(!admits("~> 0.1", "1.0.0"));
    assert!(admits(">= 0.1.0, < 0.2.0", "0.1.0"));
    assert!(!admits(">= 0.1.0, < 0.2.0", "0.2.0"));
    assert!(admits("0.1.0", "0.1.0"));
    assert_eq!(
        sveltos_constraint(
            "terraform {\n  required_providers {\n    sveltos = {\n      source  = \"x/sveltos\"\n      version = \"~> 0.1.0\"\n    }\n  }\n}\n"
        ),
        Some(Some("~> 0.1.0".to_string()))
    );
    assert_eq!(
        sveltos_constraint(
            "terraform {\n  required_providers {\n    sveltos = { source = \"x/sveltos\" }\n  }\n}\n"
        ),
        Some(None)
    );
}
