//! [`Value`]s to and from Rust types through serde, in the spirit of terraform-plugin-framework's
//! `Config.Get(&model)`: a provider declares its configuration as a `Deserialize` struct whose field names are the
//! schema's attribute names, and reads a whole request in one pass.
//!
//! - **Null** is absent: an object attribute that is null is not handed to the struct, so an `Option` field reads
//!   `None` and a field with `#[serde(default)]` its default; a required field reads "missing".
//! - **Unknown** (plan time): [`from_value`] refuses it, naming the first unknown attribute path
//!   ([`FromValueError::Unknown`]); [`from_value_partial`] reads it as absent and lists every such path
//!   ([`Partial::unknown`]), for validation, which checks what is known and leaves the rest for later. A list,
//!   set or map holding an unknown value is read whole or not at all (unknown as a whole): leaving an element out
//!   would shift the positions that diagnostics point at. Objects (blocks) are read attribute by attribute.
//! - **Numbers**: integer fields take whole numbers only; a fractional value is an error naming its path.
//! - Lists, sets and tuples read as sequences, maps and objects as maps or structs; nested blocks are objects
//!   (single), sequences (list, set) or maps.
//!
//! Every error carries the attribute path it concerns, and no message quotes a string value (values may be
//! secrets); wrap secret fields in [`Sensitive`], whose `Debug` is redacted.
//! [`to_value`] is the way back: structs become objects, maps maps, sequences lists, `None` null.

mod de;
mod ser;

use std::fmt;

use serde::{Deserialize, Serialize, de::DeserializeOwned};

use super::{Value, ValueError};
use crate::tfplugin::{diag::Diagnostic, path::AttributePath};
use de::{Ctx, De, Error};
use ser::Ser;

/// Why a value could not be read into a Rust type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FromValueError {
    /// The value at this path is not known yet (only [`from_value`] refuses unknown values).
    Unknown(AttributePath),
    /// The value does not fit the type: a fractional number for an integer, a missing required attribute, a value
    /// of another kind.
    Invalid(ValueError),
}

impl FromValueError {
    /// The attribute path the error concerns.
    pub fn path(&self) -> &AttributePath {
        match self {
            FromValueError::Unknown(p) => p,
            FromValueError::Invalid(e) => &e.path,
        }
    }

    /// The error as an error diagnostic at its attribute path: "Invalid configuration value", or "Value not known
    /// yet" for an unknown value.
    pub fn to_diagnostic(&self) -> Diagnostic {
        match self {
            FromValueError::Unknown(p) => Diagnostic::error(
                "Value not known yet",
                format!("{p} is known only after apply; it is needed now."),
            )
            .with_attribute(p.clone()),
            FromValueError::Invalid(e) => Diagnostic::error(
                "Invalid configuration value",
                format!("{}: {}.", e.path, e.message),
            )
            .with_attribute(e.path.clone()),
        }
    }
}

impl fmt::Display for FromValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FromValueError::Unknown(p) => write!(f, "{p} is not known yet"),
            FromValueError::Invalid(e) => write!(f, "{}: {}", e.path, e.message),
        }
    }
}

impl std::error::Error for FromValueError {}

/// What [`from_value_partial`] read: the value, with unknown values read as absent, and their paths.
#[derive(Debug, Clone, PartialEq)]
pub struct Partial<T> {
    /// The value read.
    pub value: T,
    /// The paths of the values that were not known (in the order they were met), read as absent.
    pub unknown: Vec<AttributePath>,
}

impl<T> Partial<T> {
    /// Whether the path, or a path inside it, was not known.
    pub fn is_unknown_at(&self, path: &AttributePath) -> bool {
        self.unknown
            .iter()
            .any(|u| u.steps().starts_with(path.steps()) || path.steps().starts_with(u.steps()))
    }
}

/// Reads `value` into `T`; an unknown value anywhere is an error naming its path.
pub fn from_value<T: DeserializeOwned>(value: &Value) -> Result<T, FromValueError> {
    let ctx = Ctx::new(false);
    T::deserialize(De::new(value, AttributePath::root(), &ctx)).map_err(Error::into_public)
}

/// Reads `value` into `T`, unknown values read as absent (an `Option` reads `None`; a collection holding one is
/// absent as a whole); their paths are in [`Partial::unknown`].
pub fn from_value_partial<T: DeserializeOwned>(
    value: &Value,
) -> Result<Partial<T>, FromValueError> {
    let ctx = Ctx::new(true);
    let value =
        T::deserialize(De::new(value, AttributePath::root(), &ctx)).map_err(Error::into_public)?;
    Ok(Partial {
        value,
        unknown: ctx.unknown.into_inner(),
    })
}

/// `value` as a [`Value`]: structs become objects, maps maps, sequences lists, `None` and `()` null.
pub fn to_value<T: Serialize + ?Sized>(value: &T) -> Result<Value, ValueError> {
    value.serialize(Ser).map_err(|e| e.0)
}

/// A secret: serialized and deserialized as the value it holds, but its `Debug` never shows it.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Sensitive<T>(pub T);

impl<T> Sensitive<T> {
    /// The secret.
    pub fn expose(&self) -> &T {
        &self.0
    }

    /// The secret, unwrapped.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> fmt::Debug for Sensitive<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Sensitive(<redacted>)")
    }
}

impl<T> From<T> for Sensitive<T> {
    fn from(value: T) -> Self {
        Sensitive(value)
    }
}

#[cfg(test)]
pub mod coverage;

#[cfg(test)]
mod tests;
