//! msgpack to [`Value`], directed by the [`Type`]: every failure is a [`DecodeError`] located by attribute path.

mod error;
mod number;
mod refinement;

use error::Fault;
pub(crate) use error::{DecodeError, DecodeFailure};
pub(crate) use number::parse_decimal;
pub(super) use number::{compare_numbers, normalize_float};

use std::collections::BTreeMap;

use rmp::Marker;
use rmp::decode::Bytes;
use rmp::decode::bytes::BytesReadError;

use super::MAX_DEPTH;
use crate::tfplugin::path::PathStep;
use crate::tfplugin::value::{Fields, Type, Value, ValueError};

/// `rmp`'s error for a value read from [`Bytes`].
type ValueReadError = rmp::decode::ValueReadError<BytesReadError>;
/// `rmp`'s error for an integer read from [`Bytes`].
type NumValueReadError = rmp::decode::NumValueReadError<BytesReadError>;

/// Decodes msgpack `bytes` as a value of type `ty`.
pub fn decode(bytes: &[u8], ty: &Type) -> Result<Value, ValueError> {
    decode_detailed(bytes, ty).map_err(ValueError::from)
}

/// Decodes `bytes` as a value of type `ty`, keeping the kind of failure (see [`decode`]).
pub(crate) fn decode_detailed(bytes: &[u8], ty: &Type) -> Result<Value, DecodeFailure> {
    decode_unread_detailed(bytes, ty, &[]).map(|(v, _)| v)
}

/// Decodes msgpack `bytes` as a value of object type `ty`, leaving the top-level attributes named in `unread`
/// undecoded: their msgpack is checked to be well-formed and skipped without being typed or copied, and they are
/// null in the result, which comes with where each of them lies in `bytes` (in the order they came). For requests
/// whose receiver never reads those attributes (large computed ones).
pub fn decode_unread(
    bytes: &[u8],
    ty: &Type,
    unread: &[&str],
) -> Result<(Value, Vec<Span>), ValueError> {
    decode_unread_detailed(bytes, ty, unread).map_err(ValueError::from)
}

/// Where a top-level attribute's value lies in an object's msgpack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// The attribute's name.
    pub name: String,
    /// Its value's bytes.
    pub range: std::ops::Range<usize>,
}

/// Where each top-level attribute's value lies in `bytes`, the msgpack of an object (any msgpack map with text
/// keys), in the order they come; every value is checked to be well-formed, none is typed.
pub fn attribute_spans(bytes: &[u8]) -> Result<Vec<Span>, ValueError> {
    let mut d = Decoder::new(bytes, 0, &[]);
    let spans = d.spans().map_err(|f| ValueError::from(f.located()))?;
    if !d.rd.remaining_slice().is_empty() {
        return Err(d.fail(DecodeError::TrailingBytes).located().into());
    }
    Ok(spans)
}

fn decode_unread_detailed(
    bytes: &[u8],
    ty: &Type,
    unread: &[&str],
) -> Result<(Value, Vec<Span>), DecodeFailure> {
    let mut d = Decoder::new(bytes, 0, unread);
    let v = d.value(ty).map_err(Fault::located)?;
    if !d.rd.remaining_slice().is_empty() {
        return Err(d.fail(DecodeError::TrailingBytes).located());
    }
    Ok((v, d.spans))
}

/// A type-directed reader over msgpack bytes. The `rmp::decode` functions read markers, lengths and scalars from
/// `rd` (the input not read yet); this type chooses what to read from the [`Type`], keeps the attribute path and
/// the nesting depth, and maps `rmp`'s errors to [`DecodeError`]s.
///
/// The attribute path is not tracked on the way down (that would cost a copy of every map key): a failure
/// collects the steps of the collections it leaves on its way up ([`Fault::within`]).
struct Decoder<'a> {
    rd: Bytes<'a>,
    /// The length of the whole input (positions are `len` less what remains).
    len: usize,
    depth: usize,
    /// Top-level attributes to skip (see [`decode_unread`]).
    unread: &'a [&'a str],
    /// Where the attributes skipped so far lie (see [`decode_unread`]).
    spans: Vec<Span>,
}

