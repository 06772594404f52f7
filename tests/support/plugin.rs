//! The plugin-layer tests' helpers: a Terraform-like client certificate, a mutual-TLS tonic channel that pins the
//! server certificate from the handshake line, and a toy provider (nothing project-specific).

use async_trait::async_trait;
use base64::Engine as _;
use hyper_util::rt::TokioIo;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tfsveltos::tfplugin::ListenAddr;
use tfsveltos::tfplugin::value::msgpack;
use tfsveltos::tfplugin::{
    ApplyRequest, ApplyResponse, Attribute, AttributePath, Block, ConfigureRequest,
    DataReadRequest, DataReadResponse, DataSource, DeferredReason, Diagnostic, Diagnostics,
    ImportRequest, ImportResponse, ImportedResource, NestedBlock, Nesting, PlanRequest,
    PlanResponse, Provider, ReadRequest, ReadResponse, Resource, Schema, Type, Value,
};
use tfsveltos::tfplugin::{
    CloseEphemeralRequest, EphemeralResource, OpenEphemeralRequest, OpenEphemeralResponse,
    RenewEphemeralRequest, RenewEphemeralResponse,
};
use tokio::io::{AsyncRead, AsyncWrite};
use tonic::transport::{Channel, Endpoint};

pub use tfsveltos::tfplugin::pb;

/// A client certificate like the one Terraform generates: ECDSA P-521, self-signed, CA:true.
pub struct ClientCert {
    /// The certificate, PEM (as `PLUGIN_CLIENT_CERT` carries it).
    pub pem: String,
    /// The certificate, DER.
    pub der: CertificateDer<'static>,
    /// Its private key.
    pub key: PrivateKeyDer<'static>,
}

/// A fresh [`ClientCert`].
pub fn terraform_like_client_cert() -> ClientCert {
    use rcgen::{
        BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
        KeyUsagePurpose,
    };
    let key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P521_SHA512).expect("P-521 key");
    let mut params = CertificateParams::new(vec!["localhost".to_owned()]).expect("params");
    params
        .distinguished_name
        .push(DnType::CommonName, "localhost");
    params
        .distinguished_name
        .push(DnType::OrganizationName, "HashiCorp");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
        KeyUsagePurpose::KeyCertSign,
    ];
    params.extended_key_usages = vec![
        ExtendedKeyUsagePurpose::ClientAuth,
        ExtendedKeyUsagePurpose::ServerAuth,
    ];
    let cert = params.self_signed(&key).expect("self-signed");
    ClientCert {
        pem: cert.pem(),
        der: cert.der().clone(),
        key: PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
    }
}

/// Where a plugin listens, as its handshake line or reattach entry says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Addr {
    /// A TCP address (`tcp|127.0.0.1:port`).
    Tcp(SocketAddr),
    /// A Unix socket (`unix|/path`).
    Unix(PathBuf),
}

impl Addr {
    /// From go-plugin's (network, address) pair.
    pub fn parse(network: &str, addr: &str) -> Addr {
        match network {
            "tcp" => {
                let a: SocketAddr = addr.parse().expect("address");
                assert!(a.ip().is_loopback(), "loopback only: {a}");
                Addr::Tcp(a)
            }
            "unix" => Addr::Unix(PathBuf::from(addr)),
            other => panic!("unknown network {other:?}"),
        }
    }

    /// The same address as the server reports it.
    pub fn of(addr: &ListenAddr) -> Addr {
        match addr {
            ListenAddr::Tcp(a) => Addr::Tcp(*a),
            ListenAddr::Unix(p) => Addr::Unix(p.clone()),
        }
    }

    /// The socket path (panics for TCP).
    pub fn unix_path(&self) -> &Path {
        match self {
            Addr::Unix(p) => p,
            Addr::Tcp(a) => panic!("expected a Unix socket, got {a}"),
        }
    }

    /// A raw connection.
    pub async fn connect(&self) -> std::io::Result<Box<dyn IoStream>> {
        Ok(match self {
            Addr::Tcp(a) => Box::new(tokio::net::TcpStream::connect(a).await?),
            Addr::Unix(p) => Box::new(tokio::net::UnixStream::connect(p).await?),
        })
    }
}

/// A byte stream (TCP, Unix socket, TLS over either).
pub trait IoStream: AsyncRead + AsyncWrite + Send + Unpin + 'static {}

impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> IoStream for T {}

/// A parsed go-plugin handshake line.
#[derive(Debug)]
pub struct Handshake {
    /// Where the plugin listens.
    pub addr: Addr,
    /// The server certificate, when the line carries one (AutoMTLS).
    pub cert: Option<CertificateDer<'static>>,
}

/// Parses a go-plugin handshake line (`core|app|network|addr|protocol|cert`), panicking on a malformed one.
pub fn parse_handshake(line: &str) -> Handshake {
    let parts: Vec<&str> = line.trim_end_matches('\n').split('|').collect();
    assert_eq!(parts.len(), 6, "handshake line {line:?}");
    assert_eq!(parts[0], "1", "core protocol");
    assert_eq!(parts[1], "6", "app protocol");
    assert_eq!(parts[4], "grpc");
    let addr = Addr::parse(parts[2], parts[3]);
    let cert = (!parts[5].is_empty()).then(|| {
        assert!(!parts[5].ends_with('='), "raw (unpadded) base64");
        CertificateDer::from(
            base64::engine::general_purpose::STANDARD_NO_PAD
                .decode(parts[5])
                .expect("base64 std, no padding"),
        )
    });
    Handshake { addr, cert }
}

/// Accepts exactly the certificate advertised in the handshake (as go-plugin's client does by pinning it as root).
#[derive(Debug)]
struct PinnedServer {
    cert: CertificateDer<'static>,
    algs: rustls::crypto::WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for PinnedServer {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if end_entity.as_ref() == self.cert.as_ref() {
            Ok(ServerCertVerified::assertion())
        } else {
            Err(rustls::Error::InvalidCertificate(
                rustls::CertificateError::UnknownIssuer,
            ))
        }
    }
    fn verify_tls12_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(m, c, d, &self.algs)
    }
    fn verify_tls13_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(m, c, d, &self.algs)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algs.supported_schemes()
    }
}

/// A gRPC channel over mutual TLS: presents `client`, accepts only `server_cert`, ALPN h2.
pub async fn mtls_channel(
    addr: &Addr,
    server_cert: CertificateDer<'static>,
    client: &ClientCert,
) -> Result<Channel, tonic::transport::Error> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let verifier = Arc::new(PinnedServer {
        cert: server_cert,
        algs: provider.signature_verification_algorithms,
    });
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_client_auth_cert(vec![client.der.clone()], client.key.clone_key())
        .expect("client auth");
    config.alpn_protocols = vec![b"h2".to_vec()];
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let addr = addr.clone();
    Endpoint::from_static("http://localhost")
        .connect_with_connector(tower::service_fn(move |_uri| {
            let connector = connector.clone();
            let addr = addr.clone();
            async move {
                let stream = addr.connect().await?;
                let name = ServerName::try_from("localhost").map_err(std::io::Error::other)?;
                let tls = connector.connect(name, stream).await?;
                Ok::<_, std::io::Error>(TokioIo::new(tls))
            }
        }))
        .await
}

/// Asserts that the plugin behind `channel` reports its `plugin` service as serving (grpc.health.v1).
pub async fn assert_serving(channel: &Channel) {
    let mut health = tonic_health::pb::health_client::HealthClient::new(channel.clone());
    let st = health
        .check(tonic_health::pb::HealthCheckRequest {
            service: "plugin".into(),
        })
        .await
        .expect("health")
        .into_inner();
    assert_eq!(
        st.status,
        tonic_health::pb::health_check_response::ServingStatus::Serving as i32
    );
}

/// A plain (no TLS) channel, for debug mode.
pub async fn plain_channel(addr: &Addr) -> Result<Channel, tonic::transport::Error> {
    let addr = addr.clone();
    Endpoint::from_static("http://localhost")
        .connect_with_connector(tower::service_fn(move |_uri| {
            let addr = addr.clone();
            async move { Ok::<_, std::io::Error>(TokioIo::new(addr.connect().await?)) }
        }))
        .await
}

// ------------------------------------------------------------------------------------------------------------------
// Toy provider
// ------------------------------------------------------------------------------------------------------------------

