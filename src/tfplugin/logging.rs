//! Logging for plugins: `tracing` events as hclog-style JSON lines on stderr.
//!
//! go-plugin hosts read a plugin's stderr; JSON lines with `@level`, `@message`, `@timestamp` are re-logged by the
//! host at that level (other keys become fields), so `TF_LOG=DEBUG terraform plan` shows them. Lines look like
//!
//! ```text
//! {"@level":"debug","@message":"planned","@module":"provider","@timestamp":"2025-01-02T03:04:05.123456Z","tf_rpc":"PlanResourceChange"}
//! ```
//!
//! Fields of enclosing spans are included. `@module` is the name given to [`init`]; events from this plugin layer
//! use `<name>.plugin`. The level comes from `TF_LOG_PROVIDER`, else `TF_LOG` (`TRACE`, `DEBUG`, `INFO`, `WARN`,
//! `ERROR`, `OFF`; `JSON` means `TRACE`), else `WARN`. Never log secret values: this layer logs no attribute values.

use serde_json::{Map, Value as Json};
use std::fmt::{self, Write as _};
use std::io::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};
use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::Context;
use tracing_subscriber::prelude::*;
use tracing_subscriber::registry::LookupSpan;

/// Module path prefix of this layer (events under it get the `.plugin` module suffix).
const LAYER_PREFIX: &str = {
    // "crate::tfplugin::logging" -> compare against "crate::tfplugin"
    module_path!()
};

/// Installs the global subscriber (once; later calls do nothing). `module` becomes `@module`.
pub fn init(module: &'static str) {
    init_with(module, &[]);
}

/// A cap on the events of one target (a module path prefix, e.g. `some_crate::client`), whatever the configured
/// level: for libraries that put data into their log messages which must never reach Terraform's logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogCap {
    /// The target prefix (the longest matching prefix of an event's target wins, see [`Targets`]).
    pub target: &'static str,
    /// The most verbose level still logged for it; [`LevelFilter::OFF`] drops every event.
    pub max_level: LevelFilter,
}

impl LogCap {
    /// Drops every event of `target`, at every level.
    pub const fn off(target: &'static str) -> Self {
        Self {
            target,
            max_level: LevelFilter::OFF,
        }
    }
}

/// [`init`], with `caps` applied on top of the level from the environment (no environment variable lifts them).
pub fn init_with(module: &'static str, caps: &[LogCap]) {
    let level = level_from_env(|k| std::env::var(k).ok());
    // Fails only when a global subscriber is already installed, which is then kept.
    let _ = tracing_subscriber::registry()
        .with(HclogLayer::new(module).with_filter(filter_with(level, caps)))
        .try_init();
}

/// Libraries whose debug output (HTTP/2 frames, TLS handshakes) would drown the provider's own logs.
const NOISY_TARGETS: &[&str] = &[
    "h2",
    "hyper",
    "hyper_util",
    "rustls",
    "tokio_rustls",
    "tonic",
    "tower",
    "mio",
];

/// `level` for everything, capped at `WARN` for transport libraries (`DEBUG` when `level` is `TRACE`).
pub fn filter(level: LevelFilter) -> Targets {
    filter_with(level, &[])
}

/// [`filter`] plus `caps` (each target at most at its cap, and never above `level`).
pub fn filter_with(level: LevelFilter, caps: &[LogCap]) -> Targets {
    let noisy = if level == LevelFilter::TRACE {
        LevelFilter::DEBUG
    } else {
        level.min(LevelFilter::WARN)
    };
    let targets = NOISY_TARGETS
        .iter()
        .fold(Targets::new().with_default(level), |t, name| {
            t.with_target(*name, noisy)
        });
    caps.iter().fold(targets, |t, cap| {
        t.with_target(cap.target, cap.max_level.min(level))
    })
}

/// The level filter for `TF_LOG_PROVIDER` / `TF_LOG`, read through `get`.
pub fn level_from_env(get: impl Fn(&str) -> Option<String>) -> LevelFilter {
    for key in ["TF_LOG_PROVIDER", "TF_LOG"] {
        if let Some(v) = get(key).filter(|v| !v.trim().is_empty())
            && let Some(level) = parse_level(&v)
        {
            return level;
        }
    }
    LevelFilter::WARN
}

