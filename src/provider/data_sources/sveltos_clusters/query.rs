//! The configuration of `sveltos_clusters` ([`ClustersConfig`], read in one pass) and what it asks for
//! ([`Query`]): its validation, with attribute paths, and the data source's `id`.

use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use crate::{
    domain::selector::{Selector, label_value},
    provider::blocks::selection,
    tfplugin::{AttributePath, Diagnostics},
};

/// The configuration, as written.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ClustersConfig {
    /// `bridge`.
    pub bridge: Option<String>,
    /// `claim_namespace`.
    pub claim_namespace: Option<String>,
    /// `instance_id`.
    pub instance_id: Option<String>,
    /// `owned_only`.
    pub owned_only: Option<bool>,
    /// `namespaces`.
    pub namespaces: Option<Vec<String>>,
    /// `label_selector`.
    pub label_selector: Option<String>,
}

/// What a configuration asks for.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Query {
    /// The bridge whose ownership is reported.
    pub(super) bridge: Option<String>,
    /// Namespace of `bridge`'s claim.
    pub(super) claim_namespace: String,
    /// Whether `claim_namespace` was set (it is then part of the id).
    pub(super) claim_namespace_set: bool,
    /// The instance id the claim must hold.
    pub(super) instance_id: Option<String>,
    /// Only clusters `bridge` owns.
    pub(super) owned_only: bool,
    /// Namespaces to list (empty: all), sorted and deduplicated.
    pub(super) namespaces: Vec<String>,
    /// Label selector on the SveltosClusters.
    pub(super) label_selector: Option<Selector>,
}

impl Query {
    pub(super) fn id(&self) -> String {
        let mut claim = if self.claim_namespace_set {
            format!("claim_namespace={};", self.claim_namespace)
        } else {
            String::new()
        };
        if let Some(i) = &self.instance_id {
            claim.push_str(&format!("instance_id={i};"));
        }
        format!(
            "bridge={};{claim}owned_only={};namespaces={};label_selector={}",
            self.bridge.as_deref().unwrap_or_default(),
            self.owned_only,
            if self.namespaces.is_empty() {
                "*".to_string()
            } else {
                self.namespaces.join(",")
            },
            self.label_selector
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default(),
        )
    }
}

/// The filters of a configuration, or diagnostics with attribute paths.
pub(super) fn query(config: &ClustersConfig) -> Result<Query, Diagnostics> {
    let mut diags = Diagnostics::new();
    let bridge = config.bridge.clone();
    if let Some(b) = &bridge
        && (b.is_empty() || label_value(b).is_err())
    {
        diags.attribute_error(
            AttributePath::attr("bridge"),
            "Invalid bridge name",
            format!(
                "bridge {b:?} is not a possible bridge name: a bridge's name is a label value (1-63 alphanumerics, \
                 '-', '_' or '.', starting and ending alphanumeric)."
            ),
        );
    }
    let owned_only = config.owned_only;
    if bridge.is_none() && owned_only == Some(true) {
        diags.attribute_error(
            AttributePath::attr("owned_only"),
            "owned_only needs bridge",
            "owned_only = true lists the SveltosClusters a bridge owns: set bridge to that bridge's name.",
        );
    }
    let claim_namespace = config.claim_namespace.as_deref();
    if let Some(ns) = claim_namespace
        && crate::domain::names::dns1123_label(ns).is_err()
    {
        diags.attribute_error(
            AttributePath::attr("claim_namespace"),
            "Invalid claim namespace",
            format!("claim_namespace {ns:?} is not a namespace name (a DNS-1123 label)."),
        );
    }
    let instance_id = config.instance_id.clone();
    if instance_id.is_some() && bridge.is_none() {
        diags.attribute_error(
            AttributePath::attr("instance_id"),
            "instance_id needs bridge",
            "instance_id pins the claim of a bridge: set bridge to that bridge's name.",
        );
    }
    let namespaces = selection::namespaces(config.namespaces.as_deref(), &mut diags);
    let label_selector = selection::label_selector(config.label_selector.as_deref(), &mut diags);
    if diags.has_errors() {
        return Err(diags);
    }
    Ok(Query {
        claim_namespace: claim_namespace
            .unwrap_or(crate::domain::ownership::DEFAULT_CLAIM_NAMESPACE)
            .to_string(),
        claim_namespace_set: claim_namespace.is_some(),
        instance_id,
        owned_only: bridge.is_some() && owned_only.unwrap_or(true),
        bridge,
        namespaces,
        label_selector,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tfplugin::{Value, value::from_value};

    fn query(config: &Value) -> Result<Query, Diagnostics> {
        super::query(&from_value(config).unwrap())
    }

    fn q(config: Value) -> Query {
        query(&config).unwrap()
    }

    #[test]
    fn the_config_covers_the_schema() {
        crate::tfplugin::value::serde_bridge::coverage::assert_covers::<ClustersConfig>(
            &super::super::schema::schema().block,
            &[],
        );
    }

    #[test]
    fn filters_validation_and_id() {
        let cfg = Value::object([
            ("bridge", Value::string("fleet")),
            ("namespaces", Value::string_list(["b", "a", "b"])),
            ("label_selector", Value::string("env in (prod),!legacy")),
        ]);
        let got = q(cfg);
        assert!(got.owned_only, "owned_only defaults to true with a bridge");
        assert_eq!(got.namespaces, vec!["a".to_string(), "b".to_string()]);
        assert_eq!(
            got.id(),
            "bridge=fleet;owned_only=true;namespaces=a,b;label_selector=env in (prod),!legacy"
        );
        assert!(!q(Value::object([("bridge", Value::Null)])).owned_only);
        for (cfg, path) in [
            (
                Value::object([("label_selector", Value::string("env in (prod"))]),
                "label_selector",
            ),
            (
                Value::object([("bridge", Value::string("not a label value"))]),
                "bridge",
            ),
            (Value::object([("bridge", Value::string(""))]), "bridge"),
            (
                Value::object([("owned_only", Value::bool(true))]),
                "owned_only",
            ),
            (
                Value::object([("namespaces", Value::string_list([""]))]),
                "namespaces",
            ),
        ] {
            let d = query(&cfg).unwrap_err();
            let first = d.iter().next().unwrap();
            let at = first
                .attribute
                .as_ref()
                .and_then(|p| p.steps().first().cloned());
            assert_eq!(
                at,
                AttributePath::attr(path).steps().first().cloned(),
                "{cfg:?}"
            );
        }
    }
}
