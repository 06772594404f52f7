//! Kubernetes name rules, checked as the API server checks them, so that a typo in a name-like setting is a
//! validation error instead of a selection that silently matches nothing.

/// Why a name is not valid. Displays as the end of a sentence (`"must consist of ..."`), never quoting the name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// Too short or too long.
    #[error("{len} characters; {what} has {min} to {max}")]
    Length {
        /// Its length in characters.
        len: usize,
        /// What kind of name (`a namespace name`).
        what: &'static str,
        /// Shortest allowed.
        min: usize,
        /// Longest allowed.
        max: usize,
    },
    /// Characters outside the allowed set.
    #[error("must consist of {0}")]
    Characters(&'static str),
    /// One part of a `namespace/name` reference.
    #[error("{part} part: {source}")]
    Part {
        /// `namespace` or `name`.
        part: &'static str,
        /// Why.
        #[source]
        source: Box<NameError>,
    },
}

fn length(s: &str, what: &'static str, max: usize) -> Result<(), NameError> {
    if s.is_empty() || s.len() > max {
        return Err(NameError::Length {
            len: s.chars().count(),
            what,
            min: 1,
            max,
        });
    }
    Ok(())
}

/// A DNS-1123 label (namespace names): 1-63 lowercase alphanumerics or '-', starting and ending alphanumeric.
pub fn dns1123_label(s: &str) -> Result<(), NameError> {
    length(s, "a namespace name", 63)?;
    let ok_char = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    if !s.chars().all(ok_char) || !s.starts_with(alnum) || !s.ends_with(alnum) {
        return Err(NameError::Characters(
            "lowercase letters, digits and '-', and start and end with a letter or digit",
        ));
    }
    Ok(())
}

/// A DNS-1123 subdomain (most object names): at most 253 characters, dot-separated DNS-1123 labels.
pub fn dns1123_subdomain(s: &str) -> Result<(), NameError> {
    length(s, "an object name", 253)?;
    for part in s.split('.') {
        dns1123_label(part).map_err(|_| {
            NameError::Characters(
                "lowercase letters, digits, '-' and '.', each dot-separated part starting and ending with a letter \
                 or digit",
            )
        })?;
    }
    Ok(())
}

/// A Secret data key: 1-253 characters of letters, digits, '-', '_' and '.'.
pub fn secret_data_key(s: &str) -> Result<(), NameError> {
    length(s, "a Secret data key", 253)?;
    if !s
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(NameError::Characters("letters, digits, '-', '_' and '.'"));
    }
    Ok(())
}

/// A ClusterProfile reference as the user writes it: `name` or `namespace/name`.
pub fn profile_ref(s: &str) -> Result<(), NameError> {
    let part = |part, e| NameError::Part {
        part,
        source: Box::new(e),
    };
    match s.split_once('/') {
        Some((ns, name)) => {
            dns1123_label(ns).map_err(|e| part("namespace", e))?;
            dns1123_subdomain(name).map_err(|e| part("name", e))
        }
        None => dns1123_subdomain(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespace_names() {
        assert!(dns1123_label("team-a").is_ok());
        assert!(dns1123_label("a").is_ok());
        for bad in ["", "Bad_NS", "-a", "a-", "A", "a.b", &"x".repeat(64), "ä"] {
            assert!(dns1123_label(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn object_names_and_keys() {
        assert!(dns1123_subdomain("c1.prod-eu").is_ok());
        assert!(dns1123_subdomain("a..b").is_err());
        assert!(dns1123_subdomain(&"a".repeat(254)).is_err());
        assert!(secret_data_key("Config").is_ok());
        assert!(secret_data_key("my_key-1.yaml").is_ok());
        assert!(secret_data_key("").is_err());
        assert!(secret_data_key("a/b").is_err());
        assert!(profile_ref("ns/c1").is_ok());
        assert!(profile_ref("c1").is_ok());
        assert!(profile_ref("NS/c1").is_err());
        assert!(profile_ref("ns/").is_err());
    }
}
