//! Durations judged by Go. `tfsveltos::domain::duration::parse_duration` ports Go's `time.ParseDuration` (the
//! function Sveltos and Kubernetes read the values with); here the real one answers. The program
//! `testenv/oracles/goduration` (standard library only) is built with the `go` on PATH and given the inputs of the
//! golden table of the unit tests (`testenv/oracles/goduration/golden.json`, whose answers must still be Go's) and
//! twenty thousand generated strings (seeded: the same every run) made of digits, `.`, signs, units, `µ`, spaces
//! and other letters, many of them numbers near the limits. Every answer must be `parse_duration`'s, but for its
//! two documented refusals: a leading `-`, and a sum that Go lets wrap around (the program reports the exact sum of
//! the components beside Go's value, so a wrap is seen where they differ).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde::Deserialize;
use support::Rng;
use support::{needed, repo_root, target_tmpdir};
use tfsveltos::domain::duration::{DurationError, parse_duration};

/// Go's answer for one input.
#[derive(Debug, Deserialize)]
struct Answer {
    /// `time.ParseDuration`'s value in nanoseconds, when it accepts the input.
    ns: Option<i64>,
    /// The exact sum of the components (decimal), beside `ns`.
    sum: Option<String>,
    /// Go's error, when it refuses the input.
    error: Option<String>,
}

/// The golden table's shape.
#[derive(Deserialize)]
struct Golden {
    rows: Vec<(String, Option<i64>)>,
}

fn program_dir() -> PathBuf {
    repo_root().join("testenv/oracles/goduration")
}

