//! Inventory facts into Sveltos (`copy_properties`): the properties a ClusterProfile reports in
//! `status.properties` (KEP-4322: a list of `{name, value}`, such as the cluster's location) and its
//! `status.version.kubernetes`, as SveltosCluster labels (which Sveltos profiles select by) and `spec.data` entries
//! (which Sveltos templates read as `.Cluster.spec.data.<name>`).
//!
//! Whoever may write a ClusterProfile's status writes them, so only the names the operator lists are read, each
//! within the KEP's bounds (a value of 1 to [`MAX_VALUE`] bytes, reported once), and a property outside them is its
//! cluster's problem ([`facts`] says why; the plan keeps that cluster as it is). A value that is not a valid label
//! value (more than 63 characters, or characters a label value cannot hold) gets no label: it is dropped, never
//! rewritten or hashed (a selector written for the value would never match a rewritten one), and the plan warns
//! naming the cluster; `spec.data` still gets the value in full.

use std::collections::BTreeMap;

use super::selector::label_value;
use crate::api::ClusterProfile;

/// The label key prefix of `copy_properties` by default: the label of property `location` is
/// `property.clusterinventory.io/location`.
pub const DEFAULT_LABEL_PREFIX: &str = "property.clusterinventory.io/";
/// Longest property value mapped, in bytes (the KEP's bound on `status.properties[].value`; the same for
/// `status.version.kubernetes`, which the KEP does not bound).
pub const MAX_VALUE: usize = 1024;
/// Most property names one bridge maps (each is a label and a `spec.data` entry of every cluster).
pub const MAX_NAMES: usize = 64;
/// Longest property name (the KEP's bound on `status.properties[].name`).
pub const MAX_NAME: usize = 253;

/// Which properties become labels and `spec.data` entries (`copy_properties`). Inactive by default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PropertyCopy {
    /// Names of `status.properties` to map (exact names).
    pub names: Vec<String>,
    /// Prepended to a property's name to make its label key.
    pub label_prefix: String,
    /// `status.version.kubernetes` is mapped as if it were a property of this name.
    pub kubernetes_version_as: Option<String>,
}

impl Default for PropertyCopy {
    fn default() -> Self {
        Self {
            names: Vec::new(),
            label_prefix: DEFAULT_LABEL_PREFIX.to_string(),
            kubernetes_version_as: None,
        }
    }
}

impl PropertyCopy {
    /// Whether anything is mapped.
    pub fn active(&self) -> bool {
        !self.names.is_empty() || self.kubernetes_version_as.is_some()
    }

    /// The label key of property `name`.
    pub fn label_key(&self, name: &str) -> String {
        format!("{}{name}", self.label_prefix)
    }

    /// Every name mapped: the listed properties, then the version's name.
    pub fn mapped(&self) -> impl Iterator<Item = &str> {
        self.names
            .iter()
            .chain(self.kubernetes_version_as.as_ref())
            .map(String::as_str)
    }

    /// Whether a ClusterProfile label with this key is kept from being copied: the labels under `label_prefix`
    /// (with an empty prefix, the mapped labels' keys) are the properties' to decide, whether a property is
    /// reported or not, so a label on the ClusterProfile cannot stand in for a property.
    pub fn reserves(&self, key: &str) -> bool {
        if !self.active() {
            false
        } else if self.label_prefix.is_empty() {
            self.mapped().any(|n| n == key)
        } else {
            key.starts_with(&self.label_prefix)
        }
    }
}

/// Why a label key may not be written by `copy_properties`, or `None` when it may: keys under Sveltos' own
/// `projectsveltos.io/` (and its subdomains) and `sveltos-agent`, which Sveltos writes and selects by, and keys under
/// the bridge's own `sveltos.clusterinventory.io/`.
pub fn reserved_label(key: &str) -> Option<&'static str> {
    let prefix = key.split_once('/').map(|(p, _)| p);
    match prefix {
        Some(p) if p == "projectsveltos.io" || p.ends_with(".projectsveltos.io") => {
            Some("Sveltos' own labels (projectsveltos.io/) are written by Sveltos")
        }
        Some("sveltos.clusterinventory.io") => {
            Some("the bridge's own labels (sveltos.clusterinventory.io/) are its bookkeeping")
        }
        None if key == "sveltos-agent" => {
            Some("Sveltos' own sveltos-agent label is written by Sveltos")
        }
        _ => None,
    }
}

