//! Kubernetes label selectors in their string form (`app=web,tier!=db,env in (a,b),!legacy,gpu`).

use std::{collections::BTreeMap, fmt};

/// One requirement of a selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requirement {
    /// `key=value` or `key==value`.
    Equals(String, String),
    /// `key!=value` (also matches when the key is absent).
    NotEquals(String, String),
    /// `key in (a,b)`.
    In(String, Vec<String>),
    /// `key notin (a,b)` (also matches when the key is absent).
    NotIn(String, Vec<String>),
    /// `key`.
    Exists(String),
    /// `!key`.
    DoesNotExist(String),
}

/// A parsed label selector; the empty selector matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selector {
    requirements: Vec<Requirement>,
    source: String,
}

/// Why a selector string is invalid. The message includes the reason (diagnostics show only the top error);
/// the reason is also the error's `source`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid label selector {input:?}: {reason}")]
pub struct SelectorError {
    /// The selector as given.
    pub input: String,
    /// What is wrong with it.
    #[source]
    pub reason: SelectorProblem,
}

/// What is wrong with a selector string.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorProblem {
    /// A `)` without its `(`.
    #[error("unbalanced ')'")]
    UnbalancedClose,
    /// A `(` without its `)`.
    #[error("unbalanced '('")]
    UnbalancedOpen,
    /// Two commas in a row, or a trailing comma.
    #[error("empty requirement (stray comma?)")]
    EmptyRequirement,
    /// A requirement with an operator other than `=`, `==`, `!=`, `in`, `notin`.
    #[error("unknown operator in {part:?} (use =, ==, !=, in, notin, !key or key)")]
    UnknownOperator {
        /// The requirement.
        part: String,
    },
    /// `in` or `notin` without a parenthesised list.
    #[error("{op} needs a parenthesised list of values in {part:?}")]
    NeedsList {
        /// `in` or `notin`.
        op: &'static str,
        /// The requirement.
        part: String,
    },
    /// `in ()` or `notin ()`.
    #[error("{op} needs at least one value in {part:?}")]
    NeedsValue {
        /// `in` or `notin`.
        op: &'static str,
        /// The requirement.
        part: String,
    },
    /// An invalid label key or value.
    #[error(transparent)]
    Label(#[from] LabelError),
}

/// Why a label key or value is invalid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LabelError {
    /// The part before `/` is not a DNS subdomain.
    #[error("label key {key:?} has an invalid prefix (must be a DNS subdomain)")]
    BadPrefix {
        /// The key.
        key: String,
    },
    /// The name part is empty, too long, or uses other characters.
    #[error(
        "label key {key:?} is invalid (name part: 1-63 alphanumerics, '-', '_', '.', starting and ending alphanumeric)"
    )]
    BadName {
        /// The key.
        key: String,
    },
    /// The value is too long or uses other characters.
    #[error(
        "label value {value:?} is invalid (at most 63 alphanumerics, '-', '_', '.', starting and ending alphanumeric)"
    )]
    BadValue {
        /// The value.
        value: String,
    },
}

impl Selector {
    /// Parses the string form used by `kubectl -l` and the API's `labelSelector` parameter.
    pub fn parse(input: &str) -> Result<Self, SelectorError> {
        let err = |reason: SelectorProblem| SelectorError {
            input: input.to_string(),
            reason,
        };
        let mut requirements = Vec::new();
        for part in split_top_level(input).map_err(err)? {
            let part = part.trim();
            if part.is_empty() {
                if input.trim().is_empty() {
                    continue;
                }
                return Err(err(SelectorProblem::EmptyRequirement));
            }
            requirements.push(parse_requirement(part).map_err(err)?);
        }
        Ok(Self {
            requirements,
            source: input.trim().to_string(),
        })
    }

    /// Whether `labels` satisfy every requirement.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.requirements.iter().all(|r| match r {
            Requirement::Equals(k, v) => labels.get(k) == Some(v),
            Requirement::NotEquals(k, v) => labels.get(k) != Some(v),
            Requirement::In(k, vs) => labels.get(k).is_some_and(|l| vs.contains(l)),
            Requirement::NotIn(k, vs) => labels.get(k).is_none_or(|l| !vs.contains(l)),
            Requirement::Exists(k) => labels.contains_key(k),
            Requirement::DoesNotExist(k) => !labels.contains_key(k),
        })
    }

    /// The requirements.
    pub fn requirements(&self) -> &[Requirement] {
        &self.requirements
    }

    /// Whether the selector matches everything.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

