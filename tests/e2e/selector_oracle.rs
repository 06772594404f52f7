//! Label selectors judged by the API server. `tfsveltos::domain::selector::Selector` reads the `label_selector` of
//! the bridge and of the data sources; it must refuse exactly the selectors the API server refuses as a LIST's
//! `labelSelector` (400 BadRequest), and for every other selector `Selector::matches` must pick, over the labels the
//! API server holds, exactly the objects that LIST returns.
//!
//! The objects: ConfigMaps in a namespace of their own with varied labels (none, empty values, prefixed keys,
//! integers, keys named `in` and `notin`, 63-character names and values, upper case). The selectors: a corpus
//! written by hand (the edge cases of apimachinery's grammar: whitespace, every operator, empty sets and empty
//! places, trailing commas, duplicated keys, invalid keys and values, lengths, non-ASCII whitespace), selectors
//! generated from keys, operators, values and separators, and the hand-written ones mutated character by character
//! (seeded: the same corpus every run). The differences kept on purpose are listed in [`DELIBERATE`] with their
//! reason, and checked to still be differences.

use std::collections::{BTreeMap, BTreeSet};

use futures::{StreamExt, stream};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, ObjectMeta, PostParams};
use support::Rng;
use support::{TestEnv, unique_namespace};
use tfsveltos::domain::selector::Selector;

/// A selector's outcome: the names of the objects it selects, or why it is refused.
type Verdict = Result<BTreeSet<String>, String>;

/// Why the selectors of [`DELIBERATE`] are refused here and accepted by the API server.
const NUL_REASON: &str = "the API server's lexer reads a NUL byte where a token would start as the end of the \
                          string and ignores the rest (`\\0env=prod` selects everything), and one that ends a word \
                          or an operator as a separator (`env\\0=prod` is `env=prod`); a selector must not select \
                          more than it says, and a NUL byte has no business in one: refused here";

/// Selectors the API server accepts and `Selector::parse` refuses on purpose, with the reason.
const DELIBERATE: &[(&str, &str)] = &[
    ("\0", NUL_REASON),
    ("\0env=prod", NUL_REASON),
    ("env=prod \0 junk ((", NUL_REASON),
    ("env\0=prod", NUL_REASON),
    ("env=prod\0,!env", NUL_REASON),
];

/// The ConfigMaps: name and labels.
fn objects() -> Vec<(&'static str, Vec<(String, String)>)> {
    let l = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let a63 = "a".repeat(63);
    let prefix64 = format!("{}.io/k", "p".repeat(64));
    vec![
        ("bare", vec![]),
        ("env-prod", l(&[("env", "prod")])),
        ("env-empty", l(&[("env", "")])),
        ("env-dev-db", l(&[("env", "dev"), ("tier", "db")])),
        (
            "env-prod-web",
            l(&[("env", "prod"), ("tier", "web"), ("gpu", "")]),
        ),
        ("legacy", l(&[("env", "prod"), ("legacy", "true")])),
        (
            "prefixed",
            l(&[("a.b/c", "x-y_z.1"), ("example.com/team", "a")]),
        ),
        ("upper", l(&[("App", "Web"), ("app", "web")])),
        ("n-5", l(&[("n", "5")])),
        ("n-10", l(&[("n", "10")])),
        ("n-007", l(&[("n", "007")])),
        ("n-big", l(&[("n", "99999999999999999999")])),
        ("n-text", l(&[("n", "five"), ("x.y", "a.b-c_d")])),
        (
            "keywords",
            l(&[("in", "notin"), ("notin", "in"), ("x_y", "1")]),
        ),
        ("long", l(&[("long", &a63), (&a63, "y"), (&prefix64, "z")])),
    ]
}

