//! Go-style durations (`90s`, `1h30m`, `500ms`, `1.5h`), as Kubernetes and Terraform users write them.
//!
//! [`parse_duration`] accepts exactly the strings Go's `time.ParseDuration` accepts (the values Sveltos and
//! Kubernetes read them with), with two deliberate refusals: a leading `-` (no setting here may be negative,
//! `-0` included), and sums of components past Go's maximum that Go lets wrap around (see
//! [`parse_duration`]). It is a port of Go's `time/format.go` (`ParseDuration`, `leadingInt`,
//! `leadingFraction`), including the `float64` step Go uses for fractions, so that `0.333333333333333333333h`
//! gives Go's nanosecond and not the exact one. Nothing is trimmed: `" 1h"` is refused, as Go refuses it. Go itself
//! is the judge: `tests/plugin/duration_oracle.rs` builds `testenv/oracles/goduration` (`time.ParseDuration` over
//! JSON) and compares its answers with this function's on twenty thousand generated inputs.
//!
//! Why not a crate: `jiff`, already a dependency, parses a "friendly" duration format that is not Go's. It
//! wants units in descending order, each at most once (`1s1s` and `1m1h` fail there), a fraction only on the
//! last unit (`1.5h30m` fails there), digits before the decimal point (`.5s`) and after it (`1.s`), and does not
//! know the Greek-mu `μs`; it also accepts what Go refuses (whitespace, `1 hour`, `2d`, `1,5s`, `ago`), which is
//! the mistake this parser exists to avoid: a value that passes here must not be refused by Sveltos later.
//! `humantime` has a grammar of its own too (whitespace-separated units, days and years). A crate porting Go's
//! function was not worth a dependency for the ninety lines below.
//!
//! Parsed in integer nanoseconds with checked arithmetic: any value beyond Go's own limit
//! (`2562047h47m16.854775807s`, the largest `time.Duration`) is an error, never a panic or a silent wrap.

use std::time::Duration;

/// The largest duration accepted, in nanoseconds (Go's `time.Duration` maximum).
pub const MAX_NANOS: u128 = i64::MAX as u128;

/// Why a duration string is invalid. Every variant quotes the operator's input (configuration, not secret).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    /// Nothing was given.
    #[error("empty duration (use e.g. \"30m\", \"1h30m\", \"90s\")")]
    Empty,
    /// A leading `-`.
    #[error("invalid duration {input:?}: negative durations are not allowed")]
    Negative {
        /// The duration as given.
        input: String,
    },
    /// A unit or the end came where a number was expected.
    #[error("invalid duration {input:?}: expected a number at byte {at}")]
    ExpectedNumber {
        /// The duration as given.
        input: String,
        /// Byte offset in the input.
        at: usize,
    },
    /// A number without a unit.
    #[error("invalid duration {input:?}: missing unit (ns, us, ms, s, m, h)")]
    MissingUnit {
        /// The duration as given.
        input: String,
    },
    /// A unit that is not one of `ns`, `us`, `µs`, `ms`, `s`, `m`, `h`.
    #[error("invalid duration {input:?}: unknown unit {unit:?} (ns, us, ms, s, m, h)")]
    UnknownUnit {
        /// The duration as given.
        input: String,
        /// The unit found.
        unit: String,
    },
    /// Larger than [`MAX_NANOS`].
    #[error("invalid duration {input:?}: larger than the maximum of 2562047h47m16.854775807s")]
    TooLarge {
        /// The duration as given.
        input: String,
    },
}

/// Parses a Go duration string: Go's `time.ParseDuration` grammar and values (`[+]?([0-9]*(\.[0-9]*)?unit)+` or
/// `0`, units `ns us µs μs ms s m h`), except that a leading `-` is refused ([`DurationError::Negative`]) and a sum
/// past [`MAX_NANOS`] is always [`DurationError::TooLarge`] (Go wraps a sum of two components of exactly 2^63 ns
/// round to zero and accepts it).
pub fn parse_duration(input: &str) -> Result<Duration, DurationError> {
    if input.is_empty() {
        return Err(DurationError::Empty);
    }
    if input.starts_with('-') {
        return Err(DurationError::Negative {
            input: input.into(),
        });
    }
    let body = input.strip_prefix('+').unwrap_or(input);
    if body == "0" {
        return Ok(Duration::ZERO);
    }
    if body.is_empty() {
        return Err(DurationError::ExpectedNumber {
            input: input.into(),
            at: input.len(),
        });
    }
    let mut total: u64 = 0;
    let mut rest = body;
    while !rest.is_empty() {
        let (nanos, after) = component(input, rest)?;
        total = total
            .checked_add(nanos)
            .filter(|t| u128::from(*t) <= MAX_NANOS)
            .ok_or_else(|| too_large(input))?;
        rest = after;
    }
    Ok(Duration::from_nanos(total))
}

