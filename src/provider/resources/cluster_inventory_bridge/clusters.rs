//! The computed `clusters` attribute: the state's record of the bridged clusters (identities, hashes and the managed
//! SveltosCluster fields, never credentials), written from the core's entries and read back.
//!
//! Ten thousand clusters are megabytes of state: a refresh or a plan whose entries are those the state already
//! holds answers the attribute with the bytes it received ([`ClustersAnswer`]), so neither side of the plugin
//! layer decodes or encodes it again.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

use crate::{
    domain::{
        desired::ClusterEntry,
        managed_view::ManagedView,
        ownership::{Answered, Ledger},
        sha256_hex,
    },
    tfplugin::{AttributeBytes, Value},
};

use super::schema::{schema, with_clusters};

/// The version of the mapping from entries to the attribute's value ([`clusters_value`]): part of every
/// [`clusters_digest`], so that a provider that maps the same entries to another value never answers with the
/// bytes an earlier one sent. Change it with the mapping.
const CLUSTERS_FORMAT: &[u8] = b"sveltos_cluster_inventory_bridge.clusters v1";

/// How a refresh, a plan or an apply answers `clusters`.
pub struct ClustersAnswer {
    /// The attribute's value, or null when given as bytes.
    value: Value,
    /// The attribute as bytes.
    bytes: Option<AttributeBytes>,
    /// The record of this answer, for the private state ([`ClustersAnswer::recorded_in`]).
    record: Option<Answered>,
}

/// What an earlier answer of `clusters` left: its record in the private state, and the SHA-256 of the bytes the
/// request carried for the attribute.
#[derive(Clone, Copy, Default)]
pub struct Earlier<'a> {
    /// The record kept with the private state (see [`Answered`]).
    pub record: Option<&'a Answered>,
    /// The digest of the `clusters` bytes received.
    pub received_sha256: Option<&'a str>,
}

/// When the answer encodes `clusters` itself, to record the digest of its bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Recording {
    /// The answer's private state records it: the value is encoded here.
    Recorded,
    /// Nothing records it (a plan's private state goes to its apply only): the plugin layer encodes the value.
    Unrecorded,
}

impl ClustersAnswer {
    /// The answer for `entries`: the bytes received when `earlier` recorded an answer of entries with the same
    /// digest in bytes with the digest of those received (see [`Answered`]); otherwise the value, encoded here
    /// with its record when `recording`.
    pub fn of(
        entries: BTreeMap<String, ClusterEntry>,
        earlier: Earlier<'_>,
        recording: Recording,
    ) -> Self {
        let entries_sha256 = clusters_digest(&entries);
        if let (Some(record), Some(received)) = (earlier.record, earlier.received_sha256)
            && record.entries_sha256 == entries_sha256
            && record.bytes_sha256 == received
        {
            return Self {
                value: Value::Null,
                bytes: Some(AttributeBytes::Received),
                record: Some(record.clone()),
            };
        }
        let value = clusters_value(entries);
        let encoded = match recording {
            Recording::Recorded => schema().encode_attribute("clusters", &value).ok(),
            Recording::Unrecorded => None,
        };
        // Not encoded here (or not encodable: the plugin layer then says what does not fit, where).
        let Some(bytes) = encoded else {
            return Self {
                value,
                bytes: None,
                record: None,
            };
        };
        let record = Answered {
            entries_sha256,
            bytes_sha256: sha256_hex(bytes.bytes()),
        };
        Self {
            value: Value::Null,
            bytes: Some(AttributeBytes::Encoded(bytes)),
            record: Some(record),
        }
    }

    /// `ledger` recording this answer, when it has a record.
    pub fn recorded_in(&self, ledger: Ledger) -> Ledger {
        match &self.record {
            Some(record) => ledger.with_answered(record.clone()),
            None => ledger,
        }
    }

