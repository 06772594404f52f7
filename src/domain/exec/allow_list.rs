//! `exec_allowed_servers` and `exec_providers[*].servers`: which `cluster.server` hosts a plugin may mint a
//! credential for.

use super::{ExecError, shown};

/// `credentials.exec_allowed_servers`: host patterns a profile's `cluster.server` must match before its exec
/// plugin runs (a token minted for a host goes to that host).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerAllowList {
    patterns: Vec<HostPattern>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct HostPattern {
    /// `*.host`: any host strictly under `host`.
    wildcard: bool,
    /// Lower-cased host or domain.
    host: String,
    /// Required port, if any.
    port: Option<u16>,
}

impl ServerAllowList {
    /// Parses patterns: `host`, `host:port`, `*.domain`, `*.domain:port`, `[v6]`, `[v6]:port`. Hosts are
    /// compared without regard to case; without a port in the pattern any port matches.
    pub fn parse<S: AsRef<str>>(patterns: &[S]) -> Result<Self, ExecError> {
        let patterns = patterns
            .iter()
            .map(|p| {
                let raw = p.as_ref();
                let bad = || ExecError::BadServerPattern {
                    pattern: raw.into(),
                };
                let (wildcard, rest) = match raw.strip_prefix("*.") {
                    Some(r) => (true, r),
                    None => (false, raw),
                };
                let (host, port) = split_host_port(rest).ok_or_else(bad)?;
                let ok_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | ':');
                if host.is_empty() || !host.chars().all(ok_char) || (wildcard && host.contains(':'))
                {
                    return Err(bad());
                }
                Ok(HostPattern {
                    wildcard,
                    host: host.trim_end_matches('.').to_ascii_lowercase(),
                    port,
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { patterns })
    }

    /// Whether no pattern is configured (every server is allowed).
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// Whether the host (and port, where the pattern has one) of `server`, an `https://` or `http://` URL,
    /// matches a pattern. An empty list allows every server; an unparsable URL matches nothing.
    pub fn allows(&self, server: &str) -> bool {
        if self.patterns.is_empty() {
            return true;
        }
        let Some((host, port)) = server_host_port(server) else {
            return false;
        };
        self.patterns.iter().any(|p| {
            let host_ok = if p.wildcard {
                host.len() > p.host.len() + 1
                    && host.ends_with(&p.host)
                    && host.as_bytes()[host.len() - p.host.len() - 1] == b'.'
            } else {
                host == p.host
            };
            host_ok && p.port.is_none_or(|want| port == Some(want))
        })
    }

    /// [`Self::allows`] as a result naming the host (for `credentials.exec_allowed_servers`).
    pub fn check(&self, server: &str) -> Result<(), ExecError> {
        self.check_for(server, "credentials.exec_allowed_servers")
    }

    /// [`Self::allows`] as a result naming the host and `attribute`, the setting that holds the patterns.
    pub fn check_for(&self, server: &str, attribute: &str) -> Result<(), ExecError> {
        if self.allows(server) {
            return Ok(());
        }
        let host =
            server_host_port(server).map_or_else(|| "<unparsable>".to_string(), |(h, _)| shown(&h));
        Err(ExecError::ServerNotAllowed {
            host,
            attribute: attribute.to_string(),
        })
    }
}

/// `host[:port]` or `[v6][:port]`; `None` when the port is not a number.
fn split_host_port(s: &str) -> Option<(&str, Option<u16>)> {
    if let Some(rest) = s.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        return match after {
            "" => Some((host, None)),
            p => Some((host, Some(p.strip_prefix(':')?.parse().ok()?))),
        };
    }
    match s.rsplit_once(':') {
        Some((h, p)) if !h.contains(':') => Some((h, Some(p.parse().ok()?))),
        _ => Some((s, None)),
    }
}

/// The lower-cased host and the port (explicit, or the scheme's default) of an `http(s)://` URL.
pub(crate) fn server_host_port(url: &str) -> Option<(String, Option<u16>)> {
    let (scheme, rest) = url.trim().split_once("://")?;
    let default = match scheme.to_ascii_lowercase().as_str() {
        "https" => 443,
        "http" => 80,
        _ => return None,
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (host, port) = split_host_port(hostport)?;
    if host.is_empty() {
        return None;
    }
    Some((
        host.trim_end_matches('.').to_ascii_lowercase(),
        Some(port.unwrap_or(default)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_servers_match_hosts_and_ports() {
        let list = ServerAllowList::parse(&[
            "api.example.com",
            "*.prod.example.net",
            "10.0.0.1:6443",
            "[fd00::1]",
        ])
        .unwrap();
        for ok in [
            "https://api.example.com",
            "https://API.Example.com:6443/path",
            "https://user:pw@api.example.com.:443",
            "https://a.prod.example.net",
            "https://a.b.prod.example.net:8443",
            "https://10.0.0.1:6443",
            "https://[fd00::1]:6443",
        ] {
            assert!(list.allows(ok), "{ok}");
            list.check(ok).unwrap();
        }
        for bad in [
            "https://api.example.com.evil.io",
            "https://evilapi.example.com",
            "https://prod.example.net",
            "https://aprod.example.net",
            "https://10.0.0.1",
            "https://10.0.0.1:443",
            "https://api.example.com@evil.io",
            "ftp://api.example.com",
            "api.example.com",
            "https://",
            "https://[fd00::2]",
        ] {
            assert!(!list.allows(bad), "{bad}");
            let e = list.check(bad).unwrap_err();
            assert!(matches!(e, ExecError::ServerNotAllowed { .. }), "{e:?}");
        }
        assert!(
            ServerAllowList::parse::<&str>(&[])
                .unwrap()
                .allows("https://anything")
        );
        for bad in ["", "*.", "a/b", "*.a:b:c", "host:notaport", "**.x", "a b"] {
            assert!(ServerAllowList::parse(&[bad]).is_err(), "{bad}");
        }
        let e = list.check("https://evil.io:1/x").unwrap_err().to_string();
        assert!(
            e.contains("evil.io") && e.contains("exec_allowed_servers"),
            "{e}"
        );
    }
}