/// Splits on commas that are not inside parentheses.
fn split_top_level(input: &str) -> Result<Vec<&str>, SelectorProblem> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in input.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth < 0 {
                    return Err(SelectorProblem::UnbalancedClose);
                }
            }
            ',' if depth == 0 => {
                parts.push(&input[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(SelectorProblem::UnbalancedOpen);
    }
    parts.push(&input[start..]);
    Ok(parts)
}

fn parse_requirement(part: &str) -> Result<Requirement, SelectorProblem> {
    if let Some(key) = part.strip_prefix('!') {
        return Ok(Requirement::DoesNotExist(label_key(key.trim())?));
    }
    for (op, ctor) in [
        (
            "!=",
            Requirement::NotEquals as fn(String, String) -> Requirement,
        ),
        ("==", Requirement::Equals),
        ("=", Requirement::Equals),
    ] {
        if let Some((k, v)) = part.split_once(op) {
            return Ok(ctor(label_key(k.trim())?, label_value(v.trim())?));
        }
    }
    let words: Vec<&str> = part.splitn(2, char::is_whitespace).collect();
    if words.len() == 2 {
        let key = label_key(words[0])?;
        let rest = words[1].trim_start();
        let (op, list) = if let Some(l) = rest.strip_prefix("notin") {
            ("notin", l)
        } else if let Some(l) = rest.strip_prefix("in") {
            ("in", l)
        } else {
            return Err(SelectorProblem::UnknownOperator { part: part.into() });
        };
        let list = list.trim();
        let inner = list
            .strip_prefix('(')
            .and_then(|l| l.strip_suffix(')'))
            .ok_or_else(|| SelectorProblem::NeedsList {
                op,
                part: part.into(),
            })?;
        let values = inner
            .split(',')
            .map(|v| label_value(v.trim()))
            .collect::<Result<Vec<_>, _>>()?;
        if values.is_empty() || inner.trim().is_empty() {
            return Err(SelectorProblem::NeedsValue {
                op,
                part: part.into(),
            });
        }
        return Ok(if op == "in" {
            Requirement::In(key, values)
        } else {
            Requirement::NotIn(key, values)
        });
    }
    Ok(Requirement::Exists(label_key(part)?))
}

/// Validates a label key: optional DNS-subdomain prefix and a name of at most 63 characters.
pub fn label_key(key: &str) -> Result<String, LabelError> {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    if let Some(p) = prefix
        && (p.is_empty()
            || p.len() > 253
            || !p.split('.').all(|s| {
                !s.is_empty()
                    && s.chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            }))
    {
        return Err(LabelError::BadPrefix { key: key.into() });
    }
    if name.is_empty() || name.len() > 63 || !is_label_name(name) {
        return Err(LabelError::BadName { key: key.into() });
    }
    Ok(key.to_string())
}

/// Validates a label value: empty, or at most 63 characters of the label-name alphabet.
pub fn label_value(value: &str) -> Result<String, LabelError> {
    if value.is_empty() || (value.len() <= 63 && is_label_name(value)) {
        Ok(value.to_string())
    } else {
        Err(LabelError::BadValue {
            value: value.into(),
        })
    }
}

fn is_label_name(s: &str) -> bool {
    let ok = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.';
    s.chars().all(ok)
        && s.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && s.chars().last().is_some_and(|c| c.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn parses_and_matches_every_operator() {
        let s =
            Selector::parse("env=prod, tier != db,region in (eu, us),zone notin (z1),gpu,!legacy")
                .unwrap();
        assert_eq!(s.requirements().len(), 6);
        let good = labels(&[("env", "prod"), ("region", "eu"), ("gpu", "")]);
        assert!(s.matches(&good));
        let mut bad = good.clone();
        bad.insert("legacy".into(), "true".into());
        assert!(!s.matches(&bad));
        let mut bad = good.clone();
        bad.insert("zone".into(), "z1".into());
        assert!(!s.matches(&bad));
        assert!(
            !s.matches(&labels(&[("env", "prod"), ("gpu", "")])),
            "region missing"
        );
    }

    #[test]
    fn empty_selector_matches_everything() {
        let s = Selector::parse("  ").unwrap();
        assert!(s.is_empty());
        assert!(s.matches(&BTreeMap::new()));
    }

    #[test]
    fn quoted_looking_values_are_plain_strings() {
        let s = Selector::parse("enabled=true,empty=").unwrap();
        assert!(s.matches(&labels(&[("enabled", "true"), ("empty", "")])));
        assert!(!s.matches(&labels(&[("enabled", "True"), ("empty", "")])));
    }

    #[test]
    fn rejects_malformed_selectors_with_a_reason() {
        for bad in [
            "a in b",
            "a in (x",
            "a,,b",
            "-bad=1",
            "a=b c",
            "x.example.com/=1",
            "k in ()",
            "a foo (b)",
        ] {
            let e = Selector::parse(bad).unwrap_err();
            assert_eq!(e.input, bad);
            assert!(!e.reason.to_string().is_empty());
            // The reason is reachable as the error's source.
            let source = std::error::Error::source(&e).expect("a reason");
            assert_eq!(source.to_string(), e.reason.to_string());
        }
    }

    #[test]
    fn prefixed_keys() {
        let s = Selector::parse("x-k8s.io/cluster-manager=ocm").unwrap();
        assert!(s.matches(&labels(&[("x-k8s.io/cluster-manager", "ocm")])));
    }
}