/// What one ClusterProfile's mapped properties give its SveltosCluster.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    /// Labels, by key (`label_prefix` + name), for the values that are valid label values.
    pub labels: BTreeMap<String, String>,
    /// `spec.data` entries, by property name, every value in full.
    pub data: BTreeMap<String, String>,
    /// The mapped properties whose value is not a valid label value, with the value escaped and cut to 64
    /// characters: they have no label (their `spec.data` entry holds the value).
    pub unlabelled: BTreeMap<String, String>,
}

/// The facts `copy` maps from `profile`, or why they cannot be mapped (escaped and bounded): a mapped property
/// reported twice, with a value of 0 or more than [`MAX_VALUE`] bytes, or an entry of `status.properties` that does
/// not decode and is, or may be, a mapped one. A property not reported maps to nothing.
pub fn facts(copy: &PropertyCopy, profile: &ClusterProfile) -> Result<Facts, String> {
    let mut out = Facts::default();
    if !copy.active() {
        return Ok(out);
    }
    let Some(status) = profile.status.as_ref() else {
        return Ok(out);
    };
    if !copy.names.is_empty()
        && let Some(p) = status
            .properties
            .iter()
            .find(|p| p.name.is_empty() && p.unreadable.is_some())
    {
        let why = p.unreadable.as_deref().unwrap_or_default();
        return Err(format!(
            "status.properties cannot be read: {}",
            super::text::shown(why, 200)
        ));
    }
    for name in &copy.names {
        let mut found = status.properties.iter().filter(|p| p.name == *name);
        let Some(p) = found.next() else { continue };
        if found.next().is_some() {
            return Err(format!("property {name:?} is reported more than once"));
        }
        if let Some(why) = &p.unreadable {
            return Err(format!(
                "property {name:?} cannot be read: {}",
                super::text::shown(why, 200)
            ));
        }
        add(copy, &mut out, name, &p.value)?;
    }
    if let Some(name) = &copy.kubernetes_version_as
        && let Some(v) = status.version.as_ref().and_then(|v| v.kubernetes.as_ref())
        && !v.is_empty()
    {
        add(copy, &mut out, name, v)?;
    }
    Ok(out)
}

