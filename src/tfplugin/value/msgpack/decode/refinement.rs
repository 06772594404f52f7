//! Unknown values: msgpack extensions, and the refinements extension 12 carries, read as go-cty reads them
//! (`cty/msgpack/unknown.go` and cty's `RefinementBuilder`; `tests/plugin/cty_oracle.rs` compares).

use std::cmp::Ordering;

use super::number::compare_numbers;
use super::{DecodeError, Decoder, Fault};
use crate::tfplugin::value::msgpack::{EXT_UNKNOWN_REFINED, MAX_REFINEMENT_LEN};
use crate::tfplugin::value::{Number, Refinements, Type, Value};

const MALFORMED: fn(&'static str) -> DecodeError = DecodeError::MalformedRefinement;

/// Refinements as they are read: `null` is cty's three-state nullness (`None`: not refined).
#[derive(Default)]
struct Reading {
    null: Option<bool>,
    r: Refinements,
}

impl<'a> Decoder<'a> {
    /// The unknown value extension `ext` with `payload` stands for, at type `ty`. As go-cty: a payload of at most
    /// one byte is a plain unknown whatever the extension; a longer one must be extension 12 holding a map of
    /// refinements (at most [`MAX_REFINEMENT_LEN`] bytes), whose entries a `dynamic` value ignores. Refinements
    /// that say the value is null make it null, and a not-null unknown whose bounds leave one value is that value
    /// ([`known_from`]).
    pub(super) fn unknown(&self, ext: i8, payload: &'a [u8], ty: &Type) -> Result<Value, Fault> {
        if payload.len() <= 1 {
            return Ok(Value::unknown());
        }
        if ext != EXT_UNKNOWN_REFINED {
            return Err(self.fail(DecodeError::UnsupportedExtension(ext)));
        }
        if payload.len() > MAX_REFINEMENT_LEN {
            return Err(self.fail(DecodeError::OversizeRefinement));
        }
        let mut d = Decoder::new(payload, self.depth, &[]);
        let n = d.map_len()?;
        if *ty == Type::Dynamic {
            return Ok(Value::unknown());
        }
        let mut reading = Reading::default();
        for _ in 0..n {
            let key = rmp::decode::read_int::<i64, _>(&mut d.rd)
                .map_err(|_| d.fail(MALFORMED("refinement key must be an integer")))?;
            d.refinement(key, ty, &mut reading)?;
        }
        // Bytes after the map are ignored, as go-cty does (kept for later use).
        match reading.null {
            Some(true) => Ok(Value::Null),
            Some(false) => {
                reading.r.not_null = true;
                known_from(&reading.r, ty).map_err(|e| self.fail(e))
            }
            None => Ok(Value::Unknown(Box::new(reading.r))),
        }
    }

    /// Reads the value of refinement `key` into `reading`. A key given twice keeps the tighter refinement, and
    /// refinements that contradict each other are refused (go-cty panics on them).
    fn refinement(&mut self, key: i64, ty: &Type, reading: &mut Reading) -> Result<(), Fault> {
        let for_type = |refinement, needs| DecodeError::RefinementForType { refinement, needs };
        let r = &mut reading.r;
        match key {
            1 => {
                let is_null = rmp::decode::read_bool(&mut self.rd)
                    .map_err(|e| self.read_err(e, MALFORMED("null refinement must be a bool")))?;
                if reading.null == Some(!is_null) {
                    return Err(self.fail(MALFORMED("null refinements contradict each other")));
                }
                reading.null = Some(is_null);
            }
            2 => {
                if *ty != Type::String {
                    return Err(self.fail(for_type("string prefix", "string")));
                }
                let prefix = self.text("string prefix refinement")?;
                let old = r.string_prefix.as_deref().unwrap_or("");
                let common = old.len().min(prefix.len());
                if old.as_bytes()[..common] != prefix.as_bytes()[..common] {
                    return Err(self.fail(MALFORMED("string prefix refinements disagree")));
                }
                if prefix.len() > old.len() {
                    r.string_prefix = Some(prefix.to_owned());
                }
            }
            3 | 4 => {
                if *ty != Type::Number {
                    return Err(self.fail(for_type("number bound", "number")));
                }
                let bound = self.number_bound()?;
                let (slot, tighter) = match key {
                    3 => (&mut r.number_lower, Ordering::Greater),
                    _ => (&mut r.number_upper, Ordering::Less),
                };
                if replaces(slot.as_ref(), &bound, tighter) {
                    *slot = Some(bound);
                }
                if !consistent_bounds(r) {
                    return Err(self.fail(MALFORMED("number lower bound above upper bound")));
                }
            }
            5 | 6 => {
                if !matches!(ty, Type::List(_) | Type::Set(_) | Type::Map(_)) {
                    return Err(self.fail(for_type("length", "collection")));
                }
                let bound = self.length_bound()?;
                if key == 5 {
                    let lower = r.length_lower.unwrap_or(0).max(bound);
                    r.length_lower = Some(lower).filter(|&b| b > 0);
                } else {
                    // cty's largest int is its "no upper bound".
                    let upper = r.length_upper.map_or(bound, |old| old.min(bound));
                    r.length_upper = Some(upper).filter(|&b| b < i64::MAX as u64);
                }
                if r.length_upper
                    .is_some_and(|u| u < r.length_lower.unwrap_or(0))
                {
                    return Err(self.fail(MALFORMED("length lower bound above upper bound")));
                }
            }
            _ => self.skip()?,
        }
        Ok(())
    }

    /// A number bound: `[number, inclusive]`.
    fn number_bound(&mut self) -> Result<(Number, bool), Fault> {
        let shape = "number bound refinement must be a [number, bool] array";
        if self.array_len()? != 2 {
            return Err(self.fail(MALFORMED(shape)));
        }
        let bound = self.number()?;
        let inclusive =
            rmp::decode::read_bool(&mut self.rd).map_err(|e| self.read_err(e, MALFORMED(shape)))?;
        Ok((bound, inclusive))
    }

    /// A length bound: a non-negative msgpack integer.
    fn length_bound(&mut self) -> Result<u64, Fault> {
        let bound = rmp::decode::read_int::<i64, _>(&mut self.rd)
            .ok()
            .and_then(|i| u64::try_from(i).ok());
        bound.ok_or_else(|| {
            self.fail(MALFORMED(
                "length bound refinement must be a non-negative integer",
            ))
        })
    }
}

/// Whether `new` replaces the bound `old` (`tighter`: `Greater` for a lower bound, `Less` for an upper one): as
/// cty, when it is tighter, or as tight and not an inclusive bound replacing an exclusive one.
fn replaces(old: Option<&(Number, bool)>, new: &(Number, bool), tighter: Ordering) -> bool {
    let Some((old, old_inclusive)) = old else {
        return true;
    };
    match compare_numbers(&new.0, old) {
        Some(o) if o == tighter => true,
        Some(Ordering::Equal) => !new.1 || *old_inclusive,
        Some(_) => false,
        None => true,
    }
}

/// Whether the number bounds leave any room: a lower bound at most the upper one, below it if one of them is
/// exclusive and the other not (cty's `assertConsistentBounds`).
fn consistent_bounds(r: &Refinements) -> bool {
    let (Some((lo, lo_inclusive)), Some((hi, hi_inclusive))) = (&r.number_lower, &r.number_upper)
    else {
        return true;
    };
    match compare_numbers(lo, hi) {
        Some(Ordering::Greater) => false,
        Some(Ordering::Equal) => lo_inclusive == hi_inclusive,
        _ => true,
    }
}

/// A not-null unknown of type `ty` with refinements `r`, as cty's `RefinementBuilder.NewValue` makes it: a number
/// whose inclusive bounds are equal is that number; a collection whose length bounds are equal is empty when 0, a
/// list of that many plain unknowns, or a set of one plain unknown; anything else stays unknown. A known length
/// past [`MAX_REFINEMENT_LEN`] is refused rather than expanded (no sender writes one: cty expands it before).
fn known_from(r: &Refinements, ty: &Type) -> Result<Value, DecodeError> {
    let unknown = || Ok(Value::Unknown(Box::new(r.clone())));
    match ty {
        Type::Number => match (&r.number_lower, &r.number_upper) {
            (Some((lo, true)), Some((hi, true)))
                if compare_numbers(lo, hi) == Some(Ordering::Equal) =>
            {
                Ok(Value::Number(lo.clone()))
            }
            _ => unknown(),
        },
        Type::List(_) | Type::Set(_) | Type::Map(_) => {
            let lo = r.length_lower.unwrap_or(0);
            if r.length_upper != Some(lo) {
                return unknown();
            }
            match (ty, lo) {
                (Type::List(_), 0) => Ok(Value::List(Vec::new())),
                (Type::Set(_), 0) => Ok(Value::Set(Vec::new())),
                (Type::Map(_), 0) => Ok(Value::Map(Default::default())),
                (Type::Set(_), 1) => Ok(Value::Set(vec![Value::unknown()])),
                (Type::List(_), n) if n <= MAX_REFINEMENT_LEN as u64 => {
                    Ok(Value::List(vec![Value::unknown(); n as usize]))
                }
                (Type::List(_), _) => Err(MALFORMED("known list length too large to expand")),
                _ => unknown(),
            }
        }
        _ => unknown(),
    }
}