/// `go version`, when a `go` is on PATH.
fn go() -> Option<String> {
    let out = Command::new("go").arg("version").output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Builds the program into the test binary's scratch directory; never fetches anything.
fn build() -> PathBuf {
    let exe = target_tmpdir().join("oracles").join("goduration");
    let out = Command::new("go")
        .args(["build", "-o"])
        .arg(&exe)
        .arg(".")
        .current_dir(program_dir())
        .env("GOTOOLCHAIN", "local")
        .env("GOWORK", "off")
        .env("GOPROXY", "off")
        .output()
        .expect("running go build");
    assert!(
        out.status.success(),
        "go build of {} failed:\n{}",
        program_dir().display(),
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// Go's answers for `inputs`, in order.
fn ask_go(exe: &Path, inputs: &[String]) -> Vec<Answer> {
    let mut child = Command::new(exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting goduration");
    let body = serde_json::to_vec(inputs).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&body));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().expect("writing the inputs");
    assert!(
        out.status.success(),
        "goduration failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answers: Vec<Answer> = serde_json::from_slice(&out.stdout).expect("goduration's JSON");
    assert_eq!(answers.len(), inputs.len());
    answers
}

/// What this corpus draws from [`Rng`] besides `below` and `pick`.
trait DurationRng {
    fn below(&mut self, n: usize) -> usize;

    fn digits(&mut self, max: usize) -> String {
        (0..self.below(max + 1))
            .map(|_| char::from(b'0' + self.below(10) as u8))
            .collect()
    }
}

impl DurationRng for Rng {
    fn below(&mut self, n: usize) -> usize {
        Rng::below(self, n)
    }
}

const UNITS: &[&str] = &["ns", "us", "µs", "μs", "ms", "s", "m", "h"];

/// A component `digits[.digits]unit`, mostly well formed; its numbers from short to past 2^63.
fn component(rng: &mut Rng) -> String {
    let max = if rng.below(4) == 0 { 22 } else { 4 };
    let int = rng.digits(max);
    let frac = match rng.below(4) {
        0 => {
            let max = if rng.below(3) == 0 { 25 } else { 3 };
            format!(".{}", rng.digits(max))
        }
        _ => String::new(),
    };
    let unit = match rng.below(16) {
        0 => rng.pick(&[
            "", "d", "µ", "μ", "S", "H", "Ms", "sec", "e", " s", "s ", "_",
        ]),
        _ => rng.pick(UNITS),
    };
    format!("{int}{frac}{unit}")
}

/// Numbers at Go's bound, 2^63 - 1 ns (`2562047h47m16.854775807s`), give or take a little, written in one unit
/// (with its remainder as a fraction: exact for the units that are powers of ten), or followed by a component.
fn near_limits(rng: &mut Rng) -> String {
    let per_unit: [(&str, u128); 6] = [
        ("ns", 1),
        ("us", 1_000),
        ("ms", 1_000_000),
        ("s", 1_000_000_000),
        ("m", 60_000_000_000),
        ("h", 3_600_000_000_000),
    ];
    let (unit, size) = per_unit[rng.below(per_unit.len())];
    let target = (1u128 << 63) - 2 + rng.below(3) as u128;
    let whole = target / size + rng.below(3) as u128 - 1;
    let frac = target % size;
    let digits = size.to_string().len() - 1;
    match rng.below(3) {
        0 => format!("{whole}{unit}"),
        1 if digits > 0 => format!("{whole}.{frac:0digits$}{unit}"),
        _ => format!("{whole}{unit}{}", component(rng)),
    }
}

/// Pieces of the strings made at random.
const PIECES: &[&str] = &[
    "0",
    "1",
    "5",
    "9",
    "00",
    "12",
    ".",
    ".",
    "+",
    "-",
    " ",
    "\t",
    "ns",
    "us",
    "µs",
    "μs",
    "ms",
    "s",
    "m",
    "h",
    "µ",
    "d",
    "e",
    "x",
    "n",
    "u",
    "9223372036854775808",
    "1e3",
    ",",
    "_",
];

/// `n` inputs: sums of components with an optional sign, fractions of every length, inputs near the limits, and
/// strings of random pieces.
fn corpus(rng: &mut Rng, n: usize) -> Vec<String> {
    (0..n)
        .map(|_| match rng.below(10) {
            0..=3 => {
                let sign = rng.pick(&["", "", "", "+", "-", "++", "+-"]);
                let parts: String = (0..1 + rng.below(4)).map(|_| component(rng)).collect();
                format!("{sign}{parts}")
            }
            4 | 5 => {
                // Fractions of every length: where Go's float64 step shows.
                let (int, len) = (rng.digits(3), 1 + rng.below(20));
                let frac: String = (0..len)
                    .map(|_| char::from(b'0' + rng.below(10) as u8))
                    .collect();
                format!("{int}.{frac}{}", rng.pick(UNITS))
            }
            6 | 7 => {
                let sign = rng.pick(&["", "", "+", "-"]);
                format!("{sign}{}", near_limits(rng))
            }
            _ => (0..rng.below(8)).map(|_| rng.pick(PIECES)).collect(),
        })
        .collect()
}

/// Where `parse_duration` disagrees with Go's answer for `input`, in one line.
fn difference(input: &str, go: &Answer) -> Option<String> {
    let ours = parse_duration(input);
    let bad = |why: &str| {
        Some(format!(
            "{input:?}: Go {go:?}, parse_duration {ours:?}: {why}"
        ))
    };
    match (go.ns, &ours) {
        (None, Err(_)) => None,
        (None, Ok(_)) => bad("Go refuses it"),
        // Deliberate: no negative duration, `-0` included.
        (Some(_), _) if input.starts_with('-') => {
            (!matches!(ours, Err(DurationError::Negative { .. })))
                .then(|| bad("a leading '-' must be refused as negative"))
                .flatten()
        }
        // Deliberate: Go's sum wrapped around (its value is not the sum of the components).
        (Some(ns), _) if go.sum.as_deref() != Some(ns.to_string().as_str()) => {
            (!matches!(ours, Err(DurationError::TooLarge { .. })))
                .then(|| bad("Go's sum wraps around: must be refused as too large"))
                .flatten()
        }
        (Some(ns), Ok(d)) if u64::try_from(ns).ok().map(Duration::from_nanos) == Some(*d) => None,
        (Some(_), _) => bad("Go accepts it with this value"),
    }
}

/// The corpus reaches both sides, the bound from both sides, and a sum that Go wraps.
fn reaches_both_sides(inputs: &[String], answers: &[Answer]) {
    let accepted = answers.iter().filter(|a| a.ns.is_some()).count();
    let refused = answers.iter().filter(|a| a.error.is_some()).count();
    let near_max = answers
        .iter()
        .filter(|a| a.ns.is_some_and(|n| n > 1 << 62))
        .count();
    let wraps = answers
        .iter()
        .filter(|a| {
            a.ns.is_some_and(|n| a.sum.as_deref() != Some(n.to_string().as_str()))
        })
        .count();
    let too_large = inputs
        .iter()
        .filter(|i| matches!(parse_duration(i), Err(DurationError::TooLarge { .. })))
        .count();
    eprintln!(
        "{} inputs: {accepted} accepted by Go ({near_max} above 2^62 ns, {wraps} wrapped), {refused} refused \
         ({too_large} as too large here)",
        inputs.len()
    );
    assert!(
        accepted >= 4000 && refused >= 4000,
        "{accepted} accepted, {refused} refused"
    );
    assert!(
        near_max >= 500 && too_large >= 500,
        "{near_max} near the maximum, {too_large} too large"
    );
    assert!(wraps >= 1, "no input whose sum Go wraps around");
}

#[test]
fn parse_duration_answers_as_go_does() {
    let Some(version) = needed(go(), "`go` on PATH (builds testenv/oracles/goduration)") else {
        return;
    };
    let exe = build();
    let golden: Golden =
        serde_json::from_str(&std::fs::read_to_string(program_dir().join("golden.json")).unwrap())
            .unwrap();
    let golden_inputs: Vec<String> = golden.rows.iter().map(|(i, _)| i.clone()).collect();
    // The golden table of the unit tests is still what Go answers.
    let answers = ask_go(&exe, &golden_inputs);
    for ((input, recorded), answer) in golden.rows.iter().zip(&answers) {
        assert_eq!(
            *recorded, answer.ns,
            "golden.json row {input:?} is not what {version} answers ({answer:?}); regenerate it: \
             cd testenv/oracles/goduration && go run . -golden golden.json"
        );
    }
    let mut inputs = golden_inputs;
    inputs.extend(corpus(&mut Rng(0x00d0_7a71_0000_0001), 20_000));
    let answers = ask_go(&exe, &inputs);
    let differences: Vec<String> = inputs
        .iter()
        .zip(&answers)
        .filter_map(|(input, go)| difference(input, go))
        .collect();
    assert!(
        differences.is_empty(),
        "{} of {} inputs answered differently from {version}:\n{}",
        differences.len(),
        inputs.len(),
        differences.join("\n")
    );
    reaches_both_sides(&inputs, &answers);
}
