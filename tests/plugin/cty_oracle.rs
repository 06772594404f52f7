//! The msgpack value codec judged by go-cty. `src/tfplugin/value/msgpack` writes and reads cty's msgpack form of a
//! `DynamicValue`; Terraform and OpenTofu read and write it with go-cty's `cty/msgpack`, which answers here through
//! the program `testenv/oracles/gocty` (built by `scripts/testenv build`). A seeded corpus of types (primitives,
//! collections, objects and tuples, `dynamic` inside them, up to four deep) and conforming values (nulls, plain and
//! refined unknowns, numbers past `i64`, `u64`, `f64` and cty's own 512-bit precision, multi-byte and long strings,
//! nested dynamic values) is encoded by the codec and given to go-cty:
//!
//! - (a) go-cty accepts every encoding, re-encodes the value it read, and reports the refinements we wrote (the
//!   values go-cty cannot read back whatever their encoding, which the encoder refuses, are counted, under a tenth);
//! - (b) the codec reads go-cty's re-encoding back to the original value (sets as sets, numbers by value), but for
//!   what cty itself normalises, each listed in [`cty_view`] with its reason: what Terraform sees too;
//! - (c) hand-made inputs ([`hand_made`]) that go-cty refuses (or panics on), the codec refuses; those it accepts,
//!   the codec reads as go-cty does, but for the listed stricter refusals.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::Deserialize;
use support::{Rng, bin_dir, needed};
use tfsveltos::tfplugin::value::msgpack::{decode, encode, infer_type};
use tfsveltos::tfplugin::{Fields, Number, Refinements, Type, Value};

// ---------------------------------------------------------------------------------------------------------------
// the oracle
// ---------------------------------------------------------------------------------------------------------------

/// go-cty's answer for one case (see `testenv/oracles/gocty/main.go`).
#[derive(Debug, Deserialize)]
struct Answer {
    /// Why `msgpack.Unmarshal` refused the bytes (or the panic it raised).
    error: Option<String>,
    /// Whether go-cty panicked (Terraform would crash).
    #[serde(default)]
    panicked: bool,
    /// `msgpack.Marshal` of the decoded value, hex.
    reencoded: Option<String>,
    /// Why `msgpack.Marshal` refused the decoded value.
    reencode_error: Option<String>,
    /// Whether the decoded value is wholly known.
    wholly_known: Option<bool>,
    /// The refinements of each unknown go-cty decoded.
    #[serde(default)]
    unknowns: Vec<GoUnknown>,
}

/// The refinements of one unknown value as go-cty reports them (number bounds left out: go-cty reports them as
/// binary fractions, compared through the re-encoding instead).
#[derive(Debug, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
struct GoUnknown {
    #[serde(default)]
    not_null: bool,
    prefix: Option<String>,
    #[serde(default)]
    min_length: u64,
    max_length: Option<u64>,
}

