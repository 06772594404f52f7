//! Kubernetes label selectors in their string form (`app=web,tier!=db,env in (a,b),!legacy,gpu,replicas>2`).
//!
//! [`Selector::parse`] accepts exactly the strings the API server accepts as a LIST's `labelSelector`
//! (apimachinery's `labels.Parse`), and [`Selector::matches`] selects what that LIST returns; both are checked
//! against the real API server by `tests/e2e/selector_oracle.rs`. The grammar, as the API server reads it:
//!
//! * words are separated by spaces, tabs, `\r` and `\n` (no other whitespace: a no-break space is part of a
//!   word); the operators `=`, `==`, `!=`, `!`, `>`, `<` and `(`, `)`, `,` need no space around them, and a word is
//!   any run of other characters;
//! * requirements are separated by single commas, none before the first or after the last: `key`, `!key`,
//!   `key=value`, `key==value`, `key!=value` (the value may be empty: `key=`), `key in (v1,v2)`,
//!   `key notin (v1,v2)`, `key>n`, `key<n`;
//! * in a set, an empty place (`(a,)`, `(a,,b)`, `(,)`) and the empty set `()` stand for the empty value: `k in ()`
//!   selects the objects whose label `k` is empty (`k=`), and `k notin ()` those without that;
//! * `n` of `>` and `<` is an integer (a label value made of digits); they select the objects whose label is an
//!   integer greater (less) than `n`;
//! * keys and values are label keys and values ([`label_key`], [`label_value`]); `in` and `notin` are words like
//!   others where a key or a value is expected (`in in (notin)` is valid);
//! * the empty string, or whitespace only, selects everything.
//!
//! One deliberate difference: a NUL byte is refused anywhere. The API server's lexer takes it for the end of the
//! string, so `"\0env=prod"` would be the empty selector there, selecting everything.

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
    /// `key>n`: the label is an integer greater than `n`.
    GreaterThan(String, i64),
    /// `key<n`: the label is an integer less than `n`.
    LessThan(String, i64),
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
    /// A NUL byte (see the module's documentation).
    #[error("it contains a NUL byte")]
    Nul,
    /// Something the grammar does not allow where it is: a stray or trailing comma, an unknown operator, a
    /// missing parenthesis, two values without a comma between them...
    #[error("expected {expected} at byte {at}, found {found}")]
    Unexpected {
        /// What may come there.
        expected: &'static str,
        /// What came (`the end`, a quoted word, an operator).
        found: String,
        /// Byte offset in the selector.
        at: usize,
    },
    /// `>` or `<` with a value that is not an integer.
    #[error("'{op}' needs an integer, found {value:?}")]
    NeedsInteger {
        /// `>` or `<`.
        op: &'static str,
        /// The value found.
        value: String,
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
        if input.contains('\0') {
            return Err(err(SelectorProblem::Nul));
        }
        let mut parser = Parser {
            tokens: tokens(input),
            pos: 0,
        };
        let requirements = parser.requirements().map_err(err)?;
        Ok(Self {
            requirements,
            source: input
                .trim_matches(|c: char| c.is_ascii() && is_space(c as u8))
                .to_string(),
        })
    }

    /// Whether `labels` satisfy every requirement.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        let int = |k: &String| labels.get(k).and_then(|v| v.parse::<i64>().ok());
        self.requirements.iter().all(|r| match r {
            Requirement::Equals(k, v) => labels.get(k) == Some(v),
            Requirement::NotEquals(k, v) => labels.get(k) != Some(v),
            Requirement::In(k, vs) => labels.get(k).is_some_and(|l| vs.contains(l)),
            Requirement::NotIn(k, vs) => labels.get(k).is_none_or(|l| !vs.contains(l)),
            Requirement::Exists(k) => labels.contains_key(k),
            Requirement::DoesNotExist(k) => !labels.contains_key(k),
            Requirement::GreaterThan(k, n) => int(k).is_some_and(|l| l > *n),
            Requirement::LessThan(k, n) => int(k).is_some_and(|l| l < *n),
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

/// A token of a selector string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token<'a> {
    /// A run of characters that are neither whitespace nor operators: a key, a value, `in` or `notin`.
    Word(&'a str),
    Not,
    Eq,
    EqEq,
    NotEq,
    Gt,
    Lt,
    Open,
    Close,
    Comma,
    End,
}

impl fmt::Display for Token<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let symbol = match self {
            Token::Word(w) => return write!(f, "{w:?}"),
            Token::End => return f.write_str("the end"),
            Token::Not => "!",
            Token::Eq => "=",
            Token::EqEq => "==",
            Token::NotEq => "!=",
            Token::Gt => ">",
            Token::Lt => "<",
            Token::Open => "(",
            Token::Close => ")",
            Token::Comma => ",",
        };
        write!(f, "'{symbol}'")
    }
}

