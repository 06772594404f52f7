//! Text from the inventory, made fit for a diagnostic, a log line or state: escaped (no control characters,
//! no terminal escape sequences, no line breaks) and bounded.

/// `s` with every control, non-ASCII and quote character escaped (as Rust's `escape_debug` writes them), cut to
/// `max` characters of the original text (then ending in `…`).
pub fn shown(s: &str, max: usize) -> String {
    let mut out: String = s
        .chars()
        .take(max)
        .flat_map(|c| {
            let printable = c.is_ascii_graphic() || c == ' ';
            let escaped: Vec<char> = if printable && c != '\\' {
                vec![c]
            } else {
                c.escape_default().collect()
            };
            escaped
        })
        .collect();
    if s.chars().nth(max).is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_bounds() {
        assert_eq!(shown("team-a/c1", 64), "team-a/c1");
        assert_eq!(shown("a\u{1b}[31mred\n", 64), "a\\u{1b}[31mred\\n");
        assert_eq!(shown("\u{2028}é", 64), "\\u{2028}\\u{e9}");
        assert_eq!(
            shown(&"x".repeat(1_000_000), 10),
            format!("{}…", "x".repeat(10))
        );
    }
}