/// `go version`, when a `go` is on PATH.
fn go() -> Option<String> {
    let out = Command::new("go").arg("version").output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The oracle `scripts/testenv build` built.
fn oracle() -> PathBuf {
    let exe = bin_dir().join("gocty");
    assert!(
        exe.is_file(),
        "{} is missing: run scripts/testenv build (TESTENV_BIN may name a directory built before the oracle)",
        exe.display()
    );
    exe
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex from gocty"))
        .collect()
}

/// go-cty's answers for `cases` (type, msgpack), in order.
fn ask(exe: &Path, cases: &[(Type, Vec<u8>)]) -> Vec<Answer> {
    let body: Vec<serde_json::Value> = cases
        .iter()
        .map(|(ty, bytes)| serde_json::json!({"type": ty.to_json(), "msgpack": hex(bytes)}))
        .collect();
    let mut child = Command::new(exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting gocty");
    let body = serde_json::to_vec(&body).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&body));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().expect("writing the cases");
    assert!(
        out.status.success(),
        "gocty failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answers: Vec<Answer> = serde_json::from_slice(&out.stdout).expect("gocty's JSON");
    assert_eq!(answers.len(), cases.len());
    answers
}

// ---------------------------------------------------------------------------------------------------------------
// the corpus
// ---------------------------------------------------------------------------------------------------------------

/// Text that NFC leaves alone wherever it stands (cty normalises every string to NFC; [`hand_made`] has a string
/// that is not): ASCII, precomposed Latin, Greek, CJK, a 4-byte emoji, controls.
const PIECES: &[&str] = &[
    "a",
    "b",
    "z",
    "A",
    "0",
    "9",
    "-",
    "_",
    ".",
    "/",
    " ",
    ":",
    "\"",
    "\\",
    "\n",
    "\t",
    "\0",
    "é",
    "ß",
    "Ω",
    "€",
    "日本",
    "語",
    "😀",
    "\u{7f}",
    "\u{fffd}",
    "\u{10ffff}",
];

struct Gen {
    rng: Rng,
}

impl Gen {
    fn below(&mut self, n: usize) -> usize {
        self.rng.below(n)
    }

    fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }

    /// A string of up to `max` pieces.
    fn text(&mut self, max: usize) -> String {
        (0..self.below(max + 1))
            .map(|_| self.rng.pick(PIECES))
            .collect()
    }

    /// A string, now and then a long one (past go-cty's 256-byte prefix limit).
    fn string(&mut self) -> String {
        if self.chance(8) {
            let n = 60 + self.below(200);
            self.text(n)
        } else {
            self.text(8)
        }
    }

    /// `min` to `min + spread - 1` digits, the first not 0.
    fn digits(&mut self, min: usize, spread: usize) -> String {
        let n = min + self.below(spread);
        (0..n)
            .map(|i| {
                let first = if i == 0 { 1 } else { 0 };
                char::from(b'0' + (first + self.below(10 - first)) as u8)
            })
            .collect()
    }

    /// A number: small and extreme integers, integers past `u64`, long decimals, exponents far past `f64`'s,
    /// numbers with more digits than cty's 512 bits hold, floats of every kind (subnormal, infinite, `-0`).
    fn number(&mut self) -> Number {
        let sign = if self.chance(3) { "-" } else { "" };
        match self.below(15) {
            0 => Number::Int(self.below(200) as i64 - 100),
            1 => Number::Int(
                *[i64::MIN, i64::MAX, i64::MIN + 1, i64::MAX - 1][..]
                    .get(self.below(4))
                    .unwrap(),
            ),
            2 => Number::Big((u64::MAX - self.below(3) as u64).to_string()),
            3 => Number::Big(format!("{sign}{}", self.digits(20, 40))),
            4 => Number::Big(format!("{sign}{}", self.digits(160, 40))),
            5 => {
                let (int, frac) = (self.digits(1, 5), self.digits(1, 40));
                Number::Big(format!("{sign}{int}.{frac}"))
            }
            6 => {
                let exp = self.below(800) as i64 - 400;
                Number::Big(format!(
                    "{sign}{}.{}e{exp}",
                    self.digits(1, 1),
                    self.digits(1, 10)
                ))
            }
            7 => {
                let zeros = "0".repeat(self.below(30));
                Number::Big(format!("{sign}0.{zeros}{}", self.digits(1, 8)))
            }
            8 => Number::Float(
                f64::from_bits(self.rng.0 >> self.below(3)).abs()
                    * if sign.is_empty() { 1.0 } else { -1.0 },
            ),
            9 => Number::Float(
                *[
                    f64::INFINITY,
                    f64::NEG_INFINITY,
                    -0.0,
                    f64::MIN_POSITIVE,
                    5e-324,
                    f64::MAX,
                    f64::MIN,
                    1e20,
                    2f64.powi(70),
                    0.1,
                    1.5,
                ][..]
                    .get(self.below(11))
                    .unwrap(),
            ),
            10 => Number::Float((self.below(1 << 20) as f64) / 1024.0 - 512.0),
            11 => Number::Float([f64::INFINITY, f64::NEG_INFINITY][self.below(2)]),
            _ => Number::Int((self.rng.0 >> self.below(64)) as i64),
        }
    }

    /// A type up to `depth` deep; `dynamic` only where `dynamic_ok`.
    fn ty(&mut self, depth: usize, dynamic_ok: bool) -> Type {
        let leaves = if dynamic_ok { 4 } else { 3 };
        if depth == 0 || self.chance(3) {
            return [Type::String, Type::Number, Type::Bool, Type::Dynamic][self.below(leaves)]
                .clone();
        }
        match self.below(5) {
            0 => Type::list(self.ty(depth - 1, dynamic_ok)),
            1 => Type::set(self.ty(depth - 1, dynamic_ok)),
            2 => Type::map(self.ty(depth - 1, dynamic_ok)),
            3 => Type::object(
                (0..self.below(4))
                    .map(|_| {
                        (
                            self.rng
                                .pick(&["a", "b", "name", "x_1", "ü", "_"])
                                .to_string(),
                            self.ty(depth - 1, dynamic_ok),
                        )
                    })
                    .collect::<Vec<_>>(),
            ),
            _ => Type::Tuple(
                (0..self.below(4))
                    .map(|_| self.ty(depth - 1, dynamic_ok))
                    .collect(),
            ),
        }
    }

    /// Refinements that fit `ty`, consistent (a lower bound never above its upper bound). `collapsing`: may make
    /// an unknown that cty turns into a known value (equal bounds of a not-null number or collection).
    fn refinements(&mut self, ty: &Type, collapsing: bool) -> Refinements {
        let mut r = Refinements {
            not_null: self.chance(2),
            ..Refinements::default()
        };
        match ty {
            Type::String => {
                // Every third one long, most of those past go-cty's 256 bytes.
                let prefix = if self.chance(3) {
                    let n = 100 + self.below(200);
                    (0..n).map(|_| self.rng.pick(PIECES)).collect()
                } else {
                    self.string()
                };
                r.string_prefix = Some(prefix).filter(|p| !p.is_empty());
            }
            Type::Number => {
                let (a, b) = (self.number(), self.number());
                let (mut lo, mut hi) = match (a.as_f64(), b.as_f64()) {
                    (Some(x), Some(y)) if x > y => (b, a),
                    (Some(x), Some(y)) if x == y => (a.clone(), a),
                    _ => (a, b),
                };
                if !collapsing && lo == hi {
                    hi = Number::Big(format!(
                        "{}1",
                        lo.as_f64().unwrap_or(0.0).abs().max(1.0) as i64
                    ));
                    lo = Number::Int(-1);
                }
                let equal = lo == hi;
                let lo_inc = self.chance(2);
                let hi_inc = if equal { lo_inc } else { self.chance(2) };
                r.number_lower = (!self.chance(4)).then_some((lo, lo_inc));
                r.number_upper = (!self.chance(4)).then_some((hi, hi_inc));
            }
            Type::List(_) | Type::Set(_) | Type::Map(_) => {
                let lo = self.below(4) as u64;
                r.length_lower = Some(lo).filter(|&l| l > 0);
                r.length_upper = match self.below(6) {
                    0 => None,
                    1 if collapsing => Some(lo),
                    2 => Some([i64::MAX as u64, u64::MAX, 1 << 40][self.below(3)]),
                    _ => Some(lo + 1 + self.below(5) as u64),
                };
            }
            _ => {}
        }
        r
    }

    /// A value of `ty`: null, unknown (plain or refined) or known. `collapsing` as in [`Gen::refinements`]; never
    /// inside a `dynamic` value, where the unknown's type is not written down.
    fn value(&mut self, ty: &Type, depth: usize, collapsing: bool) -> Value {
        match self.below(10) {
            0 => return Value::Null,
            1 => return Value::unknown(),
            2 => return Value::refined(self.refinements(ty, collapsing)),
            _ => {}
        }
        match ty {
            Type::String => Value::String(self.string()),
            Type::Number => Value::Number(self.number()),
            Type::Bool => Value::Bool(self.chance(2)),
            Type::Dynamic => {
                // A nested dynamic value: any type, `dynamic` inside it too.
                let inner = self.ty(depth.min(3), true);
                self.value(&inner, depth.saturating_sub(1), false)
            }
            Type::List(elem) => Value::List(self.elements(elem, depth, collapsing)),
            Type::Set(elem) => Value::Set(distinct(self.elements(elem, depth, collapsing))),
            Type::Map(elem) => {
                let items = self.elements(elem, depth, collapsing);
                Value::Map(items.into_iter().map(|v| (self.text(3), v)).collect())
            }
            Type::Object { attributes, .. } => Value::Object(
                attributes
                    .iter()
                    .map(|(k, t)| {
                        (
                            k.clone(),
                            self.value(t, depth.saturating_sub(1), collapsing),
                        )
                    })
                    .collect(),
            ),
            Type::Tuple(elems) => Value::Tuple(
                elems
                    .iter()
                    .map(|t| self.value(t, depth.saturating_sub(1), collapsing))
                    .collect(),
            ),
        }
    }

    /// Elements of one collection. A `dynamic` element type is one concrete type for all of them (cty's
    /// collections have one element type).
    fn elements(&mut self, elem: &Type, depth: usize, collapsing: bool) -> Vec<Value> {
        let concrete = concretise(elem, &mut |depth| self.ty(depth, false), depth.min(2));
        let collapsing = collapsing && concrete == *elem;
        (0..self.below(4))
            .map(|_| self.value(&concrete, depth.saturating_sub(1), collapsing))
            .collect()
    }
}

