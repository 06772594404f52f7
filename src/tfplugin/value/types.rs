//! [`Type`] and its JSON form (the cty type encoding used in schemas and `dynamic` values).

use serde_json::Value as Json;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// A Terraform (cty) type.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Type {
    /// `string`
    String,
    /// `number`
    Number,
    /// `bool`
    Bool,
    /// `dynamic` (any type, decided by the value).
    Dynamic,
    /// `list(T)`
    List(Box<Type>),
    /// `set(T)`
    Set(Box<Type>),
    /// `map(T)`
    Map(Box<Type>),
    /// `object({...})`, with the names of attributes that are optional in type conversion.
    Object {
        /// Attribute types by name.
        attributes: BTreeMap<String, Type>,
        /// Optional attribute names (a subset of `attributes`' keys).
        optional: BTreeSet<String>,
    },
    /// `tuple([...])`
    Tuple(Vec<Type>),
}

/// A type JSON document that is not a valid cty type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TypeJsonError {
    /// Not valid JSON.
    #[error("type is not valid JSON: {0}")]
    Syntax(String),
    /// Valid JSON but not a type.
    #[error("invalid type JSON: {0}")]
    Invalid(String),
}

impl Type {
    /// `list(elem)`
    pub fn list(elem: Type) -> Self {
        Type::List(Box::new(elem))
    }

    /// `set(elem)`
    pub fn set(elem: Type) -> Self {
        Type::Set(Box::new(elem))
    }

    /// `map(elem)`
    pub fn map(elem: Type) -> Self {
        Type::Map(Box::new(elem))
    }

    /// `object({...})` with no optional attributes.
    pub fn object<K: Into<String>>(attrs: impl IntoIterator<Item = (K, Type)>) -> Self {
        Type::Object {
            attributes: attrs.into_iter().map(|(k, t)| (k.into(), t)).collect(),
            optional: BTreeSet::new(),
        }
    }

    /// `tuple([...])`
    pub fn tuple(elems: impl IntoIterator<Item = Type>) -> Self {
        Type::Tuple(elems.into_iter().collect())
    }

    /// The type as cty JSON (`"string"`, `["list","string"]`, `["object",{...}]`, ...).
    pub fn to_json(&self) -> Json {
        match self {
            Type::String => Json::from("string"),
            Type::Number => Json::from("number"),
            Type::Bool => Json::from("bool"),
            Type::Dynamic => Json::from("dynamic"),
            Type::List(t) => Json::Array(vec![Json::from("list"), t.to_json()]),
            Type::Set(t) => Json::Array(vec![Json::from("set"), t.to_json()]),
            Type::Map(t) => Json::Array(vec![Json::from("map"), t.to_json()]),
            Type::Object {
                attributes,
                optional,
            } => {
                let attrs: serde_json::Map<String, Json> = attributes
                    .iter()
                    .map(|(k, t)| (k.clone(), t.to_json()))
                    .collect();
                let mut parts = vec![Json::from("object"), Json::Object(attrs)];
                if !optional.is_empty() {
                    parts.push(Json::Array(
                        optional.iter().map(|s| Json::from(s.as_str())).collect(),
                    ));
                }
                Json::Array(parts)
            }
            Type::Tuple(ts) => Json::Array(vec![
                Json::from("tuple"),
                Json::Array(ts.iter().map(Type::to_json).collect()),
            ]),
        }
    }

    /// The type as cty JSON bytes.
    pub fn to_json_bytes(&self) -> Vec<u8> {
        // Serializing a serde_json::Value to a Vec cannot fail.
        serde_json::to_vec(&self.to_json()).unwrap_or_default()
    }

    /// Parses cty type JSON bytes.
    pub fn from_json_bytes(bytes: &[u8]) -> Result<Self, TypeJsonError> {
        let json: Json =
            serde_json::from_slice(bytes).map_err(|e| TypeJsonError::Syntax(e.to_string()))?;
        Self::from_json(&json)
    }

    /// Parses a cty type JSON document.
    pub fn from_json(json: &Json) -> Result<Self, TypeJsonError> {
        Self::from_json_depth(json, 0)
    }