/// 2^63, the bound Go checks a component against before the sum is checked against [`MAX_NANOS`].
const TWO_POW_63: u64 = 1 << 63;

fn too_large(input: &str) -> DurationError {
    DurationError::TooLarge {
        input: input.into(),
    }
}

/// One `number unit` component at the start of `s` (a suffix of `input`): its nanoseconds and what follows it.
fn component<'a>(input: &str, s: &'a str) -> Result<(u64, &'a str), DurationError> {
    let at = input.len() - s.len();
    let expected_number = || DurationError::ExpectedNumber {
        input: input.into(),
        at,
    };
    if !s.starts_with(|c: char| c == '.' || c.is_ascii_digit()) {
        return Err(expected_number());
    }
    let int_len = leading_digits(s);
    let whole = leading_int(&s[..int_len]).ok_or_else(|| too_large(input))?;
    let mut rest = &s[int_len..];
    let (mut frac, mut scale, mut has_frac) = (0, 1.0, false);
    if let Some(after_dot) = rest.strip_prefix('.') {
        let n = leading_digits(after_dot);
        (frac, scale) = leading_fraction(&after_dot[..n]);
        has_frac = n > 0;
        rest = &after_dot[n..];
    }
    if int_len == 0 && !has_frac {
        return Err(expected_number());
    }
    let unit_len = rest
        .find(|c: char| c == '.' || c.is_ascii_digit())
        .unwrap_or(rest.len());
    let (unit, rest) = rest.split_at(unit_len);
    let unit_nanos: u64 = match unit {
        "ns" => 1,
        "us" | "µs" | "μs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        "" => {
            return Err(DurationError::MissingUnit {
                input: input.into(),
            });
        }
        u => {
            return Err(DurationError::UnknownUnit {
                input: input.into(),
                unit: u.into(),
            });
        }
    };
    if whole > TWO_POW_63 / unit_nanos {
        return Err(too_large(input));
    }
    let mut nanos = whole * unit_nanos;
    if frac > 0 {
        // Go's own computation, float64 and truncation included (at most 3.6e12 ns are added: no overflow).
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        let part = (frac as f64 * (unit_nanos as f64 / scale)) as u64;
        nanos = nanos
            .checked_add(part)
            .filter(|n| *n <= TWO_POW_63)
            .ok_or_else(|| too_large(input))?;
    }
    Ok((nanos, rest))
}

/// Length of the run of ASCII digits at the start of `s`.
fn leading_digits(s: &str) -> usize {
    s.bytes().take_while(u8::is_ascii_digit).count()
}

/// The value of a run of digits, or `None` past 2^63 (Go's `leadingInt`, which fails there).
fn leading_int(digits: &str) -> Option<u64> {
    let mut x: u64 = 0;
    for d in digits.bytes() {
        if x > TWO_POW_63 / 10 {
            return None;
        }
        x = x * 10 + u64::from(d - b'0');
        if x > TWO_POW_63 {
            return None;
        }
    }
    Some(x)
}

