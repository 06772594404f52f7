//! The `skipped` attribute as the claim records it at the end of every apply, so that `import` restores it: the
//! clusters grouped by cause, those kept as they are apart from those not registered. Grouped, ten thousand
//! clusters with one cause take their keys and little more (a record that does not fit in the claim is left out,
//! and `import` then restores none).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::plan::Skipped;

/// Format version.
const VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
struct Record {
    v: u32,
    causes: Vec<Group>,
}

/// The clusters skipped for one cause.
#[derive(Serialize, Deserialize)]
struct Group {
    cause: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    kept: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    unregistered: Vec<String>,
}

/// The record of `skipped`.
pub fn encode(skipped: &BTreeMap<String, Skipped>) -> String {
    let mut groups: BTreeMap<&str, Group> = BTreeMap::new();
    for (key, s) in skipped {
        let g = groups.entry(&s.cause).or_insert_with(|| Group {
            cause: s.cause.clone(),
            kept: Vec::new(),
            unregistered: Vec::new(),
        });
        if s.kept {
            &mut g.kept
        } else {
            &mut g.unregistered
        }
        .push(key.clone());
    }
    let record = Record {
        v: VERSION,
        causes: groups.into_values().collect(),
    };
    serde_json::to_string(&record).unwrap_or_default()
}

/// `skipped` from its record; `None` when the text is not a record this version reads.
pub fn decode(text: &str) -> Option<BTreeMap<String, Skipped>> {
    let record: Record = serde_json::from_str(text).ok()?;
    if record.v != VERSION {
        return None;
    }
    let mut out = BTreeMap::new();
    for g in record.causes {
        let kept = g.kept.into_iter().map(|k| (k, true));
        for (key, kept) in kept.chain(g.unregistered.into_iter().map(|k| (k, false))) {
            let cause = g.cause.clone();
            let reason = None;
            out.insert(
                key,
                Skipped {
                    cause,
                    kept,
                    reason,
                },
            );
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back_as_the_skipped_it_records() {
        let skipped = |cause: &str, kept| Skipped {
            cause: cause.into(),
            kept,
            reason: None,
        };
        let all = BTreeMap::from([
            ("a/one".to_string(), skipped("no usable credentials", false)),
            ("a/two".to_string(), skipped("no usable credentials", true)),
            ("b/three".to_string(), skipped("name collision", false)),
        ]);
        let text = encode(&all);
        assert_eq!(
            text.matches("no usable credentials").count(),
            1,
            "grouped: {text}"
        );
        assert_eq!(decode(&text), Some(all));
        assert_eq!(decode(&encode(&BTreeMap::new())), Some(BTreeMap::new()));
        assert_eq!(decode("garbage"), None);
        assert_eq!(decode(r#"{"v":2,"causes":[]}"#), None);
    }
}