/// Adds property `name` of value `value` to `out`, or says why its value is out of bounds.
fn add(copy: &PropertyCopy, out: &mut Facts, name: &str, value: &str) -> Result<(), String> {
    if value.is_empty() || value.len() > MAX_VALUE {
        return Err(format!(
            "property {name:?} has a value of {} bytes (1 to {MAX_VALUE})",
            value.len()
        ));
    }
    if label_value(value).is_ok() {
        out.labels.insert(copy.label_key(name), value.to_string());
    } else {
        out.unlabelled
            .insert(name.to_string(), super::text::shown(value, 64));
    }
    out.data.insert(name.to_string(), value.to_string());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{ClusterVersion, Property};
    use crate::domain::testutil::profile;

    fn copy(names: &[&str]) -> PropertyCopy {
        PropertyCopy {
            names: names.iter().map(|n| n.to_string()).collect(),
            ..PropertyCopy::default()
        }
    }

    fn with_properties(props: &[(&str, &str)]) -> ClusterProfile {
        let mut p = profile("team-a", "c1", &[]);
        let status = p.status.get_or_insert_with(Default::default);
        status.properties = props
            .iter()
            .map(|(n, v)| Property {
                name: n.to_string(),
                value: v.to_string(),
                ..Property::default()
            })
            .collect();
        p
    }

    #[test]
    fn valid_label_values_become_labels_and_every_value_data() {
        let long = "x".repeat(64);
        let p = with_properties(&[
            ("location", "eu-west-1"),
            ("zone", "eu west 1a"),
            ("notes", &long),
            ("version.tag", "v1.31.2_k3s1"),
            ("secret-ish", "not listed"),
        ]);
        let f = facts(
            &copy(&["location", "zone", "notes", "version.tag", "absent"]),
            &p,
        )
        .unwrap();
        assert_eq!(
            f.labels,
            BTreeMap::from([
                (
                    "property.clusterinventory.io/location".to_string(),
                    "eu-west-1".to_string()
                ),
                (
                    "property.clusterinventory.io/version.tag".to_string(),
                    "v1.31.2_k3s1".to_string()
                ),
            ])
        );
        // Dropped, not rewritten: a space, and 64 characters (one past a label value's 63).
        assert_eq!(
            f.unlabelled.keys().collect::<Vec<_>>(),
            ["notes", "zone"],
            "{f:?}"
        );
        assert_eq!(f.unlabelled["zone"], "eu west 1a");
        assert_eq!(f.data["zone"], "eu west 1a");
        assert_eq!(f.data["notes"], long);
        assert_eq!(f.data.len(), 4, "only listed names, only reported ones");
        assert!(!f.data.contains_key("secret-ish") && !f.data.contains_key("absent"));
    }

    #[test]
    fn label_value_syntax_is_the_api_servers() {
        let ok = ["a", "A-b_c.d", "0", &"x".repeat(63)];
        let dropped = [
            "-a",
            "a-",
            "a b",
            "a/b",
            "é",
            "a\u{1b}[31m",
            "a\nb",
            "v1.2+k3s",
            &"x".repeat(64),
        ];
        for v in ok {
            let f = facts(&copy(&["p"]), &with_properties(&[("p", v)])).unwrap();
            assert_eq!(f.labels.len(), 1, "{v:?}");
        }
        for v in dropped {
            let f = facts(&copy(&["p"]), &with_properties(&[("p", v)])).unwrap();
            assert!(f.labels.is_empty(), "{v:?}");
            assert_eq!(f.data["p"], v, "spec.data holds the value in full");
            // What a diagnostic shows is escaped.
            assert!(
                f.unlabelled["p"]
                    .chars()
                    .all(|c| c.is_ascii_graphic() || c == ' '),
                "{:?}",
                f.unlabelled
            );
        }
    }

    #[test]
    fn a_property_out_of_bounds_is_its_clusters_problem() {
        let big = "x".repeat(MAX_VALUE + 1);
        for (props, needle) in [
            (vec![("p", "a"), ("p", "b")], "more than once"),
            (vec![("p", "")], "0 bytes"),
            (vec![("p", big.as_str())], "1025 bytes"),
        ] {
            let e = facts(&copy(&["p"]), &with_properties(&props)).unwrap_err();
            assert!(e.contains(needle), "{e}");
        }
        // Out of bounds, but not listed: nothing to say.
        let p = with_properties(&[("q", big.as_str()), ("q", "a"), ("p", "ok")]);
        assert_eq!(facts(&copy(&["p"]), &p).unwrap().data["p"], "ok");
        let mut version = with_properties(&[]);
        version.status.as_mut().unwrap().version = Some(ClusterVersion {
            kubernetes: Some(big.clone()),
        });
        let c = PropertyCopy {
            kubernetes_version_as: Some("kubernetes-version".into()),
            ..PropertyCopy::default()
        };
        assert!(facts(&c, &version).is_err());
    }

    #[test]
    fn properties_are_decoded_entry_by_entry_and_counted() {
        let decode = |properties: serde_json::Value| -> ClusterProfile {
            serde_json::from_value(serde_json::json!({
                "apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ClusterProfile",
                "metadata": {"name": "c1", "namespace": "team-a"},
                "spec": {"clusterManager": {"name": "m"}},
                "status": {"properties": properties},
            }))
            .expect("a ClusterProfile with a bad property still decodes")
        };
        // A bad entry (a value that is not a string, a bad timestamp) is the problem of its property only.
        let p = decode(serde_json::json!([
            {"name": "location", "value": "eu"},
            {"name": "zone", "value": 7},
            {"name": "rack", "value": "r1", "lastObservedTime": "yesterday"},
            {"value": "nameless"},
        ]));
        let props = &p.status.as_ref().unwrap().properties;
        assert_eq!(props.len(), 4);
        // A nameless entry may be any listed property.
        for name in ["location", "rack"] {
            let e = facts(&copy(&[name]), &p).unwrap_err();
            assert!(
                e.starts_with("status.properties cannot be read: missing field"),
                "{e}"
            );
        }
        let p = decode(serde_json::json!([
            {"name": "location", "value": "eu"},
            {"name": "zone", "value": 7},
        ]));
        assert_eq!(
            facts(&copy(&["location"]), &p).unwrap().data["location"],
            "eu"
        );
        let e = facts(&copy(&["zone"]), &p).unwrap_err();
        assert!(
            e.starts_with("property \"zone\" cannot be read: invalid type"),
            "{e}"
        );
        // null is no properties; past MAX_PROPERTIES, one nameless entry stands for the rest.
        let p = decode(serde_json::Value::Null);
        assert!(p.status.unwrap().properties.is_empty());
        let many: Vec<serde_json::Value> = (0..=crate::api::MAX_PROPERTIES)
            .map(|i| serde_json::json!({"name": format!("p{i}"), "value": "v"}))
            .collect();
        let p = decode(serde_json::Value::Array(many));
        assert_eq!(
            p.status.as_ref().unwrap().properties.len(),
            crate::api::MAX_PROPERTIES + 1
        );
        let e = facts(&copy(&["p0"]), &p).unwrap_err();
        assert!(e.contains("1025 entries"), "{e}");
        // Only the version: the properties are not looked at.
        let c = PropertyCopy {
            kubernetes_version_as: Some("kubernetes-version".into()),
            ..PropertyCopy::default()
        };
        assert!(facts(&c, &p).unwrap().data.is_empty());
    }

    #[test]
    fn the_version_maps_as_a_property_of_its_name() {
        let mut p = with_properties(&[("location", "eu")]);
        p.status.as_mut().unwrap().version = Some(ClusterVersion {
            kubernetes: Some("v1.31.2+k3s1".into()),
        });
        let c = PropertyCopy {
            names: vec!["location".into()],
            label_prefix: "inv.example.com/".into(),
            kubernetes_version_as: Some("k8s".into()),
        };
        let f = facts(&c, &p).unwrap();
        assert_eq!(f.data["k8s"], "v1.31.2+k3s1");
        assert_eq!(
            f.labels.get("inv.example.com/location").map(String::as_str),
            Some("eu")
        );
        assert!(f.unlabelled.contains_key("k8s"), "'+' is no label value");
        p.status.as_mut().unwrap().version = Some(ClusterVersion {
            kubernetes: Some("v1.31.2".into()),
        });
        assert_eq!(
            facts(&c, &p).unwrap().labels["inv.example.com/k8s"],
            "v1.31.2"
        );
    }

    #[test]
    fn reserved_keys_and_labels() {
        let c = copy(&["location"]);
        assert!(c.reserves("property.clusterinventory.io/location"));
        assert!(c.reserves("property.clusterinventory.io/other"));
        assert!(
            !c.reserves("location")
                && !PropertyCopy::default().reserves("property.clusterinventory.io/x")
        );
        let bare = PropertyCopy {
            label_prefix: String::new(),
            ..copy(&["location"])
        };
        assert!(bare.reserves("location") && !bare.reserves("zone"));
        for k in [
            "projectsveltos.io/k8s-version",
            "x.projectsveltos.io/a",
            "sveltos-agent",
            "sveltos.clusterinventory.io/bridge",
        ] {
            assert!(reserved_label(k).is_some(), "{k}");
        }
        for k in [
            "property.clusterinventory.io/location",
            "location",
            "myprojectsveltos.io/a",
        ] {
            assert!(reserved_label(k).is_none(), "{k}");
        }
    }
}
