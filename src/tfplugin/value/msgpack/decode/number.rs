//! Numbers: msgpack integers and floats, and the decimal strings cty writes for the others.

use std::cmp::Ordering;

use super::{DecodeError, Decoder, Fault};
use crate::tfplugin::value::Number;
use rmp::Marker;

impl<'a> Decoder<'a> {
    pub(super) fn number(&mut self) -> Result<Number, Fault> {
        let expected = || DecodeError::Expected("a number");
        match self.peek()? {
            Marker::U64 => {
                let u = rmp::decode::read_u64(&mut self.rd)
                    .map_err(|e| self.read_err(e, expected()))?;
                Ok(i64::try_from(u)
                    .map(Number::Int)
                    .unwrap_or_else(|_| Number::Big(u.to_string())))
            }
            Marker::F32 => {
                let x = rmp::decode::read_f32(&mut self.rd)
                    .map_err(|e| self.read_err(e, expected()))?;
                self.float(f64::from(x))
            }
            Marker::F64 => {
                let x = rmp::decode::read_f64(&mut self.rd)
                    .map_err(|e| self.read_err(e, expected()))?;
                self.float(x)
            }
            Marker::FixStr(_) | Marker::Str8 | Marker::Str16 | Marker::Str32 => {
                let s = self.text("number string")?;
                parse_decimal(s).ok_or_else(|| self.fail(DecodeError::InvalidNumber))
            }
            _ => rmp::decode::read_int::<i64, _>(&mut self.rd)
                .map(Number::Int)
                .map_err(|e| self.int_err(e)),
        }
    }

    fn float(&self, x: f64) -> Result<Number, Fault> {
        if x.is_nan() {
            return Err(self.fail(DecodeError::NaN));
        }
        Ok(normalize_float(x))
    }
}

/// Integral floats that fit in `i64` become `Int`, as cty stores them exactly.
pub(crate) fn normalize_float(x: f64) -> Number {
    if x.fract() == 0.0 && (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&x) {
        Number::Int(x as i64)
    } else {
        Number::Float(x)
    }
}

/// Parses decimal text (as cty writes numbers that fit neither `i64` nor `f64` exactly).
pub(crate) fn parse_decimal(s: &str) -> Option<Number> {
    if !is_decimal_syntax(s) {
        return None;
    }
    if let Ok(i) = s.parse::<i64>() {
        return Some(Number::Int(i));
    }
    Some(Number::Big(s.to_owned()))
}

/// `-?digits(.digits)?([eE][+-]?digits)?`
fn is_decimal_syntax(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if b.first() == Some(&b'-') {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i > start
    };
    if !digits(&mut i) {
        return false;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        if !digits(&mut i) {
            return false;
        }
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        if !digits(&mut i) {
            return false;
        }
    }
    i == b.len()
}

/// A number's exact value, for comparisons: an infinity, or `±0.DIGITS × 10^exp` (digits without leading or
/// trailing zeros; zero has none and is not negative).
#[derive(PartialEq)]
enum Exact {
    Infinite {
        negative: bool,
    },
    Finite {
        negative: bool,
        digits: String,
        exp: i64,
    },
}

impl Exact {
    fn of(n: &Number) -> Option<Exact> {
        let text = match n {
            Number::Int(i) => i.to_string(),
            Number::Float(x) if x.is_nan() => return None,
            Number::Float(x) if x.is_infinite() => {
                return Some(Exact::Infinite { negative: *x < 0.0 });
            }
            // Every digit of the binary value: Rust prints a float exactly when given the precision.
            Number::Float(x) => format!("{x:.1100}"),
            Number::Big(s) if is_decimal_syntax(s) => s.clone(),
            Number::Big(_) => return None,
        };
        let (negative, text) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text.as_str()),
        };
        let (mantissa, e) = match text.split_once(['e', 'E']) {
            Some((m, e)) => (m, e.parse::<i64>().ok()?),
            None => (text, 0),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let all = format!("{int}{frac}");
        let leading = all.len() - all.trim_start_matches('0').len();
        let digits = all.trim_matches('0').to_owned();
        if digits.is_empty() {
            return Some(Exact::Finite {
                negative: false,
                digits,
                exp: 0,
            });
        }
        let exp = (int.len() as i64 - leading as i64).checked_add(e)?;
        Some(Exact::Finite {
            negative,
            digits,
            exp,
        })
    }

    /// The order of positive finite magnitudes `(digits, exp)`, zero (no digits) first.
    fn magnitude_order(a: (&str, i64), b: (&str, i64)) -> Ordering {
        match (a.0.is_empty(), b.0.is_empty()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            _ => a.1.cmp(&b.1).then_with(|| a.0.cmp(b.0)),
        }
    }
}

/// The order of two numbers by their exact values; `None` when one is not a number (NaN, text that is not
/// decimal, an exponent past `i64`).
pub(crate) fn compare_numbers(a: &Number, b: &Number) -> Option<Ordering> {
    use Exact::*;
    Some(match (Exact::of(a)?, Exact::of(b)?) {
        (Infinite { negative: x }, Infinite { negative: y }) => y.cmp(&x),
        (Infinite { negative }, Finite { .. }) => {
            if negative {
                Ordering::Less
            } else {
                Ordering::Greater
            }
        }
        (Finite { .. }, Infinite { negative }) => {
            if negative {
                Ordering::Greater
            } else {
                Ordering::Less
            }
        }
        (
            Finite {
                negative: x_neg,
                digits: x,
                exp: x_exp,
            },
            Finite {
                negative: y_neg,
                digits: y,
                exp: y_exp,
            },
        ) => match (x_neg, y_neg) {
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
            (false, false) => Exact::magnitude_order((&x, x_exp), (&y, y_exp)),
            (true, true) => Exact::magnitude_order((&y, y_exp), (&x, x_exp)),
        },
    })
}
