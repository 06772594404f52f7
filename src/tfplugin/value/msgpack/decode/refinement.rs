//! Refinements of unknown values (the payload of msgpack extension 12), checked against the value's type.

use super::{DecodeError, Decoder, Fault};
use crate::tfplugin::value::msgpack::MAX_REFINEMENT_LEN;
use crate::tfplugin::value::{Refinements, Type};
use rmp::decode::Bytes;

const MALFORMED: fn(&'static str) -> DecodeError = DecodeError::MalformedRefinement;

impl<'a> Decoder<'a> {
    /// Reads a refinement map (as cty does: keys that cannot apply to `ty` are errors, unknown keys are skipped).
    pub(super) fn refinements(&self, payload: &'a [u8], ty: &Type) -> Result<Refinements, Fault> {
        if payload.len() > MAX_REFINEMENT_LEN {
            return Err(self.fail(DecodeError::OversizeRefinement));
        }
        let mut d = Decoder {
            rd: Bytes::new(payload),
            depth: self.depth,
            unread: &[],
        };
        let mut r = Refinements::default();
        let n = d.map_len()?;
        for _ in 0..n {
            let key = d
                .number()?
                .as_i64()
                .ok_or_else(|| d.fail(MALFORMED("refinement key must be an integer")))?;
            d.refinement(key, ty, &mut r)?;
        }
        Ok(r)
    }

    /// Reads the value of refinement `key` into `r`.
    fn refinement(&mut self, key: i64, ty: &Type, r: &mut Refinements) -> Result<(), Fault> {
        let for_type = |refinement, needs| DecodeError::RefinementForType { refinement, needs };
        match key {
            1 => {
                let is_null = rmp::decode::read_bool(&mut self.rd)
                    .map_err(|e| self.read_err(e, MALFORMED("null refinement must be a bool")))?;
                if !is_null {
                    r.not_null = true;
                }
            }
            2 => {
                if *ty != Type::String {
                    return Err(self.fail(for_type("string prefix", "string")));
                }
                let prefix = self.text("string prefix refinement")?;
                r.string_prefix = Some(prefix.to_owned()).filter(|p| !p.is_empty());
            }
            3 | 4 => {
                if *ty != Type::Number {
                    return Err(self.fail(for_type("number bound", "number")));
                }
                let bound = Some(self.number_bound()?);
                if key == 3 {
                    r.number_lower = bound;
                } else {
                    r.number_upper = bound;
                }
            }
            5 | 6 => {
                if !matches!(ty, Type::List(_) | Type::Set(_) | Type::Map(_)) {
                    return Err(self.fail(for_type("length", "collection")));
                }
                let bound = self.length_bound()?;
                if key == 5 {
                    r.length_lower = Some(bound).filter(|&b| b > 0);
                } else {
                    r.length_upper = Some(bound);
                }
            }
            _ => self.skip()?,
        }
        Ok(())
    }

    /// A number bound: `[number, inclusive]`.
    fn number_bound(&mut self) -> Result<(crate::tfplugin::value::Number, bool), Fault> {
        let shape = "number bound refinement must be a [number, bool] array";
        if self.array_len()? != 2 {
            return Err(self.fail(MALFORMED(shape)));
        }
        let bound = self.number()?;
        let inclusive =
            rmp::decode::read_bool(&mut self.rd).map_err(|e| self.read_err(e, MALFORMED(shape)))?;
        Ok((bound, inclusive))
    }

    /// A length bound: a non-negative integer.
    fn length_bound(&mut self) -> Result<u64, Fault> {
        let bound = self.number()?.as_i64().and_then(|i| u64::try_from(i).ok());
        bound.ok_or_else(|| {
            self.fail(MALFORMED(
                "length bound refinement must be a non-negative integer",
            ))
        })
    }
}
