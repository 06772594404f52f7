//! The selection arguments the data sources share (`namespaces`, `label_selector`): one reading and one
//! validation, with attribute paths.

use crate::{
    bridge::{names::dns1123_label, selector::Selector},
    tfplugin::{AttributePath, Diagnostics, Value},
};

/// `namespaces`, sorted and without duplicates; every element must be a namespace name.
pub fn namespaces(config: &Value, diags: &mut Diagnostics) -> Vec<String> {
    let given = config.get_attr("namespaces").as_string_vec();
    for (i, ns) in given.iter().enumerate() {
        if let Err(e) = dns1123_label(ns) {
            diags.attribute_error(
                AttributePath::attr("namespaces").then_index(i64::try_from(i).unwrap_or(i64::MAX)),
                "Invalid namespaces",
                format!("Element {i}: {e}."),
            );
        }
    }
    let mut namespaces = given;
    namespaces.sort();
    namespaces.dedup();
    namespaces
}

/// `label_selector`, parsed.
pub fn label_selector(config: &Value, diags: &mut Diagnostics) -> Option<Selector> {
    let s = config.get_attr("label_selector").as_str()?;
    match Selector::parse(s) {
        Ok(sel) => Some(sel),
        Err(e) => {
            diags.attribute_error(
                AttributePath::attr("label_selector"),
                "Invalid label selector",
                e.to_string(),
            );
            None
        }
    }
}

/// The required `namespace` and `name` attributes naming one ClusterProfile (the single data source, the
/// ephemeral credentials).
pub fn profile_identity_attributes() -> [crate::tfplugin::schema::Attribute; 2] {
    use crate::tfplugin::schema::Attribute;
    [
        Attribute::string("namespace")
            .required()
            .markdown_description("Namespace of the ClusterProfile."),
        Attribute::string("name")
            .required()
            .markdown_description("Name of the ClusterProfile."),
    ]
}

/// `config` with the attributes `attrs` that are not wholly known set to null: validation checks only known
/// values; unknown ones are checked at read time.
pub fn known_only(config: &Value, attrs: &[&str]) -> Value {
    let mut known = config.clone();
    for attr in attrs {
        if !config.get_attr(attr).is_wholly_known() {
            known.set_attr(*attr, Value::Null);
        }
    }
    known
}

/// `namespace` and `name` of one ClusterProfile (the single data source, the ephemeral credentials), validated as
/// Kubernetes validates them, and the `credentials` block.
pub fn profile_identity(config: &Value) -> Diagnostics {
    let mut diags = Diagnostics::new();
    type Rule = fn(&str) -> Result<(), crate::bridge::names::NameError>;
    let rules: [(&str, Rule); 2] = [
        ("namespace", dns1123_label),
        ("name", crate::bridge::names::dns1123_subdomain),
    ];
    for (attr, rule) in rules {
        if let Some(v) = config.get_attr(attr).as_str()
            && let Err(e) = rule(v)
        {
            diags.attribute_error(
                AttributePath::attr(attr),
                format!("Invalid {attr}"),
                format!("The ClusterProfile {attr} {e}."),
            );
        }
    }
    diags.extend(super::credentials::check(config.get_attr(super::credentials::BLOCK)).into_vec());
    diags
}
