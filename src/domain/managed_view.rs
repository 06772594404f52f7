//! The managed SveltosCluster fields in words, for the state entry of a cluster: what a reviewer reads in a plan
//! (`paused = false -> true`) where `config_sha256` only says that something changed. Built by the same function
//! from what the bridge would write and from what exists, so equal fields show no change.
//!
//! Annotations and the window's schedules reach the state and may come from a tenant (a ClusterProfile's display
//! name, a SveltosCluster someone else patched): each value is escaped and bounded ([`shown`]), and at most
//! [`MAX_SHOWN_ANNOTATIONS`] are listed. The hash still covers every field in full.

use std::collections::BTreeMap;

use super::{BRIDGE_CONFIG_ANNOTATION, ownership::MARK_ANNOTATION, text::shown};
use crate::api::{SveltosClusterSpec, keys};

/// Longest annotation value or schedule shown, in characters of the original text.
pub const SHOWN_VALUE: usize = 256;
/// Most annotations shown per cluster (the first by key).
pub const MAX_SHOWN_ANNOTATIONS: usize = 64;

/// The managed SveltosCluster fields a plan shows per cluster (besides its `labels`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ManagedView {
    /// The annotations the bridge sets (`extra_annotations`, the display name, the token renewal record), without
    /// its bookkeeping (source profile, run mark, configuration record).
    pub annotations: BTreeMap<String, String>,
    /// `spec.paused` as the bridge sets it (`None`: not set by the bridge).
    pub paused: Option<bool>,
    /// `spec.consecutiveFailureThreshold` as the bridge sets it.
    pub consecutive_failure_threshold: Option<i64>,
    /// `spec.activeWindow`: `(from, to)`.
    pub active_window: Option<(String, String)>,
    /// `spec.data` as the bridge sets it (`data`, `overrides[...].data`, `copy_properties`): keys and values
    /// escaped and cut to [`SHOWN_VALUE`] characters, at most [`MAX_SHOWN_ANNOTATIONS`] entries (the first by key).
    pub data: BTreeMap<String, String>,
}

impl ManagedView {
    /// The view of `annotations` and `spec` (the fields the bridge manages, as [`super::desired::config_sha256`]
    /// hashes them).
    pub fn of(annotations: &BTreeMap<String, String>, spec: &SveltosClusterSpec) -> Self {
        let bookkeeping = [
            keys::SOURCE_ANNOTATION,
            MARK_ANNOTATION,
            BRIDGE_CONFIG_ANNOTATION,
        ];
        let annotations = annotations
            .iter()
            .filter(|(k, _)| !bookkeeping.contains(&k.as_str()))
            .take(MAX_SHOWN_ANNOTATIONS)
            .map(|(k, v)| (shown(k, SHOWN_VALUE), shown(v, SHOWN_VALUE)))
            .collect();
        let data = spec
            .data
            .iter()
            .flatten()
            .take(MAX_SHOWN_ANNOTATIONS)
            .map(|(k, v)| (shown(k, SHOWN_VALUE), shown(v, SHOWN_VALUE)))
            .collect();
        Self {
            annotations,
            paused: spec.paused,
            consecutive_failure_threshold: spec.consecutive_failure_threshold,
            active_window: spec
                .active_window
                .as_ref()
                .map(|w| (shown(&w.from, SHOWN_VALUE), shown(&w.to, SHOWN_VALUE))),
            data,
        }
    }

    /// The names of the fields that differ between `self` (before) and `other` (after).
    pub fn changed(&self, other: &Self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.annotations != other.annotations {
            out.push("annotations");
        }
        if self.paused != other.paused {
            out.push("paused");
        }
        if self.consecutive_failure_threshold != other.consecutive_failure_threshold {
            out.push("consecutive_failure_threshold");
        }
        if self.active_window != other.active_window {
            out.push("active_window");
        }
        if self.data != other.data {
            out.push("data");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::ActiveWindow;

    #[test]
    fn shows_what_the_bridge_sets_without_its_bookkeeping_escaped_and_bounded() {
        let annotations = BTreeMap::from([
            (keys::SOURCE_ANNOTATION.to_string(), "a/c1".to_string()),
            (MARK_ANNOTATION.to_string(), "f00".to_string()),
            (BRIDGE_CONFIG_ANNOTATION.to_string(), "{}".to_string()),
            ("team".to_string(), "a".to_string()),
            (
                keys::DISPLAY_NAME_ANNOTATION.to_string(),
                format!("\u{1b}[31m{}", "x".repeat(10_000)),
            ),
        ]);
        let spec = SveltosClusterSpec {
            paused: Some(true),
            consecutive_failure_threshold: Some(3),
            active_window: Some(ActiveWindow {
                from: "0 1 * * *".into(),
                to: "0 2 * * *\n".into(),
            }),
            ..Default::default()
        };
        let v = ManagedView::of(&annotations, &spec);
        assert_eq!(
            v.annotations.keys().collect::<Vec<_>>(),
            [keys::DISPLAY_NAME_ANNOTATION, "team"]
        );
        let display = &v.annotations[keys::DISPLAY_NAME_ANNOTATION];
        assert!(display.starts_with("\\u{1b}[31m") && display.ends_with('…'));
        assert!(display.chars().count() <= SHOWN_VALUE + 10, "{display}");
        assert_eq!(v.paused, Some(true));
        assert_eq!(v.consecutive_failure_threshold, Some(3));
        assert_eq!(
            v.active_window,
            Some(("0 1 * * *".into(), "0 2 * * *\\n".into()))
        );
        assert!(v.changed(&v.clone()).is_empty());
        let other = ManagedView {
            paused: None,
            ..v.clone()
        };
        assert_eq!(v.changed(&other), ["paused"]);
        let many: BTreeMap<String, String> = (0..1000)
            .map(|i| (format!("a{i:04}"), "v".to_string()))
            .collect();
        assert_eq!(
            ManagedView::of(&many, &spec).annotations.len(),
            MAX_SHOWN_ANNOTATIONS
        );
        let with_data = SveltosClusterSpec {
            data: Some(BTreeMap::from([(
                "location".to_string(),
                format!("eu\u{1b}[31m{}", "x".repeat(2000)),
            )])),
            ..spec.clone()
        };
        let d = ManagedView::of(&annotations, &with_data);
        assert!(
            d.data["location"].starts_with("eu\\u{1b}[31m") && d.data["location"].ends_with('…')
        );
        assert_eq!(v.changed(&d), ["data"]);
    }
}