/// `ty` with each `dynamic` in it replaced by a type `pick` gives.
fn concretise(ty: &Type, pick: &mut dyn FnMut(usize) -> Type, depth: usize) -> Type {
    match ty {
        Type::Dynamic => pick(depth),
        Type::List(e) => Type::list(concretise(e, pick, depth)),
        Type::Set(e) => Type::set(concretise(e, pick, depth)),
        Type::Map(e) => Type::map(concretise(e, pick, depth)),
        Type::Object { attributes, .. } => Type::object(
            attributes
                .iter()
                .map(|(k, t)| (k.clone(), concretise(t, pick, depth)))
                .collect::<Vec<_>>(),
        ),
        Type::Tuple(ts) => Type::Tuple(ts.iter().map(|t| concretise(t, pick, depth)).collect()),
        t => t.clone(),
    }
}

/// Set elements distinct as cty compares them: wholly known ones by value (numbers too), any other never equal to
/// another (`Equals` is unknown).
fn distinct(items: Vec<Value>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for v in items {
        if v.is_wholly_known() && out.iter().any(|o| same(o, &v).is_ok()) {
            continue;
        }
        out.push(v);
    }
    out
}

// ---------------------------------------------------------------------------------------------------------------
// comparing values
// ---------------------------------------------------------------------------------------------------------------

/// A number's exact value: infinite, or `0.DIGITS × 10^exp` (digits without leading or trailing zeros; zero has
/// none, and no sign).
#[derive(Debug, PartialEq)]
enum Exact {
    Inf(bool),
    Finite { neg: bool, digits: String, exp: i64 },
}

fn exact(n: &Number) -> Exact {
    let text = match n {
        Number::Int(i) => i.to_string(),
        Number::Float(x) if x.is_infinite() => return Exact::Inf(*x < 0.0),
        // Every digit of the binary value (Rust prints a float's exact expansion when given the precision).
        Number::Float(x) => format!("{x:.1100}"),
        Number::Big(s) => s.clone(),
    };
    let (neg, text) = match text.strip_prefix('-') {
        Some(rest) => (true, rest.to_string()),
        None => (false, text),
    };
    let (mantissa, e) = match text.split_once(['e', 'E']) {
        Some((m, e)) => (m.to_string(), e.parse::<i64>().expect("exponent")),
        None => (text, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((&mantissa, ""));
    let all = format!("{int}{frac}");
    let lead = all.len() - all.trim_start_matches('0').len();
    let digits = all.trim_matches('0').to_string();
    if digits.is_empty() {
        return Exact::Finite {
            neg: false,
            digits,
            exp: 0,
        };
    }
    Exact::Finite {
        neg,
        digits,
        exp: int.len() as i64 - lead as i64 + e,
    }
}

/// Significant decimal digits cty's 512-bit binary numbers hold (512 × log10 2 = 154.1).
const CTY_DIGITS: usize = 154;

/// Whether `ours` and `theirs` are the same number. Two tolerances, both cty's:
///
/// - a number with more significant digits than cty holds comes back rounded to 512 bits (cty parses decimal text
///   with `big.ParseFloat(s, 10, 512, ...)`, which is what Terraform holds too); its first 150 digits must agree;
/// - a float that is a whole number past `i64` comes back as the shortest decimal text that reads back as that
///   float (cty keeps a float at its 53 bits and writes such a number with `big.Float.Text('f', -1)`).
fn same_number(ours: &Number, theirs: &Number) -> bool {
    let shortest = |n: &Number| match n {
        Number::Float(x) if x.is_finite() => Some(exact(&Number::Big(format!("{x:e}")))),
        _ => None,
    };
    match (exact(ours), exact(theirs)) {
        (a, b) if a == b => true,
        (a, b) if shortest(ours).as_ref() == Some(&b) || shortest(theirs).as_ref() == Some(&a) => {
            true
        }
        (
            Exact::Finite {
                neg: n1,
                digits: d1,
                exp: e1,
            },
            Exact::Finite {
                neg: n2,
                digits: d2,
                exp: e2,
            },
        ) => {
            let long = d1.len() > CTY_DIGITS || d2.len() > CTY_DIGITS;
            long && n1 == n2
                && e1 == e2
                && d1.get(..150).is_some()
                && d1.get(..150) == d2.get(..150)
        }
        _ => false,
    }
}

fn same_bound(a: &Option<(Number, bool)>, b: &Option<(Number, bool)>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some((x, i)), Some((y, j))) => i == j && same_number(x, y),
        _ => false,
    }
}

/// Where `theirs` differs from `ours` (sets compared as sets, numbers by value), in words; `Ok` when it does not.
fn same(ours: &Value, theirs: &Value) -> Result<(), String> {
    let nested = |step: String, r: Result<(), String>| r.map_err(|e| format!("{step}: {e}"));
    match (ours, theirs) {
        (Value::Number(a), Value::Number(b)) if same_number(a, b) => Ok(()),
        (Value::Unknown(a), Value::Unknown(b))
            if a.not_null == b.not_null
                && a.string_prefix == b.string_prefix
                && same_bound(&a.number_lower, &b.number_lower)
                && same_bound(&a.number_upper, &b.number_upper)
                && a.length_lower == b.length_lower
                && a.length_upper == b.length_upper =>
        {
            Ok(())
        }
        (Value::List(a), Value::List(b)) | (Value::Tuple(a), Value::Tuple(b))
            if a.len() == b.len() =>
        {
            a.iter()
                .zip(b)
                .enumerate()
                .try_for_each(|(i, (x, y))| nested(format!("[{i}]"), same(x, y)))
        }
        (Value::Map(a), Value::Map(b)) | (Value::Object(a), Value::Object(b))
            if a.keys().eq(b.keys()) =>
        {
            a.iter()
                .zip(b.values())
                .try_for_each(|((k, x), y)| nested(format!("[{k:?}]"), same(x, y)))
        }
        (Value::Set(a), Value::Set(b)) if a.len() == b.len() => {
            // Each element of ours matched to its own element of theirs.
            let mut left: Vec<&Value> = b.iter().collect();
            for x in a {
                let Some(i) = left.iter().position(|y| same(x, y).is_ok()) else {
                    return Err(format!(
                        "set element {:?} not in {:?}",
                        x.reveal(),
                        theirs.reveal()
                    ));
                };
                left.swap_remove(i);
            }
            Ok(())
        }
        (a, b) if a == b && !matches!(a, Value::Number(_) | Value::Unknown(_)) => Ok(()),
        _ => Err(format!("{:?} became {:?}", ours.reveal(), theirs.reveal())),
    }
}