fn parse_level(s: &str) -> Option<LevelFilter> {
    Some(match s.trim().to_ascii_uppercase().as_str() {
        "TRACE" | "JSON" => LevelFilter::TRACE,
        "DEBUG" => LevelFilter::DEBUG,
        "INFO" => LevelFilter::INFO,
        "WARN" => LevelFilter::WARN,
        "ERROR" => LevelFilter::ERROR,
        "OFF" => LevelFilter::OFF,
        _ => return None,
    })
}

/// Where finished log lines go.
type Sink = Box<dyn Fn(&[u8]) + Send + Sync>;

/// A `tracing` layer writing hclog-style JSON lines to a writer (stderr by default).
pub struct HclogLayer {
    module: &'static str,
    plugin_module: String,
    layer_prefix: &'static str,
    sink: Sink,
}

impl HclogLayer {
    /// A layer writing to stderr with `@module` = `module`.
    pub fn new(module: &'static str) -> Self {
        Self::with_sink(module, |line| {
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(line);
        })
    }

    /// A layer passing each line (with its newline) to `sink` (for tests).
    pub fn with_sink(module: &'static str, sink: impl Fn(&[u8]) + Send + Sync + 'static) -> Self {
        let layer_prefix = LAYER_PREFIX
            .rsplit_once("::")
            .map_or(LAYER_PREFIX, |(p, _)| p);
        Self {
            module,
            plugin_module: format!("{module}.plugin"),
            layer_prefix,
            sink: Box::new(sink),
        }
    }
}

/// Collected span fields, stored in span extensions.
struct SpanFields(Map<String, Json>);

struct JsonVisitor<'a>(&'a mut Map<String, Json>);

impl Visit for JsonVisitor<'_> {
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.insert(field.name().to_owned(), Json::from(value));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().to_owned(), Json::from(value));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_owned(), Json::from(value));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().to_owned(), Json::from(value));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), Json::from(value));
    }
    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.0
            .insert(field.name().to_owned(), Json::from(value.to_string()));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0
            .insert(field.name().to_owned(), Json::from(format!("{value:?}")));
    }
}

impl<S> Layer<S> for HclogLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        id: &tracing::span::Id,
        ctx: Context<'_, S>,
    ) {
        let mut fields = Map::new();
        attrs.record(&mut JsonVisitor(&mut fields));
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(SpanFields(fields));
        }
    }

    fn on_record(
        &self,
        id: &tracing::span::Id,
        values: &tracing::span::Record<'_>,
        ctx: Context<'_, S>,
    ) {
        if let Some(span) = ctx.span(id) {
            let mut ext = span.extensions_mut();
            if let Some(SpanFields(fields)) = ext.get_mut::<SpanFields>() {
                values.record(&mut JsonVisitor(fields));
            }
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let mut obj = Map::new();
        let meta = event.metadata();
        obj.insert("@level".into(), Json::from(level_name(*meta.level())));
        let mut fields = Map::new();
        if let Some(scope) = ctx.event_scope(event) {
            for span in scope.from_root() {
                if let Some(SpanFields(f)) = span.extensions().get::<SpanFields>() {
                    fields.extend(f.iter().map(|(k, v)| (k.clone(), v.clone())));
                }
            }
        }
        event.record(&mut JsonVisitor(&mut fields));
        let message = match fields.remove("message") {
            Some(Json::String(s)) => s,
            Some(other) => other.to_string(),
            None => String::new(),
        };
        obj.insert("@message".into(), Json::from(message));
        let module = if meta.target().starts_with(self.layer_prefix) {
            self.plugin_module.as_str()
        } else {
            self.module
        };
        obj.insert("@module".into(), Json::from(module));
        obj.insert(
            "@timestamp".into(),
            Json::from(timestamp(SystemTime::now())),
        );
        for (k, v) in fields {
            if k.starts_with("log.") {
                continue; // location fields added by the `log` bridge
            }
            // hclog reserves '@' keys; keep user fields apart.
            let key = if k.starts_with('@') {
                format!("_{k}")
            } else {
                k
            };
            obj.insert(key, v);
        }
        let mut line = Json::Object(obj).to_string();
        line.push('\n');
        (self.sink)(line.as_bytes());
    }
}

fn level_name(level: Level) -> &'static str {
    match level {
        Level::TRACE => "trace",
        Level::DEBUG => "debug",
        Level::INFO => "info",
        Level::WARN => "warn",
        Level::ERROR => "error",
    }
}