impl<'a> Decoder<'a> {
    /// A reader of `bytes`, nested `depth` deep already, skipping the top-level attributes `unread`.
    fn new(bytes: &'a [u8], depth: usize, unread: &'a [&'a str]) -> Self {
        Self {
            rd: Bytes::new(bytes),
            len: bytes.len(),
            depth,
            unread,
            spans: Vec::new(),
        }
    }

    #[cold]
    fn fail(&self, error: DecodeError) -> Fault {
        Fault {
            error,
            steps: Vec::new(),
        }
    }

    /// Maps an `rmp` read error: the input ended, or the next item is not what was asked for (`mismatch`). The
    /// marker `rmp` reports is dropped: for small integers and short strings it holds part of the value.
    fn read_err(&self, e: ValueReadError, mismatch: DecodeError) -> Fault {
        self.fail(match e {
            ValueReadError::TypeMismatch(_) => mismatch,
            ValueReadError::InvalidMarkerRead(_) | ValueReadError::InvalidDataRead(_) => {
                DecodeError::Truncated
            }
        })
    }

    /// Maps an error of `rmp`'s integer reader, as [`Self::read_err`] does.
    fn int_err(&self, e: NumValueReadError) -> Fault {
        self.fail(match e {
            NumValueReadError::InvalidMarkerRead(_) | NumValueReadError::InvalidDataRead(_) => {
                DecodeError::Truncated
            }
            // Every integer but a `u64`, which is read on its own, fits in `i64`.
            NumValueReadError::TypeMismatch(_) | NumValueReadError::OutOfRange => {
                DecodeError::Expected("a number")
            }
        })
    }

    /// The marker of the next item, not consumed.
    fn peek(&self) -> Result<Marker, Fault> {
        match self.rd.remaining_slice().first() {
            Some(&b) => Ok(Marker::from_u8(b)),
            None => Err(self.fail(DecodeError::Truncated)),
        }
    }

    /// The next `n` bytes of the input.
    fn take(&mut self, n: u32) -> Result<&'a [u8], Fault> {
        let split = usize::try_from(n)
            .ok()
            .and_then(|n| self.rd.remaining_slice().split_at_checked(n));
        match split {
            Some((taken, rest)) => {
                self.rd = Bytes::new(rest);
                Ok(taken)
            }
            None => Err(self.fail(DecodeError::Truncated)),
        }
    }

    /// Reads an extension (an unknown value) if one is next: its type and payload.
    fn ext(&mut self) -> Result<Option<(i8, &'a [u8])>, Fault> {
        if !matches!(
            self.peek()?,
            Marker::FixExt1
                | Marker::FixExt2
                | Marker::FixExt4
                | Marker::FixExt8
                | Marker::FixExt16
                | Marker::Ext8
                | Marker::Ext16
                | Marker::Ext32
        ) {
            return Ok(None);
        }
        let meta = rmp::decode::read_ext_meta(&mut self.rd)
            .map_err(|e| self.read_err(e, DecodeError::Expected("an extension")))?;
        let payload = self.take(meta.size)?;
        Ok(Some((meta.typeid, payload)))
    }

