//! Numbers: msgpack integers and floats, and the decimal strings cty writes for the others.

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