/// Selectors written for the edge cases of the grammar, valid and invalid ([`hand_written`] adds those about lengths).
const HAND_WRITTEN: &[&str] = &[
    "",
    " ",
    "\t\n\r ",
    "env",
    "!env",
    "! env",
    "env=prod",
    "env==prod",
    "env!=prod",
    "env = prod",
    " env=prod ",
    "env\t=\nprod\r",
    "env=",
    "env!=",
    "env==",
    "env=,tier",
    "env=prod,env=dev",
    "env=prod,env=prod",
    "env,!env",
    "env in (prod)",
    "env in (prod,dev)",
    "env in ( prod , dev )",
    "env in(prod)",
    "env notin (prod)",
    "env notin(prod,dev)",
    "env in ()",
    "env in ( )",
    "env notin ()",
    "env in (prod,)",
    "env in (,prod)",
    "env in (,)",
    "env in (prod,,dev)",
    "env in (prod,prod)",
    "tier in (db),tier notin (db)",
    "gpu",
    "gpu=",
    "a.b/c",
    "a.b/c=x-y_z.1",
    "example.com/team in (a)",
    "!example.com/team",
    "App=Web",
    "app=Web",
    "APP",
    "in",
    "notin",
    "in=notin",
    "in in (notin)",
    "notin notin (in)",
    "!in",
    "in in (in,notin)",
    "n>5",
    "n<10",
    "n>4,n<11",
    "n>007",
    "n>0",
    "n<0",
    "n>-1",
    "n>+1",
    "n>",
    "n<",
    "n>a",
    "n>1.5",
    "n>99999999999999999999",
    "n>9223372036854775807",
    "n<9223372036854775807",
    "n>=5",
    "n=>5",
    "n<>5",
    "n>>5",
    "n > 5",
    "n>5,",
    "x.y=a.b-c_d",
    "x_y=1",
    "x_y",
    "_x",
    "x_",
    "-x",
    "x-",
    "env=-prod",
    "env=prod-",
    "env=pr od",
    "env=\"prod\"",
    "env='prod'",
    "env=prod,",
    ",env=prod",
    "env=prod,,tier",
    ",",
    ",,",
    "env===prod",
    "env=!prod",
    "env!==prod",
    "env=!=prod",
    "!env=prod",
    "!env,",
    "!!env",
    "env!",
    "! ",
    "!",
    "=",
    "==prod",
    "env in prod",
    "env in (prod",
    "env in prod)",
    "env in ((prod))",
    "env in (prod))",
    "env in (prod)(dev)",
    "env in (prod dev)",
    "env in (pr od)",
    "env in (prod,!dev)",
    "env in",
    "env notin",
    "env foo (prod)",
    "env IN (prod)",
    "env In (prod)",
    "env innot (prod)",
    "envin (prod)",
    "env in(prod),tier",
    "env in (prod),",
    "env\u{a0}in (prod)",
    "env=prod\u{a0}",
    "\u{a0}env",
    "env=prod\u{b}",
    "\u{c}env",
    "env=prod\u{85}",
    "env\u{2028}",
    "env=prod\u{feff}",
    "env=é",
    "é=prod",
    "env=ＰＲＯＤ",
    "(env)",
    "(env=prod)",
    ")",
    "(",
    "env)",
    "env=(prod)",
    "env=prod)",
    "a/b/c",
    "/c",
    "a.b/",
    "A.b/c",
    "-a.b/c",
    "a-.b/c",
    "a..b/c",
    ".a/c",
    "a_b/c",
    "env\\=prod",
    "env=prod;tier=db",
    "env=prod tier=db",
    "env=prod&tier=db",
    "env=prod+dev",
    "env=prod#x",
    "env=*",
    "env in (*)",
    "env>prod",
    "env<prod",
    "env=prod\n,\ntier",
    "env=prod ,tier",
    "env=prod, tier",
    "env=prod , , tier",
];

