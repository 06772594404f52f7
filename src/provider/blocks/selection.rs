//! The selection arguments the data sources share (`namespaces`, `label_selector`) and the identity of one
//! ClusterProfile (`namespace`, `name`): one validation each, with attribute paths. The data sources read them
//! as fields of their typed configurations.

use crate::{
    domain::{
        names::{NameError, dns1123_label, dns1123_subdomain},
        selector::Selector,
    },
    tfplugin::{AttributePath, Diagnostics, schema::Attribute},
};

/// `namespaces`, sorted and without duplicates; every element must be a namespace name.
pub fn namespaces(given: Option<&[String]>, diags: &mut Diagnostics) -> Vec<String> {
    let given = given.unwrap_or_default();
    for (i, ns) in given.iter().enumerate() {
        if let Err(e) = dns1123_label(ns) {
            diags.attribute_error(
                AttributePath::attr("namespaces").then_index(i64::try_from(i).unwrap_or(i64::MAX)),
                "Invalid namespaces",
                format!("Element {i}: {e}."),
            );
        }
    }
    let mut namespaces = given.to_vec();
    namespaces.sort();
    namespaces.dedup();
    namespaces
}

/// `label_selector`, parsed.
pub fn label_selector(given: Option<&str>, diags: &mut Diagnostics) -> Option<Selector> {
    match Selector::parse(given?) {
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
pub fn profile_identity_attributes() -> [Attribute; 2] {
    [
        Attribute::string("namespace")
            .required()
            .markdown_description("Namespace of the ClusterProfile."),
        Attribute::string("name")
            .required()
            .markdown_description("Name of the ClusterProfile."),
    ]
}

/// `namespace` and `name` of one ClusterProfile (the single data source, the ephemeral credentials), validated as
/// Kubernetes validates them (`None`: not known yet, checked later).
pub fn profile_identity(namespace: Option<&str>, name: Option<&str>) -> Diagnostics {
    let mut diags = Diagnostics::new();
    type Rule = fn(&str) -> Result<(), NameError>;
    let rules: [(&str, Option<&str>, Rule); 2] = [
        ("namespace", namespace, dns1123_label),
        ("name", name, dns1123_subdomain),
    ];
    for (attr, v, rule) in rules {
        if let Some(v) = v
            && let Err(e) = rule(v)
        {
            diags.attribute_error(
                AttributePath::attr(attr),
                format!("Invalid {attr}"),
                format!("The ClusterProfile {attr} {e}."),
            );
        }
    }
    diags
}