/// The longest start of `s` of at most `max` bytes that ends on a character boundary.
fn cut(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// `value` (of type `ty`) as cty holds it, which is what Terraform sees. The normalisations, each cty's:
///
/// - an unknown whose type is `dynamic` has no refinements ("cty.DynamicVal can never have refinements": go-cty's
///   encoder and decoder drop them);
/// - a string prefix is at most 256 bytes: go-cty's encoder never writes a longer one (and its decoder refuses a
///   refinement payload over 1024 bytes), so the codec cuts it there, on a character boundary;
/// - a length bound is a Go `int`, whose largest value means no upper bound: the codec leaves out bounds from
///   2^63 - 1 up;
/// - a not-null unknown whose bounds say it is one value is that value (`RefinementBuilder.NewValue`): a number with
///   equal inclusive bounds is the number; a collection whose length bounds are both 0 is empty, a list whose
///   length is n is n plain unknowns, a set whose length is 1 holds one plain unknown.
///
/// Where `ty` has `dynamic` parts, the type a value has there is `hint`: the elements of one collection have one
/// type ([`element_type`]), and a null or unknown element is of that type too.
fn cty_view(value: &Value, ty: &Type, hint: Option<&Type>) -> Value {
    if *ty == Type::Dynamic {
        return match (hint, value) {
            (Some(h), _) if *h != Type::Dynamic => cty_view(value, h, None),
            (_, Value::Unknown(_)) => Value::unknown(),
            (_, Value::Null) => Value::Null,
            (_, v) => cty_view(v, &infer_type(v).expect("a conforming value"), None),
        };
    }
    let hints = |i: usize| match hint {
        Some(Type::Tuple(hs)) => hs.get(i),
        _ => None,
    };
    match (value, ty) {
        (Value::Unknown(r), _) => collapse(r, ty).unwrap_or_else(|| {
            let mut r = r.clone();
            r.string_prefix = r
                .string_prefix
                .map(|p| cut(&p, 256).to_string())
                .filter(|p| !p.is_empty());
            let fits = |l: &u64| *l < i64::MAX as u64;
            r.length_lower = r.length_lower.filter(fits);
            r.length_upper = r.length_upper.filter(fits);
            Value::Unknown(r)
        }),
        (Value::Null, _) => Value::Null,
        (Value::List(items), Type::List(e)) => {
            let h = element_type(e, items.iter(), hint);
            Value::List(items.iter().map(|v| cty_view(v, e, h.as_ref())).collect())
        }
        (Value::Set(items), Type::Set(e)) => {
            let h = element_type(e, items.iter(), hint);
            Value::Set(items.iter().map(|v| cty_view(v, e, h.as_ref())).collect())
        }
        (Value::Map(m), Type::Map(e)) => {
            let h = element_type(e, m.values(), hint);
            Value::Map(
                m.iter()
                    .map(|(k, v)| (k.clone(), cty_view(v, e, h.as_ref())))
                    .collect(),
            )
        }
        (Value::Tuple(items), Type::Tuple(ts)) => Value::Tuple(
            items
                .iter()
                .zip(ts)
                .enumerate()
                .map(|(i, (v, t))| cty_view(v, t, hints(i)))
                .collect(),
        ),
        (Value::Object(m), Type::Object { attributes, .. }) => Value::Object(
            attributes
                .iter()
                .map(|(k, t)| {
                    let h = match hint {
                        Some(Type::Object { attributes, .. }) => attributes.get(k),
                        _ => None,
                    };
                    (k.clone(), cty_view(m.get(k).unwrap_or(&Value::Null), t, h))
                })
                .collect(),
        ),
        (v, _) => v.clone(),
    }
}

/// The one type cty gives the elements `items` of a collection of `elem`, where `elem` has `dynamic` parts: the
/// collection's own `hint` when it has one, else the types of all elements unified (cty's `ListVal`, `SetVal` and
/// `MapVal` panic on elements of different types).
fn element_type<'v>(
    elem: &Type,
    items: impl Iterator<Item = &'v Value>,
    hint: Option<&Type>,
) -> Option<Type> {
    if let Some(Type::List(h) | Type::Set(h) | Type::Map(h)) = hint {
        return Some((**h).clone());
    }
    Some(items.fold(elem.clone(), |acc, v| unify(&acc, &concrete(elem, v))))
}

/// The type `v` has as a value of `ty`: `ty` with its `dynamic` parts filled in from `v`.
fn concrete(ty: &Type, v: &Value) -> Type {
    match (ty, v) {
        (_, Value::Null | Value::Unknown(_)) => ty.clone(),
        (Type::Dynamic, v) => infer_type(v).expect("a conforming value"),
        (Type::List(e), Value::List(i)) => Type::list(element_type(e, i.iter(), None).unwrap()),
        (Type::Set(e), Value::Set(i)) => Type::set(element_type(e, i.iter(), None).unwrap()),
        (Type::Map(e), Value::Map(m)) => Type::map(element_type(e, m.values(), None).unwrap()),
        (Type::Tuple(ts), Value::Tuple(i)) => {
            Type::Tuple(ts.iter().zip(i).map(|(t, v)| concrete(t, v)).collect())
        }
        (Type::Object { attributes, .. }, Value::Object(m)) => Type::object(
            attributes
                .iter()
                .map(|(k, t)| (k.clone(), concrete(t, m.get(k).unwrap_or(&Value::Null))))
                .collect::<Vec<_>>(),
        ),
        _ => ty.clone(),
    }
}

/// The more specific of two types that differ only where one is `dynamic`.
fn unify(a: &Type, b: &Type) -> Type {
    match (a, b) {
        (Type::Dynamic, t) | (t, Type::Dynamic) => t.clone(),
        (Type::List(x), Type::List(y)) => Type::list(unify(x, y)),
        (Type::Set(x), Type::Set(y)) => Type::set(unify(x, y)),
        (Type::Map(x), Type::Map(y)) => Type::map(unify(x, y)),
        (Type::Tuple(xs), Type::Tuple(ys)) => {
            Type::Tuple(xs.iter().zip(ys).map(|(x, y)| unify(x, y)).collect())
        }
        (Type::Object { attributes: xa, .. }, Type::Object { attributes: ya, .. }) => Type::object(
            xa.iter()
                .zip(ya.values())
                .map(|((k, x), y)| (k.clone(), unify(x, y)))
                .collect::<Vec<_>>(),
        ),
        _ => a.clone(),
    }
}

