//! AutoMTLS as go-plugin does it: the host passes its (self-signed, ECDSA P-521) client certificate in
//! `PLUGIN_CLIENT_CERT`; the plugin generates a fresh self-signed server certificate, advertises it in the handshake
//! line, and accepts only connections presenting exactly the host's certificate.
//!
//! TLS is done here with tokio-rustls on the aws-lc-rs provider (which verifies P-521 signatures); the accepted
//! streams are handed to tonic.

use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName, ServerConfig, SignatureScheme};
use std::sync::Arc;

/// TLS setup errors.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// `PLUGIN_CLIENT_CERT` holds no PEM certificate.
    #[error("PLUGIN_CLIENT_CERT does not contain a PEM certificate")]
    ClientCertPem,
    /// Generating the server certificate failed.
    #[error("generating the server certificate failed: {0}")]
    Generate(#[from] rcgen::Error),
    /// Building the rustls configuration failed.
    #[error("TLS configuration failed: {0}")]
    Config(#[from] rustls::Error),
}

/// The crypto provider used for all plugin TLS (aws-lc-rs: supports ECDSA P-521).
pub fn crypto_provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

/// Parses the first certificate of a PEM document.
pub fn parse_pem_cert(pem: &[u8]) -> Result<CertificateDer<'static>, TlsError> {
    CertificateDer::pem_slice_iter(pem)
        .next()
        .and_then(Result::ok)
        .ok_or(TlsError::ClientCertPem)
}

/// A freshly generated self-signed server certificate and its key. `Debug` never shows the key.
pub struct ServerIdentity {
    /// Certificate (DER); advertised in the handshake line.
    pub cert: CertificateDer<'static>,
    /// PKCS#8 private key.
    pub key: PrivateKeyDer<'static>,
}

impl std::fmt::Debug for ServerIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerIdentity")
            .field("cert", &format_args!("<{} bytes DER>", self.cert.len()))
            .field("key", &format_args!("<redacted>"))
            .finish()
    }
}

/// Generates a self-signed certificate for `localhost` usable as its own CA (the host pins it as a root).
pub fn generate_server_identity() -> Result<ServerIdentity, TlsError> {
    use rcgen::{
        BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
        KeyUsagePurpose,
    };
    let key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)?;
    let mut params = CertificateParams::new(vec!["localhost".to_owned()])?;
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
        ExtendedKeyUsagePurpose::ServerAuth,
        ExtendedKeyUsagePurpose::ClientAuth,
    ];
    let cert = params.self_signed(&key)?;
    Ok(ServerIdentity {
        cert: cert.der().clone(),
        key: PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
    })
}

/// Accepts exactly one client certificate (compared byte for byte), then checks the handshake signatures made with
/// its key.
#[derive(Debug)]
pub struct PinnedClientCert {
    expected: CertificateDer<'static>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl PinnedClientCert {
    /// A verifier accepting only `expected`.
    pub fn new(expected: CertificateDer<'static>, provider: &CryptoProvider) -> Self {
        Self {
            expected,
            algorithms: provider.signature_verification_algorithms,
        }
    }
}

impl ClientCertVerifier for PinnedClientCert {
    fn offer_client_auth(&self) -> bool {
        true
    }

    fn client_auth_mandatory(&self) -> bool {
        true
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        if end_entity.as_ref() == self.expected.as_ref() {
            Ok(ClientCertVerified::assertion())
        } else {
            Err(rustls::Error::InvalidCertificate(
                rustls::CertificateError::ApplicationVerificationFailure,
            ))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// The server TLS configuration: our identity, the pinned client certificate, ALPN `h2`.
pub fn server_config(
    identity: &ServerIdentity,
    client_cert: CertificateDer<'static>,
) -> Result<ServerConfig, TlsError> {
    let provider = crypto_provider();
    let verifier = Arc::new(PinnedClientCert::new(client_cert, &provider));
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_client_cert_verifier(verifier)
        .with_single_cert(vec![identity.cert.clone()], identity.key.clone_key())?;
    config.alpn_protocols = vec![b"h2".to_vec()];
    Ok(config)
}
