//! Attribute paths: where in a value a diagnostic or a codec error points.
//!
//! A path is a list of steps from the root object: an attribute name, a string key (map element) or an integer key
//! (list / tuple element). Set elements have no stable key in the protocol, so paths stop at the set itself.

use std::fmt;

/// One step of an [`AttributePath`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PathStep {
    /// An attribute (or nested block) of an object.
    Attribute(String),
    /// An element of a map, by key.
    KeyString(String),
    /// An element of a list or tuple, by index.
    KeyInt(i64),
}

/// A path to an attribute or element, from the root of a schema's object.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AttributePath {
    steps: Vec<PathStep>,
}

impl Extend<PathStep> for AttributePath {
    fn extend<I: IntoIterator<Item = PathStep>>(&mut self, steps: I) {
        self.steps.extend(steps);
    }
}

impl AttributePath {
    /// The empty path (the whole object).
    pub fn root() -> Self {
        Self::default()
    }

    /// A path starting with attribute `name`.
    pub fn attr(name: impl Into<String>) -> Self {
        Self::root().then_attr(name)
    }

    /// This path extended with attribute `name`.
    pub fn then_attr(mut self, name: impl Into<String>) -> Self {
        self.steps.push(PathStep::Attribute(name.into()));
        self
    }

    /// This path extended with map key `key`.
    pub fn then_key(mut self, key: impl Into<String>) -> Self {
        self.steps.push(PathStep::KeyString(key.into()));
        self
    }

    /// This path extended with list / tuple index `index`.
    pub fn then_index(mut self, index: i64) -> Self {
        self.steps.push(PathStep::KeyInt(index));
        self
    }

    /// Appends a step in place.
    pub fn push(&mut self, step: PathStep) {
        self.steps.push(step);
    }

    /// Removes the last step, if any.
    pub fn pop(&mut self) -> Option<PathStep> {
        self.steps.pop()
    }

    /// The steps, root first.
    pub fn steps(&self) -> &[PathStep] {
        &self.steps
    }

    /// Whether this is the root path.
    pub fn is_root(&self) -> bool {
        self.steps.is_empty()
    }
}

impl From<Vec<PathStep>> for AttributePath {
    fn from(steps: Vec<PathStep>) -> Self {
        Self { steps }
    }
}

impl fmt::Display for AttributePath {
    /// Renders HCL-like syntax: `spec.rules[0].labels["app"]`; the root is rendered as `(root)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.steps.is_empty() {
            return f.write_str("(root)");
        }
        for (i, step) in self.steps.iter().enumerate() {
            match step {
                PathStep::Attribute(name) if i == 0 => f.write_str(name)?,
                PathStep::Attribute(name) => write!(f, ".{name}")?,
                PathStep::KeyString(key) => write!(f, "[{key:?}]")?,
                PathStep::KeyInt(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display() {
        let p = AttributePath::attr("spec")
            .then_attr("rules")
            .then_index(0)
            .then_key("app");
        assert_eq!(p.to_string(), r#"spec.rules[0]["app"]"#);
        assert_eq!(AttributePath::root().to_string(), "(root)");
    }
}