    fn from_json_depth(json: &Json, depth: usize) -> Result<Self, TypeJsonError> {
        if depth > 64 {
            return Err(TypeJsonError::Invalid("type nested too deeply".into()));
        }
        let bad = |what: &str| TypeJsonError::Invalid(what.to_owned());
        match json {
            Json::String(s) => match s.as_str() {
                "string" => Ok(Type::String),
                "number" => Ok(Type::Number),
                "bool" => Ok(Type::Bool),
                "dynamic" => Ok(Type::Dynamic),
                other => Err(TypeJsonError::Invalid(format!(
                    "unknown primitive type {other:?}"
                ))),
            },
            Json::Array(parts) => {
                let kind = parts
                    .first()
                    .and_then(Json::as_str)
                    .ok_or_else(|| bad("type array must start with a kind"))?;
                let arg = parts
                    .get(1)
                    .ok_or_else(|| bad("type array needs an argument"))?;
                match (kind, parts.len()) {
                    ("list", 2) => Ok(Type::list(Self::from_json_depth(arg, depth + 1)?)),
                    ("set", 2) => Ok(Type::set(Self::from_json_depth(arg, depth + 1)?)),
                    ("map", 2) => Ok(Type::map(Self::from_json_depth(arg, depth + 1)?)),
                    ("tuple", 2) => {
                        let elems = arg
                            .as_array()
                            .ok_or_else(|| bad("tuple needs an array of types"))?;
                        Ok(Type::Tuple(
                            elems
                                .iter()
                                .map(|e| Self::from_json_depth(e, depth + 1))
                                .collect::<Result<_, _>>()?,
                        ))
                    }
                    ("object", 2 | 3) => Self::object_from_json(arg, parts.get(2), depth),
                    _ => Err(TypeJsonError::Invalid(format!(
                        "unknown type kind {kind:?} or wrong arity"
                    ))),
                }
            }
            _ => Err(bad("type must be a string or an array")),
        }
    }

    /// `["object", {attribute: type, ...}, [optional, ...]]`: the attribute types, and the optional ones among
    /// them.
    fn object_from_json(
        arg: &Json,
        optional_names: Option<&Json>,
        depth: usize,
    ) -> Result<Self, TypeJsonError> {
        let bad = |what: &str| TypeJsonError::Invalid(what.to_owned());
        let attrs = arg
            .as_object()
            .ok_or_else(|| bad("object needs a map of attribute types"))?;
        let attributes = attrs
            .iter()
            .map(|(k, t)| Ok((k.clone(), Self::from_json_depth(t, depth + 1)?)))
            .collect::<Result<BTreeMap<_, _>, TypeJsonError>>()?;
        let mut optional = BTreeSet::new();
        if let Some(opt) = optional_names {
            for name in opt
                .as_array()
                .ok_or_else(|| bad("optional attributes must be an array"))?
            {
                let name = name
                    .as_str()
                    .ok_or_else(|| bad("optional attribute names must be strings"))?;
                if !attributes.contains_key(name) {
                    return Err(TypeJsonError::Invalid(format!(
                        "optional attribute {name:?} is not an attribute"
                    )));
                }
                optional.insert(name.to_owned());
            }
        }
        Ok(Type::Object {
            attributes,
            optional,
        })
    }
}

impl fmt::Display for Type {
    /// Terraform's type-constraint syntax, e.g. `list(map(string))`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::String => f.write_str("string"),
            Type::Number => f.write_str("number"),
            Type::Bool => f.write_str("bool"),
            Type::Dynamic => f.write_str("dynamic"),
            Type::List(t) => write!(f, "list({t})"),
            Type::Set(t) => write!(f, "set({t})"),
            Type::Map(t) => write!(f, "map({t})"),
            Type::Object { attributes, .. } => {
                f.write_str("object({")?;
                for (i, (k, t)) in attributes.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k}={t}")?;
                }
                f.write_str("})")
            }
            Type::Tuple(ts) => {
                f.write_str("tuple([")?;
                for (i, t) in ts.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{t}")?;
                }
                f.write_str("])")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_round_trip() {
        let t = Type::Object {
            attributes: [
                ("a".to_owned(), Type::list(Type::String)),
                ("b".to_owned(), Type::tuple([Type::Bool, Type::Dynamic])),
                ("c".to_owned(), Type::map(Type::set(Type::Number))),
            ]
            .into_iter()
            .collect(),
            optional: ["c".to_owned()].into_iter().collect(),
        };
        let bytes = t.to_json_bytes();
        assert_eq!(
            String::from_utf8_lossy(&bytes),
            r#"["object",{"a":["list","string"],"b":["tuple",["bool","dynamic"]],"c":["map",["set","number"]]},["c"]]"#
        );
        assert_eq!(Type::from_json_bytes(&bytes), Ok(t));
        assert!(Type::from_json_bytes(br#"["list"]"#).is_err());
        assert!(Type::from_json_bytes(br#""strin""#).is_err());
        assert!(Type::from_json_bytes(br#"["object",{"a":"string"},["b"]]"#).is_err());
    }
}