/// RFC 3339 UTC timestamp with microseconds, e.g. `2025-01-02T03:04:05.123456Z`.
pub fn timestamp(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, day) = civil_from_days(days);
    let mut s = String::with_capacity(27);
    let _ = write!(
        s,
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}.{:06}Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60,
        d.subsec_micros()
    );
    s
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    #[test]
    fn timestamps() {
        assert_eq!(timestamp(UNIX_EPOCH), "1970-01-01T00:00:00.000000Z");
        let t = UNIX_EPOCH + Duration::from_micros(1_709_251_199_123_456); // 2024-02-29T23:59:59.123456Z
        assert_eq!(timestamp(t), "2024-02-29T23:59:59.123456Z");
    }

    #[test]
    fn levels_from_env() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        assert_eq!(level_from_env(env(&[])), LevelFilter::WARN);
        assert_eq!(
            level_from_env(env(&[("TF_LOG", "debug")])),
            LevelFilter::DEBUG
        );
        assert_eq!(
            level_from_env(env(&[("TF_LOG", "DEBUG"), ("TF_LOG_PROVIDER", "trace")])),
            LevelFilter::TRACE
        );
        assert_eq!(
            level_from_env(env(&[("TF_LOG", "JSON")])),
            LevelFilter::TRACE
        );
        assert_eq!(
            level_from_env(env(&[("TF_LOG_PROVIDER", "off")])),
            LevelFilter::OFF
        );
    }

    #[test]
    fn json_lines() {
        let lines = Arc::new(Mutex::new(Vec::<String>::new()));
        let sink = lines.clone();
        let layer = HclogLayer::with_sink("prov", move |l| {
            if let Ok(mut v) = sink.lock() {
                v.push(String::from_utf8_lossy(l).into_owned());
            }
        });
        let subscriber = tracing_subscriber::registry().with(layer.with_filter(LevelFilter::DEBUG));
        tracing::subscriber::with_default(subscriber, || {
            let span = tracing::info_span!("rpc", tf_rpc = "ReadResource");
            let _g = span.enter();
            tracing::debug!(count = 3, "hello");
            tracing::trace!("filtered out");
            tracing::warn!(target: "other_crate", "from elsewhere");
        });
        let lines = lines.lock().map(|v| v.clone()).unwrap_or_default();
        assert_eq!(lines.len(), 2, "{lines:?}");
        let first: Json = serde_json::from_str(&lines[0]).expect("json");
        assert_eq!(first["@level"], "debug");
        assert_eq!(first["@message"], "hello");
        assert_eq!(first["@module"], "prov.plugin");
        assert_eq!(first["tf_rpc"], "ReadResource");
        assert_eq!(first["count"], 3);
        assert_eq!(first["@timestamp"].as_str().map(str::len), Some(27));
        let second: Json = serde_json::from_str(&lines[1]).expect("json");
        assert_eq!(second["@level"], "warn");
        assert_eq!(second["@module"], "prov");
    }

    #[test]
    fn capped_targets_never_log() {
        let lines = Arc::new(Mutex::new(Vec::<String>::new()));
        let sink = lines.clone();
        let layer = HclogLayer::with_sink("prov", move |l| {
            if let Ok(mut v) = sink.lock() {
                v.push(String::from_utf8_lossy(l).into_owned());
            }
        });
        let caps = [
            LogCap::off("chatty_lib::client"),
            LogCap {
                target: "half_lib",
                max_level: LevelFilter::WARN,
            },
        ];
        let subscriber = tracing_subscriber::registry()
            .with(layer.with_filter(filter_with(LevelFilter::TRACE, &caps)));
        tracing::subscriber::with_default(subscriber, || {
            tracing::error!(target: "chatty_lib::client", "canary body");
            tracing::warn!(target: "chatty_lib::client", "canary body");
            tracing::info!(target: "chatty_lib::client", "canary body");
            tracing::debug!(target: "chatty_lib::client::auth", "canary body");
            tracing::trace!(target: "chatty_lib::client", "canary body");
            tracing::info!(target: "half_lib::x", "canary info");
            tracing::warn!(target: "half_lib::x", "half warn");
            tracing::warn!(target: "chatty_lib::config", "config warn");
            tracing::trace!(target: "anything_else", "trace kept");
        });
        let lines = lines.lock().map(|v| v.clone()).unwrap_or_default();
        assert!(lines.iter().all(|l| !l.contains("canary")), "{lines:?}");
        assert_eq!(lines.len(), 3, "{lines:?}");
        // A cap never raises the level: at WARN, `half_lib` at WARN is still only WARN and up.
        let t = filter_with(LevelFilter::ERROR, &caps);
        assert!(!t.would_enable("half_lib", &Level::WARN));
    }
}
