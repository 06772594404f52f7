//! Strips what looks like a credential from free text (a plugin's stderr) before it reaches a diagnostic.

/// Placeholder written where [`redact_secrets`] removed something.
pub const REDACTED: &str = "<redacted>";

/// Words that mark the value after them (`name=value`, `name: value`) as secret.
const SECRET_KEYS: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "token",
    "secret",
    "apikey",
    "api_key",
    "api-key",
    "credential",
    "private_key",
    "access_key",
    "session_key",
    "authorization",
    "cookie",
];

/// Removes what looks like a credential from free text (a plugin's stderr), keeping the rest readable:
/// PEM blocks; values after `password=`, `token:`, `secret=`-like keys; `Bearer`/`Basic` credentials;
/// JWT-like strings; runs of 32+ hex digits; runs of 32+ base64 characters that mix upper case, lower case
/// and digits; AWS access key ids. Control characters are dropped. Meant for error messages, so it errs on
/// the side of removing too much.
pub fn redact_secrets(text: &str) -> String {
    let text: String = text
        .chars()
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .collect();
    let text = redact_pem(&text);
    let text = redact_key_values(&text);
    redact_words(&text)
}

fn redact_pem(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("-----BEGIN") {
        out.push_str(&rest[..start]);
        out.push_str("<redacted PEM block>");
        let after = &rest[start + "-----BEGIN".len()..];
        rest = match after.find("-----END") {
            Some(end) => {
                let tail = &after[end + "-----END".len()..];
                match tail.find("-----") {
                    Some(close) => &tail[close + 5..],
                    None => "",
                }
            }
            None => "",
        };
    }
    out.push_str(rest);
    out
}

fn redact_key_values(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let (mut i, mut copied) = (0, 0);
    while i < bytes.len() {
        let Some((start, quote)) = secret_value_at(bytes, &lower, i) else {
            i = char_boundary_from(text, i + 1);
            continue;
        };
        let mut end = start;
        while end < bytes.len()
            && match quote {
                Some(q) => bytes[end] != q,
                None => !is_value_end(bytes[end]),
            }
        {
            end += 1;
        }
        if end > start {
            out.push_str(&text[copied..start]);
            out.push_str(REDACTED);
            copied = end;
        }
        i = char_boundary_from(text, end.max(i + 1));
    }
    out.push_str(&text[copied..]);
    out
}

/// A byte of a key or word: ASCII alphanumeric, `_` or `-`.
fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// A byte that ends an unquoted value.
fn is_value_end(b: u8) -> bool {
    b.is_ascii_whitespace() || matches!(b, b'"' | b'\'' | b',' | b';' | b'&' | b')' | b'}' | b']')
}