/// Records what the provider saw, for assertions.
#[derive(Default)]
pub struct Seen {
    /// The last `ConfigureProvider` request.
    pub configured: Mutex<Option<ConfigureRequest>>,
    /// How many plans.
    pub plans: AtomicUsize,
    /// How many `StopProvider` calls.
    pub stops: AtomicUsize,
    /// `open <name>`, `renew <private>`, `close <private>` for the toy ephemeral resource, in call order.
    pub ephemeral: Mutex<Vec<String>>,
}

impl Seen {
    /// The ephemeral calls so far.
    pub fn ephemeral_calls(&self) -> Vec<String> {
        self.ephemeral.lock().map(|v| v.clone()).unwrap_or_default()
    }

    fn record(&self, call: String) {
        if let Ok(mut v) = self.ephemeral.lock() {
            v.push(call);
        }
    }
}

struct ToyProvider {
    seen: Arc<Seen>,
}

/// The toy provider (resource `toy_thing`, data source `toy_echo`, ephemeral resource `toy_token`) and what it sees.
pub fn toy_provider() -> (Arc<dyn Provider>, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    (Arc::new(ToyProvider { seen: seen.clone() }), seen)
}

#[async_trait]
impl Provider for ToyProvider {
    fn schema(&self) -> Schema {
        Schema::new(0)
            .attribute(
                Attribute::string("endpoint")
                    .optional()
                    .description("Where things live."),
            )
            .attribute(Attribute::string("token").optional().sensitive())
    }

    fn resources(&self) -> Vec<Arc<dyn Resource>> {
        vec![Arc::new(Thing {
            seen: self.seen.clone(),
        })]
    }

    fn data_sources(&self) -> Vec<Arc<dyn DataSource>> {
        vec![Arc::new(Echo)]
    }

    fn ephemeral_resources(&self) -> Vec<Arc<dyn EphemeralResource>> {
        vec![Arc::new(Token {
            seen: self.seen.clone(),
        })]
    }

    async fn validate_config(&self, config: &Value) -> Diagnostics {
        let mut d = Diagnostics::new();
        if config.get_attr("endpoint").as_str() == Some("") {
            d.attribute_error(
                AttributePath::attr("endpoint"),
                "Empty endpoint",
                "endpoint must not be empty",
            );
        }
        d
    }

    async fn configure(&self, req: ConfigureRequest) -> Diagnostics {
        if let Ok(mut c) = self.seen.configured.lock() {
            *c = Some(req);
        }
        Diagnostics::new()
    }

    async fn stop(&self) -> Option<String> {
        self.seen.stops.fetch_add(1, Ordering::SeqCst);
        None
    }
}

struct Thing {
    seen: Arc<Seen>,
}

/// The schema of `toy_thing`.
pub fn thing_schema() -> Schema {
    Schema::new(2)
        .markdown_description("A **thing**.")
        .attribute(Attribute::string("id").computed())
        .attribute(Attribute::string("name").required())
        .attribute(Attribute::number("size").optional())
        .attribute(Attribute::map("tags", Type::String).optional())
        .attribute(Attribute::string("secret").optional().sensitive())
        .attribute(Attribute::dynamic("extra").optional())
        .attribute(Attribute::string("old").optional().deprecated("use name"))
        .attribute(
            Attribute::nested(
                "endpoints",
                Nesting::List,
                [
                    Attribute::string("url").required(),
                    Attribute::number("port").optional().computed(),
                ],
            )
            .optional(),
        )
        .block(
            NestedBlock::list(
                "rule",
                Block::new().attribute(Attribute::bool("enabled").optional()),
            )
            .max_items(2),
        )
}