/// The whitespace between tokens: the API server's, ASCII space, tab, CR and LF only.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_operator(b: u8) -> bool {
    matches!(b, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// The tokens of `input` with their byte offsets, the last one [`Token::End`]. `!=` and `==` are one token
/// each; any other operator character is a token by itself (`===` is `==` then `=`).
fn tokens(input: &str) -> Vec<(Token<'_>, usize)> {
    let bytes = input.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        while bytes.get(i).copied().is_some_and(is_space) {
            i += 1;
        }
        let Some(&b) = bytes.get(i) else {
            out.push((Token::End, i));
            return out;
        };
        let (token, len) = match (b, bytes.get(i + 1)) {
            (b'!', Some(b'=')) => (Token::NotEq, 2),
            (b'=', Some(b'=')) => (Token::EqEq, 2),
            (b'!', _) => (Token::Not, 1),
            (b'=', _) => (Token::Eq, 1),
            (b'>', _) => (Token::Gt, 1),
            (b'<', _) => (Token::Lt, 1),
            (b'(', _) => (Token::Open, 1),
            (b')', _) => (Token::Close, 1),
            (b',', _) => (Token::Comma, 1),
            _ => {
                let len = bytes[i..]
                    .iter()
                    .take_while(|&&c| !is_space(c) && !is_operator(c))
                    .count();
                // Words end at ASCII bytes: `i + len` is a character boundary.
                (Token::Word(&input[i..i + len]), len)
            }
        };
        out.push((token, i));
        i += len;
    }
}

