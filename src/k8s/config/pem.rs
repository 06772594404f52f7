//! Checks of the PEM attributes (`cluster_ca_certificate`, `client_certificate`, `client_key`), on
//! rustls' PEM reader (`rustls::pki_types::pem`). Error texts name labels and positions, never the data.

use std::io::BufRead;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use rustls::pki_types::pem::{self, SectionKind};

use super::errors::ConfigError;
use super::settings::ENV_CLIENT_KEY_DATA;

/// The labels of every `-----BEGIN <label>-----` line, in order (rustls skips sections it does not know,
/// such as `ENCRYPTED PRIVATE KEY` or `DSA PRIVATE KEY`; these are reported by name).
fn begin_labels(text: &str) -> Vec<&str> {
    text.lines()
        .filter_map(|l| {
            l.trim()
                .strip_prefix("-----BEGIN ")
                .and_then(|r| r.strip_suffix("-----"))
        })
        .collect()
}

/// Explains why text holds no PEM block, without quoting it.
fn no_pem_reason(text: &str) -> String {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    if let Ok(decoded) = BASE64.decode(compact.as_bytes())
        && String::from_utf8_lossy(&decoded).contains("-----BEGIN ")
    {
        return "the value is base64-encoded PEM; decode it first (e.g. with base64decode())"
            .to_owned();
    }
    let trimmed = text.trim();
    if !trimmed.contains('\n')
        && (trimmed.starts_with('/') || trimmed.starts_with('~') || trimmed.starts_with("./"))
    {
        return "the value looks like a file path; pass the file's contents (e.g. with file())"
            .to_owned();
    }
    "no PEM block found; expected PEM text starting with \"-----BEGIN ...-----\"".to_owned()
}

/// Decodes every section rustls knows; text outside sections is ignored.
fn sections(text: &str) -> Result<Vec<(SectionKind, Vec<u8>)>, String> {
    let labels = begin_labels(text);
    if labels.is_empty() {
        return Err(no_pem_reason(text));
    }
    let mut reader = std::io::BufReader::new(text.as_bytes());
    let mut out = Vec::new();
    loop {
        match pem::from_buf(&mut reader as &mut dyn BufRead) {
            Ok(Some(section)) => out.push(section),
            Ok(None) => return Ok(out),
            Err(pem::Error::MissingSectionEnd { end_marker }) => {
                return Err(format!(
                    "the PEM block \"{}\" has no END line",
                    String::from_utf8_lossy(&end_marker)
                        .trim_start_matches("-----END ")
                        .trim_end_matches('-')
                ));
            }
            Err(pem::Error::Base64Decode(_)) => {
                return Err(format!(
                    "the body of a PEM block is not valid base64 (blocks: {})",
                    labels.join(", ")
                ));
            }
            Err(pem::Error::IllegalSectionStart { .. }) => {
                return Err("a \"-----BEGIN\" line is malformed".to_owned());
            }
            Err(_) => return Err("the PEM text cannot be read".to_owned()),
        }
    }
}

/// Checks a PEM bundle holds at least one parsable X.509 certificate.
pub(crate) fn check_certificates(
    attribute: &'static str,
    env_var: &'static str,
    text: &str,
) -> Result<String, ConfigError> {
    let invalid = |reason: String| ConfigError::InvalidPem {
        attribute,
        env_var,
        reason,
    };
    let found = sections(text).map_err(invalid)?;
    let certificates: Vec<&[u8]> = found
        .iter()
        .filter(|(kind, _)| *kind == SectionKind::Certificate)
        .map(|(_, der)| der.as_slice())
        .collect();
    if certificates.is_empty() {
        return Err(invalid(format!(
            "no CERTIFICATE block found (found: {})",
            begin_labels(text).join(", ")
        )));
    }
    for (index, der) in certificates.iter().enumerate() {
        if let Err(err) = x509_parser::parse_x509_certificate(der) {
            return Err(invalid(format!(
                "certificate #{} is not a valid X.509 certificate ({err})",
                index + 1
            )));
        }
    }
    Ok(ensure_trailing_newline(text.trim()))
}

/// Checks a PEM text holds exactly one unencrypted PKCS#8, RSA or EC private key.
pub(crate) fn check_private_key(text: &str) -> Result<String, ConfigError> {
    let invalid = |reason: String| ConfigError::InvalidPem {
        attribute: "client_key",
        env_var: ENV_CLIENT_KEY_DATA,
        reason,
    };
    let labels = begin_labels(text);
    let keys: Vec<&str> = labels
        .iter()
        .copied()
        .filter(|l| l.ends_with("PRIVATE KEY"))
        .collect();
    let encrypted_header = text
        .lines()
        .any(|l| l.trim().starts_with("Proc-Type:") && l.contains("ENCRYPTED"));
    match keys.as_slice() {
        [] if labels.is_empty() => return Err(invalid(no_pem_reason(text))),
        [] => {
            return Err(invalid(format!(
                "no PRIVATE KEY block found (found: {})",
                labels.join(", ")
            )));
        }
        [key] if *key == "ENCRYPTED PRIVATE KEY" || encrypted_header => {
            return Err(invalid(
                "encrypted private keys are not supported; decrypt the key first".to_owned(),
            ));
        }
        [key] if !matches!(*key, "PRIVATE KEY" | "RSA PRIVATE KEY" | "EC PRIVATE KEY") => {
            return Err(invalid(format!(
                "unsupported key type \"{key}\"; use a PKCS#8, RSA or EC private key"
            )));
        }
        [_] => {}
        more => {
            return Err(invalid(format!(
                "{} private keys found; exactly one is expected",
                more.len()
            )));
        }
    }
    let found = sections(text).map_err(invalid)?;
    let decoded = found.iter().any(|(kind, der)| {
        matches!(
            kind,
            SectionKind::PrivateKey | SectionKind::RsaPrivateKey | SectionKind::EcPrivateKey
        ) && !der.is_empty()
    });
    if !decoded {
        return Err(invalid("the PRIVATE KEY block is empty".to_owned()));
    }
    Ok(ensure_trailing_newline(text.trim()))
}

fn ensure_trailing_newline(text: &str) -> String {
    let mut text = text.to_owned();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}