#[async_trait]
impl Resource for Thing {
    fn type_name(&self) -> &'static str {
        "toy_thing"
    }

    fn schema(&self) -> Schema {
        thing_schema()
    }

    async fn validate(&self, config: &Value) -> Diagnostics {
        let mut d = Diagnostics::new();
        if let Some(size) = config.get_attr("size").as_i64()
            && size < 0
        {
            d.attribute_error(
                AttributePath::attr("size"),
                "Negative size",
                "size must be >= 0",
            );
        }
        d
    }

    async fn plan(&self, req: PlanRequest) -> PlanResponse {
        self.seen.plans.fetch_add(1, Ordering::SeqCst);
        if req.is_destroy() {
            return PlanResponse::planned(&req, req.proposed_new_state.clone());
        }
        let mut planned = thing_schema().mark_computed_unknown(&req.proposed_new_state);
        let mut resp = PlanResponse::default();
        if !req.prior_state.is_null() {
            planned.set_attr("id", req.prior_state.get_attr("id").clone());
            if req.prior_state.get_attr("name") != req.proposed_new_state.get_attr("name") {
                resp.requires_replace.push(AttributePath::attr("name"));
            }
        }
        if !req.config.get_attr("name").is_known() {
            resp.deferred = Some(DeferredReason::ResourceConfigUnknown);
        }
        resp.planned_state = planned;
        resp.planned_private = b"planned".to_vec();
        resp
    }

    fn apply_unread_attributes(&self, planned_private: &[u8]) -> &'static [&'static str] {
        if planned_private == b"keep" {
            &["extra"]
        } else {
            &[]
        }
    }

    async fn apply(&self, req: ApplyRequest) -> ApplyResponse {
        if req.is_delete() {
            return ApplyResponse::default();
        }
        if req.planned_private == b"keep" {
            // A failure that changes nothing: the prior state goes back whole, `extra` included, although it was
            // never decoded.
            assert!(req.prior_state.get_attr("extra").is_null(), "extra decoded");
            assert!(
                !req.prior_state.get_attr("name").is_null(),
                "name not decoded"
            );
            let mut diagnostics = Diagnostics::new();
            diagnostics.push(Diagnostic::error("Kept", "nothing changed"));
            return ApplyResponse {
                keep_prior_state: true,
                private: req.planned_private,
                diagnostics,
                ..Default::default()
            };
        }
        let mut state = req.planned_state.clone();
        let name = state
            .get_attr("name")
            .as_str()
            .unwrap_or_default()
            .to_owned();
        state.set_attr("id", Value::string(format!("id-{name}")));
        if let Some(Value::List(eps)) = state.get_attr_mut("endpoints") {
            for ep in eps {
                if !ep.get_attr("port").is_known() {
                    ep.set_attr("port", Value::int(443));
                }
            }
        }
        // Leave out the `rule` block entirely: the server must encode it as an empty list.
        if let Value::Object(m) = &mut state
            && m.get("rule")
                .and_then(Value::as_list)
                .is_some_and(<[Value]>::is_empty)
        {
            m.remove("rule");
        }
        ApplyResponse {
            new_state: state,
            private: req.planned_private,
            diagnostics: Diagnostics::new(),
            ..ApplyResponse::default()
        }
    }

    fn read_unread_attributes(&self, private: &[u8]) -> &'static [&'static str] {
        if private == b"keep" { &["extra"] } else { &[] }
    }

    async fn read(&self, req: ReadRequest) -> ReadResponse {
        if req.private == b"keep" {
            // A refresh that cannot tell what exists: the state goes back whole, `extra` included, although it was
            // never decoded.
            assert!(
                req.current_state.get_attr("extra").is_null(),
                "extra decoded"
            );
            assert!(
                !req.current_state.get_attr("name").is_null(),
                "name not decoded"
            );
            let mut diagnostics = Diagnostics::new();
            diagnostics.push(Diagnostic::warning("Kept", "cannot tell"));
            return ReadResponse {
                keep_current_state: true,
                private: req.private,
                diagnostics,
                ..Default::default()
            };
        }
        ReadResponse {
            new_state: req.current_state,
            private: req.private,
            ..Default::default()
        }
    }

    async fn import(&self, req: ImportRequest) -> ImportResponse {
        if req.id == "bad" {
            return ImportResponse {
                diagnostics: Diagnostic::error("Bad import ID", "no such thing").into(),
                ..Default::default()
            };
        }
        ImportResponse {
            imported: vec![ImportedResource {
                type_name: String::new(),
                state: Value::object([
                    ("id", Value::string(req.id.clone())),
                    ("name", Value::string(req.id)),
                ]),
                private: Vec::new(),
            }],
            ..Default::default()
        }
    }
}

struct Echo;

/// The schema of `toy_echo`.
pub fn echo_schema() -> Schema {
    Schema::new(0)
        .attribute(Attribute::string("input").required())
        .attribute(Attribute::string("output").computed())
}

