//! Problems the core reports: a severity, the attribute path they concern, a one-line summary and a detail that
//! names the object involved. The mapping layer turns them into Terraform diagnostics.

/// Severity of a [`Problem`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// Stops plan/apply.
    Error,
    /// Reported, does not stop.
    Warning,
}

/// A step of the attribute path a problem points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// An attribute or block name.
    Attr(&'static str),
    /// A map key.
    Key(String),
    /// A list index.
    Index(usize),
}

/// A problem found while validating or planning, with the attribute it concerns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Error or warning.
    pub severity: Severity,
    /// Attribute path.
    pub path: Vec<Step>,
    /// One line.
    pub summary: String,
    /// What, which object, how to fix.
    pub detail: String,
}

impl Problem {
    /// An error at `path`.
    pub fn error(path: Vec<Step>, summary: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            severity: Severity::Error,
            path,
            summary: summary.into(),
            detail: detail.into(),
        }
    }

    /// A warning at `path`.
    pub fn warning(path: Vec<Step>, summary: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            severity: Severity::Warning,
            path,
            summary: summary.into(),
            detail: detail.into(),
        }
    }
}

/// Shorthand for a path of attribute names.
pub fn attrs(names: &[&'static str]) -> Vec<Step> {
    names.iter().map(|n| Step::Attr(n)).collect()
}