    fn enter(&mut self) -> Result<(), Fault> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.fail(DecodeError::TooDeep));
        }
        Ok(())
    }

    fn value(&mut self, ty: &Type) -> Result<Value, Fault> {
        self.enter()?;
        let v = self.value_inner(ty);
        self.depth -= 1;
        v
    }

    fn value_inner(&mut self, ty: &Type) -> Result<Value, Fault> {
        if let Some((ext, payload)) = self.ext()? {
            return self.unknown(ext, payload, ty);
        }
        if self.peek()? == Marker::Null {
            self.take(1)?;
            return Ok(Value::Null);
        }
        match ty {
            Type::Dynamic => {
                if self.array_len()? != 2 {
                    return Err(self.fail(DecodeError::DynamicShape));
                }
                let type_json = self.bytes_or_str()?;
                let inner = Type::from_json_bytes(type_json)
                    .map_err(|e| self.fail(DecodeError::DynamicType(e)))?;
                self.value(&inner)
            }
            Type::String => self.text("string").map(|s| Value::String(s.to_owned())),
            Type::Bool => rmp::decode::read_bool(&mut self.rd)
                .map(Value::Bool)
                .map_err(|e| self.read_err(e, DecodeError::Expected("a bool"))),
            Type::Number => self.number().map(Value::Number),
            Type::List(elem) => self.sequence(elem, true),
            Type::Set(elem) => self.sequence(elem, false),
            Type::Tuple(elems) => self.tuple(elems),
            Type::Map(elem) => self.map(elem),
            Type::Object { attributes, .. } => self.object(attributes),
        }
    }

    /// A list (`is_list`) or a set of `elem`.
    fn sequence(&mut self, elem: &Type, is_list: bool) -> Result<Value, Fault> {
        let n = self.array_len()?;
        let mut items = Vec::with_capacity(n.min(self.rd.remaining_slice().len()));
        for i in 0..n {
            let item = self.value(elem).map_err(|f| {
                // Set elements have no path step of their own.
                if is_list {
                    f.within(PathStep::KeyInt(i as i64))
                } else {
                    f
                }
            })?;
            items.push(item);
        }
        Ok(if is_list {
            Value::List(items)
        } else {
            Value::Set(items)
        })
    }

    fn tuple(&mut self, elems: &[Type]) -> Result<Value, Fault> {
        let n = self.array_len()?;
        if n != elems.len() {
            return Err(self.fail(DecodeError::TupleLength {
                found: n,
                expected: elems.len(),
            }));
        }
        let mut items = Vec::with_capacity(n);
        for (i, t) in elems.iter().enumerate() {
            let item = self
                .value(t)
                .map_err(|f| f.within(PathStep::KeyInt(i as i64)))?;
            items.push(item);
        }
        Ok(Value::Tuple(items))
    }

    fn map(&mut self, elem: &Type) -> Result<Value, Fault> {
        let n = self.map_len()?;
        // Collected, then ordered once: keys in any order cost no more than sorted ones.
        let mut items = Vec::new();
        for _ in 0..n {
            let key = self.text("map key")?.to_owned();
            match self.value(elem) {
                Ok(item) => items.push((key, item)),
                Err(f) => return Err(f.within(PathStep::KeyString(key))),
            };
        }
        Ok(Value::Map(items.into_iter().collect()))
    }

    /// An object: every attribute of the type once, as cty writes objects (go-cty refuses any other count);
    /// attributes the type lacks are refused, and the top-level attributes in `unread` are skipped (null).
    fn object(&mut self, attributes: &BTreeMap<String, Type>) -> Result<Value, Fault> {
        let n = self.map_len()?;
        // Collected, then ordered once (`Fields::from_unique`): a type with many attributes (a `dynamic` value
        // names its own) sent in any order costs `n log n`.
        let mut items = Vec::new();
        for _ in 0..n {
            let key = self.text("map key")?.to_owned();
            let item = match attributes.get(&key) {
                Some(_) if self.depth == 1 && self.unread.contains(&key.as_str()) => {
                    self.skipped(&key).map(|()| Value::Null)
                }
                Some(t) => self.value(t),
                None => Err(self.fail(DecodeError::UnsupportedAttribute)),
            };
            let item = item.map_err(|f| f.within(PathStep::Attribute(key.clone())))?;
            items.push((key, item));
        }
        let items = Fields::from_unique(items).map_err(|key| {
            let f = self.fail(DecodeError::DuplicateAttribute);
            f.within(PathStep::Attribute(key))
        })?;
        if let Some(missing) = attributes.keys().find(|k| !items.contains_key(*k)) {
            let f = self.fail(DecodeError::MissingAttribute);
            return Err(f.within(PathStep::Attribute(missing.clone())));
        }
        Ok(Value::Object(items))
    }

    fn array_len(&mut self) -> Result<usize, Fault> {
        rmp::decode::read_array_len(&mut self.rd)
            .map(|n| n as usize)
            .map_err(|e| self.read_err(e, DecodeError::Expected("an array")))
    }

    fn map_len(&mut self) -> Result<usize, Fault> {
        rmp::decode::read_map_len(&mut self.rd)
            .map(|n| n as usize)
            .map_err(|e| self.read_err(e, DecodeError::Expected("a map")))
    }

    /// The bytes of a string or a binary (cty writes type JSON as either).
    fn bytes_or_str(&mut self) -> Result<&'a [u8], Fault> {
        let len = match self.peek()? {
            Marker::Bin8 | Marker::Bin16 | Marker::Bin32 => rmp::decode::read_bin_len(&mut self.rd),
            _ => rmp::decode::read_str_len(&mut self.rd),
        };
        let len = len.map_err(|e| self.read_err(e, DecodeError::Expected("a string")))?;
        self.take(len)
    }

    /// A string or binary holding UTF-8 text (`what` names it in errors).
    fn text(&mut self, what: &'static str) -> Result<&'a str, Fault> {
        let b = self.bytes_or_str()?;
        std::str::from_utf8(b).map_err(|source| self.fail(DecodeError::Utf8 { what, source }))
    }

    /// The position of the next byte in the input.
    fn position(&self) -> usize {
        self.len - self.rd.remaining_slice().len()
    }

    /// Skips the value of the top-level attribute `name`, recording where it lies.
    fn skipped(&mut self, name: &str) -> Result<(), Fault> {
        let start = self.position();
        self.skip()?;
        self.spans.push(Span {
            name: name.to_owned(),
            range: start..self.position(),
        });
        Ok(())
    }

    /// The attributes of the map that comes next, each skipped where it lies (see [`attribute_spans`]).
    fn spans(&mut self) -> Result<Vec<Span>, Fault> {
        let n = self.map_len()?;
        for _ in 0..n {
            let key = self.text("map key")?.to_owned();
            self.skipped(&key)
                .map_err(|f| f.within(PathStep::Attribute(key.clone())))?;
        }
        Ok(std::mem::take(&mut self.spans))
    }

    /// Skips one msgpack item of any kind (bounded by the same nesting limit as values).
    fn skip(&mut self) -> Result<(), Fault> {
        self.enter()?;
        let r = self.skip_inner();
        self.depth -= 1;
        r
    }

    fn skip_inner(&mut self) -> Result<(), Fault> {
        if self.ext()?.is_some() {
            return Ok(());
        }
        let scalar = |r: Result<(), ValueReadError>, d: &Self| {
            r.map_err(|e| d.read_err(e, DecodeError::Expected("a msgpack item")))
        };
        match self.peek()? {
            Marker::Reserved => return Err(self.fail(DecodeError::InvalidMarker)),
            Marker::Null | Marker::True | Marker::False => {
                self.take(1)?;
            }
            Marker::FixMap(_) | Marker::Map16 | Marker::Map32 => {
                for _ in 0..self.map_len()? {
                    self.skip()?;
                    self.skip()?;
                }
            }
            Marker::FixArray(_) | Marker::Array16 | Marker::Array32 => {
                for _ in 0..self.array_len()? {
                    self.skip()?;
                }
            }
            Marker::FixStr(_)
            | Marker::Str8
            | Marker::Str16
            | Marker::Str32
            | Marker::Bin8
            | Marker::Bin16
            | Marker::Bin32 => {
                self.bytes_or_str()?;
            }
            Marker::F32 => scalar(rmp::decode::read_f32(&mut self.rd).map(drop), self)?,
            Marker::F64 => scalar(rmp::decode::read_f64(&mut self.rd).map(drop), self)?,
            Marker::U64 => scalar(rmp::decode::read_u64(&mut self.rd).map(drop), self)?,
            // The other integers; extensions were read above.
            _ => {
                rmp::decode::read_int::<i64, _>(&mut self.rd).map_err(|e| self.int_err(e))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tfplugin::path::AttributePath;

    /// Decodes `bytes` as `ty`, expecting a failure: its path and error.
    fn failure(bytes: &[u8], ty: &Type) -> (String, DecodeError) {
        let f = decode_detailed(bytes, ty).expect_err("does not decode");
        (f.path.to_string(), f.error)
    }

    #[test]
    fn failures_name_their_kind_and_path() {
        let t = Type::object([
            ("l", Type::list(Type::Bool)),
            ("m", Type::map(Type::Number)),
            ("t", Type::tuple([Type::String])),
            ("d", Type::Dynamic),
        ]);
        // {"l": [true, "x"]}: a string where a bool is expected.
        let (path, e) = failure(&[0x81, 0xa1, b'l', 0x92, 0xc3, 0xa1, b'x'], &t);
        assert_eq!(path, "l[1]");
        assert!(matches!(e, DecodeError::Expected("a bool")), "{e}");
        // {"m": {"k": 1.5 as an f64 cut short}}
        let (path, e) = failure(&[0x81, 0xa1, b'm', 0x81, 0xa1, b'k', 0xcb, 0x3f, 0xf8], &t);
        assert_eq!(path, "m[\"k\"]");
        assert!(matches!(e, DecodeError::Truncated), "{e}");
        // {"t": ["a", "b"]}: two elements for a one-element tuple.
        let (path, e) = failure(&[0x81, 0xa1, b't', 0x92, 0xa1, b'a', 0xa1, b'b'], &t);
        assert_eq!(path, "t");
        assert!(
            matches!(
                e,
                DecodeError::TupleLength {
                    found: 2,
                    expected: 1
                }
            ),
            "{e}"
        );
        // {"d": ["nope", null]}: a dynamic value whose type JSON is not JSON.
        let (path, e) = failure(
            &[0x81, 0xa1, b'd', 0x92, 0xa4, b'n', b'o', b'p', b'e', 0xc0],
            &t,
        );
        assert_eq!(path, "d");
        assert!(matches!(e, DecodeError::DynamicType(_)), "{e}");
        // A map key that is not UTF-8 fails at the map.
        let (path, e) = failure(&[0x81, 0xa1, b'm', 0x81, 0xa1, 0xff, 0x01], &t);
        assert_eq!(path, "m");
        assert!(
            matches!(
                e,
                DecodeError::Utf8 {
                    what: "map key",
                    ..
                }
            ),
            "{e}"
        );
        // Marker 0xc1 is never valid, and nothing may follow the value.
        let (_, e) = failure(&[0xc1], &Type::Number);
        assert!(matches!(e, DecodeError::Expected("a number")), "{e}");
        let (path, e) = failure(&[0xc3, 0xc0], &Type::Bool);
        assert_eq!(path, "(root)");
        assert!(matches!(e, DecodeError::TrailingBytes), "{e}");
    }

    #[test]
    fn value_error_keeps_path_and_causes() {
        let t = Type::object([("d", Type::Dynamic)]);
        let bytes = [0x81, 0xa1, b'd', 0x92, 0xa4, b'n', b'o', b'p', b'e', 0xc0];
        let e = decode(&bytes, &t).expect_err("bad type JSON");
        assert_eq!(e.path, AttributePath::attr("d"));
        // The cause (the type JSON error) follows the error itself.
        assert!(
            e.message
                .starts_with("invalid type in a dynamic value: type is not valid JSON"),
            "{}",
            e.message
        );
        let e = decode(&[0xa2, b'o', 0xff], &Type::String).expect_err("not UTF-8");
        assert!(
            e.message
                .starts_with("string is not valid UTF-8: invalid utf-8"),
            "{}",
            e.message
        );
    }

    /// Values may be secret: whatever the input, no error (message or `Debug`) repeats any of it. `rmp` reports a
    /// type mismatch with the marker it read, which for small integers and short strings is part of the value.
    #[test]
    fn failures_never_show_the_input() {
        let secret = "hunter2";
        let mut s = vec![0xa0 | secret.len() as u8];
        s.extend_from_slice(secret.as_bytes());
        let cases: Vec<(Vec<u8>, Type)> = vec![
            (s.clone(), Type::Number),
            (s.clone(), Type::Bool),
            (s.clone(), Type::list(Type::String)),
            (vec![0x2a], Type::String), // fixint 42
            (vec![0xd3, 0, 0, 0, 0, 0, 0, 0x30, 0x39], Type::Bool), // int64 12345
            (
                [&[0x81, 0xa7][..], secret.as_bytes(), &[0xc0]].concat(),
                Type::object([("a", Type::String)]),
            ),
        ];
        for (bytes, ty) in cases {
            let f = decode_detailed(&bytes, &ty).expect_err("mismatch");
            let shown = format!("{f} {f:?}");
            let shown = format!("{shown} {:?}", ValueError::from(f));
            for leak in ["hunter", "42", "12345", "FixPos", "FixStr"] {
                // The extra attribute's name is its path (an identity), not a value.
                if leak == "hunter" && shown.contains("unsupported attribute") {
                    continue;
                }
                assert!(!shown.contains(leak), "{leak:?} in {shown:?}");
            }
        }
    }

    #[test]
    fn refinement_skips_unknown_keys_of_any_kind() {
        let list = Type::list(Type::String);
        // {7: ext, 8: [1.5, nil, {"k": 0xffffffffffffffff}], 5: 2}: unknown keys are skipped, whatever they hold.
        let mut payload = vec![0x83, 7, 0xd4, 1, 0];
        payload.extend_from_slice(&[
            8, 0x93, 0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0, 0xc0, 0x81, 0xa1, b'k',
        ]);
        payload.extend_from_slice(&[0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
        payload.extend_from_slice(&[5, 2]);
        let mut bytes = vec![0xc7, payload.len() as u8, 12];
        bytes.extend_from_slice(&payload);
        let v = decode(&bytes, &list).expect("decodes");
        assert_eq!(v.refinements().and_then(|r| r.length_lower), Some(2));
        // A skipped item must still be well-formed msgpack.
        let (_, e) = failure(&[0xc7, 4, 12, 0x82, 7, 0xc1, 5], &list);
        assert!(matches!(e, DecodeError::InvalidMarker), "{e}");
        let (_, e) = failure(&[0xc7, 4, 12, 0x81, 7, 0xdc, 0xff], &list);
        assert!(matches!(e, DecodeError::Truncated), "{e}");
        // Refinement payloads are bounded.
        let mut big = vec![0xc8, 0x04, 0x01, 12, 0x81, 7, 0xc5, 0x03, 0xfb];
        big.resize(4 + 0x401, 0);
        let (_, e) = failure(&big, &list);
        assert!(matches!(e, DecodeError::OversizeRefinement), "{e}");
    }

    /// An unknown with refinement payload `payload`.
    fn ext12(payload: &[u8]) -> Vec<u8> {
        [&[0xc7, payload.len() as u8, 12][..], payload].concat()
    }

    /// Refinements read as go-cty reads them (differences `tests/plugin/cty_oracle.rs` found).
    #[test]
    fn refinements_read_as_cty_reads_them() {
        let list = Type::list(Type::String);
        let refined = |b: &[u8], ty: &Type| decode(&ext12(b), ty).expect("decodes");
        // Refined as null: null.
        assert_eq!(refined(&[0x81, 1, 0xc3], &Type::String), Value::Null);
        // A key twice keeps the tighter refinement.
        let r = refined(&[0x82, 5, 3, 5, 1], &list);
        assert_eq!(r.refinements().and_then(|r| r.length_lower), Some(3));
        let r = refined(&[0x82, 4, 0x92, 5, 0xc2, 4, 0x92, 5, 0xc3], &Type::Number);
        assert_eq!(
            r.refinements().and_then(|r| r.number_upper.clone()),
            Some((crate::tfplugin::Number::Int(5), false))
        );
        let r = refined(&[0x82, 2, 0xa2, b'a', b'b', 2, 0xa1, b'a'], &Type::String);
        assert_eq!(
            r.refinements().and_then(|r| r.string_prefix.as_deref()),
            Some("ab")
        );
        // cty's largest int is no upper length bound.
        let r = refined(
            &[
                0x81, 6, 0xd3, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            ],
            &list,
        );
        assert_eq!(r, Value::unknown());
        // Not null, with bounds that leave one value: that value.
        let five = [0x83, 1, 0xc2, 3, 0x92, 5, 0xc3, 4, 0x92, 5, 0xc3];
        assert_eq!(refined(&five, &Type::Number), Value::int(5));
        let two = refined(&[0x83, 1, 0xc2, 5, 2, 6, 2], &list);
        assert_eq!(two, Value::list([Value::unknown(), Value::unknown()]));
        let empty = refined(&[0x82, 1, 0xc2, 6, 0], &Type::map(Type::Bool));
        assert_eq!(empty, Value::map::<String>([]));
        // Contradictions (go-cty panics on them), and shapes go-cty refuses.
        for (payload, ty) in [
            (&[0x82, 1, 0xc2, 1, 0xc3][..], Type::String),
            (&[0x82, 5, 3, 6, 2], list.clone()),
            (&[0x82, 3, 0x92, 5, 0xc3, 4, 0x92, 1, 0xc3], Type::Number),
            (&[0x82, 3, 0x92, 5, 0xc3, 4, 0x92, 5, 0xc2], Type::Number),
            (&[0x82, 2, 0xa1, b'a', 2, 0xa1, b'b'], Type::String),
            (&[0x81, 0xa1, b'1', 0xc2], Type::String),
            (&[0x81, 5, 0xcb, 0x40, 0, 0, 0, 0, 0, 0, 0], list.clone()),
            (
                &[0x83, 1, 0xc2, 5, 0xcd, 0x10, 0, 6, 0xcd, 0x10, 0],
                list.clone(),
            ),
        ] {
            assert!(decode(&ext12(payload), &ty).is_err(), "{payload:x?}");
        }
        // A dynamic value drops its refinements, but they must still be a map; any other extension is refused.
        assert_eq!(refined(&[0x81, 1, 0xc2], &Type::Dynamic), Value::unknown());
        assert!(decode(&ext12(&[1, 2]), &Type::Dynamic).is_err());
        let (_, e) = failure(&[0xd5, 3, 1, 2], &Type::Dynamic);
        assert!(matches!(e, DecodeError::UnsupportedExtension(3)), "{e}");
    }

    #[test]
    fn objects_have_every_attribute_once() {
        let t = Type::object([("a", Type::String), ("b", Type::Bool)]);
        let (path, e) = failure(&[0x81, 0xa1, b'a', 0xc0], &t);
        assert_eq!(path, "b");
        assert!(matches!(e, DecodeError::MissingAttribute), "{e}");
        let (path, e) = failure(&[0x82, 0xa1, b'a', 0xc0, 0xa1, b'a', 0xc0], &t);
        assert_eq!(path, "a");
        assert!(matches!(e, DecodeError::DuplicateAttribute), "{e}");
    }

    #[test]
    fn nesting_limit_applies_to_skipped_refinement_items() {
        // {7: [[[[...]]]]} nested deeper than MAX_DEPTH inside a refinement.
        let mut payload = vec![0x81, 7];
        payload.extend(std::iter::repeat_n(0x91, MAX_DEPTH + 1));
        payload.push(0xc0);
        let mut bytes = vec![0xc7, payload.len() as u8, 12];
        bytes.extend_from_slice(&payload);
        let (_, e) = failure(&bytes, &Type::list(Type::String));
        assert!(matches!(e, DecodeError::TooDeep), "{e}");
    }

    #[test]
    fn hostile_input() {
        // huge claimed array length with no data
        assert!(decode(&[0xdd, 0xff, 0xff, 0xff, 0xff], &Type::list(Type::String)).is_err());
        // dynamic nesting bomb
        let mut b = Vec::new();
        for _ in 0..200 {
            b.extend_from_slice(&[0x92, 0xa7]);
            b.extend_from_slice(b"dynamic");
        }
        assert!(decode(&b, &Type::Dynamic).is_err());
    }
}
