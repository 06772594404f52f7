//! The computed `clusters` attribute: the state's record of the bridged clusters (identities, hashes and the managed
//! SveltosCluster fields, never credentials), written from the core's entries and read back.

use std::collections::BTreeMap;

use crate::{
    domain::{desired::ClusterEntry, managed_view::ManagedView},
    tfplugin::Value,
};

/// The `clusters` attribute value for these entries (pending credentials become unknown). The entries are consumed
/// one by one as their values are built, so the two are never both whole (megabytes at ten thousand clusters).
pub fn clusters_value(entries: BTreeMap<String, ClusterEntry>) -> Value {
    Value::map(entries.into_iter().map(|(k, e)| (k, entry_value(e))))
}

/// One entry of `clusters`.
fn entry_value(e: ClusterEntry) -> Value {
    let opt = |s: Option<String>| s.map_or(Value::Null, Value::string);
    let m = e.managed;
    let (sha, exp) = if e.credential_pending {
        (Value::unknown(), Value::unknown())
    } else {
        (opt(e.kubeconfig_sha256), opt(e.credential_expires_at))
    };
    Value::object([
        ("sveltos_cluster", opt(e.sveltos_cluster)),
        ("secret", opt(e.secret)),
        ("credential_source", Value::string(e.credential_source)),
        ("kubeconfig_sha256", sha),
        ("credential_expires_at", exp),
        ("labels", Value::string_map(e.labels)),
        ("annotations", Value::string_map(m.annotations)),
        ("paused", m.paused.map_or(Value::Null, Value::bool)),
        (
            "consecutive_failure_threshold",
            m.consecutive_failure_threshold
                .map_or(Value::Null, Value::int),
        ),
        ("active_window", window_value(m.active_window.as_ref())),
        ("data", Value::string_map(m.data)),
        ("config_sha256", Value::string(e.config_sha256)),
    ])
}

/// Reads a `clusters` value back (unknown hashes become `credential_pending`); `None` entries are wholly
/// unknown.
pub fn entries_from_value(v: &Value) -> BTreeMap<String, Option<ClusterEntry>> {
    let Some(m) = v.as_map() else {
        return BTreeMap::new();
    };
    m.iter()
        .map(|(k, e)| {
            if !e.is_known() {
                return (k.clone(), None);
            }
            let s = |n: &str| e.get_attr(n).as_str().map(String::from);
            let sha = e.get_attr("kubeconfig_sha256");
            (
                k.clone(),
                Some(ClusterEntry {
                    sveltos_cluster: s("sveltos_cluster"),
                    secret: s("secret"),
                    credential_source: s("credential_source").unwrap_or_default(),
                    kubeconfig_sha256: s("kubeconfig_sha256"),
                    credential_expires_at: s("credential_expires_at"),
                    labels: e.get_attr("labels").as_string_map(),
                    config_sha256: s("config_sha256").unwrap_or_default(),
                    managed: managed_of(e),
                    credential_pending: !sha.is_known(),
                }),
            )
        })
        .collect()
}

/// The `active_window` of an entry: `{from, to}`, or null.
fn window_value(window: Option<&(String, String)>) -> Value {
    window.map_or(Value::Null, |(from, to)| {
        Value::object([("from", Value::string(from)), ("to", Value::string(to))])
    })
}

/// The managed fields of an entry read back (absent in a state written before they existed: empty).
fn managed_of(e: &Value) -> ManagedView {
    let w = e.get_attr("active_window");
    ManagedView {
        annotations: e.get_attr("annotations").as_string_map(),
        paused: e.get_attr("paused").as_bool(),
        consecutive_failure_threshold: e.get_attr("consecutive_failure_threshold").as_i64(),
        active_window: w
            .get_attr("from")
            .as_str()
            .zip(w.get_attr("to").as_str())
            .map(|(f, t)| (f.to_string(), t.to_string())),
        data: e.get_attr("data").as_string_map(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn every_field_of_an_entry_is_read_back_as_written() {
        let full = ClusterEntry {
            sveltos_cluster: Some("ns/c1".into()),
            secret: Some("ns/c1-sveltos-kubeconfig".into()),
            credential_source: "secret:ns/s#Config".into(),
            kubeconfig_sha256: Some("ab".into()),
            credential_expires_at: Some("2030-01-01T00:00:00Z".into()),
            labels: strings(&[("env", "prod")]),
            config_sha256: "cd".into(),
            managed: ManagedView {
                annotations: strings(&[("note", "x")]),
                paused: Some(true),
                consecutive_failure_threshold: Some(3),
                active_window: Some(("0 8 * * *".into(), "0 18 * * *".into())),
                data: strings(&[("region", "eu-1")]),
            },
            credential_pending: false,
        };
        let pending = ClusterEntry {
            sveltos_cluster: Some("ns/c2".into()),
            credential_pending: true,
            ..Default::default()
        };
        let entries = BTreeMap::from([("ns/c1".to_string(), full), ("ns/c2".to_string(), pending)]);
        let back: BTreeMap<String, ClusterEntry> =
            entries_from_value(&clusters_value(entries.clone()))
                .into_iter()
                .map(|(k, e)| (k, e.expect("known")))
                .collect();
        assert_eq!(back, entries);
    }
}
