//! The checks of `copy_properties`: the names it maps and the label keys they make, and the keys of `extra_labels`
//! and `data` (bridge-wide and in `overrides`) that would set what a property maps (each an error at that key).

use std::collections::{BTreeMap, BTreeSet};

use super::{BridgeInput, PathBuild, Report};
use crate::domain::{
    problem::Step,
    properties::{self, PropertyCopy},
    selector::label_key,
};

fn at(attr: &'static str) -> Vec<Step> {
    super::at("copy_properties").then_attr(attr)
}

impl BridgeInput {
    /// `copy_properties` as the core's [`PropertyCopy`] (inactive without the block).
    pub(super) fn parse_copy_properties(&self, err: &mut impl Report) -> PropertyCopy {
        let Some(c) = &self.copy_properties else {
            return PropertyCopy::default();
        };
        let copy = PropertyCopy {
            names: c.names.clone().unwrap_or_default(),
            label_prefix: c
                .label_prefix
                .clone()
                .unwrap_or_else(|| properties::DEFAULT_LABEL_PREFIX.to_string()),
            kubernetes_version_as: c.kubernetes_version_as.clone(),
        };
        let prefix_ok = check_prefix(err, &copy.label_prefix);
        if copy.names.len() > properties::MAX_NAMES {
            err(
                at("names"),
                "Too many property names",
                format!(
                    "copy_properties.names lists {} names; at most {} (each is a label and a spec.data entry of \
                     every cluster).",
                    copy.names.len(),
                    properties::MAX_NAMES
                ),
            );
        }
        let mut seen = BTreeSet::new();
        for (i, name) in copy.names.iter().enumerate() {
            let path = at("names").then_index(i);
            if !seen.insert(name.as_str()) {
                err(
                    path,
                    "Duplicate property name",
                    format!("{name:?} is listed twice."),
                );
            } else if prefix_ok {
                check_name(err, path, &copy, name);
            }
        }
        if let Some(v) = &copy.kubernetes_version_as {
            if copy.names.contains(v) {
                err(
                    at("kubernetes_version_as"),
                    "Property name used twice",
                    format!(
                        "kubernetes_version_as {v:?} is also in copy_properties.names: the version and that \
                         property would write the same label and spec.data entry."
                    ),
                );
            } else if prefix_ok {
                check_name(err, at("kubernetes_version_as"), &copy, v);
            }
        }
        self.check_property_conflicts(err, &copy);
        copy
    }

    /// The keys of `extra_labels` and `data` (bridge-wide and of each override) that a property maps.
    fn check_property_conflicts(&self, err: &mut impl Report, copy: &PropertyCopy) {
        let labels: BTreeMap<String, &str> =
            copy.mapped().map(|n| (copy.label_key(n), n)).collect();
        let data: BTreeSet<&str> = copy.mapped().collect();
        let overrides = self.overrides.iter().flatten();
        let label_maps = [(super::at("extra_labels"), &self.extra_labels)]
            .into_iter()
            .chain(overrides.clone().map(|(k, o)| {
                (
                    super::at("overrides").then_key(k).then_attr("extra_labels"),
                    &o.extra_labels,
                )
            }));
        for (path, map) in label_maps {
            for key in map.iter().flatten().map(|(k, _)| k) {
                if let Some(name) = labels.get(key) {
                    err(
                        path.clone().then_key(key),
                        "Label set by copy_properties",
                        format!(
                            "copy_properties writes label {key:?} from the ClusterProfile's property {name:?}: \
                             remove it here, or map the property under another label_prefix."
                        ),
                    );
                }
            }
        }
        let data_maps = [(super::at("data"), &self.data)]
            .into_iter()
            .chain(overrides.map(|(k, o)| {
                (
                    super::at("overrides").then_key(k).then_attr("data"),
                    &o.data,
                )
            }));
        for (path, map) in data_maps {
            for key in map.iter().flatten().map(|(k, _)| k) {
                if data.contains(key.as_str()) {
                    err(
                        path.clone().then_key(key),
                        "spec.data entry set by copy_properties",
                        format!(
                            "copy_properties writes spec.data entry {key:?} from the ClusterProfile's property of \
                             that name: remove it here."
                        ),
                    );
                }
            }
        }
    }
}

/// Whether `label_prefix` can start a label key that is not Sveltos' or the bridge's own (an error at it when not).
fn check_prefix(err: &mut impl Report, prefix: &str) -> bool {
    let probe = format!("{prefix}x");
    let why = match label_key(&probe) {
        Err(_) => Some(
            "it must be the start of a label key: empty, a DNS subdomain followed by `/` (`inventory.example.com/`), \
             optionally followed by the start of a name (`inventory.example.com/inv-`), or such a name start alone"
                .to_string(),
        ),
        Ok(_) => properties::reserved_label(&probe).map(|r| format!("its labels would be reserved ones: {r}")),
    };
    if let Some(why) = &why {
        err(
            at("label_prefix"),
            "Invalid label_prefix",
            format!("label_prefix {:?}: {why}.", shorten(prefix)),
        );
    }
    why.is_none()
}

