//! Why msgpack input does not decode, and where.

use crate::tfplugin::path::{AttributePath, PathStep};
use crate::tfplugin::value::{TypeJsonError, ValueError};

/// Why msgpack input does not decode as a value of its type. Messages never include the input's contents (values
/// may be secret), only its shape.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DecodeError {
    /// The input ends inside a value (a marker, a length, or data shorter than it claims).
    #[error("unexpected end of msgpack data")]
    Truncated,
    /// The next item is of another msgpack kind than the type needs (the text says what was expected).
    #[error("expected {0}")]
    Expected(&'static str),
    /// Marker byte `0xc1`, which msgpack never uses.
    #[error("invalid msgpack marker")]
    InvalidMarker,
    /// Text that is not UTF-8.
    #[error("{what} is not valid UTF-8")]
    Utf8 {
        /// Which text (a string, a map key, ...).
        what: &'static str,
        /// Where the bytes stop being UTF-8.
        #[source]
        source: std::str::Utf8Error,
    },
    /// A number written as a string that is not decimal number syntax.
    #[error("string is not a valid number")]
    InvalidNumber,
    /// A float that is NaN (Terraform numbers are never NaN).
    #[error("NaN is not a valid number")]
    NaN,
    /// A `dynamic` value that is not a two-element `[type, value]` array.
    #[error("dynamic value must be a [type, value] array")]
    DynamicShape,
    /// The type JSON of a `dynamic` value is not a type.
    #[error("invalid type in a dynamic value")]
    DynamicType(#[source] TypeJsonError),
    /// A tuple whose length differs from its type's.
    #[error("tuple has {found} elements but its type has {expected}")]
    TupleLength {
        /// Elements in the input.
        found: usize,
        /// Elements in the type.
        expected: usize,
    },
    /// An object attribute the schema does not have.
    #[error("unsupported attribute (not in the schema)")]
    UnsupportedAttribute,
    /// An object attribute of the schema that the input lacks.
    #[error("missing attribute (every attribute of the schema is written, null or not)")]
    MissingAttribute,
    /// An object attribute given twice.
    #[error("attribute given twice")]
    DuplicateAttribute,
    /// Deeper nesting than [`MAX_DEPTH`].
    #[error("value nested too deeply")]
    TooDeep,
    /// Bytes left over after the value.
    #[error("trailing bytes after value")]
    TrailingBytes,
    /// An extension with a payload of more than one byte that is not extension 12 (refinements).
    #[error("unsupported extension type {0} (only unknown values are extensions)")]
    UnsupportedExtension(i8),
    /// A refinement payload larger than [`MAX_REFINEMENT_LEN`].
    #[error("oversize unknown value refinement")]
    OversizeRefinement,
    /// A refinement that cannot apply to the value's type.
    #[error("{refinement} refinement for a non-{needs} type")]
    RefinementForType {
        /// The refinement (`string prefix`, `number bound`, `length`).
        refinement: &'static str,
        /// The kind of type it applies to.
        needs: &'static str,
    },
    /// A refinement whose key or value has the wrong shape (the text says which).
    #[error("{0}")]
    MalformedRefinement(&'static str),
}

/// A [`DecodeError`] and the attribute path where it happened.
#[derive(Debug, thiserror::Error)]
#[error("{error} (at {path})")]
pub(crate) struct DecodeFailure {
    /// Where the problem is.
    pub(crate) path: AttributePath,
    /// What is wrong.
    #[source]
    pub(crate) error: DecodeError,
}

impl From<DecodeFailure> for ValueError {
    /// Keeps the path; the message is the error and its causes, joined by `": "`.
    fn from(f: DecodeFailure) -> Self {
        let mut message = f.error.to_string();
        let mut cause = std::error::Error::source(&f.error);
        while let Some(c) = cause {
            message.push_str(": ");
            message.push_str(&c.to_string());
            cause = c.source();
        }
        ValueError::new(&f.path, message)
    }
}

/// A [`DecodeError`] on its way up, with the path steps from the failing value outwards.
pub(super) struct Fault {
    pub(super) error: DecodeError,
    pub(super) steps: Vec<PathStep>,
}

impl Fault {
    /// This fault seen from the collection that holds the failing value at `step`.
    #[cold]
    pub(super) fn within(mut self, step: PathStep) -> Self {
        self.steps.push(step);
        self
    }

    /// The fault with its path from the root.
    pub(super) fn located(self) -> DecodeFailure {
        let mut steps = self.steps;
        steps.reverse();
        DecodeFailure {
            path: AttributePath::from(steps),
            error: self.error,
        }
    }
}
