//! The `timeouts` block (`create`, `update`, `delete`), in the usual Terraform shape: how long one apply or
//! destroy of the bridge may take before it stops with an error (what was written is kept and recorded).

use std::time::Duration;

use crate::{
    bridge::duration::parse_duration,
    tfplugin::{
        AttributePath, Diagnostic, Diagnostics, Value,
        schema::{Attribute, Block, NestedBlock},
    },
};

/// Default limit of an apply (create or update).
pub const DEFAULT_WRITE: Duration = Duration::from_secs(30 * 60);
/// Default limit of a destroy.
pub const DEFAULT_DELETE: Duration = Duration::from_secs(30 * 60);

/// The block.
pub fn block() -> NestedBlock {
    let md = |n: &str, d: &str| Attribute::string(n).optional().markdown_description(d);
    NestedBlock::single(
        "timeouts",
        Block::new()
            .markdown_description(
                "How long one apply or destroy of the bridge may take (Go durations).",
            )
            .attribute(md("create", "Limit of the first apply (default `30m`)."))
            .attribute(md("update", "Limit of later applies (default `30m`)."))
            .attribute(md("delete", "Limit of destroy (default `30m`).")),
    )
}

fn parse(v: &Value, attr: &str, default: Duration) -> Result<Duration, Diagnostics> {
    match v.get_attr("timeouts").get_attr(attr).as_str() {
        None => Ok(default),
        Some(s) => match parse_duration(s) {
            Ok(d) if !d.is_zero() => Ok(d),
            Ok(_) => Err(
                Diagnostic::error("Invalid timeout", "A timeout must be longer than 0.")
                    .with_attribute(AttributePath::attr("timeouts").then_attr(attr))
                    .into(),
            ),
            Err(e) => Err(Diagnostic::error("Invalid timeout", e.to_string())
                .with_attribute(AttributePath::attr("timeouts").then_attr(attr))
                .into()),
        },
    }
}

/// Validates the block.
pub fn check(config: &Value) -> Diagnostics {
    let mut d = Diagnostics::new();
    for attr in ["create", "update", "delete"] {
        if let Err(e) = parse(config, attr, DEFAULT_WRITE) {
            d.extend(e.into_vec());
        }
    }
    d
}

/// The limit of an apply.
pub fn limit(config: &Value, create: bool) -> Result<Duration, Diagnostics> {
    parse(
        config,
        if create { "create" } else { "update" },
        DEFAULT_WRITE,
    )
}

/// The limit of a destroy (from the prior state; an unreadable value falls back to the default).
pub fn delete_limit(state: &Value) -> Duration {
    parse(state, "delete", DEFAULT_DELETE).unwrap_or(DEFAULT_DELETE)
}
