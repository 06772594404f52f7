//! Go-style durations (`90s`, `1h30m`, `500ms`), as Kubernetes and Terraform users write them.

use std::time::Duration;

/// Parses a Go duration string. Negative durations are rejected; `0` is allowed.
pub fn parse_duration(input: &str) -> Result<Duration, String> {
    let s = input.trim();
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    if s.is_empty() {
        return Err("empty duration (use e.g. \"30m\", \"1h30m\", \"90s\")".into());
    }
    let mut total = 0f64;
    let mut rest = s;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num_len == 0 {
            return Err(format!(
                "invalid duration {input:?}: expected a number at {rest:?}"
            ));
        }
        let number: f64 = rest[..num_len].parse().map_err(|_| {
            format!(
                "invalid duration {input:?}: bad number {:?}",
                &rest[..num_len]
            )
        })?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let seconds = match &rest[..unit_len] {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            "" => {
                return Err(format!(
                    "invalid duration {input:?}: missing unit (ns, us, ms, s, m, h)"
                ));
            }
            u => {
                return Err(format!(
                    "invalid duration {input:?}: unknown unit {u:?} (ns, us, ms, s, m, h)"
                ));
            }
        };
        total += number * seconds;
        rest = &rest[unit_len..];
    }
    Ok(Duration::from_secs_f64(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_go_durations() {
        assert_eq!(parse_duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("1.5h").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("0").unwrap(), Duration::ZERO);
    }

    #[test]
    fn rejects_bad_durations() {
        for bad in ["", "10", "5d", "-1h", "h", "1h x"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
