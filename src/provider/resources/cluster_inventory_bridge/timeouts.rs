//! The `timeouts` block (`create`, `update`, `delete`), in the usual Terraform shape: how long one apply or
//! destroy of the bridge may take before it stops with an error (what was written is kept and recorded).

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use crate::{
    domain::duration::parse_duration,
    tfplugin::{
        AttributePath, Diagnostic, Diagnostics,
        schema::{Attribute, Block, NestedBlock},
    },
};

/// Default limit of an apply (create or update).
pub const DEFAULT_WRITE: Duration = Duration::from_secs(30 * 60);
/// Default limit of a destroy.
pub const DEFAULT_DELETE: Duration = Duration::from_secs(30 * 60);

/// The block as written (Go durations). Not secret: recorded in the claim so that `import` restores it.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TimeoutsConfig {
    /// `create`.
    pub create: Option<String>,
    /// `update`.
    pub update: Option<String>,
    /// `delete`.
    pub delete: Option<String>,
}

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

impl TimeoutsConfig {
    fn parse(&self, attr: &str, default: Duration) -> Result<Duration, Diagnostics> {
        let value = match attr {
            "create" => &self.create,
            "update" => &self.update,
            _ => &self.delete,
        };
        let path = || AttributePath::attr("timeouts").then_attr(attr);
        match value.as_deref() {
            None => Ok(default),
            Some(s) => match parse_duration(s) {
                Ok(d) if !d.is_zero() => Ok(d),
                Ok(_) => Err(Diagnostic::error(
                    "Invalid timeout",
                    "A timeout must be longer than 0.",
                )
                .with_attribute(path())
                .into()),
                Err(e) => Err(Diagnostic::error("Invalid timeout", e.to_string())
                    .with_attribute(path())
                    .into()),
            },
        }
    }
}

/// Validates the block.
pub fn check(timeouts: Option<&TimeoutsConfig>) -> Diagnostics {
    let mut d = Diagnostics::new();
    for attr in ["create", "update", "delete"] {
        if let Some(Err(e)) = timeouts.map(|t| t.parse(attr, DEFAULT_WRITE)) {
            d.extend(e.into_vec());
        }
    }
    d
}

/// The limit of an apply.
pub fn limit(timeouts: Option<&TimeoutsConfig>, create: bool) -> Result<Duration, Diagnostics> {
    timeouts.map_or(Ok(DEFAULT_WRITE), |t| {
        t.parse(if create { "create" } else { "update" }, DEFAULT_WRITE)
    })
}

/// The limit of a destroy (from the prior state; an unreadable value falls back to the default).
pub fn delete_limit(timeouts: Option<&TimeoutsConfig>) -> Duration {
    timeouts
        .and_then(|t| t.parse("delete", DEFAULT_DELETE).ok())
        .unwrap_or(DEFAULT_DELETE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_covers_the_block() {
        crate::tfplugin::value::serde_bridge::coverage::assert_covers::<TimeoutsConfig>(
            &block().block,
            &[],
        );
    }

    #[test]
    fn limits_and_their_errors() {
        let t = TimeoutsConfig {
            create: Some("5m".into()),
            update: Some("0s".into()),
            delete: Some("soon".into()),
        };
        assert_eq!(limit(Some(&t), true).unwrap(), Duration::from_secs(300));
        assert_eq!(limit(None, false).unwrap(), DEFAULT_WRITE);
        let paths: Vec<String> = check(Some(&t))
            .iter()
            .map(|d| d.attribute.as_ref().unwrap().to_string())
            .collect();
        assert_eq!(paths, ["timeouts.update", "timeouts.delete"]);
        assert_eq!(delete_limit(Some(&t)), DEFAULT_DELETE);
    }
}
