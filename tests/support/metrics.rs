//! The main API server's request counters, read from its `/metrics` endpoint (`apiserver_request_total`), so
//! a test can count how many writes the provider sent for one resource. The counters are global to the API
//! server: a test that reads them must keep the other tests of its binary from writing the same resource in
//! between (test binaries run one after another; the tests of one binary run concurrently).

use super::TestEnv;

/// The sum of `apiserver_request_total` over the series of `group`/`resource` (main resource, no
/// subresource) whose `verb` is one of `verbs` (`APPLY`, `PATCH`, `PUT`, `POST`, `DELETE`, ...).
pub fn request_total(group: &str, resource: &str, verbs: &[&str]) -> u64 {
    let text = TestEnv::get().kubectl(&["get", "--raw", "/metrics"]);
    sum_requests(&text, group, resource, verbs)
}

/// [`request_total`] over the metrics text `text`.
pub fn sum_requests(text: &str, group: &str, resource: &str, verbs: &[&str]) -> u64 {
    text.lines()
        .filter_map(|l| l.strip_prefix("apiserver_request_total{"))
        .filter_map(|l| {
            let (labels, value) = l.rsplit_once('}')?;
            let labels = parse_labels(labels);
            let get = |k: &str| {
                labels
                    .iter()
                    .find(|(n, _)| n == k)
                    .map(|(_, v)| v.as_str())
                    .unwrap_or_default()
            };
            let wanted = get("group") == group
                && get("resource") == resource
                && get("subresource").is_empty()
                && verbs.contains(&get("verb"));
            // Counters are printed as integers or in float notation.
            wanted.then(|| value.trim().parse::<f64>().map(|v| v as u64).unwrap_or(0))
        })
        .sum()
}

/// `k1="v1",k2="v2"` as pairs (label values here never contain quotes).
fn parse_labels(s: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some((key, after)) = rest.split_once("=\"") {
        let Some((value, tail)) = after.split_once('"') else {
            break;
        };
        out.push((key.trim_start_matches(',').to_string(), value.to_string()));
        rest = tail;
    }
    out
}