/// The digits after a decimal point as `(value, 10^digits used)`: Go's `leadingFraction`, which stops
/// accumulating (and ignores the remaining digits) once the value would pass 2^63.
fn leading_fraction(digits: &str) -> (u64, f64) {
    let (mut x, mut scale): (u64, f64) = (0, 1.0);
    for d in digits.bytes() {
        if x > (TWO_POW_63 - 1) / 10 {
            break;
        }
        let y = x * 10 + u64::from(d - b'0');
        if y > TWO_POW_63 {
            break;
        }
        x = y;
        scale *= 10.0;
    }
    (x, scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_go_durations() {
        assert_eq!(parse_duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("1.5h").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("0").unwrap(), Duration::ZERO);
        assert_eq!(parse_duration("+2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration(".5s").unwrap(), Duration::from_millis(500));
        assert_eq!(
            parse_duration("1µs1ns").unwrap(),
            Duration::from_nanos(1001)
        );
        assert_eq!(
            parse_duration("0.000000001s").unwrap(),
            Duration::from_nanos(1)
        );
        assert_eq!(
            parse_duration("2562047h47m16.854775807s").unwrap(),
            Duration::from_nanos(i64::MAX as u64)
        );
    }

    #[test]
    fn huge_values_are_errors_not_panics() {
        for huge in [
            "99999999999999999999h",
            "2562047h47m16.854775808s",
            "2562048h",
            "9223372036854775808ns",
            &format!("{}s", "9".repeat(10_000)),
            &"1000000h".repeat(10),
            "340282366920938463463374607431768211456ns",
        ] {
            let e = parse_duration(huge).unwrap_err();
            assert!(matches!(e, DurationError::TooLarge { .. }), "{huge}: {e:?}");
        }
    }

    #[test]
    fn empty_and_malformed_values_are_errors() {
        assert_eq!(parse_duration("").unwrap_err(), DurationError::Empty);
        for (bad, expected) in [
            ("   ", "expected a number at byte 0"),
            (" 1h", "expected a number at byte 0"),
            ("1h ", "unknown unit \"h \""),
            ("+", "expected a number at byte 1"),
            ("10", "missing unit"),
            ("5d", "unknown unit \"d\""),
            ("-1h", "negative"),
            ("h", "expected a number"),
            ("1h x", "unknown unit \"h x\""),
            (".s", "expected a number"),
            ("1..5s", "missing unit"),
            ("++1s", "expected a number"),
            ("1e3s", "unknown unit \"e\""),
            ("NaNs", "expected a number"),
            ("infh", "expected a number"),
        ] {
            let e = parse_duration(bad).unwrap_err();
            assert!(e.to_string().contains(expected), "{bad}: {e}");
        }
    }

    /// What Go's `time.ParseDuration` returns for each input, in nanoseconds (`None`: an error), and the Go that
    /// answered: `testenv/oracles/goduration/golden.json`, written by the program beside it. To regenerate it (or
    /// add an input: a row `["input", null]`, then rerun), in `testenv/oracles/goduration`:
    /// `go run . -golden golden.json`. Go is not needed to run this test; `tests/plugin/duration_oracle.rs`
    /// checks the file against the Go at hand, and `parse_duration` against Go on a generated corpus.
    fn go_parse_duration() -> Vec<(String, Option<i64>)> {
        #[derive(serde::Deserialize)]
        struct Golden {
            rows: Vec<(String, Option<i64>)>,
        }
        let text = include_str!("../../testenv/oracles/goduration/golden.json");
        let golden: Golden = serde_json::from_str(text).expect("the golden table");
        golden.rows
    }

    /// The only Go-accepted input refused for a reason other than its sign: Go's sum of two components of 2^63 ns
    /// wraps round to 0.
    const GO_WRAPS: &str = "9223372036854775808ns9223372036854775808ns";

    #[test]
    fn accepts_exactly_what_go_accepts_with_go_values() {
        let table = go_parse_duration();
        assert!(table.len() >= 90, "{} rows", table.len());
        for (input, go) in table {
            let input = input.as_str();
            let ours = parse_duration(input);
            match go {
                _ if input == GO_WRAPS => {
                    assert!(
                        matches!(ours, Err(DurationError::TooLarge { .. })),
                        "{input:?}: {ours:?}"
                    );
                }
                Some(_) if input.starts_with('-') => {
                    assert!(
                        matches!(ours, Err(DurationError::Negative { .. })),
                        "{input:?}: {ours:?}"
                    );
                }
                Some(nanos) => {
                    let nanos = u64::try_from(nanos).expect("a non-negative Go value");
                    assert_eq!(ours, Ok(Duration::from_nanos(nanos)), "{input:?}");
                }
                None => assert!(ours.is_err(), "{input:?} is refused by Go: {ours:?}"),
            }
        }
    }
}