/// [`HAND_WRITTEN`], and keys, values and prefixes around their length limits.
fn hand_written() -> Vec<String> {
    let mut out: Vec<String> = HAND_WRITTEN.iter().map(|s| s.to_string()).collect();
    let a = |n: usize| "a".repeat(n);
    for n in [62, 63, 64] {
        out.push(format!("long={}", a(n)));
        out.push(a(n));
        out.push(format!("{}=y", a(n)));
        out.push(format!("long in (x,{})", a(n)));
    }
    for n in [64, 253, 254] {
        out.push(format!("{}/k", "p".repeat(n)));
    }
    out.push(format!("{}.io/k=z", "p".repeat(64)));
    out.push(format!("!{}.io/k", "p".repeat(64)));
    out
}

/// What this corpus draws from [`Rng`] besides `below` and `pick`.
trait SelectorRng {
    fn below(&mut self, n: usize) -> usize;
    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str;

    /// Mostly from `good`, one time in `one_in` from `bad`.
    fn mostly<'a>(&mut self, good: &[&'a str], bad: &[&'a str], one_in: usize) -> &'a str {
        if self.below(one_in) == 0 {
            self.pick(bad)
        } else {
            self.pick(good)
        }
    }

    /// Mostly nothing, sometimes whitespace, rarely whitespace the API server does not skip.
    fn space(&mut self) -> &'static str {
        let good = ["", "", "", "", "", "", "", " ", " ", "  ", "\t", "\n", "\r"];
        self.mostly(&good, &["\u{a0}", "\u{b}", "\u{3000}"], 60)
    }

    fn key(&mut self) -> &'static str {
        let good = [
            "env",
            "env",
            "tier",
            "gpu",
            "n",
            "n",
            "in",
            "notin",
            "a.b/c",
            "example.com/team",
            "App",
            "app",
            "x.y",
            "x_y",
            "legacy",
            "missing",
        ];
        self.mostly(
            &good,
            &["-bad", "bad_", "A.b/c", "a..b/c", "é", "a/b/c"],
            20,
        )
    }

    fn value(&mut self) -> &'static str {
        let good = [
            "prod",
            "prod",
            "",
            "",
            "dev",
            "db",
            "web",
            "5",
            "007",
            "10",
            "0",
            "99999999999999999999",
            "x-y_z.1",
            "Web",
            "true",
            "in",
            "notin",
            "a",
            "a.b-c_d",
        ];
        self.mostly(&good, &["-x", "x_", "a b", "é", "(x)", "a,b"], 20)
    }
}

impl SelectorRng for Rng {
    fn below(&mut self, n: usize) -> usize {
        Rng::below(self, n)
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        Rng::pick(self, from)
    }
}

/// One requirement from [`Rng::key`], an operator and [`Rng::value`], with random spacing.
fn requirement(rng: &mut Rng) -> String {
    let (k, v) = (rng.key(), rng.value());
    let (a, b, c, d) = (rng.space(), rng.space(), rng.space(), rng.space());
    match rng.below(20) {
        0 | 1 => format!("{a}{k}{b}"),
        2 | 3 => format!("{a}!{b}{k}{c}"),
        4 | 5 => format!("{a}{k}{b}={c}{v}{d}"),
        6 => format!("{a}{k}{b}=={c}{v}{d}"),
        7 | 8 => format!("{a}{k}{b}!={c}{v}{d}"),
        9..=13 => {
            let op = if rng.below(2) == 0 { "in" } else { "notin" };
            let n = rng.below(4);
            let values: Vec<String> = (0..n)
                .map(|_| format!("{}{}{}", rng.space(), rng.value(), rng.space()))
                .collect();
            format!("{a}{k} {b}{op}{c}({}){d}", values.join(","))
        }
        14 | 15 => format!("{a}{k}{b}>{c}{v}{d}"),
        16 | 17 => format!("{a}{k}{b}<{c}{v}{d}"),
        18 => format!("{a}{k} {v}{b}"),
        _ => {
            let op = rng.pick(&["===", "=!", "!", ">=", "<>", "==", "(", ")"]);
            format!("{a}{k}{b}{op}{c}{v}")
        }
    }
}

