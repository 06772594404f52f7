//! Configuration blocks that several resources and data sources share, each defined once: its schema, the
//! mapping between its Terraform value and the core's type, and the conversion of the core's problems into
//! diagnostics with attribute paths. The provider block ([`provider_config`]) and `inventory` blocks share the
//! connection attributes of [`connection`].

pub mod connection;
pub mod credentials;
pub mod inventory;
pub mod provider_config;
pub mod selection;

use crate::{
    bridge::problem::{Problem, Severity, Step},
    tfplugin::{AttributePath, Diagnostic, Diagnostics},
};

/// The attribute path of a core problem.
pub fn problem_path(steps: &[Step]) -> Option<AttributePath> {
    let mut path: Option<AttributePath> = None;
    for step in steps {
        let base = path.unwrap_or_else(AttributePath::root);
        path = Some(match step {
            Step::Attr(a) => base.then_attr(*a),
            Step::Key(k) => base.then_key(k),
            Step::Index(i) => base.then_index(i64::try_from(*i).unwrap_or(i64::MAX)),
        });
    }
    path
}

/// A core problem as a diagnostic with its attribute path.
pub fn problem_diag(p: &Problem) -> Diagnostic {
    let d = match p.severity {
        Severity::Error => Diagnostic::error(&p.summary, &p.detail),
        Severity::Warning => Diagnostic::warning(&p.summary, &p.detail),
    };
    match problem_path(&p.path) {
        Some(path) => d.with_attribute(path),
        None => d,
    }
}

/// Core problems as diagnostics.
pub fn problems_diags<'p>(problems: impl IntoIterator<Item = &'p Problem>) -> Diagnostics {
    let mut d = Diagnostics::new();
    d.extend(problems.into_iter().map(problem_diag));
    d
}