    /// `state` answering this (see [`with_clusters`]), with the attributes given as bytes.
    pub fn into_state(
        self,
        state: Value,
        bridge: &str,
    ) -> (Value, Vec<(&'static str, AttributeBytes)>) {
        let state = with_clusters(state, bridge, self.value);
        let bytes = self.bytes.map(|b| ("clusters", b)).into_iter().collect();
        (state, bytes)
    }
}

/// The SHA-256 (hex) of `entries` as [`clusters_value`] maps them: equal for entries that map to the same value,
/// different (but for a collision) for entries that do not. Every field is fed with its length or presence, so no
/// two entries feed the same bytes.
pub fn clusters_digest(entries: &BTreeMap<String, ClusterEntry>) -> String {
    let mut h = Feed(Sha256::new());
    h.0.update(CLUSTERS_FORMAT);
    h.len(entries.len());
    for (key, e) in entries {
        // Every field, by name: a field added to either struct does not compile here until it is hashed.
        let ClusterEntry {
            sveltos_cluster,
            secret,
            credential_source,
            kubeconfig_sha256,
            credential_expires_at,
            labels,
            config_sha256,
            managed,
            credential_pending,
        } = e;
        let ManagedView {
            annotations,
            paused,
            consecutive_failure_threshold,
            active_window,
            data,
        } = managed;
        h.str(key);
        h.opt(sveltos_cluster.as_deref());
        h.opt(secret.as_deref());
        h.str(credential_source);
        // A pending credential's hash and expiry are unknown, whatever the entry holds.
        h.flag(*credential_pending);
        if !credential_pending {
            h.opt(kubeconfig_sha256.as_deref());
            h.opt(credential_expires_at.as_deref());
        }
        h.map(labels);
        h.map(annotations);
        h.opt(paused.map(|p| if p { "true" } else { "false" }));
        h.opt(
            consecutive_failure_threshold
                .map(|n| n.to_string())
                .as_deref(),
        );
        h.flag(active_window.is_some());
        if let Some((from, to)) = active_window {
            h.str(from);
            h.str(to);
        }
        h.map(data);
        h.str(config_sha256);
    }
    hex::encode(h.0.finalize())
}

/// A SHA-256 fed unambiguous fields.
struct Feed(Sha256);

impl Feed {
    fn len(&mut self, n: usize) {
        self.0.update((n as u64).to_le_bytes());
    }

    fn flag(&mut self, b: bool) {
        self.0.update([u8::from(b)]);
    }

    fn str(&mut self, s: &str) {
        self.len(s.len());
        self.0.update(s.as_bytes());
    }

    fn opt(&mut self, s: Option<&str>) {
        self.flag(s.is_some());
        if let Some(s) = s {
            self.str(s);
        }
    }

    fn map(&mut self, m: &BTreeMap<String, String>) {
        self.len(m.len());
        for (k, v) in m {
            self.str(k);
            self.str(v);
        }
    }
}

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

    fn full_entry() -> ClusterEntry {
        ClusterEntry {
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
        }
    }