/// The first character boundary of `text` at or after `i` (its length when there is none).
fn char_boundary_from(text: &str, mut i: usize) -> usize {
    while i < text.len() && !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// Where a secret value starts when one is introduced at byte `i` (and the quote that ends it, if it is quoted):
/// after `Bearer ` or `Basic ` starting a word, or after a secret key (see [`after_key`]).
fn secret_value_at(bytes: &[u8], lower: &str, i: usize) -> Option<(usize, Option<u8>)> {
    let at_word_start = i == 0 || !is_ident(bytes[i - 1]);
    let bearer = ["bearer", "basic"]
        .iter()
        .find(|w| at_word_start && lower[i..].starts_with(**w))
        .map(|w| i + w.len())
        .filter(|&j| j < bytes.len() && bytes[j].is_ascii_whitespace());
    if let Some(j) = bearer {
        return Some((j + 1, None));
    }
    let key_end = SECRET_KEYS
        .iter()
        .find(|k| lower[i..].starts_with(**k))
        .map(|k| {
            let mut j = i + k.len();
            while j < bytes.len() && is_ident(bytes[j]) {
                j += 1;
            }
            j
        })?;
    after_key(bytes, lower, key_end)
}

/// Where the value of a secret key ending at `key_end` starts: after an optional quote, spaces, `=` or `:`,
/// spaces (and the quote that ends it, if it is quoted). `None`: no `=` or `:` follows, it is no key.
fn after_key(bytes: &[u8], lower: &str, key_end: usize) -> Option<(usize, Option<u8>)> {
    let mut j = key_end;
    while j < bytes.len() && matches!(bytes[j], b'"' | b'\'') {
        j += 1;
    }
    while j < bytes.len() && bytes[j] == b' ' {
        j += 1;
    }
    if j >= bytes.len() || !matches!(bytes[j], b'=' | b':') {
        return None;
    }
    j += 1;
    while j < bytes.len() && bytes[j] == b' ' {
        j += 1;
    }
    let quote = bytes.get(j).copied().filter(|b| matches!(b, b'"' | b'\''));
    j += usize::from(quote.is_some());
    // `Authorization: Bearer x`: the scheme stays, its value goes.
    let scheme = ["bearer ", "basic "]
        .iter()
        .find(|w| lower[j..].starts_with(**w));
    Some((j + scheme.map_or(0, |w| w.len()), quote))
}

fn redact_words(text: &str) -> String {
    let in_word =
        |c: char| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=' | '_' | '-' | '.' | '~');
    let mut out = String::with_capacity(text.len());
    let mut word_start = None;
    for (i, c) in text.char_indices().chain([(text.len(), ' ')]) {
        match (in_word(c) && i < text.len(), word_start) {
            (true, None) => word_start = Some(i),
            (false, Some(start)) => {
                let word = &text[start..i];
                out.push_str(if looks_secret(word) { REDACTED } else { word });
                word_start = None;
                if i < text.len() {
                    out.push(c);
                }
            }
            (false, None) if i < text.len() => out.push(c),
            _ => {}
        }
    }
    out
}

fn looks_secret(word: &str) -> bool {
    let b64 = |s: &str| {
        s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=' | '_' | '-'))
    };
    let segments: Vec<&str> = word.split('.').collect();
    let jwt = segments.len() >= 2
        && word.starts_with("eyJ")
        && segments.iter().all(|s| b64(s))
        && word.len() >= 16;
    let hex = word.len() >= 32 && word.chars().all(|c| c.is_ascii_hexdigit());
    let mixed = |s: &str| {
        s.len() >= 32
            && b64(s)
            && s.chars().any(|c| c.is_ascii_uppercase())
            && s.chars().any(|c| c.is_ascii_lowercase())
            && s.chars().any(|c| c.is_ascii_digit())
    };
    let aws_key = (word.starts_with("AKIA") || word.starts_with("ASIA"))
        && word.len() == 20
        && word
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit());
    jwt || hex
        || aws_key
        || word.split(['.', '~']).any(mixed)
        || word
            .split(['.', '~', '/', '-', '_'])
            .any(|s| s.len() >= 32 && s.chars().all(|c| c.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction_removes_credentials_and_keeps_prose() {
        let jwt =
            "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJzdWIiOiJzeXN0ZW06c2EifQ.c2lnbmF0dXJlLWNhbmFyeQ";
        let text = format!(
            "error: login failed for user admin\n\
             token=tok-canary-1 password: \"pw canary\"\n\
             Authorization: Bearer bearer-canary-2\n\
             got {jwt}\n\
             key 0123456789abcdef0123456789abcdef01\n\
             b64 QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0MTIzNDU2Nzg5\n\
             aws AKIAABCDEFGHIJKLMNOP\n\
             -----BEGIN RSA PRIVATE KEY-----\nMIIEcanary3\n-----END RSA PRIVATE KEY-----\n\
             client_secret=\"s3cr3t-canary-4\" done\x1b[31m\n\
             see /usr/local/bin/kubelogin --help"
        );
        let r = redact_secrets(&text);
        for gone in [
            "tok-canary-1",
            "canary\"",
            "bearer-canary-2",
            "eyJ",
            "0123456789abcdef",
            "QUJDREVG",
            "AKIAABCD",
            "MIIEcanary3",
            "s3cr3t-canary-4",
            "\x1b",
        ] {
            assert!(!r.contains(gone), "{gone} in {r}");
        }
        for kept in [
            "error: login failed for user admin",
            "<redacted PEM block>",
            "done",
            "see /usr/local/bin/kubelogin --help",
        ] {
            assert!(r.contains(kept), "{kept} missing from {r}");
        }
        assert_eq!(
            redact_secrets("plain words, no secret"),
            "plain words, no secret"
        );
        assert_eq!(
            redact_secrets("héllo token=wörld ü"),
            "héllo token=<redacted> ü"
        );
        assert_eq!(
            redact_secrets("-----BEGIN CERT\nabc"),
            "<redacted PEM block>"
        );
    }
}