/// A property name: 1 to 253 characters, and its label key valid and not reserved.
fn check_name(err: &mut impl Report, path: Vec<Step>, copy: &PropertyCopy, name: &str) {
    let key = copy.label_key(name);
    let why = if name.is_empty() || name.len() > properties::MAX_NAME {
        Some(format!(
            "a property name has 1 to {} characters",
            properties::MAX_NAME
        ))
    } else if label_key(&key).is_err() {
        Some(format!(
            "its label key {:?} is not a valid label key (a name part of at most 63 letters, digits, '-', '_' or \
             '.', starting and ending with a letter or digit, after an optional DNS subdomain and '/')",
            shorten(&key)
        ))
    } else {
        properties::reserved_label(&key).map(|r| format!("its label key {key:?} is reserved: {r}"))
    };
    if let Some(why) = why {
        err(
            path,
            "Invalid property name",
            format!("Property {:?}: {why}.", shorten(name)),
        );
    }
}

/// At most 80 characters of `s`, for a message.
fn shorten(s: &str) -> String {
    s.chars().take(80).collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::domain::config::{OverrideInput, PropertyCopyInput, tests::shown, validate};

    fn config(names: &[&str]) -> BridgeInput {
        BridgeInput {
            name: "main".into(),
            copy_properties: Some(PropertyCopyInput {
                names: Some(names.iter().map(|n| n.to_string()).collect()),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    /// The attribute paths of the errors of `c`, as the CLI shows them.
    fn error_paths(c: &BridgeInput) -> Vec<String> {
        let problems = validate(c).unwrap_err();
        problems.iter().map(|p| shown(&p.path)).collect()
    }

    #[test]
    fn a_valid_block_maps_to_the_spec() {
        let mut c = config(&["location", "cluster.clusterset.k8s.io"]);
        c.copy_properties.as_mut().unwrap().kubernetes_version_as =
            Some("kubernetes-version".into());
        c.extra_labels = Some(BTreeMap::from([("location".into(), "x".into())]));
        c.data = Some(BTreeMap::from([("region".into(), "eu".into())]));
        let spec = validate(&c).unwrap();
        assert_eq!(
            spec.properties.names,
            ["location", "cluster.clusterset.k8s.io"]
        );
        assert_eq!(
            spec.properties.label_prefix,
            properties::DEFAULT_LABEL_PREFIX
        );
        assert_eq!(
            spec.properties.kubernetes_version_as.as_deref(),
            Some("kubernetes-version")
        );
        assert!(!validate(&config(&[])).unwrap().properties.active());
        assert!(
            !validate(&BridgeInput {
                name: "main".into(),
                ..Default::default()
            })
            .unwrap()
            .properties
            .active()
        );
    }

    #[test]
    fn a_conflict_with_extra_labels_or_data_is_an_error_at_that_key() {
        let mut c = config(&["location", "tier"]);
        c.extra_labels = Some(BTreeMap::from([(
            "property.clusterinventory.io/location".into(),
            "eu".into(),
        )]));
        c.data = Some(BTreeMap::from([("tier".into(), "gold".into())]));
        c.overrides = Some(BTreeMap::from([(
            "ns/c1".into(),
            OverrideInput {
                extra_labels: Some(BTreeMap::from([(
                    "property.clusterinventory.io/tier".into(),
                    "gold".into(),
                )])),
                data: Some(BTreeMap::from([("location".into(), "eu".into())])),
                ..Default::default()
            },
        )]));
        let paths = error_paths(&c);
        assert_eq!(paths.len(), 4, "{paths:?}");
        for want in [
            "extra_labels[\"property.clusterinventory.io/location\"]",
            "data[\"tier\"]",
            "overrides[\"ns/c1\"].extra_labels[\"property.clusterinventory.io/tier\"]",
            "overrides[\"ns/c1\"].data[\"location\"]",
        ] {
            assert!(paths.iter().any(|p| p == want), "{want} not in {paths:?}");
        }
    }

    #[test]
    fn names_and_prefixes_that_make_no_label_key_or_a_reserved_one_are_refused_at_their_path() {
        for (names, prefix, version, want) in [
            (vec!["bad name"], None, None, "copy_properties.names[0]"),
            (vec!["ok", "ok"], None, None, "copy_properties.names[1]"),
            (vec!["a/b"], None, None, "copy_properties.names[0]"),
            (
                vec!["k8s-version"],
                Some("projectsveltos.io/"),
                None,
                "copy_properties.label_prefix",
            ),
            (
                vec!["bridge"],
                Some("sveltos.clusterinventory.io/"),
                None,
                "copy_properties.label_prefix",
            ),
            (
                vec!["sveltos-agent"],
                Some(""),
                None,
                "copy_properties.names[0]",
            ),
            (
                vec!["x"],
                Some("Bad Prefix/"),
                None,
                "copy_properties.label_prefix",
            ),
            (
                vec!["x"],
                None,
                Some("x"),
                "copy_properties.kubernetes_version_as",
            ),
            (
                vec![],
                None,
                Some("a b"),
                "copy_properties.kubernetes_version_as",
            ),
        ] {
            let mut c = config(&names);
            let block = c.copy_properties.as_mut().unwrap();
            block.label_prefix = prefix.map(String::from);
            block.kubernetes_version_as = version.map(String::from);
            assert_eq!(error_paths(&c), [want], "{names:?} {prefix:?} {version:?}");
        }
        let many: Vec<String> = (0..=properties::MAX_NAMES)
            .map(|i| format!("p{i}"))
            .collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(error_paths(&config(&many)), ["copy_properties.names"]);
        // A prefix ending inside the name part is fine.
        let mut c = config(&["location"]);
        c.copy_properties.as_mut().unwrap().label_prefix =
            Some("inventory.example.com/inv-".into());
        assert!(validate(&c).is_ok());
    }
}