/// A recursive-descent reader of the tokens.
struct Parser<'a> {
    tokens: Vec<(Token<'a>, usize)>,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Token<'a> {
        self.tokens[self.pos].0
    }

    /// The next token, consumed (the end stays).
    fn next(&mut self) -> Token<'a> {
        let token = self.peek();
        if token != Token::End {
            self.pos += 1;
        }
        token
    }

    /// That the next token is not what `expected` says: an error at the next token.
    fn unexpected(&self, expected: &'static str) -> SelectorProblem {
        let (token, at) = self.tokens[self.pos];
        SelectorProblem::Unexpected {
            expected,
            found: token.to_string(),
            at,
        }
    }

    /// Consumes `token`, or fails at what is there instead.
    fn expect(&mut self, token: Token<'a>, expected: &'static str) -> Result<(), SelectorProblem> {
        if self.peek() != token {
            return Err(self.unexpected(expected));
        }
        self.next();
        Ok(())
    }

    /// The whole selector: nothing, or requirements separated by commas.
    fn requirements(&mut self) -> Result<Vec<Requirement>, SelectorProblem> {
        let mut requirements = Vec::new();
        if self.peek() == Token::End {
            return Ok(requirements);
        }
        loop {
            requirements.push(self.requirement()?);
            match self.peek() {
                Token::End => return Ok(requirements),
                Token::Comma => self.next(),
                _ => return Err(self.unexpected("',' or the end")),
            };
        }
    }

    fn requirement(&mut self) -> Result<Requirement, SelectorProblem> {
        let negated = self.peek() == Token::Not;
        if negated {
            self.next();
        }
        let Token::Word(key) = self.peek() else {
            return Err(self.unexpected(if negated {
                "a label key"
            } else {
                "a label key or '!'"
            }));
        };
        self.next();
        let key = label_key(key)?;
        if negated {
            return Ok(Requirement::DoesNotExist(key));
        }
        if matches!(self.peek(), Token::End | Token::Comma) {
            return Ok(Requirement::Exists(key));
        }
        let expected = "an operator (=, ==, !=, in, notin, >, <), ',' or the end";
        Ok(match self.peek() {
            Token::Eq | Token::EqEq => {
                self.next();
                Requirement::Equals(key, self.value()?)
            }
            Token::NotEq => {
                self.next();
                Requirement::NotEquals(key, self.value()?)
            }
            Token::Gt => Requirement::GreaterThan(key, self.integer(">")?),
            Token::Lt => Requirement::LessThan(key, self.integer("<")?),
            Token::Word("in") => Requirement::In(key, self.set()?),
            Token::Word("notin") => Requirement::NotIn(key, self.set()?),
            _ => return Err(self.unexpected(expected)),
        })
    }

    /// The value after `=`, `==`, `!=`, `>` or `<`: a word, or nothing (the empty value) before `,` or the end.
    fn value(&mut self) -> Result<String, SelectorProblem> {
        match self.peek() {
            Token::End | Token::Comma => Ok(String::new()),
            Token::Word(w) => {
                self.next();
                Ok(label_value(w)?)
            }
            _ => Err(self.unexpected("a value, ',' or the end")),
        }
    }

    /// The operator `>` or `<` (`op`) and its integer.
    fn integer(&mut self, op: &'static str) -> Result<i64, SelectorProblem> {
        self.next();
        let value = self.value()?;
        value
            .parse()
            .map_err(|_| SelectorProblem::NeedsInteger { op, value })
    }

    /// `in` or `notin` and its parenthesised values; an empty place is the empty value.
    fn set(&mut self) -> Result<Vec<String>, SelectorProblem> {
        self.next();
        self.expect(Token::Open, "'(' after in or notin")?;
        let mut values = Vec::new();
        loop {
            let value = match self.peek() {
                Token::Word(w) => {
                    self.next();
                    label_value(w)?
                }
                _ => String::new(),
            };
            values.push(value);
            match self.peek() {
                Token::Comma => self.next(),
                Token::Close => {
                    self.next();
                    return Ok(values);
                }
                _ => return Err(self.unexpected("a value, ',' or ')'")),
            };
        }
    }
}

/// Validates a label key: an optional DNS-subdomain prefix and `/`, and a name of at most 63 characters.
pub fn label_key(key: &str) -> Result<String, LabelError> {
    let (prefix, name) = match key.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    if prefix.is_some_and(|p| !is_dns_subdomain(p)) {
        return Err(LabelError::BadPrefix { key: key.into() });
    }
    if name.is_empty() || name.len() > 63 || !is_label_name(name) {
        return Err(LabelError::BadName { key: key.into() });
    }
    Ok(key.to_string())
}