    #[test]
    fn every_field_of_an_entry_is_read_back_as_written() {
        let full = full_entry();
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

    /// Entries that differ from `full` in one field each (every field of both structs), and in their key.
    fn variants(full: &ClusterEntry) -> Vec<(String, ClusterEntry)> {
        let mut out = Vec::new();
        let mut vary = |what: &str, f: &dyn Fn(&mut ClusterEntry)| {
            let mut e = full.clone();
            f(&mut e);
            out.push((what.to_string(), e));
        };
        vary("sveltos_cluster", &|e| e.sveltos_cluster = None);
        vary("secret", &|e| e.secret = Some("ns/other".into()));
        vary("credential_source", &|e| e.credential_source.push('x'));
        vary("kubeconfig_sha256", &|e| {
            e.kubeconfig_sha256 = Some("ef".into())
        });
        vary("credential_expires_at", &|e| e.credential_expires_at = None);
        vary("labels", &|e| {
            e.labels.insert("env2".into(), "prod".into());
        });
        vary("labels' value", &|e| {
            e.labels.insert("env".into(), "pro".into());
        });
        vary("config_sha256", &|e| e.config_sha256 = "ce".into());
        vary("annotations", &|e| e.managed.annotations.clear());
        vary("paused", &|e| e.managed.paused = Some(false));
        vary("paused unset", &|e| e.managed.paused = None);
        vary("threshold", &|e| {
            e.managed.consecutive_failure_threshold = Some(4)
        });
        vary("window", &|e| {
            e.managed.active_window = Some(("0 8 * * *".into(), "0 19 * * *".into()))
        });
        vary("no window", &|e| e.managed.active_window = None);
        vary("data", &|e| {
            e.managed.data.insert("zone".into(), "a".into());
        });
        vary("pending", &|e| e.credential_pending = true);
        // Text moved from one field to the next: the same bytes in a row, other fields.
        vary("shifted text", &|e| {
            e.labels = strings(&[("en", "vprod")]);
        });
        out
    }

    #[test]
    fn entries_have_one_digest_exactly_when_they_have_one_value() {
        let full = full_entry();
        let one = |e: &ClusterEntry| BTreeMap::from([("ns/c1".to_string(), e.clone())]);
        let base = clusters_digest(&one(&full));
        assert_eq!(base, clusters_digest(&one(&full.clone())), "deterministic");
        assert_eq!(base.len(), 64);
        for (what, e) in variants(&full) {
            let same_value = clusters_value(one(&e)) == clusters_value(one(&full));
            let same_digest = clusters_digest(&one(&e)) == base;
            assert_eq!(same_digest, same_value, "{what}");
            assert!(!same_value, "{what} changes the value");
        }
        // A pending credential's hash and expiry are unknown in the value, and not in the digest.
        let pending = ClusterEntry {
            credential_pending: true,
            ..full.clone()
        };
        let other_pending = ClusterEntry {
            kubeconfig_sha256: None,
            credential_expires_at: None,
            ..pending.clone()
        };
        assert_eq!(
            clusters_value(one(&pending)),
            clusters_value(one(&other_pending))
        );
        assert_eq!(
            clusters_digest(&one(&pending)),
            clusters_digest(&one(&other_pending))
        );
        // Another key, one entry more or less.
        let moved = BTreeMap::from([("ns/c2".to_string(), full.clone())]);
        assert_ne!(clusters_digest(&moved), base);
        let mut two = one(&full);
        two.insert("ns/c2".into(), full.clone());
        assert_ne!(clusters_digest(&two), base);
        assert_ne!(clusters_digest(&BTreeMap::new()), base);
    }

    #[test]
    fn an_answer_is_the_bytes_received_only_for_the_entries_and_bytes_recorded() {
        let entries = BTreeMap::from([("ns/c1".to_string(), full_entry())]);
        // Encoded and recorded: the bytes are the attribute's encoding, their digest and the entries' recorded.
        let first = ClustersAnswer::of(entries.clone(), Earlier::default(), Recording::Recorded);
        let record = first.record.clone().expect("recorded");
        let Some(AttributeBytes::Encoded(bytes)) = &first.bytes else {
            panic!("encoded")
        };
        let value = clusters_value(entries.clone());
        assert_eq!(
            bytes,
            &schema().encode_attribute("clusters", &value).unwrap()
        );
        assert_eq!(record.bytes_sha256, sha256_hex(bytes.bytes()));
        assert_eq!(record.entries_sha256, clusters_digest(&entries));
        let (state, given) = first.into_state(Value::object([("name", Value::string("b"))]), "b");
        assert!(state.get_attr("clusters").is_null());
        assert_eq!(given.len(), 1);
        // Those bytes received again for the same entries: answered as received.
        let earlier = Earlier {
            record: Some(&record),
            received_sha256: Some(&record.bytes_sha256),
        };
        let again = ClustersAnswer::of(entries.clone(), earlier, Recording::Unrecorded);
        assert_eq!(again.bytes, Some(AttributeBytes::Received));
        assert_eq!(again.record.as_ref(), Some(&record));
        // Other bytes (a state edited by hand), other entries, no record: the value.
        let edited = Earlier {
            record: Some(&record),
            received_sha256: Some("00"),
        };
        let changed = BTreeMap::from([("ns/c2".to_string(), full_entry())]);
        for (entries, earlier) in [
            (entries.clone(), edited),
            (changed.clone(), earlier),
            (entries.clone(), Earlier::default()),
        ] {
            let expected = clusters_value(entries.clone());
            let answer = ClustersAnswer::of(entries, earlier, Recording::Unrecorded);
            assert!(answer.bytes.is_none() && answer.record.is_none());
            let (state, given) =
                answer.into_state(Value::object([("name", Value::string("b"))]), "b");
            assert!(given.is_empty());
            assert_eq!(state.get_attr("clusters"), &expected);
        }
    }

    /// The bytes of fixed entries, pinned with the format: a change of the mapping from entries to the attribute's
    /// bytes fails here and must come with a new `CLUSTERS_FORMAT`, or a record of the old mapping would answer
    /// bytes the new one does not write.
    #[test]
    fn the_mapping_is_pinned_with_its_format() {
        let pending = ClusterEntry {
            sveltos_cluster: Some("ns/c2".into()),
            credential_pending: true,
            ..Default::default()
        };
        let entries = BTreeMap::from([
            ("ns/c1".to_string(), full_entry()),
            ("ns/c2".to_string(), pending),
        ]);
        let bytes = schema()
            .encode_attribute("clusters", &clusters_value(entries))
            .unwrap();
        let pinned = (
            std::str::from_utf8(CLUSTERS_FORMAT).unwrap(),
            sha256_hex(bytes.bytes()),
        );
        assert_eq!(
            pinned,
            (
                "sveltos_cluster_inventory_bridge.clusters v1",
                "b5a59a57de5d6997f144a99c310657f9313871fe9ffc4122c831535f2d3768f5".to_string()
            )
        );
    }

    #[test]
    fn an_answer_recorded_for_other_entries_records_its_own() {
        let entries = BTreeMap::from([("ns/c1".to_string(), full_entry())]);
        let first = ClustersAnswer::of(entries, Earlier::default(), Recording::Recorded);
        let record = first.record.expect("recorded");
        let changed = BTreeMap::from([("ns/c2".to_string(), full_entry())]);
        let earlier = Earlier {
            record: Some(&record),
            received_sha256: Some(&record.bytes_sha256),
        };
        let next = ClustersAnswer::of(changed.clone(), earlier, Recording::Recorded);
        let Some(AttributeBytes::Encoded(bytes)) = &next.bytes else {
            panic!("encoded")
        };
        let new = next.record.as_ref().expect("recorded");
        assert_eq!(new.entries_sha256, clusters_digest(&changed));
        assert_eq!(new.bytes_sha256, sha256_hex(bytes.bytes()));
        assert_ne!(new, &record);
    }
}