/// `n` selectors of one to three generated requirements, mostly well separated.
fn generated(rng: &mut Rng, n: usize) -> Vec<String> {
    (0..n)
        .map(|_| {
            let parts: Vec<String> = (0..1 + rng.below(3)).map(|_| requirement(rng)).collect();
            let sep = rng.mostly(&[",", ",", ", ", " ,", " , "], &[",,", ";", " "], 20);
            let mut s = parts.join(sep);
            match rng.below(24) {
                0 => s.push(','),
                1 => s.insert(0, ','),
                _ => {}
            }
            s
        })
        .collect()
}

/// Each of `seeds` with one to three characters deleted, inserted or replaced.
fn mutated(rng: &mut Rng, seeds: &[String], per_seed: usize) -> Vec<String> {
    const ALPHABET: &[&str] = &[
        "=", "!", "(", ")", ",", "<", ">", " ", "\t", "\n", "a", "e", "n", "i", "-", "_", ".", "/",
        "0", "5", "\u{a0}",
    ];
    let mut out = Vec::new();
    for seed in seeds {
        for _ in 0..per_seed {
            let mut chars: Vec<String> = seed.chars().map(String::from).collect();
            for _ in 0..1 + rng.below(3) {
                let at = rng.below(chars.len() + 1);
                let c = rng.pick(ALPHABET).to_string();
                match rng.below(3) {
                    0 if at < chars.len() => drop(chars.remove(at)),
                    1 if at < chars.len() => chars[at] = c,
                    _ => chars.insert(at, c),
                }
            }
            out.push(chars.concat());
        }
    }
    out
}

/// Creates the ConfigMaps of [`objects`] in `ns` and returns every object there with its labels as stored.
async fn populate(api: &Api<ConfigMap>) -> BTreeMap<String, BTreeMap<String, String>> {
    for (name, labels) in objects() {
        let cm = ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                labels: Some(labels.into_iter().collect()),
                ..Default::default()
            },
            ..Default::default()
        };
        api.create(&PostParams::default(), &cm)
            .await
            .unwrap_or_else(|e| panic!("creating ConfigMap {name}: {e}"));
    }
    let all = api.list_metadata(&ListParams::default()).await.unwrap();
    all.items
        .into_iter()
        .map(|o| {
            let name = o.metadata.name.unwrap_or_default();
            (name, o.metadata.labels.unwrap_or_default())
        })
        .collect()
}

/// The API server's verdict: the names its LIST with `labelSelector` returns, or its 400 BadRequest.
async fn api_verdict(api: &Api<ConfigMap>, selector: &str) -> Verdict {
    match api
        .list_metadata(&ListParams::default().labels(selector))
        .await
    {
        Ok(list) => Ok(list
            .items
            .into_iter()
            .filter_map(|o| o.metadata.name)
            .collect()),
        Err(kube::Error::Api(s)) if s.code == 400 && s.reason == "BadRequest" => Err(s.message),
        Err(e) => panic!("LIST with labelSelector {selector:?}: {e}"),
    }
}

/// Our verdict: the names of the objects `Selector::matches` picks, or `Selector::parse`'s error.
fn our_verdict(objects: &BTreeMap<String, BTreeMap<String, String>>, selector: &str) -> Verdict {
    let sel = Selector::parse(selector).map_err(|e| e.to_string())?;
    Ok(objects
        .iter()
        .filter(|(_, labels)| sel.matches(labels))
        .map(|(name, _)| name.clone())
        .collect())
}

/// Every selector of `corpus` with the API server's verdict (eight LISTs at a time).
async fn api_verdicts(api: &Api<ConfigMap>, corpus: &BTreeSet<String>) -> Vec<(String, Verdict)> {
    stream::iter(corpus.iter().cloned())
        .map(|s| async move {
            let v = api_verdict(api, &s).await;
            (s, v)
        })
        .buffer_unordered(8)
        .collect()
        .await
}