/// A DNS-1123 subdomain as label key prefixes are checked: at most 253 characters, dot-separated parts of
/// lowercase letters, digits and `-`, each starting and ending with a letter or digit (no length limit per part).
fn is_dns_subdomain(s: &str) -> bool {
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|part| {
            part.starts_with(alnum)
                && part.ends_with(alnum)
                && part.chars().all(|c| alnum(c) || c == '-')
        })
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
            "a foo (b)",
            "a,",
            ",a",
            "k in (a b)",
            "k==(a)",
            "!k=v",
            "k>",
            "k>a",
            "k>-1",
            "k>=1",
            "k=v\0",
            "k=v\u{a0}",
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

    #[test]
    fn empty_places_in_a_set_are_the_empty_value() {
        let empty = labels(&[("k", "")]);
        let a = labels(&[("k", "a")]);
        let absent = labels(&[]);
        for (selector, matching) in [
            ("k in ()", [true, false, false]),
            ("k in ( )", [true, false, false]),
            ("k in (,)", [true, false, false]),
            ("k in (a,)", [true, true, false]),
            ("k in (,a)", [true, true, false]),
            ("k in (a,,b)", [true, true, false]),
            ("k notin ()", [false, true, true]),
            ("k=", [true, false, false]),
            ("k!=", [false, true, true]),
        ] {
            let s = Selector::parse(selector).unwrap_or_else(|e| panic!("{selector}: {e}"));
            let got = [&empty, &a, &absent].map(|l| s.matches(l));
            assert_eq!(got, matching, "{selector}");
        }
        assert_eq!(
            Selector::parse("k in ()").unwrap().requirements(),
            [Requirement::In("k".into(), vec![String::new()])]
        );
    }

    #[test]
    fn greater_and_less_than_compare_integer_labels() {
        let s = Selector::parse("n>5,n<100").unwrap();
        assert_eq!(
            s.requirements(),
            [
                Requirement::GreaterThan("n".into(), 5),
                Requirement::LessThan("n".into(), 100)
            ]
        );
        for (value, expected) in [
            ("6", true),
            ("007", true),
            ("5", false),
            ("99", true),
            ("100", false),
            ("five", false),
            ("99999999999999999999", false),
        ] {
            assert_eq!(s.matches(&labels(&[("n", value)])), expected, "n={value}");
        }
        assert!(!s.matches(&labels(&[])), "absent");
        let e = Selector::parse("n>1.5").unwrap_err();
        assert!(
            matches!(e.reason, SelectorProblem::NeedsInteger { op: ">", .. }),
            "{e}"
        );
    }

    #[test]
    fn tokens_need_no_spaces_and_only_ascii_whitespace_separates() {
        for ok in [
            "k in(a),j notin(b)",
            "! k",
            "\tk\r\n==\tv ",
            "in in (notin),notin=in,!in",
            "k!=v,k==v",
        ] {
            Selector::parse(ok).unwrap_or_else(|e| panic!("{ok:?}: {e}"));
        }
        for bad in [
            "k=v\u{b}",
            "\u{c}k",
            "k\u{2003}in (a)",
            "k===v",
            "k=!v",
            "!!k",
        ] {
            assert!(Selector::parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(Selector::parse(" \tk=v\n").unwrap().to_string(), "k=v");
    }

    #[test]
    fn errors_point_at_the_token() {
        let e = Selector::parse("env=prod,").unwrap_err();
        assert_eq!(
            e.reason.to_string(),
            "expected a label key or '!' at byte 9, found the end"
        );
        let e = Selector::parse("env in (a").unwrap_err();
        assert_eq!(
            e.reason.to_string(),
            "expected a value, ',' or ')' at byte 9, found the end"
        );
        let e = Selector::parse("env foo (a)").unwrap_err();
        assert!(e.reason.to_string().contains("found \"foo\""), "{e}");
        assert_eq!(
            Selector::parse("a\0").unwrap_err().reason,
            SelectorProblem::Nul
        );
    }

    #[test]
    fn key_prefixes_are_dns_subdomains() {
        let long_part = "a".repeat(64);
        for ok in ["a.b/c", "x-k8s.io/k", "0.1/k", &format!("{long_part}.io/k")] {
            label_key(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
        }
        for bad in [
            "-a.io/k", "a-.io/k", "a..io/k", ".a/k", "A.io/k", "a_b/k", "/k", "a/b/c",
        ] {
            assert!(label_key(bad).is_err(), "{bad}");
        }
        assert!(label_key(&format!("{}/k", "a".repeat(254))).is_err());
    }
}
