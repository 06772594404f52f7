//! Kubernetes name rules, checked as the API server checks them, so that a typo in a name-like setting is a
//! validation error instead of a selection that silently matches nothing.

/// A DNS-1123 label (namespace names): 1-63 lowercase alphanumerics or '-', starting and ending alphanumeric.
pub fn dns1123_label(s: &str) -> Result<(), String> {
    if s.is_empty() || s.len() > 63 {
        return Err(format!(
            "{} characters; a namespace name has 1 to 63",
            s.chars().count()
        ));
    }
    let ok_char = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    if !s.chars().all(ok_char) || !s.starts_with(alnum) || !s.ends_with(alnum) {
        return Err(
            "must consist of lowercase letters, digits and '-', and start and end with a letter or digit".into(),
        );
    }
    Ok(())
}

/// A DNS-1123 subdomain (most object names): at most 253 characters, dot-separated DNS-1123 labels.
pub fn dns1123_subdomain(s: &str) -> Result<(), String> {
    if s.is_empty() || s.len() > 253 {
        return Err(format!(
            "{} characters; an object name has 1 to 253",
            s.chars().count()
        ));
    }
    for part in s.split('.') {
        dns1123_label(part).map_err(|_| {
            "must consist of lowercase letters, digits, '-' and '.', each dot-separated part starting and ending \
             with a letter or digit"
                .to_string()
        })?;
    }
    Ok(())
}

/// A Secret data key: 1-253 characters of letters, digits, '-', '_' and '.'.
pub fn secret_data_key(s: &str) -> Result<(), String> {
    if s.is_empty() || s.len() > 253 {
        return Err(format!(
            "{} characters; a Secret data key has 1 to 253",
            s.chars().count()
        ));
    }
    if !s
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err("must consist of letters, digits, '-', '_' and '.'".into());
    }
    Ok(())
}

/// A ClusterProfile reference as the user writes it: `name` or `namespace/name`.
pub fn profile_ref(s: &str) -> Result<(), String> {
    match s.split_once('/') {
        Some((ns, name)) => {
            dns1123_label(ns).map_err(|e| format!("namespace part: {e}"))?;
            dns1123_subdomain(name).map_err(|e| format!("name part: {e}"))
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