/// Where the two verdicts differ, said in one line; `None` when they agree.
fn difference(selector: &str, api: &Verdict, ours: &Verdict) -> Option<String> {
    match (api, ours) {
        (Ok(a), Ok(o)) if a == o => None,
        (Err(_), Err(_)) => None,
        (Ok(a), Ok(o)) => Some(format!(
            "{selector:?}: the API server selects {a:?}, Selector::matches {o:?}"
        )),
        (Ok(a), Err(e)) => Some(format!(
            "{selector:?}: the API server accepts it (selects {a:?}), Selector::parse refuses it: {e}"
        )),
        (Err(e), Ok(o)) => Some(format!(
            "{selector:?}: the API server refuses it ({e}), Selector::parse accepts it (selects {o:?})"
        )),
    }
}

/// The corpus: hand-written, generated, and mutated from the hand-written ones (seeded).
fn corpus() -> BTreeSet<String> {
    let mut rng = Rng(0x5e1e_c70a_0000_002b);
    let hand = hand_written();
    let mut corpus: BTreeSet<String> = hand.iter().cloned().collect();
    corpus.extend(generated(&mut rng, 1000));
    corpus.extend(mutated(&mut rng, &hand, 3));
    corpus.retain(|s| !s.contains('\0'));
    corpus
}

#[tokio::test(flavor = "multi_thread")]
async fn the_api_server_refuses_and_selects_what_selector_does() {
    let client = TestEnv::get().client().await;
    let ns = unique_namespace(&client, "selector-oracle").await;
    let api: Api<ConfigMap> = Api::namespaced(client, &ns);
    let objects = populate(&api).await;
    let corpus = corpus();
    let verdicts = api_verdicts(&api, &corpus).await;
    let differences: Vec<String> = verdicts
        .iter()
        .filter_map(|(s, api)| difference(s, api, &our_verdict(&objects, s)))
        .collect();
    assert!(
        differences.is_empty(),
        "{} of {} selectors judged differently:\n{}",
        differences.len(),
        corpus.len(),
        differences.join("\n")
    );
    // The corpus reaches both sides and many different selections, not one trivial answer.
    let accepted: Vec<&BTreeSet<String>> = verdicts
        .iter()
        .filter_map(|(_, v)| v.as_ref().ok())
        .collect();
    let refused = verdicts.len() - accepted.len();
    let selections: BTreeSet<_> = accepted.iter().collect();
    eprintln!(
        "{} selectors: {} accepted ({} different selections), {refused} refused",
        verdicts.len(),
        accepted.len(),
        selections.len()
    );
    assert!(
        accepted.len() >= 300 && refused >= 300,
        "{} accepted, {refused} refused",
        accepted.len()
    );
    assert!(
        selections.len() >= 30,
        "only {} different selections",
        selections.len()
    );
    // What brought this test about: the empty set is the empty value for the API server.
    let env_in_empty = verdicts.iter().find(|(s, _)| s == "env in ()").unwrap();
    assert_eq!(
        env_in_empty.1,
        Ok(BTreeSet::from(["env-empty".to_string()]))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn deliberate_differences_are_still_differences() {
    let client = TestEnv::get().client().await;
    let ns = unique_namespace(&client, "selector-oracle-nul").await;
    let api: Api<ConfigMap> = Api::namespaced(client, &ns);
    let objects = populate(&api).await;
    for (selector, reason) in DELIBERATE {
        let api = api_verdict(&api, selector).await;
        assert!(
            api.is_ok(),
            "{selector:?} is listed as accepted by the API server ({reason}) but it refuses it: {api:?}; \
             drop it from DELIBERATE"
        );
        let ours = our_verdict(&objects, selector);
        assert!(
            ours.is_err(),
            "{selector:?} must be refused ({reason}): {ours:?}"
        );
    }
    // What the API server does with a NUL, as NUL_REASON says.
    let everything = api_verdict(&api, "\0env=prod").await;
    assert_eq!(everything, our_verdict(&objects, ""));
    let separated = api_verdict(&api, "env\0=prod").await;
    assert_eq!(separated, our_verdict(&objects, "env=prod"));
}
