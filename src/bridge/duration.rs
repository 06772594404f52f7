//! Go-style durations (`90s`, `1h30m`, `500ms`, `1.5h`), as Kubernetes and Terraform users write them.
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
        /// Byte offset in the trimmed input.
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

/// Parses a Go duration string. Negative durations are rejected; `0` is allowed.
pub fn parse_duration(input: &str) -> Result<Duration, DurationError> {
    let s = input.trim();
    if s.is_empty() {
        return Err(DurationError::Empty);
    }
    if s.starts_with('-') {
        return Err(DurationError::Negative {
            input: input.into(),
        });
    }
    let body = s.strip_prefix('+').unwrap_or(s);
    if body == "0" {
        return Ok(Duration::ZERO);
    }
    let too_large = || DurationError::TooLarge {
        input: input.into(),
    };
    let mut total: u128 = 0;
    let mut rest = body;
    while !rest.is_empty() {
        let at = s.len() - rest.len();
        let int_len = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let (int_part, after) = rest.split_at(int_len);
        let (frac_part, after) = match after.strip_prefix('.') {
            Some(a) => {
                let n = a.find(|c: char| !c.is_ascii_digit()).unwrap_or(a.len());
                a.split_at(n)
            }
            None => ("", after),
        };
        if int_part.is_empty() && frac_part.is_empty() {
            return Err(DurationError::ExpectedNumber {
                input: input.into(),
                at,
            });
        }
        let unit_len = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_len);
        let unit_nanos: u128 = match unit {
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
        // Integer part: digit by digit, so that no digit string is too long to parse.
        let mut whole: u128 = 0;
        for d in int_part.bytes() {
            whole = whole
                .checked_mul(10)
                .and_then(|w| w.checked_add(u128::from(d - b'0')))
                .filter(|w| *w <= MAX_NANOS)
                .ok_or_else(too_large)?;
        }
        // Fraction: the first 18 digits are exact to well below a nanosecond for every unit.
        let (mut frac, mut scale) = (0u128, 1u128);
        for d in frac_part.bytes().take(18) {
            frac = frac * 10 + u128::from(d - b'0');
            scale *= 10;
        }
        let part = whole
            .checked_mul(unit_nanos)
            .and_then(|w| w.checked_add(frac * unit_nanos / scale))
            .ok_or_else(too_large)?;
        total = total
            .checked_add(part)
            .filter(|t| *t <= MAX_NANOS)
            .ok_or_else(too_large)?;
        rest = after;
    }
    let nanos = u64::try_from(total).map_err(|_| too_large())?;
    Ok(Duration::from_nanos(nanos))
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
        assert_eq!(parse_duration(" +2m ").unwrap(), Duration::from_secs(120));
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
        assert_eq!(parse_duration("   ").unwrap_err(), DurationError::Empty);
        for (bad, expected) in [
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
}