/// The known value a not-null unknown of type `ty` with refinements `r` is, if cty makes it one.
fn collapse(r: &Refinements, ty: &Type) -> Option<Value> {
    if !r.not_null {
        return None;
    }
    match ty {
        Type::Number => match (&r.number_lower, &r.number_upper) {
            (Some((lo, true)), Some((hi, true))) if same_number(lo, hi) => {
                Some(Value::Number(lo.clone()))
            }
            _ => None,
        },
        Type::List(_) | Type::Set(_) | Type::Map(_) => {
            let lo = r.length_lower.unwrap_or(0);
            match (ty, r.length_upper) {
                (Type::List(_), Some(hi)) if hi == lo => {
                    Some(Value::List(vec![Value::unknown(); lo as usize]))
                }
                (Type::Set(_), Some(0)) => Some(Value::Set(vec![])),
                (Type::Set(_), Some(1)) if lo == 1 => Some(Value::Set(vec![Value::unknown()])),
                (Type::Map(_), Some(0)) => Some(Value::Map(Fields::new())),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The unknowns of `v` as go-cty reports them, in a canonical order.
fn unknowns(v: &Value, out: &mut Vec<GoUnknown>) {
    match v {
        Value::Unknown(r) => out.push(GoUnknown {
            not_null: r.not_null,
            prefix: r.string_prefix.clone(),
            min_length: r.length_lower.unwrap_or(0),
            max_length: r.length_upper.filter(|&l| l < i64::MAX as u64),
        }),
        Value::List(items) | Value::Set(items) | Value::Tuple(items) => {
            for i in items {
                unknowns(i, out);
            }
        }
        Value::Map(m) | Value::Object(m) => m.values().for_each(|i| unknowns(i, out)),
        _ => {}
    }
}

// ---------------------------------------------------------------------------------------------------------------
// hand-made inputs
// ---------------------------------------------------------------------------------------------------------------

/// What go-cty and the codec make of a hand-made input.
enum Verdict {
    /// go-cty refuses it (or panics); so does the codec.
    Refused,
    /// go-cty accepts it; the codec reads it as it reads go-cty's re-encoding.
    Read,
    /// go-cty accepts it and its re-encoding reads as this value (a normalisation of cty's).
    ReadAs(Value),
    /// go-cty accepts it, the codec refuses it, for the reason given.
    Stricter(&'static str),
    /// go-cty misreads it (the reason given); the codec reads it as written.
    GoMisreads(&'static str),
    /// go-cty panics on it though it writes such bytes itself (the reason given); the codec reads it.
    GoPanics(&'static str),
}

/// An unknown with refinement payload `payload` (extension 12).
fn ext12(payload: &[u8]) -> Vec<u8> {
    let mut out = match payload.len() {
        n if n < 256 => vec![0xc7, n as u8],
        n => vec![0xc8, (n >> 8) as u8, n as u8],
    };
    out.push(12);
    out.extend_from_slice(payload);
    out
}

/// A `dynamic` value `[type JSON, value]`.
fn dynamic(type_json: &str, value: &[u8]) -> Vec<u8> {
    let mut out = vec![0x92, 0xc4, type_json.len() as u8];
    out.extend_from_slice(type_json.as_bytes());
    out.extend_from_slice(value);
    out
}

/// Hand-made inputs, each with what go-cty and the codec make of it.
fn hand_made() -> Vec<(&'static str, Type, Vec<u8>, Verdict)> {
    let mut all = hand_made_unknowns();
    all.extend(hand_made_values());
    all
}

/// Hand-made unknown values (extensions, refinements) and NaNs, each with what go-cty and the codec make of it.
fn hand_made_unknowns() -> Vec<(&'static str, Type, Vec<u8>, Verdict)> {
    use Verdict::*;
    let list = Type::list(Type::String);
    let oversize = {
        let mut p = vec![0x81, 7, 0xc5, 0x04, 0x10];
        p.resize(5 + 0x410, b'x');
        p
    };
    vec![
        (
            "NaN float64",
            Type::Number,
            vec![0xcb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 1],
            Refused,
        ),
        (
            "NaN float32",
            Type::Number,
            vec![0xca, 0x7f, 0xc0, 0, 0],
            Refused,
        ),
        (
            "extension 3 with a 2-byte payload",
            Type::Bool,
            vec![0xd5, 3, 1, 2],
            Refused,
        ),
        (
            "extension 3 holding a refinement map",
            Type::String,
            vec![0xc7, 3, 3, 0x81, 1, 0xc2],
            Refused,
        ),
        (
            "extension 0 with a 4-byte payload",
            Type::String,
            vec![0xd6, 0, 1, 2, 3, 4],
            Refused,
        ),
        (
            "extension 5 with a 1-byte payload is a plain unknown",
            Type::String,
            vec![0xd4, 5, 9],
            Read,
        ),
        (
            "empty extension 12 is a plain unknown",
            Type::Number,
            vec![0xc7, 0, 12],
            Read,
        ),
        (
            "refinements that are not a map, dynamic",
            Type::Dynamic,
            ext12(&[1, 2]),
            Refused,
        ),
        (
            "refinements that are not a map",
            Type::String,
            ext12(&[1, 2]),
            Refused,
        ),
        (
            "oversize refinements, dynamic",
            Type::Dynamic,
            ext12(&oversize),
            Refused,
        ),
        (
            "refinements of a dynamic value are dropped",
            Type::Dynamic,
            ext12(&[0x81, 1, 0xc2]),
            Read,
        ),
        (
            "refined as null is null",
            Type::String,
            ext12(&[0x81, 1, 0xc3]),
            Read,
        ),
        (
            "refined as null, with a prefix",
            Type::String,
            ext12(&[0x82, 1, 0xc3, 2, 0xa1, b'p']),
            Read,
        ),
        (
            "not null, then null",
            Type::String,
            ext12(&[0x82, 1, 0xc2, 1, 0xc3]),
            Refused,
        ),
        (
            "null, then not null",
            Type::Bool,
            ext12(&[0x82, 1, 0xc3, 1, 0xc2]),
            Refused,
        ),
        (
            "nullness not a bool",
            Type::Bool,
            ext12(&[0x81, 1, 0x01]),
            Refused,
        ),
        (
            "length bounds crossed",
            list.clone(),
            ext12(&[0x82, 5, 3, 6, 2]),
            Refused,
        ),
        (
            "number bounds crossed",
            Type::Number,
            ext12(&[0x82, 3, 0x92, 5, 0xc3, 4, 0x92, 1, 0xc3]),
            Refused,
        ),
        (
            "number bounds equal, one exclusive",
            Type::Number,
            ext12(&[0x82, 3, 0x92, 5, 0xc3, 4, 0x92, 5, 0xc2]),
            Refused,
        ),
        (
            "number bounds equal, both exclusive",
            Type::Number,
            ext12(&[0x82, 3, 0x92, 5, 0xc2, 4, 0x92, 5, 0xc2]),
            Read,
        ),
        (
            "not null, number bounds equal and inclusive: the number",
            Type::Number,
            ext12(&[0x83, 1, 0xc2, 3, 0x92, 5, 0xc3, 4, 0x92, 5, 0xc3]),
            Read,
        ),
        (
            "a tighter lower length first",
            list.clone(),
            ext12(&[0x82, 5, 3, 5, 1]),
            Read,
        ),
        (
            "a tighter upper length first",
            list.clone(),
            ext12(&[0x82, 6, 2, 6, 5]),
            Read,
        ),
        (
            "a looser lower length first",
            list.clone(),
            ext12(&[0x82, 5, 1, 5, 3]),
            Read,
        ),
        (
            "a tighter number bound first",
            Type::Number,
            ext12(&[0x82, 3, 0x92, 5, 0xc3, 3, 0x92, 1, 0xc3]),
            Read,
        ),
        (
            "an inclusive bound after an exclusive one at the same number",
            Type::Number,
            ext12(&[0x82, 4, 0x92, 5, 0xc2, 4, 0x92, 5, 0xc3]),
            Read,
        ),
        (
            "a longer prefix second",
            Type::String,
            ext12(&[0x82, 2, 0xa1, b'a', 2, 0xa2, b'a', b'b']),
            Read,
        ),
        (
            "a shorter prefix second",
            Type::String,
            ext12(&[0x82, 2, 0xa2, b'a', b'b', 2, 0xa1, b'a']),
            Read,
        ),
        (
            "inconsistent prefixes",
            Type::String,
            ext12(&[0x82, 2, 0xa1, b'a', 2, 0xa1, b'b']),
            Refused,
        ),
        (
            "prefix not UTF-8",
            Type::String,
            ext12(&[0x81, 2, 0xa1, 0xff]),
            Refused,
        ),
        (
            "prefix on a number",
            Type::Number,
            ext12(&[0x81, 2, 0xa1, b'a']),
            Refused,
        ),
        (
            "length on a string",
            Type::String,
            ext12(&[0x81, 5, 1]),
            Refused,
        ),
        (
            "number bound on a list",
            list.clone(),
            ext12(&[0x81, 3, 0x92, 1, 0xc3]),
            Refused,
        ),
        (
            "number bound not a pair",
            Type::Number,
            ext12(&[0x81, 3, 1]),
            Refused,
        ),
        (
            "a key that is text",
            Type::String,
            ext12(&[0x81, 0xa1, b'1', 0xc2]),
            Refused,
        ),
        (
            "a key that is nil",
            Type::String,
            ext12(&[0x81, 0xc0, 0xc2]),
            Stricter("a key is an integer; go-cty reads nil as key 0, which it does not know"),
        ),
        (
            "bytes after the refinements",
            list.clone(),
            ext12(&[0x81, 5, 2, 0xc1, 0xc1]),
            Read,
        ),
        (
            "an unknown key alone",
            list.clone(),
            ext12(&[0x81, 7, 2]),
            Read,
        ),
        (
            "an unknown key before a known one",
            list.clone(),
            ext12(&[0x82, 7, 9, 5, 2]),
            GoMisreads(
                "go-cty skips an unknown key but not its value, which it reads as the next key; the codec skips \
                 both, as go-cty's comment intends (keys it does not know are for later versions)",
            ),
        ),
        (
            "a length bound that is a float",
            list.clone(),
            ext12(&[0x81, 5, 0xcb, 0x40, 0, 0, 0, 0, 0, 0, 0]),
            Refused,
        ),
        (
            "a negative lower length",
            list.clone(),
            ext12(&[0x81, 5, 0xff]),
            Stricter("a length is never negative; go-cty keeps its own bound of 0 instead"),
        ),
        (
            "a negative upper length",
            list.clone(),
            ext12(&[0x81, 6, 0xff]),
            Refused,
        ),
    ]
}

/// Hand-made values of every kind but unknown, each with what go-cty and the codec make of it.
fn hand_made_values() -> Vec<(&'static str, Type, Vec<u8>, Verdict)> {
    use Verdict::*;
    let list = Type::list(Type::String);
    let obj = Type::object([("a", Type::String), ("b", Type::Bool)]);
    vec![
        (
            "an object missing an attribute",
            obj.clone(),
            vec![0x81, 0xa1, b'a', 0xc0],
            Refused,
        ),
        (
            "an object with an unknown attribute",
            obj.clone(),
            vec![0x82, 0xa1, b'a', 0xc0, 0xa1, b'c', 0xc0],
            Refused,
        ),
        (
            "an object with an attribute twice",
            obj.clone(),
            vec![0x82, 0xa1, b'a', 0xc0, 0xa1, b'a', 0xc0],
            Stricter(
                "go-cty reads an object without `b`, a value of another type (it cannot write it back)",
            ),
        ),
        (
            "an empty map for an object",
            obj.clone(),
            vec![0x80],
            Stricter(
                "go-cty reads the empty object, a value of another type (it cannot write it back)",
            ),
        ),
        (
            "a tuple too long",
            Type::tuple([Type::Bool]),
            vec![0x92, 0xc3, 0xc3],
            Refused,
        ),
        (
            "a list of objects with a dynamic attribute: a null element, and one whose attribute is a string",
            Type::list(Type::object([("b", Type::Dynamic)])),
            [
                &[0x92, 0xc0, 0x81, 0xa1, b'b'][..],
                &dynamic("\"string\"", &[0xa1, b'x']),
            ]
            .concat(),
            GoPanics(
                "cty writes a null element of type object({b=string}) so: its decoder types it object({b=dynamic}) \
                 and `cty.ListVal` panics on the two types (the encoder refuses such a value)",
            ),
        ),
        (
            "an empty tuple for a longer one",
            Type::tuple([Type::Bool]),
            vec![0x90],
            Stricter("go-cty reads any empty array as the empty tuple, a value of another type"),
        ),
        (
            "a dynamic value of three elements",
            Type::Dynamic,
            vec![0x93, 0xc0, 0xc0, 0xc0],
            Refused,
        ),
        (
            "a dynamic value with a bad type",
            Type::Dynamic,
            dynamic("\"strin\"", &[0xc0]),
            Refused,
        ),
        (
            "a dynamic value with its type as text",
            Type::Dynamic,
            {
                let mut b = dynamic("\"string\"", &[0xa1, b'x']);
                b[1] = 0xa8;
                b.remove(2);
                b
            },
            Read,
        ),
        (
            "a number as bad text",
            Type::Number,
            vec![0xa2, b'1', b'x'],
            Refused,
        ),
        ("a number as empty text", Type::Number, vec![0xa0], Refused),
        (
            "a number past u64",
            Type::Number,
            vec![0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
            Read,
        ),
        (
            "a number as the text Inf",
            Type::Number,
            vec![0xa3, b'I', b'n', b'f'],
            Stricter("cty writes infinities as floats; the codec reads decimal text only"),
        ),
        (
            "a number as the text +1",
            Type::Number,
            vec![0xa2, b'+', b'1'],
            Stricter("cty writes numbers with `big.Float.Text('f', -1)`: no plus sign"),
        ),
        (
            "a number as the text .5",
            Type::Number,
            vec![0xa2, b'.', b'5'],
            Stricter("cty writes numbers with `big.Float.Text('f', -1)`: a digit before the point"),
        ),
        ("a number as a bool", Type::Number, vec![0xc3], Refused),
        ("a bool as a number", Type::Bool, vec![0x01], Refused),
        (
            "a string not UTF-8",
            Type::String,
            vec![0xa2, b'o', 0xff],
            Stricter(
                "go-cty does not check; a Terraform string is always UTF-8, and a Rust one must be",
            ),
        ),
        ("a string as a number", Type::String, vec![0x01], Refused),
        (
            "a string not in NFC",
            Type::String,
            vec![0xa3, b'e', 0xcc, 0x81],
            ReadAs(Value::string("\u{e9}")),
        ),
        ("a list as a map", list.clone(), vec![0x80], Refused),
        (
            "a map as a list",
            Type::map(Type::Bool),
            vec![0x90],
            Refused,
        ),
        ("truncated string", Type::String, vec![0xa3, b'a'], Refused),
        (
            "truncated array",
            list.clone(),
            vec![0x92, 0xa1, b'a'],
            Refused,
        ),
        (
            "truncated extension",
            Type::String,
            vec![0xc7, 5, 12, 0x81],
            Refused,
        ),
        ("marker 0xc1", Type::String, vec![0xc1], Refused),
        (
            "bytes after the value",
            Type::Bool,
            vec![0xc3, 0xc3],
            Stricter("a DynamicValue is one value; go-cty ignores what follows it"),
        ),
    ]
}

/// What the codec makes of go-cty's re-encoding of a case it accepted.
fn reread(answer: &Answer, ty: &Type) -> Result<Value, String> {
    let hex = answer
        .reencoded
        .as_deref()
        .ok_or_else(|| format!("go-cty did not re-encode: {:?}", answer.reencode_error))?;
    decode(&unhex(hex), ty)
        .map_err(|e| format!("the codec refuses go-cty's re-encoding {hex}: {e}"))
}

/// Where the codec's reading of a hand-made input disagrees with go-cty's or with its verdict.
fn hand_made_difference(ty: &Type, bytes: &[u8], verdict: &Verdict, go: &Answer) -> Option<String> {
    let ours = decode(bytes, ty);
    let go_refuses = go.error.is_some();
    match verdict {
        Verdict::Refused if !go_refuses => Some(format!("go-cty accepts it now: {go:?}")),
        Verdict::Refused => ours.as_ref().ok().map(|v| {
            let how = if go.panicked { "panics" } else { "refuses it" };
            format!("go-cty {how}, the codec accepts it as {:?}", v.reveal())
        }),
        Verdict::GoPanics(why) if !go.panicked => {
            Some(format!("go-cty does not panic now, though {why}"))
        }
        Verdict::GoPanics(_) => ours.err().map(|e| format!("the codec refuses it: {e}")),
        _ if go_refuses => Some(format!("go-cty refuses it: {go:?}")),
        Verdict::Stricter(why) => ours
            .as_ref()
            .ok()
            .map(|v| format!("the codec accepts it as {:?}, though {why}", v.reveal())),
        Verdict::Read | Verdict::ReadAs(_) | Verdict::GoMisreads(_) => {
            let expect = match (verdict, reread(go, ty)) {
                (Verdict::ReadAs(v), Ok(theirs)) => same(v, &theirs).map(|()| v.clone()),
                (_, theirs) => theirs,
            };
            match (ours, expect) {
                (Err(e), _) => Some(format!("the codec refuses it: {e}")),
                (_, Err(e)) => Some(e),
                (Ok(ours), Ok(theirs)) => {
                    let equal = same(&ours, &theirs);
                    match (verdict, equal) {
                        (Verdict::GoMisreads(why), Ok(())) => Some(format!(
                            "go-cty reads it as the codec does now, though {why}"
                        )),
                        (Verdict::GoMisreads(_), Err(_)) => None,
                        (Verdict::ReadAs(_), Ok(())) => {
                            Some("the codec normalises it as cty does now".into())
                        }
                        (Verdict::ReadAs(_), Err(_)) => None,
                        (_, r) => r.err(),
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------------------------
// the tests
// ---------------------------------------------------------------------------------------------------------------

/// The seeded corpus: `n` (type, value) pairs, types up to four deep.
fn corpus(n: usize) -> Vec<(Type, Value)> {
    let mut g = Gen {
        rng: Rng(0x00c7_7e57_0000_0001),
    };
    (0..n)
        .map(|_| {
            let ty = g.ty(4, true);
            let value = g.value(&ty, 4, true);
            (ty, value)
        })
        .collect()
}

/// Where go-cty's answer for `value` of `ty`, encoded by the codec as `bytes`, breaks (a) or (b).
fn corpus_difference(ty: &Type, value: &Value, go: &Answer) -> Option<String> {
    if let Some(e) = &go.error {
        return Some(format!("(a) go-cty refuses the codec's encoding: {e}"));
    }
    let expected = cty_view(value, ty, None);
    let theirs = match reread(go, ty) {
        Ok(v) => v,
        Err(e) => return Some(format!("(b) {e}")),
    };
    if let Err(e) = same(&expected, &theirs) {
        return Some(format!("(b) {e}"));
    }
    if go.wholly_known != Some(expected.is_wholly_known()) {
        return Some(format!(
            "(a) go-cty sees wholly_known {:?}",
            go.wholly_known
        ));
    }
    let mut ours = Vec::new();
    unknowns(&expected, &mut ours);
    let mut reported: Vec<&GoUnknown> = go.unknowns.iter().collect();
    let mut ours: Vec<&GoUnknown> = ours.iter().collect();
    ours.sort();
    reported.sort();
    (ours != reported)
        .then(|| format!("(a) go-cty reads other refinements: {reported:?}, not {ours:?}"))
}

/// Counts of what the corpus reaches, so that a change of the generator cannot quietly stop covering a kind.
fn reaches(cases: &[(Type, Value)]) -> BTreeMap<&'static str, usize> {
    fn walk(v: &Value, ty: &Type, seen: &mut BTreeMap<&'static str, usize>) {
        let mut count = |k| *seen.entry(k).or_default() += 1;
        match v {
            Value::Unknown(r) if r.is_empty() => count("plain unknowns"),
            Value::Unknown(r) => {
                count("refined unknowns");
                if r.string_prefix.as_ref().is_some_and(|p| p.len() > 256) {
                    count("prefixes over 256 bytes");
                }
                if r.string_prefix.as_ref().is_some_and(|p| !p.is_ascii()) {
                    count("multi-byte prefixes");
                }
                if r.number_lower.is_some() || r.number_upper.is_some() {
                    count("number bounds");
                }
                if r.length_upper.is_some() {
                    count("length bounds");
                }
                if collapse(r, ty).is_some() {
                    count("unknowns cty makes known");
                }
            }
            Value::Number(Number::Big(s)) if s.len() > CTY_DIGITS => count("numbers past 512 bits"),
            Value::Number(Number::Big(_)) => count("numbers as decimal text"),
            Value::Number(Number::Float(x)) if !x.is_finite() => count("infinities"),
            Value::Null => count("nulls"),
            _ => {}
        }
        let ty = match (v, ty) {
            (Value::Null | Value::Unknown(_), _) => return,
            (_, Type::Dynamic) => {
                count("dynamic values");
                &infer_type(v).expect("conforming")
            }
            _ => ty,
        };
        match (v, ty) {
            (Value::List(i), Type::List(e)) | (Value::Set(i), Type::Set(e)) => {
                for v in i {
                    walk(v, e, seen);
                }
            }
            (Value::Map(m), Type::Map(e)) => m.values().for_each(|v| walk(v, e, seen)),
            (Value::Tuple(i), Type::Tuple(ts)) => {
                i.iter().zip(ts).for_each(|(v, t)| walk(v, t, seen))
            }
            (Value::Object(m), Type::Object { attributes, .. }) => attributes
                .iter()
                .for_each(|(k, t)| walk(m.get(k).unwrap_or(&Value::Null), t, seen)),
            _ => {}
        }
    }
    let mut seen = BTreeMap::new();
    for (ty, v) in cases {
        walk(v, ty, &mut seen);
    }
    seen
}

#[test]
fn codec_agrees_with_go_cty() {
    let Some(version) = needed(
        go(),
        "`go` on PATH (scripts/testenv build builds testenv/oracles/gocty)",
    ) else {
        return;
    };
    let exe = oracle();
    let mut cases = corpus(6000);
    // Values go-cty cannot read back (it panics on its own encoding of them; [`hand_made`] has one) are refused by
    // the encoder, naming why: a collection whose element type has dynamic parts, holding a null, unknown or empty
    // element beside one whose dynamic parts have a type.
    let total = cases.len();
    let mut refused = 0;
    cases.retain(|(ty, v)| match encode(v, ty) {
        Ok(_) => true,
        Err(e)
            if e.message
                .contains("would be of different types for Terraform") =>
        {
            refused += 1;
            false
        }
        Err(e) => panic!("encoding {:?} as {ty}: {e}", v.reveal()),
    });
    assert!(refused * 10 < total, "{refused} of {total} values refused");
    let encoded: Vec<(Type, Vec<u8>)> = cases
        .iter()
        .map(|(ty, v)| (ty.clone(), encode(v, ty).expect("encoded above")))
        .collect();
    let answers = ask(&exe, &encoded);
    let differences: Vec<String> = cases
        .iter()
        .zip(&encoded)
        .zip(&answers)
        .filter_map(|(((ty, v), (_, bytes)), go)| {
            corpus_difference(ty, v, go)
                .map(|d| format!("{ty} {:?} ({}): {d}", v.reveal(), hex(bytes)))
        })
        .collect();
    assert!(
        differences.is_empty(),
        "{} of {} cases differ with go-cty ({version}):\n{}",
        differences.len(),
        cases.len(),
        differences
            .iter()
            .take(30)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    let seen = reaches(&cases);
    eprintln!(
        "{total} cases: {refused} refused by the encoder, go-cty agrees on the {}; the corpus reaches {seen:?}",
        cases.len()
    );
    assert_reaches(&seen);
}

/// Each kind of case the corpus is for is in it 20 times at least.
fn assert_reaches(seen: &BTreeMap<&'static str, usize>) {
    for kind in [
        "plain unknowns",
        "refined unknowns",
        "prefixes over 256 bytes",
        "multi-byte prefixes",
        "number bounds",
        "length bounds",
        "unknowns cty makes known",
        "numbers past 512 bits",
        "numbers as decimal text",
        "infinities",
        "nulls",
        "dynamic values",
    ] {
        assert!(
            seen.get(kind).copied().unwrap_or(0) >= 20,
            "the corpus reaches too few {kind}: {seen:?}"
        );
    }
}

#[test]
fn hand_made_inputs_read_as_go_cty_reads_them() {
    let Some(version) = needed(
        go(),
        "`go` on PATH (scripts/testenv build builds testenv/oracles/gocty)",
    ) else {
        return;
    };
    let exe = oracle();
    let table = hand_made();
    let asked: Vec<(Type, Vec<u8>)> = table
        .iter()
        .map(|(_, ty, b, _)| (ty.clone(), b.clone()))
        .collect();
    let answers = ask(&exe, &asked);
    let differences: Vec<String> = table
        .iter()
        .zip(&answers)
        .filter_map(|((name, ty, bytes, verdict), go)| {
            hand_made_difference(ty, bytes, verdict, go)
                .map(|d| format!("{name} ({ty}, {}): {d}", hex(bytes)))
        })
        .collect();
    assert!(
        differences.is_empty(),
        "{} of {} hand-made inputs are not read as the table says ({version}):\n{}",
        differences.len(),
        table.len(),
        differences.join("\n")
    );
}