#[async_trait]
impl DataSource for Echo {
    fn type_name(&self) -> &'static str {
        "toy_echo"
    }

    fn schema(&self) -> Schema {
        echo_schema()
    }

    async fn read(&self, req: DataReadRequest) -> DataReadResponse {
        let input = req.config.get_attr("input");
        if !input.is_known() {
            return DataReadResponse {
                state: echo_schema().mark_computed_unknown(&req.config),
                deferred: Some(DeferredReason::ResourceConfigUnknown),
                ..Default::default()
            };
        }
        let mut state = req.config.clone();
        state.set_attr(
            "output",
            Value::string(input.as_str().unwrap_or_default().to_uppercase()),
        );
        DataReadResponse {
            state,
            ..Default::default()
        }
    }
}

/// A toy ephemeral resource: `toy_token { name }` yields `token = "tok-<name>"` (sensitive), private bytes
/// `lease-<name>` and a renewal due in one hour; each renew appends `+r` to the private bytes.
struct Token {
    seen: Arc<Seen>,
}

/// How far ahead of now the toy token asks to be renewed.
pub const TOKEN_RENEW_IN: std::time::Duration = std::time::Duration::from_secs(3600);

/// The schema of `toy_token`.
pub fn token_schema() -> Schema {
    Schema::new(0)
        .attribute(Attribute::string("name").required())
        .attribute(Attribute::string("token").computed().sensitive())
}

#[async_trait]
impl EphemeralResource for Token {
    fn type_name(&self) -> &'static str {
        "toy_token"
    }

    fn schema(&self) -> Schema {
        token_schema()
    }

    async fn validate(&self, config: &Value) -> Diagnostics {
        let mut d = Diagnostics::new();
        if config.get_attr("name").as_str() == Some("") {
            d.attribute_error(
                AttributePath::attr("name"),
                "Empty name",
                "name must not be empty",
            );
        }
        d
    }

    async fn open(&self, req: OpenEphemeralRequest) -> OpenEphemeralResponse {
        let name = req.config.get_attr("name");
        let Some(name) = name.as_str() else {
            return OpenEphemeralResponse {
                result: token_schema().mark_computed_unknown(&req.config),
                deferred: Some(DeferredReason::ResourceConfigUnknown),
                ..Default::default()
            };
        };
        self.seen.record(format!("open {name}"));
        if name == "fail" {
            return OpenEphemeralResponse {
                diagnostics: Diagnostic::error("Cannot open", "asked to fail").into(),
                ..Default::default()
            };
        }
        let mut result = req.config.clone();
        result.set_attr("token", Value::string(format!("tok-{name}")));
        OpenEphemeralResponse {
            result,
            private: format!("lease-{name}").into_bytes(),
            renew_at: Some(std::time::SystemTime::now() + TOKEN_RENEW_IN),
            ..Default::default()
        }
    }

    async fn renew(&self, req: RenewEphemeralRequest) -> RenewEphemeralResponse {
        let private = String::from_utf8_lossy(&req.private).into_owned();
        self.seen.record(format!("renew {private}"));
        RenewEphemeralResponse {
            private: Some(format!("{private}+r").into_bytes()),
            renew_at: Some(std::time::SystemTime::now() + TOKEN_RENEW_IN),
            ..Default::default()
        }
    }

    async fn close(&self, req: CloseEphemeralRequest) -> Diagnostics {
        self.seen
            .record(format!("close {}", String::from_utf8_lossy(&req.private)));
        Diagnostics::new()
    }
}

/// Encodes `v` as a msgpack `DynamicValue` for `schema`.
pub fn dv(v: &Value, schema: &Schema) -> Option<pb::tfplugin6::DynamicValue> {
    Some(pb::tfplugin6::DynamicValue {
        msgpack: msgpack::encode(v, &schema.value_type()).expect("encode"),
        json: Vec::new(),
    })
}

/// Decodes a `DynamicValue` for `schema`.
pub fn undv(dv: &Option<pb::tfplugin6::DynamicValue>, schema: &Schema) -> Value {
    match dv {
        Some(dv) => msgpack::decode(&dv.msgpack, &schema.value_type()).expect("decode"),
        None => Value::Null,
    }
}

/// The error summaries of protocol diagnostics.
pub fn errors(diags: &[pb::tfplugin6::Diagnostic]) -> Vec<String> {
    diags
        .iter()
        .filter(|d| d.severity == 1)
        .map(|d| d.summary.clone())
        .collect()
}
