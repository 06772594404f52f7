//! Diagnostics: errors and warnings returned to Terraform, optionally pointing at an attribute.

use super::path::AttributePath;
use std::fmt;

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Severity {
    /// The operation failed.
    Error,
    /// The operation succeeded but the user should know something.
    Warning,
}

/// One error or warning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// Short one-line summary.
    pub summary: String,
    /// Longer explanation (may be empty).
    pub detail: String,
    /// The attribute the diagnostic is about, if any.
    pub attribute: Option<AttributePath>,
}

impl Diagnostic {
    /// An error without an attribute path.
    pub fn error(summary: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            severity: Severity::Error,
            summary: summary.into(),
            detail: detail.into(),
            attribute: None,
        }
    }

    /// A warning without an attribute path.
    pub fn warning(summary: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            severity: Severity::Warning,
            summary: summary.into(),
            detail: detail.into(),
            attribute: None,
        }
    }

    /// This diagnostic, pointing at `path`.
    pub fn with_attribute(mut self, path: AttributePath) -> Self {
        self.attribute = Some(path);
        self
    }

    /// Whether this is an error.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, "{sev}: {}", self.summary)?;
        if let Some(path) = &self.attribute {
            write!(f, " (at {path})")?;
        }
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

/// An ordered collection of diagnostics.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diagnostics(Vec<Diagnostic>);

impl Diagnostics {
    /// An empty collection.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a diagnostic (exact duplicates are dropped).
    pub fn push(&mut self, diagnostic: Diagnostic) {
        if !self.0.contains(&diagnostic) {
            self.0.push(diagnostic);
        }
    }

    /// Adds an error.
    pub fn error(&mut self, summary: impl Into<String>, detail: impl Into<String>) {
        self.push(Diagnostic::error(summary, detail));
    }

    /// Adds a warning.
    pub fn warning(&mut self, summary: impl Into<String>, detail: impl Into<String>) {
        self.push(Diagnostic::warning(summary, detail));
    }

    /// Adds an error about the attribute at `path`.
    pub fn attribute_error(
        &mut self,
        path: AttributePath,
        summary: impl Into<String>,
        detail: impl Into<String>,
    ) {
        self.push(Diagnostic::error(summary, detail).with_attribute(path));
    }

    /// Adds a warning about the attribute at `path`.
    pub fn attribute_warning(
        &mut self,
        path: AttributePath,
        summary: impl Into<String>,
        detail: impl Into<String>,
    ) {
        self.push(Diagnostic::warning(summary, detail).with_attribute(path));
    }

    /// Appends all diagnostics of `other`.
    pub fn extend(&mut self, other: impl IntoIterator<Item = Diagnostic>) {
        for d in other {
            self.push(d);
        }
    }

    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.0.iter().any(Diagnostic::is_error)
    }

    /// Whether the collection is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Number of diagnostics.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Iterates over the diagnostics.
    pub fn iter(&self) -> std::slice::Iter<'_, Diagnostic> {
        self.0.iter()
    }

    /// The diagnostics as a vector.
    pub fn into_vec(self) -> Vec<Diagnostic> {
        self.0
    }
}

impl From<Diagnostic> for Diagnostics {
    fn from(d: Diagnostic) -> Self {
        Self(vec![d])
    }
}

impl From<Vec<Diagnostic>> for Diagnostics {
    fn from(v: Vec<Diagnostic>) -> Self {
        let mut out = Self::new();
        out.extend(v);
        out
    }
}

impl IntoIterator for Diagnostics {
    type Item = Diagnostic;
    type IntoIter = std::vec::IntoIter<Diagnostic>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a Diagnostics {
    type Item = &'a Diagnostic;
    type IntoIter = std::slice::Iter<'a, Diagnostic>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl Extend<Diagnostic> for Diagnostics {
    fn extend<I: IntoIterator<Item = Diagnostic>>(&mut self, iter: I) {
        Diagnostics::extend(self, iter);
    }
}

impl FromIterator<Diagnostic> for Diagnostics {
    fn from_iter<I: IntoIterator<Item = Diagnostic>>(iter: I) -> Self {
        let mut out = Self::new();
        out.extend(iter);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collection() {
        let mut d = Diagnostics::new();
        assert!(!d.has_errors());
        d.warning("w", "");
        assert!(!d.has_errors());
        d.attribute_error(AttributePath::attr("a"), "bad", "very");
        d.attribute_error(AttributePath::attr("a"), "bad", "very");
        assert_eq!(d.len(), 2);
        assert!(d.has_errors());
        assert_eq!(
            d.iter().nth(1).map(|x| x.to_string()),
            Some("error: bad (at a): very".to_string())
        );
    }
}
